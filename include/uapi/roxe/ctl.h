/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxed's status socket, read by `roxectl devices`. Each roxed listens on a
 * Unix stream socket ROXE_CTL_DIR/IFACE.sock (root only); a client connects
 * and roxed writes its status as text, one "key value" line per item, at
 * most ROXE_CTL_MAX bytes, then closes. Keys: pid, interface, ifindex,
 * device, port, mtu, backend, engines, uptime_s, user_contexts, qps, cqs,
 * srqs, mrs, commands, command_errors, async_events, cq_events; a reader
 * ignores keys it does not know. A socket nobody accepts on (connect
 * fails) is what a killed roxed left behind.
 */
#ifndef ROXE_CTL_H
#define ROXE_CTL_H

#include <stddef.h>

#define ROXE_CTL_DIR	"/run/roxe"
#define ROXE_CTL_SUFFIX	".sock"
#define ROXE_CTL_MAX	4096

/* roxed: listen on the socket of ifname (a stale one is replaced); the
 * listening descriptor (non-blocking) or a negative errno. */
int roxe_ctl_listen(const char *ifname, char *path, size_t path_len);
/* roxed: answer every waiting client with text. */
void roxe_ctl_reply(int lfd, const char *text);
/* roxectl: the status text behind the socket at path, NUL-terminated in
 * buf; its length or a negative errno (-ECONNREFUSED: stale socket). */
int roxe_ctl_query(const char *path, char *buf, size_t len);

#endif /* ROXE_CTL_H */
