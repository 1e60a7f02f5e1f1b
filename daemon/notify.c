// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sd_notify(3) in a few lines (notify.h): what roxed@.service's
 * Type=notify reads. The manager accepts the datagram from the main process
 * (it checks the sender's credentials, which the kernel attaches), so
 * roxed sends from the process systemd started.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "notify.h"

int roxed_notify_addr(const char *env, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = env ? strlen(env) : 0;

	if (n < 2 || (env[0] != '/' && env[0] != '@') || n > sizeof(sa->sun_path))
		return -EINVAL;
	/* a path needs its NUL inside sun_path; an abstract name does not */
	if (env[0] == '/' && n == sizeof(sa->sun_path))
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, env, n);
	if (env[0] == '@')
		sa->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (env[0] == '/'));
	return 0;
}

int roxed_notify(const char *msg)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, err;

	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	err = roxed_notify_addr(getenv("NOTIFY_SOCKET"), &sa, &len);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0 ? -errno : 1;
	close(fd);
	return err;
}
