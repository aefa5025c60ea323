package analyze

import (
	"fmt"
	"slices"
)

// Phase is a stretch of a packet series with one IPD regime, e.g. 2 us
// spacing while one sender is active, 4 us once a second one shares the link.
type Phase struct {
	StartNs     int64 `json:"start_ns"`      // timestamp of the phase's first packet, ns since the epoch
	EndNs       int64 `json:"end_ns"`        // timestamp of its last packet, ns since the epoch
	Packets     int   `json:"packets"`       // packets in the phase
	MedianIPDNs int64 `json:"median_ipd_ns"` // median IPD within the phase, ns (sketch error bound)
}

// phaseTolerance is how far (as a fraction of the larger) a block's median
// IPD must stray from its phase's median to count as a different regime.
// Rate changes worth reporting are factors (a second sender halves a
// flow's share); jitter and timestamp quantisation stay well inside it.
const phaseTolerance = 0.3

// The shortest phase reported, in packets.
const (
	// DefaultPhasePackets is the shortest phase when the caller does not say.
	DefaultPhasePackets = 64
	// MaxPhasePackets bounds the shortest phase: a detector holds up to
	// about three times that many IPDs (8 bytes each) of a series in its
	// blocks.
	MaxPhasePackets = 1 << 16
)

// checkPhasePackets checks a shortest phase in packets (0: the default).
func checkPhasePackets(n int) error {
	if n < 0 || n > MaxPhasePackets {
		return fmt.Errorf("shortest phase of %d packets: want 1 to %d packets (0 for the default %d)", n, MaxPhasePackets, DefaultPhasePackets)
	}
	return nil
}

// phaseDetector finds IPD regime changes in a time-ordered packet series,
// online and in bounded memory: it compares the median IPD of successive
// blocks of packets with the running median of the current phase, and opens
// a new phase when enough consecutive blocks agree on a different level.
// Medians of blocks, not means, so that single outliers (a 320 us stall in
// a 2 us stream) do not split phases. The boundary is then placed after the
// last packet whose IPD is nearer the old level, looking back one block, so
// a clean change of spacing is found to the packet.
type phaseDetector struct {
	blockLen   int // IPDs per block
	confirm    int // consecutive differing blocks that make a new phase
	lastTs     int64
	n          int     // packets seen
	block      []int64 // IPDs of the block being filled
	blockStart int64   // timestamp of the packet that closes the first IPD of block
	cur        phaseAcc
	held       []int64 // IPDs of the last same-regime block, not yet absorbed: a change may start inside it
	heldStart  int64
	cand       []int64 // IPDs of the candidate new phase's blocks
	candStart  int64
	candMedian int64
	candBlocks int
	done       []Phase
	scratch    []int64
}

type phaseAcc struct {
	start, end int64
	packets    int
	ipd        sketch
}

// newPhaseDetector returns a detector that reports phases of at least
// minPackets packets (DefaultPhasePackets when minPackets <= 0, and
// MaxPhasePackets at most). Its blocks grow with the packets it is given,
// so a detector per flow costs little for the many short flows.
func newPhaseDetector(minPackets int) *phaseDetector {
	if minPackets <= 0 {
		minPackets = DefaultPhasePackets
	}
	minPackets = min(minPackets, MaxPhasePackets)
	blockLen := max(minPackets/4, 4)
	return &phaseDetector{
		blockLen: blockLen,
		confirm:  max((minPackets+blockLen-1)/blockLen, 2),
	}
}

// Add records the next packet's timestamp (ns, not before the previous one).
func (d *phaseDetector) Add(tsNs int64) {
	d.n++
	if d.n == 1 {
		d.cur = phaseAcc{start: tsNs, end: tsNs, packets: 1}
		d.lastTs = tsNs
		return
	}
	if len(d.block) == 0 {
		d.blockStart = tsNs
	}
	d.block = append(d.block, tsNs-d.lastTs)
	d.lastTs = tsNs
	if len(d.block) == d.blockLen {
		d.closeBlock()
	}
}

func (d *phaseDetector) closeBlock() {
	if d.scratch == nil {
		d.scratch = make([]int64, d.blockLen)
	}
	m := median(d.block, d.scratch)
	ref := d.cur.ipd.Quantile(0.5)
	switch {
	case d.cur.ipd.Count() == 0:
		d.absorb(d.block, d.blockStart)
	case !differs(m, ref):
		// Same regime: a pending candidate was a passing excursion.
		d.flush()
		d.held = append(d.held, d.block...)
		d.heldStart = d.blockStart
	case d.candBlocks > 0 && !differs(m, d.candMedian):
		d.cand = append(d.cand, d.block...)
		d.candBlocks++
	default:
		// A first block of a possible new regime (or a third level):
		// whatever was pending stays with the current phase, except the
		// block held back just before it, where the change may have begun.
		if d.candBlocks > 0 {
			d.flush()
		}
		d.cand = append(d.cand[:0], d.block...)
		d.candStart, d.candMedian, d.candBlocks = d.blockStart, m, 1
	}
	d.block = d.block[:0]
	if d.candBlocks < d.confirm {
		return
	}
	// A new phase. Place its start within the held block and the first
	// candidate block: after the last IPD there nearer the old level. The
	// later candidate blocks (confirm is 2 or more) follow, so the new phase
	// has an IPD after that one even when the first candidate block ends
	// nearer the old level ([10 10 10 2] after 2s): its start was then
	// summed past the end of the held and first blocks, a panic or a time
	// from whatever the slice held beyond (found by FuzzAnalyses).
	seq := append(slices.Clone(d.held), d.cand...)
	seqStart := d.candStart
	if len(d.held) > 0 {
		seqStart = d.heldStart
	}
	k := 0
	for i, v := range seq[:len(d.held)+d.blockLen] {
		if nearerFirst(v, ref, d.candMedian) {
			k = i + 1
		}
	}
	d.absorb(seq[:k], seqStart)
	start := seqStart
	if k > 0 {
		for _, v := range seq[1 : k+1] {
			start += v
		}
	}
	d.done = append(d.done, d.cur.phase())
	d.cur = phaseAcc{start: start, end: start}
	d.absorb(seq[k:], start)
	d.held, d.cand, d.candBlocks = d.held[:0], d.cand[:0], 0
}

// flush absorbs the held block and any candidate blocks into the current phase.
func (d *phaseDetector) flush() {
	d.absorb(d.held, d.heldStart)
	if d.candBlocks > 0 {
		d.absorb(d.cand, d.candStart)
	}
	d.held, d.cand, d.candBlocks = d.held[:0], d.cand[:0], 0
}

// absorb adds consecutive IPDs, the first of which ends at startTs, to the
// current phase.
func (d *phaseDetector) absorb(ipds []int64, startTs int64) {
	ts := startTs
	for i, v := range ipds {
		if i > 0 {
			ts += v
		}
		d.cur.ipd.Add(v)
	}
	if len(ipds) > 0 {
		d.cur.packets += len(ipds)
		d.cur.end = ts
	}
}

func (a *phaseAcc) phase() Phase {
	return Phase{StartNs: a.start, EndNs: a.end, Packets: a.packets, MedianIPDNs: a.ipd.Quantile(0.5)}
}

// Phases returns the phases found so far, the open one included; a short
// tail that has not yet confirmed a change belongs to the last phase.
func (d *phaseDetector) Phases() []Phase {
	if d.n == 0 {
		return nil
	}
	out := slices.Clone(d.done)
	last := d.cur
	last.ipd = sketch{}
	last.ipd.Merge(&d.cur.ipd)
	tail := append(append(slices.Clone(d.held), d.cand...), d.block...)
	for _, v := range tail {
		last.ipd.Add(v)
	}
	if len(tail) > 0 {
		last.packets += len(tail)
		last.end = d.lastTs
	}
	return append(out, last.phase())
}

// detectPhases splits a sorted series of timestamps (ns) into IPD regimes of
// at least minPackets packets each (DefaultPhasePackets when <= 0).
func detectPhases(tsNs []int64, minPackets int) []Phase {
	d := newPhaseDetector(minPackets)
	for _, ts := range tsNs {
		d.Add(ts)
	}
	return d.Phases()
}

// differs reports whether two IPD levels belong to different regimes.
func differs(a, b int64) bool {
	diff := a - b
	if diff < 0 {
		diff = -diff
	}
	return diff > 0 && float64(diff) > phaseTolerance*float64(max(a, b))
}

// nearerFirst reports whether v lies nearer to level a than to level b on a
// log scale (IPD levels are rates: 3 us sits between 2 and 4.5 us).
func nearerFirst(v, a, b int64) bool {
	fv, mid := float64(v), float64(a)*float64(b)
	if a < b {
		return fv*fv < mid
	}
	return fv*fv > mid
}

// median returns the median of v, using scratch (len >= len(v)) to sort.
func median(v, scratch []int64) int64 {
	s := scratch[:len(v)]
	copy(s, v)
	slices.Sort(s)
	return s[len(s)/2]
}
