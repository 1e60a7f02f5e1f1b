// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder's out-of-sequence stash (stash.c) on its own: what it
 * keeps (a copy, ahead of the expected PSN, within the span, no larger
 * than a slot, once), what it gives back (the frame and its layout,
 * once), and its bounds: a full pool keeps nothing more for a QP that
 * holds its share until slots that fell behind are reclaimed, a QP holding
 * more than its share gives way to one holding less, a QP's frames go
 * with it, PSNs wrap. The responder's use of it, and the requester's
 * repair, are recovery_test's.
 */
#include "kselftest_harness.h"
#include "transport/transport.h"
#include "transport/stash.h"
#include "wire/psn.h"

FIXTURE(stash) {
	struct roxe_device dev;
	struct roxe_engine e;
	struct roxe_qp q[3];
	uint8_t frame[ROXE_STASH_FRAME_MAX + 64], out[ROXE_STASH_FRAME_MAX];
	struct roxe_pkt pkt;
};

FIXTURE_SETUP(stash)
{
	memset(&self->dev, 0, sizeof(self->dev));
	memset(&self->e, 0, sizeof(self->e));
	memset(self->q, 0, sizeof(self->q));
	self->dev.ooo_stash = true;
	self->e.dev = &self->dev;
	for (unsigned i = 0; i < 3; i++) {
		self->q[i].eng = &self->e;
		self->q[i].qpn = 17 + i;
		self->q[i].resp.psn = 1000;
	}
	memset(&self->pkt, 0, sizeof(self->pkt));
	self->pkt.frame_len = 1100;
	self->pkt.payload_off = 58;
	self->pkt.payload_len = 1024;
}

FIXTURE_TEARDOWN(stash)
{
	roxe_stash_fini(&self->e);
}

/* A frame whose bytes say which QP and PSN it is. */
static const uint8_t *frame_of(FIXTURE_DATA(stash) *self, unsigned qi, uint32_t psn)
{
	for (unsigned i = 0; i < self->pkt.frame_len; i++)
		self->frame[i] = (uint8_t)(psn * 7 + qi * 131 + i);
	return self->frame;
}

static bool put(FIXTURE_DATA(stash) *self, unsigned qi, uint32_t psn)
{
	return roxe_stash_put(&self->q[qi], frame_of(self, qi, psn), &self->pkt, psn);
}

/* Take psn of QP qi and check its bytes are what was put. */
static bool take_ok(FIXTURE_DATA(stash) *self, unsigned qi, uint32_t psn)
{
	struct roxe_pkt got;
	uint8_t want[ROXE_STASH_FRAME_MAX];
	uint32_t len = self->pkt.frame_len;
	const uint8_t *f;
	bool same;
	int slot;

	memcpy(want, frame_of(self, qi, psn), len);
	slot = roxe_stash_take(&self->q[qi], psn, &f, &got);
	if (slot < 0)
		return false;
	same = !memcmp(&got, &self->pkt, sizeof(got)) && !memcmp(want, f, len);
	roxe_stash_release(&self->e, slot);
	return same;
}

/* Does the stash hold psn of QP qi (taken and released if so)? */
static bool taken(FIXTURE_DATA(stash) *self, unsigned qi, uint32_t psn)
{
	const uint8_t *f;
	struct roxe_pkt got;
	int slot = roxe_stash_take(&self->q[qi], psn, &f, &got);

	if (slot >= 0)
		roxe_stash_release(&self->e, slot);
	return slot >= 0;
}

/* A frame being run is no QP's: dropping the QP's frames, or a full
 * pool's reclaim, leaves it be until it is released. */
TEST_F(stash, a_frame_taken_is_left_alone_until_released)
{
	const uint8_t *f;
	struct roxe_pkt got;
	int slot;

	for (uint32_t i = 0; i < ROXE_STASH_SLOTS; i++)
		ASSERT_TRUE(put(self, 0, 1001 + i));
	slot = roxe_stash_take(&self->q[0], 1001, &f, &got);
	ASSERT_GE(slot, 0);
	roxe_stash_drop(&self->q[0]);
	self->q[1].resp.psn = 5000;		/* everything of QP 0 is "behind" */
	self->q[0].resp.psn = 9000;
	EXPECT_EQ(0u, self->q[0].resp.stashed);
	for (uint32_t i = 0; i < ROXE_STASH_SLOTS - 1; i++)
		ASSERT_TRUE(put(self, 1, 5001 + i));
	EXPECT_FALSE(put(self, 1, 6000));	/* the taken one is not free */
	memcpy(self->out, frame_of(self, 0, 1001), self->pkt.frame_len);
	EXPECT_EQ(0, memcmp(self->out, f, self->pkt.frame_len));
	roxe_stash_release(&self->e, slot);
	EXPECT_TRUE(put(self, 1, 6000));
}

TEST_F(stash, keeps_only_frames_ahead_within_the_span)
{
	EXPECT_FALSE(put(self, 0, 1000));		/* the expected PSN: not ahead */
	EXPECT_FALSE(put(self, 0, 999));		/* behind */
	EXPECT_FALSE(put(self, 0, 1000 + ROXE_STASH_SPAN + 1));
	EXPECT_TRUE(put(self, 0, 1000 + ROXE_STASH_SPAN));
	EXPECT_TRUE(put(self, 0, 1001));
	self->pkt.frame_len = ROXE_STASH_FRAME_MAX + 1;	/* larger than a slot */
	EXPECT_FALSE(put(self, 0, 1002));
	self->pkt.frame_len = 1100;
	EXPECT_EQ(2u, self->q[0].resp.stashed);
}

TEST_F(stash, a_duplicate_is_kept_once_and_taken_once)
{
	struct roxe_pkt first = self->pkt;

	/* the first copy (other bytes, another layout), then the second:
	 * one frame held, the second's */
	memset(self->frame, 0xa5, sizeof(self->frame));
	self->pkt.payload_len = 7;
	EXPECT_TRUE(roxe_stash_put(&self->q[0], self->frame, &self->pkt, 1005));
	self->pkt = first;
	EXPECT_TRUE(put(self, 0, 1005));
	EXPECT_EQ(1u, self->q[0].resp.stashed);
	EXPECT_TRUE(put(self, 1, 1005));		/* another QP's same PSN */
	EXPECT_TRUE(take_ok(self, 0, 1005));
	EXPECT_EQ(0u, self->q[0].resp.stashed);
	EXPECT_FALSE(taken(self, 0, 1005));
	EXPECT_TRUE(take_ok(self, 1, 1005));
	EXPECT_FALSE(taken(self, 2, 1005));
}

TEST_F(stash, a_full_pool_keeps_nothing_until_slots_fall_behind)
{
	for (uint32_t i = 0; i < ROXE_STASH_SLOTS; i++)
		ASSERT_TRUE(put(self, i & 1, 1001 + i / 2));
	/* two QPs of a share each: neither takes the other's */
	EXPECT_FALSE(put(self, 1, 1001 + ROXE_STASH_SLOTS / 2));
	EXPECT_FALSE(put(self, 0, 1001 + ROXE_STASH_SLOTS / 2));
	EXPECT_EQ((uint32_t)ROXE_STASH_SLOTS / 2, self->q[1].resp.stashed);
	/* QP 0 moved on past 10 of its frames (a go-back filled them) */
	self->q[0].resp.psn = 1011;
	EXPECT_TRUE(put(self, 2, 1001));
	EXPECT_EQ((uint32_t)ROXE_STASH_SLOTS / 2 - 10, self->q[0].resp.stashed);
	EXPECT_EQ((uint32_t)ROXE_STASH_SLOTS / 2, self->q[1].resp.stashed);
	/* what is left of QP 0 is intact */
	EXPECT_TRUE(take_ok(self, 0, 1011));
	EXPECT_TRUE(take_ok(self, 1, 1001));
}

/*
 * Fairness (#33): a QP that floods frames ahead of a gap it never fills
 * holds the whole pool; another QP of the engine still keeps its share,
 * half the pool with two QPs holding frames, taken from the flooder's
 * furthest ahead, and the flooder gets none of it back. With a third QP
 * each keeps about a third.
 */
TEST_F(stash, a_flooding_qp_leaves_the_others_their_share)
{
	const uint32_t share = ROXE_STASH_SLOTS / 2;
	uint32_t n;

	for (uint32_t i = 0; i < ROXE_STASH_SLOTS; i++)
		ASSERT_TRUE(put(self, 0, 1001 + i));		/* PSN 1000 never comes */
	for (uint32_t i = 0; i < share; i++) {
		ASSERT_TRUE(put(self, 1, 1001 + i)) TH_LOG("QP 1's frame %u of its %u", i, share);
	}
	EXPECT_FALSE(put(self, 1, 1001 + share));	/* its share, no more */
	EXPECT_FALSE(put(self, 0, 1001 + ROXE_STASH_SLOTS));	/* nor the flooder */
	EXPECT_EQ(share, self->q[0].resp.stashed);
	EXPECT_EQ(share, self->q[1].resp.stashed);

	for (n = 0; n < ROXE_STASH_SLOTS && put(self, 2, 1001 + n); n++)
		;
	EXPECT_GE(n, ROXE_STASH_SLOTS / 3 - 1);
	EXPECT_GE(self->q[0].resp.stashed, ROXE_STASH_SLOTS / 3 - 1);
	EXPECT_GE(self->q[1].resp.stashed, ROXE_STASH_SLOTS / 3 - 1);
	EXPECT_EQ((uint32_t)ROXE_STASH_SLOTS,
		  self->q[0].resp.stashed + self->q[1].resp.stashed + self->q[2].resp.stashed);
	/* what gave way was the furthest ahead: the nearest frames are whole */
	EXPECT_TRUE(take_ok(self, 0, 1001));
	EXPECT_TRUE(take_ok(self, 1, 1001));
	EXPECT_FALSE(taken(self, 0, 1001 + share));
}

TEST_F(stash, a_qps_frames_go_with_it)
{
	for (uint32_t psn = 1001; psn < 1100; psn++) {
		ASSERT_TRUE(put(self, 0, psn));
		ASSERT_TRUE(put(self, 1, psn));
	}
	roxe_stash_drop(&self->q[0]);
	EXPECT_EQ(0u, self->q[0].resp.stashed);
	EXPECT_EQ(99u, self->q[1].resp.stashed);
	EXPECT_FALSE(taken(self, 0, 1050));
	EXPECT_TRUE(take_ok(self, 1, 1050));
	/* the slots are free again: a whole pool's worth fits */
	roxe_stash_drop(&self->q[1]);
	for (uint32_t i = 0; i < ROXE_STASH_SLOTS; i++)
		ASSERT_TRUE(put(self, 2, 1001 + i));
}

TEST_F(stash, psns_wrap)
{
	self->q[0].resp.psn = ROXE_PSN_MASK - 1;
	EXPECT_TRUE(put(self, 0, 1));		/* 3 ahead */
	EXPECT_TRUE(put(self, 0, ROXE_PSN_MASK));
	EXPECT_FALSE(put(self, 0, ROXE_PSN_MASK - 2));
	EXPECT_TRUE(take_ok(self, 0, ROXE_PSN_MASK));
	EXPECT_TRUE(take_ok(self, 0, 1));
}

TEST_F(stash, off_keeps_nothing)
{
	self->dev.ooo_stash = false;
	EXPECT_FALSE(put(self, 0, 1001));
	EXPECT_EQ(NULL, self->e.stash);		/* nothing allocated */
}

TEST_HARNESS_MAIN
