// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory windows (ibv_alloc_mw, ibv_dealloc_mw), type 1 and 2 as rxe. The
 * module only hands out keys (indices ROXE_MW_INDEX_BASE.., above every
 * MR's, from the same IDA) and tells roxed. Binding and invalidation never
 * come here: the rxe provider posts BIND_MW and LOCAL_INV WQEs to the QP's
 * send queue, which roxed reads and checks itself.
 */
#include "roxe.h"

int roxe_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibmw->device);
	struct roxe_mw *mw = to_rmw(ibmw);
	struct roxe_kabi_cmd cmd = {};
	int idx, err;

	idx = ida_alloc_range(&rdev->mr_ida, ROXE_MW_INDEX_BASE,
			      ROXE_MW_INDEX_BASE + ROXE_MAX_MW - 1, GFP_KERNEL);
	if (idx < 0)
		return idx == -ENOSPC ? -ENOMEM : idx;
	mw->key = ((u32)idx << 8) | (atomic_inc_return(&rdev->key_gen) & 0xff);
	cmd.op = ROXE_KOP_ALLOC_MW;
	cmd.mw.key = mw->key;
	cmd.mw.pdn = roxe_pdn(ibmw->pd);
	cmd.mw.type = ibmw->type;
	/* roxed may have made it after all: it forgets it first */
	err = roxe_chan_call_undo(&rdev->chan, &cmd, ROXE_KOP_DEALLOC_MW, mw->key, true);
	if (err) {
		ida_free(&rdev->mr_ida, idx);
		return err;
	}
	ibmw->rkey = mw->key;
	return 0;
}

int roxe_dealloc_mw(struct ib_mw *ibmw)
{
	struct roxe_dev *rdev = to_rdev(ibmw->device);
	struct roxe_mw *mw = to_rmw(ibmw);

	/* roxed unbinds it (its MR may go then) and forgets it */
	roxe_chan_destroy(rdev, ROXE_KOP_DEALLOC_MW, mw->key);
	roxe_key_free(rdev, mw->key);
	return 0;
}
