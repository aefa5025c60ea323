package main

import (
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
)

// Every flag that sizes memory is range-checked before anything is
// allocated: a huge value is refused with the flag and its range named,
// never tried (a reorder window of 10^9 packets would be a 154 GB ring).
func TestSizeFlagsRefused(t *testing.T) {
	good := testcap.Write(t, "good.pcap", false, writeStream(50, 5, testcap.BaseNs, func(int) int64 { return 1000 }))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ipd", "--window", "1000000000", good}, "--window 1000000000: want 1 to 1000000 packets"},
		{[]string{"ipd", "--window", "0", good}, "--window 0: want 1 to 1000000 packets"},
		{[]string{"flows", "--window", "-3", good}, "--window -3: want 1 to 1000000 packets"},
		{[]string{"ipd", "--compare", "--window", "2000000", good, good}, "--window 2000000: want 1 to 1000000 packets"},
		{[]string{"ipd", "--phases", "--phase-packets", "1000000000", good}, "--phase-packets 1000000000: want 1 to 65536"},
		{[]string{"ipd", "--bins", "1000000000", good}, "--bins 1000000000: want 1 to 10000"},
		{[]string{"ipd", "--exp", "--bins", "63", good}, "--bins 63: want 1 to 62"},
		{[]string{"ipd", "--bins", "-1", good}, "--bins -1: want 1 to 10000"},
		{[]string{"ipd", "--bin", "1000000000s", "--bins", "10000", good}, "10000 bins of 1000000000s end past the largest time"},
		{[]string{"ipd", "--top", "-2", good}, "--top -2: want 0 (all) or more"},
		{[]string{"tick", "--min-phase-packets", "1000000000", "--telemetry", "none.txt", good}, "--min-phase-packets 1000000000: want 1 to 65536"},
		{[]string{"tick", "--iface", "300", "--telemetry", "none.txt", good}, "--iface 300: want 0 to 127"},
	} {
		_, errOut, code := run(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
		if strings.Contains(errOut, "out of memory") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%v: crashed: %s", c.args, errOut)
		}
	}
}
