// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the receive path: roxe_parse() on arbitrary bytes,
 * then on an OK verdict the header readers and the ICRC. Besides what ASan
 * and UBSan catch, properties are checked on the way; a violation abort()s,
 * which libFuzzer reports like a crash:
 *   - an OK verdict describes a layout that fits the frame;
 *   - the parser reads nothing past data_end: it runs on exact-size copies,
 *     also cut short (data_end < frame_total, as in XDP multi-buffer), and a
 *     cut copy parses as the whole frame does once the BTH is in;
 *   - what the readers get out builds, through roxe's builder, a frame that
 *     parses and reads back the same, with a good ICRC;
 *   - the ECN bits read back as the TOS / traffic class has them, and
 *     rewriting them changes neither the verdict nor the ICRC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "roxe/frame.h"

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_parse: %s:%d: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

/* Parse the first cut bytes from a heap copy of exactly that size. */
static int parse_cut(const uint8_t *data, size_t cut, uint32_t total,
		     struct roxe_pkt *pkt)
{
	uint8_t *p = malloc(cut ? cut : 1);
	int v;

	CHECK(p);
	memcpy(p, data, cut);
	memset(pkt, 0, sizeof(*pkt));
	v = roxe_parse(p, p + cut, total, pkt);
	free(p);
	return v;
}

static void check_layout(const struct roxe_pkt *pkt, const uint8_t *f, size_t size)
{
	const struct roxe_opcode_info *info = roxe_opcode_info(pkt->opcode);

	CHECK(pkt->ip_version == 4 || pkt->ip_version == 6);
	CHECK(pkt->vlans <= ROXE_MAX_VLANS);
	CHECK(pkt->l3_off == 14 + 4 * pkt->vlans);
	CHECK(pkt->l4_off >= pkt->l3_off + (pkt->ip_version == 4 ? 20 : 40));
	CHECK(pkt->l4_off <= pkt->l3_off + 60);
	CHECK(pkt->bth_off == pkt->l4_off + 8);
	CHECK(pkt->opcode == f[pkt->bth_off] && roxe_opcode_valid(pkt->opcode));
	CHECK(pkt->flags == info->flags);
	CHECK(pkt->payload_off == pkt->bth_off + info->hdr_len);
	CHECK(pkt->pad < 4 && ((pkt->payload_len + pkt->pad) & 3) == 0);
	CHECK(!pkt->payload_len || (info->flags & ROXE_OPF_PAYLOAD));
	CHECK(!info->fixed_payload || pkt->payload_len == info->fixed_payload);
	CHECK((uint64_t)pkt->payload_off + pkt->payload_len + pkt->pad +
	      ROXE_ICRC_LEN == pkt->frame_len);
	CHECK(pkt->frame_len <= size);
}

static void check_icrc(const uint8_t *f, const struct roxe_pkt *pkt)
{
	uint32_t want = roxe_icrc_compute(f, pkt);
	uint32_t crc = roxe_icrc_begin(f, pkt);
	uint32_t body = pkt->payload_len + pkt->pad;
	uint32_t half = body / 2;

	crc = roxe_icrc_update(crc, f + pkt->payload_off, half);
	crc = roxe_icrc_update(crc, f + pkt->payload_off + half, body - half);
	/* FLUSH: the annex's (the pieces), or rxe's (the headers once more) */
	if (pkt->opcode == ROXE_OP_RC_FLUSH) {
		uint32_t stored = roxe_icrc_stored(f, pkt);

		CHECK(roxe_icrc_update(crc, f + pkt->bth_off, pkt->payload_off + body -
				       pkt->bth_off) == want);
		CHECK(roxe_icrc_check(f, pkt) ==
		      (want == stored || crc == stored ? ROXE_PKT_OK : ROXE_PKT_BAD_ICRC));
		return;
	}
	CHECK(roxe_icrc_check(f, pkt) ==
	      (want == roxe_icrc_stored(f, pkt) ? ROXE_PKT_OK : ROXE_PKT_BAD_ICRC));
	CHECK(crc == want);
}

/* Build a frame from what the readers found; it must read back the same. */
static void check_rebuild(const uint8_t *f, const struct roxe_pkt *pkt)
{
	static uint8_t g[ROXE_FRAME_MAX_HDRS + 65536];
	struct roxe_frame_addr a, a2;
	struct roxe_frame_hdr h, h2;
	struct roxe_pkt q;
	int len;

	roxe_frame_hdr_get(f, pkt, &h);
	roxe_frame_addr_get(f, pkt, &a);
	len = roxe_frame_build(g, sizeof(g), &a, &h, f + pkt->payload_off,
			       pkt->payload_len, &q);
	if (roxe_gid_is_v4(a.sgid) != roxe_gid_is_v4(a.dgid)) {
		/* IPv6 between an IPv4-mapped and another address. */
		CHECK(pkt->ip_version == 6 && len == -EINVAL);
		return;
	}
	if (pkt->ip_version == 6 && roxe_gid_is_v4(a.sgid) &&
	    pkt->frame_len - pkt->l4_off + 20 > 0xffff) {
		/* IPv6 between IPv4-mapped addresses, too long for IPv4. */
		CHECK(len == -EINVAL);
		return;
	}
	CHECK(len > 0 && (uint32_t)len == q.frame_len);
	memset(&q, 0, sizeof(q));
	CHECK(roxe_parse(g, g + len, (uint32_t)len, &q) == ROXE_PKT_OK);
	CHECK(q.payload_len == pkt->payload_len && q.pad == pkt->pad);
	CHECK(!memcmp(g + q.payload_off, f + pkt->payload_off, pkt->payload_len));
	CHECK(roxe_icrc_check(g, &q) == ROXE_PKT_OK);

	roxe_frame_hdr_get(g, &q, &h2);
	CHECK(h.opcode == h2.opcode && h.se == h2.se && h.mig == h2.mig);
	CHECK(h.ackreq == h2.ackreq && h.fecn == h2.fecn && h.becn == h2.becn);
	CHECK(h.pkey == h2.pkey && h.dqpn == h2.dqpn && h.psn == h2.psn);
	CHECK(h.va == h2.va && h.rkey == h2.rkey && h.dma_len == h2.dma_len);
	CHECK(h.swap_add == h2.swap_add && h.compare == h2.compare);
	CHECK(h.syndrome == h2.syndrome && h.msn == h2.msn && h.orig == h2.orig);
	CHECK(h.imm == h2.imm && h.inv_rkey == h2.inv_rkey);
	CHECK(h.qkey == h2.qkey && h.src_qpn == h2.src_qpn);

	roxe_frame_addr_get(g, &q, &a2);
	if (!a.hop_limit)
		a.hop_limit = 64;	/* the builder's default */
	if (roxe_gid_is_v4(a.sgid))
		a.flow_label = 0;	/* IPv4-mapped GIDs make IPv4 */
	else
		a.ip_id = 0;
	CHECK(!memcmp(a.smac, a2.smac, 6) && !memcmp(a.dmac, a2.dmac, 6));
	CHECK(!memcmp(a.sgid, a2.sgid, 16) && !memcmp(a.dgid, a2.dgid, 16));
	CHECK(a.vlan == a2.vlan && a.vlan_tci == a2.vlan_tci);
	CHECK(a.tclass == a2.tclass && a.hop_limit == a2.hop_limit);
	CHECK(a.flow_label == a2.flow_label && a.sport == a2.sport && a.ip_id == a2.ip_id);
}

/* The ECN bits read as the XDP program and the engine read them; a switch
 * rewriting them (CE) changes neither the verdict nor the ICRC. */
static void check_ecn(uint8_t *f, size_t size, const struct roxe_pkt *pkt)
{
	uint8_t mask = pkt->ip_version == 4 ? ROXE_ECN_MASK : ROXE_ECN_MASK << 4;
	struct roxe_frame_addr a;
	struct roxe_pkt q;
	uint32_t icrc = roxe_icrc_compute(f, pkt);
	int ecn = roxe_pkt_ecn(f, f + size, pkt);

	roxe_frame_addr_get(f, pkt, &a);
	CHECK(ecn == (a.tclass & ROXE_ECN_MASK));
	f[pkt->l3_off + 1] ^= mask;
	memset(&q, 0, sizeof(q));
	CHECK(roxe_parse(f, f + size, (uint32_t)size, &q) == ROXE_PKT_OK);
	CHECK(roxe_pkt_ecn(f, f + size, &q) == (ecn ^ ROXE_ECN_MASK));
	CHECK(roxe_icrc_compute(f, &q) == icrc);
	f[pkt->l3_off + 1] ^= mask;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roxe_pkt pkt, part;
	uint8_t *f;
	size_t cut;
	int v, w;

	if (size > 65536 + 64)
		return 0;
	f = malloc(size ? size : 1);
	CHECK(f);
	memcpy(f, data, size);
	memset(&pkt, 0, sizeof(pkt));
	v = roxe_parse(f, f + size, (uint32_t)size, &pkt);
	CHECK(v >= ROXE_PKT_OK && v < ROXE_PKT__COUNT && v != ROXE_PKT_BAD_ICRC);
	CHECK(roxe_verdict_name(v) != NULL);

	if (v == ROXE_PKT_OK) {
		check_layout(&pkt, f, size);
		check_icrc(f, &pkt);
		check_rebuild(f, &pkt);
		check_ecn(f, size, &pkt);
		(void)roxe_opcode_name(pkt.opcode);

		/* Cut right after the BTH: all the parser needs. */
		cut = pkt.bth_off + ROXE_BTH_LEN;
		CHECK(parse_cut(data, cut, (uint32_t)size, &part) == ROXE_PKT_OK);
		CHECK(!memcmp(&part, &pkt, sizeof(pkt)));
		CHECK(parse_cut(data, cut - 1, (uint32_t)size, &part) != ROXE_PKT_OK);
		/* A frame_total beyond the frame changes nothing. */
		CHECK(parse_cut(data, size, (uint32_t)size + 64, &part) == ROXE_PKT_OK);
		CHECK(!memcmp(&part, &pkt, sizeof(pkt)));
	}

	/* Wherever the cut falls, an OK verdict is the whole frame's. */
	cut = size ? (data[size - 1] * 131u + size) % (size + 1) : 0;
	w = parse_cut(data, cut, (uint32_t)size, &part);
	if (w == ROXE_PKT_OK)
		CHECK(v == ROXE_PKT_OK && !memcmp(&part, &pkt, sizeof(pkt)));
	else if (v == ROXE_PKT_OK)
		CHECK(cut < pkt.bth_off + ROXE_BTH_LEN);

	free(f);
	return 0;
}
