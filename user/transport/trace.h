/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Frame tracing (trace.c): what the engine hands the device's trace
 * callback (roxe_device_attr.trace).
 */
#ifndef ROXE_TRANSPORT_TRACE_H
#define ROXE_TRANSPORT_TRACE_H

#include <stdint.h>
#include "transport/transport.h"

void roxe_trace_frame(const struct roxe_engine *e, const char *dir, const uint8_t *f,
		      uint32_t len);
void roxe_trace_dump(const struct roxe_engine *e);

#endif /* ROXE_TRANSPORT_TRACE_H */
