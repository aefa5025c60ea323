package analyze

import (
	"math"
	"testing"
)

// TestSolveTick: waits of 100 ns under a 10 ns tick each count 9 whole
// ticks; the solver must find 10 ns from the 9-per-wait total, where the
// plain ratio would say 11.1 ns.
func TestSolveTick(t *testing.T) {
	waits := make([]int64, 1000)
	for i := range waits {
		waits[i] = 100
	}
	delta := uint64(9 * len(waits))
	if got := solveTick(waits, 100.0*1000/float64(delta), delta); math.Abs(got-10) > 1e-6 {
		t.Errorf("solveTick = %g, want 10", got)
	}
	// Waits shorter than the tick add nothing and must not count.
	waits = append(waits, 3, 4, 5)
	if got := solveTick(waits, 11.1, delta); math.Abs(got-10) > 1e-6 {
		t.Errorf("with short waits: solveTick = %g, want 10", got)
	}
}

func TestTimestampStep(t *testing.T) {
	for _, c := range []struct {
		ts   []int64
		want int64
	}{
		{[]int64{1433116800000001000, 1433116800000005000}, 1000},
		{[]int64{1433116800000001000, 1433116800000005001}, 1},
		{[]int64{1433116800000000000}, 1e6},
		{[]int64{1433116800000001230}, 10},
	} {
		var s tsStep
		for _, v := range c.ts {
			s.add(v)
		}
		if s.value() != c.want {
			t.Errorf("step of %v = %d, want %d", c.ts, s.value(), c.want)
		}
	}
}
