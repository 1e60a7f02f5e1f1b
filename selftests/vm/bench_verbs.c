// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_verbs A B write|send SIZE N: the bulk or small-message work of
 * tools/scripts/bench-vm-zc.sh on two verbs devices of one guest (rxe0 and
 * rxe1, or roxe0 and roxe1), one RC QP each, connected in this process:
 * N RDMA WRITEs or SENDs of SIZE bytes from A to B, at most WINDOW in
 * flight, a completion asked for every SIGNAL sends, the process asleep on
 * completion events (no CQ spinning to count as work), every wait bounded.
 * Every byte is checked: each WRITE fills a slot of B's buffer with a
 * pattern of its message number, and at the end every slot holds its last
 * message's pattern; each SEND carries its message number, B checks each
 * receive's length and bytes in order. Prints one line, "bench_verbs: ok:
 * ..." and exits 0, or "bench_verbs: FAIL: ..." and exits 1 (2: usage).
 * Path MTU 1024, local ACK timeout 4.096 us * 2^18 (1.07 s: TCG stalls).
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include "verbs_util.h"

#define WINDOW	32		/* WRs in flight; also the WRITE slots */
#define SIGNAL	8		/* a completion every SIGNAL sends */
#define RECVS	(4 * WINDOW)	/* SEND: receives posted on B */
#define WAIT_MS	30000		/* no completion this long: a failure */
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

struct end {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*buf;
	union ibv_gid		gid;
	int			gidx;
};

static struct ibv_comp_channel *ch;
static size_t size, buflen;

static int fail(const char *what, int err)
{
	printf("bench_verbs: FAIL: %s%s%s\n", what, err ? ": " : "", err ? strerror(err) : "");
	return 1;
}

/* events: A's CQ gets the completion channel (the sends' completions
 * wake the process); B's is polled, each time the process wakes */
static int end_open(struct end *e, const char *name, unsigned slots, bool events)
{
	e->ctx = open_dev(name);
	if (!e->ctx)
		return -1;
	if (events) {
		ch = ibv_create_comp_channel(e->ctx);
		if (!ch || fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK))
			return -1;
	}
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 4 * RECVS, NULL, events ? ch : NULL, 0);
	buflen = (size_t)slots * size;
	e->buf = aligned_alloc(4096, (buflen + 4095) / 4096 * 4096);
	if (e->gidx < 0 || !e->pd || !e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, buflen);
	e->mr = ibv_reg_mr(e->pd, e->buf, buflen, ACCESS);
	return e->mr ? 0 : -1;
}

/* timeout 18 (1.07 s a try), as bench-vm gives perftest: a TCG guest on a
 * loaded host stalls longer than 67 ms x 7 tries */
static int connect(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid, int gidx)
{
	return rc_connect_timeout(qp, ACCESS, dest, gid, gidx, 18) ? -1 : 0;
}

/* The pattern of message m: 64-bit words (m << 32 | word index). */
static void fill(uint8_t *p, uint64_t m)
{
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t w = m << 32 | i / 8;

		memcpy(p + i, &w, 8);
	}
	for (size_t i = size & ~(size_t)7; i < size; i++)
		p[i] = (uint8_t)(m + i);
}

static int check(const uint8_t *p, uint64_t m)
{
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t w = m << 32 | i / 8;

		if (memcmp(p + i, &w, 8))
			return -1;
	}
	for (size_t i = size & ~(size_t)7; i < size; i++)
		if (p[i] != (uint8_t)(m + i))
			return -1;
	return 0;
}

/* Wait for a completion event on A's CQ (at most WAIT_MS), re-arm it. */
static int wait_event(struct end *a)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	for (;;) {
		if (!ibv_get_cq_event(ch, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			return ibv_req_notify_cq(a->cq, 0) ? -1 : 0;
		}
		if (errno != EAGAIN)
			return -1;
		if (poll(&pfd, 1, WAIT_MS) != 1)
			return -1;
	}
}

static int post_recv(struct end *b, uint64_t slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(b->buf + slot * size), .length = (uint32_t)size,
			       .lkey = b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(b->qp, &wr, &bad);
}

int main(int argc, char **argv)
{
	struct end a = { 0 }, b = { 0 };
	uint64_t n, posted = 0, done = 0, got = 0;
	unsigned tail = 0;
	bool write;
	struct ibv_wc wc[16];
	char *endp;

	(void)failed;	/* verbs_util.h's CHECK, unused here */
	if (argc != 6 || (strcmp(argv[3], "write") && strcmp(argv[3], "send"))) {
		fprintf(stderr, "usage: bench_verbs A B write|send SIZE N\n");
		return 2;
	}
	write = !strcmp(argv[3], "write");
	size = strtoul(argv[4], &endp, 0);
	if (*endp || size < 8 || size > (1u << 20))
		return fprintf(stderr, "bench_verbs: SIZE 8..1048576\n"), 2;
	n = strtoull(argv[5], &endp, 0);
	if (*endp || !n || n > 10000000)
		return fprintf(stderr, "bench_verbs: N 1..10000000\n"), 2;
	if (end_open(&a, argv[1], WINDOW, true) || end_open(&b, argv[2], write ? WINDOW : RECVS, false))
		return fail("opening the devices (channel, pd, cq, gid, mr)", errno);
	for (struct end *e = &a; e; e = e == &a ? &b : NULL) {
		struct ibv_qp_init_attr ia = {
			.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = WINDOW, .max_recv_wr = RECVS, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		e->qp = ibv_create_qp(e->pd, &ia);
		if (!e->qp)
			return fail("ibv_create_qp", errno);
	}
	if (connect(a.qp, b.qp->qp_num, &b.gid, b.gidx) || connect(b.qp, a.qp->qp_num, &a.gid, a.gidx))
		return fail("connecting the QPs", errno);
	if (!write)
		for (uint64_t s = 0; s < RECVS; s++)
			if (post_recv(&b, s))
				return fail("ibv_post_recv", errno);
	if (ibv_req_notify_cq(a.cq, 0))
		return fail("ibv_req_notify_cq", errno);
	while (done < n || (!write && got < n)) {
		int k;

		/* post while the window has room: message m's slot is free
		 * once message m - WINDOW completed (in order, RC) */
		while (posted < n && posted - done < WINDOW) {
			uint8_t *src = a.buf + (posted % WINDOW) * size;
			struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)size,
					       .lkey = a.mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = posted + 1, .sg_list = &sge, .num_sge = 1,
				.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
				.send_flags = (posted + 1) % SIGNAL == 0 || posted + 1 == n ||
					      posted + 1 - done == WINDOW ? IBV_SEND_SIGNALED : 0,
			}, *bad;

			if (write) {
				wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + (posted % WINDOW) * size);
				wr.wr.rdma.rkey = b.mr->rkey;
			}
			fill(src, posted);
			if (ibv_post_send(a.qp, &wr, &bad))
				return fail("ibv_post_send", errno);
			posted++;
		}
		/* B's receives: checked in order, posted again */
		while (!write && (k = ibv_poll_cq(b.cq, 16, wc)) > 0)
			for (int i = 0; i < k; i++) {
				if (wc[i].status != IBV_WC_SUCCESS)
					return printf("bench_verbs: FAIL: receive %llu: %s\n",
						      (unsigned long long)got,
						      ibv_wc_status_str(wc[i].status)), 1;
				if (wc[i].byte_len != size || wc[i].wr_id >= RECVS ||
				    check(b.buf + wc[i].wr_id * size, got))
					return printf("bench_verbs: FAIL: SEND %llu arrived wrong (%u bytes)\n",
						      (unsigned long long)got, wc[i].byte_len), 1;
				got++;
				if (post_recv(&b, wc[i].wr_id))
					return fail("ibv_post_recv", errno);
			}
		k = ibv_poll_cq(a.cq, 16, wc);
		if (k < 0)
			return fail("ibv_poll_cq", EIO);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return printf("bench_verbs: FAIL: message %llu: %s\n",
					      (unsigned long long)wc[i].wr_id,
					      ibv_wc_status_str(wc[i].status)), 1;
			done = wc[i].wr_id;
		}
		if (k)
			continue;
		if (done < n) {
			if (wait_event(&a))
				return printf("bench_verbs: FAIL: no completion in %d ms (%llu of %llu done)\n",
					      WAIT_MS, (unsigned long long)done, (unsigned long long)n), 1;
		} else if (!write && got < n) {
			/* every SEND acknowledged; B's last completions may
			 * come a little after the ACK: poll, bounded */
			if (++tail > WAIT_MS)
				return printf("bench_verbs: FAIL: %llu of %llu SENDs received %d ms after all were acknowledged\n",
					      (unsigned long long)got, (unsigned long long)n, WAIT_MS), 1;
			usleep(1000);
		}
	}
	if (write)
		for (uint64_t s = 0; s < WINDOW && s < n; s++) {
			/* slot s holds the last message m with m % WINDOW == s */
			uint64_t m = (n - 1) - ((n - 1 - s) % WINDOW);

			if (check(b.buf + s * size, m))
				return printf("bench_verbs: FAIL: WRITE slot %llu does not hold message %llu\n",
					      (unsigned long long)s, (unsigned long long)m), 1;
		}
	printf("bench_verbs: ok: %s %zu B x %llu from %s to %s, every byte as sent\n", argv[3], size,
	       (unsigned long long)n, argv[1], argv[2]);
	return 0;
}
