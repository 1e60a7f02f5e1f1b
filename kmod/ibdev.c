// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ib_device: one per attached netdev, a RoCE v2 port (port 1) whose
 * state follows the netdev's link and the daemon, and the device-wide verbs
 * (query_device, query_port...). Registration and teardown live here too.
 */
#include <linux/etherdevice.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include "roxe.h"

/* The netdev with a reference, or NULL once it is gone. */
static struct net_device *roxe_get_ndev(struct roxe_dev *rdev)
{
	struct net_device *ndev;
	unsigned long flags;

	spin_lock_irqsave(&rdev->ndev_lock, flags);
	ndev = rdev->ndev;
	if (ndev)
		dev_hold(ndev);
	spin_unlock_irqrestore(&rdev->ndev_lock, flags);
	return ndev;
}

/* Our own take on the port's netdev rather than ib_device_set_netdev(): the
 * core then keeps us out of its netdev hash, which ib_device_get_by_netdev()
 * searches. Kernel rxe looks itself up there by driver_id, and ours is
 * RDMA_DRIVER_RXE too: rxe's netdev notifier would take our device for one
 * of its own (a crash on the first link change with rdma_rxe loaded).
 */
static struct net_device *roxe_get_netdev(struct ib_device *ib, u32 port)
{
	return roxe_get_ndev(to_rdev(ib));
}

/* Is ndev served by one of our devices? Under roxe_devs_lock. */
bool roxe_serves(struct net_device *ndev)
{
	struct roxe_dev *rdev;

	list_for_each_entry(rdev, &roxe_devs, list)
		if (READ_ONCE(rdev->ndev) == ndev)
			return true;
	return false;
}

enum ib_port_state roxe_port_state(struct roxe_dev *rdev)
{
	struct net_device *ndev;
	enum ib_port_state st = IB_PORT_DOWN;

	if (READ_ONCE(rdev->detached))
		return IB_PORT_DOWN;
	ndev = roxe_get_ndev(rdev);
	if (!ndev)
		return IB_PORT_DOWN;
	if (netif_running(ndev) && netif_oper_up(ndev))
		st = IB_PORT_ACTIVE;
	dev_put(ndev);
	return st;
}

/* As rxe: the largest IB MTU that fits the netdev MTU with our headers. */
static enum ib_mtu mtu_for(unsigned int ndev_mtu)
{
	int mtu = (int)ndev_mtu - ROXE_HDR_ROOM;

	if (mtu >= 4096)
		return IB_MTU_4096;
	if (mtu >= 2048)
		return IB_MTU_2048;
	if (mtu >= 1024)
		return IB_MTU_1024;
	if (mtu >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

enum ib_mtu roxe_active_mtu(struct roxe_dev *rdev)
{
	struct net_device *ndev = roxe_get_ndev(rdev);
	enum ib_mtu m = IB_MTU_1024;

	if (ndev) {
		m = mtu_for(READ_ONCE(ndev->mtu));
		dev_put(ndev);
	}
	return m;
}

/* Tell the core (and through it uverbs' async events) when the port's state
 * changed since the last call. Any context that may queue work.
 */
void roxe_port_update(struct roxe_dev *rdev)
{
	enum ib_port_state st = roxe_port_state(rdev);
	struct ib_event ev = { .device = &rdev->ib, .element.port_num = 1 };

	if (!READ_ONCE(rdev->registered) || READ_ONCE(rdev->unregistered))
		return;
	if (xchg(&rdev->last_state, st) == st)
		return;
	ev.event = st == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/* NETDEV_UNREGISTER: let go of the netdev at once (its unregistration waits
 * for every reference); the port stays DOWN until roxed detaches. Called
 * under RTNL and roxe_devs_lock.
 */
void roxe_dev_netdev_gone(struct roxe_dev *rdev)
{
	struct net_device *ndev;

	spin_lock_irq(&rdev->ndev_lock);
	ndev = rdev->ndev;
	rdev->ndev = NULL;
	rdev->ifindex = 0;
	spin_unlock_irq(&rdev->ndev_lock);
	if (!ndev)
		return;
	roxe_port_update(rdev);
	dev_put(ndev);
}

static int roxe_query_device(struct ib_device *ib, struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ib);

	/* the rxe ABI has no driver data here; 7.3's registration passes no
	 * udata at all (NULL)
	 */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = rdev->ib.node_guid;
	attr->max_mr_size = ROXE_MAX_MR_SIZE;
	attr->page_size_cap = 0xfffff000;
	attr->vendor_id = 0xffffff;	/* no OUI: a software device */
	attr->vendor_part_id = 0;
	attr->hw_ver = 0;
	/* what alloc_qpn hands out: QP1 (ib_mad's GSI QP) and QPNs
	 * ROXE_MIN_QPN .. ROXE_MAX_QPS - 1 (rxe counts its GSI QP too) */
	attr->max_qp = ROXE_MAX_QPS - ROXE_MIN_QPN + 1;
	attr->max_qp_wr = ROXE_MAX_WR;
	/* `rdma link delete`, as rxe */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |	/* fastreg.c */
				 IB_DEVICE_MEM_WINDOW |		/* mw.c, as rxe */
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 ROXE_DEVICE_IBA15_CAPS;	/* as rxe */
	attr->max_fast_reg_page_list_len = ROXE_MAX_FAST_REG_PAGES;
	attr->max_send_sge = ROXE_MAX_SGE;
	attr->max_recv_sge = ROXE_MAX_SGE;
	attr->max_sge_rd = ROXE_MAX_SGE;
	attr->max_cq = ROXE_MAX_CQ;
	attr->max_cqe = ROXE_MAX_CQE;
	attr->max_mr = ROXE_MAX_MR - 1;		/* key index 0 is never used */
	attr->max_mw = ROXE_MAX_MW;
	attr->max_pd = ROXE_MAX_PD;
	attr->max_qp_rd_atom = ROXE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = ROXE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = ROXE_MAX_RD_ATOMIC * attr->max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = ROXE_MAX_AH - 1;		/* AH number 0 names none */
	attr->max_srq = ROXE_MAX_SRQ;
	attr->max_srq_wr = ROXE_MAX_WR;
	attr->max_srq_sge = ROXE_MAX_SGE;
	attr->max_pkeys = 1;
	attr->max_mcast_grp = ROXE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = ROXE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = ROXE_MAX_TOT_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = 15;
#ifdef ROXE_ODP
	/* as 7.3's rxe: explicit ODP MRs (mr.c), no implicit ones; not
	 * with odp=0 */
	if (!rdev->odp)
		return 0;
	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT;
	attr->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV |
		IB_ODP_SUPPORT_FLUSH | IB_ODP_SUPPORT_ATOMIC_WRITE;
#endif
	return 0;
}

static int roxe_query_port(struct ib_device *ib, u32 port, struct ib_port_attr *attr)
{
	struct roxe_dev *rdev = to_rdev(ib);
	struct net_device *ndev = roxe_get_ndev(rdev);

	/* the caller zeroed *attr */
	attr->state = roxe_port_state(rdev);
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = roxe_active_mtu(rdev);
	attr->gid_tbl_len = ROXE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = ROXE_MAX_MSG_SZ;
	attr->pkey_tbl_len = 1;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;
	/* no ethtool query here: it takes RTNL, and the core queries ports
	 * from contexts that may hold it
	 */
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_EDR;
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (ndev && (roxe_netdev_flags(ndev) & IFF_UP))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	if (ndev)
		dev_put(ndev);
	return 0;
}

static int roxe_get_port_immutable(struct ib_device *ib, u32 port,
				   struct ib_port_immutable *imm)
{
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->pkey_tbl_len = 1;
	imm->gid_tbl_len = ROXE_GID_TBL_LEN;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int roxe_query_pkey(struct ib_device *ib, u32 port, u16 index, u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer roxe_get_link_layer(struct ib_device *ib, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/* The three kinds of MR go their own ways (fastreg.c, kverbs.c, mr.c):
 * the op that they share dispatches here, above all three.
 */
static int roxe_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibmr->device);
	struct roxe_mr *mr = to_rmr(ibmr);

	if (mr->pending)
		return roxe_dereg_fast_mr(rdev, mr);
	if (!mr->umem)
		return roxe_dereg_dma_mr(rdev, mr);
	return roxe_dereg_user_mr(rdev, mr);
}

/* Off the list, nobody waits for the daemon any more, and the daemon is
 * told to go (its reads fail with ENODEV). Idempotent: the daemon's
 * detach and ib_core's dealloc_driver both come here, in either order.
 */
static void roxe_dev_detach(struct roxe_dev *rdev)
{
	mutex_lock(&roxe_devs_lock);
	list_del_init(&rdev->list);
	mutex_unlock(&roxe_devs_lock);

	/* user QPs' doorbells answer EIO from here on; kernel QPs' posts
	 * complete as flushed (kverbs.c): either a post sees detached, or
	 * the flush sees its WQEs
	 */
	WRITE_ONCE(rdev->detached, true);
	smp_mb();
	/* from here on every command fails at once: neither a verb racing
	 * with the flush nor the destroys that unregistration runs wait for
	 * the daemon that left
	 */
	roxe_chan_kill(&rdev->chan);
	/* a `rdma link add` still waiting for this device fails */
	roxe_link_gone(rdev);
}

/* ib_core is done with the device: the last op it calls, from our own
 * unregistration (the daemon detached), from `rdma link delete`, or from
 * ib_unregister_driver(). Everything users made is destroyed by now. The
 * memory stays: roxed's file holds the device until roxe_dev_remove().
 */
static void roxe_dealloc_driver(struct ib_device *ib)
{
	struct roxe_dev *rdev = to_rdev(ib);

	WRITE_ONCE(rdev->unregistered, true);
	roxe_dev_detach(rdev);
	if (READ_ONCE(rdev->registered))
		pr_info("%s: unregistered\n", dev_name(&ib->dev));
}

static const struct ib_device_ops roxe_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = ROXE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = roxe_alloc_hw_port_stats,
	.alloc_mr = roxe_alloc_mr,
	.alloc_mw = roxe_alloc_mw,
	.alloc_pd = roxe_alloc_pd,
	.alloc_ucontext = roxe_alloc_ucontext,
	.attach_mcast = roxe_attach_mcast,
	.create_ah = roxe_create_ah,
	.create_cq = roxe_create_cq,
	.create_qp = roxe_create_qp,
	.create_srq = roxe_create_srq,
	.create_user_ah = roxe_create_ah,
	.dealloc_driver = roxe_dealloc_driver,
	.dealloc_mw = roxe_dealloc_mw,
	.dealloc_pd = roxe_dealloc_pd,
	.dealloc_ucontext = roxe_dealloc_ucontext,
	.dereg_mr = roxe_dereg_mr,
	.destroy_ah = roxe_destroy_ah,
	.destroy_cq = roxe_destroy_cq,
	.destroy_qp = roxe_destroy_qp,
	.destroy_srq = roxe_destroy_srq,
	.detach_mcast = roxe_detach_mcast,
	.disassociate_ucontext = roxe_disassociate_ucontext,
	.drain_rq = roxe_drain_rq,
	.get_dma_mr = roxe_get_dma_mr,
	.get_hw_stats = roxe_get_hw_stats,
	.get_link_layer = roxe_get_link_layer,
	.get_netdev = roxe_get_netdev,
	.get_port_immutable = roxe_get_port_immutable,
	.map_mr_sg = roxe_map_mr_sg,
	.mmap = roxe_mmap,
	.mmap_free = roxe_mmap_free,
	.modify_qp = roxe_modify_qp,
	.modify_srq = roxe_modify_srq,
	.poll_cq = roxe_poll_cq,
	.post_recv = roxe_post_recv,
	.post_send = roxe_post_send,
	.post_srq_recv = roxe_post_srq_recv,
	.query_ah = roxe_query_ah,
	.query_device = roxe_query_device,
	.query_pkey = roxe_query_pkey,
	.query_port = roxe_query_port,
	.query_qp = roxe_query_qp,
	.query_srq = roxe_query_srq,
	ROXE_OPS_REG_USER_MR,
	.req_notify_cq = roxe_req_notify_cq,
	ROXE_OPS_RESIZE_CQ,

	INIT_RDMA_OBJ_SIZE(ib_ah, roxe_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, roxe_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, roxe_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, roxe_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, roxe_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, roxe_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, roxe_ucontext, ibuc),
};

#ifdef ROXE_ODP
/* ibv_advise_mr(), with ODP (mr.c) */
static const struct ib_device_ops roxe_odp_dev_ops = {
	.advise_mr = roxe_advise_mr,
};
#endif

/* The netdev reference, if the netdev did not go first. */
static void roxe_dev_drop_ndev(struct roxe_dev *rdev)
{
	struct net_device *ndev;

	spin_lock_irq(&rdev->ndev_lock);
	ndev = rdev->ndev;
	rdev->ndev = NULL;
	spin_unlock_irq(&rdev->ndev_lock);
	if (ndev)
		dev_put(ndev);
}

/* Every object is gone by now (unregistration destroyed what users left)
 * and no verb runs: the ids, the lookup tables, the shared area and the
 * engines' eventfds go.
 */
static void roxe_dev_free_ids(struct roxe_dev *rdev)
{
	ida_destroy(&rdev->qpn_ida);
	ida_destroy(&rdev->cqn_ida);
	ida_destroy(&rdev->srqn_ida);
	ida_destroy(&rdev->mr_ida);
	ida_destroy(&rdev->pdn_ida);
	ida_destroy(&rdev->ah_ida);
	WARN_ON(!xa_empty(&rdev->queues));
	xa_destroy(&rdev->queues);
	WARN_ON(!xa_empty(&rdev->qps) || !xa_empty(&rdev->cqs) ||
		!xa_empty(&rdev->srqs));
	xa_destroy(&rdev->qps);
	xa_destroy(&rdev->cqs);
	xa_destroy(&rdev->srqs);
	xa_destroy(&rdev->kmrs);
	WARN_ON(!xa_empty(&rdev->fmrs));
	xa_destroy(&rdev->fmrs);
	WARN_ON(!xa_empty(&rdev->odp_mrs));
	xa_destroy(&rdev->odp_mrs);
	roxe_shared_free(rdev);
}

/* Is name a registered ib_device's, or one of ours waiting for its
 * registration? Under roxe_devs_lock.
 */
bool roxe_name_taken(const char *name)
{
	struct roxe_dev *r;

	if (roxe_ib_name_registered(name))
		return true;
	list_for_each_entry(r, &roxe_devs, list)
		if (!strcmp(dev_name(&r->ib.dev), name))
			return true;
	return false;
}

/* The lowest free roxe%u, chosen at attach so roxed knows its device's
 * name before the registration. Under roxe_devs_lock and the attach lock.
 */
static int roxe_dev_name(struct roxe_dev *rdev)
{
	char name[IB_DEVICE_NAME_MAX];
	unsigned int i;

	for (i = 0; i < ROXE_MAX_DEVS; i++) {
		snprintf(name, sizeof(name), "roxe%u", i);
		if (!roxe_name_taken(name))
			return dev_set_name(&rdev->ib.dev, "%s", name);
	}
	return -ENFILE;
}

static int roxe_dev_register(struct roxe_dev *rdev)
{
	char name[IB_DEVICE_NAME_MAX];
	int err;

	strscpy(name, dev_name(&rdev->ib.dev), sizeof(name));
	err = ib_register_device(&rdev->ib, name, NULL);
	if (err)
		return err;
	WRITE_ONCE(rdev->registered, true);
	roxe_port_update(rdev);
	return 0;
}

static void roxe_register_work(struct work_struct *work)
{
	struct roxe_dev *rdev = container_of(work, struct roxe_dev,
					     register_work);
	int err = roxe_dev_register(rdev);

	if (err)
		pr_err("%s: registration failed: %d\n", dev_name(&rdev->ib.dev),
		       err);
	else
		pr_info("%s: registered\n", dev_name(&rdev->ib.dev));
	roxe_link_registered(rdev, err);
}

/* roxed serves (ROXE_IOC_SERVE succeeded, once): a registration that
 * waited for it starts. Not in the caller's context: the kernel clients
 * create their objects inside it, and roxed must be free to answer.
 */
void roxe_dev_served(struct roxe_dev *rdev)
{
	if (rdev->register_on_serve)
		queue_work(ROXE_WQ_UNBOUND, &rdev->register_work);
}

/* Name the device on ndev (name, or the lowest free roxe%u) for the daemon
 * `owner`, whose file's mapping holds roxed's MR mappings, and register it
 * now or (register_on_serve) once roxed serves. Not under roxe_devs_lock:
 * registration takes RTNL (GID rescan), the netdev notifier holds RTNL and
 * then takes roxe_devs_lock. The caller's file holds a reference to the
 * device's memory from here until roxe_dev_remove().
 */
struct roxe_dev *roxe_dev_add(struct net_device *ndev, struct roxe_file *owner,
			      struct address_space *daemon_mapping,
			      bool register_on_serve, const char *name)
{
	struct roxe_dev *rdev;
	int err;

	rdev = ib_alloc_device(roxe_dev, ib);
	if (!rdev)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&rdev->ndev_lock);
	INIT_LIST_HEAD(&rdev->list);	/* detach may come before the list */
	dev_hold(ndev);
	rdev->ndev = ndev;
	rdev->ifindex = ndev->ifindex;
	rdev->owner = owner;
	rdev->daemon_mapping = daemon_mapping;
	rdev->last_state = IB_PORT_DOWN;
	rdev->register_on_serve = register_on_serve;
	INIT_WORK(&rdev->register_work, roxe_register_work);
	INIT_WORK(&rdev->fire_work, roxe_flush_fire);
	atomic64_set(&rdev->ucontexts, 0);
	ida_init(&rdev->qpn_ida);
	ida_init(&rdev->cqn_ida);
	ida_init(&rdev->srqn_ida);
	ida_init(&rdev->mr_ida);
	ida_init(&rdev->pdn_ida);
	ida_init(&rdev->ah_ida);
	roxe_chan_init(&rdev->chan);
	xa_init_flags(&rdev->queues, XA_FLAGS_ALLOC);
	xa_init(&rdev->qps);
	xa_init(&rdev->cqs);
	xa_init(&rdev->srqs);
	xa_init(&rdev->kmrs);
	xa_init(&rdev->fmrs);
	xa_init(&rdev->odp_mrs);
	err = roxe_shared_alloc(rdev);
	if (err)
		goto fail;

	rdev->ib.node_type = RDMA_NODE_IB_CA;
	rdev->ib.phys_port_cnt = 1;
	rdev->ib.num_comp_vectors = 1;
	rdev->ib.local_dma_lkey = 0;
	strscpy(rdev->ib.node_desc, "roxe", sizeof(rdev->ib.node_desc));
	addrconf_addr_eui48((unsigned char *)&rdev->ib.node_guid, ndev->dev_addr);
	/* the rxe provider rings doorbells with a zero-WR post_send and arms
	 * CQs through the write() interface: both are opt-in since 5.x
	 */
	rdev->ib.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				    BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&rdev->ib, &roxe_dev_ops);
#ifdef ROXE_ODP
	rdev->odp = roxe_odp;	/* the device's attributes are read once */
	if (rdev->odp)
		ib_set_device_ops(&rdev->ib, &roxe_odp_dev_ops);
#endif

	/* on the list before registering, so NETDEV_UNREGISTER finds us */
	mutex_lock(&roxe_devs_lock);
	if (roxe_serves(ndev))
		err = -EBUSY;
	else if (name)
		err = roxe_name_taken(name) ? -EEXIST : dev_set_name(&rdev->ib.dev, "%s", name);
	else
		err = roxe_dev_name(rdev);
	if (err) {
		mutex_unlock(&roxe_devs_lock);
		goto fail;
	}
	list_add_tail(&rdev->list, &roxe_devs);
	mutex_unlock(&roxe_devs_lock);
	roxe_rxe_pin();		/* roxe_dev_remove() unpins */

	get_device(&rdev->ib.dev);	/* the file's */
	if (register_on_serve)
		return rdev;
	err = roxe_dev_register(rdev);
	if (err) {
		roxe_dev_remove(rdev);
		return ERR_PTR(err);
	}
	return rdev;

fail:
	roxe_dev_drop_ndev(rdev);
	roxe_dev_free_ids(rdev);
	ib_dealloc_device(&rdev->ib);
	return ERR_PTR(err);
}

/* The daemon detached (its file closed): what it left undone is flushed
 * (completions and events while the application's objects still exist),
 * the port goes DOWN (an event for whoever listens), then the device goes
 * (if it ever came and is still there). Users of uverbs are disassociated,
 * kernel ULPs removed; then the memory goes.
 */
void roxe_dev_remove(struct roxe_dev *rdev)
{
	roxe_dev_detach(rdev);
	/* a registration under way ends soon: its clients' commands fail */
	cancel_work_sync(&rdev->register_work);
	roxe_flush_all(rdev);
	roxe_port_update(rdev);
	/* once registered, ib_core deallocates (dealloc_driver) as it
	 * unregisters; a `rdma link delete` that did already leaves nothing
	 * to do here. Never registered: ours to deallocate.
	 */
	if (READ_ONCE(rdev->registered))
		ib_unregister_device(&rdev->ib);
	else
		ib_dealloc_device(&rdev->ib);
	/* the ULPs destroyed their CQs: no event is left to raise */
	cancel_work_sync(&rdev->fire_work);

	roxe_dev_drop_ndev(rdev);
	roxe_dev_free_ids(rdev);
	roxe_rxe_unpin();
	put_device(&rdev->ib.dev);	/* the file's: the memory goes */
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/* compat.h: the "infiniband" class, for roxe_ib_name_registered() */
static const struct class *roxe_ib_class;

int roxe_compat_init(void)
{
	struct ib_device *dev = _ib_alloc_device(sizeof(*dev), &init_net);

	if (!dev)
		return -ENOMEM;
	roxe_ib_class = dev->dev.class;
	ib_dealloc_device(dev);
	return roxe_ib_class ? 0 : -ENODEV;
}

bool roxe_ib_name_registered(const char *name)
{
	struct device *dev = class_find_device_by_name(roxe_ib_class, name);

	put_device(dev);
	return dev;
}
#endif
