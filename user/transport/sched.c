// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What the state machines hand their engine: QPs with something to send
 * (the ready list), retransmit and RNR timers, and frames (the transmit
 * batch). All on the engine's own thread.
 */
#include "transport/transport.h"
#include "transport/sched.h"
#include "transport/handoff.h"
#include "transport/loopback.h"
#include "transport/trace.h"

/* A plain ACK waits at most this long, coalescing with newer ones (see the
 * transmit batch). */
#define ACK_HOLD_NS	10000

/* --- the ready list and timers ----------------------------------------------- */
void roxe_engine_ready(struct roxe_engine *e, struct roxe_qp *qp)
{
	if (qp->on_ready)
		return;
	qp->on_ready = true;
	qp->ready_next = NULL;
	if (e->ready_tail)
		e->ready_tail->ready_next = qp;
	else
		e->ready_head = qp;
	e->ready_tail = qp;
}

void roxe_engine_unready(struct roxe_engine *e, struct roxe_qp *qp)
{
	struct roxe_qp **pp, *prev = NULL;

	if (!qp->on_ready)
		return;
	for (pp = &e->ready_head; *pp; prev = *pp, pp = &(*pp)->ready_next)
		if (*pp == qp) {
			*pp = qp->ready_next;
			if (e->ready_tail == qp)
				e->ready_tail = prev;
			break;
		}
	qp->on_ready = false;
}

/* Call after setting a deadline, armed or not: the engine walks its
 * timers only once the earliest may be due (next_timer), so a deadline
 * earlier than that lowers it. */
uint64_t roxe_timer_fine(const struct roxe_qp *qp)
{
	uint64_t fine = qp->req.pace_wait ? qp->req.pace_deadline : 0;

	if (qp->comp.deadline && qp->comp.stall.at && qp->comp.probe_due &&
	    (!fine || qp->comp.deadline < fine))
		fine = qp->comp.deadline;
	return fine;
}

void roxe_timer_arm(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	uint64_t due = roxe_timer_next(qp, 0), fine = roxe_timer_fine(qp);

	if (fine && (!e->next_fine || fine < e->next_fine))
		e->next_fine = fine;
	if (due && e->next_timer && due < e->next_timer)
		e->next_timer = due;
	if (qp->timer_pprev)
		return;
	qp->timer_next = e->timers;
	if (e->timers)
		e->timers->timer_pprev = &qp->timer_next;
	e->timers = qp;
	qp->timer_pprev = &e->timers;
}

void roxe_timer_disarm(struct roxe_qp *qp)
{
	if (!qp->timer_pprev)
		return;
	*qp->timer_pprev = qp->timer_next;
	if (qp->timer_next)
		qp->timer_next->timer_pprev = qp->timer_pprev;
	qp->timer_pprev = NULL;
	qp->timer_next = NULL;
}

/* --- transmit batch ------------------------------------------------------------
 *
 * Plain ACKs are coalesced: a QP's ACK waits in the batch (tx_held[]) up to
 * ACK_HOLD_NS, or until a turn that receives nothing sends something else,
 * and a newer ACK of the same QP overwrites it in place (ACKs are
 * cumulative). Everything else leaves at the end of the turn that made
 * it; held ACKs stay behind. A stream's receiver then sends an ACK about
 * once per ACK_HOLD_NS instead of once per message (on copy-mode AF_XDP
 * every frame costs its sender the receiver's XDP work too), and a
 * ping-pong's ACK leaves right after the reply (before it for roxe0's
 * QPs: roxe_engine_tx_commit). The requester's retransmit
 * timer is milliseconds: microseconds of ACK delay cost it nothing, but
 * one that waits for its send completion waits for the ACK (perftest's
 * latency tests), hence the reply's turn. Replies whose
 * order matters (READ responses, atomic ACKs, NAKs) release their QP's
 * held ACK to go before them (roxe_engine_tx_commit_resp).
 */

static void held_release(struct roxe_engine *e, unsigned i)
{
	e->tx_held[i]->held_ack_slot = -1;
	e->tx_held[i] = NULL;
}

/* Everything, held ACKs included. */
void roxe_engine_tx_flush(struct roxe_engine *e)
{
	for (unsigned i = 0; i < e->ntx; i++)
		if (e->tx_held[i])
			held_release(e, i);
	if (e->ntx) {
		roxe_port_tx(e->port, e->tx, e->ntx);
		e->ntx = 0;
		roxe_port_flush(e->port);
	}
	e->tx_urgent = false;
	e->ack_held_since = 0;
}

/* All but the held ACKs, which move to the front of the batch; with
 * acks_too, the held ACKs as well, in the same kick, behind the rest. */
static void tx_flush_unheld(struct roxe_engine *e, bool acks_too)
{
	struct roxe_buf out[ROXE_RX_BURST];
	unsigned n = 0, kept = 0;

	for (unsigned i = 0; i < e->ntx; i++) {
		if (!e->tx_held[i]) {
			out[n++] = e->tx[i];
			continue;
		}
		e->tx[kept] = e->tx[i];
		e->tx_held[kept] = e->tx_held[i];
		e->tx_held[kept]->held_ack_slot = (int)kept;
		kept++;
	}
	for (unsigned i = kept; i < e->ntx; i++)
		e->tx_held[i] = NULL;
	if (acks_too) {
		for (unsigned i = 0; i < kept; i++) {
			out[n++] = e->tx[i];
			held_release(e, i);
		}
		kept = 0;
	}
	e->ntx = kept;
	if (!kept)
		e->ack_held_since = 0;	/* the next held ACK starts its own wait */
	if (n) {
		roxe_port_tx(e->port, out, n);
		roxe_port_flush(e->port);
	}
	e->tx_urgent = false;
}

/* End of a turn: what is not a held ACK leaves; held ACKs too once the
 * oldest has waited ACK_HOLD_NS, or with the rest when a turn that
 * received nothing sends something (a ping-pong's reply): a requester
 * waiting for its send completion as well as for the reply (perftest's
 * latency tests) then gets the ACK with the reply, not a hold after. In
 * the reply's kick, behind it: on veth the peer's receive runs inside our
 * sendto(), so the reply reaches the peer first, and one system call
 * carries both. RC SEND 8 B one way, as ib_send_lat, 4.37 us against
 * 5.45 with the ACK in a kick of its own; reply only 2.9 against 3.2,
 * and 5.8 with the ACK ahead of the reply in its kick. roxe0's QPs send
 * it ahead all the same (roxe_engine_tx_commit). A stream's receiver sends nothing else: its
 * ACKs still wait to be coalesced. */
void roxe_engine_tx_turn_end(struct roxe_engine *e, bool rx_idle)
{
	if (!e->ntx)
		return;
	if (e->tx_urgent)
		tx_flush_unheld(e, rx_idle && e->ack_held_since);
	if (e->ntx && e->ack_held_since && e->now - e->ack_held_since >= ACK_HOLD_NS)
		roxe_engine_tx_flush(e);
}

struct roxe_buf *roxe_engine_tx_buf(struct roxe_engine *e)
{
	if (e->ntx == ROXE_RX_BURST)
		roxe_engine_tx_flush(e);
	if (roxe_port_tx_alloc(e->port, &e->tx[e->ntx], 1) == 1)
		return &e->tx[e->ntx];
	roxe_engine_tx_flush(e);	/* completions may free buffers */
	if (roxe_port_tx_alloc(e->port, &e->tx[e->ntx], 1) == 1)
		return &e->tx[e->ntx];
	return NULL;
}

static void count_tx(struct roxe_engine *e, struct roxe_qp *qp, const struct roxe_buf *b)
{
	if (e->dev->trace)
		roxe_trace_frame(e, "tx", b->data, b->len);
	if (qp) {
		qp->stats->tx_packets++;
		qp->stats->tx_bytes += b->len;
	}
}

/*
 * A frame for one of the host's own addresses does not go to the port: it
 * goes, built as for the wire, to the engine that owns its destination QP
 * (loopback.c), now; the buffer goes back to the port. Order per QP holds:
 * all of a QP's frames go the one way or the other. Where it goes is what
 * its builder described (b->tx): the receiving engine checks the frame
 * itself.
 */
static bool tx_looped(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b)
{
	struct roxe_device *to = qp ? roxe_loop_target_qp(qp, b->tx.dgid) :
				 roxe_loop_find(e->dev, b->tx.dgid);

	if (!to)
		return false;
	count_tx(e, qp, b);
	/* a full ring counted it */
	roxe_loop_deliver(to, b->data, b->len, b->tx.dqpn, qp ? qp->qpn : ROXE_LOOP_NO_QPN);
	roxe_port_tx_free(e->port, b, 1);
	return true;
}

/* A plain ACK (b, just borrowed with roxe_engine_tx_buf): held. */
void roxe_engine_tx_commit_ack(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b)
{
	int slot = qp->held_ack_slot;

	if (tx_looped(e, qp, b))
		return;
	count_tx(e, qp, b);
	if (slot >= 0 && e->tx[slot].cap >= b->len) {
		/* the newer ACK replaces the held one */
		memcpy(e->tx[slot].data, b->data, b->len);
		e->tx[slot].len = b->len;
		e->tx[slot].tx = b->tx;
		roxe_port_tx_free(e->port, b, 1);
		qp->stats->tx_packets--;
		qp->stats->tx_bytes -= b->len;
		return;
	}
	qp->held_ack_slot = (int)e->ntx;
	e->tx_held[e->ntx++] = qp;
	if (!e->ack_held_since)
		e->ack_held_since = e->now;
}

/* A responder's frame that must not overtake the QP's held ACK. */
void roxe_engine_tx_commit_resp(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b)
{
	if (qp->held_ack_slot >= 0)
		held_release(e, (unsigned)qp->held_ack_slot);
	roxe_engine_tx_commit(e, qp, b);
}

bool roxe_engine_tx_inplace_ok(struct roxe_engine *e, struct roxe_qp *qp, const struct roxe_buf *b)
{
	return e->port->inplace_len && qp->type == IBV_QPT_RC && !e->dev->trace &&
	       !roxe_loop_target_qp(qp, b->tx.dgid);
}

bool roxe_engine_tx_inplace(struct roxe_engine *e, struct roxe_buf *b, const struct roxe_pkt *pkt,
			    const uint8_t *host, uint32_t crc)
{
	const struct roxe_port *p = e->port;
	uint8_t *tail = b->data + pkt->payload_off;
	static const uint8_t zero[4];

	if (host < p->inplace_base || (uint64_t)(host - p->inplace_base) > p->inplace_len ||
	    pkt->payload_len > p->inplace_len - (uint64_t)(host - p->inplace_base) ||
	    pkt->pad > 3)
		return false;
	crc = roxe_icrc_update(crc, zero, pkt->pad);
	memset(tail, 0, pkt->pad);
	tail += pkt->pad;
	tail[0] = (uint8_t)crc;
	tail[1] = (uint8_t)(crc >> 8);
	tail[2] = (uint8_t)(crc >> 16);
	tail[3] = (uint8_t)(crc >> 24);
	b->ext_off = (uint64_t)(host - p->inplace_base);
	b->ext_len = pkt->payload_len;
	b->hdr_len = (uint16_t)pkt->payload_off;
	b->tail_len = (uint8_t)(pkt->pad + ROXE_ICRC_LEN);
	b->len = pkt->frame_len;
	e->stats->tx_umem_inplace++;
	return true;
}

void roxe_engine_tx_commit(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b)
{
	/* roxe0's QPs (served) keep a NIC's order: a request's held ACK
	 * goes before whatever the QP sends next, the reply the application
	 * posted on seeing the request included. Debian 12's perftest (4.5)
	 * waits for both completions on one channel and sleeps for good when
	 * the reply comes first (ib_send_lat -e; rxe, which completes a
	 * receive before it ACKs, fails it against itself: kmod_interop.sh).
	 * The embedded engine keeps the reply first (above: its one way
	 * 2.4 us, not 3.3). */
	if (qp && qp->served && qp->held_ack_slot >= 0)
		held_release(e, (unsigned)qp->held_ack_slot);
	if (tx_looped(e, qp, b))
		return;
	e->tx_urgent = true;
	count_tx(e, qp, b);
	e->tx_held[e->ntx] = NULL;
	e->ntx++;
}
