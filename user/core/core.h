/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The objects the transport works on, and what engines do with them: the
 * device and its lookup tables, PDs, MRs, CQs, SRQs, AHs, the port's own
 * addresses, async events. The QP and the engines are the transport's
 * (transport/transport.h); creating and destroying objects is the verbs'
 * (verbs/). Nothing here calls up into either.
 *
 * Threads: MRs and QPs are looked up by key/number in device tables that
 * engines read without locks; destroying one unpublishes it, then waits
 * until every engine has passed a quiescent point (roxe_dev_quiesce)
 * before freeing it. CQs and SRQs may be shared by QPs of several engines:
 * producing a CQE or taking an SRQ WQE takes that object's spinlock.
 */
#ifndef ROXE_CORE_H
#define ROXE_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "roxe/verbs.h"
#include "roxe/queue.h"
#include "roxe/frame.h"
#include "roxe/maps.h"
#include "roxe/kabi.h"
#include "roxe/limits.h"


/* Access a peer uses through the R_Key (FLUSH's global visibility too);
 * persistence is not among them: no roxe MR is persistent memory. */
#define ROXE_REMOTE_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
				 IBV_ACCESS_REMOTE_ATOMIC | ROXE_ACCESS_FLUSH_GLOBAL)
#define ROXE_KNOWN_ACCESS	(IBV_ACCESS_LOCAL_WRITE | ROXE_REMOTE_ACCESS)
/* What an MR may grant: also the binding of memory windows to it. */
#define ROXE_MR_ACCESS		(ROXE_KNOWN_ACCESS | IBV_ACCESS_MW_BIND)
/* What a QP's qp_access_flags may hold: every access bit the verbs define,
 * as rxe and mlx5 take them (programs hand a QP their MR's flags: pyverbs'
 * ODP tests do); only the remote ones mean anything to a QP. */
#define ROXE_QP_ACCESS		(ROXE_KNOWN_ACCESS | ROXE_ACCESS_FLUSH_PERSISTENT | \
				 IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
				 IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
				 IBV_ACCESS_OPTIONAL_RANGE)

/* struct roxe_cq.armed */
enum { ROXE_ARM_NONE = 0, ROXE_ARM_ANY = 1, ROXE_ARM_SOLICITED = 2 };

struct roxe_engine;
struct roxe_qp;
struct roxe_port;
struct roxe_xdp;
struct roxe_afxdp;
struct roxe_mcast;

struct roxe_pd {
	struct roxe_device	*dev;
	atomic_uint		users;		/* MRs, QPs, SRQs, AHs */
};

/* roxe.ko's fast-registration MRs: the module puts pages behind the
 * window (map) or takes them away (!map); 0 or -errno. */
typedef int roxe_mr_window_fn(void *ctx, uint32_t key, bool map);

struct roxe_mr_priv {
	struct roxe_mr		pub;
	struct roxe_pd		*pd;
	uint64_t		iova;		/* the MR's first byte as the wire names it */
	uint8_t			*host;		/* ... and where it is in this process */
	atomic_bool		valid;		/* false after SEND_WITH_INV / LOCAL_INV */
	atomic_uint		num_mw;		/* windows bound to it: no dereg */
	atomic_bool		dying;		/* a dereg is looking at num_mw */
	struct ibv_mr		ibv;		/* roxe_mr_ibv(): names it in BIND_MW WRs */
	/* Engines read the fields above without locks, as a seqlock: gen is
	 * odd while a fast-registration MR is (re)registered or invalidated
	 * (writers hold write_lock), and moves on with each, so an access
	 * that saw the same even gen before and after used one registration
	 * throughout; one that did not fails with a protection error. */
	atomic_uint		gen;
	pthread_spinlock_t	write_lock;
	/* a fast-registration MR (REG_MR WQEs register it): its window */
	uint8_t			*window;	/* NULL: an ordinary MR */
	bool			umem;		/* in the UMEM's reserve (roxe_alloc_umem_mr) */
	/* roxe.ko's on-demand paging: touched only under odp.c's guard */
	bool			odp;
	uint64_t		window_bytes;
	roxe_mr_window_fn	*window_fn;
	void			*window_ctx;
};

/* A memory window (verbs/mw.c makes them, core/mw.c binds and resolves
 * them). Engines read the bound state without locks under the same kind of
 * seqlock as an MR's: gen odd while a bind or an invalidation rewrites it. */
enum roxe_mw_state { ROXE_MW_FREE, ROXE_MW_VALID };
struct roxe_mw_priv {
	struct ibv_mw		ibv;		/* the application's: type, rkey */
	struct roxe_pd		*pd;
	uint32_t		type;		/* IBV_MW_TYPE_1 or _2 */
	/* bound state (type 1 starts VALID with length 0, type 2 FREE) */
	uint32_t		rkey;
	uint32_t		state;		/* enum roxe_mw_state */
	uint32_t		access;		/* IBV_ACCESS_REMOTE_*, ZERO_BASED */
	uint32_t		qpn;		/* type 2: the QP it is bound to */
	uint64_t		addr, length;	/* in its MR's iova space */
	struct roxe_mr_priv	*mr;		/* NULL while length is 0 */
	atomic_uint		gen;
	pthread_spinlock_t	write_lock;
};

/* Is key a memory window's? */
static inline bool roxe_key_is_mw(uint32_t key)
{
	return key >> 8 >= ROXE_MW_INDEX_BASE && key >> 8 < ROXE_MW_INDEX_BASE + ROXE_MAX_MW;
}

struct roxe_comp_channel {
	struct roxe_device	*dev;
	int			efd;		/* eventfd: a count of pending events */
	pthread_mutex_t		lock;
	struct roxe_cq		*cqs;		/* CQs using this channel */
	atomic_uint		users;
};

struct roxe_cq {
	struct roxe_device	*dev;
	struct roxe_comp_channel *channel;
	struct roxe_cq		*channel_next;
	void			*context;
	struct rxe_queue_buf	*buf;
	struct roxe_queue	prod;		/* engines, under lock */
	struct roxe_queue	cons;		/* the application */
	pthread_spinlock_t	lock;
	int			cqe;		/* capacity granted */
	atomic_int		armed;		/* 0, or IBV_WC_... 1 any, 2 solicited */
	atomic_bool		event_pending;
	atomic_bool		overflow;	/* lost a CQE: reported once, then error */
	bool			overflow_reported;	/* async event queued (engines) */
	atomic_bool		overflow_polled;	/* -EOVERFLOW returned (poller) */
	atomic_uint		lost;		/* CQEs the overrun cost: counted after
						 * its event is queued (tests wait on it) */
	atomic_uint		users;		/* QPs */
	atomic_uint		events_unacked;
	/* Served CQs (roxed): the ring is another process's; a CQE that may
	 * raise a completion event calls this instead of the channel logic
	 * (solicited: a solicited or an error CQE). */
	void			(*served_event)(void *ctx, struct roxe_cq *cq, bool solicited);
	void			*served_ctx;
	uint32_t		id;		/* served: the owner's CQ number */
	uint64_t		tenant;		/* whose its events are (event.c) */
};

struct roxe_srq {
	struct roxe_device	*dev;
	struct roxe_pd		*pd;
	struct rxe_queue_buf	*buf;
	struct roxe_queue	prod;		/* the application, under post lock */
	struct roxe_queue	cons;		/* engines, under lock */
	pthread_spinlock_t	post_lock;
	pthread_spinlock_t	lock;
	uint32_t		max_wr, max_sge;
	atomic_uint		limit;		/* 0: disarmed */
	atomic_uint		users;
	bool			served;		/* the ring is another process's */
	uint32_t		id;		/* served: the owner's SRQ number */
	uint64_t		tenant;		/* whose its events are (event.c) */
};

/* An address handle roxe.ko created for an application (ROXE_KOP_CREATE_AH):
 * what ib_core resolved, by AH number; its UD WQEs name it by that number
 * (rxe_send_wr.wr.ud.ah_num), never by an address vector of their own. */
struct roxe_served_ah {
	struct roxe_pd		*pd;
	struct roxe_frame_addr	addr;		/* GIDs, dmac, tclass, hop limit, flow */
};

/* An address handle: rxe's AV, so UD WQEs carry it by value as in the uAPI. */
struct roxe_ah {
	struct ibv_ah		ibv;		/* what the application holds */
	struct roxe_pd		*pd;
	struct rxe_av		av;
};

struct roxe_addr_watch;

/* An unread async event and its object's tenant: for a served object the
 * one roxe.ko named (kabi.h), else 0, one for all of a device's own. */
struct roxe_async_slot {
	struct roxe_async_event	ev;
	uint64_t		tenant;
};

struct roxe_local_set {
	unsigned		n;
	uint8_t			gid[ROXE_MAX_LOCAL_ADDRS][16];
};

/* An engine's slot in roxe_device.window_users: the fast-registration MR
 * it is copying to or from (core/mr.c), else NULL. Padded so that no two
 * engines' slots share a cache line. */
struct roxe_window_user {
	_Atomic(const struct roxe_mr_priv *) mr;
	char			pad[64 - sizeof(void *)];
};

struct roxe_device {
	unsigned		nengines;
	bool			polled;		/* no engine threads: poll_cq drives */
	unsigned		rt_priority;	/* engine threads' SCHED_FIFO priority; 0 none */
	bool			ooo_stash;	/* responders keep frames past a gap (stash.c) */
	bool			xdp_copy;	/* AF_XDP sockets in copy mode even where zero-copy is */
	/* frame tracing (transport/trace.c), as the attributes set it */
	void			(*trace)(void *arg, const char *line);
	void			*trace_arg;
	bool			trace_recorder;
	_Atomic int		last_err;	/* roxe_device_last_error() */
	/* the interface (AFXDP, UDP backends) */
	char			ifname[16];
	int			ifindex;
	struct roxe_xdp		*xdp;		/* the attached program and its maps */
	bool			xdp_ours;	/* we attached it (a BPF link): it leaves with us */
	struct roxe_afxdp	*afxdp;
	uint64_t		umem_mr_bytes;	/* its reserve (roxe_alloc_umem_mr) */
	/* the AF_XDP ports taken from it: destroyed at close, else the group
	 * (its sockets bound to the queues, its UMEM) outlives the device */
	struct roxe_port	*afxdp_ports[ROXE_MAX_ENGINES];
	unsigned		afxdp_nports;
	struct roxe_port	*udp_port;
	/* per-QP counters: the mmapped roxe_qp_stats map, else our own */
	struct roxe_qp_stats	*qp_stats;
	bool			qp_stats_own;
	struct roxe_engine	*engines;	/* nengines of them (transport/) */
	enum roxe_backend	backend;
	uint32_t		mtu;		/* active IB MTU, bytes */
	uint8_t			ecn;		/* ECN bits frames leave with: ECT(0) or Not-ECT */
	uint64_t		cnp_interval_ns; /* at most one CNP per QP per this */
	uint8_t			gid[16];
	uint8_t			mac[6];
	/* The port's own addresses (gid among them): the only UD sources we
	 * send from, the only destinations UD takes frames for (the XDP
	 * program's roxe_local_ips holds the same). Engines read it without
	 * locks; roxe_device_refresh_addrs replaces it whole, then frees the
	 * old one after roxe_dev_quiesce. */
	_Atomic(struct roxe_local_set *) local;
	/* The GID table (roxe_query_gid, sgid_index): rxe's layout on an
	 * interface (verbs/device.c); control path only, under addr_lock,
	 * which also orders the local set's replacements. */
	pthread_mutex_t		addr_lock;
	unsigned		gid_len;
	bool			gid_valid[ROXE_GID_TBL_EMB];
	uint8_t			gid_tbl[ROXE_GID_TBL_EMB][16];
	struct roxe_addr_watch	*addr_watch;	/* rtnetlink events (port/addrwatch.c) */
	/* loopback across devices (transport/loopback.c): in the process's
	 * registry, and the network namespace it was opened in */
	bool			loop_registered;
	uint64_t		netns_dev, netns_ino;
	/* engines' global counters: the mmapped roxe_eng_stats, else our own */
	struct roxe_engine_stats *eng_stats;
	bool			eng_stats_own;
	/* lookups read by engines without locks (see top) */
	_Atomic(struct roxe_qp *) *qps;		/* by QPN */
	_Atomic(struct roxe_mr_priv *) *mrs;	/* by key >> 8 */
	_Atomic(struct roxe_mw_priv *) *mws;	/* by (key >> 8) - ROXE_MW_INDEX_BASE */
	_Atomic(struct roxe_served_ah *) *ahs;	/* by AH number (roxed) */
	/* UD multicast groups (transport/mcast.c), made on first attach */
	_Atomic(struct roxe_mcast *) mcast;
	pthread_mutex_t		lock;		/* allocation of QPNs and keys */
	uint32_t		next_qpn, next_mr, next_mw;
	uint8_t			key_gen;
	/* async events */
	int			async_efd;
	pthread_mutex_t		async_lock;
	struct roxe_async_slot	async[ROXE_ASYNC_EVENTS];
	unsigned		async_head, async_tail;
	uint64_t		async_lost;	/* refused or given way (event.c) */
	/* engine i's access to a fast-registration MR (core/mr.c), and how
	 * long a REG_MR waits for another's to end (0: core/mr.c's default) */
	struct roxe_window_user	window_users[ROXE_MAX_ENGINES];
	uint64_t		window_wait_ns;
};

/* --- odp.c: touching roxe.ko's on-demand paging MRs --- */
/* Install the guard's signal handlers (once per process); 0 or -errno. */
int roxe_odp_init(void);
typedef void roxe_odp_fn(void *arg);
/* fn(arg), which touches [p, p+len) of such an MR (and nothing else that
 * can fault): 0; -EAGAIN: a page is not present yet (the module faults it
 * in meanwhile: try again later), -EFAULT: the application maps nothing
 * there. Nothing after the faulting instruction ran. */
int roxe_odp_touch(const void *p, size_t len, roxe_odp_fn *fn, void *arg);

/* --- mr.c: MRs as engines use them --- */
/* Which way bytes go between a buffer and an MR, or the MRs an SGE list's
 * lkeys name (rxe's enum rxe_mr_copy_dir). */
enum roxe_copy_dir { ROXE_TO_MR, ROXE_FROM_MR };
/* Which of its keys names an MR: the lkey (local SGEs, LOCAL_INV) or the
 * rkey (remote access, SEND_WITH_INV; rxe's enum rxe_mr_lookup_type). */
enum roxe_lookup { ROXE_LOOKUP_LOCAL, ROXE_LOOKUP_REMOTE };

struct roxe_mr_priv *roxe_mr_lookup(struct roxe_device *dev, uint32_t key, enum roxe_lookup type);
/* Check that [va, va+len) lies in the MR, that it belongs to pd, and that
 * it grants access; returns 0 or -EACCES (access) / -ERANGE (bounds). */
int roxe_mr_check(const struct roxe_mr_priv *mr, const struct roxe_pd *pd,
		  uint64_t va, uint64_t len, unsigned access);
/* One access to an MR, maybe through a window: which registration (and
 * which binding) it used (roxe_mr_map). */
struct roxe_mr_access {
	const struct roxe_mr_priv *mr;
	uint32_t		gen;
	const struct roxe_mw_priv *mw;	/* NULL: the rkey named the MR */
	uint32_t		mw_gen;
};
/*
 * Remote access by a QP (number qpn, of pd) through rkey: an MR's rkey, or
 * a window's (roxe_key_is_mw): then the window must be bound (a type 2
 * window to this QP), in pd, grant access, and [va, va+len) must lie in
 * the window (a zero-based one: va counts from the window's start); the
 * bytes are its MR's. roxe_rkey_check: 0 or -EACCES.
 */
int roxe_rkey_check(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		    uint32_t rkey, uint64_t va, uint64_t len, unsigned access);
/* Where [va, va+len) that rkey names is in this process, after
 * roxe_rkey_check()'s checks; NULL if any fails. Once the bytes are
 * copied, roxe_mr_access_ok(acc) says whether the registration (and the
 * window's binding) held meanwhile. */
void *roxe_mr_map(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn, uint32_t rkey,
		  uint64_t va, uint64_t len, unsigned access, struct roxe_mr_access *acc);
bool roxe_mr_access_ok(const struct roxe_mr_access *acc);
/* An access mapped and then given up, no byte copied. */
void roxe_mr_access_end(const struct roxe_mr_access *acc);
/*
 * The turn of engine number engine of dev runs on this thread from
 * roxe_mr_turn_begin to roxe_mr_turn_end (transport/engine.c): its
 * accesses to fast-registration MRs are then in its window_users slot,
 * where a REG_MR on another engine sees them (mr.c).
 */
void roxe_mr_turn_begin(struct roxe_device *dev, unsigned engine);
void roxe_mr_turn_end(void);
/* The 64-bit atomics of a responder on p, mapped by acc (aligned):
 * CMP_SWAP (a: compare, b: swap), FETCH_ADD (a: add), WRITE (a: the value,
 * a release store); *orig: the value before. 0, or an ODP MR's -EAGAIN
 * or -EACCES (odp.c; nothing done). acc is the caller's to end. */
enum roxe_atomic_op { ROXE_ATOMIC_CMP_SWAP, ROXE_ATOMIC_FETCH_ADD, ROXE_ATOMIC_WRITE };
int roxe_mr_atomic(const struct roxe_mr_access *acc, uint64_t *p, enum roxe_atomic_op op,
		   uint64_t a, uint64_t b, uint64_t *orig);
/* Copy len bytes between buf and [va, va+len) of what rkey names, with
 * roxe_mr_map()'s checks; 0 or -EACCES; an ODP MR's page not present yet,
 * -EAGAIN (odp.c: nothing copied from it on; try again later). The same
 * for the copies below. */
int roxe_mr_copy(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn, uint32_t rkey,
		 uint64_t va, void *buf, uint32_t len, unsigned access, enum roxe_copy_dir dir);
/* From the MR into a frame's payload, *crc (the ICRC so far) updated over
 * the copy as it is made (roxe_icrc_update_copy). */
int roxe_mr_read_icrc(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		      uint32_t rkey, uint64_t va, void *buf, uint32_t len, unsigned access,
		      uint32_t *crc);
/* Copy between a local SGE list (lkeys) and a buffer; ROXE_TO_MR (into
 * the SGEs) needs LOCAL_WRITE. offset: bytes into the SGE list.
 * Returns 0, -EACCES or -ERANGE (a bad lkey, access, or bounds). */
int roxe_sge_copy(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sge,
		  unsigned num_sge, uint32_t offset, void *buf, uint32_t len,
		  enum roxe_copy_dir dir);
/* From the SGEs into a frame's payload, *crc (the ICRC so far) updated over
 * the copy as it is made (roxe_icrc_update_copy). */
int roxe_sge_copy_icrc(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sge,
		       unsigned num_sge, uint32_t offset, void *buf, uint32_t len, uint32_t *crc);
/*
 * In place (roxe_alloc_umem_mr): where [offset, offset+len) of the SGE
 * list (or [va, va+len) through rkey) lies, when it is within one SGE of an
 * MR in the UMEM's reserve, with *crc updated over those bytes (read where
 * they are, not copied). 1: so (*host set); 0: not (nothing done; the copy
 * reports any error), *umem then says whether it was a UMEM MR all the
 * same (copied: counted as such). crc NULL: only *umem, 0.
 */
int roxe_sge_inplace(struct roxe_device *dev, struct roxe_pd *pd, const struct rxe_sge *sge,
		     unsigned num_sge, uint32_t offset, uint32_t len, const uint8_t **host,
		     uint32_t *crc, bool *umem);
int roxe_mr_inplace(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		    uint32_t rkey, uint64_t va, uint32_t len, unsigned access,
		    const uint8_t **host, uint32_t *crc, bool *umem);
/* Execute a REG_MR WQE (include/uapi/roxe/kabi.h) of a QP of pd: an IBV_WC_* status. */
int roxe_mr_fast_reg(struct roxe_device *dev, const struct roxe_pd *pd,
		     const struct rxe_send_wqe *w);
/* LOCAL_INV, SEND_WITH_INV of key by a QP of pd: a fast-registration
 * MR goes invalid (its window empties). 0, or -EINVAL when key names no
 * valid fast-registration MR of pd: ordinary MRs are never invalidated
 * (IBA 10.6.3.5, as rxe). */
int roxe_mr_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t key,
		       enum roxe_lookup type);

/* --- mw.c: memory windows --- */
/* Execute a BIND_MW WQE (the engine's copy: read once) of QP qpn of pd:
 * IBV_WC_SUCCESS or IBV_WC_MW_BIND_ERR, with rxe's checks. */
int roxe_mw_bind(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		 const struct rxe_send_wqe *w);
/* Invalidate the type 2 window key names: LOCAL_INV by a QP of pd
 * (ROXE_LOOKUP_LOCAL), or a SEND_WITH_INV that QP qpn received
 * (ROXE_LOOKUP_REMOTE). 0, or -EINVAL when key names no bound type 2
 * window of pd (remote: bound to qpn). */
int roxe_mw_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
		       uint32_t key, enum roxe_lookup type);
/* LOCAL_INV (ROXE_LOOKUP_LOCAL) or SEND_WITH_INV (ROXE_LOOKUP_REMOTE) of
 * key by QP qpn of pd, whichever kind of key it is: roxe_mw_invalidate for
 * a window's, else roxe_mr_invalidate. 0, or -EINVAL. */
int roxe_key_invalidate(struct roxe_device *dev, const struct roxe_pd *pd, uint32_t qpn,
			uint32_t key, enum roxe_lookup type);
/* QP qpn is being destroyed: its type 2 windows go free (no other QP that
 * gets its number may reach them). */
void roxe_mw_qp_gone(struct roxe_device *dev, uint32_t qpn);
/* mr goes whatever is bound to it (roxed's forced teardown): no window
 * may be bound to it from now on, and those bound are unbound. Call again
 * after roxe_dev_quiesce for the binds under way meanwhile; then its dereg
 * succeeds. Not from an engine. */
struct roxe_mr;
void roxe_mw_mr_gone(struct roxe_device *dev, const struct roxe_mr *mr);
/* Unbind mw (its dealloc): its MR may be deregistered again. */
void roxe_mw_unbind(struct roxe_mw_priv *mw);

/* --- queue.c --- */
/* A ring for the engine's own objects; g: the shape it got. */
struct rxe_queue_buf *roxe_queue_buf_alloc(uint32_t entries, uint32_t elem_size,
					   struct roxe_queue_geom *g);
/* --- cq.c --- */
/* Returns false when the CQ overflowed (the CQE is lost, the CQ in error). */
bool roxe_cq_post(struct roxe_cq *cq, const struct ib_uverbs_wc *wc, bool solicited);
/* --- event.c --- */
/* Queue an async event for element, whose number (QPN, served CQ or SRQ
 * number) is id, of tenant (its tenant field). */
void roxe_async_event(struct roxe_device *dev, enum ibv_event_type type, void *element,
		      uint32_t id, uint64_t tenant);
/* Drop element's events not read yet: its destroy, before it is freed. */
void roxe_async_purge(struct roxe_device *dev, const void *element);

/* --- addrs.c --- */
bool roxe_local_set_has(const struct roxe_local_set *l, const uint8_t gid[16]);
/* Is gid one of the port's own addresses? */
bool roxe_dev_is_local(const struct roxe_device *dev, const uint8_t gid[16]);
/* Does the engine count received frames itself? Not when XDP does. */
bool roxe_dev_counts_rx(const struct roxe_device *dev);

/* --- mono_clock.c --- */
/* CLOCK_MONOTONIC in ns; from the TSC where the kernel keeps time by it
 * (roxe_mono_tsc()), never backwards within a thread. */
uint64_t roxe_mono_ns(void);
bool roxe_mono_tsc(void);

#endif /* ROXE_CORE_H */
