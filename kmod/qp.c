// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue pairs: a send queue of struct rxe_send_wqe and, without an SRQ, a
 * receive queue of struct rxe_recv_wqe, both produced by the application
 * (the rxe provider posts without a system call and rings the doorbell with
 * a zero-WR post_send, which puts the QPN on an engine's doorbell ring);
 * the state machine and the attributes. roxed may move a QP to ERR on its
 * own (ROXE_IOC_EVENT), and so does roxed's death (flush.c).
 */
#include <rdma/ib_cache.h>
#include "roxe.h"

static size_t send_wqe_size(u32 max_sge, u32 max_inline)
{
	return sizeof(struct rxe_send_wqe) +
	       max_t(size_t, max_sge * sizeof(struct rxe_sge), max_inline);
}

static size_t recv_wqe_size(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

static int check_cap(const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *c = &init->cap;

	if (c->max_send_wr > ROXE_MAX_WR || c->max_send_sge > ROXE_MAX_SGE ||
	    c->max_inline_data > ROXE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (c->max_recv_wr > ROXE_MAX_WR ||
			   c->max_recv_sge > ROXE_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* What roxed needs to serve a new QP: its queues and its neighbours. */
static void tell_create(struct roxe_qp *qp, const struct ib_qp_init_attr *init,
			struct roxe_kabi_cmd *cmd)
{
	struct roxe_kabi_qp *k = &cmd->qp;

	cmd->op = ROXE_KOP_CREATE_QP;
	k->qpn = qp->ibqp.qp_num;
	k->type = roxe_wire_type(&qp->ibqp);
	k->pdn = roxe_pdn(qp->ibqp.pd);
	k->send_cqn = to_rcq(init->send_cq)->cqn;
	k->recv_cqn = to_rcq(init->recv_cq)->cqn;
	k->srqn = init->srq ? to_rsrq(init->srq)->srqn : ~0U;
	/* a kernel QP's WQEs name bounce runs and fast-reg MRs' SGEs, at
	 * most one per SGE of the ULP's list
	 */
	k->max_send_sge = init->cap.max_send_sge;
	k->max_recv_sge = init->cap.max_recv_sge;
	k->max_inline = init->cap.max_inline_data;
	k->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	/* only then may its UD WQEs carry an address vector (kverbs.c) */
	k->flags = qp->k ? ROXE_KABI_QP_KERNEL : 0;
	k->tenant = roxe_chan_tenant();
	roxe_kqueue_describe(&qp->sq, &k->sq);
	if (qp->rq.m)
		roxe_kqueue_describe(&qp->rq, &k->rq);
}

/* A QPN for a new QP, the one after the last handed out (as rxe's
 * xa_alloc_cyclic): a destroyed QP's number comes back only once the others
 * have been used, so a peer's ib_cm that still holds the old connection
 * does not refuse the new one as stale (REJ "stale conn": qperf's tests,
 * each a connection of its own) and a late packet of the old QP finds no QP.
 * Racing creators may take numbers out of order: harmless.
 */
static int alloc_qpn(struct roxe_dev *rdev)
{
	u32 next = READ_ONCE(rdev->next_qpn);
	int qpn;

	if (next < ROXE_MIN_QPN || next >= ROXE_MAX_QPS)
		next = ROXE_MIN_QPN;
	qpn = ida_alloc_range(&rdev->qpn_ida, next, ROXE_MAX_QPS - 1, GFP_KERNEL);
	if (qpn == -ENOSPC && next > ROXE_MIN_QPN)
		qpn = ida_alloc_range(&rdev->qpn_ida, ROXE_MIN_QPN, next - 1, GFP_KERNEL);
	if (qpn >= 0)
		WRITE_ONCE(rdev->next_qpn, qpn + 1);
	return qpn;
}

int roxe_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibqp->device);
	struct roxe_qp *qp = to_rqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	struct roxe_kabi_cmd cmd = {};
	struct ib_qp_cap *cap = &init->cap;
	bool kernel = !udata;	/* a kernel ULP's: kverbs.c */
	u32 entries, room;
	int err, qpn;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:	/* ib_mad's QP1: a kernel QP */
		if (!kernel || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;	/* SMI (no QP0 on RoCE), XRC, raw */
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* a kernel QP's SRQ is a kernel SRQ, and the other way round */
	if (init->srq && !to_rsrq(init->srq)->k != !kernel)
		return -EINVAL;
	err = check_cap(init);
	if (err)
		return err;
	if (kernel && !READ_ONCE(rdev->nengines))
		return -EOPNOTSUPP;	/* as kernel CQs (cq.c) */
	if (!kernel && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (init->qp_type == IB_QPT_GSI)
		qpn = ida_alloc_range(&rdev->qpn_ida, ROXE_GSI_QPN, ROXE_GSI_QPN,
				      GFP_KERNEL);
	else
		qpn = alloc_qpn(rdev);
	if (qpn < 0)
		return qpn == -ENOSPC && init->qp_type == IB_QPT_GSI ? -EBUSY : qpn;
	ibqp->qp_num = qpn;
	mutex_init(&qp->lock);
	spin_lock_init(&qp->state_lock);

	cap->max_send_sge = max_t(u32, cap->max_send_sge, 1);
	entries = max_t(u32, cap->max_send_wr, 1);
	err = roxe_kqueue_alloc(rdev, &qp->sq, &entries,
				send_wqe_size(cap->max_send_sge,
					      cap->max_inline_data));
	if (err)
		goto free_qpn;
	cap->max_send_wr = entries;
	room = (1U << qp->sq.log2_elem) - sizeof(struct rxe_send_wqe);
	cap->max_inline_data = min_t(u32, room, ROXE_MAX_INLINE);
	if (!kernel) {
		err = roxe_kqueue_export(&qp->sq, udata, &resp.sq_mi);
		if (err)
			goto free_sq;
		/* grant what the slot holds: the provider checks posts */
		cap->max_send_sge = min_t(u32, room / sizeof(struct rxe_sge),
					  ROXE_MAX_SGE);
	}

	if (!init->srq) {
		cap->max_recv_sge = max_t(u32, cap->max_recv_sge, 1);
		entries = max_t(u32, cap->max_recv_wr, 1);
		err = roxe_kqueue_alloc(rdev, &qp->rq, &entries,
					recv_wqe_size(cap->max_recv_sge));
		if (err)
			goto free_sq;
		cap->max_recv_wr = entries;
		if (!kernel) {
			err = roxe_kqueue_export(&qp->rq, udata, &resp.rq_mi);
			if (err)
				goto free_rq;
			room = (1U << qp->rq.log2_elem) -
			       sizeof(struct rxe_recv_wqe);
			cap->max_recv_sge = min_t(u32, room / sizeof(struct rxe_sge),
						  ROXE_MAX_SGE);
		}
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}

	if (kernel) {
		err = roxe_kqp_create(rdev, qp, init);
		if (err)
			goto free_rq;
	}
	tell_create(qp, init, &cmd);
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DESTROY_QP, qpn);
	if (err)
		goto free_k;
	if (!kernel) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto undo;
	}
	qp->cap = *cap;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = IB_MTU_1024;
	qp->attr.port_num = 1;
	/* last: doorbells and roxed's events find only complete QPs */
	err = xa_insert_irq(&rdev->qps, qpn, qp, GFP_KERNEL);
	if (err)
		goto undo;
	return 0;

undo:
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_QP, qpn);
free_k:
	roxe_kqp_destroy(rdev, qp);
free_rq:
	roxe_kqueue_free(rdev, &qp->rq);
free_sq:
	roxe_kqueue_free(rdev, &qp->sq);
free_qpn:
	ida_free(&rdev->qpn_ida, qpn);
	return err;
}

/* The RoCE addressing of an RTR: a GRH is mandatory, the core has already
 * resolved the destination MAC and the source GID entry.
 */
static int check_av(const struct rdma_ah_attr *ah)
{
	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) || !ah->grh.sgid_attr)
		return -EINVAL;
	return 0;
}

static void take_av(struct roxe_qp *qp, const struct rdma_ah_attr *ah)
{
	qp->attr.ah_attr = *ah;
	qp->attr.ah_attr.grh.sgid_attr = NULL;	/* the core holds that one */
	qp->sgid = ah->grh.sgid_attr->gid;
	qp->sgid_type = ah->grh.sgid_attr->gid_type;
}

/* The modify as roxed sees it: the new state and every attribute given. */
static void tell_modify(struct roxe_qp *qp, const struct ib_qp_attr *a,
			int mask, enum ib_qp_state next, struct roxe_kabi_cmd *cmd)
{
	struct roxe_kabi_qp_attr *k = &cmd->modify;

	cmd->op = ROXE_KOP_MODIFY_QP;
	k->qpn = qp->ibqp.qp_num;
	k->mask = mask;
	k->state = next;
	k->access = a->qp_access_flags;
	k->qkey = a->qkey;
	k->path_mtu = a->path_mtu;
	k->dest_qpn = a->dest_qp_num & 0xffffff;
	k->rq_psn = a->rq_psn & 0xffffff;
	k->sq_psn = a->sq_psn & 0xffffff;
	k->timeout = a->timeout;
	k->retry_cnt = a->retry_cnt;
	k->rnr_retry = a->rnr_retry;
	k->min_rnr_timer = a->min_rnr_timer;
	k->max_rd_atomic = min_t(u8, a->max_rd_atomic, ROXE_MAX_RD_ATOMIC);
	k->max_dest_rd_atomic = a->max_dest_rd_atomic;
	k->en_sqd_async_notify = !!a->en_sqd_async_notify;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *g = rdma_ah_read_grh(&a->ah_attr);

		k->hop_limit = g->hop_limit;
		k->traffic_class = g->traffic_class;
		k->flow_label = g->flow_label;
		k->sgid_type = g->sgid_attr->gid_type;
		memcpy(k->dgid, g->dgid.raw, 16);
		memcpy(k->sgid, g->sgid_attr->gid.raw, 16);
		memcpy(k->dmac, a->ah_attr.roce.dmac, ETH_ALEN);
	}
}

int roxe_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct roxe_qp *qp = to_rqp(ibqp);
	struct roxe_kabi_cmd cmd = {};
	enum ib_qp_state cur, next;
	int err = -EINVAL;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	mutex_lock(&qp->lock);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->attr.qp_state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		goto out;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		goto out;
	/* An initiator depth above ours is lowered to it, not refused:
	 * perftest passes the peer's responder depth (rxe: 128), and fewer
	 * READs/atomics in flight is always safe.
	 */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > ROXE_MAX_RD_ATOMIC)
		goto out;
	if (mask & IB_QP_AV) {
		err = check_av(&attr->ah_attr);
		if (err)
			goto out;
	}
	/* roxed first: its refusal leaves the QP as it was */
	tell_modify(qp, attr, mask, next, &cmd);
	/* QP1's INIT names no port (it is the port's own); to roxed it is a
	 * UD QP like any other, and those do
	 */
	if (ibqp->qp_type == IB_QPT_GSI && cur == IB_QPS_RESET &&
	    next == IB_QPS_INIT)
		cmd.modify.mask |= IB_QP_PORT;
	err = roxe_chan_call(&to_rdev(ibqp->device)->chan, &cmd);
	/* roxed is gone and the death flush moved every QP to ERR: a move
	 * to ERR (ib_drain_qp's first step) is done already
	 */
	if (err == -ENODEV && next == IB_QPS_ERR &&
	    READ_ONCE(to_rdev(ibqp->device)->detached))
		err = 0;
	if (err)
		goto out;

	if (mask & IB_QP_AV)
		take_av(qp, &attr->ah_attr);
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		qp->attr.pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->attr.qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->attr.path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->attr.timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->attr.retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->attr.rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		qp->attr.rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = min_t(u8, attr->max_rd_atomic,
					       ROXE_MAX_RD_ATOMIC);
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		qp->attr.sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->attr.dest_qp_num = attr->dest_qp_num & 0xffffff;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = attr->en_sqd_async_notify;
	spin_lock_irq(&qp->state_lock);
	/* an error roxed raised while it considered this modify stands:
	 * from ERR only RESET leads away
	 */
	if (qp->attr.qp_state != IB_QPS_ERR || next == IB_QPS_RESET)
		WRITE_ONCE(qp->attr.qp_state, next);
	spin_unlock_irq(&qp->state_lock);
	qp->attr_mask |= mask;
	err = 0;
out:
	mutex_unlock(&qp->lock);
	return err;
}

int roxe_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct roxe_qp *qp = to_rqp(ibqp);

	mutex_lock(&qp->lock);
	*attr = qp->attr;
	mutex_unlock(&qp->lock);
	attr->qp_state = READ_ONCE(qp->attr.qp_state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->cap = qp->cap;
	attr->port_num = 1;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

int roxe_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibqp->device);
	struct roxe_qp *qp = to_rqp(ibqp);

	/* waits out an event or a flush in progress; none comes after */
	xa_erase_irq(&rdev->qps, ibqp->qp_num);
	roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_QP, ibqp->qp_num);
	roxe_kqp_destroy(rdev, qp);
	roxe_kqueue_free(rdev, &qp->rq);
	roxe_kqueue_free(rdev, &qp->sq);
	ida_free(&rdev->qpn_ida, ibqp->qp_num);
	mutex_destroy(&qp->lock);
	return 0;
}

/* UD multicast: roxed keeps the groups and delivers to them (it checks the
 * QP and the GID: uverbs passes both unchecked); it also joins the netdev
 * to the group's Ethernet address, as rxe's dev_mc_add.
 */
static int roxe_mcast_cmd(struct ib_qp *ibqp, const union ib_gid *mgid, u32 op)
{
	struct roxe_dev *rdev = to_rdev(ibqp->device);
	struct roxe_kabi_cmd cmd = { .op = op };

	cmd.mcast.qpn = ibqp->qp_num;
	memcpy(cmd.mcast.mgid, mgid->raw, sizeof(cmd.mcast.mgid));
	return roxe_chan_call(&rdev->chan, &cmd);
}

int roxe_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	return roxe_mcast_cmd(ibqp, mgid, ROXE_KOP_ATTACH_MCAST);
}

int roxe_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	return roxe_mcast_cmd(ibqp, mgid, ROXE_KOP_DETACH_MCAST);
}

/* The provider's doorbell: a zero-WR post_send after it wrote WQEs into
 * the mapped send queue; a kernel ULP's WRs (kverbs.c). Until roxed
 * serves (ROXE_IOC_SERVE), say so rather than accept work nothing would
 * ever send. Never sleeps.
 */
int roxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct roxe_dev *rdev = to_rdev(ibqp->device);
	int err;

	if (!READ_ONCE(rdev->nengines)) {
		err = -EOPNOTSUPP;
	} else if (!!wr != !!to_rqp(ibqp)->k) {
		/* user QPs post through their queue, kernel QPs WRs */
		err = -EINVAL;
	} else if (READ_ONCE(to_rqp(ibqp)->attr.qp_state) < IB_QPS_RTS) {
		err = -EINVAL;		/* as rxe: no sends before RTS */
	} else if (wr) {
		/* even with roxed gone: they complete as flushed */
		return roxe_kpost_send(to_rqp(ibqp), wr, bad_wr);
	} else if (READ_ONCE(rdev->detached)) {
		err = -EIO;		/* roxed is gone; the flush ran */
	} else {
		return roxe_doorbell(rdev, ibqp->qp_num);
	}
	if (bad_wr)
		*bad_wr = wr;
	return err;
}
