// SPDX-License-Identifier: GPL-2.0-only
/*
 * `rdma link add NAME type roxe netdev IFACE`, as for rxe. The transport
 * runs in a roxed, so the module cannot serve the device by itself: ib_core
 * calls roxe_newlink(), which hands a request to the roxed that listens
 * for links (`roxed --links`, the roxe service: a /dev/roxe file that did
 * ROXE_IOC_LINK_LISTEN and reads requests). That roxed starts one roxed for
 * the device, which attaches with ROXE_KABI_ATTACH_LINK and the request's
 * id; the command returns once the device is registered, or with the
 * error that stopped it, after ROXE_LINK_WAIT_S at most. No listener: the
 * command fails at once and the kernel log says what to start.
 *
 * `rdma link delete NAME` needs nothing here: ib_core unregisters the
 * device (IBK_ALLOW_USER_UNREG), its dealloc_driver tells that roxed to go.
 *
 * A request lives on newlink's stack: on link_queued until the listener
 * reads it (only unfinished ones are queued), then on link_sent until
 * newlink returns; the device attached for it points at it (rdev->link)
 * until it finishes. All of that under roxe_link_lock, taken before
 * roxe_devs_lock.
 */
#include <linux/completion.h>
#include <linux/if_arp.h>
#include <linux/poll.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>
#include "roxe.h"

/* how long `rdma link add` waits for roxed to bring the device up */
#define ROXE_LINK_WAIT_S	30

struct roxe_link_req {
	struct list_head	list;
	u32			id;
	int			ifindex;
	char			name[IB_DEVICE_NAME_MAX];
	struct roxe_dev		*rdev;		/* attached for it */
	bool			finished;
	int			result;
	struct completion	done;
};

static DEFINE_MUTEX(roxe_link_lock);
static LIST_HEAD(link_queued);			/* not read by the listener yet */
static LIST_HEAD(link_sent);			/* read, not finished or not returned */
static DECLARE_WAIT_QUEUE_HEAD(link_wq);	/* the listener's read()/poll() */
static const void *link_owner;			/* the listening file */
static struct net *link_net;			/* its network namespace */
static u32 link_next_id;

static void link_finish(struct roxe_link_req *req, int result)
{
	lockdep_assert_held(&roxe_link_lock);
	if (req->finished)
		return;
	req->finished = true;
	req->result = result;
	if (req->rdev) {
		req->rdev->link = NULL;
		req->rdev = NULL;
	}
	complete(&req->done);
}

static struct roxe_link_req *link_find(u32 id)
{
	struct roxe_link_req *req;

	list_for_each_entry(req, &link_sent, list)
		if (req->id == id)
			return req;
	return NULL;
}

/* Is the name or the netdev already a device's, or a request's? */
static int link_check(const char *name, struct net_device *ndev)
{
	struct roxe_link_req *req;
	struct ib_device *other;
	int err = 0;

	list_for_each_entry(req, &link_queued, list)
		if (!strcmp(req->name, name) || req->ifindex == ndev->ifindex)
			return -EEXIST;
	list_for_each_entry(req, &link_sent, list)
		if (!req->finished &&
		    (!strcmp(req->name, name) || req->ifindex == ndev->ifindex))
			return -EEXIST;
	mutex_lock(&roxe_devs_lock);
	if (roxe_name_taken(name) || roxe_serves(ndev))
		err = -EEXIST;
	mutex_unlock(&roxe_devs_lock);
	if (err)
		return err;
	/* kernel rxe serves it (our devices stay out of that hash) */
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (other) {
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

static int roxe_newlink(const char *name, struct net_device *ndev)
{
	struct roxe_link_req req = { .ifindex = ndev->ifindex };
	long left;
	int err;

	if (ndev->type != ARPHRD_ETHER)
		return -EINVAL;
	if (strscpy(req.name, name, sizeof(req.name)) < 0)
		return -EINVAL;
	init_completion(&req.done);

	mutex_lock(&roxe_link_lock);
	if (!link_owner) {
		err = -ENXIO;
		pr_warn("rdma link add %s: no roxed listens for links (start roxed --links: systemctl start roxe)\n",
			name);
	} else if (!net_eq(dev_net(ndev), link_net)) {
		err = -ENODEV;
		pr_warn("rdma link add %s: %s is not in the network namespace of roxed --links\n",
			name, ndev->name);
	} else {
		err = link_check(name, ndev);
	}
	if (!err) {
		req.id = ++link_next_id;
		list_add_tail(&req.list, &link_queued);
		wake_up_interruptible(&link_wq);
	}
	mutex_unlock(&roxe_link_lock);
	if (err)
		return err;

	left = wait_for_completion_killable_timeout(&req.done, ROXE_LINK_WAIT_S * HZ);

	mutex_lock(&roxe_link_lock);
	list_del(&req.list);
	if (!req.finished) {
		/* gave up: a device attached for it goes with its roxed */
		if (req.rdev)
			roxe_chan_kill(&req.rdev->chan);
		link_finish(&req, left < 0 ? -EINTR : -ETIMEDOUT);
		if (left == 0)
			pr_warn("rdma link add %s: no device after %d s (see roxed's log)\n",
				name, ROXE_LINK_WAIT_S);
	}
	err = req.result;
	mutex_unlock(&roxe_link_lock);
	return err;
}

static struct rdma_link_ops roxe_link_ops = {
	.type = "roxe",
	.newlink = roxe_newlink,
};

/* ROXE_IOC_LINK_LISTEN from the file owner, in the caller's namespace. */
int roxe_link_listen(const void *owner)
{
	int err = 0;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	mutex_lock(&roxe_link_lock);
	if (link_owner) {
		err = -EBUSY;
	} else {
		link_owner = owner;
		link_net = get_net(current->nsproxy->net_ns);
	}
	mutex_unlock(&roxe_link_lock);
	return err;
}

/* The listener's file closed: what it has not served yet fails. */
void roxe_link_unlisten(const void *owner)
{
	struct roxe_link_req *req, *tmp;

	mutex_lock(&roxe_link_lock);
	if (link_owner == owner) {
		link_owner = NULL;
		put_net(link_net);
		link_net = NULL;
		list_for_each_entry(req, &link_sent, list)
			if (!req->rdev)
				link_finish(req, -ENXIO);
		/* off the queue: no later listener reads a finished request */
		list_for_each_entry_safe(req, tmp, &link_queued, list) {
			link_finish(req, -ENXIO);
			list_move_tail(&req->list, &link_sent);
		}
	}
	mutex_unlock(&roxe_link_lock);
}

ssize_t roxe_link_read(const void *owner, char __user *buf, size_t len,
		       bool nonblock)
{
	struct roxe_kabi_link_req r = {};
	struct roxe_link_req *req;
	int err;

	if (len < sizeof(r))
		return -EINVAL;
	for (;;) {
		mutex_lock(&roxe_link_lock);
		if (link_owner != owner) {
			mutex_unlock(&roxe_link_lock);
			return -EBADFD;
		}
		req = list_first_entry_or_null(&link_queued, struct roxe_link_req, list);
		if (req) {
			r.id = req->id;
			r.ifindex = req->ifindex;
			strscpy(r.ibdev, req->name, sizeof(r.ibdev));
			list_move_tail(&req->list, &link_sent);
			mutex_unlock(&roxe_link_lock);
			break;
		}
		mutex_unlock(&roxe_link_lock);
		if (nonblock)
			return -EAGAIN;
		err = wait_event_interruptible(link_wq, !list_empty_careful(&link_queued));
		if (err)
			return err;
	}
	if (copy_to_user(buf, &r, sizeof(r))) {
		roxe_link_done(owner, r.id, -EFAULT);
		return -EFAULT;
	}
	return sizeof(r);
}

__poll_t roxe_link_poll(struct file *filp, poll_table *wait)
{
	poll_wait(filp, &link_wq, wait);
	return list_empty_careful(&link_queued) ? 0 : EPOLLIN | EPOLLRDNORM;
}

/* ROXE_IOC_LINK_DONE: the listener could not serve request id. */
int roxe_link_done(const void *owner, u32 id, int error)
{
	struct roxe_link_req *req;
	int err = 0;

	if (error >= 0 || error < -MAX_ERRNO)
		return -EINVAL;
	mutex_lock(&roxe_link_lock);
	req = link_owner == owner ? link_find(id) : NULL;
	if (!req || req->finished) {
		err = -ENOENT;
	} else {
		if (req->rdev)
			roxe_chan_kill(&req->rdev->chan);
		link_finish(req, error);
	}
	mutex_unlock(&roxe_link_lock);
	return err;
}

/* ROXE_IOC_ATTACH with ROXE_KABI_ATTACH_LINK: the device for request id,
 * on its netdev, under its name, registered once served.
 */
struct roxe_dev *roxe_link_attach(u32 id, struct net_device *ndev,
				  struct roxe_file *owner,
				  struct address_space *daemon_mapping)
{
	struct roxe_link_req *req;
	struct roxe_dev *rdev;

	mutex_lock(&roxe_link_lock);
	req = link_find(id);
	if (!req || req->finished || req->rdev) {
		rdev = ERR_PTR(-ENOENT);
	} else if (req->ifindex != ndev->ifindex || !net_eq(dev_net(ndev), link_net)) {
		rdev = ERR_PTR(-EINVAL);
	} else {
		rdev = roxe_dev_add(ndev, owner, daemon_mapping, true, req->name);
		if (!IS_ERR(rdev)) {
			req->rdev = rdev;
			rdev->link = req;
		}
	}
	mutex_unlock(&roxe_link_lock);
	return rdev;
}

/* The registration (register_work) ended: a request waiting for it
 * finishes. A failed one takes the device's roxed with it.
 */
void roxe_link_registered(struct roxe_dev *rdev, int err)
{
	mutex_lock(&roxe_link_lock);
	if (rdev->link) {
		if (err)
			roxe_chan_kill(&rdev->chan);
		link_finish(rdev->link, err);
	}
	mutex_unlock(&roxe_link_lock);
}

/* The device goes before it was registered: its roxed left. The listener
 * reaps it and finishes the request with the roxed's own errno (its
 * ROXE_IOC_LINK_DONE); without a listener there is nobody to ask: EIO.
 */
void roxe_link_gone(struct roxe_dev *rdev)
{
	struct roxe_link_req *req;

	mutex_lock(&roxe_link_lock);
	req = rdev->link;
	if (req) {
		pr_warn("rdma link add %s: roxed left before it served (see its log)\n",
			req->name);
		if (link_owner) {
			req->rdev = NULL;
			rdev->link = NULL;
		} else {
			link_finish(req, -EIO);
		}
	}
	mutex_unlock(&roxe_link_lock);
}

int roxe_link_init(void)
{
	rdma_link_register(&roxe_link_ops);
	return 0;
}

/* No request waits by now: newlink runs under ib_core's link_ops lock,
 * which rdma_link_unregister() takes for writing.
 */
void roxe_link_exit(void)
{
	rdma_link_unregister(&roxe_link_ops);
}

MODULE_ALIAS_RDMA_LINK("roxe");
