package correlate

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/ibscope/ibscope/decode"
)

// timestampNs is the type of every time column: int64 ns since the Unix
// epoch (UTC). It carries no time zone, so Parquet stores it with
// isAdjustedToUTC=false: DuckDB then reads TIMESTAMP_NS and pandas
// datetime64[ns], both to the ns. (With the UTC flag DuckDB reads
// TIMESTAMPTZ, which holds microseconds, and drops the last three digits.)
var timestampNs = &arrow.TimestampType{Unit: arrow.Nanosecond}

// dictString is the type of the string columns with few values (transport,
// opcode_name): dictionary-encoded, which pandas reads as a categorical and
// Parquet stores as dictionary pages without hashing each value.
var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.String}

// fileDict is the type of the file column: an index into the export's
// capture names (int32: a rotated set may have more than 256 files), which
// pandas reads as a categorical and DuckDB as VARCHAR.
var fileDict = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// Fixed dictionaries: the index of a transport is its decode.Transport
// value minus one, of an opcode name its opcode.
var transportDict, opcodeDict, directionDict = func() (arrow.Array, arrow.Array, arrow.Array) {
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
	db := array.NewStringBuilder(memory.DefaultAllocator)
	defer db.Release()
	db.AppendValues([]string{"tx", "rx"}, nil) // indexed by dir
	return tb.NewArray(), ob.NewArray(), db.NewArray()
}()

// packetFields are the per-packet table's columns: the fields of the
// `ibanalyze decode --json` contract (decode.Frame.AppendJSON) in its order,
// nested objects flattened (reth {va} becomes reth_va), a header the frame
// lacks is null; after len come what the capture file says of the frame
// (cap_len, iface, direction, file). Units:
// ts_ns ns since the epoch (UTC); len and cap_len bytes on the wire and captured; dest_qp, psn,
// msn, src_qp 24-bit numbers; link_fctbs and link_fccl 64-byte blocks mod 4096;
// pfc_quanta_N and pause_quanta pause quanta (512 bit times); ifa_max_len
// and ifa_cur_len 4-byte words. The PFC array pfc {quanta [8]} is eight
// columns pfc_quanta_0..7, not a list: plain numeric columns that DuckDB and
// pandas filter and aggregate as they do any other (a Parquet list reads
// as an object column of arrays in pandas), with min/max statistics per
// priority, and nothing but null levels to write in a capture without PFC.
var packetFields = describe(append(append([]arrow.Field{
	{Name: "frame", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts_ns", Type: timestampNs},
	{Name: "len", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "cap_len", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "iface", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
	{Name: "direction", Type: dictString, Nullable: true},
	{Name: "file", Type: fileDict},
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
	{Name: "pfc_opcode", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_class_enable", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_0", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_1", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_2", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_3", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_4", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_5", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_6", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pfc_quanta_7", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "pause_quanta", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa_version", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_gns", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_next_hdr", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_flags", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_max_len", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_request_vector", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_action_vector", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_hop_limit", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa_cur_len", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa1_probe_marker", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "ifa1_version", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa1_msg_type", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa1_flags", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_request_vector", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_action_vector", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_hop_limit", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa1_hop_count", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "ifa1_max_len", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_cur_len", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_sender_handle", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "ifa1_seq", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
}, madFields...), arrow.Field{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true}))

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
