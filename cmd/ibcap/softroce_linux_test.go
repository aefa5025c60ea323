package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capture"
)

// writeSoftRoCESysfs writes a sysfs tree (its mount point returned) with
// rxe0 as rdma_rxe shows a software RoCE device bound to netdev: a parent
// attribute, no device link, one Ethernet port whose GID names the netdev.
func writeSoftRoCESysfs(t *testing.T, netdev string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range map[string]string{
		"parent": netdev, "node_type": "1: CA",
		"ports/1/link_layer": "Ethernet", "ports/1/state": "4: ACTIVE", "ports/1/phys_state": "5: LinkUp",
		"ports/1/rate": "10 Gb/sec (1X QDR)", "ports/1/gid_attrs/ndevs/0": netdev,
		"ports/1/hw_counters/sent_pkts": "0", "ports/1/hw_counters/rcvd_pkts": "0",
	} {
		p := filepath.Join(root, "class", "infiniband", "rxe0", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Software RoCE is captured on its netdev: -i rxe0, -i rxe0:1 and
// -d rxe0 -i 1 each say so in one line and capture every RoCE frame that
// crosses the netdev (the other frames kept out by the kernel filter, of
// which the report gives no false count), without libibverbs (none is needed: an unloadable
// one is named); -D shows rxe0 as software RoCE on its netdev, -J lists
// what AF_PACKET on it offers, and -i on the netdev itself says nothing of
// RDMA traffic bypassing the kernel, which software RoCE never does.
func TestIbcapSoftRoCE(t *testing.T) {
	ns := newNetns(t)
	env := append(os.Environ(), capture.EnvSysfs+"="+writeSoftRoCESysfs(t, ns.Capture),
		capture.EnvLibibverbs+"=/nonexistent/libibverbs.so.1")
	want := bundledRoCE(t)
	for _, args := range [][]string{{"-i", "rxe0"}, {"-i", "rxe0:1"}, {"-d", "rxe0", "-i", "1"}, {"-i", ns.Capture}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.pcap")
			cmd := ns.Command(ibcapBin, append(args, "-w", out)...)
			cmd.Env = env
			p := startCmd(t, cmd)
			ns.Replay(t, bundled, "--pps=50000")
			stopIbcap(t, p)
			got, err := readRecords(t, out)
			if err != nil {
				t.Fatal(err)
			}
			sameFrames(t, got, want)
			stderr := p.stderr.String()
			if strings.Contains(stderr, "bypasses") {
				t.Errorf("says RDMA traffic bypasses the kernel on software RoCE:\n%s", stderr)
			}
			// The bundled capture's other frames were kept out by the
			// kernel filter, which counts none of them: no false 0, and
			// what ibcap filtered itself (a frame of the namespace that came
			// before the filter) said as only that.
			if strings.Contains(stderr, "\n0 packets filtered out") ||
				strings.Contains(stderr, "filtered out") && !strings.Contains(stderr, "not counting what the kernel filter kept out") {
				t.Errorf("a filtered count the kernel filter does not give:\n%s", stderr)
			}
			note := fmt.Sprintf("rxe0 is software RoCE (rdma_rxe) on %s", ns.Capture)
			if args[len(args)-1] == ns.Capture {
				if strings.Contains(stderr, "note:") {
					t.Errorf("a note on the netdev itself:\n%s", stderr)
				}
				return
			}
			if strings.Count(stderr, note) != 1 || !strings.Contains(stderr, "capturing on rxe0 port 1 (software RoCE) on "+ns.Capture) {
				t.Errorf("stderr does not say once where rxe0 is captured:\n%s", stderr)
			}
		})
	}

	list := ns.Command(ibcapBin, "-D")
	list.Env = env
	out, err := list.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "software RoCE: AF_PACKET on "+ns.Capture) {
		t.Errorf("-D: %v\n%s", err, out)
	}
	j := ns.Command(ibcapBin, "-i", "rxe0", "-J")
	j.Env = env
	out, err = j.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "captured on "+ns.Capture+" with AF_PACKET") ||
		!strings.Contains(string(out), "  host (") || strings.Contains(string(out), "adapter") {
		t.Errorf("-J: %v\n%s", err, out)
	}
}
