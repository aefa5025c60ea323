package capfile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/ibscope/ibscope/decode"
)

// EncoderConfig says what capture file an Encoder writes.
type EncoderConfig struct {
	// LinkType is the link type the file declares: LinkTypeEthernet (RoCE
	// frames), LinkTypeInfiniBand (native IB packets, LRH first) or
	// LinkTypeERF (each packet in an ERF record).
	LinkType int
	// ERFEthernet says the packets of a LinkTypeERF file are Ethernet
	// frames (ERF type 2) rather than native IB (type 21, or 25 for a link
	// packet).
	ERFEthernet bool
	// PcapNG writes pcapng (one section, one interface, ns timestamps)
	// instead of nanosecond pcap.
	PcapNG bool
	// SnapLenBytes is the most of a packet a record keeps; the file header
	// declares it, plus ERFRecordMaxOverheadBytes in an ERF file.
	SnapLenBytes int
	// RawERF writes a raw ERF file (what Endace's tools and tshark -F erf
	// write): the ERF records back to back, no file header. Only for
	// LinkTypeERF, without PcapNG.
	RawERF bool
	// Micro writes timestamps in whole us (truncated): pcap's magic
	// 0xa1b2c3d4, pcapng's if_tsresol 6. Otherwise they are in ns.
	Micro bool
	// SectionOptions go in a pcapng file's section header (shb_hardware,
	// shb_os, shb_userappl), InterfaceOptions in its interface's
	// description (if_name, if_description, if_filter, if_os, if_hardware).
	SectionOptions, InterfaceOptions []NgOption
}

// InterfaceStats are the counts a pcapng Interface Statistics Block holds,
// each since the capture started at StartNs.
type InterfaceStats struct {
	StartNs, EndNs int64  // the capture's start and the time of the counts, ns since the epoch
	Received       uint64 // isb_ifrecv: packets the device or ring received
	InterfaceDrops uint64 // isb_ifdrop: packets the device dropped; valid when InterfaceDropsKnown
	OSDrops        uint64 // isb_osdrop: packets the kernel or the receive queue lost
	Delivered      uint64 // isb_usrdeliv: packets the capture program took
	// InterfaceDropsKnown is false when the device has no drop counter.
	InterfaceDropsKnown bool
}

// Encoder turns packets into the bytes of one capture file: a header, then
// one record per packet, each appended whole to the caller's buffer. It is
// the one place ibscope's pcap, pcapng and ERF records are put together:
// ibcap, ibsim's taps and the test captures all write through it.
type Encoder struct {
	cfg       EncoderConfig
	rec       []byte      // ERF record under construction, reused
	flags     [1]NgOption // a packet block's epb_flags
	flagBytes [4]byte
}

// NewEncoder checks cfg and returns its encoder.
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	switch cfg.LinkType {
	case decode.LinkTypeEthernet, decode.LinkTypeERF, decode.LinkTypeInfiniBand, decode.LinkTypeLinuxSLL2:
	default:
		return nil, fmt.Errorf("link type %d is not one ibscope writes (1, 197, 247, 276)", cfg.LinkType)
	}
	if cfg.ERFEthernet && cfg.LinkType != decode.LinkTypeERF {
		return nil, fmt.Errorf("ERF Ethernet records in a file of link type %d", cfg.LinkType)
	}
	if cfg.RawERF && (cfg.LinkType != decode.LinkTypeERF || cfg.PcapNG) {
		return nil, fmt.Errorf("raw ERF holds ERF records only, not link type %d or pcapng", cfg.LinkType)
	}
	if cfg.SnapLenBytes <= 0 || cfg.SnapLenBytes > 1<<30 {
		return nil, fmt.Errorf("snap length %d bytes: want 1 to %d", cfg.SnapLenBytes, 1<<30)
	}
	return &Encoder{cfg: cfg}, nil
}

// LinkType returns the link type the file declares.
func (e *Encoder) LinkType() int { return e.cfg.LinkType }

// MaxRecordBytes is the most AppendPacket appends for one
// packet: the record or block header, the ERF record's overhead and
// padding, and SnapLenBytes of packet.
func (e *Encoder) MaxRecordBytes() int {
	n := pcapRecordHeaderBytes
	if e.cfg.PcapNG {
		n = ngPacketBlockFixedBytes + 3 + 12 // padding, epb_flags and the end of options
	}
	if e.cfg.LinkType == decode.LinkTypeERF {
		n += ERFRecordMaxOverheadBytes
	}
	return n + e.cfg.SnapLenBytes
}

// AppendHeader appends the file header: pcap's, or pcapng's section header
// and its one interface.
func (e *Encoder) AppendHeader(dst []byte) []byte {
	if e.cfg.RawERF {
		return dst // each ERF record carries all a reader needs
	}
	snap := uint32(e.cfg.SnapLenBytes)
	if e.cfg.LinkType == decode.LinkTypeERF {
		snap += ERFRecordMaxOverheadBytes
	}
	if e.cfg.PcapNG {
		dst = AppendNgSectionHeader(dst, e.cfg.SectionOptions)
		res := uint8(ngTsResolNanos)
		if e.cfg.Micro {
			res = ngTsResolMicros
		}
		return appendNgInterfaceTsResol(dst, e.cfg.LinkType, snap, res, e.cfg.InterfaceOptions)
	}
	return AppendPcapFileHeader(dst, e.cfg.LinkType, snap, e.cfg.Micro)
}

// AppendStatistics appends, to a pcapng file, an Interface Statistics
// Block holding s; other formats have no place for it and get nothing.
func (e *Encoder) AppendStatistics(dst []byte, s InterfaceStats) []byte {
	if !e.cfg.PcapNG {
		return dst
	}
	opts := []NgOption{
		NgTimestamp(NgOptISBStartTime, e.ngTime(s.StartNs)),
		NgTimestamp(NgOptISBEndTime, e.ngTime(s.EndNs)),
		NgUint64(NgOptISBIfRecv, s.Received),
	}
	if s.InterfaceDropsKnown {
		opts = append(opts, NgUint64(NgOptISBIfDrop, s.InterfaceDrops))
	}
	opts = append(opts, NgUint64(NgOptISBOSDrop, s.OSDrops), NgUint64(NgOptISBUsrDeliv, s.Delivered))
	return AppendNgInterfaceStatistics(dst, 0, e.ngTime(s.EndNs), opts)
}

// ngTime is tsNs in the interface's if_tsresol units.
func (e *Encoder) ngTime(tsNs int64) uint64 {
	if e.cfg.Micro {
		return uint64(tsNs / 1000)
	}
	return uint64(tsNs)
}

// Packet is one packet as a capture file records it, from the capture
// backend that took it (capture.Source) to the record that keeps it.
type Packet struct {
	// Data holds the captured bytes: the whole packet, or its first bytes
	// when a snap length cut it. A backend's Data is only valid until its
	// next packet, because backends hand out their ring memory.
	Data []byte
	// TsNs is the capture time in ns since the Unix epoch.
	TsNs int64
	// WireLenBytes is the packet's length on the wire in bytes, larger than
	// len(Data) when a snap length cut it (an ERF record then sets its
	// truncated flag); 0 means len(Data), the whole packet.
	WireLenBytes int
	// Iface is the capture interface or direction (0-3) an ERF record
	// keeps in its flags; other formats drop it.
	Iface uint8
	// Direction is which way the packet went, when known; a pcapng packet
	// block keeps it in epb_flags.
	Direction decode.Direction
	// ERFType is the record type in an ERF file (types 21, 25, 2, ...); 0
	// takes it from the packet's length and EncoderConfig.ERFEthernet
	// (ERFTypeFor). Only ERF files have one.
	ERFType uint8
}

// wireLen is the packet's length on the wire.
func (p *Packet) wireLen() int {
	if p.WireLenBytes == 0 {
		return len(p.Data)
	}
	return p.WireLenBytes
}

// AppendPacket appends the record of packet p.
func (e *Encoder) AppendPacket(dst []byte, p *Packet) ([]byte, error) {
	wire := p.wireLen()
	if e.cfg.LinkType != decode.LinkTypeERF {
		if p.ERFType != 0 {
			return dst, fmt.Errorf("ERF record in a file of link type %d", e.cfg.LinkType)
		}
		return e.appendRecord(dst, p.TsNs, p.Data, wire, p.Direction), nil
	}
	erfType := p.ERFType
	if erfType == 0 {
		erfType = ERFTypeFor(wire, e.cfg.ERFEthernet)
	}
	if e.cfg.RawERF {
		return AppendERFRecord(dst, p.TsNs, erfType, p.Data, wire, p.Iface)
	}
	var err error
	if e.rec, err = AppendERFRecord(e.rec[:0], p.TsNs, erfType, p.Data, wire, p.Iface); err != nil {
		return dst, err
	}
	return e.appendRecord(dst, p.TsNs, e.rec, erfWireLenBytes(len(e.rec), len(p.Data), wire), p.Direction), nil
}

func (e *Encoder) appendRecord(dst []byte, tsNs int64, data []byte, wireLenBytes int, dir decode.Direction) []byte {
	if e.cfg.PcapNG {
		var opts []NgOption
		if dir != decode.DirectionUnknown {
			// In the encoder's own storage: no allocation per packet.
			binary.LittleEndian.PutUint32(e.flagBytes[:], uint32(dir)&3)
			e.flags[0] = NgOption{Code: NgOptEPBFlags, Value: e.flagBytes[:]}
			opts = e.flags[:]
		}
		return AppendNgPacket(dst, 0, int64(e.ngTime(tsNs)), data, wireLenBytes, opts)
	}
	return AppendPcapRecord(dst, tsNs, data, wireLenBytes, e.cfg.Micro)
}

// PcapWriter streams a nanosecond pcap file of one link type through an
// Encoder: LinkTypeEthernet (RoCE frames), LinkTypeInfiniBand (native IB
// packets as they are) or LinkTypeERF, where each native IB packet is
// wrapped in an ERF record (type 21, or 25 for a 6-byte link packet) so
// that Wireshark 4.0 opens the file. Writes are buffered: call Flush before
// closing the file.
type PcapWriter struct {
	bw  *bufio.Writer
	enc *Encoder
	buf []byte // the record being written, reused
}

// writerSnapLenBytes is the snap length the file header declares: larger
// than any IB (4 KiB MTU) or jumbo Ethernet frame. In an ERF file it is the
// record's, which rlen caps at 65535 bytes.
const writerSnapLenBytes = 65535

// NewPcapWriter writes the file header for linkType to w.
func NewPcapWriter(w io.Writer, linkType int) (*PcapWriter, error) {
	snap := writerSnapLenBytes
	if linkType == decode.LinkTypeERF {
		snap -= ERFRecordMaxOverheadBytes
	}
	return NewPcapWriterConfig(w, EncoderConfig{LinkType: linkType, SnapLenBytes: snap})
}

// NewPcapWriterConfig writes the header of the file cfg describes (pcap or
// pcapng, with its options) to w.
func NewPcapWriterConfig(w io.Writer, cfg EncoderConfig) (*PcapWriter, error) {
	enc, err := NewEncoder(cfg)
	if err != nil {
		return nil, fmt.Errorf("pcap writer: %w", err)
	}
	pw := &PcapWriter{bw: bufio.NewWriterSize(w, 1<<20), enc: enc}
	if _, err := pw.bw.Write(enc.AppendHeader(nil)); err != nil {
		return nil, fmt.Errorf("pcap writer: file header: %w", err)
	}
	return pw, nil
}

// WritePacket writes the record of packet p.
func (w *PcapWriter) WritePacket(p *Packet) error {
	var err error
	w.buf, err = w.enc.AppendPacket(w.buf[:0], p)
	return w.write(err)
}

func (w *PcapWriter) write(err error) error {
	if err == nil {
		_, err = w.bw.Write(w.buf)
	}
	if err != nil {
		return fmt.Errorf("pcap writer: %w", err)
	}
	return nil
}

// Flush writes out buffered records.
func (w *PcapWriter) Flush() error { return w.bw.Flush() }
