// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Retiring send WQEs, oldest first: a completion (when signalled or in
 * error), the slot freed for the application, the requester moved past a
 * WQE it was about to send again, and SQD's drain noticed.
 *
 * A WQE that sent frames in place (roxe_alloc_umem_mr) retires for the
 * transport when its ACK comes, but the application sees it complete
 * (the WC, the slot freed) only once the port is done with those frames:
 * the kernel has given their descriptors back, so nothing reads the
 * application's buffer any more. An ACK may well come first: the
 * descriptors of a frame sent twice (a retransmission) are still out when
 * the first copy is acknowledged, a driver returns them when it cleans
 * its ring, copy mode when the skb is freed. The port counts the frames it
 * is done with in the order they were submitted (port.inplace_done), the
 * engine numbers them in the same order as it builds them
 * (inplace_built): a completion waits, with every later one of its QP,
 * until the count reaches its WQE's last frame. Not forever: the ACK says
 * the peer has the data, so what is still out is a copy the kernel lost
 * (a chain it refused is dropped without a completion); after
 * ROXE_HELD_MAX_NS the completion goes, counted (tx_umem_held_expired).
 */
#include "transport/transport.h"
#include "transport/sq.h"

#define ROXE_HELD_MAX_NS	(2ull * 1000000000)
#include "wire/psn.h"

static enum ibv_wc_opcode wc_opcode(uint32_t wr_op)
{
	switch (wr_op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case ROXE_UWR_FLUSH:
		return (enum ibv_wc_opcode)ROXE_UWC_FLUSH;
	case ROXE_UWR_ATOMIC_WRITE:
		return (enum ibv_wc_opcode)ROXE_UWC_ATOMIC_WRITE;
	default:
		return wr_op == ROXE_KABI_WR_REG_MR ? (enum ibv_wc_opcode)ROXE_KABI_WC_REG_MR :
		       IBV_WC_SEND;
	}
}

void roxe_sq_inplace_sent(struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	if (qp->swqe_seq)
		qp->swqe_seq[(uint32_t)(w - qp->swqe) & qp->sq.mask] = ++qp->eng->inplace_built;
}

/* The port done with in-place frames up to seq? It looks at its
 * completions first when not yet. */
static bool inplace_done(struct roxe_engine *e, uint64_t seq)
{
	if (seq <= e->port->inplace_done)
		return true;
	if (e->port->ops->tx_reap)
		e->port->ops->tx_reap(e->port);
	return seq <= e->port->inplace_done;
}

static void held_publish(struct roxe_qp *qp, const struct roxe_held_wc *h)
{
	__atomic_store_n(&qp->sq.buf->consumer_index, h->index, __ATOMIC_RELEASE);
	if (h->signal)
		roxe_cq_post(qp->scq, &h->wc, false);
}

void roxe_sq_held_turn(struct roxe_engine *e)
{
	struct roxe_qp **pp = &e->held_qps, *qp;

	while ((qp = *pp)) {
		while (qp->held_n) {
			const struct roxe_held_wc *h = &qp->held[qp->held_head];

			if (!inplace_done(e, h->seq)) {
				if (e->now - h->since < ROXE_HELD_MAX_NS)
					break;
				e->stats->tx_umem_held_expired++;
			}
			held_publish(qp, h);
			qp->held_head = (qp->held_head + 1) & qp->sq.mask;
			qp->held_n--;
		}
		if (qp->held_n) {
			pp = &qp->held_next;
			continue;
		}
		*pp = qp->held_next;
		qp->on_held = false;
		if (qp->eng_state == IBV_QPS_SQD)
			roxe_qp_sq_drain_check(qp);
	}
}

void roxe_sq_held_drop(struct roxe_qp *qp)
{
	struct roxe_qp **pp;

	qp->held_n = 0;
	if (!qp->on_held)
		return;
	for (pp = &qp->eng->held_qps; *pp; pp = &(*pp)->held_next)
		if (*pp == qp) {
			*pp = qp->held_next;
			break;
		}
	qp->on_held = false;
}

/* Retire the WQE at the head of the send queue. A QP created with
 * sq_sig_all completes every WQE: the stock rxe provider writes the
 * application's send_flags as they are (rxe's completer checks the QP's
 * sq_sig_type too), so a served QP's WQE need not carry SIGNALED. */
void roxe_complete_wqe(struct roxe_qp *qp, struct rxe_send_wqe *w, enum ibv_wc_status st)
{
	uint32_t slot = (uint32_t)(w - qp->swqe) & qp->sq.mask;
	uint64_t seq = qp->swqe_seq ? qp->swqe_seq[slot] : 0;
	bool signal = st != IBV_WC_SUCCESS || qp->sq_sig_all ||
		      (w->wr.send_flags & IBV_SEND_SIGNALED);
	struct ib_uverbs_wc wc = {
		.wr_id = w->wr.wr_id,
		.status = st,
		.opcode = wc_opcode(w->wr.opcode),
		.qp_num = qp->qpn,
	};

	if (st == IBV_WC_SUCCESS)
		wc.byte_len = w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			      w->wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : w->dma.length;
	if (roxe_wqe_is_read_or_atomic(w->wr.opcode) && w->state >= ROXE_WQE_SENDING &&
	    qp->req.rd_atomic && roxe_psn_diff(qp->req.psn, w->first_psn) > 0)
		qp->req.rd_atomic--;
	/* Retired while the requester was about to send it again (an ACK
	 * after go-back-N): the requester moves on past it. */
	if (qp->req.wqe == qp->sq.index) {
		uint32_t next_psn = roxe_psn_add(w->last_psn, 1);

		qp->req.wqe = roxe_queue_next(&qp->sq, qp->req.wqe);
		qp->req.offset = 0;
		if (w->state >= ROXE_WQE_SENDING && roxe_psn_diff(next_psn, qp->req.psn) > 0)
			qp->req.psn = next_psn;
	}
	/* The engine's copy is free for the slot's next WQE. */
	w->state = ROXE_WQE_POSTED;
	if (qp->swqe_seq)
		qp->swqe_seq[slot] = 0;
	if (qp->held && (qp->held_n || (seq && !inplace_done(qp->eng, seq)))) {
		/* held (see top): the engine's index moves on, the ring's
		 * consumer index and the WC follow when it is released */
		struct roxe_held_wc *h = &qp->held[(qp->held_head + qp->held_n) & qp->sq.mask];

		qp->sq.index = roxe_queue_next(&qp->sq, qp->sq.index);
		*h = (struct roxe_held_wc){ .wc = wc, .seq = seq, .since = qp->eng->now,
					    .index = qp->sq.index, .signal = signal };
		qp->held_n++;	/* at most the ring: one per slot */
		if (!qp->on_held) {
			qp->on_held = true;
			qp->held_next = qp->eng->held_qps;
			qp->eng->held_qps = qp;
		}
		return;
	}
	/* Free the slot before the completion shows: an application that
	 * polls it may post again at once, into a queue that must have room. */
	roxe_queue_consume(&qp->sq);
	if (signal)
		roxe_cq_post(qp->scq, &wc, false);
	/* SQD: this may have been the last WQE in progress; the event comes
	 * after its completion. */
	if (qp->eng_state == IBV_QPS_SQD)
		roxe_qp_sq_drain_check(qp);
}

/* The oldest WQE not retired, if it has been (partly) sent. */
struct rxe_send_wqe *roxe_sq_head(struct roxe_qp *qp)
{
	struct rxe_send_wqe *w;

	if (roxe_queue_empty(&qp->sq))
		return NULL;
	w = roxe_sq_wqe(qp, qp->sq.index);
	return w->state >= ROXE_WQE_SENDING ? w : NULL;
}

/* Retire what needs no response: zero-PSN WQEs (LOCAL_INV, BIND_MW, REG_MR) at the head. */
void roxe_completer_progress(struct roxe_qp *qp)
{
	struct rxe_send_wqe *w;

	while ((w = roxe_sq_head(qp)) && w->state == ROXE_WQE_SENT &&
	       roxe_wqe_is_local(w->wr.opcode))
		roxe_complete_wqe(qp, w, (enum ibv_wc_status)w->status);
}

/*
 * SQD: the drain is over once no send WQE is in progress: the oldest one
 * not retired has not been started (WQEs start and retire in order), or
 * there is none. Called when a WQE retires and when SQD is entered.
 */
void roxe_qp_sq_drain_check(struct roxe_qp *qp)
{
	if (qp->eng_state != IBV_QPS_SQD || roxe_qp_state(qp) != IBV_QPS_SQD ||
	    !atomic_load(&qp->sq_draining))
		return;
	if (!roxe_queue_empty(&qp->sq) && roxe_sq_wqe(qp, qp->sq.index)->state != ROXE_WQE_POSTED)
		return;
	/* Once per drain, even if the application leaves SQD meanwhile. */
	if (atomic_exchange(&qp->sq_draining, false) && qp->sqd_notify)
		roxe_async_event(qp->dev, IBV_EVENT_SQ_DRAINED, qp, qp->qpn, qp->tenant);
}
