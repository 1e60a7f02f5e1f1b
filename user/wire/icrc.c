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
 * The CRC itself is libdeflate's (PCLMULQDQ-folded where the CPU has it).
 */
#include <string.h>
#include <libdeflate.h>
#include "roxe/frame.h"

static const uint8_t lrh_ones[ROXE_ICRC_LRH_LEN] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

uint32_t roxe_icrc_update(uint32_t crc, const void *data, size_t len)
{
	return libdeflate_crc32(crc, data, len);
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

	crc = libdeflate_crc32(0, lrh_ones, sizeof(lrh_ones));
	crc = libdeflate_crc32(crc, hdr, len);
	/* Extension headers follow the BTH unmasked. */
	return libdeflate_crc32(crc, f + pkt->bth_off + ROXE_BTH_LEN,
				pkt->payload_off - pkt->bth_off - ROXE_BTH_LEN);
}

/* The annex's ICRC. */
static uint32_t icrc_annex(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	uint32_t crc = roxe_icrc_begin(frame, pkt);

	return libdeflate_crc32(crc, f + pkt->bth_off + (pkt->payload_off - pkt->bth_off),
				pkt->payload_len + pkt->pad);
}

uint32_t roxe_icrc_compute(const void *frame, const struct roxe_pkt *pkt)
{
	const uint8_t *f = frame;
	uint32_t crc = icrc_annex(frame, pkt);

	/* rxe's FLUSH: BTH to the ICRC again (no payload, no pad) */
	if (pkt->opcode == ROXE_OP_RC_FLUSH)
		crc = libdeflate_crc32(crc, f + pkt->bth_off,
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
