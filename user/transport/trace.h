/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Frame tracing (trace.c): ROXE_TRACE's level and what the engine prints
 * at it.
 */
#ifndef ROXE_TRANSPORT_TRACE_H
#define ROXE_TRANSPORT_TRACE_H

#include <stdint.h>
#include "transport/transport.h"

extern int roxe_trace;		/* -1 until an engine starts, then ROXE_TRACE's level */
void roxe_trace_frame(const struct roxe_engine *e, const char *dir, const uint8_t *f,
		      uint32_t len);
void roxe_trace_dump(const struct roxe_engine *e);

#endif /* ROXE_TRANSPORT_TRACE_H */
