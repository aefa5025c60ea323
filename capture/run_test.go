package capture

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
)

// Header filters see through the snap length: a frame cut to 128 bytes
// still has its BTH, so --qp keeps it.
func TestRunFilterWithSnapLen(t *testing.T) {
	roce, _ := mixedTraffic(100, false)
	src := &memSource{frames: roce, n: len(roce)}
	path := filepath.Join(t.TempDir(), "f.pcap")
	w, err := NewWriter(WriterConfig{Path: path, LinkType: decode.LinkTypeEthernet, SnapLenBytes: 128})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), src, w, RunOptions{Filter: &Filter{QPs: []uint32{0x12}}})
	if err != nil { // the source's io.EOF ends Run as a count would
		t.Fatal(err)
	}
	w.Close()
	if rep.Written != 20 || rep.Filtered != 80 || rep.Captured != 100 {
		t.Errorf("report:\n%s", rep.String())
	}
	_, frames := readAll(t, path)
	for i, f := range frames {
		if f.CapLen > 128 || f.WireLen <= 128 {
			t.Errorf("frame %d: %d of %d bytes", i, f.CapLen, f.WireLen)
		}
	}
}

// -c stops after that many packets are written.
func TestRunCount(t *testing.T) {
	roce, _ := mixedTraffic(50, false)
	src := &memSource{frames: roce, n: 1000}
	w, err := NewWriter(WriterConfig{Path: filepath.Join(t.TempDir(), "c.pcap"), LinkType: decode.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rep, err := Run(context.Background(), src, w, RunOptions{Count: 7})
	if err != nil || rep.Written != 7 || rep.Captured != 7 {
		t.Errorf("count 7: %v\n%s", err, rep.String())
	}
}

// The report gives a filtered count only where it is the whole truth:
// after a kernel filter, which counts nothing it rejects, only what ibcap
// filtered itself, said as such, and nothing when that is none.
func TestReportFilteredCount(t *testing.T) {
	for _, c := range []struct {
		r        Report
		want     string
		wantNone bool
	}{
		{Report{Filtered: 0}, "\n0 packets filtered out\n", false},
		{Report{Filtered: 7}, "\n7 packets filtered out\n", false},
		{Report{Filtered: 0, Stats: Stats{KernelFilter: true}}, "", true},
		{Report{Filtered: 7, Stats: Stats{KernelFilter: true}}, "\n7 packets filtered out in ibcap (not counting what the kernel filter kept out)\n", false},
	} {
		s := c.r.String()
		if c.wantNone && strings.Contains(s, "filtered") || !strings.Contains(s, c.want) {
			t.Errorf("%+v:\n%s", c.r, s)
		}
	}
}
