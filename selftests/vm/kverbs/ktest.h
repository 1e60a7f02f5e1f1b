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

#endif /* ROXE_KTEST_H */
