// SPDX-License-Identifier: MIT
/*
 * plan_bench: what a triggered plan costs the host per round, and what the
 * software engine moves, each next to memcpy on the same machine in the
 * same run.
 *
 *   1. Per-round host cost: next_round (re-arm) + start + wait, with an
 *      instant producer (every chunk marked right after start), for plans
 *      of 1..1024 regions (one 64-byte region per chunk, so one chain per
 *      region and peer) over 1, 3 and 7 peers.  Next to it: memcpy of the
 *      bytes of the chains a re-arm queues (this rank's, one round).
 *   2. All-gather bandwidth: 4 ranks, one chunk per rank, parts of 256 KiB
 *      .. 16 MiB: start + mark + wait on the software engine against one
 *      memcpy of every byte the round moves (world x (world - 1) parts).
 *
 * Each configuration is a group of forked ranks; rank 0 measures, every
 * rank runs the same rounds.  Usage: plan_bench [scale, default 1] (scales
 * the number of rounds).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "libtplan.h"
#include "tplan_device.h"
#include "tplan_sdma.h"

#define REGION_BYTES 64
#define COST_HEAP (16ULL << 20)
#define BW_WORLD 4

static const uint32_t peers_list[] = { 1, 3, 7 };
static const uint32_t regions_list[] = { 1, 4, 16, 64, 256, 1024 };
static const uint64_t bw_parts[] = { 256ULL << 10, 4ULL << 20, 16ULL << 20 };

#define NPEERS (sizeof(peers_list) / sizeof(peers_list[0]))
#define NREGIONS (sizeof(regions_list) / sizeof(regions_list[0]))
#define NPARTS (sizeof(bw_parts) / sizeof(bw_parts[0]))

struct cost {
	uint32_t rounds;
	uint64_t chain_bytes;	/* this rank's chains, one round */
	uint64_t next_ns, start_ns, wait_ns;
	double memcpy_ns;
};

struct bw {
	uint32_t rounds;
	uint64_t round_ns;
	double memcpy_ns;
};

struct shared {
	struct cost cost[NPEERS][NREGIONS];
	struct bw bw[NPARTS];
	volatile int failed;
	char why[256];
};

static struct shared *sh;
static double scale = 1.0;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int fail(struct tplan_ctx *ctx, const char *what, int err)
{
	if (!sh->failed) {
		sh->failed = 1;
		snprintf(sh->why, sizeof(sh->why), "%s: %s (%s)", what, strerror(-err),
			 ctx ? tplan_ctx_error(ctx) : "");
	}
	return 1;
}

#define CHECK(ctx, call)						\
	do {								\
		int _r = (call);					\
		if (_r)							\
			return fail((ctx), #call, _r);			\
	} while (0)

/* Nanoseconds one memcpy of bytes takes: the mean over 0.2 s of copies. */
static double memcpy_ns(uint64_t bytes)
{
	unsigned char *a = malloc(bytes), *b = malloc(bytes);
	uint64_t t0, reps = 0, target = 200000000ULL;	/* 0.2 s */
	volatile unsigned char sink;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, bytes);
	memset(b, 2, bytes);	/* both faulted in */
	t0 = now_ns();
	do {
		memcpy(b, a, bytes);
		a[reps % bytes]++;	/* keep the copies from being merged */
		reps++;
	} while (now_ns() - t0 < target || reps < 3);
	sink = b[bytes / 2];
	(void)sink;
	t0 = now_ns() - t0;
	free(a);
	free(b);
	return (double)t0 / (double)reps;
}

static int join(struct tplan_ctx **ctx, uint64_t key, uint32_t world, uint32_t rank,
		uint64_t heap)
{
	struct tplan_join_params p = {
		.key = key, .world_size = world, .rank = rank, .heap_size = heap,
		.timeout_ms = 120000,
	};
	int ret = tplan_ctx_open(ctx, NULL);

	if (ret)
		return ret;
	return tplan_ctx_join(*ctx, &p);
}

static void mark_all(const struct tplan_handle *h)
{
	struct tplan_cta cta = { 0 };
	struct tplan_view v;
	uint32_t c;

	tplan_view_init(&v, h);
	for (c = 0; c < h->nchunks; c++)
		tplan_mark_ready(&v, &cta, c);
}

/* ---- 1. per-round host cost --------------------------------------------------- */

static int cost_rank(uint64_t key, uint32_t pi, uint32_t rank)
{
	uint32_t world = peers_list[pi] + 1, ri, round, c;
	struct tplan_ctx *ctx;
	uint64_t buf;

	CHECK(NULL, join(&ctx, key, world, rank, COST_HEAP));
	CHECK(ctx, tplan_heap_alloc(ctx, (uint64_t)world * 1024 * REGION_BYTES, 4096, &buf));
	for (ri = 0; ri < NREGIONS; ri++) {
		uint32_t nreg = regions_list[ri];
		uint64_t part = (uint64_t)nreg * REGION_BYTES, own = buf + rank * part;
		uint32_t rounds = (uint32_t)(scale * (40000.0 / (nreg * world)));
		struct tplan_queue_info q0, q1;
		struct tplan_schedule *s;
		struct tplan_plan *plan;
		struct tplan_handle h;
		struct cost *cst = &sh->cost[pi][ri];
		uint64_t t0, t1, t2, t3;

		if (rounds < 5)
			rounds = 5;
		if (rounds > 400)
			rounds = 400;
		CHECK(ctx, tplan_schedule_new(&s));
		for (c = 0; c < nreg; c++) {
			struct tplan_region r = { .offset = own + (uint64_t)c * REGION_BYTES,
						  .width = REGION_BYTES, .pitch = REGION_BYTES,
						  .rows = 1 };

			if (tplan_schedule_add_chunk(s, &r, 1, 1) < 0)
				return fail(ctx, "add_chunk", -EINVAL);
		}
		CHECK(ctx, tplan_plan_create(ctx, buf, (uint64_t)world * part, own, part, s, &plan));
		/* Round 1 outside the timing: it was queued at create. */
		CHECK(ctx, tplan_plan_start(plan, &h));
		mark_all(&h);
		CHECK(ctx, tplan_plan_wait(plan, 120000));
		CHECK(ctx, tplan_queue_info(ctx, (rank + 1) % world, &q0));
		if (rank == 0)
			memset(cst, 0, sizeof(*cst));
		for (round = 0; round < rounds; round++) {
			t0 = now_ns();
			CHECK(ctx, tplan_plan_next_round(plan));
			t1 = now_ns();
			CHECK(ctx, tplan_plan_start(plan, &h));
			t2 = now_ns();
			mark_all(&h);
			CHECK(ctx, tplan_plan_wait(plan, 120000));
			t3 = now_ns();
			if (rank == 0) {
				cst->next_ns += t1 - t0;
				cst->start_ns += t2 - t1;
				cst->wait_ns += t3 - t2;
			}
		}
		if (rank == 0) {
			CHECK(ctx, tplan_queue_info(ctx, 1, &q1));
			cst->rounds = rounds;
			/* The ring bytes a re-arm writes to one peer, times the peers. */
			cst->chain_bytes = (q1.wptr - q0.wptr) / rounds * peers_list[pi];
		}
		CHECK(ctx, tplan_plan_close(plan, NULL));
		tplan_schedule_free(s);
	}
	tplan_ctx_close(ctx);
	return 0;
}

/* ---- 2. all-gather bandwidth ----------------------------------------------------- */

static int bw_rank(uint64_t key, uint32_t rank)
{
	struct tplan_ctx *ctx;
	uint32_t pi, round;

	CHECK(NULL, join(&ctx, key, BW_WORLD, rank,
			 BW_WORLD * bw_parts[NPARTS - 1] + (16ULL << 20)));
	for (pi = 0; pi < NPARTS; pi++) {
		uint64_t part = bw_parts[pi], buf, t0, total = 0;
		uint32_t rounds = (uint32_t)(scale * (pi == 0 ? 40 : pi == 1 ? 10 : 4));
		struct tplan_tensor out = { .rows = BW_WORLD, .cols = (uint32_t)part,
					    .elem_size = 1 };
		struct tplan_plan *plan;
		struct tplan_handle h;

		if (rounds < 2)
			rounds = 2;
		tplan_heap_reset(ctx);
		CHECK(ctx, tplan_heap_alloc(ctx, BW_WORLD * part, 4096, &buf));
		out.offset = buf;
		memset((char *)tplan_heap_ptr(ctx, rank) + buf + rank * part, (int)rank + 1, part);
		CHECK(ctx, tplan_prepare_all_gather(ctx, &out, NULL, &plan));
		for (round = 1; round <= rounds; round++) {
			if (round > 1)
				CHECK(ctx, tplan_plan_next_round(plan));
			t0 = now_ns();
			CHECK(ctx, tplan_plan_start(plan, &h));
			mark_all(&h);
			CHECK(ctx, tplan_plan_wait(plan, 300000));
			total += now_ns() - t0;
		}
		if (rank == 0) {
			unsigned char *heap = tplan_heap_ptr(ctx, 0);
			uint32_t r;

			for (r = 0; r < BW_WORLD; r++)
				if (heap[buf + r * part] != r + 1 || heap[buf + r * part + part - 1] != r + 1)
					return fail(ctx, "all-gather data", -EIO);
			sh->bw[pi].rounds = rounds;
			sh->bw[pi].round_ns = total / rounds;
		}
		CHECK(ctx, tplan_plan_close(plan, NULL));
	}
	tplan_ctx_close(ctx);
	return 0;
}

/* ---- driver ------------------------------------------------------------------------ */

static int run_ranks(uint32_t world, int (*fn)(uint64_t key, uint32_t arg, uint32_t rank),
		     uint32_t arg)
{
	uint64_t key = 0xbe7c000000000000ULL | ((uint64_t)getpid() << 16) | (now_ns() & 0xffff);
	pid_t pid[16];
	uint32_t r;
	int bad = 0, st;

	fflush(stdout);
	for (r = 0; r < world; r++) {
		pid[r] = fork();
		if (pid[r] == 0)
			_exit(fn(key, arg, r));
	}
	for (r = 0; r < world; r++) {
		if (pid[r] < 0 || waitpid(pid[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	return bad || sh->failed;
}

static int cost_fn(uint64_t key, uint32_t pi, uint32_t rank)
{
	return cost_rank(key, pi, rank);
}

static int bw_fn(uint64_t key, uint32_t unused, uint32_t rank)
{
	(void)unused;
	return bw_rank(key, rank);
}

int main(int argc, char **argv)
{
	uint32_t pi, ri;

	if (argc > 1)
		scale = atof(argv[1]);
	if (scale <= 0)
		scale = 1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));

	printf("# plan_bench: per-round host cost (next_round + start + wait, instant producer),\n"
	       "# one 64-byte region per chunk; memcpy = this rank's chain bytes of one round\n");
	printf("%5s %7s %7s %11s %10s %10s %10s %10s %11s %9s\n", "peers", "regions", "chains",
	       "chain_bytes", "round_us", "rearm_us", "start_us", "wait_us", "memcpy_us",
	       "ratio");
	for (pi = 0; pi < NPEERS; pi++) {
		if (run_ranks(peers_list[pi] + 1, cost_fn, pi)) {
			printf("FAILED: %s\n", sh->why);
			return 1;
		}
		for (ri = 0; ri < NREGIONS; ri++) {
			struct cost *c = &sh->cost[pi][ri];
			double round = (double)(c->next_ns + c->start_ns + c->wait_ns) / c->rounds;

			c->memcpy_ns = memcpy_ns(c->chain_bytes);
			printf("%5u %7u %7u %11" PRIu64 " %10.1f %10.1f %10.1f %10.1f %11.3f %9.0f\n",
			       peers_list[pi], regions_list[ri], regions_list[ri] * peers_list[pi],
			       c->chain_bytes, round / 1e3, (double)c->next_ns / c->rounds / 1e3,
			       (double)c->start_ns / c->rounds / 1e3,
			       (double)c->wait_ns / c->rounds / 1e3, c->memcpy_ns / 1e3,
			       c->memcpy_ns > 0 ? round / c->memcpy_ns : 0);
		}
	}

	printf("# all-gather bandwidth, %u ranks, one chunk per rank: start + mark + wait\n"
	       "# against one memcpy of every byte the round moves (world x (world-1) parts)\n",
	       BW_WORLD);
	printf("%10s %12s %10s %10s %10s %10s %12s\n", "part", "round_bytes", "round_us",
	       "engine_MBs", "memcpy_us", "memcpy_MBs", "engine/memcpy");
	if (run_ranks(BW_WORLD, bw_fn, 0)) {
		printf("FAILED: %s\n", sh->why);
		return 1;
	}
	for (pi = 0; pi < NPARTS; pi++) {
		uint64_t bytes = (uint64_t)BW_WORLD * (BW_WORLD - 1) * bw_parts[pi];
		struct bw *b = &sh->bw[pi];

		b->memcpy_ns = memcpy_ns(bytes);
		printf("%10" PRIu64 " %12" PRIu64 " %10.1f %10.1f %10.1f %10.1f %12.3f\n",
		       bw_parts[pi], bytes, b->round_ns / 1e3, bytes * 1e3 / b->round_ns,
		       b->memcpy_ns / 1e3, bytes * 1e3 / b->memcpy_ns,
		       (double)b->memcpy_ns / b->round_ns);
	}
	return 0;
}
