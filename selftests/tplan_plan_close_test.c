// SPDX-License-Identifier: GPL-2.0
/*
 * What a close guarantees.  close is collective and waits for every rank:
 * once it returns CLOSED here, no peer's copy is still landing in this
 * rank's buffer.  And a plan's gate rows stay its own while any of its
 * chains is queued: a close that returns early (timed out) leaves them to
 * the plan, so a new plan never gets rows an old chain may still bump.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "tplan_plan_util.h"

/* Big enough that the soft engine takes a while over one chunk. */
#define BIG_PART (96ULL << 20)
#define HEAP (2 * BIG_PART + (16ULL << 20))
#define RANKS_TIMEOUT_MS 200000

FIXTURE(close) {
	int unused;
};

FIXTURE_SETUP(close)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(close)
{
}

enum { W_R0_CLOSING = 1 };

/*
 * Neither rank marks its chunk; closing sends it as it stands.  Rank 0
 * closes first; rank 1 closes a little later, so its 96 MiB copy into
 * rank 0's buffer starts only then.  When rank 0's close returns CLOSED,
 * all of rank 1's data is there, and the arrival counted.
 */
static int rank_close_waits(struct tplan_rank_env *env)
{
	struct tp_even ev;
	unsigned char *heap;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t state;
	int64_t bad;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	RANK_OK(tp_create(&p, ctx, 0, BIG_PART * 2, env->rank * BIG_PART, BIG_PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * BIG_PART, BIG_PART, 1, 1, 0));
	tp_fill(heap + env->rank * BIG_PART, BIG_PART, tp_seed(env->rank, 1, env->key));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_start(&p, NULL));
	if (env->rank == 0) {
		tplan_shared_set(&env->shared[W_R0_CLOSING], 1);
		RANK_OK(tp_close(&p, &state));
		RANK_EQ(TPLAN_PLAN_CLOSED, state);
		/* Right now, not a moment later: every byte of rank 1's part is here. */
		RANK_EQ(1, tp_gate_read(&p, 0, p.chunk_base[1], TPLAN_GATE_ARRIVAL));
		bad = tp_check(heap + BIG_PART, BIG_PART, tp_seed(1, 1, env->key));
		if (bad >= 0)
			RANK_FAIL("rank 1's data at byte %lld was not there when close returned",
				  (long long)bad);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_R0_CLOSING], 1, 20000));
		tplan_sleep_ms(300);
		RANK_OK(tp_close(&p, &state));
		RANK_EQ(TPLAN_PLAN_CLOSED, state);
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(close, close_returns_only_once_every_rank_copy_landed, 240)
{
	RUN_RANKS(2, rank_close_waits, NULL, RANKS_TIMEOUT_MS);
}

/*
 * Plan A's chunks are big and unmarked; both ranks close A with a timeout
 * of a millisecond, so the closes return while A's copies (opened by the
 * close) still run.  Plan B, created right after, must not get A's gate
 * rows: A's ATOMICs would count in B's arrival gates.  After a round of B
 * and time for A's copies to end, B's arrival counts are exactly 1.
 */
static int rank_rows_not_reused(struct tplan_rank_env *env)
{
	struct tplan_plan_close cl = { .size = sizeof(cl), .timeout_ms = 1 };
	struct tp_even ev;
	struct tplan_ctx *ctx;
	struct tp_plan a, b;
	uint64_t small = 4096, b_off = 2 * BIG_PART;
	unsigned int peer = 1 - env->rank;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&a, ctx, 0, BIG_PART * 2, env->rank * BIG_PART, BIG_PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * BIG_PART, BIG_PART, 1, 1, 0));
	RANK_OK(tp_prepare(&a, &ev.s));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	cl.plan_id = a.id;
	ret = tplan_test_ioctl(a.fd, TPLAN_IOC_PLAN_CLOSE, &cl);
	/* Early on purpose: the copies are still running, or just done. */
	RANK_ASSERT(ret == 0 || ret == -ETIMEDOUT);
	RANK_ASSERT(cl.state == TPLAN_PLAN_CLOSED || cl.state == TPLAN_PLAN_CLOSING);

	RANK_OK(tp_create(&b, ctx, b_off, small * 2, b_off + env->rank * small, small, 1));
	RANK_OK(tp_even_sched(&ev, b_off + env->rank * small, small, 1, 1, 0));
	RANK_OK(tp_prepare(&b, &ev.s));
	if (tp_ag_round(&b, small, 1, env->key))
		return -1;
	/* Let A's copies finish, whatever they were doing. */
	RANK_OK(tp_queues_idle(ctx, 60000));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	RANK_EQ(1, tp_gate_read(&b, peer, b.chunk_base[env->rank], TPLAN_GATE_ARRIVAL));
	RANK_EQ(1, tp_gate_read(&b, env->rank, b.chunk_base[peer], TPLAN_GATE_ARRIVAL));
	RANK_OK(tp_close(&b, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(close, timed_out_close_keeps_its_gate_rows_until_drained, 240)
{
	int64_t plans = -1;

	RUN_RANKS(2, rank_rows_not_reused, NULL, RANKS_TIMEOUT_MS);
	/* Both plans are gone once every rank closed and every chain drained. */
	if (!tplan_debugfs_stat("plans", &plans))
		ASSERT_EQ(0, plans);
}

TEST_HARNESS_MAIN
