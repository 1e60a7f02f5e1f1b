/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * roxe.ko: an ib_device per netdev that a roxed process attached, with
 * Linux's soft-RoCE user ABI so the stock rdma-core rxe provider drives it.
 * The transport runs in roxed; the module owns the device, queue memory and
 * the control channel (/dev/roxe).
 */
#ifndef ROXE_KMOD_H
#define ROXE_KMOD_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <roxe/kabi.h>

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/* What the rxe provider checks against the uverbs device's abi_version. */
#define ROXE_UVERBS_ABI_VERSION	2

/* Limits we advertise: those of roxe's engine (user/engine.h). */
#define ROXE_MAX_QP		32768
#define ROXE_MAX_QP_WR		16383
#define ROXE_MAX_SGE		32
#define ROXE_MAX_INLINE		512
#define ROXE_MAX_CQ		16384
#define ROXE_MAX_CQE		65535
#define ROXE_MAX_MR		65536
#define ROXE_MAX_PD		65536
#define ROXE_MAX_AH		65536
#define ROXE_MAX_SRQ		16384
#define ROXE_MAX_RD_ATOMIC	16
#define ROXE_GID_TBL_LEN	1024
#define ROXE_HDR_ROOM		80	/* Ethernet+IP+UDP+BTH+ICRC, as rxe */

struct roxe_file;

struct roxe_dev {
	struct ib_device	ib;
	struct list_head	list;		/* roxe_devs, while attached */
	struct roxe_file	*owner;		/* the roxed serving us */
	spinlock_t		ndev_lock;
	struct net_device	*ndev;		/* held; NULL once unregistered */
	int			ifindex;	/* 0 once the netdev is gone */
	bool			registered;
	bool			detached;	/* daemon gone: port DOWN for good */
	u32			last_state;	/* enum ib_port_state last reported */
	atomic64_t		ucontexts;
};

struct roxe_ucontext {
	struct ib_ucontext	ibuc;
};

struct roxe_pd {
	struct ib_pd		ibpd;
};

static inline struct roxe_dev *to_rdev(struct ib_device *ib)
{
	return container_of(ib, struct roxe_dev, ib);
}

/* main.c: the attached devices; the netdev notifier walks them. */
extern struct list_head roxe_devs;
extern struct mutex roxe_devs_lock;

/* ibdev.c */
struct roxe_dev *roxe_dev_add(struct net_device *ndev, struct roxe_file *owner);
void roxe_dev_remove(struct roxe_dev *rdev);
void roxe_port_update(struct roxe_dev *rdev);
enum ib_port_state roxe_port_state(struct roxe_dev *rdev);
enum ib_mtu roxe_active_mtu(struct roxe_dev *rdev);
void roxe_dev_netdev_gone(struct roxe_dev *rdev);
bool roxe_serves(struct net_device *ndev);

/* cdev.c */
int roxe_cdev_init(void);
void roxe_cdev_exit(void);

/* ucontext.c, pd.c: verbs objects */
int roxe_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void roxe_dealloc_ucontext(struct ib_ucontext *ibuc);
void roxe_disassociate_ucontext(struct ib_ucontext *ibuc);
int roxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
int roxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int roxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* ROXE_KMOD_H */
