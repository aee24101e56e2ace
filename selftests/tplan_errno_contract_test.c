// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract, where the in-VM fuzzer (tplan_fuzz) found the module
 * answering with a code uapi/tplan.h does not list for the ioctl.  Each
 * test drives one path on purpose and checks the answer against the table
 * generated from the header (tplan_errno.h):
 *   - a collective step meeting another rank's different collective
 *     (the rank that notices; PLAN_CREATE, PLAN_PREPARE, PLAN_NEXT_ROUND,
 *     PLAN_CLOSE);
 *   - PLAN_PREPARE on a faulted queue;
 *   - QUEUE_INJECT after a rank left, and interrupted while it waits for
 *     ring space;
 *   - PUT waiting for ring space that the engine never frees;
 *   - PLAN_CLOSE of a plan left CLOSING.
 * Which code the module should give is the header's to say: the tests only
 * require one that it lists.
 */
#include <pthread.h>

#include "tplan_plan_util.h"
#include "tplan_stall.h"
#include "tplan_errno.h"

#define HEAP (1U << 20)
#define PART 4096
#define RANKS_TIMEOUT_MS 100000
#define STALL_WORD (HEAP / 2)		/* scratch, far from the plan buffers */

/* shared words */
#define W_PID(r)	(r)		/* each rank's pid */
#define W_STEP		8		/* hand-shakes */

FIXTURE(contract) {
	int unused;
};

FIXTURE_SETUP(contract)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(contract)
{
}

/* A plan of one chunk per rank over its PART bytes, prepared. */
static int one_chunk_plan(struct tp_plan *p, struct tplan_ctx *ctx, unsigned int rank,
			  unsigned int world, uint64_t base, int prepare)
{
	static struct tp_even ev;
	int ret;

	ret = tp_create(p, ctx, base, (uint64_t)PART * world, base + (uint64_t)rank * PART, PART, 1);
	if (ret || !prepare)
		return ret;
	ret = tp_even_sched(&ev, base + (uint64_t)rank * PART, PART, 1, 1, 0);
	return ret ? ret : tp_prepare(p, &ev.s);
}

/* ---- a collective meeting another rank's barrier -------------------------------------- */

enum mismatch { MM_CREATE, MM_PREPARE, MM_CLOSE };

/*
 * Rank 1 waits in a barrier; rank 0 then takes its next collective step of
 * another kind and is the rank that notices.  Both answers must be codes
 * the header lists for the respective ioctl.
 */
static int rank_mismatch(struct tplan_rank_env *env)
{
	enum mismatch kind = *(enum mismatch *)env->arg;
	static const unsigned long cmds[] = {
		[MM_CREATE] = TPLAN_IOC_PLAN_CREATE, [MM_PREPARE] = TPLAN_IOC_PLAN_PREPARE,
		[MM_CLOSE] = TPLAN_IOC_PLAN_CLOSE,
	};
	struct tplan_ctx *ctx;
	struct tp_plan p;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	tplan_shared_set(&env->shared[W_PID(env->rank)], (uint64_t)getpid());
	if (kind != MM_CREATE)
		RANK_OK(one_chunk_plan(&p, ctx, env->rank, env->world, 0, kind != MM_PREPARE));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));

	if (env->rank == 1) {
		ret = tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS);
		RANK_ASSERT(ret < 0);
		RANK_LISTED(TPLAN_IOC_GROUP_BARRIER, ret);
		tplan_ctx_close(ctx);
		return 0;
	}
	RANK_OK(tplan_shared_wait(&env->shared[W_PID(1)], 1, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_PID(1)], TPLAN_TEST_TIMEOUT_MS));
	switch (kind) {
	case MM_CREATE:
		ret = tp_create(&p, ctx, 0, 2 * PART, 0, PART, 1);
		break;
	case MM_PREPARE: {
		static struct tp_even ev;

		RANK_OK(tp_even_sched(&ev, 0, PART, 1, 1, 0));
		ret = tp_prepare(&p, &ev.s);
		break;
	}
	default:
		ret = tp_close(&p, NULL);
		break;
	}
	RANK_ASSERT(ret < 0);
	RANK_LISTED(cmds[kind], ret);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, plan_create_meeting_a_barrier_fails_with_a_listed_code, 90)
{
	enum mismatch k = MM_CREATE;

	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(2, rank_mismatch, &k, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(contract, plan_prepare_meeting_a_barrier_fails_with_a_listed_code, 90)
{
	enum mismatch k = MM_PREPARE;

	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(2, rank_mismatch, &k, RANKS_TIMEOUT_MS);
}

/*
 * next_round is not a collective: while rank 1 waits in a barrier, rank
 * 0 re-arms (there is nothing for it to meet), then joins the barrier.
 */
static int rank_next_round_local(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	struct tp_plan p;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	tplan_shared_set(&env->shared[W_PID(env->rank)], (uint64_t)getpid());
	RANK_OK(one_chunk_plan(&p, ctx, env->rank, env->world, 0, true));
	RANK_OK(tp_start(&p, NULL));
	tp_mark(&p, 0, 1);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	if (env->rank == 0) {
		RANK_OK(tplan_shared_wait(&env->shared[W_PID(1)], 1, TPLAN_TEST_TIMEOUT_MS));
		RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_PID(1)],
						TPLAN_TEST_TIMEOUT_MS));
		RANK_OK(tp_next(&p, NULL));
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	if (env->rank == 1)
		RANK_OK(tp_next(&p, NULL));
	RANK_OK(tp_close(&p, NULL));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, plan_next_round_is_local_and_meets_no_barrier, 90)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(2, rank_next_round_local, NULL, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(contract, plan_close_meeting_a_barrier_fails_with_a_listed_code, 90)
{
	enum mismatch k = MM_CLOSE;

	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(2, rank_mismatch, &k, RANKS_TIMEOUT_MS);
}

/* ---- faulted queue, broken group -------------------------------------------------- */

/* Rank 0's queue to rank 1 faults on a bad packet; then both prepare a plan. */
static int rank_prepare_on_faulted_queue(struct tplan_rank_env *env)
{
	uint32_t bad = 0xffffffffU;	/* no packet of any kind */
	struct tplan_queue_info qi;
	struct tplan_ctx *ctx;
	struct tp_plan p;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	if (env->rank == 0) {
		RANK_OK(tplan_test_inject(ctx, 1, &bad, 1));
		RANK_OK(tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, TPLAN_TEST_TIMEOUT_MS));
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tp_create(&p, ctx, 0, 2 * PART, env->rank * PART, PART, 1));
	{
		static struct tp_even ev;
		int ret;

		RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, 1, 1, 0));
		ret = tp_prepare(&p, &ev.s);
		RANK_ASSERT(ret < 0);
		RANK_LISTED(TPLAN_IOC_PLAN_PREPARE, ret);
	}
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, plan_prepare_on_a_faulted_queue_fails_with_a_listed_code, 90)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	RUN_RANKS(2, rank_prepare_on_faulted_queue, NULL, RANKS_TIMEOUT_MS);
}

/* Rank 1 leaves; rank 0 injects into the queue to it. */
static int rank_inject_after_peer_left(struct tplan_rank_env *env)
{
	uint32_t nop;
	struct tplan_ctx *ctx;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	if (env->rank == 1) {
		tplan_ctx_close(ctx);
		return 0;
	}
	/* the barrier fails once rank 1's file is gone */
	RANK_ASSERT(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS) < 0);
	RANK_ASSERT(tplan_sdma_encode_nop(&nop, 1, &(struct tplan_sdma_nop){ .dwords = 1 }) == 1);
	ret = tplan_test_inject(ctx, 1, &nop, 1);
	RANK_ASSERT(ret < 0);
	RANK_LISTED(TPLAN_IOC_QUEUE_INJECT, ret);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, queue_inject_after_a_rank_left_fails_with_a_listed_code, 60)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	RUN_RANKS(2, rank_inject_after_peer_left, NULL, RANKS_TIMEOUT_MS);
}

/* ---- waits for ring space ---------------------------------------------------------- */

static void on_usr1(int sig)
{
	(void)sig;
}

struct poke {
	pthread_t to;
	unsigned int after_ms;
};

static void *poke_later(void *arg)
{
	struct poke *pk = arg;

	tplan_sleep_ms(pk->after_ms);
	pthread_kill(pk->to, SIGUSR1);
	return NULL;
}

enum ring_wait { RW_INJECT_SIGNALLED, RW_PUT_TIMED_OUT };

/*
 * Rank 0 stalls its queue to rank 1 with a full ring, then queues one more
 * thing there: an injection that a signal interrupts, or a put that the
 * engine never makes room for (the module's 30 s).
 */
static int rank_ring_wait(struct tplan_rank_env *env)
{
	enum ring_wait kind = *(enum ring_wait *)env->arg;
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct poke pk = { .to = pthread_self(), .after_ms = 500 };
	struct tplan_ctx *ctx;
	uint32_t dw[64] = { 0 };
	pthread_t th;
	int ret, n;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	if (env->rank == 1) {
		/* until rank 0 is done */
		tplan_barrier(ctx, 120000);
		tplan_ctx_close(ctx);
		return 0;
	}
	RANK_OK(tplan_stall_queue(ctx, 1, STALL_WORD, 256));
	if (kind == RW_INJECT_SIGNALLED) {
		sigemptyset(&sa.sa_mask);
		RANK_OK(sigaction(SIGUSR1, &sa, NULL));
		RANK_OK(pthread_create(&th, NULL, poke_later, &pk));
		RANK_ASSERT(tplan_sdma_encode_nop(dw, 64, &(struct tplan_sdma_nop){ .dwords = 64 }) == 64);
		ret = tplan_test_inject(ctx, 1, dw, 64);
		pthread_join(th, NULL);
		RANK_ASSERT(ret < 0);
		RANK_LISTED(TPLAN_IOC_QUEUE_INJECT, ret);
	} else {
		/* a copy packet each, until one finds the ring full and waits */
		for (n = 0; n < 64 && !(ret = tplan_put(ctx, 1, 0, 0, 4096)); n++)
			;
		RANK_ASSERT(ret < 0);
		RANK_LISTED(TPLAN_IOC_PUT, ret);
	}
	tplan_stall_release(ctx, STALL_WORD);
	tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, queue_inject_interrupted_waiting_for_ring_space_fails_with_a_listed_code, 90)
{
	enum ring_wait k = RW_INJECT_SIGNALLED;

	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	RUN_RANKS(2, rank_ring_wait, &k, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(contract, put_that_never_gets_ring_space_fails_with_a_listed_code, 120)
{
	enum ring_wait k = RW_PUT_TIMED_OUT;

	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	RUN_RANKS(2, rank_ring_wait, &k, RANKS_TIMEOUT_MS);
}

/* ---- a plan left CLOSING ------------------------------------------------------------ */

/*
 * Plans A then B on the same queues, both prepared and gated; closing B
 * leaves it CLOSING behind A's chains.  Closing B again must answer with a
 * listed code; closing A then finishes both.
 */
static int rank_close_closing(struct tplan_rank_env *env)
{
	struct tp_plan a, b;
	struct tplan_ctx *ctx;
	uint32_t state;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(one_chunk_plan(&a, ctx, env->rank, env->world, 0, 1));
	RANK_OK(one_chunk_plan(&b, ctx, env->rank, env->world, 2 * PART, 1));
	RANK_OK(tp_close(&b, &state));
	RANK_EQ(TPLAN_PLAN_CLOSING, state);
	ret = tp_close(&b, &state);
	RANK_LISTED(TPLAN_IOC_PLAN_CLOSE, ret);
	RANK_OK(tp_close(&a, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(contract, plan_close_of_a_closing_plan_answers_with_a_listed_code, 90)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(2, rank_close_closing, NULL, RANKS_TIMEOUT_MS);
}

TEST_HARNESS_MAIN
