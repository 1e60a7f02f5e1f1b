/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The hand-off (handoff.c; the contract is there): frames one engine
 * hands another, through the receiver's ring.
 */
#ifndef ROXE_TRANSPORT_HANDOFF_H
#define ROXE_TRANSPORT_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>
#include "roxe/port.h"
#include "transport/transport.h"

/* No QP sent it (a multicast copy): no RC, UC or UD QP takes it as looped. */
#define ROXE_LOOP_NO_QPN	0xffffffffu
enum roxe_handoff_kind {
	ROXE_HO_CHECK,		/* built by this host (loopback): rx_frame's full checks */
	ROXE_HO_VERIFIED,	/* a multicast copy, ICRC checked by the handing engine:
				 * to the receiver's attached QPs only */
};
int roxe_handoff_init(struct roxe_engine *e);
void roxe_handoff_fini(struct roxe_engine *e);
/* Copy frame f (len bytes), sent by QP src_qpn of this host, into e's
 * ring; any thread, never blocks, takes no lock. false: dropped (the ring
 * is full, or holds src_qpn's share) and counted in e's loopback_drop. */
bool roxe_handoff_push(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		       enum roxe_handoff_kind kind, uint32_t src_qpn);
bool roxe_handoff_pending(const struct roxe_engine *e);	/* frames, or drops to count */
/* The engine: take up to budget frames, each through rx. */
unsigned roxe_handoff_rx(struct roxe_engine *e, unsigned budget,
			 void (*rx)(struct roxe_engine *e, const struct roxe_buf *b,
				    enum roxe_handoff_kind kind, uint32_t src_qpn));

#endif /* ROXE_TRANSPORT_HANDOFF_H */
