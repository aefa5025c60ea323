//go:build linux && cgo && !noverbs

package capture

/*
#cgo LDFLAGS: -libverbs
#include <infiniband/verbs.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>

// This C layer only makes the libibverbs calls, most of which are static
// inline functions cgo cannot reach through function pointers, and polls
// completions in batches so one cgo call serves many packets. Ring
// accounting, timestamps and records are Go's.

struct ibs_sniffer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_flow *flow;
	int wallclock; // completions carry wall-clock ns, not raw cycles
};

struct ibs_info {
	uint64_t hca_core_clock_khz;
	int max_qp_wr;
	uint64_t completion_timestamp_mask;
};

struct ibs_comp {
	uint64_t wr_id;
	uint64_t ts;
	uint32_t byte_len;
	uint32_t status;
};

static struct ibv_context *ibs_open_device(const char *name, int *err, const char **stage) {
	int n = 0;
	*stage = "list RDMA devices (ibv_get_device_list)";
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		*err = errno ? errno : ENODEV;
		return NULL;
	}
	*stage = "open device";
	struct ibv_context *ctx = NULL;
	*err = ENODEV;
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			*err = ctx ? 0 : (errno ? errno : EIO);
			break;
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

static int ibs_query(struct ibv_context *ctx, struct ibs_info *info) {
	struct ibv_device_attr_ex attr;
	memset(&attr, 0, sizeof attr);
	int rc = ibv_query_device_ex(ctx, NULL, &attr);
	if (rc)
		return rc;
	info->hca_core_clock_khz = attr.hca_core_clock;
	info->max_qp_wr = attr.orig_attr.max_qp_wr;
	info->completion_timestamp_mask = attr.completion_timestamp_mask;
	return 0;
}

static int ibs_raw_clock(struct ibv_context *ctx, int64_t *sec, int64_t *nsec) {
	struct ibv_values_ex v;
	memset(&v, 0, sizeof v);
	v.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	int rc = ibv_query_rt_values_ex(ctx, &v);
	if (rc)
		return rc;
	*sec = v.raw_clock.tv_sec;
	*nsec = v.raw_clock.tv_nsec;
	return 0;
}

// ibs_setup creates everything but the flow; *stage names the failed step.
static int ibs_setup(struct ibs_sniffer *s, int port, uint32_t slots, void *buf, size_t len, int want_wallclock, const char **stage) {
	*stage = "allocate protection domain";
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return errno ? errno : ENOMEM;

	*stage = "create extended CQ";
	struct ibv_cq_init_attr_ex cqa;
	memset(&cqa, 0, sizeof cqa);
	cqa.cqe = slots;
	cqa.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	cqa.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	if (want_wallclock) {
		cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
		s->cq = ibv_create_cq_ex(s->ctx, &cqa);
		s->wallclock = s->cq != NULL;
	}
	if (!s->cq) {
		cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		s->cq = ibv_create_cq_ex(s->ctx, &cqa);
	}
	if (!s->cq)
		return errno ? errno : EOPNOTSUPP;

	*stage = "create raw packet QP";
	struct ibv_qp_init_attr qpa;
	memset(&qpa, 0, sizeof qpa);
	qpa.send_cq = ibv_cq_ex_to_cq(s->cq);
	qpa.recv_cq = ibv_cq_ex_to_cq(s->cq);
	qpa.qp_type = IBV_QPT_RAW_PACKET;
	qpa.cap.max_recv_wr = slots;
	qpa.cap.max_recv_sge = 1;
	// No send queue: the sniffer never sends, and on mlx5 a send queue
	// is one more object (TIS, SQ) that must accept the CQ's timestamps.
	qpa.cap.max_send_wr = 0;
	qpa.cap.max_send_sge = 0;
	s->qp = ibv_create_qp(s->pd, &qpa);
	if (!s->qp)
		return errno ? errno : EINVAL;

	*stage = "move QP to INIT";
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	int rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	if (rc)
		return rc;
	*stage = "move QP to RTR";
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	rc = ibv_modify_qp(s->qp, &a, IBV_QP_STATE);
	if (rc)
		return rc;

	*stage = "register ring memory";
	s->mr = ibv_reg_mr(s->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return errno ? errno : ENOMEM;
	return 0;
}

// ibs_attach_flow steers every packet of the port, both directions, to the QP.
static int ibs_attach_flow(struct ibs_sniffer *s, int port) {
	struct ibv_flow_attr fa;
	memset(&fa, 0, sizeof fa);
	fa.type = IBV_FLOW_ATTR_SNIFFER;
	fa.size = sizeof fa;
	fa.port = port;
	s->flow = ibv_create_flow(s->qp, &fa);
	return s->flow ? 0 : (errno ? errno : EOPNOTSUPP);
}

// ibs_post posts n receive requests, slot ids[i] at buf + ids[i]*slot_bytes.
static int ibs_post(struct ibs_sniffer *s, const uint32_t *ids, int n, uint32_t slot_bytes, int *posted) {
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr[64];
	*posted = 0;
	while (*posted < n) {
		int k = n - *posted;
		if (k > 64)
			k = 64;
		for (int i = 0; i < k; i++) {
			uint32_t id = ids[*posted + i];
			sge[i].addr = (uintptr_t)s->mr->addr + (uint64_t)id * slot_bytes;
			sge[i].length = slot_bytes;
			sge[i].lkey = s->mr->lkey;
			wr[i].wr_id = id;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		struct ibv_recv_wr *bad = NULL;
		int rc = ibv_post_recv(s->qp, wr, &bad);
		if (rc) {
			if (bad)
				*posted += bad - wr;
			return rc;
		}
		*posted += k;
	}
	return 0;
}

// ibs_status_str names a completion status, for error messages.
static const char *ibs_status_str(uint32_t status) {
	return ibv_wc_status_str((enum ibv_wc_status)status);
}

// ibs_poll fills up to max completions; it returns how many, or -errno.
static int ibs_poll(struct ibs_sniffer *s, struct ibs_comp *out, int max) {
	struct ibv_poll_cq_attr pa;
	memset(&pa, 0, sizeof pa);
	int rc = ibv_start_poll(s->cq, &pa);
	if (rc == ENOENT)
		return 0;
	if (rc)
		return -rc;
	int n = 0;
	for (;;) {
		out[n].wr_id = s->cq->wr_id;
		out[n].status = s->cq->status;
		out[n].byte_len = ibv_wc_read_byte_len(s->cq);
		out[n].ts = s->wallclock ? ibv_wc_read_completion_wallclock_ns(s->cq) : ibv_wc_read_completion_ts(s->cq);
		n++;
		if (n == max || ibv_next_poll(s->cq) != 0)
			break;
	}
	ibv_end_poll(s->cq);
	return n;
}

static void ibs_close(struct ibs_sniffer *s) {
	if (s->flow)
		ibv_destroy_flow(s->flow);
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq));
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	memset(s, 0, sizeof *s);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ibscope/ibscope/decode"
)

// VerbsAvailable reports whether this build has the verbs backend.
const VerbsAvailable = true

// verbsPollBatch is how many completions one cgo call collects.
const verbsPollBatch = 64

// Idle polling backs off from verbsSpinMin to verbsSpinMax between empty
// polls: the posted ring absorbs what arrives meanwhile (at 200 µs and
// 10 Mpps, 2000 of the thousands of posted slots).
const (
	verbsSpinMin      = 2 * time.Microsecond
	verbsSpinMax      = 200 * time.Microsecond
	verbsReanchorEach = time.Second
)

// verbsSource captures from an RDMA port with a raw packet QP that a sniffer
// flow feeds with every packet of the port, both directions.
type verbsSource struct {
	s           C.struct_ibs_sniffer
	name        string
	port        RDMAPort
	mem         []byte // the ring's memory: mmap'd, so the GC never sees it and C may keep it
	ring        *recvRing
	clock       *hcaClock // nil when completions carry wall-clock ns
	anchorAt    time.Time
	snap        int
	all         bool // keep frames that are not RoCE (Ethernet ports)
	notRoCE     uint64
	pollTimeout time.Duration
	comps       [verbsPollBatch]C.struct_ibs_comp
	nComps      int
	next        int
	drops       *dropCounter
	errs        uint64 // completions with an error status
	firstErr    string // the status of the first of them
	received    uint64
	last        int64 // slot of the packet handed out last, -1 if none
}

func openVerbs(dev RDMADevice, port int, c Config) (Source, error) {
	p, err := selectPort(dev, port)
	if err != nil {
		return nil, err
	}
	v := &verbsSource{name: fmt.Sprintf("%s port %d", dev.Name, p.Num), port: p, snap: c.SnapLenBytes,
		all: c.All || portLinkType(p) != decode.LinkTypeEthernet, pollTimeout: time.Duration(c.PollTimeoutMs) * time.Millisecond, last: -1}
	cname := C.CString(dev.Name)
	defer C.free(unsafe.Pointer(cname))
	var cerr C.int
	var stage *C.char
	v.s.ctx = C.ibs_open_device(cname, &cerr, &stage)
	if v.s.ctx == nil {
		if syscall.Errno(cerr) == syscall.ENODEV {
			return nil, fmt.Errorf("capture on %s: %w", dev.Name, errNoDevice)
		}
		return nil, verbsStageError(dev.Name, C.GoString(stage), syscall.Errno(cerr))
	}
	ok := false
	defer func() {
		if !ok {
			v.Close()
		}
	}()
	var info C.struct_ibs_info
	if rc := C.ibs_query(v.s.ctx, &info); rc != 0 {
		return nil, verbsStageError(dev.Name, "query device", syscall.Errno(rc))
	}
	plan, err := planRing(c.RingBytes, portFrameBytes(p), int(info.max_qp_wr))
	if err != nil {
		return nil, fmt.Errorf("capture on %s: %w", v.name, err)
	}
	v.ring = newRecvRing(plan)
	v.mem, err = unix.Mmap(-1, 0, plan.Slots*plan.SlotBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("capture on %s: ring memory (%d bytes): %w", v.name, plan.Slots*plan.SlotBytes, err)
	}
	if rc := C.ibs_setup(&v.s, C.int(p.Num), C.uint32_t(plan.Slots), unsafe.Pointer(&v.mem[0]), C.size_t(len(v.mem)), 1, &stage); rc != 0 {
		return nil, verbsStageError(dev.Name, C.GoString(stage), syscall.Errno(rc))
	}
	if v.s.wallclock == 0 {
		if v.clock, err = newHCAClock(uint64(info.hca_core_clock_khz), uint64(info.completion_timestamp_mask)); err != nil {
			return nil, fmt.Errorf("capture on %s: %w", v.name, err)
		}
		if err := v.reanchor(); err != nil {
			return nil, err
		}
	}
	if err := v.repost(true); err != nil {
		return nil, err
	}
	// Counters are read before the flow exists, so every drop of the
	// capture is counted and none before it.
	v.drops = newDropCounter(c.SysfsRoot, dev.Name, p.Num)
	if rc := C.ibs_attach_flow(&v.s, C.int(p.Num)); rc != 0 {
		return nil, verbsStageError(dev.Name, "create sniffer flow", syscall.Errno(rc))
	}
	ok = true
	return v, nil
}

// reanchor pairs the device clock with the host's wall clock.
func (v *verbsSource) reanchor() error {
	var sec, nsec C.int64_t
	before := time.Now()
	rc := C.ibs_raw_clock(v.s.ctx, &sec, &nsec)
	after := time.Now()
	if rc != 0 {
		return verbsStageError(v.name, "read the device clock (ibv_query_rt_values_ex)", syscall.Errno(rc))
	}
	v.clock.anchor(rawClockCycles(int64(sec), int64(nsec)), before.UnixNano(), after.UnixNano())
	v.anchorAt = after
	return nil
}

func (v *verbsSource) repost(force bool) error {
	ids := v.ring.toRepost(force)
	if len(ids) == 0 {
		return nil
	}
	var posted C.int
	rc := C.ibs_post(&v.s, (*C.uint32_t)(unsafe.Pointer(&ids[0])), C.int(len(ids)), C.uint32_t(v.ring.plan.SlotBytes), &posted)
	v.ring.reposted(int(posted))
	if rc != 0 {
		return verbsStageError(v.name, "post receive buffers", syscall.Errno(rc))
	}
	return nil
}

func (v *verbsSource) Next() (Packet, error) {
	for {
		if v.last >= 0 {
			// The caller is done with the last packet: its slot may go back.
			v.last = -1
			if err := v.repost(false); err != nil {
				return Packet{}, err
			}
		}
		if v.next >= v.nComps {
			if err := v.poll(); err != nil {
				return Packet{}, err
			}
		}
		for v.next < v.nComps {
			c := &v.comps[v.next]
			v.next++
			off, err := v.ring.completed(uint64(c.wr_id))
			if err != nil {
				return Packet{}, fmt.Errorf("capture on %s: %w", v.name, err)
			}
			v.last = int64(c.wr_id)
			if c.status == C.IBV_WC_WR_FLUSH_ERR {
				// The queue is in the error state (after a failed
				// completion, or a device error): every buffer comes
				// back flushed, empty, at once. Polling on would spin.
				return Packet{}, queueErrorState(v.name, v.firstErr)
			}
			if c.status != C.IBV_WC_SUCCESS {
				// Lost: a frame larger than a slot.
				v.errs++
				if v.firstErr == "" {
					v.firstErr = C.GoString(C.ibs_status_str(c.status))
				}
				continue
			}
			v.received++
			n := int(c.byte_len)
			whole := v.mem[off : off+min(n, v.ring.plan.SlotBytes)]
			// A sniffer flow has no kernel filter: the port's other traffic
			// is dropped here, by the rule the AF_PACKET filter applies.
			if !v.all && !IsRoCEFrame(whole) {
				v.notRoCE++
				continue
			}
			ts := int64(c.ts)
			if v.clock != nil {
				ts = v.clock.toNs(uint64(c.ts))
			}
			return Packet{Data: whole[:min(len(whole), v.snap)], TsNs: ts, WireLenBytes: n}, nil
		}
	}
}

// poll waits for the next batch of completions, backing off while the CQ
// is empty, and returns ErrTimeout after the poll interval.
func (v *verbsSource) poll() error {
	idle := verbsSpinMin
	var waited time.Duration
	for {
		n := C.ibs_poll(&v.s, &v.comps[0], verbsPollBatch)
		if n < 0 {
			return verbsStageError(v.name, "poll completions", syscall.Errno(-n))
		}
		if n > 0 {
			v.nComps, v.next = int(n), 0
			break
		}
		// Idle: give every read slot back before waiting.
		if err := v.repost(true); err != nil {
			return err
		}
		if waited >= v.pollTimeout {
			return ErrTimeout
		}
		time.Sleep(idle)
		waited += idle
		idle = min(2*idle, verbsSpinMax)
	}
	if v.clock != nil && time.Since(v.anchorAt) > verbsReanchorEach {
		return v.reanchor()
	}
	return nil
}

func (v *verbsSource) LinkType() int  { return portLinkType(v.port) }
func (v *verbsSource) Device() string { return v.name }

func (v *verbsSource) Stats() (Stats, error) {
	st := Stats{Received: v.received + v.errs, CompletionErrors: v.errs, NotRoCE: v.notRoCE, RingEmptied: v.ring.emptyEvents}
	if v.drops != nil {
		st.DeviceDrops, st.DeviceDropsKnown = v.drops.drops()
	}
	return st, nil
}

func (v *verbsSource) Close() error {
	C.ibs_close(&v.s)
	if v.mem != nil {
		unix.Munmap(v.mem)
		v.mem = nil
	}
	return nil
}
