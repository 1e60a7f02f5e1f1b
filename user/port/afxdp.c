// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * AF_XDP port backend: each engine receives the RoCE v2 frames of its own
 * QPs, steered by the XDP program, and transmits through its own socket.
 *
 * Steering across cores. AF_XDP delivers a frame only to a socket bound
 * to the queue the frame arrived on, and the queue is chosen by the sender
 * (veth: the peer's tx queue) or the NIC's RSS hash over the UDP ports
 * (real NICs) -- never by our destination QP. So every engine has a socket
 * on every queue: XSKMAP slot = queue * engines + engine, and a frame for
 * QP q that arrives on any queue lands directly in the ring of the engine
 * that owns q. No frame changes cores after the XDP program.
 *
 * The price: the sockets of one queue share one buffer pool, hence one
 * fill ring (the kernel allows no other arrangement for sockets on the same
 * queue). All sockets share one UMEM:
 *   - RX buffers belong to a queue. Whichever engine receives one returns
 *     it to that queue's fill ring. That ring has several producers, so
 *     they reserve slots with a compare-and-swap and publish in
 *     reservation order (no lock; a producer waits only for another one
 *     that is copying a few addresses).
 *   - TX buffers belong to an engine: engine e transmits on queue e only,
 *     so queue e's completion ring has a single consumer and TX needs no
 *     atomics at all. Hence the rule queues >= engines.
 *   - While frames stream in, not all of a queue's RX buffers sit in its
 *     fill ring: FILL_CALM frames in a row that never found it below half
 *     its target halve the target (down to FILL_MIN chunks), and what
 *     comes back beyond it waits on a stack beside the ring (spare, last
 *     in first out). The kernel takes the fill ring in order, so each
 *     buffer in it goes round once per target's worth of frames: all 2048
 *     would cycle 8 MiB a queue through the caches (and the kernel's 4 KiB
 *     mappings of the UMEM through the TLB), which costs a stream of 4 KiB
 *     frames about 9 % against 1024 (docs/benchmarks.md). Whatever may
 *     bring a burst brings them all back (the target doubles, the spares
 *     go in): the ring found below half its target (the kernel took more
 *     than the engines gave back), the engine about to sleep
 *     (roxe_port_idle), FILL_IDLE_POLLS empty polls in a row (a polled
 *     engine that found nothing for some microseconds). So a port nobody
 *     reads (its engine asleep, or idle for a while) holds all its
 *     buffers, two send windows (below); one being read holds at least
 *     FILL_MIN chunks, a send window of 4096-MTU frames, ready between two
 *     looks.
 * The one-queue-per-engine alternative fails the moment a peer's flow
 * hashes to another engine's queue; making the sender pick the queue only
 * works between two roxe hosts over veth.
 *
 * The point of the layout is that it stays correct and lock-free whatever
 * queue a frame arrives on; a 2-core machine cannot show it scaling (veth
 * charges the receive-side XDP to the sender; xdp_rate_test's figures are
 * in docs/benchmark-many-qps.md).
 *
 * Buffers are 4096-byte UMEM chunks. Copy mode puts 256 bytes of headroom
 * in front of received data, so a frame over 3840 bytes arrives as a chain
 * (XDP_PKT_CONTD, multi-buffer): it is copied into one of the port's join
 * buffers, the engine always sees contiguous frames. TX buffers are pairs
 * of adjacent chunks (8 KiB, contiguous in the UMEM): a frame over 4096
 * bytes leaves as two descriptors, the first marked XDP_PKT_CONTD.
 *
 * In-place transmit (roxe_afxdp_config.reserve_bytes): a reserve of chunks
 * behind the TX buffers holds MRs (roxe_alloc_umem_mr). A frame whose
 * payload lies in one leaves as a chain: the headers in a TX buffer, the
 * payload as descriptors into the MR (one per chunk it touches: an aligned
 * UMEM's descriptor may not cross a chunk), then the pad and ICRC from the
 * TX buffer again, behind the headers. Only with multi-buffer sockets: a
 * single-buffer frame is one descriptor, headers and payload contiguous.
 * The completion ring then returns addresses inside the reserve: each is
 * read once and counted off its chunk (res_out, which keeps the chunk from
 * being handed out again meanwhile), never put on the TX free stack; the
 * frame is done when its TX buffer's descriptors are all back (the
 * kernel completes a frame's descriptors in order: the tail is last),
 * counted in port.inplace_done for the engine (sq.c holds a WQE's
 * completion until its frames are done).
 *
 * Zero-copy is tried first; veth refuses it, and so does 6.12's virtio_net
 * (EOPNOTSUPP: its xdp_features lack NETDEV_XDP_ACT_XSK_ZEROCOPY, which
 * the later AF_XDP transmit series adds). A driver with zero-copy but
 * without multi-buffer zero-copy (xdp_zc_max_segs 1: virtio_net in 7.3)
 * refuses XDP_ZEROCOPY | XDP_USE_SG with EOPNOTSUPP as well
 * (xp_assign_dev): where every frame the interface's MTU allows fits one
 * chunk, zero-copy is tried again without XDP_USE_SG, and the group runs
 * single-buffer (frames up to 3840 bytes, as with no_multibuf). Else
 * copy mode (XDP_COPY | XDP_USE_NEED_WAKEUP), where the kernel
 * transmits inside sendto(): tx_flush always kicks, until the TX ring is
 * empty. The mode is the UMEM's: a socket that shares it on another queue
 * gets the first bind's mode (xp_assign_dev_shared), so there is no
 * per-queue fallback within one UMEM; `roxectl status` shows each
 * socket's mode as the kernel reports it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <xdp/xsk.h>
#include "roxe/maps.h"
#include "roxe/port.h"

/* Multi-buffer AF_XDP (Linux 6.6); the uAPI headers here predate it. */
#ifndef XDP_USE_SG
#define XDP_USE_SG	(1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD	(1 << 0)
#endif

#define CHUNK		4096u		/* UMEM chunk: the only sizes are 2048, 4096 */
#define TX_BUF		(2 * CHUNK)	/* a TX buffer: two adjacent chunks */
/* An engine's worth of receive buffers, and each socket's RX ring: two
 * send windows (ROXE_MAX_INFLIGHT, 512 PSNs) of 4096-MTU frames, each in
 * two chunks; the engine's PSN credit is half of it (credit.c). Not one
 * window: a go-back-N, or a stash drain that holds the engine while a
 * window arrives, overflows a one-window ring in bursts of consecutive
 * drops, each PSN then repaired alone; and a one-window ring with the
 * credit at half of it leaves 256 PSNs for all QPs to share. The price:
 * 8 MiB, which leaves the cache (docs/benchmark-loss.md).
 * A queue's buffers (and its fill ring): the engines' worth spread over
 * the queues (the credit bounds what all QPs have on the way, and RSS
 * spreads the flows), RX_BUFS with as many queues as engines, but never
 * below FILL_MIN, one whole send window: one QP's frames all hash to one
 * queue (roxe_afxdp_plan). */
#define RX_BUFS		2048u
#define RX_RING		2048u
#define FILL_MIN	1024u		/* chunks a streaming fill ring holds (see top) */
#define FILL_CALM	(16u * 1024)	/* frames without a low fill ring: halve it */
#define FILL_IDLE_POLLS	1024u		/* empty polls in a row: all buffers back */
_Static_assert(RX_BUFS % FILL_MIN == 0 && !((RX_BUFS / FILL_MIN) & (RX_BUFS / FILL_MIN - 1)),
	       "the fill target halves from RX_BUFS to FILL_MIN");
#define TX_BUFS		512u		/* per engine */
/* up to two descriptors a buffer, four for an in-place frame (headers, a
 * payload over two chunks, the tail) */
#define TX_RING		(4 * TX_BUFS)
#define COMP_RING	(4 * TX_BUFS)
#define JOIN_SLOTS	8u		/* chained frames held by the engine at once */
#define JOIN_CAP	(16u * 1024)	/* largest chained frame */
#define MAX_CHAIN	8u
#define RX_BUDGET	64u
/* descriptors of an in-place frame at most: headers, a payload of up to
 * 4096 bytes (two chunks; one more for a frame_size payload), the tail */
#define INPLACE_DESCS	5u

/* priv of a received buffer: the chunk and its queue, or a join slot. */
#define PRIV_JOINED	(1ull << 63)
#define PRIV_QUEUE_SHIFT 48

/* One interface queue: the rings its sockets share. */
struct afxdp_queue {
	struct xsk_ring_prod fill;	/* producers: every engine (see top) */
	struct xsk_ring_cons comp;	/* consumer: engine number == queue */
	_Atomic uint32_t fill_reserved;	/* fill slots handed out to producers */
	_Atomic uint32_t fill_target;	/* chunks the fill ring may hold */
	_Atomic uint32_t fill_calm;	/* frames since it was last found low */
	uint32_t	bufs;		/* its RX buffers (a power of two, <= RX_BUFS) */
	uint64_t	rx_base;	/* its RX buffers in the UMEM */
	/* the RX buffers kept out of the fill ring: a stack of bufs */
	pthread_spinlock_t spare_lock;
	unsigned	nspare;
	uint64_t	*spare;
} __attribute__((aligned(64)));

struct afxdp_sock {
	struct xsk_socket *xsk;		/* NULL: a plain socket, see rx_sock_join() */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;	/* only on the engine's home queue */
	int		fd;
	void		*rx_map;	/* plain sockets: the mmapped RX ring */
	size_t		rx_map_len;
};

struct afxdp_port {
	struct roxe_port port;
	struct roxe_afxdp *group;
	unsigned	engine;
	struct afxdp_sock *socks;	/* one per queue */
	unsigned	next_queue;	/* rx round robin */
	struct afxdp_sock *tx_sock;	/* socks[engine] */
	struct afxdp_queue *home;	/* queues[engine]: its completion ring */
	uint64_t	*tx_free;	/* stack of free TX buffer addresses */
	unsigned	tx_nfree;
	uint8_t		*tx_descs_out;	/* per TX buffer: descriptors not completed */
	uint32_t	comp_owed;	/* descriptors sent, their completions not reaped */
	uint8_t		*tx_inplace;	/* per TX buffer: it carries an in-place frame */
	uint64_t	tx_base;
	unsigned	empty_polls;	/* rx_burst found nothing, in a row */
	uint8_t		*join;		/* JOIN_SLOTS * JOIN_CAP */
	uint32_t	join_busy;	/* bitmap */
	bool		live;
};

struct roxe_afxdp {
	uint8_t		*area;
	size_t		area_size;
	struct xsk_umem	*umem;
	unsigned	engines, queues;
	unsigned	rx_bufs;	/* RX buffers a queue (roxe_afxdp_plan) */
	bool		zerocopy, multibuf;
	/* the reserve: res_chunks chunks from res_base; res_used marks the
	 * allocated ones (under res_lock), res_out counts each one's
	 * transmit descriptors not yet completed (engines, atomically) */
	uint64_t	res_base;
	unsigned	res_chunks, res_free;
	uint8_t		*res_used;
	_Atomic uint16_t *res_out;
	pthread_mutex_t	res_lock;
	int		xsks_map_fd;
	unsigned	failed_queue;	/* where sockets_create stopped */
	struct afxdp_queue *q;
	struct afxdp_port **ports;
	_Atomic int	refs;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* --- the shared fill ring ---------------------------------------------------- */
/* Put n chunk addresses into a queue's fill ring; safe from any engine. */
static void fill_push(struct afxdp_queue *q, const uint64_t *addrs, unsigned n)
{
	struct xsk_ring_prod *r = &q->fill;
	uint32_t head, cons;

	head = atomic_load_explicit(&q->fill_reserved, memory_order_relaxed);
	do {
		cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
		/* Each queue owns exactly r->size buffers: never full. */
		if (r->size - (head - cons) < n)
			n = r->size - (head - cons);
	} while (!atomic_compare_exchange_weak_explicit(&q->fill_reserved, &head, head + n,
							memory_order_relaxed,
							memory_order_relaxed));
	for (unsigned i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(r, head + i) = addrs[i];
	/* Publish after every earlier reservation has been published. */
	while (__atomic_load_n(r->producer, __ATOMIC_ACQUIRE) != head)
		cpu_relax();
	__atomic_store_n(r->producer, head + n, __ATOMIC_RELEASE);
}

/* Chunks in the fill ring the kernel has not taken (reserved ones too). */
static uint32_t fill_out(struct afxdp_queue *q)
{
	return atomic_load_explicit(&q->fill_reserved, memory_order_relaxed) -
	       __atomic_load_n(q->fill.consumer, __ATOMIC_ACQUIRE);
}

/* Returned chunks: into the fill ring up to its target, the rest spare. */
static void fill_put(struct afxdp_queue *q, const uint64_t *addrs, unsigned n)
{
	uint32_t out = fill_out(q), target = atomic_load_explicit(&q->fill_target,
								  memory_order_relaxed);
	unsigned room = out < target ? target - out : 0;

	if (n > room) {
		pthread_spin_lock(&q->spare_lock);
		/* every chunk is in the ring, spare or out: never past bufs */
		memcpy(q->spare + q->nspare, addrs + room, (n - room) * sizeof(*addrs));
		/* atomic: fill_topup() peeks at it without the lock */
		__atomic_store_n(&q->nspare, q->nspare + n - room, __ATOMIC_RELAXED);
		pthread_spin_unlock(&q->spare_lock);
		n = room;
	}
	if (n)
		fill_push(q, addrs, n);
}

/* Spares into the fill ring up to target. */
static void fill_topup(struct afxdp_queue *q, uint32_t target)
{
	uint32_t out = fill_out(q);
	uint64_t take[RX_BUFS];
	unsigned n;

	if (out >= target || !__atomic_load_n(&q->nspare, __ATOMIC_RELAXED))
		return;
	pthread_spin_lock(&q->spare_lock);
	n = target - out < q->nspare ? target - out : q->nspare;
	__atomic_store_n(&q->nspare, q->nspare - n, __ATOMIC_RELAXED);
	memcpy(take, q->spare + q->nspare, n * sizeof(*take));
	pthread_spin_unlock(&q->spare_lock);
	if (n)
		fill_push(q, take, n);
}

/* Every buffer back in the fill ring: a burst may come (see top). */
static void fill_deepen(struct afxdp_queue *q)
{
	atomic_store_explicit(&q->fill_target, q->bufs, memory_order_relaxed);
	atomic_store_explicit(&q->fill_calm, 0, memory_order_relaxed);
	fill_topup(q, q->bufs);
}

/* After frames came from queue q: found below half its target, the fill
 * ring's target doubles and spares go in; FILL_CALM frames without that
 * halve it (see top). */
static void fill_tend(struct afxdp_queue *q, unsigned frames)
{
	uint32_t target = atomic_load_explicit(&q->fill_target, memory_order_relaxed);

	if (fill_out(q) < target / 2) {
		target = target < q->bufs ? target * 2 : q->bufs;
		atomic_store_explicit(&q->fill_target, target, memory_order_relaxed);
		atomic_store_explicit(&q->fill_calm, 0, memory_order_relaxed);
		fill_topup(q, target);
	} else if (target > FILL_MIN &&
		   atomic_fetch_add_explicit(&q->fill_calm, frames, memory_order_relaxed) +
		   frames >= FILL_CALM) {
		atomic_store_explicit(&q->fill_target, target / 2, memory_order_relaxed);
		atomic_store_explicit(&q->fill_calm, 0, memory_order_relaxed);
	}
}

/* --- receive ------------------------------------------------------------------ */
static void release_chunks(struct afxdp_port *p, unsigned queue, const uint64_t *a, unsigned n)
{
	if (n)
		fill_put(&p->group->q[queue], a, n);
}

static int join_slot_get(struct afxdp_port *p)
{
	for (unsigned i = 0; i < JOIN_SLOTS; i++)
		if (!(p->join_busy & (1u << i))) {
			p->join_busy |= 1u << i;
			return i;
		}
	return -1;
}

/* Take up to n frames from one socket; returns how many. */
static unsigned rx_sock(struct afxdp_port *p, unsigned queue, struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_sock *s = &p->socks[queue];
	struct roxe_afxdp *g = p->group;
	uint64_t done[MAX_CHAIN];
	unsigned avail, used = 0, got = 0;
	uint32_t idx = s->rx.cached_cons;

	avail = xsk_cons_nb_avail(&s->rx, RX_BUDGET);
	while (used < avail && got < n) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&s->rx, idx + used);
		unsigned k = 1, total = d->len;

		if (!(d->options & XDP_PKT_CONTD)) {
			bufs[got].data = xsk_umem__get_data(g->area, d->addr);
			bufs[got].len = d->len;
			bufs[got].cap = d->len;
			bufs[got].priv = (uint64_t)queue << PRIV_QUEUE_SHIFT |
					 (d->addr & ~(uint64_t)(CHUNK - 1));
			got++;
			used++;
			continue;
		}
		/* A chain: all its descriptors are in the ring together. */
		while (used + k < avail && k < MAX_CHAIN &&
		       (xsk_ring_cons__rx_desc(&s->rx, idx + used + k - 1)->options & XDP_PKT_CONTD)) {
			total += xsk_ring_cons__rx_desc(&s->rx, idx + used + k)->len;
			k++;
		}
		if (xsk_ring_cons__rx_desc(&s->rx, idx + used + k - 1)->options & XDP_PKT_CONTD) {
			if (k < MAX_CHAIN)
				break;		/* rest not visible yet */
			total = JOIN_CAP + 1;	/* absurdly long: drop it */
		}
		int slot = total <= JOIN_CAP ? join_slot_get(p) : -1;

		if (slot < 0 && total <= JOIN_CAP)
			break;			/* engine holds every join slot */
		uint8_t *dst = slot >= 0 ? p->join + (size_t)slot * JOIN_CAP : NULL;
		uint32_t off = 0;

		for (unsigned i = 0; i < k; i++) {
			const struct xdp_desc *c = xsk_ring_cons__rx_desc(&s->rx, idx + used + i);

			if (dst) {
				memcpy(dst + off, xsk_umem__get_data(g->area, c->addr), c->len);
				off += c->len;
			}
			done[i] = c->addr & ~(uint64_t)(CHUNK - 1);
		}
		release_chunks(p, queue, done, k);
		used += k;
		if (!dst) {
			p->port.stats.rx_dropped++;
			continue;
		}
		bufs[got].data = dst;
		bufs[got].len = off;
		bufs[got].cap = JOIN_CAP;
		bufs[got].priv = PRIV_JOINED | (uint64_t)slot;
		got++;
	}
	if (used) {
		s->rx.cached_cons += used;
		xsk_ring_cons__release(&s->rx, used);
	}
	return got;
}

/* Every queue's buffers back in its fill ring (see top). */
static void afxdp_idle(struct roxe_port *port)
{
	struct afxdp_port *p = (struct afxdp_port *)port;

	for (unsigned q = 0; q < p->group->queues; q++)
		fill_deepen(&p->group->q[q]);
}

static unsigned afxdp_rx_burst(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_port *p = (struct afxdp_port *)port;
	unsigned queues = p->group->queues, got = 0;

	for (unsigned i = 0; i < queues && got < n; i++) {
		unsigned q = (p->next_queue + i) % queues, k;

		k = rx_sock(p, q, bufs + got, n - got);
		if (k)
			fill_tend(&p->group->q[q], k);
		got += k;
	}
	p->next_queue = (p->next_queue + 1) % queues;
	if (got) {
		p->empty_polls = 0;
	} else {
		/* Zero-copy drivers stop filling when the ring ran dry. */
		for (unsigned q = 0; q < queues; q++)
			if (xsk_ring_prod__needs_wakeup(&p->group->q[q].fill))
				recvfrom(p->socks[q].fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		if (++p->empty_polls == FILL_IDLE_POLLS)
			afxdp_idle(port);	/* nothing for a while: be ready */
	}
	for (unsigned i = 0; i < got; i++) {
		p->port.stats.rx_frames++;
		p->port.stats.rx_bytes += bufs[i].len;
	}
	return got;
}

static void afxdp_rx_release(struct roxe_port *port, const struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_port *p = (struct afxdp_port *)port;
	uint64_t batch[RX_BUDGET];
	unsigned nb = 0, bq = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t priv = bufs[i].priv;
		unsigned q;

		if (priv & PRIV_JOINED) {
			p->join_busy &= ~(1u << (priv & 31));
			continue;
		}
		q = priv >> PRIV_QUEUE_SHIFT;
		if (nb && (q != bq || nb == RX_BUDGET)) {
			release_chunks(p, bq, batch, nb);
			nb = 0;
		}
		bq = q;
		batch[nb++] = priv & ((1ull << PRIV_QUEUE_SHIFT) - 1);
	}
	release_chunks(p, bq, batch, nb);
}

/* --- transmit ------------------------------------------------------------------ */
/* One completed descriptor's address: a TX buffer's, or one inside the
 * reserve (an in-place payload); anything else is counted and ignored. */
static void comp_one(struct afxdp_port *p, uint64_t addr)
{
	struct roxe_afxdp *g = p->group;
	uint64_t b = (addr - p->tx_base) / TX_BUF;

	if (addr >= p->tx_base && b < TX_BUFS && p->tx_descs_out[b]) {
		if (--p->tx_descs_out[b])
			return;
		p->tx_free[p->tx_nfree++] = p->tx_base + b * TX_BUF;
		if (p->tx_inplace[b]) {
			p->tx_inplace[b] = 0;
			p->port.inplace_done++;
		}
		return;
	}
	if (addr >= g->res_base && (addr - g->res_base) / CHUNK < g->res_chunks) {
		_Atomic uint16_t *o = &g->res_out[(addr - g->res_base) / CHUNK];
		uint16_t v = atomic_load_explicit(o, memory_order_relaxed);

		/* only this engine's descriptors come back here, but other
		 * engines count on the same chunk: a CAS, never below 0 */
		while (v && !atomic_compare_exchange_weak_explicit(o, &v, v - 1,
								   memory_order_release,
								   memory_order_relaxed))
			;
		if (v)
			return;
	}
	p->port.stats.tx_comp_bogus++;	/* not ours: do not corrupt the stack */
}

void roxe_afxdp_comp_addr(struct roxe_port *port, uint64_t addr)
{
	comp_one((struct afxdp_port *)port, addr);
}

static void reap_completions(struct afxdp_port *p)
{
	struct xsk_ring_cons *cq = &p->home->comp;
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(cq, COMP_RING, &idx);

	for (unsigned i = 0; i < n; i++) {
		/* the kernel's ring: read once, checked, then used */
		uint64_t addr = __atomic_load_n(xsk_ring_cons__comp_addr(cq, idx + i),
						__ATOMIC_RELAXED);

		comp_one(p, addr);
	}
	if (n)
		xsk_ring_cons__release(cq, n);
	p->comp_owed = n < p->comp_owed ? p->comp_owed - n : 0;
}

static unsigned afxdp_tx_alloc(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_port *p = (struct afxdp_port *)port;
	unsigned i;

	if (p->tx_nfree < n)
		reap_completions(p);
	for (i = 0; i < n && p->tx_nfree; i++) {
		uint64_t addr = p->tx_free[--p->tx_nfree];

		bufs[i].data = xsk_umem__get_data(p->group->area, addr);
		bufs[i].len = 0;
		bufs[i].cap = p->port.frame_size;
		bufs[i].priv = addr;
		bufs[i].tx.bth_off = 0;
		bufs[i].ext_len = 0;
	}
	return i;
}

static void afxdp_tx_free(struct roxe_port *port, const struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_port *p = (struct afxdp_port *)port;

	for (unsigned i = 0; i < n; i++)
		p->tx_free[p->tx_nfree++] = bufs[i].priv;
}

/* An in-place frame as a chain (see top): the headers, the payload in
 * the reserve a descriptor per chunk, the tail. False: it cannot go (bad
 * description, no room in the TX ring). */
static bool tx_inplace(struct afxdp_port *p, const struct roxe_buf *b)
{
	struct roxe_afxdp *g = p->group;
	struct xsk_ring_prod *tx = &p->tx_sock->tx;
	uint64_t addr = b->priv, off = b->ext_off, rlen = (uint64_t)g->res_chunks * CHUNK;
	uint32_t left = b->ext_len, idx;
	struct xdp_desc d[INPLACE_DESCS];
	unsigned nd = 0;

	if (!g->multibuf || !b->hdr_len || !b->tail_len || off > rlen || left > rlen - off ||
	    b->hdr_len + b->tail_len > CHUNK ||
	    (uint64_t)b->hdr_len + b->ext_len + b->tail_len != b->len || b->len > p->port.frame_size)
		return false;
	d[nd++] = (struct xdp_desc){ .addr = addr, .len = b->hdr_len, .options = XDP_PKT_CONTD };
	while (left) {
		uint32_t in = CHUNK - (uint32_t)(off % CHUNK), k = left < in ? left : in;

		if (nd == INPLACE_DESCS - 1)
			return false;
		d[nd++] = (struct xdp_desc){ .addr = g->res_base + off, .len = k,
					     .options = XDP_PKT_CONTD };
		off += k;
		left -= k;
	}
	d[nd++] = (struct xdp_desc){ .addr = addr + b->hdr_len, .len = b->tail_len };
	if (xsk_ring_prod__reserve(tx, nd, &idx) != nd)
		return false;
	for (unsigned k = 0; k < nd; k++) {
		*xsk_ring_prod__tx_desc(tx, idx + k) = d[k];
		if (k && k < nd - 1)
			atomic_fetch_add_explicit(&g->res_out[(d[k].addr - g->res_base) / CHUNK], 1,
						  memory_order_relaxed);
	}
	p->tx_descs_out[(addr - p->tx_base) / TX_BUF] = 2;
	p->tx_inplace[(addr - p->tx_base) / TX_BUF] = 1;
	xsk_ring_prod__submit(tx, nd);
	p->comp_owed += nd;
	p->port.stats.tx_frames++;
	p->port.stats.tx_bytes += b->len;
	return true;
}

static void afxdp_tx_submit(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct afxdp_port *p = (struct afxdp_port *)port;
	struct xsk_ring_prod *tx = &p->tx_sock->tx;
	unsigned queued = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t addr = bufs[i].priv;
		uint32_t len = bufs[i].len, idx;
		unsigned nd = len > CHUNK ? 2 : 1;

		if (bufs[i].ext_len) {
			if (tx_inplace(p, &bufs[i])) {
				queued++;
			} else {
				p->tx_free[p->tx_nfree++] = addr;
				p->port.stats.tx_dropped++;
				p->port.inplace_done++;	/* its bytes are not read */
			}
			continue;
		}
		if (!len || len > p->port.frame_size ||
		    xsk_ring_prod__reserve(tx, nd, &idx) != nd) {
			p->tx_free[p->tx_nfree++] = addr;
			p->port.stats.tx_dropped++;
			continue;
		}
		struct xdp_desc *d = xsk_ring_prod__tx_desc(tx, idx);

		d->addr = addr;
		d->len = nd == 2 ? CHUNK : len;
		d->options = nd == 2 ? XDP_PKT_CONTD : 0;
		if (nd == 2) {
			d = xsk_ring_prod__tx_desc(tx, idx + 1);
			d->addr = addr + CHUNK;
			d->len = len - CHUNK;
			d->options = 0;
		}
		p->tx_descs_out[(addr - p->tx_base) / TX_BUF] = nd;
		xsk_ring_prod__submit(tx, nd);
		p->comp_owed += nd;
		queued++;
		p->port.stats.tx_frames++;
		p->port.stats.tx_bytes += len;
	}
	if (queued)
		p->port.tx_pending = true;
}

/*
 * Kick the kernel until it has taken every queued frame, or until a kick
 * takes none. Copy mode sends up to 32 frames a call, and answers EAGAIN
 * both when it stopped there and when it could take nothing: the socket's
 * send buffer full of frames not yet freed below (a virtio-net TX ring
 * the host has not drained, a veth peer whose NAPI has not run), or the
 * device queue stopped. Kicking again at once would only repeat that
 * (make bench-vm's 6.1 guest made 132 sendto() per 64 KiB SEND, 97 % of
 * them EAGAIN): tx_pending stays set, and the engine kicks again next
 * turn, or after a nap of microseconds (engine.c).
 */
static void afxdp_tx_flush(struct roxe_port *port)
{
	struct afxdp_port *p = (struct afxdp_port *)port;
	struct xsk_ring_prod *tx = &p->tx_sock->tx;

	for (int tries = 0; p->port.tx_pending && tries < 64; tries++) {
		uint32_t before = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE), after;

		if (p->group->zerocopy && !xsk_ring_prod__needs_wakeup(tx)) {
			p->port.tx_pending = false;	/* the driver is on it */
			break;
		}
		/* A full completion ring stops the kernel too; with room for
		 * every descriptor owed, the reaping waits until after the
		 * kick: the peer's receive runs inside our sendto() on veth,
		 * and each instruction before it is one it waits for. */
		if (p->comp_owed > COMP_RING / 2)
			reap_completions(p);
		p->port.stats.tx_kicks++;
		if (sendto(p->tx_sock->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
			p->port.tx_pending = false;	/* ENETDOWN, ENXIO: the frames are lost */
			break;
		}
		after = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
		if (after == tx->cached_prod)
			p->port.tx_pending = false;
		else if (after == before)
			break;			/* took nothing: later */
	}
	reap_completions(p);
}

static void afxdp_tx_reap(struct roxe_port *port)
{
	reap_completions((struct afxdp_port *)port);
}

/* --- set-up and teardown ---------------------------------------------------------- */
static void group_put(struct roxe_afxdp *g);

static void afxdp_destroy(struct roxe_port *port)
{
	struct afxdp_port *p = (struct afxdp_port *)port;

	p->live = false;
	group_put(p->group);
}

static const struct roxe_port_ops afxdp_ops = {
	.name		= "afxdp",
	.rx_burst	= afxdp_rx_burst,
	.rx_release	= afxdp_rx_release,
	.tx_alloc	= afxdp_tx_alloc,
	.tx_submit	= afxdp_tx_submit,
	.tx_free	= afxdp_tx_free,
	.tx_flush	= afxdp_tx_flush,
	.tx_reap	= afxdp_tx_reap,
	.idle		= afxdp_idle,
	.destroy	= afxdp_destroy,
};

/* The largest power of two at most n (n >= 1). */
static uint64_t pow2_floor(uint64_t n)
{
	uint64_t p = 1;

	while (p <= n / 2)
		p *= 2;
	return p;
}

int roxe_afxdp_plan(unsigned engines, unsigned cpus, unsigned max_engines,
		    const struct roxe_if_queues *q, unsigned slots, struct roxe_afxdp_plan *p)
{
	unsigned rxq = q->rx ? q->rx : 1, txq = q->tx ? q->tx : 1, fit;
	enum roxe_plan_limit limit = ROXE_PLAN_QUEUES;
	uint64_t per_queue;

	memset(p, 0, sizeof(*p));
	p->cpus = cpus ? cpus : 1;
	p->slots = slots;
	p->queues = rxq;
	p->chunk = CHUNK;
	p->tx_buf = TX_BUF;
	p->tx_bufs = TX_BUFS;
	/* engine e transmits on queue e: it must exist both ways */
	fit = rxq < txq ? rxq : txq;
	if (max_engines < fit) {
		fit = max_engines;
		limit = ROXE_PLAN_MAX;
	}
	if (slots / rxq < fit) {
		fit = slots / rxq;
		limit = ROXE_PLAN_SLOTS;
	}
	p->fit = fit;
	p->limit = limit;
	if (!fit || engines > fit)
		return -EINVAL;
	if (engines) {
		p->engines = engines;
		p->limit = ROXE_PLAN_ASKED;
	} else if (p->cpus <= fit) {
		p->engines = p->cpus;
		p->limit = ROXE_PLAN_CORES;
	} else {
		p->engines = fit;
	}
	/* The engines' worth of buffers spread over the queues, at least a
	 * send window each (see RX_BUFS). */
	per_queue = (uint64_t)RX_BUFS * p->engines / rxq;
	per_queue = per_queue < FILL_MIN ? FILL_MIN : per_queue > RX_BUFS ? RX_BUFS : per_queue;
	p->rx_bufs = (unsigned)pow2_floor(per_queue);
	p->umem_bytes = (uint64_t)rxq * p->rx_bufs * CHUNK + (uint64_t)p->engines * TX_BUFS * TX_BUF;
	return 0;
}

/* The sockets the XDP map of fd holds; a map we cannot read is taken to
 * be ours as built. */
static unsigned xsk_map_slots(int fd)
{
	struct bpf_map_info mi;
	uint32_t len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &mi, &len) || !mi.max_entries)
		return ROXE_MAX_XSKS;
	return mi.max_entries;
}

static void port_free(struct afxdp_port *p, struct roxe_afxdp *g)
{
	if (!p)
		return;
	for (unsigned q = 0; p->socks && q < g->queues; q++) {
		struct afxdp_sock *s = &p->socks[q];
		uint32_t slot = roxe_xsk_slot(q, p->engine, g->engines);

		if (s->xsk || s->rx_map)
			bpf_map_delete_elem(g->xsks_map_fd, &slot);
		if (s->xsk) {
			xsk_socket__delete(s->xsk);
		} else if (s->rx_map) {
			munmap(s->rx_map, s->rx_map_len);
			close(s->fd);
		}
	}
	if (p->port.wait_fd >= 0)
		close(p->port.wait_fd);
	free(p->socks);
	free(p->tx_free);
	free(p->tx_descs_out);
	free(p->tx_inplace);
	free(p->join);
	free(p);
}

static void group_free(struct roxe_afxdp *g)
{
	for (unsigned e = 0; g->ports && e < g->engines; e++)
		port_free(g->ports[e], g);
	if (g->umem)
		xsk_umem__delete(g->umem);
	if (g->area)
		munmap(g->area, g->area_size);
	free(g->ports);
	for (unsigned q = 0; g->q && q < g->queues; q++) {
		pthread_spin_destroy(&g->q[q].spare_lock);
		free(g->q[q].spare);
	}
	free(g->q);
	free(g->res_used);
	free(g->res_out);
	pthread_mutex_destroy(&g->res_lock);
	free(g);
}

static void group_put(struct roxe_afxdp *g)
{
	if (atomic_fetch_sub(&g->refs, 1) == 1)
		group_free(g);
}

static int umem_create(struct roxe_afxdp *g)
{
	struct xsk_umem_config uc = {
		.fill_size = g->rx_bufs,
		.comp_size = COMP_RING,
		.frame_size = CHUNK,
		.frame_headroom = 0,
	};

	if (g->umem) {
		xsk_umem__delete(g->umem);
		g->umem = NULL;
	}
	memset(&g->q[0].fill, 0, sizeof(g->q[0].fill));
	memset(&g->q[0].comp, 0, sizeof(g->q[0].comp));
	return xsk_umem__create(&g->umem, g->area, g->area_size, &g->q[0].fill,
				&g->q[0].comp, &uc);
}

static int sock_create(struct roxe_afxdp *g, const char *ifname, struct afxdp_port *p,
		       unsigned q, uint16_t bind_flags)
{
	struct afxdp_sock *s = &p->socks[q];
	struct xsk_socket_config sc = {
		.rx_size = RX_RING,
		.tx_size = q == p->engine ? TX_RING : 0,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = bind_flags,
	};

	/* Not xsk_socket__update_xskmap(): it keys the map by queue alone. */
	return xsk_socket__create_shared(&s->xsk, ifname, q, g->umem, &s->rx,
					 q == p->engine ? &s->tx : NULL,
					 &g->q[q].fill, &g->q[q].comp, &sc);
}

static struct afxdp_port *port_new(struct roxe_afxdp *g, unsigned e)
{
	struct afxdp_port *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->port.ops = &afxdp_ops;
	p->port.frame_size = g->multibuf ? TX_BUF : CHUNK - 256;
	p->port.wait_fd = -1;
	/* its own socket's ring, in frames of the largest IB MTU: two chunks
	 * each when they come in chains */
	p->port.rx_frames = g->multibuf ? RX_RING / 2 : RX_RING;
	p->group = g;
	p->engine = e;
	p->socks = calloc(g->queues, sizeof(*p->socks));
	p->tx_free = calloc(TX_BUFS, sizeof(*p->tx_free));
	p->tx_descs_out = calloc(TX_BUFS, 1);
	p->tx_inplace = calloc(TX_BUFS, 1);
	p->join = malloc((size_t)JOIN_SLOTS * JOIN_CAP);
	if (!p->socks || !p->tx_free || !p->tx_descs_out || !p->tx_inplace || !p->join) {
		port_free(p, g);
		return NULL;
	}
	p->tx_base = (uint64_t)g->queues * g->rx_bufs * CHUNK + (uint64_t)e * TX_BUFS * TX_BUF;
	for (unsigned i = 0; i < TX_BUFS; i++)
		p->tx_free[p->tx_nfree++] = p->tx_base + (uint64_t)(TX_BUFS - 1 - i) * TX_BUF;
	p->home = &g->q[e];
	return p;
}

/*
 * A further socket on a queue that has one: it shares that socket's pool
 * (fill and completion rings), so it binds with XDP_SHARED_UMEM naming
 * that socket. libxdp always names the UMEM's first socket, which the
 * kernel refuses for a different queue, so this one is set up by hand:
 * an RX ring only.
 */
static int sock_join(struct roxe_afxdp *g, int ifindex, struct afxdp_sock *s,
		     unsigned q, int first_fd)
{
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP,
		.sxdp_flags = XDP_SHARED_UMEM,
		.sxdp_ifindex = ifindex,
		.sxdp_queue_id = q,
		.sxdp_shared_umem_fd = first_fd,
	};
	unsigned ndesc = RX_RING;
	uint8_t *map;

	(void)g;
	s->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		return -errno;
	if (setsockopt(s->fd, SOL_XDP, XDP_RX_RING, &ndesc, sizeof(ndesc)) ||
	    getsockopt(s->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		goto fail;
	s->rx_map_len = off.rx.desc + ndesc * sizeof(struct xdp_desc);
	map = mmap(NULL, s->rx_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		   s->fd, XDP_PGOFF_RX_RING);
	if (map == MAP_FAILED)
		goto fail;
	s->rx_map = map;
	s->rx.mask = ndesc - 1;
	s->rx.size = ndesc;
	s->rx.producer = (void *)(map + off.rx.producer);
	s->rx.consumer = (void *)(map + off.rx.consumer);
	s->rx.flags = (void *)(map + off.rx.flags);
	s->rx.ring = map + off.rx.desc;
	s->rx.cached_prod = *s->rx.producer;
	s->rx.cached_cons = *s->rx.consumer;
	if (bind(s->fd, (struct sockaddr *)&sxdp, sizeof(sxdp)))
		goto fail;
	return 0;
fail:
	{
		int err = -errno;

		if (s->rx_map)
			munmap(s->rx_map, s->rx_map_len);
		s->rx_map = NULL;
		close(s->fd);
		return err;
	}
}

/* Every frame IFNAME's MTU allows (with an Ethernet and a VLAN header)
 * fits one chunk behind the kernel's 256 bytes of headroom. */
static bool one_chunk_frames(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool fits;

	if (fd < 0)
		return false;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	fits = ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 &&
	       (unsigned)ifr.ifr_mtu + 14 + 4 <= CHUNK - 256;
	close(fd);
	return fits;
}

/* The group becomes single-buffer (zero-copy without XDP_USE_SG): its
 * ports' frames are one chunk, as no_multibuf makes them. */
static void group_single_buffer(struct roxe_afxdp *g)
{
	g->multibuf = false;
	for (unsigned e = 0; e < g->engines; e++) {
		g->ports[e]->port.frame_size = CHUNK - 256;
		g->ports[e]->port.rx_frames = RX_RING;
	}
}

/*
 * Create every socket. Queue q's first socket (engine q % engines, through
 * libxdp) creates the queue's pool; the first bind of all decides
 * zero-copy or copy. The other engines join it.
 */
static int sockets_create(struct roxe_afxdp *g, const char *ifname, bool force_copy)
{
	uint16_t sg = g->multibuf ? XDP_USE_SG : 0;
	int ifindex = if_nametoindex(ifname);
	uint16_t flags;
	int err;

	g->failed_queue = 0;
	if (!ifindex)
		return -ENODEV;
	flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP | sg;
	err = force_copy ? -EOPNOTSUPP : sock_create(g, ifname, g->ports[0], 0, flags);
	if (err == -EOPNOTSUPP && sg && !force_copy && one_chunk_frames(ifname)) {
		/* zero-copy without multi-buffer (see the top) */
		err = umem_create(g);
		if (err) {
			g->failed_queue = -1u;
			return err;
		}
		flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP;
		err = sock_create(g, ifname, g->ports[0], 0, flags);
		if (!err) {
			group_single_buffer(g);
			sg = 0;
		}
	}
	g->zerocopy = !err;
	if (err) {
		/* The failed bind may leave the UMEM's rings half set up. */
		err = umem_create(g);
		if (err) {
			g->failed_queue = -1u;
			return err;
		}
		flags = XDP_COPY | XDP_USE_NEED_WAKEUP | sg;
		err = sock_create(g, ifname, g->ports[0], 0, flags);
		if (err)
			return err;
	}
	for (unsigned q = 0; q < g->queues; q++) {
		struct afxdp_port *first = g->ports[q % g->engines];

		g->failed_queue = q;
		if (q) {
			err = sock_create(g, ifname, first, q, flags);
			if (err)
				return err;
		}
		first->socks[q].fd = xsk_socket__fd(first->socks[q].xsk);
		for (unsigned e = 0; e < g->engines; e++) {
			if (g->ports[e] == first)
				continue;
			err = sock_join(g, ifindex, &g->ports[e]->socks[q], q,
					first->socks[q].fd);
			if (err)
				return err;
		}
	}
	return 0;
}

static struct roxe_afxdp *afxdp_open(const struct roxe_afxdp_config *cfg);

/*
 * A closed socket's buffer pool, and with it its claim on the queue, is
 * freed by a kernel work item after close() returns (xp_put_pool); until
 * then binding that queue fails with EBUSY. A process that opens right
 * after another closed (roxed restarted, a link deleted and added) waits
 * that out, up to BUSY_WAIT_MS; a queue that some live socket holds is
 * still EBUSY after it.
 */
#define BUSY_WAIT_MS	2000
#define BUSY_LOOK_MS	5

static struct roxe_afxdp *afxdp_open_waiting(const struct roxe_afxdp_config *cfg)
{
	const struct timespec look = { .tv_nsec = BUSY_LOOK_MS * 1000000L };
	struct roxe_afxdp *g = afxdp_open(cfg);

	for (unsigned i = 0; !g && errno == EBUSY && i < BUSY_WAIT_MS / BUSY_LOOK_MS; i++) {
		nanosleep(&look, NULL);
		g = afxdp_open(cfg);
	}
	return g;
}

/* Kernels before 6.6 refuse XDP_USE_SG (multi-buffer AF_XDP) with EINVAL:
 * go on with single-buffer frames there. */
struct roxe_afxdp *roxe_afxdp_open(const struct roxe_afxdp_config *cfg)
{
	struct roxe_afxdp_config single = *cfg;
	struct roxe_afxdp *g = afxdp_open_waiting(cfg);

	if (g || errno != EINVAL || cfg->no_multibuf)
		return g;
	single.no_multibuf = true;
	return afxdp_open_waiting(&single);
}

/* report->step = step, and err back */
static int failed(struct roxe_afxdp_report *report, enum roxe_afxdp_step step, int err)
{
	report->step = step;
	return err;
}

static struct roxe_afxdp *afxdp_open(const struct roxe_afxdp_config *cfg)
{
	struct roxe_afxdp_report own, *r = cfg->report ? cfg->report : &own;
	struct roxe_afxdp *g = calloc(1, sizeof(*g));
	int err = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (!g)
		goto fail_errno;
	g->engines = cfg->engines ? cfg->engines : 1;
	g->multibuf = !cfg->no_multibuf;
	g->xsks_map_fd = cfg->xsks_map_fd;
	atomic_init(&g->refs, 1);
	pthread_mutex_init(&g->res_lock, NULL);
	if (cfg->queues) {
		r->q = (struct roxe_if_queues){ .rx = cfg->queues, .tx = cfg->queues };
	} else {
		roxe_if_queues(cfg->ifname, &r->q);
	}
	r->multibuf = g->multibuf;
	/* a queue's number travels in a buffer's priv */
	if (r->q.rx >= 1u << (63 - PRIV_QUEUE_SHIFT)) {
		err = failed(r, ROXE_AFXDP_PLAN, -EINVAL);
		goto fail;
	}
	err = roxe_afxdp_plan(g->engines, 0, ROXE_MAX_ENGINES, &r->q, xsk_map_slots(g->xsks_map_fd),
			      &r->plan);
	if (err) {
		err = failed(r, ROXE_AFXDP_PLAN, err);
		goto fail;
	}
	err = -ENOMEM;
	g->queues = r->plan.queues;
	g->rx_bufs = r->plan.rx_bufs;
	g->q = aligned_alloc(64, sizeof(*g->q) * g->queues);
	g->ports = calloc(g->engines, sizeof(*g->ports));
	if (!g->q || !g->ports)
		goto fail;
	memset(g->q, 0, sizeof(*g->q) * g->queues);
	for (unsigned q = 0; q < g->queues; q++) {
		pthread_spin_init(&g->q[q].spare_lock, PTHREAD_PROCESS_PRIVATE);
		g->q[q].bufs = g->rx_bufs;
		g->q[q].spare = calloc(g->rx_bufs, sizeof(*g->q[q].spare));
		if (!g->q[q].spare)
			goto fail;
	}
	if (cfg->reserve_bytes > (uint64_t)UINT16_MAX * CHUNK) {
		err = failed(r, ROXE_AFXDP_AREA, -EINVAL);
		goto fail;
	}
	g->res_chunks = (unsigned)((cfg->reserve_bytes + CHUNK - 1) / CHUNK);
	g->res_free = g->res_chunks;
	g->res_base = r->plan.umem_bytes;
	g->res_used = calloc(g->res_chunks + 1, 1);
	g->res_out = calloc(g->res_chunks + 1, sizeof(*g->res_out));
	if (!g->res_used || !g->res_out)
		goto fail;
	g->area_size = r->plan.umem_bytes + (uint64_t)g->res_chunks * CHUNK;
	if (g->area_size != r->plan.umem_bytes + (uint64_t)g->res_chunks * CHUNK) {	/* a 32-bit size_t */
		err = failed(r, ROXE_AFXDP_AREA, -ENOMEM);
		goto fail;
	}
	g->area = mmap(NULL, g->area_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (g->area == MAP_FAILED) {
		g->area = NULL;
		err = failed(r, ROXE_AFXDP_AREA, -errno);
		goto fail;
	}
	for (unsigned e = 0; e < g->engines; e++) {
		g->ports[e] = port_new(g, e);
		if (!g->ports[e])
			goto fail;
	}
	err = umem_create(g);
	if (err) {
		err = failed(r, ROXE_AFXDP_UMEM, err);
		goto fail;
	}
	err = sockets_create(g, cfg->ifname, cfg->force_copy);
	if (err) {
		/* the copy mode's UMEM again, or a socket */
		err = failed(r, g->failed_queue == -1u ? ROXE_AFXDP_UMEM : ROXE_AFXDP_SOCKET, err);
		r->queue = g->failed_queue;
		goto fail;
	}
	r->zerocopy = g->zerocopy;
	r->multibuf = g->multibuf;

	for (unsigned q = 0; q < g->queues; q++) {
		struct afxdp_queue *qu = &g->q[q];
		uint32_t idx;

		qu->rx_base = (uint64_t)q * g->rx_bufs * CHUNK;
		if (xsk_ring_prod__reserve(&qu->fill, g->rx_bufs, &idx) != g->rx_bufs) {
			err = failed(r, ROXE_AFXDP_SOCKET, -ENOSPC);
			r->queue = q;
			goto fail;
		}
		for (unsigned i = 0; i < g->rx_bufs; i++)
			*xsk_ring_prod__fill_addr(&qu->fill, idx + i) = qu->rx_base + (uint64_t)i * CHUNK;
		xsk_ring_prod__submit(&qu->fill, g->rx_bufs);
		atomic_store(&qu->fill_reserved, *qu->fill.producer);
		atomic_store(&qu->fill_target, g->rx_bufs);	/* deep until frames stream */
	}
	for (unsigned e = 0; e < g->engines; e++) {
		struct afxdp_port *p = g->ports[e];

		p->tx_sock = &p->socks[e];
		if (g->res_chunks && g->multibuf) {
			p->port.inplace_base = g->area + g->res_base;
			p->port.inplace_len = (uint64_t)g->res_chunks * CHUNK;
		}
		p->port.wait_fd = epoll_create1(EPOLL_CLOEXEC);
		if (p->port.wait_fd < 0) {
			err = failed(r, ROXE_AFXDP_MAP, -errno);
			goto fail;
		}
		for (unsigned q = 0; q < g->queues; q++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = q };
			uint32_t slot = roxe_xsk_slot(q, e, g->engines);

			if (epoll_ctl(p->port.wait_fd, EPOLL_CTL_ADD, p->socks[q].fd, &ev) < 0 ||
			    bpf_map_update_elem(g->xsks_map_fd, &slot, &p->socks[q].fd, 0) < 0) {
				err = failed(r, ROXE_AFXDP_MAP, -errno);
				r->queue = q;
				goto fail;
			}
		}
	}
	return g;
fail:
	if (g)
		group_free(g);
	errno = -err;
fail_errno:
	return NULL;
}

struct roxe_port *roxe_afxdp_port(struct roxe_afxdp *g, unsigned engine)
{
	struct afxdp_port *p;

	if (engine >= g->engines || g->ports[engine]->live)
		return NULL;
	p = g->ports[engine];
	p->live = true;
	atomic_fetch_add(&g->refs, 1);
	return &p->port;
}

void roxe_afxdp_close(struct roxe_afxdp *g)
{
	if (g)
		group_put(g);
}

bool roxe_afxdp_zerocopy(const struct roxe_afxdp *g)
{
	return g->zerocopy;
}

bool roxe_afxdp_inplace(const struct roxe_afxdp *g)
{
	return g->res_chunks && g->multibuf;
}

/* First fit over whole chunks; a chunk with descriptors out (a frame of
 * a freed MR still in the kernel) is not taken. */
void *roxe_afxdp_reserve_alloc(struct roxe_afxdp *g, uint64_t len)
{
	uint64_t want = (len + CHUNK - 1) / CHUNK;
	void *p = NULL;

	if (!len || !g) {
		errno = EINVAL;
		return NULL;
	}
	if (!g->res_chunks) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	pthread_mutex_lock(&g->res_lock);
	for (unsigned i = 0, run = 0; want <= g->res_free && i < g->res_chunks; i++) {
		if (g->res_used[i] || atomic_load(&g->res_out[i])) {
			run = 0;
			continue;
		}
		if (++run < want)
			continue;
		for (unsigned k = i + 1 - run; k <= i; k++)
			g->res_used[k] = 1;
		g->res_free -= run;
		p = g->area + g->res_base + (uint64_t)(i + 1 - run) * CHUNK;
		break;
	}
	pthread_mutex_unlock(&g->res_lock);
	if (!p)
		errno = ENOSPC;
	return p;
}

void roxe_afxdp_reserve_free(struct roxe_afxdp *g, void *p, uint64_t len)
{
	uint64_t first, n = (len + CHUNK - 1) / CHUNK;

	if (!g || !p || (uint8_t *)p < g->area + g->res_base)
		return;
	first = ((uint8_t *)p - (g->area + g->res_base)) / CHUNK;
	pthread_mutex_lock(&g->res_lock);
	for (uint64_t k = first; k < first + n && k < g->res_chunks; k++)
		if (g->res_used[k]) {
			g->res_used[k] = 0;
			g->res_free++;
		}
	pthread_mutex_unlock(&g->res_lock);
}

void roxe_afxdp_reserve_query(struct roxe_afxdp *g, uint64_t *total, uint64_t *avail)
{
	pthread_mutex_lock(&g->res_lock);
	*total = (uint64_t)g->res_chunks * CHUNK;
	*avail = (uint64_t)g->res_free * CHUNK;
	pthread_mutex_unlock(&g->res_lock);
}
