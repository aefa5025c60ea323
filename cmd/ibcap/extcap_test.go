package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/testenv"
)

// sentence is one line of extcap's grammar: a keyword and {key=value}
// fields, no brace inside a value.
var sentence = regexp.MustCompile(`^(extcap|interface|dlt|arg|value) (\{[a-z]+=[^{}\n]*\})+$`)

func checkSentences(t *testing.T, what, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if !sentence.MatchString(l) {
			t.Errorf("%s: %q is not an extcap sentence", what, l)
		}
	}
	return lines
}

// What Wireshark asks first: ibcap's version line, then one interface per
// capturable device, each named ibcap-NAME and saying its link type; the
// last one is any.
func TestExtcapInterfaces(t *testing.T) {
	var out bytes.Buffer
	if err := extcapInterfaces(&out); err != nil {
		t.Fatal(err)
	}
	lines := checkSentences(t, "--extcap-interfaces", out.String())
	if !strings.HasPrefix(lines[0], "extcap {version=") {
		t.Errorf("first line %q: want the extcap version line", lines[0])
	}
	last := lines[len(lines)-1]
	if last != "interface {value=ibcap-any}{display=ibcap: RoCE on every interface (Linux cooked v2)}" {
		t.Errorf("last line %q: want any", last)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "interface {value=ibcap-") || !strings.Contains(l, "{display=ibcap: ") {
			t.Errorf("%q: want interface {value=ibcap-NAME}{display=ibcap: ...}", l)
		}
	}
}

// An RDMA device's port choice and link types come from sysfs: a native
// InfiniBand port is written as ERF records, an Ethernet port as Ethernet.
func TestExtcapRDMADevice(t *testing.T) {
	dev := capture.RDMADevice{Name: "mlx5_0", Ports: []capture.RDMAPort{
		{Num: 1, LinkLayer: "InfiniBand", State: "ACTIVE", Rate: "100 Gb/sec (4X EDR)"},
		{Num: 2, LinkLayer: "Ethernet", State: "DOWN", Rate: "40 Gb/sec (4X QDR)", Netdev: "eth3"},
	}}
	it := extcapInterface{name: dev.Name, dev: &dev}
	var out bytes.Buffer
	if err := extcapDLTs(&out, it); err != nil {
		t.Fatal(err)
	}
	want := "dlt {number=197}{name=ERF}{display=InfiniBand in ERF records}\ndlt {number=1}{name=EN10MB}{display=Ethernet}\n"
	if out.String() != want {
		t.Errorf("--extcap-dlts:\n%s\nwant:\n%s", out.String(), want)
	}
	if got, want := describeRDMADevice(dev), "mlx5_0, port 1 InfiniBand in ERF records, port 2 Ethernet (verbs sniffer)"; got != want {
		t.Errorf("display %q, want %q", got, want)
	} // A hardware RoCE port's netdev points to the device, whose RDMA
	// traffic AF_PACKET on it misses; a software RoCE one names its device.
	rxe := capture.RDMADevice{Name: "rxe0", SoftRoCE: true, Parent: "va", Ports: []capture.RDMAPort{{Num: 1, LinkLayer: "Ethernet", Netdev: "va"}}}
	devs := []capture.RDMADevice{dev, rxe}
	for netdev, want := range map[string]string{
		"eth3": "Ethernet; RDMA port mlx5_0:2's traffic bypasses it: ibcap-mlx5_0",
		"va":   "Ethernet; software RoCE rxe0",
		"eth0": "Ethernet",
	} {
		if got := netdevWords(devs, netdev); got != want {
			t.Errorf("%s: display %q, want %q", netdev, got, want)
		}
	}
}

// The dialog of a network interface: snap length, time stamp type, the
// capture filter, the header filters, every frame, promiscuous mode off; any has no
// promiscuous mode (as tcpdump's any).
func TestExtcapConfig(t *testing.T) {
	netdev := aNetdev(t)
	for _, tc := range []struct {
		iface string
		calls []string
	}{
		{netdev, []string{"--snaplen", "--time-stamp-type", "--filter", "--qp", "--opcode", "--all", "--no-promiscuous-mode"}},
		{capture.AnyDevice, []string{"--snaplen", "--time-stamp-type", "--filter", "--qp", "--opcode", "--all"}},
	} {
		it, err := extcapTarget(extcapPrefix + tc.iface)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := extcapConfig(&out, it); err != nil {
			t.Fatal(err)
		}
		var calls []string
		for _, l := range checkSentences(t, "--extcap-config", out.String()) {
			if m := regexp.MustCompile(`^arg \{number=\d+\}\{call=([^}]*)\}`).FindStringSubmatch(l); m != nil {
				calls = append(calls, m[1])
			}
		}
		if strings.Join(calls, " ") != strings.Join(tc.calls, " ") {
			t.Errorf("%s: the dialog calls %v, want %v", tc.iface, calls, tc.calls)
		}
		if !strings.Contains(out.String(), "value {arg=1}{value=host}{display=host: the kernel's receive time}{default=true}") {
			t.Errorf("%s: no host time stamp type chosen by default:\n%s", tc.iface, out.String())
		}
	}
}

// Mistakes name what to give instead.
func TestExtcapMistakes(t *testing.T) {
	netdev := aNetdev(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--extcap-dlts"}, "need --extcap-interface"},
		{[]string{"--extcap-config", "--extcap-interface", netdev}, "ibcap's interfaces are named ibcap-DEVICE"},
		{[]string{"--extcap-config", "--extcap-interface", "ibcap-nosuch0"}, "no such interface; ibcap offers ibcap-"},
		{[]string{"--capture", "--extcap-interface", extcapPrefix + netdev}, "give --fifo FIFO"},
		{[]string{"--fifo", "/tmp/x", "-i", netdev}, "--fifo is for Wireshark's extcap calls"},
		{[]string{"-i", netdev, "--port", "2", "-w", "/dev/null"}, `-i "` + netdev + `" is not an RDMA device`},
	} {
		cmd := newRoot()
		cmd.SetArgs(tc.args)
		cmd.SetOut(new(bytes.Buffer))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ibcap %s: %v, want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

// aNetdev is a network interface of the machine's (the loopback one, at
// least).
func aNetdev(t *testing.T) string {
	t.Helper()
	nets := capture.ListNetdevs()
	if len(nets) == 0 {
		t.Skip("no network interface to offer")
	}
	return nets[0].Name
}

// Wireshark checks its capture filter box by asking with the filter and
// the interface alone: nothing printed is a valid filter, a line says
// what is wrong with another.
func TestExtcapFilterCheck(t *testing.T) {
	if _, err := capture.CompileFilter("udp", 1, 128); err != nil {
		testenv.SkipOrFail(t, "needs libpcap to compile filters: %v", err)
	}
	it, err := extcapTarget(extcapPrefix + aNetdev(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr  string
		valid bool
	}{{"udp port 4791", true}, {"udp port", false}} {
		var out bytes.Buffer
		if err := extcapCheckFilter(&out, it, tc.expr); err != nil {
			t.Fatal(err)
		}
		if (out.Len() == 0) != tc.valid || strings.Count(out.String(), "\n") > 1 {
			t.Errorf("filter %q: %q; valid %v", tc.expr, out.String(), tc.valid)
		}
		// As Wireshark calls it.
		stdout, stderr, err := ibcapOut(t, "--extcap-capture-filter", tc.expr, "--extcap-interface", extcapPrefix+it.name)
		if err != nil || stdout != out.String() {
			t.Errorf("ibcap --extcap-capture-filter %q --extcap-interface: %v: %q, want %q\n%s", tc.expr, err, stdout, out.String(), stderr)
		}
	}
}
