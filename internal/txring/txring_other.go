//go:build !linux

package txring

import "errors"

// Ring is only implemented on Linux.
type Ring struct{}

// Open fails off Linux.
func Open(string) (*Ring, error) { return nil, errors.New("txring: AF_PACKET needs Linux") }

// Send fails off Linux.
func (*Ring) Send([][]byte, int, float64) (float64, error) {
	return 0, errors.New("txring: AF_PACKET needs Linux")
}

// Close does nothing.
func (*Ring) Close() {}
