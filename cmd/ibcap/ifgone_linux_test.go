package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An interface that goes down or is deleted under ibcap ends the capture:
// ibcap names the interface and what happened, writes what it captured
// (every RoCE frame sent before, the file whole) and exits with status 1.
func TestIbcapInterfaceGone(t *testing.T) {
	for _, c := range []struct {
		name string
		ip   []string
		says string
	}{
		{"down", []string{"link", "set", "vcap", "down"}, "ibcap: capture on vcap: the interface went down (network is down)"},
		{"deleted", []string{"link", "del", "vcap"}, "ibcap: capture on vcap: the interface was deleted (no such device)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := newNetns(t)
			want := bundledRoCE(t)
			out := filepath.Join(t.TempDir(), "out.pcap")
			p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
			ns.Replay(t, bundled, "--pps=50000")
			ns.IP(t, c.ip...)
			err := p.wait(t)
			if err == nil || p.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(p.stderr.String(), c.says) {
				t.Fatalf("ibcap: %v, want exit status 1 and %q:\n%s", err, c.says, p.stderr.String())
			}
			got, rerr := readRecords(t, out)
			if rerr != nil {
				t.Fatal(rerr)
			}
			sameFrames(t, got, want)
		})
	}
}
