package correlate

import (
	"bufio"
	"bytes"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestTextTableRows: the rows write visits only a batch's columns holding
// a value, and writes dictionaries by index from values encoded once; the
// text must be what writing every cell in turn gives (textRowsByCell),
// through the cases that takes apart: null columns first, between and
// last, a column with some nulls, dictionaries with int32 and uint8
// indices (values that need CSV quotes or JSON escapes, null rows), NaN
// for JSON, and a batch whose every column is null.
func TestTextTableRows(t *testing.T) {
	mem := memory.NewGoAllocator()
	dict := func(idxType arrow.DataType, values []string, idx []int, valid []bool) arrow.Array {
		d := array.NewStringBuilder(mem)
		d.AppendValues(values, nil)
		ib := array.NewBuilder(mem, idxType) // a null index is a null row
		for i, v := range idx {
			if !valid[i] {
				ib.AppendNull()
				continue
			}
			switch b := ib.(type) {
			case *array.Int32Builder:
				b.Append(int32(v))
			case *array.Uint8Builder:
				b.Append(uint8(v))
			}
		}
		return array.NewDictionaryArray(&arrow.DictionaryType{IndexType: idxType, ValueType: arrow.BinaryTypes.String}, ib.NewArray(), d.NewArray())
	}
	ints := func(v []int64, valid []bool) arrow.Array {
		b := array.NewInt64Builder(mem)
		b.AppendValues(v, valid)
		return b.NewArray()
	}
	floats := func(v []float64) arrow.Array {
		b := array.NewFloat64Builder(mem)
		b.AppendValues(v, nil)
		return b.NewArray()
	}
	allNull := func(n int) arrow.Array {
		b := array.NewUint16Builder(mem)
		b.AppendNulls(n)
		return b.NewArray()
	}
	const n = 4
	all, some := []bool{true, true, true, true}, []bool{true, false, true, false}
	cols := []arrow.Array{
		allNull(n),
		ints([]int64{1, -2, 3, math.MaxInt64}, all),
		allNull(n),
		dict(arrow.PrimitiveTypes.Int32, []string{"a,b", `say "x"`, "#c", ""}, []int{2, 0, 1, 3}, some),
		dict(arrow.PrimitiveTypes.Uint8, []string{"RC_SEND_ONLY", "<&>", "\x01"}, []int{2, 1, 0, 0}, all),
		ints([]int64{5, 6, 7, 8}, some),
		floats([]float64{1.5, math.NaN(), math.Inf(1), 0}),
		allNull(n),
		allNull(n),
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: string(rune('a' + i)), Type: c.DataType(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	nullCols := make([]arrow.Array, len(cols))
	for i := range nullCols {
		b := array.NewBuilder(mem, cols[i].DataType())
		b.AppendNulls(2)
		nullCols[i] = b.NewArray()
	}
	// And the columns 3000 times over: 12000 rows, made into text in
	// chunks of textChunkRows on several goroutines.
	long := make([]arrow.Array, len(cols))
	for i, c := range cols {
		many := make([]arrow.Array, 3000)
		for k := range many {
			many[k] = c
		}
		var err error
		if long[i], err = array.Concatenate(many, mem); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		format   Format
		parallel bool
	}{{FormatCSV, true}, {FormatJSONL, true}, {FormatCSV, false}, {FormatJSONL, false}} {
		format := c.format
		for _, batch := range [][]arrow.Array{cols, nullCols, long} {
			rec := array.NewRecordBatch(schema, batch, int64(batch[0].Len()))
			var got bytes.Buffer
			bw := bufio.NewWriter(&got)
			tt, err := newTextTable(bw, schema, format, c.parallel)
			if err != nil {
				t.Fatal(err)
			}
			start := got.Len() + bw.Buffered()
			if err := tt.write(rec); err != nil {
				t.Fatal(err)
			}
			bw.Flush()
			if dicts := 0; rec.NumRows() == n {
				for _, l := range tt.live {
					dicts += int(b2u8(l.dict))
				}
				if dicts != 2 {
					t.Errorf("format %d: %d dictionaries written by index, want 2", format, dicts)
				}
			}
			if want := textRowsByCell(rec, tt); got.String()[start:] != want {
				t.Errorf("format %d, %d rows:\n%q\nwant\n%q", format, rec.NumRows(), got.String()[start:], want)
			}
		}
	}
}

// textRowsByCell is the rows of rec as writing every cell in turn gives
// them: the reference textTable.write must agree with.
func textRowsByCell(rec arrow.RecordBatch, t *textTable) string {
	var b []byte
	for r := range int(rec.NumRows()) {
		if t.csv {
			for c, col := range rec.Columns() {
				if c > 0 {
					b = append(b, ',')
				}
				if !col.IsNull(r) {
					b = appendValue(b, col, r, true)
				}
			}
		} else {
			b = append(b, '{')
			first := true
			for c, col := range rec.Columns() {
				if col.IsNull(r) || isNaNOrInf(col, r) {
					continue
				}
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, t.names[c]...)
				b = appendValue(b, col, r, false)
			}
			b = append(b, '}')
		}
		b = append(b, '\n')
	}
	return string(b)
}
