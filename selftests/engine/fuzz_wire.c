// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for what a peer puts on the wire into an RC QP: frames
 * with a valid ICRC from the QP's connected peer address (what the
 * engine's earlier checks let through), forged by the input. Two polled
 * devices on a loop wire, an RC QP each, connected; b is the target. The
 * input is a program of steps:
 *   a request to b's QP: any RC request opcode, a PSN near the one b
 *   expects (mostly ahead of it: the out-of-sequence stash, stash.c, keeps
 *   those and runs them once the gap fills), a payload of fuzzed length,
 *   R_Key (b's MR's or not), address (in, near or outside the MR), DMA
 *   length, AckReq, immediate and invalidate keys, atomics' operands;
 *   a response to b's QP as a requester: ACK, NAK of any code, RNR NAK,
 *   READ responses, atomic ACKs, with PSNs near what b has outstanding;
 *   real traffic from either QP (SEND, WRITE, READ, atomics); receive WQEs
 *   for b; engine turns; b's QP to ERR, or RESET and reconnected.
 * ASan and UBSan report any access outside registered memory; every step
 * is bounded, so libFuzzer's -timeout catches a turn that never ends; the
 * stash never holds more than its pool, and nothing of a QP in ERR or
 * RESET.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include "pair.h"
#include "fuzz_input.h"
#include "transport/transport.h"
#include "transport/engine.h"
#include "transport/stash.h"
#include "wire/psn.h"

#define BUF		(256u << 10)
#define MTU		1024u
#define MAX_STEPS	96
#define PSN_A		0x100
#define PSN_B		0xfff0f0	/* b's requester wraps its PSNs */

static struct pair g;

static struct side *A(void) { return &g.s[0]; }
static struct side *B(void) { return &g.s[1]; }


static void turns(unsigned n)
{
	struct ibv_wc wc[16];

	for (unsigned i = 0; i < n; i++) {
		roxe_engine_poll(&A()->dev->engines[0]);
		roxe_engine_poll(&B()->dev->engines[0]);
		while (roxe_poll_cq(A()->cq, 16, wc) > 0)
			;
		while (roxe_poll_cq(B()->cq, 16, wc) > 0)
			;
	}
	CHECK(B()->qp->resp.stashed <= ROXE_STASH_SLOTS);
}

static void connect_both(void)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

	CHECK(roxe_modify_qp(A()->qp, &r, IBV_QP_STATE) == 0);
	CHECK(roxe_modify_qp(B()->qp, &r, IBV_QP_STATE) == 0);
	turns(1);
	CHECK(B()->qp->resp.stashed == 0);
	/* timeout 1 (8 us), few retries: timers fire within a run */
	CHECK(qp_connect(A()->qp, B()->dev, roxe_qp_num(B()->qp), IBV_QPT_RC, IBV_MTU_1024,
			 PSN_A, PSN_B, 1, 2, 2) == 0);
	CHECK(qp_connect(B()->qp, A()->dev, roxe_qp_num(A()->qp), IBV_QPT_RC, IBV_MTU_1024,
			 PSN_B, PSN_A, 1, 2, 2) == 0);
}

static int setup(void)
{
	CHECK(pair_open_polled(&g, MTU, BUF, 3) == 0);
	CHECK(qp_create_cap(A(), IBV_QPT_RC, 64, 64, &A()->qp) == 0);
	CHECK(qp_create_cap(B(), IBV_QPT_RC, 64, 64, &B()->qp) == 0);
	return 0;
}

/* A frame from a's QP's address to b's QP, as the input says. */
static void inject(struct input *in, bool request)
{
	static const uint8_t req_ops[] = {
		ROXE_OP_RC_SEND_FIRST, ROXE_OP_RC_SEND_MIDDLE, ROXE_OP_RC_SEND_LAST,
		ROXE_OP_RC_SEND_LAST_WITH_IMMEDIATE, ROXE_OP_RC_SEND_ONLY,
		ROXE_OP_RC_SEND_ONLY_WITH_IMMEDIATE, ROXE_OP_RC_SEND_LAST_WITH_INVALIDATE,
		ROXE_OP_RC_SEND_ONLY_WITH_INVALIDATE, ROXE_OP_RC_RDMA_WRITE_FIRST,
		ROXE_OP_RC_RDMA_WRITE_MIDDLE, ROXE_OP_RC_RDMA_WRITE_LAST,
		ROXE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, ROXE_OP_RC_RDMA_WRITE_ONLY,
		ROXE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROXE_OP_RC_RDMA_READ_REQUEST,
		ROXE_OP_RC_COMPARE_SWAP, ROXE_OP_RC_FETCH_ADD, ROXE_OP_RC_ATOMIC_WRITE,
		ROXE_OP_RC_FLUSH,
	};
	static const uint8_t resp_ops[] = {
		ROXE_OP_RC_ACKNOWLEDGE, ROXE_OP_RC_ATOMIC_ACKNOWLEDGE,
		ROXE_OP_RC_RDMA_READ_RESPONSE_FIRST, ROXE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
		ROXE_OP_RC_RDMA_READ_RESPONSE_LAST, ROXE_OP_RC_RDMA_READ_RESPONSE_ONLY,
	};
	struct roxe_qp *bq = B()->qp;
	struct roxe_port *port = roxe_loop_port(g.wire, 0);
	struct roxe_frame_hdr h = { 0 };
	uint8_t shape = u8(in), where = u8(in);
	uint32_t len, base;
	struct roxe_pkt pkt;
	struct roxe_buf b;

	h.opcode = request ? req_ops[shape % sizeof(req_ops)] : resp_ops[shape % sizeof(resp_ops)];
	h.pkey = ROXE_DEFAULT_PKEY;
	h.dqpn = roxe_qp_num(bq);
	/* requests: mostly ahead of what b expects (the stash); responses:
	 * near what b has outstanding */
	base = request ? bq->resp.psn : bq->comp.psn;
	h.psn = (base + (int8_t)u8(in) + (request && (where & 1) ? 64 : 0)) & ROXE_PSN_MASK;
	h.ackreq = where & 2;
	h.syndrome = u8(in);
	h.msn = u8(in);
	h.rkey = where & 4 ? u32(in) : B()->mr->rkey;
	h.va = (uintptr_t)B()->buf + (int32_t)(where & 8 ? u32(in) : u32(in) % BUF);
	h.dma_len = where & 16 ? u32(in) : u8(in) * 64u;
	h.imm = u32(in);
	h.inv_rkey = where & 32 ? B()->mr->rkey : u32(in);
	h.swap_add = u32(in);
	h.compare = u32(in);
	h.orig = u32(in);
	h.flush_type = u8(in);
	h.flush_level = u8(in);
	len = (where & 64) ? MTU : u8(in) * 8u;
	if (h.opcode == ROXE_OP_RC_ATOMIC_WRITE)
		len = ROXE_ATOMIC_WRITE_LEN;
	if (roxe_port_tx_alloc(port, &b, 1) != 1)
		return;
	if (roxe_frame_hdrs(b.data, b.cap, &A()->qp->path, &h, len, &pkt)) {
		roxe_port_tx_free(port, &b, 1);
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		b.data[pkt.payload_off + i] = (uint8_t)(i * 31 + shape);
	b.len = roxe_frame_seal(b.data, &pkt);
	roxe_port_tx(port, &b, 1);
	roxe_port_flush(port);
}

static void traffic(struct input *in, struct side *from, struct side *to)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND_WITH_IMM,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	enum ibv_wr_opcode op = ops[u8(in) % 6];
	uint32_t len = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : u8(in) * 64u;
	uint64_t off = (u32(in) % (BUF - 16384)) / 8 * 8;

	post_send1(from->qp, op, 1, from->buf + off, len, from->mr->lkey,
		   (uintptr_t)to->buf + off, to->mr->rkey, IBV_SEND_SIGNALED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct input in = { data, size };
	struct ibv_qp_attr at;

	if (!ready)
		ready = !setup();
	connect_both();
	for (unsigned step = 0; step < MAX_STEPS && in.left; step++) {
		switch (u8(&in) % 9) {
		case 0:
		case 1:
		case 2:
			inject(&in, true);
			break;
		case 3:
			inject(&in, false);
			break;
		case 4:
			traffic(&in, A(), B());
			break;
		case 5:
			traffic(&in, B(), A());
			break;
		case 6:
			post_recv1(B()->qp, 7, B()->buf + (u8(&in) % 64) * 4096u, 4096, B()->mr->lkey);
			break;
		case 7:
			turns(1 + u8(&in) % 8);
			break;
		default:
			at.qp_state = u8(&in) & 1 ? IBV_QPS_ERR : IBV_QPS_RESET;
			roxe_modify_qp(B()->qp, &at, IBV_QP_STATE);
			turns(1);
			CHECK(B()->qp->resp.stashed == 0);	/* flushed or reset */
			connect_both();
			break;
		}
	}
	turns(16);
	return 0;
}
