// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-pcap: check the RoCE v2 frames of a capture with roxe's own parser
 * and ICRC, one line per frame and a summary; see usage_text.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include "roxe/frame.h"

static const char usage_text[] =
"NAME\n"
"    roxe-pcap - check the RoCE v2 frames of a packet capture\n"
"\n"
"SYNOPSIS\n"
"    roxe-pcap verify [-q] FILE\n"
"    roxe-pcap -h | --help\n"
"\n"
"DESCRIPTION\n"
"    Reads FILE, a pcap or pcapng capture (\"-\" is standard input), and\n"
"    checks every RoCE v2 frame in it (UDP to port 4791, over IPv4 or IPv6,\n"
"    with up to two VLAN tags) with roxe's frame parser and ICRC: the\n"
"    headers must be consistent and the ICRC must match the one computed\n"
"    as RoCE v2 annex A17 says. Other frames are counted and skipped.\n"
"\n"
"    Link types: Ethernet (DLT_EN10MB), and the Linux cooked headers that\n"
"    \"tcpdump -i any\" writes (DLT_LINUX_SLL, DLT_LINUX_SLL2).\n"
"\n"
"    A frame cut short by the capture's snapshot length before the end of\n"
"    its ICRC cannot be checked: it is reported as truncated and counts as\n"
"    malformed. (Cutting only Ethernet padding or the FCS does no harm.)\n"
"\n"
"OPTIONS\n"
"    -q  print only the summary and the frames that failed\n"
"\n"
"OUTPUT\n"
"    One line per RoCE v2 frame, frame numbers counting every record of\n"
"    the capture from 1:\n"
"\n"
"      N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN icrc ok\n"
"      N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN icrc BAD (want 0xW got 0xG)\n"
"      N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN truncated (captured C of L bytes)\n"
"      N malformed VERDICT (L bytes)\n"
"\n"
"    SRC and DST are the GIDs: dotted quads for IPv4, IPv6 text in brackets\n"
"    otherwise; SPORT is the UDP source port (the flow's entropy), the\n"
"    destination port is always 4791. QPN is the destination QP, LEN the\n"
"    payload length without pad. \"want\" is the ICRC computed from the frame,\n"
"    \"got\" the one it carries; the ICRC goes on the wire least significant\n"
"    byte first (0x2a00fd82 is the bytes 82 fd 00 2a). VERDICT is the\n"
"    parser's reason for rejecting the frame: bad_ip_len, bad_udp_len,\n"
"    bad_version, bad_opcode, bad_hdr_len or bad_payload.\n"
"\n"
"    Last, one summary line:\n"
"\n"
"      FILE: F frames, R roce, K icrc ok, B icrc bad, M malformed, S non-roce skipped\n"
"\n"
"EXIT STATUS\n"
"    0   every RoCE v2 frame is well formed with a good ICRC (also when\n"
"        there are none)\n"
"    1   some RoCE v2 frame has a bad ICRC, is malformed or truncated\n"
"    2   usage error, or FILE is missing, not a capture, of a link type\n"
"        roxe-pcap does not read, or damaged\n"
"\n"
"EXAMPLES\n"
"    Capture RoCE v2 traffic on eth0, then check it:\n"
"\n"
"      tcpdump -i eth0 -s 0 -w roce.pcap udp port 4791\n"
"      roxe-pcap verify roce.pcap\n"
"\n"
"    Check as it is captured, on every interface:\n"
"\n"
"      tcpdump -i any -U -s 0 -w - udp port 4791 | roxe-pcap verify -q -\n";

struct counts {
	unsigned long frames;
	unsigned long roce;
	unsigned long icrc_ok;
	unsigned long icrc_bad;
	unsigned long malformed;
	unsigned long skipped;
};

/* Linux cooked headers (pcap-linktype(7)): where protocol and address sit. */
#define SLL_LEN		16
#define SLL_HALEN	4
#define SLL_ADDR	6
#define SLL_PROTO	14
#define SLL2_LEN	20
#define SLL2_PROTO	0
#define SLL2_HALEN	11
#define SLL2_ADDR	12

/*
 * An Ethernet frame for the parser from a cooked record of at least the
 * cooked header's length (NULL: out of memory): the protocol
 * becomes the EtherType, the link address (if 6 bytes) the source MAC, the
 * destination MAC is unknown (zero). The frame then counts as what it was
 * on the wire, 14 bytes of Ethernet header instead of the cooked one.
 */
static const uint8_t *from_cooked(int dlt, const uint8_t *rec, uint32_t caplen,
				  uint32_t *cap, uint32_t *wire, uint8_t **buf,
				  size_t *buf_len)
{
	uint32_t hdr = dlt == DLT_LINUX_SLL ? SLL_LEN : SLL2_LEN;
	uint32_t halen, proto_off, addr_off;
	uint8_t *f;

	if (dlt == DLT_LINUX_SLL) {
		halen = (uint32_t)rec[SLL_HALEN] << 8 | rec[SLL_HALEN + 1];
		proto_off = SLL_PROTO;
		addr_off = SLL_ADDR;
	} else {
		halen = rec[SLL2_HALEN];
		proto_off = SLL2_PROTO;
		addr_off = SLL2_ADDR;
	}
	if (*buf_len < caplen - hdr + 14) {
		free(*buf);
		*buf_len = caplen - hdr + 14;
		*buf = malloc(*buf_len);
		if (!*buf) {
			*buf_len = 0;
			return NULL;
		}
	}
	f = *buf;
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

/* "N SRC:SPORT -> DST OPCODE qp 0xQPN psn PSN len LEN " */
static void print_frame(unsigned long n, const uint8_t *f, const struct roxe_pkt *pkt)
{
	struct roxe_frame_addr a;
	struct roxe_bth bth;
	char src[INET6_ADDRSTRLEN + 16], dst[INET6_ADDRSTRLEN + 16];

	roxe_frame_addr_get(f, pkt, &a);
	memcpy(&bth, f + pkt->bth_off, sizeof(bth));
	gid_port(src, sizeof(src), a.sgid, a.sport);
	gid_port(dst, sizeof(dst), a.dgid, -1);
	printf("%lu %s -> %s %s qp 0x%06x psn %u len %u ", n, src, dst,
	       roxe_opcode_name(bth.opcode), roxe_bth_qpn(&bth),
	       roxe_bth_psn(&bth), pkt->payload_len);
}

/* Check one Ethernet frame of which cap bytes were captured out of wire. */
static void check_frame(unsigned long n, const uint8_t *f, uint32_t cap,
			uint32_t wire, bool quiet, struct counts *c)
{
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
		printf("%lu malformed %s (%u bytes)\n", n, roxe_verdict_name(v),
		       wire > cap ? wire : cap);
		return;
	}
	if (cap < pkt.frame_len) {
		/* Only the headers up to the BTH are sure to be there. */
		c->malformed++;
		print_frame(n, f, &pkt);
		printf("truncated (captured %u of %u bytes)\n", cap, wire);
		return;
	}
	want = roxe_icrc_compute(f, &pkt);
	got = roxe_icrc_stored(f, &pkt);
	if (want == got) {
		c->icrc_ok++;
		if (quiet)
			return;
		print_frame(n, f, &pkt);
		printf("icrc ok\n");
	} else {
		c->icrc_bad++;
		print_frame(n, f, &pkt);
		printf("icrc BAD (want 0x%08x got 0x%08x)\n", want, got);
	}
}

static int verify(const char *file, bool quiet)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *ph;
	const uint8_t *rec;
	struct counts c = { 0 };
	uint8_t *buf = NULL;
	size_t buf_len = 0;
	struct stat st;
	pcap_t *p;
	int dlt, r;

	if (strcmp(file, "-") && stat(file, &st)) {
		fprintf(stderr, "roxe-pcap: %s: %s\n", file, strerror(errno));
		return 2;
	}
	p = pcap_open_offline(file, err);
	if (!p) {
		fprintf(stderr, "roxe-pcap: %s: not a pcap or pcapng capture (%s)\n",
			file, err);
		return 2;
	}
	dlt = pcap_datalink(p);
	if (dlt != DLT_EN10MB && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2) {
		const char *name = pcap_datalink_val_to_name(dlt);

		fprintf(stderr, "roxe-pcap: %s: unsupported link type %s (%d): "
			"roxe-pcap reads Ethernet (EN10MB) and Linux cooked "
			"(LINUX_SLL, LINUX_SLL2) captures\n",
			file, name ? name : "unknown", dlt);
		pcap_close(p);
		return 2;
	}

	while ((r = pcap_next_ex(p, &ph, &rec)) == 1) {
		const uint8_t *f = rec;
		uint32_t cap = ph->caplen, wire = ph->len;

		c.frames++;
		if (dlt != DLT_EN10MB) {
			if (cap < (dlt == DLT_LINUX_SLL ? SLL_LEN : SLL2_LEN)) {
				c.skipped++;	/* not even a cooked header */
				continue;
			}
			f = from_cooked(dlt, rec, ph->caplen, &cap, &wire, &buf, &buf_len);
			if (!f) {
				fprintf(stderr, "roxe-pcap: out of memory\n");
				pcap_close(p);
				return 2;
			}
		}
		check_frame(c.frames, f, cap, wire, quiet, &c);
	}
	free(buf);
	if (r == PCAP_ERROR)
		fprintf(stderr, "roxe-pcap: %s: damaged after %lu frames: %s\n",
			file, c.frames, pcap_geterr(p));
	pcap_close(p);

	printf("%s: %lu frames, %lu roce, %lu icrc ok, %lu icrc bad, %lu malformed, "
	       "%lu non-roce skipped\n", file, c.frames, c.roce, c.icrc_ok,
	       c.icrc_bad, c.malformed, c.skipped);
	if (fflush(stdout)) {
		perror("roxe-pcap: stdout");
		return 2;
	}
	if (r == PCAP_ERROR)
		return 2;
	return c.icrc_bad || c.malformed ? 1 : 0;
}

static int usage_error(const char *why)
{
	fprintf(stderr, "roxe-pcap: %s\n"
		"usage: roxe-pcap verify [-q] FILE   (roxe-pcap --help for more)\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false;
	int o;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc < 2)
		return usage_error("no command");
	if (strcmp(argv[1], "verify"))
		return usage_error("unknown command (the command is: verify)");

	optind = 2;
	while ((o = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'q':
			quiet = true;
			break;
		default:
			return usage_error("unknown option");
		}
	}
	if (optind != argc - 1)
		return usage_error(optind == argc ? "no capture file" : "one capture file only");
	return verify(argv[optind], quiet);
}
