// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for roxe-pcap's reader (tools/lib/pcapcheck.c): each
 * input is a capture file, pcap or pcapng, read from memory by libpcap as
 * roxe-pcap reads a file; each record goes to the reader in a heap copy of
 * exactly its captured length, so that ASan sees a read past the record
 * (libpcap's own buffer is larger: a read past a record would land in it
 * unseen). Both output modes are exercised: an input's last byte chooses.
 * Besides what ASan and UBSan catch, a violation abort()s, which libFuzzer
 * reports like a crash:
 *   - every record is counted once: as RoCE v2 or as skipped;
 *   - every RoCE v2 frame once: ICRC good, ICRC bad or malformed;
 *   - a good capture reads to its end, a damaged one stops with an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pcap/pcap.h>
#include "pcapcheck.h"

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_pcap: %s:%d: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *ph;
	const uint8_t *rec;
	struct pcapcheck k;
	pcap_t *p;
	FILE *in;
	int r;

	if (!null)
		null = fopen("/dev/null", "w");
	CHECK(null);
	if (!size)
		return 0;	/* fmemopen takes no empty buffer */
	in = fmemopen((void *)data, size, "rb");
	CHECK(in);
	p = pcap_fopen_offline(in, err);
	if (!p) {
		fclose(in);	/* not a capture: libpcap leaves it to us */
		return 0;
	}
	if (!pcapcheck_dlt_ok(pcap_datalink(p))) {
		pcap_close(p);
		return 0;
	}
	pcapcheck_init(&k, pcap_datalink(p), null, data[size - 1] & 1);
	while ((r = pcap_next_ex(p, &ph, &rec)) == 1) {
		uint8_t *copy = malloc(ph->caplen ? ph->caplen : 1);

		CHECK(copy);
		memcpy(copy, rec, ph->caplen);
		CHECK(pcapcheck_record(&k, ph, copy) == 0);
		free(copy);
	}
	CHECK(r == PCAP_ERROR_BREAK || r == PCAP_ERROR);
	CHECK(k.c.frames == k.c.roce + k.c.skipped);
	CHECK(k.c.roce == k.c.icrc_ok + k.c.icrc_bad + k.c.malformed);
	pcapcheck_fini(&k);
	pcap_close(p);
	return 0;
}
