/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every difference between the kernels roxe.ko builds for (Debian 12's 6.1
 * and bookworm-backports' 6.12, tools/vm/README.md) in one place: the rest
 * of kmod/ is written against these names only.
 */
#ifndef ROXE_KMOD_COMPAT_H
#define ROXE_KMOD_COMPAT_H

#include <linux/version.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* 6.8 dropped eventfd_signal()'s count: it always adds 1 */
static inline void roxe_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* 6.3 made vma->vm_flags read-only behind vm_flags_set() */
static inline void roxe_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * 6.11 passes create_cq the whole uverbs_attr_bundle instead of its
 * driver_udata; kernel CQs (ib_alloc_cq) get NULL either way.
 * ROXE_CREATE_CQ_UDATA is the parameter, roxe_create_cq_udata() the udata.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define ROXE_CREATE_CQ_UDATA struct uverbs_attr_bundle *attrs
static inline struct ib_udata *roxe_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define ROXE_CREATE_CQ_UDATA struct ib_udata *attrs
static inline struct ib_udata *roxe_create_cq_udata(struct ib_udata *attrs)
{
	return attrs;
}
#endif

/*
 * 6.2 added IBA 1.5's FLUSH and ATOMIC WRITE to ib_core: the capabilities
 * ib_check_mr_access() wants before it passes an MR's FLUSH access bits,
 * and those bits. 6.1's uverbs refuses the bits itself (they are beyond
 * its IB_ACCESS_SUPPORTED), so there is nothing to advertise or accept;
 * ATOMIC WRITE needs nothing from ib_core (the provider writes the WQE).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ROXE_DEVICE_IBA15_CAPS	(IB_DEVICE_FLUSH_GLOBAL | IB_DEVICE_FLUSH_PERSISTENT | \
				 IB_DEVICE_ATOMIC_WRITE)
#define ROXE_IB_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define ROXE_IB_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#else
#define ROXE_DEVICE_IBA15_CAPS		0
#define ROXE_IB_ACCESS_FLUSH_GLOBAL	0
#define ROXE_IB_ACCESS_FLUSH_PERSISTENT	0
#endif

#endif /* ROXE_KMOD_COMPAT_H */
