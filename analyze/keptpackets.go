package analyze

import (
	"errors"
	"fmt"
)

// runTick and Buffer are not streaming: tick times the waits between every
// pair of a port's packets, and buffer matches every sent packet with its
// arrival, so both keep each data packet they read (tick 16 bytes, buffer
// up to about 80 bytes with its matching and occupancy steps). A bound on
// those packets keeps their memory bounded; past it they stop with
// ErrTooManyPackets rather than exhaust memory.
const (
	DefaultMaxPackets = 10_000_000
	MaxPacketsLimit   = 200_000_000
)

// ErrTooManyPackets is returned when a capture holds more data packets
// than the bound on packets kept.
var ErrTooManyPackets = errors.New("more data packets than the bound on packets kept")

// checkMaxPackets checks a bound on packets kept, 0 taking the default.
func checkMaxPackets(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxPackets, nil
	case n < 0 || n > MaxPacketsLimit:
		return 0, fmt.Errorf("bound of %d packets kept: want 1 to %d (0 for the default %d)", n, MaxPacketsLimit, DefaultMaxPackets)
	}
	return n, nil
}
