// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_odp: on-demand paging MRs (IBV_ACCESS_ON_DEMAND) through the stock
 * libibverbs rxe provider, run in the VM guest by kmod_odp.sh on a kernel
 * whose rxe has ODP (6.15 on; trixie-backports' 7.3).
 *
 *   kmod_odp OWNER PEER
 *
 * OWNER registers ODP MRs over anonymous memory it has not touched yet;
 * PEER, an RC QP connected to OWNER's, uses them with ordinary MRs of its
 * own. Every byte moved is checked. Cases:
 *   caps        ODP caps of OWNER (printed: the script compares roxe0's
 *               with rxe's) and IBV_ODP_SUPPORT
 *   untouched   registration faults nothing in (mincore), PEER's WRITE
 *               into never-touched pages lands
 *   read        PEER READs what the application wrote after registering
 *   send/recv   OWNER receives into and sends from ODP memory
 *   requester   OWNER WRITEs from and READs into ODP memory
 *   atomics     FETCH_ADD and CMP_SWAP on an untouched ODP page
 *   ud          UD SEND into and out of ODP pages
 *   srq         an RC SEND into an SRQ receive in ODP pages
 *   dontneed    madvise(MADV_DONTNEED) of a range the device used, then
 *               rewritten: PEER's READ sees the new bytes, its WRITE reaches
 *               the application (the MMU notifier's invalidation)
 *   remap       munmap + mmap(MAP_FIXED) of a used range: the same
 *   advise      ibv_advise_mr's kernel verb (the ioctl: Debian 12's rxe
 *               provider has no advise_mr op): PREFETCH_NO_FAULT faults
 *               nothing, PREFETCH_WRITE and PREFETCH fault the range in
 *               (mincore), an unknown lkey is EINVAL, then traffic
 *   unmapped    PEER's READ of a range OWNER unmapped: a remote access
 *               error, as rxe answers (last: the QPs end in error)
 * Exit 0 when every check passed, 4 when OWNER has no ODP (then the error
 * of an ODP registration is printed: rxe's and roxe's must be the same).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include "verbs_util.h"

#define PG		4096UL
#define OLEN		(1024 * 1024UL)		/* OWNER's ODP buffer */
#define PLEN		(512 * 1024UL)		/* PEER's buffer */
#define ALEN		(64 * PG)		/* advise's buffer */
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct end {
	const char		*name;
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	uint8_t			*buf;
	struct ibv_mr		*mr;
	union ibv_gid		gid;
	int			gidx;
};

static struct end o, p;

static int end_open(struct end *e, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	e->name = name;
	e->ctx = open_dev(name);
	if (!e->ctx)
		return -1;
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	if (e->gidx < 0 || !e->pd || !e->cq)
		return -1;
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	return e->qp ? 0 : -1;
}

/* One completion on e's CQ within 10 s: its status, -1 if none. */
static int one_wc(struct end *e, struct ibv_wc *wc)
{
	return wc_within(e->cq, wc, 10);
}

static const char *st(int s)
{
	return s < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)s);
}

/* e posts op of len bytes at laddr (lkey) to raddr (rkey); its status. */
static int rdma(struct end *e, enum ibv_wr_opcode op, void *laddr, uint32_t lkey, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(e->qp, &wr, &bad))
		return -1;
	return one_wc(e, &wc);
}

/* PEER's atomic on OWNER's 8 bytes at raddr: the status; *old the value. */
static int atomic(enum ibv_wr_opcode op, uint64_t raddr, uint64_t add_cmp, uint64_t swap,
		  uint64_t *old)
{
	struct ibv_sge sge = { (uintptr_t)p.buf, 8, p.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int s;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = o.mr->rkey;
	wr.wr.atomic.compare_add = add_cmp;
	wr.wr.atomic.swap = swap;
	if (ibv_post_send(p.qp, &wr, &bad))
		return -1;
	s = one_wc(&p, &wc);
	memcpy(old, p.buf, 8);
	return s;
}

/* from SRC's buffer at saddr to DST's ODP or not at daddr: a SEND into a
 * posted receive; the worse of the two statuses */
static int send_recv(struct end *src, void *saddr, uint32_t slkey, struct end *dst, void *daddr,
		     uint32_t dlkey, uint32_t len)
{
	struct ibv_sge rs = { (uintptr_t)daddr, len, dlkey }, ss = { (uintptr_t)saddr, len, slkey };
	struct ibv_recv_wr rw = { .wr_id = 3, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr sw = { .wr_id = 4, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	int s;

	if (ibv_post_recv(dst->qp, &rw, &rbad) || ibv_post_send(src->qp, &sw, &sbad))
		return -1;
	s = one_wc(src, &wc);
	if (s)
		return s;
	s = one_wc(dst, &wc);
	if (!s && wc.byte_len != len)
		return -1;
	return s;
}

/* byte i of run seed: a multiplicative hash, so that no packet or page of
 * a run passes for another (a byte pattern repeating every 1 KiB would
 * take a packet written at the wrong offset for the right one) */
static uint8_t pat(size_t i, unsigned int seed)
{
	return (uint8_t)(((uint32_t)i * 2654435761u + seed * 40503u) >> 24);
}

static void fill(uint8_t *b, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat(i, seed);
}

/* the first byte that is not fill()'s from byte off of its run on, -1
 * if all are */
static long bad_byte_at(const uint8_t *b, size_t len, unsigned int seed, size_t off)
{
	for (size_t i = off; i < off + len; i++)
		if (b[i - off] != pat(i, seed))
			return (long)(i - off);
	return -1;
}

static long bad_byte(const uint8_t *b, size_t len, unsigned int seed)
{
	return bad_byte_at(b, len, seed, 0);
}

/* pages of [b, b + len) resident in the application's mm */
static long resident(void *b, size_t len)
{
	unsigned char v[OLEN / PG];
	long n = 0;

	if (len > OLEN || mincore(b, len, v))
		return -1;
	for (size_t i = 0; i < len / PG; i++)
		n += v[i] & 1;
	return n;
}

#define CHECK_DATA(buf, len, seed, ...) do {					\
	long _b = bad_byte(buf, len, seed);					\
	CHECK(_b < 0, __VA_ARGS__);						\
	if (_b >= 0)								\
		printf("    byte %ld: 0x%02x\n", _b, (buf)[_b]);		\
} while (0)

/* advise_mr's kernel verb, as libibverbs' ibv_cmd_advise_mr() issues it;
 * 0 or an errno */
static int advise(struct ibv_pd *pd, uint32_t advice, uint32_t flags, void *addr, uint32_t len,
		  uint32_t lkey)
{
	struct ib_uverbs_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	uint64_t buf[(sizeof(struct ib_uverbs_ioctl_hdr) + 4 * sizeof(struct ib_uverbs_attr)) / 8] = { 0 };
	struct ib_uverbs_ioctl_hdr *h = (void *)buf;
	struct ib_uverbs_attr *a = h->attrs;

	h->length = sizeof(buf);
	h->object_id = UVERBS_OBJECT_MR;
	h->method_id = UVERBS_METHOD_ADVISE_MR;
	h->num_attrs = 4;
	h->driver_id = RDMA_DRIVER_RXE;
	a[0].attr_id = UVERBS_ATTR_ADVISE_MR_PD_HANDLE;
	a[0].data = pd->handle;
	a[1].attr_id = UVERBS_ATTR_ADVISE_MR_ADVICE;
	a[1].len = 8;
	a[1].data = advice;
	a[2].attr_id = UVERBS_ATTR_ADVISE_MR_FLAGS;
	a[2].len = 8;
	a[2].data = flags;
	a[3].attr_id = UVERBS_ATTR_ADVISE_MR_SGE_LIST;
	a[3].len = sizeof(sge);
	a[3].data = (uintptr_t)&sge;
	return ioctl(pd->context->cmd_fd, RDMA_VERBS_IOCTL, buf) ? errno : 0;
}

/* A UD QP of e's in RTS (Q_Key QKEY); NULL on failure. */
#define QKEY	0x11111111
static struct ibv_qp *ud_qp(struct end *e)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? NULL : qp;
}

/* A UD datagram of len bytes from src's QP sq (saddr, slkey) to dst's QP
 * dq, received at daddr (dlkey: room for the GRH, then the payload); the
 * worse status. */
static int ud_send(struct end *src, struct ibv_qp *sq, void *saddr, uint32_t slkey,
		   struct end *dst, struct ibv_qp *dq, void *daddr, uint32_t dlkey, uint32_t len)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_sge rs = { (uintptr_t)daddr, len + 40, dlkey }, ss = { (uintptr_t)saddr, len, slkey };
	struct ibv_recv_wr rw = { .wr_id = 5, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr sw = { .wr_id = 6, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int s;

	aa.grh.dgid = dst->gid;
	aa.grh.sgid_index = (uint8_t)src->gidx;
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(src->pd, &aa);
	if (!ah)
		return -1;
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = dq->qp_num;
	sw.wr.ud.remote_qkey = QKEY;
	s = -1;
	if (!ibv_post_recv(dq, &rw, &rbad) && !ibv_post_send(sq, &sw, &sbad)) {
		s = one_wc(src, &wc);
		if (!s) {
			s = one_wc(dst, &wc);
			if (!s && wc.byte_len != len + 40)
				s = -1;
		}
	}
	ibv_destroy_ah(ah);
	return s;
}

static void *anon(void *at, size_t len)
{
	void *b = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);

	return b == MAP_FAILED ? NULL : b;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx;
	uint8_t *ob, *ab, *r;
	struct ibv_mr *am, *rom;
	uint64_t old = 0, v;
	int s, e;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OWNER PEER\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (end_open(&o, argv[1]) || end_open(&p, argv[2])) {
		printf("FAIL: cannot open %s and %s (devices, GIDs, PD, CQ, QP)\n", argv[1], argv[2]);
		return 1;
	}
	/* caps */
	memset(&dx, 0, sizeof(dx));
	if (ibv_query_device_ex(o.ctx, NULL, &dx)) {
		printf("FAIL: ibv_query_device_ex %s\n", o.name);
		return 1;
	}
	printf("caps: general 0x%lx rc 0x%x uc 0x%x ud 0x%x\n",
	       (unsigned long)dx.odp_caps.general_caps, dx.odp_caps.per_transport_caps.rc_odp_caps,
	       dx.odp_caps.per_transport_caps.uc_odp_caps, dx.odp_caps.per_transport_caps.ud_odp_caps);
	if (!(dx.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		/* the refusal's error, for the script to line up with rxe's */
		ob = anon(NULL, PG);
		o.mr = ob ? ibv_reg_mr(o.pd, ob, PG, ACCESS | IBV_ACCESS_ON_DEMAND) : NULL;
		printf("case no ODP, registration: %s\n", o.mr ? "registered" : strerror(errno));
		printf("skip: %s has no ODP\n", o.name);
		return 4;
	}
	CHECK(1, "%s offers ODP", o.name);

	/* the buffers: OWNER's never touched before its registration */
	ob = anon(NULL, OLEN);
	p.buf = anon(NULL, PLEN);
	if (!ob || !p.buf)
		return 1;
	memset(p.buf, 0, PLEN);
	p.mr = ibv_reg_mr(p.pd, p.buf, PLEN, ACCESS);
	o.mr = ibv_reg_mr(o.pd, ob, OLEN, ACCESS | IBV_ACCESS_ON_DEMAND);
	CHECK(p.mr && o.mr, "ODP MR of %lu bytes on %s (%s)", OLEN, o.name,
	      o.mr ? "registered" : strerror(errno));
	if (!p.mr || !o.mr)
		return 1;
	if (rc_connect(o.qp, ACCESS, p.qp->qp_num, &p.gid, o.gidx) ||
	    rc_connect(p.qp, ACCESS, o.qp->qp_num, &o.gid, p.gidx)) {
		printf("FAIL: RC connect %s - %s\n", o.name, p.name);
		return 1;
	}
	CHECK(resident(ob, OLEN) == 0, "registration faulted nothing in (%ld pages resident)",
	      resident(ob, OLEN));

	/* untouched: PEER WRITEs 256 KiB into pages never touched */
	fill(p.buf, 256 * 1024, 1);
	s = rdma(&p, IBV_WR_RDMA_WRITE, p.buf, p.mr->lkey, 256 * 1024, (uintptr_t)ob, o.mr->rkey);
	CHECK(s == 0, "untouched: WRITE 256 KiB into untouched ODP pages: %s", st(s));
	CHECK_DATA(ob, 256 * 1024, 1, "untouched: every byte of the WRITE in the application's pages");

	/* read: the application writes after registering, PEER READs */
	fill(ob + 256 * 1024, 256 * 1024, 2);
	memset(p.buf, 0, PLEN);
	s = rdma(&p, IBV_WR_RDMA_READ, p.buf, p.mr->lkey, 256 * 1024, (uintptr_t)ob + 256 * 1024,
		 o.mr->rkey);
	CHECK(s == 0, "read: READ 256 KiB from ODP pages: %s", st(s));
	CHECK_DATA(p.buf, 256 * 1024, 2, "read: every byte READ is the application's");

	/* send/recv: into untouched ODP pages, and out of ODP pages */
	fill(p.buf, 64 * 1024, 3);
	s = send_recv(&p, p.buf, p.mr->lkey, &o, ob + 512 * 1024, o.mr->lkey, 64 * 1024);
	CHECK(s == 0, "send/recv: SEND 64 KiB into an ODP receive buffer: %s", st(s));
	CHECK_DATA(ob + 512 * 1024, 64 * 1024, 3, "send/recv: every byte received in ODP pages");
	fill(ob + 576 * 1024, 64 * 1024, 4);
	memset(p.buf, 0, PLEN);
	s = send_recv(&o, ob + 576 * 1024, o.mr->lkey, &p, p.buf, p.mr->lkey, 64 * 1024);
	CHECK(s == 0, "send/recv: SEND 64 KiB from ODP pages: %s", st(s));
	CHECK_DATA(p.buf, 64 * 1024, 4, "send/recv: every byte sent from ODP pages");

	/* requester: OWNER WRITEs from and READs into its ODP pages */
	memset(p.buf, 0, PLEN);
	s = rdma(&o, IBV_WR_RDMA_WRITE, ob + 576 * 1024, o.mr->lkey, 64 * 1024, (uintptr_t)p.buf,
		 p.mr->rkey);
	CHECK(s == 0, "requester: WRITE 64 KiB from ODP pages: %s", st(s));
	CHECK_DATA(p.buf, 64 * 1024, 4, "requester: every byte written from ODP pages");
	fill(p.buf + 128 * 1024, 128 * 1024, 5);
	s = rdma(&o, IBV_WR_RDMA_READ, ob + 768 * 1024, o.mr->lkey, 128 * 1024,
		 (uintptr_t)p.buf + 128 * 1024, p.mr->rkey);
	CHECK(s == 0, "requester: READ 128 KiB into untouched ODP pages: %s", st(s));
	CHECK_DATA(ob + 768 * 1024, 128 * 1024, 5, "requester: every byte read into ODP pages");

	/* atomics on an untouched page */
	r = ob + 640 * 1024;
	s = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)r, 5, 0, &old);
	CHECK(s == 0 && old == 0, "atomics: FETCH_ADD 5 on an untouched ODP page: %s, old %lu", st(s),
	      (unsigned long)old);
	s = atomic(IBV_WR_ATOMIC_CMP_AND_SWP, (uintptr_t)r, 5, 0x1122334455667788ULL, &old);
	memcpy(&v, r, 8);
	CHECK(s == 0 && old == 5 && v == 0x1122334455667788ULL,
	      "atomics: CMP_SWAP 5 -> 0x1122334455667788: %s, old %lu, now 0x%lx", st(s),
	      (unsigned long)old, (unsigned long)v);
	v = 100;
	memcpy(r, &v, 8);
	s = atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)r, 1, 0, &old);
	memcpy(&v, r, 8);
	CHECK(s == 0 && old == 100 && v == 101,
	      "atomics: FETCH_ADD 1 after the application's store of 100: %s, old %lu, now %lu",
	      st(s), (unsigned long)old, (unsigned long)v);

	/* ud: a datagram into untouched ODP pages, and one out of ODP pages */
	{
		struct ibv_qp *ou = ud_qp(&o), *pu = ud_qp(&p);

		CHECK(ou && pu, "ud: UD QPs in RTS");
		if (!ou || !pu)
			return 1;
		fill(p.buf, 1000, 11);
		s = ud_send(&p, pu, p.buf, p.mr->lkey, &o, ou, ob + 896 * 1024, o.mr->lkey, 1000);
		CHECK(s == 0, "ud: SEND 1000 bytes into an ODP receive buffer: %s", st(s));
		CHECK_DATA(ob + 896 * 1024 + 40, 1000, 11, "ud: every byte received in ODP pages");
		fill(ob + 960 * 1024, 1000, 12);
		memset(p.buf, 0, PLEN);
		s = ud_send(&o, ou, ob + 960 * 1024, o.mr->lkey, &p, pu, p.buf, p.mr->lkey, 1000);
		CHECK(s == 0, "ud: SEND 1000 bytes from ODP pages: %s", st(s));
		CHECK_DATA(p.buf + 40, 1000, 12, "ud: every byte sent from ODP pages");
		ibv_destroy_qp(ou);
		ibv_destroy_qp(pu);
	}

	/* srq: an RC SEND into an SRQ receive in untouched ODP pages */
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_srq *srq = ibv_create_srq(o.pd, &sa);
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC, .srq = srq,
			.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		};
		struct ibv_sge rs = { (uintptr_t)ob + 928 * 1024, 16 * 1024, o.mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_sge ss = { (uintptr_t)p.buf, 16 * 1024, p.mr->lkey };
		struct ibv_send_wr sw = { .wr_id = 8, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;
		struct ibv_qp *oq, *pq;
		struct ibv_wc wc;

		ia.send_cq = ia.recv_cq = o.cq;
		oq = srq ? ibv_create_qp(o.pd, &ia) : NULL;
		ia.srq = NULL;
		ia.cap.max_recv_wr = 4;
		ia.cap.max_recv_sge = 1;
		ia.send_cq = ia.recv_cq = p.cq;
		pq = ibv_create_qp(p.pd, &ia);
		CHECK(oq && pq && !rc_connect(oq, ACCESS, pq->qp_num, &p.gid, o.gidx) &&
		      !rc_connect(pq, ACCESS, oq->qp_num, &o.gid, p.gidx),
		      "srq: an RC QP on an SRQ, connected");
		if (!oq || !pq)
			return 1;
		fill(p.buf, 16 * 1024, 13);
		s = -1;
		if (!ibv_post_srq_recv(srq, &rw, &rbad) && !ibv_post_send(pq, &sw, &sbad)) {
			s = one_wc(&p, &wc);
			if (!s)
				s = one_wc(&o, &wc);
		}
		CHECK(s == 0, "srq: SEND 16 KiB into an SRQ receive in ODP pages: %s", st(s));
		CHECK_DATA(ob + 928 * 1024, 16 * 1024, 13, "srq: every byte received in ODP pages");
		ibv_destroy_qp(oq);
		ibv_destroy_qp(pq);
		ibv_destroy_srq(srq);
	}

	/* dontneed: the first 64 KiB (the device wrote them above) dropped,
	 * then rewritten by the application: new pages behind the MR */
	CHECK(!madvise(ob, 64 * 1024, MADV_DONTNEED), "dontneed: madvise(MADV_DONTNEED)");
	CHECK(ob[0] == 0 && ob[64 * 1024 - 1] == 0, "dontneed: the range reads 0 in the application");
	fill(ob, 64 * 1024, 6);
	memset(p.buf, 0, PLEN);
	s = rdma(&p, IBV_WR_RDMA_READ, p.buf, p.mr->lkey, 64 * 1024, (uintptr_t)ob, o.mr->rkey);
	CHECK(s == 0, "dontneed: READ after the rewrite: %s", st(s));
	CHECK_DATA(p.buf, 64 * 1024, 6, "dontneed: READ returns the rewritten bytes");
	CHECK(!madvise(ob, 64 * 1024, MADV_DONTNEED), "dontneed: madvise again");
	fill(p.buf, 64 * 1024, 7);
	s = rdma(&p, IBV_WR_RDMA_WRITE, p.buf, p.mr->lkey, 64 * 1024, (uintptr_t)ob, o.mr->rkey);
	CHECK(s == 0, "dontneed: WRITE after the drop: %s", st(s));
	CHECK_DATA(ob, 64 * 1024, 7, "dontneed: the WRITE reaches the application's new pages");

	/* remap: 64 KiB the device READ above unmapped and mapped anew */
	r = ob + 256 * 1024;
	CHECK(!munmap(r, 64 * 1024) && anon(r, 64 * 1024) == r, "remap: munmap + mmap(MAP_FIXED)");
	fill(r, 64 * 1024, 8);
	memset(p.buf, 0, PLEN);
	s = rdma(&p, IBV_WR_RDMA_READ, p.buf, p.mr->lkey, 64 * 1024, (uintptr_t)r, o.mr->rkey);
	CHECK(s == 0, "remap: READ of the new mapping: %s", st(s));
	CHECK_DATA(p.buf, 64 * 1024, 8, "remap: READ returns the new mapping's bytes");
	fill(p.buf, 64 * 1024, 9);
	s = rdma(&p, IBV_WR_RDMA_WRITE, p.buf, p.mr->lkey, 64 * 1024, (uintptr_t)r, o.mr->rkey);
	CHECK(s == 0, "remap: WRITE into the new mapping: %s", st(s));
	CHECK_DATA(r, 64 * 1024, 9, "remap: the WRITE reaches the new mapping");
	/* and the rest of the MR is as the device left it */
	e = (int)bad_byte_at(ob + 320 * 1024, 192 * 1024, 2, 64 * 1024);
	CHECK(e < 0, "remap: the pages after it keep their bytes (%d)", e);

	/* advise */
	ab = anon(NULL, ALEN);
	am = ab ? ibv_reg_mr(o.pd, ab, ALEN, ACCESS | IBV_ACCESS_ON_DEMAND) : NULL;
	rom = ibv_reg_mr(o.pd, ob, PG, IBV_ACCESS_ON_DEMAND);	/* read-only */
	if (!am || !rom) {
		printf("FAIL: advise: ODP MRs (%s)\n", strerror(errno));
		return 1;
	}
	e = ibv_advise_mr(o.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
			  &(struct ibv_sge){ (uintptr_t)ab, PG, am->lkey }, 1);
	printf("note: libibverbs' ibv_advise_mr: %s\n", e ? strerror(e) : "done");
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ab, ALEN, am->lkey);
	CHECK(e == 0 && resident(ab, ALEN) == 0,
	      "advise: PREFETCH_NO_FAULT: %s, %ld pages resident (0)", strerror(e),
	      resident(ab, ALEN));
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ab, ALEN / 2, am->lkey);
	CHECK(e == 0 && resident(ab, ALEN / 2) == (long)(ALEN / 2 / PG) &&
	      resident(ab + ALEN / 2, ALEN / 2) == 0,
	      "advise: PREFETCH_WRITE of the first half: %s, %ld and %ld pages resident (%lu, 0)",
	      strerror(e), resident(ab, ALEN / 2), resident(ab + ALEN / 2, ALEN / 2), ALEN / 2 / PG);
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ab + ALEN / 2, ALEN / 2, am->lkey);
	CHECK(e == 0 && resident(ab, ALEN) == (long)(ALEN / PG),
	      "advise: PREFETCH of the second half: %s, %ld pages resident (%lu)", strerror(e),
	      resident(ab, ALEN), ALEN / PG);
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0, ab, ALEN, am->lkey);
	CHECK(e == 0, "advise: PREFETCH_WRITE without FLUSH (best effort): %s", strerror(e));
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ab, ALEN, 0xfffffe00);
	CHECK(e == EINVAL, "advise: an lkey of no MR: %s (EINVAL)", strerror(e));
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ob, PG, rom->lkey);
	printf("case advise read-only MR: %s\n", strerror(e));
	e = advise(o.pd, IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH, IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
		   ab, ALEN + PG, am->lkey);
	printf("case advise beyond the MR: %s\n", strerror(e));
	/* roxed's use of what was prefetched */
	fill(p.buf, ALEN, 10);
	s = rdma(&p, IBV_WR_RDMA_WRITE, p.buf, p.mr->lkey, ALEN, (uintptr_t)ab, am->rkey);
	CHECK(s == 0, "advise: WRITE into the prefetched MR: %s", st(s));
	CHECK_DATA(ab, ALEN, 10, "advise: every byte in the application's pages");
	memset(p.buf, 0, PLEN);
	s = rdma(&p, IBV_WR_RDMA_READ, p.buf, p.mr->lkey, ALEN, (uintptr_t)ab, am->rkey);
	CHECK(s == 0 && bad_byte(p.buf, ALEN, 10) < 0, "advise: READ it back: %s", st(s));

	/* unmapped: a range of the MR the application unmapped is an access
	 * error, not bytes of nobody's (the QPs end in error: last) */
	r = ob + 992 * 1024;
	CHECK(!munmap(r, 32 * 1024), "unmapped: munmap of 32 KiB of the MR");
	s = rdma(&p, IBV_WR_RDMA_READ, p.buf, p.mr->lkey, 4096, (uintptr_t)r + 4096, o.mr->rkey);
	printf("case unmapped: READ of it: %s\n", st(s));
	CHECK(s == IBV_WC_REM_ACCESS_ERR, "unmapped: READ of it: %s (remote access error)", st(s));

	CHECK(!ibv_dereg_mr(rom) && !ibv_dereg_mr(am) && !ibv_dereg_mr(o.mr),
	      "ODP MRs deregistered");
	ibv_destroy_qp(o.qp);
	ibv_destroy_qp(p.qp);
	return failed;
}
