package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
)

// RETH is the RDMA Extended Transport Header (16 bytes): where an RDMA WRITE
// or READ goes.
type RETH struct {
	extBase
	VA     uint64 // virtual address
	RKey   uint32
	DMALen uint32 // bytes of the whole RDMA operation
}

// LayerType returns LayerTypeRETH.
func (h *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (h *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *RETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extRETH) }

// DecodeFromBytes decodes a RETH.
func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extRETH
	b, err := h.take(data, df)
	if err == nil {
		h.VA = binary.BigEndian.Uint64(b)
		h.RKey = binary.BigEndian.Uint32(b[8:])
		h.DMALen = binary.BigEndian.Uint32(b[12:])
	}
	return err
}

// SerializeTo prepends the RETH.
func (h *RETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extRETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint64(b, h.VA)
		binary.BigEndian.PutUint32(b[8:], h.RKey)
		binary.BigEndian.PutUint32(b[12:], h.DMALen)
	}
	return err
}
