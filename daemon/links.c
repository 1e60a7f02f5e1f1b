// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxed --links: the roxed behind `rdma link add NAME type roxe netdev
 * IFACE`. It listens on /dev/roxe for the module's link requests
 * (ROXE_IOC_LINK_LISTEN) and starts one roxed per request: this program
 * again, with the options it was given and `--netdev IFACE --link ID
 * --foreground`, which attaches for the request; roxe.ko names and
 * registers the device and `rdma link add` returns. A roxed that could
 * not start, or exits before its device came up, fails the request
 * (ROXE_IOC_LINK_DONE) instead of leaving `rdma link add` to its timeout.
 * On SIGTERM or SIGINT the roxeds it started get SIGTERM: their devices
 * go, as `rdma link delete` would take them.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "links.h"
#include "notify.h"

/* How long the roxeds started get to go after SIGTERM before SIGKILL. */
#define LINKS_STOP_MS	10000

struct link_child {
	pid_t	pid;		/* 0: a free slot */
	int	status;		/* read end of its ROXED_LINK_STATUS_FD pipe */
	__u32	id;
	char	ibdev[ROXE_KABI_NAME_MAX];
};

struct links {
	int			fd;
	const char		*self;		/* this program, for the children */
	char *const		*args;		/* the options the children get */
	int			nargs;
	roxe_kserve_log_fn		log;
	struct link_child	child[ROXE_MAX_LINKS];
};

/* Start `roxed ARGS --netdev IFACE --link ID --foreground` for request r. */
static int start(struct links *l, const struct roxe_kabi_link_req *r, const char *ifname)
{
	struct link_child *c = NULL;
	char id[16], fdenv[16];
	char *argv[ROXED_LINKS_MAX_ARGS + 8];
	int n = 0, p[2];
	pid_t pid;

	for (unsigned i = 0; i < ROXE_MAX_LINKS && !c; i++)
		if (!l->child[i].pid)
			c = &l->child[i];
	if (!c)
		return -ENFILE;
	snprintf(id, sizeof(id), "%u", r->id);
	argv[n++] = "roxed";
	for (int i = 0; i < l->nargs; i++)
		argv[n++] = l->args[i];
	argv[n++] = "--netdev";
	argv[n++] = (char *)ifname;
	argv[n++] = "--link";
	argv[n++] = id;
	argv[n++] = "--foreground";
	argv[n] = NULL;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		sigset_t none;

		/* the parent blocks these for its signalfd */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* systemd hears from roxed --links, the unit's main process */
		unsetenv("NOTIFY_SOCKET");
		/* the one descriptor the roxed inherits: why it failed */
		snprintf(fdenv, sizeof(fdenv), "%d", p[1]);
		if (fcntl(p[1], F_SETFD, 0) < 0 || fcntl(p[1], F_SETFL, 0) < 0 ||
		    setenv(ROXED_LINK_STATUS_FD, fdenv, 1) < 0)
			_exit(127);
		execv(l->self, argv);
		_exit(127);
	}
	close(p[1]);
	c->status = p[0];
	c->pid = pid;
	c->id = r->id;
	memcpy(c->ibdev, r->ibdev, sizeof(c->ibdev));
	c->ibdev[sizeof(c->ibdev) - 1] = '\0';
	l->log(LOG_INFO, "%s: starting roxed on %s (pid %d)", c->ibdev, ifname, (int)pid);
	return 0;
}

/* Read the requests waiting; each starts a roxed or fails at once. */
static void take_requests(struct links *l)
{
	struct roxe_kabi_link_req r;
	char ifname[IF_NAMESIZE];

	while (read(l->fd, &r, sizeof(r)) == sizeof(r)) {
		struct roxe_kabi_link_done d = { .id = r.id };

		r.ibdev[sizeof(r.ibdev) - 1] = '\0';
		if (!if_indextoname(r.ifindex, ifname))
			d.error = -ENODEV;
		else
			d.error = start(l, &r, ifname);
		if (d.error) {
			l->log(LOG_ERR, "%s: cannot start a roxed: %s", r.ibdev, strerror(-d.error));
			if (ioctl(l->fd, ROXE_IOC_LINK_DONE, &d) < 0 && errno != ENOENT)
				l->log(LOG_WARNING, "link done: %s", strerror(errno));
		}
	}
}

/* Why c's roxed could not serve, as it said on its status pipe (closed
 * here): a negative errno, or -EIO when it said nothing (a crash, a
 * signal). Its sentence goes to our log, beside `rdma link add`'s errno. */
static int child_error(struct links *l, struct link_child *c)
{
	char buf[2048], *line, *save = NULL;
	ssize_t n = read(c->status, buf, sizeof(buf) - 1);
	int err = -EIO;

	close(c->status);
	c->status = -1;
	if (n <= 0)
		return err;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end;
		long e;

		if (line[0] != 'E')
			continue;	/* start-up notes, the ready line */
		e = strtol(line + 1, &end, 10);
		if (end == line + 1 || *end != ' ' || e <= 0 || e >= 4096)
			continue;
		l->log(LOG_ERR, "%s: %s", c->ibdev, end + 1);
		err = (int)-e;
	}
	return err;
}

/* Reap the roxeds that exited; one whose request still waits fails it. */
static void reap(struct links *l)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (unsigned i = 0; i < ROXE_MAX_LINKS; i++) {
			struct link_child *c = &l->child[i];
			struct roxe_kabi_link_done d = { .id = c->id };

			if (c->pid != pid)
				continue;
			c->pid = 0;
			d.error = child_error(l, c);
			if (WIFEXITED(status))
				l->log(WEXITSTATUS(status) ? LOG_WARNING : LOG_INFO,
				       "%s: roxed (pid %d) exited with %d", c->ibdev, (int)pid,
				       WEXITSTATUS(status));
			else
				l->log(LOG_WARNING, "%s: roxed (pid %d) killed by signal %d",
				       c->ibdev, (int)pid, WTERMSIG(status));
			/* ENOENT: the request had finished (the usual case) */
			if (ioctl(l->fd, ROXE_IOC_LINK_DONE, &d) < 0 && errno != ENOENT)
				l->log(LOG_WARNING, "link done: %s", strerror(errno));
		}
	}
}

static unsigned live(const struct links *l)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ROXE_MAX_LINKS; i++)
		n += l->child[i].pid != 0;
	return n;
}

/* SIGTERM to every roxed started; SIGKILL to those left after
 * LINKS_STOP_MS. */
static void stop_all(struct links *l)
{
	struct timespec t0, t;

	for (unsigned i = 0; i < ROXE_MAX_LINKS; i++)
		if (l->child[i].pid)
			kill(l->child[i].pid, SIGTERM);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		reap(l);
		if (!live(l))
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >
		    LINKS_STOP_MS)
			break;
		usleep(20000);
	}
	for (unsigned i = 0; i < ROXE_MAX_LINKS; i++)
		if (l->child[i].pid) {
			l->log(LOG_WARNING, "%s: roxed (pid %d) still there: SIGKILL",
			       l->child[i].ibdev, (int)l->child[i].pid);
			kill(l->child[i].pid, SIGKILL);
			waitpid(l->child[i].pid, NULL, 0);
			l->child[i].pid = 0;
			close(l->child[i].status);
		}
}

int roxed_links_run(const char *self, char *const *args, int nargs, roxe_kserve_log_fn log)
{
	static struct links l;		/* ROXE_MAX_LINKS slots: not on the stack */
	const char *path = "/dev/" ROXE_KABI_DEVNAME;
	sigset_t sigs;
	int sfd, rc = 0;

	if (nargs > ROXED_LINKS_MAX_ARGS) {
		log(LOG_ERR, "--links: at most %d options for the roxeds it starts",
		    ROXED_LINKS_MAX_ARGS);
		return 2;
	}
	l = (struct links){ .self = self, .args = args, .nargs = nargs, .log = log };
	l.fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (l.fd < 0) {
		log(LOG_ERR, "%s: %s%s", path, strerror(errno),
		    errno == ENOENT ? " (is roxe.ko loaded? modprobe roxe)" : "");
		return 1;
	}
	if (ioctl(l.fd, ROXE_IOC_LINK_LISTEN) < 0) {
		int e = errno;

		log(LOG_ERR, "listen for links: %s%s", strerror(e),
		    e == EBUSY ? " (another roxed --links runs)" :
		    e == ENOTTY ? " (roxe.ko is older than roxed)" : "");
		close(l.fd);
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		log(LOG_ERR, "signalfd: %s", strerror(errno));
		close(l.fd);
		return 1;
	}
	log(LOG_INFO, "listening for `rdma link add NAME type roxe netdev IFACE`");
	roxed_notify("READY=1\nSTATUS=listening for rdma link add NAME type roxe");
	for (;;) {
		struct pollfd p[2] = { { .fd = l.fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			log(LOG_ERR, "poll: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (p[0].revents & POLLIN)
			take_requests(&l);
		if (p[1].revents & POLLIN) {
			bool quit = false;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				quit |= si.ssi_signo != SIGCHLD;
			reap(&l);
			if (quit) {
				log(LOG_INFO, "shutting down: stopping %u roxed%s", live(&l),
				    live(&l) == 1 ? "" : "s");
				roxed_notify("STOPPING=1");
				break;
			}
		}
	}
	stop_all(&l);
	close(sfd);
	close(l.fd);
	return rc;
}
