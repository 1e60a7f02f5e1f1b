// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory regions: user buffers pinned with ib_umem_get() so roxed can reach
 * them for as long as the MR lives (mapping them into roxed through
 * /dev/roxe is still to come; roxed learns key, PD, access and range). Keys are
 * an index (the upper 24 bits) and a generation byte, so a stale key of a
 * reused index does not match.
 */
#include <rdma/ib_umem.h>
#include <linux/slab.h>
#include "roxe.h"

struct ib_mr *roxe_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct roxe_dev *rdev = to_rdev(ibpd->device);
	struct roxe_kabi_cmd cmd = {};
	struct roxe_mr *mr;
	int err, idx;
	u32 key;

	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		       IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	idx = ida_alloc_range(&rdev->mr_ida, 1, ROXE_MAX_MR - 1, GFP_KERNEL);
	if (idx < 0) {
		err = idx;
		goto free_mr;
	}
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto free_idx;
	}
	mr->index = idx;
	mr->access = access;
	key = (idx << 8) | (atomic_inc_return(&rdev->key_gen) & 0xff);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	cmd.op = ROXE_KOP_REG_MR;
	cmd.mr.key = key;
	cmd.mr.pdn = container_of(ibpd, struct roxe_pd, ibpd)->pdn;
	cmd.mr.access = access;
	cmd.mr.iova = iova;
	cmd.mr.length = length;
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DEREG_MR, key);
	if (err)
		goto release;
	return &mr->ibmr;

release:
	ib_umem_release(mr->umem);
free_idx:
	ida_free(&rdev->mr_ida, idx);
free_mr:
	kfree(mr);
	return ERR_PTR(err);
}

int roxe_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct roxe_mr *mr = to_rmr(ibmr);

	roxe_chan_destroy(to_rdev(ibmr->device), ROXE_KOP_DEREG_MR, ibmr->lkey);
	ib_umem_release(mr->umem);
	ida_free(&to_rdev(ibmr->device)->mr_ida, mr->index);
	kfree(mr);
	return 0;
}
