package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
)

// ImmDt is the Immediate Data Extended Transport Header (4 bytes).
type ImmDt struct {
	extBase
	Imm uint32
}

// extImmDt is the ImmDt's kind.
const extImmDt ext = 8

// LayerTypeImmDt is the ImmDt's gopacket layer type.
var LayerTypeImmDt = registerExt(extImmDt, extHeader{name: "ImmDt", layer: 1510, len: 4, has: HasImmDt,
	new: func(b extBase) extLayer { return &ImmDt{extBase: b} }})

// LayerType returns LayerTypeImmDt.
func (h *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (h *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *ImmDt) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extImmDt) }

// DecodeFromBytes decodes an ImmDt.
func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extImmDt
	b, err := h.take(data, df)
	if err == nil {
		h.Imm = binary.BigEndian.Uint32(b)
	}
	return err
}

// SerializeTo prepends the ImmDt.
func (h *ImmDt) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extImmDt
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.Imm)
	}
	return err
}

// immDtFields: "imm".
var immDtFields = headerFields{
	order: 150,
	has:   HasImmDt,
	json:  func(dst []byte, f *Frame) []byte { return appendInt(dst, "imm", int64(f.ImmDt.Imm)) },
	columns: []ColumnGroup{{any: HasImmDt, Columns: []Column{
		{"imm", ColumnUint32, "immediate data"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.ImmDt.Imm) }}},
}

func init() { registerFields(&immDtFields) }
