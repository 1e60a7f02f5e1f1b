/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Sample frames for the wire tests: a seeded generator fills every field of
 * the addressing and the headers with arbitrary values, so a field that the
 * builder or the reader drops or shifts shows up as a difference.
 */
#ifndef WIRE_FRAME_SAMPLE_H
#define WIRE_FRAME_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "roxe/frame.h"

/*
 * A CNP captured on a ConnectX-4 Lx, as scapy's RoCE tests hold it
 * (github.com/secdev/scapy, test/contrib/roce.uts, "RoCE CNP captured on
 * ConnectX-4 Lx"; frame_test.c builds it, pcap_gen.c writes it for
 * roxe-pcap, icrc_independent.py checks its ICRC): 10.0.17.1 to
 * 10.0.18.1, TOS 0xc2 (DSCP 48, ECT(0)), DF, UDP source port 0, BTH opcode
 * 0x81, P_Key 0xffff, BECN, DestQP 0x118, PSN 0, 16 reserved zero bytes,
 * the ICRC the NIC computed.
 */
static const uint8_t connectx4_cnp[] __attribute__((unused)) = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,
	0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
	0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,
};

/* xorshift64*: reproducible from its seed, good enough to fill fields. */
static inline uint64_t sample_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static inline void sample_bytes(uint64_t *s, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(sample_rand(s) >> 24);
}

/*
 * Addressing for an IPv4 (v6 false) or IPv6 frame, optionally tagged.
 * hop_limit is never 0 here: 0 asks the builder for its default.
 */
static inline void sample_addr(uint64_t *s, bool v6, bool vlan,
			       struct roxe_frame_addr *a)
{
	memset(a, 0, sizeof(*a));
	sample_bytes(s, a->smac, 6);
	sample_bytes(s, a->dmac, 6);
	a->vlan = vlan;
	if (vlan)
		a->vlan_tci = (uint16_t)sample_rand(s);
	if (v6) {
		sample_bytes(s, a->sgid, 16);
		sample_bytes(s, a->dgid, 16);
		/* Global unicast, never IPv4-mapped. */
		a->sgid[0] = 0x20;
		a->dgid[0] = 0x20;
		a->flow_label = (uint32_t)sample_rand(s) & 0xfffff;
	} else {
		uint32_t sip = (uint32_t)sample_rand(s);
		uint32_t dip = (uint32_t)sample_rand(s);

		roxe_gid_from_v4(a->sgid, sip);
		roxe_gid_from_v4(a->dgid, dip);
		a->ip_id = (uint16_t)sample_rand(s);
	}
	a->tclass = (uint8_t)sample_rand(s);
	a->hop_limit = (uint8_t)(1 + sample_rand(s) % 255);
	a->sport = ROXE_UDP_SPORT_BASE | ((uint16_t)sample_rand(s) & ROXE_UDP_SPORT_MASK);
}

/* Every field set, whether or not the opcode carries it. */
static inline void sample_hdr(uint64_t *s, uint8_t opcode, struct roxe_frame_hdr *h)
{
	uint64_t bits = sample_rand(s);

	memset(h, 0, sizeof(*h));
	h->opcode = opcode;
	h->se = bits & 1;
	h->mig = bits & 2;
	h->ackreq = bits & 4;
	h->fecn = bits & 8;
	h->becn = bits & 16;
	h->pkey = (uint16_t)sample_rand(s);
	h->dqpn = (uint32_t)sample_rand(s) & ROXE_QPN_MASK;
	h->psn = (uint32_t)sample_rand(s) & 0xffffff;
	h->va = sample_rand(s);
	h->rkey = (uint32_t)sample_rand(s);
	h->dma_len = (uint32_t)sample_rand(s);
	h->swap_add = sample_rand(s);
	h->compare = sample_rand(s);
	h->syndrome = (uint8_t)sample_rand(s);
	h->msn = (uint32_t)sample_rand(s) & 0xffffff;
	h->orig = sample_rand(s);
	h->imm = (uint32_t)sample_rand(s);
	h->inv_rkey = (uint32_t)sample_rand(s);
	h->qkey = (uint32_t)sample_rand(s);
	h->src_qpn = (uint32_t)sample_rand(s) & ROXE_QPN_MASK;
	h->flush_type = (uint8_t)sample_rand(s) & 15;	/* FETH's 4 bits */
	h->flush_level = (uint8_t)sample_rand(s) & 3;	/* and its 2 */
}

/* A payload length the opcode accepts, from a wish: CNPs carry exactly
 * 16 bytes, opcodes without payload none. */
static inline uint32_t sample_fit_len(uint8_t opcode, uint32_t want)
{
	const struct roxe_opcode_info *info = roxe_opcode_info(opcode);

	if (info->fixed_payload)
		return info->fixed_payload;
	return (info->flags & ROXE_OPF_PAYLOAD) ? want : 0;
}

/* Every opcode of ROXE_OPCODE_LIST, in list order. */
static const uint8_t sample_opcodes[] = {
#define SAMPLE_OPCODE(name, op, qpt, kind, flags) op,
	ROXE_OPCODE_LIST(SAMPLE_OPCODE)
#undef SAMPLE_OPCODE
};

#define SAMPLE_NR_OPCODES (sizeof(sample_opcodes) / sizeof(sample_opcodes[0]))

#endif /* WIRE_FRAME_SAMPLE_H */
