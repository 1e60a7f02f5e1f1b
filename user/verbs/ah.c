// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Address handles for UD.
 *
 * Embedded: the rxe uAPI address vector (struct rxe_av), carried by value in
 * every UD send WQE. Its source is the GID table's entry at sgid_index
 * (in sgid_addr, as rxe's provider fills it) and its destination MAC is the
 * next hop's, from the kernel's route and neighbour tables
 * (roxe_dev_resolve_path, port/neigh.c).
 *
 * Served (roxed): the AHs roxe.ko creates for applications, kept by number;
 * the engine takes a served application's UD addressing only from them
 * (requester.c), so an application cannot choose its source address or MAC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"
#include "verbs/internal.h"

int roxe_create_ah(struct roxe_pd *pd, const struct ibv_ah_attr *attr, struct ibv_ah **out)
{
	uint8_t sgid[16];
	struct roxe_ah *ah;
	uint32_t mtu_cap;	/* UD messages stay within the device's MTU */

	if (!pd || !attr || !out || !attr->is_global || attr->port_num > 1 ||
	    roxe_dev_sgid(pd->dev, attr->grh.sgid_index, sgid) ||
	    roxe_gid_is_v4(attr->grh.dgid.raw) != roxe_gid_is_v4(sgid))
		return -EINVAL;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -ENOMEM;
	ah->pd = pd;
	ah->av.port_num = 1;
	ah->av.grh.sgid_index = attr->grh.sgid_index;
	if (roxe_gid_is_v4(sgid)) {
		ah->av.sgid_addr._sockaddr_in.sin_family = AF_INET;
		memcpy(&ah->av.sgid_addr._sockaddr_in.sin_addr, sgid + 12, 4);
	} else {
		ah->av.sgid_addr._sockaddr_in6.sin6_family = AF_INET6;
		memcpy(&ah->av.sgid_addr._sockaddr_in6.sin6_addr, sgid, 16);
	}
	ah->av.network_type = roxe_gid_is_v4(attr->grh.dgid.raw) ? RXE_NETWORK_TYPE_IPV4 :
			      RXE_NETWORK_TYPE_IPV6;
	memcpy(ah->av.grh.dgid.raw, attr->grh.dgid.raw, 16);
	ah->av.grh.flow_label = attr->grh.flow_label;
	ah->av.grh.hop_limit = attr->grh.hop_limit;
	ah->av.grh.traffic_class = attr->grh.traffic_class;
	if (roxe_dev_resolve_path(pd->dev, sgid, attr->grh.dgid.raw, ah->av.dmac,
				  &mtu_cap)) {
		free(ah);
		return -EHOSTUNREACH;
	}
	atomic_fetch_add(&pd->users, 1);
	*out = &ah->ibv;
	return 0;
}

int roxe_destroy_ah(struct ibv_ah *ibv)
{
	struct roxe_ah *ah = (struct roxe_ah *)ibv;

	if (!ibv)
		return -EINVAL;
	atomic_fetch_sub(&ah->pd->users, 1);
	free(ah);
	return 0;
}

int roxe_served_ah_add(struct roxe_pd *pd, uint32_t num, const struct roxe_frame_addr *addr)
{
	struct roxe_served_ah *ah, *old;
	struct roxe_device *dev;

	if (!pd || !addr || num == 0 || num >= ROXE_MAX_AH)
		return -EINVAL;
	dev = pd->dev;
	if (!roxe_dev_is_local(dev, addr->sgid))
		return -EADDRNOTAVAIL;
	if (roxe_gid_is_v4(addr->sgid) != roxe_gid_is_v4(addr->dgid))
		return -EINVAL;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -ENOMEM;
	ah->pd = pd;
	ah->addr = *addr;
	atomic_fetch_add(&pd->users, 1);
	old = atomic_exchange_explicit(&dev->ahs[num], ah, memory_order_acq_rel);
	if (old) {		/* a destroy we never heard of */
		roxe_dev_quiesce(dev);
		atomic_fetch_sub(&old->pd->users, 1);
		free(old);
	}
	return 0;
}

void roxe_served_ah_del(struct roxe_device *dev, uint32_t num)
{
	struct roxe_served_ah *ah;

	if (!dev || num >= ROXE_MAX_AH)
		return;
	ah = atomic_exchange_explicit(&dev->ahs[num], NULL, memory_order_acq_rel);
	if (!ah)
		return;
	roxe_dev_quiesce(dev);	/* no engine holds it now */
	atomic_fetch_sub(&ah->pd->users, 1);
	free(ah);
}

void roxe_served_ah_del_all(struct roxe_device *dev)
{
	for (uint32_t i = 1; i < ROXE_MAX_AH; i++)	/* 0 names none */
		if (atomic_load_explicit(&dev->ahs[i], memory_order_relaxed))
			roxe_served_ah_del(dev, i);
}
