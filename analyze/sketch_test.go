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
	var s Sketch
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
	var a, b Sketch
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
		lo, w := sketchBucket(sketchIndex(v))
		if v < lo || v >= lo+w || (lo >= 128 && w > lo/64) {
			t.Fatalf("%d in bucket [%d, +%d)", v, lo, w)
		}
	}
}

// Microsecond-stamped IPDs below 65.536 us come out exact.
func TestSketchExactOnUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var s Sketch
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
