// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe(7)'s environment variables into libroxe's settings, and what the
 * library reports printed: the programs' side of a library that reads no
 * environment and prints nothing (include/private/roxe/env.h). Shared by roxed and
 * the tools (libroxe-tools.a), as ctlsock.c is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "roxe/env.h"
#include "roxe/frame.h"

void roxe_env_icrc(const char *prog)
{
	const char *v = getenv("ROXE_ICRC_GENERIC") ? "generic" : getenv("ROXE_ICRC");

	if (roxe_icrc_select(v))
		fprintf(stderr, "%s: ROXE_ICRC: generic, avx2 or avx512, not '%s' (ignored)\n",
			prog, v);
}

void roxe_env_trace_line(void *arg, const char *line)
{
	(void)arg;
	/* one call per line: engines' lines do not interleave within one */
	fprintf(stderr, "%s\n", line);
}

void roxe_env_device_attr(struct roxe_device_attr *da, const char *prog)
{
	const char *stash = getenv("ROXE_OOO_STASH"), *trace = getenv("ROXE_TRACE");
	int level = trace ? atoi(trace) : 0;

	roxe_env_icrc(prog);
	if (stash && !strcmp(stash, "0"))
		da->no_ooo_stash = true;
	if (level > 0) {
		da->trace = roxe_env_trace_line;
		da->trace_recorder = level > 1;
	}
}

void roxe_env_report(struct roxe_device *dev, const char *prog)
{
	uint64_t n;
	int err = roxe_device_last_error(dev, &n);

	if (err)
		fprintf(stderr, "%s: %llu engine wake-ups failed, the last: %s\n", prog,
			(unsigned long long)n, strerror(-err));
}
