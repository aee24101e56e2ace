/* SPDX-License-Identifier: MIT */
/*
 * gemm_tiles.h: the tiling of a GEMM producer, shared by
 * examples/hip_gemm_all_gather.hip (its GPU kernel and the schedule its
 * host code builds), the CPU producer of examples/all_gather.c, and the
 * tests that give the schedule builders a producer's order.
 *
 * tile_of() is the producer's step-to-tile mapping.  It is __host__
 * __device__ under HIP and plain C elsewhere, so the schedule given to
 * tplan_schedule_tile_chunks() is built from the very function the kernel
 * runs (through gemm_tile_order(), a tplan_tile_order_fn) and the two
 * cannot drift.  The HIP example's tile shape lives here for the same
 * reason.
 */
#ifndef GEMM_TILES_H
#define GEMM_TILES_H

#include <stdint.h>

#if defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define GEMM_TILES_FN static __host__ __device__ inline
#else
#define GEMM_TILES_FN static inline
#endif

/* Rows and columns of C a program computes per step (edge tiles clipped). */
#define GEMM_TILE_M 32
#define GEMM_TILE_N 32

/*
 * One rank's C, M x N, in GEMM_TILE_M x GEMM_TILE_N tiles: tiles_m x
 * tiles_n of them, visited group_m tile rows at a time (>= 1).
 */
struct gemm_tiling {
	uint32_t tiles_m;
	uint32_t tiles_n;
	uint32_t group_m;
};

GEMM_TILES_FN struct gemm_tiling gemm_tiling_of(uint32_t m, uint32_t n, uint32_t group_m)
{
	struct gemm_tiling t;

	t.tiles_m = (m + GEMM_TILE_M - 1) / GEMM_TILE_M;
	t.tiles_n = (n + GEMM_TILE_N - 1) / GEMM_TILE_N;
	t.group_m = group_m;
	return t;
}

/*
 * Step to tile (its row-major index), grouped as GEMM kernels order their
 * tiles (Triton's GROUP_M swizzle): group_m tile rows at a time, down the
 * group's rows and then across its columns, so programs that run at the
 * same time share rows of A and columns of B in cache.  The last group
 * may have fewer rows.  Plain integer arithmetic, for every step below
 * tiles_m * tiles_n.
 */
GEMM_TILES_FN uint32_t tile_of(uint32_t step, const struct gemm_tiling *t)
{
	uint32_t per_group = t->group_m * t->tiles_n;
	uint32_t first_m = step / per_group * t->group_m;
	uint32_t group_rows = t->tiles_m - first_m < t->group_m ? t->tiles_m - first_m : t->group_m;
	uint32_t in_group = step % per_group;

	return (first_m + in_group % group_rows) * t->tiles_n + in_group / group_rows;
}

/*
 * tile_of() as libtplan's tplan_tile_order_fn (arg: the struct
 * gemm_tiling): the host passes this to tplan_schedule_tile_chunks().
 */
static inline uint32_t gemm_tile_order(uint32_t step, void *arg)
{
	return tile_of(step, (const struct gemm_tiling *)arg);
}

#endif /* GEMM_TILES_H */
