package decode

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LRH is the InfiniBand Local Route Header (8 bytes). The VCRC that closes the
// packet on the link is kept here too, since the LRH is what it protects.
type LRH struct {
	layers.BaseLayer
	VL     uint8  // virtual lane, 4 bits
	LVer   uint8  // link version, 4 bits
	SL     uint8  // service level, 4 bits
	Resv2  uint8  // 2 reserved bits
	LNH    uint8  // link next header: LNHRaw, LNHIPv6, LNHLocal, LNHGlobal
	DLID   uint16 // destination local identifier
	Resv5  uint8  // 5 reserved bits
	PktLen uint16 // LRH through ICRC, in 4-byte words (11 bits)
	SLID   uint16 // source local identifier
	// VCRC is the variant CRC after PktLen words; HasVCRC is false when the
	// capture ends before it.
	VCRC    uint16
	HasVCRC bool
}

// LRH link next header values.
const (
	LNHRaw    = 0 // raw packet
	LNHIPv6   = 1 // IP non-IBA transport
	LNHLocal  = 2 // IBA local: BTH follows
	LNHGlobal = 3 // IBA global: GRH follows
)

// LRHLen is the LRH size in bytes; VCRCLen the variant CRC's, which ends a
// native packet.
const (
	LRHLen  = 8
	VCRCLen = 2
)

// LayerType returns LayerTypeLRH.
func (l *LRH) LayerType() gopacket.LayerType { return LayerTypeLRH }

// CanDecode returns LayerTypeLRH.
func (l *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// NextLayerType returns the GRH or BTH per LNH.
func (l *LRH) NextLayerType() gopacket.LayerType {
	switch l.LNH {
	case LNHGlobal:
		return LayerTypeGRH
	case LNHLocal:
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes an LRH. Its payload runs to PktLen words (through the
// ICRC); the two bytes after it are the VCRC.
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < LRHLen {
		df.SetTruncated()
		return fmt.Errorf("LRH: %d bytes, need %d", len(data), LRHLen)
	}
	l.VL = data[0] >> 4
	l.LVer = data[0] & 0x0F
	l.SL = data[1] >> 4
	l.Resv2 = (data[1] >> 2) & 3
	l.LNH = data[1] & 3
	l.DLID = binary.BigEndian.Uint16(data[2:])
	l.Resv5 = data[4] >> 3
	l.PktLen = binary.BigEndian.Uint16(data[4:]) & 0x7FF
	l.SLID = binary.BigEndian.Uint16(data[6:])
	end := int(l.PktLen) * 4
	if end < LRHLen {
		return fmt.Errorf("LRH: PktLen %d words is shorter than the LRH itself", l.PktLen)
	}
	l.HasVCRC = false
	if end > len(data) {
		df.SetTruncated()
		end = len(data)
	} else if end+2 <= len(data) {
		l.VCRC = binary.LittleEndian.Uint16(data[end:])
		l.HasVCRC = true
	}
	l.Contents = data[:LRHLen]
	l.Payload = data[LRHLen:end]
	return nil
}

// SerializeTo prepends the LRH and appends the VCRC field. With FixLengths,
// PktLen covers what the inner layers wrote (through the ICRC).
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	inner := len(b.Bytes())
	if opts.FixLengths {
		l.PktLen = uint16((inner + LRHLen) / 4)
	}
	h, err := b.PrependBytes(LRHLen)
	if err != nil {
		return err
	}
	h[0] = l.VL<<4 | l.LVer&0x0F
	h[1] = l.SL<<4 | (l.Resv2&3)<<2 | l.LNH&3
	binary.BigEndian.PutUint16(h[2:], l.DLID)
	binary.BigEndian.PutUint16(h[4:], uint16(l.Resv5)<<11|l.PktLen&0x7FF)
	binary.BigEndian.PutUint16(h[6:], l.SLID)
	t, err := b.AppendBytes(2)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint16(t, l.VCRC)
	return nil
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	l := &LRH{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	p.SetLinkLayer(l)
	return p.NextDecoder(l.NextLayerType())
}

// lrhFields: the LRH's addresses, service level and lane.
var lrhFields = headerFields{
	order: 20,
	has:   HasLRH,
	json: func(dst []byte, f *Frame) []byte {
		dst = appendInt(dst, "slid", int64(f.LRH.SLID))
		dst = appendInt(dst, "dlid", int64(f.LRH.DLID))
		dst = appendInt(dst, "sl", int64(f.LRH.SL))
		return appendInt(dst, "vl", int64(f.LRH.VL))
	},
	role: summaryAddresses,
	summary: func(dst []byte, f *Frame) []byte {
		dst = strconv.AppendUint(append(dst, "LID "...), uint64(f.LRH.SLID), 10)
		dst = strconv.AppendUint(append(dst, " -> "...), uint64(f.LRH.DLID), 10)
		dst = strconv.AppendUint(append(dst, " sl "...), uint64(f.LRH.SL), 10)
		return strconv.AppendUint(append(dst, " vl "...), uint64(f.LRH.VL), 10)
	},
	columns: []ColumnGroup{{any: HasLRH, Columns: []Column{
		{"slid", ColumnUint16, "LRH source LID (native IB)"},
		{"dlid", ColumnUint16, "LRH destination LID (native IB)"},
		{"sl", ColumnUint8, "LRH service level"},
		{"vl", ColumnUint8, "LRH virtual lane"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1], v.Num[2], v.Num[3] = uint64(f.LRH.SLID), uint64(f.LRH.DLID), uint64(f.LRH.SL), uint64(f.LRH.VL)
	}}},
}

func init() { registerFields(&lrhFields) }
