// SPDX-License-Identifier: GPL-2.0
/*
 * The all-gather's default schedule for a producer of several programs.
 * The spec's whole() is "one chunk, marked ready once per program at the
 * end": a producer of N programs, each writing its share of the rank's
 * rows and marking the chunk once, as the spec's example does.
 *  - tplan_prepare_all_gather() (one writer) counts the marks after the
 *    first as extra: the first wait fails with EOVERFLOW, naming the chunk;
 *  - tplan_prepare_all_gather_programs(N) delivers every rank's rows, round
 *    after round, for N = 1, 3 and 4 programs (CPU threads, each a team of
 *    one, through the device header's host build);
 *  - a program count that does not fit the call (0 without a schedule, or
 *    any with one), even on one rank only, fails the plan on every rank,
 *    and leaves nothing behind.
 */
#include <pthread.h>

#include "tplan_selftest.h"
#include "tplan_device.h"

#define WORLD		3
#define ROWS		24	/* per rank */
#define COLS		40	/* u32 per row */
#define HEAP_BYTES	(4u << 20)
#define ROUNDS		4
#define TIMEOUT_MS	20000
#define PROGRAMS_MAX	4

static uint32_t word(uint32_t rank, uint32_t round, uint32_t row, uint32_t col)
{
	return (rank << 28) ^ (round << 20) ^ (row << 10) ^ col;
}

struct program {
	pthread_t thread;
	const struct tplan_view *view;
	uint32_t *rows;		/* this rank's rows */
	uint32_t rank, round, index, programs;
	int ret;
};

/* Program p writes rows p, p + programs, ... then marks the one chunk. */
static void *program_run(void *arg)
{
	struct program *p = arg;
	struct tplan_cta cta = { NULL, NULL, 0 };
	uint32_t r, c;

	for (r = p->index; r < ROWS; r += p->programs)
		for (c = 0; c < COLS; c++)
			p->rows[r * COLS + c] = word(p->rank, p->round, r, c);
	p->ret = tplan_mark_ready(p->view, &cta, 0);
	return NULL;
}

/* One round of the producer: `programs` programs, all joined. */
static int produce(const struct tplan_view *v, uint32_t *rows, uint32_t rank, uint32_t round,
		   uint32_t programs)
{
	struct program p[PROGRAMS_MAX];
	uint32_t i;
	int ret = 0;

	for (i = 0; i < programs; i++) {
		p[i] = (struct program){ .view = v, .rows = rows, .rank = rank, .round = round,
					 .index = i, .programs = programs };
		if (pthread_create(&p[i].thread, NULL, program_run, &p[i]))
			return -EAGAIN;		/* the test fails: never half a round */
	}
	for (i = 0; i < programs; i++) {
		pthread_join(p[i].thread, NULL);
		if (p[i].ret)
			ret = p[i].ret;
	}
	return ret;
}

static int join(struct tplan_rank_env *env, struct tplan_ctx **ctx, uint64_t *off)
{
	struct tplan_join_params jp = {
		.key = env->key, .world_size = env->world, .rank = env->rank,
		.heap_size = HEAP_BYTES, .timeout_ms = TIMEOUT_MS,
	};
	int ret = tplan_ctx_open(ctx, NULL);

	if (ret)
		return ret;
	ret = tplan_ctx_join(*ctx, &jp);
	if (!ret)
		ret = tplan_heap_alloc(*ctx, (size_t)WORLD * ROWS * COLS * 4, 64, off);
	if (ret)
		tplan_ctx_close(*ctx);
	return ret;
}

static struct tplan_tensor out_of(uint64_t off)
{
	return (struct tplan_tensor){ .offset = off, .rows = WORLD * ROWS, .cols = COLS,
				      .elem_size = 4 };
}

static int run_programs(struct tplan_rank_env *env)
{
	uint32_t programs = (uint32_t)(uintptr_t)env->arg, round, q, r, c, state;
	struct tplan_plan *plan;
	struct tplan_tensor out;
	struct tplan_ctx *ctx;
	struct tplan_handle h;
	struct tplan_view v;
	uint32_t *data;
	uint64_t off;

	RANK_OK(join(env, &ctx, &off));
	out = out_of(off);
	data = (uint32_t *)((uint8_t *)tplan_heap_ptr(ctx, env->rank) + off);
	if (tplan_prepare_all_gather_programs(ctx, &out, NULL, programs, &plan))
		RANK_FAIL("prepare_all_gather_programs(%u): %s", programs, tplan_ctx_error(ctx));
	for (round = 1; round <= ROUNDS; round++) {
		RANK_OK(tplan_plan_start(plan, &h));
		RANK_EQ(1, h.nchunks);
		tplan_view_init(&v, &h);
		RANK_OK(produce(&v, data + env->rank * ROWS * COLS, env->rank, round, programs));
		if (tplan_plan_wait(plan, TIMEOUT_MS))
			RANK_FAIL("%u programs, round %u: %s", programs, round, tplan_ctx_error(ctx));
		for (q = 0; q < WORLD; q++)
			for (r = 0; r < ROWS; r++)
				for (c = 0; c < COLS; c++)
					if (data[(q * ROWS + r) * COLS + c] != word(q, round, r, c))
						RANK_FAIL("%u programs, round %u: rank %u's row %u column %u is %#x",
							  programs, round, q, r, c,
							  data[(q * ROWS + r) * COLS + c]);
		if (round < ROUNDS)
			RANK_OK(tplan_plan_next_round(plan));
	}
	RANK_OK(tplan_plan_close(plan, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tplan_ctx_close(ctx);
	return 0;
}

/* One writer, four programs: the marks after the first are extra. */
static int run_one_writer(struct tplan_rank_env *env)
{
	const struct tplan_plan_shortfall *sf;
	struct tplan_plan *plan;
	struct tplan_tensor out;
	struct tplan_ctx *ctx;
	struct tplan_handle h;
	struct tplan_view v;
	uint32_t *data, n;
	uint64_t off;
	char want[96];

	RANK_OK(join(env, &ctx, &off));
	out = out_of(off);
	data = (uint32_t *)((uint8_t *)tplan_heap_ptr(ctx, env->rank) + off);
	if (tplan_prepare_all_gather(ctx, &out, NULL, &plan))
		RANK_FAIL("prepare_all_gather: %s", tplan_ctx_error(ctx));
	RANK_OK(tplan_plan_start(plan, &h));
	tplan_view_init(&v, &h);
	RANK_OK(produce(&v, data + env->rank * ROWS * COLS, env->rank, 1, 4));
	RANK_ERR(-EOVERFLOW, tplan_plan_wait(plan, TIMEOUT_MS));
	sf = tplan_plan_shortfall(plan, &n);
	RANK_ASSERT(sf && n >= 1);
	RANK_EQ(TPLAN_SHORT_EXTRA_MARKS, sf[0].what);
	RANK_EQ(h.chunk_base[env->rank], sf[0].chunk);
	RANK_EQ(4, sf[0].have);
	RANK_EQ(1, sf[0].want);
	snprintf(want, sizeof(want), "rank %u chunk 0 marks over have 4 want 1", env->rank);
	if (!strstr(tplan_ctx_error(ctx), want))
		RANK_FAIL("error \"%s\" lacks \"%s\"", tplan_ctx_error(ctx), want);
	RANK_OK(tplan_barrier(ctx, TIMEOUT_MS));
	tplan_plan_close(plan, NULL);
	tplan_ctx_close(ctx);
	return 0;
}

/*
 * Program counts that do not fit: on every rank, then on rank 1 alone;
 * every rank fails with EINVAL, and a good plan runs afterwards.
 */
static int run_bad_programs(struct tplan_rank_env *env)
{
	struct tplan_schedule *s = NULL;
	struct tplan_plan *plan;
	struct tplan_tensor out, mine;
	struct tplan_ctx *ctx;
	struct tplan_handle h;
	struct tplan_view v;
	uint32_t *data, state;
	uint64_t off;

	RANK_OK(join(env, &ctx, &off));
	out = out_of(off);
	data = (uint32_t *)((uint8_t *)tplan_heap_ptr(ctx, env->rank) + off);
	mine = out;
	mine.offset += (uint64_t)env->rank * ROWS * COLS * 4;
	mine.rows = ROWS;
	RANK_OK(tplan_schedule_whole(&mine, 2, &s));

	RANK_ERR(-EINVAL, tplan_prepare_all_gather_programs(ctx, &out, NULL, 0, &plan));
	RANK_ASSERT(!plan);
	if (!strstr(tplan_ctx_error(ctx), "needs the producer's programs"))
		RANK_FAIL("error \"%s\"", tplan_ctx_error(ctx));
	RANK_ERR(-EINVAL, tplan_prepare_all_gather_programs(ctx, &out, s, 2, &plan));
	if (!strstr(tplan_ctx_error(ctx), "programs must be 0"))
		RANK_FAIL("error \"%s\"", tplan_ctx_error(ctx));
	/* rank 1 alone is wrong: nobody waits for it */
	RANK_ERR(-EINVAL, tplan_prepare_all_gather_programs(ctx, &out, env->rank == 1 ? s : NULL,
							     2, &plan));
	RANK_ERR(-EINVAL, tplan_prepare_all_gather_programs(ctx, &out, NULL,
							     env->rank == 1 ? 0 : 2, &plan));

	/* nothing left behind: a schedule with its own writers, programs 0 */
	if (tplan_prepare_all_gather_programs(ctx, &out, s, 0, &plan))
		RANK_FAIL("prepare_all_gather_programs(schedule, 0): %s", tplan_ctx_error(ctx));
	RANK_OK(tplan_plan_start(plan, &h));
	tplan_view_init(&v, &h);
	RANK_OK(produce(&v, data + env->rank * ROWS * COLS, env->rank, 1, 2));
	if (tplan_plan_wait(plan, TIMEOUT_MS))
		RANK_FAIL("wait: %s", tplan_ctx_error(ctx));
	RANK_OK(tplan_plan_close(plan, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(ag) {
	int fd;
};

FIXTURE_SETUP(ag)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(ag)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(ag, default_schedule_one_writer_overflows_with_four_programs, 120)
{
	RUN_RANKS(WORLD, run_one_writer, NULL, 100000);
}

TEST_F_TIMEOUT(ag, default_schedule_with_one_program, 120)
{
	RUN_RANKS(WORLD, run_programs, (void *)(uintptr_t)1, 100000);
}

TEST_F_TIMEOUT(ag, default_schedule_with_three_programs, 120)
{
	RUN_RANKS(WORLD, run_programs, (void *)(uintptr_t)3, 100000);
}

TEST_F_TIMEOUT(ag, default_schedule_with_four_programs, 120)
{
	RUN_RANKS(WORLD, run_programs, (void *)(uintptr_t)4, 100000);
}

TEST_F_TIMEOUT(ag, program_count_that_does_not_fit_fails_every_rank, 120)
{
	RUN_RANKS(WORLD, run_bad_programs, NULL, 100000);
}

TEST_HARNESS_MAIN
