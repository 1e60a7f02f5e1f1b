/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxe-perf: perftest for roxe. The pieces:
 *   main.c       options, the run as a whole
 *   resources.c  device, PD, CQs, QPs and their buffers; QP connection
 *   exchange.c   the out-of-band TCP exchange (perftest's, so either end may
 *                be a real ib_*_bw / ib_*_lat)
 *   bw.c, lat.c  the measurement loops
 *   pattern.c    --verify: payload patterns both ends can predict
 *   report.c     perftest-shaped tables, JSON, the progress line
 */
#ifndef ROXE_PERF_H
#define ROXE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include "roxe/verbs.h"

/* -q: QPs of one run. All share one CQ of ROXE_MAX_CQE entries, so many
 * QPs get smaller default queue depths (perf_fit_depths). */
#define PERF_MAX_QPS	4096
/* Message buffers of all QPs together: each QP gets at most 16 MiB and
 * PERF_BUF_SHARE / QPs, but always two messages; a run that would need
 * more than PERF_BUF_MAX in all is refused (at both ends). */
#define PERF_BUF_SHARE	(256ull << 20)
#define PERF_BUF_MAX	(2ull << 30)
#define PERF_DEF_PORT	18515		/* perftest's */
#define PERF_SWEEP_MIN	2		/* -a: 2 B .. 8 MiB, as perftest */
#define PERF_SWEEP_MAX	(8u << 20)

enum perf_test { TEST_WRITE, TEST_READ, TEST_SEND, TEST_ATOMIC };
enum perf_mode { MODE_BW, MODE_LAT };

struct perf_opts {
	enum perf_test	test;
	enum perf_mode	mode;
	const char	*server;	/* NULL: this end is the server */
	int		port;
	const char	*ifname;
	enum roxe_backend backend;
	unsigned	engines;
	const char	*cc;		/* --cc: congestion control (roxe_device_attr) */
	bool		polled;		/* no engine threads (run-to-completion) */
	bool		umem_mr;	/* --umem-mr: buffers in the UMEM (roxe_alloc_umem_mr) */
	bool		xdp_copy;	/* --xdp-copy: AF_XDP copy mode (roxe_device_attr) */
	bool		events;		/* -e: sleep on CQ events */
	uint32_t	size;
	bool		sweep;		/* -a */
	uint64_t	iters;		/* 0 with duration */
	unsigned	duration;	/* -D seconds; 0: -n */
	unsigned	qps;
	enum ibv_mtu	mtu;		/* 0: the port's active MTU */
	unsigned	tx_depth;
	unsigned	rx_depth;
	unsigned	cq_mod;		/* signal one send WR in cq_mod */
	uint32_t	inline_size;
	bool		cmp_swap;	/* atomic: CMP_AND_SWAP, else FETCH_AND_ADD */
	bool		verify;
	bool		json;
	bool		perftest;	/* the peer may be a real perftest tool */
	bool		progress;	/* a progress line on stderr, once a second */
	bool		unsorted;	/* -U: lat: every exchange's latency, in order */
	int		gid_index;	/* -x; -1: the device's own address */
	unsigned	qp_timeout;	/* -u: 4.096 us * 2^N before a resend */
};

/* One QP's address as the two ends swap it (perftest's pingpong_dest). */
struct perf_dest {
	uint32_t	lid, out_reads, qpn, psn, rkey, srqn;
	int		gid_index;
	uint64_t	vaddr;
	union ibv_gid	gid;
};

struct perf_qp {
	struct roxe_qp	*qp;
	struct roxe_mr	*mr;
	uint8_t		*buf;		/* this QP's buffer: slots of msg size */
	size_t		buf_len;
	bool		umem;		/* buf is mr's, in the UMEM (--umem-mr) */
	struct perf_dest local, remote;
	size_t		remote_len;	/* bytes of the peer's buffer we may use */
	/* bw loop state */
	uint64_t	posted, completed;
	uint64_t	checked;	/* --verify: messages checked so far */
	uint64_t	rx_posted;	/* send bw server: receives posted */
	bool		active;		/* bw client: has messages to come */
	bool		queued;		/* ... on this turn's list to post to */
};

struct perf_ctx {
	const struct perf_opts *o;
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct roxe_cq		*cq;		/* sends and receives */
	struct roxe_comp_channel *ch;
	struct perf_qp		qp[PERF_MAX_QPS];
	unsigned		nqps;
	struct ibv_port_attr	port;
	uint32_t		max_size;	/* largest message of the run */
	unsigned		out_reads;	/* READ/ATOMIC outstanding per QP */
	int			sock;		/* the out-of-band connection */
	enum ibv_mtu		mtu;		/* path MTU both ends agreed on */
	uint64_t		verify_errors;
	bool			watch_peer;	/* a CQ wait also ends when ... */
	bool			peer_spoke;	/* ... the peer writes to the socket */
};

struct perf_result {
	uint32_t	size;
	uint64_t	iters;		/* messages (bw) or exchanges (lat) */
	double		seconds;
	/* bw */
	double		gbps_peak, gbps_avg, mpps;
	/* lat, microseconds */
	double		lat_min, lat_max, lat_typical, lat_avg, lat_stdev, lat_p99, lat_p999;
	const char	*lat_what;	/* "half round trip" or "round trip" */
	/* lat: page faults this process took while the exchanges ran (a
	 * fault inside the timed loop is a few microseconds of latency that
	 * is the tool's, not the path's) */
	uint64_t	minor_faults, major_faults;
};

extern volatile sig_atomic_t perf_interrupted;

/* main.c: shrink the default depths so that qps * (tx + rx) + 1 CQ entries
 * fit one CQ; 0, or -1 when depths given explicitly do not fit. */
int perf_fit_depths(struct perf_opts *o, bool tx_set, bool rx_set);

/* resources.c: perf_open (device, port) comes before the exchange's
 * prefix, perf_setup (PD, CQ, QPs, buffers) after it. */
int perf_open(struct perf_ctx *c, const struct perf_opts *o);
int perf_setup(struct perf_ctx *c);
int perf_connect(struct perf_ctx *c);
void perf_teardown(struct perf_ctx *c);
unsigned perf_slots(const struct perf_ctx *c, uint32_t size, size_t len);
int perf_wait_cq(struct perf_ctx *c);
int perf_poll(struct perf_ctx *c, struct ibv_wc *wc, int n);
int perf_serve_until_peer(struct perf_ctx *c);

/* exchange.c */
int perf_oob_open(struct perf_ctx *c);
int perf_oob_prefix(struct perf_ctx *c, struct perf_opts *o, enum ibv_mtu *mtu);
int perf_oob_hs(struct perf_ctx *c, unsigned qi);
int perf_oob_report(struct perf_ctx *c, struct perf_result *r);
int perf_oob_finish(struct perf_ctx *c);
bool perf_oob_readable(struct perf_ctx *c);
void perf_oob_close(struct perf_ctx *c);

/* bw.c, lat.c: one message size. prepare (post receives, fill sources)
 * comes before the two ends synchronise, run after. 0, or -1 after an
 * error (printed). */
int perf_bw_prepare(struct perf_ctx *c, uint32_t size);
int perf_run_bw(struct perf_ctx *c, uint32_t size, struct perf_result *r);
void perf_bw_server_verify(struct perf_ctx *c, uint64_t per_qp);
void perf_bw_fill_sources(struct perf_ctx *c);
int perf_lat_prepare(struct perf_ctx *c, uint32_t size);
int perf_run_lat(struct perf_ctx *c, uint32_t size, struct perf_result *r);

/* pattern.c: message msg of QP qp is a byte stream; _at starts at byte
 * off of it (READ checks a slice of a buffer filled in one go). */
void perf_pattern_fill(uint8_t *p, uint32_t len, unsigned qp, uint64_t msg);
void perf_pattern_fill_at(uint8_t *p, uint32_t len, unsigned qp, uint64_t msg, uint64_t off);
int perf_pattern_check_at(const uint8_t *p, uint32_t len, unsigned qp, uint64_t msg,
			  uint64_t off, const char *what);
/* 0 if it matches; else 1, and the first bad byte is reported on stderr
 * unless what is NULL */
int perf_pattern_check(const uint8_t *p, uint32_t len, unsigned qp, uint64_t msg,
		       const char *what);

/* report.c */
void perf_report_header(const struct perf_ctx *c);
void perf_report_addresses(const struct perf_ctx *c);
void perf_report_table_head(const struct perf_ctx *c);
void perf_report_row(const struct perf_ctx *c, const struct perf_result *r);
void perf_report_end(const struct perf_ctx *c);
void perf_json_row(const struct perf_ctx *c, const struct perf_result *r, bool first);
/* The rest of the JSON document (all of it when no row came): results and
 * whether the run succeeded. */
void perf_json_end(const struct perf_ctx *c, bool first, bool ok);
void perf_progress(const struct perf_ctx *c, double elapsed, uint64_t msgs, uint32_t size,
		   bool final);
const char *perf_test_name(enum perf_test t);
double perf_now(void);			/* seconds, monotonic */

#endif /* ROXE_PERF_H */
