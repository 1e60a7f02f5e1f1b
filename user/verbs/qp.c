// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Queue pairs: creation, the state machine (modify/query, with attribute
 * masks checked as ibv_modify_qp does, IBA 11.2.5 table 91), posting work
 * requests into the rxe uAPI rings, and destruction.
 *
 * The application changes qp->state; the owning engine notices on its next
 * turn (a doorbell is rung) and acts in roxe_qp_engine_sync(): start the
 * requester/responder at RTR/RTS, flush every WR at ERR, forget all
 * transport state at RESET.
 *
 * The engine changes the state itself on errors: to ERR (any RC error, a
 * responder error), or to SQE when a UC/UD send WQE fails locally (the send
 * queue flushes, the receive queue keeps working, SQE -> RTS resumes). Both
 * sides change the state by compare-and-swap, so neither overwrites the
 * other's change unseen: the application's RESET or ERR wins over the
 * engine's, the engine's error wins over any other application change.
 *
 * SQD (IBA 10.3.1): the requester starts no new WQE, finishes those in
 * progress; once none is left the drain is over (sq_draining drops) and
 * IBV_EVENT_SQ_DRAINED is raised if the RTS -> SQD modify asked for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"
#include "verbs/internal.h"
#include "transport/qp_state.h"
#include "transport/sq.h"
#include "wire/psn.h"
#include "roxe/xdp.h"

/* --- attribute masks per transition (IBA 11.2.5 table 91) ------------------ */
#define M(x) IBV_QP_##x
struct transition {
	uint32_t req[3], opt[3];	/* indexed by RC, UC, UD */
};

static int type_index(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? 0 : t == IBV_QPT_UC ? 1 : 2;
}

static const struct transition *transition(int cur, int next)
{
	static const struct transition reset_init = {
		{ M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
		  M(PKEY_INDEX) | M(PORT) | M(QKEY) },
		{ 0, 0, 0 },
	};
	static const struct transition init_init = {
		{ 0, 0, 0 },
		{ M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS), M(PKEY_INDEX) | M(PORT) | M(ACCESS_FLAGS),
		  M(PKEY_INDEX) | M(PORT) | M(QKEY) },
	};
	static const struct transition init_rtr = {
		{ M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN) | M(MAX_DEST_RD_ATOMIC) | M(MIN_RNR_TIMER),
		  M(AV) | M(PATH_MTU) | M(DEST_QPN) | M(RQ_PSN), 0 },
		{ M(ACCESS_FLAGS) | M(PKEY_INDEX), M(ACCESS_FLAGS) | M(PKEY_INDEX),
		  M(PKEY_INDEX) | M(QKEY) },
	};
	static const struct transition rtr_rts = {
		{ M(SQ_PSN) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) | M(MAX_QP_RD_ATOMIC),
		  M(SQ_PSN), M(SQ_PSN) },
		{ M(CUR_STATE) | M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) | M(PATH_MIG_STATE),
		  M(CUR_STATE) | M(ACCESS_FLAGS) | M(PATH_MIG_STATE), M(CUR_STATE) | M(QKEY) },
	};
	static const struct transition rts_rts = {
		{ 0, 0, 0 },
		{ M(CUR_STATE) | M(ACCESS_FLAGS) | M(MIN_RNR_TIMER) | M(PATH_MIG_STATE),
		  M(CUR_STATE) | M(ACCESS_FLAGS) | M(PATH_MIG_STATE), M(CUR_STATE) | M(QKEY) },
	};
	static const struct transition to_sqd = {
		{ 0, 0, 0 },
		{ M(EN_SQD_ASYNC_NOTIFY), M(EN_SQD_ASYNC_NOTIFY), M(EN_SQD_ASYNC_NOTIFY) },
	};
	static const struct transition sqd_sqd = {
		{ 0, 0, 0 },
		{ M(PORT) | M(AV) | M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(MIN_RNR_TIMER) |
		  M(PATH_MIG_STATE) | M(TIMEOUT) | M(RETRY_CNT) | M(RNR_RETRY) |
		  M(MAX_QP_RD_ATOMIC) | M(MAX_DEST_RD_ATOMIC),
		  M(AV) | M(ACCESS_FLAGS) | M(PKEY_INDEX) | M(PATH_MIG_STATE),
		  M(PKEY_INDEX) | M(QKEY) },
	};
	static const struct transition sqe_rts = {
		{ 0, 0, 0 },
		{ 0, M(CUR_STATE) | M(ACCESS_FLAGS), M(CUR_STATE) | M(QKEY) },
	};
	static const struct transition bare = { { 0, 0, 0 }, { 0, 0, 0 } };

	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return &bare;
	switch (cur) {
	case IBV_QPS_RESET:
		return next == IBV_QPS_INIT ? &reset_init : NULL;
	case IBV_QPS_INIT:
		return next == IBV_QPS_INIT ? &init_init : next == IBV_QPS_RTR ? &init_rtr : NULL;
	case IBV_QPS_RTR:
		return next == IBV_QPS_RTS ? &rtr_rts : NULL;
	case IBV_QPS_RTS:
		return next == IBV_QPS_RTS ? &rts_rts : next == IBV_QPS_SQD ? &to_sqd : NULL;
	case IBV_QPS_SQD:
		return next == IBV_QPS_RTS ? &rts_rts : next == IBV_QPS_SQD ? &sqd_sqd : NULL;
	case IBV_QPS_SQE:
		return next == IBV_QPS_RTS ? &sqe_rts : NULL;
	default:
		return NULL;
	}
}
#undef M

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* --- creation -------------------------------------------------------------- */
static uint32_t sq_elem_size(const struct ibv_qp_cap *cap)
{
	uint32_t data = cap->max_send_sge * sizeof(struct rxe_sge);

	if (data < cap->max_inline_data)
		data = cap->max_inline_data;
	return sizeof(struct rxe_send_wqe) + data;
}

static int alloc_qpn(struct roxe_device *dev, struct roxe_qp *qp)
{
	pthread_mutex_lock(&dev->lock);
	for (uint32_t tries = 0; tries < ROXE_MAX_QPS; tries++) {
		uint32_t qpn = dev->next_qpn++ % ROXE_MAX_QPS;

		if (qpn < 2 || atomic_load(&dev->qps[qpn]))
			continue;
		qp->qpn = qpn;
		atomic_store_explicit(&dev->qps[qpn], qp, memory_order_release);
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	pthread_mutex_unlock(&dev->lock);
	return -ENOMEM;
}

static void qp_free(struct roxe_qp *qp)
{
	if (!qp->served) {
		free(qp->sq_buf);
		free(qp->rq_buf);
	}
	free(qp->resp.res);
	free(qp->swqe);
	free(qp->swqe_seq);
	free(qp->held);
	pthread_mutex_destroy(&qp->modify_lock);
	pthread_spin_destroy(&qp->sq_post_lock);
	pthread_spin_destroy(&qp->rq_post_lock);
	free(qp);
}

/* The send queue is set up: what a slot holds (the bounds on a WQE's SGEs
 * and inline data) and the engine's private copies of its WQEs. */
static int qp_sq_ready(struct roxe_qp *qp)
{
	uint32_t room = qp->sq_elem_size > sizeof(struct rxe_send_wqe) ?
			qp->sq_elem_size - (uint32_t)sizeof(struct rxe_send_wqe) : 0;

	qp->sq_slot_sge = room / sizeof(struct rxe_sge);
	if (qp->sq_slot_sge > ROXE_MAX_SGE)
		qp->sq_slot_sge = ROXE_MAX_SGE;
	qp->sq_slot_inline = room < ROXE_MAX_INLINE ? room : ROXE_MAX_INLINE;
	qp->swqe = calloc((size_t)qp->sq.mask + 1, sizeof(*qp->swqe));
	if (!qp->swqe)
		return -ENOMEM;
	if (qp->dev->umem_mr_bytes) {	/* in-place frames: completions wait for them (sq.c) */
		qp->swqe_seq = calloc((size_t)qp->sq.mask + 1, sizeof(*qp->swqe_seq));
		qp->held = calloc((size_t)qp->sq.mask + 1, sizeof(*qp->held));
		if (!qp->swqe_seq || !qp->held)
			return -ENOMEM;
	}
	return 0;
}

/* The QP has its number: give it its engine, counters and XDP steering,
 * and take its references. On failure the QP is unpublished and freed. */
static int qp_attach(struct roxe_pd *pd, struct roxe_qp *qp)
{
	struct roxe_device *dev = pd->dev;
	int err;

	qp->eng = &dev->engines[qp->qpn % dev->nengines];
	qp->held_ack_slot = -1;
	qp->stats = &dev->qp_stats[qp->qpn];
	memset(qp->stats, 0, sizeof(*qp->stats));
	/* Steer the QP's frames to its engine's sockets. */
	if (dev->xdp) {
		err = roxe_xdp_set_qp(dev->xdp, qp->qpn, qp->eng->id);
		if (err) {
			atomic_store(&dev->qps[qp->qpn], NULL);
			qp_free(qp);
			return err;
		}
	}
	atomic_fetch_add(&pd->users, 1);
	atomic_fetch_add(&qp->scq->users, 1);
	atomic_fetch_add(&qp->rcq->users, 1);
	if (qp->srq)
		atomic_fetch_add(&qp->srq->users, 1);
	return 0;
}

/* A QP in RESET with what both kinds share; its queues are the caller's. */
static struct roxe_qp *qp_new(struct roxe_pd *pd, enum ibv_qp_type type, struct roxe_cq *scq,
			      struct roxe_cq *rcq, struct roxe_srq *srq, bool sq_sig_all,
			      const struct ibv_qp_cap *cap)
{
	struct roxe_qp *qp = calloc(1, sizeof(*qp));

	if (!qp)
		return NULL;
	qp->dev = pd->dev;
	qp->pd = pd;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	qp->type = type;
	qp->sq_sig_all = sq_sig_all;
	qp->cap = *cap;
	pthread_mutex_init(&qp->modify_lock, NULL);
	pthread_spin_init(&qp->sq_post_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_post_lock, PTHREAD_PROCESS_PRIVATE);
	qp->resp.res = calloc(ROXE_MAX_RD_ATOMIC, sizeof(*qp->resp.res));
	if (!qp->resp.res) {
		qp_free(qp);
		return NULL;
	}
	atomic_store(&qp->state, IBV_QPS_RESET);
	qp->eng_state = IBV_QPS_RESET;
	qp->mtu = pd->dev->mtu;	/* UD's for good; RC/UC's until RTR sets the path MTU */
	return qp;
}

int roxe_create_qp(struct roxe_pd *pd, struct roxe_qp_init_attr *ia, struct roxe_qp **out)
{
	struct roxe_queue_geom sg, rg;
	struct roxe_device *dev;
	struct roxe_qp *qp;
	int err;

	if (!pd || !ia || !out || !ia->send_cq || !ia->recv_cq)
		return -EINVAL;
	if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UC && ia->qp_type != IBV_QPT_UD)
		return -EINVAL;
	if (ia->cap.max_send_wr > ROXE_MAX_WR || ia->cap.max_recv_wr > ROXE_MAX_WR ||
	    ia->cap.max_send_sge > ROXE_MAX_SGE || ia->cap.max_recv_sge > ROXE_MAX_SGE ||
	    ia->cap.max_inline_data > ROXE_MAX_INLINE)
		return -EINVAL;
	if (ia->srq && ia->srq->pd != pd)
		return -EINVAL;
	dev = pd->dev;
	qp = qp_new(pd, ia->qp_type, ia->send_cq, ia->recv_cq, ia->srq, ia->sq_sig_all, &ia->cap);
	if (!qp)
		return -ENOMEM;
	qp->context = ia->qp_context;
	if (qp->cap.max_send_sge < 1)
		qp->cap.max_send_sge = 1;
	if (qp->cap.max_recv_sge < 1)
		qp->cap.max_recv_sge = 1;
	qp->sq_elem_size = sq_elem_size(&qp->cap);
	qp->sq_buf = roxe_queue_buf_alloc(qp->cap.max_send_wr, qp->sq_elem_size, &sg);
	if (!qp->sq_buf)
		goto nomem;
	qp->cap.max_send_wr = sg.mask;
	/* What fits in a slot is what is granted. */
	qp->sq_elem_size = 1u << sg.log2_elem;
	qp->cap.max_inline_data = qp->sq_elem_size - sizeof(struct rxe_send_wqe);
	if (qp->cap.max_inline_data > ROXE_MAX_INLINE)
		qp->cap.max_inline_data = ROXE_MAX_INLINE;
	if (!qp->srq) {
		qp->rq_elem_size = sizeof(struct rxe_recv_wqe) +
				   qp->cap.max_recv_sge * sizeof(struct rxe_sge);
		qp->rq_buf = roxe_queue_buf_alloc(qp->cap.max_recv_wr, qp->rq_elem_size, &rg);
		if (!qp->rq_buf)
			goto nomem;
		qp->cap.max_recv_wr = rg.mask;
		roxe_queue_init_producer(&qp->rq_prod, qp->rq_buf, rg);
		roxe_queue_init_consumer(&qp->rq, qp->rq_buf, rg);
	} else {
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
	}
	roxe_queue_init_producer(&qp->sq_prod, qp->sq_buf, sg);
	roxe_queue_init_consumer(&qp->sq, qp->sq_buf, sg);
	if (qp_sq_ready(qp))
		goto nomem;
	err = alloc_qpn(dev, qp);
	if (err) {
		qp_free(qp);
		return err;
	}
	err = qp_attach(pd, qp);
	if (err)
		return err;
	ia->cap = qp->cap;
	*out = qp;
	return 0;
nomem:
	qp_free(qp);
	return -ENOMEM;
}

int roxe_served_qp_create(struct roxe_pd *pd, const struct roxe_served_qp_init *in,
			  struct roxe_qp **out)
{
	struct roxe_device *dev;
	struct roxe_qp *qp;
	int err;

	if (!pd || !in || !out || !in->send_cq || !in->recv_cq || !in->sq_buf ||
	    !in->srq == !in->rq_buf || in->qpn == 0 || in->qpn >= ROXE_MAX_QPS)
		return -EINVAL;
	/* QP1 is the module's GSI QP (ib_mad's), a UD QP */
	if (in->qpn == ROXE_QPN_GSI && in->type != IBV_QPT_UD)
		return -EINVAL;
	if (in->type != IBV_QPT_RC && in->type != IBV_QPT_UC && in->type != IBV_QPT_UD)
		return -EINVAL;
	/* The rings' shapes are the module's, never what their headers say. */
	if (!roxe_queue_geom_ok(in->sq_geom, sizeof(struct rxe_send_wqe)) ||
	    (in->rq_buf && !roxe_queue_geom_ok(in->rq_geom, sizeof(struct rxe_recv_wqe))))
		return -EINVAL;
	dev = pd->dev;
	qp = qp_new(pd, in->type, in->send_cq, in->recv_cq, in->srq, in->sq_sig_all, &in->cap);
	if (!qp)
		return -ENOMEM;
	qp->served = true;	/* before anything fails: the rings are not ours to free */
	qp->kernel_ulp = in->kernel_ulp;
	qp->tenant = in->tenant;
	qp->sq_buf = in->sq_buf;
	qp->sq_elem_size = 1u << in->sq_geom.log2_elem;
	roxe_queue_init_consumer(&qp->sq, qp->sq_buf, in->sq_geom);
	if (in->rq_buf) {
		qp->rq_buf = in->rq_buf;
		qp->rq_elem_size = 1u << in->rq_geom.log2_elem;
		roxe_queue_init_consumer(&qp->rq, qp->rq_buf, in->rq_geom);
	}
	if (qp_sq_ready(qp)) {
		qp_free(qp);
		return -ENOMEM;
	}
	qp->qpn = in->qpn;
	pthread_mutex_lock(&dev->lock);
	if (atomic_load(&dev->qps[qp->qpn])) {
		pthread_mutex_unlock(&dev->lock);
		qp_free(qp);
		return -EEXIST;
	}
	atomic_store_explicit(&dev->qps[qp->qpn], qp, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	err = qp_attach(pd, qp);
	if (err)
		return err;
	*out = qp;
	return 0;
}

uint32_t roxe_qp_num(const struct roxe_qp *qp)
{
	return qp ? qp->qpn : 0;
}

/* Wait until the owning engine has acted on what we just told it. */
static void wait_engine(struct roxe_qp *qp)
{
	roxe_engine_doorbell(qp);
	roxe_dev_quiesce(qp->dev);
}

int roxe_destroy_qp(struct roxe_qp *qp)
{
	struct roxe_device *dev;

	if (!qp)
		return -EINVAL;
	dev = qp->dev;
	if (qp->type == IBV_QPT_UD)
		roxe_mcast_qp_gone(qp);	/* as rxe: detached on destroy */
	if (dev->xdp)
		roxe_xdp_clear_qp(dev->xdp, qp->qpn);
	atomic_store(&dev->qps[qp->qpn], NULL);
	atomic_store(&qp->dying, true);
	while (!atomic_load(&qp->detached))
		wait_engine(qp);
	atomic_fetch_sub(&qp->pd->users, 1);
	atomic_fetch_sub(&qp->scq->users, 1);
	atomic_fetch_sub(&qp->rcq->users, 1);
	if (qp->srq)
		atomic_fetch_sub(&qp->srq->users, 1);
	roxe_async_purge(dev, qp);	/* the engine raises no more */
	/* its type 2 windows: no QP that gets its number reaches them */
	if (qp->type == IBV_QPT_RC || qp->type == IBV_QPT_UC)
		roxe_mw_qp_gone(dev, qp->qpn);
	qp_free(qp);
	return 0;
}

/* --- modify / query ---------------------------------------------------------- */
/* sgid: the source GID the path will use (the device's, or a served QP's). */
static int check_attrs(struct roxe_qp *qp, const struct ibv_qp_attr *a, int mask,
		       const uint8_t sgid[16])
{
	struct roxe_device *dev = qp->dev;

	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (!mtu_bytes(a->path_mtu) || mtu_bytes(a->path_mtu) > dev->mtu))
		return -EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > ROXE_QPN_MASK)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > ROXE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > ROXE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IBV_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~(unsigned)ROXE_QP_ACCESS))
		return -EINVAL;
	if ((mask & IBV_QP_PATH_MIG_STATE) && a->path_mig_state != IBV_MIG_MIGRATED)
		return -EINVAL;	/* no alternate path */
	if (mask & IBV_QP_AV) {
		const struct ibv_ah_attr *ah = &a->ah_attr;

		/* RoCE needs a GRH: the GID is the peer's IP address. sgid is
		 * the entry at sgid_index (qp_modify checked it); a served
		 * QP's GID index is the module's, which sent the GID itself. */
		if (!ah->is_global || ah->port_num > 1)
			return -EINVAL;
		if (roxe_gid_is_v4(ah->grh.dgid.raw) != roxe_gid_is_v4(sgid))
			return -EINVAL;
	}
	return 0;
}

static void apply_attrs(struct roxe_qp *qp, const struct ibv_qp_attr *a, int mask,
			const uint8_t sgid[16], const uint8_t dmac[6], uint32_t mtu_cap)
{
	struct ibv_qp_attr *q = &qp->attr;

#define TAKE(bit, field) do { if (mask & (bit)) q->field = a->field; } while (0)
	TAKE(IBV_QP_PKEY_INDEX, pkey_index);
	TAKE(IBV_QP_PORT, port_num);
	TAKE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	TAKE(IBV_QP_QKEY, qkey);
	TAKE(IBV_QP_AV, ah_attr);
	TAKE(IBV_QP_PATH_MTU, path_mtu);
	TAKE(IBV_QP_DEST_QPN, dest_qp_num);
	TAKE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	TAKE(IBV_QP_TIMEOUT, timeout);
	TAKE(IBV_QP_RETRY_CNT, retry_cnt);
	TAKE(IBV_QP_RNR_RETRY, rnr_retry);
	TAKE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	TAKE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	TAKE(IBV_QP_PATH_MIG_STATE, path_mig_state);
#undef TAKE
	if (mask & IBV_QP_RQ_PSN)
		q->rq_psn = a->rq_psn & ROXE_PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		q->sq_psn = a->sq_psn & ROXE_PSN_MASK;
	if (mask & IBV_QP_AV)
		qp->path_mtu_cap = mtu_cap;
	/* A route with a smaller MTU than the port's (`ip route ... mtu N`)
	 * caps the path MTU, as the port's netdev caps rxe's. */
	if ((mask & (IBV_QP_PATH_MTU | IBV_QP_AV)) && mtu_bytes(q->path_mtu)) {
		qp->mtu = mtu_bytes(q->path_mtu);
		if (qp->path_mtu_cap && qp->mtu > qp->path_mtu_cap)
			qp->mtu = qp->path_mtu_cap;
	}
	if (mask & IBV_QP_TIMEOUT)	/* 4.096 us * 2^timeout; 0: infinite */
		qp->timeout_ns = a->timeout ? 4096ull << a->timeout : 0;
	if (mask & IBV_QP_AV) {
		struct roxe_frame_addr *p = &qp->path;
		const struct ibv_global_route *g = &a->ah_attr.grh;

		memcpy(p->smac, qp->dev->mac, 6);
		memcpy(p->sgid, sgid, 16);
		memcpy(p->dgid, g->dgid.raw, 16);
		/* DSCP from the application, ECN the device's (ECT(0) or Not-ECT) */
		p->tclass = (uint8_t)((g->traffic_class & ~ROXE_ECN_MASK) | qp->dev->ecn);
		p->hop_limit = g->hop_limit;
		p->flow_label = g->flow_label;
		memcpy(p->dmac, dmac, 6);
	}
	if (mask & (IBV_QP_AV | IBV_QP_DEST_QPN))
		qp->path.sport = qp->eng->port->fixed_sport ? qp->eng->port->fixed_sport :
				 roxe_flow_sport(qp->qpn, q->dest_qp_num);
}

/*
 * Apply the attributes, then publish the new state (the engine re-reads
 * attributes on a state change). The engine may have moved the QP to ERR
 * or SQE since we read cur: the change asked for then no longer applies,
 * the attributes are put back and the caller gets -EINVAL.
 */
static int change_state(struct roxe_qp *qp, const struct ibv_qp_attr *attr, int mask,
			const uint8_t sgid[16], const uint8_t dmac[6], uint32_t mtu_cap, int cur,
			int next)
{
	struct ibv_qp_attr old_attr = qp->attr;
	struct roxe_frame_addr old_path = qp->path;
	uint32_t old_mtu = qp->mtu, old_cap = qp->path_mtu_cap;
	uint64_t old_timeout = qp->timeout_ns;

	apply_attrs(qp, attr, mask, sgid, dmac, mtu_cap);
	if (next == IBV_QPS_SQD && cur != IBV_QPS_SQD) {
		qp->sqd_notify = (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY) && attr->en_sqd_async_notify;
		atomic_store(&qp->sq_draining, true);
	}
	qp->attr.qp_state = next;
	if (cur == next)
		return 0;
	if (next == IBV_QPS_ERR)
		atomic_store_explicit(&qp->state, next, memory_order_release);
	else if (!atomic_compare_exchange_strong(&qp->state, &cur, next)) {
		atomic_store(&qp->sq_draining, false);
		qp->attr = old_attr;
		qp->path = old_path;
		qp->mtu = old_mtu;
		qp->path_mtu_cap = old_cap;
		qp->timeout_ns = old_timeout;
		return -EINVAL;
	}
	roxe_engine_doorbell(qp);
	return 0;
}

/* sgid, dmac: the served QP's path as the module resolved it; NULL: ours. */
static int qp_modify(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask,
		     const uint8_t *sgid, const uint8_t *served_dmac)
{
	const struct transition *t;
	uint8_t dmac[6] = { 0 }, own[16];
	uint32_t mtu_cap = 0;	/* a served QP's path is ib_core's, as rxe's */
	int cur, next, ti, err;

	if (!sgid) {
		/* ours: the source is the GID table's entry at sgid_index */
		memcpy(own, qp->dev->gid, 16);
		if ((mask & IBV_QP_AV) &&
		    roxe_dev_sgid(qp->dev, attr->ah_attr.grh.sgid_index, own))
			return -EINVAL;
		sgid = own;
	}
	pthread_mutex_lock(&qp->modify_lock);
	cur = roxe_qp_state(qp);
	if ((mask & IBV_QP_CUR_STATE) && (int)attr->cur_qp_state != cur &&
	    !(cur == IBV_QPS_SQE && attr->cur_qp_state == IBV_QPS_RTS)) {
		err = -EINVAL;
		goto out;
	}
	next = (mask & IBV_QP_STATE) ? (int)attr->qp_state : cur;
	t = transition(cur, next);
	ti = type_index(qp->type);
	err = -EINVAL;
	if (!t || (qp->type == IBV_QPT_RC && cur == IBV_QPS_SQE))
		goto out;
	if ((mask & t->req[ti]) != t->req[ti])
		goto out;
	if (mask & ~(t->req[ti] | t->opt[ti] | IBV_QP_STATE))
		goto out;
	err = check_attrs(qp, attr, mask, sgid);
	if (err)
		goto out;
	/* The next hop's MAC, before anything changes: unreachable fails
	 * cleanly. A served QP's comes from ib_core (ah_attr.roce.dmac), which
	 * resolved it through the routes as for rxe. */
	if (served_dmac)
		memcpy(dmac, served_dmac, 6);
	else if ((mask & IBV_QP_AV) &&
		 roxe_dev_resolve_path(qp->dev, sgid, attr->ah_attr.grh.dgid.raw, dmac, &mtu_cap)) {
		err = -EHOSTUNREACH;
		goto out;
	}
	/* SQD -> SQD changes attributes only once drained: the packets in
	 * flight were built with the old ones (IBA 10.3.1, as rxe). */
	if (cur == IBV_QPS_SQD && next == IBV_QPS_SQD && (mask & ~IBV_QP_STATE) &&
	    atomic_load(&qp->sq_draining)) {
		err = -EBUSY;
		goto out;
	}
	if (next != IBV_QPS_SQD)
		atomic_store(&qp->sq_draining, false);

	if (next == IBV_QPS_RESET && cur != IBV_QPS_RESET) {
		/* The engine drops everything it knows about the QP first,
		 * also when it never saw the QP leave RESET (qp_state.c). */
		unsigned asked;

		atomic_store_explicit(&qp->state, IBV_QPS_RESET, memory_order_release);
		asked = atomic_fetch_add(&qp->reset_asked, 1) + 1;
		while (atomic_load_explicit(&qp->reset_done, memory_order_acquire) != asked)
			wait_engine(qp);
		memset(&qp->attr, 0, sizeof(qp->attr));
		if (!qp->served) {
			roxe_queue_init_producer(&qp->sq_prod, qp->sq_buf, roxe_queue_geom(&qp->sq));
			if (qp->rq_buf)
				roxe_queue_init_producer(&qp->rq_prod, qp->rq_buf,
							 roxe_queue_geom(&qp->rq));
		}
		err = 0;
		goto out;
	}
	err = change_state(qp, attr, mask, sgid, dmac, mtu_cap, cur, next);
out:
	pthread_mutex_unlock(&qp->modify_lock);
	return err;
}

int roxe_modify_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	if (!qp || !attr || qp->served)
		return -EINVAL;
	return qp_modify(qp, attr, mask, NULL, NULL);
}

int roxe_served_modify_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask,
			  const uint8_t sgid[16], const uint8_t dmac[6])
{
	if (!qp || !attr || !sgid || !dmac || !qp->served)
		return -EINVAL;
	return qp_modify(qp, attr, mask, sgid, dmac);
}

int roxe_query_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask,
		  struct roxe_qp_init_attr *ia)
{
	(void)mask;	/* like libibverbs: everything is filled in */
	if (!qp || !attr)
		return -EINVAL;
	pthread_mutex_lock(&qp->modify_lock);
	*attr = qp->attr;
	attr->qp_state = roxe_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = attr->qp_state == IBV_QPS_SQD && atomic_load(&qp->sq_draining);
	pthread_mutex_unlock(&qp->modify_lock);
	if (ia) {
		ia->send_cq = qp->scq;
		ia->recv_cq = qp->rcq;
		ia->srq = qp->srq;
		ia->cap = qp->cap;
		ia->qp_type = qp->type;
		ia->sq_sig_all = qp->sq_sig_all;
		ia->qp_context = qp->context;
	}
	return 0;
}

static int fill_send_wqe(struct roxe_qp *qp, struct rxe_send_wqe *w, const struct ibv_send_wr *wr)
{
	uint64_t length = 0;
	/* ATOMIC WRITE's 8 bytes are copied now, like inline data: the rxe
	 * ABI keeps them in the WQE (dma.atomic_wr). */
	bool is_inline = ((wr->send_flags & IBV_SEND_INLINE) &&
			  !roxe_wqe_is_read_or_atomic(wr->opcode)) ||
			 wr->opcode == ROXE_WR_ATOMIC_WRITE;

	if (!roxe_qp_opcode_ok(qp->type, wr->opcode) || wr->num_sge < 0)
		return -EINVAL;
	if (!is_inline && (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	if (is_inline && length > qp->cap.max_inline_data)
		return -EINVAL;
	if (length > ROXE_MAX_MSG_SZ)
		return -EINVAL;
	if ((wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	    (wr->num_sge != 1 || length != 8))
		return -EINVAL;
	if ((wr->opcode == ROXE_WR_ATOMIC_WRITE && length != ROXE_ATOMIC_WRITE_LEN) ||
	    (wr->opcode == ROXE_WR_FLUSH && (wr->num_sge || wr->wr.atomic.compare_add > ROXE_MAX_MSG_SZ)))
		return -EINVAL;
	if (qp->type == IBV_QPT_UD && (!wr->wr.ud.ah || length > qp->dev->mtu))
		return -EINVAL;
	/* as rxe's provider: a bind carries no data */
	if (wr->opcode == IBV_WR_BIND_MW && (wr->num_sge || wr->imm_data || !wr->bind_mw.mw))
		return -EINVAL;

	memset(w, 0, sizeof(*w));
	w->wr.wr_id = wr->wr_id;
	w->wr.opcode = wr->opcode;
	w->wr.send_flags = wr->send_flags;
	if (qp->sq_sig_all)
		w->wr.send_flags |= IBV_SEND_SIGNALED;
	if (wr->opcode == IBV_WR_SEND_WITH_INV || wr->opcode == IBV_WR_LOCAL_INV)
		w->wr.ex.invalidate_rkey = wr->invalidate_rkey;
	else
		w->wr.ex.imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.wr.atomic.swap = wr->wr.atomic.swap;
		w->wr.wr.atomic.rkey = wr->wr.atomic.rkey;
		w->iova = wr->wr.atomic.remote_addr;
	} else if (wr->opcode == IBV_WR_BIND_MW) {
		const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

		w->wr.wr.mw.addr = bi->addr;
		w->wr.wr.mw.length = bi->length;
		w->wr.wr.mw.mr_lkey = bi->mr ? bi->mr->lkey : 0;
		w->wr.wr.mw.mw_rkey = wr->bind_mw.mw->rkey;
		w->wr.wr.mw.rkey = wr->bind_mw.rkey;
		w->wr.wr.mw.access = bi->mw_access_flags;
	} else if (wr->opcode == ROXE_WR_FLUSH) {
		/* as the rxe provider's wr_flush(): range in iova and dma.length */
		struct roxe_uwr_flush fl = {
			.remote_addr = wr->wr.atomic.remote_addr,
			.length = (uint32_t)wr->wr.atomic.compare_add,
			.rkey = wr->wr.atomic.rkey,
			.type = (uint8_t)wr->wr.atomic.swap,
			.level = (uint8_t)(wr->wr.atomic.swap >> 8),
		};

		roxe_uwr_flush_set(w, &fl);
		w->iova = fl.remote_addr;
		length = fl.length;
	} else if (qp->type == IBV_QPT_UD) {
		const struct roxe_ah *ah = (const struct roxe_ah *)wr->wr.ud.ah;

		w->wr.wr.ud.remote_qpn = wr->wr.ud.remote_qpn & ROXE_QPN_MASK;
		w->wr.wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		w->wr.wr.ud.av = ah->av;
	} else {
		w->wr.wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.wr.rdma.rkey = wr->wr.rdma.rkey;
		w->iova = wr->wr.rdma.remote_addr;
	}
	if (is_inline) {
		uint8_t *p = w->dma.inline_data;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(p, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		w->dma.num_sge = 0;
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			w->dma.sge[i].addr = wr->sg_list[i].addr;
			w->dma.sge[i].length = wr->sg_list[i].length;
			w->dma.sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->dma.num_sge = (uint32_t)wr->num_sge;
	}
	w->dma.length = (uint32_t)length;
	w->dma.resid = (uint32_t)length;
	w->ssn = qp->ssn++;
	w->state = ROXE_WQE_POSTED;
	return 0;
}

int roxe_post_send(struct roxe_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	int st, err = 0;

	if (!qp || !wr)
		return -EINVAL;
	st = roxe_qp_state(qp);
	/* SQD accepts sends (started at SQD -> RTS), ERR flushes them, SQE
	 * refuses them: the application has an error to handle first. */
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR || st == IBV_QPS_SQE) {
		if (bad_wr)
			*bad_wr = wr;
		return -EINVAL;
	}
	pthread_spin_lock(&qp->sq_post_lock);
	for (; wr; wr = wr->next) {
		if (roxe_queue_full(&qp->sq_prod)) {
			err = -ENOMEM;
			break;
		}
		err = fill_send_wqe(qp, roxe_queue_producer_slot(&qp->sq_prod), wr);
		if (err)
			break;
		roxe_queue_produce(&qp->sq_prod);
	}
	pthread_spin_unlock(&qp->sq_post_lock);
	if (err && bad_wr)
		*bad_wr = wr;
	roxe_engine_doorbell(qp);
	return err;
}

/* Shared by QP receive queues and SRQs. */
int roxe_fill_recv_wqe(struct rxe_recv_wqe *w, const struct ibv_recv_wr *wr, uint32_t max_sge)
{
	uint64_t length = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	for (int i = 0; i < wr->num_sge; i++) {
		w->dma.sge[i].addr = wr->sg_list[i].addr;
		w->dma.sge[i].length = wr->sg_list[i].length;
		w->dma.sge[i].lkey = wr->sg_list[i].lkey;
		length += wr->sg_list[i].length;
	}
	if (length > ROXE_MAX_MSG_SZ)
		return -EINVAL;
	w->dma.num_sge = (uint32_t)wr->num_sge;
	w->dma.length = (uint32_t)length;
	w->dma.resid = (uint32_t)length;
	return 0;
}

int roxe_post_recv(struct roxe_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int err = 0;

	if (!qp || !wr)
		return -EINVAL;
	if (qp->srq || roxe_qp_state(qp) == IBV_QPS_RESET) {
		if (bad_wr)
			*bad_wr = wr;
		return -EINVAL;
	}
	pthread_spin_lock(&qp->rq_post_lock);
	for (; wr; wr = wr->next) {
		if (roxe_queue_full(&qp->rq_prod)) {
			err = -ENOMEM;
			break;
		}
		err = roxe_fill_recv_wqe(roxe_queue_producer_slot(&qp->rq_prod), wr,
					 qp->cap.max_recv_sge);
		if (err)
			break;
		roxe_queue_produce(&qp->rq_prod);
	}
	pthread_spin_unlock(&qp->rq_post_lock);
	if (err && bad_wr)
		*bad_wr = wr;
	/* A responder waiting out an RNR may now have a buffer. */
	roxe_engine_doorbell(qp);
	return err;
}

