/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * roxe-pcap's reader: the records of a capture, Ethernet or Linux cooked,
 * through roxe's frame parser and ICRC check, one line per RoCE v2 frame
 * (or, with json set after init, one JSON object: the caller writes the
 * array around them).
 * Apart from the tool so that a fuzz target (selftests/wire/fuzz_pcap.c)
 * can feed it captures from memory and records one at a time.
 */
#ifndef ROXE_TOOLS_PCAPCHECK_H
#define ROXE_TOOLS_PCAPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <pcap/pcap.h>

struct pcapcheck_counts {
	unsigned long frames;
	unsigned long roce;
	unsigned long icrc_ok;
	unsigned long icrc_bad;
	unsigned long malformed;
	unsigned long skipped;
};

struct pcapcheck {
	int			dlt;
	FILE			*out;
	bool			quiet;	/* print only the frames that failed */
	bool			json;	/* each frame a JSON object, a comma between */
	unsigned long		shown;	/* frames printed */
	struct pcapcheck_counts	c;
	uint8_t			*buf;	/* a cooked record made Ethernet */
	size_t			buf_len;
};

/* Whether roxe-pcap reads captures of link type dlt (DLT_*). */
bool pcapcheck_dlt_ok(int dlt);

void pcapcheck_init(struct pcapcheck *k, int dlt, FILE *out, bool quiet);
void pcapcheck_fini(struct pcapcheck *k);

/* One record of caplen bytes at rec, counted and printed. 0, or -ENOMEM. */
int pcapcheck_record(struct pcapcheck *k, const struct pcap_pkthdr *ph, const uint8_t *rec);

/* Every record left in p: pcap_next_ex()'s last result, PCAP_ERROR_BREAK at
 * the capture's end or PCAP_ERROR when it is damaged; or -ENOMEM. */
int pcapcheck_run(struct pcapcheck *k, pcap_t *p);

#endif /* ROXE_TOOLS_PCAPCHECK_H */
