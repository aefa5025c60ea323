//go:build linux && (amd64 || arm64)

package ibverbs

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestLayout pins every size and offset ibscope relies on to the numbers
// rdma-core 44's verbs.h gives (offsetof/sizeof, compiled with gcc for
// x86-64 and with aarch64-linux-gnu-gcc for arm64; glibc). Offsets in struct
// verbs_context are distances before its ibv_context, which is how they
// stay valid when newer libraries add operations at the front.
func TestLayout(t *testing.T) {
	arm := runtime.GOARCH == "arm64"
	pick := func(amd64, arm64 uintptr) uintptr {
		if arm {
			return arm64
		}
		return amd64
	}
	before := func(op uintptr) uintptr { return unsafe.Offsetof(verbsContext{}.context) - op }
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(struct ibv_context)", unsafe.Sizeof(ibvContext{}), pick(328, 336)},
		{"offsetof(ibv_context, ops.post_recv)", unsafe.Offsetof(ibvContext{}.ops) + unsafe.Offsetof(ibvContextOps{}.postRecv), 216},
		{"offsetof(ibv_context, mutex)", unsafe.Offsetof(ibvContext{}.mutex), 280},
		{"offsetof(ibv_context, abi_compat)", unsafe.Offsetof(ibvContext{}.abiCompat), pick(320, 328)},
		{"sizeof(struct verbs_context)", unsafe.Sizeof(verbsContext{}), pick(648, 656)},
		{"offsetof(verbs_context, context)", unsafe.Offsetof(verbsContext{}.context), 320},
		{"verbs_context: sz before context", before(unsafe.Offsetof(verbsContext{}.sz)), 8},
		{"verbs_context: query_device_ex before context", before(opQueryDeviceEx), 104},
		{"verbs_context: query_rt_values before context", before(opQueryRTValues), 128},
		{"verbs_context: create_cq_ex before context", before(opCreateCQEx), 120},
		{"verbs_context: ibv_create_flow before context", before(opCreateFlow), 80},
		{"verbs_context: ibv_destroy_flow before context", before(opDestroyFlow), 96},
		{"sizeof(struct ibv_device_attr)", unsafe.Sizeof(ibvDeviceAttr{}), 232},
		{"offsetof(ibv_device_attr, max_qp_wr)", unsafe.Offsetof(ibvDeviceAttr{}.maxQPWR), 112},
		{"sizeof(struct ibv_device_attr_ex)", unsafe.Sizeof(ibvDeviceAttrEx{}), 400},
		{"offsetof(ibv_device_attr_ex, comp_mask)", unsafe.Offsetof(ibvDeviceAttrEx{}.compMask), 232},
		{"offsetof(ibv_device_attr_ex, completion_timestamp_mask)", unsafe.Offsetof(ibvDeviceAttrEx{}.completionTimestampMask), 264},
		{"offsetof(ibv_device_attr_ex, hca_core_clock)", unsafe.Offsetof(ibvDeviceAttrEx{}.hcaCoreClock), 272},
		{"sizeof(struct ibv_values_ex)", unsafe.Sizeof(ibvValuesEx{}), 24},
		{"offsetof(ibv_values_ex, raw_clock)", unsafe.Offsetof(ibvValuesEx{}.rawClockSec), 8},
		{"sizeof(struct ibv_cq_init_attr_ex)", unsafe.Sizeof(ibvCQInitAttrEx{}), 56},
		{"offsetof(ibv_cq_init_attr_ex, comp_vector)", unsafe.Offsetof(ibvCQInitAttrEx{}.compVector), 24},
		{"offsetof(ibv_cq_init_attr_ex, wc_flags)", unsafe.Offsetof(ibvCQInitAttrEx{}.wcFlags), 32},
		{"offsetof(ibv_cq_init_attr_ex, comp_mask)", unsafe.Offsetof(ibvCQInitAttrEx{}.compMask), 40},
		{"offsetof(ibv_cq_init_attr_ex, flags)", unsafe.Offsetof(ibvCQInitAttrEx{}.flags), 44},
		{"offsetof(ibv_cq_init_attr_ex, parent_domain)", unsafe.Offsetof(ibvCQInitAttrEx{}.parentDomain), 48},
		{"sizeof(struct ibv_cq_ex)", unsafe.Sizeof(ibvCQEx{}), pick(288, 296)},
		{"offsetof(ibv_cq_ex, mutex)", unsafe.Offsetof(ibvCQEx{}.mutex), 32},
		{"offsetof(ibv_cq_ex, cond)", unsafe.Offsetof(ibvCQEx{}.cond), pick(72, 80)},
		{"offsetof(ibv_cq_ex, status)", unsafe.Offsetof(ibvCQEx{}.status), pick(132, 140)},
		{"offsetof(ibv_cq_ex, wr_id)", unsafe.Offsetof(ibvCQEx{}.wrID), pick(136, 144)},
		{"offsetof(ibv_cq_ex, start_poll)", unsafe.Offsetof(ibvCQEx{}.startPoll), pick(144, 152)},
		{"offsetof(ibv_cq_ex, next_poll)", unsafe.Offsetof(ibvCQEx{}.nextPoll), pick(152, 160)},
		{"offsetof(ibv_cq_ex, end_poll)", unsafe.Offsetof(ibvCQEx{}.endPoll), pick(160, 168)},
		{"offsetof(ibv_cq_ex, read_byte_len)", unsafe.Offsetof(ibvCQEx{}.readByteLen), pick(184, 192)},
		{"offsetof(ibv_cq_ex, read_completion_ts)", unsafe.Offsetof(ibvCQEx{}.readCompletionTS), pick(248, 256)},
		{"offsetof(ibv_cq_ex, read_completion_wallclock_ns)", unsafe.Offsetof(ibvCQEx{}.readCompletionWallclockNs), pick(280, 288)},
		{"sizeof(struct ibv_poll_cq_attr)", unsafe.Sizeof(ibvPollCQAttr{}), 4},
		{"sizeof(struct ibv_qp_init_attr)", unsafe.Sizeof(ibvQPInitAttr{}), 64},
		{"offsetof(ibv_qp_init_attr, send_cq)", unsafe.Offsetof(ibvQPInitAttr{}.sendCQ), 8},
		{"offsetof(ibv_qp_init_attr, recv_cq)", unsafe.Offsetof(ibvQPInitAttr{}.recvCQ), 16},
		{"offsetof(ibv_qp_init_attr, cap)", unsafe.Offsetof(ibvQPInitAttr{}.cap), 32},
		{"offsetof(ibv_qp_init_attr, qp_type)", unsafe.Offsetof(ibvQPInitAttr{}.qpType), 52},
		{"offsetof(ibv_qp_init_attr, sq_sig_all)", unsafe.Offsetof(ibvQPInitAttr{}.sqSigAll), 56},
		{"sizeof(struct ibv_qp_attr)", unsafe.Sizeof(ibvQPAttr{}), 144},
		{"offsetof(ibv_qp_attr, port_num)", unsafe.Offsetof(ibvQPAttr{}.portNum), 129},
		{"offsetof(ibv_qp, context)", unsafe.Offsetof(ibvQP{}.context), 0},
		{"offsetof(ibv_flow, context)", unsafe.Offsetof(ibvFlow{}.context), 8},
		{"sizeof(struct ibv_mr)", unsafe.Sizeof(ibvMR{}), 48},
		{"offsetof(ibv_mr, addr)", unsafe.Offsetof(ibvMR{}.addr), 16},
		{"offsetof(ibv_mr, lkey)", unsafe.Offsetof(ibvMR{}.lkey), 36},
		{"sizeof(struct ibv_sge)", unsafe.Sizeof(ibvSGE{}), 16},
		{"offsetof(ibv_sge, lkey)", unsafe.Offsetof(ibvSGE{}.lkey), 12},
		{"sizeof(struct ibv_recv_wr)", unsafe.Sizeof(ibvRecvWR{}), 32},
		{"offsetof(ibv_recv_wr, next)", unsafe.Offsetof(ibvRecvWR{}.next), 8},
		{"offsetof(ibv_recv_wr, sg_list)", unsafe.Offsetof(ibvRecvWR{}.sgList), 16},
		{"offsetof(ibv_recv_wr, num_sge)", unsafe.Offsetof(ibvRecvWR{}.numSGE), 24},
		{"sizeof(struct ibv_flow_attr)", unsafe.Sizeof(ibvFlowAttr{}), 20},
		{"offsetof(ibv_flow_attr, size)", unsafe.Offsetof(ibvFlowAttr{}.size), 8},
		{"offsetof(ibv_flow_attr, port)", unsafe.Offsetof(ibvFlowAttr{}.port), 13},
		{"offsetof(ibv_flow_attr, flags)", unsafe.Offsetof(ibvFlowAttr{}.flags), 16},

		// What the assembly in poll_*.s reads and writes.
		{"pollRequest.cq", unsafe.Offsetof(pollRequest{}.cq), 0},
		{"pollRequest.startPoll", unsafe.Offsetof(pollRequest{}.startPoll), 8},
		{"pollRequest.nextPoll", unsafe.Offsetof(pollRequest{}.nextPoll), 16},
		{"pollRequest.endPoll", unsafe.Offsetof(pollRequest{}.endPoll), 24},
		{"pollRequest.readByteLen", unsafe.Offsetof(pollRequest{}.readByteLen), 32},
		{"pollRequest.readTS", unsafe.Offsetof(pollRequest{}.readTS), 40},
		{"pollRequest.attr", unsafe.Offsetof(pollRequest{}.attr), 48},
		{"pollRequest.out", unsafe.Offsetof(pollRequest{}.out), 56},
		{"pollRequest.max", unsafe.Offsetof(pollRequest{}.max), 64},
		{"pollRequest.wrID", unsafe.Offsetof(pollRequest{}.wrID), 72},
		{"pollRequest.status", unsafe.Offsetof(pollRequest{}.status), 80},
		{"Completion.WRID", unsafe.Offsetof(Completion{}.WRID), 0},
		{"Completion.TS", unsafe.Offsetof(Completion{}.TS), 8},
		{"Completion.ByteLen", unsafe.Offsetof(Completion{}.ByteLen), 16},
		{"Completion.Status", unsafe.Offsetof(Completion{}.Status), 20},
		{"sizeof(Completion)", unsafe.Sizeof(Completion{}), 24},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
