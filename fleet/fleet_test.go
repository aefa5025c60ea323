package fleet

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscope/ibscope/metrics"
)

// sample is one series of an instant query's answer.
type sample struct {
	labels map[string]string
	value  string
}

func agent(instance string, kv ...string) map[string]string {
	m := map[string]string{"job": "ibcap", "instance": instance}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// server answers /api/v1/query as Prometheus 2.42 does (the same JSON),
// from answers by query text; a query it does not know gets an empty
// vector, and "bad" a bad_data error.
func server(t *testing.T, answers map[string][]sample) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.URL.Path != "/api/v1/query" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		q := r.Form.Get("query")
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(q, "bad") {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:1: parse error"}`))
			return
		}
		type result struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		res := []result{}
		for _, s := range answers[q] {
			res = append(res, result{Metric: s.labels, Value: [2]any{1700000000.123, s.value}})
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}})
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	lookback = "[3600000ms]"
	range60s = "[60000ms]"
)

func info(instance, host string) sample {
	return sample{agent(instance, "__name__", "ibscope_capture_info", "host", host, "device", "eth0", "version", "v1"), "1"}
}

// fleetOfThree: a alive, b stopped (gracefully: its last stopped sample is
// 1, and its series then went stale), c stale (killed: no current sample,
// never said stopped).
func fleetOfThree() map[string][]sample {
	return map[string][]sample{
		"last_over_time(ibscope_capture_info" + lookback + ")": {info("a:9464", "ha"), info("b:9464", "hb"), info("c:9464", "hc")},
		"ibscope_capture_info":                                 {info("a:9464", "ha")},
		"last_over_time(ibscope_capture_stopped" + lookback + ")": {
			{agent("a:9464", "device", "eth0"), "0"}, {agent("b:9464", "device", "eth0"), "1"}, {agent("c:9464", "device", "eth0"), "0"}},
		"last_over_time(ibscope_capture_elapsed_seconds" + lookback + ")": {{agent("a:9464"), "12.5"}},
		"sum by (job, instance) (rate(ibscope_metrics_packets_analyzed_total" + range60s + "))": {
			{agent("a:9464"), "1000"}, {agent("b:9464"), "10"}, {agent("c:9464"), "1"}},
		"sum by (job, instance) (increase(ibscope_capture_packets_dropped_kernel_total" + range60s + "))": {
			{agent("a:9464"), "0"}, {agent("c:9464"), "3.2"}},
		"sum by (job, instance) (increase(ibscope_flow_naks_total" + range60s + "))":                    {{agent("a:9464"), "2"}},
		"sum by (job, instance) (rate(node_infiniband_port_data_received_bytes_total" + range60s + "))": {{agent("a:9464"), "5e3"}},
		"max by (job, instance) (max_over_time(ibscope_capture_ring_used_ratio" + range60s + "))":       {{agent("b:9464"), "0.95"}},
	}
}

// TestStatusStates: the staleness rule, the sums, health and the port's
// own rates where the agent has them.
func TestStatusStates(t *testing.T) {
	c := server(t, fleetOfThree())
	s, err := c.Status(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Alive != 1 || s.Stopped != 1 || s.Stale != 1 || s.RangeSeconds != 60 {
		t.Errorf("status %+v, want one of each state over 60 s", s)
	}
	if s.PacketsPerS != 1011 || s.Drops != 3.2 || s.Errors != 2 {
		t.Errorf("totals %v pkt/s, %v drops, %v errors; want 1011, 3.2, 2", s.PacketsPerS, s.Drops, s.Errors)
	}
	nics, err := c.NICs(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		state  State
		health []string
	}{"ha": {Alive, []string{}}, "hb": {Stopped, []string{"stopped", "ring nearly full"}}, "hc": {Stale, []string{"stale", "kernel drops"}}}
	for _, n := range nics {
		if w := want[n.Host]; n.State != w.state || !slices.Equal(n.Health, w.health) {
			t.Errorf("%s: %s %q, want %s %q", n.Host, n.State, n.Health, w.state, w.health)
		}
		if (n.PortRxBytesPerS != nil) != (n.Host == "ha") || n.PortTxBytesPerS != nil {
			t.Errorf("%s: port rates %v %v, want rx for ha only", n.Host, n.PortRxBytesPerS, n.PortTxBytesPerS)
		}
	}
	if nics[0].Host != "ha" || nics[0].ElapsedSeconds != 12.5 {
		t.Errorf("first NIC %+v, want ha running 12.5 s", nics[0])
	}
}

// TestClassify: a graceful stop wins over a current sample (the agent is
// still serving its final values during its linger).
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		current, stopped bool
		want             State
	}{{true, false, Alive}, {true, true, Stopped}, {false, true, Stopped}, {false, false, Stale}} {
		if got := classify(c.current, c.stopped); got != c.want {
			t.Errorf("classify(current %v, stopped %v) = %s, want %s", c.current, c.stopped, got, c.want)
		}
	}
}

// TestLinksMatrix: addresses map to their owner's host/NIC, an address no
// agent owns stays as it is, one two agents own maps to the observer when
// it is one of them; a link both ends saw shows the larger figures, not
// their sum; each agent's flow="other" stays its own.
func TestLinksMatrix(t *testing.T) {
	ans := fleetOfThree()
	addr := func(instance, host, a string) sample {
		return sample{agent(instance, "host", host, "device", "eth0", "address", a), "1"}
	}
	ans["last_over_time(ibscope_address_info"+lookback+")"] = []sample{
		addr("a:9464", "ha", "10.0.0.1"), addr("a:9464", "ha", "fe80::1"), addr("b:9464", "hb", "10.0.0.2"),
		addr("a:9464", "ha", "10.9.9.9"), addr("b:9464", "hb", "10.9.9.9"), // both claim it
		addr("c:9464", "hc", "lid:7"),
	}
	flow := func(instance, src, dst, v string) sample {
		return sample{agent(instance, "src", src, "dst", dst), v}
	}
	ans["sum by (job, instance, src, dst) (rate(ibscope_flow_bytes_total"+range60s+"))"] = []sample{
		flow("a:9464", "10.0.0.1", "10.0.0.2", "900"),  // ha's view of ha→hb (tx)
		flow("a:9464", "fe80::1", "10.0.0.2", "50"),    // the same hosts, by another address
		flow("b:9464", "10.0.0.1", "10.0.0.2", "1000"), // hb's view of it (rx)
		flow("b:9464", "10.5.5.5", "10.0.0.2", "70"),   // from an address nobody owns
		flow("b:9464", "10.9.9.9", "10.0.0.2", "30"),   // owned by ha and hb: hb sees its own
		flow("c:9464", "lid:3", "lid:7", "20"),
		flow("a:9464", "", "", "5"), flow("b:9464", "", "", "6"),
	}
	ans["sum by (job, instance, src, dst) (increase(ibscope_flow_cnps_total"+range60s+"))"] = []sample{
		flow("a:9464", "10.0.0.1", "10.0.0.2", "4"), flow("b:9464", "10.0.0.1", "10.0.0.2", "3")}
	c := server(t, ans)
	l, err := c.Links(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Link{}
	for _, k := range l.Links {
		got[k.Src.String()+">"+k.Dst.String()+" "+strings.Join(k.ObservedBy, ",")] = k
	}
	for key, want := range map[string][2]float64{ // bytes/s, CNPs
		"ha/eth0>hb/eth0 ha/eth0,hb/eth0": {1000, 4}, // max(900+50, 1000), max(4, 3)
		"10.5.5.5>hb/eth0 hb/eth0":        {70, 0},
		"hb/eth0>hb/eth0 hb/eth0":         {30, 0},
		"lid:3>hc/eth0 hc/eth0":           {20, 0},
		"other>other ha/eth0":             {5, 0},
		"other>other hb/eth0":             {6, 0},
	} {
		k, ok := got[key]
		if !ok {
			t.Errorf("no link %q in %v", key, got)
			continue
		}
		if k.BytesPerS != want[0] || k.CNPs != want[1] {
			t.Errorf("%s: %v bytes/s, %v CNPs; want %v, %v", key, k.BytesPerS, k.CNPs, want[0], want[1])
		}
	}
	if len(got) != 6 {
		t.Errorf("%d links, want 6: %v", len(got), got)
	}
	if l.Links[0].BytesPerS != 1000 {
		t.Errorf("links not by rate, busiest first: %v", l.Links)
	}
}

// TestServerErrors: one line that names the server for each failure.
func TestServerErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	c, err := NewClient(url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(context.Background(), Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "cannot reach Prometheus at "+url+": ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unreachable server: %v", err)
	}
	if _, err := server(t, nil).vector(context.Background(), "bad(", time.Time{}); err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("bad query: %v", err)
	}
	for _, u := range []string{"", "127.0.0.1:9090", "ftp://x", "http://"} {
		if _, err := NewClient(u); err == nil {
			t.Errorf("NewClient(%q) accepted", u)
		}
	}
	for _, o := range []Options{{Range: time.Millisecond}, {Range: time.Hour, Lookback: time.Minute}, {Range: 8 * 24 * time.Hour}} {
		if _, err := server(t, nil).Status(context.Background(), o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

// TestQueriedNamesServed: every ibscope_* and node_infiniband_* series the
// fleet view queries is one that package metrics serves, so a rename on one
// side fails here.
func TestQueriedNamesServed(t *testing.T) {
	served, err := metrics.SeriesNames()
	if err != nil {
		t.Fatal(err)
	}
	var queried []string
	for _, f := range nicFields {
		queried = append(queried, f.expr(f.fn, range60s))
	}
	for _, f := range linkFields {
		queried = append(queried, f.metric)
	}
	queried = append(queried, "ibscope_capture_info", "ibscope_capture_stopped", "ibscope_capture_elapsed_seconds")
	name := regexp.MustCompile(`\b(ibscope|node_infiniband)_[a-z0-9_]+\b`)
	found := map[string]bool{}
	for _, q := range queried {
		for _, s := range name.FindAllString(q, -1) {
			found[s] = true
			if !served[s] {
				t.Errorf("fleet queries %s, which metrics does not serve", s)
			}
		}
	}
	for _, s := range PortErrorSeries {
		if !found[s] {
			t.Errorf("%s is not in the queries", s)
		}
	}
}
