/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tests' two roxe hosts on topo.h's topology: a device in each of
 * namespaces a and b with a PD, a CQ, one registered buffer and RC QPs,
 * QP i of a connected to QP i of b; completions and posts on them.
 */
#ifndef ROXE_SELFTEST_HOST_H
#define ROXE_SELFTEST_HOST_H

#include <ifaddrs.h>
#include <time.h>
#include "topo.h"
#include "../wait.h"
#include "roxe/verbs.h"

#define HOST_MAX_QP	4

struct host {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct roxe_cq		*cq;
	struct roxe_qp		*qp[HOST_MAX_QP];
	struct roxe_mr		*mr;
	uint8_t			*buf;
};

/* What both hosts are made of. QP i of a starts at PSN psn_a + 1000 * i,
 * QP i of b at psn_b + 1000 * i. */
struct host_attr {
	enum roxe_backend	backend;
	unsigned		engines;
	int			nqp;		/* at most HOST_MAX_QP */
	int			cqe;
	uint32_t		max_wr;
	size_t			buf_len;
	int			access;		/* the MR's; the QPs' without LOCAL_WRITE */
	uint8_t			rd_atomic;	/* READs/atomics in flight, each way */
	uint32_t		psn_a, psn_b;
	bool			ipv6;		/* GIDs: the global IPv6 addresses */
	uint8_t			hop_limit;	/* the AVs'; 0: 64 */
	enum ibv_mtu		path_mtu;	/* 0: 1024 */
	bool			b_udp;		/* b on the UDP backend, whatever a's */
	bool			no_ecn;		/* the devices' ECN settings */
	unsigned		cnp_interval_us;
	const char		*cc;		/* roxe_device_attr.cc; NULL: DCQCN on */
	uint8_t			timeout;	/* the QPs' local ACK timeout; 0: 12 (16.8 ms) */
	uint64_t		umem_mr_bytes;	/* the devices' UMEM reserve */
	uint32_t		max_sge;	/* the QPs' send SGEs; 0: 1 */
	bool			polled;		/* no engine threads (roxe_poll_cq runs them) */
};

/* The interface's first global IPv6 address as a GID. */
static inline int host_gid6(const char *ifname, uint8_t gid[16])
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_in6 *s6 = (const void *)i->ifa_addr;

		if (s6 && s6->sin6_family == AF_INET6 && !strcmp(i->ifa_name, ifname) &&
		    !IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
			memcpy(gid, &s6->sin6_addr, 16);
			err = 0;
			break;
		}
	}
	freeifaddrs(ifa);
	return err;
}

static inline int host_open(struct host *h, const char *ifname, const struct host_attr *ha)
{
	struct roxe_device_attr da = { .ifname = ifname, .backend = ha->backend,
				       .engines = ha->engines, .no_ecn = ha->no_ecn,
				       .cnp_interval_us = ha->cnp_interval_us, .cc = ha->cc,
				       .umem_mr_bytes = ha->umem_mr_bytes, .polled = ha->polled };
	int err;

	if (ha->ipv6 && (err = host_gid6(ifname, da.gid)))
		return err;
	err = roxe_device_open(&da, &h->dev);
	if (!err)
		err = roxe_alloc_pd(h->dev, &h->pd);
	if (!err)
		err = roxe_create_cq(h->dev, ha->cqe, NULL, NULL, &h->cq);
	if (err)
		return err;
	h->buf = aligned_alloc(4096, ha->buf_len);
	if (!h->buf)
		return -ENOMEM;
	memset(h->buf, 0, ha->buf_len);
	err = roxe_reg_mr(h->pd, h->buf, ha->buf_len, ha->access, &h->mr);
	for (int i = 0; !err && i < ha->nqp; i++) {
		struct roxe_qp_init_attr ia = {
			.send_cq = h->cq, .recv_cq = h->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = ha->max_wr, .max_recv_wr = ha->max_wr,
				 .max_send_sge = ha->max_sge ? ha->max_sge : 1,
				 .max_recv_sge = 1 },
		};

		err = roxe_create_qp(h->pd, &ia, &h->qp[i]);
	}
	return err;
}

/* Bring h's QP i up towards peer's QP i (called inside h's namespace: the
 * peer's MAC comes from that namespace's neighbour table). */
static inline int host_qp_up(struct host *h, struct host *peer, int i, uint32_t sq_psn,
			     uint32_t rq_psn, const struct host_attr *ha)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = ha->access & ~IBV_ACCESS_LOCAL_WRITE };
	int err = roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_ACCESS_FLAGS);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ha->path_mtu ? ha->path_mtu : IBV_MTU_1024;
	a.dest_qp_num = roxe_qp_num(peer->qp[i]);
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = ha->rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = ha->hop_limit ? ha->hop_limit : 64;
	/* rxe's table: index 0 is the link-local default; the addresses follow */
	a.ah_attr.grh.sgid_index = (uint8_t)roxe_device_gid_index(h->dev);
	roxe_query_gid(peer->dev, roxe_device_gid_index(peer->dev), &a.ah_attr.grh.dgid);
	err = roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = ha->timeout ? ha->timeout : 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = ha->rd_atomic;
	return roxe_modify_qp(h->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline void host_close(struct host *h)
{
	for (int i = 0; i < HOST_MAX_QP; i++)
		if (h->qp[i])
			roxe_destroy_qp(h->qp[i]);
	if (h->mr)
		roxe_dereg_mr(h->mr);
	if (h->cq)
		roxe_destroy_cq(h->cq);
	if (h->pd)
		roxe_dealloc_pd(h->pd);
	roxe_device_close(h->dev);
	free(h->buf);
}

/* h[0] in t's namespace a, h[1] in b, their QPs connected pairwise; leaves
 * the caller in namespace b. On failure both hosts are closed again (the
 * harness skips teardown after a failed setup); the topology is the
 * caller's. */
static inline int host_pair_open(struct topo *t, struct host h[2], const struct host_attr *ha)
{
	char ifa[16], ifb[16];
	int err;

	topo_ifname(t, 'a', ifa, sizeof(ifa));
	topo_ifname(t, 'b', ifb, sizeof(ifb));
	topo_enter(t->ns_a);
	err = host_open(&h[0], ifa, ha);
	if (!err) {
		struct host_attr hb = *ha;

		if (ha->b_udp)
			hb.backend = ROXE_BACKEND_UDP;
		topo_enter(t->ns_b);
		err = host_open(&h[1], ifb, &hb);
	}
	for (int i = 0; !err && i < ha->nqp; i++) {
		uint32_t pa = ha->psn_a + 1000u * (uint32_t)i, pb = ha->psn_b + 1000u * (uint32_t)i;

		topo_enter(t->ns_a);
		err = host_qp_up(&h[0], &h[1], i, pa, pb, ha);
		if (!err) {
			topo_enter(t->ns_b);
			err = host_qp_up(&h[1], &h[0], i, pb, pa, ha);
		}
	}
	if (err) {
		host_close(&h[0]);
		host_close(&h[1]);
	}
	return err;
}

static inline int wait_wc(struct roxe_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	for (int t = 0; t < timeout_ms * 10; t++) {
		int r = roxe_poll_cq(cq, 1, wc);

		if (r)
			return r;
		usleep(100);
	}
	return 0;
}

/* One signaled work request: a FETCH_ADD of 1 at raddr, or op (SEND, WRITE,
 * READ) of len bytes between addr and raddr. */
static inline int host_post(struct roxe_qp *qp, enum ibv_wr_opcode op, void *addr, uint32_t len,
			    uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return roxe_post_send(qp, &wr, &bad);
}

#endif
