// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe_kverbs_test.ko: a kernel ULP on roxe0 against kernel rxe, run in the
 * VM guest by kmod_interop.sh. Loading it runs every check and prints one
 * "roxe_kverbs_test: ok: ..." or "FAIL: ..." line each to the kernel log;
 * the load fails (EIO) unless all pass, so nothing stays loaded then.
 *
 *   insmod roxe_kverbs_test.ko [roxe=roxe0] [peer=rxe0]
 *
 * Both devices are used through ib_core's kernel verbs only, with buffers
 * from kmalloc and the PD's local DMA key, as a storage or file ULP would:
 *   - roxe0 is a kernel verbs provider (kverbs_provider);
 *   - RC: SEND with a 3-entry gather list, SEND with immediate into a
 *     2-entry scatter list, RDMA WRITE into rxe's memory, RDMA READ (an
 *     unsignaled one before a signaled one), FETCH_ADD and CMP_SWP;
 *   - RC: 300 messages of 8 KiB each way with 32 in flight (the bounce
 *     rings wrap many times), every byte checked;
 *   - a completion event on an armed CQ, and IB_CQ_REPORT_MISSED_EVENTS;
 *   - UD both ways through kernel AHs (GRH, source QP, network type);
 *   - fast registration: rxe READs and WRITEs roxe's kmalloc memory
 *     through an rkey roxe0 registered with IB_WR_REG_MR; after LOCAL_INV
 *     it is registered over another buffer (rxe sees the new bytes), and
 *     after rxe's SEND_WITH_INV again;
 *   - a kernel SRQ shared by two RC QPs with their own receive CQs,
 *     polled out of order: 288 messages each whole in one receive;
 *   - bad posts refused: unknown local key, too many SGEs, a WRITE on UD;
 *   - a WRITE to a bad rkey ends in a remote access error, and WRs posted
 *     in the error state then complete as flushed (what ib_drain_qp needs);
 *   - ib_drain_rq() of a receive queue kept full returns after all its
 *     receives completed flushed (the core's drain has no room for its own).
 * With frwr_race=N (kmod_races.sh, roxed with two engines) only the
 * invalidation race runs: N rounds of REG_MR and LOCAL_INV or rxe's
 * SEND_WITH_INV of a fast-reg MR while rxe keeps UC WRITEs of 64 KiB going
 * into it through a QP of roxe's other engine; then rxe READs the MR.
 * Every completion is waited for at most 5 seconds.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/scatterlist.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include "ktest.h"

static char *roxe = "roxe0";
module_param(roxe, charp, 0444);
static char *peer = "rxe0";
module_param(peer, charp, 0444);
/* >0: run only the invalidation race (test_frwr_race) for that many rounds */
static unsigned int frwr_race;
module_param(frwr_race, uint, 0444);

#define BUF_BYTES	(256 * 1024)	/* 32 messages of 8 KiB in flight */
#define QKEY		0x11111111

struct end {
	const char *name;
	struct ib_device *dev;
	const struct ib_gid_attr *gid;	/* RoCE v2, IPv4 */
	u8 mac[ETH_ALEN];
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *rc, *ud;
	u8 *buf;			/* kmalloc: ours to send and receive */
	struct completion event;	/* rcq's completion handler */
	int events;
};

static struct end ra = { .name = "roxe" }, pa = { .name = "peer" };

static void comp_handler(struct ib_cq *cq, void *ctx)
{
	struct end *e = ctx;

	e->events++;
	complete(&e->event);
}

static int find_gid(struct end *e)
{
	struct net_device *ndev;
	u32 i;

	for (i = 0; i < e->dev->port_data[1].immutable.gid_tbl_len; i++) {
		const struct ib_gid_attr *a = rdma_get_gid_attr(e->dev, 1, i);

		if (IS_ERR(a))
			continue;
		if (a->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)a->gid.raw)) {
			e->gid = a;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(a);
			if (!IS_ERR(ndev))
				memcpy(e->mac, ndev->dev_addr, ETH_ALEN);
			rcu_read_unlock();
			return 0;
		}
		rdma_put_gid_attr(a);
	}
	return -ENOENT;
}

static struct ib_qp *make_qp(struct end *e, enum ib_qp_type t)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.qp_type = t,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 64, .max_recv_wr = 64,
			.max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64,
		},
	};

	return ib_create_qp(e->pd, &init);
}

static int setup(struct end *e, const char *devname, unsigned int pd_flags)
{
	struct ib_cq_init_attr ca = { .cqe = 512 };

	init_completion(&e->event);
	e->dev = kt_device_get_by_name(devname);
	if (!e->dev)
		return -ENODEV;
	if (find_gid(e))
		return -ENOENT;
	e->buf = kzalloc(BUF_BYTES, GFP_KERNEL);
	if (!e->buf)
		return -ENOMEM;
	e->pd = ib_alloc_pd(e->dev, pd_flags);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->scq = ib_alloc_cq(e->dev, NULL, 512, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->scq))
		return PTR_ERR(e->scq);
	e->rcq = ib_create_cq(e->dev, comp_handler, NULL, e, &ca);
	if (IS_ERR(e->rcq))
		return PTR_ERR(e->rcq);
	e->rc = make_qp(e, IB_QPT_RC);
	if (IS_ERR(e->rc))
		return PTR_ERR(e->rc);
	e->ud = make_qp(e, IB_QPT_UD);
	return PTR_ERR_OR_ZERO(e->ud);
}

static void teardown(struct end *e)
{
	if (!IS_ERR_OR_NULL(e->ud))
		ib_destroy_qp(e->ud);
	if (!IS_ERR_OR_NULL(e->rc))
		ib_destroy_qp(e->rc);
	if (!IS_ERR_OR_NULL(e->rcq))
		ib_destroy_cq(e->rcq);
	if (!IS_ERR_OR_NULL(e->scq))
		ib_free_cq(e->scq);
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	kfree(e->buf);
	if (e->gid)
		rdma_put_gid_attr(e->gid);
	if (e->dev)
		ib_device_put(e->dev);
}

static void av_to(struct rdma_ah_attr *ah, struct end *from, struct end *to)
{
	union ib_gid dgid = to->gid->gid;

	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &dgid, 0, from->gid->index, 64, 0);
	memcpy(ah->roce.dmac, to->mac, ETH_ALEN);
}

/* RESET -> RTS for a's RC QP aq towards b's bq. */
static int rc_connect_qp(struct end *a, struct ib_qp *aq, struct end *b,
			 struct ib_qp *bq)
{
	struct ib_qp_attr at = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	};
	int err;

	err = ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTR;
	at.path_mtu = IB_MTU_1024;
	at.dest_qp_num = bq->qp_num;
	at.rq_psn = 0x1000;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 12;
	av_to(&at.ah_attr, a, b);
	err = ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.sq_psn = 0x1000;
	at.max_rd_atomic = 4;
	return ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int rc_connect(struct end *a, struct end *b)
{
	return rc_connect_qp(a, a->rc, b, b->rc);
}

static int ud_ready(struct end *e)
{
	struct ib_qp_attr at = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .qkey = QKEY,
	};
	int err;

	err = ib_modify_qp(e->ud, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	at.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(e->ud, &at, IB_QP_STATE);
	if (err)
		return err;
	at.qp_state = IB_QPS_RTS;
	at.sq_psn = 0;
	return ib_modify_qp(e->ud, &at, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* One completion from cq, within 5 s (roxed runs in user space: sleep). */
static int poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + 5 * HZ;
	int n;

	while (!(n = ib_poll_cq(cq, 1, wc))) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(20, 100);
	}
	return n < 0 ? n : 0;
}

static struct ib_sge sge(struct end *e, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = (u64)(uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

static int post_recv(struct end *e, struct ib_qp *qp, struct ib_sge *sg,
		     int n, u64 id)
{
	struct ib_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n };

	return ib_post_recv(qp, &wr, NULL);
}

static int post_send(struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

static void test_send(void)
{
	struct ib_sge g[3] = { sge(&ra, 0, 1000), sge(&ra, 5000, 2000),
			       sge(&ra, 9000, 1000) };
	struct ib_sge r = sge(&pa, 0, 8192);
	struct ib_send_wr wr = {
		.wr_id = 0xabc, .opcode = IB_WR_SEND, .sg_list = g, .num_sge = 3,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc, rwc;
	int err;

	fill(ra.buf, 1000, 1);
	fill(ra.buf + 5000, 2000, 2);
	fill(ra.buf + 9000, 1000, 3);
	memset(pa.buf, 0, 8192);
	err = post_recv(&pa, pa.rc, &r, 1, 7);
	if (!err)
		err = post_send(ra.rc, &wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	if (!err)
		err = poll_one(pa.rcq, &rwc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && wc.wr_id == 0xabc &&
	      wc.opcode == IB_WC_SEND && wc.qp == ra.rc,
	      "RC SEND of 3 SGEs (4000 bytes): send completion (err %d, status %d)",
	      err, err ? -1 : wc.status);
	CHECK(!err && rwc.status == IB_WC_SUCCESS && rwc.byte_len == 4000 &&
	      rwc.wr_id == 7 && same(pa.buf, 1000, 1) &&
	      same(pa.buf + 1000, 2000, 2) && same(pa.buf + 3000, 1000, 3),
	      "RC SEND: rxe received the 4000 bytes gathered from 3 SGEs");
}

static void test_recv_imm(void)
{
	struct ib_sge r[2] = { sge(&ra, 20000, 1000), sge(&ra, 30000, 4096) };
	struct ib_sge g = sge(&pa, 0, 3000);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_IMM, .sg_list = &g, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED, .ex.imm_data = cpu_to_be32(0x12345678),
	};
	struct ib_wc wc, rwc;
	int err;

	fill(pa.buf, 3000, 9);
	memset(ra.buf + 20000, 0, 1000);
	memset(ra.buf + 30000, 0, 4096);
	err = post_recv(&ra, ra.rc, r, 2, 0xfeed);
	if (!err)
		err = post_send(pa.rc, &wr);
	if (!err)
		err = poll_one(pa.scq, &wc);
	if (!err)
		err = poll_one(ra.rcq, &rwc);
	CHECK(!err && rwc.status == IB_WC_SUCCESS && rwc.wr_id == 0xfeed &&
	      rwc.opcode == IB_WC_RECV && rwc.byte_len == 3000 &&
	      (rwc.wc_flags & IB_WC_WITH_IMM) &&
	      be32_to_cpu(rwc.ex.imm_data) == 0x12345678 && rwc.qp == ra.rc,
	      "RC SEND with immediate from rxe: receive completion (err %d)", err);
	CHECK(!err && same(ra.buf + 20000, 1000, 9) &&
	      !memcmp(ra.buf + 30000, pa.buf + 1000, 2000),
	      "RC receive: 3000 bytes scattered over 2 SGEs");
}

static void test_write_read(void)
{
	u64 raddr = (u64)(uintptr_t)pa.buf;
	struct ib_sge g = sge(&ra, 0, 10000);
	struct ib_rdma_wr w = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE, .sg_list = &g,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr + 100, .rkey = pa.pd->unsafe_global_rkey,
	};
	struct ib_sge ga[2] = { sge(&ra, 20000, 3000), sge(&ra, 40000, 1000) };
	struct ib_sge gb = sge(&ra, 50000, 5000);
	struct ib_rdma_wr ra1 = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_READ, .sg_list = ga,
			.num_sge = 2 },
		.remote_addr = raddr + 20000, .rkey = pa.pd->unsafe_global_rkey,
	};
	struct ib_rdma_wr ra2 = {
		.wr = { .wr_id = 3, .opcode = IB_WR_RDMA_READ, .sg_list = &gb,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = raddr + 30000, .rkey = pa.pd->unsafe_global_rkey,
	};
	struct ib_wc wc;
	int err;

	fill(ra.buf, 10000, 4);
	memset(pa.buf, 0, 12000);
	err = post_send(ra.rc, &w.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && wc.wr_id == 1 &&
	      wc.opcode == IB_WC_RDMA_WRITE && same(pa.buf + 100, 10000, 4) &&
	      !pa.buf[99] && !pa.buf[10100],
	      "RC RDMA WRITE of 10000 bytes into rxe's kernel memory (err %d)", err);

	fill(pa.buf + 20000, 4000, 5);
	fill(pa.buf + 30000, 5000, 6);
	memset(ra.buf + 20000, 0, 3000);
	memset(ra.buf + 40000, 0, 1000);
	memset(ra.buf + 50000, 0, 5000);
	ra1.wr.next = &ra2.wr;
	err = post_send(ra.rc, &ra1.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && wc.wr_id == 3 &&
	      wc.opcode == IB_WC_RDMA_READ && same(ra.buf + 50000, 5000, 6),
	      "RC RDMA READ of 5000 bytes, signaled (err %d)", err);
	CHECK(!err && !memcmp(ra.buf + 20000, pa.buf + 20000, 3000) &&
	      !memcmp(ra.buf + 40000, pa.buf + 23000, 1000),
	      "RC RDMA READ before it, unsignaled: 4000 bytes over 2 SGEs");
}

/* rxe's global rkey has no atomic access: register the word rxe holds
 * through a fast-registration MR of its own, as a storage target would.
 */
static struct ib_mr *peer_atomic_mr(u64 *word, struct scatterlist *sg)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 99,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_mr *mr;
	struct ib_wc wc;
	int n;

	mr = ib_alloc_mr(pa.pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr))
		return mr;
	sg_init_one(sg, word, 8);
	n = ib_dma_map_sg(pa.dev, sg, 1, DMA_BIDIRECTIONAL);
	if (n != 1 || ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE) != 1)
		goto fail;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	reg.mr = mr;
	reg.key = mr->rkey;
	if (post_send(pa.rc, &reg.wr) || poll_one(pa.scq, &wc) ||
	    wc.status != IB_WC_SUCCESS)
		goto fail;
	return mr;
fail:
	ib_dereg_mr(mr);
	return ERR_PTR(-EIO);
}

static void test_atomics(void)
{
	u64 *remote = (u64 *)(pa.buf + 60000), *local = (u64 *)(ra.buf + 60000);
	struct ib_sge g = sge(&ra, 60000, 8);
	struct ib_atomic_wr a = {
		.wr = { .wr_id = 4, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.sg_list = &g, .num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = (u64)(uintptr_t)remote, .compare_add = 3,
	};
	struct scatterlist sg;
	struct ib_mr *mr;
	struct ib_wc wc;
	int err;

	*remote = 5;
	*local = 0;
	mr = peer_atomic_mr(remote, &sg);
	CHECK(!IS_ERR(mr), "rxe: a fast-registered MR with remote atomic access");
	if (IS_ERR(mr))
		return;
	a.rkey = mr->rkey;
	a.remote_addr = mr->iova;
	err = post_send(ra.rc, &a.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_FETCH_ADD &&
	      *local == 5 && *remote == 8,
	      "RC FETCH_ADD: old value 5 came back, rxe's word is 8 (err %d, status %d, %llu, %llu)",
	      err, err ? -1 : wc.status, *local, *remote);
	a.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	a.compare_add = 8;
	a.swap = 100;
	*local = 0;
	err = post_send(ra.rc, &a.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_COMP_SWAP &&
	      *local == 8 && *remote == 100,
	      "RC CMP_SWP: old value 8 came back, rxe's word is 100 (%llu, %llu)",
	      *local, *remote);
	ib_dma_unmap_sg(pa.dev, &sg, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr);
}

/* A send completion of stream(): the next one in order, successful. */
static int stream_sent(const struct ib_wc *wc, u32 *sent)
{
	int err = 0;

	if (wc->status != IB_WC_SUCCESS || wc->wr_id != *sent) {
		pr_info(pfx "stream: send %u: status %d wr_id %llu\n", *sent, wc->status,
			wc->wr_id);
		err = -EIO;
	}
	(*sent)++;
	return err;
}

/* The next send completion of stream(). One not there in 5 s fails, but
 * first says what it knows: the QP's state, and whether the completion
 * came late (within 25 s more) or not at all.
 */
static int stream_wait_sent(struct end *s, u32 *sent)
{
	unsigned long t0 = jiffies, end = jiffies + 25 * HZ;
	struct ib_qp_init_attr init;
	struct ib_qp_attr qa;
	struct ib_wc wc;
	int err = poll_one(s->scq, &wc), n;

	if (err != -ETIMEDOUT)
		return err ?: stream_sent(&wc, sent);
	n = ib_query_qp(s->rc, &qa, IB_QP_STATE | IB_QP_SQ_PSN, &init);
	pr_info(pfx "stream: no send completion %u in 5 s; %s QP %u: query %d, state %d, sq_psn %u\n",
		*sent, s->name, s->rc->qp_num, n, n ? -1 : qa.qp_state, n ? 0 : qa.sq_psn);
	while (!(n = ib_poll_cq(s->scq, 1, &wc)) && time_before(jiffies, end))
		usleep_range(100, 1000);
	if (n > 0)
		pr_info(pfx "stream: send completion %u came %u ms late: status %d wr_id %llu\n",
			*sent, jiffies_to_msecs(jiffies - t0), wc.status, wc.wr_id);
	else
		pr_info(pfx "stream: send completion %u: none in 30 s\n", *sent);
	return -ETIMEDOUT;
}

/* count messages of len bytes from s to d, with window in flight. */
static bool stream(struct end *s, struct end *d, u32 count, u32 len, u32 window)
{
	u32 posted = 0, sent = 0, got = 0, rposted = 0, slots = BUF_BYTES / len;
	struct ib_wc wc;
	int err = 0;

	while (got < count && !err) {
		while (rposted < count && rposted - got < window) {
			struct ib_sge r = sge(d, (rposted % slots) * len, len);

			err = post_recv(d, d->rc, &r, 1, rposted++);
			if (err)
				break;
		}
		while (!err && posted < count && posted - sent < window &&
		       posted < rposted) {
			struct ib_sge g = sge(s, (posted % slots) * len, len);
			struct ib_send_wr wr = {
				.wr_id = posted, .opcode = IB_WR_SEND,
				.sg_list = &g, .num_sge = 1,
				.send_flags = IB_SEND_SIGNALED,
			};

			fill(s->buf + (posted % slots) * len, len, posted);
			err = post_send(s->rc, &wr);
			posted++;
		}
		while (!err && sent < posted && ib_poll_cq(s->scq, 1, &wc) > 0)
			err = stream_sent(&wc, &sent);
		if (err)
			break;
		/* Message got not posted yet: the window waits for send
		 * completions (the receiver may run a window ahead of the
		 * sender's ACK processing), so wait for one of those. */
		if (got >= posted) {
			err = stream_wait_sent(s, &sent);
			continue;
		}
		err = poll_one(d->rcq, &wc);
		if (!err && (wc.status != IB_WC_SUCCESS || wc.wr_id != got ||
			     wc.byte_len != len ||
			     !same(d->buf + (got % slots) * len, len, got))) {
			pr_info(pfx "stream: recv %u: status %d wr_id %llu len %u\n",
				got, wc.status, wc.wr_id, wc.byte_len);
			err = -EIO;
		}
		got++;
	}
	while (!err && sent < posted)
		err = stream_wait_sent(s, &sent);
	if (err)
		pr_info(pfx "stream %s -> %s: error %d at message %u\n",
			s->name, d->name, err, got);
	return !err;
}

static void test_event(void)
{
	struct ib_sge r = sge(&ra, 0, 256), g = sge(&pa, 0, 100);
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = &g, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	int err, missed;

	reinit_completion(&ra.event);
	ra.events = 0;
	err = ib_req_notify_cq(ra.rcq, IB_CQ_NEXT_COMP);
	if (!err)
		err = post_recv(&ra, ra.rc, &r, 1, 1);
	if (!err)
		err = post_send(pa.rc, &wr);
	if (!err && !wait_for_completion_timeout(&ra.event, 5 * HZ))
		err = -ETIMEDOUT;
	CHECK(!err && ra.events == 1,
	      "armed CQ: the completion handler ran once (err %d)", err);
	missed = ib_req_notify_cq(ra.rcq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS);
	CHECK(missed > 0, "IB_CQ_REPORT_MISSED_EVENTS with a completion queued: %d",
	      missed);
	err = poll_one(ra.rcq, &wc);
	if (!err)
		err = poll_one(pa.scq, &wc);
	CHECK(!err && wc.status == IB_WC_SUCCESS, "event's completion polled");
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 3, 0)	/* 7.3 has no ib_resize_cq() */
	/* roxe resizes user CQs only (kmod/README.md) */
	err = ib_resize_cq(ra.rcq, 256);
	CHECK(err == -EOPNOTSUPP, "ib_resize_cq on roxe0's kernel CQ: %d (-EOPNOTSUPP)", err);
#endif
}

static void test_ud(void)
{
	struct rdma_ah_attr at;
	struct ib_ah *ah_rp, *ah_pr;
	struct ib_sge g, r;
	struct ib_ud_wr wr = {
		.wr = { .opcode = IB_WR_SEND, .sg_list = &g, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_qkey = QKEY,
	};
	struct ib_wc wc, rwc;
	int err;

	err = ud_ready(&ra) ?: ud_ready(&pa);
	CHECK(!err, "UD QPs to RTS (err %d)", err);
	if (err)
		return;
	av_to(&at, &ra, &pa);
	ah_rp = rdma_create_ah(ra.pd, &at, 0);
	av_to(&at, &pa, &ra);
	ah_pr = rdma_create_ah(pa.pd, &at, 0);
	CHECK(!IS_ERR(ah_rp) && !IS_ERR(ah_pr), "kernel AHs created");
	if (IS_ERR(ah_rp) || IS_ERR(ah_pr))
		goto out;

	/* roxe -> rxe */
	g = sge(&ra, 0, 512);
	r = sge(&pa, 0, 40 + 1024);
	fill(ra.buf, 512, 11);
	err = post_recv(&pa, pa.ud, &r, 1, 21);
	wr.ah = ah_rp;
	wr.remote_qpn = pa.ud->qp_num;
	if (!err)
		err = post_send(ra.ud, &wr.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	if (!err)
		err = poll_one(pa.rcq, &rwc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && rwc.status == IB_WC_SUCCESS &&
	      rwc.byte_len == 40 + 512 && rwc.src_qp == ra.ud->qp_num &&
	      same(pa.buf + 40, 512, 11),
	      "UD SEND roxe -> rxe: 512 bytes (err %d)", err);

	/* rxe -> roxe */
	g = sge(&pa, 2048, 700);
	r = sge(&ra, 4096, 40 + 1024);
	fill(pa.buf + 2048, 700, 12);
	err = post_recv(&ra, ra.ud, &r, 1, 22);
	wr.ah = ah_pr;
	wr.remote_qpn = ra.ud->qp_num;
	if (!err)
		err = post_send(pa.ud, &wr.wr);
	if (!err)
		err = poll_one(pa.scq, &wc);
	if (!err)
		err = poll_one(ra.rcq, &rwc);
	CHECK(!err && rwc.status == IB_WC_SUCCESS && rwc.wr_id == 22 &&
	      rwc.byte_len == 40 + 700 && rwc.src_qp == pa.ud->qp_num &&
	      (rwc.wc_flags & IB_WC_GRH) &&
	      (rwc.wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE) &&
	      rwc.network_hdr_type == RDMA_NETWORK_IPV4 &&
	      same(ra.buf + 4096 + 40, 700, 12),
	      "UD SEND rxe -> roxe: 700 bytes after the GRH, IPv4 (err %d)", err);
out:
	if (!IS_ERR(ah_rp))
		rdma_destroy_ah(ah_rp, 0);
	if (!IS_ERR(ah_pr))
		rdma_destroy_ah(ah_pr, 0);
}

/* Register len bytes at buf with IB_WR_REG_MR on roxe's RC QP, for remote
 * read and write; sg stays DMA-mapped until the caller unmaps it.
 */
static int frwr_reg(struct ib_mr *mr, struct scatterlist *sg, void *buf,
		    u32 len, u64 id)
{
	struct ib_reg_wr w = {
		.wr = { .wr_id = id, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr, .key = mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_wc wc;
	int err;

	sg_init_one(sg, buf, len);
	if (ib_dma_map_sg(ra.dev, sg, 1, DMA_BIDIRECTIONAL) != 1) {
		pr_info(pfx "REG_MR: ib_dma_map_sg failed\n");
		return -EIO;
	}
	err = ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE);
	if (err != 1) {
		pr_info(pfx "REG_MR: ib_map_mr_sg: %d\n", err);
		return -EINVAL;
	}
	err = post_send(ra.rc, &w.wr);
	if (err)
		pr_info(pfx "REG_MR: post_send: %d\n", err);
	err = err ?: poll_one(ra.scq, &wc);
	if (!err && (wc.wr_id != id || wc.status != IB_WC_SUCCESS ||
		     wc.opcode != IB_WC_REG_MR)) {
		pr_info(pfx "REG_MR: completion wr_id %llu status %d opcode %d\n",
			wc.wr_id, wc.status, wc.opcode);
		err = -EIO;
	}
	return err;
}

/* rxe's RDMA READ or WRITE of len bytes at off into mr, from pa.buf +
 * loff: its completion status, or -errno.
 */
static int peer_rdma(enum ib_wr_opcode op, struct ib_mr *mr, u32 off,
		     u32 len, u32 loff)
{
	struct ib_sge g = sge(&pa, loff, len);
	struct ib_rdma_wr w = {
		.wr = { .wr_id = 77, .opcode = op, .sg_list = &g, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova + off, .rkey = mr->rkey,
	};
	struct ib_wc wc;

	return post_send(pa.rc, &w.wr) ?: poll_one(pa.scq, &wc) ?: wc.status;
}

/* Fast registration: rxe reads and writes roxe's kmalloc memory through an
 * rkey that roxe0 registered with IB_WR_REG_MR; after LOCAL_INV and a new
 * key the MR is registered over another buffer and rxe sees the new
 * bytes (roxed's window was remapped); rxe's SEND_WITH_INV invalidates it
 * remotely, after which it registers again.
 */
static void test_frwr(void)
{
	u8 *b1 = kmalloc(4 * PAGE_SIZE, GFP_KERNEL);
	u8 *b2 = kmalloc(4 * PAGE_SIZE, GFP_KERNEL);
	struct ib_sge r = sge(&ra, 0, 64), g = sge(&pa, 0, 16);
	struct ib_send_wr inv = { .wr_id = 52, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_send_wr sinv = { .wr_id = 55, .opcode = IB_WR_SEND_WITH_INV,
				   .sg_list = &g, .num_sge = 1,
				   .send_flags = IB_SEND_SIGNALED };
	struct scatterlist sg1, sg2, sg3;
	struct ib_wc wc, rwc;
	struct ib_mr *mr;
	int err;

	mr = ib_alloc_mr(ra.pd, IB_MR_TYPE_MEM_REG, 4);
	CHECK(!IS_ERR(mr), "ib_alloc_mr(IB_MR_TYPE_MEM_REG, 4 pages) on %s (%d)",
	      roxe, PTR_ERR_OR_ZERO(mr));
	if (IS_ERR(mr) || !b1 || !b2)
		goto out;
	fill(b1 + 100, 10000, 41);
	err = frwr_reg(mr, &sg1, b1 + 100, 10000, 51);
	CHECK(!err, "IB_WR_REG_MR of 10000 bytes of kmalloc memory, rkey 0x%x (err %d)",
	      mr->rkey, err);
	memset(pa.buf, 0, 10000);
	err = err ?: peer_rdma(IB_WR_RDMA_READ, mr, 0, 10000, 0);
	CHECK(!err && same(pa.buf, 10000, 41),
	      "rxe RDMA READ of 10000 bytes through that rkey (status %d)", err);
	fill(pa.buf + 20000, 5000, 42);
	err = err ?: peer_rdma(IB_WR_RDMA_WRITE, mr, 3000, 5000, 20000);
	CHECK(!err && same(b1 + 3100, 5000, 42),
	      "rxe RDMA WRITE of 5000 bytes into roxe's kernel memory (status %d)", err);

	inv.ex.invalidate_rkey = mr->rkey;
	err = post_send(ra.rc, &inv) ?: poll_one(ra.scq, &wc);
	CHECK(!err && wc.wr_id == 52 && wc.status == IB_WC_SUCCESS &&
	      wc.opcode == IB_WC_LOCAL_INV, "LOCAL_INV of 0x%x (err %d, status %d)",
	      mr->rkey, err, err ? -1 : wc.status);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	fill(b2 + 50, 9000, 43);
	err = frwr_reg(mr, &sg2, b2 + 50, 9000, 53);
	memset(pa.buf, 0, 9000);
	err = err ?: peer_rdma(IB_WR_RDMA_READ, mr, 0, 9000, 0);
	CHECK(!err && same(pa.buf, 9000, 43),
	      "registered again over another buffer, key 0x%x: rxe READs the new bytes (status %d)",
	      mr->rkey, err);

	sinv.ex.invalidate_rkey = mr->rkey;
	err = post_recv(&ra, ra.rc, &r, 1, 54) ?: post_send(pa.rc, &sinv) ?:
	      poll_one(pa.scq, &wc) ?: poll_one(ra.rcq, &rwc);
	CHECK(!err && wc.status == IB_WC_SUCCESS && rwc.wr_id == 54 &&
	      rwc.status == IB_WC_SUCCESS && (rwc.wc_flags & IB_WC_WITH_INVALIDATE) &&
	      rwc.ex.invalidate_rkey == mr->rkey,
	      "rxe's SEND_WITH_INV invalidated 0x%x (err %d)", mr->rkey, err);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	err = frwr_reg(mr, &sg3, b1 + 100, 10000, 56);
	memset(pa.buf, 0, 10000);
	err = err ?: peer_rdma(IB_WR_RDMA_READ, mr, 0, 10000, 0);
	CHECK(!err && same(pa.buf, 3000, 41),
	      "registered again after the remote invalidation (status %d)", err);
	ib_dma_unmap_sg(ra.dev, &sg1, 1, DMA_BIDIRECTIONAL);
	ib_dma_unmap_sg(ra.dev, &sg2, 1, DMA_BIDIRECTIONAL);
	ib_dma_unmap_sg(ra.dev, &sg3, 1, DMA_BIDIRECTIONAL);
out:
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	kfree(b1);
	kfree(b2);
}

/* UC: RESET -> RTS for a's qp aq towards b's bq (WRITEs only). */
static int uc_connect_qp(struct end *a, struct ib_qp *aq, struct end *b,
			 struct ib_qp *bq)
{
	struct ib_qp_attr at = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	int err;

	err = ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTR;
	at.path_mtu = IB_MTU_1024;
	at.dest_qp_num = bq->qp_num;
	at.rq_psn = 0x2000;
	av_to(&at.ah_attr, a, b);
	err = ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN);
	if (err)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IB_QPS_RTS;
	at.sq_psn = 0x2000;
	return ib_modify_qp(aq, &at, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* roxe's UC QP to rxe's, on the other engine than ra.rc (qpn % 2 with
 * roxed's two engines): rxe's WRITEs land on one engine while the other
 * invalidates. rxe's QP completes on a CQ of its own (pcq).
 */
static int race_uc(struct ib_qp **rq, struct ib_qp **pq, struct ib_cq *pcq)
{
	struct ib_qp_init_attr init = {
		.send_cq = pcq, .recv_cq = pcq, .qp_type = IB_QPT_UC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *a = make_qp(&ra, IB_QPT_UC), *b;

	if (IS_ERR(a))
		return PTR_ERR(a);
	if (a->qp_num % 2 == ra.rc->qp_num % 2) {
		b = make_qp(&ra, IB_QPT_UC);
		ib_destroy_qp(a);
		a = b;
		if (IS_ERR(a))
			return PTR_ERR(a);
	}
	*rq = a;
	*pq = ib_create_qp(pa.pd, &init);
	if (IS_ERR(*pq))
		return PTR_ERR(*pq);
	return uc_connect_qp(&ra, *rq, &pa, *pq) ?: uc_connect_qp(&pa, *pq, &ra, *rq);
}

/* rxe's unsignaled-in-between UC WRITEs into the window: up to RACE_FLIGHT
 * outstanding, each RACE_BYTES; a WRITE that meets an invalid key is
 * dropped by roxe's responder (UC), so they run on whatever the state.
 */
#define RACE_PAGES	16
#define RACE_BYTES	(RACE_PAGES * PAGE_SIZE)
#define RACE_FLIGHT	4

static int race_write(struct ib_qp *pq, struct ib_mr *mr, u32 *flight, u64 *done)
{
	struct ib_wc wc;
	int n;

	while ((n = ib_poll_cq(pq->send_cq, 1, &wc)) > 0) {
		if (wc.status != IB_WC_SUCCESS || wc.wr_id != 90)
			return -EIO;
		(*flight)--;
		(*done)++;
	}
	if (n < 0)
		return n;
	while (*flight < RACE_FLIGHT) {
		struct ib_sge g = sge(&pa, 0, RACE_BYTES);
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 90, .opcode = IB_WR_RDMA_WRITE,
				.sg_list = &g, .num_sge = 1,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = mr->iova, .rkey = mr->rkey,
		};

		n = post_send(pq, &w.wr);
		if (n)
			return n;
		(*flight)++;
	}
	return 0;
}

/* One completion of roxe's RC send queue, rxe's WRITEs kept going. */
static int race_poll(struct ib_qp *pq, struct ib_mr *mr, u32 *flight,
		     u64 *done, struct ib_wc *wc, struct ib_cq *cq)
{
	unsigned long end = jiffies + 5 * HZ;
	int n, err;

	for (;;) {
		err = race_write(pq, mr, flight, done);
		if (err)
			return err;
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(20, 100);
	}
}

/* Invalidation against access (issue #15, finding 5): roxed's engine that
 * executes rxe's WRITEs may be inside the window when the other engine
 * empties it (LOCAL_INV on ra.rc, or rxe's SEND_WITH_INV received there).
 * roxed must live through every round: each REG_MR and invalidation
 * completes, and at the end rxe READs what the MR was registered over.
 */
static void test_frwr_race(unsigned int rounds)
{
	u8 *buf = kmalloc(RACE_BYTES, GFP_KERNEL);
	struct ib_qp *rq = NULL, *pq = NULL;
	struct ib_sge r = sge(&ra, 0, 64), g = sge(&pa, RACE_BYTES, 16);
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 91, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_send_wr inv = { .wr_id = 92, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_send_wr sinv = { .wr_id = 93, .opcode = IB_WR_SEND_WITH_INV,
				   .sg_list = &g, .num_sge = 1,
				   .send_flags = IB_SEND_SIGNALED };
	unsigned long t0 = jiffies;
	struct scatterlist sg;
	struct ib_cq *pcq;
	struct ib_mr *mr;
	u32 flight = 0, i;
	u64 writes = 0;
	struct ib_wc wc;
	int err;

	mr = ib_alloc_mr(ra.pd, IB_MR_TYPE_MEM_REG, RACE_PAGES);
	pcq = ib_alloc_cq(pa.dev, NULL, 64, 0, IB_POLL_DIRECT);
	err = PTR_ERR_OR_ZERO(mr) ?: PTR_ERR_OR_ZERO(pcq) ?:
	      buf ? race_uc(&rq, &pq, pcq) : -ENOMEM;
	CHECK(!err, "race: fast-reg MR of %u pages, UC QPs %u (roxe) <-> %u (rxe), RC QP %u (err %d)",
	      RACE_PAGES, IS_ERR_OR_NULL(rq) ? 0 : rq->qp_num,
	      IS_ERR_OR_NULL(pq) ? 0 : pq->qp_num, ra.rc->qp_num, err);
	if (err)
		goto out;
	sg_init_one(&sg, buf, RACE_BYTES);
	if (ib_dma_map_sg(ra.dev, &sg, 1, DMA_BIDIRECTIONAL) != 1) {
		err = -EIO;
		goto out;
	}
	reg.mr = mr;
	reg.key = mr->rkey;
	inv.ex.invalidate_rkey = mr->rkey;
	sinv.ex.invalidate_rkey = mr->rkey;
	for (i = 0; i < rounds && !err; i++) {
		if (ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1) {
			err = -EINVAL;
			break;
		}
		err = post_send(ra.rc, &reg.wr) ?:
		      race_poll(pq, mr, &flight, &writes, &wc, ra.scq);
		if (!err && (wc.status != IB_WC_SUCCESS || wc.wr_id != 91))
			err = -EIO;
		if (err)
			break;
		/* let some WRITEs land in the registered window */
		err = race_write(pq, mr, &flight, &writes);
		if (err)
			break;
		usleep_range(100, 300);
		if (i % 2) {
			err = post_send(ra.rc, &inv) ?:
			      race_poll(pq, mr, &flight, &writes, &wc, ra.scq);
			if (!err && (wc.status != IB_WC_SUCCESS || wc.wr_id != 92))
				err = -EIO;
		} else {
			err = post_recv(&ra, ra.rc, &r, 1, 94) ?:
			      post_send(pa.rc, &sinv) ?:
			      poll_one(pa.scq, &wc) ?:
			      race_poll(pq, mr, &flight, &writes, &wc, ra.rcq);
			if (!err && (wc.status != IB_WC_SUCCESS ||
				     !(wc.wc_flags & IB_WC_WITH_INVALIDATE)))
				err = -EIO;
		}
	}
	CHECK(!err, "race: %u rounds of REG_MR and LOCAL_INV / SEND_WITH_INV against %llu UC WRITEs of %lu KiB in %u ms (err %d, status %d)",
	      i, writes, RACE_BYTES / 1024, jiffies_to_msecs(jiffies - t0), err,
	      err ? -1 : wc.status);
	/* drain rxe's WRITEs, then roxe still serves the MR */
	while (!err && flight) {
		err = poll_one(pcq, &wc) ?: wc.status;
		flight--;
	}
	if (!err) {
		/* a new key: WRITEs still on their way with the old one drop */
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
		reg.key = mr->rkey;
		fill(buf, RACE_BYTES, 44);
		err = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1 ? -EINVAL :
		      post_send(ra.rc, &reg.wr) ?: poll_one(ra.scq, &wc) ?:
		      wc.status;
	}
	memset(pa.buf, 0, RACE_BYTES);
	err = err ?: peer_rdma(IB_WR_RDMA_READ, mr, 0, RACE_BYTES, 0);
	CHECK(!err && same(pa.buf, RACE_BYTES, 44),
	      "race: afterwards rxe READs the MR registered again (status %d)", err);
	ib_dma_unmap_sg(ra.dev, &sg, 1, DMA_BIDIRECTIONAL);
out:
	if (!IS_ERR_OR_NULL(pq))
		ib_destroy_qp(pq);
	if (!IS_ERR_OR_NULL(rq))
		ib_destroy_qp(rq);
	if (!IS_ERR(pcq))
		ib_free_cq(pcq);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	kfree(buf);
}

/* What one SRQ round sends: message k's length, and its bytes (k first). */
#define SRQ_MSGS	24
#define SRQ_SLOT	8192
static u32 srq_len(u32 k)
{
	return 600 + (k * 397) % 3400;
}

static void srq_fill(u8 *p, u32 k)
{
	*(u32 *)p = k;
	fill(p + 4, srq_len(k) - 4, k + 1000);
}

/* Kernel SRQ: two RC QPs on roxe0 share it, each with its own receive CQ;
 * rxe sends on both, and the CQs are polled one after the other, so the
 * SRQ's WRs retire out of order. 12 rounds of 24 messages (the SRQ's
 * ring and its bounce ring wrap); every message lands whole in the
 * 2-entry scatter list of one receive, each receive exactly once.
 */
static void test_srq(void)
{
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 2 } };
	struct ib_cq *rcq[2] = { NULL, NULL };
	struct ib_qp *rq[2] = { NULL, NULL }, *pq[2] = { NULL, NULL };
	struct ib_srq *srq;
	u32 round, k, i, got = 0, bad = 0, rounds = 12;
	u8 *msg = kmalloc(SRQ_SLOT, GFP_KERNEL);
	int err = 0;

	srq = ib_create_srq(ra.pd, &sa);
	CHECK(!IS_ERR(srq), "kernel SRQ on %s: %u WRs of %u SGEs (%d)", roxe,
	      sa.attr.max_wr, sa.attr.max_sge, PTR_ERR_OR_ZERO(srq));
	if (IS_ERR(srq) || !msg)
		goto out;
	for (i = 0; i < 2 && !err; i++) {
		struct ib_qp_init_attr init = {
			.send_cq = ra.scq, .qp_type = IB_QPT_RC, .srq = srq,
			.sq_sig_type = IB_SIGNAL_REQ_WR,
			.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		};

		rcq[i] = ib_alloc_cq(ra.dev, NULL, 64, 0, IB_POLL_DIRECT);
		err = PTR_ERR_OR_ZERO(rcq[i]);
		if (err)
			break;
		init.recv_cq = rcq[i];
		rq[i] = ib_create_qp(ra.pd, &init);
		err = PTR_ERR_OR_ZERO(rq[i]);
		if (err)
			break;
		pq[i] = make_qp(&pa, IB_QPT_RC);
		err = PTR_ERR_OR_ZERO(pq[i]) ?: rc_connect_qp(&ra, rq[i], &pa, pq[i]) ?:
		      rc_connect_qp(&pa, pq[i], &ra, rq[i]);
	}
	CHECK(!err, "two RC QPs on the SRQ, each with its receive CQ, connected to rxe (err %d)",
	      err);
	for (round = 0; round < rounds && !err; round++) {
		struct ib_wc wc;

		for (k = 0; k < SRQ_MSGS && !err; k++) {
			struct ib_sge g[2] = { sge(&ra, k * SRQ_SLOT, 1000),
					       sge(&ra, k * SRQ_SLOT + 2000, 3096) };
			struct ib_recv_wr wr = { .wr_id = round * SRQ_MSGS + k,
						 .sg_list = g, .num_sge = 2 };

			err = ib_post_srq_recv(srq, &wr, NULL);
		}
		for (k = 0; k < SRQ_MSGS && !err; k++) {
			u32 id = round * SRQ_MSGS + k;
			struct ib_sge g = sge(&pa, k * SRQ_SLOT, srq_len(id));
			struct ib_send_wr wr = { .wr_id = id, .opcode = IB_WR_SEND,
						 .sg_list = &g, .num_sge = 1,
						 .send_flags = IB_SEND_SIGNALED };

			srq_fill(pa.buf + k * SRQ_SLOT, id);
			err = post_send(pq[k & 1], &wr);
		}
		for (k = 0; k < SRQ_MSGS && !err; k++)
			err = poll_one(pa.scq, &wc) ?: (wc.status ? -EIO : 0);
		/* the second QP's CQ first: out of posting order */
		for (i = 2; i-- > 0 && !err;) {
			for (k = 0; k < SRQ_MSGS / 2 && !err; k++) {
				u32 slot, id;

				err = poll_one(rcq[i], &wc);
				if (err || wc.status) {
					err = err ?: -EIO;
					break;
				}
				slot = wc.wr_id % SRQ_MSGS;
				memcpy(msg, ra.buf + slot * SRQ_SLOT, 1000);
				memcpy(msg + 1000, ra.buf + slot * SRQ_SLOT + 2000, 3096);
				id = *(u32 *)msg;
				if (wc.wr_id / SRQ_MSGS != round || id / SRQ_MSGS != round ||
				    wc.byte_len != srq_len(id) ||
				    !same(msg + 4, srq_len(id) - 4, id + 1000) ||
				    wc.qp != rq[i])
					bad++;
				got++;
			}
		}
	}
	CHECK(!err && got == rounds * SRQ_MSGS && !bad,
	      "%u messages through the SRQ, retired out of order: %u whole and in place (err %d)",
	      rounds * SRQ_MSGS, got - bad, err);
out:
	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(pq[i]))
			ib_destroy_qp(pq[i]);
		if (!IS_ERR_OR_NULL(rq[i]))
			ib_destroy_qp(rq[i]);
		if (!IS_ERR_OR_NULL(rcq[i]))
			ib_free_cq(rcq[i]);
	}
	if (!IS_ERR(srq))
		ib_destroy_srq(srq);
	kfree(msg);
}

static void test_bad_posts(void)
{
	struct ib_sge g[5] = { sge(&ra, 0, 8), sge(&ra, 8, 8), sge(&ra, 16, 8),
			       sge(&ra, 24, 8), sge(&ra, 32, 8) };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND, .sg_list = g, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad = NULL;
	int err;

	g[0].lkey ^= 0x5a5a00;
	err = ib_post_send(ra.rc, &wr, &bad);
	CHECK(err == -EINVAL && bad == &wr, "SEND with an unknown lkey: %d", err);
	g[0].lkey ^= 0x5a5a00;
	wr.num_sge = 5;
	err = ib_post_send(ra.rc, &wr, &bad);
	CHECK(err == -EINVAL, "SEND with 5 SGEs on a 4-SGE QP: %d", err);
	wr.num_sge = 1;
	wr.opcode = IB_WR_RDMA_WRITE;
	err = ib_post_send(ra.ud, &wr, &bad);
	CHECK(err == -EINVAL, "RDMA WRITE on a UD QP: %d", err);
}

static void test_error_flush(void)
{
	struct ib_sge g = sge(&ra, 0, 100), r = sge(&ra, 0, 100);
	struct ib_rdma_wr w = {
		.wr = { .wr_id = 31, .opcode = IB_WR_RDMA_WRITE, .sg_list = &g,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0x1000, .rkey = 0xdead00,
	};
	struct ib_send_wr s = {
		.wr_id = 32, .opcode = IB_WR_SEND, .sg_list = &g, .num_sge = 1,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc, rwc;
	int err;

	err = post_send(ra.rc, &w.wr);
	if (!err)
		err = poll_one(ra.scq, &wc);
	CHECK(!err && wc.wr_id == 31 && wc.status == IB_WC_REM_ACCESS_ERR,
	      "RDMA WRITE to a bad rkey: remote access error (err %d, status %d)",
	      err, err ? -1 : wc.status);
	/* the QP is in ERR now: what ib_drain_qp posts must flush */
	msleep(20);
	err = post_recv(&ra, ra.rc, &r, 1, 33);
	if (!err)
		err = post_send(ra.rc, &s);
	if (!err)
		err = poll_one(ra.scq, &wc);
	if (!err)
		err = poll_one(ra.rcq, &rwc);
	CHECK(!err && wc.wr_id == 32 && wc.status == IB_WC_WR_FLUSH_ERR &&
	      rwc.wr_id == 33 && rwc.status == IB_WC_WR_FLUSH_ERR,
	      "in ERR, a new send and receive complete as flushed (err %d)", err);
}

/* ib_drain_rq() on a receive queue the ULP keeps full (cifs does): the
 * core's drain needs room for one more receive, so roxe0 drains without
 * it; the drain returns once every receive posted has completed, flushed,
 * through the CQ's handlers.
 */
struct drain_rx {
	struct ib_cqe cqe;
	int *done, *bad;
	u32 seq, *next;
};

static void drain_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct drain_rx *r = container_of(wc->wr_cqe, struct drain_rx, cqe);

	(*r->done)++;
	if (wc->status != IB_WC_WR_FLUSH_ERR || r->seq != (*r->next)++)
		(*r->bad)++;
}

#define DRAIN_MAX	1024

static void test_drain_full_rq(void)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr at = { .qp_state = IB_QPS_INIT, .port_num = 1 };
	struct ib_sge g = sge(&ra, 0, 64);
	struct ib_recv_wr wr = { .sg_list = &g, .num_sge = 1 };
	int done = 0, bad = 0, n = 0, err = 0;
	struct drain_rx *rx;
	struct ib_qp *qp;
	struct ib_cq *cq;
	u32 next = 0;

	rx = kcalloc(DRAIN_MAX, sizeof(*rx), GFP_KERNEL);
	if (!rx) {
		CHECK(0, "drain: receives' notes (-ENOMEM)");
		return;
	}
	cq = ib_alloc_cq(ra.dev, NULL, DRAIN_MAX + 8, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq)) {
		CHECK(0, "drain: CQ of %d (err %ld)", DRAIN_MAX + 8, PTR_ERR(cq));
		goto out_rx;
	}
	init.send_cq = init.recv_cq = cq;
	qp = ib_create_qp(ra.pd, &init);
	if (IS_ERR(qp)) {
		CHECK(0, "drain: RC QP (err %ld)", PTR_ERR(qp));
		goto out_cq;
	}
	err = ib_modify_qp(qp, &at, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	/* as many receives as the queue takes: it ends full */
	for (; !err && n < DRAIN_MAX; n++) {
		rx[n] = (struct drain_rx){ .cqe.done = drain_rx_done,
					   .done = &done, .bad = &bad,
					   .seq = n, .next = &next };
		wr.wr_cqe = &rx[n].cqe;
		err = ib_post_recv(qp, &wr, NULL);
	}
	if (err)
		n--;
	CHECK(err == -ENOMEM && n >= init.cap.max_recv_wr,
	      "drain: %d receives fill a queue of %u (then %d)", n,
	      init.cap.max_recv_wr, err);
	ib_drain_rq(qp);
	CHECK(done == n && !bad,
	      "drain: ib_drain_rq of the full queue returned after all %d receives completed flushed, in order (%d did, %d wrong)",
	      n, done, bad);
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
out_rx:
	kfree(rx);
}

static int __init kverbs_test_init(void)
{
	int err;

	err = setup(&ra, roxe, 0);
	if (!err)
		err = setup(&pa, peer, IB_PD_UNSAFE_GLOBAL_RKEY);
	CHECK(!err, "kernel PD, CQs and RC/UD QPs on %s and %s (err %d)",
	      roxe, peer, err);
	if (err)
		goto out;
	CHECK(ra.dev->kverbs_provider, "%s is a kernel verbs provider", roxe);
	err = rc_connect(&ra, &pa) ?: rc_connect(&pa, &ra);
	CHECK(!err, "RC QPs %u <-> %u connected (err %d)", ra.rc->qp_num,
	      pa.rc->qp_num, err);
	if (err)
		goto out;
	if (frwr_race) {
		test_frwr_race(frwr_race);
		goto out;
	}
	test_send();
	test_recv_imm();
	test_write_read();
	test_atomics();
	CHECK(stream(&ra, &pa, 300, 8192, 32),
	      "300 SENDs of 8 KiB roxe -> rxe, 32 in flight, every byte checked");
	CHECK(stream(&pa, &ra, 300, 8192, 32),
	      "300 SENDs of 8 KiB rxe -> roxe, 32 in flight, every byte checked");
	test_event();
	test_ud();
	test_frwr();
	test_srq();
	test_bad_posts();
	test_error_flush();
	test_drain_full_rq();
out:
	teardown(&pa);
	teardown(&ra);
	pr_info(pfx "%d passed, %d failed\n", passed, failed);
	return failed ? -EIO : 0;
}

static void __exit kverbs_test_exit(void)
{
}

module_init(kverbs_test_init);
module_exit(kverbs_test_exit);
MODULE_DESCRIPTION("roxe: kernel verbs against a peer device (test)");
MODULE_LICENSE("GPL");
