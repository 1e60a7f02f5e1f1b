/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The command line of roxe's programs (roxed and the tools), one convention
 * for all (roxe(7), COMMAND LINE; selftests/docs/cli_test.sh checks it):
 * a usage error exits 2 with a message and the usage on stderr; numbers
 * are read strictly. tools/lib/cli.c, in libroxe-tools.a and linked into
 * roxed as version.o is; declared here, not in tools/lib/tool.h, because
 * roxed includes only include/'s headers; named tool_, as no function of
 * libroxe.
 */
#ifndef ROXE_CLI_H
#define ROXE_CLI_H

#include <stdint.h>
#include "roxe/verbs.h"

/* The exit status of a usage error. */
#define TOOL_USAGE_EXIT	2

/* The program's name (e.g. "roxe-perf") and its usage in short, one or more
 * lines starting "Usage: ", for the usage errors below. First thing in
 * main(). */
void tool_cli_init(const char *prog, const char *usage);

/* "PROG: message" (none when fmt is NULL: getopt has said what is wrong),
 * then the usage and "Try 'PROG --help' for more.", all on stderr.
 * Returns TOOL_USAGE_EXIT. */
int tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* With TOOL_NUM_SUFFIX a K, M or G (or k, m, g) may follow: 2^10, 2^20,
 * 2^30 times the number. */
#define TOOL_NUM_SUFFIX	1u

/* arg, the value of option opt (as the message names it, e.g. "-n/--iters"),
 * as a whole number from min to max: decimal digits, or hexadecimal after
 * 0x; nothing before or after (no sign, no blank), no overflow. 0 with *v
 * set, or a usage error's TOOL_USAGE_EXIT after saying so. */
int tool_num(const char *opt, const char *arg, uint64_t min, uint64_t max, unsigned flags,
	     uint64_t *v);
/* The same into an unsigned or an int (0 <= min <= max). */
int tool_uint(const char *opt, const char *arg, unsigned min, unsigned max, unsigned *v);
int tool_int(const char *opt, const char *arg, int min, int max, int *v);
/* A decimal number (digits, an optional fraction) from min to max. */
int tool_real(const char *opt, const char *arg, double min, double max, double *v);

/* -B/--backend: "afxdp" or "udp". 0, or TOOL_USAGE_EXIT after saying so. */
int tool_backend(const char *arg, enum roxe_backend *b);

/* -d NAME, in a program that runs its own engine on a network interface:
 * -d names an RDMA device, as perftest's and ibv_rc_pingpong's -d do, and
 * there is none to choose. Refused with a hint (--netdev NAME when NAME is
 * an interface); returns TOOL_USAGE_EXIT. */
int tool_ib_dev_refused(const char *name);

#endif /* ROXE_CLI_H */
