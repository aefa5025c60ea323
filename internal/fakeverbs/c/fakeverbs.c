// fakeverbs is a test double of rdma-core's libibverbs.so.1 for ibscope's
// verbs sniffer: it exports the library's symbols (with its symbol
// versions) and fills the structures of the real <infiniband/verbs.h>, so
// the static inline verbs of the header (ibv_create_cq_ex, ibv_create_flow,
// ibv_post_recv, ibv_start_poll, ...) reach its functions exactly as they
// reach a provider's.
//
// It presents the devices its configuration names and feeds the receive
// queue of a sniffer QP with the frames of a pcap file, stamped by a
// simulated HCA clock. It holds the caller to the documented contract
// (QP type and states, sniffer flow on the QP's port, receive buffers
// inside a registered MR of the QP's PD and never posted twice, timestamps
// only from a CQ created to carry them, destruction in reverse order),
// failing as the real library does (errno and NULL, or a nonzero return)
// and logging each violation. Faults are injected on request.
//
// Configuration: the file named by $FAKEVERBS_CONFIG, else
// $TMPDIR/fakeverbs-<pid>.conf (so a test can configure the double of its
// own process without the environment), read again at each
// ibv_get_device_list. One "key value..." per line:
//
//	log PATH               where events and violations go (appended)
//	sysfs ROOT             the fake /sys/class/infiniband: drops are added
//	                       to ROOT/DEV/ports/N/hw_counters/out_of_buffer
//	device NAME NPORTS     a device libibverbs lists (repeatable)
//	feed PATH              pcap (ns or us, little-endian) of frames to deliver
//	feed_loops N           deliver the file N times (0: forever)
//	pace 0|1               deliver each frame when its time (below) has come,
//	                       not as soon as a buffer is posted
//	hca_clock_khz N        device clock frequency (default 1000000)
//	ts_mask_bits N         completion_timestamp_mask width (default 48)
//	clock_origin CYCLES    device clock at ibv_open_device (wraps past the mask)
//	wallclock 0|1          whether CQs may carry wall-clock ns (default 0)
//	max_qp_wr N            receive requests per QP (default 32768)
//	burst_at I N           frames I..I+N-1 arrive at once: those finding no
//	                       posted buffer are dropped and counted
//	error_at I STATUS      frame I completes with STATUS (enum ibv_wc_status);
//	                       the QP then goes to the error state
//	flush_at I             the QP goes to the error state before frame I
//	fatal_at I             the device dies before frame I (ENODEV, async event)
//	fail OP ERRNO          OP fails with ERRNO: get_device_list open_device
//	                       alloc_pd reg_mr create_cq_ex create_qp modify_qp
//	                       create_flow query_device_ex query_rt_values
//	no_op OP               the verbs_context has no OP (query_device_ex,
//	                       create_cq_ex, query_rt_values, create_flow)
//
// Truth: the feed starts at T (CLOCK_REALTIME when the sniffer flow is
// created); frame i of loop k arrives at T + (ts_i - ts_0) + k*(span +
// 1 us), its completion timestamp is clock(that time), where clock(t) =
// (clock_origin + floor((t - t_open) * khz / 1e6)) & mask and t_open is
// CLOCK_REALTIME at ibv_open_device; ibv_query_rt_values_ex returns
// clock(now). The log says "feed_start_ns T" and "open_ns t_open".
//
// Delivery is polite unless told otherwise: at each ibv_start_poll the
// next frames (with pace, those whose time has come) go into posted
// buffers while there are some, so no frame is lost. A real device drops
// what finds no buffer; burst_at does that.
//
// Log lines: "list N devices", "open DEV open_ns T", "close DEV",
// "feed_start_ns T frames N", "drop I", "fault: ...", "violation: ...".

#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#define FV_MAX_DEVICES 8
#define FV_MAX_MRS 4096
#define FV_MAX_QPS 4096
#define FV_ALIVE 0x46564f4bu // "FVOK"
#define FV_DEAD 0x46564445u  // "FVDE"

enum fv_op {
	OP_GET_DEVICE_LIST, OP_OPEN_DEVICE, OP_ALLOC_PD, OP_REG_MR, OP_CREATE_CQ_EX,
	OP_CREATE_QP, OP_MODIFY_QP, OP_CREATE_FLOW, OP_QUERY_DEVICE_EX, OP_QUERY_RT_VALUES,
	OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
	"get_device_list", "open_device", "alloc_pd", "reg_mr", "create_cq_ex",
	"create_qp", "modify_qp", "create_flow", "query_device_ex", "query_rt_values",
};

struct fv_config {
	char log[4096], sysfs[4096], feed[4096];
	int ndev;
	char dev_name[FV_MAX_DEVICES][64];
	int dev_ports[FV_MAX_DEVICES];
	uint64_t feed_loops, khz, mask, origin, max_qp_wr;
	int wallclock;
	int pace;
	int64_t burst_at, burst_n, error_at, flush_at, fatal_at;
	int error_status;
	int fail[OP_COUNT];
	int no_op[OP_COUNT];
};

// The frames of the feed, read once per ibv_get_device_list.
struct fv_feed {
	uint8_t *data;
	size_t nframes;
	size_t *off;
	uint32_t *len;
	int64_t *ts_ns;
	int64_t span_ns;
};

static struct fv_config cfg;
static struct fv_feed feed;
static struct ibv_device devices[FV_MAX_DEVICES];
static struct ibv_device *device_list[FV_MAX_DEVICES + 1];
static FILE *logf;

static void fv_log(const char *fmt, ...) {
	if (!logf)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
	fflush(logf);
}

#define violation(...) fv_log("violation: " __VA_ARGS__)

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// ---- configuration and feed ----

static void config_defaults(void) {
	memset(&cfg, 0, sizeof cfg);
	cfg.feed_loops = 1;
	cfg.khz = 1000000;
	cfg.mask = (1ull << 48) - 1;
	cfg.max_qp_wr = 32768;
	cfg.burst_at = cfg.error_at = cfg.flush_at = cfg.fatal_at = -1;
}

static int op_index(const char *name) {
	if (strcmp(name, "create_flow") == 0 || strcmp(name, "ibv_create_flow") == 0)
		return OP_CREATE_FLOW;
	for (int i = 0; i < OP_COUNT; i++)
		if (strcmp(name, op_names[i]) == 0)
			return i;
	return -1;
}

static void config_path(char *out, size_t n) {
	const char *p = getenv("FAKEVERBS_CONFIG");
	if (p && *p) {
		snprintf(out, n, "%s", p);
		return;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(out, n, "%s/fakeverbs-%d.conf", tmp && *tmp ? tmp : "/tmp", (int)getpid());
}

static void load_config(void) {
	config_defaults();
	char path[4096];
	config_path(path, sizeof path);
	FILE *f = fopen(path, "r");
	if (!f)
		return; // no configuration: no devices, as on a machine without RDMA
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		char key[64], a[4096], b[64];
		a[0] = b[0] = 0;
		int n = sscanf(line, "%63s %4095s %63s", key, a, b);
		if (n < 2)
			continue;
		uint64_t va = strtoull(a, NULL, 0), vb = strtoull(b, NULL, 0);
		if (!strcmp(key, "log"))
			snprintf(cfg.log, sizeof cfg.log, "%s", a);
		else if (!strcmp(key, "sysfs"))
			snprintf(cfg.sysfs, sizeof cfg.sysfs, "%s", a);
		else if (!strcmp(key, "feed"))
			snprintf(cfg.feed, sizeof cfg.feed, "%s", a);
		else if (!strcmp(key, "device") && cfg.ndev < FV_MAX_DEVICES) {
			snprintf(cfg.dev_name[cfg.ndev], 64, "%s", a);
			cfg.dev_ports[cfg.ndev++] = n > 2 ? (int)vb : 1;
		} else if (!strcmp(key, "feed_loops"))
			cfg.feed_loops = va;
		else if (!strcmp(key, "hca_clock_khz"))
			cfg.khz = va;
		else if (!strcmp(key, "ts_mask_bits"))
			cfg.mask = va >= 64 ? ~0ull : (1ull << va) - 1;
		else if (!strcmp(key, "clock_origin"))
			cfg.origin = va;
		else if (!strcmp(key, "pace"))
			cfg.pace = va != 0;
		else if (!strcmp(key, "wallclock"))
			cfg.wallclock = va != 0;
		else if (!strcmp(key, "max_qp_wr"))
			cfg.max_qp_wr = va;
		else if (!strcmp(key, "burst_at"))
			cfg.burst_at = (int64_t)va, cfg.burst_n = (int64_t)vb;
		else if (!strcmp(key, "error_at"))
			cfg.error_at = (int64_t)va, cfg.error_status = n > 2 ? (int)vb : IBV_WC_LOC_LEN_ERR;
		else if (!strcmp(key, "flush_at"))
			cfg.flush_at = (int64_t)va;
		else if (!strcmp(key, "fatal_at"))
			cfg.fatal_at = (int64_t)va;
		else if (!strcmp(key, "fail") || !strcmp(key, "no_op")) {
			int op = op_index(a);
			if (op < 0)
				continue;
			if (key[0] == 'f')
				cfg.fail[op] = (int)vb;
			else
				cfg.no_op[op] = 1;
		}
	}
	fclose(f);
}

static void free_feed(void) {
	free(feed.data);
	free(feed.off);
	free(feed.len);
	free(feed.ts_ns);
	memset(&feed, 0, sizeof feed);
}

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

// load_feed reads a little-endian pcap (ns or us timestamps) into memory.
static void load_feed(void) {
	free_feed();
	if (!cfg.feed[0])
		return;
	FILE *f = fopen(cfg.feed, "rb");
	if (!f) {
		fv_log("error: feed %s: %s", cfg.feed, strerror(errno));
		return;
	}
	struct stat st;
	fstat(fileno(f), &st);
	size_t size = (size_t)st.st_size;
	feed.data = malloc(size ? size : 1);
	if (fread(feed.data, 1, size, f) != size) {
		fv_log("error: feed %s: short read", cfg.feed);
		fclose(f);
		free_feed();
		return;
	}
	fclose(f);
	if (size < 24 || (le32(feed.data) != 0xa1b23c4d && le32(feed.data) != 0xa1b2c3d4)) {
		fv_log("error: feed %s: not a little-endian pcap", cfg.feed);
		free_feed();
		return;
	}
	int64_t frac = le32(feed.data) == 0xa1b23c4d ? 1 : 1000;
	size_t cap = 1024, n = 0;
	feed.off = malloc(cap * sizeof *feed.off);
	feed.len = malloc(cap * sizeof *feed.len);
	feed.ts_ns = malloc(cap * sizeof *feed.ts_ns);
	for (size_t p = 24; p + 16 <= size;) {
		uint32_t incl = le32(feed.data + p + 8);
		if (p + 16 + incl > size) {
			fv_log("error: feed %s: record at byte %zu is cut off", cfg.feed, p);
			break;
		}
		if (n == cap) {
			cap *= 2;
			feed.off = realloc(feed.off, cap * sizeof *feed.off);
			feed.len = realloc(feed.len, cap * sizeof *feed.len);
			feed.ts_ns = realloc(feed.ts_ns, cap * sizeof *feed.ts_ns);
		}
		feed.ts_ns[n] = (int64_t)le32(feed.data + p) * 1000000000 + (int64_t)le32(feed.data + p + 4) * frac;
		feed.off[n] = p + 16;
		feed.len[n] = incl;
		n++;
		p += 16 + incl;
	}
	feed.nframes = n;
	feed.span_ns = n ? feed.ts_ns[n - 1] - feed.ts_ns[0] : 0;
}

// ---- objects ----

struct fv_ctx {
	struct verbs_context vc; // ibv_context last, as providers lay it out
	uint32_t magic;
	int dev;
	int dead;
	int64_t open_ns;
	int live_pd, live_cq;
	int async_pending; // a device-fatal event waits for ibv_get_async_event
};

struct fv_pd {
	struct ibv_pd pd;
	uint32_t magic;
	int live_qp, live_mr;
};

struct fv_mr {
	struct ibv_mr mr;
	uint32_t magic;
	unsigned access;
	struct fv_qp *posted_by; // a QP holding receive buffers in it, for dereg checks
};

struct fv_cqe {
	uint64_t wr_id;
	uint32_t status, byte_len;
	uint64_t cycles;
	int64_t wall_ns;
};

struct fv_cq {
	struct ibv_cq_ex ex;
	uint32_t magic;
	struct fv_ctx *ctx;
	uint64_t wc_flags;
	uint32_t cap, head, count;
	struct fv_cqe *q;
	int polling;   // between a successful start_poll and end_poll
	int live_qp;   // QPs using it
};

struct fv_rwr {
	uint64_t wr_id, addr;
	uint32_t length, lkey;
};

struct fv_qp {
	struct ibv_qp qp;
	uint32_t magic;
	struct fv_pd *pd;
	struct fv_cq *cq;
	int port;
	uint32_t cap, max_sge, head, count;
	struct fv_rwr *rq;
	uint64_t *posted_addrs; // open-addressing set of posted buffer addresses
	uint32_t set_mask;
	int flows;
	int flow_port;
	// Feed position.
	uint64_t next;    // frames delivered or dropped so far, over every loop
	int64_t start_ns; // T: when the flow started the feed
	int64_t burst_left;
};

struct fv_flow {
	struct ibv_flow flow;
	uint32_t magic;
	struct fv_qp *qp;
};

// Every MR and QP of the process, for lkey lookups and CQ polls.
static struct fv_mr *mrs[FV_MAX_MRS];
static int nmrs;
static struct fv_qp *qps[FV_MAX_QPS];
static int nqps;

static struct fv_ctx *ctx_of(struct ibv_context *c) {
	return (struct fv_ctx *)((char *)c - offsetof(struct fv_ctx, vc.context));
}

static int check_ctx(struct ibv_context *c, const char *what) {
	if (!c || ctx_of(c)->magic != FV_ALIVE) {
		violation("%s on a closed or unknown device context", what);
		return 0;
	}
	return 1;
}

static uint64_t clock_at(struct fv_ctx *c, int64_t t_ns) {
	if (cfg.khz == 1000000) // 1 GHz: a cycle a ns
		return (cfg.origin + (uint64_t)(t_ns - c->open_ns)) & cfg.mask;
	__int128 d = (__int128)(t_ns - c->open_ns) * (__int128)cfg.khz;
	// floor division, also for times before the open
	__int128 q = d / 1000000;
	if (d % 1000000 != 0 && d < 0)
		q--;
	return (cfg.origin + (uint64_t)(int64_t)q) & cfg.mask;
}

static int failing(int op) {
	if (cfg.fail[op]) {
		fv_log("fault: %s fails with errno %d", op_names[op], cfg.fail[op]);
		errno = cfg.fail[op];
		return cfg.fail[op];
	}
	return 0;
}

// ---- devices ----

struct ibv_device **ibv_get_device_list(int *num) {
	load_config();
	if (logf)
		fclose(logf);
	logf = cfg.log[0] ? fopen(cfg.log, "a") : NULL;
	load_feed();
	fv_log("list %d devices", cfg.ndev);
	if (failing(OP_GET_DEVICE_LIST)) {
		if (num)
			*num = 0;
		return NULL;
	}
	for (int i = 0; i < cfg.ndev; i++) {
		struct ibv_device *d = &devices[i];
		memset(d, 0, sizeof *d);
		d->node_type = IBV_NODE_CA;
		d->transport_type = IBV_TRANSPORT_IB;
		snprintf(d->name, sizeof d->name, "%s", cfg.dev_name[i]);
		snprintf(d->dev_name, sizeof d->dev_name, "uverbs%d", i);
		snprintf(d->dev_path, sizeof d->dev_path, "/sys/class/infiniband_verbs/uverbs%d", i);
		snprintf(d->ibdev_path, sizeof d->ibdev_path, "%.190s/%.60s", cfg.sysfs, cfg.dev_name[i]);
		device_list[i] = d;
	}
	device_list[cfg.ndev] = NULL;
	if (num)
		*num = cfg.ndev;
	// The caller owns the array until ibv_free_device_list.
	struct ibv_device **copy = calloc(cfg.ndev + 1, sizeof *copy);
	memcpy(copy, device_list, (cfg.ndev + 1) * sizeof *copy);
	return copy;
}

void ibv_free_device_list(struct ibv_device **list) { free(list); }

const char *ibv_get_device_name(struct ibv_device *d) { return d ? d->name : NULL; }

__be64 ibv_get_device_guid(struct ibv_device *d) { return (__be64)(uintptr_t)(d - devices + 1); }

int ibv_fork_init(void) { return 0; }

static int query_device_ex(struct ibv_context *, const struct ibv_query_device_ex_input *, struct ibv_device_attr_ex *, size_t);
static int query_port(struct ibv_context *, uint8_t, struct ibv_port_attr *, size_t);
static int query_rt_values(struct ibv_context *, struct ibv_values_ex *);
static struct ibv_cq_ex *create_cq_ex(struct ibv_context *, struct ibv_cq_init_attr_ex *);
static struct ibv_flow *create_flow(struct ibv_qp *, struct ibv_flow_attr *);
static int destroy_flow(struct ibv_flow *);
static int post_recv(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
static int post_send(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
static int poll_cq(struct ibv_cq *, int, struct ibv_wc *);

struct ibv_context *ibv_open_device(struct ibv_device *d) {
	int idx = (int)(d - devices);
	if (idx < 0 || idx >= cfg.ndev) {
		violation("ibv_open_device of a device not from ibv_get_device_list");
		errno = ENODEV;
		return NULL;
	}
	if (failing(OP_OPEN_DEVICE))
		return NULL;
	struct fv_ctx *c = calloc(1, sizeof *c);
	c->magic = FV_ALIVE;
	c->dev = idx;
	c->open_ns = now_ns();
	struct ibv_context *ctx = &c->vc.context;
	ctx->device = d;
	ctx->cmd_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ctx->async_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.post_recv = post_recv;
	ctx->ops.post_send = post_send;
	ctx->ops.poll_cq = poll_cq;
	c->vc.sz = sizeof(struct verbs_context);
	c->vc.query_port = query_port;
	if (!cfg.no_op[OP_QUERY_DEVICE_EX])
		c->vc.query_device_ex = query_device_ex;
	if (!cfg.no_op[OP_QUERY_RT_VALUES])
		c->vc.query_rt_values = query_rt_values;
	if (!cfg.no_op[OP_CREATE_CQ_EX])
		c->vc.create_cq_ex = create_cq_ex;
	if (!cfg.no_op[OP_CREATE_FLOW]) {
		c->vc.ibv_create_flow = create_flow;
		c->vc.ibv_destroy_flow = destroy_flow;
	}
	fv_log("open %s open_ns %lld", d->name, (long long)c->open_ns);
	return ctx;
}

int ibv_close_device(struct ibv_context *ctx) {
	if (!check_ctx(ctx, "ibv_close_device"))
		return EINVAL;
	struct fv_ctx *c = ctx_of(ctx);
	if (c->live_pd || c->live_cq)
		violation("ibv_close_device with %d PDs and %d CQs still allocated", c->live_pd, c->live_cq);
	close(ctx->cmd_fd);
	close(ctx->async_fd);
	c->magic = FV_DEAD;
	fv_log("close %s", ctx->device->name);
	return 0;
}

static void fill_device_attr(struct ibv_device_attr *a) {
	memset(a, 0, sizeof *a);
	snprintf(a->fw_ver, sizeof a->fw_ver, "0.0.0 (fakeverbs)");
	a->vendor_id = 0x02c9;
	a->max_qp = 1024;
	a->max_qp_wr = (int)cfg.max_qp_wr;
	a->max_sge = 30;
	a->max_cq = 1024;
	a->max_cqe = 4194303;
	a->max_mr = FV_MAX_MRS;
	a->max_pd = 1024;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a) {
	if (!check_ctx(ctx, "ibv_query_device"))
		return EINVAL;
	fill_device_attr(a);
	a->phys_port_cnt = (uint8_t)cfg.dev_ports[ctx_of(ctx)->dev];
	return 0;
}

static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			   struct ibv_device_attr_ex *a, size_t size) {
	(void)in;
	if (!check_ctx(ctx, "ibv_query_device_ex"))
		return EINVAL;
	if (failing(OP_QUERY_DEVICE_EX))
		return cfg.fail[OP_QUERY_DEVICE_EX];
	memset(a, 0, size);
	fill_device_attr(&a->orig_attr);
	a->orig_attr.phys_port_cnt = (uint8_t)cfg.dev_ports[ctx_of(ctx)->dev];
	a->completion_timestamp_mask = cfg.mask;
	a->hca_core_clock = cfg.khz;
	a->raw_packet_caps = IBV_RAW_PACKET_CAP_CVLAN_STRIPPING;
	return 0;
}

static int query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t size) {
	if (!check_ctx(ctx, "ibv_query_port"))
		return EINVAL;
	if (port < 1 || port > cfg.dev_ports[ctx_of(ctx)->dev])
		return EINVAL;
	memset(a, 0, size);
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = a->active_mtu = IBV_MTU_4096;
	a->lid = 1;
	a->gid_tbl_len = 1;
	a->phys_state = 5;
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *a) {
	return query_port(ctx, port, (struct ibv_port_attr *)a, sizeof(struct ibv_port_attr));
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid) {
	if (!check_ctx(ctx, "ibv_query_gid") || index != 0)
		return -1;
	memset(gid, 0, sizeof *gid);
	gid->raw[0] = 0xfe;
	gid->raw[1] = 0x80;
	gid->raw[15] = port;
	return 0;
}

int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey) {
	(void)ctx, (void)port;
	if (index != 0)
		return -1;
	*pkey = 0xffff;
	return 0;
}

static int query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *v) {
	if (!check_ctx(ctx, "ibv_query_rt_values_ex"))
		return EINVAL;
	if (failing(OP_QUERY_RT_VALUES))
		return cfg.fail[OP_QUERY_RT_VALUES];
	if (!(v->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
		v->comp_mask = 0;
		return 0;
	}
	uint64_t cycles = clock_at(ctx_of(ctx), now_ns());
	// As the providers do: the cycle count spread over the timespec.
	v->raw_clock.tv_sec = (time_t)(cycles / 1000000000);
	v->raw_clock.tv_nsec = (long)(cycles % 1000000000);
	v->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	return 0;
}

// ---- protection domains and memory regions ----

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx) {
	if (!check_ctx(ctx, "ibv_alloc_pd")) {
		errno = EINVAL;
		return NULL;
	}
	if (failing(OP_ALLOC_PD))
		return NULL;
	struct fv_pd *p = calloc(1, sizeof *p);
	p->magic = FV_ALIVE;
	p->pd.context = ctx;
	p->pd.handle = 1;
	ctx_of(ctx)->live_pd++;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd) {
	struct fv_pd *p = (struct fv_pd *)pd;
	if (!p || p->magic != FV_ALIVE) {
		violation("ibv_dealloc_pd of a PD not allocated or already freed");
		return EINVAL;
	}
	if (p->live_qp || p->live_mr) {
		violation("ibv_dealloc_pd with %d QPs and %d MRs still using it", p->live_qp, p->live_mr);
		return EBUSY;
	}
	p->magic = FV_DEAD;
	ctx_of(pd->context)->live_pd--;
	return 0;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access) {
	struct fv_pd *p = (struct fv_pd *)pd;
	if (!p || p->magic != FV_ALIVE) {
		violation("ibv_reg_mr on a PD not allocated or already freed");
		errno = EINVAL;
		return NULL;
	}
	if (iova != (uintptr_t)addr) {
		violation("ibv_reg_mr: iova %#llx is not the address %p", (unsigned long long)iova, addr);
		errno = EINVAL;
		return NULL;
	}
	if (failing(OP_REG_MR))
		return NULL;
	if (!addr || !length || nmrs == FV_MAX_MRS) {
		errno = EINVAL;
		return NULL;
	}
	struct fv_mr *m = calloc(1, sizeof *m);
	m->magic = FV_ALIVE;
	m->access = access;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = (uint32_t)nmrs;
	m->mr.lkey = 0x1000u + (uint32_t)nmrs;
	m->mr.rkey = m->mr.lkey;
	mrs[nmrs++] = m;
	p->live_mr++;
	return &m->mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access) {
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

static struct fv_mr *mr_of_lkey(uint32_t lkey) {
	uint32_t i = lkey - 0x1000u;
	return i < (uint32_t)nmrs && mrs[i]->magic == FV_ALIVE ? mrs[i] : NULL;
}

int ibv_dereg_mr(struct ibv_mr *mr) {
	struct fv_mr *m = (struct fv_mr *)mr;
	if (!m || m->magic != FV_ALIVE) {
		violation("ibv_dereg_mr of an MR not registered or already deregistered");
		return EINVAL;
	}
	if (m->posted_by && m->posted_by->magic == FV_ALIVE && m->posted_by->count)
		violation("ibv_dereg_mr while %u receive buffers in it are posted to a live QP", m->posted_by->count);
	m->magic = FV_DEAD;
	((struct fv_pd *)mr->pd)->live_mr--;
	return 0;
}

// ---- completion queues ----

static int start_poll(struct ibv_cq_ex *, struct ibv_poll_cq_attr *);
static int next_poll(struct ibv_cq_ex *);
static void end_poll(struct ibv_cq_ex *);
static uint32_t read_byte_len(struct ibv_cq_ex *);
static uint64_t read_completion_ts(struct ibv_cq_ex *);
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *);
static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *);
static uint32_t read_vendor_err(struct ibv_cq_ex *);
static unsigned int read_wc_flags(struct ibv_cq_ex *);
static uint32_t read_qp_num(struct ibv_cq_ex *);

static const uint64_t supported_wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
					   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK | IBV_WC_EX_WITH_QP_NUM;

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a) {
	if (!check_ctx(ctx, "ibv_create_cq_ex")) {
		errno = EINVAL;
		return NULL;
	}
	if (failing(OP_CREATE_CQ_EX))
		return NULL;
	if (a->cqe < 1 || a->cqe > 4194303) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->wc_flags & ~supported_wc_flags) ||
	    ((a->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) && !cfg.wallclock)) {
		errno = EOPNOTSUPP; // as a provider refusing a completion field it cannot fill
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	struct fv_cq *q = calloc(1, sizeof *q);
	q->magic = FV_ALIVE;
	q->ctx = ctx_of(ctx);
	q->wc_flags = a->wc_flags;
	q->cap = a->cqe;
	q->q = calloc(q->cap, sizeof *q->q);
	struct ibv_cq_ex *ex = &q->ex;
	ex->context = ctx;
	ex->cq_context = a->cq_context;
	ex->cqe = (int)a->cqe;
	pthread_mutex_init(&ex->mutex, NULL);
	pthread_cond_init(&ex->cond, NULL);
	ex->start_poll = start_poll;
	ex->next_poll = next_poll;
	ex->end_poll = end_poll;
	ex->read_opcode = read_opcode;
	ex->read_vendor_err = read_vendor_err;
	ex->read_wc_flags = read_wc_flags;
	ex->read_qp_num = read_qp_num;
	ex->read_byte_len = read_byte_len;
	ex->read_completion_ts = read_completion_ts;
	ex->read_completion_wallclock_ns = read_completion_wallclock_ns;
	q->ctx->live_cq++;
	return ex;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *ch, int vec) {
	(void)ctx, (void)cqe, (void)cq_context, (void)ch, (void)vec;
	violation("ibv_create_cq: a plain CQ carries no completion timestamps; use ibv_create_cq_ex");
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_destroy_cq(struct ibv_cq *cq) {
	struct fv_cq *q = (struct fv_cq *)cq;
	if (!q || q->magic != FV_ALIVE) {
		violation("ibv_destroy_cq of a CQ not created or already destroyed");
		return EINVAL;
	}
	if (q->live_qp) {
		violation("ibv_destroy_cq while %d QPs use it", q->live_qp);
		return EBUSY;
	}
	if (q->polling)
		violation("ibv_destroy_cq between ibv_start_poll and ibv_end_poll");
	q->magic = FV_DEAD;
	q->ctx->live_cq--;
	return 0;
}

static int poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc) {
	(void)cq, (void)n, (void)wc;
	violation("ibv_poll_cq on an extended CQ: completion timestamps need ibv_start_poll");
	return -1;
}

// ---- queue pairs ----

static uint32_t hash_addr(uint64_t a) { return (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 32); }

// set_add returns 0 when addr was already in the set.
static int set_add(struct fv_qp *q, uint64_t addr) {
	for (uint32_t i = hash_addr(addr) & q->set_mask;; i = (i + 1) & q->set_mask) {
		if (q->posted_addrs[i] == addr)
			return 0;
		if (q->posted_addrs[i] == 0) {
			q->posted_addrs[i] = addr;
			return 1;
		}
	}
}

static void set_del(struct fv_qp *q, uint64_t addr) {
	uint32_t i = hash_addr(addr) & q->set_mask;
	while (q->posted_addrs[i] != addr) {
		if (q->posted_addrs[i] == 0)
			return;
		i = (i + 1) & q->set_mask;
	}
	// Backward-shift deletion keeps every probe chain unbroken.
	for (uint32_t j = i;;) {
		q->posted_addrs[i] = 0;
		for (;;) {
			j = (j + 1) & q->set_mask;
			if (q->posted_addrs[j] == 0)
				return;
			uint32_t k = hash_addr(q->posted_addrs[j]) & q->set_mask;
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		q->posted_addrs[i] = q->posted_addrs[j];
		i = j;
	}
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a) {
	struct fv_pd *p = (struct fv_pd *)pd;
	if (!p || p->magic != FV_ALIVE) {
		violation("ibv_create_qp on a PD not allocated or already freed");
		errno = EINVAL;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_RAW_PACKET) {
		violation("ibv_create_qp: QP type %d; a sniffer needs IBV_QPT_RAW_PACKET", a->qp_type);
		errno = EINVAL;
		return NULL;
	}
	struct fv_cq *rcq = (struct fv_cq *)a->recv_cq, *scq = (struct fv_cq *)a->send_cq;
	if (!rcq || rcq->magic != FV_ALIVE || (scq && scq->magic != FV_ALIVE)) {
		violation("ibv_create_qp with a CQ not created or already destroyed");
		errno = EINVAL;
		return NULL;
	}
	if (rcq->ctx != ctx_of(pd->context)) {
		violation("ibv_create_qp with a CQ of another device context");
		errno = EINVAL;
		return NULL;
	}
	if (failing(OP_CREATE_QP))
		return NULL;
	if (nqps == FV_MAX_QPS) {
		errno = ENOMEM;
		return NULL;
	}
	if (a->cap.max_recv_wr < 1 || a->cap.max_recv_wr > cfg.max_qp_wr || a->cap.max_recv_sge < 1 ||
	    a->cap.max_recv_sge > 30 || a->cap.max_send_wr > cfg.max_qp_wr || a->srq) {
		errno = EINVAL;
		return NULL;
	}
	struct fv_qp *q = calloc(1, sizeof *q);
	q->magic = FV_ALIVE;
	q->pd = p;
	q->cq = rcq;
	q->cap = a->cap.max_recv_wr;
	q->max_sge = a->cap.max_recv_sge;
	q->rq = calloc(q->cap, sizeof *q->rq);
	uint32_t size = 2;
	while (size < 2 * q->cap)
		size <<= 1;
	q->posted_addrs = calloc(size, sizeof *q->posted_addrs);
	q->set_mask = size - 1;
	q->burst_left = -1;
	struct ibv_qp *qp = &q->qp;
	qp->context = pd->context;
	qp->qp_context = a->qp_context;
	qp->pd = pd;
	qp->send_cq = a->send_cq;
	qp->recv_cq = a->recv_cq;
	qp->qp_num = 0x100 + (uint32_t)p->live_qp;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = IBV_QPT_RAW_PACKET;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	qps[nqps++] = q;
	p->live_qp++;
	rcq->live_qp++;
	if (scq && scq != rcq)
		scq->live_qp++;
	return qp;
}

static struct fv_qp *live_qp(struct ibv_qp *qp, const char *what) {
	struct fv_qp *q = (struct fv_qp *)qp;
	if (!q || q->magic != FV_ALIVE) {
		violation("%s on a QP not created or already destroyed", what);
		return NULL;
	}
	return q;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask) {
	struct fv_qp *q = live_qp(qp, "ibv_modify_qp");
	if (!q)
		return EINVAL;
	if (failing(OP_MODIFY_QP))
		return cfg.fail[OP_MODIFY_QP];
	if (!(mask & IBV_QP_STATE)) {
		violation("ibv_modify_qp without IBV_QP_STATE");
		return EINVAL;
	}
	enum ibv_qp_state from = qp->state, to = a->qp_state;
	int ok = (from == IBV_QPS_RESET && to == IBV_QPS_INIT) || (from == IBV_QPS_INIT && to == IBV_QPS_RTR) ||
		 (from == IBV_QPS_RTR && to == IBV_QPS_RTS) || to == IBV_QPS_RESET || to == IBV_QPS_ERR;
	if (!ok) {
		violation("ibv_modify_qp from state %d to %d: a QP goes RESET, INIT, RTR in order", from, to);
		return EINVAL;
	}
	if (to == IBV_QPS_INIT) {
		int ports = cfg.dev_ports[ctx_of(qp->context)->dev];
		if (!(mask & IBV_QP_PORT) || a->port_num < 1 || a->port_num > ports) {
			violation("ibv_modify_qp to INIT without a port of the device (IBV_QP_PORT, port %d of %d)",
				  (mask & IBV_QP_PORT) ? a->port_num : 0, ports);
			return EINVAL;
		}
		q->port = a->port_num;
	}
	if (mask & ~(IBV_QP_STATE | IBV_QP_PORT))
		violation("ibv_modify_qp with attributes a raw packet QP does not take (mask %#x)", mask);
	qp->state = to;
	return 0;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init) {
	(void)mask;
	struct fv_qp *q = live_qp(qp, "ibv_query_qp");
	if (!q)
		return EINVAL;
	memset(a, 0, sizeof *a);
	a->qp_state = qp->state;
	a->port_num = (uint8_t)q->port;
	if (init) {
		memset(init, 0, sizeof *init);
		init->qp_type = IBV_QPT_RAW_PACKET;
		init->cap.max_recv_wr = q->cap;
		init->cap.max_recv_sge = q->max_sge;
	}
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp) {
	struct fv_qp *q = live_qp(qp, "ibv_destroy_qp");
	if (!q)
		return EINVAL;
	if (q->flows) {
		violation("ibv_destroy_qp while %d flows steer to it", q->flows);
		return EBUSY;
	}
	q->magic = FV_DEAD;
	q->pd->live_qp--;
	q->cq->live_qp--;
	if (qp->send_cq && (struct fv_cq *)qp->send_cq != q->cq)
		((struct fv_cq *)qp->send_cq)->live_qp--;
	return 0;
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad) {
	(void)qp;
	violation("ibv_post_send on a sniffer QP");
	*bad = wr;
	return EINVAL;
}

// push_cqe adds a completion; a full CQ is an overrun, the caller's sizing error.
static int push_cqe(struct fv_cq *cq, const struct fv_cqe *e) {
	if (cq->count == cq->cap) {
		violation("CQ overrun: %u completions not polled, the CQ holds %u", cq->count, cq->cap);
		return 0;
	}
	uint32_t tail = cq->head + cq->count;
	cq->q[tail >= cq->cap ? tail - cq->cap : tail] = *e;
	cq->count++;
	return 1;
}

// take_rwr removes the oldest posted receive request: the device fills
// buffers in the order they were posted.
static struct fv_rwr take_rwr(struct fv_qp *q) {
	struct fv_rwr w = q->rq[q->head];
	if (++q->head == q->cap)
		q->head = 0;
	q->count--;
	set_del(q, w.addr);
	return w;
}

// flush_all completes every posted request with IBV_WC_WR_FLUSH_ERR, as a
// QP in the error state does.
static void flush_all(struct fv_qp *q) {
	while (q->count && q->cq->count < q->cq->cap) {
		struct fv_rwr w = take_rwr(q);
		struct fv_cqe e = {.wr_id = w.wr_id, .status = IBV_WC_WR_FLUSH_ERR, .byte_len = 0xdeadbeef,
				   .cycles = 0xbadbadbadull, .wall_ns = -1};
		push_cqe(q->cq, &e);
	}
}

static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad) {
	struct fv_qp *q = live_qp(qp, "ibv_post_recv");
	if (!q) {
		*bad = wr;
		return EINVAL;
	}
	if (qp->state == IBV_QPS_RESET) {
		violation("ibv_post_recv on a QP in the RESET state");
		*bad = wr;
		return EINVAL;
	}
	for (; wr; wr = wr->next) {
		if (q->count == q->cap) {
			violation("ibv_post_recv beyond max_recv_wr (%u posted)", q->cap);
			*bad = wr;
			return ENOMEM;
		}
		if (wr->num_sge != 1 || !wr->sg_list) {
			violation("ibv_post_recv with %d scatter entries (the sniffer's buffers have 1)", wr->num_sge);
			*bad = wr;
			return EINVAL;
		}
		struct ibv_sge *s = wr->sg_list;
		struct fv_mr *m = mr_of_lkey(s->lkey);
		if (!m || (struct fv_pd *)m->mr.pd != q->pd) {
			violation("ibv_post_recv: lkey %#x is no registered MR of the QP's PD", s->lkey);
			*bad = wr;
			return EINVAL;
		}
		uint64_t lo = (uintptr_t)m->mr.addr, hi = lo + m->mr.length;
		if (s->addr < lo || s->length > hi - s->addr || s->addr >= hi || !s->length) {
			violation("ibv_post_recv: buffer %#llx+%u is outside its MR %#llx+%zu", (unsigned long long)s->addr,
				  s->length, (unsigned long long)lo, m->mr.length);
			*bad = wr;
			return EINVAL;
		}
		if (!(m->access & IBV_ACCESS_LOCAL_WRITE)) {
			violation("ibv_post_recv into an MR without IBV_ACCESS_LOCAL_WRITE");
			*bad = wr;
			return EINVAL;
		}
		if (!set_add(q, s->addr)) {
			violation("ibv_post_recv: buffer %#llx (wr_id %llu) posted again before its completion",
				  (unsigned long long)s->addr, (unsigned long long)wr->wr_id);
			*bad = wr;
			return EINVAL;
		}
		m->posted_by = q;
		uint32_t tail = q->head + q->count;
		struct fv_rwr *w = &q->rq[tail >= q->cap ? tail - q->cap : tail];
		w->wr_id = wr->wr_id;
		w->addr = s->addr;
		w->length = s->length;
		w->lkey = s->lkey;
		q->count++;
	}
	if (qp->state == IBV_QPS_ERR)
		flush_all(q);
	return 0;
}

// ---- flows and the feed ----

static struct ibv_flow *create_flow(struct ibv_qp *qp, struct ibv_flow_attr *a) {
	struct fv_qp *q = live_qp(qp, "ibv_create_flow");
	if (!q) {
		errno = EINVAL;
		return NULL;
	}
	if (a->type != IBV_FLOW_ATTR_SNIFFER) {
		violation("ibv_create_flow of type %d; a sniffer needs IBV_FLOW_ATTR_SNIFFER", a->type);
		errno = EINVAL;
		return NULL;
	}
	if (a->size < sizeof *a || a->num_of_specs != 0 || a->comp_mask) {
		violation("ibv_create_flow: size %u, %u specs, comp_mask %#x (a sniffer has no specs)", a->size,
			  a->num_of_specs, a->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	if (qp->state == IBV_QPS_RESET || a->port != q->port) {
		violation("ibv_create_flow on port %u for a QP %s port %d", a->port,
			  qp->state == IBV_QPS_RESET ? "in RESET, with no" : "of", q->port);
		errno = EINVAL;
		return NULL;
	}
	if (failing(OP_CREATE_FLOW))
		return NULL;
	struct fv_flow *f = calloc(1, sizeof *f);
	f->magic = FV_ALIVE;
	f->qp = q;
	f->flow.context = qp->context;
	f->flow.handle = 1;
	q->flows++;
	q->flow_port = a->port;
	if (!q->start_ns) {
		q->start_ns = now_ns();
		fv_log("feed_start_ns %lld frames %zu", (long long)q->start_ns, feed.nframes);
	}
	return &f->flow;
}

static int destroy_flow(struct ibv_flow *flow) {
	struct fv_flow *f = (struct fv_flow *)flow;
	if (!f || f->magic != FV_ALIVE) {
		violation("ibv_destroy_flow of a flow not created or already destroyed");
		return EINVAL;
	}
	f->magic = FV_DEAD;
	f->qp->flows--;
	return 0;
}

static void bump_out_of_buffer(struct fv_qp *q, uint64_t n) {
	char path[8192];
	snprintf(path, sizeof path, "%s/%s/ports/%d/hw_counters/out_of_buffer", cfg.sysfs,
		 q->qp.context->device->name, q->flow_port);
	uint64_t v = 0;
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", (unsigned long long *)&v) != 1)
			v = 0;
		fclose(f);
	}
	char tmp[8300];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%llu\n", (unsigned long long)(v + n));
	fclose(f);
	rename(tmp, path);
}

static void device_fatal(struct fv_qp *q) {
	struct fv_ctx *c = ctx_of(q->qp.context);
	if (!c->dead) {
		c->dead = 1;
		c->async_pending = 1;
		fv_log("fault: device %s fatal error", q->qp.context->device->name);
	}
}

// deliver moves frames of the feed into posted buffers, as a port with
// traffic would, until the feed, the buffers or the CQ's room run out.
static void deliver(struct fv_qp *q) {
	uint64_t total = cfg.feed_loops ? cfg.feed_loops * feed.nframes : UINT64_MAX;
	struct fv_ctx *c = ctx_of(q->qp.context);
	uint64_t dropped = 0;
	while (q->next < total && feed.nframes && q->flows && q->qp.state >= IBV_QPS_RTR && q->qp.state != IBV_QPS_ERR &&
	       !c->dead) {
		int64_t i = (int64_t)q->next;
		size_t f = (size_t)(q->next % feed.nframes);
		uint64_t loop = q->next / feed.nframes;
		int64_t t = q->start_ns + (feed.ts_ns[f] - feed.ts_ns[0]) + (int64_t)loop * (feed.span_ns + 1000);
		if (cfg.pace && t > now_ns())
			break; // paced: frame i has not arrived yet
		if (i == cfg.fatal_at) {
			device_fatal(q);
			break;
		}
		if (i == cfg.flush_at) {
			fv_log("fault: QP to the error state before frame %lld", (long long)i);
			q->qp.state = IBV_QPS_ERR;
			break;
		}
		if (i == cfg.burst_at)
			q->burst_left = cfg.burst_n;
		int in_burst = q->burst_left > 0;
		if (!q->count && !in_burst)
			break; // polite: wait for buffers
		if (!q->count) {
			// A burst frame with no buffer posted: the device drops it.
			q->next++;
			q->burst_left--;
			dropped++;
			fv_log("drop %lld", (long long)i);
			continue;
		}
		if (q->cq->count == q->cq->cap)
			break;
		q->next++;
		if (in_burst)
			q->burst_left--;
		struct fv_rwr w = take_rwr(q);
		struct fv_cqe e = {.wr_id = w.wr_id, .status = IBV_WC_SUCCESS, .byte_len = feed.len[f],
				   .cycles = clock_at(c, t), .wall_ns = t};
		if (feed.len[f] > w.length)
			e.status = IBV_WC_LOC_LEN_ERR;
		else
			memcpy((void *)(uintptr_t)w.addr, feed.data + feed.off[f], feed.len[f]);
		if (i == cfg.error_at) {
			fv_log("fault: frame %lld completes with status %d", (long long)i, cfg.error_status);
			e.status = (uint32_t)cfg.error_status;
		}
		if (e.status != IBV_WC_SUCCESS) {
			// Only wr_id and status are valid in a failed completion.
			e.byte_len = 0xdeadbeef;
			e.cycles = 0xbadbadbadull;
			e.wall_ns = -1;
		}
		push_cqe(q->cq, &e);
		if (e.status != IBV_WC_SUCCESS) {
			q->qp.state = IBV_QPS_ERR;
			break;
		}
	}
	if (dropped)
		bump_out_of_buffer(q, dropped);
	if (q->qp.state == IBV_QPS_ERR)
		flush_all(q);
}

// qp_of_cq finds the live QP a CQ receives for: the sniffer has one.
static struct fv_qp *qp_of_cq(struct fv_cq *cq) {
	for (int i = nqps - 1; i >= 0; i--)
		if (qps[i]->magic == FV_ALIVE && qps[i]->cq == cq)
			return qps[i];
	return NULL;
}

static int start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	if (cq->magic != FV_ALIVE) {
		violation("ibv_start_poll on a CQ not created or already destroyed");
		return EINVAL;
	}
	if (attr->comp_mask) {
		violation("ibv_start_poll with comp_mask %#x", attr->comp_mask);
		return EINVAL;
	}
	if (cq->polling) {
		violation("ibv_start_poll again before ibv_end_poll");
		return EINVAL;
	}
	struct fv_qp *q = qp_of_cq(cq);
	if (q)
		deliver(q);
	if (!cq->count)
		// A dead device's completions already written are still read;
		// then polling fails.
		return cq->ctx->dead ? ENODEV : ENOENT;
	cq->polling = 1;
	struct fv_cqe *e = &cq->q[cq->head];
	ex->wr_id = e->wr_id;
	ex->status = (enum ibv_wc_status)e->status;
	return 0;
}

static int next_poll(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	if (!cq->polling) {
		violation("ibv_next_poll outside ibv_start_poll/ibv_end_poll");
		return EINVAL;
	}
	if (++cq->head == cq->cap)
		cq->head = 0;
	cq->count--;
	if (!cq->count) {
		cq->polling = 2; // the current entry is consumed
		return ENOENT;
	}
	struct fv_cqe *e = &cq->q[cq->head];
	ex->wr_id = e->wr_id;
	ex->status = (enum ibv_wc_status)e->status;
	return 0;
}

static void end_poll(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	if (!cq->polling) {
		violation("ibv_end_poll without a successful ibv_start_poll");
		return;
	}
	if (cq->polling == 1) {
		if (++cq->head == cq->cap)
			cq->head = 0;
		cq->count--;
	}
	cq->polling = 0;
}

static struct fv_cqe *current(struct fv_cq *cq, const char *what) {
	if (cq->polling != 1) {
		violation("%s outside a completion (after ibv_start_poll or ibv_next_poll returned 0)", what);
		return NULL;
	}
	return &cq->q[cq->head];
}

static uint32_t read_byte_len(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	struct fv_cqe *e = current(cq, "ibv_wc_read_byte_len");
	if (!e)
		return 0;
	if (!(cq->wc_flags & IBV_WC_EX_WITH_BYTE_LEN))
		violation("ibv_wc_read_byte_len on a CQ created without IBV_WC_EX_WITH_BYTE_LEN");
	return e->byte_len;
}

static uint64_t read_completion_ts(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	struct fv_cqe *e = current(cq, "ibv_wc_read_completion_ts");
	if (!e)
		return 0;
	if (!(cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)) {
		violation("ibv_wc_read_completion_ts on a CQ created without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP");
		return 0xbadbadbadull;
	}
	return e->cycles;
}

static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	struct fv_cqe *e = current(cq, "ibv_wc_read_completion_wallclock_ns");
	if (!e)
		return 0;
	if (!(cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
		violation("ibv_wc_read_completion_wallclock_ns on a CQ created without "
			  "IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK");
		return 0xbadbadbadull;
	}
	return (uint64_t)e->wall_ns;
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *ex) {
	current((struct fv_cq *)ex, "ibv_wc_read_opcode");
	return IBV_WC_RECV;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *ex) {
	current((struct fv_cq *)ex, "ibv_wc_read_vendor_err");
	return 0;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *ex) {
	current((struct fv_cq *)ex, "ibv_wc_read_wc_flags");
	return 0;
}

static uint32_t read_qp_num(struct ibv_cq_ex *ex) {
	struct fv_cq *cq = (struct fv_cq *)ex;
	current(cq, "ibv_wc_read_qp_num");
	struct fv_qp *q = qp_of_cq(cq);
	return q ? q->qp.qp_num : 0;
}

// ---- events and strings ----

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev) {
	if (!check_ctx(ctx, "ibv_get_async_event"))
		return -1;
	struct fv_ctx *c = ctx_of(ctx);
	if (!c->async_pending) {
		errno = EAGAIN; // as a non-blocking async_fd with nothing to read
		return -1;
	}
	c->async_pending = 0;
	memset(ev, 0, sizeof *ev);
	ev->event_type = IBV_EVENT_DEVICE_FATAL;
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *ev) { (void)ev; }

const char *ibv_wc_status_str(enum ibv_wc_status s) {
	switch (s) {
	case IBV_WC_SUCCESS: return "success";
	case IBV_WC_LOC_LEN_ERR: return "local length error";
	case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
	case IBV_WC_LOC_PROT_ERR: return "local protection error";
	case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
	case IBV_WC_LOC_ACCESS_ERR: return "local access error";
	case IBV_WC_FATAL_ERR: return "fatal error";
	case IBV_WC_GENERAL_ERR: return "general error";
	default: return "unknown";
	}
}

const char *ibv_event_type_str(enum ibv_event_type e) {
	return e == IBV_EVENT_DEVICE_FATAL ? "local catastrophic error" : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state s) { return s == IBV_PORT_ACTIVE ? "PORT_ACTIVE" : "unknown"; }

const char *ibv_node_type_str(enum ibv_node_type t) { return t == IBV_NODE_CA ? "InfiniBand channel adapter" : "unknown"; }
