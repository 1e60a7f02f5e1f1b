/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * roxe.ko: an ib_device per netdev that a roxed process attached, with
 * Linux's soft-RoCE user ABI so the stock rdma-core rxe provider drives it.
 * The transport runs in roxed; the module owns the device, queue memory and
 * the control channel (/dev/roxe).
 */
#ifndef ROXE_KMOD_H
#define ROXE_KMOD_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/kref.h>
#include <linux/netdevice.h>
#include <linux/idr.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <roxe/kabi.h>
#include "compat.h"

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/* What the rxe provider checks against the uverbs device's abi_version. */
#define ROXE_UVERBS_ABI_VERSION	2

/* Limits we advertise: roxe's own, include/roxe/limits.h (via kabi.h); and
 * the module's: */
#define ROXE_MAX_MR_SIZE	((1ULL << 36) - PAGE_SIZE)	/* a token's range */
#define ROXE_GID_TBL_LEN	1024
#define ROXE_HDR_ROOM		80	/* Ethernet+IP+UDP+BTH+ICRC, as rxe */
#define ROXE_MAX_DEVS		1024	/* roxe0 .. roxe1023 */

struct roxe_file;

/* chan.c: commands to roxed, each tenant's calls in turn */
#define ROXE_CHAN_CAP		8	/* calls a tenant has queued at once */

struct roxe_chan {
	spinlock_t		lock;
	struct list_head	orphans;	/* nobody waits: read first */
	struct list_head	ring;		/* tenants with calls queued */
	struct list_head	sent;		/* read, waiting for the reply */
	DECLARE_HASHTABLE(owners, 6);		/* tenants queued or waiting */
	wait_queue_head_t	wq;		/* roxed's read()/poll() */
	u32			next_seq;
	bool			dead;
	u64			reads;		/* commands roxed read */
	u64			turn_max;	/* counter cmd_turn_max */
	u64			cap_waits;	/* counter cmd_cap_waits */
};

/* One doorbell ring of the shared page: producers (post_send) serialise
 * here; prod is our own copy, the shared one is only ever written.
 */
struct roxe_db {
	spinlock_t		lock;
	u32			prod;
	struct eventfd_ctx	*efd;		/* the engine's, from SERVE */
	u64			overflows;	/* doorbells that found the ring full */
} ____cacheline_aligned_in_smp;

struct roxe_dev {
	struct ib_device	ib;
	struct list_head	list;		/* roxe_devs, while attached */
	struct roxe_file	*owner;		/* the roxed serving us */
	spinlock_t		ndev_lock;
	struct net_device	*ndev;		/* held; NULL once unregistered */
	int			ifindex;	/* 0 once the netdev is gone */
	bool			registered;
	bool			register_on_serve;	/* ROXE_KABI_ATTACH_ON_SERVE */
	struct work_struct	register_work;	/* that registration */
	bool			detached;	/* daemon gone: port DOWN for good */
	/* ib_core let go of the device (dealloc_driver: our unregistration,
	 * `rdma link delete`, ib_unregister_driver()): no event, no op more
	 */
	bool			unregistered;
	struct roxe_link_req	*link;		/* link.c: `rdma link add` waits */
	u32			last_state;	/* enum ib_port_state last reported */
	atomic64_t		ucontexts;
	struct ida		qpn_ida;
	u32			next_qpn;	/* qp.c alloc_qpn: cyclic */
	struct ida		cqn_ida;
	struct ida		srqn_ida;
	struct ida		mr_ida;		/* MR index: key >> 8 */
	struct ida		pdn_ida;
	struct ida		ah_ida;		/* user AHs' ah_num */
	atomic_t		key_gen;	/* low byte of the next key */
	struct roxe_chan	chan;
	struct xarray		queues;		/* token >> PAGE_SHIFT -> roxe_mmap */
	/* Objects roxed names by number (events, CQ_EVENT, the death flush).
	 * Handlers run under the xarray's lock, which destroy takes to erase:
	 * an object found there is not freed under us.
	 */
	struct xarray		qps;		/* qpn -> roxe_qp */
	struct xarray		cqs;		/* cqn -> roxe_cq */
	struct xarray		srqs;		/* srqn -> roxe_srq */
	/* DMA MRs (kernel ULPs' local keys): MR index -> kmr_value() */
	struct xarray		kmrs;
	/* fast-registration MRs: MR index -> roxe_mr */
	struct xarray		fmrs;
	/* on-demand paging MRs, for advise_mr: MR index -> roxe_mr */
	struct xarray		odp_mrs;
	bool			odp;		/* offered (roxe_odp when added) */
	/* the data path shared with roxed (datapath.c) */
	struct address_space	*daemon_mapping;	/* roxed's /dev/roxe: MR mappings */
	/* what roxed's MR mappings show where no MR page is (mr.c): a zeroed
	 * page of this device's own, never an application's
	 */
	struct page		*scrap;
	atomic64_t		scrap_faults;
	struct roxe_kabi_shared	*shared;	/* vmalloc_user(): arming, doorbells */
	size_t			shared_size;
	u32			nengines;	/* 0 until ROXE_IOC_SERVE */
	struct roxe_db		db[ROXE_KABI_MAX_ENGINES];
	u32			flush_events;	/* raised by the death flush */
	struct work_struct	fire_work;	/* events for later flushes */
};

/* Queue memory user space maps: one rdma mmap entry per buffer. The entry
 * owns the memory (freed in mmap_free when the last reference goes), so a
 * racing mmap never sees it freed.
 */
struct roxe_mmap {
	struct rdma_user_mmap_entry rdma;
	void			*buf;		/* vmalloc_user() */
	size_t			size;
	struct kref		ref;		/* queue, rdma entry, mmap in progress */
};

/* A work or completion queue in the rxe ABI layout (include/private/roxe/queue.h). */
struct roxe_kqueue {
	struct rxe_queue_buf	*buf;
	size_t			size;		/* bytes, page aligned */
	u32			slots;		/* power of two; holds slots - 1 */
	u32			log2_elem;
	struct roxe_mmap	*m;		/* owns buf */
	u32			token_id;	/* in roxe_dev.queues */
	bool			exported;	/* to a ucontext */
};

struct roxe_cq {
	struct ib_cq		ibcq;
	struct roxe_kqueue	q;
	u32			cqn;		/* arming: shared->cq_armed[cqn] */
	/* a kernel ULP's CQ: the module consumes it (kverbs.c) */
	bool			kernel;
	spinlock_t		poll_lock;
	u32			cons;		/* our consumer index */
	/* the death flush's notes (flush.c only): once roxed is gone the
	 * module produces this CQ's completions, under flush_lock
	 */
	spinlock_t		flush_lock;
	bool			flushed;	/* got flush completions */
	u32			lost;		/* flush completions that did not fit */
	/* one resize at a time: uverbs runs RESIZE_CQ under a read lock,
	 * so two threads may resize one CQ at once (cq.c) */
	struct mutex		resize_lock;
};

struct roxe_ksrq;

struct roxe_srq {
	struct ib_srq		ibsrq;
	struct roxe_kqueue	q;
	struct roxe_ksrq	*k;		/* kernel SRQs only */
	u32			srqn;
	u32			max_sge;
	u32			limit;
};

/* kverbs.c: a kernel QP's work queue, produced by the module. Slot i of
 * the ring holds the WQE with cookie i (mod slots); struct roxe_kslot
 * keeps what the ULP gave for it until its completion is polled.
 */
struct roxe_kslot {
	u64			wr_id;		/* the ULP's */
	u64			bend;		/* bounce head after it: freed to here */
	u32			boff;		/* its bytes in the bounce region */
	u32			len;		/* the WR's bytes (bounce and direct) */
	u32			opcode;		/* enum ib_wr_opcode; receives: 0 */
	u32			num_sge;	/* copy-out targets: READ, atomic, recv */
	u32			direct;		/* sge[i] in a fast-reg MR: bit i */
	bool			done;		/* SRQs: polled, out of order */
	struct ib_sge		sge[];
};

/* A bounce region: an MR of local access that roxed maps by its token.
 * Its pages come as posts first reach them (GFP_ATOMIC), in ring order,
 * and stay until the queue goes.
 */
struct roxe_kbounce {
	struct roxe_mr		*mr;
	u32			key;
};

struct roxe_kwq {
	spinlock_t		lock;		/* post and poll */
	u64			posted;		/* the next WR's cookie */
	u64			retired;	/* WRs whose completion was polled */
	u32			max_sge;	/* the ULP's, per WR */
	size_t			slot_size;	/* of a struct roxe_kslot */
	void			*slots;		/* one per ring slot */
	u64			bsize;		/* its bounce region's bytes */
	u64			bhead, btail;	/* free-running byte ring */
	struct roxe_kbounce	b;
};

struct roxe_kqp {
	struct roxe_kwq		sq, rq;		/* rq unused with an SRQ */
	wait_queue_head_t	rq_idle;	/* roxe_drain_rq()'s */
};

/* A kernel SRQ: its WQEs complete on any of its QPs, so their completions
 * are polled out of order; slots and bytes are freed in posting order
 * once every earlier one was polled (the engine takes them in order).
 */
struct roxe_ksrq {
	struct roxe_kwq		wq;
};

struct roxe_qp {
	struct ib_qp		ibqp;
	struct roxe_kqueue	sq, rq;		/* rq unused with an SRQ */
	struct roxe_kqp		*k;		/* kernel QPs only */
	struct mutex		lock;		/* attr (modify, query) */
	spinlock_t		state_lock;	/* attr.qp_state: also set by events */
	struct ib_qp_attr	attr;		/* as last modified */
	int			attr_mask;	/* attributes ever set */
	struct ib_qp_cap	cap;		/* granted */
	bool			sq_sig_all;
	/* the source GID the core resolved at RTR (RC, UC) */
	union ib_gid		sgid;
	enum ib_gid_type	sgid_type;
};

/* An MR's pinned pages are mapped into roxed on demand (faults), looked up
 * by token; revocation marks the MR revoked under map_sem, then zaps the
 * daemon's PTEs, so no fault can map a page after the umem is released.
 */
struct roxe_mr {
	struct ib_mr		ibmr;
	struct roxe_dev		*rdev;		/* ibmr.device is set after reg */
	struct ib_umem		*umem;		/* pinned user pages; NULL: DMA MR */
	struct ib_umem_odp	*odp;		/* or pages on demand: umem is its */
	int			access;
	u32			map_id;		/* in roxe_mr_maps: token's id */
	u64			token;		/* mmap offset for roxed */
	u32			page_off;
	u64			map_bytes;
	unsigned long		npages;
	struct page		**pages;	/* the umem's pages, in order */
	struct rw_semaphore	map_sem;	/* faults read; revoke writes */
	bool			revoked;
	struct page		*scrap;		/* revoked: what roxed's faults map */
	struct kref		ref;		/* the MR, faults in progress */
#ifdef ROXE_ODP
	/* an ODP MR's background fault (mr.c), one at a time: pages
	 * [odp_idx, odp_end) faulted in on its context's queue */
	struct workqueue_struct	*odp_wq;
	struct work_struct	odp_work;
	spinlock_t		odp_lock;
	bool			odp_queued;
	unsigned long		odp_idx, odp_end;
	unsigned long		odp_bad;	/* 1 + a page nothing maps; 0: none */
#endif
	/* fast registration (fastreg.c): ib_map_mr_sg()'s pages, which
	 * ROXE_IOC_MR_WINDOW puts behind the window (pages, npages)
	 */
	spinlock_t		pending_lock;
	struct page		**pending;	/* NULL: not a fast-reg MR */
	u32			npending;
	u32			max_pages;
	u32			pending_off;	/* iova's offset in its page */
};

struct roxe_ah {
	struct ib_ah		ibah;
	struct rdma_ah_attr	attr;		/* sgid_attr not kept */
	struct rxe_av		av;		/* kernel UD sends copy it */
	u32			ah_num;		/* a user AH's; 0: a kernel AH */
};

struct roxe_ucontext {
	struct ib_ucontext	ibuc;
	/* its ODP MRs' background faults (mr.c), in turn: one that blocks
	 * (a FUSE file mapped into an MR) holds up this context alone */
	struct workqueue_struct	*odp_wq;	/* made with the first ODP MR */
};

struct roxe_pd {
	struct ib_pd		ibpd;
	u32			pdn;
};

static inline struct roxe_dev *to_rdev(struct ib_device *ib)
{
	return container_of(ib, struct roxe_dev, ib);
}

#define to_rcq(c)	container_of(c, struct roxe_cq, ibcq)
#define to_rsrq(s)	container_of(s, struct roxe_srq, ibsrq)
#define to_rqp(q)	container_of(q, struct roxe_qp, ibqp)
#define to_rmr(m)	container_of(m, struct roxe_mr, ibmr)
#define to_rah(a)	container_of(a, struct roxe_ah, ibah)

/* The number roxed knows a PD by. */
static inline u32 roxe_pdn(struct ib_pd *pd)
{
	return container_of(pd, struct roxe_pd, ibpd)->pdn;
}

/* roxed raised an error on the QP, or died: query_qp reports ERR. Any
 * context (the event path and the flush set it, below the verbs).
 */
static inline void roxe_qp_set_error(struct roxe_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	WRITE_ONCE(qp->attr.qp_state, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

/* QP1 is a UD QP on the wire and in roxed; only its verbs differ. */
static inline enum ib_qp_type roxe_wire_type(const struct ib_qp *ibqp)
{
	return ibqp->qp_type == IB_QPT_GSI ? IB_QPT_UD : ibqp->qp_type;
}

/* main.c: the attached devices; the netdev notifier walks them. */
extern struct list_head roxe_devs;
extern struct mutex roxe_devs_lock;

/* ibdev.c */
struct roxe_dev *roxe_dev_add(struct net_device *ndev, struct roxe_file *owner,
			      struct address_space *daemon_mapping,
			      bool register_on_serve, const char *name);
void roxe_dev_served(struct roxe_dev *rdev);
void roxe_dev_remove(struct roxe_dev *rdev);
bool roxe_name_taken(const char *name);
void roxe_port_update(struct roxe_dev *rdev);
enum ib_port_state roxe_port_state(struct roxe_dev *rdev);
enum ib_mtu roxe_active_mtu(struct roxe_dev *rdev);
void roxe_dev_netdev_gone(struct roxe_dev *rdev);
bool roxe_serves(struct net_device *ndev);

/* cdev.c */
int roxe_cdev_init(void);
void roxe_cdev_exit(void);

/* link.c: `rdma link add/delete NAME type roxe`, through roxed --links */
struct roxe_link_req;
int roxe_link_init(void);
void roxe_link_exit(void);
int roxe_link_listen(const void *owner);
void roxe_link_unlisten(const void *owner);
ssize_t roxe_link_read(const void *owner, char __user *buf, size_t len,
		       bool nonblock);
__poll_t roxe_link_poll(struct file *filp, poll_table *wait);
int roxe_link_done(const void *owner, u32 id, int error);
struct roxe_dev *roxe_link_attach(u32 id, struct net_device *ndev,
				  struct roxe_file *owner,
				  struct address_space *daemon_mapping);
void roxe_link_registered(struct roxe_dev *rdev, int err);
void roxe_link_gone(struct roxe_dev *rdev);

/* beside_rxe.c: rdma_rxe stays loaded while we have devices */
void roxe_rxe_pin(void);
void roxe_rxe_unpin(void);
int roxe_rxe_watch(void);
void roxe_rxe_unwatch(void);

/* stats.c: port counters from roxed's totals in the shared area */
struct rdma_hw_stats *roxe_alloc_hw_port_stats(struct ib_device *ib, u32 port);
int roxe_get_hw_stats(struct ib_device *ib, struct rdma_hw_stats *stats, u32 port, int index);

/* datapath.c: the shared page, doorbells, arming, events from roxed */
int roxe_shared_alloc(struct roxe_dev *rdev);
void roxe_shared_free(struct roxe_dev *rdev);
int roxe_shared_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma);
int roxe_serve(struct roxe_dev *rdev, const struct roxe_kabi_serve *s);
int roxe_doorbell(struct roxe_dev *rdev, u32 qpn);
int roxe_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int roxe_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
void roxe_cq_arm(struct roxe_dev *rdev, u32 cqn, u8 want);
void roxe_cq_reset_arm(struct roxe_dev *rdev, u32 cqn);
bool roxe_cq_fire(struct roxe_dev *rdev, struct roxe_cq *cq);
int roxe_cq_event(struct roxe_dev *rdev, u32 cqn);
int roxe_async_event(struct roxe_dev *rdev, const struct roxe_kabi_event *e);

/* flush.c: roxed died; complete what it left, and what kernel ULPs post
 * after (ib_drain_qp)
 */
void roxe_flush_all(struct roxe_dev *rdev);
void roxe_flush_posted(struct roxe_dev *rdev, struct roxe_qp *qp, bool send);
void roxe_flush_fire(struct work_struct *work);

/* ucontext.c, pd.c: verbs objects */
int roxe_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void roxe_dealloc_ucontext(struct ib_ucontext *ibuc);
void roxe_disassociate_ucontext(struct ib_ucontext *ibuc);
int roxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void roxe_mmap_free(struct rdma_user_mmap_entry *entry);
int roxe_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int roxe_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* queue.c */
struct roxe_mmap *roxe_kbuf_alloc(struct roxe_dev *rdev, size_t size,
				  u32 *token_id);
void roxe_kbuf_free(struct roxe_dev *rdev, struct roxe_mmap *m, u32 token_id);
int roxe_kqueue_alloc(struct roxe_dev *rdev, struct roxe_kqueue *q,
		      u32 *entries, size_t elem_size);
int roxe_kqueue_export(struct roxe_kqueue *q, struct ib_udata *udata,
		       struct mminfo *mi);
void roxe_kqueue_free(struct roxe_dev *rdev, struct roxe_kqueue *q);
void roxe_kqueue_describe(const struct roxe_kqueue *q, struct roxe_kabi_queue *k);
int roxe_kqueue_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma);

/* chan.c */
void roxe_chan_init(struct roxe_chan *ch);
int roxe_chan_post(struct roxe_chan *ch, const struct roxe_kabi_cmd *cmd);
int roxe_chan_call(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd);
int roxe_chan_call_destroy(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd);
int roxe_chan_call_undo(struct roxe_chan *ch, struct roxe_kabi_cmd *cmd,
			u32 undo_op, u32 id, bool wait);
void roxe_chan_kill(struct roxe_chan *ch);
bool roxe_chan_readable(struct roxe_chan *ch);
ssize_t roxe_chan_read(struct roxe_chan *ch, char __user *buf, size_t len,
		       bool nonblock);
ssize_t roxe_chan_write(struct roxe_chan *ch, const char __user *buf, size_t len);
u64 roxe_chan_tenant(void);
u64 roxe_chan_turn_max(struct roxe_chan *ch);
u64 roxe_chan_cap_waits(struct roxe_chan *ch);

/* Tell roxed about a new object; on failure make sure it forgets it again
 * (the create may have reached it after we stopped waiting).
 */
static inline int roxe_chan_create(struct roxe_dev *rdev,
				   struct roxe_kabi_cmd *cmd, u32 destroy_op,
				   u32 id)
{
	return roxe_chan_call_undo(&rdev->chan, cmd, destroy_op, id, false);
}

/* Destroys always succeed locally; roxed's answer only bounds the wait,
 * and roxed gets the command even after the wait ended.
 */
static inline void roxe_chan_destroy(struct roxe_dev *rdev, u32 op, u32 id)
{
	struct roxe_kabi_cmd cmd = { .op = op, .id = id };

	roxe_chan_call_destroy(&rdev->chan, &cmd);
}

/* cq.c */
int roxe_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   ROXE_CREATE_CQ_UDATA);
int roxe_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int roxe_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int roxe_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
int roxe_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe, struct ib_udata *udata);
#endif

/* srq.c */
int roxe_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int roxe_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int roxe_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int roxe_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/* qp.c */
int roxe_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int roxe_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int roxe_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int roxe_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int roxe_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);

/* mw.c: ibmw.rkey is the application's; key the window's as allocated,
 * whose index names it (its low byte changes with binds in roxed) */
struct roxe_mw {
	struct ib_mw		ibmw;
	u32			key;
};

static inline struct roxe_mw *to_rmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct roxe_mw, ibmw);
}

int roxe_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int roxe_dealloc_mw(struct ib_mw *ibmw);

/* mr.c */
int roxe_key_alloc(struct roxe_dev *rdev, u32 *key);
void roxe_key_free(struct roxe_dev *rdev, u32 key);
int roxe_mr_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma);
void roxe_mr_maps_destroy(void);
struct ib_mr *roxe_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
struct ib_mr *roxe_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				    int access, struct ib_dmah *dmah, struct ib_udata *udata);
#endif
int roxe_dereg_user_mr(struct roxe_dev *rdev, struct roxe_mr *mr);
struct roxe_mr *roxe_mr_new(struct roxe_dev *rdev);
void roxe_mr_put(struct roxe_mr *mr);
int roxe_mr_token_alloc(struct roxe_mr *mr);
void roxe_mr_revoke(struct roxe_dev *rdev, struct roxe_mr *mr);
#ifdef ROXE_ODP
extern bool roxe_odp;
int roxe_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice, u32 flags,
		   struct ib_sge *sg_list, u32 num_sge, struct uverbs_attr_bundle *attrs);
#endif

/* fastreg.c: kernel ULPs' fast-registration MRs, remote access included */
#define ROXE_MAX_FAST_REG_PAGES	4096
struct ib_mr *roxe_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int roxe_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int roxe_dereg_fast_mr(struct roxe_dev *rdev, struct roxe_mr *mr);
int roxe_mr_window(struct roxe_dev *rdev, const struct roxe_kabi_mr_window *w);

/* kverbs.c: kernel ULPs' QPs and CQs */
int roxe_kqp_create(struct roxe_dev *rdev, struct roxe_qp *qp,
		    const struct ib_qp_init_attr *init);
void roxe_kqp_destroy(struct roxe_dev *rdev, struct roxe_qp *qp);
int roxe_kpost_send(struct roxe_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
void roxe_drain_rq(struct ib_qp *ibqp);
int roxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int roxe_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
int roxe_ksrq_create(struct roxe_dev *rdev, struct roxe_srq *srq);
void roxe_ksrq_destroy(struct roxe_dev *rdev, struct roxe_srq *srq);
int roxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
bool roxe_kcq_empty(struct roxe_cq *cq);
struct ib_mr *roxe_get_dma_mr(struct ib_pd *ibpd, int access);
int roxe_dereg_dma_mr(struct roxe_dev *rdev, struct roxe_mr *mr);

/* ah.c */
int roxe_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int roxe_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int roxe_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* ROXE_KMOD_H */
