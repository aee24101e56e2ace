// SPDX-License-Identifier: GPL-2.0
/*
 * The library's plans end to end: schedules from every builder (whole over
 * strided rows, chunks split at a small maximum, tile_chunks in a grouped
 * order, hand-built sub-windows and rows the sub-window packet cannot
 * express) deliver exactly each rank's bytes to every peer, round after
 * round; and the details tplan_ctx_error() gives: a refused chain by rank,
 * chunk, peer, region and rule; two ranks sending the same bytes; a rank
 * whose all-gather schedule leaves its rows; a wait's shortfall.
 */
#include "tplan_selftest.h"
#include "tplan_device.h"
#include "gemm_tiles.h"

#define WORLD		4
#define HEAP_BYTES	(16u << 20)
#define ROUNDS		4
#define TIMEOUT_MS	20000

enum producer {
	WHOLE_STRIDED,
	CHUNKS_SPLIT,
	TILES_GROUPED,
	HAND_BUILT,
};

static int join(struct tplan_rank_env *env, struct tplan_ctx **ctx)
{
	struct tplan_join_params p = {
		.key = env->key, .world_size = env->world, .rank = env->rank,
		.heap_size = HEAP_BYTES, .timeout_ms = TIMEOUT_MS,
	};
	int ret = tplan_ctx_open(ctx, NULL);

	if (ret)
		return ret;
	ret = tplan_ctx_join(*ctx, &p);
	if (ret)
		tplan_ctx_close(*ctx);
	return ret;
}

static uint32_t word(uint32_t rank, uint32_t round, uint32_t row, uint32_t col)
{
	return (rank << 28) ^ (round << 20) ^ (row << 10) ^ col;
}

/* The rows of a rank: R rows of C u32, pitch bytes apart. */
struct layout {
	uint32_t R, C;
	uint64_t pitch;
	uint64_t off;	/* the gathered tensor's heap offset */
};

static uint32_t *cell(uint8_t *heap, const struct layout *l, uint32_t rank, uint32_t r, uint32_t c)
{
	return (uint32_t *)(heap + l->off + ((uint64_t)rank * l->R + r) * l->pitch) + c;
}

static void fill_rect(uint8_t *heap, const struct layout *l, uint32_t rank, uint32_t round,
		      uint32_t r0, uint32_t rows, uint32_t c0, uint32_t cols)
{
	uint32_t r, c;

	for (r = r0; r < r0 + rows && r < l->R; r++)
		for (c = c0; c < c0 + cols && c < l->C; c++)
			*cell(heap, l, rank, r, c) = word(rank, round, r, c);
}

static int run_producer(struct tplan_rank_env *env)
{
	enum producer kind = (enum producer)(uintptr_t)env->arg;
	struct layout l = { .R = 40, .C = 52 };
	struct gemm_tiling g = { .tiles_m = 5, .tiles_n = 4, .group_m = 2 };
	const uint32_t tile_rows = 8, tile_cols = 13, tiles_per_chunk = 3, rows_per_chunk = 7;
	struct tplan_schedule *s = NULL;
	struct tplan_tensor out, mine;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	struct tplan_handle h;
	struct tplan_view v;
	struct tplan_cta cta = { 0 };
	uint32_t round, q, r, c, step, state, got_round;
	uint8_t *heap;

	RANK_OK(join(env, &ctx));
	/* strided rows (a multiple of 4 bytes) for whole and tiles */
	l.pitch = kind == CHUNKS_SPLIT || kind == HAND_BUILT ? l.C * 4 : l.C * 4 + 48;
	RANK_OK(tplan_heap_alloc(ctx, WORLD * l.R * l.pitch, 64, &l.off));
	heap = tplan_heap_ptr(ctx, env->rank);
	out = (struct tplan_tensor) { .offset = l.off, .rows = WORLD * l.R, .cols = l.C,
				      .elem_size = 4, .pitch = l.pitch };
	mine = out;
	mine.offset = l.off + env->rank * l.R * l.pitch;
	mine.rows = l.R;

	switch (kind) {
	case WHOLE_STRIDED:
		break;		/* the helper's default */
	case CHUNKS_SPLIT:
		/* 7 rows of 208 bytes, in pieces of at most 500 */
		RANK_OK(tplan_schedule_chunks(&mine, rows_per_chunk, 1, 500, &s));
		break;
	case TILES_GROUPED:
		RANK_OK(tplan_schedule_tile_chunks(&mine, tile_rows, tile_cols, tiles_per_chunk,
						   gemm_tile_order, &g, &out, &s));
		break;
	case HAND_BUILT: {
		/*
		 * Rows 208 bytes apart.  Chunk 0, rows 0..19: columns 1..51 and
		 * column 0, both sub-windows.  Chunk 1, rows 20..39 as one byte
		 * range b = [0, 4160) of 416-byte row pairs: [2 + 416k, +415),
		 * k < 9, which no sub-window holds (x = 2 leaves 414 bytes of
		 * the pitch), so a copy per row; bytes 1 + 416k, a 1-byte-wide
		 * sub-window; byte 0; and the tail [3745, 4160).
		 */
		uint64_t b = mine.offset + 20 * l.pitch;
		struct tplan_region c0[2] = {
			{ .offset = mine.offset + 4, .width = 51 * 4, .pitch = l.pitch, .rows = 20 },
			{ .offset = mine.offset, .width = 4, .pitch = l.pitch, .rows = 20 },
		};
		struct tplan_region c1[4] = {
			{ .offset = b + 2, .width = 415, .pitch = 416, .rows = 9 },
			{ .offset = b + 1, .width = 1, .pitch = 416, .rows = 9 },
			{ .offset = b, .width = 1, .rows = 1 },
			{ .offset = b + 3745, .width = 4160 - 3745, .rows = 1 },
		};

		RANK_OK(tplan_schedule_new(&s));
		RANK_EQ(0, tplan_schedule_add_chunk(s, c0, 2, 1));
		RANK_EQ(1, tplan_schedule_add_chunk(s, c1, 4, 1));
		break;
	}
	}
	if (tplan_prepare_all_gather(ctx, &out, s, &plan))
		RANK_FAIL("prepare_all_gather: %s", tplan_ctx_error(ctx));

	for (round = 1; round <= ROUNDS; round++) {
		RANK_OK(tplan_plan_start(plan, &h));
		RANK_EQ(round, h.round);
		tplan_view_init(&v, &h);
		switch (kind) {
		case WHOLE_STRIDED:
			fill_rect(heap, &l, env->rank, round, 0, l.R, 0, l.C);
			RANK_OK(tplan_mark_ready(&v, &cta, 0));
			break;
		case CHUNKS_SPLIT:
			for (r = 0; r < l.R; r += rows_per_chunk) {
				fill_rect(heap, &l, env->rank, round, r, rows_per_chunk, 0, l.C);
				RANK_OK(tplan_mark_ready(&v, &cta, r / rows_per_chunk));
			}
			break;
		case TILES_GROUPED:
			/* one program: steps in order, one mark per tile */
			for (step = 0; step < g.tiles_m * g.tiles_n; step++) {
				uint32_t t = tile_of(step, &g);

				fill_rect(heap, &l, env->rank, round, t / g.tiles_n * tile_rows,
					  tile_rows, t % g.tiles_n * tile_cols, tile_cols);
				RANK_OK(tplan_mark_ready(&v, &cta, step / tiles_per_chunk));
			}
			break;
		case HAND_BUILT:
			fill_rect(heap, &l, env->rank, round, 0, 20, 0, l.C);
			RANK_OK(tplan_mark_ready(&v, &cta, 0));
			fill_rect(heap, &l, env->rank, round, 20, 20, 0, l.C);
			RANK_OK(tplan_mark_ready(&v, &cta, 1));
			break;
		}
		if (tplan_plan_wait(plan, TIMEOUT_MS))
			RANK_FAIL("round %u: %s", round, tplan_ctx_error(ctx));
		for (q = 0; q < WORLD; q++)
			for (r = 0; r < l.R; r++)
				for (c = 0; c < l.C; c++)
					if (*cell(heap, &l, q, r, c) != word(q, round, r, c))
						RANK_FAIL("round %u: rank %u's row %u column %u is %#x",
							  round, q, r, c, *cell(heap, &l, q, r, c));
		RANK_OK(tplan_plan_state(plan, &state, &got_round));
		RANK_EQ(TPLAN_PLAN_DONE, state);
		RANK_EQ(round, got_round);
		if (round < ROUNDS)
			RANK_OK(tplan_plan_next_round(plan));
	}
	RANK_OK(tplan_plan_close(plan, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(lib) {
	int fd;
};

FIXTURE_SETUP(lib)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(lib)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(lib, all_gather_whole_strided_rows, 120)
{
	RUN_RANKS(WORLD, run_producer, (void *)(uintptr_t)WHOLE_STRIDED, 100000);
}

TEST_F_TIMEOUT(lib, all_gather_row_blocks_split_at_a_small_maximum, 120)
{
	RUN_RANKS(WORLD, run_producer, (void *)(uintptr_t)CHUNKS_SPLIT, 100000);
}

TEST_F_TIMEOUT(lib, all_gather_tiles_in_grouped_order, 120)
{
	RUN_RANKS(WORLD, run_producer, (void *)(uintptr_t)TILES_GROUPED, 100000);
}

TEST_F_TIMEOUT(lib, all_gather_hand_built_windows_and_rows, 120)
{
	RUN_RANKS(WORLD, run_producer, (void *)(uintptr_t)HAND_BUILT, 100000);
}

/* ---- error details ------------------------------------------------------- */

#define RANK_ERROR_HAS(ctx, text)						\
	do {									\
		if (!strstr(tplan_ctx_error(ctx), (text)))			\
			RANK_FAIL("error \"%s\" lacks \"%s\"", tplan_ctx_error(ctx), (text)); \
	} while (0)

/* 16-byte rows, 8 per rank, no padding. */
#define ER_ROWS	8
#define ER_COLS	16

static int run_errors(struct tplan_rank_env *env)
{
	struct tplan_schedule *s, *s2;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	struct tplan_tensor out;
	uint64_t off, part;
	uint32_t state, n;
	const struct tplan_plan_shortfall *sf;
	struct tplan_handle h;
	struct tplan_view v;
	struct tplan_cta cta = { 0 };
	char want[128];

	RANK_OK(join(env, &ctx));
	RANK_OK(tplan_heap_alloc(ctx, WORLD * ER_ROWS * ER_COLS, 64, &off));
	part = ER_ROWS * ER_COLS;
	out = (struct tplan_tensor) { .offset = off, .rows = WORLD * ER_ROWS, .cols = ER_COLS,
				      .elem_size = 1 };

	/* rank 1's chunk 0 region 1 reads rank 2's part: rule 18, named on every rank */
	{
		struct tplan_region rg[2] = {
			{ .offset = off + env->rank * part, .width = ER_COLS, .rows = 1 },
			{ .offset = off + env->rank * part + (env->rank == 1 ? part : ER_COLS),
			  .width = ER_COLS, .rows = 1 },
		};

		RANK_OK(tplan_schedule_new(&s));
		RANK_EQ(0, tplan_schedule_add_chunk(s, rg, 2, 1));
	}
	RANK_ERR(-EINVAL, tplan_plan_create(ctx, off, WORLD * part, off + env->rank * part, part,
					    s, &plan));
	RANK_ERROR_HAS(ctx, "rank 1 chunk 0 (peer 0)");
	RANK_ERROR_HAS(ctx, "copy source outside the rank's own part (rule 18");
	if (env->rank == 1)
		RANK_ERROR_HAS(ctx, "rank 1 chunk 0 (peer 0) region 1: ");

	/* the all-gather helper refuses it on rank 1 itself, and every rank fails */
	RANK_ERR(-EINVAL, tplan_prepare_all_gather(ctx, &out, s, &plan));
	if (env->rank == 1)
		RANK_ERROR_HAS(ctx, "all-gather: rank 1 chunk 0 region 1");

	/* rank 1 also sends rank 2's first row (own parts the whole buffer): rule 30 */
	{
		struct tplan_region ov = {
			.offset = off + (env->rank == 1 ? 2 : env->rank) * part, .width = ER_COLS,
			.rows = 1,
		};

		RANK_OK(tplan_schedule_new(&s2));
		RANK_EQ(0, tplan_schedule_add_chunk(s2, &ov, 1, 1));
	}
	RANK_ERR(-EINVAL, tplan_plan_create(ctx, off, WORLD * part, off, WORLD * part, s2, &plan));
	RANK_ERROR_HAS(ctx, "two ranks send the same bytes (rule 30");
	snprintf(want, sizeof(want), "heap offset %#llx", (unsigned long long)(off + 2 * part));
	RANK_ERROR_HAS(ctx, want);

	/* nothing was left behind: the whole schedule now prepares and runs */
	if (tplan_prepare_all_gather(ctx, &out, NULL, &plan))
		RANK_FAIL("prepare_all_gather: %s", tplan_ctx_error(ctx));
	RANK_OK(tplan_plan_start(plan, &h));
	tplan_view_init(&v, &h);
	/* rank 0 never marks its chunk: every wait names it */
	if (env->rank)
		RANK_OK(tplan_mark_ready(&v, &cta, 0));
	RANK_ERR(-ETIMEDOUT, tplan_plan_wait(plan, 300));
	sf = tplan_plan_shortfall(plan, &n);
	RANK_ASSERT(sf && n >= 1);
	RANK_EQ(h.chunk_base[0], sf[0].chunk);
	RANK_ERROR_HAS(ctx, "plan wait: round 1: timed out");
	if (env->rank == 0) {
		RANK_EQ(4, n);	/* its marks, and its arrival at each peer */
		RANK_EQ(TPLAN_SHORT_MARKS, sf[0].what);
		RANK_ERROR_HAS(ctx, "rank 0 chunk 0 marks short have 0 want 1");
	} else {
		RANK_EQ(1, n);
		RANK_EQ(TPLAN_SHORT_ARRIVAL, sf[0].what);
		snprintf(want, sizeof(want), "rank 0 chunk 0 arrivals at rank %u have 0 want 1",
			 env->rank);
		RANK_ERROR_HAS(ctx, want);
	}
	/* closing sends the chunk as it stands: only once every rank has waited */
	RANK_OK(tplan_barrier(ctx, TIMEOUT_MS));
	RANK_OK(tplan_plan_close(plan, &state));
	RANK_EQ(TPLAN_PLAN_CLOSED, state);
	tplan_schedule_free(s);
	tplan_schedule_free(s2);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(lib, error_details_name_chunk_region_rule_and_shortfall, 120)
{
	RUN_RANKS(WORLD, run_errors, NULL, 100000);
}

TEST_HARNESS_MAIN
