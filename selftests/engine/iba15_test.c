// SPDX-License-Identifier: GPL-2.0-only
/*
 * IBA 1.5's ATOMIC WRITE and FLUSH over RC, as kernel rxe (Linux 6.2+)
 * speaks them: the requester's packets, the responder's checks and
 * answers, the completions. Both directions; every refusal rxe's responder
 * makes, with the status its NAK gives the requester; a lost response
 * answered again from the responder's resource without executing twice;
 * the post-time checks of the embedded API.
 */
#include <arpa/inet.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "vclock.h"

#define BUF	(1u << 20)

static enum ibv_qp_state qp_state(struct roxe_qp *qp)
{
	struct ibv_qp_attr a;

	roxe_query_qp(qp, &a, IBV_QP_STATE, NULL);
	return a.qp_state;
}

/* Add (or set) the QP's access flags, in RTS. */
static int qp_access(struct roxe_qp *qp, unsigned flags)
{
	struct ibv_qp_attr a = { .qp_access_flags = flags };

	return roxe_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS);
}

static int post_atomic_write(struct roxe_qp *qp, uint64_t id, const void *value,
			     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)value, 8, 0 };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = ROXE_WR_ATOMIC_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return roxe_post_send(qp, &wr, &bad);
}

static int post_flush(struct roxe_qp *qp, uint64_t id, uint64_t raddr, uint32_t len,
		      uint32_t rkey, uint8_t type, uint8_t level)
{
	struct ibv_send_wr wr = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED }, *bad;

	roxe_wr_flush(&wr, rkey, raddr, len, type, level);
	return roxe_post_send(qp, &wr, &bad);
}

FIXTURE(iba15) {
	struct pair p;
	struct roxe_mr *fmr;		/* b's buffer again, open to FLUSH */
};

FIXTURE_VARIANT(iba15) {
	unsigned polled;		/* pair_open_polled's bits */
};
FIXTURE_VARIANT_ADD(iba15, threads) { .polled = 0 };
/* b polled: the test runs its turns, so it can drop b's answers meanwhile */
FIXTURE_VARIANT_ADD(iba15, b_polled) { .polled = 2 };

FIXTURE_SETUP(iba15)
{
	struct side *b = &self->p.s[1];

	/* On the virtual clock: a lost answer is asked for again when the
	 * test moves time to a's timer (timeout 14, 67 ms), never because
	 * the host was slow, and the retries cannot run out meanwhile. */
	vc_start();
	ASSERT_EQ(0, pair_open_polled(&self->p, 1024, BUF, variant->polled));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 14, 7, 0));
	ASSERT_EQ(0, roxe_reg_mr(b->pd, b->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | ROXE_ACCESS_FLUSH_GLOBAL, &self->fmr));
	/* pair_connect opened the QPs to WRITE, READ and ATOMIC: FLUSH too */
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, qp_access(self->p.s[i].qp, IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				       ROXE_ACCESS_FLUSH_GLOBAL));
}

FIXTURE_TEARDOWN(iba15)
{
	if (self->fmr)
		roxe_dereg_mr(self->fmr);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* One completion of side from's, once the pair is settled (b's turns run
 * here when b is polled), the clock moved to the next deadline at most
 * steps times (vclock.h's vc_poll). */
static int wait1(struct pair *p, int from, struct ibv_wc *wc, unsigned steps)
{
	return vc_poll(p, p->s[from].cq, wc, 1, steps, NULL);
}

TEST_F(iba15, atomic_write_both_ways)
{
	const uint64_t v0 = 0x1122334455667788ull, v1 = 0x8877665544332211ull;
	struct ibv_wc wc;

	for (int from = 0; from < 2; from++) {
		struct side *a = &self->p.s[from], *b = &self->p.s[!from];
		uint64_t v = from ? v1 : v0;
		uint8_t *target = b->buf + 4096 + 8 * from;

		memset(target, 0xee, 8);
		ASSERT_EQ(0, post_atomic_write(a->qp, 10 + from, &v, (uintptr_t)target,
					       b->mr->rkey));
		v = 0;	/* copied when posted */
		ASSERT_EQ(1, wait1(&self->p, from, &wc, 0));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
		EXPECT_EQ(ROXE_WC_ATOMIC_WRITE, wc.opcode);
		EXPECT_EQ(10u + from, wc.wr_id);
		EXPECT_EQ(8u, wc.byte_len);
		EXPECT_EQ(0, memcmp(target, from ? &v1 : &v0, 8));
	}
}

/* A WRITE, then an ATOMIC WRITE flagging it done: whoever sees the flag
 * sees the data (the flag's store is ordered after it). */
TEST_F(iba15, atomic_write_after_write)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	const uint64_t flag = 1;
	struct ibv_wc wc;

	fill_pattern(a->buf, 65536, 9);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 65536, a->mr->lkey,
				(uintptr_t)b->buf + 8192, b->mr->rkey, 0));
	ASSERT_EQ(0, post_atomic_write(a->qp, 2, &flag, (uintptr_t)b->buf, b->mr->rkey));
	ASSERT_EQ(1, wait1(&self->p, 0, &wc, 0));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2u, wc.wr_id);
	EXPECT_EQ(1u, __atomic_load_n((uint64_t *)b->buf, __ATOMIC_ACQUIRE));
	EXPECT_EQ(0, memcmp(b->buf + 8192, a->buf, 65536));
}

TEST_F(iba15, flush_range_and_mr)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	fill_pattern(a->buf, 10000, 3);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 10000, a->mr->lkey,
				(uintptr_t)b->buf + 100, self->fmr->rkey, 0));
	ASSERT_EQ(0, post_flush(a->qp, 2, (uintptr_t)b->buf + 100, 10000, self->fmr->rkey,
				ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
	ASSERT_EQ(1, wait1(&self->p, 0, &wc, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	EXPECT_EQ(ROXE_WC_FLUSH, wc.opcode);
	EXPECT_EQ(2u, wc.wr_id);
	EXPECT_EQ(0, memcmp(b->buf + 100, a->buf, 10000));
	/* The whole MR: no range is checked, an address outside it is fine. */
	ASSERT_EQ(0, post_flush(a->qp, 3, 1, 0, self->fmr->rkey, ROXE_FLUSH_GLOBAL,
				ROXE_FLUSH_MR));
	ASSERT_EQ(1, wait1(&self->p, 0, &wc, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	EXPECT_EQ(ROXE_WC_FLUSH, wc.opcode);
	/* and from b to a, whose MR a registers for it now */
	{
		struct roxe_mr *amr;

		ASSERT_EQ(0, roxe_reg_mr(a->pd, a->buf, BUF, ROXE_ACCESS_FLUSH_GLOBAL, &amr));
		ASSERT_NE(0u, amr->rkey);
		ASSERT_EQ(0, post_flush(b->qp, 4, (uintptr_t)a->buf, BUF, amr->rkey,
					ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
		ASSERT_EQ(1, wait1(&self->p, 1, &wc, 0));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(ROXE_WC_FLUSH, wc.opcode);
		EXPECT_EQ(4u, wc.wr_id);
		EXPECT_EQ(0, roxe_dereg_mr(amr));
	}
}

/* What rxe's responder refuses, and the status its NAK gives. */
struct refusal {
	const char	*what;
	enum ibv_wc_status want;
};

static void expect_refused(struct __test_metadata *_metadata, struct pair *p,
			   const struct refusal *r)
{
	struct ibv_wc wc;

	ASSERT_EQ(1, wait1(p, 0, &wc, 0)) TH_LOG("%s", r->what);
	EXPECT_EQ(r->want, wc.status) TH_LOG("%s: %s", r->what, roxe_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(p->s[0].qp)) TH_LOG("%s", r->what);
	/* class C: the responder's QP goes to error too */
	ASSERT_EQ(0, vc_settle(p));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(p->s[1].qp)) TH_LOG("%s", r->what);
}

TEST_F(iba15, atomic_write_bad_rkey)
{
	uint64_t v = 7;

	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v, (uintptr_t)self->p.s[1].buf,
				       self->p.s[1].mr->rkey ^ 0x100));
	expect_refused(_metadata, &self->p, &(struct refusal){ "bad rkey", IBV_WC_REM_ACCESS_ERR });
}

TEST_F(iba15, atomic_write_mr_without_remote_write)
{
	struct side *b = &self->p.s[1];
	struct roxe_mr *ro;
	uint64_t v = 7;

	ASSERT_EQ(0, roxe_reg_mr(b->pd, b->buf, 4096, IBV_ACCESS_REMOTE_READ, &ro));
	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v, (uintptr_t)b->buf, ro->rkey));
	expect_refused(_metadata, &self->p, &(struct refusal){ "read-only MR",
							       IBV_WC_REM_ACCESS_ERR });
	EXPECT_EQ(0u, *(uint64_t *)b->buf);
	roxe_dereg_mr(ro);
}

/* Atomic access is not what ATOMIC WRITE needs (rxe: remote write). */
TEST_F(iba15, atomic_write_needs_write_not_atomic)
{
	struct side *b = &self->p.s[1];
	struct roxe_mr *at;
	uint64_t v = 7;
	struct ibv_wc wc;

	ASSERT_EQ(0, roxe_reg_mr(b->pd, b->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE, &at));
	ASSERT_EQ(0, qp_access(b->qp, IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v, (uintptr_t)b->buf + 8, at->rkey));
	ASSERT_EQ(1, wait1(&self->p, 0, &wc, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(7u, *(uint64_t *)(b->buf + 8));
	roxe_dereg_mr(at);
}

TEST_F(iba15, atomic_write_qp_without_remote_write)
{
	uint64_t v = 7;

	ASSERT_EQ(0, qp_access(self->p.s[1].qp, IBV_ACCESS_REMOTE_READ));
	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v, (uintptr_t)self->p.s[1].buf,
				       self->p.s[1].mr->rkey));
	expect_refused(_metadata, &self->p, &(struct refusal){ "QP without remote write",
							       IBV_WC_REM_INV_REQ_ERR });
}

TEST_F(iba15, atomic_write_misaligned)
{
	uint64_t v = 7;

	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v, (uintptr_t)self->p.s[1].buf + 4,
				       self->p.s[1].mr->rkey));
	expect_refused(_metadata, &self->p, &(struct refusal){ "misaligned",
							       IBV_WC_REM_INV_REQ_ERR });
	EXPECT_EQ(0u, *(uint64_t *)self->p.s[1].buf);
	EXPECT_EQ(0u, *(uint64_t *)(self->p.s[1].buf + 8));
}

TEST_F(iba15, atomic_write_past_the_region)
{
	uint64_t v = 7;

	ASSERT_EQ(0, post_atomic_write(self->p.s[0].qp, 1, &v,
				       (uintptr_t)self->p.s[1].buf + BUF - 4,
				       self->p.s[1].mr->rkey));
	expect_refused(_metadata, &self->p, &(struct refusal){ "past the MR",
							       IBV_WC_REM_ACCESS_ERR });
}

/* pair's own MR was registered without FLUSH access */
TEST_F(iba15, flush_mr_without_flush_access)
{
	ASSERT_EQ(0, post_flush(self->p.s[0].qp, 1, (uintptr_t)self->p.s[1].buf, 64,
				self->p.s[1].mr->rkey, ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
	expect_refused(_metadata, &self->p, &(struct refusal){ "MR without flush access",
							       IBV_WC_REM_ACCESS_ERR });
}

TEST_F(iba15, flush_qp_without_flush_access)
{
	ASSERT_EQ(0, qp_access(self->p.s[1].qp, IBV_ACCESS_REMOTE_WRITE));
	ASSERT_EQ(0, post_flush(self->p.s[0].qp, 1, (uintptr_t)self->p.s[1].buf, 64,
				self->fmr->rkey, ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
	expect_refused(_metadata, &self->p, &(struct refusal){ "QP without flush access",
							       IBV_WC_REM_INV_REQ_ERR });
}

TEST_F(iba15, flush_range_past_the_region)
{
	ASSERT_EQ(0, post_flush(self->p.s[0].qp, 1, (uintptr_t)self->p.s[1].buf + BUF - 64, 128,
				self->fmr->rkey, ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
	expect_refused(_metadata, &self->p, &(struct refusal){ "range past the MR",
							       IBV_WC_REM_ACCESS_ERR });
}

/* No roxe MR is persistent memory: such an MR cannot be registered (rxe on
 * DRAM: -EINVAL), so a persistence FLUSH finds no MR allowing it. */
TEST_F(iba15, flush_persistent)
{
	struct side *b = &self->p.s[1];
	struct roxe_mr *pm = NULL;

	EXPECT_EQ(-EINVAL, roxe_reg_mr(b->pd, b->buf, 4096, ROXE_ACCESS_FLUSH_PERSISTENT, &pm));
	ASSERT_EQ(0, qp_access(b->qp, ROXE_ACCESS_FLUSH_GLOBAL | ROXE_ACCESS_FLUSH_PERSISTENT));
	ASSERT_EQ(0, post_flush(self->p.s[0].qp, 1, (uintptr_t)b->buf, 64, self->fmr->rkey,
				ROXE_FLUSH_PERSISTENT, ROXE_FLUSH_RANGE));
	expect_refused(_metadata, &self->p, &(struct refusal){ "persistent",
							       IBV_WC_REM_ACCESS_ERR });
}

/*
 * b executes an ATOMIC WRITE and a FLUSH, but their answers are lost: a
 * asks again, and b answers from its resources without writing again (the
 * value b's application stored meanwhile stays).
 */
TEST_F(iba15, lost_answers_replayed)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_loop_faults drop = { .drop_ppm = 1000000 }, none = { 0 };
	uint64_t v = 0xabcdef0123456789ull;
	struct ibv_wc wc[2];

	if (!variant->polled)
		SKIP(return, "needs b's turns in the test's hands");
	roxe_loop_set_faults(self->p.wire, 1, &drop);
	ASSERT_EQ(0, post_atomic_write(a->qp, 1, &v, (uintptr_t)b->buf + 64, b->mr->rkey));
	ASSERT_EQ(0, post_flush(a->qp, 2, (uintptr_t)b->buf, 4096, self->fmr->rkey,
				ROXE_FLUSH_GLOBAL, ROXE_FLUSH_RANGE));
	/* b executed both, the FLUSH too; both answers dropped */
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_EQ(v, *(volatile uint64_t *)(b->buf + 64));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 2, wc));
	/* b's application changes the word; b's turns are ours: no sender now */
	__atomic_store_n((uint64_t *)(b->buf + 64), 5, __ATOMIC_RELEASE);
	roxe_loop_set_faults(self->p.wire, 1, &none);
	/* one step of the clock: a's timer, which asks again */
	ASSERT_EQ(1, wait1(&self->p, 0, &wc[0], 1));
	if (wc[0].wr_id == 1) {
		ASSERT_EQ(1, wait1(&self->p, 0, &wc[1], 0));
	} else {
		wc[1] = wc[0];
	}
	EXPECT_EQ(1u, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("%s", roxe_wc_status_str(wc[0].status));
	EXPECT_EQ(ROXE_WC_ATOMIC_WRITE, wc[0].opcode);
	EXPECT_EQ(2u, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc[1].status) TH_LOG("%s", roxe_wc_status_str(wc[1].status));
	EXPECT_EQ(ROXE_WC_FLUSH, wc[1].opcode);
	EXPECT_EQ(5u, *(volatile uint64_t *)(b->buf + 64));	/* not written twice */
}

/* The embedded API refuses at post time what cannot be sent. */
TEST_F(iba15, post_checks)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint8_t twelve[12] = { 0 };
	struct ibv_sge sge = { (uintptr_t)twelve, 12, 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = ROXE_WR_ATOMIC_WRITE },
			   *bad;
	struct roxe_qp *uc;

	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = b->mr->rkey;
	EXPECT_EQ(-EINVAL, roxe_post_send(a->qp, &wr, &bad));	/* 12 bytes, not 8 */
	roxe_wr_flush(&wr, self->fmr->rkey, (uintptr_t)b->buf, 64, ROXE_FLUSH_GLOBAL,
		      ROXE_FLUSH_RANGE);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	EXPECT_EQ(-EINVAL, roxe_post_send(a->qp, &wr, &bad));	/* FLUSH takes no data */
	/* RC only */
	ASSERT_EQ(0, qp_create(a, IBV_QPT_UC, &uc));
	ASSERT_EQ(0, qp_connect(uc, b->dev, roxe_qp_num(b->qp), IBV_QPT_UC, IBV_MTU_1024, 1, 1,
				0, 0, 0));
	roxe_wr_flush(&wr, self->fmr->rkey, (uintptr_t)b->buf, 64, ROXE_FLUSH_GLOBAL,
		      ROXE_FLUSH_RANGE);
	EXPECT_EQ(-EINVAL, roxe_post_send(uc, &wr, &bad));
	sge.length = 8;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = ROXE_WR_ATOMIC_WRITE;
	EXPECT_EQ(-EINVAL, roxe_post_send(uc, &wr, &bad));
	roxe_destroy_qp(uc);
}

TEST_HARNESS_MAIN
