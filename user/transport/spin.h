/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * How long an idle engine thread spins before it sleeps (engine.c).
 *
 * A spin catches the next frame or doorbell of a busy QP without a
 * wake-up: no ppoll(), no context switch, no eventfd signal from roxe.ko.
 * Spinning for work that comes later than the spin only burns the core
 * (in a TCG guest, where a round trip is longer than any spin, roxed spent
 * about 50 us of CPU per wake-up on it). So the spin adapts to the gaps
 * the engine sees, as the kernel's haltpoll governor adapts a vCPU's poll:
 *   - work came after a sleep, but within ROXE_SPIN_MAX_NS of the last
 *     work: a longer spin would have caught it, so the spin doubles
 *     (from ROXE_SPIN_GROW_NS, up to ROXE_SPIN_MAX_NS);
 *   - work came later than that: no spin would have caught it, so the
 *     spin halves, and stops below ROXE_SPIN_GROW_NS;
 *   - work a spin caught leaves the spin as it is.
 */
#ifndef ROXE_TRANSPORT_SPIN_H
#define ROXE_TRANSPORT_SPIN_H

#include <stdint.h>

#define ROXE_SPIN_MAX_NS	50000
#define ROXE_SPIN_GROW_NS	5000

/* The next spin after one of spin ns that ended in a sleep, gap ns from
 * the last work to the work that ended the sleep. */
static inline uint64_t roxe_spin_next(uint64_t spin, uint64_t gap)
{
	if (gap > ROXE_SPIN_MAX_NS) {
		spin /= 2;
		return spin < ROXE_SPIN_GROW_NS ? 0 : spin;
	}
	if (gap <= spin)
		return spin;
	spin = spin < ROXE_SPIN_GROW_NS ? ROXE_SPIN_GROW_NS : spin * 2;
	return spin < ROXE_SPIN_MAX_NS ? spin : ROXE_SPIN_MAX_NS;
}

#endif /* ROXE_TRANSPORT_SPIN_H */
