// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The port's own addresses, as engines see them: the set the device
 * publishes (verbs/device.c replaces it whole when addresses change).
 */
#include <string.h>
#include "core/core.h"

bool roxe_local_set_has(const struct roxe_local_set *l, const uint8_t gid[16])
{
	for (unsigned i = 0; i < l->n; i++)
		if (roxe_gid_eq(l->gid[i], gid))
			return true;
	return false;
}

bool roxe_dev_is_local(const struct roxe_device *dev, const uint8_t gid[16])
{
	const struct roxe_local_set *l = atomic_load_explicit(&((struct roxe_device *)dev)->local,
							      memory_order_acquire);

	return l && roxe_local_set_has(l, gid);
}

/* Does the engine count received frames itself? Not when XDP does. */
bool roxe_dev_counts_rx(const struct roxe_device *dev)
{
	return dev->xdp == NULL;
}
