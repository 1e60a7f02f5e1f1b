/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every difference between the kernels roxe.ko builds for (Debian 12's 6.1,
 * bookworm-backports' 6.12 and trixie-backports' 7.3, tools/vm/README.md)
 * in one place: the rest of kmod/ is written against these names only.
 * The 7.3 shims are gated at 7.3, the release built and tested: the
 * kernels between 6.12 and 7.3, where each change came, are not built.
 */
#ifndef ROXE_KMOD_COMPAT_H
#define ROXE_KMOD_COMPAT_H

#include <linux/version.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
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

/* 7.3: dev_get_flags() is netif_get_flags() */
static inline unsigned int roxe_netdev_flags(const struct net_device *ndev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return netif_get_flags(ndev);
#else
	return dev_get_flags(ndev);
#endif
}

/* 7.3: ib_umem_get() of a user address is ib_umem_get_va() */
static inline struct ib_umem *roxe_umem_get(struct ib_device *dev, unsigned long addr,
					    size_t size, int access)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
	return ib_umem_get_va(dev, addr, size, access);
#else
	return ib_umem_get(dev, addr, size, access);
#endif
}

/*
 * 7.3: reg_user_mr takes a DMA handle (struct ib_dmah), which roxe does
 * not offer (roxe_reg_user_mr_dmah() refuses one); resize_cq is
 * resize_user_cq, its cqe unsigned. ROXE_OPS_REG_USER_MR and
 * ROXE_OPS_RESIZE_CQ are the ib_device_ops entries.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
#define ROXE_OPS_REG_USER_MR	.reg_user_mr = roxe_reg_user_mr_dmah
#define ROXE_OPS_RESIZE_CQ	.resize_user_cq = roxe_resize_user_cq
#else
#define ROXE_OPS_REG_USER_MR	.reg_user_mr = roxe_reg_user_mr
#define ROXE_OPS_RESIZE_CQ	.resize_cq = roxe_resize_cq
#endif

/*
 * 7.3 no longer exports ib_device_get_by_name(): there the name is looked
 * up among the devices of the "infiniband" class, which every ib_device's
 * dev.class is (roxe_compat_init() takes it from a device allocated and
 * freed at load). True when a registered ib_device has the name.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
int roxe_compat_init(void);
bool roxe_ib_name_registered(const char *name);
#else
static inline int roxe_compat_init(void)
{
	return 0;
}

static inline bool roxe_ib_name_registered(const char *name)
{
	struct ib_device *other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);

	if (other)
		ib_device_put(other);
	return other;
}
#endif

/* 7.3 logs work queued on system_wq or system_unbound_wq as deprecated:
 * their names there are system_percpu_wq and system_dfl_wq
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
#define ROXE_WQ_PERCPU		system_percpu_wq
#define ROXE_WQ_UNBOUND		system_dfl_wq
#else
#define ROXE_WQ_PERCPU		system_wq
#define ROXE_WQ_UNBOUND		system_unbound_wq
#endif

/*
 * On-demand paging (mr.c): ib_umem_odp on hmm_dma_map, the API of 6.16
 * on, gated at 7.3 as the rest; 7.3's rxe offers ODP, 6.1's and 6.12's
 * do not (there ib_core refuses IB_ACCESS_ON_DEMAND before the driver:
 * roxe does not set IBK_ON_DEMAND_PAGING).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0) && IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define ROXE_ODP		1
#define ROXE_IB_ACCESS_ON_DEMAND	IB_ACCESS_ON_DEMAND
#else
#define ROXE_IB_ACCESS_ON_DEMAND	0
#endif

#endif /* ROXE_KMOD_COMPAT_H */
