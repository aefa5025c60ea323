package correlate

import (
	"sync"

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

// fixedDicts are the fixed dictionaries: the index of a transport is its
// decode.Transport value minus one, of an opcode name its opcode. Built on
// first use, not as the package initializes: every ibanalyze command links
// correlate, few export.
type fixedDicts struct{ transport, opcode, direction arrow.Array }

var dicts = sync.OnceValue(func() fixedDicts {
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
	return fixedDicts{transport: tb.NewArray(), opcode: ob.NewArray(), direction: db.NewArray()}
})

// packetFields are the per-packet table's columns: the fields of the
// `ibanalyze decode --json` contract (decode.Frame.AppendJSON) in its order,
// nested objects flattened (reth {va} becomes reth_va), a header the frame
// lacks is null; after len come what the capture file says of the frame
// (cap_len, iface, direction, file). The headers' columns, with their
// descriptions and units, are decode's (decode.ColumnGroups): one header,
// one place. Units of the frame's own: ts_ns ns since the epoch (UTC); len
// and cap_len bytes on the wire and captured. The PFC array pfc {quanta
// [8]} is eight columns pfc_quanta_0..7, not a list: plain numeric columns
// that DuckDB and pandas filter and aggregate as they do any other (a
// Parquet list reads as an object column of arrays in pandas), with
// min/max statistics per priority, and nothing but null levels to write in
// a capture without PFC. Built on first use, as dicts.
var packetFields = sync.OnceValue(func() []arrow.Field {
	fields := describe([]arrow.Field{
		{Name: "frame", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts_ns", Type: timestampNs},
		{Name: "len", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "cap_len", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "iface", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "direction", Type: dictString, Nullable: true},
		{Name: "file", Type: fileDict},
		{Name: "transport", Type: dictString, Nullable: true},
	})
	for _, g := range decode.ColumnGroups() {
		for _, c := range g.Columns {
			fields = append(fields, arrow.Field{Name: c.Name, Type: columnTypes[c.Type], Nullable: true,
				Metadata: arrow.NewMetadata([]string{descriptionKey}, []string{c.Doc})})
		}
	}
	return append(fields, describe([]arrow.Field{{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true}})...)
})

// columnTypes are the Arrow types of the headers' columns: addresses as
// text, opcode names from the fixed dictionary.
var columnTypes = map[decode.ColumnType]arrow.DataType{
	decode.ColumnUint8:      arrow.PrimitiveTypes.Uint8,
	decode.ColumnUint16:     arrow.PrimitiveTypes.Uint16,
	decode.ColumnUint32:     arrow.PrimitiveTypes.Uint32,
	decode.ColumnUint64:     arrow.PrimitiveTypes.Uint64,
	decode.ColumnBool:       arrow.FixedWidthTypes.Boolean,
	decode.ColumnAddr:       arrow.BinaryTypes.String,
	decode.ColumnMAC:        arrow.BinaryTypes.String,
	decode.ColumnOpcodeName: dictString,
}

// PacketSchema is the schema of the per-packet table, with meta as its
// metadata (nil for none).
func PacketSchema(meta map[string]string) *arrow.Schema {
	return schemaWithMeta(packetFields(), meta)
}

func schemaWithMeta(fields []arrow.Field, meta map[string]string) *arrow.Schema {
	if len(meta) == 0 {
		return arrow.NewSchema(fields, nil)
	}
	md := arrow.MetadataFrom(meta)
	return arrow.NewSchema(fields, &md)
}
