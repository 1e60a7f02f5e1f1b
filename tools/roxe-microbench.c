// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * roxe-microbench: the per-frame hot paths of libroxe, one thread, warm
 * caches: ICRC over whole frames, the parser, the builder (headers, payload
 * copy, ICRC). Reports the best of several timed runs.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <libdeflate.h>
#include "roxe/cli.h"
#include "roxe/env.h"
#include "roxe/frame.h"
#include "roxe/version.h"
#include "json.h"

static const char usage_text[] =
"usage: roxe-microbench [--json] [--time MS]\n"
"       roxe-microbench -h | --help | -V | --version\n"
"\n"
"Times libroxe's per-frame hot paths on one core: roxe_icrc_compute() over\n"
"whole frames of about 64, 256, 1024, 4096 and 9000 bytes, roxe_parse()\n"
"(IPv4; IPv6 with a VLAN tag), and roxe_frame_build() (headers, payload\n"
"copy, ICRC) for the same sizes. Frames are IPv4 RC SEND ONLY unless said;\n"
"\"frame\" is the real length, Ethernet header to ICRC (a RoCE v2 frame is\n"
"2 bytes off a multiple of 4, so the largest not above the size asked).\n"
"Each case runs for about MS milliseconds (default 200) in 5 rounds; the\n"
"best round counts. GB/s is frame bytes per nanosecond, for the cases\n"
"that read the whole frame (not the parser: it reads headers only).\n"
"\n"
"      --json       one JSON object instead of the table\n"
"      --time MS    time per case (0.001 to 60000)\n"
"  -h, --help       this text\n"
"  -V, --version    print roxe-microbench's version and exit\n"
"\n"
"Exit status: 0, 1 when a case cannot run, 2 on a usage error.\n";

static const char short_usage[] = "Usage: roxe-microbench [--json] [--time MS]\n";

#define ROUNDS		5
#define MAX_FRAME	9100

enum kind { ICRC, PARSE, BUILD };

struct result {
	const char *name;
	enum kind kind;
	unsigned int target;	/* the size asked for */
	unsigned int bytes;	/* the frame's real length */
	double ns;		/* per frame, best round */
};

struct bench {
	uint8_t frame[MAX_FRAME];
	uint8_t payload[MAX_FRAME];
	uint8_t out[MAX_FRAME];
	struct roxe_frame_addr addr;
	struct roxe_frame_hdr hdr;
	struct roxe_pkt pkt;
	uint32_t payload_len;
	int len;
};

static volatile uint32_t sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* An RC SEND ONLY frame of at most size bytes. */
static int setup(struct bench *b, unsigned int size, bool v6, bool vlan)
{
	unsigned int hdrs = 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + 8 + 12 + 4;

	memset(&b->addr, 0, sizeof(b->addr));
	memset(&b->hdr, 0, sizeof(b->hdr));
	memcpy(b->addr.smac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(b->addr.dmac, "\x02\x00\x00\x00\x00\x02", 6);
	b->addr.vlan = vlan;
	b->addr.vlan_tci = 100;
	if (v6) {
		inet_pton(AF_INET6, "fd00::1", b->addr.sgid);
		inet_pton(AF_INET6, "fd00::2", b->addr.dgid);
	} else {
		roxe_gid_from_v4(b->addr.sgid, htonl(0x0a000001));
		roxe_gid_from_v4(b->addr.dgid, htonl(0x0a000002));
	}
	b->addr.sport = roxe_flow_sport(0x11, 0x12);
	b->hdr.opcode = ROXE_OP_RC_SEND_ONLY;
	b->hdr.pkey = ROXE_DEFAULT_PKEY;
	b->hdr.dqpn = 0x12;
	b->hdr.psn = 0x123456;
	b->payload_len = (size - hdrs) & ~3u;
	for (unsigned int i = 0; i < b->payload_len; i++)
		b->payload[i] = (uint8_t)(i * 7);
	b->len = roxe_frame_build(b->frame, sizeof(b->frame), &b->addr, &b->hdr,
				  b->payload, b->payload_len, &b->pkt);
	return b->len;
}

/* n runs of the case; the asm statements keep the compiler from hoisting
 * the work out of the loop or dropping it. */
static void run(struct bench *b, enum kind kind, long n)
{
	struct roxe_pkt pkt;
	uint32_t acc = 0;

	for (long i = 0; i < n; i++) {
		switch (kind) {
		case ICRC:
			acc += roxe_icrc_compute(b->frame, &b->pkt);
			break;
		case PARSE:
			__asm__ volatile("" ::: "memory");
			acc += (uint32_t)roxe_parse(b->frame, b->frame + b->len,
						    (uint32_t)b->len, &pkt);
			acc += pkt.payload_off;
			break;
		case BUILD:
			acc += (uint32_t)roxe_frame_build(b->out, sizeof(b->out), &b->addr,
							  &b->hdr, b->payload,
							  b->payload_len, &pkt);
			break;
		}
		__asm__ volatile("" : "+r"(acc));
	}
	sink = acc;
}

static void measure(struct bench *b, struct result *r, double budget_ns)
{
	long n = 1;
	double t;

	/* Calibrate: a round should take budget / ROUNDS. */
	for (;;) {
		t = now_ns();
		run(b, r->kind, n);
		t = now_ns() - t;
		if (t > budget_ns / ROUNDS / 4 || n > (1L << 40))
			break;
		n *= 2;
	}
	n = (long)(n * (budget_ns / ROUNDS) / (t > 1 ? t : 1)) + 1;
	r->ns = 1e300;
	for (int i = 0; i < ROUNDS; i++) {
		t = now_ns();
		run(b, r->kind, n);
		t = (now_ns() - t) / n;
		if (t < r->ns)
			r->ns = t;
	}
}

/* The value of "model name", and whether "flags" lists each of names[]. */
static void cpu_info(char *model, size_t len, const char *const names[], bool has[], int n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool seen_flags = false;

	snprintf(model, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = '\0';
		if (!strncmp(line, "model name", 10))
			snprintf(model, len, "%s", v);
		if (strncmp(line, "flags", 5) || seen_flags)
			continue;
		seen_flags = true;
		for (int i = 0; i < n; i++) {
			size_t l = strlen(names[i]);

			for (char *p = v; (p = strstr(p, names[i])); p += l)
				if ((p == v || p[-1] == ' ') && (p[l] == ' ' || !p[l]))
					has[i] = true;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static const unsigned int sizes[] = { 64, 256, 1024, 4096, 9000 };
	static const char *const flag_names[] = { "pclmulqdq", "vpclmulqdq", "avx2", "avx512f" };
	enum { O_JSON = 256, O_TIME };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "time", required_argument, NULL, O_TIME },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct result res[16];
	bool has[4] = { false };
	char model[256];
	struct bench *b;
	double budget_ms = 200;
	bool json = false;
	int nres = 0, o, err = 0;

	tool_cli_init("roxe-microbench", short_usage);
	while (!err && (o = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (o) {
		case O_JSON:
			json = true;
			break;
		case O_TIME:
			err = tool_real("--time", optarg, 0.001, 60000, &budget_ms);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			tool_version_exit("roxe-microbench");
		default:
			return tool_usage_error(NULL);
		}
	}
	if (err)
		return err;
	if (optind != argc)
		return tool_usage_error("unexpected argument '%s'", argv[optind]);
	roxe_env_icrc("roxe-microbench");
	b = calloc(1, sizeof(*b));
	if (!b) {
		perror("roxe-microbench");
		return 1;
	}

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		res[nres++] = (struct result){ "icrc_compute", ICRC, sizes[i], 0, 0 };
	res[nres++] = (struct result){ "parse", PARSE, 1024, 0, 0 };
	res[nres++] = (struct result){ "parse_ipv6_vlan", PARSE, 1024, 0, 0 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		res[nres++] = (struct result){ "frame_build", BUILD, sizes[i], 0, 0 };

	for (int i = 0; i < nres; i++) {
		bool v6vlan = !strcmp(res[i].name, "parse_ipv6_vlan");
		int len = setup(b, res[i].target, v6vlan, v6vlan);

		if (len < 0) {
			fprintf(stderr, "roxe-microbench: cannot build a %u-byte frame\n",
				res[i].target);
			return 1;
		}
		res[i].bytes = (unsigned int)len;
		measure(b, &res[i], budget_ms * 1e6);
	}
	cpu_info(model, sizeof(model), flag_names, has, 4);

	if (json) {
		printf("{\"cpu\": ");
		tool_json_str(stdout, model);	/* /proc/cpuinfo's text, as it is */
		printf(", \"pclmulqdq\": %s, \"vpclmulqdq\": %s, \"avx2\": %s, \"avx512f\": %s, "
		       "\"libdeflate\": ", has[0] ? "true" : "false", has[1] ? "true" : "false",
		       has[2] ? "true" : "false", has[3] ? "true" : "false");
		tool_json_str(stdout, LIBDEFLATE_VERSION_STRING);
		printf(", \"icrc_impl\": ");
		tool_json_str(stdout, roxe_icrc_impl());
		printf(", \"time_ms\": ");
		tool_json_num(stdout, "%g", budget_ms);
		printf(", \"rounds\": %d, \"results\": [", ROUNDS);
		for (int i = 0; i < nres; i++) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			tool_json_str(stdout, res[i].name);
			printf(", \"size\": %u, \"frame_bytes\": %u, \"ns_per_frame\": ",
			       res[i].target, res[i].bytes);
			tool_json_num(stdout, "%.2f", res[i].ns);
			printf(", \"mframes_per_s\": ");
			tool_json_num(stdout, "%.3f", 1e3 / res[i].ns);
			printf(", \"gb_per_s\": ");
			/* null for the parser: it reads headers only */
			tool_json_num(stdout, "%.3f", res[i].kind != PARSE ? res[i].bytes / res[i].ns : NAN);
			printf("}");
		}
		printf("\n]}\n");
	} else {
		printf("cpu: %s\n", model);
		printf("ICRC's CRC-32: %s\n", roxe_icrc_impl());
		printf("pclmulqdq: %s (vpclmulqdq %s, avx2 %s, avx512f %s); libdeflate %s\n",
		       has[0] ? "yes" : "no", has[1] ? "yes" : "no",
		       has[2] ? "yes" : "no", has[3] ? "yes" : "no", LIBDEFLATE_VERSION_STRING);
		printf("best of %d rounds, %g ms per case\n\n", ROUNDS, budget_ms);
		printf("%-16s %5s %6s %10s %10s %8s\n", "case", "size", "frame",
		       "ns/frame", "Mframes/s", "GB/s");
		for (int i = 0; i < nres; i++) {
			char gbs[32] = "-";

			if (res[i].kind != PARSE)
				snprintf(gbs, sizeof(gbs), "%.2f", res[i].bytes / res[i].ns);
			printf("%-16s %5u %6u %10.1f %10.2f %8s\n", res[i].name,
			       res[i].target, res[i].bytes, res[i].ns, 1e3 / res[i].ns, gbs);
		}
	}
	free(b);
	return 0;
}
