package capfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// streamFrame is what a test keeps of a frame handed out by a Stream.
type streamFrame struct {
	file, number int
	tsNs         int64
	psn          uint32
	err          string
}

// readStream reads s to its end.
func readStream(t *testing.T, s *capfile.Stream) []streamFrame {
	t.Helper()
	var out []streamFrame
	for {
		f, file, err := s.Next()
		if err == io.EOF {
			return out
		}
		sf := streamFrame{file: file, number: f.Number, tsNs: f.TsNs, psn: f.BTH.PSN}
		if err != nil {
			var de *capfile.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Next: %v (%T)", err, err)
			}
			sf.err = de.Error()
		}
		out = append(out, sf)
	}
}

// TestStreamMergesRotatedPieces: the pieces of a rotated capture, given in
// any order, come out as one stream in time order, each frame with its file
// and its number in that file.
func TestStreamMergesRotatedPieces(t *testing.T) {
	pkts := testcap.Stream(30, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	dir := t.TempDir()
	a := testcap.WriteIn(t, dir, "cap-1.pcap", false, pkts[:10])
	b := testcap.WriteIn(t, dir, "cap-2.pcap", false, pkts[10:20])
	c := testcap.WriteIn(t, dir, "cap-3.pcap", true, pkts[20:]) // another link type in the same stream
	s, err := capfile.OpenStream([]string{c, a, b}, capfile.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readStream(t, s)
	if len(got) != len(pkts) {
		t.Fatalf("%d frames, want %d", len(got), len(pkts))
	}
	for i, g := range got {
		wantFile := []int{1, 2, 0}[i/10]
		if g.tsNs != pkts[i].TsNs || g.psn != pkts[i].PSN || g.file != wantFile || g.number != i%10+1 {
			t.Fatalf("frame %d: %+v, want file %d frame %d at %d", i, g, wantFile, i%10+1, pkts[i].TsNs)
		}
	}
	if st := s.Stats(); st.Frames != 30 || st.OutOfOrder != 0 || st.DecodeErrors != 0 {
		t.Errorf("stats %+v", st)
	}
	if names := s.Names(); !slices.Equal(names, []string{c, a, b}) {
		t.Errorf("names %v", names)
	}
	if s.LinkType(0) != decode.LinkTypeInfiniBand || s.LinkType(1) != decode.LinkTypeEthernet {
		t.Errorf("link types %d %d", s.LinkType(0), s.LinkType(1))
	}
	if done, total := s.Progress(); done != total || total == 0 {
		t.Errorf("progress %d of %d bytes at the end", done, total)
	}
}

// TestStreamInterleaved: two captures of the same time span (two ports)
// are merged frame by frame; a file's own disorder is counted, not mended.
func TestStreamInterleaved(t *testing.T) {
	even := testcap.Stream(5, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 2000 })
	odd := testcap.Stream(5, 3, 4, 9, 100, 64, testcap.BaseNs+1000, func(int) int64 { return 2000 })
	odd[3].TsNs, odd[4].TsNs = odd[4].TsNs, odd[3].TsNs // one step back of 2 us
	dir := t.TempDir()
	s, err := capfile.OpenStream([]string{testcap.WriteIn(t, dir, "a.pcap", false, even), testcap.WriteIn(t, dir, "b.pcap", false, odd)}, capfile.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var files []int
	for _, g := range readStream(t, s) {
		files = append(files, g.file)
	}
	if want := []int{0, 1, 0, 1, 0, 1, 0, 0, 1, 1}; !slices.Equal(files, want) {
		t.Errorf("files in stream order %v, want %v", files, want)
	}
	st := s.Stats()
	if st.OutOfOrder != 1 || st.MaxStepBackNs != 2000 || st.FirstOutOfOrder.Frame != 5 || !strings.HasSuffix(st.FirstOutOfOrder.File, "b.pcap") {
		t.Errorf("disorder %+v", st)
	}
}

// TestStreamSameFileTwice: an input given twice (the same name, a link to
// it, or standard input twice) would be counted twice; it is refused.
func TestStreamSameFileTwice(t *testing.T) {
	a := testcap.Write(t, "a.pcap", false, testcap.Stream(2, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 }))
	link := filepath.Join(filepath.Dir(a), "link.pcap")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{a, a}, {a, link}, {"-", a, "-"}} {
		if s, err := capfile.OpenStream(paths, capfile.StreamOptions{}); err == nil {
			s.Close()
			t.Errorf("%v: opened", paths)
		} else if !strings.Contains(err.Error(), "give it once") {
			t.Errorf("%v: %v", paths, err)
		}
	}
}

// TestStreamStdin: "-" reads standard input, named stdin in reports.
func TestStreamStdin(t *testing.T) {
	pkts := testcap.Stream(4, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.Write(t, "in.pcap", false, pkts)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	s, err := capfile.OpenStream([]string{"-"}, capfile.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := readStream(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[3].tsNs != pkts[3].TsNs || !slices.Equal(s.Names(), []string{"stdin"}) {
		t.Errorf("%d frames from %v", len(got), s.Names())
	}
	if _, err := f.Stat(); err != nil {
		t.Errorf("standard input closed by the stream: %v", err)
	}
}

// TestStreamUntimed: a frame without a timestamp (pcapng simple packet
// block) is counted and told, and left out unless asked for; then it comes
// right after the frame before it in its file.
func TestStreamUntimed(t *testing.T) {
	pkts := testcap.Stream(3, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	spb := testcap.WriteUntimed(t, "spb.pcapng", pkts, 1)
	other := testcap.Write(t, "o.pcap", false, testcap.Stream(2, 3, 4, 9, 50, 64, testcap.BaseNs+500, func(int) int64 { return 1000 }))
	for _, keep := range []bool{false, true} {
		var told []string
		s, err := capfile.OpenStream([]string{spb, other}, capfile.StreamOptions{Untimed: keep,
			OnDecodeError: func(e *capfile.DecodeError) { told = append(told, e.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, g := range readStream(t, s) {
			order = append(order, string(rune('a'+g.file))+string(rune('0'+g.number)))
		}
		s.Close()
		want := []string{"a1", "b1", "b2", "a3"}
		if keep {
			want = []string{"a1", "a2", "b1", "b2", "a3"}
		}
		if !slices.Equal(order, want) || s.Stats().NoTime != 1 {
			t.Errorf("untimed %v: order %v, want %v; stats %+v", keep, order, want, s.Stats())
		}
		if len(told) != 1 || !strings.Contains(told[0], "spb.pcapng: frame 2") || !strings.Contains(told[0], "no timestamp") {
			t.Errorf("told %q", told)
		}
	}
}

// TestStreamCutFile: a file cut mid-record ends there, told with its
// name, frame and byte offset; the other files are read to their end.
func TestStreamCutFile(t *testing.T) {
	dir := t.TempDir()
	whole := testcap.WriteIn(t, dir, "whole.pcap", false, testcap.Stream(6, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 }))
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	other := testcap.WriteIn(t, dir, "other.pcap", false, testcap.Stream(4, 3, 4, 9, 0, 64, testcap.BaseNs+100, func(int) int64 { return 1000 }))
	var damage []error
	s, err := capfile.OpenStream([]string{cut, other}, capfile.StreamOptions{OnFileError: func(err error) { damage = append(damage, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readStream(t, s)
	var fe *capfile.FileError
	if len(damage) != 1 || !errors.As(damage[0], &fe) || fe.Name != cut || fe.Frame != 6 || fe.Offset <= 0 {
		t.Fatalf("damage %v", damage)
	}
	if !strings.Contains(damage[0].Error(), "cut.pcap: frame 6 (byte offset ") {
		t.Errorf("damage says %q", damage[0])
	}
	if len(got) != 5+4 || s.Stats().FileErrors != 1 {
		t.Errorf("%d frames, stats %+v", len(got), s.Stats())
	}
}

// TestStreamKeepRecordsUndecoded: Keep leaves frames out before the merge;
// Records reads the same records without decoding them; Undecoded hands
// out a frame that could not be decoded with its error.
func TestStreamKeepRecordsUndecoded(t *testing.T) {
	pkts := testcap.Stream(6, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.Write(t, "a.pcap", false, pkts)
	s, err := capfile.OpenStream([]string{path}, capfile.StreamOptions{Keep: func(f *decode.Frame) bool { return f.BTH.PSN%2 == 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if got := readStream(t, s); len(got) != 3 || got[1].psn != 2 || s.Stats().Frames != 6 {
		t.Errorf("kept %+v of %d frames", got, s.Stats().Frames)
	}
	s.Close()

	s, err = capfile.OpenStream([]string{path}, capfile.StreamOptions{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	got := readStream(t, s)
	s.Close()
	if len(got) != 6 || got[5].tsNs != pkts[5].TsNs || got[5].psn != 0 {
		t.Errorf("records %+v", got)
	}

	// A record whose original length is below its captured length cannot
	// be right: its frame is reported, and handed out only with Undecoded.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Clone(b)
	b[24+12] = 1 // first record's original length: 1 byte (little-endian low byte)
	b[24+13], b[24+14], b[24+15] = 0, 0, 0
	bad := filepath.Join(t.TempDir(), "bad.pcap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, undecoded := range []bool{false, true} {
		told := 0
		s, err := capfile.OpenStream([]string{bad}, capfile.StreamOptions{Undecoded: undecoded, OnDecodeError: func(*capfile.DecodeError) { told++ }})
		if err != nil {
			t.Fatal(err)
		}
		got := readStream(t, s)
		s.Close()
		want := 5
		if undecoded {
			want = 6
			if got[0].err == "" || !strings.Contains(got[0].err, "bad.pcap: frame 1") {
				t.Errorf("undecoded frame: %+v", got[0])
			}
		}
		if len(got) != want || told != 1 || s.Stats().DecodeErrors != 1 {
			t.Errorf("undecoded %v: %d frames, told %d, stats %+v", undecoded, len(got), told, s.Stats())
		}
	}
}

// FuzzStream: any bytes, read as three captures merged, neither panic nor
// loop, every record is counted once, and the merge with its fast paths
// hands out what the general path does (Stream.general), in its order.
func FuzzStream(f *testing.F) {
	pkts := testcap.Stream(4, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	b, err := os.ReadFile(testcap.Write(f, "seed.pcap", false, pkts))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b, len(b)/2, len(b)/2)
	f.Add(append(bytes.Clone(b), b...), len(b), len(b)+len(b)/2)
	f.Fuzz(func(t *testing.T, data []byte, cut, cut2 int) {
		if cut < 0 || cut > len(data) {
			cut = len(data) / 2
		}
		if cut2 < cut || cut2 > len(data) {
			cut2 = cut
		}
		read := func(general bool) (string, capfile.StreamStats) {
			var readers []*capfile.Reader
			for i, part := range [][]byte{data[:cut], data[cut:cut2], data[cut2:]} {
				if r, err := capfile.NewReader(bytes.NewReader(part), []string{"a", "b", "c"}[i]); err == nil {
					readers = append(readers, r)
				}
			}
			s := capfile.NewStream(readers, capfile.StreamOptions{CheckCRC: true, Undecoded: true, Untimed: true})
			if general {
				capfile.GeneralPath(s)
			}
			var got strings.Builder
			n := 0
			for {
				f, i, err := s.Next()
				if err == io.EOF {
					break
				}
				fmt.Fprintf(&got, "%d #%d %d %v\n", i, f.Number, f.TsNs, err)
				n++
			}
			if st := s.Stats(); n != st.Frames {
				t.Errorf("%d frames handed out, %d counted", n, st.Frames)
			}
			return got.String(), s.Stats()
		}
		fast, fastStats := read(false)
		general, generalStats := read(true)
		if fast != general || fastStats != generalStats {
			t.Errorf("merged, the stream handed out\n%s%+v\nand on its general path\n%s%+v", fast, fastStats, general, generalStats)
		}
	})
}

// TestStreamGoesOnAfterUndecodable: without Undecoded, a frame that cannot
// be decoded is told and skipped, and the frame after it is handed out as
// it is, decoded (it was handed out carrying the bad frame's error, which
// ended every analysis there: issue 21, finding 4).
func TestStreamGoesOnAfterUndecodable(t *testing.T) {
	pkts := testcap.Stream(5, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	frames := make([]testcap.Frame, len(pkts))
	for i, p := range pkts {
		frames[i] = testcap.Frame{TsNs: p.TsNs, B: testcap.RoCEFrame(t, p)}
	}
	frames[1].B[14+20+8] = 0x1f // an opcode no transport defines
	path := testcap.WriteFrames(t, "bad-opcode.pcap", frames)
	told := 0
	s, err := capfile.OpenStream([]string{path}, capfile.StreamOptions{OnDecodeError: func(*capfile.DecodeError) { told++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []int
	for {
		f, _, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("frame after %v: %v", got, err)
		}
		got = append(got, f.Number)
	}
	if !slices.Equal(got, []int{1, 3, 4, 5}) || told != 1 || s.Stats().DecodeErrors != 1 {
		t.Errorf("handed out frames %v, told %d, stats %+v; want 1, 3, 4, 5 and one told", got, told, s.Stats())
	}
}
