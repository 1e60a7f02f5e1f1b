// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A link of a set rate behind a FIFO of frames (linkq.h).
 */
#include <errno.h>
#include <stdlib.h>
#include "linkq.h"

int linkq_init(struct linkq *q, size_t cap, uint64_t rate)
{
	*q = (struct linkq){ .cap = cap, .rate = rate ? rate : 1 };
	q->ring = malloc(cap);
	return q->ring ? 0 : -ENOMEM;
}

void linkq_free(struct linkq *q)
{
	free(q->ring);
	q->ring = NULL;
}

uint64_t linkq_tx_ns(const struct linkq *q, size_t len)
{
	return (uint64_t)len * 8 * 1000000000ull / q->rate;
}

/* n bytes at the ring's position at, wrapping */
static void ring_put(struct linkq *q, size_t at, const void *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		q->ring[(at + i) % q->cap] = ((const uint8_t *)src)[i];
}

static void ring_get(const struct linkq *q, size_t at, void *dst, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)dst)[i] = q->ring[(at + i) % q->cap];
}

bool linkq_push(struct linkq *q, const uint8_t *f, uint32_t len, uint64_t now)
{
	struct linkq_hdr h = { .arrived = now, .len = len };
	size_t need = sizeof(h) + (size_t)len;

	if (q->cap - (q->tail - q->head) < need)
		return false;
	if (q->tail == q->head)
		q->head = q->tail = 0;
	ring_put(q, q->tail, &h, sizeof(h));
	ring_put(q, q->tail + sizeof(h), f, len);
	q->tail += need;
	q->backlog += len;
	return true;
}

uint32_t linkq_pop(struct linkq *q, uint64_t now, uint8_t *f, size_t max, uint64_t *next)
{
	struct linkq_hdr h;

	*next = 0;
	if (q->tail == q->head)
		return 0;
	ring_get(q, q->head, &h, sizeof(h));
	if (!q->head_done) {
		/* its first bit: when the link is done with the frame before
		 * it, or when it arrived at an idle link; not when the caller
		 * happens to look */
		uint64_t start = q->busy_until > h.arrived ? q->busy_until : h.arrived;

		q->busy_until = start + linkq_tx_ns(q, h.len);
		q->head_done = q->busy_until ? q->busy_until : 1;
	}
	if (q->head_done > now) {
		*next = q->head_done;
		return 0;
	}
	ring_get(q, q->head + sizeof(h), f, h.len < max ? h.len : max);
	q->head += sizeof(h) + h.len;
	q->backlog -= h.len;
	q->head_done = 0;
	return h.len;
}
