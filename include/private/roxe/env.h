/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The environment variables of roxe(7), for roxe's programs (roxed, and
 * the tools, which link daemon/env.c from libroxe-tools.a): libroxe reads
 * no environment and prints nothing, so the programs read the variables
 * into its settings and print what it reports.
 *   ROXE_TRACE=1, 2       roxe_device_attr.trace (lines on stderr),
 *                         2 with trace_recorder
 *   ROXE_OOO_STASH=0      roxe_device_attr.no_ooo_stash
 *   ROXE_ICRC=generic|avx2|avx512, ROXE_ICRC_GENERIC (any value: generic)
 *                         roxe_icrc_select()
 */
#ifndef ROXE_ENV_H
#define ROXE_ENV_H

#include "roxe/verbs.h"

/* ROXE_ICRC, ROXE_ICRC_GENERIC: a value not known is said on stderr
 * (prog: the program's name) and the widest code runs. */
void roxe_env_icrc(const char *prog);
/* Those and ROXE_TRACE, ROXE_OOO_STASH into da (the rest left as it is). */
void roxe_env_device_attr(struct roxe_device_attr *da, const char *prog);
/* ROXE_TRACE's callback: the line on stderr. */
void roxe_env_trace_line(void *arg, const char *line);
/* The errors dev met that no call returned, if any, on stderr. */
void roxe_env_report(struct roxe_device *dev, const char *prog);

#endif /* ROXE_ENV_H */
