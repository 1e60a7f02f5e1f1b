/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What each stage of the transport keeps per QP, as kernel rxe's
 * rxe_req_info, rxe_comp_info and rxe_resp_info: struct roxe_qp
 * (transport.h) holds them as req, comp and resp. Only the QP's engine
 * thread touches them; each stage's functions are in requester.h,
 * completer.h and responder.h. And the NAK counters, which the responder
 * counts as sent and the completer as received.
 */
#ifndef ROXE_TRANSPORT_STAGES_H
#define ROXE_TRANSPORT_STAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "roxe/limits.h"
#include "roxe/maps.h"
#include "roxe/parse.h"
#include "roxe/queue.h"
#include "roxe/wire.h"
#include "transport/recovery.h"
#include "transport/dcqcn.h"

/* --- the requester (requester.c): send WQEs into request packets --- */
struct roxe_req_info {
	uint32_t	wqe;		/* slot of the next WQE to send from */
	uint32_t	psn;		/* next PSN */
	uint32_t	max_psn;	/* next PSN never sent yet (go-back-N rewinds psn) */
	uint32_t	offset;		/* bytes of that WQE already sent */
	unsigned	rd_atomic;	/* READ/ATOMIC requests in flight */
	uint32_t	credit;		/* PSNs charged to the engine (credit.c) */
	uint32_t	credit_from;	/* charged from here (after a lapse) */
	uint32_t	credit_comp;	/* comp.psn when the charge last moved */
	uint64_t	credit_at;	/* ... and when (e->now) */
	bool		credit_lapsed;	/* PSNs before credit_from not charged */
	unsigned	since_ackreq;
	bool		fenced;		/* waiting for READ/ATOMIC to finish */
	bool		rnr_wait;	/* paused by an RNR NAK, or for an ODP page
					 * (roxe_requester_page_wait), until rnr_deadline */
	uint64_t	rnr_deadline;
	uint8_t		page_misses;	/* ODP pages missed in a row */
	bool		probe;		/* the packet built is a tail probe: AckReq */
	/* RTT: one PSN timed at a time, sent once (Karn) */
	bool		rtt_timing;
	uint32_t	rtt_psn;
	uint64_t	rtt_sent;	/* engine time it left */
	/* DCQCN (dcqcn.h): the rate CNPs set and its pacer; a QP
	 * the pacer holds waits on its timer until pace_deadline */
	struct roxe_dcqcn cc;
	struct roxe_pacer pace;
	bool		pace_wait;
	uint64_t	pace_deadline;
};

/* --- the completer (completer.c): acknowledgements retire send WQEs --- */
struct roxe_comp_info {
	uint32_t	psn;		/* oldest PSN not yet acknowledged */
	unsigned	retry_cnt;	/* left for timeouts / seq NAKs */
	unsigned	rnr_retry;	/* left; 7 means infinite */
	uint64_t	deadline;	/* retransmit timer; 0: disarmed */
	bool		seq_nak_seen;	/* one go-back-N per NAKed PSN */
	uint32_t	seq_nak_psn;
	/* loss recovery (recovery.h) */
	struct roxe_rto	rto;
	struct roxe_cwnd cwnd;
	uint32_t	cwnd_psn;	/* comp.psn the window has counted to */
	bool		probe_due;	/* deadline is the tail probe's */
	struct roxe_stall stall;	/* the window blocked (recovery.h) */
	uint64_t	timer_from;	/* ns: when the probe's timer began */
	struct roxe_repair repair;	/* selective repair (recovery.h) */
};

/* --- the responder (responder.c): incoming requests --- */
/* A receive WQE in progress (SEND spanning several packets). */
struct roxe_rwqe {
	uint64_t		wr_id;
	uint32_t		length;		/* sum of the SGEs */
	uint32_t		num_sge;
	uint32_t		offset;		/* bytes placed so far */
	struct rxe_sge		sge[ROXE_MAX_SGE];
};

/* A READ or ATOMIC request the responder answered: kept so a duplicate
 * (the requester retrying) gets the same answer without re-executing. */
struct roxe_rd_res {
	uint8_t			opcode;		/* 0: slot free */
	uint32_t		psn, last_psn;	/* request PSN, last response PSN */
	uint64_t		va;
	uint32_t		rkey, length;
	uint64_t		atomic_orig;
	uint8_t			atomic_syndrome;
};

/* The responder streams READ responses over several engine turns. */
struct roxe_read_out {
	bool			active;
	uint32_t		psn;		/* next response PSN */
	uint32_t		first_psn, last_psn;
	uint64_t		va;		/* next byte */
	uint32_t		rkey;
	uint32_t		resid;
};

/* At most this many copies of a repeated ACK owed at once (responder.c:
 * rc_duplicate_ack): one per duplicate of a go-back pass, which a window
 * bounds anyway; the bound keeps a flood of forged duplicates from
 * holding the QP's turn. */
#define ROXE_ACK_COPIES		16

/* A duplicate's ACK is sent again this many times while the requester
 * stays quiet after it, the first ROXE_REACK_NS after the duplicate and
 * each later one twice as long after the one before (responder.c:
 * reack_arm): 4, 12 and 28 ms after it, all before a requester's shortest
 * retransmit timeout that a timeout field of 14 (67 ms, rxe's and
 * perftest's) gives. */
#define ROXE_REACKS		3
#define ROXE_REACK_NS		4000000ull

/*
 * A page of roxe.ko's on-demand paging MR that is not present yet
 * (core/odp.c): the module faults it in, in the background, and what
 * needed it waits. The responder answers a request with an RNR NAK whose
 * timer is the QP's, never longer than ROXE_ODP_RNR_TIMER (0.64 ms: the
 * QP's 0 would mean 655 ms); what waits on this side (the requester's
 * packet, a completion's bytes, a READ response, a held UD datagram) is
 * tried again ROXE_ODP_RETRY_NS later, a held datagram for at most
 * ROXE_ODP_HOLD_NS before it is dropped, as a lost one. Each further miss
 * in a row doubles the wait (and steps the RNR timer code up by one), at
 * most ROXE_ODP_BACKOFF times: a page whose fault the application blocks
 * costs its QP's engine one touch per 3.2 ms (RNR NAK: per 5.12 ms at
 * most), not one per 50 us.
 */
#define ROXE_ODP_RNR_TIMER	12
#define ROXE_ODP_RETRY_NS	50000ull
#define ROXE_ODP_HOLD_NS	1000000000ull
#define ROXE_ODP_BACKOFF	6

/* The wait after misses misses in a row (then one more is counted). */
static inline uint64_t roxe_odp_wait_ns(uint8_t *misses)
{
	uint64_t ns = ROXE_ODP_RETRY_NS << *misses;

	if (*misses < ROXE_ODP_BACKOFF)
		(*misses)++;
	return ns;
}

/* A UD datagram held for such a page (responder.c: ud_request). */
struct roxe_ud_held {
	uint64_t	since;		/* first tried (engine time) */
	struct roxe_pkt	pkt;
	uint8_t		frame[];
};

struct roxe_resp_info {
	uint32_t	psn;		/* next PSN expected */
	uint32_t	msn;
	uint8_t		in_msg;		/* 0, ROXE_OPK_SEND or ROXE_OPK_WRITE */
	bool		rwqe_valid;
	struct roxe_rwqe rwqe;
	uint64_t	wr_va;
	uint32_t	wr_rkey;	/* looked up again per packet */
	uint32_t	wr_resid;
	uint32_t	wr_len;		/* the WRITE's DMA length */
	bool		nak_sent;	/* seq NAK already sent for this gap */
	uint32_t	stashed;	/* frames it holds in the engine's stash */
	/* pending output, sent when the engine serves the QP */
	bool		ack_pending;
	bool		ack_ran;	/* the owed ACK covers frames the stash ran */
	uint8_t		ack_syndrome;
	uint8_t		ack_copies;	/* frames of it owed after the first */
	uint32_t	ack_psn;
	/* a sequence NAK of back_psn sent the requester back; it had sent up
	 * to back_top (rc_back); an ACK of ahead_psn went meanwhile, perhaps
	 * ahead of its resend (rc_duplicate_ack) */
	bool		back;
	bool		ahead;
	uint32_t	back_psn, back_top;
	uint32_t	ahead_psn;
	/* The PSNs the last stash run executed (rc_drain); open until the
	 * requester shows what it does next: sends the first of them again
	 * (it goes back, as kernel rxe: no ACK may run ahead of its resends)
	 * or a request past them (it kept on: roxe's selective repair) */
	bool		ran;
	bool		ran_open;
	bool		goes_back;
	uint32_t	ran_from, ran_to;
	/* the last duplicate's ACK, owed again at reack_at while reack_left
	 * (reack_arm); a request in sequence ends it */
	uint8_t		reack_left;
	uint32_t	reack_psn;
	uint64_t	reack_at;
	/* a READ response or ud_held waits for an ODP page until page_at;
	 * ODP pages missed in a row by them, and by requests (page_naks) */
	bool		page_wait;
	uint64_t	page_at;
	struct roxe_ud_held *ud_held;
	uint8_t		page_misses, page_naks;
	struct roxe_rd_res *res;	/* max_dest_rd_atomic slots */
	unsigned	res_next;
	/* READ/ATOMIC replies owed, in PSN order; the head is being
	 * answered (read: its progress). ACKs wait behind them. */
	struct roxe_rd_res *outq[ROXE_MAX_RD_ATOMIC];
	unsigned	out_head, out_len;
	struct roxe_read_out read;
};

/* What of the responder waits for an ODP page, dropped: the QP flushes,
 * resets or goes. */
static inline void roxe_resp_page_drop(struct roxe_resp_info *resp)
{
	free(resp->ud_held);
	resp->ud_held = NULL;
	resp->page_wait = false;
}

/* Count a NAK sent or received, by NAK code, in the QP's roxe_qp_stats. */
static inline void roxe_count_nak(struct roxe_qp_stats *st, uint8_t code, bool sent)
{
	switch (code) {
	case ROXE_NAK_PSN_SEQ_ERR:
		sent ? st->nak_seq_err_sent++ : st->nak_seq_err_rcvd++;
		break;
	case ROXE_NAK_INVALID_REQUEST:
		sent ? st->nak_inv_req_sent++ : st->nak_inv_req_rcvd++;
		break;
	case ROXE_NAK_REMOTE_ACCESS:
		sent ? st->nak_rem_access_sent++ : st->nak_rem_access_rcvd++;
		break;
	default:
		sent ? st->nak_rem_op_sent++ : st->nak_rem_op_rcvd++;
		break;
	}
}

#endif /* ROXE_TRANSPORT_STAGES_H */
