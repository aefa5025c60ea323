package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ibscope/ibscope/decode"
)

// IPDConfig says what the IPD analysis measures.
type IPDConfig struct {
	By      string          // ByFlow (default), ByLink or ByQP
	Opcodes []decode.Opcode // opcodes counted; nil counts data-carrying opcodes (decode.Opcode.IsData)
	Hist    HistSpec
	// DataGbps is the link's data rate in Gb/s for the expected IPD (0: none);
	// RateName describes it in the output ("SDR 4x", "100 Gb/s").
	DataGbps float64
	RateName string
	// Phases turns on phase detection; PhasePackets is the shortest phase
	// reported, in packets (DefaultPhasePackets when 0).
	Phases       bool
	PhasePackets int
}

// IPDStats are one group's IPD figures, integer ns. Percentiles come from a
// Sketch (exact below 128 ns, for values on the clock's unit and where the
// values near the percentile are all equal; otherwise within 0.78%); count,
// min, max, mean and stddev are exact.
type IPDStats struct {
	Count  uint64 `json:"count"`
	Min    int64  `json:"min"`
	P50    int64  `json:"p50"`
	P90    int64  `json:"p90"`
	P99    int64  `json:"p99"`
	P999   int64  `json:"p999"`
	Max    int64  `json:"max"`
	Mean   int64  `json:"mean"`
	StdDev int64  `json:"stddev"`
}

func statsOf(s *Sketch) IPDStats {
	if s.Count() == 0 {
		return IPDStats{}
	}
	return IPDStats{Count: s.Count(), Min: s.Min(), P50: s.Quantile(0.5), P90: s.Quantile(0.9), P99: s.Quantile(0.99),
		P999: s.Quantile(0.999), Max: s.Max(), Mean: int64(math.Round(s.Mean())), StdDev: int64(math.Round(s.StdDev()))}
}

// HistJSON is a histogram as the JSON contract writes it; Below and Above
// count values outside the bins.
type HistJSON struct {
	Mode  string `json:"mode"`
	Bins  []Bin  `json:"bins"`
	Below uint64 `json:"below"`
	Above uint64 `json:"above"`
}

// PhaseJSON is one phase in the output.
type PhaseJSON struct {
	StartNs     int64 `json:"start_ns"`
	EndNs       int64 `json:"end_ns"`
	Packets     int   `json:"packets"`
	MedianIPDNs int64 `json:"median_ipd_ns"`
}

// IPDFlow is one group's result.
type IPDFlow struct {
	Key       KeyJSON  `json:"key"`
	Packets   uint64   `json:"packets"` // packets counted (matching opcodes)
	FirstNs   int64    `json:"first_ns"`
	LastNs    int64    `json:"last_ns"`
	IPDNs     IPDStats `json:"ipd_ns"`
	Histogram HistJSON `json:"histogram"`
	// MeanWireBytes is the counted packets' mean size on the wire, bytes.
	MeanWireBytes float64 `json:"mean_wire_bytes"`
	// ExpectedIPDNs is the back-to-back spacing of MeanWireBytes at the
	// given rate, ns; Ratio is the observed median IPD over it.
	ExpectedIPDNs int64       `json:"expected_ipd_ns,omitempty"`
	Ratio         float64     `json:"observed_expected_ratio,omitempty"`
	Phases        []PhaseJSON `json:"phases,omitempty"`
	// Late counts packets left out of the IPDs because they arrived more
	// than the reorder window out of order (their IPD would be negative).
	Late uint64 `json:"late,omitempty"`

	hist *Histogram
}

// Hist returns the group's histogram.
func (f *IPDFlow) Hist() *Histogram { return f.hist }

// IPDResult is the whole IPD analysis, the `ibanalyze ipd --json` document.
type IPDResult struct {
	Flows        []*IPDFlow `json:"flows"`
	ResolutionNs int64      `json:"resolution_ns"` // timestamp resolution detected, ns
	By           string     `json:"by"`
	Opcodes      []string   `json:"opcodes"` // opcodes counted; ["data"] for the default
	Rate         string     `json:"rate,omitempty"`
	DataGbps     float64    `json:"data_gbps,omitempty"`
	Counted      uint64     `json:"counted"` // packets with a counted opcode
	Input        InputJSON  `json:"input"`
}

// ErrNoIPD is returned when no group had two packets: there is no IPD.
// The error Result returns is a *NoIPDError, which says what was found.
var ErrNoIPD = errors.New("no flow has two packets with a counted opcode: there is no inter-packet delay to report")

// NoIPDError is ErrNoIPD with what the analysis was given.
type NoIPDError struct {
	Counted  uint64      // packets with a counted opcode
	ByOpcode [256]uint64 // packets per opcode, counted or not
}

func (e *NoIPDError) Error() string {
	return fmt.Sprintf("%v (%d of the packets counted; found: %s)", ErrNoIPD, e.Counted, e.Found())
}

func (e *NoIPDError) Unwrap() error { return ErrNoIPD }

// Found describes the packets by kind, each with its opcodes, e.g.
// "6 atomics (RC_COMPARE_SWAP, RC_FETCH_ADD) and 6 ACKs (RC_ATOMIC_ACKNOWLEDGE)".
func (e *NoIPDError) Found() string {
	var n [len(opcodeKinds)]uint64
	var names [len(opcodeKinds)][]string
	for op, c := range e.ByOpcode {
		if c > 0 {
			k := opcodeKind(decode.Opcode(op))
			n[k] += c
			names[k] = append(names[k], decode.Opcode(op).String())
		}
	}
	var parts []string
	for k, c := range n {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", c, opcodeKinds[k], strings.Join(names[k], ", ")))
		}
	}
	switch len(parts) {
	case 0:
		return "no packets"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// AtomicsOnly reports whether every packet was an atomic request or an ACK.
func (e *NoIPDError) AtomicsOnly() bool {
	atomics := false
	for op, c := range e.ByOpcode {
		if c == 0 {
			continue
		}
		switch opcodeKind(decode.Opcode(op)) {
		case kindAtomic:
			atomics = true
		case kindAck:
		default:
			return false
		}
	}
	return atomics
}

// Kinds of opcode, for saying what a capture holds.
const (
	kindData = iota
	kindAtomic
	kindReadRequest
	kindAck
	kindCNP
	kindOther
)

var opcodeKinds = [...]string{"data packets", "atomics", "RDMA READ requests", "ACKs", "CNPs", "other packets"}

func opcodeKind(op decode.Opcode) int {
	switch {
	case op.IsData():
		return kindData
	case op.IsAck():
		return kindAck
	case op.IsCNP():
		return kindCNP
	case op.Valid() && (op&0x1f == 0x13 || op&0x1f == 0x14):
		return kindAtomic
	case op.Valid() && op&0x1f == 0x0c:
		return kindReadRequest
	}
	return kindOther
}

// ipdGroup is the running state of one flow, link or QP.
type ipdGroup struct {
	key       decode.FlowKey
	packets   uint64
	firstNs   int64
	lastNs    int64
	ipd       Sketch
	hist      *Histogram
	wireBytes uint64
	phases    *PhaseDetector
	late      uint64
}

// IPDAnalysis accumulates IPDs from a packet stream.
type IPDAnalysis struct {
	cfg     IPDConfig
	want    [256]bool
	index   map[decode.FlowKey]*ipdGroup
	order   []*ipdGroup
	lastKey decode.FlowKey
	last    *ipdGroup
	counted uint64
	seen    [256]uint64 // packets per opcode, counted or not
	bins    *binner
}

// binner decides the histogram's bins from the first IPDs seen (when the
// spec leaves them to the data) and keeps those IPDs until it has; several
// analyses can share one, so that their histograms line up.
type binner struct {
	spec    HistSpec
	proto   *Histogram
	pending []pendingIPD
	resNs   func() int64
	err     error
}

type pendingIPD struct {
	g   *ipdGroup
	ipd int64
}

// binSamplePackets is how many IPDs the bins are picked from.
const binSamplePackets = 8192

func newBinner(spec HistSpec, resNs func() int64) *binner {
	return &binner{spec: spec, resNs: resNs}
}

func (b *binner) add(g *ipdGroup, v int64) {
	if b.err != nil {
		return
	}
	if b.proto != nil {
		// A group that first shows up after the bins were decided.
		g.hist = b.proto.Empty()
		g.hist.Add(v)
		return
	}
	b.pending = append(b.pending, pendingIPD{g, v})
	if len(b.pending) >= binSamplePackets {
		b.decide()
	}
}

// decide resolves the spec against the sample and the resolution known so
// far, and replays the sample into per-group histograms.
func (b *binner) decide() {
	if b.proto != nil || b.err != nil {
		return
	}
	res := b.resNs()
	sample := make([]int64, len(b.pending))
	for i, p := range b.pending {
		sample[i] = p.ipd
	}
	spec := b.spec.Resolve(sample, res)
	if err := spec.Validate(res); err != nil {
		b.err = err
		return
	}
	h, err := NewHistogram(spec)
	if err != nil {
		b.err = err
		return
	}
	b.proto = h
	for _, p := range b.pending {
		if p.g.hist == nil {
			p.g.hist = h.Empty()
		}
		p.g.hist.Add(p.ipd)
	}
	b.pending = nil
}

// NewIPDAnalysis checks cfg and returns an empty analysis whose histogram
// bins follow the resolution resNs reports.
func NewIPDAnalysis(cfg IPDConfig, resNs func() int64) (*IPDAnalysis, error) {
	return newIPDAnalysis(cfg, newBinner(cfg.Hist, resNs))
}

func newIPDAnalysis(cfg IPDConfig, b *binner) (*IPDAnalysis, error) {
	switch cfg.By {
	case "":
		cfg.By = ByFlow
	case ByFlow, ByLink, ByQP:
	default:
		return nil, fmt.Errorf("--by %q: want flow, link or qp", cfg.By)
	}
	if err := cfg.Hist.Validate(1); err != nil {
		return nil, err
	}
	if err := CheckPhasePackets(cfg.PhasePackets); err != nil {
		return nil, err
	}
	a := &IPDAnalysis{cfg: cfg, index: make(map[decode.FlowKey]*ipdGroup), bins: b}
	if cfg.Opcodes == nil {
		for op := range 256 {
			a.want[op] = decode.Opcode(op).IsData()
		}
	}
	for _, op := range cfg.Opcodes {
		a.want[op] = true
	}
	return a, nil
}

// Add counts one packet; packets must come in timestamp order (Late ones
// are counted but given no IPD).
func (a *IPDAnalysis) Add(p *Packet) {
	a.seen[p.OpCode]++
	if !a.want[p.OpCode] {
		return
	}
	a.counted++
	k := groupKey(p.Key, a.cfg.By)
	g := a.last
	if g == nil || k != a.lastKey {
		g = a.index[k]
		if g == nil {
			g = &ipdGroup{key: k, firstNs: p.TsNs, lastNs: p.TsNs}
			if a.cfg.Phases {
				g.phases = NewPhaseDetector(a.cfg.PhasePackets)
			}
			a.index[k] = g
			a.order = append(a.order, g)
		}
		a.last, a.lastKey = g, k
	}
	g.packets++
	g.wireBytes += uint64(p.WireBytes)
	if p.Late {
		g.late++
		return
	}
	if g.packets > g.late+1 {
		v := p.TsNs - g.lastNs
		g.ipd.Add(v)
		if g.hist != nil {
			g.hist.Add(v)
		} else {
			a.bins.add(g, v)
		}
	}
	g.lastNs = p.TsNs
	if g.phases != nil {
		g.phases.Add(p.TsNs)
	}
}

// Err returns why the analysis cannot go on (bins finer than the timestamp
// resolution), nil while all is well.
func (a *IPDAnalysis) Err() error { return a.bins.err }

// Result finishes the analysis: finalResNs is the timestamp resolution of
// the whole input, against which the bins are checked once more.
func (a *IPDAnalysis) Result(finalResNs int64) (*IPDResult, error) {
	a.bins.decide()
	if a.bins.err != nil {
		return nil, a.bins.err
	}
	var ipds uint64
	for _, g := range a.order {
		ipds += g.ipd.Count()
	}
	if a.bins.proto == nil || ipds == 0 {
		return nil, &NoIPDError{Counted: a.counted, ByOpcode: a.seen}
	}
	spec := HistSpec{Mode: a.bins.proto.Mode, EdgesNs: a.bins.proto.EdgesNs}
	if a.bins.proto.Mode == ModeLinear {
		spec = HistSpec{Mode: ModeLinear, BinNs: a.bins.proto.widthNs, Bins: len(a.bins.proto.Counts)}
	} else if a.bins.proto.Mode == ModeExp {
		spec = HistSpec{Mode: ModeExp, BinNs: a.bins.proto.EdgesNs[1], Bins: len(a.bins.proto.Counts)}
	}
	if err := spec.Validate(finalResNs); err != nil {
		return nil, err
	}
	r := &IPDResult{ResolutionNs: finalResNs, By: a.cfg.By, Rate: a.cfg.RateName, DataGbps: a.cfg.DataGbps, Counted: a.counted}
	if a.cfg.Opcodes == nil {
		r.Opcodes = []string{"data"}
	}
	for _, op := range a.cfg.Opcodes {
		r.Opcodes = append(r.Opcodes, op.String())
	}
	for _, g := range a.order {
		r.Flows = append(r.Flows, a.flowResult(g))
	}
	slices.SortStableFunc(r.Flows, func(x, y *IPDFlow) int { return cmp.Compare(y.Packets, x.Packets) })
	return r, nil
}

func (a *IPDAnalysis) flowResult(g *ipdGroup) *IPDFlow {
	f := &IPDFlow{Key: keyJSON(g.key, a.cfg.By), Packets: g.packets, FirstNs: g.firstNs, LastNs: g.lastNs,
		IPDNs: statsOf(&g.ipd), Late: g.late}
	f.hist = g.hist
	if f.hist == nil {
		f.hist = a.bins.proto.Empty()
	}
	f.Histogram = HistJSON{Mode: f.hist.Mode, Bins: f.hist.Bins(), Below: f.hist.Below, Above: f.hist.Above}
	f.MeanWireBytes = float64(g.wireBytes) / float64(g.packets)
	if a.cfg.DataGbps > 0 {
		exp := ExpectedIPDNsAtGbps(int(math.Round(f.MeanWireBytes)), a.cfg.DataGbps)
		f.ExpectedIPDNs = int64(math.Round(exp))
		if f.IPDNs.Count > 0 && exp > 0 {
			f.Ratio = math.Round(float64(f.IPDNs.P50)/exp*1000) / 1000
		}
	}
	if g.phases != nil {
		for _, p := range g.phases.Phases() {
			f.Phases = append(f.Phases, PhaseJSON(p))
		}
	}
	return f
}

// progressEvery is how many packets pass between progress reports and
// checks for a failed analysis.
const progressEvery = 1 << 16

// RunIPD reads the stream to its end through an IPD analysis. progress, if
// not nil, is called every 65536 packets.
func RunIPD(s *Stream, cfg IPDConfig, progress func(s *Stream)) (*IPDResult, error) {
	a, err := NewIPDAnalysis(cfg, s.ResolutionNs)
	if err != nil {
		return nil, err
	}
	if err := cfg.Hist.Validate(s.ResolutionNs()); err != nil {
		return nil, err
	}
	var p Packet
	for n := 1; ; n++ {
		if err := s.Next(&p); err != nil {
			break
		}
		a.Add(&p)
		if n%progressEvery == 0 {
			if err := a.Err(); err != nil {
				return nil, err
			}
			if progress != nil {
				progress(s)
			}
		}
	}
	r, err := a.Result(s.ResolutionNs())
	if r != nil {
		r.Input = inputOf(s)
	}
	return r, err
}
