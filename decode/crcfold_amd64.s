//go:build !purego

#include "go_asm.h"
#include "textflag.h"

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
	MOVOU      ieeeK4<>+0(SB), X0

	PCMPEQB   X3, X3
	PCLMULQDQ $1, X1, X0
	PSRLDQ    $8, X1
	PXOR      X0, X1

	MOVOA X1, X2
	MOVQ  ieeeR5<>+0(SB), X0

	PSRLQ $32, X3 // 32-bit mask

	PSRLDQ    $4, X2
	PAND      X3, X1
	PCLMULQDQ $0, X0, X1
	PXOR      X2, X1

	MOVOU ieeePoly<>+0(SB), X0

	MOVOA     X1, X2
	PAND      X3, X1
	PCLMULQDQ $0x10, X0, X1
	PAND      X3, X1
	PCLMULQDQ $0, X0, X1
	PXOR      X2, X1

	MOVQ X1, AX
	SHRQ $32, AX
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
