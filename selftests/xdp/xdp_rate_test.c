// SPDX-License-Identifier: GPL-2.0-only
/*
 * Steering under load, one engine then two: each engine of host a sends
 * small RoCE frames from its own thread to QPs of host b's engine with the
 * same number, each engine of b receives in its own thread. Checks that
 * no frame reaches the wrong engine and prints the rates (the figure
 * behind the shared-UMEM decision in user/port/afxdp.c; sanitizer builds
 * are several times slower than `make`'s).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "topo.h"
#include "roxe/xdp.h"
#include "roxe/port.h"

#define ENGINES		2
#define QP_BASE		0x100
#define SECONDS		1.0

struct worker {
	struct topo	*t;
	struct roxe_port *port;
	unsigned	engine;
	atomic_bool	*stop;
	uint64_t	frames;		/* sent or received (read while it runs) */
	uint64_t	misrouted;
	pthread_t	th;
};

static void *sender(void *arg)
{
	struct worker *w = arg;
	uint8_t frame[256];
	int len = topo_frame(w->t, frame, sizeof(frame), false, ROXE_OP_RC_SEND_ONLY,
			     QP_BASE + w->engine, 0, "0123456789abcdef0123456789abcdef"
			     "0123456789abcdef0123456789abcdef", 64, 0xc000 + w->engine);

	while (len > 0 && !atomic_load(w->stop)) {
		struct roxe_buf b[32];
		unsigned n = roxe_port_tx_alloc(w->port, b, 32);

		for (unsigned i = 0; i < n; i++) {
			memcpy(b[i].data, frame, len);
			b[i].len = len;
		}
		roxe_port_tx(w->port, b, n);
		roxe_port_flush(w->port);
		__atomic_fetch_add(&w->frames, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *receiver(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(w->stop)) {
		struct roxe_buf b[64];
		unsigned n = roxe_port_rx(w->port, b, 64);

		for (unsigned i = 0; i < n; i++) {
			struct roxe_pkt pkt;

			if (roxe_parse(b[i].data, b[i].data + b[i].len, b[i].len, &pkt) ||
			    roxe_bth_qpn((const void *)(b[i].data + pkt.bth_off)) !=
			    QP_BASE + w->engine)
				w->misrouted++;
		}
		if (n)
			roxe_port_rx_release(w->port, b, n);
		__atomic_fetch_add(&w->frames, n, __ATOMIC_RELAXED);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

TEST(rate_one_and_two_engines)
{
	struct roxe_xdp_attach_opts o = { .mode = ROXE_XDP_NATIVE, .engines = ENGINES,
					  .no_pin = true };
	struct roxe_afxdp_config c = { .engines = ENGINES };
	struct roxe_xdp *xa = NULL, *xb = NULL;
	struct roxe_afxdp *ga = NULL, *gb = NULL;
	struct roxe_port *pa[ENGINES] = { 0 }, *pb[ENGINES] = { 0 };
	char ifa[16], ifb[16];
	struct topo t;
	bool ok = true;

	libbpf_set_print(NULL);
	if (topo_up(&t, "r", ENGINES, 1500)) {
		topo_down(&t);
		ASSERT_TRUE(0) TH_LOG("no topology");
	}
	topo_ifname(&t, 'a', ifa, sizeof(ifa));
	topo_ifname(&t, 'b', ifb, sizeof(ifb));
	ok = roxe_xdp_attach(ifb, &o, &xb, NULL) == 0;
	if (ok) {
		c.ifname = ifb;
		c.xsks_map_fd = xb->xsks_fd;
		ok = (gb = roxe_afxdp_open(&c)) != NULL;
	}
	topo_enter(t.ns_a);
	if (ok)
		ok = roxe_xdp_attach(ifa, &o, &xa, NULL) == 0;
	if (ok) {
		c.ifname = ifa;
		c.xsks_map_fd = xa->xsks_fd;
		ok = (ga = roxe_afxdp_open(&c)) != NULL;
	}
	topo_enter(t.ns_b);
	for (unsigned e = 0; ok && e < ENGINES; e++) {
		pa[e] = roxe_afxdp_port(ga, e);
		pb[e] = roxe_afxdp_port(gb, e);
		ok = pa[e] && pb[e] && roxe_xdp_set_qp(xb, QP_BASE + e, e) == 0;
	}
	EXPECT_TRUE(ok);

	for (unsigned engines = 1; ok && engines <= ENGINES; engines++) {
		struct worker tx[ENGINES], rx[ENGINES];
		atomic_bool stop = false;
		uint64_t sent = 0, got = 0, bad = 0;
		double t0, dt;

		t0 = now_s();
		for (unsigned e = 0; e < engines; e++) {
			tx[e] = (struct worker){ &t, pa[e], e, &stop, 0, 0, 0 };
			rx[e] = (struct worker){ &t, pb[e], e, &stop, 0, 0, 0 };
			pthread_create(&rx[e].th, NULL, receiver, &rx[e]);
			pthread_create(&tx[e].th, NULL, sender, &tx[e]);
		}
		/* SECONDS of traffic: the rates' window (printed, never
		 * judged); and on until every receiver has had frames, a
		 * bound met only by one that never does */
		for (unsigned e = 0; e < engines; e++)
			while (now_s() - t0 < SECONDS ||
			       (!__atomic_load_n(&rx[e].frames, __ATOMIC_RELAXED) &&
				now_s() - t0 < SECONDS + 10))
				usleep(10000);
		atomic_store(&stop, true);
		dt = now_s() - t0;
		for (unsigned e = 0; e < engines; e++) {
			pthread_join(tx[e].th, NULL);
			pthread_join(rx[e].th, NULL);
			sent += tx[e].frames;
			got += rx[e].frames;
			bad += rx[e].misrouted;
			EXPECT_LT(0, rx[e].frames);
		}
		EXPECT_EQ(0, bad);
		EXPECT_LE(got, sent);
		ksft_print_msg("%u engine%s: sent %.0f kpps, received %.0f kpps (106 B frames)\n",
			       engines, engines > 1 ? "s" : "", sent / dt / 1e3, got / dt / 1e3);
		fflush(stdout);	/* the harness's child leaves with _exit() */
	}

	for (unsigned e = 0; e < ENGINES; e++) {
		roxe_port_destroy(pa[e]);
		roxe_port_destroy(pb[e]);
	}
	roxe_afxdp_close(ga);
	roxe_afxdp_close(gb);
	roxe_xdp_close(xa);
	roxe_xdp_close(xb);
	topo_down(&t);	/* removing the namespaces detaches everything */
}

TEST_HARNESS_MAIN
