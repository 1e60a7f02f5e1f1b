// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frame builder, parser and ICRC: every opcode built and read back over
 * IPv4 and IPv6, with and without a VLAN tag, compared with frames this test
 * spells out byte by byte from the specification; the ICRC's coverage bit by
 * bit; every parser verdict provoked on purpose.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include "kselftest_harness.h"
#include "roxe/frame.h"
#include "frame_sample.h"

#define BUF_LEN		10000
#define BIG_LEN		4096

/* --- the specification, written out independently of opcode.h --------------- */

/* Extension headers in the order they follow the BTH (IBA 9.2). */
enum { X_DETH, X_FETH, X_RETH, X_ATMETH, X_AETH, X_ATMACK, X_IMMDT, X_IETH, X__N };
static const unsigned int ext_len[X__N] = { 8, 4, 16, 28, 4, 8, 4, 4 };
static const uint16_t ext_flag[X__N] = {
	ROXE_HDR_DETH, ROXE_HDR_FETH, ROXE_HDR_RETH, ROXE_HDR_ATMETH, ROXE_HDR_AETH,
	ROXE_HDR_ATMACK, ROXE_HDR_IMMDT, ROXE_HDR_IETH,
};
#define DETH	(1 << X_DETH)
#define FETH	(1 << X_FETH)
#define RETH	(1 << X_RETH)
#define ATMETH	(1 << X_ATMETH)
#define AETH	(1 << X_AETH)
#define ATMACK	(1 << X_ATMACK)
#define IMMDT	(1 << X_IMMDT)
#define IETH	(1 << X_IETH)

enum { NONE, ANY, CNP16, EXACT8 };

struct spec {
	uint8_t op;
	const char *name;
	uint8_t exts;
	uint8_t payload;
};

/* IBA vol. 1 table 35 (RC, UC, UD) and annex A17.9.3 (CNP). */
static const struct spec specs[] = {
	{ 0x00, "RC_SEND_FIRST", 0, ANY },
	{ 0x01, "RC_SEND_MIDDLE", 0, ANY },
	{ 0x02, "RC_SEND_LAST", 0, ANY },
	{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x04, "RC_SEND_ONLY", 0, ANY },
	{ 0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x06, "RC_RDMA_WRITE_FIRST", RETH, ANY },
	{ 0x07, "RC_RDMA_WRITE_MIDDLE", 0, ANY },
	{ 0x08, "RC_RDMA_WRITE_LAST", 0, ANY },
	{ 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x0a, "RC_RDMA_WRITE_ONLY", RETH, ANY },
	{ 0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT, ANY },
	{ 0x0c, "RC_RDMA_READ_REQUEST", RETH, NONE },
	{ 0x0d, "RC_RDMA_READ_RESPONSE_FIRST", AETH, ANY },
	{ 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, ANY },
	{ 0x0f, "RC_RDMA_READ_RESPONSE_LAST", AETH, ANY },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", AETH, ANY },
	{ 0x11, "RC_ACKNOWLEDGE", AETH, NONE },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", AETH | ATMACK, NONE },
	{ 0x13, "RC_COMPARE_SWAP", ATMETH, NONE },
	{ 0x14, "RC_FETCH_ADD", ATMETH, NONE },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", IETH, ANY },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", IETH, ANY },
	/* IBA 1.5: FLUSH (FETH, then RETH), ATOMIC WRITE (8 bytes). */
	{ 0x1c, "RC_FLUSH", FETH | RETH, NONE },
	{ 0x1d, "RC_ATOMIC_WRITE", RETH, EXACT8 },
	{ 0x20, "UC_SEND_FIRST", 0, ANY },
	{ 0x21, "UC_SEND_MIDDLE", 0, ANY },
	{ 0x22, "UC_SEND_LAST", 0, ANY },
	{ 0x23, "UC_SEND_LAST_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x24, "UC_SEND_ONLY", 0, ANY },
	{ 0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x26, "UC_RDMA_WRITE_FIRST", RETH, ANY },
	{ 0x27, "UC_RDMA_WRITE_MIDDLE", 0, ANY },
	{ 0x28, "UC_RDMA_WRITE_LAST", 0, ANY },
	{ 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMMDT, ANY },
	{ 0x2a, "UC_RDMA_WRITE_ONLY", RETH, ANY },
	{ 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMMDT, ANY },
	{ 0x64, "UD_SEND_ONLY", DETH, ANY },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", DETH | IMMDT, ANY },
	{ 0x81, "CNP", 0, CNP16 },
};

static const struct spec *spec_of(uint8_t op)
{
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++)
		if (specs[i].op == op)
			return &specs[i];
	return NULL;
}

static unsigned int spec_hdr_len(const struct spec *s)
{
	unsigned int len = 12;

	for (int x = 0; x < X__N; x++)
		if (s->exts & (1 << x))
			len += ext_len[x];
	return len;
}

/* Payload lengths to try: 0, each pad count, an odd middle size, a page. */
static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 61, 256, BIG_LEN };

/* --- frames spelled out by hand ----------------------------------------------- */

static uint8_t *be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; return p + 2; }
static uint8_t *be24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 16); return be16(p + 1, (uint16_t)v); }
static uint8_t *be32(uint8_t *p, uint32_t v) { return be16(be16(p, v >> 16), (uint16_t)v); }
static uint8_t *be64(uint8_t *p, uint64_t v) { return be32(be32(p, v >> 32), (uint32_t)v); }

static uint16_t rfc1071(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum > 0xffff)
		sum = (sum >> 16) + (sum & 0xffff);
	return (uint16_t)~sum;
}

/*
 * The frame the builder must produce, but for its ICRC, written field by
 * field from the wire formats (IEEE 802.1Q, RFC 791, RFC 8200, RFC 768,
 * IBA 9.2-9.3). Returns its length, ICRC included.
 */
static size_t spell_frame(uint8_t *f, const struct roxe_frame_addr *a,
			  const struct roxe_frame_hdr *h, const uint8_t *payload,
			  uint32_t len)
{
	const struct spec *s = spec_of(h->opcode);
	bool v6 = !roxe_gid_is_v4(a->sgid);
	uint8_t ttl = a->hop_limit ? a->hop_limit : 64;
	uint32_t pad = (4 - len % 4) % 4;
	uint32_t udp_len = 8 + spec_hdr_len(s) + len + pad + 4;
	uint8_t *p = f, *ip;

	memcpy(p, a->dmac, 6);
	memcpy(p + 6, a->smac, 6);
	p += 12;
	if (a->vlan)
		p = be16(be16(p, 0x8100), a->vlan_tci);
	p = be16(p, v6 ? 0x86dd : 0x0800);
	ip = p;
	if (v6) {
		p = be32(p, 6u << 28 | (uint32_t)a->tclass << 20 | a->flow_label);
		p = be16(p, (uint16_t)udp_len);
		*p++ = 17;
		*p++ = ttl;
		memcpy(p, a->sgid, 16);
		memcpy(p + 16, a->dgid, 16);
		p += 32;
	} else {
		*p++ = 0x45;
		*p++ = a->tclass;
		p = be16(p, (uint16_t)(20 + udp_len));
		p = be16(p, a->ip_id);
		p = be16(p, 0x4000);
		*p++ = ttl;
		*p++ = 17;
		p = be16(p, 0);
		memcpy(p, a->sgid + 12, 4);
		memcpy(p + 4, a->dgid + 12, 4);
		p += 8;
		be16(ip + 10, rfc1071(ip, 20));
	}
	p = be16(p, a->sport);
	p = be16(p, 4791);
	p = be16(p, (uint16_t)udp_len);
	p = be16(p, 0);

	*p++ = h->opcode;
	*p++ = (uint8_t)(h->se << 7 | h->mig << 6 | pad << 4);
	p = be16(p, h->pkey);
	*p++ = (uint8_t)(h->fecn << 7 | h->becn << 6);
	p = be24(p, h->dqpn);
	*p++ = (uint8_t)(h->ackreq << 7);
	p = be24(p, h->psn);

	if (s->exts & DETH) {
		p = be32(p, h->qkey);
		*p++ = 0;
		p = be24(p, h->src_qpn);
	}
	if (s->exts & FETH)	/* resv:26 SEL:2 PLT:4 */
		p = be32(p, (uint32_t)(h->flush_level & 3) << 4 | (h->flush_type & 15));
	if (s->exts & RETH)
		p = be32(be32(be64(p, h->va), h->rkey), h->dma_len);
	if (s->exts & ATMETH)
		p = be64(be64(be32(be64(p, h->va), h->rkey), h->swap_add), h->compare);
	if (s->exts & AETH) {
		*p++ = h->syndrome;
		p = be24(p, h->msn);
	}
	if (s->exts & ATMACK)
		p = be64(p, h->orig);
	if (s->exts & IMMDT) {
		memcpy(p, &h->imm, 4);	/* already in wire order */
		p += 4;
	}
	if (s->exts & IETH)
		p = be32(p, h->inv_rkey);
	memcpy(p, payload, len);
	p += len;
	memset(p, 0, pad);
	p += pad;
	return (size_t)(p - f) + 4;
}

/* The header fields a frame of this opcode carries; the others read as 0. */
static void carried(const struct roxe_frame_hdr *in, struct roxe_frame_hdr *out)
{
	const struct spec *s = spec_of(in->opcode);

	*out = *in;
	if (!(s->exts & (RETH | ATMETH)))
		out->va = out->rkey = 0;
	if (!(s->exts & RETH))
		out->dma_len = 0;
	if (!(s->exts & ATMETH))
		out->swap_add = out->compare = 0;
	if (!(s->exts & AETH))
		out->syndrome = 0, out->msn = 0;
	if (!(s->exts & ATMACK))
		out->orig = 0;
	if (!(s->exts & IMMDT))
		out->imm = 0;
	if (!(s->exts & IETH))
		out->inv_rkey = 0;
	if (!(s->exts & DETH))
		out->qkey = out->src_qpn = 0;
	if (!(s->exts & FETH))
		out->flush_type = out->flush_level = 0;
}

#define FIELD_EQ(w, g, f, what) \
	ASSERT_EQ((w)->f, (g)->f) TH_LOG("%s: " #f " differs", what)

static void expect_hdr(struct __test_metadata *_metadata,
		       const struct roxe_frame_hdr *in,
		       const struct roxe_frame_hdr *got, const char *what)
{
	struct roxe_frame_hdr w;

	carried(in, &w);
	FIELD_EQ(&w, got, opcode, what);
	FIELD_EQ(&w, got, se, what);
	FIELD_EQ(&w, got, mig, what);
	FIELD_EQ(&w, got, ackreq, what);
	FIELD_EQ(&w, got, fecn, what);
	FIELD_EQ(&w, got, becn, what);
	FIELD_EQ(&w, got, pkey, what);
	FIELD_EQ(&w, got, dqpn, what);
	FIELD_EQ(&w, got, psn, what);
	FIELD_EQ(&w, got, va, what);
	FIELD_EQ(&w, got, rkey, what);
	FIELD_EQ(&w, got, dma_len, what);
	FIELD_EQ(&w, got, swap_add, what);
	FIELD_EQ(&w, got, compare, what);
	FIELD_EQ(&w, got, syndrome, what);
	FIELD_EQ(&w, got, msn, what);
	FIELD_EQ(&w, got, orig, what);
	FIELD_EQ(&w, got, imm, what);
	FIELD_EQ(&w, got, inv_rkey, what);
	FIELD_EQ(&w, got, qkey, what);
	FIELD_EQ(&w, got, src_qpn, what);
	FIELD_EQ(&w, got, flush_type, what);
	FIELD_EQ(&w, got, flush_level, what);
}

static void expect_addr(struct __test_metadata *_metadata,
			const struct roxe_frame_addr *in,
			const struct roxe_frame_addr *got, const char *what)
{
	bool v6 = !roxe_gid_is_v4(in->sgid);

	ASSERT_EQ(0, memcmp(in->smac, got->smac, 6)) TH_LOG("%s: smac", what);
	ASSERT_EQ(0, memcmp(in->dmac, got->dmac, 6)) TH_LOG("%s: dmac", what);
	ASSERT_EQ(0, memcmp(in->sgid, got->sgid, 16)) TH_LOG("%s: sgid", what);
	ASSERT_EQ(0, memcmp(in->dgid, got->dgid, 16)) TH_LOG("%s: dgid", what);
	FIELD_EQ(in, got, vlan, what);
	ASSERT_EQ(in->vlan ? in->vlan_tci : 0, got->vlan_tci) TH_LOG("%s: vlan_tci", what);
	FIELD_EQ(in, got, tclass, what);
	ASSERT_EQ(in->hop_limit ? in->hop_limit : 64, got->hop_limit) TH_LOG("%s: hop_limit", what);
	ASSERT_EQ(v6 ? in->flow_label : 0, got->flow_label) TH_LOG("%s: flow_label", what);
	FIELD_EQ(in, got, sport, what);
	ASSERT_EQ(v6 ? 0 : in->ip_id, got->ip_id) TH_LOG("%s: ip_id", what);
}

/* One sample frame and what went into it. */
struct sample {
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint32_t len;		/* payload */
	int frame_len;
	uint8_t payload[BIG_LEN];
	uint8_t f[BUF_LEN];
};

static void make(struct sample *s, uint64_t seed, bool v6, bool vlan,
		 uint8_t op, uint32_t len)
{
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + op * 131 + len + 1;

	sample_addr(&rng, v6, vlan, &s->a);
	sample_hdr(&rng, op, &s->h);
	s->len = len;
	sample_bytes(&rng, s->payload, len);
	memset(s->f, 0xa5, sizeof(s->f));	/* the pad must be zeroed */
	s->frame_len = roxe_frame_build(s->f, sizeof(s->f), &s->a, &s->h,
					s->payload, len, &s->pkt);
}

static int parse(const void *f, size_t len, struct roxe_pkt *pkt)
{
	memset(pkt, 0, sizeof(*pkt));
	return roxe_parse(f, (const uint8_t *)f + len, (uint32_t)len, pkt);
}

/* --- the opcode table -------------------------------------------------------- */

TEST(opcode_table_matches_spec)
{
	int valid = 0;

	ASSERT_EQ(ARRAY_SIZE(specs), SAMPLE_NR_OPCODES);
	for (unsigned int op = 0; op < 256; op++) {
		const struct roxe_opcode_info *info = roxe_opcode_info((uint8_t)op);
		const struct spec *s = spec_of((uint8_t)op);
		unsigned int off = 12;

		if (!s) {
			EXPECT_FALSE(roxe_opcode_valid((uint8_t)op)) TH_LOG("op %#x", op);
			EXPECT_STREQ("unknown", roxe_opcode_name((uint8_t)op));
			continue;
		}
		valid++;
		ASSERT_TRUE(roxe_opcode_valid((uint8_t)op)) TH_LOG("%s", s->name);
		EXPECT_STREQ(s->name, roxe_opcode_name((uint8_t)op));
		EXPECT_EQ(spec_hdr_len(s), info->hdr_len) TH_LOG("%s", s->name);
		EXPECT_EQ(s->payload != NONE, !!(info->flags & ROXE_OPF_PAYLOAD))
			TH_LOG("%s", s->name);
		EXPECT_EQ(s->payload == CNP16 ? 16 : s->payload == EXACT8 ? 8 : 0,
			  info->fixed_payload)
			TH_LOG("%s", s->name);
		/* The transport is in the opcode's top three bits. */
		EXPECT_EQ(op >> 5, info->qpt) TH_LOG("%s", s->name);
		for (int x = 0; x < X__N; x++) {
			bool has = s->exts & (1 << x);

			EXPECT_EQ(has, !!(info->flags & ext_flag[x]))
				TH_LOG("%s: header %d", s->name, x);
			if (!has)
				continue;
			EXPECT_EQ(off, roxe_hdr_offset(info->flags, ext_flag[x]))
				TH_LOG("%s: offset of header %d", s->name, x);
			off += ext_len[x];
		}
	}
	EXPECT_EQ((int)ARRAY_SIZE(specs), valid);
}

TEST(verdict_names)
{
	for (int v = 0; v < ROXE_PKT__COUNT; v++) {
		ASSERT_NE(NULL, roxe_verdict_name(v));
		EXPECT_STRNE("invalid", roxe_verdict_name(v));
		for (int w = 0; w < v; w++) {
			EXPECT_STRNE(roxe_verdict_name(w), roxe_verdict_name(v));
		}
	}
	EXPECT_STREQ("ok", roxe_verdict_name(ROXE_PKT_OK));
	EXPECT_STREQ("invalid", roxe_verdict_name(-1));
	EXPECT_STREQ("invalid", roxe_verdict_name(ROXE_PKT__COUNT));
}

/* --- per address family and tagging -------------------------------------------- */

FIXTURE(frame) {
	struct sample *s;
	uint8_t *copy;
};

FIXTURE_VARIANT(frame) {
	bool v6;
	bool vlan;
};

FIXTURE_VARIANT_ADD(frame, ipv4) { .v6 = false, .vlan = false };
FIXTURE_VARIANT_ADD(frame, ipv4_vlan) { .v6 = false, .vlan = true };
FIXTURE_VARIANT_ADD(frame, ipv6) { .v6 = true, .vlan = false };
FIXTURE_VARIANT_ADD(frame, ipv6_vlan) { .v6 = true, .vlan = true };

FIXTURE_SETUP(frame)
{
	self->s = calloc(1, sizeof(*self->s));
	self->copy = calloc(1, BUF_LEN);
	ASSERT_NE(NULL, self->s);
	ASSERT_NE(NULL, self->copy);
}

FIXTURE_TEARDOWN(frame)
{
	free(self->s);
	free(self->copy);
}

TEST_F(frame, round_trip_every_opcode)
{
	struct sample *s = self->s;
	uint32_t l3 = variant->vlan ? 18 : 14;
	uint32_t l4 = l3 + (variant->v6 ? 40 : 20);
	uint8_t want[BUF_LEN];
	int n = 0;

	for (size_t i = 0; i < SAMPLE_NR_OPCODES; i++) {
		uint8_t op = sample_opcodes[i];
		const struct spec *sp = spec_of(op);

		for (size_t j = 0; j < ARRAY_SIZE(lens); j++) {
			struct roxe_frame_hdr h;
			struct roxe_frame_addr a;
			struct roxe_pkt pkt;
			uint32_t len = sample_fit_len(op, lens[j]);
			uint32_t pad = (4 - len % 4) % 4;
			uint32_t flen = l4 + 8 + spec_hdr_len(sp) + len + pad + 4;
			char what[96];

			if (len != lens[j] && j)
				continue;	/* tried once already */
			snprintf(what, sizeof(what), "%s len %u", sp->name, len);
			make(s, j, variant->v6, variant->vlan, op, len);
			n++;

			/* The builder's frame and its description of it. */
			ASSERT_EQ((int)flen, s->frame_len) TH_LOG("%s", what);
			ASSERT_EQ(flen, s->pkt.frame_len) TH_LOG("%s", what);
			ASSERT_EQ(flen, spell_frame(want, &s->a, &s->h, s->payload, len));
			ASSERT_EQ(0, memcmp(want, s->f, flen - 4))
				TH_LOG("%s: bytes differ from the spelled-out frame", what);

			/* The parser finds the same layout. */
			ASSERT_EQ(ROXE_PKT_OK, parse(s->f, flen, &pkt)) TH_LOG("%s", what);
			ASSERT_EQ(l3, pkt.l3_off) TH_LOG("%s", what);
			ASSERT_EQ(l4, pkt.l4_off) TH_LOG("%s", what);
			ASSERT_EQ(l4 + 8, pkt.bth_off) TH_LOG("%s", what);
			ASSERT_EQ(l4 + 8 + spec_hdr_len(sp), pkt.payload_off) TH_LOG("%s", what);
			ASSERT_EQ(len, pkt.payload_len) TH_LOG("%s", what);
			ASSERT_EQ(pad, pkt.pad) TH_LOG("%s", what);
			ASSERT_EQ(flen, pkt.frame_len) TH_LOG("%s", what);
			ASSERT_EQ(variant->v6 ? 6 : 4, pkt.ip_version) TH_LOG("%s", what);
			ASSERT_EQ(variant->vlan ? 1 : 0, pkt.vlans) TH_LOG("%s", what);
			ASSERT_EQ(variant->vlan ? s->a.vlan_tci : 0, pkt.vlan_tci);
			ASSERT_EQ(op, pkt.opcode) TH_LOG("%s", what);
			ASSERT_EQ(roxe_opcode_info(op)->flags, pkt.flags) TH_LOG("%s", what);
			ASSERT_EQ(0, memcmp(&pkt, &s->pkt, sizeof(pkt)))
				TH_LOG("%s: builder and parser disagree", what);

			/* Every field survives. */
			roxe_frame_hdr_get(s->f, &pkt, &h);
			expect_hdr(_metadata, &s->h, &h, what);
			roxe_frame_addr_get(s->f, &pkt, &a);
			expect_addr(_metadata, &s->a, &a, what);
			ASSERT_EQ(0, memcmp(s->payload, s->f + pkt.payload_off, len));

			ASSERT_EQ(ROXE_PKT_OK, roxe_icrc_check(s->f, &pkt)) TH_LOG("%s", what);
			ASSERT_EQ(roxe_icrc_compute(s->f, &pkt), roxe_icrc_stored(s->f, &pkt));
		}
	}
	TH_LOG("%d frames", n);
}

/*
 * Bits of frame byte i the ICRC leaves out (RoCE v2 annex A17.3.3): the
 * Ethernet header, then the variant fields of IP, UDP and BTH.
 */
static uint8_t masked_bits(bool v6, bool vlan, uint32_t i)
{
	uint32_t l3 = vlan ? 18 : 14, l4 = l3 + (v6 ? 40 : 20), bth = l4 + 8;

	if (i < l3)
		return 0xff;
	if (i < l4) {
		i -= l3;
		if (!v6)	/* TOS, TTL, header checksum */
			return (i == 1 || i == 8 || i == 10 || i == 11) ? 0xff : 0;
		if (i == 0)	/* traffic class, high nibble; not the version */
			return 0x0f;
		/* traffic class low nibble, flow label, hop limit */
		return (i == 1 || i == 2 || i == 3 || i == 7) ? 0xff : 0;
	}
	if (i == l4 + 6 || i == l4 + 7)	/* UDP checksum */
		return 0xff;
	if (i == bth + 4)		/* FECN, BECN, resv6 */
		return 0xff;
	return 0;
}

TEST_F(frame, icrc_covers_every_unmasked_bit)
{
	struct sample *s = self->s;
	long covered = 0, masked = 0;

	for (size_t i = 0; i < SAMPLE_NR_OPCODES; i++) {
		uint8_t op = sample_opcodes[i];
		uint32_t len = sample_fit_len(op, 5);
		uint32_t icrc;

		make(s, 7, variant->v6, variant->vlan, op, len);
		ASSERT_LT(0, s->frame_len);
		icrc = roxe_icrc_stored(s->f, &s->pkt);
		for (uint32_t b = 0; b < (uint32_t)s->frame_len * 8; b++) {
			uint8_t bit = (uint8_t)(1 << (b % 8));

			/* rxe's FLUSH ICRC covers its BTH once more, as it
			 * is: the variant byte too (icrc.c) */
			if (op == ROXE_OP_RC_FLUSH && b / 8 == s->pkt.bth_off + (uint32_t)ROXE_BTH_VARIANT_OFF)
				continue;
			memcpy(self->copy, s->f, s->frame_len);
			self->copy[b / 8] ^= bit;
			if (masked_bits(variant->v6, variant->vlan, b / 8) & bit) {
				masked++;
				ASSERT_EQ(icrc, roxe_icrc_compute(self->copy, &s->pkt))
					TH_LOG("%s: masked bit %u changed the ICRC",
					       roxe_opcode_name(op), b);
			} else {
				covered++;
				ASSERT_NE(ROXE_PKT_OK, roxe_icrc_check(self->copy, &s->pkt))
					TH_LOG("%s: flipping bit %u went unnoticed",
					       roxe_opcode_name(op), b);
			}
		}
	}

	/* A page of payload: every byte counts. */
	make(s, 8, variant->v6, variant->vlan, ROXE_OP_RC_RDMA_WRITE_ONLY, BIG_LEN - 1);
	for (uint32_t i = s->pkt.payload_off; i < s->pkt.frame_len; i++) {
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[i] ^= 0xff;
		ASSERT_NE(ROXE_PKT_OK, roxe_icrc_check(self->copy, &s->pkt))
			TH_LOG("payload byte %u", i);
	}
	TH_LOG("%ld covered bits, %ld masked bits", covered, masked);
}

/* FLUSH carries rxe's ICRC (its headers covered twice); one with the
 * annex's is taken too, one with neither is not. */
TEST_F(frame, flush_icrc_as_rxe)
{
	struct sample *s = self->s;
	uint32_t annex, rxe;
	uint8_t *icrc;

	make(s, 11, variant->v6, variant->vlan, ROXE_OP_RC_FLUSH, 0);
	ASSERT_LT(0, s->frame_len);
	annex = roxe_icrc_begin(s->f, &s->pkt);
	rxe = roxe_icrc_update(annex, s->f + s->pkt.bth_off, s->pkt.payload_off - s->pkt.bth_off);
	EXPECT_EQ(rxe, roxe_icrc_stored(s->f, &s->pkt));
	EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(s->f, &s->pkt));
	icrc = s->f + s->pkt.frame_len - ROXE_ICRC_LEN;
	for (int i = 0; i < 4; i++)
		icrc[i] = (uint8_t)(annex >> (8 * i));
	EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(s->f, &s->pkt));
	icrc[0] ^= 1;
	EXPECT_EQ(ROXE_PKT_BAD_ICRC, roxe_icrc_check(s->f, &s->pkt));
	/* any other opcode: the annex's alone */
	make(s, 11, variant->v6, variant->vlan, ROXE_OP_RC_RDMA_READ_REQUEST, 0);
	EXPECT_EQ(roxe_icrc_begin(s->f, &s->pkt), roxe_icrc_stored(s->f, &s->pkt));
}

/* The same changes made through the builder: the variant fields only. */
TEST_F(frame, icrc_ignores_variant_fields)
{
	struct sample *s = self->s;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint32_t icrc;

	make(s, 9, variant->v6, variant->vlan, ROXE_OP_UD_SEND_ONLY, 33);
	icrc = roxe_icrc_stored(s->f, &s->pkt);

	for (int k = 0; k < 8; k++) {
		a = s->a;
		h = s->h;
		switch (k) {
		case 0:
			a.tclass ^= 0xff;
			break;
		case 1:
			a.hop_limit ^= 0x81;
			break;
		case 2:
			a.flow_label ^= 0xfffff;	/* IPv6 only */
			break;
		case 3:
			h.fecn = !h.fecn;
			break;
		case 4:
			h.becn = !h.becn;
			break;
		case 5:
			a.vlan_tci ^= 0xffff;		/* not covered at all */
			memset(a.smac, 0x11, 6);
			break;
		case 6:
			a.tclass = 0;
			a.hop_limit = 1;
			h.fecn = h.becn = true;
			break;
		case 7:
			a.sport ^= 0x1;			/* covered */
			break;
		}
		ASSERT_LT(0, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload,
					      s->len, &pkt));
		if (k == 7) {
			EXPECT_NE(icrc, roxe_icrc_stored(self->copy, &pkt));
		} else {
			EXPECT_EQ(icrc, roxe_icrc_stored(self->copy, &pkt)) TH_LOG("change %d", k);
		}
	}

	/* UDP checksum: not checked by the parser, not covered by the ICRC. */
	memcpy(self->copy, s->f, s->frame_len);
	be16(self->copy + s->pkt.l4_off + 6, 0xbeef);
	ASSERT_EQ(ROXE_PKT_OK, parse(self->copy, s->frame_len, &pkt));
	EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(self->copy, &pkt));
	be16(self->copy + s->pkt.l4_off + 6, 0);
	ASSERT_EQ(ROXE_PKT_OK, parse(self->copy, s->frame_len, &pkt));
	EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(self->copy, &pkt));
	/* IP identification is not a variant field. */
	if (!variant->v6) {
		self->copy[s->pkt.l3_off + 5] ^= 1;
		EXPECT_NE(ROXE_PKT_OK, roxe_icrc_check(self->copy, &pkt));
	}
}

TEST_F(frame, icrc_in_pieces)
{
	struct sample *s = self->s;

	make(s, 10, variant->v6, variant->vlan, ROXE_OP_RC_SEND_FIRST, 1021);
	for (uint32_t cut = 0; cut <= s->len + s->pkt.pad; cut += 17) {
		uint32_t crc = roxe_icrc_begin(s->f, &s->pkt);
		const uint8_t *p = s->f + s->pkt.payload_off;

		crc = roxe_icrc_update(crc, p, cut);
		crc = roxe_icrc_update(crc, p + cut, s->len + s->pkt.pad - cut);
		ASSERT_EQ(roxe_icrc_stored(s->f, &s->pkt), crc) TH_LOG("cut %u", cut);
	}
}

/* roxe_frame_build copies the payload in and CRCs it in one pass
 * (roxe_icrc_update_copy, roxe_frame_seal_icrc): the same frame, byte for
 * byte, as headers, a copy and roxe_frame_seal. */
TEST_F(frame, seal_icrc_as_seal)
{
	static const uint32_t lens[] = { 0, 1, 3, 64, 511, 512, 575, 576, 1021, 2048, 4095, 4096 };
	struct sample *s = self->s;
	struct roxe_pkt pkt;

	for (size_t o = 0; o < SAMPLE_NR_OPCODES; o++) {
		for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
			uint8_t op = sample_opcodes[o];
			uint32_t len = sample_fit_len(op, lens[i]);

			make(s, i, variant->v6, variant->vlan, op, len);
			ASSERT_LT(0, s->frame_len);
			memset(self->copy, 0x5a, BUF_LEN);
			ASSERT_EQ(0, roxe_frame_hdrs(self->copy, BUF_LEN, &s->a, &s->h, len, &pkt));
			memcpy(self->copy + pkt.payload_off, s->payload, len);
			ASSERT_EQ((uint32_t)s->frame_len, roxe_frame_seal(self->copy, &pkt));
			ASSERT_EQ(0, memcmp(s->f, self->copy, (size_t)s->frame_len))
				TH_LOG("%s, %u bytes", roxe_opcode_name(op), len);
		}
	}
}

/* Hardware pads short frames to 60 bytes and may keep the FCS: the parser
 * goes by the IP length. */
TEST_F(frame, ethernet_padding_ignored)
{
	struct sample *s = self->s;
	static const uint32_t extra[] = { 1, 2, 4, 17, 64 };
	struct roxe_pkt pkt;

	/* IPv4 SEND_ONLY without payload: 58 bytes, shorter than Ethernet's 60. */
	make(s, 11, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 0);
	if (!variant->v6 && !variant->vlan) {
		ASSERT_EQ(58, s->frame_len);
	}
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++) {
		for (int junk = 0; junk < 2; junk++) {
			memcpy(self->copy, s->f, s->frame_len);
			memset(self->copy + s->frame_len, junk ? 0x5a : 0, extra[i]);
			ASSERT_EQ(ROXE_PKT_OK, parse(self->copy, s->frame_len + extra[i], &pkt));
			ASSERT_EQ((uint32_t)s->frame_len, pkt.frame_len);
			ASSERT_EQ(0, memcmp(&pkt, &s->pkt, sizeof(pkt)));
			ASSERT_EQ(ROXE_PKT_OK, roxe_icrc_check(self->copy, &pkt));
		}
	}
}

/* Only headers up to the BTH need be in [data, data_end): the rest may sit
 * in XDP fragments. The copy is exactly as long as data_end says, so ASan
 * catches any read past it. */
TEST_F(frame, short_data_end)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;

	make(s, 12, variant->v6, variant->vlan, ROXE_OP_RC_RDMA_WRITE_ONLY, 300);
	for (uint32_t cut = 0; cut <= (uint32_t)s->frame_len; cut++) {
		uint8_t *part = malloc(cut ? cut : 1);
		int v;

		ASSERT_NE(NULL, part);
		memcpy(part, s->f, cut);
		memset(&pkt, 0, sizeof(pkt));
		v = roxe_parse(part, part + cut, s->frame_len, &pkt);
		free(part);
		if (cut >= s->pkt.bth_off + 12u) {
			ASSERT_EQ(ROXE_PKT_OK, v) TH_LOG("cut %u", cut);
			ASSERT_EQ(0, memcmp(&pkt, &s->pkt, sizeof(pkt))) TH_LOG("cut %u", cut);
		} else if (cut >= s->pkt.l4_off + 8u) {
			ASSERT_EQ(ROXE_PKT_BAD_HDR_LEN, v) TH_LOG("cut %u", cut);
		} else {
			ASSERT_EQ(ROXE_PKT_NOT_ROCE, v) TH_LOG("cut %u", cut);
		}
	}
}

/* --- each verdict, provoked ------------------------------------------------------ */

/* Set the IP length field so that the IP packet is ip_len bytes. */
static void set_ip_len(uint8_t *f, const struct roxe_pkt *pkt, uint32_t ip_len)
{
	if (pkt->ip_version == 4)
		be16(f + pkt->l3_off + 2, (uint16_t)ip_len);
	else
		be16(f + pkt->l3_off + 4, (uint16_t)(ip_len - 40));
}

static void set_udp_len(uint8_t *f, const struct roxe_pkt *pkt, uint32_t udp_len)
{
	be16(f + pkt->l4_off + 4, (uint16_t)udp_len);
}

TEST_F(frame, bad_ip_len)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;
	uint32_t ip_len;

	make(s, 13, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 20);
	ip_len = s->frame_len - s->pkt.l3_off;

	/* The frame ends before the IP packet does. */
	EXPECT_EQ(ROXE_PKT_BAD_IP_LEN, roxe_parse(s->f, s->f + s->frame_len,
						  s->frame_len - 1, &pkt));
	memcpy(self->copy, s->f, s->frame_len);
	self->copy[s->frame_len - 1] ^= 1;	/* not even looked at */
	EXPECT_EQ(ROXE_PKT_BAD_IP_LEN, parse(self->copy, s->frame_len - 4, &pkt));

	/* The IP length claims more than the frame holds. */
	for (uint32_t more = 1; more <= 8; more++) {
		memcpy(self->copy, s->f, s->frame_len);
		set_ip_len(self->copy, &s->pkt, ip_len + more);
		set_udp_len(self->copy, &s->pkt, ip_len + more - (s->pkt.l4_off - s->pkt.l3_off));
		EXPECT_EQ(ROXE_PKT_BAD_IP_LEN, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("%u more", more);
	}
	/* The IP length cannot even hold the IP and UDP headers. */
	for (uint32_t len = variant->v6 ? 40 : 0; len < s->pkt.l4_off + 8u - s->pkt.l3_off; len++) {
		memcpy(self->copy, s->f, s->frame_len);
		set_ip_len(self->copy, &s->pkt, len);
		EXPECT_EQ(ROXE_PKT_BAD_IP_LEN, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("IP length %u", len);
	}
}

TEST_F(frame, bad_udp_len)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;
	uint32_t udp_len, ip_hdr;

	make(s, 14, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 20);
	udp_len = s->frame_len - s->pkt.l4_off;
	ip_hdr = s->pkt.l4_off - s->pkt.l3_off;

	/* Disagrees with the IP length. */
	for (int d = -5; d <= 5; d++) {
		if (!d)
			continue;
		memcpy(self->copy, s->f, s->frame_len);
		set_udp_len(self->copy, &s->pkt, udp_len + d);
		EXPECT_EQ(ROXE_PKT_BAD_UDP_LEN, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("UDP length %+d", d);
	}
	memcpy(self->copy, s->f, s->frame_len);
	set_udp_len(self->copy, &s->pkt, 0);
	EXPECT_EQ(ROXE_PKT_BAD_UDP_LEN, parse(self->copy, s->frame_len, &pkt));

	/* Agrees, but leaves no room for BTH and ICRC. */
	for (uint32_t roce = 0; roce < ROXE_BTH_LEN + ROXE_ICRC_LEN; roce++) {
		memcpy(self->copy, s->f, s->frame_len);
		set_ip_len(self->copy, &s->pkt, ip_hdr + 8 + roce);
		set_udp_len(self->copy, &s->pkt, 8 + roce);
		EXPECT_EQ(ROXE_PKT_BAD_UDP_LEN, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("%u bytes after UDP", roce);
	}
}

TEST_F(frame, bad_version)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;

	make(s, 15, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 20);
	for (uint8_t tver = 1; tver < 16; tver++) {
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[s->pkt.bth_off + 1] = (self->copy[s->pkt.bth_off + 1] & 0xf0) | tver;
		EXPECT_EQ(ROXE_PKT_BAD_VERSION, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("tver %u", tver);
	}
}

TEST_F(frame, bad_opcode)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;
	int bad = 0;

	make(s, 16, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 64);
	for (unsigned int op = 0; op < 256; op++) {
		if (spec_of((uint8_t)op))
			continue;
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[s->pkt.bth_off] = (uint8_t)op;
		EXPECT_EQ(ROXE_PKT_BAD_OPCODE, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("opcode %#x", op);
		bad++;
	}
	EXPECT_EQ(256 - (int)ARRAY_SIZE(specs), bad);
}

TEST_F(frame, bad_hdr_len)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;
	int tried = 0;

	/* 12 bytes of BTH, then the ICRC: every opcode with an extension
	 * header claims more than there is. */
	make(s, 17, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 0);
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		if (!specs[i].exts)
			continue;
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[s->pkt.bth_off] = specs[i].op;
		EXPECT_EQ(ROXE_PKT_BAD_HDR_LEN, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("%s", specs[i].name);
		tried++;
	}
	EXPECT_LT(15, tried);

	/* An ACK's AETH cut: one word short. */
	make(s, 17, variant->v6, variant->vlan, ROXE_OP_RC_ACKNOWLEDGE, 0);
	memcpy(self->copy, s->f, s->frame_len);
	set_ip_len(self->copy, &s->pkt, s->frame_len - 4 - s->pkt.l3_off);
	set_udp_len(self->copy, &s->pkt, s->frame_len - 4 - s->pkt.l4_off);
	EXPECT_EQ(ROXE_PKT_BAD_HDR_LEN, parse(self->copy, s->frame_len - 4, &pkt));
}

TEST_F(frame, bad_payload)
{
	struct sample *s = self->s;
	struct roxe_pkt pkt;

	/* Payload on opcodes without one: a SEND_ONLY whose body is the other
	 * opcode's headers and four bytes more. */
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++) {
		if (specs[i].payload != NONE)
			continue;
		make(s, 18, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY,
		     spec_hdr_len(&specs[i]) - 12 + 4);
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[s->pkt.bth_off] = specs[i].op;
		EXPECT_EQ(ROXE_PKT_BAD_PAYLOAD, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("%s with payload", specs[i].name);
		/* Control: without the four bytes it parses. */
		make(s, 18, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY,
		     spec_hdr_len(&specs[i]) - 12);
		self->s->f[s->pkt.bth_off] = specs[i].op;
		EXPECT_EQ(ROXE_PKT_OK, parse(s->f, s->frame_len, &pkt)) TH_LOG("%s", specs[i].name);
	}

	/* Pad larger than the payload. */
	make(s, 19, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 0);
	for (uint8_t pad = 1; pad < 4; pad++) {
		memcpy(self->copy, s->f, s->frame_len);
		self->copy[s->pkt.bth_off + 1] |= pad << 4;
		EXPECT_EQ(ROXE_PKT_BAD_PAYLOAD, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("pad %u", pad);
	}

	/* Payload and pad not a whole number of words. */
	make(s, 20, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 8);
	for (uint32_t less = 1; less < 4; less++) {
		memcpy(self->copy, s->f, s->frame_len);
		set_ip_len(self->copy, &s->pkt, s->frame_len - less - s->pkt.l3_off);
		set_udp_len(self->copy, &s->pkt, s->frame_len - less - s->pkt.l4_off);
		EXPECT_EQ(ROXE_PKT_BAD_PAYLOAD, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("%u bytes short", less);
	}

	/* CNP: exactly 16 bytes, no pad. */
	for (uint32_t len = 0; len <= 32; len += 4) {
		make(s, 21, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, len);
		s->f[s->pkt.bth_off] = ROXE_OP_CNP;
		EXPECT_EQ(len == 16 ? ROXE_PKT_OK : ROXE_PKT_BAD_PAYLOAD,
			  parse(s->f, s->frame_len, &pkt)) TH_LOG("CNP with %u bytes", len);
	}
	make(s, 22, variant->v6, variant->vlan, ROXE_OP_CNP, 16);
	ASSERT_EQ(ROXE_PKT_OK, parse(s->f, s->frame_len, &pkt));
	s->f[s->pkt.bth_off + 1] |= 1 << 4;
	EXPECT_EQ(ROXE_PKT_BAD_PAYLOAD, parse(s->f, s->frame_len, &pkt));
}

TEST_F(frame, not_roce)
{
	struct sample *s = self->s;
	static const uint16_t ports[] = { 0, 4790, 4792, 0xb712, 53 };
	struct roxe_pkt pkt;

	make(s, 23, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 20);

	/* Other UDP ports, also 4791 as the source port only. */
	for (size_t i = 0; i < ARRAY_SIZE(ports); i++) {
		memcpy(self->copy, s->f, s->frame_len);
		be16(self->copy + s->pkt.l4_off, 4791);
		be16(self->copy + s->pkt.l4_off + 2, ports[i]);
		EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt))
			TH_LOG("port %u", ports[i]);
	}
	/* Not UDP: TCP; IPv6 with an extension header first. */
	memcpy(self->copy, s->f, s->frame_len);
	self->copy[s->pkt.l3_off + (variant->v6 ? 6 : 9)] = 6;
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt));
	if (variant->v6) {
		self->copy[s->pkt.l3_off + 6] = 0;	/* hop-by-hop options */
		EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt));
	}
	/* An IP version that disagrees with the EtherType. */
	memcpy(self->copy, s->f, s->frame_len);
	self->copy[s->pkt.l3_off] = (variant->v6 ? 0x40 : 0x60) | (self->copy[s->pkt.l3_off] & 0x0f);
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt));
	/* ARP, and other EtherTypes. */
	memcpy(self->copy, s->f, s->frame_len);
	be16(self->copy + s->pkt.l3_off - 2, 0x0806);
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt));
	be16(self->copy + s->pkt.l3_off - 2, 0x8915);	/* RoCE v1 */
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(self->copy, s->frame_len, &pkt));
	/* Cut before the UDP header ends. */
	for (uint32_t cut = 0; cut < s->pkt.l4_off + 8u; cut++) {
		EXPECT_EQ(ROXE_PKT_NOT_ROCE, roxe_parse(s->f, s->f + cut, s->frame_len, &pkt))
			TH_LOG("cut %u", cut);
	}
}

TEST_F(frame, builder_errors)
{
	struct sample *s = self->s;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint8_t *exact;

	make(s, 24, variant->v6, variant->vlan, ROXE_OP_RC_SEND_ONLY, 100);
	a = s->a;
	h = s->h;

	/* Exactly the room it needs, and not a byte more written (ASan). */
	exact = malloc(s->frame_len);
	ASSERT_NE(NULL, exact);
	EXPECT_EQ(s->frame_len, roxe_frame_build(exact, s->frame_len, &a, &h, s->payload, 100, &pkt));
	EXPECT_EQ(0, memcmp(exact, s->f, s->frame_len));
	EXPECT_EQ(-ENOSPC, roxe_frame_build(exact, s->frame_len - 1, &a, &h, s->payload, 100, &pkt));
	free(exact);

	h.opcode = 0x15;
	EXPECT_EQ(-EINVAL, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload, 100, &pkt));
	h.opcode = ROXE_OP_RC_ACKNOWLEDGE;
	EXPECT_EQ(-EINVAL, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload, 4, &pkt));
	h.opcode = ROXE_OP_CNP;
	EXPECT_EQ(-EINVAL, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload, 12, &pkt));
	EXPECT_LT(0, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload, 16, &pkt));
	/* IPv4 to IPv6. */
	h.opcode = ROXE_OP_RC_SEND_ONLY;
	if (variant->v6)
		roxe_gid_from_v4(a.dgid, htonl(0x0a000001));
	else
		memset(a.dgid, 0x20, 16);
	EXPECT_EQ(-EINVAL, roxe_frame_build(self->copy, BUF_LEN, &a, &h, s->payload, 4, &pkt));
}

/* --- beyond the builder's repertoire ----------------------------------------------- */

TEST(ipv4_options)
{
	static uint8_t f[BUF_LEN], g[BUF_LEN];
	uint8_t payload[50];
	uint64_t rng = 25;
	struct roxe_frame_addr a, a2;
	struct roxe_frame_hdr h, h2;
	struct roxe_pkt pkt, opt;
	int len;

	sample_addr(&rng, false, true, &a);
	sample_hdr(&rng, ROXE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, &h);
	sample_bytes(&rng, payload, sizeof(payload));
	len = roxe_frame_build(f, sizeof(f), &a, &h, payload, sizeof(payload), &pkt);
	ASSERT_LT(0, len);

	for (uint32_t n = 4; n <= 40; n += 4) {
		uint8_t *ip;

		/* n bytes of options (NOPs, then an end of list) after 20 bytes. */
		memcpy(g, f, pkt.l3_off + 20);
		memset(g + pkt.l3_off + 20, 1, n);
		g[pkt.l3_off + 20 + n - 1] = 0;
		memcpy(g + pkt.l3_off + 20 + n, f + pkt.l4_off, len - pkt.l4_off);
		ip = g + pkt.l3_off;
		ip[0] = (uint8_t)(0x40 | (20 + n) / 4);
		be16(ip + 2, (uint16_t)(len - pkt.l3_off + n));

		ASSERT_EQ(ROXE_PKT_OK, parse(g, len + n, &opt)) TH_LOG("%u bytes of options", n);
		ASSERT_EQ(pkt.l3_off + 20 + n, opt.l4_off);
		ASSERT_EQ(pkt.payload_off + n, opt.payload_off);
		ASSERT_EQ(pkt.frame_len + n, opt.frame_len);
		ASSERT_EQ(pkt.payload_len, opt.payload_len);
		roxe_frame_hdr_get(g, &opt, &h2);
		expect_hdr(_metadata, &h, &h2, "options");
		roxe_frame_addr_get(g, &opt, &a2);
		expect_addr(_metadata, &a, &a2, "options");

		/* The options are covered: the old ICRC no longer fits. */
		ASSERT_NE(ROXE_PKT_OK, roxe_icrc_check(g, &opt));
		roxe_frame_seal(g, &opt);
		ASSERT_EQ(ROXE_PKT_OK, roxe_icrc_check(g, &opt));
		g[pkt.l3_off + 20] ^= 0x10;
		ASSERT_NE(ROXE_PKT_OK, roxe_icrc_check(g, &opt));
	}
}

/* 802.1ad outer tag, 802.1Q inner tag: two tags parse, a third does not. */
TEST(stacked_vlans)
{
	static uint8_t f[BUF_LEN], g[BUF_LEN];
	uint64_t rng = 26;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt, q;
	int len;

	sample_addr(&rng, true, true, &a);
	sample_hdr(&rng, ROXE_OP_UC_SEND_ONLY, &h);
	len = roxe_frame_build(f, sizeof(f), &a, &h, "0123456789", 10, &pkt);
	ASSERT_LT(0, len);

	memcpy(g, f, 12);
	be16(be16(g + 12, 0x88a8), 0x0123);
	memcpy(g + 16, f + 12, len - 12);
	ASSERT_EQ(ROXE_PKT_OK, parse(g, len + 4, &q));
	EXPECT_EQ(2, q.vlans);
	EXPECT_EQ(a.vlan_tci, q.vlan_tci);
	EXPECT_EQ(pkt.l3_off + 4, q.l3_off);
	EXPECT_EQ(pkt.frame_len + 4, q.frame_len);
	EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(g, &q));

	/* A third tag is one more than the parser looks through. */
	memcpy(g, f, 12);
	be16(be16(g + 12, 0x88a8), 0x0123);
	be16(be16(g + 16, 0x88a8), 0x0456);
	memcpy(g + 20, f + 12, len - 12);
	ASSERT_EQ(ROXE_PKT_NOT_ROCE, parse(g, len + 8, &q));
}

TEST(ipv4_fragments_not_roce)
{
	static uint8_t f[BUF_LEN];
	static const uint16_t frag[] = { 0x2000, 0x0001, 0x2001, 0x1fff, 0x6000 };
	uint64_t rng = 27;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt, q;
	int len;

	sample_addr(&rng, false, false, &a);
	sample_hdr(&rng, ROXE_OP_RC_SEND_ONLY, &h);
	len = roxe_frame_build(f, sizeof(f), &a, &h, "abcd", 4, &pkt);
	ASSERT_LT(0, len);
	for (size_t i = 0; i < ARRAY_SIZE(frag); i++) {
		be16(f + pkt.l3_off + 6, frag[i]);
		EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(f, len, &q)) TH_LOG("frag_off %#x", frag[i]);
	}
	be16(f + pkt.l3_off + 6, 0);	/* DF clear is fine */
	EXPECT_EQ(ROXE_PKT_OK, parse(f, len, &q));
	f[pkt.l3_off] = 0x44;		/* IHL below 5 */
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(f, len, &q));
}

TEST(arp_not_roce)
{
	/* who-has 10.0.0.2 tell 10.0.0.1 */
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06,
		0, 1, 0x08, 0x00, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 1, 10, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	};
	struct roxe_pkt pkt;

	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(arp, sizeof(arp), &pkt));
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(arp, 13, &pkt));
	EXPECT_EQ(ROXE_PKT_NOT_ROCE, parse(arp, 0, &pkt));
}

TEST(hop_limit_default)
{
	static uint8_t f[BUF_LEN];
	uint64_t rng = 28;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;

	for (int v6 = 0; v6 < 2; v6++) {
		sample_addr(&rng, v6, false, &a);
		sample_hdr(&rng, ROXE_OP_RC_SEND_ONLY, &h);
		a.hop_limit = 0;
		ASSERT_LT(0, roxe_frame_build(f, sizeof(f), &a, &h, NULL, 0, &pkt));
		EXPECT_EQ(64, f[pkt.l3_off + (v6 ? 7 : 8)]);
	}
}

/* The header checksum word by word against rfc1071() above, byte by
 * byte: every even length to 60 (options included), content at random,
 * and RFC 1071's own example (section 3). An odd length counts its last
 * byte as the high half of a word padded with zero. */
TEST(ipv4_csum_as_rfc1071)
{
	static const uint8_t rfc_example[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint8_t h[61] __attribute__((aligned(8))), odd[4];
	uint64_t rng = 1071;

	EXPECT_EQ((uint16_t)~0xddf2, roxe_ipv4_csum(rfc_example, sizeof(rfc_example)));
	for (int round = 0; round < 200; round++)
		for (size_t len = 0; len <= 60; len += 2) {
			/* any alignment: frames start where the port puts them */
			size_t at = round % 2;

			sample_bytes(&rng, h, sizeof(h));
			ASSERT_EQ(rfc1071(h + at, len), roxe_ipv4_csum(h + at, len))
				TH_LOG("length %zu at +%zu", len, at);
		}
	memcpy(odd, "\x12\x34\x56\x00", 4);
	EXPECT_EQ(rfc1071(odd, 4), roxe_ipv4_csum(odd, 3));
	/* all ones: the sum is 0xffff, its complement 0 */
	memset(h, 0xff, 20);
	EXPECT_EQ(0, roxe_ipv4_csum(h, 20));
}

/* The GIDs of a parsed frame: IPv4 addresses IPv4-mapped, IPv6 ones as they
 * are, either pointer NULL, and -1 for a header past data_end. */
TEST(pkt_gids)
{
	static uint8_t f[BUF_LEN];
	uint64_t rng = 4791;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint8_t sgid[16], dgid[16];

	for (int v6 = 0; v6 < 2; v6++) {
		sample_addr(&rng, v6, v6, &a);
		sample_hdr(&rng, ROXE_OP_RC_SEND_ONLY, &h);
		ASSERT_LT(0, roxe_frame_build(f, sizeof(f), &a, &h, NULL, 0, &pkt));
		memset(sgid, 0xaa, 16);
		memset(dgid, 0xaa, 16);
		ASSERT_EQ(0, roxe_pkt_gids(f, f + pkt.frame_len, &pkt, sgid, dgid));
		EXPECT_EQ(0, memcmp(a.sgid, sgid, 16));
		EXPECT_EQ(0, memcmp(a.dgid, dgid, 16));
		EXPECT_EQ(!v6, roxe_gid_is_v4(sgid));
		EXPECT_TRUE(roxe_gid_eq(a.sgid, sgid));
		EXPECT_FALSE(roxe_gid_eq(a.sgid, dgid));
		memset(sgid, 0xaa, 16);
		ASSERT_EQ(0, roxe_pkt_gids(f, f + pkt.frame_len, &pkt, NULL, sgid));
		EXPECT_EQ(0, memcmp(a.dgid, sgid, 16));
		memset(dgid, 0xaa, 16);
		ASSERT_EQ(0, roxe_pkt_gids(f, f + pkt.frame_len, &pkt, dgid, NULL));
		EXPECT_EQ(0, memcmp(a.sgid, dgid, 16));
		EXPECT_EQ(-1, roxe_pkt_gids(f, f + pkt.l3_off + (v6 ? 39 : 19), &pkt, sgid, dgid));
	}
	/* one bit apart, in either word */
	memcpy(dgid, sgid, 16);
	dgid[3] ^= 0x10;
	EXPECT_FALSE(roxe_gid_eq(sgid, dgid));
	dgid[3] ^= 0x10;
	dgid[15] ^= 1;
	EXPECT_FALSE(roxe_gid_eq(sgid, dgid));
	dgid[15] ^= 1;
	EXPECT_TRUE(roxe_gid_eq(sgid, dgid));
}

TEST(flow_sport)
{
	int same = 0;

	for (uint32_t q = 0; q < 4096; q++) {
		uint16_t p = roxe_flow_sport(q, q * 7 + 1);

		ASSERT_EQ(0xc000, p & 0xc000);
		ASSERT_EQ(p, roxe_flow_sport(q, q * 7 + 1));
		same += p == roxe_flow_sport(q + 1, q * 7 + 1);
	}
	/* Entropy: neighbouring QP pairs rarely share a port. */
	EXPECT_GT(20, same);
}

TEST(gid_text)
{
	uint8_t gid[16];
	char buf[64];

	roxe_gid_from_v4(gid, htonl(0xc0a80107));
	EXPECT_TRUE(roxe_gid_is_v4(gid));
	roxe_gid_ntop(gid, buf, sizeof(buf));
	EXPECT_STREQ("192.168.1.7", buf);
	inet_pton(AF_INET6, "fe80::1:2", gid);
	EXPECT_FALSE(roxe_gid_is_v4(gid));
	roxe_gid_ntop(gid, buf, sizeof(buf));
	EXPECT_STREQ("fe80::1:2", buf);
}

/*
 * Another ConnectX CNP, its UDP payload as NVIDIA's knowledge article
 * "RoCEv2 CNP Packet Format Example" (community.mellanox.com/s/article/
 * rocev2-cnp-packet-format-example, 2018) prints it from a Wireshark
 * capture: DestQP 0xd2. The article shows its IP and UDP headers only as a
 * screenshot (scapy's test notes its ICRC does not match the text's
 * headers), so only the bytes before the ICRC are compared.
 */
static const uint8_t article_cnp_udp_payload[] = {
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xe4, 0x2d, 0xad, 0x81,
};

/* The path of the QP the ConnectX-4 Lx capture's CNP went back along. */
static void connectx4_path(struct roxe_frame_addr *p)
{
	static const uint8_t dmac[6] = { 0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2 };
	static const uint8_t smac[6] = { 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32 };

	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, dmac, 6);
	memcpy(p->smac, smac, 6);
	roxe_gid_from_v4(p->sgid, htonl(0x0a001101));
	roxe_gid_from_v4(p->dgid, htonl(0x0a001201));
	p->tclass = 0x68 | ROXE_ECN_ECT0;	/* the QP's own DSCP: not the CNP's */
	p->hop_limit = 64;
	p->ip_id = 0x718c;
	p->sport = 0;
}

/* The capture's frame (frame_sample.h), built by roxe. */
TEST(cnp_as_connectx)
{
	static const uint8_t reserved[ROXE_CNP_PAYLOAD_LEN];
	static uint8_t f[BUF_LEN];
	const size_t n = sizeof(article_cnp_udp_payload);
	struct roxe_frame_addr path, a;
	struct roxe_frame_hdr h, got;
	struct roxe_pkt pkt;
	uint64_t rng = 81;
	int len, differ = 0;

	/* Byte for byte the capture: roxe's DSCP, ECN, lengths, DF, BTH,
	 * reserved bytes and ICRC, over the capture's addresses. */
	connectx4_path(&path);
	roxe_cnp_addr(&a, &path, ROXE_ECN_ECT0);
	roxe_cnp_hdr(&h, 0x118);
	len = roxe_frame_build(f, sizeof(f), &a, &h, reserved, sizeof(reserved), &pkt);
	ASSERT_EQ((int)sizeof(connectx4_cnp), len);
	for (int i = 0; i < len; i++) {
		if (connectx4_cnp[i] != f[i]) {
			TH_LOG("byte %d: 0x%02x, the capture 0x%02x", i, f[i], connectx4_cnp[i]);
			differ++;
		}
	}
	EXPECT_EQ(0, differ);
	/* ECN off: Not-ECT, the rest alike (the ICRC masks the TOS) */
	roxe_cnp_addr(&a, &path, ROXE_ECN_NOT_ECT);
	ASSERT_EQ(len, roxe_frame_build(f, sizeof(f), &a, &h, reserved, sizeof(reserved), &pkt));
	EXPECT_EQ(ROXE_CNP_DSCP << 2, f[pkt.l3_off + 1]);
	EXPECT_EQ(0, memcmp(f + pkt.l4_off, connectx4_cnp + pkt.l4_off, (size_t)len - pkt.l4_off));

	for (int v6 = 0; v6 < 2; v6++) {
		sample_addr(&rng, v6, v6, &path);
		roxe_cnp_addr(&a, &path, ROXE_ECN_ECT0);
		roxe_cnp_hdr(&h, 0xd2);
		len = roxe_frame_build(f, sizeof(f), &a, &h, reserved, sizeof(reserved), &pkt);
		ASSERT_LT(0, len);
		/* UDP payload: BTH, 16 reserved bytes, ICRC: the article's */
		ASSERT_EQ(n, (size_t)len - pkt.bth_off);
		EXPECT_EQ(8 + n, (size_t)(f[pkt.l4_off + 4] << 8 | f[pkt.l4_off + 5]));
		EXPECT_EQ(0, memcmp(f + pkt.bth_off, article_cnp_udp_payload, n - 4));
		/* along the path: its addresses and UDP source port */
		EXPECT_EQ(path.sport, f[pkt.l4_off] << 8 | f[pkt.l4_off + 1]);
		/* and it reads back as a valid CNP */
		ASSERT_EQ(ROXE_PKT_OK, parse(f, (size_t)len, &pkt));
		EXPECT_EQ(ROXE_OP_CNP, pkt.opcode);
		EXPECT_EQ(ROXE_CNP_PAYLOAD_LEN, pkt.payload_len);
		EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(f, &pkt));
		EXPECT_EQ(ROXE_ECN_ECT0, roxe_pkt_ecn(f, f + len, &pkt));
		roxe_frame_hdr_get(f, &pkt, &got);
		EXPECT_TRUE(got.becn);
		EXPECT_FALSE(got.fecn);
		EXPECT_FALSE(got.ackreq);
		EXPECT_EQ(0xffff, got.pkey);
		EXPECT_EQ(0xd2u, got.dqpn);
		EXPECT_EQ(0u, got.psn);
		/* 4 reserved bytes more or less are not a CNP, to build or to take */
		EXPECT_EQ(-EINVAL, roxe_frame_build(f, sizeof(f), &a, &h, reserved,
						    sizeof(reserved) - 4, &pkt));
		h.opcode = ROXE_OP_UD_SEND_ONLY;	/* DETH + 12: 20 bytes after the BTH */
		len = roxe_frame_build(f, sizeof(f), &a, &h, reserved, sizeof(reserved) - 4, &pkt);
		ASSERT_LT(0, len);
		f[pkt.bth_off] = ROXE_OP_CNP;
		EXPECT_EQ(ROXE_PKT_BAD_PAYLOAD, parse(f, (size_t)len, &pkt));
	}
}

/* ECN: whatever the two bits say, the frame parses, reads back the bits
 * (roxe_pkt_ecn, as the XDP program and the engine read them) and keeps
 * its ICRC: the ICRC masks the whole TOS / traffic class. */
TEST(ecn_bits_any_value)
{
	static uint8_t f[BUF_LEN];
	uint64_t rng = 3168;
	struct roxe_frame_addr a;
	struct roxe_frame_hdr h;
	struct roxe_pkt pkt;
	uint32_t icrc = 0;

	for (int v6 = 0; v6 < 2; v6++) {
		sample_addr(&rng, v6, false, &a);
		sample_hdr(&rng, ROXE_OP_RC_SEND_ONLY, &h);
		for (int ecn = 0; ecn < 4; ecn++) {
			int len;

			a.tclass = (uint8_t)(0xb8 | ecn);	/* DSCP 46 */
			len = roxe_frame_build(f, sizeof(f), &a, &h, "ecn", 3, &pkt);
			ASSERT_LT(0, len);
			ASSERT_EQ(ROXE_PKT_OK, parse(f, (size_t)len, &pkt));
			EXPECT_EQ(ecn, roxe_pkt_ecn(f, f + len, &pkt));
			EXPECT_EQ(ROXE_PKT_OK, roxe_icrc_check(f, &pkt));
			if (!ecn)
				icrc = roxe_icrc_stored(f, &pkt);
			EXPECT_EQ(icrc, roxe_icrc_stored(f, &pkt));
			/* and on the wire where RFC 3168 puts them */
			EXPECT_EQ(ecn, v6 ? (f[pkt.l3_off + 1] >> 4) & 3 : f[pkt.l3_off + 1] & 3);
		}
	}
}

/* The CRC under the ICRC against the Ethernet CRC-32 bit by bit (reflected,
 * polynomial 0xedb88320, seed and result inverted): every length up to
 * 1100 bytes and frame sizes to 9000, at every alignment mod 32, with a
 * running CRC carried in (frames are CRCed in pieces). Lengths from 512 on
 * take the wide folding path where the CPU has VPCLMULQDQ (icrc.c). */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = crc & 1 ? crc >> 1 ^ 0xedb88320u : crc >> 1;
	}
	return ~crc;
}

/* Every length, at offsets, through the CRC code `impl` (roxe_icrc_impl). */
static void crc32_every_length(struct __test_metadata *_metadata, const char *impl)
{
	static uint8_t buf[9000 + 64];
	static const size_t big[] = { 2048, 4095, 4096, 4097, 4158, 8192, 8999, 9000 };
	uint32_t seed = 0x12345678;

	TH_LOG("CRC-32 code: %s", roxe_icrc_impl());
	if (strcmp(roxe_icrc_impl(), impl))
		SKIP(return, "this CPU has no %s", impl);
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t len = 0; len <= 1100 + ARRAY_SIZE(big); len++) {
		size_t n = len <= 1100 ? len : big[len - 1101];

		for (size_t off = 0; off < 32; off += len <= 1100 ? 7 : 1) {
			uint32_t init = (uint32_t)(len * 2654435761u + off);

			ASSERT_EQ(crc32_bitwise(init, buf + off, n),
				  roxe_icrc_update(init, buf + off, n))
				TH_LOG("%s: length %zu offset %zu", impl, n, off);
		}
	}
}

/* roxe_icrc_update_copy: the copy is exact and stays in [dst, dst+len),
 * the CRC is the copy's, at every alignment of either end. */
static void crc32_copy_every_length(struct __test_metadata *_metadata, const char *impl)
{
	static uint8_t src[9000 + 128], dst[9000 + 256];
	static const size_t big[] = { 575, 576, 577, 1024, 2047, 4096, 4097, 4150, 8999 };
	uint32_t seed = 0x9e3779b9;

	if (strcmp(roxe_icrc_impl(), impl))
		SKIP(return, "this CPU has no %s", impl);
	for (size_t i = 0; i < sizeof(src); i++) {
		seed = seed * 1103515245 + 12345;
		src[i] = (uint8_t)(seed >> 16);
	}
	for (size_t k = 0; k <= 700 + ARRAY_SIZE(big); k++) {
		size_t n = k <= 700 ? k : big[k - 701];

		for (size_t so = 0; so < 64; so += n < 500 ? 21 : 5) {
			for (size_t dof = 0; dof < 64; dof += n < 500 ? 19 : 3) {
				uint32_t init = (uint32_t)(n * 40503u + so * 7 + dof);
				uint8_t *d = dst + 64 + dof;

				memset(dst, 0xc3, sizeof(dst));
				ASSERT_EQ(crc32_bitwise(init, src + so, n),
					  roxe_icrc_update_copy(init, d, src + so, n))
					TH_LOG("%s: length %zu, src +%zu, dst +%zu", impl, n, so, dof);
				ASSERT_EQ(0, memcmp(d, src + so, n));
				for (size_t j = 0; j < 64 + dof; j++)
					ASSERT_EQ(0xc3, dst[j]);
				for (size_t j = 64 + dof + n; j < sizeof(dst); j++)
					ASSERT_EQ(0xc3, dst[j]) TH_LOG("written past the end: %zu", n);
			}
		}
	}
}

/* Each test runs in a process of its own, whose CRC code stays as the test
 * selects it (roxe_icrc_select; the tools' ROXE_ICRC). */
/* Names other than the three (and NULL, "": the widest) change nothing. */
TEST(icrc_select_takes_its_names_only)
{
	const char *widest = roxe_icrc_impl();

	EXPECT_EQ(-EINVAL, roxe_icrc_select("sse4"));
	EXPECT_STREQ(widest, roxe_icrc_impl());
	ASSERT_EQ(0, roxe_icrc_select("generic"));
	EXPECT_STREQ("libdeflate", roxe_icrc_impl());
	ASSERT_EQ(0, roxe_icrc_select(""));
	EXPECT_STREQ(widest, roxe_icrc_impl());
	ASSERT_EQ(0, roxe_icrc_select("avx2"));
	ASSERT_EQ(0, roxe_icrc_select(NULL));
	EXPECT_STREQ(widest, roxe_icrc_impl());
}

TEST(icrc_crc32_every_length_avx512_vbmi)
{
	crc32_every_length(_metadata, "avx512-vpclmulqdq-vbmi");
	crc32_copy_every_length(_metadata, "avx512-vpclmulqdq-vbmi");
}

TEST(icrc_crc32_every_length_avx512)
{
	ASSERT_EQ(0, roxe_icrc_select("avx512"));
	crc32_every_length(_metadata, "avx512-vpclmulqdq");
	crc32_copy_every_length(_metadata, "avx512-vpclmulqdq");
}

TEST(icrc_crc32_every_length_avx2)
{
	ASSERT_EQ(0, roxe_icrc_select("avx2"));
	crc32_every_length(_metadata, "avx2-vpclmulqdq");
	crc32_copy_every_length(_metadata, "avx2-vpclmulqdq");
}

TEST(icrc_crc32_every_length_libdeflate)
{
	ASSERT_EQ(0, roxe_icrc_select("generic"));
	crc32_every_length(_metadata, "libdeflate");
	crc32_copy_every_length(_metadata, "libdeflate");
}

TEST_HARNESS_MAIN
