package analyze

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
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
	le := binary.LittleEndian
	var file []byte
	block := func(typ uint32, body []byte) {
		body = append(body, make([]byte, (4-len(body)%4)%4)...)
		n := uint32(12 + len(body))
		file = le.AppendUint32(le.AppendUint32(file, typ), n)
		file = le.AppendUint32(append(file, body...), n)
	}
	block(0x0A0D0D0A, []byte{0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	block(1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0}) // Ethernet, if_tsresol 10^-9
	for i, p := range pkts {
		frame := testcap.RoCEFrame(t, p)
		if i == 1 {
			block(3, append(le.AppendUint32(nil, uint32(len(frame))), frame...))
			continue
		}
		var b []byte
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, uint32(uint64(p.TsNs)>>32))
		b = le.AppendUint32(b, uint32(p.TsNs))
		b = le.AppendUint32(b, uint32(len(frame)))
		b = le.AppendUint32(b, uint32(len(frame)))
		block(6, append(b, frame...))
	}
	path := filepath.Join(t.TempDir(), "spb.pcapng")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	var told []string
	s, err := OpenStream([]string{path}, StreamOptions{OnDecodeError: func(e *decode.DecodeError) { told = append(told, e.Error()) }})
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
	if in := inputOf(s); in.NoTime != 1 {
		t.Errorf("input JSON no_time %d, want 1", in.NoTime)
	}
}
