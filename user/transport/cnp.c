// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * RoCE v2 congestion notification, the wire side (annex A17.9.3):
 *  - a frame for a connected QP that arrives with ECN CE (a switch on the
 *    way was congested) makes the QP send its peer's QP a CNP, at most one
 *    per QP per the device's cnp_interval (the notification point);
 *  - a CNP that arrives for a QP is counted and handed to
 *    roxe_cnp_received(), which hands it to the sender's reaction (the
 *    reaction point, DCQCN: roxe_dcqcn_qp_cnp); it never touches the
 *    QP's transport state.
 *
 * A CNP, as ConnectX sends one (roxe_cnp_hdr, roxe_cnp_addr: roxe/frame.h):
 * BTH opcode 0x81, P_Key 0xffff, BECN set, DestQP the peer's QP, PSN 0,
 * then 16 reserved zero bytes and the ICRC; along the QP's path (its UDP
 * source port too: the same ECMP path as its ACKs), DSCP 48, ECN the
 * device's.
 */
#include "transport/transport.h"
#include "transport/cnp.h"
#include "transport/sched.h"
#include "transport/sendctl.h"

/* Build the CNP qp sends its peer into b, described (b->tx); its length
 * or a negative errno (roxe_frame_build). */
int roxe_cnp_build(const struct roxe_qp *qp, struct roxe_buf *b)
{
	static const uint8_t reserved[ROXE_CNP_PAYLOAD_LEN];
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	int len;

	roxe_cnp_addr(&a, &qp->path, qp->dev->ecn);
	roxe_cnp_hdr(&h, qp->attr.dest_qp_num);
	len = roxe_frame_build(b->data, b->cap, &a, &h, reserved, sizeof(reserved), &pkt);
	if (len > 0)
		roxe_engine_tx_desc(b, &a, &h, &pkt);
	return len;
}

/* A CE frame arrived for qp (already validated as the QP's: ICRC, path).
 * Connected QPs only: a UD frame's sender is not a path of the QP. */
void roxe_ecn_ce_rx(struct roxe_qp *qp, bool count)
{
	struct roxe_engine *e = qp->eng;
	struct roxe_buf *b;
	int len;

	if (count)		/* the XDP program did not see it */
		qp->stats->ecn_marked++;
	if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC)
		return;
	if (qp->eng_state < IBV_QPS_RTR || qp->eng_state == IBV_QPS_ERR)
		return;
	/* One per interval: N marks back to back make one CNP. cnp_last is
	 * 0 before the first, and e->now is far past 0 by then. */
	if (qp->cnp_last && e->now - qp->cnp_last < qp->dev->cnp_interval_ns)
		return;
	b = roxe_engine_tx_buf(e);
	if (!b)
		return;		/* no buffer: the next mark tries again */
	len = roxe_cnp_build(qp, b);
	if (len < 0) {
		roxe_port_tx_free(e->port, b, 1);
		return;
	}
	b->len = (uint32_t)len;
	qp->cnp_last = e->now;
	qp->stats->cnp_sent++;
	roxe_engine_tx_commit(e, qp, b);
}

/*
 * Where a valid CNP for a known QP lands: the reaction point. The CNP is
 * the QP's (ICRC right, from the QP's path, a connected QP past RTR) and
 * counted; it says nothing about the QP's transport: no PSN, no ACK, no
 * state, no completion change because of it. The rate reaction (DCQCN)
 * goes here.
 */
void roxe_cnp_received(struct roxe_qp *qp)
{
	qp->stats->cnp_received++;
	roxe_dcqcn_qp_cnp(qp);		/* the reaction point: requester.c */
}

/* A CNP frame for qp: checks that rx_frame's general ones (parser: exact
 * length BTH + 16 + ICRC, no pad; ICRC; the path's addresses) leave to
 * the QP: a connected QP with a path. */
void roxe_cnp_rx(struct roxe_qp *qp)
{
	if (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC)
		return;
	if (qp->eng_state < IBV_QPS_RTR || qp->eng_state == IBV_QPS_ERR)
		return;
	roxe_cnp_received(qp);
}
