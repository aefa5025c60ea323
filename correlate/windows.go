package correlate

import (
	"fmt"
	"math"

	"github.com/ibscope/ibscope/telemetry"
)

// windowSet makes the fixed windows of Options.WindowNs: aligned to multiples of
// windowNs since the epoch, covering the part of the capture that some
// telemetry series covers.
func windowSet(series []*inSeries, span captureSpan, windowNs int64) (*binner, error) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, in := range series {
		a, b := in.spanNs()
		lo, hi = min(lo, a), max(hi, b)
	}
	lo, hi = max(lo, span.firstNs), min(hi, span.lastNs)
	first := floorDiv(lo, windowNs) * windowNs
	n := (hi-first)/windowNs + 1
	if n > maxWindows {
		return nil, &OptionError{"WindowNs", fmt.Errorf("a window of %d ns makes %d windows over %s; the most is %d: choose a longer window",
			windowNs, n, fmtRange(lo, hi), maxWindows)}
	}
	starts, ends := make([]int64, n), make([]int64, n)
	for k := range starts {
		starts[k] = first + int64(k)*windowNs
		ends[k] = starts[k] + windowNs
	}
	return newBinner(starts, ends), nil
}

// cumulative holds, per counter of a series, the running sum of its deltas
// at each sample (in the counter's unit), for interpolating counts at window
// edges. Gauges and columns with no usable delta get nil.
func cumulative(s *telemetry.Series) [][]float64 {
	out := make([][]float64, len(s.Counters))
	for c, ctr := range s.Counters {
		if ctr.Kind == telemetry.KindGauge {
			continue
		}
		cum := make([]float64, s.Len())
		for i := 1; i < s.Len(); i++ {
			cum[i] = cum[i-1]
			if d := s.Delta(i, c); d.Flags&telemetry.FlagNoPrev == 0 {
				cum[i] += float64(d.Value)
			}
		}
		out[c] = cum
	}
	return out
}

// interpolate gives cum at time t (capture clock) by linear interpolation
// between samples; ok is false outside the samples' span.
func interpolate(times []int64, cum []float64, t int64) (float64, bool) {
	n := len(times)
	if n == 0 || t < times[0] || t > times[n-1] {
		return 0, false
	}
	// First sample at or after t.
	lo, hi := 0, n-1
	for lo < hi {
		mid := (lo + hi) / 2
		if times[mid] < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if times[lo] == t || lo == 0 {
		return cum[lo], true
	}
	a, b := times[lo-1], times[lo]
	f := float64(t-a) / float64(b-a)
	return cum[lo-1] + f*(cum[lo]-cum[lo-1]), true
}

// lastAtOrBefore is the index of the last sample at or before t, or -1.
func lastAtOrBefore(times []int64, t int64) int {
	lo, hi := 0, len(times)
	for lo < hi {
		mid := (lo + hi) / 2
		if times[mid] <= t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}
