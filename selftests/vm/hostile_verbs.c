// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * hostile_verbs: a libibverbs program that attacks roxed through roxe0 and
 * the stock rxe provider, for selftests/vm/kmod_hostile.sh.
 *
 *   hostile_verbs PHASE ROXE_DEV ROXE_GID PEER_DEV PEER_GID [SECONDS]
 *
 * It finds its own rings as any application could: the provider mmap()s
 * every queue (struct rxe_queue_buf, <rdma/rdma_user_rxe.h>) from the uverbs
 * device, so the /dev/infiniband/uverbs* mappings that appear in
 * /proc/self/maps across a create are that object's; a QP's two are told
 * apart by a receive posted through the provider (the RQ's producer index
 * moves). The send doorbell is the provider's own: a post_send command with
 * no WRs written to the uverbs fd. Then, per PHASE:
 *   state   a WQE posted and the doorbell rung on an RC QP in RESET (refused,
 *           nothing completes, as rxe), then in ERR (the send and a receive
 *           complete with IBV_WC_WR_FLUSH_ERR, as rxe);
 *   wqe     for SECONDS, an RC QP connected to PEER_DEV and a UD QP post
 *           valid RDMA WRITEs and UD SENDs while a thread rewrites every slot
 *           of their send queues (num_sge, SGE addr/length/lkey flipping
 *           between valid and not, opcodes, flags, lengths past the slot,
 *           UD address vectors, state words); QPs that go to error are
 *           reset and reconnected; afterwards a clean WRITE must arrive
 *           intact;
 *   pi      a thread keeps moving an RC QP's producer indices (one short of
 *           the consumer, i.e. past it, or anywhere ahead of it) while the
 *           QP is moved to ERR and flushes, its doorbell rung now and then;
 *           pidb: the thread rings the doorbell too, every move (not in the
 *           VM suite's default phases: every doorbell is a flush pass, and
 *           on TCG they add up to seconds); roxed must flush at most a ring
 *           per look at the QP (the move to ERR, each doorbell): more means
 *           a flush that followed the moving index; meanwhile other verbs
 *           (create and destroy a CQ and a QP, register and deregister an
 *           MR) must keep being answered within the module's 2 s;
 *   bindwrap  every slot of an RC QP's send queue a type 1 unbind (always
 *           taken, retired at once), its producer index kept one short of
 *           the consumer for SECONDS, the doorbell rung when roxed stops:
 *           another tenant's (a second context's) 20 verified WRITEs over
 *           loopback on the same engine must arrive, and the QP's destroy
 *           return within the module's 2 s. The guest's one vCPU never runs
 *           the thread while the engine turns, so this cannot catch an
 *           engine that follows the index (it passed before that fix too):
 *           served_test hostile_sq_wrap_local_wqes does, on the engine's
 *           own thread;
 *   credit  an RC QP with no timer (timeout 0) READs 2 MiB (2048 responses,
 *           past an engine's PSN credit) from a peer that never answers
 *           (a QP of PEER_DEV's, destroyed): the other tenant's 20 verified
 *           WRITEs must arrive while it waits, its destroy return promptly;
 *   mwpd    a second context binds the first one's type 1 window over the
 *           first one's MR, by their keys, with remote write: refused
 *           (IBV_WC_MW_BIND_ERR), and the victim's window and MR go freely;
 *   flood   32 threads create and destroy CQs (every fourth: attaches a UD
 *           QP to a multicast group and detaches it; every fourth other:
 *           moves an RC QP between RTS and SQD asking for SQ_DRAINED, events
 *           it never reads) as fast as the module takes them (up to
 *           SECONDS), while another process of another user (uid 4242)
 *           creates and destroys a CQ 50 times, then waits for 20
 *           SQ_DRAINED events of its own QP, each within 5 s (a hang
 *           guard): each of its verbs must succeed and every event of its
 *           own arrive, and the command channel must have served the
 *           tenants in turn: the port's cmd_turn_max (the most commands of
 *           other tenants roxed read while one waited, per command of its
 *           own tenant read then) at most 3 (the flood, the victim, the
 *           script's traffic as root, the kernel: three others), and the
 *           flood must have reached its tenant's cap (cmd_cap_waits);
 *           latencies are printed, not judged;
 *   mcast   two UD QPs attach to new multicast groups until refused: the
 *           refusal must be ENOMEM after exactly ROXE_MAX_MCAST_TENANT_ATTACH
 *           (a tenant's share, roxe/limits.h); then another user (uid 4242)
 *           attaches a QP to a group of its own and to one of the greedy's
 *           (both must succeed), a detach gives the greedy one back, and
 *           once every group is left its QPs' destroys return promptly;
 *   dbflood (its SECONDS: roxed's pid) with roxed stopped (SIGSTOP, so
 *           that all of it falls between two turns of its engine), a QP
 *           of nobody's posts a WRITE and rings its doorbell 2048 times
 *           (twice the module's ring); once roxed goes on (SIGCONT), the
 *           WRITE and the QP's next one must arrive (no doorbell lost),
 *           another tenant's 20 verified WRITEs too, and the port's
 *           db_overflows (doorbells that found their engine's ring full,
 *           each costing roxed a look at every QP of the engine) must not
 *           have moved: one QP takes at most one slot;
 *   header  the ring headers (SQ, RQ and CQ) rewritten (index_mask
 *           0xffffffff with element sizes 2^24 and 2^200, 0x7fffffff with
 *           2^0), producer indices set far out, the QP moved to RESET, INIT,
 *           ERR (the core takes no RESET -> ERR), the doorbell rung; the
 *           verbs must work and the QP take RESET at the end; what completes
 *           is printed.
 * Started as root, it runs as nobody (uid 65534): any uverbs user can do all
 * of this (flood's victim and mcast's other tenant as uid 4242). Prints
 * "ok:", "info:" and "FAIL:" lines; exits 1 on a FAIL, 2 if the phase hung
 * (SIGALRM).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include "roxe/limits.h"
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

static int fails;
static const char *phase = "?";

static void say(const char *tag, const char *fmt, va_list ap)
{
	printf("%s: %s: ", tag, phase);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

static void __attribute__((format(printf, 1, 2))) ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("ok", fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2))) info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("info", fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("FAIL", fmt, ap);
	va_end(ap);
	fails++;
}

static void __attribute__((noreturn)) die(const char *what, int err)
{
	printf("FAIL: %s: %s: %s\n", phase, what, strerror(err));
	exit(1);
}

static void on_alarm(int sig)
{
	static const char m[] = "FAIL: the phase hung (watchdog)\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0)
		_exit(3);
	_exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* --- the rings, found in /proc/self/maps ------------------------------------ */
struct map {
	uintptr_t start, end;
};

static int uverbs_maps(struct map *m, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		die("/proc/self/maps", errno);
	while (fgets(line, sizeof(line), f)) {
		char path[256] = "";
		uintptr_t s, e;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %255s", &s, &e, path) < 3)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22) || n >= max)
			continue;
		m[n].start = s;
		m[n++].end = e;
	}
	fclose(f);
	return n;
}

/* The mappings in after[] that are not in before[]. */
static int new_maps(const struct map *before, int nb, const struct map *after, int na,
		    struct map *out, int max)
{
	int n = 0;

	for (int i = 0; i < na; i++) {
		bool old = false;

		for (int j = 0; j < nb && !old; j++)
			old = before[j].start == after[i].start;
		if (!old && n < max)
			out[n++] = after[i];
		else if (!old)
			n++;
	}
	return n;
}

/* A ring and its geometry as the module made it (read once, at create). */
struct ring {
	struct rxe_queue_buf *b;
	size_t bytes;
	uint32_t mask, log2;
};

static int ring_from_map(struct ring *r, const struct map *m)
{
	struct rxe_queue_buf *b = (void *)m->start;
	uint32_t mask = b->index_mask, l = b->log2_elem_size;

	r->b = b;
	r->bytes = m->end - m->start;
	if (l > 16 || !mask || (mask & (mask + 1)) ||
	    sizeof(*b) + ((uint64_t)mask + 1) * (1u << l) > r->bytes)
		return -1;
	r->mask = mask;
	r->log2 = l;
	return 0;
}

static void *slot(const struct ring *r, uint32_t i)
{
	return r->b->data + ((size_t)(i & r->mask) << r->log2);
}

static uint32_t ld(uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Put the ring's header back as the module wrote it. */
static void ring_restore(struct ring *r)
{
	r->b->index_mask = r->mask;
	r->b->log2_elem_size = r->log2;
}

/* Copy a WQE of len bytes into the next free slot and publish it. */
static int put_wqe(struct ring *sq, const void *wqe, size_t len)
{
	uint32_t pi = ld(&sq->b->producer_index) & sq->mask;
	uint32_t ci = ld(&sq->b->consumer_index) & sq->mask;

	if (((pi + 1) & sq->mask) == ci)
		return -1;
	if (len > (1u << sq->log2))
		len = 1u << sq->log2;
	memcpy(slot(sq, pi), wqe, len);
	st(&sq->b->producer_index, (pi + 1) & sq->mask);
	return 0;
}

/* The provider's send doorbell (post_send_db): a POST_SEND with no WRs. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c;
	struct ib_uverbs_post_send_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ibv_send_wr);
	return write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
}

/* A WQE as the provider's init_send_wqe writes it, one SGE. */
struct wqe_buf {
	_Alignas(16) unsigned char raw[512];
};

static size_t make_wqe(struct wqe_buf *wb, uint64_t wr_id, uint32_t op, uint32_t flags,
		       uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t len, uint32_t lkey)
{
	struct rxe_send_wqe *w = (void *)wb->raw;

	memset(wb, 0, sizeof(*wb));
	w->wr.wr_id = wr_id;
	w->wr.opcode = op;
	w->wr.send_flags = flags;
	w->wr.wr.rdma.remote_addr = raddr;
	w->wr.wr.rdma.rkey = rkey;
	w->iova = raddr;
	w->dma.length = len;
	w->dma.resid = len;
	w->dma.num_sge = len ? 1 : 0;
	w->dma.sge[0].addr = laddr;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = lkey;
	return sizeof(*w) + sizeof(struct rxe_sge);
}

/* --- objects ---------------------------------------------------------------- */
struct hqp {
	struct ibv_qp *qp;
	struct ring sq, rq;
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	if (!ctx)
		die(name, ENODEV);
	return ctx;
}

static int to_init(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

/* A CQ and its ring. */
static struct ibv_cq *create_cq_ring(struct ibv_context *ctx, int cqe, struct ring *r)
{
	struct map a[64], b[64], n[4];
	int na = uverbs_maps(a, 64), nb, nn;
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

	if (!cq)
		die("ibv_create_cq", errno);
	nb = uverbs_maps(b, 64);
	nn = new_maps(a, na, b, nb, n, 4);
	if (nn != 1 || ring_from_map(r, &n[0]) || r->mask < (uint32_t)cqe ||
	    (1u << r->log2) < sizeof(struct ib_uverbs_wc))
		die("the CQ's ring is not among the new uverbs mappings", EPROTO);
	return cq;
}

/* A QP with its own receive queue, and its two rings told apart; left in
 * INIT with one receive posted. */
static void create_qp_rings(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
			    uint32_t swr, uint32_t rwr, uint32_t inl, struct ibv_mr *mr,
			    struct hqp *h)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = swr, .max_recv_wr = rwr, .max_send_sge = 4,
			 .max_recv_sge = 1, .max_inline_data = inl },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr rwr1 = { .wr_id = 0x7ec0, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct map a[64], b[64], n[4];
	struct ring r[2];
	uint32_t pi[2];
	int na = uverbs_maps(a, 64), nb, nn, err;

	h->qp = ibv_create_qp(pd, &ia);
	if (!h->qp)
		die("ibv_create_qp", errno);
	nb = uverbs_maps(b, 64);
	nn = new_maps(a, na, b, nb, n, 4);
	if (nn != 2 || ring_from_map(&r[0], &n[0]) || ring_from_map(&r[1], &n[1]))
		die("the QP's two rings are not among the new uverbs mappings", EPROTO);
	pi[0] = ld(&r[0].b->producer_index);
	pi[1] = ld(&r[1].b->producer_index);
	/* the provider takes receives from INIT on (C10-97.2.1) */
	err = to_init(h->qp, type);
	if (err)
		die("modify to INIT", err);
	err = ibv_post_recv(h->qp, &rwr1, &bad);
	if (err)
		die("ibv_post_recv", err);
	if (ld(&r[0].b->producer_index) != pi[0]) {
		h->rq = r[0];
		h->sq = r[1];
	} else if (ld(&r[1].b->producer_index) != pi[1]) {
		h->rq = r[1];
		h->sq = r[0];
	} else {
		die("a posted receive moved neither ring's producer index", EPROTO);
	}
	if ((1u << h->sq.log2) < sizeof(struct rxe_send_wqe) + sizeof(struct rxe_sge))
		die("the send ring's slots are smaller than a send WQE", EPROTO);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	int err = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);

	return err ? -err : (int)a.qp_state;
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* How long an RC requester waits for an ACK, and how often it retries. */
struct patience {
	uint8_t timeout;	/* 4.096 us * 2^timeout */
	uint8_t retry_cnt;
};

/* While WQEs are rewritten: a QP that a rewrite broke fails fast (8 ms). */
static const struct patience hasty = { .timeout = 10, .retry_cnt = 1 };
/* An application's: rides out a guest's scheduling stalls (0.5 s). */
static const struct patience patient = { .timeout = 14, .retry_cnt = 7 };

/* RESET, then INIT, RTR, RTS towards dqpn at dgid. */
static int rc_connect(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dgid, int sgid,
		      uint32_t rpsn, uint32_t spsn, const struct patience *pt)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	int err = to_state(qp, IBV_QPS_RESET);

	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = sgid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = spsn;
	a.timeout = pt->timeout;
	a.retry_cnt = pt->retry_cnt;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ud_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	int err = to_state(qp, IBV_QPS_RESET);

	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* Completions by status, polled for up to ms (stops early once want
 * completions came). */
struct tally {
	unsigned n, by[IBV_WC_GENERAL_ERR + 2];
	uint64_t last_wr_id;
};

static void poll_for(struct ibv_cq *cq, unsigned ms, unsigned want, struct tally *t,
		     void (*each)(const struct ibv_wc *, void *), void *arg)
{
	uint64_t end = now_ms() + ms;
	unsigned got = 0;

	while (now_ms() < end && (!want || got < want)) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);

		if (n < 0) {
			fail("ibv_poll_cq: %d", n);
			return;
		}
		for (int i = 0; i < n; i++) {
			unsigned s = wc[i].status <= IBV_WC_GENERAL_ERR ? wc[i].status :
				     IBV_WC_GENERAL_ERR + 1;

			t->n++;
			t->by[s]++;
			t->last_wr_id = wc[i].wr_id;
			if (each)
				each(&wc[i], arg);
		}
		got += n;
		if (!n)
			usleep(2000);
	}
}

static const char *tally_str(const struct tally *t, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (unsigned s = 0; s < IBV_WC_GENERAL_ERR + 2 && o < len; s++)
		if (t->by[s])
			o += snprintf(buf + o, len - o, "%s%s %u", o ? ", " : "",
				      s <= IBV_WC_GENERAL_ERR ? ibv_wc_status_str(s) : "other",
				      t->by[s]);
	if (!o)
		snprintf(buf, len, "none");
	return buf;
}

struct common {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ring cqr;
	void *buf;
};

#define BUF_BYTES 65536

static void common_init(struct common *c, const char *dev, int cqe)
{
	c->ctx = open_dev(dev);
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd)
		die("ibv_alloc_pd", errno);
	c->buf = aligned_alloc(4096, BUF_BYTES);
	if (!c->buf)
		die("aligned_alloc", ENOMEM);
	memset(c->buf, 0, BUF_BYTES);
	c->mr = ibv_reg_mr(c->pd, c->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!c->mr)
		die("ibv_reg_mr", errno);
	c->cq = create_cq_ring(c->ctx, cqe, &c->cqr);
}

static void common_fini(struct common *c)
{
	ibv_destroy_cq(c->cq);
	ibv_dereg_mr(c->mr);
	ibv_dealloc_pd(c->pd);
	ibv_close_device(c->ctx);
	free(c->buf);
}

/* --- state: posts to a QP in RESET and in ERR ------------------------------ */
static void find_wr(const struct ibv_wc *wc, void *arg)
{
	unsigned *seen = arg;

	if (wc->wr_id == 0xe770 && wc->status == IBV_WC_WR_FLUSH_ERR)
		seen[0]++;
	if (wc->wr_id == 0xe771 && wc->status == IBV_WC_WR_FLUSH_ERR)
		seen[1]++;
}

static void phase_state(const char *dev)
{
	struct common c;
	struct hqp h;
	struct wqe_buf wb;
	struct tally t = { 0 };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr = { .wr_id = 0xe771, .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned seen[2] = { 0, 0 };
	char s[256];
	size_t len;
	int err;

	common_init(&c, dev, 63);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 15, 15, 0, c.mr, &h);
	sge = (struct ibv_sge){ .addr = (uintptr_t)c.buf, .length = 64, .lkey = c.mr->lkey };
	info("RC QP %u: send ring %u x %u B, receive ring %u x %u B, CQ ring %u x %u B",
	     h.qp->qp_num, h.sq.mask + 1, 1u << h.sq.log2, h.rq.mask + 1, 1u << h.rq.log2,
	     c.cqr.mask + 1, 1u << c.cqr.log2);

	/* RESET: the module refuses the doorbell, as rxe; nothing runs */
	err = to_state(h.qp, IBV_QPS_RESET);
	if (err)
		die("modify to RESET", err);
	len = make_wqe(&wb, 0x5e70, IBV_WR_SEND, IBV_SEND_SIGNALED, 0, 0,
		       (uintptr_t)c.buf, 64, c.mr->lkey);
	put_wqe(&h.sq, &wb, len);
	err = doorbell(h.qp);
	if (err == EINVAL)
		ok("doorbell on a QP in RESET: EINVAL, as rxe");
	else
		fail("doorbell on a QP in RESET: %s (rxe: EINVAL)", err ? strerror(err) : "taken");
	poll_for(c.cq, 300, 0, &t, NULL, NULL);
	if (t.n)
		fail("a QP in RESET completed %u WRs: %s", t.n, tally_str(&t, s, sizeof(s)));
	else
		ok("nothing completes in RESET");

	/* ERR (through INIT: the core takes no RESET -> ERR): posted WRs flush */
	err = to_init(h.qp, IBV_QPT_RC);
	if (!err)
		err = to_state(h.qp, IBV_QPS_ERR);
	if (err)
		fail("modify RESET -> INIT -> ERR: %s", strerror(err));
	memset(&t, 0, sizeof(t));
	poll_for(c.cq, 500, 0, &t, NULL, NULL);
	info("entering ERR completed %s", tally_str(&t, s, sizeof(s)));
	err = ibv_post_recv(h.qp, &rwr, &bad);
	if (err)
		fail("ibv_post_recv in ERR: %s", strerror(err));
	len = make_wqe(&wb, 0xe770, IBV_WR_SEND, IBV_SEND_SIGNALED, 0, 0,
		       (uintptr_t)c.buf, 64, c.mr->lkey);
	put_wqe(&h.sq, &wb, len);
	err = doorbell(h.qp);
	if (err)
		fail("doorbell on a QP in ERR: %s (rxe takes it)", strerror(err));
	memset(&t, 0, sizeof(t));
	poll_for(c.cq, 3000, 2, &t, find_wr, seen);
	if (seen[0] == 1 && seen[1] == 1)
		ok("a send and a receive posted in ERR complete with WR_FLUSH_ERR, as rxe");
	else
		fail("posted in ERR: send flushed %u, receive flushed %u, got %s", seen[0],
		     seen[1], tally_str(&t, s, sizeof(s)));
	if (qp_state(h.qp) != IBV_QPS_ERR)
		fail("the QP is in state %d, not ERR", qp_state(h.qp));
	/* and back: RESET drops what was posted */
	put_wqe(&h.sq, &wb, len);
	err = to_state(h.qp, IBV_QPS_RESET);
	if (err)
		fail("modify ERR -> RESET: %s", strerror(err));
	memset(&t, 0, sizeof(t));
	poll_for(c.cq, 300, 0, &t, NULL, NULL);
	info("after ERR -> RESET: %s", tally_str(&t, s, sizeof(s)));
	ibv_destroy_qp(h.qp);
	common_fini(&c);
}

/* --- wqe: WQEs and SGEs rewritten under the doorbell ------------------------ */
struct mutator {
	struct ring *rings[2];
	atomic_bool stop;
	uint64_t flips;
	uint64_t addr, raddr;
	uint32_t lkey, rkey;
};

static void mutate_one(struct mutator *m, struct rxe_send_wqe *w, uint32_t slot_bytes, uint64_t *x)
{
	uint64_t r = rnd(x);
	uint32_t v = (uint32_t)(r >> 32);
	struct rxe_av *av = &w->wr.wr.ud.av;
	uint32_t max_sge = (slot_bytes - sizeof(*w)) / sizeof(struct rxe_sge);
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_SEND, 0x7f, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, 0xffffffff, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
		IBV_WR_SEND_WITH_INV, IBV_WR_TSO, 0x100, IBV_WR_RDMA_WRITE_WITH_IMM,
	};

	switch (r % 12) {
	case 0: {
		const uint32_t n[] = { 1, 0xffffffff, 33, max_sge, 0, 0x80000000 };

		w->dma.num_sge = n[v % 6];
		break;
	}
	case 1: {
		const uint64_t a[] = { m->addr, m->addr + BUF_BYTES - 1, 0, 0xdead00000000ull,
				       ~0ull, m->addr - 4096 };

		w->dma.sge[0].addr = a[v % 6];
		break;
	}
	case 2: {
		const uint32_t l[] = { 64, 0xffffffff, 0x80000000, BUF_BYTES, 0, BUF_BYTES + 1 };

		w->dma.sge[0].length = l[v % 6];
		break;
	}
	case 3:
		w->dma.sge[0].lkey = (v & 3) ? m->lkey : v;
		break;
	case 4:
		w->wr.opcode = ops[v % (sizeof(ops) / sizeof(ops[0]))];
		break;
	case 5: {
		const uint32_t f[] = { IBV_SEND_INLINE, IBV_SEND_SIGNALED, IBV_SEND_FENCE,
				       IBV_SEND_SOLICITED, 0xffffff00 };

		w->wr.send_flags ^= f[v % 5];
		break;
	}
	case 6: {
		const uint32_t l[] = { 64, 4096, 0xffffffff, 0x80000001, slot_bytes,
				       slot_bytes * 4, 0 };

		w->dma.length = l[v % 7];
		w->dma.resid = l[(v >> 8) % 7];
		break;
	}
	case 7:
		w->wr.wr.rdma.rkey = (v & 1) ? m->rkey : v;
		w->wr.wr.rdma.remote_addr = (v & 2) ? m->raddr : r;
		w->iova = (v & 4) ? m->raddr : ~r;
		break;
	case 8:
		/* the UD address vector */
		av->port_num = v;
		av->network_type = v >> 8;
		for (int i = 0; i < 6; i++)
			av->dmac[i] = (uint8_t)(r >> (8 * i));
		av->grh.sgid_index = v >> 16;
		av->grh.hop_limit = v >> 24;
		av->grh.flow_label = v;
		av->sgid_addr._sockaddr_in.sin_family = (v & 0x300) == 0 ? AF_INET :
							(v & 0x300) == 0x100 ? AF_INET6 : v;
		av->sgid_addr._sockaddr_in.sin_addr.s_addr = (uint32_t)r;
		memcpy(av->grh.dgid.raw, &r, 8);
		w->wr.wr.ud.remote_qpn = v;
		w->wr.wr.ud.ah_num = v;
		break;
	case 9:
		w->state = v % 8;
		w->status = v >> 8;
		w->first_psn = v;
		w->last_psn = ~v;
		break;
	case 10:
		/* the slot's last SGE, and more than fit */
		w->dma.num_sge = max_sge + (v & 1);
		w->dma.sge[max_sge - 1].addr = (v & 2) ? m->addr : r;
		w->dma.sge[max_sge - 1].length = (v & 4) ? 64 : v;
		w->dma.sge[max_sge - 1].lkey = (v & 8) ? m->lkey : v;
		break;
	default:
		w->dma.cur_sge = v;
		w->dma.sge_offset = v >> 3;
		w->wr.ex.invalidate_rkey = (v & 1) ? m->lkey : v;
		w->mask = v;
		break;
	}
}

static void *mutate(void *arg)
{
	struct mutator *m = arg;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	while (!atomic_load(&m->stop)) {
		for (int q = 0; q < 2; q++) {
			struct ring *r = m->rings[q];

			for (uint32_t i = 0; i <= r->mask; i++) {
				mutate_one(m, slot(r, i), 1u << r->log2, &x);
				m->flips++;
				if (!(i & 3))
					sched_yield();
			}
		}
	}
	return NULL;
}

struct peer {
	struct common c;
	struct ibv_qp *qp;
	union ibv_gid gid;
	int gidx;
};

static void peer_recvs(struct peer *p, int n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->c.buf, .length = 4096, .lkey = p->c.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	for (int i = 0; i < n; i++)
		if (ibv_post_recv(p->qp, &wr, &bad))
			break;
}

/* A device's port counters that are not 0, on one info line (what to
 * read when a pair fails). */
static void port_counters(const char *dev)
{
	char dir[256], path[512], line[1024] = "", v[32];
	struct dirent *d;
	size_t used = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/1/hw_counters", dev);
	dp = opendir(dir);
	if (!dp) {
		info("%s: no counters (%s)", dev, strerror(errno));
		return;
	}
	while ((d = readdir(dp)) && used < sizeof(line) - 64) {
		FILE *f;

		if (d->d_name[0] == '.' || strlen(d->d_name) > 64)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(v, sizeof(v), f) && strtoull(v, NULL, 10))
			used += snprintf(line + used, sizeof(line) - used, " %s=%llu", d->d_name,
					 strtoull(v, NULL, 10));
		fclose(f);
	}
	closedir(dp);
	info("%s counters:%s", dev, line);
}

/* Both ends of the RC pair back to RTS, at fresh PSNs. */
static int reconnect(struct hqp *h, int rgidx, const union ibv_gid *rgid, struct peer *p,
		     uint32_t round, const struct patience *pt)
{
	uint32_t psn_a = (round * 4099) & 0xffffff, psn_b = (round * 8111 + 7) & 0xffffff;
	int err;

	to_state(h->qp, IBV_QPS_RESET);
	to_state(p->qp, IBV_QPS_RESET);
	err = rc_connect(p->qp, h->qp->qp_num, rgid, p->gidx, psn_a, psn_b, pt);
	if (!err)
		err = rc_connect(h->qp, p->qp->qp_num, &p->gid, rgidx, psn_b, psn_a, pt);
	peer_recvs(p, 32);
	return err;
}

static void phase_wqe(const char *dev, int rgidx, const char *pdev, int pgidx, unsigned secs)
{
	struct common c;
	struct peer p;
	struct hqp rc, ud;
	struct mutator m = { 0 };
	struct tally t = { 0 };
	struct wqe_buf wb;
	union ibv_gid rgid;
	pthread_t th;
	unsigned rounds = 1, posted = 0, resets = 0, db_err = 0;
	uint64_t end, next_check = 0;
	char s[512];
	size_t len;
	int err;

	common_init(&c, dev, 4095);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 255, 63, 128, c.mr, &rc);
	create_qp_rings(c.pd, c.cq, IBV_QPT_UD, 255, 63, 128, c.mr, &ud);
	if (ibv_query_gid(c.ctx, 1, rgidx, &rgid))
		die("ibv_query_gid", errno);
	common_init(&p.c, pdev, 255);
	p.gidx = pgidx;
	if (ibv_query_gid(p.c.ctx, 1, pgidx, &p.gid))
		die("ibv_query_gid (peer)", errno);
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = p.c.cq, .recv_cq = p.c.cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 128, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		p.qp = ibv_create_qp(p.c.pd, &ia);
		if (!p.qp)
			die("ibv_create_qp (peer)", errno);
	}
	err = reconnect(&rc, rgidx, &rgid, &p, 0, &hasty);
	if (err)
		die("connecting the RC QP to the peer", err);
	err = ud_up(ud.qp);
	if (err)
		die("UD QP to RTS", err);
	info("RC QP %u (send ring %u x %u B) <-> %s QP %u; UD QP %u (send ring %u x %u B)",
	     rc.qp->qp_num, rc.sq.mask + 1, 1u << rc.sq.log2, pdev, p.qp->qp_num, ud.qp->qp_num,
	     ud.sq.mask + 1, 1u << ud.sq.log2);

	m.rings[0] = &rc.sq;
	m.rings[1] = &ud.sq;
	m.addr = (uintptr_t)c.buf;
	m.lkey = c.mr->lkey;
	m.raddr = (uintptr_t)p.c.buf;
	m.rkey = p.c.mr->rkey;
	if (pthread_create(&th, NULL, mutate, &m))
		die("pthread_create", EAGAIN);
	end = now_ms() + secs * 1000ull;
	while (now_ms() < end) {
		for (int i = 0; i < 8; i++) {
			len = make_wqe(&wb, 0x1000 + posted, IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED,
				       m.raddr + 64 * (i + 1), m.rkey, m.addr, 64, m.lkey);
			posted += !put_wqe(&rc.sq, &wb, len);
			len = make_wqe(&wb, 0x2000 + posted, IBV_WR_SEND, IBV_SEND_SIGNALED, 0, 0,
				       m.addr, 64, m.lkey);
			((struct rxe_send_wqe *)wb.raw)->wr.wr.ud.remote_qpn = p.qp->qp_num;
			((struct rxe_send_wqe *)wb.raw)->wr.wr.ud.remote_qkey = 0x11111111;
			posted += !put_wqe(&ud.sq, &wb, len);
		}
		db_err += !!doorbell(rc.qp);
		db_err += !!doorbell(ud.qp);
		poll_for(c.cq, 5, 0, &t, NULL, NULL);
		if (now_ms() >= next_check) {
			int rs = qp_state(rc.qp), us = qp_state(ud.qp);

			if (rs < 0 || us < 0) {
				fail("ibv_query_qp: %s", strerror(rs < 0 ? -rs : -us));
				break;
			}
			if (rs != IBV_QPS_RTS) {
				resets++;
				err = reconnect(&rc, rgidx, &rgid, &p, ++rounds, &hasty);
				if (err) {
					fail("reconnecting the RC QP: %s", strerror(err));
					break;
				}
			}
			if (us != IBV_QPS_RTS) {
				resets++;
				err = ud_up(ud.qp);
				if (err) {
					fail("the UD QP back to RTS: %s", strerror(err));
					break;
				}
			}
			next_check = now_ms() + 100;
		}
	}
	atomic_store(&m.stop, true);
	pthread_join(th, NULL);
	poll_for(c.cq, 500, 0, &t, NULL, NULL);
	info("%u WQEs posted under %" PRIu64 " rewrites, %u doorbells refused, %u resets",
	     posted, m.flips, db_err, resets);
	info("completions: %s", tally_str(&t, s, sizeof(s)));
	if (t.n - t.by[IBV_WC_SUCCESS] || resets)
		ok("the rewritten WQEs failed as errors (%u error completions, %u QPs in error)",
		   t.n - t.by[IBV_WC_SUCCESS], resets);
	else
		fail("no error completion and no QP in error from %u rewritten WQEs", posted);

	/* The pair still works: a clean WRITE through the provider, with an
	 * application's patience (a pair that is broken stays broken; a TCG
	 * guest that stalls past 8 ms does not fail it: seen once in CI). */
	err = reconnect(&rc, rgidx, &rgid, &p, ++rounds, &patient);
	if (err) {
		fail("reconnecting after the rewrites: %s", strerror(err));
	} else {
		struct ibv_sge sge = { .addr = m.addr, .length = 4096, .lkey = m.lkey };
		struct ibv_send_wr wr = {
			.wr_id = 0xc1ea, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = m.raddr + 8192, .rkey = m.rkey },
		}, *bad;
		struct tally t2 = { 0 };

		/* drop what is left, then the pattern */
		poll_for(c.cq, 200, 0, &t2, NULL, NULL);
		memset(&t2, 0, sizeof(t2));
		for (int i = 0; i < 4096; i++)
			((uint8_t *)c.buf)[i] = (uint8_t)(i * 7 + 3);
		err = ibv_post_send(rc.qp, &wr, &bad);
		if (err) {
			fail("ibv_post_send after the rewrites: %s", strerror(err));
		} else {
			poll_for(c.cq, 5000, 1, &t2, NULL, NULL);
			if (t2.n == 1 && t2.by[IBV_WC_SUCCESS] == 1 && t2.last_wr_id == 0xc1ea &&
			    !memcmp(c.buf, (uint8_t *)p.c.buf + 8192, 4096))
				ok("afterwards a clean RDMA WRITE arrives intact");
			else {
				fail("the clean WRITE after the rewrites: %s, data %s",
				     tally_str(&t2, s, sizeof(s)),
				     memcmp(c.buf, (uint8_t *)p.c.buf + 8192, 4096) ? "differs" :
				     "same");
				port_counters(dev);
				port_counters(pdev);
			}
		}
	}
	ibv_destroy_qp(rc.qp);
	ibv_destroy_qp(ud.qp);
	ibv_destroy_qp(p.qp);
	common_fini(&c);
	common_fini(&p.c);
}

/* --- tenants: another application's verified traffic on the same engine --- */
/* A second RC QP of c's, and it and qp connected to each other through
 * roxe0's own address (loopback): the peer. */
static struct ibv_qp *loopback_peer(struct common *c, struct ibv_qp *qp, int gidx,
				    const char *what)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *peer = ibv_create_qp(c->pd, &ia);
	union ibv_gid gid;
	int err;

	if (!peer)
		die(what, errno);
	err = ibv_query_gid(c->ctx, 1, gidx, &gid);
	if (!err)
		err = rc_connect(qp, peer->qp_num, &gid, gidx, 100, 200, &patient);
	if (!err)
		err = rc_connect(peer, qp->qp_num, &gid, gidx, 200, 100, &patient);
	if (err)
		die(what, err);
	return peer;
}

/* A second context (another tenant: its own uverbs file, PD and QPs): two
 * RC QPs of roxe0 connected to each other through loopback. */
struct tenant {
	struct common c;
	struct ibv_qp *a, *b;
};

static void tenant_init(struct tenant *t, const char *dev, int gidx)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	common_init(&t->c, dev, 63);
	ia.send_cq = ia.recv_cq = t->c.cq;
	t->a = ibv_create_qp(t->c.pd, &ia);
	if (!t->a)
		die("the other tenant's ibv_create_qp", errno);
	t->b = loopback_peer(&t->c, t->a, gidx, "the other tenant's loopback connection");
}

static void tenant_fini(struct tenant *t)
{
	ibv_destroy_qp(t->a);
	ibv_destroy_qp(t->b);
	common_fini(&t->c);
}

/* The other tenant's RDMA WRITEs of 4 KiB, a to b, each checked byte for
 * byte and each given 20 s (a guest under TCG is slow, an engine that
 * serves only the attacker never answers): how many arrived whole. */
static unsigned tenant_writes(struct tenant *t, unsigned n)
{
	uint8_t *src = t->c.buf, *dst = (uint8_t *)t->c.buf + 32768;
	unsigned good;

	for (good = 0; good < n; good++) {
		struct ibv_sge sge = { (uintptr_t)src, 4096, t->c.mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0x7e0000 + good, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct tally tl = { 0 };

		for (unsigned i = 0; i < 4096; i++)
			src[i] = (uint8_t)(i * 7 + good);
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = t->c.mr->rkey;
		if (ibv_post_send(t->a, &wr, &bad))
			break;
		poll_for(t->c.cq, 20000, 1, &tl, NULL, NULL);
		if (tl.n != 1 || tl.by[IBV_WC_SUCCESS] != 1 || memcmp(src, dst, 4096))
			break;
	}
	return good;
}

/* ibv_destroy_qp of the attacker's QP, timed: roxed must not be held. */
static void destroy_promptly(struct ibv_qp *qp, const char *what)
{
	uint64_t t0 = now_ms();
	int err = ibv_destroy_qp(qp);

	if (err)
		fail("ibv_destroy_qp of %s: %s", what, strerror(err));
	else if (now_ms() - t0 >= 2000)
		fail("ibv_destroy_qp of %s took %" PRIu64 " ms (the module's 2 s)", what,
		     now_ms() - t0);
	else
		ok("%s destroyed in %" PRIu64 " ms", what, now_ms() - t0);
}

/* --- bindwrap: a send queue of local WQEs kept full by its producer index --- */
struct wrap {
	struct ring *sq;
	struct ibv_qp *qp;
	atomic_bool stop;
	uint64_t moves, retired;
};

/* Every slot an unbind of the window, the producer index kept one short of
 * the consumer (a full ring, moved past it) as fast as the thread can
 * store it, the doorbell rung when roxed stopped taking them: every WQE
 * roxed retires shows it another. On another CPU than the engine's this
 * held an engine for as long as it ran (a guest of one vCPU cannot show
 * it: served_test hostile_sq_wrap_local_wqes does, on the engine thread). */
static void *wrap_play(void *arg)
{
	struct wrap *w = arg;
	uint32_t last = ld(&w->sq->b->consumer_index), idle = 0;

	while (!atomic_load(&w->stop)) {
		uint32_t ci = ld(&w->sq->b->consumer_index);

		if (ci != last) {
			w->retired += (ci - last) & w->sq->mask;
			last = ci;
			idle = 0;
		} else if (++idle == 256) {
			doorbell(w->qp);
			sched_yield();
			idle = 0;
		}
		st(&w->sq->b->producer_index, ci - 1);
		w->moves++;
	}
	st(&w->sq->b->producer_index, ld(&w->sq->b->consumer_index));
	return NULL;
}

static void phase_bindwrap(const char *dev, int gidx, unsigned secs)
{
	struct common c;
	struct tenant other;
	struct wrap w = { 0 };
	struct hqp h;
	struct ibv_qp *peer;
	struct ibv_mw *mw;
	pthread_t th;
	unsigned got;

	common_init(&c, dev, 255);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 63, 15, 0, c.mr, &h);
	mw = ibv_alloc_mw(c.pd, IBV_MW_TYPE_1);
	if (!mw)
		die("bindwrap: a type 1 window", errno);
	peer = loopback_peer(&c, h.qp, gidx, "bindwrap: connect");
	for (uint32_t i = 0; i <= h.sq.mask; i++) {
		struct rxe_send_wqe *q = slot(&h.sq, i);

		memset(q, 0, 1u << h.sq.log2);
		q->wr.wr_id = 0xb1d;
		q->wr.opcode = IBV_WR_BIND_MW;	/* length 0: an unbind, always taken */
		q->wr.wr.mw.mw_rkey = mw->rkey;
		q->wr.wr.mw.rkey = mw->rkey;
	}
	tenant_init(&other, dev, gidx);
	w.sq = &h.sq;
	w.qp = h.qp;
	if (pthread_create(&th, NULL, wrap_play, &w))
		die("pthread_create", EAGAIN);
	/* the other tenant's traffic on the same engine, while the games run */
	got = tenant_writes(&other, 20);
	for (uint64_t end = now_ms() + secs * 1000ull; now_ms() < end;)
		usleep(10000);
	atomic_store(&w.stop, true);
	pthread_join(th, NULL);
	if (got == 20)
		ok("the other tenant's 20 verified WRITEs arrived while roxed retired %" PRIu64
		   " unbinds of a wrapped send queue", w.retired);
	else
		fail("the other tenant's WRITE %u of 20 did not arrive whole while the send queue "
		     "wrapped (%" PRIu64 " unbinds retired): the engine was held", got + 1, w.retired);
	if (!w.retired)
		fail("no unbind was retired: the attack did not run");
	destroy_promptly(h.qp, "the wrapping QP");
	ibv_destroy_qp(peer);
	ibv_dealloc_mw(mw);
	tenant_fini(&other);
	common_fini(&c);
}

/* --- credit: a READ larger than the engine's credit, no timer, silent peer --- */
#define BIG_READ	(2u << 20)	/* 2048 responses at MTU 1024: past any budget */

static void phase_credit(const char *dev, int gidx, const char *pdev, int pgidx)
{
	struct ibv_context *pctx = open_dev(pdev);
	struct ibv_pd *ppd = ibv_alloc_pd(pctx);
	struct ibv_cq *pcq = ibv_create_cq(pctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	static const struct patience never = { .timeout = 0, .retry_cnt = 7 };	/* no timer */
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 0xbead, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct tenant other;
	struct common c;
	struct ibv_qp *qp, *gone;
	struct ibv_mr *big;
	union ibv_gid pgid;
	void *buf = aligned_alloc(4096, BIG_READ);
	uint32_t silent;
	unsigned got;
	int err;

	(void)dev;
	common_init(&c, dev, 15);
	ia.send_cq = ia.recv_cq = c.cq;
	qp = ibv_create_qp(c.pd, &ia);
	if (!ppd || !pcq || !buf || !qp)
		die("credit: setup", errno);
	ia.send_cq = ia.recv_cq = pcq;
	/* the silent peer: a QP of rxe0's, gone before anything reaches it */
	gone = ibv_create_qp(ppd, &ia);
	if (!gone)
		die("credit: the peer's QP", errno);
	silent = gone->qp_num;
	ibv_destroy_qp(gone);
	big = ibv_reg_mr(c.pd, buf, BIG_READ, IBV_ACCESS_LOCAL_WRITE);
	if (!big)
		die("credit: ibv_reg_mr", errno);
	err = ibv_query_gid(pctx, 1, pgidx, &pgid);
	if (!err)
		err = rc_connect(qp, silent, &pgid, gidx, 100, 200, &never);
	if (err)
		die("credit: connect to the silent peer", err);
	sge = (struct ibv_sge){ (uintptr_t)buf, BIG_READ, big->lkey };
	wr.wr.rdma.remote_addr = 0x100000;
	wr.wr.rdma.rkey = 0x1234;
	if (ibv_post_send(qp, &wr, &bad))
		die("credit: the READ", errno);
	info("a READ of %u B (%u responses) from a silent peer (rxe0 QP %u), no timer",
	     BIG_READ, BIG_READ / 1024, silent);
	usleep(200000);		/* it has gone out, alone or in parts */
	tenant_init(&other, dev, gidx);
	got = tenant_writes(&other, 20);
	if (got == 20)
		ok("the other tenant's 20 verified WRITEs arrived while the READ waits for ever");
	else
		fail("the other tenant's WRITE %u of 20 did not arrive whole while a timer-less "
		     "READ held the engine's credit", got + 1);
	destroy_promptly(qp, "the READ's QP");
	tenant_fini(&other);
	ibv_dereg_mr(big);
	free(buf);
	common_fini(&c);
	ibv_destroy_cq(pcq);
	ibv_dealloc_pd(ppd);
	ibv_close_device(pctx);
}

/* --- mwpd: binding another process's type 1 window by its keys ------------ */
/* Completions as "wr_id:status" words, for a failure's message. */
struct seen_wcs {
	char text[160];
};

static void note_wc(const struct ibv_wc *wc, void *arg)
{
	struct seen_wcs *sw = arg;
	size_t len = strlen(sw->text);

	snprintf(sw->text + len, sizeof(sw->text) - len, " 0x%llx:%d",
		 (unsigned long long)wc->wr_id, (int)wc->status);
}

static void phase_mwpd(const char *dev, int gidx)
{
	struct seen_wcs seen = { "" };
	struct common victim, c;
	struct ibv_mr *vmr;
	struct ibv_mw *vmw;
	struct ibv_qp *peer;
	struct wqe_buf wb;
	struct tally t = { 0 };
	struct hqp h;
	char s[256];
	int err;

	/* the victim: a type 1 window over its MR, never bound by it */
	common_init(&victim, dev, 15);
	vmr = ibv_reg_mr(victim.pd, victim.buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	vmw = vmr ? ibv_alloc_mw(victim.pd, IBV_MW_TYPE_1) : NULL;
	if (!vmw)
		die("mwpd: the victim's MR and window", errno);
	/* the attacker: another context (its own PD), an RC QP in RTS */
	common_init(&c, dev, 63);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 15, 15, 0, c.mr, &h);
	peer = loopback_peer(&c, h.qp, gidx, "mwpd: connect");
	/* a BIND_MW WQE naming the victim's window and MR by their keys:
	 * remote write over the victim's memory, under a key of our choice */
	make_wqe(&wb, 0x3a1, IBV_WR_BIND_MW, IBV_SEND_SIGNALED, 0, 0, 0, 0, 0);
	{
		struct rxe_send_wqe *q = (void *)wb.raw;

		q->wr.wr.mw.addr = (uintptr_t)victim.buf;
		q->wr.wr.mw.length = 4096;
		q->wr.wr.mw.mr_lkey = vmr->lkey;
		q->wr.wr.mw.mw_rkey = vmw->rkey;
		q->wr.wr.mw.rkey = (vmw->rkey & ~0xffu) | 0x5a;
		q->wr.wr.mw.access = IBV_ACCESS_REMOTE_WRITE;
	}
	if (put_wqe(&h.sq, wb.raw, sizeof(struct rxe_send_wqe)) || doorbell(h.qp))
		die("mwpd: post the bind", EIO);
	/* the bind's own completion, and nothing else: rc_connect's RESET
	 * dropped the receive create_qp_rings posted, so the QP's ERR has
	 * nothing to flush; a second look, 200 ms on, for what came after it */
	poll_for(c.cq, 10000, 1, &t, note_wc, &seen);
	poll_for(c.cq, 200, 0, &t, note_wc, &seen);
	if (t.n == 1 && t.by[IBV_WC_MW_BIND_ERR] == 1 && t.last_wr_id == 0x3a1)
		ok("binding another PD's type 1 window by its keys: refused (%s)",
		   tally_str(&t, s, sizeof(s)));
	else
		fail("binding another PD's type 1 window by its keys: %s; completions (wr_id:status):%s",
		     tally_str(&t, s, sizeof(s)), seen.text);
	destroy_promptly(h.qp, "the binding QP");
	ibv_destroy_qp(peer);
	common_fini(&c);
	/* nothing was bound over the victim's MR: it goes at once */
	err = ibv_dealloc_mw(vmw);
	if (err)
		fail("the victim's ibv_dealloc_mw: %s", strerror(err));
	err = ibv_dereg_mr(vmr);
	if (err)
		fail("the victim's ibv_dereg_mr (a window still bound over it?): %s",
		     strerror(err));
	common_fini(&victim);
}

/* --- pi: producer-index games while the QP flushes --------------------------- */
struct games {
	struct ring *rings[2];
	struct ibv_qp *qp;	/* ring its doorbell too, if set */
	atomic_bool stop;
	_Atomic uint64_t moves;
	uint64_t rung;		/* doorbells the thread rang */
	uint64_t consumed[2];	/* how far roxed's consumer indices went */
};


static void *play(void *arg)
{
	struct games *g = arg;
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint32_t last[2] = { ld(&g->rings[0]->b->consumer_index),
			     ld(&g->rings[1]->b->consumer_index) };

	while (!atomic_load(&g->stop)) {
		for (int q = 0; q < 2; q++) {
			struct rxe_queue_buf *b = g->rings[q]->b;
			uint32_t ci = ld(&b->consumer_index), r = (uint32_t)rnd(&x);

			g->consumed[q] += (ci - last[q]) & g->rings[q]->mask;
			last[q] = ci;

			/* mostly one short of the consumer (a full ring, moved
			 * past it), else anywhere ahead of it but the next slot:
			 * never where an engine that follows would stop */
			st(&b->producer_index, (r & 15) ? ci - 1 :
			   ci + 2 + r % (g->rings[q]->mask - 2));
			g->moves++;
		}
		/* and the engine is asked to look (a flush pass each time) */
		if (g->qp) {
			doorbell(g->qp);
			g->rung++;
		}
		sched_yield();
	}
	return NULL;
}


/* One round of verbs that need roxed (and, for the destroys, its engine):
 * the slowest one noted; 1 once one failed. */
static int other_work(struct common *o, const char **slowest, uint64_t *slowest_ms,
		      const struct games *g)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	const char *what = NULL;
	int e = 0;

	for (int step = 0; step < 7 && !what; step++) {
		static const char *const names[] = {
			"ibv_create_cq", "ibv_create_qp", "ibv_modify_qp", "ibv_destroy_qp",
			"ibv_destroy_cq", "ibv_reg_mr", "ibv_dereg_mr",
		};
		uint64_t t0 = now_ms();

		switch (step) {
		case 0:
			cq = ibv_create_cq(o->ctx, 7, NULL, NULL, 0);
			e = cq ? 0 : errno;
			break;
		case 1:
			ia.send_cq = ia.recv_cq = cq;
			qp = ibv_create_qp(o->pd, &ia);
			e = qp ? 0 : errno;
			break;
		case 2:
			e = to_init(qp, IBV_QPT_RC);
			break;
		case 3:
			e = ibv_destroy_qp(qp);
			qp = NULL;
			break;
		case 4:
			e = ibv_destroy_cq(cq);
			cq = NULL;
			break;
		case 5:
			mr = ibv_reg_mr(o->pd, o->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
			e = mr ? 0 : errno;
			break;
		default:
			e = ibv_dereg_mr(mr);
			break;
		}
		if (now_ms() - t0 >= 1000)
			info("%s took %" PRIu64 " ms (roxed has flushed %" PRIu64 " + %" PRIu64 ")",
			     names[step], now_ms() - t0, g->consumed[0], g->consumed[1]);
		if (now_ms() - t0 >= *slowest_ms) {
			*slowest_ms = now_ms() - t0;
			*slowest = names[step];
		}
		if (e) {
			what = names[step];
			fail("%s while the producer indices moved: %s", what, strerror(e));
		}
	}
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	return what != NULL;
}

static void phase_pi(const char *dev, unsigned secs, bool ring)
{
	struct common c, o;
	struct hqp h;
	struct games g = { 0 };
	struct tally t = { 0 };
	pthread_t th;
	uint64_t t0, end, slowest_ms = 0, doorbells;
	const char *slowest = "none";
	unsigned rounds = 0;
	char s[256];
	int err;

	/* A receive ring of 16384: an RQ flush pass outlasts a scheduler
	 * tick, so even on one CPU the thread moves the index during it and
	 * an unbounded flush never catches up, while a bounded pass of these
	 * (cheap) receive WQEs ends soon. The send ring is small: a bounded
	 * pass of send WQEs costs more. */
	common_init(&c, dev, 255);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 255, 16383, 0, c.mr, &h);
	info("RC QP %u: send ring %u x %u B, receive ring %u x %u B", h.qp->qp_num,
	     h.sq.mask + 1, 1u << h.sq.log2, h.rq.mask + 1, 1u << h.rq.log2);
	/* the other work: a second context of the same process */
	common_init(&o, dev, 15);

	g.rings[0] = &h.sq;
	g.rings[1] = &h.rq;
	doorbells = 0;
	g.qp = ring ? h.qp : NULL;
	if (pthread_create(&th, NULL, play, &g))
		die("pthread_create", EAGAIN);
	/* the thread is at it before the QP goes to ERR */
	for (t0 = now_ms(); atomic_load(&g.moves) < 10000 && now_ms() - t0 < 2000;)
		usleep(1000);
	t0 = now_ms();
	err = to_state(h.qp, IBV_QPS_ERR);
	if (err)
		fail("modify to ERR during the games: %s", strerror(err));
	else
		info("modify to ERR during the games: %" PRIu64 " ms", now_ms() - t0);
	for (int i = 0; i < 3; i++) {
		err = doorbell(h.qp);
		doorbells++;
		if (err)
			fail("doorbell in ERR during the games: %s", strerror(err));
	}
	/* a doorbell now and then (each a flush in ERR), and other verbs */
	end = now_ms() + secs * 1000ull;
	while (now_ms() < end && !other_work(&o, &slowest, &slowest_ms, &g)) {
		err = doorbell(h.qp);
		doorbells++;
		if (err) {
			fail("doorbell in ERR during the games: %s", strerror(err));
			break;
		}
		rounds++;
	}
	atomic_store(&g.stop, true);
	pthread_join(th, NULL);
	/* the module gives roxed ROXE_KABI_TIMEOUT_MS (2 s) per command, then
	 * answers for it (destroys "succeed"): a verb that took that long was
	 * not served */
	if (slowest_ms >= 2000)
		fail("roxed did not answer %s within the module's 2 s (%" PRIu64 " ms) while "
		     "the producer indices moved", slowest, slowest_ms);
	else if (rounds)
		ok("%u rounds of other verbs answered while the producer indices moved %" PRIu64
		   " times (slowest: %s, %" PRIu64 " ms)", rounds, g.moves, slowest, slowest_ms);
	/* Each look at an ERR QP (the move to ERR, a doorbell; the thread's
	 * own doorbells in pidb) may flush what was posted then: a ring at
	 * most. More means a flush loop that followed the moving index. */
	for (int q = 0; q < 2; q++) {
		uint64_t looks = doorbells + 1 + g.rung, bound = looks * g.rings[q]->mask;
		const char *which = q ? "receive" : "send";

		if (g.consumed[q] > bound)
			fail("roxed flushed %" PRIu64 " %s WQEs for %" PRIu64 " looks at the QP, "
			     "more than a ring (%u) each: its flush followed the moving producer "
			     "index", g.consumed[q], which, looks, g.rings[q]->mask);
		else
			ok("roxed flushed %" PRIu64 " %s WQEs for %" PRIu64 " looks at the QP, at "
			   "most a ring (%u) each", g.consumed[q], which, looks, g.rings[q]->mask);
	}
	/* the QP's queues as the application left them; flushes are bounded */
	poll_for(c.cq, 1000, 0, &t, NULL, NULL);
	info("completions: %s", tally_str(&t, s, sizeof(s)));
	t0 = now_ms();
	err = to_state(h.qp, IBV_QPS_RESET);
	if (err)
		fail("modify to RESET after the games: %s", strerror(err));
	else
		ok("RESET after the games in %" PRIu64 " ms", now_ms() - t0);
	err = ibv_destroy_qp(h.qp);
	if (err)
		fail("ibv_destroy_qp: %s", strerror(err));
	common_fini(&o);
	common_fini(&c);
}

/* --- header: ring geometry rewritten, then RESET and ERR --------------------- */
static void phase_header(const char *dev)
{
	static const struct {
		uint32_t mask, log2;
	} geo[] = { { 0xffffffff, 24 }, { 0xffffffff, 200 }, { 0x7fffffff, 0 } };
	struct common c;
	struct hqp h;
	struct tally t = { 0 };
	char s[256];
	int err;

	common_init(&c, dev, 255);
	create_qp_rings(c.pd, c.cq, IBV_QPT_RC, 63, 63, 0, c.mr, &h);
	for (unsigned i = 0; i < sizeof(geo) / sizeof(geo[0]); i++) {
		struct rxe_queue_buf *rings[] = { h.sq.b, h.rq.b, c.cqr.b };

		for (unsigned k = 0; k < 3; k++) {
			rings[k]->index_mask = geo[i].mask;
			rings[k]->log2_elem_size = geo[i].log2;
		}
		st(&h.sq.b->producer_index, 0x12345 + i);
		st(&h.rq.b->producer_index, 0x23456 + i);
		err = to_state(h.qp, IBV_QPS_RESET);
		info("headers: index_mask %#x, log2_elem_size %u: RESET %s", geo[i].mask,
		     geo[i].log2, err ? strerror(err) : "done");
		/* work "posted" past what the module made */
		st(&h.sq.b->producer_index, 0x12345 + i + 8);
		st(&h.rq.b->producer_index, 0x23456 + i + 8);
		err = to_init(h.qp, IBV_QPT_RC);
		if (!err)
			err = to_state(h.qp, IBV_QPS_ERR);
		info("  INIT, ERR: %s", err ? strerror(err) : "done");
		err = doorbell(h.qp);
		info("  doorbell %s", err ? strerror(err) : "taken");
		usleep(300000);
		err = doorbell(h.qp);
		if (err)
			fail("a doorbell in ERR after rewritten headers: %s", strerror(err));
		/* the provider reads the CQ's header: put it back to poll */
		ring_restore(&c.cqr);
		poll_for(c.cq, 700, 0, &t, NULL, NULL);
		info("  completions so far: %s", tally_str(&t, s, sizeof(s)));
	}
	ring_restore(&h.sq);
	ring_restore(&h.rq);
	err = to_state(h.qp, IBV_QPS_RESET);
	if (err)
		fail("RESET with the headers restored: %s", strerror(err));
	else if (qp_state(h.qp) != IBV_QPS_RESET)
		fail("the QP is in state %d after RESET", qp_state(h.qp));
	else
		ok("the QP took RESET, ERR and doorbells with rewritten ring headers "
		   "(%u completions: %s)", t.n, tally_str(&t, s, sizeof(s)));
	err = ibv_destroy_qp(h.qp);
	if (err)
		fail("ibv_destroy_qp: %s", strerror(err));
	common_fini(&c);
}

/* --- flood: one tenant floods the command channel, another's verbs --------- */
#define FLOOD_THREADS	32
#define VICTIM_UID	4242
#define VICTIM_ROUNDS	50	/* a CQ created and destroyed */
#define TURN_BOUND	3	/* other tenants: flood, traffic, kernel */
#define VICTIM_EVENTS	20	/* SQ_DRAINED events the victim waits for */
#define EVENT_WAIT_MS	5000	/* a hang guard: the count decides */

/* The index of the device's GID the flood's and the victim's RC QPs loop
 * back to (set before the victim is forked). */
static int flood_gidx;

struct flood {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* the multicast churners' QPs' */
	atomic_int ids;
	atomic_ulong attaches;
	atomic_ulong drains;		/* SQD transitions asking for an event */
	atomic_bool stop;
	atomic_uint started;
	atomic_ulong verbs;
	atomic_ulong errors;
	atomic_int first_err;
};

static void drop_to(uid_t id)
{
	if (!geteuid() && (setgroups(0, NULL) || setgid(id) || setuid(id)))
		die("dropping root", errno);
}

/* A multicast group of the flood's (per thread) or the mcast phase's (n). */
static union ibv_gid flood_group(uint8_t tag, unsigned n)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e, [13] = tag } };

	g.raw[14] = (uint8_t)(n >> 8);
	g.raw[15] = (uint8_t)n;
	return g;
}

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	return ibv_create_qp(pd, &ia);
}

/* An RC QP connected to itself over the device's own GID, in RTS. */
static struct ibv_qp *loop_rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	union ibv_gid gid;
	int err;

	if (!qp)
		return NULL;
	err = ibv_query_gid(pd->context, 1, flood_gidx, &gid) ? errno : 0;
	if (!err)
		err = rc_connect(qp, qp->qp_num, &gid, flood_gidx, 1, 1, &patient);
	if (err) {
		ibv_destroy_qp(qp);
		errno = err;
		return NULL;
	}
	return qp;
}

/* RTS -> SQD asking for IBV_EVENT_SQ_DRAINED (an empty send queue drains
 * at once), and back: an asynchronous event per call, from roxed. */
static int drain_cycle(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);

	return err ? err : to_state(qp, IBV_QPS_RTS);
}

static void *flood_loop(void *arg)
{
	struct flood *f = arg;
	int id = atomic_fetch_add(&f->ids, 1);
	union ibv_gid g = flood_group(0xf1, (unsigned)id);
	bool events = id % 4 == 1, mcast = id % 4 == 3, counted = false;
	struct ibv_qp *qp = mcast ? ud_qp(f->pd, f->cq) : events ? loop_rc_qp(f->pd, f->cq) : NULL;

	if ((mcast || events) && !qp) {
		atomic_fetch_add(&f->errors, 1);
		atomic_store(&f->first_err, errno);
	}
	while (!atomic_load(&f->stop)) {
		int e;

		if (qp && mcast) {
			e = ibv_attach_mcast(qp, &g, 0);
			if (!e)
				e = ibv_detach_mcast(qp, &g, 0);
			atomic_fetch_add(&f->attaches, 1);
		} else if (qp) {
			/* events never read: they pile up in this context */
			e = drain_cycle(qp);
			atomic_fetch_add(&f->drains, 1);
		} else {
			struct ibv_cq *cq = ibv_create_cq(f->ctx, 1, NULL, NULL, 0);

			e = cq ? ibv_destroy_cq(cq) : errno;
		}

		if (e) {
			int none = 0;

			atomic_compare_exchange_strong(&f->first_err, &none, e);
			atomic_fetch_add(&f->errors, 1);
		}
		atomic_fetch_add(&f->verbs, 2);
		if (!counted) {
			atomic_fetch_add(&f->started, 1);
			counted = true;
		}
	}
	if (qp)
		ibv_destroy_qp(qp);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The victim's own SQ_DRAINED events, VICTIM_EVENTS of them, each of
 * which must reach it (the flood's are never read: roxed's ring shares
 * its room max-min between tenants, user/core/event.c); their latency in
 * lat (printed only). How many arrived. */
static unsigned victim_events(struct ibv_context *ctx, uint64_t *lat)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? loop_rc_qp(pd, cq) : NULL;
	unsigned n = 0;

	if (!qp) {
		fail("the victim's RC QP: %s", strerror(errno));
		goto out;
	}
	while (n < VICTIM_EVENTS) {
		struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		uint64_t t0 = now_ms();
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
		int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);

		if (e) {
			fail("victim: RTS -> SQD %u under the flood: %s", n, strerror(e));
			break;
		}
		if (poll(&p, 1, EVENT_WAIT_MS) != 1 || ibv_get_async_event(ctx, &ev)) {
			fail("victim: SQ_DRAINED %u of %d not there after %d ms", n, VICTIM_EVENTS,
			     EVENT_WAIT_MS);
			break;
		}
		lat[n] = now_ms() - t0;
		ibv_ack_async_event(&ev);
		if (ev.event_type != IBV_EVENT_SQ_DRAINED || ev.element.qp != qp) {
			fail("victim: event %u is %s, not its QP's SQ_DRAINED", n,
			     ibv_event_type_str(ev.event_type));
			break;
		}
		n++;
		e = to_state(qp, IBV_QPS_RTS);
		if (e) {
			fail("victim: SQD -> RTS %u: %s", n, strerror(e));
			break;
		}
	}
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	return n;
}

/* The victim: another user's cheap verbs, each timed (printed only). */
static void __attribute__((noreturn)) victim(const char *dev, int go)
{
	uint64_t lat[2 * VICTIM_ROUNDS], evlat[VICTIM_EVENTS];
	struct ibv_context *ctx;
	unsigned n = 0;
	char c;

	drop_to(VICTIM_UID);
	phase = "flood victim";
	signal(SIGALRM, on_alarm);
	alarm(120);
	ctx = open_dev(dev);
	if (read(go, &c, 1) != 1)
		die("the flood never started", EPIPE);
	for (int i = 0; i < VICTIM_ROUNDS; i++) {
		uint64_t t0 = now_ms();
		struct ibv_cq *cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
		int e;

		lat[n++] = now_ms() - t0;
		if (!cq) {
			fail("ibv_create_cq %d under the flood: %s", i, strerror(errno));
			break;
		}
		t0 = now_ms();
		e = ibv_destroy_cq(cq);
		lat[n++] = now_ms() - t0;
		if (e) {
			fail("ibv_destroy_cq %d under the flood: %s", i, strerror(e));
			break;
		}
	}
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	if (!fails)
		ok("uid %d: %u verbs under the flood, none failed", VICTIM_UID, n);
	info("their latency: median %" PRIu64 " ms, worst %" PRIu64 " ms", n ? lat[n / 2] : 0,
	     n ? lat[n - 1] : 0);
	if (!fails) {
		n = victim_events(ctx, evlat);
		qsort(evlat, n, sizeof(evlat[0]), cmp_u64);
		if (n == VICTIM_EVENTS)
			ok("uid %d: its %u SQ_DRAINED events all came under the flood's", VICTIM_UID,
			   n);
		info("their latency: median %" PRIu64 " ms, worst %" PRIu64 " ms",
		     n ? evlat[n / 2] : 0, n ? evlat[n - 1] : 0);
	}
	ibv_close_device(ctx);
	exit(fails ? 1 : 0);
}

static bool port_counter(const char *dev, const char *name, uint64_t *v)
{
	char path[256], buf[32];
	FILE *f;
	bool got;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	f = fopen(path, "r");
	if (!f)
		return false;
	got = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (got)
		*v = strtoull(buf, NULL, 10);
	return got;
}

/* A process of another user (uid VICTIM_UID) running fn(dev, go), which
 * waits for a byte on go before it acts; this one drops to nobody. Its pid,
 * and in *go the end to write that byte to. */
static pid_t other_tenant(void (*fn)(const char *dev, int go), const char *dev, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(p[1]);
		fn(dev, p[0]);	/* exits */
		exit(1);
	}
	close(p[0]);
	drop_to(65534);
	*go = p[1];
	return pid;
}

static void phase_flood(const char *dev, int gidx, unsigned secs)
{
	pthread_t th[FLOOD_THREADS];
	struct flood f = { 0 };
	uint64_t t0, turn, waits;
	int go, st = 0;
	pid_t pid;

	flood_gidx = gidx;
	pid = other_tenant(victim, dev, &go);
	f.ctx = open_dev(dev);
	f.pd = ibv_alloc_pd(f.ctx);
	f.cq = f.pd ? ibv_create_cq(f.ctx, 16, NULL, NULL, 0) : NULL;
	if (!f.cq)
		die("the flood's PD and CQ", errno);
	for (int i = 0; i < FLOOD_THREADS; i++)
		if (pthread_create(&th[i], NULL, flood_loop, &f))
			die("pthread_create", EAGAIN);
	/* the victim starts once every thread has been answered once */
	t0 = now_ms();
	while (atomic_load(&f.started) < FLOOD_THREADS && now_ms() - t0 < secs * 1000)
		usleep(10000);
	if (write(go, "g", 1) != 1)
		die("starting the victim", errno);
	close(go);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() - t0 >= secs * 1000)
			atomic_store(&f.stop, true);
		usleep(10000);
	}
	atomic_store(&f.stop, true);
	for (int i = 0; i < FLOOD_THREADS; i++)
		pthread_join(th[i], NULL);
	info("the flood: %d threads, %lu verbs (%lu multicast attach and detach, %lu SQD "
	     "transitions raising an event) in %" PRIu64 " ms, %lu failed%s%s", FLOOD_THREADS,
	     atomic_load(&f.verbs), atomic_load(&f.attaches), atomic_load(&f.drains),
	     now_ms() - t0, atomic_load(&f.errors),
	     atomic_load(&f.errors) ? ", first: " : "",
	     atomic_load(&f.errors) ? strerror(atomic_load(&f.first_err)) : "");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("the victim's verbs failed (status 0x%x)", st);
	if (!port_counter(dev, "cmd_turn_max", &turn))
		fail("no counter cmd_turn_max on %s", dev);
	else if (turn > TURN_BOUND)
		fail("cmd_turn_max %" PRIu64 ": a command waited behind more than one command of "
		     "each of the other %d tenants per command of its own", turn, TURN_BOUND);
	else
		ok("cmd_turn_max %" PRIu64 ": tenants served in turn", turn);
	if (!port_counter(dev, "cmd_cap_waits", &waits))
		fail("no counter cmd_cap_waits on %s", dev);
	else if (!waits)
		fail("the flood never reached its tenant's cap (cmd_cap_waits 0)");
	else
		ok("the flood waited for its tenant's cap %" PRIu64 " times", waits);
	ibv_destroy_cq(f.cq);
	ibv_dealloc_pd(f.pd);
	ibv_close_device(f.ctx);
}

/* --- mcast: one tenant takes all the multicast groups it can -------------- */
/* Another user's QP attaches to a group of its own and to the greedy
 * tenant's first (go: the greedy holds its share). */
static void __attribute__((noreturn)) mcast_other(const char *dev, int go)
{
	union ibv_gid own = flood_group(0xf2, 1), theirs = flood_group(0xf3, 0);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char c;
	int e;

	drop_to(VICTIM_UID);
	phase = "mcast other tenant";
	alarm(120);
	ctx = open_dev(dev);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	qp = cq ? ud_qp(pd, cq) : NULL;
	if (!qp)
		die("the other tenant's UD QP", errno);
	if (read(go, &c, 1) != 1)
		die("the greedy tenant never filled its share", EPIPE);
	e = ibv_attach_mcast(qp, &own, 0);
	if (e)
		fail("uid %d: attach to a group of its own: %s", VICTIM_UID, strerror(e));
	e = ibv_attach_mcast(qp, &theirs, 0);
	if (e)
		fail("uid %d: attach to the greedy tenant's group: %s", VICTIM_UID, strerror(e));
	if (!fails)
		ok("uid %d attached to two groups while nobody held its share", VICTIM_UID);
	/* uverbs refuses to destroy a QP with attachments (EBUSY) */
	if (ibv_detach_mcast(qp, &own, 0) || ibv_detach_mcast(qp, &theirs, 0) ||
	    ibv_destroy_qp(qp))
		fail("uid %d: detach and destroy: %s", VICTIM_UID, strerror(errno));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	exit(fails ? 1 : 0);
}

static void phase_mcast(const char *dev)
{
	struct ibv_qp *qp[2];
	union ibv_gid g;
	struct common c;
	unsigned n = 0;
	int go, st = 0, e = 0;
	pid_t pid = other_tenant(mcast_other, dev, &go);

	common_init(&c, dev, 16);
	for (int i = 0; i < 2; i++)
		if (!(qp[i] = ud_qp(c.pd, c.cq)))
			die("ibv_create_qp UD", errno);
	while (n < 2 * ROXE_MAX_MCAST_TENANT_ATTACH) {
		g = flood_group(0xf3, n);
		e = ibv_attach_mcast(qp[n & 1], &g, 0);
		if (e)
			break;
		n++;
	}
	if (e == ENOMEM && n == ROXE_MAX_MCAST_TENANT_ATTACH)
		ok("nobody attached %u times, then ENOMEM: its share", n);
	else
		fail("nobody attached %u times (its share: %u), then %s", n,
		     ROXE_MAX_MCAST_TENANT_ATTACH, e ? strerror(e) : "no refusal");
	if (write(go, "g", 1) != 1)
		die("starting the other tenant", errno);
	close(go);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("the other tenant's attaches failed (status 0x%x)", st);
	/* a detach gives one back, and only one */
	g = flood_group(0xf3, 0);
	e = ibv_detach_mcast(qp[0], &g, 0);
	if (!e) {
		g = flood_group(0xf4, 0);
		e = ibv_attach_mcast(qp[0], &g, 0);
	}
	if (e)
		fail("attach after a detach: %s", strerror(e));
	g = flood_group(0xf4, 1);
	e = ibv_attach_mcast(qp[0], &g, 0);
	if (e != ENOMEM)
		fail("a second attach after one detach: %s, not ENOMEM", e ? strerror(e) : "taken");
	else
		ok("a detach gave back one attachment");
	/* uverbs refuses to destroy a QP with attachments (EBUSY): every
	 * group left one by one, each within the module's 2 s */
	for (unsigned i = 1; i < n; i++) {
		g = flood_group(0xf3, i);
		e = ibv_detach_mcast(qp[i & 1], &g, 0);
		if (e) {
			fail("detach %u of %u: %s", i, n, strerror(e));
			break;
		}
	}
	g = flood_group(0xf4, 0);
	e = ibv_detach_mcast(qp[0], &g, 0);
	if (e)
		fail("the last detach: %s", strerror(e));
	destroy_promptly(qp[0], "a QP that held 512 groups");
	destroy_promptly(qp[1], "the other QP that held 512 groups");
	common_fini(&c);
}

/* --- dbflood: one QP's doorbell rung in a loop while roxed is stopped ------- */
#define DB_FLOOD	2048	/* twice the module's doorbell ring (1024 slots) */

/* One byte over a pipe; false if the other end went away. */
static bool say_byte(int fd, char c)
{
	return write(fd, &c, 1) == 1;
}

static bool hear_byte(int fd, char want)
{
	char c;

	return read(fd, &c, 1) == 1 && c == want;
}

/* A 4 KiB WRITE of pattern seed through qp to its loopback peer (both in
 * c's buffer), completed within 20 s and checked byte for byte. */
static bool write_through(struct common *c, struct ibv_qp *qp, uint8_t seed, bool post)
{
	uint8_t *src = (uint8_t *)c->buf + 8192, *dst = (uint8_t *)c->buf + 40960;
	struct ibv_sge sge = { (uintptr_t)src, 4096, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0xdb00 + seed, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct tally t = { 0 };

	if (post) {
		for (unsigned i = 0; i < 4096; i++)
			src[i] = (uint8_t)(i * 13 + seed);
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = c->mr->rkey;
		if (ibv_post_send(qp, &wr, &bad))
			return false;
		return true;
	}
	poll_for(c->cq, 20000, 1, &t, NULL, NULL);
	return t.n == 1 && t.by[IBV_WC_SUCCESS] == 1 && t.last_wr_id == 0xdb00u + seed &&
	       !memcmp(src, dst, 4096);
}

/* The hostile tenant (nobody): a WRITE posted and its QP's doorbell rung
 * DB_FLOOD times while roxed is stopped, between two of its engine's
 * turns; then the WRITE, the QP's next one and another tenant's WRITEs
 * must arrive, and the module's doorbell rings must not have overflowed
 * (db_overflows: doorbells that found their engine's ring full, each then
 * costing roxed a look at every QP of the engine). */
static void __attribute__((noreturn)) dbflood_hostile(const char *dev, int gidx, int up,
						      int down)
{
	uint64_t before = 0, after = 0;
	struct tenant other;
	struct common c;
	struct ibv_qp *qp, *peer;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned bad = 0, got;

	drop_to(65534);
	phase = "dbflood hostile";
	signal(SIGALRM, on_alarm);
	alarm(120);
	common_init(&c, dev, 15);
	ia.send_cq = ia.recv_cq = c.cq;
	qp = ibv_create_qp(c.pd, &ia);
	if (!qp)
		die("ibv_create_qp", errno);
	peer = loopback_peer(&c, qp, gidx, "the flooding QP's loopback connection");
	tenant_init(&other, dev, gidx);
	if (!port_counter(dev, "db_overflows", &before))
		fail("no counter db_overflows on %s", dev);
	if (!say_byte(up, 'r') || !hear_byte(down, 'g'))
		die("the parent went away", EPIPE);
	/* roxed is stopped: nothing is taken off the ring meanwhile */
	if (!write_through(&c, qp, 1, true))
		die("ibv_post_send", errno);
	for (unsigned i = 0; i < DB_FLOOD; i++)
		bad += doorbell(qp) != 0;
	if (!say_byte(up, 'd') || !hear_byte(down, 'c'))
		die("the parent went away", EPIPE);
	if (bad)
		fail("%u of %u doorbells failed", bad, DB_FLOOD);
	if (write_through(&c, qp, 1, false))
		ok("the WRITE posted before %u doorbells arrived once roxed went on", DB_FLOOD);
	else
		fail("the WRITE posted before %u doorbells did not arrive whole", DB_FLOOD);
	/* roxed looked at the QP since: its next doorbell reaches roxed again */
	if (write_through(&c, qp, 2, true) && write_through(&c, qp, 2, false))
		ok("the flooding QP's next WRITE arrived: no doorbell lost");
	else
		fail("the flooding QP's next WRITE did not arrive whole: a doorbell was lost");
	got = tenant_writes(&other, 20);
	if (got == 20)
		ok("the other tenant's 20 verified WRITEs arrived after the flood");
	else
		fail("the other tenant's WRITE %u of 20 did not arrive whole", got + 1);
	if (!port_counter(dev, "db_overflows", &after))
		fail("no counter db_overflows on %s", dev);
	else if (after != before)
		fail("%u doorbells of one QP between two turns of roxed's engine overflowed its "
		     "ring %" PRIu64 " times (db_overflows %" PRIu64 " -> %" PRIu64 "): each "
		     "overflow makes roxed look at every QP of the engine", DB_FLOOD,
		     after - before, before, after);
	else
		ok("%u doorbells of one QP between two turns of roxed's engine: the ring never "
		   "overflowed (db_overflows %" PRIu64 ")", DB_FLOOD, after);
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
	tenant_fini(&other);
	common_fini(&c);
	exit(fails ? 1 : 0);
}

/* Has every thread of pid stopped (SIGSTOP)? */
static bool all_stopped(pid_t pid)
{
	char path[64], buf[512];
	struct dirent *d;
	bool all = true;
	unsigned n = 0;
	DIR *dp;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dp = opendir(path);
	if (!dp)
		return false;
	while (all && (d = readdir(dp))) {
		FILE *f;
		char *p;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* a thread that exited */
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		all = p && (p[2] == 'T' || p[2] == 't');
		n++;
		fclose(f);
	}
	closedir(dp);
	return all && n;
}

/* roxed (pid) stopped while the hostile tenant rings, so that every
 * doorbell falls between two turns of its engine: what the ring holds
 * then does not depend on how the guest schedules. The stop is short
 * (the doorbells only): the other applications' RC QPs ride it out. */
static void phase_dbflood(const char *dev, int gidx, pid_t roxed)
{
	int up[2], down[2], st = 0;
	uint64_t t0, stopped = 0;
	bool ready, rung = false;
	pid_t pid;

	if (roxed <= 1)
		die("dbflood needs roxed's pid", EINVAL);
	signal(SIGPIPE, SIG_IGN);	/* a side that died: its pipe says so */
	if (pipe(up) || pipe(down))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(up[0]);
		close(down[1]);
		dbflood_hostile(dev, gidx, up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	ready = hear_byte(up[0], 'r');
	if (ready && !kill(roxed, SIGSTOP)) {
		for (t0 = now_ms(); !all_stopped(roxed) && now_ms() - t0 < 10000;)
			usleep(1000);
		if (!all_stopped(roxed))
			fail("roxed (pid %d) did not stop", (int)roxed);
		t0 = now_ms();
		rung = say_byte(down[1], 'g') && hear_byte(up[0], 'd');
		stopped = now_ms() - t0;
		kill(roxed, SIGCONT);
	} else if (ready) {
		fail("SIGSTOP to roxed (pid %d): %s", (int)roxed, strerror(errno));
	}
	if (rung)
		info("roxed stopped for %" PRIu64 " ms while one QP's doorbell rang %u times",
		     stopped, DB_FLOOD);
	say_byte(down[1], 'c');
	close(down[1]);
	waitpid(pid, &st, 0);
	close(up[0]);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail("the hostile tenant's checks failed (status 0x%x)", st);
}

int main(int argc, char **argv)
{
	unsigned secs;

	if (argc < 6) {
		fprintf(stderr, "usage: %s state|wqe|pi|pidb|header|bindwrap|credit|mwpd|flood|mcast "
			"ROXE_DEV ROXE_GID PEER_DEV PEER_GID "
			"[SECONDS]\n       %s dbflood ROXE_DEV ROXE_GID PEER_DEV PEER_GID "
			"ROXED_PID\n", argv[0], argv[0]);
		return 1;
	}
	phase = argv[1];
	secs = argc > 6 && strcmp(phase, "dbflood") ? (unsigned)atoi(argv[6]) : 5;
	signal(SIGALRM, on_alarm);
	alarm(secs + 60);
	/* any uverbs user can do all of this: run as nobody (flood drops
	 * and mcast after they forked their other tenant) */
	if (strcmp(phase, "flood") && strcmp(phase, "dbflood") && strcmp(phase, "mcast"))
		drop_to(65534);
	if (!strcmp(phase, "state"))
		phase_state(argv[2]);
	else if (!strcmp(phase, "wqe"))
		phase_wqe(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]), secs);
	else if (!strcmp(phase, "pi"))
		phase_pi(argv[2], secs, false);
	else if (!strcmp(phase, "pidb"))
		phase_pi(argv[2], secs, true);
	else if (!strcmp(phase, "header"))
		phase_header(argv[2]);
	else if (!strcmp(phase, "bindwrap"))
		phase_bindwrap(argv[2], atoi(argv[3]), secs);
	else if (!strcmp(phase, "credit"))
		phase_credit(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]));
	else if (!strcmp(phase, "mwpd"))
		phase_mwpd(argv[2], atoi(argv[3]));
	else if (!strcmp(phase, "flood"))
		phase_flood(argv[2], atoi(argv[3]), secs);
	else if (!strcmp(phase, "mcast"))
		phase_mcast(argv[2]);
	else if (!strcmp(phase, "dbflood"))
		phase_dbflood(argv[2], atoi(argv[3]), argc > 6 ? (pid_t)atoi(argv[6]) : 0);
	else
		die("unknown phase", EINVAL);
	printf("%s: %s\n", phase, fails ? "FAILED" : "done");
	return fails ? 1 : 0;
}
