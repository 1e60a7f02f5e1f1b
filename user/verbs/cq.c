// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion queues, completion channels and asynchronous events.
 *
 * A CQ is an rxe uAPI ring of struct ib_uverbs_wc: engines produce (under
 * the CQ's spinlock, as QPs of several engines may share it), the
 * application consumes. A CQE that finds the ring full is not dropped
 * silently: the CQ goes into error, poll reports -EOVERFLOW once, and an
 * IBV_EVENT_CQ_ERR async event is queued (IBA 11.4.2.1).
 *
 * Events: roxe_req_notify_cq arms the CQ; the next CQE (or the next
 * solicited one) disarms it, marks it pending and bumps the channel's
 * eventfd, which poll/epoll see. roxe_get_cq_event hands out pending CQs.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "transport/transport.h"
#include "transport/engine.h"
#include "verbs/served.h"

int roxe_create_comp_channel(struct roxe_device *dev, struct roxe_comp_channel **out)
{
	struct roxe_comp_channel *ch;

	if (!dev || !out)
		return -EINVAL;
	if (dev->polled)		/* nobody would run the engine while asleep */
		return -EOPNOTSUPP;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->dev = dev;
	ch->efd = eventfd(0, EFD_CLOEXEC);
	if (ch->efd < 0) {
		int err = -errno;

		free(ch);
		return err;
	}
	pthread_mutex_init(&ch->lock, NULL);
	*out = ch;
	return 0;
}

int roxe_destroy_comp_channel(struct roxe_comp_channel *ch)
{
	if (!ch)
		return -EINVAL;
	if (atomic_load(&ch->users))
		return -EBUSY;
	close(ch->efd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

int roxe_comp_channel_fd(const struct roxe_comp_channel *ch)
{
	return ch ? ch->efd : -EINVAL;
}

int roxe_create_cq(struct roxe_device *dev, int cqe, void *cq_context,
		   struct roxe_comp_channel *ch, struct roxe_cq **out)
{
	struct roxe_queue_geom g;
	struct roxe_cq *cq;

	if (!dev || !out || cqe < 1 || cqe > ROXE_MAX_CQE)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->buf = roxe_queue_buf_alloc((uint32_t)cqe, sizeof(struct ib_uverbs_wc), &g);
	if (!cq->buf) {
		free(cq);
		return -ENOMEM;
	}
	cq->dev = dev;
	cq->context = cq_context;
	cq->cqe = (int)g.mask;
	roxe_queue_init_producer(&cq->prod, cq->buf, g);
	roxe_queue_init_consumer(&cq->cons, cq->buf, g);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ch) {
		cq->channel = ch;
		atomic_fetch_add(&ch->users, 1);
		pthread_mutex_lock(&ch->lock);
		cq->channel_next = ch->cqs;
		ch->cqs = cq;
		pthread_mutex_unlock(&ch->lock);
	}
	*out = cq;
	return 0;
}

int roxe_served_cq_create(struct roxe_device *dev, uint32_t id, struct rxe_queue_buf *buf,
			  struct roxe_queue_geom g,
			  void (*event)(void *ctx, struct roxe_cq *cq, bool solicited),
			  void *ctx, uint64_t tenant, struct roxe_cq **out)
{
	struct roxe_cq *cq;

	if (!dev || !buf || !event || !out || !roxe_queue_geom_ok(g, sizeof(struct ib_uverbs_wc)))
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->dev = dev;
	cq->buf = buf;
	cq->id = id;
	cq->tenant = tenant;
	cq->cqe = (int)g.mask;
	cq->served_event = event;
	cq->served_ctx = ctx;
	roxe_queue_init_producer(&cq->prod, buf, g);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	*out = cq;
	return 0;
}

uint32_t roxe_served_cq_id(const struct roxe_cq *cq)
{
	return cq->id;
}

/*
 * Resizing: move cq's outstanding CQEs (from cons, the consumer's index,
 * up to the producer's) in order to slots 0.. of the empty ring buf, and
 * produce into buf from then on. Engines produce only under cq->lock, so
 * none writes the old ring once this returns 0. -EINVAL when more than
 * limit CQEs are outstanding (the old ring stays). Outstanding includes
 * what the engines make of the doorbells rung before the resize (a UD
 * SEND's completion, a flush): they turn first (roxe_dev_quiesce), as
 * rxe's post_send has done that work before it returns; a resize that
 * counted without them would shrink the CQ below what is coming
 * (pyverbs' test_resize_cq).
 */
static int cq_move(struct roxe_cq *cq, struct rxe_queue_buf *buf, struct roxe_queue_geom g,
		   uint32_t cons, uint32_t limit)
{
	struct roxe_queue old, nq;
	uint32_t n;

	roxe_dev_quiesce(cq->dev);
	pthread_spin_lock(&cq->lock);
	old = cq->prod;
	cons &= old.mask;
	n = (old.index - cons) & old.mask;
	if (n > limit || n > g.mask) {
		pthread_spin_unlock(&cq->lock);
		return -EINVAL;
	}
	__atomic_store_n(&buf->consumer_index, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&buf->producer_index, 0, __ATOMIC_RELAXED);
	roxe_queue_init_producer(&nq, buf, g);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(roxe_queue_producer_slot(&nq), roxe_queue_slot(&old, cons + i),
		       sizeof(struct ib_uverbs_wc));
		roxe_queue_produce(&nq);
	}
	cq->prod = nq;
	cq->buf = buf;
	cq->cqe = (int)g.mask;
	pthread_spin_unlock(&cq->lock);
	return 0;
}

int roxe_resize_cq(struct roxe_cq *cq, int cqe)
{
	struct rxe_queue_buf *old, *buf;
	struct roxe_queue_geom g;
	int err;

	if (!cq || cq->served_event || cqe < 1 || cqe > ROXE_MAX_CQE)
		return -EINVAL;
	buf = roxe_queue_buf_alloc((uint32_t)cqe, sizeof(struct ib_uverbs_wc), &g);
	if (!buf)
		return -ENOMEM;
	old = cq->buf;
	err = cq_move(cq, buf, g, cq->cons.index, (uint32_t)cqe);
	if (err) {
		free(buf);
		return err;
	}
	roxe_queue_init_consumer(&cq->cons, buf, g);
	free(old);
	return 0;
}

/* The application (through the module) maps buf once we return 0; its
 * consumer index in the old ring, read once, says where its CQEs start. */
int roxe_served_cq_resize(struct roxe_cq *cq, struct rxe_queue_buf *buf, struct roxe_queue_geom g)
{
	if (!cq || !buf || !cq->served_event || !roxe_queue_geom_ok(g, sizeof(struct ib_uverbs_wc)))
		return -EINVAL;
	return cq_move(cq, buf, g, __atomic_load_n(&cq->buf->consumer_index, __ATOMIC_ACQUIRE),
		       g.mask);
}

int roxe_destroy_cq(struct roxe_cq *cq)
{
	struct roxe_comp_channel *ch;

	if (!cq)
		return -EINVAL;
	if (atomic_load(&cq->users))
		return -EBUSY;
	ch = cq->channel;
	if (ch) {
		struct roxe_cq **pp;

		pthread_mutex_lock(&ch->lock);
		for (pp = &ch->cqs; *pp; pp = &(*pp)->channel_next)
			if (*pp == cq) {
				*pp = cq->channel_next;
				break;
			}
		pthread_mutex_unlock(&ch->lock);
		atomic_fetch_sub(&ch->users, 1);
	}
	roxe_async_purge(cq->dev, cq);	/* no QP uses it: none raises more */
	pthread_spin_destroy(&cq->lock);
	if (!cq->served_event)
		free(cq->buf);
	free(cq);
	return 0;
}

int roxe_poll_cq(struct roxe_cq *cq, int n, struct ibv_wc *wc)
{
	int i;

	if (!cq || n < 0 || (n && !wc))
		return -EINVAL;
	/* Polled device: the poller is the engine; one turn per call keeps
	 * ACKs and timers going while completions are being reaped. */
	if (cq->dev->polled)
		for (unsigned e = 0; e < cq->dev->nengines; e++)
			roxe_engine_poll(&cq->dev->engines[e]);
	for (i = 0; i < n && !roxe_queue_empty(&cq->cons); i++) {
		const struct ib_uverbs_wc *u = roxe_queue_consumer_slot(&cq->cons);

		memset(&wc[i], 0, sizeof(wc[i]));
		wc[i].wr_id = u->wr_id;
		wc[i].status = (enum ibv_wc_status)u->status;
		wc[i].opcode = (enum ibv_wc_opcode)u->opcode;
		wc[i].vendor_err = u->vendor_err;
		wc[i].byte_len = u->byte_len;
		wc[i].imm_data = u->ex.imm_data;
		wc[i].qp_num = u->qp_num;
		wc[i].src_qp = u->src_qp;
		/* the uverbs bits, in libibverbs' terms */
		wc[i].wc_flags = (u->wc_flags & (ROXE_UWC_GRH | ROXE_UWC_WITH_IMM)) |
				 (u->wc_flags & ROXE_UWC_WITH_INV ? IBV_WC_WITH_INV : 0);
		wc[i].pkey_index = u->pkey_index;
		wc[i].slid = u->slid;
		wc[i].sl = u->sl;
		wc[i].dlid_path_bits = u->dlid_path_bits;
		roxe_queue_consume(&cq->cons);
	}
	/* Completions that made it are reported first; the overrun after. */
	if (i == 0 && atomic_load(&cq->overflow) && !atomic_exchange(&cq->overflow_polled, true))
		return -EOVERFLOW;
	return i;
}

int roxe_req_notify_cq(struct roxe_cq *cq, int solicited_only)
{
	if (!cq || !cq->channel)
		return -EINVAL;
	atomic_store_explicit(&cq->armed, solicited_only ? ROXE_ARM_SOLICITED : ROXE_ARM_ANY,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);	/* see roxe_cq_post() */
	return 0;
}

int roxe_get_cq_event(struct roxe_comp_channel *ch, struct roxe_cq **cq_out, void **ctx)
{
	if (!ch || !cq_out)
		return -EINVAL;
	for (;;) {
		struct roxe_cq *cq;
		uint64_t v;

		/* Hand out a pending CQ; put back the count of the others. */
		pthread_mutex_lock(&ch->lock);
		for (cq = ch->cqs; cq; cq = cq->channel_next)
			if (atomic_exchange(&cq->event_pending, false))
				break;
		pthread_mutex_unlock(&ch->lock);
		if (cq) {
			atomic_fetch_add(&cq->events_unacked, 1);
			*cq_out = cq;
			if (ctx)
				*ctx = cq->context;
			return 0;
		}
		/* A signal ends the wait (-EINTR), as with ibv_get_cq_event, so
		 * the caller can clean up. */
		if (read(ch->efd, &v, sizeof(v)) < 0)
			return -errno;
	}
}

void roxe_ack_cq_events(struct roxe_cq *cq, unsigned n)
{
	if (cq)
		atomic_fetch_sub(&cq->events_unacked, n);
}

const char *roxe_wc_status_str(enum ibv_wc_status st)
{
	static const char *const names[] = {
		[IBV_WC_SUCCESS]		= "success",
		[IBV_WC_LOC_LEN_ERR]		= "local length error",
		[IBV_WC_LOC_QP_OP_ERR]		= "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR]		= "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR]		= "local protection error",
		[IBV_WC_WR_FLUSH_ERR]		= "work request flushed",
		[IBV_WC_MW_BIND_ERR]		= "memory window bind error",
		[IBV_WC_BAD_RESP_ERR]		= "bad response",
		[IBV_WC_LOC_ACCESS_ERR]		= "local access error",
		[IBV_WC_REM_INV_REQ_ERR]	= "remote invalid request",
		[IBV_WC_REM_ACCESS_ERR]		= "remote access error",
		[IBV_WC_REM_OP_ERR]		= "remote operation error",
		[IBV_WC_RETRY_EXC_ERR]		= "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR]	= "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR]	= "local RDD violation",
		[IBV_WC_REM_INV_RD_REQ_ERR]	= "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR]		= "remote aborted",
		[IBV_WC_INV_EECN_ERR]		= "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR]	= "invalid EE context state",
		[IBV_WC_FATAL_ERR]		= "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR]	= "response timeout",
		[IBV_WC_GENERAL_ERR]		= "general error",
	};

	if ((unsigned)st < sizeof(names) / sizeof(names[0]) && names[st])
		return names[st];
	return "unknown status";
}

/* --- asynchronous events ----------------------------------------------------- */

