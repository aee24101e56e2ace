// SPDX-License-Identifier: MIT
/*
 * hip_gemm_all_gather: a persistent, tiled GEMM on AMD GPUs whose output
 * rows are all-gathered through a triggered plan while the kernel runs.
 *
 *   hip_gemm_all_gather [-n ranks] [-r rounds] [-m rows] [-N cols] [-k depth]
 *                       [-p programs] [-g group_m]
 *
 * Each rank is a process driving one GPU (HIP device `rank`).  out holds
 * ranks x rows x cols fp32 values in the symmetric heap; rank r computes
 * its rows, C_r = A_r x B + round, where A_r (rows x depth) is its own and
 * B (depth x cols) is the same on every rank.  The kernel is persistent:
 * program p takes steps p, p + programs, ...; tile_of(step)
 * (gemm_tiles.h, __host__ __device__) says which tile it computes, and
 * after the tile's stores the whole workgroup marks chunk step / programs
 * ready.  The schedule comes from tplan_schedule_tile_chunks() with that
 * same tile_of (through gemm_tile_order()) and tiles_per_chunk = programs,
 * so chunk j holds exactly the tiles of every program's j-th step and the
 * kernel and the schedule cannot disagree.  The copy engines send each
 * chunk to every peer as soon as its tiles are marked.
 *
 * After every round a second kernel waits (tplan_wait, the consumer side
 * of the device header) for every rank's chunks and checks every rank's
 * rows against values computed from the inputs' formulas: the inputs are
 * small integers, so every sum is exact in fp32, and "+ round" makes a
 * stale tile from the previous round fail.  Any mismatch makes the exit
 * status 1.  A one-workgroup kernel launched after it on the same stream
 * releases the round (tplan_release), so the host re-arms the plan with
 * tplan_plan_next_round_unreleased() as soon as it has launched the two,
 * without waiting for the check: peers' next-round copies into this rank
 * wait on their engines until the release.
 *
 * What a run needs; without it the program says what it found and exits
 * with status 4 (skip) before anything touches a GPU:
 *  - an MI200 (gfx90a) or MI300 (gfx94x) node, one GPU per rank;
 *  - tplan.ko with the KFD engine: TPLAN_ENGINE_KFD in tplan_info.engines
 *    (tplan_query_info()), /dev/tplan present.
 * The KFD engine is not written yet.  This program assumes what it is to
 * provide: each rank's heap in its GPU's memory, mapped into every rank's
 * GPU address space, tplan_heap_devaddr() giving each heap's GPU address
 * in this rank's own address space (another rank's differs: addresses are
 * never exchanged), and tplan_plan_start() filling handle.gates with the
 * GPU address of this rank's gate table.  So the kernels take their pointers from those two
 * only (out is tplan_heap_devaddr(ctx, rank) + its offset; the gate table
 * is handle.gates, passed on untouched in the handle), the host never
 * reads out through tplan_heap_ptr(), and verification runs on the GPU.
 * The GPU that backs rank r's heap is HIP device r here; how the engine is
 * told so belongs to that engine's interface.
 *
 * Build: make hip-examples (hipcc, code objects for gfx90a and gfx940;
 * Debian's clang-19 for gfx942 as hip_gemm_all_gather-gfx942, see README.md).
 * Exit status: 0 verified, 1 a failure, 2 usage, 4 skipped.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hip/hip_runtime.h>

#include "libtplan.h"
#include "tplan_device.h"
#include "gemm_tiles.h"

#define EXIT_SKIP 4
#define WAIT_TIMEOUT_MS 30000
#define THREADS 256		/* 16 x 16 threads, 2 x 2 outputs each */
#define TILE_K 16
#define VERIFY_POLLS (1ULL << 24)
#define MAX_DEPTH 4096		/* |sums| stay below 2^24: exact in fp32 */

static_assert(GEMM_TILE_M == 32 && GEMM_TILE_N == 32, "the kernel computes 32 x 32 tiles");

struct config {
	unsigned int ranks, rounds, rows, cols, depth, programs, group_m;
};

/* The inputs: small integers, so sums are exact and the check is exact. */
static __host__ __device__ inline int a_value(uint32_t rank, uint32_t i, uint32_t k)
{
	return (int)((i * 7 + k * 3 + rank * 5) % 5) - 2;
}

static __host__ __device__ inline int b_value(uint32_t k, uint32_t j)
{
	return (int)((k * 5 + j * 3) % 7) - 3;
}

/*
 * The producer: a persistent GEMM, C = A x B + bias, C with ldc elements
 * from row to row.  Program p (a workgroup) takes steps p, p + programs,
 * ...; every thread of the workgroup runs the same steps, so the marks are
 * made by the whole workgroup, outside the bounds checks (contract 2).
 */
extern "C" __global__ __launch_bounds__(THREADS) void
gemm_producer(const float *a, const float *b, float *c, uint64_t ldc, uint32_t m, uint32_t n,
	      uint32_t k, struct gemm_tiling t, float bias, struct tplan_handle h, int *mark_err)
{
	__shared__ float as[TILE_K][GEMM_TILE_M + 1];
	__shared__ float bs[TILE_K][GEMM_TILE_N];
	const uint32_t tx = threadIdx.x % 16, ty = threadIdx.x / 16;
	const uint32_t ntiles = t.tiles_m * t.tiles_n;
	struct tplan_view v;

	tplan_view_init(&v, &h);
	for (uint32_t step = blockIdx.x; step < ntiles; step += gridDim.x) {
		const uint32_t tile = tile_of(step, &t);
		const uint32_t r0 = tile / t.tiles_n * GEMM_TILE_M;
		const uint32_t c0 = tile % t.tiles_n * GEMM_TILE_N;
		float acc[2][2] = { { 0.0f, 0.0f }, { 0.0f, 0.0f } };
		int ret;

		for (uint32_t k0 = 0; k0 < k; k0 += TILE_K) {
			for (uint32_t i = threadIdx.x; i < GEMM_TILE_M * TILE_K; i += THREADS) {
				uint32_t r = i / TILE_K, kk = i % TILE_K;

				as[kk][r] = r0 + r < m && k0 + kk < k ?
					a[(uint64_t)(r0 + r) * k + k0 + kk] : 0.0f;
			}
			for (uint32_t i = threadIdx.x; i < TILE_K * GEMM_TILE_N; i += THREADS) {
				uint32_t kk = i / GEMM_TILE_N, col = i % GEMM_TILE_N;

				bs[kk][col] = k0 + kk < k && c0 + col < n ?
					b[(uint64_t)(k0 + kk) * n + c0 + col] : 0.0f;
			}
			__syncthreads();
			for (uint32_t kk = 0; kk < TILE_K; kk++)
				for (int i = 0; i < 2; i++)
					for (int j = 0; j < 2; j++)
						acc[i][j] += as[kk][ty + 16 * i] * bs[kk][tx + 16 * j];
			__syncthreads();
		}
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				uint32_t row = r0 + ty + 16 * i, col = c0 + tx + 16 * j;

				if (row < m && col < n)
					c[row * ldc + col] = acc[i][j] + bias;
			}
		/* After the tile's stores, by the whole workgroup: chunk step / programs. */
		ret = tplan_mark_ready(&v, nullptr, step / gridDim.x);
		if (ret && threadIdx.x == 0)
			*mark_err = ret;
	}
}

/*
 * The consumer: every workgroup waits for every rank's chunks (uniformly,
 * a bounded number of polls), then the grid checks every element of out.
 * counts[0]: mismatches, counts[1]: chunks that did not arrive.
 */
extern "C" __global__ __launch_bounds__(THREADS) void
verify_rows(const float *out, uint32_t ranks, uint32_t m, uint32_t n, uint32_t k, float bias,
	    struct tplan_handle h, unsigned long long *counts)
{
	const uint64_t per_rank = (uint64_t)m * n, total = per_rank * ranks;
	struct tplan_view v;

	tplan_view_init(&v, &h);
	for (uint32_t src = 0; src < ranks; src++)
		for (uint32_t chunk = 0; chunk < h.chunk_base[src + 1] - h.chunk_base[src]; chunk++)
			if (tplan_wait(&v, nullptr, src, chunk, VERIFY_POLLS) && threadIdx.x == 0)
				atomicAdd(&counts[1], 1ULL);

	for (uint64_t idx = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
	     idx += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t src = (uint32_t)(idx / per_rank);
		uint32_t i = (uint32_t)(idx % per_rank / n), j = (uint32_t)(idx % n);
		int sum = 0;

		for (uint32_t kk = 0; kk < k; kk++)
			sum += a_value(src, i, kk) * b_value(kk, j);
		if (out[idx] != (float)sum + bias)
			atomicAdd(&counts[0], 1ULL);
	}
}

/*
 * Done reading the round: launched after verify_rows on its stream, so
 * every read of out is over when it runs (contract 6, from the device).
 */
extern "C" __global__ __launch_bounds__(64) void release_round(struct tplan_handle h)
{
	struct tplan_view v;

	tplan_view_init(&v, &h);
	tplan_release(&v, nullptr);
}

/* ---- Before anything touches a GPU: is this a node it can run on? ---- */

struct probe {
	int ok;			/* the requirement is met */
	int count;		/* GPUs (HIP devices) */
	uint32_t max_world;	/* tplan_info.max_world_size */
	char found[200];
};

/* /dev/tplan, and its engines. */
static void probe_tplan(struct probe *p)
{
	struct tplan_info info;
	struct tplan_ctx *ctx;
	int ret;

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret) {
		snprintf(p->found, sizeof(p->found), "%s: %s%s", TPLAN_DEVICE_PATH, strerror(-ret),
			 ret == -ENOENT ? " (tplan.ko is not loaded)" : "");
		return;
	}
	ret = tplan_query_info(ctx, &info);
	if (ret) {
		snprintf(p->found, sizeof(p->found), "%s: %s", TPLAN_DEVICE_PATH,
			 tplan_ctx_error(ctx));
	} else {
		snprintf(p->found, sizeof(p->found), "%s: engines:%s%s%s", TPLAN_DEVICE_PATH,
			 info.engines & TPLAN_ENGINE_SOFT ? " soft" : "",
			 info.engines & TPLAN_ENGINE_KFD ? " kfd" : "",
			 info.engines & TPLAN_ENGINE_KFD ? "" : ", no KFD engine");
		p->ok = !!(info.engines & TPLAN_ENGINE_KFD);
		p->max_world = info.max_world_size;
	}
	tplan_ctx_close(ctx);
}

/*
 * hipGetDeviceCount() in a child process: HIP must not be initialized in
 * the process that forks the ranks afterwards, and a runtime that cannot
 * start takes only the child down.
 */
static void probe_gpus(struct probe *p)
{
	int fds[2], st;
	pid_t pid;

	snprintf(p->found, sizeof(p->found), "the HIP probe did not run");
	if (pipe(fds))
		return;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct probe r;
		hipDeviceProp_t prop;
		hipError_t err;

		memset(&r, 0, sizeof(r));
		close(fds[0]);
		err = hipGetDeviceCount(&r.count);
		if (err != hipSuccess) {
			r.count = 0;
			snprintf(r.found, sizeof(r.found), "no GPU (hipGetDeviceCount: %s%s)",
				 hipGetErrorName(err),
				 access("/dev/kfd", F_OK) ? "; no /dev/kfd" : "");
		} else if (hipGetDeviceProperties(&prop, 0) == hipSuccess) {
			snprintf(r.found, sizeof(r.found), "%d GPU%s, the first %s", r.count,
				 r.count == 1 ? "" : "s", prop.gcnArchName);
		} else {
			snprintf(r.found, sizeof(r.found), "%d GPU%s", r.count,
				 r.count == 1 ? "" : "s");
		}
		r.ok = r.count > 0;
		_exit(write(fds[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fds[1]);
	if (pid > 0) {
		struct probe r;

		if (read(fds[0], &r, sizeof(r)) == (ssize_t)sizeof(r))
			*p = r;
		if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
			snprintf(p->found, sizeof(p->found),
				 "the HIP runtime died probing for GPUs (signal %d)", WTERMSIG(st));
	}
	close(fds[0]);
}

/* ---- One rank ------------------------------------------------------------ */

#define HIP_TRY(rank, call)                                                                    \
	do {                                                                                   \
		hipError_t e_ = (call);                                                        \
		if (e_ != hipSuccess) {                                                        \
			fprintf(stderr, "rank %u: %s: %s\n", rank, #call, hipGetErrorString(e_)); \
			goto out;                                                              \
		}                                                                              \
	} while (0)

#define FAIL(rank, ctx, what, ret)                                                             \
	do {                                                                                   \
		fprintf(stderr, "rank %u: %s: %s (%s)\n", rank, what, strerror(-(ret)),        \
			tplan_ctx_error(ctx));                                                 \
		goto out;                                                                      \
	} while (0)

/* What each rank reports to rank 0 after every round. */
struct round_report {
	unsigned long long counts[2];	/* mismatches, chunks not arrived */
	int mark_err;
	int pad;
	double seconds;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run_rank(const struct config *cfg, uint64_t key, unsigned int rank)
{
	const uint64_t mine_elems = (uint64_t)cfg->rows * cfg->cols;
	const uint64_t out_bytes = mine_elems * cfg->ranks * sizeof(float);
	const uint64_t received = out_bytes / cfg->ranks * (cfg->ranks - 1);
	const struct gemm_tiling tiling = gemm_tiling_of(cfg->rows, cfg->cols, cfg->group_m);
	struct tplan_join_params join;
	struct tplan_schedule *schedule = NULL;
	struct tplan_plan *plan = NULL;
	struct tplan_ctx *ctx = NULL;
	struct tplan_tensor out, mine;
	struct tplan_handle handle;
	struct round_report report, *all = NULL;
	hipDeviceProp_t prop;
	float *a_host = NULL, *b_host = NULL, *a = NULL, *b = NULL, *out_dev;
	unsigned long long *counts = NULL;
	int *mark_err = NULL;
	uint64_t off, failures = 0;
	double total = 0;
	int ret, status = 1;

	HIP_TRY(rank, hipSetDevice((int)rank));
	HIP_TRY(rank, hipGetDeviceProperties(&prop, (int)rank));

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret) {
		fprintf(stderr, "rank %u: cannot open %s: %s\n", rank, TPLAN_DEVICE_PATH,
			strerror(-ret));
		goto out;
	}
	memset(&join, 0, sizeof(join));
	join.key = key;
	join.world_size = cfg->ranks;
	join.rank = rank;
	/* out, and room for the kernel's gate area (1/16 of the heap) */
	join.heap_size = (out_bytes + out_bytes / 8 + 65536 + 4095) & ~4095ULL;
	join.engine = TPLAN_ENGINE_KFD;
	/* MI300 (gfx94x) has SDMA 4.4.2, MI200 (gfx90a) SDMA 4.4.0. */
	join.sdma_ip = strncmp(prop.gcnArchName, "gfx94", 5) == 0 ? TPLAN_SDMA_442 : TPLAN_SDMA_440;
	ret = tplan_ctx_join(ctx, &join);
	if (ret)
		FAIL(rank, ctx, "join with the KFD engine", ret);
	ret = tplan_heap_alloc(ctx, out_bytes, 0, &off);
	if (ret)
		FAIL(rank, ctx, "heap alloc", ret);
	/* The heap's GPU address, from the KFD engine; never tplan_heap_ptr(). */
	out_dev = (float *)(uintptr_t)(tplan_heap_devaddr(ctx, rank) + off);

	memset(&out, 0, sizeof(out));
	out.offset = off;
	out.rows = cfg->ranks * cfg->rows;
	out.cols = cfg->cols;
	out.elem_size = sizeof(float);
	mine = out;
	mine.offset = off + (uint64_t)rank * mine_elems * sizeof(float);
	mine.rows = cfg->rows;
	/* The kernel's own mapping, through its tplan_tile_order_fn wrapper. */
	ret = tplan_schedule_tile_chunks(&mine, GEMM_TILE_M, GEMM_TILE_N, cfg->programs,
					 gemm_tile_order, (void *)&tiling, &out, &schedule);
	if (ret)
		FAIL(rank, ctx, "tile_chunks schedule", ret);
	ret = tplan_prepare_all_gather(ctx, &out, schedule, &plan);
	if (ret)
		FAIL(rank, ctx, "prepare_all_gather", ret);

	a_host = (float *)malloc((uint64_t)cfg->rows * cfg->depth * sizeof(float));
	b_host = (float *)malloc((uint64_t)cfg->depth * cfg->cols * sizeof(float));
	all = (struct round_report *)calloc(cfg->ranks, sizeof(*all));
	if (!a_host || !b_host || !all) {
		fprintf(stderr, "rank %u: out of memory\n", rank);
		goto out;
	}
	for (uint32_t i = 0; i < cfg->rows; i++)
		for (uint32_t kk = 0; kk < cfg->depth; kk++)
			a_host[(uint64_t)i * cfg->depth + kk] = (float)a_value(rank, i, kk);
	for (uint32_t kk = 0; kk < cfg->depth; kk++)
		for (uint32_t j = 0; j < cfg->cols; j++)
			b_host[(uint64_t)kk * cfg->cols + j] = (float)b_value(kk, j);
	HIP_TRY(rank, hipMalloc((void **)&a, (uint64_t)cfg->rows * cfg->depth * sizeof(float)));
	HIP_TRY(rank, hipMalloc((void **)&b, (uint64_t)cfg->depth * cfg->cols * sizeof(float)));
	HIP_TRY(rank, hipMalloc((void **)&counts, 2 * sizeof(*counts)));
	HIP_TRY(rank, hipMalloc((void **)&mark_err, sizeof(*mark_err)));
	HIP_TRY(rank, hipMemcpy(a, a_host, (uint64_t)cfg->rows * cfg->depth * sizeof(float),
				hipMemcpyHostToDevice));
	HIP_TRY(rank, hipMemcpy(b, b_host, (uint64_t)cfg->depth * cfg->cols * sizeof(float),
				hipMemcpyHostToDevice));
	if (rank == 0) {
		printf("hip_gemm_all_gather: %u ranks on %s, each C = A (%u x %u) x B (%u x %u) fp32 in %u x %u tiles (group_m %u), %u programs: %u chunks\n",
		       cfg->ranks, prop.gcnArchName, cfg->rows, cfg->depth, cfg->depth, cfg->cols,
		       GEMM_TILE_M, GEMM_TILE_N, cfg->group_m, cfg->programs,
		       tplan_schedule_nchunks(schedule));
		fflush(stdout);
	}

	for (uint32_t round = 1; round <= cfg->rounds; round++) {
		uint64_t bad = 0;
		double t0;

		HIP_TRY(rank, hipMemset(counts, 0, 2 * sizeof(*counts)));
		HIP_TRY(rank, hipMemset(mark_err, 0, sizeof(*mark_err)));
		HIP_TRY(rank, hipDeviceSynchronize());
		t0 = now_s();
		ret = tplan_plan_start(plan, &handle);
		if (ret)
			FAIL(rank, ctx, "plan start", ret);
		/* handle.gates is the GPU address of the gate table: passed on as is. */
		hipLaunchKernelGGL(gemm_producer, dim3(cfg->programs), dim3(THREADS), 0, 0, a, b,
				   out_dev + (uint64_t)rank * mine_elems, (uint64_t)cfg->cols,
				   cfg->rows, cfg->cols, cfg->depth, tiling, (float)handle.round,
				   handle, mark_err);
		HIP_TRY(rank, hipGetLastError());
		/* The copies run while the kernel computes; wait for every chunk everywhere. */
		ret = tplan_plan_wait(plan, WAIT_TIMEOUT_MS);
		report.seconds = now_s() - t0;
		HIP_TRY(rank, hipDeviceSynchronize());
		if (ret)
			FAIL(rank, ctx, "plan wait", ret);

		hipLaunchKernelGGL(verify_rows, dim3(prop.multiProcessorCount * 4), dim3(THREADS), 0,
				   0, out_dev, cfg->ranks, cfg->rows, cfg->cols, cfg->depth,
				   (float)handle.round, handle, counts);
		HIP_TRY(rank, hipGetLastError());
		/*
		 * The consumer releases the round once it has read it (contract
		 * 6): re-arm now, without waiting for it.  The last round is
		 * released by the close.
		 */
		if (round < cfg->rounds) {
			hipLaunchKernelGGL(release_round, dim3(1), dim3(64), 0, 0, handle);
			HIP_TRY(rank, hipGetLastError());
			ret = tplan_plan_next_round_unreleased(plan);
			if (ret)
				FAIL(rank, ctx, "next round", ret);
		}
		HIP_TRY(rank, hipMemcpy(report.counts, counts, sizeof(report.counts),
					hipMemcpyDeviceToHost));
		HIP_TRY(rank, hipMemcpy(&report.mark_err, mark_err, sizeof(report.mark_err),
					hipMemcpyDeviceToHost));
		report.pad = 0;
		ret = tplan_all_gather(ctx, &report, sizeof(report), all, 0);
		if (ret)
			FAIL(rank, ctx, "all_gather of the reports", ret);
		for (uint32_t r = 0; r < cfg->ranks; r++)
			bad += all[r].counts[0] || all[r].counts[1] || all[r].mark_err;
		failures += bad;
		total += report.seconds;
		if (rank == 0) {
			printf("round %3u: %8.3f ms, %8.1f MiB/s received per rank, %s\n", handle.round,
			       report.seconds * 1e3, received / report.seconds / (1 << 20),
			       bad ? "VERIFICATION FAILED" : "verified on every rank");
			fflush(stdout);
		}
		if (report.counts[0] || report.counts[1] || report.mark_err)
			fprintf(stderr, "rank %u round %u: %llu wrong values, %llu chunks not arrived, mark_ready %d\n",
				rank, handle.round, report.counts[0], report.counts[1],
				report.mark_err);
	}

	ret = tplan_plan_close(plan, NULL);
	plan = NULL;
	if (ret)
		FAIL(rank, ctx, "plan close", ret);
	if (rank == 0)
		printf("hip_gemm_all_gather: %s: %u ranks, %u rounds, mean %.1f MiB/s received per rank\n",
		       failures ? "FAILED" : "ok", cfg->ranks, cfg->rounds,
		       received * (double)cfg->rounds / total / (1 << 20));
	status = failures ? 1 : 0;
out:
	if (plan)
		tplan_plan_close(plan, NULL);
	tplan_schedule_free(schedule);
	/* Teardown: nothing to do about a failed free (hipFree is nodiscard). */
	(void)hipFree(a);
	(void)hipFree(b);
	(void)hipFree(counts);
	(void)hipFree(mark_err);
	free(a_host);
	free(b_host);
	free(all);
	tplan_ctx_close(ctx);
	return status;
}

/* ---- main ----------------------------------------------------------------- */

static unsigned int parse_uint(const char *s, unsigned int lo, unsigned int hi, char opt)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "hip_gemm_all_gather: -%c wants %u..%u, not \"%s\"\n", opt, lo, hi, s);
		exit(2);
	}
	return (unsigned int)v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hip_gemm_all_gather [-n ranks] [-r rounds] [-m rows] [-N cols] [-k depth]\n"
		"                           [-p programs] [-g group_m]\n"
		"defaults: one rank per GPU, 20 rounds, 1024 x 1024 per rank, depth 256, 64 programs, group_m 8\n"
		"needs an MI200/MI300 node and tplan.ko with the KFD engine; exits 4 without them\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct config cfg = { 0, 20, 1024, 1024, 256, 64, 8 };
	struct probe dev, gpus;
	pid_t pids[TPLAN_HANDLE_MAX_RANKS];
	unsigned int r, failed = 0;
	uint64_t key;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:m:N:k:p:g:h")) != -1) {
		switch (opt) {
		case 'n': cfg.ranks = parse_uint(optarg, 1, TPLAN_HANDLE_MAX_RANKS, opt); break;
		case 'r': cfg.rounds = parse_uint(optarg, 1, UINT32_MAX - 1, opt); break;
		case 'm': cfg.rows = parse_uint(optarg, 1, 1U << 16, opt); break;
		case 'N': cfg.cols = parse_uint(optarg, 1, 1U << 14, opt); break;
		case 'k': cfg.depth = parse_uint(optarg, 1, MAX_DEPTH, opt); break;
		case 'p': cfg.programs = parse_uint(optarg, 1, 65536, opt); break;
		case 'g': cfg.group_m = parse_uint(optarg, 1, 1U << 14, opt); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();

	/* Both probes, then one message with what was found: nothing touched a GPU yet. */
	memset(&dev, 0, sizeof(dev));
	memset(&gpus, 0, sizeof(gpus));
	probe_tplan(&dev);
	probe_gpus(&gpus);
	if (!dev.ok || !gpus.ok) {
		fprintf(stderr,
			"hip_gemm_all_gather: skipped: needs an MI200/MI300 node (gfx90a, gfx94x) with the KFD engine of tplan.ko (TPLAN_ENGINE_KFD)\n"
			"  found: %s\n"
			"  found: %s\n",
			dev.found, gpus.found);
		return EXIT_SKIP;
	}
	if (!cfg.ranks) {
		cfg.ranks = (unsigned int)gpus.count < TPLAN_HANDLE_MAX_RANKS ?
			(unsigned int)gpus.count : TPLAN_HANDLE_MAX_RANKS;
		if (cfg.ranks > dev.max_world)
			cfg.ranks = dev.max_world;
	}
	if (cfg.ranks > dev.max_world) {
		fprintf(stderr, "hip_gemm_all_gather: -n %u: tplan.ko takes at most %u ranks\n",
			cfg.ranks, dev.max_world);
		return 2;
	}
	if (cfg.ranks > (unsigned int)gpus.count) {
		fprintf(stderr, "hip_gemm_all_gather: skipped: %u ranks need %u GPUs, found %s\n",
			cfg.ranks, cfg.ranks, gpus.found);
		return EXIT_SKIP;
	}

	/* One process per rank, forked before any of them initializes HIP. */
	key = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	fflush(stdout);
	for (r = 0; r < cfg.ranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("hip_gemm_all_gather: fork");
			cfg.ranks = r;	/* reap the ones started; they fail to join */
			failed++;
			break;
		}
		if (pids[r] == 0)
			_exit(run_rank(&cfg, key, r));
	}
	for (r = 0; r < cfg.ranks; r++) {
		int st = 0;

		if (waitpid(pids[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "hip_gemm_all_gather: rank %u failed (%s %d)\n", r,
				WIFSIGNALED(st) ? "signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed++;
		}
	}
	return failed ? 1 : 0;
}
