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
	{Name: "transport", Type: arrow.BinaryTypes.String, Nullable: true},
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
	{Name: "opcode_name", Type: arrow.BinaryTypes.String, Nullable: true},
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
	rb *array.RecordBuilder

	frame                         *array.Int64Builder
	ts                            *array.TimestampBuilder
	length                        *array.Uint32Builder
	transport                     *array.StringBuilder
	slid, dlid                    *array.Uint16Builder
	sl, vl                        *array.Uint8Builder
	src, dst                      *array.StringBuilder
	ecn                           *array.Uint8Builder
	sgid, dgid                    *array.StringBuilder
	opcode                        *array.Uint8Builder
	opcodeName                    *array.StringBuilder
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
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b := &packetBuilder{rb: rb}
	i := 0
	next := func() array.Builder { i++; return rb.Field(i - 1) }
	b.frame = next().(*array.Int64Builder)
	b.ts = next().(*array.TimestampBuilder)
	b.length = next().(*array.Uint32Builder)
	b.transport = next().(*array.StringBuilder)
	b.slid, b.dlid = next().(*array.Uint16Builder), next().(*array.Uint16Builder)
	b.sl, b.vl = next().(*array.Uint8Builder), next().(*array.Uint8Builder)
	b.src, b.dst = next().(*array.StringBuilder), next().(*array.StringBuilder)
	b.ecn = next().(*array.Uint8Builder)
	b.sgid, b.dgid = next().(*array.StringBuilder), next().(*array.StringBuilder)
	b.opcode = next().(*array.Uint8Builder)
	b.opcodeName = next().(*array.StringBuilder)
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
	b.transport.ReserveData(BatchRows * len("rocev2"))
	b.opcodeName.ReserveData(BatchRows * len("RC_RDMA_WRITE_MIDDLE"))
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
	b.frame.Append(int64(f.Number))
	b.ts.Append(arrow.Timestamp(f.TsNs))
	b.length.Append(uint32(f.WireLen))
	if f.Transport == decode.TransportNone {
		b.transport.AppendNull()
	} else {
		b.transport.Append(f.Transport.String())
	}

	if h&decode.HasLRH != 0 {
		b.slid.Append(f.LRH.SLID)
		b.dlid.Append(f.LRH.DLID)
		b.sl.Append(f.LRH.SL)
		b.vl.Append(f.LRH.VL)
	} else {
		b.slid.AppendNull()
		b.dlid.AppendNull()
		b.sl.AppendNull()
		b.vl.AppendNull()
	}

	if h&(decode.HasIPv4|decode.HasIPv6) != 0 {
		b.appendAddr(b.src, f.Src)
		b.appendAddr(b.dst, f.Dst)
		b.ecn.Append(f.ECN)
	} else {
		b.src.AppendNull()
		b.dst.AppendNull()
		b.ecn.AppendNull()
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
		b.opcode.Append(uint8(t.OpCode))
		b.opcodeName.Append(t.OpCode.String())
		b.destQP.Append(t.DestQP)
		b.psn.Append(t.PSN)
		b.ackReq.Append(t.AckReq)
		b.fecn.Append(t.FECN)
		b.becn.Append(t.BECN)
		b.solicited.Append(t.SE)
		b.pkey.Append(t.PKey)
		b.pad.Append(t.PadCnt)
	} else {
		b.opcode.AppendNull()
		b.opcodeName.AppendNull()
		b.destQP.AppendNull()
		b.psn.AppendNull()
		b.ackReq.AppendNull()
		b.fecn.AppendNull()
		b.becn.AppendNull()
		b.solicited.AppendNull()
		b.pkey.AppendNull()
		b.pad.AppendNull()
	}

	if h&decode.HasRDETH != 0 {
		b.rdethEECnxt.Append(f.RDETH.EECnxt)
	} else {
		b.rdethEECnxt.AppendNull()
	}
	if h&decode.HasXRCETH != 0 {
		b.xrcSRQ.Append(f.XRCETH.XRCSRQ)
	} else {
		b.xrcSRQ.AppendNull()
	}

	if h&decode.HasRETH != 0 {
		b.rethVA.Append(f.RETH.VA)
		b.rethRKey.Append(f.RETH.RKey)
		b.rethDMALen.Append(f.RETH.DMALen)
	} else {
		b.rethVA.AppendNull()
		b.rethRKey.AppendNull()
		b.rethDMALen.AppendNull()
	}

	if h&decode.HasAETH != 0 {
		b.aethSyndrome.Append(f.AETH.Syndrome)
		b.aethMSN.Append(f.AETH.MSN)
	} else {
		b.aethSyndrome.AppendNull()
		b.aethMSN.AppendNull()
	}

	if h&decode.HasDETH != 0 {
		b.dethQKey.Append(f.DETH.QKey)
		b.dethSrcQP.Append(f.DETH.SrcQP)
	} else {
		b.dethQKey.AppendNull()
		b.dethSrcQP.AppendNull()
	}

	if h&decode.HasAtomicETH != 0 {
		a := &f.AtomicETH
		b.atomicVA.Append(a.VA)
		b.atomicRKey.Append(a.RKey)
		b.atomicSwapAdd.Append(a.SwapAdd)
		b.atomicCompare.Append(a.Compare)
	} else {
		b.atomicVA.AppendNull()
		b.atomicRKey.AppendNull()
		b.atomicSwapAdd.AppendNull()
		b.atomicCompare.AppendNull()
	}

	if h&decode.HasAtomicAckETH != 0 {
		b.atomicAckOrig.Append(f.AtomicAckETH.OrigRemData)
	} else {
		b.atomicAckOrig.AppendNull()
	}

	if h&decode.HasImmDt != 0 {
		b.imm.Append(f.ImmDt.Imm)
	} else {
		b.imm.AppendNull()
	}
	if h&decode.HasIETH != 0 {
		b.ieth.Append(f.IETH.RKey)
	} else {
		b.ieth.AppendNull()
	}

	checked := h&decode.CRCsCheck != 0
	if checked && h&decode.HasICRC != 0 {
		b.icrcOK.Append(f.ICRCOK)
	} else {
		b.icrcOK.AppendNull()
	}
	// A link packet's VCRC bit means its LPCRC, reported as link_lpcrc_ok.
	if checked && h&decode.HasVCRC != 0 && h&decode.HasLink == 0 {
		b.vcrcOK.Append(f.VCRCOK)
	} else {
		b.vcrcOK.AppendNull()
	}

	if h&decode.HasLink != 0 {
		l := &f.Link
		b.linkOp.Append(l.Op)
		b.linkFCTBS.Append(l.FCTBS)
		b.linkVL.Append(l.VL)
		b.linkFCCL.Append(l.FCCL)
		if checked {
			b.linkLPCRCOK.Append(f.VCRCOK)
		} else {
			b.linkLPCRCOK.AppendNull()
		}
	} else {
		b.linkOp.AppendNull()
		b.linkFCTBS.AppendNull()
		b.linkVL.AppendNull()
		b.linkFCCL.AppendNull()
		b.linkLPCRCOK.AppendNull()
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
	rec := b.rb.NewRecordBatch()
	b.rows = 0
	b.reserve()
	return rec
}

func (b *packetBuilder) release() { b.rb.Release() }
