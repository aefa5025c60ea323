package main

import (
	"strings"
	"testing"
)

// -J lists what -j takes, as tcpdump -J; a precision other than nano or
// micro is refused in one line saying which are.
func TestTimestampFlags(t *testing.T) {
	out, stderr, code := runIbcap(t, nil, "-i", "lo", "-J")
	if code != 0 || !strings.Contains(out, "Time stamp types for lo") || !strings.Contains(out, "  host (") {
		t.Errorf("-J: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = runIbcap(t, nil, "-i", "lo", "-w", "x.pcap", "--time-stamp-precision", "milli")
	if code != 1 || !strings.Contains(stderr, "want nano or micro") {
		t.Errorf("milli: exit %d: %s", code, stderr)
	}
	_, stderr, code = runIbcap(t, nil, "-i", "lo", "-w", "x.pcap", "-j", "sometime")
	if code != 1 || !strings.Contains(stderr, "want host, adapter or adapter_unsynced") {
		t.Errorf("-j sometime: exit %d: %s", code, stderr)
	}
}
