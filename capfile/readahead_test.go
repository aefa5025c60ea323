package capfile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ibscope/ibscope/decode"
)

// transcript reads paths as a Stream with opts and writes down everything
// a caller sees: each frame (file, record, headers, CRC results) with its
// error, each decode and file error told, the counts and the resolution.
// stopAfter, when above 0, sets opts.Stop after that many frames.
func transcript(t *testing.T, paths []string, opts StreamOptions, stopAfter int) string {
	t.Helper()
	return transcriptOf(t, paths, opts, stopAfter, false)
}

// transcriptOf is transcript, the stream taking its general path for every
// frame if general (Stream.general: no fast path, a look at every file).
func transcriptOf(t *testing.T, paths []string, opts StreamOptions, stopAfter int, general bool) string {
	t.Helper()
	var b strings.Builder
	opts.OnDecodeError = func(err *DecodeError) { fmt.Fprintf(&b, "told: %v\n", err) }
	opts.OnFileError = func(err error) { fmt.Fprintf(&b, "file: %v\n", err) }
	var stop atomic.Bool
	if stopAfter > 0 {
		opts.Stop = &stop
	}
	s, err := OpenStream(paths, opts)
	if err != nil {
		return "open: " + err.Error()
	}
	defer s.Close()
	s.general = general
	says := func() {
		for i, name := range s.Names() {
			fmt.Fprintf(&b, "%s: link type %d, snap length %d, host %q\n", name, s.LinkType(i), s.SnapLen(i), s.CaptureHost(i))
		}
	}
	says()
	for n := 1; ; n++ {
		f, file, err := s.Next()
		if err == io.EOF {
			break
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		var all []byte // with Heads, only the head is the frame's
		if !opts.Heads {
			all = f.AppendJSON(nil, msg)
		}
		fmt.Fprintf(&b, "%d #%d @%d %d ns cap %d wire %d notime %v has %x transport %d dir %d iface %d icrc %v vcrc %v %s %s\n", file, f.Number, f.Offset, f.TsNs,
			f.CapLen, f.WireLen, f.NoTs, f.Has, f.Transport, f.Dir, f.Iface, f.ICRCOK, f.VCRCOK, msg, all)
		if opts.Project != nil {
			if p, i := s.Projected(); p != nil {
				fmt.Fprintf(&b, "projected: %s\n", p.(*lineProjection).line(i))
			} else {
				fmt.Fprintf(&b, "projected: %s\n", projectLine(f, err))
			}
		}
		if opts.Format != nil {
			fmt.Fprintf(&b, "text: %s\n", s.Text())
		}
		if n == stopAfter {
			stop.Store(true)
		}
	}
	says()
	done, total := s.Progress()
	fmt.Fprintf(&b, "%+v resolution %d ns progress %d of %d\n", s.Stats(), s.ResolutionNs(), done, total)
	return b.String()
}

// lineProjection is a Projection for the tests: each frame's summary line
// and flow key, as projectLine has them, made when asked (line), after the
// batch's frames are renumbered.
type lineProjection struct {
	frames []decode.Frame
	errs   []error
}

func (p *lineProjection) Project(i int, f *decode.Frame, err error) {
	for len(p.frames) <= i {
		p.frames, p.errs = append(p.frames, decode.Frame{}), append(p.errs, nil)
	}
	p.frames[i], p.errs[i] = *f, err
}

func (p *lineProjection) Renumber(by int) {
	for i := range p.frames {
		p.frames[i].Number += by
	}
}

func (p *lineProjection) line(i int) string { return projectLine(&p.frames[i], p.errs[i]) }

func projectLine(f *decode.Frame, err error) string {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	key := f.FlowKey() // of the frame's headers, and the BTH's QP: only with a BTH
	if f.Has&decode.HasBTH == 0 {
		key.DestQP = 0
	}
	return fmt.Sprintf("%v %s", key, f.AppendSummary(nil, msg))
}

// readAheadCaptures writes captures that take many batches, with every
// kind of damage between their frames, and returns their paths by name.
func readAheadCaptures(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := []([]byte){rocePacket(t, 0x06, 128), rocePacket(t, 0x07, 128), rocePacket(t, 0x08, 128), rocePacket(t, 0x11, 0), rocePacket(t, 0x0A, 1000)}
	unknownOp := append([]byte(nil), good[3]...)
	unknownOp[14+20+8] = 0x1f // the BTH opcode: not one there is
	badCRC := append([]byte(nil), good[0]...)
	badCRC[len(badCRC)-10] ^= 0xff // a payload byte: the ICRC fails
	frames := append(append([][]byte{}, good...), unknownOp, badCRC, []byte("not a frame"))
	clean := memCapture(t, decode.LinkTypeEthernet, 5000, frames...)

	// records walks the records of a classic pcap: their offsets.
	records := func(file []byte) []int {
		var offs []int
		for off := 24; off+16 <= len(file); off += 16 + int(binary.LittleEndian.Uint32(file[off+8:])) {
			offs = append(offs, off)
		}
		return offs
	}
	offs := records(clean)
	badHeaders := append([]byte(nil), clean...)
	for _, i := range []int{1, 255, 256, 700, 4999} {
		off := offs[i]
		binary.LittleEndian.PutUint32(badHeaders[off+12:], 1) // wire length below the captured length
	}
	binary.LittleEndian.PutUint32(badHeaders[offs[300]+4:], 2_000_000_000) // nanoseconds past a second
	damaged := append([]byte(nil), clean...)
	binary.LittleEndian.PutUint32(damaged[offs[3000]+8:], 1<<30) // a record length no record has

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(badHeaders)
	zw.Close()
	// A rotated set: the bad headers' records in three files (the second
	// gzipped), and a fourth whose times overlap the third's.
	header := badHeaders[:24]
	part := func(from, to int) []byte {
		end := len(badHeaders)
		if to < len(offs) {
			end = offs[to]
		}
		return append(append([]byte(nil), header...), badHeaders[offs[from]:end]...)
	}
	var gzPart bytes.Buffer
	zw = gzip.NewWriter(&gzPart)
	zw.Write(part(1500, 3200))
	zw.Close()
	overlap := memCapture(t, decode.LinkTypeEthernet, 300, frames...)
	for _, off := range records(overlap) { // stamped from the 3500th record's time on, 137 ns apart as it
		binary.LittleEndian.PutUint32(overlap[off+4:], binary.LittleEndian.Uint32(overlap[off+4:])+3500*137)
	}
	ng, err := os.ReadFile(filepath.Join(pcapsDir, "mixed.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"clean":       write("clean.pcap", clean),
		"bad headers": write("badheaders.pcap", badHeaders),
		"damaged":     write("damaged.pcap", damaged),
		"cut":         write("cut.pcap", clean[:offs[4000]+30]),
		"gzip":        write("badheaders.pcap.gz", gz.Bytes()),
		"pcapng x2":   write("two-sections.pcapng", append(append([]byte(nil), ng...), ng...)),
		"empty":       write("empty.pcap", clean[:24]),
		"rotated 0":   write("rotated0.pcap", part(0, 1500)),
		"rotated 1":   write("rotated1.pcap.gz", gzPart.Bytes()),
		"rotated 2":   write("rotated2.pcap", part(3200, len(offs))),
		"overlapping": write("overlapping.pcap", overlap),
	}
}

// TestReadAheadSameAsOneCore: a stream decoded on several workers gives a
// caller exactly what one decoded on its goroutine by the general path
// gives (frames, errors, what is told, counts), for every bundled capture,
// for captures of many batches damaged in every way, for several files
// merged (a rotated set among them), with and without CRC checks, with
// undecodable and untimed frames handed out or not, and when stopped part
// way; and so does one goroutine with its fast paths and merge.
func TestReadAheadSameAsOneCore(t *testing.T) {
	caps := readAheadCaptures(t)
	inputs := map[string][]string{}
	var all []string
	for _, name := range generatedFiles(t) {
		p := filepath.Join(pcapsDir, name)
		inputs[name] = []string{p}
		all = append(all, p)
	}
	inputs["every bundled capture merged"] = all
	for name, p := range caps {
		inputs[name] = []string{p}
	}
	inputs["merged with damage"] = []string{caps["clean"], caps["damaged"], caps["gzip"], filepath.Join(pcapsDir, "rocev2_ipv4.pcap")}
	// A rotated set given out of order, one file overlapping another, and
	// ties (clean and bad headers share their times).
	inputs["rotated"] = []string{caps["rotated 2"], caps["overlapping"], caps["rotated 0"], caps["rotated 1"], caps["clean"]}
	for _, name := range []string{"rotated 0", "rotated 1", "rotated 2", "overlapping"} {
		delete(inputs, name) // each alone is no more than the others
	}
	format := func(dst []byte, f *decode.Frame, err error) []byte {
		if err != nil {
			dst = append(dst, err.Error()...)
		}
		return f.AppendSummary(dst, "")
	}
	project := func(int) Projection { return &lineProjection{} }
	optss := map[string]StreamOptions{
		"default":   {},
		"crc":       {CheckCRC: true},
		"all":       {CheckCRC: true, Undecoded: true, Untimed: true},
		"keep some": {CheckCRC: true, Keep: func(f *decode.Frame) bool { return f.Number%3 != 0 }},
		"format":    {CheckCRC: true, Undecoded: true, Untimed: true, Format: format},
		"project":   {CheckCRC: true, Undecoded: true, Untimed: true, Project: project},
		// Heads: what the caller reads of the frames, and what the
		// workers computed of the rest.
		"heads": {CheckCRC: true, Undecoded: true, Untimed: true, Heads: true, Format: format, Project: project},
		// HeadsOnly: the workers decode the frames as far as their heads.
		"heads only": {CheckCRC: true, Undecoded: true, Untimed: true, Heads: true, HeadsOnly: true},
		"heads keep some": {CheckCRC: true, Heads: true, Project: project,
			Keep: func(f *decode.Frame) bool { return f.Number%3 != 0 && f.Has&decode.HasBTH != 0 }},
		// Heads without Format: a large pcap file is cut in pieces
		// (split.go), which the pieces below make of these small ones.
		"heads project": {CheckCRC: true, Undecoded: true, Untimed: true, Heads: true, Project: project},
	}
	for name, paths := range inputs {
		for oname, opts := range optss {
			for _, stopAfter := range []int{0, 700} {
				t.Run(fmt.Sprintf("%s/%s/stop=%d", name, oname, stopAfter), func(t *testing.T) {
					want := transcriptOf(t, paths, opts, stopAfter, true)
					for _, workers := range []int{1, 2, 5} {
						o := opts
						o.Workers = workers
						if got := transcript(t, paths, o, stopAfter); got != want {
							t.Errorf("%d workers: the stream differs from one decoded on one goroutine:\n%s", workers, firstDifference(got, want))
						}
					}
					// Cut in pieces of a record or so, and of many.
					for _, piece := range []int64{150, 4000} {
						o := opts
						o.Workers = 2
						cutInPieces(t, piece)
						if got := transcript(t, paths, o, stopAfter); got != want {
							t.Errorf("pieces of %d bytes: the stream differs from one decoded on one goroutine:\n%s", piece, firstDifference(got, want))
						}
					}
					// Mapped (mapping.go), shown a page at a time, on the
					// caller's goroutine and in pieces (or with the
					// serial cut, Format): three option sets, as each
					// costs the race run (make race) as much as the rest.
					if !mappedOpts[oname] {
						return
					}
					mapSmall(t, 4096)
					for _, workers := range []int{1, 2} {
						o := opts
						o.Workers, o.Map = workers, true
						if got := transcript(t, paths, o, stopAfter); got != want {
							t.Errorf("mapped, %d workers: the stream differs from one decoded on one goroutine:\n%s", workers, firstDifference(got, want))
						}
					}
				})
			}
		}
	}
}

// cutInPieces has every pcap file read ahead with heads cut in pieces of
// n bytes (split.go) until the test ends.
func cutInPieces(t testing.TB, n int64) {
	was, wasMin := splitBytes, minSplitBytes
	splitBytes, minSplitBytes = n, 0
	t.Cleanup(func() { splitBytes, minSplitBytes = was, wasMin })
}

// mappedOpts are the option sets of TestReadAheadSameAsOneCore read mapped too.
var mappedOpts = map[string]bool{"all": true, "format": true, "heads project": true}

// mapSmall has every regular file a stream with Map opens mapped, shown
// chunk bytes at a time (mapping.go), until the test ends.
func mapSmall(t testing.TB, chunk int) {
	was, wasChunk := minMapBytes, mapChunk
	minMapBytes, mapChunk = 0, chunk
	t.Cleanup(func() { minMapBytes, mapChunk = was, wasChunk })
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestReadAheadCloseEarly: a stream closed before its end leaves no
// goroutine behind, nor does one read to its end; one file alone is read
// ahead of its cut too (prefetch.go), whose read may be under way.
func TestReadAheadCloseEarly(t *testing.T) {
	caps := readAheadCaptures(t)
	before := runtime.NumGoroutine()
	for i, frames := range []int{0, 1, 300, 1 << 30, 0, 1, 300, 1 << 30} {
		paths := []string{caps["clean"], caps["gzip"]}
		if i >= 4 {
			paths = paths[:1]
		}
		s, err := OpenStream(paths, StreamOptions{CheckCRC: true, Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		for range frames {
			if _, _, err := s.Next(); err == io.EOF {
				break
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines a minute after closing, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadAheadMemoryFlat: reading ahead allocates for its batches, not per
// frame: a capture ten times longer costs no more. And the pieces of a
// rotated capture waiting their turn in the merge hold few batches.
func TestReadAheadMemoryFlat(t *testing.T) {
	dir := t.TempDir()
	frames := [][]byte{rocePacket(t, 0x06, 128), rocePacket(t, 0x07, 128), rocePacket(t, 0x08, 128), rocePacket(t, 0x11, 0)}
	allocated := func(n int) uint64 {
		path := filepath.Join(dir, fmt.Sprintf("%d.pcap", n))
		if err := os.WriteFile(path, memCapture(t, decode.LinkTypeEthernet, n, frames...), 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, err := OpenStream([]string{path}, StreamOptions{CheckCRC: true, Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for {
			if _, _, err := s.Next(); err == io.EOF {
				break
			}
			got++
		}
		s.Close()
		runtime.ReadMemStats(&after)
		if got != n {
			t.Fatalf("%d frames read, want %d", got, n)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	short, long := allocated(20_000), allocated(200_000)
	t.Logf("allocated %d bytes for 20,000 frames, %d for 200,000", short, long)
	// One read buffer more or less: a window grows to its full size only
	// if it reads past its first 64 KiB (window.grow), and a buffer kept
	// from an earlier file may serve it (readBufs); on the loaded CI the
	// two runs differed by that much, either way.
	if long > short+1<<20+readBufLen {
		t.Errorf("allocated %d bytes for 200,000 frames, %d for 20,000: reading ahead allocates per frame", long, short)
	}

	// 20 pieces of 2,000 frames each, in time order: while the first is
	// read the others wait with no batch (Stream.attach), not 4N+4; the
	// bound below is the one startBatches each had.
	var pieces []string
	for i := range 20 {
		var buf bytes.Buffer
		w, err := NewPcapWriter(&buf, decode.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 2000 {
			if err := w.WritePacket(&Packet{TsNs: int64(i*2000+k) * 1000, Data: frames[k%len(frames)]}); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		pieces = append(pieces, filepath.Join(dir, fmt.Sprintf("piece-%02d.pcap", i)))
		if err := os.WriteFile(pieces[i], buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := OpenStream(pieces, StreamOptions{CheckCRC: true, Workers: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Next()
	runtime.ReadMemStats(&after)
	frameBytes := uint64(unsafe.Sizeof(decode.Frame{}))
	perPiece := (after.TotalAlloc - before.TotalAlloc) / uint64(len(pieces))
	if most := (startBatches+1)*batchFrames*frameBytes + 1<<20; perPiece > most {
		t.Errorf("%d bytes a piece once open, want at most %d (startBatches, one more, the read buffer)", perPiece, most)
	}
	t.Logf("%d bytes a piece once open, 16 workers", perPiece)
}

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
