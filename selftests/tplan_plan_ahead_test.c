// SPDX-License-Identifier: GPL-2.0
/*
 * Rounds armed ahead (a plan of depth D keeps D rounds queued): every
 * round queued carries its own release and ready POLLs, so one buffer
 * serves D rounds in flight, and the library runs the armed rounds in
 * user space on the mapped gates.
 *   - 10 000 rounds of two ranks at depth 8, every rank's data checked
 *     every round: start never calls the kernel, next_round once per 8
 *     rounds (1 000 on the debug kernel, whose KASAN makes each round ten
 *     times dearer and whose checks gain nothing from the other 9 000);
 *     then 200 rounds of three ranks at depth 64;
 *   - the kernel queues exactly depth rounds at prepare, and again at
 *     each TPLAN_NEXT_ROUND_AT, with one doorbell per queue for them; a
 *     round outside what is armed is refused (EINVAL), as is a depth past
 *     the budget (ENOSPC, on every rank) or past TPLAN_PLAN_DEPTH_MAX
 *     (EINVAL);
 *   - a wait that must sleep goes to the kernel at the round the library
 *     has reached; a mark too many is still caught (EOVERFLOW); the
 *     library refuses next_round before the round's wait (EBUSY);
 *   - a plan armed ahead shares no queue with another live plan: prepare
 *     refuses either order with EDEADLK on every rank;
 *   - a rank that dies with its peers' rounds armed ahead leaves no queue
 *     wedged;
 *   - close opens every armed round's gates, and keeps them open while it
 *     drains: a producer's mark that lands after the close opened them
 *     (storing an earlier round in the ready gate) does not wedge it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tplan_plan_util.h"
#include "tplan_device.h"

#define HEAP (1U << 20)
#define PART 1024
#define RANKS_TIMEOUT_MS 1500000
#define LONG_ROUNDS 10000

/* Shared words */
#define W_READY		0	/* rank 0 marked its chunks once (of two writers) */
#define W_LATE		1	/* rank 0's late mark landed after its close opened the gates */
#define W_ROUND(r)	(2 + (r))	/* the last round rank r completed */
#define W_ARM_FAILED	12	/* rank 1's re-arm failed */

FIXTURE(ahead) {
	int unused;
};

FIXTURE_SETUP(ahead)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(ahead)
{
}

/* An all-gather through the library of PART bytes per rank in nchunks chunks, armed depth ahead. */
struct ag {
	struct tplan_ctx *ctx;
	struct tplan_plan *plan;
	struct tplan_schedule *s;
	struct tplan_tensor out, mine;
	unsigned char *heap;
};

static int ag_make(struct tplan_rank_env *env, struct ag *a, uint32_t nchunks, uint32_t depth)
{
	unsigned int me = env->rank;

	RANK_OK(tp_join(env, HEAP, 0, &a->ctx));
	a->heap = tplan_heap_ptr(a->ctx, me);
	RANK_OK(tplan_ctx_set_rounds_ahead(a->ctx, depth));
	a->out = (struct tplan_tensor) {
		.rows = env->world * PART / 64, .cols = 64, .elem_size = 1,
	};
	RANK_OK(tplan_heap_alloc(a->ctx, (uint64_t)env->world * PART, 4096, &a->out.offset));
	a->mine = a->out;
	a->mine.rows = PART / 64;
	a->mine.offset = a->out.offset + (uint64_t)me * PART;
	RANK_OK(tplan_schedule_chunks(&a->mine, a->mine.rows / nchunks, 1, 0, &a->s));
	return tplan_prepare_all_gather(a->ctx, &a->out, a->s, &a->plan);
}

static void ag_free(struct ag *a)
{
	tplan_schedule_free(a->s);
	tplan_ctx_close(a->ctx);
}

/* Fill this rank's part for round and mark every chunk through the handle. */
static int ag_produce(struct tplan_rank_env *env, struct ag *a, const struct tplan_handle *h)
{
	uint32_t c;

	tp_fill(a->heap + a->mine.offset, PART, tp_seed(env->rank, h->round, env->key));
	for (c = 0; c < h->nchunks; c++)
		RANK_OK(tplan_handle_mark_ready(h, c));
	return 0;
}

/* Every rank's part holds round's data. */
static int ag_check(struct tplan_rank_env *env, struct ag *a, uint32_t round)
{
	unsigned int r;

	for (r = 0; r < env->world; r++)
		if (tp_check(a->heap + a->out.offset + (uint64_t)r * PART, PART,
			     tp_seed(r, round, env->key)) >= 0)
			RANK_FAIL("round %u: rank %u's part is wrong", round, r);
	return 0;
}

/* One round through the library: start, fill and mark, wait, check every part. */
static int ag_round(struct tplan_rank_env *env, struct ag *a, uint32_t round)
{
	struct tplan_handle h;

	RANK_OK(tplan_plan_start(a->plan, &h));
	if (ag_produce(env, a, &h))
		return -1;
	if (tplan_plan_wait(a->plan, TP_TIMEOUT))
		RANK_FAIL("round %u: %s", round, tplan_ctx_error(a->ctx));
	return ag_check(env, a, round);
}

/* ---- many rounds, verified ------------------------------------------------------ */

struct long_arg {
	uint32_t depth, rounds;
};

/*
 * Every round: start (no call), fill and mark, wait, check every part,
 * next_round.  Counts the calls each step makes: start none, next_round
 * one per depth rounds (when the armed rounds are used up).
 */
static int rank_long(struct tplan_rank_env *env)
{
	const struct long_arg *arg = env->arg;
	uint64_t start_calls = 0, next_calls = 0, wait_calls = 0, before;
	struct tplan_handle h;
	uint32_t round, state, at;
	struct ag a;

	RANK_OK(ag_make(env, &a, 2, arg->depth));
	for (round = 1;; round++) {
		before = tplan_ctx_ioctls(a.ctx);
		RANK_OK(tplan_plan_start(a.plan, &h));
		start_calls += tplan_ctx_ioctls(a.ctx) - before;
		RANK_EQ(round, h.round);
		if (ag_produce(env, &a, &h))
			return -1;
		before = tplan_ctx_ioctls(a.ctx);
		if (tplan_plan_wait(a.plan, TP_TIMEOUT))
			RANK_FAIL("round %u: %s", round, tplan_ctx_error(a.ctx));
		wait_calls += tplan_ctx_ioctls(a.ctx) - before;
		if (ag_check(env, &a, round))
			return -1;
		if (round == arg->rounds)
			break;
		before = tplan_ctx_ioctls(a.ctx);
		RANK_OK(tplan_plan_next_round(a.plan));
		next_calls += tplan_ctx_ioctls(a.ctx) - before;
	}
	RANK_OK(tplan_plan_state(a.plan, &state, &at));
	RANK_EQ(TPLAN_PLAN_DONE, state);
	RANK_EQ(arg->rounds, at);
	RANK_EQ(0, start_calls);
	/* Rounds 1..depth armed at prepare, then depth more at each call. */
	RANK_EQ((arg->rounds - 1) / arg->depth, next_calls);
	if (env->rank == 0)
		printf("# depth %u, %u rounds: next_round called the kernel %llu times, start %llu, wait %llu (to sleep)\n",
		       arg->depth, arg->rounds, (unsigned long long)next_calls,
		       (unsigned long long)start_calls, (unsigned long long)wait_calls);
	RANK_OK(tplan_plan_close(a.plan, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_queues_idle(a.ctx, TP_TIMEOUT));
	ag_free(&a);
	return 0;
}

TEST_F_TIMEOUT(ahead, ten_thousand_rounds_at_depth_8_verified_calling_the_kernel_once_per_8, 1800)
{
	struct long_arg arg = { .depth = 8, .rounds = LONG_ROUNDS };

	if (tplan_test_debug_kernel()) {
		arg.rounds = LONG_ROUNDS / 10;
		TH_LOG("debug kernel: %u rounds (%u on the Debian kernels)", arg.rounds,
		       LONG_ROUNDS);
	}

	RUN_RANKS(2, rank_long, &arg, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(ahead, two_hundred_rounds_at_depth_64_verified, 600)
{
	struct long_arg arg = { .depth = 64, .rounds = 200 };

	RUN_RANKS(3, rank_long, &arg, 540000);
}

/* ---- what the kernel queues --------------------------------------------------- */

/* PLAN_STATE's round, armed and depth. */
static int raw_state(struct tp_plan *p, struct tplan_plan_state *st)
{
	*st = (struct tplan_plan_state) { .size = sizeof(*st), .plan_id = p->id };
	return tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_STATE, st);
}

static int raw_next_at(struct tp_plan *p, uint32_t round, struct tplan_plan_next_round *n)
{
	*n = (struct tplan_plan_next_round) {
		.size = sizeof(*n), .plan_id = p->id, .timeout_ms = TP_TIMEOUT,
		.flags = TPLAN_NEXT_ROUND_AT, .round = round,
	};
	return tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_NEXT_ROUND, n);
}

static int raw_wait_at(struct tp_plan *p, uint32_t round)
{
	struct tplan_plan_wait w = {
		.size = sizeof(w), .plan_id = p->id, .timeout_ms = TP_TIMEOUT,
		.flags = TPLAN_PLAN_WAIT_AT, .round = round,
	};

	return tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_WAIT, &w);
}

/*
 * Depth 4 through the raw ioctls: prepare queues rounds 1..4 (each
 * queue's wptr grows by four rounds' bytes), rounds 1..3 run with no
 * call but the marks and the release stores, round 4's wait names its
 * round, next_round at 4 queues 5..8 (four rounds' bytes again), and
 * rounds outside 4..armed are refused without changing anything.
 */
static int rank_raw(struct tplan_rank_env *env)
{
	struct tp_qsnap s0, s1, s2;
	struct tplan_queue_info qi;
	struct tplan_plan_next_round n;
	struct tplan_plan_state st;
	struct tplan_ctx *ctx;
	static struct tp_even ev;
	struct tp_plan p;
	unsigned int me = env->rank, peer = !env->rank;
	unsigned char *heap;
	uint64_t *release, d0;
	uint32_t round, c;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, me);
	RANK_OK(tp_snap(ctx, &s0));
	RANK_OK(tplan_queue_info(ctx, peer, &qi));
	d0 = qi.doorbells;
	RANK_OK(tp_create_depth(&p, ctx, 0, 2 * PART, (uint64_t)me * PART, PART, 2, 4));
	RANK_OK(tp_even_sched(&ev, (uint64_t)me * PART, PART, 2, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(raw_state(&p, &st));
	RANK_EQ(TPLAN_PLAN_PREPARED, st.state);
	RANK_EQ(1, st.round);
	RANK_EQ(4, st.armed);
	RANK_EQ(4, st.depth);
	RANK_OK(tp_snap(ctx, &s1));
	/* Round 1 at the commit, then one doorbell for rounds 2..4. */
	RANK_OK(tplan_queue_info(ctx, peer, &qi));
	RANK_EQ(d0 + 2, qi.doorbells);
	release = tp_gate(&p, me, p.chunk_base[2], TPLAN_GATE_RELEASED);
	for (round = 1; round <= 4; round++) {
		tp_fill(heap + (uint64_t)me * PART, PART, tp_seed(me, round, env->key));
		for (c = 0; c < 2; c++)
			tp_mark(&p, c, round);
		/* Round 4 through the kernel's wait; the others by the counts. */
		if (round == 4) {
			RANK_ERR(-EINVAL, raw_wait_at(&p, 5));
			RANK_OK(raw_wait_at(&p, 4));
		} else {
			for (c = 0; c < 4; c++) {
				uint32_t g = c < 2 ? p.chunk_base[me] + c : p.chunk_base[peer] + c - 2;
				unsigned int where = c < 2 ? peer : me;
				uint64_t t0 = tplan_now_ms();

				while (tp_gate_read(&p, where, g, TPLAN_GATE_ARRIVAL) < round)
					if (tplan_now_ms() - t0 > TP_TIMEOUT)
						RANK_FAIL("round %u: chunk %u never arrived", round, g);
			}
		}
		if (tp_check(heap + (uint64_t)peer * PART, PART, tp_seed(peer, round, env->key)) >= 0)
			RANK_FAIL("round %u: the peer's part is wrong", round);
		if (round < 4)
			__atomic_store_n(release, round, __ATOMIC_RELEASE);
	}
	RANK_OK(raw_state(&p, &st));
	RANK_EQ(TPLAN_PLAN_DONE, st.state);
	RANK_EQ(4, st.round);
	/* Outside module round .. armed: refused, nothing changed. */
	RANK_ERR(-EINVAL, raw_next_at(&p, 3, &n));
	RANK_ERR(-EINVAL, raw_next_at(&p, 5, &n));
	RANK_OK(tplan_queue_info(ctx, peer, &qi));
	d0 = qi.doorbells;
	RANK_OK(raw_next_at(&p, 4, &n));
	RANK_EQ(5, n.round);
	RANK_EQ(8, n.armed);
	RANK_OK(tp_snap(ctx, &s2));
	/* Four rounds, one doorbell. */
	RANK_OK(tplan_queue_info(ctx, peer, &qi));
	RANK_EQ(d0 + 1, qi.doorbells);
	/*
	 * Prepare queued four rounds, the call four more: the same rounds'
	 * bytes each time, and one done FENCE per arm (prepare's two: round 1
	 * at the commit, then rounds 2..4), none per round.
	 */
	RANK_EQ(s1.wptr[peer] - s0.wptr[peer],
		s2.wptr[peer] - s1.wptr[peer] + TPLAN_SDMA_FENCE_DW * 4);
	RANK_ASSERT(s2.wptr[peer] - s1.wptr[peer] > 4 * TPLAN_SDMA_FENCE_DW * 4);
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(ahead, prepare_and_next_round_queue_depth_rounds_and_refuse_rounds_not_armed, 200)
{
	RUN_RANKS(2, rank_raw, NULL, 180000);
}

/*
 * A depth past TPLAN_PLAN_DEPTH_MAX: EINVAL at create (the library's
 * setting too).  A depth whose rounds do not fit a queue's budget:
 * ENOSPC at prepare on every rank, nothing queued: 1024 chunks make a
 * round of more than 1024 chains' bytes, 64 rounds of it more than the
 * budget (skipped on a ring large enough to take them).
 */
#define DEEP_CHUNKS 1024
#define DEEP_PART 65536
static int rank_too_deep(struct tplan_rank_env *env)
{
	uint64_t chain = 4 * (TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW);
	static struct tp_even ev;
	struct tplan_queue_info qi;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	unsigned int me = env->rank;
	uint32_t state;

	/* Room for 2048 chunks' gate rows. */
	RANK_OK(tp_join(env, 8 * HEAP, 0, &ctx));
	RANK_ERR(-EINVAL, tplan_ctx_set_rounds_ahead(ctx, TPLAN_PLAN_DEPTH_MAX + 1));
	RANK_ERR(-EINVAL, tp_create_depth(&p, ctx, 0, 2 * PART, (uint64_t)me * PART, PART, 2,
					  TPLAN_PLAN_DEPTH_MAX + 1));
	RANK_OK(tplan_queue_info(ctx, !me, &qi));
	if ((uint64_t)TPLAN_PLAN_DEPTH_MAX * DEEP_CHUNKS * chain <= qi.prep_limit) {
		printf("# ring of %u bytes: 64 rounds fit its budget, nothing to refuse\n",
		       qi.ring_size);
		tplan_ctx_close(ctx);
		return 0;
	}
	RANK_OK(tp_create_depth(&p, ctx, 0, 2 * DEEP_PART, (uint64_t)me * DEEP_PART, DEEP_PART,
				DEEP_CHUNKS, TPLAN_PLAN_DEPTH_MAX));
	RANK_OK(tp_even_sched(&ev, (uint64_t)me * DEEP_PART, DEEP_PART, DEEP_CHUNKS, 1, 0));
	RANK_ERR(-ENOSPC, tp_prepare(&p, &ev.s));
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tplan_queue_info(ctx, !me, &qi));
	RANK_EQ(0, qi.prep_reserved);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_depth_past_the_budget_is_refused_on_every_rank, 200)
{
	RUN_RANKS(2, rank_too_deep, NULL, 180000);
}

/* ---- the library's user-space rounds --------------------------------------------- */

/*
 * Rank 1 waits before rank 0 has marked: its wait must sleep, in the
 * kernel, at the round the library reached (the kernel's own round is
 * behind).  Then rank 0 marks a chunk once too often: its wait goes to
 * the kernel, which reports EOVERFLOW.  The library refuses a next_round
 * before the round's wait and a second start.
 */
static int rank_sleep(struct tplan_rank_env *env)
{
	struct tplan_handle h;
	uint32_t round, state;
	struct ag a;
	int ret;

	RANK_OK(ag_make(env, &a, 2, 4));
	for (round = 1; round <= 3; round++) {
		RANK_OK(tplan_plan_start(a.plan, &h));
		RANK_ERR(-EBUSY, tplan_plan_start(a.plan, &h));
		RANK_ERR(-EBUSY, tplan_plan_next_round(a.plan));
		if (env->rank == 0 && round == 3)
			tplan_sleep_ms(300);	/* rank 1's wait sleeps meanwhile */
		if (ag_produce(env, &a, &h))
			return -1;
		if (tplan_plan_wait(a.plan, TP_TIMEOUT))
			RANK_FAIL("round %u: %s", round, tplan_ctx_error(a.ctx));
		if (ag_check(env, &a, round))
			return -1;
		RANK_OK(tplan_plan_next_round(a.plan));
	}
	RANK_OK(tplan_plan_start(a.plan, &h));
	RANK_EQ(4, h.round);
	if (ag_produce(env, &a, &h))
		return -1;
	if (env->rank == 0) {
		RANK_OK(tplan_handle_mark_ready(&h, 0));
		ret = tplan_plan_wait(a.plan, TP_TIMEOUT);
		RANK_ERR(-EOVERFLOW, ret);
		RANK_OK(tplan_plan_state(a.plan, &state, &round));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
	} else {
		RANK_OK(tplan_plan_wait(a.plan, TP_TIMEOUT));
	}
	RANK_OK(tplan_plan_close(a.plan, NULL));
	RANK_OK(tp_queues_idle(a.ctx, TP_TIMEOUT));
	ag_free(&a);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_wait_that_sleeps_and_a_mark_too_many_go_to_the_kernel_at_the_round_reached, 200)
{
	RUN_RANKS(2, rank_sleep, NULL, 180000);
}

/* ---- shared queues --------------------------------------------------------------- */

/*
 * With a plan at depth 4 live, a second plan (depth 1) on the same queues
 * is refused with EDEADLK on both ranks; after the first closes it is
 * prepared.  Then, with that one live, a plan at depth 4 is refused too.
 */
static int rank_share(struct tplan_rank_env *env)
{
	struct tplan_plan *ahead, *other;
	struct tplan_tensor out2;
	struct ag a;

	RANK_OK(ag_make(env, &a, 2, 4));
	out2 = a.out;
	RANK_OK(tplan_heap_alloc(a.ctx, (uint64_t)env->world * PART, 4096, &out2.offset));
	RANK_OK(tplan_ctx_set_rounds_ahead(a.ctx, 1));
	RANK_ERR(-EDEADLK, tplan_prepare_all_gather(a.ctx, &out2, NULL, &other));
	RANK_OK(tplan_plan_close(a.plan, NULL));
	RANK_OK(tplan_prepare_all_gather(a.ctx, &out2, NULL, &other));
	RANK_OK(tplan_ctx_set_rounds_ahead(a.ctx, 4));
	RANK_ERR(-EDEADLK, tplan_prepare_all_gather(a.ctx, &a.out, a.s, &ahead));
	RANK_OK(tplan_plan_close(other, NULL));
	RANK_OK(tp_queues_idle(a.ctx, TP_TIMEOUT));
	ag_free(&a);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_plan_armed_ahead_shares_no_queue_with_another_live_plan, 200)
{
	RUN_RANKS(2, rank_share, NULL, 180000);
}

/* ---- a rank that dies ------------------------------------------------------------ */

/*
 * Depth 8, three ranks: after round 2, rank 1 goes without releasing;
 * ranks 0 and 2 have rounds 3..8 queued to it, gated on its releases.
 * Their next wait ends (the group broke), their closes return, and every
 * queue of theirs runs dry.
 */
static int rank_dies(struct tplan_rank_env *env)
{
	struct tplan_handle h;
	uint32_t round;
	struct ag a;
	int ret;

	RANK_OK(ag_make(env, &a, 2, 8));
	for (round = 1; round <= 2; round++) {
		if (ag_round(env, &a, round))
			return -1;
		tplan_shared_set(&env->shared[W_ROUND(env->rank)], round);
		if (env->rank == 1 && round == 2) {
			/* Once its peers have round 2 too: gone, round 2 never released. */
			RANK_OK(tplan_shared_wait(&env->shared[W_ROUND(0)], 2, TP_TIMEOUT));
			RANK_OK(tplan_shared_wait(&env->shared[W_ROUND(2)], 2, TP_TIMEOUT));
			ag_free(&a);
			return 0;
		}
		RANK_OK(tplan_plan_next_round(a.plan));
	}
	RANK_OK(tplan_plan_start(a.plan, &h));
	if (ag_produce(env, &a, &h))
		return -1;
	ret = tplan_plan_wait(a.plan, TP_TIMEOUT);
	RANK_ASSERT(ret == -ECONNRESET);
	ret = tplan_plan_close(a.plan, NULL);
	RANK_ASSERT(ret != -ETIMEDOUT && ret != -ENOENT);
	RANK_OK(tp_queues_idle(a.ctx, TP_TIMEOUT));
	ag_free(&a);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_rank_that_dies_with_peers_armed_ahead_leaves_no_queue_wedged, 200)
{
	RUN_RANKS(3, rank_dies, NULL, 180000);
}

/* ---- a re-arm that fails part-way ------------------------------------------------ */

/*
 * Depth 4, three ranks, rounds 1..4 run.  Rank 1's queue to rank 2 then
 * faults (a packet with no such opcode), so its next_round, which queues
 * rounds 5..8 on its queue to rank 0 first, cannot queue them to rank 2:
 * it fails with EIO, and the four rounds it wrote to rank 0 are taken
 * back (that queue's wptr and charge as they were), the plan is FAILED
 * there and every other rank's next_round says ECANCELED.
 */
static int rank_arm_fails(struct tplan_rank_env *env)
{
	uint32_t dw = 0xff, state, round;
	struct tp_qsnap s0, s1;
	struct ag a;
	uint64_t t0;
	int ret;

	RANK_OK(ag_make(env, &a, 2, 4));
	for (round = 1; round <= 4; round++) {
		if (ag_round(env, &a, round))
			return -1;
		if (round < 4)
			RANK_OK(tplan_plan_next_round(a.plan));
	}
	tplan_shared_set(&env->shared[W_ROUND(env->rank)], 4);
	if (env->rank == 1) {
		/* Not before every rank's wait for round 4 returned: it would see the fault. */
		RANK_OK(tplan_shared_wait(&env->shared[W_ROUND(0)], 4, TP_TIMEOUT));
		RANK_OK(tplan_shared_wait(&env->shared[W_ROUND(2)], 4, TP_TIMEOUT));
		/* Round 4 has passed its gates: nothing is charged, the inject goes in. */
		RANK_OK(tplan_test_inject(a.ctx, 2, &dw, 1));
		t0 = tplan_now_ms();
		do {
			RANK_OK(tp_snap(a.ctx, &s0));
			if (tplan_now_ms() - t0 > TP_TIMEOUT)
				RANK_FAIL("the queue to rank 2 never faulted");
		} while (s0.state[2] != TPLAN_QUEUE_FAULT);
		RANK_ASSERT(s0.state[0] != TPLAN_QUEUE_FAULT);
		RANK_ERR(-EIO, tplan_plan_next_round(a.plan));
		RANK_OK(tp_snap(a.ctx, &s1));
		RANK_EQ(s0.wptr[0], s1.wptr[0]);
		RANK_EQ(s0.charged[0], s1.charged[0]);
		RANK_OK(tplan_plan_state(a.plan, &state, &round));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		RANK_EQ(4, round);
		tplan_shared_set(&env->shared[W_ARM_FAILED], 1);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_ARM_FAILED], 1, TP_TIMEOUT));
		RANK_ERR(-ECANCELED, tplan_plan_next_round(a.plan));
	}
	ret = tplan_plan_close(a.plan, NULL);
	RANK_ASSERT(ret != -ETIMEDOUT && ret != -ENOENT);
	if (env->rank != 1)
		RANK_OK(tp_queues_idle(a.ctx, TP_TIMEOUT));
	ag_free(&a);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_rearm_that_fails_on_one_queue_queues_no_round_on_the_others, 200)
{
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module loaded with allow_inject=1");
	RUN_RANKS(3, rank_arm_fails, NULL, 180000);
}

/* ---- a mark after close ------------------------------------------------------------ */

struct late {
	struct tp_plan *p;
	struct tplan_rank_env *env;
	int err;
};

/*
 * Once rank 0's close has opened its gates to the last armed round,
 * chunk 0's second writer marks round 1: the last writer of round 1
 * stores 1 in the ready gate, below rounds 2..4 that are queued.
 */
static void *late_mark(void *arg)
{
	struct late *l = arg;
	uint32_t g = l->p->chunk_base[0];
	uint64_t t0 = tplan_now_ms();

	while (tp_gate_read(l->p, 0, g, TPLAN_GATE_READY) < 4) {
		if (tplan_now_ms() - t0 > TP_TIMEOUT) {
			l->err = -ETIMEDOUT;
			return NULL;
		}
		tplan_sleep_ms(1);
	}
	tp_mark(l->p, 0, 1);
	tplan_shared_set(&l->env->shared[W_LATE], 1);
	return NULL;
}

/*
 * Depth 4, two writers per chunk.  Rank 0 marks each chunk once and
 * closes; its rounds 2..4 to rank 1 wait for rank 1's release.  The late
 * mark lowers chunk 0's ready gate; only then rank 1 closes (opening its
 * release word): rank 0's round 2 must still find its gates open.  Both
 * closes drain: CLOSED, queues idle.
 */
static int rank_late_mark(struct tplan_rank_env *env)
{
	static const uint32_t writers[2] = { 2, 2 };
	static struct tp_even ev;
	struct tplan_ctx *ctx;
	struct late l = { 0 };
	struct tp_plan p;
	unsigned int me = env->rank;
	pthread_t t;
	uint32_t state;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create_depth(&p, ctx, 0, 2 * PART, (uint64_t)me * PART, PART, 2, 4));
	RANK_OK(tp_even_sched(&ev, (uint64_t)me * PART, PART, 2, 1, 0));
	ev.s.writers = writers;
	RANK_OK(tp_prepare(&p, &ev.s));
	if (me == 0) {
		tp_mark(&p, 0, 1);
		tp_mark(&p, 1, 1);
		l = (struct late) { .p = &p, .env = env };
		RANK_ASSERT(!pthread_create(&t, NULL, late_mark, &l));
		RANK_OK(tp_close(&p, &state));
		pthread_join(t, NULL);
		RANK_OK(l.err);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[W_LATE], 1, TP_TIMEOUT));
		RANK_OK(tp_close(&p, &state));
	}
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(ahead, a_mark_after_close_opened_the_gates_does_not_wedge_the_drain, 200)
{
	RUN_RANKS(2, rank_late_mark, NULL, 180000);
}

TEST_HARNESS_MAIN
