// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address handles.
 *
 * A user AH gets a number (struct rxe_create_ah_resp.ah_num): the rxe
 * provider then puts that number, not an address vector of its own making,
 * into its UD send WQEs. roxed learns each user AH with the addressing
 * ib_core resolved for it (ROXE_KOP_CREATE_AH: the source GID from the GID
 * table, the destination MAC from the neighbour table) and addresses the
 * application's datagrams from that alone, within the AH's PD: an
 * application cannot send from an address that is not the port's, or to a
 * MAC of its choosing.
 *
 * A kernel ULP's AH may be created where we cannot sleep (no round trip to
 * roxed): its address vector (struct rxe_av) is built here, and kverbs.c
 * copies it into the kernel QP's WQEs, in a ring only we and roxed map.
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

/* Number a user AH and tell roxed what it resolves to. */
static int user_ah(struct roxe_ah *ah, const struct rdma_ah_attr *a,
		   struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ah->ibah.device);
	const struct ib_global_route *g = rdma_ah_read_grh(a);
	struct rxe_create_ah_resp resp = {};
	struct roxe_kabi_cmd cmd = { .op = ROXE_KOP_CREATE_AH };
	struct roxe_kabi_ah *k = &cmd.ah;
	int num, err;

	/* A provider that cannot take a number would put its own AV into
	 * WQEs, which roxed refuses: fail here, where it can be told. */
	if (udata->outlen < sizeof(resp))
		return -EOPNOTSUPP;
	if (g->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EOPNOTSUPP;	/* roxe speaks RoCE v2 only */
	num = ida_alloc_range(&rdev->ah_ida, 1, ROXE_KABI_MAX_AH - 1, GFP_KERNEL);
	if (num < 0)
		return num;
	k->ah_num = num;
	k->pdn = roxe_pdn(ah->ibah.pd);
	memcpy(k->sgid, g->sgid_attr->gid.raw, sizeof(k->sgid));
	memcpy(k->dgid, g->dgid.raw, sizeof(k->dgid));
	memcpy(k->dmac, a->roce.dmac, ETH_ALEN);
	k->hop_limit = g->hop_limit;
	k->traffic_class = g->traffic_class;
	k->flow_label = g->flow_label;
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DESTROY_AH, num);
	if (err)
		goto free_num;
	resp.ah_num = num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		roxe_chan_destroy(rdev, ROXE_KOP_DESTROY_AH, num);
		goto free_num;
	}
	ah->ah_num = num;
	return 0;

free_num:
	ida_free(&rdev->ah_ida, num);
	return err;
}

int roxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct roxe_ah *ah = to_rah(ibah);
	struct rdma_ah_attr *a = init->ah_attr;
	int err;

	if (a->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(a) & IB_AH_GRH) || a->port_num != 1 ||
	    !a->grh.sgid_attr)
		return -EINVAL;
	ah->ah_num = 0;
	if (udata) {
		err = user_ah(ah, a, udata);
		if (err)
			return err;
	} else {
		fill_av(&ah->av, a);
	}
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
	struct roxe_dev *rdev = to_rdev(ibah->device);
	struct roxe_ah *ah = to_rah(ibah);
	struct roxe_kabi_cmd cmd = { .op = ROXE_KOP_DESTROY_AH };

	if (!ah->ah_num)
		return 0;
	/* Waiting bounds the number's reuse; a wait that times out leaves
	 * the command queued (as every destroy's), and where we may not
	 * sleep it is posted: either way it goes ahead of any CREATE_AH
	 * reusing the number, and roxed never keeps an AH the module freed. */
	cmd.id = ah->ah_num;
	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		roxe_chan_call_destroy(&rdev->chan, &cmd);
	else
		roxe_chan_post(&rdev->chan, &cmd);
	ida_free(&rdev->ah_ida, ah->ah_num);
	ah->ah_num = 0;
	return 0;
}
