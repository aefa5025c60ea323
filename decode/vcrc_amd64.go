//go:build !purego

package decode

// vcrcFold is in vcrc_amd64.s.
//
//go:noescape
func vcrcFold(crc uint32, p []byte) (lo, hi uint64)

func hasPCLMULQDQ() bool

var useVCRCFold = hasPCLMULQDQ()

// vcrcMinFold is the length from which VCRC folds with PCLMULQDQ.
const vcrcMinFold = 64

// vcrcUpdate runs the VCRC register c over b, folding 16 bytes at a time
// with carry-less multiplication when the CPU has it.
func vcrcUpdate(c uint16, b []byte) uint16 {
	if len(b) >= vcrcMinFold && useVCRCFold {
		n := len(b) &^ 15
		lo, hi := vcrcFold(uint32(c), b[:n])
		c = vcrcTable16(0, lo, hi)
		b = b[n:]
	}
	return vcrcTableUpdate(c, b)
}
