package main

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibscope/ibscope/internal/fakeverbs"
	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testenv"
)

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// scrape GETs /metrics and parses it with Prometheus' own text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mf
}

// value is the value of the series of family name whose labels include
// want (label=value pairs); ok is false when there is none.
func value(mf map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := mf[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && strings.Contains(l.GetValue(), want[i+1]) {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsDuringCapture runs ibcap --metrics without -w on the fake RoCE
// port, fed five flows of different sizes, and checks what /metrics says
// against what was fed: the capture's counts, each of the top 3 flows'
// packets and wire bytes, the other two in flow="other", the port's
// counters under node_exporter's names from the fake sysfs, and, after
// SIGTERM, ibscope_capture_stopped 1 with the same final counts, served
// until a second SIGTERM ends the --metrics-linger wait.
func TestMetricsDuringCapture(t *testing.T) {
	var pkts []testcap.Packet
	for i := range 5 {
		qp := uint32(0x100 + i)
		pkts = append(pkts, testcap.Stream(10*(i+1), 1, 2, qp, 0, 200+100*i, testcap.BaseNs+int64(i), func(int) int64 { return 1000 })...)
	}
	slices.SortStableFunc(pkts, func(a, b testcap.Packet) int { return int(a.TsNs - b.TsNs) })
	feed := testcap.Write(t, "flows.pcap", false, pkts)
	env := fakeverbs.New(t, fakeverbs.Config{Feed: feed})
	requireVerbsIbcap(t, env)
	frames, _, err := testcap.FileRecords(feed)
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := map[uint32]float64{} // by QP: frame + FCS + preamble + gap
	var total float64
	for i, f := range frames { // in the feed's order, pkts'
		wantBytes[pkts[i].QP] += float64(len(f) + 4 + 20)
		total += float64(len(f))
	}

	addr := freeAddr(t)
	v := &verbsCase{env: env}
	p := v.start(t, "-i", "fake_1", "--metrics", addr, "--metrics-flows", "3", "--metrics-linger", "60s",
		"--metrics-ipd-edges", "500ns,1us,2us,1ms")
	var mf map[string]*dto.MetricFamily
	deadline := time.Now().Add(testenv.WaitDeadline)
	for {
		mf = scrape(t, addr)
		if n, _ := value(mf, "ibscope_flow_packets_total"); n > 0 {
			if c, _ := value(mf, "ibscope_capture_packets_captured_total"); c == float64(len(pkts)) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics did not reach %d packets captured", len(pkts))
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkFlows := func(mf map[string]*dto.MetricFamily) {
		t.Helper()
		if got, _ := value(mf, "ibscope_capture_bytes_captured_total"); got != total {
			t.Errorf("bytes captured: %v, want %v", got, total)
		}
		for i := 2; i < 5; i++ { // the three largest flows
			qp := uint32(0x100 + i)
			lbl := fmt.Sprintf("qp 0x%06x", qp)
			if got, ok := value(mf, "ibscope_flow_bytes_total", "flow", lbl); !ok || got != wantBytes[qp] {
				t.Errorf("flow %s bytes: %v (%v), want %v", lbl, got, ok, wantBytes[qp])
			}
			if got, _ := value(mf, "ibscope_flow_packets_total", "flow", lbl); got != float64(10*(i+1)) {
				t.Errorf("flow %s packets: %v, want %d", lbl, got, 10*(i+1))
			}
		}
		if got, _ := value(mf, "ibscope_flow_bytes_total", "flow", "other"); got != wantBytes[0x100]+wantBytes[0x101] {
			t.Errorf(`flow="other" bytes: %v, want %v`, got, wantBytes[0x100]+wantBytes[0x101])
		}
		if n := len(mf["ibscope_flow_bytes_total"].GetMetric()); n != 4 {
			t.Errorf("%d flow series, want 3 and other", n)
		}
		// Each flow's packets are 1us apart: 150-5 gaps, all in the 1us bucket.
		h := mf["ibscope_flow_ipd_seconds"].GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != uint64(len(pkts)-5) {
			t.Errorf("IPD samples: %d, want %d", h.GetSampleCount(), len(pkts)-5)
		}
	}
	checkFlows(mf)
	for name, want := range map[string]float64{
		"node_infiniband_port_data_transmitted_bytes_total": 2000 * 4,
		"node_infiniband_port_data_received_bytes_total":    1000 * 4,
		"node_infiniband_port_packets_transmitted_total":    20,
		"node_infiniband_port_packets_received_total":       10,
		"node_infiniband_port_transmit_wait_total":          7,
	} {
		if got, ok := value(mf, name, "device", "fake_1", "port", "1"); !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", name, got, ok, want)
		}
	}
	if got, ok := value(mf, "ibscope_capture_info", "device", "fake_1"); !ok || got != 1 {
		t.Errorf("ibscope_capture_info: %v (%v), want 1", got, ok)
	}
	// fake_1's GIDs are its addresses; the flows' ends are in src and dst.
	for _, a := range []string{"192.168.7.1", "fe80::202:c9ff:fe00:101"} {
		if _, ok := value(mf, "ibscope_address_info", "device", "fake_1", "address", a); !ok {
			t.Errorf("ibscope_address_info lacks %s", a)
		}
	}
	if _, ok := value(mf, "ibscope_flow_bytes_total", "src", "192.168.7.1", "dst", "192.168.7.2"); !ok {
		t.Error("no flow series with src 192.168.7.1 and dst 192.168.7.2")
	}
	if got, _ := value(mf, "ibscope_capture_stopped"); got != 0 {
		t.Errorf("ibscope_capture_stopped %v while capturing", got)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(testenv.WaitDeadline)
	for {
		mf = scrape(t, addr)
		if s, _ := value(mf, "ibscope_capture_stopped"); s == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ibscope_capture_stopped did not become 1 after SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, _ := value(mf, "ibscope_capture_packets_written_total"); got != float64(len(pkts)) {
		t.Errorf("final packets written (kept): %v, want %d", got, len(pkts))
	}
	checkFlows(mf)
	// A second SIGTERM ends the linger.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("ibcap: %v\n%s", err, p.stderr.String())
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("/metrics still served after ibcap exited")
	}
}
