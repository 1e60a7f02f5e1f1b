// SPDX-License-Identifier: GPL-2.0-only
/*
 * ibv_resize_cq on roxe0 through the stock rxe provider (issue #17): two
 * RC QPs of one roxe0 connected to each other (loopback); QP a's CQ holds
 * 8 unpolled receive completions, then
 *   - a resize to 4 (fewer than outstanding) fails with EINVAL;
 *   - a resize up to 100, then down to exactly 8, succeeds and the 8
 *     completions come out in order;
 *   - 200 SEND round trips go on over the resized CQ (resized up again
 *     half way), every completion there.
 * Usage: kmod_resize_cq DEV
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "verbs_util.h"

#define N_OUT	8
#define ROUNDS	200
#define LEN	64

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, LEN, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, LEN, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* One completion of cq within 10 s: 1, or 0 (none), or -1 (poll error). */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 100000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep(100);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = open_dev(argc > 1 ? argv[1] : "roxe0");
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	static uint8_t buf[4 * 4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_cq *cqb = ctx ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_init_attr qb = qa;
	struct ibv_qp *a = NULL, *b = NULL;
	union ibv_gid gid;
	struct ibv_wc wc;
	int gidx, err, n, good;

	qb.send_cq = qb.recv_cq = cqb;
	if (mr && cq && cqb) {
		a = ibv_create_qp(pd, &qa);
		b = ibv_create_qp(pd, &qb);
	}
	gidx = ctx ? find_gid(ctx, &gid) : -1;
	if (!a || !b || gidx < 0) {
		CHECK(0, "setup: device, PD, MR, CQs, QPs, IPv4 RoCE v2 GID (%s)", strerror(errno));
		return 1;
	}
	err = rc_connect(a, 0, b->qp_num, &gid, gidx);
	if (!err)
		err = rc_connect(b, 0, a->qp_num, &gid, gidx);
	CHECK(!err, "QPs %u and %u connected on %s (gid %d)", a->qp_num, b->qp_num,
	      ibv_get_device_name(ctx->device), gidx);
	if (err)
		return 1;

	/* 8 receive completions on a's CQ, left unpolled */
	for (int i = 0; i < N_OUT; i++) {
		post_recv(a, mr, buf + 4096, i);
		post_send(b, mr, buf + 8192, 100 + i);
	}
	for (n = 0; n < N_OUT && poll1(cqb, &wc) == 1 && wc.status == IBV_WC_SUCCESS; n++)
		;
	CHECK(n == N_OUT, "%d SENDs from b completed", n);
	usleep(200000);		/* a's receive completions went in before their ACKs */

	err = ibv_resize_cq(cq, N_OUT / 2);
	CHECK(err == EINVAL, "resize to %d with %d outstanding: %s (EINVAL expected), cqe %d",
	      N_OUT / 2, N_OUT, strerror(err), cq->cqe);
	err = ibv_resize_cq(cq, 100);
	CHECK(!err && cq->cqe >= 100, "resize up to 100: %s, cqe %d", strerror(err), cq->cqe);
	err = ibv_resize_cq(cq, N_OUT);
	CHECK(!err && cq->cqe >= N_OUT && cq->cqe < 100, "resize down to %d: %s, cqe %d", N_OUT,
	      strerror(err), cq->cqe);
	for (n = 0; n < N_OUT; n++)
		if (poll1(cq, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.wr_id != (uint64_t)n || wc.byte_len != LEN)
			break;
	CHECK(n == N_OUT, "the %d completions kept, in order (%d good)", N_OUT, n);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "and no more");

	/* round trips over the resized CQ */
	for (good = 0; good < ROUNDS; good++) {
		if (good == ROUNDS / 2 && ibv_resize_cq(cq, 64))
			break;
		if (post_recv(a, mr, buf + 4096, 1000 + good) ||
		    post_recv(b, mr, buf + 12288, 2000 + good) ||
		    post_send(a, mr, buf, 3000 + good) ||
		    poll1(cq, &wc) != 1 || wc.status || wc.wr_id != 3000u + good ||
		    poll1(cqb, &wc) != 1 || wc.status || wc.wr_id != 2000u + good ||
		    post_send(b, mr, buf + 8192, 4000 + good) ||
		    poll1(cqb, &wc) != 1 || wc.status || wc.wr_id != 4000u + good ||
		    poll1(cq, &wc) != 1 || wc.status || wc.wr_id != 1000u + good)
			break;
	}
	CHECK(good == ROUNDS, "%d/%d SEND round trips over the resized CQ (cqe %d)", good, ROUNDS,
	      cq->cqe);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(cqb);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failed;
}
