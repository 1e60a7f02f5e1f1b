// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxectl: attach roxe's XDP program to an interface, detach it, show what
 * is attached and read its counters; list the RDMA devices roxed serves.
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/libbpf.h>
#include "roxe/cli.h"
#include "roxe/ctl.h"
#include "roxe/limits.h"
#include "roxe/maps.h"
#include "roxe/frame.h"
#include "roxe/version.h"
#include "roxe/xdp.h"
#include "json.h"
#include "xskdiag.h"

static const char usage[] =
"NAME\n"
"    roxectl - control roxe's XDP program and read its counters\n"
"\n"
"SYNOPSIS\n"
"    roxectl attach IFACE [--mode native|generic] [-E N] [--pass-unknown] [--json]\n"
"    roxectl detach IFACE [--json]\n"
"    roxectl status [--json]\n"
"    roxectl stats [IFACE] [--qpn N] [--watch [SECS]] [--json]\n"
"    roxectl devices [IFACE] [--json]\n"
"    roxectl -h | --help\n"
"    roxectl -V | --version\n"
"\n"
"DESCRIPTION\n"
"    roxe steers RoCE v2 frames (UDP port 4791) to its engines with an XDP\n"
"    program; every other frame goes to the kernel untouched.\n"
"\n"
"    attach  Load the program and attach it to IFACE. Native (driver) mode is\n"
"            tried first, then generic (skb) mode; --mode picks one. -E\n"
"            sets how many engines share the traffic (default: one per online\n"
"            CPU): each engine needs an rx/tx queue of its own on IFACE\n"
"            (ethtool -L, or numrxqueues/numtxqueues for veth). Frames for\n"
"            QPs that no engine owns are dropped and counted, or with\n"
"            --pass-unknown handed to the kernel. Refuses if IFACE already\n"
"            runs an XDP program. The maps are pinned under\n"
"            /sys/fs/bpf/roxe/IFACE/ (bpffs is mounted if needed).\n"
"    detach  Detach roxe's program from IFACE (never another program) and\n"
"            remove the pins.\n"
"    status  List the interfaces of this network namespace that run roxe:\n"
"            mode, program id, engines, unknown-QP policy; then each\n"
"            AF_XDP socket bound to one of them (the kernel's sock_diag):\n"
"            queue, socket inode, rings, and zerocopy or copy.\n"
"    stats   Global counters of each attached interface (or IFACE), summed\n"
"            over CPUs, then one row per QP with a nonzero counter. --qpn N\n"
"            shows only QP N, with every counter. --watch repeats every\n"
"            SECS seconds (default 1) and shows rates. --json prints one\n"
"            JSON document per round, on a line of its own: IFACE's object,\n"
"            or without IFACE an array of every interface's object.\n"
"\n"
"    devices The RDMA devices (roxe0, ...) that roxed daemons serve for\n"
"            roxe.ko, asked from each roxed over its status socket\n"
"            /run/roxe/IFACE.sock: interface, port state and MTU, engines\n"
"            and backend, roxed's pid and uptime, open user contexts, live\n"
"            QPs, CQs, SRQs and MRs, the module's commands answered and\n"
"            refused, asynchronous and completion events raised. A socket\n"
"            that no roxed answers (it was killed) is reported as stale.\n"
"            --json prints one JSON array of device objects (null where\n"
"            roxed did not say), empty when no roxed answers.\n"
"\n"
"    Counters: passed (not RoCE), redirected (to an engine), redirect_failed\n"
"    (the owner has no socket on the queue), unknown_qp (dropped or passed),\n"
"    bad_* (malformed RoCE v2 frames by reason, dropped), not_local_passed\n"
"    (RoCE v2 to an address not the interface's: to the kernel); from the\n"
"    engines, rx_drop_addr (frames whose addresses are not the QP's path,\n"
"    or UD frames not to a local address: dropped). Per QP: rx_* from\n"
"    the XDP program, tx, retransmits, NAKs, RNR, duplicates, out of\n"
"    sequence, timeouts, ICRC errors and address drops from the engine that\n"
"    owns the QP; ecn_marked (frames that arrived with ECN CE, counted by the\n"
"    XDP program before steering), cnp_sent (CNPs the QP sent its peer for\n"
"    them), cnp_received (CNPs from the peer) and cc_rate_cuts (CNPs on\n"
"    which DCQCN lowered the QP's rate); cc_rate_mbps, not a counter: the\n"
"    rate DCQCN holds the QP to after CNPs, Mbit/s (0: not limited, the\n"
"    line rate). The same counters: bpftool map dump name roxe_stats |\n"
"    roxe_eng_stats | roxe_qp_stats.\n"
"\n"
"    Needs root (CAP_NET_ADMIN, CAP_BPF). Maps are found through the program\n"
"    attached to the interface, so roxectl works under `ip netns exec`.\n"
"\n"
"OPTIONS\n"
"    --mode M            attach: native or generic (default: native, else\n"
"                        generic)\n"
"    -E, --engines N     attach: engines sharing the traffic, 1 to 64\n"
"    --pass-unknown      attach: hand frames for QPs no engine owns to the\n"
"                        kernel (default: drop and count them)\n"
"    --qpn N             stats: QP N only, every counter (--qp: the old\n"
"                        spelling, deprecated)\n"
"    --watch [SECS]      stats: again every SECS seconds (default 1), rates\n"
"    --json              every command: one JSON document on stdout (stats\n"
"                        --watch: one a round, on a line of its own)\n"
"    -h, --help          this text\n"
"    -V, --version       print roxectl's version and exit\n"
"\n"
"EXIT STATUS\n"
"    0 on success, 1 on failure (with a message), 2 on a usage error.\n"
"\n"
"EXAMPLES\n"
"    roxectl attach eth1 -E 4\n"
"    roxectl stats eth1 --watch\n"
"    ip netns exec t1-b roxectl stats --qpn 17 --json\n";

static const char short_usage[] =
"Usage: roxectl attach IFACE [--mode native|generic] [-E N] [--pass-unknown] [--json]\n"
"       roxectl detach IFACE [--json]\n"
"       roxectl status [--json]\n"
"       roxectl stats [IFACE] [--qpn N] [--watch [SECS]] [--json]\n"
"       roxectl devices [IFACE] [--json]\n";

/* Every command's options, read by one parser (cmd_parse). */
struct cmd_opts {
	bool		json;
	const char	*iface;		/* the IFACE word, NULL when none */
	struct roxe_xdp_attach_opts attach;
	long		qp;		/* stats: -1: all */
	double		interval;	/* stats --watch: 0: once */
};

/* Which options a command takes besides --json. */
enum { C_ATTACH = 1, C_STATS = 2 };
/* The long options without a letter. */
enum { O_JSON = 256, O_MODE, O_PASS, O_QPN, O_QP_OLD, O_WATCH };

static int cmd_opt(int c, const char *cmd, unsigned takes, char **argv, int argc,
		   struct cmd_opts *o)
{
	unsigned v;
	int err;

	static const char *const names[] = { [O_MODE - O_JSON] = "--mode",
		[O_PASS - O_JSON] = "--pass-unknown", [O_QPN - O_JSON] = "--qpn",
		[O_QP_OLD - O_JSON] = "--qp", [O_WATCH - O_JSON] = "--watch" };

	if ((c == 'E' || c == O_MODE || c == O_PASS) && !(takes & C_ATTACH))
		return tool_usage_error("%s: %s is an option of attach", cmd,
					c == 'E' ? "-E/--engines" : names[c - O_JSON]);
	if ((c == O_QPN || c == O_QP_OLD || c == O_WATCH) && !(takes & C_STATS))
		return tool_usage_error("%s: %s is an option of stats", cmd, names[c - O_JSON]);
	switch (c) {
	case O_JSON:
		o->json = true;
		return 0;
	case O_MODE:
		if (!strcmp(optarg, "native"))
			o->attach.mode = ROXE_XDP_NATIVE;
		else if (!strcmp(optarg, "generic"))
			o->attach.mode = ROXE_XDP_GENERIC;
		else
			return tool_usage_error("--mode: native or generic, not '%s'", optarg);
		return 0;
	case 'E':
		err = tool_uint("-E/--engines", optarg, 1, ROXE_MAX_ENGINES, &v);
		o->attach.engines = v;
		return err;
	case O_PASS:
		o->attach.pass_unknown_qp = true;
		return 0;
	case O_QP_OLD:
		fprintf(stderr, "roxectl: stats --qp is deprecated: --qpn\n");
		/* fall through */
	case O_QPN:
		err = tool_uint("--qpn", optarg, 0, ROXE_MAX_QPS - 1, &v);
		o->qp = v;
		return err;
	case O_WATCH:
		/* --watch SECS as well as --watch=SECS: a number after it is its */
		if (!optarg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
			optarg = argv[optind++];
		o->interval = 1.0;
		return optarg ? tool_real("--watch", optarg, 0.001, 86400, &o->interval) : 0;
	}
	return tool_usage_error(NULL);	/* getopt said what */
}

/* A command's options and words (argv[0] is the command): at least
 * min_words and at most max_words IFACE words. 0, or the exit status of a
 * usage error. */
static int cmd_parse(int argc, char **argv, unsigned takes, int min_words, int max_words,
		     struct cmd_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, O_JSON }, { "mode", required_argument, NULL, O_MODE },
		{ "pass-unknown", no_argument, NULL, O_PASS },
		{ "qpn", required_argument, NULL, O_QPN }, { "qp", required_argument, NULL, O_QP_OLD },
		{ "watch", optional_argument, NULL, O_WATCH },
		{ "engines", required_argument, NULL, 'E' },
		{ 0 }
	};
	int c, err = 0, words;

	*o = (struct cmd_opts){ .qp = -1 };
	optind = 1;
	while (!err && (c = getopt_long(argc, argv, "E:", opts, NULL)) != -1)
		err = cmd_opt(c, argv[0], takes, argv, argc, o);
	if (err)
		return err;
	words = argc - optind;
	if (words < min_words)
		return tool_usage_error("%s: IFACE is required", argv[0]);
	if (words > max_words)
		return tool_usage_error("%s: unexpected argument '%s'", argv[0],
					argv[optind + max_words]);
	o->iface = words ? argv[optind] : NULL;
	return 0;
}

static int fail_msg(const char *op, const char *ifname, int err, uint32_t other)
{
	switch (-err) {
	case ENODEV:
		fprintf(stderr, "roxectl: %s: no interface named %s in this network namespace\n",
			op, ifname);
		break;
	case EBUSY: {
		char why[512];

		/* attach: why roxe cannot run beside it; else roxe is not there */
		if (strcmp(op, "attach")) {
			fprintf(stderr, "roxectl: %s: %s runs another XDP program (id %u), not "
				"roxe's\n", op, ifname, other);
			break;
		}
		roxe_xdp_busy_reason(ifname, why, sizeof(why));
		fprintf(stderr, "roxectl: %s: %s\n", op, why);
		break;
	}
	case EEXIST:
		fprintf(stderr, "roxectl: %s: roxe is already attached to %s\n", op, ifname);
		break;
	case ENOENT:
		fprintf(stderr, "roxectl: %s: roxe is not attached to %s\n", op, ifname);
		break;
	case ESTALE:
		fprintf(stderr, "roxectl: %s: roxe's program runs in libxdp's dispatcher on %s, "
			"whose pins (/sys/fs/bpf/xdp) are not in this mount namespace: run "
			"roxectl %s where the dispatcher was loaded (not under ip netns exec: "
			"nsenter --net instead)\n", op, ifname, op);
		break;
	case EOPNOTSUPP:
		fprintf(stderr, "roxectl: %s: %s does not support XDP in this mode "
			"(try --mode generic)\n", op, ifname);
		break;
	case EPERM:
	case EACCES:
		fprintf(stderr, "roxectl: %s: permission denied: run as root "
			"(CAP_NET_ADMIN and CAP_BPF)\n", op);
		break;
	default:
		fprintf(stderr, "roxectl: %s %s: %s\n", op, ifname ? ifname : "", strerror(-err));
	}
	return 1;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Keep the kernel's own explanation of a refused attach, drop the noise. */
	if (level == LIBBPF_WARN && strstr(fmt, "Kernel error message"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int cmd_attach(int argc, char **argv)
{
	struct roxe_xdp *x;
	struct cmd_opts o;
	uint32_t other = 0;
	int err = cmd_parse(argc, argv, C_ATTACH, 1, 1, &o);

	if (err)
		return err;
	if (geteuid() != 0)
		return fail_msg("attach", NULL, -EPERM, 0);
	err = roxe_xdp_attach(o.iface, &o.attach, &x, &other);
	if (err)
		return fail_msg("attach", o.iface, err, other);
	if (x->pin_err)
		fprintf(stderr, "roxectl: warning: cannot pin maps under %s/%s: %s\n",
			ROXE_XDP_PIN_ROOT, x->ifname, strerror(-x->pin_err));
	if (o.json) {
		printf("{\"interface\": ");
		tool_json_str(stdout, x->ifname);
		printf(", \"mode\": \"%s\", \"prog_id\": %u, \"engines\": %u, \"unknown_qp\": "
		       "\"%s\", \"pinned\": %s}\n", roxe_xdp_mode_name(x->mode), x->prog_id,
		       x->config.engines, x->config.pass_unknown_qp ? "pass" : "drop",
		       x->pin_err ? "false" : "true");
	} else {
		printf("roxe attached to %s: %s mode, program id %u, %u engine%s%s\n",
		       x->ifname, roxe_xdp_mode_name(x->mode), x->prog_id, x->config.engines,
		       x->config.engines == 1 ? "" : "s",
		       x->config.pass_unknown_qp ? ", unknown QPs passed to the kernel" : "");
	}
	roxe_xdp_close(x);
	return 0;
}

static int cmd_detach(int argc, char **argv)
{
	struct cmd_opts o;
	uint32_t other = 0;
	int err = cmd_parse(argc, argv, 0, 1, 1, &o);

	if (err)
		return err;
	if (geteuid() != 0)
		return fail_msg("detach", NULL, -EPERM, 0);
	err = roxe_xdp_detach(o.iface, &other);
	if (err == -EBUSY) {
		fprintf(stderr, "roxectl: detach: %s runs another XDP program (id %u), "
			"not roxe: left alone\n", o.iface, other);
		return 1;
	}
	if (err)
		return fail_msg("detach", o.iface, err, other);
	if (o.json) {
		printf("{\"interface\": ");
		tool_json_str(stdout, o.iface);
		printf(", \"detached\": true}\n");
	} else {
		printf("roxe detached from %s\n", o.iface);
	}
	return 0;
}

/* Calls fn for every interface of the namespace that runs roxe. */
static int for_each_attached(int (*fn)(struct roxe_xdp *x, void *arg), void *arg)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int found = 0, ret = 0;

	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++) {
		struct roxe_xdp *x;

		if (roxe_xdp_open(i->if_name, &x, NULL))
			continue;
		found++;
		ret |= fn(x, arg);
		roxe_xdp_close(x);
	}
	if_freenameindex(ifs);
	return ret ? ret : found;
}

/* the interfaces status listed, for the AF_XDP socket table */
struct status_ifs {
	bool		json;
	unsigned	n;
	unsigned	ifindex[64];
	char		name[64][IF_NAMESIZE];
	unsigned	socks;
};

static int status_one(struct roxe_xdp *x, void *arg)
{
	struct status_ifs *st = arg;
	unsigned ifindex = if_nametoindex(x->ifname);
	const char *unknown = x->config.pass_unknown_qp ? "pass" : "drop";

	if (st->json) {
		printf("%s{\"interface\": ", st->n ? ", " : "");
		tool_json_str(stdout, x->ifname);
		printf(", \"mode\": \"%s\", \"prog_id\": %u, \"engines\": %u, \"unknown_qp\": \"%s\"}",
		       roxe_xdp_mode_name(x->mode), x->prog_id, x->config.engines, unknown);
	} else {
		printf("%-15s %-8s %10u %8u  %s\n", x->ifname, roxe_xdp_mode_name(x->mode),
		       x->prog_id, x->config.engines, unknown);
	}
	if (ifindex && st->n < sizeof(st->ifindex) / sizeof(st->ifindex[0])) {
		st->ifindex[st->n] = ifindex;
		snprintf(st->name[st->n], IF_NAMESIZE, "%s", x->ifname);
		st->n++;
	}
	return 0;
}

static int status_sock(const struct xsk_diag_sock *k, void *arg)
{
	struct status_ifs *st = arg;
	const char *rings = k->rx && k->tx ? "rx+tx" : k->rx ? "rx" : k->tx ? "tx" : "-";
	const char *mode = !k->umem ? "unknown" : k->zerocopy ? "zerocopy" : "copy";

	for (unsigned i = 0; i < st->n; i++) {
		if (st->ifindex[i] != k->ifindex)
			continue;
		if (st->json) {
			printf("%s{\"interface\": ", st->socks++ ? ", " : "");
			tool_json_str(stdout, st->name[i]);
			printf(", \"queue\": %u, \"socket\": %u, \"rings\": \"%s\", \"af_xdp\": \"%s\"",
			       k->queue, k->ino, rings, mode);
			/* the kernel's drop counters (xsk_diag's XDP_SHOW_STATS) */
			if (k->stats)
				printf(", \"rx_dropped\": %" PRIu64 ", \"rx_invalid\": %" PRIu64
				       ", \"rx_full\": %" PRIu64 ", \"fill_ring_empty\": %" PRIu64
				       ", \"tx_invalid\": %" PRIu64 ", \"tx_ring_empty\": %" PRIu64,
				       k->rx_dropped, k->rx_invalid, k->rx_full, k->fill_ring_empty,
				       k->tx_invalid, k->tx_ring_empty);
			printf("}");
			continue;
		}
		if (!st->socks++)
			printf("\n%-15s %5s %10s %-6s %s\n", "interface", "queue", "socket",
			       "rings", "af_xdp");
		printf("%-15s %5u %10u %-6s %s\n", st->name[i], k->queue, k->ino, rings, mode);
	}
	return 0;
}

/* --json: {"interfaces": [...], "sockets": [...], "sockets_error": null, or
 * why the kernel could not list the sockets}. */
static int cmd_status(int argc, char **argv)
{
	struct status_ifs st = { 0 };
	struct cmd_opts o;
	char why[128];
	int n, err = cmd_parse(argc, argv, 0, 0, 0, &o);

	if (err)
		return err;
	if (geteuid() != 0)
		return fail_msg("status", NULL, -EPERM, 0);
	st.json = o.json;
	if (o.json)
		printf("{\"interfaces\": [");
	else
		printf("%-15s %-8s %10s %8s  %s\n", "interface", "mode", "prog_id", "engines",
		       "unknown_qp");
	n = for_each_attached(status_one, &st);
	if (n < 0) {
		if (o.json)
			printf("]}\n");	/* one document, then the failure */
		return fail_msg("status", NULL, n, 0);
	}
	if (n == 0 && !o.json) {
		printf("(roxe is attached to no interface in this network namespace)\n");
		return 0;
	}
	if (o.json)
		printf("], \"sockets\": [");
	/* which sockets run zero-copy: the kernel's word, whoever owns them */
	err = n ? xsk_diag_each(status_sock, &st) : 0;
	if (err)
		snprintf(why, sizeof(why), "%s%s", strerror(-err),
			 err == -ENOENT ? ", xsk_diag missing" : "");
	if (o.json) {
		printf("], \"sockets_error\": ");
		tool_json_str(stdout, err ? why : NULL);
		printf("}\n");
	} else if (err) {
		printf("\n(AF_XDP sockets: the kernel cannot list them: %s)\n", why);
	} else if (!st.socks) {
		printf("\n(no AF_XDP socket bound to these interfaces)\n");
	}
	return 0;
}

/* --- stats ------------------------------------------------------------------ */

#define GLOBAL_FIELDS(X) X(passed) X(redirected) X(redirect_failed) X(unknown_qp) \
	X(unknown_qp_passed) X(bad_ip_len) X(bad_udp_len) X(bad_version) X(bad_opcode) \
	X(bad_hdr_len) X(bad_payload) X(bad_icrc) X(not_local_passed)
#define QP_FIELDS(X) X(rx_packets) X(rx_bytes) X(rx_drop_no_socket) X(rx_drop_malformed) \
	X(ecn_marked) X(tx_packets) X(tx_bytes) X(retransmits) X(nak_seq_err_sent) X(nak_inv_req_sent) \
	X(nak_rem_access_sent) X(nak_rem_op_sent) X(nak_seq_err_rcvd) X(nak_inv_req_rcvd) \
	X(nak_rem_access_rcvd) X(nak_rem_op_rcvd) X(rnr_nak_sent) X(rnr_nak_rcvd) \
	X(duplicates) X(out_of_sequence) X(timeouts) X(icrc_errors) X(rx_drop_addr) \
	X(cnp_sent) X(cnp_received) X(cc_rate_mbps) X(rx_drop_opcode) X(cc_rate_cuts)

static bool qp_nonzero(const struct roxe_qp_stats *s)
{
#define NZ(f) if (s->f) return true;
	QP_FIELDS(NZ)
#undef NZ
	return false;
}

static void print_json(struct roxe_xdp *x, const struct roxe_stats *g, const struct cmd_opts *o)
{
	struct roxe_engine_stats es;
	struct roxe_qp_stats qs;
	bool first = true;

	printf("{\"interface\":");
	tool_json_str(stdout, x->ifname);
	printf(",\"mode\":");
	tool_json_str(stdout, roxe_xdp_mode_name(x->mode));
	printf(",\"prog_id\":%u,\"engines\":%u,\"global\":{", x->prog_id, x->config.engines);
	const char *sep = "";
#define J(f) printf("%s\"" #f "\":%llu", sep, (unsigned long long)g->f); sep = ",";
	GLOBAL_FIELDS(J)
#undef J
	if (roxe_xdp_read_eng_stats(x, &es) == 0)
		printf("%s\"rx_drop_addr\":%llu,\"loopback\":%llu,\"loopback_drop\":%llu"
		       ",\"wakeup_errors\":%llu,\"tx_umem_inplace\":%llu,\"tx_umem_copied\":%llu"
		       ",\"tx_umem_held_expired\":%llu", sep,
		       (unsigned long long)es.rx_drop_addr, (unsigned long long)es.loopback,
		       (unsigned long long)es.loopback_drop, (unsigned long long)es.wakeup_errors,
		       (unsigned long long)es.tx_umem_inplace, (unsigned long long)es.tx_umem_copied,
		       (unsigned long long)es.tx_umem_held_expired);
	printf("},\"qps\":[");
	for (uint32_t q = 0; q < ROXE_MAX_QPS; q++) {
		if (o->qp >= 0 && q != (uint32_t)o->qp)
			continue;
		if (roxe_xdp_read_qp_stats(x, q, &qs) || (o->qp < 0 && !qp_nonzero(&qs)))
			continue;
		printf("%s{\"qpn\":%u", first ? "" : ",", q);
#define J(f) printf(",\"" #f "\":%llu", (unsigned long long)qs.f);
		QP_FIELDS(J)
#undef J
		printf("}");
		first = false;
	}
	printf("]}");
}

static void print_human(struct roxe_xdp *x, const struct roxe_stats *g,
			const struct roxe_stats *prev, const struct cmd_opts *o)
{
	struct roxe_engine_stats es;
	struct roxe_qp_stats qs;
	int rows = 0;

	printf("%s: roxe %s mode, program %u, %u engine%s, unknown QPs %s\n", x->ifname,
	       roxe_xdp_mode_name(x->mode), x->prog_id, x->config.engines,
	       x->config.engines == 1 ? "" : "s",
	       x->config.pass_unknown_qp ? "passed" : "dropped");
#define H(f) do {								\
		printf("  %-18s %14llu", #f, (unsigned long long)g->f);	\
		if (prev)							\
			printf("  %12.0f/s", (double)(g->f - prev->f) / o->interval); \
		printf("\n");							\
	} while (0);
	GLOBAL_FIELDS(H)
#undef H
	if (roxe_xdp_read_eng_stats(x, &es) == 0) {
		printf("  %-18s %14llu\n", "rx_drop_addr", (unsigned long long)es.rx_drop_addr);
		printf("  %-18s %14llu\n", "loopback", (unsigned long long)es.loopback);
		printf("  %-18s %14llu\n", "loopback_drop", (unsigned long long)es.loopback_drop);
		printf("  %-18s %14llu\n", "wakeup_errors", (unsigned long long)es.wakeup_errors);
		printf("  %-18s %14llu\n", "tx_umem_inplace", (unsigned long long)es.tx_umem_inplace);
		printf("  %-18s %14llu\n", "tx_umem_copied", (unsigned long long)es.tx_umem_copied);
		printf("  %-18s %14llu\n", "tx_umem_held_exp", (unsigned long long)es.tx_umem_held_expired);
	}
	if (o->qp >= 0) {
		if (roxe_xdp_read_qp_stats(x, o->qp, &qs) == 0) {
			printf("  QP %ld\n", o->qp);
#define Q(f) printf("    %-20s %14llu\n", #f, (unsigned long long)qs.f);
			QP_FIELDS(Q)
#undef Q
		}
		return;
	}
	for (uint32_t q = 0; q < ROXE_MAX_QPS; q++) {
		if (roxe_xdp_read_qp_stats(x, q, &qs) || !qp_nonzero(&qs))
			continue;
		if (!rows++)
			printf("  %8s %12s %14s %10s %10s %12s %14s %8s %6s %6s %6s %6s %6s %8s %8s %8s %8s\n",
			       "qpn", "rx_pkts", "rx_bytes", "rx_nosock", "rx_malf",
			       "tx_pkts", "tx_bytes", "retrans", "naks_s", "naks_r",
			       "rnr_s", "rnr_r", "icrc", "ecn_ce", "cnp_s", "cnp_r", "cc_cuts");
		printf("  %8u %12llu %14llu %10llu %10llu %12llu %14llu %8llu %6llu %6llu %6llu %6llu %6llu %8llu %8llu %8llu %8llu\n",
		       q, (unsigned long long)qs.rx_packets, (unsigned long long)qs.rx_bytes,
		       (unsigned long long)qs.rx_drop_no_socket,
		       (unsigned long long)qs.rx_drop_malformed,
		       (unsigned long long)qs.tx_packets, (unsigned long long)qs.tx_bytes,
		       (unsigned long long)qs.retransmits,
		       (unsigned long long)(qs.nak_seq_err_sent + qs.nak_inv_req_sent +
					    qs.nak_rem_access_sent + qs.nak_rem_op_sent),
		       (unsigned long long)(qs.nak_seq_err_rcvd + qs.nak_inv_req_rcvd +
					    qs.nak_rem_access_rcvd + qs.nak_rem_op_rcvd),
		       (unsigned long long)qs.rnr_nak_sent, (unsigned long long)qs.rnr_nak_rcvd,
		       (unsigned long long)qs.icrc_errors, (unsigned long long)qs.ecn_marked,
		       (unsigned long long)qs.cnp_sent, (unsigned long long)qs.cnp_received,
		       (unsigned long long)qs.cc_rate_cuts);
	}
	if (!rows)
		printf("  (no QP has counted anything)\n");
}

struct stats_round {
	const struct cmd_opts *o;
	struct roxe_stats *prev;	/* per interface index, for rates */
	bool	have_prev;
	unsigned shown;			/* interfaces printed this round */
};

static int stats_one(struct roxe_xdp *x, void *arg)
{
	struct stats_round *r = arg;
	struct roxe_stats g;
	int err = roxe_xdp_read_stats(x, &g);

	if (err)
		return fail_msg("stats", x->ifname, err, 0);
	if (r->o->json) {
		if (r->shown)
			printf(",");
		print_json(x, &g, r->o);
	} else
		print_human(x, &g, r->have_prev ? &r->prev[x->ifindex % 256] : NULL, r->o);
	r->prev[x->ifindex % 256] = g;
	r->shown++;
	return 0;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int cmd_stats(int argc, char **argv)
{
	struct cmd_opts o;
	struct stats_round r = { .o = &o };
	const char *ifname;
	int ret = cmd_parse(argc, argv, C_STATS, 0, 1, &o);

	if (ret)
		return ret;
	ifname = o.iface;
	if (geteuid() != 0)
		return fail_msg("stats", NULL, -EPERM, 0);
	r.prev = calloc(256, sizeof(*r.prev));
	if (!r.prev)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* --json: one document a round (one line each with --watch): the
	 * interface's object for IFACE, else an array of them. */
	do {
		r.shown = 0;
		if (ifname) {
			struct roxe_xdp *x;
			uint32_t other = 0;
			int err = roxe_xdp_open(ifname, &x, &other);

			if (err) {
				ret = fail_msg("stats", ifname, err, other);
				break;
			}
			ret = stats_one(x, &r);
			roxe_xdp_close(x);
			if (o.json && !ret)
				printf("\n");
		} else {
			int n;

			if (o.json)
				printf("[");
			n = for_each_attached(stats_one, &r);
			if (o.json)
				printf("]\n");
			if (n == 0) {
				fprintf(stderr, "roxectl: stats: roxe is attached to no interface "
					"in this network namespace\n");
				ret = 1;
				break;
			}
			ret = n < 0;
		}
		r.have_prev = true;
		fflush(stdout);
		if (o.interval > 0 && !stop) {
			struct timespec ts = { (time_t)o.interval,
					       (long)((o.interval - (time_t)o.interval) * 1e9) };
			nanosleep(&ts, NULL);
			if (!o.json && !stop)
				printf("\n");
		}
	} while (o.interval > 0 && !stop && !ret);
	free(r.prev);
	return ret;
}

/* --- devices: what roxed daemons serve ------------------------------------- */
/* The columns: roxed's key (include/uapi/roxe/ctl.h), the table's head, and its
 * width (negative: left-aligned). */
static const struct {
	const char *key, *head;
	int width;
} ctl_cols[] = {
	{ "device", "DEVICE", -7 },		{ "interface", "IFACE", -6 },
	{ "port", "PORT", -7 },			{ "mtu", "MTU", 5 },
	{ "engines", "ENGINES", 7 },		{ "backend", "BACKEND", -7 },
	{ "pid", "PID", 7 },			{ "uptime_s", "UPTIME", 7 },
	{ "user_contexts", "CONTEXTS", 8 },	{ "qps", "QPS", 5 },
	{ "cqs", "CQS", 5 },			{ "srqs", "SRQS", 5 },
	{ "mrs", "MRS", 5 },			{ "commands", "COMMANDS", 8 },
	{ "command_errors", "REFUSED", 7 },	{ "async_events", "EVENTS", 6 },
	{ "async_lost", "LOST", 5 },		{ "cq_events", "CQ_EVENTS", 9 },
};
#define NCOLS (sizeof(ctl_cols) / sizeof(ctl_cols[0]))

/* The value of key in roxed's "key value" lines, or "-". */
static void ctl_value(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *l = text;

	while (l && *l) {
		if (!strncmp(l, key, kl) && l[kl] == ' ') {
			snprintf(out, len, "%.*s", (int)strcspn(l + kl + 1, "\n"), l + kl + 1);
			return;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	snprintf(out, len, "-");
}

static void print_cell(size_t k, const char *v)
{
	printf("%s%*s", k ? " " : "", ctl_cols[k].width, v);
}

/* One of roxed's values in JSON: a number as it is when it reads as one
 * (digits, no leading zero), null when roxed did not say, else a string,
 * escaped: the text comes from another process. */
static void json_value(const char *v)
{
	size_t n = strlen(v);

	if (!strcmp(v, "-"))
		printf("null");
	else if (n && strspn(v, "0123456789") == n && (v[0] != '0' || n == 1))
		printf("%s", v);
	else
		tool_json_str(stdout, v);
}

static int cmd_devices(int argc, char **argv)
{
	char pattern[256], text[ROXE_CTL_MAX], v[64];
	const char *ifname;
	struct cmd_opts o;
	unsigned shown = 0;
	bool json;
	glob_t g;
	int ret = cmd_parse(argc, argv, 0, 0, 1, &o);

	if (ret)
		return ret;
	ifname = o.iface;
	json = o.json;
	snprintf(pattern, sizeof(pattern), "%s/%s%s", ROXE_CTL_DIR, ifname ? ifname : "*",
		 ROXE_CTL_SUFFIX);
	if (glob(pattern, 0, NULL, &g)) {
		g.gl_pathc = 0;
		g.gl_pathv = NULL;
	}
	if (json)
		printf("[");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int n = roxe_ctl_query(g.gl_pathv[i], text, sizeof(text));

		if (n < 0) {
			fprintf(stderr, "roxectl: %s: %s%s\n", g.gl_pathv[i], strerror(-n),
				n == -ECONNREFUSED ? " (stale: its roxed is gone)" : "");
			if (n != -ECONNREFUSED)
				ret = 1;
			continue;
		}
		if (!json && !shown) {
			for (size_t k = 0; k < NCOLS; k++)
				print_cell(k, ctl_cols[k].head);
			printf("\n");
		}
		if (json)
			printf("%s{", shown ? ",\n " : "");
		for (size_t k = 0; k < NCOLS; k++) {
			ctl_value(text, ctl_cols[k].key, v, sizeof(v));
			if (json) {
				printf("%s", k ? ", " : "");
				tool_json_key(stdout, ctl_cols[k].key);
				json_value(v);
			} else {
				print_cell(k, v);
			}
		}
		printf(json ? "}" : "\n");
		shown++;
	}
	if (json)		/* one array, empty when no roxed answered */
		printf("]\n");
	if (!shown && !ret)
		fprintf(json ? stderr : stdout, "roxectl: no roxed serves %s%s\n",
			ifname ? ifname : "any interface",
			ifname ? "" : " (roxed --netdev IFACE starts one)");
	globfree(&g);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	libbpf_set_print(libbpf_quiet);
	tool_cli_init("roxectl", short_usage);
	if (!cmd)
		return tool_usage_error("a command is required");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		tool_version_exit("roxectl");
	if (!strcmp(cmd, "attach"))
		return cmd_attach(argc - 1, argv + 1);
	if (!strcmp(cmd, "detach"))
		return cmd_detach(argc - 1, argv + 1);
	if (!strcmp(cmd, "status"))
		return cmd_status(argc - 1, argv + 1);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(cmd, "devices"))
		return cmd_devices(argc - 1, argv + 1);
	return tool_usage_error("unknown command '%s'", cmd);
}
