// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Bandwidth: the client keeps every QP's send queue full (tx_depth WRs, one
 * in cq_mod signalled) of WRITEs, READs, SENDs or atomics; the server is
 * passive for WRITE, READ and atomics and keeps receives posted for SEND.
 * Throughput counts message bytes, as perftest does; the peak is the best
 * tenth of the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perf.h"

#define WRID(qp, msg)	(((uint64_t)(qp) << 48) | (msg))
#define WRID_QP(id)	((unsigned)((id) >> 48))
#define WRID_MSG(id)	((id) & ((1ull << 48) - 1))
#define PEAK_PARTS	10

struct bw_run {
	struct perf_ctx	*c;
	uint32_t	size;
	unsigned	slots;		/* message slots in a QP's buffer */
	unsigned	rslots;		/* ... in the peer's buffer */
	unsigned	window;		/* WRs (or receives) in flight per QP */
	unsigned	cq_mod;		/* -Q, at most the window */
	uint64_t	total;		/* messages per QP; UINT64_MAX: until time */
	double		t0, deadline;
	/* peak: the time each tenth of the messages was done */
	uint64_t	done, part_size;
	double		part_t[PEAK_PARTS + 1];
	unsigned	parts;
	double		next_progress;
};

static enum ibv_wr_opcode wr_opcode(const struct perf_opts *o)
{
	switch (o->test) {
	case TEST_WRITE: return IBV_WR_RDMA_WRITE;
	case TEST_READ: return IBV_WR_RDMA_READ;
	case TEST_SEND: return IBV_WR_SEND;
	default: return o->cmp_swap ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	}
}

static bool signalled(const struct bw_run *b, uint64_t msg)
{
	return (msg + 1) % b->cq_mod == 0 || msg + 1 == b->total;
}

/* Post up to 64 WRs as one chain; the caller repeats while it posts. In
 * duration mode the run ends on a signalled WR, so the last completion
 * covers it all. */
static int post_chain(struct bw_run *b, unsigned qi, bool stopping, unsigned *posted)
{
	struct perf_ctx *c = b->c;
	const struct perf_opts *o = c->o;
	struct perf_qp *q = &c->qp[qi];
	struct ibv_sge sge[64];
	struct ibv_send_wr wr[64], *bad;
	unsigned n = 0;
	int err;

	while (n < 64 && q->posted + n - q->completed < b->window && q->posted + n < b->total) {
		uint64_t msg = q->posted + n;
		unsigned slot = (unsigned)(msg % b->slots);
		uint8_t *local = q->buf + (size_t)slot * b->size;

		if (stopping && msg % b->cq_mod == 0)
			break;
		if (o->verify && (o->test == TEST_WRITE || o->test == TEST_SEND))
			perf_pattern_fill(local, b->size, qi, msg);
		sge[n] = (struct ibv_sge){ (uintptr_t)local, b->size, q->mr->lkey };
		wr[n] = (struct ibv_send_wr){
			.wr_id = WRID(qi, msg), .sg_list = &sge[n], .num_sge = 1,
			.opcode = wr_opcode(o), .next = NULL,
		};
		if (signalled(b, msg))
			wr[n].send_flags = IBV_SEND_SIGNALED;
		if (b->size <= o->inline_size && o->test != TEST_READ && o->test != TEST_ATOMIC)
			wr[n].send_flags |= IBV_SEND_INLINE;
		if (o->test == TEST_WRITE || o->test == TEST_READ) {
			wr[n].wr.rdma.remote_addr = q->remote.vaddr +
				(uint64_t)(msg % b->rslots) * b->size;
			wr[n].wr.rdma.rkey = q->remote.rkey;
		} else if (o->test == TEST_ATOMIC) {
			/* One 8-byte counter per QP at the peer; CMP_SWAP moves it
			 * from msg to msg + 1, so every one succeeds in order. */
			wr[n].wr.atomic.remote_addr = q->remote.vaddr;
			wr[n].wr.atomic.rkey = q->remote.rkey;
			wr[n].wr.atomic.compare_add = o->cmp_swap ? msg : 1;
			wr[n].wr.atomic.swap = msg + 1;
		}
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
	}
	*posted = n;
	if (!n)
		return 0;
	err = roxe_post_send(q->qp, wr, &bad);
	if (err) {
		fprintf(stderr, "Couldn't post send on QP %u: %s\n", qi, strerror(-err));
		return -1;
	}
	q->posted += n;
	return 0;
}

/* Fill the window: with -e the loop sleeps next, and only a signalled WR
 * (one in cq_mod) wakes it. */
static int post_sends(struct bw_run *b, unsigned qi, bool stopping)
{
	unsigned n;

	do {
		if (post_chain(b, qi, stopping, &n))
			return -1;
	} while (n == 64);
	return 0;
}

/* READ and atomic results: every message up to msg has landed (RC
 * completes in order); check each before its slot is reused. */
static void check_landed(struct bw_run *b, unsigned qi, uint64_t upto)
{
	struct perf_ctx *c = b->c;
	struct perf_qp *q = &c->qp[qi];

	for (; q->checked < upto; q->checked++) {
		uint64_t msg = q->checked;
		const uint8_t *p = q->buf + (size_t)(msg % b->slots) * b->size;

		if (c->o->test == TEST_READ) {
			c->verify_errors += perf_pattern_check_at(p, b->size, qi, 0,
				(uint64_t)(msg % b->rslots) * b->size, "READ data");
		} else {
			uint64_t v;

			memcpy(&v, p, 8);
			if (v != msg) {
				fprintf(stderr, "verify: atomic %llu on QP %u returned %llu, "
					"expected %llu\n", (unsigned long long)msg, qi,
					(unsigned long long)v, (unsigned long long)msg);
				c->verify_errors++;
			}
		}
	}
}

static void account(struct bw_run *b, uint64_t msgs, double now)
{
	b->done += msgs;
	while (b->parts < PEAK_PARTS && b->part_size && b->done >= (b->parts + 1) * b->part_size)
		b->part_t[++b->parts] = now;
	if (b->c->o->progress && now >= b->next_progress) {
		perf_progress(b->c, now - b->t0, b->done, b->size, false);
		b->next_progress = now + 1;
	}
}

static void finish(struct bw_run *b, struct perf_result *r, double t1)
{
	double best = 0;
	uint64_t bytes = b->done * b->size;

	r->size = b->size;
	r->iters = b->done;
	r->seconds = t1 - b->t0;
	r->gbps_avg = r->seconds > 0 ? bytes * 8 / r->seconds / 1e9 : 0;
	r->mpps = r->seconds > 0 ? b->done / r->seconds / 1e6 : 0;
	for (unsigned i = 1; i <= b->parts; i++) {
		double dt = b->part_t[i] - b->part_t[i - 1];

		if (dt > 0 && b->part_size * b->size * 8 / dt / 1e9 > best)
			best = b->part_size * b->size * 8 / dt / 1e9;
	}
	r->gbps_peak = best > r->gbps_avg ? best : r->gbps_avg;
	if (b->c->o->progress)
		perf_progress(b->c, r->seconds, b->done, b->size, true);
}

static bool qp_more(const struct bw_run *b, const struct perf_qp *q, bool stopping)
{
	return stopping ? q->completed < q->posted : q->completed < b->total;
}

/* Post to QP qi and count it in or out of *active. */
static int refill(struct bw_run *b, unsigned qi, bool stopping, unsigned *active)
{
	struct perf_qp *q = &b->c->qp[qi];
	bool was = q->active;

	if (post_sends(b, qi, stopping))
		return -1;
	q->active = qp_more(b, q, stopping);
	*active = *active - was + q->active;
	return 0;
}

/* Only a completion opens a QP's window: each turn posts to the QPs that
 * had one, so a turn costs what completed, not what exists (4096 QPs). */
static int client(struct bw_run *b, struct perf_result *r)
{
	static unsigned touched[PERF_MAX_QPS];
	struct perf_ctx *c = b->c;
	const struct perf_opts *o = c->o;
	bool stopping = false;
	unsigned active = 0, ntouched;
	double now = b->t0;

	for (unsigned i = 0; i < c->nqps; i++) {
		c->qp[i].active = c->qp[i].queued = false;
		if (refill(b, i, false, &active))
			return -1;
	}
	while (active) {
		struct ibv_wc wc[64];
		int n;

		if (perf_interrupted)
			return -1;
		if (!stopping && o->duration && now >= b->deadline) {
			/* every QP ends on a signalled WR: post up to one */
			stopping = true;
			for (unsigned i = 0; i < c->nqps; i++)
				if (refill(b, i, true, &active))
					return -1;
		}
		n = perf_poll(c, wc, 64);
		if (n < 0)
			return -1;
		now = perf_now();
		ntouched = 0;
		for (int k = 0; k < n; k++) {
			unsigned qi = WRID_QP(wc[k].wr_id);
			struct perf_qp *q;
			uint64_t upto = WRID_MSG(wc[k].wr_id) + 1;

			if (qi >= c->nqps)
				continue;	/* not ours: cannot happen */
			q = &c->qp[qi];
			if (o->verify && (o->test == TEST_READ || o->test == TEST_ATOMIC))
				check_landed(b, qi, upto);
			account(b, upto - q->completed, now);
			q->completed = upto;
			if (!q->queued) {
				q->queued = true;
				touched[ntouched++] = qi;
			}
		}
		for (unsigned k = 0; k < ntouched; k++) {
			c->qp[touched[k]].queued = false;
			if (refill(b, touched[k], stopping, &active))
				return -1;
		}
	}
	finish(b, r, now);
	return 0;
}

static int post_recvs(struct bw_run *b, unsigned qi)
{
	struct perf_ctx *c = b->c;
	struct perf_qp *q = &c->qp[qi];

	while (q->rx_posted - q->completed < b->window && q->rx_posted < b->total) {
		uint64_t msg = q->rx_posted;
		struct ibv_sge sge = { (uintptr_t)(q->buf + (size_t)(msg % b->slots) * b->size),
				       b->size, q->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = WRID(qi, msg), .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;
		int err = roxe_post_recv(q->qp, &wr, &bad);

		if (err) {
			fprintf(stderr, "Couldn't post receive on QP %u: %s\n", qi, strerror(-err));
			return -1;
		}
		q->rx_posted++;
	}
	return 0;
}

static void count_recv(struct bw_run *b, const struct ibv_wc *wc, double now);

/* One received SEND: checked with --verify, counted. */
static void count_recv(struct bw_run *b, const struct ibv_wc *wc, double now)
{
	struct perf_ctx *c = b->c;
	unsigned qi = WRID_QP(wc->wr_id);
	struct perf_qp *q = &c->qp[qi];
	uint64_t msg = WRID_MSG(wc->wr_id);

	if (c->o->verify) {
		if (wc->byte_len != b->size) {
			fprintf(stderr, "verify: SEND %llu on QP %u: %u bytes, expected %u\n",
				(unsigned long long)msg, qi, wc->byte_len, b->size);
			c->verify_errors++;
		} else {
			c->verify_errors += perf_pattern_check(
				q->buf + (size_t)(msg % b->slots) * b->size, b->size, qi, msg,
				"SEND data");
		}
	}
	q->completed = msg + 1;
	account(b, 1, now);
}

/* -D: take the completions still in the CQ (no sleeping: they are all
 * there once the client has said it is done; 10 ms without one ends it). */
static void drain(struct bw_run *b, double *now)
{
	struct ibv_wc wc[64];
	double quiet_until = perf_now() + 0.01;

	while (perf_now() < quiet_until) {
		int n = roxe_poll_cq(b->c->cq, 64, wc);

		for (int k = 0; k < n; k++)
			if (wc[k].status == IBV_WC_SUCCESS)
				count_recv(b, &wc[k], *now);
		if (n > 0) {
			*now = perf_now();
			quiet_until = *now + 0.01;
		}
	}
}

/* SEND server: count (and check) every message; ends when each QP got
 * `total`, or, in duration mode, when the client says it is done. */
static int send_server(struct bw_run *b, struct perf_result *r)
{
	struct perf_ctx *c = b->c;
	uint64_t want = b->total == UINT64_MAX ? UINT64_MAX : b->total * c->nqps;
	double now = perf_now(), next_look = now;
	bool started = false;

	/* -D: the client's next handshake ends the run (checked every ms). */
	c->watch_peer = b->total == UINT64_MAX;
	c->peer_spoke = false;
	while (b->done < want) {
		struct ibv_wc wc[64];
		int n;

		if (perf_interrupted)
			return -1;
		if (c->watch_peer && (c->peer_spoke || now >= next_look)) {
			if (c->peer_spoke || perf_oob_readable(c)) {
				/* The client spoke after its last SEND was
				 * acknowledged: every message is in the CQ,
				 * maybe not reaped yet. */
				drain(b, &now);
				break;
			}
			/* the next look a millisecond after this one (not
			 * after each poll: a poll takes microseconds) */
			next_look = now + 0.001;
		}
		n = perf_poll(c, wc, 64);
		if (n < 0)
			return -1;
		now = perf_now();
		if (n && !started) {	/* the clock runs from the first message */
			started = true;
			b->t0 = b->part_t[0] = now;
		}
		for (int k = 0; k < n; k++) {
			count_recv(b, &wc[k], now);
			if (post_recvs(b, WRID_QP(wc[k].wr_id)))
				return -1;
		}
	}
	c->watch_peer = false;
	finish(b, r, now);
	return 0;
}

/* WRITE and atomic server, --verify, after the client is done: the last
 * message written to each slot, or the counter, must be there. */
static void check_target(struct bw_run *b, uint64_t total)
{
	struct perf_ctx *c = b->c;

	for (unsigned qi = 0; qi < c->nqps; qi++) {
		struct perf_qp *q = &c->qp[qi];

		if (c->o->test == TEST_ATOMIC) {
			uint64_t v;

			memcpy(&v, q->buf, 8);
			if (v != total) {
				fprintf(stderr, "verify: QP %u counter is %llu after %llu atomics\n",
					qi, (unsigned long long)v, (unsigned long long)total);
				c->verify_errors++;
			}
			continue;
		}
		for (unsigned s = 0; s < b->slots && s < total; s++) {
			uint64_t last = total - 1 - ((total - 1 - s) % b->slots);

			c->verify_errors += perf_pattern_check(q->buf + (size_t)s * b->size, b->size,
							       qi, last, "WRITE data");
		}
	}
}

/* READ server, --verify: what the client will read, one stream over the
 * whole buffer, whatever the message size. */
void perf_bw_fill_sources(struct perf_ctx *c)
{
	for (unsigned qi = 0; qi < c->nqps; qi++)
		perf_pattern_fill(c->qp[qi].buf, (uint32_t)c->qp[qi].buf_len, qi, 0);
}

static struct bw_run cur;	/* the size being measured */

/* Set up one size's run; receives go up before the peer may send. */
int perf_bw_prepare(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;

	memset(&cur, 0, sizeof(cur));
	cur.c = c;
	cur.size = size;
	cur.slots = perf_slots(c, size, c->qp[0].buf_len);
	cur.rslots = perf_slots(c, size, c->qp[0].remote_len);
	cur.window = o->test == TEST_SEND && !o->server ? o->rx_depth : o->tx_depth;
	/* Slots are reused only after their message completed: a must for
	 * --verify; without it, sharing a slot is harmless. */
	if (o->verify && cur.window > cur.slots)
		cur.window = cur.slots;
	/* A window without a signalled WR in it would never complete. */
	cur.cq_mod = o->cq_mod < cur.window ? o->cq_mod : cur.window;
	cur.total = o->duration ? UINT64_MAX : o->iters;
	if (o->test == TEST_ATOMIC)
		cur.rslots = 1;
	for (unsigned i = 0; i < c->nqps; i++) {
		struct perf_qp *q = &c->qp[i];

		q->posted = q->completed = q->checked = q->rx_posted = 0;
	}
	if (o->test == TEST_SEND && !o->server)
		for (unsigned i = 0; i < c->nqps; i++)
			if (post_recvs(&cur, i))
				return -1;
	return 0;
}

int perf_run_bw(struct perf_ctx *c, uint32_t size, struct perf_result *r)
{
	const struct perf_opts *o = c->o;
	bool is_client = o->server != NULL;

	(void)size;
	memset(r, 0, sizeof(*r));
	cur.t0 = cur.part_t[0] = perf_now();
	cur.next_progress = cur.t0 + 1;
	cur.deadline = cur.t0 + o->duration;
	cur.part_size = cur.total == UINT64_MAX ? 0 :
		(cur.total * c->nqps + PEAK_PARTS - 1) / PEAK_PARTS;
	if (is_client)
		return client(&cur, r);
	if (o->test == TEST_SEND)
		return send_server(&cur, r);
	return 0;
}

/* The passive server's check, once it knows how many messages came. */
void perf_bw_server_verify(struct perf_ctx *c, uint64_t per_qp)
{
	if (c->o->verify && (c->o->test == TEST_WRITE || c->o->test == TEST_ATOMIC))
		check_target(&cur, per_qp);
}
