/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UDP port backend (user/port/udp.c): RoCE v2 over a plain UDP socket
 * bound to <local ip>:4791. Runs where XDP does not; the baseline.
 */
#ifndef ROXE_PORT_UDP_H
#define ROXE_PORT_UDP_H

#include "port/port.h"

/* local_ip: IPv4 or IPv6 text. Returns NULL and sets errno on failure. */
struct roxe_port *roxe_udp_port_open(const char *local_ip);

#endif /* ROXE_PORT_UDP_H */
