// SPDX-License-Identifier: GPL-2.0-only
/*
 * What roxed decides at start-up before it touches a NIC, on numbers a
 * driver could report: the interface's queues from its ethtool channels
 * (checked: none, or counts past 32 bits, are refused), the AF_XDP plan
 * (the default engine count, a count the queues cannot take, the XDP
 * map's bound, the UMEM's size), and systemd's notify socket (the
 * address $NOTIFY_SOCKET names, and a datagram that arrives there).
 */
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/ethtool.h>
#include "kselftest_harness.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"
#include "roxe/port.h"
#include "notify.h"

#define MiB (1024ull * 1024)

TEST(channels_combined)
{
	struct ethtool_channels ch = { .combined_count = 4, .max_combined = 8 };
	struct roxe_if_queues q;

	ASSERT_EQ(0, roxe_if_queues_from_channels(&ch, &q));
	EXPECT_EQ(ROXE_QUEUES_ETHTOOL, q.from);
	EXPECT_EQ(4u, q.rx);
	EXPECT_EQ(4u, q.tx);
	EXPECT_EQ(8u, q.max_combined);
}

/* veth: rx and tx channels, no combined ones */
TEST(channels_rx_tx)
{
	struct ethtool_channels ch = { .rx_count = 2, .tx_count = 3 };
	struct roxe_if_queues q;

	ASSERT_EQ(0, roxe_if_queues_from_channels(&ch, &q));
	EXPECT_EQ(2u, q.rx);
	EXPECT_EQ(3u, q.tx);
	EXPECT_EQ(0u, q.combined);
}

TEST(channels_refused)
{
	struct ethtool_channels none = { .tx_count = 4 };
	struct ethtool_channels wrap = { .combined_count = 0xffffffffu, .rx_count = 2 };
	struct roxe_if_queues q = { .rx = 77 };

	EXPECT_EQ(-ERANGE, roxe_if_queues_from_channels(&none, &q));
	EXPECT_EQ(-ERANGE, roxe_if_queues_from_channels(&wrap, &q));
	EXPECT_EQ(77u, q.rx);	/* untouched */
}

/* receive channels and no transmit ones: each queue transmits too */
TEST(channels_rx_only)
{
	struct ethtool_channels ch = { .rx_count = 4 };
	struct roxe_if_queues q;

	ASSERT_EQ(0, roxe_if_queues_from_channels(&ch, &q));
	EXPECT_EQ(4u, q.tx);
}

/* An interface that does not exist: 1 queue assumed, and said so. */
TEST(queues_unknown)
{
	struct roxe_if_queues q;

	roxe_if_queues("roxe-none0", &q);
	EXPECT_EQ(ROXE_QUEUES_UNKNOWN, q.from);
	EXPECT_EQ(1u, q.rx);
	EXPECT_EQ(1u, q.tx);
	EXPECT_LE(1u, roxe_cpus_usable());
}

static struct roxe_if_queues combined(unsigned n)
{
	return (struct roxe_if_queues){ .rx = n, .tx = n, .from = ROXE_QUEUES_ETHTOOL,
					.combined = n };
}

/* issue #36's NIC: 16 cores, 4 queues: one engine per queue, 8 MiB of
 * receive buffers a queue (as many queues as engines) and 4 MiB of
 * transmit buffers an engine */
TEST(plan_default_fewer_queues_than_cores)
{
	struct roxe_if_queues q = combined(4);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(4u, p.engines);
	EXPECT_EQ(ROXE_PLAN_QUEUES, p.limit);
	EXPECT_EQ(4u, p.queues);
	EXPECT_EQ(2048u, p.rx_bufs);
	EXPECT_EQ(48 * MiB, p.umem_bytes);
}

/* 2 cores, 8 queues: one engine per core, sockets on all 8 queues, a send
 * window of buffers each (4 MiB), not 8 MiB: 40 MiB, not 80 */
TEST(plan_default_more_queues_than_cores)
{
	struct roxe_if_queues q = combined(8);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 2, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(2u, p.engines);
	EXPECT_EQ(ROXE_PLAN_CORES, p.limit);
	EXPECT_EQ(8u, p.queues);
	EXPECT_EQ(1024u, p.rx_bufs);
	EXPECT_EQ(40 * MiB, p.umem_bytes);
}

/* no 64-queue ceiling: 128 queues, 4 cores */
TEST(plan_many_queues)
{
	struct roxe_if_queues q = combined(128);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 4, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(4u, p.engines);
	EXPECT_EQ(128u, p.queues);
	EXPECT_EQ(1024u, p.rx_bufs);
	EXPECT_EQ(128 * 4 * MiB + 4 * 4 * MiB, p.umem_bytes);
}

/* a queue's buffers are a power of two (the fill ring's size) */
TEST(plan_buffers_power_of_two)
{
	struct roxe_if_queues q = combined(4);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(3, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(ROXE_PLAN_ASKED, p.limit);
	EXPECT_EQ(1024u, p.rx_bufs);	/* 1536 down to 1024 */
}

TEST(plan_asked_too_many)
{
	struct roxe_if_queues q = combined(2);
	struct roxe_afxdp_plan p;

	EXPECT_EQ(0, roxe_afxdp_plan(2, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	ASSERT_EQ(-EINVAL, roxe_afxdp_plan(4, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(0u, p.engines);
	EXPECT_EQ(2u, p.fit);
	EXPECT_EQ(ROXE_PLAN_QUEUES, p.limit);
}

/* engine e transmits on queue e: fewer transmit queues bound them too */
TEST(plan_tx_queues)
{
	struct roxe_if_queues q = { .rx = 8, .tx = 2, .from = ROXE_QUEUES_ETHTOOL,
				    .rx_only = 8, .tx_only = 2 };
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(2u, p.engines);
	EXPECT_EQ(8u, p.queues);
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(3, 16, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
}

TEST(plan_max_engines)
{
	struct roxe_if_queues q = combined(64);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 96, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ((unsigned)ROXE_KABI_MAX_ENGINES, p.engines);
	EXPECT_EQ(ROXE_PLAN_MAX, p.limit);
}

/* the XDP map's sockets (engines x queues) bound the engines */
TEST(plan_map_slots)
{
	struct roxe_if_queues q = combined(2000);
	struct roxe_if_queues huge = combined(ROXE_MAX_XSKS + 1);
	struct roxe_afxdp_plan p;

	ASSERT_EQ(0, roxe_afxdp_plan(0, 96, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(ROXE_MAX_XSKS / 2000u, p.engines);
	EXPECT_EQ(ROXE_PLAN_SLOTS, p.limit);
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(16, 96, ROXE_KABI_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(ROXE_PLAN_SLOTS, p.limit);
	/* not even one engine: refused whatever is asked */
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(0, 2, ROXE_KABI_MAX_ENGINES, &huge, ROXE_MAX_XSKS, &p));
	EXPECT_EQ(0u, p.fit);
	/* an older program's smaller map, as read from the kernel */
	EXPECT_EQ(-EINVAL, roxe_afxdp_plan(4, 16, ROXE_KABI_MAX_ENGINES, &q, 4096, &p));
	EXPECT_EQ(2u, p.fit);
}

TEST(notify_addr)
{
	char long_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	struct sockaddr_un sa;
	socklen_t len;

	ASSERT_EQ(0, roxed_notify_addr("/run/systemd/notify", &sa, &len));
	EXPECT_EQ(AF_UNIX, sa.sun_family);
	EXPECT_STREQ("/run/systemd/notify", sa.sun_path);
	EXPECT_EQ(offsetof(struct sockaddr_un, sun_path) + sizeof("/run/systemd/notify"), len);
	/* abstract: a leading NUL, no trailing one */
	ASSERT_EQ(0, roxed_notify_addr("@sd-notify", &sa, &len));
	EXPECT_EQ('\0', sa.sun_path[0]);
	EXPECT_EQ(0, memcmp(sa.sun_path + 1, "sd-notify", 9));
	EXPECT_EQ(offsetof(struct sockaddr_un, sun_path) + 10, len);
	EXPECT_EQ(-EINVAL, roxed_notify_addr("", &sa, &len));
	EXPECT_EQ(-EINVAL, roxed_notify_addr("@", &sa, &len));
	EXPECT_EQ(-EINVAL, roxed_notify_addr("relative", &sa, &len));
	EXPECT_EQ(-EINVAL, roxed_notify_addr("vsock:2:1234", &sa, &len));
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = '\0';	/* 108 bytes: no room for the NUL */
	EXPECT_EQ(-EINVAL, roxed_notify_addr(long_path, &sa, &len));
	long_path[0] = '@';				/* abstract: fits */
	EXPECT_EQ(0, roxed_notify_addr(long_path, &sa, &len));
}

TEST(notify_send)
{
	char dir[] = "/tmp/roxe-notify-XXXXXX", path[64], got[64];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	ssize_t n;
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	unsetenv("NOTIFY_SOCKET");
	EXPECT_EQ(0, roxed_notify("READY=1"));	/* not under systemd: nothing */
	setenv("NOTIFY_SOCKET", path, 1);
	EXPECT_EQ(1, roxed_notify("READY=1\nSTATUS=up"));
	n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
	ASSERT_EQ((ssize_t)strlen("READY=1\nSTATUS=up"), n);
	got[n] = '\0';
	EXPECT_STREQ("READY=1\nSTATUS=up", got);
	setenv("NOTIFY_SOCKET", "relative", 1);
	EXPECT_EQ(-EINVAL, roxed_notify("READY=1"));
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(path);
	rmdir(dir);
}

TEST_HARNESS_MAIN
