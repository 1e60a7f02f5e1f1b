// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The control connection: client and server swap addresses (GID, MAC,
 * QPN) and results over TCP, one line of space-separated key=value words
 * per message; test traffic never goes this way.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "roxe/limits.h"
#include "rawperf.h"

#define CTRL_EVERY	1024		/* idle polls between control checks */

int ctrl_listen(int port)
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

int ctrl_accept(int lfd)
{
	int fd;

	do {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR && !interrupted);
	if (fd < 0 && !interrupted)
		err_msg("accept: %s", strerror(errno));
	return fd;
}

int ctrl_connect(const char *host, int port)
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
int ctrl_recv(int fd, char *buf, size_t cap, int timeout_ms)
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

int ctrl_send(int fd, const char *fmt, ...)
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
bool kv(const char *line, const char *key, char *out, size_t cap)
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

bool kv_u64(const char *line, const char *key, uint64_t *v)
{
	char buf[32], *end;

	if (!kv(line, key, buf, sizeof(buf)))
		return false;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	return !errno && !*end && end != buf;
}

bool kv_i64(const char *line, const char *key, int64_t *v)
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
int peer_parse(const char *line, struct peer *p)
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

void side_words(const struct side *s, char *buf, size_t len)
{
	char gid[INET6_ADDRSTRLEN], mac[24];

	roxe_gid_ntop(s->gid, gid, sizeof(gid));
	mac_ntop(s->mac, mac, sizeof(mac));
	snprintf(buf, len, "gid=%s mac=%s qpn=%u zerocopy=%d", gid, mac, s->qpn,
		 s->afxdp ? roxe_afxdp_zerocopy(s->afxdp) : 0);
}

/* A nonblocking look at the control connection while spinning, every
 * CTRL_EVERY idle turns (*idle counts them): 1 with a line in buf, 0
 * nothing yet, -1 the client went away (said on stderr). */
int ctrl_poll(int fd, uint64_t *idle, char *buf, size_t cap)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (++*idle % CTRL_EVERY || poll(&p, 1, 0) <= 0)
		return 0;
	if (ctrl_recv(fd, buf, cap, CTRL_TIMEOUT_MS)) {
		err_msg("the client went away");
		return -1;
	}
	return 1;
}
