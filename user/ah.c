// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Address handles for UD: the rxe uAPI address vector (struct rxe_av),
 * carried by value in every UD send WQE as the soft-RoCE ABI does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

int roxe_create_ah(struct roxe_pd *pd, const struct ibv_ah_attr *attr, struct ibv_ah **out)
{
	struct roxe_ah *ah;

	if (!pd || !attr || !out || !attr->is_global || attr->port_num > 1 ||
	    attr->grh.sgid_index != 0 ||
	    roxe_gid_is_v4(attr->grh.dgid.raw) != roxe_gid_is_v4(pd->dev->gid))
		return -EINVAL;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return -ENOMEM;
	ah->pd = pd;
	ah->av.port_num = 1;
	ah->av.network_type = roxe_gid_is_v4(attr->grh.dgid.raw) ? RXE_NETWORK_TYPE_IPV4 :
			      RXE_NETWORK_TYPE_IPV6;
	memcpy(ah->av.grh.dgid.raw, attr->grh.dgid.raw, 16);
	ah->av.grh.flow_label = attr->grh.flow_label;
	ah->av.grh.hop_limit = attr->grh.hop_limit;
	ah->av.grh.traffic_class = attr->grh.traffic_class;
	if (roxe_dev_resolve_mac(pd->dev, attr->grh.dgid.raw, ah->av.dmac)) {
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
