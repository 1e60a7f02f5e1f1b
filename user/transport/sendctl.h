/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A QP's send control (sendctl.c): the retransmission timer, the send
 * window and the rate, tying the QP to the arithmetic of recovery.h and
 * dcqcn.h.
 */
#ifndef ROXE_TRANSPORT_SENDCTL_H
#define ROXE_TRANSPORT_SENDCTL_H

#include <stdbool.h>
#include <stdint.h>
#include "transport/transport.h"

void roxe_recovery_reset(struct roxe_qp *qp);		/* entering RTS */
/* A valid CNP for qp arrived (engine side): DCQCN cuts its rate. */
void roxe_dcqcn_qp_cnp(struct roxe_qp *qp);
void roxe_retrans_timer_start(struct roxe_qp *qp);	/* (re)start it from now */
/* The send window blocked the requester: the stall probe (recovery.h). */
void roxe_retrans_stalled(struct roxe_qp *qp);
/* May a frame of a rate-limited QP leave now? Else it waits on its timer. */
bool roxe_pace_ok(struct roxe_qp *qp);
/* A data frame of len bytes (as on the wire) left a rate-limited QP: the
 * pacer's and DCQCN's byte counter's (requests and READ responses). */
void roxe_pace_sent_frame(struct roxe_qp *qp, uint32_t len);

#endif /* ROXE_TRANSPORT_SENDCTL_H */
