package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ibscope/ibscope/decode"
)

// IPDOptions says what the IPD analysis measures.
type IPDOptions struct {
	By GroupBy // ByFlow (default), ByLink or ByQP
	// Opcodes are the opcodes counted, on every QP. nil counts the data
	// (decode.Opcode.IsData) off the management QPs 0 and 1: the MADs
	// (subnet management, SA queries, rdma_cm's CM) sent there as UD SENDs
	// are no data traffic, and between a flow's or a link's data packets
	// (--by link, --by qp) they cut the delays in two.
	Opcodes []decode.Opcode
	Hist    HistSpec
	// DataGbps is the link's data rate in Gb/s for the expected IPD (0: none);
	// RateName describes it in the output ("SDR 4x", "100 Gb/s").
	DataGbps float64
	RateName string
	// Phases turns on phase detection; PhasePackets is the shortest phase
	// reported, in packets (DefaultPhasePackets when 0).
	Phases       bool
	PhasePackets int
	// MaxFlows bounds the groups kept (DefaultMaxFlows when 0): the packets
	// of groups first seen after that many are counted in one "other"
	// group, without IPDs.
	MaxFlows int
}

// IPDStats are one group's IPD figures, integer ns. Percentiles come from a
// sketch (exact below 128 ns, for values on the clock's unit and where the
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

func statsOf(s *sketch) IPDStats {
	if s.Count() == 0 {
		return IPDStats{}
	}
	return IPDStats{Count: s.Count(), Min: s.Min(), P50: s.Quantile(0.5), P90: s.Quantile(0.9), P99: s.Quantile(0.99),
		P999: s.Quantile(0.999), Max: s.Max(), Mean: int64(math.Round(s.Mean())), StdDev: int64(math.Round(s.StdDev()))}
}

// HistCounts is a histogram as the JSON contract writes it; Below and Above
// count values outside the bins.
type HistCounts struct {
	Mode  HistMode `json:"mode"`
	Bins  []Bin    `json:"bins"`
	Below uint64   `json:"below"`
	Above uint64   `json:"above"`
}

// IPDFlow is one group's result.
type IPDFlow struct {
	Key       GroupKey   `json:"key"`
	Packets   uint64     `json:"packets"` // packets counted (matching opcodes)
	FirstNs   int64      `json:"first_ns"`
	LastNs    int64      `json:"last_ns"`
	IPDNs     IPDStats   `json:"ipd_ns"`
	Histogram HistCounts `json:"histogram"`
	// MeanWireBytes is the counted packets' mean size on the wire, bytes.
	MeanWireBytes float64 `json:"mean_wire_bytes"`
	// ExpectedIPDNs is the back-to-back spacing of MeanWireBytes at the
	// given rate, ns; Ratio is the observed median IPD over it.
	ExpectedIPDNs int64   `json:"expected_ipd_ns,omitempty"`
	Ratio         float64 `json:"observed_expected_ratio,omitempty"`
	Phases        []Phase `json:"phases,omitempty"`
	// Late counts packets left out of the IPDs because they arrived more
	// than the reorder window out of order (their IPD would be negative).
	Late uint64 `json:"late,omitempty"`

	hist *Histogram
}

// Hist returns the group's histogram.
func (f *IPDFlow) Hist() *Histogram { return f.hist }

// IPDReport is the whole IPD analysis, the `ibanalyze ipd --json` document.
// Its flows are built one at a time (Flow, WriteJSON), never all at once:
// a capture of a million flows writes its report in bounded memory.
type IPDReport struct {
	ResolutionNs int64    `json:"resolution_ns"` // timestamp resolution detected, ns
	By           GroupBy  `json:"by"`
	Opcodes      []string `json:"opcodes"` // opcodes counted; ["data"] for the default
	Rate         string   `json:"rate,omitempty"`
	DataGbps     float64  `json:"data_gbps,omitempty"`
	Counted      uint64   `json:"counted"` // packets with a counted opcode
	// MADs are the data packets to QP 0 and 1 the default opcodes leave out.
	MADs  uint64 `json:"mads,omitempty"`
	Input Input  `json:"input"`
	// MaxFlows is set when the analysis reached its bound on groups: the
	// packets of groups first seen after that many, OtherPackets of them,
	// are counted together in a last group keyed {"transport": "other"},
	// without IPDs.
	MaxFlows     int    `json:"max_flows,omitempty"`
	OtherPackets uint64 `json:"other_packets,omitempty"`

	groups []*ipdGroup // busiest first, the other group last
	a      *IPDAnalysis
	bins   *binner // the analysis's bins, or a report's view of them
}

// NumFlows returns how many groups the result holds.
func (r *IPDReport) NumFlows() int { return len(r.groups) }

// Flow returns group i, busiest first (the other group, if any, last).
func (r *IPDReport) Flow(i int) *IPDFlow { return r.a.flowResult(r.groups[i], r.bins) }

// WriteJSON writes the document exactly as encoding/json indents it by two
// spaces, encoding one flow at a time.
func (r *IPDReport) WriteJSON(w io.Writer) error {
	type fields IPDReport // the same fields, without the methods
	return writeFlowsDoc(w, len(r.groups), func(i int) any { return r.Flow(i) }, (*fields)(r))
}

// MarshalJSON returns what WriteJSON writes.
func (r *IPDReport) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := r.WriteJSON(&b)
	return b.Bytes(), err
}

// ipdGroup is the running state of one flow, link or QP: 168 bytes, its
// key 40 more in the index (IPDAnalysis.index), with a sketch bucket (24
// bytes) once it has an IPD and a histogram word (8 bytes) per bin its
// IPDs fell in (up to one per bin once many have).
type ipdGroup struct {
	id        uint32 // its key's number in IPDAnalysis.index; otherFlow for the groups past the bound
	packets   uint64
	firstNs   int64
	lastNs    int64
	wireBytes uint64
	late      uint64
	ipd       sketch
	hist      binCounts // on the shared bins, once they are decided
	phases    *phaseDetector
}

// DefaultMaxFlows bounds the groups an IPD analysis keeps when the caller
// does not say, and MaxFlowsLimit what a caller may ask: a group of a few
// packets costs about IPDGroupBytes (more with phases), so 270 MB at the
// default and 2.7 GB at the limit.
const (
	DefaultMaxFlows = 1_000_000
	MaxFlowsLimit   = 10_000_000
)

// IPDGroupBytes is about what one group of a few packets costs
// (TestIPDMemoryPerFlow measures 257 for three-packet flows;
// bench/manyqps.sh 229 a QP for the whole process over 10 million
// one-packet QPs): its state, its key and its slot in the key table, a
// sketch bucket and a histogram word.
const IPDGroupBytes = 270

// checkMaxFlows checks a bound on groups (0: the default).
func checkMaxFlows(n int) error {
	if n < 0 || n > MaxFlowsLimit {
		return fmt.Errorf("bound of %d flows: want 1 to %d (0 for the default %d)", n, MaxFlowsLimit, DefaultMaxFlows)
	}
	return nil
}

// isMAD reports whether p is a data packet to QP 0 or 1 the default
// opcodes leave out (IPDOptions.Opcodes).
func (a *IPDAnalysis) isMAD(p *Packet) bool {
	return a.noMAD && p.Key.DestQP <= 1 && a.want[p.OpCode]
}

// counts reports whether a counts p.
func (a *IPDAnalysis) counts(p *Packet) bool { return a.want[p.OpCode] && !a.isMAD(p) }

// IPDAnalysis accumulates IPDs from a packet stream.
type IPDAnalysis struct {
	cfg   IPDOptions
	want  [256]bool
	noMAD bool // the default opcodes: packets to QP 0 and 1 are not counted
	mads  uint64
	index flowIndex // the groups' keys, numbered in order of their first packet
	// chunks hold the groups by their key's number, keyChunk a chunk; a
	// chunk never moves, so pointers to groups stay valid.
	chunks  [][]ipdGroup
	other   *ipdGroup // packets of groups past cfg.MaxFlows
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
	proto   *Histogram // the bins, once decided
	pending []pendingIPD
	resNs   func() int64
	err     error
	// tried holds, in a report's view of undecided bins, the sample's
	// counts on the bins tried for it, by the group counts they belong to.
	tried map[*binCounts]*binCounts
}

type pendingIPD struct {
	counts *binCounts
	ipd    int64
}

// binSamplePackets is how many IPDs the bins are picked from.
const binSamplePackets = 8192

func newBinner(spec HistSpec, resNs func() int64) *binner {
	return &binner{spec: spec, resNs: resNs}
}

// add counts v into c, or keeps it until the bins are decided.
func (b *binner) add(c *binCounts, v int64) {
	if h := b.proto; h != nil { // decided, and so no error
		c.add(h.slot(v), h.slots())
		return
	}
	b.addPending(c, v)
}

// addPending is add before the bins are decided.
func (b *binner) addPending(c *binCounts, v int64) {
	if b.err != nil {
		return
	}
	if b.pending == nil {
		// The whole sample at once (128 KiB): grown by append, its
		// copies were twice the pages, each a page fault.
		b.pending = make([]pendingIPD, 0, binSamplePackets)
	}
	b.pending = append(b.pending, pendingIPD{c, v})
	if len(b.pending) >= binSamplePackets {
		b.decide()
	}
}

// decide resolves the spec against the sample and the resolution known so
// far, and replays the sample into the groups' counts.
func (b *binner) decide() {
	if b.proto != nil || b.err != nil {
		return
	}
	h, err := b.resolve()
	if err != nil {
		b.err = err
		return
	}
	b.proto = h
	for _, p := range b.pending {
		p.counts.add(h.slot(p.ipd), h.slots())
	}
	b.pending = nil
}

// resolve picks the bins for the sample so far and the resolution known.
func (b *binner) resolve() (*Histogram, error) {
	res := b.resNs()
	sample := make([]int64, len(b.pending))
	for i, p := range b.pending {
		sample[i] = p.ipd
	}
	spec := b.spec.Resolve(sample, res)
	if err := spec.Validate(res); err != nil {
		return nil, err
	}
	return NewHistogram(spec)
}

// view is the bins as a report sees them now: b once decided, else a
// binner with the bins decide would pick now and the sample counted on them
// apart from the groups' counts, so that b still decides on its whole
// sample. It costs one pass over the sample (binSamplePackets at most).
func (b *binner) view() (*binner, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.proto != nil {
		return b, nil
	}
	h, err := b.resolve()
	if err != nil {
		return nil, err
	}
	v := &binner{spec: b.spec, proto: h, resNs: b.resNs, tried: map[*binCounts]*binCounts{}}
	for _, p := range b.pending {
		c := v.tried[p.counts]
		if c == nil {
			c = new(binCounts)
			v.tried[p.counts] = c
		}
		c.add(h.slot(p.ipd), h.slots())
	}
	return v, nil
}

// histogram returns c's counts on the decided bins (on the tried ones, in
// a view).
func (b *binner) histogram(c *binCounts) *Histogram {
	if t := b.tried[c]; t != nil {
		c = t
	}
	h := b.proto.Empty()
	c.fill(h)
	return h
}

// NewIPDAnalysis checks cfg and returns an empty analysis whose histogram
// bins follow the resolution resNs reports.
func NewIPDAnalysis(cfg IPDOptions, resNs func() int64) (*IPDAnalysis, error) {
	return newIPDAnalysis(cfg, newBinner(cfg.Hist, resNs))
}

func newIPDAnalysis(cfg IPDOptions, b *binner) (*IPDAnalysis, error) {
	var err error
	if cfg.By, err = ParseGroupBy(string(cfg.By)); err != nil {
		return nil, err
	}
	if err := cfg.Hist.Validate(1); err != nil {
		return nil, err
	}
	if err := checkPhasePackets(cfg.PhasePackets); err != nil {
		return nil, err
	}
	if err := checkMaxFlows(cfg.MaxFlows); err != nil {
		return nil, err
	}
	if cfg.MaxFlows == 0 {
		cfg.MaxFlows = DefaultMaxFlows
	}
	a := &IPDAnalysis{cfg: cfg, index: newFlowIndex(), bins: b}
	if cfg.Opcodes == nil {
		for op := range 256 {
			a.want[op] = decode.Opcode(op).IsData()
		}
		a.noMAD = true
	}
	for _, op := range cfg.Opcodes {
		a.want[op] = true
	}
	return a, nil
}

// newGroup adds a group for k, first seen at tsNs.
func (a *IPDAnalysis) newGroup(k *packedKey, tsNs int64) *ipdGroup {
	i := a.index.add(k)
	if i&(keyChunk-1) == 0 {
		a.chunks = append(a.chunks, make([]ipdGroup, 0, keyChunk))
	}
	c := &a.chunks[i>>keyChunkBits]
	*c = append(*c, ipdGroup{id: i, firstNs: tsNs, lastNs: tsNs})
	g := &(*c)[len(*c)-1]
	if a.cfg.Phases {
		g.phases = newPhaseDetector(a.cfg.PhasePackets)
	}
	return g
}

// eachGroup calls fn for every group in order of its first packet.
func (a *IPDAnalysis) eachGroup(fn func(g *ipdGroup)) {
	for _, c := range a.chunks {
		for i := range c {
			fn(&c[i])
		}
	}
}

// Add counts one packet; packets must come in timestamp order (Late ones
// are counted but given no IPD).
func (a *IPDAnalysis) Add(p *Packet) {
	if a.isMAD(p) {
		a.mads++
		return
	}
	a.seen[p.OpCode]++
	if !a.want[p.OpCode] {
		return
	}
	a.counted++
	gk := &p.Key // ByFlow: the packet's own, not a copy
	if a.cfg.By != ByFlow {
		k := groupKey(p.Key, a.cfg.By)
		gk = &k
	}
	g := a.last
	if g == nil || !sameKey(gk, &a.lastKey) {
		k := packKey(gk)
		i, ok := a.index.find(&k)
		switch {
		case ok:
			g = &a.chunks[i>>keyChunkBits][i&(keyChunk-1)]
		case int(a.index.n) < a.cfg.MaxFlows:
			g = a.newGroup(&k, p.TsNs)
		default:
			if a.other == nil {
				a.other = &ipdGroup{id: otherFlow, firstNs: p.TsNs, lastNs: p.TsNs}
			}
			g = a.other
		}
		a.last, a.lastKey = g, *gk
	}
	g.packets++
	g.wireBytes += uint64(p.WireBytes)
	if p.Late {
		g.late++
		return
	}
	if g == a.other {
		// Packets of many groups: no IPD between them.
		g.lastNs = p.TsNs
		return
	}
	if g.packets > g.late+1 {
		v := p.TsNs - g.lastNs
		g.ipd.Add(v)
		a.bins.add(&g.hist, v)
	}
	g.lastNs = p.TsNs
	if g.phases != nil {
		g.phases.Add(p.TsNs)
	}
}

// Err returns why the analysis cannot go on (bins finer than the timestamp
// resolution), nil while all is well.
func (a *IPDAnalysis) Err() error { return a.bins.err }

// Result finishes the analysis, deciding its bins (Compare's two sides
// share them): finalResNs is the timestamp resolution of the whole input,
// against which the bins are checked once more.
func (a *IPDAnalysis) Result(finalResNs int64) (*IPDReport, error) {
	a.bins.decide()
	if a.bins.err != nil {
		return nil, a.bins.err
	}
	return a.result(a.bins, finalResNs)
}

// result is the result on bins (the analysis's, or a view of them) checked
// against resNs.
func (a *IPDAnalysis) result(bins *binner, resNs int64) (*IPDReport, error) {
	var ipds uint64
	a.eachGroup(func(g *ipdGroup) { ipds += g.ipd.Count() })
	if bins.proto == nil || ipds == 0 {
		return nil, &NoIPDError{Counted: a.counted, ByOpcode: a.seen, MADs: a.mads}
	}
	spec := HistSpec{Mode: bins.proto.Mode, EdgesNs: bins.proto.EdgesNs}
	if bins.proto.Mode == ModeLinear {
		spec = HistSpec{Mode: ModeLinear, BinNs: bins.proto.widthNs, Bins: len(bins.proto.Counts)}
	} else if bins.proto.Mode == ModeExp {
		spec = HistSpec{Mode: ModeExp, BinNs: bins.proto.EdgesNs[1], Bins: len(bins.proto.Counts)}
	}
	if err := spec.Validate(resNs); err != nil {
		return nil, err
	}
	r := &IPDReport{ResolutionNs: resNs, By: a.cfg.By, Rate: a.cfg.RateName, DataGbps: a.cfg.DataGbps, Counted: a.counted, MADs: a.mads, a: a, bins: bins}
	if a.cfg.Opcodes == nil {
		r.Opcodes = []string{"data"}
	}
	for _, op := range a.cfg.Opcodes {
		r.Opcodes = append(r.Opcodes, op.String())
	}
	r.groups = make([]*ipdGroup, 0, a.index.n+1)
	a.eachGroup(func(g *ipdGroup) { r.groups = append(r.groups, g) })
	slices.SortStableFunc(r.groups, func(x, y *ipdGroup) int { return cmp.Compare(y.packets, x.packets) })
	if a.other != nil {
		r.groups = append(r.groups, a.other)
		r.MaxFlows, r.OtherPackets = a.cfg.MaxFlows, a.other.packets
	}
	return r, nil
}

func (a *IPDAnalysis) flowResult(g *ipdGroup, bins *binner) *IPDFlow {
	f := &IPDFlow{Packets: g.packets, FirstNs: g.firstNs, LastNs: g.lastNs, IPDNs: statsOf(&g.ipd), Late: g.late}
	if g == a.other {
		f.Key = GroupKey{Transport: "other"}
	} else {
		f.Key = keyJSON(a.index.key(g.id).unpack(), a.cfg.By)
	}
	f.hist = bins.histogram(&g.hist)
	f.Histogram = HistCounts{Mode: f.hist.Mode, Bins: f.hist.Bins(), Below: f.hist.Below, Above: f.hist.Above}
	f.MeanWireBytes = float64(g.wireBytes) / float64(g.packets)
	if a.cfg.DataGbps > 0 {
		exp := expectedIPDNsAtGbps(int(math.Round(f.MeanWireBytes)), a.cfg.DataGbps)
		f.ExpectedIPDNs = int64(math.Round(exp))
		if f.IPDNs.Count > 0 && exp > 0 {
			f.Ratio = math.Round(float64(f.IPDNs.P50)/exp*1000) / 1000
		}
	}
	if g.phases != nil {
		f.Phases = append(f.Phases, g.phases.Phases()...)
	}
	return f
}

// Report is the analysis of the packets of s so far. Bins still to be
// decided are tried on the sample so far without deciding them (binner.view).
func (a *IPDAnalysis) Report(s *Stream) (*IPDReport, error) {
	bins, err := a.bins.view()
	if err != nil {
		return nil, err
	}
	r, err := a.result(bins, s.ResolutionNs())
	if r != nil {
		r.Input = s.Input()
	}
	return r, err
}
