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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "verbs/served.h"
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

static int mcast_attach(struct roxe_device *dev, uint32_t qpn, const uint8_t gid[16])
{
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
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

/* Detach qpn from gid, or (gid NULL) from every group it is in. */
static int detach(struct roxe_device *dev, uint32_t qpn, const uint8_t *gid)
{
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
	set_publish(dev, mc, s);
out:
	pthread_mutex_unlock(&mc->lock);
	return err;
}

void roxe_mcast_qp_gone(struct roxe_device *dev, uint32_t qpn)
{
	detach(dev, qpn, NULL);
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

	return err ? err : mcast_attach(qp->dev, qp->qpn, g);
}

int roxe_detach_mcast(struct roxe_qp *qp, const union ibv_gid *gid)
{
	uint8_t g[16];
	int err = check(qp, gid, g);

	return err ? err : detach(qp->dev, qp->qpn, g);
}
