// SPDX-License-Identifier: GPL-2.0-only
/*
 * Served objects, as roxed runs them for roxe.ko's applications: a QP, CQ
 * and MR whose rings and memory belong to an "application" (this test,
 * writing WQEs the way the rdma-core rxe provider does), created at given
 * numbers and keys, with the MR's bytes at a host address unlike its iova,
 * doorbells through a kabi doorbell ring, and completion events through the
 * served-CQ hook. The peer is an ordinary roxe QP over a loop wire.
 * Hostile WQEs (more SGEs or inline bytes than a slot holds) must end in
 * error completions, never in a crash.
 */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "served_app.h"
#include "roxe/limits.h"

#define BUF		(1u << 20)
#define APP_IOVA	0x7e0000000000ull	/* the application's address of its buffer */
#define APP_KEY		(77u << 8 | 5)
#define APP_QPN		4242u
#define APP_CQN		9u
#define APP_TENANT	4242u	/* the uid roxe.ko names for the application */
#define SQ_SGE		4
#define RQ_SGE		2

struct app {
	struct app_rings	r;
	struct roxe_cq		*cq;
	struct roxe_qp		*qp;
	struct roxe_mr		*mr;
	uint8_t			*buf;		/* at APP_IOVA for the wire */
	uint32_t		ssn;
	atomic_int		events, solicited;
	atomic_bool		index_games;	/* hostile_producer_index */
	/* hostile_sq_wrap_local_wqes: the SQ kept one behind its consumer */
	atomic_bool		sq_wrap, wrap_stuck;
	struct roxe_engine	*eng;		/* whose turns count the wrap */
	unsigned long		wrap_epoch;
	unsigned		wrap_in_turn;
	/* the QP's state when an error CQE went in (-1: none yet) */
	atomic_int		state_at_error;
	/* doorbell_signals_only_a_sleeping_engine: ring from the next CQE's
	 * turn (1), then what that doorbell did (2: signalled, 3: quiet) */
	atomic_int		ring_in_turn;
	/* reply_goes_behind_the_requests_ack: the next CQE's turn posts the
	 * send WQE already written */
	atomic_bool		reply_on_cqe;
};

/* More completions of the wrapped SQ than this in one engine turn: the
 * engine is held by one QP's ring (a turn spends at most ROXE_TX_BUDGET
 * WQEs of a QP). */
#define WRAP_TURN_MAX	256

static void on_event(void *ctx, struct roxe_cq *cq, bool solicited)
{
	struct app *a = ctx;

	(void)cq;
	if (atomic_load(&a->index_games)) {
		/* engine thread, a CQE just went in: both work queues look full */
		for (struct rxe_queue_buf *b = a->r.sq; b; b = b == a->r.sq ? a->r.rq : NULL)
			__atomic_store_n(&b->producer_index,
					 __atomic_load_n(&b->consumer_index, __ATOMIC_RELAXED) - 1,
					 __ATOMIC_RELEASE);
		/* and the CQ has room again */
		__atomic_store_n(&a->r.cqb->consumer_index,
				 __atomic_load_n(&a->r.cqb->producer_index, __ATOMIC_RELAXED),
				 __ATOMIC_RELEASE);
	}
	if (atomic_load(&a->sq_wrap)) {
		unsigned long ep = atomic_load(&a->eng->epoch);

		if (ep != a->wrap_epoch) {
			a->wrap_epoch = ep;
			a->wrap_in_turn = 0;
		}
		if (++a->wrap_in_turn > WRAP_TURN_MAX) {
			/* stuck in one turn: stop, so the test ends and says so */
			atomic_store(&a->wrap_stuck, true);
			atomic_store(&a->sq_wrap, false);
		} else {
			__atomic_store_n(&a->r.sq->producer_index,
					 __atomic_load_n(&a->r.sq->consumer_index, __ATOMIC_RELAXED) - 1,
					 __ATOMIC_RELEASE);
			app_doorbell(&a->r, NULL, APP_QPN);	/* and rings */
		}
		__atomic_store_n(&a->r.cqb->consumer_index,
				 __atomic_load_n(&a->r.cqb->producer_index, __ATOMIC_RELAXED),
				 __ATOMIC_RELEASE);
	}
	{
		/* engine thread: the CQE just produced */
		uint32_t prod = __atomic_load_n(&a->r.cqb->producer_index, __ATOMIC_ACQUIRE);
		const struct ib_uverbs_wc *wc = (const void *)(a->r.cqb->data +
			((size_t)((prod - 1) & a->r.cqg.mask) << a->r.cqg.log2_elem));

		if (wc->status != IBV_WC_SUCCESS && a->qp && atomic_load(&a->state_at_error) < 0)
			atomic_store(&a->state_at_error, roxe_qp_state(a->qp));
	}
	if (atomic_exchange(&a->reply_on_cqe, false)) {
		roxe_queue_produce(&a->r.sq_prod);
		app_doorbell(&a->r, NULL, APP_QPN);
	}
	if (atomic_load(&a->ring_in_turn) == 1)
		atomic_store(&a->ring_in_turn,
			     app_doorbell(&a->r, a->eng->dev, APP_QPN) ? 2 : 3);
	atomic_fetch_add(&a->events, 1);
	if (solicited)
		atomic_fetch_add(&a->solicited, 1);
}

/* A send WQE as the rxe provider writes it (one SGE, or inline bytes). */
static struct rxe_send_wqe *app_wqe(struct app *a, uint32_t op, uint64_t id, uint64_t iova,
				    uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct rxe_send_wqe *w = roxe_queue_producer_slot(&a->r.sq_prod);

	memset(w, 0, 1u << a->r.sqg.log2_elem);
	w->wr.wr_id = id;
	w->wr.opcode = op;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->wr.wr.rdma.remote_addr = raddr;
	w->wr.wr.rdma.rkey = rkey;
	w->iova = raddr;
	w->dma.length = w->dma.resid = len;
	w->dma.num_sge = 1;
	w->dma.sge[0].addr = iova;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = APP_KEY;
	w->ssn = a->ssn++;
	return w;
}

static void app_post(struct app *a, struct roxe_device *dev)
{
	roxe_queue_produce(&a->r.sq_prod);
	app_doorbell(&a->r, dev, APP_QPN);
}

static void app_recv(struct app *a, uint64_t id, uint64_t iova, uint32_t len, uint32_t num_sge)
{
	struct rxe_recv_wqe *w = roxe_queue_producer_slot(&a->r.rq_prod);

	memset(w, 0, 1u << a->r.rqg.log2_elem);
	w->wr_id = id;
	w->dma.length = w->dma.resid = len;
	w->dma.num_sge = num_sge;
	w->dma.sge[0].addr = iova;
	w->dma.sge[0].length = len;
	w->dma.sge[0].lkey = APP_KEY;
	roxe_queue_produce(&a->r.rq_prod);
}

/* timeout: the retransmission timer's exponent, 0 for none */
static int served_connect_timeout(struct roxe_qp *qp, struct side *peer, uint32_t peer_qpn,
				  const uint8_t sgid[16], const uint8_t dmac[6], uint8_t timeout)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC };
	int err = roxe_served_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					IBV_QP_ACCESS_FLAGS, sgid, dmac);

	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = peer_qpn;
	at.rq_psn = 100;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.sgid_index = 3;	/* the module's index: not ours to check */
	at.ah_attr.grh.hop_limit = 64;
	roxe_query_gid(peer->dev, 0, &at.ah_attr.grh.dgid);
	err = roxe_served_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER, sgid, dmac);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 200;
	at.timeout = timeout;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 4;
	return roxe_served_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC, sgid, dmac);
}

static int served_connect(struct roxe_qp *qp, struct side *peer, uint32_t peer_qpn,
			  const uint8_t sgid[16], const uint8_t dmac[6])
{
	return served_connect_timeout(qp, peer, peer_qpn, sgid, dmac, 14);
}

FIXTURE(served) {
	struct pair p;
	struct app a;
};

FIXTURE_SETUP(served)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };

	/* The real clock: the wire loses nothing and no case needs a timer
	 * (an expiry of 67 ms only resends; retry_cnt runs out after eight
	 * in a row), while a clock standing still would hold a busy engine's
	 * plain ACK for ever (hostile_sq_wrap_local_wqes' engine never idles:
	 * the ACK leaves once 10 us passed). */
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	atomic_init(&a->state_at_error, -1);
	ASSERT_EQ(0, app_rings_alloc(&a->r, 63, SQ_SGE, RQ_SGE, 255));
	a->buf = aligned_alloc(4096, BUF);
	ASSERT_TRUE(a->buf);
	memset(a->buf, 0, BUF);

	a->r.tenant = APP_TENANT;
	ASSERT_EQ(0, roxe_served_cq_create(s1->dev, APP_CQN, a->r.cqb, a->r.cqg, on_event, a,
					   a->r.tenant, &a->cq));
	ASSERT_EQ(0, roxe_served_mr_add(s1->pd, APP_KEY, APP_IOVA, BUF,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
					a->buf, &a->mr));
	ASSERT_EQ(0, app_served_qp(&a->r, s1->pd, APP_QPN, IBV_QPT_RC, a->cq,
				   (struct ibv_qp_cap){ 63, 63, SQ_SGE, RQ_SGE, 64 }, false, &a->qp));
	ASSERT_EQ(APP_QPN, roxe_qp_num(a->qp));
	roxe_engine_set_kdb(&s1->dev->engines[0], &a->r.ring, a->r.db_queued);

	ASSERT_EQ(0, qp_create(s0, IBV_QPT_RC, &s0->qp));
	ASSERT_EQ(0, qp_connect(s0->qp, s1->dev, APP_QPN, IBV_QPT_RC, IBV_MTU_1024, 100, 200,
				14, 7, 7));
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, served_connect(a->qp, s0, roxe_qp_num(s0->qp), sgid, dmac));
}

FIXTURE_TEARDOWN(served)
{
	struct app *a = &self->a;

	atomic_store(&self->p.s[1].dev->engines[0].kdb, NULL);
	if (a->qp)
		roxe_destroy_qp(a->qp);
	if (a->mr)
		roxe_dereg_mr(a->mr);
	if (a->cq)
		roxe_destroy_cq(a->cq);
	pair_close(&self->p);
	app_rings_free(&a->r);
	free(a->buf);
	EXPECT_EQ(0, leak_check());
}

/* Every operation in both directions, data checked at the iova/host
 * translation: the wire names APP_IOVA, the bytes live at a->buf. */
TEST_F(served, rc_all_operations)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc;
	uint64_t *counter = (uint64_t *)(a->buf + 64 * 1024);

	(void)s1;
	/* peer SEND (3 packets) into the application's receive queue */
	fill_pattern(s0->buf, 3000, 1);
	app_recv(a, 11, APP_IOVA + 8192, 4000, 1);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_SEND, 1, s0->buf, 3000, s0->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED | IBV_SEND_SOLICITED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(11u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(IBV_WC_RECV, uwc.opcode);
	EXPECT_EQ(3000u, uwc.byte_len);
	EXPECT_EQ(APP_QPN, uwc.qp_num);
	EXPECT_EQ(0, memcmp(a->buf + 8192, s0->buf, 3000));
	EXPECT_GE(atomic_load(&a->solicited), 1);

	/* the application SENDs 5000 bytes from its MR */
	fill_pattern(a->buf + 100000, 5000, 2);
	ASSERT_EQ(0, post_recv1(s0->qp, 2, s0->buf + 200000, 8000, s0->mr->lkey));
	app_wqe(a, IBV_WR_SEND, 12, APP_IOVA + 100000, 5000, 0, 0);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(12u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(5000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(s0->buf + 200000, a->buf + 100000, 5000));

	/* peer WRITE into, READ out of and FETCH_AND_ADD on the served MR */
	fill_pattern(s0->buf + 300000, 8000, 3);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 3, s0->buf + 300000, 8000,
				s0->mr->lkey, APP_IOVA + 300000, APP_KEY, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf + 300000, s0->buf + 300000, 8000));
	fill_pattern(a->buf + 400000, 6000, 4);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_READ, 4, s0->buf + 400000, 6000,
				s0->mr->lkey, APP_IOVA + 400000, APP_KEY, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(s0->buf + 400000, a->buf + 400000, 6000));
	*counter = 40;
	{
		struct ibv_sge sge = { (uintptr_t)(s0->buf + 500000), 8, s0->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.atomic.remote_addr = APP_IOVA + 64 * 1024;
		wr.wr.atomic.rkey = APP_KEY;
		wr.wr.atomic.compare_add = 2;
		ASSERT_EQ(0, roxe_post_send(s0->qp, &wr, &bad));
	}
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(40u, *(uint64_t *)(s0->buf + 500000));
	EXPECT_EQ(42u, *counter);

	/* the application WRITEs to and READs from the peer */
	fill_pattern(a->buf + 600000, 7000, 5);
	app_wqe(a, IBV_WR_RDMA_WRITE, 13, APP_IOVA + 600000, 7000,
		(uintptr_t)(s0->buf + 600000), s0->mr->rkey);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(0, memcmp(s0->buf + 600000, a->buf + 600000, 7000));
	fill_pattern(s0->buf + 700000, 9000, 6);
	app_wqe(a, IBV_WR_RDMA_READ, 14, APP_IOVA + 700000, 9000,
		(uintptr_t)(s0->buf + 700000), s0->mr->rkey);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(14u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(0, memcmp(a->buf + 700000, s0->buf + 700000, 9000));
	EXPECT_GE(atomic_load(&a->events), 4);
}

/* ATOMIC WRITE and FLUSH WQEs exactly as rdma-core's rxe provider writes
 * them (wr_atomic_write, wr_flush: the WQE zeroed, the 8 bytes in
 * dma.atomic_wr, FLUSH's arguments in wr.flush), towards the peer; then
 * hostile ones: an ATOMIC WRITE claiming 4096 bytes. */
static struct rxe_send_wqe *app_iba15_wqe(struct app *a, uint32_t op, uint64_t id)
{
	struct rxe_send_wqe *w = roxe_queue_producer_slot(&a->r.sq_prod);

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = id;
	w->wr.opcode = op;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->ssn = a->ssn++;
	return w;
}

TEST_F(served, iba15_provider_wqes)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	const uint64_t v = 0x0102030405060708ull;
	struct roxe_uwr_flush fl = { 0 };
	struct ib_uverbs_wc uwc;
	struct roxe_mr *fmr;
	struct rxe_send_wqe *w;
	struct ibv_qp_attr at = { .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    ROXE_ACCESS_FLUSH_GLOBAL };

	ASSERT_EQ(0, roxe_modify_qp(s0->qp, &at, IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, roxe_reg_mr(s0->pd, s0->buf, BUF, ROXE_ACCESS_FLUSH_GLOBAL, &fmr));

	w = app_iba15_wqe(a, ROXE_UWR_ATOMIC_WRITE, 51);
	w->wr.wr.rdma.remote_addr = (uintptr_t)(s0->buf + 800);
	w->wr.wr.rdma.rkey = s0->mr->rkey;
	memcpy(w->dma.inline_data, &v, 8);	/* dma.atomic_wr */
	w->dma.length = w->dma.resid = 8;
	w->iova = (uintptr_t)(s0->buf + 800);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(51u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(ROXE_UWC_ATOMIC_WRITE, uwc.opcode);
	EXPECT_EQ(0, memcmp(s0->buf + 800, &v, 8));

	w = app_iba15_wqe(a, ROXE_UWR_FLUSH, 52);
	fl.remote_addr = (uintptr_t)s0->buf;
	fl.rkey = fmr->rkey;
	fl.type = ROXE_FLUSH_PLT_GLOBAL;
	fl.level = ROXE_FLUSH_SEL_RANGE;
	roxe_uwr_flush_set(w, &fl);
	w->dma.length = w->dma.resid = 4096;
	w->iova = (uintptr_t)s0->buf;
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(52u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(ROXE_UWC_FLUSH, uwc.opcode);

	/* hostile: 4096 bytes of ATOMIC WRITE */
	w = app_iba15_wqe(a, ROXE_UWR_ATOMIC_WRITE, 53);
	w->wr.wr.rdma.remote_addr = (uintptr_t)(s0->buf + 800);
	w->wr.wr.rdma.rkey = s0->mr->rkey;
	w->dma.length = w->dma.resid = 4096;
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(53u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, uwc.status);
	EXPECT_EQ(0, memcmp(s0->buf + 800, &v, 8));
	roxe_dereg_mr(fmr);
}

/* sq_sig_all: the stock rxe provider writes the application's send_flags
 * as they are, so on a QP created with sq_sig_all (ucmatose's, rping's
 * peers') an unsignaled WQE must still complete, as rxe's completer does
 * it; on the fixture's QP (no sq_sig_all) it must not. */
TEST_F(served, sq_sig_all)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct ibv_wc wc;
	struct roxe_served_qp_init in = {
		.qpn = APP_QPN, .type = IBV_QPT_RC, .send_cq = a->cq, .recv_cq = a->cq,
		.sq_buf = a->r.sq, .rq_buf = a->r.rq, .sq_geom = a->r.sqg, .rq_geom = a->r.rqg,
		.cap = { 63, 63, SQ_SGE, RQ_SGE, 64 }, .sq_sig_all = true,
	};

	/* without sq_sig_all: an unsignaled WRITE lands, no completion. Its
	 * slot is free (the consumer index moved) once the ACK retired it,
	 * and the turn that did is over once the engine has turned twice
	 * more or sleeps: a completion would be in the ring by then. */
	fill_pattern(a->buf + 1000, 3000, 7);
	app_wqe(a, IBV_WR_RDMA_WRITE, 21, APP_IOVA + 1000, 3000,
		(uintptr_t)(s0->buf + 1000), s0->mr->rkey)->wr.send_flags = 0;
	app_post(a, s1->dev);
	ASSERT_TRUE(wait_until(__atomic_load_n(&a->r.sq->consumer_index, __ATOMIC_ACQUIRE) ==
			       roxe_queue_producer_index(&a->r.sq_prod), 5000));
	roxe_dev_quiesce(s1->dev);
	EXPECT_TRUE(roxe_queue_empty(&a->r.cq_cons));
	EXPECT_EQ(0, memcmp(s0->buf + 1000, a->buf + 1000, 3000));

	/* the same QP number again, now with sq_sig_all, on the same rings */
	roxe_destroy_qp(a->qp);
	a->qp = NULL;
	ASSERT_EQ(0, roxe_served_qp_create(s1->pd, &in, &a->qp));
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, roxe_modify_qp(s0->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				    IBV_QP_STATE));
	ASSERT_EQ(0, qp_connect(s0->qp, s1->dev, APP_QPN, IBV_QPT_RC, IBV_MTU_1024, 100, 200,
				14, 7, 7));
	ASSERT_EQ(0, served_connect(a->qp, s0, roxe_qp_num(s0->qp), sgid, dmac));
	for (int i = 0; i < 3; i++) {
		fill_pattern(a->buf + 10000 * (i + 1), 2000, 8 + i);
		app_wqe(a, i == 1 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, 30 + i,
			APP_IOVA + 10000 * (i + 1), 2000, (uintptr_t)(s0->buf + 10000 * (i + 1)),
			s0->mr->rkey)->wr.send_flags = 0;
		roxe_queue_produce(&a->r.sq_prod);
	}
	ASSERT_EQ(0, post_recv1(s0->qp, 2, s0->buf + 50000, 2000, s0->mr->lkey));
	app_doorbell(&a->r, s1->dev, APP_QPN);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
		EXPECT_EQ(30u + i, uwc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
		if (i != 1)
			EXPECT_EQ(0, memcmp(s0->buf + 10000 * (i + 1), a->buf + 10000 * (i + 1), 2000));
	}
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(s0->buf + 50000, a->buf + 20000, 2000));
}

/* A send WQE claiming more SGEs than its slot holds: a local length error
 * completion, the RC QP goes to ERR, nothing read out of bounds. */
TEST_F(served, hostile_send_wqe)
{
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct rxe_send_wqe *w;

	w = app_wqe(a, IBV_WR_SEND, 21, APP_IOVA, 100, 0, 0);
	w->dma.num_sge = 100000;
	app_post(a, self->p.s[1].dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(21u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, uwc.status);
	w = app_wqe(a, IBV_WR_SEND, 22, APP_IOVA, 100, 0, 0);
	app_post(a, self->p.s[1].dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(22u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, uwc.status);
}

/* Memory windows through the served ring: the rxe provider's BIND_MW WQE
 * (its mw view) binds a type 2 window the module allocated; the peer
 * writes through the new rkey; a bind naming a window of another PD fails
 * (IBV_WC_MW_BIND_ERR), whatever else the WQE says. */
TEST_F(served, mw_bind_through_ring)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	const uint32_t mr_key = 78u << 8 | 5, mw_key = (ROXE_MW_INDEX_BASE + 7u) << 8 | 0x30;
	const uint32_t other_key = (ROXE_MW_INDEX_BASE + 8u) << 8 | 0x40;
	struct app *a = &self->a;
	struct ibv_mw *mw, *other;
	struct ib_uverbs_wc uwc;
	struct rxe_send_wqe *w;
	struct roxe_pd *pd2;
	struct roxe_mr *mr2;
	struct ibv_wc wc;

	ASSERT_EQ(0, roxe_served_mr_add(s1->pd, mr_key, APP_IOVA, 65536,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, a->buf, &mr2));
	ASSERT_EQ(0, roxe_served_mw_add(s1->pd, mw_key, IBV_MW_TYPE_2, &mw));
	ASSERT_EQ(0, roxe_alloc_pd(s1->dev, &pd2));
	ASSERT_EQ(0, roxe_served_mw_add(pd2, other_key, IBV_MW_TYPE_2, &other));
	/* the same key twice: refused */
	EXPECT_EQ(-EEXIST, roxe_served_mw_add(s1->pd, mw_key, IBV_MW_TYPE_1, &other));

	w = app_wqe(a, IBV_WR_BIND_MW, 51, 0, 0, 0, 0);
	w->dma.num_sge = 0;
	w->wr.wr.mw.addr = APP_IOVA + 4096;
	w->wr.wr.mw.length = 4096;
	w->wr.wr.mw.mr_lkey = mr_key;
	w->wr.wr.mw.mw_rkey = mw_key;
	w->wr.wr.mw.rkey = mw_key + 1;
	w->wr.wr.mw.access = IBV_ACCESS_REMOTE_WRITE;
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(51u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(IBV_WC_BIND_MW, uwc.opcode);

	fill_pattern(s0->buf, 100, 4);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 52, s0->buf, 100, s0->mr->lkey,
				APP_IOVA + 4096, mw_key + 1, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf + 4096, s0->buf, 100));

	w = app_wqe(a, IBV_WR_BIND_MW, 53, 0, 0, 0, 0);
	w->dma.num_sge = 0;
	w->wr.wr.mw.addr = APP_IOVA;
	w->wr.wr.mw.length = 64;
	w->wr.wr.mw.mr_lkey = mr_key;
	w->wr.wr.mw.mw_rkey = other_key;
	w->wr.wr.mw.rkey = other_key + 1;
	w->wr.wr.mw.access = IBV_ACCESS_REMOTE_READ;
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(53u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, uwc.status);

	/* the module's dealloc while bound, then its MR's dereg */
	EXPECT_EQ(-EINVAL, roxe_dereg_mr(mr2));
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
	EXPECT_EQ(0, roxe_dealloc_mw(other));
	EXPECT_EQ(0, roxe_dereg_mr(mr2));
	EXPECT_EQ(0, roxe_dealloc_pd(pd2));
}

/* A fatal transport error (the peer's NAK for a bad rkey): when its error
 * completion goes in, the QP is in ERR already, so an application that
 * polls the completion and then asks finds ERR (rxe's order). The CQ hook
 * runs on the engine thread at the CQE: no race for the test to lose. */
TEST_F(served, qp_in_err_before_its_error_completion)
{
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;

	app_wqe(a, IBV_WR_RDMA_WRITE, 61, APP_IOVA, 64, (uintptr_t)self->p.s[0].buf,
		self->p.s[0].mr->rkey ^ 0x100);
	app_post(a, self->p.s[1].dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 5000));
	EXPECT_EQ(61u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, uwc.status);
	EXPECT_EQ(IBV_QPS_ERR, atomic_load(&a->state_at_error));
}

/* Inline bytes beyond what the slot holds. */
TEST_F(served, hostile_inline)
{
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct rxe_send_wqe *w;

	w = app_wqe(a, IBV_WR_SEND, 31, APP_IOVA, 60000, 0, 0);
	w->wr.send_flags |= IBV_SEND_INLINE;
	app_post(a, self->p.s[1].dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(31u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, uwc.status);
}

TEST_F(served, hostile_opcode)
{
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct rxe_send_wqe *w;

	w = app_wqe(a, IBV_WR_SEND, 41, APP_IOVA, 10, 0, 0);
	w->wr.opcode = 200;
	app_post(a, self->p.s[1].dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(41u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, uwc.status);
}

/* A receive WQE claiming 100000 SGEs: only what the slot holds is read
 * (its second SGE is zeroed: a key that names no MR), so the SEND lands in
 * an error completion instead of a read past the ring. */
TEST_F(served, hostile_recv_wqe)
{
	struct side *s0 = &self->p.s[0];
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc;

	app_recv(a, 51, APP_IOVA, 100, 100000);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_SEND, 6, s0->buf, 200, s0->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(51u, uwc.wr_id);
	EXPECT_NE(IBV_WC_SUCCESS, uwc.status);
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 3000));
	EXPECT_NE(IBV_WC_SUCCESS, wc.status);
}

/* An application rewrites its rings' headers (a mask that covers the whole
 * address space, 1 GiB slots): the engine keeps the shapes the module gave
 * it, through RESET, ERR and back to RTS, and never reads or writes past
 * the rings (ASan). */
TEST_F(served, hostile_ring_headers)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc;
	int n = 0;
	struct rxe_queue_buf *rings[] = { a->r.sq, a->r.rq, a->r.cqb };

	for (unsigned i = 0; i < 3; i++) {
		rings[i]->index_mask = 0xffffffff;
		rings[i]->log2_elem_size = 30;
	}
	app_wqe(a, IBV_WR_SEND, 61, APP_IOVA, 100, 0, 0);
	app_recv(a, 62, APP_IOVA, 100, 1);
	ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
	app_post(a, s1->dev);	/* posted in ERR: flushed */
	while (n < 2 && app_poll(&a->r.cq_cons, &uwc, 2000)) {
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, uwc.status);
		n++;
	}
	EXPECT_EQ(2, n);
	at.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
	/* back to RTS: the rings still work at their real shape */
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, served_connect(a->qp, s0, roxe_qp_num(s0->qp), sgid, dmac));
	ASSERT_EQ(0, post_recv1(s0->qp, 7, s0->buf, 4096, s0->mr->lkey));
	fill_pattern(a->buf, 100, 3);
	app_wqe(a, IBV_WR_SEND, 63, APP_IOVA, 100, 0, 0);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(63u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 3000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(s0->buf, a->buf, 100));
}

/* A thread that keeps moving the producer indices while the QP is flushed
 * (ERR) and reset, timed to perfection: the CQE hook runs in the engine
 * thread right after each flushed WQE is consumed, and puts the producer
 * one behind the consumer again (the queue looks full). Every flush still
 * ends (it takes what was posted when it started), so the modify returns
 * and the engine goes on. */
TEST_F_TIMEOUT(served, hostile_producer_index, 60)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ibv_qp_attr at;
	uint8_t sgid[16] = { 0 }, dmac[6] = { 0x02, 0, 0, 0, 0, 1 };

	for (int i = 0; i < 6; i++) {
		atomic_store(&a->index_games, true);
		at.qp_state = IBV_QPS_ERR;
		ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
		app_post(a, s1->dev);
		/* The engine has read the doorbell, and flushed amid the
		 * games in that turn (a RESET before it would find nothing
		 * posted: no games at all). */
		ASSERT_TRUE(wait_until(__atomic_load_n(&a->r.ring.cons, __ATOMIC_ACQUIRE) ==
				       a->r.ring.prod, 5000));
		/* RESET waits for the engine: it must get out of the flush */
		at.qp_state = IBV_QPS_RESET;
		ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
		atomic_store(&a->index_games, false);
	}
	EXPECT_GT(atomic_load(&a->events), 6 * 63);
	EXPECT_EQ(IBV_QPS_RESET, roxe_qp_state(a->qp));
}

/*
 * A send queue of nothing but local WQEs (type 1 unbinds: they always
 * succeed and retire at once) while the application keeps its producer
 * index one behind the consumer, so every WQE the engine retires shows it
 * another. The engine must not be held by that ring: a turn spends at
 * most a QP's budget on it, and another tenant's verified WRITEs on the
 * same engine finish while the games go on.
 */
TEST_F_TIMEOUT(served, hostile_sq_wrap_local_wqes, 60)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	const uint32_t mw_key = (ROXE_MW_INDEX_BASE + 9u) << 8 | 0x21;
	struct app *a = &self->a;
	struct roxe_qp *x0;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_EQ(0, roxe_served_mw_add(s1->pd, mw_key, IBV_MW_TYPE_1, &mw));
	/* every slot an unbind of the window, signalled: each retires with
	 * a CQE, whose hook moves the producer index */
	for (uint32_t i = 0; i <= a->r.sq_prod.mask; i++) {
		struct rxe_send_wqe *w = roxe_queue_slot(&a->r.sq_prod, i);

		memset(w, 0, 1u << a->r.sqg.log2_elem);
		w->wr.wr_id = 60;
		w->wr.opcode = IBV_WR_BIND_MW;
		w->wr.send_flags = IBV_SEND_SIGNALED;
		w->wr.wr.mw.mw_rkey = mw_key;
		w->wr.wr.mw.rkey = mw_key;
	}
	/* the other tenant: an embedded QP on the same engine and its peer */
	ASSERT_EQ(0, qp_create(s0, IBV_QPT_RC, &x0));
	ASSERT_EQ(0, qp_create(s1, IBV_QPT_RC, &s1->qp));
	ASSERT_EQ(0, qp_connect(x0, s1->dev, roxe_qp_num(s1->qp), IBV_QPT_RC, IBV_MTU_1024,
				300, 400, 14, 7, 7));
	ASSERT_EQ(0, qp_connect(s1->qp, s0->dev, roxe_qp_num(x0), IBV_QPT_RC, IBV_MTU_1024,
				400, 300, 14, 7, 7));

	a->eng = &s1->dev->engines[0];
	atomic_store(&a->sq_wrap, true);
	app_post(a, s1->dev);
	for (uint32_t i = 0; i < 64 && atomic_load(&a->sq_wrap); i++) {
		fill_pattern(s0->buf, 4096, i);
		ASSERT_EQ(0, post_send1(x0, IBV_WR_RDMA_WRITE, i, s0->buf, 4096, s0->mr->lkey,
					(uintptr_t)s1->buf + 4096 * (i % 8), s1->mr->rkey,
					IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(s1->buf + 4096 * (i % 8), s0->buf, 4096));
	}
	/* the games ran all along, and never held a turn */
	EXPECT_TRUE(atomic_load(&a->sq_wrap));
	atomic_store(&a->sq_wrap, false);
	EXPECT_FALSE(atomic_load(&a->wrap_stuck));
	TH_LOG("%d unbinds retired beside 64 WRITEs", atomic_load(&a->events));
	EXPECT_GT(atomic_load(&a->events), 64);
	roxe_destroy_qp(x0);
	/* the hostile QP goes while its ring still looks full */
	roxe_destroy_qp(a->qp);
	a->qp = NULL;
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

/* A storm of doorbells for one QP in ERR, the queue kept looking full (the
 * CQE hook): the engine acts on a QP's doorbells once per turn, so 1000
 * doorbells read in one turn cost one flush of what is posted, not 1000
 * (each a full ring), and the engine's other work goes on. */
TEST_F_TIMEOUT(served, hostile_doorbell_storm, 60)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	uint8_t sgid[16] = { 0 }, dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct roxe_engine *e = &s1->dev->engines[0];
	uint64_t one = 1;
	int flushed;

	ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
	roxe_dev_quiesce(s1->dev);	/* the engine has acted on the ERR */
	atomic_store(&a->events, 0);
	atomic_store(&a->index_games, true);
	roxe_queue_produce(&a->r.sq_prod);
	/* 1000 doorbells the engine reads in one turn */
	for (unsigned i = 0; i < 1000; i++)
		a->r.ring.qpn[(a->r.ring.prod + i) % ROXE_KABI_DB_SLOTS] = APP_QPN;
	__atomic_store_n(&a->r.ring.prod, a->r.ring.prod + 1000, __ATOMIC_RELEASE);
	ASSERT_EQ((ssize_t)sizeof(one), write(e->efd, &one, sizeof(one)));
	/* The turn that read them is over, and the engine idles: it sleeps
	 * only after turns that found nothing to do, so whatever the storm
	 * costs is counted (an engine that went on flushing never sleeps). */
	ASSERT_TRUE(wait_until(__atomic_load_n(&a->r.ring.cons, __ATOMIC_ACQUIRE) ==
			       a->r.ring.prod && atomic_load(&e->sleeping) &&
			       !atomic_load(&e->db_head), 5000));
	atomic_store(&a->index_games, false);
	flushed = atomic_load(&a->events);
	TH_LOG("1000 doorbells: %d completions flushed", flushed);
	EXPECT_GE(flushed, 1);
	EXPECT_LT(flushed, 10 * 64);	/* a ring (63) per turn, a few turns */
}

/* The application's WRITE of 4 KiB at offset off of its buffer to the same
 * offset of the peer's, written into its SQ (not posted). */
static void app_write(struct app *a, struct side *s0, uint64_t wr_id, size_t off)
{
	fill_pattern(a->buf + off, 4096, (int)wr_id);
	app_wqe(a, IBV_WR_RDMA_WRITE, wr_id, APP_IOVA + off, 4096, (uintptr_t)s0->buf + off,
		s0->mr->rkey);
}

/* ... completed (within 2 s), successfully, and arrived whole. */
static bool app_write_arrived(struct app *a, struct side *s0, uint64_t wr_id, size_t off)
{
	struct ib_uverbs_wc uwc;

	return app_poll(&a->r.cq_cons, &uwc, 2000) && uwc.wr_id == wr_id &&
	       uwc.status == IBV_WC_SUCCESS && !memcmp(s0->buf + off, a->buf + off, 4096);
}

/* A QP rung again and again between two turns of its engine (a zero-WR
 * post_send in a loop) takes one slot of the module's doorbell ring
 * (kabi.h: its bit is set while its QPN is there): the ring overflows only
 * with more QPs ringing than it has slots, so a flood of doorbells never
 * makes the engine look at every QP it has. Its WRITE is served, and so is
 * its next one: no doorbell is lost. */
TEST_F(served, doorbell_flood_takes_one_slot)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct roxe_engine *e = &s1->dev->engines[0];

	/* between two turns: the engine does not read the ring meanwhile */
	atomic_store(&e->kdb, NULL);
	roxe_dev_quiesce(s1->dev);
	app_write(a, s0, 21, 0);
	roxe_queue_produce(&a->r.sq_prod);
	for (int i = 0; i < 4 * ROXE_KABI_DB_SLOTS; i++)
		app_doorbell(&a->r, s1->dev, APP_QPN);
	EXPECT_EQ(1u, a->r.ring.prod - a->r.ring.cons);
	EXPECT_EQ(0u, a->r.ring.overflow);
	roxe_engine_set_kdb(e, &a->r.ring, a->r.db_queued);
	EXPECT_TRUE(app_write_arrived(a, s0, 21, 0));
	/* the engine took the QPN, its bit with it: the next doorbell
	 * queues it again, and reaches the engine */
	EXPECT_EQ(0u, __atomic_load_n(&a->r.db_queued[APP_QPN / 64], __ATOMIC_RELAXED) &
		      (1ull << (APP_QPN % 64)));
	app_write(a, s0, 22, 4096);
	app_post(a, s1->dev);
	EXPECT_TRUE(app_write_arrived(a, s0, 22, 4096));
	EXPECT_EQ(0u, e->stats->kdb_overflows);	/* never looked at every QP */
}

/* More QPs ringing between two turns than the ring has slots: the one that
 * finds it full sets overflow, its bit not kept, and the engine, having
 * taken the ring's QPNs (and their bits), looks at every QP it has: the
 * late QP's WRITE is served all the same. */
TEST_F(served, doorbell_ring_overflow_loses_nothing)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct roxe_engine *e = &s1->dev->engines[0];
	uint64_t set = 0;

	atomic_store(&e->kdb, NULL);
	roxe_dev_quiesce(s1->dev);
	/* other QPs' numbers (none of them served here) fill the ring */
	for (uint32_t q = 0; q < ROXE_KABI_DB_SLOTS; q++)
		app_doorbell(&a->r, NULL, 20000 + q);
	app_write(a, s0, 23, 0);
	app_post(a, s1->dev);
	EXPECT_EQ((uint32_t)ROXE_KABI_DB_SLOTS, a->r.ring.prod - a->r.ring.cons);
	EXPECT_EQ(1u, a->r.ring.overflow);
	roxe_engine_set_kdb(e, &a->r.ring, a->r.db_queued);
	EXPECT_TRUE(app_write_arrived(a, s0, 23, 0));
	EXPECT_EQ(1u, e->stats->kdb_overflows);
	EXPECT_EQ(a->r.ring.prod, __atomic_load_n(&a->r.ring.cons, __ATOMIC_ACQUIRE));
	for (unsigned w = 0; w < ROXE_KABI_MAX_QPS / 64; w++)
		set |= __atomic_load_n(&a->r.db_queued[w], __ATOMIC_RELAXED);
	EXPECT_EQ(0u, set);	/* every QPN taken, its bit with it */
}

/* Busy polling (kabi.h, wake-ups): a doorbell signals the engine's
 * eventfd only while the engine says it is not awake, and none is slept
 * through. 5000 WRITEs, each posted a pause drawn from 0 to 120 us after
 * the last one's CQE, so that posts land in every phase of the engine: in
 * a turn, spinning (50 us), on its way to sleep, asleep. Nothing else
 * wakes it (the peer is idle, the QP has no timer): a lost doorbell is a
 * WRITE that never completes. Then the two sides once each, on purpose. */
TEST_F(served, doorbell_signals_only_a_sleeping_engine)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	unsigned signalled = 0, quiet = 0, seed = 38;
	uint64_t until;
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct ib_uverbs_wc uwc;

	/* No retransmission timer (timeout 0): its expiry, due 67 ms after
	 * a WRITE and walked lazily, would wake the engine and hide a lost
	 * doorbell as a slow WRITE. */
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, roxe_modify_qp(s0->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
				    IBV_QP_STATE));
	ASSERT_EQ(0, qp_connect(s0->qp, s1->dev, APP_QPN, IBV_QPT_RC, IBV_MTU_1024, 100, 200,
				14, 7, 7));
	ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
					   IBV_QP_STATE, sgid, dmac));
	ASSERT_EQ(0, served_connect_timeout(a->qp, s0, roxe_qp_num(s0->qp), sgid, dmac, 0));
	for (int i = 0; i < 5000; i++) {
		until = roxe_now_ns() + rand_r(&seed) % 120000;

		while (roxe_now_ns() < until)
			;
		app_wqe(a, IBV_WR_RDMA_WRITE, 1000 + i, APP_IOVA, 8, (uintptr_t)s0->buf,
			s0->mr->rkey);
		roxe_queue_produce(&a->r.sq_prod);
		bool sig = app_doorbell(&a->r, s1->dev, APP_QPN);

		signalled += sig;
		quiet += !sig;
		/* spun on, not slept on: the next pause starts at the CQE */
		until = roxe_now_ns() + 2000000000ull;
		while (roxe_queue_empty(&a->r.cq_cons) && roxe_now_ns() < until)
			;
		ASSERT_FALSE(roxe_queue_empty(&a->r.cq_cons)) {
			TH_LOG("WRITE %d of 5000 never completed (its doorbell %s)", i,
			       sig ? "signalled" : "found the engine awake");
		}
		uwc = *(struct ib_uverbs_wc *)roxe_queue_consumer_slot(&a->r.cq_cons);
		roxe_queue_consume(&a->r.cq_cons);
		ASSERT_EQ(1000u + i, uwc.wr_id);
		ASSERT_EQ(IBV_WC_SUCCESS, uwc.status);
	}
	TH_LOG("5000 doorbells: %u signalled, %u found the engine awake", signalled, quiet);

	/* Once it says it sleeps (awake 0), a doorbell signals it. */
	until = roxe_now_ns() + 2000000000ull;
	while (__atomic_load_n(&a->r.ring.awake, __ATOMIC_ACQUIRE) && roxe_now_ns() < until)
		usleep(100);
	ASSERT_EQ(0u, __atomic_load_n(&a->r.ring.awake, __ATOMIC_ACQUIRE));
	/* and its turn's CQE rings once more, the engine awake: quiet */
	a->eng = &s1->dev->engines[0];
	atomic_store(&a->ring_in_turn, 1);
	app_wqe(a, IBV_WR_RDMA_WRITE, 9999, APP_IOVA, 8, (uintptr_t)s0->buf, s0->mr->rkey);
	roxe_queue_produce(&a->r.sq_prod);
	EXPECT_TRUE(app_doorbell(&a->r, s1->dev, APP_QPN));
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(9999u, uwc.wr_id);
	EXPECT_EQ(3, atomic_load(&a->ring_in_turn));
}

/* roxe0's QPs answer in a NIC's order: a request's ACK goes before the
 * reply the application posts on seeing the request (a NIC ACKs before
 * the application can see it). Debian 12's perftest (4.5) waits for both
 * completions on one channel and sleeps for good when the reply comes
 * first (ib_send_lat -e; kmod_loopback.sh). Here the application posts
 * its reply from the turn of the receive CQE itself, while the ACK is
 * held (sched.c): the peer sees its SEND complete before the reply. */
TEST_F(served, reply_goes_behind_the_requests_ack)
{
	struct side *s0 = &self->p.s[0];
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc[2];

	app_recv(a, 80, APP_IOVA, 256, 1);
	app_wqe(a, IBV_WR_SEND, 81, APP_IOVA + 4096, 64, 0, 0);	/* not posted yet */
	atomic_store(&a->reply_on_cqe, true);
	ASSERT_EQ(0, post_recv1(s0->qp, 82, s0->buf + 8192, 256, s0->mr->lkey));
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_SEND, 83, s0->buf, 64, s0->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(2, poll_n(s0->cq, wc, 2, 2000));
	EXPECT_EQ(83u, wc[0].wr_id);		/* the ACK first */
	EXPECT_EQ(IBV_WC_SEND, wc[0].opcode);
	EXPECT_EQ(82u, wc[1].wr_id);		/* then the reply */
	EXPECT_EQ(IBV_WC_RECV, wc[1].opcode);
	for (unsigned i = 0; i < 2; i++) {
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
		EXPECT_EQ(80u + i, uwc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	}
}

/* Events carry their object's number; a full event ring counts what it
 * loses; destroying an object drops its unread events (none may name a
 * QP that is gone, or a new one at the same number). */
TEST_F(served, events_by_number)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct roxe_async_event ev;
	struct roxe_qp *more[ROXE_ASYNC_EVENTS / ROXE_ASYNC_EVENTS_PER_OBJECT + 6];

	/* a full ring: events of many QPs, ROXE_ASYNC_EVENTS_PER_OBJECT each */
	for (unsigned q = 0; q < sizeof(more) / sizeof(more[0]); q++) {
		ASSERT_EQ(0, qp_create(&self->p.s[1], IBV_QPT_RC, &more[q]));
		for (int i = 0; i < ROXE_ASYNC_EVENTS_PER_OBJECT; i++)
			roxe_async_event(s1->dev, IBV_EVENT_QP_FATAL, more[q], 1000 + q,
					 more[q]->tenant);
	}
	EXPECT_EQ(6u * ROXE_ASYNC_EVENTS_PER_OBJECT, roxe_async_lost(s1->dev));
	for (unsigned q = 0; q < sizeof(more) / sizeof(more[0]); q++)
		EXPECT_EQ(0, roxe_destroy_qp(more[q]));	/* and their events go */
	ASSERT_EQ(-EAGAIN, roxe_get_async_event(s1->dev, &ev));
	roxe_async_event(s1->dev, IBV_EVENT_QP_FATAL, a->qp, APP_QPN, a->qp->tenant);
	ASSERT_EQ(0, roxe_get_async_event(s1->dev, &ev));
	EXPECT_EQ(IBV_EVENT_QP_FATAL, ev.type);
	EXPECT_EQ(APP_QPN, ev.id);
	roxe_async_event(s1->dev, IBV_EVENT_CQ_ERR, a->cq, APP_CQN, a->cq->tenant);
	EXPECT_EQ(0, roxe_destroy_qp(a->qp));
	a->qp = NULL;
	ASSERT_EQ(0, roxe_get_async_event(s1->dev, &ev));	/* the CQ's stays */
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.type);
	EXPECT_EQ(APP_CQN, ev.id);
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(s1->dev, &ev));
}

/* One QP's events beyond ROXE_ASYNC_EVENTS_PER_OBJECT are its own loss: a
 * QP driven through error after error by one tenant leaves room in the
 * device's ring for another tenant's CQ's event. */
TEST_F(served, one_object_cannot_fill_the_event_ring)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct roxe_async_event ev;
	int n = 0;

	for (int i = 0; i < ROXE_ASYNC_EVENTS + 44; i++)
		roxe_async_event(s1->dev, IBV_EVENT_QP_FATAL, a->qp, APP_QPN, a->qp->tenant);
	EXPECT_EQ((uint64_t)ROXE_ASYNC_EVENTS + 44 - ROXE_ASYNC_EVENTS_PER_OBJECT,
		  roxe_async_lost(s1->dev));
	roxe_async_event(s1->dev, IBV_EVENT_CQ_ERR, a->cq, APP_CQN, a->cq->tenant);
	while (roxe_get_async_event(s1->dev, &ev) == 0 && ev.type == IBV_EVENT_QP_FATAL)
		n++;
	EXPECT_EQ(ROXE_ASYNC_EVENTS_PER_OBJECT, n);
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.type);		/* the other object's came */
	EXPECT_EQ(APP_CQN, ev.id);
}

/* One tenant's many objects, each within its ROXE_ASYNC_EVENTS_PER_OBJECT,
 * fill the ring and then lose their own events: another tenant's event
 * still gets in (the newest of the hog's gives way), and is read. */
TEST_F(served, one_tenant_cannot_fill_the_event_ring)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct roxe_async_event ev;
	enum { HOG_CQS = ROXE_ASYNC_EVENTS / ROXE_ASYNC_EVENTS_PER_OBJECT + 8 };
	struct rxe_queue_buf *buf[HOG_CQS];
	struct roxe_cq *hog[HOG_CQS];
	struct roxe_queue_geom g;
	uint64_t lost;
	int n = 0;

	/* nobody's 40 CQs, 8 events each: 320 for a ring of 256 */
	for (int q = 0; q < HOG_CQS; q++) {
		buf[q] = roxe_queue_buf_alloc(3, sizeof(struct ib_uverbs_wc), &g);
		ASSERT_TRUE(buf[q]);
		ASSERT_EQ(0, roxe_served_cq_create(s1->dev, 100 + q, buf[q], g, on_event, a,
						   65534, &hog[q]));
		for (int i = 0; i < ROXE_ASYNC_EVENTS_PER_OBJECT; i++)
			roxe_async_event(s1->dev, IBV_EVENT_CQ_ERR, hog[q], hog[q]->id,
					 hog[q]->tenant);
	}
	lost = roxe_async_lost(s1->dev);
	EXPECT_EQ((uint64_t)HOG_CQS * ROXE_ASYNC_EVENTS_PER_OBJECT - ROXE_ASYNC_EVENTS, lost);
	/* the application's QP, of another tenant */
	roxe_async_event(s1->dev, IBV_EVENT_QP_FATAL, a->qp, APP_QPN, a->qp->tenant);
	while (roxe_get_async_event(s1->dev, &ev) == 0 && ev.type == IBV_EVENT_CQ_ERR)
		n++;
	EXPECT_EQ(ROXE_ASYNC_EVENTS - 1, n);
	EXPECT_EQ(IBV_EVENT_QP_FATAL, ev.type);	/* the other tenant's came */
	EXPECT_EQ(APP_QPN, ev.id);
	EXPECT_EQ(lost + 1, roxe_async_lost(s1->dev));
	for (int q = 0; q < HOG_CQS; q++) {
		EXPECT_EQ(0, roxe_destroy_cq(hog[q]));
		free(buf[q]);
	}
}

/* QP1 as roxed serves it for ib_mad (roxe.ko's GSI QP): a UD QP numbered 1
 * with the GSI Q_Key. No other number below 2 and no other type is taken;
 * a datagram to QPN 1 with that Q_Key lands with its GRH and source QP, one
 * with another Q_Key is dropped. */
/* Multicast attachments are shared out per tenant (issue #33): one
 * tenant's served QPs hold at most ROXE_MAX_MCAST_TENANT_ATTACH between
 * them, another tenant's still attach, and a detach or a destroy gives the
 * share back. */
TEST_F(served, one_tenant_cannot_take_the_multicast_groups)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	const struct ibv_qp_cap cap = { 15, 15, 1, 1, 0 };
	struct app_rings hr = { .tenant = 65534 }, vr = { .tenant = APP_TENANT + 1 };
	union ibv_gid g = { .raw = { 0xff, 0x0e } };
	struct roxe_qp *h[2], *v;
	unsigned n = 0;
	int err = 0;

	ASSERT_EQ(0, app_rings_alloc(&hr, 15, 1, 1, 0));
	ASSERT_EQ(0, app_rings_alloc(&vr, 15, 1, 1, 0));
	ASSERT_EQ(0, app_served_qp(&hr, s1->pd, 5000, IBV_QPT_UD, a->cq, cap, false, &h[0]));
	ASSERT_EQ(0, app_served_qp(&hr, s1->pd, 5001, IBV_QPT_UD, a->cq, cap, false, &h[1]));
	ASSERT_EQ(0, app_served_qp(&vr, s1->pd, 5002, IBV_QPT_UD, a->cq, cap, false, &v));
	/* the greedy tenant: a new group per attach, from two QPs, until refused */
	while (n < 2 * ROXE_MAX_MCAST_TENANT_ATTACH) {
		g.raw[14] = (uint8_t)(n >> 8);
		g.raw[15] = (uint8_t)n;
		err = roxe_attach_mcast(h[n & 1], &g);
		if (err)
			break;
		n++;
	}
	EXPECT_EQ(-ENOMEM, err);
	EXPECT_EQ(ROXE_MAX_MCAST_TENANT_ATTACH, n);
	/* the other tenant: a group of its own, and one of the greedy's */
	g.raw[13] = 1;
	EXPECT_EQ(0, roxe_attach_mcast(v, &g));
	g.raw[13] = g.raw[14] = g.raw[15] = 0;
	EXPECT_EQ(0, roxe_attach_mcast(v, &g));
	/* a detach gives one back, and only one */
	EXPECT_EQ(0, roxe_detach_mcast(h[0], &g));
	g.raw[13] = 2;
	EXPECT_EQ(0, roxe_attach_mcast(h[0], &g));
	g.raw[13] = 3;
	EXPECT_EQ(-ENOMEM, roxe_attach_mcast(h[0], &g));
	/* a destroy gives back its QP's: half of them */
	EXPECT_EQ(0, roxe_destroy_qp(h[1]));
	EXPECT_EQ(0, roxe_attach_mcast(h[0], &g));
	EXPECT_EQ(0, roxe_destroy_qp(h[0]));
	EXPECT_EQ(0, roxe_destroy_qp(v));
	app_rings_free(&hr);
	app_rings_free(&vr);
}

TEST_F(served, gsi_qp1_is_ud)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	const struct ibv_qp_cap cap = { 15, 15, 1, 1, 0 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qkey = ROXE_QKEY_GSI };
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct app_rings gr = { 0 };	/* QP1's rings; its CQ is the fixture's */
	struct rxe_recv_wqe *r;
	struct roxe_qp *gsi, *peer;
	struct ib_uverbs_wc uwc;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	ASSERT_EQ(0, app_rings_alloc(&gr, 15, 1, 1, 0));
	EXPECT_EQ(-EINVAL, app_served_qp(&gr, s1->pd, 0, IBV_QPT_UD, a->cq, cap, true, &gsi));
	EXPECT_EQ(-EINVAL, app_served_qp(&gr, s1->pd, ROXE_QPN_GSI, IBV_QPT_RC, a->cq, cap, true, &gsi));
	ASSERT_EQ(0, app_served_qp(&gr, s1->pd, ROXE_QPN_GSI, IBV_QPT_UD, a->cq, cap, true, &gsi));
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, app_ud_up(gsi, ROXE_QKEY_GSI, sgid, dmac));

	/* the peer: a UD QP with the GSI Q_Key, as the other side's QP1 */
	ASSERT_EQ(0, qp_create(s0, IBV_QPT_UD, &peer));
	at.qp_state = IBV_QPS_INIT;
	ASSERT_EQ(0, roxe_modify_qp(peer, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY));
	at.qp_state = IBV_QPS_RTR;
	ASSERT_EQ(0, roxe_modify_qp(peer, &at, IBV_QP_STATE));
	at.qp_state = IBV_QPS_RTS;
	ASSERT_EQ(0, roxe_modify_qp(peer, &at, IBV_QP_STATE | IBV_QP_SQ_PSN));
	roxe_query_gid(s1->dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(s0->pd, &aa, &ah));

	r = roxe_queue_producer_slot(&gr.rq_prod);
	memset(r, 0, 1u << gr.rqg.log2_elem);
	r->wr_id = 31;
	r->dma.length = r->dma.resid = 40 + 256;
	r->dma.num_sge = 1;
	r->dma.sge[0] = (struct rxe_sge){ APP_IOVA + 800000, 40 + 256, APP_KEY };
	roxe_queue_produce(&gr.rq_prod);
	fill_pattern(s0->buf, 256, 9);
	for (int i = 0; i < 2; i++) {
		/* first a stranger's Q_Key (dropped), then QP1's own (the MSB
		 * set: the sending QP's Q_Key goes on the wire) */
		struct ibv_sge sge = { (uintptr_t)s0->buf, 256, s0->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 40 + i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = ROXE_QPN_GSI;
		wr.wr.ud.remote_qkey = i ? ROXE_QKEY_GSI : 0x12345678;
		ASSERT_EQ(0, roxe_post_send(peer, &wr, &bad));
		ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(i, app_poll(&a->r.cq_cons, &uwc, i ? 2000 : 100));
	}
	EXPECT_EQ(31u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(IBV_WC_RECV, uwc.opcode);
	EXPECT_EQ(40u + 256u, uwc.byte_len);
	EXPECT_EQ(ROXE_QPN_GSI, uwc.qp_num);
	EXPECT_EQ(roxe_qp_num(peer), uwc.src_qp);
	EXPECT_TRUE(uwc.wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0, memcmp(a->buf + 800000 + 40, s0->buf, 256));

	EXPECT_EQ(0, roxe_destroy_ah(ah));
	EXPECT_EQ(0, roxe_destroy_qp(peer));
	EXPECT_EQ(0, roxe_destroy_qp(gsi));
	app_rings_free(&gr);
}

/* What a fast-registration MR's window calls looked like (roxe.ko's part). */
struct window_calls {
	int maps, unmaps;
	uint32_t last_key;
};

static int window_fn(void *ctx, uint32_t key, bool map)
{
	struct window_calls *c = ctx;

	if (map)
		c->maps++;
	else
		c->unmaps++;
	c->last_key = key;
	return 0;
}

/* The fixture's QP replaced by a kernel ULP's (its rings fresh, nothing
 * posted yet), connected as before. */
static int app_qp_kernel(FIXTURE_DATA(served) *self)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	int err;

	roxe_destroy_qp(self->a.qp);
	err = app_served_qp(&self->a.r, s1->pd, APP_QPN, IBV_QPT_RC, self->a.cq,
			    (struct ibv_qp_cap){ 63, 63, SQ_SGE, RQ_SGE, 64 }, true, &self->a.qp);
	if (err) {
		self->a.qp = NULL;
		return err;
	}
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)sgid);
	return served_connect(self->a.qp, s0, roxe_qp_num(s0->qp), sgid, dmac);
}

/* A REG_MR WQE as roxe.ko writes it for a kernel QP (include/uapi/roxe/kabi.h). */
static void app_reg_mr(struct app *a, uint64_t id, uint32_t key, uint64_t iova, uint64_t len,
		       uint32_t page_off, uint32_t access)
{
	struct rxe_send_wqe *w = roxe_queue_producer_slot(&a->r.sq_prod);

	memset(w, 0, 1u << a->r.sqg.log2_elem);
	w->wr.wr_id = id;
	w->wr.opcode = ROXE_KABI_WR_REG_MR;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	w->wr.wr.rdma.remote_addr = ROXE_KABI_REG_MR_ADDR(len, page_off);
	w->wr.wr.rdma.rkey = key;
	w->wr.wr.rdma.reserved = access;
	w->iova = iova;
	w->ssn = a->ssn++;
}

/* Fast registration on a served QP: a REG_MR WQE makes the MR valid over
 * its window (the module is asked to fill it), the peer READs and WRITEs
 * through the rkey at the registered iova; LOCAL_INV empties the window;
 * a new key registers again; REG_MR of a valid MR fails. */
TEST_F(served, fast_reg_window)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	const uint32_t key = 88u << 8 | 1, acc = IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	const uint64_t iova = 0xabc00000123ull;
	struct window_calls calls = { 0 };
	uint8_t *window = aligned_alloc(4096, 4 * 4096);
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct roxe_mr *mr;
	struct ibv_wc wc;

	ASSERT_TRUE(window != NULL);
	ASSERT_EQ(0, app_qp_kernel(self));
	ASSERT_EQ(0, roxe_served_mr_fast(s1->pd, key, window, 4 * 4096, window_fn, &calls, &mr));
	fill_pattern(window + 0x123, 8000, 7);

	app_reg_mr(a, 41, key, iova, 8000, 0x123, acc);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(41u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ((uint32_t)ROXE_KABI_WC_REG_MR, uwc.opcode);
	EXPECT_EQ(1, calls.maps);
	EXPECT_EQ(key, calls.last_key);

	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_READ, 5, s0->buf, 8000, s0->mr->lkey,
				iova, key, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(s0->buf, window + 0x123, 8000));
	fill_pattern(s0->buf + 10000, 1000, 8);
	ASSERT_EQ(0, post_send1(s0->qp, IBV_WR_RDMA_WRITE, 6, s0->buf + 10000, 1000,
				s0->mr->lkey, iova + 500, key, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(s0->cq, &wc, 1, 2000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(window + 0x123 + 500, s0->buf + 10000, 1000));

	{
		struct rxe_send_wqe *w = app_wqe(a, IBV_WR_LOCAL_INV, 42, 0, 0, 0, 0);

		w->dma.num_sge = 0;
		w->wr.ex.invalidate_rkey = key;
	}
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(IBV_WC_LOCAL_INV, uwc.opcode);
	EXPECT_EQ(1, calls.unmaps);

	app_reg_mr(a, 43, key + 1, iova, 4000, 0x123, acc);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	EXPECT_EQ(2, calls.maps);
	EXPECT_EQ(key + 1, mr->rkey);
	EXPECT_EQ(4000u, mr->length);

	/* registered already: IBA says invalid MRs only */
	app_reg_mr(a, 44, key + 2, iova, 4000, 0x123, acc);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(44u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, uwc.status);
	EXPECT_EQ(2, calls.maps);
	/* a local error stops the RC QP: what follows flushes */
	app_wqe(a, IBV_WR_SEND, 45, APP_IOVA, 10, 0, 0);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(45u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, uwc.status);

	EXPECT_EQ(0, roxe_dereg_mr(mr));
	free(window);
}

/* The module's REG_MR opcode in an application's WQE (a uverbs user can
 * write any opcode into its ring): refused as an unknown opcode, the MR
 * stays invalid and its window untouched. Only a kernel ULP's QP, whose
 * ring the module alone writes, registers. */
TEST_F(served, reg_mr_wqe_from_an_application_qp)
{
	struct side *s1 = &self->p.s[1];
	const uint32_t key = 89u << 8 | 1;
	struct window_calls calls = { 0 };
	uint8_t *window = aligned_alloc(4096, 4096);
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct roxe_mr *mr;

	ASSERT_TRUE(window != NULL);
	ASSERT_EQ(0, roxe_served_mr_fast(s1->pd, key, window, 4096, window_fn, &calls, &mr));
	app_reg_mr(a, 43, key, 0x5000, 100, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	app_post(a, s1->dev);
	ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	EXPECT_EQ(43u, uwc.wr_id);
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, uwc.status);
	EXPECT_EQ(0, calls.maps);
	EXPECT_EQ(0, roxe_dereg_mr(mr));
	free(window);
}

static uint32_t cq_outstanding(const struct rxe_queue_buf *b, struct roxe_queue_geom g)
{
	return (__atomic_load_n(&b->producer_index, __ATOMIC_ACQUIRE) -
		__atomic_load_n(&b->consumer_index, __ATOMIC_ACQUIRE)) & g.mask;
}

/* Outstanding CQEs of a CQ ring: n, within timeout_ms (a hang guard). */
static bool cq_holds(const struct rxe_queue_buf *b, struct roxe_queue_geom g, uint32_t n,
		     int timeout_ms)
{
	return wait_until(cq_outstanding(b, g) == n, timeout_ms);
}

/* The application SENDs n times (ids from id), the peer receives them. */
static void app_sends(struct app *a, struct side *s0, struct roxe_device *dev, uint64_t id,
		      unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		post_recv1(s0->qp, 1000 + id + i, s0->buf, 256, s0->mr->lkey);
		app_wqe(a, IBV_WR_SEND, id + i, APP_IOVA, 64, 0, 0);
		app_post(a, dev);
	}
}

/* ibv_resize_cq as roxed serves it (ROXE_KOP_RESIZE_CQ): smaller than the
 * CQEs outstanding is refused and the old ring stays; else the outstanding
 * CQEs move in order to the new ring's slots 0.., and from then on the
 * engine produces only there (the old ring is never written again). */
TEST_F(served, cq_resize)
{
	struct side *s0 = &self->p.s[0], *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct rxe_queue_buf *small, *nb, *old = a->r.cqb;
	struct roxe_queue_geom sg, ng, bad;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc[10];
	uint32_t old_prod;

	app_sends(a, s0, s1->dev, 100, 10);
	ASSERT_TRUE(cq_holds(old, a->r.cqg, 10, 2000));
	ASSERT_EQ(10, poll_n(s0->cq, wc, 10, 2000));
	for (unsigned i = 0; i < 2; i++) {
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
		EXPECT_EQ(100u + i, uwc.wr_id);
	}

	/* 8 outstanding: a ring of 7 is refused, the CQ stays as it was */
	small = roxe_queue_buf_alloc(4, sizeof(struct ib_uverbs_wc), &sg);
	ASSERT_TRUE(small);
	ASSERT_EQ(7u, sg.mask);
	EXPECT_EQ(-EINVAL, roxe_served_cq_resize(a->cq, small, sg));
	bad = (struct roxe_queue_geom){ .mask = 6, .log2_elem = sg.log2_elem };
	EXPECT_EQ(-EINVAL, roxe_served_cq_resize(a->cq, small, bad));
	EXPECT_EQ(-EINVAL, roxe_resize_cq(a->cq, 100));	/* served: not the embedded call */
	EXPECT_EQ(0u, __atomic_load_n(&small->producer_index, __ATOMIC_RELAXED));
	EXPECT_EQ(8u, cq_outstanding(old, a->r.cqg));

	/* a ring of 15: the 8 move there in order */
	nb = roxe_queue_buf_alloc(15, sizeof(struct ib_uverbs_wc), &ng);
	ASSERT_TRUE(nb);
	ASSERT_EQ(0, roxe_served_cq_resize(a->cq, nb, ng));
	old_prod = __atomic_load_n(&old->producer_index, __ATOMIC_RELAXED);
	EXPECT_EQ(8u, __atomic_load_n(&nb->producer_index, __ATOMIC_RELAXED));
	EXPECT_EQ(0u, __atomic_load_n(&nb->consumer_index, __ATOMIC_RELAXED));
	a->r.cqb = nb;
	a->r.cqg = ng;
	roxe_queue_init_consumer(&a->r.cq_cons, nb, ng);
	for (unsigned i = 2; i < 10; i++) {
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
		EXPECT_EQ(100u + i, uwc.wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
	}

	/* traffic goes on into the new ring, never the old one */
	for (unsigned round = 0; round < 3; round++) {
		app_sends(a, s0, s1->dev, 200 + 10 * round, 10);
		for (unsigned i = 0; i < 10; i++) {
			ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
			EXPECT_EQ(200u + 10 * round + i, uwc.wr_id);
			EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
		}
		ASSERT_EQ(10, poll_n(s0->cq, wc, 10, 2000));
	}
	EXPECT_EQ(old_prod, __atomic_load_n(&old->producer_index, __ATOMIC_RELAXED));
	EXPECT_EQ(0u, __atomic_load_n(&small->producer_index, __ATOMIC_RELAXED));
	free(small);
	free(old);
}

/* A resize counts what the doorbells rung before it make: the engine
 * takes them first. pyverbs' test_resize_cq posts UD SENDs and at once
 * asks for a CQ too small for their completions, which rxe's post_send
 * has made by then. Here 6 WQEs posted to the QP in ERR, each flushed by
 * the engine on the doorbell: a ring of 3 is refused, and the 6 come. */
TEST_F(served, cq_resize_counts_what_was_posted_before_it)
{
	struct side *s1 = &self->p.s[1];
	struct app *a = &self->a;
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	uint8_t sgid[16] = { 0 }, dmac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct rxe_queue_buf *small;
	struct roxe_queue_geom sg;
	struct ib_uverbs_wc uwc;

	ASSERT_EQ(0, roxe_served_modify_qp(a->qp, &at, IBV_QP_STATE, sgid, dmac));
	small = roxe_queue_buf_alloc(2, sizeof(struct ib_uverbs_wc), &sg);
	ASSERT_TRUE(small);
	ASSERT_EQ(3u, sg.mask);
	for (unsigned i = 0; i < 6; i++) {
		app_wqe(a, IBV_WR_SEND, 70 + i, APP_IOVA, 64, 0, 0);
		roxe_queue_produce(&a->r.sq_prod);
	}
	/* asleep, then roxe.ko's doorbell: an engine that only looked
	 * asleep with no doorbell of the application's queued would be
	 * taken for idle (roxe_dev_quiesce looks at roxe.ko's ring too) */
	ASSERT_TRUE(wait_until(atomic_load(&s1->dev->engines[0].sleeping), 2000));
	ASSERT_TRUE(app_doorbell(&a->r, s1->dev, APP_QPN));
	EXPECT_EQ(-EINVAL, roxe_served_cq_resize(a->cq, small, sg));
	for (unsigned i = 0; i < 6; i++) {
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
		EXPECT_EQ(70u + i, uwc.wr_id);
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, uwc.status);
	}
	EXPECT_EQ(0u, __atomic_load_n(&small->producer_index, __ATOMIC_RELAXED));
	free(small);
}

/* The embedded API's roxe_resize_cq: up and down, completions kept in
 * order, fewer entries than outstanding refused, traffic goes on. */
TEST_F(served, embedded_cq_resize)
{
	struct side *s0 = &self->p.s[0];
	struct app *a = &self->a;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc[16];

	EXPECT_EQ(-EINVAL, roxe_resize_cq(s0->cq, 0));
	EXPECT_EQ(-EINVAL, roxe_resize_cq(s0->cq, ROXE_MAX_CQE + 1));
	/* 6 receive completions on the peer's CQ, one polled */
	for (unsigned i = 0; i < 6; i++) {
		ASSERT_EQ(0, post_recv1(s0->qp, 300 + i, s0->buf + 4096 * i, 256, s0->mr->lkey));
		app_wqe(a, IBV_WR_SEND, 400 + i, APP_IOVA, 32, 0, 0);
		app_post(a, self->p.s[1].dev);
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	}
	ASSERT_TRUE(cq_holds(s0->cq->buf, (struct roxe_queue_geom){ .mask = s0->cq->cons.mask },
			     6, 2000));
	ASSERT_EQ(1, poll_n(s0->cq, wc, 1, 2000));
	EXPECT_EQ(300u, wc[0].wr_id);
	EXPECT_EQ(-EINVAL, roxe_resize_cq(s0->cq, 4));	/* 5 outstanding */
	ASSERT_EQ(0, roxe_resize_cq(s0->cq, 5));	/* down: exactly 5 */
	ASSERT_EQ(0, roxe_resize_cq(s0->cq, 4000));	/* up */
	ASSERT_EQ(5, poll_n(s0->cq, wc, 5, 2000));
	for (unsigned i = 0; i < 5; i++)
		EXPECT_EQ(301u + i, wc[i].wr_id);
	for (unsigned i = 0; i < 16; i++) {
		ASSERT_EQ(0, post_recv1(s0->qp, 500 + i, s0->buf, 256, s0->mr->lkey));
		app_wqe(a, IBV_WR_SEND, 600 + i, APP_IOVA, 32, 0, 0);
		app_post(a, self->p.s[1].dev);
		ASSERT_EQ(1, app_poll(&a->r.cq_cons, &uwc, 2000));
	}
	ASSERT_EQ(16, poll_n(s0->cq, wc, 16, 2000));
	for (unsigned i = 0; i < 16; i++)
		EXPECT_EQ(500u + i, wc[i].wr_id);
}

TEST_HARNESS_MAIN
