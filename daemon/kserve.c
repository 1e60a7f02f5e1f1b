// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxed's side of /dev/roxe (include/uapi/roxe/kabi.h): the module announces
 * CQs, SRQs, QPs (with every modify) and MRs of the applications using its
 * ib_device; we map each queue and each MR's pinned pages into this
 * process and create the engine's served objects on them, at the numbers
 * and keys the module chose. From then on the engine runs the transport
 * over the application's own rings:
 *   - send doorbells arrive on the module's per-engine rings (the engines
 *     read them, engine.c), receive queues need none;
 *   - a CQE that may raise a completion event checks the module's arm
 *     byte and, if armed, asks the module to raise it (ROXE_IOC_CQ_EVENT);
 *   - the engine's asynchronous events go to the module (ROXE_IOC_EVENT).
 * A command is answered only once the engine has acted on it: a destroyed
 * QP has left its engine, a deregistered MR is no longer touched (the
 * module revokes our mapping right after).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <rdma/rdma_user_rxe.h>
#include "roxe/frame.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "roxe/maps.h"
#include "roxe/queue.h"
#include "roxe/verbs.h"
#include "verbs/served.h"
#include "kserve.h"


struct ks_map {
	void			*p;
	size_t			bytes;
};

struct ks_cq {
	struct ks_map		map;
	struct roxe_cq		*cq;
};

struct ks_srq {
	struct ks_map		map;
	struct roxe_srq		*srq;
};

struct ks_qp {
	struct ks_map		sq, rq;
	struct roxe_qp		*qp;
	unsigned		type;
	unsigned		state;		/* enum ib_qp_state, for the logs */
};

struct ks_mr {
	struct ks_map		map;
	struct roxe_mr		*mr;
};

struct roxe_kserve {
	int			fd;
	struct roxe_device	*dev;
	roxe_kserve_log_fn	log;
	int			verbose;
	struct roxe_kabi_shared	*shared;
	size_t			shared_bytes;
	struct ks_cq		*cq;		/* ROXE_MAX_CQ, by cqn */
	struct ks_srq		*srq;		/* ROXE_MAX_SRQ, by srqn */
	struct ks_qp		*qp;		/* ROXE_MAX_QPS, by qpn */
	struct ks_mr		*mr;		/* ROXE_MAX_MR, by key >> 8 */
	struct ibv_mw		**mw;		/* ROXE_MAX_MW, by (key >> 8) - ROXE_MW_INDEX_BASE */
	struct roxe_pd		**pd;		/* ROXE_MAX_PD, by pdn, made on first use */
	uint64_t		commands, command_errors, async_events, async_lost;
	_Atomic uint64_t	cq_events;	/* the engines' threads raise them */
	struct roxe_qp_stats	retired;	/* counters of destroyed QPs */
	uint64_t		stats_updates;	/* roxe_kserve_push_stats calls */
};

static const char *const state_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};
static const char *const type_names[] = {
	[2] = "RC", [3] = "UC", [4] = "UD",
};

static const char *state_name(unsigned s)
{
	return s < 7 ? state_names[s] : "?";
}

static const char *type_name(unsigned t)
{
	return t < 5 && type_names[t] ? type_names[t] : "?";
}

static int map_token(struct roxe_kserve *ks, uint64_t token, uint64_t bytes, struct ks_map *m)
{
	void *p;

	if (!bytes || bytes > (1ULL << 40))
		return -EINVAL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ks->fd, (off_t)token);
	if (p == MAP_FAILED)
		return -errno;
	m->p = p;
	m->bytes = bytes;
	return 0;
}

/* The shape of a queue as the module's command gives it: the only one the
 * engine uses (the header in the mapping is the application's to rewrite). */
static struct roxe_queue_geom queue_geom(const struct roxe_kabi_queue *q)
{
	return (struct roxe_queue_geom){ .mask = q->slots - 1, .log2_elem = q->log2_elem };
}

/* Map one queue whose shape is sane and fits in its mapping. */
static int map_queue(struct roxe_kserve *ks, const struct roxe_kabi_queue *q, uint32_t min_elem,
		     struct ks_map *m)
{
	if (q->slots < 2 || !roxe_queue_geom_ok(queue_geom(q), min_elem) ||
	    q->bytes < roxe_queue_bytes(__builtin_ctz(q->slots), q->log2_elem))
		return -EINVAL;
	return map_token(ks, q->token, q->bytes, m);
}

static void unmap(struct ks_map *m)
{
	if (m->p)
		munmap(m->p, m->bytes);
	m->p = NULL;
	m->bytes = 0;
}

static struct roxe_pd *pd_get(struct roxe_kserve *ks, uint32_t pdn)
{
	if (pdn >= ROXE_MAX_PD)
		return NULL;
	if (!ks->pd[pdn] && roxe_alloc_pd(ks->dev, &ks->pd[pdn]))
		return NULL;
	return ks->pd[pdn];
}

/* The module freed PD pdn: its number may name another PD next. Nothing of
 * it may be left (the module destroys a PD's objects first, and every
 * destroy reaches us before this); -EBUSY, logged, if something is. */
static int pd_forget(struct roxe_kserve *ks, uint32_t pdn)
{
	int err = ks->pd[pdn] ? roxe_dealloc_pd(ks->pd[pdn]) : 0;

	if (!err)
		ks->pd[pdn] = NULL;
	if (ks->verbose)
		ks->log(LOG_DEBUG, "dealloc pd %u%s%s", pdn, err ? ": " : "", err ? strerror(-err) : "");
	return err;
}

/* --- completion events and asynchronous events -------------------------------- */
/* A CQE went in (roxe_cq_post fenced already): raise the module's
 * completion event if the application armed the CQ for this one. */
static void cq_event(void *ctx, struct roxe_cq *cq, bool solicited)
{
	struct roxe_kserve *ks = ctx;
	uint32_t cqn = roxe_served_cq_id(cq);
	uint8_t armed = __atomic_load_n(&ks->shared->cq_armed[cqn], __ATOMIC_RELAXED);

	if (!(armed == 2 || (armed == 1 && solicited)))
		return;
	atomic_fetch_add_explicit(&ks->cq_events, 1, memory_order_relaxed);
	if (ioctl(ks->fd, ROXE_IOC_CQ_EVENT, &cqn) < 0 && errno != ENOENT)
		ks->log(LOG_WARNING, "cq %u: completion event: %s", cqn, strerror(errno));
}

/* The engine's events carry their object's number (the module's, for
 * served objects) and are dropped when the object is destroyed, so the
 * number names the object that raised it; the pointer is compared too,
 * never followed. */
static int event_id(const struct roxe_kserve *ks, const struct roxe_async_event *ev,
		    uint32_t *id)
{
	uint32_t n = ev->id;

	switch (ev->type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_SQ_DRAINED:
		if (n >= ROXE_MAX_QPS || !ks->qp[n].qp || ks->qp[n].qp != ev->element.qp)
			return -ENOENT;
		break;
	case IBV_EVENT_CQ_ERR:
		if (n >= ROXE_MAX_CQ || !ks->cq[n].cq || ks->cq[n].cq != ev->element.cq)
			return -ENOENT;
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		if (n >= ROXE_MAX_SRQ || !ks->srq[n].srq || ks->srq[n].srq != ev->element.srq)
			return -ENOENT;
		break;
	default:
		return -EINVAL;
	}
	*id = n;
	return 0;
}

/* ibv_event_type and ib_event_type agree on these values. */
static void forward_events(struct roxe_kserve *ks)
{
	struct roxe_async_event ev;
	uint64_t n;

	if (read(roxe_async_fd(ks->dev), &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	uint64_t lost = roxe_async_lost(ks->dev);

	if (lost != ks->async_lost) {
		ks->log(LOG_WARNING, "%llu asynchronous events lost: the event ring was full",
			(unsigned long long)(lost - ks->async_lost));
		ks->async_lost = lost;
	}
	while (roxe_get_async_event(ks->dev, &ev) == 0) {
		struct roxe_kabi_event k = { .type = ev.type };

		if (event_id(ks, &ev, &k.id))
			continue;	/* its object went away meanwhile */
		if (ks->verbose)
			ks->log(LOG_DEBUG, "event %u on %u", k.type, k.id);
		ks->async_events++;
		if (ioctl(ks->fd, ROXE_IOC_EVENT, &k) < 0 && errno != ENOENT)
			ks->log(LOG_WARNING, "event %u on %u: %s", k.type, k.id, strerror(errno));
	}
}

/* --- the objects ---------------------------------------------------------------- */
/* Sum of the per-QP counters roxed's port counters add up. */
static void qp_stats_add(struct roxe_qp_stats *sum, const struct roxe_qp_stats *s)
{
#define ADD(f) sum->f += s->f;
	ADD(rx_packets) ADD(rx_bytes) ADD(rx_drop_no_socket) ADD(rx_drop_malformed)
	ADD(tx_packets) ADD(tx_bytes) ADD(retransmits) ADD(nak_seq_err_sent)
	ADD(nak_inv_req_sent) ADD(nak_rem_access_sent) ADD(nak_rem_op_sent)
	ADD(nak_seq_err_rcvd) ADD(nak_inv_req_rcvd) ADD(nak_rem_access_rcvd)
	ADD(nak_rem_op_rcvd) ADD(rnr_nak_sent) ADD(rnr_nak_rcvd) ADD(duplicates)
	ADD(out_of_sequence) ADD(timeouts) ADD(icrc_errors) ADD(ecn_marked) ADD(cnp_sent)
	ADD(cnp_received) ADD(cc_rate_cuts)
#undef ADD
}

static void qp_forget(struct roxe_kserve *ks, unsigned qpn)
{
	struct ks_qp *q = &ks->qp[qpn];
	struct roxe_qp_stats s;

	if (q->qp) {
		roxe_destroy_qp(q->qp);	/* returns once its engine let go */
		/* its counters stay in the port's totals (the QPN's are
		 * zeroed when a new QP takes it) */
		if (!roxe_served_qp_stats(ks->dev, qpn, &s))
			qp_stats_add(&ks->retired, &s);
	}
	unmap(&q->sq);
	unmap(&q->rq);
	memset(q, 0, sizeof(*q));
}

static void cq_forget(struct ks_cq *c)
{
	if (c->cq && roxe_destroy_cq(c->cq) == -EBUSY)
		return;		/* a QP still uses it: the module destroys QPs first */
	c->cq = NULL;
	unmap(&c->map);
}

static void srq_forget(struct ks_srq *s)
{
	if (s->srq && roxe_destroy_srq(s->srq) == -EBUSY)
		return;
	s->srq = NULL;
	unmap(&s->map);
}

static void mw_forget(struct ibv_mw **w)
{
	if (*w)
		roxe_dealloc_mw(*w);	/* returns once no engine touches it */
	*w = NULL;
}

/* The MR goes whatever windows are bound to it (a create answered too
 * late and undone, or our end). */
static void mr_forget(struct ks_mr *m)
{
	roxe_served_mr_del(m->mr);
	m->mr = NULL;
	unmap(&m->map);
}

/* The application's ibv_dereg_mr: refused while windows are bound to the
 * MR (as rxe), which then stays, mapped. */
static int dereg_mr(struct roxe_kserve *ks, uint32_t key)
{
	struct ks_mr *m;
	int err;

	if ((key >> 8) >= ROXE_MAX_MR)
		return -EINVAL;
	m = &ks->mr[key >> 8];
	if (m->mr && (err = roxe_dereg_mr(m->mr)))
		return err;
	m->mr = NULL;
	unmap(&m->map);
	return 0;
}

/* ibv_alloc_mw: the window at the module's key. Binds come through the
 * application's SQ, as BIND_MW WQEs the engine checks. */
static int alloc_mw(struct roxe_kserve *ks, const struct roxe_kabi_mw *k)
{
	struct roxe_pd *pd = pd_get(ks, k->pdn);
	struct ibv_mw **w;
	int err;

	if (!pd || !roxe_served_key_is_mw(k->key) ||
	    (k->type != IBV_MW_TYPE_1 && k->type != IBV_MW_TYPE_2))
		return -EINVAL;
	w = &ks->mw[(k->key >> 8) - ROXE_MW_INDEX_BASE];
	mw_forget(w);		/* an alloc we answered too late, undone since */
	err = roxe_served_mw_add(pd, k->key, (enum ibv_mw_type)k->type, w);
	if (ks->verbose)
		ks->log(LOG_DEBUG, "alloc mw 0x%x: type %u, pd %u%s%s", k->key, k->type, k->pdn,
			err ? ": " : "", err ? strerror(-err) : "");
	return err;
}

static int create_cq(struct roxe_kserve *ks, const struct roxe_kabi_cq *k)
{
	struct ks_cq *c;
	int err;

	if (k->cqn >= ROXE_MAX_CQ)
		return -EINVAL;
	c = &ks->cq[k->cqn];
	cq_forget(c);		/* a create we answered too late, undone since */
	if (c->cq)
		return -EBUSY;	/* still a QP's: kept, not overwritten (fuzz_kserve) */
	err = map_queue(ks, &k->q, sizeof(struct ib_uverbs_wc), &c->map);
	if (!err)
		err = roxe_served_cq_create(ks->dev, k->cqn, c->map.p, queue_geom(&k->q), cq_event,
					    ks, k->tenant, &c->cq);
	if (err) {
		cq_forget(c);
		return err;
	}
	if (ks->verbose)
		ks->log(LOG_DEBUG, "create cq %u: %u entries", k->cqn, k->q.slots - 1);
	return 0;
}

/* ibv_resize_cq: the engines move to the new ring (the module's shape),
 * then the old ring goes from this process before we answer. */
static int resize_cq(struct roxe_kserve *ks, const struct roxe_kabi_cq *k)
{
	struct ks_map m = { 0 };
	struct ks_cq *c;
	int err;

	if (k->cqn >= ROXE_MAX_CQ || !ks->cq[k->cqn].cq)
		return -EINVAL;
	c = &ks->cq[k->cqn];
	err = map_queue(ks, &k->q, sizeof(struct ib_uverbs_wc), &m);
	if (!err)
		err = roxe_served_cq_resize(c->cq, m.p, queue_geom(&k->q));
	if (err) {
		unmap(&m);
		return err;
	}
	unmap(&c->map);
	c->map = m;
	if (ks->verbose)
		ks->log(LOG_DEBUG, "resize cq %u: %u entries", k->cqn, k->q.slots - 1);
	return 0;
}

static int create_srq(struct roxe_kserve *ks, const struct roxe_kabi_srq *k)
{
	struct roxe_pd *pd = pd_get(ks, k->pdn);
	struct ks_srq *s;
	int err;

	if (k->srqn >= ROXE_MAX_SRQ || !pd)
		return -EINVAL;
	s = &ks->srq[k->srqn];
	srq_forget(s);
	if (s->srq)
		return -EBUSY;	/* still a QP's: kept, not overwritten */
	err = map_queue(ks, &k->q, sizeof(struct rxe_recv_wqe), &s->map);
	if (!err)
		err = roxe_served_srq_create(pd, k->srqn, s->map.p, queue_geom(&k->q), k->max_sge,
					     k->limit, k->tenant, &s->srq);
	if (err) {
		srq_forget(s);
		return err;
	}
	if (ks->verbose)
		ks->log(LOG_DEBUG, "create srq %u: %u x %u B", k->srqn, k->q.slots - 1,
			1u << k->q.log2_elem);
	return 0;
}

static int create_qp(struct roxe_kserve *ks, const struct roxe_kabi_qp *k)
{
	struct roxe_served_qp_init in = { 0 };
	struct roxe_pd *pd = pd_get(ks, k->pdn);
	struct ks_qp *q;
	int err;

	if (k->qpn >= ROXE_MAX_QPS || k->send_cqn >= ROXE_MAX_CQ || k->recv_cqn >= ROXE_MAX_CQ || !pd)
		return -EINVAL;
	if (!ks->cq[k->send_cqn].cq || !ks->cq[k->recv_cqn].cq)
		return -ENOENT;		/* a CQ we were never told about */
	if (k->srqn != ~0U && (k->srqn >= ROXE_MAX_SRQ || !ks->srq[k->srqn].srq))
		return -ENOENT;
	q = &ks->qp[k->qpn];
	qp_forget(ks, k->qpn);
	err = map_queue(ks, &k->sq, sizeof(struct rxe_send_wqe), &q->sq);
	if (!err && k->srqn == ~0U)
		err = map_queue(ks, &k->rq, sizeof(struct rxe_recv_wqe), &q->rq);
	if (err)
		goto fail;
	in.qpn = k->qpn;
	in.type = (enum ibv_qp_type)k->type;
	in.send_cq = ks->cq[k->send_cqn].cq;
	in.recv_cq = ks->cq[k->recv_cqn].cq;
	in.srq = k->srqn != ~0U ? ks->srq[k->srqn].srq : NULL;
	in.sq_buf = q->sq.p;
	in.rq_buf = q->rq.p;
	in.sq_geom = queue_geom(&k->sq);
	in.rq_geom = queue_geom(&k->rq);
	in.cap.max_send_wr = k->sq.slots - 1;
	in.cap.max_recv_wr = k->srqn == ~0U ? k->rq.slots - 1 : 0;
	in.cap.max_send_sge = k->max_send_sge;
	in.cap.max_recv_sge = k->max_recv_sge;
	in.cap.max_inline_data = k->max_inline;
	in.sq_sig_all = k->sq_sig_all;
	in.kernel_ulp = k->flags & ROXE_KABI_QP_KERNEL;
	in.tenant = k->tenant;
	err = roxe_served_qp_create(pd, &in, &q->qp);
	if (err)
		goto fail;
	q->type = k->type;
	if (ks->verbose)
		ks->log(LOG_DEBUG, "create qp %u (%s): sq %u x %u B, rq %s%u, cq %u/%u",
			k->qpn, type_name(k->type), k->sq.slots - 1, 1u << k->sq.log2_elem,
			k->srqn != ~0U ? "srq " : "", k->srqn != ~0U ? k->srqn : k->rq.slots - 1,
			k->send_cqn, k->recv_cqn);
	return 0;
fail:
	qp_forget(ks, k->qpn);
	return err;
}

/* The module checked the transition (ib_modify_qp_is_ok) and resolved the
 * path; the engine checks again against its own table. */
static int modify_qp(struct roxe_kserve *ks, const struct roxe_kabi_qp_attr *a)
{
	const int known = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN |
			  IBV_QP_EN_SQD_ASYNC_NOTIFY;
	struct ibv_qp_attr attr = { 0 };
	struct ks_qp *q;
	int mask, err;

	if (a->qpn >= ROXE_MAX_QPS || !ks->qp[a->qpn].qp)
		return -ENOENT;
	q = &ks->qp[a->qpn];
	mask = (int)a->mask & known;
	if ((mask & IBV_QP_AV) && a->sgid_type != 2)	/* IB_GID_TYPE_ROCE_UDP_ENCAP */
		return -EOPNOTSUPP;	/* RoCE v1 GIDs: roxe speaks RoCE v2 only */
	attr.qp_state = (enum ibv_qp_state)a->state;
	attr.qp_access_flags = a->access;
	attr.pkey_index = 0;
	attr.port_num = 1;
	attr.qkey = a->qkey;
	attr.path_mtu = (enum ibv_mtu)a->path_mtu;
	attr.dest_qp_num = a->dest_qpn;
	attr.rq_psn = a->rq_psn;
	attr.sq_psn = a->sq_psn;
	attr.timeout = a->timeout;
	attr.retry_cnt = a->retry_cnt;
	attr.rnr_retry = a->rnr_retry;
	attr.min_rnr_timer = a->min_rnr_timer;
	attr.max_rd_atomic = a->max_rd_atomic;
	attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr.en_sqd_async_notify = a->en_sqd_async_notify;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	memcpy(attr.ah_attr.grh.dgid.raw, a->dgid, 16);
	attr.ah_attr.grh.hop_limit = a->hop_limit;
	attr.ah_attr.grh.traffic_class = a->traffic_class;
	attr.ah_attr.grh.flow_label = a->flow_label;
	err = roxe_served_modify_qp(q->qp, &attr, mask, a->sgid, a->dmac);
	if (ks->verbose)
		ks->log(LOG_DEBUG, "modify qp %u: %s -> %s (mask 0x%x)%s%s", a->qpn,
			state_name(q->state), state_name(a->state), a->mask,
			err ? ": " : "", err ? strerror(-err) : "");
	if (!err && (mask & IBV_QP_STATE))
		q->state = a->state;
	return err;
}

/* ibv_modify_srq's limit: the engine raises SRQ_LIMIT_REACHED (forwarded
 * as ROXE_IOC_EVENT) when the SRQ's level drops below it. */
static int modify_srq(struct roxe_kserve *ks, const struct roxe_kabi_srq *k)
{
	struct ibv_srq_attr attr = { .srq_limit = k->limit };
	int err;

	if (k->srqn >= ROXE_MAX_SRQ || !ks->srq[k->srqn].srq)
		return -ENOENT;
	err = roxe_modify_srq(ks->srq[k->srqn].srq, &attr, IBV_SRQ_LIMIT);
	if (ks->verbose)
		ks->log(LOG_DEBUG, "modify srq %u: limit %u%s%s", k->srqn, k->limit,
			err ? ": " : "", err ? strerror(-err) : "");
	return err;
}

/* A fast-registration MR's pages go behind its window (or away) through
 * the module, when the engine executes its REG_MR or an invalidation. */
static int mr_window(void *ctx, uint32_t key, bool map)
{
	struct roxe_kserve *ks = ctx;
	struct roxe_kabi_mr_window w = { .key = key, .map = map };

	if (ioctl(ks->fd, ROXE_IOC_MR_WINDOW, &w) == 0)
		return 0;
	ks->log(LOG_WARNING, "mr 0x%x: %s its window: %s", key, map ? "filling" : "emptying",
		strerror(errno));
	return -errno;
}

/* REG_MR: a user MR (pinned pages); ALLOC_MR: a kernel ULP's fast-reg MR. */
static int reg_mr(struct roxe_kserve *ks, const struct roxe_kabi_mr *k, bool fast)
{
	struct roxe_pd *pd = pd_get(ks, k->pdn);
	struct ks_mr *m;
	int err;

	if (!pd || (k->key >> 8) == 0 || (k->key >> 8) >= ROXE_MAX_MR || k->page_off >= 4096 ||
	    k->map_bytes < k->page_off + k->length)
		return -EINVAL;
	m = &ks->mr[k->key >> 8];
	mr_forget(m);
	err = map_token(ks, k->token, k->map_bytes, &m->map);
	if (!err && fast)
		err = roxe_served_mr_fast(pd, k->key, m->map.p, k->map_bytes, mr_window, ks,
					  &m->mr);
	else if (!err)
		err = roxe_served_mr_add(pd, k->key, k->iova, k->length, k->access,
					 (uint8_t *)m->map.p + k->page_off, &m->mr);
	if (err) {
		mr_forget(m);
		return err;
	}
	if (ks->verbose && fast)
		ks->log(LOG_DEBUG, "alloc mr 0x%x: fast registration, %llu pages", k->key,
			(unsigned long long)k->map_bytes / 4096);
	else if (ks->verbose)
		ks->log(LOG_DEBUG, "reg mr 0x%x: %llu bytes at 0x%llx, access 0x%x", k->key,
			(unsigned long long)k->length, (unsigned long long)k->iova, k->access);
	return 0;
}

/* An application's AH: the addressing ib_core resolved, by number. */
static int create_ah(struct roxe_kserve *ks, const struct roxe_kabi_ah *k)
{
	struct roxe_pd *pd = pd_get(ks, k->pdn);
	struct roxe_frame_addr a = { 0 };
	char ip[64];
	int err;

	if (!pd || k->ah_num == 0 || k->ah_num >= ROXE_KABI_MAX_AH)
		return -EINVAL;
	memcpy(a.sgid, k->sgid, 16);
	memcpy(a.dgid, k->dgid, 16);
	memcpy(a.dmac, k->dmac, 6);
	a.hop_limit = k->hop_limit;
	a.tclass = k->traffic_class;
	a.flow_label = k->flow_label & 0xfffff;
	err = roxe_served_ah_add(pd, k->ah_num, &a);
	if (ks->verbose) {
		roxe_gid_ntop(k->dgid, ip, sizeof(ip));
		ks->log(LOG_DEBUG, "create ah %u: pd %u to %s%s%s", k->ah_num, k->pdn, ip,
			err ? ": " : "", err ? strerror(-err) : "");
	}
	return err;
}

/* c is our copy of the command: its values are still an application's. */
static int mcast(struct roxe_kserve *ks, const struct roxe_kabi_mcast *k, bool attach)
{
	union ibv_gid gid;
	char ip[64];
	int err;

	if (k->qpn >= ROXE_MAX_QPS || !ks->qp[k->qpn].qp)
		return -EINVAL;
	memcpy(gid.raw, k->mgid, 16);
	err = attach ? roxe_attach_mcast(ks->qp[k->qpn].qp, &gid) :
		       roxe_detach_mcast(ks->qp[k->qpn].qp, &gid);
	if (ks->verbose) {
		roxe_gid_ntop(gid.raw, ip, sizeof(ip));
		ks->log(LOG_DEBUG, "%s qp %u %s %s%s%s", attach ? "attach" : "detach", k->qpn,
			attach ? "to" : "from", ip, err ? ": " : "", err ? strerror(-err) : "");
	}
	return err;
}

static int handle(struct roxe_kserve *ks, const struct roxe_kabi_cmd *c)
{
	const char *what;

	switch (c->op) {
	case ROXE_KOP_CREATE_CQ:
		return create_cq(ks, &c->cq);
	case ROXE_KOP_RESIZE_CQ:
		return resize_cq(ks, &c->cq);
	case ROXE_KOP_CREATE_SRQ:
		return create_srq(ks, &c->srq);
	case ROXE_KOP_CREATE_QP:
		return create_qp(ks, &c->qp);
	case ROXE_KOP_MODIFY_QP:
		return modify_qp(ks, &c->modify);
	case ROXE_KOP_REG_MR:
		return reg_mr(ks, &c->mr, false);
	case ROXE_KOP_ALLOC_MR:
		return reg_mr(ks, &c->mr, true);
	case ROXE_KOP_MODIFY_SRQ:
		return modify_srq(ks, &c->srq);
	case ROXE_KOP_CREATE_AH:
		return create_ah(ks, &c->ah);
	case ROXE_KOP_ATTACH_MCAST:
	case ROXE_KOP_DETACH_MCAST:
		return mcast(ks, &c->mcast, c->op == ROXE_KOP_ATTACH_MCAST);
	case ROXE_KOP_DESTROY_AH:
		if (c->id == 0 || c->id >= ROXE_KABI_MAX_AH)
			return -EINVAL;
		roxe_served_ah_del(ks->dev, c->id);
		what = "destroy ah %u";
		break;
	case ROXE_KOP_DESTROY_CQ:
		if (c->id >= ROXE_MAX_CQ)
			return -EINVAL;
		cq_forget(&ks->cq[c->id]);
		what = "destroy cq %u";
		break;
	case ROXE_KOP_DESTROY_SRQ:
		if (c->id >= ROXE_MAX_SRQ)
			return -EINVAL;
		srq_forget(&ks->srq[c->id]);
		what = "destroy srq %u";
		break;
	case ROXE_KOP_DESTROY_QP:
		if (c->id >= ROXE_MAX_QPS)
			return -EINVAL;
		qp_forget(ks, c->id);
		what = "destroy qp %u";
		break;
	case ROXE_KOP_DEREG_MR:
		if (dereg_mr(ks, c->id))
			return -EINVAL;
		what = "dereg mr 0x%x";
		break;
	case ROXE_KOP_ALLOC_MW:
		return alloc_mw(ks, &c->mw);
	case ROXE_KOP_DEALLOC_MW:
		if (!roxe_served_key_is_mw(c->id))
			return -EINVAL;
		mw_forget(&ks->mw[(c->id >> 8) - ROXE_MW_INDEX_BASE]);
		what = "dealloc mw 0x%x";
		break;
	case ROXE_KOP_DEALLOC_PD:
		if (c->id >= ROXE_MAX_PD)
			return -EINVAL;
		return pd_forget(ks, c->id);
	default:
		return -EOPNOTSUPP;
	}
	if (ks->verbose)
		ks->log(LOG_DEBUG, what, c->id);
	return 0;
}

/*
 * The channel is never empty while a tenant floods it (32 threads, each
 * with a verb in flight), so this reads a bounded number of commands and
 * forwards the engines' events before each: another tenant's event waits
 * behind one command, not behind the flood, and roxed's loop (signals,
 * counters, the control socket) gets a turn after every
 * KSERVE_CMDS_PER_RUN commands (kmod_hostile's flood: its victim's
 * SQ_DRAINED events).
 */
#define KSERVE_CMDS_PER_RUN	16

int roxe_kserve_run(struct roxe_kserve *ks)
{
	struct roxe_kabi_cmd c;

	for (int i = 0; i < KSERVE_CMDS_PER_RUN; i++) {
		ssize_t n;
		struct roxe_kabi_reply r;

		forward_events(ks);
		n = read(ks->fd, &c, sizeof(c));

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n != sizeof(c))
			return -EPROTO;
		r.seq = c.seq;
		r.status = handle(ks, &c);
		ks->commands++;
		ks->command_errors += r.status != 0;
		if (r.status)
			ks->log(LOG_WARNING, "command %u (seq %u) failed: %s", c.op, c.seq,
				strerror(-r.status));
		if (c.seq && write(ks->fd, &r, sizeof(r)) != sizeof(r))
			return -errno;
	}
	forward_events(ks);
	return 0;	/* the poll loop comes back while commands wait */
}

int roxe_kserve_event_fd(const struct roxe_kserve *ks)
{
	return roxe_async_fd(ks->dev);
}

/* Tell the module where doorbells go, map what we share with it, and let
 * each engine read its ring. */
static int serve(struct roxe_kserve *ks)
{
	struct roxe_kabi_serve s = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int err = roxe_served_engine_fds(ks->dev, &s);

	if (err)
		return err;
	if (ioctl(ks->fd, ROXE_IOC_SERVE, &s) < 0)
		return -errno;
	ks->shared_bytes = (sizeof(struct roxe_kabi_shared) + (size_t)page - 1) &
			   ~((size_t)page - 1);
	p = mmap(NULL, ks->shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ks->fd,
		 (off_t)ROXE_KABI_SHARED_TOKEN);
	if (p == MAP_FAILED)
		return -errno;
	ks->shared = p;
	roxe_served_doorbells_start(ks->dev, ks->shared);
	return 0;
}

int roxe_kserve_new(int fd, struct roxe_device *dev, roxe_kserve_log_fn log, int verbose,
		    struct roxe_kserve **out)
{
	struct roxe_kserve *ks = calloc(1, sizeof(*ks));
	int err;

	if (!ks)
		return -ENOMEM;
	ks->fd = fd;
	ks->dev = dev;
	ks->log = log;
	ks->verbose = verbose;
	ks->cq = calloc(ROXE_MAX_CQ, sizeof(*ks->cq));
	ks->srq = calloc(ROXE_MAX_SRQ, sizeof(*ks->srq));
	ks->qp = calloc(ROXE_MAX_QPS, sizeof(*ks->qp));
	ks->mr = calloc(ROXE_MAX_MR, sizeof(*ks->mr));
	ks->mw = calloc(ROXE_MAX_MW, sizeof(*ks->mw));
	ks->pd = calloc(ROXE_MAX_PD, sizeof(*ks->pd));
	err = ks->cq && ks->srq && ks->qp && ks->mr && ks->mw && ks->pd ? serve(ks) : -ENOMEM;
	if (err) {
		roxe_kserve_free(ks);
		return err;
	}
	*out = ks;
	return 0;
}

void roxe_kserve_free(struct roxe_kserve *ks)
{
	if (!ks)
		return;
	/* QPs first: they hold the CQs, SRQs and PDs. */
	for (unsigned i = 0; ks->qp && i < ROXE_MAX_QPS; i++)
		qp_forget(ks, i);
	for (unsigned i = 0; ks->mw && i < ROXE_MAX_MW; i++)
		mw_forget(&ks->mw[i]);
	for (unsigned i = 0; ks->mr && i < ROXE_MAX_MR; i++)
		mr_forget(&ks->mr[i]);
	roxe_served_ah_del_all(ks->dev);
	for (unsigned i = 0; ks->srq && i < ROXE_MAX_SRQ; i++)
		srq_forget(&ks->srq[i]);
	for (unsigned i = 0; ks->cq && i < ROXE_MAX_CQ; i++)
		cq_forget(&ks->cq[i]);
	for (unsigned i = 0; ks->pd && i < ROXE_MAX_PD; i++)
		if (ks->pd[i])
			roxe_dealloc_pd(ks->pd[i]);
	if (ks->shared) {
		roxe_served_doorbells_stop(ks->dev);
		munmap(ks->shared, ks->shared_bytes);
	}
	free(ks->cq);
	free(ks->srq);
	free(ks->qp);
	free(ks->mr);
	free(ks->mw);
	free(ks->pd);
	free(ks);
}

void roxe_kserve_stats(const struct roxe_kserve *ks, struct roxe_kserve_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned i = 0; i < ROXE_MAX_CQ; i++)
		st->cqs += ks->cq[i].cq != NULL;
	for (unsigned i = 0; i < ROXE_MAX_SRQ; i++)
		st->srqs += ks->srq[i].srq != NULL;
	for (unsigned i = 0; i < ROXE_MAX_QPS; i++)
		st->qps += ks->qp[i].qp != NULL;
	for (unsigned i = 0; i < ROXE_MAX_MR; i++)
		st->mrs += ks->mr[i].mr != NULL;
	st->commands = ks->commands;
	st->command_errors = ks->command_errors;
	st->async_events = ks->async_events;
	st->async_lost = ks->async_lost;
	st->cq_events = atomic_load_explicit(&ks->cq_events, memory_order_relaxed);
}

void roxe_kserve_push_stats(struct roxe_kserve *ks)
{
	struct roxe_qp_stats t = ks->retired, s;
	struct roxe_engine_stats e;
	uint64_t v[ROXE_KSTAT__COUNT] = { 0 };

	if (!ks->shared)
		return;
	for (unsigned i = 0; i < ROXE_MAX_QPS; i++)
		if (ks->qp[i].qp && !roxe_served_qp_stats(ks->dev, i, &s))
			qp_stats_add(&t, &s);
	roxe_served_engine_stats(ks->dev, &e);
	v[ROXE_KSTAT_RX_DROP_ADDR] = e.rx_drop_addr;
	v[ROXE_KSTAT_LOOPBACK] = e.loopback;
	v[ROXE_KSTAT_LOOPBACK_DROP] = e.loopback_drop;
	v[ROXE_KSTAT_SENT_PKTS] = t.tx_packets;
	v[ROXE_KSTAT_RCVD_PKTS] = t.rx_packets;
	v[ROXE_KSTAT_SENT_BYTES] = t.tx_bytes;
	v[ROXE_KSTAT_RCVD_BYTES] = t.rx_bytes;
	v[ROXE_KSTAT_DUP_REQ] = t.duplicates;
	v[ROXE_KSTAT_OOS_REQ] = t.out_of_sequence;
	v[ROXE_KSTAT_RCVD_RNR] = t.rnr_nak_rcvd;
	v[ROXE_KSTAT_SEND_RNR] = t.rnr_nak_sent;
	v[ROXE_KSTAT_RCVD_SEQ_ERR] = t.nak_seq_err_rcvd;
	v[ROXE_KSTAT_SENT_SEQ_ERR] = t.nak_seq_err_sent;
	v[ROXE_KSTAT_RCVD_NAKS] = t.nak_seq_err_rcvd + t.nak_inv_req_rcvd +
				  t.nak_rem_access_rcvd + t.nak_rem_op_rcvd;
	v[ROXE_KSTAT_SENT_NAKS] = t.nak_seq_err_sent + t.nak_inv_req_sent +
				  t.nak_rem_access_sent + t.nak_rem_op_sent;
	v[ROXE_KSTAT_RETRANSMITS] = t.retransmits;
	v[ROXE_KSTAT_TIMEOUTS] = t.timeouts;
	v[ROXE_KSTAT_ICRC_ERR] = t.icrc_errors;
	v[ROXE_KSTAT_RX_DROP_NO_SOCKET] = t.rx_drop_no_socket;
	v[ROXE_KSTAT_RX_DROP_MALFORMED] = t.rx_drop_malformed;
	v[ROXE_KSTAT_ECN_MARKED] = t.ecn_marked;
	v[ROXE_KSTAT_CNP_SENT] = t.cnp_sent;
	v[ROXE_KSTAT_CNP_RCVD] = t.cnp_received;
	v[ROXE_KSTAT_CC_RATE_CUTS] = t.cc_rate_cuts;
	/* the module reads each value on its own: aligned 64-bit stores;
	 * the count of updates last, so that a reader who sees it grow by
	 * two knows every value is from after it first looked */
	for (unsigned i = 0; i < ROXE_KSTAT__COUNT; i++)
		if (i != ROXE_KSTAT_UPDATES)	/* counters past it too */
			__atomic_store_n(&ks->shared->stats.val[i], v[i], __ATOMIC_RELAXED);
	__atomic_store_n(&ks->shared->stats.val[ROXE_KSTAT_UPDATES], ++ks->stats_updates,
			 __ATOMIC_RELEASE);
}
