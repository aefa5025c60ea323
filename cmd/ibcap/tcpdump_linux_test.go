package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// tcpdump is the peer to beat: both capture the same replayed traffic side by
// side with the same snap length and RoCE filter. ibcap must hold every RoCE
// frame sent, cut to 128 bytes, in order, and every frame tcpdump kept must
// be among them, in the same order. (tcpdump's filter sees no VLAN-tagged
// frames, so it may hold fewer.)
func TestIbcapBesideTcpdump(t *testing.T) {
	ns := newNetns(t)
	testenv.MustHaveTool(t, "tcpdump")
	dir := t.TempDir()
	ib, td := startBoth(t, ns, dir, "--immediate-mode", "-U")
	ns.Replay(t, bundled, "--pps=20000")
	var want [][]byte
	for _, f := range bundledRoCE(t) {
		want = append(want, f[:min(len(f), 128)])
	}
	// Both have written what they took before they are stopped: ibcap
	// every frame, tcpdump (--immediate-mode -U: each frame as it comes,
	// not at libpcap's block timeout) at least one.
	waitRecords(t, filepath.Join(dir, "ibcap.pcap"), len(want))
	testenv.WaitFor(t, 0, "tcpdump's first frame in its file", func() bool {
		recs, _ := readRecords(t, filepath.Join(dir, "tcpdump.pcap"))
		return len(recs) > 0
	})
	stopBoth(t, ib, td)

	got, err := readRecords(t, filepath.Join(dir, "ibcap.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, want)
	peer, err := readRecords(t, filepath.Join(dir, "tcpdump.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(peer) == 0 {
		t.Fatal("tcpdump captured nothing: the comparison says nothing")
	}
	i := 0
	for n, f := range peer {
		for i < len(got) && !bytes.Equal(got[i], f) {
			i++
		}
		if i == len(got) {
			t.Fatalf("tcpdump's frame %d is not in ibcap's capture (in order): %x", n+1, f)
		}
		i++
	}
	t.Logf("%d RoCE frames sent: ibcap kept %d, tcpdump %d", len(want), len(got), len(peer))
}

// startBoth starts ibcap and tcpdump side by side on vcap, alike: snap
// length 128, RoCE frames only, writing ibcap.pcap and tcpdump.pcap in dir;
// tcpdumpExtra are more options of tcpdump's.
func startBoth(t *testing.T, ns *testnetns.NS, dir string, tcpdumpExtra ...string) (*ibcapProc, *tcpdumpProc) {
	t.Helper()
	ib := startIbcap(t, ns, nil, "-i", "vcap", "-s", "128", "-w", filepath.Join(dir, "ibcap.pcap"))
	args := append([]string{"-i", "vcap", "-s", "128", "-n", "-Z", "root", "-w", filepath.Join(dir, "tcpdump.pcap")}, tcpdumpExtra...)
	td := startTcpdump(t, ns, append(args, "udp dst port 4791 or ether proto 0x8915")...)
	return ib, td
}

// tcpdumpProc is a running tcpdump; exited is closed once its Wait
// returned (one goroutine waits: a second Wait would race it and could
// return before tcpdump has written its file).
type tcpdumpProc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startTcpdump starts tcpdump in the namespace and waits until it listens.
func startTcpdump(t *testing.T, ns *testnetns.NS, args ...string) *tcpdumpProc {
	t.Helper()
	cmd := ns.Command("tcpdump", args...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var all strings.Builder
		sent := false
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if !sent && strings.Contains(sc.Text(), "listening on") {
				ready <- ""
				sent = true
			}
		}
		if !sent {
			ready <- all.String()
		}
	}()
	td := &tcpdumpProc{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); pw.Close(); close(td.exited) }()
	select {
	case msg := <-ready:
		if msg != "" {
			t.Fatalf("tcpdump did not start: %s", msg)
		}
	case <-time.After(testenv.WaitDeadline):
		t.Fatal("tcpdump did not start listening")
	}
	return td
}

// stopBoth stops ibcap and tcpdump with SIGINT, as a user would, and waits
// for both; ibcap must exit cleanly.
func stopBoth(t *testing.T, ib *ibcapProc, td *tcpdumpProc) {
	t.Helper()
	ib.cmd.Process.Signal(os.Interrupt)
	td.cmd.Process.Signal(os.Interrupt)
	if err := ib.wait(t); err != nil {
		t.Fatalf("ibcap: %v\n%s", err, ib.stderr.String())
	}
	select {
	case <-td.exited:
	case <-time.After(testenv.WaitDeadline):
		t.Fatal("tcpdump did not stop on SIGINT")
	}
}
