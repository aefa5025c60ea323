package testnetns

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ibscope/ibscope/internal/testenv"
)

// NS is a network namespace with a veth pair: traffic sent on Send arrives
// on Capture. Send has 10.199.0.1/24, Capture 10.199.0.2/24.
type NS struct {
	Name, Send, Capture string
}

var seq atomic.Int32

// New creates namespace ibscope-test-PID-N with veth pair vsend/vcap, both
// up, the ends' MAC addresses set to sendMAC and captureMAC unless nil, and
// deletes it when the test ends, pass or fail.
func New(t testing.TB, sendMAC, captureMAC net.HardwareAddr) *NS {
	t.Helper()
	testenv.MustBeRoot(t, "creates a network namespace with a veth pair")
	testenv.MustHaveTool(t, "ip")
	ns := &NS{Name: fmt.Sprintf("ibscope-test-%d-%d", os.Getpid(), seq.Add(1)), Send: "vsend", Capture: "vcap"}
	if out, err := exec.Command("ip", "netns", "add", ns.Name).CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "cannot create a network namespace: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns.Name).CombinedOutput(); err != nil {
			t.Errorf("delete namespace %s: %v: %s", ns.Name, err, out)
		}
	})
	ns.IP(t, "link", "add", ns.Send, "type", "veth", "peer", "name", ns.Capture)
	if sendMAC != nil {
		ns.IP(t, "link", "set", ns.Send, "address", sendMAC.String())
	}
	if captureMAC != nil {
		ns.IP(t, "link", "set", ns.Capture, "address", captureMAC.String())
	}
	// No IPv6 on the pair: its neighbour discovery, router solicitations
	// and MLD reports, sent when the links come up, would otherwise reach
	// a capture at a moment that depends on the machine's load (a frame
	// before a socket's kernel filter is attached is counted as filtered
	// by ibcap). Frames the tests send are written raw and still arrive.
	for _, dev := range []string{ns.Send, ns.Capture} {
		knob := "/proc/sys/net/ipv6/conf/" + dev + "/disable_ipv6"
		if out, err := ns.Command("sh", "-c", "[ ! -e "+knob+" ] || echo 1 > "+knob).CombinedOutput(); err != nil {
			t.Fatalf("disable IPv6 on %s in %s: %v: %s", dev, ns.Name, err, out)
		}
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "set", ns.Send, "up"},
		{"link", "set", ns.Capture, "up"},
		{"addr", "add", "10.199.0.1/24", "dev", ns.Send},
		{"addr", "add", "10.199.0.2/24", "dev", ns.Capture},
	} {
		ns.IP(t, args...)
	}
	return ns
}

// IP runs `ip -n NAME args...`, failing the test if it fails.
func (ns *NS) IP(t testing.TB, args ...string) {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", ns.Name}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s %s: %v: %s", ns.Name, strings.Join(args, " "), err, out)
	}
}

// HasCarrier says whether the veth pair carries frames (both ends up,
// LOWER_UP), as it does again a moment after one end was taken down and
// up.
func (ns *NS) HasCarrier() bool {
	for _, dev := range []string{ns.Capture, ns.Send} {
		out, err := exec.Command("ip", "-n", ns.Name, "link", "show", dev).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "LOWER_UP") {
			return false
		}
	}
	return true
}

// Command is a command that runs inside the namespace.
func (ns *NS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}

// Replay sends a pcap's frames out of Send with tcpreplay, at 50,000
// frames/s unless extra sets --pps or --mbps, and returns what tcpreplay
// printed. The test fails if tcpreplay does.
func (ns *NS) Replay(t testing.TB, pcap string, extra ...string) string {
	t.Helper()
	args := append([]string{"-q", "-i", ns.Send}, extra...)
	if !hasFlag(extra, "--pps") && !hasFlag(extra, "--mbps") {
		// Paced: flat out, a loaded machine's receive backlog (1000 frames)
		// can overflow before any capture sees the frames.
		args = append(args, "--pps=50000")
	}
	args = append(args, pcap)
	out, err := ns.Command("tcpreplay", args...).CombinedOutput()
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

// RxDropped reads Capture's receive drop counter: frames the kernel's
// backlog could not take from the sender, before any capture saw them.
func (ns *NS) RxDropped(t testing.TB) int {
	t.Helper()
	out, err := ns.Command("cat", "/sys/class/net/"+ns.Capture+"/statistics/rx_dropped").Output()
	if err != nil {
		t.Fatalf("read rx_dropped: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("rx_dropped %q: %v", out, err)
	}
	return n
}
