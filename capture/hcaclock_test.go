package capture

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

func TestHCAClock(t *testing.T) {
	const epoch = int64(1_700_000_000_000_000_000)
	c, err := newHCAClock(156_250, 0) // 156.25 MHz, ConnectX-4 Lx
	if err != nil {
		t.Fatal(err)
	}
	c.anchor(1_000_000, epoch-100, epoch+100)
	for _, tc := range []struct {
		cycles uint64
		ns     int64
	}{
		{1_000_000, epoch},
		{1_000_000 + 156_250, epoch + 1_000_000},         // 1 ms later
		{1_000_000 - 1, epoch - 7},                       // one cycle (6.4 ns) before, rounded down
		{1_000_000 + 156_250_000*3600, epoch + 3600*1e9}, // an hour later, no overflow
		{1_000_000 + 1<<40, epoch + (1<<40)*64/10},       // far ahead
	} {
		if got := c.toNs(tc.cycles); got != tc.ns {
			t.Errorf("cycles %d: %d ns, want %d (off by %d)", tc.cycles, got, tc.ns, got-tc.ns)
		}
	}
	// The counter wraps at 2^64: a value just past the wrap is just after the anchor.
	c, _ = newHCAClock(156_250, 0)
	c.anchor(^uint64(0), epoch, epoch)
	if got := c.toNs(156_249); got != epoch+1_000_000 {
		t.Errorf("across the wrap: %d, want %d", got, epoch+1_000_000)
	}
	// A 48-bit counter wraps at 2^48.
	c48, _ := newHCAClock(156_250, 1<<48-1)
	c48.anchor(1<<48-10, epoch, epoch)
	if got := c48.toNs(156_240); got != epoch+1_000_000 {
		t.Errorf("across a 48-bit wrap: %d, want %d", got, epoch+1_000_000)
	}
	if got := c48.toNs(1<<48 - 20); got != epoch-64 {
		t.Errorf("behind the anchor, 48-bit: %d, want %d", got, epoch-64)
	}
	if _, err := newHCAClock(0, 0); err == nil {
		t.Error("0 kHz accepted")
	}
}

// clockSim is a device clock of kHz, cycle c at exactly
// t0 + c*1e6/kHz * (1+driftPPM/1e6) ns, read by anchors whose host reads
// fall up to jitterNs either side of the device read.
type clockSim struct {
	kHz      uint64
	t0       int64
	driftPPM int64
}

// truth is the exact time of cycle n (counted from the start, unwrapped),
// as a rational.
func (s clockSim) truth(n uint64) *big.Rat {
	r := new(big.Rat).SetFrac(new(big.Int).Mul(new(big.Int).SetUint64(n), big.NewInt(1_000_000)), new(big.Int).SetUint64(s.kHz))
	r.Mul(r, big.NewRat(1_000_000+s.driftPPM, 1_000_000))
	return r.Add(r, new(big.Rat).SetInt64(s.t0))
}

func ratNs(r *big.Rat) int64 {
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncation: the times here are positive
	return q.Int64()
}

// Re-anchoring every second with a jittery query does not move the
// timestamps of a device clock at its nominal frequency: across a 48-bit
// wrap, every packet is within 1 ns of the truth relative to the first,
// and within the first query's round trip absolutely.
func TestHCAClockReanchorKeepsCycleExact(t *testing.T) {
	const mask = 1<<48 - 1
	for _, kHz := range []uint64{156_250, 250_001, 1_000_003} {
		s := clockSim{kHz: kHz, t0: 1_700_000_000_000_000_000}
		start := uint64(mask) - 3*kHz*1000 // 3 s before the counter wraps
		rng := rand.New(rand.NewPCG(1, kHz))
		c, _ := newHCAClock(kHz, mask)
		anchorAt := func(n uint64) int64 {
			tr := ratNs(s.truth(n))
			before, after := tr-rng.Int64N(2000), tr+1+rng.Int64N(2000)
			c.anchor((start+n)&mask, before, after)
			return after - before
		}
		rt := anchorAt(0)
		var first int64
		var firstTruth *big.Rat
		for sec := uint64(0); sec < 10; sec++ {
			if sec > 0 {
				anchorAt(sec * kHz * 1000)
			}
			for i := uint64(0); i < 1000; i++ {
				n := sec*kHz*1000 + i*kHz*1000/1000 + rng.Uint64N(997) // a packet every ~1 ms, odd cycle counts
				got := c.toNs((start + n) & mask)
				tr := s.truth(n)
				if firstTruth == nil {
					first, firstTruth = got, tr
				}
				rel := new(big.Rat).Sub(tr, firstTruth)
				relErr := new(big.Rat).Sub(new(big.Rat).SetInt64(got-first), rel)
				if f, _ := relErr.Float64(); f > 1 || f < -1 {
					t.Fatalf("%d kHz, second %d: %d ns from the first packet, truth %s (off %.3f ns)", kHz, sec, got-first, rel.FloatString(3), f)
				}
				if abs := got - ratNs(tr); abs > rt || abs < -rt {
					t.Fatalf("%d kHz, second %d: %d ns from the truth, beyond the first query's %d ns round trip", kHz, sec, abs, rt)
				}
			}
		}
		if c.corrections != 0 {
			t.Errorf("%d kHz: %d corrections of a clock at its nominal frequency", kHz, c.corrections)
		}
	}
}

// A device clock 20 ppm off is corrected at each anchor once the anchors
// disagree, by the least that puts the prediction inside the query: right
// after an anchor it is within the query's round trip.
func TestHCAClockReanchorCorrectsDrift(t *testing.T) {
	s := clockSim{kHz: 156_250, t0: 1_700_000_000_000_000_000, driftPPM: 20}
	c, _ := newHCAClock(s.kHz, 1<<48-1)
	for sec := uint64(0); sec <= 10; sec++ {
		n := sec * s.kHz * 1000
		tr := ratNs(s.truth(n))
		before, after := tr-500, tr+500
		moved := c.anchor(n, before, after)
		if sec > 0 && (moved < 19_000 || moved > 21_000) {
			t.Errorf("second %d: moved %d ns, want about the 20 µs drifted", sec, moved)
		}
		if got := c.toNs(n); got < before || got > after {
			t.Errorf("second %d: %d ns outside the query [%d, %d]", sec, got, before, after)
		}
	}
	if c.corrections != 10 {
		t.Errorf("%d corrections, want 10", c.corrections)
	}
	// A host clock stepped back by a second is followed.
	n := 11 * s.kHz * 1000
	tr := ratNs(s.truth(n)) - 1e9
	c.anchor(n, tr-500, tr+500)
	if got := c.toNs(n); got < tr-500 || got > tr+500 {
		t.Errorf("after a host clock step: %d, want within 500 ns of %d", got, tr)
	}
}

// Converting backwards and forwards from a reference with a fraction of a
// ns is consistent: the time of every cycle is floor(its exact time).
func TestHCAClockFloorAroundReference(t *testing.T) {
	const kHz = 250_001 // a cycle is 3.99998... ns
	s := clockSim{kHz: kHz, t0: 1_000_000_000}
	c, _ := newHCAClock(kHz, 0)
	c.anchor(1000, s.t0, s.t0)
	// Move the reference to a cycle whose time has a fraction.
	c.anchor(1000+12345, ratNs(s.truth(12345)), ratNs(s.truth(12345))+1)
	for n := uint64(0); n < 30000; n += 7 {
		want := ratNs(s.truth(n))
		if got := c.toNs(1000 + n); got != want {
			t.Fatalf("cycle %d: %d, want %d", n, got, want)
		}
	}
}

// The conversion by multiplication (counts below 2^64) gives the quotient
// and remainder of the exact division, ahead of the reference and behind
// it, near it and far from it, for clocks from 2 kHz to 4 THz and every
// remainder the reference may carry.
func TestHCAClockMultiplyIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, kHz := range []uint64{2, 3, 156_250, 250_001, 1_000_003, 1 << 32, 4_000_000_007} {
		c, _ := newHCAClock(kHz, 0)
		bk := new(big.Int).SetUint64(kHz)
		for i := range 20000 {
			d := rng.Uint64N(1 << (10 + i%36)) // up to 2^45 cycles: past 2^64/1e6, where the count leaves 64 bits
			if i%2 == 1 {
				d = -d // behind the reference
			}
			c.refCycles, c.refNs, c.refFrac = rng.Uint64(), 1e18, rng.Uint64N(kHz)
			gotNs, gotFrac := c.at(c.refCycles + d)
			// refNs*kHz + refFrac + d*1e6, in 1/kHz ns, d signed.
			n := new(big.Int).Mul(big.NewInt(1e18), bk)
			n.Add(n, new(big.Int).SetUint64(c.refFrac))
			n.Add(n, new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(1_000_000)))
			q, r := new(big.Int).DivMod(n, bk, new(big.Int))
			if gotNs != q.Int64() || gotFrac != r.Uint64() {
				t.Fatalf("%d kHz, %d cycles from the reference + %d: %d ns + %d, want %s + %s", kHz, int64(d), c.refFrac, gotNs, gotFrac, q, r)
			}
		}
	}
}
