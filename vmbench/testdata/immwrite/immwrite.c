/*
 * immwrite: RC RDMA WRITE with immediate between two rdma_cm endpoints, for
 * ibscope's SoftRoCE bench (vmbench/). Debian 12's perftest has no
 * --write_with_imm, and no other packaged tool posts one.
 *
 *   server: immwrite -l ADDR [-p PORT] [-n N] [-s SIZE] [-t SECONDS]
 *   client: immwrite -c ADDR -b SRC [-p PORT] [-n N] [-s SIZE] [-t SECONDS]
 *
 * The server registers a SIZE-byte buffer, posts N receives (a WRITE with
 * immediate consumes one) and accepts one connection, handing the buffer's
 * address, rkey and size to the client in the CM REP's private data. The
 * client posts N signalled writes of SIZE bytes with imm_data = htonl(i),
 * i = 0..N-1, and waits for every completion. The server expects N
 * IBV_WC_RECV_RDMA_WITH_IMM completions of SIZE bytes carrying 0..N-1 in
 * order, and the client's pattern in its buffer.
 *
 * The client binds SRC explicitly (rping's -I): with both devices on one
 * host, rdma_cm would otherwise resolve the local destination address to
 * the destination's own device, and nothing would cross the wire.
 *
 * Each side prints one result line on stdout and exits 0, or says on
 * stderr what failed and exits 1. -t bounds the whole run (default 60 s).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#define MAX_MSGS 8192         /* the server posts every receive at once; rxe allows 16384 a QP */
#define MAX_SIZE (16u << 20)  /* bytes a write */
#define SEND_DEPTH 64         /* the client's writes in flight */

/* What the server hands the client in the REP's private data, big-endian. */
struct remote_buf {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

/* One side's verbs resources: the QP itself belongs to the rdma_cm id. */
struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
};

static const char *role = "immwrite";

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void timed_out(int sig)
{
	static const char msg[] = "immwrite: timed out (-t)\n";

	(void)sig;
	(void)!write(2, msg, sizeof msg - 1);
	_exit(1);
}

static unsigned long number(char flag, const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *s == '\0' || *end != '\0' || v < min || v > max)
		fail("-%c %s: want a number from %lu to %lu", flag, s, min, max);
	return v;
}

static void resolve(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai;
	int rc = getaddrinfo(host, port, &hints, &ai);

	if (rc)
		fail("address %s: %s", host, gai_strerror(rc));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

/* expect waits for the next CM event, which must be want; the caller acks it. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ec, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ec, &ev))
		fail("waiting for %s: %s", rdma_event_str(want), strerror(errno));
	if (ev->event != want)
		fail("waiting for %s, got %s (status %d)", rdma_event_str(want),
		     rdma_event_str(ev->event), ev->status);
	return ev;
}

/* poll_one waits for the next successful completion, pausing while there is
 * none: the guest shares one emulated CPU with the capture. */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, unsigned long i)
{
	const struct timespec pause = { 0, 50000 };
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		nanosleep(&pause, NULL);
	if (n < 0)
		fail("ibv_poll_cq failed at completion %lu", i);
	if (wc->status != IBV_WC_SUCCESS)
		fail("completion %lu: %s", i, ibv_wc_status_str(wc->status));
}

static void setup(struct rdma_cm_id *id, struct side *s, size_t size, unsigned depth, int access)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (!(s->pd = ibv_alloc_pd(id->verbs)))
		fail("ibv_alloc_pd: %s", strerror(errno));
	if (!(s->cq = ibv_create_cq(id->verbs, depth, NULL, NULL, 0)))
		fail("ibv_create_cq(%u): %s", depth, strerror(errno));
	qa.send_cq = qa.recv_cq = s->cq;
	if (rdma_create_qp(id, s->pd, &qa))
		fail("rdma_create_qp: %s", strerror(errno));
	if (!(s->buf = calloc(1, size)))
		fail("%zu bytes: out of memory", size);
	if (!(s->mr = ibv_reg_mr(s->pd, s->buf, size, access)))
		fail("ibv_reg_mr: %s", strerror(errno));
}

static void teardown(struct rdma_cm_id *id, struct side *s)
{
	rdma_destroy_qp(id);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(s->cq);
	ibv_dealloc_pd(s->pd);
	free(s->buf);
}

/* The client's data, which the server finds in its buffer. */
static unsigned char pattern(size_t j) { return (unsigned char)(j % 251 + 1); }

static void server(const char *addr, const char *port, unsigned long n, unsigned long size)
{
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listener, *id;
	struct rdma_cm_event *ev;
	struct sockaddr_storage ss;
	struct side s;
	struct ibv_wc wc;
	unsigned long i;

	role = "immwrite server";
	resolve(addr, port, &ss);
	if (!(ec = rdma_create_event_channel()))
		fail("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(ec, &listener, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(listener, (struct sockaddr *)&ss))
		fail("rdma_bind_addr %s: %s", addr, strerror(errno));
	if (rdma_listen(listener, 1))
		fail("rdma_listen: %s", strerror(errno));
	fprintf(stderr, "%s: listening on %s port %s\n", role, addr, port);

	ev = expect(ec, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	setup(id, &s, size, n, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	for (i = 0; i < n; i++) {
		/* No scatter list: a WRITE with immediate places its data by
		 * its RETH and takes from the receive only its completion. */
		struct ibv_recv_wr wr = { .wr_id = i }, *bad;
		int rc = ibv_post_recv(id->qp, &wr, &bad);

		if (rc)
			fail("ibv_post_recv %lu: %s", i, strerror(rc));
	}
	struct remote_buf rb = { htobe64((uintptr_t)s.buf), htobe32(s.mr->rkey), htobe32(size) };
	struct rdma_conn_param cp = { .private_data = &rb, .private_data_len = sizeof rb, .rnr_retry_count = 7 };
	if (rdma_accept(id, &cp))
		fail("rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(ev);
	rdma_ack_cm_event(expect(ec, RDMA_CM_EVENT_ESTABLISHED));

	for (i = 0; i < n; i++) {
		poll_one(s.cq, &wc, i);
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM))
			fail("completion %lu: opcode %d flags 0x%x, want RECV_RDMA_WITH_IMM", i, wc.opcode, wc.wc_flags);
		if (ntohl(wc.imm_data) != i)
			fail("completion %lu: immediate %u, want %lu", i, ntohl(wc.imm_data), i);
		if (wc.byte_len != size)
			fail("completion %lu: %u bytes, want %lu", i, wc.byte_len, size);
	}
	for (i = 0; i < size; i++)
		if (s.buf[i] != pattern(i))
			fail("buffer byte %lu: 0x%02x, want 0x%02x", i, s.buf[i], pattern(i));

	rdma_ack_cm_event(expect(ec, RDMA_CM_EVENT_DISCONNECTED));
	rdma_disconnect(id); /* answers the client's DREQ */
	teardown(id, &s);
	rdma_destroy_id(id);
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ec);
	printf("%s: %lu RDMA WRITE with immediate of %lu bytes received, immediates 0..%lu in order\n",
	       role, n, size, n - 1);
}

static void client(const char *addr, const char *src, const char *port, unsigned long n, unsigned long size)
{
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct sockaddr_storage from, to;
	struct remote_buf rb;
	struct side s;
	struct ibv_wc wc;
	unsigned long posted = 0, done = 0, j;
	unsigned depth = n < SEND_DEPTH ? n : SEND_DEPTH;

	role = "immwrite client";
	resolve(src, "0", &from);
	resolve(addr, port, &to);
	if (!(ec = rdma_create_event_channel()))
		fail("rdma_create_event_channel: %s", strerror(errno));
	if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP))
		fail("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(id, (struct sockaddr *)&from, (struct sockaddr *)&to, 5000))
		fail("rdma_resolve_addr %s from %s: %s", addr, src, strerror(errno));
	rdma_ack_cm_event(expect(ec, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 5000))
		fail("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(expect(ec, RDMA_CM_EVENT_ROUTE_RESOLVED));

	setup(id, &s, size, depth, IBV_ACCESS_LOCAL_WRITE);
	for (j = 0; j < size; j++)
		s.buf[j] = pattern(j);
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	if (rdma_connect(id, &cp))
		fail("rdma_connect: %s", strerror(errno));
	ev = expect(ec, RDMA_CM_EVENT_ESTABLISHED);
	if (ev->param.conn.private_data_len < sizeof rb)
		fail("the server's REP carries %u bytes of private data, want %zu",
		     ev->param.conn.private_data_len, sizeof rb);
	memcpy(&rb, ev->param.conn.private_data, sizeof rb);
	rdma_ack_cm_event(ev);
	if (be32toh(rb.size) < size)
		fail("the server's buffer holds %u bytes, want %lu", be32toh(rb.size), size);

	while (done < n) {
		while (posted < n && posted - done < depth) {
			struct ibv_sge sge = { (uintptr_t)s.buf, size, s.mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl(posted),
				.wr.rdma = { .remote_addr = be64toh(rb.addr), .rkey = be32toh(rb.rkey) },
			}, *bad;
			int rc = ibv_post_send(id->qp, &wr, &bad);

			if (rc)
				fail("ibv_post_send %lu: %s", posted, strerror(rc));
			posted++;
		}
		poll_one(s.cq, &wc, done);
		if (wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id != done)
			fail("completion %lu: opcode %d of request %lu, want RDMA_WRITE of %lu",
			     done, wc.opcode, (unsigned long)wc.wr_id, done);
		done++;
	}

	if (rdma_disconnect(id))
		fail("rdma_disconnect: %s", strerror(errno));
	rdma_ack_cm_event(expect(ec, RDMA_CM_EVENT_DISCONNECTED));
	teardown(id, &s);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ec);
	printf("%s: %lu RDMA WRITE with immediate of %lu bytes from %s to %s completed\n",
	       role, n, size, src, addr);
}

static void usage(void)
{
	fprintf(stderr, "usage: immwrite -l ADDR [-p PORT] [-n N] [-s SIZE] [-t SECONDS]\n"
			"       immwrite -c ADDR -b SRC [-p PORT] [-n N] [-s SIZE] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *listen_addr = NULL, *connect_addr = NULL, *src = NULL, *port = "7471";
	unsigned long n = 100, size = 4096, seconds = 60;
	int opt;

	while ((opt = getopt(argc, argv, "l:c:b:p:n:s:t:")) != -1) {
		switch (opt) {
		case 'l': listen_addr = optarg; break;
		case 'c': connect_addr = optarg; break;
		case 'b': src = optarg; break;
		case 'p': number('p', port = optarg, 1, 65535); break;
		case 'n': n = number('n', optarg, 1, MAX_MSGS); break;
		case 's': size = number('s', optarg, 1, MAX_SIZE); break;
		case 't': seconds = number('t', optarg, 1, 3600); break;
		default: usage();
		}
	}
	if (optind != argc || !listen_addr == !connect_addr || (connect_addr && !src) || (listen_addr && src))
		usage();
	signal(SIGALRM, timed_out);
	alarm(seconds);
	if (listen_addr)
		server(listen_addr, port, n, size);
	else
		client(connect_addr, src, port, n, size);
	return 0;
}
