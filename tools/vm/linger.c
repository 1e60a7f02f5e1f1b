// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-linger.so: roxe-pingpong's --linger, a floor under the local ACK
 * timeout and a wait for the peer's listener, for stock verbs programs in
 * the VM's guest (ibv_rc_pingpong, perftest), through LD_PRELOAD:
 *
 *   LD_PRELOAD=$ROXE_TOP/build/lib/roxe-linger.so ROXE_LINGER_MS=1000 \
 *       ibv_rc_pingpong -d rxe0 ...
 *
 * ibv_destroy_qp() first sleeps ROXE_LINGER_MS milliseconds (unset or 0: no
 * delay; a line on stderr says when it does), so the QP goes on
 * acknowledging the peer's retransmissions after the program's last
 * exchange. On a lossy link the ACK of the peer's last
 * message may be lost; a ping-pong program that destroys its QP as soon as
 * its own counts are complete leaves the peer retrying into a QP that is no
 * longer there, until it gives up (retry counter exceeded). rxe answers in
 * the kernel, so a sleeping process is enough to keep the QP alive.
 *
 * ROXE_MIN_TIMEOUT=N (1..31) raises every local ACK timeout a program sets
 * below N (IBA: 4.096 us << N) to N; 0, infinite, stays. Stock programs set
 * 14 (67 ms), and a TCG guest on a loaded host stalls longer than that:
 * the tests give the QPs the timeout the emulator needs instead of
 * excusing the retransmissions a stall causes.
 *
 * ROXE_DRAIN_SENDS=1: ibv_destroy_qp() of a UD QP first fences its send
 * queue (a signaled SEND to itself, then its completion), so what the
 * program posted unsignaled leaves before the QP goes. And ibv_destroy_ah()
 * only marks the AH: it is destroyed after the next ibv_destroy_qp() (or
 * before its PD is freed). mckey destroys its AH and then its QP with its
 * unsignaled sends still queued. rxe resolves a UD send's AH by its index
 * when its send task runs (rxe_get_av); 6.12 runs that task from a
 * workqueue, often after the program destroyed the AH, so it finds none,
 * completes the send with LOC_QP_OP_ERR and moves the QP to error,
 * flushing the rest. A verbs consumer must keep an AH until the sends that
 * use it completed; the library does that for it.
 *
 * ROXE_CONNECT_WAIT=CMD: rdma_connect() first runs CMD with the peer's
 * port appended (sh -c) and waits for it. perftest -R (4.5-0.17) connects
 * its data QPs right after a handshake that its server leaves only to
 * start listening for them: a REQ that comes first is rejected (no
 * listener: REJECTED 8, or SIDR "unsupported"), rxe to rxe as well. With
 * client and server in one guest, CMD can see the listener.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

/* how long a drain may take, and how often it looks */
#define DRAIN_LOOKS	10000
#define DRAIN_LOOK_NS	1000000

/* libibverbs' own NAME, the one the program would have called */
static void *next_verbs(const char *name)
{
	void *f = dlvsym(RTLD_NEXT, name, "IBVERBS_1.1");

	return f ? f : dlsym(RTLD_NEXT, name);
}

static struct ibv_pd *ah_pd;		/* the last AH made, and on which PD */
static struct ibv_ah_attr ah_last;

/* AHs the program destroyed while ROXE_DRAIN_SENDS holds them back */
#define AH_HELD_MAX	64
static struct ibv_ah *ah_held[AH_HELD_MAX];
static unsigned int ah_held_n;

static int draining(void)
{
	const char *env = getenv("ROXE_DRAIN_SENDS");

	return env && *env == '1';
}

static int real_destroy_ah(struct ibv_ah *ah)
{
	static int (*real)(struct ibv_ah *ah);

	if (!real)
		real = (int (*)(struct ibv_ah *))next_verbs("ibv_destroy_ah");
	return real ? real(ah) : -1;
}

/* Destroy the held AHs of PD (NULL: all of them). */
static void release_held(struct ibv_pd *pd)
{
	unsigned int i, n = 0;

	for (i = 0; i < ah_held_n; i++) {
		if (!pd || ah_held[i]->pd == pd)
			real_destroy_ah(ah_held[i]);
		else
			ah_held[n++] = ah_held[i];
	}
	ah_held_n = n;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	if (draining() && ah && ah_held_n < AH_HELD_MAX) {
		ah_held[ah_held_n++] = ah;
		return 0;
	}
	return real_destroy_ah(ah);
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	static int (*real)(struct ibv_pd *pd);

	if (!real)
		real = (int (*)(struct ibv_pd *))next_verbs("ibv_dealloc_pd");
	if (!real)
		return -1;
	release_held(pd);
	return real(pd);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static struct ibv_ah *(*real)(struct ibv_pd *pd, struct ibv_ah_attr *attr);

	if (!real)
		real = (struct ibv_ah *(*)(struct ibv_pd *, struct ibv_ah_attr *))
			next_verbs("ibv_create_ah");
	if (!real)
		return NULL;
	if (attr && attr->is_global) {
		ah_pd = pd;
		ah_last = *attr;
	}
	return real(pd, attr);
}

static void look_pause(void)
{
	struct timespec ts = { .tv_nsec = DRAIN_LOOK_NS };

	nanosleep(&ts, NULL);
}

/* The fence described above; NULL once it completed, else why not. */
static const char *drain_ud(struct ibv_qp *qp)
{
	const uint64_t tag = 0x726f78652d6472ull;	/* "roxe-dr" */
	static char why[96];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_ah_attr self;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, n, err = 0;

	if (ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_PORT, &qia))
		return "ibv_query_qp failed";
	if (qa.qp_state != IBV_QPS_RTS)
		return "the QP is not in RTS";
	if (ah_pd != qp->pd)
		return "no address handle of its PD to copy";
	self = ah_last;
	self.port_num = qa.port_num;
	if (ibv_query_gid(qp->context, qa.port_num, self.grh.sgid_index, &self.grh.dgid))
		return "ibv_query_gid failed";
	ah = ibv_create_ah(qp->pd, &self);
	if (!ah)
		return "no address handle to itself";
	wr.wr_id = tag;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qp->qp_num;
	wr.wr.ud.remote_qkey = qa.qkey;
	/* a full send queue (ENOMEM) has room once its sends are done */
	for (i = 0; i < DRAIN_LOOKS && (err = ibv_post_send(qp, &wr, &bad)) == ENOMEM; i++)
		look_pause();
	snprintf(why, sizeof(why), "the fence's post: %s", strerror(err));
	for (; !err && i < DRAIN_LOOKS; i++) {
		n = ibv_poll_cq(qp->send_cq, 1, &wc);
		if (n < 0) {
			snprintf(why, sizeof(why), "ibv_poll_cq: %d", n);
			err = -1;
			break;
		}
		if (n == 1 && wc.wr_id == tag) {
			snprintf(why, sizeof(why), "the fence completed with status %d (%s)",
				 wc.status, ibv_wc_status_str(wc.status));
			err = wc.status != IBV_WC_SUCCESS;
			break;
		}
		if (n == 0)
			look_pause();
	}
	if (!err && i >= DRAIN_LOOKS)
		snprintf(why, sizeof(why), "no completion of the fence in %d ms",
			 DRAIN_LOOKS * (DRAIN_LOOK_NS / 1000000));
	real_destroy_ah(ah);
	return err || i >= DRAIN_LOOKS ? why : NULL;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real)(struct ibv_qp *qp);
	const char *env = getenv("ROXE_LINGER_MS");
	long ms = env ? strtol(env, NULL, 10) : 0;
	struct ibv_pd *pd = qp->pd;
	int ret;

	if (!real)
		real = (int (*)(struct ibv_qp *))next_verbs("ibv_destroy_qp");
	if (!real)
		return -1;
	if (draining() && qp->qp_type == IBV_QPT_UD) {
		const char *why = drain_ud(qp);

		if (why)
			fprintf(stderr, "roxe-linger: QP 0x%06x could not drain its send queue: %s\n",
				qp->qp_num, why);
		else
			fprintf(stderr, "roxe-linger: QP 0x%06x sent what was posted to it\n",
				qp->qp_num);
	}
	if (ms > 0) {
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

		fprintf(stderr, "roxe-linger: QP 0x%06x answers for %ld ms more\n", qp->qp_num, ms);
		while (nanosleep(&ts, &ts))
			;
	}
	ret = real(qp);
	release_held(pd);
	return ret;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	static int (*real)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	const char *env = getenv("ROXE_MIN_TIMEOUT");
	long min = env ? strtol(env, NULL, 10) : 0;
	struct ibv_qp_attr raised;

	if (!real)
		real = (int (*)(struct ibv_qp *, struct ibv_qp_attr *, int))
			next_verbs("ibv_modify_qp");
	if (!real)
		return -1;
	if ((attr_mask & IBV_QP_TIMEOUT) && min > 0 && min <= 31 && attr->timeout &&
	    attr->timeout < min) {
		raised = *attr;
		raised.timeout = (uint8_t)min;
		return real(qp, &raised, attr_mask);
	}
	return real(qp, attr, attr_mask);
}

extern char **environ;

/* librdmacm's, looked up at run time: this library is built without its
 * headers and preloaded into programs that do not use it */
int rdma_connect(void *id, void *conn_param)
{
	static int (*real)(void *id, void *conn_param);
	static uint16_t (*dst_port)(void *id);
	const char *cmd = getenv("ROXE_CONNECT_WAIT");
	char line[512];
	pid_t pid;
	int st;

	if (!real)
		real = (int (*)(void *, void *))dlsym(RTLD_NEXT, "rdma_connect");
	if (!dst_port)
		dst_port = (uint16_t (*)(void *))dlsym(RTLD_DEFAULT, "rdma_get_dst_port");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (cmd && *cmd && dst_port) {
		char *argv[] = { "sh", "-c", line, NULL };

		snprintf(line, sizeof(line), "%s %u", cmd, ntohs(dst_port(id)));
		/* spawn, not fork: nothing of the process's registered memory
		 * is copied */
		if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) ||
		    waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			fprintf(stderr, "roxe-linger: '%s' failed: connecting anyway\n", line);
	}
	return real(id, conn_param);
}
