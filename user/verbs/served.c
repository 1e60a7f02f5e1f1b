// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The device's side of what roxed shares with roxe.ko (kabi.h): the
 * engines' wakeup eventfds the module signals, the doorbell rings the
 * engines read, and the counters roxed publishes for the port.
 */
#include <errno.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"

int roxe_served_engine_fds(struct roxe_device *dev, struct roxe_kabi_serve *s)
{
	if (dev->nengines > ROXE_KABI_MAX_ENGINES)
		return -E2BIG;
	s->nengines = dev->nengines;
	for (unsigned i = 0; i < dev->nengines; i++)
		s->efd[i] = dev->engines[i].efd;
	return 0;
}

void roxe_served_doorbells_start(struct roxe_device *dev, struct roxe_kabi_shared *sh)
{
	for (unsigned i = 0; i < dev->nengines; i++)
		roxe_engine_set_kdb(&dev->engines[i], &sh->db[i], sh->db_queued);
}

void roxe_served_doorbells_stop(struct roxe_device *dev)
{
	for (unsigned i = 0; i < dev->nengines; i++)
		atomic_store(&dev->engines[i].kdb, NULL);
	roxe_dev_quiesce(dev);	/* no engine reads a ring now */
}

/* Counters engines and the XDP program bump while we read: word by word,
 * each word whole (the structs are all __u64, kept in maps.h). */
static void counters_add(__u64 *sum, const __u64 *c, size_t bytes)
{
	for (size_t i = 0; i < bytes / sizeof(__u64); i++)
		sum[i] += __atomic_load_n(&c[i], __ATOMIC_RELAXED);
}

int roxe_served_qp_stats(struct roxe_device *dev, uint32_t qpn, struct roxe_qp_stats *s)
{
	if (qpn >= ROXE_MAX_QPS)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	counters_add((__u64 *)s, (const __u64 *)&dev->qp_stats[qpn], sizeof(*s));
	return 0;
}

void roxe_served_engine_stats(struct roxe_device *dev, struct roxe_engine_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < dev->nengines; i++)
		counters_add((__u64 *)sum, (const __u64 *)&dev->eng_stats[i], sizeof(*sum));
}
