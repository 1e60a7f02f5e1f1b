// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every error the verbs API and the RC transport report, provoked on
 * purpose: bad arguments and attribute masks, retry and RNR exhaustion,
 * remote access and invalid request NAKs, local protection errors, CQ
 * overrun, flushes, and teardown with work in flight.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <sched.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "core/core.h"
#include "transport/completer.h"
#include "vclock.h"

#define BUF (1u << 20)

static enum ibv_qp_state qp_state(struct roxe_qp *qp)
{
	struct ibv_qp_attr a;

	roxe_query_qp(qp, &a, IBV_QP_STATE, NULL);
	return a.qp_state;
}

static struct roxe_qp_stats *qstats(struct side *s)
{
	return &s->dev->qp_stats[roxe_qp_num(s->qp)];
}

FIXTURE(err) {
	struct pair p;
};

/* On the virtual clock: the ACK timer (timeout 10, 4 ms; retry_cnt 2)
 * and the RNR wait (10 us; rnr_retry 2) fire only when a case moves the
 * clock, so a NAK's error is the NAK's however slow the host, and retry
 * exhaustion takes exactly its expiries. */
FIXTURE_SETUP(err)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 10, 20, 10, 2, 2));
}

FIXTURE_TEARDOWN(err)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(err, retry_exceeded_then_flush)
{
	struct side *a = &self->p.s[0];
	struct roxe_loop_faults all = { .drop_ppm = 1000000 };
	struct ibv_wc wc[4];
	uint64_t t0 = vc_now();
	unsigned steps = 0;

	roxe_loop_set_faults(self->p.wire, 0, &all);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, (uint64_t)i, a->buf, 64, a->mr->lkey,
					(uintptr_t)self->p.s[1].buf, self->p.s[1].mr->rkey,
					IBV_SEND_SIGNALED));
	/* retry_cnt 2: the third expiry gives up, each the configured timeout
	 * (nothing ever acknowledged: no estimate). A fourth step is allowed
	 * so that a QP that gives up late fails on the count, not the poll. */
	ASSERT_EQ(3, vc_poll(&self->p, a->cq, wc, 3, 4, &steps));
	EXPECT_EQ(3u, steps);
	EXPECT_EQ(3 * a->qp->timeout_ns, vc_now() - t0);
	EXPECT_EQ(3u, qstats(a)->timeouts);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc[0].status);
	EXPECT_EQ(0u, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[2].status);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(a->qp));
	/* Posting in ERR is allowed and flushes at once. */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 9, a->buf, 1, a->mr->lkey, 0, 0, 0));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[0].status);
	EXPECT_EQ(9u, wc[0].wr_id);
}

TEST_F(err, rnr_retry_exceeded)
{
	struct side *a = &self->p.s[0];
	struct ibv_wc wc;
	uint64_t t0 = vc_now();
	unsigned steps = 0;

	/* No receive posted at b, rnr_retry 2: an RNR NAK and a wait of the
	 * peer's RNR timer (min_rnr_timer 1: 10 us), twice; the third NAK
	 * fails the SEND. One step more allowed, as above. */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, a->buf, 100, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 3, &steps));
	EXPECT_EQ(IBV_WC_RNR_RETRY_EXC_ERR, wc.status);
	EXPECT_EQ(2u, steps);
	EXPECT_EQ(2 * roxe_rnr_timer_ns(1), vc_now() - t0);
	EXPECT_EQ(3u, qstats(a)->rnr_nak_rcvd);
	EXPECT_EQ(3u, qstats(&self->p.s[1])->rnr_nak_sent);
	EXPECT_EQ(0u, qstats(a)->timeouts);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(a->qp));
}

TEST_F(err, remote_access_errors)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	/* Wrong rkey */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 64, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey ^ 0x100, IBV_SEND_SIGNALED));
	/* No step of the clock: the NAK, not a timer, ends the WRITE. */
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(a->qp));
	/* The responder's QP went to error too (class C), without a completion
	 * (no receive WQE was involved): once the pair is settled, b's engine
	 * has moved it. */
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(IBV_QPS_ERR, qp_state(b->qp));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
}

TEST_F(err, read_past_the_region)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_READ, 1, a->buf, 4096, a->mr->lkey,
				(uintptr_t)b->buf + BUF - 100, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
}

TEST_F(err, misaligned_atomic)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_sge sge = { (uintptr_t)a->buf, 8, a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.atomic.remote_addr = (uintptr_t)b->buf + 4;
	wr.wr.atomic.rkey = b->mr->rkey;
	ASSERT_EQ(0, roxe_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
}

TEST_F(err, send_longer_than_receive_buffer)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv1(b->qp, 5, b->buf, 1000, b->mr->lkey));
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, a->buf, 3000, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, wc.status);
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(5u, wc.wr_id);
}

TEST_F(err, local_protection)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv1(b->qp, 5, b->buf, 1000, b->mr->lkey));
	/* An lkey that names no MR. */
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 1, a->buf, 100, a->mr->lkey + 0x100, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, vc_poll(&self->p, a->cq, &wc, 1, 0, NULL));
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc.status);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(a->qp));
}

TEST_F(err, flush_on_error_state)
{
	struct side *b = &self->p.s[1];
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[8];

	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, post_recv1(b->qp, 100 + (uint64_t)i, b->buf, 64, b->mr->lkey));
	ASSERT_EQ(0, roxe_modify_qp(b->qp, &attr, IBV_QP_STATE));
	ASSERT_EQ(5, vc_poll(&self->p, b->cq, wc, 5, 0, NULL));
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[i].status);
		EXPECT_EQ(100u + (uint64_t)i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
	}
	/* And back through RESET, usable again. */
	attr.qp_state = IBV_QPS_RESET;
	ASSERT_EQ(0, roxe_modify_qp(b->qp, &attr, IBV_QP_STATE));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(b->qp));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 8, wc));
}

TEST_F(err, teardown_with_work_in_flight)
{
	struct side *a = &self->p.s[0];
	struct roxe_loop_faults all = { .drop_ppm = 1000000 };

	roxe_loop_set_faults(self->p.wire, 0, &all);
	for (int i = 0; i < 50; i++)
		ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, (uint64_t)i, a->buf, 20000,
					a->mr->lkey, (uintptr_t)self->p.s[1].buf,
					self->p.s[1].mr->rkey, IBV_SEND_SIGNALED));
	/* Destroyed mid-flight: must neither hang nor leak (ASan/LSan). */
	ASSERT_EQ(0, roxe_destroy_qp(a->qp));
	a->qp = NULL;
}

FIXTURE(api) {
	struct pair p;
	struct roxe_qp *qp;
};

/* On the virtual clock too: cq_overrun_is_reported's WRITEs are
 * acknowledged, never retransmitted, and a settled pair has made every
 * completion it will. */
FIXTURE_SETUP(api)
{
	vc_start();
	ASSERT_EQ(0, pair_open(&self->p, 1024, BUF));
	ASSERT_EQ(0, qp_create(&self->p.s[0], IBV_QPT_RC, &self->qp));
}

FIXTURE_TEARDOWN(api)
{
	if (self->qp)
		roxe_destroy_qp(self->qp);
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

TEST_F(api, modify_qp_masks)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	/* RESET -> RTR skips INIT. */
	a.qp_state = IBV_QPS_RTR;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE));
	/* INIT without the required port. */
	a.qp_state = IBV_QPS_INIT;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_ACCESS_FLAGS));
	/* INIT with an attribute not allowed there (SQ PSN). */
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN));
	/* A port that does not exist. */
	a.port_num = 2;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(IBV_QPS_RESET, qp_state(self->qp));
	a.port_num = 1;
	EXPECT_EQ(0, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(self->qp));
	/* RTR without the path. */
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	/* A path MTU above the device's (1024). */
	a.path_mtu = IBV_MTU_4096;
	a.ah_attr.is_global = 1;
	roxe_query_gid(self->p.s[1].dev, 0, &a.ah_attr.grh.dgid);
	EXPECT_EQ(-EINVAL, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_AV |
					  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	EXPECT_EQ(IBV_QPS_INIT, qp_state(self->qp));
}

TEST_F(api, post_errors)
{
	struct side *s = &self->p.s[0];
	struct ibv_sge sge[8];
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { .sg_list = sge, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	for (int i = 0; i < 8; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)s->buf, 8, s->mr->lkey };
	/* Sends are refused before RTS; receives before INIT. */
	EXPECT_EQ(-EINVAL, roxe_post_send(self->qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	EXPECT_EQ(-EINVAL, roxe_post_recv(self->qp, &rwr, &rbad));
	ASSERT_EQ(0, roxe_modify_qp(self->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	/* Too many SGEs (the QP was created with 4). */
	rwr.num_sge = 8;
	EXPECT_EQ(-EINVAL, roxe_post_recv(self->qp, &rwr, &rbad));
	rwr.num_sge = 1;
	/* The receive queue fills up: -ENOMEM at the first that does not fit. */
	for (int i = 0; i < 1024; i++)
		ASSERT_EQ(0, roxe_post_recv(self->qp, &rwr, &rbad));
	for (int i = 0; i < 4096; i++) {
		int r = roxe_post_recv(self->qp, &rwr, &rbad);

		if (r) {
			EXPECT_EQ(-ENOMEM, r);
			break;
		}
	}
	/* Busy resources refuse to go. */
	EXPECT_EQ(-EBUSY, roxe_dealloc_pd(s->pd));
	EXPECT_EQ(-EBUSY, roxe_destroy_cq(s->cq));
	/* MR arguments. */
	struct roxe_mr *mr;
	EXPECT_EQ(-EINVAL, roxe_reg_mr(s->pd, s->buf, 4096, IBV_ACCESS_REMOTE_WRITE, &mr));
	EXPECT_EQ(-EINVAL, roxe_reg_mr(s->pd, s->buf, 4096, 0x80000, &mr));
}

TEST_F(api, cq_overrun_is_reported)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct roxe_cq *small;
	struct roxe_qp *qa, *qb;
	struct roxe_qp_init_attr ia = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct roxe_async_event ev;
	struct ibv_wc wc[8];
	int r;

	ASSERT_EQ(0, roxe_create_cq(a->dev, 1, NULL, NULL, &small));
	ia.send_cq = ia.recv_cq = small;
	ASSERT_EQ(0, roxe_create_qp(a->pd, &ia, &qa));
	ASSERT_EQ(0, qp_create(b, IBV_QPT_RC, &qb));
	ASSERT_EQ(0, qp_connect(qa, b->dev, roxe_qp_num(qb), IBV_QPT_RC, IBV_MTU_1024, 1, 2,
				14, 7, 7));
	ASSERT_EQ(0, qp_connect(qb, a->dev, roxe_qp_num(qa), IBV_QPT_RC, IBV_MTU_1024, 2, 1,
				14, 7, 7));
	/* A CQ of one entry, four signalled WRITEs, nobody polling. */
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, post_send1(qa, IBV_WR_RDMA_WRITE, (uint64_t)i, a->buf, 8, a->mr->lkey,
					(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	/* All four completions made once the pair is settled: the first
	 * fitted, the other three found the CQ full (the first of them queued
	 * the event). */
	ASSERT_EQ(0, vc_settle(&self->p));
	EXPECT_EQ(3u, atomic_load(&small->lost));
	r = roxe_poll_cq(small, 8, wc);
	EXPECT_EQ(1, r);		/* what fitted */
	EXPECT_EQ(-EOVERFLOW, roxe_poll_cq(small, 8, wc));
	EXPECT_EQ(0, roxe_poll_cq(small, 8, wc));	/* reported once */
	ASSERT_EQ(0, roxe_get_async_event(a->dev, &ev));
	EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.type);
	EXPECT_EQ(small, ev.element.cq);
	EXPECT_EQ(-EAGAIN, roxe_get_async_event(a->dev, &ev));	/* once here too */
	roxe_destroy_qp(qa);
	roxe_destroy_qp(qb);
	roxe_destroy_cq(small);
}

/* Threads of this process at SCHED_FIFO priority prio (/proc: policy and
 * rt_priority, the 40th and 41st fields of a task's stat). */
static int fifo_threads(unsigned prio)
{
	char path[300], line[1024];
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		FILE *f;
		char *p;
		unsigned rt, pol;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		/* after "(comm)": state is field 3; rt_priority 40, policy 41 */
		for (int field = 3; p && field <= 40; field++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p, " %u %u", &rt, &pol) == 2 && pol == SCHED_FIFO && rt == prio)
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* roxe_device_attr.rt_priority: engine threads created at SCHED_FIFO; out
 * of range or on a polled device, -EINVAL. */
TEST(rt_priority)
{
	struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_port *port;
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .engines = 1, .mtu = 1024 };
	struct roxe_device *dev;
	int err;

	ASSERT_NE(NULL, w);
	port = roxe_loop_port(w, 0);
	da.ports = &port;
	roxe_gid_from_v4(da.gid, htonl(0x0a630001));
	da.rt_priority = 100;
	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	da.rt_priority = 7;
	da.polled = true;
	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	da.polled = false;
	err = roxe_device_open(&da, &dev);
	if (err == -EPERM) {
		roxe_loop_wire_free(w);
		SKIP(return, "SCHED_FIFO not allowed here (CAP_SYS_NICE)");
	}
	ASSERT_EQ(0, err);
	EXPECT_EQ(1, fifo_threads(7));
	roxe_device_close(dev);
	EXPECT_EQ(0, fifo_threads(7));
	roxe_loop_wire_free(w);
}

/* Allocations while alloc_counting, in the thread that counts (ASan's
 * malloc hook; declared here: GCC ships no allocator_interface.h). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));
static __thread bool alloc_counting;
static __thread unsigned alloc_count;

static void count_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	if (alloc_counting)
		alloc_count++;
}

static void ignore_free(const volatile void *p)
{
	(void)p;	/* the hooks come in pairs */
}

static int open_counting(const struct roxe_device_attr *da, unsigned *allocs)
{
	struct roxe_device *dev = NULL;
	int err;

	alloc_count = 0;
	alloc_counting = true;
	err = roxe_device_open(da, &dev);
	alloc_counting = false;
	*allocs = alloc_count;
	if (!err)
		roxe_device_close(dev);
	return err;
}

/* Every check on the attr comes before anything exists: a refused attr
 * (rt_priority among them) fails with -EINVAL having allocated nothing,
 * and before the interface is looked up (-ENODEV once came first). */
TEST(bad_attr_allocates_nothing)
{
	struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .engines = 1, .mtu = 1024 };
	struct roxe_device_attr ua = { .backend = ROXE_BACKEND_UDP, .ifname = "roxe-none0",
				       .rt_priority = 100 };
	struct roxe_port *port, *none = NULL;
	unsigned allocs;

	ASSERT_NE(NULL, w);
	ASSERT_NE(0, __sanitizer_install_malloc_and_free_hooks(count_malloc, ignore_free));
	port = roxe_loop_port(w, 0);
	da.ports = &port;
	roxe_gid_from_v4(da.gid, htonl(0x0a630001));
	for (int i = 0; i < 7; i++) {
		struct roxe_device_attr bad = da;

		switch (i) {
		case 0: bad.rt_priority = 100; break;
		case 1: bad.rt_priority = 7, bad.polled = true; break;
		case 2: bad.mtu = 1000; break;
		case 3: bad.cnp_interval_us = ROXE_CNP_INTERVAL_MAX_US + 1; break;
		case 4: bad.cc = "no_such_setting=1"; break;
		case 5: bad.ports = &none; break;
		case 6: bad.backend = (enum roxe_backend)7; break;
		}
		EXPECT_EQ(-EINVAL, open_counting(&bad, &allocs)) TH_LOG("case %d", i);
		EXPECT_EQ(0, allocs) TH_LOG("case %d", i);
	}
	EXPECT_EQ(-EINVAL, open_counting(&ua, &allocs));
	roxe_loop_wire_free(w);
	EXPECT_EQ(0, leak_check());
}

TEST_HARNESS_MAIN
