// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_mw: memory windows through the stock libibverbs rxe provider, run in
 * the VM guest by kmod_counters.sh with roxe0 and kernel rxe's rxe0 on the
 * two ends of a veth pair.
 *
 *   kmod_mw OWNER PEER
 *
 * OWNER (a device name) allocates and binds windows over an MR that grants
 * no remote access of its own (LOCAL_WRITE | MW_BIND); PEER's RC QP, connected
 * to OWNER's, reads and writes through the window's rkey:
 *   caps      max_mw and IBV_DEVICE_MEM_WINDOW / _TYPE_2B
 *   type 1    ibv_bind_mw (IBV_WC_BIND_MW, the rkey's 8-bit key stepped),
 *             WRITE and READ through it (data checked), a WRITE just outside
 *             the window but inside the MR, ibv_dereg_mr while bound,
 *             unbinding (length 0), access after it
 *   type 2    IBV_WR_BIND_MW, WRITE and READ through it, LOCAL_INV then
 *             access, SEND_WITH_INV (the receive completion names the key)
 *             then access, a READ outside the window
 *   refusal   a bind over an MR registered without MW_BIND
 *   exit      with a type 1 window still bound (ib_core's cleanup)
 * Each case prints "case NAME: OBSERVED" (IBV_WC status names, errno
 * names); the script lines the two runs up. With roxe0 as OWNER every case
 * must give what IBA and rxe's rules say (expected values below); with
 * rxe0 as OWNER only the data path must work (PEER roxe0 reading and
 * writing through rxe's windows) and differences are printed as notes.
 * Exit 0 when every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>
#include "verbs_util.h"

#define MRLEN	(64 * 1024)
#define ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

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

static struct end o, p;		/* the owner of the windows, its peer */
static int strict;		/* the owner is roxe: every case must match */

static int end_open(struct end *e, const char *name, int access)
{
	e->name = name;
	e->ctx = open_dev(name);
	if (!e->ctx)
		return -1;
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, MRLEN);
	if (e->gidx < 0 || !e->pd || !e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, MRLEN);
	e->mr = ibv_reg_mr(e->pd, e->buf, MRLEN, access);
	return e->mr ? 0 : -1;
}

/* A new connected pair of RC QPs (the old ones, stopped by an error, go). */
static int connect_qps(void)
{
	struct end *ends[2] = { &o, &p };

	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = ends[i]->cq, .recv_cq = ends[i]->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		if (ends[i]->qp)
			ibv_destroy_qp(ends[i]->qp);
		ends[i]->qp = ibv_create_qp(ends[i]->pd, &ia);
		if (!ends[i]->qp)
			return -1;
	}
	if (rc_connect(o.qp, ACCESS, p.qp->qp_num, &p.gid, o.gidx) ||
	    rc_connect(p.qp, ACCESS, o.qp->qp_num, &o.gid, p.gidx))
		return -1;
	return 0;
}

/* One completion on e's CQ within 5 s: its status, -1 if none. */
static int one_wc(struct end *e, struct ibv_wc *wc)
{
	return wc_within(e->cq, wc, 5);
}

/* The peer's READ or WRITE of len bytes (p.buf) at raddr through rkey. */
static int remote(enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)p.buf, len, p.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(p.qp, &wr, &bad))
		return -1;
	return one_wc(&p, &wc);
}

static const char *st(int s)
{
	return s < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)s);
}

/* A case's outcome: printed for the table; a check where it must hold. */
static void outcome(const char *name, const char *seen, const char *want, int must)
{
	printf("case %s: %s\n", name, seen);
	if (strict || must)
		CHECK(!strcmp(seen, want), "%s owner %s: %s (expected %s)", name, o.name, seen,
		      want);
	else if (strcmp(seen, want))
		printf("note: %s owner %s: %s where roxe gives %s\n", name, o.name, seen, want);
	fflush(stdout);
}

static void outcome_st(const char *name, int seen, int want, int must)
{
	outcome(name, st(seen), st(want), must);
}

/* An IBV_WR_BIND_MW on the owner's QP; the completion's status. */
static int bind2(struct ibv_mw *mw, uint32_t rkey, struct ibv_mr *mr, uint64_t addr,
		 uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int s;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (ibv_post_send(o.qp, &wr, &bad))
		return -1;
	s = one_wc(&o, &wc);
	if (s == IBV_WC_SUCCESS) {
		CHECK(wc.opcode == IBV_WC_BIND_MW, "type 2 bind completes as IBV_WC_BIND_MW (%d)",
		      wc.opcode);
		mw->rkey = rkey;	/* the window's key from now on */
	}
	return s;
}

static int bind1(struct ibv_mw *mw, uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_mw_bind b = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { .mr = o.mr, .addr = addr, .length = len,
						.mw_access_flags = access } };
	uint32_t old = mw->rkey;
	struct ibv_wc wc;
	int s;

	if (ibv_bind_mw(o.qp, mw, &b))
		return -1;
	s = one_wc(&o, &wc);
	if (s == IBV_WC_SUCCESS)
		CHECK(wc.opcode == IBV_WC_BIND_MW, "type 1 bind completes as IBV_WC_BIND_MW (%d)",
		      wc.opcode);
	else
		mw->rkey = old;	/* the provider stepped it at post */
	return s;
}

static void case_caps(void)
{
	struct ibv_device_attr a;
	char s[64];

	if (ibv_query_device(o.ctx, &a)) {
		CHECK(0, "ibv_query_device %s", o.name);
		return;
	}
	snprintf(s, sizeof(s), "max_mw %d%s%s", a.max_mw,
		 a.device_cap_flags & IBV_DEVICE_MEM_WINDOW ? " MEM_WINDOW" : "",
		 a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B ? " TYPE_2B" : "");
	printf("case caps: %s\n", s);
	CHECK(a.max_mw > 0 && (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B), "%s reports windows: %s",
	      o.name, s);
}

static void case_type1(void)
{
	uint8_t *win = o.buf + 4096;
	uint64_t w = (uintptr_t)win;
	struct ibv_mw *mw = ibv_alloc_mw(o.pd, IBV_MW_TYPE_1);
	uint32_t key0;
	int s;

	if (!mw) {
		CHECK(0, "ibv_alloc_mw type 1 on %s: %s", o.name, strerror(errno));
		return;
	}
	key0 = mw->rkey;
	s = bind1(mw, w, 8192, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	outcome_st("t1-bind", s, IBV_WC_SUCCESS, 1);
	CHECK(mw->rkey == ((key0 & ~0xffu) | ((key0 + 1) & 0xff)),
	      "type 1 bind steps the key's low byte: 0x%x -> 0x%x", key0, mw->rkey);
	for (int i = 0; i < 8192; i++)
		p.buf[i] = (uint8_t)(i * 7 + 3);
	s = remote(IBV_WR_RDMA_WRITE, w, mw->rkey, 8192);
	outcome_st("t1-write", s, IBV_WC_SUCCESS, 1);
	CHECK(!memcmp(win, p.buf, 8192), "t1: the WRITE landed in the window");
	memset(p.buf, 0, 8192);
	s = remote(IBV_WR_RDMA_READ, w + 100, mw->rkey, 4000);
	outcome_st("t1-read", s, IBV_WC_SUCCESS, 1);
	CHECK(!memcmp(win + 100, p.buf, 4000), "t1: the READ returned the window's bytes");

	s = ibv_dereg_mr(o.mr);
	outcome("t1-dereg-bound", s == EINVAL ? "EINVAL" : s == EBUSY ? "EBUSY" : s ? "error" : "0",
		"EINVAL", 0);
	if (!s) {	/* rxe let it go: a new one for what follows */
		o.mr = ibv_reg_mr(o.pd, o.buf, MRLEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
		if (!o.mr)
			exit(1);
	}

	memset(o.buf, 0xee, 4096);
	s = remote(IBV_WR_RDMA_WRITE, w - 8, mw->rkey, 16);
	outcome_st("t1-write-outside", s, IBV_WC_REM_ACCESS_ERR, 0);
	printf("case t1-outside-bytes: %s\n", o.buf[4095] == 0xee ? "untouched" : "overwritten");
	if (strict)
		CHECK(o.buf[4095] == 0xee, "t1: nothing landed before the window");
	CHECK(!connect_qps(), "reconnect");

	/* unbind: the MR, length 0 (rxe's provider needs an MR) */
	s = bind1(mw, 0, 0, 0);
	outcome_st("t1-unbind", s, IBV_WC_SUCCESS, 1);
	s = remote(IBV_WR_RDMA_READ, w, mw->rkey, 64);
	outcome_st("t1-read-unbound", s, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(!connect_qps(), "reconnect");
	CHECK(!ibv_dealloc_mw(mw), "ibv_dealloc_mw type 1");
}

static void case_type2(void)
{
	uint8_t *win = o.buf + 16384;
	uint64_t w = (uintptr_t)win;
	struct ibv_mw *mw = ibv_alloc_mw(o.pd, IBV_MW_TYPE_2);
	struct ibv_wc wc;
	uint32_t key;
	int s;

	if (!mw) {
		CHECK(0, "ibv_alloc_mw type 2 on %s: %s", o.name, strerror(errno));
		return;
	}
	key = ibv_inc_rkey(mw->rkey);
	s = bind2(mw, key, o.mr, w, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	outcome_st("t2-bind", s, IBV_WC_SUCCESS, 1);
	for (int i = 0; i < 4096; i++)
		p.buf[i] = (uint8_t)(i * 13 + 1);
	s = remote(IBV_WR_RDMA_WRITE, w, key, 4096);
	outcome_st("t2-write", s, IBV_WC_SUCCESS, 1);
	CHECK(!memcmp(win, p.buf, 4096), "t2: the WRITE landed in the window");
	memset(p.buf, 0, 4096);
	s = remote(IBV_WR_RDMA_READ, w + 1000, key, 3000);
	outcome_st("t2-read", s, IBV_WC_SUCCESS, 1);
	CHECK(!memcmp(win + 1000, p.buf, 3000), "t2: the READ returned the window's bytes");

	/* LOCAL_INV */
	{
		struct ibv_send_wr wr = { .wr_id = 4, .opcode = IBV_WR_LOCAL_INV,
					  .invalidate_rkey = key,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		s = ibv_post_send(o.qp, &wr, &bad) ? -1 : one_wc(&o, &wc);
		outcome_st("t2-local-inv", s, IBV_WC_SUCCESS, 1);
	}
	s = remote(IBV_WR_RDMA_READ, w, key, 64);
	outcome_st("t2-read-after-local-inv", s, IBV_WC_REM_ACCESS_ERR, 1);
	CHECK(!connect_qps(), "reconnect");

	/* SEND_WITH_INV from the peer */
	key = ibv_inc_rkey(key);
	s = bind2(mw, key, o.mr, w, 4096, IBV_ACCESS_REMOTE_READ);
	outcome_st("t2-rebind", s, IBV_WC_SUCCESS, 1);
	{
		struct ibv_sge rs = { (uintptr_t)o.buf + 32768, 64, o.mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_sge ss = { (uintptr_t)p.buf, 16, p.mr->lkey };
		struct ibv_send_wr sw = { .wr_id = 6, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = key,
					  .send_flags = IBV_SEND_SIGNALED }, *sbad;
		char seen[96];

		if (ibv_post_recv(o.qp, &rwr, &rbad) || ibv_post_send(p.qp, &sw, &sbad)) {
			CHECK(0, "t2: post SEND_WITH_INV");
		} else {
			s = one_wc(&p, &wc);
			outcome_st("t2-send-inv", s, IBV_WC_SUCCESS, 1);
			s = one_wc(&o, &wc);
			/* rxe's kernel writes IB_WC_WITH_INVALIDATE (1 << 2) into
			 * the user CQ and its provider passes it on: libibverbs
			 * calls that bit IBV_WC_IP_CSUM_OK; either bit counts */
			snprintf(seen, sizeof(seen), "%s%s", st(s),
				 s == IBV_WC_SUCCESS &&
				 (wc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)) &&
				 wc.invalidated_rkey == key ? ", with the key" : "");
			printf("case t2-recv-inv-flags: 0x%x\n", wc.wc_flags);
			outcome("t2-recv-inv", seen, "success, with the key", 1);
		}
	}
	s = remote(IBV_WR_RDMA_READ, w, key, 64);
	outcome_st("t2-read-after-remote-inv", s, IBV_WC_REM_ACCESS_ERR, 1);
	CHECK(!connect_qps(), "reconnect");

	/* outside the window, inside the MR */
	key = ibv_inc_rkey(key);
	s = bind2(mw, key, o.mr, w, 4096, IBV_ACCESS_REMOTE_READ);
	outcome_st("t2-rebind-new-qp", s, IBV_WC_SUCCESS, 1);
	s = remote(IBV_WR_RDMA_READ, w + 4096 - 8, key, 16);
	outcome_st("t2-read-outside", s, IBV_WC_REM_ACCESS_ERR, 0);
	/* dealloc while bound, before its QP goes: 6.1's rxe underflows a
	 * refcount (a WARNING) when a QP with a bound type 2 window is
	 * destroyed first and the window deallocated after */
	CHECK(!ibv_dealloc_mw(mw), "ibv_dealloc_mw type 2 (bound)");
	CHECK(!connect_qps(), "reconnect");
}

static void case_refusal(void)
{
	struct ibv_mr *nobind = ibv_reg_mr(o.pd, o.buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *mw = ibv_alloc_mw(o.pd, IBV_MW_TYPE_2);
	int s;

	if (!nobind || !mw) {
		CHECK(0, "refusal setup on %s", o.name);
		return;
	}
	s = bind2(mw, ibv_inc_rkey(mw->rkey), nobind, (uintptr_t)o.buf, 64,
		  IBV_ACCESS_REMOTE_READ);
	outcome_st("bind-mr-without-mw-bind", s, IBV_WC_MW_BIND_ERR, 0);
	CHECK(!connect_qps(), "reconnect");
	CHECK(!ibv_dealloc_mw(mw) && !ibv_dereg_mr(nobind), "refusal cleanup");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: kmod_mw OWNER PEER\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	strict = !strncmp(argv[1], "roxe", 4);
	if (end_open(&o, argv[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND) ||
	    end_open(&p, argv[2], IBV_ACCESS_LOCAL_WRITE) || connect_qps()) {
		CHECK(0, "setup: %s owner, %s peer", argv[1], argv[2]);
		return 1;
	}
	printf("owner %s, peer %s\n", o.name, p.name);
	case_caps();
	case_type1();
	case_type2();
	case_refusal();
	/* exit with a window bound to the MR: ib_core's cleanup may try the
	 * MR first, which fails while the window is bound; it must get there
	 * (kmod_counters.sh checks dmesg for a WARNING) */
	{
		struct ibv_mw *mw = ibv_alloc_mw(o.pd, IBV_MW_TYPE_1);

		CHECK(mw && bind1(mw, (uintptr_t)o.buf, 4096, IBV_ACCESS_REMOTE_READ) ==
		      IBV_WC_SUCCESS, "a window left bound at exit");
	}
	return failed;
}
