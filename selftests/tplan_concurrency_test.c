// SPDX-License-Identifier: GPL-2.0
/*
 * Calls that run at once: no call holds a lock while it waits, so a plan
 * wait on one thread never holds up another thread's calls on the same
 * file, its mmap or its page faults; mmap and ioctls that copy to fresh
 * user memory run side by side without deadlock; many processes joining
 * and leaving one key at once leave nothing behind.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define PART 4096
#define RANKS_TIMEOUT_MS 120000

FIXTURE(conc) {
	int unused;
};

FIXTURE_SETUP(conc)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(conc)
{
}

/* ---- a wait holds nothing up -------------------------------------------- */

struct waiter {
	struct tp_plan *p;
	int ret;
	volatile int returned;
	volatile pid_t tid;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	w->ret = tp_wait(w->p, 100000, NULL, 0, NULL);
	__atomic_store_n(&w->returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Rank 0 waits for a round on one thread; its chunk is not marked yet, so
 * the wait sleeps.  Meanwhile another thread of rank 0 uses the same
 * file: heap info, queue info, plan state, an mmap of a heap, a barrier
 * with rank 1.  All of it happens while the wait still sleeps; then the
 * chunk is marked and the wait returns.
 */
static int rank_wait_alongside(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 1 };
	struct tplan_queue_info qi;
	struct waiter w = { 0 };
	struct tplan_ctx *ctx;
	struct tp_plan p;
	pthread_t t;
	uint32_t state;
	void *m;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, PART * env->world, env->rank * PART, PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, 1, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_start(&p, NULL));
	if (env->rank == 1) {
		tp_mark(&p, 0, 1);
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
		goto out;
	}
	w.p = &p;
	RANK_OK(-pthread_create(&t, NULL, wait_thread, &w));
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		tplan_sleep_ms(1);
	/* The waiter sleeps in the kernel now. */
	RANK_OK(tplan_test_wait_blocked(w.tid, 20000));
	RANK_OK(tplan_test_ioctl(p.fd, TPLAN_IOC_HEAP_INFO, &hi));
	RANK_OK(tplan_queue_info(ctx, 1, &qi));
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_PREPARED, state);
	m = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd, (off_t)hi.mmap_offset);
	RANK_ASSERT(m != MAP_FAILED);
	munmap(m, HEAP);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	/* Every one of those returned while the wait was still asleep. */
	RANK_EQ(0, __atomic_load_n(&w.returned, __ATOMIC_ACQUIRE));
	tp_mark(&p, 0, 1);
	RANK_OK(-pthread_join(t, NULL));
	RANK_OK(w.ret);
out:
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(conc, plan_wait_holds_up_no_other_call_on_the_file, 180)
{
	RUN_RANKS(2, rank_wait_alongside, NULL, 170000);
}

/* ---- mmap against ioctls that copy to fresh memory -------------------------- */

#define RACE_MS 3000

struct racer {
	struct tplan_ctx *ctx;
	int fd;
	uint64_t mmap_off;
	int ret;
	uint64_t laps;
};

/* All-gathers into memory never touched before: the copy-out faults. */
static void *gather_thread(void *arg)
{
	struct racer *r = arg;
	uint64_t end = tplan_now_ms() + RACE_MS, in = 7;

	while (!r->ret && tplan_now_ms() < end) {
		void *out = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);

		if (out == MAP_FAILED) {
			r->ret = -errno;
			break;
		}
		r->ret = tplan_all_gather(r->ctx, &in, sizeof(in), out, 3000);
		if (!r->ret && ((uint64_t *)out)[1] != 7)
			r->ret = -EBADMSG;
		munmap(out, 4096);
		r->laps++;
	}
	return NULL;
}

/* Maps and unmaps a heap over and over (mmap_lock held for write). */
static void *mmap_thread(void *arg)
{
	struct racer *r = arg;
	uint64_t end = tplan_now_ms() + RACE_MS;

	while (!r->ret && tplan_now_ms() < end) {
		void *m = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
			       (off_t)r->mmap_off);

		if (m == MAP_FAILED) {
			r->ret = -errno;
			break;
		}
		munmap(m, HEAP);
		r->laps++;
	}
	return NULL;
}

/*
 * Two threads of each rank, one all-gathering into fresh memory (a page
 * fault inside the copy-out), one mapping heaps of the same file.  With a
 * lock held across the copy and taken in mmap, they deadlock (and lockdep
 * reports the inversion); here both just run.  Rank 1 all-gathers in step.
 */
static int rank_mmap_race(struct tplan_rank_env *env)
{
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 0 };
	struct racer g = { 0 }, m = { 0 };
	struct tplan_ctx *ctx;
	pthread_t tg, tm;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	RANK_OK(tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_HEAP_INFO, &hi));
	g.ctx = m.ctx = ctx;
	g.fd = m.fd = tplan_ctx_fd(ctx);
	m.mmap_off = hi.mmap_offset;
	RANK_OK(-pthread_create(&tg, NULL, gather_thread, &g));
	RANK_OK(-pthread_create(&tm, NULL, mmap_thread, &m));
	RANK_OK(-pthread_join(tg, NULL));
	RANK_OK(-pthread_join(tm, NULL));
	/*
	 * The two ranks stop at different laps: the last gather of one may
	 * time out, or meet the other rank gone.
	 */
	if (g.ret != 0 && g.ret != -ETIMEDOUT && g.ret != -ECONNRESET)
		RANK_FAIL("all-gather: %d after %llu laps", g.ret, (unsigned long long)g.laps);
	RANK_OK(m.ret);
	RANK_ASSERT(m.laps > 0 && g.laps > 0);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(conc, mmap_and_copy_out_on_one_file_run_side_by_side, 120)
{
	struct tplan_ranks r;
	int nf;

	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), rank_mmap_race, NULL));
	nf = tplan_ranks_wait(&r, 100000, 0);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	tplan_ranks_release(&r);
}

/* ---- a join storm on one key ----------------------------------------------------- */

#define STORM_PROCS 8
#define STORM_MS 4000

/*
 * Processes join the same key as rank 0 or 1 of 2 with timeouts of a few
 * milliseconds, over and over: groups form, time out, refuse duplicate
 * ranks (EADDRINUSE), complete and break, while others look them up.
 * Every join ends in one of those results, and no group is left.
 */
static int rank_storm(struct tplan_rank_env *env)
{
	uint64_t end = tplan_now_ms() + STORM_MS, n = 0;
	unsigned int seed = env->rank * 7919 + 1;
	int fd, ret;

	while (tplan_now_ms() < end) {
		fd = tplan_test_open();
		RANK_ASSERT(fd >= 0);
		ret = tplan_test_join_fd(fd, env->key, 2, rand_r(&seed) % 2, 64 << 10,
					 1 + rand_r(&seed) % 3);
		if (ret && ret != -ETIMEDOUT && ret != -EADDRINUSE && ret != -EINTR)
			RANK_FAIL("join: %d (%s)", ret, strerror(-ret));
		close(fd);
		n++;
	}
	RANK_ASSERT(n > 0);
	return 0;
}

TEST_F_TIMEOUT(conc, join_storm_on_one_key_leaves_no_group, 120)
{
	int64_t groups = -1;

	RUN_RANKS(STORM_PROCS, rank_storm, NULL, 100000);
	if (!tplan_debugfs_stat("groups", &groups))
		ASSERT_EQ(0, groups);
}

TEST_HARNESS_MAIN
