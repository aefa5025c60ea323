package telemetry

import (
	"fmt"
	"sort"
)

// DeltaFlags qualify a Delta.
type DeltaFlags uint16

const (
	// FlagWrapped: the counter wrapped at 2^Width between the two readings;
	// the value is corrected (assuming a single wrap).
	FlagWrapped DeltaFlags = 1 << iota
	// FlagReset: the counter went backwards in a way no single wrap explains
	// (a saturating counter, or a 64-bit one): it was reset. Value is the
	// later reading, the best lower bound.
	FlagReset
	// FlagSaturated: a saturating counter sits at its maximum; Value is a
	// lower bound.
	FlagSaturated
	// FlagGap: sample_ids were skipped (lost samples) or the sequence
	// restarted between the two samples. A cumulative counter's delta is still
	// right (if it did not wrap more than once); a clear-on-sample counter's
	// delta misses the lost periods.
	FlagGap
	// FlagMissing: a counter value could not be read in at least one sample;
	// the delta spans the nearest readable samples (see StartNs).
	FlagMissing
	// FlagGauge: the column is a statistic, not a counter; Value is the
	// reading itself, not a difference, and there is no rate.
	FlagGauge
	// FlagNoPrev: there is no earlier readable sample to difference against.
	FlagNoPrev
	// FlagNoTime: the interval is unusable (no timestamps, or time did not
	// move forward), so no rate can be given.
	FlagNoTime
)

var flagNames = [...]string{"wrapped", "reset", "saturated", "gap", "missing", "gauge", "no_prev", "no_time"}

func (f DeltaFlags) String() string {
	if f == 0 {
		return "ok"
	}
	out := ""
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			if out != "" {
				out += "|"
			}
			out += n
		}
	}
	return out
}

// Delta is the increase of one counter between two samples.
type Delta struct {
	Value   uint64     // increase, in the counter's Unit (words for port_xmit_data: see Counter.ToBase)
	StartNs int64      // nominal time (TimeNs) of the earlier sample, on the series' Clock
	EndNs   int64      // nominal time of the later sample
	Flags   DeltaFlags // how far to trust Value
}

// Seconds is the length of the interval the delta covers.
func (d Delta) Seconds() float64 { return float64(d.EndNs-d.StartNs) / 1e9 }

// Delta gives the increase from reading prev to reading cur of this counter,
// honouring its kind, width (wrap), saturation and clear-on-sample behaviour.
//
//   - KindGauge: returns cur and FlagGauge.
//   - ClearOnSample: cur already is the delta; returns cur.
//   - Saturating: cur < prev is a reset (returns cur, FlagReset); cur at Max
//     returns cur-prev with FlagSaturated.
//   - Width < 64: cur < prev is one wrap; returns (cur-prev) mod 2^Width with
//     FlagWrapped.
//   - Width 64: cur < prev is a wrap only if the wrapped delta is below 2^63;
//     otherwise a reset.
func (c Counter) Delta(prev, cur uint64) (uint64, DeltaFlags) {
	switch {
	case c.Kind == KindGauge:
		return cur, FlagGauge
	case c.ClearOnSample:
		if c.Saturating && cur >= c.Max() {
			return cur, FlagSaturated
		}
		return cur, 0
	case c.Saturating:
		if cur < prev {
			return cur, FlagReset
		}
		if cur >= c.Max() {
			return cur - prev, FlagSaturated
		}
		return cur - prev, 0
	case cur >= prev:
		return cur - prev, 0
	}
	max := c.Max()
	if max == ^uint64(0) {
		if d := cur - prev; d < 1<<63 {
			return d, FlagWrapped
		}
		return cur, FlagReset
	}
	if prev > max {
		// Values wider than the declared width: not a wrap of this counter.
		return cur, FlagReset
	}
	return (cur - prev) & max, FlagWrapped
}

// prevValid returns the last sample before i with a value for col, or -1.
func (s *Series) prevValid(i, col int) int {
	for j := i - 1; j >= 0; j-- {
		if s.Valid(j, col) {
			return j
		}
	}
	return -1
}

// step is the delta between samples j < i of column col, both readable.
func (s *Series) step(j, i, col int) Delta {
	c := s.Counters[col]
	v, f := c.Delta(s.Value(j, col), s.Value(i, col))
	d := Delta{Value: v, StartNs: s.TimeNs(j), EndNs: s.TimeNs(i), Flags: f}
	for k := j + 1; k <= i; k++ {
		if s.discontinuity(k) {
			d.Flags |= FlagGap
			break
		}
	}
	if i-j > 1 {
		d.Flags |= FlagMissing
	}
	if s.Clock == ClockNone || d.EndNs <= d.StartNs {
		d.Flags |= FlagNoTime
	}
	return d
}

// Delta is the increase of column col from the previous readable sample to
// sample i. For i == 0 (or no readable earlier sample) it returns FlagNoPrev
// and Value 0, except for gauges, which return their reading. (A
// clear-on-sample counter's first value covers an interval whose start the
// data does not give, so it is not returned as a delta either.)
func (s *Series) Delta(i, col int) Delta {
	c := s.Counters[col]
	if !s.Valid(i, col) {
		return Delta{EndNs: s.TimeNs(i), Flags: FlagMissing | FlagNoPrev}
	}
	if c.Kind == KindGauge {
		return Delta{Value: s.Value(i, col), StartNs: s.TimeNs(i), EndNs: s.TimeNs(i), Flags: FlagGauge}
	}
	j := s.prevValid(i, col)
	if j < 0 {
		d := Delta{StartNs: s.TimeNs(i), EndNs: s.TimeNs(i), Flags: FlagNoPrev | FlagNoTime}
		if i > 0 {
			d.Flags |= FlagMissing
		}
		return d
	}
	return s.step(j, i, col)
}

// Deltas fills dst (reusing its storage) with Delta(i, col) for every sample;
// dst[0] carries FlagNoPrev. It is the fast path for a whole column.
func (s *Series) Deltas(col int, dst []Delta) []Delta {
	dst = dst[:0]
	for i := 0; i < s.Len(); i++ {
		dst = append(dst, s.Delta(i, col))
	}
	return dst
}

// Rate is the increase of column col per second over the interval ending at
// sample i, in the counter's base unit (bytes/s for UnitBytes and UnitWords,
// events/s for UnitCount, ticks/s for UnitTicks, ns/s for UnitNs). It returns
// 0 when the flags include FlagNoPrev, FlagNoTime or FlagGauge.
func (s *Series) Rate(i, col int) (float64, DeltaFlags) {
	d := s.Delta(i, col)
	return s.rateOf(col, d)
}

func (s *Series) rateOf(col int, d Delta) (float64, DeltaFlags) {
	if d.Flags&(FlagNoPrev|FlagNoTime|FlagGauge) != 0 {
		return 0, d.Flags
	}
	_, f := s.Counters[col].Unit.Base()
	return float64(d.Value) * float64(f) / d.Seconds(), d.Flags
}

// DeltaWithin sums the increase of column col between the first and the last
// sample whose TimeNs lies in [fromNs, toNs]. The Delta's StartNs and EndNs
// say which part of the window the samples actually cover. Per-step deltas
// are summed, so several wraps across the window are each honoured. It needs
// two readable samples in the window.
func (s *Series) DeltaWithin(col int, fromNs, toNs int64) (Delta, error) {
	a, b := -1, -1
	if !s.unsorted {
		a = sort.Search(s.Len(), func(i int) bool { return s.TimeNs(i) >= fromNs })
		b = sort.Search(s.Len(), func(i int) bool { return s.TimeNs(i) > toNs }) - 1
	} else {
		for i := 0; i < s.Len(); i++ {
			if t := s.TimeNs(i); t >= fromNs && t <= toNs {
				if a < 0 {
					a = i
				}
				b = i
			}
		}
	}
	for a >= 0 && a < s.Len() && !s.Valid(a, col) {
		a++
	}
	for b >= 0 && b < s.Len() && !s.Valid(b, col) {
		b--
	}
	if a < 0 || b < 0 || b <= a || a >= s.Len() {
		return Delta{}, fmt.Errorf("telemetry: %s: fewer than two readable samples of %s between %d and %d ns",
			s.Source, s.Counters[col].Name, fromNs, toNs)
	}
	return s.span(col, a, b), nil
}

// DeltaCovering sums the increase of column col from the last sample at or
// before fromNs to the first sample at or after toNs, so the covered interval
// contains the whole window. It fails when the series does not reach both
// ends.
func (s *Series) DeltaCovering(col int, fromNs, toNs int64) (Delta, error) {
	a, b := -1, -1
	if !s.unsorted {
		a = sort.Search(s.Len(), func(i int) bool { return s.TimeNs(i) > fromNs }) - 1
		for a >= 0 && !s.Valid(a, col) {
			a--
		}
		b = sort.Search(s.Len(), func(i int) bool { return s.TimeNs(i) >= toNs })
		for b < s.Len() && !s.Valid(b, col) {
			b++
		}
		if b >= s.Len() {
			b = -1
		}
	} else {
		for i := 0; i < s.Len(); i++ {
			if !s.Valid(i, col) {
				continue
			}
			t := s.TimeNs(i)
			if t <= fromNs && (a < 0 || t >= s.TimeNs(a)) {
				a = i
			}
			if t >= toNs && (b < 0 || t < s.TimeNs(b)) {
				b = i
			}
		}
	}
	if a < 0 || b < 0 || b <= a {
		return Delta{}, fmt.Errorf("telemetry: %s: samples of %s do not cover %d..%d ns",
			s.Source, s.Counters[col].Name, fromNs, toNs)
	}
	return s.span(col, a, b), nil
}

// span sums per-step deltas over readable samples a < b.
func (s *Series) span(col, a, b int) Delta {
	c := s.Counters[col]
	if c.Kind == KindGauge {
		return Delta{Value: s.Value(b, col), StartNs: s.TimeNs(a), EndNs: s.TimeNs(b), Flags: FlagGauge}
	}
	out := Delta{StartNs: s.TimeNs(a), EndNs: s.TimeNs(b)}
	j := a
	for i := a + 1; i <= b; i++ {
		if !s.Valid(i, col) {
			continue
		}
		d := s.step(j, i, col)
		out.Flags |= d.Flags &^ FlagNoTime
		if out.Value+d.Value < out.Value {
			out.Value = ^uint64(0)
		} else {
			out.Value += d.Value
		}
		j = i
	}
	if s.Clock == ClockNone || out.EndNs <= out.StartNs {
		out.Flags |= FlagNoTime
	}
	return out
}
