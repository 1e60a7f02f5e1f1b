// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The tools' out-of-band TCP connection (tool.h). */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "tool.h"

int tool_tcp_connect(const char *host, int port, int family, int retry_ms,
		     const volatile int *stop)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *res, *t;
	char service[16];
	int fd = -1, err;

	snprintf(service, sizeof(service), "%d", port);
	err = getaddrinfo(host, service, &hints, &res);
	if (err) {
		fprintf(stderr, "%s for %s:%d\n", gai_strerror(err), host, port);
		return -1;
	}
	/* A server started a moment ago may not listen yet. */
	for (int waited = 0; fd < 0 && !(stop && *stop); waited += 100) {
		for (t = res; t; t = t->ai_next) {
			fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
			if (fd >= 0 && !connect(fd, t->ai_addr, t->ai_addrlen))
				break;
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if (fd >= 0 || waited >= retry_ms)
			break;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "Couldn't connect to %s:%d\n", host, port);
	return fd;
}

int tool_tcp_accept(int port, bool ipv4_only)
{
	struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
	struct sockaddr_in sa4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr *sa = ipv4_only ? (struct sockaddr *)&sa4 : (struct sockaddr *)&sa6;
	socklen_t len = ipv4_only ? sizeof(sa4) : sizeof(sa6);
	int one = 1, fd, conn;

	fd = socket(ipv4_only ? AF_INET : AF_INET6, SOCK_STREAM, 0);
	if (fd < 0 && !ipv4_only && errno == EAFNOSUPPORT) {
		/* IPv6 disabled here: IPv4 only, then. */
		sa = (struct sockaddr *)&sa4;
		len = sizeof(sa4);
		fd = socket(AF_INET, SOCK_STREAM, 0);
	}
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, len) || listen(fd, 1)) {
		fprintf(stderr, "Couldn't listen to port %d: %s\n", port, strerror(errno));
		close(fd);
		return -1;
	}
	conn = accept(fd, NULL, NULL);
	if (conn < 0 && errno != EINTR)
		fprintf(stderr, "accept: %s\n", strerror(errno));
	close(fd);
	return conn;
}

int tool_parse_mtu(const char *s, enum ibv_mtu *m)
{
	static const struct { const char *s; enum ibv_mtu m; } t[] = {
		{ "256", IBV_MTU_256 }, { "512", IBV_MTU_512 }, { "1024", IBV_MTU_1024 },
		{ "2048", IBV_MTU_2048 }, { "4096", IBV_MTU_4096 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(s, t[i].s)) {
			*m = t[i].m;
			return 0;
		}
	return -1;
}
