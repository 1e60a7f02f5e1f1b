/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The AF_XDP port backend (user/port/afxdp.c): one roxe_port per engine on
 * one interface, fed by roxe's XDP program (user/port/xdp.h). Created and
 * closed by one thread; each port is then used by its engine's thread only.
 */
#ifndef ROXE_PORT_AFXDP_H
#define ROXE_PORT_AFXDP_H

#include <stdbool.h>
#include "port/port.h"

struct roxe_afxdp;

struct roxe_afxdp_config {
	const char	*ifname;
	unsigned	engines;	/* ports, = the program's roxe_config.engines */
	unsigned	queues;		/* 0: all the interface's rx queues */
	int		xsks_map_fd;	/* roxe_xsks of the attached program */
	bool		force_copy;	/* do not try zero-copy */
	bool		no_multibuf;	/* frames up to one buffer (3840 B) only */
};

/* Sockets on every queue for every engine; returns NULL and sets errno
 * (EINVAL: fewer queues than engines). */
struct roxe_afxdp *roxe_afxdp_open(const struct roxe_afxdp_config *cfg);
/* Engine e's port; the port's destroy drops it (the group lives on). */
struct roxe_port *roxe_afxdp_port(struct roxe_afxdp *x, unsigned engine);
/* Frees the group once every port obtained from it is destroyed. */
void roxe_afxdp_close(struct roxe_afxdp *x);

bool roxe_afxdp_zerocopy(const struct roxe_afxdp *x);
unsigned roxe_afxdp_queues(const struct roxe_afxdp *x);

#endif /* ROXE_PORT_AFXDP_H */
