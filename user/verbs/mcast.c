// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Multicast attach and detach (roxe/verbs.h): the checks ib_core makes
 * before rxe's own, then the transport's group table (transport/mcast.c).
 */
#include <errno.h>
#include <string.h>
#include "verbs/served.h"
#include "roxe/wire.h"

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

	return err ? err : roxe_mcast_attach(qp->dev, qp->qpn, g);
}

int roxe_detach_mcast(struct roxe_qp *qp, const union ibv_gid *gid)
{
	uint8_t g[16];
	int err = check(qp, gid, g);

	return err ? err : roxe_mcast_detach(qp->dev, qp->qpn, g);
}
