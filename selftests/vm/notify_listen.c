// SPDX-License-Identifier: GPL-2.0-only
/*
 * systemd's side of sd_notify(3), for the VM tests (kmod_install.sh): bind
 * a Unix datagram socket at PATH, as $NOTIFY_SOCKET names it for a
 * Type=notify service, and print each datagram as one line with its
 * sender's pid (the kernel's credentials, which systemd checks against
 * the service's main process): "pid N: READY=1 | STATUS=...". Runs until
 * killed.
 */
#define _GNU_SOURCE	/* struct ucred, SCM_CREDENTIALS */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, one = 1;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify_listen PATH\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one))) {
		perror("notify_listen");
		return 1;
	}
	for (;;) {
		char buf[4096], cbuf[CMSG_SPACE(sizeof(struct ucred))];
		struct iovec iov = { buf, sizeof(buf) - 1 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *c;
		ssize_t n = recvmsg(fd, &m, 0);
		int pid = -1;

		if (n < 0)
			continue;
		buf[n] = '\0';
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
				pid = ((struct ucred *)CMSG_DATA(c))->pid;
		printf("pid %d: ", pid);
		for (char *p = buf; *p; p++)
			fputs(*p == '\n' ? " | " : (char[]){ *p, 0 }, stdout);
		putchar('\n');
		fflush(stdout);
	}
}
