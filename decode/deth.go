package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// DETH is the Datagram Extended Transport Header (8 bytes), in UD and RD packets.
type DETH struct {
	extBase
	QKey  uint32
	SrcQP uint32 // 24 bits
}

// extDETH is the DETH's kind.
const extDETH ext = 2

// LayerTypeDETH is the DETH's gopacket layer type.
var LayerTypeDETH = registerExt(extDETH, extHeader{name: "DETH", layer: 1504, len: 8, has: HasDETH,
	new: func(b extBase) extLayer { return &DETH{extBase: b} }})

// LayerType returns LayerTypeDETH.
func (h *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns LayerTypeDETH.
func (h *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *DETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extDETH) }

// DecodeFromBytes decodes a DETH.
func (h *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extDETH
	b, err := h.take(data, df)
	if err == nil {
		h.QKey = binary.BigEndian.Uint32(b)
		h.SrcQP = binary.BigEndian.Uint32(b[4:]) & 0xFFFFFF
	}
	return err
}

// SerializeTo prepends the DETH.
func (h *DETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extDETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.QKey)
		binary.BigEndian.PutUint32(b[4:], h.SrcQP&0xFFFFFF)
	}
	return err
}

// dethFields: "deth": {qkey, src_qp}.
var dethFields = headerFields{
	order: 120,
	has:   HasDETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"deth":{"qkey":`...)
		dst = strconv.AppendUint(dst, uint64(f.DETH.QKey), 10)
		dst = appendInt(dst, "src_qp", int64(f.DETH.SrcQP))
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasDETH, Columns: []Column{
		{"deth_qkey", ColumnUint32, "DETH queue key"},
		{"deth_src_qp", ColumnUint32, "DETH source QP (24 bits)"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1] = uint64(f.DETH.QKey), uint64(f.DETH.SrcQP)
	}}},
}

func init() { registerFields(&dethFields) }
