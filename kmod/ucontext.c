// SPDX-License-Identifier: GPL-2.0-only
/*
 * User contexts (one per ibv_open_device); their mmaps are in queue.c.
 *
 * Disassociation (the daemon went away while applications still hold the
 * device): the core destroys every object of the context first; queue
 * buffers are mapped with vm_insert_page semantics, so pages still mapped
 * by an application stay alive, unreferenced by the module, until it
 * unmaps them. Nothing of ours is left behind in a VMA, so the module can
 * unload while such an application lives on.
 */
#include "roxe.h"

int roxe_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibuc->device);

	/* the rxe ABI passes no driver data to get_context */
	atomic64_inc(&rdev->ucontexts);
	return 0;
}

void roxe_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct roxe_dev *rdev = to_rdev(ibuc->device);
	struct roxe_ucontext *uctx = container_of(ibuc, struct roxe_ucontext, ibuc);

	/* its MRs are gone, and each dereg cancelled its background fault */
	if (uctx->odp_wq)
		destroy_workqueue(uctx->odp_wq);
	atomic64_dec(&rdev->ucontexts);
}

void roxe_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	/* see the top of this file: nothing to revoke */
}
