/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Loss recovery for the RC requester, as plain arithmetic over two small
 * structs (no QP, no clock): the adaptive retransmission timeout and the
 * send window. requester.c and completer.c feed them; tests drive them
 * directly.
 *
 * What goes on the wire stays IBA go-back-N: these only decide WHEN the
 * requester retransmits (the timer), HOW MANY PSNs it keeps
 * unacknowledged (the window) and, after a sequence NAK, whether it first
 * resends the NAKed PSN alone (the selective repair), which any peer
 * (kernel rxe, hardware RoCE) cannot tell from a slower sender.
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
 * loaded host, where a hop starved of CPU holds frames for milliseconds
 * while the RTT samples say 100 us (a 1 ms floor expires there hundreds
 * of times a second without any loss): an expiry that merely finds frames
 * queued costs a window and collapses it. The tail probe below recovers
 * the usual stalls far sooner.
 *
 * Even 10 ms is a stall an emulated guest on a busy host reaches on a path
 * that loses nothing. So the estimate's timer is the QP's only on a path
 * that loses: one that went back (a NAK, a READ gap, a timeout) within the
 * last ROXE_PTO_LOSS_MEMORY_NS. A QP that has lost nothing runs the
 * configured timeout, as rxe and hardware RoCE do: its first loss is mostly
 * found by a NAK anyway, and a spurious expiry there would resend a window
 * for nothing. roxe_rto_timer_ns() is that choice; roxe_rto_ns() the
 * estimate.
 */
#define ROXE_RTO_MIN_NS		10000000ull	/* 10 ms */
#define ROXE_RTO_MAX_BACKOFF	24		/* doublings kept: 2^24 x the floor > IBA's largest timeout */

struct roxe_rto {
	uint64_t	srtt, rttvar;	/* ns; srtt 0: no sample yet */
	unsigned	backoff;	/* expiries since the last progress */
	uint64_t	loss_at;	/* ns of the last go-back; 0: none */
};

void roxe_rto_init(struct roxe_rto *r);
/* An RTT sample, ns (RFC 6298 2.2, 2.3; 0 counts as 1 ns). */
void roxe_rto_sample(struct roxe_rto *r, uint64_t rtt_ns);
void roxe_rto_backoff(struct roxe_rto *r);	/* the timer expired (5.5) */
void roxe_rto_progress(struct roxe_rto *r);	/* new data acknowledged */
/* The timeout now, ns: the estimate backed off, floored, at most cap
 * (the configured timeout; 0: none configured, then no cap). */
uint64_t roxe_rto_ns(const struct roxe_rto *r, uint64_t cap);
/* Did the QP go back within ROXE_PTO_LOSS_MEMORY_NS of now? */
bool roxe_rto_lossy(const struct roxe_rto *r, uint64_t now);
/* The retransmission timer to run at now: the estimate's on a lossy QP
 * or with no timeout configured (cap 0), else the configured one (cap). */
uint64_t roxe_rto_timer_ns(const struct roxe_rto *r, uint64_t cap, uint64_t now);

/*
 * The tail probe (after RFC 8985's TLP): go-back-N learns of a loss from the
 * NAK a later packet brings, or else from the timer. When the last packets
 * of a burst or their one ACK are lost (the responder coalesces ACKs: a
 * window answered at once gets one), nothing follows to bring a NAK; nor
 * when a NAK or the resend it asked for is lost (the responder NAKs a gap
 * once, then drops what follows in silence until the missing PSN comes).
 * So the timer's first expiry after progress comes early and sends two
 * PSNs again, not a window (requester.c: roxe_requester_probe): the oldest
 * unacknowledged, the one go-back-N needs next (a responder that lacks it
 * takes it; one that has it answers the duplicate with an ACK, of all it
 * holds (rxe) or of that PSN (roxe): every IBA responder acknowledges a
 * duplicate request), then the last sent (whose ACK, as a duplicate's,
 * covers everything up to it) (a lost tail, or an out-of-sequence packet the responder
 * NAKs). The answers come within an RTT; only then the full RTO. Both:
 * TLP's last PSN alone leaves about one loss in 40 to the RTO at 1 % loss
 * each way, and the oldest sent only after a NAK without progress keeps
 * less goodput at 3 % (docs/benchmark-loss.md). A probe on a stall that
 * lost nothing costs the responder two duplicates.
 *
 * RoCE has no DSACK or timestamps: a probe that finds nothing lost cannot
 * be told from one that recovered a lost ACK, and the responder counts it
 * as a duplicate. A host whose scheduler holds a thread for milliseconds (a
 * loaded machine, an emulated guest) makes a probe at two SRTTs fire
 * without any loss. So the probe waits for what RFC 6298 would call the RTO
 * before its floor, max(2 SRTT, SRTT + 4 RTTVAR), never below
 * ROXE_PTO_MIN_NS, and is armed only on a lossy QP (above): a path that
 * loses gets it, a clean one waits for the configured timeout.
 * Never past the RTO; no probe before the first RTT sample.
 */
#define ROXE_PTO_MIN_NS			1000000ull	/* 1 ms */
#define ROXE_PTO_LOSS_MEMORY_NS		1000000000ull	/* 1 s */

/* The QP went back at now (ns): probes are armed for a while. */
void roxe_rto_loss(struct roxe_rto *r, uint64_t now);
/* The probe timeout at now for an estimate r whose RTO is rto (0: no probe). */
uint64_t roxe_pto_ns(const struct roxe_rto *r, uint64_t rto, uint64_t now);

/*
 * The stall probe. The tail probe's timeout runs from the last progress and
 * follows the smoothed RTT, which a requester that keeps a window in flight
 * inflates with its own queue (at 3 % loss, SRTT 200 to 900 us where a gap
 * takes 40 to 70 us to repair). Once the send window is full nothing more
 * leaves until an answer comes, and what is in flight drains in about a min
 * RTT. So on a lossy QP (above, with an RTT sample), the first time the
 * window blocks the requester after progress, the probe comes
 * ROXE_STALL_PTO_RTTS min RTTs later (the window's estimate), or twice as
 * long as a blocked window usually waits for progress (a moving average,
 * 1/8 a sample) if that is longer, and never sooner than
 * ROXE_STALL_PTO_MIN_NS. Otherwise a lost repair, a lost NAK or the lost
 * answer to a repair holds the full window for the tail probe's millisecond
 * or more, hundreds of times a second at 3 % loss. The usual wait keeps it
 * from firing between the ACKs of a slow link, where a full window is the
 * steady state (1 Gbit/s, an ACK every 16 frames of 4 KiB: 0.5 ms apart):
 * after a few blocks it exceeds their spacing. A needless probe costs its
 * two PSNs, once per progress; the engine wakes for it to the microsecond,
 * as for a pacer.
 */
#define ROXE_STALL_PTO_MIN_NS		200000ull	/* 200 us */
#define ROXE_STALL_PTO_RTTS		4

struct roxe_stall {
	uint64_t	at;		/* ns the window blocked; 0: not since progress */
	uint64_t	usual;		/* ns a blocked window waits for progress */
};

/* The window blocked the requester at now (ns), the path's min RTT being
 * min_rtt (0: none yet): the stall probe's timeout from now. */
uint64_t roxe_stall_begin(struct roxe_stall *s, uint64_t min_rtt, uint64_t now);
/* Progress at now: a stall since roxe_stall_begin is over (its length
 * feeds the usual wait); the next block begins another. */
void roxe_stall_end(struct roxe_stall *s, uint64_t now);

/* --- send window ------------------------------------------------------------------
 *
 * A limit in PSNs (packets; a READ takes one per response) on what may be
 * unacknowledged, on top of IBA's own limits (ROXE_MAX_INFLIGHT,
 * max_rd_atomic). Go-back-N resends everything from a lost PSN: every PSN
 * in flight behind a loss is sent twice. A loss-halving window (Reno)
 * collapses goodput under random loss (halved every few dozen packets at
 * 1 %, regrown one packet per RTT: the pipe runs dry), and loss is no sign
 * of congestion on this path (RoCE's congestion control proper is DCQCN's
 * rate, #21). So the limit follows two estimates, neither cut by an
 * isolated loss:
 *  - the loss interval: the mean PSNs acknowledged between two go-backs
 *    (a sequence NAK, a READ response gap, a retransmission timeout; an
 *    EWMA, 1/4 per sample), 1/ROXE_LOSS_SHARE of it. Go-back-N resends
 *    about a window per loss, so a window of half the loss interval bounds
 *    the resends to about one PSN per two delivered, whatever the loss
 *    rate; without losses (or with rare ones: 0.1 % is 1000 PSNs apart) it
 *    is the IBA limit, as without this window. (A window of the whole
 *    interval resends more for less goodput: at 1 % loss each way, 1.6
 *    instead of 1.4 times the clean frames per byte);
 *  - the bandwidth-delay product as BBR estimates it: the delivery rate
 *    (PSNs acknowledged per round of at least one min RTT and
 *    ROXE_BW_ROUND_MIN_NS, the largest of the last ROXE_BW_ROUNDS rounds:
 *    a round spent waiting on a timer or the application is not the
 *    path's rate) x the min RTT (the smallest Karn-clean sample of the
 *    last ROXE_MINRTT_WIN_NS), ROXE_BDP_GAIN x it: however lossy the path,
 *    the pipe stays full.
 * limit = max(loss term, BDP term, ROXE_CWND_FLOOR), at most the IBA limit.
 * The floor is what a loaded host needs in flight whatever the estimates
 * say: its min RTT (tens of microseconds) hides the scheduling stalls that
 * a deeper pipe rides out. Of fixed windows of 16, 32, 64 and 128 PSNs at
 * 1 % loss each way, 64 keeps the most goodput, 1.2 to 1.4 times 16's and
 * 128's (docs/benchmark-loss.md).
 * With a peer that keeps what follows a gap (selective repair, above), a
 * loss costs one packet whatever the window: the loss interval no longer
 * counts, and the limit is the IBA limit, as with no loss.
 * It starts at the IBA limit (no loss seen). A first retransmission
 * timeout counts as a loss (a go-back-N, spurious or not) but cuts nothing
 * else: on a loaded host most are stalls; a second one with no progress
 * between is an outage and holds the limit at ROXE_CWND_MIN until an ACK
 * comes, which undoes it. (The tail probe's two PSNs are no go-back and
 * no loss.)
 *
 * The limit says how much may be outstanding; a rate pacer (DCQCN, on the
 * peer's CNPs) would say when the next packet may leave. The requester asks
 * both before each packet (requester.c: may_send), so one can sit beside
 * the other.
 */
/* --- selective repair ----------------------------------------------------------
 *
 * A sequence NAK names the first PSN the responder lacks. IBA's responder
 * dropped everything behind it, so go-back-N sends all that again; a roxe
 * responder keeps it (stash.c) and, once the missing PSN comes, runs and
 * acknowledges it all. The requester cannot ask which kind it talks to,
 * so it finds out: on a NAK of PSN p it sends p alone (asking for an ACK)
 * and goes on with new PSNs; the verdict is the next response that
 * acknowledges p:
 *  - it acknowledges past p + 1, which was sent before p went again: the
 *    peer kept what followed the gap (kept; sticky for the QP);
 *  - it stops at exactly p (an ACK of p, or a NAK of p + 1): the peer did
 *    not keep p + 1, or p + 1 was lost too. Go back to p + 1, as
 *    go-back-N would have gone to p: one round trip later. Until a peer
 *    has once kept, ROXE_REPAIR_TRIES of these and the QP stops trying
 *    (a go-back-N peer costs that many round trips, once). A peer that
 *    keeps gets another repair, unless ROXE_REPAIR_RUN losses in a row
 *    each named the PSN after the last (a gap its stash did not hold:
 *    each would take a round trip): then go-back-N.
 * A lost repair is the tail probe's to find (the oldest PSN it resends is
 * p). The answer to a repair times the path: the responder NAKed p, so it
 * answers the copy sent alone (Karn's ambiguity does not arise), and on a
 * path that keeps losing it is the only clean sample there is: every
 * cumulative ACK of a PSN sent once also waits for the repair of some gap
 * before it (at 3 % loss there may be no other sample for the first 100 ms:
 * no probe, only the configured timeout). A peer that keeps makes a loss
 * cost one packet, not a window: the send window then ignores the loss
 * interval (roxe_cwnd_selective).
 */
#define ROXE_REPAIR_TRIES	2
#define ROXE_REPAIR_RUN		4

struct roxe_repair {
	bool		pending;	/* psn went alone; no verdict yet */
	bool		kept;		/* the peer kept packets past a gap */
	uint8_t		misses;		/* "not kept" verdicts while !kept */
	uint8_t		run;		/* repairs in a row of the PSN after the last */
	uint32_t	psn;		/* the PSN resent alone */
	uint32_t	hi;		/* the last PSN sent before it */
	uint64_t	sent_at;	/* ns; 0: timed already */
};

/* A sequence NAK of psn: resend psn alone (true) or go back (false)? */
bool roxe_repair_try(struct roxe_repair *r, uint32_t psn);
/* psn went alone at now (ns); last: the last PSN sent before it. */
void roxe_repair_sent(struct roxe_repair *r, uint32_t psn, uint32_t last, uint64_t now);
/* A response at now moved the oldest unacknowledged PSN to next: the
 * repair's round trip if this answers it (once), else 0. */
uint64_t roxe_repair_rtt(struct roxe_repair *r, uint32_t next, uint64_t now);
/* A response moved the oldest unacknowledged PSN to next. True: it
 * stopped at exactly the repaired PSN with more sent behind it, so the
 * peer lacks next (an ACK says so as a NAK of next would). */
bool roxe_repair_progress(struct roxe_repair *r, uint32_t next);

#define ROXE_CWND_FLOOR		64
#define ROXE_CWND_MIN		2
#define ROXE_LOSS_SHARE		2
#define ROXE_BDP_GAIN		2
#define ROXE_BW_ROUNDS		8
#define ROXE_BW_ROUND_MIN_NS	1000000ull	/* 1 ms */
#define ROXE_MINRTT_WIN_NS	10000000000ull	/* 10 s */

struct roxe_cwnd {
	uint32_t	cwnd;		/* PSNs that may be unacknowledged */
	uint32_t	max;		/* the IBA limit above it */
	uint32_t	floor;		/* ROXE_CWND_FLOOR, at most max */
	bool		selective;	/* the peer keeps what follows a gap */
	bool		outage;		/* held at ROXE_CWND_MIN until an ACK */
	uint64_t	delivered;	/* PSNs acknowledged, all told */
	uint64_t	loss_at;	/* delivered at the last go-back */
	uint32_t	loss_ival;	/* EWMA of PSNs between go-backs; 0: no loss */
	uint64_t	round_start;	/* ns; 0: no round begun */
	uint64_t	round_acked;	/* PSNs acknowledged this round */
	uint64_t	rate[ROXE_BW_ROUNDS];	/* PSNs per second, per round */
	unsigned	rate_at;
	uint64_t	min_rtt;	/* ns; 0: no sample */
	uint64_t	min_rtt_at;	/* when it was taken */
};

void roxe_cwnd_init(struct roxe_cwnd *w, uint32_t max);
/* acked PSNs newly acknowledged at now (ns). */
void roxe_cwnd_ack(struct roxe_cwnd *w, uint32_t acked, uint64_t now);
/* An RTT sample (ns, Karn-clean) taken at now. */
void roxe_cwnd_rtt(struct roxe_cwnd *w, uint64_t rtt, uint64_t now);
/* The requester goes back (a sequence NAK, a READ response gap). */
void roxe_cwnd_loss(struct roxe_cwnd *w);
/* The retransmission timer expired (and goes back); again: it expired
 * before too, with no progress since. */
void roxe_cwnd_timeout(struct roxe_cwnd *w, bool again);
/* The peer keeps what follows a gap: losses no longer bound the window. */
void roxe_cwnd_selective(struct roxe_cwnd *w);
/* The estimated bandwidth-delay product in PSNs (0: none yet). */
uint32_t roxe_cwnd_bdp(const struct roxe_cwnd *w);

#endif /* ROXE_TRANSPORT_RECOVERY_H */
