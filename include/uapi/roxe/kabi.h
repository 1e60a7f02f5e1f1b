/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control ABI between roxe.ko and roxed, spoken over /dev/roxe. Shared
 * verbatim by kmod/ and user/: kernel types only (__u32...), no padding
 * holes, every struct a multiple of 8 bytes so 32- and 64-bit layouts agree.
 *
 * A roxed process opens /dev/roxe once per interface and issues
 * ROXE_IOC_ATTACH with the netdev's ifindex: the module names an ib_device
 * (roxe%d) on that netdev, registers it, and ties it to this open file.
 * With ROXE_KABI_ATTACH_ON_SERVE the registration waits for ROXE_IOC_SERVE
 * and runs asynchronously after it: kernel clients (ib_mad's GSI QP, which
 * ib_cm and rdma_cm need) create their objects inside the registration,
 * and only a serving roxed can answer for them. Closing
 * the file (roxed exits, is killed, or crashes) detaches: the port goes
 * DOWN, then the ib_device is unregistered. Applications using it through
 * uverbs are disassociated (they get IB_EVENT_DEVICE_FATAL and EIO), kernel
 * ULPs get their remove callback.
 *
 * `rdma link add NAME type roxe netdev IFACE` reaches the module through
 * ib_core's rdma_link_ops; the module asks the roxed that listens for links
 * (ROXE_IOC_LINK_LISTEN: `roxed --links`) to start a roxed for it, which
 * attaches with ROXE_KABI_ATTACH_LINK and the request's id. The command
 * returns once the device is registered, or with the error that stopped it.
 * `rdma link delete NAME` unregisters the device: its roxed reads ENODEV
 * and exits.
 */
#ifndef ROXE_KABI_H
#define ROXE_KABI_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include "roxe/limits.h"

#define ROXE_KABI_VERSION	13
#define ROXE_KABI_DEVNAME	"roxe"		/* /dev/roxe */
#define ROXE_KABI_NAME_MAX	64		/* IB_DEVICE_NAME_MAX */

#define ROXE_IOC_MAGIC		0xb7

/* ROXE_IOC_ATTACH: register an ib_device on a netdev, served by this file. */
struct roxe_kabi_attach {
	__u32	abi_version;		/* in: ROXE_KABI_VERSION */
	__u32	ifindex;		/* in: netdev in the caller's netns */
	__u32	flags;			/* in: ROXE_KABI_ATTACH_* */
	__u32	port_mtu;		/* out: active IB MTU, bytes */
	char	ibdev[ROXE_KABI_NAME_MAX];	/* out: "roxe0", ... */
	__u32	link_id;		/* in: with ROXE_KABI_ATTACH_LINK */
	__u32	pad;
};

/* Register once SERVE is done (ROXE_KABI_INFO_REGISTERED says when). */
#define ROXE_KABI_ATTACH_ON_SERVE	(1u << 0)
/* Serve the device `rdma link add` asked for (link_id, from a link
 * request): its name is the request's, its netdev must be the request's.
 * Needs ROXE_KABI_ATTACH_ON_SERVE.
 */
#define ROXE_KABI_ATTACH_LINK		(1u << 1)

/* What a file that listens for links (ROXE_IOC_LINK_LISTEN) reads, one
 * per read(): start a roxed that attaches to ifindex (in the listener's
 * network namespace) with ROXE_KABI_ATTACH_LINK and this id.
 */
struct roxe_kabi_link_req {
	__u32	id;
	__u32	ifindex;
	char	ibdev[ROXE_KABI_NAME_MAX];	/* the name `rdma link add` gave */
};

/* ROXE_IOC_LINK_DONE: the listener could not serve request id: error
 * (a negative errno) is what `rdma link add` returns.
 */
struct roxe_kabi_link_done {
	__u32	id;
	__s32	error;
};

/* ROXE_IOC_INFO: what the device looks like now (roxectl, tests). */
struct roxe_kabi_info {
	__u32	abi_version;		/* out: the module's ROXE_KABI_VERSION */
	__u32	ifindex;		/* out: 0 once the netdev went away */
	__u32	port_state;		/* out: enum ib_port_state (4: ACTIVE) */
	__u32	port_mtu;		/* out: active IB MTU, bytes */
	__u64	ucontexts;		/* out: open uverbs contexts */
	char	ibdev[ROXE_KABI_NAME_MAX];	/* out */
	__u32	flags;			/* out: ROXE_KABI_INFO_* */
	__u32	pad;
};

#define ROXE_KABI_INFO_REGISTERED	(1u << 0)	/* ib_device is up */
/* ib_core let the device go: `rdma link delete`, or rdma_rxe's exit */
#define ROXE_KABI_INFO_UNREGISTERED	(1u << 1)

/*
 * Commands: the module tells roxed about the objects applications create.
 * roxed read()s one struct roxe_kabi_cmd at a time (poll() says POLLIN when
 * one is queued) and, when seq is not 0, write()s a struct roxe_kabi_reply
 * with the same seq. The module waits ROXE_KABI_TIMEOUT_MS for it; past
 * that the verb fails with ETIMEDOUT and a late reply is ignored. Destroy
 * commands never fail on the module's side: roxed learns of them, and a
 * missing reply only delays the destroy by the timeout.
 *
 * Queue memory: every queue has a token; mmap(fd, token) in roxed maps the
 * same pages the application maps (length: the queue's bytes).
 */
#define ROXE_KABI_TIMEOUT_MS	2000

enum roxe_kabi_op {
	ROXE_KOP_CREATE_CQ = 1,
	ROXE_KOP_DESTROY_CQ,
	ROXE_KOP_CREATE_SRQ,
	ROXE_KOP_DESTROY_SRQ,
	ROXE_KOP_CREATE_QP,
	ROXE_KOP_MODIFY_QP,
	ROXE_KOP_DESTROY_QP,
	ROXE_KOP_REG_MR,
	ROXE_KOP_DEREG_MR,
	ROXE_KOP_MODIFY_SRQ,	/* struct roxe_kabi_srq: srqn and limit only */
	ROXE_KOP_ALLOC_MR,	/* struct roxe_kabi_mr: a fast-registration MR */
	ROXE_KOP_CREATE_AH,	/* struct roxe_kabi_ah: an application's AH */
	ROXE_KOP_DESTROY_AH,	/* id: its ah_num */
	ROXE_KOP_ATTACH_MCAST,	/* struct roxe_kabi_mcast */
	ROXE_KOP_DETACH_MCAST,	/* struct roxe_kabi_mcast */
	ROXE_KOP_RESIZE_CQ,	/* struct roxe_kabi_cq: cqn and its new queue */
	ROXE_KOP_ALLOC_MW,	/* struct roxe_kabi_mw */
	ROXE_KOP_DEALLOC_MW,	/* id: the window's key as allocated */
	ROXE_KOP_DEALLOC_PD,	/* id: the PD's number, free for reuse */
};

/*
 * Tenants (issue #33): CREATE_CQ, CREATE_SRQ and CREATE_QP name the tenant
 * the object is made for, the key the command channel queues its
 * creator's calls by (kmod/chan.c): the real uid of the calling process
 * (below 2^32), or ROXE_KABI_TENANT_KERNEL for the kernel's own threads
 * (ULPs). roxed shares the device's asynchronous event ring among them
 * (user/core/event.c). RESIZE_CQ and MODIFY_SRQ leave it unread.
 */
#define ROXE_KABI_TENANT_KERNEL	(1ULL << 32)

/* One queue: mmap(NULL, bytes, ..., fd, token) in roxed. */
struct roxe_kabi_queue {
	__u64	token;			/* mmap offset on /dev/roxe */
	__u64	bytes;			/* mapping length (page multiple) */
	__u32	slots;			/* power of two */
	__u32	log2_elem;
};

struct roxe_kabi_cq {
	__u32	cqn;
	__u32	pad;
	struct roxe_kabi_queue	q;	/* of struct ib_uverbs_wc */
	__u64	tenant;			/* CREATE_CQ */
};

/*
 * ROXE_KOP_RESIZE_CQ (ibv_resize_cq on a user CQ): q is a new, empty
 * queue. roxed stops producing into the CQ's ring, moves its outstanding
 * CQEs (consumer to producer index of the old ring) in order to slots 0..
 * n-1 of the new one, sets its producer index to n, then produces only
 * there and unmaps the old ring before it answers 0. If the CQEs do not
 * fit it answers -EINVAL and keeps the old ring. On 0 the module frees the
 * old ring and the application maps the new one; on anything else the
 * module frees the new one.
 */

struct roxe_kabi_srq {
	__u32	srqn;
	__u32	pdn;
	__u32	max_sge;
	__u32	limit;
	struct roxe_kabi_queue	q;	/* of struct rxe_recv_wqe */
	__u64	tenant;			/* CREATE_SRQ */
};

struct roxe_kabi_qp {
	__u32	qpn;
	__u32	type;			/* IB_QPT_RC 2, UC 3, UD 4 (also QP1,
					 * the GSI QP: UD with qkey 0x80010000) */
	__u32	pdn;
	__u32	send_cqn;
	__u32	recv_cqn;
	__u32	srqn;			/* ~0: own receive queue */
	__u32	max_send_sge;
	__u32	max_recv_sge;
	__u32	max_inline;
	__u32	sq_sig_all;
	struct roxe_kabi_queue	sq;	/* of struct rxe_send_wqe */
	struct roxe_kabi_queue	rq;	/* of struct rxe_recv_wqe; bytes 0 with an SRQ */
	__u32	flags;			/* ROXE_KABI_QP_* */
	__u32	pad;
	__u64	tenant;
};

/* A kernel ULP's QP: the module writes its WQEs (the send ring is mapped
 * only by the module and roxed), so its UD WQEs carry the address vector
 * of ib_core's AH. An application's UD WQEs name an AH by number. */
#define ROXE_KABI_QP_KERNEL	(1u << 0)

/*
 * An application's address handle (ib_core resolved it: the source GID is
 * the GID table entry the application picked, the destination MAC the
 * neighbour table's). The rxe provider then puts ah_num, not an address
 * vector, into its UD send WQEs, and roxed addresses each datagram from
 * this alone (an AH of another PD is refused).
 */
struct roxe_kabi_ah {
	__u32	ah_num;			/* 1 .. ROXE_KABI_MAX_AH - 1 */
	__u32	pdn;
	__u8	sgid[16];
	__u8	dgid[16];
	__u8	dmac[6];
	__u8	hop_limit;
	__u8	traffic_class;
	__u32	flow_label;
	__u32	pad;
};

#define ROXE_KABI_MAX_AH	ROXE_MAX_AH

/*
 * A QP's multicast attach or detach (ib_device_ops attach_mcast and
 * detach_mcast). uverbs passes both straight from the application, neither
 * the QP type nor the GID checked: roxed checks them (a UD QP of roxe.ko's,
 * a multicast GID) and answers with rxe's errors.
 */
struct roxe_kabi_mcast {
	__u32	qpn;
	__u32	pad;
	__u8	mgid[16];
};

/* A modify_qp: the attributes roxe's engine needs, in IB encodings. */
struct roxe_kabi_qp_attr {
	__u32	qpn;
	__u32	mask;			/* enum ib_qp_attr_mask */
	__u32	state;			/* enum ib_qp_state */
	__u32	access;			/* IB_ACCESS_* */
	__u32	qkey;
	__u32	path_mtu;		/* enum ib_mtu */
	__u32	dest_qpn;
	__u32	rq_psn;
	__u32	sq_psn;
	__u8	timeout;
	__u8	retry_cnt;
	__u8	rnr_retry;
	__u8	min_rnr_timer;
	__u8	max_rd_atomic;
	__u8	max_dest_rd_atomic;
	__u8	hop_limit;
	__u8	traffic_class;
	__u32	flow_label;
	__u32	sgid_type;		/* enum ib_gid_type: 2 RoCE v2 */
	__u8	dgid[16];
	__u8	sgid[16];
	__u8	dmac[6];
	__u8	en_sqd_async_notify;	/* v12: with IB_QP_EN_SQD_ASYNC_NOTIFY */
	__u8	pad[5];
};

/*
 * A user MR: the application's pages, pinned by the module, mapped into
 * roxed by mmap(fd, token, map_bytes). Byte iova + i of the MR is at
 * mapping + page_off + i. The module revokes the mapping (it faults from
 * then on) when the MR is deregistered, after roxed answered DEREG_MR or
 * its timeout passed: roxed must stop touching it before answering.
 *
 * v13: an on-demand paging MR (access has IB_ACCESS_ON_DEMAND) pins
 * nothing, and roxed's fault on it never waits for the application's
 * memory: a page that is present is mapped; one that is not raises SIGBUS
 * in roxed while the module faults it in, in the background, for the next
 * touch; one the application does not map (that background fault found
 * nothing there) raises SIGSEGV, once. So roxed touches such an MR only
 * where it catches both (user/core/odp.c).
 */
struct roxe_kabi_mr {
	__u32	key;			/* lkey == rkey */
	__u32	pdn;
	__u32	access;			/* IB_ACCESS_* */
	__u32	page_off;		/* of the MR's first byte in its page */
	__u64	iova;
	__u64	length;
	__u64	token;			/* mmap offset on /dev/roxe */
	__u64	map_bytes;		/* page multiple */
};

/*
 * A memory window (ibv_alloc_mw): its key has an index in ROXE_MW_INDEX_BASE
 * .. + ROXE_MAX_MW - 1 (include/roxe/limits.h), its low byte changes with
 * each bind. The application binds it through its SQ (the rxe provider's
 * IBV_WR_BIND_MW WQE, struct rxe_send_wr's mw view, for type 1 too): roxed
 * reads that WQE once, checks it and executes it in order. DEALLOC_MW
 * names the window by its index (id >> 8). DEREG_MR answers -EINVAL, and
 * the module keeps the MR, while windows are bound to it (as rxe).
 */
struct roxe_kabi_mw {
	__u32	key;
	__u32	pdn;
	__u32	type;			/* IB_MW_TYPE_1 1, IB_MW_TYPE_2 2 */
	__u32	pad;
};

struct roxe_kabi_cmd {
	__u32	op;			/* enum roxe_kabi_op */
	__u32	seq;			/* 0: no reply wanted */
	union {
		struct roxe_kabi_cq		cq;
		struct roxe_kabi_srq		srq;	/* CREATE_SRQ, MODIFY_SRQ */
		struct roxe_kabi_qp		qp;
		struct roxe_kabi_qp_attr	modify;
		struct roxe_kabi_mr		mr;
		struct roxe_kabi_ah		ah;	/* CREATE_AH */
		struct roxe_kabi_mcast		mcast;	/* ATTACH_MCAST, DETACH_MCAST */
		struct roxe_kabi_mw		mw;	/* ALLOC_MW */
		__u32				id;	/* DESTROY_*, DEREG_MR, DEALLOC_MW */
		__u8				raw[192];
	};
};

struct roxe_kabi_reply {
	__u32	seq;
	__s32	status;			/* 0 or a negative errno */
};

/*
 * The data path: state the module and roxed share without system calls,
 * one mapping per device: mmap(fd, ROXE_KABI_SHARED_TOKEN,
 * sizeof(struct roxe_kabi_shared)), valid after ROXE_IOC_SERVE.
 *
 * Doorbells. The rxe provider rings a QP's send doorbell with a zero-WR
 * post_send; the module puts the QPN on ring qpn % nengines and signals
 * that engine's eventfd (given in ROXE_IOC_SERVE). A full ring sets
 * overflow instead: roxed clears it and then looks at every QP of that
 * engine. Receive queues have no doorbell: roxed reads them when a
 * request arrives.
 *
 * One slot per QP (kabi v10, issue #33: an application ringing in a loop
 * must not fill the ring, whose overflow costs every tenant of the engine
 * a look at all its QPs). db_queued has a bit per QPN (bit qpn % 64 of
 * word qpn / 64), set while the QPN is on its ring and roxed has not taken
 * it:
 *   the module, under the ring's lock, test-and-sets the QP's bit (atomic,
 *   fully ordered: after what the application wrote). Found set: nothing
 *   more is queued. Found clear: the QPN goes into slot prod % SLOTS and
 *   prod + 1 is stored (release); or, the ring full (prod - cons >=
 *   SLOTS), the bit is cleared again and overflow set (release). Then,
 *   after a full barrier, the eventfd is signalled unless awake is 1;
 *   roxed takes a QPN (prod read with acquire): it reads the slot, stores
 *   cons past it (release: the slot is the module's again), then clears
 *   the QP's bit (an atomic read-modify-write with acquire), and only
 *   then reads the QP's send queue. After an overflow (exchanged to 0,
 *   acquire) it takes the QPNs on the ring so, then looks at every QP of
 *   the engine.
 * No doorbell is lost: one that found the bit set came before roxed's
 * clear in the bit's order, so the clear (acquire) reads from its
 * release sequence and the read of the send queue after it sees what the
 * application wrote; one that found it clear queued the QPN (or set
 * overflow), which roxed takes after it. A set bit is a QPN on the ring
 * (or one roxed is taking, or, for a moment under the ring's lock, one
 * the module finds no slot for), so a ring holds at most one slot per QP and
 * overflows only when more QPs of its engine than it has slots (1024)
 * ring between two of roxed's turns.
 *
 * Wake-ups (busy polling, issue #38). An engine in a turn or spinning
 * reads its ring every turn, so a doorbell needs no signal then: roxed
 * stores awake = 1 when its engine wakes, and before it sleeps stores 0,
 * issues a full barrier and looks at prod and overflow one last time.
 * The module's full barrier sits between its ring update and its read of
 * awake, so either it reads 0 and signals, or roxed's last look finds the
 * QPN (a doorbell that found the bit set: the QPN roxed takes, in a turn).
 * 0 (what a roxed that never writes it leaves) signals every doorbell.
 *
 * The module treats all of this memory as roxed's to write: a bit, or
 * awake, roxed left set only silences doorbells (roxed's own loss); nothing read from here bounds a
 * loop or indexes memory unmasked.
 *
 * CQ arming. req_notify_cq stores IB_CQ_SOLICITED (1) or IB_CQ_NEXT_COMP
 * (2) in cq_armed[cqn], then a full barrier. roxed, after producing a CQE,
 * issues a full barrier, reads cq_armed[cqn] and, if the CQE qualifies
 * (any CQE for 2; a solicited or an error CQE for 1), calls
 * ROXE_IOC_CQ_EVENT: the module disarms the CQ and raises the completion
 * event (ibv_get_cq_event returns).
 */
#define ROXE_KABI_SHARED_TOKEN	(1ULL << 55)
#define ROXE_KABI_MR_TOKEN_BASE	(1ULL << 56)	/* MR tokens are above */
#define ROXE_KABI_MAX_ENGINES	16
#define ROXE_KABI_DB_SLOTS	1024		/* power of two */
#define ROXE_KABI_MAX_CQ	ROXE_MAX_CQ
#define ROXE_KABI_MAX_QPS	ROXE_MAX_QPS	/* a multiple of 64 */

struct roxe_kabi_db_ring {
	__u32	prod;			/* module: free-running count */
	__u32	overflow;		/* module sets, roxed clears */
	__u8	pad1[56];
	__u32	cons;			/* roxed: free-running count */
	__u32	awake;			/* roxed: 1 while its engine needs no signal */
	__u8	pad2[56];
	__u32	qpn[ROXE_KABI_DB_SLOTS];	/* [count % ROXE_KABI_DB_SLOTS] */
};

/*
 * Port counters (the ib_device's hardware counters: `rdma statistic show
 * link roxe0/1`). roxed stores its per-port totals here (every QP's
 * counters, those of destroyed QPs included, and its engines'), each an
 * aligned 64-bit store, about once a second; the module only reads them,
 * so a stopped roxed leaves the last values. Indexes never change meaning;
 * new counters go before ROXE_KSTAT__COUNT.
 */
enum roxe_kabi_stat {
	ROXE_KSTAT_SENT_PKTS,		/* tx_packets */
	ROXE_KSTAT_RCVD_PKTS,		/* rx_packets */
	ROXE_KSTAT_SENT_BYTES,
	ROXE_KSTAT_RCVD_BYTES,
	ROXE_KSTAT_DUP_REQ,		/* duplicates */
	ROXE_KSTAT_OOS_REQ,		/* out_of_sequence */
	ROXE_KSTAT_RCVD_RNR,		/* rnr_nak_rcvd */
	ROXE_KSTAT_SEND_RNR,		/* rnr_nak_sent */
	ROXE_KSTAT_RCVD_SEQ_ERR,	/* nak_seq_err_rcvd */
	ROXE_KSTAT_SENT_SEQ_ERR,	/* nak_seq_err_sent */
	ROXE_KSTAT_RCVD_NAKS,		/* every NAK but RNR */
	ROXE_KSTAT_SENT_NAKS,
	ROXE_KSTAT_RETRANSMITS,
	ROXE_KSTAT_TIMEOUTS,
	ROXE_KSTAT_ICRC_ERR,
	ROXE_KSTAT_RX_DROP_ADDR,
	ROXE_KSTAT_RX_DROP_NO_SOCKET,
	ROXE_KSTAT_RX_DROP_MALFORMED,
	ROXE_KSTAT_LOOPBACK,
	ROXE_KSTAT_LOOPBACK_DROP,
	ROXE_KSTAT_ECN_MARKED,		/* ecn_marked: arrived with CE */
	ROXE_KSTAT_CNP_SENT,		/* cnp_sent */
	ROXE_KSTAT_CNP_RCVD,		/* cnp_received */
	ROXE_KSTAT_UPDATES,		/* stats_updates: stores so far, each
					 * after the values it covers */
	ROXE_KSTAT_CC_RATE_CUTS,	/* cc_rate_cuts (after UPDATES: indexes
					 * keep their meaning) */
	ROXE_KSTAT__COUNT
};
#define ROXE_KABI_MAX_STATS	32

struct roxe_kabi_port_stats {
	__u64	val[ROXE_KABI_MAX_STATS];	/* [enum roxe_kabi_stat] */
};

struct roxe_kabi_shared {
	__u8			cq_armed[ROXE_KABI_MAX_CQ];
	struct roxe_kabi_db_ring db[ROXE_KABI_MAX_ENGINES];
	struct roxe_kabi_port_stats stats;	/* roxed writes, module reads */
	__u64			db_queued[ROXE_KABI_MAX_QPS / 64];	/* a QPN on its ring */
};

/* ROXE_IOC_SERVE: roxed's engines are ready; doorbells go to them. */
struct roxe_kabi_serve {
	__u32	nengines;		/* 1..ROXE_KABI_MAX_ENGINES */
	__s32	efd[ROXE_KABI_MAX_ENGINES];	/* eventfd per engine */
	__u32	pad;
};

/* ROXE_IOC_EVENT: an asynchronous event roxed's engine raised. */
struct roxe_kabi_event {
	__u32	type;			/* enum ib_event_type: QP_FATAL,
					 * QP_REQ_ERR, QP_ACCESS_ERR,
					 * SQ_DRAINED, CQ_ERR, SRQ_LIMIT_REACHED */
	__u32	id;			/* qpn, cqn or srqn */
};

/*
 * Fast registration (kernel ULPs' ib_alloc_mr/ib_map_mr_sg/IB_WR_REG_MR).
 * ROXE_KOP_ALLOC_MR gives an MR that is invalid until registered, with a
 * token of map_bytes (its most pages) roxed maps once: its window. The
 * module keeps the pages ib_map_mr_sg() gave; a kernel QP's REG_MR WQE
 * then carries the rest, in struct rxe_send_wr's rdma view (the kernel's
 * reg view, whose MR pointer roxed could not use, has the same layout):
 *   opcode ROXE_KABI_WR_REG_MR, iova the MR's iova,
 *   wr.rdma.remote_addr ROXE_KABI_REG_MR_ADDR(length, page_off),
 *   wr.rdma.rkey the new key (the MR's index, a new generation byte),
 *   wr.rdma.reserved the access flags (IB_ACCESS_*).
 * Executing it in order, roxed calls ROXE_IOC_MR_WINDOW(key, map 1): the
 * module puts those pages behind the window (zapping what roxed had
 * mapped there), so byte iova + i is at window + page_off + i. Its
 * completion opcode is ROXE_KABI_WC_REG_MR. When the MR is invalidated
 * (LOCAL_INV, SEND_WITH_INV) roxed calls it with map 0: the window is
 * emptied, so roxed maps no page the ULP may reuse.
 */
#define ROXE_KABI_WR_REG_MR		0x20	/* IB_WR_REG_MR */
#define ROXE_KABI_WC_REG_MR		8	/* 6.1's IB_WC_REG_MR; the module
						 * gives ULPs their kernel's */
#define ROXE_KABI_REG_MR_ADDR(len, off)	((__u64)(len) | (__u64)(off) << 48)
#define ROXE_KABI_REG_MR_LEN(a)		((a) & ((1ULL << 48) - 1))
#define ROXE_KABI_REG_MR_OFF(a)		((__u32)((a) >> 48))

struct roxe_kabi_mr_window {
	__u32	key;			/* the MR's, as in its REG_MR WQE */
	__u32	map;			/* 1: the registered pages; 0: none */
};

#define ROXE_IOC_ATTACH		_IOWR(ROXE_IOC_MAGIC, 1, struct roxe_kabi_attach)
#define ROXE_IOC_INFO		_IOR(ROXE_IOC_MAGIC, 2, struct roxe_kabi_info)
#define ROXE_IOC_SERVE		_IOW(ROXE_IOC_MAGIC, 3, struct roxe_kabi_serve)
#define ROXE_IOC_CQ_EVENT	_IOW(ROXE_IOC_MAGIC, 4, __u32)
#define ROXE_IOC_EVENT		_IOW(ROXE_IOC_MAGIC, 5, struct roxe_kabi_event)
#define ROXE_IOC_MR_WINDOW	_IOW(ROXE_IOC_MAGIC, 6, struct roxe_kabi_mr_window)
/* this file (never attached) receives link requests; one listener at a
 * time, CAP_NET_ADMIN over the initial user namespace */
#define ROXE_IOC_LINK_LISTEN	_IO(ROXE_IOC_MAGIC, 7)
#define ROXE_IOC_LINK_DONE	_IOW(ROXE_IOC_MAGIC, 8, struct roxe_kabi_link_done)

#endif /* ROXE_KABI_H */
