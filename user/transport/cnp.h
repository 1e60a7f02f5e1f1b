/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ECN marks in, CNPs out and in (cnp.c; RoCE v2 annex A17.9.3): the wire
 * side of congestion notification; sendctl.h has the rate it cuts.
 */
#ifndef ROXE_TRANSPORT_CNP_H
#define ROXE_TRANSPORT_CNP_H

#include <stdbool.h>
#include <stddef.h>
#include "transport/transport.h"

int roxe_cnp_build(const struct roxe_qp *qp, struct roxe_buf *b);
void roxe_ecn_ce_rx(struct roxe_qp *qp, bool count);	/* count: XDP did not */
void roxe_cnp_rx(struct roxe_qp *qp);
void roxe_cnp_received(struct roxe_qp *qp);	/* a valid CNP: the reaction point */

#endif /* ROXE_TRANSPORT_CNP_H */
