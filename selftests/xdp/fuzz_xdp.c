// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the XDP program as the kernel runs it: the program
 * of build/bpf/roxe_xdp.bpf.o (through its skeleton, as libroxe loads it),
 * verified and run by the kernel on each input as a frame with
 * BPF_PROG_TEST_RUN, once with each unknown-QP policy. Its maps hold a few
 * local addresses, multicast groups and QPs of two engines, and one AF_XDP
 * socket: engine 0's on queue 0 (engine 1 has none), so every branch of
 * the steering can be taken. A violation abort()s, which libFuzzer reports
 * like a crash:
 *   - the verdict is XDP_PASS, XDP_DROP or XDP_REDIRECT;
 *   - a frame that does not claim RoCE v2 (UDP to 4791), as told by a
 *     classifier written here apart from roxe/parse.h, is passed;
 *   - the frame comes back byte for byte (the program writes no frame);
 *   - verdict, global counters (one counts each frame) and the frame's QP
 *     counters are what the program's contract (roxe_xdp.bpf.c, maps.h)
 *     says for the frame and the maps, as modelled here on roxe_parse()
 *     compiled for user space;
 *   - every so often, the per-QP counters of all QPs add up to the model's.
 * The kernel's coverage is not visible to libFuzzer; the model's is, and it
 * takes the same branches as the program.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "roxe/maps.h"
#include "roxe/parse.h"
#include "roxe_xdp.skel.h"

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_xdp: %s:%d: %s: ", __FILE__,	\
			__LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

#define ENGINES		2
/* Frames up to a jumbo and a half: the kernel makes multi-buffer frames of
 * those over a page, as it would for a 9000-MTU link. */
#define MAX_FRAME	16384
/* A test run's first buffer: a page less XDP's headroom and the shared
 * info; longer frames are multi-buffer. */
#define FIRST_BUF	(4096 - 256 - 320)

/* The maps' contents. The IPv4 addresses are those of real captures: the
 * ConnectX-4 Lx CNP (selftests/wire/frame_sample.h) and the VM suite's rxe
 * captures (build/vm/rxe-*.pcap), so their frames are ours. */
static const uint8_t local_gids[][16] = {
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 1, 1 },
	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 18, 1 },
	{ 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
};

static const struct mcast_grp {
	uint8_t gid[16];
	uint32_t engine;
} mcast_grps[] = {
	{ { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 1, 1 }, 0 },
	{ { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x01 }, 1 },
};

static const struct qp {
	uint32_t qpn;
	struct roxe_qp_route route;
} qps[] = {
	{ 0x11, { 0, 1 } },			/* rxe's RC and UC QPs */
	{ 0x12, { 1, 1 } },			/* engine 1: no socket */
	{ 0x13, { 0, 0 } },			/* a route not in use */
	{ 0x118, { 0, 1 } },			/* the CNP's */
	{ ROXE_QPN_GSI, { 1, 1 } },
	{ ROXE_MAX_QPS - 1, { 0, 1 } },		/* the last one */
};

static struct {
	struct roxe_xdp_bpf *skel;
	int prog, config, stats;
	bool have_xsk;			/* engine 0's socket on queue 0 */
	int ncpus;
	struct roxe_stats *percpu;	/* a lookup's result: one per CPU */
	struct roxe_stats sum;		/* the counters after the last run */
	volatile struct roxe_qp_stats *qs; /* roxe_qp_stats, mmapped */
	struct roxe_qp_stats qs_total;	/* the model's sum over all QPs */
	uint64_t runs;
	uint64_t multi_buffer;		/* frames longer than FIRST_BUF */
} fx;

static void stats_read(struct roxe_stats *out)
{
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)out;

	CHECK(bpf_map_lookup_elem(fx.stats, &(uint32_t){ 0 }, fx.percpu) == 0,
	      "roxe_stats: %s", strerror(errno));
	memset(out, 0, sizeof(*out));
	for (int c = 0; c < fx.ncpus; c++) {
		src = (const uint64_t *)&fx.percpu[c];
		for (size_t i = 0; i < sizeof(*out) / 8; i++)
			dst[i] += src[i];
	}
}

/* A bound AF_XDP socket (copy mode, on loopback queue 0): what the xsks
 * map takes. Its rings are never read: test runs redirect nothing. */
static int xsk_open(void)
{
	static const int ring = 64;
	struct xdp_umem_reg mr = { .len = 64 * 4096, .chunk_size = 4096 };
	struct sockaddr_xdp sxdp = { .sxdp_family = AF_XDP, .sxdp_queue_id = 0,
				     .sxdp_flags = XDP_COPY };
	struct ifreq ifr = { .ifr_name = "lo" };
	void *umem;
	int fd, s;

	/* The loopback of a network namespace of our own: no other AF_XDP
	 * user of the host's can hold its queue. */
	if (unshare(CLONE_NEWNET))
		fprintf(stderr, "fuzz_xdp: unshare: %s: the host's loopback\n", strerror(errno));
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	if (s >= 0)
		close(s);
	sxdp.sxdp_ifindex = if_nametoindex("lo");
	umem = mmap(NULL, mr.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED)
		return -1;
	mr.addr = (uintptr_t)umem;
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp))) {
		fprintf(stderr, "fuzz_xdp: AF_XDP socket: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;	/* the umem stays mapped for the socket's life */
}

#define STATS_FIELDS(m) m(passed) m(redirected) m(redirect_failed) m(unknown_qp)	\
	m(unknown_qp_passed) m(bad_ip_len) m(bad_udp_len) m(bad_version)		\
	m(bad_opcode) m(bad_hdr_len) m(bad_payload) m(bad_icrc) m(not_local_passed)

/* At exit, the program's own counters, every run summed: fuzz_xdp.sh sees
 * from them that the seeds took every way through the program. */
static void tally(void)
{
	struct roxe_stats s;

	stats_read(&s);
	fprintf(stderr, "fuzz_xdp: outcomes:");
#define PUT(f) fprintf(stderr, " " #f "=%llu", (unsigned long long)s.f);
	STATS_FIELDS(PUT)
#undef PUT
	fprintf(stderr, " ecn_marked=%llu multi_buffer=%llu\n",
		(unsigned long long)fx.qs_total.ecn_marked, (unsigned long long)fx.multi_buffer);
}

static void setup(void)
{
	struct roxe_config cfg = { .engines = ENGINES };
	uint32_t zero = 0, one = 1, slot = roxe_xsk_slot(0, 0, ENGINES);
	void *p;
	int xsk;

	libbpf_set_print(NULL);
	fx.skel = roxe_xdp_bpf__open_and_load();
	CHECK(fx.skel, "loading the XDP program: %s (root needed)", strerror(errno));
	fx.prog = bpf_program__fd(fx.skel->progs.roxe_xdp);
	fx.config = bpf_map__fd(fx.skel->maps.roxe_config);
	fx.stats = bpf_map__fd(fx.skel->maps.roxe_stats);
	CHECK(bpf_map_update_elem(fx.config, &zero, &cfg, 0) == 0, "%s", strerror(errno));
	for (size_t i = 0; i < sizeof(local_gids) / sizeof(local_gids[0]); i++)
		CHECK(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.roxe_local_ips),
					  local_gids[i], &one, 0) == 0, "%s", strerror(errno));
	for (size_t i = 0; i < sizeof(mcast_grps) / sizeof(mcast_grps[0]); i++)
		CHECK(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.roxe_mcast_grps),
					  mcast_grps[i].gid, &mcast_grps[i].engine, 0) == 0,
		      "%s", strerror(errno));
	for (size_t i = 0; i < sizeof(qps) / sizeof(qps[0]); i++)
		CHECK(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.roxe_qp_table),
					  &qps[i].qpn, &qps[i].route, 0) == 0,
		      "%s", strerror(errno));

	xsk = xsk_open();
	fx.have_xsk = xsk >= 0 &&
		bpf_map_update_elem(bpf_map__fd(fx.skel->maps.roxe_xsks), &slot, &xsk, 0) == 0;
	if (!fx.have_xsk)
		fprintf(stderr, "fuzz_xdp: no AF_XDP socket: no frame can be redirected\n");

	p = mmap(NULL, (size_t)ROXE_MAX_QPS * sizeof(struct roxe_qp_stats), PROT_READ,
		 MAP_SHARED, bpf_map__fd(fx.skel->maps.roxe_qp_stats), 0);
	CHECK(p != MAP_FAILED, "mmap roxe_qp_stats: %s", strerror(errno));
	fx.qs = p;
	fx.ncpus = libbpf_num_possible_cpus();
	CHECK(fx.ncpus > 0, "possible CPUs");
	fx.percpu = calloc((size_t)fx.ncpus, sizeof(*fx.percpu));
	CHECK(fx.percpu, "out of memory");
	stats_read(&fx.sum);
	atexit(tally);
}

/* Written apart from roxe/parse.h: whether a frame claims to be RoCE v2 at
 * all (Ethernet, up to two 802.1Q / 802.1ad tags, IPv4 that is no fragment
 * or IPv6 without extension headers, a whole UDP header to port 4791). */
static bool claims_roce(const uint8_t *f, size_t len)
{
	size_t l3 = 14, l4;
	unsigned type;

	if (len < 14)
		return false;
	type = f[12] << 8 | f[13];
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8); tags++) {
		if (len < l3 + 4)
			return false;
		type = f[l3 + 2] << 8 | f[l3 + 3];
		l3 += 4;
	}
	if (type == 0x0800) {
		if (len < l3 + 20 || f[l3] >> 4 != 4 || (f[l3] & 15) < 5 || f[l3 + 9] != 17 ||
		    ((f[l3 + 6] << 8 | f[l3 + 7]) & 0x3fff))
			return false;
		l4 = l3 + (f[l3] & 15) * 4;
	} else if (type == 0x86dd) {
		if (len < l3 + 40 || f[l3] >> 4 != 6 || f[l3 + 6] != 17)
			return false;
		l4 = l3 + 40;
	} else {
		return false;
	}
	return len >= l4 + 8 && (f[l4 + 2] << 8 | f[l4 + 3]) == 4791;
}

/* What the program must do with a frame: its verdict, and the counters it
 * adds to (global ones; those of QP *qpn when it is not -1). */
struct expect {
	int act;
	struct roxe_stats st;
	long qpn;
	struct roxe_qp_stats qs;
};

static long dqpn(const uint8_t *f, size_t len, uint32_t bth_off)
{
	if (bth_off > ROXE_BTH_OFF_MAX || bth_off + sizeof(struct roxe_bth) > len)
		return -1;
	return roxe_bth_qpn((const struct roxe_bth *)(f + bth_off));
}

static const struct roxe_qp_route *route_of(long qpn)
{
	for (size_t i = 0; i < sizeof(qps) / sizeof(qps[0]); i++)
		if (qps[i].qpn == qpn)
			return &qps[i].route;
	return NULL;
}

static bool is_local(const uint8_t gid[16])
{
	for (size_t i = 0; i < sizeof(local_gids) / sizeof(local_gids[0]); i++)
		if (!memcmp(local_gids[i], gid, 16))
			return true;
	return false;
}

static const struct mcast_grp *mcast_of(const uint8_t gid[16])
{
	for (size_t i = 0; i < sizeof(mcast_grps) / sizeof(mcast_grps[0]); i++)
		if (!memcmp(mcast_grps[i].gid, gid, 16))
			return &mcast_grps[i];
	return NULL;
}

/* Test runs take queue 0: a redirect works to engine 0's slot alone. */
static bool slot_has_socket(uint32_t engine)
{
	return fx.have_xsk && roxe_xsk_slot(0, engine, ENGINES) == roxe_xsk_slot(0, 0, ENGINES);
}

static void expect_frame(const uint8_t *f, size_t len, bool pass_unknown, struct expect *e)
{
	const struct roxe_qp_route *route;
	const struct mcast_grp *grp;
	struct roxe_pkt pkt;
	uint8_t dgid[16];
	int v;

	memset(e, 0, sizeof(*e));
	e->qpn = -1;
	memset(&pkt, 0, sizeof(pkt));
	v = roxe_parse(f, f + len, (uint32_t)len, &pkt);
	if (v == ROXE_PKT_NOT_ROCE) {
		e->st.passed = 1;
		e->act = XDP_PASS;
		return;
	}
	e->act = XDP_DROP;
	if (v != ROXE_PKT_OK) {
		CHECK(v >= ROXE_PKT_BAD_IP_LEN && v < ROXE_PKT_BAD_ICRC, "verdict %d", v);
		(*roxe_stats_malformed(&e->st, v))++;
		if (v >= ROXE_PKT_BAD_VERSION) {
			e->qpn = dqpn(f, len, pkt.bth_off);
			if (e->qpn >= ROXE_MAX_QPS)
				e->qpn = -1;
			e->qs.rx_drop_malformed = 1;
		}
		return;
	}
	CHECK(roxe_pkt_gids(f, f + len, &pkt, NULL, dgid) == 0, "an OK frame without GIDs");
	e->qpn = dqpn(f, len, pkt.bth_off);	/* -1 past ROXE_BTH_OFF_MAX */
	if (e->qpn == ROXE_MCAST_QPN) {
		e->qpn = -1;
		grp = mcast_of(dgid);
		if (!grp) {
			e->st.not_local_passed = 1;
			e->act = XDP_PASS;
		} else if (slot_has_socket(grp->engine)) {
			e->st.redirected = 1;
			e->act = XDP_REDIRECT;
		} else {
			e->st.redirect_failed = 1;
		}
		return;
	}
	if (!is_local(dgid)) {
		e->qpn = -1;
		e->st.not_local_passed = 1;
		e->act = XDP_PASS;
		return;
	}
	route = route_of(e->qpn);
	if (!route || !route->in_use) {
		e->qpn = -1;
		if (pass_unknown) {
			e->st.unknown_qp_passed = 1;
			e->act = XDP_PASS;
		} else {
			e->st.unknown_qp = 1;
		}
		return;
	}
	if (roxe_pkt_ecn(f, f + len, &pkt) == ROXE_ECN_CE)
		e->qs.ecn_marked = 1;
	if (!slot_has_socket(route->engine)) {
		e->st.redirect_failed = 1;
		e->qs.rx_drop_no_socket = 1;
		return;
	}
	e->st.redirected = 1;
	e->qs.rx_packets = 1;
	e->qs.rx_bytes = len;
	e->act = XDP_REDIRECT;
}

#define QS_XDP_FIELDS(m) \
	m(rx_packets) m(rx_bytes) m(rx_drop_no_socket) m(rx_drop_malformed) m(ecn_marked)

static void qs_add(struct roxe_qp_stats *to, const struct roxe_qp_stats *d)
{
#define ADD(f) to->f += d->f;
	QS_XDP_FIELDS(ADD)
#undef ADD
}

/* Every QP's counters against the model's totals: the program adds to no
 * QP but the frame's, and to none of the engines' fields. */
static void check_all_qps(void)
{
	struct roxe_qp_stats sum = { 0 };
	static const struct roxe_qp_stats zero;

	for (uint32_t q = 0; q < ROXE_MAX_QPS; q++) {
		const volatile struct roxe_qp_stats *s = &fx.qs[q];

#define ADD(f) sum.f += s->f;
		QS_XDP_FIELDS(ADD)
#undef ADD
		CHECK(!memcmp((const void *)&s->tx_packets, &zero.tx_packets,
			      sizeof(zero) - offsetof(struct roxe_qp_stats, tx_packets)),
		      "QP 0x%x: an engine counter moved", q);
	}
#define SAME(f) CHECK(sum.f == fx.qs_total.f, "all QPs' " #f " %llu, want %llu", \
		      (unsigned long long)sum.f, (unsigned long long)fx.qs_total.f);
	QS_XDP_FIELDS(SAME)
#undef SAME
}

static void run_frame(const uint8_t *data, size_t size, bool pass_unknown)
{
	static uint8_t out[MAX_FRAME + 64];
	struct roxe_config cfg = { .engines = ENGINES, .pass_unknown_qp = pass_unknown };
	struct roxe_qp_stats qs_before, qs_after;
	struct roxe_stats now;
	struct expect e;
	uint32_t zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o,
		    .data_in = data, .data_size_in = (uint32_t)size,
		    .data_out = out, .data_size_out = sizeof(out));
	int err;

	CHECK(bpf_map_update_elem(fx.config, &zero, &cfg, 0) == 0, "%s", strerror(errno));
	expect_frame(data, size, pass_unknown, &e);
	if (e.qpn >= 0)
		memcpy(&qs_before, (const void *)&fx.qs[e.qpn], sizeof(qs_before));
	err = bpf_prog_test_run_opts(fx.prog, &o);
	CHECK(err == 0, "test run of %zu bytes: %s", size, strerror(-err));

	CHECK(o.retval == XDP_PASS || o.retval == XDP_DROP || o.retval == XDP_REDIRECT,
	      "verdict %u", o.retval);
	if (!claims_roce(data, size))
		CHECK(o.retval == XDP_PASS, "a frame not to UDP 4791: verdict %u", o.retval);
	CHECK(o.data_size_out == size && !memcmp(out, data, size),
	      "the frame came back changed (%u of %zu bytes)", o.data_size_out, size);
	CHECK(o.retval == (unsigned)e.act, "verdict %u, want %d (unknown QPs %s)",
	      o.retval, e.act, pass_unknown ? "passed" : "dropped");

	stats_read(&now);
	for (size_t i = 0; i < sizeof(now) / 8; i++) {
		uint64_t was = ((const uint64_t *)&fx.sum)[i];
		uint64_t is = ((const uint64_t *)&now)[i];
		uint64_t add = ((const uint64_t *)&e.st)[i];

		CHECK(is - was == add, "roxe_stats word %zu moved by %llu, want %llu", i,
		      (unsigned long long)(is - was), (unsigned long long)add);
	}
	fx.sum = now;
	if (e.qpn >= 0) {
		memcpy(&qs_after, (const void *)&fx.qs[e.qpn], sizeof(qs_after));
#define MOVED(f) CHECK(qs_after.f - qs_before.f == e.qs.f,			\
		       "QP 0x%lx " #f " moved by %llu, want %llu", e.qpn,	\
		       (unsigned long long)(qs_after.f - qs_before.f),		\
		       (unsigned long long)e.qs.f);
		QS_XDP_FIELDS(MOVED)
#undef MOVED
		qs_add(&fx.qs_total, &e.qs);
	}
	if (++fx.runs % 4096 == 0)
		check_all_qps();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fx.skel)
		setup();
	/* A test run takes no frame shorter than an Ethernet header. */
	if (size < 14 || size > MAX_FRAME)
		return 0;
	/* The kernel's multi-buffer path is a branch libFuzzer can see here
	 * only: it keeps long inputs in the corpus. */
	if (size > FIRST_BUF)
		fx.multi_buffer++;
	run_frame(data, size, false);
	run_frame(data, size, true);
	return 0;
}
