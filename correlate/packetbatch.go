package correlate

import (
	"fmt"
	"net/netip"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/decode"
)

// addrDict is how the address columns (src, dst, sgid, dgid) travel from the
// builder to the writers: int32 indices into the batch's distinct addresses.
// Parquet stores them as its dictionary page and indices without hashing a
// string per row; the Arrow IPC writer turns them back into strings. The
// files' schema says string either way (see isDictOf).
var addrDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// addrColumns are the columns that travel as addrDict: the headers'
// addresses (decode.ColumnAddr). Built on first use, as dicts.
var addrColumns = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, g := range decode.ColumnGroups() {
		for _, c := range g.Columns {
			if c.Type == decode.ColumnAddr || c.Type == decode.ColumnMAC {
				m[c.Name] = true
			}
		}
	}
	return m
})

// batchSchema is the schema of the record batches the builder makes for
// files of the given schema: the address columns as addrDict.
func batchSchema(file *arrow.Schema) *arrow.Schema {
	fields := file.Fields()
	for i, f := range fields {
		if addrColumns()[f.Name] {
			fields[i].Type = addrDict
		}
	}
	md := file.Metadata()
	return arrow.NewSchema(fields, &md)
}

// bitmap is one Arrow bitmap of a batch: a validity bitmap shared by the
// columns of one header (they are present or absent together), or the
// values of a boolean column. Bits start cleared.
type bitmap struct {
	bits  []byte
	nulls int // as a validity bitmap: rows left clear
}

func (m *bitmap) set(i int)                   { m.bits[i>>3] |= 1 << (i & 7) }
func (m *bitmap) put(i int, v bool)           { m.bits[i>>3] |= b2u8(v) << (i & 7) }
func (m *bitmap) buffer(n int) *memory.Buffer { return memory.NewBufferBytes(m.bits[:(n+7)/8]) }

func b2u8(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// addrCol is one address column of a batch: an index per row into the
// batch's distinct addresses, IP addresses and GIDs (netip.Addr) or MAC
// addresses (decode.ColumnMAC: 48 bits in a uint64).
type addrCol[K comparable] struct {
	idx   []int32
	addrs []K
	index map[K]int32
	// The last few addresses looked up: a capture's packets come from a
	// handful of hosts, and a map lookup is a good part of a row's cost.
	recent    [4]K
	recentIdx [4]int32
	recentN   int
	next      int
	text      func(dst []byte, a K) []byte
}

func newAddrCol[K comparable](n int, text func([]byte, K) []byte) *addrCol[K] {
	return &addrCol[K]{idx: make([]int32, n), index: make(map[K]int32), text: text}
}

func (c *addrCol[K]) put(i int, a K) {
	for k := range c.recentN {
		if c.recent[k] == a {
			c.idx[i] = c.recentIdx[k]
			return
		}
	}
	x, ok := c.index[a]
	if !ok {
		x = int32(len(c.addrs))
		c.addrs = append(c.addrs, a)
		c.index[a] = x
	}
	k := c.next
	c.next = (c.next + 1) % len(c.recent)
	c.recentN = max(c.recentN, k+1)
	c.recent[k], c.recentIdx[k] = a, x
	c.idx[i] = x
}

func (c *addrCol[K]) reset() {
	c.addrs = c.addrs[:0]
	clear(c.index)
	c.recentN, c.next = 0, 0
}

// array makes the column's Arrow array for n rows with validity v.
func (c *addrCol[K]) array(n int, v *bitmap) arrow.Array {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.Reserve(len(c.addrs))
	var text []byte
	for _, a := range c.addrs {
		text = c.text(text[:0], a)
		sb.BinaryBuilder.Append(text)
	}
	dict := sb.NewArray()
	defer dict.Release()
	idx := array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{v.buffer(n), memory.NewBufferBytes(arrow.GetBytes(c.idx[:n]))}, nil, v.nulls, 0)
	defer idx.Release()
	d := array.NewDataWithDictionary(addrDict, n, idx.Buffers(), v.nulls, 0, dict.Data().(*array.Data))
	defer d.Release()
	return array.MakeFromData(d)
}

func appendIP(dst []byte, a netip.Addr) []byte { return a.AppendTo(dst) }

// packetBatch holds up to BatchRows rows of the per-packet table as plain
// slices, filled by add and reused from batch to batch: record wraps them,
// without copying, in a record batch that must be released (and, where it
// is written on another goroutine, written) before the batch is reset. The
// frame's own columns come first; then each decode.ColumnGroup's, whose
// values are written only in the rows that have the group (values under a
// null are zero: a group's are cleared at reset only when a row had it).
type packetBatch struct {
	n      int
	schema *arrow.Schema // of the records it makes (batchSchema)

	frame, ts      []int64
	length, capLen []uint32

	iface  []int8
	ifaceV bitmap

	direction []uint8 // index into dicts().direction
	dirV      bitmap

	file  []int32     // index into files
	files arrow.Array // the export's file names (fixed)

	transport []uint8 // index into dicts().transport
	trV       bitmap

	groups []columnGroup
	// vals receive the frame's values, group by group: slot s holds those
	// of the s-th group of its plan (the dynamic groups' go to slot 0).
	vals []decode.ColumnValues
	// byHas caches the plans for the last few Has values seen: the groups a
	// frame with it may have (decode.ColumnGroup.PresentWith): asking each
	// of the 35 groups of each frame was a fifth of the rows' cost.
	byHas     [8]hasPlan
	byHasN    int
	byHasNext int

	errOffsets []int32
	errData    []byte
	errV       bitmap
}

// columnGroup is the batch's columns of one decode.ColumnGroup, present or
// null together.
type columnGroup struct {
	*decode.ColumnGroup
	valid bitmap // its nulls are counted from rows when the record is made
	rows  int    // rows of the batch that have the group
	cols  []column
	put   groupPut // its columns, values in slot 0: how a dynamic group's row is added
}

// groupPut is columns of one or more groups sorted by type, so that a row's
// values go in with one tight loop per type rather than a switch per column
// (which was a third of a row's cost). The slices are the columns' own.
type groupPut struct {
	u8    []putNum[uint8] // and ColumnOpcodeName's
	u16   []putNum[uint16]
	u32   []putNum[uint32]
	u64   []putNum[uint64]
	bools []putBool
	addrs []putAddr[netip.Addr]
	macs  []putAddr[uint64]
	slots int // of values the numbers are in
}

// putNum is one numeric column: its values, and where a row's value is
// among the slots of values (valueAt).
type putNum[T uint8 | uint16 | uint32 | uint64] struct {
	vals []T
	at   uintptr
}

type putBool struct {
	bits *bitmap
	at   uintptr
}

// valueAt is where number k of slot s is in a []decode.ColumnValues: its
// offset in bytes from the first slot. row reads the numbers through it,
// one addition a value instead of two bounds checks and a multiplication
// (a fifth of the row's instructions).
func valueAt(s, k int) uintptr {
	var v decode.ColumnValues
	return uintptr(s)*unsafe.Sizeof(v) + unsafe.Offsetof(v.Num) + uintptr(k)*unsafe.Sizeof(v.Num[0])
}

type putAddr[K comparable] struct {
	col  *addrCol[K]
	s, k int
}

// add sorts cols, whose values will be in slot s, by type.
func (p *groupPut) add(cols []column, s int) {
	p.slots = max(p.slots, s+1)
	for k := range cols {
		c := &cols[k]
		switch c.typ {
		case decode.ColumnUint8, decode.ColumnOpcodeName:
			p.u8 = append(p.u8, putNum[uint8]{c.u8, valueAt(s, k)})
		case decode.ColumnUint16:
			p.u16 = append(p.u16, putNum[uint16]{c.u16, valueAt(s, k)})
		case decode.ColumnUint32:
			p.u32 = append(p.u32, putNum[uint32]{c.u32, valueAt(s, k)})
		case decode.ColumnUint64:
			p.u64 = append(p.u64, putNum[uint64]{c.u64, valueAt(s, k)})
		case decode.ColumnBool:
			p.bools = append(p.bools, putBool{&c.bits, valueAt(s, k)})
		case decode.ColumnAddr:
			p.addrs = append(p.addrs, putAddr[netip.Addr]{c.addr, s, k})
		case decode.ColumnMAC:
			p.macs = append(p.macs, putAddr[uint64]{c.mac, s, k})
		}
	}
}

// reset empties p, keeping its memory.
func (p *groupPut) reset() {
	p.u8, p.u16, p.u32, p.u64 = p.u8[:0], p.u16[:0], p.u32[:0], p.u64[:0]
	p.bools, p.addrs, p.macs = p.bools[:0], p.addrs[:0], p.macs[:0]
	p.slots = 0
}

// row puts row i's values v.
func (p *groupPut) row(i int, v []decode.ColumnValues) {
	if len(v) < p.slots {
		panic(fmt.Sprintf("packet batch: %d slots of values for %d groups", len(v), p.slots))
	}
	base := unsafe.Pointer(unsafe.SliceData(v))
	num := func(at uintptr) uint64 { return *(*uint64)(unsafe.Add(base, at)) }
	for _, c := range p.u8 {
		c.vals[i] = uint8(num(c.at))
	}
	for _, c := range p.u16 {
		c.vals[i] = uint16(num(c.at))
	}
	for _, c := range p.u32 {
		c.vals[i] = uint32(num(c.at))
	}
	for _, c := range p.u64 {
		c.vals[i] = num(c.at)
	}
	for _, c := range p.bools {
		c.bits.put(i, num(c.at) != 0)
	}
	for _, c := range p.addrs {
		c.col.put(i, v[c.s].Addr[c.k])
	}
	for _, c := range p.macs {
		c.col.put(i, v[c.s].Num[c.k])
	}
}

// hasPlan is how the rows of frames whose Has is has are added: the groups
// (indices into packetBatch.groups) such a frame has, whatever its other
// fields (fixed), with all their columns in one groupPut, their values in
// slots 0, 1, ... in that order; and the groups it may have (dynamic),
// added each on its own.
type hasPlan struct {
	has     decode.Has
	fixed   []int
	put     groupPut
	dynamic []int
}

// column holds one header column's values, in the slice of its type.
type column struct {
	typ  decode.ColumnType
	u8   []uint8 // ColumnUint8, and ColumnOpcodeName's index into dicts().opcode
	u16  []uint16
	u32  []uint32
	u64  []uint64
	bits bitmap               // ColumnBool
	addr *addrCol[netip.Addr] // ColumnAddr
	mac  *addrCol[uint64]     // ColumnMAC
}

// clear zeroes the first n rows' values.
func (c *column) clear(n int) {
	switch c.typ {
	case decode.ColumnUint8, decode.ColumnOpcodeName:
		clear(c.u8[:n])
	case decode.ColumnUint16:
		clear(c.u16[:n])
	case decode.ColumnUint32:
		clear(c.u32[:n])
	case decode.ColumnUint64:
		clear(c.u64[:n])
	case decode.ColumnAddr:
		clear(c.addr.idx[:n])
	case decode.ColumnMAC:
		clear(c.mac.idx[:n])
	}
}

// array makes the column's Arrow array for n rows with validity v.
func (c *column) array(n int, v *bitmap) arrow.Array {
	switch c.typ {
	case decode.ColumnUint8:
		return fixed(arrow.PrimitiveTypes.Uint8, c.u8, n, v)
	case decode.ColumnOpcodeName:
		return dict(c.u8, n, v, dicts().opcode)
	case decode.ColumnUint16:
		return fixed(arrow.PrimitiveTypes.Uint16, c.u16, n, v)
	case decode.ColumnUint32:
		return fixed(arrow.PrimitiveTypes.Uint32, c.u32, n, v)
	case decode.ColumnUint64:
		return fixed(arrow.PrimitiveTypes.Uint64, c.u64, n, v)
	case decode.ColumnBool:
		return bools(&c.bits, v, n)
	case decode.ColumnMAC:
		return c.mac.array(n, v)
	}
	return c.addr.array(n, v)
}

// bitmaps lists every bitmap of the batch, for reset.
func (b *packetBatch) bitmaps() []*bitmap {
	ms := []*bitmap{&b.ifaceV, &b.dirV, &b.trV, &b.errV}
	for gi := range b.groups {
		g := &b.groups[gi]
		ms = append(ms, &g.valid)
		for ci := range g.cols {
			if g.cols[ci].typ == decode.ColumnBool {
				ms = append(ms, &g.cols[ci].bits)
			}
		}
	}
	return ms
}

func newPacketBatch(schema *arrow.Schema, files arrow.Array) *packetBatch {
	const n = BatchRows
	b := &packetBatch{schema: schema, files: files}
	b.frame, b.ts, b.length, b.capLen = make([]int64, n), make([]int64, n), make([]uint32, n), make([]uint32, n)
	b.iface, b.direction, b.file = make([]int8, n), make([]uint8, n), make([]int32, n)
	b.transport = make([]uint8, n)
	for _, g := range decode.ColumnGroups() {
		cg := columnGroup{ColumnGroup: g}
		for _, c := range g.Columns {
			col := column{typ: c.Type}
			switch c.Type {
			case decode.ColumnUint8, decode.ColumnOpcodeName:
				col.u8 = make([]uint8, n)
			case decode.ColumnUint16:
				col.u16 = make([]uint16, n)
			case decode.ColumnUint32:
				col.u32 = make([]uint32, n)
			case decode.ColumnUint64:
				col.u64 = make([]uint64, n)
			case decode.ColumnAddr:
				col.addr = newAddrCol(n, appendIP)
			case decode.ColumnMAC:
				col.mac = newAddrCol(n, decode.AppendMAC)
			}
			cg.cols = append(cg.cols, col)
		}
		cg.put.add(cg.cols, 0)
		b.groups = append(b.groups, cg)
	}
	b.vals = make([]decode.ColumnValues, len(b.groups))
	b.errOffsets = make([]int32, 1, n+1)
	for _, m := range b.bitmaps() {
		m.bits = make([]byte, (n+7)/8)
	}
	return b
}

// reset empties the batch for reuse.
func (b *packetBatch) reset() {
	for _, m := range b.bitmaps() {
		clear(m.bits[:(b.n+7)/8])
		m.nulls = 0
	}
	for gi := range b.groups {
		g := &b.groups[gi]
		for ci := range g.cols {
			if c := &g.cols[ci]; c.addr != nil {
				c.addr.reset()
			} else if c.mac != nil {
				c.mac.reset()
			}
			if g.rows > 0 {
				g.cols[ci].clear(b.n)
			}
		}
		g.rows = 0
	}
	b.errOffsets, b.errData = b.errOffsets[:1], b.errData[:0]
	b.n = 0
}

// add appends one frame of file number file, which went in direction way;
// errMsg is why it could not be decoded ("" if it was). Field validity
// follows f.Has, so a frame that failed half-way keeps the headers decoded
// before the problem.
func (b *packetBatch) add(f *decode.Frame, file int, way dir, errMsg string) {
	i := b.n
	b.n++
	b.frame[i], b.ts[i], b.length[i], b.capLen[i] = int64(f.Number), f.TsNs, uint32(f.WireLen), uint32(f.CapLen)
	b.file[i] = int32(file)
	if f.Iface >= 0 {
		b.ifaceV.set(i)
		b.iface[i] = f.Iface
	} else {
		b.ifaceV.nulls++
		b.iface[i] = 0
	}
	if way == dirUnknown {
		b.dirV.nulls++
		b.direction[i] = 0
	} else {
		b.dirV.set(i)
		b.direction[i] = uint8(way)
	}
	if f.Transport == decode.TransportNone {
		b.transport[i] = 0
		b.trV.nulls++
	} else {
		b.transport[i] = uint8(f.Transport - decode.TransportIB)
		b.trV.set(i)
	}
	plan := b.planFor(f.Has)
	for s, gi := range plan.fixed {
		g := &b.groups[gi]
		g.valid.set(i)
		g.rows++
		g.Values(f, &b.vals[s])
	}
	if len(plan.fixed) > 0 {
		plan.put.row(i, b.vals)
	}
	for _, gi := range plan.dynamic {
		g := &b.groups[gi]
		if !g.Present(f) {
			continue
		}
		g.valid.set(i)
		g.rows++
		g.Values(f, &b.vals[0])
		g.put.row(i, b.vals)
	}
	if errMsg == "" {
		b.errV.nulls++
	} else {
		b.errV.set(i)
		b.errData = append(b.errData, errMsg...)
	}
	b.errOffsets = append(b.errOffsets, int32(len(b.errData)))
}

// planFor returns the plan for frames whose Has is h, from the cache or
// made and cached (the oldest entry goes).
func (b *packetBatch) planFor(h decode.Has) *hasPlan {
	for k := range b.byHasN {
		if b.byHas[k].has == h {
			return &b.byHas[k]
		}
	}
	k := b.byHasNext
	b.byHasNext = (k + 1) % len(b.byHas)
	b.byHasN = max(b.byHasN, k+1)
	e := &b.byHas[k]
	e.has, e.fixed, e.dynamic = h, e.fixed[:0], e.dynamic[:0]
	e.put.reset()
	for gi := range b.groups {
		g := &b.groups[gi]
		switch {
		case !g.PresentWith(h):
		case g.Dynamic():
			e.dynamic = append(e.dynamic, gi)
		default:
			e.put.add(g.cols, len(e.fixed))
			e.fixed = append(e.fixed, gi)
		}
	}
	return e
}

// fixed wraps the first n values of vals, with validity v (nil for a column
// without nulls), in an Arrow array of type t, without copying.
func fixed[T arrow.FixedWidthType](t arrow.DataType, vals []T, n int, v *bitmap) arrow.Array {
	var valid *memory.Buffer
	nulls := 0
	if v != nil {
		valid, nulls = v.buffer(n), v.nulls
	}
	d := array.NewData(t, n, []*memory.Buffer{valid, memory.NewBufferBytes(arrow.GetBytes(vals[:n]))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// bools wraps the first n bits of vals with validity v.
func bools(vals, v *bitmap, n int) arrow.Array {
	d := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{v.buffer(n), vals.buffer(n)}, nil, v.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// dict wraps the first n indices of idx, with validity v, as a column of
// the fixed dictionary d.
func dict(idx []uint8, n int, v *bitmap, d arrow.Array) arrow.Array {
	ia := fixed(arrow.PrimitiveTypes.Uint8, idx, n, v)
	defer ia.Release()
	return array.NewDictionaryArray(dictString, ia, d)
}

// record returns the batch's rows as a record batch of b.schema that
// shares the batch's memory: release it before the batch is reset.
func (b *packetBatch) record() arrow.RecordBatch {
	n := b.n
	u32 := arrow.PrimitiveTypes.Uint32
	cols := []arrow.Array{
		fixed(arrow.PrimitiveTypes.Int64, b.frame, n, nil),
		fixed(timestampNs, b.ts, n, nil),
		fixed(u32, b.length, n, nil),
		fixed(u32, b.capLen, n, nil),
		fixed(arrow.PrimitiveTypes.Int8, b.iface, n, &b.ifaceV),
		dict(b.direction, n, &b.dirV, dicts().direction),
		b.fileColumn(n),
		dict(b.transport, n, &b.trV, dicts().transport),
	}
	for gi := range b.groups {
		g := &b.groups[gi]
		g.valid.nulls = n - g.rows
		for ci := range g.cols {
			cols = append(cols, g.cols[ci].array(n, &g.valid))
		}
	}
	cols = append(cols, b.errors(n))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return array.NewRecordBatch(b.schema, cols, int64(n))
}

// fileColumn makes the file column: indices into the export's file names.
func (b *packetBatch) fileColumn(n int) arrow.Array {
	idx := array.NewData(arrow.PrimitiveTypes.Int32, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(b.file[:n]))}, nil, 0, 0)
	defer idx.Release()
	d := array.NewDataWithDictionary(fileDict, n, idx.Buffers(), 0, 0, b.files.Data().(*array.Data))
	defer d.Release()
	return array.MakeFromData(d)
}

func (b *packetBatch) errors(n int) arrow.Array {
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{b.errV.buffer(n),
		memory.NewBufferBytes(arrow.GetBytes(b.errOffsets[:n+1])), memory.NewBufferBytes(b.errData)}, nil, b.errV.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// batchPool recycles packet batches once the records made from them have
// been written.
type batchPool struct {
	mu     sync.Mutex
	free   []*packetBatch
	schema *arrow.Schema
	files  arrow.Array // the export's file names, for the file column
}

func (p *batchPool) get() *packetBatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return newPacketBatch(p.schema, p.files)
}

func (p *batchPool) put(b *packetBatch) {
	b.reset()
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

// denseStrings turns a dictionary array of strings into a string array.
func denseStrings(c arrow.Array) (arrow.Array, error) {
	d, ok := c.(*array.Dictionary)
	if !ok {
		return nil, fmt.Errorf("%s is not a dictionary", c.DataType())
	}
	vals, ok := d.Dictionary().(*array.String)
	if !ok {
		return nil, fmt.Errorf("dictionary of %s, want strings", d.Dictionary().DataType())
	}
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.Reserve(d.Len())
	for i := range d.Len() {
		if d.IsNull(i) {
			sb.AppendNull()
			continue
		}
		sb.Append(vals.Value(d.GetValueIndex(i)))
	}
	return sb.NewArray(), nil
}
