// SPDX-License-Identifier: GPL-2.0
/*
 * The tiling of examples/hip_gemm_all_gather.hip (examples/gemm_tiles.h)
 * in its host build: tile_of() is Triton's grouped order and visits every
 * tile once, and the schedule tplan_schedule_tile_chunks() builds through
 * gemm_tile_order() is what the kernel's persistent loop marks: chunk
 * step / programs holds tile_of(step) at place step % programs, with as
 * many writers as the loop marks it.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "libtplan.h"
#include "gemm_tiles.h"

TEST(grouped_order_small)
{
	/* 3 x 2 tiles, group_m 2: down rows 0-1 column by column, then row 2 */
	const struct gemm_tiling t = { .tiles_m = 3, .tiles_n = 2, .group_m = 2 };
	const uint32_t want[6] = { 0, 2, 1, 3, 4, 5 };
	uint32_t step;

	for (step = 0; step < 6; step++) {
		EXPECT_EQ(want[step], tile_of(step, &t));
		EXPECT_EQ(want[step], gemm_tile_order(step, (void *)&t));
	}
}

TEST(every_tile_once)
{
	uint32_t tm, tn, g, step;

	for (tm = 1; tm <= 9; tm++)
		for (tn = 1; tn <= 7; tn++)
			for (g = 1; g <= 10; g++) {
				const struct gemm_tiling t = { .tiles_m = tm, .tiles_n = tn, .group_m = g };
				uint8_t seen[63] = { 0 };

				for (step = 0; step < tm * tn; step++) {
					uint32_t tile = tile_of(step, &t);

					ASSERT_LT(tile, tm * tn);
					ASSERT_EQ(0, seen[tile]++);
				}
			}
}

/* A rank's rows of an fp32 out, as the example describes them. */
static void check_schedule(struct __test_metadata *_metadata, uint32_t ranks, uint32_t rank,
			   uint32_t rows, uint32_t cols, uint32_t group_m, uint32_t programs)
{
	const struct gemm_tiling t = gemm_tiling_of(rows, cols, group_m);
	const uint32_t ntiles = t.tiles_m * t.tiles_n;
	const uint64_t pitch = (uint64_t)cols * 4;
	struct tplan_tensor out = { .offset = 4096, .rows = ranks * rows, .cols = cols, .elem_size = 4 };
	struct tplan_tensor mine = out;
	struct tplan_schedule *s;
	uint32_t *marks, p, step, c;

	mine.offset += (uint64_t)rank * rows * pitch;
	mine.rows = rows;
	ASSERT_EQ(0, tplan_schedule_tile_chunks(&mine, GEMM_TILE_M, GEMM_TILE_N, programs,
						gemm_tile_order, (void *)&t, &out, &s));
	ASSERT_EQ((ntiles + programs - 1) / programs, tplan_schedule_nchunks(s));
	marks = calloc(tplan_schedule_nchunks(s), sizeof(*marks));
	ASSERT_NE(NULL, marks);

	/* The kernel's loop: program p takes steps p, p + programs, ... */
	for (p = 0; p < programs; p++)
		for (step = p; step < ntiles; step += programs) {
			uint32_t tile = tile_of(step, &t), chunk = step / programs, n, writers;
			uint32_t r0 = tile / t.tiles_n * GEMM_TILE_M, c0 = tile % t.tiles_n * GEMM_TILE_N;
			uint32_t h = rows - r0 < GEMM_TILE_M ? rows - r0 : GEMM_TILE_M;
			uint32_t w = cols - c0 < GEMM_TILE_N ? cols - c0 : GEMM_TILE_N;
			const struct tplan_region *r = tplan_schedule_chunk(s, chunk, &n, &writers);

			ASSERT_NE(NULL, r);
			ASSERT_LT(step % programs, n);
			r += step % programs;
			EXPECT_EQ(mine.offset + r0 * pitch + c0 * 4ULL, r->offset);
			EXPECT_EQ(h, r->rows);
			EXPECT_EQ(w * 4ULL, r->width);
			if (h > 1)
				EXPECT_EQ(pitch, r->pitch);
			marks[chunk]++;
		}
	for (c = 0; c < tplan_schedule_nchunks(s); c++) {
		uint32_t n, writers;

		tplan_schedule_chunk(s, c, &n, &writers);
		EXPECT_EQ(marks[c], writers);	/* marked exactly writers times */
		EXPECT_EQ(n, writers);
	}
	free(marks);
	tplan_schedule_free(s);
}

TEST(schedule_is_the_kernels_loop)
{
	/* the example's defaults for 8 ranks */
	check_schedule(_metadata, 8, 3, 1024, 1024, 8, 64);
	/* edge tiles both ways, a short last group, a short last chunk */
	check_schedule(_metadata, 3, 1, 100, 70, 3, 5);
	check_schedule(_metadata, 2, 0, 33, 1, 1, 7);
	/* more programs than tiles: one chunk */
	check_schedule(_metadata, 4, 3, 64, 64, 8, 304);
}

TEST_HARNESS_MAIN
