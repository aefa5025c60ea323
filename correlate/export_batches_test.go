package correlate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// TestExportManyBatches exports a capture of several batches (the batches'
// slices are reused, the address dictionaries restart per batch) and reads
// it back with arrow-go's own Parquet and IPC readers: the schema is the
// packet schema (addresses as strings), and every row holds what the decode
// contract says of its frame in a few columns.
func TestExportManyBatches(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "many.pcap")
	writeStream(t, capture, 2*BatchRows+BatchRows/3, t0Ns, 1000)

	want := contractRows(t, capture)
	if len(want) <= 2*BatchRows {
		t.Fatalf("capture has %d frames, want more than two batches", len(want))
	}
	for _, format := range []Format{FormatParquet, FormatArrow} {
		t.Run(format.String(), func(t *testing.T) {
			out := filepath.Join(dir, "many"+format.Ext())
			exportTo(t, capture, out, ExportOptions{Format: format})
			tbl := readTableGo(t, out, format)
			defer tbl.Release()
			schema := PacketSchema(nil)
			for i, f := range schema.Fields() {
				if g := tbl.Schema().Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
					t.Errorf("column %d is %s %s, want %s %s", i, g.Name, g.Type, f.Name, f.Type)
				}
			}
			if int(tbl.NumRows()) != len(want) {
				t.Fatalf("%d rows, want %d", tbl.NumRows(), len(want))
			}
			for _, name := range []string{"frame", "src", "dst", "psn", "opcode_name", "aeth_msn", "icrc_ok", "sgid", "error"} {
				got := columnStrings(t, tbl, name)
				bad := 0
				for i, w := range want {
					v, ok := w[name]
					if !ok {
						v = array.NullValueStr
					}
					if got[i] != v {
						if bad++; bad <= 5 {
							t.Errorf("row %d: %s = %q, want %q", i, name, got[i], v)
						}
					}
				}
			}
		})
	}
}

func readTableGo(t *testing.T, path string, format Format) arrow.Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if format == FormatParquet {
		tbl, err := pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(memory.DefaultAllocator),
			pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatal(err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	tbl := array.NewTableFromRecords(r.Schema(), recs)
	for _, rec := range recs {
		rec.Release()
	}
	return tbl
}

// columnStrings is every value of the named column as ValueStr gives it.
func columnStrings(t *testing.T, tbl arrow.Table, name string) []string {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %s", name)
	}
	var out []string
	for _, c := range tbl.Column(idx[0]).Data().Chunks() {
		for i := range c.Len() {
			out = append(out, c.ValueStr(i))
		}
	}
	return out
}
