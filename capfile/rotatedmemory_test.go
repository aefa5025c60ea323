package capfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// TestRotatedSetMemory: the files of a rotated set waiting their turn in
// the merge hold their first frame and little else, and a file read to its
// end holds nothing: 100 files of 3000 frames (580 KB each), read a third
// of the way, hold at most 100 KB a file, on one goroutine or read ahead
// (each held its whole file, 580 KB, and read ahead a batch, or a piece, and
// 2 batches more).
func TestRotatedSetMemory(t *testing.T) {
	dir := t.TempDir()
	frame := rocePacket(t, 0x07, 128)
	var paths []string
	for i := range 100 {
		data := memCapture(t, decode.LinkTypeEthernet, 3000, frame)
		for off := 24; off+16 <= len(data); off += 16 + len(frame) { // file i's times after file i-1's
			data[off] += byte(i) // the seconds' low byte
		}
		p := filepath.Join(dir, fmt.Sprintf("r%03d.pcap", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, c := range []struct{ workers, maxBytes int }{{1, 100 << 10}, {2, 100 << 10}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := OpenStream(paths, StreamOptions{Workers: c.workers, Heads: true, HeadsOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 100 * 3000 / 3 {
			if _, _, err := s.Next(); err == io.EOF {
				t.Fatal("the set ended early")
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perFile := int(after.HeapAlloc-before.HeapAlloc) / len(paths)
		t.Logf("%d workers: %d bytes a file", c.workers, perFile)
		if perFile > c.maxBytes {
			t.Errorf("%d workers: %d bytes a file held, want at most %d", c.workers, perFile, c.maxBytes)
		}
		s.Close()
	}
}
