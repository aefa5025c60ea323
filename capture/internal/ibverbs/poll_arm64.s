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
// (AAPCS64), called through purego on the system stack. It polls the CQ as
// libibverbs' inline ibv_start_poll / ibv_next_poll / ibv_end_poll and
// ibv_wc_read_* would, writing one Completion each. R19-R21 are
// callee-saved and kept across the calls: the request, the count and the
// output cursor; they, the frame pointer and the link register are saved
// in a 48-byte frame (the stack stays 16-byte aligned).
TEXT ibscope_ibverbs_pollBatch(SB), NOSPLIT|NOFRAME, $0
	SUB  $48, RSP
	MOVD R29, 0(RSP)
	MOVD R30, 8(RSP)
	MOVD R19, 16(RSP)
	MOVD R20, 24(RSP)
	MOVD R21, 32(RSP)
	MOVD R0, R19

	MOVD req_cq(R19), R0
	MOVD req_attr(R19), R1
	MOVD req_startPoll(R19), R9
	BL   (R9)
	CBZW R0, polled
	CMPW $ENOENT, R0
	BNE  failed
	MOVD $0, R0
	B    done

failed:
	NEGW R0, R0
	SXTW R0, R0
	B    done

polled:
	MOVD $0, R20
	MOVD req_out(R19), R21

next:
	MOVD req_wrID(R19), R9
	MOVD (R9), R10
	MOVD R10, rec_wrID(R21)
	MOVD req_status(R19), R9
	MOVWU (R9), R10
	MOVW R10, rec_status(R21)
	MOVD req_cq(R19), R0
	MOVD req_readByteLen(R19), R9
	BL   (R9)
	MOVW R0, rec_byteLen(R21)
	MOVD req_cq(R19), R0
	MOVD req_readTS(R19), R9
	BL   (R9)
	MOVD R0, rec_ts(R21)
	ADD  $rec_size, R21
	ADD  $1, R20
	MOVD req_max(R19), R9
	CMP  R9, R20
	BHS  end
	MOVD req_cq(R19), R0
	MOVD req_nextPoll(R19), R9
	BL   (R9)
	CBZW R0, next

end:
	MOVD req_cq(R19), R0
	MOVD req_endPoll(R19), R9
	BL   (R9)
	MOVD R20, R0

done:
	MOVD 0(RSP), R29
	MOVD 8(RSP), R30
	MOVD 16(RSP), R19
	MOVD 24(RSP), R20
	MOVD 32(RSP), R21
	ADD  $48, RSP
	RET
