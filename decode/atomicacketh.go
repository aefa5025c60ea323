package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header (8 bytes).
type AtomicAckETH struct {
	extBase
	OrigRemData uint64 // the remote data before the atomic operation
}

// extAtomicAckETH is the AtomicAckETH's kind.
const extAtomicAckETH ext = 7

// LayerTypeAtomicAckETH is the AtomicAckETH's gopacket layer type.
var LayerTypeAtomicAckETH = registerExt(extAtomicAckETH, extHeader{name: "AtomicAckETH", layer: 1509, len: 8, has: HasAtomicAckETH,
	new: func(b extBase) extLayer { return &AtomicAckETH{extBase: b} }})

// LayerType returns LayerTypeAtomicAckETH.
func (h *AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// CanDecode returns LayerTypeAtomicAckETH.
func (h *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *AtomicAckETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extAtomicAckETH) }

// DecodeFromBytes decodes an AtomicAckETH.
func (h *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extAtomicAckETH
	b, err := h.take(data, df)
	if err == nil {
		h.OrigRemData = binary.BigEndian.Uint64(b)
	}
	return err
}

// SerializeTo prepends the AtomicAckETH.
func (h *AtomicAckETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extAtomicAckETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint64(b, h.OrigRemData)
	}
	return err
}

// atomicAckETHFields: "atomic_ack_eth": {orig_rem_data}.
var atomicAckETHFields = headerFields{
	order: 140,
	has:   HasAtomicAckETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"atomic_ack_eth":{"orig_rem_data":`...)
		dst = strconv.AppendUint(dst, f.AtomicAckETH.OrigRemData, 10)
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasAtomicAckETH, Columns: []Column{
		{"atomic_ack_eth_orig_rem_data", ColumnUint64, "AtomicAckETH original remote data"},
	}, values: func(f *Frame, v *ColumnValues) { v.Num[0] = f.AtomicAckETH.OrigRemData }}},
}

func init() { registerFields(&atomicAckETHFields) }
