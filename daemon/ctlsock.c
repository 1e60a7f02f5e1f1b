// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxed's status socket (include/uapi/roxe/ctl.h): roxed's listening side and
 * roxectl's reading side.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "roxe/ctl.h"

static int ctl_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int roxe_ctl_listen(const char *ifname, char *path, size_t path_len)
{
	struct sockaddr_un sa;
	int fd, err;

	if (mkdir(ROXE_CTL_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(path, path_len, "%s/%s%s", ROXE_CTL_DIR, ifname,
			     ROXE_CTL_SUFFIX) >= path_len)
		return -ENAMETOOLONG;
	err = ctl_addr(path, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* the module lets one roxed serve an interface: an existing socket
	 * is a dead one's */
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 8) < 0) {
		err = -errno;
		close(fd);
		unlink(path);
		return err;
	}
	return fd;
}

void roxe_ctl_reply(int lfd, const char *text)
{
	size_t len = strnlen(text, ROXE_CTL_MAX);
	int c;

	/* a fresh socket's buffer takes the few hundred bytes at once; a
	 * client that left early is its own loss */
	while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		if (write(c, text, len) < 0) {
			/* nothing to do: the client sees a short answer */
		}
		close(c);
	}
}

int roxe_ctl_query(const char *path, char *buf, size_t len)
{
	struct sockaddr_un sa;
	size_t got = 0;
	int fd, err;

	if (len < 1)
		return -EINVAL;
	err = ctl_addr(path, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		/* roxed answers from its serve loop: a second is plenty */
		if (poll(&p, 1, 2000) <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		n = read(fd, buf + got, len - 1 - got);
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		got += (size_t)n;
		if (got == len - 1)
			break;
	}
	close(fd);
	buf[got] = '\0';
	return err ? err : (int)got;
}
