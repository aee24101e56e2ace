// SPDX-License-Identifier: MIT
/*
 * The in-place all-gather: out holds every rank's rows, rank r's are
 * [r * R, (r + 1) * R); each rank sends its own rows to every peer, at the
 * same offsets.  A plan with the rank's rows as its own part.
 */
#include <errno.h>
#include <stdio.h>

#include "libtplan.h"
#include "libtplan_priv.h"

/*
 * Is every byte of region r inside the rows [first, first + rows) of a
 * tensor at offset, rows pitch apart, row_bytes long?  Not merely inside
 * their span: a byte in the padding between rows is no rank's.
 */
static int region_in_rows(const struct tplan_region *r, uint64_t offset, uint64_t row_bytes,
			  uint64_t pitch, uint64_t first, uint64_t rows)
{
	uint64_t lo = offset + first * pitch, hi = lo + (rows - 1) * pitch + row_bytes;
	uint64_t start, width = r->width, rel;
	uint32_t i, nrows = r->rows;

	for (i = 0; i < nrows; i++) {
		start = r->offset + (uint64_t)i * r->pitch;
		if (start < lo || start >= hi || width > hi - start)
			return 0;
		rel = (start - offset) % pitch;
		/* a range may run on across rows only where rows touch */
		if (pitch != row_bytes && rel + width > row_bytes)
			return 0;
	}
	return 1;
}

int tplan_prepare_all_gather(struct tplan_ctx *ctx, const struct tplan_tensor *out,
			     const struct tplan_schedule *schedule, struct tplan_plan **plan)
{
	return tplan_prepare_all_gather_programs(ctx, out, schedule, schedule ? 0 : 1, plan);
}

/*
 * The default schedule is the spec's whole(): one chunk "marked ready once
 * per program at the end", so its writers are the producer's programs;
 * one writer would make every mark after the first an extra mark
 * (EOVERFLOW at the first wait) for a producer of several programs.
 */
int tplan_prepare_all_gather_programs(struct tplan_ctx *ctx, const struct tplan_tensor *out,
				      const struct tplan_schedule *schedule, uint32_t programs,
				      struct tplan_plan **plan)
{
	struct tplan_schedule *whole = NULL;
	struct tplan_tensor mine;
	uint64_t row_bytes, pitch, rows_each, own_off, own_bytes, buf_bytes;
	uint32_t world, rank, c, i, nregions;
	const struct tplan_region *regions;
	int ret, refuse = 0;

	*plan = NULL;
	if (!ctx->joined)
		return tplan_set_error(ctx, -ENOTCONN, "all-gather: not joined");
	world = ctx->world_size;
	rank = ctx->rank;
	/* Shape errors are the same on every rank: no collective needed. */
	if (!out->rows || !out->cols || !out->elem_size || out->rows % world ||
	    (out->pitch && out->pitch < (uint64_t)out->cols * out->elem_size))
		return tplan_set_error(ctx, -EINVAL,
				       "all-gather: a %u x %u tensor (element %u bytes, pitch %llu) does not split into %u ranks' rows",
				       out->rows, out->cols, out->elem_size,
				       (unsigned long long)out->pitch, world);
	row_bytes = (uint64_t)out->cols * out->elem_size;
	pitch = out->pitch ? out->pitch : row_bytes;
	rows_each = out->rows / world;
	buf_bytes = (uint64_t)(out->rows - 1) * pitch + row_bytes;
	own_off = out->offset + rank * rows_each * pitch;
	own_bytes = (rows_each - 1) * pitch + row_bytes;

	/*
	 * A program count that does not fit the call is this rank's mistake
	 * and may be its alone: refuse through the collective, so no rank
	 * waits for it.
	 */
	if (schedule && programs)
		refuse = tplan_set_error(ctx, -EINVAL,
					 "all-gather: rank %u passed a schedule and %u programs: the schedule's chunks carry their writers (programs must be 0)",
					 rank, programs);
	else if (!schedule && !programs)
		refuse = tplan_set_error(ctx, -EINVAL,
					 "all-gather: rank %u: the default schedule needs the producer's programs (>= 1), got 0",
					 rank);
	if (!schedule && programs) {
		mine = *out;
		mine.offset = own_off;
		mine.rows = (uint32_t)rows_each;
		mine.pitch = pitch;
		ret = tplan_schedule_whole(&mine, programs, &whole);
		if (ret)
			return tplan_set_error(ctx, ret, "all-gather: the whole schedule: %d", ret);
		schedule = whole;
	}

	/* The schedule stays inside this rank's rows (the spec's check). */
	for (c = 0; schedule && c < tplan_schedule_nchunks(schedule) && !refuse; c++) {
		regions = tplan_schedule_chunk(schedule, c, &nregions, NULL);
		for (i = 0; i < nregions; i++) {
			if (region_in_rows(&regions[i], out->offset, row_bytes, pitch,
					   rank * rows_each, rows_each))
				continue;
			refuse = tplan_set_error(ctx, -EINVAL,
						 "all-gather: rank %u chunk %u region %u (offset %#llx, %u x %llu bytes) is outside rank %u's rows %llu..%llu",
						 rank, c, i, (unsigned long long)regions[i].offset,
						 regions[i].rows,
						 (unsigned long long)regions[i].width, rank,
						 (unsigned long long)(rank * rows_each),
						 (unsigned long long)((rank + 1) * rows_each - 1));
			break;
		}
	}

	ret = tplan_plan_create_or_refuse(ctx, out->offset, buf_bytes, own_off, own_bytes,
					  schedule, refuse, plan);
	tplan_schedule_free(whole);
	return ret;
}
