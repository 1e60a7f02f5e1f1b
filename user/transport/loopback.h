/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Loopback (loopback.c): frames for one of the host's own addresses never
 * leave the host; they go to the receiving device's engine (handoff.h).
 */
#ifndef ROXE_TRANSPORT_LOOPBACK_H
#define ROXE_TRANSPORT_LOOPBACK_H

#include <stdint.h>
#include "transport/transport.h"

/* The shortest whole frame: Ethernet, IPv4, UDP, BTH, ICRC. */
#define ROXE_LOOP_MIN_FRAME	(14 + 20 + 8 + ROXE_BTH_LEN + ROXE_ICRC_LEN)

/*
 * roxe_loop_deliver: hand frame (len bytes, a whole frame as built for the
 * wire: Ethernet header to ICRC) to the receive path of dev's engine that
 * owns its destination QP dqpn (QPN modulo the engine count), as if it had
 * arrived on dev's port; dev is the RECEIVING device; dqpn is the QPN the
 * sender wrote in the frame's BTH, src_qpn the QP that sent it (an RC/UC QP
 * takes a looped frame only from its peer QP, a UD QP only with that number
 * as the DETH's source). The frame is copied (roxe_handoff_push,
 * ROXE_HO_CHECK): the caller keeps its buffer; the receiving engine checks
 * it as a frame from the wire, and drops it if it is not one. Any thread;
 * never blocks, takes no lock. Returns 0 (queued: the engine verifies,
 * counts as `loopback` and processes it on its next turn), -EINVAL (shorter
 * than any RoCE v2 frame), -ENOBUFS (the engine's ring is full, or holds
 * src_qpn's share of it: dropped and counted in loopback_drop on the
 * engine's next turn, as a full wire would; the transport retransmits).
 */
int roxe_loop_deliver(struct roxe_device *dev, const uint8_t *frame, uint32_t len,
		      uint32_t dqpn, uint32_t src_qpn);
/* The local device whose own address gid is: dev itself, else another
 * device of this process in dev's network namespace; NULL: none. */
struct roxe_device *roxe_loop_find(struct roxe_device *dev, const uint8_t gid[16]);
/* The same for a frame of qp's to dgid, remembered per RC/UC QP until the
 * epoch moves: roxe_loop_epoch_bump() wherever an answer may change. */
struct roxe_device *roxe_loop_target_qp(struct roxe_qp *qp, const uint8_t dgid[16]);
void roxe_loop_epoch_bump(void);
/* Devices on a real interface: found by other devices of the process
 * (register before the engines start, unregister after they stopped). */
int roxe_loop_register(struct roxe_device *dev);
void roxe_loop_unregister(struct roxe_device *dev, void (*quiesce)(struct roxe_device *));

#endif /* ROXE_TRANSPORT_LOOPBACK_H */
