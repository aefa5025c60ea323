package decode

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LinkFCP is a link-level flow-control packet (6 bytes): the credit exchange
// that makes InfiniBand lossless. FCTBS and FCCL count 64-byte blocks mod 4096.
type LinkFCP struct {
	layers.BaseLayer
	Op    uint8  // LinkOpNormal or LinkOpInit, 4 bits
	FCTBS uint16 // flow control total blocks sent, 12 bits
	VL    uint8  // virtual lane, 4 bits
	FCCL  uint16 // flow control credit limit, 12 bits
	LPCRC uint16 // link packet CRC over the first 4 bytes, stored little-endian
}

// Link packet operands and sizes.
const (
	LinkOpNormal = 0
	LinkOpInit   = 1
	LinkFCPLen   = 6
	BlockBytes   = 64 // one flow-control credit
)

// LayerType returns LayerTypeLinkFCP.
func (l *LinkFCP) LayerType() gopacket.LayerType { return LayerTypeLinkFCP }

// CanDecode returns LayerTypeLinkFCP.
func (l *LinkFCP) CanDecode() gopacket.LayerClass { return LayerTypeLinkFCP }

// NextLayerType returns LayerTypeZero: nothing follows a link packet.
func (l *LinkFCP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// LPCRCOK reports whether the stored LPCRC matches the first 4 bytes.
func (l *LinkFCP) LPCRCOK() bool { return len(l.Contents) >= 4 && VCRC(l.Contents[:4]) == l.LPCRC }

// DecodeFromBytes decodes a flow-control packet.
func (l *LinkFCP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < LinkFCPLen {
		df.SetTruncated()
		return fmt.Errorf("link packet: %d bytes, need %d", len(data), LinkFCPLen)
	}
	a := binary.BigEndian.Uint16(data)
	c := binary.BigEndian.Uint16(data[2:])
	l.Op, l.FCTBS = uint8(a>>12), a&0xFFF
	l.VL, l.FCCL = uint8(c>>12), c&0xFFF
	l.LPCRC = binary.LittleEndian.Uint16(data[4:])
	l.Contents, l.Payload = data[:LinkFCPLen], data[LinkFCPLen:]
	return nil
}

// SerializeTo prepends the packet. With ComputeChecksums the LPCRC is computed.
func (l *LinkFCP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(LinkFCPLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h, uint16(l.Op)<<12|l.FCTBS&0xFFF)
	binary.BigEndian.PutUint16(h[2:], uint16(l.VL)<<12|l.FCCL&0xFFF)
	if opts.ComputeChecksums {
		l.LPCRC = VCRC(h[:4])
	}
	binary.LittleEndian.PutUint16(h[4:], l.LPCRC)
	return nil
}

func decodeLinkFCP(data []byte, p gopacket.PacketBuilder) error {
	l := &LinkFCP{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	p.SetLinkLayer(l)
	return nil
}

// LinkFlow implements gopacket.LinkLayer; a link packet has no addresses.
func (l *LinkFCP) LinkFlow() gopacket.Flow { return gopacket.InvalidFlow }

// LinkFlow implements gopacket.LinkLayer with the LIDs as endpoints.
func (l *LRH) LinkFlow() gopacket.Flow {
	s := [2]byte{byte(l.SLID >> 8), byte(l.SLID)}
	d := [2]byte{byte(l.DLID >> 8), byte(l.DLID)}
	return gopacket.NewFlow(EndpointLID, s[:], d[:])
}

// EndpointLID is a 16-bit local identifier endpoint.
var EndpointLID = gopacket.RegisterEndpointType(1501, gopacket.EndpointTypeMetadata{Name: "LID", Formatter: func(b []byte) string {
	if len(b) != 2 {
		return "?"
	}
	return fmt.Sprintf("LID %d", uint16(b[0])<<8|uint16(b[1]))
}})

// linkFields: "link": {op, fctbs, vl, fccl, lpcrc_ok}; the LPCRC only
// when the CRCs were checked.
var linkFields = headerFields{
	order: 190,
	has:   HasLink,
	json: func(dst []byte, f *Frame) []byte {
		l := &f.Link
		dst = append(dst, `,"link":{"op":`...)
		dst = strconv.AppendUint(dst, uint64(l.Op), 10)
		dst = appendInt(dst, "fctbs", int64(l.FCTBS))
		dst = appendInt(dst, "vl", int64(l.VL))
		dst = appendInt(dst, "fccl", int64(l.FCCL))
		if f.Has&CRCsCheck != 0 {
			dst = appendBool(dst, "lpcrc_ok", f.VCRCOK)
		}
		return append(dst, '}')
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		l := &f.Link
		dst = strconv.AppendUint(append(dst, "FCP op "...), uint64(l.Op), 10)
		dst = strconv.AppendUint(append(dst, " vl "...), uint64(l.VL), 10)
		dst = strconv.AppendUint(append(dst, " fctbs "...), uint64(l.FCTBS), 10)
		return strconv.AppendUint(append(dst, " fccl "...), uint64(l.FCCL), 10)
	},
	columns: []ColumnGroup{
		{any: HasLink, Columns: []Column{
			{"link_op", ColumnUint8, "link (flow control) packet op"},
			{"link_fctbs", ColumnUint16, "link packet FCTBS, 64-byte blocks mod 4096"},
			{"link_vl", ColumnUint8, "link packet VL"},
			{"link_fccl", ColumnUint16, "link packet FCCL, 64-byte blocks mod 4096"},
		}, values: func(f *Frame, v *ColumnValues) {
			l := &f.Link
			v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(l.Op), uint64(l.FCTBS), uint64(l.VL), uint64(l.FCCL)
		}},
		{all: HasLink | CRCsCheck, Columns: []Column{
			{"link_lpcrc_ok", ColumnBool, "link packet LPCRC verified correct"},
		}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = b2u(f.VCRCOK) }},
	},
}

func init() { registerFields(&linkFields) }
