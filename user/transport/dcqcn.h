/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015) and the pacer that holds a QP to its
 * rate, as plain arithmetic over small structs (no QP, no clock): the
 * requester feeds them the engine's time, CNPs and the bytes it sends;
 * tests drive them directly.
 *
 * The rate (kbit/s; parameters in Mbit/s, as the hardware's):
 *  - a CNP (at most one reduction per reduce_period_us, as ConnectX's
 *    rate_reduce_monitor_period) cuts the current rate
 *      Rc = Rc (1 - alpha / 2^(gd - 10)),  at most by min_dec_fac %,
 *    never below min_rate; the target Rt takes the old Rc (always in the
 *    paper; on hardware only with clamp_tgt_rate, or with
 *    clamp_tgt_rate_after_time_inc once the timer raised the rate since
 *    the last cut); then alpha = (1 - g) alpha + g. The first CNP of an
 *    unlimited QP starts it at rate_on_first_cnp (0: the line rate) with
 *    alpha = initial_alpha.
 *  - alpha decays, alpha = (1 - g) alpha, every alpha_period_us without a
 *    CNP (the paper's K; hardware's dce_tcp_rtt).
 *  - the rate recovers on two counters reset by each cut: a timer stage
 *    every time_reset_us and a byte stage every byte_reset x 64 bytes
 *    sent (0: no byte counter). Each stage ends with Rc = (Rc + Rt) / 2;
 *    before it, while both counters are below threshold (the paper's F)
 *    nothing more (fast recovery); when both have passed it Rt grows by
 *    (min count - threshold) x hai_rate (hyper increase); otherwise by
 *    ai_rate (additive increase). Rt and Rc never pass the line rate;
 *    once Rc reaches it the QP is unlimited again (hardware releases the
 *    QP's rate limiter there): the pacer is skipped.
 *
 * Every input is bounded: parameters to limits.h's ranges (roxe_dcqcn_parse),
 * catch-up over a long idle to ROXE_DCQCN_MAX_STEPS stages and an alpha
 * decay computed by squaring, a clock going backwards to no time passed.
 */
#ifndef ROXE_TRANSPORT_DCQCN_H
#define ROXE_TRANSPORT_DCQCN_H

#include <stdbool.h>
#include <stdint.h>

/* A device's parameters (names after mlx5's cong params / NVIDIA's DCQCN
 * parameters; ranges and defaults in include/roxe/limits.h). */
struct roxe_dcqcn_params {
	bool		enabled;		/* off: CNPs change nothing */
	uint32_t	line_rate;		/* Mbit/s: Rc's and Rt's cap */
	uint32_t	rate_on_first_cnp;	/* Mbit/s; 0: the line rate */
	uint32_t	min_rate;		/* rpg_min_rate, Mbit/s */
	uint32_t	min_dec_fac;		/* rpg_min_dec_fac, % */
	uint32_t	gd;			/* rpg_gd: cut alpha / 2^(gd - 10) */
	uint32_t	reduce_period_us;	/* rate_reduce_monitor_period */
	uint32_t	time_reset_us;		/* rpg_time_reset */
	uint32_t	byte_reset;		/* rpg_byte_reset, 64-byte units; 0: off */
	uint32_t	threshold;		/* rpg_threshold: F */
	uint32_t	ai_rate, hai_rate;	/* rpg_ai_rate, rpg_hai_rate, Mbit/s */
	uint32_t	g;			/* dce_tcp_g: (1 - g) is g/1024 */
	uint32_t	alpha_period_us;	/* dce_tcp_rtt */
	uint32_t	initial_alpha;		/* initial_alpha_value, /1024 */
	bool		clamp_tgt_rate, clamp_tgt_rate_after_time_inc;
};

void roxe_dcqcn_defaults(struct roxe_dcqcn_params *p);
/* Parameters over the defaults from text (hostile: an application's or
 * an operator's): "on", "off", or comma-separated name=value pairs
 * (names as the struct's fields; "cc=off" too), each value in its range.
 * NULL or "": the defaults. 0, or -EINVAL (err, if not NULL, names the
 * offending item). */
int roxe_dcqcn_parse(struct roxe_dcqcn_params *p, const char *text, char *err, unsigned errlen);

#define ROXE_DCQCN_ALPHA_ONE	(1u << 20)	/* alpha's fixed point: 1.0 */

struct roxe_dcqcn {
	bool		limited;	/* a CNP made it slower than the line */
	uint64_t	rc, rt;		/* kbit/s */
	uint32_t	alpha;		/* /ROXE_DCQCN_ALPHA_ONE */
	uint64_t	cut_at;		/* ns: the last cut */
	uint64_t	alpha_at;	/* ns: the alpha timer's start */
	uint64_t	timer_at;	/* ns: the increase timer's start */
	uint64_t	bytes;		/* sent since the last byte stage */
	uint32_t	t_stages, b_stages;	/* timer and byte counters */
	bool		time_inc;	/* the timer raised the rate since the last cut */
	uint64_t	cnps;		/* CNPs taken (reductions or not) */
};

void roxe_dcqcn_init(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p);
/* A CNP for the QP at now (ns). True when it lowered the QP's rate (the
 * line rate while unlimited): a cut, or a first CNP's rate_on_first_cnp
 * below the line; false when off, within the monitor period, at
 * min_rate already, or a cut of nothing. */
bool roxe_dcqcn_cnp(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint64_t now);
/* The timers up to now: alpha's decay and the timer stages. */
void roxe_dcqcn_advance(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint64_t now);
/* bytes (frames as on the wire) sent at now: the byte stages. */
void roxe_dcqcn_sent(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint32_t bytes,
		     uint64_t now);
/* The current rate in Mbit/s (rounded down, at least 1); 0: unlimited. */
uint32_t roxe_dcqcn_rate_mbps(const struct roxe_dcqcn *d);

/*
 * The pacer: a token bucket on frame bytes at Rc, kept as a virtual time
 * (the time the bucket would be empty): a frame may leave when that is not
 * ahead of now; each frame moves it on by its transmission time at the
 * rate, from no earlier than now - the burst's time. The burst is
 * ROXE_PACE_BURST_BYTES (a few frames: enough to ride out the engine's
 * wake-up latency, small enough that the rate holds over a millisecond),
 * plus the one frame that may take the bucket below empty.
 */
struct roxe_pacer {
	uint64_t	vtime;		/* ns */
};

void roxe_pace_init(struct roxe_pacer *pc, uint64_t now);
/* 0: a frame may leave now; else the time (ns) it may. */
uint64_t roxe_pace_when(const struct roxe_pacer *pc, uint64_t now);
/* A frame of len bytes left at now, at rate kbit/s (at least 1). */
void roxe_pace_sent(struct roxe_pacer *pc, uint64_t rate_kbps, uint32_t len, uint64_t now);

#endif /* ROXE_TRANSPORT_DCQCN_H */
