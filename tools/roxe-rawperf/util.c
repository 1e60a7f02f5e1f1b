// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What every part of roxe-rawperf uses: the names of backends and modes,
 * the stop flag its signal handler raises, the clock, error messages.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include "rawperf.h"

const char *const backend_names[] = { "afxdp", "udp" };
const char *const mode_names[] = { "bw", "lat" };

volatile sig_atomic_t interrupted;

void on_stop_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void err_msg(const char *fmt, ...)
{
	va_list ap;

	fputs("roxe-rawperf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
