// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Protection domains and memory regions.
 *
 * A key is (table index << 8 | generation): a stale key of a deregistered
 * MR whose slot was reused does not match the new MR. lkey and rkey are the
 * same number; the rkey is valid only when remote access was granted.
 * Engines look keys up without locks (see core/core.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"

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
	mr->pub.rkey = (mr->pub.access & ROXE_REMOTE_ACCESS) ? key : 0;
	mr->ibv.addr = mr->pub.addr;
	mr->ibv.length = mr->pub.length;
	mr->ibv.lkey = mr->pub.lkey;
	mr->ibv.rkey = mr->pub.rkey;
	atomic_fetch_add(&pd->users, 1);
	atomic_store_explicit(&dev->mrs[idx], mr, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

/* What engines must know of an MR before they can see it. */
enum mr_kind {
	MR_PLAIN,
	MR_UMEM,	/* in the UMEM's reserve (roxe_alloc_umem_mr) */
	MR_ODP,		/* roxe.ko's on-demand paging (core/odp.c) */
};

static int mr_new(struct roxe_pd *pd, uint32_t key, uint64_t iova, void *host, size_t length,
		  unsigned access, enum mr_kind kind, struct roxe_mr **out)
{
	struct roxe_mr_priv *mr;
	int err;

	/* An embedded MR pins nothing: the engine touches the application's
	 * pages in its own process and faults them in as it goes. ON_DEMAND
	 * asks for what it already is, and is kept in mr->access. */
	if (!pd || !out || (!host && length) ||
	    (access & ~(unsigned)(ROXE_MR_ACCESS | IBV_ACCESS_ON_DEMAND)))
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
	mr->umem = kind == MR_UMEM;
	mr->odp = kind == MR_ODP;
	atomic_store(&mr->valid, true);
	pthread_spin_init(&mr->write_lock, PTHREAD_PROCESS_PRIVATE);
	err = mr_publish(pd, mr, key);
	if (err) {
		pthread_spin_destroy(&mr->write_lock);
		free(mr);
		return err;
	}
	*out = &mr->pub;
	return 0;
}

int roxe_reg_mr(struct roxe_pd *pd, void *addr, size_t length, unsigned access,
		struct roxe_mr **out)
{
	return mr_new(pd, 0, (uintptr_t)addr, addr, length, access, MR_PLAIN, out);
}

int roxe_alloc_umem_mr(struct roxe_pd *pd, size_t length, unsigned access,
		       struct roxe_mr **out)
{
	struct roxe_device *dev;
	uint8_t *p;
	int err;

	if (!pd || !out || !length)
		return -EINVAL;
	dev = pd->dev;
	if (!dev->afxdp || !dev->umem_mr_bytes)
		return -EOPNOTSUPP;
	p = roxe_afxdp_reserve_alloc(dev->afxdp, length);
	if (!p)
		return -errno;
	/* a chunk may come back with an earlier MR's bytes */
	memset(p, 0, length);
	err = mr_new(pd, 0, (uintptr_t)p, p, length, access, MR_UMEM, out);
	if (err)
		roxe_afxdp_reserve_free(dev->afxdp, p, length);
	return err;
}

int roxe_served_mr_add(struct roxe_pd *pd, uint32_t key, uint64_t iova, size_t length,
		       unsigned access, void *host, struct roxe_mr **out)
{
	int err;

	if (!key)
		return -EINVAL;
	/* roxe.ko's ODP: its pages raise signals roxed must catch */
	if ((access & IBV_ACCESS_ON_DEMAND) && (err = roxe_odp_init()))
		return err;
	return mr_new(pd, key, iova, host, length, access,
		      (access & IBV_ACCESS_ON_DEMAND) ? MR_ODP : MR_PLAIN, out);
}

int roxe_served_mr_fast(struct roxe_pd *pd, uint32_t key, void *window, uint64_t window_bytes,
			roxe_mr_window_fn *fn, void *ctx, struct roxe_mr **out)
{
	struct roxe_mr_priv *mr;
	int err;

	if (!key || !window || !window_bytes || !fn)
		return -EINVAL;
	err = mr_new(pd, key, 0, window, 0, 0, MR_PLAIN, out);
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

struct ibv_mr *roxe_mr_ibv(struct roxe_mr *pub)
{
	return pub ? &((struct roxe_mr_priv *)pub)->ibv : NULL;
}

int roxe_dereg_mr(struct roxe_mr *pub)
{
	struct roxe_mr_priv *mr = (struct roxe_mr_priv *)pub;
	struct roxe_device *dev;

	if (!pub)
		return -EINVAL;
	/* As rxe: not while memory windows are bound to it. An engine
	 * binding one now counts it before it looks at dying. */
	atomic_store(&mr->dying, true);
	if (atomic_load(&mr->num_mw)) {
		atomic_store(&mr->dying, false);
		return -EINVAL;
	}
	dev = mr->pd->dev;
	atomic_store(&dev->mrs[pub->lkey >> 8], NULL);
	/* An engine may be copying into it right now: wait it out. */
	roxe_dev_quiesce(dev);
	atomic_fetch_sub(&mr->pd->users, 1);
	pthread_spin_destroy(&mr->write_lock);
	/* No engine reads it any more; a chunk the kernel still has a
	 * descriptor of is not handed out again before it comes back. */
	if (mr->umem)
		roxe_afxdp_reserve_free(dev->afxdp, mr->host, pub->length);
	free(mr);
	return 0;
}

void roxe_served_mr_del(struct roxe_mr *pub)
{
	struct roxe_device *dev;

	if (!pub || roxe_dereg_mr(pub) != -EINVAL)
		return;
	dev = ((struct roxe_mr_priv *)pub)->pd->dev;
	roxe_mw_mr_gone(dev, pub);
	roxe_dev_quiesce(dev);		/* binds under way are over */
	roxe_mw_mr_gone(dev, pub);	/* and unbound */
	roxe_dereg_mr(pub);
}

