//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// IEEE_REDUCE leaves in AX the CRC-32 (IEEE) register, from zero, after
// the 16-byte block in X1 (the end of hash/crc32's ieeeCLMUL). It uses
// X0-X3.
#define IEEE_REDUCE \
	MOVOU ieeeK4<>+0(SB), X0; \
	PCMPEQB X3, X3; \
	PCLMULQDQ $1, X1, X0; \
	PSRLDQ $8, X1; \
	PXOR X0, X1; \
	MOVOA X1, X2; \
	MOVQ ieeeR5<>+0(SB), X0; \
	PSRLQ $32, X3; \
	PSRLDQ $4, X2; \
	PAND X3, X1; \
	PCLMULQDQ $0, X0, X1; \
	PXOR X2, X1; \
	MOVOU ieeePoly<>+0(SB), X0; \
	MOVOA X1, X2; \
	PAND X3, X1; \
	PCLMULQDQ $0x10, X0, X1; \
	PAND X3, X1; \
	PCLMULQDQ $0, X0, X1; \
	PXOR X2, X1; \
	MOVQ X1, AX; \
	SHRQ $32, AX

// func crcFold(k *foldTable, a, b []byte) (lo, hi uint64)
//
// len(a) and len(b) must be multiples of 16. The result is a 16-byte block
// whose CRC from a zero register is that of a followed by b. Each block of a
// chunk of up to foldBlocks is multiplied by the constants that carry it to
// the chunk's end (k[j] for j blocks), so the multiplications are
// independent; only the XORs into the sum chain, and the sum is carried over
// each chunk.
TEXT ·crcFold(SB), NOSPLIT, $0
	MOVQ  k+0(FP), DI
	PXOR  X1, X1
	MOVQ  a_base+8(FP), SI
	MOVQ  a_len+16(FP), CX
	SHRQ  $4, CX // blocks left in a
	MOVQ  b_base+32(FP), R8
	MOVQ  b_len+40(FP), R9
	SHRQ  $4, R9 // blocks of b, to do after a

chunk:
	TESTQ CX, CX
	JNZ   more
	TESTQ R9, R9
	JZ    done
	MOVQ  R8, SI // a done: go on with b
	MOVQ  R9, CX
	XORQ  R9, R9

more:
	MOVQ CX, BX
	CMPQ BX, $const_foldBlocks
	JBE  sized
	MOVQ $const_foldBlocks, BX

sized:
	SUBQ BX, CX
	MOVQ BX, DX
	SHLQ $4, DX
	ADDQ DI, DX // &k[BX]

	// Carry the sum so far over the chunk.
	MOVOU     (DX), X3
	MOVOA     X1, X4
	PCLMULQDQ $0x00, X3, X1
	PCLMULQDQ $0x11, X3, X4
	PXOR      X4, X1

	DECQ BX // blocks before the chunk's last
	JZ   last
	CMPB ·foldWide(SB), $1
	JNE  block

	// Two blocks per multiplication, their constants side by side in desc.
	MOVQ    $const_foldBlocks, R10
	SUBQ    BX, R10
	SHLQ    $4, R10
	LEAQ    const_foldDescOff(DI)(R10*1), R10 // &desc[foldBlocks-BX] = &k[BX]
	VPXOR   Y5, Y5, Y5

pair:
	CMPQ       BX, $2
	JB         pairsDone
	VMOVDQU    (SI), Y2
	VMOVDQU    (R10), Y3
	VPCLMULQDQ $0x00, Y3, Y2, Y4
	VPCLMULQDQ $0x11, Y3, Y2, Y2
	VPXOR      Y4, Y2, Y2
	VPXOR      Y2, Y5, Y5
	ADDQ       $32, SI
	ADDQ       $32, R10
	SUBQ       $2, BX
	JMP        pair

pairsDone:
	VEXTRACTI128 $1, Y5, X4
	VPXOR        X4, X5, X5
	VZEROUPPER
	PXOR         X5, X1
	TESTQ        BX, BX
	JZ           last
	MOVQ         DI, DX
	ADDQ         $32, DX // the one block left is at distance 1: k[1] after SUBQ

block:
	SUBQ      $16, DX
	MOVOU     (SI), X2
	MOVOU     (DX), X3
	MOVOA     X2, X4
	PCLMULQDQ $0x00, X3, X2
	PCLMULQDQ $0x11, X3, X4
	PXOR      X4, X2
	PXOR      X2, X1
	ADDQ      $16, SI
	DECQ      BX
	JNZ       block

last:
	MOVOU (SI), X2
	ADDQ  $16, SI
	PXOR  X2, X1
	JMP   chunk

done:
	MOVQ   X1, lo+56(FP)
	PSRLDQ $8, X1
	MOVQ   X1, hi+64(FP)
	RET

// Barrett reduction constants for the IEEE polynomial, as in hash/crc32
// (from the Linux kernel): x^96 mod P folded as below, x^64 mod P, P and
// floor(x^64/P), all bit-reflected and shifted left by one.
DATA ieeeK4<>+0(SB)/8, $0x1751997d0
DATA ieeeK4<>+8(SB)/8, $0x0ccaa009e
DATA ieeeR5<>+0(SB)/8, $0x163cd6124
DATA ieeePoly<>+0(SB)/8, $0x1db710641
DATA ieeePoly<>+8(SB)/8, $0x1f7011641
GLOBL ieeeK4<>(SB), RODATA, $16
GLOBL ieeeR5<>(SB), RODATA, $8
GLOBL ieeePoly<>(SB), RODATA, $16

// func ieeeReduce(lo, hi uint64) uint32
//
// The CRC-32 (IEEE) register, from zero, after the 16 bytes (lo, hi): the
// end of hash/crc32's ieeeCLMUL.
TEXT ·ieeeReduce(SB), NOSPLIT, $0
	MOVQ       lo+0(FP), X1
	MOVQ       hi+8(FP), X2
	PUNPCKLQDQ X2, X1
	IEEE_REDUCE
	MOVL AX, ret+16(FP)
	RET

// func cpuid(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv0() uint32
TEXT ·xgetbv0(SB), NOSPLIT, $0
	XORL   CX, CX
	XGETBV
	MOVL   AX, ret+0(FP)
	RET

// func hasPCLMULQDQ() bool
TEXT ·hasPCLMULQDQ(SB), NOSPLIT, $0
	MOVL  $1, AX
	XORL  CX, CX
	CPUID
	SHRL  $1, CX
	ANDL  $1, CX
	MOVB  CX, ret+0(FP)
	RET

// The RoCEv2 ICRC over IPv4 without options (icrcIPv4): the OR masks of the
// three blocks of the masked prefix (pseudo-LRH and the IP header's first
// 8 bytes, the seed XORed into the first four; then IP bytes 8-19 and the
// UDP header's first 4; then UDP bytes 4-7 and the BTH), the PSHUFB
// controls that split the last block around the tail, and the tail's mask.
DATA v4pre0<>+0(SB)/8, $0xffffffff00000000 // seeded pseudo-LRH
DATA v4pre0<>+8(SB)/8, $0x000000000000ff00 // IP byte 1: TOS
DATA v4pre1<>+0(SB)/8, $0x00000000ffff00ff // IP bytes 8, 10, 11: TTL, checksum
DATA v4pre1<>+8(SB)/8, $0
DATA v4pre2<>+0(SB)/8, $0x00000000ffff0000 // UDP bytes 6, 7: checksum
DATA v4pre2<>+8(SB)/8, $0x00000000000000ff // BTH byte 4: resv8a
GLOBL v4pre0<>(SB), RODATA, $16
GLOBL v4pre1<>(SB), RODATA, $16
GLOBL v4pre2<>(SB), RODATA, $16
DATA tailShuf<>+0(SB)/8, $0x8080808080808080
DATA tailShuf<>+8(SB)/8, $0x8080808080808080
DATA tailShuf<>+16(SB)/8, $0x0706050403020100
DATA tailShuf<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA tailShuf<>+32(SB)/8, $0x8080808080808080
DATA tailShuf<>+40(SB)/8, $0x8080808080808080
GLOBL tailShuf<>(SB), RODATA, $48
DATA tailKeep<>+0(SB)/8, $0
DATA tailKeep<>+8(SB)/8, $0
DATA tailKeep<>+16(SB)/8, $0xffffffffffffffff
DATA tailKeep<>+24(SB)/8, $0xffffffffffffffff
GLOBL tailKeep<>(SB), RODATA, $32

// func icrcIPv4(k *foldTable, msg []byte) uint32
//
// The CRC-32 register (before the final XOR) of the RoCEv2 ICRC message
// whose IP header (20 bytes) through the byte before the ICRC is msg,
// len(msg) >= 40: the masked prefix is built in registers from msg, the rest
// folded from msg in place, four blocks per step, and its last len%16 bytes
// taken in by splitting the last block around them (PSHUFB). Nothing goes
// through memory written just before: building the prefix in a buffer
// with 8-byte stores and folding it with 16- and 32-byte loads made every
// load wait for the stores to reach the cache (no store forwarding).
TEXT ·icrcIPv4(SB), NOSPLIT, $0
	MOVQ k+0(FP), DI
	MOVQ msg_base+8(FP), SI
	MOVQ msg_len+16(FP), CX

	// The prefix: X0 = B0·k[2] ^ B1·k[1] ^ B2.
	MOVQ      (SI), X0
	PSLLDQ    $8, X0
	MOVOU     v4pre0<>+0(SB), X7
	POR       X7, X0
	MOVOU     8(SI), X1
	MOVOU     v4pre1<>+0(SB), X7
	POR       X7, X1
	MOVOU     24(SI), X2
	MOVOU     v4pre2<>+0(SB), X7
	POR       X7, X2
	MOVOU     64(DI), X8 // k[4]
	MOVOU     48(DI), X9 // k[3]
	MOVOU     32(DI), X10 // k[2]
	MOVOU     16(DI), X11 // k[1]
	MOVOA     X0, X4
	PCLMULQDQ $0x00, X10, X0
	PCLMULQDQ $0x11, X10, X4
	MOVOA     X1, X5
	PCLMULQDQ $0x00, X11, X1
	PCLMULQDQ $0x11, X11, X5
	PXOR      X4, X0
	PXOR      X5, X1
	PXOR      X1, X0
	PXOR      X2, X0

	ADDQ $40, SI
	SUBQ $40, CX
	MOVQ CX, R8
	ANDQ $15, R8 // tail bytes
	SHRQ $4, CX  // whole blocks

quad: // X0 = X0·k[4] ^ R0·k[3] ^ R1·k[2] ^ R2·k[1] ^ R3
	CMPQ      CX, $4
	JB        single
	MOVOA     X0, X4
	PCLMULQDQ $0x00, X8, X0
	PCLMULQDQ $0x11, X8, X4
	MOVOU     (SI), X1
	MOVOA     X1, X5
	PCLMULQDQ $0x00, X9, X1
	PCLMULQDQ $0x11, X9, X5
	MOVOU     16(SI), X2
	MOVOA     X2, X6
	PCLMULQDQ $0x00, X10, X2
	PCLMULQDQ $0x11, X10, X6
	MOVOU     32(SI), X3
	MOVOA     X3, X7
	PCLMULQDQ $0x00, X11, X3
	PCLMULQDQ $0x11, X11, X7
	PXOR      X4, X0
	PXOR      X5, X1
	PXOR      X6, X2
	PXOR      X7, X3
	PXOR      X1, X0
	PXOR      X3, X2
	PXOR      X2, X0
	MOVOU     48(SI), X1
	PXOR      X1, X0
	ADDQ      $64, SI
	SUBQ      $4, CX
	JMP       quad

single: // X0 = X0·k[1] ^ R0
	TESTQ     CX, CX
	JZ        tail
	MOVOA     X0, X4
	PCLMULQDQ $0x00, X11, X0
	PCLMULQDQ $0x11, X11, X4
	PXOR      X4, X0
	MOVOU     (SI), X1
	PXOR      X1, X0
	ADDQ      $16, SI
	DECQ      CX
	JMP       single

tail: // X0 followed by the t tail bytes at SI: (0s, X0[:t])·k[1] ^ (X0[t:], tail)
	TESTQ     R8, R8
	JZ        reduce
	MOVOU     -16(SI)(R8*1), X2 // the message's last 16 bytes, the tail at their end
	LEAQ      tailShuf<>(SB), AX
	MOVOU     (AX)(R8*1), X5
	MOVOU     16(AX)(R8*1), X6
	LEAQ      tailKeep<>(SB), AX
	MOVOU     (AX)(R8*1), X7
	MOVOA     X0, X1
	PSHUFB    X5, X1 // X0's first t bytes at the end, 0s before
	PSHUFB    X6, X0 // X0's last 16-t bytes at the start, 0s after
	PAND      X7, X2
	POR       X2, X0
	MOVOA     X1, X4
	PCLMULQDQ $0x00, X11, X1
	PCLMULQDQ $0x11, X11, X4
	PXOR      X4, X1
	PXOR      X1, X0

reduce: // as ieeeReduce, from X1
	MOVOA X0, X1
	IEEE_REDUCE
	MOVL AX, ret+32(FP)
	RET
