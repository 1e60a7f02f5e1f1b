/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The responder's out-of-sequence stash (stash.c; the contract is there):
 * request frames that arrived ahead of a gap, kept per engine until the
 * gap fills.
 */
#ifndef ROXE_TRANSPORT_STASH_H
#define ROXE_TRANSPORT_STASH_H

#include <stdbool.h>
#include <stdint.h>
#include "roxe/parse.h"
#include "transport/transport.h"

/* Frames per engine, and how far ahead of the expected PSN one may be.
 * The frames are shared max-min between the QPs that hold some: one QP
 * alone may take all 512, two keep 256 each, k at least 512 / k each. */
#define ROXE_STASH_SLOTS	512
#define ROXE_STASH_SPAN		1024

void roxe_stash_fini(struct roxe_engine *e);
/* Keep a copy of the request frame with PSN psn, ahead of resp.psn;
 * false: not kept (dropped, as without a stash). */
bool roxe_stash_put(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		    uint32_t psn);
/* The kept frame with PSN psn: its bytes (*frame) and layout, no longer
 * the QP's; a slot number for roxe_stash_release() once run, or -1: none. */
int roxe_stash_take(struct roxe_qp *qp, uint32_t psn, const uint8_t **frame,
		    struct roxe_pkt *pkt);
void roxe_stash_release(struct roxe_engine *e, int slot);
#define ROXE_STASH_FRAME_MAX	(4096 + 128)
void roxe_stash_drop(struct roxe_qp *qp);	/* all the QP's frames */

#endif /* ROXE_TRANSPORT_STASH_H */
