// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD multicast: which QPs are attached to which groups, and delivering a
 * multicast datagram (DQPN 0xFFFFFF) to each of them, as rxe_rcv_mcast_pkt.
 *
 * Membership (verbs/mcast.c) is an immutable set of groups, built here
 * (roxe_mc_set_edit) and published whole; engines read the published set
 * without locks.
 *
 * Receiving: the XDP program steers every frame to a joined group to one
 * engine (ROXE_MCAST_ENGINE's sockets): AF_XDP hands a frame to one socket
 * only. That engine checks the ICRC once, gives each of its own attached
 * QPs a copy (their responders check the Q_Key), and hands one copy to each
 * other engine with an attached QP through that engine's hand-off ring
 * (handoff.c, ROXE_HO_VERIFIED: the receiver does not check the ICRC again
 * and hands it on to no one). A full ring drops the datagram for that
 * engine's QPs (UD is unreliable) and counts it in loopback_drop.
 */
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/mcast.h"
#include "transport/handoff.h"
#include "transport/qp_state.h"
#include "transport/responder.h"
#include "roxe/wire.h"

/* --- the set ------------------------------------------------------------------ */
static struct roxe_mc_set *set_alloc(uint32_t ngrp, uint32_t nattach)
{
	struct roxe_mc_set *s = calloc(1, sizeof(*s) + (size_t)ngrp * sizeof(struct roxe_mc_group) +
				  (size_t)nattach * sizeof(uint32_t));

	if (!s)
		return NULL;
	s->grp = (struct roxe_mc_group *)(s + 1);
	s->qpn = (uint32_t *)(s->grp + ngrp);
	return s;
}

const struct roxe_mc_group *roxe_mc_set_find(const struct roxe_mc_set *s, const uint8_t gid[16])
{
	uint32_t lo = 0, hi = s ? s->ngrp : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(gid, s->grp[mid].gid, 16);

		if (!c)
			return &s->grp[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool roxe_mc_set_has(const struct roxe_mc_set *s, const struct roxe_mc_group *g, uint32_t qpn)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (s->qpn[g->first + i] == qpn)
			return true;
	return false;
}

/* Groups left empty go. */
struct roxe_mc_set *roxe_mc_set_edit(const struct roxe_mc_set *old, const uint8_t *add, const uint8_t *del,
				     bool all, uint32_t qpn)
{
	uint32_t og = old ? old->ngrp : 0, oa = old ? old->nattach : 0, gi = 0, ai = 0;
	struct roxe_mc_set *s = set_alloc(og + 1, oa + 1);
	bool added = !add;

	if (!s)
		return NULL;
	for (uint32_t i = 0; i <= og; i++) {
		const struct roxe_mc_group *g = i < og ? &old->grp[i] : NULL;
		struct roxe_mc_group *n;

		/* The new group goes in before the first greater one. */
		if (!added && (!g || memcmp(add, g->gid, 16) <= 0)) {
			added = true;
			if (!g || memcmp(add, g->gid, 16)) {
				n = &s->grp[gi++];
				memcpy(n->gid, add, 16);
				n->first = ai;
				n->n = 1;
				s->qpn[ai++] = qpn;
			}
		}
		if (!g)
			break;
		n = &s->grp[gi];
		memcpy(n->gid, g->gid, 16);
		n->first = ai;
		for (uint32_t j = 0; j < g->n; j++) {
			uint32_t q = old->qpn[g->first + j];

			if (q == qpn && (all || (del && !memcmp(del, g->gid, 16))))
				continue;
			s->qpn[ai++] = q;
		}
		if (add && !memcmp(add, g->gid, 16))
			s->qpn[ai++] = qpn;
		n->n = ai - n->first;
		if (n->n)
			gi++;
	}
	s->ngrp = gi;
	s->nattach = ai;
	return s;
}

/* --- delivery ---------------------------------------------------------------------- */
/*
 * The frame f (parsed or built: pkt) to multicast group dgid, on engine e:
 * a copy to each of e's QPs attached to the group; with fwd, one copy to
 * each other engine with an attached QP. Its ICRC has been checked (or
 * made here).
 */
static void deliver(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		    const struct roxe_pkt *pkt, const uint8_t dgid[16], bool fwd)
{
	struct roxe_device *dev = e->dev;
	struct roxe_mcast *mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);
	const struct roxe_mc_group *g;
	const struct roxe_mc_set *s;
	uint64_t others = 0;

	if (!mc || !(pkt->flags & ROXE_OPF_REQUEST) || !roxe_gid_is_mcast(dgid))
		return;
	s = atomic_load_explicit(&mc->set, memory_order_acquire);
	g = roxe_mc_set_find(s, dgid);
	if (!g)
		return;
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t qpn = s->qpn[g->first + i];
		struct roxe_qp *qp = qpn < ROXE_MAX_QPS ?
			atomic_load_explicit(&dev->qps[qpn], memory_order_acquire) : NULL;

		if (!qp || qp->type != IBV_QPT_UD || atomic_load(&qp->dying))
			continue;
		if (qp->eng != e) {
			others |= 1ull << qp->eng->id;
			continue;
		}
		if (roxe_dev_counts_rx(dev)) {
			qp->stats->rx_packets++;
			qp->stats->rx_bytes += len;
		}
		if (qp->eng_state != roxe_qp_state(qp))
			roxe_qp_engine_sync(qp);
		roxe_responder(qp, f, pkt);	/* UD: checks the opcode and the Q_Key */
	}
	/* A full ring drops the copy and counts it (handoff.c). */
	for (unsigned id = 0; fwd && others && id < dev->nengines; id++)
		if (others & (1ull << id))
			roxe_handoff_push(&dev->engines[id], f, len, ROXE_HO_VERIFIED,
					  ROXE_LOOP_NO_QPN);
}

/* A group's datagram from the port. As for unicast (engine.c rx_addr_ok),
 * one from an address of this device's is a third host posing as it: the
 * host's own datagrams reach its members through roxe_mcast_loop, never
 * through the port (mcast_test: wire_datagram_from_own_address_dropped). */
void roxe_mcast_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		   const struct roxe_pkt *pkt)
{
	uint8_t sgid[16], dgid[16];

	if (roxe_pkt_gids(f, f + len, pkt, sgid, dgid) || roxe_dev_is_local(e->dev, sgid)) {
		e->stats->rx_drop_addr++;
		return;
	}
	if (roxe_icrc_check(f, pkt) != ROXE_PKT_OK)
		return;
	deliver(e, f, len, pkt, dgid, true);
}

/*
 * roxe_mcast_loop: the local copies of a multicast datagram this host sends.
 * Contract: e is the sending engine, on its own thread; b holds a whole
 * RoCE v2 frame of b->len bytes it has just built and sealed (ICRC made)
 * for the wire, described in b->tx, its layout in pkt (roxe_engine_tx_hdrs):
 * nothing here reads the headers back. Every QP of this device attached to
 * the destination group gets a copy (those of other engines through their
 * hand-off rings) before the call returns; anything not a UD request to a
 * multicast group is ignored. As a frame from a peer, it is delivered to
 * QPs whose Q_Key matches, the sending QP too if attached.
 */
void roxe_mcast_loop(struct roxe_engine *e, const struct roxe_buf *b, const struct roxe_pkt *pkt)
{
	if (!atomic_load_explicit(&e->dev->mcast, memory_order_acquire))
		return;
	if (b->tx.dqpn != ROXE_MCAST_QPN)
		return;
	deliver(e, b->data, b->len, pkt, b->tx.dgid, true);
}

void roxe_mcast_copy_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len)
{
	struct roxe_pkt pkt;
	uint8_t sgid[16], dgid[16];

	/* The engine's private copy, parsed again: nothing else writes it.
	 * Its ICRC was checked (or made) by the engine that handed it. */
	if (roxe_parse(f, f + len, len, &pkt) == ROXE_PKT_OK &&
	    !roxe_pkt_gids(f, f + len, &pkt, sgid, dgid))
		deliver(e, f, len, &pkt, dgid, false);
}
