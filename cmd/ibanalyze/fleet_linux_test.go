package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/fleet"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// The fleet test's network, all in namespaces of its own: a monitoring
// namespace (Prometheus on its own 127.0.0.1, the ibanalyze commands,
// tcpreplay) joined by one veth pair to each of three host namespaces.
// Host i's end, eth0, has the MAC and RoCE address testcap gives host i
// (02:00:00:00:00:0i, 192.168.7.i) and a management address 10.201.i.1
// that Prometheus scrapes its ibcap at. Frames replayed into the monitor's
// end of a pair arrive on eth0, where the host's ibcap captures them.
const (
	fleetHosts     = 3
	fleetAgentPort = "9464"
	fleetPromAddr  = "127.0.0.1:9090" // the monitoring namespace's own loopback
	fleetRange     = 5 * time.Second  // ibanalyze --range
	// fleetTrafficTime is how long each replay sends: long enough for a
	// loaded machine to start everything, let Prometheus scrape a whole
	// range and the rates settle (fleetSettle), never the time the test
	// takes, which waits only until the figures are right.
	fleetTrafficTime = 150 * time.Second
	fleetSettle      = 100 * time.Second
)

// fleetReplay is the traffic into one host: flows from other hosts (and
// from 192.168.7.9, which no agent owns) at pps frames a second.
type fleetReplay struct {
	into  int
	pps   int
	flows []fleetFlow
}

type fleetFlow struct {
	src     byte
	qp      uint32
	payload int
}

// The links: 1→2, 2→3, 3→1 and 9→1, at different rates and sizes.
var fleetTraffic = []fleetReplay{
	{into: 2, pps: 1000, flows: []fleetFlow{{1, 0x12, 256}}},
	{into: 3, pps: 500, flows: []fleetFlow{{2, 0x23, 512}}},
	{into: 1, pps: 600, flows: []fleetFlow{{3, 0x31, 1024}, {9, 0x91, 128}}},
}

// fleetNet is the test's namespaces.
type fleetNet struct{ mon, hosts []string }

// newFleetNet creates the monitoring namespace, the host namespaces and
// the veth pairs between them; they are deleted when the test ends, after
// the processes in them (cleanups run last registered first).
func newFleetNet(t *testing.T) *fleetNet {
	t.Helper()
	prefix := fmt.Sprintf("ibscope-fleet-%d-", os.Getpid())
	n := &fleetNet{mon: []string{prefix + "mon"}}
	for i := 1; i <= fleetHosts; i++ {
		n.hosts = append(n.hosts, fmt.Sprintf("%sh%d", prefix, i))
	}
	for _, ns := range append(slices.Clone(n.mon), n.hosts...) {
		ipCmd(t, "netns", "add", ns)
		t.Cleanup(func() {
			if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
				t.Errorf("delete namespace %s: %v: %s", ns, err, out)
			}
		})
		ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	}
	mon := n.mon[0]
	for i, h := range n.hosts {
		m := fmt.Sprintf("m%d", i+1)
		ipCmd(t, "-n", mon, "link", "add", m, "type", "veth", "peer", "name", "eth0", "netns", h)
		ipCmd(t, "-n", mon, "addr", "add", fmt.Sprintf("10.201.%d.254/24", i+1), "dev", m)
		ipCmd(t, "-n", mon, "link", "set", m, "up")
		ipCmd(t, "-n", h, "link", "set", "eth0", "address", fmt.Sprintf("02:00:00:00:00:%02x", i+1))
		ipCmd(t, "-n", h, "addr", "add", fmt.Sprintf("192.168.7.%d/32", i+1), "dev", "eth0")
		ipCmd(t, "-n", h, "addr", "add", fmt.Sprintf("10.201.%d.1/24", i+1), "dev", "eth0")
		ipCmd(t, "-n", h, "link", "set", "eth0", "up")
	}
	return n
}

func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// proc is a process the test started: its output is kept for failures,
// and it is killed when the test ends unless it has exited.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	said chan struct{} // closed when a line starting with ready was written
	done chan error
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// start runs the command in namespace ns and, when ready is not "",
// waits until a line of its output starts with it.
func start(t *testing.T, name, ns, ready string, argv ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...),
		said: make(chan struct{}), done: make(chan error, 1)}
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	go func() {
		sc := bufio.NewScanner(pr)
		said := false
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if !said && ready != "" && strings.HasPrefix(sc.Text(), ready) {
				said = true
				close(p.said)
			}
		}
	}()
	go func() {
		err := p.cmd.Wait()
		pw.Close()
		p.done <- err
	}()
	if ready != "" {
		select {
		case <-p.said:
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%s exited before it was ready: %v\n%s", name, err, p.output())
		case <-time.After(testenv.WaitDeadline):
			t.Fatalf("%s did not get ready:\n%s", name, p.output())
		}
	}
	return p
}

// The counters of fleet-h1's RDMA port (roceSysfs) count up as the test
// runs: port_xmit_data by portTxBytesPerS (in 4-byte words, as the kernel
// shows it) and symbol_error by symbolErrorsPerS; the others hold still.
const (
	portTxBytesPerS  = 10_000
	symbolErrorsPerS = 10
)

// roceSysfs writes a sysfs tree with one RDMA device, mlx5_0, whose RoCE
// port 1 has netdev as its netdev and the port counters node_exporter
// serves, for IBSCOPE_SYSFS, and returns its mount point. Until the test
// ends, port_xmit_data and symbol_error count up with the time since (each
// replaced whole, by a rename, as the agent may read it at any moment).
func roceSysfs(t *testing.T, netdev string) string {
	t.Helper()
	root := t.TempDir()
	port := filepath.Join(root, "class", "infiniband", "mlx5_0", "ports", "1")
	files := map[string]string{"link_layer": "Ethernet", "state": "4: ACTIVE", "phys_state": "5: LinkUp",
		"rate": "100 Gb/sec (4X EDR)", "lid": "0x0", "gid_attrs/ndevs/0": netdev}
	for _, c := range []string{"port_rcv_data", "port_xmit_data", "port_rcv_packets", "port_xmit_packets", "port_xmit_wait",
		"port_rcv_errors", "port_rcv_discards", "port_xmit_discards", "symbol_error", "link_downed"} {
		files["counters/"+c] = "1000"
	}
	write := func(rel, content string) error {
		p := filepath.Join(port, rel)
		if err := os.WriteFile(p+".new", []byte(content+"\n"), 0o644); err != nil {
			return err
		}
		return os.Rename(p+".new", p)
	}
	for rel, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(port, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := write(rel, content); err != nil {
			t.Fatal(err)
		}
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		t0 := time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			s := time.Since(t0).Seconds()
			if err := write("counters/port_xmit_data", fmt.Sprint(1000+int64(s*portTxBytesPerS/4))); err != nil {
				done <- err
				return
			}
			if err := write("counters/symbol_error", fmt.Sprint(1000+int64(s*symbolErrorsPerS))); err != nil {
				done <- err
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("fleet-h1's port counters: %v", err)
		}
	})
	return root
}

// fleetQuery runs an ibanalyze fleet command in the monitoring namespace
// and decodes its JSON into v.
func fleetQuery(mon, command string, v any) error {
	cmd := exec.Command("ip", "netns", "exec", mon, ibanalyzeBin, command, "--json", "--prometheus", "http://"+fleetPromAddr, "--range", fleetRange.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("ibanalyze %s: %v: %s", command, err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("ibanalyze %s --json: %v\n%s", command, err, out)
	}
	return nil
}

// waitStatus asks status until ok says yes (Prometheus may still be
// starting), failing after testenv.WaitDeadline.
func waitStatus(t *testing.T, mon, what string, ok func(*fleet.Status) bool) *fleet.Status {
	t.Helper()
	var s fleet.Status
	var err error
	if !testenv.Poll(0, func() bool {
		s = fleet.Status{}
		err = fleetQuery(mon, "status", &s)
		return err == nil && ok(&s)
	}) {
		t.Fatalf("status never showed %s: %+v (%v)", what, s, err)
	}
	return &s
}

// TestFleetView is the cluster view against the real thing: three ibcap
// agents, each in a host namespace of its own capturing on its NIC while
// tcpreplay sends RoCE traffic into it at a known rate, scraped every
// second by Debian's Prometheus. status must show three agents alive;
// nics each host's packet and byte rates within 5 % of what was replayed;
// links the four links between the right hosts (and the address no agent
// owns) at their rates; every query of the Grafana dashboard returns
// series with the labels its panel uses. Then the agent stopped with SIGTERM reads stopped,
// the one killed with SIGKILL stale, the third still alive.
func TestFleetView(t *testing.T) {
	testenv.MustBeRoot(t, "creates network namespaces")
	for _, c := range []string{"ip", "tcpreplay", "prometheus", "unshare", "curl"} {
		testenv.MustHaveTool(t, c)
	}
	dir := t.TempDir()
	ibcap := filepath.Join(dir, "ibcap")
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", ibcap, "../ibcap").CombinedOutput(); err != nil {
		t.Fatalf("build ibcap: %v\n%s", err, out)
	}
	net := newFleetNet(t)
	mon := net.mon[0]

	var targets []string
	for i := range net.hosts {
		targets = append(targets, fmt.Sprintf("'10.201.%d.1:%s'", i+1, fleetAgentPort))
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ibcap
    static_configs:
      - targets: [%s]
`, strings.Join(targets, ", "))), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := start(t, "prometheus", mon, "", "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+fleetPromAddr, "--log.level=warn")

	agents := make([]*proc, len(net.hosts))
	for i, h := range net.hosts {
		// fleet-h1's eth0 is the netdev of an RDMA port, as a ConnectX's
		// is, in a sysfs tree on disk: its agent serves the port's counters.
		env := []string{"env"}
		if i == 0 {
			env = append(env, capture.EnvSysfs+"="+roceSysfs(t, "eth0"))
		}
		// A UTS namespace of its own gives each agent its host's name.
		agents[i] = start(t, "ibcap", h, "ibcap: capturing on", append(env, "unshare", "--uts", "sh", "-c",
			`echo "$0" >/proc/sys/kernel/hostname && exec "$@"`, fmt.Sprintf("fleet-h%d", i+1),
			ibcap, "-i", "eth0", "--metrics", fmt.Sprintf("10.201.%d.1:%s", i+1, fleetAgentPort), "--metrics-linger", "3s")...)
	}

	// Traffic for longer than the test needs; each replay is stopped at
	// the end. want* are per host and per link, in frames and wire bytes
	// (frame + FCS, preamble and gap) a second.
	wantPPS, wantBPS := map[string]float64{}, map[string]float64{}
	for _, r := range fleetTraffic {
		frames := r.pps * int(fleetTrafficTime/time.Second)
		var pkts []testcap.Packet
		var wire float64
		n := frames / len(r.flows)
		for _, f := range r.flows {
			pkts = append(pkts, testcap.Stream(n, f.src, byte(r.into), f.qp, 0, f.payload, testcap.BaseNs, func(int) int64 { return 1000 })...)
		}
		slices.SortStableFunc(pkts, func(a, b testcap.Packet) int { return int(a.TsNs - b.TsNs) }) // the flows interleaved
		linkWire := map[byte]float64{}
		for _, p := range pkts {
			b := float64(len(testcap.RoCEFrame(t, p)) + 24)
			wire += b
			linkWire[p.Src] += b
		}
		host := fmt.Sprintf("fleet-h%d", r.into)
		wantPPS[host] = float64(r.pps)
		wantBPS[host] = wire / float64(len(pkts)) * float64(r.pps)
		for src, b := range linkWire {
			from := fmt.Sprintf("fleet-h%d/eth0", src)
			if src > fleetHosts {
				from = fmt.Sprintf("192.168.7.%d", src)
			}
			wantBPS[from+">"+host+"/eth0"] = b / float64(len(pkts)) * float64(r.pps)
		}
		pcap := testcap.WriteIn(t, dir, fmt.Sprintf("into%d.pcap", r.into), false, pkts)
		start(t, "tcpreplay", mon, "", "tcpreplay", "-q", "-i", fmt.Sprintf("m%d", r.into), fmt.Sprintf("--pps=%d", r.pps), pcap)
	}

	waitStatus(t, mon, "three agents alive", func(s *fleet.Status) bool { return s.Alive == fleetHosts })
	// The figures are right once every agent has samples over the whole
	// range (rate() of a series that starts inside the range undercounts)
	// and the replays run at their pace: when, depends on how busy the
	// machine is, so the test asks until they are, not after a fixed time.
	var problems []string
	if !testenv.Poll(fleetSettle, func() bool {
		problems = fleetProblems(mon, wantPPS, wantBPS)
		return len(problems) == 0
	}) {
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The tables, as an operator reads them.
	for _, c := range []struct{ command, want string }{{"nics", "fleet-h3"}, {"nics", "port rx"}, {"links", "192.168.7.9"}} {
		out, err := exec.Command("ip", "netns", "exec", mon, ibanalyzeBin, c.command, "--prometheus", "http://"+fleetPromAddr,
			"--range", fleetRange.String()).CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("ibanalyze %s: %v, want %s in:\n%s", c.command, err, c.want, out)
		}
		t.Logf("ibanalyze %s:\n%s", c.command, out)
	}
	// The Grafana dashboard's every query, against the same Prometheus.
	for _, c := range checkDashboard(t, mon) {
		t.Logf("dashboard: %s", c)
	}
	if t.Failed() {
		t.Logf("prometheus said:\n%s", prom.output())
	}

	// fleet-h1 stops as asked, fleet-h2 is killed.
	if err := agents[0].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := agents[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := waitStatus(t, mon, "one agent of each state", func(s *fleet.Status) bool {
		return s.Alive == 1 && s.Stale == 1 && s.Stopped == 1
	})
	for _, a := range s.Agents {
		want := map[string]fleet.State{"fleet-h1": fleet.Stopped, "fleet-h2": fleet.Stale, "fleet-h3": fleet.Alive}[a.Host]
		if a.State != want {
			t.Errorf("%s is %s, want %s", a.Host, a.State, want)
		}
	}
	select {
	case err := <-agents[0].done:
		agents[0].done <- err
		if err != nil {
			t.Errorf("ibcap stopped with SIGTERM: %v\n%s", err, agents[0].output())
		}
	case <-time.After(testenv.WaitDeadline):
		t.Errorf("ibcap did not exit after SIGTERM and its linger:\n%s", agents[0].output())
	}
}

// fleetProblems asks nics and links and says what differs from the
// traffic replayed: each host's packet and byte rates and each link's
// byte rate within 5 %, every NIC alive and healthy, the four links each
// seen by its receiver. None once the fleet view is right.
func fleetProblems(mon string, wantPPS, wantBPS map[string]float64) []string {
	var problems []string
	near := func(what string, got, want float64) {
		if math.Abs(got-want) > 0.05*want {
			problems = append(problems, fmt.Sprintf("%s: %.1f, want %.1f within 5 %%", what, got, want))
		}
	}
	var nics struct {
		NICs []fleet.NIC `json:"nics"`
	}
	if err := fleetQuery(mon, "nics", &nics); err != nil {
		return []string{err.Error()}
	}
	if len(nics.NICs) != fleetHosts {
		problems = append(problems, fmt.Sprintf("%d NICs, want %d: %+v", len(nics.NICs), fleetHosts, nics.NICs))
	}
	for _, n := range nics.NICs {
		near(n.Host+" packets/s", n.PacketsPerS, wantPPS[n.Host])
		near(n.Host+" bytes/s", n.BytesPerS, wantBPS[n.Host])
		if n.Device != "eth0" || n.State != fleet.Alive || len(n.Health) != 0 || n.Drops() != 0 || n.NAKs+n.Retransmissions+n.PSNGaps != 0 {
			problems = append(problems, fmt.Sprintf("%s: %+v, want eth0 alive, healthy, without drops or NAKs, retransmissions, PSN gaps", n.Host, n))
		}
		// fleet-h1's RDMA port (roceSysfs): its counters' rates, through
		// ibcap, Prometheus and nics's queries; no port on the others.
		if n.Host != "fleet-h1" {
			if n.PortRxBytesPerS != nil || n.PortTxBytesPerS != nil || n.PortErrors != 0 {
				problems = append(problems, fmt.Sprintf("%s: port rates %v and %v, port errors %v; it has no RDMA port", n.Host, n.PortRxBytesPerS, n.PortTxBytesPerS, n.PortErrors))
			}
			continue
		}
		if n.PortRxBytesPerS == nil || n.PortTxBytesPerS == nil || *n.PortRxBytesPerS != 0 {
			problems = append(problems, fmt.Sprintf("%s: port rates %v and %v, want 0 received", n.Host, n.PortRxBytesPerS, n.PortTxBytesPerS))
			continue
		}
		near(n.Host+" port bytes transmitted/s", *n.PortTxBytesPerS, portTxBytesPerS)
		near(n.Host+" port errors over the range", n.PortErrors, symbolErrorsPerS*fleetRange.Seconds())
	}
	var links fleet.Links
	if err := fleetQuery(mon, "links", &links); err != nil {
		return append(problems, err.Error())
	}
	got := map[string]fleet.Link{}
	for _, l := range links.Links {
		got[l.Src.String()+">"+l.Dst.String()] = l
	}
	for _, key := range []string{"fleet-h1/eth0>fleet-h2/eth0", "fleet-h2/eth0>fleet-h3/eth0",
		"fleet-h3/eth0>fleet-h1/eth0", "192.168.7.9>fleet-h1/eth0"} {
		l, ok := got[key]
		if !ok {
			problems = append(problems, fmt.Sprintf("no link %s in %+v", key, links.Links))
			continue
		}
		near(key+" bytes/s", l.BytesPerS, wantBPS[key])
		if observer := strings.Split(key, ">")[1]; !slices.Equal(l.ObservedBy, []string{observer}) {
			problems = append(problems, fmt.Sprintf("%s seen by %v, want %s", key, l.ObservedBy, observer))
		}
	}
	if len(got) != 4 {
		problems = append(problems, fmt.Sprintf("%d links, want 4: %+v", len(got), links.Links))
	}
	return problems
}
