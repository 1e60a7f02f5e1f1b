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
#include "roxe/cli.h"
#include "roxe/ctl.h"
#include "roxe/env.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "roxe/verbs.h"
#include "roxe/version.h"
#include "verbs/served.h"
#include "kserve.h"

static const char usage[] =
"NAME\n"
"    roxed - serve roxe's kernel module (roxe.ko) from user space\n"
"\n"
"SYNOPSIS\n"
"    roxed --netdev IFACE [-E N] [-r P] [-B afxdp|udp] [--no-ecn]\n"
"          [--cnp-interval US] [--cc SETTINGS] [-v] [--foreground]\n"
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
"    Without --foreground roxed detaches from the terminal once the device\n"
"    is registered and logs to syslog (daemon facility); in the foreground\n"
"    it logs to stderr. `roxectl devices` (--json) shows what it serves,\n"
"    through the status socket /run/roxe/IFACE.sock.\n"
"\n"
"OPTIONS\n"
"    --netdev IFACE       the network interface to serve (required)\n"
"    -E, --engines N      engine threads (default: one per online core,\n"
"                         at most 16)\n"
"    -r, --rt-priority P  run the engine threads at SCHED_FIFO priority P\n"
"                         (1..99; default: the normal policy). A frame or a\n"
"                         doorbell then wakes its engine at once, as softirq\n"
"                         work preempts a task: for hosts whose applications\n"
"                         spin on every core (perftest, MPI), where an\n"
"                         engine at the normal policy may wait for the\n"
"                         scheduler's next slice. An engine spins at most\n"
"                         50 us after its last work before it sleeps.\n"
"    -B, --backend B      afxdp (XDP + AF_XDP, the default) or udp (a UDP\n"
"                         socket on port 4791: slower, for interfaces\n"
"                         without XDP)\n"
"    --no-ecn             send frames Not-ECT (default: ECT(0), ECN-capable)\n"
"    --cnp-interval US    at most one CNP per QP per US microseconds, 1 to\n"
"                         1000000 (default 50)\n"
"    --cc SETTINGS        congestion control (DCQCN: the reaction to the\n"
"                         peer's CNPs, and the pacer): on (the default,\n"
"                         as ConnectX ships it), off, or name=value,...\n"
"                         over the defaults, e.g. ai_rate=10,threshold=5\n"
"                         (names, units and ranges: roxed(8))\n"
"    -f, --foreground     stay in the foreground, log to stderr\n"
"    -v, --verbose        log more (repeat for more still)\n"
"    -h, --help           this text\n"
"    -V, --version        print roxed's version and exit\n"
"\n"
"\n"
"    Still accepted, deprecated: the old spellings -d and --device for\n"
"    --netdev, -e for -E, -b for -B and -c for --cc (roxe(7), COMMAND LINE).\n"
"\n"
"EXIT STATUS\n"
"    0 after a clean shutdown; 1 if the module is not loaded, IFACE does\n"
"    not exist or is already served, or the device went away under us;\n"
"    2 on a usage error.\n"
"\n"
"EXAMPLE\n"
"    insmod roxe.ko && roxed --netdev eth0 && ibv_devinfo -d roxe0\n";

static const char short_usage[] =
"Usage: roxed --netdev IFACE [-E N] [-r P] [-B afxdp|udp] [--no-ecn]\n"
"             [--cnp-interval US] [--cc SETTINGS] [-v] [--foreground]\n";

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

static int attach(const char *ifname, struct roxe_kabi_attach *a)
{
	const char *path = "/dev/" ROXE_KABI_DEVNAME;
	int fd;

	memset(a, 0, sizeof(*a));
	a->abi_version = ROXE_KABI_VERSION;
	/* registered once we serve: ib_mad's QP1 is created inside it */
	a->flags = ROXE_KABI_ATTACH_ON_SERVE;
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

/* The spellings before roxe(7)'s convention, still taken from scripts and
 * /etc/default/roxed: say what replaces them. */
static void deprecated(const char *old, const char *now)
{
	fprintf(stderr, "roxed: %s is deprecated: %s\n", old, now);
}

/* The command line into *da and *ifname: 0, or the exit status. */
static int parse(int argc, char **argv, struct roxe_device_attr *da, const char **ifname,
		 bool *foreground)
{
	enum { O_NETDEV = 256, O_DEVICE, O_NO_ECN, O_CNP, O_CC };
	static const struct option opts[] = {
		{ "netdev", required_argument, NULL, O_NETDEV },
		{ "device", required_argument, NULL, O_DEVICE },	/* deprecated */
		{ "engines", required_argument, NULL, 'E' },
		{ "rt-priority", required_argument, NULL, 'r' },
		{ "backend", required_argument, NULL, 'B' },
		{ "no-ecn", no_argument, NULL, O_NO_ECN },
		{ "cnp-interval", required_argument, NULL, O_CNP },
		{ "cc", required_argument, NULL, O_CC },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int o, err = 0;

	while (!err && (o = getopt_long(argc, argv, "E:r:B:fvhVd:e:b:c:", opts, NULL)) != -1) {
		switch (o) {
		case 'd':
		case O_DEVICE:
			deprecated("-d/--device", "--netdev IFACE");
			/* fall through */
		case O_NETDEV:
			*ifname = optarg;
			break;
		case 'e':
			deprecated("-e", "-E/--engines");
			/* fall through */
		case 'E':
			err = tool_uint("-E/--engines", optarg, 1, ROXE_KABI_MAX_ENGINES, &da->engines);
			break;
		case 'r':
			err = tool_uint("-r/--rt-priority", optarg, 1, 99, &da->rt_priority);
			break;
		case 'b':
			deprecated("-b", "-B/--backend");
			/* fall through */
		case 'B':
			err = tool_backend(optarg, &da->backend);
			break;
		case O_NO_ECN:
			da->no_ecn = true;
			break;
		case O_CNP:
			err = tool_uint("--cnp-interval", optarg, 1, ROXE_CNP_INTERVAL_MAX_US,
					&da->cnp_interval_us);
			break;
		case 'c':
			deprecated("-c", "--cc");
			/* fall through */
		case O_CC: {
			char why[80];

			/* checked here for the message; the device takes it */
			if (roxe_served_cc_check(optarg, why, sizeof(why)))
				return tool_usage_error("--cc: not a setting: '%s'", why);
			da->cc = optarg;
			break;
		}
		case 'f':
			*foreground = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'V':
			tool_version_exit("roxed");
		default:
			return tool_usage_error(NULL);
		}
	}
	if (err)
		return err;
	if (optind != argc)
		return tool_usage_error("unexpected argument '%s'", argv[optind]);
	if (!*ifname)
		return tool_usage_error("--netdev IFACE is required (the network interface)");
	return 0;
}

int main(int argc, char **argv)
{
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_AFXDP };
	struct roxe_kabi_attach a;
	const char *ifname = NULL;
	bool foreground = false;
	sigset_t sigs;
	int fd, sfd, rc, ready = -1;

	tool_cli_init("roxed", short_usage);
	rc = parse(argc, argv, &da, &ifname, &foreground);
	if (rc)
		return rc;
	roxe_env_device_attr(&da, "roxed");	/* roxe(7)'s variables */

	/* signals arrive through a descriptor: no handler races */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	fd = attach(ifname, &a);
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
