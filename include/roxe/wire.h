/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCE v2 wire format: the InfiniBand transport headers that follow
 * Ethernet / IPv4 or IPv6 / UDP (destination port 4791), as defined by the
 * IBTA specification (vol. 1, ch. 9) and its RoCE v2 annex (A17).
 *
 * Everything here is big-endian on the wire. The structs are packed: in a
 * frame, headers start at any byte offset (an IPv4 BTH sits at offset 42).
 * Read and write fields through the accessors below, never by hand.
 *
 * This header is shared by bpf/, user/ and kmod/: only <linux/types.h>.
 */
#ifndef ROXE_WIRE_H
#define ROXE_WIRE_H

#include <linux/types.h>

#ifndef __force
#define __force
#endif

/* --- byte order, the same in BPF, user space and the kernel --------------- */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define roxe_swab16(x) __builtin_bswap16(x)
#define roxe_swab32(x) __builtin_bswap32(x)
#define roxe_swab64(x) __builtin_bswap64(x)
#else
#define roxe_swab16(x) (x)
#define roxe_swab32(x) (x)
#define roxe_swab64(x) (x)
#endif

static inline __u16 roxe_be16_get(__be16 v) { return roxe_swab16((__force __u16)v); }
static inline __u32 roxe_be32_get(__be32 v) { return roxe_swab32((__force __u32)v); }
static inline __u64 roxe_be64_get(__be64 v) { return roxe_swab64((__force __u64)v); }
static inline __be16 roxe_be16(__u16 v) { return (__force __be16)roxe_swab16(v); }
static inline __be32 roxe_be32(__u32 v) { return (__force __be32)roxe_swab32(v); }
static inline __be64 roxe_be64(__u64 v) { return (__force __be64)roxe_swab64(v); }

/* --- constants ------------------------------------------------------------ */
#define ROXE_UDP_PORT		4791	/* IANA: RoCE v2 */
#define ROXE_UDP_SPORT_BASE	0xc000	/* flow entropy lives in the low 14 bits */
#define ROXE_UDP_SPORT_MASK	0x3fff
#define ROXE_BTH_TVER		0	/* transport header version */
#define ROXE_QPN_MASK		0x00ffffffu
#define ROXE_QPN_GSI		1	/* QP1: CM MADs */
#define ROXE_QKEY_GSI		0x80010000u	/* QP1's Q_Key (IBA 13.4.6.1) */
#define ROXE_DEFAULT_PKEY	0xffff
#define ROXE_ICRC_LEN		4
/* The ICRC covers a 64-bit LRH that RoCE v2 frames do not carry: it is
 * computed as if 8 bytes of 0xff came first. */
#define ROXE_ICRC_LRH_LEN	8

/* --- Base Transport Header (12 bytes) ------------------------------------- */
struct roxe_bth {
	__u8	opcode;
	__u8	flags;		/* SE:1 MigReq:1 PadCnt:2 TVer:4 */
	__be16	pkey;
	__be32	qpn;		/* FECN:1 BECN:1 resv:6 | DestQP:24 */
	__be32	apsn;		/* AckReq:1 resv:7 | PSN:24 */
} __attribute__((packed));

#define ROXE_BTH_SE		0x80
#define ROXE_BTH_MIG		0x40
#define ROXE_BTH_PAD_SHIFT	4
#define ROXE_BTH_PAD_MASK	0x30
#define ROXE_BTH_TVER_MASK	0x0f
#define ROXE_BTH_FECN		0x80000000u
#define ROXE_BTH_BECN		0x40000000u
#define ROXE_BTH_ACKREQ		0x80000000u
/* Byte 4 of the BTH (FECN, BECN, resv6) is variant: masked in the ICRC. */
#define ROXE_BTH_VARIANT_OFF	4

static inline __u8 roxe_bth_pad(const struct roxe_bth *b)
{
	return (b->flags & ROXE_BTH_PAD_MASK) >> ROXE_BTH_PAD_SHIFT;
}
static inline __u8 roxe_bth_tver(const struct roxe_bth *b) { return b->flags & ROXE_BTH_TVER_MASK; }
static inline int roxe_bth_se(const struct roxe_bth *b) { return !!(b->flags & ROXE_BTH_SE); }
static inline int roxe_bth_mig(const struct roxe_bth *b) { return !!(b->flags & ROXE_BTH_MIG); }
static inline __u16 roxe_bth_pkey(const struct roxe_bth *b) { return roxe_be16_get(b->pkey); }
static inline __u32 roxe_bth_qpn(const struct roxe_bth *b) { return roxe_be32_get(b->qpn) & ROXE_QPN_MASK; }
static inline int roxe_bth_fecn(const struct roxe_bth *b) { return !!(roxe_be32_get(b->qpn) & ROXE_BTH_FECN); }
static inline int roxe_bth_becn(const struct roxe_bth *b) { return !!(roxe_be32_get(b->qpn) & ROXE_BTH_BECN); }
static inline __u32 roxe_bth_psn(const struct roxe_bth *b) { return roxe_be32_get(b->apsn) & 0x00ffffffu; }
static inline int roxe_bth_ackreq(const struct roxe_bth *b) { return !!(roxe_be32_get(b->apsn) & ROXE_BTH_ACKREQ); }

static inline void roxe_bth_init(struct roxe_bth *b, __u8 opcode, int se, int mig,
				 __u8 pad, __u16 pkey, __u32 qpn, int ackreq, __u32 psn)
{
	b->opcode = opcode;
	b->flags = (se ? ROXE_BTH_SE : 0) | (mig ? ROXE_BTH_MIG : 0) |
		   ((pad << ROXE_BTH_PAD_SHIFT) & ROXE_BTH_PAD_MASK) | ROXE_BTH_TVER;
	b->pkey = roxe_be16(pkey);
	b->qpn = roxe_be32(qpn & ROXE_QPN_MASK);
	b->apsn = roxe_be32((ackreq ? ROXE_BTH_ACKREQ : 0) | (psn & 0x00ffffffu));
}

/* --- Extension headers ----------------------------------------------------- */
/* RDMA Extended Transport Header: WRITE first/only, READ request. */
struct roxe_reth {
	__be64	va;
	__be32	rkey;
	__be32	dma_len;
} __attribute__((packed));

/* ACK Extended Transport Header: every ACK/NAK and READ response first/last/only. */
struct roxe_aeth {
	__be32	smsn;		/* syndrome:8 | MSN:24 */
} __attribute__((packed));

/* Atomic Extended Transport Header: CMP_SWAP, FETCH_ADD. */
struct roxe_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	compare;
} __attribute__((packed));

/* Atomic Acknowledge Extended Transport Header: the original remote value. */
struct roxe_atmack {
	__be64	orig;
} __attribute__((packed));

/* Immediate data. */
struct roxe_immdt {
	__be32	imm;
} __attribute__((packed));

/* FLUSH Extended Transport Header (IBA 1.5, 9.3.3.4): resv:26 | selectivity
 * level:2 | placement type:4. */
struct roxe_feth {
	__be32	bits;
} __attribute__((packed));

#define ROXE_FETH_PLT_MASK	0x0000000fu	/* placement type */
#define ROXE_FETH_SEL_MASK	0x00000030u	/* selectivity level */
#define ROXE_FETH_SEL_SHIFT	4
/* Placement types, a bit each (ib_verbs' IB_FLUSH_GLOBAL, _PERSISTENT). */
#define ROXE_FLUSH_PLT_GLOBAL	1	/* global visibility */
#define ROXE_FLUSH_PLT_PERSISTENT 2	/* persistence */
/* Selectivity levels (IB_FLUSH_RANGE, IB_FLUSH_MR). */
#define ROXE_FLUSH_SEL_RANGE	0	/* the RETH's range */
#define ROXE_FLUSH_SEL_MR	1	/* the whole MR the R_Key names */

static inline __u8 roxe_feth_plt(const struct roxe_feth *f)
{
	return roxe_be32_get(f->bits) & ROXE_FETH_PLT_MASK;
}
static inline __u8 roxe_feth_sel(const struct roxe_feth *f)
{
	return (roxe_be32_get(f->bits) & ROXE_FETH_SEL_MASK) >> ROXE_FETH_SEL_SHIFT;
}
static inline void roxe_feth_set(struct roxe_feth *f, __u8 plt, __u8 sel)
{
	f->bits = roxe_be32(((__u32)plt & ROXE_FETH_PLT_MASK) |
			    (((__u32)sel << ROXE_FETH_SEL_SHIFT) & ROXE_FETH_SEL_MASK));
}

/* ATOMIC WRITE (IBA 1.5): a RETH and exactly this much payload. */
#define ROXE_ATOMIC_WRITE_LEN	8

/* Invalidate Extended Transport Header: SEND_WITH_INVALIDATE. */
struct roxe_ieth {
	__be32	rkey;
} __attribute__((packed));

/* Datagram Extended Transport Header: UD. */
struct roxe_deth {
	__be32	qkey;
	__be32	sqp;		/* resv:8 | SrcQP:24 */
} __attribute__((packed));

/* CNP payload: 16 reserved bytes (RoCE v2 annex A17.9.3). */
#define ROXE_CNP_PAYLOAD_LEN	16

#define ROXE_BTH_LEN		12
#define ROXE_RETH_LEN		16
#define ROXE_AETH_LEN		4
#define ROXE_ATMETH_LEN		28
#define ROXE_ATMACK_LEN		8
#define ROXE_IMMDT_LEN		4
#define ROXE_IETH_LEN		4
#define ROXE_DETH_LEN		8
#define ROXE_FETH_LEN		4

_Static_assert(sizeof(struct roxe_bth) == ROXE_BTH_LEN, "BTH size");
_Static_assert(sizeof(struct roxe_reth) == ROXE_RETH_LEN, "RETH size");
_Static_assert(sizeof(struct roxe_aeth) == ROXE_AETH_LEN, "AETH size");
_Static_assert(sizeof(struct roxe_atmeth) == ROXE_ATMETH_LEN, "AtomicETH size");
_Static_assert(sizeof(struct roxe_atmack) == ROXE_ATMACK_LEN, "AtomicAckETH size");
_Static_assert(sizeof(struct roxe_immdt) == ROXE_IMMDT_LEN, "ImmDt size");
_Static_assert(sizeof(struct roxe_ieth) == ROXE_IETH_LEN, "IETH size");
_Static_assert(sizeof(struct roxe_deth) == ROXE_DETH_LEN, "DETH size");
_Static_assert(sizeof(struct roxe_feth) == ROXE_FETH_LEN, "FETH size");

/* --- AETH syndrome (IBA 9.7.5.1.1) ------------------------------------------ */
#define ROXE_AETH_TYPE_MASK	0x60
#define ROXE_AETH_ACK		0x00	/* low 5 bits: credit count */
#define ROXE_AETH_RNR_NAK	0x20	/* low 5 bits: RNR timer code */
#define ROXE_AETH_NAK		0x60	/* low 5 bits: NAK code */
#define ROXE_AETH_VALUE_MASK	0x1f
#define ROXE_AETH_CREDITS_INVALID 0x1f	/* end-to-end flow control not in use */

enum roxe_nak_code {
	ROXE_NAK_PSN_SEQ_ERR		= 0,
	ROXE_NAK_INVALID_REQUEST	= 1,
	ROXE_NAK_REMOTE_ACCESS		= 2,
	ROXE_NAK_REMOTE_OP_ERR		= 3,
	ROXE_NAK_INVALID_RD_REQUEST	= 4,
};

static inline __u8 roxe_aeth_syndrome(const struct roxe_aeth *a) { return roxe_be32_get(a->smsn) >> 24; }
static inline __u32 roxe_aeth_msn(const struct roxe_aeth *a) { return roxe_be32_get(a->smsn) & 0x00ffffffu; }
static inline void roxe_aeth_set(struct roxe_aeth *a, __u8 syndrome, __u32 msn)
{
	a->smsn = roxe_be32(((__u32)syndrome << 24) | (msn & 0x00ffffffu));
}

static inline __u32 roxe_deth_sqp(const struct roxe_deth *d) { return roxe_be32_get(d->sqp) & ROXE_QPN_MASK; }

/* --- multicast (IBA A17.4.5.2, as rxe) ------------------------------------ */
/* A UD send to a multicast group carries this destination QPN. */
#define ROXE_MCAST_QPN		0x00ffffffu

/* A multicast GID: IPv4 224.0.0.0/4 (IPv4-mapped) or IPv6 ff00::/8. */
static inline int roxe_gid_is_mcast(const __u8 *g)
{
	static const __u8 v4map[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (g[0] == 0xff)
		return 1;
	for (int i = 0; i < 12; i++)
		if (g[i] != v4map[i])
			return 0;
	return (g[12] & 0xf0) == 0xe0;
}

/* The Ethernet group address of a multicast GID: 01:00:5e + the low 23 bits
 * of an IPv4 group, 33:33 + the low 32 bits of an IPv6 one (RFC 1112,
 * RFC 2464). */
static inline void roxe_gid_mcast_mac(const __u8 *g, __u8 *mac)
{
	if (g[0] == 0xff) {
		mac[0] = 0x33;
		mac[1] = 0x33;
		mac[2] = g[12];
	} else {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = g[13] & 0x7f;
		mac[4] = g[14];
		mac[5] = g[15];
		return;
	}
	mac[3] = g[13];
	mac[4] = g[14];
	mac[5] = g[15];
}

#endif /* ROXE_WIRE_H */
