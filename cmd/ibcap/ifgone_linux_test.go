package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// An interface deleted under ibcap ends the capture, whether it was up or
// already down: ibcap names the interface and what happened, writes what
// it captured (every RoCE frame sent before, the file whole) and exits
// with status 1.
func TestIbcapInterfaceGone(t *testing.T) {
	for _, c := range []struct {
		name string
		ips  [][]string
	}{
		{"deleted", [][]string{{"link", "del", "vcap"}}},
		{"down then deleted", [][]string{{"link", "set", "vcap", "down"}, {"link", "del", "vcap"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			const says = "ibcap: capture on vcap: the interface was deleted (no such device)"
			ns := newNetns(t)
			want := bundledRoCE(t)
			out := filepath.Join(t.TempDir(), "out.pcap")
			p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
			ns.Replay(t, bundled, "--pps=50000")
			for _, ip := range c.ips {
				ns.IP(t, ip...)
			}
			err := p.wait(t)
			if err == nil || p.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(p.stderr.String(), says) {
				t.Fatalf("ibcap: %v, want exit status 1 and %q:\n%s", err, says, p.stderr.String())
			}
			got, rerr := readRecords(t, out)
			if rerr != nil {
				t.Fatal(rerr)
			}
			sameFrames(t, got, want)
		})
	}
}

// An interface taken down and up under ibcap (ip link, rdma link, a driver
// reset) does not end the capture: ibcap says when it went down and when
// it is back, captures what is sent after, counts the downs in its report
// and exits 0 when stopped.
func TestIbcapInterfaceDownUp(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	out := filepath.Join(t.TempDir(), "out.pcap")
	p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
	ns.Replay(t, bundled, "--pps=50000")
	ns.IP(t, "link", "set", "vcap", "down")
	p.waitLine(t, "ibcap: capture on vcap: the interface went down; the capture waits for it to come back up")
	ns.IP(t, "link", "set", "vcap", "up")
	p.waitLine(t, "ibcap: capture on vcap: the interface is back up; capturing again")
	testenv.WaitFor(t, 0, "the veth pair's carrier", ns.HasCarrier)
	ns.Replay(t, bundled, "--pps=50000")
	stopIbcap(t, p)
	got, err := readRecords(t, out)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, append(append([][]byte{}, want...), want...))
	if !strings.Contains(p.stderr.String(), "the interface went down 1 time during") {
		t.Errorf("the report does not count the down:\n%s", p.stderr.String())
	}
}
