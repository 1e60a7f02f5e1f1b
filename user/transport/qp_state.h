/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine's side of QP state changes (qp_state.c): acting on the state
 * the verbs set, a QP's fatal errors, and whether a WR may be posted to it.
 */
#ifndef ROXE_TRANSPORT_QP_STATE_H
#define ROXE_TRANSPORT_QP_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include "transport/transport.h"

/* May a WR of opcode op be posted to a QP of type t? */
static inline bool roxe_qp_opcode_ok(enum ibv_qp_type t, uint32_t op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return t != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
	case ROXE_UWR_FLUSH:		/* IBA 1.5: RC only */
	case ROXE_UWR_ATOMIC_WRITE:
		return t == IBV_QPT_RC;
	case IBV_WR_BIND_MW:		/* as rxe's provider */
		return t == IBV_QPT_RC || t == IBV_QPT_UC;
	default:
		return false;
	}
}

/* Engine side: a fatal error, flush everything and stop; ev is the
 * affiliated async event to raise (IBV_EVENT_QP_FATAL, QP_REQ_ERR, ...). */
void roxe_qp_to_error(struct roxe_qp *qp, enum ibv_event_type ev);
/* Engine side: the send WQE being sent failed locally (w->status set). */
void roxe_qp_send_error(struct roxe_qp *qp);
void roxe_qp_engine_sync(struct roxe_qp *qp);	/* act on a state change */
enum ibv_wc_status roxe_qp_check_send_wqe(const struct roxe_qp *qp, const struct rxe_send_wqe *w);

#endif /* ROXE_TRANSPORT_QP_STATE_H */
