package analyze

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestSketchAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s sketch
	var xs []float64
	var vs []int64
	for range 100000 {
		v := int64(rng.ExpFloat64()*5000) - 100
		s.Add(v)
		vs = append(vs, v)
		xs = append(xs, float64(v))
	}
	slices.Sort(vs)
	for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
		want := vs[int(math.Ceil(q*float64(len(vs))))-1]
		got := s.Quantile(q)
		if math.Abs(float64(got-want)) > math.Abs(float64(want))/128+0.5 {
			t.Errorf("q%v: %d, exact %d", q, got, want)
		}
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	if math.Abs(s.Mean()-mean) > 1e-6*math.Abs(mean) || math.Abs(s.StdDev()-sd) > 1e-6*sd {
		t.Errorf("mean/sd %v/%v, gonum %v/%v", s.Mean(), s.StdDev(), mean, sd)
	}
	if s.Min() != vs[0] || s.Max() != vs[len(vs)-1] || s.Count() != uint64(len(vs)) {
		t.Errorf("min/max/count %d/%d/%d", s.Min(), s.Max(), s.Count())
	}
	// Merging two halves equals adding everything.
	var a, b sketch
	for i, v := range vs {
		if i%2 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	a.Merge(&b)
	if a.Quantile(0.5) != s.Quantile(0.5) || math.Abs(a.StdDev()-sd) > 1e-6*sd {
		t.Errorf("merged p50 %d sd %v, want %d %v", a.Quantile(0.5), a.StdDev(), s.Quantile(0.5), sd)
	}
}

func TestSketchBuckets(t *testing.T) {
	for v := uint64(0); v < 1<<20; v += 7 {
		lo, w := sketchBucketSpan(sketchIndex(v))
		if v < lo || v >= lo+w || (lo >= 128 && w > lo/64) {
			t.Fatalf("%d in bucket [%d, +%d)", v, lo, w)
		}
	}
}

// Microsecond-stamped IPDs below 65.536 us come out exact.
func TestSketchExactOnUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s sketch
	var vs []int64
	for range 10000 {
		v := (rng.Int64N(65) + 1) * 1000
		s.Add(v)
		vs = append(vs, v)
	}
	slices.Sort(vs)
	for _, q := range []float64{0.01, 0.25, 0.5, 0.9, 0.99, 0.999} {
		if got, want := s.Quantile(q), vs[int(math.Ceil(q*float64(len(vs))))-1]; got != want {
			t.Errorf("q%v: %d, want %d", q, got, want)
		}
	}
}

// A bucket whose values are all equal reports that value: back-to-back
// packets at 2074 ns and at twice that come out exact, also merged and
// negative; a bucket of two values reports its middle, or the nearest value
// it received when the middle lies outside them.
func TestSketchExactOneValueBuckets(t *testing.T) {
	var s, neg, mixed sketch
	for i := range 1000 {
		v := int64(2074)
		if i%3 == 0 {
			v = 4148
		}
		s.Add(v)
		neg.Add(-v)
		mixed.Add(4100 + int64(i%2)*50) // 4100 and 4150 share a 64-ns bucket
	}
	if p50, p90 := s.Quantile(0.5), s.Quantile(0.9); p50 != 2074 || p90 != 4148 {
		t.Errorf("p50 %d p90 %d, want 2074 4148", p50, p90)
	}
	if p10, p90 := neg.Quantile(0.1), neg.Quantile(0.9); p10 != -4148 || p90 != -2074 {
		t.Errorf("negative p10 %d p90 %d, want -4148 -2074", p10, p90)
	}
	var m sketch
	m.Merge(&s)
	m.Merge(&s)
	if m.Quantile(0.9) != 4148 {
		t.Errorf("merged p90 %d, want 4148", m.Quantile(0.9))
	}
	if got := mixed.Quantile(0.5); got != 4127 {
		t.Errorf("bucket [4096, 4160) of 4100 and 4150: p50 %d, want its middle 4127", got)
	}
	var high sketch
	for i := range 1000 {
		high.Add(4148 + int64(i%3/2)*7) // 4148 twice as often as 4155
	}
	if got := high.Quantile(0.5); got != 4148 {
		t.Errorf("bucket [4096, 4160) of 4148 and 4155: p50 %d, want 4148 (the middle, 4127, clamped)", got)
	}
}
