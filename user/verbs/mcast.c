// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Multicast attach and detach (roxe/verbs.h): the checks ib_core makes
 * before rxe's own, then the device's groups.
 *
 * Attach and detach (any thread, under mc->lock) build a new, immutable set
 * of groups (transport/mcast.c) and publish it; engines read the published
 * set without locks; the old one is freed after roxe_dev_quiesce, as the
 * local-address set is. The first QP attached to a group joins the
 * interface to the group's Ethernet address (SIOCADDMULTI, as rxe's
 * dev_mc_add) and names the group in the XDP program's roxe_mcast_grps;
 * the last one detached undoes both.
 *
 * Tenants (issue #33): a served QP's attachments count against its
 * tenant, at most ROXE_MAX_MCAST_TENANT_ATTACH, so that one user of roxed
 * cannot take the device's groups or attachments from the others
 * (kmod_hostile's mcast phase). An attach copies the set (O(attachments))
 * and waits for the engines once: bounded, and roxe.ko's command channel
 * serves the tenants in turn, so a flood of attaches delays only its own.
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
#include "transport/engine.h"
#include "verbs/internal.h"
#include "transport/mcast.h"
#include "roxe/wire.h"
#include "roxe/xdp.h"

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
static void set_publish(struct roxe_device *dev, struct roxe_mcast *mc, struct roxe_mc_set *s)
{
	struct roxe_mc_set *old = atomic_exchange_explicit(&mc->set, s, memory_order_acq_rel);

	if (old) {
		roxe_dev_quiesce(dev);
		free(old);
	}
}

/* --- tenants' shares ------------------------------------------------------------------ */
/* The tenant's entry (under mc->lock); made if make. NULL: none, or no memory. */
static struct roxe_mc_tenant *tenant_get(struct roxe_mcast *mc, uint64_t tenant, bool make)
{
	struct roxe_mc_tenant *t;

	for (uint32_t i = 0; i < mc->nten; i++)
		if (mc->ten[i].tenant == tenant)
			return &mc->ten[i];
	if (!make)
		return NULL;
	if (mc->nten == mc->ten_cap) {
		uint32_t cap = mc->ten_cap ? 2 * mc->ten_cap : 8;

		t = realloc(mc->ten, cap * sizeof(*t));
		if (!t)
			return NULL;
		mc->ten = t;
		mc->ten_cap = cap;
	}
	t = &mc->ten[mc->nten++];
	*t = (struct roxe_mc_tenant){ .tenant = tenant };
	return t;
}

/* n attachments of qp's gone: its tenant's count drops, an entry at 0 goes. */
static void tenant_release(struct roxe_mcast *mc, const struct roxe_qp *qp, uint32_t n)
{
	struct roxe_mc_tenant *t = qp->served ? tenant_get(mc, qp->tenant, false) : NULL;

	if (!t)
		return;
	t->n -= n < t->n ? n : t->n;
	if (!t->n)
		*t = mc->ten[--mc->nten];
}

static int mcast_attach(struct roxe_qp *qp, const uint8_t gid[16])
{
	struct roxe_device *dev = qp->dev;
	uint32_t qpn = qp->qpn;
	struct roxe_mc_tenant *t = NULL;
	struct roxe_mcast *mc;
	const struct roxe_mc_group *g;
	struct roxe_mc_set *cur, *s;
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
	g = roxe_mc_set_find(cur, gid);
	if (g && roxe_mc_set_has(cur, g, qpn))
		goto out;		/* attached already: as rxe, not an error */
	if ((!g && cur && cur->ngrp >= ROXE_MAX_MCAST_GRP) ||
	    (g && g->n >= ROXE_MAX_MCAST_QP_ATTACH) ||
	    (cur && cur->nattach >= ROXE_MAX_TOT_MCAST_QP_ATTACH)) {
		err = -ENOMEM;
		goto out;
	}
	if (qp->served) {
		t = tenant_get(mc, qp->tenant, true);
		if (!t || t->n >= ROXE_MAX_MCAST_TENANT_ATTACH) {
			err = -ENOMEM;		/* this tenant's share is taken */
			goto out;
		}
	}
	if (!g) {
		err = iface_join(dev, mc, gid, true);
		if (err)
			goto out;
	}
	s = roxe_mc_set_edit(cur, gid, NULL, false, qpn);
	if (!s) {
		if (!g)
			iface_join(dev, mc, gid, false);
		err = -ENOMEM;
		goto out;
	}
	set_publish(dev, mc, s);
	if (t)
		t->n++;
out:
	if (err && t && !t->n)
		tenant_release(mc, qp, 0);	/* an entry made for nothing */
	pthread_mutex_unlock(&mc->lock);
	return err;
}

/* Detach qp from gid, or (gid NULL) from every group it is in. */
static int detach(struct roxe_qp *qp, const uint8_t *gid)
{
	struct roxe_device *dev = qp->dev;
	uint32_t qpn = qp->qpn;
	struct roxe_mcast *mc = atomic_load_explicit(&dev->mcast, memory_order_acquire);
	struct roxe_mc_set *cur, *s;
	const struct roxe_mc_group *g;
	int err = 0;

	if (!mc)
		return gid ? -EINVAL : 0;
	pthread_mutex_lock(&mc->lock);
	cur = atomic_load_explicit(&mc->set, memory_order_relaxed);
	if (gid) {
		g = roxe_mc_set_find(cur, gid);
		if (!g || !roxe_mc_set_has(cur, g, qpn)) {
			err = -EINVAL;		/* as rxe: no such group, or not in it */
			goto out;
		}
	} else {
		bool in_any = false;

		for (uint32_t i = 0; cur && i < cur->ngrp && !in_any; i++)
			in_any = roxe_mc_set_has(cur, &cur->grp[i], qpn);
		if (!in_any)
			goto out;		/* a destroy: nothing to undo */
	}
	s = roxe_mc_set_edit(cur, NULL, gid, !gid, qpn);
	if (!s) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; cur && i < cur->ngrp; i++)
		if (!roxe_mc_set_find(s, cur->grp[i].gid))
			iface_join(dev, mc, cur->grp[i].gid, false);
	tenant_release(mc, qp, cur->nattach - s->nattach);
	set_publish(dev, mc, s);
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

void roxe_mcast_qp_gone(struct roxe_qp *qp)
{
	detach(qp, NULL);
}

void roxe_mcast_dev_free(struct roxe_device *dev)
{
	struct roxe_mcast *mc = atomic_load(&dev->mcast);
	struct roxe_mc_set *s;

	if (!mc)
		return;
	s = atomic_load(&mc->set);
	for (uint32_t i = 0; s && i < s->ngrp; i++)	/* QPs the application left */
		iface_join(dev, mc, s->grp[i].gid, false);
	free(s);
	if (mc->sock >= 0)
		close(mc->sock);
	free(mc->ten);
	pthread_mutex_destroy(&mc->lock);
	free(mc);
	atomic_store(&dev->mcast, NULL);
}


static int check(struct roxe_qp *qp, const union ibv_gid *gid, uint8_t g[16])
{
	if (!qp || !gid)
		return -EINVAL;
	memcpy(g, gid->raw, 16);	/* read once */
	if (qp->type != IBV_QPT_UD || !roxe_gid_is_mcast(g))
		return -EINVAL;
	return 0;
}

int roxe_attach_mcast(struct roxe_qp *qp, const union ibv_gid *gid)
{
	uint8_t g[16];
	int err = check(qp, gid, g);

	return err ? err : mcast_attach(qp, g);
}

int roxe_detach_mcast(struct roxe_qp *qp, const union ibv_gid *gid)
{
	uint8_t g[16];
	int err = check(qp, gid, g);

	return err ? err : detach(qp, g);
}
