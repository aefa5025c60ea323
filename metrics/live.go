package metrics

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscope/ibscope/analyze"
	"github.com/ibscope/ibscope/capfile"
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
	// SamplePps is the packet rate up to which every packet is analysed;
	// above it, the packets of one 10 ms window in N, each counted N times
	// (sampler; ibscope_metrics_sampling_rate is N). 0 analyses every
	// packet at any rate.
	SamplePps int64
}

// Bounds of Config.TopFlows: each flow costs seven series.
const (
	DefaultTopFlows = 100
	MaxTopFlows     = 10000
)

// maxAnalyzedFlows bounds the flows the analysis keeps apart (the IPD
// histogram takes the gaps within each): enough to rank the top
// MaxTopFlows, with the rest in the table's own "other" flow.
const maxAnalyzedFlows = 4 * MaxTopFlows

// Live is the metrics of one running capture. Wrap the capture's Source
// with Source, pass Status as capture.RunOptions.Status, serve Handler,
// and call Finish with Run's final report.
//
// The flows are counted in the capture loop itself, as each packet is
// taken (source.go): no copy of the headers, no queue to another core, no
// goroutine to wake. That costs the loop a decode of the headers and a
// flow lookup, and it is the cheapest way in CPU per packet (the figures
// are in docs/design.md).
type Live struct {
	cfg     Config
	reg     *prometheus.Registry // every series
	baseReg *prometheus.Registry // all but the per-flow series (exposition.go)

	mu        sync.Mutex // guards rep
	rep       capture.Report
	stopped   atomic.Bool
	startNs   int64
	nicErrors atomic.Uint64

	addrMu    sync.Mutex // guards the addresses served and when they were read
	addrs     []string
	addrsRead time.Time

	flowMu    sync.Mutex // guards what the capture loop counts, from here to ipd
	flows     *flowTable
	analyzed  uint64 // packets in the flow analysis
	wireBytes uint64 // their bytes on the wire
	capBytes  uint64 // bytes of the frames taken from the capture
	undecoded uint64
	ipd       *ipdHistogram
	// sampleEvery is the sampling rate N of the period under way: each
	// packet analysed counts N times (1: every packet is analysed).
	sampleEvery uint64
	src         *countingSource

	labelMu     sync.Mutex  // guards labels
	labels      []*labelSet // flow i's labels once served (collect.go), nil before
	otherLabels *labelSet

	// The capture loop's own, reused from packet to packet.
	dec   decode.Decoder
	frame decode.Frame
}

// New checks cfg and makes the metrics of a capture.
func New(cfg Config) (*Live, error) {
	if cfg.TopFlows == 0 {
		cfg.TopFlows = DefaultTopFlows
	}
	if cfg.TopFlows < 1 || cfg.TopFlows > MaxTopFlows {
		return nil, fmt.Errorf("top flows %d: want 1 to %d", cfg.TopFlows, MaxTopFlows)
	}
	if cfg.SamplePps < 0 {
		return nil, fmt.Errorf("sampling above %d packets/s: want 0 (never) or more", cfg.SamplePps)
	}
	if cfg.IPD.Mode == "" {
		cfg.IPD.Mode = analyze.ModeExp
	}
	buckets, err := IPDBucketsNs(cfg.IPD)
	if err != nil {
		return nil, err
	}
	l := &Live{
		cfg:     cfg,
		startNs: time.Now().UnixNano(),
		flows:   newFlowTable(maxAnalyzedFlows),
		dec:     decode.Decoder{LinkType: cfg.LinkType},
		ipd:     newIPDHistogram(buckets),

		sampleEvery: 1,
	}
	l.rep.Device = cfg.Device
	l.otherLabels = newLabelSet(cfg.Device, "", otherFlow, "")
	l.reg, l.baseReg = l.registries()
	return l, nil
}

// Source wraps src so that the capture's packets are also counted in the
// flow metrics as Next hands them out. Call it once.
func (l *Live) Source(src capture.Source) capture.Source {
	l.src = &countingSource{Source: src, l: l, s: sampler{maxPps: l.cfg.SamplePps}}
	l.src.s.rnd.Seed(rand.Uint64(), rand.Uint64())
	return l.src
}

// Status is capture.RunOptions.Status: it keeps the counts so far for the
// next scrape.
func (l *Live) Status(r capture.Report) {
	l.mu.Lock()
	l.rep = r
	l.mu.Unlock()
}

// Finish records the capture's final report and marks the capture stopped
// (ibscope_capture_stopped 1). Call it once capture.Run has returned.
func (l *Live) Finish(r capture.Report) {
	l.Status(r)
	if l.src != nil {
		l.flowMu.Lock()
		l.src.flushSkipped()
		l.flowMu.Unlock()
	}
	l.stopped.Store(true)
}

// Handler serves the metrics in Prometheus' text format (exposition.go).
func (l *Live) Handler() http.Handler { return http.HandlerFunc(l.serveMetrics) }

// Registry is where the metrics are registered, for a caller that gathers
// them itself.
func (l *Live) Registry() *prometheus.Registry { return l.reg }

// headerBytes is how much of each frame is decoded for the flows: every
// header decode reads (Ethernet, IPv6, UDP, BTH and its extended headers,
// about 100 bytes at most; native IB's LRH, GRH and BTH and its extended
// headers the same) fits, and the payload is not needed.
const headerBytes = 128

// count adds one captured packet, weight times (the sampling rate), to the
// flow metrics; the caller holds flowMu.
func (l *Live) count(p *capfile.Packet, weight uint64) {
	l.capBytes += uint64(len(p.Data))
	f := &l.frame
	data := p.Data[:min(len(p.Data), headerBytes)]
	f.CapLen, f.WireLen = len(data), p.WireLenBytes
	if err := l.dec.Decode(data, f); err != nil {
		l.undecoded += weight
		return
	}
	if !l.cfg.Filter.Empty() && !l.cfg.Filter.Match(f) {
		return
	}
	f.TsNs = p.TsNs
	wire := analyze.WireBytes(f)
	if gapNs, ok := l.flows.add(f, wire, weight); ok {
		l.ipd.observe(gapNs, weight)
	}
	l.analyzed += weight
	l.wireBytes += weight * uint64(wire)
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
