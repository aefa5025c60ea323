package correlate

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/internal/testcap"
)

// TestUntimedFrames: a frame without a timestamp is exported with the
// reason in its error column, and left out of the time-merged stream that
// correlate bins, with a warning naming it.
func TestUntimedFrames(t *testing.T) {
	pkts := testcap.Stream(3, 1, 2, 7, 0, 64, testcap.BaseNs, func(int) int64 { return 1000 })
	path := testcap.WriteUntimed(t, "spb.pcapng", pkts, 1)
	out := filepath.Join(t.TempDir(), "p.parquet")
	st, err := Export([]string{path}, out, ExportOptions{})
	if err != nil || st.Frames != 3 {
		t.Fatalf("export: %d rows, %v", st.Frames, err)
	}
	tbl := readTableGo(t, out, FormatParquet)
	defer tbl.Release()
	if errs := columnStrings(t, tbl, "error"); len(errs) != 3 || errs[0] != "(null)" || errs[1] != "no timestamp (pcapng simple packet block)" || errs[2] != "(null)" {
		t.Errorf("error column %q", errs)
	}

	var told []string
	in, err := openFrames([]string{path}, func(e *capfile.DecodeError) { told = append(told, e.Error()) }, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var got []int64
	for {
		f, _, err := in.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f.TsNs)
	}
	if untimed := in.Stats().NoTime; len(got) != 2 || got[0] != pkts[0].TsNs || got[1] != pkts[2].TsNs || untimed != 1 {
		t.Errorf("merged frames at %v (%d untimed), want frames 1 and 3", got, untimed)
	}
	if len(told) != 1 || !strings.Contains(told[0], "spb.pcapng: frame 2 (record at byte offset ") || !strings.Contains(told[0], "no timestamp") {
		t.Errorf("told %q", told)
	}
	sp, err := scanCaptures([]string{path}, histWant{})
	if err != nil || sp.frames != 2 || sp.firstNs != pkts[0].TsNs || sp.lastNs != pkts[2].TsNs {
		t.Errorf("scan: %d frames from %d to %d (%v)", sp.frames, sp.firstNs, sp.lastNs, err)
	}
}
