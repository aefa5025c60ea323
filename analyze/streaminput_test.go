package analyze

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestStreamSameFileTwice: a capture given twice (by the same name or
// through a link) would count every packet twice; it is refused.
func TestStreamSameFileTwice(t *testing.T) {
	a := testcap.Write(t, "a.pcap", false, testcap.Stream(4, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 }))
	link := filepath.Join(filepath.Dir(a), "link.pcap")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{a, a}, {a, link}} {
		s, err := OpenStream(paths, StreamOptions{})
		if err == nil {
			s.Close()
			t.Fatalf("%v: opened", paths)
		}
		if !strings.Contains(err.Error(), "give it once") || !strings.Contains(err.Error(), paths[1]) {
			t.Errorf("%v: %v", paths, err)
		}
	}
}

// TestStreamUntimedFrames: a pcapng simple packet block has no time; the
// stream skips its frame, counts it and says so, and hands out the rest.
func TestStreamUntimedFrames(t *testing.T) {
	pkts := testcap.Stream(3, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.WriteUntimed(t, "spb.pcapng", pkts, 1)
	var told []string
	s, err := OpenStream([]string{path}, StreamOptions{OnDecodeError: func(e *capfile.DecodeError) { told = append(told, e.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var p Packet
	var got []int64
	for s.Next(&p) != io.EOF {
		got = append(got, p.TsNs)
	}
	st := s.Stats()
	if len(got) != 2 || got[0] != pkts[0].TsNs || got[1] != pkts[2].TsNs || st.NoTime != 1 || st.Frames != 3 || st.Packets != 2 {
		t.Errorf("packets at %v, stats %+v; want frames 1 and 3, one without time", got, st)
	}
	if len(told) != 1 || !strings.Contains(told[0], "spb.pcapng: frame 2 (record at byte offset ") || !strings.Contains(told[0], "no timestamp (pcapng simple packet block)") {
		t.Errorf("told %q", told)
	}
	if in := s.Input(); in.NoTime != 1 {
		t.Errorf("input JSON no_time %d, want 1", in.NoTime)
	}
}

// TestBufferUntimedFrames: the analyses that read files frame by frame
// (buffer here; tick and credits alike) skip a frame without a timestamp
// and say so, rather than place it at 1970.
func TestBufferUntimedFrames(t *testing.T) {
	pkts := testcap.Stream(20, 1, 2, 7, 0, 1024, testcap.BaseNs, func(int) int64 { return 1000 })
	sender := testcap.WriteUntimed(t, "s.pcapng", pkts, 3)
	recv := make([]testcap.Packet, len(pkts))
	for i, p := range pkts {
		p.TsNs += 5000
		recv[i] = p
	}
	receiver := testcap.Write(t, "r.pcap", false, recv)
	var told []string
	opts := StreamOptions{OnDecodeError: func(e *capfile.DecodeError) { told = append(told, e.Error()) }}
	ss, err := OpenStream([]string{sender}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	rs, err := OpenStream([]string{receiver}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if _, err := runBuffer(ss, rs, BufferOptions{NsPerByte: 0.1}); err != nil {
		t.Fatal(err)
	}
	if len(told) != 1 || !strings.Contains(told[0], "s.pcapng: frame 4 (record at byte offset ") || !strings.Contains(told[0], "no timestamp") {
		t.Errorf("told %q", told)
	}
}
