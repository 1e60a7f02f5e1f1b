/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The completer (completer.c): RC responses and acknowledgements retire
 * send WQEs, oldest first (IBA 9.7.5). Its per-QP state is struct
 * roxe_comp_info (stages.h).
 */
#ifndef ROXE_TRANSPORT_COMPLETER_H
#define ROXE_TRANSPORT_COMPLETER_H

#include <stdint.h>
#include "roxe/parse.h"
#include "transport/transport.h"

uint64_t roxe_rnr_timer_ns(uint8_t code);
void roxe_completer(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt);
void roxe_completer_timeout(struct roxe_qp *qp);

#endif /* ROXE_TRANSPORT_COMPLETER_H */
