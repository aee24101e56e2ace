// SPDX-License-Identifier: GPL-2.0
/*
 * The round limit.  Rounds are u32 and a chain's POLL compares 32 bits
 * with >=, so a plan allows 2^32 - 1 rounds.  A test-only module
 * parameter (test_first_round, honoured with allow_inject=1) starts plans
 * at round 2^32 - 3; rounds 2^32 - 3 .. 2^32 - 1 deliver every rank's
 * data, then next_round fails with ERANGE on every rank and the plan
 * stays DONE at round 2^32 - 1, and closes.
 */
#include <fcntl.h>
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define PART 8192
#define CHUNKS 4
#define PARAM "/sys/module/tplan/parameters/test_first_round"

static int set_first_round(uint32_t round)
{
	char buf[16];
	int fd = open(PARAM, O_WRONLY), len, ret = 0;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u", round);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

FIXTURE(limit) {
	int unused;
};

FIXTURE_SETUP(limit)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module parameter allow_inject=1 (test_first_round is test only)");
	if (access(PARAM, W_OK))
		SKIP(return, "%s not writable", PARAM);
}

FIXTURE_TEARDOWN(limit)
{
	set_first_round(0);
}

static int rank_last_rounds(struct tplan_rank_env *env)
{
	struct tp_even ev;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t round, state;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, PART * env->world, env->rank * PART, PART, CHUNKS));
	RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, CHUNKS, 2, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	for (round = TPLAN_ROUND_MAX - 2; ; round++) {
		uint32_t got;

		RANK_OK(tp_state(&p, &state, &got));
		RANK_EQ(TPLAN_PLAN_PREPARED, state);
		RANK_EQ(round, got);
		if (tp_ag_round(&p, PART, round, env->key))
			return -1;
		if (round == TPLAN_ROUND_MAX)
			break;
		RANK_OK(tp_next(&p, &got));
		RANK_EQ(round + 1, got);
	}
	/* The last round is done: there is no next one, on any rank. */
	RANK_ERR(-ERANGE, tp_next(&p, NULL));
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_DONE, state);
	RANK_EQ(TPLAN_ROUND_MAX, round);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	RANK_OK(tp_close(&p, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(limit, last_three_rounds_then_erange_everywhere_and_a_clean_close, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(0, set_first_round(TPLAN_ROUND_MAX - 2));
	RUN_RANKS(3, rank_last_rounds, NULL, 100000);
}

TEST_HARNESS_MAIN
