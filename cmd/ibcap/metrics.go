package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/internal/units"
	"github.com/ibscope/ibscope/internal/version"
	"github.com/ibscope/ibscope/metrics"
)

// metricsFlags are --metrics and its companions.
type metricsFlags struct {
	addr     string
	flows    int
	linger   time.Duration
	ipdBin   string
	ipdBins  int
	ipdExp   bool
	ipdEdges string
	// samplePps: every packet analysed up to this rate, one window in N above
	samplePps int64
}

// maxLinger bounds --metrics-linger: past it a value is a typo.
const maxLinger = time.Hour

// maxSamplePps bounds --metrics-sample-pps: no port delivers more packets
// a second.
const maxSamplePps = 1_000_000_000

func addMetricsFlags(fl *pflag.FlagSet, m *metricsFlags) {
	fl.StringVar(&m.addr, "metrics", "", "serve Prometheus metrics on ADDR (e.g. 127.0.0.1:9464) at /metrics; without -w, ibcap captures and counts but writes nothing")
	fl.IntVar(&m.flows, "metrics-flows", metrics.DefaultTopFlows, fmt.Sprintf("flows with their own series, the busiest by bytes (1 to %d); the others are summed in flow=\"other\"", metrics.MaxTopFlows))
	m.linger = 5 * time.Second
	fl.Var((*units.DurationNs)(&m.linger), "metrics-linger", "after the capture stops, keep serving the final values (ibscope_capture_stopped 1) this long")
	fl.StringVar(&m.ipdBin, "metrics-ipd-bin", "", "IPD histogram: bucket width (linear) or first bucket (--metrics-ipd-exp), e.g. 1us")
	fl.IntVar(&m.ipdBins, "metrics-ipd-bins", 0, "IPD histogram: number of buckets")
	fl.BoolVar(&m.ipdExp, "metrics-ipd-exp", false, "IPD histogram: buckets that double (the default: from 100ns, 24 buckets)")
	fl.StringVar(&m.ipdEdges, "metrics-ipd-edges", "", "IPD histogram: free bucket edges, e.g. 1us,2us,4us,10us")
	fl.Int64Var(&m.samplePps, "metrics-sample-pps", metrics.DefaultSamplePps, "flow metrics: analyse every packet up to this many packets a second; above it, one 10 ms window in N, each packet counted N times (ibscope_metrics_sampling_rate is N); 0 analyses every packet at any rate")
}

// ipdSpec turns the --metrics-ipd-* flags into a histogram spec.
func (m *metricsFlags) ipdSpec() (analyze.HistSpec, error) {
	h := analyze.HistSpec{Mode: analyze.ModeExp, Bins: m.ipdBins}
	if m.ipdBin != "" || m.ipdBins != 0 {
		h.Mode = analyze.ModeLinear
	}
	if m.ipdExp {
		h.Mode = analyze.ModeExp
	}
	if m.ipdBin != "" {
		v, err := units.ParseDurationNs(m.ipdBin)
		if err != nil {
			return h, fmt.Errorf("--metrics-ipd-bin: %w", err)
		}
		if v <= 0 {
			return h, fmt.Errorf("--metrics-ipd-bin %s: must be positive", m.ipdBin)
		}
		h.BinNs = v
	}
	if m.ipdEdges != "" {
		if m.ipdExp || m.ipdBin != "" || m.ipdBins != 0 {
			return h, errors.New("--metrics-ipd-edges sets every bucket: it does not go with --metrics-ipd-exp, -bin or -bins")
		}
		h.Mode = analyze.ModeEdges
		for i, s := range strings.Split(m.ipdEdges, ",") {
			v, err := units.ParseDurationNs(s)
			if err != nil {
				return h, fmt.Errorf("--metrics-ipd-edges: edge %d: %w", i+1, err)
			}
			h.EdgesNs = append(h.EdgesNs, v)
		}
	}
	if _, err := metrics.IPDBucketsNs(h); err != nil {
		return h, fmt.Errorf("--metrics-ipd-*: %w", err)
	}
	return h, nil
}

// check refuses the --metrics-* flags out of range, before anything opens.
func (m *metricsFlags) check() error {
	if m.addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(m.addr); err != nil {
		return fmt.Errorf("--metrics %q: want HOST:PORT, e.g. 127.0.0.1:9464: %w", m.addr, err)
	}
	if m.flows < 1 || m.flows > metrics.MaxTopFlows {
		return fmt.Errorf("--metrics-flows %d: want 1 to %d", m.flows, metrics.MaxTopFlows)
	}
	if m.samplePps < 0 || m.samplePps > maxSamplePps {
		return fmt.Errorf("--metrics-sample-pps %d: want 0 (never sample) up to %d", m.samplePps, maxSamplePps)
	}
	if m.linger < 0 || m.linger > maxLinger {
		return fmt.Errorf("--metrics-linger %v: want 0 up to %v", m.linger, maxLinger)
	}
	_, err := m.ipdSpec()
	return err
}

// liveMetrics is a running --metrics server; nil without --metrics, and
// then its methods do nothing.
type liveMetrics struct {
	live   *metrics.Live
	srv    *http.Server
	served chan error
	linger time.Duration
	quiet  bool
}

// startMetrics listens on --metrics and serves the capture's metrics;
// files, when not nil, says how many capture files were opened so far.
func startMetrics(f *flags, t capture.Target, src capture.Source, filter *capture.Filter, files func() int) (*liveMetrics, error) {
	m := &f.metrics
	if m.addr == "" {
		return nil, nil
	}
	ipd, err := m.ipdSpec()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	cfg := metrics.Config{Host: host, Device: f.device, Version: version.Read().String(), LinkType: src.LinkType(),
		TopFlows: m.flows, IPD: ipd, Filter: filter, Files: files, SamplePps: m.samplePps}
	if t.Netdev != "" && t.Netdev == t.Name {
		cfg.Netdev = t.Netdev // its IPs are the host's addresses; an RDMA device's are its GIDs
	}
	if t.HasRDMAPort() {
		cfg.PortDevice, cfg.Port, cfg.SysfsRoot = t.Device.Name, t.Port.Num, t.Sysfs
	}
	live, err := metrics.New(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", onlyGetHead(live.Handler()))
	lm := &liveMetrics{live: live, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, served: make(chan error, 1),
		linger: m.linger, quiet: f.quiet}
	go func() { lm.served <- lm.srv.Serve(ln) }()
	if !f.quiet {
		fmt.Fprintf(os.Stderr, "ibcap: metrics on http://%s/metrics\n", ln.Addr())
	}
	// Said even with -q: whoever reaches the host reaches the metrics.
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		fmt.Fprintf(os.Stderr, "ibcap: note: --metrics %s listens on every interface of this host (%s): give an address, e.g. --metrics 127.0.0.1:%d, to keep it local\n",
			m.addr, ln.Addr(), a.Port)
	}
	return lm, nil
}

// onlyGetHead answers what a scraper asks, GET and HEAD, and refuses the
// rest with 405 Method Not Allowed and Allow: GET, HEAD (RFC 9110 15.5.6):
// a POST, PUT, DELETE or TRACE to /metrics changes nothing and is not
// answered as if it did.
func onlyGetHead(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: /metrics answers GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// source is src with its packets also fed to the flow metrics.
func (lm *liveMetrics) source(src capture.Source) capture.Source {
	if lm == nil {
		return src
	}
	return lm.live.Source(src)
}

// status chains the metrics' status hook after next.
func (lm *liveMetrics) status(next func(capture.Report)) func(capture.Report) {
	if lm == nil {
		return next
	}
	return func(r capture.Report) {
		lm.live.Status(r)
		next(r)
	}
}

// finish publishes the final report with ibscope_capture_stopped 1, keeps
// serving it for --metrics-linger so that a scraper sees it, then stops
// the server.
func (lm *liveMetrics) finish(rep capture.Report) error {
	if lm == nil {
		return nil
	}
	lm.live.Finish(rep)
	if lm.linger > 0 {
		if !lm.quiet {
			fmt.Fprintf(os.Stderr, "ibcap: capture stopped; serving the final metrics for %v\n", lm.linger)
		}
		// A second SIGINT or SIGTERM ends the wait (the first one stopped
		// the capture).
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		select {
		case <-again:
		case <-time.After(lm.linger):
		}
		signal.Stop(again)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := lm.srv.Shutdown(ctx)
	if serr := <-lm.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("--metrics: %w", err)
	}
	return nil
}

// outputName is where the capture goes, for the opening message.
func outputName(f *flags) string {
	if f.file == "" {
		return "no file (--metrics only)"
	}
	return f.file
}
