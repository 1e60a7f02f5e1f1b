// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The device: engines and their ports, the QP and MR tables, addressing,
 * and what query_device/query_port report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"
#include "verbs/internal.h"
#include "transport/credit.h"
#include "transport/handoff.h"
#include "transport/loopback.h"
#include "transport/stash.h"
#include "port/addrwatch.h"
#include "port/neigh.h"
#include "roxe/port.h"
#include "roxe/xdp.h"

static void dev_free(struct roxe_device *dev)
{
	roxe_addr_watch_stop(dev->addr_watch);
	roxe_mcast_dev_free(dev);	/* leaves its groups: needs the XDP maps */
	roxe_loop_unregister(dev, roxe_dev_quiesce);	/* its engines stopped, or never ran */
	for (unsigned i = 0; dev->engines && i < dev->nengines; i++) {
		if (dev->engines[i].efd > 0)
			close(dev->engines[i].efd);
		roxe_handoff_fini(&dev->engines[i]);
		roxe_stash_fini(&dev->engines[i]);
	}
	if (dev->async_efd > 0)
		close(dev->async_efd);
	for (unsigned i = 0; i < dev->afxdp_nports; i++)
		roxe_port_destroy(dev->afxdp_ports[i]);
	roxe_afxdp_close(dev->afxdp);
	roxe_port_destroy(dev->udp_port);
	roxe_xdp_close(dev->xdp);	/* ours (a BPF link) detaches with it */
	if (dev->qp_stats_own)
		free(dev->qp_stats);
	if (dev->eng_stats_own)
		free(dev->eng_stats);
	free(atomic_load(&dev->local));
	free((void *)dev->qps);
	free((void *)dev->mrs);
	free((void *)dev->mws);
	if (dev->ahs)
		for (unsigned i = 0; i < ROXE_MAX_AH; i++)
			free(atomic_load(&dev->ahs[i]));
	free((void *)dev->ahs);
	free(dev->engines);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->async_lock);
	pthread_mutex_destroy(&dev->addr_lock);
	free(dev);
}

static bool gid_unset(const uint8_t gid[16])
{
	static const uint8_t zero[16];

	return !memcmp(gid, zero, 16);
}

/* As rxe: the largest IB MTU that fits an IP MTU with 80 B of headers. */
static unsigned ib_mtu_of_ip(unsigned ip_mtu)
{
	unsigned ib_mtu = 4096;

	while (ib_mtu > 256 && ib_mtu + 80 > ip_mtu)
		ib_mtu /= 2;
	return ib_mtu;
}

/* The interface's link speed in Mbit/s (sysfs), or def where it tells
 * none (veth, a down link: -1 or unreadable). */
static uint32_t iface_speed(const char *ifname, uint32_t def)
{
	char path[64], buf[32];
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "re");
	if (!f)
		return def;
	v = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
	fclose(f);
	return v > 0 && v <= ROXE_DCQCN_RATE_MAX ? (uint32_t)v : def;
}

/* MAC, MTU and address of the interface: the device's port attributes. */
static int iface_query(struct roxe_device *dev, const struct roxe_device_attr *attr)
{
	struct ifaddrs *ifa, *i;
	struct ifreq ifr = { 0 };
	unsigned ib_mtu = 4096;
	int fd, err = 0;

	/* attr_check saw the name fit */
	_Static_assert(sizeof(dev->ifname) >= IFNAMSIZ, "an interface's name fits");
	strcpy(dev->ifname, attr->ifname);
	dev->ifindex = (int)if_nametoindex(attr->ifname);
	if (!dev->ifindex)
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, attr->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0)
		memcpy(dev->mac, ifr.ifr_hwaddr.sa_data, 6);
	else
		err = -errno;
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr) == 0) {
		ib_mtu = ib_mtu_of_ip((unsigned)ifr.ifr_mtu);
		dev->mtu = attr->mtu && attr->mtu < ib_mtu ? attr->mtu : ib_mtu;
	} else if (!err) {
		err = -errno;
	}
	close(fd);
	if (err)
		return err;

	memcpy(dev->gid, attr->gid, 16);
	if (!gid_unset(dev->gid))
		return 0;
	/* The GID is the interface's IPv4 address, else a global IPv6 one. */
	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, attr->ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			roxe_gid_from_v4(dev->gid,
					 ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
			break;
		}
		if (i->ifa_addr->sa_family == AF_INET6 && gid_unset(dev->gid)) {
			const struct sockaddr_in6 *s6 = (const void *)i->ifa_addr;

			if (!IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
				memcpy(dev->gid, &s6->sin6_addr, 16);
		}
	}
	freeifaddrs(ifa);
	return gid_unset(dev->gid) ? -EADDRNOTAVAIL : 0;
}

/* rxe's default GID, ib_core's index 0 on a RoCE v2 port (make_default_gid):
 * fe80::/64 and the MAC as a modified EUI-64 (addrconf_ifid_eui48). */
static void default_gid(const uint8_t mac[6], uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 2;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

/* The GID table follows the interface's addresses as ib_core's does for
 * rxe (roce_gid_mgmt.c, cache.c): index 0 is the default GID; a gone
 * address frees its entry while the others keep their index; a new one
 * takes the lowest free entry; an address equal to the default GID (the
 * EUI-64 link-local) adds nothing. a: in the order ib_core meets them at
 * registration (IPv4, then IPv6, each in the kernel's list order, which is
 * getifaddrs' dump order). Returns whether the table changed. */
static bool gid_table_sync(struct roxe_device *dev, const uint8_t (*a)[16], unsigned n)
{
	bool changed = false;

	for (unsigned i = 1; i < dev->gid_len; i++) {
		bool keep = false;

		for (unsigned j = 0; j < n && dev->gid_valid[i] && !keep; j++)
			keep = !memcmp(dev->gid_tbl[i], a[j], 16);
		if (dev->gid_valid[i] && !keep) {
			dev->gid_valid[i] = false;
			memset(dev->gid_tbl[i], 0, 16);
			changed = true;
		}
	}
	for (unsigned j = 0; j < n; j++) {
		unsigned i, free_ix = 0;

		for (i = 0; i < dev->gid_len; i++) {
			if (dev->gid_valid[i] && !memcmp(dev->gid_tbl[i], a[j], 16))
				break;
			if (!dev->gid_valid[i] && !free_ix)
				free_ix = i;
		}
		if (i < dev->gid_len || !free_ix)
			continue;	/* there already, or the table is full */
		memcpy(dev->gid_tbl[free_ix], a[j], 16);
		dev->gid_valid[free_ix] = true;
		changed = true;
	}
	return changed;
}

/* The port's own addresses now: the device's GID, and on a real interface
 * all of its addresses (a, n: those, for the GID table). */
static int local_set_read(const struct roxe_device *dev, struct roxe_local_set *l,
			  uint8_t (*a)[16], unsigned *n)
{
	int got;

	memcpy(l->gid[0], dev->gid, 16);
	l->n = 1;
	*n = 0;
	if (dev->backend == ROXE_BACKEND_PORTS)
		return 0;
	got = roxe_if_local_gids(dev->ifname, a, ROXE_MAX_LOCAL_ADDRS);
	if (got < 0)
		return got;
	*n = (unsigned)got;
	for (unsigned i = 0; i < *n && l->n < ROXE_MAX_LOCAL_ADDRS; i++)
		if (!roxe_local_set_has(l, a[i]))
			memcpy(l->gid[l->n++], a[i], 16);
	return 0;
}

/* Whether engine threads may be reading the local set: then an old one
 * is freed only once each has turned (roxe_dev_quiesce). */
enum engines_state { ENGINES_STOPPED, ENGINES_RUNNING };

/* Publish l (ours from now on): the XDP program's list first, so that no
 * frame to a new address reaches an engine that would not take it for
 * long; the old set is freed once no engine can be reading it. */
static int local_set_publish(struct roxe_device *dev, struct roxe_local_set *l,
			     enum engines_state engines)
{
	struct roxe_local_set *old;
	int err = 0;

	if (dev->xdp)
		err = roxe_xdp_set_local_addrs(dev->xdp, (const uint8_t (*)[16])l->gid, l->n);
	old = atomic_exchange_explicit(&dev->local, l, memory_order_acq_rel);
	roxe_loop_epoch_bump();		/* QPs look again where their frames go */
	if (old && engines == ENGINES_RUNNING)
		roxe_dev_quiesce(dev);
	free(old);
	return err;
}

/* Read the addresses, then update the GID table and publish the local set
 * if they changed: 1, 0 (nothing changed) or a negative errno. */
static int addrs_update(struct roxe_device *dev, enum engines_state engines)
{
	uint8_t a[ROXE_MAX_LOCAL_ADDRS][16];
	struct roxe_local_set *l, *cur;
	bool same, table;
	unsigned n;
	int err;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pthread_mutex_lock(&dev->addr_lock);
	err = local_set_read(dev, l, a, &n);
	if (err) {
		pthread_mutex_unlock(&dev->addr_lock);
		free(l);
		return err;
	}
	table = dev->backend != ROXE_BACKEND_PORTS &&
		gid_table_sync(dev, (const uint8_t (*)[16])a, n);
	cur = atomic_load_explicit(&dev->local, memory_order_acquire);
	same = cur && cur->n == l->n;
	for (unsigned i = 0; i < l->n && same; i++)
		same = roxe_local_set_has(cur, l->gid[i]);
	if (same)
		free(l);
	else
		err = local_set_publish(dev, l, engines);
	pthread_mutex_unlock(&dev->addr_lock);
	return err ? err : (!same || table);
}

int roxe_device_refresh_addrs(struct roxe_device *dev)
{
	if (!dev)
		return -EINVAL;
	return addrs_update(dev, ENGINES_RUNNING);
}

/* The address watcher's thread: an address of ours came or went. */
static void addrs_changed(void *arg)
{
	/* a failed read leaves the old set: the next event retries */
	addrs_update(arg, ENGINES_RUNNING);
}

/* The table before any address is read: on an interface, the default GID;
 * on caller-made ports, the one GID the caller gave. */
static void gid_table_init(struct roxe_device *dev)
{
	if (dev->backend == ROXE_BACKEND_PORTS) {
		dev->gid_len = 1;
		memcpy(dev->gid_tbl[0], dev->gid, 16);
	} else {
		dev->gid_len = ROXE_GID_TBL_EMB;
		default_gid(dev->mac, dev->gid_tbl[0]);
	}
	dev->gid_valid[0] = true;
}

int roxe_dev_sgid(struct roxe_device *dev, unsigned index, uint8_t sgid[16])
{
	int err = -EINVAL;

	pthread_mutex_lock(&dev->addr_lock);
	/* The UDP backend's socket is bound to the device's own address: the
	 * kernel writes that source into every IP header it sends. */
	if (index < dev->gid_len && dev->gid_valid[index] &&
	    roxe_dev_is_local(dev, dev->gid_tbl[index]) &&
	    (dev->backend != ROXE_BACKEND_UDP || !memcmp(dev->gid_tbl[index], dev->gid, 16))) {
		memcpy(sgid, dev->gid_tbl[index], 16);
		err = 0;
	}
	pthread_mutex_unlock(&dev->addr_lock);
	return err;
}

int roxe_device_gid_index(struct roxe_device *dev)
{
	int ix = -ENOENT;

	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->addr_lock);
	for (unsigned i = 0; i < dev->gid_len && ix < 0; i++)
		if (dev->gid_valid[i] && !memcmp(dev->gid_tbl[i], dev->gid, 16))
			ix = (int)i;
	pthread_mutex_unlock(&dev->addr_lock);
	return ix;
}

/* r->step = step, r->err = err, and err back */
static int open_failed(struct roxe_open_report *r, enum roxe_open_step step, int err)
{
	r->step = step;
	r->err = err;
	return err;
}

/* XDP program (ours, or one roxectl attached) and one AF_XDP port per engine. */
static int open_afxdp(struct roxe_device *dev, unsigned n, struct roxe_port **ports,
		      struct roxe_open_report *r)
{
	/* No pins: they would outlive a namespace deleted under us. Owned: the
	 * program leaves with the device, or with the process however it dies. */
	struct roxe_xdp_attach_opts o = { .engines = n, .no_pin = true, .owned = true };
	struct roxe_afxdp_config c = { .ifname = dev->ifname, .engines = n,
				       .reserve_bytes = dev->umem_mr_bytes,
				       .force_copy = dev->xdp_copy, .report = &r->afxdp };
	/* what set the engine count (engines_of), which the sockets' own plan
	 * (for the count it is given) does not know; and the queues it saw
	 * then: a driver may add some with XDP (virtio_net: a queue pair per
	 * CPU for XDP_TX), which get sockets too, as frames arrive there */
	enum roxe_plan_limit why = r->afxdp.plan.limit;
	unsigned cpus = r->afxdp.plan.cpus;
	struct roxe_if_queues before = r->afxdp.q;
	uint32_t other = 0;
	int err;

	err = roxe_xdp_open(dev->ifname, &dev->xdp, &other);
	/* Not there, or another program is: attach decides whether roxe can
	 * join it (libxdp's dispatcher) or must refuse. */
	if ((err == -ENOENT && !other) || err == -EBUSY) {
		other = 0;
		err = roxe_xdp_attach(dev->ifname, &o, &dev->xdp, &other);
		dev->xdp_ours = !err;
	}
	if (err && other) {
		r->xdp_other = other;
		return open_failed(r, ROXE_OPEN_XDP_OTHER, -EBUSY);
	}
	if (err)
		return open_failed(r, ROXE_OPEN_XDP, err);
	r->xdp_generic = dev->xdp->mode == ROXE_XDP_GENERIC;
	if (dev->xdp->config.engines != n) {
		r->xdp_engines = dev->xdp->config.engines;
		return open_failed(r, ROXE_OPEN_XDP_ENGINES, -EINVAL);
	}
	dev->qp_stats = roxe_xdp_qp_stats_map(dev->xdp);
	c.xsks_map_fd = dev->xdp->xsks_fd;
	/* The sockets of a roxe that just exited may still be on their way out
	 * (the kernel releases AF_XDP sockets asynchronously): binding to the
	 * same queues gives EBUSY for a moment. Wait up to two seconds. */
	for (int tries = 0; ; tries++) {
		dev->afxdp = roxe_afxdp_open(&c);
		if (dev->afxdp || errno != EBUSY || tries == 100)
			break;
		usleep(20000);
	}
	if (!dev->afxdp)
		return open_failed(r, ROXE_OPEN_AFXDP, errno ? -errno : -EIO);
	r->afxdp.plan.limit = why;
	r->afxdp.plan.cpus = cpus;
	r->afxdp.q = before;
	for (unsigned i = 0; i < n; i++) {
		ports[i] = roxe_afxdp_port(dev->afxdp, i);
		if (!ports[i])
			return open_failed(r, ROXE_OPEN_OTHER, -EIO);
		dev->afxdp_ports[dev->afxdp_nports++] = ports[i];
	}
	return 0;
}

static int open_udp(struct roxe_device *dev, struct roxe_port **ports)
{
	char ip[64];

	roxe_gid_ntop(dev->gid, ip, sizeof(ip));
	dev->udp_port = roxe_udp_port_open(ip);
	if (!dev->udp_port)
		return -errno ? -errno : -EIO;
	ports[0] = dev->udp_port;
	return 0;
}

/* The PORTS backend's MTU when attr gives none. */
static unsigned ports_mtu(const struct roxe_device_attr *attr)
{
	return attr->mtu ? attr->mtu : 1024;
}

/* A port carries the device's frames: an MTU of payload and 128 B of
 * headers. */
static bool port_fits(const struct roxe_port *port, unsigned mtu)
{
	return port && port->frame_size >= mtu + 128;
}

/* Engines the device runs: attr's count, else on AF_XDP (queues steer by
 * QP) as many as the usable CPUs, the interface's queues, max_engines and
 * the XDP map allow (roxe_afxdp_plan), and one elsewhere. An AF_XDP count
 * the queues do not take: -EINVAL, r->afxdp says why. */
static int engines_of(const struct roxe_device_attr *attr, unsigned max_engines, unsigned *n,
		      struct roxe_open_report *r)
{
	struct roxe_afxdp_report *a = &r->afxdp;

	*n = attr->engines ? attr->engines : 1;
	if (attr->backend != ROXE_BACKEND_AFXDP || !attr->ifname ||
	    strlen(attr->ifname) >= IFNAMSIZ)
		return 0;	/* attr_check's to refuse */
	roxe_if_queues(attr->ifname, &a->q);
	if (roxe_afxdp_plan(attr->engines, roxe_cpus_usable(), max_engines, &a->q, ROXE_MAX_XSKS,
			    &a->plan))
		return open_failed(r, ROXE_OPEN_PLAN, -EINVAL);
	*n = a->plan.engines;
	return 0;
}

/* DCQCN's settings over the defaults and the interface's line rate: the
 * rate bounds min_rate, so it is read before the settings. */
static int cc_parse(const struct roxe_device_attr *attr, struct roxe_dcqcn_params *cc)
{
	roxe_dcqcn_defaults(cc);
	if (attr->backend != ROXE_BACKEND_PORTS && attr->ifname[0])
		cc->line_rate = iface_speed(attr->ifname, cc->line_rate);
	return roxe_dcqcn_parse(cc, attr->cc, NULL, 0) ? -EINVAL : 0;
}

/* Every check on attr alone, before anything exists: 0 or -EINVAL, with
 * the engine count (*n) and the DCQCN settings (*cc) worked out. */
static int attr_check(const struct roxe_device_attr *attr, unsigned max_engines, unsigned *n,
		      struct roxe_dcqcn_params *cc, struct roxe_open_report *r)
{
	bool iface = attr->backend == ROXE_BACKEND_AFXDP || attr->backend == ROXE_BACKEND_UDP;
	int err = engines_of(attr, max_engines, n, r);

	if (err)
		return err;
	if (!iface && attr->backend != ROXE_BACKEND_PORTS)
		return -EINVAL;
	/* max_engines on every backend, not only in AF_XDP's plan: roxed's
	 * device (roxe.ko's ROXE_KABI_MAX_ENGINES) never runs more */
	if (*n > max_engines || (attr->backend == ROXE_BACKEND_UDP && *n != 1))
		return -EINVAL;		/* a UDP socket cannot steer by QP */
	if (iface && (!attr->ifname || strlen(attr->ifname) >= IFNAMSIZ))
		return -EINVAL;
	if (attr->mtu && (attr->mtu < 256 || attr->mtu > 4096 || (attr->mtu & (attr->mtu - 1))))
		return -EINVAL;
	if (attr->backend == ROXE_BACKEND_PORTS) {
		if (!attr->ports)
			return -EINVAL;
		for (unsigned i = 0; i < *n; i++)
			if (!port_fits(attr->ports[i], ports_mtu(attr)))
				return -EINVAL;
	}
	if (attr->cnp_interval_us > ROXE_CNP_INTERVAL_MAX_US)
		return -EINVAL;
	if (attr->umem_mr_bytes && (attr->backend != ROXE_BACKEND_AFXDP ||
				    attr->umem_mr_bytes > ROXE_UMEM_MR_MAX))
		return -EINVAL;
	if (attr->rt_priority > 99 || (attr->rt_priority && attr->polled))
		return -EINVAL;
	return cc_parse(attr, cc);
}

/* The device's locks, tables and attr's settings: 0 or -ENOMEM. */
static int dev_init(struct roxe_device *dev, const struct roxe_device_attr *attr)
{
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->async_lock, NULL);
	pthread_mutex_init(&dev->addr_lock, NULL);
	dev->backend = attr->backend;
	dev->ecn = attr->no_ecn ? ROXE_ECN_NOT_ECT : ROXE_ECN_ECT0;
	dev->cnp_interval_ns = 1000ull * (attr->cnp_interval_us ? attr->cnp_interval_us :
					  ROXE_CNP_INTERVAL_US);
	dev->polled = attr->polled;
	dev->umem_mr_bytes = attr->umem_mr_bytes;
	dev->rt_priority = attr->rt_priority;
	dev->xdp_copy = attr->xdp_copy;
	dev->ooo_stash = !attr->no_ooo_stash;
	dev->trace = attr->trace;
	dev->trace_arg = attr->trace_arg;
	dev->trace_recorder = attr->trace && attr->trace_recorder;
	dev->next_qpn = 2;
	dev->next_mr = 1;
	dev->key_gen = 0x5a;
	dev->qps = calloc(ROXE_MAX_QPS, sizeof(*dev->qps));
	dev->mrs = calloc(ROXE_MAX_MR, sizeof(*dev->mrs));
	dev->mws = calloc(ROXE_MAX_MW, sizeof(*dev->mws));
	dev->ahs = calloc(ROXE_MAX_AH, sizeof(*dev->ahs));
	dev->engines = calloc(ROXE_MAX_ENGINES, sizeof(*dev->engines));
	dev->async_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!dev->qps || !dev->mrs || !dev->mws || !dev->ahs || !dev->engines || dev->async_efd < 0)
		return -ENOMEM;
	return 0;
}

/* One port per engine (ports[]), and the device's MTU, MAC and GID. */
static int ports_open(struct roxe_device *dev, const struct roxe_device_attr *attr, unsigned n,
		      struct roxe_port **ports, struct roxe_open_report *r)
{
	int err;

	switch (attr->backend) {
	case ROXE_BACKEND_PORTS:
		dev->mtu = ports_mtu(attr);
		memcpy(dev->gid, attr->gid, 16);
		memcpy(dev->mac, attr->mac, 6);
		memcpy(ports, attr->ports, n * sizeof(*ports));
		return 0;
	case ROXE_BACKEND_AFXDP:
		err = iface_query(dev, attr);
		return err ? open_failed(r, ROXE_OPEN_IFACE, err) : open_afxdp(dev, n, ports, r);
	case ROXE_BACKEND_UDP:
		err = iface_query(dev, attr);
		if (err)
			return open_failed(r, ROXE_OPEN_IFACE, err);
		err = open_udp(dev, ports);
		return err ? open_failed(r, ROXE_OPEN_UDP, err) : 0;
	}
	return open_failed(r, ROXE_OPEN_ATTR, -EINVAL);
}

/* The GID table and the port's own addresses as they are now. */
static int addrs_init(struct roxe_device *dev)
{
	int err;

	/* roxectl may have attached the program long ago: its list too */
	gid_table_init(dev);
	err = addrs_update(dev, ENGINES_STOPPED);
	return err < 0 ? err : 0;
}

/* Counters: the XDP program's maps where it has them, else our own. */
static int stats_alloc(struct roxe_device *dev)
{
	if (dev->xdp)
		dev->eng_stats = roxe_xdp_eng_stats_map(dev->xdp);
	if (!dev->eng_stats) {
		dev->eng_stats = calloc(ROXE_MAX_ENGINES, sizeof(*dev->eng_stats));
		dev->eng_stats_own = true;
		if (!dev->eng_stats)
			return -ENOMEM;
	}
	if (!dev->qp_stats) {
		dev->qp_stats = calloc(ROXE_MAX_QPS, sizeof(*dev->qp_stats));
		dev->qp_stats_own = true;
		if (!dev->qp_stats)
			return -ENOMEM;
	}
	return 0;
}

/* Each engine on its port, with its doorbell and hand-off ring; none runs
 * yet. */
static int engines_init(struct roxe_device *dev, unsigned n, struct roxe_port **ports,
			const struct roxe_dcqcn_params *cc)
{
	int err;

	dev->nengines = n;
	for (unsigned i = 0; i < n; i++) {
		struct roxe_engine *e = &dev->engines[i];

		e->dev = dev;
		e->id = i;
		e->port = ports[i];
		roxe_credit_init(e);
		e->stats = &dev->eng_stats[i];
		e->cc = *cc;
		e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (e->efd < 0)
			return -ENOMEM;
		if (!port_fits(e->port, dev->mtu))
			return -EINVAL;
		err = roxe_handoff_init(e);
		if (err)
			return err;
	}
	return 0;
}

/* Caller-made ports are wires of their own: only devices on an interface
 * take frames from other devices of the process. */
static int loop_join(struct roxe_device *dev)
{
	return dev->backend == ROXE_BACKEND_PORTS ? 0 : roxe_loop_register(dev);
}

/* The address watcher first: it may wait for the engines (quiesce). */
static void threads_stop(struct roxe_device *dev, unsigned engines)
{
	roxe_addr_watch_stop(dev->addr_watch);
	dev->addr_watch = NULL;
	for (unsigned i = 0; i < engines; i++)
		roxe_engine_stop(&dev->engines[i]);
}

/* Engine threads, then the address watcher; on failure none runs. */
static int threads_start(struct roxe_device *dev)
{
	unsigned started = 0;
	int err = 0;

	for (; started < dev->nengines; started++) {
		err = roxe_engine_start(&dev->engines[started]);
		if (err)
			break;
	}
	if (!err && dev->backend != ROXE_BACKEND_PORTS) {
		/* Addresses follow rtnetlink's events from now on; one more read
		 * covers a change between the first one and the subscription. */
		dev->addr_watch = roxe_addr_watch_start(dev->ifindex, addrs_changed, dev);
		err = dev->addr_watch ? addrs_update(dev, ENGINES_RUNNING) : -errno;
		err = err < 0 ? err : 0;
	}
	if (err)
		threads_stop(dev, started);
	return err;
}

int roxe_served_device_open(const struct roxe_device_attr *attr, unsigned max_engines,
			    struct roxe_device **out, struct roxe_open_report *r)
{
	struct roxe_port *ports[ROXE_MAX_ENGINES];
	struct roxe_dcqcn_params cc;
	struct roxe_device *dev;
	unsigned n;
	int err;

	memset(r, 0, sizeof(*r));
	if (!attr || !out)
		return open_failed(r, ROXE_OPEN_ATTR, -EINVAL);
	err = attr_check(attr, max_engines < ROXE_MAX_ENGINES ? max_engines : ROXE_MAX_ENGINES,
			 &n, &cc, r);
	if (err)
		return r->step ? err : open_failed(r, ROXE_OPEN_ATTR, err);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return open_failed(r, ROXE_OPEN_OTHER, -ENOMEM);
	err = dev_init(dev, attr);
	if (!err)
		err = ports_open(dev, attr, n, ports, r);
	if (!err)
		err = addrs_init(dev);
	if (!err)
		err = stats_alloc(dev);
	if (!err)
		err = engines_init(dev, n, ports, &cc);
	if (!err)
		err = loop_join(dev);
	if (!err && (err = threads_start(dev)))
		open_failed(r, ROXE_OPEN_ENGINES, err);
	if (err) {
		if (!r->step)
			open_failed(r, ROXE_OPEN_OTHER, err);
		dev_free(dev);	/* frees what the steps made, whichever failed */
		return err;
	}
	r->engines = n;
	*out = dev;
	return 0;
}

int roxe_device_open(const struct roxe_device_attr *attr, struct roxe_device **out)
{
	struct roxe_open_report r;

	return roxe_served_device_open(attr, ROXE_MAX_ENGINES, out, &r);
}

/* Over the defaults alone: roxe_device_open starts from the interface's
 * line rate, against which it may still refuse min_rate. */
int roxe_served_cc_check(const char *settings, char *why, unsigned whylen)
{
	struct roxe_dcqcn_params cc;

	roxe_dcqcn_defaults(&cc);
	return roxe_dcqcn_parse(&cc, settings, why, whylen) ? -EINVAL : 0;
}

void roxe_device_close(struct roxe_device *dev)
{
	if (!dev)
		return;
	threads_stop(dev, dev->nengines);
	dev_free(dev);
}

int roxe_query_umem(struct roxe_device *dev, struct roxe_umem_stats *st)
{
	if (!dev || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	if (dev->afxdp) {
		roxe_afxdp_reserve_query(dev->afxdp, &st->reserve_bytes, &st->reserve_free);
		st->inplace = roxe_afxdp_inplace(dev->afxdp);
	}
	for (unsigned i = 0; i < dev->nengines; i++) {
		st->tx_inplace += __atomic_load_n(&dev->eng_stats[i].tx_umem_inplace,
						  __ATOMIC_RELAXED);
		st->tx_copied += __atomic_load_n(&dev->eng_stats[i].tx_umem_copied,
						 __ATOMIC_RELAXED);
	}
	return 0;
}

int roxe_device_last_error(struct roxe_device *dev, uint64_t *count)
{
	if (count) {
		*count = 0;
		for (unsigned i = 0; i < dev->nengines; i++)
			*count += __atomic_load_n(&dev->eng_stats[i].wakeup_errors,
						  __ATOMIC_RELAXED);
	}
	return atomic_load_explicit(&dev->last_err, memory_order_relaxed);
}

/*
 * An address of another interface of this namespace (another process's
 * roxe, or none): its interface's MAC, as the kernel's rdma_translate_ip()
 * answers ib_core for a local address. The neighbour table never holds the
 * host's own addresses. 0, or -ENOENT when no interface has the address.
 */
static int host_addr_mac(const uint8_t gid[16], uint8_t mac[6])
{
	struct ifaddrs *ifa, *i;
	struct ifreq ifr = { 0 };
	int err = -ENOENT, fd;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		uint8_t g[16];

		if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			roxe_gid_from_v4(g, ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		else if (i->ifa_addr->sa_family == AF_INET6)
			memcpy(g, &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
		else
			continue;
		if (!memcmp(g, gid, 16) && strlen(i->ifa_name) < sizeof(ifr.ifr_name)) {
			strcpy(ifr.ifr_name, i->ifa_name);
			break;
		}
	}
	freeifaddrs(ifa);
	if (!ifr.ifr_name[0])
		return err;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = ioctl(fd, SIOCGIFHWADDR, &ifr) ? -errno : 0;
	close(fd);
	if (!err)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}

/* Destination MAC from sgid to a GID: the next hop's (the peer's, or its
 * router's) from the kernel's route and neighbour tables on a real
 * interface; on caller-made ports (a point-to-point wire) any well-formed
 * unicast MAC does: the GID's low bytes. *mtu_cap: the largest IB MTU the
 * route's MTU metric allows, 0 when it sets none (the device's applies).
 * The UDP backend needs no MAC: its socket is routed by the kernel. */
int roxe_dev_resolve_path(struct roxe_device *dev, const uint8_t sgid[16], const uint8_t gid[16],
			  uint8_t mac[6], uint32_t *mtu_cap)
{
	struct roxe_device *local;
	struct roxe_nexthop nh;
	int err;

	*mtu_cap = 0;
	if (roxe_gid_is_mcast(gid)) {		/* a group: its MAC, no neighbour */
		roxe_gid_mcast_mac(gid, mac);
		return 0;
	}
	/* An own address has no neighbour entry: the frame never leaves the
	 * host (loopback), but carries the owner's MAC as on rxe. */
	local = roxe_loop_find(dev, gid);
	if (local) {
		memcpy(mac, local->mac, 6);
		return 0;
	}
	if (dev->backend != ROXE_BACKEND_AFXDP) {
		mac[0] = 0x02;		/* locally administered, unicast */
		memcpy(mac + 1, gid + 11, 5);
		return 0;
	}
	/* another interface's address: the frame leaves on ours towards that
	 * interface's MAC (it arrives if the two share a link) */
	if (!host_addr_mac(gid, mac))
		return 0;
	err = roxe_neigh_resolve(dev->ifindex, sgid, gid, &nh, 1000);
	if (err)
		return err;
	memcpy(mac, nh.mac, 6);
	if (nh.route_mtu)
		*mtu_cap = ib_mtu_of_ip(nh.route_mtu);
	return 0;
}

int roxe_query_device(struct roxe_device *dev, struct ibv_device_attr *a)
{
	if (!dev || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	strcpy(a->fw_ver, "roxe");
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 4096;
	a->vendor_id = 0xffffff;
	a->max_qp = ROXE_MAX_QPS - 2;
	a->max_qp_wr = ROXE_MAX_WR;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SRQ_RESIZE |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = ROXE_MAX_SGE;
	a->max_sge_rd = ROXE_MAX_SGE;
	a->max_cq = ROXE_MAX_CQ_EMB;
	a->max_cqe = ROXE_MAX_CQE;
	a->max_mr = ROXE_MAX_MR - 1;
	a->max_mw = ROXE_MAX_MW;
	a->max_pd = ROXE_MAX_PD;
	a->max_qp_rd_atom = ROXE_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = ROXE_MAX_RD_ATOMIC;
	a->max_res_rd_atom = ROXE_MAX_RD_ATOMIC * (ROXE_MAX_QPS - 2);
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_ah = ROXE_MAX_AH;
	a->max_srq = ROXE_MAX_SRQ_EMB;
	a->max_srq_wr = ROXE_MAX_WR;
	a->max_srq_sge = ROXE_MAX_SGE;
	a->max_pkeys = 1;
	a->max_mcast_grp = ROXE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = ROXE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = ROXE_MAX_TOT_MCAST_QP_ATTACH;
	a->phys_port_cnt = 1;
	return 0;
}

static enum ibv_mtu ibv_mtu_of(uint32_t bytes)
{
	enum ibv_mtu m = IBV_MTU_256;

	while (m < IBV_MTU_4096 && (128u << (m + 1)) <= bytes)
		m++;
	return m;
}

int roxe_query_port(struct roxe_device *dev, struct ibv_port_attr *a)
{
	if (!dev || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = ibv_mtu_of(dev->mtu);
	a->gid_tbl_len = (int)dev->gid_len;
	a->max_msg_sz = ROXE_MAX_MSG_SZ;
	a->pkey_tbl_len = 1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->phys_state = 5;	/* LinkUp */
	a->active_width = 1;
	a->active_speed = 1;
	return 0;
}

/* An empty entry reads as zeros, as ibv_query_gid gives for rxe's. */
int roxe_query_gid(struct roxe_device *dev, int index, union ibv_gid *gid)
{
	if (!dev || !gid || index < 0)
		return -EINVAL;
	pthread_mutex_lock(&dev->addr_lock);
	if ((unsigned)index >= dev->gid_len) {
		pthread_mutex_unlock(&dev->addr_lock);
		return -EINVAL;
	}
	memcpy(gid->raw, dev->gid_tbl[index], 16);
	pthread_mutex_unlock(&dev->addr_lock);
	return 0;
}
