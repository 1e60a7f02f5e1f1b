// SPDX-License-Identifier: GPL-2.0-only
/*
 * Work and completion queue memory in the rxe ABI layout: a struct
 * rxe_queue_buf header (indices on their own cache lines) and 2^k slots of
 * 2^j bytes. vmalloc_user() memory, so the provider (through uverbs' mmap)
 * and roxed (through /dev/roxe) can map it.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>
#include "roxe.h"

/* Round *entries up so that a queue of 2^k slots holds them (one slot stays
 * empty), allocate it and report back what it holds. */
int roxe_kqueue_alloc(struct roxe_kqueue *q, u32 *entries, size_t elem_size)
{
	u32 log2_elem = order_base_2(elem_size);
	u64 slots = roundup_pow_of_two((u64)*entries + 1);
	size_t size;

	if (!*entries || slots > (1U << 20) || log2_elem > 16)
		return -EINVAL;
	size = PAGE_ALIGN(sizeof(struct rxe_queue_buf) + (slots << log2_elem));
	q->buf = vmalloc_user(size);
	if (!q->buf)
		return -ENOMEM;
	q->size = size;
	q->slots = slots;
	q->log2_elem = log2_elem;
	q->buf->log2_elem_size = log2_elem;
	q->buf->index_mask = slots - 1;
	q->mmap = NULL;
	*entries = slots - 1;
	return 0;
}

/* Hand the queue to the ucontext of udata: from now on the mmap entry owns
 * the memory. mi is what the provider passes to mmap(). */
int roxe_kqueue_export(struct roxe_kqueue *q, struct ib_udata *udata,
		       struct mminfo *mi)
{
	struct roxe_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct roxe_ucontext, ibuc);
	struct roxe_mmap *m;
	int err;

	if (!uc)
		return -EINVAL;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->buf = q->buf;
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &m->rdma, q->size);
	if (err) {
		kfree(m);
		return err;
	}
	q->mmap = m;
	mi->offset = rdma_user_mmap_get_offset(&m->rdma);
	mi->size = q->size;
	mi->pad = 0;
	return 0;
}

void roxe_kqueue_free(struct roxe_kqueue *q)
{
	if (q->mmap)
		/* the memory goes with the entry's last reference */
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mmap = NULL;
}
