/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The one RoCE v2 frame parser, shared by the XDP program and user space:
 * Ethernet (up to two 802.1Q/802.1ad tags) / IPv4 or IPv6 / UDP 4791 /
 * BTH / extension headers / payload / pad / ICRC.
 *
 * It is written for the BPF verifier (every read bounds-checked against
 * data_end, bounded loops, no calls) and reads only the headers up to the
 * BTH; lengths come from the IP and UDP headers, so payload may lie beyond
 * data_end (XDP multi-buffer frames).
 *
 * Verdict: ROXE_PKT_OK, ROXE_PKT_NOT_ROCE (not UDP to port 4791: leave it to
 * the kernel), or the reason a RoCE v2 frame is malformed.
 */
#ifndef ROXE_PARSE_H
#define ROXE_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include "roxe/wire.h"
#include "roxe/opcode.h"

#ifndef ROXE_ALWAYS_INLINE
#define ROXE_ALWAYS_INLINE static inline __attribute__((always_inline))
#endif

/* Verdicts; the malformed ones index the drop counters (include/roxe/maps.h). */
enum roxe_verdict {
	ROXE_PKT_OK = 0,
	ROXE_PKT_NOT_ROCE,	/* not UDP to port 4791 (or an IP fragment) */
	ROXE_PKT_BAD_IP_LEN,	/* IP length beyond the frame, or below its headers */
	ROXE_PKT_BAD_UDP_LEN,	/* UDP length disagrees with IP, or too short for BTH+ICRC */
	ROXE_PKT_BAD_VERSION,	/* BTH transport version is not 0 */
	ROXE_PKT_BAD_OPCODE,	/* opcode not in the table */
	ROXE_PKT_BAD_HDR_LEN,	/* extension headers longer than the packet */
	ROXE_PKT_BAD_PAYLOAD,	/* payload not allowed, pad > payload, not 4-byte aligned */
	ROXE_PKT_BAD_ICRC,	/* set by user space after roxe_icrc_verify() */
	ROXE_PKT__COUNT
};

/* What the parser learnt about a frame; offsets from the frame's start. */
struct roxe_pkt {
	__u16	l3_off;		/* IPv4 or IPv6 header */
	__u16	l4_off;		/* UDP header */
	__u16	bth_off;	/* BTH */
	__u16	payload_off;	/* first payload byte, after the extension headers */
	__u32	payload_len;	/* payload bytes, pad excluded */
	__u32	frame_len;	/* up to the end of the ICRC: Ethernet padding excluded */
	__u16	vlan_tci;	/* innermost 802.1Q tag's TCI, 0 without one */
	__u16	flags;		/* the opcode's ROXE_HDR_* | ROXE_OPF_* */
	__u8	ip_version;	/* 4 or 6 */
	__u8	vlans;		/* number of VLAN tags */
	__u8	opcode;
	__u8	pad;		/* pad bytes after the payload */
};

#define ROXE_ETH_P_8021Q	0x8100
#define ROXE_ETH_P_8021AD	0x88a8
#define ROXE_MAX_VLANS		2
#define ROXE_IP_MF		0x2000
#define ROXE_IP_OFFSET		0x1fff
#define ROXE_IPPROTO_UDP	17
/* ECN, the low 2 bits of the IPv4 TOS / IPv6 traffic class (RFC 3168). */
#define ROXE_ECN_MASK		0x3
#define ROXE_ECN_NOT_ECT	0x0
#define ROXE_ECN_ECT1		0x1
#define ROXE_ECN_ECT0		0x2
#define ROXE_ECN_CE		0x3

/*
 * The IPv4, IPv6 and UDP headers as the parser reads them. In a frame they
 * start 14, 18 or 22 bytes in: the kernel's struct iphdr and ipv6hdr ask for
 * 4-byte alignment (their addresses are __be32), so reading a frame through
 * them is undefined behaviour (UBSan flags every frame) and faults on
 * strict-alignment CPUs. These views ask for 2: frames start at even
 * addresses (XDP, AF_XDP and malloc'd buffers all do), and BPF keeps its
 * 16-bit loads.
 */
struct roxe_ipv4_hdr {
	__u8	ver_ihl;	/* version:4 | IHL:4 */
	__u8	tos;
	__be16	tot_len;
	__be16	id;
	__be16	frag_off;	/* flags:3 | fragment offset:13 */
	__u8	ttl;
	__u8	protocol;
	__be16	check;
	__be32	saddr;
	__be32	daddr;
} __attribute__((packed, aligned(2)));

struct roxe_ipv6_hdr {
	__u8	ver_tc_flow[4];	/* version:4 | traffic class:8 | flow label:20 */
	__be16	payload_len;
	__u8	nexthdr;
	__u8	hop_limit;
	__u8	saddr[16];
	__u8	daddr[16];
} __attribute__((packed, aligned(2)));

struct roxe_udp_hdr {
	__be16	source;
	__be16	dest;
	__be16	len;
	__be16	check;
} __attribute__((packed, aligned(2)));

_Static_assert(sizeof(struct roxe_ipv4_hdr) == 20, "IPv4 header size");
_Static_assert(sizeof(struct roxe_ipv6_hdr) == 40, "IPv6 header size");
_Static_assert(sizeof(struct roxe_udp_hdr) == 8, "UDP header size");

/* The largest bth_off roxe_parse returns: Ethernet, two VLAN tags, an IPv4
 * header with 40 bytes of options (IHL 15: larger than IPv6's 40), UDP. */
#define ROXE_BTH_OFF_MAX	(14 + 4 * ROXE_MAX_VLANS + 15 * 4 + 8)

/*
 * Parse the frame in [data, data_end) whose full length is frame_total
 * (equal to data_end - data except in XDP multi-buffer frames).
 */
ROXE_ALWAYS_INLINE int roxe_parse(const void *data, const void *data_end,
				  __u32 frame_total, struct roxe_pkt *pkt)
{
	const __u8 *p = data;
	const __u8 *end = data_end;
	const struct ethhdr *eth = (const void *)p;
	const struct roxe_udp_hdr *udp;
	const struct roxe_bth *bth;
	const struct roxe_opcode_info *info;
	__u32 l3_off, l4_off, ip_end, udp_len, roce_len, body;
	__u16 proto;
	int i;

	if ((const void *)(eth + 1) > data_end)
		return ROXE_PKT_NOT_ROCE;
	proto = roxe_be16_get(eth->h_proto);
	l3_off = sizeof(*eth);
	pkt->vlans = 0;
	pkt->vlan_tci = 0;
	for (i = 0; i < ROXE_MAX_VLANS; i++) {
		const __u8 *tag = p + l3_off;

		if (proto != ROXE_ETH_P_8021Q && proto != ROXE_ETH_P_8021AD)
			break;
		if (tag + 4 > end)
			return ROXE_PKT_NOT_ROCE;
		pkt->vlan_tci = ((__u16)tag[0] << 8 | tag[1]);
		proto = (__u16)tag[2] << 8 | tag[3];
		pkt->vlans++;
		l3_off += 4;
	}

	if (proto == ETH_P_IP) {
		const struct roxe_ipv4_hdr *ip = (const void *)(p + l3_off);
		__u32 ihl, tot_len;

		if ((const void *)(ip + 1) > data_end)
			return ROXE_PKT_NOT_ROCE;
		if ((ip->ver_ihl >> 4) != 4 || (ip->ver_ihl & 0x0f) < 5 ||
		    ip->protocol != ROXE_IPPROTO_UDP)
			return ROXE_PKT_NOT_ROCE;
		/* A fragment is the kernel's to reassemble or drop. */
		if (roxe_be16_get(ip->frag_off) & (ROXE_IP_MF | ROXE_IP_OFFSET))
			return ROXE_PKT_NOT_ROCE;
		ihl = (ip->ver_ihl & 0x0f) * 4;
		l4_off = l3_off + ihl;
		udp = (const void *)(p + l4_off);
		if ((const void *)(udp + 1) > data_end)
			return ROXE_PKT_NOT_ROCE;
		if (udp->dest != roxe_be16(ROXE_UDP_PORT))
			return ROXE_PKT_NOT_ROCE;
		tot_len = roxe_be16_get(ip->tot_len);
		if (tot_len < ihl + sizeof(*udp))
			return ROXE_PKT_BAD_IP_LEN;
		ip_end = l3_off + tot_len;
		pkt->ip_version = 4;
	} else if (proto == ETH_P_IPV6) {
		const struct roxe_ipv6_hdr *ip6 = (const void *)(p + l3_off);

		if ((const void *)(ip6 + 1) > data_end)
			return ROXE_PKT_NOT_ROCE;
		/* RoCE v2 frames carry no IPv6 extension headers. */
		if ((ip6->ver_tc_flow[0] >> 4) != 6 || ip6->nexthdr != ROXE_IPPROTO_UDP)
			return ROXE_PKT_NOT_ROCE;
		l4_off = l3_off + sizeof(*ip6);
		udp = (const void *)(p + l4_off);
		if ((const void *)(udp + 1) > data_end)
			return ROXE_PKT_NOT_ROCE;
		if (udp->dest != roxe_be16(ROXE_UDP_PORT))
			return ROXE_PKT_NOT_ROCE;
		if (roxe_be16_get(ip6->payload_len) < sizeof(*udp))
			return ROXE_PKT_BAD_IP_LEN;
		ip_end = l4_off + roxe_be16_get(ip6->payload_len);
		pkt->ip_version = 6;
	} else {
		return ROXE_PKT_NOT_ROCE;
	}

	/* From here on the frame claims to be RoCE v2: it is ours, or malformed.
	 * The offsets are known now; a malformed verdict leaves them set so
	 * the caller can attribute the drop (the BTH may lie past data_end). */
	pkt->l3_off = l3_off;
	pkt->l4_off = l4_off;
	pkt->bth_off = l4_off + sizeof(*udp);
	if (ip_end > frame_total)
		return ROXE_PKT_BAD_IP_LEN;
	udp_len = roxe_be16_get(udp->len);
	if (udp_len != ip_end - l4_off)
		return ROXE_PKT_BAD_UDP_LEN;
	roce_len = udp_len - sizeof(*udp);
	if (roce_len < ROXE_BTH_LEN + ROXE_ICRC_LEN)
		return ROXE_PKT_BAD_UDP_LEN;

	bth = (const void *)(udp + 1);
	if ((const void *)(bth + 1) > data_end)
		return ROXE_PKT_BAD_HDR_LEN;
	if (roxe_bth_tver(bth) != ROXE_BTH_TVER)
		return ROXE_PKT_BAD_VERSION;
	info = roxe_opcode_info(bth->opcode);
	if (!(info->flags & ROXE_OPF_VALID))
		return ROXE_PKT_BAD_OPCODE;
	if ((__u32)info->hdr_len + ROXE_ICRC_LEN > roce_len)
		return ROXE_PKT_BAD_HDR_LEN;

	/* Payload and pad fill whole 4-byte words; pad only follows payload. */
	body = roce_len - info->hdr_len - ROXE_ICRC_LEN;
	pkt->pad = roxe_bth_pad(bth);
	if ((body & 3) || pkt->pad > body)
		return ROXE_PKT_BAD_PAYLOAD;
	if (body && !(info->flags & ROXE_OPF_PAYLOAD))
		return ROXE_PKT_BAD_PAYLOAD;
	if (info->fixed_payload && (body != info->fixed_payload || pkt->pad))
		return ROXE_PKT_BAD_PAYLOAD;

	pkt->payload_off = pkt->bth_off + info->hdr_len;
	pkt->payload_len = body - pkt->pad;
	pkt->frame_len = ip_end;
	pkt->flags = info->flags;
	pkt->opcode = bth->opcode;
	return ROXE_PKT_OK;
}

/* ::ffff:0:0/96, the prefix of a GID that carries an IPv4 address (an
 * IPv4-mapped IPv6 address, RFC 4291 2.5.5.2): a 12-byte array's
 * initializer, here and in user/wire/frame.c */
#define ROXE_V4_MAPPED_PREFIX	{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff }

/*
 * The source and destination IP addresses of a frame roxe_parse() accepted
 * (or found malformed past its IP header), as GIDs: IPv4 addresses
 * IPv4-mapped (::ffff:a.b.c.d). Either pointer may be NULL. Returns 0, or
 * -1 when the IP header is not within [data, data_end).
 */
ROXE_ALWAYS_INLINE int roxe_pkt_gids(const void *data, const void *data_end,
				     const struct roxe_pkt *pkt, __u8 *sgid, __u8 *dgid)
{
	const __u8 *l3 = (const __u8 *)data + (pkt->l3_off & 0xff);
	/* whole words, not a byte loop: this runs for every frame an engine
	 * takes */
	static const __u8 v4_mapped[12] = ROXE_V4_MAPPED_PREFIX;

	if (pkt->ip_version == 4) {
		const struct roxe_ipv4_hdr *ip = (const void *)l3;

		if ((const void *)(ip + 1) > data_end)
			return -1;
		if (sgid) {
			__builtin_memcpy(sgid, v4_mapped, 12);
			__builtin_memcpy(sgid + 12, &ip->saddr, 4);
		}
		if (dgid) {
			__builtin_memcpy(dgid, v4_mapped, 12);
			__builtin_memcpy(dgid + 12, &ip->daddr, 4);
		}
		return 0;
	}
	{
		const struct roxe_ipv6_hdr *ip6 = (const void *)l3;

		if ((const void *)(ip6 + 1) > data_end)
			return -1;
		if (sgid)
			__builtin_memcpy(sgid, ip6->saddr, 16);
		if (dgid)
			__builtin_memcpy(dgid, ip6->daddr, 16);
	}
	return 0;
}

/* The ECN bits (ROXE_ECN_*) of a parsed frame's IP header, or -1 if the
 * header is not in [data, data_end). */
ROXE_ALWAYS_INLINE int roxe_pkt_ecn(const void *data, const void *data_end,
				    const struct roxe_pkt *pkt)
{
	const __u8 *l3 = (const __u8 *)data + (pkt->l3_off & 0xff);

	if ((const void *)(l3 + 2) > data_end)
		return -1;
	if (pkt->ip_version == 4)
		return l3[1] & ROXE_ECN_MASK;
	return (l3[1] >> 4) & ROXE_ECN_MASK;
}

#endif /* ROXE_PARSE_H */
