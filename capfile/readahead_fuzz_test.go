package capfile

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// FuzzStreamWorkers: any two files, merged and decoded on two workers (read
// ahead), give what one goroutine gives: the same frames, errors, counts
// and end (TestReadAheadSameAsOneCore's promise, for damage it did not think
// of), and so does a file cut in pieces. Read ahead works on regular
// files only, so the bytes go to files.
func FuzzStreamWorkers(f *testing.F) {
	const seedRecords = 4
	for _, name := range generatedFiles(f) {
		b, err := os.ReadFile(filepath.Join(pcapsDir, name))
		if err != nil {
			f.Fatal(err)
		}
		if frames := readAll(f, filepath.Join(pcapsDir, name)); len(frames) > seedRecords {
			b = b[:frames[seedRecords].Offset]
		}
		f.Add(b, len(b), false)
		f.Add(append(append([]byte(nil), b...), b...), len(b), true) // two files
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(pcapFile(true, rocePacket(f, 0x04, 8), rocePacket(f, 0x0A, 32)))
	zw.Close()
	f.Add(gz.Bytes(), gz.Len(), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, cut int, heads bool) {
		if cut < 0 || cut > len(data) {
			cut = len(data)
		}
		var paths []string
		for i, part := range [][]byte{data[:cut], data[cut:]} {
			if len(part) == 0 {
				continue
			}
			path := filepath.Join(dir, []string{"a.pcap", "b.pcap"}[i])
			if err := os.WriteFile(path, part, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		// One set of options an input: each stream costs a few ms (the
		// batches are allocated per file), and the fuzzer minimizes at that
		// pace. With heads, the workers keep only each frame's head and
		// compute the lines and projections the caller reads.
		opts := StreamOptions{CheckCRC: true, Untimed: true, Heads: heads, Format: func(dst []byte, f *decode.Frame, err error) []byte {
			return f.AppendSummary(dst, "")
		}, Project: func(int) Projection { return &lineProjection{} }}
		want := transcript(t, paths, opts, 0)
		opts.Workers = 2
		if got := transcript(t, paths, opts, 0); got != want {
			t.Fatalf("2 workers: the stream differs from one decoded on one goroutine:\n%s", firstDifference(got, want))
		}
		if !heads {
			return
		}
		// Without Format, a pcap file is cut in pieces (split.go): of a
		// size the input chooses, from 1 byte on.
		opts.Format, opts.Workers = nil, 1
		want = transcript(t, paths, opts, 0)
		cutInPieces(t, int64(1+cut%1000))
		opts.Workers = 2
		if got := transcript(t, paths, opts, 0); got != want {
			t.Fatalf("pieces of %d bytes: the stream differs from one decoded on one goroutine:\n%s", 1+cut%1000, firstDifference(got, want))
		}
		// Mapped (mapping.go), shown a page at a time: in pieces, and on
		// the caller's goroutine.
		mapSmall(t, 4096)
		opts.Map = true
		for _, workers := range []int{2, 1} {
			opts.Workers = workers
			if got := transcript(t, paths, opts, 0); got != want {
				t.Fatalf("mapped, %d workers: the stream differs from one decoded on one goroutine:\n%s", workers, firstDifference(got, want))
			}
		}
	})
}
