// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Local delivery (loopback): a frame for one of the host's own addresses
 * never leaves the host. As rxe's rxe_loopback(), the frame is built exactly
 * as for the wire (ICRC and all); instead of the port it goes to the
 * receive path of the engine that owns its destination QP:
 *
 *   - on the sending device, when the destination address is one of the
 *     device's own (two QPs of one device, QP1's CM MADs to the own
 *     address: embedded and roxed alike);
 *   - on another device of this process in the same network namespace whose
 *     own address it is (two embedded devices on two interfaces). rxe
 *     loops only frames for its own netdev's MAC; roxe also crosses devices.
 *
 * Each engine has a bounded multi-producer, single-consumer ring of frame
 * copies (Vyukov's bounded queue: each slot's sequence number says whose
 * turn it is). Producers (any engine of any device) never wait: a full ring
 * drops the frame and counts it, as a full wire would, and the transport
 * retransmits; two engines looping to each other therefore cannot
 * deadlock. The consumer is woken like a doorbell.
 *
 * Devices that may receive from other devices are in a process-wide
 * registry, read without locks on the packet path. A device leaves it
 * only after its engines stopped, then waits until every engine still
 * registered has passed a quiescent point, so no engine holds a pointer to
 * it when it is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "transport/transport.h"

/* Slots per engine ring (limits.h): two QPs' whole windows with their
 * ACKs, so one busy pair streaming both ways rarely drops. The memory is
 * calloc'd (mapped lazily): only slots ever used cost pages. */
#define LOOP_SLOTS		ROXE_LOOP_SLOTS
/* A slot holds the largest frame any device makes: 4096 B of IB MTU plus
 * headers, pad and ICRC (the device open refuses ports with less room). */
#define LOOP_SLOT_BYTES		(4096 + 128)
/* A producer gives up after this many lost races for one slot. */
#define LOOP_CLAIM_TRIES	64

#define LOOP_MAX_DEVS		64

struct loop_slot {
	_Atomic uint32_t	seq;
	uint32_t		len;
};

struct roxe_loop_ring {
	_Atomic uint32_t	head;		/* producers claim slots here */
	char			pad[60];
	uint32_t		tail;		/* the owning engine only */
	struct loop_slot	slot[LOOP_SLOTS];
	uint8_t			data[LOOP_SLOTS][LOOP_SLOT_BYTES];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct roxe_device *) reg[LOOP_MAX_DEVS];
static atomic_uint reg_count;

int roxe_loop_init(struct roxe_engine *e)
{
	struct roxe_loop_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < LOOP_SLOTS; i++)
		atomic_init(&r->slot[i].seq, i);
	e->loop = r;
	return 0;
}

void roxe_loop_fini(struct roxe_engine *e)
{
	free(e->loop);
	e->loop = NULL;
}

bool roxe_loop_pending(const struct roxe_engine *e)
{
	const struct roxe_loop_ring *r = e->loop;

	return r && atomic_load_explicit(&((struct roxe_loop_ring *)r)->slot[r->tail % LOOP_SLOTS].seq,
					 memory_order_acquire) == r->tail + 1;
}

/* The destination address of a frame this process built: Ethernet, up to
 * two VLAN tags, IPv4 or IPv6. false: not an IP frame we can read. */
static bool frame_dgid(const uint8_t *f, uint32_t len, uint8_t dgid[16])
{
	uint32_t off = 12;
	uint16_t type;

	for (int tags = 0; ; tags++) {
		if (off + 2 > len)
			return false;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
		if ((type != ROXE_ETH_P_8021Q && type != ROXE_ETH_P_8021AD) || tags == ROXE_MAX_VLANS)
			break;
		off += 4;
	}
	off += 2;
	if (type == 0x0800 && off + 20 <= len) {
		memset(dgid, 0, 10);
		dgid[10] = dgid[11] = 0xff;
		memcpy(dgid + 12, f + off + 16, 4);
		return true;
	}
	if (type == 0x86dd && off + 40 <= len) {
		memcpy(dgid, f + off + 24, 16);
		return true;
	}
	return false;
}

struct roxe_device *roxe_loop_find(struct roxe_device *dev, const uint8_t gid[16])
{
	if (roxe_dev_is_local(dev, gid))
		return dev;
	/* Alone in the registry (roxed, most programs): nothing to look at
	 * on the path of every frame. */
	if (!dev->loop_registered || atomic_load_explicit(&reg_count, memory_order_relaxed) < 2)
		return NULL;
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++) {
		struct roxe_device *d = atomic_load_explicit(&reg[i], memory_order_acquire);

		if (d && d != dev && d->netns_dev == dev->netns_dev &&
		    d->netns_ino == dev->netns_ino && roxe_dev_is_local(d, gid))
			return d;
	}
	return NULL;
}

struct roxe_device *roxe_loop_target(struct roxe_device *dev, const uint8_t *frame, uint32_t len)
{
	uint8_t dgid[16];

	if (!frame_dgid(frame, len, dgid))
		return NULL;
	return roxe_loop_find(dev, dgid);
}

static void count_drop(struct roxe_device *dev, unsigned engine)
{
	__atomic_fetch_add(&dev->engines[engine].stats->loopback_drop, 1, __ATOMIC_RELAXED);
}

int roxe_loop_deliver(struct roxe_device *dev, const uint8_t *frame, uint32_t len)
{
	struct roxe_engine *e;
	struct roxe_loop_ring *r;
	struct roxe_pkt pkt;
	uint32_t pos, qpn;
	uint64_t one = 1;
	unsigned eng;

	if (roxe_parse(frame, frame + len, len, &pkt) != ROXE_PKT_OK)
		return -EINVAL;
	qpn = roxe_bth_qpn((const struct roxe_bth *)(frame + pkt.bth_off));
	eng = qpn % dev->nengines;	/* the QPN says which engine (verbs/qp.c) */
	e = &dev->engines[eng];
	r = e->loop;
	if (!r || len > LOOP_SLOT_BYTES) {
		count_drop(dev, eng);
		return -ENOBUFS;
	}
	pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (int tries = 0; ; tries++) {
		struct loop_slot *s = &r->slot[pos % LOOP_SLOTS];
		int32_t dif = (int32_t)(atomic_load_explicit(&s->seq, memory_order_acquire) - pos);

		if (dif == 0 && atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
								      memory_order_relaxed,
								      memory_order_relaxed)) {
			memcpy(r->data[pos % LOOP_SLOTS], frame, len);
			s->len = len;
			atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
			break;
		}
		if (dif < 0 || tries == LOOP_CLAIM_TRIES) {	/* full, or too contended */
			count_drop(dev, eng);
			return -ENOBUFS;
		}
		if (dif > 0)
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	}
	/* As a doorbell: seen by an engine about to sleep (it looks at the
	 * ring after setting `sleeping`), or woken here. */
	if (atomic_load(&e->sleeping) && write(e->efd, &one, sizeof(one)) < 0)
		perror("roxe: loopback wakeup");
	return 0;
}

unsigned roxe_loop_rx(struct roxe_engine *e, unsigned budget,
		      void (*rx)(struct roxe_engine *e, const struct roxe_buf *b))
{
	struct roxe_loop_ring *r = e->loop;
	unsigned n = 0;

	if (!r)
		return 0;
	for (; n < budget; n++) {
		struct loop_slot *s = &r->slot[r->tail % LOOP_SLOTS];
		struct roxe_buf b;

		if (atomic_load_explicit(&s->seq, memory_order_acquire) != r->tail + 1)
			break;
		b.data = r->data[r->tail % LOOP_SLOTS];
		b.len = s->len <= LOOP_SLOT_BYTES ? s->len : 0;
		b.cap = LOOP_SLOT_BYTES;
		b.priv = 0;
		e->stats->loopback++;
		rx(e, &b);
		atomic_store_explicit(&s->seq, r->tail + LOOP_SLOTS, memory_order_release);
		r->tail++;
	}
	return n;
}

/* --- the process-wide registry -------------------------------------------- */
int roxe_loop_register(struct roxe_device *dev)
{
	struct stat st;
	int err = -ENOSPC;

	/* Same address, other namespace: another host. The thread opening
	 * the device is in the namespace of its interface. */
	if (stat("/proc/thread-self/ns/net", &st))
		return -errno;
	dev->netns_dev = st.st_dev;
	dev->netns_ino = st.st_ino;
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++)
		if (!atomic_load(&reg[i])) {
			atomic_store(&reg[i], dev);
			atomic_fetch_add(&reg_count, 1);
			dev->loop_registered = true;
			err = 0;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	return err;
}

/* Has every engine of d passed a quiescent point since start (its epochs
 * then)? Polled devices are turned here, as roxe_dev_quiesce does. */
static void quiesce_other(struct roxe_device *d)
{
	unsigned long start[ROXE_MAX_ENGINES];

	for (unsigned i = 0; i < d->nengines; i++)
		start[i] = atomic_load(&d->engines[i].epoch);
	for (unsigned i = 0; i < d->nengines; i++) {
		struct roxe_engine *e = &d->engines[i];

		for (long waited = 0; waited < 10000000; waited++) {	/* bounded: 100 s */
			if (atomic_load(&e->epoch) >= start[i] + 2 ||
			    (atomic_load(&e->sleeping) && !atomic_load(&e->db_head)) ||
			    atomic_load(&e->exited))
				break;
			if (d->polled)
				roxe_engine_poll(e);
			else
				usleep(10);
		}
	}
}

void roxe_loop_unregister(struct roxe_device *dev)
{
	if (!dev->loop_registered)
		return;
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++)
		if (atomic_load(&reg[i]) == dev) {
			atomic_store(&reg[i], NULL);
			atomic_fetch_sub(&reg_count, 1);
		}
	/* Engines still running are those of registered devices: once each
	 * has turned, none is delivering into dev. */
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++) {
		struct roxe_device *d = atomic_load(&reg[i]);

		if (d)
			quiesce_other(d);
	}
	dev->loop_registered = false;
	pthread_mutex_unlock(&reg_lock);
}
