// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared receive queues: a queue of struct rxe_recv_wqe the application
 * produces into (the rxe provider posts without a system call), or, for
 * a kernel ULP's SRQ, the module (kverbs.c: post_srq_recv, a bounce
 * region).
 */
#include "roxe.h"

static size_t recv_wqe_size(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

int roxe_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibsrq->device);
	struct roxe_srq *srq = to_rsrq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct roxe_kabi_cmd cmd = {};
	bool kernel = !udata;
	u32 entries;
	int err, id;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!init->attr.max_wr || init->attr.max_wr > ROXE_MAX_WR ||
	    init->attr.max_sge > ROXE_MAX_SGE ||
	    init->attr.srq_limit > init->attr.max_wr)
		return -EINVAL;
	if (kernel && !READ_ONCE(rdev->nengines))
		return -EOPNOTSUPP;	/* as kernel CQs (cq.c) */
	if (!kernel && udata->outlen < sizeof(resp))
		return -EINVAL;

	id = ida_alloc_max(&rdev->srqn_ida, ROXE_MAX_SRQ - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	srq->srqn = id;
	srq->max_sge = max_t(u32, init->attr.max_sge, 1);
	srq->limit = init->attr.srq_limit;
	entries = init->attr.max_wr;
	err = roxe_kqueue_alloc(rdev, &srq->q, &entries,
				recv_wqe_size(srq->max_sge));
	if (err)
		goto free_id;
	err = kernel ? roxe_ksrq_create(rdev, srq) :
		       roxe_kqueue_export(&srq->q, udata, &resp.mi);
	if (err)
		goto free_q;
	cmd.op = ROXE_KOP_CREATE_SRQ;
	cmd.srq.srqn = srq->srqn;
	cmd.srq.pdn = roxe_pdn(ibsrq->pd);
	cmd.srq.max_sge = srq->max_sge;
	cmd.srq.limit = srq->limit;
	cmd.srq.tenant = roxe_chan_tenant();
	roxe_kqueue_describe(&srq->q, &cmd.srq.q);
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DESTROY_SRQ, srq->srqn);
	if (err)
		goto free_k;
	resp.srq_num = srq->srqn;
	if (!kernel) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto undo;
	}
	init->attr.max_wr = entries;
	init->attr.max_sge = srq->max_sge;
	/* last: roxed's events find only SRQs the core knows complete */
	err = xa_insert(&rdev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (err)
		goto undo;
	return 0;

undo:
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_SRQ, srq->srqn);
free_k:
	roxe_ksrq_destroy(rdev, srq);
free_q:
	roxe_kqueue_free(rdev, &srq->q);
free_id:
	ida_free(&rdev->srqn_ida, srq->srqn);
	return err;
}

int roxe_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct roxe_srq *srq = to_rsrq(ibsrq);
	struct roxe_kabi_cmd cmd = { .op = ROXE_KOP_MODIFY_SRQ };
	int err;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;	/* resizing: not yet */
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->q.slots - 1)
			return -EINVAL;
		/* roxed's engine watches the level and raises the event */
		cmd.srq.srqn = srq->srqn;
		cmd.srq.limit = attr->srq_limit;
		err = roxe_chan_call(&to_rdev(ibsrq->device)->chan, &cmd);
		if (err)
			return err;
		WRITE_ONCE(srq->limit, attr->srq_limit);
	}
	return 0;
}

int roxe_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct roxe_srq *srq = to_rsrq(ibsrq);

	attr->max_wr = srq->q.slots - 1;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int roxe_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibsrq->device);
	struct roxe_srq *srq = to_rsrq(ibsrq);

	xa_erase(&rdev->srqs, srq->srqn);	/* waits out an event in progress */
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_SRQ, srq->srqn);
	roxe_ksrq_destroy(rdev, srq);
	roxe_kqueue_free(rdev, &srq->q);
	ida_free(&rdev->srqn_ida, srq->srqn);
	return 0;
}
