package decode

import (
	"strconv"

	"github.com/gopacket/gopacket"
)

// FETH is the FLUSH Extended Transport Header (4 bytes) of IBA 1.5's RC
// FLUSH (opcode 0x1C, a BTH, the FETH and a RETH, no payload; the
// responder answers with an RDMA READ response without data once what the
// FLUSH names is placed). Of its 32 bits only the low 6 are defined; the
// rest are reserved and not kept.
type FETH struct {
	extBase
	// Selectivity (bits 5-4) is what the FLUSH covers: FlushRange, the
	// RETH's range, or FlushRegion, every update to the RETH's R_Key
	// (VA and DMA length ignored); 2 and 3 are reserved.
	Selectivity uint8
	// Placement (bits 3-0) is what the FLUSH guarantees, as bits:
	// FlushVisibility (global visibility) and FlushPersistence; bits 2-3
	// are reserved.
	Placement uint8
}

// FETH selectivity levels and placement type bits.
const (
	FlushRange       = 0
	FlushRegion      = 1
	FlushVisibility  = 1 << 0
	FlushPersistence = 1 << 1
)

// FETHLen is the FETH's size in bytes.
const FETHLen = 4

// extFETH is the FETH's kind.
const extFETH ext = 13

// LayerTypeFETH is the FETH's gopacket layer type.
var LayerTypeFETH = registerExt(extFETH, extHeader{name: "FETH", layer: 1523, len: FETHLen, has: HasFETH,
	new: func(b extBase) extLayer { return &FETH{extBase: b} }})

// LayerType returns LayerTypeFETH.
func (h *FETH) LayerType() gopacket.LayerType { return LayerTypeFETH }

// CanDecode returns LayerTypeFETH.
func (h *FETH) CanDecode() gopacket.LayerClass { return LayerTypeFETH }

// NextLayerType returns the next header of Op's chain (the RETH).
func (h *FETH) NextLayerType() gopacket.LayerType { return nextAfter(h.Op, extFETH) }

// DecodeFromBytes decodes a FETH.
func (h *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.kind = extFETH
	b, err := h.take(data, df)
	if err == nil {
		h.Selectivity, h.Placement = b[3]>>4&3, b[3]&0xF
	}
	return err
}

// SerializeTo prepends the FETH, its reserved bits zero.
func (h *FETH) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	h.kind = extFETH
	b, err := h.put(sb)
	if err == nil {
		b[0], b[1], b[2], b[3] = 0, 0, 0, h.Selectivity&3<<4|h.Placement&0xF
	}
	return err
}

// appendSummary appends the FLUSH's words after its opcode's: what it
// guarantees and what it covers, e.g. " persistence range".
func (h *FETH) appendSummary(dst []byte) []byte {
	switch h.Placement {
	case FlushVisibility:
		dst = append(dst, " visibility"...)
	case FlushPersistence:
		dst = append(dst, " persistence"...)
	case FlushVisibility | FlushPersistence:
		dst = append(dst, " visibility+persistence"...)
	default: // none, or reserved bits
		dst = strconv.AppendUint(append(dst, " placement 0x"...), uint64(h.Placement), 16)
	}
	switch h.Selectivity {
	case FlushRange:
		return append(dst, " range"...)
	case FlushRegion:
		return append(dst, " region"...)
	}
	return strconv.AppendUint(append(dst, " selectivity "...), uint64(h.Selectivity), 10)
}

// fethFields: "feth": {selectivity, placement}; in the summary, the FLUSH's
// words after the BTH's.
var fethFields = headerFields{
	order: 90,
	has:   HasFETH,
	json: func(dst []byte, f *Frame) []byte {
		dst = append(dst, `,"feth":{"selectivity":`...)
		dst = strconv.AppendUint(dst, uint64(f.FETH.Selectivity), 10)
		dst = appendInt(dst, "placement", int64(f.FETH.Placement))
		return append(dst, '}')
	},
	role:    summaryTransport,
	summary: func(dst []byte, f *Frame) []byte { return f.FETH.appendSummary(dst) },
	columns: []ColumnGroup{{any: HasFETH, Columns: []Column{
		{"feth_selectivity", ColumnUint8, "FETH selectivity level: 0 the RETH's range, 1 its memory region"},
		{"feth_placement", ColumnUint8, "FETH placement type bits: 1 global visibility, 2 persistence"},
	}, values: func(f *Frame, v *ColumnValues) {
		v.Num[0], v.Num[1] = uint64(f.FETH.Selectivity), uint64(f.FETH.Placement)
	}}},
}

func init() { registerFields(&fethFields) }
