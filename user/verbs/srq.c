// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Shared receive queues: an rxe uAPI ring of receive WQEs that several QPs
 * (possibly on several engines) take from, under the SRQ's lock. When the
 * number of WQEs left drops below the armed limit, IBV_EVENT_SRQ_LIMIT_REACHED
 * is raised once and the limit disarms (IBA 10.2.9.4).
 */
#include <errno.h>
#include <stdlib.h>
#include "transport/transport.h"
#include "verbs/served.h"
#include "verbs/internal.h"

int roxe_create_srq(struct roxe_pd *pd, struct ibv_srq_init_attr *ia, struct roxe_srq **out)
{
	struct roxe_srq *srq;
	struct roxe_queue_geom g;
	uint32_t max_sge;

	if (!pd || !ia || !out || ia->attr.max_wr < 1 || ia->attr.max_wr > ROXE_MAX_WR ||
	    ia->attr.max_sge > ROXE_MAX_SGE || ia->attr.srq_limit > ia->attr.max_wr)
		return -EINVAL;
	max_sge = ia->attr.max_sge ? ia->attr.max_sge : 1;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->buf = roxe_queue_buf_alloc(ia->attr.max_wr,
					sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge),
					&g);
	if (!srq->buf) {
		free(srq);
		return -ENOMEM;
	}
	srq->dev = pd->dev;
	srq->pd = pd;
	srq->max_wr = g.mask;
	srq->max_sge = max_sge;
	atomic_store(&srq->limit, ia->attr.srq_limit);
	roxe_queue_init_producer(&srq->prod, srq->buf, g);
	roxe_queue_init_consumer(&srq->cons, srq->buf, g);
	pthread_spin_init(&srq->post_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	atomic_fetch_add(&pd->users, 1);
	ia->attr.max_wr = g.mask;
	ia->attr.max_sge = max_sge;
	*out = srq;
	return 0;
}

int roxe_served_srq_create(struct roxe_pd *pd, uint32_t id, struct rxe_queue_buf *buf,
			   struct roxe_queue_geom g, uint32_t max_sge, uint32_t limit,
			   uint64_t tenant, struct roxe_srq **out)
{
	struct roxe_srq *srq;

	if (!pd || !buf || !out || max_sge > ROXE_MAX_SGE ||
	    !roxe_queue_geom_ok(g, sizeof(struct rxe_recv_wqe)))
		return -EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->dev = pd->dev;
	srq->pd = pd;
	srq->buf = buf;
	srq->served = true;
	srq->id = id;
	srq->tenant = tenant;
	srq->max_wr = g.mask;
	srq->max_sge = max_sge;
	atomic_store(&srq->limit, limit);
	roxe_queue_init_consumer(&srq->cons, buf, g);
	pthread_spin_init(&srq->post_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	atomic_fetch_add(&pd->users, 1);
	*out = srq;
	return 0;
}

int roxe_modify_srq(struct roxe_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	if (!srq || !attr || (mask & ~(IBV_SRQ_LIMIT | IBV_SRQ_MAX_WR)))
		return -EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return -EOPNOTSUPP;	/* resizing would move the ring under the engines */
	if ((mask & IBV_SRQ_LIMIT) && attr->srq_limit > srq->max_wr)
		return -EINVAL;
	if (mask & IBV_SRQ_LIMIT)
		atomic_store(&srq->limit, attr->srq_limit);
	return 0;
}

int roxe_query_srq(struct roxe_srq *srq, struct ibv_srq_attr *attr)
{
	if (!srq || !attr)
		return -EINVAL;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = atomic_load(&srq->limit);
	return 0;
}

int roxe_destroy_srq(struct roxe_srq *srq)
{
	if (!srq)
		return -EINVAL;
	if (atomic_load(&srq->users))
		return -EBUSY;
	atomic_fetch_sub(&srq->pd->users, 1);
	roxe_async_purge(srq->dev, srq);	/* no QP uses it: none raises more */
	pthread_spin_destroy(&srq->post_lock);
	pthread_spin_destroy(&srq->lock);
	if (!srq->served)
		free(srq->buf);
	free(srq);
	return 0;
}

int roxe_post_srq_recv(struct roxe_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	int err = 0;

	if (!srq || !wr)
		return -EINVAL;
	pthread_spin_lock(&srq->post_lock);
	for (; wr; wr = wr->next) {
		if (roxe_queue_full(&srq->prod)) {
			err = -ENOMEM;
			break;
		}
		err = roxe_fill_recv_wqe(roxe_queue_producer_slot(&srq->prod), wr, srq->max_sge);
		if (err)
			break;
		roxe_queue_produce(&srq->prod);
	}
	pthread_spin_unlock(&srq->post_lock);
	if (err && bad_wr)
		*bad_wr = wr;
	return err;
}
