package capture

import (
	"fmt"
	"math/bits"
)

// hcaClock converts an RDMA device's free-running clock (the raw completion
// timestamps, in cycles of hca_core_clock) to wall-clock ns. It is anchored
// by pairs (cycles, ns since the epoch) read together, refreshed while the
// capture runs so the host clock's adjustments and the oscillator's drift
// stay small: between anchors the device's nominal frequency is used, so
// packets keep their cycle-exact spacing.
type hcaClock struct {
	kHz       uint64 // device clock frequency in kHz (ibv_device_attr_ex.hca_core_clock)
	mask      uint64 // valid bits of a timestamp (completion_timestamp_mask): the counter wraps past it
	refCycles uint64 // device clock at the anchor, in cycles
	refNs     int64  // wall clock at the anchor, ns since the epoch
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
	return &hcaClock{kHz: kHz, mask: mask}, nil
}

// anchor sets the reference pair: the device clock read between two host
// clock reads beforeNs and afterNs is taken to match their midpoint, so the
// anchor's error is at most half the query's round trip.
func (c *hcaClock) anchor(cycles uint64, beforeNs, afterNs int64) {
	c.refCycles = cycles
	c.refNs = beforeNs + (afterNs-beforeNs)/2
}

// toNs converts a device clock value in cycles to ns since the epoch.
// Values before the anchor convert too: completions polled after an anchor
// may carry earlier timestamps.
func (c *hcaClock) toNs(cycles uint64) int64 {
	// The distance from the anchor, modulo the counter's width: the nearer
	// way round is the right one, ahead or behind.
	d := (cycles - c.refCycles) & c.mask
	neg := d > c.mask/2
	if neg {
		d = (c.refCycles - cycles) & c.mask
	}
	// cycles * 1e6 / kHz, in 128 bits so a long capture cannot overflow.
	hi, lo := bits.Mul64(d, 1_000_000)
	if hi >= c.kHz {
		hi %= c.kHz // more than 2^64 ns away: cannot happen within 584 years
	}
	ns, _ := bits.Div64(hi, lo, c.kHz)
	if neg {
		return c.refNs - int64(ns)
	}
	return c.refNs + int64(ns)
}

// rawClockCycles turns ibv_query_rt_values_ex's raw_clock, a timespec into
// which the providers put the cycle count, into cycles.
func rawClockCycles(sec, nsec int64) uint64 {
	return uint64(sec)*1_000_000_000 + uint64(nsec)
}
