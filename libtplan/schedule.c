// SPDX-License-Identifier: MIT
/*
 * Schedules: the chunks one rank writes, in the order its producer
 * completes them, and the builders for common producers (whole, row
 * blocks, tiles).  Plain data: nothing here talks to the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libtplan.h"
#include "tplan_sdma.h"

struct schedule_chunk {
	uint32_t first;		/* index of its first region */
	uint32_t nregions;
	uint32_t writers;
};

struct tplan_schedule {
	struct tplan_region *regions;
	uint32_t nregions, regions_cap;
	struct schedule_chunk *chunks;
	uint32_t nchunks, chunks_cap;
};

/* Offsets stay below 2^62, as the kernel's overlap check wants them. */
#define REGION_END_LIMIT (1ULL << 62)

int tplan_schedule_new(struct tplan_schedule **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void tplan_schedule_free(struct tplan_schedule *schedule)
{
	if (!schedule)
		return;
	free(schedule->regions);
	free(schedule->chunks);
	free(schedule);
}

static int region_ok(const struct tplan_region *r)
{
	uint64_t extent;

	if (!r->width || !r->rows || r->__pad || r->offset >= REGION_END_LIMIT)
		return 0;
	if (r->rows == 1)
		return r->width <= REGION_END_LIMIT - r->offset;
	if (r->pitch < r->width)
		return 0;
	/* (rows - 1) * pitch + width, without overflow */
	if (r->pitch > (REGION_END_LIMIT - r->width) / (r->rows - 1))
		return 0;
	extent = (uint64_t)(r->rows - 1) * r->pitch + r->width;
	return extent <= REGION_END_LIMIT - r->offset;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > UINT32_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

int tplan_schedule_add_chunk(struct tplan_schedule *s, const struct tplan_region *regions,
			     uint32_t nregions, uint32_t writers)
{
	struct schedule_chunk *c;
	uint32_t i;
	int ret;

	if (!s || !regions || !nregions || !writers || s->nchunks >= TPLAN_PLAN_CHUNKS_MAX ||
	    nregions > UINT32_MAX - s->nregions)
		return -EINVAL;
	for (i = 0; i < nregions; i++)
		if (!region_ok(&regions[i]))
			return -EINVAL;
	ret = grow((void **)&s->regions, &s->regions_cap, s->nregions + nregions,
		   sizeof(*s->regions));
	if (!ret)
		ret = grow((void **)&s->chunks, &s->chunks_cap, s->nchunks + 1, sizeof(*s->chunks));
	if (ret)
		return ret;
	memcpy(s->regions + s->nregions, regions, nregions * sizeof(*regions));
	for (i = 0; i < nregions; i++) {
		struct tplan_region *r = &s->regions[s->nregions + i];

		/* one row has no pitch: store it as its width */
		if (r->rows == 1)
			r->pitch = r->width;
	}
	c = &s->chunks[s->nchunks];
	c->first = s->nregions;
	c->nregions = nregions;
	c->writers = writers;
	s->nregions += nregions;
	return (int)s->nchunks++;
}

uint32_t tplan_schedule_nchunks(const struct tplan_schedule *s)
{
	return s ? s->nchunks : 0;
}

const struct tplan_region *tplan_schedule_chunk(const struct tplan_schedule *s, uint32_t chunk,
						uint32_t *nregions, uint32_t *writers)
{
	if (!s || chunk >= s->nchunks) {
		if (nregions)
			*nregions = 0;
		if (writers)
			*writers = 0;
		return NULL;
	}
	if (nregions)
		*nregions = s->chunks[chunk].nregions;
	if (writers)
		*writers = s->chunks[chunk].writers;
	return s->regions + s->chunks[chunk].first;
}

/* ---- builders ------------------------------------------------------------ */

/*
 * A tensor's row length and pitch in bytes; -EINVAL for a shape with no
 * bytes, an element size the engine has no code for, or rows that overlap.
 */
static int tensor_geom(const struct tplan_tensor *t, uint64_t *row_bytes, uint64_t *pitch)
{
	uint32_t e = t->elem_size;

	if (!t->rows || !t->cols || !e || (e & (e - 1)) ||
	    e > (1U << TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX) || t->__pad)
		return -EINVAL;
	*row_bytes = (uint64_t)t->cols * e;
	*pitch = t->pitch ? t->pitch : *row_bytes;
	if (*pitch < *row_bytes)
		return -EINVAL;
	return 0;
}

/* rows rows of the tensor from row r0, as one region: linear if contiguous. */
static struct tplan_region rows_region(uint64_t offset, uint64_t row_bytes, uint64_t pitch,
				       uint32_t rows)
{
	struct tplan_region r = { .offset = offset, .width = row_bytes, .pitch = pitch,
				  .rows = rows };

	if (rows == 1 || pitch == row_bytes) {
		r.width = row_bytes * rows;
		r.pitch = r.width;
		r.rows = 1;
	}
	return r;
}

/* Schedules built by a builder that fails are freed here. */
static int builder_done(struct tplan_schedule *s, int ret, struct tplan_schedule **out)
{
	if (ret < 0) {
		tplan_schedule_free(s);
		*out = NULL;
		return ret;
	}
	*out = s;
	return 0;
}

int tplan_schedule_whole(const struct tplan_tensor *mine, uint32_t writers,
			 struct tplan_schedule **out)
{
	struct tplan_schedule *s;
	struct tplan_region r;
	uint64_t row_bytes, pitch;
	int ret;

	*out = NULL;
	ret = tensor_geom(mine, &row_bytes, &pitch);
	if (ret)
		return ret;
	ret = tplan_schedule_new(&s);
	if (ret)
		return ret;
	r = rows_region(mine->offset, row_bytes, pitch, mine->rows);
	return builder_done(s, tplan_schedule_add_chunk(s, &r, 1, writers), out);
}

int tplan_schedule_chunks(const struct tplan_tensor *mine, uint32_t rows_per_chunk,
			  uint32_t writers, uint64_t max_copy_bytes, struct tplan_schedule **out)
{
	struct tplan_schedule *s;
	struct tplan_region *regions = NULL;
	uint64_t row_bytes, pitch, bytes, at, piece;
	uint32_t r0, rows, n, cap = 0;
	int ret;

	*out = NULL;
	ret = tensor_geom(mine, &row_bytes, &pitch);
	if (ret)
		return ret;
	if (!rows_per_chunk)
		return -EINVAL;
	if (!max_copy_bytes || max_copy_bytes > TPLAN_SDMA_COPY_MAX_BYTES)
		max_copy_bytes = TPLAN_SDMA_COPY_MAX_BYTES;
	ret = tplan_schedule_new(&s);
	if (ret)
		return ret;

	for (r0 = 0; r0 < mine->rows && ret >= 0; r0 += rows) {
		struct tplan_region block;

		rows = mine->rows - r0 < rows_per_chunk ? mine->rows - r0 : rows_per_chunk;
		block = rows_region(mine->offset + (uint64_t)r0 * pitch, row_bytes, pitch, rows);
		if (block.rows > 1) {
			/* strided rows: one 2D region; chain building splits it */
			ret = tplan_schedule_add_chunk(s, &block, 1, writers);
			continue;
		}
		/* a byte range: pieces of at most one copy packet each */
		bytes = block.width;
		n = 0;
		for (at = 0; at < bytes; at += piece) {
			piece = bytes - at < max_copy_bytes ? bytes - at : max_copy_bytes;
			ret = grow((void **)&regions, &cap, n + 1, sizeof(*regions));
			if (ret)
				break;
			regions[n++] = (struct tplan_region) {
				.offset = block.offset + at, .width = piece, .pitch = piece, .rows = 1,
			};
		}
		if (ret >= 0)
			ret = tplan_schedule_add_chunk(s, regions, n, writers);
	}
	free(regions);
	return builder_done(s, ret, out);
}

int tplan_schedule_tile_chunks(const struct tplan_tensor *mine, uint32_t tile_rows,
			       uint32_t tile_cols, uint32_t tiles_per_chunk,
			       tplan_tile_order_fn order, void *order_arg,
			       const struct tplan_tensor *base, struct tplan_schedule **out)
{
	struct tplan_schedule *s;
	struct tplan_region *regions = NULL;
	uint64_t row_bytes, pitch, tiles_m, tiles_n, ntiles, step, tile;
	uint8_t *seen = NULL;
	uint32_t e = mine->elem_size, n;
	int ret;

	*out = NULL;
	ret = tensor_geom(mine, &row_bytes, &pitch);
	if (ret)
		return ret;
	if (!tile_rows || !tile_cols || !tiles_per_chunk)
		return -EINVAL;
	if (base) {
		uint64_t base_row, base_pitch, rel;

		/* mine is a view of base: same elements, inside it, base's pitch */
		ret = tensor_geom(base, &base_row, &base_pitch);
		if (ret)
			return ret;
		if (base->elem_size != e || (mine->pitch && mine->pitch != base_pitch) ||
		    mine->offset < base->offset)
			return -EINVAL;
		pitch = base_pitch;
		rel = mine->offset - base->offset;
		if (rel / pitch + mine->rows > base->rows ||
		    (rel % pitch) + row_bytes > base_row)
			return -EINVAL;
	}

	tiles_m = (mine->rows + (uint64_t)tile_rows - 1) / tile_rows;
	tiles_n = (mine->cols + (uint64_t)tile_cols - 1) / tile_cols;
	ntiles = tiles_m * tiles_n;
	if ((ntiles + tiles_per_chunk - 1) / tiles_per_chunk > TPLAN_PLAN_CHUNKS_MAX)
		return -EINVAL;
	ret = tplan_schedule_new(&s);
	if (ret)
		return ret;
	seen = calloc(ntiles, 1);
	regions = calloc(tiles_per_chunk < ntiles ? tiles_per_chunk : ntiles, sizeof(*regions));
	if (!seen || !regions) {
		ret = -ENOMEM;
		goto out;
	}

	n = 0;
	for (step = 0; step < ntiles; step++) {
		uint64_t tr, tc, r0, c0, h, w;

		/* the producer's own mapping: each tile exactly once */
		tile = order ? order((uint32_t)step, order_arg) : step;
		if (tile >= ntiles || seen[tile]) {
			ret = -EINVAL;
			goto out;
		}
		seen[tile] = 1;
		tr = tile / tiles_n;
		tc = tile % tiles_n;
		r0 = tr * tile_rows;
		c0 = tc * tile_cols;
		h = mine->rows - r0 < tile_rows ? mine->rows - r0 : tile_rows;	/* edge tiles */
		w = mine->cols - c0 < tile_cols ? mine->cols - c0 : tile_cols;
		regions[n] = (struct tplan_region) {
			.offset = mine->offset + r0 * pitch + c0 * e,
			.width = w * e,
			.pitch = pitch,
			.rows = (uint32_t)h,
		};
		if (h == 1)
			regions[n].pitch = regions[n].width;
		n++;
		if (n == tiles_per_chunk || step + 1 == ntiles) {
			ret = tplan_schedule_add_chunk(s, regions, n, n);
			if (ret < 0)
				goto out;
			n = 0;
		}
	}
	ret = 0;
out:
	free(seen);
	free(regions);
	return builder_done(s, ret, out);
}
