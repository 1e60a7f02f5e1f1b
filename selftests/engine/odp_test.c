// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine and roxe.ko's on-demand paging MRs (core/odp.c): a page not
 * present raises SIGBUS in the engine while the module faults it in, one
 * the application does not map SIGSEGV. Here a file mapping stands in for
 * the module: its pages past the file's end raise SIGBUS until the case
 * extends the file ("the page came"), and a PROT_NONE page raises SIGSEGV.
 * Each case checks what waits, what an RNR NAK answers, that every byte
 * lands once the page comes, that an unmapped page is an access error (as
 * rxe answers), and that the other QPs of the engine go on meanwhile. On
 * the virtual clock: the waits (the RNR timer, ROXE_ODP_RETRY_NS) pass
 * only when a case moves it.
 */
#include <arpa/inet.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "core/core.h"
#include "transport/transport.h"
#include "vclock.h"

#define BUF	(1u << 20)
#define PG	4096u
#define PAGES	16u

/* An ODP MR of side s over PAGES pages of a file of size 0: every page
 * raises SIGBUS until paged_come() extends the file. */
struct paged {
	int		fd;
	uint8_t		*p;
	struct roxe_mr	*mr;
};

static int paged_open(struct side *s, struct paged *pg)
{
	int err;

	pg->fd = memfd_create("odp_test", 0);
	if (pg->fd < 0)
		return -errno;
	pg->p = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_SHARED, pg->fd, 0);
	if (pg->p == MAP_FAILED)
		return -errno;
	err = roxe_odp_init();
	if (!err)
		err = roxe_reg_mr(s->pd, pg->p, PAGES * PG,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
				  IBV_ACCESS_ON_DEMAND, &pg->mr);
	/* as roxe_served_mr_add() marks roxe.ko's: before any engine uses it */
	if (!err)
		((struct roxe_mr_priv *)pg->mr)->odp = true;
	return err;
}

/* The pages before byte end come (the module faulted them in). */
static int paged_come(struct paged *pg, size_t end)
{
	return ftruncate(pg->fd, (off_t)end) ? -errno : 0;
}

static void paged_close(struct paged *pg)
{
	if (pg->mr)
		roxe_dereg_mr(pg->mr);
	if (pg->p && pg->p != MAP_FAILED)
		munmap(pg->p, PAGES * PG);
	if (pg->fd > 0)
		close(pg->fd);
}

static struct roxe_qp_stats *qstats(struct side *s)
{
	return &s->dev->qp_stats[roxe_qp_num(s->qp)];
}

FIXTURE(odp) {
	struct pair p;
	struct paged pg[2];	/* side i's */
};

/* rnr_retry 7: a page waited for does not fail the QP however long it
 * takes; retry_cnt 7, timeout 14 (67 ms): no case here reaches it. */
FIXTURE_SETUP(odp)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 14, 7, 7));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, paged_open(&self->p.s[i], &self->pg[i]));
}

FIXTURE_TEARDOWN(odp)
{
	for (int i = 0; i < 2; i++)
		paged_close(&self->pg[i]);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* The peer's WRITE into pages not present: RNR NAKs (the pair's RNR timer,
 * 10 us) for as long as they are absent, nothing fails; once they come,
 * the retry lands every byte. */
TEST_F(odp, write_into_pages_not_present_waits_for_them)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[1];
	uint32_t len = 3 * PG + 100;
	struct ibv_wc wc;

	fill_pattern(a->buf, len, 1);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, len, a->mr->lkey,
				(uintptr_t)pg->p + 50, pg->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	for (int i = 0; i < 3; i++)
		ASSERT_NE(0u, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	EXPECT_EQ(4u, qstats(b)->rnr_nak_sent);
	EXPECT_EQ(4u, qstats(a)->rnr_nak_rcvd);
	ASSERT_EQ(0, paged_come(pg, PAGES * PG));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 2, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	EXPECT_EQ(0, memcmp(pg->p + 50, a->buf, len));
	EXPECT_EQ(0, pg->p[49]);
	EXPECT_EQ(0, pg->p[50 + len]);
	EXPECT_EQ(0u, qstats(a)->timeouts);
}

/* Pages come one at a time: the WRITE goes as far as they do, each RNR
 * NAK at the packet that needs the next one (the first round one; each
 * later round two: the packets behind the NAKed one were kept in the
 * stash, whose run after the resend NAKs it, and then the resend of it
 * comes), and the bytes before it have landed. */
TEST_F(odp, write_follows_pages_as_they_come)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[1];
	uint32_t len = 4 * PG;
	struct ibv_wc wc;

	fill_pattern(a->buf, len, 2);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, len, a->mr->lkey,
				(uintptr_t)pg->p, pg->mr->rkey, IBV_SEND_SIGNALED));
	for (uint32_t n = 1; n <= 4; n++) {
		ASSERT_EQ(0, vc_settle(&self->p));
		EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
		EXPECT_EQ(2 * n - 1, qstats(b)->rnr_nak_sent);
		EXPECT_EQ(0, memcmp(pg->p, a->buf, (n - 1) * PG)) TH_LOG("page %u", n);
		ASSERT_EQ(0, paged_come(pg, n * PG));
		if (n < 4)
			ASSERT_NE(0u, vc_step(&self->p));
	}
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(pg->p, a->buf, len));
}

/* A SEND into a receive buffer not present: RNR NAK, the receive WQE kept;
 * the page comes, the message lands whole in that WQE. */
TEST_F(odp, send_into_a_receive_buffer_not_present)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[1];
	struct ibv_wc wc;

	fill_pattern(a->buf, 2000, 3);
	ASSERT_EQ(0, post_recv1(b->qp, 7, pg->p + PG, 2000, pg->mr->lkey));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, a->buf, 2000, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(1u, qstats(b)->rnr_nak_sent);
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	ASSERT_EQ(0, paged_come(pg, 2 * PG));
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(7u, wc.wr_id);
	EXPECT_EQ(2000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(pg->p + PG, a->buf, 2000));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

/* The peer READs pages not present: no NAK (a READ is answered or not),
 * the response waits (ROXE_ODP_RETRY_NS, then twice that) and goes once
 * they come. */
TEST_F(odp, read_of_pages_not_present_waits)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[1];
	uint32_t len = 2 * PG;
	struct ibv_wc wc;
	uint64_t t0;

	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, a->buf, len, a->mr->lkey,
				(uintptr_t)pg->p, pg->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	t0 = vc_now();
	EXPECT_EQ(ROXE_ODP_RETRY_NS, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	EXPECT_EQ(0u, qstats(b)->rnr_nak_sent);
	ASSERT_EQ(0, paged_come(pg, len));
	fill_pattern(pg->p, len, 4);
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	/* the second miss in a row waited twice as long */
	EXPECT_EQ(t0 + 3 * ROXE_ODP_RETRY_NS, vc_now());
	EXPECT_EQ(0, memcmp(a->buf, pg->p, len));
}

/* The requester's own SEND from pages not present: nothing leaves until
 * they come (the QP waits, no error, no retry spent), then the message
 * goes whole. */
TEST_F(odp, send_from_pages_not_present_waits)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[0];
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 3000, b->mr->lkey));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 2, pg->p + PG - 2000, 3000, pg->mr->lkey,
				0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(ROXE_ODP_RETRY_NS, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	EXPECT_EQ(0u, qstats(a)->retransmits);
	EXPECT_EQ(0u, qstats(b)->rnr_nak_sent);
	ASSERT_EQ(0, paged_come(pg, PG));
	fill_pattern(pg->p, PG, 5);
	/* the first packet (1024 bytes, 2000 before the page's end) is in
	 * the page that came (after the second miss's wait, twice the
	 * first); the second reaches the next page: waits */
	EXPECT_EQ(2 * ROXE_ODP_RETRY_NS, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	ASSERT_EQ(0, paged_come(pg, PAGES * PG));
	fill_pattern(pg->p + PG, PG, 6);
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(b->buf, pg->p + PG - 2000, 3000));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0u, qstats(a)->timeouts);
}

/* A READ into local pages not present: the response is dropped and asked
 * for again after the wait; its bytes land once the pages come. */
TEST_F(odp, read_into_pages_not_present_waits)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[0];
	uint32_t len = 3 * PG;
	struct ibv_wc wc;

	fill_pattern(b->buf, len, 7);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, pg->p, len, pg->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	ASSERT_NE(0u, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	ASSERT_EQ(0, paged_come(pg, PAGES * PG));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 2, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	EXPECT_EQ(0, memcmp(pg->p, b->buf, len));
}

/* Atomics: on a remote page not present, RNR NAK and nothing done; the
 * page comes, the add is done once. The result into a local page not
 * present: asked again (a duplicate, answered from the result, not done
 * twice). */
TEST_F(odp, atomics_on_and_into_pages_not_present)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *rpg = &self->pg[1], *lpg = &self->pg[0];
	struct ibv_sge sge = { (uintptr_t)lpg->p + 8, 8, lpg->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint64_t v;

	wr.wr.atomic.remote_addr = (uintptr_t)rpg->p + 16;
	wr.wr.atomic.rkey = rpg->mr->rkey;
	wr.wr.atomic.compare_add = 5;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(1u, qstats(b)->rnr_nak_sent);
	ASSERT_EQ(0, paged_come(rpg, PG));
	v = 100;
	memcpy(rpg->p + 16, &v, 8);
	/* the remote add is done; its result waits for the local page */
	ASSERT_NE(0u, vc_step(&self->p));
	ASSERT_NE(0u, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(a->cq, 1, &wc));
	ASSERT_EQ(0, paged_come(lpg, PG));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 2, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
	memcpy(&v, lpg->p + 8, 8);
	EXPECT_EQ(100u, v);
	memcpy(&v, rpg->p + 16, 8);
	EXPECT_EQ(105u, v);	/* once */
}

/* A page the application does not map (PROT_NONE here; the module's
 * SIGSEGV) is an access error, as rxe answers: the peer's WRITE gets a
 * remote access error, the QP's own SEND from it a local protection
 * error. */
TEST_F(odp, unmapped_page_is_an_access_error)
{
	struct side *a = &self->p.s[0];
	struct paged *pg = &self->pg[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, paged_come(pg, PAGES * PG));
	ASSERT_EQ(0, mprotect(pg->p + 2 * PG, PG, PROT_NONE));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 2 * PG, a->mr->lkey,
				(uintptr_t)pg->p + PG, pg->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
}

TEST_F(odp, local_unmapped_page_is_a_protection_error)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[0];
	struct ibv_wc wc;

	ASSERT_EQ(0, paged_come(pg, PAGES * PG));
	ASSERT_EQ(0, mprotect(pg->p, PG, PROT_NONE));
	ASSERT_EQ(0, post_recv1(b->qp, 1, b->buf, 100, b->mr->lkey));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, pg->p, 100, pg->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc.status) TH_LOG("%s", roxe_wc_status_str(wc.status));
}

/* One QP waiting for pages holds up no other QP of its engine: a second
 * pair of QPs moves a megabyte while the first WRITE is RNR NAKed, the
 * clock standing still. */
TEST_F(odp, other_qps_go_on_while_one_waits)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct paged *pg = &self->pg[1];
	struct roxe_qp *qa, *qb;
	struct ibv_wc wc;
	uint64_t t0;

	ASSERT_EQ(0, qp_create(a, IBV_QPT_RC, &qa));
	ASSERT_EQ(0, qp_create(b, IBV_QPT_RC, &qb));
	ASSERT_EQ(0, qp_connect(qa, b->dev, roxe_qp_num(qb), IBV_QPT_RC, IBV_MTU_1024, 1, 2,
				14, 7, 7));
	ASSERT_EQ(0, qp_connect(qb, a->dev, roxe_qp_num(qa), IBV_QPT_RC, IBV_MTU_1024, 2, 1,
				14, 7, 7));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, PG, a->mr->lkey,
				(uintptr_t)pg->p, pg->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(1u, qstats(b)->rnr_nak_sent);
	t0 = vc_now();
	fill_pattern(a->buf + PG, BUF / 2, 8);
	ASSERT_EQ(0, post_send1(qa, IBV_WR_RDMA_WRITE, 2, a->buf + PG, BUF / 2, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(2u, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(b->buf, a->buf + PG, BUF / 2));
	EXPECT_EQ(t0, vc_now());
	ASSERT_EQ(0, paged_come(pg, PG));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 1, NULL));
	EXPECT_EQ(1u, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, roxe_destroy_qp(qa));
	EXPECT_EQ(0, roxe_destroy_qp(qb));
}

FIXTURE(odp_ud) {
	struct pair p;
	struct paged pg;	/* side 1's */
	struct ibv_ah *ah;
};

FIXTURE_SETUP(odp_ud)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };

	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	roxe_query_gid(self->p.s[1].dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(self->p.s[0].pd, &aa, &self->ah));
	ASSERT_EQ(0, paged_open(&self->p.s[1], &self->pg));
}

FIXTURE_TEARDOWN(odp_ud)
{
	paged_close(&self->pg);
	roxe_destroy_ah(self->ah);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static int ud_send(FIXTURE_DATA(odp_ud) *s, uint64_t wr_id, uint32_t len)
{
	struct side *a = &s->p.s[0];
	struct ibv_sge sge = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = s->ah;
	wr.wr.ud.remote_qpn = roxe_qp_num(s->p.s[1].qp);
	wr.wr.ud.remote_qkey = 0x11111111;
	return roxe_post_send(a->qp, &wr, &bad);
}

/* A datagram whose receive buffer is not present is held (UD has no RNR)
 * and delivered once the page comes; one that comes meanwhile is dropped,
 * as UD may drop any, so that nothing overtakes the held one. */
TEST_F(odp_ud, datagram_waits_for_its_receive_buffer)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc[2];

	fill_pattern(a->buf, 1000, 9);
	ASSERT_EQ(0, post_recv1(b->qp, 1, self->pg.p, 40 + 1000, self->pg.mr->lkey));
	ASSERT_EQ(0, post_recv1(b->qp, 2, b->buf, 40 + 1000, b->mr->lkey));
	ASSERT_EQ(0, ud_send(self, 1, 1000));
	ASSERT_EQ(0, ud_send(self, 2, 1000));
	ASSERT_EQ(2, vc_poll(&self->p, a->cq, wc, 2, 0, NULL));
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(ROXE_ODP_RETRY_NS, vc_step(&self->p));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, wc));
	ASSERT_EQ(0, paged_come(&self->pg, PG));
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, wc, 1, 1, NULL));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(1u, wc[0].wr_id);
	EXPECT_EQ(1040u, wc[0].byte_len);
	EXPECT_EQ(0, memcmp(self->pg.p + 40, a->buf, 1000));
	ASSERT_EQ(0, vc_advance(&self->p, ROXE_ODP_HOLD_NS));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, wc));	/* the second was dropped */
}

/* A page that never comes: tried again at waits that double up to 3.2 ms
 * (one touch per 3.2 ms, not per 50 us, for a page the application keeps
 * away), the datagram dropped at the first try past ROXE_ODP_HOLD_NS, its
 * receive WQE kept for the next. */
TEST_F(odp_ud, datagram_dropped_when_the_page_never_comes)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint64_t t0, most = ROXE_ODP_RETRY_NS << ROXE_ODP_BACKOFF;
	unsigned tries = 0;
	struct ibv_wc wc[2];

	ASSERT_EQ(0, post_recv1(b->qp, 1, self->pg.p, 40 + 1000, self->pg.mr->lkey));
	ASSERT_EQ(0, ud_send(self, 1, 1000));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, wc, 1, 0, NULL));
	ASSERT_EQ(0, vc_settle(&self->p));
	t0 = vc_now();
	while (vc_step(&self->p))
		ASSERT_GT(2 * ROXE_ODP_HOLD_NS / most, ++tries);
	/* the waits doubled up to 3.2 ms: 7 tries in the first 6.35 ms, then
	 * one per 3.2 ms, until the first past the hold dropped it */
	EXPECT_EQ(7 + (ROXE_ODP_HOLD_NS - 127 * ROXE_ODP_RETRY_NS + most - 1) / most, tries);
	EXPECT_LE(t0 + ROXE_ODP_HOLD_NS, vc_now());
	EXPECT_GT(t0 + ROXE_ODP_HOLD_NS + most, vc_now());
	EXPECT_EQ(0, vc_next_deadline(&self->p));	/* nothing waits any more */
	ASSERT_EQ(0, paged_come(&self->pg, PG));
	fill_pattern(a->buf, 1000, 10);
	ASSERT_EQ(0, ud_send(self, 2, 1000));
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, wc, 1, 0, NULL));
	EXPECT_EQ(1u, wc[0].wr_id);
	EXPECT_EQ(0, memcmp(self->pg.p + 40, a->buf, 1000));
}

TEST_HARNESS_MAIN
