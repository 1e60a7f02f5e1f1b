/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the state machines hand their engine (sched.c): QPs with something
 * to send (the ready list), retransmit and RNR timers, and the frames they
 * send (the transmit batch).
 */
#ifndef ROXE_TRANSPORT_SCHED_H
#define ROXE_TRANSPORT_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "transport/transport.h"

void roxe_engine_ready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_engine_unready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_timer_arm(struct roxe_qp *qp);
void roxe_timer_disarm(struct roxe_qp *qp);
/* The earlier of next and the QP's earliest armed deadline (retransmit,
 * RNR or ODP page wait, pacer, repeated ACK); 0: none. */
static inline uint64_t roxe_timer_next(const struct roxe_qp *qp, uint64_t next)
{
	if (qp->comp.deadline && (!next || qp->comp.deadline < next))
		next = qp->comp.deadline;
	if (qp->req.rnr_wait && (!next || qp->req.rnr_deadline < next))
		next = qp->req.rnr_deadline;
	if (qp->req.pace_wait && (!next || qp->req.pace_deadline < next))
		next = qp->req.pace_deadline;
	if (qp->resp.reack_left && (!next || qp->resp.reack_at < next))
		next = qp->resp.reack_at;
	if (qp->resp.page_wait && (!next || qp->resp.page_at < next))
		next = qp->resp.page_at;
	return next;
}
/* The QP's earliest deadline that wants the engine awake to the nanosecond
 * (a pacer's, a stall probe's; the others keep a sleeping engine's
 * millisecond); 0: none. */
uint64_t roxe_timer_fine(const struct roxe_qp *qp);
/* Frames the state machines send: borrow, fill, queue. */
struct roxe_buf *roxe_engine_tx_buf(struct roxe_engine *e);
/* b->tx for the frame built into b (a, h: its pkt): where it goes, as
 * written in its headers. Every frame an engine commits is described. */
static inline void roxe_engine_tx_desc(struct roxe_buf *b, const struct roxe_frame_addr *a,
				       const struct roxe_frame_hdr *h, const struct roxe_pkt *pkt)
{
	memcpy(b->tx.dgid, a->dgid, 16);
	b->tx.dqpn = h->dqpn & ROXE_QPN_MASK;
	b->tx.bth_off = pkt->bth_off;
	b->tx.ttl = a->hop_limit ? a->hop_limit : 64;	/* as roxe_frame_hdrs */
	b->tx.tclass = a->tclass;
}

/* The headers of the frame b carries (roxe_frame_hdrs), described. */
static inline int roxe_engine_tx_hdrs(struct roxe_buf *b, const struct roxe_frame_addr *a,
				      const struct roxe_frame_hdr *h, uint32_t payload_len,
				      struct roxe_pkt *pkt)
{
	int err = roxe_frame_hdrs(b->data, b->cap, a, h, payload_len, pkt);

	if (!err)
		roxe_engine_tx_desc(b, a, h, pkt);
	return err;
}
/* May qp's frame b (headers built) leave in place (roxe_alloc_umem_mr)?
 * The port has an in-place region, an RC QP, a frame for the wire (not
 * looped), no tracing (which reads frames whole). */
bool roxe_engine_tx_inplace_ok(struct roxe_engine *e, struct roxe_qp *qp, const struct roxe_buf *b);
/* b's payload (pkt) is the len bytes at host, crc the ICRC over headers
 * and payload: b becomes an in-place frame, its tail (pad, ICRC) behind
 * the headers. False, b unchanged: host is not in the port's region. */
bool roxe_engine_tx_inplace(struct roxe_engine *e, struct roxe_buf *b, const struct roxe_pkt *pkt,
			    const uint8_t *host, uint32_t crc);
void roxe_engine_tx_commit(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_ack(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_resp(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_flush(struct roxe_engine *e);	/* everything, held ACKs too */
/* What a turn's end sends; rx_idle: the turn received nothing. */
void roxe_engine_tx_turn_end(struct roxe_engine *e, bool rx_idle);

#endif /* ROXE_TRANSPORT_SCHED_H */
