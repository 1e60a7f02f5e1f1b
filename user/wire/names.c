// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Printable names of opcodes and parser verdicts. */
#include "roxe/frame.h"

static const char *const opcode_names[256] = {
#define OPCODE_NAME(name, op, qpt, kind, flags) [op] = #name,
	ROXE_OPCODE_LIST(OPCODE_NAME)
#undef OPCODE_NAME
};

const char *roxe_opcode_name(uint8_t opcode)
{
	return opcode_names[opcode] ? opcode_names[opcode] : "unknown";
}

static const char *const verdict_names[ROXE_PKT__COUNT] = {
	[ROXE_PKT_OK]		= "ok",
	[ROXE_PKT_NOT_ROCE]	= "not_roce",
	[ROXE_PKT_BAD_IP_LEN]	= "bad_ip_len",
	[ROXE_PKT_BAD_UDP_LEN]	= "bad_udp_len",
	[ROXE_PKT_BAD_VERSION]	= "bad_version",
	[ROXE_PKT_BAD_OPCODE]	= "bad_opcode",
	[ROXE_PKT_BAD_HDR_LEN]	= "bad_hdr_len",
	[ROXE_PKT_BAD_PAYLOAD]	= "bad_payload",
	[ROXE_PKT_BAD_ICRC]	= "bad_icrc",
};

const char *roxe_verdict_name(int verdict)
{
	if (verdict < 0 || verdict >= ROXE_PKT__COUNT)
		return "invalid";
	return verdict_names[verdict];
}
