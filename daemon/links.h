/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxed --links (links.c): a roxed per `rdma link add NAME type roxe`.
 */
#ifndef ROXED_LINKS_H
#define ROXED_LINKS_H

#include "kserve.h"	/* roxe_kserve_log_fn: roxed's one log function type */

/* The descriptor, in the environment of a roxed started for a request,
 * of a pipe to roxed --links: the roxed says there why it could not serve
 * ("E<errno> <sentence>", roxed.c's tell_parent), and `rdma link add`
 * fails with that errno, not EIO. */
#define ROXED_LINK_STATUS_FD	"ROXED_LINK_STATUS_FD"

/* Options roxed --links passes on to the roxeds it starts, at most. */
#define ROXED_LINKS_MAX_ARGS	32

/* Listen for link requests until SIGTERM or SIGINT, starting `self ARGS
 * --netdev IFACE --link ID --foreground` for each; the exit status for main. */
int roxed_links_run(const char *self, char *const *args, int nargs, roxe_kserve_log_fn log);

#endif /* ROXED_LINKS_H */
