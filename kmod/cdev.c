// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/roxe: the control channel to roxed. One open file serves at most one
 * ib_device; the device lives exactly as long as the file is attached, so a
 * daemon that exits or dies (the kernel closes its files) takes its device
 * down with it and nothing waits on user space.
 *
 * Who may: the node is root's (0600), and ATTACH and SERVE need
 * CAP_NET_ADMIN over the network namespace of the netdev, as for any driver
 * that takes over a netdev (ns_capable on its user namespace). Everything
 * else (INFO, CQ_EVENT, EVENT, MR_WINDOW, read, write, mmap) acts only on
 * the device the calling file attached: a file that never attached gets
 * ENOTCONN, and no file reaches another file's device. The attached file
 * is the capability; roxed passes it to no one. A file that listens for
 * links (LINK_LISTEN: CAP_NET_ADMIN over the initial user namespace, as
 * `rdma link add` itself) reads link requests and never attaches.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <net/net_namespace.h>
#include "roxe.h"

struct roxe_file {
	struct mutex		lock;		/* rdev, user_ns, listens */
	struct roxe_dev		*rdev;
	bool			listens;	/* for links: link.c */
	/* owner of the attached netdev's network namespace: SERVE's check */
	struct user_namespace	*user_ns;
};

/* CAP_NET_ADMIN over the network namespace whose netdev the file serves,
 * or, before ATTACH, over the caller's own (where ATTACH looks it up).
 */
static bool roxe_file_capable(struct roxe_file *rf)
{
	struct user_namespace *ns;
	bool ok;

	mutex_lock(&rf->lock);
	ns = rf->user_ns ?: current->nsproxy->net_ns->user_ns;
	ok = ns_capable(ns, CAP_NET_ADMIN);
	mutex_unlock(&rf->lock);
	return ok;
}

/* One attach at a time: the "already served" check and the registration
 * must not interleave between two daemons.
 */
static DEFINE_MUTEX(roxe_attach_lock);

static int roxe_open(struct inode *inode, struct file *filp)
{
	struct roxe_file *rf;

	rf = kzalloc(sizeof(*rf), GFP_KERNEL);
	if (!rf)
		return -ENOMEM;
	mutex_init(&rf->lock);
	filp->private_data = rf;
	return nonseekable_open(inode, filp);
}

static int roxe_release(struct inode *inode, struct file *filp)
{
	struct roxe_file *rf = filp->private_data;

	if (rf->rdev) {
		pr_info("%s: daemon detached\n", dev_name(&rf->rdev->ib.dev));
		roxe_dev_remove(rf->rdev);
	}
	if (rf->listens)
		roxe_link_unlisten(rf);
	if (rf->user_ns)
		put_user_ns(rf->user_ns);
	mutex_destroy(&rf->lock);
	kfree(rf);
	return 0;
}

static long roxe_ioc_attach(struct file *filp, void __user *uarg)
{
	struct roxe_file *rf = filp->private_data;
	struct roxe_kabi_attach a;
	struct net_device *ndev;
	struct ib_device *other;
	struct roxe_dev *rdev;
	long err;

	/* the netdev is looked up in the caller's network namespace */
	if (!roxe_file_capable(rf))
		return -EPERM;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.abi_version != ROXE_KABI_VERSION)
		return -EPROTO;
	if (a.flags & ~(ROXE_KABI_ATTACH_ON_SERVE | ROXE_KABI_ATTACH_LINK))
		return -EINVAL;
	/* a link's device registers inside its roxed's SERVE, as any */
	if ((a.flags & ROXE_KABI_ATTACH_LINK) && !(a.flags & ROXE_KABI_ATTACH_ON_SERVE))
		return -EINVAL;

	mutex_lock(&roxe_attach_lock);
	mutex_lock(&rf->lock);
	err = -EBUSY;
	if (rf->rdev || rf->listens)
		goto out_unlock;
	err = -ENODEV;
	ndev = dev_get_by_index(current->nsproxy->net_ns, a.ifindex);
	if (!ndev)
		goto out_unlock;
	err = -EINVAL;
	if (ndev->type != ARPHRD_ETHER)
		goto out_put;
	/* kernel rxe or another roxe already serves this netdev */
	err = -EBUSY;
	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (other) {
		ib_device_put(other);
		goto out_put;
	}
	if (a.flags & ROXE_KABI_ATTACH_LINK)
		rdev = roxe_link_attach(a.link_id, ndev, rf, filp->f_mapping);
	else
		rdev = roxe_dev_add(ndev, rf, filp->f_mapping,
				    a.flags & ROXE_KABI_ATTACH_ON_SERVE, NULL);
	if (IS_ERR(rdev)) {
		err = PTR_ERR(rdev);
		goto out_put;
	}
	rf->rdev = rdev;
	rf->user_ns = get_user_ns(dev_net(ndev)->user_ns);
	pr_info("%s: attached to %s%s\n", dev_name(&rdev->ib.dev), ndev->name,
		rdev->register_on_serve ? ", registering once served" : "");
	dev_put(ndev);
	mutex_unlock(&rf->lock);
	mutex_unlock(&roxe_attach_lock);

	memset(a.ibdev, 0, sizeof(a.ibdev));
	strscpy(a.ibdev, dev_name(&rdev->ib.dev), sizeof(a.ibdev));
	a.port_mtu = ib_mtu_enum_to_int(roxe_active_mtu(rdev));
	/* a failed copy leaves the device attached: closing the file undoes */
	return copy_to_user(uarg, &a, sizeof(a)) ? -EFAULT : 0;

out_put:
	dev_put(ndev);
out_unlock:
	mutex_unlock(&rf->lock);
	mutex_unlock(&roxe_attach_lock);
	return err;
}

static long roxe_ioc_info(struct roxe_file *rf, void __user *uarg)
{
	struct roxe_kabi_info i = { .abi_version = ROXE_KABI_VERSION };
	struct roxe_dev *rdev;

	mutex_lock(&rf->lock);
	rdev = rf->rdev;
	if (rdev) {
		i.ifindex = READ_ONCE(rdev->ifindex);
		i.port_state = roxe_port_state(rdev);
		if (READ_ONCE(rdev->registered))
			i.flags |= ROXE_KABI_INFO_REGISTERED;
		if (READ_ONCE(rdev->unregistered))
			i.flags |= ROXE_KABI_INFO_UNREGISTERED;
		i.port_mtu = ib_mtu_enum_to_int(roxe_active_mtu(rdev));
		i.ucontexts = atomic64_read(&rdev->ucontexts);
		strscpy(i.ibdev, dev_name(&rdev->ib.dev), sizeof(i.ibdev));
	}
	mutex_unlock(&rf->lock);
	if (!rdev)
		return -ENOTCONN;
	return copy_to_user(uarg, &i, sizeof(i)) ? -EFAULT : 0;
}

/* The device this file serves, once attached (it lives as long as the
 * file: only release detaches).
 */
static struct roxe_dev *file_dev(struct file *filp)
{
	struct roxe_file *rf = filp->private_data;
	struct roxe_dev *rdev;

	mutex_lock(&rf->lock);
	rdev = rf->rdev;
	mutex_unlock(&rf->lock);
	return rdev;
}

/* roxed's engines are ready: doorbells go to their eventfds. */
static long roxe_ioc_serve(struct roxe_file *rf, void __user *uarg)
{
	struct roxe_kabi_serve s;
	long err;

	if (!roxe_file_capable(rf))
		return -EPERM;
	if (copy_from_user(&s, uarg, sizeof(s)))
		return -EFAULT;
	mutex_lock(&rf->lock);		/* one SERVE at a time */
	err = rf->rdev ? roxe_serve(rf->rdev, &s) : -ENOTCONN;
	if (!err)
		roxe_dev_served(rf->rdev);
	mutex_unlock(&rf->lock);
	return err;
}

static long roxe_ioc_cq_event(struct file *filp, u32 __user *uarg)
{
	struct roxe_dev *rdev = file_dev(filp);
	u32 cqn;

	if (!rdev)
		return -ENOTCONN;
	if (get_user(cqn, uarg))
		return -EFAULT;
	return roxe_cq_event(rdev, cqn);
}

static long roxe_ioc_event(struct file *filp, void __user *uarg)
{
	struct roxe_dev *rdev = file_dev(filp);
	struct roxe_kabi_event e;

	if (!rdev)
		return -ENOTCONN;
	if (copy_from_user(&e, uarg, sizeof(e)))
		return -EFAULT;
	return roxe_async_event(rdev, &e);
}

static long roxe_ioc_mr_window(struct file *filp, void __user *uarg)
{
	struct roxe_dev *rdev = file_dev(filp);
	struct roxe_kabi_mr_window w;

	if (!rdev)
		return -ENOTCONN;
	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	if (w.map > 1)
		return -EINVAL;
	return roxe_mr_window(rdev, &w);
}

/* This file is the one roxed that starts a roxed per `rdma link add`. */
static long roxe_ioc_link_listen(struct roxe_file *rf)
{
	long err;

	mutex_lock(&rf->lock);
	err = rf->rdev || rf->listens ? -EBUSY : roxe_link_listen(rf);
	if (!err)
		rf->listens = true;
	mutex_unlock(&rf->lock);
	return err;
}

static bool file_listens(struct roxe_file *rf)
{
	bool l;

	mutex_lock(&rf->lock);
	l = rf->listens;
	mutex_unlock(&rf->lock);
	return l;
}

static long roxe_ioc_link_done(struct roxe_file *rf, void __user *uarg)
{
	struct roxe_kabi_link_done d;

	if (!file_listens(rf))
		return -ENOTCONN;
	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	return roxe_link_done(rf, d.id, d.error);
}

static long roxe_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct roxe_file *rf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case ROXE_IOC_ATTACH:
		return roxe_ioc_attach(filp, uarg);
	case ROXE_IOC_INFO:
		return roxe_ioc_info(rf, uarg);
	case ROXE_IOC_SERVE:
		return roxe_ioc_serve(rf, uarg);
	case ROXE_IOC_CQ_EVENT:
		return roxe_ioc_cq_event(filp, uarg);
	case ROXE_IOC_EVENT:
		return roxe_ioc_event(filp, uarg);
	case ROXE_IOC_MR_WINDOW:
		return roxe_ioc_mr_window(filp, uarg);
	case ROXE_IOC_LINK_LISTEN:
		return roxe_ioc_link_listen(rf);
	case ROXE_IOC_LINK_DONE:
		return roxe_ioc_link_done(rf, uarg);
	default:
		return -ENOTTY;
	}
}

/* roxed reads commands... */
static ssize_t roxe_read(struct file *filp, char __user *buf, size_t len,
			 loff_t *off)
{
	struct roxe_dev *rdev = file_dev(filp);

	if (!rdev && file_listens(filp->private_data))
		return roxe_link_read(filp->private_data, buf, len,
				      filp->f_flags & O_NONBLOCK);
	if (!rdev)
		return -ENOTCONN;
	return roxe_chan_read(&rdev->chan, buf, len, filp->f_flags & O_NONBLOCK);
}

/* ...and writes replies. */
static ssize_t roxe_write(struct file *filp, const char __user *buf,
			  size_t len, loff_t *off)
{
	struct roxe_dev *rdev = file_dev(filp);

	if (!rdev)
		return -ENOTCONN;
	return roxe_chan_write(&rdev->chan, buf, len);
}

static __poll_t roxe_poll(struct file *filp, poll_table *wait)
{
	struct roxe_dev *rdev = file_dev(filp);
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	if (!rdev && file_listens(filp->private_data))
		return roxe_link_poll(filp, wait);
	if (!rdev)
		return mask;
	poll_wait(filp, &rdev->chan.wq, wait);
	if (roxe_chan_readable(&rdev->chan))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* roxed maps by token: queues (small tokens), the shared area, MRs. */
static int roxe_file_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct roxe_dev *rdev = file_dev(filp);

	if (!rdev)
		return -ENOTCONN;
	if (vma->vm_pgoff >= ROXE_KABI_MR_TOKEN_BASE >> PAGE_SHIFT)
		return roxe_mr_mmap(rdev, vma);
	if (vma->vm_pgoff == ROXE_KABI_SHARED_TOKEN >> PAGE_SHIFT)
		return roxe_shared_mmap(rdev, vma);
	return roxe_kqueue_mmap(rdev, vma);
}

/* not seekable; 6.12 removed no_llseek, which did just this */
static loff_t roxe_llseek(struct file *file, loff_t off, int whence)
{
	return -ESPIPE;
}

static const struct file_operations roxe_fops = {
	.owner = THIS_MODULE,
	.open = roxe_open,
	.release = roxe_release,
	.read = roxe_read,
	.write = roxe_write,
	.poll = roxe_poll,
	.mmap = roxe_file_mmap,
	.unlocked_ioctl = roxe_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = roxe_llseek,
};

static struct miscdevice roxe_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = ROXE_KABI_DEVNAME,
	.fops = &roxe_fops,
	.mode = 0600,
};

int roxe_cdev_init(void)
{
	return misc_register(&roxe_misc);
}

void roxe_cdev_exit(void)
{
	misc_deregister(&roxe_misc);
}
