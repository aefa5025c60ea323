package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/testcap"
)

// hopsCapture: 4 probes from host 1, 1 us apart, through switch 0xA1 port 1
// (100 ns) and 0xA2 port 2 (1000..1300 ns, occupancy 0..30).
func hopsCapture(t *testing.T) string {
	var frames []testcap.Frame
	for i := range 4 {
		a2 := decode.IFAHop{LNS: 1, DeviceID: 0xA2, EgressPort: 2, ResidenceNs: uint32(1000 + 100*i)}
		a2.Opaque[3] = byte(10 * i)
		hops := []decode.IFAHop{a2, {LNS: 1, DeviceID: 0xA1, EgressPort: 1, ResidenceNs: 100}}
		frames = append(frames, testcap.Frame{TsNs: testcap.BaseNs + int64(i)*1000,
			B: testcap.IFAProbe(t, testcap.Packet{Src: 1, Dst: 9, QP: 0x11, Op: 0x0A, Payload: 64, DMALen: 64}, hops)})
	}
	return testcap.WriteFrames(t, "ifa.pcap", frames)
}

func TestHopsCommand(t *testing.T) {
	path := hopsCapture(t)
	out, stderr, code := run(t, "hops", "--json", "--series", "--series-interval", "2us", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r analyze.HopsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Probes != 4 || len(r.Ports) != 2 || r.Ports[0].DeviceID != 0xA2 || r.Ports[0].ResidenceNs.Mean != 1150 || r.Ports[0].Occupancy.Max != 30 || len(r.Ports[0].Series) != 2 {
		t.Errorf("report %+v", r)
	}
	if len(r.Flows) != 1 || r.Flows[0].WorstHop.DeviceID != 0xA2 || r.Flows[0].WorstHop.Share != 4600.0/5000 {
		t.Errorf("flows %+v", r.Flows)
	}
	for _, key := range []string{`"residence_histogram"`, `"lo_ns"`, `"occupancy_histogram"`, `"lo": `, `"worst_hop"`, `"interval_ns": 2000`, `"device_id": 162`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if out, _, _ := run(t, "hops", "--json", path); strings.Contains(out, `"series": [`) {
		t.Error("series written without --series")
	}
	// Text, linear bins of 500 ns, from standard input.
	out, stderr, code = runStdin(t, path, "hops", "--linear", "--bin", "500ns", "--bins", "4", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"4 IFA 2.0 probes, 8 hop records, 2 switch ports, 1 flow", "0x000a2/1  2", "dev 0x000a2/1 port 2 [1us,1.5us):4",
		"rocev2 192.168.7.1>192.168.7.9 qp 0x000011  dev 0x000a2/1 port 2       4     2     1.25us    1.15us      92.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestHopsCommandRefuses(t *testing.T) {
	path := hopsCapture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--linear"}, "--linear needs --bin"},
		{[]string{"--edges", "0,1us", "--bins", "3"}, "--edges sets every bin"},
		{[]string{"--occ-edges", "5,2"}, "--occ-edges: edges must increase"},
		{[]string{"--occ-edges", "a,2"}, `--occ-edges: edge 1: "a" is not a whole number`},
		{[]string{"--bins", "63"}, "--bins 63: want 1 to 62"},
		{[]string{"--series-interval", "0"}, "--series-interval 0ns"},
	} {
		_, stderr, code := run(t, append(append([]string{"hops"}, c.args...), path)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q, want %q", c.args, code, stderr, c.want)
		}
	}
	_, stderr, code := run(t, "hops", "/nonexistent/y.pcap")
	if code == 0 || !strings.Contains(stderr, "/nonexistent/y.pcap") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
}
