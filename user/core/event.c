// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Asynchronous events: a ring of ROXE_ASYNC_EVENTS per device that engines
 * fill and the application (or roxed) reads; an eventfd counts them. An
 * event names its object by number and pointer; destroying an object drops
 * its unread events, so no event outlives its object. One object has at
 * most ROXE_ASYNC_EVENTS_PER_OBJECT unread: roxed serves every tenant from
 * one device, and a QP driven through error after error, or an SRQ armed
 * again and again, must not fill the ring that carries everyone's events
 * (served_test: one_object_cannot_fill_the_event_ring).
 */
#include <errno.h>
#include <unistd.h>
#include "core/core.h"

/* Events of element's not read yet (under async_lock): a walk of at most
 * the ring, on a path as rare as errors. */
static unsigned pending(const struct roxe_device *dev, const void *element)
{
	unsigned n = 0;

	for (unsigned i = dev->async_head; i != dev->async_tail; i++)
		n += dev->async[i % ROXE_ASYNC_EVENTS].element.qp == element;
	return n;
}

void roxe_async_event(struct roxe_device *dev, enum ibv_event_type type, void *element,
		      uint32_t id)
{
	uint64_t one = 1;
	bool lost = false;

	pthread_mutex_lock(&dev->async_lock);
	if (dev->async_tail - dev->async_head < ROXE_ASYNC_EVENTS &&
	    pending(dev, element) < ROXE_ASYNC_EVENTS_PER_OBJECT) {
		struct roxe_async_event *ev = &dev->async[dev->async_tail++ % ROXE_ASYNC_EVENTS];

		ev->type = type;
		ev->id = id;
		ev->element.qp = element;
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
		struct roxe_async_event ev = dev->async[i % ROXE_ASYNC_EVENTS];

		if (ev.element.qp != element)
			dev->async[keep++ % ROXE_ASYNC_EVENTS] = ev;
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
		*ev = dev->async[dev->async_head++ % ROXE_ASYNC_EVENTS];
		ret = 0;
	}
	pthread_mutex_unlock(&dev->async_lock);
	return ret;
}
