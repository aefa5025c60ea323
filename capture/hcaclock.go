package capture

import (
	"fmt"
	"math/bits"
)

// hcaClock converts an RDMA device's free-running clock (the raw completion
// timestamps, in cycles of hca_core_clock) to wall-clock ns.
//
// Between anchors it runs at the device's nominal frequency, exactly: the
// reference is kept as whole ns plus a remainder in 1/kHz ns, so moving it
// loses nothing and every packet gets floor(its exact time), cycle-exact
// relative to every other.
//
// An anchor is a device clock read between two host clock reads: the true
// time of the read lies between them. The first anchor takes their
// midpoint. Each one bounds the error of the conversion (the true time
// minus the predicted one), and the bounds of the anchors since the last
// correction are intersected: while they agree, the error is constant and
// within all of them, so nothing moves, and re-anchoring never carries a
// query's jitter into the timestamps. When they stop agreeing (the
// oscillator drifted from the host by more than the queries' uncertainty,
// or the host clock was stepped), the conversion moves by the least that
// puts the latest prediction inside its query, and the bounds start again
// from that query.
type hcaClock struct {
	kHz      uint64 // device clock frequency in kHz (ibv_device_attr_ex.hca_core_clock)
	inv      uint64 // floor(2^64 / kHz), 0 for 1 kHz: see div
	mask     uint64 // valid bits of a timestamp (completion_timestamp_mask): the counter wraps past it
	anchored bool

	// The reference: device clock refCycles is at refNs + refFrac/kHz ns
	// since the epoch, with refFrac in [0, kHz).
	refCycles uint64
	refNs     int64
	refFrac   uint64

	// The bounds on the conversion's error (true minus predicted ns) that
	// the anchors since the last correction agree on.
	errLo, errHi int64

	corrections uint64 // anchors that moved the timestamps
}

// newHCAClock makes a converter for a clock of kHz whose timestamps have
// the bits of mask (0 means all 64).
func newHCAClock(kHz, mask uint64) (*hcaClock, error) {
	if kHz == 0 {
		return nil, fmt.Errorf("device reports a 0 kHz core clock: completion timestamps cannot be converted")
	}
	if mask == 0 {
		mask = ^uint64(0)
	}
	c := &hcaClock{kHz: kHz, mask: mask}
	if kHz > 1 {
		c.inv, _ = bits.Div64(1, 0, kHz)
	}
	return c, nil
}

// anchor takes a device clock read, cycles, made between host clock reads
// beforeNs and afterNs (ns since the epoch); see hcaClock. It returns by
// how many ns it moved the timestamps (0 when the prediction held).
func (c *hcaClock) anchor(cycles uint64, beforeNs, afterNs int64) int64 {
	if afterNs < beforeNs {
		beforeNs, afterNs = afterNs, beforeNs // the host clock stepped back between the reads
	}
	if !c.anchored {
		mid := beforeNs + (afterNs-beforeNs)/2
		c.refCycles, c.refNs, c.refFrac, c.anchored = cycles&c.mask, mid, 0, true
		c.errLo, c.errHi = beforeNs-mid, afterNs-mid
		return 0
	}
	// Move the reference to this read along the nominal frequency: no
	// timestamp changes, and later ones stay near the reference however
	// long the capture (the counter wraps).
	c.refNs, c.refFrac = c.at(cycles)
	c.refCycles = cycles & c.mask
	// The true time is in [before, after]; the predicted one in
	// [refNs, refNs+1).
	lo, hi := beforeNs-c.refNs-1, afterNs-c.refNs
	if max(lo, c.errLo) <= min(hi, c.errHi) {
		c.errLo, c.errHi = max(lo, c.errLo), min(hi, c.errHi)
		return 0
	}
	var moved int64
	switch {
	case lo >= 0:
		moved = lo + 1 // the prediction to beforeNs
	case hi < 0:
		moved = hi
	}
	c.refNs += moved
	c.errLo, c.errHi = lo-moved, hi-moved
	if moved != 0 {
		c.corrections++
	}
	return moved
}

// toNs converts a device clock value in cycles to ns since the epoch,
// rounded down. Values before the reference convert too: completions
// polled after an anchor may carry earlier timestamps.
func (c *hcaClock) toNs(cycles uint64) int64 {
	ns, _ := c.at(cycles)
	return ns
}

// at is the time of cycles as whole ns (rounded down) and the remainder in
// 1/kHz ns. A cycle lasts 1e6/kHz ns, so the time from the reference is
// d*1e6 + refFrac in 1/kHz ns, computed in 128 bits.
func (c *hcaClock) at(cycles uint64) (int64, uint64) {
	// The distance from the reference, modulo the counter's width: the
	// nearer way round is the right one, ahead or behind.
	d := (cycles - c.refCycles) & c.mask
	if d <= c.mask/2 {
		hi, lo := bits.Mul64(d, 1_000_000)
		var carry uint64
		lo, carry = bits.Add64(lo, c.refFrac, 0)
		q, r := c.div(hi+carry, lo)
		return c.refNs + int64(q), r
	}
	d = (c.refCycles - cycles) & c.mask
	hi, lo := bits.Mul64(d, 1_000_000)
	if hi == 0 && lo <= c.refFrac {
		// Within the reference's ns.
		return c.refNs, c.refFrac - lo
	}
	var borrow uint64
	lo, borrow = bits.Sub64(lo, c.refFrac, 0)
	q, r := c.div(hi-borrow, lo)
	if r == 0 {
		return c.refNs - int64(q), 0
	}
	return c.refNs - int64(q) - 1, c.kHz - r
}

// div divides a 128-bit count of 1/kHz ns by kHz. A count that fits in 64
// bits, every packet's within 5 hours of the reference at 1 GHz, divides
// by a multiplication: by floor(2^64/kHz), which gives the quotient or one
// less, then a correction by the remainder.
func (c *hcaClock) div(hi, lo uint64) (uint64, uint64) {
	if hi == 0 && c.inv != 0 {
		q, _ := bits.Mul64(lo, c.inv)
		r := lo - q*c.kHz
		if r >= c.kHz {
			q, r = q+1, r-c.kHz
		}
		return q, r
	}
	if hi >= c.kHz {
		hi %= c.kHz // more than 2^64 ns away: cannot happen within 584 years
	}
	return bits.Div64(hi, lo, c.kHz)
}
