//go:build linux && (amd64 || arm64)

package ibverbs

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/ibscope/ibscope/capture/internal/cmem"
)

// fakeCQ is a struct ibv_cq_ex whose poll functions are Go callbacks
// (purego.NewCallback gives them C addresses), so pollBatch runs against
// the C ABI as it would against a provider's CQ. The callbacks are made
// once: purego allows a bounded number per process.
type fakeCQ struct {
	cq       ibvCQEx
	queue    []Completion
	next     int
	startErr uintptr // what start_poll returns when the queue has entries
	endPolls int
	badArg   bool // a function got another pointer than the CQ
}

var (
	theFakeCQ                        *fakeCQ
	fakeStart, fakeNext, fakeEnd     uintptr
	fakeByteLen, fakeTS, fakeWallclk uintptr
)

func fakeCallbacks() {
	if fakeStart != 0 {
		return
	}
	check := func(cq uintptr) *fakeCQ {
		f := theFakeCQ
		if cq != uintptr(unsafe.Pointer(&f.cq)) {
			f.badArg = true
		}
		return f
	}
	load := func(f *fakeCQ) uintptr {
		if f.next >= len(f.queue) {
			return uintptr(syscall.ENOENT)
		}
		f.cq.wrID, f.cq.status = f.queue[f.next].WRID, f.queue[f.next].Status
		f.next++
		return 0
	}
	fakeStart = purego.NewCallback(func(cq, attr uintptr) uintptr {
		f := check(cq)
		if f.startErr != 0 && f.next < len(f.queue) {
			return f.startErr
		}
		return load(f)
	})
	fakeNext = purego.NewCallback(func(cq uintptr) uintptr { return load(check(cq)) })
	fakeEnd = purego.NewCallback(func(cq uintptr) uintptr { check(cq).endPolls++; return 0 })
	fakeByteLen = purego.NewCallback(func(cq uintptr) uintptr {
		f := check(cq)
		return uintptr(f.queue[f.next-1].ByteLen)
	})
	fakeTS = purego.NewCallback(func(cq uintptr) uintptr {
		f := check(cq)
		return uintptr(f.queue[f.next-1].TS)
	})
	fakeWallclk = purego.NewCallback(func(cq uintptr) uintptr {
		f := check(cq)
		return uintptr(f.queue[f.next-1].TS + 1_000_000_000)
	})
}

func newFakeSniffer(t *testing.T, n int, wallclock bool) (*Sniffer, *fakeCQ) {
	fakeCallbacks()
	f := &fakeCQ{}
	for i := range n {
		c := Completion{WRID: uint64(i), TS: 1<<40 + uint64(i)*7, ByteLen: 128 + uint32(i)}
		if i%7 == 3 {
			c.Status = 4 // IBV_WC_LOC_PROT_ERR: any error status
		}
		f.queue = append(f.queue, c)
	}
	f.cq.startPoll, f.cq.nextPoll, f.cq.endPoll = fakeStart, fakeNext, fakeEnd
	f.cq.readByteLen, f.cq.readCompletionTS, f.cq.readCompletionWallclockNs = fakeByteLen, fakeTS, fakeWallclk
	theFakeCQ = f
	s := &Sniffer{cq: uintptr(unsafe.Pointer(&f.cq)), Wallclock: wallclock}
	s.preparePoll()
	t.Cleanup(func() { runtime.KeepAlive(f) })
	return s, f
}

// pollBatch, the assembly, fills completions in order, at most PollBatch
// per call, with one end_poll per successful start_poll.
func TestPollBatch(t *testing.T) {
	s, f := newFakeSniffer(t, 2*PollBatch+5, false)
	var got []Completion
	for range 4 {
		comps, err := s.Poll()
		if err != nil {
			t.Fatal(err)
		}
		if len(comps) > PollBatch {
			t.Fatalf("%d completions in one poll", len(comps))
		}
		got = append(got, comps...)
	}
	if len(got) != len(f.queue) {
		t.Fatalf("polled %d completions, want %d", len(got), len(f.queue))
	}
	for i := range got {
		if got[i] != f.queue[i] {
			t.Errorf("completion %d = %+v, want %+v", i, got[i], f.queue[i])
		}
	}
	if f.endPolls != 3 {
		t.Errorf("end_poll called %d times, want 3 (one per non-empty poll)", f.endPolls)
	}
	if f.badArg {
		t.Error("a CQ function got another pointer than the CQ")
	}
}

func TestPollBatchWallclockAndErrors(t *testing.T) {
	s, f := newFakeSniffer(t, 3, true)
	comps, err := s.Poll()
	if err != nil || len(comps) != 3 || comps[2].TS != f.queue[2].TS+1_000_000_000 {
		t.Fatalf("wall-clock poll: %+v, %v", comps, err)
	}
	s, f = newFakeSniffer(t, 3, false)
	f.startErr = uintptr(syscall.EIO)
	_, err = s.Poll()
	var ce *CallError
	if !errors.As(err, &ce) || ce.Errno != syscall.EIO || ce.Step != StepPoll {
		t.Errorf("start_poll failing with EIO: %v", err)
	}
	if f.endPolls != 0 {
		t.Error("end_poll called after a failed start_poll")
	}
}

// ctxOp finds operations as verbs_get_ctx_op does: only in an extended
// context whose verbs_context is large enough to hold them.
func TestCtxOp(t *testing.T) {
	vc := new(verbsContext)
	ctx := uintptr(unsafe.Pointer(&vc.context))
	vc.queryRTValues, vc.ibvCreateFlow = 0x1000, 0x2000
	vc.sz = unsafe.Sizeof(*vc)
	if got := ctxOp(ctx, opQueryRTValues); got != 0 {
		t.Errorf("non-extended context gave op %#x", got)
	}
	vc.context.abiCompat = verbsABIIsExtended
	if got := ctxOp(ctx, opQueryRTValues); got != 0x1000 {
		t.Errorf("query_rt_values = %#x", got)
	}
	if got := ctxOp(ctx, opQueryDeviceEx); got != 0 {
		t.Errorf("unset query_device_ex = %#x", got)
	}
	// An older library whose verbs_context starts after query_rt_values.
	vc.sz = unsafe.Sizeof(*vc) - opQueryRTValues - 1
	if got := ctxOp(ctx, opQueryRTValues); got != 0 {
		t.Errorf("query_rt_values beyond the library's sz = %#x", got)
	}
	if got := ctxOp(ctx, opCreateFlow); got != 0x2000 {
		t.Errorf("ibv_create_flow = %#x", got)
	}
	runtime.KeepAlive(vc)
}

// PostRecv chains postBatch requests per post_recv call, each with one
// scatter entry into its slot, and counts what a failing call took.
func TestPostRecv(t *testing.T) {
	type posted struct {
		id   uint64
		addr uint64
		len  uint32
		lkey uint32
	}
	var got []posted
	var calls int
	failAt := -1 // request index (in the call) at which post_recv fails
	postRecv := purego.NewCallback(func(qp, wr, bad uintptr) uintptr {
		calls++
		i := 0
		for p := wr; p != 0; i++ {
			w := (*ibvRecvWR)(cmem.Pointer(p))
			if i == failAt {
				*(*uintptr)(cmem.Pointer(bad)) = p
				return uintptr(syscall.ENOMEM)
			}
			sge := (*ibvSGE)(cmem.Pointer(w.sgList))
			if w.numSGE != 1 {
				return uintptr(syscall.EINVAL)
			}
			got = append(got, posted{w.wrID, sge.addr, sge.length, sge.lkey})
			p = w.next
		}
		return 0
	})
	ctx := new(ibvContext)
	ctx.ops.postRecv = postRecv
	qp := &ibvQP{context: uintptr(unsafe.Pointer(ctx))}
	mr := &ibvMR{addr: 1 << 20, lkey: 77}
	s := &Sniffer{qp: uintptr(unsafe.Pointer(qp)), mr: uintptr(unsafe.Pointer(mr))}
	ids := make([]uint32, 150)
	for i := range ids {
		ids[i] = uint32(i * 3)
	}
	n, err := s.PostRecv(ids, 4224)
	if err != nil || n != 150 || calls != 3 || len(got) != 150 {
		t.Fatalf("posted %d in %d calls (%d seen), %v", n, calls, len(got), err)
	}
	for i, p := range got {
		if p.id != uint64(ids[i]) || p.addr != 1<<20+uint64(ids[i])*4224 || p.len != 4224 || p.lkey != 77 {
			t.Fatalf("request %d = %+v", i, p)
		}
	}
	got, calls, failAt = nil, 0, 10
	n, err = s.PostRecv(ids, 4224)
	if !errors.Is(err, syscall.ENOMEM) || n != 10 {
		t.Errorf("failing at the 11th: posted %d, %v", n, err)
	}
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(qp)
	runtime.KeepAlive(mr)
}

func TestOpenErrors(t *testing.T) {
	_, err := Open("/nonexistent/libibverbs.so.1")
	var le *LoadError
	if !errors.As(err, &le) || le.Symbol != "" {
		t.Errorf("missing library: %v", err)
	}
	// A library without the verbs: libc.
	_, err = Open("libc.so.6")
	if !errors.As(err, &le) || le.Symbol != "ibv_get_device_list" {
		t.Errorf("libc as libibverbs: %v", err)
	}
}

// BenchmarkPuregoCall is the cost of one call into C through purego
// (libc's labs): what each completion would cost per CQ function called
// from Go, and what pollBatch pays once per batch instead.
func BenchmarkPuregoCall(b *testing.B) {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW)
	if err != nil {
		b.Skip(err)
	}
	labs, err := purego.Dlsym(h, "labs")
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		purego.SyscallN(labs, 5)
	}
}
