package capture

import "testing"

func TestHCAClock(t *testing.T) {
	c, err := newHCAClock(156_250, 0) // 156.25 MHz, ConnectX-4 Lx
	if err != nil {
		t.Fatal(err)
	}
	const epoch = int64(1_700_000_000_000_000_000)
	c.anchor(1_000_000, epoch-100, epoch+100)
	for _, tc := range []struct {
		cycles uint64
		ns     int64
	}{
		{1_000_000, epoch},
		{1_000_000 + 156_250, epoch + 1_000_000},         // 1 ms later
		{1_000_000 - 1, epoch - 6},                       // one cycle (6.4 ns) before, truncated
		{1_000_000 + 156_250_000*3600, epoch + 3600*1e9}, // an hour later, no overflow
		{1_000_000 + 1<<40, epoch + (1<<40)*64/10},       // far ahead
	} {
		if got := c.toNs(tc.cycles); got != tc.ns {
			t.Errorf("cycles %d: %d ns, want %d (off by %d)", tc.cycles, got, tc.ns, got-tc.ns)
		}
	}
	// The counter wraps at 2^64: a value just past the wrap is just after the anchor.
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
	if rawClockCycles(2, 5) != 2_000_000_005 {
		t.Error("raw clock timespec")
	}
}
