package capfile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPrefetchLongRecords: a file read ahead of its cut (prefetch.go)
// gives what one read on the caller's goroutine gives when its records are
// long enough to be cut by a chunk's end with more of them than the room in
// front of the next chunk (64 KiB), up to the longest record there may be,
// and when its last record is cut short.
func TestPrefetchLongRecords(t *testing.T) {
	frame := rocePacket(t, 0x0A, 1000)
	le := binary.LittleEndian
	file := le.AppendUint32(nil, 0xa1b23c4d)
	file = le.AppendUint16(le.AppendUint16(file, 2), 4)
	file = le.AppendUint32(le.AppendUint32(file, 0), 0)
	file = le.AppendUint32(le.AppendUint32(file, maxRecordLen), 1) // Ethernet
	sizes := []int{len(frame), 70_000, 1200, 900_000, 130, prefetchHead + 1, maxRecordLen, 4000, prefetchHead - 16}
	for i := range 60 {
		n := sizes[i%len(sizes)]
		data := make([]byte, n)
		copy(data, frame)
		for k := len(frame); k < n; k++ {
			data[k] = byte(k * 7)
		}
		file = le.AppendUint32(le.AppendUint32(file, uint32(i)), uint32(i*1000))
		file = append(le.AppendUint32(le.AppendUint32(file, uint32(n)), uint32(n)), data...)
	}
	dir := t.TempDir()
	whole, cut := filepath.Join(dir, "long.pcap"), filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(whole, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, file[:len(file)-5000], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{whole, cut} {
		for name, opts := range map[string]StreamOptions{
			"crc":   {CheckCRC: true},
			"heads": {CheckCRC: true, Undecoded: true, Untimed: true, Heads: true},
		} {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(path), name), func(t *testing.T) {
				want := transcript(t, []string{path}, opts, 0)
				for _, workers := range []int{2, 4} {
					o := opts
					o.Workers = workers
					if got := transcript(t, []string{path}, o, 0); got != want {
						t.Errorf("%d workers: differs from one goroutine:\n%s", workers, firstDifference(got, want))
					}
				}
			})
		}
	}
}
