package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
)

// RETHLen is the RETH's size in bytes.
const RETHLen = 16

// RETH is the RDMA Extended Transport Header (16 bytes): where an RDMA WRITE
// or READ goes.
type RETH struct {
	extBase
	VA     uint64 // virtual address
	RKey   uint32
	DMALen uint32 // bytes of the whole RDMA operation
}

// extRETH is the RETH's kind.
const extRETH ext = 4

// LayerTypeRETH is the RETH's gopacket layer type.
var LayerTypeRETH = registerExt(extRETH, extHeader{name: "RETH", layer: 1506, len: RETHLen, has: HasRETH,
	new: func(b extBase) extLayer { return &RETH{extBase: b} }})

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

// rethFields: "reth": {va, rkey, dma_len}.
var rethFields = headerFields{
	order: 100,
	has:   HasRETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"reth":{"va":`...)
		dst = strconv.AppendUint(dst, f.RETH.VA, 10)
		dst = appendInt(dst, "rkey", int64(f.RETH.RKey))
		dst = appendInt(dst, "dma_len", int64(f.RETH.DMALen))
		return append(dst, '}')
	},
	columns: []ColumnGroup{{any: HasRETH, Columns: []Column{
		{"reth_va", ColumnUint64, "RETH virtual address"},
		{"reth_rkey", ColumnUint32, "RETH remote key"},
		{"reth_dma_len", ColumnUint32, "RETH DMA length, bytes"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1], v.Num[2] = f.RETH.VA, uint64(f.RETH.RKey), uint64(f.RETH.DMALen)
	}}},
}

func init() { registerFields(&rethFields) }
