/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RoCE v2 opcode table: every RC, UC and UD opcode roxe speaks, plus the
 * congestion notification packet (CNP), with the extension headers that
 * follow the BTH and whether a payload may follow them (IBA table 35 and
 * 9.2-9.4; RoCE v2 annex A17.9.3 for CNP).
 *
 * One list (ROXE_OPCODE_LIST) defines every opcode once; the BPF program,
 * the engine and the tools expand it into what they need.
 */
#ifndef ROXE_OPCODE_H
#define ROXE_OPCODE_H

#include <linux/types.h>
#include "roxe/wire.h"

/* Extension headers, in the order they follow the BTH on the wire (FLUSH:
 * FETH before RETH, IBA 1.5 table 35). */
#define ROXE_HDR_DETH		0x0001
#define ROXE_HDR_FETH		0x0002
#define ROXE_HDR_RETH		0x0004
#define ROXE_HDR_ATMETH		0x0008
#define ROXE_HDR_AETH		0x0010
#define ROXE_HDR_ATMACK		0x0020
#define ROXE_HDR_IMMDT		0x0040
#define ROXE_HDR_IETH		0x0080
#define ROXE_HDR_ALL		0x00ff
/* Opcode properties. */
#define ROXE_OPF_PAYLOAD	0x0100	/* may carry payload */
#define ROXE_OPF_FIRST		0x0200	/* first packet of a message */
#define ROXE_OPF_LAST		0x0400	/* last packet of a message */
#define ROXE_OPF_ONLY		(ROXE_OPF_FIRST | ROXE_OPF_LAST)
#define ROXE_OPF_MIDDLE		0
#define ROXE_OPF_REQUEST	0x0800	/* sent by a requester (else a response) */
#define ROXE_OPF_VALID		0x8000

enum roxe_qp_type_wire {
	ROXE_WQPT_RC	= 0,
	ROXE_WQPT_UC	= 1,
	ROXE_WQPT_RD	= 2,	/* not supported: its opcodes are invalid here */
	ROXE_WQPT_UD	= 3,
	ROXE_WQPT_CNP	= 4,
};

enum roxe_op_kind {
	ROXE_OPK_NONE = 0,
	ROXE_OPK_SEND,
	ROXE_OPK_WRITE,
	ROXE_OPK_READ_REQ,
	ROXE_OPK_READ_RESP,
	ROXE_OPK_ACK,
	ROXE_OPK_ATOMIC,
	ROXE_OPK_ATOMIC_ACK,
	ROXE_OPK_CNP,
	ROXE_OPK_FLUSH,		/* IBA 1.5 */
	ROXE_OPK_ATOMIC_WRITE,	/* IBA 1.5 */
};

#define ROXE__P			ROXE_OPF_PAYLOAD

/*
 *  X(name, opcode, QP type, kind, flags: position | headers | payload)
 */
#define ROXE_OPCODE_LIST(X)							\
X(RC_SEND_FIRST,                   0x00, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_FIRST | ROXE__P) \
X(RC_SEND_MIDDLE,                  0x01, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_MIDDLE | ROXE__P) \
X(RC_SEND_LAST,                    0x02, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE__P) \
X(RC_SEND_LAST_WITH_IMMEDIATE,     0x03, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE_HDR_IMMDT | ROXE__P) \
X(RC_SEND_ONLY,                    0x04, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE__P) \
X(RC_SEND_ONLY_WITH_IMMEDIATE,     0x05, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_IMMDT | ROXE__P) \
X(RC_RDMA_WRITE_FIRST,             0x06, RC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_FIRST | ROXE_HDR_RETH | ROXE__P) \
X(RC_RDMA_WRITE_MIDDLE,            0x07, RC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_MIDDLE | ROXE__P) \
X(RC_RDMA_WRITE_LAST,              0x08, RC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE__P) \
X(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x09, RC, WRITE,   ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE_HDR_IMMDT | ROXE__P) \
X(RC_RDMA_WRITE_ONLY,              0x0a, RC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH | ROXE__P) \
X(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0b, RC, WRITE,   ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH | ROXE_HDR_IMMDT | ROXE__P) \
X(RC_RDMA_READ_REQUEST,            0x0c, RC, READ_REQ,  ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH) \
X(RC_RDMA_READ_RESPONSE_FIRST,     0x0d, RC, READ_RESP, ROXE_OPF_FIRST | ROXE_HDR_AETH | ROXE__P) \
X(RC_RDMA_READ_RESPONSE_MIDDLE,    0x0e, RC, READ_RESP, ROXE_OPF_MIDDLE | ROXE__P) \
X(RC_RDMA_READ_RESPONSE_LAST,      0x0f, RC, READ_RESP, ROXE_OPF_LAST | ROXE_HDR_AETH | ROXE__P) \
X(RC_RDMA_READ_RESPONSE_ONLY,      0x10, RC, READ_RESP, ROXE_OPF_ONLY | ROXE_HDR_AETH | ROXE__P) \
X(RC_ACKNOWLEDGE,                  0x11, RC, ACK,       ROXE_OPF_ONLY | ROXE_HDR_AETH) \
X(RC_ATOMIC_ACKNOWLEDGE,           0x12, RC, ATOMIC_ACK, ROXE_OPF_ONLY | ROXE_HDR_AETH | ROXE_HDR_ATMACK) \
X(RC_COMPARE_SWAP,                 0x13, RC, ATOMIC,    ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_ATMETH) \
X(RC_FETCH_ADD,                    0x14, RC, ATOMIC,    ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_ATMETH) \
X(RC_SEND_LAST_WITH_INVALIDATE,    0x16, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE_HDR_IETH | ROXE__P) \
X(RC_SEND_ONLY_WITH_INVALIDATE,    0x17, RC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_IETH | ROXE__P) \
X(RC_FLUSH,                        0x1c, RC, FLUSH,     ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_FETH | ROXE_HDR_RETH) \
X(RC_ATOMIC_WRITE,                 0x1d, RC, ATOMIC_WRITE, ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH | ROXE__P) \
X(UC_SEND_FIRST,                   0x20, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_FIRST | ROXE__P) \
X(UC_SEND_MIDDLE,                  0x21, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_MIDDLE | ROXE__P) \
X(UC_SEND_LAST,                    0x22, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE__P) \
X(UC_SEND_LAST_WITH_IMMEDIATE,     0x23, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE_HDR_IMMDT | ROXE__P) \
X(UC_SEND_ONLY,                    0x24, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE__P) \
X(UC_SEND_ONLY_WITH_IMMEDIATE,     0x25, UC, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_IMMDT | ROXE__P) \
X(UC_RDMA_WRITE_FIRST,             0x26, UC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_FIRST | ROXE_HDR_RETH | ROXE__P) \
X(UC_RDMA_WRITE_MIDDLE,            0x27, UC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_MIDDLE | ROXE__P) \
X(UC_RDMA_WRITE_LAST,              0x28, UC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE__P) \
X(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x29, UC, WRITE,   ROXE_OPF_REQUEST | ROXE_OPF_LAST | ROXE_HDR_IMMDT | ROXE__P) \
X(UC_RDMA_WRITE_ONLY,              0x2a, UC, WRITE,     ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH | ROXE__P) \
X(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2b, UC, WRITE,   ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_RETH | ROXE_HDR_IMMDT | ROXE__P) \
X(UD_SEND_ONLY,                    0x64, UD, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_DETH | ROXE__P) \
X(UD_SEND_ONLY_WITH_IMMEDIATE,     0x65, UD, SEND,      ROXE_OPF_REQUEST | ROXE_OPF_ONLY | ROXE_HDR_DETH | ROXE_HDR_IMMDT | ROXE__P) \
X(CNP,                             0x81, CNP, CNP,      ROXE_OPF_ONLY | ROXE__P)

enum roxe_opcode {
#define ROXE__OPCODE_ENUM(name, op, qpt, kind, flags) ROXE_OP_##name = op,
	ROXE_OPCODE_LIST(ROXE__OPCODE_ENUM)
#undef ROXE__OPCODE_ENUM
};

/* Length of the BTH plus the extension headers named in a ROXE_HDR_ mask. */
#define ROXE_HDRS_LEN(f) (ROXE_BTH_LEN +				\
	(((f) & ROXE_HDR_DETH) ? ROXE_DETH_LEN : 0) +			\
	(((f) & ROXE_HDR_FETH) ? ROXE_FETH_LEN : 0) +			\
	(((f) & ROXE_HDR_RETH) ? ROXE_RETH_LEN : 0) +			\
	(((f) & ROXE_HDR_ATMETH) ? ROXE_ATMETH_LEN : 0) +		\
	(((f) & ROXE_HDR_AETH) ? ROXE_AETH_LEN : 0) +			\
	(((f) & ROXE_HDR_ATMACK) ? ROXE_ATMACK_LEN : 0) +		\
	(((f) & ROXE_HDR_IMMDT) ? ROXE_IMMDT_LEN : 0) +		\
	(((f) & ROXE_HDR_IETH) ? ROXE_IETH_LEN : 0))

struct roxe_opcode_info {
	__u16	flags;		/* ROXE_HDR_* | ROXE_OPF_*; 0: not an opcode we speak */
	__u8	hdr_len;	/* BTH + extension headers */
	__u8	qpt;		/* enum roxe_qp_type_wire */
	__u8	kind;		/* enum roxe_op_kind */
	__u8	fixed_payload;	/* payload length a packet must have, 0: any */
};

/* Indexed by opcode. Small (1.5 KiB) and read-only: BPF keeps it in .rodata. */
static const struct roxe_opcode_info roxe_opcode_table[256] = {
#define ROXE__OPCODE_INFO(name, op, qpt_, kind_, flags_)			\
	[op] = {								\
		.flags = (flags_) | ROXE_OPF_VALID,				\
		.hdr_len = ROXE_HDRS_LEN(flags_),				\
		.qpt = ROXE_WQPT_##qpt_,					\
		.kind = ROXE_OPK_##kind_,					\
		.fixed_payload = (op) == 0x81 ? ROXE_CNP_PAYLOAD_LEN :		\
				 (op) == 0x1d ? ROXE_ATOMIC_WRITE_LEN : 0,	\
	},
	ROXE_OPCODE_LIST(ROXE__OPCODE_INFO)
#undef ROXE__OPCODE_INFO
};

static inline const struct roxe_opcode_info *roxe_opcode_info(__u8 opcode)
{
	return &roxe_opcode_table[opcode];
}

static inline int roxe_opcode_valid(__u8 opcode)
{
	return !!(roxe_opcode_table[opcode].flags & ROXE_OPF_VALID);
}

/*
 * Offset from the BTH of extension header hdr (one ROXE_HDR_ bit) in a
 * packet whose opcode has header mask flags; the headers each come after
 * the ones with lower bits.
 */
static inline unsigned int roxe_hdr_offset(__u16 flags, __u16 hdr)
{
	return ROXE_HDRS_LEN(flags & (hdr - 1) & ROXE_HDR_ALL);
}

#endif /* ROXE_OPCODE_H */
