// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* AF_XDP sockets through NETLINK_SOCK_DIAG (libnl): one dump request
 * (XDP_SHOW_INFO | XDP_SHOW_RING_CFG | XDP_SHOW_UMEM | XDP_SHOW_STATS), one callback a
 * socket. Every attribute is length-checked by nla_parse's policy. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include "xskdiag.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

struct walk {
	int (*fn)(const struct xsk_diag_sock *s, void *arg);
	void *arg;
	int ret;
};

static struct nla_policy xdp_policy[XDP_DIAG_MAX + 1] = {
	[XDP_DIAG_INFO] = { .minlen = sizeof(struct xdp_diag_info) },
	[XDP_DIAG_RX_RING] = { .minlen = sizeof(struct xdp_diag_ring) },
	[XDP_DIAG_TX_RING] = { .minlen = sizeof(struct xdp_diag_ring) },
	[XDP_DIAG_UMEM] = { .minlen = sizeof(struct xdp_diag_umem) },
	[XDP_DIAG_STATS] = { .minlen = sizeof(struct xdp_diag_stats) },
};

static int on_msg(struct nl_msg *msg, void *arg)
{
	struct walk *w = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[XDP_DIAG_MAX + 1];
	struct xdp_diag_msg dm;
	struct xsk_diag_sock s = { 0 };

	if (!nlmsg_valid_hdr(h, sizeof(dm)) ||
	    nlmsg_parse(h, sizeof(dm), tb, XDP_DIAG_MAX, xdp_policy) < 0)
		return NL_SKIP;
	memcpy(&dm, nlmsg_data(h), sizeof(dm));
	if (dm.xdiag_family != AF_XDP || !tb[XDP_DIAG_INFO])
		return NL_SKIP;	/* not bound: no interface to tell */
	{
		struct xdp_diag_info info;

		memcpy(&info, nla_data(tb[XDP_DIAG_INFO]), sizeof(info));
		s.ifindex = info.ifindex;
		s.queue = info.queue_id;
	}
	s.ino = dm.xdiag_ino;
	s.rx = tb[XDP_DIAG_RX_RING] != NULL;
	s.tx = tb[XDP_DIAG_TX_RING] != NULL;
	if (tb[XDP_DIAG_UMEM]) {
		struct xdp_diag_umem u;

		memcpy(&u, nla_data(tb[XDP_DIAG_UMEM]), sizeof(u));
		s.umem = true;
		s.zerocopy = u.flags & XDP_DU_F_ZEROCOPY;
	}
	if (tb[XDP_DIAG_STATS]) {
		struct xdp_diag_stats st;

		memcpy(&st, nla_data(tb[XDP_DIAG_STATS]), sizeof(st));
		s.stats = true;
		s.rx_dropped = st.n_rx_dropped;
		s.rx_invalid = st.n_rx_invalid;
		s.rx_full = st.n_rx_full;
		s.fill_ring_empty = st.n_fill_ring_empty;
		s.tx_invalid = st.n_tx_invalid;
		s.tx_ring_empty = st.n_tx_ring_empty;
	}
	w->ret = w->fn(&s, w->arg);
	return w->ret ? NL_STOP : NL_OK;
}

int xsk_diag_each(int (*fn)(const struct xsk_diag_sock *s, void *arg), void *arg)
{
	struct xdp_diag_req req = {
		.sdiag_family = AF_XDP,
		.xdiag_show = XDP_SHOW_INFO | XDP_SHOW_RING_CFG | XDP_SHOW_UMEM |
			      XDP_SHOW_STATS,
	};
	struct walk w = { .fn = fn, .arg = arg };
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_SOCK_DIAG);
	if (!err)
		err = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, &w);
	if (!err)
		err = nl_send_simple(sk, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, &req, sizeof(req));
	if (err >= 0)
		err = nl_recvmsgs_default(sk);
	nl_socket_free(sk);
	switch (err < 0 ? -err : 0) {
	case 0:
		break;
	case NLE_OBJ_NOTFOUND:	/* the kernel's ENOENT: no xsk_diag */
		return -ENOENT;
	case NLE_PERM:
		return -EPERM;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
	return w.ret < 0 ? w.ret : 0;
}
