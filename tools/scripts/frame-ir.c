// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * frame-ir: a fixed amount of sending, one thread, for callgrind to count
 * the instructions of each frame's send path (tools/scripts/bench-frame-ir.sh
 * builds and runs it). Polled devices: every engine turn runs here.
 *
 *   frame-ir wire-send N   RC SEND 8 B over a loop wire, N messages
 *   frame-ir wire-write N  RC WRITE 64 KiB over a loop wire (MTU 4096)
 *   frame-ir loop-send N   RC SEND 8 B between two QPs of one device on lo
 *                          (UDP backend): every frame looped
 *   frame-ir loop-ud N     UD SEND 8 B, the same way
 *   frame-ir udp-ud N      UD SEND 8 B to 127.0.0.2 through the UDP port
 *
 * Prints "frames F": the requests sent (ACKs not counted). The loop-* and
 * udp-* cases need a device on lo: run them in a network namespace of their
 * own (unshare -n), where port 4791 is free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "roxe/verbs.h"
#include "roxe/frame.h"
#include "roxe/port.h"

#define BUF	(1u << 20)

struct side {
	struct roxe_device *dev;
	struct roxe_pd *pd;
	struct roxe_cq *cq;
	struct roxe_qp *qp;
	struct roxe_mr *mr;
	uint8_t *buf;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "frame-ir: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void side_res(struct side *s)
{
	int err = roxe_alloc_pd(s->dev, &s->pd);

	if (!err)
		err = roxe_create_cq(s->dev, 4096, NULL, NULL, &s->cq);
	if (err)
		die("pd/cq", err);
	s->buf = aligned_alloc(4096, BUF);
	if (!s->buf)
		die("buffer", 12);
	memset(s->buf, 1, BUF);
	err = roxe_reg_mr(s->pd, s->buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			  &s->mr);
	if (err)
		die("mr", err);
}

static void qp_new(struct side *s, enum ibv_qp_type t)
{
	struct roxe_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = t,
		.cap = { .max_send_wr = 256, .max_recv_wr = 1024, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	int err = roxe_create_qp(s->pd, &ia, &s->qp);

	if (err)
		die("qp", err);
}

static void qp_up(struct side *s, struct roxe_device *peer, uint32_t pqpn, enum ibv_qp_type t)
{
	struct roxe_qp *qp = s->qp;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	int err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (!err && t == IBV_QPT_UD) {
		err = roxe_modify_qp(qp, &a, IBV_QP_STATE);
	} else if (!err) {
		a.path_mtu = IBV_MTU_4096;
		a.dest_qp_num = pqpn;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.sgid_index = (uint8_t)roxe_device_gid_index(s->dev);
		roxe_query_gid(peer, roxe_device_gid_index(peer), &a.ah_attr.grh.dgid);
		err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER);
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (!err)
		err = roxe_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				     (t == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
	if (err)
		die("modify qp", err);
}

static void post_recv(struct side *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)s->buf, 4096, s->mr->lkey };
		struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
		int err = roxe_post_recv(s->qp, &wr, &bad);

		if (err)
			die("post recv", err);
	}
}

/* One message from a to b, completed (RC: acknowledged); polls both. */
static void send1(struct side *a, struct side *b, enum ibv_wr_opcode op, uint32_t len,
		  struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sge = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc[8];
	int err, got = 0;

	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = b->mr->rkey;
	if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rqpn;
		wr.wr.ud.remote_qkey = 0x1111;
	}
	err = roxe_post_send(a->qp, &wr, &bad);
	if (err)
		die("post send", err);
	for (long spin = 0; !got; spin++) {
		int n = roxe_poll_cq(a->cq, 8, wc);

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die(roxe_wc_status_str(wc[i].status), 5);
			if (wc[i].opcode != IBV_WC_RECV)
				got = 1;
		}
		if (b->cq != a->cq)
			roxe_poll_cq(b->cq, 8, wc);
		if (spin > 100000000)
			die("no completion", 110);
	}
}

static void open_ports(struct side s[2], struct roxe_port **p0, struct roxe_port **p1)
{
	struct roxe_port **ports[2] = { p0, p1 };

	for (int i = 0; i < 2; i++) {
		struct roxe_device_attr da = {
			.backend = ROXE_BACKEND_PORTS, .engines = 1, .mtu = 4096,
			.polled = true, .ports = ports[i],
		};
		int err;

		roxe_gid_from_v4(da.gid, htonl(0x0a630001 + i));
		da.mac[0] = 0x02;
		da.mac[5] = (uint8_t)(1 + i);
		err = roxe_device_open(&da, &s[i].dev);
		if (err)
			die("device", err);
		side_res(&s[i]);
	}
}

static void open_lo(struct side *s)
{
	struct roxe_device_attr da = {
		.ifname = "lo", .backend = ROXE_BACKEND_UDP, .engines = 1, .mtu = 4096,
		.polled = true,
	};
	int err = roxe_device_open(&da, &s->dev);

	if (err)
		die("device on lo", err);
	side_res(s);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
	struct side s[2] = { 0 };
	struct ibv_ah *ah = NULL;
	unsigned frames;

	if (!strncmp(c, "wire-", 5)) {
		struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 1024);
		struct roxe_port *p0, *p1;

		if (!w)
			die("wire", 12);
		p0 = roxe_loop_port(w, 0);
		p1 = roxe_loop_port(w, 1);
		open_ports(s, &p0, &p1);
	} else if (!strncmp(c, "loop-", 5) || !strncmp(c, "udp-", 4)) {
		open_lo(&s[0]);
		s[1] = s[0];
	} else {
		fprintf(stderr, "usage: frame-ir wire-send|wire-write|loop-send|loop-ud|udp-ud [N]\n");
		return 2;
	}
	{
		enum ibv_qp_type t = strstr(c, "-ud") ? IBV_QPT_UD : IBV_QPT_RC;

		qp_new(&s[0], t);
		qp_new(&s[1], t);
		qp_up(&s[0], s[1].dev, roxe_qp_num(s[1].qp), t);
		qp_up(&s[1], s[0].dev, roxe_qp_num(s[0].qp), t);
		if (t == IBV_QPT_UD) {
			struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
						  .grh = { .hop_limit = 64 } };
			int err;

			aa.grh.sgid_index = (uint8_t)roxe_device_gid_index(s[0].dev);
			if (!strcmp(c, "udp-ud"))
				roxe_gid_from_v4(aa.grh.dgid.raw, htonl(0x7f000002));
			else
				roxe_query_gid(s[0].dev, roxe_device_gid_index(s[0].dev),
					       &aa.grh.dgid);
			err = roxe_create_ah(s[0].pd, &aa, &ah);
			if (err)
				die("ah", err);
		}
	}
	if (!strcmp(c, "wire-write")) {
		for (unsigned i = 0; i < n; i++)
			send1(&s[0], &s[1], IBV_WR_RDMA_WRITE, 65536, NULL, 0);
		frames = n * 16;
	} else {
		for (unsigned i = 0; i < n; i++) {
			if (strcmp(c, "udp-ud"))
				post_recv(&s[1], 1);
			send1(&s[0], &s[1], IBV_WR_SEND, 8, ah, roxe_qp_num(s[1].qp));
		}
		frames = n;
	}
	printf("frames %u\n", frames);
	return 0;
}
