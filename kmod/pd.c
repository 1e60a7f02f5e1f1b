// SPDX-License-Identifier: GPL-2.0-only
/*
 * Protection domains. The core allocates and counts them; the module keeps
 * no state of its own yet (roxed learns a PD's number with the objects that
 * use it).
 */
#include "roxe.h"

int roxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

int roxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}
