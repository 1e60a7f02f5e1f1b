// SPDX-License-Identifier: GPL-2.0-only
/*
 * MRs in the UMEM (roxe_alloc_umem_mr) between two roxe hosts in network
 * namespaces over veth, AF_XDP with multi-buffer sockets: RC SEND, WRITE
 * and READ (whose responses come from the peer's UMEM MR) leave without
 * the MR -> UMEM copy, at path MTU 1024 and 4096, payloads at every
 * offset into a chunk and of every length modulo 4 (pad), every byte
 * checked; roxe_query_umem's counters show each data frame went in place
 * (the claim fails for a copied frame: copied_path_fails_the_claim);
 * the reserve's bounds and errors; and through faultwire's losses
 * (the middle namespace, real clock), retransmissions in place too.
 * The exact-count cases run on the virtual clock (engine.h): no timer
 * fires behind their back, so no retransmission adds frames.
 */
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/verbs.h"
#include "roxe/limits.h"
#include "transport/transport.h"
#include "transport/engine.h"

#define VC_START_NS	(1000ull * 1000000000ull)
#define BUF		(1u << 20)
#define RESERVE		(4u << 20)
#define UMR		(1u << 20)		/* each host's UMEM MR */
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* The data frames of a message of len bytes at path MTU mtu. */
static uint64_t frames_of(uint32_t len, uint32_t mtu)
{
	return len ? (len + mtu - 1) / mtu : 1;
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t k = 0; k < len; k++)
		p[k] = (uint8_t)(k * 131 + seed * 7 + (k >> 12));
}

/* The claim the tests make of a run: frames data frames went in place,
 * none was copied. */
static bool inplace_claim(const struct roxe_umem_stats *before, const struct roxe_umem_stats *after,
			  uint64_t frames)
{
	return after->tx_inplace - before->tx_inplace == frames &&
	       after->tx_copied == before->tx_copied;
}

static int umem_of(struct host *h, struct roxe_umem_stats *st)
{
	return roxe_query_umem(h->dev, st);
}

/* One signaled WR of op over sges, waited for on cq. */
static int post_wait(struct roxe_qp *qp, struct roxe_cq *cq, enum ibv_wr_opcode op,
		     struct ibv_sge *sge, int nsge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = sge, .num_sge = nsge, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int err;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	err = roxe_post_send(qp, &wr, &bad);
	if (err)
		return err;
	if (wait_wc(cq, &wc, 10000) != 1)
		return -ETIMEDOUT;
	return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
}

FIXTURE(umem) {
	struct topo	t;
	struct host	h[2];
	struct roxe_mr	*um[2];		/* each host's UMEM MR */
	uint32_t	mtu;
	bool		up;
};

FIXTURE_VARIANT(umem) {
	int		if_mtu;
	enum ibv_mtu	path_mtu;
	uint32_t	mtu;
};

FIXTURE_VARIANT_ADD(umem, mtu_1024) { .if_mtu = 1500, .path_mtu = IBV_MTU_1024, .mtu = 1024 };
FIXTURE_VARIANT_ADD(umem, mtu_4096) { .if_mtu = 9000, .path_mtu = IBV_MTU_4096, .mtu = 4096 };

FIXTURE_SETUP(umem)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 256,
		.max_wr = 64, .buf_len = BUF, .access = ACCESS, .rd_atomic = 4,
		.path_mtu = variant->path_mtu, .umem_mr_bytes = RESERVE, .max_sge = 2,
	};
	int err;

	roxe_clock_virtual(VC_START_NS);	/* before any engine starts */
	self->mtu = variant->mtu;
	ASSERT_EQ(0, topo_up(&self->t, "um", 1, variant->if_mtu));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		topo_down(&self->t);
		self->up = false;
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, roxe_alloc_umem_mr(self->h[i].pd, UMR, ACCESS, &self->um[i]));
}

FIXTURE_TEARDOWN(umem)
{
	for (int i = 0; i < 2; i++)
		if (self->um[i])
			roxe_dereg_mr(self->um[i]);
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

/* Offsets into a chunk (the payload then crosses one: a descriptor per
 * chunk) and lengths of every residue modulo 4 (pad bytes in the tail). */
static const uint32_t offs[] = { 0, 1, 100, 4093 };
static const uint32_t lens[] = { 1, 3, 1000, 1024, 1025, 4096, 4099, 3 * 4096 + 5, 65536 + 2 };

TEST_F(umem, send_write_read_in_place)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint8_t *src = self->um[0]->addr, *bsrc = self->um[1]->addr;
	struct roxe_umem_stats a0, a1, b0, b1;
	uint64_t a_frames = 0, b_frames = 0;

	ASSERT_EQ(0, umem_of(a, &a0));
	if (!a0.inplace)
		SKIP(return, "the sockets are not multi-buffer (Linux < 6.6): every frame is copied");
	ASSERT_EQ(0, umem_of(b, &b0));
	EXPECT_EQ((uint64_t)RESERVE, a0.reserve_bytes);
	EXPECT_EQ((uint64_t)RESERVE - UMR, a0.reserve_free);
	fill(src, UMR, 1);
	fill(bsrc, UMR, 2);
	for (unsigned i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			uint32_t off = offs[i] + k * 8192, len = lens[k];
			uint8_t *dst = b->buf + 4096 + k;
			struct ibv_sge sge = { (uintptr_t)(src + off), len, self->um[0]->lkey };
			struct ibv_sge rs = { (uintptr_t)dst, len, b->mr->lkey };
			struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
			struct ibv_wc wc;

			/* WRITE from a's UMEM MR */
			memset(dst, 0, len);
			ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_WRITE, &sge, 1,
					       (uintptr_t)dst, b->mr->rkey)) TH_LOG("write %u at %u", len, off);
			ASSERT_EQ(0, memcmp(src + off, dst, len)) TH_LOG("write %u at %u", len, off);
			a_frames += frames_of(len, self->mtu);
			/* SEND from it */
			memset(dst, 0, len);
			ASSERT_EQ(0, roxe_post_recv(b->qp[0], &rwr, &rbad));
			ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_SEND, &sge, 1, 0, 0));
			ASSERT_EQ(1, wait_wc(b->cq, &wc, 10000));
			ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
			ASSERT_EQ(len, wc.byte_len);
			ASSERT_EQ(0, memcmp(src + off, dst, len)) TH_LOG("send %u at %u", len, off);
			a_frames += frames_of(len, self->mtu);
			/* READ of b's UMEM MR: its responses leave b in place */
			sge = (struct ibv_sge){ (uintptr_t)(a->buf + 4096 + k), len, a->mr->lkey };
			memset(a->buf + 4096 + k, 0, len);
			ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_READ, &sge, 1,
					       (uintptr_t)(bsrc + off), self->um[1]->rkey));
			ASSERT_EQ(0, memcmp(bsrc + off, a->buf + 4096 + k, len)) TH_LOG("read %u at %u", len, off);
			b_frames += frames_of(len, self->mtu);
		}
	ASSERT_EQ(0, umem_of(a, &a1));
	ASSERT_EQ(0, umem_of(b, &b1));
	EXPECT_TRUE(inplace_claim(&a0, &a1, a_frames))
		TH_LOG("a: %llu in place (of %llu), %llu copied",
		       (unsigned long long)(a1.tx_inplace - a0.tx_inplace),
		       (unsigned long long)a_frames, (unsigned long long)(a1.tx_copied - a0.tx_copied));
	EXPECT_TRUE(inplace_claim(&b0, &b1, b_frames))
		TH_LOG("b: %llu in place (of %llu), %llu copied",
		       (unsigned long long)(b1.tx_inplace - b0.tx_inplace),
		       (unsigned long long)b_frames, (unsigned long long)(b1.tx_copied - b0.tx_copied));
	EXPECT_EQ(0u, a->dev->qp_stats[roxe_qp_num(a->qp[0])].retransmits);
}

/* A payload across two SGEs of the UMEM MR is copied: counted as such, and
 * the in-place claim made of it fails. An ordinary MR counts neither. */
TEST_F(umem, copied_path_fails_the_claim)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint8_t *src = self->um[0]->addr;
	struct roxe_umem_stats s0, s1, s2;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)src, 300, self->um[0]->lkey },
		{ (uintptr_t)(src + 8192), 212, self->um[0]->lkey },
	};

	fill(src, 3 * 4096, 3);
	ASSERT_EQ(0, umem_of(a, &s0));
	ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_WRITE, sge, 2, (uintptr_t)b->buf,
			       b->mr->rkey));
	ASSERT_EQ(0, memcmp(src, b->buf, 300));
	ASSERT_EQ(0, memcmp(src + 8192, b->buf + 300, 212));
	ASSERT_EQ(0, umem_of(a, &s1));
	EXPECT_EQ(1u, s1.tx_copied - s0.tx_copied);
	EXPECT_EQ(0u, s1.tx_inplace - s0.tx_inplace);
	EXPECT_FALSE(inplace_claim(&s0, &s1, 1));	/* the claim can fail */
	/* an ordinary MR: neither counter */
	fill(a->buf, 512, 4);
	sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 512, a->mr->lkey };
	ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_WRITE, sge, 1, (uintptr_t)b->buf,
			       b->mr->rkey));
	ASSERT_EQ(0, memcmp(a->buf, b->buf, 512));
	ASSERT_EQ(0, umem_of(a, &s2));
	EXPECT_EQ(s1.tx_copied, s2.tx_copied);
	EXPECT_EQ(s1.tx_inplace, s2.tx_inplace);
}

/* The reserve: whole chunks, a clear error when no run is free, back on
 * dereg; the MR works wherever it lands. */
TEST_F(umem, reserve_bounds)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	struct roxe_mr *m1 = NULL, *m2 = NULL, *m3 = NULL;
	struct roxe_umem_stats st;
	struct ibv_sge sge;

	EXPECT_EQ(-EINVAL, roxe_alloc_umem_mr(a->pd, 0, ACCESS, &m1));
	EXPECT_EQ(-EINVAL, roxe_alloc_umem_mr(a->pd, 4096, IBV_ACCESS_REMOTE_WRITE, &m1));
	ASSERT_EQ(0, roxe_alloc_umem_mr(a->pd, RESERVE - UMR - 4096 + 1, ACCESS, &m1));
	ASSERT_EQ(0, umem_of(a, &st));
	EXPECT_EQ(0u, st.reserve_free);		/* whole chunks: the rest of it */
	EXPECT_EQ(-ENOSPC, roxe_alloc_umem_mr(a->pd, 1, ACCESS, &m2));
	EXPECT_EQ(0, roxe_dereg_mr(m1));
	ASSERT_EQ(0, umem_of(a, &st));
	EXPECT_EQ((uint64_t)RESERVE - UMR, st.reserve_free);
	ASSERT_EQ(0, roxe_alloc_umem_mr(a->pd, 4096, ACCESS, &m2));
	ASSERT_EQ(0, roxe_alloc_umem_mr(a->pd, 8192, ACCESS, &m3));
	EXPECT_EQ(0u, ((uint8_t *)m3->addr - (uint8_t *)m2->addr) % 4096);
	for (size_t k = 0; k < 8192; k++)	/* handed out zeroed */
		ASSERT_EQ(0, ((uint8_t *)m3->addr)[k]);
	/* the fragment it left: 4096 + 8192 taken, one run of 2 MiB still fits */
	EXPECT_EQ(-ENOSPC, roxe_alloc_umem_mr(a->pd, RESERVE - UMR, ACCESS, &m1));
	ASSERT_EQ(0, roxe_alloc_umem_mr(a->pd, 2u << 20, ACCESS, &m1));
	fill(m1->addr, 2u << 20, 5);
	sge = (struct ibv_sge){ (uintptr_t)m1->addr + (1u << 20) + 77, 70000, m1->lkey };
	ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_WRITE, &sge, 1, (uintptr_t)b->buf,
			       b->mr->rkey));
	ASSERT_EQ(0, memcmp((uint8_t *)m1->addr + (1u << 20) + 77, b->buf, 70000));
	EXPECT_EQ(0, roxe_dereg_mr(m1));
	EXPECT_EQ(0, roxe_dereg_mr(m2));
	EXPECT_EQ(0, roxe_dereg_mr(m3));
	ASSERT_EQ(0, umem_of(a, &st));
	EXPECT_EQ((uint64_t)RESERVE - UMR, st.reserve_free);
}

/* A device without a reserve has no UMEM MRs; the reserve only on AF_XDP,
 * bounded. */
TEST(umem_mr_refused)
{
	struct roxe_device_attr da = { .ifname = "lo", .backend = ROXE_BACKEND_UDP,
				       .umem_mr_bytes = 4096 };
	struct roxe_device *dev = NULL;
	struct roxe_pd *pd;
	struct roxe_mr *mr;

	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	da.backend = ROXE_BACKEND_AFXDP;
	da.umem_mr_bytes = ROXE_UMEM_MR_MAX + 1;
	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	da.backend = ROXE_BACKEND_UDP;
	da.umem_mr_bytes = 0;
	ASSERT_EQ(0, roxe_device_open(&da, &dev));
	ASSERT_EQ(0, roxe_alloc_pd(dev, &pd));
	EXPECT_EQ(-EOPNOTSUPP, roxe_alloc_umem_mr(pd, 4096, ACCESS, &mr));
	roxe_dealloc_pd(pd);
	roxe_device_close(dev);
}

/* Through faultwire's losses (2 % each way, both directions, real clock):
 * WRITEs, SENDs and READs from UMEM MRs all arrive whole; frames went
 * again (retransmits), and every data frame, resent ones too, went in
 * place. */
FIXTURE(lossy) {
	struct topo	t;
	struct host	h[2];
	struct roxe_mr	*um[2];
	pid_t		wire;
	bool		up;
};

FIXTURE_VARIANT(lossy) {
	int		if_mtu;
	enum ibv_mtu	path_mtu;
};

FIXTURE_VARIANT_ADD(lossy, mtu_1024) { .if_mtu = 1500, .path_mtu = IBV_MTU_1024 };
FIXTURE_VARIANT_ADD(lossy, mtu_4096) { .if_mtu = 9000, .path_mtu = IBV_MTU_4096 };

FIXTURE_SETUP(lossy)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 256,
		.max_wr = 64, .buf_len = BUF, .access = ACCESS, .rd_atomic = 4,
		.path_mtu = variant->path_mtu, .umem_mr_bytes = RESERVE,
		.timeout = 10,		/* 4 ms: the losses are repaired quickly */
	};
	char cmd[512], m[24];
	int err;

	self->wire = -1;
	ASSERT_EQ(0, topo_up_middle(&self->t, "ul", 1, variant->if_mtu, true));
	self->up = true;
	snprintf(m, sizeof(m), "%s-m", self->t.name);
	/* faultwire takes the bridge's place; the hosts do their own
	 * checksums (faultwire_test.sh) */
	snprintf(cmd, sizeof(cmd),
		 "ip -n %s link set %s-ma nomaster && ip -n %s link set %s-mb nomaster && "
		 "ip netns exec %s-a ethtool -K %s-a tx off tso off gso off >/dev/null && "
		 "ip netns exec %s-b ethtool -K %s-b tx off tso off gso off >/dev/null",
		 m, self->t.name, m, self->t.name, self->t.name, self->t.name,
		 self->t.name, self->t.name);
	ASSERT_EQ(0, system(cmd));
	self->wire = fork();
	ASSERT_GE(self->wire, 0);
	if (self->wire == 0) {
		char ma[24], mb[24];

		snprintf(ma, sizeof(ma), "%s-ma", self->t.name);
		snprintf(mb, sizeof(mb), "%s-mb", self->t.name);
		if (topo_enter(self->t.ns_m) == 0) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 1);
			execl(ROXE_TOP "/build/bin/faultwire", "faultwire", ma, mb,
			      "--drop", "20000", "--seed", "37", (char *)NULL);
		}
		_exit(127);
	}
	usleep(200000);		/* its sockets bound */
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		kill(self->wire, SIGTERM);
		waitpid(self->wire, NULL, 0);
		topo_down(&self->t);
		self->up = false;
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, roxe_alloc_umem_mr(self->h[i].pd, UMR, ACCESS, &self->um[i]));
}

FIXTURE_TEARDOWN(lossy)
{
	for (int i = 0; i < 2; i++)
		if (self->um[i])
			roxe_dereg_mr(self->um[i]);
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->wire > 0) {
		kill(self->wire, SIGTERM);
		waitpid(self->wire, NULL, 0);
	}
	if (self->up)
		topo_down(&self->t);
}

TEST_F(lossy, retransmissions_in_place)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	uint8_t *src = self->um[0]->addr, *bsrc = self->um[1]->addr;
	struct roxe_umem_stats a0, a1, b0, b1;
	uint64_t frames = 0, rframes = 0, re;
	uint32_t mtu = variant->path_mtu == IBV_MTU_4096 ? 4096 : 1024, len = 65536 + 3;

	ASSERT_EQ(0, umem_of(a, &a0));
	if (!a0.inplace)
		SKIP(return, "the sockets are not multi-buffer (Linux < 6.6): every frame is copied");
	ASSERT_EQ(0, umem_of(b, &b0));
	for (int n = 0; n < 12; n++) {
		uint32_t off = (uint32_t)n * 65536 + (uint32_t)n * 13;
		struct ibv_sge sge = { (uintptr_t)(src + off), len, self->um[0]->lkey };
		struct ibv_sge rs = { (uintptr_t)b->buf, len, b->mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_wc wc;

		if (off + len > UMR)
			off = UMR - len - (uint32_t)n;
		sge.addr = (uintptr_t)(src + off);
		fill(src + off, len, 10 + n);
		memset(b->buf, 0, len);
		ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_WRITE, &sge, 1,
				       (uintptr_t)b->buf, b->mr->rkey)) TH_LOG("write %d", n);
		ASSERT_EQ(0, memcmp(src + off, b->buf, len)) TH_LOG("write %d", n);
		memset(b->buf, 0, len);
		ASSERT_EQ(0, roxe_post_recv(b->qp[0], &rwr, &rbad));
		ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_SEND, &sge, 1, 0, 0)) TH_LOG("send %d", n);
		ASSERT_EQ(1, wait_wc(b->cq, &wc, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(src + off, b->buf, len)) TH_LOG("send %d", n);
		fill(bsrc + off, len, 40 + n);
		sge = (struct ibv_sge){ (uintptr_t)a->buf, len, a->mr->lkey };
		memset(a->buf, 0, len);
		ASSERT_EQ(0, post_wait(a->qp[0], a->cq, IBV_WR_RDMA_READ, &sge, 1,
				       (uintptr_t)(bsrc + off), self->um[1]->rkey)) TH_LOG("read %d", n);
		ASSERT_EQ(0, memcmp(bsrc + off, a->buf, len)) TH_LOG("read %d", n);
		frames += 2 * frames_of(len, mtu);
		rframes += frames_of(len, mtu);
	}
	ASSERT_EQ(0, umem_of(a, &a1));
	ASSERT_EQ(0, umem_of(b, &b1));
	re = a->dev->qp_stats[roxe_qp_num(a->qp[0])].retransmits;
	TH_LOG("a: %llu frames in place for %llu data frames, %llu retransmits; b: %llu for %llu",
	       (unsigned long long)(a1.tx_inplace - a0.tx_inplace), (unsigned long long)frames,
	       (unsigned long long)re, (unsigned long long)(b1.tx_inplace - b0.tx_inplace),
	       (unsigned long long)rframes);
	EXPECT_GT(re, 0u);		/* the losses hit */
	EXPECT_GT(a1.tx_inplace - a0.tx_inplace, frames);	/* resent in place too */
	EXPECT_GE(b1.tx_inplace - b0.tx_inplace, rframes);
	EXPECT_EQ(a0.tx_copied, a1.tx_copied);
	EXPECT_EQ(b0.tx_copied, b1.tx_copied);
}

/* The completion ring is the kernel's to write: whatever address comes
 * out of it is checked before use. Polled devices (no engine thread: the
 * test is the port's thread), nothing in flight: every address fed is
 * one the port never gave out, and each is counted and ignored; traffic
 * then flows as before, with no bogus completion of its own. */
FIXTURE(hostile) {
	struct topo	t;
	struct host	h[2];
	struct roxe_mr	*um;
	bool		up;
};

FIXTURE_SETUP(hostile)
{
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 256,
		.max_wr = 64, .buf_len = BUF, .access = ACCESS, .rd_atomic = 4,
		.path_mtu = IBV_MTU_4096, .umem_mr_bytes = RESERVE, .polled = true,
	};
	int err;

	/* the real clock: a polled engine's held ACK leaves when its hold
	 * has run out (sched.c), which a clock that stands still never does */
	ASSERT_EQ(0, topo_up(&self->t, "uh", 1, 9000));
	self->up = true;
	err = host_pair_open(&self->t, self->h, &ha);
	if (err) {
		topo_down(&self->t);
		self->up = false;
		ASSERT_EQ(0, err) TH_LOG("setup: %s", strerror(-err));
	}
	ASSERT_EQ(0, roxe_alloc_umem_mr(self->h[0].pd, UMR, ACCESS, &self->um));
}

FIXTURE_TEARDOWN(hostile)
{
	if (self->um)
		roxe_dereg_mr(self->um);
	host_close(&self->h[0]);
	host_close(&self->h[1]);
	if (self->up)
		topo_down(&self->t);
}

TEST_F(hostile, completion_ring_addresses_checked)
{
	struct host *a = &self->h[0], *b = &self->h[1];
	struct roxe_port *port = a->dev->afxdp_ports[0];
	uint64_t area = (uint64_t)((uint8_t *)self->um->addr - port->inplace_base), bogus0, x = 37;
	uint8_t *src = self->um->addr;
	struct ibv_sge sge = { (uintptr_t)src, 65536, self->um->lkey };
	unsigned fed = 0;

	ASSERT_TRUE(port != NULL);
	if (!port->inplace_len)
		SKIP(return, "the sockets are not multi-buffer (Linux < 6.6)");
	bogus0 = port->stats.tx_comp_bogus;
	/* every chunk of the UMEM and the reserve, each chunk's last byte,
	 * around both ends, and random 64-bit values */
	for (uint64_t c = 0; c <= (64ull << 20) + area + port->inplace_len; c += 4096) {
		roxe_afxdp_comp_addr(port, c);
		roxe_afxdp_comp_addr(port, c + 4095);
		fed += 2;
	}
	for (int i = 0; i < 100000; i++, fed++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		roxe_afxdp_comp_addr(port, i & 1 ? x : x % ((64ull << 20) + area + port->inplace_len));
	}
	roxe_afxdp_comp_addr(port, UINT64_MAX);
	roxe_afxdp_comp_addr(port, (uint64_t)-4096);
	fed += 2;
	EXPECT_EQ((uint64_t)fed, port->stats.tx_comp_bogus - bogus0);
	/* no chunk of the reserve left looking busy: all of the rest of it
	 * can be had */
	{
		struct roxe_mr *rest = NULL;

		EXPECT_EQ(0, roxe_alloc_umem_mr(a->pd, RESERVE - UMR, ACCESS, &rest));
		if (rest)
			roxe_dereg_mr(rest);
	}
	/* traffic as before */
	fill(src, 65536, 9);
	bogus0 = port->stats.tx_comp_bogus;
	for (int k = 0; k < 8; k++) {
		struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_wc wc;
		int got = 0;

		memset(b->buf, 0, 65536);
		wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
		wr.wr.rdma.rkey = b->mr->rkey;
		ASSERT_EQ(0, roxe_post_send(a->qp[0], &wr, &bad));
		/* both ends polled: each runs only when its CQ is polled */
		for (int t = 0; !got && t < 100000; t++) {
			roxe_poll_cq(b->cq, 0, NULL);
			got = roxe_poll_cq(a->cq, 1, &wc);
			if (!got && t > 1000)
				usleep(50);
		}
		ASSERT_EQ(1, got);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(0, memcmp(src, b->buf, 65536));
	}
	EXPECT_EQ(bogus0, port->stats.tx_comp_bogus);
}

TEST_HARNESS_MAIN
