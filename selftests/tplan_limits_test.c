// SPDX-License-Identifier: GPL-2.0
/*
 * What a user can make the module hold, and what happens past it: groups
 * one user is still joining (EUSERS), plans per group (ENOSPC), heaps
 * beyond the machine's memory or the module's caps (ENOMEM, quietly: no
 * allocation warning, no OOM killer), and a rank confined by a memory
 * cgroup (memory.max): its heaps, rings and plans are charged there, so
 * it gets ENOMEM where the cgroup's memory ends and the OOM killer never
 * fires.  Afterwards nothing is left (debugfs tplan/stats).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "tplan_plan_util.h"

#define HEAP (64U << 10)

FIXTURE(limits) {
	int unused;
};

FIXTURE_SETUP(limits)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(limits)
{
}

static int64_t stat_of(const char *name)
{
	int64_t v = -1;

	return tplan_debugfs_stat(name, &v) ? -1 : v;
}

/* Everything tplan holds is back to nothing (when debugfs is there). */
#define ASSERT_NOTHING_HELD()						\
	do {								\
		if (!access(TPLAN_DEBUGFS "/stats", F_OK)) {		\
			ASSERT_EQ(0, stat_of("groups"));		\
			ASSERT_EQ(0, stat_of("queues"));		\
			ASSERT_EQ(0, stat_of("plans"));			\
			ASSERT_EQ(0, stat_of("bytes"));			\
		}							\
	} while (0)

/* ---- groups being joined, per user ----------------------------------------- */

/*
 * max_pending_groups (16) children each start a group of their own and
 * wait in it; the next group this user starts is refused with EUSERS at
 * once, and works again when one of them is gone.
 */
TEST_F_TIMEOUT(limits, pending_groups_per_user_are_capped, 120)
{
	int64_t cap = stat_of("max_pending_groups");
	pid_t kids[64];
	int fd, i, n;

	if (cap < 1 || cap > 64)
		SKIP(return, "debugfs tplan/stats max_pending_groups not readable (%lld)",
		     (long long)cap);
	n = (int)cap;
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (kids[i] == 0) {
			fd = tplan_test_open();
			_exit(tplan_test_join_fd(fd, tplan_test_key() + i, 2, 0, HEAP, 60000) ==
			      -ETIMEDOUT ? 0 : 1);
		}
	}
	/* Every child is waiting in its join: then this one is one too many. */
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, tplan_test_wait_blocked(kids[i], 30000));
	fd = tplan_test_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(-EUSERS, tplan_test_join_fd(fd, tplan_test_key() + 100, 2, 0, HEAP, 60000));
	kill(kids[0], SIGKILL);
	waitpid(kids[0], NULL, 0);
	/* One gone: a new group of this user can start (and times out alone). */
	ASSERT_EQ(-ETIMEDOUT, tplan_test_join_fd(fd, tplan_test_key() + 101, 2, 0, HEAP, 200));
	close(fd);
	for (i = 1; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	ASSERT_NOTHING_HELD();
}

/* ---- plans per group ---------------------------------------------------------- */

/*
 * A plan of no chunks costs no gate row, so only the cap stops a create
 * loop: max_plans (1024) plans, then ENOSPC; closing one makes room.
 */
TEST_F_TIMEOUT(limits, plans_per_group_are_capped, 240)
{
	int64_t cap = stat_of("max_plans");
	struct tplan_join_params jp = { .world_size = 1, .heap_size = HEAP, .timeout_ms = 10000 };
	struct tplan_plan_create c = { .size = sizeof(c), .buffer_bytes = 4096 };
	struct tplan_plan_close cl = { .size = sizeof(cl) };
	struct tplan_ctx *ctx;
	uint32_t first = 0, i;
	int fd;

	if (cap < 1 || cap > 100000)
		SKIP(return, "debugfs tplan/stats max_plans not readable (%lld)", (long long)cap);
	jp.key = tplan_test_key();
	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(0, tplan_ctx_join(ctx, &jp));
	fd = tplan_ctx_fd(ctx);
	for (i = 0; i < (uint32_t)cap; i++) {
		ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CREATE, &c)) TH_LOG("plan %u", i);
		if (!i)
			first = c.plan_id;
	}
	ASSERT_EQ(-ENOSPC, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CREATE, &c));
	cl.plan_id = first;
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CLOSE, &cl));
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CREATE, &c));
	/* Ids are never handed out twice while a plan holds one. */
	ASSERT_NE(first, 0);
	tplan_ctx_close(ctx);
	ASSERT_NOTHING_HELD();
}

/* ---- heaps beyond memory ---------------------------------------------------------- */

/*
 * Three ranks ask for heaps of a third of the machine's memory each, all
 * at once: they cannot all have it (the module's caps keep a quarter of
 * memory for everyone else).  Some get ENOMEM, quietly; the others time
 * out waiting for them; nobody is killed, and nothing is left.
 */
static int rank_big_heap(struct tplan_rank_env *env)
{
	uint64_t heap = *(uint64_t *)env->arg;
	int fd = tplan_test_open(), ret;

	RANK_ASSERT(fd >= 0);
	ret = tplan_test_join_fd(fd, env->key, 3, env->rank, heap, 15000);
	if (ret != -ENOMEM && ret != -ETIMEDOUT)
		RANK_FAIL("join of a %llu MiB heap: %d", (unsigned long long)(heap >> 20), ret);
	if (ret == -ENOMEM)
		tplan_shared_add(&env->shared[0], 1);
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(limits, heaps_beyond_memory_are_enomem_without_oom, 120)
{
	uint64_t heap = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / 3;
	struct tplan_ranks r;
	int nf;

	heap &= ~4095ULL;
	if (heap > TPLAN_HEAP_SIZE_MAX)
		heap = TPLAN_HEAP_SIZE_MAX;
	ASSERT_EQ(0, tplan_ranks_start(&r, 3, tplan_test_key(), rank_big_heap, &heap));
	nf = tplan_ranks_wait(&r, 100000, 0);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	ASSERT_LE(1, r.shared[0]);
	tplan_ranks_release(&r);
	/* A heap over the largest allowed is EINVAL; one over the cap, ENOMEM. */
	{
		int fd = tplan_test_open();

		ASSERT_EQ(-EINVAL, tplan_test_join_fd(fd, tplan_test_key(), 1, 0,
						      TPLAN_HEAP_SIZE_MAX + 4096, 1000));
		ASSERT_EQ(-ENOMEM, tplan_test_join_fd(fd, tplan_test_key(), 1, 0,
						      TPLAN_HEAP_SIZE_MAX, 1000));
		close(fd);
	}
	ASSERT_NOTHING_HELD();
}

/* ---- a rank in a memory cgroup ------------------------------------------------------- */

#define CG_ROOT "/sys/fs/cgroup"
#define CG_DIR CG_ROOT "/tplan-limits"
#define CG_MAX (48ULL << 20)
#define CG_HEAP (256U << 10)	/* room for 16 parts of 4 KiB below the gate area */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int64_t memory_event(const char *name)
{
	char line[128], key[64];
	long long v;
	FILE *f = fopen(CG_DIR "/memory.events", "r");
	int64_t ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", key, &v) == 2 && !strcmp(key, name))
			ret = v;
	fclose(f);
	return ret;
}

/* A cgroup v2 with the memory controller and memory.max = CG_MAX, or SKIP. */
static int cgroup_setup(void)
{
	char max[32];

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		if (mount("none", CG_ROOT, "cgroup2", 0, NULL))
			return -errno;
	}
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(CG_DIR, 0755) && errno != EEXIST)
		return -errno;
	snprintf(max, sizeof(max), "%llu", CG_MAX);
	if (write_file(CG_DIR "/memory.max", max))
		return -ENOENT;		/* no memory controller */
	return write_file(CG_DIR "/memory.swap.max", "0") == -EACCES ? -EACCES : 0;
}

/*
 * Every rank: a plan of one chunk.  The confined rank's stored chains are
 * made far larger than its cgroup's memory (the largest a rank may pass:
 * TPLAN_PLAN_DWORDS_MAX dwords, mapped but never touched): the kernel
 * cannot keep them, every rank's prepare fails with ENOMEM, and the plan
 * closes.
 */
static int big_plan(struct tplan_rank_env *env, struct tplan_ctx *ctx)
{
	static struct tp_even ev;
	uint64_t part = 4096, extra;
	struct tp_plan p;
	uint32_t *huge = NULL;

	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, 1, 1, 0));
	RANK_OK(tp_build(&p, &ev.s));
	if (env->rank == 0) {
		huge = mmap(NULL, TPLAN_PLAN_DWORDS_MAX * 4ULL, PROT_READ,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		RANK_ASSERT(huge != MAP_FAILED);
		extra = TPLAN_PLAN_DWORDS_MAX - p.ndw;
		p.chains[0].ndw += (uint32_t)extra;
		free(p.dw);
		p.dw = huge;
		p.ndw = TPLAN_PLAN_DWORDS_MAX;
	}
	RANK_ERR(-ENOMEM, tp_prepare_built(&p));
	RANK_OK(tp_close(&p, NULL));
	if (huge) {
		munmap(huge, TPLAN_PLAN_DWORDS_MAX * 4ULL);
		p.dw = NULL;
	}
	tp_free_chains(&p);
	return 0;
}

/*
 * The confined rank: a heap far over memory.max, then many queues (a ring
 * each), then a plan whose stored chains are far over it.  Each fails
 * with ENOMEM where the cgroup's memory ends; what fit works.
 */
static int confined_rank(struct tplan_rank_env *env)
{
	struct tplan_info info = { .size = sizeof(info) };
	char pid[16];
	struct tplan_ctx *ctx;
	unsigned int peer, queues = 0;
	int fd, ret;

	snprintf(pid, sizeof(pid), "%d", getpid());
	RANK_OK(write_file(CG_DIR "/cgroup.procs", pid));
	fd = tplan_test_open();
	RANK_ASSERT(fd >= 0);
	RANK_OK(tplan_test_ioctl(fd, TPLAN_IOC_INFO, &info));
	/* A heap of four times the cgroup's memory. */
	RANK_ERR(-ENOMEM, tplan_test_join_fd(fd, env->key + 1, 1, 0, 4 * CG_MAX, 5000));
	close(fd);

	/* Rings: one queue per peer, ring_size bytes each. */
	RANK_OK(tplan_rank_join(env, CG_HEAP, &ctx));
	for (peer = 1; peer < env->world; peer++) {
		ret = tplan_put(ctx, peer, 0, 0, 64);
		if (ret == -ENOMEM)
			break;
		RANK_OK(ret);
		queues++;
	}
	if ((uint64_t)info.ring_size * (env->world - 1) > CG_MAX) {
		RANK_ASSERT(peer < env->world);		/* stopped by the cgroup */
		RANK_ASSERT(queues * (uint64_t)info.ring_size <= CG_MAX);
	}
	if (big_plan(env, ctx))
		return -1;
	RANK_OK(tplan_barrier(ctx, 60000));
	tplan_ctx_close(ctx);
	return 0;
}

static int free_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;

	RANK_OK(tplan_rank_join(env, CG_HEAP, &ctx));
	if (big_plan(env, ctx))
		return -1;
	RANK_OK(tplan_barrier(ctx, 60000));
	tplan_ctx_close(ctx);
	return 0;
}

static int limits_rank(struct tplan_rank_env *env)
{
	return env->rank == 0 ? confined_rank(env) : free_rank(env);
}

TEST_F_TIMEOUT(limits, memory_cgroup_confines_a_rank_without_oom, 180)
{
	int64_t oom_before, oom_after;
	int ret = cgroup_setup();

	if (ret)
		SKIP(return, "no cgroup v2 memory controller here (%d)", ret);
	oom_before = memory_event("oom_kill");
	RUN_RANKS(16, limits_rank, NULL, 150000);
	oom_after = memory_event("oom_kill");
	ASSERT_EQ(oom_before, oom_after);
	ASSERT_EQ(0, memory_event("oom_kill"));
	rmdir(CG_DIR);
	ASSERT_NOTHING_HELD();
}

TEST_HARNESS_MAIN
