// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-linger.so: roxe-pingpong's --linger for stock verbs programs in the
 * VM's guest (ibv_rc_pingpong, perftest), through LD_PRELOAD:
 *
 *   LD_PRELOAD=$ROXE_TOP/build/lib/roxe-linger.so ROXE_LINGER_MS=1000 \
 *       ibv_rc_pingpong -d rxe0 ...
 *
 * ibv_destroy_qp() first sleeps ROXE_LINGER_MS milliseconds (unset or 0: no
 * delay; a line on stderr says when it does), so the QP goes on acknowledging the peer's retransmissions after
 * the program's last exchange. On a lossy link the ACK of the peer's last
 * message may be lost; a ping-pong program that destroys its QP as soon as
 * its own counts are complete leaves the peer retrying into a QP that is no
 * longer there, until it gives up (retry counter exceeded). rxe answers in
 * the kernel, so a sleeping process is enough to keep the QP alive.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <infiniband/verbs.h>

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static int (*real)(struct ibv_qp *qp);
	const char *env = getenv("ROXE_LINGER_MS");
	long ms = env ? strtol(env, NULL, 10) : 0;

	if (!real)
		real = (int (*)(struct ibv_qp *))dlvsym(RTLD_NEXT, "ibv_destroy_qp", "IBVERBS_1.1");
	if (!real)
		real = (int (*)(struct ibv_qp *))dlsym(RTLD_NEXT, "ibv_destroy_qp");
	if (!real)
		return -1;
	if (ms > 0) {
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

		fprintf(stderr, "roxe-linger: QP 0x%06x answers for %ld ms more\n", qp->qp_num, ms);
		while (nanosleep(&ts, &ts))
			;
	}
	return real(qp);
}
