package telemetry

import (
	"os"
	"strings"
	"testing"
)

func TestDetectAndReadFile(t *testing.T) {
	for file, want := range map[string]Format{
		"testdata/diag_format1.csv":     FormatDiagCSV,
		"testdata/diag_format1_old.csv": FormatDiagCSV,
		"testdata/diag_format0.csv":     FormatDiagCSV,
		"testdata/diag_format2_frc.csv": FormatDiagCSV,
		"testdata/perfquery.txt":        FormatPerfquery,
		"testdata/perfquery_x.txt":      FormatPerfquery,
		"testdata/data_ids.json":        FormatUnknown,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := DetectFormat(b); got != want {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
		s, err := ReadFile(file, nil)
		if want == FormatUnknown {
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Errorf("%s: %v", file, err)
			}
			continue
		}
		if err != nil || len(s) == 0 || s[0].Len() < 2 {
			t.Errorf("%s: %v", file, err)
		}
	}
	if DetectFormat([]byte("# ibscope-telemetry v1 source=a/1\n")) != FormatSidecar {
		t.Errorf("sidecar not detected")
	}
	if DetectFormat([]byte("0, 1.5, 1.6, 7\n")) != FormatDiagCSV {
		t.Errorf("headerless diag not detected")
	}
	if DetectFormat([]byte("1700000000.1\nPortXmitWait:.....5\n")) != FormatPerfquery {
		t.Errorf("perfquery with leading timestamp not detected")
	}
	if _, err := ReadFile("testdata/nope.csv", nil); err == nil {
		t.Errorf("missing file")
	}
	if _, err := Read(strings.NewReader("  \n"), "blank", nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("blank: %v", err)
	}
	for _, f := range []Format{FormatUnknown, FormatDiagCSV, FormatSidecar, FormatPerfquery} {
		if f.String() == "" {
			t.Errorf("format name")
		}
	}
}
