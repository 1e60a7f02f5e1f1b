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
#include "transport/transport.h"

void roxe_engine_ready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_engine_unready(struct roxe_engine *e, struct roxe_qp *qp);
void roxe_timer_arm(struct roxe_qp *qp);
void roxe_timer_disarm(struct roxe_qp *qp);
/* The QP's earliest deadline that wants the engine awake to the nanosecond
 * (a pacer's, a stall probe's; the others keep a sleeping engine's
 * millisecond); 0: none. */
uint64_t roxe_timer_fine(const struct roxe_qp *qp);
/* Frames the state machines send: borrow, fill, queue. */
struct roxe_buf *roxe_engine_tx_buf(struct roxe_engine *e);
void roxe_engine_tx_commit(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_ack(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_commit_resp(struct roxe_engine *e, struct roxe_qp *qp, struct roxe_buf *b);
void roxe_engine_tx_flush(struct roxe_engine *e);	/* everything, held ACKs too */
/* What a turn's end sends; rx_idle: the turn received nothing. */
void roxe_engine_tx_turn_end(struct roxe_engine *e, bool rx_idle);

#endif /* ROXE_TRANSPORT_SCHED_H */
