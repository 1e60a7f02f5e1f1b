// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The next hop towards a RoCE v2 peer, from the kernel's tables through
 * libnl-route-3, as ib_core resolves it for rxe (rdma_resolve_ip):
 *   1. RTM_GETROUTE from the source GID to the destination GID: the route
 *      must leave through the device's interface; its gateway (or the
 *      destination itself, on link) is the next hop; its MTU metric, when
 *      there is one (`ip route ... mtu N`, a learned path MTU), limits the
 *      path MTU.
 *   2. The next hop's MAC from the neighbour table. When it is not there
 *      yet, one empty UDP datagram to the destination's discard port makes
 *      the kernel resolve the next hop (ARP or neighbour discovery), and the
 *      table is read again until the timeout.
 * The lookups run in the calling thread's network namespace.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/route/route.h>
#include <netlink/route/neighbour.h>
#include "roxe/frame.h"
#include "port/neigh.h"

#define USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)
#define POLL_MS	5

struct route_ans {
	int		err;		/* 0 once a route was read */
	int		family;
	int		oif;
	bool		gateway;
	uint8_t		nexthop[16];
	uint32_t	mtu;
};

static int route_cb(struct nl_msg *msg, void *arg)
{
	struct route_ans *a = arg;
	struct rtnl_route *r = NULL;
	struct rtnl_nexthop *nh;
	struct nl_addr *gw;
	uint32_t mtu;
	size_t alen = a->family == AF_INET ? 4 : 16;

	if (nlmsg_hdr(msg)->nlmsg_type != RTM_NEWROUTE || rtnl_route_parse(nlmsg_hdr(msg), &r) < 0)
		return NL_SKIP;
	a->err = -EHOSTUNREACH;
	/* Local, blackhole, unreachable, prohibit: not a next hop roxe can
	 * address. (A multipath route never comes here whole: the kernel
	 * answers RTM_GETROUTE with the one next hop it picked.) */
	if (rtnl_route_get_type(r) != RTN_UNICAST || rtnl_route_get_nnexthops(r) != 1)
		goto out;
	nh = rtnl_route_nexthop_n(r, 0);
	a->oif = rtnl_route_nh_get_ifindex(nh);
	gw = rtnl_route_nh_get_gateway(nh);
	if (gw) {
		if (nl_addr_get_family(gw) != a->family || nl_addr_get_len(gw) != alen)
			goto out;
		memcpy(a->nexthop, nl_addr_get_binary_addr(gw), alen);
		a->gateway = true;
	}
	if (rtnl_route_get_metric(r, RTAX_MTU, &mtu) == 0)
		a->mtu = mtu;
	a->err = 0;
out:
	rtnl_route_put(r);
	return NL_OK;
}

/* The route from ip_src to ip (4 or 16 bytes each). */
static int route_get(struct nl_sock *sk, int family, const uint8_t *src, const uint8_t *ip,
		     struct route_ans *a)
{
	struct rtmsg rtm = { .rtm_family = (uint8_t)family };
	size_t alen = family == AF_INET ? 4 : 16;
	struct nl_msg *msg;
	int err;

	rtm.rtm_dst_len = (uint8_t)(alen * 8);
	memset(a, 0, sizeof(*a));
	a->err = -EHOSTUNREACH;
	a->family = family;
	memcpy(a->nexthop, ip, alen);
	msg = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
	if (!msg)
		return -ENOMEM;
	/* From the QP's source address: the kernel checks it is local and
	 * policy routing by source applies, as for rxe's ip_route_output. */
	if (nlmsg_append(msg, &rtm, sizeof(rtm), NLMSG_ALIGNTO) < 0 ||
	    nla_put(msg, RTA_DST, (int)alen, ip) < 0 ||
	    nla_put(msg, RTA_SRC, (int)alen, src) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, route_cb, a);
	err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return -EIO;
	/* No route, or a source that is not ours: the kernel answers an error. */
	err = nl_recvmsgs_default(sk);
	if (err < 0)
		return a->err ? -EHOSTUNREACH : 0;
	return a->err;
}

/* The next hop's MAC from the neighbour table. 0, or -ENOENT: not (yet). */
static int neigh_lookup(struct nl_sock *sk, int family, int ifindex, const uint8_t *ip,
			uint8_t mac[6])
{
	struct nl_cache *cache = NULL;
	struct nl_addr *dst;
	struct rtnl_neigh *n;
	int ret = -ENOENT;

	dst = nl_addr_build(family, ip, family == AF_INET ? 4 : 16);
	if (!dst)
		return -ENOMEM;
	if (rtnl_neigh_alloc_cache(sk, &cache) < 0) {
		nl_addr_put(dst);
		return -EIO;
	}
	n = rtnl_neigh_get(cache, ifindex, dst);
	if (n) {
		struct nl_addr *ll = rtnl_neigh_get_lladdr(n);

		if ((rtnl_neigh_get_state(n) & USABLE) && ll && nl_addr_get_len(ll) == 6) {
			memcpy(mac, nl_addr_get_binary_addr(ll), 6);
			ret = 0;
		}
		rtnl_neigh_put(n);
	}
	nl_cache_free(cache);
	nl_addr_put(dst);
	return ret;
}

/* Ask the kernel to resolve the next hop towards ip: an empty datagram to
 * ip's discard port goes the route's way. */
static void neigh_kick(int family, int ifindex, const uint8_t *ip)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(9),
				   .sin6_scope_id = (uint32_t)ifindex };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (family == AF_INET) {
		memcpy(&s4.sin_addr, ip, 4);
		(void)sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&s4, sizeof(s4));
	} else {
		memcpy(&s6.sin6_addr, ip, 16);
		(void)sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&s6, sizeof(s6));
	}
	close(fd);
}

int roxe_neigh_resolve(int ifindex, const uint8_t sgid[16], const uint8_t dgid[16],
		       struct roxe_nexthop *out, int timeout_ms)
{
	int family = roxe_gid_is_v4(dgid) ? AF_INET : AF_INET6;
	const uint8_t *ip = family == AF_INET ? dgid + 12 : dgid;
	const uint8_t *src = family == AF_INET ? sgid + 12 : sgid;
	struct route_ans a;
	struct nl_sock *sk;
	int err;

	if (roxe_gid_is_v4(sgid) != roxe_gid_is_v4(dgid))
		return -EINVAL;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	/* One answer per request, no ACK after it: the socket is reused for
	 * the neighbour dumps. */
	nl_socket_disable_auto_ack(sk);
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		nl_socket_free(sk);
		return -EIO;
	}
	err = route_get(sk, family, src, ip, &a);
	if (!err && a.oif != ifindex)
		err = -ENETUNREACH;	/* the kernel would send it elsewhere */
	if (err)
		goto out;
	memset(out, 0, sizeof(*out));
	out->via_gateway = a.gateway;
	out->route_mtu = a.mtu;
	err = neigh_lookup(sk, family, ifindex, a.nexthop, out->mac);
	if (err != -ENOENT)
		goto out;
	neigh_kick(family, ifindex, ip);
	for (int waited = 0; waited < timeout_ms; waited += POLL_MS) {
		struct timespec nap = { 0, POLL_MS * 1000000 };

		nanosleep(&nap, NULL);
		err = neigh_lookup(sk, family, ifindex, a.nexthop, out->mac);
		if (err != -ENOENT)
			goto out;
	}
	err = -EHOSTUNREACH;
out:
	nl_socket_free(sk);
	return err;
}
