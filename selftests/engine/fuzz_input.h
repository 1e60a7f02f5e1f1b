/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The engine fuzz targets' common part: a property check that aborts (the
 * fuzzer reports it as a crash) and the input read a byte at a time.
 */
#ifndef ROXE_TEST_FUZZ_INPUT_H
#define ROXE_TEST_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
		abort();						\
	}								\
} while (0)

/* The input, consumed a byte at a time; zeros once it runs out. */
struct input {
	const uint8_t *p;
	size_t left;
};

static inline uint8_t u8(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static inline uint32_t u32(struct input *in)
{
	return u8(in) | (uint32_t)u8(in) << 8 | (uint32_t)u8(in) << 16 | (uint32_t)u8(in) << 24;
}

#endif /* ROXE_TEST_FUZZ_INPUT_H */
