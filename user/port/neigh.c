// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Destination MACs for RoCE v2 peers: the kernel's neighbour table, read
 * over rtnetlink (RTM_GETNEIGH dump). When the peer is not there yet, one
 * empty UDP datagram to its discard port makes the kernel resolve it (ARP
 * or neighbour discovery), and the table is read again until the timeout.
 *
 * Only on-link peers: a GID behind a router would need the next hop's
 * entry (RTM_GETROUTE), which roxe does not look up yet.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include "roxe/frame.h"
#include "port/neigh.h"

#define USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

/* Look ip (4 or 16 bytes) up on ifindex. 0: found, -ENOENT: not (yet). */
static int neigh_lookup(int family, int ifindex, const uint8_t *ip, uint8_t mac[6])
{
	struct {
		struct nlmsghdr nh;
		struct ndmsg nd;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		.nd = { .ndm_family = (uint8_t)family, .ndm_ifindex = ifindex },
	};
	size_t iplen = family == AF_INET ? 4 : 16;
	char buf[16384];
	int fd, ret = -ENOENT;
	bool done = false;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		ret = -errno;
		goto out;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nh;

		if (n <= 0) {
			ret = n < 0 ? -errno : ret;
			break;
		}
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
			struct ndmsg *nd = NLMSG_DATA(nh);
			struct rtattr *rta;
			int alen;
			const uint8_t *dst = NULL, *ll = NULL;

			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			if (nh->nlmsg_type != RTM_NEWNEIGH || nd->ndm_ifindex != ifindex ||
			    !(nd->ndm_state & USABLE))
				continue;
			alen = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
			for (rta = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd)));
			     RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen)) {
				if (rta->rta_type == NDA_DST && RTA_PAYLOAD(rta) == iplen)
					dst = RTA_DATA(rta);
				else if (rta->rta_type == NDA_LLADDR && RTA_PAYLOAD(rta) == 6)
					ll = RTA_DATA(rta);
			}
			if (dst && ll && !memcmp(dst, ip, iplen)) {
				memcpy(mac, ll, 6);
				ret = 0;
			}
		}
	}
out:
	close(fd);
	return ret;
}

/* Ask the kernel to resolve ip: an empty datagram to its discard port. */
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

int roxe_neigh_resolve(int ifindex, const uint8_t gid[16], uint8_t mac[6], int timeout_ms)
{
	int family = roxe_gid_is_v4(gid) ? AF_INET : AF_INET6;
	const uint8_t *ip = family == AF_INET ? gid + 12 : gid;
	int waited = 0, err;

	err = neigh_lookup(family, ifindex, ip, mac);
	if (err != -ENOENT)
		return err;
	neigh_kick(family, ifindex, ip);
	while (waited < timeout_ms) {
		struct timespec nap = { 0, 5 * 1000000 };

		nanosleep(&nap, NULL);
		waited += 5;
		err = neigh_lookup(family, ifindex, ip, mac);
		if (err != -ENOENT)
			return err;
	}
	return -EHOSTUNREACH;
}
