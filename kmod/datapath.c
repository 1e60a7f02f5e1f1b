// SPDX-License-Identifier: GPL-2.0-only
/*
 * The data path between the module and roxed's engines: one shared area
 * per device (struct roxe_kabi_shared in vmalloc_user() memory, mapped by
 * roxed at ROXE_KABI_SHARED_TOKEN) holding the CQ arming bytes, one
 * doorbell ring per engine and a doorbell bit per QPN (one slot per QP);
 * the engines' eventfds (ROXE_IOC_SERVE); and the events roxed raises
 * (ROXE_IOC_CQ_EVENT, ROXE_IOC_EVENT).
 *
 * Nothing here sleeps except SERVE: post_send and req_notify_cq may be
 * called in atomic context once kernel ULPs use the device.
 */
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include "roxe.h"

/* The arming byte of every CQ number we hand out must exist, and the
 * doorbell bit of every QPN.
 */
static_assert(ROXE_MAX_CQ <= ROXE_KABI_MAX_CQ);
static_assert(ROXE_MAX_QPS <= ROXE_KABI_MAX_QPS);
/* db_queued is bit qpn % 64 of __u64 word qpn / 64: the bitops' layout
 * but on a 32-bit big-endian kernel
 */
#if BITS_PER_LONG != 64 && defined(__BIG_ENDIAN)
#error "roxe: db_queued's bit layout differs from the kernel's bitops"
#endif

/* At device creation: req_notify_cq records arming from the first CQ on,
 * served or not, so the area exists for the device's whole life.
 */
int roxe_shared_alloc(struct roxe_dev *rdev)
{
	int i;

	rdev->shared_size = PAGE_ALIGN(sizeof(struct roxe_kabi_shared));
	rdev->shared = vmalloc_user(rdev->shared_size);
	if (!rdev->shared)
		return -ENOMEM;
	rdev->scrap = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!rdev->scrap) {
		vfree(rdev->shared);
		rdev->shared = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < ROXE_KABI_MAX_ENGINES; i++)
		spin_lock_init(&rdev->db[i].lock);
	return 0;
}

/* After unregistration: no verb runs any more, so no doorbell uses the
 * eventfds. roxed's mappings are gone too (each held the file we serve),
 * the scrap page's PTEs with them.
 */
void roxe_shared_free(struct roxe_dev *rdev)
{
	u32 i;

	for (i = 0; i < rdev->nengines; i++) {
		eventfd_ctx_put(rdev->db[i].efd);
		rdev->db[i].efd = NULL;
	}
	rdev->nengines = 0;
	vfree(rdev->shared);
	rdev->shared = NULL;
	if (rdev->scrap)
		__free_page(rdev->scrap);
	rdev->scrap = NULL;
}

int roxe_shared_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != rdev->shared_size ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* vm_insert_page semantics: the pages hold their own references */
	return remap_vmalloc_range(vma, rdev->shared, 0);
}

/* ROXE_IOC_SERVE, under the file's lock: once per device. */
int roxe_serve(struct roxe_dev *rdev, const struct roxe_kabi_serve *s)
{
	struct eventfd_ctx *efd[ROXE_KABI_MAX_ENGINES];
	u32 i, n = s->nengines;

	if (!n || n > ROXE_KABI_MAX_ENGINES)
		return -EINVAL;
	if (rdev->nengines)
		return -EBUSY;
	for (i = 0; i < n; i++) {
		efd[i] = eventfd_ctx_fdget(s->efd[i]);
		if (IS_ERR(efd[i])) {
			while (i--)
				eventfd_ctx_put(efd[i]);
			return -EBADF;	/* not open, or not an eventfd */
		}
	}
	for (i = 0; i < n; i++)
		rdev->db[i].efd = efd[i];
	/* doorbells read nengines first: the contexts are there before it */
	smp_store_release(&rdev->nengines, n);
	return 0;
}

/* A QP's send doorbell: its QPN on ring qpn % nengines unless it is there
 * already (kabi.h: one slot per QP), then that engine's eventfd unless the
 * engine is awake.
 * -EOPNOTSUPP until roxed serves. Never sleeps.
 */
int roxe_doorbell(struct roxe_dev *rdev, u32 qpn)
{
	u32 n = smp_load_acquire(&rdev->nengines);
	unsigned long *queued = (unsigned long *)rdev->shared->db_queued;
	struct roxe_kabi_db_ring *ring;
	unsigned long flags;
	struct roxe_db *db;

	if (!n)
		return -EOPNOTSUPP;
	db = &rdev->db[qpn % n];
	ring = &rdev->shared->db[qpn % n];
	spin_lock_irqsave(&db->lock, flags);
	/* A value-returning atomic, fully ordered whether or not the bit was
	 * set: roxed clears the bit (acquire) before it reads the send queue,
	 * so it sees the WQEs our caller wrote. A bit found set: the QPN is on
	 * the ring, roxed has not taken it.
	 */
	if (!test_and_set_bit(qpn, queued)) {
		/* roxed's cons may be anything: the slot index is masked,
		 * and a nonsensical distance only ever looks full
		 */
		if (db->prod - READ_ONCE(ring->cons) >= ROXE_KABI_DB_SLOTS) {
			/* roxed clears it, then looks at every QP of the
			 * engine; the bit goes with no QPN queued
			 */
			clear_bit(qpn, queued);
			/* after our caller's WQEs: roxed's exchange acquires */
			smp_store_release(&ring->overflow, 1);
			db->overflows++;
		} else {
			WRITE_ONCE(ring->qpn[db->prod % ROXE_KABI_DB_SLOTS], qpn);
			db->prod++;
			/* the slot (and the bit) before prod: roxed acquires */
			smp_store_release(&ring->prod, db->prod);
		}
	}
	spin_unlock_irqrestore(&db->lock, flags);
	/* the ring before awake (kabi.h): an engine that read awake = 0
	 * going to sleep is signalled; one still awake takes the QPN
	 */
	smp_mb();
	if (!READ_ONCE(ring->awake))
		roxe_eventfd_signal(db->efd);
	return 0;
}

/* req_notify_cq: record the arming where roxed reads it after each CQE.
 * NEXT_COMP wins over SOLICITED; roxed's CQ_EVENT may disarm meanwhile,
 * hence the compare-and-exchange.
 */
void roxe_cq_arm(struct roxe_dev *rdev, u32 cqn, u8 want)
{
	u8 *armed = &rdev->shared->cq_armed[cqn];
	u8 old = READ_ONCE(*armed);

	do {
		if (old == IB_CQ_NEXT_COMP && want == IB_CQ_SOLICITED)
			break;
	} while (!try_cmpxchg(armed, &old, want));
	/* pairs with roxed's barrier between writing a CQE and reading this:
	 * either roxed sees the arming or our caller's next poll sees the CQE
	 */
	smp_mb();
}

/* A new or destroyed CQ number starts unarmed. */
void roxe_cq_reset_arm(struct roxe_dev *rdev, u32 cqn)
{
	WRITE_ONCE(rdev->shared->cq_armed[cqn], 0);
}

/* Disarm and raise the completion event if the CQ was armed. Under the
 * CQ xarray's lock (the CQ cannot be destroyed meanwhile).
 */
bool roxe_cq_fire(struct roxe_dev *rdev, struct roxe_cq *cq)
{
	if (!xchg(&rdev->shared->cq_armed[cq->cqn], 0))
		return false;
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return true;
}

/* ROXE_IOC_CQ_EVENT */
int roxe_cq_event(struct roxe_dev *rdev, u32 cqn)
{
	struct roxe_cq *cq;

	xa_lock(&rdev->cqs);
	cq = xa_load(&rdev->cqs, cqn);
	if (cq)
		roxe_cq_fire(rdev, cq);
	xa_unlock(&rdev->cqs);
	return cq ? 0 : -ENOENT;
}

/* Handlers run under the object's xarray lock, as a hardware driver would
 * call them from its interrupt: uverbs' handlers only queue the event.
 */
static int qp_event(struct roxe_dev *rdev, struct ib_event *ev, u32 qpn)
{
	struct roxe_qp *qp;
	unsigned long flags;

	/* irq-safe: kernel ULPs poll their CQs from any context (kverbs.c) */
	xa_lock_irqsave(&rdev->qps, flags);
	qp = xa_load(&rdev->qps, qpn);
	if (qp) {
		if (ev->event != IB_EVENT_SQ_DRAINED)
			roxe_qp_set_error(qp);	/* query_qp says ERR */
		ev->element.qp = &qp->ibqp;
		if (qp->ibqp.event_handler)
			qp->ibqp.event_handler(ev, qp->ibqp.qp_context);
	}
	xa_unlock_irqrestore(&rdev->qps, flags);
	return qp ? 0 : -ENOENT;
}

static int cq_event(struct roxe_dev *rdev, struct ib_event *ev, u32 cqn)
{
	struct roxe_cq *cq;

	xa_lock(&rdev->cqs);
	cq = xa_load(&rdev->cqs, cqn);
	if (cq) {
		ev->element.cq = &cq->ibcq;
		if (cq->ibcq.event_handler)
			cq->ibcq.event_handler(ev, cq->ibcq.cq_context);
	}
	xa_unlock(&rdev->cqs);
	return cq ? 0 : -ENOENT;
}

static int srq_event(struct roxe_dev *rdev, struct ib_event *ev, u32 srqn)
{
	struct roxe_srq *srq;

	xa_lock(&rdev->srqs);
	srq = xa_load(&rdev->srqs, srqn);
	if (srq) {
		/* the limit is one-shot: the application re-arms it */
		WRITE_ONCE(srq->limit, 0);
		ev->element.srq = &srq->ibsrq;
		if (srq->ibsrq.event_handler)
			srq->ibsrq.event_handler(ev, srq->ibsrq.srq_context);
	}
	xa_unlock(&rdev->srqs);
	return srq ? 0 : -ENOENT;
}

/* ROXE_IOC_EVENT: an asynchronous event of roxed's engine. */
int roxe_async_event(struct roxe_dev *rdev, const struct roxe_kabi_event *e)
{
	struct ib_event ev = { .device = &rdev->ib, .event = e->type };

	switch (e->type) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_SQ_DRAINED:
		return qp_event(rdev, &ev, e->id);
	case IB_EVENT_CQ_ERR:
		return cq_event(rdev, &ev, e->id);
	case IB_EVENT_SRQ_LIMIT_REACHED:
		return srq_event(rdev, &ev, e->id);
	default:
		return -EINVAL;
	}
}
