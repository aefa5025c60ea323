package decode

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// crcBitwise runs a reflected CRC register c with polynomial poly over
// parts one bit at a time.
func crcBitwise(poly, c uint32, parts ...[]byte) uint32 {
	for _, b := range parts {
		for _, x := range b {
			c ^= uint32(x)
			for range 8 {
				if c&1 != 0 {
					c = c>>1 ^ poly
				} else {
					c >>= 1
				}
			}
		}
	}
	return c
}

// vcrcBitwise is the VCRC straight from its definition: CRC-16, polynomial
// 0x100B (reflected 0xD008), seed 0xFFFF, final XOR 0xFFFF.
func vcrcBitwise(b []byte) uint16 { return uint16(crcBitwise(0xD008, 0xFFFF, b)) ^ 0xFFFF }

// crc32Bitwise is CRC-32 (IEEE): seed and final XOR all 1s.
func crc32Bitwise(parts ...[]byte) uint32 { return ^crcBitwise(0xEDB88320, ^uint32(0), parts...) }

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

// foldWidths runs test once with crcFold taking one block per
// multiplication and, where the CPU has VPCLMULQDQ, once taking two.
func foldWidths(t *testing.T, test func(t *testing.T)) {
	wide := foldWide
	defer func() { foldWide = wide }()
	for _, w := range []bool{false, true} {
		if w && !wide {
			continue
		}
		foldWide = w
		t.Run(fmt.Sprintf("wide=%v", w), test)
	}
}

// TestVCRCLong checks VCRC and the table-only path against the bitwise one on
// random data of every length up to 600 bytes and a few long ones, at every
// alignment of the first byte, covering the folding path (64 bytes on, with
// 0 to 15 bytes left over) as well as the tables.
func TestVCRCLong(t *testing.T) { foldWidths(t, testVCRCLong) }

func testVCRCLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096+16)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lengths := []int{1023, 1024, 1025, 2047, 2060, 4096}
	for n := range 601 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, align := range []int{0, 1, 3, 8, 15} {
			b := buf[align : align+n]
			want := vcrcBitwise(b)
			if got := VCRC(b); got != want {
				t.Fatalf("%d bytes at +%d: VCRC 0x%04x, bitwise 0x%04x", n, align, got, want)
			}
			if got := vcrcTableUpdate(0xFFFF, b) ^ 0xFFFF; got != want {
				t.Fatalf("%d bytes at +%d: table VCRC 0x%04x, bitwise 0x%04x", n, align, got, want)
			}
		}
	}
}

// TestICRCFinish checks both ways of finishing the ICRC (carry-less folding
// where the CPU has it, and hash/crc32) against the bitwise CRC, for every
// prefix length the builders make and every length of the rest up to 400
// bytes, at several alignments.
func TestICRCFinish(t *testing.T) { foldWidths(t, testICRCFinish) }

func testICRCFinish(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 512)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, n := range []int{20, 28, 36, 48, 52, 60, 68, 88} {
		for k := 0; k <= 400; k++ {
			for _, align := range []int{0, 5} {
				prefix, rest := data[:n], data[100+align:100+align+k]
				want := crc32Bitwise(prefix, rest)
				var b icrcBuf
				s := -(n + k) & 15
				if !useFold {
					s = 0
				}
				copy(b[s:], prefix)
				if got := b.finish(s, s+n, rest); got != want {
					t.Fatalf("prefix %d, rest %d at +%d: finish 0x%08x, bitwise 0x%08x", n, k, align, got, want)
				}
				copy(b[:], prefix)
				if got := b.crc32(n, rest); got != want {
					t.Fatalf("prefix %d, rest %d at +%d: hash/crc32 0x%08x, bitwise 0x%08x", n, k, align, got, want)
				}
			}
		}
	}
}

// TestICRCRoCEv2IPv4 checks the IPv4 path of the RoCEv2 ICRC (no IP
// options: the prefix in whole blocks, the rest read in place) against the
// general one and the bitwise CRC over the masked packet, for every length
// of the rest up to 400 bytes, at several alignments, with the variant
// fields random.
func TestICRCRoCEv2IPv4(t *testing.T) {
	if !useFoldIPv4 {
		t.Skip("no carry-less multiply and PSHUFB: the IPv4 path is not taken")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 512)
	for k := 0; k <= 400; k++ {
		for _, align := range []int{0, 3, 8} {
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			data[align] = 0x45
			msg := data[align : align+ipUDPBTHLen+k]
			masked := append([]byte(nil), msg...)
			masked[1], masked[8], masked[10], masked[11] = 0xFF, 0xFF, 0xFF, 0xFF // TOS, TTL, checksum
			masked[26], masked[27] = 0xFF, 0xFF                                   // UDP checksum
			masked[28+4] = 0xFF                                                   // BTH resv8a
			want := crc32Bitwise(pseudoLRH[:], masked)
			if got := roceV2IPv4(msg); got != want {
				t.Fatalf("rest %d at +%d: roceV2IPv4 0x%08x, bitwise 0x%08x", k, align, got, want)
			}
			if got := ICRCRoCEv2(msg[:20], msg[20:]); got != want {
				t.Fatalf("rest %d at +%d: ICRCRoCEv2 0x%08x, bitwise 0x%08x", k, align, got, want)
			}
		}
	}
}
