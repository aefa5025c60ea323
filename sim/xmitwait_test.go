package sim

import "testing"

// TestXmitWaitSlots: only ticks wholly inside a wait count (IBA: no data
// sent during the entire tick).
func TestXmitWaitSlots(t *testing.T) {
	x := xmitWait{tickPs: 4000, phasePs: 1000, startPs: -1, mergeGapPs: 10000}
	for _, c := range []struct {
		a, b int64
		want uint64
	}{
		{1000, 5000, 1},   // exactly one tick
		{1001, 5000, 0},   // starts inside the tick
		{0, 9000, 2},      // ticks [1000,5000) and [5000,9000)
		{-7000, -3000, 1}, // negative times: [-7000,-3000)
		{2000, 4000, 0},
	} {
		if got := x.slots(c.a, c.b); got != c.want {
			t.Errorf("slots(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	x.start(1000)
	if got := x.counter(9000); got != 2 {
		t.Errorf("open wait counter = %d, want 2", got)
	}
	x.stop(9000)
	x.start(15000) // within the merge gap: same episode
	x.stop(21000)  // ticks [17000,21000)
	if x.ticks != 3 || x.waitPs != 14000 || x.intervals != 2 || len(x.episodes) != 1 || x.episodes[0].ticks != 3 {
		t.Errorf("after two waits: %+v", x)
	}
	x.start(40000)
	x.stop(45000)
	if len(x.episodes) != 2 {
		t.Errorf("a wait past the merge gap should open a new episode: %+v", x.episodes)
	}
}
