// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The loop backend: an in-memory wire between two ports of one process,
 * each usually driven by its own engine thread. Each direction is a
 * single-producer single-consumer ring of frame slots; frames are copied
 * in on send and out on receive (tests want isolation, not speed).
 *
 * Faults (drop, duplicate, reorder, corrupt) are applied on send, drawn
 * from a seeded xorshift generator so that a failing run can be replayed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "roxe/port.h"

struct loop_ring {			/* one direction of the wire */
	uint32_t	head;		/* written by the sender */
	uint8_t		pad0[60];
	uint32_t	tail;		/* written by the receiver */
	uint8_t		pad1[60];
	uint32_t	mask;
	uint32_t	*lens;
	uint8_t		*slots;
};

struct loop_port {
	struct roxe_port	port;
	struct roxe_loop_wire	*wire;
	int			end;
	struct loop_ring	*out, *in;
	int			peer_efd;	/* the receiver's wait_fd */
	/* Buffers lent to the engine, for tx and rx alike: a free stack. */
	uint8_t			*pool;
	uint32_t		*free;
	unsigned		nfree, nbufs;
	/* Fault injection on frames this end sends. */
	struct roxe_loop_faults	faults;
	uint64_t		rng;
	uint8_t			*held;		/* a frame held back to reorder */
	uint32_t		held_len;
	unsigned		held_for;	/* frames still to pass it */
};

struct roxe_loop_wire {
	uint32_t		frame_size;
	struct loop_ring	ring[2];	/* ring[i]: frames sent by end i */
	struct loop_port	*ports[2];
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static bool chance(struct loop_port *lp, uint32_t ppm)
{
	return ppm && rng_next(&lp->rng) % 1000000 < ppm;
}

static struct loop_port *lp_of(struct roxe_port *p)
{
	return (struct loop_port *)p;
}

static void ring_put(struct loop_port *lp, const uint8_t *data, uint32_t len)
{
	struct loop_ring *r = lp->out;
	uint32_t head = r->head;
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (head - tail > r->mask) {	/* full: the wire drops it */
		lp->port.stats.tx_dropped++;
		return;
	}
	memcpy(r->slots + (size_t)(head & r->mask) * lp->port.frame_size, data, len);
	r->lens[head & r->mask] = len;
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	lp->port.stats.tx_frames++;
	lp->port.stats.tx_bytes += len;
}

/* One frame onto the wire, through the fault model. */
static void send_one(struct loop_port *lp, uint8_t *data, uint32_t len)
{
	const struct roxe_loop_faults *f = &lp->faults;

	if (chance(lp, f->drop_ppm))
		return;
	if (chance(lp, f->corrupt_ppm) && len) {
		uint64_t bit = rng_next(&lp->rng) % ((uint64_t)len * 8);

		data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	if (!lp->held_len && chance(lp, f->reorder_ppm)) {
		memcpy(lp->held, data, len);
		lp->held_len = len;
		lp->held_for = 1 + rng_next(&lp->rng) % 3;
		return;
	}
	ring_put(lp, data, len);
	if (chance(lp, f->dup_ppm))
		ring_put(lp, data, len);
	if (lp->held_len && --lp->held_for == 0) {
		ring_put(lp, lp->held, lp->held_len);
		lp->held_len = 0;
	}
}

static uint8_t *pool_buf(struct loop_port *lp, uint32_t idx)
{
	return lp->pool + (size_t)idx * lp->port.frame_size;
}

static unsigned pool_take(struct loop_port *lp, struct roxe_buf *bufs, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && lp->nfree; i++) {
		uint32_t idx = lp->free[--lp->nfree];

		bufs[i].data = pool_buf(lp, idx);
		bufs[i].cap = lp->port.frame_size;
		bufs[i].len = 0;
		bufs[i].priv = idx;
		bufs[i].tx.bth_off = 0;
	}
	return i;
}

static void pool_give(struct loop_port *lp, const struct roxe_buf *bufs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		lp->free[lp->nfree++] = (uint32_t)bufs[i].priv;
}

static unsigned loop_rx_burst(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	struct loop_port *lp = lp_of(p);
	struct loop_ring *r = lp->in;
	uint32_t tail = r->tail;
	uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	unsigned got;

	if (head == tail) {
		/* Drain the wakeup before looking again, so a frame sent after
		 * the look always leaves the eventfd readable. */
		uint64_t v;

		if (read(p->wait_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			p->stats.rx_dropped++;
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	}
	if (n > head - tail)
		n = head - tail;
	got = pool_take(lp, bufs, n);
	for (unsigned i = 0; i < got; i++, tail++) {
		uint32_t len = r->lens[tail & r->mask];

		memcpy(bufs[i].data, r->slots + (size_t)(tail & r->mask) * p->frame_size, len);
		bufs[i].len = len;
		p->stats.rx_frames++;
		p->stats.rx_bytes += len;
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	return got;
}

static void loop_rx_release(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n)
{
	pool_give(lp_of(p), bufs, n);
}

static unsigned loop_tx_alloc(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	return pool_take(lp_of(p), bufs, n);
}

static void loop_tx_submit(struct roxe_port *p, struct roxe_buf *bufs, unsigned n)
{
	struct loop_port *lp = lp_of(p);

	for (unsigned i = 0; i < n; i++)
		send_one(lp, bufs[i].data, bufs[i].len);
	pool_give(lp, bufs, n);
}

static void loop_tx_flush(struct roxe_port *p)
{
	struct loop_port *lp = lp_of(p);
	uint64_t one = 1;

	/* A reordered frame never waits for traffic that may not come. */
	if (lp->held_len) {
		ring_put(lp, lp->held, lp->held_len);
		lp->held_len = 0;
	}
	if (write(lp->peer_efd, &one, sizeof(one)) == sizeof(one))
		p->stats.tx_kicks++;
}

static void loop_destroy(struct roxe_port *p)
{
	(void)p;	/* the wire owns its ports */
}

static const struct roxe_port_ops loop_ops = {
	.name		= "loop",
	.rx_burst	= loop_rx_burst,
	.rx_release	= loop_rx_release,
	.tx_alloc	= loop_tx_alloc,
	.tx_submit	= loop_tx_submit,
	.tx_free	= loop_rx_release,
	.tx_flush	= loop_tx_flush,
	.destroy	= loop_destroy,
};

static void port_free(struct loop_port *lp)
{
	if (!lp)
		return;
	if (lp->port.wait_fd >= 0)
		close(lp->port.wait_fd);
	free(lp->pool);
	free(lp->free);
	free(lp->held);
	free(lp);
}

void roxe_loop_wire_free(struct roxe_loop_wire *w)
{
	if (!w)
		return;
	for (int i = 0; i < 2; i++) {
		port_free(w->ports[i]);
		free(w->ring[i].lens);
		free(w->ring[i].slots);
	}
	free(w);
}

struct roxe_loop_wire *roxe_loop_wire_new(uint32_t frame_size, unsigned depth)
{
	struct roxe_loop_wire *w;
	unsigned slots = 1;

	if (!frame_size || !depth || depth > (1u << 20))
		return NULL;
	while (slots < depth)
		slots <<= 1;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->frame_size = frame_size;
	for (int i = 0; i < 2; i++) {
		w->ring[i].mask = slots - 1;
		w->ring[i].lens = calloc(slots, sizeof(uint32_t));
		w->ring[i].slots = malloc((size_t)slots * frame_size);
		if (!w->ring[i].lens || !w->ring[i].slots)
			goto fail;
	}
	for (int i = 0; i < 2; i++) {
		struct loop_port *lp = calloc(1, sizeof(*lp));

		if (!lp)
			goto fail;
		w->ports[i] = lp;
		lp->port.ops = &loop_ops;
		lp->port.frame_size = frame_size;
		lp->port.wait_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		lp->port.rx_frames = slots;	/* the wire's ring towards it */
		lp->wire = w;
		lp->end = i;
		lp->out = &w->ring[i];
		lp->in = &w->ring[!i];
		/* Enough buffers for a full ring in flight both ways, plus bursts. */
		lp->nbufs = 2 * slots + 256;
		lp->pool = malloc((size_t)lp->nbufs * frame_size);
		lp->free = malloc(lp->nbufs * sizeof(uint32_t));
		lp->held = malloc(frame_size);
		lp->rng = 0x9e3779b97f4a7c15ull + (uint64_t)i;
		if (lp->port.wait_fd < 0 || !lp->pool || !lp->free || !lp->held)
			goto fail;
		for (unsigned b = 0; b < lp->nbufs; b++)
			lp->free[lp->nfree++] = lp->nbufs - 1 - b;
	}
	w->ports[0]->peer_efd = w->ports[1]->port.wait_fd;
	w->ports[1]->peer_efd = w->ports[0]->port.wait_fd;
	return w;
fail:
	roxe_loop_wire_free(w);
	return NULL;
}

struct roxe_port *roxe_loop_port(struct roxe_loop_wire *w, int end)
{
	return end == 0 || end == 1 ? &w->ports[end]->port : NULL;
}

void roxe_loop_set_faults(struct roxe_loop_wire *w, int from, const struct roxe_loop_faults *f)
{
	struct loop_port *lp = w->ports[from & 1];

	lp->faults = *f;
	if (f->seed)
		lp->rng = f->seed;
}
