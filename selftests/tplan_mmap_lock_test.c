// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of a file while another thread of the process is in an ioctl on
 * that file, where the in-VM fuzzer found workers that never return and
 * cannot be killed.  The module takes the file's lock in mmap, under the
 * process's mmap lock, and holds the file's lock across an ioctl that
 * waits and then writes to user memory, which may fault and need the mmap
 * lock: a lock-order inversion.
 *
 * Rank 0's thread A waits in an all-gather for rank 1 (the file's lock
 * held), its output in pages never touched; thread B maps the heap (the
 * mmap lock held, then waiting for the file's lock); then rank 1 joins the
 * all-gather.  A must finish: it copies the result out, which faults.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "tplan_selftest.h"

#define HEAP (1U << 20)
#define BLOB 4096
#define RANKS_TIMEOUT_MS 100000
#define SETTLE_MS 10000		/* generous: the host is slow and shared */

/* shared words */
#define W_GO		0		/* rank 1 may join the all-gather */
#define W_A_DONE	1		/* 1000 + thread A's result */
#define W_B_DONE	2		/* 1 once thread B's mmap returned */

FIXTURE(mmap_lock) {
	int unused;
};

FIXTURE_SETUP(mmap_lock)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(mmap_lock)
{
}

struct rank0 {
	struct tplan_rank_env *env;
	struct tplan_ctx *ctx;
	void *out;		/* never touched: the copy out faults */
	uint8_t in[BLOB];
	pid_t tid_a, tid_b;
};

static void *thread_a(void *arg)
{
	struct rank0 *z = arg;
	int ret;

	z->tid_a = (pid_t)syscall(SYS_gettid);
	ret = tplan_all_gather(z->ctx, z->in, BLOB, z->out, RANKS_TIMEOUT_MS / 2);
	tplan_shared_set(&z->env->shared[W_A_DONE], (uint64_t)(1000 + ret));
	return NULL;
}

static void *thread_b(void *arg)
{
	struct rank0 *z = arg;
	void *p;

	z->tid_b = (pid_t)syscall(SYS_gettid);
	p = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED, tplan_ctx_fd(z->ctx), 0);
	tplan_shared_set(&z->env->shared[W_B_DONE], 1);
	if (p != MAP_FAILED)
		munmap(p, HEAP);
	return NULL;
}

/*
 * A thread's state letter from /proc/self/task/TID/stat.  No stdio: once
 * thread B holds the mmap lock, a malloc() that grows the heap would make
 * this thread part of the cycle it watches.
 */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static int wait_state(pid_t *tid, const char *states, unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;

	while (tplan_now_ms() < end) {
		if (*(volatile pid_t *)tid && strchr(states, thread_state(*tid)))
			return 0;
		tplan_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/*
 * Fault in the stack this thread may use later: where page faults take the
 * mmap lock (no per-VMA locks, 6.1), any fault waits for thread B.
 */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char buf[64 << 10];

	memset((char *)buf, 0, sizeof(buf));
}

static int rank_mmap_lock(struct tplan_rank_env *env)
{
	static struct rank0 z;
	uint8_t in[BLOB], out[2 * BLOB];
	struct tplan_ctx *ctx;
	pthread_t a, b;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	if (env->rank == 1) {
		memset(in, 1, sizeof(in));
		RANK_OK(tplan_shared_wait(&env->shared[W_GO], 1, RANKS_TIMEOUT_MS / 2));
		RANK_OK(tplan_all_gather(ctx, in, BLOB, out, RANKS_TIMEOUT_MS / 2));
		/* keep the group until rank 0 is done, or gives up */
		tplan_shared_wait(&env->shared[W_A_DONE], 1, SETTLE_MS + 5000);
		tplan_ctx_close(ctx);
		return 0;
	}
	/* and the shared words and this rank's report, for the same reason */
	prefault_stack();
	tplan_shared_set(&env->shared[W_A_DONE], 0);
	tplan_shared_set(&env->shared[W_B_DONE], 0);
	tplan_rank_self->line = 0;
	z.env = env;
	z.ctx = ctx;
	z.out = mmap(NULL, 2 * BLOB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	RANK_ASSERT(z.out != MAP_FAILED);
	RANK_OK(pthread_create(&a, NULL, thread_a, &z));
	RANK_OK(wait_state(&z.tid_a, "S", RANKS_TIMEOUT_MS / 4));
	tplan_sleep_ms(200);	/* in the all-gather's wait, the file's lock held */
	RANK_OK(pthread_create(&b, NULL, thread_b, &z));
	/* B waits for the file's lock (D), or got through (then no inversion) */
	wait_state(&z.tid_b, "D", 5000);
	tplan_shared_set(&env->shared[W_GO], 1);
	if (tplan_shared_wait(&env->shared[W_A_DONE], 1, SETTLE_MS)) {
		RANK_FAIL("the all-gather's thread is still in the ioctl %u s after rank 1 joined it (state %c), and the mmap's thread (state %c): a deadlock between the file's lock and the mmap lock",
			  SETTLE_MS / 1000, thread_state(z.tid_a), thread_state(z.tid_b));
	}
	RANK_EQ(1000, env->shared[W_A_DONE]);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(mmap_lock, mmap_while_an_ioctl_on_the_file_waits_does_not_deadlock, 120)
{
	struct tplan_ranks r;
	int nf;

	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), rank_mmap_lock, NULL));
	nf = tplan_ranks_wait(&r, RANKS_TIMEOUT_MS, 0);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	tplan_ranks_release(&r);
}

TEST_HARNESS_MAIN
