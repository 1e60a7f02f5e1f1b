/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM guest programs' small verbs helpers: a check that prints one
 * "ok:"/"FAIL:" line (flushed, so the host sees it even if the program
 * dies next) and remembers a failure, and opening a device by name.
 */
#ifndef ROXE_VM_VERBS_UTIL_H
#define ROXE_VM_VERBS_UTIL_H

#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

static int failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok: " __VA_ARGS__);				\
	} else {							\
		printf("FAIL: " __VA_ARGS__);				\
		failed = 1;						\
	}								\
	putchar('\n');							\
	fflush(stdout);							\
} while (0)

/* The device called name, opened; NULL if there is none. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif
