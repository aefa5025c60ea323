package capfile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestPrefetchLongRecords: a file read ahead of its cut (prefetch.go)
// gives what one read on the caller's goroutine gives when its records are
// long enough to be cut by a chunk's end with more of them than the room in
// front of the next chunk (64 KiB), up to the longest record there may be,
// and when its last record is cut short; so does the file compressed
// (gzip, zstd), read ahead from its decompressor, whole, with its capture
// cut short, with its gzip data cut short (an error in the middle of a
// chunk), and stopped after a few frames, a chunk being read (the Reader
// then waits for it before it closes the decompressor); and so do the
// compressed files merged with another, each read ahead once its frames
// are taken.
func TestPrefetchLongRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2)) // payloads that do not compress: files larger than the read buffer
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
			data[k] = byte(rng.Uint32())
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
	gz, gzCut, gzShort, zst := filepath.Join(dir, "long.pcap.gz"), filepath.Join(dir, "cut.pcap.gz"), filepath.Join(dir, "short.pcap.gz"), filepath.Join(dir, "long.pcap.zst")
	whole1 := gzipped(t, file)
	for path, data := range map[string][]byte{gz: whole1, gzCut: gzipped(t, file[:len(file)-5000]), gzShort: whole1[:len(whole1)*2/3], zst: zstded(t, file)} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if !DecompressedAhead(path) {
			t.Fatalf("%s: not decompressed ahead", filepath.Base(path))
		}
	}
	for _, path := range []string{whole, cut, gz, gzCut, gzShort, zst} {
		for name, opts := range map[string]StreamOptions{
			"crc":   {CheckCRC: true},
			"heads": {CheckCRC: true, Undecoded: true, Untimed: true, Heads: true},
		} {
			t.Run(fmt.Sprintf("%s/%s", filepath.Base(path), name), func(t *testing.T) {
				for _, stopAfter := range []int{0, 3} {
					want := transcript(t, []string{path}, opts, stopAfter)
					for _, workers := range []int{2, 4} {
						o := opts
						o.Workers = workers
						if got := transcript(t, []string{path}, o, stopAfter); got != want {
							t.Errorf("%d workers, stopped after %d: differs from one goroutine:\n%s", workers, stopAfter, firstDifference(got, want))
						}
					}
				}
			})
		}
	}
	// Merged, the compressed files are decompressed ahead too, each once
	// its frames are taken (fileCut.prefetchLater): all four at once here,
	// their times the same, one with its data cut short.
	set := []string{gz, zst, gzShort, cut}
	for _, stopAfter := range []int{0, 3, 100} {
		opts := StreamOptions{CheckCRC: true, Undecoded: true, Untimed: true, Heads: true}
		want := transcriptOf(t, set, opts, stopAfter, true)
		for _, workers := range []int{1, 2, 4} {
			opts.Workers = workers
			if got := transcript(t, set, opts, stopAfter); got != want {
				t.Errorf("merged, %d workers, stopped after %d: differs from one goroutine:\n%s", workers, stopAfter, firstDifference(got, want))
			}
		}
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zstded(t *testing.T, data []byte) []byte {
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(data, nil)
}

// TestDecompressedAhead: the files decompressed ahead are regular gzip,
// bzip2 and zstd files larger than the read buffer; not a plain capture,
// a format the reader names but does not read (xz), a small file, nor a
// FIFO (which asking does not open).
func TestDecompressedAhead(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, readBufLen+1)
	write := func(name string, head []byte, size int) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, append(append([]byte(nil), head...), big[:size-len(head)]...), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	n := len(big)
	for path, want := range map[string]bool{
		write("a.gz", []byte{0x1f, 0x8b}, n): true, write("a.bz2", []byte("BZh"), n): true, write("a.zst", []byte{0x28, 0xb5, 0x2f, 0xfd}, n): true,
		write("small.gz", []byte{0x1f, 0x8b}, 1000): false, write("a.xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}, n): false,
		write("a.pcap", []byte{0xd4, 0xc3, 0xb2, 0xa1}, n): false, fifo: false, dir: false, filepath.Join(dir, "absent"): false,
	} {
		if got := DecompressedAhead(path); got != want {
			t.Errorf("DecompressedAhead(%s) = %v, want %v", filepath.Base(path), got, want)
		}
	}
}
