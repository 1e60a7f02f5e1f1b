// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * RoCE v2 frame builder and header reader (the parser is roxe/parse.h).
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include "roxe/frame.h"

static const uint8_t v4_mapped_prefix[12] = ROXE_V4_MAPPED_PREFIX;

bool roxe_gid_is_v4(const uint8_t gid[16])
{
	return memcmp(gid, v4_mapped_prefix, sizeof(v4_mapped_prefix)) == 0;
}

void roxe_gid_from_v4(uint8_t gid[16], uint32_t ip_be)
{
	memcpy(gid, v4_mapped_prefix, sizeof(v4_mapped_prefix));
	memcpy(gid + 12, &ip_be, 4);
}

void roxe_gid_ntop(const uint8_t gid[16], char *buf, size_t len)
{
	if (roxe_gid_is_v4(gid))
		inet_ntop(AF_INET, gid + 12, buf, len);
	else
		inet_ntop(AF_INET6, gid, buf, len);
}

uint16_t roxe_flow_sport(uint32_t src_qpn, uint32_t dst_qpn)
{
	/* Fibonacci hashing of the QP pair: distinct pairs spread over ECMP
	 * paths and RSS queues, one pair always takes the same path. */
	uint64_t h = ((uint64_t)(src_qpn & ROXE_QPN_MASK) << 24 |
		      (dst_qpn & ROXE_QPN_MASK)) * 0x9e3779b97f4a7c15ull;

	return ROXE_UDP_SPORT_BASE | (uint16_t)((h >> 50) & ROXE_UDP_SPORT_MASK);
}

uint16_t roxe_ipv4_csum(const void *hdr, size_t len)
{
	const uint8_t *h = hdr;
	uint64_t sum = 0;
	size_t i = 0;

	/* 32-bit words in the CPU's byte order, folded and swapped once at
	 * the end: the one's complement sum does not depend on the order
	 * (RFC 1071, 2.B). Every frame sent pays this; most are 20 bytes. */
	if (len == 20) {
		uint32_t w[5];

		memcpy(w, h, 20);
		sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
		i = 20;
	}
	for (; i + 4 <= len; i += 4) {
		uint32_t w;

		memcpy(&w, h + i, 4);
		sum += w;
	}
	for (; i + 2 <= len; i += 2) {
		uint16_t w;

		memcpy(&w, h + i, 2);
		sum += w;
	}
	if (i < len) {			/* an odd byte: the high half of a last word */
		uint16_t w = htons((uint16_t)(h[i] << 8));

		sum += w;
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ntohs((uint16_t)~sum);
}

static void put16(uint8_t *p, uint16_t v) { v = htons(v); memcpy(p, &v, 2); }

static size_t put_ext(uint8_t *p, uint16_t flags, const struct roxe_frame_hdr *h)
{
	uint8_t *start = p;

	if (flags & ROXE_HDR_DETH) {
		struct roxe_deth d = { roxe_be32(h->qkey), roxe_be32(h->src_qpn & ROXE_QPN_MASK) };

		memcpy(p, &d, sizeof(d));
		p += sizeof(d);
	}
	if (flags & ROXE_HDR_FETH) {
		struct roxe_feth fe;

		roxe_feth_set(&fe, h->flush_type, h->flush_level);
		memcpy(p, &fe, sizeof(fe));
		p += sizeof(fe);
	}
	if (flags & ROXE_HDR_RETH) {
		struct roxe_reth r = { roxe_be64(h->va), roxe_be32(h->rkey), roxe_be32(h->dma_len) };

		memcpy(p, &r, sizeof(r));
		p += sizeof(r);
	}
	if (flags & ROXE_HDR_ATMETH) {
		struct roxe_atmeth a = {
			roxe_be64(h->va), roxe_be32(h->rkey),
			roxe_be64(h->swap_add), roxe_be64(h->compare),
		};

		memcpy(p, &a, sizeof(a));
		p += sizeof(a);
	}
	if (flags & ROXE_HDR_AETH) {
		struct roxe_aeth a;

		roxe_aeth_set(&a, h->syndrome, h->msn);
		memcpy(p, &a, sizeof(a));
		p += sizeof(a);
	}
	if (flags & ROXE_HDR_ATMACK) {
		struct roxe_atmack a = { roxe_be64(h->orig) };

		memcpy(p, &a, sizeof(a));
		p += sizeof(a);
	}
	if (flags & ROXE_HDR_IMMDT) {
		memcpy(p, &h->imm, 4);
		p += 4;
	}
	if (flags & ROXE_HDR_IETH) {
		struct roxe_ieth i = { roxe_be32(h->inv_rkey) };

		memcpy(p, &i, sizeof(i));
		p += sizeof(i);
	}
	return (size_t)(p - start);
}

int roxe_frame_hdrs(void *buf, size_t cap, const struct roxe_frame_addr *a,
		    const struct roxe_frame_hdr *h, uint32_t payload_len,
		    struct roxe_pkt *pkt)
{
	const struct roxe_opcode_info *info = roxe_opcode_info(h->opcode);
	bool v4 = roxe_gid_is_v4(a->sgid);
	uint8_t *f = buf;
	uint8_t pad = (uint8_t)(-payload_len & 3);
	uint8_t ttl = a->hop_limit ? a->hop_limit : 64;
	size_t off, ip_len = v4 ? 20 : 40;
	uint32_t roce_len, udp_len;
	struct roxe_bth bth;

	if (!(info->flags & ROXE_OPF_VALID) || v4 != roxe_gid_is_v4(a->dgid))
		return -EINVAL;
	if (payload_len && !(info->flags & ROXE_OPF_PAYLOAD))
		return -EINVAL;
	if (info->fixed_payload && payload_len != info->fixed_payload)
		return -EINVAL;
	roce_len = info->hdr_len + payload_len + pad + ROXE_ICRC_LEN;
	udp_len = 8 + roce_len;
	if ((v4 ? ip_len + udp_len : udp_len) > 0xffff)
		return -EINVAL;
	off = 14 + (a->vlan ? 4 : 0);
	if (cap < off + ip_len + udp_len)
		return -ENOSPC;

	/* Ethernet, optional 802.1Q tag */
	memcpy(f, a->dmac, 6);
	memcpy(f + 6, a->smac, 6);
	if (a->vlan) {
		put16(f + 12, ROXE_ETH_P_8021Q);
		put16(f + 14, a->vlan_tci);
	}
	put16(f + off - 2, v4 ? ETH_P_IP : ETH_P_IPV6);

	pkt->l3_off = (uint16_t)off;
	if (v4) {
		uint8_t *ip = f + off;

		ip[0] = 0x45;
		ip[1] = a->tclass;
		put16(ip + 2, (uint16_t)(ip_len + udp_len));
		put16(ip + 4, a->ip_id);
		put16(ip + 6, 0x4000);		/* DF: RoCE frames are never fragmented */
		ip[8] = ttl;
		ip[9] = IPPROTO_UDP;
		put16(ip + 10, 0);
		memcpy(ip + 12, a->sgid + 12, 4);
		memcpy(ip + 16, a->dgid + 12, 4);
		put16(ip + 10, roxe_ipv4_csum(ip, 20));
	} else {
		uint8_t *ip = f + off;
		uint32_t w = 6u << 28 | (uint32_t)a->tclass << 20 | (a->flow_label & 0xfffff);

		w = htonl(w);
		memcpy(ip, &w, 4);
		put16(ip + 4, (uint16_t)udp_len);
		ip[6] = IPPROTO_UDP;
		ip[7] = ttl;
		memcpy(ip + 8, a->sgid, 16);
		memcpy(ip + 24, a->dgid, 16);
	}
	off += ip_len;

	/* UDP: checksum 0, as RoCE v2 senders do; the ICRC protects the data. */
	pkt->l4_off = (uint16_t)off;
	put16(f + off, a->sport);
	put16(f + off + 2, ROXE_UDP_PORT);
	put16(f + off + 4, (uint16_t)udp_len);
	put16(f + off + 6, 0);
	off += 8;

	pkt->bth_off = (uint16_t)off;
	roxe_bth_init(&bth, h->opcode, h->se, h->mig, pad, h->pkey, h->dqpn,
		      h->ackreq, h->psn);
	if (h->fecn || h->becn)
		bth.qpn = roxe_be32(roxe_be32_get(bth.qpn) |
				    (h->fecn ? ROXE_BTH_FECN : 0) |
				    (h->becn ? ROXE_BTH_BECN : 0));
	memcpy(f + off, &bth, sizeof(bth));
	off += sizeof(bth);
	off += put_ext(f + off, info->flags, h);

	pkt->payload_off = (uint16_t)off;
	pkt->payload_len = payload_len;
	pkt->pad = pad;
	pkt->frame_len = (uint32_t)(off + payload_len + pad + ROXE_ICRC_LEN);
	pkt->ip_version = v4 ? 4 : 6;
	pkt->vlans = a->vlan ? 1 : 0;
	pkt->vlan_tci = a->vlan ? a->vlan_tci : 0;
	pkt->flags = info->flags;
	pkt->opcode = h->opcode;
	return 0;
}

static uint32_t store_icrc(uint8_t *f, const struct roxe_pkt *pkt, uint32_t crc)
{
	uint8_t *icrc = f + pkt->frame_len - ROXE_ICRC_LEN;

	icrc[0] = (uint8_t)crc;
	icrc[1] = (uint8_t)(crc >> 8);
	icrc[2] = (uint8_t)(crc >> 16);
	icrc[3] = (uint8_t)(crc >> 24);
	return pkt->frame_len;
}

uint32_t roxe_frame_seal(void *buf, const struct roxe_pkt *pkt)
{
	uint8_t *f = buf;

	memset(f + pkt->payload_off + pkt->payload_len, 0, pkt->pad);
	return store_icrc(f, pkt, roxe_icrc_compute(buf, pkt));
}

uint32_t roxe_frame_seal_icrc(void *buf, const struct roxe_pkt *pkt, uint32_t crc)
{
	uint8_t *f = buf;
	uint8_t *pad = f + pkt->payload_off + pkt->payload_len;

	if (pkt->opcode == ROXE_OP_RC_FLUSH)	/* rxe's ICRC: roxe_icrc_compute() */
		return roxe_frame_seal(buf, pkt);
	memset(pad, 0, pkt->pad);
	return store_icrc(f, pkt, roxe_icrc_update(crc, pad, pkt->pad));
}

int roxe_frame_build(void *buf, size_t cap, const struct roxe_frame_addr *a,
		     const struct roxe_frame_hdr *h, const void *payload,
		     uint32_t payload_len, struct roxe_pkt *pkt)
{
	int err = roxe_frame_hdrs(buf, cap, a, h, payload_len, pkt);

	if (err)
		return err;
	if (!payload_len)
		return (int)roxe_frame_seal(buf, pkt);
	return (int)roxe_frame_seal_icrc(buf, pkt,
		roxe_icrc_update_copy(roxe_icrc_begin(buf, pkt),
				      (uint8_t *)buf + pkt->payload_off, payload, payload_len));
}

void roxe_frame_hdr_get(const void *frame, const struct roxe_pkt *pkt,
			struct roxe_frame_hdr *h)
{
	const uint8_t *f = frame;
	const uint8_t *p = f + pkt->bth_off + ROXE_BTH_LEN;
	struct roxe_bth bth;

	memset(h, 0, sizeof(*h));
	memcpy(&bth, f + pkt->bth_off, sizeof(bth));
	h->opcode = bth.opcode;
	h->se = roxe_bth_se(&bth);
	h->mig = roxe_bth_mig(&bth);
	h->ackreq = roxe_bth_ackreq(&bth);
	h->fecn = roxe_bth_fecn(&bth);
	h->becn = roxe_bth_becn(&bth);
	h->pkey = roxe_bth_pkey(&bth);
	h->dqpn = roxe_bth_qpn(&bth);
	h->psn = roxe_bth_psn(&bth);

	if (pkt->flags & ROXE_HDR_DETH) {
		struct roxe_deth d;

		memcpy(&d, p, sizeof(d));
		h->qkey = roxe_be32_get(d.qkey);
		h->src_qpn = roxe_deth_sqp(&d);
		p += sizeof(d);
	}
	if (pkt->flags & ROXE_HDR_FETH) {
		struct roxe_feth fe;

		memcpy(&fe, p, sizeof(fe));
		h->flush_type = roxe_feth_plt(&fe);
		h->flush_level = roxe_feth_sel(&fe);
		p += sizeof(fe);
	}
	if (pkt->flags & ROXE_HDR_RETH) {
		struct roxe_reth r;

		memcpy(&r, p, sizeof(r));
		h->va = roxe_be64_get(r.va);
		h->rkey = roxe_be32_get(r.rkey);
		h->dma_len = roxe_be32_get(r.dma_len);
		p += sizeof(r);
	}
	if (pkt->flags & ROXE_HDR_ATMETH) {
		struct roxe_atmeth a;

		memcpy(&a, p, sizeof(a));
		h->va = roxe_be64_get(a.va);
		h->rkey = roxe_be32_get(a.rkey);
		h->swap_add = roxe_be64_get(a.swap_add);
		h->compare = roxe_be64_get(a.compare);
		p += sizeof(a);
	}
	if (pkt->flags & ROXE_HDR_AETH) {
		struct roxe_aeth a;

		memcpy(&a, p, sizeof(a));
		h->syndrome = roxe_aeth_syndrome(&a);
		h->msn = roxe_aeth_msn(&a);
		p += sizeof(a);
	}
	if (pkt->flags & ROXE_HDR_ATMACK) {
		struct roxe_atmack a;

		memcpy(&a, p, sizeof(a));
		h->orig = roxe_be64_get(a.orig);
		p += sizeof(a);
	}
	if (pkt->flags & ROXE_HDR_IMMDT) {
		memcpy(&h->imm, p, 4);
		p += 4;
	}
	if (pkt->flags & ROXE_HDR_IETH) {
		struct roxe_ieth i;

		memcpy(&i, p, sizeof(i));
		h->inv_rkey = roxe_be32_get(i.rkey);
	}
}

void roxe_frame_addr_get(const void *frame, const struct roxe_pkt *pkt,
			 struct roxe_frame_addr *a)
{
	const uint8_t *f = frame;
	const uint8_t *ip = f + pkt->l3_off;
	uint16_t sport;

	memset(a, 0, sizeof(*a));
	memcpy(a->dmac, f, 6);
	memcpy(a->smac, f + 6, 6);
	a->vlan = pkt->vlans > 0;
	a->vlan_tci = pkt->vlan_tci;
	if (pkt->ip_version == 4) {
		uint32_t s, d;

		memcpy(&s, ip + 12, 4);
		memcpy(&d, ip + 16, 4);
		roxe_gid_from_v4(a->sgid, s);
		roxe_gid_from_v4(a->dgid, d);
		a->tclass = ip[1];
		a->hop_limit = ip[8];
		a->ip_id = (uint16_t)(ip[4] << 8 | ip[5]);
	} else {
		a->tclass = (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
		a->flow_label = (uint32_t)(ip[1] & 0x0f) << 16 | (uint32_t)ip[2] << 8 | ip[3];
		a->hop_limit = ip[7];
		memcpy(a->sgid, ip + 8, 16);
		memcpy(a->dgid, ip + 24, 16);
	}
	memcpy(&sport, f + pkt->l4_off, 2);
	a->sport = ntohs(sport);
}
