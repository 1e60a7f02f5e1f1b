// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ICRC of RoCE v2 frames (IBA annex A17.3.3): CRC-32 (the Ethernet one) over
 *   8 bytes of 0xff standing for the absent LRH,
 *   the IP header with its variant fields set to all ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 *      hop limit),
 *   the UDP header with its checksum set to all ones,
 *   the BTH with byte 4 (FECN, BECN, resv6) set to all ones,
 *   then the extension headers, payload and pad as they are;
 * stored after the pad, least significant byte first.
 *
 * FLUSH is the exception, as Linux's rxe (6.2 on) computes it: its opcode
 * table gives FLUSH no payload offset, so its ICRC goes on over the BTH,
 * FETH and RETH once more, as they are, as if they were payload. roxe
 * sends that ICRC, the one rxe checks, and takes a FLUSH with either.
 *
 * The CRC itself is libdeflate's (PCLMULQDQ-folded where the CPU has it);
 * where the CPU has VPCLMULQDQ and AVX2, frames of 512 bytes and more fold
 * 128 bytes a step in four 256-bit registers first (Debian 12's libdeflate,
 * 1.14, folds 64 bytes a step in 128-bit ones: the ICRC of a 4 KiB frame
 * was the largest cost of the transport's own per frame, bench-budget.sh).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "roxe/frame.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HAVE_VPCLMUL_CRC 1

/* Folding constants of the reflected CRC-32 (P = 0x104c11db7), as in the
 * PCLMULQDQ CRC paper (Gopal et al.) and Linux's crc32-pclmul_asm.S: for a
 * fold over D bits, lo = reflect32(x^(D+32) mod P) << 1 and hi =
 * reflect32(x^(D-32) mod P) << 1 (D = 128 gives Linux's R3 and R4). */
#define K1024_LO 0x1e88ef372ULL
#define K1024_HI 0x14a7fe880ULL
#define K128_LO 0x1751997d0ULL
#define K128_HI 0x0ccaa009eULL

__attribute__((target("avx2,pclmul,vpclmulqdq")))
static inline __m256i fold256(__m256i x, __m256i k, const uint8_t *next)
{
	__m256i lo = _mm256_clmulepi64_epi128(x, k, 0x00);
	__m256i hi = _mm256_clmulepi64_epi128(x, k, 0x11);

	return _mm256_xor_si256(_mm256_xor_si256(lo, hi),
				_mm256_loadu_si256((const __m256i *)next));
}

__attribute__((target("avx2,pclmul,vpclmulqdq")))
static inline __m128i fold128(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/* crc32(crc, p, len) for len >= 128: the message with ~crc XORed into its
 * first 4 bytes has a raw (uninverted, zero-seeded) CRC equal to crc32's
 * inverse; folding keeps that raw CRC, so the folded 16 bytes followed by
 * the unfolded tail go through libdeflate the same way back. */
__attribute__((target("avx2,pclmul,vpclmulqdq")))
static uint32_t crc32_vpclmul(uint32_t crc, const uint8_t *p, size_t len)
{
	const __m256i k1024 = _mm256_set_epi64x(K1024_HI, K1024_LO, K1024_HI, K1024_LO);
	const __m128i k128 = _mm_set_epi64x(K128_HI, K128_LO);
	__m256i y0 = _mm256_loadu_si256((const __m256i *)p);
	__m256i y1 = _mm256_loadu_si256((const __m256i *)(p + 32));
	__m256i y2 = _mm256_loadu_si256((const __m256i *)(p + 64));
	__m256i y3 = _mm256_loadu_si256((const __m256i *)(p + 96));
	uint8_t tail[16 + 128];
	__m128i x;

	y0 = _mm256_xor_si256(y0, _mm256_set_epi32(0, 0, 0, 0, 0, 0, 0, (int)~crc));
	for (p += 128, len -= 128; len >= 128; p += 128, len -= 128) {
		y0 = fold256(y0, k1024, p);
		y1 = fold256(y1, k1024, p + 32);
		y2 = fold256(y2, k1024, p + 64);
		y3 = fold256(y3, k1024, p + 96);
	}
	/* the eight 128-bit lanes, in message order, into one */
	x = _mm256_castsi256_si128(y0);
	x = fold128(x, k128, _mm256_extracti128_si256(y0, 1));
	x = fold128(x, k128, _mm256_castsi256_si128(y1));
	x = fold128(x, k128, _mm256_extracti128_si256(y1, 1));
	x = fold128(x, k128, _mm256_castsi256_si128(y2));
	x = fold128(x, k128, _mm256_extracti128_si256(y2, 1));
	x = fold128(x, k128, _mm256_castsi256_si128(y3));
	x = fold128(x, k128, _mm256_extracti128_si256(y3, 1));
	x = _mm_xor_si128(x, _mm_set_epi32(0, 0, 0, -1));
	_mm_storeu_si128((__m128i *)tail, x);
	memcpy(tail + 16, p, len);
	return libdeflate_crc32(0, tail, 16 + len);
}

static int vpclmul_ok = -1;

static bool use_vpclmul(void)
{
	int ok = __atomic_load_n(&vpclmul_ok, __ATOMIC_RELAXED);

	if (ok < 0) {
		__builtin_cpu_init();
		ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
		     __builtin_cpu_supports("vpclmulqdq") && !getenv("ROXE_ICRC_GENERIC");
		__atomic_store_n(&vpclmul_ok, ok, __ATOMIC_RELAXED);
	}
	return ok;
}
#endif

/* Below this, libdeflate's own loop is as fast (headers, ACKs, small
 * payloads): measured crossover about 400 bytes. */
#define VPCLMUL_MIN 512

static uint32_t icrc_crc32(uint32_t crc, const void *data, size_t len)
{
#ifdef HAVE_VPCLMUL_CRC
	if (len >= VPCLMUL_MIN && use_vpclmul())
		return crc32_vpclmul(crc, data, len);
#endif
	return libdeflate_crc32(crc, data, len);
}

static const uint8_t lrh_ones[ROXE_ICRC_LRH_LEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

uint32_t roxe_icrc_update(uint32_t crc, const void *data, size_t len)
{
	return icrc_crc32(crc, data, len);
}

uint32_t roxe_icrc_begin(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	/* IP header (options included) + UDP + BTH, masked in a copy. */
	uint8_t hdr[60 + 8 + ROXE_BTH_LEN];
	size_t ip_len = pkt->l4_off - pkt->l3_off;
	size_t len = ip_len + 8 + ROXE_BTH_LEN;
	uint32_t crc;

	memcpy(hdr, f + pkt->l3_off, len);
	if (pkt->ip_version == 4) {
		hdr[1] = 0xff;			/* TOS */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = hdr[11] = 0xff;	/* header checksum */
	} else {
		hdr[0] |= 0x0f;			/* traffic class, high nibble */
		hdr[1] = hdr[2] = hdr[3] = 0xff; /* traffic class low nibble, flow label */
		hdr[7] = 0xff;			/* hop limit */
	}
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff;	/* UDP checksum */
	hdr[ip_len + 8 + ROXE_BTH_VARIANT_OFF] = 0xff;	/* FECN, BECN, resv6 */

	crc = icrc_crc32(0, lrh_ones, sizeof(lrh_ones));
	crc = icrc_crc32(crc, hdr, len);
	/* Extension headers follow the BTH unmasked. */
	return icrc_crc32(crc, f + pkt->bth_off + ROXE_BTH_LEN,
				pkt->payload_off - pkt->bth_off - ROXE_BTH_LEN);
}

/* The annex's ICRC. */
static uint32_t icrc_annex(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	uint32_t crc = roxe_icrc_begin(frame, pkt);

	return icrc_crc32(crc, f + pkt->bth_off + (pkt->payload_off - pkt->bth_off),
				pkt->payload_len + pkt->pad);
}

uint32_t roxe_icrc_compute(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	uint32_t crc = icrc_annex(frame, pkt);

	/* rxe's FLUSH: BTH to the ICRC again (no payload, no pad) */
	if (pkt->opcode == ROXE_OP_RC_FLUSH)
		crc = icrc_crc32(crc, f + pkt->bth_off,
				       pkt->payload_off + pkt->payload_len + pkt->pad - pkt->bth_off);
	return crc;
}

uint32_t roxe_icrc_stored(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *p = (const uint8_t *)frame + pkt->frame_len - ROXE_ICRC_LEN;

	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

int roxe_icrc_check(const void *frame, const struct roxe_pkt *pkt)
{
	uint32_t stored = roxe_icrc_stored(frame, pkt);

	if (roxe_icrc_compute(frame, pkt) == stored)
		return ROXE_PKT_OK;
	/* a FLUSH with the annex's ICRC (an rxe that gave FLUSH its payload
	 * offset) */
	if (pkt->opcode == ROXE_OP_RC_FLUSH && icrc_annex(frame, pkt) == stored)
		return ROXE_PKT_OK;
	return ROXE_PKT_BAD_ICRC;
}
