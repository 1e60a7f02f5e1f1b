// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_revoke: a DEREG_MR that times out must not kill roxed (issue #15,
 * finding 6). Run in the VM guest by kmod_races.sh through the stock
 * libibverbs, one process with both devices:
 *
 *   kmod_revoke ROXE_DEV ROXE_GID PEER_DEV PEER_GID ROXED_PID ROUNDS
 *
 * Each round: a fresh RC connection between roxe's QP and the peer's (kernel
 * rxe), an MR on roxe with remote write; the peer WRITEs 64 KiB into it and
 * the bytes must land (roxed serves). Then the peer starts a WRITE of 1 MiB
 * into it, roxed is stopped (SIGSTOP) mid-way, the peer queues another
 * WRITE, and ibv_dereg_mr() runs: roxed does not answer, so after the
 * module's 2 s the module revokes roxed's mapping of the MR and the pages
 * go back to the application, which unmaps them. SIGCONT: roxed finds the
 * peer's frames for the revoked MR waiting and must live on (its pid still
 * there, not a zombie). On a fresh connection, a READ through the old rkey
 * must then end in a remote access error: roxed learnt of the dereg,
 * however late, and serves nothing from the revoked range. The next
 * round's fresh connection shows it still serves.
 * Prints one "ok:" line per check; exits 0 when all pass.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include "verbs_util.h"

#define BIG	(1U << 20)
#define SMALL	(64U << 10)

struct end {
	struct ibv_context *ctx;
	int gid_index;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int to_rts(struct end *e, const struct end *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x100;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int make_qp(struct end *e)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	e->qp = ibv_create_qp(e->pd, &init);
	return e->qp ? 0 : -1;
}

/* The completion of WR id on cq within secs seconds (others are dropped):
 * its status, or -1.
 */
static int wait_wc(struct ibv_cq *cq, double secs, uint64_t id)
{
	double end = now() + secs;
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			return -1;
		if (n && wc.wr_id == id)
			return wc.status;
		if (!n && now() > end)
			return -1;
		if (!n)
			usleep(200);
	}
}

static int post_write(struct end *p, struct ibv_mr *local, uint32_t len, uint64_t raddr,
		      uint32_t rkey, uint64_t id)
{
	struct ibv_sge s = { .addr = (uintptr_t)local->addr, .length = len, .lkey = local->lkey };
	struct ibv_send_wr w = {
		.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(p->qp, &w, &bad);
}

static int post_read(struct end *p, struct ibv_mr *local, uint32_t len, uint64_t raddr,
		     uint32_t rkey, uint64_t id)
{
	struct ibv_sge s = { .addr = (uintptr_t)local->addr, .length = len, .lkey = local->lkey };
	struct ibv_send_wr w = {
		.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(p->qp, &w, &bad);
}

/* Both QPs gone, and whatever their CQs still hold. */
static void drop_qps(struct end *r, struct end *p)
{
	struct ibv_wc wc;

	ibv_destroy_qp(r->qp);
	ibv_destroy_qp(p->qp);
	r->qp = p->qp = NULL;
	while (ibv_poll_cq(r->cq, 1, &wc) > 0 || ibv_poll_cq(p->cq, 1, &wc) > 0)
		;
}

/* alive and not a zombie */
static int alive(pid_t pid)
{
	char path[64], st[512], *p;
	FILE *f;

	if (kill(pid, 0))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(st, sizeof(st), f);
	fclose(f);
	p = p ? strrchr(st, ')') : NULL;
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static int round_trip(struct end *r, struct end *p, struct ibv_mr *pmr, pid_t roxed, int k)
{
	size_t bytes = BIG + SMALL;
	struct ibv_mr *mr;
	uint32_t old_rkey;
	double t0, took;
	uint8_t *buf;
	int st, ok;

	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -1;
	memset(buf, 0, bytes);
	mr = ibv_reg_mr(r->pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ);
	ok = mr && !make_qp(r) && !make_qp(p) && !to_rts(r, p) && !to_rts(p, r);
	CHECK(ok, "round %d: fresh RC connection, roxe QP %u <-> peer QP %u, MR 0x%x of %zu bytes",
	      k, r->qp ? r->qp->qp_num : 0, p->qp ? p->qp->qp_num : 0, mr ? mr->rkey : 0, bytes);
	if (!ok)
		return -1;

	/* roxed serves the fresh connection */
	memset(pmr->addr, 0x40 + k, SMALL);
	st = post_write(p, pmr, SMALL, (uintptr_t)buf, mr->rkey, 1) ?: wait_wc(p->cq, 10, 1);
	CHECK(st == 0 && buf[0] == 0x40 + k && buf[SMALL - 1] == 0x40 + k,
	      "round %d: the peer WRITEs 64 KiB into roxe's MR (status %d)", k, st);

	/* roxed stopped in the middle of a WRITE, another one queued */
	old_rkey = mr->rkey;
	memset(pmr->addr, 0x60 + k, BIG);
	st = post_write(p, pmr, BIG, (uintptr_t)buf + SMALL, mr->rkey, 2);
	usleep(2000);
	kill(roxed, SIGSTOP);
	st = st ?: post_write(p, pmr, SMALL, (uintptr_t)buf, mr->rkey, 3);
	t0 = now();
	st = st ?: ibv_dereg_mr(mr);
	took = now() - t0;
	CHECK(st == 0 && took >= 1.9,
	      "round %d: dereg_mr with roxed stopped returns after the timeout (%.1f s, %d)",
	      k, took, st);
	munmap(buf, bytes);	/* the pages go back to the kernel */
	kill(roxed, SIGCONT);
	/* the peer's WRITEs end either way (roxed NAKs, or the QP gave up) */
	wait_wc(p->cq, 10, 3);
	usleep(300000);
	CHECK(alive(roxed), "round %d: roxed (pid %d) lives on after SIGCONT", k, (int)roxed);
	drop_qps(r, p);
	if (!alive(roxed))
		return -1;

	/* roxed caught up with the dereg: the old rkey is refused, not served
	 * from whatever now backs the revoked range
	 */
	ok = !make_qp(r) && !make_qp(p) && !to_rts(r, p) && !to_rts(p, r);
	st = ok ? post_read(p, pmr, 4096, (uintptr_t)buf + SMALL, old_rkey, 5) ?:
		  wait_wc(p->cq, 10, 5) : -1;
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "round %d: then a READ through the old rkey 0x%x ends in a remote access error (status %d)",
	      k, old_rkey, st);
	drop_qps(r, p);
	return 0;
}

static int open_end(struct end *e, const char *dev, const char *gid)
{
	e->ctx = open_dev(dev);
	e->gid_index = atoi(gid);
	if (!e->ctx || ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid))
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 64, NULL, NULL, 0) : NULL;
	return e->cq ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct end r = {}, p = {};
	struct ibv_mr *pmr;
	int rounds, k, ok;
	pid_t roxed;
	void *pbuf;

	if (argc != 7) {
		fprintf(stderr, "usage: kmod_revoke ROXE_DEV GID PEER_DEV GID ROXED_PID ROUNDS\n");
		return 2;
	}
	roxed = atoi(argv[5]);
	rounds = atoi(argv[6]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ok = !open_end(&r, argv[1], argv[2]) && !open_end(&p, argv[3], argv[4]);
	pbuf = ok ? calloc(1, BIG) : NULL;
	pmr = pbuf ? ibv_reg_mr(p.pd, pbuf, BIG, IBV_ACCESS_LOCAL_WRITE) : NULL;
	CHECK(pmr, "%s and %s opened, PDs, CQs, the peer's source MR", argv[1], argv[3]);
	if (!pmr)
		return 1;
	for (k = 1; k <= rounds; k++)
		if (round_trip(&r, &p, pmr, roxed, k))
			break;
	/* a last fresh connection: roxed still serves */
	if (k > rounds) {
		uint8_t *buf = calloc(1, SMALL);
		struct ibv_mr *mr = buf ? ibv_reg_mr(r.pd, buf, SMALL,
						     IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE) : NULL;
		int st = -1;

		memset(pmr->addr, 0x7e, SMALL);
		if (mr && !make_qp(&r) && !make_qp(&p) && !to_rts(&r, &p) && !to_rts(&p, &r))
			st = post_write(&p, pmr, SMALL, (uintptr_t)buf, mr->rkey, 4) ?:
			     wait_wc(p.cq, 10, 4);
		CHECK(st == 0 && buf[0] == 0x7e && buf[SMALL - 1] == 0x7e,
		      "afterwards a fresh connection is served (status %d)", st);
	}
	return failed;
}
