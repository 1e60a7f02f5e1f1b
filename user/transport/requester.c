// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The requester: turns send WQEs into request packets (IBA 9.7.4).
 *
 * It walks the send queue from req.wqe in order:
 *   SEND, WRITE   ceil(length / MTU) packets (one for an empty message),
 *                 FIRST/MIDDLE/LAST or ONLY, one PSN each
 *   READ          one request, which consumes one PSN per response packet
 *   ATOMIC        one request, one PSN
 *   ATOMIC_WRITE  one request with its 8 bytes, one PSN (IBA 1.5)
 *   FLUSH         one request (FETH + RETH), one PSN (IBA 1.5)
 *   LOCAL_INV     no packet: takes effect in order, completes when reached;
 *   BIND_MW       so does a memory window's bind,
 *   REG_MR        and a kernel QP's fast registration (roxe.ko)
 * while the RC window allows: at most the send window's PSNs (recovery.h;
 * never more than ROXE_MAX_INFLIGHT) unacknowledged, checked per packet,
 * at most max_rd_atomic READ/ATOMIC requests outstanding, nothing past a
 * fenced WQE until earlier READ/ATOMICs are done, nothing during an RNR wait,
 * and, once a CNP limited the QP's rate (DCQCN, dcqcn.h), no frame before
 * the pacer lets it go: the QP then waits on its timer, not on a spin.
 * An RC packet also needs the engine's PSN credit (what all its QPs have
 * outstanding, within its receive ring: credit.c); a QP without it waits
 * on the engine's list, not on a spin.
 *
 * Go-back-N (roxe_requester_retry) points req.wqe/req.psn back at the WQE
 * holding a PSN; WQEs already sent keep their PSNs and are simply walked
 * again, from the right offset (a partly answered READ restarts at the
 * first byte not yet received).
 *
 * UC and UD WQEs complete as soon as their last packet is queued; RC WQEs
 * wait for the completer.
 *
 * In SQD it starts no new WQE but finishes the one it is sending. A WQE
 * that fails locally (an lkey that does not cover the data) stops the send
 * queue: RC goes to ERR, UC and UD to SQE (roxe_qp_send_error).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include "transport/transport.h"
#include "transport/requester.h"
#include "transport/credit.h"
#include "transport/mcast.h"
#include "transport/qp_state.h"
#include "transport/sched.h"
#include "transport/sendctl.h"
#include "transport/sq.h"
#include "wire/psn.h"

/* PSNs a WQE takes: responses for a READ, packets otherwise. */
uint32_t roxe_qp_send_wqe_psns(const struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t len = w->dma.length;

	if (roxe_wqe_is_local(w->wr.opcode))
		return 0;
	switch (w->wr.opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case ROXE_UWR_FLUSH:		/* its length is the range flushed */
	case ROXE_UWR_ATOMIC_WRITE:
		return 1;
	default:
		return len ? (len + qp->mtu - 1) / qp->mtu : 1;
	}
}

/* PSNs of a READ's responses for its first end bytes. */
static uint32_t read_psns(const struct roxe_qp *qp, uint32_t end)
{
	return end ? (end + qp->mtu - 1) / qp->mtu : 1;
}

/* LOCAL_INV, BIND_MW and (roxe.ko's kernel QPs) REG_MR: their IBV_WC_*
 * status. */
static uint32_t local_op(struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	if (w->wr.opcode == ROXE_KABI_WR_REG_MR)
		return (uint32_t)roxe_mr_fast_reg(qp->dev, qp->pd, w);
	if (w->wr.opcode == IBV_WR_BIND_MW)
		return (uint32_t)roxe_mw_bind(qp->dev, qp->pd, qp->qpn, w);
	/* as rxe: a key that names no valid fast-registration MR (or bound
	 * type 2 window) of the QP's PD is a local QP operation error */
	if (roxe_key_invalidate(qp->dev, qp->pd, qp->qpn, w->wr.ex.invalidate_rkey,
				ROXE_LOOKUP_LOCAL))
		return IBV_WC_LOC_QP_OP_ERR;
	return IBV_WC_SUCCESS;
}

static uint8_t rc_opcode(uint32_t wr_op, bool first, bool last)
{
	switch (wr_op) {
	case IBV_WR_RDMA_READ:
		return ROXE_OP_RC_RDMA_READ_REQUEST;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return ROXE_OP_RC_COMPARE_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return ROXE_OP_RC_FETCH_ADD;
	case ROXE_UWR_FLUSH:
		return ROXE_OP_RC_FLUSH;
	case ROXE_UWR_ATOMIC_WRITE:
		return ROXE_OP_RC_ATOMIC_WRITE;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			return wr_op == IBV_WR_RDMA_WRITE ? ROXE_OP_RC_RDMA_WRITE_ONLY :
			       ROXE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		if (first)
			return ROXE_OP_RC_RDMA_WRITE_FIRST;
		if (!last)
			return ROXE_OP_RC_RDMA_WRITE_MIDDLE;
		return wr_op == IBV_WR_RDMA_WRITE ? ROXE_OP_RC_RDMA_WRITE_LAST :
		       ROXE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
	default:	/* SEND, SEND_WITH_IMM, SEND_WITH_INV */
		if (first && !last)
			return ROXE_OP_RC_SEND_FIRST;
		if (!last)
			return ROXE_OP_RC_SEND_MIDDLE;
		if (wr_op == IBV_WR_SEND_WITH_IMM)
			return first ? ROXE_OP_RC_SEND_ONLY_WITH_IMMEDIATE :
			       ROXE_OP_RC_SEND_LAST_WITH_IMMEDIATE;
		if (wr_op == IBV_WR_SEND_WITH_INV)
			return first ? ROXE_OP_RC_SEND_ONLY_WITH_INVALIDATE :
			       ROXE_OP_RC_SEND_LAST_WITH_INVALIDATE;
		return first ? ROXE_OP_RC_SEND_ONLY : ROXE_OP_RC_SEND_LAST;
	}
}

static uint8_t req_opcode(enum ibv_qp_type t, uint32_t wr_op, bool first, bool last)
{
	if (t == IBV_QPT_UD)
		return wr_op == IBV_WR_SEND_WITH_IMM ? ROXE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
		       ROXE_OP_UD_SEND_ONLY;
	/* UC opcodes are the RC ones with bit 5 set (IBA table 35). */
	return rc_opcode(wr_op, first, last) | (t == IBV_QPT_UC ? 0x20 : 0);
}

/*
 * UD: where the datagram goes, and from which of the port's own addresses;
 * IBV_WC_SUCCESS, or the status the WQE fails with (as rxe, whose
 * requester fails a WQE whose AV it cannot get with LOC_QP_OP_ERR).
 *
 * A served application's WQE names an AH by number (the stock rxe provider
 * does so whenever the kernel hands out AH numbers, as roxe.ko does): the
 * addressing is what ib_core resolved when the AH was created, provided
 * the AH is in the QP's PD. The address vector such a WQE may also carry is
 * the application's own writing and is never read: ah_num 0 fails, rather
 * than sending from a source or to a MAC the application chose.
 * A kernel ULP's WQE (roxe.ko wrote it from ib_core's AH) and an embedded
 * one (roxe_create_ah) carry the vector; an empty source is the device's
 * GID. Whatever the origin, the source must be one of the port's own
 * addresses.
 */
static enum ibv_wc_status ud_addr(struct roxe_qp *qp, const struct rxe_send_wqe *w,
				  struct roxe_frame_addr *a)
{
	struct roxe_device *dev = qp->dev;
	struct roxe_port *port = qp->eng->port;

	/* w is the engine's copy of the WQE (roxe_sq_take): the application
	 * cannot change it under us. */
	memset(a, 0, sizeof(*a));
	if (qp->served && !qp->kernel_ulp) {
		uint32_t num = w->wr.wr.ud.ah_num;
		const struct roxe_served_ah *ah;

		ah = num && num < ROXE_MAX_AH ?
		     atomic_load_explicit(&dev->ahs[num], memory_order_acquire) : NULL;
		if (!ah || ah->pd != qp->pd)
			return IBV_WC_LOC_QP_OP_ERR;
		*a = ah->addr;
	} else {
		const struct rxe_av *av = &w->wr.wr.ud.av;

		memcpy(a->dmac, av->dmac, 6);
		if (av->sgid_addr._sockaddr_in.sin_family == AF_INET)
			roxe_gid_from_v4(a->sgid, av->sgid_addr._sockaddr_in.sin_addr.s_addr);
		else if (av->sgid_addr._sockaddr_in.sin_family == AF_INET6)
			memcpy(a->sgid, &av->sgid_addr._sockaddr_in6.sin6_addr, 16);
		else
			memcpy(a->sgid, dev->gid, 16);
		memcpy(a->dgid, av->grh.dgid.raw, 16);
		a->tclass = av->grh.traffic_class;
		a->hop_limit = av->grh.hop_limit;
		a->flow_label = av->grh.flow_label;
	}
	if (!roxe_dev_is_local(dev, a->sgid))
		return IBV_WC_LOC_QP_OP_ERR;
	a->tclass = (uint8_t)((a->tclass & ~ROXE_ECN_MASK) | dev->ecn);	/* the device's ECN */
	memcpy(a->smac, dev->mac, 6);
	a->vlan = false;
	a->sport = port->fixed_sport ? port->fixed_sport :
		   roxe_flow_sport(qp->qpn, w->wr.wr.ud.remote_qpn);
	return IBV_WC_SUCCESS;
}

/* Ask for an ACK about twice per window, so that the window reopens
 * before it runs dry. */
static uint32_t ackreq_every(const struct roxe_qp *qp)
{
	uint32_t n = qp->comp.cwnd.cwnd / 2;

	return n < 1 ? 1 : n > ROXE_ACKREQ_EVERY ? ROXE_ACKREQ_EVERY : n;
}

/* Would the pacer hold the frame after one of len bytes sent now? */
static bool pace_holds_after(const struct roxe_qp *qp, uint32_t len)
{
	struct roxe_pacer pc = qp->req.pace;

	roxe_pace_sent(&pc, qp->req.cc.rc, len, qp->eng->now);
	return roxe_pace_when(&pc, qp->eng->now) != 0;
}

/* --- one packet: headers, payload, bookkeeping ---------------------------- */
/* Payload bytes of w's packet at offset off: a READ or ATOMIC request
 * carries none, an ATOMIC WRITE its 8 bytes, the rest up to an MTU. */
static uint32_t packet_payload(const struct roxe_qp *qp, const struct rxe_send_wqe *w,
			       uint32_t off)
{
	uint32_t op = w->wr.opcode, len = w->dma.length;

	if (op == ROXE_UWR_ATOMIC_WRITE)
		return ROXE_ATOMIC_WRITE_LEN;
	if (roxe_wqe_is_read_or_atomic(op))
		return 0;
	return len - off < qp->mtu ? len - off : qp->mtu;
}

/* AckReq (RC): on the last packet, a probe, about twice per window, and
 * when low on credit (what holds it must be acknowledged: credit.c). */
static bool want_ackreq(struct roxe_qp *qp, bool last)
{
	bool ackreq = qp->type == IBV_QPT_RC &&
		      (last || qp->req.probe || ++qp->req.since_ackreq >= ackreq_every(qp) ||
		       roxe_credit_low(qp->eng));

	qp->req.probe = false;
	if (ackreq)
		qp->req.since_ackreq = 0;
	return ackreq;
}

/* The BTH's fields. */
static void hdr_bth(struct roxe_qp *qp, const struct rxe_send_wqe *w, bool first, bool last,
		    struct roxe_frame_hdr *h)
{
	uint32_t op = w->wr.opcode;

	h->opcode = req_opcode(qp->type, op, first, last);
	h->se = last && (w->wr.send_flags & IBV_SEND_SOLICITED) &&
		(op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
		 op == IBV_WR_SEND_WITH_INV || op == IBV_WR_RDMA_WRITE_WITH_IMM);
	h->pkey = ROXE_DEFAULT_PKEY;
	h->psn = qp->req.psn;
	h->dqpn = qp->type == IBV_QPT_UD ? w->wr.wr.ud.remote_qpn : qp->attr.dest_qp_num;
	h->ackreq = want_ackreq(qp, last);
}

/* RETH of a READ (one part of it: roxe_read_part_end) or a WRITE's first
 * packet. */
static void hdr_rdma(const struct roxe_qp *qp, const struct rxe_send_wqe *w, uint32_t off,
		     struct roxe_frame_hdr *h)
{
	h->va = w->iova + off;
	h->rkey = w->wr.wr.rdma.rkey;
	h->dma_len = w->wr.opcode == IBV_WR_RDMA_READ ? roxe_read_part_end(qp, w, off) - off :
		     w->dma.length - off;
}

/* AtomicETH of a compare-and-swap or a fetch-and-add. */
static void hdr_atomic(const struct rxe_send_wqe *w, struct roxe_frame_hdr *h)
{
	bool cas = w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP;

	h->va = w->wr.wr.atomic.remote_addr;
	h->rkey = w->wr.wr.atomic.rkey;
	h->swap_add = cas ? w->wr.wr.atomic.swap : w->wr.wr.atomic.compare_add;
	h->compare = cas ? w->wr.wr.atomic.compare_add : 0;
}

/* RETH of an ATOMIC WRITE or a FLUSH, and the FLUSH's FETH: as rxe's
 * requester, a FLUSH's range from iova and dma.length, its R_Key and FETH
 * from wr.flush. */
static void hdr_iba15(const struct rxe_send_wqe *w, struct roxe_frame_hdr *h)
{
	h->va = w->iova;
	if (w->wr.opcode == ROXE_UWR_ATOMIC_WRITE) {
		h->rkey = w->wr.wr.rdma.rkey;
		h->dma_len = ROXE_ATOMIC_WRITE_LEN;
	} else {
		struct roxe_uwr_flush fl = roxe_uwr_flush_get(w);

		h->rkey = fl.rkey;
		h->dma_len = w->dma.length;
		h->flush_type = fl.type;
		h->flush_level = fl.level;
	}
}

/* The extension headers' fields: the opcode's ETH, ImmDt and IETH, and a
 * UD datagram's DETH. */
static void hdr_ext(const struct roxe_qp *qp, const struct rxe_send_wqe *w, uint32_t off,
		    bool first, struct roxe_frame_hdr *h)
{
	uint32_t op = w->wr.opcode;

	if (op == IBV_WR_RDMA_READ ||
	    (first && (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM)))
		hdr_rdma(qp, w, off, h);
	else if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		hdr_atomic(w, h);
	else if (op == ROXE_UWR_ATOMIC_WRITE || op == ROXE_UWR_FLUSH)
		hdr_iba15(w, h);
	h->imm = w->wr.ex.imm_data;
	h->inv_rkey = w->wr.ex.invalidate_rkey;
	if (qp->type == IBV_QPT_UD) {
		/* A Q_Key with the high bit set means "use the QP's own". */
		h->qkey = (int32_t)w->wr.wr.ud.remote_qkey < 0 ? qp->attr.qkey :
			  w->wr.wr.ud.remote_qkey;
		h->src_qpn = qp->qpn;
	}
}

/* A rate-limited RC packet that does not ask for an ACK, in a frame of
 * frame_len bytes, after which the pacer holds the next one: it asks, or
 * the tail probe (2 SRTTs) would take the pacer's wait for a lost tail.
 * The bit goes into the BTH as built (the ICRC is not made yet). */
static void pace_ackreq(struct roxe_qp *qp, struct roxe_frame_hdr *h, uint8_t *frame,
			const struct roxe_pkt *pkt)
{
	if (!qp->req.cc.limited || h->ackreq || qp->type != IBV_QPT_RC ||
	    !pace_holds_after(qp, pkt->frame_len))
		return;
	h->ackreq = true;
	qp->req.since_ackreq = 0;
	frame[pkt->bth_off + offsetof(struct roxe_bth, apsn)] |= (uint8_t)(ROXE_BTH_ACKREQ >> 24);
}

/* The payload of w's packet at offset off into the frame b (headers
 * written: pkt), and the ICRC: 0; -EAGAIN: a page of an ODP MR is not
 * present yet (core/odp.c); else the WQE fails locally. */
static int fill_payload(struct roxe_qp *qp, struct rxe_send_wqe *w, struct roxe_buf *b,
			const struct roxe_pkt *pkt, uint32_t off)
{
	uint8_t *dst = b->data + pkt->payload_off;
	uint32_t payload = pkt->payload_len, crc;
	int err;

	if (w->wr.opcode == ROXE_UWR_ATOMIC_WRITE) {
		/* dma.atomic_wr: within the slot (roxe_qp_check_send_wqe) */
		memcpy(dst, roxe_sq_dma(qp, w)->inline_data, ROXE_ATOMIC_WRITE_LEN);
	} else if (payload && (w->wr.send_flags & IBV_SEND_INLINE)) {
		if (off + payload > qp->sq_slot_inline)
			return -EINVAL;
		memcpy(dst, roxe_sq_dma(qp, w)->inline_data + off, payload);
	} else if (payload) {
		crc = roxe_icrc_begin(b->data, pkt);
		/* from a UMEM MR: left where it is, CRCed where it is; else
		 * only told whether it was one (counted) */
		if (qp->dev->umem_mr_bytes) {
			bool try = roxe_engine_tx_inplace_ok(qp->eng, qp, b), umem = false;
			const uint8_t *host;

			if (roxe_sge_inplace(qp->dev, qp->pd, roxe_sq_dma(qp, w)->sge,
					     roxe_wqe_num_sge(qp, w), off, payload, &host,
					     try ? &crc : NULL, &umem) == 1 &&
			    roxe_engine_tx_inplace(qp->eng, b, pkt, host, crc)) {
				roxe_sq_inplace_sent(qp, w);
				return 0;
			}
			if (umem)
				qp->eng->stats->tx_umem_copied++;
			crc = roxe_icrc_begin(b->data, pkt);
		}
		/* copied from the MR and CRCed in one pass */
		err = roxe_sge_copy_icrc(qp->dev, qp->pd, roxe_sq_dma(qp, w)->sge,
					 roxe_wqe_num_sge(qp, w), off, dst, payload, &crc);
		if (err)
			return err;
		b->len = roxe_frame_seal_icrc(b->data, pkt, crc);
		return 0;
	}
	b->len = roxe_frame_seal(b->data, pkt);
	return 0;
}

void roxe_requester_page_wait(struct roxe_qp *qp)
{
	qp->req.rnr_wait = true;
	qp->req.rnr_deadline = qp->eng->now + roxe_odp_wait_ns(&qp->req.page_misses);
	roxe_timer_arm(qp);
}

/* w's packet at offset off (payload bytes, AckReq as asked) is queued:
 * RTT timing, and the requester moves on. */
static void packet_sent(struct roxe_qp *qp, const struct rxe_send_wqe *w, uint32_t off,
			uint32_t payload, bool ackreq)
{
	/* Time one PSN per round trip: one that asks for an ACK and was never
	 * sent before (Karn: an ACK of a resent PSN may answer either copy). */
	if (ackreq && !qp->req.rtt_timing && qp->req.psn == qp->req.max_psn) {
		qp->req.rtt_timing = true;
		qp->req.rtt_psn = qp->req.psn;
		qp->req.rtt_sent = qp->eng->now;
	}
	if (w->wr.opcode == IBV_WR_RDMA_READ) {
		qp->req.offset = roxe_read_part_end(qp, w, off);
		qp->req.psn = roxe_psn_add(w->first_psn, read_psns(qp, qp->req.offset));
	} else {
		qp->req.psn = roxe_psn_add(qp->req.psn, 1);
		qp->req.offset = off + payload;
	}
	roxe_credit_sync(qp);		/* what it took of the engine's credit */
	if (roxe_psn_diff(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;
}

/* Build and queue the next packet of w. Returns false when no transmit
 * buffer is free (try again next turn), a page of an ODP MR is not
 * present yet (rnr_wait: its timer) or the WQE failed locally. */
static bool send_packet(struct roxe_qp *qp, struct rxe_send_wqe *w)
{
	struct roxe_engine *e = qp->eng;
	uint32_t off = qp->req.offset, payload = packet_payload(qp, w, off);
	bool first = off == 0;
	bool last = roxe_wqe_is_read_or_atomic(w->wr.opcode) || off + payload >= w->dma.length;
	const struct roxe_frame_addr *a = &qp->path;
	struct roxe_frame_hdr h = { 0 };
	struct roxe_frame_addr ud;
	struct roxe_pkt pkt;
	struct roxe_buf *b;
	int err;

	if (qp->type == IBV_QPT_UD) {
		w->status = ud_addr(qp, w, &ud);
		if (w->status != IBV_WC_SUCCESS)
			return false;
		a = &ud;
	}
	b = roxe_engine_tx_buf(e);
	if (!b)
		return false;
	hdr_bth(qp, w, first, last, &h);
	hdr_ext(qp, w, off, first, &h);
	if (roxe_engine_tx_hdrs(b, a, &h, payload, &pkt))
		goto local_error;
	pace_ackreq(qp, &h, b->data, &pkt);
	err = fill_payload(qp, w, b, &pkt, off);
	if (err == -EAGAIN) {	/* an ODP page: the packet waits for it */
		roxe_port_tx_free(e->port, b, 1);
		roxe_requester_page_wait(qp);
		return false;
	}
	if (err)
		goto local_error;
	qp->req.page_misses = 0;
	if (qp->type == IBV_QPT_UD && roxe_gid_is_mcast(ud.dgid))
		roxe_mcast_loop(e, b, &pkt);	/* this host's members */
	roxe_pace_sent_frame(qp, b->len);
	roxe_engine_tx_commit(e, qp, b);
	packet_sent(qp, w, off, payload, h.ackreq);
	return true;

local_error:
	roxe_port_tx_free(e->port, b, 1);
	w->status = IBV_WC_LOC_PROT_ERR;
	return false;
}

/*
 * May the next packet of w (npsn PSNs: a READ request takes its responses')
 * leave now? The pacer first (a limited rate holds every frame, a tail
 * probe's too), then the send window (recovery.h; at most
 * ROXE_MAX_INFLIGHT) caps the PSNs outstanding.
 */
static bool may_send(struct roxe_qp *qp, uint32_t npsn)
{
	/* An ACK may run ahead of a go-back-N pass: nothing is in flight then. */
	uint32_t inflight = roxe_req_inflight(qp, qp->req.psn);
	/* The window: the congestion window, never past the engine's per-QP
	 * share of its PSN credit (credit.c). */
	uint32_t window = qp->comp.cwnd.cwnd < qp->eng->credit_qp_cap ? qp->comp.cwnd.cwnd :
			  qp->eng->credit_qp_cap;

	if (qp->req.cc.limited && !roxe_pace_ok(qp))
		return false;
	if (qp->type != IBV_QPT_RC)
		return true;
	/* A READ part bigger than the window may go alone. */
	if (!inflight || inflight + npsn <= window)
		return true;
	roxe_retrans_stalled(qp);
	return false;
}

/* PSNs the next packet of w takes: a READ request, the responses of its
 * part (the requester's offset is at a response's first byte). */
static uint32_t next_psns(const struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t end;

	if (w->wr.opcode != IBV_WR_RDMA_READ)
		return 1;
	end = roxe_psn_add(w->first_psn, read_psns(qp, roxe_read_part_end(qp, w, qp->req.offset)));
	return (uint32_t)roxe_psn_diff(end, qp->req.psn);
}

/* Room for one more READ/ATOMIC request (max_rd_atomic)? */
static bool rd_atomic_room(const struct roxe_qp *qp)
{
	return qp->req.rd_atomic < (qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1);
}

/* May w start now? Checks the rd_atomic and fence limits. */
static bool may_start(struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	if (qp->type != IBV_QPT_RC)
		return true;
	if ((w->wr.send_flags & IBV_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	if (roxe_wqe_is_read_or_atomic(w->wr.opcode) && !rd_atomic_room(qp))
		return false;
	/* its first packet (a READ: its first part's responses); the rest goes
	 * packet by packet (roxe_requester) */
	return may_send(qp, w->wr.opcode == IBV_WR_RDMA_READ ?
			read_psns(qp, roxe_read_part_end(qp, w, 0)) : 1);
}

/*
 * Send what the QP has posted: every WQE costs the turn's budget, a local
 * one (BIND_MW, LOCAL_INV, REG_MR) that retires at once as much as a
 * packet, so one QP's ring never holds the engine longer than one budget
 * (served_test: hostile_sq_wrap_local_wqes).
 */
void roxe_requester(struct roxe_qp *qp)
{
	struct roxe_engine *e = qp->eng;
	unsigned budget = ROXE_TX_BUDGET < e->tx_left ? ROXE_TX_BUDGET : e->tx_left;
	int st = qp->eng_state;
	uint32_t end;

	if ((st != IBV_QPS_RTS && st != IBV_QPS_SQD) || qp->req.rnr_wait)
		return;
	end = (qp->req.wqe + roxe_sq_untaken(qp)) & qp->sq.mask;
	while (budget && qp->req.wqe != end) {
		struct rxe_send_wqe *w = roxe_sq_take(qp, qp->req.wqe);
		uint32_t op = w->wr.opcode, npsn;

		if (w->state == ROXE_WQE_POSTED) {
			/* SQD: finish what was started, start nothing new. */
			if (st == IBV_QPS_SQD || !may_start(qp, w))
				return;
			/* A served QP's WQE comes straight from the application:
			 * its copy is checked, the ring is not read again. */
			if (qp->served && (w->status = roxe_qp_check_send_wqe(qp, w))) {
				w->state = ROXE_WQE_SENDING;
				roxe_qp_send_error(qp);
				return;
			}
			w->first_psn = qp->req.psn;
			w->last_psn = roxe_psn_add(qp->req.psn, roxe_qp_send_wqe_psns(qp, w) - 1);
			w->state = ROXE_WQE_SENDING;
			qp->req.offset = 0;
			if (roxe_wqe_is_local(op)) {
				w->status = local_op(qp, w);
				if (w->status != IBV_WC_SUCCESS) {
					/* a local error: it completes with its
					 * status, the send queue stops */
					roxe_qp_send_error(qp);
					return;
				}
				w->state = ROXE_WQE_SENT;
				qp->req.wqe = roxe_queue_next(&qp->sq, qp->req.wqe);
				roxe_completer_progress(qp);
				budget--;
				continue;
			}
		} else if (roxe_wqe_is_local(op)) {
			/* Walked again after go-back-N: it already took effect. */
			qp->req.wqe = roxe_queue_next(&qp->sq, qp->req.wqe);
			budget--;
			continue;
		}
		/* the window, packet by packet: an ACK reopens it (rearm);
		 * then the engine's PSN credit (credit.c), last, since a QP
		 * refused it waits on the engine's list */
		npsn = next_psns(qp, w);
		/* a READ's next part is a request of its own */
		if (op == IBV_WR_RDMA_READ && qp->req.offset && w->state == ROXE_WQE_SENDING &&
		    !rd_atomic_room(qp))
			return;
		if (!may_send(qp, npsn))
			return;
		if (qp->type == IBV_QPT_RC && !roxe_credit_ok(qp, npsn))
			return;
		w->state = ROXE_WQE_SENDING;
		if (!send_packet(qp, w)) {
			if (w->status != IBV_WC_SUCCESS) {
				roxe_qp_send_error(qp);
				return;
			}
			/* out of buffers; or an ODP page: its timer */
			if (!qp->req.rnr_wait)
				roxe_engine_ready(qp->eng, qp);
			return;
		}
		if (roxe_wqe_is_read_or_atomic(op))
			qp->req.rd_atomic++;
		budget--;
		/* RFC 6298 5.1: the timer runs while anything is outstanding */
		if (qp->type == IBV_QPT_RC && !qp->comp.deadline && qp->timeout_ns)
			roxe_retrans_timer_start(qp);
		e->tx_left--;
		if (qp->req.offset < w->dma.length &&
		    (op == IBV_WR_RDMA_READ || !roxe_wqe_is_read_or_atomic(op)))
			continue;
		/* Last packet of w queued. */
		w->state = ROXE_WQE_SENT;
		qp->req.wqe = roxe_queue_next(&qp->sq, qp->req.wqe);
		qp->req.offset = 0;
		if (qp->type != IBV_QPT_RC)
			roxe_complete_wqe(qp, w, IBV_WC_SUCCESS);
	}
	if (budget == 0)
		roxe_engine_ready(qp->eng, qp);
}

void roxe_requester_retry(struct roxe_qp *qp, uint32_t psn)
{
	uint32_t slot = qp->sq.index;
	/* WQEs from the oldest up to req.wqe, that one too if it holds a WQE:
	 * counted, not compared against an end slot, which wraps onto the
	 * start when the ring is full (a one-WQE send queue always is). */
	uint32_t n = ((qp->req.wqe - slot) & qp->sq.mask) +
		     (qp->req.wqe != roxe_queue_producer_index(&qp->sq));

	for (; n; n--, slot = roxe_queue_next(&qp->sq, slot)) {
		struct rxe_send_wqe *w = roxe_sq_wqe(qp, slot);
		uint32_t from = (uint32_t)roxe_psn_diff(psn, w->first_psn);

		if (w->state == ROXE_WQE_POSTED)
			break;
		if (roxe_psn_diff(psn, w->first_psn) < 0 || roxe_psn_diff(psn, w->last_psn) > 0)
			continue;
		qp->req.wqe = slot;
		qp->req.psn = psn;
		qp->req.offset = from * qp->mtu;
		if (qp->req.offset > w->dma.length)
			qp->req.offset = w->dma.length;
		/* Every earlier READ/ATOMIC is done (the completer retires
		 * in order); the ones walked again count afresh. */
		qp->req.rd_atomic = 0;
		qp->req.since_ackreq = 0;
		qp->req.rtt_timing = false;	/* Karn: the timed PSN may go again */
		roxe_credit_recharge(qp);	/* req.psn went back: so does the charge */
		qp->stats->retransmits++;
		roxe_engine_ready(qp->eng, qp);
		return;
	}
}

/* Send the packet at psn once more, asking for an ACK, and go on from
 * where the requester was. Not a READ or ATOMIC request (resending one
 * re-executes it: the RTO's go-back covers these), nor without a transmit
 * buffer. One packet goes past a turn's spent budget (ROXE_TURN_TX_BUDGET
 * bounds windows, not this): refused, a repair fell back on go-back-N.
 * Returns whether it went. */
static bool resend_one(struct roxe_qp *qp, uint32_t psn)
{
	struct roxe_engine *e = qp->eng;
	uint32_t wqe = qp->req.wqe, at = qp->req.psn, off = qp->req.offset;
	unsigned rd_atomic = qp->req.rd_atomic, since = qp->req.since_ackreq;
	struct rxe_send_wqe *w;
	bool sent = false;

	roxe_requester_retry(qp, psn);
	w = roxe_sq_wqe(qp, qp->req.wqe);
	if (qp->req.psn == psn && w->state != ROXE_WQE_POSTED &&
	    !roxe_wqe_is_read_or_atomic(w->wr.opcode) && !roxe_wqe_is_local(w->wr.opcode)) {
		uint32_t st = w->state;

		qp->req.probe = true;
		sent = send_packet(qp, w);
		qp->req.probe = false;
		w->state = st;
		w->status = IBV_WC_SUCCESS;	/* a local error shows when it goes again */
		if (sent && e->tx_left)
			e->tx_left--;
	}
	qp->req.wqe = wqe;
	qp->req.psn = at;
	qp->req.offset = off;
	qp->req.rd_atomic = rd_atomic;
	qp->req.since_ackreq = since;
	roxe_credit_sync(qp);
	return sent;
}

/* The selective repair (recovery.h): psn once more, alone, asking for an
 * ACK; the requester goes on where it was. One retransmission. Not while
 * an RNR NAK holds the QP. */
bool roxe_requester_repair(struct roxe_qp *qp, uint32_t psn)
{
	uint64_t n = qp->stats->retransmits;
	bool sent = qp->type == IBV_QPT_RC && !qp->req.rnr_wait && resend_one(qp, psn);

	qp->stats->retransmits = n + sent;
	return sent;
}

/*
 * The tail probe (recovery.h), on the timer's first expiry after progress:
 * the oldest unacknowledged PSN, then the last one sent, each once more
 * with AckReq; the requester goes on where it was. Whatever was lost, the
 * responder answers: the oldest is the packet go-back-N needs next (a
 * responder that lacks it takes it, one that has it answers the duplicate
 * with an ACK: of all it holds (rxe), of that PSN (roxe)), and the last one
 * shows a gap behind it (a NAK), completes a lost tail or, a duplicate
 * too, is acknowledged with everything up to it. The last alone (RFC 8985's probe) finds
 * nothing when the responder has NAKed a gap and that NAK or the resend it
 * asked for was lost: rxe's responder NAKs a gap once, then drops what
 * follows in silence until the missing PSN comes. It counts as one
 * retransmission.
 */
void roxe_requester_probe(struct roxe_qp *qp)
{
	uint32_t last = roxe_psn_add(qp->req.max_psn, ROXE_PSN_MASK);
	uint64_t n = qp->stats->retransmits;
	bool sent;

	if (qp->type != IBV_QPT_RC || roxe_psn_diff(qp->req.max_psn, qp->comp.psn) <= 0)
		return;
	sent = resend_one(qp, qp->comp.psn);
	if (last != qp->comp.psn)
		sent |= resend_one(qp, last);
	qp->stats->retransmits = n + sent;
}
