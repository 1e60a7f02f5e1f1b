/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The send queue as the engine sees it (sq.c): its own copies of the send
 * WQEs, taking them from the ring, what kind each is, and retiring them
 * oldest first.
 */
#ifndef ROXE_TRANSPORT_SQ_H
#define ROXE_TRANSPORT_SQ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "transport/transport.h"

/* The state of the engine's copy of a send WQE (roxe_qp.swqe[slot].state). */
enum roxe_wqe_state {
	ROXE_WQE_POSTED = 0,		/* not taken from the ring yet (or retired) */
	ROXE_WQE_SENDING,		/* taken; some packets sent */
	ROXE_WQE_SENT,			/* all packets sent, awaiting ACK/response */
};

/* Requests answered by a response of their own, one PSN each but a READ's,
 * that take a responder resource: counted against max_rd_atomic. FLUSH and
 * ATOMIC WRITE are among them (IBA 1.5: answered by a zero-length READ
 * response, replayed from the resource when repeated). */
static inline bool roxe_wqe_is_read_or_atomic(uint32_t op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == ROXE_UWR_FLUSH ||
	       op == ROXE_UWR_ATOMIC_WRITE;
}

/* The public names of the IBA 1.5 opcodes and access bits are the uAPI's. */
_Static_assert(ROXE_WR_FLUSH == ROXE_UWR_FLUSH && ROXE_WR_ATOMIC_WRITE == ROXE_UWR_ATOMIC_WRITE &&
	       ROXE_WC_FLUSH == ROXE_UWC_FLUSH && ROXE_WC_ATOMIC_WRITE == ROXE_UWC_ATOMIC_WRITE,
	       "IBA 1.5 opcodes");

/* WQEs that send nothing: they take effect in order and complete when the
 * requester reaches them. */
static inline bool roxe_wqe_is_local(uint32_t op)
{
	return op == IBV_WR_LOCAL_INV || op == ROXE_KABI_WR_REG_MR || op == IBV_WR_BIND_MW;
}

/* SGEs of a send WQE the engine may read: what its copy says, at most
 * what a slot holds. */
static inline uint32_t roxe_wqe_num_sge(const struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t n = w->dma.num_sge;

	return n < qp->sq_slot_sge ? n : qp->sq_slot_sge;
}

/* The engine's copy of the send WQE in slot: taken or not (state POSTED). */
static inline struct rxe_send_wqe *roxe_sq_wqe(const struct roxe_qp *qp, uint32_t slot)
{
	return &qp->swqe[slot & qp->sq.mask];
}

/* Take the WQE in slot from the ring, if not taken yet: its fixed part is
 * copied once into the engine's copy, which alone is read from then on. */
static inline struct rxe_send_wqe *roxe_sq_take(const struct roxe_qp *qp, uint32_t slot)
{
	struct rxe_send_wqe *w = roxe_sq_wqe(qp, slot);

	if (w->state == ROXE_WQE_POSTED) {
		memcpy(w, roxe_queue_slot(&qp->sq, slot), sizeof(*w));
		w->state = ROXE_WQE_POSTED;
		w->status = IBV_WC_SUCCESS;
	}
	return w;
}

/*
 * Slots the requester may walk this call: those posted when it starts
 * (one read of the application's producer index) and not taken yet. The
 * application may move its index at any time, backwards too; what it posts
 * later comes with its own doorbell, and a producer that appears behind
 * the requester (req.wqe - sq.index taken of the ring) posted nothing new.
 */
static inline uint32_t roxe_sq_untaken(const struct roxe_qp *qp)
{
	uint32_t posted = (roxe_queue_producer_index(&qp->sq) - qp->sq.index) & qp->sq.mask;
	uint32_t taken = (qp->req.wqe - qp->sq.index) & qp->sq.mask;

	return posted > taken ? posted - taken : 0;
}

/* The ring slot behind the engine's copy w: its SGEs and inline data. */
static inline const struct rxe_dma_info *roxe_sq_dma(const struct roxe_qp *qp,
						    const struct rxe_send_wqe *w)
{
	const struct rxe_send_wqe *slot = roxe_queue_slot(&qp->sq, (uint32_t)(w - qp->swqe));

	return &slot->dma;
}

/* The oldest WQE not retired, if it has been (partly) sent. */
struct rxe_send_wqe *roxe_sq_head(struct roxe_qp *qp);
void roxe_complete_wqe(struct roxe_qp *qp, struct rxe_send_wqe *w, enum ibv_wc_status st);
/* w's packet just built left in place: its completion waits for it. */
void roxe_sq_inplace_sent(struct roxe_qp *qp, const struct rxe_send_wqe *w);
/* Completions held for in-place frames the port is now done with: out. */
void roxe_sq_held_turn(struct roxe_engine *e);
/* qp's held completions dropped (reset, destroy), off the engine's list. */
void roxe_sq_held_drop(struct roxe_qp *qp);
void roxe_completer_progress(struct roxe_qp *qp);	/* retire local WQEs at the head */
void roxe_qp_sq_drain_check(struct roxe_qp *qp);	/* SQD: drained yet? */

#endif /* ROXE_TRANSPORT_SQ_H */
