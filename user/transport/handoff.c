// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The cross-engine hand-off: how a frame reaches an engine other than the
 * one (or the port) it came from. Two users, one ring per engine:
 *
 *   - loopback (loopback.c): a frame this host built for one of its own
 *     addresses goes to the engine owning its destination QP, of this or
 *     another device of the process (ROXE_HO_CHECK: rx_frame's full checks,
 *     as a frame from the wire, ICRC included, and the QPN of the QP that
 *     sent it, which the wire cannot tell);
 *   - multicast (mcast.c): the engine that received a group datagram (or
 *     sent one: the host's local copy) hands one copy to each other engine
 *     with an attached QP (ROXE_HO_VERIFIED: its ICRC was checked, or made,
 *     by the handing engine; the copy goes to the receiver's attached QPs
 *     only and is not handed on).
 *
 * Each engine's ring is a bounded multi-producer, single-consumer queue of
 * frame copies (Vyukov's bounded queue: each slot's sequence number says
 * whose turn it is). Producers (any engine of any device, or a test's
 * thread) never wait and take no lock: a full ring drops the frame and
 * counts it, as a full wire would (RC retransmits; UD is unreliable), so
 * two engines handing to each other cannot deadlock. The consumer is woken
 * like a doorbell and drains the ring once per turn.
 *
 * Shares: one sending QP may have at most ROXE_HANDOFF_QP_SLOTS (512: a
 * whole send window) of the ring's 1024 frames queued at once, the frames
 * no QP sent (multicast copies) ROXE_HANDOFF_MCAST_SLOTS (256) together,
 * so one that floods (a tenant looping frames to its own QP on another
 * engine, a peer's multicast stream) cannot keep the ring full for the
 * others: one flooding QP leaves them 512 slots, with the multicast copies
 * 256 (loopback_test: a_flooding_sender_leaves_room_for_others). The ring
 * counts each sender's frames in an atomic by QPN (one more for the frames
 * no QP sent), up as a producer claims a slot, down as the consumer is
 * done with it, so nothing dereferences a QP that may be gone. QPs of two
 * devices with one number share a count.
 *
 * Drops: a producer is usually another engine, and the engine stats have a
 * single writer (their owner, plain stores; readers, roxectl in another
 * process too, sum them). So a producer counts a drop in the ring's own
 * atomic counter, and the owning engine, on its next turn, adds what is new
 * to its stats' loopback_drop (the hand-off drops, whatever the user). A
 * producer that dropped wakes the owner, so the count shows at once even
 * when the ring is not full (a frame too large, a lost race).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "transport/transport.h"
#include "transport/wake.h"
#include "transport/handoff.h"

#define HO_SLOTS	ROXE_HANDOFF_SLOTS
/* A slot holds the largest frame any device makes: 4096 B of IB MTU plus
 * headers, pad and ICRC (the device open refuses ports with less room). */
#define HO_SLOT_BYTES	(4096 + 128)
/* A producer gives up after this many lost races for one slot. */
#define HO_CLAIM_TRIES	64
/* Senders counted: every QPN, then the frames no QP sent. */
#define HO_SENDERS	(ROXE_MAX_QPS + 1)

struct ho_slot {
	_Atomic uint32_t	seq;
	uint32_t		len;
	uint32_t		src_qpn;	/* the sending QP (ROXE_HO_CHECK) */
	uint8_t			kind;		/* enum roxe_handoff_kind */
};

struct roxe_handoff {
	_Atomic uint32_t	head __attribute__((aligned(64)));	/* producers */
	atomic_ulong		dropped;	/* producers: frames not queued */
	uint32_t		tail __attribute__((aligned(64)));	/* the owner only */
	unsigned long		published;	/* the owner: dropped already in its stats */
	struct ho_slot		slot[HO_SLOTS];
	uint8_t			data[HO_SLOTS][HO_SLOT_BYTES];
	atomic_uint		queued[HO_SENDERS];	/* frames each sender has in it */
};

_Static_assert(ROXE_HANDOFF_QP_SLOTS >= ROXE_MAX_INFLIGHT, "a QP's whole window fits its share");
_Static_assert(ROXE_HANDOFF_QP_SLOTS + ROXE_HANDOFF_MCAST_SLOTS < ROXE_HANDOFF_SLOTS,
	       "one flooding QP and the multicast copies leave the others room");

static atomic_uint *queued_of(struct roxe_handoff *r, uint32_t src_qpn)
{
	return &r->queued[src_qpn < ROXE_MAX_QPS ? src_qpn : ROXE_MAX_QPS];
}

/* May src_qpn queue one more frame? Counted if so. */
static bool share_take(struct roxe_handoff *r, uint32_t src_qpn)
{
	atomic_uint *q = queued_of(r, src_qpn);
	unsigned share = src_qpn < ROXE_MAX_QPS ? ROXE_HANDOFF_QP_SLOTS : ROXE_HANDOFF_MCAST_SLOTS;

	if (atomic_fetch_add_explicit(q, 1, memory_order_relaxed) < share)
		return true;
	atomic_fetch_sub_explicit(q, 1, memory_order_relaxed);
	return false;
}

static void share_put(struct roxe_handoff *r, uint32_t src_qpn)
{
	atomic_fetch_sub_explicit(queued_of(r, src_qpn), 1, memory_order_relaxed);
}

int roxe_handoff_init(struct roxe_engine *e)
{
	/* calloc'd (mapped lazily): only slots ever used cost pages. */
	struct roxe_handoff *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < HO_SLOTS; i++)
		atomic_init(&r->slot[i].seq, i);
	e->handoff = r;
	return 0;
}

void roxe_handoff_fini(struct roxe_engine *e)
{
	free(e->handoff);
	e->handoff = NULL;
}

/* As a doorbell. Pairs with sleep_until_work, which sets `sleeping` and
 * then looks at the ring (roxe_handoff_pending): the fence orders our
 * store (slot or drop count) before the load of `sleeping`, so either the
 * engine sees the work or we see it sleeping and wake it. */
static void wake(struct roxe_engine *e)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&e->sleeping))
		roxe_engine_kick(e);
}

bool roxe_handoff_push(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		       enum roxe_handoff_kind kind, uint32_t src_qpn)
{
	struct roxe_handoff *r = e->handoff;
	uint32_t pos;

	if (!r)
		return false;	/* not an opened device's engine: nothing to count in */
	if (len > HO_SLOT_BYTES || !share_take(r, src_qpn))
		goto drop;
	pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (int tries = 0; ; tries++) {
		struct ho_slot *s = &r->slot[pos % HO_SLOTS];
		int32_t dif = (int32_t)(atomic_load_explicit(&s->seq, memory_order_acquire) - pos);

		if (dif == 0 && atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
								      memory_order_relaxed,
								      memory_order_relaxed)) {
			memcpy(r->data[pos % HO_SLOTS], f, len);
			s->len = len;
			s->kind = (uint8_t)kind;
			s->src_qpn = src_qpn;
			atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
			wake(e);
			return true;
		}
		if (dif < 0 || tries == HO_CLAIM_TRIES) {	/* full, or too contended */
			share_put(r, src_qpn);
			goto drop;
		}
		if (dif > 0)
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	}
drop:
	atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
	wake(e);
	return false;
}

bool roxe_handoff_pending(const struct roxe_engine *e)
{
	struct roxe_handoff *r = e->handoff;

	if (!r)
		return false;
	return atomic_load(&r->slot[r->tail % HO_SLOTS].seq) == r->tail + 1 ||
	       atomic_load_explicit(&r->dropped, memory_order_relaxed) != r->published;
}

unsigned roxe_handoff_rx(struct roxe_engine *e, unsigned budget,
			 void (*rx)(struct roxe_engine *e, const struct roxe_buf *b,
				    enum roxe_handoff_kind kind, uint32_t src_qpn))
{
	struct roxe_handoff *r = e->handoff;
	unsigned long dropped;
	unsigned n = 0;

	if (!r)
		return 0;
	for (; n < budget; n++) {
		struct ho_slot *s = &r->slot[r->tail % HO_SLOTS];
		struct roxe_buf b;
		uint32_t src;

		if (atomic_load_explicit(&s->seq, memory_order_acquire) != r->tail + 1)
			break;
		b.data = r->data[r->tail % HO_SLOTS];
		b.len = s->len <= HO_SLOT_BYTES ? s->len : 0;
		b.cap = HO_SLOT_BYTES;
		b.priv = 0;
		src = s->src_qpn;	/* the slot is the producers' once released */
		rx(e, &b, (enum roxe_handoff_kind)s->kind, src);
		atomic_store_explicit(&s->seq, r->tail + HO_SLOTS, memory_order_release);
		r->tail++;
		share_put(r, src);
	}
	dropped = atomic_load_explicit(&r->dropped, memory_order_relaxed);
	if (dropped != r->published) {
		e->stats->loopback_drop += dropped - r->published;
		r->published = dropped;
	}
	return n;
}
