// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxed is gone (its /dev/roxe file closed) and left work behind: before
 * the device is unregistered the module stands in for it once. Every QP
 * goes to ERR; every WQE still on a send queue, or on a receive queue of
 * the QP's own, completes with IB_WC_WR_FLUSH_ERR into its CQ; armed CQs
 * that got completions raise their event; every QP gets
 * IB_EVENT_QP_FATAL. An application blocked in ibv_get_cq_event wakes,
 * and finds its flush completions in its mapped CQ, which stays readable
 * after disassociation.
 *
 * A kernel ULP may go on posting to its QPs until it destroys them (its
 * remove callback runs inside the unregistration, and ib_drain_qp posts
 * WRs whose completions it waits for): those WRs complete as flushed too.
 *
 * The file is closed for good, so roxed maps nothing any more: the module
 * is the only producer of every CQ (under its flush_lock) and the only
 * consumer of every work queue. The application still runs, so its indices are read with acquire
 * loads, and every index read from shared memory is masked with our own
 * copy of the queue's size.
 */
#include <linux/delay.h>
#include <rdma/ib_user_verbs.h>
#include "roxe.h"

/* How long the dying device lets woken event readers run (see the end). */
#define ROXE_FLUSH_GRACE_MS	20

static void *slot(const struct roxe_kqueue *q, u32 index)
{
	return q->buf->data + ((size_t)index << q->log2_elem);
}

/* A flushed send WQE's completion opcode, from its (user) WR opcode. */
static u32 flush_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;	/* SEND, SEND_WITH_IMM, SEND_WITH_INV */
	}
}

/* Complete every WQE of wq between its consumer and producer index with a
 * flush error into cq, advancing both queues; stop where the CQ is full
 * (those WQEs stay on the queue and are counted in cq->lost). Under
 * cq->flush_lock: it serialises the producers of cq and of wq, whose only
 * CQ it is.
 */
static void flush_wq(struct roxe_kqueue *wq, struct roxe_cq *cq, u32 qpn,
		     bool send)
{
	struct rxe_queue_buf *wb = wq->buf, *cb = cq->q.buf;
	u32 wmask = wq->slots - 1, cmask = cq->q.slots - 1;
	u32 cons = READ_ONCE(wb->consumer_index) & wmask;	/* roxed's */
	u32 prod = smp_load_acquire(&wb->producer_index) & wmask;
	u32 cprod = READ_ONCE(cb->producer_index) & cmask;	/* roxed's */
	struct ib_uverbs_wc *wc;
	u32 n = 0;

	while (cons != prod) {
		/* the application frees CQ slots with a release store */
		if (((cprod + 1) & cmask) ==
		    (smp_load_acquire(&cb->consumer_index) & cmask)) {
			cq->lost += (prod - cons) & wmask;
			break;
		}
		wc = slot(&cq->q, cprod);
		memset(wc, 0, sizeof(*wc));
		if (send) {
			struct rxe_send_wqe *wqe = slot(wq, cons);

			wc->wr_id = READ_ONCE(wqe->wr.wr_id);
			wc->opcode = flush_opcode(READ_ONCE(wqe->wr.opcode));
		} else {
			struct rxe_recv_wqe *wqe = slot(wq, cons);

			wc->wr_id = READ_ONCE(wqe->wr_id);
			wc->opcode = IB_WC_RECV;
		}
		wc->status = IB_WC_WR_FLUSH_ERR;
		wc->qp_num = qpn;
		cprod = (cprod + 1) & cmask;
		cons = (cons + 1) & wmask;
		n++;
	}
	if (!n)
		return;
	/* the CQEs before the index that shows them; the WQEs read before
	 * the index that frees their slots
	 */
	smp_store_release(&cb->producer_index, cprod);
	smp_store_release(&wb->consumer_index, cons);
	cq->flushed = true;
}

/* Under the QP xarray's lock: the QP and its CQs stay (a CQ cannot be
 * destroyed before the QPs that use it, and their destroy waits for us).
 */
static void flush_locked(struct roxe_qp *qp, bool send)
{
	struct roxe_cq *cq = to_rcq(send ? qp->ibqp.send_cq : qp->ibqp.recv_cq);
	unsigned long flags;

	spin_lock_irqsave(&cq->flush_lock, flags);
	flush_wq(send ? &qp->sq : &qp->rq, cq, qp->ibqp.qp_num, send);
	spin_unlock_irqrestore(&cq->flush_lock, flags);
}

static void flush_qp(struct roxe_dev *rdev, void *obj)
{
	struct roxe_qp *qp = obj;

	roxe_qp_set_error(qp);
	flush_locked(qp, true);
	if (qp->rq.m)
		flush_locked(qp, false);
}

/* A kernel ULP posted to qp after roxed died (kverbs.c saw detached once
 * its WQEs were published): complete them now, their events from a work
 * item, as a device's interrupt would, not from inside the ULP's post.
 */
void roxe_flush_posted(struct roxe_dev *rdev, struct roxe_qp *qp, bool send)
{
	flush_locked(qp, send);
	queue_work(ROXE_WQ_PERCPU, &rdev->fire_work);
}

/* The CQ's event after its flush: completion if armed, CQ_ERR (IB's word
 * for an overrun) if completions did not fit. Each flush's once.
 */
static void flush_cq_events(struct roxe_dev *rdev, void *obj)
{
	struct roxe_cq *cq = obj;
	struct ib_event ev = {
		.device = &rdev->ib,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};
	unsigned long flags;
	bool flushed;
	u32 lost;

	spin_lock_irqsave(&cq->flush_lock, flags);
	flushed = cq->flushed;
	lost = cq->lost;
	cq->flushed = false;
	cq->lost = 0;
	spin_unlock_irqrestore(&cq->flush_lock, flags);
	if (flushed && roxe_cq_fire(rdev, cq))
		rdev->flush_events++;
	if (lost) {
		pr_warn("%s: cq %u full: %u flush completions not written\n",
			dev_name(&rdev->ib.dev), cq->cqn, lost);
		if (cq->ibcq.event_handler)
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
}

static void qp_fatal(struct roxe_dev *rdev, void *obj)
{
	struct roxe_qp *qp = obj;
	struct ib_event ev = {
		.device = &rdev->ib,
		.event = IB_EVENT_QP_FATAL,
		.element.qp = &qp->ibqp,
	};

	if (qp->ibqp.event_handler) {
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
		rdev->flush_events++;
	}
}

/* fn on every object of xa, under the xarray's lock one object at a time:
 * a long flush holds off neither destroys nor the CPU for all of it.
 */
static void each_locked(struct roxe_dev *rdev, struct xarray *xa,
			void (*fn)(struct roxe_dev *rdev, void *obj))
{
	unsigned long i = 0;
	void *obj;

	for (;;) {
		xa_lock_irq(xa);	/* the QPs': kernel ULPs poll in any context */
		obj = xa_find(xa, &i, ULONG_MAX, XA_PRESENT);
		if (obj)
			fn(rdev, obj);
		xa_unlock_irq(xa);
		if (!obj || i == ULONG_MAX)
			return;
		i++;
		cond_resched();
	}
}

/* rdev->fire_work: the events of roxe_flush_posted()'s completions. */
void roxe_flush_fire(struct work_struct *work)
{
	struct roxe_dev *rdev = container_of(work, struct roxe_dev, fire_work);

	each_locked(rdev, &rdev->cqs, flush_cq_events);
}

/* roxed's file is closing; the command channel is dead already (nothing
 * waits on it). Before unregistration: the application's events and
 * completions go out while its objects still exist.
 */
void roxe_flush_all(struct roxe_dev *rdev)
{
	rdev->flush_events = 0;
	each_locked(rdev, &rdev->qps, flush_qp);
	each_locked(rdev, &rdev->cqs, flush_cq_events);
	each_locked(rdev, &rdev->qps, qp_fatal);
	/* Unregistration destroys the application's CQs and QPs, and uverbs
	 * drops the events still queued for them: give a thread we just
	 * woke in ibv_get_cq_event or ibv_get_async_event the chance to
	 * read its event first. Best effort: one that comes later gets EIO
	 * (its flush completions are in its mapped CQ all the same).
	 */
	if (rdev->flush_events)
		msleep(ROXE_FLUSH_GRACE_MS);
}
