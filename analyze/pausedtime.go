package analyze

import (
	"math"
	"slices"

	"github.com/ibscope/ibscope/protostate"
)

// PausedTimeBins bounds the bins of a PausedTime: 4 KB a priority.
const PausedTimeBins = 512

// pausedTimeFirstWidthNs is a PausedTime's first bin width; it doubles
// as the pauses reach past the bins, so that PausedTimeBins always span
// them, at least half of the bins used.
const pausedTimeFirstWidthNs = 1024

// maxPausedTimeWidthNs is the widest bin: PausedTimeBins of it do not
// overflow an int64.
const maxPausedTimeWidthNs = math.MaxInt64 / (2 * PausedTimeBins)

// PausedTime is how long one priority of one link direction was paused in
// each of consecutive bins of WidthNs from OriginNs (the first pause's
// start) over every pause, not only the ones listed: what a picture of the
// pauses draws past --max-pauses. Its memory is bounded (PausedTimeBins).
type PausedTime struct {
	OriginNs int64
	WidthNs  int64
	Ns       []int64 // paused time per bin
}

// add counts the pause p into the bins, widening them when p ends past
// the last one. A pause starting before the origin (a frame past the
// reorder window) is counted from the origin.
func (t *PausedTime) add(p protostate.PauseSpan) {
	if t.WidthNs == 0 {
		t.OriginNs, t.WidthNs = p.StartNs, pausedTimeFirstWidthNs
		t.Ns = make([]int64, 0, PausedTimeBins)
	}
	if p.EndNs <= max(p.StartNs, t.OriginNs) {
		return
	}
	from, to := sinceOrigin(max(p.StartNs, t.OriginNs), t.OriginNs), sinceOrigin(p.EndNs, t.OriginNs)
	for to > t.WidthNs*PausedTimeBins && t.WidthNs <= maxPausedTimeWidthNs {
		t.widen()
	}
	// Past the widest bins (a span of 2^62 ns, never a capture's) the
	// pause is cut at the last.
	to = min(to, t.WidthNs*PausedTimeBins)
	if to <= from {
		return
	}
	last := int((to - 1) / t.WidthNs)
	for len(t.Ns) <= last {
		t.Ns = append(t.Ns, 0)
	}
	for b := int(from / t.WidthNs); b <= last; b++ {
		lo, hi := int64(b)*t.WidthNs, int64(b+1)*t.WidthNs
		t.Ns[b] += min(hi, to) - max(lo, from)
	}
}

// sinceOrigin is ns - origin (ns >= origin), at most the widest bins'
// span: the difference of two int64 may not fit one.
func sinceOrigin(ns, origin int64) int64 {
	return int64(min(uint64(ns)-uint64(origin), uint64(maxPausedTimeWidthNs*PausedTimeBins)))
}

// widen doubles the bin width, merging each pair of bins.
func (t *PausedTime) widen() {
	n := (len(t.Ns) + 1) / 2
	for i := range n {
		v := t.Ns[2*i]
		if 2*i+1 < len(t.Ns) {
			v += t.Ns[2*i+1]
		}
		t.Ns[i] = v
	}
	t.Ns = t.Ns[:n]
	t.WidthNs *= 2
}

// clone returns a copy of t that add does not share.
func (t *PausedTime) clone() *PausedTime {
	if t == nil {
		return nil
	}
	c := *t
	c.Ns = slices.Clone(t.Ns)
	return &c
}
