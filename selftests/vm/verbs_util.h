/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM guest programs' small verbs helpers: a check that prints one
 * "ok:"/"FAIL:" line (flushed, so the host sees it even if the program
 * dies next) and remembers a failure, opening a device by name, finding
 * its IPv4 RoCE v2 GID, connecting an RC QP and waiting for a completion.
 */
#ifndef ROXE_VM_VERBS_UTIL_H
#define ROXE_VM_VERBS_UTIL_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static int failed;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok: " __VA_ARGS__);				\
	} else {							\
		printf("FAIL: " __VA_ARGS__);				\
		failed = 1;						\
	}								\
	putchar('\n');							\
	fflush(stdout);							\
} while (0)

/* The device called name, opened; NULL if there is none. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* A RoCE v2 GID of port 1 holding an IPv4 address, its index (-1: none
 * within 10 s; they come a little after registration). */
static inline int find_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	for (int tries = 0; tries < 100; tries++) {
		for (int i = 0; i < 16; i++) {
			struct ibv_gid_entry e;

			if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
			    e.gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    memcmp(e.gid.raw, v4, sizeof(v4)))
				continue;
			*gid = e.gid;
			return i;
		}
		usleep(100000);
	}
	return -1;
}

/* An RC QP through INIT (remote access) and RTR to RTS, towards QP dest at
 * gid, from GID index gidx, resending after 4.096 us * 2^timeout without an
 * ACK; 0 or the failing modify's error. */
static inline int rc_connect_timeout(struct ibv_qp *qp, unsigned int access, uint32_t dest,
				     const union ibv_gid *gid, int gidx, uint8_t timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access,
	};
	int err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* rc_connect_timeout with perftest's default timeout (14: 67 ms). */
static inline int rc_connect(struct ibv_qp *qp, unsigned int access, uint32_t dest,
			     const union ibv_gid *gid, int gidx)
{
	return rc_connect_timeout(qp, access, dest, gid, gidx, 14);
}

/* One completion from cq within secs seconds, polled: its status, -1 if
 * none came (or the poll failed). */
static inline int wc_within(struct ibv_cq *cq, struct ibv_wc *wc, int secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			return -1;
		if (n == 1)
			return (int)wc->status;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > secs)
			return -1;
		usleep(100);
	}
}

#endif
