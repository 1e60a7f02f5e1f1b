/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Bounded waits for the tests of every suite (engine, xdp): a test waits on
 * the very thing it asserts next (a counter, a state), never for a guess at
 * how long the kernel or an engine takes.
 */
#ifndef ROXE_TEST_WAIT_H
#define ROXE_TEST_WAIT_H

#include <stdbool.h>
#include <time.h>

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static inline long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Until cond (an expression, looked at again every 100 us) holds: true, or
 * false once timeout_ms passed without it. The bound (seconds) is met only
 * by a run that fails anyway.
 */
#define wait_until(cond, timeout_ms) ({						\
	struct timespec wu_t0_;							\
	bool wu_ok_;								\
										\
	clock_gettime(CLOCK_MONOTONIC, &wu_t0_);				\
	while (!(wu_ok_ = (cond)) && ms_since(&wu_t0_) <= (timeout_ms))	\
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);		\
	wu_ok_;									\
})

#endif
