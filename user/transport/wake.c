// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Waking an engine (wake.h). A failed eventfd write or read has no caller
 * to return to (the engine's own thread, or a thread that rang and goes
 * on), so it is counted and kept, never printed: the library is quiet
 * (selftests/docs/quiet_test.sh).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>
#include "transport/transport.h"
#include "transport/wake.h"

void roxe_engine_fault(struct roxe_engine *e, int err)
{
	__atomic_fetch_add(&e->stats->wakeup_errors, 1, __ATOMIC_RELAXED);
	atomic_store_explicit(&e->dev->last_err, -err, memory_order_relaxed);
}

void roxe_engine_kick(struct roxe_engine *e)
{
	uint64_t one = 1;

	if (write(e->efd, &one, sizeof(one)) < 0)
		roxe_engine_fault(e, errno);
}
