package analyze

import (
	"math"
	"math/bits"
)

// Sketch summarises a stream of int64 values (ns) in bounded memory: exact
// count, min, max, mean and standard deviation, and quantiles from a
// log-linear histogram.
//
// Quantile error bound: values below 128 are counted exactly; above, each
// power of two is split into 64 buckets, so a bucket spans at most 1/64 of
// its lower edge and the reported value (the bucket's middle, clamped to the
// observed min and max) is within 1/128 (0.78%) of a true value of that rank.
// When every value is a multiple of a power of ten (timestamps in whole
// microseconds) and a bucket is no wider than that unit, the reported value
// is the one multiple in the bucket: exact.
// Memory: 8 bytes per bucket between the smallest and the largest value
// seen: 512 bytes per power of two the values span (4 KiB for IPDs from
// 1 us to 256 us), 30 KiB at most.
type Sketch struct {
	pos, neg bucketCounts // bucket counts of v >= 0 and of -v for v < 0
	n        uint64
	min, max int64
	mean, m2 float64 // Welford's running mean and sum of squared deviations
	// unitNs is the largest power of ten dividing every value: values
	// from a clock that ticks in whole microseconds are reported as whole
	// microseconds, so quantiles of such data are exact.
	unitNs int64
}

const (
	sketchSubBits = 6
	sketchSub     = 1 << sketchSubBits // buckets per power of two
)

// sketchIndex returns the bucket holding v.
func sketchIndex(v uint64) int {
	if v < 2*sketchSub {
		return int(v)
	}
	shift := bits.Len64(v) - (sketchSubBits + 1)
	return 2*sketchSub + (shift-1)*sketchSub + int(v>>uint(shift)) - sketchSub
}

// sketchBucket returns the lowest value of bucket i and how many integers it spans.
func sketchBucket(i int) (lo, width uint64) {
	if i < 2*sketchSub {
		return uint64(i), 1
	}
	j := i - 2*sketchSub
	shift := uint(j/sketchSub + 1)
	return uint64(j%sketchSub+sketchSub) << shift, 1 << shift
}

// Add records one value.
func (s *Sketch) Add(v int64) {
	if s.n == 0 {
		s.unitNs = 1_000_000_000
	}
	for v%s.unitNs != 0 {
		s.unitNs /= 10
	}
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	d := float64(v) - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (float64(v) - s.mean)
	if v >= 0 {
		s.pos.add(sketchIndex(uint64(v)), 1)
	} else {
		s.neg.add(sketchIndex(uint64(-v)), 1)
	}
}

// bucketCounts holds counts for the buckets base .. base+len(c)-1 only,
// so a flow whose IPDs span a few powers of two pays for those alone.
type bucketCounts struct {
	base int
	c    []uint64
}

// add adds n to bucket i, widening the covered range as needed.
func (b *bucketCounts) add(i int, n uint64) {
	switch {
	case len(b.c) == 0:
		b.base = i
		b.c = append(b.c[:0], 0)
	case i < b.base:
		// Grow downwards with room to spare, as append does upwards.
		grow := max(b.base-i, len(b.c)/2)
		grow = min(grow, b.base)
		c := make([]uint64, grow+len(b.c), grow+cap(b.c))
		copy(c[grow:], b.c)
		b.c, b.base = c, b.base-grow
	case i >= b.base+len(b.c):
		b.c = append(b.c, make([]uint64, i+1-b.base-len(b.c))...)
	}
	b.c[i-b.base] += n
}

// Count returns how many values were added.
func (s *Sketch) Count() uint64 { return s.n }

// Min returns the smallest value, 0 when empty.
func (s *Sketch) Min() int64 { return s.min }

// Max returns the largest value, 0 when empty.
func (s *Sketch) Max() int64 { return s.max }

// Mean returns the exact mean, 0 when empty.
func (s *Sketch) Mean() float64 { return s.mean }

// StdDev returns the sample standard deviation (n-1 in the denominator, as
// gonum/stat.StdDev), 0 with fewer than two values.
func (s *Sketch) StdDev() float64 {
	if s.n < 2 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.n-1))
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1) within the
// bound stated on Sketch; 0 when empty.
func (s *Sketch) Quantile(q float64) int64 {
	if s.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	rank = min(max(rank, 1), s.n)
	var seen uint64
	for j := len(s.neg.c) - 1; j >= 0; j-- {
		if seen += s.neg.c[j]; seen >= rank {
			return -s.rep(s.neg.base+j, true)
		}
	}
	for j, c := range s.pos.c {
		if seen += c; seen >= rank {
			return s.rep(s.pos.base+j, false)
		}
	}
	return s.max
}

// rep returns the value bucket i stands for: its middle, moved onto the
// data's unit when the bucket holds a multiple of it, clamped to min..max.
// neg selects the negative buckets; the result is then the magnitude.
func (s *Sketch) rep(i int, neg bool) int64 {
	lo, w := sketchBucket(i)
	v := int64(lo + (w-1)/2)
	// A bucket no wider than the unit holds at most one multiple of it:
	// that is the value. Wider buckets keep their middle (the stated bound).
	if u := s.unitNs; u > 1 && int64(w) <= u {
		if m := v / u * u; m >= int64(lo) {
			v = m
		} else if m += u; m < int64(lo+w) {
			v = m
		}
	}
	if neg {
		return min(max(v, -s.max), -s.min)
	}
	return min(max(v, s.min), s.max)
}

// Merge adds every value of o to s.
func (s *Sketch) Merge(o *Sketch) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		s.min, s.max, s.unitNs = o.min, o.max, o.unitNs
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	n := float64(s.n + o.n)
	d := o.mean - s.mean
	s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/n
	s.mean += d * float64(o.n) / n
	s.n += o.n
	for s.unitNs > o.unitNs {
		s.unitNs /= 10
	}
	s.pos.merge(&o.pos)
	s.neg.merge(&o.neg)
}

func (b *bucketCounts) merge(o *bucketCounts) {
	for j, c := range o.c {
		if c > 0 {
			b.add(o.base+j, c)
		}
	}
}

// buckets calls fn for every non-empty bucket in ascending value order with
// the bucket's representative value (as Quantile reports it) and count.
func (s *Sketch) buckets(fn func(v int64, count uint64)) {
	for j := len(s.neg.c) - 1; j >= 0; j-- {
		if c := s.neg.c[j]; c > 0 {
			fn(-s.rep(s.neg.base+j, true), c)
		}
	}
	for j, c := range s.pos.c {
		if c > 0 {
			fn(s.rep(s.pos.base+j, false), c)
		}
	}
}
