// SPDX-License-Identifier: GPL-2.0-only
/*
 * wire_ud_source ROXE_DEV ROXE_GIDX RXE_DEV RXE_GIDX RXE_MAC
 *
 * A hostile libibverbs application on roxe0 (stock rxe provider) trying to
 * choose the source of its UD datagrams (issue #15, finding 3). The peer is
 * a UD QP on kernel rxe in the same process; what it receives shows what
 * went on the wire (the GRH holds the IPv4 header: the source address).
 *
 *  1. An ordinary send through an AH: the provider puts the AH's number
 *     (ah_num, from roxe.ko's create_ah answer) into the WQE; the datagram
 *     arrives from roxe0's own address.
 *  2. The application finds its send ring among its uverbs mappings and
 *     writes WQEs itself, each with an address vector naming 10.77.2.66 as
 *     the source and the peer's MAC, and with ah_num 0 (no AH), or the
 *     number of an AH of another PD: each fails (IBV_WC_LOC_QP_OP_ERR, as
 *     rxe fails a WQE without a usable AV), and the peer receives nothing
 *     from 10.77.2.66.
 * Prints "ok: ..." or "FAIL: ..." per check; exit 0 when all passed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_user_rxe.h>
#include "verbs_util.h"

#define QKEY	0x11111111u
#define BUFSZ	65536
#define MAGIC	0x5151000000000000ull
#define FORGED_SRC	"10.77.2.66"

struct side {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	struct ibv_mr		*mr;
	uint8_t			*buf;
	union ibv_gid		gid;
	int			gidx;
};

static int side_open(struct side *s, const char *name, int gidx)
{
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };

	s->ctx = open_dev(name);
	if (!s->ctx)
		return -1;
	s->gidx = gidx;
	s->buf = aligned_alloc(4096, BUFSZ);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	if (!s->buf || !s->pd || !s->cq || ibv_query_gid(s->ctx, 1, gidx, &s->gid))
		return -1;
	memset(s->buf, 0, BUFSZ);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = qa.recv_cq = s->cq;
	s->qp = s->mr ? ibv_create_qp(s->pd, &qa) : NULL;
	if (!s->qp ||
	    ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -1 : 0;
}

static struct ibv_ah *ah_to(struct side *from, struct ibv_pd *pd, const struct side *to)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
		.grh = { .dgid = to->gid, .sgid_index = (uint8_t)from->gidx, .hop_limit = 64 } };

	return ibv_create_ah(pd, &aa);
}

static int post_recv(struct side *s, int i)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + (uint32_t)i * 512, 40 + 256, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int send_ud(struct side *s, struct ibv_ah *ah, uint32_t rqpn, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, 64, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = rqpn;
	wr.wr.ud.remote_qkey = QKEY;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int poll1(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	for (int i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

/* The send ring among this process's uverbs mappings: its header names
 * send-WQE-sized slots and slot 0 holds the WQE wr_id `first` left. */
static struct rxe_queue_buf *find_sq(uint64_t first, uint32_t rqpn)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	struct rxe_queue_buf *found = NULL;

	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		struct rxe_queue_buf *q;
		struct rxe_send_wqe *w;

		if (!strstr(line, "uverbs") || sscanf(line, "%lx-%lx", &start, &end) != 2 ||
		    !strstr(line, "rw"))
			continue;
		q = (struct rxe_queue_buf *)start;
		if (end - start < sizeof(*q) + 4096 || q->log2_elem_size < 8 ||
		    q->log2_elem_size > 16 || (q->index_mask & (q->index_mask + 1)) ||
		    sizeof(*q) + ((size_t)(q->index_mask + 1) << q->log2_elem_size) > end - start)
			continue;
		w = (struct rxe_send_wqe *)q->data;
		if (w->wr.wr_id == first && w->wr.opcode == IBV_WR_SEND &&
		    w->wr.wr.ud.remote_qpn == rqpn)
			found = q;
	}
	if (f)
		fclose(f);
	return found;
}

/* A WQE written by hand at the producer index: a copy of slot 0 with
 * ah_num and a vector of the application's choosing. */
static void forge(struct rxe_queue_buf *q, uint64_t id, uint32_t ah_num,
		  const struct side *peer, const uint8_t mac[6])
{
	uint32_t pi = __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE) & q->index_mask;
	size_t elem = (size_t)1 << q->log2_elem_size;
	struct rxe_send_wqe *w = (void *)(q->data + (size_t)pi * elem);
	struct rxe_av *av = &w->wr.wr.ud.av;

	memcpy(w, q->data, elem);
	w->wr.wr_id = id;
	w->state = 0;
	w->status = 0;
	w->wr.wr.ud.ah_num = ah_num;
	memset(av, 0, sizeof(*av));
	av->port_num = 1;
	av->network_type = RXE_NETWORK_TYPE_IPV4;
	memcpy(av->dmac, mac, 6);
	memcpy(av->grh.dgid.raw, peer->gid.raw, 16);
	av->grh.hop_limit = 64;
	av->sgid_addr._sockaddr_in.sin_family = AF_INET;
	av->sgid_addr._sockaddr_in.sin_addr.s_addr = inet_addr(FORGED_SRC);
	av->dgid_addr._sockaddr_in.sin_family = AF_INET;
	memcpy(&av->dgid_addr._sockaddr_in.sin_addr.s_addr, peer->gid.raw + 12, 4);
	__atomic_store_n(&q->producer_index, (pi + 1) & q->index_mask, __ATOMIC_RELEASE);
}

/* Receive completions at the peer within ms: how many came from src. */
static int received_from(struct side *peer, const char *src, int ms, int *total)
{
	struct ibv_wc wc;
	uint32_t want = inet_addr(src);
	int n = 0;

	*total = 0;
	while (poll1(peer->cq, &wc, ms)) {
		uint32_t from;

		if (wc.opcode != IBV_WC_RECV)
			continue;
		++*total;
		/* the GRH's last 20 bytes are the IPv4 header */
		memcpy(&from, peer->buf + wc.wr_id * 512 + 20 + 12, 4);
		n += from == want;
		post_recv(peer, (int)wc.wr_id);
	}
	return n;
}

int main(int argc, char **argv)
{
	struct side r = { 0 }, x = { 0 };
	struct ibv_ah *ah, *ah2;
	struct ibv_pd *pd2;
	struct rxe_queue_buf *sq;
	struct ibv_wc wc;
	uint8_t mac[6];
	uint32_t num, xqpn;
	char own[INET_ADDRSTRLEN];
	int total;

	if (argc != 6 || sscanf(argv[5], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
				&mac[2], &mac[3], &mac[4], &mac[5]) != 6) {
		fprintf(stderr, "usage: %s ROXE_DEV ROXE_GIDX RXE_DEV RXE_GIDX RXE_MAC\n",
			argv[0]);
		return 2;
	}
	if (side_open(&r, argv[1], atoi(argv[2])) || side_open(&x, argv[3], atoi(argv[4]))) {
		printf("FAIL: setup: %s\n", strerror(errno));
		return 1;
	}
	xqpn = x.qp->qp_num;
	inet_ntop(AF_INET, r.gid.raw + 12, own, sizeof(own));
	for (int i = 0; i < 8; i++)
		post_recv(&x, i);

	/* 1. the ordinary way */
	ah = ah_to(&r, r.pd, &x);
	CHECK(ah, "create_ah on %s", argv[1]);
	if (!ah)
		return 1;
	memset(r.buf, 0x42, 64);
	CHECK(send_ud(&r, ah, xqpn, MAGIC) == 0, "post_send through the AH");
	CHECK(poll1(r.cq, &wc, 5000) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == MAGIC,
	      "the send completed (status %d)", wc.status);
	CHECK(received_from(&x, own, 2000, &total) == 1 && total == 1,
	      "the peer got it from %s, %s's own address (%d datagram(s))", own, argv[1], total);

	sq = find_sq(MAGIC, xqpn);
	CHECK(sq, "found the send ring among the uverbs mappings");
	if (!sq)
		return 1;
	num = ((struct rxe_send_wqe *)sq->data)->wr.wr.ud.ah_num;
	CHECK(num != 0, "the provider put the AH's number (%u) in the WQE, not a vector", num);

	/* 2. written by hand: no AH, then another PD's AH */
	pd2 = ibv_alloc_pd(r.ctx);
	ah2 = pd2 ? ah_to(&r, pd2, &x) : NULL;
	CHECK(ah2, "an AH in a second PD");
	for (int c = 0; c < 2; c++) {
		uint32_t forged_num = c == 0 ? 0 : num + 1;
		uint64_t id = MAGIC + 1 + (uint64_t)c;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
		int got = 0;

		forge(sq, id, forged_num, &x, mac);
		/* the provider's next post writes after it and rings the doorbell */
		CHECK(send_ud(&r, ah, xqpn, MAGIC + 10 + (uint64_t)c) == 0, "post_send after it");
		while (poll1(r.cq, &wc, 5000) == 1) {
			if (wc.wr_id == id) {
				got = 1;
				CHECK(wc.status == IBV_WC_LOC_QP_OP_ERR,
				      "ah_num %u and a vector from %s: the WQE failed (status %d, want %d)",
				      forged_num, FORGED_SRC, wc.status,
				      IBV_WC_LOC_QP_OP_ERR);
			}
			if (wc.wr_id == MAGIC + 10 + (uint64_t)c)
				break;
		}
		CHECK(got, "the hand-written WQE completed");
		CHECK(received_from(&x, FORGED_SRC, 1000, &total) == 0,
		      "nothing reached the peer from %s (%d datagram(s) in all)", FORGED_SRC,
		      total);
		/* SQE (UD's local error) back to RTS for the next case */
		ibv_modify_qp(r.qp, &a, IBV_QP_STATE);
	}
	if (ah2)
		ibv_destroy_ah(ah2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	ibv_destroy_ah(ah);
	return failed;
}
