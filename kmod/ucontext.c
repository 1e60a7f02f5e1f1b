// SPDX-License-Identifier: GPL-2.0-only
/*
 * User contexts (one per ibv_open_device) and the mmap of queue memory.
 *
 * Disassociation (the daemon went away while applications still hold the
 * device): the core destroys every object of the context first; queue
 * buffers are mapped with vm_insert_page semantics, so pages still mapped
 * by an application stay alive, unreferenced by the module, until it
 * unmaps them. Nothing of ours is left behind in a VMA, so the module can
 * unload while such an application lives on.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
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

	atomic64_dec(&rdev->ucontexts);
}

void roxe_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	/* see the top of this file: nothing to revoke */
}

/* The provider maps a queue at the offset its create response named. The
 * pages go in with vm_insert_page semantics (each mapped page holds a
 * reference), and no vm_ops of ours is installed. */
int roxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct roxe_mmap *m;
	int err;

	e = rdma_user_mmap_entry_get(ibuc, vma);
	if (!e)
		return -EINVAL;
	m = container_of(e, struct roxe_mmap, rdma);
	err = remap_vmalloc_range(vma, m->buf, 0);
	rdma_user_mmap_entry_put(e);
	return err;
}

void roxe_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct roxe_mmap *m = container_of(e, struct roxe_mmap, rdma);

	vfree(m->buf);
	kfree(m);
}
