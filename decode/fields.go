package decode

import (
	"fmt"
	"net/netip"
	"slices"
)

// How each header shows in the three per-frame outputs: the decode JSON
// (Frame.AppendJSON), the summary line (Frame.AppendSummary) and the
// columns of the per-frame table ibanalyze export writes (ColumnGroups).
// Each header says it in its own file (lrhFields in lrh.go, ...), in one
// headerFields it registers (registerFields, from an init function) with its place among the
// others (order); fieldTable lists them in that order, which the JSON keys
// and the columns follow. A new header adds its headerFields beside its
// layer and nothing here.

// headerFields is one header's share of the per-frame outputs.
type headerFields struct {
	// order places the header's keys, words and columns among the others',
	// lowest first. The numbers go by tens (the Ethernet header's 10, the
	// LRH's 20, ..., the DC and MAD columns' 240, last, where export first
	// put them), so that a new header takes a free number between the two
	// it goes between, as the FETH took 90 between the XRCETH and the RETH.
	order int
	// has: the header is in the frame when it has one of these bits.
	has Has
	// json appends the header's keys, each as `,"key":value`, for a frame
	// that has it.
	json func(dst []byte, f *Frame) []byte
	// summary, when not nil, appends the header's words to the summary
	// line, in the part of the line role says; summaryHas, when not 0,
	// replaces has for it.
	summary    func(dst []byte, f *Frame) []byte
	role       summaryRole
	summaryHas Has
	// columns are the header's columns of the per-frame table, in groups
	// present together.
	columns []ColumnGroup
}

// summaryRole is the part of the summary line a header's words go in.
type summaryRole uint8

const (
	summaryNone      summaryRole = iota
	summaryAddresses             // who sent it: the first header present of these speaks
	summaryTransport             // what it is: every header present speaks
	summaryProbe                 // what it measures: the first header present speaks
)

// fieldTable is every header with a share in the per-frame outputs, in
// their order: the order of the JSON keys, of the summary's words and of
// the table's columns. It is whole once the package has initialized.
var fieldTable []*headerFields

// registerFields puts a header's headerFields in their place in
// fieldTable. Each header's file calls it from an init function, before
// anything can decode; an order given twice is a mistake in this package,
// caught as it initializes.
func registerFields(h *headerFields) {
	i := 0
	for i < len(fieldTable) && fieldTable[i].order < h.order {
		i++
	}
	if i < len(fieldTable) && fieldTable[i].order == h.order {
		panic(fmt.Sprintf("decode: two headers' fields have order %d", h.order))
	}
	fieldTable = slices.Insert(fieldTable, i, h)
}

// ColumnType is the type of a column of the per-frame table.
type ColumnType uint8

// Column types. A value travels as a uint64 (a boolean as 0 or 1), an
// address as a netip.Addr.
const (
	ColumnUint8 ColumnType = iota + 1
	ColumnUint16
	ColumnUint32
	ColumnUint64
	ColumnBool
	ColumnAddr       // an IP address or GID, written as text
	ColumnOpcodeName // a BTH opcode's name; the value is the opcode
	ColumnMAC        // a MAC address, its 48 bits as the value, written as text (AppendMAC)
)

// Column is one column of the per-frame table: named as the decode JSON's
// key, a nested object's keys prefixed with its name (reth {va} is
// reth_va), with what it holds and its unit.
type Column struct {
	Name string
	Type ColumnType
	Doc  string
}

// ColumnGroup is columns that are present (not null) together: one
// header's, or the part of a header that only some frames have.
type ColumnGroup struct {
	Columns []Column
	// The group is present when the frame has one of any (if not 0), all
	// of all and none of none, and, when set, when present says so.
	any, all, none Has
	present        func(f *Frame) bool
	values         func(f *Frame, v *ColumnValues)
}

// MaxGroupColumns is the most columns a group has.
const MaxGroupColumns = 12

// ColumnValues receive a frame's values of one group, in its columns' order.
type ColumnValues struct {
	Num  [MaxGroupColumns]uint64     // numbers; booleans as 0 or 1; a ColumnOpcodeName's opcode
	Addr [MaxGroupColumns]netip.Addr // ColumnAddr's
}

// Present reports whether frame f has the group's columns.
func (g *ColumnGroup) Present(f *Frame) bool {
	return g.PresentWith(f.Has) && (g.present == nil || g.present(f))
}

// PresentWith reports whether frames whose Has is h may have the group's
// columns: each of them has, unless the group is Dynamic, when Present
// decides frame by frame. Frames of a capture share a few Has values, so a
// table of rows can find its groups once for each (correlate's export).
func (g *ColumnGroup) PresentWith(h Has) bool {
	return (g.any == 0 || h&g.any != 0) && h&g.all == g.all && h&g.none == 0
}

// Dynamic reports whether a frame's having the group depends on more
// than its Has (the VLAN tags it holds, the CM message its MAD is).
func (g *ColumnGroup) Dynamic() bool { return g.present != nil }

// Values puts f's values into v; f must have the group (Present).
func (g *ColumnGroup) Values(f *Frame, v *ColumnValues) { g.values(f, v) }

// ColumnGroups returns the per-frame table's header columns in order: what
// follows the frame's own columns (number, time, lengths, transport) and
// precedes its error.
func ColumnGroups() []*ColumnGroup {
	var gs []*ColumnGroup
	for _, h := range fieldTable {
		for i := range h.columns {
			gs = append(gs, &h.columns[i])
		}
	}
	return gs
}

// b2u is a boolean column's value.
func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
