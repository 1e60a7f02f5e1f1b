// SPDX-License-Identifier: GPL-2.0-only
/*
 * Addresses on the wire (issue #15, findings 3 and 4).
 *
 * Receive: a third host that knows a QP's number and next PSN forges
 * frames into it, ICRC valid, from an address that is not the QP's peer
 * or to an address that is not the QP's own: the engine drops them and
 * counts them (the QP's rx_drop_addr, the engine's roxe_eng_stats), the
 * victim's data stays intact. A UD QP takes datagrams only to one of the
 * port's own addresses.
 *
 * Send: a UD WQE whose address vector names a source that is not the
 * port's fails (LOC_QP_OP_ERR) and nothing leaves with that source; a
 * served application's WQE is addressed only from the AH the module
 * created (by ah_num, in the QP's PD), whatever vector it carries.
 *
 * Side 0 is a polled device: between its polls the test owns its port and
 * plays the third host there (injects frames, reads what side 1 sent).
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "vclock.h"
#include "served_app.h"

#define BUF		(1u << 16)
#define QKEY		0x11111111u
#define FORGED		0xeeu

/* Side 1's engine is past the turn that made the completion just polled
 * (two turns on, or asleep with nothing queued): that turn's frames are on
 * the wire, since a turn's frames leave at its end (held ACKs aside). */
static void sent_all(struct pair *p)
{
	roxe_dev_quiesce(p->s[1].dev);
}

/* A RoCE v2 frame from src to dst (dotted quads) onto side 1's wire, as
 * a host on the link sends it: right MACs, valid ICRC. */
static int forge(struct pair *p, const char *src, const char *dst, uint8_t opcode,
		 uint32_t dqpn, uint32_t psn, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct roxe_port *port = roxe_loop_port(p->wire, 0);
	struct roxe_frame_addr a = { .sport = 0xc123, .hop_limit = 64 };
	struct roxe_frame_hdr h = {
		.opcode = opcode, .pkey = ROXE_DEFAULT_PKEY, .dqpn = dqpn, .psn = psn,
		.va = va, .rkey = rkey, .dma_len = len, .qkey = QKEY, .src_qpn = 77,
		.ackreq = true,
	};
	uint8_t payload[256];
	struct roxe_pkt pkt;
	struct roxe_buf b;
	int n;

	if (len > sizeof(payload))
		return -EINVAL;
	memset(payload, FORGED, len);
	memcpy(a.smac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(a.dmac, "\x02\x00\x00\x00\x00\x02", 6);
	roxe_gid_from_v4(a.sgid, inet_addr(src));
	roxe_gid_from_v4(a.dgid, inet_addr(dst));
	if (roxe_port_tx_alloc(port, &b, 1) != 1)
		return -ENOBUFS;
	n = roxe_frame_build(b.data, b.cap, &a, &h, payload, len, &pkt);
	if (n < 0) {
		roxe_port_tx_free(port, &b, 1);
		return n;
	}
	b.len = (uint32_t)n;
	roxe_port_tx(port, &b, 1);
	roxe_port_flush(port);
	return 0;
}

/* Frames side 1 sent towards side 0 with source src (side 0's engine does
 * not run meanwhile: nobody polls it); all of them are taken. */
static int frames_from(struct pair *p, const char *src, int *total)
{
	struct roxe_port *port = roxe_loop_port(p->wire, 0);
	struct roxe_buf bufs[16];
	uint8_t want[16], sgid[16];
	int found = 0;
	unsigned n;

	roxe_gid_from_v4(want, inet_addr(src));
	*total = 0;
	while ((n = roxe_port_rx(port, bufs, 16)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct roxe_pkt pkt;

			if (roxe_parse(bufs[i].data, bufs[i].data + bufs[i].len, bufs[i].len,
				       &pkt) != ROXE_PKT_OK)
				continue;
			++*total;
			if (roxe_pkt_gids(bufs[i].data, bufs[i].data + bufs[i].len, &pkt, sgid,
					  NULL) == 0 && !memcmp(sgid, want, 16))
				found++;
		}
		roxe_port_rx_release(port, bufs, n);
	}
	return found;
}

static uint64_t qp_drops(struct roxe_qp *qp)
{
	return __atomic_load_n(&qp->stats->rx_drop_addr, __ATOMIC_RELAXED);
}

static uint64_t opcode_drops(struct roxe_qp *qp)
{
	return __atomic_load_n(&qp->stats->rx_drop_opcode, __ATOMIC_RELAXED);
}

static uint64_t eng_drops(struct roxe_device *dev)
{
	return __atomic_load_n(&dev->engines[0].stats->rx_drop_addr, __ATOMIC_RELAXED);
}

static int ud_send(struct roxe_qp *qp, struct ibv_ah *ah, uint32_t rqpn, void *addr,
		   uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = QKEY;
	return roxe_post_send(qp, &wr, &bad);
}

/* a's RDMA WRITE of 128 bytes (pattern seed) to the start of b's buffer
 * completes and lands: the victim's own traffic after a forgery. */
static void peer_write_lands(struct __test_metadata *_metadata, struct pair *p, uint32_t seed)
{
	struct side *a = &p->s[0], *b = &p->s[1];
	struct ibv_wc wc;

	fill_pattern(a->buf, 128, seed);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_RDMA_WRITE, 1, a->buf, 128, a->mr->lkey,
				(uintptr_t)b->buf, b->mr->rkey, IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 128));
}

FIXTURE(wire) {
	struct pair p;
};

FIXTURE_SETUP(wire)
{
	/* The virtual clock stands still: nothing here needs a timer, and
	 * no RC timer fires because the host was slow. */
	vc_start();
	ASSERT_EQ(0, pair_open_polled(&self->p, 1024, BUF, 1));
}

FIXTURE_TEARDOWN(wire)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* RC: the forger has the QPN, the next PSN and the rkey, but not the
 * peer's address (or not the victim's): its WRITEs are dropped and
 * counted, and the real WRITE at that PSN lands. Without the check the
 * forged WRITE lands and the real one is taken for a duplicate. */
TEST_F(wire, rc_forged_source_or_destination_dropped)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	static const uint8_t zero[128];
	uint32_t bqpn;
	struct ibv_wc wc;

	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 14, 7, 7));
	bqpn = roxe_qp_num(b->qp);
	/* a third host on the link */
	ASSERT_EQ(0, forge(&self->p, "10.99.0.66", "10.99.0.2", ROXE_OP_RC_RDMA_WRITE_ONLY,
			   bqpn, 100, (uintptr_t)b->buf, b->mr->rkey, 64));
	/* the peer's address, but to a destination not the QP's */
	ASSERT_EQ(0, forge(&self->p, "10.99.0.1", "10.99.0.9", ROXE_OP_RC_RDMA_WRITE_ONLY,
			   bqpn, 100, (uintptr_t)b->buf + 64, b->mr->rkey, 64));
	/* a SEND into its receive queue */
	ASSERT_EQ(0, post_recv1(b->qp, 9, b->buf + 1024, 256, b->mr->lkey));
	ASSERT_EQ(0, forge(&self->p, "10.99.0.66", "10.99.0.2", ROXE_OP_RC_SEND_ONLY,
			   bqpn, 100, 0, 0, 64));
	/* the engine counts each as it drops it: then it is done with it */
	wait_until(qp_drops(b->qp) >= 3 && eng_drops(b->dev) >= 3, 5000);
	EXPECT_EQ(0, memcmp(b->buf, zero, sizeof(zero)));
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	EXPECT_EQ(3u, qp_drops(b->qp));
	EXPECT_EQ(3u, eng_drops(b->dev));

	/* the victim's own traffic at that PSN */
	peer_write_lands(_metadata, &self->p, 4);
	fill_pattern(a->buf + 512, 64, 5);
	ASSERT_EQ(0, post_send1(a->qp, IBV_WR_SEND, 2, a->buf + 512, 64, a->mr->lkey, 0, 0,
				IBV_SEND_SIGNALED));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(9u, wc.wr_id);
	EXPECT_EQ(64u, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf + 512, b->buf + 1024, 64));
	EXPECT_EQ(3u, qp_drops(b->qp));
}

/* From the peer's own address, at the expected PSN, opcodes of UC and UD:
 * IBA's header validation drops them (counted in rx_drop_opcode) before
 * the PSN is looked at. Taken as an RC invalid request they put the QP
 * in ERR, one forged frame ending the connection. */
TEST_F(wire, rc_wrong_transport_opcode_dropped)
{
	struct side *b = &self->p.s[1];
	struct ibv_qp_attr at;
	uint32_t bqpn;

	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 14, 7, 7));
	bqpn = roxe_qp_num(b->qp);
	ASSERT_EQ(0, forge(&self->p, "10.99.0.1", "10.99.0.2", ROXE_OP_UC_SEND_ONLY,
			   bqpn, 100, 0, 0, 64));
	ASSERT_EQ(0, forge(&self->p, "10.99.0.1", "10.99.0.2", ROXE_OP_UD_SEND_ONLY,
			   bqpn, 100, 0, 0, 64));
	/* side 1's engine takes them by itself: wait for the count */
	wait_until(opcode_drops(b->qp) >= 2, 5000);
	EXPECT_EQ(2u, opcode_drops(b->qp));
	ASSERT_EQ(0, roxe_query_qp(b->qp, &at, IBV_QP_STATE, NULL));
	EXPECT_EQ(IBV_QPS_RTS, at.qp_state);
	/* PSN 100 is still the peer's */
	peer_write_lands(_metadata, &self->p, 6);
	EXPECT_EQ(0u, qp_drops(b->qp));
}

/* UD takes datagrams from anyone, but only to one of the port's own
 * addresses; the genuine datagram gets the receive WQE. */
TEST_F(wire, ud_not_to_a_local_address_dropped)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct ibv_ah *ah;
	struct ibv_wc wc;

	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	ASSERT_EQ(0, post_recv1(b->qp, 7, b->buf, 40 + 256, b->mr->lkey));
	ASSERT_EQ(0, forge(&self->p, "10.99.0.1", "10.99.0.9", ROXE_OP_UD_SEND_ONLY,
			   roxe_qp_num(b->qp), 0, 0, 0, 64));
	wait_until(qp_drops(b->qp) >= 1 && eng_drops(b->dev) >= 1, 5000);
	EXPECT_EQ(0, roxe_poll_cq(b->cq, 1, &wc));
	EXPECT_EQ(1u, qp_drops(b->qp));
	EXPECT_EQ(1u, eng_drops(b->dev));

	/* from an address the port has never heard of, to its own: taken */
	roxe_query_gid(b->dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(a->pd, &aa, &ah));
	fill_pattern(a->buf, 64, 6);
	ASSERT_EQ(0, ud_send(a->qp, ah, roxe_qp_num(b->qp), a->buf, 64, a->mr->lkey));
	ASSERT_EQ(1, poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(7u, wc.wr_id);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 40, 64));
	EXPECT_EQ(1u, qp_drops(b->qp));
	EXPECT_EQ(0, roxe_destroy_ah(ah));
}

/* An embedded UD WQE whose vector names a foreign source: it fails as
 * rxe fails a WQE without a usable AV, and no frame leaves from there. */
TEST_F(wire, ud_forged_av_source_fails)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	struct roxe_ah *rah;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int total;

	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	roxe_query_gid(a->dev, 0, &aa.grh.dgid);
	ASSERT_EQ(0, roxe_create_ah(b->pd, &aa, &ah));
	/* the vector as the application could rewrite it */
	rah = (struct roxe_ah *)ah;
	rah->av.sgid_addr._sockaddr_in.sin_family = AF_INET;
	rah->av.sgid_addr._sockaddr_in.sin_addr.s_addr = inet_addr("10.99.0.66");
	ASSERT_EQ(0, ud_send(b->qp, ah, roxe_qp_num(a->qp), b->buf, 64, b->mr->lkey));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, wc.status);
	sent_all(&self->p);
	EXPECT_EQ(0, frames_from(&self->p, "10.99.0.66", &total));

	/* its own address is fine (the QP is in SQE now: a fresh one) */
	rah->av.sgid_addr._sockaddr_in.sin_addr.s_addr = inet_addr("10.99.0.2");
	ASSERT_EQ(0, roxe_destroy_qp(b->qp));
	b->qp = NULL;
	ASSERT_EQ(0, qp_create(b, IBV_QPT_UD, &b->qp));
	ASSERT_EQ(0, qp_connect(b->qp, a->dev, 0, IBV_QPT_UD, IBV_MTU_1024, 2, 1, 0, 0, 0));
	ASSERT_EQ(0, ud_send(b->qp, ah, roxe_qp_num(a->qp), b->buf, 64, b->mr->lkey));
	ASSERT_EQ(1, poll_n(b->cq, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	sent_all(&self->p);
	EXPECT_EQ(1, frames_from(&self->p, "10.99.0.2", &total));
	EXPECT_EQ(1, total);
	EXPECT_EQ(0, roxe_destroy_ah(ah));
}

/* --- a served application's UD QP (roxed) ---------------------------------------- */
#define APP_QPN		4300u
#define APP_CQN		3u
#define APP_KEY		(55u << 8 | 7)
#define APP_IOVA	0x7f0000000000ull

static void app_event(void *ctx, struct roxe_cq *cq, bool solicited)
{
	(void)ctx;
	(void)cq;
	(void)solicited;
}

/*
 * The stock rxe provider writes wr.ud.ah_num when create_ah answered with
 * one; a hostile application may write any vector besides, or no number.
 * The datagram goes from the AH's source (the module's), to the AH's MAC;
 * ah_num 0, an unknown number or another PD's AH fail the WQE.
 */
TEST_F(wire, served_ud_addressed_by_ah_num_only)
{
	struct side *a = &self->p.s[0], *b = &self->p.s[1];
	struct ibv_qp_attr at = { 0 };	/* SQE: back to RTS */
	struct roxe_frame_addr ah = { .hop_limit = 64 };
	struct app_rings r = { 0 };
	struct roxe_cq *cq;
	struct roxe_qp *qp;
	struct roxe_mr *mr;
	struct roxe_pd *other_pd;
	struct ib_uverbs_wc uwc;
	struct ibv_wc wc;
	uint8_t sgid[16], dmac[6] = { 0x02, 0, 0, 0, 0, 1 }, *host;
	const uint32_t nums[] = { 7, 0, 9, 8 };	/* ok, none, unknown, another PD's */

	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_UD, IBV_MTU_1024, 1, 2, 0, 0, 0));
	ASSERT_EQ(0, app_rings_alloc(&r, 15, 1, 1, 63));
	host = aligned_alloc(4096, 4096);
	ASSERT_TRUE(host);
	memset(host, 0x5a, 4096);
	ASSERT_EQ(0, roxe_served_cq_create(b->dev, APP_CQN, r.cqb, r.cqg, app_event, NULL, 0, &cq));
	ASSERT_EQ(0, roxe_served_mr_add(b->pd, APP_KEY, APP_IOVA, 4096, IBV_ACCESS_LOCAL_WRITE,
					host, &mr));
	ASSERT_EQ(0, app_served_qp(&r, b->pd, APP_QPN, IBV_QPT_UD, cq,
				   (struct ibv_qp_cap){ 15, 15, 1, 1, 0 }, false, &qp));
	roxe_engine_set_kdb(&b->dev->engines[0], &r.ring, r.db_queued);
	roxe_query_gid(b->dev, 0, (union ibv_gid *)sgid);
	ASSERT_EQ(0, app_ud_up(qp, QKEY, sgid, dmac));

	/* the module's AHs: what ib_core resolved */
	memcpy(ah.sgid, sgid, 16);
	roxe_query_gid(a->dev, 0, (union ibv_gid *)ah.dgid);
	memcpy(ah.dmac, "\x02\x00\x00\x00\x00\x01", 6);
	ASSERT_EQ(0, roxe_served_ah_add(b->pd, 7, &ah));
	ASSERT_EQ(0, roxe_alloc_pd(b->dev, &other_pd));
	ASSERT_EQ(0, roxe_served_ah_add(other_pd, 8, &ah));
	/* a source that is not the port's is refused at creation too */
	roxe_gid_from_v4(ah.sgid, inet_addr("10.99.0.66"));
	EXPECT_EQ(-EADDRNOTAVAIL, roxe_served_ah_add(b->pd, 10, &ah));

	for (unsigned i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		struct rxe_send_wqe *w = roxe_queue_producer_slot(&r.sq_prod);
		int total;

		memset(w, 0, 1u << r.sqg.log2_elem);
		w->wr.wr_id = 100 + i;
		w->wr.opcode = IBV_WR_SEND;
		w->wr.send_flags = IBV_SEND_SIGNALED;
		w->wr.wr.ud.remote_qpn = roxe_qp_num(a->qp);
		w->wr.wr.ud.remote_qkey = QKEY;
		w->wr.wr.ud.ah_num = nums[i];
		/* and a vector of its own making: another source, a broadcast MAC */
		w->wr.wr.ud.av.sgid_addr._sockaddr_in.sin_family = AF_INET;
		w->wr.wr.ud.av.sgid_addr._sockaddr_in.sin_addr.s_addr = inet_addr("10.99.0.66");
		memset(w->wr.wr.ud.av.dmac, 0xff, 6);
		roxe_gid_from_v4(w->wr.wr.ud.av.grh.dgid.raw, inet_addr("10.99.0.1"));
		w->dma.length = w->dma.resid = 32;
		w->dma.num_sge = 1;
		w->dma.sge[0] = (struct rxe_sge){ APP_IOVA, 32, APP_KEY };
		roxe_queue_produce(&r.sq_prod);
		app_doorbell(&r, b->dev, APP_QPN);
		ASSERT_EQ(1, app_poll(&r.cq_cons, &uwc, 5000));
		EXPECT_EQ(100u + i, uwc.wr_id);
		sent_all(&self->p);
		EXPECT_EQ(0, frames_from(&self->p, "10.99.0.66", &total));
		if (i == 0) {
			EXPECT_EQ(IBV_WC_SUCCESS, uwc.status);
			EXPECT_EQ(1, total);
		} else {
			EXPECT_EQ(IBV_WC_LOC_QP_OP_ERR, uwc.status);
			EXPECT_EQ(0, total);
			/* SQE: back to RTS for the next case */
			at.qp_state = IBV_QPS_RTS;
			ASSERT_EQ(0, roxe_served_modify_qp(qp, &at, IBV_QP_STATE, sgid, dmac));
		}
	}
	(void)wc;

	atomic_store(&b->dev->engines[0].kdb, NULL);
	roxe_served_ah_del(b->dev, 7);
	roxe_served_ah_del(b->dev, 8);
	EXPECT_EQ(0, roxe_destroy_qp(qp));
	EXPECT_EQ(0, roxe_dereg_mr(mr));
	EXPECT_EQ(0, roxe_destroy_cq(cq));
	EXPECT_EQ(0, roxe_dealloc_pd(other_pd));
	app_rings_free(&r);
	free(host);
}

TEST_HARNESS_MAIN
