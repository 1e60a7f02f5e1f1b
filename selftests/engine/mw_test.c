// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory windows over the loop backend, with rxe's rules: type 1 windows
 * bound by roxe_bind_mw(), type 2 by IBV_WR_BIND_MW; the peer's WRITE,
 * READ and atomics through the window's rkey land in the window and only
 * there; invalidation (LOCAL_INV, SEND_WITH_INV), unbinding, dealloc;
 * every bind rxe refuses completes with IBV_WC_MW_BIND_ERR.
 *
 * Side 1 (b) owns the windows over an MR (wmr) that grants no remote
 * access of its own; side 0 (a) is the peer.
 */
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "roxe/limits.h"

#define BUF	(2u << 20)
#define WOFF	(1u << 20)		/* wmr: b->buf + WOFF, WLEN bytes */
#define WLEN	(64u << 10)

FIXTURE(mw) {
	struct pair p;
	struct roxe_mr *wmr;
	uint8_t *w;			/* wmr's first byte */
};

FIXTURE_SETUP(mw)
{
	struct side *b = &self->p.s[1];

	ASSERT_EQ(0, pair_open(&self->p, 4096, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 14, 7, 7));
	self->w = b->buf + WOFF;
	ASSERT_EQ(0, roxe_reg_mr(b->pd, self->w, WLEN,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, &self->wmr));
}

FIXTURE_TEARDOWN(mw)
{
	if (self->wmr)
		EXPECT_EQ(0, roxe_dereg_mr(self->wmr));

	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* After an error stopped a QP: a new connected pair of QPs. */
static int reconnect(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		roxe_destroy_qp(p->s[i].qp);
		p->s[i].qp = NULL;
	}
	return pair_connect(p, IBV_QPT_RC, IBV_MTU_1024, 30, 40, 14, 7, 7);
}

/* One signalled WQE's completion on s's CQ: its status, -1 if none came. */
static int one_wc(struct side *s, struct ibv_wc *wc)
{
	return poll_n(s->cq, wc, 1, 5000) == 1 ? (int)wc->status : -1;
}

/* a's READ or WRITE of len bytes at raddr through rkey (a->buf[0..len)). */
static int remote(struct pair *p, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
		  uint32_t len)
{
	struct side *a = &p->s[0];
	struct ibv_wc wc;

	if (post_send1(a->qp, op, 7, a->buf, len, a->mr->lkey, raddr, rkey, IBV_SEND_SIGNALED))
		return -2;
	return one_wc(a, &wc);
}

static int fetch_add(struct pair *p, uint64_t raddr, uint32_t rkey, uint64_t add)
{
	struct side *a = &p->s[0];
	struct ibv_sge sge = { (uintptr_t)a->buf, 8, a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	if (roxe_post_send(a->qp, &wr, &bad))
		return -2;
	return one_wc(a, &wc);
}

/* An IBV_WR_BIND_MW on b's QP; its completion's status (opcode checked). */
static int bind_wr(struct pair *p, struct ibv_mw *mw, uint32_t rkey, struct roxe_mr *mr,
		   uint64_t addr, uint64_t len, unsigned access)
{
	struct side *b = &p->s[1];
	struct ibv_send_wr wr = { .wr_id = 55, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int st;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr ? roxe_mr_ibv(mr) : NULL;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (roxe_post_send(b->qp, &wr, &bad))
		return -2;
	st = one_wc(b, &wc);
	if (st >= 0 && (wc.wr_id != 55 || wc.opcode != IBV_WC_BIND_MW))
		return -3;
	/* as with rxe: the window's key is the new one; the application's
	 * next bind names it */
	if (st == IBV_WC_SUCCESS)
		mw->rkey = rkey;
	return st;
}

/* roxe_bind_mw() of a type 1 window on b's QP; its completion's status. */
static int bind1(struct pair *p, struct ibv_mw *mw, struct roxe_mr *mr, uint64_t addr,
		 uint64_t len, unsigned access)
{
	struct side *b = &p->s[1];
	struct ibv_mw_bind bind = { .wr_id = 66, .send_flags = IBV_SEND_SIGNALED };
	uint32_t old = mw->rkey;
	struct ibv_wc wc;
	int err, st;

	bind.bind_info.mr = mr ? roxe_mr_ibv(mr) : NULL;
	bind.bind_info.addr = addr;
	bind.bind_info.length = len;
	bind.bind_info.mw_access_flags = access;
	err = roxe_bind_mw(b->qp, mw, &bind);
	if (err)
		return err;
	st = one_wc(b, &wc);
	if (st >= 0 && (wc.wr_id != 66 || wc.opcode != IBV_WC_BIND_MW))
		return -3;
	/* as with rxe's provider: the application undoes the key's step */
	if (st != IBV_WC_SUCCESS)
		mw->rkey = old;
	return st;
}

static uint64_t va(const void *p)
{
	return (uintptr_t)p;
}

TEST_F(mw, device_reports_windows)
{
	struct ibv_device_attr da;

	ASSERT_EQ(0, roxe_query_device(self->p.s[1].dev, &da));
	EXPECT_EQ(4096, da.max_mw);
	EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_TRUE(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
}

TEST_F(mw, type1_write_read_through_window_only)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint8_t *win = self->w + 4096;
	struct ibv_mw *mw;
	uint32_t key0;

	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_1, &mw));
	EXPECT_EQ(IBV_MW_TYPE_1, mw->type);
	key0 = mw->rkey;
	/* an unbound window grants nothing */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_WRITE, va(win), key0, 16));
	ASSERT_EQ(0, reconnect(&self->p));

	ASSERT_EQ(IBV_WC_SUCCESS, bind1(&self->p, mw, self->wmr, va(win), 8192,
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	/* the 8-bit key moved on, the index stayed */
	EXPECT_EQ((key0 & ~0xffu) | ((key0 + 1) & 0xff), mw->rkey);
	/* WRITE through the window, READ it back */
	fill_pattern(a->buf, 8192, 3);
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_WRITE, va(win), mw->rkey, 8192));
	EXPECT_EQ(0, memcmp(win, a->buf, 8192));
	memset(a->buf, 0, 8192);
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_READ, va(win) + 100, mw->rkey,
					 8000));
	EXPECT_EQ(0, memcmp(win + 100, a->buf, 8000));
	/* the MR has windows bound: no dereg (rxe: EINVAL) */
	EXPECT_EQ(-EINVAL, roxe_dereg_mr(self->wmr));

	/* outside the window, though inside its MR: refused, nothing lands */
	memset(self->w, 0xee, 4096);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  remote(&self->p, IBV_WR_RDMA_WRITE, va(win) - 8, mw->rkey, 16));
	EXPECT_EQ(0xee, self->w[4095]);
	ASSERT_EQ(0, reconnect(&self->p));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  remote(&self->p, IBV_WR_RDMA_READ, va(win) + 8192 - 8, mw->rkey, 16));
	ASSERT_EQ(0, reconnect(&self->p));
	/* the old key names nothing any more */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_READ, va(win), key0, 16));
	ASSERT_EQ(0, reconnect(&self->p));
	/* no atomic right granted */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, fetch_add(&self->p, va(win), mw->rkey, 1));
	ASSERT_EQ(0, reconnect(&self->p));

	/* a type 1 window is any QP's of the PD: the new QPs reach it */
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_READ, va(win), mw->rkey, 64));
	/* unbind: length 0, no MR; access fails, the MR may go */
	ASSERT_EQ(IBV_WC_SUCCESS, bind1(&self->p, mw, NULL, 0, 0, 0));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_READ, va(win), mw->rkey, 64));
	/* type 1 windows are not invalidated (rxe: LOC_QP_OP_ERR) */
	ASSERT_EQ(0, reconnect(&self->p));
	{
		struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = mw->rkey,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		ASSERT_EQ(0, roxe_post_send(b->qp, &wr, &bad));
		EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, one_wc(b, &wc));
		EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
	}
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

TEST_F(mw, type2_bound_to_its_qp_and_invalidated)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint8_t *win = self->w + 16384;
	struct roxe_qp *a2, *b2;
	struct ibv_mw *mw;
	uint32_t key;
	uint64_t *ctr = (uint64_t *)(win + 64);

	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_2, &mw));
	key = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(win), 4096,
					  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					  IBV_ACCESS_REMOTE_ATOMIC));
	fill_pattern(a->buf, 4096, 9);
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_WRITE, va(win), key, 4096));
	EXPECT_EQ(0, memcmp(win, a->buf, 4096));
	*ctr = 40;
	ASSERT_EQ(IBV_WC_SUCCESS, fetch_add(&self->p, va(ctr), key, 2));
	EXPECT_EQ(40, *(uint64_t *)a->buf);
	EXPECT_EQ(42, *ctr);

	/* another QP of the same PD: the window is not its */
	ASSERT_EQ(0, qp_create(a, IBV_QPT_RC, &a2));
	ASSERT_EQ(0, qp_create(b, IBV_QPT_RC, &b2));
	ASSERT_EQ(0, qp_connect(a2, b->dev, roxe_qp_num(b2), IBV_QPT_RC, IBV_MTU_1024, 1, 2,
				14, 7, 7));
	ASSERT_EQ(0, qp_connect(b2, a->dev, roxe_qp_num(a2), IBV_QPT_RC, IBV_MTU_1024, 2, 1,
				14, 7, 7));
	ASSERT_EQ(0, post_send1(a2, IBV_WR_RDMA_READ, 8, a->buf, 64, a->mr->lkey, va(win), key,
				IBV_SEND_SIGNALED));
	{
		struct ibv_wc wc;

		EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, one_wc(a, &wc));
	}
	roxe_destroy_qp(a2);
	roxe_destroy_qp(b2);

	/* bound already: a second bind is refused (o10-37.2.30) */
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_wr(&self->p, mw, ibv_inc_rkey(key), self->wmr,
					      va(win), 4096, IBV_ACCESS_REMOTE_READ));
	/* the QP that failed is destroyed: its window is free again */
	ASSERT_EQ(0, reconnect(&self->p));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_READ, va(win), key, 64));
	ASSERT_EQ(0, reconnect(&self->p));

	/* LOCAL_INV frees it */
	key = ibv_inc_rkey(key);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(win), 4096,
					  IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_READ, va(win), key, 64));
	{
		struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = key,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		ASSERT_EQ(0, roxe_post_send(b->qp, &wr, &bad));
		EXPECT_EQ(IBV_WC_SUCCESS, one_wc(b, &wc));
		EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
		/* twice: it names no bound window now */
		ASSERT_EQ(0, roxe_post_send(b->qp, &wr, &bad));
		EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, one_wc(b, &wc));
	}
	ASSERT_EQ(0, reconnect(&self->p));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_READ, va(win), key, 64));
	ASSERT_EQ(0, reconnect(&self->p));

	/* the peer's SEND_WITH_INV frees it (remote invalidation) */
	key = ibv_inc_rkey(key);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(win), 4096,
					  IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, post_recv1(b->qp, 77, b->buf, 4096, b->mr->lkey));
	{
		struct ibv_sge sge = { va(a->buf), 32, a->mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = key,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;

		ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
		EXPECT_EQ(IBV_WC_SUCCESS, one_wc(a, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, one_wc(b, &wc));
		EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
		EXPECT_EQ(key, wc.invalidated_rkey);
	}
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_WRITE, va(win), key, 64));
	ASSERT_EQ(0, reconnect(&self->p));
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

TEST_F(mw, type2_zero_based)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint8_t *win = self->w + 8192;
	struct ibv_mw *mw;
	uint32_t key;

	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_2, &mw));
	key = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(win), 4096,
					  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED));
	fill_pattern(a->buf, 1000, 5);
	ASSERT_EQ(IBV_WC_SUCCESS, remote(&self->p, IBV_WR_RDMA_WRITE, 3000, key, 1000));
	EXPECT_EQ(0, memcmp(win + 3000, a->buf, 1000));
	/* past the window's end */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_WRITE, 4000, key, 200));
	ASSERT_EQ(0, reconnect(&self->p));
	/* no READ right */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, remote(&self->p, IBV_WR_RDMA_READ, 0, key, 8));
	ASSERT_EQ(0, reconnect(&self->p));
	/* dealloc while bound is allowed; the MR is free to go */
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

/*
 * An atomic whose wire address is aligned but whose host word is not (a
 * zero-based window 4 bytes into the MR): refused as rxe refuses it
 * (invalid request), never run as a split-lock atomic in the engine.
 */
TEST_F(mw, atomic_misaligned_in_host_is_refused)
{
	struct ibv_mw *mw;
	uint32_t key;
	uint64_t before;

	ASSERT_EQ(0, roxe_alloc_mw(self->p.s[1].pd, IBV_MW_TYPE_2, &mw));
	key = ibv_inc_rkey(mw->rkey);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(self->w) + 4, 64,
					  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED));
	memcpy(&before, self->w + 4, sizeof(before));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, fetch_add(&self->p, 0, key, 1));
	EXPECT_EQ(0, memcmp(&before, self->w + 4, sizeof(before)));
	ASSERT_EQ(0, reconnect(&self->p));
	/* the same window at an aligned host word works */
	key = ibv_inc_rkey(key);
	ASSERT_EQ(IBV_WC_SUCCESS, bind_wr(&self->p, mw, key, self->wmr, va(self->w) + 8, 64,
					  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED));
	EXPECT_EQ(IBV_WC_SUCCESS, fetch_add(&self->p, 0, key, 1));
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

/* Every bind rxe refuses: IBV_WC_MW_BIND_ERR, the QP stops, nothing bound. */
TEST_F(mw, bind_refusals)
{
	struct side *b = &self->p.s[1];
	uint64_t w = va(self->w);
	struct roxe_mr *nobind, *ro;
	struct roxe_pd *pd2;
	struct ibv_mw *m1, *m2, *other;
	uint32_t key;

	ASSERT_EQ(0, roxe_reg_mr(b->pd, self->w, WLEN, IBV_ACCESS_LOCAL_WRITE, &nobind));
	ASSERT_EQ(0, roxe_reg_mr(b->pd, self->w, WLEN, IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_MW_BIND, &ro));
	ASSERT_EQ(0, roxe_alloc_pd(b->dev, &pd2));
	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_1, &m1));
	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_2, &m2));
	ASSERT_EQ(0, roxe_alloc_mw(pd2, IBV_MW_TYPE_2, &other));
	key = ibv_inc_rkey(m2->rkey);

	/* the API's own refusals (libibverbs', rxe provider's): not posted */
	{
		struct ibv_mw_bind bind = { .bind_info = { .mr = roxe_mr_ibv(self->wmr),
			.addr = w, .length = 64, .mw_access_flags = IBV_ACCESS_REMOTE_READ } };
		struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW }, *bad;
		struct roxe_qp *ud;

		EXPECT_EQ(-EINVAL, roxe_bind_mw(b->qp, m2, &bind));	/* type 2 */
		bind.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
		EXPECT_EQ(-EINVAL, roxe_bind_mw(b->qp, m1, &bind));	/* zero-based */
		bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		bind.bind_info.mr = NULL;
		EXPECT_EQ(-EINVAL, roxe_bind_mw(b->qp, m1, &bind));	/* length, no MR */
		wr.bind_mw.mw = m2;
		ASSERT_EQ(0, qp_create(b, IBV_QPT_UD, &ud));
		EXPECT_EQ(-EINVAL, roxe_post_send(ud, &wr, &bad));	/* UD QP */
		roxe_destroy_qp(ud);
		wr.bind_mw.mw = NULL;
		EXPECT_EQ(-EINVAL, roxe_post_send(b->qp, &wr, &bad));	/* no window */
	}

#define REFUSED(call)							\
	do {								\
		EXPECT_EQ(IBV_WC_MW_BIND_ERR, (call));			\
		ASSERT_EQ(0, reconnect(&self->p));			\
	} while (0)
	/* C10-73: the MR was registered without MW_BIND */
	REFUSED(bind_wr(&self->p, m2, key, nobind, w, 64, IBV_ACCESS_REMOTE_READ));
	REFUSED(bind1(&self->p, m1, nobind, w, 64, IBV_ACCESS_REMOTE_READ));
	/* C10-75: outside the MR, at either end */
	REFUSED(bind_wr(&self->p, m2, key, self->wmr, w - 1, 64, IBV_ACCESS_REMOTE_READ));
	REFUSED(bind_wr(&self->p, m2, key, self->wmr, w + WLEN - 63, 64, IBV_ACCESS_REMOTE_READ));
	REFUSED(bind_wr(&self->p, m2, key, self->wmr, 0, WLEN + 1,
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED));
	REFUSED(bind1(&self->p, m1, self->wmr, w + 4096, WLEN, IBV_ACCESS_REMOTE_READ));
	/* C10-74: a writable window over an MR without local write */
	REFUSED(bind_wr(&self->p, m2, key, ro, w, 64, IBV_ACCESS_REMOTE_WRITE));
	REFUSED(bind_wr(&self->p, m2, key, ro, w, 64, IBV_ACCESS_REMOTE_ATOMIC));
	/* o10-37.2.40: a type 2 window bound to no MR or zero bytes */
	REFUSED(bind_wr(&self->p, m2, key, NULL, 0, 0, IBV_ACCESS_REMOTE_READ));
	REFUSED(bind_wr(&self->p, m2, key, self->wmr, w, 0, IBV_ACCESS_REMOTE_READ));
	/* C10-72: a type 2 window of another PD than the QP's */
	REFUSED(bind_wr(&self->p, other, ibv_inc_rkey(other->rkey), self->wmr, w, 64,
			IBV_ACCESS_REMOTE_READ));
	/* o10-36.2.2: a zero-based type 1 window (a raw WR: roxe_bind_mw refuses it) */
	REFUSED(bind_wr(&self->p, m1, ibv_inc_rkey(m1->rkey), self->wmr, w, 64,
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED));
	/* access flags a window cannot have */
	REFUSED(bind_wr(&self->p, m2, key, self->wmr, w, 64, IBV_ACCESS_REMOTE_READ | (1u << 20)));
	/* a stale window key: the WR names the key before the last bind */
	{
		uint32_t old = m1->rkey;

		ASSERT_EQ(IBV_WC_SUCCESS, bind1(&self->p, m1, self->wmr, w, 64,
						IBV_ACCESS_REMOTE_READ));
		m1->rkey = old;
		REFUSED(bind1(&self->p, m1, self->wmr, w, 64, IBV_ACCESS_REMOTE_READ));
		m1->rkey = ibv_inc_rkey(old);
		ASSERT_EQ(IBV_WC_SUCCESS, bind1(&self->p, m1, NULL, 0, 0, 0));
	}
	/* a window key that names no window */
	{
		struct ibv_mw fake = *m2;

		fake.rkey = ((ROXE_MW_INDEX_BASE + ROXE_MAX_MW - 1) << 8) | 1;
		REFUSED(bind_wr(&self->p, &fake, 5, self->wmr, w, 64, IBV_ACCESS_REMOTE_READ));
		fake.rkey = self->wmr->lkey;	/* an MR's key */
		REFUSED(bind_wr(&self->p, &fake, 5, self->wmr, w, 64, IBV_ACCESS_REMOTE_READ));
	}
	/* an MR of another PD than the window's */
	{
		struct roxe_mr *mr2;

		ASSERT_EQ(0, roxe_reg_mr(pd2, self->w, WLEN, IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_MW_BIND, &mr2));
		REFUSED(bind1(&self->p, m1, mr2, w, 64, IBV_ACCESS_REMOTE_READ));
		EXPECT_EQ(0, roxe_dereg_mr(mr2));
	}
#undef REFUSED
	/* nothing was bound: every MR may go */
	EXPECT_EQ(0, roxe_dealloc_mw(m1));
	EXPECT_EQ(0, roxe_dealloc_mw(m2));
	EXPECT_EQ(0, roxe_dealloc_mw(other));
	EXPECT_EQ(0, roxe_dereg_mr(nobind));
	EXPECT_EQ(0, roxe_dereg_mr(ro));
	EXPECT_EQ(0, roxe_dealloc_pd(pd2));
}

/*
 * C10-72 for type 1 windows too: a QP of one PD cannot bind, widen or
 * unbind a window of another PD, even over that PD's own MR (another
 * tenant's window: its keys are guessable). rxe checks type 2 only.
 */
TEST_F(mw, type1_bind_from_another_pd)
{
	struct side *b = &self->p.s[1];
	uint64_t w = va(self->w);
	struct roxe_pd *pd2;
	struct roxe_mr *mr2;
	struct ibv_mw *o1;

	ASSERT_EQ(0, roxe_alloc_pd(b->dev, &pd2));
	ASSERT_EQ(0, roxe_reg_mr(pd2, self->w, WLEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_MW_BIND, &mr2));
	ASSERT_EQ(0, roxe_alloc_mw(pd2, IBV_MW_TYPE_1, &o1));
	/* b's QP binds pd2's window over pd2's MR, writable from the wire */
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_wr(&self->p, o1, ibv_inc_rkey(o1->rkey), mr2, w, 64,
					      IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, reconnect(&self->p));
	/* nor the unbind of it */
	EXPECT_EQ(IBV_WC_MW_BIND_ERR, bind_wr(&self->p, o1, ibv_inc_rkey(o1->rkey), NULL, 0, 0, 0));
	ASSERT_EQ(0, reconnect(&self->p));
	/* nothing was bound: the MR goes, the window and the PD too */
	EXPECT_EQ(0, roxe_dereg_mr(mr2));
	EXPECT_EQ(0, roxe_dealloc_mw(o1));
	EXPECT_EQ(0, roxe_dealloc_pd(pd2));
}

TEST_F(mw, alloc_refusals_and_pd_use)
{
	struct side *b = &self->p.s[1];
	struct ibv_mw *mw;

	EXPECT_EQ(-EINVAL, roxe_alloc_mw(b->pd, (enum ibv_mw_type)3, &mw));
	EXPECT_EQ(-EINVAL, roxe_alloc_mw(NULL, IBV_MW_TYPE_1, &mw));
	EXPECT_EQ(-EINVAL, roxe_dealloc_mw(NULL));
	ASSERT_EQ(0, roxe_alloc_mw(b->pd, IBV_MW_TYPE_2, &mw));
	/* the window uses its PD; no two windows share a key */
	{
		struct roxe_pd *pd2;
		struct ibv_mw *w2;

		ASSERT_EQ(0, roxe_alloc_pd(b->dev, &pd2));
		ASSERT_EQ(0, roxe_alloc_mw(pd2, IBV_MW_TYPE_1, &w2));
		EXPECT_EQ(-EBUSY, roxe_dealloc_pd(pd2));
		EXPECT_NE(mw->rkey >> 8, w2->rkey >> 8);
		EXPECT_EQ(0, roxe_dealloc_mw(w2));
		EXPECT_EQ(0, roxe_dealloc_pd(pd2));
	}
	EXPECT_EQ(0, roxe_dealloc_mw(mw));
}

TEST_HARNESS_MAIN
