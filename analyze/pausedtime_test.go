package analyze

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ibscope/ibscope/internal/testcap"
	"github.com/ibscope/ibscope/protostate"
)

// TestPausedTimeBins: pauses spread over ever longer times widen the bins
// (never past PausedTimeBins), and each bin holds exactly the paused time
// that falls in it at the final width, as counting every pause anew at
// that width finds.
func TestPausedTimeBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pt PausedTime
	var spans []protostate.PauseSpan
	at := int64(1_000_000)
	for range 5000 {
		at += rng.Int64N(5000)
		d := 1 + rng.Int64N(20_000)
		spans = append(spans, protostate.PauseSpan{StartNs: at, EndNs: at + d})
		pt.add(spans[len(spans)-1])
		at += d
		if len(pt.Ns) > PausedTimeBins {
			t.Fatalf("%d bins, want at most %d", len(pt.Ns), PausedTimeBins)
		}
	}
	if pt.WidthNs <= pausedTimeFirstWidthNs || len(pt.Ns) <= PausedTimeBins/2 {
		t.Fatalf("width %d ns, %d bins: want widened bins, more than half of them used", pt.WidthNs, len(pt.Ns))
	}
	want := make([]int64, len(pt.Ns))
	for _, s := range spans {
		for b := range want {
			lo := pt.OriginNs + int64(b)*pt.WidthNs
			want[b] += max(0, min(lo+pt.WidthNs, s.EndNs)-max(lo, s.StartNs))
		}
	}
	for b := range want {
		if pt.Ns[b] != want[b] {
			t.Fatalf("bin %d (of %d ns): %d ns paused, want %d", b, pt.WidthNs, pt.Ns[b], want[b])
		}
	}
}

// TestPFCPausedTimePastListing: with PausedTime the report's bins hold
// every pause's time, also of the pauses past --max-pauses, and the
// running pause; without it there are none.
func TestPFCPausedTimePastListing(t *testing.T) {
	t0 := testcap.BaseNs
	var f []rawFrame
	for i := range 50 { // 50 pauses of 5,120 ns every 10 us, the last still running
		f = append(f, rawFrame{t0 + int64(i)*10_000, pfcFrame(t, 9, map[int]uint16{3: 1000})})
	}
	path := writeFrames(t, f)
	p := findPrio(t, runPFC(t, path, PFCOptions{LinkBitsPerSec: 100e9, MaxIntervals: 5, PausedTime: true}), 9, 3)
	var sum int64
	for _, ns := range p.PausedTime.Ns {
		sum += ns
	}
	if p.IntervalsLeftOut != 45 || p.PausedNs != 50*5120 || sum != p.PausedNs {
		t.Errorf("%d pauses left out of the listing, %d ns paused, %d ns in the bins: want 45, %d and the same", p.IntervalsLeftOut, p.PausedNs, sum, 50*5120)
	}
	if p := findPrio(t, runPFC(t, path, PFCOptions{LinkBitsPerSec: 100e9}), 9, 3); p.PausedTime != nil {
		t.Errorf("bins kept without PausedTime: %+v", p.PausedTime)
	}
}

// TestPausedTimeFarApart: pauses billions of seconds apart (a broken
// timestamp, a rate of 1 bit/s) neither loop nor overflow the bins.
func TestPausedTimeFarApart(t *testing.T) {
	var pt PausedTime
	pt.add(protostate.PauseSpan{StartNs: math.MinInt64 / 2, EndNs: math.MinInt64/2 + 1000})
	pt.add(protostate.PauseSpan{StartNs: math.MaxInt64 - 2000, EndNs: math.MaxInt64})
	if len(pt.Ns) > PausedTimeBins || pt.WidthNs <= 0 || pt.Ns[0] != 1000 {
		t.Errorf("%d bins of %d ns, first %v", len(pt.Ns), pt.WidthNs, pt.Ns[:1])
	}
}
