/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What roxe's command-line tools share (build/lib/libroxe-tools.a): the
 * out-of-band TCP connection of the pingpong and perf exchanges, and
 * option parsing that must read the same everywhere.
 */
#ifndef ROXE_TOOL_H
#define ROXE_TOOL_H

#include <stdbool.h>
#include <infiniband/verbs.h>

/* Connect to host:port (family AF_UNSPEC or AF_INET), retrying for up to
 * retry_ms while nothing listens yet (0: one attempt); stop early when
 * *stop turns true. The fd, or -1 with a message on stderr. */
int tool_tcp_connect(const char *host, int port, int family, int retry_ms,
		     const volatile int *stop);
/* Listen on port (IPv4 only, as perftest; else IPv6 with IPv4 mapped)
 * and accept one connection. The fd, or -1 with a message on stderr. */
int tool_tcp_accept(int port, bool ipv4_only);
/* "256".."4096" to an ibv_mtu; -1 for anything else. */
int tool_parse_mtu(const char *s, enum ibv_mtu *mtu);

#endif /* ROXE_TOOL_H */
