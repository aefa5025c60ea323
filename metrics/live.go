package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capture"
	"github.com/ibscope/ibscope/decode"
)

// Config is what a live capture's metrics describe and how they are bounded.
type Config struct {
	Host, Device, Version string // ibscope_capture_info's labels
	LinkType              int    // the capture's link type (Source.LinkType)
	// PortDevice and Port name the RDMA port whose NIC counters are served
	// as node_infiniband_*; PortDevice "" serves none. SysfsRoot is the
	// sysfs mount point they are read under ("" is /sys).
	PortDevice string
	Port       int
	SysfsRoot  string
	// Netdev is the captured network interface whose IPs the capture's
	// host owns (ibscope_address_info, with the port's GIDs and LID);
	// "" for none (a capture of an RDMA device names its GIDs instead).
	Netdev string
	// TopFlows is how many flows, the busiest by bytes, get their own
	// series; the others are added up in flow="other" (0: DefaultTopFlows).
	TopFlows int
	// IPD is the inter-packet delay histogram's binning, as ibanalyze
	// ipd's --bin/--bins/--exp/--edges (IPDBucketsNs; the zero value is
	// exponential from DefaultIPDFirstNs).
	IPD analyze.HistSpec
	// Filter is the capture's header filter: the flows are those of the
	// packets it keeps, as written.
	Filter *capture.Filter
	// Files, when not nil, says how many capture files were opened so
	// far (rotations are Files-1); it is called on each scrape.
	Files func() int
	// QueuePackets bounds the packets waiting for the flow analysis
	// (0: DefaultQueuePackets).
	QueuePackets int
}

// Bounds of Config.TopFlows: each flow costs seven series.
const (
	DefaultTopFlows = 100
	MaxTopFlows     = 10000
)

// maxAnalyzedFlows bounds the flows the analysis keeps apart (the IPD
// histogram takes the gaps within each): enough to rank the top
// MaxTopFlows, with the rest in analyze's own "other" flow.
const maxAnalyzedFlows = 4 * MaxTopFlows

// Live is the metrics of one running capture. Wrap the capture's Source
// with Source, pass Status as capture.RunOptions.Status, serve Handler,
// and call Finish with Run's final report.
type Live struct {
	cfg Config
	reg *prometheus.Registry

	mu        sync.Mutex // guards rep
	rep       capture.Report
	stopped   atomic.Bool
	startNs   int64
	nicErrors atomic.Uint64

	addrMu    sync.Mutex // guards the addresses served and when they were read
	addrs     []string
	addrsRead time.Time

	tap       *tap
	done      chan struct{}
	finished  chan struct{}
	closeOnce sync.Once

	flowMu    sync.Mutex // guards what the analysis goroutine updates
	flows     *analyze.FlowsAnalysis
	analyzed  uint64 // packets in the flow analysis
	wireBytes uint64 // their bytes on the wire (analyze.Packet.WireBytes)
	capBytes  uint64 // bytes of the frames queued (the lost ones are in tap.lostBytes)
	undecoded uint64
	ipd       prometheus.Histogram

	// The analysis goroutine's own, reused from packet to packet.
	dec   decode.Decoder
	frame decode.Frame
	pkt   analyze.Packet
}

// New checks cfg and starts the goroutine that analyses the tapped packets.
func New(cfg Config) (*Live, error) {
	l, err := newLive(cfg)
	if err != nil {
		return nil, err
	}
	go l.analyse()
	return l, nil
}

// newLive is New without the analysis goroutine.
func newLive(cfg Config) (*Live, error) {
	if cfg.TopFlows == 0 {
		cfg.TopFlows = DefaultTopFlows
	}
	if cfg.TopFlows < 1 || cfg.TopFlows > MaxTopFlows {
		return nil, fmt.Errorf("top flows %d: want 1 to %d", cfg.TopFlows, MaxTopFlows)
	}
	if cfg.QueuePackets <= 0 {
		cfg.QueuePackets = DefaultQueuePackets
	}
	if cfg.IPD.Mode == "" {
		cfg.IPD.Mode = analyze.ModeExp
	}
	buckets, err := IPDBucketsNs(cfg.IPD)
	if err != nil {
		return nil, err
	}
	l := &Live{
		cfg:      cfg,
		reg:      prometheus.NewRegistry(),
		startNs:  time.Now().UnixNano(),
		tap:      newTap(cfg.QueuePackets),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
		flows:    analyze.NewFlowsAnalysis(analyze.FlowsOptions{MaxFlows: maxAnalyzedFlows, NoThroughput: true}),
		dec:      decode.Decoder{LinkType: cfg.LinkType},
		ipd: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ibscope_flow_ipd_seconds",
			Help:    "Inter-packet delay: the time from a packet to the next one of the same flow.",
			Buckets: secondsOf(buckets),
		}),
	}
	l.rep.Device = cfg.Device
	l.reg.MustRegister(l, l.ipd)
	return l, nil
}

// Source wraps src so that the capture's packets also reach the flow
// analysis: Next copies each frame's headers into a bounded queue and never
// waits (a full queue counts the packet in
// ibscope_metrics_packets_not_analyzed_total).
func (l *Live) Source(src capture.Source) capture.Source { return tapSource{Source: src, t: l.tap} }

// Status is capture.RunOptions.Status: it keeps the counts so far for the
// next scrape.
func (l *Live) Status(r capture.Report) {
	l.mu.Lock()
	l.rep = r
	l.mu.Unlock()
}

// Finish records the capture's final report, lets the analysis catch up
// with the packets queued, and marks the capture stopped
// (ibscope_capture_stopped 1).
func (l *Live) Finish(r capture.Report) {
	l.Status(r)
	l.closeOnce.Do(func() { close(l.done) })
	<-l.finished
	l.stopped.Store(true)
}

// Handler serves the metrics in Prometheus' text (or protobuf) format.
func (l *Live) Handler() http.Handler {
	return promhttp.HandlerFor(l.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Registry is where the metrics are registered, for a caller that gathers
// them itself.
func (l *Live) Registry() *prometheus.Registry { return l.reg }

// analyseBatch is how many queued packets the analysis takes at a time,
// under one lock and one hand-back of their slots: few enough that a
// scrape waits little and the producer gets the slots back soon.
const analyseBatch = 256

// While packets come, the analysis looks at an empty queue again every
// pollInterval rather than being woken for each packet, which would cost
// the capture loop a goroutine wake-up a packet at moderate rates. After
// parkAfterEmptyPolls empty looks in a row it parks until the capture
// loop's next packet wakes it, so an idle capture costs nothing.
const (
	pollInterval        = time.Millisecond
	parkAfterEmptyPolls = 20
)

// analyse feeds the queued packets to the flow analysis until Finish, then
// drains the queue.
func (l *Live) analyse() {
	defer close(l.finished)
	poll := time.NewTimer(pollInterval)
	defer poll.Stop()
	emptyPolls := 0
	for {
		if l.analyseQueued() > 0 {
			emptyPolls = 0
			continue
		}
		select {
		case <-l.done:
			if _, n := l.tap.queued(1); n == 0 {
				return
			}
			continue
		default:
		}
		if emptyPolls == parkAfterEmptyPolls {
			l.tap.park(l.done)
			emptyPolls = 0
			continue
		}
		emptyPolls++
		poll.Reset(pollInterval)
		select {
		case <-l.done:
		case <-poll.C:
		}
	}
}

// analyseQueued feeds up to analyseBatch queued packets to the flow
// analysis and returns how many.
func (l *Live) analyseQueued() int {
	first, n := l.tap.queued(analyseBatch)
	if n == 0 {
		return 0
	}
	f, p := &l.frame, &l.pkt
	filtering := !l.cfg.Filter.Empty()
	l.flowMu.Lock()
	for i := range uint64(n) {
		s := l.tap.slot(first + i)
		l.capBytes += uint64(s.capLen)
		f.CapLen, f.WireLen = s.n, s.wireLen
		if err := l.dec.Decode(s.data[:s.n], f); err != nil {
			l.undecoded++
			continue
		}
		if filtering && !l.cfg.Filter.Match(f) {
			continue
		}
		f.TsNs = s.tsNs
		p.Fill(f)
		// Flows past maxAnalyzedFlows share analyze's "other" flow, so
		// they add no gaps.
		if gapNs, ok := l.flows.AddGap(p); ok {
			l.ipd.Observe(float64(gapNs) / 1e9)
		}
		l.analyzed++
		l.wireBytes += uint64(p.WireBytes)
	}
	l.flowMu.Unlock()
	l.tap.release(n)
	return n
}

func checkBuckets(b []float64) error {
	if len(b) == 0 {
		return errors.New("IPD histogram: no buckets")
	}
	if len(b) > maxIPDBuckets {
		return fmt.Errorf("IPD histogram: %d buckets, at most %d", len(b), maxIPDBuckets)
	}
	for i, v := range b {
		if !(v > 0) || (i > 0 && v <= b[i-1]) {
			return fmt.Errorf("IPD histogram: bucket edges must be positive and increasing (edge %d is %g ns)", i, v)
		}
	}
	return nil
}

func secondsOf(ns []float64) []float64 {
	s := make([]float64, len(ns))
	for i, v := range ns {
		s[i] = v / 1e9
	}
	return s
}
