package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/internal/testnetns"
	"github.com/ibscope/ibscope/internal/txring"
	"github.com/ibscope/ibscope/metrics"
)

// The cost of ibcap --metrics, as bench/metrics.sh reports it. ibcap runs in
// the namespace, so it serves on the namespace's own loopback; the scraper
// dials from a thread inside it.
const (
	benchMetricsAddr = "127.0.0.1:9464"
	benchFlows       = 1000
	benchScrapes     = 20
	benchRounds      = 5
)

// TestLiveMetricsCost is the benchmark bench/metrics.sh runs. (a) At the
// highest rate ibscope's transmit ring reaches on the veth, ibcap captures
// 1,000 RoCEv2 flows to a file without --metrics, with it (sampling above
// the default rate) and with every packet analysed (a scraper GETs
// /metrics every second meanwhile, as Prometheus would), in rounds that
// rotate which goes first; for each it prints frames sent, captured and
// lost, packets/s and ibcap's CPU time per packet (and, with --metrics,
// the sampling rate it ended at), then the medians and the differences;
// before that, the CPU time idle without and with --metrics. (b) ibcap
// --metrics holds the same 1,000 flows and one scrape is timed 20 times
// (median and max), gzip asked for as Prometheus does and plain, with the
// default --metrics-flows and with every flow served. It prints figures,
// it asserts none.
func TestLiveMetricsCost(t *testing.T) {
	if os.Getenv("IBSCOPE_LIVE_BENCH") == "" {
		t.Skip("a benchmark, not a test: set IBSCOPE_LIVE_BENCH=1 (bench/metrics.sh does)")
	}
	ns := testnetns.New(t, nil, nil)
	frames := flowFrames(t, benchFlows)
	tx := ns.OpenTx(t)
	defer tx.Close()
	client := nsHTTPClient(t, ns)
	defer client.CloseIdleConnections()

	if _, err := tx.Send(frames, 50_000, 0); err != nil { // warm up
		t.Fatal(err)
	}
	senderMax, err := tx.Send(frames, 200_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("bench metrics sender_max_pps %.0f (transmit ring alone, %d RoCEv2 flows, %d-byte frames and up)\n",
		senderMax, benchFlows, len(frames[0]))

	idleOff, idleOn := idleMetricsCPU(t, ns, client, false), idleMetricsCPU(t, ns, client, true)
	fmt.Printf("bench metrics idle_cpu_ms without %.1f with %.1f (start, 5 s without traffic, stop)\n",
		float64(idleOff)/1e6, float64(idleOn)/1e6)

	n := max(200_000, int(2*senderMax)) // about 2 s flat out
	// Without --metrics, with it (sampling above the default rate), and
	// with every packet analysed, in rounds that rotate which goes first.
	variants := []metricsVariant{{name: "without"}, {name: "with", metrics: true}, {name: "exact", metrics: true, extra: []string{"--metrics-sample-pps", "0"}}}
	runs := make([][]metricsRun, len(variants))
	for round := range benchRounds {
		for k := range variants {
			v := (k + round) % len(variants)
			r := captureAtMax(t, ns, tx, client, frames, n, variants[v])
			r.print(round + 1)
			runs[v] = append(runs[v], r)
		}
	}
	off := summarize(runs[0])
	for v, m := range variants[1:] {
		on := summarize(runs[v+1])
		fmt.Printf("bench metrics median without: captured_pps %.0f cpu_ns_per_pkt %.0f (user %.0f) lost_all_rounds %d; %s: captured_pps %.0f cpu_ns_per_pkt %.0f (user %.0f) lost_all_rounds %d sampling_rate %.0f\n",
			off.capturedPps, off.cpuNsPerPkt, off.userNsPerPkt, off.lost, m.name, on.capturedPps, on.cpuNsPerPkt, on.userNsPerPkt, on.lost, on.samplingRate)
		// The user time is the process' own work; the system time also
		// holds the kernel's receive work, charged to whichever process
		// it interrupts: on a loaded machine it moves most between runs.
		fmt.Printf("bench metrics cost %s captured_pps_diff_pct %+.1f cpu_ns_per_pkt_diff_pct %+.1f user_ns_per_pkt_diff %+.0f (against without, medians of %d; the aim: CPU within +30 %%; when neither lost a frame, the sender set the rate)\n",
			m.name, pct(on.capturedPps, off.capturedPps), pct(on.cpuNsPerPkt, off.cpuNsPerPkt), on.userNsPerPkt-off.userNsPerPkt, benchRounds)
	}

	for _, k := range []int{metrics.DefaultTopFlows, benchFlows} {
		scrapeTimes(t, ns, tx, client, frames, k)
	}
}

// flowFrames returns one RoCEv2 RDMA WRITE ONLY frame per flow (QPs
// 0x1000 on), each flow's payload a different size so that they rank apart
// by bytes.
func flowFrames(t *testing.T, flows int) [][]byte {
	t.Helper()
	out := make([][]byte, flows)
	for i := range out {
		out[i] = testcap.RoCEFrame(t, testcap.Packet{Src: 1, Dst: 2, QP: uint32(0x1000 + i), Op: 0x0A,
			Payload: 64 + i%64, DMALen: uint32(64 + i%64)})
	}
	return out
}

// nsHTTPClient is an HTTP client whose connections are opened inside ns.
func nsHTTPClient(t *testing.T, ns *testnetns.NS) *http.Client {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := ns.Do(t, func() (err error) {
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// getMetrics GETs /metrics once and returns the body: gzip asked for, as
// Prometheus does (Go's transport asks for it and undoes it), or, with
// plain, the text as it is.
func getMetrics(client *http.Client, plain bool) ([]byte, error) {
	req, err := http.NewRequest("GET", "http://"+benchMetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	if plain {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return body, err
}

// metricValue is the value of the first series of name in an exposition
// (-1 when there is none).
func metricValue(body []byte, name string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:\{[^}]*\})? (\S+)$`).FindSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return -1
	}
	return v
}

// startMetricsIbcap starts ibcap on vcap as the live benchmark does (snap
// length 128, to file when file is not ""), with --metrics when withMetrics.
func startMetricsIbcap(t *testing.T, ns *testnetns.NS, file string, withMetrics bool, extra ...string) *ibcapProc {
	t.Helper()
	args := []string{"-i", "vcap", "-s", "128"}
	if file != "" {
		args = append(args, "-w", file)
	}
	if withMetrics {
		args = append(args, "--metrics", benchMetricsAddr, "--metrics-linger", "0")
	}
	return startIbcap(t, ns, nil, append(args, extra...)...)
}

// idleMetricsCPU is ibcap's CPU time for 5 s without traffic (scraped
// every second with --metrics).
func idleMetricsCPU(t *testing.T, ns *testnetns.NS, client *http.Client, withMetrics bool) int64 {
	t.Helper()
	p := startMetricsIbcap(t, ns, filepath.Join(t.TempDir(), "idle.pcap"), withMetrics)
	stopScraper := func() {}
	if withMetrics {
		stopScraper = scrapeEverySecond(client)
	}
	time.Sleep(5 * time.Second)
	stopScraper()
	stopIbcap(t, p)
	cpu, _ := cpuNs(p.cmd.ProcessState)
	return cpu
}

// scrapeEverySecond GETs /metrics every second until the returned func is
// called, which waits for the scraper to stop.
func scrapeEverySecond(client *http.Client) (stop func()) {
	client.CloseIdleConnections() // none to an ibcap that has exited
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			getMetrics(client, false) // a failed scrape is Prometheus' problem, not the capture's
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// metricsVariant is how ibcap runs in a round: without --metrics, or with
// it and extra flags.
type metricsVariant struct {
	name    string
	metrics bool
	extra   []string
}

// metricsRun is one capture at the sender's highest rate.
type metricsRun struct {
	variant                   metricsVariant
	sent                      int
	achievedPps, capturedPps  float64
	captured, lost, pathLost  int
	kernelDrops               int
	samplingRate              float64 // ibscope_metrics_sampling_rate at the end
	cpuNsPerPkt, userNsPerPkt float64
}

func (r metricsRun) print(round int) {
	extra := ""
	if r.variant.metrics {
		extra = fmt.Sprintf(" sampling_rate %.0f", r.samplingRate)
	}
	fmt.Printf("bench metrics round %d %s achieved_pps %.0f sent %d dropped_before_capture %d captured %d lost %d (kernel %d) captured_pps %.0f cpu_ns_per_pkt %.0f (user %.0f)%s\n",
		round, r.variant.name, r.achievedPps, r.sent, r.pathLost, r.captured, r.lost, r.kernelDrops, r.capturedPps, r.cpuNsPerPkt, r.userNsPerPkt, extra)
}

var (
	writtenRe     = regexp.MustCompile(`(?m)^(\d+) packets written`)
	kernelDropsRe = regexp.MustCompile(`(?m)^(\d+) packets dropped by the kernel`)
)

// reportCount is a count from ibcap's final report on stderr.
func reportCount(t *testing.T, p *ibcapProc, re *regexp.Regexp) int {
	t.Helper()
	m := re.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("ibcap's report has no %q:\n%s", re, p.stderr.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// captureAtMax has ibcap capture n frames sent flat out as v says (with
// --metrics, a scraper every second).
func captureAtMax(t *testing.T, ns *testnetns.NS, tx *txring.Ring, client *http.Client, frames [][]byte, n int, v metricsVariant) metricsRun {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "ibcap.pcap")
	defer os.Remove(file) // a few hundred MB a run
	p := startMetricsIbcap(t, ns, file, v.metrics, v.extra...)
	stopScraper := func() {}
	if v.metrics {
		stopScraper = scrapeEverySecond(client)
	}
	dropped0 := ns.RxDropped(t)
	achieved, err := tx.Send(frames, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	// As the live benchmark: time for the last frames to reach the file.
	time.Sleep(1500 * time.Millisecond)
	r := metricsRun{variant: v, sent: n, achievedPps: achieved, pathLost: ns.RxDropped(t) - dropped0}
	if v.metrics {
		stopScraper()
		body, err := getMetrics(client, false)
		if err != nil {
			t.Fatal(err)
		}
		r.samplingRate = metricValue(body, "ibscope_metrics_sampling_rate")
	}
	stopIbcap(t, p)
	r.captured = reportCount(t, p, writtenRe)
	r.kernelDrops = reportCount(t, p, kernelDropsRe)
	r.lost = n - r.captured
	r.capturedPps = float64(r.captured) * achieved / float64(n) // over the time the frames took to send
	cpu, user := cpuNs(p.cmd.ProcessState)
	r.cpuNsPerPkt, r.userNsPerPkt = perPkt(cpu, r.captured), perPkt(user, r.captured)
	return r
}

// runSummary is the medians of a few runs, and their frames lost in all.
type runSummary struct {
	capturedPps, cpuNsPerPkt, userNsPerPkt, samplingRate float64
	lost                                                 int
}

func summarize(runs []metricsRun) runSummary {
	var pps, cpu, user, sr []float64
	var s runSummary
	for _, r := range runs {
		pps = append(pps, r.capturedPps)
		cpu = append(cpu, r.cpuNsPerPkt)
		user = append(user, r.userNsPerPkt)
		sr = append(sr, r.samplingRate)
		s.lost += r.lost
	}
	s.capturedPps, s.cpuNsPerPkt, s.userNsPerPkt, s.samplingRate = median(pps), median(cpu), median(user), median(sr)
	return s
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

func pct(v, base float64) float64 { return 100 * (v - base) / max(base, 1e-9) }

// scrapeTimes has ibcap --metrics --metrics-flows k take the 1,000 flows,
// then times benchScrapes scrapes of /metrics without traffic.
func scrapeTimes(t *testing.T, ns *testnetns.NS, tx *txring.Ring, client *http.Client, frames [][]byte, k int) {
	t.Helper()
	p := startMetricsIbcap(t, ns, "", true, "--metrics-flows", strconv.Itoa(k))
	defer stopIbcap(t, p)
	client.CloseIdleConnections() // none to an ibcap that has exited
	// Each flow a different number of packets (1 to 10 a pass), paced so
	// that the veth's backlog drops none; passes until every flow is seen.
	var seq [][]byte
	for i := range 10 {
		for j, f := range frames {
			if j%10 >= i {
				seq = append(seq, f)
			}
		}
	}
	var body []byte
	for pass := 0; ; pass++ {
		if _, err := tx.Send(seq, len(seq), 50_000); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // for the analysis to catch up
		var err error
		if body, err = getMetrics(client, false); err != nil {
			t.Fatal(err)
		}
		if metricValue(body, "ibscope_flows") >= float64(len(frames)) {
			break
		}
		if pass == 4 {
			t.Fatalf("ibcap --metrics saw %v flows after 5 passes, want %d", metricValue(body, "ibscope_flows"), len(frames))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	line := fmt.Sprintf("bench metrics scrape flows %.0f metrics_flows %d flow_series %d body_bytes %d",
		metricValue(body, "ibscope_flows"), k, strings.Count(string(body), "\nibscope_flow_bytes_total{"), len(body))
	for _, plain := range []bool{false, true} {
		times := make([]time.Duration, benchScrapes)
		for i := range times {
			start := time.Now()
			_, err := getMetrics(client, plain)
			times[i] = time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(times)
		kind := "gzip"
		if plain {
			kind = "plain"
		}
		line += fmt.Sprintf(" %s_median_ms %.2f %s_max_ms %.2f", kind, ms(times[len(times)/2]), kind, ms(times[len(times)-1]))
	}
	fmt.Printf("%s (%d scrapes each, without traffic; gzip is what Prometheus asks for)\n", line, benchScrapes)
}
