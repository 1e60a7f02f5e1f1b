// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-pcap's reader (pcapcheck.h); the output is described in roxe-pcap's
 * usage text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "roxe/frame.h"
#include "pcapcheck.h"

/* Linux cooked headers (pcap-linktype(7)): where protocol and address sit. */
#define SLL_LEN		16
#define SLL_HALEN	4
#define SLL_ADDR	6
#define SLL_PROTO	14
#define SLL2_LEN	20
#define SLL2_PROTO	0
#define SLL2_HALEN	11
#define SLL2_ADDR	12

bool pcapcheck_dlt_ok(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2;
}

void pcapcheck_init(struct pcapcheck *k, int dlt, FILE *out, bool quiet)
{
	memset(k, 0, sizeof(*k));
	k->dlt = dlt;
	k->out = out;
	k->quiet = quiet;
}

void pcapcheck_fini(struct pcapcheck *k)
{
	free(k->buf);
	k->buf = NULL;
	k->buf_len = 0;
}

/*
 * An Ethernet frame for the parser from a cooked record of at least the
 * cooked header's length (NULL: out of memory): the protocol
 * becomes the EtherType, the link address (if 6 bytes) the source MAC, the
 * destination MAC is unknown (zero). The frame then counts as what it was
 * on the wire, 14 bytes of Ethernet header instead of the cooked one.
 */
static const uint8_t *from_cooked(struct pcapcheck *k, const uint8_t *rec, uint32_t caplen,
				  uint32_t *cap, uint32_t *wire)
{
	uint32_t hdr = k->dlt == DLT_LINUX_SLL ? SLL_LEN : SLL2_LEN;
	uint32_t halen, proto_off, addr_off;
	uint8_t *f;

	if (k->dlt == DLT_LINUX_SLL) {
		halen = (uint32_t)rec[SLL_HALEN] << 8 | rec[SLL_HALEN + 1];
		proto_off = SLL_PROTO;
		addr_off = SLL_ADDR;
	} else {
		halen = rec[SLL2_HALEN];
		proto_off = SLL2_PROTO;
		addr_off = SLL2_ADDR;
	}
	if (k->buf_len < caplen - hdr + 14) {
		free(k->buf);
		k->buf_len = caplen - hdr + 14;
		k->buf = malloc(k->buf_len);
		if (!k->buf) {
			k->buf_len = 0;
			return NULL;
		}
	}
	f = k->buf;
	memset(f, 0, 6);
	if (halen == 6)
		memcpy(f + 6, rec + addr_off, 6);
	else
		memset(f + 6, 0, 6);
	memcpy(f + 12, rec + proto_off, 2);
	memcpy(f + 14, rec + hdr, caplen - hdr);
	*cap = caplen - hdr + 14;
	*wire = *wire >= hdr ? *wire - hdr + 14 : *cap;
	return f;
}

static void gid_port(char *out, size_t len, const uint8_t gid[16], int port)
{
	char ip[INET6_ADDRSTRLEN];

	roxe_gid_ntop(gid, ip, sizeof(ip));
	if (roxe_gid_is_v4(gid))
		snprintf(out, len, port < 0 ? "%s" : "%s:%d", ip, port);
	else
		snprintf(out, len, port < 0 ? "[%s]" : "[%s]:%d", ip, port);
}

/* What check_frame found of a RoCE v2 frame. */
enum frame_state { FRAME_OK, FRAME_BAD, FRAME_TRUNCATED, FRAME_MALFORMED };

/* "N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN ", or the JSON
 * object's first members */
static void print_frame(const struct pcapcheck *k, unsigned long n, const uint8_t *f,
			const struct roxe_pkt *pkt)
{
	struct roxe_frame_addr a;
	struct roxe_bth bth;
	char src[INET6_ADDRSTRLEN + 16], dst[INET6_ADDRSTRLEN + 16];

	roxe_frame_addr_get(f, pkt, &a);
	memcpy(&bth, f + pkt->bth_off, sizeof(bth));
	/* addresses and opcode names are our own text: nothing to escape */
	if (k->json) {	/* the addresses bare: IPv4 dotted, IPv6 without brackets */
		roxe_gid_ntop(a.sgid, src, sizeof(src));
		roxe_gid_ntop(a.dgid, dst, sizeof(dst));
		fprintf(k->out, ", \"src\": \"%s\", \"sport\": %d, \"dst\": \"%s\", \"opcode\": "
			"\"%s\", \"qpn\": %u, \"psn\": %u, \"len\": %u", src, a.sport, dst,
			roxe_opcode_name(bth.opcode), roxe_bth_qpn(&bth), roxe_bth_psn(&bth),
			pkt->payload_len);
		return;
	}
	gid_port(src, sizeof(src), a.sgid, a.sport);
	gid_port(dst, sizeof(dst), a.dgid, -1);
	fprintf(k->out, "%lu %s -> %s %s qp 0x%06x psn %u len %u ", n, src, dst,
		roxe_opcode_name(bth.opcode), roxe_bth_qpn(&bth),
		roxe_bth_psn(&bth), pkt->payload_len);
}

/* Frame n's line or object: x and y are want and got (FRAME_BAD), captured
 * and wire bytes (FRAME_TRUNCATED), the verdict and bytes (FRAME_MALFORMED). */
static void report(struct pcapcheck *k, unsigned long n, const uint8_t *f,
		   const struct roxe_pkt *pkt, enum frame_state st, uint32_t x, uint32_t y)
{
	static const char *const result[] = { "icrc ok", "icrc bad", "truncated", "malformed" };

	if (k->json) {
		fprintf(k->out, "%s{\"frame\": %lu, \"result\": \"%s\"", k->shown ? ",\n " : "", n,
			result[st]);
		if (st == FRAME_MALFORMED)
			fprintf(k->out, ", \"reason\": \"%s\", \"bytes\": %u}",
				roxe_verdict_name((int)x), y);
		else
			print_frame(k, n, f, pkt);
		if (st == FRAME_BAD)
			fprintf(k->out, ", \"icrc_want\": %u, \"icrc_got\": %u}", x, y);
		else if (st == FRAME_TRUNCATED)
			fprintf(k->out, ", \"captured\": %u, \"bytes\": %u}", x, y);
		else if (st == FRAME_OK)
			fprintf(k->out, "}");
	} else if (st == FRAME_MALFORMED) {
		fprintf(k->out, "%lu malformed %s (%u bytes)\n", n, roxe_verdict_name((int)x), y);
	} else {
		print_frame(k, n, f, pkt);
		if (st == FRAME_OK)
			fprintf(k->out, "icrc ok\n");
		else if (st == FRAME_BAD)
			fprintf(k->out, "icrc BAD (want 0x%08x got 0x%08x)\n", x, y);
		else
			fprintf(k->out, "truncated (captured %u of %u bytes)\n", x, y);
	}
	k->shown++;
}

/* Check one Ethernet frame of which cap bytes were captured out of wire. */
static void check_frame(struct pcapcheck *k, const uint8_t *f, uint32_t cap, uint32_t wire)
{
	struct pcapcheck_counts *c = &k->c;
	unsigned long n = c->frames;
	struct roxe_pkt pkt;
	uint32_t want, got;
	int v;

	memset(&pkt, 0, sizeof(pkt));
	v = roxe_parse(f, f + cap, wire > cap ? wire : cap, &pkt);
	if (v == ROXE_PKT_NOT_ROCE) {
		c->skipped++;
		return;
	}
	c->roce++;
	if (v != ROXE_PKT_OK) {
		c->malformed++;
		report(k, n, f, &pkt, FRAME_MALFORMED, (uint32_t)v, wire > cap ? wire : cap);
		return;
	}
	if (cap < pkt.frame_len) {
		/* Only the headers up to the BTH are sure to be there. */
		c->malformed++;
		report(k, n, f, &pkt, FRAME_TRUNCATED, cap, wire);
		return;
	}
	want = roxe_icrc_compute(f, &pkt);
	got = roxe_icrc_stored(f, &pkt);
	if (want == got) {
		c->icrc_ok++;
		if (!k->quiet)
			report(k, n, f, &pkt, FRAME_OK, want, got);
	} else {
		c->icrc_bad++;
		report(k, n, f, &pkt, FRAME_BAD, want, got);
	}
}

int pcapcheck_record(struct pcapcheck *k, const struct pcap_pkthdr *ph, const uint8_t *rec)
{
	const uint8_t *f = rec;
	uint32_t cap = ph->caplen, wire = ph->len;

	k->c.frames++;
	if (k->dlt != DLT_EN10MB) {
		if (cap < (k->dlt == DLT_LINUX_SLL ? SLL_LEN : SLL2_LEN)) {
			k->c.skipped++;	/* not even a cooked header */
			return 0;
		}
		f = from_cooked(k, rec, ph->caplen, &cap, &wire);
		if (!f)
			return -ENOMEM;
	}
	check_frame(k, f, cap, wire);
	return 0;
}

int pcapcheck_run(struct pcapcheck *k, pcap_t *p)
{
	struct pcap_pkthdr *ph;
	const uint8_t *rec;
	int r;

	while ((r = pcap_next_ex(p, &ph, &rec)) == 1)
		if (pcapcheck_record(k, ph, rec))
			return -ENOMEM;
	return r;
}
