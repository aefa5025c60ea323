//go:build linux && (amd64 || arm64)

package ibverbs

import "structs"

// The Go types below mirror the structs of rdma-core's libibverbs/verbs.h
// (checked against rdma-core 44) that ibscope reads or fills. libibverbs.so.1
// keeps them stable: its ABI only grows structs at the end (or, for struct
// verbs_context, at the front) and says which parts exist (verbs_context.sz,
// the comp_mask fields). layout_test.go pins every size and offset used.
// Fields ibscope never touches are blank; each type forces 8-byte alignment
// ([0]uint64) as the C structs that hold pointers or 64-bit values have it.

// ibvContextOps mirrors struct ibv_context_ops: 32 function pointers, of
// which the sniffer calls post_recv (what the static inline ibv_post_recv
// calls).
type ibvContextOps struct {
	_        structs.HostLayout
	_        [26]uintptr
	postRecv uintptr // int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **)
	_        [5]uintptr
}

// ibvContext mirrors struct ibv_context. When abi_compat is
// verbsABIIsExtended, a struct verbs_context ends right at it.
type ibvContext struct {
	_              structs.HostLayout
	device         uintptr
	ops            ibvContextOps
	cmdFD          int32
	asyncFD        int32
	numCompVectors int32
	mutex          pthreadMutex
	abiCompat      uintptr
}

// verbsABIIsExtended is __VERBS_ABI_IS_EXTENDED: ibv_context.abi_compat of
// a context that is the tail of a struct verbs_context.
const verbsABIIsExtended = ^uintptr(0)

// verbsContext mirrors struct verbs_context as rdma-core 44 has it. It
// "grows up": newer libraries add operations at the front, so an operation
// is found at a fixed distance before the ibv_context, and exists only when
// the library's sz (its sizeof(struct verbs_context)) reaches it; see
// ctxOp, which does what verbs_get_ctx_op does.
type verbsContext struct {
	_              structs.HostLayout
	_              [24]uintptr // query_port ... create_wq
	queryRTValues  uintptr     // int (*)(struct ibv_context *, struct ibv_values_ex *)
	createCQEx     uintptr     // struct ibv_cq_ex *(*)(struct ibv_context *, struct ibv_cq_init_attr_ex *)
	priv           uintptr
	queryDeviceEx  uintptr    // int (*)(struct ibv_context *, const struct ibv_query_device_ex_input *, struct ibv_device_attr_ex *, size_t)
	ibvDestroyFlow uintptr    // int (*)(struct ibv_flow *)
	_              uintptr    // ABI_placeholder2
	ibvCreateFlow  uintptr    // struct ibv_flow *(*)(struct ibv_qp *, struct ibv_flow_attr *)
	_              uintptr    // ABI_placeholder1
	_              [6]uintptr // open_qp ... close_xrcd
	_              uint64     // _ABI_placeholder3
	sz             uintptr    // size_t: the library's sizeof(struct verbs_context)
	context        ibvContext
}

// ibvDeviceAttr mirrors struct ibv_device_attr (ibv_query_device).
type ibvDeviceAttr struct {
	_            structs.HostLayout
	_            [0]uint64
	fwVer        [64]byte
	nodeGUID     uint64
	sysImageGUID uint64
	maxMRSize    uint64
	pageSizeCap  uint64
	vendorID     uint32
	vendorPartID uint32
	hwVer        uint32
	maxQP        int32
	maxQPWR      int32
	_            [27]int32 // device_cap_flags ... max_srq_sge
	maxPkeys     uint16
	_            uint8 // local_ca_ack_delay
	physPortCnt  uint8
}

// ibvDeviceAttrEx mirrors struct ibv_device_attr_ex (ibv_query_device_ex),
// 400 bytes in rdma-core 44: the size passed to query_device_ex, which
// fills what fits.
type ibvDeviceAttrEx struct {
	_                       structs.HostLayout
	origAttr                ibvDeviceAttr
	compMask                uint32
	_                       [3]uint64 // struct ibv_odp_caps
	completionTimestampMask uint64
	hcaCoreClock            uint64 // kHz
	_                       [15]uint64
}

// ibvValuesEx mirrors struct ibv_values_ex (ibv_query_rt_values_ex).
type ibvValuesEx struct {
	_           structs.HostLayout
	_           [0]uint64
	compMask    uint32
	rawClockSec int64 // struct timespec raw_clock: providers put the cycle count in it
	rawClockNs  int64
}

// ibvCQInitAttrEx mirrors struct ibv_cq_init_attr_ex.
type ibvCQInitAttrEx struct {
	_            structs.HostLayout
	cqe          uint32
	cqContext    uintptr
	channel      uintptr
	compVector   uint32
	wcFlags      uint64
	compMask     uint32
	flags        uint32
	parentDomain uintptr
}

// ibvCQEx mirrors struct ibv_cq_ex: the fields of struct ibv_cq, then the
// current completion's status and wr_id and the poll functions (what the
// static inline ibv_start_poll, ibv_next_poll, ibv_end_poll and
// ibv_wc_read_* call).
type ibvCQEx struct {
	_                         structs.HostLayout
	context                   uintptr
	channel                   uintptr
	cqContext                 uintptr
	handle                    uint32
	cqe                       int32
	mutex                     pthreadMutex
	cond                      pthreadCond
	compEventsCompleted       uint32
	asyncEventsCompleted      uint32
	compMask                  uint32
	status                    uint32 // enum ibv_wc_status
	wrID                      uint64
	startPoll                 uintptr // int (*)(struct ibv_cq_ex *, struct ibv_poll_cq_attr *)
	nextPoll                  uintptr // int (*)(struct ibv_cq_ex *)
	endPoll                   uintptr // void (*)(struct ibv_cq_ex *)
	readOpcode                uintptr
	readVendorErr             uintptr
	readByteLen               uintptr // uint32_t (*)(struct ibv_cq_ex *)
	readImmData               uintptr
	readQPNum                 uintptr
	readSrcQP                 uintptr
	readWCFlags               uintptr
	readSlid                  uintptr
	readSL                    uintptr
	readDlidPathBits          uintptr
	readCompletionTS          uintptr // uint64_t (*)(struct ibv_cq_ex *): raw cycles
	readCVLAN                 uintptr
	readFlowTag               uintptr
	readTMInfo                uintptr
	readCompletionWallclockNs uintptr // uint64_t (*)(struct ibv_cq_ex *)
}

// ibvPollCQAttr mirrors struct ibv_poll_cq_attr.
type ibvPollCQAttr struct {
	_        structs.HostLayout
	compMask uint32
}

// ibvQPCap mirrors struct ibv_qp_cap.
type ibvQPCap struct {
	_             structs.HostLayout
	maxSendWR     uint32
	maxRecvWR     uint32
	maxSendSGE    uint32
	maxRecvSGE    uint32
	maxInlineData uint32
}

// ibvQPInitAttr mirrors struct ibv_qp_init_attr (ibv_create_qp).
type ibvQPInitAttr struct {
	_         structs.HostLayout
	qpContext uintptr
	sendCQ    uintptr
	recvCQ    uintptr
	srq       uintptr
	cap       ibvQPCap
	qpType    uint32
	sqSigAll  int32
}

// ibvQPAttr mirrors struct ibv_qp_attr (ibv_modify_qp), of which the
// sniffer sets qp_state and port_num.
type ibvQPAttr struct {
	_       structs.HostLayout
	_       [0]uint64
	qpState uint32
	_       [125]byte // cur_qp_state ... min_rnr_timer
	portNum uint8
	_       [14]byte // timeout ... rate_limit
}

// ibvQP mirrors the start of struct ibv_qp.
type ibvQP struct {
	_       structs.HostLayout
	context uintptr
}

// ibvFlow mirrors the start of struct ibv_flow.
type ibvFlow struct {
	_        structs.HostLayout
	compMask uint32
	context  uintptr
}

// ibvMR mirrors struct ibv_mr.
type ibvMR struct {
	_       structs.HostLayout
	context uintptr
	pd      uintptr
	addr    uintptr
	length  uint64
	handle  uint32
	lkey    uint32
	rkey    uint32
}

// ibvSGE mirrors struct ibv_sge.
type ibvSGE struct {
	_      structs.HostLayout
	addr   uint64
	length uint32
	lkey   uint32
}

// ibvRecvWR mirrors struct ibv_recv_wr.
type ibvRecvWR struct {
	_      structs.HostLayout
	wrID   uint64
	next   uintptr
	sgList uintptr
	numSGE int32
}

// ibvFlowAttr mirrors struct ibv_flow_attr, without specs: a sniffer flow
// has none.
type ibvFlowAttr struct {
	_          structs.HostLayout
	compMask   uint32
	typ        uint32
	size       uint16
	priority   uint16
	numOfSpecs uint8
	port       uint8
	flags      uint32
}

// Constants of verbs.h's enums.
const (
	ibvWCSuccess    = 0 // IBV_WC_SUCCESS
	ibvWCWRFlushErr = 5 // IBV_WC_WR_FLUSH_ERR

	ibvWCExWithByteLen                      = 1 << 0  // IBV_WC_EX_WITH_BYTE_LEN
	ibvWCExWithCompletionTimestamp          = 1 << 7  // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP
	ibvWCExWithCompletionTimestampWallclock = 1 << 11 // IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK
	ibvCQInitAttrMaskFlags                  = 1 << 0  // IBV_CQ_INIT_ATTR_MASK_FLAGS
	ibvCreateCQAttrSingleThreaded           = 1 << 0  // IBV_CREATE_CQ_ATTR_SINGLE_THREADED

	ibvQPTRawPacket = 8 // IBV_QPT_RAW_PACKET
	ibvQPSInit      = 1 // IBV_QPS_INIT
	ibvQPSRTR       = 2 // IBV_QPS_RTR
	ibvQPState      = 1 << 0
	ibvQPPort       = 1 << 5

	ibvAccessLocalWrite   = 1      // IBV_ACCESS_LOCAL_WRITE
	ibvFlowAttrSniffer    = 3      // IBV_FLOW_ATTR_SNIFFER
	ibvValuesMaskRawClock = 1 << 0 // IBV_VALUES_MASK_RAW_CLOCK
)

// Status codes of a completion the capture tells apart.
const (
	StatusSuccess  = ibvWCSuccess
	StatusFlushErr = ibvWCWRFlushErr
)
