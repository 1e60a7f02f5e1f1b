// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-perf's verbs resources: one device, PD and CQ; per QP a buffer and
 * its MR. With --verify, buffers hold a slot for every message in flight so
 * that consecutive messages land in different places and can be told apart;
 * without it, messages cycle through one page as perftest's do (its
 * cycle_buffer), so a bandwidth figure means what perftest's does: the
 * payload is in the cache, not streamed from memory. The slot count is what
 * both ends compute from the same options.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "roxe/env.h"
#include "perf.h"

#define BUF_BUDGET	(16u << 20)	/* bytes of slots per QP, at most */

#define CYCLE_BUFFER	4096u		/* perftest's: the page size */

/* Slots of `size` bytes in a buffer of len bytes, at most the queue depth
 * (more are never in flight at once); without --verify, those in one page
 * (one slot for messages above half a page). Latency tests use one. */
unsigned perf_slots(const struct perf_ctx *c, uint32_t size, size_t len)
{
	const struct perf_opts *o = c->o;
	size_t depth = o->tx_depth > o->rx_depth ? o->tx_depth : o->rx_depth;
	size_t n = len / (size ? size : 1);

	if (o->mode == MODE_LAT)
		return 1;
	if (!o->verify)
		depth = size && size <= CYCLE_BUFFER / 2 ? CYCLE_BUFFER / size : 1;
	if (n > depth)
		n = depth;
	return n ? (unsigned)n : 1;
}

static size_t buf_len_for(const struct perf_opts *o, uint32_t max_size)
{
	unsigned depth = o->tx_depth > o->rx_depth ? o->tx_depth : o->rx_depth;
	size_t len = (size_t)max_size * depth;
	size_t budget = PERF_BUF_SHARE / o->qps < BUF_BUDGET ? PERF_BUF_SHARE / o->qps : BUF_BUDGET;

	/* Latency: the peer's target, then our source (lat.c). */
	if (o->mode == MODE_LAT)
		len = 2 * (((size_t)max_size + 63) & ~(size_t)63);
	if (o->mode == MODE_BW && len > budget)
		len = budget;
	if (len < 2 * (size_t)max_size && o->mode == MODE_BW)
		len = 2 * (size_t)max_size;
	if (len < 64)
		len = 64;
	return (len + 4095) & ~(size_t)4095;
}

static int setup_qp(struct perf_ctx *c, unsigned i)
{
	const struct perf_opts *o = c->o;
	struct perf_qp *q = &c->qp[i];
	struct roxe_qp_init_attr ia = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = o->tx_depth, .max_recv_wr = o->rx_depth,
			.max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = o->inline_size,
		},
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int err;

	q->buf_len = buf_len_for(o, c->max_size);
	if (o->umem_mr) {	/* zeroed, in the device's UMEM */
		err = roxe_alloc_umem_mr(c->pd, q->buf_len, IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_ATOMIC, &q->mr);
		if (!err)
			q->buf = q->mr->addr;
		q->umem = !err;
	} else {
		q->buf = aligned_alloc(4096, q->buf_len);
		if (!q->buf)
			return -ENOMEM;
		memset(q->buf, 0, q->buf_len);	/* write_lat polls for non-zero */
		err = roxe_reg_mr(c->pd, q->buf, q->buf_len, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC, &q->mr);
	}
	if (err) {
		fprintf(stderr, "Couldn't register %zu bytes: %s\n", q->buf_len, strerror(-err));
		return err;
	}
	err = roxe_create_qp(c->pd, &ia, &q->qp);
	if (err) {
		fprintf(stderr, "Couldn't create QP (depth %u/%u, inline %u): %s\n", o->tx_depth,
			o->rx_depth, o->inline_size, strerror(-err));
		return err;
	}
	err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS);
	if (err) {
		fprintf(stderr, "Failed to modify QP to INIT: %s\n", strerror(-err));
		return err;
	}
	q->local.lid = c->port.lid;
	q->local.qpn = roxe_qp_num(q->qp);
	q->local.psn = (uint32_t)lrand48() & 0xffffff;
	q->local.rkey = q->mr->rkey;
	q->local.vaddr = (uintptr_t)q->buf;
	q->local.out_reads = c->out_reads;
	q->local.gid_index = c->o->gid_index < 0 ? roxe_device_gid_index(c->dev) : c->o->gid_index;
	/* an empty entry reads as zeros (as rxe's): no address there */
	if (q->local.gid_index < 0 || roxe_query_gid(c->dev, q->local.gid_index, &q->local.gid) ||
	    !memcmp(q->local.gid.raw, (uint8_t[16]){ 0 }, 16)) {
		fprintf(stderr, "No GID at index %d\n", q->local.gid_index);
		return -EINVAL;
	}
	return 0;
}

int perf_open(struct perf_ctx *c, const struct perf_opts *o)
{
	struct roxe_device_attr da = {
		.ifname = o->ifname, .backend = o->backend, .engines = o->engines,
		.polled = o->polled, .cc = o->cc, .xdp_copy = o->xdp_copy,
	};
	uint32_t max_size = o->sweep ? PERF_SWEEP_MAX : o->test == TEST_ATOMIC ? 8 : o->size;
	struct ibv_device_attr dattr;
	int err;

	c->o = o;
	/* the QPs' buffers (perf_setup), each in whole chunks */
	if (o->umem_mr)
		da.umem_mr_bytes = (uint64_t)o->qps * buf_len_for(o, max_size ? max_size : 8);
	roxe_env_device_attr(&da, "roxe-perf");
	err = roxe_device_open(&da, &c->dev);
	if (err) {
		fprintf(stderr, "Couldn't open roxe on %s: %s\n", o->ifname, strerror(-err));
		return -1;
	}
	if (roxe_query_port(c->dev, &c->port) || roxe_query_device(c->dev, &dattr))
		return -1;
	/* READ and atomics may have this many outstanding (perftest's
	 * out_reads); WRITE and SEND advertise 1, as perftest does. */
	c->out_reads = o->test == TEST_READ || o->test == TEST_ATOMIC ?
		       (unsigned)dattr.max_qp_rd_atom : 1;
	c->mtu = o->mtu && o->mtu < c->port.active_mtu ? o->mtu : c->port.active_mtu;
	return 0;
}

int perf_setup(struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	int err, cqe;

	c->nqps = o->qps;
	c->max_size = o->sweep ? PERF_SWEEP_MAX : o->size;
	if (o->test == TEST_ATOMIC)
		c->max_size = 8;
	if (o->events) {
		err = roxe_create_comp_channel(c->dev, &c->ch);
		if (err) {
			fprintf(stderr, "Couldn't create completion channel: %s\n", strerror(-err));
			return -1;
		}
	}
	cqe = (int)(o->qps * (o->tx_depth + o->rx_depth)) + 1;
	err = roxe_alloc_pd(c->dev, &c->pd);
	if (!err)
		err = roxe_create_cq(c->dev, cqe, NULL, c->ch, &c->cq);
	if (err) {
		fprintf(stderr, "Couldn't allocate PD or CQ (%d entries): %s\n", cqe, strerror(-err));
		return -1;
	}
	if (o->events && roxe_req_notify_cq(c->cq, 0))
		return -1;
	/* Both ends compute the same: the server refuses what the client
	 * would be refused (a client's options are not to exhaust it). */
	if ((unsigned long long)buf_len_for(o, c->max_size) * c->nqps > PERF_BUF_MAX) {
		fprintf(stderr, "%u QPs of %u-byte messages need %llu MiB of buffers, more than "
			"%llu MiB: fewer QPs or smaller messages\n", c->nqps, c->max_size,
			(unsigned long long)buf_len_for(o, c->max_size) * c->nqps >> 20,
			PERF_BUF_MAX >> 20);
		return -1;
	}
	srand48(getpid() ^ time(NULL));
	for (unsigned i = 0; i < c->nqps; i++)
		if (setup_qp(c, i))
			return -1;
	return 0;
}

/* RTR and RTS with what the peer sent: perftest's attributes (timeout 14
 * unless -u,
 * retry 7, RNR retry 7), the path MTU both ends agreed on. */
int perf_connect(struct perf_ctx *c)
{
	for (unsigned i = 0; i < c->nqps; i++) {
		struct perf_qp *q = &c->qp[i];
		/* The peer may have this many of our READs/atomics in flight
		 * at its responder; ours takes the out_reads we advertised. */
		unsigned rd = q->remote.out_reads < c->out_reads ? q->remote.out_reads : c->out_reads;
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR,
			.path_mtu = c->mtu,
			.dest_qp_num = q->remote.qpn,
			.rq_psn = q->remote.psn,
			.max_dest_rd_atomic = (uint8_t)c->out_reads,
			.min_rnr_timer = 12,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = q->remote.gid, .hop_limit = 0xff,
					      .sgid_index = (uint8_t)q->local.gid_index } },
		};
		int err;

		err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER);
		if (err) {
			fprintf(stderr, "Failed to modify QP %u to RTR: %s\n", i, strerror(-err));
			return -1;
		}
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = (uint8_t)c->o->qp_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = q->local.psn;
		a.max_rd_atomic = (uint8_t)(rd ? rd : 1);
		err = roxe_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		if (err) {
			fprintf(stderr, "Failed to modify QP %u to RTS: %s\n", i, strerror(-err));
			return -1;
		}
	}
	return 0;
}

void perf_teardown(struct perf_ctx *c)
{
	for (unsigned i = 0; i < c->nqps; i++) {
		struct perf_qp *q = &c->qp[i];

		if (q->qp)
			roxe_destroy_qp(q->qp);
		if (q->mr)
			roxe_dereg_mr(q->mr);
		if (!q->umem)
			free(q->buf);
	}
	if (c->cq)
		roxe_destroy_cq(c->cq);
	if (c->pd)
		roxe_dealloc_pd(c->pd);
	if (c->ch)
		roxe_destroy_comp_channel(c->ch);
	if (c->dev)
		roxe_env_report(c->dev, "roxe-perf");
	roxe_device_close(c->dev);
	perf_oob_close(c);
}

/* -e: sleep until the CQ has an event, then re-arm it. With watch_peer,
 * a message from the peer ends the sleep too (peer_spoke). */
int perf_wait_cq(struct perf_ctx *c)
{
	struct roxe_cq *cq;
	void *ctx;
	int err;

	if (c->watch_peer) {
		struct pollfd p[2] = {
			{ .fd = roxe_comp_channel_fd(c->ch), .events = POLLIN },
			{ .fd = c->sock, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0)
			return -1;
		if (p[1].revents) {
			c->peer_spoke = true;
			return 0;
		}
	}
	err = roxe_get_cq_event(c->ch, &cq, &ctx);

	if (err) {
		if (err != -EINTR)
			fprintf(stderr, "Failed to get CQ event: %s\n", strerror(-err));
		return -1;
	}
	roxe_ack_cq_events(cq, 1);
	return roxe_req_notify_cq(c->cq, 0) ? -1 : 0;
}

/* Poll the CQ (spinning, or sleeping first with -e): completions, 0 or -1.
 * A failed completion is an error: it is printed and ends the run. */
int perf_poll(struct perf_ctx *c, struct ibv_wc *wc, int n)
{
	int got = roxe_poll_cq(c->cq, n, wc);

	if (got == 0 && c->o->events) {
		if (perf_wait_cq(c))
			return -1;
		got = roxe_poll_cq(c->cq, n, wc);
	}
	if (got < 0) {
		fprintf(stderr, "poll CQ failed: %s\n", strerror(-got));
		return -1;
	}
	for (int i = 0; i < got; i++)
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "Completion with error: %s (%d), opcode %d, wr_id %llu, QP 0x%06x\n",
				roxe_wc_status_str(wc[i].status), wc[i].status, wc[i].opcode,
				(unsigned long long)wc[i].wr_id, wc[i].qp_num);
			return -1;
		}
	return got;
}

/* A passive end (the WRITE/READ/atomic server) waits for the peer's next
 * socket message. A polled device's engine runs only when the CQ is
 * polled: keep polling it meanwhile, or the peer's requests go unanswered. */
int perf_serve_until_peer(struct perf_ctx *c)
{
	struct ibv_wc wc[16];
	double next_look = 0;

	while (c->o->polled) {
		/* a poll() per turn would cost the engine half its time */
		if (perf_now() >= next_look) {
			if (perf_oob_readable(c))
				break;
			next_look = perf_now() + 0.001;
		}
		if (perf_interrupted || perf_poll(c, wc, 16) < 0)
			return -1;
	}
	return 0;
}
