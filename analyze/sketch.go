package analyze

import (
	"math"
	"math/bits"
)

// sketch summarises a stream of int64 values (ns) in bounded memory: exact
// count, min, max, mean and standard deviation, and quantiles from a
// log-linear histogram.
//
// Quantile error bound: values below 128 are counted exactly; above, each
// power of two is split into 64 buckets, so a bucket spans at most 1/64 of
// its lower edge. Each bucket keeps the smallest and largest value it
// received, and the reported value is the bucket's middle clamped to them:
// within 1/128 (0.78%) of a true value of that rank, and exact whenever the
// bucket's values are all equal (back-to-back packets of one size give one
// IPD; timestamps in whole microseconds put at most one value in each
// bucket below 65.536 us).
// Memory: 80 bytes, and 24 bytes per bucket between the smallest and the
// largest value seen: 1.5 KiB per power of two the values span (12 KiB for
// IPDs from 1 us to 256 us), 90 KiB at most. A sketch of one repeated value
// (a flow of a few back-to-back packets) holds one bucket.
type sketch struct {
	n        uint64
	min, max int64
	mean, m2 float64       // Welford's running mean and sum of squared deviations
	pos      bucketCounts  // buckets of v >= 0
	neg      *bucketCounts // buckets of -v for v < 0, made for the first negative value
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

// sketchBucketSpan returns the lowest value of bucket i and how many integers it spans.
func sketchBucketSpan(i int) (lo, width uint64) {
	if i < 2*sketchSub {
		return uint64(i), 1
	}
	j := i - 2*sketchSub
	shift := uint(j/sketchSub + 1)
	return uint64(j%sketchSub+sketchSub) << shift, 1 << shift
}

// Add records one value.
func (s *sketch) Add(v int64) {
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
		// A value in a bucket that already has some, the common case,
		// is counted here rather than in a call to add.
		i := sketchIndex(uint64(v))
		if j := uint(i - s.pos.base); j < uint(len(s.pos.b)) && s.pos.b[j].c != 0 {
			k := &s.pos.b[j]
			k.lo, k.hi = min(k.lo, v), max(k.hi, v)
			k.c++
			return
		}
		s.pos.add(i, 1, v, v)
	} else {
		s.negative().add(sketchIndex(uint64(-v)), 1, -v, -v)
	}
}

// negative returns the buckets of negative values, making them if needed.
func (s *sketch) negative() *bucketCounts {
	if s.neg == nil {
		s.neg = new(bucketCounts)
	}
	return s.neg
}

// bucketCounts holds the buckets base .. base+len(b)-1 only, so a flow
// whose IPDs span a few powers of two pays for those alone.
type bucketCounts struct {
	base int
	b    []sketchBucket
}

// sketchBucket counts the values of one bucket and keeps the smallest and
// largest (magnitudes) it received.
type sketchBucket struct {
	c      uint64
	lo, hi int64
}

// add adds n values from vlo to vhi (magnitudes) to bucket i, widening the
// covered range as needed.
func (b *bucketCounts) add(i int, n uint64, vlo, vhi int64) {
	switch {
	case len(b.b) == 0:
		b.base = i
		b.b = append(b.b[:0], sketchBucket{})
	case i < b.base:
		// Grow downwards with room to spare, as append does upwards.
		grow := max(b.base-i, len(b.b)/2)
		grow = min(grow, b.base)
		b.b = growDown(b.b, grow)
		b.base -= grow
	case i >= b.base+len(b.b):
		b.b = append(b.b, make([]sketchBucket, i+1-b.base-len(b.b))...)
	}
	k := &b.b[i-b.base]
	if k.c == 0 {
		k.lo, k.hi = vlo, vhi
	} else {
		k.lo, k.hi = min(k.lo, vlo), max(k.hi, vhi)
	}
	k.c += n
}

// growDown returns x with grow zero elements in front.
func growDown(x []sketchBucket, grow int) []sketchBucket {
	out := make([]sketchBucket, grow+len(x), grow+cap(x))
	copy(out[grow:], x)
	return out
}

// Count returns how many values were added.
func (s *sketch) Count() uint64 { return s.n }

// Min returns the smallest value, 0 when empty.
func (s *sketch) Min() int64 { return s.min }

// Max returns the largest value, 0 when empty.
func (s *sketch) Max() int64 { return s.max }

// Mean returns the exact mean, 0 when empty.
func (s *sketch) Mean() float64 { return s.mean }

// StdDev returns the sample standard deviation (n-1 in the denominator, as
// gonum/stat.StdDev), 0 with fewer than two values.
func (s *sketch) StdDev() float64 {
	if s.n < 2 {
		return 0
	}
	return math.Sqrt(s.m2 / float64(s.n-1))
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1) within the
// bound stated on sketch; 0 when empty.
func (s *sketch) Quantile(q float64) int64 {
	if s.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(s.n)))
	rank = min(max(rank, 1), s.n)
	var seen uint64
	if s.neg != nil {
		for j := len(s.neg.b) - 1; j >= 0; j-- {
			if seen += s.neg.b[j].c; seen >= rank {
				return -s.neg.rep(j)
			}
		}
	}
	for j, k := range s.pos.b {
		if seen += k.c; seen >= rank {
			return s.pos.rep(j)
		}
	}
	return s.max
}

// rep returns the value bucket j of b stands for: its middle, clamped to
// the smallest and largest value the bucket received (a magnitude for the
// negative buckets).
func (b *bucketCounts) rep(j int) int64 {
	lo, w := sketchBucketSpan(b.base + j)
	return min(max(int64(lo+(w-1)/2), b.b[j].lo), b.b[j].hi)
}

// Merge adds every value of o to s.
func (s *sketch) Merge(o *sketch) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	n := float64(s.n + o.n)
	d := o.mean - s.mean
	s.m2 += o.m2 + d*d*float64(s.n)*float64(o.n)/n
	s.mean += d * float64(o.n) / n
	s.n += o.n
	s.pos.merge(&o.pos)
	if o.neg != nil {
		s.negative().merge(o.neg)
	}
}

func (b *bucketCounts) merge(o *bucketCounts) {
	for j, k := range o.b {
		if k.c > 0 {
			b.add(o.base+j, k.c, k.lo, k.hi)
		}
	}
}

// buckets calls fn for every non-empty bucket in ascending value order with
// the bucket's representative value (as Quantile reports it) and count.
func (s *sketch) buckets(fn func(v int64, count uint64)) {
	if s.neg != nil {
		for j := len(s.neg.b) - 1; j >= 0; j-- {
			if c := s.neg.b[j].c; c > 0 {
				fn(-s.neg.rep(j), c)
			}
		}
	}
	for j, k := range s.pos.b {
		if k.c > 0 {
			fn(s.pos.rep(j), k.c)
		}
	}
}
