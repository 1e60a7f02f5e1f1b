/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxed's one door into libroxe beyond the public API (include/roxe/):
 * the served objects it creates for roxe.ko's applications, the doorbell
 * rings and counters it shares with the module, the device's open with
 * what it chose (or where it stopped), and the check of its options. It
 * needs only include/'s and system headers, so roxed sees no struct of
 * libroxe's own.
 */
#ifndef ROXE_VERBS_SERVED_H
#define ROXE_VERBS_SERVED_H

#include <stdbool.h>
#include <stdint.h>
#include <rdma/rdma_user_rxe.h>
#include "roxe/verbs.h"
#include "roxe/queue.h"
#include "roxe/frame.h"
#include "roxe/maps.h"
#include "roxe/kabi.h"
#include "roxe/port.h"

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
/* The counters of the QP at qpn (live or not: a new QP zeroes them), each
 * read whole: 0, or -EINVAL when qpn is out of range. */
int roxe_served_qp_stats(struct roxe_device *dev, uint32_t qpn, struct roxe_qp_stats *s);
/* Served CQs and SRQs are tenant's: the module's word (kabi.h), which
 * shares the device's event ring out (core/event.c). event runs on an
 * engine's thread after each CQE (solicited: the CQE's). */
int roxe_served_cq_create(struct roxe_device *dev, uint32_t id, struct rxe_queue_buf *buf,
			  struct roxe_queue_geom g,
			  void (*event)(void *ctx, struct roxe_cq *cq, bool solicited),
			  void *ctx, uint64_t tenant, struct roxe_cq **cq);
/* The module's number of a served CQ (id above). */
uint32_t roxe_served_cq_id(const struct roxe_cq *cq);
/* Produce into buf (empty, of shape g) from now on, the CQEs the
 * application had not polled from the old ring moved there in order:
 * 0, or -EINVAL when they do not fit (the old ring stays). The caller
 * unmaps the old ring after 0. */
int roxe_served_cq_resize(struct roxe_cq *cq, struct rxe_queue_buf *buf, struct roxe_queue_geom g);
int roxe_served_srq_create(struct roxe_pd *pd, uint32_t id, struct rxe_queue_buf *buf,
			   struct roxe_queue_geom g, uint32_t max_sge, uint32_t limit,
			   uint64_t tenant, struct roxe_srq **srq);
/* An MR at the module's key; byte iova of it is at host. With
 * IBV_ACCESS_ON_DEMAND, one of the module's on-demand paging MRs:
 * engines touch it only under core/odp.c's guard. */
int roxe_served_mr_add(struct roxe_pd *pd, uint32_t key, uint64_t iova, size_t length,
		       unsigned access, void *host, struct roxe_mr **mr);
/* A fast-registration MR at the module's key, invalid until a REG_MR WQE
 * registers it within window (window_bytes); fn puts the pages behind the
 * window (map) or takes them away: 0 or -errno. */
int roxe_served_mr_fast(struct roxe_pd *pd, uint32_t key, void *window, uint64_t window_bytes,
			int (*fn)(void *ctx, uint32_t key, bool map), void *ctx,
			struct roxe_mr **mr);
/* The MR goes even with windows bound to it (which roxe_dereg_mr refuses):
 * they are unbound first. Returns once no engine touches it. */
void roxe_served_mr_del(struct roxe_mr *mr);
/* Is key a memory window's (ROXE_MW_INDEX_BASE, include/roxe/limits.h)? */
bool roxe_served_key_is_mw(uint32_t key);
/* A memory window at the module's key (roxe_served_key_is_mw). */
int roxe_served_mw_add(struct roxe_pd *pd, uint32_t key, enum ibv_mw_type type,
		       struct ibv_mw **mw);
/* An application's AH at the module's number, with what ib_core resolved
 * for it (sgid must be one of the port's own addresses); replaces an AH
 * left at that number. 0 or -EINVAL, -EADDRNOTAVAIL, -ENOMEM. */
int roxe_served_ah_add(struct roxe_pd *pd, uint32_t num, const struct roxe_frame_addr *addr);
/* Gone: returns once no engine can be using it. */
void roxe_served_ah_del(struct roxe_device *dev, uint32_t num);
/* Every served AH gone, as roxe_served_ah_del. */
void roxe_served_ah_del_all(struct roxe_device *dev);

/* --- the device's side of the module's shared area (kabi.h) ------------------ */
/* s's engines: their number and each one's wakeup eventfd, which the
 * module signals for a doorbell. 0, or -E2BIG past ROXE_KABI_MAX_ENGINES. */
int roxe_served_engine_fds(struct roxe_device *dev, struct roxe_kabi_serve *s);
/* Engine i reads the doorbells the module queues on sh->db[i] (the
 * ring's bits in sh->db_queued), from now on... */
void roxe_served_doorbells_start(struct roxe_device *dev, struct roxe_kabi_shared *sh);
/* ... until this returns: then no engine reads a ring of sh any more. */
void roxe_served_doorbells_stop(struct roxe_device *dev);
/* Every engine's counters summed, each read whole. */
void roxe_served_engine_stats(struct roxe_device *dev, struct roxe_engine_stats *sum);

/* --- opening the device ------------------------------------------------------- */
/* Where roxe_served_device_open stopped, or (OK) that it did not. */
enum roxe_open_step {
	ROXE_OPEN_OK,
	ROXE_OPEN_ATTR,		/* attr refused (-EINVAL) */
	ROXE_OPEN_IFACE,	/* the interface: gone, or no MAC, MTU or address */
	ROXE_OPEN_PLAN,		/* the engines do not fit the interface's queues */
	ROXE_OPEN_XDP_OTHER,	/* another XDP program is attached: xdp_other */
	ROXE_OPEN_XDP_ENGINES,	/* roxe's program is attached for xdp_engines */
	ROXE_OPEN_XDP,		/* loading or attaching roxe's XDP program */
	ROXE_OPEN_AFXDP,	/* the AF_XDP sockets and their memory: afxdp.step */
	ROXE_OPEN_UDP,		/* the UDP backend's socket */
	ROXE_OPEN_ENGINES,	/* the engine threads (SCHED_FIFO with rt_priority) */
	ROXE_OPEN_OTHER,	/* memory, addresses, the address watcher */
};

/* What roxe_served_device_open chose and why, or where it stopped. */
struct roxe_open_report {
	enum roxe_open_step	step;
	int			err;		/* -errno; 0 when OK */
	unsigned		engines;	/* the engines it runs (OK) */
	/* AF_XDP: the interface's queues (before XDP was attached: what set
	 * the engines) and the plan (the sockets', on the queues there are
	 * with XDP attached) from ROXE_OPEN_PLAN on, the rest as far as it
	 * got */
	struct roxe_afxdp_report afxdp;
	uint32_t		xdp_other;	/* XDP_OTHER: the other program's id */
	unsigned		xdp_engines;	/* XDP_ENGINES: the attached program's count */
	bool			xdp_generic;	/* XDP in generic (skb) mode, not the driver's */
};

/* roxe_device_open with at most max_engines engines (more asked: -EINVAL,
 * on every backend), whose default engine count on AF_XDP is min(usable
 * CPUs, the interface's queues, max_engines, what the XDP map holds);
 * r says what it chose, or where it stopped. */
int roxe_served_device_open(const struct roxe_device_attr *attr, unsigned max_engines,
			    struct roxe_device **dev, struct roxe_open_report *r);

/* --- options ------------------------------------------------------------------- */
/* Would roxe_device_open take settings as roxe_device_attr.cc? 0, or
 * -EINVAL with why (whylen bytes) naming the bad item. */
int roxe_served_cc_check(const char *settings, char *why, unsigned whylen);

#endif /* ROXE_VERBS_SERVED_H */
