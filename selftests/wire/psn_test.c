// SPDX-License-Identifier: GPL-2.0-only
/* 24-bit PSN arithmetic, checked against a 64-bit model around the wrap. */
#include <stdint.h>
#include "kselftest_harness.h"
#include "wire/psn.h"

/* The model: unwrap both into 64 bits near each other and subtract. */
static int64_t model_diff(uint32_t a, uint32_t b)
{
	int64_t d = (int64_t)a - (int64_t)b;

	if (d >= (1 << 23))
		d -= 1 << 24;
	else if (d < -(1 << 23))
		d += 1 << 24;
	return d;
}

TEST(add_wraps)
{
	EXPECT_EQ(0u, roxe_psn_add(0xffffff, 1));
	EXPECT_EQ(4u, roxe_psn_add(0xfffffe, 6));
	EXPECT_EQ(0x123456u, roxe_psn_add(0x123456, 0));
	EXPECT_EQ(0xffffffu, roxe_psn_add(0, 0xffffff));
}

TEST(diff_matches_model)
{
	static const uint32_t pts[] = {
		0, 1, 2, 0x7ffffe, 0x7fffff, 0x800000, 0x800001,
		0xfffffe, 0xffffff, 0x123456, 0xabcdef,
	};
	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
		for (size_t j = 0; j < sizeof(pts) / sizeof(pts[0]); j++) {
			int64_t want = model_diff(pts[i], pts[j]);

			ASSERT_EQ(want, roxe_psn_diff(pts[i], pts[j]))
				TH_LOG("a=%#x b=%#x", pts[i], pts[j]);
			ASSERT_EQ(want < 0, roxe_psn_before(pts[i], pts[j]));
			ASSERT_EQ(want > 0, roxe_psn_after(pts[i], pts[j]));
		}
}

TEST(ordering_across_wrap)
{
	EXPECT_TRUE(roxe_psn_before(0xffffff, 0));
	EXPECT_TRUE(roxe_psn_after(5, 0xfffff0));
	EXPECT_EQ(-1, roxe_psn_diff(0xffffff, 0));
	EXPECT_EQ(0x10, roxe_psn_diff(0x5, 0xfffff5));
	/* Exactly half the space away reads as behind. */
	EXPECT_EQ(-(1 << 23), roxe_psn_diff(0x800000, 0));
}

TEST(window)
{
	EXPECT_TRUE(roxe_psn_in_window(0xfffffe, 0xfffffe, 4));
	EXPECT_TRUE(roxe_psn_in_window(1, 0xfffffe, 4));
	EXPECT_FALSE(roxe_psn_in_window(2, 0xfffffe, 4));
	EXPECT_FALSE(roxe_psn_in_window(0xfffffd, 0xfffffe, 4));
	EXPECT_FALSE(roxe_psn_in_window(7, 7, 0));
}

TEST_HARNESS_MAIN
