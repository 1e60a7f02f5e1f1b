/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxed's side of /dev/roxe: the objects roxe.ko tells us about, served by
 * the engine over their queues and memory mapped into this process.
 */
#ifndef ROXE_KSERVE_H
#define ROXE_KSERVE_H

#include <stdarg.h>
#include <stdint.h>

struct roxe_kserve;
struct roxe_device;

/* log(prio, fmt, ...) with syslog priorities; verbose: log every command. */
typedef void (*roxe_kserve_log_fn)(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Serve the device attached on fd with dev's engines (ROXE_IOC_SERVE):
 * 0 or a negative errno. */
int roxe_kserve_new(int fd, struct roxe_device *dev, roxe_kserve_log_fn log, int verbose,
		    struct roxe_kserve **ks);
void roxe_kserve_free(struct roxe_kserve *ks);
/* Read and answer queued commands, a bounded number of them, forwarding
 * the engine's asynchronous events before each; 0, or a negative errno
 * when the channel failed (the device went away). Call it whenever fd or
 * roxe_kserve_event_fd() is readable: commands left queued keep fd
 * readable. */
int roxe_kserve_run(struct roxe_kserve *ks);
int roxe_kserve_event_fd(const struct roxe_kserve *ks);
/* Live objects and what was done for them (logs, roxectl devices). */
struct roxe_kserve_stats {
	unsigned	qps, cqs, srqs, mrs;
	uint64_t	commands;	/* the module's, answered */
	uint64_t	command_errors;	/* of those, refused */
	uint64_t	async_events;	/* forwarded to the module */
	uint64_t	async_lost;	/* lost: the engine's event ring was full */
	uint64_t	cq_events;	/* completion events raised */
};
void roxe_kserve_stats(const struct roxe_kserve *ks, struct roxe_kserve_stats *st);
/* Store the port's counter totals (every QP's, destroyed ones' included,
 * and the engines') in the area the module reads them from
 * (struct roxe_kabi_port_stats): `rdma statistic show link roxe0/1`. */
void roxe_kserve_push_stats(struct roxe_kserve *ks);

#endif /* ROXE_KSERVE_H */
