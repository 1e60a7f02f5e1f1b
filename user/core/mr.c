// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory regions as engines use them: look a key up (without locks, see
 * core.h), check an access against the MR, copy to or from it, and the
 * fast-registration MR's life (REG_MR, invalidation) under its seqlock.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"

/*
 * A REG_MR puts pages behind a fast-registration MR's window again, at the
 * address its earlier registrations used. An engine that mapped the window
 * under one of them and is still copying (preempted mid-copy, say) would
 * then write into the new pages, which the new key's owner may already
 * have filled, before its check afterwards (roxe_mr_access_ok) fails. So
 * each engine says, in its slot of dev->window_users, which such MR it is
 * copying to or from, and REG_MR waits until no other engine is in one of
 * this MR's accesses begun under an earlier registration.
 */
static __thread struct roxe_window_user *turn_slot __attribute__((tls_model("initial-exec")));

/* A copy takes microseconds; an engine kept from the CPU longer than this
 * makes the REG_MR fail rather than wait on (dev->window_wait_ns, when
 * set: tests). */
#define WINDOW_WAIT_NS	2000000000ull

void roxe_mr_turn_begin(struct roxe_device *dev, unsigned engine)
{
	turn_slot = engine < ROXE_MAX_ENGINES ? &dev->window_users[engine] : NULL;
}

void roxe_mr_turn_end(void)
{
	if (turn_slot)
		atomic_store_explicit(&turn_slot->mr, NULL, memory_order_release);
	turn_slot = NULL;
}

/* Before the registration is read: a REG_MR that comes after it sees the
 * slot (the fences pair with window_users_wait's). */
static void window_access_begin(const struct roxe_mr_priv *mr)
{
	if (!mr->window || !turn_slot)
		return;
	atomic_store_explicit(&turn_slot->mr, mr, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
}

/* After the last byte: release, so REG_MR's remap comes after the copy. */
static void window_access_end(const struct roxe_mr_priv *mr)
{
	if (mr->window && turn_slot)
		atomic_store_explicit(&turn_slot->mr, NULL, memory_order_release);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* With mr's gen odd (no access starts under it any more): 0 once no other
 * engine is inside an access to mr, -ETIMEDOUT after the bound. A
 * slot names mr only for an access that looked the MR up while it was
 * valid, so a peer's stream of accesses cannot keep us here. */
static int window_users_wait(struct roxe_device *dev, const struct roxe_mr_priv *mr)
{
	uint64_t start = 0, waited, bound = dev->window_wait_ns ? dev->window_wait_ns : WINDOW_WAIT_NS;

	atomic_thread_fence(memory_order_seq_cst);
	for (unsigned i = 0; i < dev->nengines && i < ROXE_MAX_ENGINES; i++) {
		struct roxe_window_user *u = &dev->window_users[i];

		for (unsigned spin = 0; u != turn_slot &&
		     atomic_load_explicit(&u->mr, memory_order_acquire) == mr; spin++) {
			if (spin < 64)
				continue;
			if (!start)
				start = mono_ns();
			waited = mono_ns() - start;
			if (waited > bound)
				return -ETIMEDOUT;
			if (waited < 1000000)
				sched_yield();	/* it may be waiting for our CPU */
			else
				usleep(20);
		}
	}
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

int roxe_mr_fast_reg(struct roxe_device *dev, const struct roxe_pd *pd,
		     const struct rxe_send_wqe *w)
{
	uint32_t key = w->wr.wr.rdma.rkey, access = w->wr.wr.rdma.reserved;
	uint64_t len = ROXE_KABI_REG_MR_LEN(w->wr.wr.rdma.remote_addr);
	uint32_t off = ROXE_KABI_REG_MR_OFF(w->wr.wr.rdma.remote_addr);
	struct roxe_mr_priv *mr;
	int st = IBV_WC_SUCCESS;

	mr = atomic_load_explicit(&dev->mrs[(key >> 8) % ROXE_MAX_MR], memory_order_acquire);
	if (!mr || !mr->window || mr->pd != pd || (access & ~ROXE_KNOWN_ACCESS) ||
	    ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IBV_ACCESS_LOCAL_WRITE)))
		return IBV_WC_LOC_PROT_ERR;
	if (off >= 4096 || len > mr->window_bytes - off || w->iova + len < w->iova)
		return IBV_WC_LOC_LEN_ERR;
	mr_write_begin(mr);
	/* IBA 10.6.3.6: only an invalid MR is registered */
	if (atomic_load(&mr->valid) || window_users_wait(dev, mr) ||
	    mr->window_fn(mr->window_ctx, key, true)) {
		st = IBV_WC_LOC_PROT_ERR;
		goto out;
	}
	mr->iova = w->iova;
	mr->host = mr->window + off;
	mr->pub.addr = (void *)(uintptr_t)w->iova;
	mr->pub.length = len;
	mr->pub.access = access;
	mr->pub.lkey = key;
	mr->pub.rkey = (access & ROXE_REMOTE_ACCESS) ? key : 0;
	atomic_store_explicit(&mr->valid, true, memory_order_release);
out:
	mr_write_end(mr);
	return st;
}

static uint32_t mr_key(const struct roxe_mr_priv *mr, enum roxe_lookup type)
{
	return type == ROXE_LOOKUP_REMOTE ? mr->pub.rkey : mr->pub.lkey;
}

int roxe_mr_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t key,
		       enum roxe_lookup type)
{
	struct roxe_mr_priv *mr = roxe_mr_lookup(dev, key, type);
	int err = 0;

	if (!mr || mr->pd != pd || !mr->window)
		return -EINVAL;
	mr_write_begin(mr);
	/* Checked again under the lock: two QPs may invalidate it at once. */
	if (!atomic_load(&mr->valid) || mr_key(mr, type) != key) {
		err = -EINVAL;
	} else {
		atomic_store(&mr->valid, false);
		mr->window_fn(mr->window_ctx, mr->pub.lkey, false);
	}
	mr_write_end(mr);
	return err;
}

struct roxe_mr_priv *roxe_mr_lookup(struct roxe_device *dev, uint32_t key,
				    enum roxe_lookup type)
{
	struct roxe_mr_priv *mr;

	if (roxe_key_is_mw(key))
		return NULL;
	mr = atomic_load_explicit(&dev->mrs[(key >> 8) % ROXE_MAX_MR], memory_order_acquire);
	if (!mr || mr_key(mr, type) != key || !key)
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
	uint32_t gen;
	void *p;

	window_access_begin(mr);
	gen = atomic_load_explicit(&mr->gen, memory_order_acquire);
	if ((gen & 1) || roxe_mr_check(mr, pd, va, len, access))
		goto fail;
	p = mr->host + (va - mr->iova);
	atomic_thread_fence(memory_order_acquire);
	/* a registration changing under the check: fields may be torn */
	if (atomic_load_explicit(&mr->gen, memory_order_relaxed) != gen ||
	    !atomic_load_explicit(&mr->valid, memory_order_relaxed))
		goto fail;
	acc->mr = mr;
	acc->gen = gen;
	acc->mw = NULL;
	return p;
fail:
	window_access_end(mr);
	return NULL;
}

/*
 * Through a window: its binding read under its seqlock, then the bytes of
 * its MR. The window's own rights replace the MR's remote ones (IBA
 * 10.6.7.2; its bind checked the MR allows them); the range is the
 * window's, which its bind kept inside the MR.
 */
static void *mw_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		    uint32_t rkey, uint64_t va, uint64_t len, unsigned access,
		    struct roxe_mr_access *acc)
{
	struct roxe_mw_priv *mw = atomic_load_explicit(
		&dev->mws[(rkey >> 8) - ROXE_MW_INDEX_BASE], memory_order_acquire);
	const struct roxe_mr_priv *mr;
	uint32_t gen;
	void *p;

	if (!mw)
		return NULL;
	gen = atomic_load_explicit(&mw->gen, memory_order_acquire);
	if ((gen & 1) || mw->rkey != rkey || mw->state != ROXE_MW_VALID || mw->pd != pd ||
	    !mw->length || !mw->mr || (mw->type == IBV_MW_TYPE_2 && mw->qpn != qpn) ||
	    (mw->access & access) != access)
		return NULL;
	if (mw->access & IBV_ACCESS_ZERO_BASED) {
		if (va > mw->length || len > mw->length - va)
			return NULL;
		va += mw->addr;
	} else if (va < mw->addr || va + len < va || va + len > mw->addr + mw->length) {
		return NULL;
	}
	mr = mw->mr;
	atomic_thread_fence(memory_order_acquire);
	/* a bind or an invalidation under the check: fields may be torn */
	if (atomic_load_explicit(&mw->gen, memory_order_relaxed) != gen)
		return NULL;
	/* The MR stays while a binding names it (its dereg waits for none,
	 * and for engines to pass a quiescent point). */
	p = mr_map(mr, pd, va, len, 0, acc);
	if (!p)
		return NULL;
	acc->mw = mw;
	acc->mw_gen = gen;
	return p;
}

void *roxe_mr_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn, uint32_t rkey,
		  uint64_t va, uint64_t len, unsigned access, struct roxe_mr_access *acc)
{
	struct roxe_mr_priv *mr;

	if (roxe_key_is_mw(rkey))
		return mw_map(dev, pd, qpn, rkey, va, len, access, acc);
	mr = roxe_mr_lookup(dev, rkey, ROXE_LOOKUP_REMOTE);
	return mr ? mr_map(mr, pd, va, len, access, acc) : NULL;
}

int roxe_rkey_check(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		    uint32_t rkey, uint64_t va, uint64_t len, unsigned access)
{
	struct roxe_mr_access acc;

	if (!roxe_mr_map(dev, pd, qpn, rkey, va, len, access, &acc))
		return -EACCES;
	roxe_mr_access_end(&acc);
	return 0;
}

/* Called once the bytes are copied, it ends the access: an invalidation
 * (and the window emptied under us: roxe.ko then maps a scrap page there,
 * never the ULP's) or a new registration meanwhile turns the access into
 * an error; so does a memory window's unbinding or rebinding. */
bool roxe_mr_access_ok(const struct roxe_mr_access *acc)
{
	bool ok;

	atomic_thread_fence(memory_order_acquire);
	ok = (!acc->mw || atomic_load_explicit(&acc->mw->gen, memory_order_relaxed) == acc->mw_gen) &&
	     atomic_load_explicit(&acc->mr->gen, memory_order_relaxed) == acc->gen;
	window_access_end(acc->mr);
	return ok;
}

void roxe_mr_access_end(const struct roxe_mr_access *acc)
{
	window_access_end(acc->mr);
}

/* n bytes between buf and host, an MR's (ROXE_FROM_MR with crc: *crc
 * updated over them as they are copied) */
struct mr_bytes {
	uint8_t			*host, *buf;
	uint32_t		n;
	enum roxe_copy_dir	dir;
	uint32_t		*crc;
};

static void bytes_run(void *arg)
{
	struct mr_bytes *b = arg;

	if (b->dir == ROXE_TO_MR)
		memcpy(b->host, b->buf, b->n);
	else if (b->crc)
		*b->crc = roxe_icrc_update_copy(*b->crc, b->buf, b->host, b->n);
	else
		memcpy(b->buf, b->host, b->n);
}

/* fn(arg), which touches [p, p+len) of mr: an ODP MR's under the guard
 * (odp.c): 0, -EAGAIN (not present yet) or -EACCES (not mapped); any
 * other MR's, 0 (inlined: fn is each caller's own). */
static inline int mr_touch(const struct roxe_mr_priv *mr, const void *p, size_t len,
			   roxe_odp_fn *fn, void *arg)
{
	int err;

	if (!mr->odp) {
		fn(arg);
		return 0;
	}
	err = roxe_odp_touch(p, len, fn, arg);
	return err == -EFAULT ? -EACCES : err;
}

static int mr_bytes(const struct roxe_mr_priv *mr, void *host, void *buf, uint32_t n,
		    enum roxe_copy_dir dir, uint32_t *crc)
{
	struct mr_bytes b = { .host = host, .buf = buf, .n = n, .dir = dir, .crc = crc };

	return mr_touch(mr, host, n, bytes_run, &b);
}

struct mr_atomic {
	uint64_t		*p;
	enum roxe_atomic_op	op;
	uint64_t		a, b, orig;
};

/* Atomic against every engine and the local CPU alike. */
static void atomic_run(void *arg)
{
	struct mr_atomic *m = arg;

	switch (m->op) {
	case ROXE_ATOMIC_CMP_SWAP:
		m->orig = m->a;
		__atomic_compare_exchange_n(m->p, &m->orig, m->b, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		break;
	case ROXE_ATOMIC_FETCH_ADD:
		m->orig = __atomic_fetch_add(m->p, m->a, __ATOMIC_SEQ_CST);
		break;
	case ROXE_ATOMIC_WRITE:
		__atomic_store_n(m->p, m->a, __ATOMIC_RELEASE);
		break;
	}
}

int roxe_mr_atomic(const struct roxe_mr_access *acc, uint64_t *p, enum roxe_atomic_op op,
		   uint64_t a, uint64_t b, uint64_t *orig)
{
	struct mr_atomic m = { .p = p, .op = op, .a = a, .b = b };
	int err = mr_touch(acc->mr, p, sizeof(*p), atomic_run, &m);

	if (!err)
		*orig = m.orig;
	return err;
}

/* crc: from the MR only; updated over what lands in buf */
static int mr_copy(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn, uint32_t rkey,
		   uint64_t va, void *buf, uint32_t len, unsigned access, enum roxe_copy_dir dir,
		   uint32_t *crc)
{
	struct roxe_mr_access acc;
	void *host;
	int err;

	if (!len)
		return 0;
	host = roxe_mr_map(dev, pd, qpn, rkey, va, len, access, &acc);
	if (!host)
		return -EACCES;
	err = mr_bytes(acc.mr, host, buf, len, dir, crc);
	if (err) {
		roxe_mr_access_end(&acc);
		return err;
	}
	return roxe_mr_access_ok(&acc) ? 0 : -EACCES;
}

int roxe_mr_copy(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn, uint32_t rkey,
		 uint64_t va, void *buf, uint32_t len, unsigned access, enum roxe_copy_dir dir)
{
	return mr_copy(dev, pd, qpn, rkey, va, buf, len, access, dir, NULL);
}

int roxe_mr_read_icrc(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		      uint32_t rkey, uint64_t va, void *buf, uint32_t len, unsigned access,
		      uint32_t *crc)
{
	return mr_copy(dev, pd, qpn, rkey, va, buf, len, access, ROXE_FROM_MR, crc);
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

/* crc: from the SGEs only; updated over what lands in buf */
static int sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sgl,
		    unsigned num_sge, uint32_t offset, void *buf, uint32_t len,
		    enum roxe_copy_dir dir, uint32_t *crc)
{
	unsigned access = dir == ROXE_TO_MR ? IBV_ACCESS_LOCAL_WRITE : 0;
	uint8_t *p = buf;
	unsigned i = 0;

	for (; len && i < num_sge; i++) {
		struct rxe_sge sge = sge_read(&sgl[i]);
		struct roxe_mr_access acc;
		struct roxe_mr_priv *mr;
		uint8_t *host;
		uint32_t n;
		int err;

		if (offset >= sge.length) {	/* whole SGEs before offset */
			offset -= sge.length;
			continue;
		}
		n = sge.length - offset;
		if (n > len)
			n = len;
		mr = roxe_mr_lookup(dev, sge.lkey, ROXE_LOOKUP_LOCAL);
		if (!mr)
			return -EACCES;
		host = mr_map(mr, pd, sge.addr + offset, n, access, &acc);
		if (!host)
			return roxe_mr_check(mr, pd, sge.addr + offset, n, access) ?: -EACCES;
		err = mr_bytes(mr, host, p, n, dir, crc);
		if (err) {
			roxe_mr_access_end(&acc);
			return err;
		}
		if (!roxe_mr_access_ok(&acc))
			return -EACCES;
		p += n;
		len -= n;
		offset = 0;
	}
	return len ? -ERANGE : 0;
}

int roxe_sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sgl,
		  unsigned num_sge, uint32_t offset, void *buf, uint32_t len,
		  enum roxe_copy_dir dir)
{
	return sge_copy(dev, pd, sgl, num_sge, offset, buf, len, dir, NULL);
}

int roxe_sge_copy_icrc(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sgl,
		       unsigned num_sge, uint32_t offset, void *buf, uint32_t len, uint32_t *crc)
{
	return sge_copy(dev, pd, sgl, num_sge, offset, buf, len, ROXE_FROM_MR, crc);
}

/* The mapped bytes, if they are a UMEM MR's: *crc over them, 1; else 0. */
static int inplace_read(const uint8_t *p, uint32_t len, struct roxe_mr_access *acc,
			const uint8_t **host, uint32_t *crc, bool *umem)
{
	uint32_t c;

	if (!acc->mr->umem || !crc) {
		*umem = acc->mr->umem;
		roxe_mr_access_end(acc);
		return 0;
	}
	*umem = true;
	c = roxe_icrc_update(*crc, p, len);
	if (!roxe_mr_access_ok(acc))
		return 0;
	*crc = c;
	*host = p;
	return 1;
}

int roxe_sge_inplace(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sgl,
		     unsigned num_sge, uint32_t offset, uint32_t len, const uint8_t **host,
		     uint32_t *crc, bool *umem)
{
	*umem = false;
	for (unsigned i = 0; len && i < num_sge; i++) {
		struct rxe_sge sge = sge_read(&sgl[i]);
		struct roxe_mr_access acc;
		struct roxe_mr_priv *mr;
		uint8_t *p;

		if (offset >= sge.length) {
			offset -= sge.length;
			continue;
		}
		mr = roxe_mr_lookup(dev, sge.lkey, ROXE_LOOKUP_LOCAL);
		if (!mr)
			return 0;
		*umem = mr->umem;
		if (sge.length - offset < len || !crc)
			return 0;	/* across SGEs: copied */
		p = mr_map(mr, pd, sge.addr + offset, len, 0, &acc);
		return p ? inplace_read(p, len, &acc, host, crc, umem) : 0;
	}
	return 0;
}

int roxe_mr_inplace(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		    uint32_t rkey, uint64_t va, uint32_t len, unsigned access,
		    const uint8_t **host, uint32_t *crc, bool *umem)
{
	struct roxe_mr_access acc;
	uint8_t *p;

	*umem = false;
	if (!len)
		return 0;
	p = roxe_mr_map(dev, pd, qpn, rkey, va, len, access, &acc);
	return p ? inplace_read(p, len, &acc, host, crc, umem) : 0;
}
