package decode

import (
	"fmt"
	"strings"
	"testing"
)

// TestSummaryColumns checks the summary line's leading columns, timed and
// untimed, against the fmt widths they were first written with.
func TestSummaryColumns(t *testing.T) {
	frame := rocePacket(t, 0x06, 128)
	d := Decoder{LinkType: LinkTypeEthernet}
	var f Frame
	f.CapLen, f.WireLen = len(frame), len(frame)
	if err := d.Decode(frame, &f); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		number int
		tsNs   int64
		noTs   bool
		want   string
	}{
		{7, 0, true, fmt.Sprintf("%6d %-18s %-6s ", 7, "(no time)", "rocev2")},
		{1234567, 1795684211000000042, false, fmt.Sprintf("%6d %s.%09d %-6s ", 1234567, "09:10:11", 42, "rocev2")},
	} {
		f.Number, f.TsNs, f.NoTs = c.number, c.tsNs, c.noTs
		got := string(f.AppendSummary(nil, ""))
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("got %q, want it to begin %q", got, c.want)
		}
		if !strings.Contains(got, " RC_RDMA_WRITE_FIRST qp 0x") {
			t.Errorf("got %q, want the BTH's words", got)
		}
	}
}
