package decode

import "github.com/gopacket/gopacket"

// CNPReserved is the 16 reserved bytes that follow the BTH of a RoCEv2
// congestion notification packet (opcode 0x81, RoCEv2 Annex A17). A CNP has
// DestQP set to the QP whose rate should drop, and FECN/BECN per the annex.
type CNPReserved struct {
	extBase
	Reserved [16]byte
}

// extCNPPad is the CNP reserved block's kind.
const extCNPPad ext = 10

// LayerTypeCNPPad is the CNP reserved block's gopacket layer type.
var LayerTypeCNPPad = registerExt(extCNPPad, extHeader{name: "CNPReserved", layer: 1512, len: 16, has: HasCNP,
	new: func(b extBase) extLayer { return &CNPReserved{extBase: b} }})

// LayerType returns LayerTypeCNPPad.
func (h *CNPReserved) LayerType() gopacket.LayerType { return LayerTypeCNPPad }

// CanDecode returns LayerTypeCNPPad.
func (h *CNPReserved) CanDecode() gopacket.LayerClass { return LayerTypeCNPPad }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *CNPReserved) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extCNPPad) }

// DecodeFromBytes decodes the reserved block.
func (h *CNPReserved) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extCNPPad
	b, err := h.take(data, df)
	if err == nil {
		copy(h.Reserved[:], b)
	}
	return err
}

// SerializeTo prepends the reserved block.
func (h *CNPReserved) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extCNPPad
	b, err := h.put(sb)
	if err == nil {
		copy(b, h.Reserved[:])
	}
	return err
}
