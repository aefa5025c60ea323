// contract_check drives the libibverbs test double through the header's
// own inline verbs (ibv_create_cq_ex, ibv_post_recv, ibv_start_poll, ...):
// one scenario per run, named by argv[1]. "good" is a correct sniffer's
// life; each other scenario breaks one rule of the contract and checks
// that the double fails the call as rdma-core does. It prints what went
// unexpectedly and exits 1; the Go test reads the double's log for the
// violation each scenario must leave.
#include <infiniband/verbs.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define expect(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

enum { SLOTS = 8, SLOT_BYTES = 2048 };
static char ring[SLOTS * SLOT_BYTES];

struct sniffer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
};

static struct ibv_cq_ex *make_cq(struct ibv_context *ctx, uint64_t wc_flags) {
	struct ibv_cq_init_attr_ex a;
	memset(&a, 0, sizeof a);
	a.cqe = SLOTS;
	a.wc_flags = wc_flags;
	return ibv_create_cq_ex(ctx, &a);
}

static struct ibv_qp *make_qp(struct sniffer *s, enum ibv_qp_type type) {
	struct ibv_qp_init_attr a;
	memset(&a, 0, sizeof a);
	a.send_cq = a.recv_cq = ibv_cq_ex_to_cq(s->cq);
	a.qp_type = type;
	a.cap.max_recv_wr = SLOTS;
	a.cap.max_recv_sge = 1;
	return ibv_create_qp(s->pd, &a);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state st, int port) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.qp_state = st;
	a.port_num = (uint8_t)port;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | (port ? IBV_QP_PORT : 0));
}

// open_sniffer opens fake_1 and makes a PD, a CQ with wc_flags, a raw
// packet QP in RTR on port 1 and an MR over the ring.
static void open_sniffer(struct sniffer *s, uint64_t wc_flags) {
	memset(s, 0, sizeof *s);
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	expect(list && n == 2, "ibv_get_device_list: %d devices", n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "fake_1"))
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx) {
		fprintf(stderr, "cannot open fake_1\n");
		exit(1);
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = make_cq(s->ctx, wc_flags);
	s->qp = make_qp(s, IBV_QPT_RAW_PACKET);
	expect(s->pd && s->cq && s->qp, "setup: pd %p cq %p qp %p (errno %d)", (void *)s->pd, (void *)s->cq, (void *)s->qp, errno);
	expect(to_state(s->qp, IBV_QPS_INIT, 1) == 0 && to_state(s->qp, IBV_QPS_RTR, 0) == 0, "QP to INIT, RTR");
	s->mr = ibv_reg_mr(s->pd, ring, sizeof ring, IBV_ACCESS_LOCAL_WRITE);
	expect(s->mr, "ibv_reg_mr: errno %d", errno);
}

static int post(struct sniffer *s, uint64_t id, uint64_t addr, uint32_t len) {
	struct ibv_sge sge = {.addr = addr, .length = len, .lkey = s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
	return ibv_post_recv(s->qp, &wr, &bad);
}

static struct ibv_flow *sniff(struct sniffer *s, enum ibv_flow_attr_type type, int port) {
	struct ibv_flow_attr fa;
	memset(&fa, 0, sizeof fa);
	fa.type = type;
	fa.size = sizeof fa;
	fa.port = (uint8_t)port;
	return ibv_create_flow(s->qp, &fa);
}

static void close_sniffer(struct sniffer *s) {
	expect(ibv_destroy_qp(s->qp) == 0, "ibv_destroy_qp");
	expect(ibv_dereg_mr(s->mr) == 0, "ibv_dereg_mr");
	expect(ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq)) == 0, "ibv_destroy_cq");
	expect(ibv_dealloc_pd(s->pd) == 0, "ibv_dealloc_pd");
	expect(ibv_close_device(s->ctx) == 0, "ibv_close_device");
}

static const uint64_t ts_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;

int main(int argc, char **argv) {
	const char *sc = argc > 1 ? argv[1] : "";
	struct sniffer s;
	open_sniffer(&s, strcmp(sc, "ts_without_flag") ? ts_flags : IBV_WC_EX_WITH_BYTE_LEN);
	uintptr_t base = (uintptr_t)ring;

	if (!strcmp(sc, "good") || !strcmp(sc, "ts_without_flag") || !strcmp(sc, "double_start")) {
		for (int i = 0; i < SLOTS; i++)
			expect(post(&s, (uint64_t)i, base + (uint64_t)i * SLOT_BYTES, SLOT_BYTES) == 0, "post %d", i);
		struct ibv_flow *flow = sniff(&s, IBV_FLOW_ATTR_SNIFFER, 1);
		expect(flow, "ibv_create_flow: errno %d", errno);
		struct ibv_poll_cq_attr pa = {0};
		int got = 0;
		int rc = ibv_start_poll(s.cq, &pa);
		if (!strcmp(sc, "double_start"))
			expect(ibv_start_poll(s.cq, &pa) == EINVAL, "a second ibv_start_poll succeeded");
		for (; rc == 0; rc = ibv_next_poll(s.cq)) {
			expect(s.cq->status == IBV_WC_SUCCESS && s.cq->wr_id == (uint64_t)got, "completion %d: status %d wr_id %llu",
			       got, s.cq->status, (unsigned long long)s.cq->wr_id);
			expect(ibv_wc_read_byte_len(s.cq) > 0, "byte_len");
			uint64_t ts = ibv_wc_read_completion_ts(s.cq);
			expect(strcmp(sc, "ts_without_flag") || ts == 0xbadbadbadull, "a timestamp from a CQ without them");
			got++;
		}
		expect(rc == ENOENT, "poll ended with %d", rc);
		ibv_end_poll(s.cq);
		expect(got == 3, "%d completions of the 3 frames fed", got);
		expect(ibv_destroy_flow(flow) == 0, "ibv_destroy_flow");
	} else if (!strcmp(sc, "qp_type")) {
		errno = 0;
		expect(make_qp(&s, IBV_QPT_UD) == NULL && errno == EINVAL, "a UD QP: errno %d", errno);
	} else if (!strcmp(sc, "state_order")) {
		struct ibv_qp *qp = make_qp(&s, IBV_QPT_RAW_PACKET);
		expect(to_state(qp, IBV_QPS_RTR, 0) == EINVAL, "RESET to RTR allowed");
		expect(ibv_destroy_qp(qp) == 0, "destroy");
	} else if (!strcmp(sc, "outside_mr")) {
		expect(post(&s, 1, base + sizeof ring - 100, SLOT_BYTES) == EINVAL, "a buffer past the MR's end posted");
	} else if (!strcmp(sc, "repost")) {
		expect(post(&s, 1, base, SLOT_BYTES) == 0, "post");
		expect(post(&s, 2, base, SLOT_BYTES) == EINVAL, "the same buffer posted twice");
	} else if (!strcmp(sc, "pd_busy")) {
		expect(ibv_dealloc_pd(s.pd) == EBUSY, "a PD with a QP and an MR deallocated");
	} else if (!strcmp(sc, "flow_port")) {
		errno = 0;
		expect(sniff(&s, IBV_FLOW_ATTR_SNIFFER, 2) == NULL && errno == EINVAL, "a flow on another port: errno %d", errno);
	} else if (!strcmp(sc, "flow_type")) {
		errno = 0;
		expect(sniff(&s, IBV_FLOW_ATTR_NORMAL, 1) == NULL && errno == EINVAL, "a normal flow: errno %d", errno);
	} else {
		fprintf(stderr, "unknown scenario %s\n", sc);
		return 2;
	}
	close_sniffer(&s);
	return failures ? 1 : 0;
}
