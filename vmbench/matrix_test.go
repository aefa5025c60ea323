package vmbench

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCount(t *testing.T) {
	b := need(t)
	c := traffic{name: "rc-write", tool: "ib_write_bw", args: []string{"-s", "4096"}, iters: 200}
	dir, d := b.runCase(t, c)
	out, err := exec.Command("tshark", "-r", filepath.Join(dir, "va.pcap"), "-T", "fields", "-e", "ip.src").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var sent, rcvd uint64
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch l {
		case ip4A:
			sent++
		case ip4B:
			rcvd++
		}
	}
	t.Logf("capture: %d from rxe0, %d to it; counters: %v", sent, rcvd, d)
	if sent != d["rxe0/sent_pkts"] || rcvd != d["rxe0/rcvd_pkts"] {
		t.Errorf("capture holds %d packets from rxe0 and %d to it; rxe0 counted sent_pkts %d, rcvd_pkts %d", sent, rcvd, d["rxe0/sent_pkts"], d["rxe0/rcvd_pkts"])
	}
}
