/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the verbs files share among themselves and with no one else (roxed's
 * door is served.h): the device's addressing for QPs and AHs, receive
 * WQEs, and multicast's part in QP and device teardown.
 */
#ifndef ROXE_VERBS_INTERNAL_H
#define ROXE_VERBS_INTERNAL_H

#include <stdint.h>
#include <rdma/rdma_user_rxe.h>
#include "roxe/verbs.h"

/* The source GID at an embedded QP's or AH's sgid_index: 0, or -EINVAL
 * when the entry is empty or not one of the port's own addresses (on the
 * UDP backend: not the device's own, the one its socket is bound to). */
int roxe_dev_sgid(struct roxe_device *dev, unsigned index, uint8_t sgid[16]);
/* Destination MAC from sgid to a GID (the next hop's, from the kernel's
 * route and neighbour tables on a real interface) and the largest IB MTU
 * the route allows (0: no limit of its own). */
int roxe_dev_resolve_path(struct roxe_device *dev, const uint8_t sgid[16], const uint8_t gid[16],
			  uint8_t mac[6], uint32_t *mtu_cap);
/* A receive WQE from wr (QP receive queues and SRQs). */
int roxe_fill_recv_wqe(struct rxe_recv_wqe *w, const struct ibv_recv_wr *wr, uint32_t max_sge);

/* Multicast (mcast.c): a destroyed QP leaves every group; a freed device
 * leaves its groups (before its XDP maps close). */
void roxe_mcast_qp_gone(struct roxe_qp *qp);
void roxe_mcast_dev_free(struct roxe_device *dev);

#endif /* ROXE_VERBS_INTERNAL_H */
