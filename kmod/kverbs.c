// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel ULPs' verbs: QPs and CQs created without udata, which the module
 * produces into and consumes from itself, in the same rxe-layout queues
 * roxed serves for applications. post_send, post_recv and poll_cq never
 * sleep: spinlocks, copies and a doorbell (an eventfd signal).
 *
 * roxed cannot reach kernel memory, so a kernel WR's bytes in DMA MRs
 * (get_dma_mr: the PD's local_dma_lkey; kernel virtual addresses, the
 * device has no DMA device: ib_uses_virt_dma()) travel through a bounce
 * ring: pages that roxed maps and knows as an MR of the QP's PD, with
 * local access only, one ring per work queue. post_send copies a SEND's or
 * a WRITE's gather list into it (inline data goes in the WQE instead);
 * poll_cq copies a receive's, a READ's or an atomic's bytes out of it into
 * the ULP's scatter list. A ring is allocated in posting order and freed
 * when the completion that covers a WR is polled (a work queue completes
 * in order, and an unsignaled WR is covered by the next completion), so
 * bytes stay put until their completion is seen. SGEs in fast-reg MRs
 * (fastreg.c) go to roxed as they are: it reaches those pages through the
 * MR's window. Remote access to kernel memory goes through fast
 * registration too: REG_MR and LOCAL_INV WRs carry no bytes.
 *
 * Each WQE carries a cookie instead of the ULP's wr_id: the free-running
 * count of WRs posted on its queue. A completion's cookie names the slot
 * that keeps the ULP's wr_id, scatter list and bounce bytes. A cookie
 * outside the queue's outstanding range (roxed would be wrong) is dropped.
 *
 * The cost, against a device that DMAs from the ULP's pages: one memcpy of
 * every DMA-key payload byte on the CPU that posts (sends) or polls
 * (receives, READs), and the bounce pages: the most bytes each queue ever
 * had outstanding.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_user_verbs.h>
#include "roxe.h"

/* Where the bounce region sits in its MR's address space (roxed's iova). */
#define ROXE_KBOUNCE_IOVA	0x100000000000ULL
#define ROXE_KBOUNCE_ALIGN	64

/* A work queue's bounce ring holds each of its slots' WRs at the largest
 * the QP posts: a UD message is MTU-bounded (a receive has the GRH too);
 * an RC or UC WR, max_sge SGEs of a block-layer segment (64 KiB) each.
 * Its pages come only as posts reach them, so this is roxed's address
 * space and, in memory, the most bytes the queue ever had outstanding.
 * The floor lets an RC message of a few MiB through a small queue; the cap
 * bounds the page array (512 KiB per queue).
 */
#define ROXE_KUD_WR_BYTES	(4096 + 64)
#define ROXE_KSGE_BYTES		SZ_64K
#define ROXE_KBOUNCE_MIN	SZ_4M
#define ROXE_KBOUNCE_MAX	SZ_256M

/* --- DMA MRs: the local keys of kernel SGEs -------------------------------- */

/* What kmrs holds for a DMA MR: its PD, local write and the key's byte. */
static unsigned long kmr_value(u32 pdn, int access, u32 key)
{
	return ((unsigned long)pdn << 9) |
	       (access & IB_ACCESS_LOCAL_WRITE ? 0x100 : 0) | (key & 0xff);
}

static bool kmr_ok(struct roxe_dev *rdev, u32 pdn, u32 lkey, bool write)
{
	void *v = xa_load(&rdev->kmrs, lkey >> 8);	/* RCU: any context */
	unsigned long x;

	if (!xa_is_value(v))
		return false;
	x = xa_to_value(v);
	return (x & 0xff) == (lkey & 0xff) && (x >> 9) == pdn &&
	       (!write || (x & 0x100));
}

/* roxed never hears of a DMA MR: only the module reads kernel memory, and
 * remote access to it is not offered (roxed could not reach it).
 */
struct ib_mr *roxe_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct roxe_dev *rdev = to_rdev(ibpd->device);
	u32 pdn = roxe_pdn(ibpd);
	struct roxe_mr *mr;
	u32 key;
	int err;

	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~IB_ACCESS_LOCAL_WRITE)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = roxe_key_alloc(rdev, &key);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	err = xa_err(xa_store(&rdev->kmrs, key >> 8,
			      xa_mk_value(kmr_value(pdn, access, key)),
			      GFP_KERNEL));
	if (err) {
		roxe_key_free(rdev, key);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->rdev = rdev;
	kref_init(&mr->ref);
	mr->access = access;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = 0;	/* no remote access */
	mr->ibmr.length = U64_MAX;
	return &mr->ibmr;
}

int roxe_dereg_dma_mr(struct roxe_dev *rdev, struct roxe_mr *mr)
{
	xa_erase(&rdev->kmrs, mr->ibmr.lkey >> 8);
	roxe_key_free(rdev, mr->ibmr.lkey);
	kfree(mr);
	return 0;
}

/* --- kernel QPs ------------------------------------------------------------- */

static struct roxe_kslot *kslot(struct roxe_kwq *wq, u32 mask, u64 cookie)
{
	return wq->slots + (cookie & mask) * wq->slot_size;
}

static void *wqe_at(const struct roxe_kqueue *q, u64 cookie)
{
	return q->buf->data + ((cookie & (q->slots - 1)) << q->log2_elem);
}

/* A bounce ring of slots WRs of at most wr_bytes each, page-aligned. */
static u64 kbounce_bytes(u32 slots, u64 wr_bytes)
{
	u64 b = (u64)slots * ALIGN(wr_bytes, ROXE_KBOUNCE_ALIGN);

	return PAGE_ALIGN(clamp_t(u64, b, ROXE_KBOUNCE_MIN, ROXE_KBOUNCE_MAX));
}

/* A work queue's bounce ring: known to roxed as an MR of pdn with local
 * access at ROXE_KBOUNCE_IOVA, its token an MR's, so roxed's faults find
 * the pages posts have put there (mr.c). Before the queue's create
 * command: roxed knows the key when the first WQE comes.
 */
static int kwq_init(struct roxe_dev *rdev, struct roxe_kwq *wq, u32 pdn,
		    u32 slots, u32 max_sge, u64 wr_bytes)
{
	struct roxe_kabi_cmd cmd = {};
	struct roxe_kbounce *b = &wq->b;
	struct roxe_mr *mr;
	int err = -ENOMEM;

	spin_lock_init(&wq->lock);
	wq->max_sge = max_sge;
	wq->slot_size = struct_size((struct roxe_kslot *)NULL, sge, max_sge);
	wq->slots = kvcalloc(slots, wq->slot_size, GFP_KERNEL);
	if (!wq->slots)
		return -ENOMEM;
	wq->bsize = kbounce_bytes(slots, wr_bytes);
	mr = roxe_mr_new(rdev);
	if (!mr)
		goto free_slots;
	mr->map_bytes = wq->bsize;
	mr->pages = kvcalloc(wq->bsize >> PAGE_SHIFT, sizeof(*mr->pages),
			     GFP_KERNEL);
	if (!mr->pages)
		goto put_mr;
	err = roxe_key_alloc(rdev, &b->key);
	if (err)
		goto put_mr;
	err = roxe_mr_token_alloc(mr);
	if (err)
		goto free_key;
	b->mr = mr;
	cmd.op = ROXE_KOP_REG_MR;
	cmd.mr.key = b->key;
	cmd.mr.pdn = pdn;
	cmd.mr.access = IB_ACCESS_LOCAL_WRITE;
	cmd.mr.iova = ROXE_KBOUNCE_IOVA;
	cmd.mr.length = wq->bsize;
	cmd.mr.token = mr->token;
	cmd.mr.map_bytes = wq->bsize;
	err = roxe_chan_create(rdev, &cmd, ROXE_KOP_DEREG_MR, b->key);
	if (!err)
		return 0;
	b->mr = NULL;
	roxe_mr_revoke(rdev, mr);
free_key:
	roxe_key_free(rdev, b->key);
put_mr:
	kvfree(mr->pages);
	mr->pages = NULL;
	roxe_mr_put(mr);
free_slots:
	kvfree(wq->slots);
	wq->slots = NULL;
	return err;
}

/* After roxed forgot the queue: it stops using the MR, its PTEs go
 * (revocation), then its pages.
 */
static void kwq_free(struct roxe_dev *rdev, struct roxe_kwq *wq)
{
	struct roxe_mr *mr = wq->b.mr;
	unsigned long i;

	kvfree(wq->slots);
	wq->slots = NULL;
	if (!mr)
		return;
	roxe_chan_destroy(rdev, ROXE_KOP_DEREG_MR, wq->b.key);
	roxe_key_free(rdev, wq->b.key);
	roxe_mr_revoke(rdev, mr);
	for (i = 0; i < mr->npages; i++)
		__free_page(mr->pages[i]);
	kvfree(mr->pages);
	mr->pages = NULL;
	mr->npages = 0;
	roxe_mr_put(mr);	/* or roxed's last mapping of it */
	wq->b.mr = NULL;
}

/* The most bytes one WR of a QP of type t carries or receives. */
static u64 kwr_bytes(const struct ib_qp_init_attr *init, u32 max_sge,
		     bool recv)
{
	if (init->qp_type == IB_QPT_UD || init->qp_type == IB_QPT_GSI)
		return recv ? ROXE_KUD_WR_BYTES : 4096;
	return (u64)max_t(u32, max_sge, 1) * ROXE_KSGE_BYTES;
}

/* The work queues' bounce rings and slots' notes (a receive queue only
 * without an SRQ).
 */
int roxe_kqp_create(struct roxe_dev *rdev, struct roxe_qp *qp,
		    const struct ib_qp_init_attr *init)
{
	u32 pdn = roxe_pdn(qp->ibqp.pd);
	struct roxe_kqp *k;
	int err;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	init_waitqueue_head(&k->rq_idle);
	err = kwq_init(rdev, &k->sq, pdn, qp->sq.slots, init->cap.max_send_sge,
		       kwr_bytes(init, init->cap.max_send_sge, false));
	if (!err && !init->srq)
		err = kwq_init(rdev, &k->rq, pdn, qp->rq.slots,
			       init->cap.max_recv_sge,
			       kwr_bytes(init, init->cap.max_recv_sge, true));
	if (err) {
		kwq_free(rdev, &k->sq);
		kfree(k);
		return err;
	}
	qp->k = k;
	return 0;
}

void roxe_kqp_destroy(struct roxe_dev *rdev, struct roxe_qp *qp)
{
	struct roxe_kqp *k = qp->k;

	if (!k)
		return;
	kwq_free(rdev, &k->sq);
	kwq_free(rdev, &k->rq);
	kfree(k);
	qp->k = NULL;
}

/* A kernel SRQ: one bounce ring for all its receives; any RC QP may take
 * them, so each is an RC WR's worth.
 */
int roxe_ksrq_create(struct roxe_dev *rdev, struct roxe_srq *srq)
{
	struct roxe_ksrq *k;
	int err;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	err = kwq_init(rdev, &k->wq, roxe_pdn(srq->ibsrq.pd), srq->q.slots,
		       srq->max_sge, (u64)srq->max_sge * ROXE_KSGE_BYTES);
	if (err) {
		kfree(k);
		return err;
	}
	srq->k = k;
	return 0;
}

void roxe_ksrq_destroy(struct roxe_dev *rdev, struct roxe_srq *srq)
{
	struct roxe_ksrq *k = srq->k;

	if (!k)
		return;
	kwq_free(rdev, &k->wq);
	kfree(k);
	srq->k = NULL;
}

/* Pages behind the bounce region up to byte end: what roxed's faults map
 * from then on (published before the WQE that names them). Any context.
 */
static int bounce_pages(struct roxe_kbounce *b, u64 end)
{
	struct roxe_mr *mr = b->mr;
	unsigned long n = mr->npages, want = DIV_ROUND_UP(end, PAGE_SIZE);

	for (; n < want; n++) {
		/* zeroed: roxed sees nothing of the kernel's */
		mr->pages[n] = alloc_page(GFP_ATOMIC | __GFP_ZERO | __GFP_NOWARN);
		if (!mr->pages[n])
			break;
		/* the page before the count that shows it (roxe_mr_fault) */
		smp_store_release(&mr->npages, n + 1);
	}
	return n < want ? -ENOMEM : 0;
}

/* len bytes of wq's byte ring, in posting order: their offset in the
 * bounce region, -ENOMEM while the ring is full (its slots' worth of the
 * largest WRs outstanding) or no page is left, -EINVAL if they never fit.
 * *end is the ring's head after them.
 */
static long bounce_alloc(struct roxe_kwq *wq, u32 len, u64 *end)
{
	u64 head = wq->bhead;
	u32 need = ALIGN(len, ROXE_KBOUNCE_ALIGN);
	u64 pos = head % wq->bsize;
	int err;

	*end = head;
	if (!len)
		return 0;
	if (need > wq->bsize)
		return -EINVAL;
	if (pos + need > wq->bsize) {
		head += wq->bsize - pos;	/* the end is too short: wrap */
		pos = 0;
	}
	if (head + need - wq->btail > wq->bsize)
		return -ENOMEM;
	err = bounce_pages(&wq->b, pos + need);
	if (err)
		return err;
	*end = head + need;
	return pos;
}

/* Copy len bytes between p and the bounce region at off, page by page. */
static void bounce_copy(const struct roxe_kbounce *b, u64 off, void *p,
			u32 len, bool to_bounce)
{
	while (len) {
		u32 po = offset_in_page(off);
		u32 c = min_t(u32, len, PAGE_SIZE - po);
		void *v = page_address(b->mr->pages[off >> PAGE_SHIFT]) + po;

		if (to_bounce)
			memcpy(v, p, c);
		else
			memcpy(p, v, c);
		off += c;
		p += c;
		len -= c;
	}
}

/* A fast-reg MR's lkey in a kernel SGE: roxed reaches its pages itself,
 * through the MR's window (fastreg.c), and checks the MR's state, access
 * and bounds when it executes the WR, as rxe does (a REG_MR posted just
 * before it has not run yet). Here: an MR of this device and of the QP's
 * PD, under its current key, and the SGE inside what ib_map_mr_sg()
 * mapped, so a ULP's mistake fails at post time where it can.
 */
static bool kfmr_ok(struct roxe_dev *rdev, struct ib_pd *pd,
		    const struct ib_sge *sg)
{
	struct roxe_mr *mr;
	bool ok;

	rcu_read_lock();
	mr = xa_load(&rdev->fmrs, sg->lkey >> 8);
	ok = mr && mr->ibmr.pd == pd && mr->ibmr.lkey == sg->lkey &&
	     sg->addr >= mr->ibmr.iova &&
	     sg->addr - mr->ibmr.iova <= mr->ibmr.length &&
	     sg->length <= mr->ibmr.length - (sg->addr - mr->ibmr.iova);
	rcu_read_unlock();
	return ok;
}

/* A gather or scatter list's bytes: all of them (*len) and those through
 * the bounce region (*blen); *direct marks the SGEs in fast-reg MRs, which
 * roxed reaches itself. A DMA MR's key must be of the QP's PD (with local
 * write where the device writes); fast-reg MRs not on UD QPs (the GRH is
 * read from the bounce region).
 */
static int sg_bytes(struct roxe_dev *rdev, struct ib_pd *pd, bool ud,
		    const struct ib_sge *sg, int n, bool write, u64 *len,
		    u64 *blen, u32 *direct)
{
	u64 sum = 0, bsum = 0;
	int i;

	*direct = 0;
	for (i = 0; i < n; i++) {
		if (!sg[i].length)
			continue;
		sum += sg[i].length;
		if (kmr_ok(rdev, roxe_pdn(pd), sg[i].lkey, write))
			bsum += sg[i].length;
		else if (!ud && kfmr_ok(rdev, pd, &sg[i]))
			*direct |= BIT(i);
		else
			return -EINVAL;
	}
	if (sum > ROXE_MAX_MSG_SZ)
		return -EINVAL;
	*len = sum;
	*blen = bsum;
	return 0;
}

static_assert(ROXE_MAX_SGE <= 32);	/* struct roxe_kslot's direct */

/* The WQE's SGEs: one per run of DMA-key SGEs (their bytes one after the
 * other in the bounce region from off), a fast-reg MR's as it is.
 * Returns how many, at most n.
 */
static u32 wqe_sges(struct rxe_sge *dst, const struct ib_sge *sg, int n,
		    u32 direct, u64 off, u32 bkey)
{
	bool run = false;
	u32 k = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (!sg[i].length)
			continue;
		if (direct & BIT(i)) {
			dst[k].addr = sg[i].addr;
			dst[k].length = sg[i].length;
			dst[k].lkey = sg[i].lkey;
			k++;
			run = false;
			continue;
		}
		if (!run) {
			dst[k].addr = ROXE_KBOUNCE_IOVA + off;
			dst[k].length = 0;
			dst[k].lkey = bkey;
			k++;
			run = true;
		}
		dst[k - 1].length += sg[i].length;
		off += sg[i].length;
	}
	return k;
}

static void gather(const struct roxe_kbounce *b, u64 off,
		   const struct ib_sge *sg, int n, u32 direct)
{
	int i;

	for (i = 0; i < n; i++) {
		if (direct & BIT(i))
			continue;
		bounce_copy(b, off, (void *)(uintptr_t)sg[i].addr, sg[i].length,
			    true);
		off += sg[i].length;
	}
}

static void gather_inline(void *dst, const struct ib_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memcpy(dst, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		dst += sg[i].length;
	}
}

/* The first len bytes of s's message into its scatter list: those of its
 * DMA-key SGEs from the bounce region (roxed wrote the fast-reg MRs').
 */
static void scatter(const struct roxe_kbounce *b, const struct roxe_kslot *s,
		    u32 len)
{
	u64 off = s->boff;
	u32 i;

	for (i = 0; i < s->num_sge && len; i++) {
		u32 c = min(len, s->sge[i].length);

		if (!(s->direct & BIT(i))) {
			bounce_copy(b, off, (void *)(uintptr_t)s->sge[i].addr,
				    c, false);
			off += s->sge[i].length;
		}
		len -= c;
	}
}

static bool kopcode_ok(enum ib_qp_type t, enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return t == IB_QPT_RC || t == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		return t == IB_QPT_RC;
	case IB_WR_REG_MR:
		return t == IB_QPT_RC || t == IB_QPT_UC;
	default:
		return false;	/* masked atomics, integrity... */
	}
}

/* the WQE carries the kernel's REG_MR opcode as it is (6.1 and 6.12 agree) */
static_assert(IB_WR_REG_MR == ROXE_KABI_WR_REG_MR);

/* A REG_MR WR: what roxed needs to register the MR when it gets there
 * (include/uapi/roxe/kabi.h); the MR must be a fast-reg MR of the QP's PD.
 */
static int fill_reg(struct roxe_qp *qp, struct rxe_send_wqe *w,
		    const struct ib_reg_wr *reg)
{
	struct roxe_mr *mr = to_rmr(reg->mr);

	if (reg->mr->device != qp->ibqp.device || !mr->pending ||
	    reg->mr->pd != qp->ibqp.pd || (reg->key >> 8) != (reg->mr->lkey >> 8) ||
	    (reg->access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			     IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)))
		return -EINVAL;
	w->iova = reg->mr->iova;
	w->wr.wr.rdma.remote_addr = ROXE_KABI_REG_MR_ADDR(reg->mr->length,
							  READ_ONCE(mr->pending_off));
	w->wr.wr.rdma.rkey = reg->key;
	w->wr.wr.rdma.reserved = reg->access;
	return 0;
}

static void fill_remote(struct rxe_send_wqe *w, const struct ib_send_wr *wr,
			enum ib_qp_type t)
{
	switch (wr->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.wr.atomic.rkey = atomic_wr(wr)->rkey;
		w->iova = atomic_wr(wr)->remote_addr;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
		w->iova = rdma_wr(wr)->remote_addr;
		break;
	default:
		if (t == IB_QPT_UD) {
			w->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn & 0xffffff;
			w->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
			w->wr.wr.ud.pkey_index = ud_wr(wr)->pkey_index;
			w->wr.wr.ud.av = to_rah(ud_wr(wr)->ah)->av;
		}
	}
}

/* One WR into the next send slot; the caller holds the queue's lock. */
static int kpost_one_send(struct roxe_dev *rdev, struct roxe_qp *qp,
			  const struct ib_send_wr *wr)
{
	struct roxe_kwq *wq = &qp->k->sq;
	enum ib_qp_type t = roxe_wire_type(&qp->ibqp);
	bool atomic = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		      wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
	bool in = atomic || wr->opcode == IB_WR_RDMA_READ;	/* bytes come back */
	bool local = wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV;
	bool inl = (wr->send_flags & IB_SEND_INLINE) && !in && !local;
	struct rxe_send_wqe *w;
	struct roxe_kslot *s;
	u64 len, blen, end;
	u32 direct = 0;
	long off = 0;
	int err;

	if (!kopcode_ok(t, wr->opcode) || wr->num_sge < 0 ||
	    wr->num_sge > wq->max_sge)
		return -EINVAL;
	if (t == IB_QPT_UD && !ud_wr(wr)->ah)
		return -EINVAL;
	len = 0;	/* local operations carry no bytes */
	blen = 0;
	err = local ? 0 : sg_bytes(rdev, qp->ibqp.pd, t == IB_QPT_UD,
				   wr->sg_list, wr->num_sge, in, &len, &blen,
				   &direct);
	if (err)
		return err;
	inl = inl && !direct;	/* a fast-reg MR's iova is no kernel address */
	if ((atomic && len != 8) || (inl && len > qp->cap.max_inline_data))
		return -EINVAL;
	if (wq->posted - wq->retired >= qp->sq.slots - 1)
		return -ENOMEM;
	end = wq->bhead;
	if (!inl) {
		off = bounce_alloc(wq, blen, &end);
		if (off < 0)
			return off;
	}

	w = wqe_at(&qp->sq, wq->posted);
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = wq->posted;
	w->wr.opcode = wr->opcode;
	w->wr.send_flags = wr->send_flags & (IB_SEND_FENCE | IB_SEND_SIGNALED |
					     IB_SEND_SOLICITED);
	if (qp->sq_sig_all)
		w->wr.send_flags |= IB_SEND_SIGNALED;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		w->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		w->wr.ex.imm_data = wr->ex.imm_data;
	if (wr->opcode == IB_WR_REG_MR) {
		err = fill_reg(qp, w, reg_wr(wr));
		if (err)
			return err;
	} else {
		fill_remote(w, wr, t);
	}
	w->dma.length = len;
	w->dma.resid = len;
	if (inl) {
		w->wr.send_flags |= IB_SEND_INLINE;
		gather_inline(w->dma.inline_data, wr->sg_list, wr->num_sge);
	} else if (len) {
		w->dma.num_sge = wqe_sges(w->dma.sge, wr->sg_list, wr->num_sge,
					  direct, off, wq->b.key);
		if (!in)
			gather(&wq->b, off, wr->sg_list, wr->num_sge, direct);
	}

	s = kslot(wq, qp->sq.slots - 1, wq->posted);
	s->wr_id = wr->wr_id;
	s->opcode = wr->opcode;
	s->boff = off;
	s->len = len;
	s->bend = end;
	s->direct = direct;
	s->num_sge = in ? wr->num_sge : 0;
	if (in)
		memcpy(s->sge, wr->sg_list, wr->num_sge * sizeof(*s->sge));
	wq->bhead = end;
	wq->posted++;
	return 0;
}

/* WQEs were published: roxed's doorbell (if it has work), or, once roxed
 * is gone, the module flushes them itself. The death flush may have run
 * before they were there; the barrier pairs with roxe_dev_remove()'s, so
 * either that flush saw them or we see detached.
 */
static void kick(struct roxe_dev *rdev, struct roxe_qp *qp, bool send,
		 bool doorbell)
{
	if (doorbell)
		roxe_doorbell(rdev, qp->ibqp.qp_num);
	smp_mb();
	if (READ_ONCE(rdev->detached))
		roxe_flush_posted(rdev, qp, send);
}

/* The caller (roxe_post_send) checked the QP's state. */
int roxe_kpost_send(struct roxe_qp *qp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct roxe_dev *rdev = to_rdev(qp->ibqp.device);
	struct roxe_kwq *wq = &qp->k->sq;
	unsigned long flags;
	int err = 0, n = 0;

	spin_lock_irqsave(&wq->lock, flags);
	for (; wr; wr = wr->next, n++) {
		err = kpost_one_send(rdev, qp, wr);
		if (err)
			break;
	}
	/* the WQEs before the index that shows them */
	if (n)
		smp_store_release(&qp->sq.buf->producer_index,
				  wq->posted & (qp->sq.slots - 1));
	spin_unlock_irqrestore(&wq->lock, flags);
	if (n)
		kick(rdev, qp, true, true);
	if (err)
		*bad_wr = wr;
	return err;
}

/* One receive WR into the next slot of q (a QP's receive queue or an
 * SRQ), its bytes from wq's ring in b; the caller holds wq's lock.
 */
static int kpost_one_recv(struct roxe_dev *rdev, struct ib_pd *pd,
			  bool ud, struct roxe_kwq *wq, struct roxe_kqueue *q,
			  const struct ib_recv_wr *wr)
{
	struct rxe_recv_wqe *w;
	struct roxe_kslot *s;
	u64 len, blen, end;
	u32 direct;
	long off;
	int err;

	if (wr->num_sge < 0 || wr->num_sge > wq->max_sge)
		return -EINVAL;
	err = sg_bytes(rdev, pd, ud, wr->sg_list, wr->num_sge, true, &len,
		       &blen, &direct);
	if (err)
		return err;
	if (wq->posted - wq->retired >= q->slots - 1)
		return -ENOMEM;
	off = bounce_alloc(wq, blen, &end);
	if (off < 0)
		return off;

	w = wqe_at(q, wq->posted);
	memset(w, 0, sizeof(*w));
	w->wr_id = wq->posted;
	w->dma.length = len;
	w->dma.resid = len;
	if (len)
		w->dma.num_sge = wqe_sges(w->dma.sge, wr->sg_list, wr->num_sge,
					  direct, off, wq->b.key);
	s = kslot(wq, q->slots - 1, wq->posted);
	s->wr_id = wr->wr_id;
	s->opcode = 0;
	s->boff = off;
	s->len = len;
	s->bend = end;
	s->direct = direct;
	s->done = false;
	s->num_sge = wr->num_sge;
	memcpy(s->sge, wr->sg_list, wr->num_sge * sizeof(*s->sge));
	wq->bhead = end;
	wq->posted++;
	return 0;
}

/* A list of receive WRs into q; the index published once. */
static int kpost_recvs(struct roxe_dev *rdev, struct ib_pd *pd, bool ud,
		       struct roxe_kwq *wq, struct roxe_kqueue *q,
		       const struct ib_recv_wr *wr, const struct ib_recv_wr **bad_wr,
		       int *posted)
{
	unsigned long flags;
	int err = 0, n = 0;

	spin_lock_irqsave(&wq->lock, flags);
	for (; wr; wr = wr->next, n++) {
		err = kpost_one_recv(rdev, pd, ud, wq, q, wr);
		if (err)
			break;
	}
	if (n)
		smp_store_release(&q->buf->producer_index,
				  wq->posted & (q->slots - 1));
	spin_unlock_irqrestore(&wq->lock, flags);
	if (err)
		*bad_wr = wr;
	*posted = n;
	return err;
}

/* Receive queues have no doorbell: roxed reads them when a request comes.
 * In ERR it rings one, so roxed flushes the new WRs (ib_drain_rq).
 */
int roxe_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct roxe_dev *rdev = to_rdev(ibqp->device);
	struct roxe_qp *qp = to_rqp(ibqp);
	enum ib_qp_state st = READ_ONCE(qp->attr.qp_state);
	int err, n;

	if (!qp->k || ibqp->srq || st == IB_QPS_RESET) {
		*bad_wr = wr;		/* user QPs post into their queue */
		return -EINVAL;
	}
	err = kpost_recvs(rdev, ibqp->pd, roxe_wire_type(ibqp) == IB_QPT_UD,
			  &qp->k->rq, &qp->rq, wr, bad_wr, &n);
	/* receives need roxed only in ERR, to be flushed */
	if (n)
		kick(rdev, qp, false, st == IB_QPS_ERR);
	return err;
}

static bool kwq_idle(struct roxe_kwq *wq)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&wq->lock, flags);
	idle = wq->retired == wq->posted;
	spin_unlock_irqrestore(&wq->lock, flags);
	return idle;
}

/* ib_drain_rq() without the extra receive the core's drain posts: a ULP
 * that keeps its receive queue full (cifs posts max_recv_wr receives) has
 * no room for it, the core's drain fails with -ENOMEM and returns at once,
 * and the ULP destroys the QP before the flush of its own receives was
 * polled (cifs then waits forever for those buffers). Every receive WR
 * completes, flushed or not, so the queue is drained once every posted
 * WR's completion has been polled: move to ERR (roxed flushes them) and
 * wait for that, polling the CQ here where nobody else does
 * (IB_POLL_DIRECT), as the core's drain does. Unbounded as the core's:
 * the ULP frees its buffers after; roxed's death flushes them all.
 */
void roxe_drain_rq(struct ib_qp *ibqp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct roxe_qp *qp = to_rqp(ibqp);
	struct ib_cq *cq = ibqp->recv_cq;
	int err;

	if (!qp->k || ibqp->srq)
		return;			/* no receive queue of its own */
	err = ib_modify_qp(ibqp, &attr, IB_QP_STATE);
	if (err) {
		WARN_ONCE(err, "roxe: failed to drain recv queue: %d\n", err);
		return;
	}
	while (!kwq_idle(&qp->k->rq)) {
		if (cq->poll_ctx == IB_POLL_DIRECT)
			ib_process_cq_direct(cq, -1);
		wait_event_timeout(qp->k->rq_idle, kwq_idle(&qp->k->rq),
				   HZ / 10);
	}
}

/* SRQ receives need no doorbell ever: roxed takes them as requests come
 * (and no QP's flush takes them, IBA 10.2.9.5).
 */
int roxe_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct roxe_srq *srq = to_rsrq(ibsrq);
	int n;

	if (!srq->k) {
		*bad_wr = wr;		/* user SRQs post into their queue */
		return -EINVAL;
	}
	/* a UD QP may take them: no fast-reg MRs (sg_bytes()) */
	return kpost_recvs(to_rdev(ibsrq->device), ibsrq->pd, true, &srq->k->wq,
			   &srq->q, wr, bad_wr, &n);
}

/* --- kernel CQs ------------------------------------------------------------- */

/* A UD receive's GRH area holds an IPv6 header, or an IPv4 one in its last
 * 20 bytes (the rxe layout): the core parses it by this type.
 */
static void set_network_type(struct ib_wc *wc, const u8 *grh)
{
	wc->network_hdr_type = (grh[0] >> 4) == 6 ? RDMA_NETWORK_IPV6 :
						      RDMA_NETWORK_IPV4;
	wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
}

/* wc for u, whose WR is s (its bytes in b). */
static void kfill_wc(struct roxe_qp *qp, const struct ib_uverbs_wc *u,
		     const struct roxe_kslot *s, const struct roxe_kbounce *b,
		     struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = s->wr_id;
	wc->status = u->status;
	/* roxed's REG_MR completion is the ABI's number, 6.1's IB_WC_REG_MR;
	 * 6.2 put FLUSH and ATOMIC_WRITE in front of it
	 */
	wc->opcode = u->opcode == ROXE_KABI_WC_REG_MR ? IB_WC_REG_MR : u->opcode;
	wc->vendor_err = u->vendor_err;
	wc->byte_len = u->byte_len;
	wc->qp = &qp->ibqp;
	wc->ex.imm_data = u->ex.imm_data;
	wc->src_qp = u->src_qp;
	wc->wc_flags = u->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
				      IB_WC_WITH_INVALIDATE);
	wc->pkey_index = u->pkey_index;
	wc->sl = u->sl;
	wc->port_num = 1;
	if ((u->opcode & IB_WC_RECV) && (wc->wc_flags & IB_WC_GRH) &&
	    s->len >= 40 && !s->direct && u->status == IB_WC_SUCCESS) {
		u8 v;

		bounce_copy(b, s->boff, &v, 1, false);
		set_network_type(wc, &v);
	}
}

/* Retire the WRs of wq up to u's cookie (copying out what came back) and
 * fill wc. Under the QP xarray's lock: the QP stays.
 */
static bool kretire(struct roxe_qp *qp, struct roxe_kwq *wq, u32 mask,
		    const struct ib_uverbs_wc *u, struct ib_wc *wc)
{
	bool recv = u->opcode & IB_WC_RECV;
	struct roxe_kslot *s = NULL;
	u64 cookie = u->wr_id;

	spin_lock(&wq->lock);
	if (cookie < wq->retired || cookie >= wq->posted) {
		spin_unlock(&wq->lock);
		return false;
	}
	for (; wq->retired <= cookie; wq->retired++) {
		s = kslot(wq, mask, wq->retired);
		/* WRs before this one completed well (else they'd have their
		 * own completion); a receive of a WRITE's immediate has none
		 */
		if (s->num_sge && (wq->retired < cookie ||
				   u->status == IB_WC_SUCCESS) &&
		    u->opcode != IB_WC_RECV_RDMA_WITH_IMM)
			scatter(&wq->b, s,
				recv ? min(u->byte_len, s->len) : s->len);
		wq->btail = s->bend;
	}
	kfill_wc(qp, u, s, &wq->b, wc);
	if (recv && wq->retired == wq->posted)
		wake_up(&qp->k->rq_idle);	/* roxe_drain_rq() */
	spin_unlock(&wq->lock);
	return true;
}

/* A receive completion of qp from its SRQ: that WR alone (the SRQ's WRs
 * complete on any of its QPs, polled in any order), then the SRQ frees
 * what is polled from its oldest WR on.
 */
static bool ksrq_retire(struct roxe_qp *qp, struct roxe_srq *srq,
			const struct ib_uverbs_wc *u, struct ib_wc *wc)
{
	struct roxe_kwq *wq = &srq->k->wq;
	u32 mask = srq->q.slots - 1;
	struct roxe_kslot *s;
	u64 cookie = u->wr_id;

	spin_lock(&wq->lock);
	s = kslot(wq, mask, cookie);
	if (cookie < wq->retired || cookie >= wq->posted || s->done) {
		spin_unlock(&wq->lock);
		return false;
	}
	if (s->num_sge && u->status == IB_WC_SUCCESS &&
	    u->opcode != IB_WC_RECV_RDMA_WITH_IMM)
		scatter(&wq->b, s, min(u->byte_len, s->len));
	kfill_wc(qp, u, s, &wq->b, wc);
	s->done = true;
	while (wq->retired < wq->posted &&
	       (s = kslot(wq, mask, wq->retired))->done) {
		wq->btail = s->bend;
		wq->retired++;
	}
	spin_unlock(&wq->lock);
	return true;
}

static bool kcomplete(struct roxe_dev *rdev, const struct ib_uverbs_wc *u,
		      struct ib_wc *wc)
{
	struct roxe_qp *qp;
	unsigned long flags;
	bool ok = false;

	xa_lock_irqsave(&rdev->qps, flags);
	qp = xa_load(&rdev->qps, u->qp_num);
	if (qp && qp->k) {
		if ((u->opcode & IB_WC_RECV) && qp->ibqp.srq)
			ok = ksrq_retire(qp, to_rsrq(qp->ibqp.srq), u, wc);
		else if (u->opcode & IB_WC_RECV)
			ok = kretire(qp, &qp->k->rq, qp->rq.slots - 1, u, wc);
		else
			ok = kretire(qp, &qp->k->sq, qp->sq.slots - 1, u, wc);
	}
	xa_unlock_irqrestore(&rdev->qps, flags);
	if (!ok)
		pr_warn_ratelimited("%s: dropped a completion for qp %u (wr %llu)\n",
				    dev_name(&rdev->ib.dev), u->qp_num, u->wr_id);
	return ok;
}

int roxe_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct roxe_dev *rdev = to_rdev(ibcq->device);
	struct roxe_cq *cq = to_rcq(ibcq);
	struct rxe_queue_buf *b = cq->q.buf;
	u32 mask = cq->q.slots - 1;
	struct ib_uverbs_wc u;
	unsigned long flags;
	int n = 0;

	if (!cq->kernel)
		return -EINVAL;		/* the provider polls user CQs */
	spin_lock_irqsave(&cq->poll_lock, flags);
	while (n < num &&
	       cq->cons != (smp_load_acquire(&b->producer_index) & mask)) {
		memcpy(&u, b->data + ((size_t)cq->cons << cq->q.log2_elem),
		       sizeof(u));
		cq->cons = (cq->cons + 1) & mask;
		/* read before the index that frees the slot */
		smp_store_release(&b->consumer_index, cq->cons);
		if (kcomplete(rdev, &u, &wc[n]))
			n++;
	}
	spin_unlock_irqrestore(&cq->poll_lock, flags);
	return n;
}

/* For IB_CQ_REPORT_MISSED_EVENTS: a completion may have come before the
 * arming, and roxed's event with it.
 */
bool roxe_kcq_empty(struct roxe_cq *cq)
{
	return READ_ONCE(cq->cons) ==
	       (smp_load_acquire(&cq->q.buf->producer_index) & (cq->q.slots - 1));
}
