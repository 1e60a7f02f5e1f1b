/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Loss recovery for the RC requester, as plain arithmetic over two small
 * structs (no QP, no clock): the adaptive retransmission timeout and the
 * send window. requester.c and completer.c feed them; tests drive them
 * directly.
 *
 * What goes on the wire stays IBA go-back-N: these only decide WHEN the
 * requester retransmits (the timer) and HOW MANY PSNs it keeps
 * unacknowledged (the window), which any peer (kernel rxe, hardware RoCE)
 * cannot tell from a slower sender.
 */
#ifndef ROXE_TRANSPORT_RECOVERY_H
#define ROXE_TRANSPORT_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

/* --- retransmission timeout (RFC 6298) ----------------------------------------
 *
 * SRTT/RTTVAR from RTT samples (the caller follows Karn's rule: it samples
 * only PSNs sent once), RTO = SRTT + 4 * RTTVAR, never below
 * ROXE_RTO_MIN_NS, doubled on each expiry, back to the estimate on
 * progress. The QP's configured local ACK timeout (4.096 us * 2^timeout) is
 * the cap: before the first sample the timer is that, as rxe's always is,
 * and it never runs longer. The floor sits well above a sleeping engine's
 * timer resolution (poll() in milliseconds) and the scheduling stalls of a
 * loaded host (measured: a hop starved of CPU holds frames for milliseconds
 * while the RTT samples say 100 us; a 1 ms floor expired hundreds of times
 * a second without any loss): an expiry that merely finds frames queued
 * costs a window and collapses it. The tail probe below recovers the usual
 * stalls far sooner.
 */
#define ROXE_RTO_MIN_NS		10000000ull	/* 10 ms */
#define ROXE_RTO_MAX_BACKOFF	24		/* doublings kept: 2^24 x the floor > IBA's largest timeout */

struct roxe_rto {
	uint64_t	srtt, rttvar;	/* ns; srtt 0: no sample yet */
	unsigned	backoff;	/* expiries since the last progress */
};

void roxe_rto_init(struct roxe_rto *r);
/* An RTT sample, ns (RFC 6298 2.2, 2.3; 0 counts as 1 ns). */
void roxe_rto_sample(struct roxe_rto *r, uint64_t rtt_ns);
void roxe_rto_backoff(struct roxe_rto *r);	/* the timer expired (5.5) */
void roxe_rto_progress(struct roxe_rto *r);	/* new data acknowledged */
/* The timeout now, ns: the estimate backed off, floored, at most cap
 * (the configured timeout; 0: none configured, then no cap). */
uint64_t roxe_rto_ns(const struct roxe_rto *r, uint64_t cap);

/*
 * The tail probe (after RFC 8985's TLP): go-back-N learns of a loss from the
 * NAK a later packet brings, or else from the timer. When the last packets
 * of a burst or their one ACK are lost (the responder coalesces ACKs: a
 * window answered at once gets one), nothing follows to bring a NAK. So the
 * timer's first expiry after progress comes early, at two SRTTs, and sends
 * just the last PSN sent again: a duplicate the responder acknowledges
 * (every IBA responder answers a duplicate request), or, if data is
 * missing, an out-of-sequence packet it NAKs. Either answer comes within
 * an RTT; only then the full RTO. Never below ROXE_PTO_MIN_NS, never past
 * the RTO; no probe before the first RTT sample.
 */
#define ROXE_PTO_MIN_NS		1000000ull	/* 1 ms */

/* The probe timeout for an estimate r whose RTO is rto (0: no probe). */
uint64_t roxe_pto_ns(const struct roxe_rto *r, uint64_t rto);

/* --- send window ------------------------------------------------------------------
 *
 * A congestion-style window in PSNs (packets; a READ takes one per response)
 * on top of IBA's own limits (ROXE_MAX_INFLIGHT, max_rd_atomic). Go-back-N
 * resends everything from a lost PSN, so every PSN in flight beyond what
 * the path holds is a PSN sent twice on each loss: the window keeps about a
 * bandwidth-delay product outstanding and no more.
 *
 * The choice: TCP Reno's AIMD (RFC 5681) in packets. Slow start from
 * ROXE_CWND_INIT (one ACK grows the window by the PSNs it acknowledges) up
 * to ssthresh, then one PSN per window acknowledged; a loss event (sequence
 * NAK, a READ response gap) halves it, once per window of data (NewReno's
 * recovery point: losses below the PSN that was next when the event began
 * belong to that event), but not below ROXE_CWND_INIT: a NAK proves that
 * later packets got through, the path is not down, and the window's first
 * job here is to bound what go-back-N resends, not to find the capacity
 * (RoCE's congestion control proper is DCQCN's rate, #21); halving down to
 * a handful of packets on random loss would leave the pipe empty. A first
 * timeout halves it too (on a loaded host most expiries are stalls, not
 * losses: measured, collapsing to 2 on each halved the clean goodput
 * through a starved hop); a second one with no progress between is an
 * outage and drops it to ROXE_CWND_MIN. AIMD needs nothing from the peer
 * but its ACKs and converges on the path's capacity.
 *
 * The window says how much may be outstanding; a rate pacer (DCQCN, on the
 * peer's CNPs) would say when the next packet may leave. The requester asks
 * both before each packet (requester.c: may_send), so one can sit beside
 * the other.
 */
#define ROXE_CWND_INIT		16
#define ROXE_CWND_MIN		2

struct roxe_cwnd {
	uint32_t	cwnd;		/* PSNs that may be unacknowledged */
	uint32_t	ssthresh;
	uint32_t	acc;		/* PSNs acknowledged toward the next +1 (AI) */
	uint32_t	recover;	/* PSN: losses before it are the current event */
	bool		in_recovery;
	uint32_t	max;		/* the IBA limit above it */
};

void roxe_cwnd_init(struct roxe_cwnd *w, uint32_t max);
/* acked PSNs newly acknowledged up to (not including) una. */
void roxe_cwnd_ack(struct roxe_cwnd *w, uint32_t acked, uint32_t una);
/* A loss at psn, with inflight PSNs outstanding and next the next PSN never
 * sent. Returns whether it began a new loss event (the window halved). */
bool roxe_cwnd_loss(struct roxe_cwnd *w, uint32_t psn, uint32_t inflight, uint32_t next);
/* The retransmission timer expired; again: it expired before too, with
 * no progress since. */
void roxe_cwnd_timeout(struct roxe_cwnd *w, uint32_t inflight, uint32_t next, bool again);

#endif /* ROXE_TRANSPORT_RECOVERY_H */
