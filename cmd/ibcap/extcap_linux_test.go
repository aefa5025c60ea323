package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// Wireshark through ibcap's extcap entry, as a user gets it after make
// install: tshark, in the test's namespace, finds ibcap in its extcap
// folder, lists ibcap-vcap among its interfaces, and captures every RoCE
// frame sent across the veth pair through it, byte for byte, in order.
func TestExtcapTshark(t *testing.T) {
	ns := newNetns(t)
	ext := extcapFolder(t)

	out := tsharkWithExtcap(t, ns, ext, "-D")
	for _, want := range []string{
		". ibcap-vcap (ibcap: RoCE on vcap (Ethernet))",
		". ibcap-any (ibcap: RoCE on every interface (Linux cooked v2))",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("tshark -D does not list %q:\n%s", want, out)
		}
	}

	want := bundledRoCE(t)
	t.Run("whole frames", func(t *testing.T) {
		got := captureThroughExtcap(t, ns, ext, len(want))
		sameFrames(t, got, want)
		t.Logf("%d RoCE frames sent, %d captured through tshark -i ibcap-vcap", len(want), len(got))
	})
	// The dialog's options reach ibcap as its own flags: -o sets them as
	// the dialog would (Wireshark names the preference with _ for -).
	t.Run("snap length", func(t *testing.T) {
		var cut [][]byte
		for _, f := range want {
			cut = append(cut, f[:min(len(f), 128)])
		}
		got := captureThroughExtcap(t, ns, ext, len(want), "-o", "extcap.ibcap_vcap.snaplen:128")
		sameFrames(t, got, cut)
	})
	// The dialog's capture filter replaces the RoCE-only default, as
	// tshark's -f (Wireshark's capture filter box) does. The veth strips
	// a VLAN tag before the kernel filter runs, so a tagged frame is
	// matched as untagged, as tcpdump's live filter matches it.
	t.Run("capture filter", func(t *testing.T) {
		var v6 [][]byte
		for _, f := range want {
			off := 12
			for binary.BigEndian.Uint16(f[off:]) == 0x8100 {
				off += 4
			}
			if ip := off + 2; binary.BigEndian.Uint16(f[off:]) == 0x86dd && f[ip+6] == 17 && binary.BigEndian.Uint16(f[ip+40+2:]) == 4791 {
				v6 = append(v6, f)
			}
		}
		got := captureThroughExtcap(t, ns, ext, len(v6), "-o", "extcap.ibcap_vcap.filter:ip6 and udp dst port 4791")
		sameFrames(t, got, v6)
		got = captureThroughExtcap(t, ns, ext, len(v6), "-f", "ip6 and udp dst port 4791")
		sameFrames(t, got, v6)
		t.Logf("%d RoCEv2 frames over IPv6 of %d captured through the dialog's filter and through -f", len(v6), len(want))
	})
}

// extcapFolder is a folder holding what make install puts in Wireshark's
// extcap folder: a link named ibcap to the ibcap binary.
func extcapFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ibcapBin, filepath.Join(dir, "ibcap")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wiresharkExtcapDir is the extcap folder tshark looks in, as tshark -G
// folders says.
func wiresharkExtcapDir(t *testing.T) string {
	t.Helper()
	testenv.MustHaveTool(t, "tshark")
	out, err := exec.Command("tshark", "-G", "folders").Output()
	if err != nil {
		t.Fatalf("tshark -G folders: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "Extcap path:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("tshark -G folders names no extcap path:\n%s", out)
	return ""
}

// tsharkCommand runs tshark in the namespace (nil: the test's own) with
// ext in place of Wireshark's extcap folder: a bind mount in a mount
// namespace of its own, since Wireshark run as root ignores
// WIRESHARK_EXTCAP_DIR.
func tsharkCommand(t *testing.T, ns *testnetns.NS, ext string, args ...string) *exec.Cmd {
	t.Helper()
	testenv.MustHaveTool(t, "unshare")
	script := `mount --bind "$1" "$2" && shift 2 && exec tshark "$@"`
	args = append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", ext, wiresharkExtcapDir(t)}, args...)
	if ns == nil {
		testenv.MustBeRoot(t, "bind-mounts a folder over Wireshark's extcap folder")
		return exec.Command("unshare", args...)
	}
	return ns.Command("unshare", args...)
}

func tsharkWithExtcap(t *testing.T, ns *testnetns.NS, ext string, args ...string) string {
	t.Helper()
	out, err := tsharkCommand(t, ns, ext, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// captureThroughExtcap runs tshark -i ibcap-vcap -c n (and extra), sends
// the bundled capture once tshark says its capture started (after ibcap
// wrote the file header into the FIFO, which it does once its capture is
// open), and returns the frames of tshark's file once it stopped. ibcap
// must be gone then, with its packet socket.
func captureThroughExtcap(t *testing.T, ns *testnetns.NS, ext string, n int, extra ...string) [][]byte {
	t.Helper()
	file := filepath.Join(t.TempDir(), "extcap.pcapng")
	cmd := tsharkCommand(t, ns, ext, append([]string{"-i", "ibcap-vcap", "-c", strconv.Itoa(n), "-w", file}, extra...)...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	started := make(chan bool, 1)
	var said strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			said.WriteString(sc.Text() + "\n")
			if !sent && strings.Contains(sc.Text(), "Capture started") {
				started <- true
				sent = true
			}
		}
		if !sent {
			started <- false
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	select {
	case ok := <-started:
		if !ok {
			<-read
			t.Fatalf("tshark stopped before its capture started: %v\n%s", <-done, said.String())
		}
	case <-time.After(testenv.WaitDeadline):
		t.Fatal("tshark's capture through ibcap did not start")
	}
	ns.Replay(t, bundled, "--pps=20000")
	select {
	case err := <-done:
		<-read
		if err != nil {
			t.Fatalf("tshark: %v\n%s", err, said.String())
		}
	case <-time.After(testenv.WaitDeadline):
		t.Fatalf("tshark did not stop after %d packets", n)
	}
	testenv.WaitFor(t, 0, "ibcap gone with tshark (no packet socket left in the namespace)", func() bool {
		out, err := ns.Command("cat", "/proc/net/packet").Output()
		return err == nil && strings.Count(strings.TrimSpace(string(out)), "\n") == 0
	})
	got, err := readRecords(t, file)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
