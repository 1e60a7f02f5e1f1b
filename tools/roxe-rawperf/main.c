// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-rawperf: --help, the options, and the run as a whole: open this
 * side's port, then be the client or the server (roles.c), then close.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include "roxe/cli.h"
#include "roxe/limits.h"
#include "roxe/version.h"
#include "rawperf.h"

#define DEFAULT_PORT	18520
#define DEFAULT_QPN	0x7f00		/* far above the QPNs roxe devices hand out */
#define DEFAULT_SECONDS	2.0
#define DEFAULT_BW_SIZE	64
#define DEFAULT_LAT_SIZE 8
#define DEFAULT_LAT_ITERS 100000
#define DEFAULT_WARMUP	1000
#define DEFAULT_BATCH	32

static const char usage_text[] =
"NAME\n"
"    roxe-rawperf - raw RoCE v2 frame rate and latency through roxe's port layer\n"
"\n"
"SYNOPSIS\n"
"    roxe-rawperf --netdev IFACE [options] bw|lat            (server)\n"
"    roxe-rawperf --netdev IFACE [options] bw|lat HOST       (client)\n"
"\n"
"DESCRIPTION\n"
"    Measures the path roxe's transport sits on, without the transport: the\n"
"    AF_XDP sockets fed by roxe's XDP program (--backend afxdp, the default),\n"
"    or roxe's plain UDP-socket backend (--backend udp). Frames are valid\n"
"    RoCE v2 RC SEND_ONLY frames (IPv4 if IFACE has an IPv4 address, else\n"
"    IPv6) built once with roxe's frame builder, ICRC included, and copied\n"
"    into each transmit buffer; the receiver parses each frame's headers and\n"
"    nothing more. No ACKs, no PSN checks, no ICRC per frame, no payload\n"
"    copy: an upper bound for roxe-perf on the same link.\n"
"\n"
"    With afxdp, roxe's XDP program steers frames by destination QP, so each\n"
"    side registers its QPN (--qpn) in the program's QP table. roxe-rawperf\n"
"    attaches the program if IFACE has none (and detaches it on exit), or\n"
"    uses the roxe program already there (e.g. from `roxectl attach`), as\n"
"    engine 0. It needs the interface's queues to itself (no roxe device may\n"
"    run on IFACE at the same time). With udp, no XDP program may drop the\n"
"    frames: detach roxe first if it is attached.\n"
"\n"
"    The server (no HOST) opens its port, then waits for one client on TCP\n"
"    port --port, runs one test with the client's parameters, prints the\n"
"    result and exits. The control connection carries addresses (GID, MAC,\n"
"    QPN) and results, never test traffic. Both ends must be on the same link.\n"
"\n"
"MODES\n"
"    bw   The client sends frames in batches of -b, spinning, for -D seconds\n"
"         or -n frames; the server counts what arrives. Both print frames,\n"
"         Mpps and Gb/s, the server's received figures being the result:\n"
"         Gb/s counts payload bytes (as perftest counts message bytes), and\n"
"         \"frame Gb/s\" whole Ethernet frames (header to ICRC; a physical\n"
"         link adds 24 B per frame of preamble, FCS and gap). The received\n"
"         rate is over the server's window from first to last frame. Loss is\n"
"         sent minus received; with afxdp it is split into frames the XDP\n"
"         program never steered (lost before it) and frames dropped at the\n"
"         socket (RX ring full, or no free buffer in the fill ring), with udp\n"
"         the namespace's UDP receive-buffer errors are shown.\n"
"    lat  Ping-pong of one frame; both sides spin on their RX ring (no poll\n"
"         or sleep). The client times -n round trips after --warmup ones and\n"
"         prints min, median, p99, p99.9, max and mean of the round trip and\n"
"         of half the round trip (perftest's ib_send_lat reports half the\n"
"         round trip: its t_typical is the median half round trip). A frame\n"
"         without an answer within 100 ms counts as lost and is sent again.\n"
"         With -k N each side sends N copies of the frame in one transmit\n"
"         kick and the other answers once all N arrived: -k 2 moves the\n"
"         frames of an RC SEND ping-pong as ib_send_lat runs it, where each\n"
"         one way carries the message and the ACK of the one received (the\n"
"         sender waits for both: its send completion and the reply): what\n"
"         the raw path takes for the frames `roxe-perf send lat` moves.\n"
"\n"
"OPTIONS\n"
"    --netdev IFACE         network interface (required)\n"
"    -d, --ib-dev NAME      refused: -d names an RDMA device (roxe(7),\n"
"                           COMMAND LINE), and roxe-rawperf uses none\n"
"    -B, --backend afxdp|udp  port backend (default afxdp)\n"
"    -p, --port PORT        TCP control port (default 18520)\n"
"    -s, --size BYTES       payload bytes per frame (default 64 for bw, 8 for\n"
"                           lat); the IP packet must fit IFACE's MTU:\n"
"                           IPv4 adds 44 bytes, IPv6 64, plus 0-3 pad bytes.\n"
"                           With afxdp, frames over 3840 bytes (payload over\n"
"                           3780 on IPv4) take two UMEM buffers: two descriptors\n"
"                           on transmit, and a copy on receive, where the port\n"
"                           joins the pieces (as the transport gets them)\n"
"    -D, --duration SECS    bw: seconds to send (default 2)\n"
"    -n, --iters N          bw: frames to send instead of -D;\n"
"                           lat: timed round trips (default 100000)\n"
"    -w, --warmup N         lat: untimed round trips first (default 1000)\n"
"    -b, --batch N          bw: frames per batch/transmit kick, 1-256 (default 32)\n"
"    -k, --frames N         lat: frames each way per exchange, 1-8 (default 1)\n"
"    --qpn N                this side's QPN, 2-32767 (default 32512 = 0x7f00)\n"
"    -c, --cpu N            pin this process to CPU N\n"
"    --json                 print one JSON object instead of the table\n"
"    -h, --help             this text\n"
"    -V, --version          print roxe-rawperf's version and exit\n"
"    On the server, -s, -D, -n, -w, -b and -k are ignored: the client's apply.\n"
"\n"
"OUTPUT\n"
"    The table is for people. --json prints one object on stdout (messages\n"
"    go to stderr). Common keys: tool, mode, role, backend, iface, zerocopy,\n"
"    family (4 or 6), size (payload bytes), frame_bytes.\n"
"    bw:  batch, sent {frames, seconds, mpps, gbps, frame_gbps},\n"
"         received {frames, seconds, mpps, gbps, frame_gbps, bad},\n"
"         lost, loss_pct; afxdp: lost_before_xdp, dropped_at_socket, and\n"
"         the kernel's reasons for the latter (XDP_STATISTICS of the server's\n"
"         sockets) xsk_rx_ring_full, xsk_fill_ring_empty, xsk_rx_dropped_other;\n"
"         udp: udp_rcvbuf_errors; -1 where unknown. gbps, mpps: the\n"
"         received figures, the result.\n"
"    lat: iters, warmup, frames (-k), lost, rtt_us and half_rtt_us, each\n"
"         {min, median, p99, p999, max, mean}; the server prints frames and\n"
"         served (frames answered).\n"
"\n"
"EXIT STATUS\n"
"    0 the test ran (loss is a result, not an error); 1 it could not run or\n"
"    nothing arrived; 2 usage error.\n"
"\n"
"EXAMPLES\n"
"    ip netns exec h2 roxe-rawperf --netdev veth2 bw &\n"
"    ip netns exec h1 roxe-rawperf --netdev veth1 -s 1024 -D 3 bw 10.99.0.2\n"
"    ip netns exec h2 roxe-rawperf --netdev veth2 --backend udp lat &\n"
"    ip netns exec h1 roxe-rawperf --netdev veth1 --backend udp --json lat 10.99.0.2\n"
"    ip netns exec h1 roxe-rawperf --netdev veth1 -k 2 lat 10.99.0.2\n"
"\n"
"NOTES\n"
"    On veth in copy mode the sender's CPU does the receive side's XDP work\n"
"    and copies too, inside its sendto(); each end spins on a core of its\n"
"    own, so other work on the machine shows in every figure. Pinning with\n"
"    -c did not help on a 2-core VM (longer tails).\n"
"    tools/scripts/bench-lib.sh runs this tool between two namespaces for\n"
"    make bench.\n";

static const char short_usage[] =
"Usage: roxe-rawperf --netdev IFACE [options] bw|lat [HOST]\n";

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_NETDEV = 256, O_QPN, O_JSON };
	static const struct option lo[] = {
		{ "netdev", 1, NULL, O_NETDEV }, { "ib-dev", 1, NULL, 'd' },
		{ "backend", 1, NULL, 'B' }, { "port", 1, NULL, 'p' },
		{ "size", 1, NULL, 's' }, { "duration", 1, NULL, 'D' }, { "iters", 1, NULL, 'n' },
		{ "warmup", 1, NULL, 'w' }, { "batch", 1, NULL, 'b' }, { "qpn", 1, NULL, O_QPN },
		{ "frames", 1, NULL, 'k' }, { "cpu", 1, NULL, 'c' }, { "json", 0, NULL, O_JSON },
		{ "help", 0, NULL, 'h' }, { "version", 0, NULL, 'V' },
		{ 0 },
	};
	bool seconds_set = false, iters_set = false, warmup_set = false, frames_set = false;
	enum roxe_backend backend;
	int opt, err = 0;

	*o = (struct opts){ .backend = BACKEND_AFXDP, .port = DEFAULT_PORT,
			    .seconds = DEFAULT_SECONDS, .warmup = DEFAULT_WARMUP,
			    .batch = DEFAULT_BATCH, .qpn = DEFAULT_QPN, .cpu = -1,
			    .frames = 1 };
	while (!err && (opt = getopt_long(argc, argv, "d:B:p:s:D:n:w:b:k:c:hV", lo, NULL)) != -1) {
		switch (opt) {
		case O_NETDEV:
			if (!*optarg || strlen(optarg) >= IF_NAMESIZE)
				return tool_usage_error("--netdev: bad interface name '%s'", optarg);
			o->ifname = optarg;
			break;
		case 'd':
			return tool_ib_dev_refused(optarg);
		case 'B':
			err = tool_backend(optarg, &backend);
			o->backend = backend == ROXE_BACKEND_UDP ? BACKEND_UDP : BACKEND_AFXDP;
			break;
		case 'p':
			err = tool_int("-p/--port", optarg, 1, 65535, &o->port);
			break;
		case 's':
			err = tool_uint("-s/--size", optarg, 0, MAX_FRAME, &o->size);
			o->size_set = true;
			break;
		case 'D':
			err = tool_real("-D/--duration", optarg, 0.001, 3600, &o->seconds);
			seconds_set = true;
			break;
		case 'n':
			err = tool_num("-n/--iters", optarg, 1, 1ull << 40, 0, &o->iters);
			iters_set = true;
			break;
		case 'w':
			err = tool_num("-w/--warmup", optarg, 0, 1ull << 32, 0, &o->warmup);
			warmup_set = true;
			break;
		case 'b':
			err = tool_uint("-b/--batch", optarg, 1, MAX_BATCH, &o->batch);
			break;
		case 'k':
			err = tool_uint("-k/--frames", optarg, 1, MAX_LAT_FRAMES, &o->frames);
			frames_set = true;
			break;
		case O_QPN:
			err = tool_uint("--qpn", optarg, 2, ROXE_MAX_QPS - 1, &o->qpn);
			break;
		case 'c':
			err = tool_int("-c/--cpu", optarg, 0, CPU_SETSIZE - 1, &o->cpu);
			break;
		case O_JSON:
			o->json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			tool_version_exit("roxe-rawperf");
		default:
			return tool_usage_error(NULL);
		}
	}
	if (err)
		return err;
	if (optind == argc)
		return tool_usage_error("a mode is required: bw or lat");
	if (!strcmp(argv[optind], "bw"))
		o->mode = MODE_BW;
	else if (!strcmp(argv[optind], "lat"))
		o->mode = MODE_LAT;
	else
		return tool_usage_error("unknown mode '%s' (bw, lat)", argv[optind]);
	if (optind + 1 < argc)
		o->server = argv[optind + 1];
	if (optind + 2 < argc)
		return tool_usage_error("unexpected argument '%s'", argv[optind + 2]);
	if (!o->ifname)
		return tool_usage_error("--netdev IFACE is required (the network interface)");
	if (o->mode == MODE_BW) {
		if (seconds_set && iters_set)
			return tool_usage_error("bw: give -D (seconds) or -n (frames), not both");
		if (iters_set)
			o->seconds = 0;
		if (warmup_set)
			return tool_usage_error("-w applies to lat only");
		if (frames_set)
			return tool_usage_error("-k applies to lat only");
	} else {
		if (seconds_set)
			return tool_usage_error("-D applies to bw only (lat: -n round trips)");
		if (!iters_set)
			o->iters = DEFAULT_LAT_ITERS;
	}
	if (!o->size_set)
		o->size = o->mode == MODE_BW ? DEFAULT_BW_SIZE : DEFAULT_LAT_SIZE;
	return 0;
}


int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };	/* no SA_RESTART */
	struct side s = { 0 };
	struct opts o;
	int ret, lfd = -1;

	tool_cli_init("roxe-rawperf", short_usage);
	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a dead peer shows as a write error */
	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			err_msg("cannot run on CPU %d: %s", o.cpu, strerror(errno));
			return 2;
		}
	}
	s.qpn = o.qpn;
	if (side_iface_query(o.ifname, &s))
		return 1;
	/* The server listens only once its port is up: a client (or a script
	 * waiting for the listener) may send at once. */
	ret = 1;
	if ((o.backend == BACKEND_AFXDP ? side_open_afxdp(&o, &s) : side_open_udp(&o, &s)) == 0) {
		if (o.server) {
			ret = run_client(&o, &s);
		} else {
			lfd = ctrl_listen(o.port);
			if (lfd >= 0)
				ret = run_server(&o, &s, lfd);
		}
	}
	if (lfd >= 0)
		close(lfd);
	side_close(&o, &s);
	if (interrupted) {
		err_msg("interrupted");
		ret = 1;
	}
	return ret;
}
