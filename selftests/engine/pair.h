/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Two roxe devices joined by a loop wire, each with one engine, and helpers
 * to connect QPs between them and wait for completions.
 */
#ifndef ROXE_TEST_PAIR_H
#define ROXE_TEST_PAIR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "roxe/verbs.h"
#include "../wait.h"
#include "roxe/frame.h"
#include "roxe/port.h"
#include <sanitizer/lsan_interface.h>

struct side {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct roxe_cq		*cq;
	struct roxe_qp		*qp;
	uint8_t			*buf;
	struct roxe_mr		*mr;
};

struct pair {
	struct roxe_loop_wire	*wire;
	struct side		s[2];
	size_t			buf_len;
	/* device attributes (roxe_device_attr) pair_side_open adds */
	bool			no_ooo_stash[2];	/* side i's */
	void			(*trace)(void *arg, const char *line);	/* both sides' */
	void			*trace_arg;
	bool			trace_recorder;
};

/* Side i of p on port: its device (polled or with an engine thread), PD,
 * CQ and a p->buf_len buffer registered for every access. */
static inline int pair_side_open(struct pair *p, int i, struct roxe_port *port,
				 unsigned mtu, bool polled)
{
	struct roxe_device_attr da = {
		.backend = ROXE_BACKEND_PORTS,
		.engines = 1,
		.mtu = mtu,
		.polled = polled,
		.ports = &port,
		.no_ooo_stash = p->no_ooo_stash[i],
		.trace = p->trace,
		.trace_arg = p->trace_arg,
		.trace_recorder = p->trace_recorder,
	};
	struct side *s = &p->s[i];
	int err;

	roxe_gid_from_v4(da.gid, htonl(0x0a630001 + i));	/* 10.99.0.1/2 */
	da.mac[0] = 0x02;
	da.mac[5] = (uint8_t)(1 + i);
	err = roxe_device_open(&da, &s->dev);
	if (!err)
		err = roxe_alloc_pd(s->dev, &s->pd);
	if (!err)
		err = roxe_create_cq(s->dev, 4096, NULL, NULL, &s->cq);
	if (err)
		return err;
	s->buf = aligned_alloc(4096, p->buf_len);
	if (!s->buf)
		return -ENOMEM;
	memset(s->buf, 0, p->buf_len);
	return roxe_reg_mr(s->pd, s->buf, p->buf_len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, &s->mr);
}

/* polled: bit i makes side i a polled device (no engine thread): it runs a
 * turn only when roxe_poll_cq() is called on one of its CQs, so a test can
 * step it. depth: frames the wire holds each way (a receive ring's size). */
static inline int pair_open_wire(struct pair *p, unsigned mtu, size_t buf_len,
				 unsigned polled, unsigned depth)
{
	memset(p, 0, sizeof(*p));
	p->buf_len = buf_len;
	p->wire = roxe_loop_wire_new(4096 + 256, depth);
	if (!p->wire)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		int err = pair_side_open(p, i, roxe_loop_port(p->wire, i), mtu,
					 polled & (1u << i));

		if (err)
			return err;
	}
	return 0;
}

static inline int pair_open_polled(struct pair *p, unsigned mtu, size_t buf_len,
				   unsigned polled)
{
	return pair_open_wire(p, mtu, buf_len, polled, 1024);
}

static inline int pair_open(struct pair *p, unsigned mtu, size_t buf_len)
{
	return pair_open_polled(p, mtu, buf_len, 0);
}

static inline int qp_create_cap(struct side *s, enum ibv_qp_type type, uint32_t send_wr,
				uint32_t recv_wr, struct roxe_qp **qp)
{
	struct roxe_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
		.qp_type = type,
	};

	return roxe_create_qp(s->pd, &ia, qp);
}

static inline int qp_create(struct side *s, enum ibv_qp_type type, struct roxe_qp **qp)
{
	return qp_create_cap(s, type, 1024, 1024, qp);
}

/* RESET -> INIT -> RTR -> RTS towards the peer QP, as an RDMA app does. */
static inline int qp_connect(struct roxe_qp *qp, struct roxe_device *peer_dev, uint32_t peer_qpn,
			     enum ibv_qp_type type, enum ibv_mtu mtu, uint32_t my_psn,
			     uint32_t peer_psn, uint8_t timeout, uint8_t retry, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = { 0 };
	int err;

	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	a.qkey = 0x11111111;
	err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_UD) {
		err = roxe_modify_qp(qp, &a, IBV_QP_STATE);
	} else {
		a.path_mtu = mtu;
		a.dest_qp_num = peer_qpn;
		a.rq_psn = peer_psn;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;	/* 10 us: keeps RNR tests quick */
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		roxe_query_gid(peer_dev, 0, &a.ah_attr.grh.dgid);
		a.ah_attr.grh.hop_limit = 64;
		err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				     (type == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER : 0));
	}
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = my_psn;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	return roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			      (type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* Connect the pair's QPs: s[0].qp <-> s[1].qp. */
static inline int pair_connect(struct pair *p, enum ibv_qp_type type, enum ibv_mtu mtu,
			       uint32_t psn0, uint32_t psn1, uint8_t timeout, uint8_t retry,
			       uint8_t rnr_retry)
{
	int err = qp_create(&p->s[0], type, &p->s[0].qp);

	if (!err)
		err = qp_create(&p->s[1], type, &p->s[1].qp);
	if (!err)
		err = qp_connect(p->s[0].qp, p->s[1].dev, roxe_qp_num(p->s[1].qp), type, mtu,
				 psn0, psn1, timeout, retry, rnr_retry);
	if (!err)
		err = qp_connect(p->s[1].qp, p->s[0].dev, roxe_qp_num(p->s[0].qp), type, mtu,
				 psn1, psn0, timeout, retry, rnr_retry);
	return err;
}

/*
 * kselftest's harness ends each test's process with _exit(), which skips
 * LeakSanitizer's exit-time check: run it here, once everything is freed.
 * Returns nonzero (and LSan prints the report) if anything leaked.
 */
static inline int leak_check(void)
{
	return __lsan_do_recoverable_leak_check();
}

static inline void pair_close(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		struct side *s = &p->s[i];

		if (s->qp)
			roxe_destroy_qp(s->qp);
		if (s->mr)
			roxe_dereg_mr(s->mr);
		if (s->cq)
			roxe_destroy_cq(s->cq);
		if (s->pd)
			roxe_dealloc_pd(s->pd);
		if (s->dev)
			roxe_device_close(s->dev);
		free(s->buf);
	}
	roxe_loop_wire_free(p->wire);
}

/* Poll until n completions arrived or timeout_ms passed; returns the count. */
static inline int poll_n(struct roxe_cq *cq, struct ibv_wc *wc, int n, int timeout_ms)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = roxe_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (r)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
			break;
		struct timespec nap = { 0, 20000 };
		nanosleep(&nap, NULL);
	}
	return got;
}

static inline void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ (seed >> 3));
}

static inline int post_send1(struct roxe_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
			     void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
			     uint32_t rkey, unsigned flags)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return roxe_post_send(qp, &wr, &bad);
}

static inline int post_recv1(struct roxe_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
			     uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { 0 }, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return roxe_post_recv(qp, &wr, &bad);
}

#endif /* ROXE_TEST_PAIR_H */
