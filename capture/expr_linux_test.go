package capture

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capture/internal/libpcap"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// requireLibpcap skips without libpcap, except under CI, which installs it.
func requireLibpcap(t testing.TB) {
	t.Helper()
	if err := libpcap.Available(libpcapPaths()); err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
}

// A filter expression keeps exactly the frames tcpdump keeps with the same
// expression: both capture the same replayed traffic side by side on the
// veth (RoCEv1, RoCEv2 over IPv4 and IPv6, VLAN-tagged frames whose tag
// the veth moves into metadata, ARP, other UDP, IPv4 fragments).
func TestFilterExprKeepsWhatTcpdumpKeeps(t *testing.T) {
	ns := newVethNS(t)
	testenv.MustHaveTool(t, "tcpreplay")
	testenv.MustHaveTool(t, "tcpdump")
	requireLibpcap(t)
	_, frames := mixedTraffic(700, true)
	sent := map[string]bool{}
	for _, f := range frames {
		sent[string(f)] = true
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "sent.pcap")
	writeTestPcap(t, in, frames)
	for _, expr := range []string{
		"udp port 4791",
		"vlan and udp port 4791",
		"vlan 100",
		"not udp",
		"arp or ether proto 0x8915",
		"udp[8] == 0x04", // RoCEv2 over IPv4, BTH opcode RC SEND_ONLY
		"ip6",
		"ip[6:2] & 0x1fff != 0",
		"greater 500",
	} {
		t.Run(expr, func(t *testing.T) {
			// A busy machine can make tcpdump drop frames; then the
			// comparison is repeated.
			for attempt := 1; ; attempt++ {
				got, want, tdLog := captureBesideTcpdump(t, ns, in, sent, expr)
				if len(want) == 0 || len(want) == len(frames) {
					t.Fatalf("tcpdump kept %d of %d frames: the expression tells nothing apart", len(want), len(frames))
				}
				if len(got) != len(want) && attempt < 3 && !strings.Contains(tdLog, " 0 packets dropped by kernel") {
					t.Logf("tcpdump dropped frames (%s); again", strings.TrimSpace(tdLog))
					continue
				}
				if len(got) != len(want) {
					t.Fatalf("kept %d frames, tcpdump %d (of %d sent); tcpdump said:\n%s", len(got), len(want), len(frames), tdLog)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("frame %d of the kept differs from tcpdump's:\n got %x\nwant %x", i, got[i], want[i])
					}
				}
				t.Logf("%d of %d frames kept, as tcpdump", len(got), len(frames))
				return
			}
		})
	}
}

// captureBesideTcpdump captures the replay of in with the expression, and
// tcpdump with it beside, and returns the frames each kept among those
// sent and what tcpdump printed when it stopped.
func captureBesideTcpdump(t *testing.T, ns *testnetns.NS, in string, sent map[string]bool, expr string) (got, want []string, tdLog string) {
	t.Helper()
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ibcap.pcap"), filepath.Join(dir, "tcpdump.pcap")
	src := openInNS(t, ns, &Config{FilterExpr: expr})
	w, err := NewWriter(WriterConfig{Path: ours, LinkType: src.LinkType()})
	if err != nil {
		t.Fatal(err)
	}
	// In immediate mode libpcap gives each frame a slot of the snap length
	// (256 KiB by default), so tcpdump's default 2 MB buffer holds 8 frames
	// and a busy machine makes it drop; a 9216-byte snap (above every frame
	// sent) and a 64 MB buffer hold the whole replay.
	td := startTcpdumpIn(t, ns, "-i", ns.Capture, "-n", "--immediate-mode", "-U", "-s", "9216", "-B", "65536", "-Z", "root", "-w", theirs, expr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, src, w, RunOptions{}); done <- err }()
	ns.Replay(t, in)
	// Until both files hold the same frames of those sent (tcpdump -U
	// writes each as it comes, Run at its periodic flush): what either
	// still had in hand when stopped would be lost to the comparison.
	testenv.Poll(0, func() bool {
		a, b := sentOnlyNow(ours, sent), sentOnlyNow(theirs, sent)
		return a > 0 && a == b
	})
	cancel()
	td.Process.Signal(os.Interrupt)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	<-td.waited
	return sentOnly(t, ours, sent), sentOnly(t, theirs, sent), td.log.String()
}

// sentOnlyNow counts the frames among those sent that the capture file at
// path holds so far, whole.
func sentOnlyNow(path string, sent map[string]bool) int {
	recs, _, _ := testcap.FileRecords(path)
	n := 0
	for _, r := range recs {
		if sent[string(r)] {
			n++
		}
	}
	return n
}

// sentOnly reads a capture's frames that are among those sent, leaving out
// what the namespace sent on its own (IPv6 neighbour discovery).
func sentOnly(t *testing.T, path string, sent map[string]bool) []string {
	t.Helper()
	recs, _ := readAll(t, path)
	var out []string
	for _, r := range recs {
		if sent[string(r)] {
			out = append(out, string(r))
		}
	}
	return out
}

type tcpdumpProc struct {
	*exec.Cmd
	waited chan struct{}
	log    strings.Builder // stderr after "listening on", complete once waited is closed
}

// startTcpdumpIn starts tcpdump in the namespace and returns once it
// listens; it is killed when the test ends.
func startTcpdumpIn(t *testing.T, ns *testnetns.NS, args ...string) *tcpdumpProc {
	t.Helper()
	p := &tcpdumpProc{Cmd: ns.Command("tcpdump", args...), waited: make(chan struct{})}
	pr, pw := io.Pipe()
	p.Stderr = pw
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	logged := make(chan struct{})
	go func() { p.Wait(); pw.Close(); <-logged; close(p.waited) }()
	t.Cleanup(func() { p.Process.Kill(); <-p.waited })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var all strings.Builder
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "listening on") {
				ready <- ""
				io.Copy(&p.log, pr)
				close(logged)
				return
			}
		}
		ready <- all.String()
		close(logged)
	}()
	select {
	case msg := <-ready:
		if msg != "" {
			t.Fatalf("tcpdump %s did not start: %s", strings.Join(args, " "), msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("tcpdump did not start listening")
	}
	return p
}
