// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * CLOCK_MONOTONIC for the engines, which read it every turn (a polled
 * device's: every poll of a CQ, two turns on a ping-pong's way). In a KVM
 * guest the vDSO's clock_gettime() cost 23 ns here, the TSC itself 10
 * (2026-11-30). Where the kernel keeps its own time by the TSC (clocksource
 * "tsc": it found the counter invariant and the same on every CPU), each
 * thread reads the TSC and scales it by the rate it measured against
 * CLOCK_MONOTONIC over its last interval, re-based on CLOCK_MONOTONIC at
 * each interval's end (a few milliseconds; by calls too, should the
 * counter ever stall) and never going backwards. Elsewhere, and until a
 * thread has measured its first interval, clock_gettime() itself.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "core/core.h"

static uint64_t gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <x86intrin.h>

/* Re-based after this many TSC ticks (3 ms, then 23 ms at 3 GHz) or calls. */
#define FIRST_SPAN	(1ull << 23)
#define SPAN		(1ull << 26)
#define SPAN_CALLS	(1u << 16)
/* clock_gettime() between two TSC readings: at most this far apart (0.3 us;
 * 0.1 here): a pair 0.15 us off puts the next interval about 1 us off */
#define PAIR_TICKS	(1ull << 10)

struct tsc_base {
	uint64_t	tsc, ns;	/* the last re-basing */
	uint64_t	mult;		/* ns per tick, 32.32 fixed point; 0: not known */
	uint64_t	span;		/* ticks until the next re-basing */
	uint64_t	last;		/* the last time returned */
	unsigned	calls;
};

/* initial-exec: each reading would otherwise call __tls_get_addr() */
static __thread struct tsc_base tb __attribute__((tls_model("initial-exec")));
static _Atomic int tsc_state;		/* 0: not looked at, 1: usable, 2: not */

/* Is the kernel's clocksource the TSC? Looked at once (threads that race
 * here read the same file). */
static __attribute__((noinline)) bool tsc_look(void)
{
	char name[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	int st;

	if (f) {
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
	}
	st = strcmp(name, "tsc\n") ? 2 : 1;
	atomic_store_explicit(&tsc_state, st, memory_order_relaxed);
	return st == 1;
}

static inline bool tsc_usable(void)
{
	int st = atomic_load_explicit(&tsc_state, memory_order_relaxed);

	return __builtin_expect(st == 1, 1) || (!st && tsc_look());
}

static uint64_t later(struct tsc_base *b, uint64_t ns)
{
	if (ns > b->last)
		b->last = ns;
	return b->last;
}

/* At an interval's end: its rate, measured, and the next interval's base;
 * a pair of readings the thread was preempted between is not one (the
 * caller's next reading tries again). */
static uint64_t rebase(struct tsc_base *b)
{
	uint64_t t0 = __rdtsc(), ns = gettime_ns(), t1 = __rdtsc(), tsc = t0 + (t1 - t0) / 2;

	if (t1 - t0 > PAIR_TICKS)
		return later(b, ns);
	if (b->span && tsc > b->tsc && ns > b->ns)
		b->mult = (uint64_t)(((unsigned __int128)(ns - b->ns) << 32) / (tsc - b->tsc));
	b->span = b->span ? SPAN : FIRST_SPAN;
	b->tsc = tsc;
	b->ns = ns;
	b->calls = 0;
	return later(b, ns);
}

uint64_t roxe_mono_ns(void)
{
	struct tsc_base *b = &tb;
	uint64_t d;

	if (!tsc_usable())
		return gettime_ns();
	d = __rdtsc() - b->tsc;
	if (!b->mult) {		/* the first interval: measured, not used */
		if (!b->span || d >= b->span)
			return rebase(b);
		return later(b, gettime_ns());
	}
	if (d >= b->span || ++b->calls >= SPAN_CALLS)
		return rebase(b);
	return later(b, b->ns + (uint64_t)(((unsigned __int128)d * b->mult) >> 32));
}

bool roxe_mono_tsc(void)
{
	return tsc_usable();
}
#else
uint64_t roxe_mono_ns(void)
{
	return gettime_ns();
}

bool roxe_mono_tsc(void)
{
	return false;
}
#endif
