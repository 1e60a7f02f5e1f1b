/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A pair's engines on the virtual clock (engine.h: roxe_clock_virtual):
 * time stands still unless the test moves it, so a retransmission, RNR,
 * pacing or DCQCN timer fires when the test says and never because the
 * host was slow. The test lets the engines settle (everything that can
 * happen at this instant has happened), looks, then moves the clock to
 * the next deadline or by an amount of its choosing.
 */
#ifndef ROXE_TEST_VCLOCK_H
#define ROXE_TEST_VCLOCK_H

#include <sched.h>
#include "pair.h"
#include "transport/transport.h"
#include "transport/engine.h"

/* Far past 0, which the timers and the loss memory read as "never". */
#define VC_START_NS	(1000ull * 1000000000ull)

/* Before the pair opens: its engines start on the virtual clock. */
static inline void vc_start(void)
{
	roxe_clock_virtual(VC_START_NS);
}

static inline uint64_t vc_now(void)
{
	return roxe_now_ns();
}

/* A pair's two devices, for the _devs helpers. */
#define VC_PAIR(p)	((struct roxe_device *const[]){ (p)->s[0].dev, (p)->s[1].dev })

/* Turn the polled engines of n devices until idle (this thread is their
 * only poller), a bounded number of turns (an engine that never idles is
 * vc_settle's to report); true if one found work. */
static inline bool vc_turn_polled_devs(struct roxe_device *const *devs, unsigned n)
{
	bool busy = false;

	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; devs[i]->polled && k < devs[i]->nengines; k++)
			for (int t = 0; t < 100000 && roxe_engine_poll(&devs[i]->engines[k]); t++)
				busy = true;
	return busy;
}

/*
 * One look at n devices (at most 8), each of engine threads, which park
 * only on the virtual clock, or polled: every engine thread parked, no
 * wakeup pending anywhere, and no engine turned meanwhile (the epochs):
 * then nothing moves until the test does. Parked before and after the
 * look at the wakeups, every thread slept through all of it.
 */
static inline bool vc_quiet_devs(struct roxe_device *const *devs, unsigned n)
{
	unsigned long ep[8][ROXE_MAX_ENGINES];
	bool quiet = n <= 8;

	for (unsigned i = 0; i < n && quiet; i++)
		for (unsigned k = 0; k < devs[i]->nengines; k++) {
			struct roxe_engine *e = &devs[i]->engines[k];

			ep[i][k] = atomic_load(&e->epoch);
			if (!devs[i]->polled && !roxe_engine_parked(e))
				quiet = false;
		}
	for (unsigned i = 0; i < n && quiet; i++)
		for (unsigned k = 0; k < devs[i]->nengines; k++)
			if (roxe_engine_wake_pending(&devs[i]->engines[k]))
				quiet = false;
	for (unsigned i = 0; i < n && quiet; i++)
		for (unsigned k = 0; k < devs[i]->nengines; k++) {
			struct roxe_engine *e = &devs[i]->engines[k];

			if ((!devs[i]->polled && !roxe_engine_parked(e)) ||
			    atomic_load(&e->epoch) != ep[i][k])
				quiet = false;
		}
	return quiet;
}

/* Until the devices are settled at the current time (everything that can
 * happen at this instant has happened): 0, or -ETIMEDOUT when they never
 * are (an engine that runs for ever, say a timer that fires again and
 * again at one instant: a hang guard, 20 s of real time). */
static inline int vc_settle_devs(struct roxe_device *const *devs, unsigned n)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool busy = vc_turn_polled_devs(devs, n);

		if (!busy && vc_quiet_devs(devs, n))
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			return -ETIMEDOUT;
		sched_yield();
	}
}

static inline int vc_settle(struct pair *p)
{
	return vc_settle_devs(VC_PAIR(p), 2);
}

/* The earliest timer armed on the devices (0: none); settled engines only. */
static inline uint64_t vc_next_deadline_devs(struct roxe_device *const *devs, unsigned n)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < devs[i]->nengines; k++) {
			uint64_t d = roxe_engine_next_deadline(&devs[i]->engines[k]);

			if (d && (!next || d < next))
				next = d;
		}
	return next;
}

static inline uint64_t vc_next_deadline(struct pair *p)
{
	return vc_next_deadline_devs(VC_PAIR(p), 2);
}

/* Move the clock by ns and let the pair settle: through each deadline on
 * the way in turn, settling at each, as a real clock would meet them (one
 * leap would show an engine a timer and a frame of later at once, in the
 * order of its turn rather than of time). */
static inline int vc_advance(struct pair *p, uint64_t ns)
{
	uint64_t end = vc_now() + ns, now, next;
	int err = vc_settle(p);

	while (!err && (next = vc_next_deadline(p)) && next < end &&
	       next > (now = vc_now())) {
		roxe_clock_advance(next - now);
		err = vc_settle(p);
	}
	if (err)
		return err;
	roxe_clock_advance(end - vc_now());
	return vc_settle(p);
}

/* Move the clock to the devices' next deadline, not settling after: the
 * time moved, 0 if no timer was armed (nothing moved). A settled engine
 * has fired whatever was due, so a deadline is always in the future. */
static inline uint64_t vc_jump_devs(struct roxe_device *const *devs, unsigned n)
{
	uint64_t now = vc_now(), next = vc_next_deadline_devs(devs, n);

	if (next <= now)
		return 0;
	roxe_clock_advance(next - now);
	return next - now;
}

/* vc_jump_devs, then settle: the time moved, 0 if nothing moved. */
static inline uint64_t vc_step_devs(struct roxe_device *const *devs, unsigned n)
{
	uint64_t d = vc_jump_devs(devs, n);

	return d && !vc_settle_devs(devs, n) ? d : 0;
}

static inline uint64_t vc_step(struct pair *p)
{
	return vc_step_devs(VC_PAIR(p), 2);
}

/*
 * poll_n on the virtual clock: n completions from cq, a CQ of one of the
 * n_devs devices. Whenever they are settled without them, the clock moves
 * to the next deadline, at most max_steps times (*steps counts them;
 * NULL: none allowed). Returns the completions got.
 */
static inline int vc_poll_devs(struct roxe_device *const *devs, unsigned n_devs,
			       struct roxe_cq *cq, struct ibv_wc *wc, int n,
			       unsigned max_steps, unsigned *steps)
{
	unsigned dummy = 0;
	int got = 0;

	if (!steps)
		steps = &dummy;
	for (;;) {
		int r = roxe_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (got >= n)
			return got;
		if (r)
			continue;
		if (vc_settle_devs(devs, n_devs))
			return got;
		r = roxe_poll_cq(cq, n - got, wc + got);	/* what settling brought */
		if (r < 0)
			return r;
		got += r;
		if (got >= n || r)
			continue;
		if (*steps >= max_steps || !vc_step_devs(devs, n_devs))
			return got;
		(*steps)++;
	}
}

static inline int vc_poll(struct pair *p, struct roxe_cq *cq, struct ibv_wc *wc, int n,
			  unsigned max_steps, unsigned *steps)
{
	return vc_poll_devs(VC_PAIR(p), 2, cq, wc, n, max_steps, steps);
}

/* Until cond holds, looked at once the pair is settled; whenever it does
 * not, the clock moves to the next deadline, at most max_steps times
 * (*steps counts them). True once it holds. */
#define vc_wait(p, cond, max_steps, steps) ({					\
	bool vw_ok_ = false;							\
										\
	while (!vc_settle(p) && !(vw_ok_ = (cond)) &&				\
	       *(steps) < (max_steps) && vc_step(p))				\
		(*(steps))++;							\
	vw_ok_;									\
})

#endif /* ROXE_TEST_VCLOCK_H */
