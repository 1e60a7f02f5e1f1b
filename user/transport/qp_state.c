// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The engine's side of QP state changes (the verbs side, verbs/qp.c,
 * changes qp->state; the owning engine notices on its next turn and acts
 * here): start the requester/responder at RTR/RTS, flush every WR at ERR
 * and SQE, forget all transport state at RESET; and the engine's own moves
 * to ERR or SQE on errors, by compare-and-swap against the application's.
 */
#include "transport/transport.h"
#include "transport/qp_state.h"
#include "transport/credit.h"
#include "transport/sched.h"
#include "transport/sendctl.h"
#include "transport/sq.h"
#include "transport/stash.h"
#include "wire/psn.h"

/* --- the engine's side of state changes ----------------------------------------- */
static void flush_wc(struct roxe_cq *cq, uint64_t wr_id, uint32_t qpn, enum ibv_wc_opcode op)
{
	struct ib_uverbs_wc wc = {
		.wr_id = wr_id,
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = op,
		.qp_num = qpn,
	};

	roxe_cq_post(cq, &wc, false);
}

/* Complete every outstanding send WR with IBV_WC_WR_FLUSH_ERR (IBA 10.3.1):
 * at ERR, and at SQE where the receive side goes on. The WRs are those
 * posted when the flush starts: an application that keeps moving its
 * producer index gets them at its next doorbell, not in this loop. */
static void flush_sq(struct roxe_qp *qp)
{
	uint32_t n = roxe_queue_count_from(&qp->sq, qp->sq.index);

	/* The WQE that failed locally keeps its own status; the rest flush. */
	for (; n; n--) {
		struct rxe_send_wqe *w = roxe_sq_take(qp, qp->sq.index);

		roxe_complete_wqe(qp, w, w->status != IBV_WC_SUCCESS ?
				  (enum ibv_wc_status)w->status : IBV_WC_WR_FLUSH_ERR);
	}
	qp->req.wqe = qp->sq.index;
	qp->req.offset = 0;
	qp->req.rd_atomic = 0;
	roxe_credit_drop(qp);	/* nothing outstanding any more */
	qp->req.rnr_wait = false;
	qp->req.pace_wait = false;
	qp->comp.deadline = 0;
}

/* ERR: every outstanding WR of both queues, and nothing more to send. */
static void flush(struct roxe_qp *qp)
{
	flush_sq(qp);
	if (qp->resp.rwqe_valid) {
		flush_wc(qp->rcq, qp->resp.rwqe.wr_id, qp->qpn, IBV_WC_RECV);
		qp->resp.rwqe_valid = false;
	}
	if (!qp->srq) {
		/* as flush_sq: what is posted now, each wr_id read once */
		uint32_t n = roxe_queue_count_from(&qp->rq, qp->rq.index);

		for (; n; n--) {
			const struct rxe_recv_wqe *w = roxe_queue_consumer_slot(&qp->rq);

			flush_wc(qp->rcq, __atomic_load_n(&w->wr_id, __ATOMIC_RELAXED), qp->qpn,
				 IBV_WC_RECV);
			roxe_queue_consume(&qp->rq);
		}
	}
	roxe_timer_disarm(qp);
	roxe_stash_drop(qp);
	roxe_resp_page_drop(&qp->resp);
	qp->resp.read.active = false;
	qp->resp.out_len = 0;
	qp->resp.ack_pending = false;
	qp->resp.reack_left = 0;
}

static void reset(struct roxe_qp *qp)
{
	struct roxe_rd_res *res = qp->resp.res;

	roxe_timer_disarm(qp);
	roxe_credit_drop(qp);	/* before its count is wiped */
	roxe_stash_drop(qp);	/* so is the stash's */
	roxe_sq_held_drop(qp);	/* RESET: nothing posted shows */
	roxe_resp_page_drop(&qp->resp);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));
	memset(res, 0, ROXE_MAX_RD_ATOMIC * sizeof(*res));
	qp->resp.res = res;
	memset(qp->swqe, 0, ((size_t)qp->sq.mask + 1) * sizeof(*qp->swqe));
	if (qp->swqe_seq)
		memset(qp->swqe_seq, 0, ((size_t)qp->sq.mask + 1) * sizeof(*qp->swqe_seq));
	if (qp->served) {
		/* The application's rings: drop what it posted, as rxe does.
		 * Only the indices move; the shapes stay the module's. */
		qp->sq.index = roxe_queue_producer_index(&qp->sq);
		__atomic_store_n(&qp->sq_buf->consumer_index, qp->sq.index, __ATOMIC_RELEASE);
		if (qp->rq_buf) {
			qp->rq.index = roxe_queue_producer_index(&qp->rq);
			__atomic_store_n(&qp->rq_buf->consumer_index, qp->rq.index,
					 __ATOMIC_RELEASE);
		}
		return;
	}
	/* Empty both rings; posting is refused in RESET, the locks make sure
	 * no post is half done. */
	pthread_spin_lock(&qp->sq_post_lock);
	qp->sq_buf->producer_index = qp->sq_buf->consumer_index = 0;
	qp->sq.index = 0;
	pthread_spin_unlock(&qp->sq_post_lock);
	if (qp->rq_buf) {
		pthread_spin_lock(&qp->rq_post_lock);
		qp->rq_buf->producer_index = qp->rq_buf->consumer_index = 0;
		qp->rq.index = 0;
		pthread_spin_unlock(&qp->rq_post_lock);
	}
}

void roxe_qp_engine_sync(struct roxe_qp *qp)
{
	/* asked before st is read: a RESET asked is one the state shows */
	unsigned asked = atomic_load_explicit(&qp->reset_asked, memory_order_acquire);
	int st = roxe_qp_state(qp);

	/* A RESET not done yet, though the engine may never have seen the
	 * QP leave RESET: whatever was posted meanwhile goes (as rxe). */
	if (asked != atomic_load_explicit(&qp->reset_done, memory_order_relaxed)) {
		reset(qp);
		qp->eng_state = IBV_QPS_RESET;
		atomic_store_explicit(&qp->reset_done, asked, memory_order_release);
	}

	if (st == qp->eng_state) {
		if (st == IBV_QPS_ERR)
			flush(qp);	/* WRs posted while in error */
		else if (st == IBV_QPS_SQE)
			flush_sq(qp);	/* sends posted as the QP entered SQE */
		else if (st == IBV_QPS_SQD)
			roxe_qp_sq_drain_check(qp);	/* left and entered again */
		return;
	}
	/* The engine may see several transitions at once (RESET to RTS
	 * between two turns): initialise everything the new state needs. */
	if (st == IBV_QPS_RESET) {
		reset(qp);
	} else if (st == IBV_QPS_ERR) {
		flush(qp);
	} else if (st == IBV_QPS_SQE) {
		flush_sq(qp);
	} else {
		if (st >= IBV_QPS_RTR && qp->eng_state < IBV_QPS_RTR) {
			qp->resp.psn = qp->attr.rq_psn;
			qp->resp.msn = 0;
		}
		if (st >= IBV_QPS_RTS && qp->eng_state < IBV_QPS_RTS) {
			qp->req.psn = qp->req.max_psn = qp->comp.psn = qp->attr.sq_psn;
			qp->req.wqe = qp->sq.index;
			qp->comp.retry_cnt = qp->attr.retry_cnt;
			qp->comp.rnr_retry = qp->attr.rnr_retry;
			roxe_recovery_reset(qp);
			roxe_credit_drop(qp);	/* nothing outstanding */
		}
		/* SQD -> SQD may have changed the retry counts. */
		if (st == IBV_QPS_RTS && qp->eng_state == IBV_QPS_SQD) {
			qp->comp.retry_cnt = qp->attr.retry_cnt;
			qp->comp.rnr_retry = qp->attr.rnr_retry;
		}
	}
	qp->eng_state = st;
	if (st == IBV_QPS_SQD)
		roxe_qp_sq_drain_check(qp);
}

/*
 * The engine moves the QP to ERR or SQE itself. The application's RESET or
 * ERR stands; any other change it made meanwhile (RTS -> SQD, SQD -> RTS)
 * gives way to the error. Returns whether the state changed.
 */
static bool engine_move(struct roxe_qp *qp, int to)
{
	int cur = roxe_qp_state(qp);

	do {
		if (cur == IBV_QPS_RESET || cur == IBV_QPS_ERR || cur == to)
			return false;
	} while (!atomic_compare_exchange_weak(&qp->state, &cur, to));
	atomic_store(&qp->sq_draining, false);	/* no SQ_DRAINED out of SQD */
	return true;
}

/* A fatal transport error: flush everything, then raise ev, so that the
 * error completions are in the CQs before the event shows. */
void roxe_qp_to_error(struct roxe_qp *qp, enum ibv_event_type ev)
{
	bool moved = engine_move(qp, IBV_QPS_ERR);

	roxe_qp_engine_sync(qp);
	if (moved)
		roxe_async_event(qp->dev, ev, qp, qp->qpn, qp->tenant);
}

/*
 * The send WQE being sent failed locally (bad lkey, protection, length):
 * it completes with its own status and the send queue stops.
 *   RC: ERR with IBV_EVENT_QP_FATAL; every RC error is fatal to the QP.
 *   UC, UD: SQE (IBA 10.3.1): the other send WQEs flush, the receive side
 *   goes on, the application brings the QP back with modify SQE -> RTS.
 * No async event for SQE: IBA defines none (the error completion is the
 * report; SQE is not a fatal state) and kernel rxe, which never enters
 * SQE, raises none either. QP_FATAL would say the QP is lost.
 */
void roxe_qp_send_error(struct roxe_qp *qp)
{
	if (qp->type == IBV_QPT_RC) {
		roxe_qp_to_error(qp, IBV_EVENT_QP_FATAL);
		return;
	}
	engine_move(qp, IBV_QPS_SQE);
	roxe_qp_engine_sync(qp);
}

/* A served QP's send WQE, as the application wrote it: IBV_WC_SUCCESS, or
 * the status it fails with (the same rules roxe_post_send applies). */
enum ibv_wc_status roxe_qp_check_send_wqe(const struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t op = w->wr.opcode, len = w->dma.length;
	bool rd_at = roxe_wqe_is_read_or_atomic(op);

	/* the module's fast registration, for kernel ULPs' QPs only: an
	 * application's WQE with this opcode is an unknown one (served_test:
	 * reg_mr_wqe_from_an_application_qp) */
	if (op == ROXE_KABI_WR_REG_MR)
		return qp->type == IBV_QPT_UD || !qp->kernel_ulp ? IBV_WC_LOC_QP_OP_ERR :
								   IBV_WC_SUCCESS;
	if (!roxe_qp_opcode_ok(qp->type, (enum ibv_wr_opcode)op))
		return IBV_WC_LOC_QP_OP_ERR;
	if ((w->wr.send_flags & IBV_SEND_INLINE) && !rd_at) {
		if (len > qp->sq_slot_inline)
			return IBV_WC_LOC_LEN_ERR;
	} else if (w->dma.num_sge > qp->sq_slot_sge) {
		return IBV_WC_LOC_LEN_ERR;
	}
	if (len > ROXE_MAX_MSG_SZ || (qp->type == IBV_QPT_UD && len > qp->dev->mtu))
		return IBV_WC_LOC_LEN_ERR;
	if ((op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	    (w->dma.num_sge != 1 || len != 8))
		return IBV_WC_LOC_LEN_ERR;
	/* its 8 bytes lie in the slot, where inline data goes (dma.atomic_wr) */
	if (op == ROXE_UWR_ATOMIC_WRITE && (len != ROXE_ATOMIC_WRITE_LEN ||
					    qp->sq_slot_inline < ROXE_ATOMIC_WRITE_LEN))
		return IBV_WC_LOC_LEN_ERR;
	return IBV_WC_SUCCESS;
}
