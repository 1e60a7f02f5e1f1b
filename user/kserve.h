/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxed's side of /dev/roxe's command channel: the objects roxe.ko tells
 * us about, with their queues mapped into this process.
 */
#ifndef ROXE_KSERVE_H
#define ROXE_KSERVE_H

#include <stdarg.h>
#include <stdint.h>

struct roxe_kserve;

/* log(prio, fmt, ...) with syslog priorities; verbose: log every command. */
typedef void (*roxe_kserve_log_fn)(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct roxe_kserve *roxe_kserve_new(int fd, roxe_kserve_log_fn log, int verbose);
void roxe_kserve_free(struct roxe_kserve *ks);
/* Read and answer every queued command; 0, or a negative errno when the
 * channel failed (the device went away). */
int roxe_kserve_run(struct roxe_kserve *ks);
/* Live objects, for the logs. */
void roxe_kserve_counts(const struct roxe_kserve *ks, unsigned *cqs, unsigned *qps,
			unsigned *srqs, unsigned *mrs);

#endif /* ROXE_KSERVE_H */
