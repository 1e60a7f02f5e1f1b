// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * RDS over RDMA (rds_rdma) between two addresses of the guest, for
 * kmod_ulp.sh (issue #39); Debian 12 has no rds-tools.
 *
 *   kmod_rds ADDR_A ADDR_B COUNT TOS
 *
 * Two AF_RDS sockets pinned to the IB transport (SO_RDS_TRANSPORT) with
 * type of service TOS (a connection of its own for each address pair and
 * TOS), one bound to each address. COUNT messages go A to B (A's side
 * connects), then COUNT B to A, each
 * of its own size (1 byte to 1 MiB) and content: a child receives and
 * checks every byte, the sender's address and the order while the parent
 * sends. Then RDS's own view (the RDS_INFO_* getsockopts): both
 * connections up on the "infiniband" transport, their RDMA attributes,
 * and rds_ib's counter of messages received over IB grown by at least
 * 2 * COUNT. Between, RDMA through RDS: B maps a buffer for A
 * (RDS_CMSG_RDMA_MAP: a fast-registered, zero-based MR that starts
 * inside a page), A RDMA WRITEs
 * it and READs it back after B rewrote it (RDS_CMSG_RDMA_ARGS), notified
 * of each. Everything is bounded by an alarm.
 *
 * Exit: 0 pass, 1 fail, 4 skip (no RDS or no IB transport).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define MAGIC 0x52445331u /* "RDS1" */
#define MAX_MSG (1u << 20)
#define PORT_A 18700
#define PORT_B 18701
#define RDMA_LEN (256u << 10)

struct hdr {
	uint32_t magic, dir, seq, len;
};

static unsigned int msg_len(unsigned int seq)
{
	static const unsigned int sizes[] = {
		sizeof(struct hdr), 17, 4072, 4096, 4097, 8195, 65536, 100000,
	};

	/* every 16th a 1 MiB message: RDS's largest, 256 fragments */
	if (seq % 16 == 15)
		return MAX_MSG;
	return sizes[seq % (sizeof(sizes) / sizeof(sizes[0]))];
}

static uint8_t pat(uint32_t dir, uint32_t seq, uint32_t i)
{
	uint32_t x = (dir + 1) * 2654435761u ^ seq * 40503u ^ i * 2246822519u;

	return (uint8_t)(x ^ x >> 13 ^ x >> 24);
}

static void fill(uint8_t *buf, uint32_t dir, uint32_t seq, uint32_t len)
{
	struct hdr h = { MAGIC, dir, seq, len };
	uint32_t i;

	memcpy(buf, &h, sizeof(h));
	for (i = sizeof(h); i < len; i++)
		buf[i] = pat(dir, seq, i);
}

static int rds_socket(struct in_addr a, uint16_t port, rds_tos_t tos)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = a };
	int s, v = RDS_TRANS_IB, buf = 4 * MAX_MSG;

	s = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (s < 0) {
		printf("kmod_rds: socket(AF_RDS): %s\n", strerror(errno));
		return errno == EAFNOSUPPORT ? -4 : -1;
	}
	if (setsockopt(s, SOL_RDS, SO_RDS_TRANSPORT, &v, sizeof(v)) < 0) {
		printf("kmod_rds: SO_RDS_TRANSPORT IB: %s\n", strerror(errno));
		close(s);
		return -1;
	}
	if (ioctl(s, SIOCRDSSETTOS, &tos) < 0) {
		printf("kmod_rds: SIOCRDSSETTOS %u: %s\n", tos, strerror(errno));
		close(s);
		return -1;
	}
	/* a message may be at most half the send buffer */
	if (setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0) {
		printf("kmod_rds: SO_SNDBUFFORCE/SO_RCVBUFFORCE: %s\n", strerror(errno));
		close(s);
		return -1;
	}
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		printf("kmod_rds: bind %s:%u: %s\n", inet_ntoa(a), port, strerror(errno));
		close(s);
		return -1;
	}
	return s;
}

/* COUNT messages from the sender's address to RX, each checked */
static int receive(int rx, struct in_addr from, uint16_t from_port, uint32_t dir,
		   unsigned int count)
{
	uint8_t *buf = malloc(MAX_MSG + 1);
	unsigned int seq;
	uint32_t i;

	if (!buf)
		return 1;
	for (seq = 0; seq < count; seq++) {
		struct sockaddr_in sin;
		struct iovec iov = { buf, MAX_MSG + 1 };
		struct msghdr mh = { .msg_name = &sin, .msg_namelen = sizeof(sin),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		struct pollfd p = { rx, POLLIN, 0 };
		uint32_t len = msg_len(seq);
		struct hdr h;
		ssize_t n;

		if (poll(&p, 1, 30000) != 1) {
			printf("kmod_rds: dir %u: message %u not received in 30 s\n", dir, seq);
			return 1;
		}
		n = recvmsg(rx, &mh, 0);
		if (n < 0) {
			printf("kmod_rds: dir %u: recvmsg: %s\n", dir, strerror(errno));
			return 1;
		}
		if (mh.msg_flags & MSG_TRUNC || (size_t)n < sizeof(h)) {
			printf("kmod_rds: dir %u: message %u truncated (%zd bytes)\n", dir, seq, n);
			return 1;
		}
		if (sin.sin_addr.s_addr != from.s_addr || ntohs(sin.sin_port) != from_port) {
			printf("kmod_rds: dir %u: message %u from %s:%u\n", dir, seq,
			       inet_ntoa(sin.sin_addr), ntohs(sin.sin_port));
			return 1;
		}
		memcpy(&h, buf, sizeof(h));
		if (h.magic != MAGIC || h.dir != dir || h.seq != seq || h.len != len ||
		    (size_t)n != len) {
			printf("kmod_rds: dir %u: expected message %u of %u bytes, got %zd bytes "
			       "(magic %#x dir %u seq %u len %u)\n", dir, seq, len, n, h.magic,
			       h.dir, h.seq, h.len);
			return 1;
		}
		for (i = sizeof(h); i < len; i++) {
			if (buf[i] != pat(dir, seq, i)) {
				printf("kmod_rds: dir %u: message %u differs at byte %u\n", dir,
				       seq, i);
				return 1;
			}
		}
	}
	free(buf);
	return 0;
}

/* COUNT messages TX -> TO:TO_PORT while a child receives them on RX */
static int exchange(int tx, int rx, struct in_addr from, uint16_t from_port,
		    struct in_addr to, uint16_t to_port, uint32_t dir, unsigned int count)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(to_port), .sin_addr = to };
	uint8_t *buf = malloc(MAX_MSG);
	unsigned long bytes = 0;
	unsigned int seq;
	int st, rc = 0;
	pid_t pid;

	if (!buf)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		alarm(120);	/* not inherited */
		_exit(receive(rx, from, from_port, dir, count));
	}
	for (seq = 0; seq < count && !rc; seq++) {
		uint32_t len = msg_len(seq);

		fill(buf, dir, seq, len);
		if (sendto(tx, buf, len, 0, (struct sockaddr *)&sin, sizeof(sin)) != (ssize_t)len) {
			printf("kmod_rds: dir %u: send of message %u (%u bytes): %s\n", dir, seq,
			       len, strerror(errno));
			rc = 1;
			kill(pid, SIGKILL);
		}
		bytes += len;
	}
	free(buf);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		rc = 1;
	if (!rc)
		printf("kmod_rds: ok: %u messages (%lu bytes) %s -> ", count, bytes,
		       inet_ntoa(from));
	if (!rc)
		printf("%s, every byte checked\n", inet_ntoa(to));
	return rc;
}

/* RDMA through RDS (rds_ib's FRWR): what one recvmsg brought */
struct got {
	ssize_t n;
	struct hdr h;
	int has_cookie, has_notify;
	rds_rdma_cookie_t cookie;
	struct rds_rdma_notify notify;
};

static int recv_one(int s, struct got *g)
{
	union {
		char buf[256];
		struct cmsghdr align;
	} ctl;
	struct pollfd p = { s, POLLIN, 0 };
	struct iovec iov = { &g->h, sizeof(g->h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;

	memset(g, 0, sizeof(*g));
	if (poll(&p, 1, 30000) != 1) {
		printf("kmod_rds: rdma: nothing received in 30 s\n");
		return -1;
	}
	g->n = recvmsg(s, &mh, 0);
	if (g->n < 0) {
		printf("kmod_rds: rdma: recvmsg: %s\n", strerror(errno));
		return -1;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(g->cookie))) {
			memcpy(&g->cookie, CMSG_DATA(c), sizeof(g->cookie));
			g->has_cookie = 1;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(g->notify))) {
			memcpy(&g->notify, CMSG_DATA(c), sizeof(g->notify));
			g->has_notify = 1;
		}
	}
	return 0;
}

/* a 16-byte message TX -> TO, with one RDS control message */
static int send_ctl(int tx, struct in_addr to, uint16_t port, uint32_t dir, int type,
		    const void *arg, size_t len)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = to };
	struct hdr h = { MAGIC, dir, 0, sizeof(h) };
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_name = &sin, .msg_namelen = sizeof(sin), .msg_iov = &iov,
			     .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (type) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(len);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(len);
		memcpy(CMSG_DATA(c), arg, len);
	}
	if (sendmsg(tx, &mh, 0) != (ssize_t)sizeof(h)) {
		printf("kmod_rds: rdma: sendmsg (dir %u, cmsg %d): %s\n", dir, type,
		       strerror(errno));
		return -1;
	}
	return 0;
}

/* until a message of DIR (none: 0) and, with WANT_NOTIFY, the RDMA
 * notification of TOKEN have come; bounded by recv_one's wait */
static int await(int s, uint32_t dir, int want_notify, uint64_t token,
		 rds_rdma_cookie_t *cookie)
{
	int have_msg = !dir, have_notify = !want_notify;
	struct got g;

	for (int i = 0; i < 8 && !(have_msg && have_notify); i++) {
		if (recv_one(s, &g))
			return -1;
		if (g.has_notify) {
			if (g.notify.user_token != token || g.notify.status != RDS_RDMA_SUCCESS) {
				printf("kmod_rds: rdma: notification token %#" PRIx64
				       " status %d (token %#" PRIx64 " and 0 expected)\n",
				       (uint64_t)g.notify.user_token, g.notify.status, token);
				return -1;
			}
			have_notify = 1;
			continue;
		}
		if (have_msg || g.n != sizeof(g.h) || g.h.magic != MAGIC || g.h.dir != dir) {
			printf("kmod_rds: rdma: unexpected message (%zd bytes, dir %u, %u wanted)\n",
			       g.n, g.h.dir, dir);
			return -1;
		}
		if (cookie && !g.has_cookie) {
			printf("kmod_rds: rdma: message %u came without its RDMA cookie\n", dir);
			return -1;
		}
		if (cookie)
			*cookie = g.cookie;
		have_msg = 1;
	}
	return have_msg && have_notify ? 0 : -1;
}

static int differs(const uint8_t *buf, uint32_t dir, const char *what)
{
	for (uint32_t i = 0; i < RDMA_LEN; i++) {
		if (buf[i] != pat(dir, 7, i)) {
			printf("kmod_rds: rdma: %s differs at byte %u\n", what, i);
			return 1;
		}
	}
	return 0;
}

/*
 * B maps a buffer for A (RDS_CMSG_RDMA_MAP on a message: rds_ib
 * fast-registers it, zero-based, on the connection's QP), A RDMA WRITEs it
 * (RDS_CMSG_RDMA_ARGS on a message B gets after the data), then READs it
 * back after B rewrote it; A is notified of each (RDS_RDMA_NOTIFY_ME).
 */
static int rdma_phase(int sa, int sb, struct in_addr a, struct in_addr b)
{
	uint8_t *ba = aligned_alloc(4096, RDMA_LEN + 4096), *bb0 = aligned_alloc(4096, RDMA_LEN + 4096);
	/* B's buffer starts 100 bytes into a page: the cookie's offset */
	uint8_t *bb = bb0 + 100;
	rds_rdma_cookie_t cookie = 0, cookie_b = 0;
	struct rds_iovec lv;
	struct rds_get_mr_args map;
	struct rds_rdma_args ra;
	uint32_t i;

	if (!ba || !bb0)
		return 1;
	memset(bb, 0, RDMA_LEN);
	map = (struct rds_get_mr_args){ { (uintptr_t)bb, RDMA_LEN }, (uintptr_t)&cookie_b, 0 };
	if (send_ctl(sb, a, PORT_A, 10, RDS_CMSG_RDMA_MAP, &map, sizeof(map)) ||
	    await(sa, 10, 0, 0, &cookie))
		return 1;
	/* A writes B's buffer */
	for (i = 0; i < RDMA_LEN; i++)
		ba[i] = pat(11, 7, i);
	lv = (struct rds_iovec){ (uintptr_t)ba, RDMA_LEN };
	ra = (struct rds_rdma_args){ cookie, { 0, RDMA_LEN }, (uintptr_t)&lv, 1,
				     RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME, 0x11 };
	if (send_ctl(sa, b, PORT_B, 11, RDS_CMSG_RDMA_ARGS, &ra, sizeof(ra)) ||
	    await(sb, 11, 0, 0, NULL) || differs(bb, 11, "B's buffer after A's RDMA WRITE") ||
	    await(sa, 0, 1, 0x11, NULL))
		return 1;
	/* B rewrites it, A reads it */
	for (i = 0; i < RDMA_LEN; i++)
		bb[i] = pat(12, 7, i);
	memset(ba, 0, RDMA_LEN);
	ra = (struct rds_rdma_args){ cookie, { 0, RDMA_LEN }, (uintptr_t)&lv, 1,
				     RDS_RDMA_NOTIFY_ME, 0x12 };
	if (send_ctl(sb, a, PORT_A, 12, 0, NULL, 0) || await(sa, 12, 0, 0, NULL) ||
	    send_ctl(sa, b, PORT_B, 13, RDS_CMSG_RDMA_ARGS, &ra, sizeof(ra)) ||
	    await(sb, 13, 0, 0, NULL) || await(sa, 0, 1, 0x12, NULL) ||
	    differs(ba, 12, "A's buffer after its RDMA READ"))
		return 1;
	printf("kmod_rds: ok: rdma: %u bytes RDMA WRITE and READ through B's mapped buffer "
	       "(cookie %#" PRIx64 "), every byte checked\n", RDMA_LEN, (uint64_t)cookie);
	free(ba);
	free(bb0);
	return 0;
}

/* an RDS_INFO_* table: its items in *buf, the item size returned */
static int rds_info(int s, int opt, void **buf, socklen_t *len)
{
	int each;

	*len = 65536;
	for (int i = 0; i < 4; i++) {
		*buf = malloc(*len);
		if (!*buf)
			return -1;
		each = getsockopt(s, SOL_RDS, opt, *buf, len);
		if (each > 0)
			return each;
		free(*buf);
		*buf = NULL;
		if (each < 0 && errno != ENOSPC)
			return -1;
		*len += 65536;
	}
	return -1;
}

static int64_t counter(int s, const char *name)
{
	socklen_t len;
	void *buf;
	int each = rds_info(s, RDS_INFO_COUNTERS, &buf, &len);
	int64_t v = -1;

	if (each < (int)sizeof(struct rds_info_counter))
		return -1;
	for (socklen_t o = 0; o + each <= len; o += each) {
		struct rds_info_counter c;

		memcpy(&c, (char *)buf + o, sizeof(c));
		if (!strncmp((char *)c.name, name, sizeof(c.name)))
			v = (int64_t)c.value;
	}
	free(buf);
	return v;
}

/* both connections up on the IB transport, with their RDMA attributes */
static int check_conns(int s, struct in_addr a, struct in_addr b, rds_tos_t tos)
{
	int found = 0, ib = 0, each;
	socklen_t len;
	void *buf;
	char la[16], fa[16];

	each = rds_info(s, RDS_INFO_CONNECTIONS, &buf, &len);
	if (each < (int)sizeof(struct rds_info_connection)) {
		printf("kmod_rds: RDS_INFO_CONNECTIONS: %s\n", strerror(errno));
		return 1;
	}
	for (socklen_t o = 0; o + each <= len; o += each) {
		struct rds_info_connection c;

		memcpy(&c, (char *)buf + o, sizeof(c));
		if (!((c.laddr == a.s_addr && c.faddr == b.s_addr) ||
		      (c.laddr == b.s_addr && c.faddr == a.s_addr)) || c.tos != tos)
			continue;
		inet_ntop(AF_INET, &c.laddr, la, sizeof(la));
		inet_ntop(AF_INET, &c.faddr, fa, sizeof(fa));
		c.transport[TRANSNAMSIZ - 1] = 0;
		printf("kmod_rds:   connection %s -> %s: transport %s, flags %#x, next tx %" PRIu64
		       " rx %" PRIu64 "\n", la, fa, (char *)c.transport, c.flags,
		       (uint64_t)c.next_tx_seq, (uint64_t)c.next_rx_seq);
		if (!strcmp((char *)c.transport, "infiniband") &&
		    c.flags & RDS_INFO_CONNECTION_FLAG_CONNECTED)
			found++;
	}
	free(buf);
	each = rds_info(s, RDS_INFO_IB_CONNECTIONS, &buf, &len);
	if (each < (int)offsetof(struct rds_info_rdma_connection, tos)) {
		printf("kmod_rds: RDS_INFO_IB_CONNECTIONS: %s\n", strerror(errno));
		return 1;
	}
	for (socklen_t o = 0; o + each <= len; o += each) {
		struct rds_info_rdma_connection c;

		memset(&c, 0, sizeof(c));
		memcpy(&c, (char *)buf + o, (size_t)each < sizeof(c) ? (size_t)each : sizeof(c));
		if (!((c.src_addr == a.s_addr && c.dst_addr == b.s_addr) ||
		      (c.src_addr == b.s_addr && c.dst_addr == a.s_addr)) || c.tos != tos)
			continue;
		inet_ntop(AF_INET, &c.src_addr, la, sizeof(la));
		inet_ntop(AF_INET, &c.dst_addr, fa, sizeof(fa));
		printf("kmod_rds:   ib connection %s -> %s: max_send_wr %u max_recv_wr %u "
		       "max_send_sge %u rdma_mr_max %u rdma_mr_size %u\n", la, fa,
		       c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.rdma_mr_max,
		       c.rdma_mr_size);
		ib++;
	}
	free(buf);
	if (found != 2 || ib != 2) {
		printf("kmod_rds: FAIL: %d connections up on infiniband, %d IB connections "
		       "(2 and 2 expected)\n", found, ib);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct in_addr a, b;
	unsigned int count, tos;
	int64_t incs0, incs1;
	int sa, sb, rc;

	if (argc != 5 || !inet_aton(argv[1], &a) || !inet_aton(argv[2], &b) ||
	    (count = (unsigned int)strtoul(argv[3], NULL, 0)) == 0 || count > 100000 ||
	    (tos = (unsigned int)strtoul(argv[4], NULL, 0)) > 255) {
		fprintf(stderr, "usage: kmod_rds ADDR_A ADDR_B COUNT TOS\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120);
	/* no RDS at all is a skip; an address IB refuses is a failure */
	sa = rds_socket(a, PORT_A, (rds_tos_t)tos);
	if (sa < 0)
		return sa == -4 ? 4 : 1;
	sb = rds_socket(b, PORT_B, (rds_tos_t)tos);
	if (sb < 0)
		return 1;
	incs0 = counter(sa, "ib_rx_total_incs");
	if (incs0 < 0) {
		printf("kmod_rds: no ib_rx_total_incs counter (RDS_INFO_COUNTERS)\n");
		return 1;
	}
	rc = exchange(sa, sb, a, PORT_A, b, PORT_B, 0, count);
	if (!rc)
		rc = exchange(sb, sa, b, PORT_B, a, PORT_A, 1, count);
	if (rc)
		return 1;
	if (rdma_phase(sa, sb, a, b))
		return 1;
	if (check_conns(sa, a, b, (rds_tos_t)tos))
		return 1;
	incs1 = counter(sa, "ib_rx_total_incs");
	if (incs1 - incs0 < 2 * (int64_t)count) {
		printf("kmod_rds: FAIL: rds_ib received %" PRId64 " messages, %u were sent\n",
		       incs1 - incs0, 2 * count);
		return 1;
	}
	printf("kmod_rds: ok: rds_ib received %" PRId64 " messages (ib_rx_total_incs)\n",
	       incs1 - incs0);
	return 0;
}
