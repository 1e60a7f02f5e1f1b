// SPDX-License-Identifier: GPL-2.0-only
/*
 * iba15_verbs REQ RESP: IBA 1.5's ATOMIC WRITE and FLUSH from device REQ to
 * device RESP (the same name twice: a device to itself), through the stock
 * rxe provider and ibv_qp_ex, each case on a fresh RC QP pair:
 *   atomic_write     8 bytes land at the target (read back there)
 *   write_flush      an RDMA WRITE, then FLUSH (global visibility, range)
 *                    of it: both complete with success, the data is there
 *   flush_mr         FLUSH of the whole MR
 *   bad_rkey         ATOMIC WRITE with a wrong R_Key: refused
 *   misaligned       ATOMIC WRITE to an address not 8-byte aligned: refused
 *   flush_no_access  FLUSH of an MR registered without IBV_ACCESS_FLUSH_GLOBAL
 * Each prints "result CASE: STATUS" (ibv_wc_status_str, or why it did not
 * run) and, with --check, an ok/FAIL line against what kernel rxe 6.12
 * answers; exit 1 if a check failed.
 *
 * rdma-core 44 (what the VM image carries) has ibv_wr_atomic_write() but no
 * ibv_wr_flush() (rdma-core 47 added it), nor IBV_WR_FLUSH, IBV_WC_FLUSH,
 * IBV_ACCESS_FLUSH_GLOBAL: a FLUSH WQE is written here into the provider's
 * send queue exactly as rdma-core 47's wr_flush() writes it, between
 * ibv_wr_start() and ibv_wr_complete(), through a mirror of rdma-core 44's
 * private struct rxe_qp that is checked against the QP before use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include "roxe/queue.h"		/* ROXE_UWR_FLUSH, struct roxe_uwr_flush */
#include "verbs_util.h"

#define BUF		4096
#define ACCESS_FLUSH_GLOBAL	(1u << 8)	/* IBV_ACCESS_FLUSH_GLOBAL */
#define FLUSH_GLOBAL	1
#define FLUSH_RANGE	0
#define FLUSH_MR	1

/* rdma-core 44, providers/rxe/rxe.h and libibverbs/driver.h */
struct mirror_wq {
	struct rxe_queue_buf	*queue;
	pthread_spinlock_t	lock;
	unsigned int		max_sge;
	unsigned int		max_inline;
};

struct mirror_qp {
	union {					/* struct verbs_qp */
		struct ibv_qp		qp;
		struct ibv_qp_ex	qp_ex;
	};
	uint32_t		comp_mask;
	void			*xrcd;
	struct mminfo		rq_mmap_info;	/* struct rxe_qp */
	struct mirror_wq	rq;
	struct mminfo		sq_mmap_info;
	struct mirror_wq	sq;
	unsigned int		ssn;
	uint32_t		cur_index;
	int			err;
};

struct end {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	union ibv_gid		gid;
	int			gidx;
	uint8_t			*buf;
	struct ibv_mr		*mr;		/* write (+ flush when it registers) */
	struct ibv_mr		*mr_nf;		/* write, no flush */
	bool			flush_mr;	/* mr has FLUSH_GLOBAL */
};

static struct end req, resp;
static bool check;

/* Between ibv_wr_start() and ibv_wr_complete(): a FLUSH WQE at the
 * provider's current index, as rdma-core 47's wr_flush(). */
static int wr_flush(struct ibv_qp_ex *qpx, const struct ibv_qp_cap *cap, unsigned pending,
		    uint32_t rkey, uint64_t raddr, uint32_t len, uint8_t type, uint8_t level)
{
	struct mirror_qp *m = (struct mirror_qp *)qpx;
	struct rxe_queue_buf *q = m->sq.queue;
	struct roxe_uwr_flush fl = { .remote_addr = raddr, .rkey = rkey, .type = type,
				     .level = level };
	struct rxe_send_wqe *w;
	uint32_t cons;

	/* the mirror is rdma-core 44's struct only if it says what the QP
	 * is: pending WQEs added since ibv_wr_start() */
	if (!q || m->sq.max_sge != cap->max_send_sge || m->sq.max_inline != cap->max_inline_data ||
	    m->cur_index != ((__atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE) + pending) &
			     q->index_mask) ||
	    q->log2_elem_size < 6 || q->index_mask < cap->max_send_wr)
		return ENOTSUP;
	cons = __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
	if (((m->cur_index + 1 - cons) & q->index_mask) == 0)
		return ENOSPC;
	w = (struct rxe_send_wqe *)(q->data + ((m->cur_index & q->index_mask) << q->log2_elem_size));
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = 2;
	w->wr.opcode = ROXE_UWR_FLUSH;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	roxe_uwr_flush_set(w, &fl);
	w->dma.length = w->dma.resid = len;
	w->iova = raddr;
	m->cur_index = (m->cur_index + 1) & q->index_mask;
	return 0;
}

static int end_open(struct end *e, const char *name, bool responder)
{
	e->ctx = open_dev(name);
	if (!e->ctx)
		return -1;
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, 2 * BUF);
	if (e->gidx < 0 || !e->pd || !e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, 2 * BUF);
	if (!responder)
		return 0;
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   ACCESS_FLUSH_GLOBAL);
	e->flush_mr = e->mr;
	if (!e->mr) {
		printf("note: %s: no MR with IBV_ACCESS_FLUSH_GLOBAL (%s): no FLUSH\n", name,
		       strerror(errno));
		e->mr = ibv_reg_mr(e->pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE);
	}
	e->mr_nf = ibv_reg_mr(e->pd, e->buf + BUF, BUF, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE);
	return e->mr && e->mr_nf ? 0 : -1;
}

static int poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

enum kase { ATOMIC_WRITE, WRITE_FLUSH, FLUSH_WHOLE_MR, BAD_RKEY, MISALIGNED, FLUSH_NO_ACCESS };
static const char *const names[] = {
	"atomic_write", "write_flush", "flush_mr", "bad_rkey", "misaligned", "flush_no_access",
};

static void result(enum kase k, const char *what, enum ibv_wc_status want, bool ran,
		   enum ibv_wc_status got)
{
	printf("result %s: %s\n", names[k], what);
	if (check)
		CHECK(ran && got == want, "%s: %s (kernel rxe 6.12: %s)", names[k], what,
		      ibv_wc_status_str(want));
}

static void run(enum kase k)
{
	const uint64_t value = 0x0123456789abcdefull + k;
	bool flush = k == WRITE_FLUSH || k == FLUSH_WHOLE_MR || k == FLUSH_NO_ACCESS;
	enum ibv_wc_status want = k == BAD_RKEY || k == FLUSH_NO_ACCESS ? IBV_WC_REM_ACCESS_ERR :
				  k == MISALIGNED ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_SUCCESS;
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = req.cq, .recv_cq = req.cq, .qp_type = IBV_QPT_RC, .pd = req.pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp_init_attr ra = {
		.send_cq = resp.cq, .recv_cq = resp.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint8_t *target = resp.buf + (k == MISALIGNED ? 68 : 64);
	struct ibv_mr *lmr = NULL;
	struct ibv_qp *qp = NULL, *rqp = NULL;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[2] = { 0 };
	char what[160];
	int err, n = 0;

	if (flush && !resp.flush_mr) {
		result(k, "not run: no MR with IBV_ACCESS_FLUSH_GLOBAL", want, false, 0);
		return;
	}
	memset(resp.buf, 0, 2 * BUF);
	qp = ibv_create_qp_ex(req.ctx, &ia);
	rqp = ibv_create_qp(resp.pd, &ra);
	lmr = ibv_reg_mr(req.pd, req.buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!qp || !rqp || !lmr) {
		snprintf(what, sizeof(what), "not run: QPs (%s)", strerror(errno));
		result(k, what, want, false, 0);
		goto out;
	}
	err = rc_connect(qp, 0, rqp->qp_num, &resp.gid, req.gidx);
	if (!err)
		err = rc_connect(rqp, IBV_ACCESS_REMOTE_WRITE |
				 (resp.flush_mr ? ACCESS_FLUSH_GLOBAL : 0),
				 qp->qp_num, &req.gid, resp.gidx);
	if (err) {
		snprintf(what, sizeof(what), "not run: connect (%s)", strerror(err));
		result(k, what, want, false, 0);
		goto out;
	}
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	qpx->wr_flags = IBV_SEND_SIGNALED;
	switch (k) {
	case WRITE_FLUSH:
		for (int i = 0; i < 256; i++)
			req.buf[i] = (uint8_t)(i * 7 + 1);
		qpx->wr_id = 1;
		ibv_wr_rdma_write(qpx, resp.mr->rkey, (uintptr_t)resp.buf + 256);
		ibv_wr_set_sge(qpx, lmr->lkey, (uintptr_t)req.buf, 256);
		n++;
		/* fall through */
	case FLUSH_WHOLE_MR:
	case FLUSH_NO_ACCESS:
		err = wr_flush(qpx, &ia.cap, n, k == FLUSH_NO_ACCESS ? resp.mr_nf->rkey : resp.mr->rkey,
			       k == FLUSH_WHOLE_MR ? 0 : (uintptr_t)resp.buf + 256,
			       k == FLUSH_WHOLE_MR ? 0 : 256, FLUSH_GLOBAL,
			       k == FLUSH_WHOLE_MR ? FLUSH_MR : FLUSH_RANGE);
		if (err) {
			ibv_wr_abort(qpx);
			snprintf(what, sizeof(what), "not run: FLUSH WQE (%s)", strerror(err));
			result(k, what, want, false, 0);
			goto out;
		}
		n++;
		break;
	default:
		qpx->wr_id = 1;
		ibv_wr_atomic_write(qpx, k == BAD_RKEY ? resp.mr->rkey ^ 0x80 : resp.mr->rkey,
				    (uintptr_t)target, &value);
		n++;
		break;
	}
	err = ibv_wr_complete(qpx);
	if (err) {
		snprintf(what, sizeof(what), "not run: ibv_wr_complete (%s)", strerror(err));
		result(k, what, want, false, 0);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (!poll1(req.cq, &wc[i])) {
			result(k, "no completion in 5 s", want, false, 0);
			goto out;
		}
		if (wc[i].status != IBV_WC_SUCCESS)
			break;
	}
	{
		const struct ibv_wc *last = &wc[n - 1];
		const struct ibv_wc *bad = wc[0].status != IBV_WC_SUCCESS ? &wc[0] : last;
		bool data_ok = true;

		if (bad->status == IBV_WC_SUCCESS) {
			if (flush)
				data_ok = last->opcode == 8 &&	/* IBV_WC_FLUSH */
					  (k != WRITE_FLUSH || !memcmp(resp.buf + 256, req.buf, 256));
			else
				data_ok = last->opcode == IBV_WC_ATOMIC_WRITE &&
					  !memcmp(target, &value, 8);
		}
		snprintf(what, sizeof(what), "%s%s", ibv_wc_status_str(bad->status),
			 bad->status != IBV_WC_SUCCESS ? "" :
			 data_ok ? (flush ? ", opcode IBV_WC_FLUSH" :
				    ", opcode IBV_WC_ATOMIC_WRITE, value at the target") :
			 ", but wrong opcode or data");
		result(k, what, want, true, data_ok ? bad->status : IBV_WC_GENERAL_ERR);
	}
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (rqp)
		ibv_destroy_qp(rqp);
	if (lmr)
		ibv_dereg_mr(lmr);
	while (ibv_poll_cq(req.cq, 2, wc) > 0)
		;
	while (ibv_poll_cq(resp.cq, 2, wc) > 0)
		;
}

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > 1 && !strcmp(argv[1], "--check")) {
		check = true;
		a++;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: iba15_verbs [--check] REQDEV RESPDEV\n");
		return 2;
	}
	if (end_open(&req, argv[a], false) || end_open(&resp, argv[a + 1], true)) {
		printf("FAIL: cannot open %s and %s\n", argv[a], argv[a + 1]);
		return 1;
	}
	for (enum kase k = ATOMIC_WRITE; k <= FLUSH_NO_ACCESS; k++)
		run(k);
	return failed;
}
