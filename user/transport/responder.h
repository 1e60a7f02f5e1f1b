/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The responder (responder.c): executes incoming requests and answers
 * them (IBA 9.7.5, 9.8, 9.9). Its per-QP state is struct roxe_resp_info
 * (stages.h).
 */
#ifndef ROXE_TRANSPORT_RESPONDER_H
#define ROXE_TRANSPORT_RESPONDER_H

#include <stdint.h>
#include "roxe/parse.h"
#include "transport/transport.h"

void roxe_responder(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_responder_send(struct roxe_qp *qp);			/* ACKs, READ responses */
void roxe_responder_reack(struct roxe_qp *qp);			/* its timer: reack_at */
/* An ODP page waited for (page_wait): its timer, page_at. */
void roxe_responder_page_retry(struct roxe_qp *qp);

#endif /* ROXE_TRANSPORT_RESPONDER_H */
