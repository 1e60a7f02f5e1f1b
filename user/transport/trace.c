// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Frame tracing (roxe_device_attr.trace): one line per frame sent and
 * received, handed to the device's callback as it happens, stamped with
 * CLOCK_MONOTONIC to the microsecond (comparable between processes: both
 * ends of a ping-pong). With trace_recorder: the same lines kept in memory
 * (the last TRACE_RING per engine) and handed over when the engine stops:
 * a flight recorder that barely changes the timing it records. The
 * library prints nothing itself (the tools print, for ROXE_TRACE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "transport/transport.h"
#include "transport/trace.h"

#define TRACE_RING	512
#define TRACE_LINE	128
static __thread char (*trace_ring)[TRACE_LINE];
static __thread unsigned trace_next;

void roxe_trace_frame(const struct roxe_engine *e, const char *dir, const uint8_t *f,
		      uint32_t len)
{
	char line[TRACE_LINE];
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	int v = roxe_parse(f, f + len, len, &pkt), n;
	struct timespec ts;
	uint64_t us;
	unsigned long long sec, usec;	/* a line's time */

	/* roxe_now_ns()'s clock: the engine calls trace.c, never the reverse */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
	sec = us / 1000000 % 1000;
	usec = us % 1000000;

	if (v != ROXE_PKT_OK) {
		n = snprintf(line, sizeof(line), "%llu.%06llu roxe[%u.%u] %s %u bytes: %s", sec, usec,
			     e->dev->gid[15], e->id, dir, len, roxe_verdict_name(v));
	} else {
		roxe_frame_hdr_get(f, &pkt, &h);
		n = snprintf(line, sizeof(line), "%llu.%06llu roxe[%u.%u] %s %-32s qp %#x psn %#x%s len %u",
			     sec, usec, e->dev->gid[15], e->id, dir, roxe_opcode_name(h.opcode), h.dqpn, h.psn,
			     h.ackreq ? " A" : "", pkt.payload_len);
		if ((pkt.flags & ROXE_HDR_AETH) && n > 0 && n < TRACE_LINE)
			snprintf(line + n, sizeof(line) - (size_t)n, " syn %#x msn %u",
				 h.syndrome, h.msn);
	}
	if (!e->dev->trace_recorder) {
		e->dev->trace(e->dev->trace_arg, line);
		return;
	}
	if (!trace_ring && !(trace_ring = calloc(TRACE_RING, TRACE_LINE)))
		return;
	memcpy(trace_ring[trace_next++ % TRACE_RING], line, TRACE_LINE);
}

void roxe_trace_dump(const struct roxe_engine *e)
{
	unsigned n = trace_next < TRACE_RING ? trace_next : TRACE_RING;
	char head[TRACE_LINE];

	if (!trace_ring)
		return;
	snprintf(head, sizeof(head), "roxe[%u.%u] last %u frames:", e->dev->gid[15], e->id, n);
	e->dev->trace(e->dev->trace_arg, head);
	for (unsigned i = trace_next - n; i != trace_next; i++)
		e->dev->trace(e->dev->trace_arg, trace_ring[i % TRACE_RING]);
	free(trace_ring);
	trace_ring = NULL;
}
