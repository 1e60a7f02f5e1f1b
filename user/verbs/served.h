/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the verbs files share beyond the public API (include/roxe/verbs.h):
 * the served objects roxed creates for roxe.ko's applications, and the
 * helpers more than one verbs file uses.
 */
#ifndef ROXE_VERBS_SERVED_H
#define ROXE_VERBS_SERVED_H

#include "transport/transport.h"
#include "transport/engine.h"

/* --- served objects (roxed): queues and memory of roxe.ko's applications --
 * Created at the numbers and keys the module chose, on rings and pages it
 * mapped into this process; the application posts and polls without us. */
struct roxe_served_qp_init {
	uint32_t		qpn;
	enum ibv_qp_type	type;
	struct roxe_cq		*send_cq, *recv_cq;
	struct roxe_srq		*srq;
	struct rxe_queue_buf	*sq_buf, *rq_buf;	/* rq_buf NULL with an SRQ */
	struct roxe_queue_geom	sq_geom, rq_geom;	/* the module's word on their shape */
	struct ibv_qp_cap	cap;
	bool			sq_sig_all;
	bool			kernel_ulp;	/* a kernel ULP's QP: UD WQEs carry AVs,
							 * REG_MR WQEs are allowed */
	uint64_t		tenant;		/* the module's word (kabi.h) */
};
int roxe_served_qp_create(struct roxe_pd *pd, const struct roxe_served_qp_init *init,
			  struct roxe_qp **qp);
/* As roxe_modify_qp, but the source GID and the peer's MAC come from the
 * module (it resolved them for the GID index the application chose). */
int roxe_served_modify_qp(struct roxe_qp *qp, struct ibv_qp_attr *attr, int mask,
			  const uint8_t sgid[16], const uint8_t dmac[6]);
/* Served CQs and SRQs are tenant's: the module's word (kabi.h), which
 * shares the device's event ring out (core/event.c). */
int roxe_served_cq_create(struct roxe_device *dev, uint32_t id, struct rxe_queue_buf *buf,
			  struct roxe_queue_geom g,
			  void (*event)(void *ctx, struct roxe_cq *cq, bool solicited),
			  void *ctx, uint64_t tenant, struct roxe_cq **cq);
/* Produce into buf (empty, of shape g) from now on, the CQEs the
 * application had not polled from the old ring moved there in order:
 * 0, or -EINVAL when they do not fit (the old ring stays). The caller
 * unmaps the old ring after 0. */
int roxe_served_cq_resize(struct roxe_cq *cq, struct rxe_queue_buf *buf, struct roxe_queue_geom g);
int roxe_served_srq_create(struct roxe_pd *pd, uint32_t id, struct rxe_queue_buf *buf,
			   struct roxe_queue_geom g, uint32_t max_sge, uint32_t limit,
			   uint64_t tenant, struct roxe_srq **srq);
/* An MR at the module's key; byte iova of it is at host. */
int roxe_served_mr_add(struct roxe_pd *pd, uint32_t key, uint64_t iova, size_t length,
		       unsigned access, void *host, struct roxe_mr **mr);
/* A fast-registration MR at the module's key, invalid until a REG_MR WQE
 * registers it within window (window_bytes); fn moves the pages. */
int roxe_served_mr_fast(struct roxe_pd *pd, uint32_t key, void *window, uint64_t window_bytes,
			roxe_mr_window_fn *fn, void *ctx, struct roxe_mr **mr);
/* A memory window at the module's key (roxe_key_is_mw). */
int roxe_served_mw_add(struct roxe_pd *pd, uint32_t key, enum ibv_mw_type type,
		       struct ibv_mw **mw);
/* An application's AH at the module's number, with what ib_core resolved
 * for it (sgid must be one of the port's own addresses); replaces an AH
 * left at that number. 0 or -EINVAL, -EADDRNOTAVAIL, -ENOMEM. */
int roxe_served_ah_add(struct roxe_pd *pd, uint32_t num, const struct roxe_frame_addr *addr);
/* Gone: returns once no engine can be using it. */
void roxe_served_ah_del(struct roxe_device *dev, uint32_t num);

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
void roxe_mcast_qp_gone(struct roxe_device *dev, uint32_t qpn);
void roxe_mcast_dev_free(struct roxe_device *dev);

#endif /* ROXE_VERBS_SERVED_H */
