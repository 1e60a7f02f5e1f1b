/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control ABI between roxe.ko and roxed, spoken over /dev/roxe. Shared
 * verbatim by kmod/ and user/: kernel types only (__u32...), no padding
 * holes, every struct a multiple of 8 bytes so 32- and 64-bit layouts agree.
 *
 * A roxed process opens /dev/roxe once per interface and issues
 * ROXE_IOC_ATTACH with the netdev's ifindex: the module registers an
 * ib_device (roxe%d) on that netdev and ties it to this open file. Closing
 * the file (roxed exits, is killed, or crashes) detaches: the port goes
 * DOWN, then the ib_device is unregistered. Applications using it through
 * uverbs are disassociated (they get IB_EVENT_DEVICE_FATAL and EIO), kernel
 * ULPs get their remove callback.
 */
#ifndef ROXE_KABI_H
#define ROXE_KABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define ROXE_KABI_VERSION	1
#define ROXE_KABI_DEVNAME	"roxe"		/* /dev/roxe */
#define ROXE_KABI_NAME_MAX	64		/* IB_DEVICE_NAME_MAX */

#define ROXE_IOC_MAGIC		0xb7

/* ROXE_IOC_ATTACH: register an ib_device on a netdev, served by this file. */
struct roxe_kabi_attach {
	__u32	abi_version;		/* in: ROXE_KABI_VERSION */
	__u32	ifindex;		/* in: netdev in the caller's netns */
	__u32	flags;			/* in: 0 */
	__u32	port_mtu;		/* out: active IB MTU, bytes */
	char	ibdev[ROXE_KABI_NAME_MAX];	/* out: "roxe0", ... */
};

/* ROXE_IOC_INFO: what the device looks like now (roxectl, tests). */
struct roxe_kabi_info {
	__u32	abi_version;		/* out: the module's ROXE_KABI_VERSION */
	__u32	ifindex;		/* out: 0 once the netdev went away */
	__u32	port_state;		/* out: enum ib_port_state (4: ACTIVE) */
	__u32	port_mtu;		/* out: active IB MTU, bytes */
	__u64	ucontexts;		/* out: open uverbs contexts */
	char	ibdev[ROXE_KABI_NAME_MAX];	/* out */
};

#define ROXE_IOC_ATTACH		_IOWR(ROXE_IOC_MAGIC, 1, struct roxe_kabi_attach)
#define ROXE_IOC_INFO		_IOR(ROXE_IOC_MAGIC, 2, struct roxe_kabi_info)

#endif /* ROXE_KABI_H */
