/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Waking an engine (wake.c): its eventfd, written by any thread that gives
 * it work (a doorbell, a handed-off frame, the virtual clock), read by the
 * engine as it sleeps.
 */
#ifndef ROXE_TRANSPORT_WAKE_H
#define ROXE_TRANSPORT_WAKE_H

#include "transport/transport.h"

void roxe_engine_kick(struct roxe_engine *e);
/* A failed write or read of the eventfd: counted in the engine's
 * wakeup_errors and kept for roxe_device_last_error(). */
void roxe_engine_fault(struct roxe_engine *e, int err);

#endif /* ROXE_TRANSPORT_WAKE_H */
