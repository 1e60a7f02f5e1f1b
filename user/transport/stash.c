// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The responder's out-of-sequence stash: RC request frames that arrived
 * ahead of a gap, kept until the gap is filled and then executed in PSN
 * order, as if they had come in order.
 *
 * IBA's responder drops every packet past a gap (after one sequence NAK),
 * so the requester must send them all again: go-back-N resends what was
 * in flight behind each loss. A stash changes nothing a peer can see but
 * an ACK that covers more: when the missing PSN comes, the responder runs
 * it and then whatever the stash holds from the next PSN on, and
 * acknowledges all of it. A roxe requester that sent only the missing PSN
 * (completer.c: the selective repair) then goes on from the ACK; any other
 * requester (kernel rxe, hardware) goes back as always, and its resends of
 * what the stash already ran are duplicates, acknowledged again (with
 * their own PSN, or the run's if its ACK went). Once such a resend shows
 * a QP's requester goes back, the QP's runs owe no ACK past the packet
 * that filled the gap: an ACK of a message's last PSN ahead of the
 * requester's resend of it can strand kernel rxe 6.12 (responder.c:
 * rc_duplicate_ack).
 *
 * Nothing is executed out of order: a stashed frame is a copy of what came
 * (ICRC and addresses checked), held aside, and every check of the
 * responder (opcode sequence, lengths, R_Key, receive WQE) is made when it
 * runs, in order. So memory is written in PSN order, as without the stash
 * (an application polling a WRITE's last byte sees it last).
 *
 * Each engine has one pool of ROXE_STASH_SLOTS frames, allocated on first
 * use, shared by its QPs: a frame is kept only while a slot is free (or
 * another QP gives one up, below) and within ROXE_STASH_SPAN PSNs of the
 * expected one (a second copy of a PSN held replaces the first); what is
 * not kept is dropped as before (the requester resends it; out_of_sequence
 * counts it, as every frame past a gap). Like TCP's out-of-order queue,
 * this widens what a host able to forge the peer's address must guess from
 * one PSN to the span; the newest copy winning replaces a frame it planted
 * ahead only if the peer's own copy comes before the gap is filled (else
 * the planted one runs, as one planted at the expected PSN would without
 * the stash). Looped frames cannot be planted: the hand-off names the
 * sending QP (loopback.c). Slots are found by (QP, PSN) through a small
 * hash of chains. A QP's slots go when it runs them, when it resets,
 * enters ERR or is destroyed, and, when the pool is full, if they have
 * fallen behind its expected PSN.
 *
 * The pool is shared fairly (max-min): while it has room any QP takes a
 * slot, and once it is full a QP takes one from the QP holding most if
 * that holds at least two more, whose frame furthest ahead (the last a
 * go-back would reach) gives way. A QP alone may hold all 512 (a roxe
 * requester's whole window, ROXE_MAX_INFLIGHT); of k QPs holding frames,
 * each keeps at least 512 / k (all within one of each other): 256 of two,
 * 170 of three, 64 of eight. So a peer that fills the pool with frames
 * ahead of a gap it never fills holds no more than its share, and the
 * engine's other QPs still stash theirs
 * (stash_test: a_flooding_qp_leaves_the_others_their_share).
 *
 * roxe_device_attr.no_ooo_stash turns it off for a device (the responder
 * then behaves as rxe's; roxe(7)).
 */
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/stash.h"
#include "wire/psn.h"

#define STASH_BUCKETS		(2 * ROXE_STASH_SLOTS)
#define STASH_NONE		0xffff

struct stash_slot {
	struct roxe_qp		*qp;		/* NULL: free */
	uint32_t		psn;
	uint16_t		next;		/* in its bucket's chain, or the free list */
	struct roxe_pkt		pkt;
};

struct roxe_stash {
	uint16_t		bucket[STASH_BUCKETS];
	uint16_t		free_head;
	struct stash_slot	slot[ROXE_STASH_SLOTS];
	uint8_t			data[ROXE_STASH_SLOTS][ROXE_STASH_FRAME_MAX];
};

_Static_assert(ROXE_STASH_SLOTS < STASH_NONE, "slot numbers must fit a uint16_t");
_Static_assert(ROXE_STASH_SPAN >= ROXE_MAX_INFLIGHT, "the span covers a roxe requester's window");

static struct roxe_stash *stash_get(struct roxe_engine *e)
{
	struct roxe_stash *s = e->stash;

	if (s || !e->dev->ooo_stash)
		return s;
	/* calloc'd: pages are touched only as slots are used */
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (unsigned i = 0; i < STASH_BUCKETS; i++)
		s->bucket[i] = STASH_NONE;
	for (unsigned i = 0; i < ROXE_STASH_SLOTS; i++)
		s->slot[i].next = i + 1 < ROXE_STASH_SLOTS ? (uint16_t)(i + 1) : STASH_NONE;
	s->free_head = 0;
	e->stash = s;
	return s;
}

void roxe_stash_fini(struct roxe_engine *e)
{
	free(e->stash);
	e->stash = NULL;
}

static unsigned bucket_of(const struct roxe_qp *qp, uint32_t psn)
{
	uint64_t h = (qp->qpn * 0x9e3779b1u) ^ (psn * 0x85ebca6bu);

	return (unsigned)((h ^ (h >> 16)) % STASH_BUCKETS);
}

/* Take slot i off its chain and its QP; it is then neither found nor
 * free. */
static void slot_unlink(struct roxe_stash *s, unsigned i)
{
	struct stash_slot *sl = &s->slot[i];
	uint16_t *pp = &s->bucket[bucket_of(sl->qp, sl->psn)];

	while (*pp != i)
		pp = &s->slot[*pp].next;
	*pp = sl->next;
	sl->qp->resp.stashed--;
	sl->qp = NULL;
}

static void slot_put_free(struct roxe_stash *s, unsigned i)
{
	s->slot[i].next = s->free_head;
	s->free_head = (uint16_t)i;
}

static void slot_free(struct roxe_stash *s, unsigned i)
{
	slot_unlink(s, i);
	slot_put_free(s, i);
}

static int slot_find(const struct roxe_stash *s, const struct roxe_qp *qp, uint32_t psn)
{
	uint16_t i = s->bucket[bucket_of(qp, psn)];

	for (; i != STASH_NONE; i = s->slot[i].next)
		if (s->slot[i].qp == qp && s->slot[i].psn == psn)
			return i;
	return -1;
}

/* The pool is full: free the slots that fell behind their QP's expected
 * PSN (never to run: a go-back filled past them). If none did, and the QP
 * holding most holds at least two more than qp, its frame furthest ahead
 * gives way to qp's (one more would only swap which of the two holds
 * more). */
static void make_room(struct roxe_stash *s, const struct roxe_qp *qp)
{
	int32_t far = 0;
	uint32_t most = 0;
	int victim = -1;

	for (unsigned i = 0; i < ROXE_STASH_SLOTS; i++) {
		struct stash_slot *sl = &s->slot[i];
		int32_t ahead;

		if (!sl->qp)
			continue;
		ahead = roxe_psn_diff(sl->psn, sl->qp->resp.psn);
		if (ahead < 0) {
			slot_free(s, i);
		} else if (sl->qp->resp.stashed > most ||
			   (sl->qp->resp.stashed == most && ahead > far)) {
			most = sl->qp->resp.stashed;
			far = ahead;
			victim = (int)i;
		}
	}
	if (s->free_head == STASH_NONE && victim >= 0 && most >= qp->resp.stashed + 2)
		slot_free(s, (unsigned)victim);
}

bool roxe_stash_put(struct roxe_qp *qp, const uint8_t *frame, const struct roxe_pkt *pkt,
		    uint32_t psn)
{
	int32_t ahead = roxe_psn_diff(psn, qp->resp.psn);
	struct roxe_stash *s;
	struct stash_slot *sl;
	unsigned i, b;

	if (ahead <= 0 || ahead > ROXE_STASH_SPAN || pkt->frame_len > ROXE_STASH_FRAME_MAX)
		return false;
	s = stash_get(qp->eng);
	if (!s)
		return false;
	i = qp->resp.stashed ? (unsigned)slot_find(s, qp, psn) : -1u;
	if (i == -1u) {
		if (s->free_head == STASH_NONE)
			make_room(s, qp);
		if (s->free_head == STASH_NONE)
			return false;
		i = s->free_head;
		sl = &s->slot[i];
		s->free_head = sl->next;
		sl->qp = qp;
		sl->psn = psn;
		b = bucket_of(qp, psn);
		sl->next = s->bucket[b];
		s->bucket[b] = (uint16_t)i;
		qp->resp.stashed++;
	}
	/* A second copy replaces the first: the requester's resend is the
	 * same bytes, and a frame forged ahead by someone posing as the peer
	 * gives way to the peer's own if that comes before the gap fills. */
	memcpy(s->data[i], frame, pkt->frame_len);
	s->slot[i].pkt = *pkt;
	return true;
}

int roxe_stash_take(struct roxe_qp *qp, uint32_t psn, const uint8_t **frame,
		    struct roxe_pkt *pkt)
{
	struct roxe_stash *s = qp->eng->stash;
	int i;

	if (!s || !qp->resp.stashed)
		return -1;
	i = slot_find(s, qp, psn);
	if (i < 0)
		return -1;
	/* Off its chain and its QP, not yet free: whatever the caller's run
	 * of it does (an error that drops the QP's frames, a full pool's
	 * reclaim) leaves it alone until roxe_stash_release(). */
	*pkt = s->slot[i].pkt;
	*frame = s->data[i];
	slot_unlink(s, (unsigned)i);
	return i;
}

void roxe_stash_release(struct roxe_engine *e, int slot)
{
	slot_put_free(e->stash, (unsigned)slot);
}

void roxe_stash_drop(struct roxe_qp *qp)
{
	struct roxe_stash *s = qp->eng->stash;

	if (!s)
		return;
	for (unsigned i = 0; qp->resp.stashed && i < ROXE_STASH_SLOTS; i++)
		if (s->slot[i].qp == qp)
			slot_free(s, i);
}
