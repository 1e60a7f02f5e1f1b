/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef ROXE_NEIGH_H
#define ROXE_NEIGH_H

#include <stdint.h>

/* The MAC of the on-link peer whose IP the GID holds, from the kernel's
 * neighbour table (resolved on demand). 0, -EHOSTUNREACH after timeout_ms,
 * or another negative errno. */
int roxe_neigh_resolve(int ifindex, const uint8_t gid[16], uint8_t mac[6], int timeout_ms);

#endif /* ROXE_NEIGH_H */
