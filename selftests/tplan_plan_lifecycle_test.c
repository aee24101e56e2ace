// SPDX-License-Identifier: GPL-2.0
/*
 * A plan's life, as the kernel runs it: create on every rank or none (one
 * rank's invalid chains or full queue fail all ranks, with nothing queued
 * and every budget as it was), re-arm with the budget held since prepare
 * (no ENOSPC however full the rest is), the prepared-copy budget (ENOSPC
 * on every rank, EBUSY put/quiet while copies are prepared),
 * close in the middle of a round or before it starts (chunks go as they
 * stand), nested plans closed in both orders, close after a rank died,
 * start order, the state machine, a wait woken only by the queues it waits
 * for, and the ioctls' argument contract (size sweep, reserved fields,
 * unknown plan ids).
 */
#include <pthread.h>
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_device.h"

#define HEAP (1U << 20)
#define RANKS_TIMEOUT_MS 100000

FIXTURE(plan) {
	int unused;
};

FIXTURE_SETUP(plan)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(plan)
{
}

/* Queues exactly as before: nothing written, nothing charged. */
static int same_queues(const struct tp_qsnap *a, const struct tp_qsnap *b, unsigned int world,
		       unsigned int me)
{
	unsigned int peer;

	for (peer = 0; peer < world; peer++) {
		if (peer == me)
			continue;
		if (a->wptr[peer] != b->wptr[peer] || a->charged[peer] != b->charged[peer])
			RANK_FAIL("queue %u->%u: wptr %llu -> %llu, charged %u -> %u", me, peer,
				  (unsigned long long)a->wptr[peer],
				  (unsigned long long)b->wptr[peer], a->charged[peer],
				  b->charged[peer]);
	}
	return 0;
}

/* ---- all or nothing: create ---------------------------------------------- */

enum bad_kind { BAD_OVERLAP, BAD_OUT_OF_ROWS, BAD_COPY_LIMIT };

#define AON_PART 4096

/*
 * Three ranks create a plan; rank 1's chains are bad in one way.  Every
 * rank gets EINVAL with the same reason naming rank 1, its part is
 * FAILED, no queue of any rank was written or charged, and a good plan
 * works afterwards.
 */
static int rank_bad_create(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	enum bad_kind kind = *(enum bad_kind *)env->arg;
	uint64_t part = AON_PART, own_off = env->rank * part, own_bytes = part;
	uint32_t sdma = kind == BAD_COPY_LIMIT ? TPLAN_SDMA_442 : TPLAN_SDMA_440;
	struct tp_qsnap before, after;
	struct tplan_ctx *ctx;
	struct tplan_info info;
	struct tp_plan p;
	uint32_t state, want_rule = 0;
	int ret;

	/* 4 MiB + 1 per part for the copy limit, so one copy can exceed it. */
	if (kind == BAD_COPY_LIMIT) {
		part = (4U << 20) + 4096;
		own_off = env->rank * part;
		own_bytes = part;
	}
	RANK_OK(tp_join(env, kind == BAD_COPY_LIMIT ? 16U << 20 : HEAP, sdma, &ctx));
	RANK_OK(tplan_query_info(ctx, &info));
	/* Overlap: rank 1 claims rank 2's part too, and sends some of it. */
	if (kind == BAD_OVERLAP && env->rank == 1)
		own_bytes = 2 * part;
	RANK_OK(tp_snap(ctx, &before));
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, own_off, own_bytes, 2));
	RANK_OK(tp_even_sched(&ev, own_off, part, 2, 1, 0));
	want_rule = kind == BAD_OVERLAP ? TPLAN_CHAIN_R_OVERLAP :
		    kind == BAD_OUT_OF_ROWS ? TPLAN_CHAIN_R_COPY_SRC : TPLAN_CHAIN_R_COPY_COUNT;
	if (env->rank == 1) {
		switch (kind) {
		case BAD_OVERLAP:
			ev.reg[1].off = 2 * part + 512;	/* inside rank 2's part */
			ev.reg[1].len = 512;
			break;
		case BAD_OUT_OF_ROWS:
			ev.reg[1].off = 0;		/* rank 0's rows */
			break;
		case BAD_COPY_LIMIT:
			/* One copy of max + 1 bytes on the 4 MiB engine. */
			ev.reg[0].len = info.max_copy_bytes_sdma442 + 1ULL;
			ev.reg[1].off = ev.reg[0].off + ev.reg[0].len;
			ev.reg[1].len = part - ev.reg[0].len;
			break;
		}
	} else if (kind == BAD_COPY_LIMIT) {
		/* The other ranks split at the limit: their chains are fine. */
		ev.s.max_copy = info.max_copy_bytes_sdma442;
	}
	ret = tp_prepare(&p, &ev.s);
	RANK_EQ(-EINVAL, ret);
	RANK_EQ(want_rule, p.reject.rule);
	if (kind == BAD_OVERLAP) {
		/* The pair of ranks that send the same bytes: 1 and 2. */
		RANK_EQ((1U << 1) | (1U << 2), (1U << p.reject.rank) | (1U << p.reject.other_rank));
	} else {
		RANK_EQ(1, p.reject.rank);
	}
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_snap(ctx, &after));
	if (same_queues(&before, &after, env->world, env->rank))
		return -1;
	RANK_OK(tp_close(&p, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_snap(ctx, &after));
	if (same_queues(&before, &after, env->world, env->rank))
		return -1;

	/* The group is fine: a good plan over the same buffer runs. */
	own_bytes = part;
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, own_off, own_bytes, 2));
	RANK_OK(tp_even_sched(&ev, own_off, part, 2, 1, info.max_copy_bytes_sdma442));
	RANK_OK(tp_prepare(&p, &ev.s));
	if (tp_ag_round(&p, part, 1, env->key))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, create_one_rank_overlapping_fails_every_rank_nothing_queued, 90)
{
	enum bad_kind k = BAD_OVERLAP;

	RUN_RANKS(3, rank_bad_create, &k, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(plan, create_one_rank_out_of_its_rows_fails_every_rank_nothing_queued, 90)
{
	enum bad_kind k = BAD_OUT_OF_ROWS;

	RUN_RANKS(3, rank_bad_create, &k, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(plan, create_one_rank_over_copy_limit_fails_every_rank_nothing_queued, 120)
{
	enum bad_kind k = BAD_COPY_LIMIT;

	RUN_RANKS(3, rank_bad_create, &k, RANKS_TIMEOUT_MS);
}

/* ---- budget helpers ---------------------------------------------------------- */

/*
 * Raw chains on the (me -> peer) queue gated on a private ready word at
 * ready_off of this heap, each `copies` 64-byte copies of [src_off, +64),
 * `nchains` of them, in one submit.  0 or -errno.
 */
static int submit_filler(struct tplan_ctx *ctx, unsigned int peer, uint64_t ready_off,
			 uint64_t arrival_off, uint64_t src_off, uint32_t nchains, uint32_t copies)
{
	unsigned int me = (unsigned int)tplan_ctx_rank(ctx);
	uint64_t own = tplan_heap_devaddr(ctx, me), dev = tplan_heap_devaddr(ctx, peer);
	uint32_t per = TPLAN_SDMA_POLL_DW + TPLAN_SDMA_ATOMIC_DW + copies * TPLAN_SDMA_COPY_LINEAR_DW;
	uint32_t *dw = malloc((size_t)per * nchains * 4), at = 0, i, k;
	struct tplan_chain_desc *d = calloc(nchains, sizeof(*d));
	struct tplan_sdma_poll_regmem poll = {
		.addr = own + ready_off, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear cp = { .src = own + src_off, .dst = dev + src_off, .bytes = 64 };
	struct tplan_sdma_atomic add = {
		.addr = dev + arrival_off, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_chain_submit s = {
		.size = sizeof(s), .peer = peer, .nchains = nchains, .chains = (uintptr_t)d,
		.dwords = (uintptr_t)dw,
	};
	int ret;

	if (!dw || !d) {
		free(dw);
		free(d);
		return -ENOMEM;
	}
	for (i = 0; i < nchains; i++) {
		at += (uint32_t)tplan_sdma_encode_poll_regmem(dw + at, 64, &poll);
		for (k = 0; k < copies; k++)
			at += (uint32_t)tplan_sdma_encode_copy_linear(dw + at, 64, &cp);
		at += (uint32_t)tplan_sdma_encode_atomic(dw + at, 64, &add);
		d[i] = (struct tplan_chain_desc) {
			.ndw = per, .ref = 1, .ready_offset = ready_off, .arrival_offset = arrival_off,
		};
	}
	s.ndw = at;
	ret = tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_CHAIN_SUBMIT, &s);
	free(dw);
	free(d);
	return ret;
}

/* ---- all or nothing: re-arm ------------------------------------------------- */

#define RA_PART 4096
#define RA_FILL_READY (HEAP / 2)		/* private gates, outside the plan */
#define RA_FILL_ARRIVAL (HEAP / 2 + 64)
#define RA_FILL_SRC (HEAP / 2 + 4096)
#define RA_FILL_CHAINS 8

/*
 * After round 1, rank 2 fills what the plan left of its queue to rank 0's
 * budget with gated raw chains, so that less than one round of the plan
 * is free.  The plan holds its charge from prepare to close, so
 * next_round still works on every rank and takes nothing more; round 2
 * goes out behind the raw chains once rank 2 opens their private gate.
 * At close the plan's charge goes back.
 */
static int rank_rearm_full_budget(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = RA_PART;
	struct tplan_queue_info qi, after;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t round, held = TPLAN_ROUND_HEAD_BYTES, i;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, 4));
	/* Chains of 32 copies: a round takes 4 x 1 KiB of each queue. */
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 4, 32, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	if (tp_ag_round(&p, part, 1, env->key))
		return -1;
	for (i = 0; i < p.nchains; i++)
		if (p.chains[i].peer == 0)
			held += p.chains[i].ndw * 4 + TPLAN_CHAIN_FENCE_BYTES;
	if (env->rank == 2) {
		uint32_t free_bytes, copies;

		RANK_OK(tplan_queue_info(ctx, 0, &qi));
		RANK_EQ(0, qi.prep_charged);
		RANK_EQ(held, qi.prep_reserved);
		/* Chains of at most 2^17 dwords that leave a few bytes of what is free. */
		free_bytes = qi.prep_limit - qi.prep_reserved;
		copies = ((free_bytes / RA_FILL_CHAINS - TPLAN_CHAIN_FENCE_BYTES) / 4 -
			  TPLAN_SDMA_POLL_DW - TPLAN_SDMA_ATOMIC_DW) / TPLAN_SDMA_COPY_LINEAR_DW;
		RANK_OK(submit_filler(ctx, 0, RA_FILL_READY, RA_FILL_ARRIVAL, RA_FILL_SRC,
				      RA_FILL_CHAINS, copies));
		RANK_OK(tplan_queue_info(ctx, 0, &qi));
		free_bytes = qi.prep_limit - qi.prep_reserved;
		/* Re-arming by taking the budget again would fail now. */
		RANK_ASSERT(free_bytes < held);
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 2)
		RANK_OK(tplan_queue_info(ctx, 0, &qi));
	RANK_OK(tp_next(&p, &round));
	RANK_EQ(2, round);
	if (env->rank == 2) {
		RANK_OK(tplan_queue_info(ctx, 0, &after));
		RANK_EQ(qi.prep_reserved, after.prep_reserved);
		RANK_ASSERT(after.prep_charged == qi.prep_charged + held);
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 2) {
		/* Round 2's chains to rank 0 wait behind the raw ones: open their gate. */
		__atomic_store_n((uint64_t *)((char *)tplan_heap_ptr(ctx, 2) + RA_FILL_READY), 1,
				 __ATOMIC_RELEASE);
	}
	if (tp_ag_round(&p, part, 2, env->key))
		return -1;
	if (env->rank == 2)
		RANK_OK(tplan_shared_wait((volatile uint64_t *)((char *)tplan_heap_ptr(ctx, 0) +
								 RA_FILL_ARRIVAL), RA_FILL_CHAINS,
					  60000));
	RANK_OK(tp_close(&p, NULL));
	if (env->rank == 2) {
		RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
		RANK_OK(tplan_queue_info(ctx, 0, &after));
		RANK_EQ(0, after.prep_reserved);
		RANK_EQ(0, after.prep_charged);
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, rearm_takes_no_budget_while_raw_chains_hold_the_rest, 120)
{
	RUN_RANKS(3, rank_rearm_full_budget, NULL, RANKS_TIMEOUT_MS);
}

/* ---- budget: a plan over the prepared-copy limit ---------------------------- */

#define OB_PART (256U << 10)
#define OB_CHUNKS 8

/*
 * Rank 1's plan needs more than the limit on each of its queues (1-byte
 * regions, one copy packet each); the others' are small.  Every rank gets
 * ENOSPC, no queue was written or charged.
 */
static int rank_over_budget(struct tplan_rank_env *env)
{
	uint64_t part = OB_PART;
	struct tp_qsnap before, after;
	struct tplan_queue_info qi;
	struct tp_region *reg;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	struct tp_sched s = { .nchunks = OB_CHUNKS };
	uint32_t first[OB_CHUNKS + 1], per, c, i, state;

	RANK_OK(tp_join(env, 4U << 20, 0, &ctx));
	RANK_OK(tplan_queue_info(ctx, (env->rank + 1) % env->world, &qi));
	/* Copies per chunk so that the chunks together pass the limit. */
	per = env->rank == 1 ?
	      (qi.prep_limit / OB_CHUNKS) / (TPLAN_SDMA_COPY_LINEAR_DW * 4) + 1 : 1;
	RANK_ASSERT((uint64_t)per * OB_CHUNKS <= part);
	reg = calloc((size_t)per * OB_CHUNKS, sizeof(*reg));
	RANK_ASSERT(reg);
	for (c = 0; c < OB_CHUNKS; c++) {
		first[c] = c * per;
		for (i = 0; i < per; i++)
			reg[c * per + i] = (struct tp_region) {
				.off = env->rank * part + (uint64_t)c * per + i, .len = 1,
			};
	}
	first[OB_CHUNKS] = OB_CHUNKS * per;
	s.first = first;
	s.reg = reg;
	RANK_OK(tp_snap(ctx, &before));
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, OB_CHUNKS));
	RANK_ERR(-ENOSPC, tp_prepare(&p, &s));
	if (env->rank == 1)
		RANK_ASSERT(p.ndw * 4ULL / (env->world - 1) > qi.prep_limit);
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_snap(ctx, &after));
	if (same_queues(&before, &after, env->world, env->rank))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tp_snap(ctx, &after));
	if (same_queues(&before, &after, env->world, env->rank))
		return -1;
	free(reg);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, budget_plan_over_prepared_copy_limit_is_enospc_on_every_rank, 180)
{
	RUN_RANKS(3, rank_over_budget, NULL, RANKS_TIMEOUT_MS);
}

/* ---- budget: put and quiet while a plan's copies are prepared ----------------- */

static int rank_put_ebusy(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = 4096, scratch = HEAP / 2;
	unsigned int peer = 1 - env->rank;
	struct tplan_ctx *ctx;
	struct tp_plan p;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, part * 2, env->rank * part, part, 2));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 2, 1, 0));
	/* Before prepare: nothing waits, put and quiet work. */
	RANK_OK(tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_OK(tplan_quiet(ctx, peer, TP_TIMEOUT));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_ERR(-EBUSY, tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_ERR(-EBUSY, tplan_put_signal(ctx, peer, scratch, scratch, 64, scratch + 128));
	RANK_ERR(-EBUSY, tplan_quiet(ctx, peer, 1000));
	if (tp_ag_round(&p, part, 1, env->key))
		return -1;
	/* The round went through: the gates opened, nothing is prepared. */
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	RANK_OK(tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_OK(tplan_quiet(ctx, peer, TP_TIMEOUT));
	RANK_OK(tp_next(&p, NULL));
	RANK_ERR(-EBUSY, tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_ERR(-EBUSY, tplan_quiet(ctx, peer, 1000));
	if (tp_ag_round(&p, part, 2, env->key))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_OK(tplan_quiet(ctx, peer, TP_TIMEOUT));
	/*
	 * Both are done before either leaves: a rank's file closing breaks
	 * the group, and the other's put would get ECONNRESET.
	 */
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, budget_put_and_quiet_ebusy_while_plan_copies_prepared, 90)
{
	RUN_RANKS(2, rank_put_ebusy, NULL, RANKS_TIMEOUT_MS);
}

/* ---- wake-ups ----------------------------------------------------------------- */

#define WK_PART 4096
#define WK_PUTS 60
#define W_WK_WAITING	0	/* rank 1 is about to wait */
#define W_WK_PUTS	1	/* rank 2's puts to rank 1 have all landed */

/* Rank's count of looks at the gates by its plan waits (debugfs group "wait_looks"). */
static int wait_looks(uint64_t key, unsigned int rank, uint64_t *looks)
{
	char dir[160], path[192], val[256], *at, *end;
	unsigned int r;
	int ret = tplan_debugfs_group_dir(key, dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%.160s/group", dir);
	ret = tplan_debugfs_file_field(path, "wait_looks", val, sizeof(val));
	if (ret)
		return ret;
	for (at = val, r = 0; r <= rank; r++, at = end) {
		errno = 0;
		*looks = strtoull(at, &end, 10);
		if (errno || end == at)
			return -EINVAL;
	}
	return 0;
}

static int wk_flag(struct tplan_rank_env *env, unsigned int word)
{
	uint64_t end = tplan_now_ms() + TP_TIMEOUT;

	while (!__atomic_load_n(&env->shared[word], __ATOMIC_ACQUIRE))
		if (tplan_now_ms() > end)
			return -ETIMEDOUT;
		else
			tplan_sleep_ms(1);
	return 0;
}

struct wk_mark {
	struct tplan_rank_env *env;
	const struct tplan_handle *h;
	int ret;
};

/* Rank 1's own chunk, marked once rank 2's puts have landed. */
static void *wk_mark_late(void *arg)
{
	struct wk_mark *m = arg;

	m->ret = wk_flag(m->env, W_WK_PUTS);
	if (!m->ret)
		m->ret = tplan_handle_mark_ready(m->h, 0);
	return NULL;
}

/*
 * A plan wait sleeps until what it waits for next can have come: rank 1
 * waits for its own mark to be seen, so the queues it sends on, while
 * WK_PUTS signalled puts land on (2 -> 1), one by one (each signal an
 * ATOMIC in rank 1's heap), and none of them wakes it.
 * (Each used to: every landing on a queue woke both its ranks' waits.)
 */
static int rank_wake(struct tplan_rank_env *env)
{
	struct tplan_tensor out = {
		.rows = env->world, .cols = WK_PART, .elem_size = 1,
	}, mine;
	uint64_t scratch = HEAP / 2, before = 0, after = 0, end;
	struct tplan_schedule *s;
	struct tplan_plan *plan;
	struct wk_mark m = { env, NULL, 0 };
	struct tplan_handle h;
	struct tplan_ctx *ctx;
	unsigned int i;
	pthread_t t;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tplan_heap_alloc(ctx, (uint64_t)env->world * WK_PART, 4096, &out.offset));
	mine = out;
	mine.rows = 1;
	mine.offset = out.offset + (uint64_t)env->rank * WK_PART;
	RANK_OK(tplan_schedule_chunks(&mine, 1, 1, 0, &s));
	RANK_OK(tplan_prepare_all_gather(ctx, &out, s, &plan));
	RANK_OK(tplan_plan_start(plan, &h));
	if (env->rank == 1) {
		RANK_OK(wait_looks(env->key, 1, &before));
		m.h = &h;
		RANK_EQ(0, pthread_create(&t, NULL, wk_mark_late, &m));
		__atomic_store_n(&env->shared[W_WK_WAITING], 1, __ATOMIC_RELEASE);
		ret = tplan_plan_wait(plan, TP_TIMEOUT);
		pthread_join(t, NULL);
		RANK_OK(m.ret);
		RANK_OK(ret);
		RANK_OK(wait_looks(env->key, 1, &after));
		printf("# rank 1's wait looked at the gates %llu times\n",
		       (unsigned long long)(after - before));
		if (after - before >= WK_PUTS / 3)
			RANK_FAIL("rank 1's wait looked %llu times while %u signalled puts landed on (2 -> 1)",
				  (unsigned long long)(after - before), WK_PUTS);
	} else {
		RANK_OK(tplan_handle_mark_ready(&h, 0));
	}
	if (env->rank == 2) {
		RANK_OK(wk_flag(env, W_WK_WAITING));
		tplan_sleep_ms(100);	/* rank 1 is asleep in its wait, most likely */
		for (i = 0; i < WK_PUTS; i++) {
			/* EBUSY until the engine passed this rank's plan chain's gate. */
			end = tplan_now_ms() + TP_TIMEOUT;
			while ((ret = tplan_put_signal(ctx, 1, scratch, scratch, 64,
						       scratch + 128)) == -EBUSY &&
			       tplan_now_ms() < end)
				tplan_sleep_ms(1);
			RANK_OK(ret);
			RANK_OK(tplan_quiet(ctx, 1, TP_TIMEOUT));
		}
		__atomic_store_n(&env->shared[W_WK_PUTS], 1, __ATOMIC_RELEASE);
	}
	if (env->rank != 1)
		RANK_OK(tplan_plan_wait(plan, TP_TIMEOUT));
	/* Everyone done before anyone leaves: a file closing breaks the group. */
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	RANK_OK(tplan_plan_close(plan, NULL));
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, a_wait_is_not_woken_by_landings_on_a_queue_it_does_not_wait_for, 120)
{
	if (access(TPLAN_DEBUGFS, F_OK))
		SKIP(return, "needs debugfs (%s)", TPLAN_DEBUGFS);
	RUN_RANKS(3, rank_wake, NULL, RANKS_TIMEOUT_MS);
}

/* ---- close ------------------------------------------------------------------ */

#define CL_PART 4096
#define CL_CHUNKS 4

/*
 * Mid-round: chunks 0 and 1 are written and marked (and arrive), chunks 2
 * and 3 are rewritten with other data and never marked; close sends them
 * as they stand.  Before the round starts: a second plan prepared and
 * never started sends its data as it stands too.  Closed plans are gone.
 */
static int rank_close_mid_round(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = CL_PART, salt = env->key, len = CL_PART / CL_CHUNKS, b_off = 64 << 10;
	unsigned char *heap, *own, img[CL_PART];
	struct tplan_ctx *ctx;
	struct tp_plan p, q;
	uint32_t state, c;
	unsigned int r, peer;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	own = heap + env->rank * part;
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, CL_CHUNKS));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, CL_CHUNKS, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_create(&q, ctx, b_off, part * env->world, b_off + env->rank * part, part, 1));
	RANK_OK(tp_even_sched(&ev, b_off + env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_prepare(&q, &ev.s));

	tp_fill(own, part, tp_seed(env->rank, 1, salt));
	tp_fill(heap + b_off + env->rank * part, part, tp_seed(env->rank, 7, salt));
	RANK_OK(tp_start(&p, NULL));
	tp_mark(&p, 0, 1);
	tp_mark(&p, 1, 1);
	for (peer = 0; peer < env->world; peer++) {
		if (peer == env->rank)
			continue;
		for (c = 0; c < 2; c++)
			RANK_OK(tplan_shared_wait((volatile uint64_t *)
				tp_gate(&p, peer, p.chunk_base[env->rank] + c, TPLAN_GATE_ARRIVAL),
				1, TP_TIMEOUT));
	}
	/* Chunks 2 and 3 change after the round started and are never marked. */
	tp_fill(own + 2 * len, 2 * len, tp_seed(env->rank, 2, salt));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	RANK_OK(tp_close(&p, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	RANK_OK(tp_close(&q, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	/* Every rank's close returned: its chains have left its queues. */
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	for (r = 0; r < env->world; r++) {
		tp_fill(img, 2 * len, tp_seed(r, 1, salt));
		tp_fill(img + 2 * len, 2 * len, tp_seed(r, 2, salt));
		if (memcmp(heap + r * part, img, part))
			RANK_FAIL("rank %u's part is not as it stood at close", r);
		if (tp_check(heap + b_off + r * part, part, tp_seed(r, 7, salt)) >= 0)
			RANK_FAIL("rank %u's never-started plan did not send its data", r);
	}
	RANK_ERR(-ENOENT, tp_state(&p, NULL, NULL));
	RANK_ERR(-ENOENT, tp_start(&p, NULL));
	RANK_ERR(-ENOENT, tp_close(&p, NULL));
	RANK_ERR(-ENOENT, tp_state(&q, NULL, NULL));
	tp_free_chains(&p);
	tp_free_chains(&q);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, close_mid_round_and_before_start_sends_chunks_as_they_stand, 90)
{
	RUN_RANKS(3, rank_close_mid_round, NULL, RANKS_TIMEOUT_MS);
}

/*
 * Two plans prepared on the same queues, A before B, neither started.
 * Closing B first leaves it CLOSING on every rank (its copies wait behind
 * A's, whose gates are shut); closing A then finishes both, and both
 * plans' data arrived.  Closing A first closes both at once.
 */
static int rank_nested(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	int b_first = *(int *)env->arg;
	uint64_t part = 4096, b_off = 64 << 10, salt = env->key;
	unsigned char *heap;
	struct tplan_ctx *ctx;
	struct tp_plan a, b;
	uint32_t state;
	unsigned int r;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	RANK_OK(tp_create(&a, ctx, 0, part * env->world, env->rank * part, part, 2));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 2, 1, 0));
	RANK_OK(tp_prepare(&a, &ev.s));
	RANK_OK(tp_create(&b, ctx, b_off, part * env->world, b_off + env->rank * part, part, 2));
	RANK_OK(tp_even_sched(&ev, b_off + env->rank * part, part, 2, 1, 0));
	RANK_OK(tp_prepare(&b, &ev.s));
	tp_fill(heap + env->rank * part, part, tp_seed(env->rank, 1, salt));
	tp_fill(heap + b_off + env->rank * part, part, tp_seed(env->rank, 2, salt));

	if (b_first) {
		RANK_OK(tp_close(&b, &state));
		RANK_EQ(TPLAN_PLAN_CLOSING, state);
		RANK_OK(tp_state(&b, &state, NULL));
		RANK_EQ(TPLAN_PLAN_CLOSING, state);
		/* Closing it again is refused while it waits. */
		RANK_ERR(-EBUSY, tp_close(&b, NULL));
		RANK_OK(tp_close(&a, &state));
		RANK_EQ(TPLAN_PLAN_CLOSED, state);
	} else {
		RANK_OK(tp_close(&a, &state));
		RANK_EQ(TPLAN_PLAN_CLOSED, state);
		RANK_OK(tp_close(&b, &state));
		RANK_EQ(TPLAN_PLAN_CLOSED, state);
	}
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	/* Both finished on every rank: the plans are gone. */
	RANK_ERR(-ENOENT, tp_state(&a, NULL, NULL));
	RANK_ERR(-ENOENT, tp_state(&b, NULL, NULL));
	for (r = 0; r < env->world; r++) {
		if (tp_check(heap + r * part, part, tp_seed(r, 1, salt)) >= 0)
			RANK_FAIL("plan A: rank %u's data missing", r);
		if (tp_check(heap + b_off + r * part, part, tp_seed(r, 2, salt)) >= 0)
			RANK_FAIL("plan B: rank %u's data missing", r);
	}
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, close_nested_later_plan_first_is_closing_until_earlier_closes, 90)
{
	int b_first = 1;

	RUN_RANKS(3, rank_nested, &b_first, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(plan, close_nested_earlier_plan_first_closes_both, 90)
{
	int b_first = 0;

	RUN_RANKS(3, rank_nested, &b_first, RANKS_TIMEOUT_MS);
}

/*
 * Rank 2 dies with the plan prepared.  Rank 0, waiting in the round, gets
 * ECONNRESET and its plan is FAILED; rank 1's close gets ECONNRESET; both
 * closes tear their part down (the plan is no longer usable), and the
 * module unloads cleanly at the end of the run.
 */
static int rank_close_after_death(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = 4096;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t state;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, 2));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 2, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	if (env->rank == 2) {
		tplan_shared_set(&env->shared[1], 1);
		/* Killed by the test; nothing closed. */
		for (;;)
			pause();
	}
	if (env->rank == 0) {
		RANK_OK(tp_start(&p, NULL));
		tp_mark(&p, 0, 1);
		tp_mark(&p, 1, 1);
		tplan_shared_set(&env->shared[2], 1);
		RANK_ERR(-ECONNRESET, tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
		RANK_OK(tp_state(&p, &state, NULL));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[3], 1, TP_TIMEOUT));
	}
	ret = tp_close(&p, &state);
	RANK_EQ(-ECONNRESET, ret);
	RANK_ERR(-ENOENT, tp_start(&p, NULL));
	RANK_ERR(-ENOENT, tp_close(&p, NULL));
	/*
	 * Torn down here; CLOSING until every rank's chains are known drained
	 * (a close that could not hear from every rank cannot say CLOSED), or
	 * gone.
	 */
	ret = tp_state(&p, &state, NULL);
	if (ret != -ENOENT && !(ret == 0 && (state == TPLAN_PLAN_CLOSED ||
					       state == TPLAN_PLAN_CLOSING)))
		RANK_FAIL("state after close: %d, state %u", ret, state);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, close_after_a_rank_died_fails_cleanly_on_the_others, 90)
{
	struct tplan_ranks r;
	int nf;

	ASSERT_EQ(0, tplan_ranks_start(&r, 3, tplan_test_key(), rank_close_after_death, NULL));
	ASSERT_EQ(0, tplan_shared_wait(&r.shared[1], 1, TPLAN_TEST_TIMEOUT_MS));
	/* Rank 0 is in its wait (or about to be): then rank 2 dies. */
	ASSERT_EQ(0, tplan_shared_wait(&r.shared[2], 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_test_wait_blocked(r.pid[0], TPLAN_TEST_TIMEOUT_MS));
	tplan_ranks_kill(&r, 2);
	waitpid(r.pid[2], NULL, 0);
	r.rep[2].exited = 1;
	tplan_shared_set(&r.shared[3], 1);
	nf = tplan_ranks_wait(&r, 45000, 1U << 2);
	TPLAN_RANKS_REPORT(&r, nf, 1U << 2);
	tplan_ranks_release(&r);
}

/*
 * Every rank closes at the same moment, many times over: the parts are
 * freed as each rank leaves and the plan with the last one.  Nothing may
 * be freed twice or used after (slub_debug reports it in dmesg, which
 * fails the run).
 */
static int rank_close_together(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = 4096;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	unsigned int i;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	for (i = 0; i < 60; i++) {
		RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, 2));
		RANK_OK(tp_even_sched(&ev, env->rank * part, part, 2, 1, 0));
		RANK_OK(tp_prepare(&p, &ev.s));
		RANK_OK(tp_close(&p, NULL));
		tp_free_chains(&p);
	}
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, close_on_every_rank_at_once_repeatedly, 120)
{
	RUN_RANKS(3, rank_close_together, NULL, RANKS_TIMEOUT_MS);
}

/* ---- start order ------------------------------------------------------------ */

/*
 * Plans A then B prepared on the same queues: starting B first is EDEADLK
 * (its copies would wait behind A's, whose producer has not started);
 * starting A first, then B, works and both rounds complete.
 */
static int rank_start_order(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = 4096, b_off = 64 << 10, salt = env->key;
	unsigned char *heap;
	struct tplan_ctx *ctx;
	struct tp_plan a, b;
	unsigned int r;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	RANK_OK(tp_create(&a, ctx, 0, part * env->world, env->rank * part, part, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_prepare(&a, &ev.s));
	RANK_OK(tp_create(&b, ctx, b_off, part * env->world, b_off + env->rank * part, part, 1));
	RANK_OK(tp_even_sched(&ev, b_off + env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_prepare(&b, &ev.s));
	tp_fill(heap + env->rank * part, part, tp_seed(env->rank, 1, salt));
	tp_fill(heap + b_off + env->rank * part, part, tp_seed(env->rank, 2, salt));

	RANK_ERR(-EDEADLK, tp_start(&b, NULL));
	RANK_OK(tp_start(&a, NULL));
	RANK_OK(tp_start(&b, NULL));
	tp_mark(&a, 0, 1);
	tp_mark(&b, 0, 1);
	RANK_OK(tp_wait(&b, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tp_wait(&a, TP_TIMEOUT, NULL, 0, NULL));
	for (r = 0; r < env->world; r++) {
		RANK_ASSERT(tp_check(heap + r * part, part, tp_seed(r, 1, salt)) < 0);
		RANK_ASSERT(tp_check(heap + b_off + r * part, part, tp_seed(r, 2, salt)) < 0);
	}
	/* Re-armed in the order B, A: now A is the later one. */
	RANK_OK(tp_next(&b, NULL));
	RANK_OK(tp_next(&a, NULL));
	RANK_ERR(-EDEADLK, tp_start(&a, NULL));
	RANK_OK(tp_start(&b, NULL));
	RANK_OK(tp_start(&a, NULL));
	tp_mark(&a, 0, 2);
	tp_mark(&b, 0, 2);
	RANK_OK(tp_wait(&a, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tp_wait(&b, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tp_close(&a, NULL));
	RANK_OK(tp_close(&b, NULL));
	tp_free_chains(&a);
	tp_free_chains(&b);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, start_later_prepared_plan_first_is_edeadlk, 90)
{
	RUN_RANKS(2, rank_start_order, NULL, RANKS_TIMEOUT_MS);
}

/* ---- the state machine ------------------------------------------------------ */

static int rank_states(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t part = 4096;
	struct tplan_ctx *ctx;
	struct tp_plan p, f;
	uint32_t state, round;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, part * 2, env->rank * part, part, 1));
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_EMPTY, state);
	RANK_EQ(0, round);
	RANK_ERR(-EBUSY, tp_start(&p, NULL));
	RANK_ERR(-EBUSY, tp_wait(&p, 100, NULL, 0, NULL));
	RANK_ERR(-EBUSY, tp_next(&p, NULL));

	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_PREPARED, state);
	RANK_EQ(1, round);
	RANK_ERR(-EBUSY, tp_prepare_built(&p));	/* already prepared: local, no collective */
	RANK_ERR(-EBUSY, tp_wait(&p, 100, NULL, 0, NULL));	/* not started */
	RANK_ERR(-EBUSY, tp_next(&p, NULL));

	RANK_OK(tp_start(&p, NULL));
	RANK_ERR(-EBUSY, tp_start(&p, NULL));
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_PREPARED, state);
	RANK_ERR(-EBUSY, tp_next(&p, NULL));
	tp_mark(&p, 0, 1);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_DONE, state);
	RANK_EQ(1, round);
	RANK_ERR(-EBUSY, tp_start(&p, NULL));
	RANK_ERR(-EBUSY, tp_wait(&p, 100, NULL, 0, NULL));

	RANK_OK(tp_next(&p, &round));
	RANK_EQ(2, round);
	RANK_OK(tp_state(&p, &state, &round));
	RANK_EQ(TPLAN_PLAN_PREPARED, state);
	RANK_EQ(2, round);
	RANK_OK(tp_start(&p, NULL));
	tp_mark(&p, 0, 2);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));

	/* A failed prepare: FAILED, and it stays so. */
	RANK_OK(tp_create(&f, ctx, 64 << 10, part * 2, (64 << 10) + env->rank * part, part, 1));
	RANK_OK(tp_even_sched(&ev, (64 << 10) + env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_build(&f, &ev.s));
	if (env->rank == 0)
		f.chains[0].__reserved = 1;	/* must be 0 */
	RANK_ERR(-EINVAL, tp_prepare_built(&f));
	RANK_OK(tp_state(&f, &state, &round));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_ERR(-EBUSY, tp_start(&f, NULL));
	RANK_ERR(-EBUSY, tp_next(&f, NULL));
	RANK_OK(tp_close(&f, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);

	/* Closed here: gone for this rank, whatever the other has done. */
	RANK_OK(tp_close(&p, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	ret = tp_state(&p, &state, &round);
	if (ret != -ENOENT && !(ret == 0 && state == TPLAN_PLAN_CLOSED))
		RANK_FAIL("state after close: %d, state %u", ret, state);
	RANK_ERR(-ENOENT, tp_start(&p, NULL));
	RANK_ERR(-ENOENT, tp_wait(&p, 100, NULL, 0, NULL));
	RANK_ERR(-ENOENT, tp_next(&p, NULL));
	RANK_ERR(-ENOENT, tp_close(&p, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	RANK_ERR(-ENOENT, tp_state(&p, NULL, NULL));
	tp_free_chains(&p);
	tp_free_chains(&f);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, state_transitions_and_out_of_state_calls, 90)
{
	RUN_RANKS(2, rank_states, NULL, RANKS_TIMEOUT_MS);
}

/* ---- the ioctls' argument contract (a group of one: collectives are local) ---- */

FIXTURE(solo) {
	struct tplan_ctx *ctx;
	int fd;
};

FIXTURE_SETUP(solo)
{
	struct tplan_join_params jp = {
		.key = tplan_test_key(), .world_size = 1, .rank = 0, .heap_size = HEAP,
		.timeout_ms = TPLAN_TEST_TIMEOUT_MS,
	};
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	ASSERT_EQ(0, tplan_ctx_open(&self->ctx, NULL));
	ASSERT_EQ(0, tplan_ctx_join(self->ctx, &jp));
	self->fd = tplan_ctx_fd(self->ctx);
}

FIXTURE_TEARDOWN(solo)
{
	tplan_ctx_close(self->ctx);
}

static const uint32_t one_writer = 1;

/* A created plan of one chunk over [0, 4096). */
static int solo_create(struct tp_plan *p, struct tplan_ctx *ctx)
{
	return tp_create(p, ctx, 0, 4096, 0, 4096, 1);
}

static int solo_prepare(struct tp_plan *p)
{
	struct tplan_plan_prepare pp = {
		.size = sizeof(pp), .plan_id = p->id, .writers = (uintptr_t)&one_writer,
	};

	return tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_PREPARE, &pp);
}

/* The sweeps' calls: each takes the plan to the state its ioctl needs. */
struct sweep {
	struct tplan_ctx *ctx;
	unsigned long cmd;
	int stage;	/* 0 created, 1 prepared, 2 started and marked, 3 done */
};

static int sweep_call(void *buf, void *arg)
{
	struct sweep *s = arg;
	struct tp_plan p;
	uint32_t size;
	int ret;

	memcpy(&size, buf, 4);
	if (s->cmd == TPLAN_IOC_PLAN_CREATE) {
		struct tplan_plan_create *c = buf;

		ret = tplan_test_ioctl(tplan_ctx_fd(s->ctx), s->cmd, buf);
		if (!ret) {
			p.fd = tplan_ctx_fd(s->ctx);
			p.id = c->plan_id;
			tp_close(&p, NULL);
		}
		return ret;
	}
	if (solo_create(&p, s->ctx))
		return -EIO;
	if ((s->stage >= 1 && solo_prepare(&p)) || (s->stage >= 2 && tp_start(&p, NULL)))
		return -EIO;
	if (s->stage >= 2)
		tp_mark(&p, 0, 1);
	if (s->stage >= 3 && tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL))
		return -EIO;
	/* The plan id follows the size in every PLAN_* struct but create's. */
	memcpy((char *)buf + 4, &p.id, 4);
	ret = tplan_test_ioctl(p.fd, s->cmd, buf);
	if (s->cmd != TPLAN_IOC_PLAN_CLOSE || ret)
		tp_close(&p, NULL);
	return ret;
}

TEST_F_TIMEOUT(solo, plan_ioctls_size_sweep, 120)
{
	uint32_t cb[2];
	struct tplan_plan_create c = {
		.size = sizeof(c), .buffer_bytes = 4096, .own_bytes = 4096, .nchunks = 1,
		.chunk_base = (uintptr_t)cb,
	};
	struct tplan_plan_prepare pp = { .size = sizeof(pp), .writers = (uintptr_t)&one_writer };
	struct tplan_plan_start st = { .size = sizeof(st) };
	struct tplan_plan_wait w = { .size = sizeof(w), .timeout_ms = TP_TIMEOUT };
	struct tplan_plan_next_round nr = { .size = sizeof(nr) };
	struct tplan_plan_close cl = { .size = sizeof(cl) };
	struct tplan_plan_state ps = { .size = sizeof(ps) };
	struct sweep s = { .ctx = self->ctx };
	struct tp_plan p;

	s.cmd = TPLAN_IOC_PLAN_CREATE;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &c,
					 offsetof(struct tplan_plan_create, gate_offset) + 8,
					 sizeof(c)));
	s.cmd = TPLAN_IOC_PLAN_PREPARE;
	s.stage = 0;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &pp,
					 offsetof(struct tplan_plan_prepare, reject) +
					 sizeof(pp.reject), sizeof(pp)));
	s.cmd = TPLAN_IOC_PLAN_START;
	s.stage = 1;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &st,
					 offsetof(struct tplan_plan_start, gate_offset) + 8,
					 sizeof(st)));
	s.cmd = TPLAN_IOC_PLAN_WAIT;
	s.stage = 2;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &w,
					 offsetof(struct tplan_plan_wait, __reserved) + 4,
					 sizeof(w)));
	s.cmd = TPLAN_IOC_PLAN_NEXT_ROUND;
	s.stage = 3;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &nr,
					 offsetof(struct tplan_plan_next_round, round) + 4,
					 sizeof(nr)));
	s.cmd = TPLAN_IOC_PLAN_CLOSE;
	s.stage = 1;
	EXPECT_EQ(0, tplan_size_sweep_fn(sweep_call, &s, &cl,
					 offsetof(struct tplan_plan_close, state) + 4,
					 sizeof(cl)));
	/* STATE is repeatable: the plain sweep on one plan. */
	ASSERT_EQ(0, solo_create(&p, self->ctx));
	ps.plan_id = p.id;
	EXPECT_EQ(0, tplan_size_sweep(self->fd, TPLAN_IOC_PLAN_STATE, &ps,
				      offsetof(struct tplan_plan_state, round) + 4, sizeof(ps)));
	EXPECT_EQ(0, tp_close(&p, NULL));
}

TEST_F(solo, plan_ioctls_reserved_fields_must_be_zero)
{
	uint32_t cb[2], n, state;
	struct tplan_plan_create c = {
		.size = sizeof(c), .buffer_bytes = 4096, .own_bytes = 4096, .nchunks = 1,
		.chunk_base = (uintptr_t)cb,
	};
	struct tplan_plan_chain bad_chain = { .ndw = 1 };
	struct tplan_plan_prepare pp = { .size = sizeof(pp), .writers = (uintptr_t)&one_writer };
	struct tplan_plan_wait w = { .size = sizeof(w), .timeout_ms = 100 };
	struct tplan_plan_shortfall rep[2];
	struct tp_plan p;

	c.flags = 1;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_CREATE, &c));
	c.flags = 0;
	c.depth = TPLAN_PLAN_DEPTH_MAX + 1;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_CREATE, &c));
	c.depth = 0;

	ASSERT_EQ(0, solo_create(&p, self->ctx));
	pp.plan_id = p.id;
	pp.flags = 1;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_PREPARE, &pp));
	/* Refused before anything happened: the plan can still be prepared. */
	EXPECT_EQ(0, tp_state(&p, &state, NULL));
	EXPECT_EQ(TPLAN_PLAN_EMPTY, state);
	pp.flags = 0;
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_PREPARE, &pp));
	ASSERT_EQ(0, tp_start(&p, NULL));
	w.plan_id = p.id;
	w.flags = ~TPLAN_PLAN_WAIT_FLAGS_ALL;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_WAIT, &w));
	/* A round behind the module's (user-space rounds only go forward). */
	w.flags = TPLAN_PLAN_WAIT_AT;
	w.round = 0;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_WAIT, &w));
	w.round = 0;
	w.flags = 0;
	w.__reserved = 1;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_WAIT, &w));
	w.__reserved = 0;
	w.report_cap = 2;	/* a capacity without a buffer */
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_WAIT, &w));
	/* Still started: the real wait times out naming the mark, then succeeds. */
	EXPECT_EQ(-ETIMEDOUT, tp_wait(&p, 100, rep, 2, &n));
	EXPECT_EQ(1, n);
	EXPECT_EQ(TPLAN_SHORT_MARKS, rep[0].what);
	tp_mark(&p, 0, 1);
	EXPECT_EQ(0, tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	EXPECT_EQ(0, tp_close(&p, NULL));

	/* A world of one takes no chains: a chain count of 1 is refused. */
	ASSERT_EQ(0, solo_create(&p, self->ctx));
	pp.plan_id = p.id;
	pp.nchains = 1;
	pp.ndw = 1;
	pp.chains = (uintptr_t)&bad_chain;
	pp.dwords = (uintptr_t)&n;
	EXPECT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_PREPARE, &pp));
	EXPECT_EQ(0, tp_state(&p, &state, NULL));
	EXPECT_EQ(TPLAN_PLAN_FAILED, state);
	EXPECT_EQ(0, tp_close(&p, NULL));
}

TEST_F(solo, plan_ioctls_unknown_plan_is_enoent)
{
	struct tp_plan p = { .fd = self->fd, .id = 0x7fff1234 };
	struct tplan_plan_prepare pp = { .size = sizeof(pp), .plan_id = p.id };

	EXPECT_EQ(-ENOENT, tplan_test_ioctl(self->fd, TPLAN_IOC_PLAN_PREPARE, &pp));
	EXPECT_EQ(-ENOENT, tp_start(&p, NULL));
	EXPECT_EQ(-ENOENT, tp_wait(&p, 100, NULL, 0, NULL));
	EXPECT_EQ(-ENOENT, tp_next(&p, NULL));
	EXPECT_EQ(-ENOENT, tp_close(&p, NULL));
	EXPECT_EQ(-ENOENT, tp_state(&p, NULL, NULL));
	p.id = 0;
	EXPECT_EQ(-ENOENT, tp_state(&p, NULL, NULL));
}

/* Before a join, every PLAN_* ioctl is ENOTCONN. */
TEST(plan_ioctls_before_join_are_enotconn)
{
	struct tplan_plan_create c = { .size = sizeof(c), .buffer_bytes = 4096 };
	struct tplan_plan_prepare pp = { .size = sizeof(pp), .plan_id = 1 };
	struct tplan_plan_start st = { .size = sizeof(st), .plan_id = 1 };
	struct tplan_plan_wait w = { .size = sizeof(w), .plan_id = 1 };
	struct tplan_plan_next_round nr = { .size = sizeof(nr), .plan_id = 1 };
	struct tplan_plan_close cl = { .size = sizeof(cl), .plan_id = 1 };
	struct tplan_plan_state ps = { .size = sizeof(ps), .plan_id = 1 };
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CREATE, &c));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_PREPARE, &pp));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_START, &st));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_WAIT, &w));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_NEXT_ROUND, &nr));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CLOSE, &cl));
	EXPECT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_STATE, &ps));
	close(fd);
}

TEST_HARNESS_MAIN
