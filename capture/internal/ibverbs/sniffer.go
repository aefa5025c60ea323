//go:build linux && (amd64 || arm64)

package ibverbs

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ibscope/ibscope/capture/internal/cmem"
)

// stepErr is the error of a step whose call set errno, or otherwise when
// it did not.
func stepErr(step string, errno, otherwise syscall.Errno) error {
	if errno == 0 {
		errno = otherwise
	}
	return &CallError{Step: step, Errno: errno}
}

// PollBatch is how many completions one Poll collects at most.
const PollBatch = 64

// postBatch is how many receive requests one post_recv call takes.
const postBatch = 64

// Completion is one polled completion. Its layout is what the poll routines
// in poll_*.s write (pollRecord*).
type Completion struct {
	WRID    uint64 // the slot the receive request was posted for
	TS      uint64 // completion timestamp: wall-clock ns, or raw device cycles
	ByteLen uint32 // bytes the device wrote
	Status  uint32 // enum ibv_wc_status
}

// Info is what the sniffer needs to know of a device.
type Info struct {
	MaxQPWR       int    // receive requests a QP may hold
	CoreClockKHz  uint64 // hca_core_clock: the raw timestamp counter's frequency (0: unknown)
	TimestampMask uint64 // completion_timestamp_mask: the counter's valid bits
}

// Sniffer is a raw packet QP with a sniffer flow, and the objects under it,
// on one device. Its methods are single steps, called in order by the
// capture: OpenDevice, Query, Setup, PostRecv, AttachFlow, then Poll and
// PostRecv while capturing, and Close.
type Sniffer struct {
	lib                       *Lib
	ctx, pd, cq, qp, mr, flow uintptr // C objects, 0 while not created
	Wallclock                 bool    // completions carry wall-clock ns, not raw cycles

	// Memory the C side reads or writes during the capture: part of this
	// heap object, so it does not move and lives as long as the Sniffer.
	comps [PollBatch]Completion
	req   pollRequest
	attr  ibvPollCQAttr
	sges  [postBatch]ibvSGE
	wrs   [postBatch]ibvRecvWR
	bad   uintptr
	// The arguments of the calls made per batch (post_recv, pollBatch).
	postArgs [3]uintptr
	pollArgs [1]uintptr
}

// OpenDevice opens the named device, as libibverbs lists it.
func (l *Lib) OpenDevice(name string) (*Sniffer, error) {
	var n int32
	list, errno := l.call(l.getDeviceList, uintptr(unsafe.Pointer(&n)))
	if list == 0 {
		return nil, stepErr(StepListDevices, errno, syscall.ENODEV)
	}
	defer purego.SyscallN(l.freeDeviceList, list)
	devs := unsafe.Slice((*uintptr)(cmem.Pointer(list)), max(n, 0))
	var names []string
	for _, d := range devs {
		r, _, _ := purego.SyscallN(l.getDeviceName, d)
		dn := cmem.String(r, 64)
		if dn != name {
			names = append(names, dn)
			continue
		}
		ctx, errno := l.call(l.openDevice, d)
		if ctx == 0 {
			return nil, stepErr(StepOpenDevice, errno, syscall.EIO)
		}
		return &Sniffer{lib: l, ctx: ctx}, nil
	}
	return nil, &NotListedError{Listed: names}
}

// ctxOp returns the verbs_context operation at offset opOffset of struct
// verbsContext, or 0 when the context lacks it, by the rule of verbs.h's
// verbs_get_ctx_op: the context must be extended, the library's
// verbs_context large enough to hold the operation, and the pointer set.
func ctxOp(ctx uintptr, opOffset uintptr) uintptr {
	c := (*ibvContext)(cmem.Pointer(ctx))
	if c.abiCompat != verbsABIIsExtended {
		return 0
	}
	ctxOffset := unsafe.Offsetof(verbsContext{}.context)
	szOffset := unsafe.Offsetof(verbsContext{}.sz)
	sz := *(*uintptr)(cmem.Pointer(ctx - (ctxOffset - szOffset)))
	if sz < unsafe.Sizeof(verbsContext{})-opOffset {
		return 0
	}
	return *(*uintptr)(cmem.Pointer(ctx - (ctxOffset - opOffset)))
}

// Offsets in struct verbs_context of the operations the sniffer calls.
var (
	opQueryDeviceEx = unsafe.Offsetof(verbsContext{}.queryDeviceEx)
	opQueryRTValues = unsafe.Offsetof(verbsContext{}.queryRTValues)
	opCreateCQEx    = unsafe.Offsetof(verbsContext{}.createCQEx)
	opCreateFlow    = unsafe.Offsetof(verbsContext{}.ibvCreateFlow)
	opDestroyFlow   = unsafe.Offsetof(verbsContext{}.ibvDestroyFlow)
)

// Query reads the device's limits and clock, as ibv_query_device_ex does:
// the extended query when the context has it, ibv_query_device otherwise.
func (s *Sniffer) Query() (Info, error) {
	attr := new(ibvDeviceAttrEx)
	rc := syscall.EOPNOTSUPP
	if op := ctxOp(s.ctx, opQueryDeviceEx); op != 0 {
		rc = callInt(op, s.ctx, 0, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr))
	}
	if rc == syscall.EOPNOTSUPP || rc == syscall.ENOSYS {
		*attr = ibvDeviceAttrEx{}
		rc = callInt(s.lib.queryDevice, s.ctx, uintptr(unsafe.Pointer(&attr.origAttr)))
	}
	if rc != 0 {
		return Info{}, &CallError{Step: StepQueryDevice, Errno: rc}
	}
	return Info{MaxQPWR: int(attr.origAttr.maxQPWR), CoreClockKHz: attr.hcaCoreClock, TimestampMask: attr.completionTimestampMask}, nil
}

// RawClock reads the device's free-running clock in cycles
// (ibv_query_rt_values_ex's raw_clock, a timespec holding the count).
func (s *Sniffer) RawClock() (uint64, error) {
	op := ctxOp(s.ctx, opQueryRTValues)
	if op == 0 {
		return 0, &CallError{Step: StepReadClock, Errno: syscall.EOPNOTSUPP}
	}
	v := &ibvValuesEx{compMask: ibvValuesMaskRawClock}
	if rc := callInt(op, s.ctx, uintptr(unsafe.Pointer(v))); rc != 0 {
		return 0, &CallError{Step: StepReadClock, Errno: rc}
	}
	return uint64(v.rawClockSec)*1_000_000_000 + uint64(v.rawClockNs), nil
}

// Setup creates everything but the flow: the protection domain, an
// extended CQ with wall-clock timestamps if wantWallclock and the device
// offers them (raw cycles otherwise), a raw packet QP without a send queue
// moved to RTR on port, and the registration of the ring memory buf.
func (s *Sniffer) Setup(port int, slots uint32, buf unsafe.Pointer, bufBytes int, wantWallclock bool) error {
	l := s.lib
	var errno syscall.Errno
	if s.pd, errno = l.call(l.allocPD, s.ctx); s.pd == 0 {
		return stepErr(StepAllocPD, errno, syscall.ENOMEM)
	}

	createCQ := ctxOp(s.ctx, opCreateCQEx)
	if createCQ == 0 {
		return &CallError{Step: StepCreateCQ, Errno: syscall.EOPNOTSUPP}
	}
	cqa := &ibvCQInitAttrEx{cqe: slots, compMask: ibvCQInitAttrMaskFlags, flags: ibvCreateCQAttrSingleThreaded}
	if wantWallclock {
		cqa.wcFlags = ibvWCExWithByteLen | ibvWCExWithCompletionTimestampWallclock
		s.cq, _ = l.call(createCQ, s.ctx, uintptr(unsafe.Pointer(cqa)))
		s.Wallclock = s.cq != 0
	}
	if s.cq == 0 {
		cqa.wcFlags = ibvWCExWithByteLen | ibvWCExWithCompletionTimestamp
		if s.cq, errno = l.call(createCQ, s.ctx, uintptr(unsafe.Pointer(cqa))); s.cq == 0 {
			return stepErr(StepCreateCQ, errno, syscall.EOPNOTSUPP)
		}
	}
	s.preparePoll()

	// No send queue: the sniffer never sends, and on mlx5 a send queue
	// is one more object (TIS, SQ) that must accept the CQ's timestamps.
	// struct ibv_cq_ex starts as struct ibv_cq does (ibv_cq_ex_to_cq).
	qpa := &ibvQPInitAttr{sendCQ: s.cq, recvCQ: s.cq, qpType: ibvQPTRawPacket,
		cap: ibvQPCap{maxRecvWR: slots, maxRecvSGE: 1}}
	if s.qp, errno = l.call(l.createQP, s.pd, uintptr(unsafe.Pointer(qpa))); s.qp == 0 {
		return stepErr(StepCreateQP, errno, syscall.EINVAL)
	}

	a := &ibvQPAttr{qpState: ibvQPSInit, portNum: uint8(port)}
	if rc := callInt(l.modifyQP, s.qp, uintptr(unsafe.Pointer(a)), ibvQPState|ibvQPPort); rc != 0 {
		return &CallError{Step: StepQPInit, Errno: rc}
	}
	a = &ibvQPAttr{qpState: ibvQPSRTR}
	if rc := callInt(l.modifyQP, s.qp, uintptr(unsafe.Pointer(a)), ibvQPState); rc != 0 {
		return &CallError{Step: StepQPRTR, Errno: rc}
	}

	if s.mr, errno = l.call(l.regMR, s.pd, uintptr(buf), uintptr(bufBytes), ibvAccessLocalWrite); s.mr == 0 {
		return stepErr(StepRegMR, errno, syscall.ENOMEM)
	}
	return nil
}

// AttachFlow steers every packet of the port, both directions, to the QP:
// a flow of type IBV_FLOW_ATTR_SNIFFER, which has no specs.
func (s *Sniffer) AttachFlow(port int) error {
	qp := (*ibvQP)(cmem.Pointer(s.qp))
	op := ctxOp(qp.context, opCreateFlow)
	if op == 0 {
		return &CallError{Step: StepCreateFlow, Errno: syscall.EOPNOTSUPP}
	}
	fa := &ibvFlowAttr{typ: ibvFlowAttrSniffer, port: uint8(port)}
	fa.size = uint16(unsafe.Sizeof(*fa))
	var errno syscall.Errno
	if s.flow, errno = s.lib.call(op, s.qp, uintptr(unsafe.Pointer(fa))); s.flow == 0 {
		return stepErr(StepCreateFlow, errno, syscall.EOPNOTSUPP)
	}
	return nil
}

// PostRecv posts a receive request for each slot in ids, slot i at byte
// i*slotBytes of the registered memory, postBatch per call. It returns how
// many were posted, all of them unless the error says otherwise.
func (s *Sniffer) PostRecv(ids []uint32, slotBytes uint32) (int, error) {
	mr := (*ibvMR)(cmem.Pointer(s.mr))
	qp := (*ibvQP)(cmem.Pointer(s.qp))
	postRecv := (*ibvContext)(cmem.Pointer(qp.context)).ops.postRecv
	posted := 0
	for posted < len(ids) {
		k := min(len(ids)-posted, postBatch)
		for i := range k {
			id := ids[posted+i]
			s.sges[i] = ibvSGE{addr: uint64(mr.addr) + uint64(id)*uint64(slotBytes), length: slotBytes, lkey: mr.lkey}
			s.wrs[i] = ibvRecvWR{wrID: uint64(id), sgList: uintptr(unsafe.Pointer(&s.sges[i])), numSGE: 1}
			if i+1 < k {
				s.wrs[i].next = uintptr(unsafe.Pointer(&s.wrs[i+1]))
			}
		}
		s.bad = 0
		// The arguments live in the Sniffer, not in a slice made for the
		// call, so that posting allocates nothing: they point into s,
		// which the garbage collector does not move and s keeps alive.
		s.postArgs = [3]uintptr{s.qp, uintptr(unsafe.Pointer(&s.wrs[0])), uintptr(unsafe.Pointer(&s.bad))}
		r, _, _ := purego.SyscallN(postRecv, s.postArgs[:]...)
		runtime.KeepAlive(s)
		rc := syscall.Errno(int32(r))
		if rc != 0 {
			if first := uintptr(unsafe.Pointer(&s.wrs[0])); s.bad >= first && s.bad < first+uintptr(k)*unsafe.Sizeof(s.wrs[0]) {
				posted += int((s.bad - first) / unsafe.Sizeof(s.wrs[0]))
			}
			return posted, &CallError{Step: StepPostRecv, Errno: rc}
		}
		posted += k
	}
	return posted, nil
}

// Poll returns the completions there are, at most PollBatch; none when the
// CQ is empty. The slice is valid until the next Poll.
func (s *Sniffer) Poll() ([]Completion, error) {
	n := pollCQ(s.pollArgs[:])
	runtime.KeepAlive(s)
	if n < 0 {
		return nil, &CallError{Step: StepPoll, Errno: syscall.Errno(-n)}
	}
	return s.comps[:n], nil
}

// StatusString names a completion status (ibv_wc_status_str).
func (s *Sniffer) StatusString(status uint32) string {
	r, _, _ := purego.SyscallN(s.lib.wcStatusStr, uintptr(status))
	if str := cmem.String(r, 128); str != "" {
		return str
	}
	return fmt.Sprintf("status %d", status)
}

// Close destroys what was created, in reverse order: flow, QP, memory
// registration, CQ, protection domain, context. It may be called after a
// failed step, and more than once.
func (s *Sniffer) Close() error {
	l := s.lib
	var errs []error
	destroy := func(obj *uintptr, step string, fn func() syscall.Errno) {
		if *obj == 0 {
			return
		}
		if rc := fn(); rc != 0 {
			errs = append(errs, &CallError{Step: step, Errno: rc})
		}
		*obj = 0
	}
	destroy(&s.flow, "destroy flow", func() syscall.Errno {
		flow := (*ibvFlow)(cmem.Pointer(s.flow))
		op := ctxOp(flow.context, opDestroyFlow)
		if op == 0 {
			return syscall.EOPNOTSUPP
		}
		return callInt(op, s.flow)
	})
	destroy(&s.qp, "destroy QP", func() syscall.Errno { return callInt(l.destroyQP, s.qp) })
	destroy(&s.mr, "deregister ring memory", func() syscall.Errno { return callInt(l.deregMR, s.mr) })
	destroy(&s.cq, "destroy CQ", func() syscall.Errno { return callInt(l.destroyCQ, s.cq) })
	destroy(&s.pd, "deallocate protection domain", func() syscall.Errno { return callInt(l.deallocPD, s.pd) })
	destroy(&s.ctx, "close device", func() syscall.Errno { return callInt(l.closeDevice, s.ctx) })
	runtime.KeepAlive(s)
	return errors.Join(errs...)
}
