// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-rawperf: the raw frame path under roxe's transport, measured with
 * roxe's own port layer (user/port/port.h) and XDP program: what the transport
 * could reach at best on this link. Valid RoCE v2 frames (RC SEND_ONLY to a
 * QPN the receiver registers in the XDP program's QP table), and nothing
 * else: no ACKs, no PSN checks, no ICRC work per frame (each frame is a
 * copy of one built and sealed once), no payload copy on receive.
 *
 * Server and client meet over TCP (like perftest); the server follows the
 * client's mode and parameters. See usage_text for the rest.
 */
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include "roxe/frame.h"
#include "roxe/port.h"
#include "roxe/xdp.h"
#include "json.h"

#define DEFAULT_PORT	18520
#define DEFAULT_QPN	0x7f00		/* far above the QPNs roxe devices hand out */
#define DEFAULT_SECONDS	2.0
#define DEFAULT_BW_SIZE	64
#define DEFAULT_LAT_SIZE 8
#define DEFAULT_LAT_ITERS 100000
#define DEFAULT_WARMUP	1000
#define DEFAULT_BATCH	32
#define MAX_BATCH	256
#define RX_BURST	64
#define MAX_FRAME	8192		/* the afxdp port's TX buffer (two chunks) */
#define LAT_TIMEOUT_NS	100000000ull	/* a ping-pong frame counts as lost */
#define LAT_MAX_LOST	50		/* in a row: the peer is gone */
#define DRAIN_IDLE_NS	50000000ull	/* bw: quiet time after DONE */
#define CTRL_TIMEOUT_MS	30000		/* any control message */
#define CTRL_EVERY	1024		/* idle polls between control checks */
#define MSG_MAX		512

static const char usage_text[] =
"NAME\n"
"    roxe-rawperf - raw RoCE v2 frame rate and latency through roxe's port layer\n"
"\n"
"SYNOPSIS\n"
"    roxe-rawperf -d IFACE [options] bw|lat            (server)\n"
"    roxe-rawperf -d IFACE [options] bw|lat HOST       (client)\n"
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
"\n"
"OPTIONS\n"
"    -d, --dev IFACE        network interface (required)\n"
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
"    -q, --qpn N            this side's QPN, 2-32767 (default 32512 = 0x7f00)\n"
"    -c, --cpu N            pin this process to CPU N\n"
"    -j, --json             print one JSON object instead of the table\n"
"    -h, --help             this text\n"
"    On the server, -s, -D, -n, -w and -b are ignored: the client's apply.\n"
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
"    lat: iters, warmup, lost, rtt_us and half_rtt_us, each {min, median,\n"
"         p99, p999, max, mean}; the server prints served (frames answered).\n"
"\n"
"EXIT STATUS\n"
"    0 the test ran (loss is a result, not an error); 1 it could not run or\n"
"    nothing arrived; 2 usage error.\n"
"\n"
"EXAMPLES\n"
"    ip netns exec h2 roxe-rawperf -d veth2 bw &\n"
"    ip netns exec h1 roxe-rawperf -d veth1 -s 1024 -D 3 bw 10.99.0.2\n"
"    ip netns exec h2 roxe-rawperf -d veth2 --backend udp lat &\n"
"    ip netns exec h1 roxe-rawperf -d veth1 --backend udp --json lat 10.99.0.2\n"
"\n"
"NOTES\n"
"    On veth in copy mode the sender's CPU does the receive side's XDP work\n"
"    and copies too, inside its sendto(); each end spins on a core of its\n"
"    own, so other work on the machine shows in every figure. Pinning with\n"
"    -c did not help on a 2-core VM (longer tails). tools/bench-lib.sh runs\n"
"    this tool between two namespaces for make bench.\n";

enum backend { BACKEND_AFXDP, BACKEND_UDP };
enum mode { MODE_BW, MODE_LAT };

static const char *const backend_names[] = { "afxdp", "udp" };
static const char *const mode_names[] = { "bw", "lat" };

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

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void __attribute__((format(printf, 1, 2))) err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("roxe-rawperf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("roxe-rawperf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'roxe-rawperf --help'.\n", stderr);
	return 2;
}

/* --- arguments ------------------------------------------------------------------ */
static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "backend", 1, NULL, 'B' }, { "port", 1, NULL, 'p' },
		{ "size", 1, NULL, 's' }, { "duration", 1, NULL, 'D' }, { "iters", 1, NULL, 'n' },
		{ "warmup", 1, NULL, 'w' }, { "batch", 1, NULL, 'b' }, { "qpn", 1, NULL, 'q' },
		{ "cpu", 1, NULL, 'c' }, { "json", 0, NULL, 'j' }, { "help", 0, NULL, 'h' },
		{ 0 },
	};
	bool seconds_set = false, iters_set = false, warmup_set = false;
	uint64_t v;
	int opt;

	*o = (struct opts){ .backend = BACKEND_AFXDP, .port = DEFAULT_PORT,
			    .seconds = DEFAULT_SECONDS, .warmup = DEFAULT_WARMUP,
			    .batch = DEFAULT_BATCH, .qpn = DEFAULT_QPN, .cpu = -1 };
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":d:B:p:s:D:n:w:b:q:c:jh", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			if (!*optarg || strlen(optarg) >= IF_NAMESIZE)
				return usage_error("bad interface name '%s'", optarg);
			o->ifname = optarg;
			break;
		case 'B':
			if (!strcmp(optarg, "afxdp"))
				o->backend = BACKEND_AFXDP;
			else if (!strcmp(optarg, "udp"))
				o->backend = BACKEND_UDP;
			else
				return usage_error("unknown backend '%s' (afxdp, udp)", optarg);
			break;
		case 'p':
			if (!parse_u64(optarg, 1, 65535, &v))
				return usage_error("bad TCP port '%s' (1-65535)", optarg);
			o->port = (int)v;
			break;
		case 's':
			if (!parse_u64(optarg, 0, MAX_FRAME, &v))
				return usage_error("bad size '%s' (payload bytes, 0-%u)", optarg,
						   MAX_FRAME);
			o->size = (uint32_t)v;
			o->size_set = true;
			break;
		case 'D': {
			char *end;

			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o->seconds > 0) ||
			    o->seconds > 3600)
				return usage_error("bad duration '%s' (seconds, >0, <= 3600)",
						   optarg);
			seconds_set = true;
			break;
		}
		case 'n':
			if (!parse_u64(optarg, 1, 1ull << 40, &v))
				return usage_error("bad count '%s' (a positive integer)", optarg);
			o->iters = v;
			iters_set = true;
			break;
		case 'w':
			if (!parse_u64(optarg, 0, 1ull << 32, &v))
				return usage_error("bad warmup '%s' (round trips, >= 0)", optarg);
			o->warmup = v;
			warmup_set = true;
			break;
		case 'b':
			if (!parse_u64(optarg, 1, MAX_BATCH, &v))
				return usage_error("bad batch '%s' (1-%u)", optarg, MAX_BATCH);
			o->batch = (unsigned)v;
			break;
		case 'q':
			if (!parse_u64(optarg, 2, ROXE_MAX_QPS - 1, &v))
				return usage_error("bad QPN '%s' (2-%u)", optarg, ROXE_MAX_QPS - 1);
			o->qpn = (uint32_t)v;
			break;
		case 'c':
			if (!parse_u64(optarg, 0, CPU_SETSIZE - 1, &v))
				return usage_error("bad CPU '%s'", optarg);
			o->cpu = (int)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("a mode is required: bw or lat");
	if (!strcmp(argv[optind], "bw"))
		o->mode = MODE_BW;
	else if (!strcmp(argv[optind], "lat"))
		o->mode = MODE_LAT;
	else
		return usage_error("unknown mode '%s' (bw, lat)", argv[optind]);
	if (optind + 1 < argc)
		o->server = argv[optind + 1];
	if (optind + 2 < argc)
		return usage_error("unexpected argument '%s'", argv[optind + 2]);
	if (!o->ifname)
		return usage_error("-d IFACE is required (the network interface)");
	if (o->mode == MODE_BW) {
		if (seconds_set && iters_set)
			return usage_error("bw: give -D (seconds) or -n (frames), not both");
		if (iters_set)
			o->seconds = 0;
		if (warmup_set)
			return usage_error("-w applies to lat only");
	} else {
		if (seconds_set)
			return usage_error("-D applies to bw only (lat: -n round trips)");
		if (!iters_set)
			o->iters = DEFAULT_LAT_ITERS;
	}
	if (!o->size_set)
		o->size = o->mode == MODE_BW ? DEFAULT_BW_SIZE : DEFAULT_LAT_SIZE;
	return 0;
}

/* --- this side ------------------------------------------------------------------- */
/* MAC, MTU, and the GID: the interface's IPv4 address, else a global IPv6
 * one (as roxe devices choose theirs). */
static int iface_query(const char *ifname, struct side *s)
{
	struct ifreq ifr = { 0 };
	struct ifaddrs *ifa, *i;
	bool have4 = false, have6 = false;
	int fd, err = 0;

	if (!if_nametoindex(ifname)) {
		err_msg("no interface %s in this network namespace", ifname);
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(s->mac, ifr.ifr_hwaddr.sa_data, 6);
	else
		err = -1;
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		s->mtu = (unsigned)ifr.ifr_mtu;
	else
		err = -1;
	close(fd);
	if (err) {
		err_msg("cannot read MAC/MTU of %s: %s", ifname, strerror(errno));
		return -1;
	}
	if (getifaddrs(&ifa)) {
		err_msg("getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			roxe_gid_from_v4(s->gid, ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
			have4 = true;
			break;
		}
		if (i->ifa_addr->sa_family == AF_INET6 && !have6) {
			const struct sockaddr_in6 *s6 = (const void *)i->ifa_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
				memcpy(s->gid, &s6->sin6_addr, 16);
				have6 = true;
			}
		}
	}
	freeifaddrs(ifa);
	if (!have4 && !have6) {
		err_msg("%s has no IPv4 or global IPv6 address (the RoCE v2 GID)", ifname);
		return -1;
	}
	return 0;
}

/* IP packet bytes of a RoCE v2 RC SEND_ONLY frame with this payload. */
static unsigned ip_bytes(bool v4, uint32_t size)
{
	return (v4 ? 20 : 40) + 8 + 12 + ((size + 3) & ~3u) + 4;
}

static int open_afxdp(const struct opts *o, struct side *s)
{
	struct roxe_xdp_attach_opts ao = { .engines = 1, .no_pin = true };
	struct roxe_afxdp_config c = { .ifname = o->ifname };
	struct roxe_qp_route route = { 0 };
	uint32_t other = 0, key = o->qpn;
	int err;

	err = roxe_xdp_open(o->ifname, &s->xdp, &other);
	if (err == -ENOENT && !other) {
		err = roxe_xdp_attach(o->ifname, &ao, &s->xdp, &other);
		s->xdp_ours = !err;
	}
	if (err) {
		if (other)
			err_msg("%s runs another XDP program (id %u): roxe's is needed", o->ifname,
				other);
		else
			err_msg("cannot attach roxe's XDP program to %s: %s", o->ifname,
				strerror(-err));
		return -1;
	}
	if (bpf_map_lookup_elem(s->xdp->qp_table_fd, &key, &route) == 0 && route.in_use) {
		err_msg("QPN %u is in use on %s (another roxe user): pick another with --qpn",
			o->qpn, o->ifname);
		return -1;
	}
	c.engines = s->xdp->config.engines;
	c.xsks_map_fd = s->xdp->xsks_fd;
	/* AF_XDP sockets of a process that just exited are released
	 * asynchronously: binding to their queue fails with EBUSY a moment. */
	for (int tries = 0; ; tries++) {
		s->afxdp = roxe_afxdp_open(&c);
		if (s->afxdp || errno != EBUSY || tries == 100)
			break;
		usleep(20000);
	}
	if (!s->afxdp) {
		if (errno == EBUSY)
			err_msg("the queues of %s are taken by another AF_XDP user", o->ifname);
		else if (errno == EINVAL)
			err_msg("%s has fewer queues than the %u engines roxe was attached for",
				o->ifname, c.engines);
		else
			err_msg("cannot open AF_XDP sockets on %s: %s", o->ifname, strerror(errno));
		return -1;
	}
	s->port = roxe_afxdp_port(s->afxdp, 0);
	if (!s->port) {
		err_msg("no AF_XDP port for engine 0 on %s", o->ifname);
		return -1;
	}
	err = roxe_xdp_set_qp(s->xdp, o->qpn, 0);
	if (err) {
		err_msg("cannot register QPN %u on %s: %s", o->qpn, o->ifname, strerror(-err));
		return -1;
	}
	s->qp_set = true;
	return 0;
}

static int open_udp(const struct opts *o, struct side *s)
{
	struct roxe_xdp *x;
	char ip[INET6_ADDRSTRLEN];

	/* With roxe's program attached, RoCE frames never reach the socket
	 * (unknown QPs are dropped) unless it passes unknown QPs. */
	if (roxe_xdp_open(o->ifname, &x, NULL) == 0) {
		bool pass = x->config.pass_unknown_qp;

		roxe_xdp_close(x);
		if (!pass) {
			err_msg("roxe's XDP program is attached to %s and would drop the UDP "
				"backend's frames: roxectl detach %s", o->ifname, o->ifname);
			return -1;
		}
	}
	roxe_gid_ntop(s->gid, ip, sizeof(ip));
	s->port = roxe_udp_port_open(ip);
	if (!s->port) {
		err_msg("cannot open a UDP socket on %s:%u: %s", ip, ROXE_UDP_PORT,
			strerror(errno));
		return -1;
	}
	return 0;
}

static void side_close(const struct opts *o, struct side *s)
{
	if (s->qp_set)
		roxe_xdp_clear_qp(s->xdp, s->qpn);
	roxe_port_destroy(s->port);
	roxe_afxdp_close(s->afxdp);
	if (s->xdp_ours)
		roxe_xdp_detach(o->ifname, NULL);
	roxe_xdp_close(s->xdp);
}

/* --- control connection ----------------------------------------------------------- */
static int ctrl_listen(int port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	int one = 1, zero = 0, fd;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err_msg("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));	/* IPv4 too */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		err_msg("cannot listen on TCP port %d: %s", port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int ctrl_accept(int lfd)
{
	int fd;

	do {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR && !interrupted);
	if (fd < 0 && !interrupted)
		err_msg("accept: %s", strerror(errno));
	return fd;
}

static int ctrl_connect(const char *host, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res, *t;
	char service[16];
	int fd = -1, err;

	snprintf(service, sizeof(service), "%d", port);
	err = getaddrinfo(host, service, &hints, &res);
	if (err) {
		err_msg("%s: %s", host, gai_strerror(err));
		return -1;
	}
	for (t = res; t; t = t->ai_next) {
		fd = socket(t->ai_family, t->ai_socktype | SOCK_CLOEXEC, t->ai_protocol);
		if (fd >= 0 && !connect(fd, t->ai_addr, t->ai_addrlen))
			break;
		err = errno;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		err_msg("cannot connect to %s port %d: %s (is the server running?)", host, port,
			strerror(err));
	return fd;
}

/* One line, without its newline. 0, or -1 on EOF/timeout/error. */
static int ctrl_recv(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout_ms);
		ssize_t got;

		if (r < 0 && errno == EINTR && !interrupted)
			continue;
		if (r <= 0)
			return -1;
		got = read(fd, buf + n, 1);	/* a few short lines a run: bytewise is fine */
		if (got <= 0)
			return -1;
		if (buf[n] == '\n') {
			buf[n] = 0;
			return 0;
		}
		n++;
	}
	return -1;
}

static int __attribute__((format(printf, 2, 3))) ctrl_send(int fd, const char *fmt, ...)
{
	char buf[MSG_MAX];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (len < 0 || len >= (int)sizeof(buf) - 1)
		return -1;
	buf[len++] = '\n';
	return write(fd, buf, (size_t)len) == len ? 0 : -1;
}

/* The value of key=VALUE in a line of space-separated words. */
static bool kv(const char *line, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);

	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " ");

			if (n >= cap)
				return false;
			memcpy(out, p + kl + 1, n);
			out[n] = 0;
			return true;
		}
	}
	return false;
}

static bool kv_u64(const char *line, const char *key, uint64_t *v)
{
	char buf[32], *end;

	if (!kv(line, key, buf, sizeof(buf)))
		return false;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return !errno && !*end && end != buf;
}

static bool kv_i64(const char *line, const char *key, int64_t *v)
{
	char buf[32], *end;

	if (!kv(line, key, buf, sizeof(buf)))
		return false;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	return !errno && !*end && end != buf;
}

static void mac_ntop(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static bool gid_pton(const char *s, uint8_t gid[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		roxe_gid_from_v4(gid, a4.s_addr);
		return true;
	}
	return inet_pton(AF_INET6, s, gid) == 1;
}

/* gid= mac= qpn= of the other side. */
static int peer_parse(const char *line, struct peer *p)
{
	char gid[INET6_ADDRSTRLEN], mac[24];
	unsigned m[6];
	uint64_t qpn, zc = 0;

	if (!kv(line, "gid", gid, sizeof(gid)) || !gid_pton(gid, p->gid) ||
	    !kv(line, "mac", mac, sizeof(mac)) ||
	    sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6 ||
	    !kv_u64(line, "qpn", &qpn) || qpn >= ROXE_MAX_QPS)
		return -1;
	for (int i = 0; i < 6; i++)
		p->mac[i] = (uint8_t)m[i];
	p->qpn = (uint32_t)qpn;
	kv_u64(line, "zerocopy", &zc);
	p->zerocopy = zc;
	return 0;
}

static void side_words(const struct side *s, char *buf, size_t len)
{
	char gid[INET6_ADDRSTRLEN], mac[24];

	roxe_gid_ntop(s->gid, gid, sizeof(gid));
	mac_ntop(s->mac, mac, sizeof(mac));
	snprintf(buf, len, "gid=%s mac=%s qpn=%u zerocopy=%d", gid, mac, s->qpn,
		 s->afxdp ? roxe_afxdp_zerocopy(s->afxdp) : 0);
}

/* Nonblocking look at the control connection while spinning: 1 with a
 * line in buf, 0 nothing yet, -1 closed. */
static int ctrl_poll(int fd, char *buf, size_t cap)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) <= 0)
		return 0;
	return ctrl_recv(fd, buf, cap, CTRL_TIMEOUT_MS) ? -1 : 1;
}

/* --- frames ------------------------------------------------------------------------ */
static int tmpl_build(struct tmpl *t, const struct side *me, const struct peer *peer,
		      uint32_t size, uint32_t psn)
{
	struct roxe_frame_addr a = { 0 };
	struct roxe_frame_hdr h = {
		.opcode = ROXE_OP_RC_SEND_ONLY, .pkey = ROXE_DEFAULT_PKEY,
		.dqpn = peer->qpn, .psn = psn & 0xffffff,
	};
	uint8_t payload[MAX_FRAME];
	int len;

	for (uint32_t i = 0; i < size; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	memcpy(a.smac, me->mac, 6);
	memcpy(a.dmac, peer->mac, 6);
	memcpy(a.sgid, me->gid, 16);
	memcpy(a.dgid, peer->gid, 16);
	/* The UDP backend's socket sends from 4791 whatever the frame says:
	 * write what goes on the wire. */
	a.sport = me->port->fixed_sport ? me->port->fixed_sport : roxe_flow_sport(me->qpn, peer->qpn);
	len = roxe_frame_build(t->buf, sizeof(t->buf), &a, &h, payload, size, &t->pkt);
	if (len < 0)
		return len;
	t->len = (uint32_t)len;
	t->psn = h.psn;
	return 0;
}

/* Is this a frame for our QP with the payload we expect? Its PSN in *psn. */
static bool frame_ok(const struct roxe_buf *b, uint32_t qpn, uint32_t size, uint32_t *psn)
{
	struct roxe_pkt pkt;
	const struct roxe_bth *bth;

	if (roxe_parse(b->data, b->data + b->len, b->len, &pkt) != ROXE_PKT_OK ||
	    pkt.opcode != ROXE_OP_RC_SEND_ONLY || pkt.payload_len != size)
		return false;
	bth = (const void *)(b->data + pkt.bth_off);
	if (roxe_bth_qpn(bth) != qpn)
		return false;
	if (psn)
		*psn = roxe_bth_psn(bth);
	return true;
}

/* Send one copy of the template; false if no buffer came. */
static bool send_one(struct roxe_port *p, const struct tmpl *t)
{
	struct roxe_buf b;

	if (roxe_port_tx_alloc(p, &b, 1) != 1) {
		roxe_port_flush(p);	/* reaps completions */
		if (roxe_port_tx_alloc(p, &b, 1) != 1)
			return false;
	}
	memcpy(b.data, t->buf, t->len);
	b.len = t->len;
	roxe_port_tx(p, &b, 1);
	roxe_port_flush(p);
	return true;
}

/* --- counters that say where frames were lost ------------------------------------ */
/* afxdp: frames the XDP program steered to our QP; udp: the namespace's
 * UDP receive-buffer errors. -1 when unknown. */
static int64_t rx_drop_counter(const struct opts *o, const struct side *s)
{
	if (o->backend == BACKEND_AFXDP) {
		struct roxe_qp_stats qs;

		return roxe_xdp_read_qp_stats(s->xdp, s->qpn, &qs) ? -1 : (int64_t)qs.rx_packets;
	}
	FILE *f = fopen("/proc/net/snmp", "r");
	char names[1024], vals[1024];
	int64_t ret = -1;

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n, *v;

		if (strncmp(names, "Udp:", 4))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(vals, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, "RcvbufErrors"))
				ret = strtoll(v, NULL, 10);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	fclose(f);
	return ret;
}

/*
 * The kernel's drop counters of this process's AF_XDP sockets, summed
 * (XDP_STATISTICS): why frames died at the socket. The port layer keeps
 * its socket descriptors to itself, and this process has no other AF_XDP
 * sockets, so ask every open descriptor; others refuse the option.
 */
static bool xsk_stats(struct xdp_statistics *sum)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	bool any = false;

	memset(sum, 0, sizeof(*sum));
	if (!d)
		return false;
	while ((e = readdir(d))) {
		struct xdp_statistics st;
		socklen_t len = sizeof(st);
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len))
			continue;
		sum->rx_dropped += st.rx_dropped;
		sum->rx_ring_full += st.rx_ring_full;
		sum->rx_fill_ring_empty_descs += st.rx_fill_ring_empty_descs;
		any = true;
	}
	closedir(d);
	return any;
}

/* --- bw ------------------------------------------------------------------------------ */
struct bw_result {
	uint64_t	sent, sent_ns;
	uint64_t	rx_frames, rx_bytes, rx_ns, bad;
	int64_t		xdp_steered;	/* afxdp: steered by XDP; -1 unknown */
	int64_t		udp_errors;	/* udp: receive-buffer errors; -1 unknown */
	/* afxdp, the kernel's socket counters (XDP_STATISTICS); -1 unknown */
	int64_t		xsk_ring_full, xsk_fill_empty, xsk_other;
	uint64_t	tx_kicks;
};

static int bw_client(const struct opts *o, struct side *s, const struct tmpl *t, int cfd,
		     struct bw_result *r)
{
	struct roxe_port *p = s->port;
	uint64_t t0, deadline, kicks0 = p->stats.tx_kicks, sent0 = p->stats.tx_frames;
	char line[MSG_MAX];

	t0 = now_ns();
	deadline = t0 + (uint64_t)(o->seconds * 1e9);
	while (!interrupted) {
		struct roxe_buf b[MAX_BATCH];
		uint64_t queued = p->stats.tx_frames - sent0;
		unsigned want = o->batch, n;

		if (o->iters) {
			if (queued >= o->iters)
				break;
			if (o->iters - queued < want)
				want = (unsigned)(o->iters - queued);
		} else if (now_ns() >= deadline) {
			break;
		}
		n = roxe_port_tx_alloc(p, b, want);
		for (unsigned i = 0; i < n; i++) {
			memcpy(b[i].data, t->buf, t->len);
			b[i].len = t->len;
		}
		if (n)
			roxe_port_tx(p, b, n);
		roxe_port_flush(p);
	}
	/* Copy-mode AF_XDP sends inside sendto(): kick until the ring is empty. */
	for (int i = 0; i < 64; i++)
		roxe_port_flush(p);
	r->sent_ns = now_ns() - t0;
	r->sent = p->stats.tx_frames - sent0;
	r->tx_kicks = p->stats.tx_kicks - kicks0;
	if (interrupted)
		return -1;
	if (ctrl_send(cfd, "DONE frames=%" PRIu64 " ns=%" PRIu64, r->sent, r->sent_ns) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RESULT ", 7) ||
	    !kv_u64(line, "frames", &r->rx_frames) || !kv_u64(line, "bytes", &r->rx_bytes) ||
	    !kv_u64(line, "ns", &r->rx_ns) || !kv_u64(line, "bad", &r->bad) ||
	    !kv_i64(line, "steered", &r->xdp_steered) || !kv_i64(line, "udp_errors", &r->udp_errors) ||
	    !kv_i64(line, "ring_full", &r->xsk_ring_full) ||
	    !kv_i64(line, "fill_empty", &r->xsk_fill_empty) ||
	    !kv_i64(line, "other", &r->xsk_other)) {
		err_msg("no result from the server");
		return -1;
	}
	return 0;
}

static int bw_server(const struct opts *o, struct side *s, uint32_t size, int cfd,
		     struct bw_result *r)
{
	struct roxe_port *p = s->port;
	uint64_t first = 0, last = 0, idle_since = 0, idle = 0;
	int64_t steered0 = rx_drop_counter(o, s);
	struct xdp_statistics x0, x1;
	bool have_x = o->backend == BACKEND_AFXDP && xsk_stats(&x0);
	char line[MSG_MAX];
	bool done = false;

	while (!interrupted) {
		struct roxe_buf b[RX_BURST];
		unsigned n = roxe_port_rx(p, b, RX_BURST);

		if (n) {
			last = now_ns();
			if (!first)
				first = last;
			for (unsigned i = 0; i < n; i++) {
				if (frame_ok(&b[i], s->qpn, size, NULL)) {
					r->rx_frames++;
					r->rx_bytes += size;
				} else {
					r->bad++;
				}
			}
			roxe_port_rx_release(p, b, n);
			idle_since = 0;
			continue;
		}
		if (done) {
			/* Frames may still be in flight behind DONE. */
			uint64_t now = now_ns();

			if (!idle_since)
				idle_since = now;
			else if (now - idle_since > DRAIN_IDLE_NS)
				break;
			continue;
		}
		if (++idle % CTRL_EVERY)
			continue;
		int c = ctrl_poll(cfd, line, sizeof(line));

		if (c < 0) {
			err_msg("the client went away");
			return -1;
		}
		if (c > 0) {
			if (strncmp(line, "DONE ", 5) || !kv_u64(line, "frames", &r->sent) ||
			    !kv_u64(line, "ns", &r->sent_ns)) {
				err_msg("bad message from the client: %s", line);
				return -1;
			}
			done = true;
		}
	}
	if (interrupted)
		return -1;
	r->rx_ns = last - first;
	if (o->backend == BACKEND_AFXDP) {
		int64_t steered1 = rx_drop_counter(o, s);

		r->xdp_steered = steered0 >= 0 && steered1 >= 0 ? steered1 - steered0 : -1;
		r->udp_errors = -1;
		have_x = have_x && xsk_stats(&x1);
	} else {
		int64_t e1 = rx_drop_counter(o, s);

		r->udp_errors = steered0 >= 0 && e1 >= 0 ? e1 - steered0 : -1;
		r->xdp_steered = -1;
	}
	r->xsk_ring_full = have_x ? (int64_t)(x1.rx_ring_full - x0.rx_ring_full) : -1;
	r->xsk_fill_empty = have_x ? (int64_t)(x1.rx_fill_ring_empty_descs -
					       x0.rx_fill_ring_empty_descs) : -1;
	/* rx_dropped counts the fill-ring misses too: keep the rest. */
	r->xsk_other = have_x ? (int64_t)(x1.rx_dropped - x0.rx_dropped) - r->xsk_fill_empty : -1;
	if (have_x && r->xsk_other < 0)
		r->xsk_other = 0;
	if (ctrl_send(cfd, "RESULT frames=%" PRIu64 " bytes=%" PRIu64 " ns=%" PRIu64 " bad=%" PRIu64
		      " steered=%" PRId64 " udp_errors=%" PRId64 " ring_full=%" PRId64
		      " fill_empty=%" PRId64 " other=%" PRId64, r->rx_frames, r->rx_bytes,
		      r->rx_ns, r->bad, r->xdp_steered, r->udp_errors, r->xsk_ring_full,
		      r->xsk_fill_empty, r->xsk_other)) {
		err_msg("cannot send the result to the client");
		return -1;
	}
	return 0;
}

static double rate(uint64_t n, uint64_t ns)
{
	return ns ? (double)n / ((double)ns / 1e9) : 0;
}

static void bw_print(const struct opts *o, const struct side *s, bool server, uint32_t size,
		     uint32_t frame_bytes, unsigned batch, bool v4, const struct bw_result *r)
{
	double s_pps = rate(r->sent, r->sent_ns), r_pps = rate(r->rx_frames, r->rx_ns);
	int64_t lost = (int64_t)r->sent - (int64_t)r->rx_frames;
	double loss_pct = r->sent ? 100.0 * (double)lost / (double)r->sent : 0;
	int64_t before = -1, at_sock = -1;

	if (r->xdp_steered >= 0) {
		before = (int64_t)r->sent - r->xdp_steered;
		at_sock = r->xdp_steered - (int64_t)r->rx_frames;
	}
	if (o->json) {
		printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"bw\",\"role\":\"%s\","
		       "\"backend\":\"%s\",\"iface\":", server ? "server" : "client",
		       backend_names[o->backend]);
		tool_json_str(stdout, o->ifname);
		printf(",\"zerocopy\":%s,\"family\":%d,"
		       "\"size\":%u,\"frame_bytes\":%u,\"batch\":%u,"
		       "\"sent\":{\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f,"
		       "\"gbps\":%.4f,\"frame_gbps\":%.4f},"
		       "\"received\":{\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f,"
		       "\"gbps\":%.4f,\"frame_gbps\":%.4f,\"bad\":%" PRIu64 "},"
		       "\"lost\":%" PRId64 ",\"loss_pct\":%.4f,",
		       s->afxdp && roxe_afxdp_zerocopy(s->afxdp) ? "true" : "false", v4 ? 4 : 6,
		       size, frame_bytes, batch,
		       r->sent, r->sent_ns / 1e9, s_pps / 1e6, s_pps * size * 8 / 1e9,
		       s_pps * frame_bytes * 8 / 1e9,
		       r->rx_frames, r->rx_ns / 1e9, r_pps / 1e6, r_pps * size * 8 / 1e9,
		       r_pps * frame_bytes * 8 / 1e9, r->bad, lost, loss_pct);
		if (o->backend == BACKEND_AFXDP)
			printf("\"lost_before_xdp\":%" PRId64 ",\"dropped_at_socket\":%" PRId64 ","
			       "\"xsk_rx_ring_full\":%" PRId64 ",\"xsk_fill_ring_empty\":%" PRId64
			       ",\"xsk_rx_dropped_other\":%" PRId64 ",", before, at_sock, r->xsk_ring_full,
			       r->xsk_fill_empty, r->xsk_other);
		else
			printf("\"udp_rcvbuf_errors\":%" PRId64 ",", r->udp_errors);
		if (!server)
			printf("\"tx_kicks\":%" PRIu64 ",", r->tx_kicks);
		printf("\"gbps\":%.4f,\"mpps\":%.4f}\n", r_pps * size * 8 / 1e9, r_pps / 1e6);
		return;
	}
	printf("raw %s frame path, bw: %u B payload in %u B frames (IPv%d), batch %u\n",
	       o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", size, frame_bytes,
	       v4 ? 4 : 6, batch);
	printf("  %-9s %12s %9s %9s %10s %12s\n", "", "frames", "seconds", "Mpps", "Gb/s",
	       "frame Gb/s");
	printf("  %-9s %12" PRIu64 " %9.3f %9.3f %10.3f %12.3f\n", "sent", r->sent,
	       r->sent_ns / 1e9, s_pps / 1e6, s_pps * size * 8 / 1e9, s_pps * frame_bytes * 8 / 1e9);
	printf("  %-9s %12" PRIu64 " %9.3f %9.3f %10.3f %12.3f\n", "received", r->rx_frames,
	       r->rx_ns / 1e9, r_pps / 1e6, r_pps * size * 8 / 1e9, r_pps * frame_bytes * 8 / 1e9);
	printf("  lost %" PRId64 " (%.2f%%)", lost, loss_pct);
	if (o->backend == BACKEND_AFXDP && before >= 0) {
		printf(": %" PRId64 " before the XDP program, %" PRId64 " at the socket",
		       before, at_sock);
		if (r->xsk_ring_full >= 0)
			printf(" (kernel: RX ring full %" PRId64 ", fill ring empty %" PRId64
			       ", other %" PRId64 ")", r->xsk_ring_full, r->xsk_fill_empty,
			       r->xsk_other);
	} else if (o->backend == BACKEND_UDP && r->udp_errors >= 0)
		printf("; UDP receive-buffer errors %" PRId64, r->udp_errors);
	if (r->bad)
		printf("; %" PRIu64 " unexpected frames", r->bad);
	printf("\n");
	if (!server)
		printf("  %.2f frames per transmit syscall\n",
		       r->tx_kicks ? (double)r->sent / (double)r->tx_kicks : 0);
	printf("  result: %.3f Gb/s payload, %.3f Mpps (received)\n", r_pps * size * 8 / 1e9,
	       r_pps / 1e6);
}

/* --- lat ----------------------------------------------------------------------------- */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n), p in per mille. */
static uint64_t pct(const uint64_t *v, uint64_t n, uint64_t permille)
{
	uint64_t k = (permille * n + 999) / 1000;

	return v[k ? k - 1 : 0];
}

struct lat_stats {
	double	min, median, p99, p999, max, mean;
};

static int lat_client(const struct opts *o, struct side *s, const struct peer *peer,
		      struct tmpl *t, int cfd, uint64_t *rtt, uint64_t *lost_out)
{
	struct roxe_port *p = s->port;
	uint64_t lost = 0, in_a_row = 0;
	char line[MSG_MAX];
	int64_t i = -(int64_t)o->warmup;

	while (i < (int64_t)o->iters && !interrupted) {
		struct roxe_buf b[8];
		uint64_t t0, t1 = 0;
		unsigned spins = 0;

		t0 = now_ns();
		if (!send_one(p, t)) {
			err_msg("no transmit buffer");
			return -1;
		}
		while (!interrupted) {
			unsigned n = roxe_port_rx(p, b, 8);
			bool got = false;

			if (n) {
				t1 = now_ns();
				for (unsigned k = 0; k < n; k++) {
					uint32_t psn;

					if (frame_ok(&b[k], s->qpn, o->size, &psn) && psn == t->psn)
						got = true;
				}
				roxe_port_rx_release(p, b, n);
				if (got)
					break;
			}
			if (++spins % 256 == 0 && now_ns() - t0 > LAT_TIMEOUT_NS) {
				t1 = 0;
				break;
			}
		}
		if (interrupted)
			return -1;
		if (!t1) {
			/* Lost: a new PSN, so a late answer to this one is not
			 * taken for the next. */
			lost++;
			if (++in_a_row == LAT_MAX_LOST) {
				err_msg("no answer from the server for %d frames in a row",
					LAT_MAX_LOST);
				return -1;
			}
			if (tmpl_build(t, s, peer, o->size, t->psn + 1))
				return -1;
			continue;
		}
		in_a_row = 0;
		if (i >= 0)
			rtt[i] = t1 - t0;
		i++;
	}
	if (interrupted)
		return -1;
	*lost_out = lost;
	if (ctrl_send(cfd, "DONE iters=%" PRIu64, o->iters) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RESULT", 6)) {
		err_msg("no result from the server");
		return -1;
	}
	return 0;
}

static int lat_server(const struct opts *o, struct side *s, const struct peer *peer,
		      uint32_t size, int cfd, uint64_t *served)
{
	struct roxe_port *p = s->port;
	struct tmpl *t = malloc(sizeof(*t));
	char line[MSG_MAX];
	uint64_t idle = 0;
	int ret = -1;

	(void)o;
	if (!t || tmpl_build(t, s, peer, size, 0))
		goto out;
	while (!interrupted) {
		struct roxe_buf b[8];
		unsigned n = roxe_port_rx(p, b, 8);

		if (n) {
			for (unsigned k = 0; k < n; k++) {
				uint32_t psn;

				if (!frame_ok(&b[k], s->qpn, size, &psn))
					continue;
				/* Echo the PSN; rebuilding (ICRC) only when it changes. */
				if (psn != t->psn && tmpl_build(t, s, peer, size, psn))
					goto out;
				if (!send_one(p, t)) {
					err_msg("no transmit buffer");
					goto out;
				}
				(*served)++;
			}
			roxe_port_rx_release(p, b, n);
			continue;
		}
		if (++idle % CTRL_EVERY)
			continue;
		int c = ctrl_poll(cfd, line, sizeof(line));

		if (c < 0) {
			err_msg("the client went away");
			goto out;
		}
		if (c > 0) {
			if (strncmp(line, "DONE", 4)) {
				err_msg("bad message from the client: %s", line);
				goto out;
			}
			ret = ctrl_send(cfd, "RESULT served=%" PRIu64, *served) ? -1 : 0;
			break;
		}
	}
out:
	free(t);
	return ret;
}

static void lat_stats(const uint64_t *sorted, uint64_t n, double div, struct lat_stats *st)
{
	long double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += sorted[i];
	st->min = sorted[0] / div / 1e3;
	st->median = pct(sorted, n, 500) / div / 1e3;
	st->p99 = pct(sorted, n, 990) / div / 1e3;
	st->p999 = pct(sorted, n, 999) / div / 1e3;
	st->max = sorted[n - 1] / div / 1e3;
	st->mean = (double)(sum / n) / div / 1e3;
}

static void lat_print_json_stats(const char *name, const struct lat_stats *st)
{
	const double v[] = { st->min, st->median, st->p99, st->p999, st->max, st->mean };
	static const char *const keys[] = { "min", "median", "p99", "p999", "max", "mean" };

	printf("\"%s\":{", name);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		printf("%s\"%s\":", i ? "," : "", keys[i]);
		tool_json_num(stdout, "%.3f", v[i]);
	}
	printf("}");
}

static void lat_print(const struct opts *o, const struct side *s, uint32_t frame_bytes,
		      bool v4, uint64_t *rtt, uint64_t lost)
{
	struct lat_stats full, half;

	qsort(rtt, o->iters, sizeof(*rtt), cmp_u64);
	lat_stats(rtt, o->iters, 1, &full);
	lat_stats(rtt, o->iters, 2, &half);
	if (o->json) {
		printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"lat\",\"role\":\"client\","
		       "\"backend\":\"%s\",\"iface\":", backend_names[o->backend]);
		tool_json_str(stdout, o->ifname);
		printf(",\"zerocopy\":%s,\"family\":%d,"
		       "\"size\":%u,\"frame_bytes\":%u,\"iters\":%" PRIu64 ",\"warmup\":%" PRIu64
		       ",\"lost\":%" PRIu64 ",", s->afxdp && roxe_afxdp_zerocopy(s->afxdp) ? "true" : "false", v4 ? 4 : 6,
		       o->size, frame_bytes, o->iters, o->warmup, lost);
		lat_print_json_stats("rtt_us", &full);
		putchar(',');
		lat_print_json_stats("half_rtt_us", &half);
		printf("}\n");
		return;
	}
	printf("raw %s frame path, lat: %u B payload in %u B frames (IPv%d), spinning\n",
	       o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", o->size, frame_bytes,
	       v4 ? 4 : 6);
	printf("  %" PRIu64 " round trips after %" PRIu64 " warm-up ones, %" PRIu64 " lost\n",
	       o->iters, o->warmup, lost);
	printf("  %-22s %8s %8s %8s %8s %8s %8s\n", "usec", "min", "median", "p99", "p99.9",
	       "max", "mean");
	printf("  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", "round trip", full.min,
	       full.median, full.p99, full.p999, full.max, full.mean);
	printf("  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", "half (perftest t_typ)",
	       half.min, half.median, half.p99, half.p999, half.max, half.mean);
}

/* --- the two roles ------------------------------------------------------------------- */
static int check_size(const struct opts *o, const struct side *s, uint32_t size, char *why,
		      size_t len)
{
	bool v4 = roxe_gid_is_v4(s->gid);
	unsigned hdrs = ip_bytes(v4, 0);

	if (ip_bytes(v4, size) > s->mtu) {
		snprintf(why, len, "%u payload bytes do not fit the MTU of %s (%u): at most %u",
			 size, o->ifname, s->mtu, (s->mtu - hdrs) & ~3u);
		return -1;
	}
	unsigned cap = s->port->frame_size < MAX_FRAME ? s->port->frame_size : MAX_FRAME;

	if (14 + ip_bytes(v4, size) > cap) {
		snprintf(why, len, "%u payload bytes do not fit a %s buffer (%u B frames)", size,
			 backend_names[o->backend], cap);
		return -1;
	}
	return 0;
}

static int run_client(const struct opts *o, struct side *s)
{
	char words[256], line[MSG_MAX], why[160];
	struct peer peer = { 0 };
	struct tmpl *t = NULL;
	uint64_t *rtt = NULL, lost = 0;
	int cfd, ret = 1;

	if (check_size(o, s, o->size, why, sizeof(why))) {
		err_msg("%s", why);
		return 2;
	}
	cfd = ctrl_connect(o->server, o->port);
	if (cfd < 0)
		return 1;
	side_words(s, words, sizeof(words));
	if (ctrl_send(cfd, "RAWPERF1 mode=%s backend=%s size=%u batch=%u %s", mode_names[o->mode],
		      backend_names[o->backend], o->size, o->batch, words) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS)) {
		err_msg("no answer from the server at %s port %d", o->server, o->port);
		goto out;
	}
	if (!strncmp(line, "ERR ", 4)) {
		err_msg("server: %s", line + 4);
		goto out;
	}
	if (strncmp(line, "OK ", 3) || peer_parse(line, &peer)) {
		err_msg("bad answer from the server: %s", line);
		goto out;
	}
	if (roxe_gid_is_v4(peer.gid) != roxe_gid_is_v4(s->gid)) {
		err_msg("the server's GID and ours are not the same IP family");
		goto out;
	}
	t = malloc(sizeof(*t));
	if (!t || tmpl_build(t, s, &peer, o->size, 0)) {
		err_msg("cannot build the frame");
		goto out;
	}
	if (o->mode == MODE_BW) {
		struct bw_result r = { 0 };

		if (bw_client(o, s, t, cfd, &r))
			goto out;
		bw_print(o, s, false, o->size, t->len, o->batch, roxe_gid_is_v4(s->gid), &r);
		ret = r.rx_frames ? 0 : 1;
		if (!r.rx_frames)
			err_msg("the server received nothing");
	} else {
		rtt = malloc(o->iters * sizeof(*rtt));
		if (!rtt) {
			err_msg("out of memory for %" PRIu64 " samples", o->iters);
			goto out;
		}
		if (lat_client(o, s, &peer, t, cfd, rtt, &lost))
			goto out;
		lat_print(o, s, t->len, roxe_gid_is_v4(s->gid), rtt, lost);
		ret = 0;
	}
out:
	free(rtt);
	free(t);
	close(cfd);
	return ret;
}

static int run_server(const struct opts *o, struct side *s, int lfd)
{
	char line[MSG_MAX], words[256], mode[8], backend[8], why[160];
	struct peer peer = { 0 };
	uint64_t size, batch = 0;
	int cfd, ret = 1;

	if (!o->json)
		fprintf(stderr, "roxe-rawperf: %s server on %s (%s%s), QPN %u, TCP port %d: "
			"waiting for a client\n", mode_names[o->mode], o->ifname,
			backend_names[o->backend],
			s->afxdp ? (roxe_afxdp_zerocopy(s->afxdp) ? ", zero-copy" : ", copy mode") : "",
			s->qpn, o->port);
	cfd = ctrl_accept(lfd);
	if (cfd < 0)
		return 1;
	if (ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RAWPERF1 ", 9) ||
	    !kv(line, "mode", mode, sizeof(mode)) || !kv(line, "backend", backend, sizeof(backend)) ||
	    !kv_u64(line, "size", &size) || size > MAX_FRAME || peer_parse(line, &peer)) {
		err_msg("bad hello from the client");
		goto out;
	}
	why[0] = 0;
	if (strcmp(mode, mode_names[o->mode]))
		snprintf(why, sizeof(why), "client asks for %s, this server runs %s", mode,
			 mode_names[o->mode]);
	else if (strcmp(backend, backend_names[o->backend]))
		snprintf(why, sizeof(why), "client uses backend %s, this server %s", backend,
			 backend_names[o->backend]);
	else if (roxe_gid_is_v4(peer.gid) != roxe_gid_is_v4(s->gid))
		snprintf(why, sizeof(why), "the client's GID and ours are not the same IP family");
	else
		check_size(o, s, (uint32_t)size, why, sizeof(why));
	if (why[0]) {
		err_msg("%s", why);
		ctrl_send(cfd, "ERR %s", why);
		goto out;
	}
	side_words(s, words, sizeof(words));
	if (ctrl_send(cfd, "OK %s", words)) {
		err_msg("cannot answer the client");
		goto out;
	}
	if (o->mode == MODE_BW) {
		struct bw_result r = { 0 };
		struct tmpl *t = malloc(sizeof(*t));
		uint32_t fb = 0;

		/* The frame length, for the report: as the client builds it. */
		if (t && tmpl_build(t, s, &peer, (uint32_t)size, 0) == 0)
			fb = t->len;
		free(t);
		if (bw_server(o, s, (uint32_t)size, cfd, &r))
			goto out;
		kv_u64(line, "batch", &batch);	/* for the report only */
		bw_print(o, s, true, (uint32_t)size, fb, (unsigned)batch, roxe_gid_is_v4(s->gid), &r);
		ret = r.rx_frames ? 0 : 1;
	} else {
		uint64_t served = 0;

		if (lat_server(o, s, &peer, (uint32_t)size, cfd, &served))
			goto out;
		if (o->json) {
			printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"lat\",\"role\":\"server\","
			       "\"backend\":\"%s\",\"iface\":", backend_names[o->backend]);
			tool_json_str(stdout, o->ifname);
			printf(",\"size\":%" PRIu64 ",\"served\":%" PRIu64 "}\n", size, served);
		} else
			printf("raw %s frame path, lat server: answered %" PRIu64 " frames of %"
			       PRIu64 " B payload\n",
			       o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", served, size);
		ret = 0;
	}
out:
	close(cfd);
	return ret;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct side s = { 0 };
	struct opts o;
	int ret, lfd = -1;

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
	if (iface_query(o.ifname, &s))
		return 1;
	/* The server listens only once its port is up: a client (or a script
	 * waiting for the listener) may send at once. */
	ret = 1;
	if ((o.backend == BACKEND_AFXDP ? open_afxdp(&o, &s) : open_udp(&o, &s)) == 0) {
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
