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
// is no multiple of 8) and the chunks null in every row of a string column
// and of a delta-encoded one, and reads them back with DuckDB, row for row,
// with the statistics of a column that keeps them.
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
		{Name: "src", Type: arrow.BinaryTypes.String, Nullable: true},    // dictionary-encoded
	}
	schema := arrow.NewSchema(fields, nil)
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
			case f.Name == "psn" || f.Name == "src":
				valid = func(int) bool { return false }
			case !f.Nullable:
				valid = func(int) bool { return true }
			}
			for i := range n {
				ok := valid(i)
				v := rng.Uint64()
				if i < 4 { // the extremes
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
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
		want = append(want, rows...)
	}
	out := filepath.Join(t.TempDir(), "plain.parquet")
	w, err := CreateTable(out, FormatParquet, schema)
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
			"SELECT row_group_id AS rg, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('%s') WHERE path_in_schema = 'slid' ORDER BY rg", out)})
	if len(got[0].Rows) != len(want) {
		t.Fatalf("%d rows read back, want %d", len(got[0].Rows), len(want))
	}
	for i, row := range got[0].Rows {
		if fmt.Sprint(row) != fmt.Sprint(want[i]) {
			t.Fatalf("row %d reads back as\n%v, want\n%v", i, row, want[i])
		}
	}
	stats := got[1].Rows
	if len(stats) != len(recs) {
		t.Fatalf("statistics of slid %v: want one row per row group (%d)", stats, len(recs))
	}
	for rg := range stats {
		lo, hi, nulls := 1<<16, -1, 0
		for _, row := range want[rg*n : (rg+1)*n] {
			v, err := strconv.Atoi(row["slid"])
			if err != nil {
				nulls++
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		w := map[string]string{"rg": strconv.Itoa(rg), "nulls": strconv.Itoa(nulls)}
		if hi >= 0 {
			w["lo"], w["hi"] = strconv.Itoa(lo), strconv.Itoa(hi)
		}
		if fmt.Sprint(stats[rg]) != fmt.Sprint(w) {
			t.Errorf("row group %d: statistics of slid %v, its values say %v", rg, stats[rg], w)
		}
	}
}
