// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames for checks made outside C, and roxe's verdict on frames made
 * outside C.
 *
 *   frame_dump hex          frames from roxe's builder, "LABEL HEX" a line
 *   frame_dump seeds DIR    the same frames, one file each (a fuzz corpus)
 *   frame_dump check        read "LABEL HEX" lines, print for each
 *                           "LABEL VERDICT STORED COMPUTED" (ICRCs as
 *                           little-endian words, "-" unless parsed ok)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "roxe/frame.h"
#include "frame_sample.h"

#define MAX_FRAME 10000

typedef void (*emit_fn)(const char *label, const uint8_t *f, size_t len, void *arg);

/* Insert n bytes of IPv4 options (NOPs, end of list) and reseal. */
static size_t add_ipv4_options(uint8_t *f, size_t len, uint32_t n)
{
	struct roxe_pkt pkt;
	uint32_t l3, tot;

	if (roxe_parse(f, f + len, (uint32_t)len, &pkt) != ROXE_PKT_OK || pkt.ip_version != 4)
		return 0;
	l3 = pkt.l3_off;
	memmove(f + l3 + 20 + n, f + l3 + 20, len - l3 - 20);
	memset(f + l3 + 20, 1, n);
	f[l3 + 20 + n - 1] = 0;
	f[l3] = (uint8_t)(0x40 | (20 + n) / 4);
	tot = (uint32_t)(f[l3 + 2] << 8 | f[l3 + 3]) + n;
	f[l3 + 2] = (uint8_t)(tot >> 8);
	f[l3 + 3] = (uint8_t)tot;
	len += n;
	if (roxe_parse(f, f + len, (uint32_t)len, &pkt) != ROXE_PKT_OK)
		return 0;
	roxe_frame_seal(f, &pkt);
	return len;
}

/* Every opcode over IPv4 and IPv6, tagged or not, with variant fields set
 * at random (TOS, TTL, traffic class, flow label, FECN, BECN), then IPv4
 * frames with options. */
static int each_frame(emit_fn emit, void *arg)
{
	static const uint32_t lens[] = { 0, 1, 3, 4, 61 };
	static uint8_t f[MAX_FRAME];
	uint8_t payload[64];
	uint64_t rng = 0x5eed;
	char label[96];
	int n = 0;

	for (int fam = 0; fam < 4; fam++) {
		bool v6 = fam & 1, vlan = fam & 2;

		for (size_t i = 0; i < SAMPLE_NR_OPCODES; i++) {
			uint8_t op = sample_opcodes[i];

			for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
				uint32_t len = sample_fit_len(op, lens[j]);
				struct roxe_frame_addr a;
				struct roxe_frame_hdr h;
				struct roxe_pkt pkt;
				int flen;

				if (len != lens[j] && j)
					continue;
				sample_addr(&rng, v6, vlan, &a);
				sample_hdr(&rng, op, &h);
				sample_bytes(&rng, payload, len);
				flen = roxe_frame_build(f, sizeof(f), &a, &h, payload, len, &pkt);
				if (flen < 0)
					return flen;
				snprintf(label, sizeof(label), "%s/%s%s/len%u", roxe_opcode_name(op),
					 v6 ? "ipv6" : "ipv4", vlan ? "-vlan" : "", len);
				emit(label, f, (size_t)flen, arg);
				n++;
				if (v6 || j != 4)
					continue;
				for (uint32_t opt = 4; opt <= 40; opt += 36) {
					size_t olen;

					flen = roxe_frame_build(f, sizeof(f), &a, &h, payload, len, &pkt);
					olen = add_ipv4_options(f, (size_t)flen, opt);
					if (!olen)
						return -EINVAL;
					snprintf(label, sizeof(label), "%s/ipv4%s-opt%u/len%u",
						 roxe_opcode_name(op), vlan ? "-vlan" : "", opt, len);
					emit(label, f, olen, arg);
					n++;
				}
			}
		}
	}
	return n;
}

static void emit_hex(const char *label, const uint8_t *f, size_t len, void *arg)
{
	(void)arg;
	printf("%s ", label);
	for (size_t i = 0; i < len; i++)
		printf("%02x", f[i]);
	putchar('\n');
}

static void emit_file(const char *label, const uint8_t *f, size_t len, void *arg)
{
	static unsigned int seq;
	const char *dir = arg;
	char path[4096];
	FILE *out;

	(void)label;
	snprintf(path, sizeof(path), "%s/seed-%04u", dir, seq++);
	out = fopen(path, "wb");
	if (!out || fwrite(f, 1, len, out) != len || fclose(out)) {
		perror(path);
		exit(1);
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int check(void)
{
	static char line[2 * MAX_FRAME + 256];
	static uint8_t f[MAX_FRAME];

	while (fgets(line, sizeof(line), stdin)) {
		char *hex = strchr(line, ' ');
		struct roxe_pkt pkt;
		size_t len = 0;
		int v;

		if (!hex) {
			fprintf(stderr, "frame_dump: no hex after the label\n");
			return 1;
		}
		*hex++ = '\0';
		while (hexval(hex[0]) >= 0 && hexval(hex[1]) >= 0 && len < sizeof(f)) {
			f[len++] = (uint8_t)(hexval(hex[0]) << 4 | hexval(hex[1]));
			hex += 2;
		}
		v = roxe_parse(f, f + len, (uint32_t)len, &pkt);
		if (v == ROXE_PKT_OK)
			printf("%s %s %08x %08x\n", line, roxe_verdict_name(v),
			       roxe_icrc_stored(f, &pkt), roxe_icrc_compute(f, &pkt));
		else
			printf("%s %s - -\n", line, roxe_verdict_name(v));
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n;

	if (argc == 2 && !strcmp(argv[1], "hex"))
		n = each_frame(emit_hex, NULL);
	else if (argc == 3 && !strcmp(argv[1], "seeds"))
		n = each_frame(emit_file, argv[2]);
	else if (argc == 2 && !strcmp(argv[1], "check"))
		return check();
	else {
		fprintf(stderr, "usage: frame_dump hex | seeds DIR | check\n");
		return 2;
	}
	if (n < 0) {
		fprintf(stderr, "frame_dump: the builder failed: %s\n", strerror(-n));
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
