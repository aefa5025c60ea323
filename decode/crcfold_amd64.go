//go:build !purego

package decode

// crcFold and ieeeReduce are in crcfold_amd64.s.
//
//go:noescape
func crcFold(k *foldTable, a, b []byte) (lo, hi uint64)

func ieeeReduce(lo, hi uint64) uint32

// icrcIPv4 is in crcfold_amd64.s: the CRC register of a RoCEv2 ICRC
// message over IPv4 without options, msg being the IP header through the
// byte before the ICRC (at least 40 bytes).
//
//go:noescape
func icrcIPv4(k *foldTable, msg []byte) uint32

func hasPCLMULQDQ() bool

func cpuid(leaf, sub uint32) (a, b, c, d uint32)

func xgetbv0() uint32

var useFold = hasPCLMULQDQ()

// useFoldIPv4 says icrcIPv4 may run: it needs SSSE3's PSHUFB too.
var useFoldIPv4 = useFold && hasSSSE3()

func hasSSSE3() bool {
	_, _, c, _ := cpuid(1, 0)
	return c&(1<<9) != 0
}

// foldWide says crcFold may multiply two blocks at a time with the 256-bit
// VPCLMULQDQ: the CPU has it and AVX2, and the OS saves the YMM registers.
var foldWide = useFold && hasVPCLMULQDQ()

func hasVPCLMULQDQ() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c1&osxsave == 0 || c1&avx == 0 || xgetbv0()&6 != 6 {
		return false
	}
	_, b7, c7, _ := cpuid(7, 0)
	const avx2, vpclmulqdq = 1 << 5, 1 << 10
	return b7&avx2 != 0 && c7&vpclmulqdq != 0
}
