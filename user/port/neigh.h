/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef ROXE_NEIGH_H
#define ROXE_NEIGH_H

#include <stdbool.h>
#include <stdint.h>

/* Where frames to a peer go first. */
struct roxe_nexthop {
	uint8_t		mac[6];		/* the peer's, or its router's */
	bool		via_gateway;
	uint32_t	route_mtu;	/* the route's MTU metric (IP bytes); 0: none */
};

/* The next hop from the source GID sgid to the peer dgid, through the
 * kernel's route and neighbour tables (resolved on demand). The route must
 * leave through ifindex (-ENETUNREACH otherwise). 0, -EHOSTUNREACH after
 * timeout_ms or without a route, or another negative errno. */
int roxe_neigh_resolve(int ifindex, const uint8_t sgid[16], const uint8_t dgid[16],
		       struct roxe_nexthop *out, int timeout_ms);

#endif /* ROXE_NEIGH_H */
