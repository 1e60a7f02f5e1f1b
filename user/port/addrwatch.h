/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef ROXE_ADDRWATCH_H
#define ROXE_ADDRWATCH_H

/* A thread of its own that follows rtnetlink's address events (libnl's
 * cache manager) and calls changed(arg) after an address of ifindex was
 * added or removed, or when events may have been lost. Never an engine
 * thread: changed() may block (it re-reads addresses, waits for engines). */
struct roxe_addr_watch;

struct roxe_addr_watch *roxe_addr_watch_start(int ifindex, void (*changed)(void *arg),
					      void *arg);
/* Stops and joins the thread; NULL is fine. */
void roxe_addr_watch_stop(struct roxe_addr_watch *w);

#endif /* ROXE_ADDRWATCH_H */
