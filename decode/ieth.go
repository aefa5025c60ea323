package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
)

// IETH is the Invalidate Extended Transport Header (4 bytes) of SEND with invalidate.
type IETH struct {
	extBase
	RKey uint32 // the R_Key to invalidate
}

// extIETH is the IETH's kind.
const extIETH ext = 9

// LayerTypeIETH is the IETH's gopacket layer type.
var LayerTypeIETH = registerExt(extIETH, extHeader{name: "IETH", layer: 1511, len: 4, has: HasIETH,
	new: func(b extBase) extLayer { return &IETH{extBase: b} }})

// LayerType returns LayerTypeIETH.
func (h *IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// CanDecode returns LayerTypeIETH.
func (h *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *IETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extIETH) }

// DecodeFromBytes decodes an IETH.
func (h *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extIETH
	b, err := h.take(data, df)
	if err == nil {
		h.RKey = binary.BigEndian.Uint32(b)
	}
	return err
}

// SerializeTo prepends the IETH.
func (h *IETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extIETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.RKey)
	}
	return err
}

// iethFields: "ieth", the invalidated remote key.
var iethFields = headerFields{
	order: 160,
	has:   HasIETH,
	json:  func(dst []byte, f *Frame) []byte { return appendInt(dst, "ieth", int64(f.IETH.RKey)) },
	columns: []ColumnGroup{{any: HasIETH, Columns: []Column{
		{"ieth", ColumnUint32, "IETH invalidated remote key"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.IETH.RKey) }}},
}

func init() { registerFields(&iethFields) }
