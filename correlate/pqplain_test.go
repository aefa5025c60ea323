package correlate

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestParquetPlainChunks writes the column chunks plainScratch encodes
// (every integer width, signed and unsigned at their extremes, booleans;
// nulls here and there, in runs, everywhere and nowhere; a row count that
// is no multiple of 8), the chunks null in every row of a string column
// and of a delta-encoded one, and the dictionary chunks dictScratch writes
// (many entries and few, runs of one index and none), and delta-encoded
// columns (counters, timestamps, and deltas that wrap), and reads them back
// with DuckDB, row for row, with the statistics of the columns that keep
// them.
func TestParquetPlainChunks(t *testing.T) {
	fields := []arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
		{Name: "slid", Type: arrow.PrimitiveTypes.Uint16, Nullable: true}, // statsColumns
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "b_all", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "psn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true}, // deltaColumns
		{Name: "frame", Type: arrow.PrimitiveTypes.Int64},                // deltaColumns, statsColumns
		{Name: "aeth_msn", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
		{Name: "sample_id", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
		{Name: "ts_ns", Type: timestampNs, Nullable: true},
		{Name: "sgid", Type: arrow.BinaryTypes.String, Nullable: true}, // dictionary-encoded
	}
	// Dictionary columns (after those): a string column whose batches
	// come as dictionary arrays of many entries (int32 indices, in runs and
	// not), one of few entries (uint8 indices), and one whose dictionary
	// repeats an entry (left to arrow-go's writer).
	dictFields := []arrow.Field{
		{Name: "dst", Type: arrow.BinaryTypes.String, Nullable: true}, // statsColumns
		{Name: "transport", Type: dictString, Nullable: true},
		{Name: "opcode_name", Type: dictString, Nullable: true},
		{Name: "src", Type: arrow.BinaryTypes.String, Nullable: true},     // 2 entries: 1 bit an index
		{Name: "eth_src", Type: arrow.BinaryTypes.String, Nullable: true}, // 256 entries: 8 bits
	}
	recFields := append(append([]arrow.Field(nil), fields...), dictFields...)
	for _, k := range []int{0, 3, 4} {
		recFields[len(fields)+k].Type = addrDict
	}
	schema := arrow.NewSchema(fields, nil)
	fileSchema := arrow.NewSchema(append(append([]arrow.Field(nil), fields...), dictFields...), nil)
	recSchema := arrow.NewSchema(recFields, nil)
	many := array.NewStringBuilder(memory.DefaultAllocator)
	for k := range 300 {
		many.Append("h" + strconv.Itoa(k))
	}
	manyEntries := many.NewArray()
	many.Release()
	defer manyEntries.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1003
	// Validity per batch and column: random, in runs, all null, none null.
	patterns := []func(i int) bool{
		func(int) bool { return rng.IntN(3) > 0 },
		func(i int) bool { return (i/16)%2 == 0 },
		func(int) bool { return false },
		func(int) bool { return true },
	}
	var want []map[string]string
	var recs []arrow.RecordBatch
	for batch := range 3 {
		rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		rows := make([]map[string]string, n)
		for i := range rows {
			rows[i] = map[string]string{}
		}
		for c, f := range fields {
			valid := patterns[(batch+c)%len(patterns)]
			switch {
			case f.Name == "psn" || f.Name == "sgid":
				valid = func(int) bool { return false }
			case !f.Nullable:
				valid = func(int) bool { return true }
			}
			for i := range n {
				ok := valid(i)
				v := rng.Uint64()
				switch {
				case f.Name == "sample_id": // counters: small steps
					v = uint64(i*3 + batch + i/100*1000)
				case f.Name == "ts_ns":
					v = uint64(1_700_000_000_000_000_000 + i*137 + rng.IntN(50))
				case i < 4: // the extremes
					v = []uint64{0, 1, 1 << 63, ^uint64(0)}[i]
				}
				var s string
				switch b := rb.Field(c).(type) {
				case *array.Int8Builder:
					b.AppendValues([]int8{int8(v)}, []bool{ok})
					s = strconv.Itoa(int(int8(v)))
				case *array.Uint8Builder:
					b.AppendValues([]uint8{uint8(v)}, []bool{ok})
					s = strconv.Itoa(int(uint8(v)))
				case *array.Int16Builder:
					b.AppendValues([]int16{int16(v)}, []bool{ok})
					s = strconv.Itoa(int(int16(v)))
				case *array.Uint16Builder:
					b.AppendValues([]uint16{uint16(v)}, []bool{ok})
					s = strconv.Itoa(int(uint16(v)))
				case *array.Int32Builder:
					b.AppendValues([]int32{int32(v)}, []bool{ok})
					s = strconv.Itoa(int(int32(v)))
				case *array.Uint32Builder:
					b.AppendValues([]uint32{uint32(v)}, []bool{ok})
					s = strconv.FormatUint(uint64(uint32(v)), 10)
				case *array.Int64Builder:
					b.AppendValues([]int64{int64(v)}, []bool{ok})
					s = strconv.FormatInt(int64(v), 10)
				case *array.Uint64Builder:
					b.AppendValues([]uint64{v}, []bool{ok})
					s = strconv.FormatUint(v, 10)
				case *array.TimestampBuilder:
					b.AppendValues([]arrow.Timestamp{arrow.Timestamp(v)}, []bool{ok})
					s = strconv.FormatInt(int64(v), 10)
				case *array.BooleanBuilder:
					b.AppendValues([]bool{v&1 == 1}, []bool{ok})
					s = strconv.FormatBool(v&1 == 1)
				case *array.StringBuilder:
					b.AppendValues([]string{"x"}, []bool{ok})
					s = "x"
				}
				if ok {
					rows[i][f.Name] = s
				}
			}
		}
		rec := rb.NewRecordBatch()
		rb.Release()
		cols := append([]arrow.Array(nil), rec.Columns()...)
		// dst: runs of one entry, long and short, then random entries.
		ib := array.NewInt32Builder(memory.DefaultAllocator)
		for i := range n {
			k := int32(rng.IntN(300))
			if i < 600 {
				k = int32((i / (1 + i%40)) % 300)
			}
			ok := patterns[batch%len(patterns)](i)
			ib.AppendValues([]int32{k}, []bool{ok})
			if ok {
				rows[i]["dst"] = "h" + strconv.Itoa(int(k))
			}
		}
		cols = append(cols, dictColumn(t, addrDict, ib, manyEntries))
		for _, c := range []struct {
			name    string
			entries []string
		}{{"transport", []string{"a", "b", "c"}}, {"opcode_name", []string{"x", "y", "x"}}} {
			ub := array.NewUint8Builder(memory.DefaultAllocator)
			for i := range n {
				k := uint8(rng.IntN(2))
				ok := patterns[(batch+1)%len(patterns)](i)
				ub.AppendValues([]uint8{k}, []bool{ok})
				if ok {
					rows[i][c.name] = c.entries[k]
				}
			}
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			sb.AppendValues(c.entries, nil)
			entries := sb.NewArray()
			sb.Release()
			cols = append(cols, dictColumn(t, dictString, ub, entries))
			entries.Release()
		}
		for _, c := range []struct {
			name    string
			entries int
		}{{"src", 2}, {"eth_src", 256}} {
			ib := array.NewInt32Builder(memory.DefaultAllocator)
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			for k := range c.entries {
				sb.Append(c.name + strconv.Itoa(k))
			}
			entries := sb.NewArray()
			sb.Release()
			for i := range n {
				k := int32(rng.IntN(c.entries))
				ok := patterns[(batch+2)%len(patterns)](i)
				ib.AppendValues([]int32{k}, []bool{ok})
				if ok {
					rows[i][c.name] = c.name + strconv.Itoa(int(k))
				}
			}
			cols = append(cols, dictColumn(t, addrDict, ib, entries))
			entries.Release()
		}
		recs = append(recs, array.NewRecordBatch(recSchema, cols, n))
		rec.Release()
		for _, c := range cols[len(fields):] {
			c.Release()
		}
		want = append(want, rows...)
	}
	out := filepath.Join(t.TempDir(), "plain.parquet")
	w, err := CreateTable(out, FormatParquet, fileSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, readJob{Kind: "parquet", Path: out},
		readJob{Kind: "sql", Path: out, SQL: fmt.Sprintf(
			"SELECT row_group_id AS rg, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('%s') WHERE path_in_schema = 'slid' ORDER BY rg", out)},
		readJob{Kind: "sql", Path: out, SQL: fmt.Sprintf(
			"SELECT row_group_id AS rg, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('%s') WHERE path_in_schema = 'dst' ORDER BY rg", out)},
		readJob{Kind: "sql", Path: out, SQL: fmt.Sprintf(
			"SELECT row_group_id AS rg, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('%s') WHERE path_in_schema = 'frame' ORDER BY rg", out)})
	if len(got[0].Rows) != len(want) {
		t.Fatalf("%d rows read back, want %d", len(got[0].Rows), len(want))
	}
	for i, row := range got[0].Rows {
		if fmt.Sprint(row) != fmt.Sprint(want[i]) {
			t.Fatalf("row %d reads back as\n%v, want\n%v", i, row, want[i])
		}
	}
	for k, col := range []string{"slid", "dst", "frame"} {
		stats := got[1+k].Rows
		if len(stats) != len(recs) {
			t.Fatalf("statistics of %s %v: want one row per row group (%d)", col, stats, len(recs))
		}
		for rg := range stats {
			var lo, hi string
			nulls := 0
			for _, row := range want[rg*n : (rg+1)*n] {
				v, ok := row[col]
				switch {
				case !ok:
					nulls++
				case hi == "":
					lo, hi = v, v
				case col != "dst":
					a, _ := strconv.Atoi(v)
					l, _ := strconv.Atoi(lo)
					h, _ := strconv.Atoi(hi)
					lo, hi = strconv.Itoa(min(a, l)), strconv.Itoa(max(a, h))
				default:
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			w := map[string]string{"rg": strconv.Itoa(rg), "nulls": strconv.Itoa(nulls)}
			if hi != "" {
				w["lo"], w["hi"] = lo, hi
			}
			if fmt.Sprint(stats[rg]) != fmt.Sprint(w) {
				t.Errorf("row group %d: statistics of %s %v, its values say %v", rg, col, stats[rg], w)
			}
		}
	}
}

// dictColumn makes a dictionary array of type t from the indices in b
// (released) and entries.
func dictColumn(t *testing.T, typ *arrow.DictionaryType, b array.Builder, entries arrow.Array) arrow.Array {
	t.Helper()
	idx := b.NewArray()
	b.Release()
	defer idx.Release()
	return array.NewDictionaryArray(typ, idx, entries)
}
