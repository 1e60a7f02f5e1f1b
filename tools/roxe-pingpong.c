// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-pingpong: the RC ping-pong of libibverbs' ibv_rc_pingpong, on roxe,
 * and with -U the UD one of ibv_ud_pingpong. Same options, same output, and
 * the same out-of-band TCP exchange ("LID:QPN:PSN:GID"), so either end may
 * be ibv_{rc,ud}_pingpong on any RoCE device (kernel rxe, a RoCE NIC) and
 * the other roxe-pingpong.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "roxe/verbs.h"
#include "roxe/env.h"
#include "roxe/frame.h"
#include "roxe/version.h"
#include "tool.h"

#define RECV_WRID	1
#define SEND_WRID	2
/* The exchange message, NUL included: 52 bytes as ibv_{rc,ud}_pingpong send. */
#define MSG_LEN		sizeof("0000:000000:000000:00000000000000000000000000000000")
/* UD: every receive starts with the 40-byte GRH slot; ibv_ud_pingpong's
 * Q_Key, which both ends must use. */
#define GRH_LEN		40
#define UD_QKEY		0x11111111

struct opts {
	const char	*server;	/* NULL: be the server */
	int		port;
	const char	*ifname;
	enum roxe_backend backend;
	unsigned	engines;
	int		size;
	enum ibv_mtu	mtu;
	int		rx_depth;
	int		iters;
	bool		use_event;
	bool		polled;
	bool		check;
	bool		check_echo;	/* -C: the peer only echoes */
	int		linger_ms;
	bool		ud;
	int		gidx;		/* -g; -1: the device's own address */
};

struct dest {
	unsigned	lid, qpn, psn;
	union ibv_gid	gid;
};

struct ctx {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct roxe_mr		*mr;
	struct roxe_cq		*cq;
	struct roxe_comp_channel *ch;
	struct roxe_qp		*qp;
	struct ibv_ah		*ah;		/* UD: the peer's address */
	uint32_t		rqpn;		/* UD: the peer's QP */
	/* The message: buf + off, size bytes. UD receives land at buf, the
	 * GRH first, so the payload lines up with what we send. */
	uint8_t			*buf;
	size_t			off;
	int			pending;
	unsigned		send_flags;
};

static void usage(const char *argv0)
{
	printf("Usage:\n"
	       "  %1$s -d IFACE [options]          start a server and wait for connection\n"
	       "  %1$s -d IFACE [options] <host>   connect to the server at <host>\n"
	       "\n"
	       "RC ping-pong over roxe, compatible with ibv_rc_pingpong, or with -U UD\n"
	       "ping-pong compatible with ibv_ud_pingpong: either end may be that program\n"
	       "on any RoCE v2 device (use its -g with the RoCE v2 GID).\n"
	       "roxe attaches to IFACE if it is not attached yet, and detaches on exit\n"
	       "in that case.\n"
	       "\n"
	       "Options:\n"
	       "  -p, --port=<port>      listen on/connect to TCP port <port> (default 18515)\n"
	       "  -d, --ib-dev=<iface>   network interface to run on (required)\n"
	       "  -i, --ib-port=<port>   port of the device (default 1; the only one)\n"
	       "  -s, --size=<size>      size of message to exchange (default 4096, UD 2048;\n"
	       "                         UD: at most the port's MTU, 1024 on a 1500-byte link)\n"
	       "  -m, --mtu=<size>       path MTU: 256, 512, 1024, 2048, 4096 (default 1024;\n"
	       "                         RC only: UD uses the port's MTU)\n"
	       "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n"
	       "  -n, --iters=<iters>    number of exchanges (default 1000)\n"
	       "  -l, --sl=<sl>          service level (accepted; RoCE v2 carries none)\n"
	       "  -e, --events           sleep on CQ events (default poll)\n"
	       "  -g, --gid-idx=<idx>    local GID index, rxe's table (default: the interface's\n"
	       "                         address roxe opened the device with)\n"
	       "  -c, --chk              validate received buffers (both ends roxe-pingpong;\n"
	       "                         UD also checks length, GRH flag and source QP)\n"
	       "  -C, --chk-echo         validate against a peer that sends back what it\n"
	       "                         received, as ibv_{rc,ud}_pingpong do (their own --chk\n"
	       "                         looks at one byte per page): the server answers\n"
	       "                         exchange i with pattern i and checks that the next\n"
	       "                         message is that answer; the client is as with -c\n"
	       "  -U, --ud               UD mode, as ibv_ud_pingpong (Q_Key 0x11111111)\n"
	       "  -B, --backend=<b>      afxdp (default) or udp\n"
	       "  -E, --engines=<n>      engine threads (default 1)\n"
	       "  -P, --polled           no engine threads: this program's CQ polling runs\n"
	       "                         the engines (lowest latency, one busy core; not\n"
	       "                         with -e)\n"
	       "  -L, --linger=<ms>      keep the QP answering for <ms> after the last\n"
	       "                         exchange (default 0): on a lossy link the peer may\n"
	       "                         still be retrying its last message, whose ACK was lost\n"
	       "  -h, --help             this text\n"
	       "  -V, --version          print roxe-pingpong's version and exit\n"
	       "\n"
	       "Exit status: 0 when every exchange completed (and validated with -c),\n"
	       "1 otherwise.\n", argv0);
}

/* GIDs travel as 32 hex digits of their bytes in order. */
static void gid_to_wire(const union ibv_gid *g, char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

static int wire_to_gid(const char *s, union ibv_gid *g)
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		g->raw[i] = (uint8_t)v;
	}
	return 0;
}

static void dest_to_msg(const struct dest *d, char msg[MSG_LEN])
{
	char gid[33];

	gid_to_wire(&d->gid, gid);
	snprintf(msg, MSG_LEN, "%04x:%06x:%06x:%s", d->lid, d->qpn, d->psn, gid);
}

static int msg_to_dest(const char *msg, struct dest *d)
{
	char gid[33] = { 0 };

	if (sscanf(msg, "%x:%x:%x:%32s", &d->lid, &d->qpn, &d->psn, gid) != 4 ||
	    strlen(gid) != 32)
		return -1;
	return wire_to_gid(gid, &d->gid);
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* UD: no path to set up, only our PSN; the peer's GID makes the AH. */
static int ctx_connect_ud(struct ctx *c, const struct opts *o, const struct dest *me,
			  const struct dest *rem)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } };
	int err;

	err = roxe_modify_qp(c->qp, &a, IBV_QP_STATE);
	if (err) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n", strerror(-err));
		return -1;
	}
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	err = roxe_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	if (err) {
		fprintf(stderr, "Failed to modify QP to RTS: %s\n", strerror(-err));
		return -1;
	}
	aa.grh.dgid = rem->gid;
	aa.grh.sgid_index = (uint8_t)o->gidx;
	err = roxe_create_ah(c->pd, &aa, &c->ah);
	if (err) {
		fprintf(stderr, "Failed to create AH: %s\n", strerror(-err));
		return -1;
	}
	c->rqpn = rem->qpn;
	return 0;
}

static int ctx_connect(struct ctx *c, const struct opts *o, const struct dest *me,
		       const struct dest *rem)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = o->mtu,
		.dest_qp_num = rem->qpn,
		.rq_psn = rem->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1, .grh = { .hop_limit = 64 } },
	};
	int err;

	if (o->ud)
		return ctx_connect_ud(c, o, me, rem);
	a.ah_attr.grh.dgid = rem->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)o->gidx;
	err = roxe_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	if (err) {
		fprintf(stderr, "Failed to modify QP to RTR: %s\n", strerror(-err));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 1;
	err = roxe_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err) {
		fprintf(stderr, "Failed to modify QP to RTS: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

/* Swap addresses over TCP the way ibv_{rc,ud}_pingpong do; the server
 * moves its QP to RTS before it answers, the client after. */
static int exchange(struct ctx *c, const struct opts *o, const struct dest *me, struct dest *rem)
{
	char msg[MSG_LEN];
	int fd, ret = -1;

	fd = o->server ? tool_tcp_connect(o->server, o->port, AF_UNSPEC, 0, NULL) :
			 tool_tcp_accept(o->port, false);
	if (fd < 0)
		return -1;
	if (o->server) {
		dest_to_msg(me, msg);
		if (write(fd, msg, MSG_LEN) != (ssize_t)MSG_LEN || read_full(fd, msg, MSG_LEN) ||
		    msg_to_dest(msg, rem) || write(fd, "done", sizeof("done")) != sizeof("done")) {
			fprintf(stderr, "Couldn't exchange addresses with %s\n", o->server);
			goto out;
		}
		ret = ctx_connect(c, o, me, rem);
	} else {
		if (read_full(fd, msg, MSG_LEN) || msg_to_dest(msg, rem)) {
			fprintf(stderr, "Couldn't read remote address\n");
			goto out;
		}
		if (ctx_connect(c, o, me, rem))
			goto out;
		dest_to_msg(me, msg);
		/* The client's "done" tells us it is ready. */
		if (write(fd, msg, MSG_LEN) != (ssize_t)MSG_LEN || read(fd, msg, MSG_LEN) <= 0) {
			fprintf(stderr, "Couldn't send local address\n");
			goto out;
		}
		ret = 0;
	}
out:
	close(fd);
	return ret;
}

static int post_recvs(struct ctx *c, const struct opts *o, int n)
{
	struct ibv_sge sge = { (uintptr_t)c->buf, (uint32_t)(c->off + (size_t)o->size),
			       c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_WRID, .sg_list = &sge, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < n; i++)
		if (roxe_post_recv(c->qp, &wr, &bad))
			break;
	return i;
}

static int post_send(struct ctx *c, const struct opts *o)
{
	struct ibv_sge sge = { (uintptr_t)(c->buf + c->off), (uint32_t)o->size, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = SEND_WRID, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = c->send_flags }, *bad;

	if (o->ud) {
		wr.wr.ud.ah = c->ah;
		wr.wr.ud.remote_qpn = c->rqpn;
		wr.wr.ud.remote_qkey = UD_QKEY;
	}
	return roxe_post_send(c->qp, &wr, &bad);
}

/* SIGINT/SIGTERM end the run through the normal teardown, which closes the
 * device: roxe detaches its XDP program only when the device closes. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Byte k of exchange i, when validating: both ends can predict it. */
static uint8_t pattern(int i, int k)
{
	return (uint8_t)(k * 31 + i * 7 + (k >> 8));
}

static int setup(struct ctx *c, const struct opts *o)
{
	struct roxe_device_attr da = { .ifname = o->ifname, .backend = o->backend,
				       .engines = o->engines, .polled = o->polled };
	struct roxe_qp_init_attr ia = { .qp_type = o->ud ? IBV_QPT_UD : IBV_QPT_RC };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = UD_QKEY };
	struct ibv_port_attr pa;
	size_t len;
	int err;

	roxe_env_device_attr(&da, "roxe-pingpong");
	err = roxe_device_open(&da, &c->dev);
	if (err) {
		fprintf(stderr, "Couldn't open roxe on %s: %s\n", o->ifname, strerror(-err));
		return -1;
	}
	/* A datagram is one packet: the engine would refuse a longer send
	 * at post time, after the peer is already waiting for it. */
	if (o->ud && !roxe_query_port(c->dev, &pa) &&
	    o->size > (128 << pa.active_mtu)) {
		fprintf(stderr, "UD message size %d is larger than the port MTU (%d) on %s\n",
			o->size, 128 << pa.active_mtu, o->ifname);
		return -1;
	}
	if (o->use_event && roxe_create_comp_channel(c->dev, &c->ch))
		return -1;
	c->off = o->ud ? GRH_LEN : 0;
	len = c->off + (size_t)o->size;
	c->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!c->buf)
		return -1;
	memset(c->buf, 0x7b, len);
	if (roxe_alloc_pd(c->dev, &c->pd) ||
	    roxe_reg_mr(c->pd, c->buf, len, IBV_ACCESS_LOCAL_WRITE, &c->mr) ||
	    roxe_create_cq(c->dev, o->rx_depth + 1, NULL, c->ch, &c->cq)) {
		fprintf(stderr, "Couldn't allocate PD, MR or CQ\n");
		return -1;
	}
	ia.send_cq = ia.recv_cq = c->cq;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = (uint32_t)o->rx_depth;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	err = roxe_create_qp(c->pd, &ia, &c->qp);
	if (err) {
		fprintf(stderr, "Couldn't create QP: %s\n", strerror(-err));
		return -1;
	}
	c->send_flags = IBV_SEND_SIGNALED;
	if (ia.cap.max_inline_data >= (uint32_t)o->size && !o->check)
		c->send_flags |= IBV_SEND_INLINE;
	err = roxe_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     (o->ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (err) {
		fprintf(stderr, "Failed to modify QP to INIT: %s\n", strerror(-err));
		return -1;
	}
	return 0;
}

static void teardown(struct ctx *c)
{
	if (c->qp)
		roxe_destroy_qp(c->qp);
	if (c->ah)
		roxe_destroy_ah(c->ah);
	if (c->cq)
		roxe_destroy_cq(c->cq);
	if (c->mr)
		roxe_dereg_mr(c->mr);
	if (c->pd)
		roxe_dealloc_pd(c->pd);
	if (c->ch)
		roxe_destroy_comp_channel(c->ch);
	if (c->dev)
		roxe_env_report(c->dev, "roxe-pingpong");
	roxe_device_close(c->dev);
	free(c->buf);
}

static void print_dest(const char *what, const struct dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf("  %s address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what, d->lid,
	       d->qpn, d->psn, gid);
}

static int wait_cq(struct ctx *c)
{
	struct roxe_cq *ev_cq;
	void *ev_ctx;
	int err;

	err = roxe_get_cq_event(c->ch, &ev_cq, &ev_ctx);
	if (err) {
		fprintf(stderr, "Failed to get cq_event: %s\n", strerror(-err));
		return -1;
	}
	roxe_ack_cq_events(ev_cq, 1);
	return roxe_req_notify_cq(c->cq, 0) ? -1 : 0;
}

/* Receives are posted and the CQ armed before the addresses are exchanged:
 * the peer may send the moment it knows ours, and a completion that comes
 * before the CQ is armed raises no event. */
static int prepare(struct ctx *c, const struct opts *o)
{
	int routs = post_recvs(c, o, o->rx_depth);

	if (routs < o->rx_depth) {
		fprintf(stderr, "Couldn't post receive (%d)\n", routs);
		return -1;
	}
	if (o->use_event && roxe_req_notify_cq(c->cq, 0)) {
		fprintf(stderr, "Couldn't request CQ notification\n");
		return -1;
	}
	return routs;
}

/* A UD receive with -c: the whole message behind a GRH, from the peer. */
static bool ud_recv_ok(const struct ctx *c, const struct opts *o, const struct ibv_wc *wc)
{
	if (wc->byte_len == GRH_LEN + (uint32_t)o->size && (wc->wc_flags & IBV_WC_GRH) &&
	    wc->src_qp == c->rqpn)
		return true;
	fprintf(stderr, "UD receive: %u bytes (want %u), %sGRH, source QP 0x%06x (want 0x%06x)\n",
		wc->byte_len, GRH_LEN + (uint32_t)o->size, wc->wc_flags & IBV_WC_GRH ? "" : "no ",
		wc->src_qp, c->rqpn);
	return false;
}

static int run(struct ctx *c, const struct opts *o, int routs)
{
	uint8_t *msg = c->buf + c->off;
	int scnt = 0, rcnt = 0, bad_data = 0;
	struct timespec t0, t1;
	double usec;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->pending = RECV_WRID;
	if (o->server) {
		if (o->check)
			for (int k = 0; k < o->size; k++)
				msg[k] = pattern(0, k);
		if (post_send(c, o)) {
			fprintf(stderr, "Couldn't post send\n");
			return -1;
		}
		c->pending |= SEND_WRID;
	}
	while (rcnt < o->iters || scnt < o->iters) {
		struct ibv_wc wc[2];
		int n;

		if (o->use_event && wait_cq(c))
			return -1;
		do {
			n = roxe_poll_cq(c->cq, 2, wc);
		} while (!o->use_event && n == 0 && !interrupted);
		if (interrupted)
			return -1;
		if (n < 0) {
			fprintf(stderr, "poll CQ failed %d\n", n);
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "Failed status %s (%d) for wr_id %d\n",
					roxe_wc_status_str(wc[i].status), wc[i].status,
					(int)wc[i].wr_id);
				return -1;
			}
			if (wc[i].wr_id == SEND_WRID) {
				scnt++;
			} else if (wc[i].wr_id == RECV_WRID) {
				/* With -c, exchange i carries pattern i; the server
				 * echoes what it got, the client sends the next one.
				 * With -C the peer echoes: the client works as with
				 * -c, the server answers exchange i with pattern i and
				 * finds it in exchange i + 1 (the first message is
				 * the peer's own, unknown). */
				if (o->check) {
					int want = rcnt;

					if (o->check_echo && !o->server)
						want = rcnt - 1;
					if (o->ud && !bad_data && !ud_recv_ok(c, o, &wc[i]))
						bad_data = rcnt + 1;
					for (int k = 0; k < o->size && !bad_data && want >= 0; k++)
						if (msg[k] != pattern(want, k))
							bad_data = rcnt + 1;
					if (o->server || o->check_echo)
						for (int k = 0; k < o->size; k++)
							msg[k] = pattern(o->server ? rcnt + 1 : rcnt, k);
				}
				if (--routs <= 1) {
					routs += post_recvs(c, o, o->rx_depth - routs);
					if (routs < o->rx_depth) {
						fprintf(stderr, "Couldn't post receive (%d)\n", routs);
						return -1;
					}
				}
				rcnt++;
			} else {
				fprintf(stderr, "Completion for unknown wr_id %d\n",
					(int)wc[i].wr_id);
				return -1;
			}
			c->pending &= ~(int)wc[i].wr_id;
			if (scnt < o->iters && !c->pending) {
				if (post_send(c, o)) {
					fprintf(stderr, "Couldn't post send\n");
					return -1;
				}
				c->pending = RECV_WRID | SEND_WRID;
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	usec = (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n",
	       (long long)o->size * o->iters * 2, usec / 1e6,
	       (double)o->size * o->iters * 2 * 8 / usec);
	printf("%d iters in %.2f seconds = %.2f usec/iter\n", o->iters, usec / 1e6,
	       usec / o->iters);
	if (bad_data) {
		fprintf(stderr, "invalid data in exchange %d\n", bad_data);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", 1, NULL, 'p' }, { "ib-dev", 1, NULL, 'd' }, { "ib-port", 1, NULL, 'i' },
		{ "size", 1, NULL, 's' }, { "mtu", 1, NULL, 'm' }, { "rx-depth", 1, NULL, 'r' },
		{ "iters", 1, NULL, 'n' }, { "sl", 1, NULL, 'l' }, { "events", 0, NULL, 'e' },
		{ "gid-idx", 1, NULL, 'g' }, { "chk", 0, NULL, 'c' },
		{ "chk-echo", 0, NULL, 'C' }, { "backend", 1, NULL, 'B' },
		{ "engines", 1, NULL, 'E' }, { "ud", 0, NULL, 'U' }, { "help", 0, NULL, 'h' },
		{ "polled", 0, NULL, 'P' }, { "linger", 1, NULL, 'L' },
		{ "version", 0, NULL, 'V' },
		{ 0 },
	};
	struct opts o = { .port = 18515, .backend = ROXE_BACKEND_AFXDP, .engines = 1, .gidx = -1,
			  .mtu = IBV_MTU_1024, .rx_depth = 500, .iters = 1000 };
	struct ctx c = { 0 };
	struct dest me = { 0 }, rem;
	int opt, ret = 1, routs;
	bool size_set = false;

	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */

	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines show up in logs at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	while ((opt = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:cCB:E:UL:PhV", lo, NULL)) != -1) {
		switch (opt) {
		case 'p': o.port = atoi(optarg); break;
		case 'd': o.ifname = optarg; break;
		case 'i':
			if (atoi(optarg) != 1) {
				fprintf(stderr, "roxe devices have one port: 1\n");
				return 1;
			}
			break;
		case 's':
			o.size = atoi(optarg);
			size_set = true;
			break;
		case 'm':
			if (tool_parse_mtu(optarg, &o.mtu)) {
				fprintf(stderr, "invalid MTU %s\n", optarg);
				return 1;
			}
			break;
		case 'r': o.rx_depth = atoi(optarg); break;
		case 'n': o.iters = atoi(optarg); break;
		case 'l': break;	/* accepted for compatibility */
		case 'g': o.gidx = atoi(optarg); break;
		case 'e': o.use_event = true; break;
		case 'c': o.check = true; break;
		case 'C': o.check = o.check_echo = true; break;
		case 'B':
			if (!strcmp(optarg, "afxdp"))
				o.backend = ROXE_BACKEND_AFXDP;
			else if (!strcmp(optarg, "udp"))
				o.backend = ROXE_BACKEND_UDP;
			else {
				fprintf(stderr, "unknown backend %s (afxdp, udp)\n", optarg);
				return 1;
			}
			break;
		case 'E': o.engines = (unsigned)atoi(optarg); break;
		case 'L': o.linger_ms = atoi(optarg); break;
		case 'U': o.ud = true; break;
		case 'P': o.polled = true; break;
		case 'h': usage(argv[0]); return 0;
		case 'V': tool_version_exit("roxe-pingpong");
		default: usage(argv[0]); return 1;
		}
	}
	if (optind == argc - 1)
		o.server = argv[optind];
	else if (optind < argc) {
		usage(argv[0]);
		return 1;
	}
	if (!size_set)
		o.size = o.ud ? 2048 : 4096;	/* ibv_{ud,rc}_pingpong's defaults */
	if (o.polled && o.use_event) {
		fprintf(stderr, "%s: -P (polled) and -e (events) exclude each other\n", argv[0]);
		return 1;
	}
	if (!o.ifname) {
		fprintf(stderr, "%s: -d IFACE is required (the network interface)\n", argv[0]);
		return 1;
	}
	if (o.size < 1 || o.rx_depth < 2 || o.iters < 1 || o.port < 1 || o.port > 65535) {
		fprintf(stderr, "%s: size, rx-depth (>= 2), iters and port must be positive\n",
			argv[0]);
		return 1;
	}
	if (setup(&c, &o) || (routs = prepare(&c, &o)) < 0)
		goto out;
	srand48(getpid() * time(NULL));
	me.qpn = roxe_qp_num(c.qp);
	me.psn = (unsigned)lrand48() & 0xffffff;
	if (o.gidx < 0)
		o.gidx = roxe_device_gid_index(c.dev);
	/* an empty entry reads as zeros (as rxe's): no address there */
	if (o.gidx < 0 || roxe_query_gid(c.dev, o.gidx, &me.gid) ||
	    !memcmp(me.gid.raw, (uint8_t[16]){ 0 }, 16)) {
		fprintf(stderr, "%s: no GID at index %d\n", argv[0], o.gidx);
		goto out;
	}
	print_dest("local", &me);
	if (exchange(&c, &o, &me, &rem))
		goto out;
	print_dest("remote", &rem);
	ret = run(&c, &o, routs) ? 1 : 0;
	/* The engine keeps re-acknowledging retries while the QP exists. */
	if (!ret && o.linger_ms > 0 && !interrupted)
		usleep((useconds_t)o.linger_ms * 1000);
out:
	teardown(&c);
	return ret;
}
