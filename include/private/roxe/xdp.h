/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Control of roxe's XDP program (bpf/roxe_xdp.bpf.c) on one interface:
 * load and attach it, find it again from another process, steer QPs to
 * engines, read the counters, detach.
 *
 * Maps are found through the program attached to the interface (the
 * kernel's own record), so this works in any mount namespace; they are
 * also pinned under /sys/fs/bpf/roxe/<ifname>/ for other tools. Note that
 * `ip netns exec` gives each command a fresh /sys, hence a fresh bpffs:
 * pins made there vanish with the command, the attached program does not.
 *
 * Functions return 0 or a negative errno; the ones that matter to a user:
 *   -ENODEV      no such interface
 *   -EBUSY       another XDP program is attached and roxe cannot join it
 *                (its id in *other_prog_id; roxe_xdp_busy_reason says why)
 *   -EEXIST      roxe is already attached to the interface
 *   -ENOENT      roxe is not attached to the interface
 *   -EOPNOTSUPP  the interface cannot run XDP in the mode asked for
 *   -ESTALE      detach: roxe runs in libxdp's dispatcher, whose state
 *                (pins under /sys/fs/bpf/xdp) this mount namespace lacks
 *   -EPERM       not root (CAP_NET_ADMIN and CAP_BPF needed)
 *
 * roxe's own, not installed (include/private/): the functions of this
 * header that roxe's tools call are exported at ROXE_PRIVATE
 * (user/libroxe.map), with no promise to any other program; the rest are
 * libroxe's alone. Applications have the verbs API (roxe/verbs.h).
 */
#ifndef ROXE_XDP_H
#define ROXE_XDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "roxe/maps.h"

#define ROXE_XDP_PROG_NAME	"roxe_xdp"
#define ROXE_XDP_PIN_ROOT	"/sys/fs/bpf/roxe"

/*
 * Sharing the interface. Alone on it, roxe attaches its program directly
 * (as it always has: kernels without freplace, an owned attachment that
 * dies with the process). Where libxdp's multi-program dispatcher
 * (xdp-loader's convention) already runs there, roxe joins it as one more
 * component at this run priority: after programs of libxdp's default
 * priority (50, XDP_DEFAULT_RUN_PRIO) such as xdp-filter, so that they
 * see every frame, RoCE included, before roxe takes its own; roxe's
 * XDP_PASS (not RoCE, not for this host) continues the chain, its
 * XDP_REDIRECT and XDP_DROP end it. A program attached directly (not
 * through the dispatcher) cannot be shared: -EBUSY.
 */
#define ROXE_XDP_RUN_PRIO	100

enum roxe_xdp_mode {
	ROXE_XDP_AUTO = 0,	/* native, else generic */
	ROXE_XDP_NATIVE,	/* in the driver */
	ROXE_XDP_GENERIC,	/* on the skb, any interface, slower */
};

struct roxe_xdp_attach_opts {
	enum roxe_xdp_mode mode;
	unsigned	engines;	/* 0: one per usable CPU, at most one per queue */
	bool		pass_unknown_qp;
	bool		no_pin;		/* do not pin the maps */
	/* Attach through a BPF link owned by this process: the program goes
	 * away with the handle (roxe_xdp_close) or with the process, even one
	 * killed by SIGKILL. Without it the attachment outlives the process
	 * (roxectl attach) until roxe_xdp_detach. */
	bool		owned;
};

/* One interface with roxe's program on it. */
struct roxe_xdp {
	char		ifname[16];
	int		ifindex;
	uint32_t	prog_id;
	enum roxe_xdp_mode mode;	/* as attached: NATIVE or GENERIC */
	struct roxe_config config;
	int		prog_fd;
	int		qp_table_fd;
	int		xsks_fd;
	int		qp_stats_fd;
	int		stats_fd;
	int		config_fd;
	int		local_addrs_fd;
	int		eng_stats_fd;
	int		mcast_fd;	/* roxe_mcast_grps; -1: an older program */
	struct roxe_qp_stats *qp_stats;	/* mmapped roxe_qp_stats, or NULL */
	struct roxe_engine_stats *eng_stats;	/* mmapped roxe_eng_stats, or NULL */
	void		*skel;		/* the skeleton when this process loaded it */
	int		link_fd;	/* owned attachment (BPF link); -1: none */
	/* libxdp's dispatcher that runs roxe's program as one of its
	 * components; 0: roxe's program is attached to the interface itself. */
	uint32_t	dispatcher_id;
	/* This process added the program to the dispatcher with owned: libxdp's
	 * xdp_program, for roxe_xdp_close to take it out again (libxdp pins the
	 * component's link in bpffs, so no fd of ours holds it there). */
	void		*xdp_prog;
	/* roxe_xdp_attach without no_pin: 0, or -errno when the maps could
	 * not be pinned under ROXE_XDP_PIN_ROOT/IFACE (attached all the same;
	 * only other processes' roxe_xdp_open needs them). */
	int		pin_err;
};

/* Load, configure and attach: alone, or into libxdp's dispatcher where one
 * runs; -EBUSY if another program is attached directly. */
int roxe_xdp_attach(const char *ifname, const struct roxe_xdp_attach_opts *o,
		    struct roxe_xdp **out, uint32_t *other_prog_id);
/* Find roxe's program on an interface and open its maps. */
int roxe_xdp_open(const char *ifname, struct roxe_xdp **out, uint32_t *other_prog_id);
/* Detach roxe's program (only if it is roxe's; from the dispatcher, the
 * others left running) and remove the pins. */
int roxe_xdp_detach(const char *ifname, uint32_t *other_prog_id);
/* roxe_xdp_attach's -EBUSY on ifname in one sentence (what is attached,
 * what to do), into buf. */
void roxe_xdp_busy_reason(const char *ifname, char *buf, size_t len);
/* Close the handle; the program stays attached unless the handle owns it
 * (attach_opts.owned). */
void roxe_xdp_close(struct roxe_xdp *x);

/* Steering: QP qpn belongs to engine (0 .. engines-1), or to nobody. */
int roxe_xdp_set_qp(struct roxe_xdp *x, uint32_t qpn, unsigned engine);
int roxe_xdp_clear_qp(struct roxe_xdp *x, uint32_t qpn);
int roxe_xdp_set_pass_unknown(struct roxe_xdp *x, bool pass);

/* Global counters summed over CPUs; one QP's counters. */
int roxe_xdp_read_stats(struct roxe_xdp *x, struct roxe_stats *sum);
int roxe_xdp_read_qp_stats(struct roxe_xdp *x, uint32_t qpn, struct roxe_qp_stats *qs);
/* The mmapped per-QP counters (ROXE_MAX_QPS entries): engines write their
 * fields here. NULL if the mapping failed. */
struct roxe_qp_stats *roxe_xdp_qp_stats_map(struct roxe_xdp *x);

/* The engines' global counters summed; their mmapped array
 * (ROXE_MAX_ENGINES entries, engine e writes entry e), or NULL. */
int roxe_xdp_read_eng_stats(struct roxe_xdp *x, struct roxe_engine_stats *sum);
struct roxe_engine_stats *roxe_xdp_eng_stats_map(struct roxe_xdp *x);

/* The addresses the program takes RoCE frames for (roxe_local_ips):
 * exactly gids[0..n) from now on. sync: the interface's addresses now
 * (roxe_xdp_attach does it before attaching). */
int roxe_xdp_set_local_addrs(struct roxe_xdp *x, const uint8_t (*gids)[16], unsigned n);
int roxe_xdp_sync_local_addrs(struct roxe_xdp *x);
/* Frames to multicast group gid go to engine's sockets (roxe_mcast_grps);
 * engine -1: the group is no longer taken. -EOPNOTSUPP: the attached
 * program predates multicast. */
int roxe_xdp_set_mcast(struct roxe_xdp *x, const uint8_t gid[16], int engine);
/* The interface's IPv4 (mapped) and IPv6 addresses as GIDs, at most max:
 * how many, or -errno. */
int roxe_if_local_gids(const char *ifname, uint8_t (*gids)[16], unsigned max);

/* Mount bpffs at /sys/fs/bpf unless it is there. */
int roxe_bpffs_mount(void);
const char *roxe_xdp_mode_name(enum roxe_xdp_mode m);

#endif /* ROXE_XDP_H */
