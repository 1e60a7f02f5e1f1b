// SPDX-License-Identifier: GPL-2.0-only
/*
 * Work and completion queue memory in the rxe ABI layout: a struct
 * rxe_queue_buf header (indices on their own cache lines) and 2^k slots of
 * 2^j bytes. vmalloc_user() memory, mapped by the application (uverbs'
 * mmap, at the offset of its create response) and by roxed (/dev/roxe's
 * mmap, at the queue's token). The buffer is refcounted: the queue object,
 * the ucontext's mmap entry and any mmap in progress each hold a reference,
 * so neither mapping path can race with a destroy.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>
#include "roxe.h"

static void roxe_mmap_release(struct kref *ref)
{
	struct roxe_mmap *m = container_of(ref, struct roxe_mmap, ref);

	vfree(m->buf);
	kfree(m);
}

/* size bytes of zeroed vmalloc_user() memory that roxed can map at the
 * token token_id << PAGE_SHIFT (queues, kernel QPs' bounce regions).
 */
struct roxe_mmap *roxe_kbuf_alloc(struct roxe_dev *rdev, size_t size,
				  u32 *token_id)
{
	struct roxe_mmap *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->buf = vmalloc_user(size);
	if (!m->buf) {
		kfree(m);
		return ERR_PTR(-ENOMEM);
	}
	m->size = size;
	kref_init(&m->ref);
	err = xa_alloc(&rdev->queues, token_id, m, xa_limit_31b, GFP_KERNEL);
	if (err) {
		kref_put(&m->ref, roxe_mmap_release);
		return ERR_PTR(err);
	}
	return m;
}

/* Unfindable by token; freed when the last mapping goes. */
void roxe_kbuf_free(struct roxe_dev *rdev, struct roxe_mmap *m, u32 token_id)
{
	xa_erase(&rdev->queues, token_id);
	kref_put(&m->ref, roxe_mmap_release);
}

/* Round *entries up so that a queue of 2^k slots holds them (one slot stays
 * empty), allocate it and report back what it holds.
 */
int roxe_kqueue_alloc(struct roxe_dev *rdev, struct roxe_kqueue *q,
		      u32 *entries, size_t elem_size)
{
	u32 log2_elem = order_base_2(elem_size);
	u64 slots = roundup_pow_of_two((u64)*entries + 1);
	struct roxe_mmap *m;
	size_t size;

	if (!*entries || slots > (1U << 20) || log2_elem > 16)
		return -EINVAL;
	size = PAGE_ALIGN(sizeof(struct rxe_queue_buf) + (slots << log2_elem));
	m = roxe_kbuf_alloc(rdev, size, &q->token_id);
	if (IS_ERR(m))
		return PTR_ERR(m);
	q->m = m;
	q->buf = m->buf;
	q->size = size;
	q->slots = slots;
	q->log2_elem = log2_elem;
	q->exported = false;
	q->buf->log2_elem_size = log2_elem;
	q->buf->index_mask = slots - 1;
	*entries = slots - 1;
	return 0;
}

/* Give the ucontext of udata a mapping of the queue; mi is what the
 * provider passes to mmap().
 */
int roxe_kqueue_export(struct roxe_kqueue *q, struct ib_udata *udata,
		       struct mminfo *mi)
{
	struct roxe_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct roxe_ucontext, ibuc);
	int err;

	if (!uc)
		return -EINVAL;
	kref_get(&q->m->ref);
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &q->m->rdma, q->size);
	if (err) {
		kref_put(&q->m->ref, roxe_mmap_release);
		return err;
	}
	q->exported = true;
	mi->offset = rdma_user_mmap_get_offset(&q->m->rdma);
	mi->size = q->size;
	mi->pad = 0;
	return 0;
}

void roxe_kqueue_describe(const struct roxe_kqueue *q, struct roxe_kabi_queue *k)
{
	k->token = (u64)q->token_id << PAGE_SHIFT;
	k->bytes = q->size;
	k->slots = q->slots;
	k->log2_elem = q->log2_elem;
}

void roxe_kqueue_free(struct roxe_dev *rdev, struct roxe_kqueue *q)
{
	if (!q->m)
		return;
	if (q->exported)
		rdma_user_mmap_entry_remove(&q->m->rdma);	/* -> mmap_free */
	roxe_kbuf_free(rdev, q->m, q->token_id);
	q->m = NULL;
	q->buf = NULL;
}

/* The ucontext's entry went (destroy, or the context closed). */
void roxe_mmap_free(struct rdma_user_mmap_entry *e)
{
	kref_put(&container_of(e, struct roxe_mmap, rdma)->ref, roxe_mmap_release);
}

static int map_buf(struct roxe_mmap *m, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != m->size ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* vm_insert_page semantics: each mapped page holds a reference */
	return remap_vmalloc_range(vma, m->buf, 0);
}

/* The provider's mmap through uverbs. */
int roxe_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	int err;

	e = rdma_user_mmap_entry_get(ibuc, vma);
	if (!e)
		return -EINVAL;
	err = map_buf(container_of(e, struct roxe_mmap, rdma), vma);
	rdma_user_mmap_entry_put(e);
	return err;
}

/* roxed's mmap through /dev/roxe: the offset is the queue's token. */
int roxe_kqueue_mmap(struct roxe_dev *rdev, struct vm_area_struct *vma)
{
	struct roxe_mmap *m;
	int err;

	xa_lock(&rdev->queues);
	m = xa_load(&rdev->queues, vma->vm_pgoff);
	if (m && !kref_get_unless_zero(&m->ref))
		m = NULL;
	xa_unlock(&rdev->queues);
	if (!m)
		return -EINVAL;
	err = map_buf(m, vma);
	kref_put(&m->ref, roxe_mmap_release);
	return err;
}
