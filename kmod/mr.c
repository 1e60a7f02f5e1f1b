// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory regions: user buffers pinned with ib_umem_get() for as long as the
 * MR lives, and mapped into roxed through /dev/roxe at the MR's token, so
 * the engine reads and writes the application's memory directly. Keys are
 * an index (the upper 24 bits) and a generation byte, so a stale key of a
 * reused index does not match.
 *
 * The pinned pages are the application's, mostly anonymous, and
 * vm_insert_page() refuses anonymous pages: roxed's mapping is a
 * VM_PFNMAP one, whose PTEs hold no page references.
 * That makes revocation the module's job: on dereg the MR is marked
 * revoked, roxed's PTEs are zapped (unmap_mapping_range() on its file),
 * and only then is the umem released. PTEs are installed by faults, not by
 * mmap(): a driver's mmap runs before the VMA is linked into the file's
 * mapping, where a concurrent zap could not find what it installed; a
 * fault always finds the VMA linked, and checks `revoked` under map_sem.
 *
 * roxed never faults to death on an MR (issue #15). Its engines run
 * concurrently with revocation: a dereg whose DEREG_MR timed out (roxed
 * more than ROXE_KABI_TIMEOUT_MS behind) revokes while roxed may still use
 * the MR, and an invalidation (LOCAL_INV, a peer's SEND_WITH_INV) empties
 * a fast-reg window while another engine is inside it. A fault that finds
 * no MR page there therefore maps a scrap page instead of SIGBUS, never an
 * application's page and never shown to one, writable because roxed writes
 * into MRs:
 *  - beyond the pages behind a fast-reg window: the device's scrap page,
 *    one zeroed page allocated with the device. The engine reads bytes of
 *    no one's and writes into nothing, and finds the MR invalidated after
 *    the copy (its state is checked then): a protection error, nothing
 *    read there is ever sent;
 *  - in a revoked MR (a dereg whose DEREG_MR timed out: roxed does not
 *    know yet): the MR's own scrap page, allocated at revocation. roxed
 *    still takes the MR's old rkey until it reads the queued DEREG_MR, so
 *    what a WRITE through it leaves there a READ through it may return:
 *    one page per MR keeps that within the MR (the holders of its rkey),
 *    where a shared page let a WRITE through one tenant's stale rkey reach
 *    a READ through another's. The MR, and its scrap page, live as long as
 *    roxed's mapping of it (the VMA holds a reference).
 * We chose this over keeping the pages until roxed acknowledges: a
 * fast-reg MR's pages belong to the kernel ULP, which may reuse them the
 * moment the invalidation completes, and a dereg must not wait on a
 * daemon that may never answer. Each scrap fault is counted and
 * logged (rate-limited). Queue, bounce and shared-area mappings never
 * fault: their pages are inserted at mmap with references of their own
 * (queue.c, datapath.c), valid until roxed unmaps them.
 *
 * On-demand paging MRs (IB_ACCESS_ON_DEMAND, where compat.h has ROXE_ODP)
 * pin nothing: ib_umem_odp watches the application's range with an MMU
 * interval notifier. roxed's fault on such an MR never waits for the
 * application's memory, which the application controls (a FUSE file
 * mapped into the MR can block a fault for good), since one engine
 * thread serves every tenant on it: it maps what is present (a snapshot
 * with hmm_range_fault(), the application's mmap_lock tried, not taken,
 * PFNs inserted under umem_mutex) and otherwise raises SIGBUS in roxed
 * while a work on the MR's context's own ordered queue faults the range
 * in (roxe_odp_work: ib_umem_odp_map_dma_and_lock); roxed catches it and
 * tries again later (user/core/odp.c). A page that work found unmapped
 * raises SIGSEGV, once: roxed answers an access error, as rxe does. The
 * notifier's invalidation takes umem_mutex, zaps roxed's PTEs of the
 * range and only then lets the application's pages go. Lock order:
 * roxed's mmap_lock (or VMA lock, the fault's), map_sem, the
 * application's mmap_lock (tried), umem_mutex, roxed's page-table locks;
 * the invalidation runs under the application's mmap_lock and takes
 * umem_mutex and the mapping's i_mmap_rwsem, never roxed's mmap_lock.
 * The two mm are always different: an MR of roxed's own mm would nest its
 * mmap_lock, so that fault maps scrap, as does one of an owning mm that
 * is gone. A read-only page (an MR without write access) is mapped
 * read-only; roxed writing there (its bug) gets scrap.
 */
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include "roxe.h"

#ifdef ROXE_ODP
bool roxe_odp = true;
module_param_named(odp, roxe_odp, bool, 0444);
MODULE_PARM_DESC(odp, "offer on-demand paging MRs (IB_ACCESS_ON_DEMAND), as rxe does (default: yes)");
#endif

/* MRs by the id in their token, across every device and daemon file: all
 * /dev/roxe files share an inode, whose mapping revocation zaps by offset,
 * so no two live MRs may share a token range. Ids are handed out
 * cyclically, so a daemon's stale mapping of a gone MR does not name a new
 * one soon.
 */
static DEFINE_XARRAY_ALLOC(roxe_mr_maps);
static u32 roxe_mr_next_id;

#define ROXE_MR_ID_SHIFT	36	/* a token's range: 64 GiB */
#define ROXE_MR_ID_MAX		((1U << 24) - 1)
static_assert(ROXE_MAX_MR_SIZE + PAGE_SIZE <= 1ULL << ROXE_MR_ID_SHIFT);
/* tokens stay positive as an off_t, with room for the mapping */
static_assert(ROXE_KABI_MR_TOKEN_BASE +
	      ((u64)(ROXE_MR_ID_MAX + 1) << ROXE_MR_ID_SHIFT) < 1ULL << 63);

/* pages one fault maps at most (from the faulting one on) */
#define ROXE_MR_FAULT_PAGES	512

static u64 mr_token(u32 id)
{
	return ROXE_KABI_MR_TOKEN_BASE + ((u64)id << ROXE_MR_ID_SHIFT);
}

/* A new MR key: a free index (the upper 24 bits) and the next generation
 * byte. roxe_key_free() gives the index back.
 */
int roxe_key_alloc(struct roxe_dev *rdev, u32 *key)
{
	int idx = ida_alloc_range(&rdev->mr_ida, 1, ROXE_MAX_MR - 1, GFP_KERNEL);

	if (idx < 0)
		return idx;
	*key = ((u32)idx << 8) | (atomic_inc_return(&rdev->key_gen) & 0xff);
	return 0;
}

void roxe_key_free(struct roxe_dev *rdev, u32 key)
{
	ida_free(&rdev->mr_ida, key >> 8);
}

static void mr_free(struct kref *ref)
{
	struct roxe_mr *mr = container_of(ref, struct roxe_mr, ref);

	if (mr->scrap)
		__free_page(mr->scrap);
	kfree(mr);
}

/* An MR that roxed may map by token: referenced once, not yet mapped. */
struct roxe_mr *roxe_mr_new(struct roxe_dev *rdev)
{
	struct roxe_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	mr->rdev = rdev;
	kref_init(&mr->ref);
	init_rwsem(&mr->map_sem);
	return mr;
}

void roxe_mr_put(struct roxe_mr *mr)
{
	kref_put(&mr->ref, mr_free);
}

/* mr's token: a range of roxe_mr_maps of its own, which roxed's faults
 * find it by.
 */
int roxe_mr_token_alloc(struct roxe_mr *mr)
{
	int err = xa_alloc_cyclic(&roxe_mr_maps, &mr->map_id, mr,
				  XA_LIMIT(0, ROXE_MR_ID_MAX), &roxe_mr_next_id,
				  GFP_KERNEL);

	if (err < 0)
		return err;
	mr->token = mr_token(mr->map_id);
	return 0;
}

/* The MR of rdev whose token range holds page offset pgoff, referenced. */
static struct roxe_mr *mr_get(struct roxe_dev *rdev, unsigned long pgoff)
{
	u64 off = (u64)pgoff << PAGE_SHIFT;
	struct roxe_mr *mr;
	u64 id;

	if (off < ROXE_KABI_MR_TOKEN_BASE)
		return NULL;
	id = (off - ROXE_KABI_MR_TOKEN_BASE) >> ROXE_MR_ID_SHIFT;
	if (id > ROXE_MR_ID_MAX)
		return NULL;
	xa_lock(&roxe_mr_maps);
	mr = xa_load(&roxe_mr_maps, id);
	/* another daemon's MR is not ours to map */
	if (mr && mr->rdev == rdev)
		kref_get(&mr->ref);	/* the table's reference keeps it */
	else
		mr = NULL;
	xa_unlock(&roxe_mr_maps);
	return mr;
}

/* Where roxed's mapping has no MR page: scrap (a revoked MR's own), else
 * the device's scrap page (see the top), one page at a time, so whatever
 * comes to that range later (a new registration zaps it) is faulted in
 * afresh.
 */
#ifdef ROXE_ODP
static const struct vm_operations_struct roxe_mr_odp_vm_ops;
#endif

/* A PFN into roxed's mapping, writable unless !write. An ODP MR's mapping
 * has pfn_mkwrite, which makes its vm_page_prot write-protected (write
 * notification): there the protection is given.
 */
static vm_fault_t mr_insert(struct vm_area_struct *vma, unsigned long addr,
			    unsigned long pfn, bool write)
{
#ifdef ROXE_ODP
	if (vma->vm_ops == &roxe_mr_odp_vm_ops)
		return vmf_insert_pfn_prot(vma, addr, pfn,
					   vm_get_page_prot(write ? vma->vm_flags :
							    vma->vm_flags & ~VM_WRITE));
#endif
	return vmf_insert_pfn(vma, addr, pfn);
}

static vm_fault_t mr_fault_scrap(struct vm_fault *vmf, struct roxe_dev *rdev,
				 struct page *scrap)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vma->vm_start +
			     ((vmf->pgoff - vma->vm_pgoff) << PAGE_SHIFT);

	atomic64_inc(&rdev->scrap_faults);
	pr_notice_ratelimited("%s: roxed touched MR memory with no pages behind it (revoked or invalidated): scrap page, %lld so far\n",
			      dev_name(&rdev->ib.dev),
			      (long long)atomic64_read(&rdev->scrap_faults));
	return mr_insert(vma, addr, page_to_pfn(scrap ? scrap : rdev->scrap), true);
}

#ifdef ROXE_ODP
/* A page table for each page of roxed's range, made before umem_mutex is
 * taken: reclaim can invalidate this very MR (umem_mutex), so nothing
 * under it may allocate with reclaim.
 */
static int odp_pt_noop(pte_t *pte, unsigned long addr, void *data)
{
	return 0;
}

/* pages one look at an ODP MR's range maps at most (an array on the stack) */
#define ROXE_ODP_SNAP_PAGES	32

/*
 * The background fault of an ODP MR: pages [odp_idx, odp_end) faulted into
 * the application's mm (hmm_range_fault, which may sleep on the disk, on
 * a FUSE server, on anything the application mapped there), on its
 * context's ordered queue; roxed's next touch finds them present. A range
 * that reaches a page the application does not map is tried again as its
 * first page alone; that one not mapped either is recorded (odp_bad) for
 * roxed's next fault there. The work holds the MR (a reference) and
 * map_sem: a dereg waits for it, roxed's faults do not (a trylock).
 */
static void roxe_odp_work(struct work_struct *work)
{
	struct roxe_mr *mr = container_of(work, struct roxe_mr, odp_work);
	struct ib_umem_odp *odp = mr->odp;
	u64 access = odp->umem.writable ? HMM_PFN_WRITE : 0;
	unsigned long idx, end;
	int np;

	spin_lock(&mr->odp_lock);
	idx = mr->odp_idx;
	end = mr->odp_end;
	mr->odp_queued = false;		/* a request from now on queues again */
	spin_unlock(&mr->odp_lock);
	down_read(&mr->map_sem);	/* dereg releases the umem after revoked */
	if (!mr->revoked) {
		u64 va = ib_umem_start(odp) + ((u64)idx << PAGE_SHIFT);

		np = ib_umem_odp_map_dma_and_lock(odp, va, (u64)(end - idx) << PAGE_SHIFT,
						  access, true);
		if (np < 0 && end > idx + 1)
			np = ib_umem_odp_map_dma_and_lock(odp, va, PAGE_SIZE, access, true);
		if (np >= 0)
			mutex_unlock(&odp->umem_mutex);
		else if (np == -EFAULT)	/* no VMA there, or not one we may use */
			WRITE_ONCE(mr->odp_bad, idx + 1);
	}
	up_read(&mr->map_sem);
	roxe_mr_put(mr);
}

/* Ask for pages [idx, end) of an ODP MR in the background. One request
 * per MR is queued at a time: one while it waits widens it (within a
 * window), one while it runs queues it again after. */
static void odp_fault_queue(struct roxe_mr *mr, unsigned long idx, unsigned long end)
{
	bool queue = false;

	spin_lock(&mr->odp_lock);
	if (!mr->odp_queued) {
		mr->odp_idx = idx;
		mr->odp_end = end;
		mr->odp_queued = queue = true;
	} else if (max(end, mr->odp_end) - min(idx, mr->odp_idx) <= ROXE_MR_FAULT_PAGES) {
		mr->odp_idx = min(idx, mr->odp_idx);
		mr->odp_end = max(end, mr->odp_end);
	}	/* else: that touch fails again after this run, and asks then */
	spin_unlock(&mr->odp_lock);
	if (!queue)
		return;
	kref_get(&mr->ref);		/* the work's */
	if (!queue_work(mr->odp_wq, &mr->odp_work))
		roxe_mr_put(mr);	/* still queued from before odp_queued cleared */
}

/*
 * Map what of pages [idx, end) the application has present, from idx on,
 * without waiting for its memory: its mmap_lock tried, not taken, and
 * hmm_range_fault() asked to fault nothing (a snapshot). write: the page
 * at idx must be writable there. Returns how many pages it mapped from
 * idx, or -ENOENT: the application's mm is gone.
 */
static int odp_map_present(struct vm_fault *vmf, struct roxe_mr *mr, unsigned long idx,
			   unsigned long end, unsigned long addr, bool write)
{
	struct ib_umem_odp *odp = mr->odp;
	struct mm_struct *mm = odp->umem.owning_mm;
	unsigned long pfns[ROXE_ODP_SNAP_PAGES] = {};
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = ib_umem_start(odp) + (idx << PAGE_SHIFT),
		.hmm_pfns = pfns,
	};
	unsigned long i, n = min(end - idx, (unsigned long)ROXE_ODP_SNAP_PAGES);
	vm_fault_t ret = VM_FAULT_NOPAGE;
	int err;

	range.end = range.start + (n << PAGE_SHIFT);
	if (!mmget_not_zero(mm))
		return -ENOENT;
	range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
	if (!mmap_read_trylock(mm)) {
		mmput_async(mm);
		return 0;
	}
	err = hmm_range_fault(&range);
	mmap_read_unlock(mm);
	mmput_async(mm);
	if (err)
		return 0;
	mutex_lock(&odp->umem_mutex);
	/* an invalidation since the snapshot: those PFNs may be gone */
	if (mmu_interval_read_retry(&odp->notifier, range.notifier_seq)) {
		mutex_unlock(&odp->umem_mutex);
		return 0;
	}
	for (i = 0; i < n; i++, addr += PAGE_SIZE) {
		if (!(pfns[i] & HMM_PFN_VALID) ||
		    (i == 0 && write && !(pfns[i] & HMM_PFN_WRITE)))
			break;
		ret = mr_insert(vmf->vma, addr, page_to_pfn(hmm_pfn_to_page(pfns[i])),
				pfns[i] & HMM_PFN_WRITE);
		if (ret != VM_FAULT_NOPAGE)
			break;
	}
	mutex_unlock(&odp->umem_mutex);
	if (i == 0 && ret == VM_FAULT_OOM)
		return -ENOMEM;
	return i;
}

/*
 * roxed touched page idx of an ODP MR (under map_sem, the MR not
 * revoked). It never waits for the application's memory, which the
 * application controls: what is present is mapped; otherwise SIGBUS, and
 * the page (with the window behind it) is faulted in in the background
 * (roxe_odp_work), so roxed's next touch finds it; a page that fault
 * found nothing at is SIGSEGV, once. roxed catches both where it touches
 * such an MR (user/core/odp.c: the engine answers RNR NAK, or tries again
 * later; SIGSEGV: an access error, as rxe answers).
 */
static vm_fault_t roxe_odp_fault(struct vm_fault *vmf, struct roxe_mr *mr,
				 unsigned long idx, unsigned long end,
				 unsigned long addr)
{
	struct ib_umem_odp *odp = mr->odp;
	struct vm_area_struct *vma = vmf->vma;
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	int n;

	/* the application's mmap_lock inside roxed's own: a deadlock */
	if (odp->umem.owning_mm == vma->vm_mm)
		return mr_fault_scrap(vmf, mr->rdev, NULL);
	if (apply_to_page_range(vma->vm_mm, addr, (end - idx) << PAGE_SHIFT,
				odp_pt_noop, NULL))
		return VM_FAULT_OOM;
	n = odp_map_present(vmf, mr, idx, end, addr, write);
	if (n == -ENOENT)	/* the application is gone: scrap */
		return mr_fault_scrap(vmf, mr->rdev, NULL);
	if (n == -ENOMEM)
		return VM_FAULT_OOM;
	if (n > 0)
		return VM_FAULT_NOPAGE;
	if (READ_ONCE(mr->odp_bad) == idx + 1 && cmpxchg(&mr->odp_bad, idx + 1, 0) == idx + 1)
		return VM_FAULT_SIGSEGV;
	/* a write to a writable MR's page that is not writable yet (COW, the
	 * zero page) asks the same: the background fault writes */
	odp_fault_queue(mr, idx, end);
	return VM_FAULT_SIGBUS;
}

/* roxed wrote to a page of an ODP MR mapped read-only: one of an MR
 * without write access, which roxed must not write (the write goes to
 * scrap), or one not yet writable in the application's mm (COW, the zero
 * page): that one goes from roxed's mapping, is faulted in for writing in
 * the background, and the write raises SIGBUS as a fault would.
 */
static vm_fault_t roxe_odp_pfn_mkwrite(struct vm_fault *vmf)
{
	struct roxe_mr *mr = vmf->vma->vm_private_data;
	unsigned long idx = vmf->pgoff - (mr->token >> PAGE_SHIFT);

	unmap_mapping_range(mr->rdev->daemon_mapping, (u64)vmf->pgoff << PAGE_SHIFT,
			    PAGE_SIZE, 1);
	if (!mr->odp->umem.writable)
		return mr_fault_scrap(vmf, mr->rdev, NULL);
	if (!down_read_trylock(&mr->map_sem))
		return VM_FAULT_SIGBUS;
	if (!mr->revoked && idx < mr->npages)
		odp_fault_queue(mr, idx, idx + 1);
	up_read(&mr->map_sem);
	return VM_FAULT_SIGBUS;
}

/* No background fault runs or waits for mr any more (after revocation:
 * none can be queued), its reference given back. */
static void mr_odp_stop(struct roxe_mr *mr)
{
	if (mr->odp && mr->odp_wq && cancel_work_sync(&mr->odp_work))
		roxe_mr_put(mr);
}

/* The application's range changes (munmap, madvise, migration, COW...):
 * roxed's PTEs of it go before its pages do.
 */
static bool roxe_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp, notifier);
	unsigned long start, end;
	struct roxe_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(ib_umem_start(odp), range->start);
	end = min(ib_umem_end(odp), range->end);
	/* NULL until the MR has its token: roxed cannot have mapped it yet */
	mr = odp->private;
	if (start < end) {
		if (mr)
			unmap_mapping_range(mr->rdev->daemon_mapping,
					    mr->token + (start - ib_umem_start(odp)),
					    end - start, 1);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops roxe_odp_ops = {
	.invalidate = roxe_odp_invalidate,
};
#endif

static vm_fault_t roxe_mr_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct roxe_mr *mr = vma->vm_private_data;	/* the VMA's reference */
	struct roxe_dev *rdev = mr->rdev;
	unsigned long first, idx, end, addr, npages;
	vm_fault_t ret;

#ifdef ROXE_ODP
	/* roxed waits for nothing of an ODP MR's: a dereg in progress
	 * (waiting out a background fault) is a fault to try again later */
	if (mr->odp && !down_read_trylock(&mr->map_sem))
		return VM_FAULT_SIGBUS;
	if (!mr->odp)
#endif
		down_read(&mr->map_sem);
	/* a kernel QP's bounce region grows under its queue's lock, not
	 * map_sem: its pages are there before the count (kverbs.c)
	 */
	npages = smp_load_acquire(&mr->npages);
	first = mr->token >> PAGE_SHIFT;
	idx = vmf->pgoff - first;
	if (mr->revoked) {
		ret = mr_fault_scrap(vmf, rdev, mr->scrap);
		goto out;
	}
	if (vmf->pgoff < first || idx >= npages) {
		/* beyond the pages behind a fast-reg window */
		ret = mr_fault_scrap(vmf, rdev, NULL);
		goto out;
	}
	/* a window from the faulting page: one fault per 2 MiB, not per page */
	end = min(npages, idx + ROXE_MR_FAULT_PAGES);
	end = min(end, vma->vm_pgoff + vma_pages(vma) - first);
	addr = vma->vm_start + ((vmf->pgoff - vma->vm_pgoff) << PAGE_SHIFT);
#ifdef ROXE_ODP
	if (mr->odp) {
		ret = roxe_odp_fault(vmf, mr, idx, end, addr);
		goto out;
	}
#endif
	ret = vmf_insert_pfn(vma, addr, page_to_pfn(mr->pages[idx]));
	/* the rest is a bonus: a failure there is the next fault's */
	while (ret == VM_FAULT_NOPAGE && ++idx < end) {
		addr += PAGE_SIZE;
		if (vmf_insert_pfn(vma, addr, page_to_pfn(mr->pages[idx])) !=
		    VM_FAULT_NOPAGE)
			break;
	}
out:
	up_read(&mr->map_sem);
	return ret;
}

/* The VMA holds the MR (and a revoked one's scrap page) for as long as it
 * maps it: a split VMA takes a reference of its own. */
static void roxe_mr_vm_open(struct vm_area_struct *vma)
{
	struct roxe_mr *mr = vma->vm_private_data;

	kref_get(&mr->ref);
}

static void roxe_mr_vm_close(struct vm_area_struct *vma)
{
	roxe_mr_put(vma->vm_private_data);
}

static const struct vm_operations_struct roxe_mr_vm_ops = {
	.open = roxe_mr_vm_open,
	.close = roxe_mr_vm_close,
	.fault = roxe_mr_fault,
};

#ifdef ROXE_ODP
/* an ODP MR's: its read-only pages (an MR without write access) are
 * mapped read-only, and a write there comes to pfn_mkwrite */
static const struct vm_operations_struct roxe_mr_odp_vm_ops = {
	.open = roxe_mr_vm_open,
	.close = roxe_mr_vm_close,
	.fault = roxe_mr_fault,
	.pfn_mkwrite = roxe_odp_pfn_mkwrite,
};
#endif

/* roxed's mmap of an MR token: the whole MR, shared, at its token.
 * Writable whatever the MR's access: 6.1's ib_umem_get() pins every MR
 * for writing (FOLL_FORCE for read-only ones), so the pages are the
 * application's own and nothing shared shows through; honouring the
 * access flags is roxed's part.
 */
int roxe_mr_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma)
{
	struct roxe_mr *mr = mr_get(rdev, vma->vm_pgoff);
	int err = -EINVAL;

	if (!mr)
		return -EINVAL;
	down_read(&mr->map_sem);
	if (mr->revoked || vma->vm_pgoff != mr->token >> PAGE_SHIFT ||
	    vma->vm_end - vma->vm_start != mr->map_bytes ||
	    !(vma->vm_flags & VM_SHARED))
		goto out;
	/* no fork copies (revocation would have more to find), no growth */
	roxe_vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP |
			       VM_DONTCOPY);
	vma->vm_ops = &roxe_mr_vm_ops;
#ifdef ROXE_ODP
	if (mr->odp)
		vma->vm_ops = &roxe_mr_odp_vm_ops;
#endif
	/* mr_get()'s reference becomes the VMA's (roxe_mr_vm_close) */
	vma->vm_private_data = mr;
	up_read(&mr->map_sem);
	return 0;
out:
	up_read(&mr->map_sem);
	kref_put(&mr->ref, mr_free);
	return err;
}

/* No fault maps the MR's pages from here on, and none stays mapped: roxed's
 * next touch of the range finds the scrap page.
 */
void roxe_mr_revoke(struct roxe_dev *rdev, struct roxe_mr *mr)
{
	/* its own scrap page (see the top); without one, the device's */
	struct page *scrap = alloc_page(GFP_KERNEL | __GFP_ZERO);

	xa_erase(&roxe_mr_maps, mr->map_id);	/* no new lookups */
	down_write(&mr->map_sem);		/* waits out faults in progress */
	mr->revoked = true;
	if (!mr->scrap)
		swap(mr->scrap, scrap);
	up_write(&mr->map_sem);
	if (scrap)
		__free_page(scrap);
	unmap_mapping_range(rdev->daemon_mapping, mr->token, mr->map_bytes, 1);
}

/* The umem's pages in order, for the fault handler. */
static int mr_collect_pages(struct roxe_mr *mr)
{
	struct sg_page_iter it;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	if (mr->npages != mr->map_bytes >> PAGE_SHIFT)
		return -EINVAL;
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &it, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	return i == mr->npages ? 0 : -EINVAL;
}

/* The umem of a user MR, pinned or on demand, goes. */
static void mr_umem_release(struct roxe_mr *mr)
{
#ifdef ROXE_ODP
	if (mr->odp) {
		ib_umem_odp_release(mr->odp);
		return;
	}
#endif
	ib_umem_release(mr->umem);
}

#ifdef ROXE_ODP
/* The queue of uctx's background faults, made with its first ODP MR. */
static struct workqueue_struct *odp_wq_get(struct roxe_ucontext *uctx)
{
	struct workqueue_struct *wq = READ_ONCE(uctx->odp_wq), *old;

	if (wq)
		return wq;
	wq = alloc_ordered_workqueue("roxe_odp", 0);
	if (!wq)
		return NULL;
	old = cmpxchg(&uctx->odp_wq, NULL, wq);
	if (!old)
		return wq;
	destroy_workqueue(wq);	/* another registration made it first */
	return old;
}

/* An ODP MR's umem: nothing pinned, no page list (the fault asks). */
static int mr_odp_get(struct roxe_mr *mr, struct ib_device *dev, u64 start,
		      u64 length, int access, struct ib_udata *udata)
{
	struct roxe_ucontext *uctx = rdma_udata_to_drv_context(udata, struct roxe_ucontext, ibuc);
	struct ib_umem_odp *odp;

	if (!uctx)
		return -EINVAL;
	mr->odp_wq = odp_wq_get(uctx);
	if (!mr->odp_wq)
		return -ENOMEM;
	INIT_WORK(&mr->odp_work, roxe_odp_work);
	spin_lock_init(&mr->odp_lock);
	odp = ib_umem_odp_get(dev, start, length, access, &roxe_odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->odp = odp;
	mr->umem = &odp->umem;
	mr->npages = mr->map_bytes >> PAGE_SHIFT;
	return ib_umem_odp_num_pages(odp) == mr->npages ? 0 : -EINVAL;
}
#endif

struct ib_mr *roxe_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibpd->device);
	struct roxe_kabi_cmd cmd = {};
	struct roxe_mr *mr;
	int err;
	u32 key;

	/* optional flags (relaxed ordering: perftest asks) are hints a
	 * device may ignore; nothing here reorders anyway */
	access &= ~IB_ACCESS_OPTIONAL;
	/* no page roxe maps is persistent memory: rxe refuses the same */
	if (access & ROXE_IB_ACCESS_FLUSH_PERSISTENT)
		return ERR_PTR(-EINVAL);
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
		       IB_ACCESS_MW_BIND | ROXE_IB_ACCESS_FLUSH_GLOBAL |
		       ROXE_IB_ACCESS_ON_DEMAND))
		return ERR_PTR(-EOPNOTSUPP);
	/* implicit ODP (the whole address space) is not offered (no
	 * IB_ODP_SUPPORT_IMPLICIT): refused as rxe refuses it */
	if ((access & ROXE_IB_ACCESS_ON_DEMAND) && !start && length == U64_MAX)
		return ERR_PTR(-EINVAL);
	/* one token's range holds the mapping (max_mr_size) */
	if (!length || length > ROXE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	mr = roxe_mr_new(rdev);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = roxe_key_alloc(rdev, &key);
	if (err)
		goto free_mr;
	mr->page_off = start & ~PAGE_MASK;
	mr->map_bytes = PAGE_ALIGN(mr->page_off + length);
#ifdef ROXE_ODP
	if (access & IB_ACCESS_ON_DEMAND) {
		err = -EOPNOTSUPP;	/* ib_core refuses it first */
		if (!rdev->odp)
			goto free_idx;
		err = mr_odp_get(mr, ibpd->device, start, length, access, udata);
		if (err && !mr->odp)
			goto free_idx;
		if (err)
			goto release;
		goto token;
	}
#endif
	mr->umem = roxe_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto free_idx;
	}
	err = mr_collect_pages(mr);
	if (err)
		goto release;
#ifdef ROXE_ODP
token:
#endif
	err = roxe_mr_token_alloc(mr);
	if (err)
		goto release;
#ifdef ROXE_ODP
	if (mr->odp) {
		/* the invalidation zaps roxed's PTEs at the token from here */
		mutex_lock(&mr->odp->umem_mutex);
		mr->odp->private = mr;
		mutex_unlock(&mr->odp->umem_mutex);
	}
#endif
	access &= ~ROXE_IB_ACCESS_ON_DEMAND;
	mr->access = access;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	cmd.op = ROXE_KOP_REG_MR;
	cmd.mr.key = key;
	cmd.mr.pdn = roxe_pdn(ibpd);
	/* ON_DEMAND: roxed must catch its faults there (kabi.h) */
	cmd.mr.access = access | (mr->odp ? ROXE_IB_ACCESS_ON_DEMAND : 0);
	cmd.mr.page_off = mr->page_off;
	cmd.mr.iova = iova;
	cmd.mr.length = length;
	cmd.mr.token = mr->token;
	cmd.mr.map_bytes = mr->map_bytes;
	/* roxed may have mapped it already: it forgets the MR (its answer
	 * or the timeout) before the pages go
	 */
	err = roxe_chan_call_undo(&rdev->chan, &cmd, ROXE_KOP_DEREG_MR, key, true);
	if (err) {
		roxe_mr_revoke(rdev, mr);
#ifdef ROXE_ODP
		mr_odp_stop(mr);
#endif
		goto release;
	}
#ifdef ROXE_ODP
	/* advise_mr finds it by index; the index is ours until dereg */
	if (mr->odp)
		xa_store(&rdev->odp_mrs, key >> 8, mr, GFP_KERNEL);
#endif
	return &mr->ibmr;

release:
	kvfree(mr->pages);
	mr_umem_release(mr);
free_idx:
	roxe_key_free(rdev, key);
free_mr:
	kref_put(&mr->ref, mr_free);
	return ERR_PTR(err);
}

int roxe_dereg_user_mr(struct roxe_dev *rdev, struct roxe_mr *mr)
{
	struct roxe_kabi_cmd cmd = {};

	/* roxed stops touching the pages before it answers; it refuses
	 * while memory windows are bound to the MR (as rxe), which then
	 * stays as it is. Any other answer, or none, and the MR goes.
	 */
	cmd.op = ROXE_KOP_DEREG_MR;
	cmd.id = mr->ibmr.lkey;
	if (roxe_chan_call_destroy(&rdev->chan, &cmd) == -EINVAL)
		return -EINVAL;
#ifdef ROXE_ODP
	if (mr->odp)
		xa_erase(&rdev->odp_mrs, mr->ibmr.lkey >> 8);
#endif
	/* advise_mr and faults check revoked under map_sem: none uses the
	 * umem after this */
	roxe_mr_revoke(rdev, mr);
#ifdef ROXE_ODP
	mr_odp_stop(mr);
#endif
	kvfree(mr->pages);
	mr_umem_release(mr);
	roxe_key_free(rdev, mr->ibmr.lkey);
	roxe_mr_put(mr);	/* or the last fault that holds it */
	return 0;
}

#ifdef ROXE_ODP
/* One range of advise_mr's: the application's pages faulted in (fault)
 * or those present taken as they are, for writing where mask says so.
 */
static int mr_odp_prefetch(struct roxe_mr *mr, const struct ib_sge *sge,
			   u64 mask, bool fault)
{
	int np = -EINVAL;

	if (!sge->length)
		return 0;
	down_read(&mr->map_sem);	/* dereg releases the umem after revoked */
	if (!mr->revoked)
		np = ib_umem_odp_map_dma_and_lock(mr->odp, sge->addr, sge->length,
						  mask, fault);
	if (np >= 0)
		mutex_unlock(&mr->odp->umem_mutex);
	up_read(&mr->map_sem);
	return np < 0 ? np : 0;
}

/*
 * ibv_advise_mr(): each range's pages faulted into the application's
 * mm now (PREFETCH for reading, PREFETCH_WRITE for writing; NO_FAULT
 * takes those present), so that roxed's faults on them find them there
 * and only map. Done before returning either way; without
 * IB_UVERBS_ADVISE_MR_FLAG_FLUSH, as rxe, failures are not reported (the
 * advice is best effort) but an unknown lkey is.
 */
int roxe_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice, u32 flags,
		   struct ib_sge *sg_list, u32 num_sge, struct uverbs_attr_bundle *attrs)
{
	struct roxe_dev *rdev = to_rdev(ibpd->device);
	bool sync = flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH;
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge && !err; i++) {
		u32 lkey = sg_list[i].lkey;
		u64 mask = 0;
		struct roxe_mr *mr;

		/* as rxe, an MR the caller may write locally */
		xa_lock(&rdev->odp_mrs);
		mr = xa_load(&rdev->odp_mrs, lkey >> 8);
		if (mr && mr->ibmr.lkey == lkey && mr->ibmr.pd == ibpd &&
		    (mr->access & IB_ACCESS_LOCAL_WRITE))
			kref_get(&mr->ref);
		else
			mr = NULL;
		xa_unlock(&rdev->odp_mrs);
		if (!mr)
			return -EINVAL;
		if (advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE)
			mask = HMM_PFN_WRITE;
		err = mr_odp_prefetch(mr, &sg_list[i], mask,
				      advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);
		roxe_mr_put(mr);
		if (!sync)
			err = 0;
	}
	return err;
}
#endif

void roxe_mr_maps_destroy(void)
{
	WARN_ON(!xa_empty(&roxe_mr_maps));
	xa_destroy(&roxe_mr_maps);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
/* compat.h: no DMA handles (ib_dmah) here */
struct ib_mr *roxe_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				    int access, struct ib_dmah *dmah, struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return roxe_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#endif
