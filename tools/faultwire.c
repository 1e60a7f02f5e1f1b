// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultwire: forward every frame between two interfaces, dropping,
 * duplicating, reordering and corrupting RoCE v2 frames (UDP port 4791) at
 * chosen rates. It is the faulty middle hop of selftests/xdp/faultwire_test.sh
 * (tools/scripts/netns.sh --middle with the bridge removed) and of the VM harness
 * (tools/vm/run.sh --faults, between the guest's tap and the host engine's
 * veth). It stands in for tc netem, which this machine's kernel lacks
 * (CONFIG_NET_SCH_NETEM is not set); other frames (ARP, TCP for the
 * pingpong's exchange) pass untouched so the hosts can still talk.
 * Frames cross it as plain bytes: the hosts must not leave checksums or
 * segmentation to offloads (ethtool -K IF tx off tso off gso off).
 *
 *   faultwire IF1 IF2 [--drop PPM] [--dup PPM] [--reorder PPM]
 *             [--corrupt PPM] [--seed N] [--rate RATE [--mark BYTES]
 *             [--limit BYTES]] [--json]
 *
 * With --rate it is also a congested switch port, each way: RoCE v2 frames
 * wait in a queue drained at RATE; one that finds the backlog at or above
 * --mark gets CE in its IP header if it is ECN-capable (ECT(0) or ECT(1):
 * the IPv4 header checksum is fixed; RoCE's ICRC leaves the ECN bits out),
 * one that would take the backlog past --limit is dropped (a tail drop).
 * That is what DCQCN's tests need: marks before drops.
 *
 * Runs until SIGTERM/SIGINT, then prints what it did on stdout, with the
 * frames the kernel dropped because a socket's receive buffer was full
 * ("overflowed") and those the kernel refused to send ("unsent", e.g. a
 * tap whose reader is behind): faults nobody asked for. The receive
 * buffers are large to keep them at 0 when the forwarder is starved of CPU
 * for a while.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include "roxe/cli.h"
#include "roxe/parse.h"
#include "roxe/version.h"
#include "linkq.h"

static const char usage_text[] =
"NAME\n"
"    faultwire - a faulty hop for RoCE v2 frames between two interfaces\n"
"\n"
"SYNOPSIS\n"
"    faultwire IF1 IF2 [--drop PPM] [--dup PPM] [--reorder PPM]\n"
"              [--corrupt PPM] [--seed N] [--rate RATE [--mark BYTES]\n"
"              [--limit BYTES]] [--json]\n"
"    faultwire -h | --help\n"
"    faultwire -V | --version\n"
"\n"
"DESCRIPTION\n"
"    Forwards every frame between IF1 and IF2 (AF_PACKET), dropping,\n"
"    duplicating, reordering and corrupting RoCE v2 frames (UDP port 4791)\n"
"    at the rates given, in parts per million; other frames (ARP, TCP...)\n"
"    pass untouched. A reordered frame is held back for 1 to 3 frames (or\n"
"    1 ms of silence); a corrupted one has one bit flipped past its first\n"
"    42 bytes (Ethernet, IPv4, UDP headers). The hosts must not leave checksums or\n"
"    segmentation to offloads (ethtool -K IF tx off tso off gso off).\n"
"\n"
"    Runs until SIGTERM or SIGINT, then prints on stdout what it did:\n"
"      faultwire: forwarded F, dropped D, duplicated U, reordered R,\n"
"      corrupted C, overflowed O, unsent N\n"
"    overflowed: frames the kernel dropped on a full receive buffer;\n"
"    unsent: frames the kernel refused to send: faults nobody asked for.\n"
"\n"
"    With --rate, each way is also a congested switch port: RoCE v2 frames\n"
"    queue and leave at RATE; a frame that finds BYTES of --mark or more\n"
"    queued gets CE if it is ECN-capable (ECT(0)/ECT(1); the IPv4 checksum\n"
"    is fixed, the ICRC leaves ECN out), one that would take the queue past\n"
"    --limit is dropped. A second line counts them:\n"
"      faultwire: queue at R bit/s: marked M, dropped Q, above the mark\n"
"      not ECN-capable E, peak backlog B bytes\n"
"    With --json, the same as one JSON object instead: forwarded, dropped,\n"
"    duplicated, reordered, corrupted, overflowed, unsent, and queue (null\n"
"    without --rate, else rate_bps, marked, dropped, not_ect,\n"
"    peak_backlog_bytes).\n"
"\n"
"OPTIONS\n"
"    --drop PPM     drop RoCE v2 frames (PPM: 0 to 1000000)\n"
"    --dup PPM      send RoCE v2 frames twice\n"
"    --reorder PPM  hold RoCE v2 frames back\n"
"    --corrupt PPM  flip a bit of RoCE v2 frames\n"
"    --seed N       seed of the pseudo-random choices (the same seed makes\n"
"                   the same choices for the same frames; decimal, or hex\n"
"                   after 0x)\n"
"    --rate RATE    queue RoCE v2 frames and send them at RATE bits per\n"
"                   second (suffix k, m, g, optionally followed by bit:\n"
"                   1gbit, 100m; 1k to 400g)\n"
"    --mark BYTES   backlog at which ECN-capable frames get CE (suffix k,\n"
"                   m: 1024s; default 32k)\n"
"    --limit BYTES  backlog beyond which frames are dropped (default 256k,\n"
"                   at most 64m, at least --mark)\n"
"    --json         the counters at the end as one JSON object on stdout\n"
"    -h, --help     this text\n"
"    -V, --version  print faultwire's version and exit\n"
"\n"
"EXIT STATUS\n"
"    0 after SIGTERM or SIGINT, 1 if an interface cannot be opened (needs\n"
"    root: CAP_NET_RAW), 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    ip netns exec mid faultwire veth-ma veth-mb --drop 20000 --reorder 20000\n"
"    ip netns exec mid faultwire veth-ma veth-mb --rate 1gbit --mark 32k\n";

/* --rate's queue, one per direction (frames leaving through a side). */
#define QUEUE_MAX	(64u << 20)	/* --limit's bound */
#define FRAME_MAX	9216

struct side {
	int fd, ifindex;
	struct linkq q;		/* --rate: frames waiting to leave through it */
	uint8_t held[9216];	/* a frame held back to reorder */
	ssize_t held_len;
	int held_for;		/* frames to let pass before it */
};

static volatile sig_atomic_t stop;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned long n_fwd, n_drop, n_dup, n_reorder, n_corrupt, n_unsent;
/* --rate */
static uint64_t q_rate;				/* bits/s; 0: no queue */
static size_t q_mark = 32 << 10, q_limit = 256 << 10, q_peak;
static unsigned long n_marked, n_qdrop, n_notect;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static bool chance(uint32_t ppm)
{
	return ppm && rnd() % 1000000 < ppm;
}

static int open_side(struct side *s, const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int buf = 8 << 20;

	s->ifindex = (int)if_nametoindex(ifname);
	if (!s->ifindex)
		return -1;
	sll.sll_ifindex = s->ifindex;
	s->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sll, sizeof(sll)))
		return -1;
	/* A burst of jumbo frames while we are not scheduled must not
	 * overflow the default ~200 KiB (root may exceed rmem_max). */
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	return 0;
}

/* Frames the kernel dropped on this socket (full receive buffer). */
static unsigned long overflowed(const struct side *s)
{
	struct tpacket_stats st = { 0 };
	socklen_t len = sizeof(st);

	return getsockopt(s->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) ? 0 : st.tp_drops;
}

static void put(struct side *out, const uint8_t *f, ssize_t len)
{
	if (send(out->fd, f, (size_t)len, 0) == len)
		n_fwd++;
	else
		n_unsent++;	/* e.g. ENOBUFS: the tap's queue is full */
}

static bool is_roce(const uint8_t *f, ssize_t len, struct roxe_pkt *pkt)
{
	return roxe_parse(f, f + len, (uint32_t)len, pkt) != ROXE_PKT_NOT_ROCE;
}

/* --- --rate: the queue --------------------------------------------------------- */
/* Set CE on an ECN-capable frame; false: not ECN-capable (Not-ECT, or
 * already CE). */
static bool mark_ce(uint8_t *f, const struct roxe_pkt *pkt)
{
	uint8_t *ip = f + pkt->l3_off;

	if (pkt->ip_version == 4) {
		unsigned ihl = (ip[0] & 15u) * 4, sum = 0;

		if ((ip[1] & 3) == 0 || (ip[1] & 3) == 3)
			return false;
		ip[1] |= 3;
		/* the header checksum again (RFC 791), over ihl bytes that
		 * roxe_parse found within the frame */
		ip[10] = ip[11] = 0;
		for (unsigned i = 0; i < ihl; i += 2)
			sum += (unsigned)ip[i] << 8 | ip[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
		return true;
	}
	/* IPv6: the traffic class's ECN bits are bits 5..4 of byte 1 */
	if ((ip[1] & 0x30) == 0 || (ip[1] & 0x30) == 0x30)
		return false;
	ip[1] |= 0x30;
	return true;
}

/* Send what the link has finished sending by now; returns when the next
 * frame will be done (0: the queue is empty). */
static uint64_t drain(struct side *out, uint64_t now)
{
	uint8_t f[FRAME_MAX];
	uint64_t next;
	uint32_t l;

	while ((l = linkq_pop(&out->q, now, f, sizeof(f), &next)))
		put(out, f, l);
	return next;
}

/* A RoCE frame arrives at the port out: marked, queued or dropped. */
static void enqueue(struct side *out, uint8_t *f, ssize_t len, const struct roxe_pkt *pkt)
{
	struct linkq *q = &out->q;
	uint64_t now = now_ns();

	drain(out, now);	/* the backlog it finds: what has not left by now */
	if (q->backlog + (size_t)len > q_limit) {
		n_qdrop++;
		return;
	}
	if (q->backlog >= q_mark) {
		if (mark_ce(f, pkt))
			n_marked++;
		else
			n_notect++;
	}
	if (!linkq_push(q, f, (uint32_t)len, now)) {
		n_qdrop++;	/* cannot happen: the ring holds the limit */
		return;
	}
	if (q->backlog > q_peak)
		q_peak = q->backlog;
}

/* A RoCE frame leaves through out: at once, or through the queue. */
static void emit(struct side *out, uint8_t *f, ssize_t len, const struct roxe_pkt *pkt)
{
	if (q_rate)
		enqueue(out, f, len, pkt);
	else
		put(out, f, len);
}

/* "1gbit", "100m", "2500000", "2.5g": bits per second; 0 if not one.
 * Digits and a point only: strtod() alone would take a sign, an exponent,
 * hex, "inf". */
static uint64_t parse_rate(const char *s)
{
	size_t n = strspn(s, "0123456789.");
	const char *end = s + n;
	char num[32], *rest;
	uint64_t m = 1;
	double v;

	if (!isdigit((unsigned char)*s) || n >= sizeof(num))
		return 0;
	memcpy(num, s, n);
	num[n] = 0;
	v = strtod(num, &rest);
	if (*rest)	/* a second point */
		return 0;
	switch (tolower((unsigned char)*end)) {
	case 'k': m = 1000; end++; break;
	case 'm': m = 1000000; end++; break;
	case 'g': m = 1000000000; end++; break;
	}
	if (!strcmp(end, "bit") || !strcmp(end, "bps"))
		end += 3;
	if (*end || v * m < 1000 || v * m > 400e9)
		return 0;
	return (uint64_t)(v * m);
}

/* The frame held back to reorder goes now. */
static void flush_held(struct side *out)
{
	struct roxe_pkt pkt;

	if (is_roce(out->held, out->held_len, &pkt))
		emit(out, out->held, out->held_len, &pkt);
	else
		put(out, out->held, out->held_len);
	out->held_len = 0;
}

static void forward(struct side *out, uint8_t *f, ssize_t len, const uint32_t ppm[4])
{
	struct roxe_pkt pkt;

	if (!is_roce(f, len, &pkt)) {
		put(out, f, len);
		return;
	}
	if (chance(ppm[0])) {
		n_drop++;
		return;
	}
	if (chance(ppm[3]) && len > 42) {	/* a bit past the Ethernet/IP/UDP headers */
		f[42 + rnd() % (uint64_t)(len - 42)] ^= (uint8_t)(1u << (rnd() % 8));
		n_corrupt++;
	}
	if (!out->held_len && chance(ppm[2])) {
		memcpy(out->held, f, (size_t)len);
		out->held_len = len;
		out->held_for = 1 + (int)(rnd() % 3);
		n_reorder++;
		return;
	}
	emit(out, f, len, &pkt);
	if (chance(ppm[1])) {
		emit(out, f, len, &pkt);
		n_dup++;
	}
	if (out->held_len && --out->held_for == 0)
		flush_held(out);
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char short_usage[] =
"Usage: faultwire IF1 IF2 [--drop|--dup|--reorder|--corrupt PPM] [--seed N]\n"
"                 [--rate RATE [--mark BYTES] [--limit BYTES]] [--json]\n";

/* The command line: 0, or the exit status of a usage error. */
static int parse(int argc, char **argv, uint32_t ppm[4], bool *json)
{
	enum { O_DROP = 256, O_DUP, O_REORDER, O_CORRUPT, O_SEED, O_RATE, O_MARK, O_LIMIT,
	       O_JSON };
	static const struct option lo[] = {
		{ "drop", 1, NULL, O_DROP }, { "dup", 1, NULL, O_DUP },
		{ "reorder", 1, NULL, O_REORDER }, { "corrupt", 1, NULL, O_CORRUPT },
		{ "seed", 1, NULL, O_SEED }, { "help", 0, NULL, 'h' },
		{ "rate", 1, NULL, O_RATE }, { "mark", 1, NULL, O_MARK },
		{ "limit", 1, NULL, O_LIMIT }, { "json", 0, NULL, O_JSON },
		{ "version", 0, NULL, 'V' },
		{ 0 },
	};
	static const char *const ppm_opt[] = { "--drop", "--dup", "--reorder", "--corrupt" };
	uint64_t v;
	int opt, err = 0;

	while (!err && (opt = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (opt) {
		case O_DROP:
		case O_DUP:
		case O_REORDER:
		case O_CORRUPT:
			err = tool_uint(ppm_opt[opt - O_DROP], optarg, 0, 1000000, &ppm[opt - O_DROP]);
			break;
		case O_SEED:
			err = tool_num("--seed", optarg, 0, UINT64_MAX, 0, &v);
			rng = v | 1;	/* xorshift's state is never 0 */
			break;
		case O_RATE:
			q_rate = parse_rate(optarg);
			if (!q_rate)
				return tool_usage_error("--rate: 1k to 400g bit/s, not '%s'", optarg);
			break;
		case O_MARK:
		case O_LIMIT:
			err = tool_num(opt == O_MARK ? "--mark" : "--limit", optarg, 0, QUEUE_MAX,
				       TOOL_NUM_SUFFIX, &v);
			*(opt == O_MARK ? &q_mark : &q_limit) = (size_t)v;
			break;
		case O_JSON:
			*json = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
			tool_version_exit("faultwire");
		default:
			return tool_usage_error(NULL);
		}
	}
	if (err)
		return err;
	if (argc - optind != 2)
		return tool_usage_error(argc - optind < 2 ? "two interfaces, IF1 and IF2" :
					"unexpected argument '%s'", argv[argc - 1]);
	if (q_limit < q_mark)
		return tool_usage_error("--limit below --mark");
	return 0;
}

/* What it did, at the end: text, or --json's object. */
static void report(const struct side sides[2], bool json)
{
	unsigned long over = overflowed(&sides[0]) + overflowed(&sides[1]);

	if (!json) {
		printf("faultwire: forwarded %lu, dropped %lu, duplicated %lu, reordered %lu, "
		       "corrupted %lu, overflowed %lu, unsent %lu\n", n_fwd, n_drop, n_dup,
		       n_reorder, n_corrupt, over, n_unsent);
		if (q_rate)
			printf("faultwire: queue at %llu bit/s: marked %lu, dropped %lu, above the "
			       "mark not ECN-capable %lu, peak backlog %zu bytes\n",
			       (unsigned long long)q_rate, n_marked, n_qdrop, n_notect, q_peak);
		return;
	}
	printf("{\"forwarded\": %lu, \"dropped\": %lu, \"duplicated\": %lu, \"reordered\": %lu, "
	       "\"corrupted\": %lu, \"overflowed\": %lu, \"unsent\": %lu, \"queue\": ", n_fwd,
	       n_drop, n_dup, n_reorder, n_corrupt, over, n_unsent);
	if (q_rate)
		printf("{\"rate_bps\": %llu, \"marked\": %lu, \"dropped\": %lu, \"not_ect\": %lu, "
		       "\"peak_backlog_bytes\": %zu}}\n", (unsigned long long)q_rate, n_marked,
		       n_qdrop, n_notect, q_peak);
	else
		printf("null}\n");
}

int main(int argc, char **argv)
{
	uint64_t last_rx = now_ns();
	uint32_t ppm[4] = { 0 };	/* drop, dup, reorder, corrupt */
	struct side sides[2] = { 0 };
	uint8_t buf[9216];
	bool json = false;
	int err;

	tool_cli_init("faultwire", short_usage);
	err = parse(argc, argv, ppm, &json);
	if (err)
		return err;
	for (int i = 0; q_rate && i < 2; i++) {
		/* the limit's bytes, a header for each of its smallest
		 * frames (60 bytes), a frame's slack */
		if (linkq_init(&sides[i].q, q_limit + (q_limit / 60 + 2) * sizeof(struct linkq_hdr) +
				FRAME_MAX, q_rate)) {
			fprintf(stderr, "faultwire: no memory for the queues\n");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		if (open_side(&sides[i], argv[optind + i])) {
			fprintf(stderr, "faultwire: %s: %s\n", argv[optind + i], strerror(errno));
			return 1;
		}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop) {
		struct pollfd pfd[2] = { { sides[0].fd, POLLIN, 0 }, { sides[1].fd, POLLIN, 0 } };
		uint64_t now = now_ns(), wake = 1000000;	/* 1 ms */
		struct timespec ts;
		int r;

		/* the queues: sleep until the next frame is through */
		for (int i = 0; q_rate && i < 2; i++) {
			uint64_t done = drain(&sides[i], now);

			if (done && done - now < wake)
				wake = done > now ? done - now : 0;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (long)wake;
		r = ppoll(pfd, 2, &ts, NULL);
		now = now_ns();
		/* A held frame never waits for traffic that may not come
		 * (1 ms of silence). */
		if (r <= 0) {
			for (int i = 0; i < 2 && now - last_rx >= 1000000; i++)
				if (sides[i].held_len)
					flush_held(&sides[i]);
			continue;
		}
		last_rx = now;
		/* Up to a batch from each side in turn: whatever is queued. */
		for (int i = 0; i < 2; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			for (int k = 0; k < 64; k++) {
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				ssize_t len;

				len = recvfrom(sides[i].fd, buf, sizeof(buf), MSG_DONTWAIT,
					       (struct sockaddr *)&from, &fl);
				if (len <= 0)
					break;
				/* Our own transmissions come back as outgoing: skip. */
				if (from.sll_pkttype == PACKET_OUTGOING)
					continue;
				forward(&sides[!i], buf, len, ppm);
			}
		}
	}
	report(sides, json);
	linkq_free(&sides[0].q);
	linkq_free(&sides[1].q);
	return 0;
}
