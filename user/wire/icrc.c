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
 * where the CPU has VPCLMULQDQ, runs of 512 bytes and more are folded first:
 * 256 bytes a step in four 512-bit registers with AVX-512, else 128 bytes a
 * step in four 256-bit ones with AVX2 (Debian 12's libdeflate, 1.14, folds
 * 64 bytes a step in 128-bit ones: the ICRC of a 4 KiB frame was the largest
 * cost of the transport's own per frame, bench-budget.sh). The folds are
 * latency-bound chains of carry-less multiplies; twice the width halves the
 * chain. A payload copied in from an MR is CRCed as it is copied, in
 * whole cache lines each way where the CPU has VBMI. roxe_icrc_select()
 * picks a narrower path (the tools do for ROXE_ICRC, roxe(7)).
 */
#include <errno.h>
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
#define K2048_LO 0x11542778aULL
#define K2048_HI 0x1322d1430ULL
#define K1024_LO 0x1e88ef372ULL
#define K1024_HI 0x14a7fe880ULL
#define K512_LO 0x154442bd4ULL
#define K512_HI 0x1c6e41596ULL
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

static uint32_t crc32_finish(__m128i x, const uint8_t *p, size_t len);

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
	return crc32_finish(x, p, len);
}

/* x: the folded raw CRC state of what came before p; then len < 256 more
 * bytes. Back into libdeflate's form (see above). */
__attribute__((target("avx2,pclmul,vpclmulqdq")))
static uint32_t crc32_finish(__m128i x, const uint8_t *p, size_t len)
{
	uint8_t tail[16 + 256];

	x = _mm_xor_si128(x, _mm_set_epi32(0, 0, 0, -1));
	_mm_storeu_si128((__m128i *)tail, x);
	memcpy(tail + 16, p, len);
	return libdeflate_crc32(0, tail, 16 + len);
}

__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq")))
static inline __m512i fold512(__m512i x, __m512i k, __m512i next)
{
	/* 0x96: a ^ b ^ c */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/* Four 512-bit accumulators, 256 bytes of the message a step. */
struct fold4 {
	__m512i	z0, z1, z2, z3;
};

__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq"), always_inline))
static inline void fold4_step(struct fold4 *f, __m512i k2048, __m512i n0, __m512i n1,
			      __m512i n2, __m512i n3)
{
	f->z0 = fold512(f->z0, k2048, n0);
	f->z1 = fold512(f->z1, k2048, n1);
	f->z2 = fold512(f->z2, k2048, n2);
	f->z3 = fold512(f->z3, k2048, n3);
}

/* The four into one, the last: then 64 bytes a step with k512. */
__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq"), always_inline))
static inline __m512i fold4_join(const struct fold4 *f, __m512i k512)
{
	return fold512(fold512(fold512(f->z0, k512, f->z1), k512, f->z2), k512, f->z3);
}

/* One accumulator's four 128-bit lanes, in message order, into one. */
__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq"), always_inline))
static inline __m128i fold_lanes(__m512i z)
{
	const __m128i k128 = _mm_set_epi64x(K128_HI, K128_LO);
	__m128i x = _mm512_castsi512_si128(z);

	x = fold128(x, k128, _mm512_extracti32x4_epi32(z, 1));
	x = fold128(x, k128, _mm512_extracti32x4_epi32(z, 2));
	return fold128(x, k128, _mm512_extracti32x4_epi32(z, 3));
}

/* As crc32_vpclmul, for len >= 256: four 512-bit accumulators 256 bytes a
 * step, then one, 64 bytes a step, then its four lanes into one. With dst,
 * what it loads it also stores there: a copy that reads each byte once. */
__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq"), always_inline))
static inline uint32_t crc32_avx512_body(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K2048_HI, K2048_LO));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K512_HI, K512_LO));
	struct fold4 f = {
		_mm512_loadu_si512(p), _mm512_loadu_si512(p + 64),
		_mm512_loadu_si512(p + 128), _mm512_loadu_si512(p + 192),
	};
	__m512i n0, n1, n2, n3, z;

	if (dst) {
		_mm512_storeu_si512(dst, f.z0);
		_mm512_storeu_si512(dst + 64, f.z1);
		_mm512_storeu_si512(dst + 128, f.z2);
		_mm512_storeu_si512(dst + 192, f.z3);
		dst += 256;
	}
	f.z0 = _mm512_xor_si512(f.z0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
		n0 = _mm512_loadu_si512(p);
		n1 = _mm512_loadu_si512(p + 64);
		n2 = _mm512_loadu_si512(p + 128);
		n3 = _mm512_loadu_si512(p + 192);
		if (dst) {
			_mm512_storeu_si512(dst, n0);
			_mm512_storeu_si512(dst + 64, n1);
			_mm512_storeu_si512(dst + 128, n2);
			_mm512_storeu_si512(dst + 192, n3);
			dst += 256;
		}
		fold4_step(&f, k2048, n0, n1, n2, n3);
	}
	z = fold4_join(&f, k512);
	for (; len >= 64; p += 64, len -= 64) {
		n0 = _mm512_loadu_si512(p);
		if (dst) {
			_mm512_storeu_si512(dst, n0);
			dst += 64;
		}
		z = fold512(z, k512, n0);
	}
	if (!dst)
		return crc32_finish(fold_lanes(z), p, len);
	/* the tail: CRCed from our copy, not from src, which may change */
	memcpy(dst, p, len);
	return crc32_finish(fold_lanes(z), dst, len);
}

__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq")))
static uint32_t crc32_avx512(uint32_t crc, const uint8_t *p, size_t len)
{
	return crc32_avx512_body(crc, NULL, p, len);
}

__attribute__((target("avx512f,avx512vl,pclmul,vpclmulqdq")))
static uint32_t crc32_copy_avx512(uint32_t crc, uint8_t *dst, const uint8_t *src, size_t len)
{
	return crc32_avx512_body(crc, dst, src, len);
}

static const uint8_t iota64[64] = {
	 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

static inline __mmask64 low_bytes(unsigned n)
{
	return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/* As crc32_copy_avx512 for a src on a cache line and a dst sh bytes past
 * one (a frame's payload: 54 bytes in), len >= 256: lines are loaded whole
 * from src and stored whole into dst's lines, each made of the last sh
 * bytes of one source line and the first 64 - sh of the next (VBMI's
 * two-register byte permute); the first and last are masked stores. The
 * CRC folds the source lines as loaded, and the tail from our copy. */
__attribute__((target("avx512f,avx512vl,avx512bw,avx512vbmi,pclmul,vpclmulqdq")))
static uint32_t crc32_copy_shift_avx512(uint32_t crc, uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(K2048_HI, K2048_LO));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K512_HI, K512_LO));
	const unsigned sh = (uintptr_t)dst & 63;
	/* out[i] = (prev:next)[64 - sh + i] */
	const __m512i idx = _mm512_add_epi8(_mm512_loadu_si512(iota64),
					    _mm512_set1_epi8((char)(64 - sh)));
	const uint8_t *p0 = p;
	uint8_t *d = dst - sh;		/* dst's cache line */
	struct fold4 f = {
		_mm512_load_si512(p), _mm512_load_si512(p + 64),
		_mm512_load_si512(p + 128), _mm512_load_si512(p + 192),
	};
	__m512i n0, n1, n2, n3, prev, t, z;
	unsigned tail;

	_mm512_mask_storeu_epi8(d, ~low_bytes(sh), _mm512_permutex2var_epi8(f.z0, idx, f.z0));
	_mm512_store_si512(d + 64, _mm512_permutex2var_epi8(f.z0, idx, f.z1));
	_mm512_store_si512(d + 128, _mm512_permutex2var_epi8(f.z1, idx, f.z2));
	_mm512_store_si512(d + 192, _mm512_permutex2var_epi8(f.z2, idx, f.z3));
	d += 256;
	prev = f.z3;
	f.z0 = _mm512_xor_si512(f.z0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256, d += 256) {
		n0 = _mm512_load_si512(p);
		n1 = _mm512_load_si512(p + 64);
		n2 = _mm512_load_si512(p + 128);
		n3 = _mm512_load_si512(p + 192);
		_mm512_store_si512(d, _mm512_permutex2var_epi8(prev, idx, n0));
		_mm512_store_si512(d + 64, _mm512_permutex2var_epi8(n0, idx, n1));
		_mm512_store_si512(d + 128, _mm512_permutex2var_epi8(n1, idx, n2));
		_mm512_store_si512(d + 192, _mm512_permutex2var_epi8(n2, idx, n3));
		prev = n3;
		fold4_step(&f, k2048, n0, n1, n2, n3);
	}
	z = fold4_join(&f, k512);
	for (; len >= 64; p += 64, len -= 64, d += 64) {
		n0 = _mm512_load_si512(p);
		_mm512_store_si512(d, _mm512_permutex2var_epi8(prev, idx, n0));
		prev = n0;
		z = fold512(z, k512, n0);
	}
	/* what is left: prev's last sh bytes, then the tail's len */
	tail = (unsigned)len;
	t = _mm512_maskz_loadu_epi8(low_bytes(tail), p);
	if (sh + tail <= 64) {
		_mm512_mask_storeu_epi8(d, low_bytes(sh + tail), _mm512_permutex2var_epi8(prev, idx, t));
	} else {
		_mm512_store_si512(d, _mm512_permutex2var_epi8(prev, idx, t));
		_mm512_mask_storeu_epi8(d + 64, low_bytes(sh + tail - 64),
					_mm512_permutex2var_epi8(t, idx, _mm512_setzero_si512()));
	}
	/* the tail CRCed from our copy */
	return crc32_finish(fold_lanes(z), dst + (p - p0), tail);
}

enum { PATH_UNSET = -1, PATH_GENERIC, PATH_AVX2, PATH_AVX512, PATH_AVX512_VBMI };
static int crc_path = PATH_UNSET;

/* The widest path the CPU has, narrowed to want (roxe_icrc_select). */
static int pick_path(const char *want)
{
	int best = PATH_GENERIC;

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
	    __builtin_cpu_supports("vpclmulqdq")) {
		best = PATH_AVX2;
		if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
			best = PATH_AVX512;
		if (best == PATH_AVX512 && __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vbmi"))
			best = PATH_AVX512_VBMI;
	}
	if (want && !strcmp(want, "generic"))
		return PATH_GENERIC;
	if (want && !strcmp(want, "avx2") && best > PATH_AVX2)
		return PATH_AVX2;
	if (want && !strcmp(want, "avx512") && best > PATH_AVX512)
		return PATH_AVX512;
	return best;
}

static int icrc_path(void)
{
	int path = __atomic_load_n(&crc_path, __ATOMIC_RELAXED);

	if (path == PATH_UNSET) {
		path = pick_path(NULL);
		__atomic_store_n(&crc_path, path, __ATOMIC_RELAXED);
	}
	return path;
}
#endif

int roxe_icrc_select(const char *impl)
{
	if (impl && *impl && strcmp(impl, "generic") && strcmp(impl, "avx2") &&
	    strcmp(impl, "avx512"))
		return -EINVAL;
#ifdef HAVE_VPCLMUL_CRC
	__atomic_store_n(&crc_path, pick_path(impl), __ATOMIC_RELAXED);
#endif
	return 0;
}

const char *roxe_icrc_impl(void)
{
#ifdef HAVE_VPCLMUL_CRC
	switch (icrc_path()) {
	case PATH_AVX512_VBMI:
		return "avx512-vpclmulqdq-vbmi";
	case PATH_AVX512:
		return "avx512-vpclmulqdq";
	case PATH_AVX2:
		return "avx2-vpclmulqdq";
	}
#endif
	return "libdeflate";
}

/* Below this, libdeflate's own loop is as fast (headers, ACKs, small
 * payloads): the two cross at about 400 bytes. */
#define VPCLMUL_MIN 512

static uint32_t icrc_crc32(uint32_t crc, const void *data, size_t len)
{
	if (!len)		/* no pad, no payload: most small frames */
		return crc;
#ifdef HAVE_VPCLMUL_CRC
	if (len >= VPCLMUL_MIN) {
		switch (icrc_path()) {
		case PATH_AVX512:
		case PATH_AVX512_VBMI:
			return crc32_avx512(crc, data, len);
		case PATH_AVX2:
			return crc32_vpclmul(crc, data, len);
		}
	}
#endif
	return libdeflate_crc32(crc, data, len);
}

uint32_t roxe_icrc_update(uint32_t crc, const void *data, size_t len)
{
	return icrc_crc32(crc, data, len);
}

uint32_t roxe_icrc_update_copy(uint32_t crc, void *dst, const void *src, size_t len)
{
#ifdef HAVE_VPCLMUL_CRC
	int path = len >= VPCLMUL_MIN + 64 ? icrc_path() : PATH_GENERIC;

	if (path == PATH_AVX512 || path == PATH_AVX512_VBMI) {
		/* One end up to its next cache line apart: a 64-byte load or
		 * store across two lines costs twice (a frame's payload starts
		 * 54 or 70 bytes in). With VBMI src, then whole lines each way
		 * (4 KiB with its CRC: 100 ns; 92 with both ends on lines);
		 * without it dst, a store across two lines costing more than a
		 * load (124 ns). */
		const void *end = path == PATH_AVX512_VBMI ? src : dst;
		size_t head = -(uintptr_t)end & 63;
		uint8_t *d = (uint8_t *)dst + head;
		const uint8_t *s = (const uint8_t *)src + head;

		memcpy(dst, src, head);
		crc = icrc_crc32(crc, dst, head);
		if (path == PATH_AVX512_VBMI && ((uintptr_t)d & 63))
			return crc32_copy_shift_avx512(crc, d, s, len - head);
		return crc32_copy_avx512(crc, d, s, len - head);
	}
#endif
	memcpy(dst, src, len);
	return icrc_crc32(crc, dst, len);
}

/* Extension headers the masked copy takes along (the largest: RETH and
 * AtomicETH sizes and more; longer ones are CRCed where they are). */
#define ICRC_EXT_MAX 64

uint32_t roxe_icrc_begin(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	/* The absent LRH's ones, then IP header (options included) + UDP +
	 * BTH masked, then the extension headers unmasked: one CRC call over
	 * a copy (a call costs more than the bytes of a header). */
	uint8_t hdr[ROXE_ICRC_LRH_LEN + 60 + 8 + ROXE_BTH_LEN + ICRC_EXT_MAX];
	uint8_t *h = hdr + ROXE_ICRC_LRH_LEN;
	size_t ip_len = pkt->l4_off - pkt->l3_off;
	size_t len = ip_len + 8 + ROXE_BTH_LEN;
	size_t ext = pkt->payload_off - pkt->bth_off - ROXE_BTH_LEN;
	size_t inline_ext = ext <= ICRC_EXT_MAX ? ext : 0;
	uint32_t crc;

	memset(hdr, 0xff, ROXE_ICRC_LRH_LEN);
	memcpy(h, f + pkt->l3_off, len + inline_ext);
	if (pkt->ip_version == 4) {
		h[1] = 0xff;			/* TOS */
		h[8] = 0xff;			/* TTL */
		h[10] = h[11] = 0xff;		/* header checksum */
	} else {
		h[0] |= 0x0f;			/* traffic class, high nibble */
		h[1] = h[2] = h[3] = 0xff;	/* traffic class low nibble, flow label */
		h[7] = 0xff;			/* hop limit */
	}
	h[ip_len + 6] = h[ip_len + 7] = 0xff;	/* UDP checksum */
	h[ip_len + 8 + ROXE_BTH_VARIANT_OFF] = 0xff;	/* FECN, BECN, resv6 */

	crc = icrc_crc32(0, hdr, ROXE_ICRC_LRH_LEN + len + inline_ext);
	if (inline_ext == ext)
		return crc;
	return icrc_crc32(crc, f + pkt->bth_off + ROXE_BTH_LEN, ext);
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
