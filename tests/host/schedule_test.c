// SPDX-License-Identifier: GPL-2.0
/*
 * Schedules (libtplan/schedule.c): hand-built chunks and their refusals,
 * and the builders: whole, chunks (row blocks split at the per-packet
 * maximum, 4 MiB and 1 GiB), tile_chunks (a grouped GEMM order, edge tiles
 * clipped, every element exactly once).
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "gemm_tiles.h"
#include "libtplan.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

TEST(hand_built)
{
	struct tplan_region r[3] = {
		{ .offset = 4096, .width = 100, .pitch = 7, .rows = 1 },
		{ .offset = 8192, .width = 64, .pitch = 256, .rows = 10 },
		{ .offset = 1 << 20, .width = 256, .pitch = 256, .rows = 4 },
	};
	const struct tplan_region *got;
	struct tplan_schedule *s;
	uint32_t n, writers;

	ASSERT_EQ(0, tplan_schedule_new(&s));
	ASSERT_EQ(0, tplan_schedule_nchunks(s));
	ASSERT_EQ(0, tplan_schedule_add_chunk(s, r, 2, 1));
	ASSERT_EQ(1, tplan_schedule_add_chunk(s, r + 2, 1, 8));
	ASSERT_EQ(2, tplan_schedule_nchunks(s));

	got = tplan_schedule_chunk(s, 0, &n, &writers);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(2, n);
	EXPECT_EQ(1, writers);
	EXPECT_EQ(4096, got[0].offset);
	EXPECT_EQ(100, got[0].width);
	EXPECT_EQ(100, got[0].pitch);	/* one row: its pitch is its width */
	EXPECT_EQ(10, got[1].rows);
	EXPECT_EQ(256, got[1].pitch);
	got = tplan_schedule_chunk(s, 1, &n, &writers);
	EXPECT_EQ(1, n);
	EXPECT_EQ(8, writers);
	EXPECT_EQ(1 << 20, got[0].offset);
	EXPECT_EQ(NULL, tplan_schedule_chunk(s, 2, &n, &writers));
	EXPECT_EQ(0, n);
	tplan_schedule_free(s);
	tplan_schedule_free(NULL);
}

TEST(hand_built_refusals)
{
	struct tplan_region ok = { .offset = 0, .width = 16, .rows = 1 };
	struct tplan_region bad;
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_new(&s));
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &ok, 0, 1));	/* no region */
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &ok, 1, 0));	/* no writer */
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, NULL, 1, 1));
	bad = ok;
	bad.width = 0;
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));
	bad = ok;
	bad.rows = 0;
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));
	bad = (struct tplan_region) { .offset = 0, .width = 64, .pitch = 32, .rows = 2 };
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));	/* rows overlap */
	bad = (struct tplan_region) { .offset = UINT64_MAX - 8, .width = 16, .rows = 1 };
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));	/* wraps */
	bad = (struct tplan_region) { .offset = 0, .width = 1, .pitch = 1ULL << 61, .rows = 4 };
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));	/* extent */
	bad = ok;
	bad.__pad = 1;
	EXPECT_EQ(-EINVAL, tplan_schedule_add_chunk(s, &bad, 1, 1));
	EXPECT_EQ(0, tplan_schedule_nchunks(s));	/* nothing was added */
	EXPECT_EQ(0, tplan_schedule_add_chunk(s, &ok, 1, 1));
	tplan_schedule_free(s);
}

TEST(whole)
{
	struct tplan_tensor t = { .offset = 1 << 16, .rows = 100, .cols = 300, .elem_size = 2 };
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers;

	/* contiguous: one byte range */
	ASSERT_EQ(0, tplan_schedule_whole(&t, 4, &s));
	ASSERT_EQ(1, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 0, &n, &writers);
	ASSERT_EQ(1, n);
	EXPECT_EQ(4, writers);
	EXPECT_EQ(1 << 16, r->offset);
	EXPECT_EQ(1, r->rows);
	EXPECT_EQ(100 * 300 * 2, r->width);
	tplan_schedule_free(s);

	/* strided: one 2D region */
	t.pitch = 1024;
	ASSERT_EQ(0, tplan_schedule_whole(&t, 1, &s));
	r = tplan_schedule_chunk(s, 0, &n, &writers);
	ASSERT_EQ(1, n);
	EXPECT_EQ(100, r->rows);
	EXPECT_EQ(600, r->width);
	EXPECT_EQ(1024, r->pitch);
	tplan_schedule_free(s);

	/* shapes with no encoding */
	t.pitch = 500;		/* below the row */
	EXPECT_EQ(-EINVAL, tplan_schedule_whole(&t, 1, &s));
	EXPECT_EQ(NULL, s);
	t.pitch = 0;
	t.elem_size = 3;
	EXPECT_EQ(-EINVAL, tplan_schedule_whole(&t, 1, &s));
	t.elem_size = 32;
	EXPECT_EQ(-EINVAL, tplan_schedule_whole(&t, 1, &s));
	t.elem_size = 2;
	t.rows = 0;
	EXPECT_EQ(-EINVAL, tplan_schedule_whole(&t, 1, &s));
	t.rows = 1;
	EXPECT_EQ(-EINVAL, tplan_schedule_whole(&t, 0, &s));
}

/* The chunk's regions are back-to-back pieces of [off, off + bytes), each <= max. */
static int pieces_cover(const struct tplan_region *r, uint32_t n, uint64_t off, uint64_t bytes,
			uint64_t max)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (r[i].rows != 1 || r[i].offset != off || r[i].width > max || !r[i].width)
			return 0;
		if (i + 1 < n && r[i].width != max)
			return 0;	/* only the last piece is short */
		off += r[i].width;
		bytes -= r[i].width;
	}
	return bytes == 0;
}

TEST(chunks_row_blocks)
{
	struct tplan_tensor t = { .offset = 4096, .rows = 10, .cols = 16, .elem_size = 4 };
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers, c;

	ASSERT_EQ(0, tplan_schedule_chunks(&t, 3, 2, 0, &s));
	ASSERT_EQ(4, tplan_schedule_nchunks(s));	/* 3 + 3 + 3 + 1 rows */
	for (c = 0; c < 4; c++) {
		r = tplan_schedule_chunk(s, c, &n, &writers);
		ASSERT_EQ(1, n);
		EXPECT_EQ(2, writers);
		EXPECT_EQ(4096 + c * 3 * 64, r->offset);
		EXPECT_EQ(c < 3 ? 3 * 64 : 64, r->width);
	}
	tplan_schedule_free(s);

	/* strided rows: a 2D region per block, the last one clipped */
	t.pitch = 128;
	ASSERT_EQ(0, tplan_schedule_chunks(&t, 4, 1, 0, &s));
	ASSERT_EQ(3, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 2, &n, &writers);
	ASSERT_EQ(1, n);
	EXPECT_EQ(4096 + 8 * 128, r->offset);
	EXPECT_EQ(2, r->rows);
	EXPECT_EQ(64, r->width);
	EXPECT_EQ(128, r->pitch);
	tplan_schedule_free(s);

	EXPECT_EQ(-EINVAL, tplan_schedule_chunks(&t, 0, 1, 0, &s));
	EXPECT_EQ(-EINVAL, tplan_schedule_chunks(&t, 1, 0, 0, &s));
}

/* SDMA 4.4.2's default maximum: a 10 MiB row block is 4 + 4 + 2 MiB. */
TEST(chunks_split_at_4MiB)
{
	struct tplan_tensor t = { .offset = 1 << 20, .rows = 7, .cols = 5 * MiB, .elem_size = 1 };
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers, c;

	ASSERT_EQ(0, tplan_schedule_chunks(&t, 2, 1, 4 * MiB, &s));
	ASSERT_EQ(4, tplan_schedule_nchunks(s));
	for (c = 0; c < 4; c++) {
		uint64_t bytes = (c < 3 ? 2 : 1) * 5 * MiB;

		r = tplan_schedule_chunk(s, c, &n, &writers);
		EXPECT_EQ(c < 3 ? 3 : 2, n);
		EXPECT_TRUE(pieces_cover(r, n, (1 << 20) + c * 10 * MiB, bytes, 4 * MiB));
	}
	tplan_schedule_free(s);
}

/* The count field's limit (and the default): 1 GiB pieces. */
TEST(chunks_split_at_1GiB)
{
	/* 3 rows of 1.5 GiB: 16-byte elements keep cols in 32 bits */
	struct tplan_tensor t = { .offset = 0, .rows = 3, .cols = (3 * GiB / 2) / 16,
				  .elem_size = 16 };
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers;

	ASSERT_EQ(0, tplan_schedule_chunks(&t, 3, 1, 0, &s));
	ASSERT_EQ(1, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 0, &n, &writers);
	EXPECT_EQ(5, n);	/* 4.5 GiB */
	EXPECT_TRUE(pieces_cover(r, n, 0, 9 * GiB / 2, GiB));
	tplan_schedule_free(s);

	/* a maximum above what the count field holds is the field's */
	ASSERT_EQ(0, tplan_schedule_chunks(&t, 1, 1, 4 * GiB, &s));
	ASSERT_EQ(3, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 1, &n, &writers);
	EXPECT_EQ(2, n);
	EXPECT_TRUE(pieces_cover(r, n, 3 * GiB / 2, 3 * GiB / 2, GiB));
	tplan_schedule_free(s);
}

FIXTURE(tiles) {
	struct tplan_tensor base, mine;
	struct gemm_tiling g;	/* Triton's grouped order, GROUP_M tile rows at a time */
	uint32_t tile_rows, tile_cols;
};

FIXTURE_SETUP(tiles)
{
	/* rank 1 of 4: rows 100..199 of a 400 x 1000 bf16 matrix, rows padded */
	self->base = (struct tplan_tensor) { .offset = 1 << 20, .rows = 400, .cols = 1000,
					     .elem_size = 2, .pitch = 2048 };
	self->mine = self->base;
	self->mine.offset += 100 * 2048;
	self->mine.rows = 100;
	self->tile_rows = 32;
	self->tile_cols = 128;
	/* 4 x 8 tiles; the bottom row is 4 rows high, the right column 104 wide */
	self->g = (struct gemm_tiling) { .tiles_m = 4, .tiles_n = 8, .group_m = 3 };
}

FIXTURE_TEARDOWN(tiles)
{
}

TEST_F(tiles, grouped_order)
{
	const uint32_t tpc = 5, ntiles = 32;
	uint8_t *seen = calloc(self->mine.rows * self->mine.cols, 1);
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers, c, i, row, col, step = 0;

	ASSERT_NE(NULL, seen);
	ASSERT_EQ(0, tplan_schedule_tile_chunks(&self->mine, self->tile_rows, self->tile_cols, tpc,
						gemm_tile_order, &self->g, &self->base, &s));
	ASSERT_EQ(7, tplan_schedule_nchunks(s));	/* 6 x 5 tiles + 2 */
	for (c = 0; c < 7; c++) {
		r = tplan_schedule_chunk(s, c, &n, &writers);
		ASSERT_EQ(c < 6 ? 5 : 2, n);
		EXPECT_EQ(n, writers);		/* one mark per tile */
		for (i = 0; i < n; i++, step++) {
			uint32_t t = tile_of(step, &self->g), tm = t / 8, tn = t % 8;
			uint32_t h = tm == 3 ? 4 : 32, w = tn == 7 ? 104 : 128;

			/* chunk c holds the tiles of steps c * tpc ..., in step order */
			EXPECT_EQ(self->mine.offset + tm * 32 * 2048 + tn * 128 * 2, r[i].offset);
			EXPECT_EQ(h, r[i].rows);
			EXPECT_EQ(w * 2, r[i].width);
			EXPECT_EQ(2048, r[i].pitch);	/* base's */
			for (row = 0; row < r[i].rows; row++)
				for (col = 0; col < r[i].width / 2; col++) {
					uint64_t at = r[i].offset - self->mine.offset + row * 2048ULL;

					seen[at / 2048 * 1000 + at % 2048 / 2 + col]++;
				}
		}
	}
	EXPECT_EQ(ntiles, step);
	/* every element of mine exactly once, nothing else */
	for (i = 0; i < self->mine.rows * self->mine.cols; i++)
		if (seen[i] != 1)
			break;
	EXPECT_EQ(self->mine.rows * self->mine.cols, i);
	free(seen);
	tplan_schedule_free(s);
}

TEST_F(tiles, row_major_without_order)
{
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers;

	/* one chunk per program of a 32-program persistent kernel: one chunk */
	ASSERT_EQ(0, tplan_schedule_tile_chunks(&self->mine, 32, 128, 32, NULL, NULL,
						&self->base, &s));
	ASSERT_EQ(1, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 0, &n, &writers);
	ASSERT_EQ(32, n);
	EXPECT_EQ(32, writers);
	EXPECT_EQ(self->mine.offset + 128 * 2, r[1].offset);
	EXPECT_EQ(self->mine.offset + 32 * 2048, r[8].offset);
	tplan_schedule_free(s);
}

TEST_F(tiles, one_row_tiles_are_byte_ranges)
{
	const struct tplan_region *r;
	struct tplan_schedule *s;
	uint32_t n, writers;

	ASSERT_EQ(0, tplan_schedule_tile_chunks(&self->mine, 1, 1000, 10, NULL, NULL,
						&self->base, &s));
	ASSERT_EQ(10, tplan_schedule_nchunks(s));
	r = tplan_schedule_chunk(s, 9, &n, &writers);
	ASSERT_EQ(10, n);
	EXPECT_EQ(1, r[0].rows);
	EXPECT_EQ(2000, r[0].width);
	EXPECT_EQ(2000, r[0].pitch);
	EXPECT_EQ(self->mine.offset + 90 * 2048, r[0].offset);
	tplan_schedule_free(s);
}

static uint32_t repeats(uint32_t step, void *arg)
{
	(void)arg;
	return step == 5 ? 4 : step;
}

static uint32_t past_end(uint32_t step, void *arg)
{
	return step + *(uint32_t *)arg;
}

TEST_F(tiles, refusals)
{
	struct tplan_tensor t;
	struct tplan_schedule *s;
	uint32_t shift = 1;

	/* an order that is not a permutation of the tiles */
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&self->mine, 32, 128, 4, repeats, NULL,
						      &self->base, &s));
	EXPECT_EQ(NULL, s);
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&self->mine, 32, 128, 4, past_end, &shift,
						      &self->base, &s));
	/* tile shapes */
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&self->mine, 0, 128, 4, NULL, NULL,
						      &self->base, &s));
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&self->mine, 32, 128, 0, NULL, NULL,
						      &self->base, &s));
	/* mine not a view of base */
	t = self->mine;
	t.rows = 301;
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&t, 32, 128, 4, NULL, NULL, &self->base, &s));
	t = self->mine;
	t.offset = self->base.offset - 2;
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&t, 32, 128, 4, NULL, NULL, &self->base, &s));
	t = self->mine;
	t.pitch = 4096;
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&t, 32, 128, 4, NULL, NULL, &self->base, &s));
	t = self->mine;
	t.elem_size = 4;
	t.cols = 500;
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&t, 32, 128, 4, NULL, NULL, &self->base, &s));
	t = self->mine;
	t.offset += 100;	/* columns 50.. run past base's rows */
	EXPECT_EQ(-EINVAL, tplan_schedule_tile_chunks(&t, 32, 128, 4, NULL, NULL, &self->base, &s));
}

TEST_HARNESS_MAIN
