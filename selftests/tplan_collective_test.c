// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives under signals and timeouts: every rank or none.
 *  - A signal during a barrier returns EINTR (or restarts it with
 *    SA_RESTART) with the rank still arrived; the same call resumes it, a
 *    different collective is refused with EPROTO and the group goes on.
 *  - Plan steps are not interrupted by signals: a rank signalled inside
 *    prepare's votes finishes the step with the others.
 *  - A rank later than the timeout makes the step fail with ETIMEDOUT on
 *    every rank (create: no plan; close: the part is torn down), the
 *    group goes on, the step can be done again, and the timeout never
 *    fires early.  next_round is not a collective: a late rank fails
 *    nobody's, and the round goes on once it re-arms.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_device.h"

#define HEAP (1U << 20)
#define RANKS_TIMEOUT_MS 120000
#define PART 4096

enum { W_PID, W_BLOCKED_IN, W_SIGNALLED, W_STEP, W_LATE };

FIXTURE(coll) {
	int unused;
};

FIXTURE_SETUP(coll)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(coll)
{
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static int catch_usr1(int restart)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0 };

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL) ? -errno : 0;
}

/* Rank 0: once rank 1 sleeps in its call, signal it. */
static int signal_rank1(struct tplan_rank_env *env)
{
	RANK_OK(tplan_shared_wait(&env->shared[W_BLOCKED_IN], 1, 20000));
	RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_PID], 20000));
	RANK_OK(kill((pid_t)env->shared[W_PID], SIGUSR1) ? -errno : 0);
	return 0;
}

/* ---- barrier: EINTR, then resume or EPROTO --------------------------------- */

static int rank_barrier_eintr(struct tplan_rank_env *env)
{
	uint64_t in = env->rank + 100, out[2] = { 0, 0 };
	struct tplan_ctx *ctx;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 1) {
		RANK_OK(catch_usr1(0));
		env->shared[W_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_BLOCKED_IN], 1);
		RANK_ERR(-EINTR, tplan_barrier(ctx, 60000));
		RANK_EQ(1, handled);
		/* Still arrived at the barrier: another collective first is refused... */
		RANK_ERR(-EPROTO, tplan_all_gather(ctx, &in, sizeof(in), out, 60000));
		tplan_shared_set(&env->shared[W_SIGNALLED], 1);
		/* ... and the same call resumes it, with rank 0 there. */
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	} else {
		if (signal_rank1(env))
			return -1;
		RANK_OK(tplan_shared_wait(&env->shared[W_SIGNALLED], 1, 20000));
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	}
	/* The group is whole: the next collective is the same on both. */
	RANK_OK(tplan_all_gather(ctx, &in, sizeof(in), out, TP_TIMEOUT));
	RANK_EQ(100, out[0]);
	RANK_EQ(101, out[1]);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(coll, barrier_signal_is_eintr_and_resumes_only_as_the_same_call, 120)
{
	RUN_RANKS(2, rank_barrier_eintr, NULL, RANKS_TIMEOUT_MS);
}

static int rank_barrier_restart(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 1) {
		RANK_OK(catch_usr1(1));
		env->shared[W_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_BLOCKED_IN], 1);
		/* SA_RESTART: the handler runs, the barrier goes on transparently. */
		RANK_OK(tplan_barrier(ctx, 60000));
		RANK_EQ(1, handled);
	} else {
		if (signal_rank1(env))
			return -1;
		tplan_sleep_ms(300);
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(coll, barrier_signal_with_sa_restart_restarts, 120)
{
	RUN_RANKS(2, rank_barrier_restart, NULL, RANKS_TIMEOUT_MS);
}

/* ---- plan steps are not interrupted ---------------------------------------- */

/*
 * Rank 1 takes a signal (no SA_RESTART) while it waits in prepare's first
 * vote; rank 0 arrives later.  Both prepare (the signal is handled after
 * the call), and a round delivers every rank's data.
 */
static int rank_prepare_signalled(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	struct tplan_ctx *ctx;
	struct tp_plan p;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, PART * env->world, env->rank * PART, PART, 4));
	RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, 4, 2, 0));
	if (env->rank == 1) {
		RANK_OK(catch_usr1(0));
		env->shared[W_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_BLOCKED_IN], 1);
		RANK_OK(tp_prepare(&p, &ev.s));
		RANK_EQ(1, handled);
	} else {
		if (signal_rank1(env))
			return -1;
		/* Late on purpose: rank 1 sits in the vote with the signal pending. */
		tplan_sleep_ms(500);
		RANK_OK(tp_prepare(&p, &ev.s));
	}
	if (tp_ag_round(&p, PART, 1, env->key))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(coll, signal_during_prepare_vote_does_not_split_the_ranks, 120)
{
	RUN_RANKS(2, rank_prepare_signalled, NULL, RANKS_TIMEOUT_MS);
}

/* ---- a late rank: ETIMEDOUT everywhere, the group goes on ------------------ */

#define LATE_MS 300

/* Rank 0 gives up after LATE_MS; rank 1 comes after that and fails at once. */
static int late_step(struct tplan_rank_env *env, struct tplan_ctx *ctx, int step,
		     int (*fn)(void *arg), void *arg)
{
	uint64_t t0;
	int ret;

	if (env->rank == 0) {
		tplan_ctx_set_timeout(ctx, LATE_MS);
		t0 = tplan_now_ms();
		ret = fn(arg);
		RANK_ASSERT(tplan_now_ms() - t0 >= LATE_MS);	/* never early */
		tplan_ctx_set_timeout(ctx, 0);
		tplan_shared_set(&env->shared[W_LATE + step], 1);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_LATE + step], 1, 20000));
		ret = fn(arg);
	}
	RANK_ERR(-ETIMEDOUT, ret);
	/* The group goes on. */
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	return 0;
}

struct create_arg {
	struct tplan_ctx *ctx;
	struct tplan_schedule *s;
	struct tplan_plan **plan;
	uint64_t own;
};

static int do_create(void *arg)
{
	struct create_arg *a = arg;

	return tplan_plan_create(a->ctx, 0, PART * 2, a->own, PART, a->s, a->plan);
}

static int do_next(void *arg)
{
	return tplan_plan_next_round(arg);
}

static int do_close(void *arg)
{
	uint32_t state = 0;
	int ret = tplan_plan_close(arg, &state);

	/* torn down all the same; not known quiet everywhere */
	return ret == -ETIMEDOUT && state != TPLAN_PLAN_CLOSING ? -EINVAL : ret;
}

/* One round through the library: fill, start, mark, wait, check. */
static int lib_round(struct tplan_ctx *ctx, struct tplan_plan *plan, unsigned int rank,
		     uint32_t round, uint64_t salt)
{
	struct tplan_cta cta = { NULL, NULL, 0 };	/* a producer of one thread */
	unsigned char *heap = tplan_heap_ptr(ctx, rank);
	struct tplan_handle h;
	struct tplan_view v;
	unsigned int r;

	tp_fill(heap + rank * PART, PART, tp_seed(rank, round, salt));
	RANK_OK(tplan_plan_start(plan, &h));
	RANK_EQ(round, h.round);
	tplan_view_init(&v, &h);
	RANK_OK(tplan_mark_ready(&v, &cta, 0));
	RANK_OK(tplan_plan_wait(plan, TP_TIMEOUT));
	for (r = 0; r < 2; r++)
		if (tp_check(heap + r * PART, PART, tp_seed(r, round, salt)) >= 0)
			RANK_FAIL("round %u: rank %u's part is wrong", round, r);
	return 0;
}

static int rank_late(struct tplan_rank_env *env)
{
	struct tplan_tensor mine = {
		.offset = env->rank * PART, .rows = 1, .cols = PART / 4, .elem_size = 4,
	};
	struct tplan_plan *plan = NULL;
	struct create_arg ca;
	struct tplan_ctx *ctx;
	uint32_t state, round;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tplan_schedule_whole(&mine, 1, &ca.s));
	ca.ctx = ctx;
	ca.plan = &plan;
	ca.own = env->rank * PART;

	/* create: no plan anywhere, then it works */
	if (late_step(env, ctx, 0, do_create, &ca))
		return -1;
	RANK_ASSERT(plan == NULL);
	RANK_OK(do_create(&ca));
	if (lib_round(ctx, plan, env->rank, 1, env->key))
		return -1;

	/*
	 * next_round: local.  Rank 0's returns whatever rank 1 does; rank 1
	 * re-arms LATE_MS later, and round 2 works.
	 */
	if (env->rank == 0) {
		RANK_OK(do_next(plan));
		RANK_OK(tplan_plan_state(plan, &state, &round));
		RANK_EQ(TPLAN_PLAN_PREPARED, state);
		RANK_EQ(2, round);
		tplan_shared_set(&env->shared[W_LATE + 1], 1);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_LATE + 1], 1, 20000));
		tplan_sleep_ms(LATE_MS);
		RANK_OK(do_next(plan));
	}
	if (lib_round(ctx, plan, env->rank, 2, env->key))
		return -1;

	/* close: torn down on both, CLOSING, then gone */
	if (late_step(env, ctx, 2, do_close, plan))
		return -1;
	tplan_schedule_free(ca.s);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(coll, late_rank_fails_plan_steps_everywhere_and_the_group_goes_on, 180)
{
	int64_t plans;

	RUN_RANKS(2, rank_late, NULL, 160000);
	/* Nothing of the timed-out steps is left. */
	if (!tplan_debugfs_stat("plans", &plans))
		ASSERT_EQ(0, plans);
}

TEST_HARNESS_MAIN
