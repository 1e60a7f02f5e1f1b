/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * An application of roxe.ko as roxed serves it, for the engine tests that
 * play one (served_test.c, wire_addr_test.c, fuzz_served.c): the rings it
 * maps and writes (SQ and RQ laid out as the rdma-core rxe provider writes
 * them, its CQ of ib_uverbs_wc), the module's doorbell ring, and the served
 * QP over them. What each test writes into the rings stays in the test.
 */
#ifndef ROXE_TEST_SERVED_APP_H
#define ROXE_TEST_SERVED_APP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"

struct app_rings {
	struct rxe_queue_buf	*sq, *rq, *cqb;
	struct roxe_queue_geom	sqg, rqg, cqg;	/* as the module would say */
	/* the application's own view of its rings */
	struct roxe_queue	sq_prod, rq_prod, cq_cons;
	struct roxe_kabi_db_ring ring;
	__u64			db_queued[ROXE_KABI_MAX_QPS / 64];	/* the ring's bits */
	uint64_t		tenant;		/* as the module names it (kabi.h) */
};

/* An SQ and an RQ of wq_slots slots (2^n - 1) whose WQEs hold sq_sge and
 * rq_sge SGEs, and a CQ of cq_slots slots (none for 0). 0 or -ENOMEM;
 * app_rings_free() either way. */
static inline int app_rings_alloc(struct app_rings *r, uint32_t wq_slots, unsigned sq_sge,
				  unsigned rq_sge, uint32_t cq_slots)
{
	r->sq = roxe_queue_buf_alloc(wq_slots, sizeof(struct rxe_send_wqe) +
				     sq_sge * sizeof(struct rxe_sge), &r->sqg);
	r->rq = roxe_queue_buf_alloc(wq_slots, sizeof(struct rxe_recv_wqe) +
				     rq_sge * sizeof(struct rxe_sge), &r->rqg);
	if (cq_slots)
		r->cqb = roxe_queue_buf_alloc(cq_slots, sizeof(struct ib_uverbs_wc), &r->cqg);
	if (!r->sq || !r->rq || (cq_slots && !r->cqb))
		return -ENOMEM;
	roxe_queue_init_producer(&r->sq_prod, r->sq, r->sqg);
	roxe_queue_init_producer(&r->rq_prod, r->rq, r->rqg);
	if (r->cqb)
		roxe_queue_init_consumer(&r->cq_cons, r->cqb, r->cqg);
	return 0;
}

static inline void app_rings_free(struct app_rings *r)
{
	free(r->sq);
	free(r->rq);
	free(r->cqb);
}

/* The served QP over the rings, as roxed creates it for the module: number
 * qpn, both queues completing on cq; kernel: a kernel ULP's QP (its WQEs
 * written by the module: address vectors, fast registration), else an
 * application's. */
static inline int app_served_qp(struct app_rings *r, struct roxe_pd *pd, uint32_t qpn,
				enum ibv_qp_type type, struct roxe_cq *cq, struct ibv_qp_cap cap,
				bool kernel, struct roxe_qp **qp)
{
	struct roxe_served_qp_init in = {
		.qpn = qpn, .type = type, .send_cq = cq, .recv_cq = cq,
		.sq_buf = r->sq, .rq_buf = r->rq, .sq_geom = r->sqg, .rq_geom = r->rqg,
		.cap = cap, .kernel_ulp = kernel, .tenant = r->tenant,
	};

	return roxe_served_qp_create(pd, &in, qp);
}

/* A served UD QP from RESET to RTS with Q_Key qkey, as the module drives
 * it (its source: sgid, dmac). */
static inline int app_ud_up(struct roxe_qp *qp, uint32_t qkey, const uint8_t sgid[16],
			    const uint8_t dmac[6])
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };
	int err;

	err = roxe_served_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_QKEY, sgid, dmac);
	at.qp_state = IBV_QPS_RTR;
	if (!err)
		err = roxe_served_modify_qp(qp, &at, IBV_QP_STATE, sgid, dmac);
	at.qp_state = IBV_QPS_RTS;
	if (!err)
		err = roxe_served_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN, sgid, dmac);
	return err;
}

/* The send doorbell as roxe.ko rings it (kabi.h): qpn on the ring unless
 * its bit says it is there (or overflow set when the ring is full), then,
 * after a full barrier, the engine's eventfd unless the engine is awake
 * (dev NULL: none, for a polled engine). One ringer at a time: the
 * module's lock. True when it signalled. */
static inline bool app_doorbell(struct app_rings *r, struct roxe_device *dev, uint32_t qpn)
{
	struct roxe_kabi_db_ring *ring = &r->ring;
	uint64_t one = 1, bit = 1ull << (qpn % 64);

	if (!(__atomic_fetch_or(&r->db_queued[qpn / 64], bit, __ATOMIC_SEQ_CST) & bit)) {
		if (ring->prod - __atomic_load_n(&ring->cons, __ATOMIC_RELAXED) >=
		    ROXE_KABI_DB_SLOTS) {
			__atomic_fetch_and(&r->db_queued[qpn / 64], ~bit, __ATOMIC_RELAXED);
			__atomic_store_n(&ring->overflow, 1, __ATOMIC_RELEASE);
		} else {
			ring->qpn[ring->prod % ROXE_KABI_DB_SLOTS] = qpn;
			__atomic_store_n(&ring->prod, ring->prod + 1, __ATOMIC_RELEASE);
		}
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!dev || __atomic_load_n(&ring->awake, __ATOMIC_RELAXED))
		return false;
	if (write(dev->engines[0].efd, &one, sizeof(one)) < 0)
		perror("doorbell");
	return true;
}

/* The application's poll: the next CQE of its ring within timeout_ms. */
static inline int app_poll(struct roxe_queue *cq_cons, struct ib_uverbs_wc *wc, int timeout_ms)
{
	for (int i = 0; i < timeout_ms * 10; i++) {
		if (!roxe_queue_empty(cq_cons)) {
			*wc = *(struct ib_uverbs_wc *)roxe_queue_consumer_slot(cq_cons);
			roxe_queue_consume(cq_cons);
			return 1;
		}
		usleep(100);
	}
	return 0;
}

#endif /* ROXE_TEST_SERVED_APP_H */
