// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory windows as engines use them: binding one (a BIND_MW WQE, whether
 * roxe_bind_mw() posted it for a type 1 window or the application did for
 * a type 2 one), invalidating a type 2 window (LOCAL_INV, a peer's
 * SEND_WITH_INV), with rxe's rules (IBA 10.6.7). Remote access through a
 * window is core/mr.c's (roxe_mr_map). Writers hold the window's
 * write_lock and keep gen odd while they rewrite the binding.
 */
#include <errno.h>
#include "core/core.h"

/* What a window may grant (rxe: an MR's rights and zero-based). */
#define MW_ACCESS	(ROXE_MR_ACCESS | IBV_ACCESS_ZERO_BASED)

static void mw_write_begin(struct roxe_mw_priv *mw)
{
	pthread_spin_lock(&mw->write_lock);
	atomic_fetch_add_explicit(&mw->gen, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void mw_write_end(struct roxe_mw_priv *mw)
{
	atomic_fetch_add_explicit(&mw->gen, 1, memory_order_release);
	pthread_spin_unlock(&mw->write_lock);
}

static struct roxe_mw_priv *mw_lookup(struct roxe_device *dev, uint32_t key)
{
	if (!roxe_key_is_mw(key))
		return NULL;
	return atomic_load_explicit(&dev->mws[(key >> 8) - ROXE_MW_INDEX_BASE],
				    memory_order_acquire);
}

/* Drop the binding's MR and QP (under the write lock). */
static void mw_clear(struct roxe_mw_priv *mw, enum roxe_mw_state state)
{
	if (mw->mr)
		atomic_fetch_sub(&mw->mr->num_mw, 1);
	mw->mr = NULL;
	mw->qpn = 0;
	mw->access = 0;
	mw->addr = 0;
	mw->length = 0;
	mw->state = state;
}

/* rxe_check_bind_mw's rules, in its order, and the PD rule for both types; 0 or -EINVAL. */
static int bind_check(const struct roxe_mw_priv *mw, const struct roxe_pd *qp_pd,
		      const struct roxe_mr_priv *mr, uint64_t addr, uint64_t len, uint32_t access)
{
	/* C10-72: the QP and the window in one PD, for both types. rxe
	 * checks it for type 2 only; a type 1 window's keys are guessable,
	 * so without it any QP could bind, widen or unbind another
	 * process's window (mw_test: type1_bind_from_another_pd). */
	if (qp_pd != mw->pd)
		return -EINVAL;
	if (mw->type == IBV_MW_TYPE_1) {
		if (mw->state != ROXE_MW_VALID)
			return -EINVAL;
		if (access & IBV_ACCESS_ZERO_BASED)	/* o10-36.2.2 */
			return -EINVAL;
	} else {
		if (mw->state != ROXE_MW_FREE)		/* o10-37.2.30 */
			return -EINVAL;
		if (!mr || !len)			/* o10-37.2.40 */
			return -EINVAL;
	}
	if (!mr)
		return 0;
	/* IBA 10.6.7.2.1: window and MR in one PD (rxe's provider checks it) */
	if (mr->pd != mw->pd)
		return -EINVAL;
	if (!(mr->pub.access & IBV_ACCESS_MW_BIND))	/* C10-73 */
		return -EINVAL;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->pub.access & IBV_ACCESS_LOCAL_WRITE))	/* C10-74 */
		return -EINVAL;
	/* C10-75: inside the MR */
	if (access & IBV_ACCESS_ZERO_BASED)
		return len > mr->pub.length ? -EINVAL : 0;
	if (addr < mr->iova || addr + len < addr || addr + len > mr->iova + mr->pub.length)
		return -EINVAL;
	return 0;
}

int roxe_mw_bind(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		 const struct rxe_send_wqe *w)
{
	uint32_t mw_rkey = w->wr.wr.mw.mw_rkey, mr_lkey = w->wr.wr.mw.mr_lkey;
	uint32_t access = w->wr.wr.mw.access, new_rkey = w->wr.wr.mw.rkey;
	uint64_t addr = w->wr.wr.mw.addr, len = w->wr.wr.mw.length;
	struct roxe_mw_priv *mw = mw_lookup(dev, mw_rkey);
	struct roxe_mr_priv *mr = NULL;
	int err;

	if (!mw || mw->rkey != mw_rkey)
		return IBV_WC_MW_BIND_ERR;
	if (len) {
		mr = roxe_mr_lookup(dev, mr_lkey, ROXE_LOOKUP_LOCAL);
		/* a fast-registration MR's pages may go at any invalidation */
		if (!mr || mr->window)
			return IBV_WC_MW_BIND_ERR;
	}
	if (access & ~MW_ACCESS)
		return IBV_WC_MW_BIND_ERR;
	mw_write_begin(mw);
	/* Checked under the lock: the window may have changed since. */
	err = mw->rkey != mw_rkey ? -EINVAL : bind_check(mw, pd, mr, addr, len, access);
	/* Count the binding before looking for a dereg under way, which
	 * sets dying before it counts bindings: one of us sees the other. */
	if (!err && mr) {
		atomic_fetch_add(&mr->num_mw, 1);
		if (atomic_load(&mr->dying)) {
			atomic_fetch_sub(&mr->num_mw, 1);
			err = -EINVAL;
		}
	}
	if (!err) {
		mw_clear(mw, ROXE_MW_VALID);
		/* the consumer's 8-bit key (IBA 10.6.7.2.3) */
		mw->rkey = (mw->rkey & ~0xffu) | (new_rkey & 0xff);
		mw->access = access;
		mw->addr = addr;
		mw->length = len;
		mw->mr = mr;
		if (mw->type == IBV_MW_TYPE_2)
			mw->qpn = qpn;
	}
	mw_write_end(mw);
	return err ? IBV_WC_MW_BIND_ERR : IBV_WC_SUCCESS;
}

int roxe_mw_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		       uint32_t key, enum roxe_lookup type)
{
	struct roxe_mw_priv *mw = mw_lookup(dev, key);
	int err = 0;

	if (!mw)
		return -EINVAL;
	mw_write_begin(mw);
	/* o10-37.2.26: type 1 windows are not invalidated; C10-76.2.1: the
	 * window in the QP's PD; remotely only the QP it is bound to (IBA
	 * 9.4.1.1.2). */
	if (mw->rkey != key || mw->type != IBV_MW_TYPE_2 || mw->state != ROXE_MW_VALID ||
	    mw->pd != pd || (type == ROXE_LOOKUP_REMOTE && mw->qpn != qpn))
		err = -EINVAL;
	else
		mw_clear(mw, ROXE_MW_FREE);
	mw_write_end(mw);
	return err;
}

int roxe_key_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
			uint32_t key, enum roxe_lookup type)
{
	return roxe_key_is_mw(key) ? roxe_mw_invalidate(dev, pd, qpn, key, type) :
				     roxe_mr_invalidate(dev, pd, key, type);
}

void roxe_mw_unbind(struct roxe_mw_priv *mw)
{
	mw_write_begin(mw);
	mw_clear(mw, mw->type == IBV_MW_TYPE_2 ? ROXE_MW_FREE : ROXE_MW_VALID);
	mw_write_end(mw);
}

void roxe_mw_qp_gone(struct roxe_device *dev, uint32_t qpn)
{
	/* dev->lock: no window is freed meanwhile (roxe_dealloc_mw) */
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < ROXE_MAX_MW; i++) {
		struct roxe_mw_priv *mw = atomic_load(&dev->mws[i]);

		if (!mw || mw->type != IBV_MW_TYPE_2)
			continue;
		mw_write_begin(mw);
		if (mw->state == ROXE_MW_VALID && mw->qpn == qpn)
			mw_clear(mw, ROXE_MW_FREE);
		mw_write_end(mw);
	}
	pthread_mutex_unlock(&dev->lock);
}

void roxe_mw_mr_gone(struct roxe_device *dev, const struct roxe_mr *mr)
{
	atomic_store(&((struct roxe_mr_priv *)mr)->dying, true);
	pthread_mutex_lock(&dev->lock);
	for (uint32_t i = 0; i < ROXE_MAX_MW; i++) {
		struct roxe_mw_priv *mw = atomic_load(&dev->mws[i]);

		if (!mw)
			continue;
		mw_write_begin(mw);
		if (mw->mr && &mw->mr->pub == mr)
			mw_clear(mw, mw->type == IBV_MW_TYPE_2 ? ROXE_MW_FREE : ROXE_MW_VALID);
		mw_write_end(mw);
	}
	pthread_mutex_unlock(&dev->lock);
}
