// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Frames: the template every transmit buffer is a copy of (a RoCE v2 RC
 * SEND_ONLY built and sealed once, ICRC included), sent a few copies a
 * kick, and the check of a received frame (headers only: no ICRC, no
 * payload copy).
 */
#include <string.h>
#include "rawperf.h"

/* IP packet bytes of a RoCE v2 RC SEND_ONLY frame with this payload. */
unsigned ip_bytes(bool v4, uint32_t size)
{
	return (v4 ? 20 : 40) + 8 + 12 + ((size + 3) & ~3u) + 4;
}

int tmpl_build(struct tmpl *t, const struct side *me, const struct peer *peer,
		      uint32_t size, uint32_t psn)
{
	struct roxe_frame_addr a = { 0 };
	struct roxe_frame_hdr h = {
		.opcode = ROXE_OP_RC_SEND_ONLY, .pkey = ROXE_DEFAULT_PKEY,
		.dqpn = peer->qpn, .psn = psn & 0xffffff,
	};
	uint8_t payload[MAX_FRAME];
	int len;

	for (uint32_t i = 0; i < size; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	memcpy(a.smac, me->mac, 6);
	memcpy(a.dmac, peer->mac, 6);
	memcpy(a.sgid, me->gid, 16);
	memcpy(a.dgid, peer->gid, 16);
	/* The UDP backend's socket sends from 4791 whatever the frame says:
	 * write what goes on the wire. */
	a.sport = me->port->fixed_sport ? me->port->fixed_sport : roxe_flow_sport(me->qpn, peer->qpn);
	len = roxe_frame_build(t->buf, sizeof(t->buf), &a, &h, payload, size, &t->pkt);
	if (len < 0)
		return len;
	t->len = (uint32_t)len;
	t->psn = h.psn;
	return 0;
}

/* Is this a frame for our QP with the payload we expect? Its PSN in *psn. */
bool frame_ok(const struct roxe_buf *b, uint32_t qpn, uint32_t size, uint32_t *psn)
{
	struct roxe_pkt pkt;
	const struct roxe_bth *bth;

	if (roxe_parse(b->data, b->data + b->len, b->len, &pkt) != ROXE_PKT_OK ||
	    pkt.opcode != ROXE_OP_RC_SEND_ONLY || pkt.payload_len != size)
		return false;
	bth = (const void *)(b->data + pkt.bth_off);
	if (roxe_bth_qpn(bth) != qpn)
		return false;
	if (psn)
		*psn = roxe_bth_psn(bth);
	return true;
}

/* Send n copies of the template in one transmit kick (n <= MAX_LAT_FRAMES);
 * false if no buffers came. */
bool send_copies(struct roxe_port *p, const struct tmpl *t, unsigned n)
{
	struct roxe_buf b[MAX_LAT_FRAMES];
	unsigned got = roxe_port_tx_alloc(p, b, n);

	if (got != n) {
		if (got)
			roxe_port_tx_free(p, b, got);
		roxe_port_flush(p);	/* reaps completions */
		if (roxe_port_tx_alloc(p, b, n) != n)
			return false;
	}
	for (unsigned i = 0; i < n; i++) {
		memcpy(b[i].data, t->buf, t->len);
		b[i].len = t->len;
	}
	roxe_port_tx(p, b, n);
	roxe_port_flush(p);
	return true;
}
