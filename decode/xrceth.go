package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// XRCETH is the XRC Extended Transport Header (4 bytes), in XRC requests.
type XRCETH struct {
	extBase
	XRCSRQ uint32 // XRC shared receive queue number, 24 bits
}

// extXRCETH is the XRCETH's kind.
const extXRCETH ext = 3

// LayerTypeXRCETH is the XRCETH's gopacket layer type.
var LayerTypeXRCETH = registerExt(extXRCETH, extHeader{name: "XRCETH", layer: 1505, len: 4, has: HasXRCETH,
	new: func(b extBase) extLayer { return &XRCETH{extBase: b} }})

// LayerType returns LayerTypeXRCETH.
func (h *XRCETH) LayerType() gopacket.LayerType { return LayerTypeXRCETH }

// CanDecode returns LayerTypeXRCETH.
func (h *XRCETH) CanDecode() gopacket.LayerClass { return LayerTypeXRCETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *XRCETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extXRCETH) }

// DecodeFromBytes decodes an XRCETH.
func (h *XRCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extXRCETH
	b, err := h.take(data, df)
	if err == nil {
		h.XRCSRQ = binary.BigEndian.Uint32(b) & 0xFFFFFF
	}
	return err
}

// SerializeTo prepends the XRCETH.
func (h *XRCETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extXRCETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint32(b, h.XRCSRQ&0xFFFFFF)
	}
	return err
}

// xrcethFields: "xrceth": {xrc_srq}.
var xrcethFields = headerFields{
	order: 80,
	has:   HasXRCETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"xrceth":{"xrc_srq":`...)
		dst = strconv.AppendUint(dst, uint64(f.XRCETH.XRCSRQ), 10)
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasXRCETH, Columns: []Column{
		{"xrceth_xrc_srq", ColumnUint32, "XRCETH XRC SRQ"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = uint64(f.XRCETH.XRCSRQ) }}},
}

func init() { registerFields(&xrcethFields) }
