// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --verify: every message carries bytes both ends can compute from (QP
 * index, message number, byte offset) alone, so the receiver checks each
 * byte without any reference copy crossing the wire. The message number is
 * mixed into every word: a stale, duplicated or misplaced message fails.
 */
#include <stdio.h>
#include <string.h>
#include "perf.h"

/* 64-bit word j of a message (splitmix64 of seed and j). */
static inline uint64_t pattern_word(uint64_t seed, uint64_t j)
{
	uint64_t x = seed + (j + 1) * 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t pattern_seed(unsigned qp, uint64_t msg)
{
	return ((uint64_t)qp << 48) ^ (msg * 0x100000001b3ull) ^ 0x726f7865ull;
}

/* Byte x of the stream (seed): byte x & 7 of word x >> 3. */
static inline uint8_t pattern_byte(uint64_t seed, uint64_t x)
{
	return (uint8_t)(pattern_word(seed, x >> 3) >> ((x & 7) * 8));
}

void perf_pattern_fill_at(uint8_t *p, uint32_t len, unsigned qp, uint64_t msg, uint64_t off)
{
	uint64_t seed = pattern_seed(qp, msg), w;
	uint32_t k = 0;

	/* Head up to a word boundary, whole words, then the tail. */
	for (; k < len && ((off + k) & 7); k++)
		p[k] = pattern_byte(seed, off + k);
	for (; k + 8 <= len; k += 8) {
		w = pattern_word(seed, (off + k) >> 3);
		memcpy(p + k, &w, 8);
	}
	for (; k < len; k++)
		p[k] = pattern_byte(seed, off + k);
}

void perf_pattern_fill(uint8_t *p, uint32_t len, unsigned qp, uint64_t msg)
{
	perf_pattern_fill_at(p, len, qp, msg, 0);
}

int perf_pattern_check_at(const uint8_t *p, uint32_t len, unsigned qp, uint64_t msg,
			  uint64_t off, const char *what)
{
	uint64_t seed = pattern_seed(qp, msg);
	uint32_t k = 0;

	if (!(off & 7))		/* the common case: compare whole words */
		for (; k + 8 <= len; k += 8) {
			uint64_t w = pattern_word(seed, (off + k) >> 3);

			if (memcmp(p + k, &w, 8))
				break;
		}
	for (; k < len; k++) {
		uint8_t want = pattern_byte(seed, off + k);

		if (p[k] == want)
			continue;
		if (what)
			fprintf(stderr, "verify: %s: QP %u message %llu: byte %u of %u is 0x%02x, "
				"expected 0x%02x\n", what, qp, (unsigned long long)msg, k, len, p[k],
				want);
		return 1;
	}
	return 0;
}

int perf_pattern_check(const uint8_t *p, uint32_t len, unsigned qp, uint64_t msg,
		       const char *what)
{
	return perf_pattern_check_at(p, len, qp, msg, 0, what);
}
