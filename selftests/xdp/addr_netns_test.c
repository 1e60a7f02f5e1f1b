// SPDX-License-Identifier: GPL-2.0-only
/*
 * Addresses that change under running devices (issue #16): each veth end
 * gets a second IPv4 address B (10.99.1.x) besides A (10.99.0.x). While
 * verified RC WRITEs run on a QP over A, B is removed from b's interface
 * and added back. Without the application calling
 * roxe_device_refresh_addrs, b's GID table and its XDP program's local
 * map must drop B and take it back within a bounded wait; the QP on A sees
 * no error and no retransmission; a QP with B's GID index is refused while
 * B is away and carries a WRITE once it is back. The GID table has rxe's
 * layout: 0 the link-local default GID, 1 the first IPv4 address. A QP
 * whose own source address goes away ends in retry-exceeded, as on rxe.
 * The engines run on the virtual clock (engine.h): a retransmission
 * is one the flap caused, never a host too slow for the timer, and the
 * retries that end the QP whose source went away are the test's steps.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <bpf/bpf.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define BUF		(1u << 20)
#define CHUNK		65536u
/* A wait for an address event to reach the device, or for the traffic to
 * move on: met only by a device that never follows (a failure anyway),
 * never a judgement of how fast it does. */
#define WAIT_MS		10000
/* The virtual clock's start: far past 0, which the timers read as "never". */
#define VC_START_NS	(1000ull * 1000000000ull)

FIXTURE(addrs) {
	struct topo	t;
	struct host	h[2];
	bool		up;
};

static int ip_cmd(const struct topo *t, char host, const char *verb, const char *addr)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "ip -n %s-%c addr %s %s/24 dev %s-%c", t->name, host, verb,
		 addr, t->name, host);
	return system(cmd);
}

FIXTURE_SETUP(addrs)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 1024,
		.max_wr = 64, .buf_len = BUF,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		.rd_atomic = 1,
		/* 1.07 s, as before the virtual clock: a timer that never
		 * fires unless the test moves time */
		.timeout = 18,
	};
	int err;

	/* remove_and_readd_during_traffic counts the QP's retransmissions:
	 * on the real clock a timer also expired when the VM's vCPUs were
	 * descheduled long enough (CI: 7 expiries, nothing lost) */
	roxe_clock_virtual(VC_START_NS);	/* before any engine starts */
	ASSERT_EQ(0, topo_up(&self->t, "ad", 1, 1500));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		topo_down(&self->t);
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
}

FIXTURE_TEARDOWN(addrs)
{
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

/* Every engine of both hosts parked, no wakeup pending, no turn between
 * the looks: all that can happen at this instant of the virtual clock has
 * (selftests/engine/vclock.h's settle, for two hosts). */
static bool hosts_quiet(struct host h[2])
{
	unsigned long ep[2][ROXE_MAX_ENGINES];
	bool quiet = true;

	for (int i = 0; i < 2; i++)
		for (unsigned k = 0; k < h[i].dev->nengines; k++) {
			ep[i][k] = atomic_load(&h[i].dev->engines[k].epoch);
			quiet &= roxe_engine_parked(&h[i].dev->engines[k]);
		}
	for (int i = 0; i < 2 && quiet; i++)
		for (unsigned k = 0; k < h[i].dev->nengines; k++)
			quiet &= !roxe_engine_wake_pending(&h[i].dev->engines[k]);
	for (int i = 0; i < 2 && quiet; i++)
		for (unsigned k = 0; k < h[i].dev->nengines; k++)
			quiet &= roxe_engine_parked(&h[i].dev->engines[k]) &&
				 atomic_load(&h[i].dev->engines[k].epoch) == ep[i][k];
	return quiet;
}

/* Host h settled, the clock moves to its earliest deadline; false if no
 * timer of its is armed. The other host's timers (a responder's repeated
 * ACK) fire when it next turns, if they are due by then. */
static bool step_to_deadline(struct host *h)
{
	uint64_t next = 0;

	for (unsigned k = 0; k < h->dev->nengines; k++) {
		uint64_t d = roxe_engine_next_deadline(&h->dev->engines[k]);

		if (d && (!next || d < next))
			next = d;
	}
	if (next <= roxe_now_ns())
		return false;
	roxe_clock_advance(next - roxe_now_ns());
	return true;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The GID index of gid in dev's table, or -1. */
static int gid_index_of(struct roxe_device *dev, const uint8_t gid[16])
{
	struct ibv_port_attr pa;
	union ibv_gid g;

	if (roxe_query_port(dev, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++)
		if (!roxe_query_gid(dev, i, &g) && !memcmp(g.raw, gid, 16))
			return i;
	return -1;
}

static bool in_xdp_map(int fd, const uint8_t gid[16])
{
	struct roxe_local_addr k;
	uint32_t v;

	memcpy(k.gid, gid, 16);
	return bpf_map_lookup_elem(fd, &k, &v) == 0;
}

/* Waits for gid to be (present) or not be in both b's GID table and its
 * XDP map; the milliseconds it took (for the log), or -1 (WAIT_MS). */
static int wait_addr(struct roxe_device *dev, int map_fd, const uint8_t gid[16], bool present)
{
	uint64_t t0 = now_ms();

	if (!wait_until((gid_index_of(dev, gid) >= 0) == present &&
			in_xdp_map(map_fd, gid) == present, WAIT_MS))
		return -1;
	return (int)(now_ms() - t0);
}

/* WRITEs the traffic on A makes before each step of the flap, and after
 * it: the flap happens amid traffic however fast either side runs. */
#define FLAP_WRITES	8

struct flap {
	const struct topo	*t;
	struct roxe_device	*dev;
	int			map_fd;
	uint8_t			gid[16];
	int			gone_ms, back_ms, del_rc, add_rc;
	_Atomic unsigned	writes;		/* verified WRITEs on A so far */
	_Atomic bool		stopped;	/* the traffic on A ended */
	_Atomic bool		done;
	bool			moved[3];	/* the traffic went on: before, during, after */
};

/* Until the traffic on A has made n more WRITEs (false: it stopped). */
static bool writes_on(struct flap *f, unsigned n)
{
	unsigned w0 = atomic_load(&f->writes);

	wait_until(atomic_load(&f->writes) >= w0 + n || atomic_load(&f->stopped), WAIT_MS);
	return atomic_load(&f->writes) >= w0 + n;
}

/* B leaves b's interface and comes back while the main thread writes on A. */
static void *flap_main(void *arg)
{
	struct flap *f = arg;
	uint64_t t0;

	f->moved[0] = writes_on(f, FLAP_WRITES);
	t0 = now_ms();
	f->del_rc = ip_cmd(f->t, 'b', "del", "10.99.1.2");
	f->gone_ms = wait_addr(f->dev, f->map_fd, f->gid, false);
	if (f->gone_ms >= 0)
		f->gone_ms = (int)(now_ms() - t0);	/* from before ip(8) ran */
	f->moved[1] = writes_on(f, FLAP_WRITES);	/* while B is away */
	t0 = now_ms();
	f->add_rc = ip_cmd(f->t, 'b', "add", "10.99.1.2");
	f->back_ms = wait_addr(f->dev, f->map_fd, f->gid, true);
	if (f->back_ms >= 0)
		f->back_ms = (int)(now_ms() - t0);
	f->moved[2] = writes_on(f, FLAP_WRITES);
	atomic_store(&f->done, true);
	return NULL;
}

/* Bring QP qp of h up towards peer QP rqpn at dgid, from GID index sgix. */
static int qp_up(struct roxe_qp *qp, int sgix, const union ibv_gid *dgid, uint32_t rqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	int err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = rqpn;
	a.rq_psn = 500;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = (uint8_t)sgix;
	a.ah_attr.grh.dgid = *dgid;
	err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 500;
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

TEST_F(addrs, rxe_layout_and_follow_without_refresh)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint8_t ga[16], gb[16], mac_gid[16] = { 0xfe, 0x80 };
	union ibv_gid g;

	/* rxe's layout: 0 the default GID from the MAC (EUI-64), 1 the IPv4 address */
	memcpy(mac_gid + 8, self->t.mac_b, 3);
	mac_gid[8] ^= 2;
	mac_gid[11] = 0xff;
	mac_gid[12] = 0xfe;
	memcpy(mac_gid + 13, self->t.mac_b + 3, 3);
	ASSERT_EQ(0, roxe_query_gid(b->dev, 0, &g));
	EXPECT_EQ(0, memcmp(g.raw, mac_gid, 16));
	roxe_gid_from_v4(ga, inet_addr("10.99.0.2"));
	ASSERT_EQ(0, roxe_query_gid(b->dev, 1, &g));
	EXPECT_EQ(0, memcmp(g.raw, ga, 16));
	EXPECT_EQ(1, roxe_device_gid_index(b->dev));
	EXPECT_EQ(1, roxe_device_gid_index(a->dev));

	/* B arrives on both ends: the next free entry, with no refresh called */
	roxe_gid_from_v4(gb, inet_addr("10.99.1.2"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'a', "add", "10.99.1.1"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'b', "add", "10.99.1.2"));
	wait_until(gid_index_of(b->dev, gb) >= 0, WAIT_MS);
	EXPECT_EQ(3, gid_index_of(b->dev, gb)) TH_LOG("10.99.1.2 after 10.99.0.2, fd99::2");
}

TEST_F(addrs, remove_and_readd_during_traffic)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	struct flap f = { .t = &self->t, .dev = b->dev };
	struct roxe_qp *qa = NULL, *qb = NULL;
	struct roxe_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 8, .max_recv_wr = 8,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct roxe_qp_stats qs;
	struct roxe_xdp *xb = NULL;
	uint8_t gb_a[16];
	union ibv_gid dgid;
	struct ibv_wc wc;
	pthread_t th;
	unsigned writes = 0;
	int ixa, ixb, rc;
	char ifb[16];

	ASSERT_EQ(0, ip_cmd(&self->t, 'a', "add", "10.99.1.1"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'b', "add", "10.99.1.2"));
	topo_enter(self->t.ns_b);
	topo_ifname(&self->t, 'b', ifb, sizeof(ifb));
	ASSERT_EQ(0, roxe_xdp_open(ifb, &xb, NULL));
	f.map_fd = xb->local_addrs_fd;
	roxe_gid_from_v4(f.gid, inet_addr("10.99.1.2"));
	roxe_gid_from_v4(gb_a, inet_addr("10.99.1.1"));
	ASSERT_LE(0, wait_addr(b->dev, f.map_fd, f.gid, true));
	wait_until(gid_index_of(a->dev, gb_a) >= 0, WAIT_MS);
	ixb = gid_index_of(b->dev, f.gid);
	ixa = gid_index_of(a->dev, gb_a);
	ASSERT_LE(0, ixa);

	/* verified WRITEs on A until B has gone and come back */
	ASSERT_EQ(0, pthread_create(&th, NULL, flap_main, &f));
	while (!atomic_load(&f.done) && writes < 100000) {
		uint32_t off = (writes % 8) * CHUNK;
		uint8_t *src = a->buf + off, *dst = b->buf + off;

		for (uint32_t k = 0; k < CHUNK; k += 4)
			*(uint32_t *)(src + k) = writes * 2654435761u + k;
		if (host_post(a->qp[0], IBV_WR_RDMA_WRITE, src, CHUNK, a->mr->lkey,
			      (uintptr_t)dst, b->mr->rkey))
			break;
		if (wait_wc(a->cq, &wc, 5000) != 1 || wc.status != IBV_WC_SUCCESS)
			break;
		if (memcmp(src, dst, CHUNK))
			break;
		writes++;
		atomic_store(&f.writes, writes);
	}
	atomic_store(&f.stopped, true);
	pthread_join(th, NULL);
	EXPECT_TRUE(atomic_load(&f.done)) TH_LOG("traffic on A stopped after %u WRITEs", writes);
	EXPECT_TRUE(f.moved[0] && f.moved[1] && f.moved[2])
		TH_LOG("WRITEs on A went on before, during, after the flap: %d %d %d", f.moved[0],
		       f.moved[1], f.moved[2]);
	EXPECT_EQ(0, f.del_rc);
	EXPECT_EQ(0, f.add_rc);
	EXPECT_LE(0, f.gone_ms) TH_LOG("B never left b's GID table or XDP map");
	EXPECT_LE(0, f.back_ms) TH_LOG("B never came back to b's GID table and XDP map");
	TH_LOG("%u WRITEs of %u B on A; B gone after %d ms, back after %d ms", writes, CHUNK,
	       f.gone_ms, f.back_ms);
	/* Undisturbed: the requester on A retransmitted nothing (a frame the
	 * flap lost brings a NAK, or the timer when it was the last) and b's
	 * responder saw no duplicate or out-of-sequence packet. */
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(xb, roxe_qp_num(b->qp[0]), &qs));
	roxe_xdp_close(xb);
	EXPECT_EQ(0u, qs.duplicates + qs.out_of_sequence);
	topo_enter(self->t.ns_a);
	topo_ifname(&self->t, 'a', ifb, sizeof(ifb));
	ASSERT_EQ(0, roxe_xdp_open(ifb, &xb, NULL));
	ASSERT_EQ(0, roxe_xdp_read_qp_stats(xb, roxe_qp_num(a->qp[0]), &qs));
	roxe_xdp_close(xb);
	EXPECT_EQ(0u, qs.retransmits + qs.timeouts);
	TH_LOG("QP on A: %llu retransmits, %llu timeouts", (unsigned long long)qs.retransmits,
	       (unsigned long long)qs.timeouts);
	EXPECT_EQ(ixb, gid_index_of(b->dev, f.gid)) TH_LOG("B came back at another index");

	/* a new QP on B, from B's GID index at both ends, carries a WRITE */
	ia.send_cq = ia.recv_cq = a->cq;
	ASSERT_EQ(0, roxe_create_qp(a->pd, &ia, &qa));
	ia.send_cq = ia.recv_cq = b->cq;
	ASSERT_EQ(0, roxe_create_qp(b->pd, &ia, &qb));
	ASSERT_EQ(0, roxe_query_gid(b->dev, ixb, &dgid));
	topo_enter(self->t.ns_a);
	rc = qp_up(qa, ixa, &dgid, roxe_qp_num(qb));
	EXPECT_EQ(0, rc) TH_LOG("a's QP on B: %s", strerror(-rc));
	ASSERT_EQ(0, roxe_query_gid(a->dev, ixa, &dgid));
	topo_enter(self->t.ns_b);
	rc = qp_up(qb, ixb, &dgid, roxe_qp_num(qa));
	EXPECT_EQ(0, rc) TH_LOG("b's QP on B: %s", strerror(-rc));
	memset(a->buf, 0x5c, 4096);
	ASSERT_EQ(0, host_post(qa, IBV_WR_RDMA_WRITE, a->buf, 4096, a->mr->lkey,
			       (uintptr_t)b->buf + BUF / 2, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + BUF / 2, 4096));
	roxe_destroy_qp(qa);
	roxe_destroy_qp(qb);
}

TEST_F(addrs, gone_address_index_refused)
{
	struct host *b = &self->h[1];
	struct roxe_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = b->cq, .recv_cq = b->cq,
					.cap = { .max_send_wr = 8, .max_recv_wr = 8,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct roxe_qp *q = NULL;
	struct ibv_ah *ah = NULL;
	uint8_t gb[16], zero[16] = { 0 };
	union ibv_gid g;
	int ix;

	roxe_gid_from_v4(gb, inet_addr("10.99.1.2"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'b', "add", "10.99.1.2"));
	wait_until(gid_index_of(b->dev, gb) >= 0, WAIT_MS);
	ix = gid_index_of(b->dev, gb);
	ASSERT_LE(0, ix);
	ASSERT_EQ(0, ip_cmd(&self->t, 'b', "del", "10.99.1.2"));
	ASSERT_TRUE(wait_until(gid_index_of(b->dev, gb) < 0, WAIT_MS));
	/* the entry is empty (zeros, as rxe's), the others keep their index */
	ASSERT_EQ(0, roxe_query_gid(b->dev, ix, &g));
	EXPECT_EQ(0, memcmp(g.raw, zero, 16));
	EXPECT_EQ(1, roxe_device_gid_index(b->dev));
	/* an empty entry cannot be a source: EINVAL, as rxe */
	ASSERT_EQ(0, roxe_create_qp(b->pd, &ia, &q));
	roxe_gid_from_v4(aa.grh.dgid.raw, inet_addr("10.99.0.1"));
	aa.grh.sgid_index = (uint8_t)ix;
	EXPECT_EQ(0, qp_up(q, 1, &aa.grh.dgid, 2));	/* A's index still works */
	EXPECT_EQ(-EINVAL, roxe_create_ah(b->pd, &aa, &ah));
	roxe_destroy_qp(q);
	q = NULL;
	ASSERT_EQ(0, roxe_create_qp(b->pd, &ia, &q));
	EXPECT_EQ(-EINVAL, qp_up(q, ix, &aa.grh.dgid, 2));
	roxe_destroy_qp(q);
}

/* A QP whose source address goes away is left alone, as rxe leaves it: its
 * frames keep that source, the replies to it are no longer taken (not a
 * local address), so its WRITE ends in a retry-exceeded error; the QP on A
 * beside it is untouched. */
TEST_F(addrs, qp_whose_source_went_away)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	struct roxe_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 8, .max_recv_wr = 8,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct roxe_qp *qa = NULL, *qb = NULL;
	uint8_t ga[16], gb[16];
	union ibv_gid dg;
	struct ibv_wc wc;
	unsigned steps;
	int ixa, ixb, got;

	roxe_gid_from_v4(ga, inet_addr("10.99.1.1"));
	roxe_gid_from_v4(gb, inet_addr("10.99.1.2"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'a', "add", "10.99.1.1"));
	ASSERT_EQ(0, ip_cmd(&self->t, 'b', "add", "10.99.1.2"));
	wait_until(gid_index_of(a->dev, ga) >= 0 && gid_index_of(b->dev, gb) >= 0, WAIT_MS);
	ixa = gid_index_of(a->dev, ga);
	ixb = gid_index_of(b->dev, gb);
	ASSERT_LE(0, ixa);
	ASSERT_LE(0, ixb);
	ia.send_cq = ia.recv_cq = a->cq;
	ASSERT_EQ(0, roxe_create_qp(a->pd, &ia, &qa));
	ia.send_cq = ia.recv_cq = b->cq;
	ASSERT_EQ(0, roxe_create_qp(b->pd, &ia, &qb));
	memcpy(dg.raw, gb, 16);
	topo_enter(self->t.ns_a);
	ASSERT_EQ(0, qp_up(qa, ixa, &dg, roxe_qp_num(qb)));
	memcpy(dg.raw, ga, 16);
	topo_enter(self->t.ns_b);
	ASSERT_EQ(0, qp_up(qb, ixb, &dg, roxe_qp_num(qa)));
	ASSERT_EQ(0, host_post(qa, IBV_WR_RDMA_WRITE, a->buf, 64, a->mr->lkey,
			       (uintptr_t)b->buf, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);

	ASSERT_EQ(0, ip_cmd(&self->t, 'a', "del", "10.99.1.1"));
	wait_until(gid_index_of(a->dev, ga) < 0, WAIT_MS);
	ASSERT_GT(0, gid_index_of(a->dev, ga));
	ASSERT_EQ(0, host_post(qa, IBV_WR_RDMA_WRITE, a->buf, 64, a->mr->lkey,
			       (uintptr_t)b->buf, b->mr->rkey));
	/* b's replies are no longer a's to take: a's timer goes back,
	 * retry_cnt (7) times, then gives up. The clock moves from one of a's
	 * deadlines to the next whenever the hosts are settled without it. */
	for (steps = 0;; steps++) {
		ASSERT_TRUE(wait_until(hosts_quiet(self->h), WAIT_MS));
		got = roxe_poll_cq(a->cq, 1, &wc);
		if (got || steps == 64)
			break;
		ASSERT_TRUE(step_to_deadline(a)) TH_LOG("step %u: no timer armed", steps);
	}
	ASSERT_EQ(1, got) TH_LOG("no completion after %u steps of the clock", steps);
	EXPECT_EQ(8u, steps) TH_LOG("retry_cnt 7: the eighth expiry gives up");
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status) TH_LOG("status %d", wc.status);
	EXPECT_EQ(roxe_qp_num(qa), wc.qp_num);
	/* the QP on A goes on */
	ASSERT_EQ(0, host_post(a->qp[0], IBV_WR_RDMA_WRITE, a->buf, 64, a->mr->lkey,
			       (uintptr_t)b->buf, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(roxe_qp_num(a->qp[0]), wc.qp_num);
	roxe_destroy_qp(qa);
	roxe_destroy_qp(qb);
}

TEST_HARNESS_MAIN
