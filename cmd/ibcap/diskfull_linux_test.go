package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// A full disk stops ibcap with one clear error; the file holds the packets
// that fit, whole, and the report's written count is what the file holds.
func TestIbcapDiskFull(t *testing.T) {
	ns := newNetns(t)
	out := filepath.Join(testenv.SmallTmpfs(t, "64k"), "full.pcap")
	p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
	ns.Replay(t, bundled, "--pps=50000")
	p.cmd.Process.Signal(os.Interrupt)
	if err := p.wait(t); err == nil {
		t.Fatalf("ibcap succeeded writing 420 kB to a 64 kB disk:\n%s", p.stderr.String())
	}
	msg := p.stderr.String()
	if n := strings.Count(msg, "no space left on device"); n != 1 {
		t.Errorf("the error is said %d times, want once:\n%s", n, msg)
	}
	got, err := readRecords(t, out)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, bundledRoCE(t)[:len(got)])
	if len(got) == 0 || !strings.Contains(msg, fmt.Sprintf("\n%d packets written", len(got))) ||
		!strings.Contains(msg, "captured but not written (write error)") {
		t.Errorf("the file holds %d packets; report:\n%s", len(got), msg)
	}
}
