/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UD multicast (mcast.c): a device's group sets, which verbs/mcast.c
 * publishes on attach and detach, and their delivery to the attached QPs
 * by the engines.
 */
#ifndef ROXE_TRANSPORT_MCAST_H
#define ROXE_TRANSPORT_MCAST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "roxe/parse.h"
#include "transport/transport.h"

/* A device's multicast groups (verbs/mcast.c keeps them, engines read
 * the published set). */
struct roxe_mc_group {
	uint8_t		gid[16];
	uint32_t	first, n;		/* its QPNs: qpn[first .. first+n) */
};

/* Immutable once published: groups sorted by GID. */
struct roxe_mc_set {
	uint32_t	ngrp, nattach;
	struct roxe_mc_group *grp;
	uint32_t	*qpn;
};

/* A served tenant with attachments, and how many it holds. */
struct roxe_mc_tenant {
	uint64_t	tenant;
	uint32_t	n;
};

struct roxe_mcast {
	pthread_mutex_t	lock;			/* attach, detach */
	_Atomic(struct roxe_mc_set *) set;
	int		sock;			/* SIOCADDMULTI; -1: not a real interface */
	struct roxe_mc_tenant *ten;		/* under lock: served tenants' counts */
	uint32_t	nten, ten_cap;
};

const struct roxe_mc_group *roxe_mc_set_find(const struct roxe_mc_set *s, const uint8_t gid[16]);
bool roxe_mc_set_has(const struct roxe_mc_set *s, const struct roxe_mc_group *g, uint32_t qpn);
/* A new set: old with qpn added to group add (if add), and removed from
 * group del (if del) or from every group (if all). NULL: no memory. */
struct roxe_mc_set *roxe_mc_set_edit(const struct roxe_mc_set *old, const uint8_t *add,
				     const uint8_t *del, bool all, uint32_t qpn);
/* Engine side: a received frame with DQPN ROXE_MCAST_QPN (ICRC unchecked). */
void roxe_mcast_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len,
		   const struct roxe_pkt *pkt);
/* Engine side: a multicast frame e sends, to this host's attached QPs
 * (the contract is in mcast.c). */
void roxe_mcast_loop(struct roxe_engine *e, const struct roxe_buf *b, const struct roxe_pkt *pkt);
/* Engine side: a ROXE_HO_VERIFIED copy another engine handed e. */
void roxe_mcast_copy_rx(struct roxe_engine *e, const uint8_t *f, uint32_t len);

#endif /* ROXE_TRANSPORT_MCAST_H */
