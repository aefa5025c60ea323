package capture

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/ibscope/ibscope/decode"
)

// Format is a capture file format.
type Format int

// Formats ibcap writes. Every one opens in Wireshark 4.0 except FormatIB247,
// which Wireshark 4.0 does not read (ibanalyze does).
const (
	// FormatAuto is FormatPcap for Ethernet sources and FormatERF for
	// native InfiniBand.
	FormatAuto Format = iota
	// FormatPcap is nanosecond pcap (magic 0xa1b23c4d). Native IB packets
	// go in ERF records, as with FormatERF, since that is what Wireshark opens.
	FormatPcap
	// FormatPcapNG is pcapng with if_tsresol 9 (ns); native IB packets go in
	// ERF records.
	FormatPcapNG
	// FormatERF is nanosecond pcap of link type 197, one ERF record per
	// packet: type 21 (InfiniBand) or 25 (InfiniBand link) for native IB,
	// type 2 (Ethernet) for RoCE frames.
	FormatERF
	// FormatIB247 is nanosecond pcap of LINKTYPE_INFINIBAND (247), LRH
	// first; native IB sources only.
	FormatIB247
)

var formatNames = [...]string{"auto", "pcap", "pcapng", "erf", "ib247"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", int(f))
}

// ParseFormat parses a --format value.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown format %q: pcap, pcapng, erf or ib247", s)
}

// encoder turns packets into file bytes: a file header, then one record per
// packet, each appended to a buffer so the writer can keep records whole.
type encoder interface {
	fileHeader(dst []byte) []byte
	record(dst []byte, p *Packet) ([]byte, error)
	linkType() int // the link type the file declares
}

// newEncoder picks the encoding of the packets of srcLinkType in format f.
func newEncoder(f Format, srcLinkType, snapLenBytes int) (encoder, error) {
	native := srcLinkType == decode.LinkTypeInfiniBand
	if srcLinkType != decode.LinkTypeEthernet && !native {
		return nil, fmt.Errorf("writer: source link type %d is neither Ethernet (1) nor InfiniBand (247)", srcLinkType)
	}
	snap := uint32(snapLenBytes)
	switch f {
	case FormatAuto, FormatPcap:
		if native {
			return &pcapEncoder{lt: decode.LinkTypeERF, snap: snap, erf: newERFBuilder(true)}, nil
		}
		return &pcapEncoder{lt: decode.LinkTypeEthernet, snap: snap}, nil
	case FormatERF:
		return &pcapEncoder{lt: decode.LinkTypeERF, snap: snap, erf: newERFBuilder(native)}, nil
	case FormatPcapNG:
		if native {
			return &pcapngEncoder{lt: decode.LinkTypeERF, snap: snap, erf: newERFBuilder(true)}, nil
		}
		return &pcapngEncoder{lt: decode.LinkTypeEthernet, snap: snap}, nil
	case FormatIB247:
		if !native {
			return nil, fmt.Errorf("writer: --format ib247 holds native InfiniBand packets; this device gives Ethernet (RoCE) frames: use pcap, pcapng or erf")
		}
		return &pcapEncoder{lt: decode.LinkTypeInfiniBand, snap: snap}, nil
	}
	return nil, fmt.Errorf("writer: unknown format %v", f)
}

// Pcap file constants.
const (
	pcapMagicNanos    = 0xa1b23c4d
	pcapFileHeaderLen = 24
	pcapRecHeaderLen  = 16
)

// pcapEncoder writes nanosecond pcap; with erf set, each packet is wrapped
// in an ERF record first.
type pcapEncoder struct {
	lt   int
	snap uint32
	erf  *erfBuilder
}

func (e *pcapEncoder) linkType() int { return e.lt }

func (e *pcapEncoder) fileHeader(dst []byte) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, pcapMagicNanos)
	dst = le.AppendUint16(dst, 2) // version 2.4
	dst = le.AppendUint16(dst, 4)
	dst = le.AppendUint32(dst, 0) // thiszone
	dst = le.AppendUint32(dst, 0) // sigfigs
	dst = le.AppendUint32(dst, e.snap+erfOverheadBytes(e.erf))
	return le.AppendUint32(dst, uint32(e.lt))
}

func (e *pcapEncoder) record(dst []byte, p *Packet) ([]byte, error) {
	data, wire, err := erfWrap(e.erf, p)
	if err != nil {
		return dst, err
	}
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, uint32(p.TsNs/1e9))
	dst = le.AppendUint32(dst, uint32(p.TsNs%1e9))
	dst = le.AppendUint32(dst, uint32(len(data)))
	dst = le.AppendUint32(dst, uint32(max(wire, len(data))))
	return append(dst, data...), nil
}

// pcapng block types and options.
const (
	ngSHB          = 0x0A0D0D0A
	ngIDB          = 1
	ngEPB          = 6
	ngByteOrder    = 0x1A2B3C4D
	ngOptTsresol   = 9
	ngOptEnd       = 0
	ngEPBFixedLen  = 32 // block type, length, interface, ts high, ts low, caplen, origlen, trailing length
	ngTsresolNanos = 9  // 10^-9 s
)

// pcapngEncoder writes one section with one interface whose timestamps are
// in ns.
type pcapngEncoder struct {
	lt   int
	snap uint32
	erf  *erfBuilder
}

func (e *pcapngEncoder) linkType() int { return e.lt }

func (e *pcapngEncoder) fileHeader(dst []byte) []byte {
	le := binary.LittleEndian
	// Section header block, no options, section length unknown (-1).
	dst = le.AppendUint32(dst, ngSHB)
	dst = le.AppendUint32(dst, 28)
	dst = le.AppendUint32(dst, ngByteOrder)
	dst = le.AppendUint16(dst, 1)
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint64(dst, ^uint64(0))
	dst = le.AppendUint32(dst, 28)
	// Interface description block with if_tsresol = 9.
	dst = le.AppendUint32(dst, ngIDB)
	dst = le.AppendUint32(dst, 32)
	dst = le.AppendUint16(dst, uint16(e.lt))
	dst = le.AppendUint16(dst, 0)
	dst = le.AppendUint32(dst, e.snap+erfOverheadBytes(e.erf))
	dst = le.AppendUint16(dst, ngOptTsresol)
	dst = le.AppendUint16(dst, 1)
	dst = append(dst, ngTsresolNanos, 0, 0, 0)
	dst = le.AppendUint32(dst, ngOptEnd)
	return le.AppendUint32(dst, 32)
}

func (e *pcapngEncoder) record(dst []byte, p *Packet) ([]byte, error) {
	data, wire, err := erfWrap(e.erf, p)
	if err != nil {
		return dst, err
	}
	pad := (4 - len(data)%4) % 4
	total := uint32(ngEPBFixedLen + len(data) + pad)
	ts := uint64(p.TsNs)
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, ngEPB)
	dst = le.AppendUint32(dst, total)
	dst = le.AppendUint32(dst, 0) // interface 0
	dst = le.AppendUint32(dst, uint32(ts>>32))
	dst = le.AppendUint32(dst, uint32(ts))
	dst = le.AppendUint32(dst, uint32(len(data)))
	dst = le.AppendUint32(dst, uint32(max(wire, len(data))))
	dst = append(dst, data...)
	dst = append(dst, make([]byte, pad)...)
	return le.AppendUint32(dst, total), nil
}

// erfBuilder wraps packets in ERF records with decode's ERF layer.
type erfBuilder struct {
	native  bool // native IB (types 21 and 25) rather than Ethernet (type 2)
	buf     gopacket.SerializeBuffer
	erf     decode.ERF
	payload gopacket.Payload
	layers  []gopacket.SerializableLayer // &erf, &payload: built once so a record allocates nothing
}

func newERFBuilder(native bool) *erfBuilder {
	b := &erfBuilder{native: native, buf: gopacket.NewSerializeBuffer()}
	b.layers = []gopacket.SerializableLayer{&b.erf, &b.payload}
	return b
}

// erfWrap is what a record holds for p and the wire length that goes with
// it, bytes: p itself without b, with b the ERF record wrapping it, whose
// wire length is the whole record plus the part of the packet cut off.
func erfWrap(b *erfBuilder, p *Packet) (data []byte, wireBytes int, err error) {
	if b == nil {
		return p.Data, p.WireLenBytes, nil
	}
	if data, err = b.build(p); err != nil {
		return nil, 0, err
	}
	return data, len(data) + p.WireLenBytes - len(p.Data), nil
}

// erfOverheadBytes is how much an ERF record adds to a packet at most: the
// header, the Ethernet types' 2 bytes, and padding to 8.
func erfOverheadBytes(b *erfBuilder) uint32 {
	if b == nil {
		return 0
	}
	return decode.ERFHeaderLen + 2 + 7
}

// build returns the ERF record for p, valid until the next call.
func (b *erfBuilder) build(p *Packet) ([]byte, error) {
	if p.WireLenBytes > 0xFFFF {
		return nil, fmt.Errorf("writer: %d-byte packet does not fit an ERF record (wire length is 16 bits)", p.WireLenBytes)
	}
	e := &b.erf
	*e = decode.ERF{Timestamp: decode.NsToERFTime(p.TsNs), Type: decode.ERFTypeEthernet, Flags: p.Iface & 3}
	if b.native {
		e.Type = decode.ERFTypeInfiniBand
		if p.WireLenBytes == decode.LinkFCPLen {
			e.Type = decode.ERFTypeIBLink
		}
	}
	b.payload = p.Data
	if err := gopacket.SerializeLayers(b.buf, gopacket.SerializeOptions{FixLengths: true}, b.layers...); err != nil {
		return nil, fmt.Errorf("writer: ERF record: %w", err)
	}
	rec := b.buf.Bytes()
	if len(p.Data) < p.WireLenBytes {
		// FixLengths took the captured length for the wire length; a
		// snap-length cut needs the real one and the truncated flag.
		binary.BigEndian.PutUint16(rec[14:], uint16(p.WireLenBytes))
		rec[9] |= decode.ERFFlagTruncated
	}
	return rec, nil
}
