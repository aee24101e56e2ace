// SPDX-License-Identifier: MIT
/*
 * put_bench: host put on the soft engine, measured against what the same
 * machine does with memcpy, all in one run.
 *
 *   1. bandwidth of put + quiet, 4 KiB .. 64 MiB, rank 0 -> rank 1, next
 *      to memcpy of the same size between the same two heaps (through
 *      their mappings);
 *   2. latency of one small copy: put + quiet of 64 B (the host's view),
 *      and mark-to-arrival: rank 0 stamps the time and does a signalled
 *      put, rank 1 spins on the signal word and stamps its arrival;
 *   3. mark-to-arrival through a prepared chain (POLL on a gate in rank
 *      0's heap, a 64 B copy, ATOMIC on rank 1's arrival word): rank 0
 *      stamps the time and opens the gate as a producer's mark_ready
 *      would, rank 1 stamps the arrival; once right after queueing (the
 *      engine still spins on the POLL) and once after 20 ms (the engine
 *      has backed off to sleeping between polls);
 *   4. CPU time of the engine threads (tplan-g<group>/<src>) over
 *      an interval with nothing queued, and over one where a chain waits
 *      on a gate that stays shut.
 *
 * Ranks are two forked processes; they share a small anonymous mapping for
 * time stamps.  Usage: put_bench [idle seconds, default 10]
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "libtplan.h"
#include "tplan_sdma.h"
#include "engine_threads.h"

#define MAX_SIZE (64ULL << 20)
/* Room for the largest copy plus the kernel's gate area at the top. */
#define HEAP (MAX_SIZE + (8ULL << 20))
#define LAT_ITERS 200

struct shared {
	volatile uint64_t phase;
	volatile uint64_t mark_ns[LAT_ITERS];
	volatile uint64_t arrive_ns[LAT_ITERS];
	volatile int failed;
	volatile uint64_t chain_phase;
};

#define CHAIN_ITERS 100

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void wait_phase(struct shared *sh, uint64_t phase)
{
	while (__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) < phase && !sh->failed)
		usleep(100);
}

#define CHECK(call)								\
	do {									\
		int _r = (call);						\
		if (_r) {							\
			fprintf(stderr, "put_bench: %s: %s (%s)\n", #call,	\
				strerror(-_r), tplan_ctx_error(ctx));		\
			sh->failed = 1;						\
			return 1;						\
		}								\
	} while (0)

/* Bytes moved per size: enough repetitions to time, bounded for TCG. */
static unsigned int reps_for(uint64_t size)
{
	uint64_t r = (32ULL << 20) / size;

	return r < 3 ? 3 : r > 2000 ? 2000 : (unsigned int)r;
}

static int sender(struct tplan_ctx *ctx, struct shared *sh, uint64_t signal_off)
{
	unsigned char *src = tplan_heap_ptr(ctx, 0), *dst = tplan_heap_ptr(ctx, 1);
	uint64_t size, t0, put_ns, cpy_ns, lat[LAT_ITERS];
	unsigned int i, reps;

	memset(src, 0x5a, MAX_SIZE);
	printf("# put + quiet, rank 0 -> rank 1, against memcpy between the same heaps\n");
	printf("%10s %6s %14s %14s %12s\n", "size", "reps", "put MB/s", "memcpy MB/s", "put/memcpy");
	for (size = 4096; size <= MAX_SIZE; size *= 4) {
		reps = reps_for(size);
		CHECK(tplan_put(ctx, 1, 0, 0, size));	/* warm: queue and pages */
		CHECK(tplan_quiet(ctx, 1, 0));
		t0 = now_ns();
		for (i = 0; i < reps; i++) {
			CHECK(tplan_put(ctx, 1, 0, 0, size));
			CHECK(tplan_quiet(ctx, 1, 0));
		}
		put_ns = now_ns() - t0;
		memcpy(dst, src, size);
		t0 = now_ns();
		for (i = 0; i < reps; i++) {
			memcpy(dst, src, size);
			/* Keep the compiler from merging the copies. */
			__asm__ __volatile__("" : : "r"(dst) : "memory");
		}
		cpy_ns = now_ns() - t0;
		printf("%10" PRIu64 " %6u %14.1f %14.1f %12.3f\n", size, reps,
		       (double)size * reps * 1e3 / (double)put_ns,
		       (double)size * reps * 1e3 / (double)cpy_ns, (double)cpy_ns / (double)put_ns);
	}

	for (i = 0; i < LAT_ITERS; i++) {
		t0 = now_ns();
		CHECK(tplan_put(ctx, 1, 0, 0, 64));
		CHECK(tplan_quiet(ctx, 1, 0));
		lat[i] = now_ns() - t0;
	}
	qsort(lat, LAT_ITERS, sizeof(lat[0]), cmp_u64);
	printf("# latency of one 64 B copy\n");
	printf("put + quiet (host round trip):   median %8.1f us, p90 %8.1f us\n",
	       lat[LAT_ITERS / 2] / 1e3, lat[LAT_ITERS * 9 / 10] / 1e3);

	/* Mark to arrival: the receiver sees the signal move. */
	__atomic_store_n(&sh->phase, 1, __ATOMIC_RELEASE);
	for (i = 0; i < LAT_ITERS; i++) {
		wait_phase(sh, 2 + 2 * i);	/* the receiver is spinning */
		src[0] = (unsigned char)i;
		sh->mark_ns[i] = now_ns();
		CHECK(tplan_put_signal(ctx, 1, 0, 0, 64, signal_off));
		CHECK(tplan_quiet(ctx, 1, 0));
	}
	wait_phase(sh, 2 + 2 * LAT_ITERS);
	for (i = 0; i < LAT_ITERS; i++)
		lat[i] = sh->arrive_ns[i] - sh->mark_ns[i];
	qsort(lat, LAT_ITERS, sizeof(lat[0]), cmp_u64);
	printf("mark to arrival (put_signal):    median %8.1f us, p90 %8.1f us\n",
	       lat[LAT_ITERS / 2] / 1e3, lat[LAT_ITERS * 9 / 10] / 1e3);
	return 0;
}

/*
 * One prepared chain to rank 1: POLL(gate >= ref), COPY 64 B, ATOMIC +1 on
 * the arrival word, through TPLAN_IOC_CHAIN_SUBMIT.
 */
static int submit_chain(struct tplan_ctx *ctx, uint64_t gate_off, uint64_t arrival_off,
			uint32_t ref)
{
	uint64_t own = tplan_heap_devaddr(ctx, 0), peer = tplan_heap_devaddr(ctx, 1);
	struct tplan_sdma_poll_regmem poll = {
		.addr = own + gate_off, .mask = 0xffffffffU, .func = TPLAN_SDMA_FUNC_GE,
		.mem_poll = 1, .interval = 4, .retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	struct tplan_sdma_copy_linear copy = { .src = own + 4096, .dst = peer + 4096, .bytes = 64 };
	struct tplan_sdma_atomic add = {
		.addr = peer + arrival_off, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	uint32_t dw[32], n = 0;
	struct tplan_chain_desc desc;
	struct tplan_chain_submit sub;

	n += tplan_sdma_encode_poll_regmem(dw + n, 32 - n, &poll);
	n += tplan_sdma_encode_copy_linear(dw + n, 32 - n, &copy);
	n += tplan_sdma_encode_atomic(dw + n, 32 - n, &add);
	desc = (struct tplan_chain_desc){ .ndw = n, .ref = ref, .ready_offset = gate_off,
					  .arrival_offset = arrival_off };
	sub = (struct tplan_chain_submit){ .size = sizeof(sub), .peer = 1, .nchains = 1,
					   .chains = (uintptr_t)&desc, .dwords = (uintptr_t)dw,
					   .ndw = n };
	return ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_CHAIN_SUBMIT, &sub) ? -errno : 0;
}

static void chain_wait(struct shared *sh, uint64_t phase)
{
	while (__atomic_load_n(&sh->chain_phase, __ATOMIC_ACQUIRE) < phase && !sh->failed)
		usleep(100);
}

/* Rank 0: queue a chain, let the engine settle, then open the gate. */
static int chain_sender(struct tplan_ctx *ctx, struct shared *sh, uint64_t gate_off,
			uint64_t arrival_off, unsigned int settle_us, const char *what)
{
	uint64_t *gate = (uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + gate_off);
	uint64_t lat[CHAIN_ITERS], base = __atomic_load_n(gate, __ATOMIC_ACQUIRE);
	unsigned int i;

	for (i = 0; i < CHAIN_ITERS; i++) {
		CHECK(submit_chain(ctx, gate_off, arrival_off, (uint32_t)(base + i + 1)));
		chain_wait(sh, 2 * (base + i) + 1);	/* the receiver is watching */
		if (settle_us)
			usleep(settle_us);
		sh->mark_ns[i] = now_ns();
		/* What mark_ready does: the gate opens with a release store. */
		__atomic_store_n(gate, base + i + 1, __ATOMIC_RELEASE);
		chain_wait(sh, 2 * (base + i) + 2);
		lat[i] = sh->arrive_ns[i] - sh->mark_ns[i];
	}
	qsort(lat, CHAIN_ITERS, sizeof(lat[0]), cmp_u64);
	printf("mark to arrival (chain, %s): median %8.1f us, p90 %8.1f us\n", what,
	       lat[CHAIN_ITERS / 2] / 1e3, lat[CHAIN_ITERS * 9 / 10] / 1e3);
	return 0;
}

/* Rank 1: announce it is watching, spin on the arrival word. */
static void chain_receiver(struct tplan_ctx *ctx, struct shared *sh, uint64_t arrival_off,
			   unsigned int rounds)
{
	volatile uint64_t *arrival = (uint64_t *)((char *)tplan_heap_ptr(ctx, 1) + arrival_off);
	unsigned int i;

	for (i = 0; i < rounds && !sh->failed; i++) {
		__atomic_store_n(&sh->chain_phase, 2 * i + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(arrival, __ATOMIC_ACQUIRE) < i + 1 && !sh->failed)
			sched_yield();
		sh->arrive_ns[i % CHAIN_ITERS] = now_ns();
		__atomic_store_n(&sh->chain_phase, 2 * i + 2, __ATOMIC_RELEASE);
	}
}

static int receiver(struct tplan_ctx *ctx, struct shared *sh, uint64_t signal_off)
{
	volatile uint64_t *sig = (uint64_t *)((char *)tplan_heap_ptr(ctx, 1) + signal_off);
	struct tplan_queue_info qi;
	uint64_t base;
	unsigned int i;

	/* Its own queue exists too, idle: the idle figure counts both engines. */
	tplan_queue_info(ctx, 0, &qi);
	wait_phase(sh, 1);
	base = __atomic_load_n(sig, __ATOMIC_ACQUIRE);
	for (i = 0; i < LAT_ITERS && !sh->failed; i++) {
		__atomic_store_n(&sh->phase, 2 + 2 * i, __ATOMIC_RELEASE);
		/* Yield, so that on few CPUs the engine thread is not starved. */
		while (__atomic_load_n(sig, __ATOMIC_ACQUIRE) < base + i + 1 && !sh->failed)
			sched_yield();
		sh->arrive_ns[i] = now_ns();
	}
	__atomic_store_n(&sh->phase, 2 + 2 * LAT_ITERS, __ATOMIC_RELEASE);
	chain_receiver(ctx, sh, signal_off - 64, 2 * CHAIN_ITERS);
	return 0;
}

/* CPU ticks (utime + stime) of the newest group's engine threads (this one's). */
static int engine_ticks(uint64_t *ticks, unsigned int *threads)
{
	pid_t pids[128];
	unsigned long long t;
	int i, n = engine_pids(pids, 128);

	if (n < 0)
		return n;
	*ticks = 0;
	*threads = 0;
	for (i = 0; i < n; i++) {
		if (engine_thread_ticks(pids[i], &t))
			continue;
		*ticks += t;
		(*threads)++;
	}
	return 0;
}

static int engines_cpu(unsigned int seconds, const char *what)
{
	uint64_t before, after;
	unsigned int n0, n1;
	long hz = sysconf(_SC_CLK_TCK);

	if (engine_ticks(&before, &n0))
		return 1;
	sleep(seconds);
	engine_ticks(&after, &n1);
	printf("%s CPU over %u s: %u threads, %" PRIu64 " ticks = %.1f ms (%.4f%% of one CPU)\n",
	       what, seconds, n1, after - before, (double)(after - before) * 1e3 / (double)hz,
	       (double)(after - before) * 100.0 / (double)hz / seconds);
	return 0;
}

/*
 * Engine CPU time with nothing queued, then with a chain whose gate stays
 * shut (the engine polls it, backing off), then the gate opens.
 */
static int idle_engines(struct tplan_ctx *ctx, struct shared *sh,
			uint64_t gate_off, uint64_t arrival_off, unsigned int seconds)
{
	uint64_t *gate = (uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + gate_off);
	uint64_t next = __atomic_load_n(gate, __ATOMIC_ACQUIRE) + 1;
	struct tplan_queue_info qi;

	/* QUEUE_INFO creates the queue, so its engine thread exists and idles. */
	tplan_queue_info(ctx, 1, &qi);
	printf("# engine threads of this group (tplan-g<id>/*, the newest id)\n");
	if (engines_cpu(seconds, "idle"))
		return 1;
	CHECK(submit_chain(ctx, gate_off, arrival_off, (uint32_t)next));
	if (engines_cpu(seconds, "polling a shut gate"))
		return 1;
	__atomic_store_n(gate, next, __ATOMIC_RELEASE);
	/* Until the engine passes the POLL the chain is still prepared (EBUSY). */
	do {
		usleep(1000);
		CHECK(tplan_queue_info(ctx, 1, &qi));
	} while (qi.prep_charged);
	CHECK(tplan_quiet(ctx, 1, 0));
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int idle_s = argc > 1 ? (unsigned int)atoi(argv[1]) : 10;
	struct tplan_join_params jp = {
		.world_size = 2, .heap_size = HEAP, .timeout_ms = 60000,
	};
	struct shared *sh;
	struct tplan_ctx *ctx;
	pid_t child;
	uint64_t signal_off;
	int ret, status;

	jp.key = 0xbe0c000000000000ULL | ((uint64_t)getpid() << 8);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	fflush(stdout);
	child = fork();
	if (child < 0)
		return 1;
	jp.rank = child == 0;
	ret = tplan_ctx_open(&ctx, NULL);
	if (ret) {
		fprintf(stderr, "put_bench: open: %s\n", strerror(-ret));
		return ret == -ENOENT ? 4 : 1;
	}
	ret = tplan_ctx_join(ctx, &jp);
	if (ret) {
		fprintf(stderr, "put_bench: join: %s\n", tplan_ctx_error(ctx));
		return 1;
	}
	/* The signal word: the last 8 bytes the application may use. */
	signal_off = (tplan_heap_gate_area(ctx) - 8) & ~7ULL;
	if (signal_off < MAX_SIZE) {
		fprintf(stderr, "put_bench: no room for the signal word\n");
		return 1;
	}
	if (child == 0) {
		ret = receiver(ctx, sh, signal_off);
		tplan_barrier(ctx, 0);
		tplan_ctx_close(ctx);
		_exit(ret);
	}
	ret = sender(ctx, sh, signal_off);
	if (!ret) {
		printf("# mark to arrival through a prepared chain (the engine polls the gate)\n");
		ret = chain_sender(ctx, sh, signal_off - 128, signal_off - 64, 0, "engine spinning");
	}
	if (!ret)
		ret = chain_sender(ctx, sh, signal_off - 128, signal_off - 64, 20000,
				   "engine backed off");
	if (!ret)
		ret = idle_engines(ctx, sh, signal_off - 128, signal_off - 64, idle_s);
	tplan_barrier(ctx, 0);
	tplan_ctx_close(ctx);
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ret = 1;
	return ret;
}
