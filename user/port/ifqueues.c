// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * How many queues an interface has, for the AF_XDP backend's plan
 * (afxdp.c, roxe_afxdp_plan): an AF_XDP socket binds to one queue, and a
 * frame arrives on whichever queue the NIC's RSS picked, so roxe needs a
 * socket on every receive queue, and each engine transmits on a queue of
 * its own.
 *
 * ethtool's channels first (ETHTOOL_GCHANNELS, which `ethtool -l` shows and
 * `ethtool -L` sets): combined channels are a receive and a transmit queue
 * each, rx and tx channels one of them. Drivers without channels (tun/tap)
 * still list their queues in sysfs (queues/rx-N, tx-N: the kernel's real
 * counts), which we read only when sysfs shows this network namespace's
 * interface (same ifindex), and which also bound the transmit queues the
 * channels claim. Whatever the driver says is checked: counts
 * that add up past 32 bits, or no receive queue at all, are not taken.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "roxe/port.h"

int roxe_if_queues_from_channels(const struct ethtool_channels *ch, struct roxe_if_queues *q)
{
	uint64_t rx = (uint64_t)ch->combined_count + ch->rx_count;
	uint64_t tx = (uint64_t)ch->combined_count + ch->tx_count;

	if (!rx || rx > UINT32_MAX || tx > UINT32_MAX)
		return -ERANGE;
	memset(q, 0, sizeof(*q));
	q->from = ROXE_QUEUES_ETHTOOL;
	q->rx = (unsigned)rx;
	/* receive channels and no transmit ones: no driver does that; the
	 * sockets' transmit queue is then taken to be its receive queue */
	q->tx = tx ? (unsigned)tx : q->rx;
	q->combined = ch->combined_count;
	q->rx_only = ch->rx_count;
	q->tx_only = ch->tx_count;
	q->max_combined = ch->max_combined;
	q->max_rx = ch->max_rx;
	q->max_tx = ch->max_tx;
	return 0;
}

static int channels(const char *ifname, struct roxe_if_queues *q)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { 0 };
	int fd, err;

	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)&ch;
	err = ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
	close(fd);
	return err ? err : roxe_if_queues_from_channels(&ch, q);
}

/* "rx-12" -> 12 when prefix is "rx-"; -1 for anything else. */
static long queue_index(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
		return -1;
	v = strtol(name + n, &end, 10);
	return *end || v < 0 || v >= INT32_MAX ? -1 : v;
}

/* sysfs's queues of ifname: 0, or -ENOENT (not there, not ours, or not
 * numbered 0 .. n-1). */
static int sysfs_queues(const char *ifname, struct roxe_if_queues *q)
{
	char path[96], buf[32];
	unsigned rx = 0, tx = 0;
	long rx_max = -1, tx_max = -1, v;
	struct dirent *d;
	FILE *f;
	DIR *dir;

	/* sysfs mounted in another namespace shows another interface */
	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", ifname);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	v = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 10) : -1;
	fclose(f);
	if (v <= 0 || (unsigned long)v != if_nametoindex(ifname))
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	dir = opendir(path);
	if (!dir)
		return -ENOENT;
	while ((d = readdir(dir))) {
		if ((v = queue_index(d->d_name, "rx-")) >= 0) {
			rx++;
			rx_max = v > rx_max ? v : rx_max;
		} else if ((v = queue_index(d->d_name, "tx-")) >= 0) {
			tx++;
			tx_max = v > tx_max ? v : tx_max;
		}
	}
	closedir(dir);
	if (!rx || rx_max + 1 != (long)rx || (tx && tx_max + 1 != (long)tx))
		return -ENOENT;
	memset(q, 0, sizeof(*q));
	q->from = ROXE_QUEUES_SYSFS;
	q->rx = rx;
	q->tx = tx ? tx : rx;
	return 0;
}

void roxe_if_queues(const char *ifname, struct roxe_if_queues *q)
{
	struct roxe_if_queues real;

	if (channels(ifname, q) == 0) {
		/* With XDP attached virtio_net counts the queue pairs it added
		 * for XDP_TX among its channels, but not among the stack's
		 * transmit queues (an engine's frames there would race XDP_TX):
		 * the kernel's own count, where sysfs shows it, bounds them. */
		if (sysfs_queues(ifname, &real) == 0 && real.tx < q->tx)
			q->tx = real.tx;
		return;
	}
	if (sysfs_queues(ifname, q) == 0)
		return;
	memset(q, 0, sizeof(*q));
	q->from = ROXE_QUEUES_UNKNOWN;
	q->rx = q->tx = 1;
}

unsigned roxe_cpus_usable(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}
