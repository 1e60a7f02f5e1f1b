// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-perf: RDMA bandwidth and latency on roxe, the way perftest measures
 * them, and with --perftest against a real perftest at the other end.
 * main.c holds the options and the order of a run, which follows perftest
 * 4.5's socket exchange test by test (exchange.c has the bytes).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perf.h"
#include "roxe/cli.h"
#include "roxe/limits.h"
#include "roxe/version.h"
#include "tool.h"

volatile sig_atomic_t perf_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	perf_interrupted = 1;
}

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
"Usage:\n"
"  %1$s TEST MODE --netdev IFACE [options]          server: wait for a client\n"
"  %1$s TEST MODE --netdev IFACE [options] HOST     client: connect to HOST\n"
"\n"
"  TEST  write | read | send | atomic\n"
"  MODE  bw | lat\n"
"\n"
"RDMA bandwidth and latency over roxe, measured as perftest measures them\n"
"(ib_write_bw, ib_read_lat, ...), on one or more RC QPs. The client drives\n"
"the test; a roxe-perf server takes the client's options, so it needs only\n"
"TEST, MODE and --netdev. With --perftest, the socket exchange is perftest\n"
"4.5's and either end may be a real ib_*_bw / ib_*_lat on any RoCE v2 device;\n"
"then both ends need the same options, as with perftest itself.\n"
"roxe attaches to IFACE if it is not attached yet (and detaches at exit).\n"
"\n"
"Options:\n"
"      --netdev=IFACE     network interface to run on (required)\n"
"  -d, --ib-dev=NAME      refused: perftest's -d names an RDMA device, and\n"
"                         roxe-perf opens none: it runs its own engine on\n"
"                         --netdev's interface (roxe(7), COMMAND LINE)\n"
"  -p, --port=PORT        TCP port of the exchange (default 18515)\n"
"  -s, --size=BYTES       message size (default: bw 65536, lat 2, atomic 8)\n"
"  -a, --all              sweep sizes 2 B .. 8 MiB, powers of two\n"
"  -n, --iters=N          messages per QP (bw; default 5000 write, 1000 others)\n"
"                         or exchanges (lat; default 1000)\n"
"  -D, --duration=SEC     bw: run for SEC seconds instead of -n\n"
"  -q, --qp=N             QPs (bw; default 1, at most %2$d); they share one CQ\n"
"                         of %3$d entries, so above %4$d QPs the default depths\n"
"                         shrink to fit (-t and -r given must fit it)\n"
"  -m, --mtu=BYTES        path MTU 256..4096 (default: the port's active MTU;\n"
"                         both ends use the smaller of theirs)\n"
"  -t, --tx-depth=N       send queue depth per QP (default: bw 128, lat 1 as\n"
"                         perftest: each send waits for the last one's ACK)\n"
"  -r, --rx-depth=N       receive queue depth per QP (default 512)\n"
"  -u, --qp-timeout=N     resend after 4.096 us * 2^N without an ACK (default\n"
"                         14: 67 ms; this end's QPs only, as perftest)\n"
"  -Q, --cq-mod=N         bw: request a completion every N sends (default 100)\n"
"  -I, --inline_size=N    send up to N bytes inline (default 0)\n"
"  -A, --atomic_type=T    CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
"  -e, --events           sleep on completion events instead of polling\n"
"  -P, --polled           no engine threads: the polling loop runs the engine\n"
"                         (run-to-completion; lowest latency, one busy core per\n"
"                         end; not with -e)\n"
"  -E, --engines=N        engine threads (default 1)\n"
"  -B, --backend=B        afxdp (default) or udp\n"
"      --cc=SETTINGS      congestion control of this end's device: on (the\n"
"                         default), off, or DCQCN's name=value,... (roxed(8))\n"
"      --umem-mr          this end's buffers in the device's UMEM\n"
"                         (roxe_alloc_umem_mr): RC frames from them leave\n"
"                         without the copy into the UMEM (afxdp)\n"
"      --xdp-copy         bind AF_XDP in copy mode (XDP_COPY) even where the\n"
"                         driver offers zero-copy: for comparing the two\n"
"      --verify           payloads carry a pattern the receiving end checks\n"
"                         byte for byte (SEND: every message; WRITE: every slot\n"
"                         of the target buffer at the end; READ: every message;\n"
"                         atomics: every returned value and the final count);\n"
"                         any mismatch is an error. roxe-perf at both ends.\n"
"                         Without it messages cycle through one page, as\n"
"                         perftest's (one address above 2 KiB): in the cache.\n"
"      --json             results as one JSON object on stdout (text on stderr)\n"
"      --progress         a progress line on stderr once a second (bw; default\n"
"                         when stderr is a terminal)\n"
"      --perftest         speak perftest 4.5's exchange (see above)\n"
"      --report_gbits     accepted: bandwidth is always in Gb/s\n"
"  -U, --report-unsorted  lat: after the table, every exchange's latency in the\n"
"                         order they ran (\"N usec\", the table's unit), as\n"
"                         perftest's -U: when the outliers came, not only how\n"
"                         many (on stderr with --json)\n"
"  -x, --gid-index=N      source GID index, rxe's table (default: the interface's\n"
"                         address roxe opened the device with)\n"
"  -i, --ib-port=1        accepted; roxe devices have one port\n"
"  -F                     accepted (perftest's CPU frequency warning)\n"
"  -h, --help             this text\n"
"  -V, --version          print roxe-perf's version and exit\n"
"\n"
"Output: bandwidth counts message bytes (Gb/s = 10^9 bit/s) and the peak is\n"
"the best tenth of the run; latency is per perftest: the time between\n"
"successive posts, halved for send and write (one way), whole for read and\n"
"atomic; the two largest samples are dropped. A write/read/atomic bw server\n"
"prints the client's figures, which it receives at the end.\n"
"\n"
"Exit status: 0 on success, 1 when the test failed or --verify found a\n"
"mismatch, 2 on a usage error.\n", argv0, PERF_MAX_QPS, ROXE_MAX_CQE,
		(ROXE_MAX_CQE - 1) / (128 + 512));
}

/* The CQ takes every WR of every QP (qps * (tx + rx) + 1 entries, as
 * resources.c sizes it). Without -t/-r, many QPs share what one CQ holds:
 * 4096 QPs get 7 sends and 8 receives each; a depth given stays. */
int perf_fit_depths(struct perf_opts *o, bool tx_set, bool rx_set)
{
	unsigned per_qp = (ROXE_MAX_CQE - 1) / o->qps;

	if ((unsigned long long)o->qps * (o->tx_depth + o->rx_depth) + 1 <= ROXE_MAX_CQE)
		return 0;
	if ((tx_set && rx_set) || per_qp < 2 || (tx_set && o->tx_depth >= per_qp) ||
	    (rx_set && o->rx_depth >= per_qp))
		return -1;
	if (!tx_set && !rx_set && o->tx_depth > per_qp / 2)
		o->tx_depth = per_qp / 2;
	if (!rx_set)
		o->rx_depth = per_qp - o->tx_depth;
	else
		o->tx_depth = per_qp - o->rx_depth;
	return 0;
}

enum { O_NETDEV = 256, O_VERIFY, O_JSON, O_PERFTEST, O_GBITS, O_PROGRESS, O_CC, O_UMEM_MR,
       O_XDP_COPY };

static const char short_opts[] = "d:p:s:an:D:q:m:t:r:Q:u:I:A:ePE:B:x:i:UFhV";
static const struct option long_opts[] = {
	{ "netdev", 1, NULL, O_NETDEV }, { "ib-dev", 1, NULL, 'd' },
	{ "port", 1, NULL, 'p' }, { "size", 1, NULL, 's' },
	{ "all", 0, NULL, 'a' }, { "iters", 1, NULL, 'n' }, { "duration", 1, NULL, 'D' },
	{ "qp", 1, NULL, 'q' }, { "mtu", 1, NULL, 'm' }, { "tx-depth", 1, NULL, 't' },
	{ "rx-depth", 1, NULL, 'r' }, { "cq-mod", 1, NULL, 'Q' },
	{ "qp-timeout", 1, NULL, 'u' },
	{ "inline_size", 1, NULL, 'I' }, { "atomic_type", 1, NULL, 'A' },
	{ "events", 0, NULL, 'e' }, { "polled", 0, NULL, 'P' },
	{ "engines", 1, NULL, 'E' }, { "backend", 1, NULL, 'B' },
	{ "verify", 0, NULL, O_VERIFY }, { "json", 0, NULL, O_JSON },
	{ "perftest", 0, NULL, O_PERFTEST }, { "report_gbits", 0, NULL, O_GBITS },
	{ "progress", 0, NULL, O_PROGRESS }, { "gid-index", 1, NULL, 'x' },
	{ "report-unsorted", 0, NULL, 'U' },
	{ "ib-port", 1, NULL, 'i' }, { "help", 0, NULL, 'h' }, { "cc", 1, NULL, O_CC },
	{ "version", 0, NULL, 'V' }, { "umem-mr", 0, NULL, O_UMEM_MR },
	{ "xdp-copy", 0, NULL, O_XDP_COPY },
	{ 0 },
};

/* Options given whose absence leaves a default that depends on others. */
struct given {
	bool size, iters, tx, rx, cq;
};

/* An option group's answer for an option of another group. */
#define NOT_MINE (-1)

/* --netdev -d -B -E -P --cc --umem-mr --xdp-copy -x -i -F: the device this end opens. */
static int opt_device(int opt, const char *arg, struct perf_opts *o, struct given *g)
{
	unsigned one;

	(void)g;
	switch (opt) {
	case O_NETDEV: o->ifname = arg; return 0;
	case 'd': return tool_ib_dev_refused(arg);
	case 'B': return tool_backend(arg, &o->backend);
	case 'E': return tool_uint("-E/--engines", arg, 1, 64, &o->engines);
	case 'P': o->polled = true; return 0;
	case O_CC: o->cc = arg; return 0;	/* checked by roxe_device_open */
	case O_UMEM_MR: o->umem_mr = true; return 0;
	case O_XDP_COPY: o->xdp_copy = true; return 0;
	case 'x': return tool_int("-x/--gid-index", arg, 0, 255, &o->gid_index);
	case 'i': return tool_uint("-i/--ib-port (roxe devices have one port)", arg, 1, 1, &one);
	case 'F': return 0;
	}
	return NOT_MINE;
}

/* -s -a -n -D -q -A --verify: what the test moves, and for how long. */
static int opt_workload(int opt, const char *arg, struct perf_opts *o, struct given *g)
{
	uint64_t v;
	int err;

	switch (opt) {
	case 's':
		err = tool_num("-s/--size", arg, 1, PERF_SWEEP_MAX, TOOL_NUM_SUFFIX, &v);
		if (!err)
			o->size = (uint32_t)v;
		g->size = true;
		return err;
	case 'a': o->sweep = true; return 0;
	case 'n':
		g->iters = true;
		return tool_num("-n/--iters", arg, 1, 1ull << 40, TOOL_NUM_SUFFIX, &o->iters);
	case 'D': return tool_uint("-D/--duration", arg, 1, 86400, &o->duration);
	case 'q': return tool_uint("-q/--qp", arg, 1, PERF_MAX_QPS, &o->qps);
	case 'A':
		if (!strcmp(arg, "CMP_AND_SWAP"))
			o->cmp_swap = true;
		else if (strcmp(arg, "FETCH_AND_ADD"))
			return tool_usage_error("-A/--atomic_type: CMP_AND_SWAP or FETCH_AND_ADD, "
						"not '%s'", arg);
		return 0;
	case O_VERIFY: o->verify = true; return 0;
	}
	return NOT_MINE;
}

/* -m -t -r -Q -I -u -e: the QPs, their queues and the CQ. */
static int opt_queues(int opt, const char *arg, struct perf_opts *o, struct given *g)
{
	uint64_t v;
	int err;

	switch (opt) {
	case 'm':
		if (tool_parse_mtu(arg, &o->mtu))
			return tool_usage_error("-m/--mtu: 256, 512, 1024, 2048 or 4096, not '%s'", arg);
		return 0;
	case 't':
		g->tx = true;
		return tool_uint("-t/--tx-depth", arg, 1, 16383, &o->tx_depth);
	case 'r':
		g->rx = true;
		return tool_uint("-r/--rx-depth", arg, 1, 16383, &o->rx_depth);
	case 'Q':
		g->cq = true;
		return tool_uint("-Q/--cq-mod", arg, 1, 16383, &o->cq_mod);
	case 'I':
		err = tool_num("-I/--inline_size", arg, 0, 512, 0, &v);
		if (!err)
			o->inline_size = (uint32_t)v;
		return err;
	case 'u': return tool_uint("-u/--qp-timeout", arg, 1, 31, &o->qp_timeout);
	case 'e': o->events = true; return 0;
	}
	return NOT_MINE;
}

/* -p --perftest --json --progress -U --report_gbits: the exchange with the
 * other end, and how results are written. */
static int opt_exchange(int opt, const char *arg, struct perf_opts *o, struct given *g)
{
	(void)g;
	switch (opt) {
	case 'p': return tool_int("-p/--port", arg, 1, 65535, &o->port);
	case O_PERFTEST: o->perftest = true; return 0;
	case O_JSON: o->json = true; return 0;
	case O_PROGRESS: o->progress = true; return 0;
	case 'U': o->unsorted = true; return 0;
	case O_GBITS: return 0;
	}
	return NOT_MINE;
}

/* TEST MODE [HOST]: the words after the options (argc of them). */
static int parse_words(int argc, char **argv, struct perf_opts *o)
{
	if (argc < 2 || argc > 3)
		return tool_usage_error(argc < 2 ? "a TEST and a MODE are required" :
					"unexpected argument '%s'", argv[argc - 1]);
	if (!strcmp(argv[0], "write"))
		o->test = TEST_WRITE;
	else if (!strcmp(argv[0], "read"))
		o->test = TEST_READ;
	else if (!strcmp(argv[0], "send"))
		o->test = TEST_SEND;
	else if (!strcmp(argv[0], "atomic"))
		o->test = TEST_ATOMIC;
	else
		return tool_usage_error("unknown test %s (write, read, send, atomic)", argv[0]);
	if (!strcmp(argv[1], "bw"))
		o->mode = MODE_BW;
	else if (!strcmp(argv[1], "lat"))
		o->mode = MODE_LAT;
	else
		return tool_usage_error("unknown mode %s (bw, lat)", argv[1]);
	o->server = argc == 3 ? argv[2] : NULL;
	return 0;
}

/* Options that exclude each other, or the test. */
static int check_combos(const struct perf_opts *o, const struct given *g)
{
	if (!o->ifname)
		return tool_usage_error("--netdev IFACE is required (the network interface)");
	if (o->polled && o->events)
		return tool_usage_error("-P (polled) and -e (events) exclude each other");
	if (o->verify && o->perftest)
		return tool_usage_error("--verify needs roxe-perf at both ends, not --perftest");
	if (o->mode == MODE_LAT && (o->qps > 1 || o->duration))
		return tool_usage_error("latency tests run one QP for -n exchanges (no -q, no -D)");
	if (o->duration && g->iters)
		return tool_usage_error("-n and -D exclude each other");
	if (o->test == TEST_ATOMIC && (o->sweep || (g->size && o->size != 8)))
		return tool_usage_error("atomics are 8 bytes: no -s or -a");
	return 0;
}

/* What was not given, by test and mode; depths cut to the iterations and
 * to what the CQ holds. */
static int fill_defaults(struct perf_opts *o, const struct given *g)
{
	if (o->test == TEST_ATOMIC)
		o->size = 8;
	else if (!g->size)
		o->size = o->mode == MODE_BW ? 65536 : 2;
	if (!g->iters)
		o->iters = o->mode == MODE_BW && o->test == TEST_WRITE ? 5000 : 1000;
	if (!g->tx)
		o->tx_depth = o->mode == MODE_BW ? 128 : 1;	/* perftest's */
	if (o->mode == MODE_BW && !o->duration && o->tx_depth > o->iters)
		o->tx_depth = (unsigned)o->iters;
	if (o->rx_depth > o->iters && !o->duration)
		o->rx_depth = (unsigned)o->iters;
	if (perf_fit_depths(o, g->tx, g->rx))
		return tool_usage_error("%u QPs of depth %u + %u need %llu CQ entries, more than "
					"%d: smaller -t/-r or fewer QPs", o->qps, o->tx_depth,
					o->rx_depth,
					(unsigned long long)o->qps * (o->tx_depth + o->rx_depth) + 1,
					ROXE_MAX_CQE);
	if (!g->cq || o->cq_mod > o->tx_depth)
		o->cq_mod = o->cq_mod < o->tx_depth ? o->cq_mod : o->tx_depth;
	if (o->duration)
		o->iters = 0;
	return 0;
}

/* The command line into *o: 0, or the exit status of a usage error. */
static int parse(int argc, char **argv, struct perf_opts *o)
{
	static int (*const groups[])(int, const char *, struct perf_opts *, struct given *) = {
		opt_device, opt_workload, opt_queues, opt_exchange,
	};
	struct given g = { 0 };
	int opt, err;

	*o = (struct perf_opts){
		.port = PERF_DEF_PORT, .backend = ROXE_BACKEND_AFXDP, .engines = 1, .qps = 1,
		.rx_depth = 512, .cq_mod = 100, .gid_index = -1, .qp_timeout = 14,
		.progress = isatty(STDERR_FILENO),
	};
	while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout, "roxe-perf");
			exit(0);
		}
		if (opt == 'V')
			tool_version_exit("roxe-perf");
		err = NOT_MINE;
		for (unsigned i = 0; i < sizeof(groups) / sizeof(groups[0]) && err == NOT_MINE; i++)
			err = groups[i](opt, optarg, o, &g);
		if (err == NOT_MINE)
			return tool_usage_error(NULL);
		if (err)
			return err;
	}
	err = parse_words(argc - optind, argv + optind, o);
	if (!err)
		err = check_combos(o, &g);
	if (!err)
		err = fill_defaults(o, &g);
	return err;
}

/* --- the runs, in perftest's order of socket exchanges ---------------------- */
static uint32_t first_size(const struct perf_opts *o)
{
	return o->sweep ? PERF_SWEEP_MIN : o->size;
}

static uint32_t next_size(const struct perf_opts *o, uint32_t s)
{
	return o->sweep && s < PERF_SWEEP_MAX ? s * 2 : 0;
}

static int hs_all(struct perf_ctx *c)
{
	for (unsigned i = 0; i < c->nqps; i++)
		if (perf_oob_hs(c, i))
			return -1;
	return 0;
}

/* How much of the peer's buffer we may use: a roxe-perf peer sized it from
 * the same options; perftest, given the same -s/-a, exposes at least the
 * largest message (8 MiB with -a). */
static void set_remote_len(struct perf_ctx *c)
{
	for (unsigned i = 0; i < c->nqps; i++)
		c->qp[i].remote_len = c->o->perftest ? c->max_size : c->qp[i].buf_len;
}

static void emit(struct perf_ctx *c, const struct perf_result *r, bool *first)
{
	perf_report_row(c, r);
	if (c->o->json)
		perf_json_row(c, r, *first);
	*first = false;
}

/* ib_write_bw, ib_read_bw, ib_atomic_bw: the server is passive, blocked in
 * the handshake that ends the test, then prints the client's report. */
static int run_rdma_bw(struct perf_ctx *c, bool *first)
{
	const struct perf_opts *o = c->o;
	struct perf_result r = { 0 };

	if (hs_all(c) || perf_connect(c) || hs_all(c))
		return -1;
	set_remote_len(c);
	perf_report_addresses(c);
	if (o->verify && o->test == TEST_READ && !o->server)
		perf_bw_fill_sources(c);
	if (perf_bw_prepare(c, first_size(o)) || perf_oob_hs(c, 0))	/* ready */
		return -1;
	perf_report_table_head(c);
	if (o->server) {
		for (uint32_t s = first_size(o); s; s = next_size(o, s)) {
			if ((s != first_size(o) && perf_bw_prepare(c, s)) || perf_run_bw(c, s, &r))
				return -1;
			emit(c, &r, first);
		}
		if (perf_oob_hs(c, 0) || perf_oob_report(c, &r))
			return -1;
	} else {
		if (perf_serve_until_peer(c) || perf_oob_hs(c, 0) || perf_oob_report(c, &r))
			return -1;
		emit(c, &r, first);
		if (o->verify && perf_bw_prepare(c, r.size) == 0)
			perf_bw_server_verify(c, r.iters / c->nqps);
	}
	return perf_oob_finish(c);
}

/* ib_send_bw: a ready handshake before every size (the server's receives
 * are up), one after each size of a sweep. */
static int run_send_bw(struct perf_ctx *c, bool *first)
{
	const struct perf_opts *o = c->o;
	struct perf_result r;

	if (hs_all(c) || perf_connect(c) || perf_oob_hs(c, 0) || hs_all(c))
		return -1;
	set_remote_len(c);
	perf_report_addresses(c);
	perf_report_table_head(c);
	for (uint32_t s = first_size(o); s; s = next_size(o, s)) {
		if (perf_bw_prepare(c, s) || perf_oob_hs(c, 0) || perf_run_bw(c, s, &r))
			return -1;
		emit(c, &r, first);
		if (o->sweep && perf_oob_hs(c, 0))
			return -1;
	}
	return perf_oob_finish(c);
}

static int run_lat(struct perf_ctx *c, bool *first)
{
	const struct perf_opts *o = c->o;
	bool passive = !o->server && (o->test == TEST_READ || o->test == TEST_ATOMIC);
	struct perf_result r;

	/* send_lat: HS, connect, HS, HS; the others: HS, HS, connect, HS, HS.
	 * The last one is the ready signal: a passive server's buffer must
	 * hold what the client will read by then. */
	if (perf_oob_hs(c, 0))
		return -1;
	if (o->test != TEST_SEND && perf_oob_hs(c, 0))
		return -1;
	if (perf_connect(c) || perf_oob_hs(c, 0))
		return -1;
	if (passive && perf_lat_prepare(c, c->max_size))
		return -1;
	if (perf_oob_hs(c, 0))
		return -1;
	set_remote_len(c);
	perf_report_addresses(c);
	if (passive) {		/* read/atomic_lat server: wait for the end */
		if (perf_serve_until_peer(c))
			return -1;
		return perf_oob_finish(c);
	}
	perf_report_table_head(c);
	for (uint32_t s = first_size(o); s; s = next_size(o, s)) {
		if (perf_lat_prepare(c, s))
			return -1;
		if (o->test == TEST_SEND && perf_oob_hs(c, 0))	/* ready */
			return -1;
		if (perf_run_lat(c, s, &r))
			return -1;
		emit(c, &r, first);
	}
	/* ib_write_lat ends without a word; the others close with a handshake. */
	return o->test == TEST_WRITE ? 0 : perf_oob_finish(c);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	static struct perf_ctx c;
	struct perf_opts o;
	bool first = true;
	int ret = 1, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tool_cli_init("roxe-perf", "Usage: roxe-perf TEST MODE --netdev IFACE [options] [HOST]\n");
	err = parse(argc, argv, &o);
	if (err)
		return err;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	c.sock = -1;
	if (perf_open(&c, &o) || perf_oob_open(&c) || perf_oob_prefix(&c, &o, &c.mtu))
		goto out;
	if (!o.server && o.mode == MODE_BW && o.duration == 0 && o.rx_depth > o.iters)
		o.rx_depth = (unsigned)o.iters;
	if (perf_setup(&c))
		goto out;
	perf_report_header(&c);
	if (o.mode == MODE_LAT)
		err = run_lat(&c, &first);
	else if (o.test == TEST_SEND)
		err = run_send_bw(&c, &first);
	else
		err = run_rdma_bw(&c, &first);
	if (!err) {
		perf_report_end(&c);
		ret = c.verify_errors ? 1 : 0;
	}
out:
	if (o.json)	/* one document, also when the run failed */
		perf_json_end(&c, first, ret == 0);
	if (perf_interrupted)
		fprintf(stderr, "%s: interrupted\n", argv[0]);
	perf_teardown(&c);
	return ret;
}
