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

/* Writers of a fast-registration MR: gen odd from begin to end. */
static void mr_write_begin(struct roxe_mr_priv *mr)
{
	pthread_spin_lock(&mr->write_lock);
	atomic_fetch_add_explicit(&mr->gen, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void mr_write_end(struct roxe_mr_priv *mr)
{
	atomic_fetch_add_explicit(&mr->gen, 1, memory_order_release);
	pthread_spin_unlock(&mr->write_lock);
}

int roxe_mr_fast_reg(struct roxe_qp *qp, const struct rxe_send_wqe *w)
{
	uint32_t key = w->wr.wr.rdma.rkey, access = w->wr.wr.rdma.reserved;
	uint64_t len = ROXE_KABI_REG_MR_LEN(w->wr.wr.rdma.remote_addr);
	uint32_t off = ROXE_KABI_REG_MR_OFF(w->wr.wr.rdma.remote_addr);
	struct roxe_mr_priv *mr;
	int st = IBV_WC_SUCCESS;

	mr = atomic_load_explicit(&qp->dev->mrs[(key >> 8) % ROXE_MAX_MR], memory_order_acquire);
	if (!mr || !mr->window || mr->pd != qp->pd || (access & ~KNOWN_ACCESS) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_LOC_PROT_ERR;
	if (off >= 4096 || len > mr->window_bytes - off || w->iova + len < w->iova)
		return IBV_WC_LOC_LEN_ERR;
	mr_write_begin(mr);
	/* IBA 10.6.3.6: only an invalid MR is registered */
	if (atomic_load(&mr->valid) || mr->window_fn(mr->window_ctx, key, true)) {
		st = IBV_WC_LOC_PROT_ERR;
		goto out;
	}
	mr->iova = w->iova;
	mr->host = mr->window + off;
	mr->pub.addr = (void *)(uintptr_t)w->iova;
	mr->pub.length = len;
	mr->pub.access = access;
	mr->pub.lkey = key;
	mr->pub.rkey = (access & REMOTE_ACCESS) ? key : 0;
	atomic_store_explicit(&mr->valid, true, memory_order_release);
out:
	mr_write_end(mr);
	return st;
}

int roxe_mr_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t key,
		       bool remote)
{
	struct roxe_mr_priv *mr = roxe_mr_lookup(dev, key, remote);
	int err = 0;

	if (!mr || mr->pd != pd || !mr->window)
		return -EINVAL;
	mr_write_begin(mr);
	/* Checked again under the lock: two QPs may invalidate it at once. */
	if (!atomic_load(&mr->valid) || (remote ? mr->pub.rkey : mr->pub.lkey) != key) {
		err = -EINVAL;
	} else {
		atomic_store(&mr->valid, false);
		mr->window_fn(mr->window_ctx, mr->pub.lkey, false);
	}
	mr_write_end(mr);
	return err;
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
	pthread_spin_destroy(&mr->write_lock);
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

/* Map [va, va+len) of mr (looked up by key) under one registration. */
static void *mr_map(const struct roxe_mr_priv *mr, const struct roxe_pd *pd, uint64_t va,
		    uint64_t len, unsigned access, struct roxe_mr_access *acc)
{
	uint32_t gen = atomic_load_explicit(&mr->gen, memory_order_acquire);
	void *p;

	if ((gen & 1) || roxe_mr_check(mr, pd, va, len, access))
		return NULL;
	p = mr->host + (va - mr->iova);
	atomic_thread_fence(memory_order_acquire);
	/* a registration changing under the check: fields may be torn */
	if (atomic_load_explicit(&mr->gen, memory_order_relaxed) != gen ||
	    !atomic_load_explicit(&mr->valid, memory_order_relaxed))
		return NULL;
	acc->mr = mr;
	acc->gen = gen;
	return p;
}

void *roxe_mr_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t rkey,
		  uint64_t va, uint64_t len, unsigned access, struct roxe_mr_access *acc)
{
	struct roxe_mr_priv *mr = roxe_mr_lookup(dev, rkey, true);

	return mr ? mr_map(mr, pd, va, len, access, acc) : NULL;
}

/* Called once the bytes are copied: an invalidation (and the window
 * emptied under us: roxe.ko then maps a scrap page there, never the
 * ULP's) or a new registration meanwhile turns the access into an error. */
bool roxe_mr_access_ok(const struct roxe_mr_access *acc)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&acc->mr->gen, memory_order_relaxed) == acc->gen;
}

int roxe_mr_copy(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t rkey, uint64_t va,
		 void *buf, uint32_t len, unsigned access, bool to_mr)
{
	struct roxe_mr_access acc;
	void *host;

	if (!len)
		return 0;
	host = roxe_mr_map(dev, pd, rkey, va, len, access, &acc);
	if (!host)
		return -EACCES;
	if (to_mr)
		memcpy(host, buf, len);
	else
		memcpy(buf, host, len);
	return roxe_mr_access_ok(&acc) ? 0 : -EACCES;
}

/* One SGE, each field read once: the list may be in an application's
 * ring, rewritten while we read it. */
static struct rxe_sge sge_read(const struct rxe_sge *s)
{
	return (struct rxe_sge){
		.addr = __atomic_load_n(&s->addr, __ATOMIC_RELAXED),
		.length = __atomic_load_n(&s->length, __ATOMIC_RELAXED),
		.lkey = __atomic_load_n(&s->lkey, __ATOMIC_RELAXED),
	};
}

int roxe_sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sgl,
		  unsigned num_sge, uint32_t offset, void *buf, uint32_t len, bool to_sges)
{
	uint8_t *p = buf;
	unsigned i = 0;

	for (; len && i < num_sge; i++) {
		struct rxe_sge sge = sge_read(&sgl[i]);
		struct roxe_mr_access acc;
		struct roxe_mr_priv *mr;
		uint8_t *host;
		uint32_t n;

		if (offset >= sge.length) {	/* whole SGEs before offset */
			offset -= sge.length;
			continue;
		}
		n = sge.length - offset;
		if (n > len)
			n = len;
		mr = roxe_mr_lookup(dev, sge.lkey, false);
		if (!mr)
			return -EACCES;
		host = mr_map(mr, pd, sge.addr + offset, n, to_sges ? IBV_ACCESS_LOCAL_WRITE : 0,
			      &acc);
		if (!host)
			return roxe_mr_check(mr, pd, sge.addr + offset, n,
					     to_sges ? IBV_ACCESS_LOCAL_WRITE : 0) ?: -EACCES;
		if (to_sges)
			memcpy(host, p, n);
		else
			memcpy(p, host, n);
		if (!roxe_mr_access_ok(&acc))
			return -EACCES;
		p += n;
		len -= n;
		offset = 0;
	}
	return len ? -ERANGE : 0;
}
