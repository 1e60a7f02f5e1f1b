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
#include <limits.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>
#include "roxe/cli.h"
#include "roxe/ctl.h"
#include "roxe/env.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "roxe/port.h"
#include "roxe/verbs.h"
#include "roxe/version.h"
#include "roxe/xdp.h"
#include "verbs/served.h"
#include "kserve.h"
#include "links.h"
#include "notify.h"

static const char usage[] =
"NAME\n"
"    roxed - serve roxe's kernel module (roxe.ko) from user space\n"
"\n"
"SYNOPSIS\n"
"    roxed --netdev IFACE [-E N] [-r P] [-B afxdp|udp] [--no-ecn]\n"
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
"    with its own OPTIONS and --netdev IFACE that serves the device NAME;\n"
"    `rdma link delete NAME` takes the device and that roxed down. It stays\n"
"    in the foreground, logging to stderr (the roxe service runs it).\n"
"\n"
"    Without --foreground roxed detaches from the terminal once the device\n"
"    is registered and logs to syslog (daemon facility); in the foreground\n"
"    it logs to stderr. `roxectl devices` (--json) shows what it serves,\n"
"    through the status socket /run/roxe/IFACE.sock.\n"
"\n"
"OPTIONS\n"
"    --netdev IFACE       the network interface to serve (required)\n"
"    -E, --engines N      engine threads, 1..16 (default: one per core,\n"
"                         at most one per queue of IFACE: ethtool -l)\n"
"    -r, --rt-priority P  run the engine threads at SCHED_FIFO priority P\n"
"                         (1..99; default: the normal policy). A frame or a\n"
"                         doorbell then wakes its engine at once, as softirq\n"
"                         work preempts a task: for hosts whose applications\n"
"                         spin on every core (perftest, MPI), where an\n"
"                         engine at the normal policy may wait for the\n"
"                         scheduler's next slice. An engine spins at most\n"
"                         50 us after its last work before it sleeps, and\n"
"                         less while its work comes later than that.\n"
"    -B, --backend B      afxdp (XDP + AF_XDP, the default) or udp (a UDP\n"
"                         socket on port 4791: slower, for interfaces\n"
"                         without XDP)\n"
"    --no-ecn             send frames Not-ECT (default: ECT(0), ECN-capable)\n"
"    --xdp-copy           bind the AF_XDP sockets in copy mode (XDP_COPY)\n"
"                         even where the driver offers zero-copy: for\n"
"                         comparing the two (roxectl status shows the mode)\n"
"    --cnp-interval US    at most one CNP per QP per US microseconds, 1 to\n"
"                         1000000 (default 50)\n"
"    --cc SETTINGS        congestion control (DCQCN: the reaction to the\n"
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
"    Each start-up failure is one line that says what to do, on the\n"
"    terminal (a roxed going to the background waits for its device) and\n"
"    to systemd (Type=notify: STATUS= and ERRNO=).\n"
"\n"
"    Still accepted, deprecated: the old spellings -d and --device for\n"
"    --netdev, -e for -E, -b for -B and -c for --cc (roxe(7), COMMAND LINE).\n"
"\n"
"EXIT STATUS\n"
"    0 after a clean shutdown; 1 if the module is not loaded, IFACE does\n"
"    not exist or is already served, or the device went away under us;\n"
"    2 a usage error; 78 the settings do not fit this host (more engines\n"
"    than queues, a capability missing, no XDP): a restart fails alike.\n"
"\n"
"EXAMPLE\n"
"    insmod roxe.ko && roxed --netdev eth0 && ibv_devinfo -d roxe0\n";

static const char short_usage[] =
"Usage: roxed --netdev IFACE [-E N] [-r P] [-B afxdp|udp] [--no-ecn]\n"
"             [--cnp-interval US] [--cc SETTINGS] [-v] [--foreground]\n";

/* How long the parent of a daemonizing roxed waits for the device. */
#define ROXED_READY_MS	30000

/* Exit statuses (roxed(8)): 1 a failure a later start may not meet (the
 * module, the interface, the device going away), 2 a usage error, and
 * BSD's EX_CONFIG: the settings do not fit this host (engines and queues,
 * capabilities, XDP), so a restart fails alike; roxed@.service restarts
 * on neither of the last two. */
#define EXIT_USAGE	2
#define EXIT_CONFIG	78

static bool use_syslog, journal;
static int verbose;
/* The daemon's half of the pipe its parent waits on: its start-up lines
 * go there ("I" said, "E" failed, "R" ready); -1 once ready, or in the
 * foreground. */
static int ready_fd = -1;

__attribute__((format(printf, 2, 0)))
static void vlogmsg(int prio, const char *fmt, va_list ap)
{
	if (prio == LOG_DEBUG && verbose < 1)
		return;
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
		return;
	}
	/* the journal takes "<N>" as the priority, and names us itself */
	if (journal)
		fprintf(stderr, "<%d>", prio);
	else
		fputs("roxed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 2, 3)))
static void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlogmsg(prio, fmt, ap);
	va_end(ap);
}

/* Is stderr systemd's journal ($JOURNAL_STREAM: its device and inode)? */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	       st.st_dev == dev && st.st_ino == ino;
}

/* A line to the waiting parent: tag I (print), E (failed, with errno) or
 * R (ready). */
static void tell_parent(char tag, int err, const char *text)
{
	char line[600];
	int n;

	if (ready_fd < 0)
		return;
	n = tag == 'E' ? snprintf(line, sizeof(line), "E%d %s\n", err, text) :
			 snprintf(line, sizeof(line), "%c%s\n", tag, text);
	if (n > (int)sizeof(line) - 1) {	/* cut: keep the newline */
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (write(ready_fd, line, n) != n)
		logmsg(LOG_WARNING, "readiness: %s", strerror(errno));
}

/* A start-up failure, in one sentence that says what to do: logged, told
 * to a waiting parent and to systemd (STATUS=, ERRNO=). Returns status. */
__attribute__((format(printf, 3, 4)))
static int fail(int status, int err, const char *fmt, ...)
{
	char text[512], msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	logmsg(LOG_ERR, "%s", text);
	tell_parent('E', err, text);
	snprintf(msg, sizeof(msg), "STATUS=%s\nERRNO=%d", text, err);
	roxed_notify(msg);
	return status;
}

/* A usage error: no log yet, the terminal (or the journal) and systemd. */
__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	char text[256], msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "roxed: %s\n", text);
	snprintf(msg, sizeof(msg), "STATUS=%s\nERRNO=%d", text, EINVAL);
	roxed_notify(msg);
	return EXIT_USAGE;
}

static const char *port_state_name(unsigned s)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* CAP_SYS_NICE is for --rt-priority alone (roxed@.service keeps it in the
 * bounding set so that the option works there): without the option roxed
 * gives it up before any thread starts, and runs with what it needs. */
static void drop_sys_nice(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	const unsigned w = CAP_SYS_NICE / 32, bit = 1u << (CAP_SYS_NICE % 32);

	if (syscall(SYS_capget, &h, d) || !((d[w].permitted | d[w].inheritable) & bit))
		return;
	d[w].effective &= ~bit;
	d[w].permitted &= ~bit;
	d[w].inheritable &= ~bit;
	if (syscall(SYS_capset, &h, d))
		logmsg(LOG_DEBUG, "dropping CAP_SYS_NICE: %s", strerror(errno));
}

/* link_id: the request of `rdma link add` this roxed serves; 0: none. */
static int attach(const char *ifname, unsigned link_id, struct roxe_kabi_attach *a)
{
	const char *path = "/dev/" ROXE_KABI_DEVNAME;
	int fd, e;

	memset(a, 0, sizeof(*a));
	a->abi_version = ROXE_KABI_VERSION;
	/* registered once we serve: ib_mad's QP1 is created inside it */
	a->flags = ROXE_KABI_ATTACH_ON_SERVE;
	if (link_id) {
		a->flags |= ROXE_KABI_ATTACH_LINK;
		a->link_id = link_id;
	}
	a->ifindex = if_nametoindex(ifname);
	if (!a->ifindex)
		return -fail(1, ENODEV, "%s: no such interface: name one that `ip link` lists",
			     ifname);
	/* non-blocking: the serve loop reads commands until EAGAIN */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ENXIO || e == ENODEV)
			return -fail(1, e, "%s: %s: load roxe.ko first (modprobe roxe)", path,
				     strerror(e));
		if (e == EACCES || e == EPERM)
			return -fail(EXIT_CONFIG, e, "%s: %s: roxed needs root (CAP_NET_ADMIN)",
				     path, strerror(e));
		return -fail(1, e, "%s: %s", path, strerror(e));
	}
	if (ioctl(fd, ROXE_IOC_ATTACH, a) < 0) {
		e = errno;
		close(fd);
		if (e == EBUSY)
			return -fail(1, e, "%s is already served by roxe or by kernel rxe: stop that "
				     "roxed (roxectl devices lists it) or remove rxe (rdma link delete)",
				     ifname);
		if (e == EPROTO)
			return -fail(EXIT_CONFIG, e, "roxed and roxe.ko disagree on the ABI version: "
				     "load the roxe.ko of this roxed's release");
		if (e == EPERM || e == EACCES)
			return -fail(EXIT_CONFIG, e, "attaching to %s: %s: roxed needs CAP_NET_ADMIN "
				     "in %s's network namespace (run it as root)", ifname, strerror(e),
				     ifname);
		return -fail(1, e, "attaching to %s: %s", ifname, strerror(e));
	}
	return fd;
}

/* The parent of a daemonizing roxed: print what the daemon says until it
 * is ready (0) or fails (its exit status), at most ROXED_READY_MS; relay
 * it to systemd, whose main process we are. */
static int wait_daemon(int fd, pid_t pid, const char *ifname)
{
	struct timespec t0, now;
	char buf[2048], msg[700];
	size_t have = 0;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left;
		ssize_t n;
		char *nl;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ROXED_READY_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
					 (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			fprintf(stderr, "roxed: %s: the device was not registered within %d s; roxed "
				"goes on as pid %d: dmesg may say what roxe.ko waits for, and "
				"`kill %d` stops it\n", ifname, ROXED_READY_MS / 1000, (int)pid, (int)pid);
			roxed_notify("STATUS=the device was not registered in time\nERRNO=110");
			return 1;
		}
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n')) || have == sizeof(buf) - 1) {
			int err = 0, off = 0;

			if (nl)
				*nl = '\0';
			if (buf[0] == 'R') {
				snprintf(msg, sizeof(msg), "MAINPID=%d\nREADY=1", (int)pid);
				roxed_notify(msg);
				return 0;
			}
			if (buf[0] == 'E' && sscanf(buf + 1, "%d %n", &err, &off) == 1 && off) {
				fprintf(stderr, "roxed: %s\n", buf + 1 + off);
				snprintf(msg, sizeof(msg), "STATUS=%s\nERRNO=%d", buf + 1 + off, err);
				roxed_notify(msg);
			} else if (buf[0] == 'I') {
				fprintf(stderr, "roxed: %s\n", buf + 1);
			}
			if (!nl) {
				have = 0;
				break;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
	}
	/* the daemon is gone without being ready: its status is ours */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "roxed: %s: roxed (pid %d) %s before the device was registered: run it "
		"with --foreground -v to see where\n", ifname, (int)pid,
		WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
	roxed_notify("STATUS=roxed died before the device was registered\nERRNO=5");
	return 1;
}

/* A roxed that roxed --links started for a request tells it through
 * ROXED_LINK_STATUS_FD why it could not serve, as a daemonizing roxed
 * tells its parent (tell_parent); the pipe closes once the device is
 * registered (serve_loop). */
static void take_link_status_fd(void)
{
	const char *s = getenv(ROXED_LINK_STATUS_FD);
	char *end;
	long fd;

	if (!s)
		return;
	fd = strtol(s, &end, 10);
	unsetenv(ROXED_LINK_STATUS_FD);	/* not for what we might start */
	if (end == s || *end || fd < 3 || fd > INT_MAX ||
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
		logmsg(LOG_WARNING, "%s=%s: not a descriptor of ours", ROXED_LINK_STATUS_FD, s);
		return;
	}
	ready_fd = (int)fd;
}

/* Detach from the terminal, but return to the caller only once the device
 * is registered (the daemon says so through ready_fd, see serve_loop), so
 * that a caller that starts roxed and then uses the device finds it there,
 * and one whose roxed fails sees why and its exit status. */
static int daemonize(const char *ifname)
{
	int pfd[2], null;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(pfd[1]);
		_exit(wait_daemon(pfd[0], pid, ifname));
	}
	close(pfd[0]);
	ready_fd = pfd[1];
	/* the parent speaks to systemd for us (it is the main process) */
	unsetenv("NOTIFY_SOCKET");
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

/* --- what the open chose, or why it failed -------------------------------------- */
/* The queues as the interface tells them, e.g. "4 combined channels". */
static void queues_text(const struct roxe_if_queues *q, char *buf, size_t len)
{
	switch (q->from) {
	case ROXE_QUEUES_ETHTOOL:
		if (!q->rx_only && !q->tx_only)
			snprintf(buf, len, "%u combined channel%s", q->combined,
				 q->combined == 1 ? "" : "s");
		else if (!q->combined)
			snprintf(buf, len, "%u rx and %u tx channel%s", q->rx_only, q->tx_only,
				 q->rx_only + q->tx_only > 2 ? "s" : "");
		else
			snprintf(buf, len, "%u combined, %u rx and %u tx channels", q->combined,
				 q->rx_only, q->tx_only);
		break;
	case ROXE_QUEUES_SYSFS:
		snprintf(buf, len, "%u rx and %u tx queues in sysfs, no ethtool channels", q->rx,
			 q->tx);
		break;
	default:
		snprintf(buf, len, "no ethtool channels nor sysfs queues: 1 queue assumed");
	}
}

/* How to give ifname n queues, e.g. "ethtool -L eth1 combined 4"; false
 * (buf says why) when its driver takes fewer. */
static bool more_queues(const char *ifname, const struct roxe_if_queues *q, unsigned n,
			char *buf, size_t len)
{
	bool comb = q->combined || q->max_combined;

	if (q->from != ROXE_QUEUES_ETHTOOL) {
		snprintf(buf, len, "give %s %u queues", ifname, n);
	} else if (comb && q->max_combined && q->max_combined < n && !q->max_rx) {
		snprintf(buf, len, "%s takes at most %u combined channels", ifname, q->max_combined);
		return false;
	} else if (!comb && q->max_rx && q->max_tx && (q->max_rx < n || q->max_tx < n)) {
		snprintf(buf, len, "%s takes at most %u rx and %u tx channels", ifname, q->max_rx,
			 q->max_tx);
		return false;
	} else if (comb) {
		snprintf(buf, len, "ethtool -L %s combined %u", ifname, n);
	} else {
		snprintf(buf, len, "ethtool -L %s rx %u tx %u", ifname, n, n);
	}
	return true;
}

/* "0" or "0-7" */
static void range_text(unsigned n, char *buf, size_t len)
{
	if (n == 1)
		snprintf(buf, len, "queue 0");
	else
		snprintf(buf, len, "queues 0-%u", n - 1);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024 * 1024);
}

/* The engines refused by the plan: why, and what to do. */
static int plan_failure(const struct roxe_afxdp_report *a, const char *ifname, unsigned asked)
{
	const struct roxe_afxdp_plan *p = &a->plan;
	char qt[96], fix[96];

	queues_text(&a->q, qt, sizeof(qt));
	if (!p->fit) {
		unsigned most = p->slots;

		(void)more_queues(ifname, &a->q, most, fix, sizeof(fix));
		return fail(EXIT_CONFIG, EINVAL, "%s has %u queues (%s), more than roxe's XDP map "
			    "holds AF_XDP sockets (roxe_xsks: %u, an engine's socket on every queue): "
			    "lower them (%s)", ifname, a->q.rx, qt, p->slots, fix);
	}
	if (p->limit == ROXE_PLAN_SLOTS) {
		(void)more_queues(ifname, &a->q, p->slots / asked, fix, sizeof(fix));
		return fail(EXIT_CONFIG, EINVAL, "%s: %u engines on its %u queues (%s) need %u AF_XDP "
			    "sockets, roxe's XDP map holds %u: ask for fewer engines (--engines %u) "
			    "or lower the queues (%s)", ifname, asked, a->q.rx, qt, asked * a->q.rx,
			    p->slots, p->fit, fix);
	}
	if (p->limit == ROXE_PLAN_MAX)
		return fail(EXIT_CONFIG, EINVAL, "%s: --engines %u is more than roxed runs (%u): "
			    "ask for fewer", ifname, asked, p->fit);
	if (!more_queues(ifname, &a->q, asked, fix, sizeof(fix)))
		return fail(EXIT_CONFIG, EINVAL, "%s: --engines %u asks for %u engines, but %s has "
			    "%u queue%s (%s) and each engine transmits on one of its own; %s: ask "
			    "for fewer engines (--engines %u, or no --engines: one per queue)",
			    ifname, asked, asked, ifname, p->fit, p->fit == 1 ? "" : "s", qt, fix,
			    p->fit);
	return fail(EXIT_CONFIG, EINVAL, "%s: --engines %u asks for %u engines, but %s has %u "
		    "queue%s (%s) and each engine transmits on one of its own: raise them (%s) or "
		    "ask for fewer engines (--engines %u, or no --engines: one per queue)",
		    ifname, asked, asked, ifname, p->fit, p->fit == 1 ? "" : "s", qt, fix, p->fit);
}

/* The AF_XDP sockets or their memory failed. */
static int afxdp_failure(const struct roxe_afxdp_report *a, const char *ifname, int e,
			 unsigned engines)
{
	const struct roxe_afxdp_plan *p = &a->plan;
	const char *es = strerror(e);

	switch (a->step) {
	case ROXE_AFXDP_PLAN:
		return plan_failure(a, ifname, engines);
	case ROXE_AFXDP_AREA:
		return fail(1, e, "%s: no memory for %.0f MiB of AF_XDP buffers (%u queues x %u "
			    "receive, %u engines x %u transmit): %s; free memory, or lower the "
			    "queues (ethtool -L) or the engines (--engines)", ifname,
			    mib(p->umem_bytes), p->queues, p->rx_bufs, p->engines, p->tx_bufs, es);
	case ROXE_AFXDP_UMEM:
		if (e == EPERM || e == EACCES)
			return fail(EXIT_CONFIG, e, "%s: AF_XDP sockets: %s: roxed needs CAP_NET_RAW "
				    "(run it as root; roxed@.service grants it)", ifname, es);
		if (e == EAFNOSUPPORT)
			return fail(EXIT_CONFIG, e, "%s: AF_XDP sockets: %s: the kernel has none "
				    "(CONFIG_XDP_SOCKETS) or a sandbox forbids them "
				    "(RestrictAddressFamilies=): allow AF_XDP, or serve %s with "
				    "--backend udp", ifname, es, ifname);
		if (e == ENOBUFS || e == ENOMEM)
			return fail(EXIT_CONFIG, e, "%s: pinning %.0f MiB of AF_XDP buffers: %s: give "
				    "roxed CAP_IPC_LOCK (roxed@.service does) or a RLIMIT_MEMLOCK that "
				    "large (LimitMEMLOCK=, ulimit -l)", ifname, mib(p->umem_bytes), es);
		return fail(1, e, "%s: registering the AF_XDP buffers: %s", ifname, es);
	case ROXE_AFXDP_SOCKET:
		if (e == EBUSY)
			return fail(1, e, "%s: queue %u is taken by another AF_XDP program (%s): stop it "
				    "(`roxectl status` lists the interface's AF_XDP sockets)", ifname,
				    a->queue, es);
		if (e == EPERM || e == EACCES)
			return fail(EXIT_CONFIG, e, "%s: an AF_XDP socket on queue %u: %s: roxed needs "
				    "CAP_NET_RAW (run it as root)", ifname, a->queue, es);
		if (e == EINVAL)
			return fail(1, e, "%s refused an AF_XDP socket on queue %u (%s): if its queues "
				    "changed (ethtool -L) while roxed started, start it again", ifname,
				    a->queue, es);
		return fail(EXIT_CONFIG, e, "%s refused an AF_XDP socket on queue %u (%s): serve it "
			    "with --backend udp", ifname, a->queue, es);
	default:
		return fail(1, e, "%s: AF_XDP sockets into roxe's XDP map (queue %u): %s", ifname,
			    a->queue, es);
	}
}

/* The device's open failed where r says: one sentence, and the status. */
static int open_failure(const struct roxe_open_report *r, const struct roxe_device_attr *da)
{
	const char *ifname = da->ifname, *es = strerror(-r->err);
	int e = -r->err;

	switch (r->step) {
	case ROXE_OPEN_PLAN:
		return plan_failure(&r->afxdp, ifname, da->engines);
	case ROXE_OPEN_IFACE:
		if (e == EADDRNOTAVAIL)
			return fail(EXIT_CONFIG, e, "%s has no IPv4 or global IPv6 address, which "
				    "roxe0's GID needs: add one (ip address add ADDR/LEN dev %s)",
				    ifname, ifname);
		return fail(1, e, "%s: %s: is the interface still there (ip link show %s)?",
			    ifname, es, ifname);
	case ROXE_OPEN_XDP_OTHER: {
		char why[512];

		roxe_xdp_busy_reason(ifname, why, sizeof(why));
		return fail(EXIT_CONFIG, e, "%s; or serve %s with --backend udp", why, ifname);
	}
	case ROXE_OPEN_XDP_ENGINES:
		return fail(EXIT_CONFIG, e, "roxe's XDP program on %s was attached for %u engines "
			    "(roxectl attach) and roxed would run %u: detach it (roxectl detach %s) "
			    "or run roxed with --engines %u", ifname, r->xdp_engines,
			    r->afxdp.plan.engines ? r->afxdp.plan.engines : da->engines, ifname,
			    r->xdp_engines);
	case ROXE_OPEN_XDP:
		if (e == EPERM || e == EACCES)
			return fail(EXIT_CONFIG, e, "%s: loading roxe's XDP program: %s: roxed needs "
				    "CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN (run it as root; "
				    "roxed@.service grants them)", ifname, es);
		if (e == EOPNOTSUPP)
			return fail(EXIT_CONFIG, e, "%s cannot run XDP programs (%s): serve it with "
				    "--backend udp", ifname, es);
		return fail(1, e, "%s: attaching roxe's XDP program: %s; dmesg may say why",
			    ifname, es);
	case ROXE_OPEN_AFXDP:
		return afxdp_failure(&r->afxdp, ifname, e, da->engines ? da->engines :
				     r->afxdp.plan.engines);
	case ROXE_OPEN_UDP:
		return fail(1, e, "%s: the UDP socket on port 4791: %s%s", ifname, es,
			    e == EADDRINUSE ? ": kernel rxe or another roxe has it; stop that first" :
			    "");
	case ROXE_OPEN_ENGINES:
		if (da->rt_priority && (e == EPERM || e == EACCES))
			return fail(EXIT_CONFIG, e, "%s: SCHED_FIFO priority %u for the engines: %s: "
				    "roxed needs CAP_SYS_NICE and no realtime restriction "
				    "(roxed@.service has both; run it by hand as root), or leave out "
				    "--rt-priority", ifname, da->rt_priority, es);
		return fail(1, e, "%s: starting the engine threads: %s", ifname, es);
	case ROXE_OPEN_ATTR:
		return fail(EXIT_CONFIG, e, "%s: the device's settings were refused (%s): check "
			    "--cc against the interface's speed, and --engines", ifname, es);
	default:
		return fail(1, e, "%s: opening the device: %s", ifname, es);
	}
}

/* What the open chose and why, in one line, e.g. "eth1: 4 engines, one per
 * queue (4 combined channels, 16 cores), AF_XDP sockets on queues 0-3
 * (native XDP, copy mode), 48 MiB of buffers". */
static void startup_text(const struct roxe_open_report *r, const struct roxe_device_attr *da,
			 char *buf, size_t len)
{
	const struct roxe_afxdp_plan *p = &r->afxdp.plan;
	char qt[96], range[64], why[96];

	if (da->backend == ROXE_BACKEND_UDP) {
		snprintf(buf, len, "%s: %u engine over a UDP socket on port 4791", da->ifname,
			 r->engines);
		return;
	}
	queues_text(&r->afxdp.q, qt, sizeof(qt));
	range_text(p->queues, range, sizeof(range));
	if (p->queues > r->afxdp.q.rx)	/* virtio_net's XDP_TX queue pairs */
		snprintf(range + strlen(range), sizeof(range) - strlen(range),
			 ", %u of them added by the driver for XDP", p->queues - r->afxdp.q.rx);
	switch (p->limit) {
	case ROXE_PLAN_ASKED:
		snprintf(why, sizeof(why), "as asked");
		break;
	case ROXE_PLAN_CORES:
		snprintf(why, sizeof(why), "one per core");
		break;
	case ROXE_PLAN_QUEUES:
		snprintf(why, sizeof(why), "one per queue");
		break;
	case ROXE_PLAN_MAX:
		snprintf(why, sizeof(why), "roxe.ko's most");
		break;
	default:
		snprintf(why, sizeof(why), "as many as roxe's XDP map's %u sockets allow",
			 p->slots);
	}
	snprintf(buf, len, "%s: %u engine%s, %s (%s, %u core%s), AF_XDP sockets on %s "
		 "(%s XDP, %s mode), %.0f MiB of buffers", da->ifname, r->engines,
		 r->engines == 1 ? "" : "s", why, qt, p->cpus, p->cpus == 1 ? "" : "s", range,
		 r->xdp_generic ? "generic" : "native", r->afxdp.zerocopy ? "zero-copy" : "copy",
		 mib(p->umem_bytes));
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

/* systemd's STATUS=: the device, its port, and what serves it. */
static void notify_status(const struct roxe_kabi_info *info, const char *startup, bool ready)
{
	char msg[700];

	snprintf(msg, sizeof(msg), "%sSTATUS=%s: port %s, mtu %u; %s", ready ? "READY=1\n" : "",
		 info->ibdev, port_state_name(info->port_state), info->port_mtu, startup);
	roxed_notify(msg);
}

static int serve_loop(int fd, int sfd, int cfd, const struct roxe_device_attr *da,
		      struct roxe_kserve *ks,
		      struct roxe_kabi_info *info, struct roxe_kabi_info *last,
		      struct roxe_device *dev, const char *startup)
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

		if (n < 0 && errno != EINTR)
			return fail(1, errno, "poll: %s", strerror(errno));
		if (n > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				logmsg(LOG_INFO, "signal %u: shutting down", si.ssi_signo);
				roxed_notify("STOPPING=1");
				return 0;
			}
		}
		if (n > 0 && ((p[1].revents | p[2].revents) & POLLIN)) {
			err = roxe_kserve_run(ks);
			if (err == -ENODEV && ioctl(fd, ROXE_IOC_INFO, info) == 0 &&
			    (info->flags & ROXE_KABI_INFO_UNREGISTERED)) {
				logmsg(LOG_INFO, "%s: deleted (rdma link delete), detaching",
				       info->ibdev);
				roxed_notify("STOPPING=1");
				return 0;
			}
			if (err)
				return fail(1, -err, "%s: roxe.ko's command channel: %s", ifname,
					    strerror(-err));
		}
		/* port counters for `rdma statistic`: at most a second old */
		if (time(NULL) != pushed) {
			roxe_kserve_push_stats(ks);
			log_dev_errors(dev, ifname, &dev_errors);
			pushed = time(NULL);
		}
		if (ioctl(fd, ROXE_IOC_INFO, info) < 0)
			return fail(1, errno, "%s: roxe.ko's device info: %s", ifname, strerror(errno));
		if (!info->ifindex)
			return fail(1, ENODEV, "%s: the interface is gone: roxed detaches", ifname);
		if ((info->flags & ROXE_KABI_INFO_REGISTERED) && !up) {
			logmsg(LOG_INFO, "%s: registered", info->ibdev);
			tell_parent('R', 0, "");
			if (ready_fd >= 0) {
				close(ready_fd);
				ready_fd = -1;
			}
			notify_status(info, startup, true);
		} else if (up && (info->port_state != last->port_state ||
				  info->port_mtu != last->port_mtu)) {
			notify_status(info, startup, false);
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
 * for a signal. da->engines becomes the count the device runs. */
static int serve(int fd, int sfd, struct roxe_device_attr *da)
{
	struct roxe_kabi_info info, last = { 0 };
	struct roxe_open_report r;
	struct roxe_device *dev;
	struct roxe_kserve *ks;
	char path[108], startup[400];
	int rc, err, cfd;

	/* by default, at most as many engines as roxe.ko takes doorbells for */
	err = roxe_served_device_open(da, ROXE_KABI_MAX_ENGINES, &dev, &r);
	if (err)
		return open_failure(&r, da);
	da->engines = r.engines;
	startup_text(&r, da, startup, sizeof(startup));
	logmsg(LOG_INFO, "%s", startup);
	tell_parent('I', 0, startup);
	if (da->backend == ROXE_BACKEND_AFXDP && verbose) {
		char umem[200];

		snprintf(umem, sizeof(umem), "%s: %.0f MiB of AF_XDP buffers: %u queue%s x %u receive "
			 "buffers of %u B, %u engine%s x %u transmit buffers of %u B", da->ifname,
			 mib(r.afxdp.plan.umem_bytes), r.afxdp.plan.queues,
			 r.afxdp.plan.queues == 1 ? "" : "s", r.afxdp.plan.rx_bufs,
			 r.afxdp.plan.chunk, r.engines, r.engines == 1 ? "" : "s", r.afxdp.plan.tx_bufs,
			 r.afxdp.plan.tx_buf);
		logmsg(LOG_DEBUG, "%s", umem);
		tell_parent('I', 0, umem);	/* -v: part of the start-up story */
	}
	err = roxe_kserve_new(fd, dev, logmsg, verbose, &ks);
	if (err) {
		roxe_device_close(dev);
		if (err == -ENOTTY)
			return fail(EXIT_CONFIG, -err, "%s: roxe.ko is older than roxed (%s): load the "
				    "roxe.ko of this roxed's release", da->ifname, strerror(-err));
		return fail(1, -err, "%s: serving roxe.ko: %s", da->ifname, strerror(-err));
	}
	/* roxectl devices: a status socket (optional: serving goes on without) */
	cfd = roxe_ctl_listen(da->ifname, path, sizeof(path));
	if (cfd < 0)
		logmsg(LOG_WARNING, "%s: status socket: %s", da->ifname, strerror(-cfd));
	rc = serve_loop(fd, sfd, cfd, da, ks, &info, &last, dev, startup);
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
		 bool *foreground, bool *links, unsigned *link_id)
{
	enum { O_NETDEV = 256, O_DEVICE, O_NO_ECN, O_CNP, O_CC, O_LINK, O_XDP_COPY };
	static const struct option opts[] = {
		{ "netdev", required_argument, NULL, O_NETDEV },
		{ "device", required_argument, NULL, O_DEVICE },	/* deprecated */
		{ "engines", required_argument, NULL, 'E' },
		{ "rt-priority", required_argument, NULL, 'r' },
		{ "backend", required_argument, NULL, 'B' },
		{ "no-ecn", no_argument, NULL, O_NO_ECN },
		{ "xdp-copy", no_argument, NULL, O_XDP_COPY },
		{ "cnp-interval", required_argument, NULL, O_CNP },
		{ "cc", required_argument, NULL, O_CC },
		{ "links", no_argument, NULL, 'L' },
		{ "link", required_argument, NULL, O_LINK },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int o, err = 0;

	while (!err && (o = getopt_long(argc, argv, "E:r:B:LfvhVd:e:b:c:", opts, NULL)) != -1) {
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
		case O_XDP_COPY:
			da->xdp_copy = true;
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
		case 'L':
			*links = true;
			break;
		case O_LINK:
			err = tool_uint("--link", optarg, 1, UINT32_MAX, link_id);
			break;
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
	if (*links && (*ifname || *link_id))
		return tool_usage_error("--links starts the roxeds that serve devices: no --netdev or --link");
	if (!*links && !*ifname)
		return tool_usage_error("--netdev IFACE is required (the network interface)");
	return 0;
}

/* roxed --links: argv as given (getopt permutes it) but --links, for the
 * roxeds it starts. */
static int run_links(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int nargs = 0, rc;

	if (!args)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--links") && strcmp(argv[i], "-L"))
			args[nargs++] = argv[i];
	rc = roxed_links_run("/proc/self/exe", args, nargs, logmsg);
	free(args);
	return rc;
}

int main(int argc, char **argv)
{
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_AFXDP };
	struct roxe_kabi_attach a;
	const char *ifname = NULL;
	bool foreground = false, links = false;
	unsigned link_id = 0;
	sigset_t sigs;
	int fd, sfd, rc;

	journal = stderr_is_journal();
	tool_cli_init("roxed", short_usage);
	rc = parse(argc, argv, &da, &ifname, &foreground, &links, &link_id);
	if (rc) {
		if (rc == EXIT_USAGE)
			roxed_notify("STATUS=usage error: see roxed --help\nERRNO=22");
		return rc;
	}
	if (links)
		return run_links(argc, argv);
	if (link_id)
		take_link_status_fd();
	if (da.backend == ROXE_BACKEND_UDP && da.engines > 1)
		return usage_error("--backend udp runs one engine, not %u", da.engines);
	roxe_env_device_attr(&da, "roxed");	/* roxe(7)'s variables */
	if (!da.rt_priority)
		drop_sys_nice();

	/* signals arrive through a descriptor: no handler races */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	fd = attach(ifname, link_id, &a);
	if (fd < 0)
		return -fd;
	logmsg(LOG_INFO, "%s: serving %s (ifindex %u), active mtu %u", a.ibdev, ifname,
	       a.ifindex, a.port_mtu);
	if (!foreground && daemonize(ifname) < 0) {
		rc = fail(1, errno, "cannot go to the background (%s): run roxed with --foreground",
			  strerror(errno));
		close(fd);
		return rc;
	}
	/* after the fork: signalfd reads the signals of its own process */
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		rc = fail(1, errno, "signalfd: %s", strerror(errno));
		close(fd);
		return rc;
	}
	/* after the fork too: the engines are threads */
	da.ifname = ifname;
	rc = serve(fd, sfd, &da);
	/* closing the file is the detach: port DOWN, device unregistered */
	close(fd);
	close(sfd);
	logmsg(LOG_INFO, "%s: detached from %s", a.ibdev, ifname);
	return rc;
}
