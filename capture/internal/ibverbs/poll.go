//go:build linux && (amd64 || arm64)

package ibverbs

import (
	"structs"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ibscope/ibscope/capture/internal/cmem"
)

// Polling an extended CQ takes, per completion, a call to next_poll, one
// to read_byte_len and one to read the timestamp, all through the CQ's
// function pointers; a call from Go into C through purego costs 100 ns or
// more, which would cap a capture at a few million packets per second. So
// the loop is pollBatch, a C-ABI routine in assembly (poll_amd64.s,
// poll_arm64.s): purego calls it once per batch, on the system stack, and
// it calls the CQ's functions as C would, filling Sniffer.comps.

// pollRequest is pollBatch's argument. Its layout is what the assembly
// reads (the req_* offsets in poll_*.s; layout_test.go pins them).
type pollRequest struct {
	_           structs.HostLayout
	cq          uintptr // struct ibv_cq_ex *
	startPoll   uintptr // the CQ's start_poll, next_poll, end_poll,
	nextPoll    uintptr // read_byte_len and the timestamp reader
	endPoll     uintptr // (read_completion_wallclock_ns or
	readByteLen uintptr // read_completion_ts)
	readTS      uintptr
	attr        uintptr // struct ibv_poll_cq_attr *, zeroed
	out         uintptr // Completion array of max entries
	max         uintptr
	wrID        uintptr // &cq->wr_id
	status      uintptr // &cq->status
}

// pollBatchABI0 is the address of pollBatch, which returns the number of
// completions written to out, 0 when the CQ is empty (start_poll said
// ENOENT), or -errno when start_poll failed.
var pollBatchABI0 uintptr

// preparePoll fills the Sniffer's poll request for its CQ, once the CQ
// exists: the CQ's functions do not change while it lives.
func (s *Sniffer) preparePoll() {
	cq := (*ibvCQEx)(cmem.Pointer(s.cq))
	readTS := cq.readCompletionTS
	if s.Wallclock {
		readTS = cq.readCompletionWallclockNs
	}
	s.attr = ibvPollCQAttr{}
	s.req = pollRequest{
		cq: s.cq, startPoll: cq.startPoll, nextPoll: cq.nextPoll, endPoll: cq.endPoll,
		readByteLen: cq.readByteLen, readTS: readTS,
		attr: uintptr(unsafe.Pointer(&s.attr)), out: uintptr(unsafe.Pointer(&s.comps[0])), max: PollBatch,
		wrID: s.cq + unsafe.Offsetof(cq.wrID), status: s.cq + unsafe.Offsetof(cq.status),
	}
	s.pollArgs[0] = uintptr(unsafe.Pointer(&s.req))
}

// pollCQ runs pollBatch: one call into C for up to max completions. args
// holds the address of the pollRequest, which is part of a Sniffer, a heap
// object; passing it in a slice the Sniffer holds keeps the call from
// allocating one.
func pollCQ(args []uintptr) int {
	n, _, _ := purego.SyscallN(pollBatchABI0, args...)
	return int(int32(n))
}
