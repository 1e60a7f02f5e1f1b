// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The out-of-band TCP exchange, byte for byte perftest 4.5's (version
 * "6.06", default mode without rdma_cm), so either end may be a real
 * ib_*_bw / ib_*_lat:
 *   - every exchange is lock-step: the client writes then reads, the server
 *     reads then writes; each message goes out in one write() because
 *     perftest reads it with one read();
 *   - prefix: version (16 B), page size and cache line (4 B big-endian
 *     each, both ends keep the larger), path MTU (2 B: the ibv_mtu digit,
 *     both ends keep the smaller);
 *   - QP info ("handshake"): 108 B, lid:out_reads:qpn:psn:rkey:vaddr:16
 *     GID bytes:srqn: in hex, NUL-terminated;
 *   - BW report: size, iterations, peak, average, message rate as five
 *     8-byte big-endian exchanges;
 *   - close: one handshake, then "done\0" that nobody reads.
 * Between two roxe-perf (no --perftest), the version says "roxe-perf" and
 * a parameter block follows the prefix: the server takes the client's
 * options, so only the client needs them.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "perf.h"
#include "roxe/limits.h"
#include "tool.h"

#define VERSION_LEN	16
#define PERFTEST_VERSION "6.06"
#define NATIVE_VERSION	"roxe-perf 1"
#define KEY_MSG_LEN	108
#define PARAMS_MAGIC	0x726f7865u	/* "roxe" */

static int xfer(struct perf_ctx *c, void *out, const void *in, size_t len, bool write_first)
{
	int fd = c->sock;
	ssize_t n;

	if (write_first && write(fd, in, len) != (ssize_t)len)
		return -1;
	/* A polled device's engine runs only inside roxe_poll_cq: keep it
	 * turning (without taking completions) while the peer takes its time,
	 * or our ACKs and retransmissions wait with us. */
	while (c->o->polled && c->cq && !perf_oob_readable(c) && !perf_interrupted)
		for (int i = 0; i < 1000; i++)		/* ~1 ms between looks */
			roxe_poll_cq(c->cq, 0, NULL);
	/* perftest sends each message in one write(); wait for all of it. */
	n = recv(fd, out, len, MSG_WAITALL);
	if (n != (ssize_t)len)
		return -1;
	if (!write_first && write(fd, in, len) != (ssize_t)len)
		return -1;
	return 0;
}

/* One lock-step exchange: what we send, what the peer sent. */
static int exchange(struct perf_ctx *c, void *theirs, const void *ours, size_t len)
{
	return xfer(c, theirs, ours, len, c->o->server != NULL);
}

static int oob_fail(const char *what)
{
	fprintf(stderr, "Couldn't exchange %s with the peer: %s\n", what,
		errno ? strerror(errno) : "connection closed");
	return -1;
}

int perf_oob_open(struct perf_ctx *c)
{
	/* perftest connects over IPv4 only: the server listens on IPv6 and
	 * IPv4 (one dual-stack socket), so either may reach it; the client
	 * takes HOST's address of either family. A server started a moment
	 * ago may not listen yet: retry for 5 s. */
	c->sock = c->o->server ?
		  tool_tcp_connect(c->o->server, c->o->port, AF_UNSPEC, 5000, &perf_interrupted) :
		  tool_tcp_accept(c->o->port, false);
	return c->sock < 0 ? -1 : 0;
}

/* The options a native server takes from its client. */
struct wire_params {
	uint32_t	magic, test, mode, size, sweep, duration, qps, tx_depth, rx_depth;
	uint32_t	cq_mod, inline_size, flags, iters_hi, iters_lo;
};
#define PARAM_VERIFY	1u
#define PARAM_CMP_SWAP	2u

static void params_out(const struct perf_opts *o, struct wire_params *w)
{
	uint32_t *f = (uint32_t *)w;

	*w = (struct wire_params){
		.magic = PARAMS_MAGIC, .test = o->test, .mode = o->mode, .size = o->size,
		.sweep = o->sweep, .duration = o->duration, .qps = o->qps,
		.tx_depth = o->tx_depth, .rx_depth = o->rx_depth, .cq_mod = o->cq_mod,
		.inline_size = o->inline_size,
		.flags = (o->verify ? PARAM_VERIFY : 0) | (o->cmp_swap ? PARAM_CMP_SWAP : 0),
		.iters_hi = (uint32_t)(o->iters >> 32), .iters_lo = (uint32_t)o->iters,
	};
	for (size_t i = 0; i < sizeof(*w) / 4; i++)
		f[i] = htonl(f[i]);
}

static int params_in(struct perf_ctx *c, struct perf_opts *o, struct wire_params *w)
{
	uint32_t *f = (uint32_t *)w;

	for (size_t i = 0; i < sizeof(*w) / 4; i++)
		f[i] = ntohl(f[i]);
	if (w->magic != PARAMS_MAGIC) {
		fprintf(stderr, "The peer sent no roxe-perf parameters\n");
		return -1;
	}
	if (w->test != o->test || w->mode != o->mode) {
		fprintf(stderr, "The peer runs %s %s, this end %s %s\n",
			perf_test_name((enum perf_test)w->test), w->mode == MODE_BW ? "bw" : "lat",
			perf_test_name(o->test), o->mode == MODE_BW ? "bw" : "lat");
		return -1;
	}
	if (c->o->server)	/* the client keeps its own */
		return 0;
	if (w->qps < 1 || w->qps > PERF_MAX_QPS || !w->tx_depth || !w->rx_depth ||
	    (unsigned long long)w->qps * ((unsigned long long)w->tx_depth + w->rx_depth) + 1 >
	    ROXE_MAX_CQE || !w->cq_mod || w->size < 1) {
		fprintf(stderr, "The client's parameters are out of range\n");
		return -1;
	}
	o->size = w->size;
	o->sweep = w->sweep;
	o->duration = w->duration;
	o->qps = w->qps;
	o->tx_depth = w->tx_depth;
	o->rx_depth = w->rx_depth;
	o->cq_mod = w->cq_mod;
	o->inline_size = w->inline_size;
	o->verify = w->flags & PARAM_VERIFY;
	o->cmp_swap = w->flags & PARAM_CMP_SWAP;
	o->iters = (uint64_t)w->iters_hi << 32 | w->iters_lo;
	return 0;
}

/* Version, page size, cache line, MTU (and native parameters). o is the
 * caller's options: a native server updates them from its client; the
 * path MTU both ends agreed on goes to *mtu. */
int perf_oob_prefix(struct perf_ctx *c, struct perf_opts *o, enum ibv_mtu *mtu)
{
	char ver[VERSION_LEN] = { 0 }, rver[VERSION_LEN + 1] = { 0 };
	uint32_t v, rv;
	char m[2], rm[2];
	long peer_mtu;

	strncpy(ver, o->perftest ? PERFTEST_VERSION : NATIVE_VERSION, sizeof(ver) - 1);
	if (exchange(c, rver, ver, VERSION_LEN))
		return oob_fail("versions");
	if (o->perftest && !strncmp(rver, "roxe-perf", 9)) {
		fprintf(stderr, "The peer is roxe-perf without --perftest: use --perftest on both "
			"ends or on neither\n");
		return -1;
	}
	if (!o->perftest && strncmp(rver, "roxe-perf", 9)) {
		fprintf(stderr, "The peer is not roxe-perf (it says version \"%s\"): a perftest "
			"peer needs --perftest here\n", rver);
		return -1;
	}
	if (o->perftest && atof(rver) < 5.70) {
		fprintf(stderr, "The peer's perftest version \"%s\" is older than 5.70\n", rver);
		return -1;
	}
	/* Page size and cache line: perftest cycles addresses by the larger;
	 * roxe-perf lays out its slots its own way and needs neither. */
	v = htonl((uint32_t)sysconf(_SC_PAGESIZE));
	if (exchange(c, &rv, &v, 4))
		return oob_fail("page sizes");
	v = htonl(64);
	if (exchange(c, &rv, &v, 4))
		return oob_fail("cache line sizes");
	m[0] = (char)('0' + *mtu);
	m[1] = 0;
	if (exchange(c, rm, m, 2))
		return oob_fail("MTUs");
	rm[1] = 0;
	peer_mtu = strtol(rm, NULL, 10);
	if (peer_mtu >= IBV_MTU_256 && peer_mtu <= IBV_MTU_4096 && peer_mtu < (long)*mtu)
		*mtu = (enum ibv_mtu)peer_mtu;
	if (!o->perftest) {
		struct wire_params ours, theirs;

		params_out(o, &ours);
		if (exchange(c, &theirs, &ours, sizeof(ours)))
			return oob_fail("parameters");
		if (params_in(c, o, &theirs))
			return -1;
	}
	return 0;
}

static void dest_to_msg(const struct perf_dest *d, char msg[KEY_MSG_LEN])
{
	const uint8_t *g = d->gid.raw;

	memset(msg, 0, KEY_MSG_LEN);
	snprintf(msg, KEY_MSG_LEN,
		 "%04x:%04x:%06x:%06x:%08x:%016llx:"
		 "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:"
		 "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%08x:",
		 d->lid, d->out_reads, d->qpn, d->psn, d->rkey, (unsigned long long)d->vaddr,
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7],
		 g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], d->srqn);
}

/* Fields are ':'-separated hex; the count is what must be right. */
static int msg_to_dest(const char *msg, struct perf_dest *d)
{
	char buf[KEY_MSG_LEN + 1], *save = NULL, *tok;
	unsigned long long f[23];
	int n = 0;

	memcpy(buf, msg, KEY_MSG_LEN);
	buf[KEY_MSG_LEN] = 0;
	for (tok = strtok_r(buf, ":", &save); tok && n < 23; tok = strtok_r(NULL, ":", &save)) {
		char *end;

		errno = 0;
		f[n] = strtoull(tok, &end, 16);
		if (*end || errno)
			return -1;
		n++;
	}
	if (n != 23 || f[3] > 0xffffff || f[2] > 0xffffff)
		return -1;
	d->lid = (uint32_t)f[0];
	d->out_reads = (uint32_t)f[1];
	d->qpn = (uint32_t)f[2];
	d->psn = (uint32_t)f[3];
	d->rkey = (uint32_t)f[4];
	d->vaddr = f[5];
	for (int i = 0; i < 16; i++) {
		if (f[6 + i] > 0xff)
			return -1;
		d->gid.raw[i] = (uint8_t)f[6 + i];
	}
	d->srqn = (uint32_t)f[22];
	return 0;
}

/* One QP-info exchange for QP qi; the peer's copy replaces what we had. */
int perf_oob_hs(struct perf_ctx *c, unsigned qi)
{
	char ours[KEY_MSG_LEN], theirs[KEY_MSG_LEN];

	dest_to_msg(&c->qp[qi].local, ours);
	if (exchange(c, theirs, ours, KEY_MSG_LEN))
		return oob_fail("QP addresses");
	if (msg_to_dest(theirs, &c->qp[qi].remote)) {
		fprintf(stderr, "The peer's QP address is malformed: \"%.107s\"\n", theirs);
		return -1;
	}
	return 0;
}

static uint64_t be64(uint64_t v)
{
	return ((uint64_t)htonl((uint32_t)v) << 32) | htonl((uint32_t)(v >> 32));
}

static uint64_t double_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	return u;
}

static double bits_double(uint64_t u)
{
	double d;

	memcpy(&d, &u, 8);
	return d;
}

/* The BW report: the client's figures go to the server, which prints them
 * (a perftest server prints them as they come: run it with --report_gbits). */
int perf_oob_report(struct perf_ctx *c, struct perf_result *r)
{
	uint64_t ours[5] = {
		be64(r->size), be64(r->iters), be64(double_bits(r->gbps_peak)),
		be64(double_bits(r->gbps_avg)), be64(double_bits(r->mpps)),
	}, theirs[5];

	for (int i = 0; i < 5; i++)
		if (exchange(c, &theirs[i], &ours[i], 8))
			return oob_fail("results");
	if (!c->o->server) {
		r->size = (uint32_t)be64(theirs[0]);
		r->iters = be64(theirs[1]);
		r->gbps_peak = bits_double(be64(theirs[2]));
		r->gbps_avg = bits_double(be64(theirs[3]));
		r->mpps = bits_double(be64(theirs[4]));
	}
	return 0;
}

/* The end: one more handshake, then "done" (perftest never reads it). */
int perf_oob_finish(struct perf_ctx *c)
{
	int err = perf_oob_hs(c, 0);

	if (!err && write(c->sock, "done", sizeof("done")) != sizeof("done"))
		err = -1;
	return err;
}

/* The peer has written something (its next handshake): it is done. */
bool perf_oob_readable(struct perf_ctx *c)
{
	struct pollfd p = { .fd = c->sock, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

void perf_oob_close(struct perf_ctx *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
}
