/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A link of a set rate behind a FIFO of frames: the switch port faultwire
 * emulates (--rate). Plain arithmetic on the caller's clock (ns), so a
 * test can drive it. A frame's last bit leaves tx_ns(len) after its first;
 * its first leaves when the link is done with the frame before it, or when
 * it arrives at an idle link. Departures are computed, not observed: a
 * caller that looks late gets every frame done by then at once, and the
 * link loses no time to its caller's wake-up latency.
 */
#ifndef ROXE_TOOLS_LINKQ_H
#define ROXE_TOOLS_LINKQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct linkq {
	uint8_t		*ring;		/* frames: a linkq_hdr, then the bytes */
	size_t		cap, head, tail;
	size_t		backlog;	/* bytes of frames queued */
	uint64_t	rate;		/* bits/s */
	uint64_t	busy_until;	/* ns: the link's last bit so far */
	uint64_t	head_done;	/* ns: when the head frame's last bit leaves; 0: not begun */
};

/* What the ring holds before each frame. */
struct linkq_hdr {
	uint64_t	arrived;	/* ns */
	uint32_t	len;
};

/* A queue of cap bytes (frames plus a linkq_hdr each) before a link of rate
 * bits/s (> 0). 0, or -ENOMEM. */
int linkq_init(struct linkq *q, size_t cap, uint64_t rate);
void linkq_free(struct linkq *q);
/* Nanoseconds a frame of len bytes takes on the link. */
uint64_t linkq_tx_ns(const struct linkq *q, size_t len);
/* A frame of len bytes arrives at now: queued, or false without room. */
bool linkq_push(struct linkq *q, const uint8_t *f, uint32_t len, uint64_t now);
/* The head frame, if its last bit has left by now: copied into f (at
 * least its length, up to max bytes: longer ones were never pushed by a
 * caller that keeps its frames below max) and its length returned; else 0,
 * with *next the time it will have (0: the queue is empty). */
uint32_t linkq_pop(struct linkq *q, uint64_t now, uint8_t *f, size_t max, uint64_t *next);

#endif /* ROXE_TOOLS_LINKQ_H */
