/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Building and reading RoCE v2 frames in user space, and their ICRC.
 *
 * A frame is built in two steps so that the engine can copy payload from a
 * memory region straight into the frame buffer:
 *   roxe_frame_hdrs()   writes Ethernet/IP/UDP/BTH/extension headers and
 *                       describes the layout in a struct roxe_pkt;
 *   (the caller puts pkt.payload_len bytes at pkt.payload_off)
 *   roxe_frame_seal()   zeroes the pad, appends the ICRC, returns the length.
 * roxe_frame_build() does all three from one buffer.
 *
 * Received frames go through roxe_parse() (roxe/parse.h), then
 * roxe_frame_hdr_get() and roxe_icrc_check().
 *
 * roxe's own, not installed (include/private/): the functions of this
 * header that roxe's tools call are exported at ROXE_PRIVATE
 * (user/libroxe.map), with no promise to any other program; the rest are
 * libroxe's alone. Applications have the verbs API (roxe/verbs.h).
 */
#ifndef ROXE_FRAME_H
#define ROXE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "roxe/wire.h"
#include "roxe/opcode.h"
#include "roxe/parse.h"

/* Where a frame goes: addressing of both ends and the flow. */
struct roxe_frame_addr {
	uint8_t		smac[6];
	uint8_t		dmac[6];
	bool		vlan;		/* add one 802.1Q tag */
	uint16_t	vlan_tci;
	uint8_t		sgid[16];	/* IPv4-mapped GIDs (::ffff:a.b.c.d) make IPv4 */
	uint8_t		dgid[16];
	uint8_t		tclass;		/* IPv4 TOS / IPv6 traffic class: DSCP << 2 | ECN */
	uint8_t		hop_limit;	/* IPv4 TTL / IPv6 hop limit; 0 means 64 */
	uint32_t	flow_label;	/* IPv6 only */
	uint16_t	sport;		/* UDP source port: flow entropy */
	uint16_t	ip_id;		/* IPv4 identification */
};

/* BTH fields and the extension headers, in host byte order. */
struct roxe_frame_hdr {
	uint8_t		opcode;
	bool		se, mig, ackreq, fecn, becn;
	uint16_t	pkey;
	uint32_t	dqpn;
	uint32_t	psn;
	/* RETH, AtomicETH */
	uint64_t	va;
	uint32_t	rkey;
	uint32_t	dma_len;	/* RETH */
	uint64_t	swap_add;	/* AtomicETH */
	uint64_t	compare;	/* AtomicETH */
	uint8_t		syndrome;	/* AETH */
	uint32_t	msn;		/* AETH */
	uint64_t	orig;		/* AtomicAckETH */
	uint32_t	imm;		/* ImmDt, as it goes on the wire (ibv_send_wr's __be32) */
	uint32_t	inv_rkey;	/* IETH */
	uint32_t	qkey;		/* DETH */
	uint32_t	src_qpn;	/* DETH */
	uint8_t		flush_type;	/* FETH: placement type, ROXE_FLUSH_PLT_* bits */
	uint8_t		flush_level;	/* FETH: selectivity, ROXE_FLUSH_SEL_* */
};

/*
 * Congestion notification packets (RoCE v2 annex A17.9.3), as ConnectX
 * sends them (a ConnectX-4 Lx capture: selftests/wire/frame_sample.h).
 * roxe_cnp_hdr(): the BTH to the peer's QP dqpn, P_Key 0xffff, BECN set,
 * FECN and AckReq clear, PSN 0, and the payload ROXE_CNP_PAYLOAD_LEN
 * reserved bytes, zeros. roxe_cnp_addr(): the addressing, the QP's path
 * but DSCP ROXE_CNP_DSCP (the capture's) and ECN the sender's (ECT(0) or
 * Not-ECT).
 */
#define ROXE_CNP_DSCP	48

static inline void roxe_cnp_addr(struct roxe_frame_addr *a, const struct roxe_frame_addr *path,
				 uint8_t ecn)
{
	*a = *path;
	a->tclass = (uint8_t)(ROXE_CNP_DSCP << 2 | (ecn & ROXE_ECN_MASK));
}

static inline void roxe_cnp_hdr(struct roxe_frame_hdr *h, uint32_t dqpn)
{
	*h = (struct roxe_frame_hdr){
		.opcode = ROXE_OP_CNP,
		.becn = true,
		.pkey = ROXE_DEFAULT_PKEY,
		.dqpn = dqpn,
	};
}

/* Largest header stack: Ethernet + 2 VLAN + IPv6 + UDP + BTH + AtomicETH (the
 * longest extension headers; RETH + ImmDt is 20), and 4 spare. IPv4 options
 * (up to 40 bytes) in received frames can go past it. */
#define ROXE_FRAME_MAX_HDRS	(14 + 8 + 40 + 8 + 12 + 28 + 4)

/* Write headers for a frame that will carry payload_len bytes. Returns 0 or
 * -EINVAL (unknown opcode, payload on an opcode without one, GID pair mixing
 * IPv4 and IPv6) or -ENOSPC (cap too small for the whole frame). */
int roxe_frame_hdrs(void *buf, size_t cap, const struct roxe_frame_addr *a,
		    const struct roxe_frame_hdr *h, uint32_t payload_len,
		    struct roxe_pkt *pkt);

/* Zero the pad, store the ICRC; returns pkt->frame_len. */
uint32_t roxe_frame_seal(void *buf, const struct roxe_pkt *pkt);
/* The same, with crc the ICRC so far: roxe_icrc_begin() updated over the
 * payload (as copied in, roxe_icrc_update_copy()), the pad left out. */
uint32_t roxe_frame_seal_icrc(void *buf, const struct roxe_pkt *pkt, uint32_t crc);

/* All at once; payload may be NULL when payload_len is 0. Returns the frame
 * length or a negative errno as roxe_frame_hdrs(). */
int roxe_frame_build(void *buf, size_t cap, const struct roxe_frame_addr *a,
		     const struct roxe_frame_hdr *h, const void *payload,
		     uint32_t payload_len, struct roxe_pkt *pkt);

/* Read the BTH and extension headers of a parsed frame. */
void roxe_frame_hdr_get(const void *frame, const struct roxe_pkt *pkt,
			struct roxe_frame_hdr *h);

/* Read the addressing (MACs, GIDs, tclass, hop limit, flow label, sport). */
void roxe_frame_addr_get(const void *frame, const struct roxe_pkt *pkt,
			 struct roxe_frame_addr *a);

/* --- ICRC (RoCE v2 annex A17.3.3) ----------------------------------------- */
/* The ICRC the frame should carry, computed over frame[l3_off, frame_len - 4).
 * FLUSH (IBA 1.5) carries the one Linux's rxe computes and checks: that,
 * continued over the BTH, FETH and RETH once more (rxe's opcode table gives
 * FLUSH no payload offset); roxe_icrc_check() takes either for a FLUSH, and
 * roxe_icrc_begin() with roxe_icrc_update() give the annex's alone. */
uint32_t roxe_icrc_compute(const void *frame, const struct roxe_pkt *pkt);
/* The ICRC the frame carries (stored little-endian after the pad). */
uint32_t roxe_icrc_stored(const void *frame, const struct roxe_pkt *pkt);
/* 0 if the stored ICRC is right, else ROXE_PKT_BAD_ICRC. */
int roxe_icrc_check(const void *frame, const struct roxe_pkt *pkt);

/* The ICRC in pieces, for payload that is not contiguous with the headers,
 * or copied into the frame: start over the headers, update over payload and
 * pad, the result is the ICRC (roxe_frame_seal_icrc() stores it). */
uint32_t roxe_icrc_begin(const void *frame, const struct roxe_pkt *pkt);
uint32_t roxe_icrc_update(uint32_t crc, const void *data, size_t len);
/* memcpy(dst, src, len), then roxe_icrc_update(crc, dst, len), reading src
 * once (where the CPU allows, in one pass): the CRC is of what dst holds
 * even if src changes meanwhile. The buffers must not overlap. */
uint32_t roxe_icrc_update_copy(uint32_t crc, void *dst, const void *src, size_t len);
/* Which CRC-32 code runs: "avx512-vpclmulqdq-vbmi", "avx512-vpclmulqdq",
 * "avx2-vpclmulqdq" or "libdeflate" (the CPU's widest, or as selected). */
const char *roxe_icrc_impl(void);
/* For comparing the codes (the CRC is the same): the process's CRCs from
 * now on run a narrower one than the CPU's widest. "generic": libdeflate's
 * alone; "avx2": the 256-bit VPCLMULQDQ folding; "avx512": the 512-bit one
 * without VBMI; a code the CPU lacks gives the widest it has below. NULL or
 * "": the widest (the default). -EINVAL: another name, nothing changed. */
int roxe_icrc_select(const char *impl);

/* --- names and addresses -------------------------------------------------- */
const char *roxe_opcode_name(uint8_t opcode);	/* "RC_SEND_ONLY"; "unknown" */
const char *roxe_verdict_name(int verdict);	/* "ok", "bad_ip_len", ... */

/* GIDs: IPv4 addresses are carried as IPv4-mapped IPv6 addresses. */
bool roxe_gid_is_v4(const uint8_t gid[16]);
void roxe_gid_from_v4(uint8_t gid[16], uint32_t ip_be);
/* a == b: two words each, inline (a call to memcmp() per frame was 25
 * instructions on the receive path) */
static inline bool roxe_gid_eq(const uint8_t a[16], const uint8_t b[16])
{
	uint64_t x[2], y[2];

	__builtin_memcpy(x, a, 16);
	__builtin_memcpy(y, b, 16);
	return !((x[0] ^ y[0]) | (x[1] ^ y[1]));
}
/* Text form: dotted quad for IPv4-mapped GIDs, IPv6 text otherwise. */
void roxe_gid_ntop(const uint8_t gid[16], char *buf, size_t len);

/* The RFC 1071 checksum of an IPv4 header of len bytes (its checksum field
 * zeroed first). */
uint16_t roxe_ipv4_csum(const void *hdr, size_t len);

/* UDP source port for a QP pair: RoCE v2 flow entropy in 0xc000-0xffff. */
uint16_t roxe_flow_sport(uint32_t src_qpn, uint32_t dst_qpn);

#endif /* ROXE_FRAME_H */
