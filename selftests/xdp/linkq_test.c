// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultwire's congested port (tools/lib/linkq.h): the link's arithmetic on
 * a clock the test sets. Frames leave back to back at the rate whenever
 * the caller looks: one that looks late gets what left meanwhile, and the
 * link loses no time to it. An idle link starts a frame when it arrives.
 * The ring refuses what does not fit, and a wrapped frame comes out whole.
 *
 * Measured before (departures from when faultwire looked, not from when
 * the link was free): a 200 Mbit/s port passed about 100 Mbit/s, each
 * wake-up's lateness lost to the link (bench-cc: two senders at 36 + 36
 * Mbit/s with every frame marked, a queue that never drained).
 */
#include <string.h>
#include "kselftest_harness.h"
#include "linkq.h"

#define MS	1000000ull
#define RATE	8000000ull	/* 8 Mbit/s: 1000 bytes take 1 ms */

static void frame(uint8_t *f, uint32_t len, uint8_t tag)
{
	memset(f, tag, len);
}

TEST(frames_leave_back_to_back_when_looked_at_late)
{
	struct linkq q;
	uint8_t f[1000], g[1000];
	uint64_t next;

	ASSERT_EQ(0, linkq_init(&q, 64 * 1024, RATE));
	EXPECT_EQ(1 * MS, linkq_tx_ns(&q, 1000));
	for (int i = 0; i < 3; i++) {
		frame(f, sizeof(f), (uint8_t)i);
		ASSERT_TRUE(linkq_push(&q, f, sizeof(f), 1 * MS));
	}
	EXPECT_EQ(3000u, q.backlog);
	/* nothing is through before 2 ms; the first at 2 ms */
	EXPECT_EQ(0u, linkq_pop(&q, 2 * MS - 1, g, sizeof(g), &next));
	EXPECT_EQ(2 * MS, next);
	/* looked at only at 10 ms: all three left, at 2, 3 and 4 ms */
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(1000u, linkq_pop(&q, 10 * MS, g, sizeof(g), &next)) TH_LOG("frame %d", i);
		EXPECT_EQ((uint8_t)i, g[0]);
	}
	EXPECT_EQ(4 * MS, q.busy_until);
	EXPECT_EQ(0u, linkq_pop(&q, 10 * MS, g, sizeof(g), &next));
	EXPECT_EQ(0u, next);
	EXPECT_EQ(0u, q.backlog);
	/* the link has been idle since 4 ms: a frame at 10 ms leaves at 11 */
	ASSERT_TRUE(linkq_push(&q, f, sizeof(f), 10 * MS));
	EXPECT_EQ(0u, linkq_pop(&q, 11 * MS - 1, g, sizeof(g), &next));
	EXPECT_EQ(11 * MS, next);
	EXPECT_EQ(1000u, linkq_pop(&q, 11 * MS, g, sizeof(g), &next));
	linkq_free(&q);
}

/* A frame that arrives while others wait follows them; one that arrives
 * after the link has sent them all (though nobody looked) starts when it
 * arrives. */
TEST(a_frame_starts_when_it_arrives_or_when_the_link_is_free)
{
	struct linkq q;
	uint8_t f[500] = { 0 }, g[500];
	uint64_t next;

	ASSERT_EQ(0, linkq_init(&q, 64 * 1024, RATE));
	ASSERT_TRUE(linkq_push(&q, f, sizeof(f), 0));		/* leaves 0.5 ms */
	ASSERT_TRUE(linkq_push(&q, f, sizeof(f), MS / 4));	/* waits: 1 ms */
	ASSERT_TRUE(linkq_push(&q, f, sizeof(f), 5 * MS));	/* idle link: 5.5 ms */
	EXPECT_EQ(500u, linkq_pop(&q, 20 * MS, g, sizeof(g), &next));
	EXPECT_EQ(MS / 2, q.busy_until);
	EXPECT_EQ(500u, linkq_pop(&q, 20 * MS, g, sizeof(g), &next));
	EXPECT_EQ(1 * MS, q.busy_until);
	EXPECT_EQ(500u, linkq_pop(&q, 20 * MS, g, sizeof(g), &next));
	EXPECT_EQ(5 * MS + MS / 2, q.busy_until);
	linkq_free(&q);
}

/* Offered twice the rate for a second, looked at every 3.7 ms (a late
 * caller): exactly the rate gets through, never more. */
TEST(the_rate_holds_whenever_the_caller_looks)
{
	struct linkq q;
	uint8_t f[1000] = { 0 }, g[1000];
	uint64_t next, t, through = 0, look = 0;

	ASSERT_EQ(0, linkq_init(&q, 4 << 20, RATE));
	for (t = 0; t < 1000 * MS; t += MS / 2) {
		ASSERT_TRUE(linkq_push(&q, f, sizeof(f), t));
		while (look <= t) {
			while (linkq_pop(&q, look, g, sizeof(g), &next))
				through++;
			look += 3700000;
		}
	}
	/* by the last look (at most 1000 ms + 3.7): one frame a ms */
	EXPECT_EQ((look - 3700000) / MS, through);
	linkq_free(&q);
}

/* The ring refuses a frame it cannot hold; frames that wrap around its
 * end come out whole. */
TEST(full_ring_refuses_and_wrapped_frames_come_out_whole)
{
	enum { CAP = 3 * (1000 + sizeof(struct linkq_hdr)) + 100 };
	struct linkq q;
	uint8_t f[1000], g[1000];
	uint64_t next, t = 0;
	unsigned n = 0;

	ASSERT_EQ(0, linkq_init(&q, CAP, RATE));
	for (int round = 0; round < 10; round++) {
		while (true) {
			frame(f, sizeof(f), (uint8_t)n);
			if (!linkq_push(&q, f, sizeof(f), t))
				break;
			n++;
		}
		EXPECT_EQ(3000u, q.backlog);
		t += 2 * MS;	/* two leave */
		for (int k = 0; k < 2; k++) {
			uint8_t want = (uint8_t)(n - 3 + k);

			size_t bad = 0;

			ASSERT_EQ(1000u, linkq_pop(&q, t, g, sizeof(g), &next));
			for (size_t i = 0; i < sizeof(g); i++)
				bad += g[i] != want;
			ASSERT_EQ(0u, bad) TH_LOG("round %d: frame %u torn", round, want);
		}
		/* the third: drained before the next round fills the ring */
		t += MS;
		ASSERT_EQ(1000u, linkq_pop(&q, t, g, sizeof(g), &next));
	}
	linkq_free(&q);
}

TEST_HARNESS_MAIN
