// SPDX-License-Identifier: GPL-2.0
/*
 * Joining on the KFD engine (libtplan/engine_kfd.c) over the tests' KFD
 * stand-in, the ranks threads of one process, as a framework's ranks may
 * be: they share the process's KFD process and so its GPU VMs (a second
 * rank on a GPU finds the VM acquired), and each rank's heap addresses
 * must stay clear of the others'.  Every rank's heap is GPU memory that
 * every rank reads and writes through tplan_heap_ptr() (the same dma-buf:
 * a write through one rank's mapping is what its owner reads), mapped at
 * its GPU address, the address map the library registered is what
 * TPLAN_IOC_HEAP_INFO says, a
 * put lands through the KFD queues, and joining and closing twenty times
 * leaves no file, mapping, GPU memory or module object behind.  The
 * join's KFD part also runs alone (kfd.c's heaps as dma-bufs, imported
 * by every rank), which needs no tplan.
 * SKIPs without /dev/tplan (but that last), /dev/kfd, or TPLAN_ENGINE_KFD
 * among the module's engines.
 */
#include <pthread.h>

#include "tplan_selftest.h"
#include "kfd_abi.h"
#include "kfd.h"

#define HEAP		(1U << 20)
#define PATTERN_WORDS	4096		/* 16 KiB at offset 0 of every heap */
#define MARK_OFF	(64U << 10)	/* one u64 per rank, written by the one before */
#define PUT_OFF		(128U << 10)	/* where a rank's pattern lands in the next heap */
#define MARK		0x6b66640000000000ULL
#define LEAK_ROUNDS	20
/*
 * Each GPU gets 64 MiB of heaps per join in the leak test: twenty joins'
 * worth is more than the stand-in's 1 GiB of "VRAM", so a heap that is
 * not freed makes a later join fail.  The debug kernel runs 4 joins:
 * kmemleak is what finds a lost kernel object there, and the files,
 * mappings and GPU memory of twenty are counted on the Debian kernels.
 */
#define LEAK_ROUNDS_DEBUG	4
#define LEAK_GPU_BYTES	(64ULL << 20)

struct kj_rank {
	unsigned int rank, world;
	uint64_t key, heap;
	uint32_t engine;		/* asked for: 0 lets the library choose */
	int line;			/* first failure; 0: none */
	char msg[320];
};

typedef void (*kj_fn)(struct kj_rank *r, struct tplan_ctx *ctx);

/* The first failure of a rank (threads: no harness ASSERTs). */
#define KJ_FAIL(r, fmt, ...)							\
	do {									\
		if (!(r)->line) {						\
			(r)->line = __LINE__;					\
			snprintf((r)->msg, sizeof((r)->msg), fmt, ##__VA_ARGS__); \
		}								\
		return;								\
	} while (0)
#define KJ_ASSERT(r, cond)							\
	do {									\
		if (!(cond))							\
			KJ_FAIL(r, "%s", #cond);				\
	} while (0)
#define KJ_OK(r, ctx, call)							\
	do {									\
		long long _v = (long long)(call);				\
		if (_v)								\
			KJ_FAIL(r, "%s: %lld (%s): %s", #call, _v,		\
				_v < 0 ? strerror((int)-_v) : "?", tplan_ctx_error(ctx)); \
	} while (0)

static void kj_join_and(struct kj_rank *r, kj_fn fn)
{
	struct tplan_join_params jp = {
		.key = r->key, .world_size = r->world, .rank = r->rank, .heap_size = r->heap,
		.engine = r->engine, .timeout_ms = TPLAN_TEST_TIMEOUT_MS,
	};
	struct tplan_ctx *ctx;
	int ret;

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret)
		KJ_FAIL(r, "tplan_ctx_open: %s", strerror(-ret));
	ret = tplan_ctx_engine(ctx);
	if (ret != -ENOTCONN) {
		snprintf(r->msg, sizeof(r->msg), "tplan_ctx_engine() before the join: %d", ret);
		r->line = __LINE__;
	} else if ((ret = tplan_ctx_join(ctx, &jp))) {
		snprintf(r->msg, sizeof(r->msg), "tplan_ctx_join: %s: %s", strerror(-ret),
			 tplan_ctx_error(ctx));
		r->line = __LINE__;
	} else if (tplan_ctx_engine(ctx) != TPLAN_ENGINE_KFD) {
		snprintf(r->msg, sizeof(r->msg), "tplan_ctx_engine(): %d", tplan_ctx_engine(ctx));
		r->line = __LINE__;
	} else {
		fn(r, ctx);
	}
	tplan_ctx_close(ctx);
}

struct kj_thread {
	struct kj_rank *r;
	kj_fn fn;
};

static void *kj_thread_main(void *arg)
{
	struct kj_thread *t = arg;

	kj_join_and(t->r, t->fn);
	return NULL;
}

/* Run fn on world ranks, threads of this process, of a fresh group; 0 or how many failed. */
static int kj_run(struct __test_metadata *_metadata, unsigned int world, uint64_t heap,
		  uint32_t engine, kj_fn fn)
{
	struct kj_rank r[TPLAN_RANKS_MAX];
	struct kj_thread t[TPLAN_RANKS_MAX];
	pthread_t tid[TPLAN_RANKS_MAX];
	uint64_t key = tplan_test_key();
	unsigned int i;
	int failed = 0;

	for (i = 0; i < world; i++) {
		r[i] = (struct kj_rank) {
			.rank = i, .world = world, .key = key, .heap = heap, .engine = engine,
		};
		t[i] = (struct kj_thread) { .r = &r[i], .fn = fn };
		if (pthread_create(&tid[i], NULL, kj_thread_main, &t[i])) {
			TH_LOG("pthread_create: %s", strerror(errno));
			world = i;
			failed++;
		}
	}
	for (i = 0; i < world; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < world; i++) {
		if (!r[i].line)
			continue;
		TH_LOG("rank %u, line %d: %s", i, r[i].line, r[i].msg);
		failed++;
	}
	return failed;
}

FIXTURE(kj) {
	struct tplan_info info;
};

FIXTURE_VARIANT(kj) {
	unsigned int world;
};

FIXTURE_VARIANT_ADD(kj, two) { .world = 2 };
FIXTURE_VARIANT_ADD(kj, three) { .world = 3 };

FIXTURE_SETUP(kj)
{
	struct tplan_ctx *ctx;
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (access(TPLAN_KFD_PATH, F_OK))
		SKIP(return, "%s absent: the KFD stand-in (kfd_standin.ko) is not loaded",
		     TPLAN_KFD_PATH);
	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(0, tplan_query_info(ctx, &self->info));
	tplan_ctx_close(ctx);
	/* The library reports KFD only where /dev/kfd opens, too. */
	if (!(self->info.engines & TPLAN_ENGINE_KFD))
		SKIP(return, "no TPLAN_ENGINE_KFD among the engines present (%#x)",
		     self->info.engines);
}

FIXTURE_TEARDOWN(kj)
{
}

/*
 * Every heap in the rank's map, page aligned, apart, as HEAP_INFO says,
 * mapped for the CPU at the same address; readable and writable.
 */
static void kj_heaps(struct kj_rank *r, struct tplan_ctx *ctx)
{
	unsigned int q, q2, next = (r->rank + 1) % r->world, prev;
	volatile uint64_t *mark;
	uint32_t *p;
	uint32_t i;

	prev = (r->rank + r->world - 1) % r->world;
	KJ_ASSERT(r, tplan_heap_gate_area(ctx) >= PUT_OFF + PATTERN_WORDS * 4);
	for (q = 0; q < r->world; q++) {
		struct tplan_heap_info hi = { .size = sizeof(hi), .rank = q };
		uint64_t dev = tplan_heap_devaddr(ctx, q);

		KJ_ASSERT(r, dev != 0 && dev % 4096 == 0 && dev + r->heap <= 1ULL << 47);
		/* The CPU maps it at its GPU address: a gate's address serves both. */
		KJ_ASSERT(r, tplan_heap_ptr(ctx, q) == (void *)(uintptr_t)dev);
		KJ_OK(r, ctx, tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_HEAP_INFO, &hi));
		if (hi.heap_base != dev || hi.heap_size != r->heap)
			KJ_FAIL(r, "rank %u's heap: registered %#llx, HEAP_INFO %#llx (%llu bytes)",
				q, (unsigned long long)dev, (unsigned long long)hi.heap_base,
				(unsigned long long)hi.heap_size);
		for (q2 = 0; q2 < q; q2++) {
			uint64_t d2 = tplan_heap_devaddr(ctx, q2);

			if (dev < d2 + r->heap && d2 < dev + r->heap)
				KJ_FAIL(r, "heaps of ranks %u and %u overlap: %#llx, %#llx", q2, q,
					(unsigned long long)d2, (unsigned long long)dev);
		}
	}
	/*
	 * The module reaches every heap as I/O memory, as amdgpu's VRAM maps
	 * for the kernel (the stand-in's does the same).
	 */
	if (r->rank == 0 && !access(TPLAN_DEBUGFS, F_OK)) {
		char dir[160], path[192], val[32];

		KJ_OK(r, ctx, tplan_debugfs_group_dir(r->key, dir, sizeof(dir)));
		snprintf(path, sizeof(path), "%.160s/group", dir);
		KJ_OK(r, ctx, tplan_debugfs_file_field(path, "heaps_iomem", val, sizeof(val)));
		if (strtoul(val, NULL, 0) != (1UL << r->world) - 1)
			KJ_FAIL(r, "heaps the module reaches as I/O memory: %s, not every rank's", val);
	}
	/* Each rank writes its own heap; every rank reads every heap. */
	p = tplan_heap_ptr(ctx, r->rank);
	for (i = 0; i < PATTERN_WORDS; i++)
		p[i] = r->rank << 24 | i;
	KJ_OK(r, ctx, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	for (q = 0; q < r->world; q++) {
		p = tplan_heap_ptr(ctx, q);
		for (i = 0; i < PATTERN_WORDS; i++)
			if (p[i] != (q << 24 | i))
				KJ_FAIL(r, "rank %u's heap word %u: %#x, not %#x", q, i, p[i],
					q << 24 | i);
	}
	/* Each rank writes into the next rank's heap through its own mapping of it. */
	mark = (volatile uint64_t *)((char *)tplan_heap_ptr(ctx, next) + MARK_OFF);
	mark[r->rank] = MARK | r->rank;
	KJ_OK(r, ctx, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	mark = (volatile uint64_t *)((char *)tplan_heap_ptr(ctx, r->rank) + MARK_OFF);
	if (mark[prev] != (MARK | prev))
		KJ_FAIL(r, "rank %u's write into this heap: %#llx", prev,
			(unsigned long long)mark[prev]);
	KJ_OK(r, ctx, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
}

TEST_F_TIMEOUT(kj, every_heap_is_gpu_memory_every_rank_maps, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(0, kj_run(_metadata, variant->world, HEAP, TPLAN_ENGINE_KFD, kj_heaps));
}

/* A put from each rank to the next, through the KFD queue, lands. */
static void kj_put(struct kj_rank *r, struct tplan_ctx *ctx)
{
	unsigned int next = (r->rank + 1) % r->world, prev = (r->rank + r->world - 1) % r->world;
	uint32_t *p = tplan_heap_ptr(ctx, r->rank), i;
	uint64_t t0 = tplan_now_ms(), t1;
	int ret;

	for (i = 0; i < PATTERN_WORDS; i++)
		p[i] = ~(r->rank << 24 | i);
	KJ_OK(r, ctx, tplan_put(ctx, next, 0, PUT_OFF, PATTERN_WORDS * 4));
	KJ_OK(r, ctx, tplan_quiet(ctx, next, TPLAN_TEST_TIMEOUT_MS));
	t1 = tplan_now_ms();
	ret = tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS);
	if (ret)
		KJ_FAIL(r, "barrier after put and quiet (%llu ms, barrier %llu ms): %s",
			(unsigned long long)(t1 - t0), (unsigned long long)(tplan_now_ms() - t1),
			tplan_ctx_error(ctx));
	p = (uint32_t *)((char *)tplan_heap_ptr(ctx, r->rank) + PUT_OFF);
	for (i = 0; i < PATTERN_WORDS; i++)
		if (p[i] != ~(prev << 24 | i))
			KJ_FAIL(r, "word %u of rank %u's put: %#x", i, prev, p[i]);
	KJ_OK(r, ctx, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
}

TEST_F_TIMEOUT(kj, a_put_lands_through_the_kfd_queues, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	/* Asked for by the environment, as a run of the other tests would. */
	ASSERT_EQ(0, setenv("TPLAN_ENGINE", "kfd", 1));
	ASSERT_EQ(0, kj_run(_metadata, variant->world, HEAP, 0, kj_put));
}

static void kj_touch(struct kj_rank *r, struct tplan_ctx *ctx)
{
	volatile uint64_t *mark;

	mark = (volatile uint64_t *)((char *)tplan_heap_ptr(ctx, (r->rank + 1) % r->world) +
				     MARK_OFF);
	mark[r->rank] = MARK | r->rank;
	KJ_OK(r, ctx, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
}

/* Lines of a /proc/self file. */
static int kj_count_lines(const char *path)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static int kj_count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* A tplan/stats number back at want within 5 s (a rank's release may finish late); its value. */
static int64_t kj_stat_settles(const char *name, int64_t want)
{
	uint64_t end = tplan_now_ms() + 5000;
	int64_t v = want;

	while (!tplan_debugfs_stat(name, &v) && v != want && tplan_now_ms() < end)
		tplan_sleep_ms(10);
	return v;
}

TEST_F_TIMEOUT(kj, join_and_close_twenty_times_leaves_nothing, 600)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int64_t groups = -1, queues = -1, bytes = -1;
	int fds, maps, kfd, round, rounds = tplan_test_debug_kernel() ? LEAK_ROUNDS_DEBUG : LEAK_ROUNDS;
	/* Ranks on GPU 0 of the stand-in's two: 1 of 2, 2 of 3. */
	uint64_t heap = LEAK_GPU_BYTES / (variant->world - 1);

	/* Whatever the environment says, the library's own choice: KFD here. */
	ASSERT_EQ(0, unsetenv("TPLAN_ENGINE"));
	ASSERT_EQ(0, unsetenv("TPLAN_KFD_GPU"));
	if (rounds != LEAK_ROUNDS)
		TH_LOG("debug kernel: %d joins (%d on the Debian kernels)", rounds, LEAK_ROUNDS);
	/*
	 * KFD frees a process's buffers when its last /dev/kfd closes, which
	 * would hide a buffer the library forgot: this one keeps the process.
	 */
	kfd = open(TPLAN_KFD_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, kfd);
	tplan_debugfs_stat("groups", &groups);
	tplan_debugfs_stat("queues", &queues);
	tplan_debugfs_stat("bytes", &bytes);
	/* The first join's mappings and files that stay (the harness's, libc's) are counted after it. */
	ASSERT_EQ(0, kj_run(_metadata, variant->world, heap, 0, kj_touch));
	fds = kj_count_fds();
	maps = kj_count_lines("/proc/self/maps");
	for (round = 1; round < rounds; round++) {
		if (kj_run(_metadata, variant->world, heap, 0, kj_touch)) {
			TH_LOG("join %d of %d failed", round + 1, rounds);
			ASSERT_TRUE(0);
		}
	}
	EXPECT_EQ(fds, kj_count_fds());
	EXPECT_EQ(maps, kj_count_lines("/proc/self/maps"));
	if (groups >= 0) {
		EXPECT_EQ(groups, kj_stat_settles("groups", groups));
		EXPECT_EQ(queues, kj_stat_settles("queues", queues));
		EXPECT_EQ(bytes, kj_stat_settles("bytes", bytes));
	}
	close(kfd);
}

/* ---- The join's KFD part alone (libtplan/kfd.c), no tplan ---------------------------- */

/* Two "ranks" of one process on one GPU and one on another: each a /dev/kfd of its own. */
#define KH_RANKS 3

struct kh_rank {
	struct tplan_kfd k;
	uint32_t gpu;
	uint64_t va[KH_RANKS];		/* where each heap is in this rank's GPU VM */
	uint64_t handle[KH_RANKS];
	uint32_t *cpu[KH_RANKS];	/* this rank's mapping of each heap */
};

FIXTURE(kheap) {
	struct kh_rank r[KH_RANKS];
	int fd[KH_RANKS];		/* the heaps' dma-bufs */
};

/* Reserved address space, 2 MiB aligned, as the library takes for a heap. */
static uint64_t kh_va(void)
{
	char *p = mmap(NULL, HEAP + (2U << 20), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t va;

	if (p == MAP_FAILED)
		return 0;
	va = ((uintptr_t)p + (2U << 20) - 1) & ~((2ULL << 20) - 1);
	munmap(p, va - (uintptr_t)p);
	munmap((char *)(uintptr_t)va + HEAP, (uintptr_t)p + HEAP + (2U << 20) - va - HEAP);
	return va;
}

FIXTURE_SETUP(kheap)
{
	int i, ret;

	memset(self->r, 0, sizeof(self->r));
	for (i = 0; i < KH_RANKS; i++) {
		self->r[i].k.fd = -1;
		self->fd[i] = -1;
	}
	ret = tplan_kfd_open(&self->r[0].k, NULL);
	if (ret == -ENOENT || ret == -ENODEV)
		SKIP(return, "%s absent: the KFD stand-in (kfd_standin.ko) is not loaded",
		     TPLAN_KFD_PATH);
	ASSERT_EQ(0, ret);
	for (i = 1; i < KH_RANKS; i++)
		ASSERT_EQ(0, tplan_kfd_open(&self->r[i].k, NULL));
	/* Ranks 0 and 1 share GPU 0: the second finds the process's VM acquired. */
	self->r[1].gpu = 0;
	self->r[2].gpu = self->r[0].k.ngpus > 1 ? 1 : 0;
	for (i = 0; i < KH_RANKS; i++)
		ASSERT_EQ(0, tplan_kfd_acquire_vm(&self->r[i].k, self->r[i].gpu));
}

FIXTURE_TEARDOWN(kheap)
{
	int i, j;

	for (i = 0; i < KH_RANKS; i++) {
		struct kh_rank *r = &self->r[i];

		for (j = 0; j < KH_RANKS; j++) {
			if (r->handle[j]) {
				tplan_kfd_unmap(&r->k, r->gpu, r->handle[j]);
				tplan_kfd_free(&r->k, r->handle[j]);
			}
			if (r->cpu[j])
				munmap(r->cpu[j], HEAP);
			if (r->va[j])
				munmap((void *)(uintptr_t)r->va[j], HEAP);
		}
		if (self->fd[i] >= 0)
			close(self->fd[i]);
		if (r->k.fd >= 0)
			tplan_kfd_close(&r->k);
	}
}

/*
 * Each rank's heap made in its GPU's memory, every heap imported into
 * every rank's GPU VM at the rank's own addresses and mapped for the CPU
 * through its dma-buf: a write through one mapping is read through the
 * others; then all of it undone, twice over, in the order the library
 * leaves (a buffer left behind would hold its addresses in the VM).
 */
TEST_F(kheap, heaps_are_dmabufs_every_rank_imports)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int round, i, j;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < KH_RANKS; i++) {
			struct kh_rank *r = &self->r[i];

			r->va[i] = kh_va();
			ASSERT_NE(0, r->va[i]);
			ASSERT_EQ(0, tplan_kfd_heap_create(&r->k, r->gpu, HEAP, r->va[i],
							   &r->handle[i], &self->fd[i]));
			ASSERT_LE(0, self->fd[i]);
			/* KFD 1.12 exports its own buffer; 1.11 the render node's. */
			ASSERT_EQ(r->k.minor >= 12, r->handle[i] != 0);
		}
		for (i = 0; i < KH_RANKS; i++) {
			struct kh_rank *r = &self->r[i];

			for (j = 0; j < KH_RANKS; j++) {
				if (j != i)
					r->va[j] = kh_va();
				ASSERT_NE(0, r->va[j]);
				if (!r->handle[j])
					ASSERT_EQ(0, tplan_kfd_import(&r->k, r->gpu, self->fd[j],
								      r->va[j], &r->handle[j]));
				ASSERT_EQ(0, tplan_kfd_map(&r->k, r->gpu, r->handle[j]));
				r->cpu[j] = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED,
						 self->fd[j], 0);
				ASSERT_NE(MAP_FAILED, r->cpu[j]);
			}
		}
		/* Rank i writes word i of every heap; everyone reads them all. */
		for (i = 0; i < KH_RANKS; i++)
			for (j = 0; j < KH_RANKS; j++)
				self->r[i].cpu[j][i] = 0x6b660000 | i << 8 | j;
		for (i = 0; i < KH_RANKS; i++)
			for (j = 0; j < KH_RANKS; j++) {
				int w;

				for (w = 0; w < KH_RANKS; w++)
					ASSERT_EQ(0x6b660000U | w << 8 | j, self->r[i].cpu[j][w]);
			}
		/* Off the GPU, freed, unmapped: the addresses are free again. */
		for (i = 0; i < KH_RANKS; i++) {
			struct kh_rank *r = &self->r[i];

			for (j = 0; j < KH_RANKS; j++) {
				ASSERT_EQ(0, tplan_kfd_unmap(&r->k, r->gpu, r->handle[j]));
				ASSERT_EQ(0, tplan_kfd_free(&r->k, r->handle[j]));
				r->handle[j] = 0;
				ASSERT_EQ(0, munmap(r->cpu[j], HEAP));
				r->cpu[j] = NULL;
				ASSERT_EQ(0, munmap((void *)(uintptr_t)r->va[j], HEAP));
				r->va[j] = 0;
			}
		}
		for (i = 0; i < KH_RANKS; i++) {
			ASSERT_EQ(0, close(self->fd[i]));
			self->fd[i] = -1;
		}
	}
}

TEST_HARNESS_MAIN
