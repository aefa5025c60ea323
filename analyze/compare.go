package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/ibscope/ibscope/decode"
	"github.com/ibscope/ibscope/internal/units"
	"gonum.org/v1/gonum/stat"
)

// The match window of RunCompare.
const (
	// DefaultMatchWindowNs is how long a packet seen on one side waits for
	// its twin on the other before it counts as seen on one side only. It
	// must exceed the one-way delay plus the two capture clocks' offset;
	// memory grows with the packets inside it.
	DefaultMatchWindowNs = 10_000_000
	// MaxMatchWindowNs bounds the match window: every packet inside it is
	// kept (about 90 bytes, and 100 more while it waits for its twin).
	MaxMatchWindowNs = 1_000_000_000
)

// CompareFlow is one flow (or link, or QP) seen from two sides.
type CompareFlow struct {
	Key      GroupKey   `json:"key"`
	PacketsA uint64     `json:"packets_a"`
	PacketsB uint64     `json:"packets_b"`
	IPDA     IPDStats   `json:"ipd_ns_a"`
	IPDB     IPDStats   `json:"ipd_ns_b"`
	HistA    HistCounts `json:"histogram_a"`
	HistB    HistCounts `json:"histogram_b"`
	// KS is the Kolmogorov-Smirnov distance between the two IPD
	// distributions (0 same, 1 disjoint), computed over the sketches'
	// buckets (values within 0.78%); absent when one side has no IPD.
	KS *float64 `json:"ks_distance,omitempty"`
	// Matched packets were seen on both sides with the same flow and PSN;
	// OneWayDelayNs is B's timestamp minus A's for them (negative when the
	// clocks disagree by more than the delay).
	Matched       uint64    `json:"matched"`
	OnlyA         uint64    `json:"only_a"`
	OnlyB         uint64    `json:"only_b"`
	OneWayDelayNs *IPDStats `json:"one_way_delay_ns,omitempty"`

	histA, histB *Histogram
}

// Hists returns the flow's two histograms (same edges).
func (f *CompareFlow) Hists() (a, b *Histogram) { return f.histA, f.histB }

// CompareReport is `ibanalyze ipd --compare A B --json`. Its flows are
// built one at a time (Flow, WriteJSON), never all at once.
type CompareReport struct {
	ResolutionNs  int64     `json:"resolution_ns"`
	By            GroupBy   `json:"by"`
	MatchWindowNs int64     `json:"match_window_ns"`
	Matched       uint64    `json:"matched"`
	OnlyA         uint64    `json:"only_a"`
	OnlyB         uint64    `json:"only_b"`
	OneWayDelayNs *IPDStats `json:"one_way_delay_ns,omitempty"`
	A             Input     `json:"a"`
	B             Input     `json:"b"`
	// MaxFlows is set when either side reached the bound on groups: the
	// packets of later groups are in a last flow keyed {"transport":
	// "other"}, without IPDs.
	MaxFlows int `json:"max_flows,omitempty"`

	groups []*compareGroup // busiest first, the other group last
	bins   *binner
}

// compareGroup is one flow's state on each side (nil where the side never
// showed it) and its matches.
type compareGroup struct {
	key   decode.FlowKey
	a, b  *ipdGroup
	m     *matchStats
	other bool // the groups past the bound
}

// NumFlows returns how many flows the result holds.
func (r *CompareReport) NumFlows() int { return len(r.groups) }

// Flow returns flow i, busiest first (the other flow, if any, last).
func (r *CompareReport) Flow(i int) *CompareFlow {
	g := r.groups[i]
	f := &CompareFlow{}
	if g.other {
		f.Key = GroupKey{Transport: "other"}
	} else {
		f.Key = keyJSON(g.key, r.By)
	}
	side := func(s *ipdGroup) (packets uint64, st IPDStats, hj HistCounts, h *Histogram) {
		if s == nil || g.other {
			h = r.bins.proto.Empty()
			if s != nil {
				packets = s.packets
			}
			return packets, st, HistCounts{Mode: h.Mode, Bins: h.Bins()}, h
		}
		h = r.bins.histogram(&s.hist)
		return s.packets, statsOf(&s.ipd), HistCounts{Mode: h.Mode, Bins: h.Bins(), Below: h.Below, Above: h.Above}, h
	}
	f.PacketsA, f.IPDA, f.HistA, f.histA = side(g.a)
	f.PacketsB, f.IPDB, f.HistB, f.histB = side(g.b)
	if g.a != nil && g.b != nil && g.a.ipd.Count() > 0 && g.b.ipd.Count() > 0 {
		ks := ksDistance(&g.a.ipd, &g.b.ipd)
		f.KS = &ks
	}
	if g.m != nil {
		f.Matched, f.OnlyA, f.OnlyB = g.m.matched, g.m.onlyA, g.m.onlyB
		if g.m.delay.Count() > 0 {
			st := statsOf(&g.m.delay)
			f.OneWayDelayNs = &st
		}
	}
	return f
}

// WriteJSON writes the document exactly as encoding/json indents it by two
// spaces, encoding one flow at a time.
func (r *CompareReport) WriteJSON(w io.Writer) error {
	type fields CompareReport // the same fields, without the methods
	return writeFlowsDoc(w, len(r.groups), func(i int) any { return r.Flow(i) }, (*fields)(r))
}

// MarshalJSON returns what WriteJSON writes.
func (r *CompareReport) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := r.WriteJSON(&b)
	return b.Bytes(), err
}

// matchKey is one packet as both sides see it.
type matchKey struct {
	flow decode.FlowKey
	psn  uint32
}

type matchEntry struct {
	tsNs int64
	side uint8 // 0 = A, 1 = B
}

type matchStats struct {
	matched, onlyA, onlyB uint64
	delay                 sketch
}

func (m *matchStats) only(side uint8) {
	if side == 0 {
		m.onlyA++
	} else {
		m.onlyB++
	}
}

// matcher pairs packets of two captures by (flow, PSN) within a time window.
type matcher struct {
	windowNs int64
	by       GroupBy
	pending  map[matchKey]matchEntry
	queue    []queued // insertion order, for expiry
	qHead    int
	groups   map[decode.FlowKey]*matchStats
	maxGroup int
	other    *matchStats // groups past maxGroup
	total    matchStats
}

type queued struct {
	key matchKey
	matchEntry
}

func newMatcher(windowNs int64, by GroupBy, maxGroups int) *matcher {
	return &matcher{windowNs: windowNs, by: by, pending: make(map[matchKey]matchEntry), groups: make(map[decode.FlowKey]*matchStats), maxGroup: maxGroups}
}

func (m *matcher) group(k decode.FlowKey) *matchStats {
	g := m.groups[groupKey(k, m.by)]
	switch {
	case g != nil:
	case len(m.groups) < m.maxGroup:
		g = &matchStats{}
		m.groups[groupKey(k, m.by)] = g
	default:
		if m.other == nil {
			m.other = &matchStats{}
		}
		g = m.other
	}
	return g
}

// add offers one packet from side (0 = A, 1 = B), in merged time order.
func (m *matcher) add(p *Packet, side uint8) {
	m.expire(p.TsNs)
	k := matchKey{p.Key, p.PSN}
	e, ok := m.pending[k]
	switch {
	case ok && e.side != side:
		delete(m.pending, k)
		d := p.TsNs - e.tsNs
		if side == 0 {
			d = -d
		}
		g := m.group(p.Key)
		g.matched++
		g.delay.Add(d)
		m.total.matched++
		m.total.delay.Add(d)
		return
	case ok:
		// The same PSN again on one side (a retransmission) before the
		// other side showed it: the earlier copy has no twin.
		m.group(p.Key).only(side)
		m.total.only(side)
	}
	m.pending[k] = matchEntry{p.TsNs, side}
	m.queue = append(m.queue, queued{k, matchEntry{p.TsNs, side}})
}

// expire counts packets that waited longer than the window as one-sided.
func (m *matcher) expire(nowNs int64) {
	for m.qHead < len(m.queue) && m.queue[m.qHead].tsNs < nowNs-m.windowNs {
		q := m.queue[m.qHead]
		m.qHead++
		if e, ok := m.pending[q.key]; ok && e == q.matchEntry {
			delete(m.pending, q.key)
			m.group(q.key.flow).only(q.side)
			m.total.only(q.side)
		}
	}
	if m.qHead > 4096 && m.qHead*2 > len(m.queue) {
		m.queue = append(m.queue[:0], m.queue[m.qHead:]...)
		m.qHead = 0
	}
}

// ksDistance is the Kolmogorov-Smirnov distance between two sketches.
func ksDistance(a, b *sketch) float64 {
	xs, xw := sketchSample(a)
	ys, yw := sketchSample(b)
	if len(xs) == 0 || len(ys) == 0 {
		return 0
	}
	return stat.KolmogorovSmirnov(xs, xw, ys, yw)
}

func sketchSample(s *sketch) (vals, weights []float64) {
	s.buckets(func(v int64, c uint64) {
		vals = append(vals, float64(v))
		weights = append(weights, float64(c))
	})
	return vals, weights
}

// RunCompare reads two captures of the same traffic (a: sender side, b:
// receiver side) in merged time order: an IPD analysis of each with aligned
// bins, and packets matched by (flow, PSN) within matchWindowNs.
func RunCompare(a, b *Stream, cfg IPDOptions, matchWindowNs int64, progress func()) (*CompareReport, error) {
	if matchWindowNs <= 0 {
		matchWindowNs = DefaultMatchWindowNs
	}
	if matchWindowNs > MaxMatchWindowNs {
		return nil, fmt.Errorf("match window of %s: want at most %s (every packet inside it is kept)", units.FormatNs(matchWindowNs), units.FormatNs(MaxMatchWindowNs))
	}
	res := func() int64 { return max(a.ResolutionNs(), b.ResolutionNs()) }
	bins := newBinner(cfg.Hist, res)
	ia, err := newIPDAnalysis(cfg, bins)
	if err != nil {
		return nil, err
	}
	ib, _ := newIPDAnalysis(cfg, bins)
	if err := cfg.Hist.Validate(res()); err != nil {
		return nil, err
	}
	m := newMatcher(matchWindowNs, ia.cfg.By, ia.cfg.MaxFlows)
	var pa, pb Packet
	okA, okB := a.Next(&pa) == nil, b.Next(&pb) == nil
	for n := 1; okA || okB; n++ {
		if okA && (!okB || pa.TsNs <= pb.TsNs) {
			ia.Add(&pa)
			if ia.counts(&pa) {
				m.add(&pa, 0)
			}
			okA = a.Next(&pa) == nil
		} else {
			ib.Add(&pb)
			if ib.counts(&pb) {
				m.add(&pb, 1)
			}
			okB = b.Next(&pb) == nil
		}
		if n%progressEvery == 0 {
			if bins.err != nil {
				return nil, bins.err
			}
			if progress != nil {
				progress()
			}
		}
	}
	m.expire(1<<63 - 1)
	// Each side's result checks the bins against the final resolution;
	// one side without IPDs (all its packets lost) is still a comparison.
	_, errA := ia.Result(res())
	_, errB := ib.Result(res())
	if errA != nil && errB != nil {
		return nil, errA
	}
	if bins.err != nil {
		return nil, bins.err
	}
	r := &CompareReport{ResolutionNs: res(), By: ia.cfg.By, MatchWindowNs: matchWindowNs,
		Matched: m.total.matched, OnlyA: m.total.onlyA, OnlyB: m.total.onlyB, A: a.Input(), B: b.Input()}
	if m.total.delay.Count() > 0 {
		st := statsOf(&m.total.delay)
		r.OneWayDelayNs = &st
	}
	r.bins = bins
	r.groups = pairGroups(ia, ib, m)
	if ia.other != nil || ib.other != nil || m.other != nil {
		r.MaxFlows = ia.cfg.MaxFlows
		r.groups = append(r.groups, &compareGroup{a: ia.other, b: ib.other, m: m.other, other: true})
	}
	return r, nil
}

// pairGroups puts side a's and side b's groups of the same key, and their
// matches, together, the groups with the most packets first (stable: in the
// order the sides first listed them).
func pairGroups(ia, ib *IPDAnalysis, m *matcher) []*compareGroup {
	var out []*compareGroup
	groups := map[decode.FlowKey]*compareGroup{}
	for side, an := range []*IPDAnalysis{ia, ib} {
		an.eachGroup(func(g *ipdGroup) {
			k := an.index.key(g.id).unpack()
			cg := groups[k]
			if cg == nil {
				cg = &compareGroup{key: k, m: m.groups[k]}
				groups[k] = cg
				out = append(out, cg)
			}
			if side == 0 {
				cg.a = g
			} else {
				cg.b = g
			}
		})
	}
	slices.SortStableFunc(out, func(x, y *compareGroup) int { return cmp.Compare(y.packets(), x.packets()) })
	return out
}

// packets is the flow's packets on both sides.
func (g *compareGroup) packets() uint64 {
	var n uint64
	if g.a != nil {
		n += g.a.packets
	}
	if g.b != nil {
		n += g.b.packets
	}
	return n
}
