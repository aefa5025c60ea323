//go:build linux

#include "textflag.h"

// Offsets in pollRequest (poll.go) and Completion (sniffer.go).
#define req_cq 0
#define req_startPoll 8
#define req_nextPoll 16
#define req_endPoll 24
#define req_readByteLen 32
#define req_readTS 40
#define req_attr 48
#define req_out 56
#define req_max 64
#define req_wrID 72
#define req_status 80
#define rec_wrID 0
#define rec_ts 8
#define rec_byteLen 16
#define rec_status 20
#define rec_size 24
#define ENOENT 2

GLOBL ·pollBatchABI0(SB), NOPTR|RODATA, $8
DATA ·pollBatchABI0(SB)/8, $ibscope_ibverbs_pollBatch(SB)

// int ibscope_ibverbs_pollBatch(struct pollRequest *req): a C function
// (System V AMD64 ABI), called through purego on the system stack. It
// polls the CQ as libibverbs' inline ibv_start_poll / ibv_next_poll /
// ibv_end_poll and ibv_wc_read_* would, writing one Completion each.
// BX, R12 and R13 are callee-saved and kept across the calls: the
// request, the count and the output cursor.
TEXT ibscope_ibverbs_pollBatch(SB), NOSPLIT|NOFRAME, $0
	PUSHQ BX
	PUSHQ R12
	PUSHQ R13 // three pushes after the return address: SP is 16-byte aligned for the calls
	MOVQ DI, BX

	MOVQ req_cq(BX), DI
	MOVQ req_attr(BX), SI
	MOVQ req_startPoll(BX), AX
	CALL AX
	TESTL AX, AX
	JZ   polled
	CMPL AX, $ENOENT
	JNE  failed
	XORQ AX, AX
	JMP  done

failed:
	NEGL AX
	MOVLQSX AX, AX
	JMP  done

polled:
	XORQ R12, R12
	MOVQ req_out(BX), R13

next:
	MOVQ req_wrID(BX), AX
	MOVQ (AX), AX
	MOVQ AX, rec_wrID(R13)
	MOVQ req_status(BX), AX
	MOVL (AX), AX
	MOVL AX, rec_status(R13)
	MOVQ req_cq(BX), DI
	MOVQ req_readByteLen(BX), AX
	CALL AX
	MOVL AX, rec_byteLen(R13)
	MOVQ req_cq(BX), DI
	MOVQ req_readTS(BX), AX
	CALL AX
	MOVQ AX, rec_ts(R13)
	ADDQ $rec_size, R13
	INCQ R12
	CMPQ R12, req_max(BX)
	JAE  end
	MOVQ req_cq(BX), DI
	MOVQ req_nextPoll(BX), AX
	CALL AX
	TESTL AX, AX
	JZ   next

end:
	MOVQ req_cq(BX), DI
	MOVQ req_endPoll(BX), AX
	CALL AX
	MOVQ R12, AX

done:
	POPQ R13
	POPQ R12
	POPQ BX
	RET
