package correlate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// FuzzExportParquet: any capture that exports gives a Parquet file that
// arrow-go's own reader reads back to the rows of the Arrow IPC file
// exported from it, value for value, one row per frame. The Parquet file
// is laid out by ibscope itself (pages, dictionaries, definition levels),
// the IPC file by arrow-go from the same batches: the two must agree
// whatever frames the capture holds.
func FuzzExportParquet(f *testing.F) {
	const seedRecords = 6 // small seeds: the fuzzer minimizes each new input
	for _, path := range generatedCaptures(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if _, frames, err := testcap.FileRecords(path); err == nil && len(frames) > seedRecords {
			b = b[:frames[seedRecords].Offset]
		}
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		capture := filepath.Join(dir, "c.pcap")
		if err := os.WriteFile(capture, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pq, ipc := filepath.Join(dir, "c.parquet"), filepath.Join(dir, "c.arrow")
		stPQ, errPQ := Export([]string{capture}, pq, ExportOptions{Format: FormatParquet})
		stIPC, errIPC := Export([]string{capture}, ipc, ExportOptions{Format: FormatArrow})
		if (errPQ == nil) != (errIPC == nil) || stPQ.Frames != stIPC.Frames {
			t.Fatalf("Parquet: %d frames, %v; Arrow: %d frames, %v", stPQ.Frames, errPQ, stIPC.Frames, errIPC)
		}
		if errPQ != nil {
			return
		}
		got, want := readTableGo(t, pq, FormatParquet), readTableGo(t, ipc, FormatArrow)
		defer got.Release()
		defer want.Release()
		if got.NumRows() != stPQ.Frames || want.NumRows() != stPQ.Frames || got.NumCols() != want.NumCols() {
			t.Fatalf("Parquet %d rows %d columns, Arrow %d rows %d columns, %d frames", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols(), stPQ.Frames)
		}
		for i := range int(want.NumCols()) {
			name := want.Schema().Field(i).Name
			g, w := columnStrings(t, got, name), columnStrings(t, want, name)
			for row := range w {
				if g[row] != w[row] {
					t.Fatalf("row %d column %s: Parquet reads back %q, Arrow %q", row, name, g[row], w[row])
				}
			}
		}
	})
}
