/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Work and completion queues: Linux's soft-RoCE user ABI, the contract the
 * stock rdma-core rxe provider, the kernel module and roxe's engine share.
 *
 * A queue is one struct rxe_queue_buf (<rdma/rdma_user_rxe.h>): a header
 * with producer and consumer indices on their own cache lines, then 2^k
 * slots of 2^log2_elem_size bytes. Indices are slot numbers, already masked;
 * one slot is always left empty, so a queue of 2^k slots holds 2^k - 1.
 * Send queues hold struct rxe_send_wqe, receive queues struct rxe_recv_wqe,
 * completion queues struct ib_uverbs_wc.
 *
 * Each side keeps its own index privately and publishes it with a release
 * store; the other side's index is read with an acquire load and masked
 * before use, so a corrupted or hostile peer cannot make us index outside
 * the buffer.
 *
 * The ring's shape (slot count, slot size) is the creator's word, passed in
 * as a struct roxe_queue_geom and kept privately: the header's index_mask
 * and log2_elem_size are written for the other side's benefit and never
 * read back, because the other side (an application mapping the ring) can
 * rewrite them at any time.
 */
#ifndef ROXE_QUEUE_H
#define ROXE_QUEUE_H

#include <linux/types.h>
#include <rdma/rdma_user_rxe.h>

/* struct ib_uverbs_wc's wc_flags are the kernel's IB_WC_* bits, as uverbs
 * and kernel rxe write them (the rxe provider hands them on unchanged).
 * GRH and WITH_IMM equal libibverbs' bits; WITH_INVALIDATE (bit 2) does
 * not (IBV_WC_WITH_INV is bit 3). */
#define ROXE_UWC_GRH		(1u << 0)
#define ROXE_UWC_WITH_IMM	(1u << 1)
#define ROXE_UWC_WITH_INV	(1u << 2)

/*
 * IBA 1.5's FLUSH and ATOMIC WRITE in the rxe user ABI (ib_user_verbs.h
 * and rdma_user_rxe.h since Linux 6.2; rdma-core 44's copies of those
 * headers, which roxe builds against, name only ATOMIC WRITE's opcode):
 * their work request and completion opcodes, and where a send WQE keeps
 * their arguments, as the rxe provider's wr_flush()/wr_atomic_write()
 * write them.
 *   FLUSH         wr.flush: remote_addr (u64), length (u32), rkey (u32),
 *                 type (u8: placement type bits), level (u8: selectivity)
 *                 at the start of the wr union; iova = remote_addr
 *   ATOMIC WRITE  wr.rdma.remote_addr, wr.rdma.rkey; the 8 bytes to write
 *                 in dma.atomic_wr (the first bytes of the dma union, where
 *                 inline data goes); dma.length 8; iova = remote_addr
 */
#define ROXE_UWR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define ROXE_UWR_ATOMIC_WRITE	15	/* IB_UVERBS_WR_ATOMIC_WRITE */
#define ROXE_UWC_FLUSH		8	/* IB_UVERBS_WC_FLUSH */
#define ROXE_UWC_ATOMIC_WRITE	9	/* IB_UVERBS_WC_ATOMIC_WRITE */

struct roxe_uwr_flush {
	__aligned_u64	remote_addr;
	__u32		length;
	__u32		rkey;
	__u8		type;
	__u8		level;
};

/* A send WQE's FLUSH arguments: the wr union read, or written, as wr.flush
 * (copied: the union has no such member in these headers). */
static inline struct roxe_uwr_flush roxe_uwr_flush_get(const struct rxe_send_wqe *w)
{
	struct roxe_uwr_flush f;

	__builtin_memcpy(&f, &w->wr.wr, sizeof(f));
	return f;
}

static inline void roxe_uwr_flush_set(struct rxe_send_wqe *w, const struct roxe_uwr_flush *f)
{
	__builtin_memcpy(&w->wr.wr, f, sizeof(*f));
}

_Static_assert(sizeof(struct roxe_uwr_flush) <= sizeof(((struct rxe_send_wr *)0)->wr),
	       "wr.flush fits the wr union");

/* A UD receive's sl on RoCE is the received packet's type, as mlx5 reports
 * it (Annex 17, A17.4.5.1: the completion says whether the frame was IPv4,
 * IPv6 or RoCE v1; RoCE itself carries no SL): bit 3 set for a UDP header
 * (RoCE v2), bits 2:0 the L3 header. UCX's UD transport (1.11 to 1.17)
 * reads it to find the destination address in the 40-byte GRH area and
 * drops every datagram whose sl says otherwise (kernel rxe reports 0). */
#define ROXE_UWC_SL_ROCE_V2	(1u << 3)
#define ROXE_UWC_SL_IPV6	1u
#define ROXE_UWC_SL_IPV4	2u

struct roxe_queue {
	struct rxe_queue_buf	*buf;
	__u32			index;		/* our side's index, private */
	__u32			mask;		/* slots - 1, private copy */
	__u32			log2_elem_size;	/* private copy */
};

/* A ring's shape as its creator made it (not as its header says now). */
struct roxe_queue_geom {
	__u32			mask;		/* slots - 1; slots a power of two */
	__u32			log2_elem;	/* slot size, log2 of bytes */
};

/* Largest slot roxe accepts: 64 KiB (a send WQE with 32 SGEs takes 1 KiB). */
#define ROXE_QUEUE_MAX_LOG2_ELEM	16
/* Most slots: 2^20, above every queue limit (WRs, CQEs). */
#define ROXE_QUEUE_MAX_LOG2_SLOTS	20

/* A shape worth mapping: at least 2 slots, a power of two, each slot
 * holding at least min_elem bytes, within the limits above. */
static inline int roxe_queue_geom_ok(struct roxe_queue_geom g, __u32 min_elem)
{
	return g.mask && !(g.mask & (g.mask + 1)) &&
	       g.mask < (1u << ROXE_QUEUE_MAX_LOG2_SLOTS) &&
	       g.log2_elem <= ROXE_QUEUE_MAX_LOG2_ELEM && (1u << g.log2_elem) >= min_elem;
}

/* Bytes a queue of 2^log2_slots slots of 2^log2_elem bytes takes. */
static inline __u64 roxe_queue_bytes(__u32 log2_slots, __u32 log2_elem)
{
	return sizeof(struct rxe_queue_buf) + ((__u64)1 << (log2_slots + log2_elem));
}

static inline void *roxe_queue_slot(const struct roxe_queue *q, __u32 index)
{
	return q->buf->data + ((__u64)(index & q->mask) << q->log2_elem_size);
}

static inline __u32 roxe_queue_next(const struct roxe_queue *q, __u32 index)
{
	return (index + 1) & q->mask;
}

/* --- producer side (post_send/post_recv for work queues; engine for CQs) - */
static inline void roxe_queue_init_producer(struct roxe_queue *q, struct rxe_queue_buf *buf,
					    struct roxe_queue_geom g)
{
	q->buf = buf;
	q->mask = g.mask;
	q->log2_elem_size = g.log2_elem;
	q->index = __atomic_load_n(&buf->producer_index, __ATOMIC_ACQUIRE) & q->mask;
}

static inline int roxe_queue_full(const struct roxe_queue *q)
{
	__u32 cons = __atomic_load_n(&q->buf->consumer_index, __ATOMIC_ACQUIRE) & q->mask;

	return roxe_queue_next(q, q->index) == cons;
}

/* Slot to fill next; valid only when !roxe_queue_full(). */
static inline void *roxe_queue_producer_slot(const struct roxe_queue *q)
{
	return roxe_queue_slot(q, q->index);
}

static inline void roxe_queue_produce(struct roxe_queue *q)
{
	q->index = roxe_queue_next(q, q->index);
	__atomic_store_n(&q->buf->producer_index, q->index, __ATOMIC_RELEASE);
}

/* --- consumer side ----------------------------------------------------------- */
static inline void roxe_queue_init_consumer(struct roxe_queue *q, struct rxe_queue_buf *buf,
					    struct roxe_queue_geom g)
{
	q->buf = buf;
	q->mask = g.mask;
	q->log2_elem_size = g.log2_elem;
	q->index = __atomic_load_n(&buf->consumer_index, __ATOMIC_ACQUIRE) & q->mask;
}

static inline struct roxe_queue_geom roxe_queue_geom(const struct roxe_queue *q)
{
	return (struct roxe_queue_geom){ .mask = q->mask, .log2_elem = q->log2_elem_size };
}

/* The producer's index as published (masked): slots up to it are filled. */
static inline __u32 roxe_queue_producer_index(const struct roxe_queue *q)
{
	return __atomic_load_n(&q->buf->producer_index, __ATOMIC_ACQUIRE) & q->mask;
}

static inline int roxe_queue_empty(const struct roxe_queue *q)
{
	return roxe_queue_producer_index(q) == q->index;
}

/* Number of filled slots from index `from` up to the producer's index. */
static inline __u32 roxe_queue_count_from(const struct roxe_queue *q, __u32 from)
{
	return (roxe_queue_producer_index(q) - from) & q->mask;
}

static inline void *roxe_queue_consumer_slot(const struct roxe_queue *q)
{
	return roxe_queue_slot(q, q->index);
}

static inline void roxe_queue_consume(struct roxe_queue *q)
{
	q->index = roxe_queue_next(q, q->index);
	__atomic_store_n(&q->buf->consumer_index, q->index, __ATOMIC_RELEASE);
}

#endif /* ROXE_QUEUE_H */
