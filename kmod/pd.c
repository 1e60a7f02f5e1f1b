// SPDX-License-Identifier: GPL-2.0-only
/*
 * Protection domains: a number per PD, which roxed learns with the objects
 * that use it (MRs, QPs, SRQs) and checks keys against, and forgets when
 * the PD goes (ROXE_KOP_DEALLOC_PD), before the number is used again.
 */
#include "roxe.h"

int roxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct roxe_pd *pd = container_of(ibpd, struct roxe_pd, ibpd);
	int id = ida_alloc_max(&to_rdev(ibpd->device)->pdn_ida, ROXE_MAX_PD - 1,
			       GFP_KERNEL);

	if (id < 0)
		return id;
	pd->pdn = id;
	return 0;
}

int roxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct roxe_pd *pd = container_of(ibpd, struct roxe_pd, ibpd);
	struct roxe_dev *rdev = to_rdev(ibpd->device);

	/* read before anything that reuses the number: answered, or an
	 * orphan (chan.c)
	 */
	roxe_chan_destroy(rdev, ROXE_KOP_DEALLOC_PD, pd->pdn);
	ida_free(&rdev->pdn_ida, pd->pdn);
	return 0;
}
