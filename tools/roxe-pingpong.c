// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-pingpong: the RC ping-pong of libibverbs' ibv_rc_pingpong, on roxe,
 * and with -U the UD one of ibv_ud_pingpong. Same options, same output, and
 * the same out-of-band TCP exchange ("LID:QPN:PSN:GID"), so either end may
 * be ibv_{rc,ud}_pingpong on any RoCE device (kernel rxe, a RoCE NIC) and
 * the other roxe-pingpong.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
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
#include "roxe/cli.h"
#include "roxe/limits.h"
#include "roxe/env.h"
#include "roxe/frame.h"
#include "roxe/version.h"
#include "json.h"
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
	bool		json;		/* the result as JSON on stdout, text on stderr */
};

/* What a run measured, for the text and the JSON. */
struct result {
	bool		done;		/* every exchange completed */
	double		usec;
	int		bad_data;	/* the exchange (from 1) whose data was wrong; 0: none */
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

static const char short_usage[] =
"Usage: roxe-pingpong --netdev IFACE [options]          (server)\n"
"       roxe-pingpong --netdev IFACE [options] HOST     (client)\n";

static void usage(void)
{
	printf("Usage:\n"
	       "  roxe-pingpong --netdev IFACE [options]          start a server and wait for connection\n"
	       "  roxe-pingpong --netdev IFACE [options] <host>   connect to the server at <host>\n"
	       "\n"
	       "RC ping-pong over roxe, compatible with ibv_rc_pingpong, or with -U UD\n"
	       "ping-pong compatible with ibv_ud_pingpong: either end may be that program\n"
	       "on any RoCE v2 device (use its -g with the RoCE v2 GID).\n"
	       "roxe attaches to IFACE if it is not attached yet, and detaches on exit\n"
	       "in that case.\n"
	       "\n"
	       "Options:\n"
	       "      --netdev=<iface>   network interface to run on (required)\n"
	       "  -d, --ib-dev=<dev>     refused: ibv_rc_pingpong's -d names an RDMA device,\n"
	       "                         and roxe-pingpong opens none: it runs its own engine\n"
	       "                         on --netdev's interface (roxe(7), COMMAND LINE)\n"
	       "  -p, --port=<port>      listen on/connect to TCP port <port> (default 18515)\n"
	       "  -i, --ib-port=<port>   port of the device (default 1; the only one)\n"
	       "  -s, --size=<size>      size of message to exchange (default 4096, UD 2048;\n"
	       "                         UD: at most the port's MTU, 1024 on a 1500-byte link)\n"
	       "  -m, --mtu=<size>       path MTU: 256, 512, 1024, 2048, 4096 (default 1024;\n"
	       "                         RC only: UD uses the port's MTU)\n"
	       "  -r, --rx-depth=<dep>   number of receives to post at a time (default 500)\n"
	       "  -n, --iters=<iters>    number of exchanges (default 1000)\n"
	       "  -l, --sl=<sl>          service level, 0-15 (accepted; RoCE v2 carries none)\n"
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
	       "      --json             the result as one JSON object on stdout (the text\n"
	       "                         goes to stderr); one also when the run fails\n"
	       "  -h, --help             this text\n"
	       "  -V, --version          print roxe-pingpong's version and exit\n"
	       "\n"
	       "Exit status: 0 when every exchange completed (and validated with -c),\n"
	       "1 otherwise, 2 on a usage error.\n");
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

/* People's text: stdout, or stderr when stdout carries the JSON. */
static FILE *text(const struct opts *o)
{
	return o->json ? stderr : stdout;
}

static void print_dest(const struct opts *o, const char *what, const struct dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	fprintf(text(o), "  %s address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what,
		d->lid, d->qpn, d->psn, gid);
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

static int run(struct ctx *c, const struct opts *o, int routs, struct result *res)
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
	fprintf(text(o), "%lld bytes in %.2f seconds = %.2f Mbit/sec\n",
		(long long)o->size * o->iters * 2, usec / 1e6,
		(double)o->size * o->iters * 2 * 8 / usec);
	fprintf(text(o), "%d iters in %.2f seconds = %.2f usec/iter\n", o->iters, usec / 1e6,
		usec / o->iters);
	*res = (struct result){ .done = true, .usec = usec, .bad_data = bad_data };
	if (bad_data) {
		fprintf(stderr, "invalid data in exchange %d\n", bad_data);
		return -1;
	}
	return 0;
}

static void json_dest(const char *key, const struct dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	printf(", \"%s\": ", key);
	if (!d) {
		printf("null");
		return;
	}
	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	printf("{\"qpn\": %u, \"psn\": %u, \"gid\": \"%s\"}", d->qpn, d->psn, gid);
}

/* --json: one document, also when the run failed (then what is known). */
static void json_report(const struct opts *o, const struct dest *me, const struct dest *rem,
			const struct result *r, bool ok)
{
	printf("{\"tool\": \"roxe-pingpong\", \"role\": \"%s\", \"transport\": \"%s\", "
	       "\"interface\": ", o->server ? "client" : "server", o->ud ? "ud" : "rc");
	tool_json_str(stdout, o->ifname);
	printf(", \"backend\": \"%s\", \"polled\": %s, \"size\": %d, \"iterations\": %d",
	       o->backend == ROXE_BACKEND_UDP ? "udp" : "afxdp", o->polled ? "true" : "false",
	       o->size, o->iters);
	json_dest("local", me);
	json_dest("remote", rem);
	printf(", \"bytes\": %lld, \"seconds\": ", r->done ? (long long)o->size * o->iters * 2 : 0);
	tool_json_num(stdout, "%.6f", r->done ? r->usec / 1e6 : NAN);
	printf(", \"mbit_per_sec\": ");
	tool_json_num(stdout, "%.2f", r->done ? (double)o->size * o->iters * 16 / r->usec : NAN);
	printf(", \"usec_per_iter\": ");
	tool_json_num(stdout, "%.3f", r->done ? r->usec / o->iters : NAN);
	printf(", \"checked\": %s, \"bad_exchange\": ", o->check ? "true" : "false");
	if (r->bad_data)
		printf("%d", r->bad_data);
	else
		printf("null");
	printf(", \"ok\": %s}\n", ok ? "true" : "false");
	fflush(stdout);
}

/* The command line into *o: 0, or the exit status of a usage error. */
static int parse(int argc, char **argv, struct opts *o)
{
	enum { O_NETDEV = 256, O_JSON };
	static const struct option lo[] = {
		{ "netdev", 1, NULL, O_NETDEV }, { "json", 0, NULL, O_JSON },
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
	bool size_set = false;
	unsigned ignored;
	int opt, err = 0;

	while (!err && (opt = getopt_long(argc, argv, "p:d:i:s:m:r:n:l:eg:cCB:E:UL:PhV", lo,
					  NULL)) != -1) {
		switch (opt) {
		case O_NETDEV: o->ifname = optarg; break;
		case O_JSON: o->json = true; break;
		case 'd': return tool_ib_dev_refused(optarg);
		case 'p': err = tool_int("-p/--port", optarg, 1, 65535, &o->port); break;
		case 'i':
			err = tool_uint("-i/--ib-port (roxe devices have one port)", optarg, 1, 1,
					&ignored);
			break;
		case 's':
			err = tool_int("-s/--size", optarg, 1, 1 << 30, &o->size);
			size_set = true;
			break;
		case 'm':
			if (tool_parse_mtu(optarg, &o->mtu))
				return tool_usage_error("-m/--mtu: 256, 512, 1024, 2048 or 4096, "
							"not '%s'", optarg);
			break;
		/* at least 2: one receive is always posted while the others
		 * are reposted */
		case 'r': err = tool_int("-r/--rx-depth", optarg, 2, ROXE_MAX_WR, &o->rx_depth); break;
		case 'n': err = tool_int("-n/--iters", optarg, 1, INT_MAX, &o->iters); break;
		/* accepted for compatibility */
		case 'l': err = tool_uint("-l/--sl", optarg, 0, 15, &ignored); break;
		case 'g': err = tool_int("-g/--gid-idx", optarg, 0, 255, &o->gidx); break;
		case 'e': o->use_event = true; break;
		case 'c': o->check = true; break;
		case 'C': o->check = o->check_echo = true; break;
		case 'B': err = tool_backend(optarg, &o->backend); break;
		case 'E': err = tool_uint("-E/--engines", optarg, 1, ROXE_MAX_ENGINES, &o->engines); break;
		case 'L': err = tool_int("-L/--linger", optarg, 0, 3600 * 1000, &o->linger_ms); break;
		case 'U': o->ud = true; break;
		case 'P': o->polled = true; break;
		case 'h': usage(); exit(0);
		case 'V': tool_version_exit("roxe-pingpong");
		default: return tool_usage_error(NULL);
		}
	}
	if (err)
		return err;
	if (optind == argc - 1)
		o->server = argv[optind];
	else if (optind < argc)
		return tool_usage_error("unexpected argument '%s'", argv[optind + 1]);
	if (!size_set)
		o->size = o->ud ? 2048 : 4096;	/* ibv_{ud,rc}_pingpong's defaults */
	if (o->polled && o->use_event)
		return tool_usage_error("-P (polled) and -e (events) exclude each other");
	if (!o->ifname)
		return tool_usage_error("--netdev IFACE is required (the network interface)");
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .port = 18515, .backend = ROXE_BACKEND_AFXDP, .engines = 1, .gidx = -1,
			  .mtu = IBV_MTU_1024, .rx_depth = 500, .iters = 1000 };
	struct ctx c = { 0 };
	struct dest me = { 0 }, rem;
	struct result res = { 0 };
	bool have_me = false, have_rem = false;
	int ret = 1, routs;
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */

	setvbuf(stdout, NULL, _IOLBF, 0);	/* lines show up in logs at once */
	tool_cli_init("roxe-pingpong", short_usage);
	ret = parse(argc, argv, &o);
	if (ret)
		return ret;
	ret = 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
		fprintf(stderr, "roxe-pingpong: no GID at index %d\n", o.gidx);
		goto out;
	}
	have_me = true;
	print_dest(&o, "local", &me);
	if (exchange(&c, &o, &me, &rem))
		goto out;
	have_rem = true;
	print_dest(&o, "remote", &rem);
	ret = run(&c, &o, routs, &res) ? 1 : 0;
	/* The engine keeps re-acknowledging retries while the QP exists. */
	if (!ret && o.linger_ms > 0 && !interrupted)
		usleep((useconds_t)o.linger_ms * 1000);
out:
	teardown(&c);
	if (o.json)
		json_report(&o, have_me ? &me : NULL, have_rem ? &rem : NULL, &res, ret == 0);
	return ret;
}
