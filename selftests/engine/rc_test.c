// SPDX-License-Identifier: GPL-2.0-only
/*
 * RC transport over the loop backend: every operation with data checked
 * byte for byte, message sizes around the MTU, PSN wrap.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <sys/mman.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/wake.h"
#include "vclock.h"

#define BUF (4u << 20)

FIXTURE(rc) {
	struct pair p;
};

FIXTURE_VARIANT(rc) {
	enum ibv_mtu mtu;
	uint32_t psn0, psn1;
};

FIXTURE_VARIANT_ADD(rc, mtu1024) { .mtu = IBV_MTU_1024, .psn0 = 100, .psn1 = 5000 };
FIXTURE_VARIANT_ADD(rc, mtu256_wrap) { .mtu = IBV_MTU_256, .psn0 = 0xfffff0, .psn1 = 0xffffe0 };
FIXTURE_VARIANT_ADD(rc, mtu4096) { .mtu = IBV_MTU_4096, .psn0 = 7, .psn1 = 0x7ffff0 };

/* On the virtual clock: nothing here is lost, so nothing needs a timer,
 * and none fires behind a case's back; "only this completes" is read off
 * a settled pair. */
FIXTURE_SETUP(rc)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 4096, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, variant->mtu, variant->psn0,
				  variant->psn1, 14, 7, 7));
}

FIXTURE_TEARDOWN(rc)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

static const uint32_t sizes[] = { 0, 1, 3, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097,
				  65536, 1u << 20 };

TEST_F(rc, send_sizes)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc[2];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		fill_pattern(a->buf, len, (uint32_t)i);
		memset(b->buf, 0xee, len + 16);
		ASSERT_EQ(0, post_recv1(b->qp, 1000 + i, b->buf, len + 16, b->mr->lkey));
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, i, a->buf, len, a->mr->lkey, 0, 0,
					IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(b->cq, wc, 1, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status) TH_LOG("len %u: %s", len,
							       roxe_wc_status_str(wc[0].status));
		EXPECT_EQ(IBV_WC_RECV, wc[0].opcode);
		EXPECT_EQ(1000 + i, wc[0].wr_id);
		EXPECT_EQ(len, wc[0].byte_len);
		EXPECT_EQ(0, memcmp(a->buf, b->buf, len)) TH_LOG("len %u", len);
		EXPECT_EQ(0xee, b->buf[len]);		/* nothing past the message */
		ASSERT_EQ(1, poll_n(a->cq, wc, 1, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(IBV_WC_SEND, wc[0].opcode);
		EXPECT_EQ(i, wc[0].wr_id);
	}
}

TEST_F(rc, write_and_read)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];
		uint8_t *dst = b->buf + 8192, *back = a->buf + BUF / 2;

		fill_pattern(a->buf, len, (uint32_t)i + 77);
		memset(dst, 0, len + 8);
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, len, a->mr->lkey,
					(uintptr_t)dst, b->mr->rkey, IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("write %u: %s", len,
							    roxe_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		EXPECT_EQ(0, memcmp(a->buf, dst, len));
		EXPECT_EQ(0, dst[len]);

		/* Read it back into another place. */
		memset(back, 0, len + 8);
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 2, back, len, a->mr->lkey,
					(uintptr_t)dst, b->mr->rkey, IBV_SEND_SIGNALED));
		ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("read %u: %s", len,
							    roxe_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_EQ(0, memcmp(a->buf, back, len)) TH_LOG("read %u", len);
		EXPECT_EQ(0, back[len]);
	}
}

/* The pages of [mem, mem + len) in memory now (mincore); -1 on error. */
static int resident_pages(void *mem, size_t len)
{
	unsigned char v[256];
	int n = 0;

	if (len / 4096 > sizeof(v) || mincore(mem, len, v))
		return -1;
	for (size_t i = 0; i < len / 4096; i++)
		n += v[i] & 1;
	return n;
}

/* An ON_DEMAND MR of the embedded API over pages nobody has touched yet
 * (mincore: none resident): the engine faults them in as the WRITE lands,
 * and a READ takes them out again. The MR keeps the flag. */
TEST_F(rc, on_demand_mr_over_untouched_pages)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	const size_t len = 256 * 1024;
	struct roxe_mr *odp;
	struct ibv_wc wc;
	uint8_t *mem;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, resident_pages(mem, len));
	ASSERT_EQ(0, roxe_reg_mr(b->pd, mem, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND, &odp));
	EXPECT_TRUE(odp->access & IBV_ACCESS_ON_DEMAND);
	ASSERT_EQ(0, resident_pages(mem, len)) TH_LOG("pages resident after the registration");
	fill_pattern(a->buf, len - 100, 31);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, len - 100, a->mr->lkey,
				(uintptr_t)mem + 100, odp->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, mem + 100, len - 100));
	memset(a->buf + BUF / 2, 0, len);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 2, a->buf + BUF / 2, len, a->mr->lkey,
				(uintptr_t)mem, odp->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(mem, a->buf + BUF / 2, len));
	EXPECT_EQ(0, roxe_dereg_mr(odp));
	munmap(mem, len);
}

TEST_F(rc, write_with_imm_and_send_with_imm)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_sge sge = { (uintptr_t)a->buf, 5000, a->mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;

	fill_pattern(a->buf, 5000, 9);
	ASSERT_EQ(0, post_recv1(b->qp, 7, b->buf, 16, b->mr->lkey));
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(0xabcdef01);
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 4096;
	wr.wr.rdma.rkey = b->mr->rkey;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0xabcdef01), wc.imm_data);
	EXPECT_EQ(5000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 4096, 5000));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);

	ASSERT_EQ(0, post_recv1(b->qp, 8, b->buf, 8192, b->mr->lkey));
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(42);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(42), wc.imm_data);
	EXPECT_EQ(5000u, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 5000));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
}

TEST_F(rc, inline_multi_sge_unsignalled)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_sge sge[3] = {
		{ (uintptr_t)a->buf, 10, a->mr->lkey },
		{ (uintptr_t)a->buf + 100, 20, a->mr->lkey },
		{ (uintptr_t)a->buf + 1000, 30, a->mr->lkey },
	};
	struct ibv_sge rsge[2] = {
		{ (uintptr_t)b->buf, 25, b->mr->lkey },
		{ (uintptr_t)b->buf + 500, 100, b->mr->lkey },
	};
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = rsge, .num_sge = 2 }, *rbad;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc[4];
	uint8_t want[60];

	fill_pattern(a->buf, 2000, 3);
	memcpy(want, a->buf, 10);
	memcpy(want + 10, a->buf + 100, 20);
	memcpy(want + 30, a->buf + 1000, 30);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, roxe_post_recv(b->qp, &rwr, &rbad));
		wr.wr_id = 10 + i;
		wr.sg_list = sge;
		wr.num_sge = 3;
		wr.opcode = IBV_WR_SEND;
		/* first: inline and unsignalled; second: gathered, signalled */
		wr.send_flags = i == 0 ? IBV_SEND_INLINE : IBV_SEND_SIGNALED;
		ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
		if (i == 0)	/* inline data is copied at post time */
			memset(a->buf, 0x55, 10);
		ASSERT_EQ(1, poll_n(b->cq, wc, 1, 5000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(60u, wc[0].byte_len);
		EXPECT_EQ(0, memcmp(b->buf, want, 25));
		EXPECT_EQ(0, memcmp(b->buf + 500, want + 25, 35));
		memcpy(want, a->buf, 10);
	}
	/* Only the signalled send completes. */
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, wc, 2, 0, NULL));
	EXPECT_EQ(11u, wc[0].wr_id);
}

TEST_F(rc, atomics)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint64_t *target = (uint64_t *)(b->buf + 64), *result = (uint64_t *)a->buf;
	struct ibv_sge sge = { (uintptr_t)result, 8, a->mr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;

	*target = 1000;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = b->mr->rkey;
	for (int i = 0; i < 10; i++) {
		wr.wr.atomic.compare_add = 5;
		ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
		ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
		EXPECT_EQ(8u, wc.byte_len);
		EXPECT_EQ(1000u + 5u * i, *result);
	}
	EXPECT_EQ(1050u, *target);

	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1;		/* does not match: no swap */
	wr.wr.atomic.swap = 7;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(1050u, *result);
	EXPECT_EQ(1050u, *target);
	wr.wr.atomic.compare_add = 1050;	/* matches: swapped */
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(1050u, *result);
	EXPECT_EQ(7u, *target);
}

TEST_F(rc, many_in_flight_in_order)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	const int n = 600;
	struct ibv_wc wc[64];
	int got = 0, sent = 0;

	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, post_recv1(b->qp, (uint64_t)i, b->buf + (size_t)i * 4096, 4096,
					b->mr->lkey));
	fill_pattern(a->buf, (size_t)n * 1500, 1);
	while (sent < n) {
		int err = post_send1(a->qp, IBV_WR_SEND, (uint64_t)sent, a->buf + (size_t)sent * 1500,
				     1500, a->mr->lkey, 0, 0, IBV_SEND_SIGNALED);
		if (err == -ENOMEM) {		/* send queue full: drain a little */
			struct ibv_wc w[16];

			poll_n(a->cq, w, 1, 100);
			continue;
		}
		ASSERT_EQ(0, err);
		sent++;
	}
	while (got < n) {
		int r = poll_n(b->cq, wc, 64 < n - got ? 64 : n - got, 5000);

		ASSERT_GT(r, 0);
		for (int i = 0; i < r; i++, got++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
			ASSERT_EQ((uint64_t)got, wc[i].wr_id);	/* in order */
			ASSERT_EQ(0, memcmp(b->buf + (size_t)got * 4096, a->buf + (size_t)got * 1500,
					    1500));
		}
	}
}

/* SEND_WITH_INV and LOCAL_INV invalidate only fast-registration MRs (IBA
 * 10.6.3.5; rxe's rxe_invalidate_mr): naming an ordinary MR is an error and
 * leaves it registered, so a peer cannot revoke an application's memory. */
TEST_F(rc, invalidate_refuses_ordinary_mrs)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_mr *victim, *mine;
	struct ibv_sge sge = { (uintptr_t)a->buf, 100, a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;

	/* b registers a region a may write; a's SEND_WITH_INV names it. */
	ASSERT_EQ(0, roxe_reg_mr(b->pd, b->buf + 65536, 4096,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &victim));
	ASSERT_EQ(0, post_recv1(b->qp, 9, b->buf, 4096, b->mr->lkey));
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = victim->rkey;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_NE(IBV_WC_SUCCESS, wc.status);
	EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_INV);
	/* still registered: found by its rkey, its bytes reachable */
	EXPECT_NE(NULL, roxe_mr_lookup(b->dev, victim->rkey, ROXE_LOOKUP_REMOTE));
	roxe_dereg_mr(victim);

	/* LOCAL_INV of an ordinary MR fails as in rxe (a local QP operation
	 * error that stops the QP); the MR keeps working. */
	pair_close(&self->p);
	ASSERT_EQ(0, pair_open(&self->p, 4096, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, variant->mtu, 1, 2, 14, 7, 7));
	a = &self->p.s[0];
	ASSERT_EQ(0, roxe_reg_mr(a->pd, a->buf, 4096, IBV_ACCESS_LOCAL_WRITE, &mine));
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = mine->lkey;
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status);
	EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
	EXPECT_NE(NULL, roxe_mr_lookup(a->dev, mine->lkey, ROXE_LOOKUP_LOCAL));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 3, a->buf, 10, mine->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	roxe_dereg_mr(mine);

	/* LOCAL_INV of a key that names nothing fails the same way. */
	pair_close(&self->p);
	ASSERT_EQ(0, pair_open(&self->p, 4096, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, variant->mtu, 1, 2, 14, 7, 7));
	a = &self->p.s[0];
	wr.invalidate_rkey = 0xdead00 | 7;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 4, a->buf, 10, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
}

/* roxe_device_attr.trace: a line per frame, handed to the callback as it
 * goes or, with trace_recorder, at the close (the library prints none). */
struct trace_log {
	pthread_mutex_t	lock;
	unsigned	lines, tx, rx, heads;
};

static void trace_count(void *arg, const char *line)
{
	struct trace_log *t = arg;

	pthread_mutex_lock(&t->lock);
	t->lines++;
	t->tx += strstr(line, " tx RC_SEND_ONLY ") != NULL;
	t->rx += strstr(line, " rx RC_SEND_ONLY ") != NULL;
	t->heads += strstr(line, " frames:") != NULL;
	pthread_mutex_unlock(&t->lock);
}

static struct trace_log trace_read(struct trace_log *t)
{
	struct trace_log now;

	pthread_mutex_lock(&t->lock);
	now = *t;
	pthread_mutex_unlock(&t->lock);
	return now;
}

/* One 8-byte SEND between a traced pair; what the trace had before the close in *before. */
static void traced_send(struct __test_metadata *_metadata, bool recorder, struct trace_log *t,
			struct trace_log *before)
{
	struct pair p;
	struct ibv_wc wc;

	memset(&p, 0, sizeof(p));
	p.buf_len = 4096;
	p.wire = roxe_loop_wire_new(4096 + 256, 1024);
	ASSERT_NE(NULL, p.wire);
	p.trace = trace_count;
	p.trace_arg = t;
	p.trace_recorder = recorder;
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pair_side_open(&p, i, roxe_loop_port(p.wire, i), 1024, false));
	ASSERT_EQ(0, pair_connect(&p, IBV_QPT_RC, IBV_MTU_1024, 1, 2, 14, 7, 7));
	ASSERT_EQ(0, post_recv1(p.s[1].qp, 1, p.s[1].buf, 64, p.s[1].mr->lkey));
	ASSERT_EQ(0, post_send1(p.s[0].qp, IBV_WR_SEND, 2, p.s[0].buf, 8, p.s[0].mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(p.s[1].cq, &wc, 1, 5000));
	ASSERT_EQ(1, poll_n(p.s[0].cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	*before = trace_read(t);
	pair_close(&p);
}

TEST(trace_hands_each_frame_over_as_it_goes)
{
	struct trace_log t = { .lock = PTHREAD_MUTEX_INITIALIZER }, before, after;

	traced_send(_metadata, false, &t, &before);
	EXPECT_LE(1, before.tx);	/* (a retransmission under load: more) */
	EXPECT_LE(1, before.rx);
	after = trace_read(&t);
	EXPECT_EQ(0, after.heads);
	EXPECT_LE(4, after.lines);	/* the SEND and its ACK, each sent and taken */
}

TEST(trace_recorder_hands_the_frames_over_at_the_close)
{
	struct trace_log t = { .lock = PTHREAD_MUTEX_INITIALIZER }, before, after;

	traced_send(_metadata, true, &t, &before);
	EXPECT_EQ(0, before.lines);
	after = trace_read(&t);
	EXPECT_EQ(2, after.heads);	/* one per engine, before its frames */
	EXPECT_LE(1, after.tx);
	EXPECT_LE(1, after.rx);
	EXPECT_LE(6, after.lines);
}

/* A wake-up that fails in an engine (here: its eventfd taken away) has no
 * caller to return to: counted, and the device's last error. */
TEST(failed_wakeups_are_counted_and_kept)
{
	struct pair p;
	struct roxe_engine *e;
	uint64_t n = 1;
	int efd;

	ASSERT_EQ(0, pair_open_polled(&p, 1024, 4096, 3));	/* no engine thread reads it */
	EXPECT_EQ(0, roxe_device_last_error(p.s[0].dev, &n));
	EXPECT_EQ(0, n);
	e = &p.s[0].dev->engines[0];
	efd = e->efd;
	e->efd = -1;
	roxe_engine_kick(e);
	roxe_engine_kick(e);
	e->efd = efd;
	EXPECT_EQ(-EBADF, roxe_device_last_error(p.s[0].dev, &n));
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, e->stats->wakeup_errors);
	EXPECT_EQ(0, roxe_device_last_error(p.s[1].dev, NULL));
	pair_close(&p);
	EXPECT_EQ(0, leak_check());
}

/* A fenced WRITE waits for the READ before it: the READ returns the old
 * bytes, never the ones the WRITE brings. */
TEST_F(rc, fence_orders_after_read)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	uint8_t *remote = b->buf + 4096, *back = a->buf + 8192, *news = a->buf;
	struct ibv_wc wc[2];

	for (int round = 0; round < 20; round++) {
		memset(remote, 0x11, 4096);
		memset(news, 0x22, 4096);
		memset(back, 0, 4096);
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, back, 4096, a->mr->lkey,
					(uintptr_t)remote, b->mr->rkey, IBV_SEND_SIGNALED));
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 2, news, 4096, a->mr->lkey,
					(uintptr_t)remote, b->mr->rkey,
					IBV_SEND_SIGNALED | IBV_SEND_FENCE));
		ASSERT_EQ(2, poll_n(a->cq, wc, 2, 5000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(IBV_WC_SUCCESS, wc[1].status);
		for (int i = 0; i < 4096; i++) {
			ASSERT_EQ(0x11, back[i]) TH_LOG("round %d byte %d", round, i);
		}
		for (int i = 0; i < 4096; i++) {
			ASSERT_EQ(0x22, remote[i]);
		}
	}
}

TEST_HARNESS_MAIN
