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
