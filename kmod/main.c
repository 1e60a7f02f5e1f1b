// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe.ko: module init/exit and the netdev notifier that keeps each
 * device's port state in step with its netdev.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include "roxe.h"

/* the top Makefile's VERSION, from kmod/Kbuild */
#ifndef ROXE_VERSION
#error "ROXE_VERSION is not set: build roxe.ko with make kmod, or ROXE_VERSION=X.Y.Z"
#endif

LIST_HEAD(roxe_devs);
DEFINE_MUTEX(roxe_devs_lock);

static int roxe_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct roxe_dev *rdev;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_UNREGISTER:
		break;
	default:
		return NOTIFY_DONE;
	}

	mutex_lock(&roxe_devs_lock);
	list_for_each_entry(rdev, &roxe_devs, list) {
		if (READ_ONCE(rdev->ndev) != ndev)
			continue;
		if (event == NETDEV_UNREGISTER)
			roxe_dev_netdev_gone(rdev);
		else
			roxe_port_update(rdev);
	}
	mutex_unlock(&roxe_devs_lock);
	return NOTIFY_DONE;
}

static struct notifier_block roxe_netdev_nb = {
	.notifier_call = roxe_netdev_event,
};

static int __init roxe_init(void)
{
	int err;

	err = roxe_compat_init();
	if (err)
		return err;
	err = register_netdevice_notifier(&roxe_netdev_nb);
	if (err)
		return err;
	err = roxe_rxe_watch();
	if (err)
		goto out_notifier;
	err = roxe_cdev_init();
	if (err)
		goto out_watch;
	err = roxe_link_init();
	if (err)
		goto out_cdev;
	pr_info("loaded (control ABI %d, /dev/%s)\n", ROXE_KABI_VERSION,
		ROXE_KABI_DEVNAME);
	return 0;

out_cdev:
	roxe_cdev_exit();
out_watch:
	roxe_rxe_unwatch();
out_notifier:
	unregister_netdevice_notifier(&roxe_netdev_nb);
	return err;
}

/* Every device belongs to an open /dev/roxe, which pins the module: by the
 * time we get here all of them are gone.
 */
static void __exit roxe_exit(void)
{
	roxe_link_exit();
	roxe_cdev_exit();
	roxe_rxe_unwatch();
	unregister_netdevice_notifier(&roxe_netdev_nb);
	WARN_ON(!list_empty(&roxe_devs));
	roxe_mr_maps_destroy();
	pr_info("unloaded\n");
}

module_init(roxe_init);
module_exit(roxe_exit);

MODULE_AUTHOR("roxe");
MODULE_DESCRIPTION("roxe: RoCE v2 ib_device served by the roxed user-space engine");
MODULE_LICENSE("GPL");
MODULE_VERSION(ROXE_VERSION);
MODULE_SOFTDEP("pre: ib_uverbs");
