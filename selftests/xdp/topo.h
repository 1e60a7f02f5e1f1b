/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tests' two-host topology (tools/scripts/netns.sh) seen from C: create and
 * remove it, hop between its namespaces, read interface addresses, build
 * test frames from host a to host b.
 */
#ifndef ROXE_SELFTEST_TOPO_H
#define ROXE_SELFTEST_TOPO_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "roxe/frame.h"

#ifndef ROXE_TOP
#error "ROXE_TOP: the source tree, for tools/scripts/netns.sh"
#endif

struct topo {
	char	name[13];	/* at most 12: interface names are NAME-a */
	int	ns_a, ns_b, ns_m, ns_root;	/* ns_m: -1 without --middle/--routed */
	int	ifindex_a, ifindex_b;
	uint8_t	mac_a[6], mac_b[6];
};

static inline int topo_enter(int ns_fd)
{
	return setns(ns_fd, CLONE_NEWNET);
}

static inline int if_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.15s", ifname);
	r = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (r == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return r;
}

static inline void topo_down(struct topo *t)
{
	char cmd[256];

	if (t->ns_root >= 0)
		topo_enter(t->ns_root);
	snprintf(cmd, sizeof(cmd), "%s/tools/scripts/netns.sh down %s", ROXE_TOP, t->name);
	if (system(cmd) != 0)
		fprintf(stderr, "# cannot remove topology %s\n", t->name);
	for (int *fd = &t->ns_a; fd <= &t->ns_root; fd++)
		if (*fd >= 0)
			close(*fd);
	t->ns_a = t->ns_b = t->ns_m = t->ns_root = -1;
}

static inline void topo_ifname(const struct topo *t, char host, char *buf, size_t len)
{
	snprintf(buf, len, "%s-%c", t->name, host);
}

/* Creates tag-a and tag-b (tag unique per test) with `queues` queues and
 * the MTU, netns.sh's options opt; mid: the third namespace's letter (0:
 * none), whose fd becomes ns_m. */
static inline int topo_up_opt(struct topo *t, const char *tag, int queues, int mtu,
			      const char *opt, char mid)
{
	char cmd[256], path[32], ifname[16];
	bool middle = mid != 0;

	memset(t, 0, sizeof(*t));
	t->ns_a = t->ns_b = t->ns_m = -1;
	snprintf(t->name, sizeof(t->name), "rx%s%d", tag, getpid() % 1000);
	t->ns_root = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	snprintf(cmd, sizeof(cmd), "%s/tools/scripts/netns.sh down %s; %s/tools/scripts/netns.sh up %s "
		 "--queues %d --mtu %d %s", ROXE_TOP, t->name, ROXE_TOP, t->name, queues, mtu, opt);
	if (system(cmd) != 0)
		return -1;
	if (middle) {
		snprintf(path, sizeof(path), "/run/netns/%s-%c", t->name, mid);
		t->ns_m = open(path, O_RDONLY | O_CLOEXEC);
		if (t->ns_m < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "/run/netns/%s-a", t->name);
	t->ns_a = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/run/netns/%s-b", t->name);
	t->ns_b = open(path, O_RDONLY | O_CLOEXEC);
	if (t->ns_a < 0 || t->ns_b < 0)
		return -1;
	topo_ifname(t, 'a', ifname, sizeof(ifname));
	if (topo_enter(t->ns_a) || if_mac(ifname, t->mac_a))
		return -1;
	t->ifindex_a = if_nametoindex(ifname);
	topo_ifname(t, 'b', ifname, sizeof(ifname));
	if (topo_enter(t->ns_b) || if_mac(ifname, t->mac_b))
		return -1;
	t->ifindex_b = if_nametoindex(ifname);
	return 0;
}

/* Creates tag-a and tag-b joined directly or (middle) through a bridge in a third namespace tag-m, a host on the same
 * link; leaves the caller in namespace b. */
static inline int topo_up_middle(struct topo *t, const char *tag, int queues, int mtu,
				 bool middle)
{
	return topo_up_opt(t, tag, queues, mtu, middle ? "--middle" : "", middle ? 'm' : 0);
}

/* a and b in different subnets, the router namespace tag-r (ns_m here)
 * between them (netns.sh --routed); leaves the caller in namespace b. */
static inline int topo_up_routed(struct topo *t, const char *tag, int queues, int mtu)
{
	return topo_up_opt(t, tag, queues, mtu, "--routed", 'r');
}

static inline int topo_up(struct topo *t, const char *tag, int queues, int mtu)
{
	return topo_up_middle(t, tag, queues, mtu, false);
}

/* A RoCE v2 frame from a (10.99.0.1 or fd99::1) to b; returns its length. */
static inline int topo_frame(const struct topo *t, void *buf, size_t cap, bool v6,
			     uint8_t opcode, uint32_t dqpn, uint32_t psn,
			     const void *payload, uint32_t len, uint16_t sport)
{
	struct roxe_frame_addr a = { .sport = sport };
	struct roxe_frame_hdr h = {
		.opcode = opcode, .pkey = ROXE_DEFAULT_PKEY, .dqpn = dqpn, .psn = psn,
		.qkey = 0x11111111, .src_qpn = 2,
	};
	struct roxe_pkt pkt;

	memcpy(a.smac, t->mac_a, 6);
	memcpy(a.dmac, t->mac_b, 6);
	if (v6) {
		inet_pton(AF_INET6, "fd99::1", a.sgid);
		inet_pton(AF_INET6, "fd99::2", a.dgid);
	} else {
		roxe_gid_from_v4(a.sgid, inet_addr("10.99.0.1"));
		roxe_gid_from_v4(a.dgid, inet_addr("10.99.0.2"));
	}
	return roxe_frame_build(buf, cap, &a, &h, payload, len, &pkt);
}

#endif /* ROXE_SELFTEST_TOPO_H */
