//go:build !purego

#include "textflag.h"

// Folding constants for the VCRC, computed as hash/crc32 computes its IEEE
// ones (Intel's "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ", reflected form as in Linux's crc32-pclmul), for the 32-bit
// polynomial x^16·(x^16+x^12+x^3+x+1): a 32-bit CRC with it keeps the VCRC
// in its low 16 bits. Each pair is (x^(D+32) mod P)' << 1, (x^(D-32) mod
// P)' << 1 for a fold over D bits; ' is 32-bit bit reversal.
DATA vcrcK1K2<>+0(SB)/8, $0x9c2   // D = 512
DATA vcrcK1K2<>+8(SB)/8, $0x64b0
DATA vcrcK3K4<>+0(SB)/8, $0x1f9ea // D = 128
DATA vcrcK3K4<>+8(SB)/8, $0x1e9de
GLOBL vcrcK1K2<>(SB), RODATA, $16
GLOBL vcrcK3K4<>(SB), RODATA, $16

// func vcrcFold(crc uint32, p []byte) (lo, hi uint64)
// len(p) must be at least 64 and a multiple of 16. Folds p, with crc (the
// unfinished VCRC register) XORed into its first bytes, into 16 bytes
// whose CRC from a zero register is the register after p.
TEXT ·vcrcFold(SB), NOSPLIT, $0
	MOVL crc+0(FP), X0
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX

	MOVOU (SI), X1
	MOVOU 16(SI), X2
	MOVOU 32(SI), X3
	MOVOU 48(SI), X4
	PXOR  X0, X1
	ADDQ  $64, SI
	SUBQ  $64, CX
	CMPQ  CX, $64
	JB    remain64

	MOVOU vcrcK1K2<>+0(SB), X0

loop64:
	MOVOA X1, X5
	MOVOA X2, X6
	MOVOA X3, X7
	MOVOA X4, X8

	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0, X0, X2
	PCLMULQDQ $0, X0, X3
	PCLMULQDQ $0, X0, X4

	MOVOU (SI), X11
	MOVOU 16(SI), X12
	MOVOU 32(SI), X13
	MOVOU 48(SI), X14

	PCLMULQDQ $0x11, X0, X5
	PCLMULQDQ $0x11, X0, X6
	PCLMULQDQ $0x11, X0, X7
	PCLMULQDQ $0x11, X0, X8

	PXOR X5, X1
	PXOR X6, X2
	PXOR X7, X3
	PXOR X8, X4

	PXOR X11, X1
	PXOR X12, X2
	PXOR X13, X3
	PXOR X14, X4

	ADDQ $64, SI
	SUBQ $64, CX
	CMPQ CX, $64
	JGE  loop64

remain64:
	MOVOU vcrcK3K4<>+0(SB), X0

	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X2, X1

	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X3, X1

	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X4, X1

	CMPQ CX, $16
	JB   done

remain16:
	MOVOU     (SI), X10
	MOVOA     X1, X5
	PCLMULQDQ $0, X0, X1
	PCLMULQDQ $0x11, X0, X5
	PXOR      X5, X1
	PXOR      X10, X1
	SUBQ      $16, CX
	ADDQ      $16, SI
	CMPQ      CX, $16
	JGE       remain16

done:
	MOVQ   X1, lo+32(FP)
	PSRLDQ $8, X1
	MOVQ   X1, hi+40(FP)
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
