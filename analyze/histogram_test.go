package analyze

import "testing"

func TestHistogramModes(t *testing.T) {
	h, err := NewHistogram(HistSpec{Mode: ModeExp, BinNs: 1000, Bins: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{0, 999, 1000, 1999, 2000, 7999, 8000, -1} {
		h.Add(v)
	}
	if want := []int64{0, 1000, 2000, 4000, 8000}; len(h.EdgesNs) != 5 || h.EdgesNs[4] != want[4] || h.EdgesNs[2] != want[2] {
		t.Errorf("exp edges %v", h.EdgesNs)
	}
	if h.Counts[0] != 2 || h.Counts[1] != 2 || h.Counts[2] != 1 || h.Counts[3] != 1 || h.Above != 1 || h.Below != 1 || h.Total() != 8 {
		t.Errorf("exp counts %v below %d above %d", h.Counts, h.Below, h.Above)
	}
	sample := make([]int64, 100)
	for i := range sample {
		sample[i] = 1900 + int64(i%3)*100
	}
	sample[50] = 320_000
	// Twice the 90th percentile (2100) in 20 bins: 210 ns, rounded up to 500.
	spec := HistSpec{}.Resolve(sample, 1)
	if spec.Mode != ModeLinear || spec.BinNs != 500 || spec.Bins != 10 {
		t.Errorf("resolved %+v", spec)
	}
	if spec := (HistSpec{}).Resolve([]int64{2000, 3000, 2000}, 1000); spec.BinNs != 1000 || spec.Bins != 10 {
		t.Errorf("resolved on microsecond data %+v", spec)
	}
	if err := (HistSpec{Mode: "log"}).Validate(1); err == nil {
		t.Error("mode log accepted")
	}
}

// Huge IPDs (a capture spanning decades of stamps) must not overflow the
// bin picking.
func TestResolveHugeValues(t *testing.T) {
	for _, v := range []int64{1 << 62, 4_300_000_000_000_000_000, 99} {
		spec := HistSpec{}.Resolve([]int64{v, v}, 1)
		if _, err := NewHistogram(spec); err != nil {
			t.Errorf("%d: %+v: %v", v, spec, err)
		}
		spec = HistSpec{Mode: ModeExp}.Resolve([]int64{v, v}, 1)
		if _, err := NewHistogram(spec); err != nil {
			t.Errorf("exp %d: %+v: %v", v, spec, err)
		}
	}
	if niceCeil(1<<62) <= 0 || niceCeil(7) != 10 || niceCeil(150) != 200 || niceCeil(100) != 100 {
		t.Error("niceCeil")
	}
}
