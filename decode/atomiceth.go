package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// AtomicETH is the Atomic Extended Transport Header (28 bytes) of COMPARE_SWAP
// and FETCH_ADD.
type AtomicETH struct {
	extBase
	VA      uint64
	RKey    uint32
	SwapAdd uint64 // swap data (COMPARE_SWAP) or add data (FETCH_ADD)
	Compare uint64 // compare data
}

// extAtomicETH is the AtomicETH's kind.
const extAtomicETH ext = 5

// LayerTypeAtomicETH is the AtomicETH's gopacket layer type.
var LayerTypeAtomicETH = registerExt(extAtomicETH, extHeader{name: "AtomicETH", layer: 1507, len: 28, has: HasAtomicETH,
	new: func(b extBase) extLayer { return &AtomicETH{extBase: b} }})

// LayerType returns LayerTypeAtomicETH.
func (h *AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// CanDecode returns LayerTypeAtomicETH.
func (h *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// NextLayerType returns the next header of Op's chain, or the payload.
func (h *AtomicETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extAtomicETH) }

// DecodeFromBytes decodes an AtomicETH.
func (h *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extAtomicETH
	b, err := h.take(data, df)
	if err == nil {
		h.VA = binary.BigEndian.Uint64(b)
		h.RKey = binary.BigEndian.Uint32(b[8:])
		h.SwapAdd = binary.BigEndian.Uint64(b[12:])
		h.Compare = binary.BigEndian.Uint64(b[20:])
	}
	return err
}

// SerializeTo prepends the AtomicETH.
func (h *AtomicETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extAtomicETH
	b, err := h.put(sb)
	if err == nil {
		binary.BigEndian.PutUint64(b, h.VA)
		binary.BigEndian.PutUint32(b[8:], h.RKey)
		binary.BigEndian.PutUint64(b[12:], h.SwapAdd)
		binary.BigEndian.PutUint64(b[20:], h.Compare)
	}
	return err
}

// atomicETHFields: "atomic_eth": {va, rkey, swap_add, compare}.
var atomicETHFields = headerFields{
	order: 130,
	has:   HasAtomicETH,
	json: func(dst []byte, f *Frame) []byte {
		a := &f.AtomicETH
		dst = append(dst, `,"atomic_eth":{"va":`...)
		dst = strconv.AppendUint(dst, a.VA, 10)
		dst = appendInt(dst, "rkey", int64(a.RKey))
		dst = append(dst, `,"swap_add":`...)
		dst = strconv.AppendUint(dst, a.SwapAdd, 10)
		dst = append(dst, `,"compare":`...)
		dst = strconv.AppendUint(dst, a.Compare, 10)
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasAtomicETH, Columns: []Column{
		{"atomic_eth_va", ColumnUint64, "AtomicETH virtual address"},
		{"atomic_eth_rkey", ColumnUint32, "AtomicETH remote key"},
		{"atomic_eth_swap_add", ColumnUint64, "AtomicETH swap or add data"},
		{"atomic_eth_compare", ColumnUint64, "AtomicETH compare data"},
	}, values: func(f *Frame, v *ColumnValues) {
		a := &f.AtomicETH
		v.Num[0], v.Num[1], v.Num[2], v.Num[3] = a.VA, uint64(a.RKey), a.SwapAdd, a.Compare
	}}},
}

func init() { registerFields(&atomicETHFields) }
