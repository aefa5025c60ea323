package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tick on a RoCE capture says it times native IB links and the capture
// holds RoCE (it said "0 native IB data packets on interface -1").
func TestTickOnRoCECapture(t *testing.T) {
	tel := filepath.Join(t.TempDir(), "pq.txt")
	if err := os.WriteFile(tel, []byte("# ts_ns=1700000000000000000\n# Port counters: Lid 1 port 1\nPortXmitWait:.....5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roce := filepath.Join("..", "..", "testdata", "pcaps", "rocev2_ipv4.pcap")
	_, errOut, code := run(t, "tick", roce, "--telemetry", tel)
	if code != 1 || !strings.Contains(errOut, "no native IB data packets, 76 RoCE packets: tick times the waits of native InfiniBand links") ||
		strings.Contains(errOut, "interface -1") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
