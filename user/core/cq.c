// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Producing completions: engines put CQEs into a CQ's ring (under the CQ's
 * spinlock, as QPs of several engines may share it). A CQE that finds the
 * ring full is not dropped silently: the CQ goes into error, poll reports
 * -EOVERFLOW once, and an IBV_EVENT_CQ_ERR async event is queued (IBA
 * 11.4.2.1). A CQE that qualifies for an armed CQ raises its completion
 * event (the channel's eventfd, or a served CQ's hook).
 */
#include <string.h>
#include <unistd.h>
#include "core/core.h"

bool roxe_cq_post(struct roxe_cq *cq, const struct ib_uverbs_wc *wc, bool solicited)
{
	bool ok = true;
	int armed;

	pthread_spin_lock(&cq->lock);
	if (atomic_load_explicit(&cq->overflow, memory_order_relaxed)) {
		ok = false;
	} else if (roxe_queue_full(&cq->prod)) {
		atomic_store(&cq->overflow, true);
		ok = false;
	} else {
		memcpy(roxe_queue_producer_slot(&cq->prod), wc, sizeof(*wc));
		roxe_queue_produce(&cq->prod);
	}
	pthread_spin_unlock(&cq->lock);

	if (!ok) {
		if (!cq->overflow_reported) {
			cq->overflow_reported = true;
			roxe_async_event(cq->dev, IBV_EVENT_CQ_ERR, cq, cq->id, cq->tenant);
		}
		atomic_fetch_add_explicit(&cq->lost, 1, memory_order_release);
		return false;
	}
	/* Store (the CQE) then load (armed), against the application's store
	 * (armed) then load (the CQE) in req_notify + poll: without a full
	 * fence on both sides each may miss the other's store, and the
	 * event is lost while the CQE sits unseen. */
	atomic_thread_fence(memory_order_seq_cst);
	if (cq->served_event) {
		cq->served_event(cq->served_ctx, cq, solicited || wc->status != IBV_WC_SUCCESS);
		return true;
	}
	armed = atomic_load_explicit(&cq->armed, memory_order_relaxed);
	if (cq->channel && armed != ROXE_ARM_NONE &&
	    (armed == ROXE_ARM_ANY || solicited || wc->status != IBV_WC_SUCCESS) &&
	    atomic_exchange(&cq->armed, ROXE_ARM_NONE) != ROXE_ARM_NONE) {
		uint64_t one = 1;

		atomic_store(&cq->event_pending, true);
		if (write(cq->channel->efd, &one, sizeof(one)) != sizeof(one))
			return true;	/* the counter cannot overflow in practice */
	}
	return true;
}
