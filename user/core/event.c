// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Asynchronous events: a ring of ROXE_ASYNC_EVENTS (256) per device that
 * engines fill and the application (or roxed) reads; an eventfd counts
 * them. An event names its object by number and pointer; destroying an
 * object drops its unread events, so no event outlives its object.
 *
 * roxed serves every tenant (a user, as roxe.ko's command channel counts
 * them: kmod/chan.c) from one device, so the ring that carries everyone's
 * events has two bounds:
 *   - one object (QP, CQ or SRQ) has at most ROXE_ASYNC_EVENTS_PER_OBJECT
 *     (8) unread: a QP driven through error after error, or an SRQ armed
 *     again and again, loses its own later ones (served_test:
 *     one_object_cannot_fill_the_event_ring);
 *   - the tenants share the ring max-min, as the stash shares its slots
 *     (transport/stash.c): while it has room any tenant's event goes in;
 *     once it is full, the newest event of the tenant holding most gives
 *     way if that tenant holds at least two more than the newcomer's,
 *     else the newcomer's is refused. A tenant alone may hold all 256 (32
 *     objects' worth); of k tenants with events unread each keeps at least
 *     256 / k, all within one of each other: 128 of two, 85 of three, 64
 *     of four. So a tenant whose 32 or more objects raise events without
 *     end (each within its 8) holds no more than its share, and another
 *     tenant's event still gets in (served_test:
 *     one_tenant_cannot_fill_the_event_ring).
 * Either way the event lost is counted (async_lost). A served object's
 * tenant is the one roxe.ko named when it was created (kabi.h); a
 * device's own objects (libroxe's, not served) are all one tenant, 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/core.h"

/* Events of element's not read yet (under async_lock): a walk of at most
 * the ring, on a path as rare as errors. */
static unsigned pending(const struct roxe_device *dev, const void *element)
{
	unsigned n = 0;

	for (unsigned i = dev->async_head; i != dev->async_tail; i++)
		n += dev->async[i % ROXE_ASYNC_EVENTS].ev.element.qp == element;
	return n;
}

static int tenant_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ring is full (under async_lock): room for an event of tenant's if
 * the tenant holding most holds at least two more, whose newest event
 * gives way (counted lost). A sort of the ring's tenants: only when full. */
static bool make_room(struct roxe_device *dev, uint64_t tenant)
{
	uint64_t t[ROXE_ASYNC_EVENTS], most_tenant = 0;
	unsigned n = dev->async_tail - dev->async_head, own = 0, most = 0, run;

	for (unsigned i = 0; i < n; i++)
		t[i] = dev->async[(dev->async_head + i) % ROXE_ASYNC_EVENTS].tenant;
	qsort(t, n, sizeof(t[0]), tenant_cmp);
	for (unsigned i = 0; i < n; i += run) {
		for (run = 1; i + run < n && t[i + run] == t[i]; run++)
			;
		if (t[i] == tenant)
			own = run;
		if (run > most) {
			most = run;
			most_tenant = t[i];
		}
	}
	if (most < own + 2)
		return false;
	for (unsigned i = dev->async_tail; i-- != dev->async_head;) {
		if (dev->async[i % ROXE_ASYNC_EVENTS].tenant != most_tenant)
			continue;
		/* the events after it move up: the ring keeps its order */
		for (unsigned j = i; j + 1 != dev->async_tail; j++)
			dev->async[j % ROXE_ASYNC_EVENTS] = dev->async[(j + 1) % ROXE_ASYNC_EVENTS];
		dev->async_tail--;
		break;
	}
	__atomic_fetch_add(&dev->async_lost, 1, __ATOMIC_RELAXED);
	return true;
}

void roxe_async_event(struct roxe_device *dev, enum ibv_event_type type, void *element,
		      uint32_t id, uint64_t tenant)
{
	uint64_t one = 1;
	bool lost = false;

	pthread_mutex_lock(&dev->async_lock);
	if (pending(dev, element) < ROXE_ASYNC_EVENTS_PER_OBJECT &&
	    (dev->async_tail - dev->async_head < ROXE_ASYNC_EVENTS || make_room(dev, tenant))) {
		struct roxe_async_slot *s = &dev->async[dev->async_tail++ % ROXE_ASYNC_EVENTS];

		s->ev.type = type;
		s->ev.id = id;
		s->ev.element.qp = element;
		s->tenant = tenant;
	} else {
		__atomic_fetch_add(&dev->async_lost, 1, __ATOMIC_RELAXED);
		lost = true;
	}
	pthread_mutex_unlock(&dev->async_lock);
	if (!lost && write(dev->async_efd, &one, sizeof(one)) < 0)
		return;
}

void roxe_async_purge(struct roxe_device *dev, const void *element)
{
	unsigned keep;

	pthread_mutex_lock(&dev->async_lock);
	keep = dev->async_head;
	for (unsigned i = dev->async_head; i != dev->async_tail; i++) {
		struct roxe_async_slot s = dev->async[i % ROXE_ASYNC_EVENTS];

		if (s.ev.element.qp != element)
			dev->async[keep++ % ROXE_ASYNC_EVENTS] = s;
	}
	dev->async_tail = keep;
	pthread_mutex_unlock(&dev->async_lock);
}

uint64_t roxe_async_lost(const struct roxe_device *dev)
{
	return dev ? __atomic_load_n(&dev->async_lost, __ATOMIC_RELAXED) : 0;
}

int roxe_async_fd(const struct roxe_device *dev)
{
	return dev ? dev->async_efd : -EINVAL;
}

int roxe_get_async_event(struct roxe_device *dev, struct roxe_async_event *ev)
{
	int ret = -EAGAIN;

	if (!dev || !ev)
		return -EINVAL;
	pthread_mutex_lock(&dev->async_lock);
	if (dev->async_head != dev->async_tail) {
		*ev = dev->async[dev->async_head++ % ROXE_ASYNC_EVENTS].ev;
		ret = 0;
	}
	pthread_mutex_unlock(&dev->async_lock);
	return ret;
}
