package capture

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// vethNS is a network namespace of the test's own with a veth pair in it:
// traffic sent on Send arrives on Capture. Nothing in it reaches any other
// network.
type vethNS struct {
	Name, Send, Capture string
}

var nsSeq atomic.Int32

// newVethNS creates ibscope-test-PID-N with veth pair vsend/vcap, both up,
// and deletes it when the test ends, pass or fail.
func newVethNS(t testing.TB) *vethNS {
	t.Helper()
	requireRoot(t)
	ns := &vethNS{Name: fmt.Sprintf("ibscope-test-%d-%d", os.Getpid(), nsSeq.Add(1)), Send: "vsend", Capture: "vcap"}
	if out, err := exec.Command("ip", "netns", "add", ns.Name).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
			t.Errorf("delete namespace %s: %v: %s", ns.Name, err, out)
		}
	})
	for _, args := range [][]string{
		{"link", "add", ns.Send, "type", "veth", "peer", "name", ns.Capture},
		{"link", "set", ns.Send, "address", macA.String()},
		{"link", "set", ns.Capture, "address", macB.String()},
		{"link", "set", "lo", "up"},
		{"link", "set", ns.Send, "up"},
		{"link", "set", ns.Capture, "up"},
		{"addr", "add", "10.199.0.1/24", "dev", ns.Send},
		{"addr", "add", "10.199.0.2/24", "dev", ns.Capture},
	} {
		ns.ip(t, args...)
	}
	return ns
}

func (ns *vethNS) ip(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", ns.Name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s %s: %v: %s", ns.Name, strings.Join(args, " "), err, out)
	}
}

// exec runs a command inside the namespace.
func (ns *vethNS) command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// do runs f on an OS thread that has entered the namespace; sockets f
// opens stay in the namespace after it returns.
func (ns *vethNS) do(t testing.TB, f func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked: Go retires it when this goroutine
		// ends, so no other goroutine ever runs in the test namespace.
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open namespace %s: %w", ns.Name, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter namespace %s: %w", ns.Name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// replay sends a pcap's frames out of the namespace's Send interface with
// tcpreplay.
func (ns *vethNS) replay(t testing.TB, pcap string, extra ...string) string {
	t.Helper()
	args := append([]string{"-q", "-i", ns.Send}, extra...)
	if !hasFlag(extra, "--pps") && !hasFlag(extra, "--mbps") {
		// Paced: flat out, a loaded machine's receive backlog (1000 frames)
		// can overflow before any capture sees the frames.
		args = append(args, "--pps=50000")
	}
	args = append(args, pcap)
	out, err := ns.command("tcpreplay", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("tcpreplay %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func hasFlag(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

// rxDropped reads the capture side's receive drop counter: frames the
// kernel's backlog could not take from the sender, before any capture.
func (ns *vethNS) rxDropped(t testing.TB) int {
	t.Helper()
	out, err := ns.command("cat", "/sys/class/net/"+ns.Capture+"/statistics/rx_dropped").Output()
	if err != nil {
		t.Fatalf("read rx_dropped: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("rx_dropped %q: %v", out, err)
	}
	return n
}
