// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * This side: the interface's MAC, MTU and GID, and the port the frames go
 * through: AF_XDP sockets behind roxe's XDP program (attached here if the
 * interface has none) with our QPN in its QP table, or a UDP socket.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "rawperf.h"
#include "roxe/xdp.h"

/* MAC, MTU, and the GID: the interface's IPv4 address, else a global IPv6
 * one (as roxe devices choose theirs). */
int side_iface_query(const char *ifname, struct side *s)
{
	struct ifreq ifr = { 0 };
	struct ifaddrs *ifa, *i;
	bool have4 = false, have6 = false;
	int fd, err = 0;

	if (!if_nametoindex(ifname)) {
		err_msg("no interface %s in this network namespace", ifname);
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(s->mac, ifr.ifr_hwaddr.sa_data, 6);
	else
		err = -1;
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr) == 0)
		s->mtu = (unsigned)ifr.ifr_mtu;
	else
		err = -1;
	close(fd);
	if (err) {
		err_msg("cannot read MAC/MTU of %s: %s", ifname, strerror(errno));
		return -1;
	}
	if (getifaddrs(&ifa)) {
		err_msg("getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			roxe_gid_from_v4(s->gid, ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
			have4 = true;
			break;
		}
		if (i->ifa_addr->sa_family == AF_INET6 && !have6) {
			const struct sockaddr_in6 *s6 = (const void *)i->ifa_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr)) {
				memcpy(s->gid, &s6->sin6_addr, 16);
				have6 = true;
			}
		}
	}
	freeifaddrs(ifa);
	if (!have4 && !have6) {
		err_msg("%s has no IPv4 or global IPv6 address (the RoCE v2 GID)", ifname);
		return -1;
	}
	return 0;
}

/* roxe's XDP program (the one attached, else ours, unpinned), AF_XDP
 * sockets on its queues as engine 0's port, and o->qpn steered to them. */
int side_open_afxdp(const struct opts *o, struct side *s)
{
	struct roxe_xdp_attach_opts ao = { .engines = 1, .no_pin = true };
	struct roxe_afxdp_config c = { .ifname = o->ifname };
	struct roxe_qp_route route = { 0 };
	uint32_t other = 0, key = o->qpn;
	int err;

	err = roxe_xdp_open(o->ifname, &s->xdp, &other);
	if ((err == -ENOENT && !other) || err == -EBUSY) {	/* joins a dispatcher */
		other = 0;
		err = roxe_xdp_attach(o->ifname, &ao, &s->xdp, &other);
		s->xdp_ours = !err;
	}
	if (err) {
		if (other) {
			char why[512];

			roxe_xdp_busy_reason(o->ifname, why, sizeof(why));
			err_msg("%s", why);
		} else
			err_msg("cannot attach roxe's XDP program to %s: %s", o->ifname,
				strerror(-err));
		return -1;
	}
	if (bpf_map_lookup_elem(s->xdp->qp_table_fd, &key, &route) == 0 && route.in_use) {
		err_msg("QPN %u is in use on %s (another roxe user): pick another with --qpn",
			o->qpn, o->ifname);
		return -1;
	}
	c.engines = s->xdp->config.engines;
	c.xsks_map_fd = s->xdp->xsks_fd;
	/* AF_XDP sockets of a process that just exited are released
	 * asynchronously: binding to their queue fails with EBUSY a moment. */
	for (int tries = 0; ; tries++) {
		s->afxdp = roxe_afxdp_open(&c);
		if (s->afxdp || errno != EBUSY || tries == 100)
			break;
		usleep(20000);
	}
	if (!s->afxdp) {
		if (errno == EBUSY)
			err_msg("the queues of %s are taken by another AF_XDP user", o->ifname);
		else if (errno == EINVAL)
			err_msg("%s has fewer queues than the %u engines roxe was attached for",
				o->ifname, c.engines);
		else
			err_msg("cannot open AF_XDP sockets on %s: %s", o->ifname, strerror(errno));
		return -1;
	}
	s->port = roxe_afxdp_port(s->afxdp, 0);
	if (!s->port) {
		err_msg("no AF_XDP port for engine 0 on %s", o->ifname);
		return -1;
	}
	err = roxe_xdp_set_qp(s->xdp, o->qpn, 0);
	if (err) {
		err_msg("cannot register QPN %u on %s: %s", o->qpn, o->ifname, strerror(-err));
		return -1;
	}
	s->qp_set = true;
	return 0;
}

int side_open_udp(const struct opts *o, struct side *s)
{
	struct roxe_xdp *x;
	char ip[INET6_ADDRSTRLEN];

	/* With roxe's program attached, RoCE frames never reach the socket
	 * (unknown QPs are dropped) unless it passes unknown QPs. */
	if (roxe_xdp_open(o->ifname, &x, NULL) == 0) {
		bool pass = x->config.pass_unknown_qp;

		roxe_xdp_close(x);
		if (!pass) {
			err_msg("roxe's XDP program is attached to %s and would drop the UDP "
				"backend's frames: roxectl detach %s", o->ifname, o->ifname);
			return -1;
		}
	}
	roxe_gid_ntop(s->gid, ip, sizeof(ip));
	s->port = roxe_udp_port_open(ip);
	if (!s->port) {
		err_msg("cannot open a UDP socket on %s:%u: %s", ip, ROXE_UDP_PORT,
			strerror(errno));
		return -1;
	}
	return 0;
}

void side_close(const struct opts *o, struct side *s)
{
	if (s->qp_set)
		roxe_xdp_clear_qp(s->xdp, s->qpn);
	roxe_port_destroy(s->port);
	roxe_afxdp_close(s->afxdp);
	if (s->xdp_ours)
		roxe_xdp_detach(o->ifname, NULL);
	roxe_xdp_close(s->xdp);
}
