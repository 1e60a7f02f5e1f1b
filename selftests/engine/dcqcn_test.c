// SPDX-License-Identifier: GPL-2.0-only
/*
 * DCQCN's reaction point and the pacer (user/transport/dcqcn.h).
 *
 * First the arithmetic on a fake clock: a CNP cuts by alpha/2 and raises
 * alpha, one cut per monitor period, alpha decays without CNPs, recovery
 * halves the gap to the target in F stages, then additive and hyper
 * increase, the min rate floor, the line rate cap (and the release there),
 * bounded catch-up after a long idle or a clock gone back, hostile
 * parameter text; the token bucket's rate and burst. Then the engine, on
 * the virtual clock (vclock.h): a CNP slows a QP's WRITE to its rate (the
 * pacer wakes it on its timer: nothing lost, nothing resent, the time taken
 * exactly the bytes' at the rate), and its READ responses too; the rate
 * rises when its timer runs out, not a nanosecond before; without CNPs
 * nothing is paced.
 */
#include <arpa/inet.h>
#include <limits.h>
#include "kselftest_harness.h"
#include "pair.h"
#include "transport/transport.h"
#include "transport/cnp.h"
#include "transport/engine.h"
#include "transport/sendctl.h"
#include "vclock.h"

#define US 1000ull
#define MS 1000000ull

/* The defaults, and a 10 Gbit/s line: easy numbers. */
static void params(struct roxe_dcqcn_params *p)
{
	roxe_dcqcn_defaults(p);
	p->line_rate = 10000;
}

/* Rc after a cut from rc with alpha (/2^20) and gd 11: rc (1 - alpha/2). */
static uint64_t cut(uint64_t rc, uint32_t alpha)
{
	return rc - (rc * alpha >> 21);
}

TEST(defaults_are_the_hardware_s_but_alpha_s)
{
	struct roxe_dcqcn_params p;

	roxe_dcqcn_defaults(&p);
	EXPECT_TRUE(p.enabled);
	EXPECT_EQ(300u, p.time_reset_us);
	EXPECT_EQ(32767u, p.byte_reset);
	EXPECT_EQ(1u, p.threshold);
	EXPECT_EQ(5u, p.ai_rate);
	EXPECT_EQ(50u, p.hai_rate);
	EXPECT_EQ(11u, p.gd);
	EXPECT_EQ(1020u, p.g);			/* the paper's, not hardware's 1019 */
	EXPECT_EQ(55u, p.alpha_period_us);	/* the paper's K, not hardware's 1 */
	EXPECT_EQ(1023u, p.initial_alpha);
	EXPECT_EQ(1u, p.min_rate);
	EXPECT_EQ(50u, p.min_dec_fac);
}

TEST(cnp_cuts_by_alpha_over_two_and_raises_alpha)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 1000 * MS, rc;
	uint32_t a;

	params(&p);
	p.alpha_period_us = 1000000;		/* no decay in this test */
	roxe_dcqcn_init(&d, &p);
	EXPECT_FALSE(d.limited);
	EXPECT_EQ(0u, roxe_dcqcn_rate_mbps(&d));
	roxe_dcqcn_cnp(&d, &p, now);
	ASSERT_TRUE(d.limited);
	/* the first: from the line rate with the initial alpha, 1023/1024 */
	EXPECT_EQ(cut(10000000, 1023u << 10), d.rc);
	EXPECT_EQ(10000000u, d.rt);
	/* alpha = (1 - g) alpha + g, 1 - g = dce_tcp_g/1024 */
	a = (uint32_t)(((uint64_t)(1023u << 10) * p.g +
			(1024ull - p.g) * ROXE_DCQCN_ALPHA_ONE) / 1024);
	EXPECT_EQ(a, d.alpha);
	EXPECT_EQ(5004u, roxe_dcqcn_rate_mbps(&d));	/* 5004.88 */
	/* within the monitor period (4 us): absorbed */
	rc = d.rc;
	roxe_dcqcn_cnp(&d, &p, now + 3 * US);
	EXPECT_EQ(rc, d.rc);
	EXPECT_EQ(a, d.alpha);
	/* after it: cut again with the new alpha; the target stays (no
	 * timer increase since the cut: clamp_tgt_rate_after_time_inc) */
	roxe_dcqcn_cnp(&d, &p, now + 5 * US);
	EXPECT_EQ(cut(rc, a), d.rc);
	EXPECT_EQ(10000000u, d.rt);
	EXPECT_GT(d.alpha, a);
	EXPECT_EQ(3u, d.cnps);
	/* clamp_tgt_rate: the target follows every cut (the paper's) */
	p.clamp_tgt_rate = true;
	rc = d.rc;
	roxe_dcqcn_cnp(&d, &p, now + 10 * US);
	EXPECT_EQ(rc, d.rt);
}

TEST(alpha_decays_without_cnps)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 5 * MS;
	double want;
	uint32_t a0;

	params(&p);
	p.alpha_period_us = 55;			/* the paper's K */
	p.g = 1020;				/* the paper's g: 1/256 */
	p.time_reset_us = ROXE_DCQCN_TIME_MAX;	/* no increase meanwhile */
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	a0 = d.alpha;
	roxe_dcqcn_advance(&d, &p, now + 54 * US);
	EXPECT_EQ(a0, d.alpha);			/* not a whole period yet */
	roxe_dcqcn_advance(&d, &p, now + 55 * US);
	EXPECT_EQ((uint32_t)((uint64_t)a0 * (1020u << 10) >> 20), d.alpha);
	/* 100 periods: (255/256)^100 of it, to fixed-point rounding */
	roxe_dcqcn_advance(&d, &p, now + 100 * 55 * US);
	want = a0;
	for (int i = 0; i < 100; i++)
		want *= 1020.0 / 1024;
	EXPECT_LE(d.alpha, (uint32_t)(want * 1.001) + 1);
	EXPECT_GE(d.alpha, (uint32_t)(want * 0.99));
	/* a long idle decays it to nothing, in bounded work */
	roxe_dcqcn_advance(&d, &p, now + 100000 * MS);
	EXPECT_EQ(0u, d.alpha);
}

TEST(fast_recovery_halves_the_gap_in_f_stages_then_additive)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 7 * MS, rc, rt;

	params(&p);
	p.threshold = 5;			/* the paper's F */
	p.byte_reset = 0;			/* the timer alone */
	p.alpha_period_us = 1000000;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	rc = d.rc;
	rt = d.rt;
	for (int i = 1; i <= 5; i++) {
		roxe_dcqcn_advance(&d, &p, now + (uint64_t)i * 300 * US);
		rc = (rc + rt + 1) / 2;
		EXPECT_EQ(rt, d.rt);		/* fast recovery: the target holds */
		EXPECT_EQ(rc, d.rc);
		EXPECT_EQ((uint32_t)i, d.t_stages);
	}
	/* 5 stages: within 1/32 of the gap */
	EXPECT_GE(d.rc, rt - (rt - cut(rt, 1023u << 10)) / 32 - 1);
	/* the sixth: additive increase, Rt + 5 Mbit/s */
	roxe_dcqcn_advance(&d, &p, now + 6 * 300 * US);
	EXPECT_EQ(rt, d.rt);			/* at the line: capped */
	/* below the line the target grows by ai_rate per stage */
	p.line_rate = 40000;
	roxe_dcqcn_init(&d, &p);
	p.rate_on_first_cnp = 1000;
	roxe_dcqcn_cnp(&d, &p, now);		/* Rc = Rt = 1 Gbit/s, no cut */
	EXPECT_EQ(1000000u, d.rc);
	roxe_dcqcn_cnp(&d, &p, now + 10 * US);	/* a cut: Rt stays 1 Gbit/s */
	rt = d.rt;
	for (int i = 1; i <= 7; i++) {
		roxe_dcqcn_advance(&d, &p, now + 10 * US + (uint64_t)i * 300 * US);
		if (i > 5)
			rt += 5000;
		EXPECT_EQ(rt, d.rt);
	}
}

TEST(hyper_increase_when_both_counters_pass_f)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 9 * MS, rt;

	params(&p);
	p.threshold = 2;
	p.byte_reset = 1;			/* 64 bytes a stage */
	p.alpha_period_us = 1000000;
	p.rate_on_first_cnp = 100;		/* far below the line */
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	rt = d.rt;
	/* three byte stages: counters (T 0, B 3): additive on the third */
	roxe_dcqcn_sent(&d, &p, 64, now);
	roxe_dcqcn_sent(&d, &p, 64, now);
	EXPECT_EQ(rt, d.rt);
	roxe_dcqcn_sent(&d, &p, 64, now);
	rt += 5000;
	EXPECT_EQ(rt, d.rt);
	/* three timer stages: (T 1, B 3) additive, (2, 3) additive, then
	 * (3, 3): both past F = 2, hyper: Rt + (3 - 2) x 50 Mbit/s */
	roxe_dcqcn_advance(&d, &p, now + 300 * US);
	rt += 5000;
	EXPECT_EQ(rt, d.rt);
	roxe_dcqcn_advance(&d, &p, now + 600 * US);
	rt += 5000;
	EXPECT_EQ(rt, d.rt);
	roxe_dcqcn_advance(&d, &p, now + 900 * US);
	rt += 50000;
	EXPECT_EQ(rt, d.rt);
	/* one byte stage more: (3, 4): min 3, hyper by 1 x 50 again */
	roxe_dcqcn_sent(&d, &p, 64, now + 900 * US);
	rt += 50000;
	EXPECT_EQ(rt, d.rt);
	/* a fourth timer stage: (4, 4): hyper by 2 x 50 */
	roxe_dcqcn_advance(&d, &p, now + 1200 * US);
	rt += 100000;
	EXPECT_EQ(rt, d.rt);
}

TEST(min_rate_floor_and_min_dec_fac)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 11 * MS, prev;

	params(&p);
	p.min_rate = 100;
	p.gd = 10;				/* cut by alpha: up to all of it */
	p.min_dec_fac = 0;
	p.time_reset_us = ROXE_DCQCN_TIME_MAX;
	roxe_dcqcn_init(&d, &p);
	for (int i = 0; i < 1000; i++)
		roxe_dcqcn_cnp(&d, &p, now + (uint64_t)i * 10 * US);
	EXPECT_EQ(100000u, d.rc);		/* never below min_rate */
	EXPECT_EQ(100u, roxe_dcqcn_rate_mbps(&d));
	/* min_dec_fac 50: a cut leaves at least half */
	p.min_dec_fac = 50;
	p.min_rate = 1;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	EXPECT_EQ(5000000u, d.rc);
	prev = d.rc;
	roxe_dcqcn_cnp(&d, &p, now + 10 * US);
	EXPECT_EQ(prev / 2, d.rc);
	/* 100: no cut at all, so nothing to pace */
	p.min_dec_fac = 100;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	EXPECT_FALSE(d.limited);
}

/* What roxe_dcqcn_cnp says (the QP's cc_rate_cuts counts it): true
 * exactly when the rate after the CNP is below the rate it found. */
TEST(cnp_says_whether_it_lowered_the_rate)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 12 * MS, rc, t;
	unsigned cuts = 0, n;

	params(&p);
	p.alpha_period_us = 1000000;		/* no decay */
	p.time_reset_us = ROXE_DCQCN_TIME_MAX;	/* no increase */
	p.byte_reset = 0;
	roxe_dcqcn_init(&d, &p);
	/* off: nothing */
	p.enabled = false;
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, now));
	p.enabled = true;
	/* from the line rate: a cut */
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now));
	rc = d.rc;
	/* within the monitor period: absorbed, no cut */
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, now + 3 * US));
	EXPECT_EQ(rc, d.rc);
	/* past it: a cut */
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now + 5 * US));
	EXPECT_LT(d.rc, rc);
	/* down to the floor: every CNP a cut until Rc sits on min_rate,
	 * none after */
	p.min_rate = 1000;
	for (n = 0, t = now + 10 * US; n < 100; n++, t += 10 * US) {
		rc = d.rc;
		if (roxe_dcqcn_cnp(&d, &p, t)) {
			cuts++;
			EXPECT_LT(d.rc, rc);
		} else {
			EXPECT_EQ(rc, d.rc);
		}
	}
	EXPECT_EQ(1000000u, d.rc);
	EXPECT_GT(cuts, 0u);
	EXPECT_LT(cuts, 100u);
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, t));
	/* a first CNP's rate_on_first_cnp: below the line, lower; at or
	 * above it, not (the QP stays unlimited) */
	p.min_rate = 1;
	p.rate_on_first_cnp = 1000;
	roxe_dcqcn_init(&d, &p);
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now));
	p.rate_on_first_cnp = p.line_rate;
	roxe_dcqcn_init(&d, &p);
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, now));
	EXPECT_FALSE(d.limited);
	p.rate_on_first_cnp = 0;
	/* min_dec_fac 100: a cut of nothing */
	p.min_dec_fac = 100;
	roxe_dcqcn_init(&d, &p);
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, now));
	p.min_dec_fac = 50;
	/* alpha decayed to nothing while limited: a cut of nothing too */
	p.alpha_period_us = 1;
	roxe_dcqcn_init(&d, &p);
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now));
	rc = d.rc;
	EXPECT_FALSE(roxe_dcqcn_cnp(&d, &p, now + 10 * MS));
	EXPECT_EQ(rc, d.rc);
	EXPECT_TRUE(d.limited);
	/* released by the timers, then a CNP: from the line rate again */
	params(&p);
	p.byte_reset = 0;
	roxe_dcqcn_init(&d, &p);
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now));
	roxe_dcqcn_advance(&d, &p, now + 100 * MS);
	ASSERT_FALSE(d.limited);
	EXPECT_TRUE(roxe_dcqcn_cnp(&d, &p, now + 100 * MS));
	EXPECT_TRUE(d.limited);
}

TEST(recovers_to_the_line_rate_and_releases)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 13 * MS, t;
	int stages = 0;

	params(&p);
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	ASSERT_TRUE(d.limited);
	for (t = now; d.limited && stages < 100; stages++) {
		t += 300 * US;
		roxe_dcqcn_advance(&d, &p, t);
		EXPECT_LE(d.rc, 10000000u);	/* never past the line */
		EXPECT_LE(d.rt, 10000000u);
		EXPECT_LE(d.rc, d.rt);
	}
	EXPECT_FALSE(d.limited);
	EXPECT_LT(stages, 40);
	EXPECT_EQ(0u, roxe_dcqcn_rate_mbps(&d));
	EXPECT_EQ(10000000u, d.rc);
	/* off: a CNP changes nothing */
	p.enabled = false;
	roxe_dcqcn_cnp(&d, &p, t + MS);
	EXPECT_FALSE(d.limited);
}

TEST(timers_are_bounded)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 15 * MS;

	params(&p);
	p.time_reset_us = 1;
	p.byte_reset = 1;
	p.threshold = 31;			/* fast recovery only: rc creeps up */
	p.min_rate = 1;
	p.rate_on_first_cnp = 1;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	p.rate_on_first_cnp = 0;
	p.gd = 10;
	p.min_dec_fac = 0;
	/* a day's idle: at most ROXE_DCQCN_MAX_STEPS stages */
	roxe_dcqcn_advance(&d, &p, now + 86400000 * MS);
	EXPECT_LE(d.t_stages, (uint32_t)ROXE_DCQCN_MAX_STEPS);
	/* the clock goes back: no time passed, nothing changes */
	{
		struct roxe_dcqcn before = d;

		roxe_dcqcn_advance(&d, &p, now);
		EXPECT_EQ(before.rc, d.rc);
		EXPECT_EQ(before.rt, d.rt);
		EXPECT_EQ(before.alpha, d.alpha);
	}
	/* 4 GiB in one call: bounded stages, the counter stays below a stage */
	roxe_dcqcn_sent(&d, &p, UINT32_MAX, now);
	EXPECT_LE(d.b_stages, (uint32_t)ROXE_DCQCN_MAX_STEPS);
	EXPECT_LT(d.bytes, 64u);
}

TEST(absurd_parameters_stay_bounded)
{
	struct roxe_dcqcn_params p;
	struct roxe_dcqcn d;
	uint64_t now = 17 * MS;

	/* what parse would refuse, set directly: the arithmetic clamps */
	params(&p);
	p.gd = 0;
	p.g = 5000;
	p.initial_alpha = 99999;
	p.min_dec_fac = 1000;
	p.min_rate = 99999;			/* above the line: the line */
	p.time_reset_us = 0;
	p.alpha_period_us = 0;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	roxe_dcqcn_advance(&d, &p, now + 1000 * MS);
	roxe_dcqcn_sent(&d, &p, 1000, now + 1000 * MS);
	EXPECT_LE(d.rc, 10000000u);
	EXPECT_LE(d.alpha, ROXE_DCQCN_ALPHA_ONE);
	/* the highest rates: no overflow in the cut */
	params(&p);
	p.line_rate = ROXE_DCQCN_RATE_MAX;
	p.gd = 10;
	p.min_dec_fac = 0;
	roxe_dcqcn_init(&d, &p);
	roxe_dcqcn_cnp(&d, &p, now);
	EXPECT_LT(d.rc, (uint64_t)ROXE_DCQCN_RATE_MAX * 1000 / 100);
	EXPECT_GE(d.rc, 1000u);
}

TEST(parse_takes_valid_items_and_refuses_hostile_text)
{
	static const char *const bad[] = {
		"nope=1", "ai_rate", "ai_rate=", "=5", "ai_rate=-1", "ai_rate= 5",
		"ai_rate=5x", "ai_rate=99999999999999999999", "ai_rate=400001",
		"gd=9", "gd=16", "threshold=0", "threshold=32", "g=1024",
		"initial_alpha=0", "byte_reset=32768", "time_reset_us=0",
		"time_reset_us=131072", "clamp_tgt_rate=2", "cc=maybe", "on,of",
		"min_rate=20000,line_rate=10000", "ai_rate=5,,", "ai_rate=0x10",
		"ai_rate=00000000000000001",
	};
	struct roxe_dcqcn_params p, def;
	char err[80], big[5000];

	roxe_dcqcn_defaults(&def);
	p = def;
	ASSERT_EQ(0, roxe_dcqcn_parse(&p, NULL, err, sizeof(err)));
	ASSERT_EQ(0, roxe_dcqcn_parse(&p, "", err, sizeof(err)));
	EXPECT_EQ(0, memcmp(&p, &def, sizeof(p)));
	ASSERT_EQ(0, roxe_dcqcn_parse(&p, "ai_rate=10,time_reset_us=55,threshold=5,"
				      "clamp_tgt_rate=1,line_rate=25000", err, sizeof(err)));
	EXPECT_EQ(10u, p.ai_rate);
	EXPECT_EQ(55u, p.time_reset_us);
	EXPECT_EQ(5u, p.threshold);
	EXPECT_TRUE(p.clamp_tgt_rate);
	EXPECT_EQ(25000u, p.line_rate);
	ASSERT_EQ(0, roxe_dcqcn_parse(&p, "off", err, sizeof(err)));
	EXPECT_FALSE(p.enabled);
	ASSERT_EQ(0, roxe_dcqcn_parse(&p, "cc=on", err, sizeof(err)));
	EXPECT_TRUE(p.enabled);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct roxe_dcqcn_params q = def;

		EXPECT_EQ(-EINVAL, roxe_dcqcn_parse(&q, bad[i], err, sizeof(err)))
			TH_LOG("accepted '%s'", bad[i]);
		EXPECT_EQ(0, memcmp(&q, &def, sizeof(q)))	/* all or nothing */
			TH_LOG("'%s' changed the parameters", bad[i]);
		EXPECT_NE(0, err[0]) TH_LOG("no message for '%s'", bad[i]);
	}
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(-EINVAL, roxe_dcqcn_parse(&p, big, err, sizeof(err)));
	EXPECT_LT(strlen(err), sizeof(err));
}

/* --- the pacer ------------------------------------------------------------------ */
TEST(pacer_holds_the_rate_with_a_small_burst)
{
	enum { LEN = 1000 };
	struct roxe_pacer pc;
	uint64_t rate = 1000000;		/* 1 Gbit/s: 8 us per frame */
	uint64_t t0 = 3 * MS, now = t0, sent = 0, first_wait = 0;
	unsigned burst = 0;

	roxe_pace_init(&pc, now);
	/* at once: the burst allowance and one frame more, then a wait */
	while (!roxe_pace_when(&pc, now)) {
		roxe_pace_sent(&pc, rate, LEN, now);
		burst++;
	}
	EXPECT_LE(burst * LEN, ROXE_PACE_BURST_BYTES + 2 * LEN);
	EXPECT_GE(burst, 1u);
	/* then one frame per 8 us, each exactly when allowed */
	sent = (uint64_t)burst * LEN;
	for (int i = 0; i < 10000; i++) {
		uint64_t when = roxe_pace_when(&pc, now);

		if (when) {
			EXPECT_GT(when, now);
			if (!first_wait)
				first_wait = when - now;
			EXPECT_FALSE(roxe_pace_when(&pc, when) == 0 &&
				     roxe_pace_when(&pc, when - 1) == 0);
			now = when;
			continue;
		}
		roxe_pace_sent(&pc, rate, LEN, now);
		sent += LEN;
	}
	EXPECT_LE(first_wait, 8 * US);
	/* bytes over time: the rate, plus the burst */
	EXPECT_LE(sent * 8000000 / rate, now - t0 + 2 * (ROXE_PACE_BURST_BYTES + LEN) * 8);
	EXPECT_GE(sent * 8000000 / rate, now - t0);
	/* idle for a second: credit for one burst only */
	now += 1000 * MS;
	burst = 0;
	while (!roxe_pace_when(&pc, now)) {
		roxe_pace_sent(&pc, rate, LEN, now);
		burst++;
	}
	EXPECT_LE(burst * LEN, ROXE_PACE_BURST_BYTES + 2 * LEN);
}

/* --- two senders, one marking queue, a fake clock ---------------------------------
 *
 * The reaction point and the pacer as the requester drives them, against a
 * simulated switch port: C Mbit/s, marks frames that find K bytes queued,
 * drops past the limit; the receiver sends a flow a CNP for a marked frame
 * at most once per 50 us (the notification point's default interval); CNPs
 * and frames take half an RTT each way. The first sender starts alone at
 * the line rate, the second joins 50 ms later (the first holds all the
 * port then); with the device defaults, over the second half of 400 ms,
 * they share the port, keep it busy and the queue below its limit.
 */
struct sim_flow {
	struct roxe_dcqcn	d;
	struct roxe_pacer	pc;
	uint64_t		last_cnp, sent_late;
	uint64_t		cnp_due[64];	/* CNPs in flight: arrival times */
	unsigned		ncnp;
};

static void sim(struct __test_metadata *_metadata, const struct roxe_dcqcn_params *p,
		unsigned port_mbps, uint64_t start1, uint64_t *drops_late, uint64_t share[2],
		uint64_t *peak_late)
{
	enum { FRAME = 1100, LIMIT = 256 << 10, K = 32 << 10 };
	const uint64_t step = 1 * US, end = 400 * MS, late = 200 * MS, half_rtt = 10 * US;
	struct sim_flow f[2];
	double q = 0;				/* bytes queued */
	uint64_t drops = 0;

	memset(f, 0, sizeof(f));
	*peak_late = 0;
	for (int i = 0; i < 2; i++) {
		roxe_dcqcn_init(&f[i].d, p);
		roxe_pace_init(&f[i].pc, 0);
	}
	for (uint64_t now = step; now < end; now += step) {
		q -= (double)port_mbps * 1e6 / 8 * step / 1e9;
		if (q < 0)
			q = 0;
		for (int i = 0; i < 2; i++) {
			struct sim_flow *s = &f[i];

			if (i == 1 && now < start1)
				continue;		/* the second sender joins later */
			if (i == 1 && now == start1)
				roxe_pace_init(&s->pc, now);
			/* CNPs that arrived */
			for (unsigned k = 0; k < s->ncnp; k++)
				if (s->cnp_due[k] <= now) {
					bool was = s->d.limited;

					roxe_dcqcn_cnp(&s->d, p, now);
					if (!was && s->d.limited)
						roxe_pace_init(&s->pc, now);
					s->cnp_due[k--] = s->cnp_due[--s->ncnp];
				}
			roxe_dcqcn_advance(&s->d, p, now);
			/* frames the pacer lets go this microsecond (an
			 * unlimited QP: the line rate, as the wire holds it) */
			for (int n = 0; n < 64; n++) {
				uint64_t rate = s->d.limited ? s->d.rc : (uint64_t)p->line_rate * 1000;

				if (roxe_pace_when(&s->pc, now))
					break;
				roxe_pace_sent(&s->pc, rate, FRAME, now);
				roxe_dcqcn_sent(&s->d, p, FRAME, now);
				if (q + FRAME > LIMIT) {
					if (now >= late)
						drops++;
					continue;
				}
				if (q >= K && now - s->last_cnp >= 50 * US && s->ncnp < 64) {
					/* marked: the receiver's CNP comes back */
					s->last_cnp = now;
					s->cnp_due[s->ncnp++] = now + 2 * half_rtt;
				}
				q += FRAME;
				if (now >= late)
					s->sent_late += FRAME;
			}
		}
		if (now >= late && q > *peak_late)
			*peak_late = (uint64_t)q;
	}
	*drops_late = drops;
	share[0] = f[0].sent_late;
	share[1] = f[1].sent_late;
	TH_LOG("port %u Mbit/s: second half %.1f + %.1f Mbit/s, %llu drops, peak queue %llu B",
	       port_mbps, f[0].sent_late * 8.0 / ((end - late) / 1e9) / 1e6,
	       f[1].sent_late * 8.0 / ((end - late) / 1e9) / 1e6, (unsigned long long)drops,
	       (unsigned long long)*peak_late);
}

TEST(two_senders_share_a_marking_port)
{
	/* senders on links as fast as the port, 5x, and as a veth (which
	 * tells no speed: roxe's 100 Gbit/s) */
	static const uint32_t lines[] = { 200, 1000, ROXE_DCQCN_LINE_RATE_DEF };
	struct roxe_dcqcn_params p;
	uint64_t drops, share[2], peak, total;

	for (unsigned i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		roxe_dcqcn_defaults(&p);
		p.line_rate = lines[i];
		sim(_metadata, &p, 200, 50 * MS, &drops, share, &peak);
		total = share[0] + share[1];
		/* the port stays busy, neither sender starves, nothing lost */
		EXPECT_GT(total * 8 / 200000, 160u);	/* Mbit/s over 200 ms: 80 % */
		EXPECT_GT(share[0] * 100 / total, 40u);
		EXPECT_GT(share[1] * 100 / total, 40u);
		EXPECT_EQ(0u, drops);
		EXPECT_LT(peak, 128u << 10);
	}
	/* hardware's alpha timer (1 us, g 5/1024) with roxe's CNP interval
	 * (50 us): the cuts fade, the port overflows (why the defaults take
	 * the paper's; limits.h) */
	roxe_dcqcn_defaults(&p);
	p.line_rate = 1000;
	p.alpha_period_us = 1;
	p.g = 1019;
	sim(_metadata, &p, 200, 50 * MS, &drops, share, &peak);
	EXPECT_GT(drops, 0u);
	/* off: the queue overflows (the model can tell) */
	p.enabled = false;
	sim(_metadata, &p, 200, 50 * MS, &drops, share, &peak);
	EXPECT_GT(drops, 0u);
}

/* --- the engine ------------------------------------------------------------------ */
FIXTURE(eng)
{
	struct pair p;
};

FIXTURE_SETUP(eng)
{
	/* Time moves only when the test moves it: to the pacer's deadline
	 * once the pair has done all it can before it. */
	vc_start();
	/* side 0 polled: the test runs its turns, so it may act as its
	 * engine (deliver a CNP) between them */
	ASSERT_EQ(0, pair_open_polled(&self->p, 1024, 1 << 20, 1));
	ASSERT_EQ(0, pair_connect(&self->p, IBV_QPT_RC, IBV_MTU_1024, 100, 200, 16, 7, 7));
}

FIXTURE_TEARDOWN(eng)
{
	pair_close(&self->p);
	EXPECT_EQ(0, leak_check());
}

/* A WRITE of len bytes from side 0, completed; the clock moved to the
 * next deadline (the pacer's) whenever the pair had done all it could
 * before it: *steps times. */
static int write_all(struct pair *p, uint32_t len, unsigned *steps)
{
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	int n;

	n = post_send1(p->s[0].qp, IBV_WR_RDMA_WRITE, 1, p->s[0].buf, len, p->s[0].mr->lkey,
		       (uintptr_t)p->s[1].buf, p->s[1].mr->rkey, IBV_SEND_SIGNALED);
	if (n)
		return n;
	n = vc_poll(p, p->s[0].cq, &wc, 1, 100000, steps);
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
}

/* What n bytes take at mbps: the pacer's arithmetic (bits / (kbit/s)). */
static uint64_t at_rate_ns(uint64_t n, uint32_t mbps)
{
	return n * 8000000ull / (mbps * 1000ull);
}

/* A paced transfer that took `took` from the CNP on: every frame but the
 * last waited for the ones before it, no longer; the last (1 KiB of data
 * and its headers, under 128 B) left as the one before it had gone. */
static void last_frame_ends_it(struct __test_metadata *_metadata,
			       const struct roxe_qp_stats *st, uint64_t took, uint32_t mbps)
{
	uint64_t all = at_rate_ns(st->tx_bytes, mbps);

	ASSERT_LE(took, all);
	EXPECT_GE(all - took, at_rate_ns(1024, mbps));
	EXPECT_LT(all - took, at_rate_ns(1024 + 128, mbps))
		TH_LOG("%llu ns at the rate, %llu taken", (unsigned long long)all,
		       (unsigned long long)took);
}

/* A turn: the engine takes the QP's RTS (which starts it unlimited); then
 * a CNP at rate_on_first_cnp Mbit/s, no recovery during the test. */
static void limit(struct __test_metadata *_metadata, struct pair *p, uint32_t mbps)
{
	struct roxe_qp *qp = p->s[0].qp;
	struct ibv_wc wc;

	ASSERT_EQ(0, roxe_poll_cq(p->s[0].cq, 1, &wc));
	ASSERT_EQ(IBV_QPS_RTS, qp->eng_state);
	qp->eng->cc.rate_on_first_cnp = mbps;
	qp->eng->cc.time_reset_us = ROXE_DCQCN_TIME_MAX;
	qp->eng->cc.byte_reset = 0;
	qp->eng->now = vc_now();
	roxe_dcqcn_qp_cnp(qp);
	ASSERT_TRUE(qp->req.cc.limited);
}

TEST_F(eng, a_cnp_paces_the_qp_to_its_rate)
{
	enum { LEN = 1 << 20 };
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	uint64_t t0, took;
	unsigned steps = 0;

	limit(_metadata, &self->p, 80);		/* 10 MB/s: 1 MiB in ~110 ms */
	EXPECT_EQ(80u, st->cc_rate_mbps);
	EXPECT_EQ(1u, st->cc_rate_cuts);	/* from the line rate to 80 */
	fill_pattern(self->p.s[0].buf, LEN, 5);
	t0 = vc_now();
	ASSERT_EQ(0, write_all(&self->p, LEN, &steps));
	took = vc_now() - t0;
	TH_LOG("1 MiB at 80 Mbit/s: %.1f ms (%llu bytes in %llu frames, %llu resent, %u steps)",
	       took / 1e6, (unsigned long long)st->tx_bytes,
	       (unsigned long long)st->tx_packets, (unsigned long long)st->retransmits, steps);
	EXPECT_EQ(0, memcmp(self->p.s[0].buf, self->p.s[1].buf, LEN));
	EXPECT_EQ(0u, st->retransmits);
	EXPECT_EQ(0u, st->timeouts);
	/* never faster than the rate (the frames carry more than 1 MiB) */
	EXPECT_GE(took, (uint64_t)(LEN - ROXE_PACE_BURST_BYTES) * 8000000 / 80000);
	/* and no slower: each frame left when the bytes before it had, at the
	 * rate, from the CNP on; the last one's ACK ends it */
	last_frame_ends_it(_metadata, st, took, 80);
	/* one step of the clock per frame the pacer held */
	EXPECT_EQ(st->tx_packets - 1, steps);
	/* still limited, at the CNP's rate: the recovery timer
	 * (time_reset_us, 131 ms) has not run out in the ~110 ms it took */
	EXPECT_EQ(80u, st->cc_rate_mbps);
	EXPECT_EQ(1u, st->cc_rate_cuts);
}

/* DCQCN limits what the QP sends, READ responses too (a NIC's rate limiter
 * holds the QP's every data frame): side 0 answers side 1's 1 MiB READ no
 * faster than the rate CNPs gave it. Measured before: the responses left
 * unpaced, in a few milliseconds. */
TEST_F(eng, a_cnp_paces_the_qp_s_read_responses)
{
	enum { LEN = 1 << 20 };
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	struct side *b = &self->p.s[1];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	uint64_t t0, took;
	unsigned steps = 0;

	limit(_metadata, &self->p, 80);		/* 10 MB/s: 1 MiB in ~110 ms */
	fill_pattern(self->p.s[0].buf, LEN, 7);
	t0 = vc_now();
	ASSERT_EQ(0, post_send1(b->qp, IBV_WR_RDMA_READ, 1, b->buf, LEN, b->mr->lkey,
				(uintptr_t)self->p.s[0].buf, self->p.s[0].mr->rkey,
				IBV_SEND_SIGNALED));
	/* side 0 is polled: vc_poll runs its turns */
	ASSERT_EQ(1, vc_poll(&self->p, b->cq, &wc, 1, 100000, &steps))
		TH_LOG("the READ did not complete");
	took = vc_now() - t0;
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(self->p.s[0].buf, b->buf, LEN));
	TH_LOG("1 MiB of READ responses at 80 Mbit/s: %.1f ms (%llu frames, %u steps)",
	       took / 1e6, (unsigned long long)st->tx_packets, steps);
	EXPECT_GE(took, (uint64_t)(LEN - ROXE_PACE_BURST_BYTES) * 8000000 / 80000);
	/* each response left when the ones before it had, at the rate */
	last_frame_ends_it(_metadata, st, took, 80);
	EXPECT_EQ(0u, self->p.s[1].dev->qp_stats[roxe_qp_num(b->qp)].timeouts);
}

/* When the pacer holds the QP: its timer is armed for the time the next
 * frame may leave (the engine sleeps until then, no spin), and the last
 * frame sent asked for an ACK (else only the tail probe would bring one:
 * measured before that, 91 probes and resends in a paced 1 MiB WRITE). */
TEST_F(eng, a_held_qp_waits_on_its_timer_and_asked_for_an_ack)
{
	enum { LEN = 256 * 1024 };
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	struct roxe_engine *e;
	int held = 0, n = 0;

	limit(_metadata, &self->p, 20);
	e = qp->eng;
	ASSERT_EQ(0, post_send1(qp, IBV_WR_RDMA_WRITE, 1, self->p.s[0].buf, LEN,
				self->p.s[0].mr->lkey, (uintptr_t)self->p.s[1].buf,
				self->p.s[1].mr->rkey, IBV_SEND_SIGNALED));
	/* a frame a step at most: bounded by the frames, not by time */
	for (int i = 0; i < 4 * LEN / 1024 && !n; i++) {
		ASSERT_EQ(0, vc_settle(&self->p));
		n = roxe_poll_cq(self->p.s[0].cq, 1, &wc);
		ASSERT_LE(0, n);
		if (n)
			break;
		/* settled and not done: only the pacer holds it */
		ASSERT_TRUE(qp->req.pace_wait);
		held++;
		EXPECT_NE(NULL, qp->timer_pprev);	/* on the timer list */
		EXPECT_NE(0u, e->next_timer);
		EXPECT_LE(e->next_timer, qp->req.pace_deadline);
		EXPECT_GT(qp->req.pace_deadline, e->now);
		EXPECT_EQ(0u, qp->req.since_ackreq);
		/* the deadline it waits for is the earliest there is */
		ASSERT_EQ(qp->req.pace_deadline, vc_next_deadline(&self->p));
		roxe_clock_advance(qp->req.pace_deadline - vc_now());
	}
	ASSERT_EQ(1, n) TH_LOG("not complete after %d steps", held);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_GT(held, 0);
	EXPECT_EQ(0u, st->retransmits);
}

/* The rate rises by the increase timer alone, a stage a millisecond. */
static void timer_stages_only(struct roxe_qp *qp)
{
	qp->eng->cc.time_reset_us = 1000;
	qp->eng->cc.byte_reset = 0;
}

/* The rate increase timer (time_reset_us) runs on the engine's clock: a
 * nanosecond short of its period the QP still sends at the cut rate, on
 * it at the first recovery stage's, which the arithmetic above pins. */
TEST_F(eng, the_rate_rises_when_its_timer_runs_out)
{
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	struct roxe_dcqcn expect;
	struct ibv_wc wc;
	unsigned steps = 0;
	uint64_t cut;

	ASSERT_EQ(0, roxe_poll_cq(self->p.s[0].cq, 1, &wc));	/* RTS taken */
	timer_stages_only(qp);
	qp->eng->now = vc_now();
	roxe_dcqcn_qp_cnp(qp);			/* a cut from the line rate */
	ASSERT_TRUE(qp->req.cc.limited);
	cut = st->cc_rate_mbps;
	expect = qp->req.cc;
	roxe_dcqcn_advance(&expect, &qp->eng->cc, vc_now() + 1000 * US);
	ASSERT_GT(roxe_dcqcn_rate_mbps(&expect), cut);	/* a stage shows */
	ASSERT_EQ(0, vc_advance(&self->p, 1000 * US - 1));
	ASSERT_EQ(0, write_all(&self->p, 1024, &steps));
	EXPECT_EQ(cut, st->cc_rate_mbps);
	ASSERT_EQ(0, vc_advance(&self->p, 1));
	ASSERT_EQ(0, write_all(&self->p, 1024, &steps));
	EXPECT_EQ(roxe_dcqcn_rate_mbps(&expect), st->cc_rate_mbps);
	EXPECT_EQ(0u, steps);			/* the pacer held neither */
	TH_LOG("cut to %llu Mbit/s, %llu after one period", (unsigned long long)cut,
	       (unsigned long long)st->cc_rate_mbps);
}

TEST_F(eng, without_cnps_nothing_is_paced)
{
	enum { LEN = 1 << 20 };
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	unsigned steps = 0;

	ASSERT_EQ(0, write_all(&self->p, LEN, &steps));
	EXPECT_EQ(0u, steps);		/* nothing waited on a timer */
	EXPECT_FALSE(qp->req.cc.limited);
	EXPECT_FALSE(qp->req.pace_wait);
	EXPECT_EQ(0u, st->cc_rate_mbps);
	/* off: a CNP changes nothing */
	qp->eng->cc.enabled = false;
	roxe_dcqcn_qp_cnp(qp);
	EXPECT_FALSE(qp->req.cc.limited);
}

/* cc_rate_cuts, the QP's count of CNPs that lowered its rate: a CNP
 * within the monitor period, the increase timer's stages and a CNP with
 * congestion control off leave it; each CNP that cut adds one, whatever
 * the rate was when anyone looked (cnp_received counts every CNP). */
TEST_F(eng, cc_rate_cuts_counts_the_cnps_that_cut)
{
	struct roxe_qp *qp = self->p.s[0].qp;
	struct roxe_qp_stats *st = &self->p.s[0].dev->qp_stats[roxe_qp_num(qp)];
	struct ibv_wc wc;
	unsigned steps = 0;
	uint64_t cut;

	ASSERT_EQ(0, roxe_poll_cq(self->p.s[0].cq, 1, &wc));	/* RTS taken */
	timer_stages_only(qp);
	EXPECT_EQ(0u, st->cc_rate_cuts);
	/* a cut from the line rate */
	qp->eng->now = vc_now();
	roxe_cnp_received(qp);
	EXPECT_EQ(1u, st->cnp_received);
	EXPECT_EQ(1u, st->cc_rate_cuts);
	cut = st->cc_rate_mbps;
	ASSERT_NE(0u, cut);
	/* the same instant: within the monitor period, no cut */
	roxe_cnp_received(qp);
	EXPECT_EQ(2u, st->cnp_received);
	EXPECT_EQ(1u, st->cc_rate_cuts);
	EXPECT_EQ(cut, st->cc_rate_mbps);
	/* a timer stage raises the rate: no cut */
	ASSERT_EQ(0, vc_advance(&self->p, 1000 * US));
	ASSERT_EQ(0, write_all(&self->p, 1024, &steps));
	EXPECT_GT(st->cc_rate_mbps, cut);
	EXPECT_EQ(1u, st->cc_rate_cuts);
	/* past the period: a cut again */
	cut = st->cc_rate_mbps;
	qp->eng->now = vc_now();
	roxe_cnp_received(qp);
	EXPECT_LT(st->cc_rate_mbps, cut);
	cut = st->cc_rate_mbps;
	EXPECT_EQ(3u, st->cnp_received);
	EXPECT_EQ(2u, st->cc_rate_cuts);
	/* off: counted as received, no cut */
	qp->eng->cc.enabled = false;
	ASSERT_EQ(0, vc_advance(&self->p, 10 * US));
	qp->eng->now = vc_now();
	roxe_cnp_received(qp);
	EXPECT_EQ(4u, st->cnp_received);
	EXPECT_EQ(2u, st->cc_rate_cuts);
	/* ten more stages: the rate rises, the count stays */
	ASSERT_EQ(0, vc_advance(&self->p, 10 * MS));
	ASSERT_EQ(0, write_all(&self->p, 1024, &steps));
	EXPECT_GT(st->cc_rate_mbps, cut);
	EXPECT_EQ(2u, st->cc_rate_cuts);
}

TEST(device_cc_text_is_checked)
{
	struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_port *port;
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .engines = 1,
				       .mtu = 1024, .polled = true };
	struct roxe_device *dev = NULL;

	ASSERT_NE(NULL, w);
	port = roxe_loop_port(w, 0);
	da.ports = &port;
	roxe_gid_from_v4(da.gid, htonl(0x0a630001));
	da.cc = "ai_rate=999999";
	EXPECT_EQ(-EINVAL, roxe_device_open(&da, &dev));
	da.cc = "threshold=5,ai_rate=40";
	ASSERT_EQ(0, roxe_device_open(&da, &dev));
	EXPECT_EQ(5u, dev->engines[0].cc.threshold);
	EXPECT_EQ(40u, dev->engines[0].cc.ai_rate);
	roxe_device_close(dev);
	roxe_loop_wire_free(w);
}

TEST_HARNESS_MAIN
