// SPDX-License-Identifier: GPL-2.0-only
/*
 * A device on an interface whose queues are fewer, or more, than the
 * CPUs (a veth of 1 or 4 queues in a network namespace): by default it
 * runs one engine per CPU but no more than the queues (issue #36: one per
 * CPU needed as many queues, and failed with EINVAL), with an AF_XDP
 * socket on every queue and buffers sized to them; a count the queues
 * cannot take is refused before anything touches the interface, and the
 * report says what fits. roxed's start-up line and its refusal are made
 * of these reports (daemon/roxed.c).
 */
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "topo.h"
#include "roxe/kabi.h"
#include "roxe/port.h"
#include "roxe/verbs.h"
#include "roxe/xdp.h"
#include "verbs/served.h"

FIXTURE(q) {
	struct topo	t;
	char		ifb[16];
	bool		up;
};

FIXTURE_VARIANT(q) {
	int		queues;
};

FIXTURE_VARIANT_ADD(q, one_queue) { .queues = 1 };
FIXTURE_VARIANT_ADD(q, four_queues) { .queues = 4 };

FIXTURE_SETUP(q)
{
	libbpf_set_print(NULL);
	ASSERT_EQ(0, topo_up(&self->t, "q", variant->queues, 1500));
	self->up = true;
	topo_ifname(&self->t, 'b', self->ifb, sizeof(self->ifb));
}

FIXTURE_TEARDOWN(q)
{
	if (self->up)
		topo_down(&self->t);
}

TEST_F(q, default_engines_follow_queues)
{
	struct roxe_device_attr da = { .ifname = self->ifb, .backend = ROXE_BACKEND_AFXDP };
	unsigned cpus = roxe_cpus_usable(), nq = (unsigned)variant->queues;
	unsigned want = cpus < nq ? cpus : nq;
	const struct roxe_afxdp_plan *p;
	struct roxe_open_report r;
	struct roxe_device *dev;
	int err;

	/* the public open, as an application calls it */
	err = roxe_device_open(&da, &dev);
	ASSERT_EQ(0, err) TH_LOG("roxe_device_open, engines 0, %u queues, %u CPUs: %s", nq, cpus,
				 strerror(-err));
	roxe_device_close(dev);

	err = roxe_served_device_open(&da, ROXE_KABI_MAX_ENGINES, &dev, &r);
	ASSERT_EQ(0, err) TH_LOG("step %d: %s", r.step, strerror(-err));
	p = &r.afxdp.plan;
	EXPECT_EQ(want, r.engines);
	EXPECT_EQ(ROXE_QUEUES_ETHTOOL, r.afxdp.q.from);	/* veth: rx and tx channels */
	EXPECT_EQ(nq, r.afxdp.q.rx);
	EXPECT_EQ(nq, p->queues);
	EXPECT_EQ(cpus <= nq ? ROXE_PLAN_CORES : ROXE_PLAN_QUEUES, p->limit);
	EXPECT_EQ((uint64_t)nq * p->rx_bufs * p->chunk + (uint64_t)want * p->tx_bufs * p->tx_buf,
		  p->umem_bytes);
	TH_LOG("%u queues, %u CPUs: %u engines, %u buffers a queue, %llu MiB", nq, cpus, r.engines,
	       p->rx_bufs, (unsigned long long)(p->umem_bytes >> 20));
	roxe_device_close(dev);
}

TEST_F(q, too_many_engines_refused_untouched)
{
	struct roxe_device_attr da = { .ifname = self->ifb, .backend = ROXE_BACKEND_AFXDP,
				       .engines = (unsigned)variant->queues + 1 };
	struct roxe_open_report r;
	struct roxe_device *dev = NULL;
	struct roxe_xdp *x = NULL;
	uint32_t other = 0;

	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	ASSERT_EQ(-EINVAL, roxe_served_device_open(&da, ROXE_KABI_MAX_ENGINES, &dev, &r));
	EXPECT_EQ(ROXE_OPEN_PLAN, r.step);
	EXPECT_EQ((unsigned)variant->queues, r.afxdp.plan.fit);
	EXPECT_EQ(ROXE_PLAN_QUEUES, r.afxdp.plan.limit);
	/* refused before the XDP program was attached */
	EXPECT_EQ(-ENOENT, roxe_xdp_open(self->ifb, &x, &other));
	EXPECT_EQ(0u, other);
}

TEST_HARNESS_MAIN
