// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the served-ring path: what roxed's engine reads from
 * rings an application (roxe.ko's user) maps and writes at will. The input
 * is a program of steps over one served RC QP, its CQ and an MR (as
 * served_test.c sets them up), connected to an ordinary QP; both devices
 * are polled, so every engine turn runs here, in order:
 *   raw bytes into the next send or receive slot, or a plausible WQE with
 *   fuzzed fields; any header field (producer and consumer indices, index
 *   mask, slot size) of the SQ, RQ or CQ; doorbells; engine turns; modify
 *   to ERR, RESET (and back to RTS), SQD; the peer sending, writing and
 *   reading into the served QP, through the MR or a memory window (a type 1
 *   and a type 2 window, which BIND_MW WQEs bind).
 * ASan and UBSan report any access outside the rings and registered
 * memory; libFuzzer's -timeout catches a turn or a modify that never ends;
 * every modify the module could ask for must succeed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include "pair.h"
#include "fuzz_input.h"
#include "served_app.h"

#define BUF		(256u << 10)
#define APP_IOVA	0x7e0000000000ull
#define APP_KEY		(77u << 8 | 5)
#define APP_QPN		4242u
#define APP_CQN		9u
#define MAX_STEPS	64
#define APP_MW_KEY(i)	((ROXE_MW_INDEX_BASE + 3u + (i)) << 8 | 9u)

static struct {
	struct pair		p;
	struct app_rings	r;
	struct roxe_cq		*cq;
	struct roxe_qp		*qp;
	struct roxe_mr		*mr;
	struct ibv_mw		*mw[2];		/* type 1, type 2 */
	uint8_t			*buf;
	uint8_t			sgid[16];
} g;

static void on_event(void *ctx, struct roxe_cq *cq, bool solicited)
{
	(void)ctx;
	(void)cq;
	(void)solicited;
}

static void turns(unsigned n)
{
	struct ibv_wc wc[16];

	for (unsigned i = 0; i < n; i++) {
		roxe_engine_poll(&g.p.s[0].dev->engines[0]);
		roxe_engine_poll(&g.p.s[1].dev->engines[0]);
		while (roxe_poll_cq(g.p.s[0].cq, 16, wc) > 0)
			;
	}
	/* the application's CQ: read everything, from its real shape */
	__atomic_store_n(&g.r.cqb->consumer_index,
			 __atomic_load_n(&g.r.cqb->producer_index, __ATOMIC_ACQUIRE) & g.r.cqg.mask,
			 __ATOMIC_RELEASE);
}

/* The engines are polled here: the ring alone, no eventfd. */
static void doorbell(void)
{
	app_doorbell(&g.r, NULL, APP_QPN);
}

static int modify(enum ibv_qp_state st, int mask, struct ibv_qp_attr *at)
{
	uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 1 };

	at->qp_state = st;
	return roxe_served_modify_qp(g.qp, at, IBV_QP_STATE | mask, g.sgid, dmac);
}

/* RESET -> RTS on both ends, as a connection manager would. */
static void pair_up(void)
{
	struct side *s0 = &g.p.s[0];
	struct ibv_qp_attr at = { .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_REMOTE_ATOMIC };
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

	CHECK(modify(IBV_QPS_RESET, 0, &at) == 0);
	CHECK(roxe_modify_qp(s0->qp, &r, IBV_QP_STATE) == 0);
	CHECK(modify(IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, &at) == 0);
	memset(&at, 0, sizeof(at));
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = roxe_qp_num(s0->qp);
	at.rq_psn = 100;
	at.max_dest_rd_atomic = 4;
	at.min_rnr_timer = 1;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = 1;
	at.ah_attr.grh.hop_limit = 64;
	roxe_query_gid(s0->dev, 0, &at.ah_attr.grh.dgid);
	CHECK(modify(IBV_QPS_RTR, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &at) == 0);
	memset(&at, 0, sizeof(at));
	at.sq_psn = 200;
	at.timeout = 1;		/* 8 us: retries happen within a run */
	at.retry_cnt = 2;
	at.rnr_retry = 2;
	at.max_rd_atomic = 4;
	CHECK(modify(IBV_QPS_RTS, IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, &at) == 0);
	CHECK(qp_connect(s0->qp, g.p.s[1].dev, APP_QPN, IBV_QPT_RC, IBV_MTU_1024, 100, 200,
			 1, 2, 2) == 0);
	/* what the application believes of its rings: the engine's indices */
	roxe_queue_init_producer(&g.r.sq_prod, g.r.sq, g.r.sqg);
	roxe_queue_init_producer(&g.r.rq_prod, g.r.rq, g.r.rqg);
}

static int setup(void)
{
	struct side *s0 = &g.p.s[0], *s1 = &g.p.s[1];

	CHECK(pair_open_polled(&g.p, 1024, BUF, 3) == 0);
	CHECK(app_rings_alloc(&g.r, 15, 4, 2, 63) == 0);
	g.buf = aligned_alloc(4096, BUF);
	CHECK(g.buf);
	memset(g.buf, 0, BUF);
	CHECK(roxe_served_cq_create(s1->dev, APP_CQN, g.r.cqb, g.r.cqg, on_event, NULL, 0, &g.cq) == 0);
	CHECK(roxe_served_mr_add(s1->pd, APP_KEY, APP_IOVA, BUF,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND,
				 g.buf, &g.mr) == 0);
	CHECK(roxe_served_mw_add(s1->pd, APP_MW_KEY(0), IBV_MW_TYPE_1, &g.mw[0]) == 0);
	CHECK(roxe_served_mw_add(s1->pd, APP_MW_KEY(1), IBV_MW_TYPE_2, &g.mw[1]) == 0);
	CHECK(app_served_qp(&g.r, s1->pd, APP_QPN, IBV_QPT_RC, g.cq,
			    (struct ibv_qp_cap){ 15, 15, 4, 2, 64 }, true, &g.qp) == 0);
	roxe_engine_set_kdb(&s1->dev->engines[0], &g.r.ring, g.r.db_queued);
	CHECK(qp_create_cap(s0, IBV_QPT_RC, 64, 64, &s0->qp) == 0);
	roxe_query_gid(s1->dev, 0, (union ibv_gid *)g.sgid);
	return 0;
}


/* A window's key as the engine has it now (binds change its low byte). */
static uint32_t mw_key(unsigned i)
{
	return ((const struct roxe_mw_priv *)g.mw[i & 1])->rkey;
}

/* A WQE a confused or hostile provider might write: plausible shape,
 * fuzzed numbers (lengths, keys, addresses near the MR, SGE counts). */
static void plausible_wqe(struct input *in, struct rxe_send_wqe *w)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV, ROXE_KABI_WR_REG_MR, IBV_WR_BIND_MW,
	};
	uint8_t shape = u8(in);

	memset(w, 0, 1u << g.r.sqg.log2_elem);
	w->wr.wr_id = u32(in);
	w->wr.opcode = ops[shape % (sizeof(ops) / sizeof(ops[0]))];
	w->wr.send_flags = u8(in);
	w->wr.ex.imm_data = u32(in);
	w->wr.wr.rdma.remote_addr = APP_IOVA + (int32_t)u32(in);
	w->wr.wr.rdma.rkey = shape & 0x80 ? u32(in) : APP_KEY;
	w->iova = w->wr.wr.rdma.remote_addr;
	w->dma.length = u8(in) & 1 ? u32(in) : u8(in) * 64u;
	w->dma.resid = w->dma.length;
	w->dma.num_sge = u8(in) % 8;
	for (unsigned i = 0; i < 4; i++) {
		w->dma.sge[i].addr = APP_IOVA + (int32_t)(u32(in) % (2 * BUF)) - BUF / 2;
		w->dma.sge[i].length = u8(in) * 16u;
		w->dma.sge[i].lkey = u8(in) & 1 ? u32(in) : APP_KEY;
	}
	/* the mw view of the same union: a bind of either window, or junk;
	 * LOCAL_INV of a window's key */
	if (w->wr.opcode == IBV_WR_BIND_MW) {
		uint8_t pick = u8(in);

		w->wr.wr.mw.addr = APP_IOVA + (int32_t)u32(in);
		w->wr.wr.mw.length = pick & 2 ? u32(in) : u8(in) * 256u;
		w->wr.wr.mw.mr_lkey = pick & 4 ? u32(in) : APP_KEY;
		w->wr.wr.mw.mw_rkey = pick & 8 ? u32(in) : mw_key(pick);
		w->wr.wr.mw.rkey = u8(in);
		w->wr.wr.mw.access = pick & 16 ? u32(in) : u8(in) & 0x2f;
	} else if (w->wr.opcode == IBV_WR_LOCAL_INV && (shape & 0x40)) {
		w->wr.ex.invalidate_rkey = mw_key(shape >> 5);
	}
}

static void raw_slot(struct input *in, void *slot, uint32_t bytes)
{
	uint8_t *d = slot;

	for (uint32_t i = 0; i < bytes && in->left; i++)
		d[i] = u8(in);
}

static void header(struct input *in)
{
	struct rxe_queue_buf *b[] = { g.r.sq, g.r.rq, g.r.cqb };
	struct rxe_queue_buf *q = b[u8(in) % 3];

	switch (u8(in) % 4) {
	case 0:
		__atomic_store_n(&q->producer_index, u32(in), __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(&q->consumer_index, u32(in), __ATOMIC_RELEASE);
		break;
	case 2:
		q->index_mask = u32(in);
		break;
	default:
		q->log2_elem_size = u32(in);
		break;
	}
}

static void peer_op(struct input *in)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND_WITH_IMM,
		IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct side *s0 = &g.p.s[0];
	enum ibv_wr_opcode op = ops[u8(in) % 5];
	uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : u8(in) * 24u;
	uint64_t raddr = APP_IOVA + (u32(in) % BUF) / 8 * 8;
	uint8_t key = u8(in);

	post_send1(s0->qp, op, 1, s0->buf, len, s0->mr->lkey, raddr,
		   key & 1 ? mw_key(key >> 1) : APP_KEY, IBV_SEND_SIGNALED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct input in = { data, size };
	struct ibv_qp_attr at;

	if (!ready)
		ready = !setup();
	pair_up();
	for (unsigned step = 0; step < MAX_STEPS && in.left; step++) {
		switch (u8(&in) % 10) {
		case 0:		/* raw bytes into the next send slot, posted */
			raw_slot(&in, roxe_queue_producer_slot(&g.r.sq_prod), 1u << g.r.sqg.log2_elem);
			roxe_queue_produce(&g.r.sq_prod);
			doorbell();
			break;
		case 1:		/* a plausible send WQE */
			plausible_wqe(&in, roxe_queue_producer_slot(&g.r.sq_prod));
			roxe_queue_produce(&g.r.sq_prod);
			doorbell();
			break;
		case 2:		/* raw bytes into the next receive slot */
			raw_slot(&in, roxe_queue_producer_slot(&g.r.rq_prod), 1u << g.r.rqg.log2_elem);
			roxe_queue_produce(&g.r.rq_prod);
			break;
		case 3:		/* a WQE rewritten after its doorbell */
			raw_slot(&in, roxe_queue_slot(&g.r.sq_prod, g.r.sq_prod.index - 1 - u8(&in) % 4),
				 1u << g.r.sqg.log2_elem);
			break;
		case 4:
			header(&in);
			break;
		case 5:
			doorbell();
			break;
		case 6:
			turns(1 + u8(&in) % 8);
			break;
		case 7:		/* what the module may ask for at any time */
			memset(&at, 0, sizeof(at));
			CHECK(modify(IBV_QPS_ERR, 0, &at) == 0);
			break;
		case 8:
			pair_up();
			break;
		default:
			peer_op(&in);
			break;
		}
	}
	turns(16);
	/* the module's destroy path starts with a reset: it must return */
	memset(&at, 0, sizeof(at));
	CHECK(modify(IBV_QPS_RESET, 0, &at) == 0);
	return 0;
}
