// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Protection domains and memory regions.
 *
 * A key is (table index << 8 | generation): a stale key of a deregistered
 * MR whose slot was reused does not match the new MR. lkey and rkey are the
 * same number; the rkey is valid only when remote access was granted.
 * Engines look keys up without locks (see engine.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

#define REMOTE_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
		       IBV_ACCESS_REMOTE_ATOMIC)
#define KNOWN_ACCESS (IBV_ACCESS_LOCAL_WRITE | REMOTE_ACCESS)

int roxe_alloc_pd(struct roxe_device *dev, struct roxe_pd **out)
{
	struct roxe_pd *pd;

	if (!dev || !out)
		return -EINVAL;
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->dev = dev;
	*out = pd;
	return 0;
}

int roxe_dealloc_pd(struct roxe_pd *pd)
{
	if (!pd)
		return -EINVAL;
	if (atomic_load(&pd->users))
		return -EBUSY;
	free(pd);
	return 0;
}

/* Publish mr at key (0: a free index of our own, with the next generation). */
static int mr_publish(struct roxe_pd *pd, struct roxe_mr_priv *mr, uint32_t key)
{
	struct roxe_device *dev = pd->dev;
	uint32_t idx = key >> 8, tries;

	pthread_mutex_lock(&dev->lock);
	if (key) {
		if (idx == 0 || idx >= ROXE_MAX_MR || atomic_load(&dev->mrs[idx])) {
			pthread_mutex_unlock(&dev->lock);
			return -EEXIST;
		}
	} else {
		for (tries = 0; tries < ROXE_MAX_MR; tries++) {
			idx = dev->next_mr++ % ROXE_MAX_MR;
			if (idx && !atomic_load(&dev->mrs[idx]))
				break;
		}
		if (tries == ROXE_MAX_MR) {
			pthread_mutex_unlock(&dev->lock);
			return -ENOMEM;
		}
		key = idx << 8 | dev->key_gen++;
	}
	mr->pub.lkey = key;
	mr->pub.rkey = (mr->pub.access & REMOTE_ACCESS) ? key : 0;
	atomic_fetch_add(&pd->users, 1);
	atomic_store_explicit(&dev->mrs[idx], mr, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static int mr_new(struct roxe_pd *pd, uint32_t key, uint64_t iova, void *host, size_t length,
		  unsigned access, struct roxe_mr **out)
{
	struct roxe_mr_priv *mr;
	int err;

	if (!pd || !out || (!host && length) || (access & ~KNOWN_ACCESS))
		return -EINVAL;
	/* IBA 10.6.3.1: remote write or atomic needs local write. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (iova + length < iova || (uintptr_t)host + length < (uintptr_t)host)
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->pd = pd;
	mr->pub.addr = (void *)(uintptr_t)iova;
	mr->pub.length = length;
	mr->pub.access = access;
	mr->iova = iova;
	mr->host = host;
	atomic_store(&mr->valid, true);
	err = mr_publish(pd, mr, key);
	if (err) {
		free(mr);
		return err;
	}
	*out = &mr->pub;
	return 0;
}

int roxe_reg_mr(struct roxe_pd *pd, void *addr, size_t length, unsigned access,
		struct roxe_mr **out)
{
	return mr_new(pd, 0, (uintptr_t)addr, addr, length, access, out);
}

int roxe_served_mr_add(struct roxe_pd *pd, uint32_t key, uint64_t iova, size_t length,
		       unsigned access, void *host, struct roxe_mr **out)
{
	if (!key)
		return -EINVAL;
	return mr_new(pd, key, iova, host, length, access, out);
}

int roxe_served_mr_fast(struct roxe_pd *pd, uint32_t key, void *window, uint64_t window_bytes,
			roxe_mr_window_fn *fn, void *ctx, struct roxe_mr **out)
{
	struct roxe_mr_priv *mr;
	int err;

	if (!key || !window || !window_bytes || !fn)
		return -EINVAL;
	err = mr_new(pd, key, 0, window, 0, 0, out);
	if (err)
		return err;
	mr = (struct roxe_mr_priv *)*out;
	mr->window = window;
	mr->window_bytes = window_bytes;
	mr->window_fn = fn;
	mr->window_ctx = ctx;
	mr->pub.rkey = key;
	atomic_store(&mr->valid, false);
	return 0;
}

int roxe_mr_fast_reg(struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t key = w->wr.wr.rdma.rkey, access = w->wr.wr.rdma.reserved;
	uint64_t len = ROXE_KABI_REG_MR_LEN(w->wr.wr.rdma.remote_addr);
	uint32_t off = ROXE_KABI_REG_MR_OFF(w->wr.wr.rdma.remote_addr);
	struct roxe_mr_priv *mr;

	mr = atomic_load_explicit(&qp->dev->mrs[(key >> 8) % ROXE_MAX_MR], memory_order_acquire);
	/* IBA 10.6.3.6: only an invalid MR of the QP's PD is registered */
	if (!mr || !mr->window || mr->pd != qp->pd || atomic_load(&mr->valid) ||
	    (access & ~KNOWN_ACCESS) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_LOC_PROT_ERR;
	if (off >= 4096 || len > mr->window_bytes - off || w->iova + len < w->iova)
		return IBV_WC_LOC_LEN_ERR;
	if (mr->window_fn(mr->window_ctx, key, true))
		return IBV_WC_LOC_PROT_ERR;
	mr->iova = w->iova;
	mr->host = mr->window + off;
	mr->pub.addr = (void *)(uintptr_t)w->iova;
	mr->pub.length = len;
	mr->pub.access = access;
	mr->pub.lkey = key;
	mr->pub.rkey = (access & REMOTE_ACCESS) ? key : 0;
	atomic_store_explicit(&mr->valid, true, memory_order_release);
	return IBV_WC_SUCCESS;
}

void roxe_mr_invalidate(struct roxe_mr_priv *mr)
{
	atomic_store(&mr->valid, false);
	if (mr->window)
		mr->window_fn(mr->window_ctx, mr->pub.lkey, false);
}

int roxe_dereg_mr(struct roxe_mr *pub)
{
	struct roxe_mr_priv *mr = (struct roxe_mr_priv *)pub;
	struct roxe_device *dev;

	if (!pub)
		return -EINVAL;
	dev = mr->pd->dev;
	atomic_store(&dev->mrs[pub->lkey >> 8], NULL);
	/* An engine may be copying into it right now: wait it out. */
	roxe_dev_quiesce(dev);
	atomic_fetch_sub(&mr->pd->users, 1);
	free(mr);
	return 0;
}

struct roxe_mr_priv *roxe_mr_lookup(struct roxe_device *dev, uint32_t key, bool remote)
{
	struct roxe_mr_priv *mr;

	mr = atomic_load_explicit(&dev->mrs[(key >> 8) % ROXE_MAX_MR], memory_order_acquire);
	if (!mr || (remote ? mr->pub.rkey : mr->pub.lkey) != key || !key)
		return NULL;
	if (!atomic_load_explicit(&mr->valid, memory_order_relaxed))
		return NULL;
	return mr;
}

int roxe_mr_check(const struct roxe_mr_priv *mr, const struct roxe_pd *pd,
		  uint64_t va, uint64_t len, unsigned access)
{
	if (mr->pd != pd || (mr->pub.access & access) != access)
		return -EACCES;
	if (va < mr->iova || va + len < va || va + len > mr->iova + mr->pub.length)
		return -ERANGE;
	return 0;
}

void *roxe_mr_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t rkey,
		  uint64_t va, uint64_t len, unsigned access)
{
	struct roxe_mr_priv *mr = roxe_mr_lookup(dev, rkey, true);

	if (!mr || roxe_mr_check(mr, pd, va, len, access))
		return NULL;
	return mr->host + (va - mr->iova);
}

int roxe_sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sge,
		  unsigned num_sge, uint32_t offset, void *buf, uint32_t len, bool to_sges)
{
	uint8_t *p = buf;
	unsigned i = 0;

	/* Skip whole SGEs before offset. */
	while (i < num_sge && offset >= sge[i].length) {
		offset -= sge[i].length;
		i++;
	}
	for (; len && i < num_sge; i++, offset = 0) {
		uint32_t n = sge[i].length - offset;
		struct roxe_mr_priv *mr;
		int err;

		if (n > len)
			n = len;
		mr = roxe_mr_lookup(dev, sge[i].lkey, false);
		if (!mr)
			return -EACCES;
		err = roxe_mr_check(mr, pd, sge[i].addr + offset, n,
				    to_sges ? IBV_ACCESS_LOCAL_WRITE : 0);
		if (err)
			return err;
		if (to_sges)
			memcpy(mr->host + (sge[i].addr + offset - mr->iova), p, n);
		else
			memcpy(p, mr->host + (sge[i].addr + offset - mr->iova), n);
		p += n;
		len -= n;
	}
	return len ? -ERANGE : 0;
}
