/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxe-rawperf: the raw frame path under roxe's transport, measured with
 * roxe's own port layer (include/private/roxe/port.h) and XDP program: what the transport
 * could reach at best on this link. Valid RoCE v2 frames (RC SEND_ONLY to a
 * QPN the receiver registers in the XDP program's QP table), and nothing
 * else: no ACKs, no PSN checks, no ICRC work per frame (each frame is a
 * copy of one built and sealed once), no payload copy on receive.
 *
 * Server and client meet over TCP (like perftest); the server follows the
 * client's mode and parameters. The pieces:
 *   main.c   --help, options, the run as a whole
 *   util.c   names, the stop flag, the clock, error messages
 *   side.c   this side: interface facts, the AF_XDP or UDP port, roxe's
 *            XDP program and the QPN registered in it
 *   ctrl.c   the TCP control connection: lines of key=value words
 *   frame.c  the frame template, built once; checking a received frame
 *   roles.c  client and server: the hello, then bw or lat, then the report
 *   bw.c     bw: the send loop, the counting loop, the table and JSON
 *   lat.c    lat: the ping-pong loops, percentiles, the table and JSON
 *   loss.c   counters that say where frames were lost
 */
#ifndef ROXE_RAWPERF_H
#define ROXE_RAWPERF_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_xdp.h>
#include "roxe/frame.h"
#include "roxe/port.h"

#define MAX_BATCH	256
#define MAX_FRAME	8192		/* the afxdp port's TX buffer (two chunks) */
#define CTRL_TIMEOUT_MS	30000		/* any control message */
#define MSG_MAX		512		/* a control line */
#define MAX_LAT_FRAMES	8		/* lat: frames each way (-k) */

enum backend { BACKEND_AFXDP, BACKEND_UDP };
enum mode { MODE_BW, MODE_LAT };

extern const char *const backend_names[];	/* by enum backend */
extern const char *const mode_names[];		/* by enum mode */

struct opts {
	const char	*ifname;
	const char	*server;	/* client: the server's host; NULL: be the server */
	enum backend	backend;
	enum mode	mode;
	int		port;
	uint32_t	size;
	bool		size_set;
	double		seconds;	/* bw; 0 when -n rules */
	uint64_t	iters;		/* bw: frames (0: -D rules); lat: round trips */
	uint64_t	warmup;
	unsigned	batch;
	uint32_t	qpn;
	int		cpu;
	unsigned	frames;		/* lat: frames each way per exchange */
	bool		json;
};

/* This side: interface facts, the port, the XDP program. */
struct side {
	uint8_t		mac[6];
	uint8_t		gid[16];
	unsigned	mtu;
	struct roxe_port *port;
	struct roxe_afxdp *afxdp;
	struct roxe_xdp	*xdp;
	bool		xdp_ours;	/* we attached it: detach on exit */
	bool		qp_set;
	uint32_t	qpn;
};

/* The other side, from the control connection. */
struct peer {
	uint8_t		mac[6];
	uint8_t		gid[16];
	uint32_t	qpn;
	bool		zerocopy;
};

/* A frame to send: built and sealed once, copied into every buffer. */
struct tmpl {
	uint8_t		buf[MAX_FRAME];
	struct roxe_pkt	pkt;
	uint32_t	len;
	uint32_t	psn;
};

/* What a bw run measured; the server's figures reach the client in its
 * RESULT line. */
struct bw_result {
	uint64_t	sent, sent_ns;
	uint64_t	rx_frames, rx_bytes, rx_ns, bad;
	int64_t		xdp_steered;	/* afxdp: steered by XDP; -1 unknown */
	int64_t		udp_errors;	/* udp: receive-buffer errors; -1 unknown */
	/* afxdp, the kernel's socket counters (XDP_STATISTICS); -1 unknown */
	int64_t		xsk_ring_full, xsk_fill_empty, xsk_other;
	uint64_t	tx_kicks;
};

/* util.c */
extern volatile sig_atomic_t interrupted;	/* SIGINT/SIGTERM: every loop ends */
void on_stop_signal(int sig);			/* sets interrupted */
uint64_t now_ns(void);				/* CLOCK_MONOTONIC */
void __attribute__((format(printf, 1, 2))) err_msg(const char *fmt, ...);

/* side.c: each prints its own error. */
int side_iface_query(const char *ifname, struct side *s);
int side_open_afxdp(const struct opts *o, struct side *s);
int side_open_udp(const struct opts *o, struct side *s);
void side_close(const struct opts *o, struct side *s);

/* ctrl.c */
int ctrl_listen(int port);
int ctrl_accept(int lfd);
int ctrl_connect(const char *host, int port);
int ctrl_recv(int fd, char *buf, size_t cap, int timeout_ms);
int __attribute__((format(printf, 2, 3))) ctrl_send(int fd, const char *fmt, ...);
int ctrl_poll(int fd, uint64_t *idle, char *buf, size_t cap);
bool kv(const char *line, const char *key, char *out, size_t cap);
bool kv_u64(const char *line, const char *key, uint64_t *v);
bool kv_i64(const char *line, const char *key, int64_t *v);
int peer_parse(const char *line, struct peer *p);
void side_words(const struct side *s, char *buf, size_t len);

/* frame.c */
unsigned ip_bytes(bool v4, uint32_t size);
int tmpl_build(struct tmpl *t, const struct side *me, const struct peer *peer,
	       uint32_t size, uint32_t psn);
bool frame_ok(const struct roxe_buf *b, uint32_t qpn, uint32_t size, uint32_t *psn);
bool send_copies(struct roxe_port *p, const struct tmpl *t, unsigned n);

/* loss.c */
int64_t rx_drop_counter(const struct opts *o, const struct side *s);
bool xsk_stats(struct xdp_statistics *sum);

/* bw.c */
int bw_client(const struct opts *o, struct side *s, const struct tmpl *t, int cfd,
	      struct bw_result *r);
int bw_server(const struct opts *o, struct side *s, uint32_t size, int cfd,
	      struct bw_result *r);
void bw_print(const struct opts *o, const struct side *s, bool server, uint32_t size,
	      uint32_t frame_bytes, unsigned batch, bool v4, const struct bw_result *r);

/* lat.c */
int lat_client(const struct opts *o, struct side *s, const struct peer *peer,
	       struct tmpl *t, int cfd, uint64_t *rtt, uint64_t *lost_out);
int lat_server(struct side *s, const struct peer *peer, uint32_t size, unsigned frames,
	       int cfd, uint64_t *served);
void lat_print(const struct opts *o, const struct side *s, uint32_t frame_bytes,
	       bool v4, uint64_t *rtt, uint64_t lost);

/* roles.c: the exit status of the run */
int run_client(const struct opts *o, struct side *s);
int run_server(const struct opts *o, struct side *s, int lfd);

#endif /* ROXE_RAWPERF_H */
