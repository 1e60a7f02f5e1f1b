// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory windows (IBA 10.6.7), as rxe: type 1 windows are bound by
 * roxe_bind_mw(), which posts a BIND_MW WQE to the QP it names (as rxe's
 * provider turns ibv_bind_mw() into one); type 2 windows by the
 * application's own IBV_WR_BIND_MW WRs on an RC or UC QP, to which they
 * are then bound. Either way the engine executes the WQE in order
 * (core/mw.c). A window's key is (index << 8 | its 8-bit key), its
 * indices above every MR's (roxe_key_is_mw).
 */
#include <errno.h>
#include <stdlib.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"

static int mw_new(struct roxe_pd *pd, uint32_t key, enum ibv_mw_type type, struct ibv_mw **out)
{
	struct roxe_device *dev;
	struct roxe_mw_priv *mw;
	uint32_t i, tries;

	if (!pd || !out || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2))
		return -EINVAL;
	dev = pd->dev;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	mw->pd = pd;
	mw->type = type;
	/* rxe: a type 1 window is valid (bound to nothing), type 2 free */
	mw->state = type == IBV_MW_TYPE_1 ? ROXE_MW_VALID : ROXE_MW_FREE;
	pthread_spin_init(&mw->write_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_lock(&dev->lock);
	if (key) {
		i = (key >> 8) - ROXE_MW_INDEX_BASE;
		if (!roxe_key_is_mw(key) || atomic_load(&dev->mws[i])) {
			pthread_mutex_unlock(&dev->lock);
			pthread_spin_destroy(&mw->write_lock);
			free(mw);
			return -EEXIST;
		}
	} else {
		for (tries = 0; tries < ROXE_MAX_MW; tries++) {
			i = dev->next_mw++ % ROXE_MAX_MW;
			if (!atomic_load(&dev->mws[i]))
				break;
		}
		if (tries == ROXE_MAX_MW) {
			pthread_mutex_unlock(&dev->lock);
			pthread_spin_destroy(&mw->write_lock);
			free(mw);
			return -ENOMEM;
		}
		key = (ROXE_MW_INDEX_BASE + i) << 8 | dev->key_gen++;
	}
	mw->rkey = key;
	mw->ibv.rkey = key;
	mw->ibv.type = type;
	mw->ibv.handle = key;
	atomic_fetch_add(&pd->users, 1);
	atomic_store_explicit(&dev->mws[i], mw, memory_order_release);
	pthread_mutex_unlock(&dev->lock);
	*out = &mw->ibv;
	return 0;
}

int roxe_alloc_mw(struct roxe_pd *pd, enum ibv_mw_type type, struct ibv_mw **mw)
{
	return mw_new(pd, 0, type, mw);
}

int roxe_served_mw_add(struct roxe_pd *pd, uint32_t key, enum ibv_mw_type type,
		       struct ibv_mw **mw)
{
	if (!key)
		return -EINVAL;
	return mw_new(pd, key, type, mw);
}

bool roxe_served_key_is_mw(uint32_t key)
{
	return roxe_key_is_mw(key);
}

int roxe_dealloc_mw(struct ibv_mw *ibv)
{
	struct roxe_mw_priv *mw = (struct roxe_mw_priv *)ibv;
	struct roxe_device *dev;

	if (!ibv)
		return -EINVAL;
	dev = mw->pd->dev;
	/* dev->lock: roxe_mw_qp_gone walks the table under it */
	pthread_mutex_lock(&dev->lock);
	atomic_store(&dev->mws[(mw->rkey >> 8) - ROXE_MW_INDEX_BASE], NULL);
	pthread_mutex_unlock(&dev->lock);
	/* An engine may be binding it or copying through it: wait it out. */
	roxe_dev_quiesce(dev);
	/* as rxe: dealloc while bound is allowed; the MR is free again */
	roxe_mw_unbind(mw);
	atomic_fetch_sub(&mw->pd->users, 1);
	pthread_spin_destroy(&mw->write_lock);
	free(mw);
	return 0;
}

int roxe_bind_mw(struct roxe_qp *qp, struct ibv_mw *mw, const struct ibv_mw_bind *bind)
{
	const struct ibv_mw_bind_info *bi;
	struct ibv_send_wr wr = { 0 }, *bad;
	int err;

	if (!qp || !mw || !bind)
		return -EINVAL;
	bi = &bind->bind_info;
	/* libibverbs' and rxe's provider's checks */
	if (mw->type != IBV_MW_TYPE_1)
		return -EINVAL;
	if (!bi->mr && (bi->addr || bi->length))
		return -EINVAL;
	if (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return -EINVAL;
	wr.opcode = IBV_WR_BIND_MW;
	wr.wr_id = bind->wr_id;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = *bi;
	err = roxe_post_send(qp, &wr, &bad);
	if (err)
		return err;
	/* as rxe's provider: an error completion leaves the window's key
	 * as it was; the application then undoes this */
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
