package capture

import (
	"encoding/binary"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// A file read as a Source gives its records in order, cut to the snap
// length with their wire lengths kept, then io.EOF; a record whose header
// cannot be right is skipped with a notice naming it, and the rest read.
func TestOpenFileRecords(t *testing.T) {
	_, all := mixedTraffic(20, false)
	var frames []testcap.Frame
	for i, f := range all {
		frames = append(frames, testcap.Frame{TsNs: int64(i+1) * 1000, B: f})
	}
	path := testcap.WriteFrames(t, "in.pcap", frames)
	// The second record's original length below its captured length.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	second := 24 + 16 + len(all[0])
	binary.LittleEndian.PutUint32(b[second+12:], 10)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var notices []string
	src, err := OpenFile(path, &Config{SnapLenBytes: 64, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.LinkType() != decode.LinkTypeEthernet {
		t.Errorf("link type %d", src.LinkType())
	}
	var n int
	for i := 0; ; i++ {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := all[n]
		if n == 1 {
			want = all[2] // the damaged second record is skipped
			n++
		}
		n++
		if string(p.Data) != string(want[:min(64, len(want))]) || p.WireLenBytes != len(want) {
			t.Fatalf("packet %d: %d of %d bytes, want %d of %d", i+1, len(p.Data), p.WireLenBytes, min(64, len(want)), len(want))
		}
	}
	if n != len(all) || len(notices) != 1 || !strings.Contains(notices[0], "frame 2") {
		t.Errorf("read up to record %d of %d; notices %q", n, len(all), notices)
	}
	if st, _ := src.Stats(); st.Received != uint64(len(all)-1) || st.NotRoCE != 0 {
		t.Errorf("stats %+v", st)
	}
}

// An ERF file gives the packets inside its records, of the link type of
// its first one: native InfiniBand here, as a verbs port gives them.
func TestOpenFileERF(t *testing.T) {
	src, err := OpenFile("../testdata/pcaps/ib_native_erf.pcap", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.LinkType() != decode.LinkTypeInfiniBand {
		t.Fatalf("link type %d, want %d", src.LinkType(), decode.LinkTypeInfiniBand)
	}
	dec := decode.Decoder{LinkType: decode.LinkTypeInfiniBand, CheckCRC: true}
	var f decode.Frame
	n := 0
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		f.CapLen, f.WireLen = len(p.Data), p.WireLenBytes
		if err := dec.Decode(p.Data, &f); err != nil {
			t.Fatalf("packet %d does not decode as InfiniBand: %v", n, err)
		}
	}
	if n == 0 {
		t.Fatal("no packets")
	}
}
