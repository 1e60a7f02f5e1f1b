// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Loading, attaching, finding and detaching roxe's XDP program; QP
 * steering and counters through its maps. See xdp.h.
 *
 * Alone on an interface, roxe attaches through libbpf (bpf_xdp_attach or
 * a BPF link), not through libxdp's multi-program dispatcher even where
 * the kernel could run one (xdp-loader would): the dispatcher needs
 * freplace, which some kernels refuse (EPERM), and a bpffs whose pins
 * hold the component in place, so an owned attachment could no longer die
 * with its process nor a program survive `ip netns exec`'s private /sys;
 * attached directly, roxe behaves the same on every kernel. Where the
 * dispatcher already runs, roxe joins it through libxdp (ROXE_XDP_RUN_PRIO)
 * and leaves on detach with the others running. A program attached
 * directly by someone else is refused (-EBUSY): replacing it would stop it.
 * XDP_FLAGS_UPDATE_IF_NOEXIST makes the kernel refuse if another program
 * got there first.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "roxe/frame.h"
#include "roxe/port.h"
#include "roxe/xdp.h"
#include "roxe_xdp.skel.h"

#define BPF_FS_MAGIC	0xcafe4a11
#define BPF_FS_DIR	"/sys/fs/bpf"

const char *roxe_xdp_mode_name(enum roxe_xdp_mode m)
{
	switch (m) {
	case ROXE_XDP_NATIVE:	return "native";
	case ROXE_XDP_GENERIC:	return "generic";
	default:		return "auto";
	}
}

int roxe_bpffs_mount(void)
{
	struct statfs sf;

	if (statfs(BPF_FS_DIR, &sf) == 0 && sf.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", BPF_FS_DIR, "bpf", 0, "mode=0700") < 0)
		return -errno;
	return 0;
}

static void pin_path(char *buf, size_t len, const char *ifname, const char *name)
{
	snprintf(buf, len, "%s/%s%s%s", ROXE_XDP_PIN_ROOT, ifname,
		 name ? "/" : "", name ? name : "");
}

static const char *const pinned_maps[] = {
	"roxe_qp_table", "roxe_xsks", "roxe_qp_stats", "roxe_stats", "roxe_config",
	"roxe_local_ips", "roxe_eng_stats", "roxe_mcast_grps",
};

static void unpin(const char *ifname)
{
	char path[256];

	for (size_t i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		pin_path(path, sizeof(path), ifname, pinned_maps[i]);
		unlink(path);
	}
	pin_path(path, sizeof(path), ifname, "prog");
	unlink(path);
	pin_path(path, sizeof(path), ifname, NULL);
	rmdir(path);
}

/* Pinning is a convenience for other tools: failures are reported, not fatal. */
static int pin(struct roxe_xdp *x)
{
	int fds[] = { x->qp_table_fd, x->xsks_fd, x->qp_stats_fd, x->stats_fd, x->config_fd,
		      x->local_addrs_fd, x->eng_stats_fd, x->mcast_fd };
	char path[256];
	int err;

	err = roxe_bpffs_mount();
	if (err)
		return err;
	if (mkdir(ROXE_XDP_PIN_ROOT, 0700) < 0 && errno != EEXIST)
		return -errno;
	unpin(x->ifname);	/* leftovers of an earlier attachment */
	pin_path(path, sizeof(path), x->ifname, NULL);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		pin_path(path, sizeof(path), x->ifname, pinned_maps[i]);
		if (bpf_obj_pin(fds[i], path) < 0)
			return -errno;
	}
	pin_path(path, sizeof(path), x->ifname, "prog");
	if (bpf_obj_pin(x->prog_fd, path) < 0)
		return -errno;
	return 0;
}

static struct roxe_xdp *xdp_new(const char *ifname)
{
	struct roxe_xdp *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	snprintf(x->ifname, sizeof(x->ifname), "%s", ifname);
	x->prog_fd = x->qp_table_fd = x->xsks_fd = -1;
	x->qp_stats_fd = x->stats_fd = x->config_fd = -1;
	x->local_addrs_fd = x->eng_stats_fd = x->mcast_fd = -1;
	x->link_fd = -1;
	return x;
}

static void map_qp_stats(struct roxe_xdp *x)
{
	void *p = mmap(NULL, (size_t)ROXE_MAX_QPS * sizeof(struct roxe_qp_stats),
		       PROT_READ | PROT_WRITE, MAP_SHARED, x->qp_stats_fd, 0);

	x->qp_stats = p == MAP_FAILED ? NULL : p;
	p = mmap(NULL, (size_t)ROXE_MAX_ENGINES * sizeof(struct roxe_engine_stats),
		 PROT_READ | PROT_WRITE, MAP_SHARED, x->eng_stats_fd, 0);
	x->eng_stats = p == MAP_FAILED ? NULL : p;
}

/* libxdp reports what it cannot do (a dispatcher's pins unreadable, a
 * kernel without freplace) on stderr; libroxe prints nothing
 * (roxe_xdp_busy_reason says it in roxe's words). */
static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* What an owned attachment into the dispatcher keeps for roxe_xdp_close:
 * libxdp names the interface by ifindex, which means something else in
 * another network namespace (tests and tools hop between them). */
struct owned_component {
	struct xdp_program *prog;
	int		netns_fd;	/* the interface's */
};

/* Owned, in the dispatcher: libxdp rebuilds it without roxe (or removes
 * it, roxe being the last), from the interface's network namespace. */
static void leave_dispatcher(struct roxe_xdp *x)
{
	struct owned_component *c = x->xdp_prog;
	int here = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);

	if (here >= 0 && setns(c->netns_fd, CLONE_NEWNET) == 0) {
		libxdp_print_fn_t old = libxdp_set_print(libxdp_quiet);

		xdp_program__detach(c->prog, x->ifindex, x->mode == ROXE_XDP_GENERIC ?
				    XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
		libxdp_set_print(old);
		setns(here, CLONE_NEWNET);
	}
	if (here >= 0)
		close(here);
	close(c->netns_fd);
	xdp_program__close(c->prog);
	free(c);
	x->xdp_prog = NULL;
}

void roxe_xdp_close(struct roxe_xdp *x)
{
	if (!x)
		return;
	if (x->qp_stats)
		munmap(x->qp_stats, (size_t)ROXE_MAX_QPS * sizeof(struct roxe_qp_stats));
	if (x->eng_stats)
		munmap(x->eng_stats, (size_t)ROXE_MAX_ENGINES * sizeof(struct roxe_engine_stats));
	if (x->link_fd >= 0)
		close(x->link_fd);	/* the last reference: the kernel detaches */
	if (x->xdp_prog)
		leave_dispatcher(x);
	if (x->skel) {
		roxe_xdp_bpf__destroy(x->skel);
	} else {
		int fds[] = { x->prog_fd, x->qp_table_fd, x->xsks_fd, x->qp_stats_fd,
			      x->stats_fd, x->config_fd, x->local_addrs_fd, x->eng_stats_fd,
			      x->mcast_fd };

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	free(x);
}

/* The XDP program on ifindex: its id and mode; 0 when there is none. */
static int query(int ifindex, uint32_t *prog_id, enum roxe_xdp_mode *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	if (err)
		return err;
	*prog_id = q.prog_id;
	if (q.attach_mode == XDP_ATTACHED_SKB) {
		*mode = ROXE_XDP_GENERIC;
	} else if (q.attach_mode == XDP_ATTACHED_MULTI) {
		/* Both kinds attached: someone else's doing; report one. */
		*prog_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		*mode = q.drv_prog_id ? ROXE_XDP_NATIVE : ROXE_XDP_GENERIC;
	} else {
		*mode = ROXE_XDP_NATIVE;
	}
	return 0;
}

static int prog_is_roxe(int prog_fd, struct bpf_prog_info *info, uint32_t *map_ids,
			uint32_t nr_maps)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	info->nr_map_ids = nr_maps;
	info->map_ids = (uint64_t)(uintptr_t)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, info, &len))
		return -errno;
	return strcmp(info->name, ROXE_XDP_PROG_NAME) == 0;
}

/* The dispatcher on ifindex as libxdp sees it, or NULL: none, or not one
 * libxdp can add to (a program attached directly, or a dispatcher whose
 * pins this mount namespace does not see). */
static struct xdp_multiprog *dispatcher_get(int ifindex)
{
	libxdp_print_fn_t old = libxdp_set_print(libxdp_quiet);
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);

	libxdp_set_print(old);
	if (libxdp_get_error(mp) || !mp)
		return NULL;
	if (xdp_multiprog__is_legacy(mp)) {
		xdp_multiprog__close(mp);
		return NULL;
	}
	return mp;
}

/* roxe's program inside the dispatcher main_id: the program of an
 * freplace link whose target is the dispatcher. Found through the kernel's
 * links rather than libxdp's pins, which another mount namespace (`ip
 * netns exec`, a sandbox) does not see: roxectl and `roxectl status` work
 * anywhere. 0: none. */
static uint32_t find_in_dispatcher(uint32_t main_id)
{
	uint32_t id = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info li;
		struct bpf_prog_info pi;
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id), is_roxe;

		if (fd < 0)
			continue;	/* gone meanwhile */
		memset(&li, 0, sizeof(li));
		is_roxe = bpf_obj_get_info_by_fd(fd, &li, &len);
		close(fd);
		if (is_roxe || li.type != BPF_LINK_TYPE_TRACING ||
		    li.tracing.target_obj_id != main_id)
			continue;
		fd = bpf_prog_get_fd_by_id(li.prog_id);
		if (fd < 0)
			continue;
		is_roxe = prog_is_roxe(fd, &pi, NULL, 0);
		close(fd);
		if (is_roxe > 0)
			return li.prog_id;
	}
	return 0;
}

int roxe_xdp_open(const char *ifname, struct roxe_xdp **out, uint32_t *other_prog_id)
{
	struct bpf_prog_info info;
	uint32_t map_ids[16], zero = 0;
	struct roxe_xdp *x;
	int err, ifindex;

	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -ENODEV;
	x = xdp_new(ifname);
	if (!x)
		return -ENOMEM;
	x->ifindex = ifindex;
	err = query(ifindex, &x->prog_id, &x->mode);
	if (err)
		goto fail;
	if (!x->prog_id) {
		err = -ENOENT;
		goto fail;
	}
	x->prog_fd = bpf_prog_get_fd_by_id(x->prog_id);
	if (x->prog_fd < 0) {
		err = -errno;
		goto fail;
	}
	err = prog_is_roxe(x->prog_fd, &info, map_ids, 16);
	if (err == 0) {
		uint32_t rid = find_in_dispatcher(x->prog_id);

		if (other_prog_id && !rid)
			*other_prog_id = x->prog_id;
		err = -EBUSY;
		if (rid) {
			close(x->prog_fd);
			x->dispatcher_id = x->prog_id;
			x->prog_id = rid;
			x->prog_fd = bpf_prog_get_fd_by_id(rid);
			if (x->prog_fd < 0) {
				err = -errno;	/* detached meanwhile */
				goto fail;
			}
			err = prog_is_roxe(x->prog_fd, &info, map_ids, 16);
		}
	}
	if (err <= 0) {
		if (err == 0)
			err = -EBUSY;
		goto fail;
	}
	for (uint32_t i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		uint32_t len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);
		int *slot = NULL;

		if (fd < 0) {
			err = -errno;
			goto fail;
		}
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &len) == 0) {
			if (!strcmp(mi.name, "roxe_qp_table"))
				slot = &x->qp_table_fd;
			else if (!strcmp(mi.name, "roxe_xsks"))
				slot = &x->xsks_fd;
			else if (!strcmp(mi.name, "roxe_qp_stats"))
				slot = &x->qp_stats_fd;
			else if (!strcmp(mi.name, "roxe_stats"))
				slot = &x->stats_fd;
			else if (!strcmp(mi.name, "roxe_config"))
				slot = &x->config_fd;
			else if (!strcmp(mi.name, "roxe_local_ips"))
				slot = &x->local_addrs_fd;
			else if (!strcmp(mi.name, "roxe_eng_stats"))
				slot = &x->eng_stats_fd;
			else if (!strcmp(mi.name, "roxe_mcast_grps"))
				slot = &x->mcast_fd;
		}
		if (slot && *slot < 0)
			*slot = fd;
		else
			close(fd);
	}
	if (x->qp_table_fd < 0 || x->xsks_fd < 0 || x->qp_stats_fd < 0 ||
	    x->stats_fd < 0 || x->config_fd < 0 || x->local_addrs_fd < 0 ||
	    x->eng_stats_fd < 0) {
		err = -ENOENT;	/* a program by our name, but not ours */
		goto fail;
	}
	if (bpf_map_lookup_elem(x->config_fd, &zero, &x->config)) {
		err = -errno;
		goto fail;
	}
	map_qp_stats(x);
	*out = x;
	return 0;
fail:
	roxe_xdp_close(x);
	return err;
}

/* Engines by default: one per usable CPU, as many as the interface's
 * queues and the socket map take (roxe_afxdp_plan); 1 where they take
 * none, for the sockets' open to refuse with its reason. */
static unsigned default_engines(const char *ifname)
{
	struct roxe_afxdp_plan p;
	struct roxe_if_queues q;

	roxe_if_queues(ifname, &q);
	if (roxe_afxdp_plan(0, roxe_cpus_usable(), ROXE_MAX_ENGINES, &q, ROXE_MAX_XSKS, &p))
		return 1;
	return p.engines;
}

/* Attach x's program in mode (XDP_FLAGS_DRV_MODE or _SKB_MODE), unless
 * a program is there already: through a BPF link this process owns, or
 * through netlink (it stays until detached). 0 or a negative errno. */
static int attach_prog(struct roxe_xdp *x, bool owned, uint32_t mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode);
	int fd;

	if (!owned)
		return bpf_xdp_attach(x->ifindex, x->prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST | mode,
				      NULL);
	fd = bpf_link_create(x->prog_fd, x->ifindex, BPF_XDP, &lo);
	if (fd < 0)
		return fd;
	x->link_fd = fd;
	return 0;
}

/* Load x's program (skel, opened) into the dispatcher on the interface,
 * which runs in mode, through libxdp: the program becomes a freplace
 * component, in run-priority order with the others. 0, -EBUSY when the
 * kernel or libxdp will not have it there, or another negative errno. */
static int join_dispatcher(struct roxe_xdp *x, struct roxe_xdp_bpf *skel, bool owned,
			   enum roxe_xdp_mode mode)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = skel->obj,
			    .prog_name = ROXE_XDP_PROG_NAME);
	struct xdp_program *p;
	int err;

	p = xdp_program__create(&po);
	if (!p)
		return -errno;
	err = xdp_program__set_run_prio(p, ROXE_XDP_RUN_PRIO);
	/* XDP_PASS (not ours) goes on to the next program, as the kernel's
	 * stack would get it with roxe alone; a redirected or dropped frame
	 * is finished. */
	if (!err)
		err = xdp_program__set_chain_call_enabled(p, XDP_PASS, true);
	if (!err) {
		libxdp_print_fn_t old = libxdp_set_print(libxdp_quiet);

		err = xdp_program__attach(p, x->ifindex, mode == ROXE_XDP_GENERIC ?
					  XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
		libxdp_set_print(old);
	}
	/* The kernel cannot add or re-attach freplace programs (EOPNOTSUPP),
	 * the dispatcher is older than this libxdp or changed under us: roxe
	 * cannot join, the others run on untouched. */
	if (err == -EOPNOTSUPP || err == -EEXIST || err == -EAGAIN || err == -ENOENT)
		err = -EBUSY;
	if (!err && owned) {
		struct owned_component *c = calloc(1, sizeof(*c));

		if (c && (c->netns_fd = open("/proc/thread-self/ns/net",
					      O_RDONLY | O_CLOEXEC)) >= 0) {
			c->prog = p;
			x->xdp_prog = c;
			return 0;
		}
		free(c);
		xdp_program__detach(p, x->ifindex, mode == ROXE_XDP_GENERIC ?
				    XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
		err = -ENOMEM;
	}
	xdp_program__close(p);	/* detaches nothing: libxdp's pins hold it */
	return err;
}

int roxe_xdp_attach(const char *ifname, const struct roxe_xdp_attach_opts *o,
		    struct roxe_xdp **out, uint32_t *other_prog_id)
{
	struct roxe_xdp_bpf *skel;
	enum roxe_xdp_mode cur_mode;
	uint32_t cur_id = 0, zero = 0;
	struct roxe_xdp *x;
	int err, ifindex;

	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -ENODEV;
	err = query(ifindex, &cur_id, &cur_mode);
	if (err)
		return err;
	if (cur_id) {
		struct xdp_multiprog *mp;
		struct roxe_xdp *other;

		err = roxe_xdp_open(ifname, &other, other_prog_id);
		if (err == 0) {
			roxe_xdp_close(other);
			return -EEXIST;
		}
		if (other_prog_id)
			*other_prog_id = cur_id;
		/* libxdp keeps the dispatcher's state under bpffs: mounted
		 * here, it may show one a loader left there. */
		roxe_bpffs_mount();
		mp = dispatcher_get(ifindex);
		if (!mp)
			return -EBUSY;
		xdp_multiprog__close(mp);
		/* The dispatcher's mode is the interface's: roxe cannot have
		 * another one there. */
		if (o && o->mode != ROXE_XDP_AUTO && o->mode != cur_mode)
			return -EOPNOTSUPP;
	}

	x = xdp_new(ifname);
	if (!x)
		return -ENOMEM;
	x->ifindex = ifindex;
	x->config.engines = o && o->engines ? o->engines : default_engines(ifname);
	x->config.pass_unknown_qp = o && o->pass_unknown_qp;
	if (x->config.engines > ROXE_MAX_ENGINES) {
		err = -EINVAL;
		goto fail;
	}

	skel = roxe_xdp_bpf__open();
	if (!skel) {
		err = errno ? -errno : -EINVAL;
		goto fail;
	}
	x->skel = skel;
	/* Into the dispatcher, libxdp loads it (as a freplace program) and
	 * attaches it at once: until the configuration and local addresses
	 * below are written, the program passes every frame on as not ours. */
	if (cur_id)
		err = join_dispatcher(x, skel, o && o->owned, cur_mode);
	else
		err = roxe_xdp_bpf__load(skel);
	if (err)
		goto fail;
	x->prog_fd = bpf_program__fd(skel->progs.roxe_xdp);
	x->qp_table_fd = bpf_map__fd(skel->maps.roxe_qp_table);
	x->xsks_fd = bpf_map__fd(skel->maps.roxe_xsks);
	x->qp_stats_fd = bpf_map__fd(skel->maps.roxe_qp_stats);
	x->stats_fd = bpf_map__fd(skel->maps.roxe_stats);
	x->config_fd = bpf_map__fd(skel->maps.roxe_config);
	x->local_addrs_fd = bpf_map__fd(skel->maps.roxe_local_ips);
	x->eng_stats_fd = bpf_map__fd(skel->maps.roxe_eng_stats);
	x->mcast_fd = bpf_map__fd(skel->maps.roxe_mcast_grps);
	if (bpf_map_update_elem(x->config_fd, &zero, &x->config, 0)) {
		err = -errno;
		goto fail;
	}
	/* The program does not use it: bound, so that roxe_xdp_open (which
	 * finds maps through the program) sees it. */
	if (bpf_prog_bind_map(x->prog_fd, x->eng_stats_fd, NULL)) {
		err = -errno;
		goto fail;
	}
	/* Before attaching: no moment with frames to us passed as not ours. */
	err = roxe_xdp_sync_local_addrs(x);
	if (err)
		goto fail;

	if (cur_id)
		goto attached;
	err = -EOPNOTSUPP;
	if (!o || o->mode != ROXE_XDP_GENERIC) {
		err = attach_prog(x, o && o->owned, XDP_FLAGS_DRV_MODE);
		x->mode = ROXE_XDP_NATIVE;
	}
	if (err && err != -EBUSY && err != -EEXIST && err != -EPERM &&
	    (!o || o->mode != ROXE_XDP_NATIVE)) {
		err = attach_prog(x, o && o->owned, XDP_FLAGS_SKB_MODE);
		x->mode = ROXE_XDP_GENERIC;
	}
	if (err == -EEXIST) {
		/* Lost a race against another loader. */
		bpf_xdp_query_id(ifindex, 0, other_prog_id ? other_prog_id : &cur_id);
		err = -EBUSY;
	}
	if (err == -EINVAL && o && o->mode == ROXE_XDP_NATIVE)
		err = -EOPNOTSUPP;
	if (err)
		goto fail;
attached:
	if (query(ifindex, &x->prog_id, &cur_mode) == 0)
		x->mode = cur_mode;
	if (cur_id) {
		struct bpf_prog_info info;

		x->dispatcher_id = x->prog_id;
		x->prog_id = prog_is_roxe(x->prog_fd, &info, NULL, 0) > 0 ? info.id : 0;
	}
	if (!o || !o->no_pin)
		x->pin_err = pin(x);	/* the caller's to tell */
	map_qp_stats(x);
	*out = x;
	return 0;
fail:
	roxe_xdp_close(x);
	return err;
}

int roxe_xdp_detach(const char *ifname, uint32_t *other_prog_id)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	struct roxe_xdp *x;
	uint32_t flags;
	int err;

	err = roxe_xdp_open(ifname, &x, other_prog_id);
	if (err)
		return err;
	if (x->dispatcher_id) {
		/* libxdp builds a dispatcher without roxe and swaps it in (or
		 * removes it, roxe being the last): the others run on. */
		libxdp_print_fn_t old;
		struct xdp_multiprog *mp;
		struct xdp_program *p;

		/* libxdp rebuilds the dispatcher from its pins: where this
		 * mount namespace has other ones (`ip netns exec`), it would
		 * take the dispatcher for a plain program and refuse. */
		roxe_bpffs_mount();
		mp = dispatcher_get(x->ifindex);
		if (!mp) {
			roxe_xdp_close(x);
			return -ESTALE;
		}
		xdp_multiprog__close(mp);
		old = libxdp_set_print(libxdp_quiet);
		p = xdp_program__from_id(x->prog_id);
		err = (int)libxdp_get_error(p);
		if (!err)
			err = xdp_program__detach(p, x->ifindex, x->mode == ROXE_XDP_GENERIC ?
						  XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
		xdp_program__close(p);
		libxdp_set_print(old);
		if (!err)
			unpin(ifname);
		roxe_xdp_close(x);
		return err;
	}
	/* Replace exactly our program by nothing: never someone else's. */
	opts.old_prog_fd = x->prog_fd;
	flags = XDP_FLAGS_REPLACE |
		(x->mode == ROXE_XDP_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	err = bpf_xdp_attach(x->ifindex, -1, flags, &opts);
	if (!err && roxe_bpffs_mount() == 0)
		unpin(ifname);
	roxe_xdp_close(x);
	return err;
}

int roxe_xdp_set_qp(struct roxe_xdp *x, uint32_t qpn, unsigned engine)
{
	struct roxe_qp_route r = { .engine = engine, .in_use = 1 };

	if (qpn >= ROXE_MAX_QPS || engine >= x->config.engines)
		return -EINVAL;
	return bpf_map_update_elem(x->qp_table_fd, &qpn, &r, 0) ? -errno : 0;
}

int roxe_xdp_clear_qp(struct roxe_xdp *x, uint32_t qpn)
{
	struct roxe_qp_route r = { 0 };

	if (qpn >= ROXE_MAX_QPS)
		return -EINVAL;
	return bpf_map_update_elem(x->qp_table_fd, &qpn, &r, 0) ? -errno : 0;
}

int roxe_xdp_set_pass_unknown(struct roxe_xdp *x, bool pass)
{
	uint32_t zero = 0;

	x->config.pass_unknown_qp = pass;
	return bpf_map_update_elem(x->config_fd, &zero, &x->config, 0) ? -errno : 0;
}

int roxe_xdp_read_stats(struct roxe_xdp *x, struct roxe_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct roxe_stats *per;
	uint32_t zero = 0;
	int err = 0;

	if (ncpu < 1)
		return ncpu ? ncpu : -EINVAL;
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(x->stats_fd, &zero, per)) {
		err = -errno;
	} else {
		for (int c = 0; c < ncpu; c++) {
			const uint64_t *src = (const uint64_t *)&per[c];
			uint64_t *dst = (uint64_t *)sum;

			for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
				dst[i] += src[i];
		}
	}
	free(per);
	return err;
}

int roxe_xdp_read_qp_stats(struct roxe_xdp *x, uint32_t qpn, struct roxe_qp_stats *qs)
{
	if (qpn >= ROXE_MAX_QPS)
		return -EINVAL;
	if (x->qp_stats) {
		*qs = x->qp_stats[qpn];
		return 0;
	}
	return bpf_map_lookup_elem(x->qp_stats_fd, &qpn, qs) ? -errno : 0;
}

struct roxe_qp_stats *roxe_xdp_qp_stats_map(struct roxe_xdp *x)
{
	return x->qp_stats;
}

int roxe_xdp_read_eng_stats(struct roxe_xdp *x, struct roxe_engine_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint32_t e = 0; e < ROXE_MAX_ENGINES; e++) {
		struct roxe_engine_stats one = { 0 };	/* an older program's map may hold less */

		if (x->eng_stats)
			one = x->eng_stats[e];
		else if (bpf_map_lookup_elem(x->eng_stats_fd, &e, &one))
			return -errno;
		sum->rx_drop_addr += one.rx_drop_addr;
		sum->loopback += one.loopback;
		sum->loopback_drop += one.loopback_drop;
		sum->credit_waits += one.credit_waits;
		sum->credit_lapses += one.credit_lapses;
		sum->kdb_overflows += one.kdb_overflows;
		sum->wakeup_errors += one.wakeup_errors;
		sum->tx_umem_inplace += one.tx_umem_inplace;
		sum->tx_umem_copied += one.tx_umem_copied;
		sum->tx_umem_held_expired += one.tx_umem_held_expired;
	}
	return 0;
}

struct roxe_engine_stats *roxe_xdp_eng_stats_map(struct roxe_xdp *x)
{
	return x->eng_stats;
}

int roxe_if_local_gids(const char *ifname, uint8_t (*gids)[16], unsigned max)
{
	struct ifaddrs *ifa, *i;
	unsigned n = 0;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i && n < max; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			roxe_gid_from_v4(gids[n++],
					 ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(gids[n++], &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
			       16);
		}
	}
	freeifaddrs(ifa);
	return (int)n;
}

int roxe_xdp_set_local_addrs(struct roxe_xdp *x, const uint8_t (*gids)[16], unsigned n)
{
	struct roxe_local_addr key, next;
	uint32_t one = 1;
	bool have;

	if (n > ROXE_MAX_LOCAL_ADDRS)
		return -E2BIG;
	/* Add first, then remove the stale ones: an address in both sets is
	 * never missing for a moment. */
	for (unsigned i = 0; i < n; i++) {
		memcpy(key.gid, gids[i], 16);
		if (bpf_map_update_elem(x->local_addrs_fd, &key, &one, 0))
			return -errno;
	}
	have = bpf_map_get_next_key(x->local_addrs_fd, NULL, &key) == 0;
	for (unsigned guard = 0; have && guard < 4 * ROXE_MAX_LOCAL_ADDRS; guard++) {
		bool keep = false;

		have = bpf_map_get_next_key(x->local_addrs_fd, &key, &next) == 0;
		for (unsigned i = 0; i < n && !keep; i++)
			keep = !memcmp(key.gid, gids[i], 16);
		if (!keep)
			bpf_map_delete_elem(x->local_addrs_fd, &key);
		key = next;
	}
	return 0;
}

int roxe_xdp_set_mcast(struct roxe_xdp *x, const uint8_t gid[16], int engine)
{
	struct roxe_local_addr key;
	uint32_t val = (uint32_t)engine;

	if (x->mcast_fd < 0)
		return -EOPNOTSUPP;	/* a program from before multicast */
	if (engine >= (int)x->config.engines)
		return -EINVAL;
	memcpy(key.gid, gid, 16);
	if (engine < 0)
		return bpf_map_delete_elem(x->mcast_fd, &key) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(x->mcast_fd, &key, &val, 0) ? -errno : 0;
}

int roxe_xdp_sync_local_addrs(struct roxe_xdp *x)
{
	uint8_t gids[ROXE_MAX_LOCAL_ADDRS][16];
	int n = roxe_if_local_gids(x->ifname, gids, ROXE_MAX_LOCAL_ADDRS);

	if (n < 0)
		return n;
	return roxe_xdp_set_local_addrs(x, (const uint8_t (*)[16])gids, (unsigned)n);
}

void roxe_xdp_busy_reason(const char *ifname, char *buf, size_t len)
{
	int ifindex = if_nametoindex(ifname);
	struct xdp_multiprog *mp = NULL;
	enum roxe_xdp_mode mode;
	struct bpf_prog_info info;
	uint32_t id = 0;
	int fd;

	memset(&info, 0, sizeof(info));
	if (!ifindex || query(ifindex, &id, &mode) || !id) {
		snprintf(buf, len, "%s had another XDP program attached, which is gone now: "
			 "try again", ifname);
		return;
	}
	fd = bpf_prog_get_fd_by_id(id);
	if (fd >= 0) {
		prog_is_roxe(fd, &info, NULL, 0);
		close(fd);
	}
	if (roxe_bpffs_mount() == 0)
		mp = dispatcher_get(ifindex);
	if (mp) {
		xdp_multiprog__close(mp);
		snprintf(buf, len, "%s runs libxdp's dispatcher (program id %u), but roxe's "
			 "program could not join it (the kernel cannot attach freplace programs "
			 "there, or the dispatcher is older than this libxdp): see `xdp-loader "
			 "status %s`", ifname, id, ifname);
	} else if (!strcmp(info.name, "xdp_dispatcher")) {
		snprintf(buf, len, "%s runs libxdp's dispatcher (program id %u), but its "
			 "programs' pins are not in this /sys/fs/bpf (another mount namespace or "
			 "bpffs): start roxe where that /sys/fs/bpf is mounted", ifname, id);
	} else {
		snprintf(buf, len, "%s runs XDP program %s (id %u) attached directly, not "
			 "through libxdp's dispatcher, and roxe can share an interface only "
			 "through the dispatcher: load that program with xdp-loader (on a kernel "
			 "that runs the dispatcher; xdp-loader status shows whether it did) before "
			 "roxe, or detach it (ip link set dev %s xdp off)", ifname,
			 info.name[0] ? info.name : "?", id, ifname);
	}
}
