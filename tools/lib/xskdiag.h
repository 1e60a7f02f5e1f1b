/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The AF_XDP sockets of this network namespace, from the kernel's
 * sock_diag (xsk_diag): what roxectl status shows per socket. */
#ifndef ROXE_TOOLS_XSKDIAG_H
#define ROXE_TOOLS_XSKDIAG_H

#include <stdbool.h>
#include <stdint.h>

struct xsk_diag_sock {
	uint32_t	ino;		/* the socket's inode */
	uint32_t	ifindex, queue;	/* where it is bound */
	bool		rx, tx;		/* its rings */
	bool		umem;		/* the kernel told its UMEM (bound sockets) */
	bool		zerocopy;	/* the UMEM runs in zero-copy mode */
	bool		stats;		/* the kernel told the counters below */
	uint64_t	rx_dropped, rx_invalid, rx_full, fill_ring_empty;
	uint64_t	tx_invalid, tx_ring_empty;
};

/* Calls fn for every bound AF_XDP socket; 0, or a negative errno when the
 * kernel cannot tell (-ENOENT: no xsk_diag). fn's non-zero ends the walk. */
int xsk_diag_each(int (*fn)(const struct xsk_diag_sock *s, void *arg), void *arg);

#endif
