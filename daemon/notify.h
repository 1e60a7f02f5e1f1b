/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * systemd's readiness protocol (sd_notify(3)) for roxed under Type=notify,
 * without libsystemd: one datagram of "KEY=VALUE" lines to the Unix socket
 * $NOTIFY_SOCKET names (a path, or "@" for an abstract name).
 */
#ifndef ROXED_NOTIFY_H
#define ROXED_NOTIFY_H

#include <sys/socket.h>
#include <sys/un.h>

/* The address $NOTIFY_SOCKET's value env names: 0 with *sa and *len set,
 * -EINVAL for a name that is empty, too long or not a Unix socket's
 * (systemd's vsock: addresses are not for a service on this host). */
int roxed_notify_addr(const char *env, struct sockaddr_un *sa, socklen_t *len);
/* Send msg ("READY=1\nSTATUS=..."): 1 sent, 0 when there is no
 * $NOTIFY_SOCKET (not started by systemd), or -errno. */
int roxed_notify(const char *msg);

#endif /* ROXED_NOTIFY_H */
