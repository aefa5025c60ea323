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
	// (a saturating counter; a 64-bit one; or a wrap the counter could not
	// have made in the time, see Series.Delta), or the source recorded that
	// the device was reset in the interval (Series.SetReset): it was reset.
	// The increase over the interval is unknown; Value is the later
	// reading, a lower bound, and there is no rate.
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

// Physical bounds on how fast any counter grows, in its base unit per
// second. A drop that one wrap would explain only by a faster growth is a
// reset. Both are generous: the fastest ports today carry 800 Gb/s (XDR
// InfiniBand, 800GbE) and a PCIe 6.0 x16 link about 1 Tb/s per direction;
// packets, events, ticks and stall nanoseconds are bounded by a clock of a
// few GHz, counted in parallel by a few units.
const (
	maxBytesPerSec  = 250e9 // 2 Tb/s
	maxEventsPerSec = 1e10  // also ticks/s and ns/s (ten stall timers running at once)
)

// plausibleWrap reports whether a wrapped increase v of column col over
// [startNs, endNs] could have happened. With usable times the rate must stay
// within the physical bound; without them the wrap must be less than half
// the counter's range, the rule Counter.Delta applies to 64-bit counters.
func (s *Series) plausibleWrap(c Counter, v uint64, startNs, endNs int64) bool {
	if s.Clock != ClockNone && endNs > startNs {
		u, f := c.Unit.Base()
		bound := maxEventsPerSec
		if u == UnitBytes {
			bound = maxBytesPerSec
		}
		return float64(v)*float64(f) <= bound*float64(endNs-startNs)/1e9
	}
	return c.Width >= 64 || v <= c.Max()>>1
}

// step is the delta between samples j < i of column col, both readable.
func (s *Series) step(j, i, col int) Delta {
	c := s.Counters[col]
	cur := s.Value(i, col)
	v, f := c.Delta(s.Value(j, col), cur)
	d := Delta{Value: v, StartNs: s.TimeNs(j), EndNs: s.TimeNs(i), Flags: f}
	if f&FlagWrapped != 0 && !s.plausibleWrap(c, v, d.StartNs, d.EndNs) {
		d.Value, d.Flags = cur, f&^FlagWrapped|FlagReset
	}
	if c.Kind != KindGauge && !c.ClearOnSample && s.resetWithin(j, i) {
		// The device came back with its counters restarted: whatever the
		// readings, the increase is unknown; the later reading is a lower
		// bound, as for any reset.
		d.Value, d.Flags = cur, d.Flags&^FlagWrapped|FlagReset
	}
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
// sample i. A drop of a wrapping counter is taken as one wrap only when the
// wrap is plausible: the increase it implies stays within a physical bound
// on the counter's rate (250e9 bytes/s, 1e10 events, ticks or ns per
// second) over the interval, or, without usable times, below half the
// counter's range. Otherwise the counter was reset: FlagReset, the increase
// unknown (Value is the later reading, a lower bound). For i == 0 (or no readable earlier sample) it returns FlagNoPrev
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
// 0 when the flags include FlagNoPrev, FlagNoTime, FlagGauge or FlagReset.
func (s *Series) Rate(i, col int) (float64, DeltaFlags) {
	d := s.Delta(i, col)
	return s.rateOf(col, d)
}

func (s *Series) rateOf(col int, d Delta) (float64, DeltaFlags) {
	if d.Flags&(FlagNoPrev|FlagNoTime|FlagGauge|FlagReset) != 0 {
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

// warnResets warns about every interval in which a counter was reset,
// naming the line of the sample that ends it (see setLine): the delta there
// is unknown. One warning per sample names the first column and counts the
// others. Readers call it once the columns' widths are settled.
func (s *Series) warnResets(file string) {
	for i := 1; i < s.Len(); i++ {
		first, more := -1, 0
		var d Delta
		var prev uint64
		for col, c := range s.Counters {
			if c.Kind == KindGauge || c.ClearOnSample || !s.Valid(i, col) {
				continue
			}
			j := i - 1
			if !s.Valid(j, col) {
				if j = s.prevValid(i, col); j < 0 {
					continue
				}
			}
			if s.Value(i, col) >= s.Value(j, col) || s.resetWithin(j, i) {
				continue // no drop, or a recorded reset the reader warned of
			}
			dc := s.step(j, i, col)
			if dc.Flags&FlagReset == 0 {
				continue
			}
			if first < 0 {
				first, d, prev = col, dc, s.Value(j, col)
			} else {
				more++
			}
		}
		if first < 0 {
			continue
		}
		c := s.Counters[first]
		why := "a saturating counter does not wrap"
		if !c.Saturating {
			wrapped := s.Value(i, first) - prev
			if c.Width < 64 {
				wrapped &= c.Max()
			}
			if s.Clock != ClockNone && d.EndNs > d.StartNs {
				b, u := c.ToBase(wrapped)
				why = fmt.Sprintf("a wrap would mean %d %s in %d ns, %.3g %s/s, beyond what any device counts", b, u, d.EndNs-d.StartNs,
					float64(b)/d.Seconds(), u)
			} else {
				why = fmt.Sprintf("a wrap would mean an increase of %d, more than half the counter's range", wrapped)
			}
		}
		others := ""
		if more > 0 {
			others = fmt.Sprintf(" (and %d more column(s))", more)
		}
		s.warnf(file, s.lineOf(i), "counter reset: %s went from %d to %d (%s); its delta for this interval is unknown%s",
			clipped(c.Name), prev, s.Value(i, first), why, others)
	}
}
