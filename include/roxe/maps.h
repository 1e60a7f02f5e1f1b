/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The BPF maps of the XDP program (bpf/roxe_xdp.bpf.c), as seen by the
 * program, the engine and roxectl. Their names are the user interface:
 * `bpftool map dump name roxe_qp_stats` prints the per-QP counters with the
 * field names below (the maps carry BTF).
 *
 *   roxe_qp_table  ARRAY [QPN]  which engine owns a QP
 *   roxe_xsks      XSKMAP [queue * engines + engine]  AF_XDP sockets
 *   roxe_qp_stats  ARRAY [QPN], mmapable: per-QP counters
 *   roxe_stats     PERCPU_ARRAY [0]: global counters
 *   roxe_config    ARRAY [0]: engine count and policy, set at attach time
 *   roxe_local_ips HASH [GID]: the interface's own addresses (IPv4 as
 *                  IPv4-mapped GIDs): RoCE frames to any other address are
 *                  not ours and go to the kernel (a bridge, a router)
 *   roxe_eng_stats ARRAY [engine], mmapable: the engines' global counters
 *   roxe_mcast_grps HASH [GID]: multicast groups with attached QPs, and
 *                  the engine that takes their frames
 *
 * Only <linux/types.h> here: bpf/, user/ and tools/ include it.
 */
#ifndef ROXE_MAPS_H
#define ROXE_MAPS_H

#include <linux/types.h>
#include "roxe/parse.h"
#include "roxe/limits.h"

/* QPNs the XDP program steers: 0 .. ROXE_MAX_QPS-1 (QP1, the GSI QP, is an
 * ordinary entry). Engines allocate QPNs below this. Per QP the maps hold
 * 8 B of route and 256 B of counters: 8.25 MiB per attached interface.
 * roxe_xsks holds ROXE_MAX_XSKS sockets (include/roxe/limits.h). */

/* roxe_local_ips key: one local address as a GID; value: 1. */
struct roxe_local_addr {
	__u8	gid[16];
};

/* Every engine has one AF_XDP socket on every queue (see user/port/afxdp.c):
 * a frame that arrived on queue q for engine e goes to this slot. */
static inline __u32 roxe_xsk_slot(__u32 queue, __u32 engine, __u32 engines)
{
	return queue * engines + engine;
}

/* roxe_mcast_grps: key a joined multicast group's GID (struct
 * roxe_local_addr), value the engine whose sockets take its frames (those
 * with DQPN ROXE_MCAST_QPN); that engine hands copies to the others. */
#define ROXE_MCAST_ENGINE	0

/* roxe_qp_table value. */
struct roxe_qp_route {
	__u32	engine;		/* owning engine: its sockets' slots */
	__u32	in_use;		/* 0: no such QP (unknown-QP policy applies) */
};

/* roxe_config value. */
struct roxe_config {
	__u32	engines;	/* sockets per queue: the slot stride */
	__u32	pass_unknown_qp; /* 1: unknown-QP frames go to the kernel */
};

/*
 * roxe_qp_stats value: one per QPN. Two parts, each on its own cache lines
 * so the writers do not share a line:
 *  - rx_*: written by the XDP program, on whatever CPU runs the receive
 *    path, with atomic adds (a QP's frames can arrive on several queues at
 *    once). Per-CPU values would avoid the atomic but could not be mmapped
 *    and would cost CPUs x QPs memory; one flow mostly stays on one CPU, so
 *    the lock-prefixed add is uncontended in the common case.
 *  - the rest: written only by the engine thread that owns the QP (plain
 *    stores through the mmapped array, no atomics).
 * Readers (roxectl) may see a counter a few increments stale, never torn
 * (aligned 64-bit stores).
 */
struct roxe_qp_stats {
	/* XDP program */
	__u64	rx_packets;	/* steered to the owning engine's socket */
	__u64	rx_bytes;
	__u64	rx_drop_no_socket; /* the owner has no socket on that queue */
	__u64	rx_drop_malformed; /* a valid UDP/BTH for this QP, but a bad
				    * version, opcode, header or payload length */
	__u64	ecn_marked;	/* arrived with ECN CE (congestion seen on the
				 * way), counted before steering: dropped
				 * ones too (the engine counts looped frames
				 * and those of ports without XDP) */
	__u64	xdp_reserved[3];

	/* owning engine */
	__u64	tx_packets __attribute__((aligned(64)));
	__u64	tx_bytes;
	__u64	retransmits;
	__u64	nak_seq_err_sent;
	__u64	nak_inv_req_sent;
	__u64	nak_rem_access_sent;
	__u64	nak_rem_op_sent;
	__u64	nak_seq_err_rcvd;
	__u64	nak_inv_req_rcvd;
	__u64	nak_rem_access_rcvd;
	__u64	nak_rem_op_rcvd;
	__u64	rnr_nak_sent;
	__u64	rnr_nak_rcvd;
	__u64	duplicates;
	__u64	out_of_sequence;
	__u64	timeouts;
	__u64	icrc_errors;
	__u64	rx_drop_addr;	/* addresses not the QP's path (RC/UC) or
				 * not local (UD): a third host's frame */
	__u64	cnp_sent;	/* CNPs sent to the peer's QP for CE frames,
				 * at most one per device cnp_interval */
	__u64	cnp_received;	/* valid CNPs from the peer's QP */
	__u64	cc_rate_mbps;	/* a gauge: the rate DCQCN holds the QP to,
				 * Mbit/s; 0: not limited (the line rate) */
	__u64	rx_drop_opcode;	/* an opcode of another transport than the
				 * QP's (IBA 9.6.1.5: silently dropped) */
	__u64	cc_rate_cuts;	/* CNPs on which DCQCN lowered the QP's rate
				 * (the cumulative twin of cc_rate_mbps: a
				 * cut that recovered before a reader looked
				 * still counts) */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct roxe_qp_stats) == 256, "roxe_qp_stats grew past 256 B");

/* roxe_eng_stats value: one per engine, written only by that engine (plain
 * stores through the mmapped array); readers sum them. */
struct roxe_engine_stats {
	__u64	rx_drop_addr;	/* all QPs' rx_drop_addr */
	__u64	loopback;	/* frames received from this host (never on the wire) */
	__u64	loopback_drop;	/* frames for this engine (looped, or multicast
				 * copies from other engines) dropped: its hand-off
				 * ring was full (counted by the ring's producers,
				 * added here by the engine: handoff.c) */
	__u64	credit_waits;	/* RC packets held for the engine's PSN credit
				 * (credit.c) */
	__u64	credit_lapses;	/* QPs whose charge lapsed: no answer for the
				 * hold time (credit.c) */
	__u64	kdb_overflows;	/* roxed: roxe.ko's doorbell ring overflowed, so
				 * the engine looked at every QP it has (engine.c) */
	__u64	wakeup_errors;	/* the engine's eventfd failed a write or read
				 * (roxe_device_last_error); the one counter
				 * other threads add to, atomically (engine.c) */
	__u64	tx_umem_inplace; /* frames sent from a UMEM MR without a copy */
	__u64	tx_umem_copied;	/* frames from a UMEM MR copied all the same
				 * (roxe_alloc_umem_mr: the cases) */
	__u64	tx_umem_held_expired; /* completions held for in-place frames
				 * that the kernel never gave back: let go
				 * after ROXE_HELD_MAX_NS (sq.c) */
	__u64	reserved[6];
} __attribute__((aligned(64)));

/*
 * roxe_stats value (per CPU, summed by readers). The bad_* counters are
 * the malformed frames dropped, one per enum roxe_verdict reason, in the
 * enum's order so the program indexes them by verdict
 * (roxe_stats_malformed()). bad_icrc belongs to the engine (the XDP
 * program computes no ICRC) and stays 0 here.
 */
struct roxe_stats {
	__u64	passed;			/* not RoCE v2: to the kernel untouched */
	__u64	redirected;		/* RoCE v2 frames steered to a socket */
	__u64	redirect_failed;	/* owner has no socket on the queue: dropped */
	__u64	unknown_qp;		/* no engine owns the QP: dropped */
	__u64	unknown_qp_passed;	/* ... passed to the kernel (pass_unknown_qp) */
	__u64	bad_ip_len;		/* ROXE_PKT_BAD_IP_LEN */
	__u64	bad_udp_len;		/* ROXE_PKT_BAD_UDP_LEN */
	__u64	bad_version;		/* ROXE_PKT_BAD_VERSION */
	__u64	bad_opcode;		/* ROXE_PKT_BAD_OPCODE */
	__u64	bad_hdr_len;		/* ROXE_PKT_BAD_HDR_LEN */
	__u64	bad_payload;		/* ROXE_PKT_BAD_PAYLOAD */
	__u64	bad_icrc;		/* ROXE_PKT_BAD_ICRC */
	__u64	not_local_passed;	/* RoCE v2, but to an address not the
					 * interface's: to the kernel */
};

#define ROXE_STATS_MALFORMED_OFF(v) \
	(__builtin_offsetof(struct roxe_stats, bad_ip_len) + \
	 ((v) - ROXE_PKT_BAD_IP_LEN) * sizeof(__u64))
_Static_assert(ROXE_STATS_MALFORMED_OFF(ROXE_PKT_BAD_PAYLOAD) ==
	       __builtin_offsetof(struct roxe_stats, bad_payload), "verdict order");
_Static_assert(ROXE_STATS_MALFORMED_OFF(ROXE_PKT_BAD_ICRC) ==
	       __builtin_offsetof(struct roxe_stats, bad_icrc), "verdict order");
_Static_assert(ROXE_PKT__COUNT == ROXE_PKT_BAD_ICRC + 1, "a verdict without a counter");

/* The counter of malformed verdict v (ROXE_PKT_BAD_IP_LEN .. BAD_ICRC). */
static inline __u64 *roxe_stats_malformed(struct roxe_stats *s, int v)
{
	return (__u64 *)((char *)s + ROXE_STATS_MALFORMED_OFF(v));
}

#endif /* ROXE_MAPS_H */
