/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the VM suite's test ULPs share: one "MODULE: ok: ..." or
 * "MODULE: FAIL: ..." kernel log line per check (kmod_interop.sh reads
 * them), and the byte pattern every payload carries.
 */
#ifndef ROXE_KTEST_H
#define ROXE_KTEST_H

#include <linux/printk.h>
#include <linux/types.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>

#define pfx		KBUILD_MODNAME ": "

static int failed, passed;

#define CHECK(cond, fmt, ...) do {					\
	if (cond) {							\
		pr_info(pfx "ok: " fmt "\n", ##__VA_ARGS__);		\
		passed++;						\
	} else {							\
		pr_info(pfx "FAIL: " fmt "\n", ##__VA_ARGS__);		\
		failed++;						\
	}								\
} while (0)

static inline void fill(u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed * 131 + i * 7 + (i >> 8));
}

static inline bool same(const u8 *p, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != (u8)(seed * 131 + i * 7 + (i >> 8)))
			return false;
	return true;
}

/*
 * The registered ib_device named name, held (ib_device_put()), or NULL.
 * 7.3 no longer exports ib_device_get_by_name(): there a client registered
 * for the lookup hears of every device and keeps the one of that name.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
static const char *kt_want;
static struct ib_device *kt_found;

static int kt_find_add(struct ib_device *dev)
{
	if (!kt_found && !strcmp(dev_name(&dev->dev), kt_want) && ib_device_try_get(dev))
		kt_found = dev;
	return 0;
}

static struct ib_client kt_finder = { .name = KBUILD_MODNAME "_find", .add = kt_find_add };

static inline struct ib_device *kt_device_get_by_name(const char *name)
{
	kt_want = name;
	kt_found = NULL;
	if (ib_register_client(&kt_finder))
		return NULL;
	ib_unregister_client(&kt_finder);
	return kt_found;
}
#else
static inline struct ib_device *kt_device_get_by_name(const char *name)
{
	return ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
}
#endif

#endif /* ROXE_KTEST_H */
