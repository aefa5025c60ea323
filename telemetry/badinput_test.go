package telemetry

import (
	"bytes"
	"strings"
	"testing"
)

// TestBOMStripped: a UTF-8 byte order mark before the header (as Windows
// editors save CSV) is stripped, for every format ReadFile sniffs.
func TestBOMStripped(t *testing.T) {
	for name, text := range map[string]string{
		"diag":      "sample_id, sample_time_start, sample_time_end, port_0_rx_bytes\n0, 1.0, 1.1, 10\n1, 2.0, 2.1, 20\n",
		"sidecar":   "# ibscope-telemetry v1 source=mlx5_0/1 clock=host\nsample_id,start_ns,end_ns,a\n0,1,1,1\n1,2,2,3\n",
		"perfquery": "# Port counters: Lid 1 port 1\nPortXmitWait:....5\n# Port counters: Lid 1 port 1\nPortXmitWait:....9\n",
	} {
		ss, err := Read(strings.NewReader("\xEF\xBB\xBF"+text), "bom.csv", nil)
		if err != nil {
			t.Errorf("%s with BOM: %v", name, err)
			continue
		}
		if ss[0].Len() != 2 {
			t.Errorf("%s with BOM: %d samples, want 2", name, ss[0].Len())
		}
		if name == "diag" && ss[0].Col("port_0_rx_bytes") != 0 {
			t.Errorf("diag with BOM: columns %v", ss[0].Counters)
		}
	}
	if _, err := Read(strings.NewReader("\xEF\xBB\xBF\n"), "bom.csv", nil); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("BOM alone: %v, want empty file", err)
	}
}

// TestLongValueClipped: a 10 MB bad value is echoed as its first 64 bytes
// and its length, in warnings and in errors.
func TestLongValueClipped(t *testing.T) {
	big := strings.Repeat("x", 10<<20)
	s := readDiag(t, "sample_id, sample_time_start, sample_time_end, a\n0, 1.0, 1.1, "+big+"\n1, 2.0, 2.1, 5\n", nil)
	want := `value "` + strings.Repeat("x", 64) + `"…(10485760 bytes) is not an unsigned integer`
	wantWarning(t, s, 2, want)
	for _, w := range s.Warnings {
		if len(w.Msg) > maxMsgBytes+32 {
			t.Errorf("warning of %d bytes", len(w.Msg))
		}
	}
	_, err := ReadSidecar(strings.NewReader("# ibscope-telemetry v1 source="+big+"\n"), "side")
	if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), "…(10485760 bytes): want DEVICE/PORT") {
		t.Errorf("sidecar source error: %.300v", err)
	}
	var buf bytes.Buffer
	ss, err := ReadPerfquery(strings.NewReader("# Port counters: Lid 1 port 1\nPortXmitWait:...."+big+"\nPortXmitData:....5\n"), "pq")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ss[0].Warnings {
		buf.WriteString(w.String())
	}
	if buf.Len() > 300 || !strings.Contains(buf.String(), "…(10485760 bytes)") {
		t.Errorf("perfquery warnings: %.300s", buf.String())
	}
}
