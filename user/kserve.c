// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxed's side of /dev/roxe's command channel (include/roxe/kabi.h): the
 * module announces CQs, SRQs, QPs (with every modify) and MRs; we map each
 * queue the application maps, check its header, keep the attributes and
 * answer. The transport over these queues is the engine's next step: for
 * now the module refuses the send doorbell, so nothing waits on us.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <sys/mman.h>
#include <rdma/rdma_user_rxe.h>
#include "roxe/kabi.h"
#include "kserve.h"

#define KS_MAX_CQ	16384
#define KS_MAX_SRQ	16384
#define KS_MAX_QP	32768
#define KS_MAX_MR	65536

struct ks_map {
	struct rxe_queue_buf	*buf;
	size_t			bytes;
};

struct ks_qp {
	bool			live;
	struct roxe_kabi_qp	info;
	struct ks_map		sq, rq;
	unsigned		state;		/* enum ib_qp_state */
	struct roxe_kabi_qp_attr attr;		/* merged over every modify */
};

struct ks_mr {
	bool			live;
	struct roxe_kabi_mr	info;
};

struct roxe_kserve {
	int			fd;
	roxe_kserve_log_fn	log;
	int			verbose;
	struct ks_map		cq[KS_MAX_CQ];
	struct ks_map		srq[KS_MAX_SRQ];
	struct ks_qp		*qp;		/* KS_MAX_QP */
	struct ks_mr		*mr;		/* KS_MAX_MR, by key >> 8 */
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

/* Map one queue and check that its header says what the command says. */
static int map_queue(struct roxe_kserve *ks, const struct roxe_kabi_queue *q,
		     struct ks_map *m)
{
	void *p;

	if (!q->bytes || q->bytes > (1ULL << 32) || q->slots & (q->slots - 1))
		return -EINVAL;
	p = mmap(NULL, q->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ks->fd,
		 (off_t)q->token);
	if (p == MAP_FAILED)
		return -errno;
	m->buf = p;
	m->bytes = q->bytes;
	if (m->buf->index_mask != q->slots - 1 || m->buf->log2_elem_size != q->log2_elem) {
		munmap(p, q->bytes);
		m->buf = NULL;
		return -EPROTO;
	}
	return 0;
}

static void unmap_queue(struct ks_map *m)
{
	if (m->buf)
		munmap(m->buf, m->bytes);
	m->buf = NULL;
	m->bytes = 0;
}

static void qp_forget(struct ks_qp *qp)
{
	unmap_queue(&qp->sq);
	unmap_queue(&qp->rq);
	memset(qp, 0, sizeof(*qp));
}

static int create_qp(struct roxe_kserve *ks, const struct roxe_kabi_qp *k)
{
	struct ks_qp *qp;
	int err;

	if (k->qpn >= KS_MAX_QP || k->send_cqn >= KS_MAX_CQ || k->recv_cqn >= KS_MAX_CQ)
		return -EINVAL;
	if (!ks->cq[k->send_cqn].buf || !ks->cq[k->recv_cqn].buf)
		return -ENOENT;		/* a CQ we were never told about */
	if (k->srqn != ~0U && (k->srqn >= KS_MAX_SRQ || !ks->srq[k->srqn].buf))
		return -ENOENT;
	qp = &ks->qp[k->qpn];
	qp_forget(qp);		/* a create we answered too late, undone since */
	err = map_queue(ks, &k->sq, &qp->sq);
	if (!err && k->rq.bytes)
		err = map_queue(ks, &k->rq, &qp->rq);
	if (err) {
		qp_forget(qp);
		return err;
	}
	qp->info = *k;
	qp->live = true;
	if (ks->verbose)
		ks->log(LOG_DEBUG, "create qp %u (%s): sq %u x %u B, rq %s%u x %u B, cq %u/%u",
			k->qpn, type_name(k->type), k->sq.slots - 1, 1u << k->sq.log2_elem,
			k->srqn != ~0U ? "srq " : "",
			k->srqn != ~0U ? k->srqn : k->rq.slots - 1,
			k->srqn != ~0U ? 0 : 1u << k->rq.log2_elem, k->send_cqn, k->recv_cqn);
	return 0;
}

static int modify_qp(struct roxe_kserve *ks, const struct roxe_kabi_qp_attr *a)
{
	struct ks_qp *qp;

	if (a->qpn >= KS_MAX_QP || !ks->qp[a->qpn].live)
		return -ENOENT;
	qp = &ks->qp[a->qpn];
	qp->attr = *a;
	if (ks->verbose)
		ks->log(LOG_DEBUG, "modify qp %u: %s -> %s (mask 0x%x)", a->qpn,
			state_name(qp->state), state_name(a->state), a->mask);
	qp->state = a->state;
	return 0;
}

static int handle(struct roxe_kserve *ks, const struct roxe_kabi_cmd *c)
{
	int err;

	switch (c->op) {
	case ROXE_KOP_CREATE_CQ:
		if (c->cq.cqn >= KS_MAX_CQ)
			return -EINVAL;
		unmap_queue(&ks->cq[c->cq.cqn]);
		err = map_queue(ks, &c->cq.q, &ks->cq[c->cq.cqn]);
		if (!err && ks->verbose)
			ks->log(LOG_DEBUG, "create cq %u: %u entries", c->cq.cqn, c->cq.q.slots - 1);
		return err;
	case ROXE_KOP_DESTROY_CQ:
		if (c->id >= KS_MAX_CQ)
			return -EINVAL;
		unmap_queue(&ks->cq[c->id]);
		if (ks->verbose)
			ks->log(LOG_DEBUG, "destroy cq %u", c->id);
		return 0;
	case ROXE_KOP_CREATE_SRQ:
		if (c->srq.srqn >= KS_MAX_SRQ)
			return -EINVAL;
		unmap_queue(&ks->srq[c->srq.srqn]);
		err = map_queue(ks, &c->srq.q, &ks->srq[c->srq.srqn]);
		if (!err && ks->verbose)
			ks->log(LOG_DEBUG, "create srq %u: %u x %u B", c->srq.srqn,
				c->srq.q.slots - 1, 1u << c->srq.q.log2_elem);
		return err;
	case ROXE_KOP_DESTROY_SRQ:
		if (c->id >= KS_MAX_SRQ)
			return -EINVAL;
		unmap_queue(&ks->srq[c->id]);
		if (ks->verbose)
			ks->log(LOG_DEBUG, "destroy srq %u", c->id);
		return 0;
	case ROXE_KOP_CREATE_QP:
		return create_qp(ks, &c->qp);
	case ROXE_KOP_MODIFY_QP:
		return modify_qp(ks, &c->modify);
	case ROXE_KOP_DESTROY_QP:
		if (c->id >= KS_MAX_QP)
			return -EINVAL;
		qp_forget(&ks->qp[c->id]);
		if (ks->verbose)
			ks->log(LOG_DEBUG, "destroy qp %u", c->id);
		return 0;
	case ROXE_KOP_REG_MR:
		if ((c->mr.key >> 8) >= KS_MAX_MR)
			return -EINVAL;
		ks->mr[c->mr.key >> 8] = (struct ks_mr){ .live = true, .info = c->mr };
		if (ks->verbose)
			ks->log(LOG_DEBUG, "reg mr 0x%x: %llu bytes at 0x%llx, access 0x%x",
				c->mr.key, (unsigned long long)c->mr.length,
				(unsigned long long)c->mr.iova, c->mr.access);
		return 0;
	case ROXE_KOP_DEREG_MR:
		if ((c->id >> 8) >= KS_MAX_MR)
			return -EINVAL;
		ks->mr[c->id >> 8].live = false;
		if (ks->verbose)
			ks->log(LOG_DEBUG, "dereg mr 0x%x", c->id);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

int roxe_kserve_run(struct roxe_kserve *ks)
{
	struct roxe_kabi_cmd c;

	for (;;) {
		ssize_t n = read(ks->fd, &c, sizeof(c));
		struct roxe_kabi_reply r;

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n != sizeof(c))
			return -EPROTO;
		r.seq = c.seq;
		r.status = handle(ks, &c);
		if (r.status)
			ks->log(LOG_WARNING, "command %u (seq %u) failed: %s", c.op, c.seq,
				strerror(-r.status));
		if (c.seq && write(ks->fd, &r, sizeof(r)) != sizeof(r))
			return -errno;
	}
}

struct roxe_kserve *roxe_kserve_new(int fd, roxe_kserve_log_fn log, int verbose)
{
	struct roxe_kserve *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->qp = calloc(KS_MAX_QP, sizeof(*ks->qp));
	ks->mr = calloc(KS_MAX_MR, sizeof(*ks->mr));
	if (!ks->qp || !ks->mr) {
		roxe_kserve_free(ks);
		return NULL;
	}
	ks->fd = fd;
	ks->log = log;
	ks->verbose = verbose;
	return ks;
}

void roxe_kserve_free(struct roxe_kserve *ks)
{
	if (!ks)
		return;
	for (unsigned i = 0; ks->qp && i < KS_MAX_QP; i++)
		qp_forget(&ks->qp[i]);
	for (unsigned i = 0; i < KS_MAX_CQ; i++)
		unmap_queue(&ks->cq[i]);
	for (unsigned i = 0; i < KS_MAX_SRQ; i++)
		unmap_queue(&ks->srq[i]);
	free(ks->qp);
	free(ks->mr);
	free(ks);
}

void roxe_kserve_counts(const struct roxe_kserve *ks, unsigned *cqs, unsigned *qps,
			unsigned *srqs, unsigned *mrs)
{
	*cqs = *qps = *srqs = *mrs = 0;
	for (unsigned i = 0; i < KS_MAX_CQ; i++)
		*cqs += !!ks->cq[i].buf;
	for (unsigned i = 0; i < KS_MAX_SRQ; i++)
		*srqs += !!ks->srq[i].buf;
	for (unsigned i = 0; i < KS_MAX_QP; i++)
		*qps += ks->qp[i].live;
	for (unsigned i = 0; i < KS_MAX_MR; i++)
		*mrs += ks->mr[i].live;
}
