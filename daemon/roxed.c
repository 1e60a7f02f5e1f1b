// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxed: the roxe engine as a daemon serving the kernel module. It attaches
 * to an interface through /dev/roxe (roxe.ko then registers the ib_device
 * roxe%d on it) and serves until SIGTERM or SIGINT. The device lives as long
 * as roxed's /dev/roxe file: when roxed exits, for whatever reason, the
 * module takes the port down and unregisters the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include "roxe/ctl.h"
#include "roxe/env.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "roxe/verbs.h"
#include "roxe/version.h"
#include "verbs/served.h"
#include "kserve.h"
#include "links.h"

static const char usage[] =
"NAME\n"
"    roxed - serve roxe's kernel module (roxe.ko) from user space\n"
"\n"
"SYNOPSIS\n"
"    roxed -d IFACE [-e N] [--rt-priority P] [--backend afxdp|udp] [--no-ecn]\n"
"          [--cnp-interval US] [--cc SETTINGS] [-v] [--foreground]\n"
"    roxed --links [OPTIONS]\n"
"    roxed --help | --version\n"
"\n"
"DESCRIPTION\n"
"    Attaches to IFACE through /dev/roxe: roxe.ko registers an RDMA device\n"
"    (roxe0, roxe1, ...) on it, visible to `ibv_devinfo` and `rdma link`,\n"
"    with a RoCE v2 GID per address of IFACE and the port ACTIVE while the\n"
"    link is up. roxed serves it until SIGTERM or SIGINT, then detaches:\n"
"    the port goes DOWN and the device is unregistered. The same happens if\n"
"    roxed dies, so the kernel never waits for it.\n"
"\n"
"    The transport runs in roxed's engines (one thread per engine), over\n"
"    XDP and AF_XDP on IFACE by default: applications' queues and pinned\n"
"    memory are mapped into roxed, doorbells and completion events pass\n"
"    through shared rings, so no data goes through the kernel module.\n"
"\n"
"    With --links roxed serves `rdma link add NAME type roxe netdev IFACE`:\n"
"    it waits for roxe.ko's link requests and starts, for each, a roxed\n"
"    with its own OPTIONS and -d IFACE that serves the device NAME;\n"
"    `rdma link delete NAME` takes the device and that roxed down. It stays\n"
"    in the foreground, logging to stderr (the roxe service runs it).\n"
"\n"
"    Without --foreground roxed detaches from the terminal once the device\n"
"    is registered and logs to syslog (daemon facility); in the foreground\n"
"    it logs to stderr. `roxectl devices` shows what it serves, through\n"
"    the status socket /run/roxe/IFACE.sock.\n"
"\n"
"OPTIONS\n"
"    -d, --device IFACE   the network interface to serve\n"
"    -e, --engines N      engine threads (default: one per online core,\n"
"                         at most 16)\n"
"    -r, --rt-priority P  run the engine threads at SCHED_FIFO priority P\n"
"                         (1..99; default: the normal policy). A frame or a\n"
"                         doorbell then wakes its engine at once, as softirq\n"
"                         work preempts a task: for hosts whose applications\n"
"                         spin on every core (perftest, MPI), where an\n"
"                         engine at the normal policy may wait for the\n"
"                         scheduler's next slice. An engine spins at most\n"
"                         50 us after its last work before it sleeps.\n"
"    -b, --backend B      afxdp (XDP + AF_XDP, the default) or udp (a UDP\n"
"                         socket on port 4791: slower, for interfaces\n"
"                         without XDP)\n"
"    --no-ecn             send frames Not-ECT (default: ECT(0), ECN-capable)\n"
"    --cnp-interval US    at most one CNP per QP per US microseconds, 1 to\n"
"                         1000000 (default 50)\n"
"    -c, --cc SETTINGS    congestion control (DCQCN: the reaction to the\n"
"                         peer's CNPs, and the pacer): on (the default,\n"
"                         as ConnectX ships it), off, or name=value,...\n"
"                         over the defaults, e.g. ai_rate=10,threshold=5\n"
"                         (names, units and ranges: roxed(8))\n"
"    -L, --links          start a roxed per `rdma link add ... type roxe`\n"
"    --link ID            serve link request ID (what --links passes on)\n"
"    -f, --foreground     stay in the foreground, log to stderr\n"
"    -v, --verbose        log more (repeat for more still)\n"
"    -h, --help           this text\n"
"    -V, --version        print roxed's version and exit\n"
"\n"
"EXIT STATUS\n"
"    0 after a clean shutdown; 1 if the module is not loaded, IFACE does\n"
"    not exist or is already served, or the device went away under us.\n"
"\n"
"EXAMPLE\n"
"    insmod roxe.ko && roxed -d eth0 && ibv_devinfo -d roxe0\n";

/* How long the parent of a daemonizing roxed waits for the device. */
#define ROXED_READY_MS	30000

static bool use_syslog;
static int verbose;

__attribute__((format(printf, 2, 3)))
static void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio == LOG_DEBUG && verbose < 1)
		return;
	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fputs("roxed: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static const char *port_state_name(unsigned s)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* link_id: the request of `rdma link add` this roxed serves; 0: none. */
static int attach(const char *ifname, unsigned link_id, struct roxe_kabi_attach *a)
{
	const char *path = "/dev/" ROXE_KABI_DEVNAME;
	int fd;

	memset(a, 0, sizeof(*a));
	a->abi_version = ROXE_KABI_VERSION;
	/* registered once we serve: ib_mad's QP1 is created inside it */
	a->flags = ROXE_KABI_ATTACH_ON_SERVE;
	if (link_id) {
		a->flags |= ROXE_KABI_ATTACH_LINK;
		a->link_id = link_id;
	}
	a->ifindex = if_nametoindex(ifname);
	if (!a->ifindex) {
		logmsg(LOG_ERR, "%s: no such interface", ifname);
		return -1;
	}
	/* non-blocking: the serve loop reads commands until EAGAIN */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		logmsg(LOG_ERR, "%s: %s%s", path, strerror(errno),
		       errno == ENOENT ? " (is roxe.ko loaded?)" : "");
		return -1;
	}
	if (ioctl(fd, ROXE_IOC_ATTACH, a) < 0) {
		int e = errno;

		logmsg(LOG_ERR, "attach %s: %s%s", ifname, strerror(e),
		       e == EBUSY ? " (already served by roxe or rxe)" :
		       e == EPROTO ? " (roxed and roxe.ko disagree on the ABI version)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

/* Detach from the terminal, but return to the caller only once the device
 * is registered (the child writes to *ready then, see serve_loop), so that
 * a caller that starts roxed and then uses the device finds it there. */
static int daemonize(int *ready)
{
	struct pollfd p;
	int pfd[2], null;
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(pfd[1]);
		p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
		if (poll(&p, 1, ROXED_READY_MS) == 1 && read(pfd[0], &c, 1) == 1)
			_exit(0);
		fprintf(stderr, "roxed: the device did not come up in %d s (see syslog)\n",
			ROXED_READY_MS / 1000);
		_exit(1);
	}
	close(pfd[0]);
	*ready = pfd[1];
	if (setsid() < 0)
		return -1;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	if (chdir("/") < 0)
		return -1;
	openlog("roxed", LOG_PID, LOG_DAEMON);
	use_syslog = true;
	return 0;
}

/* What `roxectl devices` shows (include/uapi/roxe/ctl.h). */
static void status_text(char *buf, size_t len, const struct roxe_device_attr *da,
			const struct roxe_kabi_info *info, const struct roxe_kserve *ks,
			time_t started)
{
	struct roxe_kserve_stats st;

	roxe_kserve_stats(ks, &st);
	snprintf(buf, len,
		 "pid %d\ninterface %s\nifindex %u\ndevice %s\nport %s\nmtu %u\n"
		 "backend %s\nengines %u\nuptime_s %lld\nuser_contexts %llu\n"
		 "qps %u\ncqs %u\nsrqs %u\nmrs %u\ncommands %llu\ncommand_errors %llu\n"
		 "async_events %llu\nasync_lost %llu\ncq_events %llu\n",
		 (int)getpid(), da->ifname, info->ifindex, info->ibdev,
		 port_state_name(info->port_state), info->port_mtu,
		 da->backend == ROXE_BACKEND_UDP ? "udp" : "afxdp", da->engines,
		 (long long)(time(NULL) - started), (unsigned long long)info->ucontexts,
		 st.qps, st.cqs, st.srqs, st.mrs, (unsigned long long)st.commands,
		 (unsigned long long)st.command_errors, (unsigned long long)st.async_events,
		 (unsigned long long)st.async_lost, (unsigned long long)st.cq_events);
}

/* Errors the engines met that no call returned (libroxe prints nothing):
 * logged as their count grows. */
static void log_dev_errors(struct roxe_device *dev, const char *ifname, uint64_t *seen)
{
	uint64_t n;
	int err = roxe_device_last_error(dev, &n);

	if (err && n != *seen)
		logmsg(LOG_ERR, "%s: %llu engine wake-ups failed, the last: %s", ifname,
		       (unsigned long long)n, strerror(-err));
	*seen = n;
}

/* ready: written to (then closed) once the device is registered; -1: none. */
static int serve_loop(int fd, int sfd, int cfd, int ready, const struct roxe_device_attr *da,
		      struct roxe_kserve *ks,
		      struct roxe_kabi_info *info, struct roxe_kabi_info *last,
		      struct roxe_device *dev)
{
	const char *ifname = da->ifname;
	time_t started = time(NULL), pushed = 0;
	uint64_t dev_errors = 0;

	for (;;) {
		struct pollfd p[4] = { { .fd = sfd, .events = POLLIN },
				       { .fd = fd, .events = POLLIN },
				       { .fd = roxe_kserve_event_fd(ks), .events = POLLIN },
				       { .fd = cfd, .events = POLLIN } };
		/* look at the device often while its registration runs */
		bool up = last->flags & ROXE_KABI_INFO_REGISTERED;
		int n = poll(p, 4, up ? 1000 : 50), err;

		if (n < 0 && errno != EINTR) {
			logmsg(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				logmsg(LOG_INFO, "signal %u: shutting down", si.ssi_signo);
				return 0;
			}
		}
		if (n > 0 && ((p[1].revents | p[2].revents) & POLLIN)) {
			err = roxe_kserve_run(ks);
			if (err == -ENODEV && ioctl(fd, ROXE_IOC_INFO, info) == 0 &&
			    (info->flags & ROXE_KABI_INFO_UNREGISTERED)) {
				logmsg(LOG_INFO, "%s: deleted (rdma link delete), detaching",
				       info->ibdev);
				return 0;
			}
			if (err) {
				logmsg(LOG_ERR, "command channel: %s", strerror(-err));
				return 1;
			}
		}
		/* port counters for `rdma statistic`: at most a second old */
		if (time(NULL) != pushed) {
			roxe_kserve_push_stats(ks);
			log_dev_errors(dev, ifname, &dev_errors);
			pushed = time(NULL);
		}
		if (ioctl(fd, ROXE_IOC_INFO, info) < 0) {
			logmsg(LOG_ERR, "device info: %s", strerror(errno));
			return 1;
		}
		if (!info->ifindex) {
			logmsg(LOG_ERR, "%s: interface gone, detaching", ifname);
			return 1;
		}
		if ((info->flags & ROXE_KABI_INFO_REGISTERED) && !up) {
			logmsg(LOG_INFO, "%s: registered", info->ibdev);
			if (ready >= 0) {
				if (write(ready, "r", 1) != 1)
					logmsg(LOG_WARNING, "readiness: %s", strerror(errno));
				close(ready);
				ready = -1;
			}
		}
		if (info->port_state != last->port_state || info->port_mtu != last->port_mtu)
			logmsg(LOG_INFO, "%s: port %s, mtu %u", info->ibdev,
			       port_state_name(info->port_state), info->port_mtu);
		if (info->ucontexts != last->ucontexts) {
			struct roxe_kserve_stats st;

			roxe_kserve_stats(ks, &st);
			logmsg(LOG_DEBUG, "%s: %llu user contexts (%u QPs, %u CQs, %u SRQs, %u MRs)",
			       info->ibdev, (unsigned long long)info->ucontexts, st.qps, st.cqs,
			       st.srqs, st.mrs);
		}
		/* The interface's addresses need nothing here: the device follows
		 * rtnetlink's address events itself (user/port/addrwatch.c). */
		if (n > 0 && (p[3].revents & POLLIN)) {
			char text[ROXE_CTL_MAX];

			status_text(text, sizeof(text), da, info, ks, started);
			roxe_ctl_reply(cfd, text);
		}
		*last = *info;
	}
}

/* The serve loop: answer the module's commands (objects created,
 * modified, destroyed), watch the device (netdev gone, port state) and wait
 * for a signal. */
static int serve(int fd, int sfd, int ready, const struct roxe_device_attr *da)
{
	struct roxe_kabi_info info, last = { 0 };
	struct roxe_device *dev;
	struct roxe_kserve *ks;
	char path[108];
	int rc, err, cfd;

	err = roxe_device_open(da, &dev);
	if (err) {
		logmsg(LOG_ERR, "%s: engine: %s", da->ifname, strerror(-err));
		return 1;
	}
	err = roxe_kserve_new(fd, dev, logmsg, verbose, &ks);
	if (err) {
		logmsg(LOG_ERR, "%s: serve: %s%s", da->ifname, strerror(-err),
		       err == -ENOTTY ? " (roxe.ko is older than roxed)" : "");
		roxe_device_close(dev);
		return 1;
	}
	logmsg(LOG_INFO, "%s: transport over %s, %u engine%s", da->ifname,
	       da->backend == ROXE_BACKEND_UDP ? "UDP" : "XDP and AF_XDP", da->engines,
	       da->engines == 1 ? "" : "s");
	/* roxectl devices: a status socket (optional: serving goes on without) */
	cfd = roxe_ctl_listen(da->ifname, path, sizeof(path));
	if (cfd < 0)
		logmsg(LOG_WARNING, "%s: status socket: %s", da->ifname, strerror(-cfd));
	rc = serve_loop(fd, sfd, cfd, ready, da, ks, &info, &last, dev);
	if (cfd >= 0) {
		close(cfd);
		unlink(path);
	}
	roxe_kserve_free(ks);
	roxe_device_close(dev);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "engines", required_argument, NULL, 'e' },
		{ "rt-priority", required_argument, NULL, 'r' },
		{ "backend", required_argument, NULL, 'b' },
		{ "no-ecn", no_argument, NULL, 'N' },
		{ "cnp-interval", required_argument, NULL, 'C' },
		{ "cc", required_argument, NULL, 'c' },
		{ "links", no_argument, NULL, 'L' },
		{ "link", required_argument, NULL, 'l' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_AFXDP };
	struct roxe_kabi_attach a;
	const char *ifname = NULL;
	char *end;
	bool foreground = false, links = false;
	unsigned link_id = 0;
	sigset_t sigs;
	int o, fd, sfd, rc, ready = -1, nargs = 0;
	/* what --links passes on: argv as given (getopt permutes it) */
	char **args = calloc((size_t)argc + 1, sizeof(*args));

	if (!args)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--links") && strcmp(argv[i], "-L"))
			args[nargs++] = argv[i];
	while ((o = getopt_long(argc, argv, "d:e:r:b:c:LfvhV", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
			ifname = optarg;
			break;
		case 'e':
			errno = 0;
			da.engines = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || da.engines < 1 || da.engines > ROXE_KABI_MAX_ENGINES) {
				fprintf(stderr, "roxed: --engines: 1..%u, not '%s'\n",
					ROXE_KABI_MAX_ENGINES, optarg);
				return 2;
			}
			break;
		case 'r':
			errno = 0;
			da.rt_priority = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || da.rt_priority < 1 || da.rt_priority > 99) {
				fprintf(stderr, "roxed: --rt-priority: 1..99, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'b':
			if (!strcmp(optarg, "afxdp")) {
				da.backend = ROXE_BACKEND_AFXDP;
			} else if (!strcmp(optarg, "udp")) {
				da.backend = ROXE_BACKEND_UDP;
			} else {
				fprintf(stderr, "roxed: --backend: afxdp or udp, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'N':
			da.no_ecn = true;
			break;
		case 'C':
			errno = 0;
			da.cnp_interval_us = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || da.cnp_interval_us < 1 ||
			    da.cnp_interval_us > ROXE_CNP_INTERVAL_MAX_US) {
				fprintf(stderr, "roxed: --cnp-interval: 1..%u microseconds, not '%s'\n",
					ROXE_CNP_INTERVAL_MAX_US, optarg);
				return 2;
			}
			break;
		case 'c': {
			char why[80];

			/* checked here for the message; the device takes it */
			if (roxe_served_cc_check(optarg, why, sizeof(why))) {
				fprintf(stderr, "roxed: --cc: not a setting: '%s'\n", why);
				return 2;
			}
			da.cc = optarg;
			break;
		}
		case 'L':
			links = true;
			break;
		case 'l':
			errno = 0;
			link_id = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || !link_id || *optarg == '-') {
				fprintf(stderr, "roxed: --link: a request id, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'f':
			foreground = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			tool_version_exit("roxed");
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (links) {
		if (ifname || link_id || optind != argc) {
			fputs("roxed: --links starts the roxeds that serve devices: no -d, --link or operands\n",
			      stderr);
			return 2;
		}
		return roxed_links_run("/proc/self/exe", args, nargs, logmsg);
	}
	free(args);
	if (!ifname || optind != argc) {
		fputs(usage, stderr);
		return 2;
	}
	roxe_env_device_attr(&da, "roxed");	/* roxe(7)'s variables */

	/* signals arrive through a descriptor: no handler races */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	fd = attach(ifname, link_id, &a);
	if (fd < 0)
		return 1;
	logmsg(LOG_INFO, "%s: serving %s (ifindex %u), active mtu %u", a.ibdev, ifname,
	       a.ifindex, a.port_mtu);
	if (!foreground && daemonize(&ready) < 0) {
		logmsg(LOG_ERR, "daemonize: %s", strerror(errno));
		close(fd);
		return 1;
	}
	/* after the fork: signalfd reads the signals of its own process */
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		logmsg(LOG_ERR, "signalfd: %s", strerror(errno));
		close(fd);
		return 1;
	}
	/* after the fork too: the engines are threads */
	da.ifname = ifname;
	if (!da.engines) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		da.engines = n < 1 ? 1 : n > ROXE_KABI_MAX_ENGINES ? ROXE_KABI_MAX_ENGINES :
			     (unsigned)n;
	}
	rc = serve(fd, sfd, ready, &da);
	/* closing the file is the detach: port DOWN, device unregistered */
	close(fd);
	close(sfd);
	logmsg(LOG_INFO, "%s: detached from %s", a.ibdev, ifname);
	return rc;
}
