// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_verbs: the verbs objects of roxe.ko through the stock libibverbs and
 * its rxe provider, run in the VM guest by kmod_basic.sh.
 *
 *   kmod_verbs DEVICE GID_INDEX
 *   kmod_verbs DEVICE GID_INDEX --hold FILE
 *   kmod_verbs DEVICE GID_INDEX --cq
 *
 * PD, MR (pinned), CQ with a completion channel, SRQ, RC/UC/UD QPs with and
 * without the SRQ, each QP through RESET -> INIT -> RTR -> RTS (RC/UC toward
 * our own GID), query_qp, an AH, receive posts (straight into the mapped
 * queues), and the limits (too many SGEs refused). The send doorbell is
 * taken (roxed serves QPs). Every object is destroyed.
 * Prints one "ok:" line per check; exits 0 when all pass.
 *
 * --hold FILE: create a PD, MR, CQ and QP, create FILE and wait until it is
 * removed (meanwhile the test kills roxed and unloads roxe.ko), then read
 * the mapped CQ, write the mapped receive queue and destroy everything: the
 * memory must still be there and nothing may crash; verbs calls may fail.
 *
 * --cq: create and destroy one CQ, print the outcome; exit 0 if created
 * (the test stops roxed to see creation time out instead).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "verbs_util.h"

static int to_rts(struct ibv_qp *qp, enum ibv_qp_type type, union ibv_gid *gid,
		  int gid_index, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.qkey = 0x11111111,
	};
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int err;

	init_mask |= type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (type == IBV_QPT_UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	err = ibv_modify_qp(qp, &a, init_mask);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_UD) {
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	} else {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dest_qpn;
		a.rq_psn = 0x123;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *gid;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		err = ibv_modify_qp(qp, &a, mask);
	}
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x456;
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static int hold(struct ibv_context *ctx, const char *file)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	static char buf[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = cq && pd ? ibv_create_qp(pd, &qa) : NULL;
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr ? mr->lkey : 0 };
	struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int fd, n, r;

	if (!mr || !qp) {
		printf("FAIL: hold: objects not created\n");
		return 1;
	}
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	if (fd >= 0)
		close(fd);
	printf("ok: hold: PD, MR, CQ, QP %u created, waiting\n", qp->qp_num);
	fflush(stdout);
	while (access(file, F_OK) == 0)
		usleep(100000);
	n = ibv_poll_cq(cq, 1, &wc);		/* reads the mapped CQ */
	r = ibv_post_recv(qp, &rw, &bad);	/* writes the mapped RQ */
	printf("ok: hold: after the device went: poll_cq %d, post_recv %d, "
	       "destroy_qp %d, destroy_cq %d, dereg_mr %d, dealloc_pd %d, close %d\n",
	       n, r, ibv_destroy_qp(qp), ibv_destroy_cq(cq), ibv_dereg_mr(mr),
	       ibv_dealloc_pd(pd), ibv_close_device(ctx));
	return 0;
}

int main(int argc, char **argv)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	static const char *const names[] = { "RC", "UC", "UD" };
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	union ibv_gid gid;
	size_t len = 1 << 20;
	char *buf;
	int gidx, err;

	if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--hold")) &&
	    !(argc == 4 && !strcmp(argv[3], "--cq"))) {
		fprintf(stderr, "usage: kmod_verbs DEVICE GID_INDEX [--hold FILE | --cq]\n");
		return 2;
	}
	gidx = atoi(argv[2]);
	ctx = open_dev(argv[1]);
	if (!ctx) {
		printf("FAIL: cannot open %s\n", argv[1]);
		return 1;
	}
	if (argc == 5)
		return hold(ctx, argv[4]);
	if (argc == 4) {
		struct ibv_cq *c = ibv_create_cq(ctx, 8, NULL, NULL, 0);

		printf("create_cq: %s\n", c ? "created" : strerror(errno));
		if (c)
			ibv_destroy_cq(c);
		ibv_close_device(ctx);
		return c ? 0 : 1;
	}
	CHECK(ibv_query_gid(ctx, 1, gidx, &gid) == 0, "query_gid %d", gidx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	buf = aligned_alloc(4096, len);
	memset(buf, 0x5a, len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr && mr->lkey == mr->rkey, "reg_mr 1 MiB: lkey 0x%x", mr ? mr->lkey : 0);
	ch = ibv_create_comp_channel(ctx);
	cq = ibv_create_cq(ctx, 100, NULL, ch, 0);
	CHECK(cq && cq->cqe >= 100, "create_cq 100: %d entries", cq ? cq->cqe : 0);
	if (!pd || !mr || !cq)
		return 1;
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "req_notify_cq");
	struct ibv_wc wc;
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "poll_cq on the mapped queue: empty");

	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 50, .max_sge = 2 } };
	srq = ibv_create_srq(pd, &sa);
	CHECK(srq, "create_srq 50 x 2");
	struct ibv_srq_attr sl = { .srq_limit = 5 };
	CHECK(srq && ibv_modify_srq(srq, &sl, IBV_SRQ_LIMIT) == 0, "modify_srq limit 5");
	sl.srq_limit = 0;
	CHECK(srq && ibv_query_srq(srq, &sl) == 0 && sl.srq_limit == 5,
	      "query_srq: limit 5");
	/* roxe(7) LIMITS: SRQs do not resize on roxe0 (rxe's do) */
	struct ibv_srq_attr sw = { .max_wr = 100 };
	CHECK(srq && ibv_modify_srq(srq, &sw, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	      "modify_srq max_wr 100: EOPNOTSUPP (no SRQ resize)");

	uint32_t last_qpn = 0;	/* the QP destroyed last */

	for (int s = 0; s < 2; s++) {
		for (unsigned t = 0; t < 3; t++) {
			struct ibv_qp_init_attr qa = {
				.send_cq = cq, .recv_cq = cq, .srq = s ? srq : NULL,
				.qp_type = types[t],
				.cap = { .max_send_wr = 64, .max_recv_wr = 64,
					 .max_send_sge = 4, .max_recv_sge = 4,
					 .max_inline_data = 64 },
			};
			struct ibv_qp *qp = ibv_create_qp(pd, &qa);
			struct ibv_qp_attr qattr;
			struct ibv_qp_init_attr qinit;
			const char *n = names[t], *with = s ? " with SRQ" : "";

			CHECK(qp, "create_qp %s%s: qpn %u, send %u x %u inline %u, recv %u",
			      n, with, qp ? qp->qp_num : 0, qa.cap.max_send_wr,
			      qa.cap.max_send_sge, qa.cap.max_inline_data, qa.cap.max_recv_wr);
			if (!qp)
				continue;
			/* as rxe's (xa_alloc_cyclic): a destroyed QP's number is
			 * not the next one handed out, or a peer's ib_cm still
			 * holding its connection refuses the new one as stale */
			CHECK(!last_qpn || qp->qp_num > last_qpn,
			      "%s%s: qpn %u after %u, destroyed: QPNs cycle", n, with,
			      qp->qp_num, last_qpn);
			last_qpn = qp->qp_num;
			err = to_rts(qp, types[t], &gid, gidx, qp->qp_num);
			CHECK(!err, "%s%s: RESET -> INIT -> RTR -> RTS (%s)", n, with, strerror(err));
			err = ibv_query_qp(qp, &qattr, IBV_QP_STATE | IBV_QP_SQ_PSN, &qinit);
			CHECK(!err && qattr.qp_state == IBV_QPS_RTS && qattr.sq_psn == 0x456,
			      "%s%s: query_qp says RTS, sq_psn 0x%x", n, with, qattr.sq_psn);
			if (!s) {
				struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
				struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

				CHECK(ibv_post_recv(qp, &rw, &bad) == 0, "%s: post_recv", n);
			}
			struct ibv_qp_attr bad_attr = { .qp_state = IBV_QPS_RTR };
			CHECK(ibv_modify_qp(qp, &bad_attr, IBV_QP_STATE) == EINVAL,
			      "%s%s: RTS -> RTR refused", n, with);
			CHECK(ibv_destroy_qp(qp) == 0, "%s%s: destroy_qp", n, with);
		}
	}

	/* the doorbell: roxed serves QPs, so the module takes it */
	{
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_qp *qp = ibv_create_qp(pd, &qa);
		struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr sw = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		if (qp && !to_rts(qp, IBV_QPT_RC, &gid, gidx, qp->qp_num)) {
			err = ibv_post_send(qp, &sw, &bad);
			CHECK(err == 0, "post_send doorbell: %s (roxed serves QPs)",
			      strerror(err));
		} else {
			CHECK(0, "doorbell QP");
		}
		if (qp)
			ibv_destroy_qp(qp);
	}

	{
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 33, .max_recv_sge = 1 } };
		struct ibv_qp *qp = ibv_create_qp(pd, &qa);

		CHECK(!qp, "create_qp with 33 SGEs refused");
		if (qp)
			ibv_destroy_qp(qp);
	}

	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gidx, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	CHECK(ah, "create_ah to our own GID");
	if (ah)
		CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");

	if (srq)
		CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	CHECK(ibv_dereg_mr(mr) == 0, "dereg_mr");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	free(buf);
	return failed;
}
