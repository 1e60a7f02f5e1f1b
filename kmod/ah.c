// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address handles. The rxe provider builds the address vector itself and
 * copies it into every UD send WQE, so for user AHs the module only
 * validates and remembers the attributes.
 */
#include "roxe.h"

int roxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct roxe_ah *ah = to_rah(ibah);
	struct rdma_ah_attr *a = init->ah_attr;

	if (a->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(a) & IB_AH_GRH) || a->port_num != 1)
		return -EINVAL;
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
