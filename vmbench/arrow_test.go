package vmbench

import (
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sumArrowColumns adds up the named integer columns over every row of an
// Arrow IPC file (correlate -o FILE.arrow); nulls count 0.
func sumArrowColumns(t *testing.T, path string, names ...string) map[string]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("arrow: %v", err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.NewGoAllocator()))
	if err != nil {
		t.Fatalf("arrow %s: %v", path, err)
	}
	defer r.Close()
	sums := map[string]uint64{}
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatch(i)
		if err != nil {
			t.Fatalf("arrow %s: record %d: %v", path, i, err)
		}
		for _, n := range names {
			idx := rec.Schema().FieldIndices(n)
			if len(idx) == 0 {
				t.Fatalf("arrow %s: no column %s in %v", path, n, rec.Schema())
			}
			col := rec.Column(idx[0])
			for j := 0; j < col.Len(); j++ {
				if col.IsNull(j) {
					continue
				}
				switch c := col.(type) {
				case *array.Uint64:
					sums[n] += c.Value(j)
				case *array.Int64:
					sums[n] += uint64(c.Value(j))
				case *array.Uint32:
					sums[n] += uint64(c.Value(j))
				default:
					t.Fatalf("arrow %s: column %s is %s", path, n, col.DataType())
				}
			}
		}
	}
	return sums
}
