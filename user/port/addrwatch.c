// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Address events: libnl's cache manager keeps a route/addr cache in sync
 * with rtnetlink (RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR) and tells us
 * which entries changed; one that belongs to our interface makes us call
 * back. The thread sleeps in poll() between events: nothing polls.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <netlink/netlink.h>
#include <netlink/cache.h>
#include <netlink/route/addr.h>
#include "port/addrwatch.h"

struct roxe_addr_watch {
	int			ifindex;
	void			(*changed)(void *arg);
	void			*arg;
	struct nl_cache_mngr	*mngr;
	struct nl_cache		*cache;
	int			stop_fd;	/* eventfd: written by stop */
	bool			dirty;		/* an event for ifindex since the last call */
	pthread_t		thread;
};

static void on_change(struct nl_cache *cache, struct nl_object *obj, int action, void *arg)
{
	struct roxe_addr_watch *w = arg;

	(void)cache;
	(void)action;
	if (rtnl_addr_get_ifindex((struct rtnl_addr *)obj) == w->ifindex)
		w->dirty = true;
}

static void *watch_main(void *arg)
{
	struct roxe_addr_watch *w = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = nl_cache_mngr_get_fd(w->mngr), .events = POLLIN },
				       { .fd = w->stop_fd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		/* An error (the socket's buffer overran: events lost) makes the
		 * caller read the whole set again: it is never left stale. */
		if (nl_cache_mngr_data_ready(w->mngr) < 0)
			w->dirty = true;
		if (w->dirty) {
			w->dirty = false;
			w->changed(w->arg);
		}
	}
	return NULL;
}

struct roxe_addr_watch *roxe_addr_watch_start(int ifindex, void (*changed)(void *arg),
					      void *arg)
{
	struct roxe_addr_watch *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w)
		goto fail;
	w->ifindex = ifindex;
	w->changed = changed;
	w->arg = arg;
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0) {
		err = -errno;
		goto fail;
	}
	/* Not NL_AUTO_PROVIDE: the cache stays ours, out of libnl's global
	 * registry, which other devices' watchers (and neigh.c) also reach. */
	err = nl_cache_mngr_alloc(NULL, NETLINK_ROUTE, 0, &w->mngr);
	if (err < 0) {
		err = -EIO;
		goto fail;
	}
	err = nl_cache_mngr_add(w->mngr, "route/addr", on_change, w, &w->cache);
	if (err < 0) {
		err = -EIO;
		goto fail;
	}
	err = -pthread_create(&w->thread, NULL, watch_main, w);
	if (err)
		goto fail;
	pthread_setname_np(w->thread, "roxe-addrs");
	return w;
fail:
	if (w) {
		if (w->mngr)
			nl_cache_mngr_free(w->mngr);
		if (w->stop_fd > 0)
			close(w->stop_fd);
		free(w);
	}
	errno = -err;
	return NULL;
}

void roxe_addr_watch_stop(struct roxe_addr_watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		abort();	/* an eventfd takes this write; the thread would never end */
	pthread_join(w->thread, NULL);
	nl_cache_mngr_free(w->mngr);	/* frees the cache it manages */
	close(w->stop_fd);
	free(w);
}
