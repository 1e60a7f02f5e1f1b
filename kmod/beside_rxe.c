// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe beside kernel rxe. Our devices register as RDMA_DRIVER_RXE: the
 * stock rdma-core rxe provider binds a device by that driver id or by a
 * name that starts with "rxe" (its match table: VERBS_DRIVER_ID(
 * RDMA_DRIVER_RXE), VERBS_NAME_MATCH("rxe")), and nothing else in
 * libibverbs would bind an unmodified application to roxe. But rdma_rxe's
 * module exit calls ib_unregister_driver(RDMA_DRIVER_RXE), which takes
 * every device of that id down, ours included. So while a roxe device
 * exists, roxe holds a reference on rdma_rxe when it is loaded (or as it
 * loads): `rmmod rdma_rxe` answers "in use" instead of taking our devices
 * with it. `rdma link delete rxe0` touches only rxe0; rxe's netdev events
 * never find our devices (ibdev.c keeps them out of ib_core's netdev hash).
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include "roxe.h"

#define RXE_MODULE	"rdma_rxe"

static DEFINE_MUTEX(pin_lock);
static unsigned int pin_users;		/* our devices */
static struct module *pinned;		/* rdma_rxe, referenced */

/* rdma_rxe's struct module, referenced, if it is loaded and live. Modules
 * are found by their sysfs kobject (every module's is in the same kset,
 * ours included); holding it keeps the struct module from being freed
 * (free_module() waits for the kobject's release) while we try to take
 * a reference.
 */
static struct module *rxe_get(void)
{
	struct kobject *kobj;
	struct module *mod = NULL;

	if (!THIS_MODULE->mkobj.kobj.kset)
		return NULL;
	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, RXE_MODULE);
	if (!kobj)
		return NULL;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (!mod || !try_module_get(mod))
		mod = NULL;
	kobject_put(kobj);
	return mod;
}

void roxe_rxe_pin(void)
{
	mutex_lock(&pin_lock);
	if (pin_users++ == 0 && !pinned)
		pinned = rxe_get();
	mutex_unlock(&pin_lock);
}

void roxe_rxe_unpin(void)
{
	mutex_lock(&pin_lock);
	if (!WARN_ON(!pin_users) && --pin_users == 0 && pinned) {
		module_put(pinned);
		pinned = NULL;
	}
	mutex_unlock(&pin_lock);
}

/* rdma_rxe loading while we have devices: take it as it comes. One that
 * fails its init goes away whatever its count: forget it then.
 */
static int roxe_module_event(struct notifier_block *nb, unsigned long state,
			     void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, RXE_MODULE))
		return NOTIFY_DONE;
	mutex_lock(&pin_lock);
	if (state == MODULE_STATE_COMING && pin_users && !pinned) {
		__module_get(mod);
		pinned = mod;
	} else if (state == MODULE_STATE_GOING && pinned == mod) {
		pinned = NULL;
	}
	mutex_unlock(&pin_lock);
	return NOTIFY_DONE;
}

static struct notifier_block roxe_module_nb = {
	.notifier_call = roxe_module_event,
};

int roxe_rxe_watch(void)
{
	return register_module_notifier(&roxe_module_nb);
}

void roxe_rxe_unwatch(void)
{
	unregister_module_notifier(&roxe_module_nb);
	WARN_ON(pinned);
}
