// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-pcap: check the RoCE v2 frames of a capture with roxe's own parser
 * and ICRC, one line per frame and a summary; see usage_text. The reader
 * is tools/lib/pcapcheck.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pcap/pcap.h>
#include "roxe/cli.h"
#include "roxe/version.h"
#include "json.h"
#include "pcapcheck.h"

static const char usage_text[] =
"NAME\n"
"    roxe-pcap - check the RoCE v2 frames of a packet capture\n"
"\n"
"SYNOPSIS\n"
"    roxe-pcap verify [-q] [--json] FILE\n"
"    roxe-pcap -h | --help\n"
"    roxe-pcap -V | --version\n"
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
"    -q, --quiet    print only the summary and the frames that failed\n"
"    --json         print one JSON object instead (below)\n"
"    -h, --help     this text\n"
"    -V, --version  print roxe-pcap's version and exit\n"
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
"    With --json, one object: file, checked (an array of one object per\n"
"    frame line above: frame, result (\"icrc ok\", \"icrc bad\", \"truncated\",\n"
"    \"malformed\"), src, sport, dst, opcode, qpn, psn, len; icrc_want and\n"
"    icrc_got for a bad ICRC, captured and bytes for a truncated frame,\n"
"    reason and bytes for a malformed one), then the summary's counts:\n"
"    frames, roce, icrc_ok, icrc_bad, malformed, skipped; and damaged (true\n"
"    when the capture ends in a damaged record). Messages go to stderr.\n"
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

static const char short_usage[] =
"Usage: roxe-pcap verify [-q] [--json] FILE\n";

static int verify(const char *file, bool quiet, bool json)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcapcheck k;
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
	if (!pcapcheck_dlt_ok(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);

		fprintf(stderr, "roxe-pcap: %s: unsupported link type %s (%d): "
			"roxe-pcap reads Ethernet (EN10MB) and Linux cooked "
			"(LINUX_SLL, LINUX_SLL2) captures\n",
			file, name ? name : "unknown", dlt);
		pcap_close(p);
		return 2;
	}

	pcapcheck_init(&k, dlt, stdout, quiet);
	k.json = json;
	if (json) {
		printf("{\"file\": ");
		tool_json_str(stdout, file);
		printf(", \"checked\": [");
	}
	r = pcapcheck_run(&k, p);
	pcapcheck_fini(&k);
	if (r == -ENOMEM) {
		fprintf(stderr, "roxe-pcap: out of memory\n");
		pcap_close(p);
		return 2;
	}
	if (r == PCAP_ERROR)
		fprintf(stderr, "roxe-pcap: %s: damaged after %lu frames: %s\n",
			file, k.c.frames, pcap_geterr(p));
	pcap_close(p);

	if (json)
		printf("], \"frames\": %lu, \"roce\": %lu, \"icrc_ok\": %lu, \"icrc_bad\": %lu, "
		       "\"malformed\": %lu, \"skipped\": %lu, \"damaged\": %s}\n", k.c.frames,
		       k.c.roce, k.c.icrc_ok, k.c.icrc_bad, k.c.malformed, k.c.skipped,
		       r == PCAP_ERROR ? "true" : "false");
	else
		printf("%s: %lu frames, %lu roce, %lu icrc ok, %lu icrc bad, %lu malformed, "
		       "%lu non-roce skipped\n", file, k.c.frames, k.c.roce, k.c.icrc_ok,
		       k.c.icrc_bad, k.c.malformed, k.c.skipped);
	if (fflush(stdout)) {
		perror("roxe-pcap: stdout");
		return 2;
	}
	if (r == PCAP_ERROR)
		return 2;
	return k.c.icrc_bad || k.c.malformed ? 1 : 0;
}

int main(int argc, char **argv)
{
	enum { O_JSON = 256 };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, O_JSON },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false, json = false;
	int o;

	tool_cli_init("roxe-pcap", short_usage);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")))
		tool_version_exit("roxe-pcap");
	if (argc < 2)
		return tool_usage_error("no command");
	if (strcmp(argv[1], "verify"))
		return tool_usage_error("unknown command '%s' (the command is: verify)", argv[1]);

	optind = 2;
	while ((o = getopt_long(argc, argv, "hqV", opts, NULL)) != -1) {
		switch (o) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'q':
			quiet = true;
			break;
		case O_JSON:
			json = true;
			break;
		case 'V':
			tool_version_exit("roxe-pcap");
		default:
			return tool_usage_error(NULL);
		}
	}
	if (optind != argc - 1)
		return tool_usage_error(optind == argc ? "no capture file" : "one capture file only");
	return verify(argv[optind], quiet, json);
}
