package decode

import (
	"math/bits"
	"unsafe"
)

// Carry-less folding (Intel's "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ", in the bit-reflected form hash/crc32 and Linux use),
// for both CRCs on amd64: crcFold sums 16-byte blocks, each multiplied by
// x^(128·j) mod P for the j blocks after it, into one 16-byte block that
// leaves the same CRC register; ieeeReduce (ICRC) or the slicing tables
// (VCRC) finish it. A 32-bit CRC with polynomial x^16·(x^16+x^12+x^3+x+1)
// keeps the VCRC in its low 16 bits, so the VCRC folds like a CRC-32.
//
// Messages are folded whole blocks at a time: the bytes in front of the last
// multiple of 16 go into a head block with zeros in front of them, which a
// CRC from a zero register does not see, and the seed is XORed into the
// message's first bytes, after which the register starts at zero.

// foldBlocks is how many blocks crcFold multiplies independently before it
// carries the sum on.
const foldBlocks = 16

// foldTable holds, for j blocks, the constants ((x^(128j+32) mod P)' << 1,
// (x^(128j-32) mod P)' << 1), where ' is 32-bit bit reversal (hash/crc32's
// r2r1 are j = 4, its r4r3 j = 1).
// desc holds k[foldBlocks] down to k[1], so that the constants of two
// neighbouring blocks (j and j-1 blocks from the end) sit side by side.
type foldTable struct {
	k    [foldBlocks + 1][2]uint64
	desc [foldBlocks][2]uint64
}

// foldDescOff is the offset of desc in a foldTable, for the assembly.
const foldDescOff = (foldBlocks + 1) * 16

// The build fails if foldDescOff is not where desc is.
var _ [foldDescOff - unsafe.Offsetof(foldTable{}.desc)]struct{}
var _ [unsafe.Offsetof(foldTable{}.desc) - foldDescOff]struct{}

var (
	ieeeFold = makeFoldTable(0x1_04C1_1DB7)
	vcrcFold = makeFoldTable(0x1_100B_0000)
)

// makeFoldTable computes the constants in one walk through the powers of x
// up to the largest (x^(128·foldBlocks+32)): computing each from x^0 again
// took 34 times as many steps, a third of a millisecond of every command's
// start.
func makeFoldTable(poly uint64) (t foldTable) {
	r := uint64(1) // x^k mod poly
	for k := 1; k <= 128*foldBlocks+32; k++ {
		r <<= 1
		if r&(1<<32) != 0 {
			r ^= poly
		}
		if k > 32 && (k-32)%128 == 0 { // k = 128j+32, j from 1 to foldBlocks
			t.k[(k-32)/128][0] = foldConst(r)
		}
		if (k+32)%128 == 0 { // k = 128j-32, j from 1 to foldBlocks
			t.k[(k+32)/128][1] = foldConst(r)
		}
	}
	for j := 1; j <= foldBlocks; j++ {
		t.desc[foldBlocks-j] = t.k[j]
	}
	return t
}

// foldConst returns r' << 1, r being x^k mod P for a 33-bit P.
func foldConst(r uint64) uint64 { return uint64(bits.Reverse32(uint32(r))) << 1 }

// vcrcFoldMin is the length from which VCRC folds.
const vcrcFoldMin = 64

// vcrcUpdate runs the VCRC register c over b.
func vcrcUpdate(c uint16, b []byte) uint16 {
	if !useFold || len(b) < vcrcFoldMin {
		return vcrcTableUpdate(c, b)
	}
	r := len(b) % 16
	if r < 2 {
		r += 16 // the seed goes into the head
	}
	var head [32]byte
	copy(head[32-r:], b[:r])
	head[32-r] ^= byte(c)
	head[33-r] ^= byte(c >> 8)
	return vcrcTable16(crcFold(&vcrcFold, head[:], b[r:]))
}
