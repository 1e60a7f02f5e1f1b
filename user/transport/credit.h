/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * PSN credit (credit.c): the engine's limit on the PSNs its requesters
 * have outstanding, all QPs together; and in its terms a QP's PSNs in
 * flight and the parts a READ goes out in.
 */
#ifndef ROXE_TRANSPORT_CREDIT_H
#define ROXE_TRANSPORT_CREDIT_H

#include <stdbool.h>
#include <stdint.h>
#include "wire/psn.h"
#include "transport/transport.h"

/* A charge with no answer for this long lapses; looked for at most every
 * quarter of it, and only while a QP waits for credit. */
#define ROXE_CREDIT_HOLD_NS	100000000ull
void roxe_credit_init(struct roxe_engine *e);	/* from its port's ring */
bool roxe_credit_ok(struct roxe_qp *qp, uint32_t n);	/* false: it waits */
bool roxe_credit_low(const struct roxe_engine *e);	/* packets ask for ACKs */
void roxe_credit_sync(struct roxe_qp *qp);	/* req.psn or comp.psn moved */
void roxe_credit_drop(struct roxe_qp *qp);
void roxe_credit_recharge(struct roxe_qp *qp);	/* go-back-N: charge all again */
void roxe_credit_turn(struct roxe_engine *e);
unsigned roxe_credit_check(struct roxe_engine *e);	/* tests: disagreements */

/* PSNs sent and not yet acknowledged (0 while go-back-N runs behind an ACK). */
static inline uint32_t roxe_req_inflight(const struct roxe_qp *qp, uint32_t upto)
{
	int32_t d = roxe_psn_diff(upto, qp->comp.psn);

	return d > 0 ? (uint32_t)d : 0;
}
/*
 * A READ goes out as requests of at most the engine's per-QP credit cap
 * (credit.c) of responses each, in parts aligned from its first byte: the
 * end of the part holding byte off of w, where that request's last
 * response ends. The requester asks for it, the completer expects a LAST
 * response there.
 */
static inline uint32_t roxe_read_part_end(const struct roxe_qp *qp, const struct rxe_send_wqe *w,
					  uint32_t off)
{
	uint64_t part = (uint64_t)qp->eng->credit_qp_cap * qp->mtu;
	uint64_t end = (off / part + 1) * part;

	return end < w->dma.length ? (uint32_t)end : w->dma.length;
}

#endif /* ROXE_TRANSPORT_CREDIT_H */
