// SPDX-License-Identifier: GPL-2.0-only
/*
 * mcast_verbs: ibv_attach_mcast/ibv_detach_mcast on a device through the
 * stock rxe provider, with the arguments uverbs passes to the driver
 * unchecked (for selftests/vm/kmod_mcast.sh): an RC QP, a unicast GID,
 * too many QPs on a group; each must get rxe's error, and a UD QP its
 * attach; an attached QP cannot be destroyed (EBUSY, as on rxe). Prints
 * one ok:/FAIL: line per check; exit 1 on any failure.
 *
 *   mcast_verbs DEV
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include "verbs_util.h"

#define NUD	57		/* one past rxe's max_mcast_qp_attach (56) */

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void v4_gid(union ibv_gid *g, const char *ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	inet_pton(AF_INET, ip, g->raw + 12);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx = argc > 1 ? open_dev(argv[1]) : NULL;
	struct ibv_device_attr da;
	struct ibv_qp *rc, *ud[NUD];
	union ibv_gid grp, uni;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int n = 0, err;

	if (!ctx) {
		printf("FAIL: no device %s\n", argc > 1 ? argv[1] : "(none given)");
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	rc = cq ? make_qp(pd, cq, IBV_QPT_RC) : NULL;
	if (!rc || ibv_query_device(ctx, &da)) {
		printf("FAIL: setup\n");
		return 1;
	}
	v4_gid(&grp, "239.9.9.9");
	v4_gid(&uni, "10.1.2.3");
	err = ibv_attach_mcast(rc, &grp, 0);
	CHECK(err == EINVAL, "attach an RC QP: %s", strerror(err));
	for (n = 0; n < NUD; n++) {
		ud[n] = make_qp(pd, cq, IBV_QPT_UD);
		if (!ud[n])
			break;
	}
	CHECK(n == NUD, "%d UD QPs", n);
	if (n != NUD)
		return 1;
	err = ibv_attach_mcast(ud[0], &uni, 0);
	CHECK(err == EINVAL, "attach to a unicast GID: %s", strerror(err));
	err = ibv_attach_mcast(ud[0], &grp, 0);
	CHECK(err == 0, "attach a UD QP: %s", strerror(err));
	for (n = 1; n < (int)da.max_mcast_qp_attach && n < NUD; n++)
		if ((err = ibv_attach_mcast(ud[n], &grp, 0)))
			break;
	CHECK(n == (int)da.max_mcast_qp_attach && n < NUD,
	      "max_mcast_qp_attach (%d) QPs attached: %d (%s)", da.max_mcast_qp_attach, n,
	      strerror(err));
	err = ibv_attach_mcast(ud[NUD - 1], &grp, 0);
	CHECK(err == ENOMEM, "one more: %s", strerror(err));
	err = ibv_detach_mcast(ud[1], &grp, 0);
	CHECK(err == 0, "detach: %s", strerror(err));
	err = ibv_attach_mcast(ud[NUD - 1], &grp, 0);
	CHECK(err == 0, "its place taken: %s", strerror(err));
	/* As on rxe, uverbs refuses to destroy an attached QP; detached, it
	 * goes. QPs 2 and 3 stay attached: the process's exit detaches them. */
	err = ibv_destroy_qp(ud[0]);
	CHECK(err == EBUSY, "destroy an attached QP: %s", strerror(err));
	err = 0;
	for (n = 0; n < NUD; n++) {
		if (n == 2 || n == 3)
			continue;
		if (n != 1)
			err += ibv_detach_mcast(ud[n], &grp, 0) != 0;
		err += ibv_destroy_qp(ud[n]) != 0;
	}
	CHECK(err == 0, "detach and destroy the others: %d failed", err);
	return failed;		/* the exit destroys the rest */
}
