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
 *             [--corrupt PPM] [--seed N]
 *
 * Runs until SIGTERM/SIGINT, then prints what it did on stdout, with the
 * frames the kernel dropped because a socket's receive buffer was full
 * ("overflowed") and those the kernel refused to send ("unsent", e.g. a
 * tap whose reader is behind): faults nobody asked for. The receive
 * buffers are large to keep them at 0 when the forwarder is starved of CPU
 * for a while.
 */
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
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include "roxe/parse.h"

static const char usage_text[] =
"NAME\n"
"    faultwire - a faulty hop for RoCE v2 frames between two interfaces\n"
"\n"
"SYNOPSIS\n"
"    faultwire IF1 IF2 [--drop PPM] [--dup PPM] [--reorder PPM]\n"
"              [--corrupt PPM] [--seed N]\n"
"    faultwire -h | --help\n"
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
"OPTIONS\n"
"    --drop PPM     drop RoCE v2 frames\n"
"    --dup PPM      send RoCE v2 frames twice\n"
"    --reorder PPM  hold RoCE v2 frames back\n"
"    --corrupt PPM  flip a bit of RoCE v2 frames\n"
"    --seed N       seed of the pseudo-random choices (the same seed makes\n"
"                   the same choices for the same frames)\n"
"    -h, --help     this text\n"
"\n"
"EXIT STATUS\n"
"    0 after SIGTERM or SIGINT, 1 if an interface cannot be opened (needs\n"
"    root: CAP_NET_RAW), 2 on a usage error.\n"
"\n"
"EXAMPLE\n"
"    ip netns exec mid faultwire veth-ma veth-mb --drop 20000 --reorder 20000\n";

struct side {
	int fd, ifindex;
	uint8_t held[9216];	/* a frame held back to reorder */
	ssize_t held_len;
	int held_for;		/* frames to let pass before it */
};

static volatile sig_atomic_t stop;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned long n_fwd, n_drop, n_dup, n_reorder, n_corrupt, n_unsent;

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

static bool is_roce(const uint8_t *f, ssize_t len)
{
	struct roxe_pkt pkt;

	return roxe_parse(f, f + len, (uint32_t)len, &pkt) != ROXE_PKT_NOT_ROCE;
}

static void forward(struct side *out, uint8_t *f, ssize_t len, const uint32_t ppm[4])
{
	if (!is_roce(f, len)) {
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
	put(out, f, len);
	if (chance(ppm[1])) {
		put(out, f, len);
		n_dup++;
	}
	if (out->held_len && --out->held_for == 0) {
		put(out, out->held, out->held_len);
		out->held_len = 0;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "drop", 1, NULL, 'd' }, { "dup", 1, NULL, 'u' }, { "reorder", 1, NULL, 'r' },
		{ "corrupt", 1, NULL, 'c' }, { "seed", 1, NULL, 's' }, { "help", 0, NULL, 'h' },
		{ 0 },
	};
	uint32_t ppm[4] = { 0 };	/* drop, dup, reorder, corrupt */
	struct side sides[2] = { 0 };
	uint8_t buf[9216];
	int opt;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': ppm[0] = (uint32_t)atoi(optarg); break;
		case 'u': ppm[1] = (uint32_t)atoi(optarg); break;
		case 'r': ppm[2] = (uint32_t)atoi(optarg); break;
		case 'c': ppm[3] = (uint32_t)atoi(optarg); break;
		case 's': rng = strtoull(optarg, NULL, 0) | 1; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs("Try 'faultwire --help'.\n", stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: faultwire IF1 IF2 [--drop|--dup|--reorder|--corrupt PPM] [--seed N]\n");
		return 2;
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

		/* A held frame never waits for traffic that may not come. */
		if (poll(pfd, 2, 1) == 0) {
			for (int i = 0; i < 2; i++)
				if (sides[i].held_len) {
					put(&sides[i], sides[i].held, sides[i].held_len);
					sides[i].held_len = 0;
				}
			continue;
		}
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
	printf("faultwire: forwarded %lu, dropped %lu, duplicated %lu, reordered %lu, corrupted %lu, "
	       "overflowed %lu, unsent %lu\n", n_fwd, n_drop, n_dup, n_reorder, n_corrupt,
	       overflowed(&sides[0]) + overflowed(&sides[1]), n_unsent);
	return 0;
}
