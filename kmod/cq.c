// SPDX-License-Identifier: GPL-2.0-only
/*
 * Completion queues: a queue of struct ib_uverbs_wc that roxed produces
 * into and the application (through the rxe provider) consumes from; a
 * kernel ULP's CQ the module consumes (roxe_poll_cq, kverbs.c).
 * Arming lives in the shared area (datapath.c), where roxed reads it after
 * each CQE; roxed raises the event with ROXE_IOC_CQ_EVENT.
 */
#include <rdma/ib_user_verbs.h>
#include "roxe.h"

int roxe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   ROXE_CREATE_CQ_UDATA)
{
	struct ib_udata *udata = roxe_create_cq_udata(attrs);
	struct roxe_dev *rdev = to_rdev(ibcq->device);
	struct roxe_cq *cq = to_rcq(ibcq);
	struct rxe_create_cq_resp resp = {};
	struct roxe_kabi_cmd cmd = {};
	u32 entries;
	int err, id;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > ROXE_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	/* Kernel clients (ib_mad) attach while the device registers, inside
	 * roxed's ATTACH, before roxed can answer: fail now, not after
	 * ROXE_KABI_TIMEOUT_MS, which would hold up uverbs' device too.
	 */
	if (!udata && !READ_ONCE(rdev->nengines))
		return -EOPNOTSUPP;
	cq->kernel = !udata;
	spin_lock_init(&cq->poll_lock);
	spin_lock_init(&cq->flush_lock);
	mutex_init(&cq->resize_lock);
	cq->cons = 0;

	id = ida_alloc_max(&rdev->cqn_ida, ROXE_MAX_CQ - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	cq->cqn = id;
	roxe_cq_reset_arm(rdev, cq->cqn);
	entries = attr->cqe;
	err = roxe_kqueue_alloc(rdev, &cq->q, &entries, sizeof(struct ib_uverbs_wc));
	if (err)
		goto free_id;
	if (udata) {
		err = roxe_kqueue_export(&cq->q, udata, &resp.mi);
		if (err)
			goto free_q;
	}
	cmd.op = ROXE_KOP_CREATE_CQ;
	cmd.cq.cqn = cq->cqn;
	cmd.cq.tenant = roxe_chan_tenant();
	roxe_kqueue_describe(&cq->q, &cmd.cq.q);
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DESTROY_CQ, cq->cqn);
	if (err)
		goto free_q;
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto undo;
	}
	ibcq->cqe = entries;
	/* last: roxed's events find only CQs the core knows complete */
	err = xa_insert(&rdev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (err)
		goto undo;
	return 0;

undo:
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_CQ, cq->cqn);
free_q:
	roxe_kqueue_free(rdev, &cq->q);
free_id:
	ida_free(&rdev->cqn_ida, cq->cqn);
	return err;
}

int roxe_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibcq->device);
	struct roxe_cq *cq = to_rcq(ibcq);

	/* waits for a CQ_EVENT or a flush that holds it; none comes after */
	xa_erase(&rdev->cqs, cq->cqn);
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_CQ, cq->cqn);
	roxe_cq_reset_arm(rdev, cq->cqn);
	roxe_kqueue_free(rdev, &cq->q);
	ida_free(&rdev->cqn_ida, cq->cqn);
	return 0;
}

/*
 * ibv_resize_cq on a user CQ, as rxe: the new size holds at least the
 * CQEs outstanding (else -EINVAL), which keep their order, and the
 * provider maps the new ring from rxe_resize_cq_resp. roxed moves its
 * engines to the new ring and lets go of the old one (ROXE_KOP_RESIZE_CQ)
 * before we swap ours under flush_lock (the death flush produces there)
 * and free the old one. The application holds its CQ lock meanwhile, so
 * its consumer index stays put. Under the CQ's resize_lock.
 */
static int resize(struct roxe_dev *rdev, struct roxe_cq *cq, int cqe, struct ib_udata *udata)
{
	struct rxe_resize_cq_resp resp = {};
	struct roxe_kabi_cmd cmd = {};
	struct roxe_kqueue nq = {}, old;
	unsigned long flags;
	u32 entries, prod, cons, mask;
	int err;

	/* early answer; roxed checks again where no CQE can come in between */
	mask = cq->q.slots - 1;
	prod = smp_load_acquire(&cq->q.buf->producer_index) & mask;
	cons = smp_load_acquire(&cq->q.buf->consumer_index) & mask;
	if ((u32)cqe < ((prod - cons) & mask))
		return -EINVAL;
	entries = cqe;
	err = roxe_kqueue_alloc(rdev, &nq, &entries, sizeof(struct ib_uverbs_wc));
	if (err)
		return err;
	err = roxe_kqueue_export(&nq, udata, &resp.mi);
	if (!err)
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto free_new;
	cmd.op = ROXE_KOP_RESIZE_CQ;
	cmd.cq.cqn = cq->cqn;
	roxe_kqueue_describe(&nq, &cmd.cq.q);
	err = roxe_chan_call(&rdev->chan, &cmd);
	if (err)
		goto free_new;
	spin_lock_irqsave(&cq->flush_lock, flags);
	old = cq->q;
	cq->q = nq;
	spin_unlock_irqrestore(&cq->flush_lock, flags);
	cq->ibcq.cqe = entries;
	roxe_kqueue_free(rdev, &old);
	return 0;

free_new:
	/* a mapping roxed or the application made keeps its pages */
	roxe_kqueue_free(rdev, &nq);
	return err;
}

/* Kernel CQs: not supported. uverbs holds only a read lock on the CQ, so
 * two threads may resize one CQ at once: without resize_lock one read
 * cq->q.buf while the other freed it, and the rings were swapped twice. */
int roxe_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct roxe_cq *cq = to_rcq(ibcq);
	int err;

	if (cq->kernel || !udata)
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > ROXE_MAX_CQE || udata->outlen < sizeof(struct rxe_resize_cq_resp))
		return -EINVAL;
	mutex_lock(&cq->resize_lock);
	err = resize(to_rdev(ibcq->device), cq, cqe, udata);
	mutex_unlock(&cq->resize_lock);
	return err;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/* compat.h: 7.3's resize_user_cq, cqe unsigned */
int roxe_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe, struct ib_udata *udata)
{
	if (cqe > ROXE_MAX_CQE)
		return -EINVAL;
	return roxe_resize_cq(ibcq, cqe, udata);
}
#endif

/* Armed until the next completion event, which roxed raises (CQ_EVENT). */
int roxe_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct roxe_cq *cq = to_rcq(ibcq);

	if (flags & IB_CQ_NEXT_COMP)
		roxe_cq_arm(to_rdev(ibcq->device), cq->cqn, IB_CQ_NEXT_COMP);
	else if (flags & IB_CQ_SOLICITED)
		roxe_cq_arm(to_rdev(ibcq->device), cq->cqn, IB_CQ_SOLICITED);
	/* user CQs: uverbs ignores IB_CQ_REPORT_MISSED_EVENTS' answer */
	if (cq->kernel && (flags & IB_CQ_REPORT_MISSED_EVENTS))
		return !roxe_kcq_empty(cq);
	return 0;
}
