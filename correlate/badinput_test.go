package correlate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/telemetry"
)

// cutCapture writes a copy of capture whose last record is cut short.
func cutCapture(t *testing.T, capture, dir string) string {
	t.Helper()
	b, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	return cut
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInput: every refusal names the file (and line or frame) and leaves
// neither the output nor a temporary file behind.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	sc := buildScenario(t, dir, telemetry.ClockHost, 0)
	cut := cutCapture(t, sc.capture, dir)
	emptyCap := writeFile(t, filepath.Join(dir, "empty.pcap"), "")
	emptyTel := writeFile(t, filepath.Join(dir, "empty.csv"), "")
	back := writeFile(t, filepath.Join(dir, "back.csv"), "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\n"+
		"sample_id,start_ns,end_ns,port_xmit_data\n"+
		"0,1767000000002000000,1767000000002000000,1\n"+
		"1,1767000000004000000,1767000000004000000,2\n"+
		"2,1767000000003000000,1767000000003000000,3\n")
	noBytes := writeFile(t, filepath.Join(dir, "nobytes.csv"), "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\n"+
		"sample_id,start_ns,end_ns,np_cnp_sent\n"+
		"0,1767000000002000000,1767000000002000000,1\n"+
		"1,1767000000004000000,1767000000004000000,2\n")
	docaNamed := writeFile(t, filepath.Join(dir, "doca.csv"), "sample_id,sample_time_start,sample_time_end,port_xmit_data\n"+
		"0,1767000000002000000,1767000000002000000,1\n"+
		"1,1767000000004000000,1767000000004000000,2\n")
	out := filepath.Join(dir, "out.parquet")
	given := Options{OffsetGiven: true}
	for _, tc := range []struct {
		name           string
		captures, tels []string
		opt            Options
		want           []string
	}{
		{"capture given twice", []string{sc.capture, sc.capture}, []string{sc.telemetry}, given, []string{sc.capture + " is given twice"}},
		{"telemetry given twice", []string{sc.capture}, []string{sc.telemetry, sc.telemetry}, given, []string{"telemetry: " + sc.telemetry + " is given twice"}},
		{"empty capture", []string{emptyCap}, []string{sc.telemetry}, given, []string{emptyCap, "empty"}},
		{"empty telemetry", []string{sc.capture}, []string{emptyTel}, given, []string{emptyTel, "empty file"}},
		{"time goes backwards", []string{sc.capture}, []string{back}, given, []string{back + ":5:", "backwards", "out of time order"}},
		{"no byte counters to estimate from", []string{sc.capture}, []string{noBytes}, Options{}, []string{noBytes, "none of its counters is known to count bytes or packets (np_cnp_sent (count))", "give the offset"}},
		// A DOCA CSV whose column is named as perfquery's byte counter is
		// not one: its unit comes from its data ID. The words said "it has
		// no byte counters (port_xmit_data, ...)" of a file holding port_xmit_data.
		{"telemetry past the bound", []string{sc.capture}, []string{sc.telemetry}, Options{OffsetGiven: true, MaxTelemetryValues: 5}, []string{sc.telemetry, "past the bound of 5 (--max-telemetry-values)"}},
		{"DOCA column named port_xmit_data", []string{sc.capture}, []string{docaNamed}, Options{}, []string{docaNamed, "(port_xmit_data (count))", "whose data ID the catalogue knows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Correlate(tc.captures, tc.tels, out, tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output left behind: %v", err)
			}
			assertNoTempFiles(t, dir)
		})
	}

	// A capture cut mid-record: the frames before the cut are used and the
	// output written, and the error names the file, the frame and the
	// byte offset of the cut.
	whole := len(readFrames(t, sc.capture)) - 1
	t.Run("correlate of a capture cut short", func(t *testing.T) {
		res, err := Correlate([]string{cut}, []string{sc.telemetry}, out, given)
		if err == nil || !strings.Contains(err.Error(), cut+": frame ") || !strings.Contains(err.Error(), "byte offset") ||
			!strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), out+" written from the") {
			t.Fatalf("error %v does not name the file, the damage and the output", err)
		}
		if res.Frames != int64(whole) {
			t.Errorf("%d frames binned, want the %d before the cut", res.Frames, whole)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("output: %v", err)
		}
		os.Remove(out)
		assertNoTempFiles(t, dir)
	})
	t.Run("export of a capture cut short", func(t *testing.T) {
		for _, opt := range []ExportOptions{{}, {PartitionBy: []PartitionKey{{Name: "transport"}}}} {
			o := filepath.Join(dir, "packets")
			if len(opt.PartitionBy) == 0 {
				o += ".parquet"
			}
			st, err := Export([]string{cut}, o, opt)
			if err == nil || !strings.Contains(err.Error(), cut+": frame ") || !strings.Contains(err.Error(), "cut short") ||
				!strings.Contains(err.Error(), "byte offset") || !strings.Contains(err.Error(), o+" written from the") {
				t.Fatalf("error %v does not name the file, the damage and the output", err)
			}
			if st.Frames != int64(whole) {
				t.Errorf("%d rows, want the %d frames before the cut", st.Frames, whole)
			}
			if _, err := os.Stat(o); err != nil {
				t.Errorf("output %s: %v", o, err)
			}
			assertNoTempFiles(t, dir)
		}
	})
}

// readFrames returns the frames of a capture.
func readFrames(t *testing.T, path string) []decode.Frame {
	t.Helper()
	_, frames, err := testcap.FileRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}
