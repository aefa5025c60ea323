package decode

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// PcapWriter writes a nanosecond pcap file (magic 0xa1b23c4d) of one link
// type: LinkTypeEthernet (RoCE frames), LinkTypeInfiniBand (native IB packets
// as they are) or LinkTypeERF, where each native IB packet is wrapped in an
// ERF record (type 21, or 25 for a 6-byte link packet) so that Wireshark 4.0
// opens the file. Writes are buffered: call Flush before closing the file.
type PcapWriter struct {
	bw       *bufio.Writer
	pw       *pcapgo.Writer
	linkType int
	rec      []byte // ERF record under construction, reused
}

// writerSnapLenBytes is the snap length declared in the file header: larger
// than any IB (4 KiB MTU) or jumbo Ethernet frame.
const writerSnapLenBytes = 65535

// NewPcapWriter writes the file header for linkType to w.
func NewPcapWriter(w io.Writer, linkType int) (*PcapWriter, error) {
	switch linkType {
	case LinkTypeEthernet, LinkTypeERF, LinkTypeInfiniBand:
	default:
		return nil, fmt.Errorf("pcap writer: link type %d is not one ibscope writes (1, 197, 247)", linkType)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(writerSnapLenBytes, layers.LinkType(linkType)); err != nil {
		return nil, fmt.Errorf("pcap writer: file header: %w", err)
	}
	return &PcapWriter{bw: bw, pw: pw, linkType: linkType}, nil
}

// LinkType returns the file's link type.
func (w *PcapWriter) LinkType() int { return w.linkType }

// WritePacket writes one whole packet captured at tsNs (ns since the Unix
// epoch). iface is the capture interface or direction (0-3); only ERF records
// keep it.
func (w *PcapWriter) WritePacket(tsNs int64, pkt []byte, iface uint8) error {
	return w.WritePacketCut(tsNs, pkt, len(pkt), iface)
}

// WritePacketCut writes a packet of wireLenBytes of which only captured was
// kept (a snap length cut).
func (w *PcapWriter) WritePacketCut(tsNs int64, captured []byte, wireLenBytes int, iface uint8) error {
	if w.linkType != LinkTypeERF {
		return w.write(tsNs, captured, wireLenBytes)
	}
	t := uint8(ERFTypeInfiniBand)
	if wireLenBytes == LinkFCPLen {
		t = ERFTypeIBLink
	}
	return w.WriteERF(tsNs, t, captured, wireLenBytes, iface)
}

// WriteERF writes one ERF record of type erfType holding captured, the first
// bytes of a packet of wireLenBytes (for Ethernet types, wireLenBytes counts
// the FCS when captured ends with one). Only for LinkTypeERF files.
func (w *PcapWriter) WriteERF(tsNs int64, erfType uint8, captured []byte, wireLenBytes int, iface uint8) error {
	if w.linkType != LinkTypeERF {
		return fmt.Errorf("pcap writer: ERF record in a file of link type %d", w.linkType)
	}
	hdr := ERFHeaderLen
	if isERFEthernet(erfType) {
		hdr += 2 // offset and pad bytes before the frame
	}
	rlen := hdr + len(captured)
	rlen += (8 - rlen%8) % 8 // DAG cards pad records to 8 bytes; Wireshark expects it
	if rlen > 0xFFFF || wireLenBytes > 0xFFFF {
		return fmt.Errorf("pcap writer: %d-byte packet does not fit an ERF record", wireLenBytes)
	}
	w.rec = append(w.rec[:0], make([]byte, rlen)...)
	r := w.rec
	binary.LittleEndian.PutUint64(r, NsToERFTime(tsNs))
	r[8] = erfType & 0x7F
	r[9] = iface & 3
	binary.BigEndian.PutUint16(r[10:], uint16(rlen))
	binary.BigEndian.PutUint16(r[14:], uint16(wireLenBytes))
	copy(r[hdr:], captured)
	// The pcap record holds the whole ERF record; its wire length grows by
	// what the snap length cut from the packet.
	return w.write(tsNs, r, rlen+wireLenBytes-len(captured))
}

func (w *PcapWriter) write(tsNs int64, data []byte, wireLenBytes int) error {
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, tsNs), CaptureLength: len(data), Length: max(wireLenBytes, len(data))}
	if err := w.pw.WritePacket(ci, data); err != nil {
		return fmt.Errorf("pcap writer: %w", err)
	}
	return nil
}

// Flush writes out buffered records.
func (w *PcapWriter) Flush() error { return w.bw.Flush() }
