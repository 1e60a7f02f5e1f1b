// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The responder: executes incoming requests (IBA 9.7.5, 9.8, 9.9).
 *
 * RC, for a request with PSN p against the expected PSN e:
 *   p > e   out of sequence: one "PSN sequence error" NAK per gap; a copy
 *           is kept aside (stash.c) or dropped
 *   p < e   duplicate: SEND/WRITE are re-acknowledged with p, or the PSN
 *           of a stash run's ACK (rc_duplicate_ack: no ACK runs ahead of
 *           a go-back requester), and that ACK again while the requester
 *           stays quiet after it (reack_arm), READs are answered
 *           again from the recorded request (from the PSN asked for: a
 *           restarted READ), ATOMICs get their recorded reply: nothing is
 *           executed twice
 *   p == e  checked in this order: opcode sequence and length (NAK invalid
 *           request), a receive WQE for SEND and WRITE-with-immediate (RNR
 *           NAK with min_rnr_timer when there is none; e does not move),
 *           R_Key, access and bounds (NAK remote access error), placement
 *           into the receive WQE's SGEs (too long: NAK invalid request and a
 *           LOC_LEN_ERR completion; bad lkey: NAK remote operational error).
 *           Then e advances (by the response count for a READ), the MSN
 *           counts finished messages, and an ACK is owed when AckReq is set.
 *           Owed ACKs are coalesced into one per QP per engine turn.
 *           Then whatever the stash holds from the new e on runs, in
 *           order, as if it came now; an ACK of all of it is owed (not
 *           to a requester seen going back over such a run), and a gap
 *           after it is NAKed at once.
 * Errors of the NAK kinds also move the QP to the error state (class C).
 *
 * IBA 1.5's ATOMIC WRITE and FLUSH are answered as kernel rxe does: each
 * takes a resource like an ATOMIC, and its answer (also a duplicate's,
 * replayed without executing again) is a zero-length READ RESPONSE ONLY.
 * The QP's access flags refuse them with an invalid-request NAK (REMOTE_WRITE
 * for ATOMIC WRITE, the placement type's FLUSH bit for FLUSH), the R_Key,
 * the MR's access and the range with a remote-access NAK, an ATOMIC WRITE
 * whose RETH length is not 8 or whose address is not 8-byte aligned with
 * an invalid-request NAK.
 *
 * UC: no ACKs; a PSN gap, a missing receive WQE or a bad R_Key silently
 * drops the rest of the message, and reception resumes at the next
 * FIRST/ONLY packet. UD: one-packet messages, Q_Key checked, the 40-byte
 * GRH placed first in the receive buffer (an IPv4 header sits in its last
 * 20 bytes), the source QP, flags and the packet type (sl) in the completion.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/responder.h"
#include "transport/qp_state.h"
#include "transport/sched.h"
#include "transport/sendctl.h"
#include "transport/stash.h"
#include "wire/psn.h"

/* --- receive WQEs ----------------------------------------------------------- */
static bool take_rwqe(struct roxe_qp *qp)
{
	struct roxe_queue *q = qp->srq ? &qp->srq->cons : &qp->rq;
	const struct rxe_recv_wqe *w;
	bool ok = false;

	if (qp->resp.rwqe_valid)
		return true;
	if (qp->srq)
		pthread_spin_lock(&qp->srq->lock);
	if (!roxe_queue_empty(q)) {
		uint32_t n;

		/* Bounded by what a slot holds: a served QP's application may
		 * have written anything there. */
		uint32_t slot = 1u << q->log2_elem_size;
		uint32_t room = slot > sizeof(*w) ? (slot - (uint32_t)sizeof(*w)) /
				(uint32_t)sizeof(struct rxe_sge) : 0;

		w = roxe_queue_consumer_slot(q);
		/* each field read once, the SGEs copied: the engine's copy
		 * alone is used from here on */
		n = __atomic_load_n(&w->dma.num_sge, __ATOMIC_RELAXED);
		if (n > room)
			n = room;
		if (n > ROXE_MAX_SGE)
			n = ROXE_MAX_SGE;
		qp->resp.rwqe.wr_id = __atomic_load_n(&w->wr_id, __ATOMIC_RELAXED);
		qp->resp.rwqe.length = __atomic_load_n(&w->dma.length, __ATOMIC_RELAXED);
		qp->resp.rwqe.num_sge = n;
		qp->resp.rwqe.offset = 0;
		memcpy(qp->resp.rwqe.sge, w->dma.sge, n * sizeof(struct rxe_sge));
		roxe_queue_consume(q);
		ok = true;
		if (qp->srq) {
			unsigned limit = atomic_load(&qp->srq->limit);

			if (limit && roxe_queue_count_from(q, q->index) < limit &&
			    atomic_exchange(&qp->srq->limit, 0))
				roxe_async_event(qp->dev, IBV_EVENT_SRQ_LIMIT_REACHED, qp->srq,
						 qp->srq->id, qp->srq->tenant);
		}
	}
	if (qp->srq)
		pthread_spin_unlock(&qp->srq->lock);
	qp->resp.rwqe_valid = ok;
	return ok;
}

/* sl: a UD receive's packet type (ROXE_UWC_SL_*), else 0 */
static void complete_rwqe_sl(struct roxe_qp *qp, enum ibv_wc_status st, enum ibv_wc_opcode op,
			     uint32_t byte_len, const struct roxe_frame_hdr *h, unsigned flags,
			     uint8_t sl)
{
	struct ib_uverbs_wc wc = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = st,
		.opcode = op,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
		.wc_flags = flags,
		.sl = sl,
	};

	if (h && (flags & ROXE_UWC_WITH_INV))
		wc.ex.invalidate_rkey = h->inv_rkey;
	else if (h && (flags & ROXE_UWC_WITH_IMM))
		wc.ex.imm_data = h->imm;
	if (h && qp->type == IBV_QPT_UD)
		wc.src_qp = h->src_qpn;
	qp->resp.rwqe_valid = false;
	roxe_cq_post(qp->rcq, &wc, h && h->se);
}

static void complete_rwqe(struct roxe_qp *qp, enum ibv_wc_status st, enum ibv_wc_opcode op,
			  uint32_t byte_len, const struct roxe_frame_hdr *h, unsigned flags)
{
	complete_rwqe_sl(qp, st, op, byte_len, h, flags, 0);
}

/* --- sending ACKs, NAKs and responses ---------------------------------------- */
static struct roxe_buf *build(struct roxe_qp *qp, const struct roxe_frame_hdr *h,
			      uint32_t payload_len, struct roxe_pkt *pkt)
{
	struct roxe_buf *b = roxe_engine_tx_buf(qp->eng);

	if (!b)
		return NULL;
	if (roxe_engine_tx_hdrs(b, &qp->path, h, payload_len, pkt)) {
		roxe_port_tx_free(qp->eng->port, b, 1);
		return NULL;
	}
	return b;
}

/* own: a frame of its own; a plain ACK is otherwise held, and a newer one
 * of the QP replaces it (sched.c: roxe_engine_tx_commit_ack) */
static bool send_ack_as(struct roxe_qp *qp, uint8_t opcode, uint8_t syndrome, uint32_t psn,
			uint64_t orig, bool own)
{
	struct roxe_frame_hdr h = {
		.opcode = opcode,
		.pkey = ROXE_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.syndrome = syndrome,
		.msn = qp->resp.msn,
		.orig = orig,
	};
	struct roxe_pkt pkt;
	struct roxe_buf *b = build(qp, &h, 0, &pkt);

	if (!b)
		return false;
	b->len = roxe_frame_seal(b->data, &pkt);
	if (!own && opcode == ROXE_OP_RC_ACKNOWLEDGE &&
	    (syndrome & ROXE_AETH_TYPE_MASK) == ROXE_AETH_ACK)
		roxe_engine_tx_commit_ack(qp->eng, qp, b);
	else
		roxe_engine_tx_commit_resp(qp->eng, qp, b);
	return true;
}

static bool send_ack(struct roxe_qp *qp, uint8_t opcode, uint8_t syndrome, uint32_t psn,
		     uint64_t orig)
{
	return send_ack_as(qp, opcode, syndrome, psn, orig, false);
}

/* The owed plain ACK; true when it went. One of the NAKed PSN or past it,
 * while the requester goes back (rc_back), may have run ahead of its
 * resend: its PSN is repeated for the duplicates that follow
 * (rc_duplicate_ack). */
static bool send_owed_ack(struct roxe_qp *qp)
{
	uint32_t psn = qp->resp.ack_psn;

	/* once, and once more for each duplicate that repeats it, each copy
	 * a frame of its own behind the first */
	if (!send_ack(qp, ROXE_OP_RC_ACKNOWLEDGE, ROXE_AETH_ACK | ROXE_AETH_CREDITS_INVALID,
		      psn, 0))
		return false;
	for (; qp->resp.ack_copies; qp->resp.ack_copies--)
		if (!send_ack_as(qp, ROXE_OP_RC_ACKNOWLEDGE,
				 ROXE_AETH_ACK | ROXE_AETH_CREDITS_INVALID, psn, 0, true))
			break;	/* out of buffers: the rest is lost, as on a wire */
	if (qp->resp.back && roxe_psn_diff(psn, qp->resp.back_psn) >= 0 &&
	    (!qp->resp.ahead || roxe_psn_diff(psn, qp->resp.ahead_psn) > 0)) {
		qp->resp.ahead = true;
		qp->resp.ahead_psn = psn;
	}
	qp->resp.ack_pending = false;
	return true;
}

static void nak(struct roxe_qp *qp, uint8_t code, uint32_t psn)
{
	roxe_count_nak(qp->stats, code, true);
	send_ack(qp, ROXE_OP_RC_ACKNOWLEDGE, ROXE_AETH_NAK | code, psn, 0);
}

/* A class C error: NAK, complete the receive WQE in progress, enter ERR
 * with the affiliated event IBA 11.6.3.1 gives a responder's error. */
static void fail(struct roxe_qp *qp, uint8_t code, uint32_t psn, enum ibv_wc_status st)
{
	nak(qp, code, psn);
	if (qp->resp.rwqe_valid)
		complete_rwqe(qp, st, IBV_WC_RECV, 0, NULL, 0);
	roxe_qp_to_error(qp, code == ROXE_NAK_INVALID_REQUEST ? IBV_EVENT_QP_REQ_ERR :
			     code == ROXE_NAK_REMOTE_ACCESS ? IBV_EVENT_QP_ACCESS_ERR :
			     IBV_EVENT_QP_FATAL);
}

/* Receiver not ready for psn: the requester sends it again after timer
 * (IBA's RNR timer code); e does not move. */
static void rnr_nak(struct roxe_qp *qp, uint32_t psn, uint8_t timer)
{
	qp->stats->rnr_nak_sent++;
	send_ack(qp, ROXE_OP_RC_ACKNOWLEDGE, ROXE_AETH_RNR_NAK | timer, psn, 0);
}

/* A page of an ODP MR the request needs is not present yet (core/odp.c:
 * roxe.ko faults it in meanwhile): RNR NAK, as a NIC answers its ODP page
 * faults, with the QP's RNR timer, never one longer than
 * ROXE_ODP_RNR_TIMER, a code longer for each further miss in a row
 * (stages.h). Nothing of the request took effect. */
static void page_rnr(struct roxe_qp *qp, uint32_t psn)
{
	uint8_t t = qp->attr.min_rnr_timer;

	if (t == 0 || t > ROXE_ODP_RNR_TIMER)	/* 0: 655 ms, the longest */
		t = ROXE_ODP_RNR_TIMER;
	rnr_nak(qp, psn, t + qp->resp.page_naks);
	if (qp->resp.page_naks < ROXE_ODP_BACKOFF)
		qp->resp.page_naks++;
}

/* Something of the responder's own (a READ response, a UD datagram) waits
 * for a page of an ODP MR: it runs again later (roxe_odp_wait_ns). */
static void page_wait(struct roxe_qp *qp)
{
	qp->resp.page_wait = true;
	qp->resp.page_at = qp->eng->now + roxe_odp_wait_ns(&qp->resp.page_misses);
	roxe_timer_arm(qp);
}

static void owe_ack(struct roxe_qp *qp, uint32_t psn)
{
	qp->resp.ack_pending = true;
	qp->resp.ack_ran = false;
	qp->resp.ack_copies = 0;
	qp->resp.ack_psn = psn;
	roxe_engine_ready(qp->eng, qp);
}

/* Begin answering READ resource r from response PSN psn. */
static void start_read(struct roxe_qp *qp, const struct roxe_rd_res *r, uint32_t psn)
{
	uint32_t skip = (uint32_t)roxe_psn_diff(psn, r->psn) * qp->mtu;
	struct roxe_read_out *o = &qp->resp.read;

	o->active = true;
	o->first_psn = psn;	/* a restarted READ begins with a FIRST again */
	o->last_psn = r->last_psn;
	o->psn = psn;
	o->va = r->va + skip;
	o->rkey = r->rkey;
	o->resid = r->length - (skip < r->length ? skip : r->length);
}

/* Queue a READ/ATOMIC reply behind the others. psn: where a READ starts. */
static bool queue_reply(struct roxe_qp *qp, struct roxe_rd_res *r, uint32_t psn)
{
	if (qp->resp.out_len == ROXE_MAX_RD_ATOMIC)
		return false;
	qp->resp.outq[(qp->resp.out_head + qp->resp.out_len++) % ROXE_MAX_RD_ATOMIC] = r;
	if (qp->resp.out_len == 1 && r->opcode == ROXE_OP_RC_RDMA_READ_REQUEST)
		start_read(qp, r, psn);
	roxe_engine_ready(qp->eng, qp);
	return true;
}

/*
 * A duplicate READ/ATOMIC: the requester went back (go-back-N) and will ask
 * again for everything after it too, or the network duplicated an old
 * request. A reply still queued is answered anyway; otherwise replies
 * queued for later requests are dropped (they come again) and this one
 * goes to the end.
 */
static void requeue_reply(struct roxe_qp *qp, struct roxe_rd_res *r, uint32_t psn)
{
	unsigned i, keep = 0;

	for (i = 0; i < qp->resp.out_len; i++) {
		struct roxe_rd_res *q = qp->resp.outq[(qp->resp.out_head + i) % ROXE_MAX_RD_ATOMIC];

		if (q == r)
			return;
		if (roxe_psn_diff(q->psn, r->psn) < 0)
			keep = i + 1;
	}
	if (keep == 0)
		qp->resp.read.active = false;
	qp->resp.out_len = keep;
	queue_reply(qp, r, psn);
}

static void pop_reply(struct roxe_qp *qp)
{
	struct roxe_rd_res *next;

	qp->resp.out_head = (qp->resp.out_head + 1) % ROXE_MAX_RD_ATOMIC;
	qp->resp.read.active = false;
	if (--qp->resp.out_len == 0)
		return;
	next = qp->resp.outq[qp->resp.out_head];
	if (next->opcode == ROXE_OP_RC_RDMA_READ_REQUEST)
		start_read(qp, next, next->psn);
}

/* Send READ responses for the head of the queue, up to *budget packets.
 * Returns true when that READ is fully answered. A QP whose rate CNPs
 * limited paces its responses as its requests (DCQCN holds the QP's
 * sending, as a NIC's rate limiter does: a READ's data is the responder's
 * to send); held, it waits on its timer (*held). */
static bool send_read_responses(struct roxe_qp *qp, unsigned *budget, bool *held)
{
	struct roxe_read_out *r = &qp->resp.read;

	while (r->active && *budget) {
		bool first = r->psn == r->first_psn, last = r->psn == r->last_psn;
		uint32_t len = r->resid < qp->mtu ? r->resid : qp->mtu;
		struct roxe_frame_hdr h = {
			.pkey = ROXE_DEFAULT_PKEY,
			.dqpn = qp->attr.dest_qp_num,
			.psn = r->psn,
			.syndrome = ROXE_AETH_ACK | ROXE_AETH_CREDITS_INVALID,
			.msn = qp->resp.msn,
		};
		struct roxe_pkt pkt;
		struct roxe_buf *b;
		uint32_t crc;
		int err;

		if (qp->resp.page_wait) {
			*held = true;
			return false;
		}
		if (qp->req.cc.limited && !roxe_pace_ok(qp)) {
			*held = true;
			return false;
		}
		h.opcode = first && last ? ROXE_OP_RC_RDMA_READ_RESPONSE_ONLY :
			   first ? ROXE_OP_RC_RDMA_READ_RESPONSE_FIRST :
			   last ? ROXE_OP_RC_RDMA_READ_RESPONSE_LAST :
			   ROXE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
		b = build(qp, &h, len, &pkt);
		if (!b)
			return false;
		/* Looked up again per packet: the MR may have gone meanwhile.
		 * From a UMEM MR left where it is; else copied and CRCed in one
		 * pass. */
		crc = roxe_icrc_begin(b->data, &pkt);
		if (qp->dev->umem_mr_bytes) {
			bool try = roxe_engine_tx_inplace_ok(qp->eng, qp, b), umem = false;
			const uint8_t *host;

			if (roxe_mr_inplace(qp->dev, qp->pd, qp->qpn, r->rkey, r->va, len,
					    IBV_ACCESS_REMOTE_READ, &host, try ? &crc : NULL,
					    &umem) == 1 &&
			    roxe_engine_tx_inplace(qp->eng, b, &pkt, host, crc))
				goto sealed;
			if (umem)
				qp->eng->stats->tx_umem_copied++;
			crc = roxe_icrc_begin(b->data, &pkt);
		}
		err = roxe_mr_read_icrc(qp->dev, qp->pd, qp->qpn, r->rkey, r->va,
					b->data + pkt.payload_off, len, IBV_ACCESS_REMOTE_READ, &crc);
		if (err) {
			roxe_port_tx_free(qp->eng->port, b, 1);
			if (err == -EAGAIN) {	/* an ODP page: this response waits */
				page_wait(qp);
				*held = true;
				return false;
			}
			fail(qp, ROXE_NAK_REMOTE_ACCESS, r->psn, IBV_WC_LOC_ACCESS_ERR);
			return false;
		}
		qp->resp.page_misses = 0;
		b->len = roxe_frame_seal_icrc(b->data, &pkt, crc);
sealed:
		roxe_pace_sent_frame(qp, b->len);
		roxe_engine_tx_commit_resp(qp->eng, qp, b);
		(*budget)--;
		r->va += len;
		r->resid -= len;
		if (last)
			r->active = false;
		else
			r->psn = roxe_psn_add(r->psn, 1);
	}
	return !r->active;
}

/*
 * Replies leave in PSN order: a READ response or an ATOMIC ACK
 * acknowledges everything before it, so an ACK for a later PSN overtaking
 * them would tell the requester they were lost.
 */
void roxe_responder_send(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	/* READ responses and atomic replies share the turn's budget with
	 * requests (ROXE_TURN_TX_BUDGET); plain ACKs do not. */
	unsigned start = ROXE_TX_BUDGET < e->tx_left ? ROXE_TX_BUDGET : e->tx_left;
	unsigned budget = start;
	bool held = false;

	if (qp->type != IBV_QPT_RC || qp->eng_state < IBV_QPS_RTR || qp->eng_state == IBV_QPS_ERR)
		return;
	while (qp->resp.out_len && budget) {
		struct roxe_rd_res *r = qp->resp.outq[qp->resp.out_head];

		/* An owed ACK older than the head reply goes first. */
		if (qp->resp.ack_pending && roxe_psn_diff(qp->resp.ack_psn, r->psn) < 0)
			send_owed_ack(qp);
		if (r->opcode == ROXE_OP_RC_RDMA_READ_REQUEST) {
			if (!send_read_responses(qp, &budget, &held))
				break;
		} else if (r->opcode == ROXE_OP_RC_FLUSH || r->opcode == ROXE_OP_RC_ATOMIC_WRITE) {
			if (!send_ack(qp, ROXE_OP_RC_RDMA_READ_RESPONSE_ONLY,
				      ROXE_AETH_ACK | ROXE_AETH_CREDITS_INVALID, r->psn, 0))
				break;
			budget--;
		} else {
			if (!send_ack(qp, ROXE_OP_RC_ATOMIC_ACKNOWLEDGE,
				      ROXE_AETH_ACK | ROXE_AETH_CREDITS_INVALID, r->psn,
				      r->atomic_orig))
				break;
			budget--;
		}
		pop_reply(qp);
	}
	e->tx_left -= start - budget;
	if (!qp->resp.out_len && qp->resp.ack_pending)
		send_owed_ack(qp);
	/* more to send next turn; a QP the pacer holds waits for its timer */
	if ((qp->resp.out_len || qp->resp.ack_pending) && !held)
		roxe_engine_ready(qp->eng, qp);
}

/* Take resource r out of the reply queue, if it is there. */
static void unqueue_reply(struct roxe_qp *qp, const struct roxe_rd_res *r)
{
	unsigned i, keep = 0;

	if (!qp->resp.out_len)
		return;
	if (qp->resp.outq[qp->resp.out_head] == r) {
		pop_reply(qp);
		return;
	}
	for (i = 0; i < qp->resp.out_len; i++) {
		struct roxe_rd_res *q = qp->resp.outq[(qp->resp.out_head + i) % ROXE_MAX_RD_ATOMIC];

		if (q != r)
			qp->resp.outq[(qp->resp.out_head + keep++) % ROXE_MAX_RD_ATOMIC] = q;
	}
	qp->resp.out_len = keep;
}

/*
 * A new READ/ATOMIC takes the oldest of the max_dest_rd_atomic resources.
 * If that one is still queued, it is being answered again for a duplicate
 * request that the requester no longer waits for: the requester keeps at
 * most max_rd_atomic READ/ATOMICs outstanding, and the new one is among
 * them. (After a NAK or a timeout the requester asks again for everything
 * from its oldest unanswered READ; the first answer may still reach it,
 * complete that READ and make room for a new request while the repeated
 * one waits here.) Dropping that reply keeps the queue within
 * max_dest_rd_atomic; holding on to it would leave no room for the new
 * request, which is the requester's right. Queued replies and resources
 * both follow PSN order, so the oldest resource, when queued, heads the
 * queue.
 */
static struct roxe_rd_res *new_res(struct roxe_qp *qp)
{
	unsigned n = qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
	struct roxe_rd_res *r = &qp->resp.res[qp->resp.res_next++ % n];

	unqueue_reply(qp, r);
	memset(r, 0, sizeof(*r));
	return r;
}

static struct roxe_rd_res *find_res(struct roxe_qp *qp, uint32_t psn)
{
	for (unsigned i = 0; i < ROXE_MAX_RD_ATOMIC; i++) {
		struct roxe_rd_res *r = &qp->resp.res[i];

		if (r->opcode && roxe_psn_diff(psn, r->psn) >= 0 &&
		    roxe_psn_diff(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/* --- RC ------------------------------------------------------------------------ */
/*
 * Request psn came past a gap (or a further gap behind a stash run): the
 * NAK of the gap sends a go-back-N requester back to the NAKed PSN, and it
 * sends everything up to the highest PSN it had sent again. Until its
 * resend of the highest request seen meanwhile (back_top: in sequence or
 * not; the requester's originals may still come after the NAK) comes as a
 * duplicate, an ACK of the NAKed PSN or later can reach it before its
 * resend does (send_owed_ack): the packet that filled the gap may be the
 * original held back by the network, not the resend, or a stash run may
 * cover the rest.
 */
static void rc_back(struct roxe_qp *qp, uint32_t psn)
{
	if (!qp->resp.back) {
		qp->resp.back = true;
		qp->resp.back_psn = qp->resp.psn;
		qp->resp.back_top = psn;
	} else if (roxe_psn_diff(psn, qp->resp.back_top) > 0) {
		qp->resp.back_top = psn;
	}
}

/*
 * The ACK a duplicate got, sent again while the requester stays quiet
 * after it. A go-back pass ends with the ACK of the last PSN resent, and
 * a requester may depend on that one frame: kernel rxe 6.12's, having
 * taken an earlier ACK of that PSN mid-resend (below), arms no timer and
 * waits for an ACK of exactly that PSN; lost on the wire, the QP waits
 * forever (interop_faults-6.12). An ACK of a PSN the requester has
 * already sent again never runs ahead of its resend, and any requester
 * takes it as a duplicate ACK or, when the first was lost, as the ACK
 * that spares it a retransmit timeout. A request in sequence ends it
 * (rc_request): the requester is not waiting.
 */
static void reack_arm(struct roxe_qp *qp, uint32_t psn)
{
	qp->resp.reack_left = ROXE_REACKS;
	qp->resp.reack_psn = psn;
	qp->resp.reack_at = qp->eng->now + ROXE_REACK_NS;
	roxe_timer_arm(qp);
}

void roxe_responder_reack(struct roxe_qp *qp)
{
	int st = qp->eng_state;

	if (!qp->resp.reack_left)
		return;
	qp->resp.reack_left--;
	qp->resp.reack_at = qp->eng->now +
			    (ROXE_REACK_NS << (ROXE_REACKS - qp->resp.reack_left));
	if (st < IBV_QPS_RTR || st == IBV_QPS_ERR) {
		qp->resp.reack_left = 0;
		return;
	}
	if (!qp->resp.ack_pending)	/* else one goes anyway */
		owe_ack(qp, qp->resp.reack_psn);
}

/*
 * A duplicate SEND or WRITE packet: its ACK was lost, or the requester went
 * back (go-back-N after a NAK or a timeout, a probe). It is acknowledged
 * with its own PSN or, if that is more, the PSN of a stash run's ACK that
 * went since the requester last sent anything new: not with everything the
 * responder holds (rxe's responder: its expected PSN - 1). The ACKs of
 * several in one turn coalesce into the highest.
 *
 * An ACK must not run ahead of a go-back requester's resend. Kernel rxe's
 * completer (6.12: requester and completer share one task and alternate,
 * one packet each) takes an ACK of a message's last PSN that comes while
 * it is still resending that message as progress past it (comp.psn =
 * last + 1) without completing the WQE, which only an ACK of exactly that
 * PSN does from then on. With comp.psn == req.psn it arms no timer, so if
 * that later ACK is lost the QP waits forever (rxe_comp.c: check_psn,
 * COMPST_WRITE_SEND, reset_retry_timer; interop_faults on 6.12). So a
 * duplicate's ACK names what the requester has sent again (its own PSN),
 * never more: the last PSN's ACK is the one after the WQE is resent, and
 * while it is owed the requester's timer runs (a lost ACK before the
 * requester's timeout, its whole message sent again: no ACK runs ahead).
 * Only an ACK sent after a sequence NAK, before the requester's resend has
 * come, can run ahead (rc_back): a stash run's, the first before the
 * requester showed that it goes back (below), or one of a gap that a
 * packet held back by the network filled after the NAK had sent the
 * requester back. Its PSN is repeated for every duplicate that follows
 * (until the requester has sent everything again, rc_back), in a frame of
 * its own for each, as rxe's responder sends one ACK per duplicate: each
 * completes the WQE that the one ahead left hanging, and coalesced into
 * one they would all go with that one frame's loss. A probe (requester.c: the
 * oldest PSN unacknowledged, then the last sent) learns everything the
 * responder holds from the last one's ACK.
 *
 * A duplicate of the first PSN the last stash run executed, before any
 * request past the run, shows that the requester goes back over what the
 * stash ran, where roxe's selective repair sends only the missing PSN and
 * goes on: from then on this QP's stash runs acknowledge nothing ahead of
 * the resends (rc_drain), and an ACK of what it ran that this turn still
 * owes (not sent yet) is taken back; the duplicates bring their own. A
 * request past a run before any such duplicate (rc_request) says the
 * opposite, so a roxe requester that once went back (a timeout, a lost
 * repair) gets its runs acknowledged again after its next repair.
 */
static void rc_duplicate_ack(struct roxe_qp *qp, uint32_t psn)
{
	uint32_t ack = psn;
	bool repeat;

	if (qp->resp.ran && roxe_psn_diff(psn, qp->resp.ran_from) >= 0 &&
	    roxe_psn_diff(psn, qp->resp.ran_to) <= 0) {
		if (qp->resp.ran_open && psn == qp->resp.ran_from) {
			qp->resp.ran_open = false;
			qp->resp.goes_back = true;
		}
		if (qp->resp.ack_pending && qp->resp.ack_ran)
			qp->resp.ack_pending = false;
	}
	if (qp->resp.ahead && roxe_psn_diff(qp->resp.ahead_psn, ack) > 0)
		ack = qp->resp.ahead_psn;
	repeat = ack != psn;
	if (qp->resp.back && psn == qp->resp.back_top) {
		/* the requester has sent everything again: none can run
		 * ahead of it any more */
		qp->resp.back = false;
		qp->resp.ahead = false;
	}
	if (!qp->resp.ack_pending || roxe_psn_diff(ack, qp->resp.ack_psn) > 0)
		owe_ack(qp, ack);
	else if (repeat && ack == qp->resp.ack_psn && qp->resp.ack_copies < ROXE_ACK_COPIES)
		qp->resp.ack_copies++;	/* not coalesced: one frame per duplicate */
	reack_arm(qp, ack);
}

static void rc_duplicate(struct roxe_qp *qp, const struct roxe_frame_hdr *h)
{
	struct roxe_rd_res *r;

	qp->stats->duplicates++;
	switch (h->opcode) {
	case ROXE_OP_RC_RDMA_READ_REQUEST:
	case ROXE_OP_RC_COMPARE_SWAP:
	case ROXE_OP_RC_FETCH_ADD:
	case ROXE_OP_RC_FLUSH:
	case ROXE_OP_RC_ATOMIC_WRITE:
		r = find_res(qp, h->psn);
		/* Answer again only what we recorded for that request. */
		if (!r || r->opcode != h->opcode || r->rkey != h->rkey ||
		    (h->opcode != ROXE_OP_RC_RDMA_READ_REQUEST && r->psn != h->psn))
			return;
		requeue_reply(qp, r, h->psn);
		return;
	default:
		rc_duplicate_ack(qp, h->psn);
		return;
	}
}

/* Is this opcode allowed after what came before (IBA 9.8.3.1)? */
static bool sequence_ok(struct roxe_qp *qp, const struct roxe_pkt *pkt, uint8_t kind)
{
	bool first = pkt->flags & ROXE_OPF_FIRST;

	if (qp->resp.in_msg)
		return !first && kind == qp->resp.in_msg;
	return first;	/* READ, ATOMIC, FLUSH, ATOMIC WRITE: ONLY packets */
}

static bool length_ok(struct roxe_qp *qp, const struct roxe_pkt *pkt)
{
	if (!(pkt->flags & ROXE_OPF_LAST))
		return pkt->payload_len == qp->mtu;	/* FIRST, MIDDLE: exactly one MTU */
	return pkt->payload_len <= qp->mtu;
}

static void rc_send(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		    const struct roxe_frame_hdr *h)
{
	struct roxe_rwqe *rw = &qp->resp.rwqe;
	unsigned flags = 0;
	int err;

	if (!take_rwqe(qp)) {
		rnr_nak(qp, h->psn, qp->attr.min_rnr_timer);
		return;
	}
	if (rw->offset + pkt->payload_len > rw->length) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_LEN_ERR);
		return;
	}
	err = roxe_sge_copy(qp->dev, qp->pd, rw->sge, rw->num_sge, rw->offset,
			    (void *)(frame + pkt->payload_off), pkt->payload_len, ROXE_TO_MR);
	if (err == -EAGAIN) {
		page_rnr(qp, h->psn);
		return;
	}
	if (err) {
		fail(qp, ROXE_NAK_REMOTE_OP_ERR, h->psn, IBV_WC_LOC_PROT_ERR);
		return;
	}
	rw->offset += pkt->payload_len;
	qp->resp.in_msg = ROXE_OPK_SEND;
	if (pkt->flags & ROXE_OPF_LAST) {
		if (pkt->flags & ROXE_HDR_IETH) {
			/* only a fast-registration MR of the QP's PD (rxe),
			 * or a type 2 window bound to this QP */
			if (roxe_key_invalidate(qp->dev, qp->pd, qp->qpn, h->inv_rkey,
						ROXE_LOOKUP_REMOTE)) {
				fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_ACCESS_ERR);
				return;
			}
			flags |= ROXE_UWC_WITH_INV;
		}
		if (pkt->flags & ROXE_HDR_IMMDT)
			flags |= ROXE_UWC_WITH_IMM;
		complete_rwqe(qp, IBV_WC_SUCCESS, IBV_WC_RECV, rw->offset, h, flags);
		qp->resp.in_msg = 0;
		qp->resp.msn++;
	}
	qp->resp.psn = roxe_psn_add(h->psn, 1);
	if (h->ackreq)
		owe_ack(qp, h->psn);
}

static void rc_write(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		     const struct roxe_frame_hdr *h)
{
	bool imm = pkt->flags & ROXE_HDR_IMMDT;
	int err;

	/* A receive WQE for the immediate must exist before data lands. */
	if (imm && !take_rwqe(qp)) {
		rnr_nak(qp, h->psn, qp->attr.min_rnr_timer);
		return;
	}
	if (pkt->flags & ROXE_OPF_FIRST) {
		if (h->dma_len) {
			if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) ||
			    roxe_rkey_check(qp->dev, qp->pd, qp->qpn, h->rkey, h->va, h->dma_len,
					    IBV_ACCESS_REMOTE_WRITE)) {
				fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
				return;
			}
		}
		qp->resp.wr_va = h->va;
		qp->resp.wr_rkey = h->rkey;
		qp->resp.wr_resid = h->dma_len;
		qp->resp.wr_len = h->dma_len;	/* byte_len of an immediate */
	}
	if (pkt->payload_len > qp->resp.wr_resid ||
	    ((pkt->flags & ROXE_OPF_LAST) && pkt->payload_len != qp->resp.wr_resid)) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_LEN_ERR);
		return;
	}
	/* Looked up again per packet: the MR may have gone meanwhile. */
	err = roxe_mr_copy(qp->dev, qp->pd, qp->qpn, qp->resp.wr_rkey, qp->resp.wr_va,
			   (void *)(frame + pkt->payload_off), pkt->payload_len,
			   IBV_ACCESS_REMOTE_WRITE, ROXE_TO_MR);
	if (err == -EAGAIN) {
		page_rnr(qp, h->psn);
		return;
	}
	if (err) {
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return;
	}
	qp->resp.wr_va += pkt->payload_len;
	qp->resp.wr_resid -= pkt->payload_len;
	qp->resp.in_msg = ROXE_OPK_WRITE;
	if (pkt->flags & ROXE_OPF_LAST) {
		qp->resp.in_msg = 0;
		qp->resp.msn++;
		if (imm)
			complete_rwqe(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
				      qp->resp.wr_len, h, ROXE_UWC_WITH_IMM);
	}
	qp->resp.psn = roxe_psn_add(h->psn, 1);
	if (h->ackreq)
		owe_ack(qp, h->psn);
}

static void rc_read(struct roxe_qp *qp, const struct roxe_frame_hdr *h)
{
	uint32_t npsn = h->dma_len ? (h->dma_len + qp->mtu - 1) / qp->mtu : 1;
	struct roxe_rd_res *r;

	if (h->dma_len) {
		if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) ||
		    roxe_rkey_check(qp->dev, qp->pd, qp->qpn, h->rkey, h->va, h->dma_len,
				    IBV_ACCESS_REMOTE_READ)) {
			fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
			return;
		}
	}
	if (h->dma_len > ROXE_MAX_MSG_SZ) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_LEN_ERR);
		return;
	}
	r = new_res(qp);
	r->opcode = h->opcode;
	r->psn = h->psn;
	r->last_psn = roxe_psn_add(h->psn, npsn - 1);
	r->va = h->va;
	r->rkey = h->rkey;
	r->length = h->dma_len;
	qp->resp.psn = roxe_psn_add(h->psn, npsn);
	qp->resp.msn++;
	queue_reply(qp, r, h->psn);
}

/*
 * The 64-bit word an atomic (or ATOMIC WRITE) of h works on, mapped through
 * h's rkey (len: what the RETH asks for), or NULL once answered with a NAK.
 * The host address must be aligned, not only the wire's: the application
 * picks an MR's iova, so an aligned va can map to a misaligned word, and a
 * locked instruction across a cache line (a split lock) stalls every core
 * or traps (mw_test: atomic_misaligned_in_host_is_refused).
 */
static uint64_t *atomic_word(struct roxe_qp *qp, const struct roxe_frame_hdr *h, uint32_t len,
			     uint32_t access, struct roxe_mr_access *acc)
{
	uint64_t *p = roxe_mr_map(qp->dev, qp->pd, qp->qpn, h->rkey, h->va, len, access, acc);

	if (!p) {
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return NULL;
	}
	if ((uintptr_t)p & 7) {
		roxe_mr_access_end(acc);
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_QP_OP_ERR);
		return NULL;
	}
	return p;
}

/* An atomic's roxe_mr_atomic() failed (err): the access ended, and
 * answered: an ODP page not present yet, RNR NAK; else an access error. */
static void atomic_failed(struct roxe_qp *qp, const struct roxe_frame_hdr *h,
			  const struct roxe_mr_access *acc, int err)
{
	roxe_mr_access_end(acc);
	if (err == -EAGAIN)
		page_rnr(qp, h->psn);
	else
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
}

static void rc_atomic(struct roxe_qp *qp, const struct roxe_frame_hdr *h)
{
	struct roxe_mr_access acc;
	struct roxe_rd_res *r;
	uint64_t *p;
	uint64_t orig;
	int err;

	if (h->va & 7) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC)) {
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return;
	}
	p = atomic_word(qp, h, 8, IBV_ACCESS_REMOTE_ATOMIC, &acc);
	if (!p)
		return;
	err = h->opcode == ROXE_OP_RC_COMPARE_SWAP ?
		roxe_mr_atomic(&acc, p, ROXE_ATOMIC_CMP_SWAP, h->compare, h->swap_add, &orig) :
		roxe_mr_atomic(&acc, p, ROXE_ATOMIC_FETCH_ADD, h->swap_add, 0, &orig);
	if (err) {
		atomic_failed(qp, h, &acc, err);
		return;
	}
	if (!roxe_mr_access_ok(&acc)) {	/* invalidated under us */
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return;
	}
	r = new_res(qp);
	r->opcode = h->opcode;
	r->psn = r->last_psn = h->psn;
	r->va = h->va;
	r->rkey = h->rkey;
	r->atomic_orig = orig;
	qp->resp.psn = roxe_psn_add(h->psn, 1);
	qp->resp.msn++;
	queue_reply(qp, r, h->psn);
}

/* A FLUSH or ATOMIC WRITE done: its resource answers it, now and when repeated. */
static void record_iba15(struct roxe_qp *qp, const struct roxe_frame_hdr *h)
{
	struct roxe_rd_res *r = new_res(qp);

	r->opcode = h->opcode;
	r->psn = r->last_psn = h->psn;
	r->va = h->va;
	r->rkey = h->rkey;
	r->length = h->dma_len;
	qp->resp.psn = roxe_psn_add(h->psn, 1);
	qp->resp.msn++;
	queue_reply(qp, r, h->psn);
}

static void rc_atomic_write(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
			    const struct roxe_frame_hdr *h)
{
	struct roxe_mr_access acc;
	uint64_t *p, value;
	int err;

	if (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	p = atomic_word(qp, h, h->dma_len, IBV_ACCESS_REMOTE_WRITE, &acc);
	if (!p)
		return;
	/* the parser let exactly 8 bytes through; the RETH must agree */
	if (h->dma_len != ROXE_ATOMIC_WRITE_LEN || pkt->payload_len != ROXE_ATOMIC_WRITE_LEN) {
		roxe_mr_access_end(&acc);
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_LEN_ERR);
		return;
	}
	memcpy(&value, frame + pkt->payload_off, sizeof(value));
	/* One aligned 64-bit store (IBA A19.4.2), ordered after every
	 * earlier write of this QP: a reader sees all of them first. */
	err = roxe_mr_atomic(&acc, p, ROXE_ATOMIC_WRITE, value, 0, &value);
	if (err) {
		atomic_failed(qp, h, &acc, err);
		return;
	}
	if (!roxe_mr_access_ok(&acc)) {	/* invalidated under us */
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return;
	}
	record_iba15(qp, h);
}

static void rc_flush(struct roxe_qp *qp, const struct roxe_frame_hdr *h)
{
	unsigned need = 0;
	struct roxe_mr_priv *mr;

	if (h->flush_type & ROXE_FLUSH_PLT_GLOBAL)
		need |= ROXE_ACCESS_FLUSH_GLOBAL;
	if (h->flush_type & ROXE_FLUSH_PLT_PERSISTENT)
		need |= ROXE_ACCESS_FLUSH_PERSISTENT;
	if ((qp->attr.qp_access_flags & need) != need) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	if (h->dma_len > ROXE_MAX_MSG_SZ) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_LEN_ERR);
		return;
	}
	/* The whole MR needs no range: only its key and access count. No
	 * roxe MR holds FLUSH_PERSISTENT, so a persistence FLUSH ends here. */
	mr = roxe_mr_lookup(qp->dev, h->rkey, ROXE_LOOKUP_REMOTE);
	if (!mr || roxe_mr_check(mr, qp->pd, h->flush_level == ROXE_FLUSH_SEL_MR ? mr->iova : h->va,
				 h->flush_level == ROXE_FLUSH_SEL_MR ? 0 : h->dma_len, need)) {
		fail(qp, ROXE_NAK_REMOTE_ACCESS, h->psn, IBV_WC_LOC_ACCESS_ERR);
		return;
	}
	/* Global visibility: this engine's stores into the MR are in memory
	 * already; the fence orders them before the response that reports
	 * them done (rxe: wmb()). */
	atomic_thread_fence(memory_order_seq_cst);
	record_iba15(qp, h);
}

static void rc_request(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		       const struct roxe_frame_hdr *h)
{
	const struct roxe_opcode_info *info = roxe_opcode_info(h->opcode);
	int32_t d = roxe_psn_diff(h->psn, qp->resp.psn);

	if (d > 0) {
		qp->stats->out_of_sequence++;
		rc_back(qp, h->psn);
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			nak(qp, ROXE_NAK_PSN_SEQ_ERR, qp->resp.psn);
		}
		roxe_stash_put(qp, frame, pkt, h->psn);	/* unless it is off */
		return;
	}
	if (d < 0) {
		rc_duplicate(qp, h);
		return;
	}
	qp->resp.nak_sent = false;
	qp->resp.reack_left = 0;
	if (qp->resp.ran_open) {
		/* past the last stash run before any resend of it */
		qp->resp.ran_open = false;
		qp->resp.goes_back = false;
	}
	if (qp->resp.back && roxe_psn_diff(h->psn, qp->resp.back_top) > 0)
		qp->resp.back_top = h->psn;	/* an original the NAK did not stop */
	/* the opcode is RC's: rx_frame dropped any other transport's */
	if (!sequence_ok(qp, pkt, info->kind) ||
	    ((info->kind == ROXE_OPK_SEND || info->kind == ROXE_OPK_WRITE) && !length_ok(qp, pkt))) {
		fail(qp, ROXE_NAK_INVALID_REQUEST, h->psn, IBV_WC_LOC_QP_OP_ERR);
		return;
	}
	/* No NAK for "too many READ/ATOMICs": a new one takes the oldest
	 * resource (new_res), as rxe's responder does, so the reply queue
	 * never holds more than max_dest_rd_atomic. */
	switch (info->kind) {
	case ROXE_OPK_SEND:
		rc_send(qp, frame, pkt, h);
		break;
	case ROXE_OPK_WRITE:
		rc_write(qp, frame, pkt, h);
		break;
	case ROXE_OPK_READ_REQ:
		rc_read(qp, h);
		break;
	case ROXE_OPK_ATOMIC:
		rc_atomic(qp, h);
		break;
	case ROXE_OPK_ATOMIC_WRITE:
		rc_atomic_write(qp, frame, pkt, h);
		break;
	case ROXE_OPK_FLUSH:
		rc_flush(qp, h);
		break;
	default:
		break;
	}
	if (qp->resp.psn != h->psn)	/* it ran: no page missed in a row */
		qp->resp.page_naks = 0;
}

/* --- UC --------------------------------------------------------------------------- */
static void uc_request(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		       const struct roxe_frame_hdr *h)
{
	const struct roxe_opcode_info *info = roxe_opcode_info(h->opcode);
	bool first = pkt->flags & ROXE_OPF_FIRST, last = pkt->flags & ROXE_OPF_LAST;
	bool imm = pkt->flags & ROXE_HDR_IMMDT;

	if (info->qpt != ROXE_WQPT_UC)
		return;
	if (h->psn != qp->resp.psn || (qp->resp.in_msg && (first || info->kind != qp->resp.in_msg)) ||
	    (!qp->resp.in_msg && !first)) {
		/* Lost packets: abandon the message, keep its receive WQE. */
		qp->stats->out_of_sequence++;
		qp->resp.in_msg = 0;
		qp->resp.rwqe.offset = 0;
		qp->resp.psn = roxe_psn_add(h->psn, 1);
		if (!first)
			return;
	}
	qp->resp.psn = roxe_psn_add(h->psn, 1);
	if (!length_ok(qp, pkt))
		goto drop;
	if (info->kind == ROXE_OPK_SEND || imm) {
		if (!take_rwqe(qp))
			goto drop;
	}
	if (info->kind == ROXE_OPK_SEND) {
		struct roxe_rwqe *rw = &qp->resp.rwqe;
		int err = -ERANGE;

		if (rw->offset + pkt->payload_len <= rw->length)
			err = roxe_sge_copy(qp->dev, qp->pd, rw->sge, rw->num_sge, rw->offset,
					    (void *)(frame + pkt->payload_off), pkt->payload_len,
					    ROXE_TO_MR);
		/* an ODP page not present yet: the message is lost, as UC
		 * may lose any; its receive WQE stays */
		if (err == -EAGAIN)
			goto drop;
		if (err) {
			complete_rwqe(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, NULL, 0);
			goto drop;
		}
		rw->offset += pkt->payload_len;
		if (last)
			complete_rwqe(qp, IBV_WC_SUCCESS, IBV_WC_RECV, rw->offset, h,
				      imm ? ROXE_UWC_WITH_IMM : 0);
	} else {
		if (first) {
			if (h->dma_len && (!(qp->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE) ||
					   roxe_rkey_check(qp->dev, qp->pd, qp->qpn, h->rkey, h->va,
							   h->dma_len, IBV_ACCESS_REMOTE_WRITE)))
				goto drop;
			qp->resp.wr_va = h->va;
			qp->resp.wr_rkey = h->rkey;
			qp->resp.wr_resid = h->dma_len;
			qp->resp.wr_len = h->dma_len;
		}
		if (pkt->payload_len > qp->resp.wr_resid ||
		    (last && pkt->payload_len != qp->resp.wr_resid))
			goto drop;
		if (roxe_mr_copy(qp->dev, qp->pd, qp->qpn, qp->resp.wr_rkey, qp->resp.wr_va,
				 (void *)(frame + pkt->payload_off), pkt->payload_len,
				 IBV_ACCESS_REMOTE_WRITE, ROXE_TO_MR))
			goto drop;
		qp->resp.wr_va += pkt->payload_len;
		qp->resp.wr_resid -= pkt->payload_len;
		if (last && imm)
			complete_rwqe(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
				      qp->resp.wr_len, h, ROXE_UWC_WITH_IMM);
	}
	qp->resp.in_msg = last ? 0 : info->kind;
	return;
drop:
	qp->resp.in_msg = 0;
	if (qp->resp.rwqe_valid)
		qp->resp.rwqe.offset = 0;
}

/* --- UD ------------------------------------------------------------------------------ */
/* -EAGAIN: a page of the receive buffer (an ODP MR's) is not present yet;
 * the receive WQE stays. Else 0: delivered, or dropped. */
static int ud_deliver(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		      const struct roxe_frame_hdr *h)
{
	struct roxe_rwqe *rw = &qp->resp.rwqe;
	uint8_t grh[40] = { 0 };
	const uint8_t *ip = frame + pkt->l3_off;
	int err;

	if (roxe_opcode_info(h->opcode)->qpt != ROXE_WQPT_UD || h->qkey != qp->attr.qkey)
		return 0;
	if (!take_rwqe(qp))
		return 0;	/* UD has no RNR: the datagram is lost */
	if (40 + pkt->payload_len > rw->length) {
		complete_rwqe(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, h, 0);
		return 0;
	}
	if (pkt->ip_version == 6)
		memcpy(grh, ip, 40);
	else
		memcpy(grh + 20, ip, 20);
	err = roxe_sge_copy(qp->dev, qp->pd, rw->sge, rw->num_sge, 0, grh, 40, ROXE_TO_MR);
	if (!err)
		err = roxe_sge_copy(qp->dev, qp->pd, rw->sge, rw->num_sge, 40,
				    (void *)(frame + pkt->payload_off), pkt->payload_len,
				    ROXE_TO_MR);
	if (err == -EAGAIN)
		return err;
	if (err) {
		complete_rwqe(qp, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, h, 0);
		return 0;
	}
	/* the completion says which header the GRH area holds (the first 20
	 * bytes carry nothing for IPv4): UCX's UD transport finds the
	 * destination address it filters on by this */
	complete_rwqe_sl(qp, IBV_WC_SUCCESS, IBV_WC_RECV, 40 + pkt->payload_len, h,
			 ROXE_UWC_GRH | ((pkt->flags & ROXE_HDR_IMMDT) ? ROXE_UWC_WITH_IMM : 0),
			 ROXE_UWC_SL_ROCE_V2 |
			 (pkt->ip_version == 6 ? ROXE_UWC_SL_IPV6 : ROXE_UWC_SL_IPV4));
	return 0;
}

/*
 * A datagram whose receive buffer waits for an ODP page is held, one per
 * QP (a copy), and delivered when the page comes (roxe_responder_page_retry),
 * or dropped after ROXE_ODP_HOLD_NS, as a lost one. What comes for the
 * QP meanwhile is dropped (UD may lose any), so nothing overtakes it.
 */
static void ud_request(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		       const struct roxe_frame_hdr *h)
{
	struct roxe_ud_held *u;

	if (qp->resp.ud_held || ud_deliver(qp, frame, pkt, h) != -EAGAIN)
		return;
	u = malloc(sizeof(*u) + pkt->frame_len);
	if (!u)
		return;
	u->since = qp->eng->now;
	u->pkt = *pkt;
	memcpy(u->frame, frame, pkt->frame_len);
	qp->resp.ud_held = u;
	page_wait(qp);
}

void roxe_responder_page_retry(struct roxe_qp *qp)
{
	struct roxe_ud_held *u = qp->resp.ud_held;
	int st = qp->eng_state;
	struct roxe_frame_hdr h;

	qp->resp.page_wait = false;
	if (!u) {			/* a READ response: its turn again */
		roxe_engine_ready(qp->eng, qp);
		return;
	}
	qp->resp.ud_held = NULL;
	if ((st == IBV_QPS_RTR || st == IBV_QPS_RTS || st == IBV_QPS_SQD || st == IBV_QPS_SQE)) {
		roxe_frame_hdr_get(u->frame, &u->pkt, &h);
		if (ud_deliver(qp, u->frame, &u->pkt, &h) == -EAGAIN &&
		    qp->eng->now - u->since < ROXE_ODP_HOLD_NS) {
			qp->resp.ud_held = u;
			page_wait(qp);
			return;
		}
	}
	qp->resp.page_misses = 0;
	free(u);
}

/*
 * After a request in sequence: run what the stash holds from the expected
 * PSN on (stash.c), each through rc_request as if it came now, until a
 * PSN is missing or one does not move the expected PSN (an RNR NAK, an
 * error: the requester sends it again). Then acknowledge everything held,
 * and NAK at once a gap that still has frames kept behind it. A run that
 * ends in a READ, atomic or FLUSH is acknowledged by that one's response:
 * a plain ACK bearing a READ's PSN is no IBA answer (kernel rxe, its READ
 * response lost, took it for the READ's and failed the QP: interop_faults
 * read_bw_hsrv, "Failed status 5").
 */
static void rc_drain(struct roxe_qp *qp)
{
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	bool ack = false, gap = false;
	/* what was owed before the run: the request that filled the gap */
	bool owed = qp->resp.ack_pending, owed_ran = qp->resp.ack_ran;
	uint32_t owed_psn = qp->resp.ack_psn, from = qp->resp.psn;

	while (qp->resp.stashed) {
		uint32_t at = qp->resp.psn;
		const uint8_t *f;
		int slot = roxe_stash_take(qp, at, &f, &pkt);

		if (slot < 0) {
			gap = true;
			break;
		}
		roxe_frame_hdr_get(f, &pkt, &h);
		rc_request(qp, f, &pkt, &h);
		roxe_stash_release(qp->eng, slot);
		if (roxe_qp_state(qp) == IBV_QPS_ERR) {
			roxe_stash_drop(qp);
			return;
		}
		if (qp->resp.psn == at)
			break;		/* answered (RNR NAK): it comes again */
		ack = roxe_opcode_info(h.opcode)->kind == ROXE_OPK_SEND ||
		      roxe_opcode_info(h.opcode)->kind == ROXE_OPK_WRITE;
	}
	if (ack)
		owe_ack(qp, roxe_psn_add(qp->resp.psn, (uint32_t)-1));
	if (qp->resp.psn != from) {
		qp->resp.ran = true;
		qp->resp.ran_open = true;
		qp->resp.ran_from = from;
		qp->resp.ran_to = roxe_psn_add(qp->resp.psn, (uint32_t)-1);
		if (qp->resp.goes_back) {
			/* Its resends of these come next, each acknowledged
			 * as a duplicate (rc_duplicate_ack): an ACK now
			 * would run ahead of them. */
			qp->resp.ack_pending = owed;
			qp->resp.ack_ran = owed_ran;
			qp->resp.ack_psn = owed_psn;
		} else if (qp->resp.ack_pending && roxe_psn_diff(qp->resp.ack_psn, from) >= 0) {
			qp->resp.ack_ran = true;
		}
	}
	if (gap && qp->resp.stashed && !qp->resp.nak_sent) {
		qp->resp.nak_sent = true;
		nak(qp, ROXE_NAK_PSN_SEQ_ERR, qp->resp.psn);
	}
}

void roxe_responder(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt)
{
	struct roxe_frame_hdr h;
	int st = qp->eng_state;
	uint32_t expected;

	if (st != IBV_QPS_RTR && st != IBV_QPS_RTS && st != IBV_QPS_SQD && st != IBV_QPS_SQE)
		return;
	roxe_frame_hdr_get(frame, pkt, &h);
	switch (qp->type) {
	case IBV_QPT_RC:
		expected = qp->resp.psn;
		rc_request(qp, frame, pkt, &h);
		if (qp->resp.stashed && qp->resp.psn != expected)
			rc_drain(qp);
		break;
	case IBV_QPT_UC:
		uc_request(qp, frame, pkt, &h);
		break;
	default:
		ud_request(qp, frame, pkt, &h);
		break;
	}
}
