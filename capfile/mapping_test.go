package capfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// mappedCapture writes a pcap file of n RoCE frames to dir, pcapng if ng,
// and returns its path, its bytes and where each record ends. The pieces
// (split.go) find pcapng blocks without a wrong guess, so that the workers
// read on past where the file is cut; the zeros that follow a pcap file cut
// inside a page read as empty records, up to the page's end.
func mappedCapture(t *testing.T, dir string, n int, ng bool) (string, []byte, []int) {
	t.Helper()
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = rocePacket(t, 0x04, 100+i%200)
	}
	data, path := pcapOf(false, frames...), filepath.Join(dir, "c.pcap")
	if ng {
		data, path = pcapngOf(t, false, frames...), filepath.Join(dir, "c.pcapng")
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var ends []int
	for i, d := range readAll(t, path) {
		if i > 0 {
			ends = append(ends, int(d.Offset))
		}
	}
	return path, data, append(ends, len(data))
}

// wholeBefore counts the records of ends that end at or before cut.
func wholeBefore(ends []int, cut int) int {
	n := 0
	for n < len(ends) && ends[n] <= cut {
		n++
	}
	return n
}

// TestMappedFileShrinks: a mapped capture (StreamOptions.Map) that another
// program cuts short while it is read ends where it was cut, as one read
// with read(2) does, on the caller's goroutine and in pieces on the
// workers: no crash, every frame before the cut handed out, the file's
// damage told.
func TestMappedFileShrinks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers int
		piece   int64
	}{{"caller", 1, 0}, {"pieces", 2, 4000}} {
		t.Run(tc.name, func(t *testing.T) {
			path, data, ends := mappedCapture(t, t.TempDir(), 20000, true)
			mapSmall(t, 64<<10)
			if tc.piece > 0 {
				cutInPieces(t, tc.piece)
			}
			var told []error
			s, err := OpenStream([]string{path}, StreamOptions{Workers: tc.workers, Heads: true, CheckCRC: true, Map: true,
				OnFileError: func(err error) { told = append(told, err) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.files[0].r.mapped == nil {
				t.Fatal("the file is not mapped")
			}
			n := 0
			for ; n < 100; n++ {
				if _, _, err := s.Next(); err != nil {
					t.Fatal(err)
				}
			}
			cut := len(data) / 3
			if err := os.Truncate(path, int64(cut)); err != nil {
				t.Fatal(err)
			}
			for {
				_, _, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("frame %d: %v", n+1, err)
				}
				n++
			}
			want := wholeBefore(ends, cut)
			switch {
			case tc.workers == 1 && n != want:
				t.Errorf("%d frames, want the %d before the cut", n, want)
			case n < want:
				// Pieces decoded before the cut are handed out too.
				t.Errorf("%d frames, want at least the %d before the cut", n, want)
			}
			if tc.workers == 1 && (len(told) != 1 || !strings.Contains(told[0].Error(), "cut short")) {
				t.Errorf("told %v, want the last record cut short", told)
			}
			if m := s.files[0].r.mapped; m.released == 0 {
				t.Error("no page of the mapping read was given back")
			}
		})
	}
}

// TestMappedFileShrinksUnderTheReader: cut short inside the chunk being
// read, the mapped file faults on the caller's goroutine, which with
// debug.SetPanicOnFault panics: Faulted names the file and where.
func TestMappedFileShrinksUnderTheReader(t *testing.T) {
	path, data, _ := mappedCapture(t, t.TempDir(), 20000, false)
	mapSmall(t, 8<<20) // the whole file shown at once
	s, err := OpenStream([]string{path}, StreamOptions{Map: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cut := len(data) / 3
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
	var ferr *FileError
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if v := recover(); v != nil {
				if ferr = Faulted(v); ferr == nil {
					t.Errorf("panic %v, which Faulted does not name", v)
				}
			}
		}()
		for {
			if _, _, err := s.Next(); err == io.EOF {
				return
			}
		}
	}()
	if ferr == nil {
		t.Fatal("read to the end without a fault")
	}
	if ferr.Name != path || ferr.Offset < int64(cut) || !errors.Is(ferr, errShrank) {
		t.Errorf("Faulted = %v, want %s at offset %d or after, shrank", ferr, path, cut)
	}
	if Faulted(errors.New("not a fault")) != nil {
		t.Error("Faulted named a plain error")
	}
}

// TestMappedFileGrows: a capture that grows after it was mapped is read on
// past its mapping, as one read with read(2) is: alone on the caller's
// goroutine, and as the second file of a stream, read ahead in pieces
// only once its first frame is handed out (Stream.attach), when it has
// grown already: the pieces end at the mapping's end.
func TestMappedFileGrows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers int
		two     bool
	}{{"caller", 1, false}, {"pieces, second file", 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, data, ends := mappedCapture(t, dir, 2000, tc.two)
			half := ends[999]
			if err := os.WriteFile(path, data[:half], 0o644); err != nil {
				t.Fatal(err)
			}
			paths, want := []string{path}, len(ends)
			if tc.two {
				first := filepath.Join(dir, "first.pcapng")
				if err := os.WriteFile(first, data, 0o644); err != nil {
					t.Fatal(err)
				}
				paths, want = []string{first, path}, 2*len(ends)
				cutInPieces(t, 4000)
			}
			mapSmall(t, 4096)
			s, err := OpenStream(paths, StreamOptions{Map: true, Workers: tc.workers, Heads: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(data[half:]); err != nil {
				t.Fatal(err)
			}
			f.Close()
			n := 0
			for ; ; n++ {
				if _, _, err := s.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if n != want {
				t.Errorf("%d frames, want %d", n, want)
			}
		})
	}
}
