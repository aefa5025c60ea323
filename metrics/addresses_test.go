package metrics

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/telemetry"
)

// TestAddressesServed: ibscope_address_info lists the netdev's IPs (lo's),
// the port's non-zero GIDs (an IPv4-mapped one as its IPv4 address) and
// its LID, once each; the flow series carry their ends in src and dst.
func TestAddressesServed(t *testing.T) {
	root := t.TempDir()
	dir := telemetry.SysfsPortDir(root, "fake_0", 1)
	for name, v := range map[string]string{
		"gids/0": "fe80:0000:0000:0000:0202:c9ff:fe00:0101",
		"gids/1": "0000:0000:0000:0000:0000:ffff:c0a8:0701",
		"gids/2": "0000:0000:0000:0000:0000:0000:0000:0000",
		"gids/3": "0000:0000:0000:0000:0000:ffff:c0a8:0701", // the same address as RoCEv1 and v2
		"lid":    "0x1a",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := New(Config{Host: "h1", Device: "mem", LinkType: decode.LinkTypeEthernet, Netdev: "lo",
		PortDevice: "fake_0", Port: 1, SysfsRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	l.Finish(runCapture(t, l, flowFrames(t, 2, 3)))
	mf := gather(t, l)
	var got []string
	for _, m := range mf["ibscope_address_info"].GetMetric() {
		lb := labels(m.GetLabel())
		if lb["host"] != "h1" || lb["device"] != "mem" {
			t.Errorf("address_info labels %v", lb)
		}
		got = append(got, lb["address"])
	}
	for _, want := range []string{"127.0.0.1", "192.168.7.1", "fe80::202:c9ff:fe00:101", "lid:26"} {
		if !slices.Contains(got, want) {
			t.Errorf("address_info lacks %s: %v", want, got)
		}
	}
	if len(got) != len(slices.Compact(slices.Clone(got))) || slices.Contains(got, "::") {
		t.Errorf("address_info repeats an address or lists the zero GID: %v", got)
	}
	for _, m := range mf["ibscope_flow_bytes_total"].GetMetric() {
		if lb := labels(m.GetLabel()); lb["src"] != "192.168.7.1" || lb["dst"] != "192.168.7.2" {
			t.Errorf("flow %s: src %q dst %q, want 192.168.7.1 and 192.168.7.2", lb["flow"], lb["src"], lb["dst"])
		}
	}
}

// TestAddressLabels: IPv4-mapped GIDs read as IPv4, LIDs as lid:N, analyze's
// "other" flow has no ends.
func TestAddressLabels(t *testing.T) {
	for in, want := range map[string]string{"::ffff:10.0.0.1": "10.0.0.1", "fe80::1": "fe80::1", "10.0.0.2": "10.0.0.2"} {
		if got := AddressLabel(netip.MustParseAddr(in)); got != want {
			t.Errorf("AddressLabel(%s) = %s, want %s", in, got, want)
		}
	}
	if got := AddressLabel(netip.Addr{}); got != "" {
		t.Errorf("AddressLabel(invalid) = %q", got)
	}
	slid, dlid := uint16(1), uint16(2)
	if s, d := keyAddresses(&analyze.GroupKey{Transport: "ib", SLID: &slid, DLID: &dlid}); s != "lid:1" || d != "lid:2" {
		t.Errorf("IB ends %s %s", s, d)
	}
	if s, d := keyAddresses(&analyze.GroupKey{Transport: "other"}); s != "" || d != "" {
		t.Errorf("other's ends %q %q", s, d)
	}
}

func labels(ls []*dto.LabelPair) map[string]string {
	m := map[string]string{}
	for _, l := range ls {
		m[l.GetName()] = l.GetValue()
	}
	return m
}
