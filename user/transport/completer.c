// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The completer: RC responses retire send WQEs, oldest first (IBA 9.7.5).
 *
 * comp.psn is the next PSN that must be acknowledged or answered. A
 * response with PSN p:
 *   ACK        retires every SEND/WRITE whose last PSN is <= p. Reaching a
 *              READ/ATOMIC not yet answered means its responses were lost
 *              (an implied NAK): go back to it.
 *   READ resp  must be the next response PSN of the READ at the head;
 *              earlier SEND/WRITEs are implicitly acknowledged. Data goes
 *              to the WQE's SGEs at (PSN - first PSN) * MTU; the last one
 *              retires the READ. A gap means loss: go back to comp.psn.
 *   ATOMIC ACK retires the ATOMIC at the head, writing the original value.
 *   FLUSH, ATOMIC WRITE (IBA 1.5) are answered by a zero-length READ
 *              response ONLY with their PSN, which retires them.
 *   RNR NAK    implied ACK below p, then wait the RNR time and resend from
 *              p; rnr_retry (7: forever) runs out -> RNR_RETRY_EXC_ERR.
 *   NAK seq    implied ACK below p, then resend p alone (a selective
 *              repair: recovery.h) or go back to p, once per PSN;
 *              retry_cnt runs out -> RETRY_EXC_ERR. An ACK that stops at
 *              exactly a repaired PSN, with more sent behind it, is taken
 *              as a NAK of the next.
 *   NAK other  the WQE at p completes with REM_INV_REQ / REM_ACCESS /
 *              REM_OP error and the QP enters the error state.
 * Older or unexpected responses (duplicates, a NAK below comp.psn) are
 * dropped. The retransmit timer runs while anything is outstanding and
 * restarts on progress; it and the send window adapt (recovery.h): RTT
 * samples and the delivery rate on progress, the loss interval on each
 * go-back. What it acknowledges gives the engine's PSN credit back
 * (credit.c).
 */
#include <errno.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/completer.h"
#include "transport/credit.h"
#include "transport/qp_state.h"
#include "transport/requester.h"
#include "transport/sched.h"
#include "transport/sendctl.h"
#include "transport/sq.h"
#include "wire/psn.h"

/* RNR timer field -> nanoseconds (IBA table 45). */
static const uint32_t rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
	1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440,
	81920, 122880, 163840, 245760, 327680, 491520,
};

uint64_t roxe_rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_us[code & 31] * 1000;
}

/* A loss detected: the requester goes back, the window counts it. */
static void window_loss(struct roxe_qp *qp)
{
	roxe_cwnd_loss(&qp->comp.cwnd);
	roxe_rto_loss(&qp->comp.rto, qp->eng->now);
}

/* After progress: the window counts what was acknowledged, the timed PSN
 * (if now acknowledged) gives an RTT sample, the retransmit timer restarts
 * from the estimate (or stops when idle). */
static void rearm(struct roxe_qp *qp)
{
	int32_t acked = roxe_psn_diff(qp->comp.psn, qp->comp.cwnd_psn);

	if (acked > 0) {
		roxe_cwnd_ack(&qp->comp.cwnd, (uint32_t)acked, qp->eng->now);
		qp->comp.cwnd_psn = qp->comp.psn;
	}
	if (qp->req.rtt_timing && roxe_psn_diff(qp->comp.psn, qp->req.rtt_psn) > 0) {
		qp->req.rtt_timing = false;
		roxe_rto_sample(&qp->comp.rto, qp->eng->now - qp->req.rtt_sent);
		roxe_cwnd_rtt(&qp->comp.cwnd, qp->eng->now - qp->req.rtt_sent, qp->eng->now);
	}
	roxe_rto_progress(&qp->comp.rto);
	qp->comp.retry_cnt = qp->attr.retry_cnt;
	qp->comp.seq_nak_seen = false;
	if (roxe_psn_diff(qp->req.psn, qp->comp.psn) > 0 && qp->timeout_ns) {
		roxe_retrans_timer_start(qp);
	} else {
		qp->comp.deadline = 0;
	}
	/* The window moved: the requester walks again if anything waits for
	 * it (a message partly sent, a go-back-N, posts not taken); a turn
	 * of a QP with nothing to send costs the application its reply's
	 * time (a ping-pong's send completion comes in this turn). */
	if (roxe_sq_untaken(qp))
		roxe_engine_ready(qp->eng, qp);
}

/*
 * Implied acknowledgement of everything before psn. Returns false when a
 * READ/ATOMIC below psn is still unanswered: its responses were lost and the
 * requester has been sent back to it.
 */
static bool ack_below(struct roxe_qp *qp, uint32_t psn)
{
	struct rxe_send_wqe *w;
	bool progress = false;

	while ((w = roxe_sq_head(qp)) && w->state >= ROXE_WQE_SENDING) {
		if (roxe_wqe_is_local(w->wr.opcode)) {
			roxe_complete_wqe(qp, w, (enum ibv_wc_status)w->status);
			continue;
		}
		if (roxe_psn_diff(psn, w->first_psn) <= 0)
			break;
		if (roxe_wqe_is_read_or_atomic(w->wr.opcode)) {
			/* A response of this READ/ATOMIC: retire what precedes. */
			if (roxe_psn_diff(psn, w->last_psn) <= 0)
				break;
			if (progress)
				rearm(qp);
			window_loss(qp);
			roxe_requester_retry(qp, qp->comp.psn);
			return false;
		}
		/* Covered only in part: a multi-packet WQE. Covered whole, it
		 * retires even while go-back-N is sending it again (the
		 * responder has it all: no ACK is ever asked for again). */
		if (roxe_psn_diff(psn, w->last_psn) <= 0) {
			if (roxe_psn_diff(psn, qp->comp.psn) > 0) {
				qp->comp.psn = psn;
				progress = true;
			}
			break;
		}
		qp->comp.psn = roxe_psn_add(w->last_psn, 1);
		roxe_complete_wqe(qp, w, IBV_WC_SUCCESS);
		progress = true;
	}
	if (progress)
		rearm(qp);
	return true;
}

/*
 * w, the oldest WQE, fails with st and the QP goes to ERR. The state moves
 * first and the flush completes w with its own status (flush_sq keeps a
 * failed WQE's status): an application that polls the error completion
 * finds the QP in ERR already (errors_test: rnr_retry_exceeded; served_test:
 * qp_in_err_before_its_error_completion).
 */
static void fatal(struct roxe_qp *qp, struct rxe_send_wqe *w, enum ibv_wc_status st)
{
	w->status = st;
	roxe_qp_to_error(qp, IBV_EVENT_QP_FATAL);
}

/* A response moved comp.psn: the selective repair's verdict (recovery.h).
 * True: the responder stopped at exactly the repaired PSN and lacks the
 * next. */
static bool repair_verdict(struct roxe_qp *qp)
{
	uint64_t rtt = roxe_repair_rtt(&qp->comp.repair, qp->comp.psn, qp->eng->now);
	bool short_of_it = roxe_repair_progress(&qp->comp.repair, qp->comp.psn);

	if (rtt) {
		roxe_rto_sample(&qp->comp.rto, rtt);
		roxe_cwnd_rtt(&qp->comp.cwnd, rtt, qp->eng->now);
	}
	if (qp->comp.repair.kept && !qp->comp.cwnd.selective)
		roxe_cwnd_selective(&qp->comp.cwnd);
	return short_of_it;
}

/*
 * The responder lacks psn (a sequence NAK, or an ACK that stopped short of
 * a repair's verdict): resend it alone when the repair says so, else go
 * back to it. Once per PSN.
 */
static void seq_gap(struct roxe_qp *qp, struct rxe_send_wqe *w, uint32_t psn)
{
	if (qp->comp.seq_nak_seen && qp->comp.seq_nak_psn == psn)
		return;		/* already going back for this one */
	if (qp->comp.retry_cnt == 0) {
		fatal(qp, w, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_cnt--;
	qp->comp.seq_nak_seen = true;
	qp->comp.seq_nak_psn = psn;
	qp->comp.psn = psn;
	if (roxe_repair_try(&qp->comp.repair, psn) && roxe_requester_repair(qp, psn)) {
		/* the last PSN sent before it: what a verdict can look at */
		roxe_repair_sent(&qp->comp.repair, psn, roxe_psn_add(qp->req.max_psn, ROXE_PSN_MASK),
				 qp->eng->now);
		roxe_rto_loss(&qp->comp.rto, qp->eng->now);	/* probes armed */
		return;
	}
	/* resend now, from the PSN: no waiting for the timer */
	window_loss(qp);
	roxe_requester_retry(qp, psn);
}

static void on_nak(struct roxe_qp *qp, uint32_t psn, uint8_t syndrome)
{
	uint8_t code = syndrome & ROXE_AETH_VALUE_MASK;
	struct rxe_send_wqe *w;
	bool stale;

	if (!ack_below(qp, psn))
		return;
	repair_verdict(qp);	/* a NAK of the PSN after a repair says it itself */
	w = roxe_sq_head(qp);
	if (!w || roxe_psn_diff(psn, w->first_psn) < 0 || roxe_psn_diff(psn, w->last_psn) > 0)
		return;		/* stale: nothing outstanding there */
	/* Stale too: a PSN already acknowledged (a duplicated or delayed NAK,
	 * say, of a loss go-back-N has repaired). Acting on it would move
	 * comp.psn back and send the window again. */
	stale = roxe_psn_diff(psn, qp->comp.psn) < 0;

	if ((syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_RNR_NAK) {
		qp->stats->rnr_nak_rcvd++;
		if (stale)
			return;
		if (qp->comp.rnr_retry == 0) {
			fatal(qp, w, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->comp.rnr_retry != 7)
			qp->comp.rnr_retry--;
		qp->comp.psn = psn;
		roxe_requester_retry(qp, psn);
		qp->req.rnr_wait = true;
		qp->req.rnr_deadline = qp->eng->now + roxe_rnr_timer_ns(code);
		qp->comp.deadline = 0;	/* the RNR wait replaces the ACK timer */
		roxe_timer_arm(qp);
		return;
	}
	roxe_count_nak(qp->stats, code, false);
	if (stale)
		return;
	switch (code) {
	case ROXE_NAK_PSN_SEQ_ERR:
		seq_gap(qp, w, psn);
		return;
	case ROXE_NAK_INVALID_REQUEST:
		fatal(qp, w, IBV_WC_REM_INV_REQ_ERR);
		return;
	case ROXE_NAK_REMOTE_ACCESS:
		fatal(qp, w, IBV_WC_REM_ACCESS_ERR);
		return;
	default:
		fatal(qp, w, IBV_WC_REM_OP_ERR);
		return;
	}
}

/* A READ response ONLY: first and last. */
static bool h_opcode_only(const struct roxe_pkt *pkt)
{
	return (pkt->flags & ROXE_OPF_ONLY) == ROXE_OPF_ONLY;
}

/* The response at psn must land in a page of an ODP MR that is not
 * present yet (core/odp.c: roxe.ko faults it in meanwhile): it is dropped,
 * and the requester asks again from psn after its wait, as after an RNR
 * NAK but spending no retry; an ATOMIC asked again is a duplicate, which
 * the responder answers from its result. */
static void page_wait(struct roxe_qp *qp, uint32_t psn)
{
	roxe_requester_retry(qp, psn);
	roxe_requester_page_wait(qp);
	qp->comp.deadline = 0;	/* the wait replaces the ACK timer */
}

static void on_read_response(struct roxe_qp *qp, const uint8_t *frame,
			     const struct roxe_pkt *pkt, uint32_t psn)
{
	struct rxe_send_wqe *w;
	uint32_t offset, part_end;
	int err = 0;

	if (!ack_below(qp, psn))
		return;
	w = roxe_sq_head(qp);
	if (w && (w->wr.opcode == ROXE_UWR_FLUSH || w->wr.opcode == ROXE_UWR_ATOMIC_WRITE)) {
		if (psn != w->first_psn)
			return;		/* a duplicate */
		if (h_opcode_only(pkt) && !pkt->payload_len) {
			qp->comp.psn = roxe_psn_add(psn, 1);
			roxe_complete_wqe(qp, w, IBV_WC_SUCCESS);
			rearm(qp);
		} else {
			fatal(qp, w, IBV_WC_BAD_RESP_ERR);
		}
		return;
	}
	if (!w || w->wr.opcode != IBV_WR_RDMA_READ)
		return;		/* a duplicate of an answered READ */
	if (roxe_psn_diff(psn, qp->comp.psn) < 0)
		return;		/* duplicate */
	if (roxe_psn_diff(psn, qp->comp.psn) > 0) {
		/* A response went missing: ask again from the gap, once. */
		if (!(qp->comp.seq_nak_seen && qp->comp.seq_nak_psn == qp->comp.psn)) {
			qp->comp.seq_nak_seen = true;
			qp->comp.seq_nak_psn = qp->comp.psn;
			window_loss(qp);
			roxe_requester_retry(qp, qp->comp.psn);
		}
		return;
	}
	offset = (uint32_t)roxe_psn_diff(psn, w->first_psn) * qp->mtu;
	/* Every response but a request's last carries exactly one MTU; the
	 * last ends its part (roxe_read_part_end). */
	part_end = roxe_read_part_end(qp, w, offset);
	if (offset + pkt->payload_len > part_end ||
	    (!(pkt->flags & ROXE_OPF_LAST) && pkt->payload_len != qp->mtu) ||
	    ((pkt->flags & ROXE_OPF_LAST) && offset + pkt->payload_len != part_end)) {
		fatal(qp, w, IBV_WC_BAD_RESP_ERR);
		return;
	}
	if (pkt->payload_len)
		err = roxe_sge_copy(qp->dev, qp->pd, roxe_sq_dma(qp, w)->sge,
				    roxe_wqe_num_sge(qp, w), offset,
				    (void *)(frame + pkt->payload_off), pkt->payload_len, ROXE_TO_MR);
	if (err == -EAGAIN) {
		page_wait(qp, psn);
		return;
	}
	if (err) {
		fatal(qp, w, IBV_WC_LOC_PROT_ERR);
		return;
	}
	qp->req.page_misses = 0;
	qp->comp.psn = roxe_psn_add(psn, 1);
	if ((pkt->flags & ROXE_OPF_LAST) && part_end == w->dma.length)
		roxe_complete_wqe(qp, w, IBV_WC_SUCCESS);
	else if ((pkt->flags & ROXE_OPF_LAST) && qp->req.rd_atomic)
		qp->req.rd_atomic--;	/* a part answered: room for the next */
	rearm(qp);
}

static void on_atomic_ack(struct roxe_qp *qp, uint64_t orig, uint32_t psn)
{
	struct rxe_send_wqe *w;
	int err;

	if (!ack_below(qp, psn))
		return;
	w = roxe_sq_head(qp);
	if (!w || (w->wr.opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
		   w->wr.opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) || psn != w->first_psn)
		return;
	err = roxe_sge_copy(qp->dev, qp->pd, roxe_sq_dma(qp, w)->sge, roxe_wqe_num_sge(qp, w), 0,
			    &orig, 8, ROXE_TO_MR);
	if (err == -EAGAIN) {
		page_wait(qp, psn);	/* the atomic's repeat is answered from its result */
		return;
	}
	if (err) {
		fatal(qp, w, IBV_WC_LOC_PROT_ERR);
		return;
	}
	qp->req.page_misses = 0;
	qp->comp.psn = roxe_psn_add(psn, 1);
	roxe_complete_wqe(qp, w, IBV_WC_SUCCESS);
	rearm(qp);
}

void roxe_completer(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt)
{
	struct roxe_frame_hdr h;

	if (qp->type != IBV_QPT_RC || (qp->eng_state != IBV_QPS_RTS && qp->eng_state != IBV_QPS_SQD))
		return;
	roxe_frame_hdr_get(frame, pkt, &h);
	/* Responses beyond anything we ever sent are bogus. */
	if (roxe_psn_diff(h.psn, qp->req.max_psn) >= 0)
		return;
	switch (h.opcode) {
	case ROXE_OP_RC_ACKNOWLEDGE:
		if ((h.syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_ACK) {
			struct rxe_send_wqe *w;

			if (ack_below(qp, roxe_psn_add(h.psn, 1)) && repair_verdict(qp) &&
			    (w = roxe_sq_head(qp)))
				seq_gap(qp, w, qp->comp.psn);
		} else
			on_nak(qp, h.psn, h.syndrome);
		break;
	case ROXE_OP_RC_ATOMIC_ACKNOWLEDGE:
		on_atomic_ack(qp, h.orig, h.psn);
		break;
	case ROXE_OP_RC_RDMA_READ_RESPONSE_FIRST:
	case ROXE_OP_RC_RDMA_READ_RESPONSE_MIDDLE:
	case ROXE_OP_RC_RDMA_READ_RESPONSE_LAST:
	case ROXE_OP_RC_RDMA_READ_RESPONSE_ONLY:
		on_read_response(qp, frame, pkt, h.psn);
		break;
	default:
		break;
	}
	roxe_completer_progress(qp);
	roxe_credit_sync(qp);		/* what was acknowledged frees credit */
}

void roxe_completer_timeout(struct roxe_qp *qp)
{
	struct rxe_send_wqe *w = roxe_sq_head(qp);

	qp->comp.deadline = 0;
	if (!w || !roxe_psn_diff(qp->req.psn, qp->comp.psn))
		return;
	qp->stats->timeouts++;
	if (qp->comp.probe_due) {
		uint64_t rto = roxe_rto_timer_ns(&qp->comp.rto, qp->timeout_ns, qp->eng->now);

		qp->comp.probe_due = false;
		roxe_requester_probe(qp);	/* the oldest PSN unacknowledged, the last */
		/* the rest of the RTO */
		qp->comp.deadline = qp->comp.timer_from + rto;
		roxe_timer_arm(qp);
		return;
	}
	/* retry_cnt counts expiries of the configured timeout, as rxe's: one
	 * the estimate made earlier spends none, so the QP gives up no sooner
	 * than with a fixed timer (the backoff reaches the cap in a bounded
	 * number of doublings). */
	if (roxe_rto_timer_ns(&qp->comp.rto, qp->timeout_ns, qp->eng->now) >= qp->timeout_ns ||
	    qp->comp.rto.backoff >= ROXE_RTO_MAX_BACKOFF) {
		if (qp->comp.retry_cnt == 0) {
			fatal(qp, w, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_cnt--;
	}
	roxe_cwnd_timeout(&qp->comp.cwnd, qp->comp.rto.backoff > 0);
	roxe_rto_loss(&qp->comp.rto, qp->eng->now);
	roxe_rto_backoff(&qp->comp.rto);
	qp->comp.seq_nak_seen = false;
	qp->comp.repair.pending = false;	/* all goes again: no verdict */
	roxe_requester_retry(qp, qp->comp.psn);	/* its credit comes back */
	qp->comp.deadline = qp->eng->now + roxe_rto_timer_ns(&qp->comp.rto, qp->timeout_ns, qp->eng->now);
	roxe_timer_arm(qp);
}
