package main

import (
	"strings"
	"testing"
)

// -J lists what -j takes, as tcpdump -J; micro precision is refused in
// one line saying ibcap writes nanoseconds.
func TestTimestampFlags(t *testing.T) {
	out, stderr, code := runIbcap(t, nil, "-i", "lo", "-J")
	if code != 0 || !strings.Contains(out, "Time stamp types for lo") || !strings.Contains(out, "  host (") {
		t.Errorf("-J: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = runIbcap(t, nil, "-i", "lo", "-w", "x.pcap", "--time-stamp-precision", "micro")
	if code != 1 || !strings.Contains(stderr, "nanosecond timestamps only") {
		t.Errorf("micro: exit %d: %s", code, stderr)
	}
	_, stderr, code = runIbcap(t, nil, "-i", "lo", "-w", "x.pcap", "-j", "sometime")
	if code != 1 || !strings.Contains(stderr, "want host, adapter or adapter_unsynced") {
		t.Errorf("-j sometime: exit %d: %s", code, stderr)
	}
}
