// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address handles. The rxe provider builds the address vector itself and
 * copies it into every UD send WQE, so for user AHs the module only
 * validates and remembers the attributes; for a kernel ULP's AH it builds
 * that vector (struct rxe_av) here, and post_send copies it the same way.
 */
#include <net/ipv6.h>
#include "roxe.h"

static void gid_to_sockaddr(const union ib_gid *gid, void *sa)
{
	const struct in6_addr *a = (const struct in6_addr *)gid->raw;

	if (ipv6_addr_v4mapped(a)) {
		struct sockaddr_in *in = sa;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = a->s6_addr32[3];
	} else {
		struct sockaddr_in6 *in6 = sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = *a;
	}
}

static void fill_av(struct rxe_av *av, const struct rdma_ah_attr *a)
{
	const struct ib_global_route *g = rdma_ah_read_grh(a);

	memset(av, 0, sizeof(*av));
	av->port_num = 1;
	av->network_type =
		ipv6_addr_v4mapped((const struct in6_addr *)g->dgid.raw) ?
		RXE_NETWORK_TYPE_IPV4 : RXE_NETWORK_TYPE_IPV6;
	memcpy(av->dmac, a->roce.dmac, ETH_ALEN);
	memcpy(av->grh.dgid.raw, g->dgid.raw, sizeof(av->grh.dgid.raw));
	av->grh.flow_label = g->flow_label;
	av->grh.sgid_index = g->sgid_index;
	av->grh.hop_limit = g->hop_limit;
	av->grh.traffic_class = g->traffic_class;
	gid_to_sockaddr(&g->sgid_attr->gid, &av->sgid_addr);
	gid_to_sockaddr(&g->dgid, &av->dgid_addr);
}

int roxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct roxe_ah *ah = to_rah(ibah);
	struct rdma_ah_attr *a = init->ah_attr;

	if (a->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(a) & IB_AH_GRH) || a->port_num != 1 ||
	    !a->grh.sgid_attr)
		return -EINVAL;
	fill_av(&ah->av, a);
	ah->attr = *a;
	ah->attr.grh.sgid_attr = NULL;	/* ibah->sgid_attr holds it */
	return 0;
}

int roxe_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_rah(ibah)->attr;
	return 0;
}

int roxe_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}
