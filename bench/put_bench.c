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
 *   3. CPU time of idle engine threads (tplan-q<key>/<src>-<dst>) over
 *      a quiet interval.
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
#include <sys/mman.h>
#include <sys/wait.h>

#include "libtplan.h"

#define MAX_SIZE (64ULL << 20)
/* Room for the largest copy plus the kernel's gate area at the top. */
#define HEAP (MAX_SIZE + (8ULL << 20))
#define LAT_ITERS 200

struct shared {
	volatile uint64_t phase;
	volatile uint64_t mark_ns[LAT_ITERS];
	volatile uint64_t arrive_ns[LAT_ITERS];
	volatile int failed;
};

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
	return 0;
}

/* CPU ticks (utime + stime) of the kernel threads named tplan-q<key4>/. */
static int engine_ticks(uint64_t key, uint64_t *ticks, unsigned int *threads)
{
	char prefix[32], path[300], comm[64], stat[512], *p;
	struct dirent *de;
	DIR *d = opendir("/proc");
	FILE *f;

	if (!d)
		return -errno;
	snprintf(prefix, sizeof(prefix), "tplan-q%04" PRIx64 "/", key & 0xffff);
	*ticks = 0;
	*threads = 0;
	while ((de = readdir(d))) {
		unsigned long ut, st;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		if (strncmp(comm, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = 0;
		fclose(f);
		/* Fields 14 and 15, counted after the ")" that ends the name. */
		p = strrchr(stat, ')');
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st) == 2) {
			*ticks += ut + st;
			(*threads)++;
		}
	}
	closedir(d);
	return 0;
}

static int idle_engines(struct tplan_ctx *ctx, uint64_t key, unsigned int seconds)
{
	struct tplan_queue_info qi;
	uint64_t before, after;
	unsigned int n0, n1;
	long hz = sysconf(_SC_CLK_TCK);

	/* QUEUE_INFO creates the queue, so its engine thread exists and idles. */
	tplan_queue_info(ctx, 1, &qi);
	if (engine_ticks(key, &before, &n0))
		return 1;
	sleep(seconds);
	engine_ticks(key, &after, &n1);
	printf("# idle engine threads of this group (tplan-q%04" PRIx64 "/*)\n", key & 0xffff);
	printf("idle CPU over %u s: %u threads, %" PRIu64 " ticks = %.1f ms (%.4f%% of one CPU)\n",
	       seconds, n1, after - before, (double)(after - before) * 1e3 / (double)hz,
	       (double)(after - before) * 100.0 / (double)hz / seconds);
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
	if (!ret)
		ret = idle_engines(ctx, jp.key, idle_s);
	tplan_barrier(ctx, 0);
	tplan_ctx_close(ctx);
	waitpid(child, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ret = 1;
	return ret;
}
