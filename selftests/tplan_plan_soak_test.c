// SPDX-License-Identifier: GPL-2.0
/*
 * Thousands of rounds (10 000, or TPLAN_SOAK_ROUNDS: make check's VM runs
 * 4 000, 1 000 on the debug kernel) of a 4-rank in-place all-gather
 * through the library, each rank's part written with that round's data by
 * a CPU producer, every rank's buffer checked every round.  Parts are
 * small: it is the round machinery (re-arm, start, marks, engine polls,
 * arrivals, wait) that is exercised, thousands of times over.
 */
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_device.h"

#define SOAK_WORLD 4
#define SOAK_ROUNDS 10000
#define SOAK_PART 2048		/* bytes per rank */
#define SOAK_CHUNKS 2		/* row blocks per rank */
#define SOAK_ROW 256		/* bytes per row */

/* What a rank's rows hold in a round: a pattern named by (rank, round). */
static void soak_fill(unsigned char *p, unsigned int rank, uint32_t round, uint64_t salt)
{
	tp_fill(p, SOAK_PART, tp_seed(rank, round, salt));
}

static int rank_soak(struct tplan_rank_env *env)
{
	uint32_t rounds = *(uint32_t *)env->arg, round, c;
	struct tplan_tensor out, mine;
	struct tplan_schedule *s;
	struct tplan_plan *plan;
	struct tplan_handle h;
	struct tplan_cta cta = { 0 };
	struct tplan_view v;
	struct tplan_ctx *ctx;
	unsigned char *heap;
	uint64_t salt = env->key;
	unsigned int r;
	int64_t bad;

	RANK_OK(tp_join(env, 1U << 20, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	out = (struct tplan_tensor) {
		.rows = env->world * SOAK_PART / SOAK_ROW, .cols = SOAK_ROW, .elem_size = 1,
	};
	RANK_OK(tplan_heap_alloc(ctx, (uint64_t)env->world * SOAK_PART, 4096, &out.offset));
	mine = out;
	mine.rows = SOAK_PART / SOAK_ROW;
	mine.offset = out.offset + (uint64_t)env->rank * SOAK_PART;
	RANK_OK(tplan_schedule_chunks(&mine, mine.rows / SOAK_CHUNKS, 1, 0, &s));
	RANK_EQ(SOAK_CHUNKS, tplan_schedule_nchunks(s));
	RANK_OK(tplan_prepare_all_gather(ctx, &out, s, &plan));
	for (round = 1; round <= rounds; round++) {
		RANK_OK(tplan_plan_start(plan, &h));
		RANK_EQ(round, h.round);
		soak_fill(heap + mine.offset, env->rank, round, salt);
		tplan_view_init(&v, &h);
		for (c = 0; c < SOAK_CHUNKS; c++)
			RANK_OK(tplan_mark_ready(&v, &cta, c));
		if (tplan_plan_wait(plan, 60000))
			RANK_FAIL("round %u: %s", round, tplan_ctx_error(ctx));
		for (r = 0; r < env->world; r++) {
			bad = tp_check(heap + out.offset + (uint64_t)r * SOAK_PART, SOAK_PART,
				       tp_seed(r, round, salt));
			if (bad >= 0)
				RANK_FAIL("round %u: rank %u's part differs at byte %lld", round, r,
					  (long long)bad);
		}
		if (round < rounds && tplan_plan_next_round(plan))
			RANK_FAIL("round %u: next_round: %s", round, tplan_ctx_error(ctx));
	}
	tplan_shared_add(&env->shared[0], round - 1);
	RANK_OK(tplan_plan_close(plan, NULL));
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(soak) {
	int unused;
};

FIXTURE_SETUP(soak)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(soak)
{
}

TEST_F_TIMEOUT(soak, all_gather_4_ranks_verified_every_round_for_thousands_of_rounds, 900)
{
	uint32_t rounds = SOAK_ROUNDS;
	const char *env_rounds = getenv("TPLAN_SOAK_ROUNDS");
	struct tplan_ranks r;
	uint64_t t0, ms;
	int nf;

	if (env_rounds)
		rounds = (uint32_t)strtoul(env_rounds, NULL, 0);
	t0 = tplan_now_ms();
	ASSERT_EQ(0, tplan_ranks_start(&r, SOAK_WORLD, tplan_test_key(), rank_soak, &rounds));
	nf = tplan_ranks_wait(&r, 850000, 0);
	ms = tplan_now_ms() - t0;
	TPLAN_RANKS_REPORT(&r, nf, 0);
	ASSERT_EQ((uint64_t)rounds * SOAK_WORLD, r.shared[0]);
	TH_LOG("%u rounds x %u ranks in %llu ms: %.2f ms per round", rounds, SOAK_WORLD,
	       (unsigned long long)ms, (double)ms / rounds);
	tplan_ranks_release(&r);
}

TEST_HARNESS_MAIN
