package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capfile"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/cmdtest"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
	"github.com/ibscope/ibscope/internal/testnetns"
)

// The tests run the real ibcap binary in a network namespace of their own,
// with tcpreplay sending the bundled RoCE capture across a veth pair.

const bundled = "../../capture/testdata/rocev2_mixed.pcap"

var ibcapBin string

// The binary's directory is readable by the unprivileged users the -Z and
// permission tests become.
func TestMain(m *testing.M) { cmdtest.Main(m, "ibcap", &ibcapBin) }

// bundledRoCE returns the RoCE frames of the bundled capture, in order.
func bundledRoCE(t *testing.T) [][]byte {
	t.Helper()
	all, err := readRecords(t, bundled)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, data := range all {
		if capture.IsRoCEFrame(data) {
			out = append(out, data)
		}
	}
	return out
}

// newNetns creates a namespace of the test's own with veth pair vsend/vcap;
// it skips without root, ip or tcpreplay.
func newNetns(t *testing.T) *testnetns.NS {
	t.Helper()
	ns := testnetns.New(t, nil, nil)
	testenv.MustHaveTool(t, "tcpreplay")
	return ns
}

// ibcapProc is a running ibcap.
type ibcapProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
	read   chan struct{} // closed when all of stderr has been read
	// lines has stderr's lines as they come, for waitLine; lines no one
	// waits for are dropped when it is full.
	lines chan string
}

// startIbcap starts ibcap in the namespace and waits until its capture is
// open (it says so on stderr).
func startIbcap(t *testing.T, ns *testnetns.NS, stdout io.Writer, args ...string) *ibcapProc {
	t.Helper()
	cmd := ns.Command(ibcapBin, args...)
	cmd.Stdout = stdout
	return startCmd(t, cmd)
}

// stopIbcap stops ibcap with SIGINT, as a user would; it must exit cleanly.
func stopIbcap(t *testing.T, p *ibcapProc) {
	t.Helper()
	p.cmd.Process.Signal(os.Interrupt)
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
	}
}

// startCmd starts an ibcap command and waits until its capture is open.
func startCmd(t *testing.T, cmd *exec.Cmd) *ibcapProc {
	t.Helper()
	p := &ibcapProc{cmd: cmd, done: make(chan error, 1), read: make(chan struct{}), lines: make(chan string, 64)}
	pr, pw := io.Pipe()
	p.cmd.Stderr = pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	ready := make(chan bool, 1)
	go func() {
		defer close(p.read)
		sc := bufio.NewScanner(pr)
		said := false
		for sc.Scan() {
			p.stderr.WriteString(sc.Text() + "\n")
			select {
			case p.lines <- sc.Text():
			default:
			}
			if !said && strings.HasPrefix(sc.Text(), "ibcap: capturing on") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	go func() {
		err := p.cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("ibcap exited before capturing: %v\n%s", <-p.done, p.stderr.String())
		}
	case <-time.After(testenv.WaitDeadline):
		t.Fatalf("ibcap did not start capturing:\n%s", p.stderr.String())
	}
	return p
}

// waitLine waits until ibcap says line on stderr (while it runs: stderr
// is read only once it exited).
func (p *ibcapProc) waitLine(t *testing.T, line string) {
	t.Helper()
	deadline := time.After(testenv.WaitDeadline)
	for {
		select {
		case l := <-p.lines:
			if l == line {
				return
			}
		case <-deadline:
			t.Fatalf("ibcap did not say %q", line)
		}
	}
}

func (p *ibcapProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		<-p.read // all it said, to the last line
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("ibcap did not exit:\n%s", p.stderr.String())
		return nil
	}
}

// readRecords returns a copy of every record of the capture at path, in
// order, and the error that stopped reading it, if any.
func readRecords(t *testing.T, path string) ([][]byte, error) {
	t.Helper()
	recs, _, err := testcap.FileRecords(path)
	return recs, err
}

func sameFrames(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d frames captured, %d RoCE frames sent", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs:\n got %x\nwant %x", i+1, got[i], want[i])
		}
	}
}

func tsharkCount(t *testing.T, path string) int {
	t.Helper()
	testenv.MustHaveTool(t, "tshark")
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	return len(strings.Fields(string(out)))
}

// SIGINT and SIGTERM stop ibcap after it drained the ring: every RoCE
// frame sent is in the file, byte for byte, in order; the others were
// filtered out; tshark reads it; the report on stderr accounts for them.
func TestIbcapStopSignals(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			ns := newNetns(t)
			want := bundledRoCE(t)
			out := filepath.Join(t.TempDir(), "out.pcap")
			p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
			ns.Replay(t, bundled, "--pps=50000")
			p.cmd.Process.Signal(sig)
			if err := p.wait(t); err != nil {
				t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
			}
			got, err := readRecords(t, out)
			if err != nil {
				t.Fatal(err)
			}
			sameFrames(t, got, want)
			if !strings.Contains(p.stderr.String(), fmt.Sprintf("%d packets written", len(want))) ||
				!strings.Contains(p.stderr.String(), "0 packets dropped by the kernel") {
				t.Errorf("report:\n%s", p.stderr.String())
			}
			if n := tsharkCount(t, out); n != len(want) {
				t.Errorf("tshark reads %d frames, want %d", n, len(want))
			}
		})
	}
}

// A capture killed with SIGKILL leaves a file that ends on a whole record,
// holding everything received more than a second (the flush interval) before.
func TestIbcapSIGKILL(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	out := filepath.Join(t.TempDir(), "out.pcap")
	p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out)
	ns.Replay(t, bundled, "--pps=50000")
	// No signal: the periodic flush alone must bring every frame to disk.
	waitRecords(t, out, len(want))
	// Now kill it while traffic flows, in the middle of whatever it does.
	replay := ns.Command("tcpreplay", "-q", "-i", "vsend", "--loop=0", "--pps=20000", bundled)
	if err := replay.Start(); err != nil {
		t.Fatal(err)
	}
	defer replay.Process.Kill()
	waitRecords(t, out, len(want)+1) // a periodic flush brought some of it
	p.cmd.Process.Kill()
	p.wait(t)
	replay.Process.Kill()
	replay.Wait()
	got, err := readRecords(t, out)
	if err != nil {
		t.Fatalf("after SIGKILL the file does not end on a whole record: %v", err)
	}
	sameFrames(t, got[:len(want)], want)
	if len(got) <= len(want) {
		t.Errorf("nothing of the second replay reached the file (%d frames)", len(got))
	}
	if n := tsharkCount(t, out); n != len(got) {
		t.Errorf("tshark reads %d frames, the file holds %d", n, len(got))
	}
}

// -w - streams a pcap to stdout, as wireshark -k -i - reads it.
func TestIbcapStdout(t *testing.T) {
	ns := newNetns(t)
	want := bundledRoCE(t)
	var stdout bytes.Buffer
	p := startIbcap(t, ns, &stdout, "-i", "vcap", "-w", "-", "-c", strconv.Itoa(len(want)))
	ns.Replay(t, bundled, "--pps=50000")
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
	}
	r, err := capfile.NewReader(&stdout, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := testcap.Records(r)
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, got, want)
}

// When the reader of -w - goes away (wireshark closed), ibcap stops as it
// would on a signal: it says why, reports what it captured and exits 0,
// rather than dying of SIGPIPE with no report.
func TestIbcapStdoutReaderGone(t *testing.T) {
	ns := newNetns(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := startIbcap(t, ns, pw, "-i", "vcap", "-w", "-")
	pw.Close()
	ns.Replay(t, bundled, "--pps=50000")
	if _, err := io.ReadFull(pr, make([]byte, 24)); err != nil { // the pcap file header
		t.Fatalf("reading ibcap's stdout: %v\n%s", err, p.stderr.String())
	}
	pr.Close()
	ns.Replay(t, bundled, "--pps=50000") // more to write into the closed pipe
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap: %v, want exit 0\n%s", err, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "closed the pipe") || !strings.Contains(p.stderr.String(), "packets captured on vcap") {
		t.Errorf("stderr does not say the reader went away and report the capture:\n%s", p.stderr.String())
	}
}

// -Z switches to an unprivileged user once the capture is open: the file
// is created as that user and the capture still works.
func TestIbcapRelinquishPrivileges(t *testing.T) {
	ns := newNetns(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	// t.TempDir's parent is private to root; nobody needs a way in.
	dir, err := os.MkdirTemp("", "ibcap-z-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	out := filepath.Join(dir, "out.pcap")
	p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out, "-Z", "nobody", "-c", "10")
	ns.Replay(t, bundled, "--pps=50000")
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap -Z nobody: %v\n%s", err, p.stderr.String())
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if uid := strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid)); uid != u.Uid {
		t.Errorf("file owned by uid %s, want nobody's %s", uid, u.Uid)
	}
	if got, err := readRecords(t, out); err != nil || len(got) != 10 {
		t.Errorf("%d frames, %v", len(got), err)
	}
}

// Without CAP_NET_RAW the error names the capability.
func TestIbcapNoPermission(t *testing.T) {
	testenv.MustBeRoot(t, "runs ibcap as an unprivileged user")
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd := exec.Command(ibcapBin, "-i", "lo", "-w", filepath.Join(os.TempDir(), "never.pcap"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CAP_NET_RAW") {
		t.Errorf("ibcap as nobody: %v\n%s", err, out)
	}
}

func TestIbcapUnknownDevice(t *testing.T) {
	out, err := exec.Command(ibcapBin, "-i", "nosuch0", "-w", filepath.Join(t.TempDir(), "x.pcap")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no capture device "nosuch0"`) || !strings.Contains(string(out), "lo") {
		t.Errorf("unknown device: %v\n%s", err, out)
	}
}

func TestIbcapFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-w", "x.pcap"},
		{"-i", "lo", "-r", "x.pcap"}, // without -w, -i lo prints, as tcpdump
		{"-i", "lo", "-w", "x.pcap", "--format", "json"},
		{"-i", "lo", "-w", "x.pcap", "--qp", "0x1000000"},
		{"-i", "lo", "-w", "x.pcap", "--opcode", "RC_NOPE"},
		{"-i", "lo", "-w", "x.pcap", "--lid", "70000"},
	} {
		if out, err := exec.Command(ibcapBin, args...).CombinedOutput(); err == nil {
			t.Errorf("%v accepted:\n%s", args, out)
		}
	}
}

// Options that cannot work on the device are refused before a capture file
// is created: --lid on Ethernet frames, --telemetry on a netdev of no RDMA port.
func TestIbcapRefusesBeforeCreatingTheFile(t *testing.T) {
	testenv.MustBeRoot(t, "opens lo")
	for _, c := range []struct{ flag, value, says string }{
		{"--lid", "1", "carry no LID"},
		{"--telemetry", "100ms", "neither an RDMA device nor the netdev of one"},
	} {
		out := filepath.Join(t.TempDir(), "x.pcap")
		msg, err := exec.Command(ibcapBin, "-i", "lo", "-w", out, c.flag, c.value).CombinedOutput()
		if err == nil || !strings.Contains(string(msg), c.says) {
			t.Errorf("%s %s: %v\n%s", c.flag, c.value, err, msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s %s: the capture file was created", c.flag, c.value)
		}
	}
}

func TestPrintDevices(t *testing.T) {
	var b bytes.Buffer
	devs := []capture.RDMADevice{{Name: "mlx5_0", Ports: []capture.RDMAPort{
		{Num: 1, LinkLayer: "InfiniBand", State: "ACTIVE", PhysState: "LinkUp", Rate: "100 Gb/sec (4X EDR)", LID: 0x1a}}},
		{Name: "mlx5_1", Ports: []capture.RDMAPort{{Num: 1, LinkLayer: "Ethernet", State: "ACTIVE", Rate: "25 Gb/sec (1X EDR)", Netdev: "eth2"}}}}
	if err := printDevices(&b, devs, []capture.Netdev{{Name: "eth2", Up: true, MTU: 9000}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mlx5_0:1", "InfiniBand", "0x1a", "100 Gb/sec (4X EDR)", "mlx5_1:1", "eth2", "9000"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-D output lacks %q:\n%s", want, b.String())
		}
	}
}

// A pcapng capture (-w *.pcapng picks the format, as with dumpcap)
// describes itself as dumpcap's do: capinfos shows the program, the
// interface by the name -i gave, the RoCE-only filter and a statistics
// block; and a section comment names the capture host.
func TestIbcapPcapngDescribesCapture(t *testing.T) {
	ns := newNetns(t)
	testenv.MustHaveTool(t, "capinfos")
	want := bundledRoCE(t)
	out := filepath.Join(t.TempDir(), "out.pcapng")
	p := startIbcap(t, ns, nil, "-i", "vcap", "-w", out) // *.pcapng: the format follows the name
	ns.Replay(t, bundled, "--pps=50000")
	stopIbcap(t, p)
	info, err := exec.Command("capinfos", out).CombinedOutput()
	if err != nil {
		t.Fatalf("capinfos: %v\n%s", err, info)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"File type:           Wireshark/... - pcapng", "Capture application: ibcap (ibscope", "Name = vcap", "Description = network interface vcap (AF_PACKET)",
		"Filter string = udp dst port 4791 or ether proto 0x8915", "Number of stat entries = 1",
		fmt.Sprintf("Number of packets = %d", len(want)), "Capture comment:     capture host: " + host} {
		if !strings.Contains(string(info), s) {
			t.Errorf("capinfos does not say %q:\n%s", s, info)
		}
	}
}

// waitRecords waits until the capture file at path holds at least n
// whole records (the periodic flush writes them), failing after
// testenv.WaitDeadline.
func waitRecords(t *testing.T, path string, n int) {
	t.Helper()
	var got [][]byte
	var err error
	if !testenv.Poll(0, func() bool {
		got, err = readRecords(t, path)
		return len(got) >= n
	}) {
		t.Fatalf("after %v %s holds %d of %d records (%v)", testenv.WaitDeadline, path, len(got), n, err)
	}
}
