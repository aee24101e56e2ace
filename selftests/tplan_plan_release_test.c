// SPDX-License-Identifier: GPL-2.0
/*
 * Release-gated rounds: next_round is local.  Each round a rank sends to
 * a peer starts with the kernel's POLL on that peer's release word, so
 *   - a rank that re-arms late never sees its buffer overwritten before
 *     it releases, however far its peers have gone (every round, data
 *     checked while it waits);
 *   - the same when the consumer releases the round itself (the device
 *     header's tplan_release(), or tplan_handle_release()) after the host
 *     re-armed without releasing;
 *   - a rank that cannot queue its round fails the plan on every rank:
 *     the others' waits end with ECANCELED instead of timing out, and
 *     every rank closes;
 *   - a rank that dies while its peers' next round waits for its release
 *     leaves no queue wedged;
 *   - plans sharing queues are re-armed in one order on every rank: in
 *     one order they run without any barrier, in another the re-arm that
 *     breaks it is refused with EDEADLK (its plan fails everywhere) and
 *     the other plan goes on.
 */
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_stall.h"
#include "tplan_device.h"

#define HEAP (1U << 20)
#define PART 4096
#define RANKS_TIMEOUT_MS 300000
/* How long the late rank holds its release while its peers have marked. */
#define LATE_MS 200

/* Shared words */
#define W_MARKED(r)	(r)		/* round whose chunks rank r marked */
#define W_ARMED		8		/* rank 0 re-armed (and started) */
#define W_FAILED	9		/* rank 1's re-arm was refused */

FIXTURE(release) {
	int unused;
};

FIXTURE_SETUP(release)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(release)
{
}

/* An all-gather of PART bytes per rank at off, in nchunks chunks. */
static int ag_plan(struct tp_plan *p, struct tplan_ctx *ctx, uint64_t off, uint32_t nchunks)
{
	static struct tp_even ev;
	unsigned int me = (unsigned int)tplan_ctx_rank(ctx), world =
		(unsigned int)tplan_ctx_world_size(ctx);
	int ret;

	ret = tp_create(p, ctx, off, (uint64_t)PART * world, off + (uint64_t)me * PART, PART,
			nchunks);
	if (!ret)
		ret = tp_even_sched(&ev, off + (uint64_t)me * PART, PART, nchunks, 2, 0);
	return ret ? ret : tp_prepare(p, &ev.s);
}

/* Every rank's part of the buffer holds round's data. */
static int ag_check(struct tp_plan *p, uint32_t round, uint64_t salt)
{
	unsigned char *heap = tplan_heap_ptr(p->ctx, p->rank);
	unsigned int r;

	for (r = 0; r < p->world; r++)
		if (tp_check(heap + p->buf_off + (uint64_t)r * PART, PART,
			     tp_seed(r, round, salt)) >= 0)
			return -(int)r - 1;
	return 0;
}

/* ---- a late release --------------------------------------------------------- */

/*
 * Round k's late rank is k % world.  The others re-arm, fill and mark
 * round k + 1 at once; the late rank waits until they all did, then for
 * LATE_MS more, checking that its buffer still holds round k and that no
 * round k + 1 copy arrived, and only then releases.
 */
static int rank_late(struct tplan_rank_env *env)
{
	unsigned int me = env->rank, r;
	unsigned char *heap;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t round, c;
	uint64_t end;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, me);
	RANK_OK(ag_plan(&p, ctx, 0, 2));
	for (round = 1; round <= 9; round++) {
		tp_fill(heap + (uint64_t)me * PART, PART, tp_seed(me, round, env->key));
		RANK_OK(tp_start(&p, NULL));
		for (c = 0; c < p.nchunks; c++)
			tp_mark(&p, c, round);
		tplan_shared_set(&env->shared[W_MARKED(me)], round);
		RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
		if (ag_check(&p, round, env->key))
			RANK_FAIL("round %u: the data is wrong", round);
		if (round == 9)
			break;
		if (round % env->world == me) {
			/* Late: every peer marked round + 1 and its copies wait for us. */
			for (r = 0; r < env->world; r++)
				if (r != me)
					RANK_OK(tplan_shared_wait(&env->shared[W_MARKED(r)],
								  round + 1, TP_TIMEOUT));
			end = tplan_now_ms() + LATE_MS;
			do {
				if (ag_check(&p, round, env->key))
					RANK_FAIL("round %u + 1's data landed before rank %u released",
						  round, me);
				for (r = 0; r < env->world; r++)
					if (r != me)
						RANK_EQ(round, tp_gate_read(&p, me, p.chunk_base[r],
									    TPLAN_GATE_ARRIVAL));
				tplan_sleep_ms(10);
			} while (tplan_now_ms() < end);
		}
		RANK_OK(tp_next(&p, NULL));
	}
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, late_rank_never_sees_its_buffer_overwritten_before_it_releases, 320)
{
	RUN_RANKS(3, rank_late, NULL, RANKS_TIMEOUT_MS);
}

/* ---- the consumer's own release -------------------------------------------------- */

#define CONSUMER_ROUNDS 8

/* Fill this rank's part for the started round cur and mark every chunk. */
static int consumer_produce(struct tplan_rank_env *env, const struct tplan_handle *cur,
			    unsigned char *own, uint32_t nchunks)
{
	struct tplan_cta cta = { 0 };
	struct tplan_view v;
	uint32_t c;

	tp_fill(own, PART, tp_seed(env->rank, cur->round, env->key));
	tplan_view_init(&v, cur);
	for (c = 0; c < nchunks; c++)
		RANK_OK(tplan_mark_ready(&v, &cta, c));
	tplan_shared_set(&env->shared[W_MARKED(env->rank)], cur->round);
	return 0;
}

/*
 * Every round k: wait for it and check it, re-arm at once without
 * releasing it, start round k + 1 and mark it; then consume round k: its
 * data is checked again and again until LATE_MS after every peer marked
 * round k + 1 (none of that lands meanwhile), and only then the consumer
 * releases round k: the header's tplan_release() in odd rounds,
 * tplan_handle_release() in even ones.
 */
static int rank_consumer(struct tplan_rank_env *env)
{
	unsigned int me = env->rank, r;
	struct tplan_cta cta = { 0 };
	struct tplan_tensor out, mine;
	struct tplan_handle read, cur;
	struct tplan_schedule *s;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	struct tplan_view v;
	unsigned char *heap;
	uint32_t round;
	uint64_t end;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, me);
	out = (struct tplan_tensor) { .rows = env->world * PART / 64, .cols = 64, .elem_size = 1 };
	RANK_OK(tplan_heap_alloc(ctx, (uint64_t)env->world * PART, 4096, &out.offset));
	mine = out;
	mine.rows = PART / 64;
	mine.offset = out.offset + (uint64_t)me * PART;
	RANK_OK(tplan_schedule_chunks(&mine, mine.rows / 2, 1, 0, &s));
	RANK_OK(tplan_prepare_all_gather(ctx, &out, s, &plan));
	RANK_OK(tplan_plan_start(plan, &cur));
	if (consumer_produce(env, &cur, heap + mine.offset, tplan_schedule_nchunks(s)))
		return -1;
	for (round = 1;; round++) {
		if (tplan_plan_wait(plan, TP_TIMEOUT))
			RANK_FAIL("round %u: %s", round, tplan_ctx_error(ctx));
		for (r = 0; r < env->world; r++)
			if (tp_check(heap + out.offset + (uint64_t)r * PART, PART,
				     tp_seed(r, round, env->key)) >= 0)
				RANK_FAIL("round %u: rank %u's part is wrong", round, r);
		if (round == CONSUMER_ROUNDS)
			break;
		RANK_OK(tplan_plan_next_round_unreleased(plan));
		read = cur;
		RANK_OK(tplan_plan_start(plan, &cur));
		RANK_EQ(round + 1, cur.round);
		if (consumer_produce(env, &cur, heap + mine.offset, tplan_schedule_nchunks(s)))
			return -1;
		for (r = 0; r < env->world; r++)
			if (r != me)
				RANK_OK(tplan_shared_wait(&env->shared[W_MARKED(r)], round + 1,
							  TP_TIMEOUT));
		end = tplan_now_ms() + LATE_MS;
		do {
			for (r = 0; r < env->world; r++)
				if (r != me && tp_check(heap + out.offset + (uint64_t)r * PART, PART,
							tp_seed(r, round, env->key)) >= 0)
					RANK_FAIL("round %u: rank %u's next round landed before the consumer released",
						  round, r);
			tplan_sleep_ms(10);
		} while (tplan_now_ms() < end);
		if (round % 2) {
			tplan_view_init(&v, &read);
			RANK_OK(tplan_release(&v, &cta));
		} else {
			RANK_OK(tplan_handle_release(&read));
		}
	}
	RANK_OK(tplan_plan_close(plan, NULL));
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, a_consumer_releases_the_round_itself_after_an_unreleased_rearm, 320)
{
	RUN_RANKS(3, rank_consumer, NULL, RANKS_TIMEOUT_MS);
}

/* ---- a re-arm that fails ---------------------------------------------------- */

/*
 * Rank 1's queue to rank 0 is stalled with a full ring, so its re-arm
 * times out waiting for ring space; rank 0 re-armed, started and marked
 * round 2 and waits for it: the wait ends with ECANCELED (not at its own
 * timeout), the plan is FAILED on both ranks, and both close it.
 */
static int rank_fail(struct tplan_rank_env *env)
{
	const uint64_t stall = HEAP / 2;
	struct tplan_ctx *ctx;
	uint32_t state, round;
	struct tp_plan p;
	uint64_t t0;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(ag_plan(&p, ctx, 0, 2));
	if (tp_ag_round(&p, PART, 1, env->key))
		return -1;
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 0) {
		RANK_OK(tp_next(&p, &round));
		RANK_EQ(2, round);
		RANK_OK(tp_start(&p, NULL));
		tp_mark(&p, 0, 2);
		tp_mark(&p, 1, 2);
		tplan_shared_set(&env->shared[W_ARMED], 1);
		t0 = tplan_now_ms();
		RANK_ERR(-ECANCELED, tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
		/* Ended by rank 1's failure, not by its own timeout. */
		RANK_ASSERT(tplan_now_ms() - t0 < TP_TIMEOUT);
		RANK_OK(tp_state(&p, &state, NULL));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		RANK_ERR(-EBUSY, tp_next(&p, NULL));
	} else {
		RANK_OK(tplan_stall_queue(ctx, 0, stall, 128));
		RANK_OK(tplan_shared_wait(&env->shared[W_ARMED], 1, TP_TIMEOUT));
		p.step_timeout_ms = 2000;
		RANK_ERR(-ETIMEDOUT, tp_next(&p, NULL));
		tplan_shared_set(&env->shared[W_FAILED], 1);
		RANK_OK(tp_state(&p, &state, &round));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		RANK_EQ(1, round);
		RANK_ERR(-EBUSY, tp_start(&p, NULL));
		tplan_stall_release(ctx, stall);
	}
	RANK_OK(tp_close(&p, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, a_rank_that_cannot_queue_its_round_fails_the_plan_everywhere, 200)
{
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	RUN_RANKS(2, rank_fail, NULL, 180000);
}

/* ---- a rank that dies ------------------------------------------------------- */

/*
 * Ranks 0 and 2 re-arm, start and mark round 2, whose copies to rank 1
 * wait for rank 1's release; rank 1 goes without releasing.  Their waits
 * end (the group broke), their closes return, and their queues to rank 1
 * run dry: nothing waits for a release that can never come.
 */
static int rank_dies(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	struct tp_plan p;
	unsigned int r;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(ag_plan(&p, ctx, 0, 2));
	if (tp_ag_round(&p, PART, 1, env->key))
		return -1;
	if (env->rank == 1) {
		for (r = 0; r < env->world; r++)
			if (r != 1)
				RANK_OK(tplan_shared_wait(&env->shared[W_MARKED(r)], 2,
							  TP_TIMEOUT));
		/* Its peers' round 2 is queued for it, gated on its release. */
		tp_free_chains(&p);
		tplan_ctx_close(ctx);
		return 0;
	}
	RANK_OK(tp_next(&p, NULL));
	RANK_OK(tp_start(&p, NULL));
	tp_mark(&p, 0, 2);
	tp_mark(&p, 1, 2);
	tplan_shared_set(&env->shared[W_MARKED(env->rank)], 2);
	ret = tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL);
	RANK_ASSERT(ret == -ECONNRESET);
	/* The close reports the broken group; the part goes all the same. */
	ret = tp_close(&p, NULL);
	RANK_ASSERT(ret != -ETIMEDOUT && ret != -ENOENT);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, a_rank_that_dies_with_peers_armed_leaves_no_queue_wedged, 200)
{
	RUN_RANKS(3, rank_dies, NULL, 180000);
}

/* ---- plans sharing queues ------------------------------------------------------ */

/* Both ranks re-arm A then B, every round, with no barrier anywhere. */
static int rank_one_order(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	struct tp_plan a, b;
	uint32_t round;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(ag_plan(&a, ctx, 0, 2));
	RANK_OK(ag_plan(&b, ctx, 4 * PART, 1));
	for (round = 1; round <= 30; round++) {
		if (round > 1) {
			RANK_OK(tp_next(&a, NULL));
			RANK_OK(tp_next(&b, NULL));
		}
		if (tp_ag_round(&a, PART, round, env->key) ||
		    tp_ag_round(&b, PART, round, env->key ^ 0xb))
			return -1;
	}
	RANK_OK(tp_close(&b, NULL));
	RANK_OK(tp_close(&a, NULL));
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, plans_sharing_queues_rearmed_in_one_order_run_without_a_barrier, 200)
{
	RUN_RANKS(2, rank_one_order, NULL, 180000);
}

/*
 * Rank 0 re-arms A then B; rank 1, once rank 0 did, re-arms B first: B's
 * round from rank 0 is queued behind A's, which waits for rank 1's
 * release of A, so rank 1 could wait for B forever.  Refused: EDEADLK,
 * B fails on both ranks, A goes on (its round 2 is checked), both close.
 */
static int rank_two_orders(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	struct tp_plan a, b;
	uint32_t state;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(ag_plan(&a, ctx, 0, 2));
	RANK_OK(ag_plan(&b, ctx, 4 * PART, 1));
	if (tp_ag_round(&a, PART, 1, env->key) || tp_ag_round(&b, PART, 1, env->key ^ 0xb))
		return -1;
	if (env->rank == 0) {
		RANK_OK(tp_next(&a, NULL));
		RANK_OK(tp_next(&b, NULL));
		tplan_shared_set(&env->shared[W_ARMED], 1);
		RANK_OK(tplan_shared_wait(&env->shared[W_FAILED], 1, TP_TIMEOUT));
		RANK_ERR(-ECANCELED, tp_start(&b, NULL));
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_ARMED], 1, TP_TIMEOUT));
		RANK_ERR(-EDEADLK, tp_next(&b, NULL));
		RANK_OK(tp_state(&b, &state, NULL));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		tplan_shared_set(&env->shared[W_FAILED], 1);
		RANK_OK(tp_next(&a, NULL));
	}
	if (tp_ag_round(&a, PART, 2, env->key))
		return -1;
	RANK_OK(tp_state(&b, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_close(&b, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_close(&a, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(release, plans_sharing_queues_rearmed_in_another_order_are_refused, 200)
{
	RUN_RANKS(2, rank_two_orders, NULL, 180000);
}

TEST_HARNESS_MAIN
