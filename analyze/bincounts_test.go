package analyze

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// binCounts, sparse or dense, counts exactly what a Histogram of the same
// bins counts, whatever the values (below, inside, above the bins).
func TestBinCountsMatchHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spec := range []HistSpec{
		{Mode: ModeLinear, BinNs: 100, Bins: 10},
		{Mode: ModeLinear, BinNs: 1, Bins: 1},
		{Mode: ModeExp, BinNs: 64, Bins: 12},
		{Mode: ModeEdges, EdgesNs: []int64{50, 60, 1000, 5000}},
	} {
		proto, err := NewHistogram(spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 2, 5, 30, 3000} {
			want := proto.Empty()
			var c binCounts
			for range n {
				v := rng.Int64N(3 * proto.EdgesNs[len(proto.EdgesNs)-1])
				want.Add(v)
				c.add(proto.slot(v), proto.slots())
			}
			got := proto.Empty()
			c.fill(got)
			if !slices.Equal(got.Counts, want.Counts) || got.Below != want.Below || got.Above != want.Above {
				t.Errorf("%+v, %d values (dense %v): counts %v below %d above %d, want %v %d %d",
					spec, n, c.dense, got.Counts, got.Below, got.Above, want.Counts, want.Below, want.Above)
			}
			if len(c.c) > proto.slots() {
				t.Errorf("%+v, %d values: %d words for %d slots", spec, n, len(c.c), proto.slots())
			}
		}
	}
}
