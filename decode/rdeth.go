package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// RDETH is the Reliable Datagram Extended Transport Header (4 bytes).
type RDETH struct {
	extBase
	EECnxt uint32 // end-to-end context, 24 bits
}

// extRDETH is the RDETH's kind.
const extRDETH ext = 1

// LayerTypeRDETH is the RDETH's gopacket layer type.
var LayerTypeRDETH = registerExt(extRDETH, extHeader{name: "RDETH", layer: 1503, len: 4, has: HasRDETH,
	new: func(b extBase) extLayer { return &RDETH{extBase: b} }})

// LayerType returns LayerTypeRDETH.
func (h *RDETH) LayerType() gopacket.LayerType { return LayerTypeRDETH }

// CanDecode returns LayerTypeRDETH.
func (h *RDETH) CanDecode() gopacket.LayerClass { return LayerTypeRDETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *RDETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extRDETH) }

// DecodeFromBytes decodes an RDETH.
func (h *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extRDETH
	b, err := h.take(data, df)
	if err == nil {
		h.EECnxt = binary.BigEndian.Uint32(b) & 0xFFFFFF
	}
	return err
}

// SerializeTo prepends the RDETH.
func (h *RDETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extRDETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.EECnxt&0xFFFFFF)
	}
	return err
}

// rdethFields: "rdeth": {ee_cnxt}.
var rdethFields = headerFields{
	order: 70,
	has:   HasRDETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"rdeth":{"ee_cnxt":`...)
		dst = strconv.AppendUint(dst, uint64(f.RDETH.EECnxt), 10)
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasRDETH, Columns: []Column{
		{"rdeth_ee_cnxt", ColumnUint32, "RDETH EE context"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.RDETH.EECnxt) }}},
}

func init() { registerFields(&rdethFields) }
