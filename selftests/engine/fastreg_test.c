// SPDX-License-Identifier: GPL-2.0-only
/*
 * A fast-registration MR's window against accesses in flight (core/mr.c).
 *
 * roxe.ko's MRs for kernel ULPs are windows: a REG_MR puts the ULP's pages
 * behind the window, an invalidation takes them away, the next REG_MR puts
 * new ones there, at the same address. An engine that mapped the window
 * under one registration and is still copying when the next REG_MR maps it
 * again would write the old registration's bytes into the new one's pages
 * (kmod_races' invalidation race saw rxe READ such bytes back once). Two
 * threads play two engines of one device here: one holds an access open,
 * the other runs LOCAL_INV and REG_MR.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kselftest_harness.h"
#include "core/core.h"

#define KEY		(7u << 8 | 0x11)
#define IOVA		0x5000123ull
#define WINDOW_BYTES	(2 * 4096)
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct rig {
	struct roxe_device	dev;
	struct roxe_pd		pd;
	struct roxe_mr_priv	mr;
	_Atomic(struct roxe_mr_priv *) *mrs;
	uint8_t			*window;
	/* the engine holding an access open (engine 1) */
	pthread_t		holder;
	atomic_int		holder_step;	/* 1: mapped, 2: told to copy, 3: done */
	atomic_bool		holder_ok;	/* roxe_mr_access_ok() after its copy */
	bool			holder_mapped;
	/* window_fn: maps, and those made while the holder's copy was open */
	atomic_int		maps, maps_under_copy;
};

static int window_fn(void *ctx, uint32_t key, bool map)
{
	struct rig *r = ctx;

	(void)key;
	if (map) {
		atomic_fetch_add(&r->maps, 1);
		if (atomic_load(&r->holder_step) == 1)
			atomic_fetch_add(&r->maps_under_copy, 1);
	}
	return 0;
}

/* wait_ms: how long a REG_MR waits for another engine's copy */
static void rig_init(struct rig *r, unsigned wait_ms)
{
	memset(r, 0, sizeof(*r));
	r->dev.nengines = 2;
	r->dev.window_wait_ns = (uint64_t)wait_ms * 1000000;
	r->mrs = calloc(ROXE_MAX_MR, sizeof(*r->mrs));
	r->dev.mrs = r->mrs;
	r->pd.dev = &r->dev;
	r->window = aligned_alloc(4096, WINDOW_BYTES);
	r->mr.pd = &r->pd;
	r->mr.window = r->window;
	r->mr.window_bytes = WINDOW_BYTES;
	r->mr.window_fn = window_fn;
	r->mr.window_ctx = r;
	r->mr.pub.lkey = r->mr.pub.rkey = KEY;
	pthread_spin_init(&r->mr.write_lock, PTHREAD_PROCESS_PRIVATE);
	atomic_store(&r->mrs[(KEY >> 8) % ROXE_MAX_MR], &r->mr);
}

static void rig_fini(struct rig *r)
{
	pthread_spin_destroy(&r->mr.write_lock);
	free(r->window);
	free(r->mrs);
}

/* A REG_MR WQE as roxe.ko writes it, executed by the calling engine. */
static int reg_mr(struct rig *r, uint32_t key)
{
	struct rxe_send_wqe w = { 0 };

	w.wr.opcode = ROXE_KABI_WR_REG_MR;
	w.wr.wr.rdma.rkey = key;
	w.wr.wr.rdma.reserved = ACCESS;
	w.wr.wr.rdma.remote_addr = ROXE_KABI_REG_MR_ADDR(4096, 0x123);
	w.iova = IOVA;
	return roxe_mr_fast_reg(&r->dev, &r->pd, &w);
}

/* Engine 1: a WRITE through KEY that maps the window, then waits for its
 * copy to be let go (preempted there, as it were). */
static void *holder(void *arg)
{
	struct rig *r = arg;
	struct roxe_mr_access acc;
	uint8_t *p;

	roxe_mr_turn_begin(&r->dev, 1);
	p = roxe_mr_map(&r->dev, &r->pd, 0, KEY, IOVA + 8, 64, IBV_ACCESS_REMOTE_WRITE, &acc);
	r->holder_mapped = p != NULL;
	atomic_store(&r->holder_step, 1);
	while (p && atomic_load(&r->holder_step) != 2)
		usleep(100);
	if (p) {
		memset(p, 0xee, 64);
		atomic_store(&r->holder_ok, roxe_mr_access_ok(&acc));
	}
	atomic_store(&r->holder_step, 3);
	roxe_mr_turn_end();
	return NULL;
}

/* Engine 0's REG_MR on its own thread, so that the test can watch it. */
struct reg_call {
	struct rig	*r;
	uint32_t	key;
	pthread_t	t;
	atomic_bool	done;
	int		status;
};

static void *reg_thread(void *arg)
{
	struct reg_call *c = arg;

	roxe_mr_turn_begin(&c->r->dev, 0);
	c->status = reg_mr(c->r, c->key);
	roxe_mr_turn_end();
	atomic_store(&c->done, true);
	return NULL;
}

/* Registered with KEY, the holder's access open, then LOCAL_INV. */
static void start_held_access(struct __test_metadata *_metadata, struct rig *r,
			      unsigned wait_ms)
{
	rig_init(r, wait_ms);
	roxe_mr_turn_begin(&r->dev, 0);
	ASSERT_EQ(IBV_WC_SUCCESS, reg_mr(r, KEY));
	ASSERT_EQ(1, atomic_load(&r->maps));
	ASSERT_EQ(0, pthread_create(&r->holder, NULL, holder, r));
	while (atomic_load(&r->holder_step) != 1)
		usleep(100);
	ASSERT_TRUE(r->holder_mapped);
	ASSERT_EQ(0, roxe_mr_invalidate(&r->dev, &r->pd, KEY, ROXE_LOOKUP_LOCAL));
	roxe_mr_turn_end();
}

static void finish_held_access(struct rig *r)
{
	atomic_store(&r->holder_step, 2);
	pthread_join(r->holder, NULL);
}

/* The REG_MR waits for the copy begun under the old registration; once
 * it is over, the window is mapped under the new key. The holder's copy
 * is refused afterwards (the registration changed under it). The REG_MR
 * may wait an hour here: the 100 ms below only give one that does not
 * wait the time to map before the copy ends, and no delay of this
 * thread can fail a REG_MR that waits. */
TEST(reg_mr_waits_for_a_copy_begun_under_the_old_registration)
{
	struct rig r;
	struct reg_call c = { .r = &r, .key = KEY + 1 };

	start_held_access(_metadata, &r, 3600 * 1000);
	ASSERT_EQ(0, pthread_create(&c.t, NULL, reg_thread, &c));
	usleep(100 * 1000);	/* a REG_MR that does not wait maps meanwhile */
	finish_held_access(&r);
	pthread_join(c.t, NULL);
	EXPECT_EQ(0, atomic_load(&r.maps_under_copy));
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(2, atomic_load(&r.maps));
	EXPECT_EQ(KEY + 1, r.mr.pub.rkey);
	EXPECT_FALSE(atomic_load(&r.holder_ok));
	rig_fini(&r);
}

/* An engine that never finishes its copy: the REG_MR gives up (a local
 * protection error) rather than wait without end, and maps nothing. */
TEST(reg_mr_gives_up_on_a_copy_that_never_ends)
{
	struct rig r;
	struct reg_call c = { .r = &r, .key = KEY + 1 };

	start_held_access(_metadata, &r, 50);
	ASSERT_EQ(0, pthread_create(&c.t, NULL, reg_thread, &c));
	pthread_join(c.t, NULL);	/* the holder copies only after this */
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, c.status);
	EXPECT_EQ(1, atomic_load(&r.maps));
	EXPECT_FALSE(atomic_load(&r.mr.valid));
	finish_held_access(&r);
	EXPECT_FALSE(atomic_load(&r.holder_ok));
	/* the copy over, the same REG_MR goes through */
	c.done = false;
	ASSERT_EQ(0, pthread_create(&c.t, NULL, reg_thread, &c));
	pthread_join(c.t, NULL);
	EXPECT_EQ(IBV_WC_SUCCESS, c.status);
	EXPECT_EQ(2, atomic_load(&r.maps));
	rig_fini(&r);
}

/* An access of the engine running the REG_MR itself, given up in the same
 * turn without a copy (an atomic NAKed for its alignment), holds nothing. */
TEST(reg_mr_does_not_wait_for_its_own_engine)
{
	struct rig r;
	struct roxe_mr_access acc;

	rig_init(&r, 3600 * 1000);
	roxe_mr_turn_begin(&r.dev, 0);
	ASSERT_EQ(IBV_WC_SUCCESS, reg_mr(&r, KEY));
	ASSERT_TRUE(roxe_mr_map(&r.dev, &r.pd, 0, KEY, IOVA, 8, IBV_ACCESS_REMOTE_WRITE, &acc));
	ASSERT_EQ(0, roxe_mr_invalidate(&r.dev, &r.pd, KEY, ROXE_LOOKUP_LOCAL));
	EXPECT_EQ(IBV_WC_SUCCESS, reg_mr(&r, KEY + 1));
	roxe_mr_access_end(&acc);
	roxe_mr_turn_end();
	/* and a turn that ended with an access open leaves no trace */
	roxe_mr_turn_begin(&r.dev, 1);
	ASSERT_TRUE(roxe_mr_map(&r.dev, &r.pd, 0, KEY + 1, IOVA, 8, IBV_ACCESS_REMOTE_WRITE, &acc));
	roxe_mr_turn_end();
	roxe_mr_turn_begin(&r.dev, 0);
	ASSERT_EQ(0, roxe_mr_invalidate(&r.dev, &r.pd, KEY + 1, ROXE_LOOKUP_LOCAL));
	EXPECT_EQ(IBV_WC_SUCCESS, reg_mr(&r, KEY + 2));
	roxe_mr_turn_end();
	rig_fini(&r);
}

TEST_HARNESS_MAIN
