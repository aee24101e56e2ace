// SPDX-License-Identifier: MIT
/*
 * all_gather: the in-place all-gather as a triggered plan, with a tiled
 * producer on CPU threads standing in for a persistent GPU kernel.
 *
 *   all_gather [-n ranks] [-r rounds] [-m rows] [-k cols] [-p programs]
 *              [-b tile_rows] [-B tile_cols] [-g group_m] [-a depth]
 *
 * Each rank is a process.  out holds ranks x rows x cols 32-bit values in
 * the symmetric heap; rank r writes rows [r * rows, (r + 1) * rows), tile
 * by tile: program p of the producer takes steps p, p + programs, ... and
 * marks chunk step / programs ready after each tile, so with
 * tiles_per_chunk = programs the chunks complete in order.  The schedule is
 * built from the producer's own step-to-tile function (tile_of(), the
 * grouped order of GEMM kernels, from gemm_tiles.h), so the two cannot
 * disagree on which tiles a chunk holds.  Every round, every rank checks
 * every rank's rows; any mismatch makes the exit status 1.
 *
 * With -a depth the plan is armed depth rounds ahead and the host stays
 * out of the steady state: after the producer, a consumer team (one more
 * thread, as a consumer kernel launched on the producer's stream would
 * be) waits for every chunk with the device header's tplan_wait(),
 * checks every rank's rows and releases the round itself
 * (tplan_release()); the host re-arms without releasing.  Start, the
 * host's wait (which finds the round complete) and most re-arms run in
 * user space; the rounds' reports are gathered once at the end, and each
 * rank prints the ioctls its host made per round.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gemm_tiles.h"
#include "libtplan.h"
#include "tplan_device.h"

#define WAIT_TIMEOUT_MS 30000

struct config {
	unsigned int ranks, rounds, rows, cols, programs, tile_rows, tile_cols, group_m;
	unsigned int ahead;	/* rounds armed ahead; 0: one round at a time */
};

/* What rank `rank` writes at (row, col) of its rows in round `round`. */
static uint32_t value_at(uint32_t rank, uint32_t round, uint32_t row, uint32_t col)
{
	uint32_t x = rank * 0x9e3779b1U ^ round * 0x85ebca77U ^ row * 0xc2b2ae3dU ^ col * 0x27d4eb2fU;

	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	return x ^ (x >> 16);
}

struct rank_state {
	const struct config *cfg;
	struct tplan_ctx *ctx;
	unsigned int rank;
	uint32_t *out;		/* this process's mapping of out in its own heap */
	struct gemm_tiling tiling;	/* of this rank's rows */
	uint32_t ntiles;
};

struct program {
	pthread_t thread;
	const struct rank_state *rs;
	const struct tplan_handle *handle;
	uint32_t id;
	int err;
};

/* One "program" of the persistent producer kernel. */
static void *program_main(void *arg)
{
	struct program *prog = arg;
	const struct rank_state *rs = prog->rs;
	const struct config *cfg = rs->cfg;
	struct tplan_cta cta = { NULL, NULL, 0 };	/* a CTA of one thread */
	uint32_t step, r, c;
	struct tplan_view v;

	tplan_view_init(&v, prog->handle);
	for (step = prog->id; step < rs->ntiles; step += cfg->programs) {
		uint32_t tile = tile_of(step, &rs->tiling);
		uint32_t r0 = tile / rs->tiling.tiles_n * cfg->tile_rows;
		uint32_t c0 = tile % rs->tiling.tiles_n * cfg->tile_cols;
		uint32_t r1 = r0 + cfg->tile_rows < cfg->rows ? r0 + cfg->tile_rows : cfg->rows;
		uint32_t c1 = c0 + cfg->tile_cols < cfg->cols ? c0 + cfg->tile_cols : cfg->cols;

		for (r = r0; r < r1; r++) {
			uint32_t *row = rs->out + ((uint64_t)rs->rank * cfg->rows + r) * cfg->cols;

			for (c = c0; c < c1; c++)
				row[c] = value_at(rs->rank, v.round, r, c);
		}
		prog->err = tplan_mark_ready(&v, &cta, step / cfg->programs);
		if (prog->err)
			break;
	}
	return NULL;
}

/* Every rank's rows hold that rank's values of this round; mismatches. */
static uint64_t verify(const struct rank_state *rs, uint32_t round)
{
	const struct config *cfg = rs->cfg;
	uint64_t bad = 0;
	uint32_t src, r, c;

	for (src = 0; src < cfg->ranks; src++)
		for (r = 0; r < cfg->rows; r++) {
			const uint32_t *row = rs->out + ((uint64_t)src * cfg->rows + r) * cfg->cols;

			for (c = 0; c < cfg->cols; c++) {
				uint32_t want = value_at(src, round, r, c);

				if (row[c] == want)
					continue;
				if (!bad)
					fprintf(stderr,
						"rank %u round %u: rank %u's row %u col %u is %#x, want %#x\n",
						rs->rank, round, src, r, c, row[c], want);
				bad++;
			}
		}
	return bad;
}

/* The device view agrees with the plan's wait: every chunk has arrived. */
static uint64_t not_arrived(const struct tplan_handle *h)
{
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;
	uint64_t missing = 0;
	uint32_t src, c;

	tplan_view_init(&v, h);
	for (src = 0; src < h->world_size; src++)
		for (c = 0; c < h->chunk_base[src + 1] - h->chunk_base[src]; c++)
			missing += tplan_arrived(&v, &cta, src, c) != 1;
	return missing;
}

/* The consumer team of the armed-ahead mode: wait, check, release. */
struct consumer {
	pthread_t thread;
	const struct rank_state *rs;
	const struct tplan_handle *handle;
	uint64_t mismatches, not_arrived;
	int err;
};

static void *consumer_main(void *arg)
{
	struct consumer *cons = arg;
	const struct tplan_handle *h = cons->handle;
	struct tplan_cta cta = { NULL, NULL, 0 };
	struct tplan_view v;
	uint32_t src, c;

	tplan_view_init(&v, h);
	for (src = 0; src < h->world_size; src++)
		for (c = 0; c < h->chunk_base[src + 1] - h->chunk_base[src]; c++)
			if (tplan_wait(&v, &cta, src, c, (uint64_t)WAIT_TIMEOUT_MS * 1000))
				cons->not_arrived++;
	cons->mismatches = verify(cons->rs, h->round);
	/* Done reading the round: peers' next copies may land (contract 6). */
	cons->err = tplan_release(&v, &cta);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* What each rank reports to rank 0 after every round. */
struct round_report {
	uint64_t mismatches;
	uint64_t not_arrived;
	double seconds;
};

#define FAIL(rs, what, ret)                                                                    \
	do {                                                                                   \
		fprintf(stderr, "rank %u: %s: %s (%s)\n", (rs)->rank, what, strerror(-(ret)),  \
			tplan_ctx_error((rs)->ctx));                                           \
		goto out;                                                                      \
	} while (0)

/* What each rank reports to rank 0 at the end of the armed-ahead mode. */
struct ahead_report {
	uint64_t mismatches, not_arrived, ioctls;
	double median_s;
};

/*
 * The rounds armed cfg->ahead ahead: start, the producer's programs, the
 * consumer team (wait, check, release), the host's wait and a re-arm
 * without release.  Closes the plan; 0 when every rank verified every
 * round.
 */
static int run_ahead(struct rank_state *rs, struct tplan_plan **planp)
{
	const struct config *cfg = rs->cfg;
	struct tplan_plan *plan = *planp;
	struct ahead_report mine = { 0 }, *all = calloc(cfg->ranks, sizeof(*all));
	struct program *progs = calloc(cfg->programs, sizeof(*progs));
	double *times = calloc(cfg->rounds, sizeof(*times));
	struct tplan_handle handle;
	struct consumer cons;
	uint64_t io0, failures = 0;
	uint32_t round, p;
	int ret, status = 1;

	if (!progs || !times || !all) {
		fprintf(stderr, "rank %u: out of memory\n", rs->rank);
		goto out;
	}
	io0 = tplan_ctx_ioctls(rs->ctx);
	for (round = 1; round <= cfg->rounds; round++) {
		double t0 = now_s();

		ret = tplan_plan_start(plan, &handle);
		if (ret)
			FAIL(rs, "plan start", ret);
		for (p = 0; p < cfg->programs; p++) {
			progs[p] = (struct program) { .rs = rs, .handle = &handle, .id = p };
			ret = -pthread_create(&progs[p].thread, NULL, program_main, &progs[p]);
			if (ret)
				FAIL(rs, "pthread_create", ret);
		}
		for (p = 0; p < cfg->programs; p++) {
			pthread_join(progs[p].thread, NULL);
			if (progs[p].err)
				FAIL(rs, "mark_ready", progs[p].err);
		}
		/* The consumer "kernel", after the producer on its stream. */
		cons = (struct consumer) { .rs = rs, .handle = &handle };
		ret = -pthread_create(&cons.thread, NULL, consumer_main, &cons);
		if (ret)
			FAIL(rs, "pthread_create", ret);
		pthread_join(cons.thread, NULL);
		if (cons.err)
			FAIL(rs, "release", cons.err);
		mine.mismatches += cons.mismatches;
		mine.not_arrived += cons.not_arrived;
		/* Complete already: the counts are read in user space. */
		ret = tplan_plan_wait(plan, WAIT_TIMEOUT_MS);
		if (ret)
			FAIL(rs, "plan wait", ret);
		times[round - 1] = now_s() - t0;
		if (round < cfg->rounds) {
			ret = tplan_plan_next_round_unreleased(plan);
			if (ret)
				FAIL(rs, "next round", ret);
		}
	}
	mine.ioctls = tplan_ctx_ioctls(rs->ctx) - io0;
	qsort(times, cfg->rounds, sizeof(*times), cmp_double);
	mine.median_s = times[cfg->rounds / 2];
	ret = tplan_all_gather(rs->ctx, &mine, sizeof(mine), all, 0);
	if (ret)
		FAIL(rs, "all_gather of the reports", ret);
	if (rs->rank == 0) {
		for (p = 0; p < cfg->ranks; p++) {
			failures += all[p].mismatches + all[p].not_arrived;
			printf("rank %u: %u rounds armed %u ahead, %s, median round %.3f ms, host ioctls per round %.3f (%" PRIu64 " in all)\n",
			       p, cfg->rounds, cfg->ahead,
			       all[p].mismatches || all[p].not_arrived ? "VERIFICATION FAILED" :
									 "every round verified",
			       all[p].median_s * 1e3, (double)all[p].ioctls / cfg->rounds,
			       all[p].ioctls);
		}
		printf("all_gather: %s: %u ranks, %u rounds armed %u ahead, released by the consumer team\n",
		       failures ? "FAILED" : "ok", cfg->ranks, cfg->rounds, cfg->ahead);
		fflush(stdout);
	} else {
		for (p = 0; p < cfg->ranks; p++)
			failures += all[p].mismatches + all[p].not_arrived;
	}
	ret = tplan_plan_close(plan, NULL);
	*planp = NULL;
	if (ret)
		FAIL(rs, "plan close", ret);
	status = failures ? 1 : 0;
out:
	free(progs);
	free(times);
	free(all);
	return status;
}

static int run_rank(const struct config *cfg, uint64_t key, unsigned int rank)
{
	const uint64_t out_bytes = (uint64_t)cfg->ranks * cfg->rows * cfg->cols * sizeof(uint32_t);
	const uint64_t received = out_bytes / cfg->ranks * (cfg->ranks - 1);
	struct tplan_join_params join = {
		.key = key,
		.world_size = cfg->ranks,
		.rank = rank,
		/* out, and room for the kernel's gate area (1/16 of the heap) */
		.heap_size = (out_bytes + out_bytes / 8 + 65536 + 4095) & ~4095ULL,
		.timeout_ms = 20000,
	};
	struct rank_state rs = { .cfg = cfg, .rank = rank };
	struct round_report mine, *all = NULL;
	struct tplan_schedule *schedule = NULL;
	struct program *progs = NULL;
	struct tplan_plan *plan = NULL;
	struct tplan_tensor out, part;
	struct tplan_handle handle;
	double *times = NULL, total = 0;
	uint64_t off, failures = 0;
	uint32_t round, p;
	int ret, status = 1;

	ret = tplan_ctx_open(&rs.ctx, NULL);
	if (ret) {
		fprintf(stderr, "rank %u: cannot open %s: %s\n", rank, TPLAN_DEVICE_PATH,
			strerror(-ret));
		return 1;
	}
	ret = tplan_ctx_join(rs.ctx, &join);
	if (ret)
		FAIL(&rs, "join", ret);
	ret = tplan_heap_alloc(rs.ctx, out_bytes, 0, &off);
	if (ret)
		FAIL(&rs, "heap alloc", ret);
	rs.out = (uint32_t *)((char *)tplan_heap_ptr(rs.ctx, rank) + off);

	out = (struct tplan_tensor) {
		.offset = off, .rows = cfg->ranks * cfg->rows, .cols = cfg->cols,
		.elem_size = sizeof(uint32_t),
	};
	part = out;
	part.offset = off + (uint64_t)rank * cfg->rows * cfg->cols * sizeof(uint32_t);
	part.rows = cfg->rows;
	rs.tiling = (struct gemm_tiling) {
		.tiles_m = (cfg->rows + cfg->tile_rows - 1) / cfg->tile_rows,
		.tiles_n = (cfg->cols + cfg->tile_cols - 1) / cfg->tile_cols,
		.group_m = cfg->group_m,
	};
	rs.ntiles = rs.tiling.tiles_m * rs.tiling.tiles_n;
	ret = tplan_schedule_tile_chunks(&part, cfg->tile_rows, cfg->tile_cols, cfg->programs,
					 gemm_tile_order, &rs.tiling, &out, &schedule);
	if (ret)
		FAIL(&rs, "tile_chunks schedule", ret);
	if (cfg->ahead) {
		ret = tplan_ctx_set_rounds_ahead(rs.ctx, cfg->ahead);
		if (ret)
			FAIL(&rs, "rounds ahead", ret);
	}
	ret = tplan_prepare_all_gather(rs.ctx, &out, schedule, &plan);
	if (ret)
		FAIL(&rs, "prepare_all_gather", ret);
	if (cfg->ahead) {
		status = run_ahead(&rs, &plan);
		goto out;
	}

	progs = calloc(cfg->programs, sizeof(*progs));
	times = calloc(cfg->rounds, sizeof(*times));
	all = calloc(cfg->ranks, sizeof(*all));
	if (!progs || !times || !all) {
		fprintf(stderr, "rank %u: out of memory\n", rank);
		goto out;
	}
	if (rank == 0) {
		printf("all_gather: %u ranks, each %u x %u u32 (%.1f KiB) in %u x %u tiles, %u programs: %u chunks of %u tiles per rank\n",
		       cfg->ranks, cfg->rows, cfg->cols, out_bytes / cfg->ranks / 1024.0,
		       cfg->tile_rows, cfg->tile_cols, cfg->programs, tplan_schedule_nchunks(schedule),
		       cfg->programs);
		fflush(stdout);
	}

	for (round = 1; round <= cfg->rounds; round++) {
		uint64_t bad_ranks = 0, arrived_bad = 0;
		double t0 = now_s();

		ret = tplan_plan_start(plan, &handle);
		if (ret)
			FAIL(&rs, "plan start", ret);
		/* "Launch the kernel": its programs run while the host waits. */
		for (p = 0; p < cfg->programs; p++) {
			progs[p] = (struct program) { .rs = &rs, .handle = &handle, .id = p };
			ret = -pthread_create(&progs[p].thread, NULL, program_main, &progs[p]);
			if (ret)
				FAIL(&rs, "pthread_create", ret);
		}
		ret = tplan_plan_wait(plan, WAIT_TIMEOUT_MS);
		times[round - 1] = now_s() - t0;
		for (p = 0; p < cfg->programs; p++) {
			pthread_join(progs[p].thread, NULL);
			if (progs[p].err)
				FAIL(&rs, "mark_ready", progs[p].err);
		}
		if (ret)
			FAIL(&rs, "plan wait", ret);

		mine = (struct round_report) {
			.mismatches = verify(&rs, handle.round),
			.not_arrived = not_arrived(&handle),
			.seconds = times[round - 1],
		};
		ret = tplan_all_gather(rs.ctx, &mine, sizeof(mine), all, 0);
		if (ret)
			FAIL(&rs, "all_gather of the reports", ret);
		for (p = 0; p < cfg->ranks; p++) {
			bad_ranks += all[p].mismatches != 0;
			arrived_bad += all[p].not_arrived;
		}
		failures += bad_ranks + arrived_bad;
		total += times[round - 1];
		if (rank == 0) {
			printf("round %3u: %8.3f ms, %7.1f MiB/s received per rank, %s\n", handle.round,
			       times[round - 1] * 1e3, received / times[round - 1] / (1 << 20),
			       bad_ranks || arrived_bad ? "VERIFICATION FAILED" : "verified on every rank");
			fflush(stdout);
		}
		/* Done reading this round (contract 6). */
		if (round < cfg->rounds) {
			ret = tplan_plan_next_round(plan);
			if (ret)
				FAIL(&rs, "next round", ret);
		}
	}

	ret = tplan_plan_close(plan, NULL);
	plan = NULL;
	if (ret)
		FAIL(&rs, "plan close", ret);
	if (rank == 0) {
		qsort(times, cfg->rounds, sizeof(*times), cmp_double);
		printf("all_gather: %s: %u ranks, %u rounds, %.1f KiB received per rank per round; median %.3f ms (%.1f MiB/s), best %.3f ms (%.1f MiB/s), mean %.1f MiB/s\n",
		       failures ? "FAILED" : "ok", cfg->ranks, cfg->rounds, received / 1024.0,
		       times[cfg->rounds / 2] * 1e3, received / times[cfg->rounds / 2] / (1 << 20),
		       times[0] * 1e3, received / times[0] / (1 << 20),
		       received * (double)cfg->rounds / total / (1 << 20));
		fflush(stdout);
	}
	status = failures ? 1 : 0;
out:
	if (plan)
		tplan_plan_close(plan, NULL);
	tplan_schedule_free(schedule);
	free(progs);
	free(times);
	free(all);
	tplan_ctx_close(rs.ctx);
	return status;
}

static unsigned int parse_uint(const char *s, unsigned int lo, unsigned int hi, char opt)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "all_gather: -%c wants %u..%u, not \"%s\"\n", opt, lo, hi, s);
		exit(2);
	}
	return (unsigned int)v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: all_gather [-n ranks] [-r rounds] [-m rows] [-k cols] [-p programs]\n"
		"                  [-b tile_rows] [-B tile_cols] [-g group_m] [-a depth]\n"
		"defaults: 4 ranks, 50 rounds, 256 x 256 per rank, 4 programs, 32 x 64 tiles, group_m 2;\n"
		"-a: rounds armed depth ahead, released by a consumer team, host mostly in user space\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct config cfg = {
		.ranks = 4, .rounds = 50, .rows = 256, .cols = 256, .programs = 4,
		.tile_rows = 32, .tile_cols = 64, .group_m = 2,
	};
	unsigned int r, failed = 0;
	pid_t pids[TPLAN_HANDLE_MAX_RANKS];
	uint64_t key;
	int opt;

	while ((opt = getopt(argc, argv, "n:r:m:k:p:b:B:g:a:h")) != -1) {
		switch (opt) {
		case 'n': cfg.ranks = parse_uint(optarg, 1, TPLAN_HANDLE_MAX_RANKS, opt); break;
		case 'r': cfg.rounds = parse_uint(optarg, 1, UINT32_MAX - 1, opt); break;
		case 'm': cfg.rows = parse_uint(optarg, 1, 1U << 16, opt); break;
		case 'k': cfg.cols = parse_uint(optarg, 1, 1U << 14, opt); break;
		case 'p': cfg.programs = parse_uint(optarg, 1, 1024, opt); break;
		case 'b': cfg.tile_rows = parse_uint(optarg, 1, 1U << 14, opt); break;
		case 'B': cfg.tile_cols = parse_uint(optarg, 1, 1U << 14, opt); break;
		case 'g': cfg.group_m = parse_uint(optarg, 1, 1U << 14, opt); break;
		case 'a': cfg.ahead = parse_uint(optarg, 1, TPLAN_PLAN_DEPTH_MAX, opt); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();

	key = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	fflush(stdout);
	for (r = 0; r < cfg.ranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("all_gather: fork");
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
			fprintf(stderr, "all_gather: rank %u failed (%s %d)\n", r,
				WIFSIGNALED(st) ? "signal" : "exit status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed++;
		}
	}
	return failed ? 1 : 0;
}
