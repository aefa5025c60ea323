package correlate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The text tables, for readers without Arrow or Parquet (pandas without
// pyarrow, as Debian 12 ships it; awk; a spreadsheet): the same columns
// and rows as the Parquet file, written row by row from the same record
// batches.
//
// CSV: a first line "# " followed by a JSON object giving each column's
// pandas dtype (nullable: "Int64", "UInt16", "boolean", "string",
// "float64"), then a header row, then one row per record; null is an
// empty field; timestamps are integers, ns since the epoch (UTC), as are
// the *_ns columns everywhere; booleans true/false. So:
//
//	dtype = json.loads(open("p.csv").readline()[1:])
//	df = pd.read_csv("p.csv", skiprows=1, dtype=dtype)
//
// JSON Lines: one object per row, keys the column names, null values left
// out (as decode --json does), timestamps integer ns, NaN and infinities
// null: pd.read_json("p.jsonl", lines=True).
type textTable struct {
	bw     *bufio.Writer
	csv    bool
	fields []arrow.Field
	names  [][]byte // JSON: each column's quoted name and colon
	// live is the batch's columns that hold a value (most of an export's
	// ~150 are null in every row of a batch: a VLAN, a GRH, an AETH...),
	// the only ones a row visits; commas is a CSV row's separators, of
	// which a row takes the runs between them.
	live   []liveColumn
	commas []byte
	// chunks are the text of the rows being written, textChunkRows each,
	// one per goroutine making them (GOMAXPROCS, up to maxTextChunks).
	chunks [][]byte
}

// textChunkRows is how many rows one goroutine makes into text at a time:
// the text of a round (about 300 bytes a CSV row of export, 450 of JSON
// Lines) is held until it is written, so memory stays in a few MB.
const textChunkRows = 4096

// maxTextChunks bounds the goroutines making one batch's text.
const maxTextChunks = 8

// liveColumn is a column of the batch being written that holds a value:
// its index, and whether it holds nulls too (else IsNull is not asked).
// A dictionary of strings with int32 or uint8 indices (the addresses, the
// file, the opcode names...) has each of its values written once a batch,
// in enc (value i: enc[off[i]:off[i+1]]), and its rows take them by index.
type liveColumn struct {
	c     int
	col   arrow.Array
	nulls bool
	dict  bool
	idx32 []int32
	idx8  []uint8
	off   []int
	enc   []byte
}

// newTextTable writes the CSV's dtype line and header, or nothing for
// JSON Lines; parallel has the rows made into text on several goroutines
// (as newParquetWriter's columns).
func newTextTable(bw *bufio.Writer, schema *arrow.Schema, format Format, parallel bool) (*textTable, error) {
	chunks := 1
	if parallel {
		chunks = min(max(runtime.GOMAXPROCS(0), 1), maxTextChunks)
	}
	t := &textTable{bw: bw, csv: format == FormatCSV, fields: schema.Fields(), chunks: make([][]byte, chunks)}
	if !t.csv {
		for _, f := range t.fields {
			q, _ := json.Marshal(f.Name)
			t.names = append(t.names, append(q, ':'))
		}
		return t, nil
	}
	b := []byte("# {")
	for i, f := range t.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ": "...)
		b = appendJSONString(b, pandasDtype(f.Type))
	}
	b = append(b, "}\n"...)
	for i, f := range t.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVField(b, f.Name)
	}
	b = append(b, '\n')
	_, err := bw.Write(b)
	return t, err
}

// pandasDtype is the pandas dtype a column of type t reads as: the
// nullable integer and boolean types, since any column may hold nulls.
func pandasDtype(t arrow.DataType) string {
	switch t.ID() {
	case arrow.INT8:
		return "Int8"
	case arrow.INT16:
		return "Int16"
	case arrow.INT32:
		return "Int32"
	case arrow.INT64, arrow.TIMESTAMP:
		return "Int64"
	case arrow.UINT8:
		return "UInt8"
	case arrow.UINT16:
		return "UInt16"
	case arrow.UINT32:
		return "UInt32"
	case arrow.UINT64:
		return "UInt64"
	case arrow.FLOAT32, arrow.FLOAT64:
		return "float64"
	case arrow.BOOL:
		return "boolean"
	}
	return "string"
}

// write writes the batch's rows.
func (t *textTable) write(rec arrow.RecordBatch) error {
	cols := rec.Columns()
	if len(cols) != len(t.fields) {
		return fmt.Errorf("batch of %d columns for a table of %d", len(cols), len(t.fields))
	}
	live := t.live[:0]
	for c, col := range cols {
		if n := col.NullN(); n < col.Len() {
			if len(live) < cap(live) {
				live = live[:len(live)+1] // keep the slot's enc and off for reuse
			} else {
				live = append(live, liveColumn{})
			}
			l := &live[len(live)-1]
			l.c, l.col, l.nulls = c, col, n > 0
			t.encodeDict(l)
		}
	}
	t.live = live
	if len(t.commas) < len(cols) {
		t.commas = bytes.Repeat([]byte{','}, len(cols))
	}
	rows := int(rec.NumRows())
	for lo := 0; lo < rows; lo += len(t.chunks) * textChunkRows {
		// A round: up to len(t.chunks) chunks of rows, each made into text
		// on a goroutine of its own, then written in order.
		n := min((rows-lo+textChunkRows-1)/textChunkRows, len(t.chunks))
		if n == 1 {
			t.chunks[0] = t.rows(t.chunks[0][:0], lo, min(lo+textChunkRows, rows), len(cols))
		} else {
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					a := lo + i*textChunkRows
					t.chunks[i] = t.rows(t.chunks[i][:0], a, min(a+textChunkRows, rows), len(cols))
				})
			}
			wg.Wait()
		}
		for _, c := range t.chunks[:n] {
			if _, err := t.bw.Write(c); err != nil {
				return err
			}
		}
	}
	for i := range t.live { // the batch is the caller's to release: hold none of it
		t.live[i].col, t.live[i].idx32, t.live[i].idx8 = nil, nil, nil
	}
	return nil
}

// rows appends rows lo to hi of the batch t.live was made for (ncols
// columns) to b as text, one line each. It reads only the batch and
// t.live, so that chunks of a batch may be made on several goroutines.
func (t *textTable) rows(b []byte, lo, hi, ncols int) []byte {
	for r := lo; r < hi; r++ {
		if t.csv {
			at := 0 // the column the row is at: a comma before each but the first
			for _, l := range t.live {
				b = append(b, t.commas[:l.c-at]...)
				at = l.c
				if !l.nulls || !l.col.IsNull(r) {
					b = l.append(b, r, true)
				}
			}
			b = append(b, t.commas[:max(ncols-1-at, 0)]...)
		} else {
			b = append(b, '{')
			first := true
			for _, l := range t.live {
				if l.nulls && l.col.IsNull(r) || isNaNOrInf(l.col, r) {
					continue
				}
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, t.names[l.c]...)
				b = l.append(b, r, false)
			}
			b = append(b, '}')
		}
		b = append(b, '\n')
	}
	return b
}

// encodeDict readies l, if its column is a dictionary of strings with
// int32 or uint8 indices no longer than its rows, to write each row by its
// index: every value of the dictionary written once, as CSV or JSON.
func (t *textTable) encodeDict(l *liveColumn) {
	l.dict, l.idx32, l.idx8 = false, nil, nil
	a, ok := l.col.(*array.Dictionary)
	if !ok {
		return
	}
	d, ok := a.Dictionary().(*array.String)
	if !ok || d.Len() > a.Len() {
		return // a dictionary larger than the batch: cheaper row by row
	}
	switch ix := a.Indices().(type) {
	case *array.Int32:
		l.idx32 = ix.Int32Values()
	case *array.Uint8:
		l.idx8 = ix.Uint8Values()
	default:
		return
	}
	l.off, l.enc = append(l.off[:0], 0), l.enc[:0]
	for i := range d.Len() {
		l.enc = appendText(l.enc, d.Value(i), t.csv)
		l.off = append(l.off, len(l.enc))
	}
	l.dict = true
}

// append appends row r of l's column, not null, as appendValue does.
func (l *liveColumn) append(b []byte, r int, csv bool) []byte {
	if !l.dict {
		return appendValue(b, l.col, r, csv)
	}
	var i int
	if l.idx32 != nil {
		i = int(l.idx32[r])
	} else {
		i = int(l.idx8[r])
	}
	if i < 0 || i+1 >= len(l.off) {
		return appendValue(b, l.col, r, csv) // not an index of the dictionary: as Arrow reads it
	}
	return append(b, l.enc[l.off[i]:l.off[i+1]]...)
}

// isNaNOrInf: JSON has no such numbers; the value is left out as null.
func isNaNOrInf(col arrow.Array, r int) bool {
	switch a := col.(type) {
	case *array.Float64:
		v := a.Value(r)
		return math.IsNaN(v) || math.IsInf(v, 0)
	case *array.Float32:
		v := float64(a.Value(r))
		return math.IsNaN(v) || math.IsInf(v, 0)
	}
	return false
}

// appendValue appends row r of col, not null, as a CSV field or a JSON
// value.
func appendValue(b []byte, col arrow.Array, r int, csv bool) []byte {
	switch a := col.(type) {
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(r)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(r)), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(r)), 10)
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(r), 10)
	case *array.Timestamp:
		return strconv.AppendInt(b, int64(a.Value(r)), 10) // ns: the tables' only unit
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(r)), 10)
	case *array.Uint16:
		return strconv.AppendUint(b, uint64(a.Value(r)), 10)
	case *array.Uint32:
		return strconv.AppendUint(b, uint64(a.Value(r)), 10)
	case *array.Uint64:
		return strconv.AppendUint(b, a.Value(r), 10)
	case *array.Float64:
		return strconv.AppendFloat(b, a.Value(r), 'g', -1, 64)
	case *array.Float32:
		return strconv.AppendFloat(b, float64(a.Value(r)), 'g', -1, 32)
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(r))
	case *array.String:
		return appendText(b, a.Value(r), csv)
	case *array.Dictionary:
		d, ok := a.Dictionary().(*array.String)
		if !ok {
			return appendText(b, a.ValueStr(r), csv)
		}
		return appendText(b, d.Value(a.GetValueIndex(r)), csv)
	}
	return appendText(b, col.ValueStr(r), csv)
}

func appendText(b []byte, s string, csv bool) []byte {
	if csv {
		return appendCSVField(b, s)
	}
	return appendJSONString(b, s)
}

// appendCSVField quotes s as RFC 4180 says when it must be: a comma, a
// quote, a line break, a leading '#' (which a reader might take for a
// comment) or nothing at all (an empty string, not a null).
func appendCSVField(b []byte, s string) []byte {
	quote := s == "" || s[0] == '#'
	for i := 0; i < len(s) && !quote; i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			quote = true
		}
	}
	if !quote {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// appendJSONString appends s as a JSON string (encoding/json's escaping).
// Text cells are written once a row, so the common case, printable ASCII
// that needs no escape, is appended as it is rather than through
// json.Marshal, which allocates for every cell.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
