package decode

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// BTH is the Base Transport Header (12 bytes). The ICRC that closes the
// transport packet is kept here, since the BTH is what opens it.
type BTH struct {
	layers.BaseLayer
	OpCode  Opcode
	SE      bool   // solicited event
	M       bool   // migration state
	PadCnt  uint8  // pad bytes before the ICRC, 0-3
	TVer    uint8  // transport header version, 4 bits
	PKey    uint16 // partition key
	FECN    bool   // forward explicit congestion notification
	BECN    bool   // backward explicit congestion notification
	Resv6a  uint8  // 6 reserved bits
	DestQP  uint32 // 24 bits
	AckReq  bool
	Resv7   uint8  // 7 reserved bits
	PSN     uint32 // packet sequence number, 24 bits
	ICRC    uint32 // invariant CRC, as the value stored little-endian on the wire
	HasICRC bool   // false when the packet ends before an ICRC
}

// BTHLen is the BTH size in bytes; ICRCLen the invariant CRC's.
const (
	BTHLen  = 12
	ICRCLen = 4
)

// LayerType returns LayerTypeBTH.
func (t *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (t *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the first extended header the opcode implies.
func (t *BTH) NextLayerType() gopacket.LayerType { return nextAfter(t.OpCode, extNone) }

// DecodeFromBytes decodes a BTH from a transport packet that runs through its
// ICRC. The payload is what lies between the BTH and the pad bytes, so the
// extended headers and the message data, without pad or ICRC.
func (t *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < BTHLen {
		df.SetTruncated()
		return fmt.Errorf("BTH: %d bytes, need %d", len(data), BTHLen)
	}
	t.parse(data)
	t.Contents = data[:BTHLen]
	end := len(data) - ICRCLen
	t.HasICRC = end >= BTHLen
	if !t.HasICRC {
		df.SetTruncated()
		t.Payload = data[BTHLen:]
		return fmt.Errorf("BTH: packet of %d bytes has no room for an ICRC", len(data))
	}
	t.ICRC = binary.LittleEndian.Uint32(data[end:])
	if end-int(t.PadCnt) < BTHLen {
		return fmt.Errorf("BTH: pad count %d exceeds the %d bytes after the BTH", t.PadCnt, end-BTHLen)
	}
	t.Payload = data[BTHLen : end-int(t.PadCnt)]
	return nil
}

// parse reads the header fields from the first BTHLen bytes of h.
func (t *BTH) parse(h []byte) {
	data := h[:BTHLen]
	t.OpCode = Opcode(data[0])
	t.SE = data[1]&0x80 != 0
	t.M = data[1]&0x40 != 0
	t.PadCnt = (data[1] >> 4) & 3
	t.TVer = data[1] & 0x0F
	t.PKey = binary.BigEndian.Uint16(data[2:])
	t.FECN = data[4]&0x80 != 0
	t.BECN = data[4]&0x40 != 0
	t.Resv6a = data[4] & 0x3F
	t.DestQP = binary.BigEndian.Uint32(data[4:]) & 0xFFFFFF
	t.AckReq = data[8]&0x80 != 0
	t.Resv7 = data[8] & 0x7F
	t.PSN = binary.BigEndian.Uint32(data[8:]) & 0xFFFFFF
}

// SerializeTo prepends the BTH and appends the ICRC field. With FixLengths the
// pad bytes that bring the payload to a 4-byte multiple are appended and PadCnt
// set. The ICRC is whatever t.ICRC holds: SealICRC computes it once the outer
// headers are in place.
func (t *BTH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		t.PadCnt = uint8((4 - len(b.Bytes())%4) % 4)
		if t.PadCnt > 0 {
			p, err := b.AppendBytes(int(t.PadCnt))
			if err != nil {
				return err
			}
			clear(p)
		}
	}
	h, err := b.PrependBytes(BTHLen)
	if err != nil {
		return err
	}
	h[0] = byte(t.OpCode)
	h[1] = t.PadCnt&3<<4 | t.TVer&0x0F
	if t.SE {
		h[1] |= 0x80
	}
	if t.M {
		h[1] |= 0x40
	}
	binary.BigEndian.PutUint16(h[2:], t.PKey)
	binary.BigEndian.PutUint32(h[4:], t.DestQP&0xFFFFFF)
	h[4] = t.Resv6a & 0x3F
	if t.FECN {
		h[4] |= 0x80
	}
	if t.BECN {
		h[4] |= 0x40
	}
	binary.BigEndian.PutUint32(h[8:], t.PSN&0xFFFFFF)
	h[8] = t.Resv7 & 0x7F
	if t.AckReq {
		h[8] |= 0x80
	}
	c, err := b.AppendBytes(ICRCLen)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(c, t.ICRC)
	return nil
}

func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	t := &BTH{}
	if err := t.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(t)
	p.SetTransportLayer(t)
	next := t.NextLayerType()
	if next == gopacket.LayerTypePayload {
		return decodeIBPayload(t.Payload, p, t.OpCode)
	}
	return p.NextDecoder(next)
}

// TransportFlow implements gopacket.TransportLayer with the destination QP
// (the BTH carries no source QP).
func (t *BTH) TransportFlow() gopacket.Flow {
	var d [3]byte
	d[0], d[1], d[2] = byte(t.DestQP>>16), byte(t.DestQP>>8), byte(t.DestQP)
	return gopacket.NewFlow(EndpointQP, nil, d[:])
}

// EndpointQP is a queue-pair number endpoint (3 bytes, big-endian).
var EndpointQP = gopacket.RegisterEndpointType(1500, gopacket.EndpointTypeMetadata{Name: "QP", Formatter: func(b []byte) string {
	if len(b) != 3 {
		return "?"
	}
	return fmt.Sprintf("QP 0x%06x", uint32(b[0])<<16|uint32(b[1])<<8|uint32(b[2]))
}})

// bthFields: the BTH's fields, and in the summary the AETH's words, which
// say what an ACK is between the BTH's QP and PSN and its flags.
var bthFields = headerFields{
	order: 50,
	has:   HasBTH,
	json: func(dst []byte, f *Frame) []byte {
		b := &f.BTH
		dst = appendInt(dst, "opcode", int64(b.OpCode))
		dst = appendStr(dst, "opcode_name", b.OpCode.String())
		dst = appendInt(dst, "dest_qp", int64(b.DestQP))
		dst = appendInt(dst, "psn", int64(b.PSN))
		dst = appendBool(dst, "ack_req", b.AckReq)
		dst = appendBool(dst, "fecn", b.FECN)
		dst = appendBool(dst, "becn", b.BECN)
		dst = appendBool(dst, "solicited", b.SE)
		dst = appendInt(dst, "pkey", int64(b.PKey))
		return appendInt(dst, "pad", int64(b.PadCnt))
	},
	role: summaryTransport,
	summary: func(dst []byte, f *Frame) []byte {
		b := &f.BTH
		dst = append(append(dst, "  "...), b.OpCode.String()...)
		dst = append(dst, " qp 0x"...)
		dst = padLeft(strconv.AppendUint(dst, uint64(b.DestQP), 16), len(dst), 6, '0')
		dst = strconv.AppendUint(append(dst, " psn "...), uint64(b.PSN), 10)
		if f.Has&HasAETH != 0 {
			dst = f.AETH.appendSummary(dst, b.OpCode)
		}
		if b.FECN {
			dst = append(dst, " FECN"...)
		}
		if b.BECN {
			dst = append(dst, " BECN"...)
		}
		return dst
	},
	columns: []ColumnGroup{{any: HasBTH, Columns: []Column{
		{"opcode", ColumnUint8, "BTH opcode"},
		{"opcode_name", ColumnOpcodeName, "BTH opcode name"},
		{"dest_qp", ColumnUint32, "BTH destination QP (24 bits)"},
		{"psn", ColumnUint32, "BTH packet sequence number (24 bits)"},
		{"ack_req", ColumnBool, "BTH AckReq bit"},
		{"fecn", ColumnBool, "BTH FECN bit"},
		{"becn", ColumnBool, "BTH BECN bit"},
		{"solicited", ColumnBool, "BTH solicited-event bit"},
		{"pkey", ColumnUint16, "BTH partition key"},
		{"pad", ColumnUint8, "BTH pad count, bytes"},
	}, values: func(f *Frame, v *ColumnValues) {
		b := &f.BTH
		v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(b.OpCode), uint64(b.OpCode), uint64(b.DestQP), uint64(b.PSN)
		v.Num[4], v.Num[5], v.Num[6], v.Num[7] = b2u(b.AckReq), b2u(b.FECN), b2u(b.BECN), b2u(b.SE)
		v.Num[8], v.Num[9] = uint64(b.PKey), uint64(b.PadCnt)
	}}},
}

func init() { registerFields(&bthFields) }
