// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fast registration for kernel ULPs: ib_alloc_mr(IB_MR_TYPE_MEM_REG),
 * ib_map_mr_sg() and IB_WR_REG_MR, the way storage and file ULPs (NVMe-oF,
 * iSER, NFS/RDMA, SMB Direct) hand a peer remote access to kernel memory.
 *
 * roxed must reach those pages, so each MR gets a window: a token of
 * max_num_sg pages that roxed maps once (ROXE_KOP_ALLOC_MR) and faults in
 * like a user MR's (mr.c). ib_map_mr_sg() may run in atomic context, so it
 * only notes the pages (pending) under a spinlock. When roxed executes the
 * REG_MR WQE, in order on its QP, it asks ROXE_IOC_MR_WINDOW to put those
 * pages behind the window: under map_sem (no fault in between) they become
 * the MR's pages and roxed's old PTEs are zapped. An invalidation empties
 * the window the same way, so roxed keeps no page the ULP may reuse.
 *
 * The window's PTEs are VM_PFNMAP ones: kernel pages (kmalloc's among
 * them) cannot be vm_insert_page()d, and the ULP owns their lifetime,
 * which the IB rules tie to the MR's validity.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include "roxe.h"

struct ib_mr *roxe_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct roxe_dev *rdev = to_rdev(ibpd->device);
	struct roxe_kabi_cmd cmd = {};
	struct roxe_mr *mr;
	int err;
	u32 key;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);	/* SG_GAPS, INTEGRITY */
	if (!max_num_sg || max_num_sg > ROXE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	if (!READ_ONCE(rdev->nengines))
		return ERR_PTR(-EOPNOTSUPP);	/* as kernel CQs (cq.c) */
	mr = roxe_mr_new(rdev);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&mr->pending_lock);
	mr->max_pages = max_num_sg;
	mr->map_bytes = (u64)max_num_sg << PAGE_SHIFT;
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->pending = kvcalloc(max_num_sg, sizeof(*mr->pending), GFP_KERNEL);
	err = -ENOMEM;
	if (!mr->pages || !mr->pending)
		goto free;
	err = roxe_key_alloc(rdev, &key);
	if (err)
		goto free;
	err = roxe_mr_token_alloc(mr);
	if (err)
		goto free_key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	cmd.op = ROXE_KOP_ALLOC_MR;
	cmd.mr.key = key;
	cmd.mr.pdn = roxe_pdn(ibpd);
	cmd.mr.token = mr->token;
	cmd.mr.map_bytes = mr->map_bytes;
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DEREG_MR, key);
	if (err)
		goto revoke;
	err = xa_err(xa_store(&rdev->fmrs, key >> 8, mr, GFP_KERNEL));
	if (err) {
		roxe_chan_destroy(rdev, ROXE_KOP_DEREG_MR, key);
		goto revoke;
	}
	return &mr->ibmr;

revoke:
	roxe_mr_revoke(rdev, mr);

free_key:
	roxe_key_free(rdev, key);
free:
	kvfree(mr->pages);
	kvfree(mr->pending);
	roxe_mr_put(mr);
	return ERR_PTR(err);
}

int roxe_dereg_fast_mr(struct roxe_dev *rdev, struct roxe_mr *mr)
{
	xa_erase(&rdev->fmrs, mr->ibmr.lkey >> 8);	/* no new window calls */
	/* roxed stops touching the pages before it answers */
	roxe_chan_destroy(rdev, ROXE_KOP_DEREG_MR, mr->ibmr.lkey);
	roxe_mr_revoke(rdev, mr);	/* waits out a window call in progress */
	roxe_key_free(rdev, mr->ibmr.lkey);
	kvfree(mr->pages);
	kvfree(mr->pending);
	mr->pages = NULL;
	roxe_mr_put(mr);		/* or the last fault that holds it */
	return 0;
}

/* ib_sg_to_pages() hands over each page's address: with no DMA device
 * (ib_uses_virt_dma()) it is the kernel's linear-map address.
 */
static int set_page(struct ib_mr *ibmr, u64 addr)
{
	struct roxe_mr *mr = to_rmr(ibmr);
	void *va = (void *)(uintptr_t)addr;

	if (mr->npending == mr->max_pages || !virt_addr_valid(va))
		return -EINVAL;
	mr->pending[mr->npending++] = virt_to_page(va);
	return 0;
}

/* Any context: the pages are only noted (see the top). */
int roxe_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct roxe_mr *mr = to_rmr(ibmr);
	unsigned long flags;
	int n;

	if (!mr->pending || ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	spin_lock_irqsave(&mr->pending_lock, flags);
	mr->npending = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, set_page);
	/* before a ULP rewrites the iova's upper bits (xprtrdma does) */
	mr->pending_off = ibmr->iova & ~PAGE_MASK;
	spin_unlock_irqrestore(&mr->pending_lock, flags);
	return n;
}

/* ROXE_IOC_MR_WINDOW: roxed executes a REG_MR (map) or an invalidation. */
int roxe_mr_window(struct roxe_dev *rdev, const struct roxe_kabi_mr_window *w)
{
	unsigned long flags;
	struct roxe_mr *mr;
	int err = 0;

	xa_lock(&rdev->fmrs);
	mr = xa_load(&rdev->fmrs, w->key >> 8);
	if (mr)
		kref_get(&mr->ref);
	xa_unlock(&rdev->fmrs);
	if (!mr)
		return -ENOENT;
	down_write(&mr->map_sem);	/* no fault maps a page meanwhile */
	if (mr->revoked) {
		err = -ENOENT;
	} else {
		spin_lock_irqsave(&mr->pending_lock, flags);
		mr->npages = w->map ? mr->npending : 0;
		memcpy(mr->pages, mr->pending, mr->npages * sizeof(*mr->pages));
		spin_unlock_irqrestore(&mr->pending_lock, flags);
		unmap_mapping_range(rdev->daemon_mapping, mr->token,
				    mr->map_bytes, 1);
	}
	up_write(&mr->map_sem);
	roxe_mr_put(mr);
	return err;
}
