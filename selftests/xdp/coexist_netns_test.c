// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe beside someone else's XDP program on the same interface (b's end of
 * the veth): bpf/roxe_count.bpf.c, which counts RoCE v2 frames and test
 * datagrams (UDP to COUNT_PORT) and passes every frame.
 *
 *   through_libxdp: the counter is attached first through libxdp
 *     (xdp_program__attach, as xdp-loader does), at libxdp's default run
 *     priority. Where the kernel runs libxdp's dispatcher, roxe joins it
 *     behind the counter (ROXE_XDP_RUN_PRIO > 50): RC traffic between two
 *     roxe devices, checked byte for byte; the counter saw every test
 *     datagram and exactly the RoCE frames roxe's program judged (it runs
 *     first and passes them on); when roxe's device closes, roxe's program
 *     leaves the dispatcher and the counter runs on, alone, still counting.
 *     Where the kernel cannot (it refuses freplace programs: libxdp falls
 *     back to attaching the counter directly, as on the development
 *     machine's kernel), roxe refuses as in plain_program.
 *   plain_program: the counter attached directly (bpf_xdp_attach, what `ip
 *     link set dev IF xdp obj FILE` does): roxe_xdp_attach fails with
 *     -EBUSY naming it, `roxectl attach` says in one sentence what runs
 *     there and what to do, and the counter stays attached and counting.
 *
 * Before issue #36 roxe refused any interface with an XDP program, in
 * words that did not tell a dispatcher from a program attached directly.
 */
#include <sys/wait.h>
#include <linux/if_link.h>
#include <xdp/libxdp.h>
#include "kselftest_harness.h"
#include "host.h"
#include "roxe/maps.h"
#include "roxe/xdp.h"
#include "transport/engine.h"
#include "roxe_count.skel.h"

/* The virtual clock's start (rc_netns_test.c): no retransmission behind
 * the test's back, so the frame counts are exact. */
#define VC_START_NS	(1000ull * 1000000000ull)
#define BUF		(1u << 20)
#define COUNT_PORT	7777	/* bpf/roxe_count.bpf.c's ROXE_COUNT_PORT */
#define NDGRAM		10
#define DIRECTLY	"attached directly, not through libxdp's dispatcher"

FIXTURE(coexist) {
	struct topo		t;
	struct host		h[2];
	struct roxe_count_bpf	*cnt;
	struct xdp_program	*prog;		/* the counter, through libxdp */
	bool			up, hosts, plain;
	char			ifb[16];
};

FIXTURE_SETUP(coexist)
{
	roxe_clock_virtual(VC_START_NS);	/* before any engine starts */
	ASSERT_EQ(0, topo_up(&self->t, "co", 1, 1500));
	self->up = true;
	topo_ifname(&self->t, 'b', self->ifb, sizeof(self->ifb));
	/* libxdp keeps its dispatchers' state in bpffs */
	ASSERT_EQ(0, roxe_bpffs_mount());
	self->cnt = roxe_count_bpf__open();
	ASSERT_NE(NULL, self->cnt);
}

FIXTURE_TEARDOWN(coexist)
{
	if (self->hosts) {
		topo_enter(self->t.ns_a);
		host_close(&self->h[0]);
		topo_enter(self->t.ns_b);
		host_close(&self->h[1]);
	}
	topo_enter(self->t.ns_b);
	/* libxdp's pins under /sys/fs/bpf/xdp outlive the namespace: unload */
	if (self->prog) {
		xdp_program__detach(self->prog, self->t.ifindex_b, XDP_MODE_NATIVE, 0);
		xdp_program__close(self->prog);
	}
	if (self->plain)
		bpf_xdp_detach(self->t.ifindex_b, XDP_FLAGS_DRV_MODE, NULL);
	roxe_count_bpf__destroy(self->cnt);
	if (self->up)
		topo_down(&self->t);
}

static uint64_t counted(struct roxe_count_bpf *c, uint32_t key)
{
	uint64_t v = 0;

	bpf_map_lookup_elem(bpf_map__fd(c->maps.roxe_counts), &key, &v);
	return v;
}

/* NDGRAM datagrams from a to b's COUNT_PORT: how many went out. */
static int send_dgrams(struct topo *t)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(COUNT_PORT) };
	int fd, sent = 0;

	topo_enter(t->ns_a);
	inet_pton(AF_INET, "10.99.0.2", &to.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (int i = 0; fd >= 0 && i < NDGRAM; i++)
		sent += sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)) == 1;
	if (fd >= 0)
		close(fd);
	topo_enter(t->ns_b);
	return sent;
}

/* The counter still sees the datagrams: all NDGRAM of them. */
static bool still_counts(struct topo *t, struct roxe_count_bpf *c)
{
	uint64_t before = counted(c, 1);

	return send_dgrams(t) == NDGRAM &&
	       wait_until(counted(c, 1) == before + NDGRAM, 5000) &&
	       counted(c, 1) == before + NDGRAM;
}

/* `roxectl ARGS` in this thread's namespace: its exit status, its
 * output (stdout and stderr) in out. */
static int roxectl(const char *args, char *out, size_t len)
{
	char cmd[256];
	size_t n;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s/build/bin/roxectl %s 2>&1", ROXE_TOP, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* roxe refuses b's interface, where program id runs attached directly,
 * and leaves it there, counting. */
static void expect_refusal(struct __test_metadata *_metadata, FIXTURE_DATA(coexist) *self,
			   uint32_t id)
{
	struct roxe_xdp_attach_opts o = { .engines = 1, .no_pin = true, .owned = true };
	char args[64], out[1024], idstr[32];
	struct roxe_xdp *x = NULL;
	uint32_t other = 0, now = 0;

	topo_enter(self->t.ns_b);
	EXPECT_EQ(-EBUSY, roxe_xdp_attach(self->ifb, &o, &x, &other));
	EXPECT_EQ(id, other);
	snprintf(args, sizeof(args), "attach %s", self->ifb);
	EXPECT_EQ(1, roxectl(args, out, sizeof(out)));
	TH_LOG("roxectl %s: %s", args, out);
	snprintf(idstr, sizeof(idstr), "(id %u)", id);
	EXPECT_NE(NULL, strstr(out, DIRECTLY));
	EXPECT_NE(NULL, strstr(out, idstr));
	EXPECT_NE(NULL, strchr(out, '\n'));
	EXPECT_EQ(strchr(out, '\n'), strrchr(out, '\n'));	/* one line */
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_b, 0, &now));
	EXPECT_EQ(id, now);	/* untouched */
	EXPECT_TRUE(still_counts(&self->t, self->cnt));
}

/* SEND, WRITE and READ of len bytes on QP 0, a to b, checked. */
static void rc_traffic(struct __test_metadata *_metadata, struct host *a, struct host *b,
		       uint32_t len)
{
	uint8_t *src = a->buf, *dst = b->buf, *back = a->buf + BUF / 2;
	struct ibv_sge rsge = { (uintptr_t)dst, len, b->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	for (uint32_t k = 0; k < len; k++)
		src[k] = (uint8_t)(k * 13 + 5);
	ASSERT_EQ(0, roxe_post_recv(b->qp[0], &rwr, &rbad));
	ASSERT_EQ(0, host_post(a->qp[0], IBV_WR_SEND, src, len, a->mr->lkey, 0, 0));
	ASSERT_EQ(1, wait_wc(b->cq, &wc, 5000)) TH_LOG("no receive");
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(len, wc.byte_len);
	ASSERT_EQ(0, memcmp(src, dst, len));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	memset(dst, 0, len);
	ASSERT_EQ(0, host_post(a->qp[0], IBV_WR_RDMA_WRITE, src, len, a->mr->lkey,
			       (uintptr_t)dst, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, memcmp(src, dst, len));
	ASSERT_EQ(0, host_post(a->qp[0], IBV_WR_RDMA_READ, back, len, a->mr->lkey,
			       (uintptr_t)dst, b->mr->rkey));
	ASSERT_EQ(1, wait_wc(a->cq, &wc, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	ASSERT_EQ(0, memcmp(src, back, len));
}

/* RoCE v2 frames roxe's program judged (everything but `passed`). */
static uint64_t roce_judged(const struct roxe_stats *s)
{
	const uint64_t *f = (const uint64_t *)s;
	uint64_t n = 0;

	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		n += f[i];
	return n - s->passed;
}

TEST_F(coexist, through_libxdp)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = self->cnt->obj,
			    .prog_name = "roxe_count");
	struct host_attr ha = {
		.backend = ROXE_BACKEND_AFXDP, .engines = 1, .nqp = 1, .cqe = 64, .max_wr = 16,
		.buf_len = BUF, .rd_atomic = 4,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
	};
	struct xdp_multiprog *mp;
	struct xdp_program *p;
	struct roxe_xdp *xb = NULL;
	struct roxe_stats st;
	uint32_t main_id = 0;
	bool dispatcher;
	int err;

	topo_enter(self->t.ns_b);
	self->prog = xdp_program__create(&po);
	ASSERT_NE(NULL, self->prog);
	ASSERT_EQ(0, xdp_program__attach(self->prog, self->t.ifindex_b, XDP_MODE_NATIVE, 0));
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_b, 0, &main_id));
	mp = xdp_multiprog__get_from_ifindex(self->t.ifindex_b);
	ASSERT_EQ(0, libxdp_get_error(mp));
	ASSERT_NE(NULL, mp);
	dispatcher = !xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	if (!dispatcher) {
		TH_LOG("this kernel does not run libxdp's dispatcher (libxdp attached the "
		       "counter directly, id %u): roxe must refuse", main_id);
		expect_refusal(_metadata, self, main_id);
		return;
	}
	TH_LOG("libxdp's dispatcher runs (id %u): roxe joins it", main_id);

	err = host_pair_open(&self->t, self->h, &ha);
	ASSERT_EQ(0, err) TH_LOG("roxe beside the dispatcher: %s", strerror(-err));
	self->hosts = true;
	/* One dispatcher, the counter first, roxe behind it, roxe's XDP_PASS
	 * chained on. */
	mp = xdp_multiprog__get_from_ifindex(self->t.ifindex_b);
	ASSERT_EQ(0, libxdp_get_error(mp));
	ASSERT_FALSE(xdp_multiprog__is_legacy(mp));
	EXPECT_EQ(2, xdp_multiprog__program_count(mp));
	p = xdp_multiprog__next_prog(NULL, mp);
	ASSERT_NE(NULL, p);
	EXPECT_STREQ("roxe_count", xdp_program__name(p));
	p = xdp_multiprog__next_prog(p, mp);
	ASSERT_NE(NULL, p);
	EXPECT_STREQ(ROXE_XDP_PROG_NAME, xdp_program__name(p));
	EXPECT_LT(XDP_DEFAULT_RUN_PRIO, xdp_program__run_prio(p));
	EXPECT_TRUE(xdp_program__chain_call_enabled(p, XDP_PASS));
	EXPECT_FALSE(xdp_program__chain_call_enabled(p, XDP_DROP));
	xdp_multiprog__close(mp);

	rc_traffic(_metadata, &self->h[0], &self->h[1], 10000);
	EXPECT_TRUE(still_counts(&self->t, self->cnt));
	/* roxectl's way in finds roxe's program inside the dispatcher; the
	 * counter, ahead of it, saw every RoCE frame roxe judged. */
	ASSERT_EQ(0, roxe_xdp_open(self->ifb, &xb, NULL));
	ASSERT_EQ(0, roxe_xdp_read_stats(xb, &st));
	EXPECT_NE(main_id, xb->prog_id);
	roxe_xdp_close(xb);
	TH_LOG("RoCE v2 frames to b: roxe's program judged %llu (redirected %llu), the "
	       "counter ahead of it counted %llu", (unsigned long long)roce_judged(&st),
	       (unsigned long long)st.redirected, (unsigned long long)counted(self->cnt, 0));
	EXPECT_LT(0, st.redirected);
	EXPECT_EQ(st.redirected, roce_judged(&st));
	EXPECT_EQ(roce_judged(&st), counted(self->cnt, 0));

	/* roxe leaves; the counter stays, alone in the dispatcher, counting */
	topo_enter(self->t.ns_a);
	host_close(&self->h[0]);
	topo_enter(self->t.ns_b);
	host_close(&self->h[1]);
	self->hosts = false;
	mp = xdp_multiprog__get_from_ifindex(self->t.ifindex_b);
	ASSERT_EQ(0, libxdp_get_error(mp));
	ASSERT_NE(NULL, mp);
	EXPECT_FALSE(xdp_multiprog__is_legacy(mp));
	EXPECT_EQ(1, xdp_multiprog__program_count(mp));
	p = xdp_multiprog__next_prog(NULL, mp);
	ASSERT_NE(NULL, p);
	EXPECT_STREQ("roxe_count", xdp_program__name(p));
	xdp_multiprog__close(mp);
	EXPECT_EQ(-EBUSY, roxe_xdp_open(self->ifb, &xb, NULL));
	EXPECT_TRUE(still_counts(&self->t, self->cnt));
}

TEST_F(coexist, plain_program)
{
	uint32_t id = 0;

	topo_enter(self->t.ns_b);
	ASSERT_EQ(0, roxe_count_bpf__load(self->cnt));
	ASSERT_EQ(0, bpf_xdp_attach(self->t.ifindex_b, bpf_program__fd(self->cnt->progs.roxe_count),
				    XDP_FLAGS_DRV_MODE, NULL));
	self->plain = true;
	ASSERT_EQ(0, bpf_xdp_query_id(self->t.ifindex_b, 0, &id));
	expect_refusal(_metadata, self, id);
}

TEST_HARNESS_MAIN
