// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD multicast: which QPs are attached to which groups, and delivering a
 * multicast datagram (DQPN 0xFFFFFF) to each of them, as rxe_rcv_mcast_pkt.
 *
 * Membership: attach and detach (any thread, under mc->lock) build a new,
 * immutable set of groups and publish it; engines read the published set
 * without locks; the old one is freed after roxe_dev_quiesce, as the
 * local-address set is. The first QP attached to a group joins the
 * interface to the group's Ethernet address (SIOCADDMULTI, as rxe's
 * dev_mc_add) and names the group in the XDP program's roxe_mcast_grps;
 * the last one detached undoes both.
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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "transport/transport.h"
#include "roxe/xdp.h"
#include "roxe/wire.h"

struct mc_group {
	uint8_t		gid[16];
	uint32_t	first, n;		/* its QPNs: qpn[first .. first+n) */
};

/* Immutable once published: groups sorted by GID. */
struct mc_set {
	uint32_t	ngrp, nattach;
	struct mc_group	*grp;
	uint32_t	*qpn;
};

struct roxe_mcast {
	pthread_mutex_t	lock;			/* attach, detach */
	_Atomic(struct mc_set *) set;
	int		sock;			/* SIOCADDMULTI; -1: not a real interface */
};

/* --- the set ------------------------------------------------------------------ */
static struct mc_set *set_alloc(uint32_t ngrp, uint32_t nattach)
{
	struct mc_set *s = calloc(1, sizeof(*s) + (size_t)ngrp * sizeof(struct mc_group) +
				  (size_t)nattach * sizeof(uint32_t));

	if (!s)
		return NULL;
	s->grp = (struct mc_group *)(s + 1);
	s->qpn = (uint32_t *)(s->grp + ngrp);
	return s;
}

static const struct mc_group *set_find(const struct mc_set *s, const uint8_t gid[16])
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

static bool group_has(const struct mc_set *s, const struct mc_group *g, uint32_t qpn)
{
	for (uint32_t i = 0; i < g->n; i++)
		if (s->qpn[g->first + i] == qpn)
			return true;
	return false;
}

/*
 * old with qpn added to group add (if add), and qpn removed from group del
 * (if del) or from every group (if all); groups left empty go.
 */
static struct mc_set *set_edit(const struct mc_set *old, const uint8_t *add, const uint8_t *del,
			       bool all, uint32_t qpn)
{
	uint32_t og = old ? old->ngrp : 0, oa = old ? old->nattach : 0, gi = 0, ai = 0;
	struct mc_set *s = set_alloc(og + 1, oa + 1);
	bool added = !add;

	if (!s)
		return NULL;
	for (uint32_t i = 0; i <= og; i++) {
		const struct mc_group *g = i < og ? &old->grp[i] : NULL;
		struct mc_group *n;

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

/* --- the interface's side: Ethernet filter and the XDP program --------------------- */
static int iface_join(struct roxe_device *dev, struct roxe_mcast *mc, const uint8_t gid[16],
		      bool join)
{
	struct ifreq ifr = { 0 };
	int err = 0;

	if (mc->sock >= 0) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev->ifname);
		ifr.ifr_hwaddr.sa_family = AF_UNSPEC;
		roxe_gid_mcast_mac(gid, (uint8_t *)ifr.ifr_hwaddr.sa_data);
		if (ioctl(mc->sock, join ? SIOCADDMULTI : SIOCDELMULTI, &ifr) < 0 && join)
			return -errno;
	}
	if (dev->xdp) {
		err = roxe_xdp_set_mcast(dev->xdp, gid, join ? ROXE_MCAST_ENGINE : -1);
		if (err && join && mc->sock >= 0)
			ioctl(mc->sock, SIOCDELMULTI, &ifr);
	}
	return join ? err : 0;
}

/* The device's multicast state, made on first use. */
static struct roxe_mcast *mcast_get(struct roxe_device *dev)
{
	struct roxe_mcast *mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);

	if (mc)
		return mc;
	pthread_mutex_lock(&dev->lock);
	mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);
	if (!mc) {
		mc = calloc(1, sizeof(*mc));
		if (mc) {
			pthread_mutex_init(&mc->lock, NULL);
			mc->sock = dev->backend == ROXE_BACKEND_AFXDP ?
				   socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
			atomic_store_explicit(&dev->mcast, mc, memory_order_release);
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return mc;
}

/* Publish s (under mc->lock); the old set is freed once no engine reads it. */
static void set_publish(struct roxe_device *dev, struct roxe_mcast *mc, struct mc_set *s)
{
	struct mc_set *old = atomic_exchange_explicit(&mc->set, s, memory_order_acq_rel);

	if (old) {
		roxe_dev_quiesce(dev);
		free(old);
	}
}

int roxe_mcast_attach(struct roxe_device *dev, uint32_t qpn, const uint8_t gid[16])
{
	struct roxe_mcast *mc;
	const struct mc_group *g;
	struct mc_set *cur, *s;
	int err = 0;

	if (!roxe_gid_is_mcast(gid))
		return -EINVAL;
	if (dev->backend == ROXE_BACKEND_UDP)
		return -EOPNOTSUPP;	/* a unicast UDP socket: no group reaches it */
	mc = mcast_get(dev);
	if (!mc)
		return -ENOMEM;
	pthread_mutex_lock(&mc->lock);
	cur = atomic_load_explicit(&mc->set, memory_order_relaxed);
	g = set_find(cur, gid);
	if (g && group_has(cur, g, qpn))
		goto out;		/* attached already: as rxe, not an error */
	if ((!g && cur && cur->ngrp >= ROXE_MAX_MCAST_GRP) ||
	    (g && g->n >= ROXE_MAX_MCAST_QP_ATTACH) ||
	    (cur && cur->nattach >= ROXE_MAX_TOT_MCAST_QP_ATTACH)) {
		err = -ENOMEM;
		goto out;
	}
	if (!g) {
		err = iface_join(dev, mc, gid, true);
		if (err)
			goto out;
	}
	s = set_edit(cur, gid, NULL, false, qpn);
	if (!s) {
		if (!g)
			iface_join(dev, mc, gid, false);
		err = -ENOMEM;
		goto out;
	}
	set_publish(dev, mc, s);
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

/* Detach qpn from gid, or (gid NULL) from every group it is in. */
static int detach(struct roxe_device *dev, uint32_t qpn, const uint8_t *gid)
{
	struct roxe_mcast *mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);
	struct mc_set *cur, *s;
	const struct mc_group *g;
	int err = 0;

	if (!mc)
		return gid ? -EINVAL : 0;
	pthread_mutex_lock(&mc->lock);
	cur = atomic_load_explicit(&mc->set, memory_order_relaxed);
	if (gid) {
		g = set_find(cur, gid);
		if (!g || !group_has(cur, g, qpn)) {
			err = -EINVAL;		/* as rxe: no such group, or not in it */
			goto out;
		}
	} else {
		bool in_any = false;

		for (uint32_t i = 0; cur && i < cur->ngrp && !in_any; i++)
			in_any = group_has(cur, &cur->grp[i], qpn);
		if (!in_any)
			goto out;		/* a destroy: nothing to undo */
	}
	s = set_edit(cur, NULL, gid, !gid, qpn);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; cur && i < cur->ngrp; i++)
		if (!set_find(s, cur->grp[i].gid))
			iface_join(dev, mc, cur->grp[i].gid, false);
	set_publish(dev, mc, s);
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

int roxe_mcast_detach(struct roxe_device *dev, uint32_t qpn, const uint8_t gid[16])
{
	return detach(dev, qpn, gid);
}

void roxe_mcast_qp_gone(struct roxe_device *dev, uint32_t qpn)
{
	detach(dev, qpn, NULL);
}

void roxe_mcast_dev_free(struct roxe_device *dev)
{
	struct roxe_mcast *mc = atomic_load(&dev->mcast);
	struct mc_set *s;

	if (!mc)
		return;
	s = atomic_load(&mc->set);
	for (uint32_t i = 0; s && i < s->ngrp; i++)	/* QPs the application left */
		iface_join(dev, mc, s->grp[i].gid, false);
	free(s);
	if (mc->sock >= 0)
		close(mc->sock);
	pthread_mutex_destroy(&mc->lock);
	free(mc);
	atomic_store(&dev->mcast, NULL);
}

/* --- delivery ---------------------------------------------------------------------- */
/*
 * The frame f (parsed: pkt) to a multicast group, on engine e: a copy to
 * each of e's QPs attached to the group; with fwd, one copy to each other
 * engine with an attached QP. Its ICRC has been checked (or made here).
 */
static void deliver(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		    const struct roxe_pkt *pkt, bool fwd)
{
	struct roxe_device *dev = e->dev;
	struct roxe_mcast *mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);
	const struct mc_group *g;
	const struct mc_set *s;
	uint8_t sgid[16], dgid[16];
	uint64_t others = 0;

	if (!mc || !(pkt->flags & ROXE_OPF_REQUEST))
		return;
	if (roxe_pkt_gids(f, f + len, pkt, sgid, dgid) || !roxe_gid_is_mcast(dgid))
		return;
	s = atomic_load_explicit(&mc->set, memory_order_acquire);
	g = set_find(s, dgid);
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
			roxe_handoff_push(&dev->engines[id], f, len, ROXE_HO_VERIFIED);
}

void roxe_mcast_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		   const struct roxe_pkt *pkt)
{
	if (roxe_icrc_check(f, pkt) != ROXE_PKT_OK)
		return;
	deliver(e, f, len, pkt, true);
}

/*
 * roxe_mcast_loop: the local copies of a multicast datagram this host sends.
 * Contract: e is the sending engine, on its own thread; f is a whole RoCE
 * v2 frame of len bytes it has just sealed (ICRC made) for the wire, still
 * in its transmit buffer. Every QP of this device attached to the frame's
 * destination group gets a copy (those of other engines through their
 * hand-off rings) before the call returns; anything not a UD request to a
 * multicast group is ignored. As a frame from a peer, it is delivered to
 * QPs whose Q_Key matches, the sending QP too if attached.
 */
void roxe_mcast_loop(struct roxe_engine *e, const uint8_t *f, uint32_t len)
{
	struct roxe_pkt pkt;

	if (!atomic_load_explicit(&e->dev->mcast, memory_order_acquire))
		return;
	if (roxe_parse(f, f + len, len, &pkt) != ROXE_PKT_OK)
		return;
	if (roxe_bth_qpn((const struct roxe_bth *)(f + pkt.bth_off)) != ROXE_MCAST_QPN)
		return;
	deliver(e, f, len, &pkt, true);
}

void roxe_mcast_copy_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len)
{
	struct roxe_pkt pkt;

	/* The engine's private copy, parsed again: nothing else writes it.
	 * Its ICRC was checked (or made) by the engine that handed it. */
	if (roxe_parse(f, f + len, len, &pkt) == ROXE_PKT_OK)
		deliver(e, f, len, &pkt, false);
}
