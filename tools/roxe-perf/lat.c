// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Latency, as perftest measures it, so the figures compare:
 *   send   ping-pong of SENDs, the client first;
 *   write  ping-pong of WRITEs, the server first; each end spins on the
 *          last byte of its buffer, which carries the iteration (mod 256);
 *   read, atomic   the client issues one at a time, the server is passive.
 * A sample is the time between two successive posts, halved for the
 * ping-pongs (one way); the two largest are dropped, as perftest does.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "perf.h"

#define TAIL_DROPPED	2
#define VERIFY_SETTLE	0.001	/* s: a byte may land before its packet's others */

struct lat_run {
	struct perf_ctx	*c;
	uint32_t	size;
	uint8_t		*target;	/* the peer writes / sends here (our vaddr) */
	uint8_t		*source;	/* we send / write from here */
	double		*t;		/* post times */
	uint64_t	rx_posted, rx_done;
	uint64_t	tx_outstanding;
};

static int post_recv(struct lat_run *l)
{
	struct perf_qp *q = &l->c->qp[0];
	struct ibv_sge sge = { (uintptr_t)l->target, l->size, q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = l->rx_posted, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = roxe_post_recv(q->qp, &wr, &bad);

	if (err) {
		fprintf(stderr, "Couldn't post receive: %s\n", strerror(-err));
		return -1;
	}
	l->rx_posted++;
	return 0;
}

static int post_one(struct lat_run *l, uint64_t msg)
{
	struct perf_ctx *c = l->c;
	const struct perf_opts *o = c->o;
	struct perf_qp *q = &c->qp[0];
	struct ibv_sge sge = { (uintptr_t)l->source, l->size, q->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = msg, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int err;

	switch (o->test) {
	case TEST_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case TEST_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = q->remote.vaddr;
		wr.wr.rdma.rkey = q->remote.rkey;
		break;
	case TEST_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)l->target;
		wr.wr.rdma.remote_addr = q->remote.vaddr;
		wr.wr.rdma.rkey = q->remote.rkey;
		break;
	case TEST_ATOMIC:
		sge.addr = (uintptr_t)l->target;
		sge.length = 8;
		wr.opcode = o->cmp_swap ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = q->remote.vaddr;
		wr.wr.atomic.rkey = q->remote.rkey;
		wr.wr.atomic.compare_add = o->cmp_swap ? msg : 1;
		wr.wr.atomic.swap = msg + 1;
		break;
	}
	if (l->size <= o->inline_size && (o->test == TEST_SEND || o->test == TEST_WRITE))
		wr.send_flags |= IBV_SEND_INLINE;
	err = roxe_post_send(q->qp, &wr, &bad);
	if (err) {
		fprintf(stderr, "Couldn't post send: %s\n", strerror(-err));
		return -1;
	}
	l->tx_outstanding++;
	return 0;
}

/* Reap completions; true when a receive (send test) or the requester's
 * own READ/atomic completed. Spins, or sleeps with -e. */
static int reap(struct lat_run *l, bool *got_recv, bool *got_own)
{
	struct ibv_wc wc[8];
	int n = perf_poll(l->c, wc, 8);

	for (int i = 0; i < n; i++) {
		if (wc[i].opcode & IBV_WC_RECV) {
			if (wc[i].byte_len != l->size && l->c->o->verify) {
				fprintf(stderr, "verify: SEND %llu: %u bytes, expected %u\n",
					(unsigned long long)wc[i].wr_id, wc[i].byte_len, l->size);
				l->c->verify_errors++;
			}
			l->rx_done++;
			*got_recv = true;
		} else {
			l->tx_outstanding--;
			*got_own = true;
		}
	}
	return n < 0 ? -1 : 0;
}

static int wait_recv(struct lat_run *l)
{
	bool got_recv = false, own;

	while (!got_recv) {
		if (perf_interrupted || reap(l, &got_recv, &own))
			return -1;
	}
	return 0;
}

/* The last byte of the target turns to `mark`; the CQ is polled meanwhile
 * (send completions; a polled device runs its engine there). */
static int wait_mark(struct lat_run *l, uint8_t mark)
{
	volatile uint8_t *p = l->target + l->size - 1;
	bool r, o;

	while (*p != mark) {
		if (perf_interrupted || reap(l, &r, &o))
			return -1;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

/* --verify of a WRITE seen by its last byte: the rest of that packet may
 * still be landing, so give it a moment before calling it wrong. */
static void check_write(struct lat_run *l, uint64_t msg)
{
	double until = perf_now() + VERIFY_SETTLE;
	int bad;

	if (l->size < 2)
		return;
	while ((bad = perf_pattern_check(l->target, l->size - 1, 0, msg, NULL)) &&
	       perf_now() < until)
		;
	if (bad)
		l->c->verify_errors += perf_pattern_check(l->target, l->size - 1, 0, msg,
							  "WRITE data");
}

static int run_send(struct lat_run *l, uint64_t iters, bool client)
{
	const struct perf_opts *o = l->c->o;

	for (uint64_t i = 0; i < iters; i++) {
		if (!client || i > 0) {
			if (wait_recv(l))
				return -1;
			if (o->verify)
				l->c->verify_errors += perf_pattern_check(l->target, l->size, 0,
									  i - client, "SEND data");
			if (l->rx_posted < iters && post_recv(l))
				return -1;
		}
		while (l->tx_outstanding >= o->tx_depth) {
			bool r, own;

			if (perf_interrupted || reap(l, &r, &own))
				return -1;
		}
		if (o->verify)
			perf_pattern_fill(l->source, l->size, 0, i);
		l->t[i] = perf_now();
		if (post_one(l, i))
			return -1;
	}
	if (client && wait_recv(l))	/* the last answer */
		return -1;
	l->t[iters] = perf_now();
	if (client && o->verify)
		l->c->verify_errors += perf_pattern_check(l->target, l->size, 0, iters - 1,
							  "SEND data");
	return 0;
}

static int run_write(struct lat_run *l, uint64_t iters, bool client)
{
	const struct perf_opts *o = l->c->o;
	uint64_t scnt = 0, rcnt = 0;

	while (scnt < iters || rcnt < iters) {
		if (rcnt < iters && (client || scnt > 0)) {
			rcnt++;
			if (wait_mark(l, (uint8_t)rcnt))
				return -1;
			if (o->verify)
				check_write(l, rcnt - 1);
		}
		if (scnt < iters) {
			bool r, own;

			while (l->tx_outstanding >= o->tx_depth)
				if (reap(l, &r, &own))
					return -1;
			if (o->verify)
				perf_pattern_fill(l->source, l->size, 0, scnt);
			l->t[scnt] = perf_now();
			scnt++;
			l->source[l->size - 1] = (uint8_t)scnt;
			if (post_one(l, scnt - 1))
				return -1;
		}
	}
	l->t[iters] = perf_now();
	return 0;
}

static int run_read(struct lat_run *l, uint64_t iters)
{
	const struct perf_opts *o = l->c->o;

	for (uint64_t i = 0; i < iters; i++) {
		bool r, own = false;

		l->t[i] = perf_now();
		if (post_one(l, i))
			return -1;
		while (!own)
			if (perf_interrupted || reap(l, &r, &own))
				return -1;
		if (!o->verify)
			continue;
		if (o->test == TEST_READ) {
			l->c->verify_errors += perf_pattern_check(l->target, l->size, 0, 0,
								  "READ data");
		} else {
			uint64_t v;

			memcpy(&v, l->target, 8);
			if (v != i) {
				fprintf(stderr, "verify: atomic %llu returned %llu\n",
					(unsigned long long)i, (unsigned long long)v);
				l->c->verify_errors++;
			}
		}
	}
	l->t[iters] = perf_now();
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void stats(const struct lat_run *l, uint64_t iters, double factor, struct perf_result *r)
{
	uint64_t m = iters > TAIL_DROPPED + 1 ? iters - TAIL_DROPPED : iters;
	double *d = malloc(iters * sizeof(*d)), sum = 0, sq = 0;

	if (!d)
		return;
	for (uint64_t i = 0; i < iters; i++)
		d[i] = (l->t[i + 1] - l->t[i]) * 1e6 / factor;
	qsort(d, iters, sizeof(*d), cmp_double);
	for (uint64_t i = 0; i < m; i++)
		sum += d[i];
	r->lat_avg = sum / (double)m;
	for (uint64_t i = 0; i < m; i++)
		sq += (d[i] - r->lat_avg) * (d[i] - r->lat_avg);
	r->lat_stdev = sqrt(sq / (double)m);
	r->lat_min = d[0];
	r->lat_max = d[m - 1];
	r->lat_typical = d[m / 2];
	r->lat_p99 = d[(uint64_t)ceil(0.99 * (double)(m - 1))];
	r->lat_p999 = d[(uint64_t)ceil(0.999 * (double)(m - 1))];
	r->seconds = l->t[iters] - l->t[0];
	free(d);
}

/* -U: each exchange's latency in the order they ran, in the table's unit. */
static void unsorted(const struct lat_run *l, uint64_t iters, double factor, FILE *f)
{
	fprintf(f, "#, usec\n");
	for (uint64_t i = 0; i < iters; i++)
		fprintf(f, "%" PRIu64 " %.3f\n", i, (l->t[i + 1] - l->t[i]) * 1e6 / factor);
}

static struct lat_run cur;	/* the size being measured */

/* Before the two ends synchronise: receives up, target clean, sources set. */
int perf_lat_prepare(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	struct perf_qp *q = &c->qp[0];
	uint64_t depth = o->rx_depth < o->iters ? o->rx_depth : o->iters;

	free(cur.t);
	memset(&cur, 0, sizeof(cur));
	cur.c = c;
	cur.size = size;
	cur.target = q->buf;
	cur.source = q->buf + ((c->max_size + 63) & ~(size_t)63);
	cur.t = calloc(o->iters + 1, sizeof(*cur.t));
	if (!cur.t)
		return -1;
	/* Fault the timestamps in now: calloc() hands a large array over as
	 * untouched zero pages, and the first store to each page (one every
	 * 512 exchanges) would cost that exchange microseconds. */
	for (uint64_t i = 0; i <= o->iters; i += 64)
		((volatile double *)cur.t)[i] = 0;
	/* Buffers start zeroed and are not cleared again: write_lat has no
	 * sync between sizes, the peer may be writing already. */
	if (o->verify && o->test == TEST_READ && !o->server)
		perf_pattern_fill(cur.target, c->max_size, 0, 0);	/* what the client reads */
	if (o->test == TEST_SEND)
		for (uint64_t i = 0; i < depth; i++)
			if (post_recv(&cur))
				return -1;
	return 0;
}

int perf_run_lat(struct perf_ctx *c, uint32_t size, struct perf_result *r)
{
	const struct perf_opts *o = c->o;
	bool client = o->server != NULL;
	struct rusage ru0, ru1;
	int err;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->iters = o->iters;
	getrusage(RUSAGE_SELF, &ru0);
	if (o->test == TEST_SEND)
		err = run_send(&cur, o->iters, client);
	else if (o->test == TEST_WRITE)
		err = run_write(&cur, o->iters, client);
	else
		err = run_read(&cur, o->iters);
	getrusage(RUSAGE_SELF, &ru1);
	r->minor_faults = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
	r->major_faults = (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
	/* Let the last send's ACK come back before the QP goes away. */
	while (!err && cur.tx_outstanding) {
		bool rcv, own;

		err = reap(&cur, &rcv, &own);
	}
	if (err)
		return -1;
	stats(&cur, o->iters, o->test == TEST_SEND || o->test == TEST_WRITE ? 2 : 1, r);
	if (o->unsorted)
		unsorted(&cur, o->iters, o->test == TEST_SEND || o->test == TEST_WRITE ? 2 : 1,
			 o->json ? stderr : stdout);
	r->lat_what = o->test == TEST_SEND || o->test == TEST_WRITE ? "one way (half round trip)" :
								       "round trip";
	return 0;
}
