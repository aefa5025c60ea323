package decode

import "testing"

// vcrcBitwise is the VCRC computed one bit at a time, straight from its
// definition: CRC-16, polynomial 0x100B (reflected 0xD008), seed 0xFFFF,
// final XOR 0xFFFF.
func vcrcBitwise(b []byte) uint16 {
	c := uint16(0xFFFF)
	for _, x := range b {
		c ^= uint16(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
	}
	return c ^ 0xFFFF
}

// TestVCRCSlicing checks the table-driven VCRC against the bitwise one for
// every length up to 200 bytes, covering each path through its loops.
func TestVCRCSlicing(t *testing.T) {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	for n := 0; n <= len(b); n++ {
		if got, want := VCRC(b[:n]), vcrcBitwise(b[:n]); got != want {
			t.Errorf("%d bytes: VCRC 0x%04x, bitwise 0x%04x", n, got, want)
		}
	}
}
