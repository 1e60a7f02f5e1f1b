/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Packet sequence numbers: 24-bit serial arithmetic (IBA 9.7.1), for
 * libroxe's transport and QPs.
 */
#ifndef ROXE_PSN_H
#define ROXE_PSN_H

#include <linux/types.h>

#define ROXE_PSN_BITS	24
#define ROXE_PSN_MASK	0x00ffffffu
/* Half the PSN space: a PSN more than this far "ahead" is behind. */
#define ROXE_PSN_HALF	0x00800000u

static inline __u32 roxe_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & ROXE_PSN_MASK;
}

/* a - b as a signed distance in [-2^23, 2^23): wraps like the wire does. */
static inline __s32 roxe_psn_diff(__u32 a, __u32 b)
{
	return (__s32)((a - b) << 8) >> 8;
}

static inline int roxe_psn_before(__u32 a, __u32 b)
{
	return roxe_psn_diff(a, b) < 0;
}

static inline int roxe_psn_after(__u32 a, __u32 b)
{
	return roxe_psn_diff(a, b) > 0;
}

/* Is psn in the half-open window [first, first + len)? */
static inline int roxe_psn_in_window(__u32 psn, __u32 first, __u32 len)
{
	return ((psn - first) & ROXE_PSN_MASK) < len;
}

#endif /* ROXE_PSN_H */
