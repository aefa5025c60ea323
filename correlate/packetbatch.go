package correlate

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/decode"
)

// addrDict is how the address columns (src, dst, sgid, dgid, cm_*_ip) travel from the
// builder to the writers: int32 indices into the batch's distinct addresses.
// Parquet stores them as its dictionary page and indices without hashing a
// string per row; the Arrow IPC writer turns them back into strings. The
// files' schema says string either way (see isDictOf).
var addrDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// addrColumns are the columns that travel as addrDict.
var addrColumns = map[string]bool{"src": true, "dst": true, "sgid": true, "dgid": true, "cm_src_ip": true, "cm_dst_ip": true}

// batchSchema is the schema of the record batches the builder makes for
// files of the given schema: the address columns as addrDict.
func batchSchema(file *arrow.Schema) *arrow.Schema {
	fields := file.Fields()
	for i, f := range fields {
		if addrColumns[f.Name] {
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
// batch's distinct addresses.
type addrCol struct {
	idx   []int32
	addrs []netip.Addr
	index map[netip.Addr]int32
	// The last few addresses looked up: a capture's packets come from a
	// handful of hosts, and a map lookup is a good part of a row's cost.
	recent    [4]netip.Addr
	recentIdx [4]int32
	recentN   int
	next      int
}

func (c *addrCol) put(i int, a netip.Addr) {
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

func (c *addrCol) reset() {
	c.addrs = c.addrs[:0]
	clear(c.index)
	c.recentN, c.next = 0, 0
}

// array makes the column's Arrow array for n rows with validity v.
func (c *addrCol) array(n int, v *bitmap) arrow.Array {
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.Reserve(len(c.addrs))
	var text []byte
	for _, a := range c.addrs {
		text = a.AppendTo(text[:0])
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

// packetBatch holds up to BatchRows rows of the per-packet table as plain
// slices, filled by add with no per-value calls and reused from batch to
// batch: record wraps them, without copying, in a record batch that must be
// released (and, where it is written on another goroutine, written) before
// the batch is reset.
type packetBatch struct {
	n      int
	schema *arrow.Schema // of the records it makes (batchSchema)

	frame, ts      []int64
	length, capLen []uint32

	iface  []int8
	ifaceV bitmap

	direction []uint8 // index into directionDict
	dirV      bitmap

	file  []int32     // index into files
	files arrow.Array // the export's file names (fixed)

	transport []uint8 // index into transportDict
	trV       bitmap

	slid, dlid []uint16
	sl, vl     []uint8
	lrhV       bitmap

	src, dst addrCol
	ecn      []uint8
	ipV      bitmap

	sgid, dgid addrCol
	grhV       bitmap

	opcode                        []uint8 // also the index into opcodeDict
	destQP, psn                   []uint32
	ackReq, fecn, becn, solicited bitmap
	pkey                          []uint16
	pad                           []uint8
	bthV                          bitmap

	rdethEECnxt []uint32
	rdethV      bitmap
	xrcSRQ      []uint32
	xrcV        bitmap

	rethVA               []uint64
	rethRKey, rethDMALen []uint32
	rethV                bitmap

	aethSyndrome []uint8
	aethMSN      []uint32
	aethV        bitmap

	dethQKey, dethSrcQP []uint32
	dethV               bitmap

	atomicVA, atomicSwapAdd, atomicCompare []uint64
	atomicRKey                             []uint32
	atomicV                                bitmap

	atomicAckOrig []uint64
	atomicAckV    bitmap

	imm, ieth   []uint32
	immV, iethV bitmap

	icrcOK, icrcV bitmap
	vcrcOK, vcrcV bitmap

	linkOp, linkVL      []uint8
	linkFCTBS, linkFCCL []uint16
	linkV               bitmap
	lpcrcOK, lpcrcV     bitmap

	rare rareCols
	mad  madCols // madcols.go

	errOffsets []int32
	errData    []byte
	errV       bitmap
}

// bitmaps lists every bitmap of the batch, for reset.
func (b *packetBatch) bitmaps() []*bitmap {
	return append([]*bitmap{&b.ifaceV, &b.dirV, &b.trV, &b.lrhV, &b.ipV, &b.grhV, &b.ackReq, &b.fecn, &b.becn, &b.solicited, &b.bthV,
		&b.rdethV, &b.xrcV, &b.rethV, &b.aethV, &b.dethV, &b.atomicV, &b.atomicAckV, &b.immV, &b.iethV,
		&b.icrcOK, &b.icrcV, &b.vcrcOK, &b.vcrcV, &b.linkV, &b.lpcrcOK, &b.lpcrcV, &b.errV,
		&b.rare.pfcV, &b.rare.pauseV, &b.rare.ifaV, &b.rare.ifaMDV, &b.rare.ifa1V}, b.mad.bitmaps()...)
}

func newPacketBatch(schema *arrow.Schema, files arrow.Array) *packetBatch {
	const n = BatchRows
	b := &packetBatch{schema: schema, files: files}
	b.frame, b.ts, b.length, b.capLen = make([]int64, n), make([]int64, n), make([]uint32, n), make([]uint32, n)
	b.iface, b.direction, b.file = make([]int8, n), make([]uint8, n), make([]int32, n)
	b.transport = make([]uint8, n)
	b.slid, b.dlid, b.sl, b.vl = make([]uint16, n), make([]uint16, n), make([]uint8, n), make([]uint8, n)
	for _, c := range []*addrCol{&b.src, &b.dst, &b.sgid, &b.dgid} {
		c.idx = make([]int32, n)
		c.index = make(map[netip.Addr]int32)
	}
	b.ecn = make([]uint8, n)
	b.opcode, b.destQP, b.psn = make([]uint8, n), make([]uint32, n), make([]uint32, n)
	b.pkey, b.pad = make([]uint16, n), make([]uint8, n)
	b.rdethEECnxt, b.xrcSRQ = make([]uint32, n), make([]uint32, n)
	b.rethVA, b.rethRKey, b.rethDMALen = make([]uint64, n), make([]uint32, n), make([]uint32, n)
	b.aethSyndrome, b.aethMSN = make([]uint8, n), make([]uint32, n)
	b.dethQKey, b.dethSrcQP = make([]uint32, n), make([]uint32, n)
	b.atomicVA, b.atomicSwapAdd, b.atomicCompare = make([]uint64, n), make([]uint64, n), make([]uint64, n)
	b.atomicRKey, b.atomicAckOrig = make([]uint32, n), make([]uint64, n)
	b.imm, b.ieth = make([]uint32, n), make([]uint32, n)
	b.linkOp, b.linkVL, b.linkFCTBS, b.linkFCCL = make([]uint8, n), make([]uint8, n), make([]uint16, n), make([]uint16, n)
	b.rare.make(n)
	b.mad.make(n)
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
	for _, c := range []*addrCol{&b.src, &b.dst, &b.sgid, &b.dgid} {
		c.reset()
	}
	b.rare.reset(b.n)
	b.mad.reset(b.n)
	b.errOffsets, b.errData = b.errOffsets[:1], b.errData[:0]
	b.n = 0
}

// add appends one frame of file number file, which went in direction way;
// errMsg is why it could not be decoded ("" if it was). Field validity
// follows f.Has, so a frame that failed half-way keeps the headers decoded
// before the problem. Values under a null are zero.
func (b *packetBatch) add(f *decode.Frame, file int, way dir, errMsg string) {
	i := b.n
	b.n++
	h := f.Has
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

	if h&decode.HasLRH != 0 {
		b.lrhV.set(i)
		b.slid[i], b.dlid[i], b.sl[i], b.vl[i] = f.LRH.SLID, f.LRH.DLID, f.LRH.SL, f.LRH.VL
	} else {
		b.lrhV.nulls++
		b.slid[i], b.dlid[i], b.sl[i], b.vl[i] = 0, 0, 0, 0
	}

	if h&(decode.HasIPv4|decode.HasIPv6) != 0 {
		b.ipV.set(i)
		b.src.put(i, f.Src)
		b.dst.put(i, f.Dst)
		b.ecn[i] = f.ECN
	} else {
		b.ipV.nulls++
		b.src.idx[i], b.dst.idx[i], b.ecn[i] = 0, 0, 0
	}

	if h&decode.HasGRH != 0 {
		b.grhV.set(i)
		b.sgid.put(i, f.GRH.SrcGID())
		b.dgid.put(i, f.GRH.DstGID())
	} else {
		b.grhV.nulls++
		b.sgid.idx[i], b.dgid.idx[i] = 0, 0
	}

	// Each header's columns take the header's values, or zeros when it is
	// absent (t, e, ... point at a zero header then).
	t := &f.BTH
	if h&decode.HasBTH != 0 {
		b.bthV.set(i)
		b.ackReq.put(i, t.AckReq)
		b.fecn.put(i, t.FECN)
		b.becn.put(i, t.BECN)
		b.solicited.put(i, t.SE)
	} else {
		b.bthV.nulls++
		t = &decode.BTH{}
	}
	b.opcode[i], b.destQP[i], b.psn[i] = uint8(t.OpCode), t.DestQP, t.PSN
	b.pkey[i], b.pad[i] = t.PKey, t.PadCnt

	b.rdethEECnxt[i] = f.RDETH.EECnxt * present(h&decode.HasRDETH, &b.rdethV, i)
	b.xrcSRQ[i] = f.XRCETH.XRCSRQ * present(h&decode.HasXRCETH, &b.xrcV, i)
	b.imm[i] = f.ImmDt.Imm * present(h&decode.HasImmDt, &b.immV, i)
	b.ieth[i] = f.IETH.RKey * present(h&decode.HasIETH, &b.iethV, i)
	b.atomicAckOrig[i] = f.AtomicAckETH.OrigRemData * uint64(present(h&decode.HasAtomicAckETH, &b.atomicAckV, i))

	r := &f.RETH
	if present(h&decode.HasRETH, &b.rethV, i) == 0 {
		r = &decode.RETH{}
	}
	b.rethVA[i], b.rethRKey[i], b.rethDMALen[i] = r.VA, r.RKey, r.DMALen

	a := &f.AETH
	if present(h&decode.HasAETH, &b.aethV, i) == 0 {
		a = &decode.AETH{}
	}
	b.aethSyndrome[i], b.aethMSN[i] = a.Syndrome, a.MSN

	d := &f.DETH
	if present(h&decode.HasDETH, &b.dethV, i) == 0 {
		d = &decode.DETH{}
	}
	b.dethQKey[i], b.dethSrcQP[i] = d.QKey, d.SrcQP

	at := &f.AtomicETH
	if present(h&decode.HasAtomicETH, &b.atomicV, i) == 0 {
		at = &decode.AtomicETH{}
	}
	b.atomicVA[i], b.atomicRKey[i], b.atomicSwapAdd[i], b.atomicCompare[i] = at.VA, at.RKey, at.SwapAdd, at.Compare

	checked := h&decode.CRCsCheck != 0
	if checked && h&decode.HasICRC != 0 {
		b.icrcV.set(i)
		b.icrcOK.put(i, f.ICRCOK)
	} else {
		b.icrcV.nulls++
	}
	// A link packet's VCRC bit means its LPCRC, reported as link_lpcrc_ok.
	if checked && h&decode.HasVCRC != 0 && h&decode.HasLink == 0 {
		b.vcrcV.set(i)
		b.vcrcOK.put(i, f.VCRCOK)
	} else {
		b.vcrcV.nulls++
	}

	l := &f.Link
	if present(h&decode.HasLink, &b.linkV, i) == 0 {
		l = &decode.LinkFCP{}
	} else if checked {
		b.lpcrcV.set(i)
		b.lpcrcOK.put(i, f.VCRCOK)
	}
	if h&decode.HasLink == 0 || !checked {
		b.lpcrcV.nulls++
	}
	b.linkOp[i], b.linkFCTBS[i], b.linkVL[i], b.linkFCCL[i] = l.Op, l.FCTBS, l.VL, l.FCCL

	if h&rareHeaders == 0 {
		r := &b.rare
		r.pfcV.nulls++
		r.pauseV.nulls++
		r.ifaV.nulls++
		r.ifaMDV.nulls++
		r.ifa1V.nulls++
	} else {
		b.rare.add(f, i)
	}
	b.mad.add(f, i)

	if errMsg == "" {
		b.errV.nulls++
	} else {
		b.errV.set(i)
		b.errData = append(b.errData, errMsg...)
	}
	b.errOffsets = append(b.errOffsets, int32(len(b.errData)))
}

// rareHeaders are the headers of rareCols.
const rareHeaders = decode.HasPFC | decode.HasPause | decode.HasIFA | decode.HasIFAMetadata | decode.HasIFA1

// rareCols are the columns of the headers few frames carry: PFC, PAUSE,
// IFA 2.0 (header and metadata header) and IFA 1.0. A row without any of
// them costs five null counts: their values are written only where a row
// has the header, and cleared at reset only when one did (values under a
// null are zero, as in the other columns).
type rareCols struct {
	used bool // a row of the batch has one of the headers

	pfcOpcode, pfcClassEnable []uint16
	pfcQuanta                 [decode.PFCPriorities][]uint16
	pfcV                      bitmap

	pauseQuanta []uint16
	pauseV      bitmap

	ifa  [5][]uint8 // version, gns, next_hdr, flags, max_len
	ifaV bitmap

	ifaMD  [4][]uint8 // request_vector, action_vector, hop_limit, cur_len
	ifaMDV bitmap

	ifa1Marker []uint64
	ifa1U8     [4][]uint8  // version, msg_type, hop_limit, hop_count
	ifa1U16    [7][]uint16 // flags, request_vector, action_vector, max_len, cur_len, sender_handle, seq
	ifa1V      bitmap
}

// u8s and u16s list the value slices, for make and reset.
func (r *rareCols) u8s() [][]uint8 {
	s := append(r.ifa[:], r.ifaMD[:]...)
	return append(s, r.ifa1U8[:]...)
}

func (r *rareCols) u16s() []*[]uint16 {
	s := []*[]uint16{&r.pfcOpcode, &r.pfcClassEnable, &r.pauseQuanta}
	for k := range r.pfcQuanta {
		s = append(s, &r.pfcQuanta[k])
	}
	for k := range r.ifa1U16 {
		s = append(s, &r.ifa1U16[k])
	}
	return s
}

func (r *rareCols) make(n int) {
	for _, c := range r.u16s() {
		*c = make([]uint16, n)
	}
	for k := range r.ifa {
		r.ifa[k] = make([]uint8, n)
	}
	for k := range r.ifaMD {
		r.ifaMD[k] = make([]uint8, n)
	}
	for k := range r.ifa1U8 {
		r.ifa1U8[k] = make([]uint8, n)
	}
	r.ifa1Marker = make([]uint64, n)
}

// reset zeroes the values of the first n rows if any was written.
func (r *rareCols) reset(n int) {
	if !r.used {
		return
	}
	for _, c := range r.u16s() {
		clear((*c)[:n])
	}
	for _, c := range r.u8s() {
		clear(c[:n])
	}
	clear(r.ifa1Marker[:n])
	r.used = false
}

// add fills row i from f, which has at least one of rareHeaders.
func (r *rareCols) add(f *decode.Frame, i int) {
	r.used = true
	h := f.Has
	if present(h&decode.HasPFC, &r.pfcV, i) != 0 {
		r.pfcOpcode[i], r.pfcClassEnable[i] = f.PFC.Opcode, f.PFC.ClassEnable
		for k, q := range f.PFC.Quanta {
			r.pfcQuanta[k][i] = q
		}
	}
	if present(h&decode.HasPause, &r.pauseV, i) != 0 {
		r.pauseQuanta[i] = f.Pause.Quanta
	}
	if present(h&decode.HasIFA, &r.ifaV, i) != 0 {
		a := &f.IFA
		for k, v := range [...]uint8{a.Version, a.GNS, a.NextHdr, a.Flags, a.MaxLength} {
			r.ifa[k][i] = v
		}
	}
	md := h & decode.HasIFAMetadata
	if h&decode.HasIFA == 0 {
		md = 0 // the decode JSON has the metadata header's keys only inside "ifa"
	}
	if present(md, &r.ifaMDV, i) != 0 {
		m := &f.IFAMetadata
		for k, v := range [...]uint8{m.RequestVector, m.ActionVector, m.HopLimit, m.CurrentLength} {
			r.ifaMD[k][i] = v
		}
	}
	if present(h&decode.HasIFA1, &r.ifa1V, i) != 0 {
		a := &f.IFA1
		r.ifa1Marker[i] = a.ProbeMarker
		for k, v := range [...]uint8{a.Version, a.MsgType, a.HopLimit, a.HopCount} {
			r.ifa1U8[k][i] = v
		}
		for k, v := range [...]uint16{a.Flags, a.RequestVector, a.ActionVector, a.MaxLength, a.CurrentLength, a.SenderHandle, a.SeqNumber} {
			r.ifa1U16[k][i] = v
		}
	}
}

// arrays appends the columns of the first n rows to cols, in the order of
// packetFields.
func (r *rareCols) arrays(cols []arrow.Array, n int) []arrow.Array {
	u8, u16 := arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16
	cols = append(cols, fixed(u16, r.pfcOpcode, n, &r.pfcV), fixed(u16, r.pfcClassEnable, n, &r.pfcV))
	for _, q := range r.pfcQuanta {
		cols = append(cols, fixed(u16, q, n, &r.pfcV))
	}
	cols = append(cols, fixed(u16, r.pauseQuanta, n, &r.pauseV))
	for _, c := range r.ifa {
		cols = append(cols, fixed(u8, c, n, &r.ifaV))
	}
	for _, c := range r.ifaMD {
		cols = append(cols, fixed(u8, c, n, &r.ifaMDV))
	}
	cols = append(cols, fixed(arrow.PrimitiveTypes.Uint64, r.ifa1Marker, n, &r.ifa1V),
		fixed(u8, r.ifa1U8[0], n, &r.ifa1V), fixed(u8, r.ifa1U8[1], n, &r.ifa1V))
	for _, c := range r.ifa1U16[:3] { // flags, request_vector, action_vector
		cols = append(cols, fixed(u16, c, n, &r.ifa1V))
	}
	cols = append(cols, fixed(u8, r.ifa1U8[2], n, &r.ifa1V), fixed(u8, r.ifa1U8[3], n, &r.ifa1V))
	for _, c := range r.ifa1U16[3:] { // max_len, cur_len, sender_handle, seq
		cols = append(cols, fixed(u16, c, n, &r.ifa1V))
	}
	return cols
}

// present marks row i of validity v as set when has is non-zero, null
// otherwise, and returns 1 or 0 accordingly.
func present[H ~uint32](has H, v *bitmap, i int) uint32 {
	if has != 0 {
		v.set(i)
		return 1
	}
	v.nulls++
	return 0
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
	u8, u16, u32, u64 := arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64
	cols := []arrow.Array{
		fixed(arrow.PrimitiveTypes.Int64, b.frame, n, nil),
		fixed(timestampNs, b.ts, n, nil),
		fixed(u32, b.length, n, nil),
		fixed(u32, b.capLen, n, nil),
		fixed(arrow.PrimitiveTypes.Int8, b.iface, n, &b.ifaceV),
		dict(b.direction, n, &b.dirV, directionDict),
		b.fileColumn(n),
		dict(b.transport, n, &b.trV, transportDict),
		fixed(u16, b.slid, n, &b.lrhV), fixed(u16, b.dlid, n, &b.lrhV),
		fixed(u8, b.sl, n, &b.lrhV), fixed(u8, b.vl, n, &b.lrhV),
		b.src.array(n, &b.ipV), b.dst.array(n, &b.ipV),
		fixed(u8, b.ecn, n, &b.ipV),
		b.sgid.array(n, &b.grhV), b.dgid.array(n, &b.grhV),
		fixed(u8, b.opcode, n, &b.bthV),
		dict(b.opcode, n, &b.bthV, opcodeDict),
		fixed(u32, b.destQP, n, &b.bthV), fixed(u32, b.psn, n, &b.bthV),
		bools(&b.ackReq, &b.bthV, n), bools(&b.fecn, &b.bthV, n),
		bools(&b.becn, &b.bthV, n), bools(&b.solicited, &b.bthV, n),
		fixed(u16, b.pkey, n, &b.bthV),
		fixed(u8, b.pad, n, &b.bthV),
		fixed(u32, b.rdethEECnxt, n, &b.rdethV),
		fixed(u32, b.xrcSRQ, n, &b.xrcV),
		fixed(u64, b.rethVA, n, &b.rethV), fixed(u32, b.rethRKey, n, &b.rethV), fixed(u32, b.rethDMALen, n, &b.rethV),
		fixed(u8, b.aethSyndrome, n, &b.aethV), fixed(u32, b.aethMSN, n, &b.aethV),
		fixed(u32, b.dethQKey, n, &b.dethV), fixed(u32, b.dethSrcQP, n, &b.dethV),
		fixed(u64, b.atomicVA, n, &b.atomicV), fixed(u32, b.atomicRKey, n, &b.atomicV),
		fixed(u64, b.atomicSwapAdd, n, &b.atomicV), fixed(u64, b.atomicCompare, n, &b.atomicV),
		fixed(u64, b.atomicAckOrig, n, &b.atomicAckV),
		fixed(u32, b.imm, n, &b.immV), fixed(u32, b.ieth, n, &b.iethV),
		bools(&b.icrcOK, &b.icrcV, n), bools(&b.vcrcOK, &b.vcrcV, n),
		fixed(u8, b.linkOp, n, &b.linkV), fixed(u16, b.linkFCTBS, n, &b.linkV),
		fixed(u8, b.linkVL, n, &b.linkV), fixed(u16, b.linkFCCL, n, &b.linkV),
		bools(&b.lpcrcOK, &b.lpcrcV, n),
	}
	cols = b.rare.arrays(cols, n)
	cols = b.mad.arrays(cols, n)
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
