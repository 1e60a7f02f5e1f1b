/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine thread (engine.c): starting and stopping it, a turn of a
 * polled device's, the doorbell, roxed's kernel doorbell ring, and the
 * engines' clock. Its state, struct roxe_engine, is in transport.h, which
 * every file of the engine reads; its parts have their own headers:
 * sched.h (ready list, timers, transmit batch), credit.h, handoff.h,
 * loopback.h, stash.h, trace.h. Only what calls into engines from above
 * includes this: verbs/, roxed and tests.
 */
#ifndef ROXE_TRANSPORT_ENGINE_H
#define ROXE_TRANSPORT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "transport/transport.h"

int roxe_engine_start(struct roxe_engine *e);
void roxe_engine_stop(struct roxe_engine *e);
bool roxe_engine_poll(struct roxe_engine *e);	/* polled devices: one turn */
void roxe_engine_doorbell(struct roxe_qp *qp);
void roxe_dev_quiesce(struct roxe_device *dev);
/* Start taking doorbells from roxe.ko's ring for engine e. */
void roxe_engine_set_kdb(struct roxe_engine *e, struct roxe_kabi_db_ring *ring,
			 __u64 *queued);

uint64_t roxe_now_ns(void);

/*
 * The engines' clock is CLOCK_MONOTONIC, or, for tests, a virtual clock:
 * roxe_clock_virtual() switches the process to it before any engine
 * starts. Time then moves only in roxe_clock_advance(), which wakes every
 * engine thread, so a timer fires when the test says and never because the
 * host was slow; an idle engine sleeps with no timeout meanwhile.
 */
void roxe_clock_virtual(uint64_t start_ns);
void roxe_clock_advance(uint64_t ns);
/* For a test on the virtual clock that waits for the engines to settle:
 * has the engine thread parked (asleep, nothing queued)? Is a wakeup
 * pending on its eventfd or port? (Parked across a look at wake_pending
 * with epoch unchanged: it stays asleep until the clock or a frame moves.) */
bool roxe_engine_parked(struct roxe_engine *e);
bool roxe_engine_wake_pending(struct roxe_engine *e);
/* The earliest deadline armed on e's QPs (0: none): e parked, or polled
 * and not turning. */
uint64_t roxe_engine_next_deadline(const struct roxe_engine *e);

#endif /* ROXE_TRANSPORT_ENGINE_H */
