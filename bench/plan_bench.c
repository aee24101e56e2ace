// SPDX-License-Identifier: MIT
/*
 * plan_bench: what one round of a triggered plan costs, taken apart, next
 * to floors measured in the same run.
 *
 *   1. Per rank and per round, with an instant producer (every chunk
 *      marked right after start):
 *       - host CPU time of re-arm (tplan_plan_next_round), start and
 *         wait, each timed alone; the wait is timed only after the gates
 *         show every arrival (polled in the mapped heaps), so the engine's
 *         poll back-off is not billed to the host.  Each span is read on
 *         two clocks, CLOCK_MONOTONIC inside CLOCK_THREAD_CPUTIME_ID.
 *         When the thread was not switched out during the span (voluntary
 *         and involuntary context switches, getrusage(RUSAGE_THREAD), read
 *         outside the span), its wall time is its CPU time plus whatever
 *         interrupted it, an upper bound, and that is the figure taken:
 *         the monotonic clock is read in user space (vDSO) for a few
 *         hundred ns, where a read of the thread's CPU clock is a system
 *         call whose cost in the middle of a round (4-8 us in TCG) is
 *         several times what a tight loop of reads measures, so short
 *         spans timed by it came out several microseconds long.  A span
 *         the thread was switched out of is taken on the CPU clock, each
 *         clock's read cost (a tight loop's median) taken off either way;
 *         mono_pct says how many spans the monotonic clock timed;
 *       - the ioctls the round makes (counted by a wrapper around ioctl(),
 *         linked with --wrap=ioctl) and the sleeps: "votes" are the
 *         cross-rank collectives a round takes by the kernel's code
 *         (none: next_round is local, each round's copies wait on the
 *         engine for their receiver's release, kmod/plan_prepare.c),
 *         "sleeps" the voluntary context
 *         switches measured in next_round and wait (getrusage(RUSAGE_THREAD),
 *         read outside the timed spans);
 *       - wall time of the round, separately;
 *       - the engine: CPU time of the group's soft-engine threads
 *         (tplan-g<id>/<src>, /proc/<pid>/schedstat) per round, and
 *         mark-to-arrival latency (last mark of this rank to its chunks'
 *         arrival at every peer), p50 and p99 over every rank's rounds.
 *      Floors, in the same group right after each row, on rank 0, in bulk
 *      (a clock read per batch, never per call; the best of five batches,
 *      so that the host's noise does not lift a floor): a null ioctl through
 *      tplan's dispatch (TPLAN_IOC_INFO: size check, copy in, a handler
 *      that only fills constants, copy out) and a memcpy of the bytes of
 *      this rank's chains for one round (computed from the schedule: per
 *      chain POLL_REGMEM + one COPY_LINEAR per 64-byte region + ATOMIC).
 *      ratio = host CPU per round / (null ioctl + memcpy).
 *      Axes: chunks per plan 1..1024, regions per chunk 1..64, peers 1..7
 *      (world = peers + 1 forked processes); the grid takes the axes'
 *      corners and middles, not their full product (TCG is slow).
 *      Each row runs one round at a time (depth 1) and armed 8 rounds
 *      ahead (depth 8, or as many as the queue budget holds: start, a
 *      wait that finds the round complete and the release run in user
 *      space, next_round calls the kernel once per depth rounds); rows
 *      whose 64 rounds fit the budget also at depth 64.
 *   2. All-gather rounds per second, 4 ranks, 16 chunks of 4 KiB: plain
 *      next_round + start + mark + wait, no instrumentation, one round at
 *      a time and armed 8 rounds ahead, side by side.
 *   3. All-gather bandwidth: 4 ranks, one chunk per rank, parts of 256 KiB
 *      .. 16 MiB: start + mark + wait on the software engine against one
 *      memcpy of every byte the round moves (world x (world - 1) parts).
 *
 * Usage: plan_bench [scale [PxCxR,...]]: scale multiplies the rounds
 * (200 per row at 1; below 1 only for quick looks); the second argument
 * runs only the listed rows (peers x chunks x regions).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "libtplan.h"
#include "tplan_device.h"
#include "tplan_sdma.h"
#include "engine_threads.h"

#define REGION_BYTES 64
#define ROUNDS_BASE 200
#define MAX_ROWS 64
#define MAX_WORLD 8
#define MAX_ENGINES 128
#define BW_WORLD 4
#define AG_WORLD 4
#define AG_CHUNKS 16
#define AG_CHUNK_BYTES 4096
/* next_round's collectives, from kmod/plan_prepare.c: none, it is local */
#define VOTES_PER_ROUND 0
/* untimed rounds before a group's first row */
#define WARM_ROUNDS 30
/* The depths a row runs at besides 1; DEPTH_DEEP only where its rounds fit the budget. */
#define DEPTH_AHEAD 8
#define DEPTH_DEEP 64
/* batches of a floor timed in bulk, the best taken */
#define BULK_TRIES 5
/* rounds of a row that time a null ioctl in context */
#define CTX_ROUNDS 100

struct row_spec {
	uint32_t peers, chunks, regions, depth;
};

/*
 * Each axis' corners and middles, at every peer count: 1024 chunks of 64
 * regions at 1 peer, and at 7 peers 1024 chunks of one region (the
 * figure the issue quotes).  7 x 1024 x 64 is beyond max_plan_spans (1M
 * copies, every rank's together); the larger rows of 3 and 7 peers are
 * kept to about 100 KiB of chains per rank, so that the default run
 * (200 rounds a row) stays within about ten minutes in TCG, where the
 * engine is the slow part.
 */
static const struct row_spec grid[] = {
	{ 1, 1, 1, 1 }, { 1, 1, 64, 1 }, { 1, 32, 8, 1 }, { 1, 1024, 1, 1 }, { 1, 1024, 64, 1 },
	{ 3, 1, 1, 1 }, { 3, 1, 64, 1 }, { 3, 32, 8, 1 }, { 3, 1024, 1, 1 }, { 3, 32, 64, 1 },
	{ 7, 1, 1, 1 }, { 7, 1, 64, 1 }, { 7, 32, 8, 1 }, { 7, 1024, 1, 1 }, { 7, 64, 8, 1 },
};

static const uint64_t bw_parts[] = { 256ULL << 10, 4ULL << 20, 16ULL << 20 };
#define NPARTS (sizeof(bw_parts) / sizeof(bw_parts[0]))

/* One rank's round. */
struct sample {
	uint64_t cpu_rearm, cpu_start, cpu_wait;	/* ns, span_ns() */
	uint64_t wall_round;				/* ns, the whole round */
	uint64_t latency;				/* ns, last mark to arrival */
	uint32_t sleeps;				/* in next_round and wait */
	uint32_t rearm_calls;				/* ioctls next_round made */
	uint8_t mono;					/* spans timed by CLOCK_MONOTONIC */
	uint64_t ioctl_ctx;				/* ns, a null ioctl in its place */
};

struct row_result {
	struct row_spec spec;
	uint32_t rounds;
	uint64_t chain_bytes;		/* this rank's chains, one round */
	uint64_t ring_bytes;		/* what rank 0's rings got per round */
	uint64_t ioctls;		/* rank 0, over the timed rounds */
	uint64_t engine_ns;		/* the group's engine threads, over the timed rounds */
	uint64_t clock_ns, mono_ns;	/* one read of each clock, rank 0 */
	double ioctl_ns, memcpy_ns;	/* the floors */
	int done;
};

struct bw {
	uint32_t rounds;
	uint64_t round_ns;
	double memcpy_ns;
};

struct shared {
	struct row_result row[MAX_ROWS];
	struct bw bw[NPARTS];
	uint32_t ag_rounds[2];
	uint64_t ag_ns[2], ag_cpu_ns[2], ag_ioctls[2], ag_eng_ns[2], ag_eng_runs[2];
	uint32_t ag_sleeps[2][AG_WORLD];
	volatile int failed;
	char why[256];
};

static struct shared *sh;
static struct sample *samples;	/* [row][rank][round], shared */
static struct row_spec rows[MAX_ROWS];
static uint32_t nrows, rounds_per_row;
static double scale = 1.0;

/* ---- counting ioctls --------------------------------------------------- */

int __real_ioctl(int fd, unsigned long request, ...);
int __wrap_ioctl(int fd, unsigned long request, ...);
static uint64_t ioctl_calls;

/* Every ioctl of this program and of libtplan (linked --wrap=ioctl) comes here. */
int __wrap_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	ioctl_calls++;
	return __real_ioctl(fd, request, arg);
}

/* ---- clocks ------------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The thread's context switches so far: voluntary (sleeps) and involuntary. */
struct switches {
	uint32_t sleeps, all;
};

static struct switches switches_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (struct switches){ (uint32_t)ru.ru_nvcsw, (uint32_t)(ru.ru_nvcsw + ru.ru_nivcsw) };
}

/* One span, on both clocks: CLOCK_MONOTONIC read inside the CPU clock. */
struct span {
	uint64_t c0, m0, m1, c1;
};

static inline void span_begin(struct span *sp)
{
	sp->c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sp->m0 = clock_ns(CLOCK_MONOTONIC);
}

static inline void span_end(struct span *sp)
{
	sp->m1 = clock_ns(CLOCK_MONOTONIC);
	sp->c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n values, sorted in place. */
static uint64_t quantile(uint64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* What reading a clock costs: the median of back-to-back reads. */
static uint64_t clock_overhead(clockid_t id)
{
	uint64_t d[501];
	unsigned int i;

	for (i = 0; i < 501; i++) {
		uint64_t a = clock_ns(id);

		d[i] = clock_ns(id) - a;
	}
	return quantile(d, 501, 0.5);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * A span's host CPU time: its wall time when the thread ran it without
 * being switched out (sw0, sw1: the switch counts around it), else its
 * CPU-clock time; each clock's read cost (ovh_mono, ovh_cpu) taken off.
 * *mono counts the spans the monotonic clock timed.
 */
static uint64_t span_ns(const struct span *sp, uint32_t sw0, uint32_t sw1, uint64_t ovh_mono,
			uint64_t ovh_cpu, uint8_t *mono)
{
	if (sw0 == sw1) {
		(*mono)++;
		return minus(sp->m1 - sp->m0, ovh_mono);
	}
	return minus(sp->c1 - sp->c0, ovh_cpu);
}

/* ---- errors -------------------------------------------------------------- */

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

/* ---- floors ------------------------------------------------------------------ */

/*
 * CPU nanoseconds of one call of fn, timed in batches that double until
 * one takes at least 20 ms; one clock read per batch.  The best of
 * BULK_TRIES such batches: a floor is what the call costs when nothing
 * else on the host gets in the way.
 */
static double bulk_ns(void (*fn)(void *arg, uint64_t reps), void *arg)
{
	uint64_t reps = 16, t;
	double best = 0, ns;
	unsigned int i;

	for (;;) {
		t = cpu_ns();
		fn(arg, reps);
		t = cpu_ns() - t;
		if (t >= 20000000ULL || reps >= (1ULL << 32))
			break;
		reps *= 2;
	}
	best = (double)t / (double)reps;
	for (i = 1; i < BULK_TRIES; i++) {
		t = cpu_ns();
		fn(arg, reps);
		ns = (double)(cpu_ns() - t) / (double)reps;
		if (ns < best)
			best = ns;
	}
	return best;
}

struct copy_job {
	unsigned char *a, *b;
	uint64_t bytes;
};

static void copy_reps(void *arg, uint64_t reps)
{
	struct copy_job *j = arg;
	uint64_t i;

	for (i = 0; i < reps; i++) {
		memcpy(j->b, j->a, j->bytes);
		j->a[i % j->bytes]++;	/* keep the copies from being merged */
		__asm__ __volatile__("" : : "r"(j->b) : "memory");
	}
}

static double memcpy_floor_ns(uint64_t bytes)
{
	struct copy_job j = { malloc(bytes), malloc(bytes), bytes };
	double ns = 0;

	if (j.a && j.b) {
		memset(j.a, 1, bytes);
		memset(j.b, 2, bytes);	/* both faulted in */
		ns = bulk_ns(copy_reps, &j);
	}
	free(j.a);
	free(j.b);
	return ns;
}

static void info_reps(void *arg, uint64_t reps)
{
	int fd = *(int *)arg;
	struct tplan_info info;
	uint64_t i;

	for (i = 0; i < reps; i++) {
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		ioctl(fd, TPLAN_IOC_INFO, &info);
	}
}

/* ---- the engine's threads (engine_threads.h) ------------------------------------ */

/*
 * CPU time of the threads: schedstat (ns), else utime + stime (ticks).
 * With runs, also how many times they were put on a CPU (schedstat's
 * third field: each wake-up or preemption is one; 0 without schedstat).
 */
static uint64_t engine_cpu_runs(const pid_t *pids, unsigned int n, uint64_t *runs)
{
	char path[64];
	unsigned long long ns, wait_ns, slices, ticks;
	uint64_t sum = 0;
	unsigned int i;
	FILE *f;

	if (runs)
		*runs = 0;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pids[i]);
		f = fopen(path, "r");
		if (f && fscanf(f, "%llu %llu %llu", &ns, &wait_ns, &slices) == 3) {
			sum += ns;
			if (runs)
				*runs += slices;
			fclose(f);
			continue;
		}
		if (f)
			fclose(f);
		if (!engine_thread_ticks(pids[i], &ticks))
			sum += ticks * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
	}
	return sum;
}

static uint64_t engine_cpu_ns(const pid_t *pids, unsigned int n)
{
	return engine_cpu_runs(pids, n, NULL);
}

/* ---- ranks ------------------------------------------------------------------------ */

static int join(struct tplan_ctx **ctx, uint64_t key, uint32_t world, uint32_t rank,
		uint64_t heap)
{
	struct tplan_join_params p = {
		.key = key, .world_size = world, .rank = rank, .heap_size = heap,
		.timeout_ms = 300000,
	};
	int ret = tplan_ctx_open(ctx, NULL);

	if (ret)
		return ret;
	tplan_ctx_set_timeout(*ctx, 300000);
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

static volatile uint64_t *arrival(struct tplan_ctx *ctx, uint32_t rank, uint64_t gate_off,
				  uint32_t chunk)
{
	return (volatile uint64_t *)((char *)tplan_heap_ptr(ctx, rank) + gate_off +
				     (uint64_t)chunk * TPLAN_GATE_ROW_BYTES + TPLAN_GATE_ARRIVAL);
}

/*
 * Spin (yielding: on few CPUs the engine threads need this one) until
 * every arrival gate the wait will check shows the round: this rank's
 * chunks at every peer (then *t_own is stamped), every other chunk here.
 */
static void poll_arrivals(struct tplan_ctx *ctx, const struct tplan_handle *h,
			  uint64_t gate_off, uint64_t *t_own)
{
	uint32_t me = h->rank, first = h->chunk_base[me], end = h->chunk_base[me + 1];
	uint32_t c = first, r = 0;

	while (c < end) {
		if (r == me || __atomic_load_n(arrival(ctx, r, gate_off, c), __ATOMIC_ACQUIRE) >=
			       h->round) {
			if (++r == h->world_size) {
				r = 0;
				c++;
			}
			continue;
		}
		sched_yield();
	}
	*t_own = now_ns();
	for (c = 0; c < h->total_chunks; c++) {
		if (c >= first && c < end)
			continue;
		while (__atomic_load_n(arrival(ctx, me, gate_off, c), __ATOMIC_ACQUIRE) < h->round)
			sched_yield();
	}
}

static uint64_t chain_bytes_of(const struct row_spec *s)
{
	uint64_t chain_dw = TPLAN_SDMA_POLL_DW + (uint64_t)s->regions * TPLAN_SDMA_COPY_LINEAR_DW +
			    TPLAN_SDMA_ATOMIC_DW;

	return chain_dw * 4 * s->chunks * s->peers;
}

static uint64_t ring_wptr_sum(struct tplan_ctx *ctx, uint32_t world, uint32_t me)
{
	struct tplan_queue_info q;
	uint64_t sum = 0;
	uint32_t r;

	for (r = 0; r < world; r++) {
		if (r == me)
			continue;
		memset(&q, 0, sizeof(q));
		if (!tplan_queue_info(ctx, r, &q))
			sum += q.wptr;
	}
	return sum;
}

static struct sample *sample_at(uint32_t row, uint32_t rank, uint32_t round)
{
	return &samples[((size_t)row * MAX_WORLD + rank) * rounds_per_row + round];
}

/*
 * A plan of s->chunks chunks, each of s->regions regions of 64 bytes, one
 * writer, to every peer; its round 1 is queued.
 */
static int make_plan(struct tplan_ctx *ctx, const struct row_spec *s, uint32_t rank,
		     uint64_t buf, struct tplan_plan **plan)
{
	uint32_t world = s->peers + 1, c, k;
	uint64_t part = (uint64_t)s->chunks * s->regions * REGION_BYTES, own = buf + rank * part;
	struct tplan_schedule *sched;
	struct tplan_region *reg;

	CHECK(ctx, tplan_schedule_new(&sched));
	reg = calloc(s->regions, sizeof(*reg));
	if (!reg)
		return fail(ctx, "calloc", -ENOMEM);
	for (c = 0; c < s->chunks; c++) {
		for (k = 0; k < s->regions; k++)
			reg[k] = (struct tplan_region){
				.offset = own + ((uint64_t)c * s->regions + k) * REGION_BYTES,
				.width = REGION_BYTES, .pitch = REGION_BYTES, .rows = 1,
			};
		if (tplan_schedule_add_chunk(sched, reg, s->regions, 1) < 0)
			return fail(ctx, "add_chunk", -EINVAL);
	}
	free(reg);
	CHECK(ctx, tplan_ctx_set_rounds_ahead(ctx, s->depth ? s->depth : 1));
	CHECK(ctx, tplan_plan_create(ctx, buf, (uint64_t)world * part, own, part, sched, plan));
	CHECK(ctx, tplan_ctx_set_rounds_ahead(ctx, 1));
	tplan_schedule_free(sched);
	return 0;
}

/* Rounds untimed; the first is the one queued at create. */
/*
 * One round, untimed: re-arm (unless rearm is false: the plan's first),
 * start, mark every chunk, poll the gates until every arrival shows if
 * poll, wait.
 */
static int untimed_round(struct tplan_ctx *ctx, struct tplan_plan *plan, bool rearm, bool poll)
{
	struct tplan_handle h;
	uint64_t t_own;

	if (rearm)
		CHECK(ctx, tplan_plan_next_round(plan));
	CHECK(ctx, tplan_plan_start(plan, &h));
	mark_all(&h);
	if (poll)
		poll_arrivals(ctx, &h, h.gates - (uintptr_t)tplan_heap_ptr(ctx, h.rank), &t_own);
	CHECK(ctx, tplan_plan_wait(plan, 300000));
	return 0;
}

static int plain_rounds(struct tplan_ctx *ctx, struct tplan_plan *plan, uint32_t rounds,
			bool first)
{
	uint32_t round;

	for (round = 0; round < rounds; round++)
		if (untimed_round(ctx, plan, round || !first, false))
			return 1;
	return 0;
}

/*
 * The null ioctl again, in context: in CTX_ROUNDS more rounds, one timed
 * where next_round goes, right before it, as the round's spans are timed.
 * Under TCG a call made after the rank's rounds ran in user space (and the
 * other ranks and the engine ran on its CPU) costs several times what the
 * same call costs in a loop of calls: the emulator's TLB and translation
 * caches are cold.  Reported next to the bulk floor, not instead of it.
 */
static int null_ioctl_in_context(struct tplan_ctx *ctx, struct tplan_plan *plan, uint32_t rank,
				 uint32_t ri, uint64_t ovh_mono, uint64_t ovh)
{
	uint32_t n = rounds_per_row < CTX_ROUNDS ? rounds_per_row : CTX_ROUNDS, round;
	int fd = tplan_ctx_fd(ctx);
	struct tplan_info info;

	for (round = 0; round < n; round++) {
		struct sample *sm = sample_at(ri, rank, round);
		struct switches z0, z1;
		struct span sp;
		uint8_t mono = 0;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		z0 = switches_now();
		span_begin(&sp);
		if (ioctl(fd, TPLAN_IOC_INFO, &info))
			return fail(ctx, "TPLAN_IOC_INFO", -errno);
		span_end(&sp);
		z1 = switches_now();
		sm->ioctl_ctx = span_ns(&sp, z0.all, z1.all, ovh_mono, ovh, &mono);
		if (untimed_round(ctx, plan, true, true))
			return 1;
	}
	return 0;
}

/* One row: a plan of chunks x regions to every peer, rounds_per_row timed rounds. */
static int cost_row(struct tplan_ctx *ctx, uint32_t ri, uint32_t rank, uint64_t buf)
{
	const struct row_spec *s = &rows[ri];
	struct row_result *res = &sh->row[ri];
	uint32_t world = s->peers + 1, round;
	uint64_t ovh = clock_overhead(CLOCK_THREAD_CPUTIME_ID);
	uint64_t ovh_mono = clock_overhead(CLOCK_MONOTONIC), io0 = 0, eng0 = 0, ring0 = 0, t_own = 0;
	pid_t pids[MAX_ENGINES];
	unsigned int npids = 0;
	struct tplan_plan *plan;
	struct tplan_handle h;
	struct tplan_info info;

	if (make_plan(ctx, s, rank, buf, &plan))
		return 1;
	/* Two rounds untimed: round 1 (queued at create) and one re-armed. */
	if (plain_rounds(ctx, plan, 2, true))
		return 1;

	if (rank == 0) {
		int found = engine_pids(pids, MAX_ENGINES);

		npids = found > 0 ? (unsigned int)found : 0;
		ring0 = ring_wptr_sum(ctx, world, rank);
	}
	CHECK(ctx, tplan_barrier(ctx, 0));
	if (rank == 0)
		eng0 = engine_cpu_ns(pids, npids);
	io0 = ioctl_calls;
	for (round = 0; round < rounds_per_row; round++) {
		struct sample *sm = sample_at(ri, rank, round);
		struct switches z0, z1, z2, z3, z4;
		struct span rearm, start, wait;
		uint64_t w0, tm;

		w0 = now_ns();
		z0 = switches_now();
		sm->rearm_calls = (uint32_t)ioctl_calls;
		span_begin(&rearm);
		CHECK(ctx, tplan_plan_next_round(plan));
		span_end(&rearm);
		sm->rearm_calls = (uint32_t)ioctl_calls - sm->rearm_calls;
		z1 = switches_now();
		span_begin(&start);
		CHECK(ctx, tplan_plan_start(plan, &h));
		span_end(&start);
		z2 = switches_now();
		mark_all(&h);
		tm = now_ns();
		poll_arrivals(ctx, &h, h.gates - (uintptr_t)tplan_heap_ptr(ctx, rank), &t_own);
		z3 = switches_now();
		span_begin(&wait);
		CHECK(ctx, tplan_plan_wait(plan, 300000));
		span_end(&wait);
		z4 = switches_now();
		sm->wall_round = now_ns() - w0;
		sm->mono = 0;
		sm->cpu_rearm = span_ns(&rearm, z0.all, z1.all, ovh_mono, ovh, &sm->mono);
		sm->cpu_start = span_ns(&start, z1.all, z2.all, ovh_mono, ovh, &sm->mono);
		sm->cpu_wait = span_ns(&wait, z3.all, z4.all, ovh_mono, ovh, &sm->mono);
		sm->latency = t_own - tm;
		sm->sleeps = (z1.sleeps - z0.sleeps) + (z4.sleeps - z3.sleeps);
	}
	if (rank == 0)
		res->ioctls = ioctl_calls - io0;
	CHECK(ctx, tplan_barrier(ctx, 0));
	if (rank == 0) {
		int fd = tplan_ctx_fd(ctx);

		res->engine_ns = engine_cpu_ns(pids, npids) - eng0;
		res->ring_bytes = (ring_wptr_sum(ctx, world, rank) - ring0) / rounds_per_row;
		res->spec = *s;
		res->rounds = rounds_per_row;
		res->chain_bytes = chain_bytes_of(s);
		res->clock_ns = ovh;
		res->mono_ns = ovh_mono;
		/* The floor times a call that succeeds, not an error path. */
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (ioctl(fd, TPLAN_IOC_INFO, &info))
			return fail(ctx, "TPLAN_IOC_INFO", -errno);
		res->ioctl_ns = bulk_ns(info_reps, &fd);
		res->memcpy_ns = memcpy_floor_ns(res->chain_bytes);
		res->done = 1;
	}
	CHECK(ctx, tplan_barrier(ctx, 0));
	if (null_ioctl_in_context(ctx, plan, rank, ri, ovh_mono, ovh))
		return 1;
	CHECK(ctx, tplan_barrier(ctx, 0));
	CHECK(ctx, tplan_plan_close(plan, NULL));
	return 0;
}

/* Every row of one peer count in one group. */
static int cost_rank(uint64_t key, uint32_t peers, uint32_t rank)
{
	const struct row_spec warm = { .peers = peers, .chunks = 4, .regions = 4, .depth = 1 };
	uint64_t part_max = 4 * 4 * REGION_BYTES, heap, buf;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	uint32_t ri, world = peers + 1;

	for (ri = 0; ri < nrows; ri++)
		if (rows[ri].peers == peers) {
			uint64_t part = (uint64_t)rows[ri].chunks * rows[ri].regions * REGION_BYTES;

			part_max = part > part_max ? part : part_max;
		}
	/* the buffer, and a gate area (a sixteenth) well above the gate rows */
	heap = (((uint64_t)world * part_max * 2 + (8ULL << 20)) + 4095) & ~4095ULL;
	CHECK(NULL, join(&ctx, key, world, rank, heap));
	CHECK(ctx, tplan_heap_alloc(ctx, (uint64_t)world * part_max, 4096, &buf));
	/*
	 * Warm up, untimed: QEMU translates code the first time it runs, and
	 * the guest's clocks count that time as the caller's.
	 */
	if (make_plan(ctx, &warm, rank, buf, &plan) || plain_rounds(ctx, plan, WARM_ROUNDS, true))
		return 1;
	CHECK(ctx, tplan_plan_close(plan, NULL));
	for (ri = 0; ri < nrows; ri++)
		if (rows[ri].peers == peers && cost_row(ctx, ri, rank, buf))
			return 1;
	tplan_ctx_close(ctx);
	return 0;
}

/* ---- 2. all-gather rounds per second ----------------------------------------------- */

/* mode 0: one round at a time; 1: armed DEPTH_AHEAD rounds ahead. */
static int ag_rank(uint64_t key, uint32_t mode, uint32_t rank)
{
	uint32_t rounds = rounds_per_row, round, c;
	struct tplan_tensor out = { .rows = AG_WORLD * AG_CHUNKS, .cols = AG_CHUNK_BYTES,
				    .elem_size = 1 };
	struct tplan_schedule *sched;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	uint64_t t0, c0, io0, eng0 = 0, runs0 = 0, runs1;
	struct switches z0, z1;
	pid_t pids[MAX_ENGINES];
	unsigned int npids = 0;

	CHECK(NULL, join(&ctx, key, AG_WORLD, rank, 16ULL << 20));
	CHECK(ctx, tplan_ctx_set_rounds_ahead(ctx, mode ? DEPTH_AHEAD : 1));
	CHECK(ctx, tplan_heap_alloc(ctx, (uint64_t)AG_WORLD * AG_CHUNKS * AG_CHUNK_BYTES, 4096,
				    &out.offset));
	CHECK(ctx, tplan_schedule_new(&sched));
	for (c = 0; c < AG_CHUNKS; c++) {
		struct tplan_region r = {
			.offset = out.offset + ((uint64_t)rank * AG_CHUNKS + c) * AG_CHUNK_BYTES,
			.width = AG_CHUNK_BYTES, .pitch = AG_CHUNK_BYTES, .rows = 1,
		};

		if (tplan_schedule_add_chunk(sched, &r, 1, 1) < 0)
			return fail(ctx, "add_chunk", -EINVAL);
	}
	CHECK(ctx, tplan_prepare_all_gather(ctx, &out, sched, &plan));
	tplan_schedule_free(sched);
	if (untimed_round(ctx, plan, false, false))
		return 1;
	if (rank == 0) {
		int found = engine_pids(pids, MAX_ENGINES);

		npids = found > 0 ? (unsigned int)found : 0;
	}
	CHECK(ctx, tplan_barrier(ctx, 0));
	if (rank == 0)
		eng0 = engine_cpu_runs(pids, npids, &runs0);
	t0 = now_ns();
	c0 = cpu_ns();
	io0 = ioctl_calls;
	z0 = switches_now();
	for (round = 0; round < rounds; round++)
		if (untimed_round(ctx, plan, true, false))
			return 1;
	z1 = switches_now();
	sh->ag_sleeps[mode][rank] = z1.sleeps - z0.sleeps;
	if (rank == 0) {
		sh->ag_cpu_ns[mode] = cpu_ns() - c0;
		sh->ag_ns[mode] = now_ns() - t0;
		sh->ag_ioctls[mode] = ioctl_calls - io0;
		sh->ag_rounds[mode] = rounds;
		/* The other ranks may still be in their last round: a little more, not less. */
		sh->ag_eng_ns[mode] = engine_cpu_runs(pids, npids, &runs1) - eng0;
		sh->ag_eng_runs[mode] = runs1 - runs0;
	}
	CHECK(ctx, tplan_plan_close(plan, NULL));
	tplan_ctx_close(ctx);
	return 0;
}

/* ---- 3. all-gather bandwidth ----------------------------------------------------- */

/* Wall nanoseconds one memcpy of bytes takes: the mean over 0.2 s of copies. */
static double memcpy_wall_ns(uint64_t bytes)
{
	unsigned char *a = malloc(bytes), *b = malloc(bytes);
	uint64_t t0, reps = 0, target = 200000000ULL;

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
		__asm__ __volatile__("" : : "r"(b) : "memory");
		reps++;
	} while (now_ns() - t0 < target || reps < 3);
	t0 = now_ns() - t0;
	free(a);
	free(b);
	return (double)t0 / (double)reps;
}

static int bw_rank(uint64_t key, uint32_t unused, uint32_t rank)
{
	struct tplan_ctx *ctx;
	uint32_t pi, round;

	(void)unused;
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
	pid_t pid[MAX_WORLD];
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

/* Medians over every rank's rounds of a row; the worst rank's median host CPU. */
struct row_stats {
	uint64_t rearm, start, wait, host, host_worst_rank, wall, lat50, lat99, ioctl_ctx;
	double sleeps, host_amort, mono_pct;
};

static void row_stats(uint32_t ri, struct row_stats *st)
{
	uint32_t world = rows[ri].peers + 1, n = world * rounds_per_row, r, k, i;
	uint64_t *v = calloc(n, sizeof(*v)), *mine = calloc(rounds_per_row, sizeof(*mine));
	uint64_t sleeps = 0, mono = 0;

	memset(st, 0, sizeof(*st));
	if (!v || !mine)
		goto out;
#define COLLECT(field_expr, dst)						\
	do {									\
		for (i = 0, r = 0; r < world; r++)				\
			for (k = 0; k < rounds_per_row; k++) {			\
				const struct sample *s = sample_at(ri, r, k);	\
				v[i++] = (field_expr);				\
			}							\
		dst = quantile(v, n, 0.5);					\
	} while (0)
	COLLECT(s->cpu_rearm, st->rearm);
	COLLECT(s->cpu_start, st->start);
	COLLECT(s->cpu_wait, st->wait);
	COLLECT(s->cpu_rearm + s->cpu_start + s->cpu_wait, st->host);
	COLLECT(s->wall_round, st->wall);
	COLLECT(s->latency, st->lat50);
	st->lat99 = quantile(v, n, 0.99);
#undef COLLECT
	for (i = 0, r = 0; r < world; r++)
		for (k = 0; k < rounds_per_row && k < CTX_ROUNDS; k++)
			v[i++] = sample_at(ri, r, k)->ioctl_ctx;
	st->ioctl_ctx = quantile(v, i, 0.5);
	{
		/*
		 * Armed ahead, one re-arm in depth calls the kernel: the
		 * median of those and of the others, weighed by how often
		 * each happened (a mean would be the host's scheduling noise).
		 */
		uint64_t med_call = 0, med_user = 0;
		uint32_t ncall = 0, nuser = 0;

		for (r = 0; r < world; r++)
			for (k = 0; k < rounds_per_row; k++)
				if (sample_at(ri, r, k)->rearm_calls)
					v[ncall++] = sample_at(ri, r, k)->cpu_rearm;
		if (ncall)
			med_call = quantile(v, ncall, 0.5);
		for (r = 0; r < world; r++)
			for (k = 0; k < rounds_per_row; k++)
				if (!sample_at(ri, r, k)->rearm_calls)
					v[nuser++] = sample_at(ri, r, k)->cpu_rearm;
		if (nuser)
			med_user = quantile(v, nuser, 0.5);
		st->host_amort = ((double)med_call * ncall + (double)med_user * nuser) / n +
				 st->start + st->wait;
	}
	for (r = 0; r < world; r++) {
		uint64_t med;

		for (k = 0; k < rounds_per_row; k++) {
			const struct sample *s = sample_at(ri, r, k);

			mine[k] = s->cpu_rearm + s->cpu_start + s->cpu_wait;
			sleeps += s->sleeps;
			mono += s->mono;
		}
		med = quantile(mine, rounds_per_row, 0.5);
		if (med > st->host_worst_rank)
			st->host_worst_rank = med;
	}
	st->sleeps = (double)sleeps / n;
	st->mono_pct = 100.0 * (double)mono / (3.0 * n);
out:
	free(v);
	free(mine);
}

/* The best and worst ratio of a depth's rows. */
struct extremes {
	double best, worst;
	uint32_t best_i, worst_i;
};

static void extremes_add(struct extremes *e, double ratio, uint32_t ri)
{
	if (!e->best || ratio < e->best) {
		e->best = ratio;
		e->best_i = ri;
	}
	if (ratio > e->worst) {
		e->worst = ratio;
		e->worst_i = ri;
	}
}

static void summary(uint32_t depth, uint32_t shown, const char *floor, const struct extremes *e,
		    double io_max)
{
	const struct row_spec *b = &rows[e->best_i], *w = &rows[e->worst_i];
	double spread = e->best > 0 ? e->worst / e->best : 0;

	printf("summary depth %u: %u rows; host CPU per round (amortized) against %s: best %.2fx (%ux%ux%u), worst %.2fx (%ux%ux%u), worst/best %.1f; ioctls per round times depth at most %.3f\n",
	       depth, shown, floor, e->best, b->peers, b->chunks, b->regions, e->worst, w->peers,
	       w->chunks, w->regions, spread, io_max);
	if (depth > 1)
		printf("goal depth %u, against %s: worst <= 2x: %s; worst/best <= 1.5: %s; ioctls per round <= 1/depth: %s; 0 cross-rank sleeps: %s\n",
		       depth, floor, e->worst <= 2 ? "met" : "not met",
		       e->best > 0 && spread <= 1.5 ? "met" : "not met",
		       io_max <= 1 + 1e-9 ? "met" : "not met",
		       VOTES_PER_ROUND == 0 ? "met" : "not met");
}

static int parse_rows(const char *list)
{
	const char *p = list;

	nrows = 0;
	while (*p && nrows < MAX_ROWS) {
		struct row_spec s;
		int used = 0;

		s.depth = 1;
		if (sscanf(p, "%ux%ux%u%n", &s.peers, &s.chunks, &s.regions, &used) != 3 ||
		    !s.peers || s.peers >= MAX_WORLD || !s.chunks || !s.regions)
			return -1;
		if (p[used] == 'x') {
			int more = 0;

			if (sscanf(p + used, "x%u%n", &s.depth, &more) != 1 || !s.depth ||
			    s.depth > TPLAN_PLAN_DEPTH_MAX)
				return -1;
			used += more;
		}
		rows[nrows++] = s;
		p += used;
		if (*p == ',')
			p++;
	}
	return nrows ? 0 : -1;
}

/* A queue's prepared-copy budget, from the module's info (0 without the module). */
static uint64_t queue_budget(void)
{
	struct tplan_info info;
	struct tplan_ctx *ctx;
	uint64_t b = 0;

	if (tplan_ctx_open(&ctx, NULL))
		return 0;
	if (!tplan_query_info(ctx, &info))
		b = (uint64_t)info.ring_size * info.prep_limit_pct / 100;
	tplan_ctx_close(ctx);
	return b;
}

/* What one round of s charges a queue: per chain its bytes and gate FENCE, the head POLL. */
static uint64_t round_charge(const struct row_spec *s)
{
	return chain_bytes_of(s) / s->peers + (uint64_t)s->chunks * TPLAN_CHAIN_FENCE_BYTES +
	       TPLAN_ROUND_HEAD_BYTES;
}

static int cost_fn(uint64_t key, uint32_t peers, uint32_t rank)
{
	return cost_rank(key, peers, rank);
}

int main(int argc, char **argv)
{
	static const uint32_t depths[] = { 1, DEPTH_AHEAD, DEPTH_DEEP };
	uint64_t t_start = now_ns(), t_cost;
	uint32_t ri, peers, d;
	size_t sample_bytes;

	if (argc > 1)
		scale = atof(argv[1]);
	if (scale <= 0)
		scale = 1;
	rounds_per_row = (uint32_t)(ROUNDS_BASE * scale + 0.5);
	if (rounds_per_row < 5)
		rounds_per_row = 5;
	if (argc > 2) {
		if (parse_rows(argv[2])) {
			fprintf(stderr, "plan_bench: rows are PxCxR,... (peers 1..%u)\n",
				MAX_WORLD - 1);
			return 2;
		}
	} else {
		uint32_t n = sizeof(grid) / sizeof(grid[0]), i;
		uint64_t budget = queue_budget();

		memcpy(rows, grid, sizeof(grid));
		nrows = n;
		for (i = 0; i < n; i++) {
			/* As many rounds as fit the budget, at most DEPTH_AHEAD. */
			uint64_t fit = budget / round_charge(&grid[i]);

			if (fit < 2)
				continue;
			rows[nrows] = grid[i];
			rows[nrows++].depth = fit < DEPTH_AHEAD ? (uint32_t)fit : DEPTH_AHEAD;
		}
		for (i = 0; i < n && nrows < MAX_ROWS; i++) {
			if (DEPTH_DEEP * round_charge(&grid[i]) > budget)
				continue;
			rows[nrows] = grid[i];
			rows[nrows++].depth = DEPTH_DEEP;
		}
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sample_bytes = (size_t)nrows * MAX_WORLD * rounds_per_row * sizeof(*samples);
	samples = mmap(NULL, sample_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (sh == MAP_FAILED || samples == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));

	printf("# plan_bench: one round's cost, %u rows x %u rounds (scale %.2f%s)\n", nrows,
	       rounds_per_row, scale, rounds_per_row < ROUNDS_BASE ? ": below 200, a quick look" : "");
	printf("# host_us = CPU of next_round + start + wait (medians over every rank's rounds);\n"
	       "#   a span the thread was not switched out of is timed by CLOCK_MONOTONIC (wall,\n"
	       "#   an upper bound of its CPU time), any other by CLOCK_THREAD_CPUTIME_ID; each\n"
	       "#   clock's read cost taken off; mono_pct = spans timed by CLOCK_MONOTONIC, in %%;\n"
	       "#   worst_us = the worst rank's median;\n"
	       "#   wait is timed after the gates showed every arrival; amort_us = host CPU per\n"
	       "#   round with the re-arms that call the kernel (one in depth) and those that do\n"
	       "#   not each at its median, weighed by how often each happened\n"
	       "# floors (rank 0, bulk, the best of %u batches of 20 ms or more): ioctl_us = null\n"
	       "#   TPLAN_IOC_INFO through tplan's dispatch,\n"
	       "#   memcpy_us = memcpy of this rank's chain bytes of one round (chain_B, from the\n"
	       "#   schedule: POLL + one COPY_LINEAR per 64 B region + ATOMIC per chunk and peer);\n"
	       "#   ring_B = what rank 0's rings got per round (chains, fences, pads)\n"
	       "# ratio = amort_us / (ioctl_us + memcpy_us); ictx_us = the null ioctl timed in\n"
	       "#   context, where next_round goes, in %u more rounds (median over ranks), and\n"
	       "#   ratio_ctx = amort_us / (ictx_us + memcpy_us): under TCG a call that follows\n"
	       "#   rounds run in user space finds the emulator's caches cold\n"
	       "# ioctls = per round (counted, rank 0); votes = cross-rank collectives per round in\n"
	       "#   the kernel's code (next_round: none, local); sleeps = measured voluntary\n"
	       "#   context switches in next_round + wait, mean over ranks and rounds\n"
	       "# engine_us = CPU of the group's engine threads per round (all queues);\n"
	       "#   lat = mark to arrival of this rank's chunks at every peer, p50 / p99 over ranks\n"
	       "#   and rounds; wall_us = the whole round (median)\n", BULK_TRIES, CTX_ROUNDS);
	for (peers = 1; peers < MAX_WORLD; peers++) {
		int any = 0;

		for (ri = 0; ri < nrows; ri++)
			any |= rows[ri].peers == peers;
		if (!any)
			continue;
		if (run_ranks(peers + 1, cost_fn, peers)) {
			printf("FAILED: %s\n", sh->why);
			return 1;
		}
	}
	t_cost = now_ns() - t_start;
	for (d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
		struct extremes bulk = { 0 }, in_ctx = { 0 };
		double io_max = 0;
		uint32_t shown = 0;

		for (ri = 0; ri < nrows; ri++) {
			struct row_result *r = &sh->row[ri];
			struct row_stats st;
			double floor, ratio, ratio_ctx, io;

			if (rows[ri].depth > depths[d] || rows[ri].depth <= (d ? depths[d - 1] : 0))
				continue;
			if (!r->done) {
				printf("FAILED: row %u not measured\n", ri);
				return 1;
			}
			if (!shown++) {
				printf("# depth %s%u: %s\n", d ? "up to " : "", depths[d], depths[d] == 1 ?
				       "one round at a time, every step a call" :
				       "armed ahead (as many rounds as the budget holds), rounds run in user space");
				printf("%5s %6s %4s %5s %8s %8s %9s %8s %8s %9s %9s %9s %8s %9s %8s %8s %9s %6s %5s %6s %9s %9s %8s %8s %8s\n",
				       "peers", "chunks", "regs", "depth", "chain_B", "ring_B", "rearm_us",
				       "start_us", "wait_us", "host_us", "amort_us", "worst_us",
				       "ioctl_us", "memcpy_us", "ratio", "ictx_us", "ratio_ctx", "ioctls",
				       "votes", "sleeps", "wall_us", "engine_us", "lat50_us", "lat99_us",
				       "mono_pct");
			}
			row_stats(ri, &st);
			floor = r->ioctl_ns + r->memcpy_ns;
			ratio = floor > 0 ? st.host_amort / floor : 0;
			floor = (double)st.ioctl_ctx + r->memcpy_ns;
			ratio_ctx = floor > 0 ? st.host_amort / floor : 0;
			io = (double)r->ioctls / r->rounds;
			extremes_add(&bulk, ratio, ri);
			extremes_add(&in_ctx, ratio_ctx, ri);
			if (io * r->spec.depth > io_max)
				io_max = io * r->spec.depth;	/* 1: one call per depth rounds */
			printf("%5u %6u %4u %5u %8" PRIu64 " %8" PRIu64 " %9.1f %8.1f %8.1f %9.1f %9.1f %9.1f %8.2f %9.3f %8.2f %8.2f %9.2f %6.3f %5u %6.2f %9.1f %9.1f %8.1f %8.1f %8.1f\n",
			       r->spec.peers, r->spec.chunks, r->spec.regions, r->spec.depth,
			       r->chain_bytes, r->ring_bytes, st.rearm / 1e3, st.start / 1e3,
			       st.wait / 1e3, st.host / 1e3, st.host_amort / 1e3,
			       st.host_worst_rank / 1e3, r->ioctl_ns / 1e3, r->memcpy_ns / 1e3,
			       ratio, st.ioctl_ctx / 1e3, ratio_ctx, io, VOTES_PER_ROUND, st.sleeps, st.wall / 1e3,
			       (double)r->engine_ns / r->rounds / 1e3, st.lat50 / 1e3,
			       st.lat99 / 1e3, st.mono_pct);
		}
		if (!shown)
			continue;
		summary(depths[d], shown, "the floor (null ioctl in bulk)", &bulk, io_max);
		summary(depths[d], shown, "the floor with the null ioctl in context", &in_ctx,
			io_max);
	}
	printf("# a CPU clock read costs %" PRIu64 " ns, a CLOCK_MONOTONIC read %" PRIu64
	       " ns (rank 0, last row, tight loop): taken off each span\n",
	       sh->row[nrows - 1].clock_ns, sh->row[nrows - 1].mono_ns);
	printf("# cost rows took %.0f s\n", t_cost / 1e9);

	printf("# all-gather rounds per second: %u ranks, %u chunks of %u B each, next_round + start\n"
	       "# + mark + wait, instant producer, no instrumentation (rank 0's wall and CPU time);\n"
	       "# then per round: the engine threads' CPU and how often they were put on a CPU\n"
	       "# (schedstat: wake-ups and preemptions), and the ranks' sleeps (voluntary\n"
	       "# context switches, all ranks): counts, steadier here than times\n",
	       AG_WORLD, AG_CHUNKS, AG_CHUNK_BYTES);
	for (d = 0; d < 2; d++) {
		uint32_t sleeps = 0, r;

		if (run_ranks(AG_WORLD, ag_rank, d)) {
			printf("FAILED: %s\n", sh->why);
			return 1;
		}
		for (r = 0; r < AG_WORLD; r++)
			sleeps += sh->ag_sleeps[d][r];
		printf("all-gather %ux%u x %u B, depth %u: %u rounds, %.1f rounds/s, %.1f us per round wall, %.1f us host CPU, %.3f ioctls per round\n",
		       AG_WORLD, AG_CHUNKS, AG_CHUNK_BYTES, d ? DEPTH_AHEAD : 1, sh->ag_rounds[d],
		       sh->ag_rounds[d] * 1e9 / (double)sh->ag_ns[d],
		       sh->ag_ns[d] / 1e3 / sh->ag_rounds[d], sh->ag_cpu_ns[d] / 1e3 / sh->ag_rounds[d],
		       (double)sh->ag_ioctls[d] / sh->ag_rounds[d]);
		printf("all-gather depth %u per round: %.1f us engine CPU, %.1f engine runs, %.2f rank sleeps\n",
		       d ? DEPTH_AHEAD : 1, sh->ag_eng_ns[d] / 1e3 / sh->ag_rounds[d],
		       (double)sh->ag_eng_runs[d] / sh->ag_rounds[d],
		       (double)sleeps / sh->ag_rounds[d]);
	}
	printf("all-gather depth %u against depth 1: %.2fx the rounds per second, %.2fx less host CPU per round\n",
	       DEPTH_AHEAD, (double)sh->ag_ns[0] / sh->ag_rounds[0] / ((double)sh->ag_ns[1] / sh->ag_rounds[1]),
	       (double)sh->ag_cpu_ns[0] / sh->ag_rounds[0] / ((double)sh->ag_cpu_ns[1] / sh->ag_rounds[1]));
	{
		/* What the software engine cannot beat: copying the round's bytes. */
		uint64_t bytes = (uint64_t)AG_WORLD * (AG_WORLD - 1) * AG_CHUNKS * AG_CHUNK_BYTES;
		double ns = memcpy_wall_ns(bytes);
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		printf("all-gather bound: one memcpy of the %" PRIu64 " B a round moves takes %.1f us here: at most %.1f rounds/s on one CPU, %.1f on all %ld, if the engine did nothing but copy\n",
		       bytes, ns / 1e3, 1e9 / ns, cpus * 1e9 / ns, cpus);
	}

	printf("# all-gather bandwidth, %u ranks, one chunk per rank: start + mark + wait\n"
	       "# against one memcpy of every byte the round moves (world x (world-1) parts)\n",
	       BW_WORLD);
	printf("%10s %12s %10s %10s %10s %10s %12s\n", "part", "round_bytes", "round_us",
	       "engine_MBs", "memcpy_us", "memcpy_MBs", "engine/memcpy");
	if (run_ranks(BW_WORLD, bw_rank, 0)) {
		printf("FAILED: %s\n", sh->why);
		return 1;
	}
	{
		uint32_t pi;

		for (pi = 0; pi < NPARTS; pi++) {
			uint64_t bytes = (uint64_t)BW_WORLD * (BW_WORLD - 1) * bw_parts[pi];
			struct bw *b = &sh->bw[pi];

			b->memcpy_ns = memcpy_wall_ns(bytes);
			printf("%10" PRIu64 " %12" PRIu64 " %10.1f %10.1f %10.1f %10.1f %12.3f\n",
			       bw_parts[pi], bytes, b->round_ns / 1e3, bytes * 1e3 / b->round_ns,
			       b->memcpy_ns / 1e3, bytes * 1e3 / b->memcpy_ns,
			       (double)b->memcpy_ns / b->round_ns);
		}
	}
	printf("# plan_bench took %.0f s\n", (now_ns() - t_start) / 1e9);
	return 0;
}
