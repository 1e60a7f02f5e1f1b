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
 * The frame goes through the owning engine's hand-off ring (handoff.c) as
 * ROXE_HO_CHECK: that engine checks it as a frame from the wire, ICRC and
 * all, and more: the ring carries the QPN of the QP that sent it, so an RC
 * or UC QP takes it only from its own peer QP and a UD QP only with the
 * sender's QPN as the DETH's source. On the wire addresses are all a
 * receiver can check; between two QPs of one host (tenants of one roxed)
 * any other local QP could otherwise inject into a connection, PSN and
 * all (loopback_test: forged_looped_frames_are_dropped). A full ring drops
 * it and counts it, as a full wire would, and the transport retransmits.
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
#include "transport/loopback.h"
#include "transport/handoff.h"

#define LOOP_MAX_DEVS		64

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct roxe_device *) reg[LOOP_MAX_DEVS];
static atomic_uint reg_count;
/* Moves whenever an answer of roxe_loop_find() may change: a device joins
 * or leaves the registry, or one publishes a new local set. 0: never. */
static atomic_uint loop_epoch = 1;

void roxe_loop_epoch_bump(void)
{
	if (atomic_fetch_add(&loop_epoch, 1) == UINT32_MAX)
		atomic_store(&loop_epoch, 1);
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

/* An RC or UC QP sends every frame to its path's address: what
 * roxe_loop_find() said of it holds until the epoch moves or the path
 * does. The device's local set sits in memory the payload copies of a
 * stream evict: reading it per frame costs 20-25 ns of a 4 KiB WRITE
 * frame's ~1.9 us; dgid, beside the answer, was just written to build
 * the frame. */
struct roxe_device *roxe_loop_target_qp(struct roxe_qp *qp, const uint8_t dgid[16])
{
	unsigned ep = atomic_load_explicit(&loop_epoch, memory_order_acquire);

	if (qp->type == IBV_QPT_UD)
		return roxe_loop_find(qp->eng->dev, dgid);
	if (qp->loop_epoch != ep || !roxe_gid_eq(qp->loop_dgid, dgid)) {
		memcpy(qp->loop_dgid, dgid, 16);
		qp->loop_to = roxe_loop_find(qp->eng->dev, qp->loop_dgid);
		qp->loop_epoch = ep;
	}
	return qp->loop_to;
}

/* The frame is the caller's own build: dqpn is what it wrote in the BTH.
 * What the frame says is the receiving engine's to check (ROXE_HO_CHECK). */
int roxe_loop_deliver(struct roxe_device *dev, const uint8_t *frame, uint32_t len,
		      uint32_t dqpn, uint32_t src_qpn)
{
	if (len < ROXE_LOOP_MIN_FRAME)
		return -EINVAL;
	/* The QPN says which engine (verbs/qp.c). */
	if (!roxe_handoff_push(&dev->engines[dqpn % dev->nengines], frame, len, ROXE_HO_CHECK,
			       src_qpn))
		return -ENOBUFS;
	return 0;
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
	roxe_loop_epoch_bump();
	pthread_mutex_unlock(&reg_lock);
	return err;
}

/* quiesce(d) returns once no engine of d holds what it read before the call
 * (roxe_dev_quiesce, which the caller passes: the engine loop sits above
 * this file, on the packet path of every frame sent). */
void roxe_loop_unregister(struct roxe_device *dev, void (*quiesce)(struct roxe_device *))
{
	if (!dev->loop_registered)
		return;
	pthread_mutex_lock(&reg_lock);
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++)
		if (atomic_load(&reg[i]) == dev) {
			atomic_store(&reg[i], NULL);
			atomic_fetch_sub(&reg_count, 1);
		}
	roxe_loop_epoch_bump();		/* before the quiesce: no QP keeps dev */
	/* Engines still running are those of registered devices: once each
	 * has turned, none is delivering into dev. */
	for (unsigned i = 0; i < LOOP_MAX_DEVS; i++) {
		struct roxe_device *d = atomic_load(&reg[i]);

		if (d)
			quiesce(d);
	}
	dev->loop_registered = false;
	pthread_mutex_unlock(&reg_lock);
}
