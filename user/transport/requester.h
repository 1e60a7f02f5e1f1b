/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The requester (requester.c): send WQEs into request packets (IBA
 * 9.7.4). Its per-QP state is struct roxe_req_info (stages.h).
 */
#ifndef ROXE_TRANSPORT_REQUESTER_H
#define ROXE_TRANSPORT_REQUESTER_H

#include <stdbool.h>
#include <stdint.h>
#include "transport/transport.h"

void roxe_requester(struct roxe_qp *qp);			/* send what can be sent */
void roxe_requester_retry(struct roxe_qp *qp, uint32_t psn);	/* go back to psn */
void roxe_requester_probe(struct roxe_qp *qp);	/* the tail probe: recovery.h */
bool roxe_requester_repair(struct roxe_qp *qp, uint32_t psn);	/* psn alone: recovery.h */
/* A page of an ODP MR (core/odp.c) is not present yet: the requester
 * waits (rnr_wait: roxe_odp_wait_ns), its retries spent on nothing. */
void roxe_requester_page_wait(struct roxe_qp *qp);
uint32_t roxe_qp_send_wqe_psns(const struct roxe_qp *qp, const struct rxe_send_wqe *w);

#endif /* ROXE_TRANSPORT_REQUESTER_H */
