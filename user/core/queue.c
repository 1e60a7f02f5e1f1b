// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Rings for the engine's own objects (embedded QPs, CQs, SRQs): zeroed rxe
 * uAPI queue buffers whose shape the caller keeps (struct roxe_queue_geom).
 */
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

static unsigned log2_up(uint32_t v)
{
	unsigned l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* A zeroed rxe queue buffer of at least `entries` usable slots. */
struct rxe_queue_buf *roxe_queue_buf_alloc(uint32_t entries, uint32_t elem_size,
					   struct roxe_queue_geom *g)
{
	unsigned ls = log2_up(entries + 1), le = log2_up(elem_size);
	struct rxe_queue_buf *b;

	b = aligned_alloc(64, (size_t)roxe_queue_bytes(ls, le));
	if (!b)
		return NULL;
	memset(b, 0, (size_t)roxe_queue_bytes(ls, le));
	b->log2_elem_size = le;
	b->index_mask = (1u << ls) - 1;
	g->mask = (1u << ls) - 1;
	g->log2_elem = le;
	return b;
}
