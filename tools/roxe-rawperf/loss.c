// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Counters that say where frames were lost: steered by roxe's XDP program
 * (afxdp) or the namespace's UDP receive-buffer errors (udp), and the
 * kernel's drop counters of our AF_XDP sockets.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "rawperf.h"
#include "roxe/xdp.h"

/* afxdp: frames the XDP program steered to our QP; udp: the namespace's
 * UDP receive-buffer errors. -1 when unknown. */
int64_t rx_drop_counter(const struct opts *o, const struct side *s)
{
	if (o->backend == BACKEND_AFXDP) {
		struct roxe_qp_stats qs;

		return roxe_xdp_read_qp_stats(s->xdp, s->qpn, &qs) ? -1 : (int64_t)qs.rx_packets;
	}
	FILE *f = fopen("/proc/net/snmp", "r");
	char names[1024], vals[1024];
	int64_t ret = -1;

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n, *v;

		if (strncmp(names, "Udp:", 4))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(vals, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, "RcvbufErrors"))
				ret = strtoll(v, NULL, 10);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	fclose(f);
	return ret;
}

/*
 * The kernel's drop counters of this process's AF_XDP sockets, summed
 * (XDP_STATISTICS): why frames died at the socket. The port layer keeps
 * its socket descriptors to itself, and this process has no other AF_XDP
 * sockets, so ask every open descriptor; others refuse the option.
 */
bool xsk_stats(struct xdp_statistics *sum)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	bool any = false;

	memset(sum, 0, sizeof(*sum));
	if (!d)
		return false;
	while ((e = readdir(d))) {
		struct xdp_statistics st;
		socklen_t len = sizeof(st);
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d) ||
		    getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len))
			continue;
		sum->rx_dropped += st.rx_dropped;
		sum->rx_ring_full += st.rx_ring_full;
		sum->rx_fill_ring_empty_descs += st.rx_fill_ring_empty_descs;
		any = true;
	}
	closedir(d);
	return any;
}
