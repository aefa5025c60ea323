package correlate

import (
	"net/netip"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/decode"
)

// timestampUTC is the type of every time column: int64 ns since the Unix
// epoch, which pandas reads as datetime64[ns, UTC] and DuckDB as TIMESTAMPTZ.
var timestampUTC = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// dictString is the type of the string columns with few values (transport,
// opcode_name): dictionary-encoded, which pandas reads as a categorical and
// Parquet stores as dictionary pages without hashing each value.
var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.String}

// Fixed dictionaries: the index of a transport is its decode.Transport
// value minus one, of an opcode name its opcode.
var transportDict, opcodeDict = func() (arrow.Array, arrow.Array) {
	tb := array.NewStringBuilder(memory.DefaultAllocator)
	defer tb.Release()
	for t := decode.TransportIB; t <= decode.TransportLink; t++ {
		tb.Append(t.String())
	}
	ob := array.NewStringBuilder(memory.DefaultAllocator)
	defer ob.Release()
	for op := 0; op < 256; op++ {
		ob.Append(decode.Opcode(op).String())
	}
	return tb.NewArray(), ob.NewArray()
}()

// packetFields are the per-packet table's columns: the fields of the
// `ibanalyze decode --json` contract (decode.Frame.AppendJSON) in its order,
// nested objects flattened (reth {va} becomes reth_va), a header the frame
// lacks is null. Units:
// ts_ns ns since the epoch (UTC); len bytes on the wire; dest_qp, psn,
// msn, src_qp 24-bit numbers; link_fctbs and link_fccl 64-byte blocks mod 4096.
var packetFields = []arrow.Field{
	{Name: "frame", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts_ns", Type: timestampUTC},
	{Name: "len", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "transport", Type: dictString, Nullable: true},
	{Name: "slid", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "dlid", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "sl", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "vl", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "src", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "dst", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ecn", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "sgid", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "dgid", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "opcode", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "opcode_name", Type: dictString, Nullable: true},
	{Name: "dest_qp", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "psn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "ack_req", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "fecn", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "becn", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "solicited", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "pkey", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pad", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "rdeth_ee_cnxt", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "xrceth_xrc_srq", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "reth_va", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "reth_rkey", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "reth_dma_len", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "aeth_syndrome", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "aeth_msn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "deth_qkey", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "deth_src_qp", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "atomic_eth_va", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "atomic_eth_rkey", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "atomic_eth_swap_add", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "atomic_eth_compare", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "atomic_ack_eth_orig_rem_data", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "imm", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "ieth", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "icrc_ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "vcrc_ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "link_op", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "link_fctbs", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "link_vl", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "link_fccl", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "link_lpcrc_ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true},
}

// PacketSchema is the schema of the per-packet table, with meta as its
// metadata (nil for none).
func PacketSchema(meta map[string]string) *arrow.Schema {
	return schemaWithMeta(packetFields, meta)
}

func schemaWithMeta(fields []arrow.Field, meta map[string]string) *arrow.Schema {
	if len(meta) == 0 {
		return arrow.NewSchema(fields, nil)
	}
	md := arrow.MetadataFrom(meta)
	return arrow.NewSchema(fields, &md)
}

// packetBuilder appends decoded frames to the per-packet columns. Builders
// are typed once here so that appending a frame is straight-line code with
// no lookups and no allocation beyond the builders' own growth.
type packetBuilder struct {
	rb     *array.RecordBuilder // every column but the dictionary-encoded ones
	schema *arrow.Schema        // of the rows flush returns

	frame                         *array.Int64Builder
	ts                            *array.TimestampBuilder
	length                        *array.Uint32Builder
	transport                     *array.Uint8Builder // index into transportDict
	slid, dlid                    *array.Uint16Builder
	sl, vl                        *array.Uint8Builder
	src, dst                      *array.StringBuilder
	ecn                           *array.Uint8Builder
	sgid, dgid                    *array.StringBuilder
	opcode                        *array.Uint8Builder
	opcodeName                    *array.Uint8Builder // index into opcodeDict
	destQP, psn                   *array.Uint32Builder
	ackReq, fecn, becn, solicited *array.BooleanBuilder
	pkey                          *array.Uint16Builder
	pad                           *array.Uint8Builder
	rdethEECnxt, xrcSRQ           *array.Uint32Builder
	rethVA                        *array.Uint64Builder
	rethRKey, rethDMALen          *array.Uint32Builder
	aethSyndrome                  *array.Uint8Builder
	aethMSN                       *array.Uint32Builder
	dethQKey, dethSrcQP           *array.Uint32Builder
	atomicVA                      *array.Uint64Builder
	atomicRKey                    *array.Uint32Builder
	atomicSwapAdd, atomicCompare  *array.Uint64Builder
	atomicAckOrig                 *array.Uint64Builder
	imm, ieth                     *array.Uint32Builder
	icrcOK, vcrcOK                *array.BooleanBuilder
	linkOp                        *array.Uint8Builder
	linkFCTBS                     *array.Uint16Builder
	linkVL                        *array.Uint8Builder
	linkFCCL                      *array.Uint16Builder
	linkLPCRCOK                   *array.BooleanBuilder
	errMsg                        *array.StringBuilder

	rows  int
	addrs addrCache
}

// addrCache remembers how the last few addresses were formatted: a capture's
// packets come from a handful of hosts, and formatting an address is a good
// part of the cost of a row.
type addrCache struct {
	addr [4]netip.Addr
	text [4][]byte
	next int // slot to replace next
}

func (c *addrCache) format(a netip.Addr) []byte {
	for i := range c.addr {
		if c.addr[i] == a && c.text[i] != nil {
			return c.text[i]
		}
	}
	i := c.next
	c.next = (c.next + 1) % len(c.addr)
	c.addr[i] = a
	c.text[i] = a.AppendTo(c.text[i][:0])
	return c.text[i]
}

func newPacketBuilder(schema *arrow.Schema) *packetBuilder {
	// The record builder gets the plain columns; the dictionary columns'
	// indices are built beside it and joined with their fixed dictionaries
	// in flush.
	var plain []arrow.Field
	for _, f := range schema.Fields() {
		if f.Type.ID() != arrow.DICTIONARY {
			plain = append(plain, f)
		}
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(plain, nil))
	b := &packetBuilder{rb: rb, schema: schema}
	i := 0
	next := func() array.Builder { i++; return rb.Field(i - 1) }
	b.frame = next().(*array.Int64Builder)
	b.ts = next().(*array.TimestampBuilder)
	b.length = next().(*array.Uint32Builder)
	b.transport = array.NewUint8Builder(memory.DefaultAllocator)
	b.slid, b.dlid = next().(*array.Uint16Builder), next().(*array.Uint16Builder)
	b.sl, b.vl = next().(*array.Uint8Builder), next().(*array.Uint8Builder)
	b.src, b.dst = next().(*array.StringBuilder), next().(*array.StringBuilder)
	b.ecn = next().(*array.Uint8Builder)
	b.sgid, b.dgid = next().(*array.StringBuilder), next().(*array.StringBuilder)
	b.opcode = next().(*array.Uint8Builder)
	b.opcodeName = array.NewUint8Builder(memory.DefaultAllocator)
	b.destQP, b.psn = next().(*array.Uint32Builder), next().(*array.Uint32Builder)
	b.ackReq, b.fecn = next().(*array.BooleanBuilder), next().(*array.BooleanBuilder)
	b.becn, b.solicited = next().(*array.BooleanBuilder), next().(*array.BooleanBuilder)
	b.pkey = next().(*array.Uint16Builder)
	b.pad = next().(*array.Uint8Builder)
	b.rdethEECnxt, b.xrcSRQ = next().(*array.Uint32Builder), next().(*array.Uint32Builder)
	b.rethVA = next().(*array.Uint64Builder)
	b.rethRKey, b.rethDMALen = next().(*array.Uint32Builder), next().(*array.Uint32Builder)
	b.aethSyndrome = next().(*array.Uint8Builder)
	b.aethMSN = next().(*array.Uint32Builder)
	b.dethQKey, b.dethSrcQP = next().(*array.Uint32Builder), next().(*array.Uint32Builder)
	b.atomicVA = next().(*array.Uint64Builder)
	b.atomicRKey = next().(*array.Uint32Builder)
	b.atomicSwapAdd, b.atomicCompare = next().(*array.Uint64Builder), next().(*array.Uint64Builder)
	b.atomicAckOrig = next().(*array.Uint64Builder)
	b.imm, b.ieth = next().(*array.Uint32Builder), next().(*array.Uint32Builder)
	b.icrcOK, b.vcrcOK = next().(*array.BooleanBuilder), next().(*array.BooleanBuilder)
	b.linkOp = next().(*array.Uint8Builder)
	b.linkFCTBS = next().(*array.Uint16Builder)
	b.linkVL = next().(*array.Uint8Builder)
	b.linkFCCL = next().(*array.Uint16Builder)
	b.linkLPCRCOK = next().(*array.BooleanBuilder)
	b.errMsg = next().(*array.StringBuilder)
	b.reserve()
	return b
}

// reserve sizes the builders for a whole batch, so that appending never
// copies: bytes per row are typical lengths of each string column.
func (b *packetBuilder) reserve() {
	b.rb.Reserve(BatchRows)
	b.transport.Reserve(BatchRows)
	b.opcodeName.Reserve(BatchRows)
	b.src.ReserveData(BatchRows * len("192.168.100.100"))
	b.dst.ReserveData(BatchRows * len("192.168.100.100"))
}

// appendAddr appends a formatted address to a string column.
func (b *packetBuilder) appendAddr(col *array.StringBuilder, a netip.Addr) {
	col.BinaryBuilder.Append(b.addrs.format(a))
}

// add appends one frame; errMsg is why it could not be decoded ("" if it
// was). Field validity follows f.Has, so a frame that failed half-way keeps
// the headers decoded before the problem.
func (b *packetBuilder) add(f *decode.Frame, errMsg string) {
	b.rows++
	h := f.Has
	b.frame.UnsafeAppend(int64(f.Number))
	b.ts.UnsafeAppend(arrow.Timestamp(f.TsNs))
	b.length.UnsafeAppend(uint32(f.WireLen))
	if f.Transport == decode.TransportNone {
		b.transport.UnsafeAppendBoolToBitmap(false)
	} else {
		b.transport.UnsafeAppend(uint8(f.Transport - decode.TransportIB))
	}

	if h&decode.HasLRH != 0 {
		b.slid.UnsafeAppend(f.LRH.SLID)
		b.dlid.UnsafeAppend(f.LRH.DLID)
		b.sl.UnsafeAppend(f.LRH.SL)
		b.vl.UnsafeAppend(f.LRH.VL)
	} else {
		b.slid.UnsafeAppendBoolToBitmap(false)
		b.dlid.UnsafeAppendBoolToBitmap(false)
		b.sl.UnsafeAppendBoolToBitmap(false)
		b.vl.UnsafeAppendBoolToBitmap(false)
	}

	if h&(decode.HasIPv4|decode.HasIPv6) != 0 {
		b.appendAddr(b.src, f.Src)
		b.appendAddr(b.dst, f.Dst)
		b.ecn.UnsafeAppend(f.ECN)
	} else {
		b.src.AppendNull()
		b.dst.AppendNull()
		b.ecn.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasGRH != 0 {
		b.appendAddr(b.sgid, f.GRH.SrcGID())
		b.appendAddr(b.dgid, f.GRH.DstGID())
	} else {
		b.sgid.AppendNull()
		b.dgid.AppendNull()
	}

	if h&decode.HasBTH != 0 {
		t := &f.BTH
		b.opcode.UnsafeAppend(uint8(t.OpCode))
		b.opcodeName.UnsafeAppend(uint8(t.OpCode))
		b.destQP.UnsafeAppend(t.DestQP)
		b.psn.UnsafeAppend(t.PSN)
		b.ackReq.UnsafeAppend(t.AckReq)
		b.fecn.UnsafeAppend(t.FECN)
		b.becn.UnsafeAppend(t.BECN)
		b.solicited.UnsafeAppend(t.SE)
		b.pkey.UnsafeAppend(t.PKey)
		b.pad.UnsafeAppend(t.PadCnt)
	} else {
		b.opcode.UnsafeAppendBoolToBitmap(false)
		b.opcodeName.UnsafeAppendBoolToBitmap(false)
		b.destQP.UnsafeAppendBoolToBitmap(false)
		b.psn.UnsafeAppendBoolToBitmap(false)
		b.ackReq.UnsafeAppendBoolToBitmap(false)
		b.fecn.UnsafeAppendBoolToBitmap(false)
		b.becn.UnsafeAppendBoolToBitmap(false)
		b.solicited.UnsafeAppendBoolToBitmap(false)
		b.pkey.UnsafeAppendBoolToBitmap(false)
		b.pad.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasRDETH != 0 {
		b.rdethEECnxt.UnsafeAppend(f.RDETH.EECnxt)
	} else {
		b.rdethEECnxt.UnsafeAppendBoolToBitmap(false)
	}
	if h&decode.HasXRCETH != 0 {
		b.xrcSRQ.UnsafeAppend(f.XRCETH.XRCSRQ)
	} else {
		b.xrcSRQ.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasRETH != 0 {
		b.rethVA.UnsafeAppend(f.RETH.VA)
		b.rethRKey.UnsafeAppend(f.RETH.RKey)
		b.rethDMALen.UnsafeAppend(f.RETH.DMALen)
	} else {
		b.rethVA.UnsafeAppendBoolToBitmap(false)
		b.rethRKey.UnsafeAppendBoolToBitmap(false)
		b.rethDMALen.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasAETH != 0 {
		b.aethSyndrome.UnsafeAppend(f.AETH.Syndrome)
		b.aethMSN.UnsafeAppend(f.AETH.MSN)
	} else {
		b.aethSyndrome.UnsafeAppendBoolToBitmap(false)
		b.aethMSN.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasDETH != 0 {
		b.dethQKey.UnsafeAppend(f.DETH.QKey)
		b.dethSrcQP.UnsafeAppend(f.DETH.SrcQP)
	} else {
		b.dethQKey.UnsafeAppendBoolToBitmap(false)
		b.dethSrcQP.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasAtomicETH != 0 {
		a := &f.AtomicETH
		b.atomicVA.UnsafeAppend(a.VA)
		b.atomicRKey.UnsafeAppend(a.RKey)
		b.atomicSwapAdd.UnsafeAppend(a.SwapAdd)
		b.atomicCompare.UnsafeAppend(a.Compare)
	} else {
		b.atomicVA.UnsafeAppendBoolToBitmap(false)
		b.atomicRKey.UnsafeAppendBoolToBitmap(false)
		b.atomicSwapAdd.UnsafeAppendBoolToBitmap(false)
		b.atomicCompare.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasAtomicAckETH != 0 {
		b.atomicAckOrig.UnsafeAppend(f.AtomicAckETH.OrigRemData)
	} else {
		b.atomicAckOrig.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasImmDt != 0 {
		b.imm.UnsafeAppend(f.ImmDt.Imm)
	} else {
		b.imm.UnsafeAppendBoolToBitmap(false)
	}
	if h&decode.HasIETH != 0 {
		b.ieth.UnsafeAppend(f.IETH.RKey)
	} else {
		b.ieth.UnsafeAppendBoolToBitmap(false)
	}

	checked := h&decode.CRCsCheck != 0
	if checked && h&decode.HasICRC != 0 {
		b.icrcOK.UnsafeAppend(f.ICRCOK)
	} else {
		b.icrcOK.UnsafeAppendBoolToBitmap(false)
	}
	// A link packet's VCRC bit means its LPCRC, reported as link_lpcrc_ok.
	if checked && h&decode.HasVCRC != 0 && h&decode.HasLink == 0 {
		b.vcrcOK.UnsafeAppend(f.VCRCOK)
	} else {
		b.vcrcOK.UnsafeAppendBoolToBitmap(false)
	}

	if h&decode.HasLink != 0 {
		l := &f.Link
		b.linkOp.UnsafeAppend(l.Op)
		b.linkFCTBS.UnsafeAppend(l.FCTBS)
		b.linkVL.UnsafeAppend(l.VL)
		b.linkFCCL.UnsafeAppend(l.FCCL)
		if checked {
			b.linkLPCRCOK.UnsafeAppend(f.VCRCOK)
		} else {
			b.linkLPCRCOK.UnsafeAppendBoolToBitmap(false)
		}
	} else {
		b.linkOp.UnsafeAppendBoolToBitmap(false)
		b.linkFCTBS.UnsafeAppendBoolToBitmap(false)
		b.linkVL.UnsafeAppendBoolToBitmap(false)
		b.linkFCCL.UnsafeAppendBoolToBitmap(false)
		b.linkLPCRCOK.UnsafeAppendBoolToBitmap(false)
	}

	if errMsg == "" {
		b.errMsg.AppendNull()
	} else {
		b.errMsg.Append(errMsg)
	}
}

// flush returns the rows added since the last flush as a record batch (the
// caller releases it) and resets the builders for the next batch.
func (b *packetBuilder) flush() arrow.RecordBatch {
	plain := b.rb.NewRecordBatch()
	defer plain.Release()
	tr := dictColumn(b.transport, transportDict)
	defer tr.Release()
	op := dictColumn(b.opcodeName, opcodeDict)
	defer op.Release()
	cols := make([]arrow.Array, 0, b.schema.NumFields())
	p := 0
	for _, f := range b.schema.Fields() {
		switch f.Name {
		case "transport":
			cols = append(cols, tr)
		case "opcode_name":
			cols = append(cols, op)
		default:
			cols = append(cols, plain.Column(p))
			p++
		}
	}
	rec := array.NewRecordBatch(b.schema, cols, plain.NumRows())
	b.rows = 0
	b.reserve()
	return rec
}

// dictColumn joins the indices built so far with their dictionary.
func dictColumn(idx *array.Uint8Builder, dict arrow.Array) arrow.Array {
	ia := idx.NewArray()
	defer ia.Release()
	return array.NewDictionaryArray(dictString, ia, dict)
}

func (b *packetBuilder) release() {
	b.rb.Release()
	b.transport.Release()
	b.opcodeName.Release()
}
