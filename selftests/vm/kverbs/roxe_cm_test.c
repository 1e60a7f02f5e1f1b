// SPDX-License-Identifier: GPL-2.0-only
/*
 * roxe_cm_test.ko: a kernel ULP that connects with rdma_cm, as storage and
 * file ULPs (NVMe-oF, iSER, SMB Direct) do, run in the VM guest by
 * kmod_interop.sh:
 *
 *   insmod roxe_cm_test.ko src=10.77.2.2 dst=10.77.2.1 [port=18515]
 *
 * Loading it listens on dst (kernel rxe's address), connects from src
 * (roxe0's) through rdma_cm, whose REQ/REP/RTU go through both devices'
 * QP1, and sends a message each way over the connected RC QPs, every byte
 * checked. The load fails (EIO) unless that all worked. Then it stays,
 * holding HOLD_RECVS receives posted on roxe0's QP, until roxe0 goes away
 * (kmod_interop.sh kills roxed): at RDMA_CM_EVENT_DEVICE_REMOVAL it does
 * what such a ULP does, ib_drain_qp() and teardown, and logs whether the
 * receives completed as flushed and the drain returned. ib_drain_qp()
 * WARNs if the QP cannot be moved to ERR or its drain WRs cannot be
 * posted; the script fails on any WARNING in dmesg. rmmod tears down the
 * rest and prints the totals.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/inet.h>
#include <linux/completion.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include "ktest.h"

static char *src = "10.77.2.2";
module_param(src, charp, 0444);
static char *dst = "10.77.2.1";
module_param(dst, charp, 0444);
static ushort port = 18515;
module_param(port, ushort, 0444);

#define BUF_BYTES	8192
#define MSG_BYTES	4000
#define HOLD_RECVS	8
#define TIMEOUT		(5 * HZ)

/* One WR in flight, or HOLD_RECVS of them sharing a count. */
struct wr_ctx {
	struct ib_cqe		cqe;
	struct completion	done;
	enum ib_wc_status	status;
	u32			byte_len;
};

/* One side of the connection. */
struct side {
	const char		*name;
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	u8			*buf;		/* [0, 4K): receive, [4K, 8K): send */
	struct completion	event;		/* the event we wait for came */
	enum rdma_cm_event_type	last;
	int			status;
};

static struct side cli = { .name = "client" }, srv = { .name = "server" };
static struct rdma_cm_id *listen_id;
static DEFINE_MUTEX(cli_lock);		/* cli.id: removal against rmmod */
static struct wr_ctx hold;
static atomic_t hold_flushed, hold_other;

static void wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct wr_ctx *w = container_of(wc->wr_cqe, struct wr_ctx, cqe);

	w->status = wc->status;
	w->byte_len = wc->byte_len;
	complete(&w->done);
}

static void hold_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&hold_flushed);
	else
		atomic_inc(&hold_other);
}

static void wr_init(struct wr_ctx *w, void (*done)(struct ib_cq *, struct ib_wc *))
{
	w->cqe.done = done;
	init_completion(&w->done);
}

/* PD, CQ (polled from a workqueue: ib_drain_qp needs ib_alloc_cq's) and
 * an RC QP on the device rdma_cm chose for id.
 */
static int side_qp(struct side *s, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(s->pd))
		return PTR_ERR(s->pd);
	s->cq = ib_alloc_cq(id->device, s, 64, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	init.send_cq = init.recv_cq = s->cq;
	return rdma_create_qp(id, s->pd, &init);
}

static void side_free(struct side *s)
{
	if (s->id && s->id->qp) {
		ib_drain_qp(s->id->qp);
		rdma_destroy_qp(s->id);
	}
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	s->cq = NULL;
	s->pd = NULL;
}

static int post_recv(struct side *s, struct wr_ctx *w, u32 off, u32 len)
{
	struct ib_sge sg = {
		.addr = (u64)(uintptr_t)(s->buf + off), .length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &w->cqe, .sg_list = &sg, .num_sge = 1 };

	return ib_post_recv(s->id->qp, &wr, NULL);
}

static int post_send(struct side *s, struct wr_ctx *w, u32 len)
{
	struct ib_sge sg = {
		.addr = (u64)(uintptr_t)(s->buf + BUF_BYTES / 2), .length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &w->cqe, .sg_list = &sg, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	return ib_post_send(s->id->qp, &wr, NULL);
}

static void record(struct side *s, struct rdma_cm_event *ev)
{
	s->last = ev->event;
	s->status = ev->status;
	complete(&s->event);
}

static struct wr_ctx srv_recv;

/* The listener's and the accepted connection's events (rxe's side). */
static int srv_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1 };
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (srv.id)
			return -EBUSY;		/* one connection */
		srv.id = id;
		err = side_qp(&srv, id);
		if (!err)
			err = post_recv(&srv, &srv_recv, 0, BUF_BYTES / 2);
		if (!err)
			err = rdma_accept(id, &param);
		if (err) {
			side_free(&srv);
			srv.id = NULL;
			pr_info(pfx "FAIL: server: accept: %d\n", err);
			return err;		/* rdma_cm destroys the id */
		}
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return 0;			/* not ours: rxe stays */
	default:
		if (id == srv.id)
			record(&srv, ev);
		return 0;
	}
}

/* roxe0 is going (roxed died): drain, free, and let rdma_cm destroy the
 * id. Runs inside the device's unregistration.
 */
static int cli_removal(struct rdma_cm_id *id)
{
	int flushed;

	mutex_lock(&cli_lock);
	pr_info(pfx "client: RDMA_CM_EVENT_DEVICE_REMOVAL on %s: draining\n",
		dev_name(&id->device->dev));
	side_free(&cli);
	flushed = atomic_read(&hold_flushed);
	CHECK(flushed == HOLD_RECVS && !atomic_read(&hold_other),
	      "device removal: ib_drain_qp returned, %d of %d held receives flushed (%d otherwise)",
	      flushed, HOLD_RECVS, atomic_read(&hold_other));
	cli.id = NULL;
	mutex_unlock(&cli_lock);
	return 1;
}

static int cli_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return cli_removal(id);
	record(&cli, ev);
	return 0;
}

/* Wait for side s's next event; 0 if it is want. */
static int wait_event_of(struct side *s, enum rdma_cm_event_type want)
{
	if (!wait_for_completion_timeout(&s->event, TIMEOUT)) {
		pr_info(pfx "%s: no rdma_cm event (waiting for %s)\n", s->name,
			rdma_event_msg(want));
		return -ETIMEDOUT;
	}
	reinit_completion(&s->event);
	if (s->last != want) {
		pr_info(pfx "%s: %s (status %d), not %s\n", s->name,
			rdma_event_msg(s->last), s->status, rdma_event_msg(want));
		return -EPROTO;
	}
	return 0;
}

static int wait_wr(struct wr_ctx *w)
{
	return wait_for_completion_timeout(&w->done, TIMEOUT) ? 0 : -ETIMEDOUT;
}

static int addr_of(const char *ip, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return in4_pton(ip, -1, (u8 *)&sin->sin_addr.s_addr, -1, NULL) ? 0 : -EINVAL;
}

static int cm_listen(void)
{
	struct sockaddr_in a;
	int err = addr_of(dst, &a);

	if (err)
		return err;
	listen_id = rdma_create_id(&init_net, srv_handler, NULL, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(listen_id))
		return PTR_ERR(listen_id);
	err = rdma_bind_addr(listen_id, (struct sockaddr *)&a);
	return err ?: rdma_listen(listen_id, 1);
}

static int cm_connect(void)
{
	struct rdma_conn_param param = { .responder_resources = 1,
					 .initiator_depth = 1, .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct sockaddr_in s, d;
	int err = addr_of(src, &s) ?: addr_of(dst, &d);

	if (err)
		return err;
	s.sin_port = 0;
	cli.id = rdma_create_id(&init_net, cli_handler, NULL, RDMA_PS_TCP,
				IB_QPT_RC);
	if (IS_ERR(cli.id)) {
		err = PTR_ERR(cli.id);
		cli.id = NULL;
		return err;
	}
	err = rdma_resolve_addr(cli.id, (struct sockaddr *)&s,
				(struct sockaddr *)&d, 2000) ?:
	      wait_event_of(&cli, RDMA_CM_EVENT_ADDR_RESOLVED) ?:
	      rdma_resolve_route(cli.id, 2000) ?:
	      wait_event_of(&cli, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (err)
		return err;
	CHECK(!strcmp(dev_name(&cli.id->device->dev), "roxe0"),
	      "rdma_cm resolved %s -> %s to %s", src, dst,
	      dev_name(&cli.id->device->dev));
	err = side_qp(&cli, cli.id);
	if (err)
		return err;
	err = rdma_connect(cli.id, &param) ?:
	      wait_event_of(&cli, RDMA_CM_EVENT_ESTABLISHED) ?:
	      wait_event_of(&srv, RDMA_CM_EVENT_ESTABLISHED);
	return err;
}

/* A message each way over the connected QPs. */
static void exchange(void)
{
	struct wr_ctx send, recv;
	int err;

	wr_init(&send, wr_done);
	wr_init(&recv, wr_done);
	fill(cli.buf + BUF_BYTES / 2, MSG_BYTES, 31);
	err = post_send(&cli, &send, MSG_BYTES) ?: wait_wr(&send) ?:
	      wait_wr(&srv_recv);
	CHECK(!err && send.status == IB_WC_SUCCESS &&
	      srv_recv.status == IB_WC_SUCCESS &&
	      srv_recv.byte_len == MSG_BYTES && same(srv.buf, MSG_BYTES, 31),
	      "SEND roxe0 -> rxe0 over the rdma_cm connection: %u bytes (err %d)",
	      srv_recv.byte_len, err);

	wr_init(&send, wr_done);
	fill(srv.buf + BUF_BYTES / 2, MSG_BYTES - 1000, 32);
	err = post_recv(&cli, &recv, 0, BUF_BYTES / 2) ?:
	      post_send(&srv, &send, MSG_BYTES - 1000) ?: wait_wr(&send) ?:
	      wait_wr(&recv);
	CHECK(!err && send.status == IB_WC_SUCCESS &&
	      recv.status == IB_WC_SUCCESS &&
	      recv.byte_len == MSG_BYTES - 1000 &&
	      same(cli.buf, MSG_BYTES - 1000, 32),
	      "SEND rxe0 -> roxe0 over the rdma_cm connection: %u bytes (err %d)",
	      recv.byte_len, err);
}

static int hold_receives(void)
{
	int i, err = 0;

	wr_init(&hold, hold_done);
	for (i = 0; i < HOLD_RECVS && !err; i++)
		err = post_recv(&cli, &hold, 0, BUF_BYTES / 2);
	return err;
}

static void cleanup(void)
{
	mutex_lock(&cli_lock);
	if (cli.id) {
		rdma_disconnect(cli.id);
		side_free(&cli);
		rdma_destroy_id(cli.id);
		cli.id = NULL;
	}
	mutex_unlock(&cli_lock);
	if (srv.id) {
		rdma_disconnect(srv.id);
		side_free(&srv);
		rdma_destroy_id(srv.id);
		srv.id = NULL;
	}
	if (!IS_ERR_OR_NULL(listen_id))
		rdma_destroy_id(listen_id);
	kfree(cli.buf);
	kfree(srv.buf);
}

static int __init cm_test_init(void)
{
	int err;

	init_completion(&cli.event);
	init_completion(&srv.event);
	wr_init(&srv_recv, wr_done);
	cli.buf = kzalloc(BUF_BYTES, GFP_KERNEL);
	srv.buf = kzalloc(BUF_BYTES, GFP_KERNEL);
	err = cli.buf && srv.buf ? cm_listen() : -ENOMEM;
	CHECK(!err, "listening on %s:%u (err %d)", dst, port, err);
	if (!err) {
		err = cm_connect();
		CHECK(!err, "connected %s -> %s:%u through rdma_cm (err %d)",
		      src, dst, port, err);
	}
	if (!err)
		exchange();
	if (!err && !failed) {
		err = hold_receives();
		CHECK(!err, "%d receives held on roxe0's QP %u (err %d)",
		      HOLD_RECVS, cli.id->qp->qp_num, err);
	}
	if (err || failed) {
		cleanup();
		pr_info(pfx "%d passed, %d failed\n", passed, failed);
		return -EIO;
	}
	return 0;
}

static void __exit cm_test_exit(void)
{
	cleanup();
	pr_info(pfx "%d passed, %d failed\n", passed, failed);
}

module_init(cm_test_init);
module_exit(cm_test_exit);
MODULE_DESCRIPTION("roxe: a kernel rdma_cm ULP against a peer device (test)");
MODULE_LICENSE("GPL");
