// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * DCQCN's reaction point and the pacer (the contract and the choices are
 * in dcqcn.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport/dcqcn.h"
#include "roxe/limits.h"

#define US_NS		1000ull
#define STAGES_MAX	65535u		/* counters saturate: hyper increase stays bounded */

void roxe_dcqcn_defaults(struct roxe_dcqcn_params *p)
{
	*p = (struct roxe_dcqcn_params){
		/* On, as ConnectX-4 and later ship it (NVIDIA's table:
		 * "Enable"); it only acts on CNPs, and without them the
		 * pacer is skipped: a network that marks nothing sees no
		 * change. */
		.enabled = true,
		.line_rate = ROXE_DCQCN_LINE_RATE_DEF,
		.rate_on_first_cnp = 0,
		.min_rate = ROXE_DCQCN_MIN_RATE_DEF,
		.min_dec_fac = ROXE_DCQCN_MIN_DEC_FAC_DEF,
		.gd = ROXE_DCQCN_GD_DEF,
		.reduce_period_us = ROXE_DCQCN_REDUCE_PERIOD_DEF,
		.time_reset_us = ROXE_DCQCN_TIME_RESET_DEF,
		.byte_reset = ROXE_DCQCN_BYTE_RESET_DEF,
		.threshold = ROXE_DCQCN_THRESHOLD_DEF,
		.ai_rate = ROXE_DCQCN_AI_RATE_DEF,
		.hai_rate = ROXE_DCQCN_HAI_RATE_DEF,
		.g = ROXE_DCQCN_G_DEF,
		.alpha_period_us = ROXE_DCQCN_ALPHA_PERIOD_DEF,
		.initial_alpha = ROXE_DCQCN_INITIAL_ALPHA_DEF,
		.clamp_tgt_rate = false,
		.clamp_tgt_rate_after_time_inc = true,
	};
}

/* --- parameters from text ------------------------------------------------------ */
struct param {
	const char	*name;
	size_t		off;
	uint32_t	min, max;
	bool		flag;		/* a bool field */
};

#define U(f, lo, hi) { #f, offsetof(struct roxe_dcqcn_params, f), lo, hi, false }
#define B(f) { #f, offsetof(struct roxe_dcqcn_params, f), 0, 1, true }
static const struct param params[] = {
	U(line_rate, 1, ROXE_DCQCN_RATE_MAX),
	U(rate_on_first_cnp, 0, ROXE_DCQCN_RATE_MAX),
	U(min_rate, 1, ROXE_DCQCN_RATE_MAX),
	U(min_dec_fac, 0, 100),
	U(gd, ROXE_DCQCN_GD_MIN, ROXE_DCQCN_GD_MAX),
	U(reduce_period_us, 0, ROXE_DCQCN_TIME_MAX),
	U(time_reset_us, 1, ROXE_DCQCN_TIME_MAX),
	U(byte_reset, 0, ROXE_DCQCN_BYTE_RESET_MAX),
	U(threshold, 1, ROXE_DCQCN_THRESHOLD_MAX),
	U(ai_rate, 0, ROXE_DCQCN_RATE_MAX),
	U(hai_rate, 0, ROXE_DCQCN_RATE_MAX),
	U(g, 0, ROXE_DCQCN_G_MAX),
	U(alpha_period_us, 1, ROXE_DCQCN_TIME_MAX),
	U(initial_alpha, 1, ROXE_DCQCN_ALPHA_MAX),
	B(clamp_tgt_rate),
	B(clamp_tgt_rate_after_time_inc),
	B(enabled),
};
#undef U
#undef B

static int bad(char *err, unsigned errlen, const char *what, size_t n)
{
	if (!n) {
		what = "(an empty item)";
		n = strlen(what);
	}
	if (err && errlen)
		snprintf(err, errlen, "%.*s", (int)(n > 64 ? 64 : n), what);
	return -EINVAL;
}

static int parse_item(struct roxe_dcqcn_params *p, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);
	char val[16];
	size_t nl, vl;
	unsigned long v;
	char *end;

	if (!eq) {
		if (n == 2 && !memcmp(s, "on", 2))
			return (p->enabled = true), 0;
		if (n == 3 && !memcmp(s, "off", 3))
			return (p->enabled = false), 0;
		return -EINVAL;
	}
	nl = (size_t)(eq - s);
	vl = n - nl - 1;
	if (!vl || vl >= sizeof(val))
		return -EINVAL;
	memcpy(val, eq + 1, vl);
	val[vl] = 0;
	if (nl == 2 && !memcmp(s, "cc", 2)) {
		if (!strcmp(val, "on") || !strcmp(val, "off"))
			return (p->enabled = val[1] == 'n'), 0;
		return -EINVAL;
	}
	if (val[0] < '0' || val[0] > '9')
		return -EINVAL;		/* strtoul would take a sign or spaces */
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const struct param *q = &params[i];

		if (strlen(q->name) != nl || memcmp(q->name, s, nl))
			continue;
		if (v < q->min || v > q->max)
			return -EINVAL;
		if (q->flag)
			*(bool *)((char *)p + q->off) = v;
		else
			*(uint32_t *)((char *)p + q->off) = (uint32_t)v;
		return 0;
	}
	return -EINVAL;
}

int roxe_dcqcn_parse(struct roxe_dcqcn_params *p, const char *text, char *err, unsigned errlen)
{
	struct roxe_dcqcn_params t = *p;
	const char *s = text;

	if (err && errlen)
		err[0] = 0;
	if (!text)
		return 0;
	if (strnlen(text, 4096) == 4096)
		return bad(err, errlen, text, 64);
	while (*s) {
		size_t n = strcspn(s, ",");

		if (parse_item(&t, s, n))
			return bad(err, errlen, s, n);
		s += n;
		if (*s == ',')
			s++;
	}
	if (t.min_rate > t.line_rate)
		return bad(err, errlen, "min_rate", 8);
	*p = t;
	return 0;
}

/* --- the rate ------------------------------------------------------------------- */
static uint64_t kbps(uint32_t mbps)
{
	return (uint64_t)mbps * 1000;
}

void roxe_dcqcn_init(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p)
{
	*d = (struct roxe_dcqcn){ 0 };
	d->rc = d->rt = kbps(p->line_rate);
	d->alpha = ROXE_DCQCN_ALPHA_ONE;
}

uint32_t roxe_dcqcn_rate_mbps(const struct roxe_dcqcn *d)
{
	if (!d->limited)
		return 0;
	return d->rc < 1000 ? 1 : (uint32_t)(d->rc / 1000);
}

/* g/1024 to the n-th, alpha's fixed point, by squaring (log2 n steps). */
static uint64_t decay_pow(uint32_t g, uint64_t n)
{
	uint64_t r = ROXE_DCQCN_ALPHA_ONE, b = (uint64_t)g << 10;

	while (n && r) {
		if (n & 1)
			r = r * b >> 20;
		b = b * b >> 20;
		n >>= 1;
	}
	return r;
}

/* The QP runs at the line rate again: the pacer is skipped. */
static void release(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p)
{
	d->limited = false;
	d->rc = d->rt = kbps(p->line_rate);
}

/* One stage of the timer (timer) or the byte counter ended. */
static void increase(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, bool timer)
{
	uint64_t line = kbps(p->line_rate);
	/* without a byte counter (byte_reset 0) B stays 0: additive
	 * increase at most, never hyper */
	uint32_t t = d->t_stages, b = d->b_stages;
	uint32_t mx = t > b ? t : b, mn = t < b ? t : b;

	if (mx <= p->threshold)
		;				/* fast recovery */
	else if (mn > p->threshold)
		d->rt += (uint64_t)(mn - p->threshold) * kbps(p->hai_rate);	/* hyper */
	else
		d->rt += kbps(p->ai_rate);	/* additive */
	if (d->rt > line)
		d->rt = line;
	d->rc = (d->rc + d->rt + 1) / 2;	/* rounded up: it reaches Rt */
	if (timer)
		d->time_inc = true;
	if (d->rc >= line)
		release(d, p);
}

void roxe_dcqcn_advance(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint64_t now)
{
	uint64_t period = p->alpha_period_us ? p->alpha_period_us * US_NS : US_NS;
	uint64_t reset = p->time_reset_us ? p->time_reset_us * US_NS : US_NS;
	unsigned steps = 0;

	if (!d->limited)
		return;
	if (now < d->alpha_at || now < d->timer_at) {
		/* the clock went back: no time passed */
		d->alpha_at = d->timer_at = now;
		return;
	}
	if (now - d->alpha_at >= period) {
		uint64_t n = (now - d->alpha_at) / period;

		d->alpha = (uint32_t)((uint64_t)d->alpha * decay_pow(p->g, n) >> 20);
		d->alpha_at += n * period;
	}
	while (d->limited && now - d->timer_at >= reset) {
		if (++steps > ROXE_DCQCN_MAX_STEPS) {
			d->timer_at = now;	/* the rest of a long idle */
			break;
		}
		d->timer_at += reset;
		if (d->t_stages < STAGES_MAX)
			d->t_stages++;
		increase(d, p, true);
	}
}

void roxe_dcqcn_sent(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint32_t bytes,
		     uint64_t now)
{
	uint64_t reset = (uint64_t)p->byte_reset * 64;
	unsigned steps = 0;

	(void)now;
	if (!d->limited || !reset)
		return;
	d->bytes += bytes;
	while (d->limited && d->bytes >= reset) {
		if (++steps > ROXE_DCQCN_MAX_STEPS) {
			d->bytes %= reset;
			break;
		}
		d->bytes -= reset;
		if (d->b_stages < STAGES_MAX)
			d->b_stages++;
		increase(d, p, false);
	}
}

bool roxe_dcqcn_cnp(struct roxe_dcqcn *d, const struct roxe_dcqcn_params *p, uint64_t now)
{
	uint64_t line = kbps(p->line_rate), floor = kbps(p->min_rate), dec, maxdec, from;
	uint32_t shift = p->gd < ROXE_DCQCN_GD_MIN ? ROXE_DCQCN_GD_MIN :
			 p->gd > ROXE_DCQCN_GD_MAX ? ROXE_DCQCN_GD_MAX : p->gd;
	uint32_t g = p->g > ROXE_DCQCN_G_MAX ? ROXE_DCQCN_G_MAX : p->g;
	uint32_t fac = p->min_dec_fac > 100 ? 100 : p->min_dec_fac;

	if (!p->enabled)
		return false;
	d->cnps++;
	if (floor > line)
		floor = line;
	if (!d->limited) {
		uint32_t a0 = p->initial_alpha > ROXE_DCQCN_ALPHA_MAX ? ROXE_DCQCN_ALPHA_MAX :
			      p->initial_alpha;

		from = line;
		d->limited = true;
		d->alpha = a0 << 10;
		d->rc = d->rt = line;
		if (p->rate_on_first_cnp) {
			/* the first CNP sets both rates, no cut by alpha
			 * (a lower rate all the same, below the line) */
			d->rc = d->rt = kbps(p->rate_on_first_cnp) < line ?
					kbps(p->rate_on_first_cnp) : line;
			if (d->rc < floor)
				d->rc = d->rt = floor;
			goto restart;
		}
		d->rt = d->rc;
	} else {
		roxe_dcqcn_advance(d, p, now);
		if (d->limited && now >= d->cut_at &&
		    now - d->cut_at < (uint64_t)p->reduce_period_us * US_NS)
			return false;	/* one cut per monitor period */
		/* the rate the CNP found, the timers' stages up to now included */
		from = d->limited ? d->rc : line;
		if (!d->limited) {
			/* the timers released it just now: as a first CNP */
			d->limited = true;
			d->alpha = (p->initial_alpha > ROXE_DCQCN_ALPHA_MAX ? ROXE_DCQCN_ALPHA_MAX :
				    p->initial_alpha) << 10;
		}
		if (p->clamp_tgt_rate || (p->clamp_tgt_rate_after_time_inc && d->time_inc))
			d->rt = d->rc;
	}
	dec = d->rc * d->alpha >> (20 + shift - 10);
	maxdec = d->rc * (100 - fac) / 100;
	d->rc -= dec < maxdec ? dec : maxdec;
	if (d->rc < floor)
		d->rc = floor;
	if (d->rt < d->rc)
		d->rt = d->rc;
	d->alpha = (uint32_t)(((uint64_t)d->alpha * g + (uint64_t)(1024 - g) * ROXE_DCQCN_ALPHA_ONE) /
			      1024);
restart:
	d->cut_at = d->alpha_at = d->timer_at = now;
	d->bytes = 0;
	d->t_stages = d->b_stages = 0;
	d->time_inc = false;
	if (d->rc >= line)
		release(d, p);	/* no cut (min_dec_fac 100): nothing to pace */
	/* not at the floor already, nor a cut of nothing (alpha decayed to
	 * 0, min_dec_fac 100) */
	return d->limited && d->rc < from;
}

/* --- the pacer -------------------------------------------------------------------- */
static uint64_t tx_ns(uint64_t bytes, uint64_t rate_kbps)
{
	/* bits / (kbit/s) = ms/1000... in ns: bytes * 8e6 / kbit/s */
	return bytes * 8000000ull / (rate_kbps ? rate_kbps : 1);
}

void roxe_pace_init(struct roxe_pacer *pc, uint64_t now)
{
	pc->vtime = now;
}

uint64_t roxe_pace_when(const struct roxe_pacer *pc, uint64_t now)
{
	return pc->vtime <= now ? 0 : pc->vtime;
}

void roxe_pace_sent(struct roxe_pacer *pc, uint64_t rate_kbps, uint32_t len, uint64_t now)
{
	uint64_t burst = tx_ns(ROXE_PACE_BURST_BYTES, rate_kbps);
	uint64_t from = now > burst ? now - burst : 0;

	if (pc->vtime < from)
		pc->vtime = from;	/* idle: at most a burst's credit */
	pc->vtime += tx_ns(len, rate_kbps);
}
