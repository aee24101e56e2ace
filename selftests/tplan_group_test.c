// SPDX-License-Identifier: GPL-2.0
/*
 * Groups: joining with 2, 4 and 8 ranks, barrier and all-gather, the join
 * errors (each its own test), who may join, and a rank that dies: the
 * others' blocked and later collectives fail with ECONNRESET well within
 * their timeout.  Ranks are forked processes, each with its own file.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>

#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "tplan_selftest.h"
#include "tplan_sdma.h"

#define HEAP_SIZE (64U << 10)

FIXTURE(group) {
	int fd;
};

FIXTURE_SETUP(group)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(group)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- joining and collectives -------------------------------------------- */

FIXTURE(join) {
	int fd;
};

FIXTURE_VARIANT(join) {
	unsigned int world;
	unsigned int blob;
};

FIXTURE_VARIANT_ADD(join, ranks2) { .world = 2, .blob = 1 };
FIXTURE_VARIANT_ADD(join, ranks4) { .world = 4, .blob = 100 };
FIXTURE_VARIANT_ADD(join, ranks8) { .world = 8, .blob = TPLAN_ALL_GATHER_MAX };

FIXTURE_SETUP(join)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(join)
{
	if (self->fd >= 0)
		close(self->fd);
}

static unsigned char blob_byte(unsigned int rank, unsigned int i, unsigned int round)
{
	return (unsigned char)(rank * 37 + i * 11 + round * 101 + 1);
}

static int join_and_collect(struct tplan_rank_env *env)
{
	const FIXTURE_VARIANT(join) *v = env->arg;
	unsigned int blob = v->blob, i, r, round, a, b;
	uint64_t mine[8] = { 0 }, (*views)[8];
	unsigned char *in, *out;
	struct tplan_ctx *ctx;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	RANK_EQ(env->rank, tplan_ctx_rank(ctx));
	RANK_EQ(env->world, tplan_ctx_world_size(ctx));
	RANK_EQ(HEAP_SIZE, tplan_heap_size(ctx));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));

	in = malloc(blob);
	out = malloc((size_t)blob * env->world);
	RANK_ASSERT(in && out);
	/* Rounds back to back exercise the kernel's reuse of its buffers. */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < blob; i++)
			in[i] = blob_byte(env->rank, i, round);
		memset(out, 0, (size_t)blob * env->world);
		RANK_OK(tplan_all_gather(ctx, in, blob, out, TPLAN_TEST_TIMEOUT_MS));
		for (r = 0; r < env->world; r++)
			for (i = 0; i < blob; i++)
				if (out[(size_t)r * blob + i] != blob_byte(r, i, round))
					RANK_FAIL("round %u: byte %u of rank %u's blob is %u",
						  round, i, r, out[(size_t)r * blob + i]);
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	}

	/*
	 * Every rank sees every heap at addresses of its own map (its own
	 * heap where its join said: the library checks that against
	 * HEAP_INFO).  Gathered, the views of different ranks differ and no
	 * two heaps of any views overlap.
	 */
	for (r = 0; r < env->world; r++) {
		mine[r] = tplan_heap_devaddr(ctx, r);
		RANK_ASSERT(tplan_heap_ptr(ctx, r) != NULL);
	}
	views = calloc(env->world, sizeof(*views));
	RANK_ASSERT(views);
	RANK_OK(tplan_all_gather(ctx, mine, sizeof(mine), views, TPLAN_TEST_TIMEOUT_MS));
	RANK_EQ(0, memcmp(mine, views[env->rank], sizeof(mine)));
	for (a = 0; a < env->world * env->world; a++) {
		uint64_t x = views[a / env->world][a % env->world];

		for (b = 0; b < a; b++) {
			uint64_t y = views[b / env->world][b % env->world];

			if (x + HEAP_SIZE > y && y + HEAP_SIZE > x)
				RANK_FAIL("rank %u's view of heap %u overlaps rank %u's of heap %u",
					  a / env->world, a % env->world, b / env->world,
					  b % env->world);
		}
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	free(in);
	free(out);
	free(views);
	return 0;
}

TEST_F_TIMEOUT(join, barrier_and_all_gather, 120)
{
	RUN_RANKS(variant->world, join_and_collect, (void *)variant, 100000);
}

/* A group of one completes at once; its collectives do not wait. */
TEST_F(group, world_of_one)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = 1000 };

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, &b));
}

/* A key is free again once its group completed: a second job reuses it. */
TEST_F(group, key_reusable_after_complete)
{
	uint64_t key = tplan_test_key();
	int fd2 = tplan_test_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, tplan_test_join_fd(self->fd, key, 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(0, tplan_test_join_fd(fd2, key, 1, 0, HEAP_SIZE, 1000));
	close(fd2);
}

/* ---- join errors ----------------------------------------------------------- */

FIXTURE(join_field) {
	int fd;
};

FIXTURE_VARIANT(join_field) {
	uint32_t flags, world_size, rank, engine, sdma_ip, reserved;
	uint64_t heap_size;
};

/* A valid world-of-two join for rank 0, but for the one field named. */
#define JOIN_FIELD(_f, _w, _r, _h, _e, _ip, _res) \
	{ .flags = (_f), .world_size = (_w), .rank = (_r), .heap_size = (_h), \
	  .engine = (_e), .sdma_ip = (_ip), .reserved = (_res) }
#define S TPLAN_ENGINE_SOFT
#define IP TPLAN_SDMA_440
#define H HEAP_SIZE
FIXTURE_VARIANT_ADD(join_field, flags_set) JOIN_FIELD(1, 2, 0, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, flags_high_bit) JOIN_FIELD(0x80000000u, 2, 0, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, heap_fd_without_kfd) JOIN_FIELD(0, 2, 0, H, S, IP, 1);
FIXTURE_VARIANT_ADD(join_field, world_size_0) JOIN_FIELD(0, 0, 0, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, world_size_17) JOIN_FIELD(0, 17, 0, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, rank_eq_world) JOIN_FIELD(0, 2, 2, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, rank_huge) JOIN_FIELD(0, 2, 0xffffffffu, H, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, heap_size_0) JOIN_FIELD(0, 2, 0, 0, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, heap_size_unaligned) JOIN_FIELD(0, 2, 0, H + 1, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, heap_size_below_page) JOIN_FIELD(0, 2, 0, 4095, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, heap_size_above_max)
	JOIN_FIELD(0, 2, 0, TPLAN_HEAP_SIZE_MAX + 4096, S, IP, 0);
FIXTURE_VARIANT_ADD(join_field, engine_0) JOIN_FIELD(0, 2, 0, H, 0, IP, 0);
FIXTURE_VARIANT_ADD(join_field, engine_kfd) JOIN_FIELD(0, 2, 0, H, TPLAN_ENGINE_KFD, IP, 0);
FIXTURE_VARIANT_ADD(join_field, engine_both) JOIN_FIELD(0, 2, 0, H, TPLAN_ENGINE_ALL, IP, 0);
FIXTURE_VARIANT_ADD(join_field, sdma_ip_0) JOIN_FIELD(0, 2, 0, H, S, 0, 0);
FIXTURE_VARIANT_ADD(join_field, sdma_ip_unknown) JOIN_FIELD(0, 2, 0, H, S, 0x040401, 0);
#undef S
#undef IP
#undef H

FIXTURE_SETUP(join_field)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(join_field)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Refused at once (a short timeout turns "it waited instead" into a failure). */
TEST_F(join_field, is_einval)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .flags = variant->flags, .key = tplan_test_key(),
		.world_size = variant->world_size, .rank = variant->rank,
		.heap_size = variant->heap_size, .engine = variant->engine,
		.sdma_ip = variant->sdma_ip, .timeout_ms = 500,
		.heap_fd = (int32_t)variant->reserved,
	};
	uint64_t t0 = tplan_now_ms();

	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, &j));
	ASSERT_GT(400, tplan_now_ms() - t0);
	/* The file is not in a group: a correct join still works. */
	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
}

TEST_F(group, already_joined_is_ealready)
{
	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EALREADY, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
}

TEST_F(group, library_join_twice_is_ealready)
{
	struct tplan_join_params p = {
		.key = tplan_test_key(), .world_size = 1, .heap_size = HEAP_SIZE,
		.timeout_ms = 1000,
	};
	struct tplan_ctx *ctx;

	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(0, tplan_ctx_join(ctx, &p));
	ASSERT_EQ(-EALREADY, tplan_ctx_join(ctx, &p));
	ASSERT_STRNE("", tplan_ctx_error(ctx));
	/* The first join stands. */
	ASSERT_EQ(0, tplan_ctx_rank(ctx));
	ASSERT_NE(NULL, tplan_heap_ptr(ctx, 0));
	tplan_ctx_close(ctx);
}

/* A join that timed out left the group: its rank and key are free. */
TEST_F(group, lone_join_times_out_and_leaves)
{
	uint64_t key = tplan_test_key(), t0 = tplan_now_ms();
	int fd2 = tplan_test_open();

	ASSERT_LE(0, fd2);
	ASSERT_EQ(-ETIMEDOUT, tplan_test_join_fd(self->fd, key, 2, 0, HEAP_SIZE, 300));
	ASSERT_LE(300, tplan_now_ms() - t0);
	/* Not joined: a new world-of-one group with the same key forms. */
	ASSERT_EQ(0, tplan_test_join_fd(fd2, key, 1, 0, HEAP_SIZE, 1000));
	close(fd2);
}

/*
 * Two files join the same key concurrently, differing in one way; the
 * second to arrive gets err, the first waits for a partner that never
 * comes.  Either order gives one err and one ETIMEDOUT.
 */
struct pair_join {
	uint32_t world[2], rank[2], sdma_ip[2];
	uint64_t heap[2];
	int err;
};

static int pair_join_rank(struct tplan_rank_env *env)
{
	struct pair_join *pj = env->arg;
	unsigned int i = env->rank;
	struct tplan_group_join j = {
		.size = sizeof(j), .key = env->key, .world_size = pj->world[i],
		.rank = pj->rank[i], .heap_size = pj->heap[i], .engine = TPLAN_ENGINE_SOFT,
		.sdma_ip = pj->sdma_ip[i], .timeout_ms = 3000,
	};
	int fd = tplan_test_open(), ret;

	RANK_ASSERT(fd >= 0);
	ret = tplan_test_ioctl(fd, TPLAN_IOC_GROUP_JOIN, &j);
	env->shared[i] = (uint64_t)(int64_t)ret;
	/* What each got is judged by the test, which sees both. */
	close(fd);
	return 0;
}

static int pair_join_outcome(struct __test_metadata *_metadata, struct pair_join *pj)
{
	struct tplan_ranks r;
	int a, b;

	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), pair_join_rank, pj));
	a = tplan_ranks_wait(&r, 15000, 0);
	TPLAN_RANKS_REPORT(&r, a, 0);
	a = (int)(int64_t)r.shared[0];
	b = (int)(int64_t)r.shared[1];
	tplan_ranks_release(&r);
	TH_LOG("joins returned %d and %d", a, b);
	ASSERT_TRUE((a == pj->err && b == -ETIMEDOUT) || (b == pj->err && a == -ETIMEDOUT));
	return 0;
}

TEST_F_TIMEOUT(group, world_size_mismatch_is_einval, 60)
{
	struct pair_join pj = {
		.world = { 2, 3 }, .rank = { 0, 1 }, .sdma_ip = { TPLAN_SDMA_440, TPLAN_SDMA_440 },
		.heap = { HEAP_SIZE, HEAP_SIZE }, .err = -EINVAL,
	};

	pair_join_outcome(_metadata, &pj);
}

TEST_F_TIMEOUT(group, heap_size_mismatch_is_einval, 60)
{
	struct pair_join pj = {
		.world = { 2, 2 }, .rank = { 0, 1 }, .sdma_ip = { TPLAN_SDMA_440, TPLAN_SDMA_440 },
		.heap = { HEAP_SIZE, 2 * HEAP_SIZE }, .err = -EINVAL,
	};

	pair_join_outcome(_metadata, &pj);
}

TEST_F_TIMEOUT(group, sdma_ip_mismatch_is_einval, 60)
{
	struct pair_join pj = {
		.world = { 2, 2 }, .rank = { 0, 1 }, .sdma_ip = { TPLAN_SDMA_440, TPLAN_SDMA_442 },
		.heap = { HEAP_SIZE, HEAP_SIZE }, .err = -EINVAL,
	};

	pair_join_outcome(_metadata, &pj);
}

TEST_F_TIMEOUT(group, duplicate_rank_is_eaddrinuse, 60)
{
	struct pair_join pj = {
		.world = { 2, 2 }, .rank = { 1, 1 }, .sdma_ip = { TPLAN_SDMA_440, TPLAN_SDMA_440 },
		.heap = { HEAP_SIZE, HEAP_SIZE }, .err = -EADDRINUSE,
	};

	pair_join_outcome(_metadata, &pj);
}

/* ---- who may join ----------------------------------------------------------
 *
 * Users never meet: a group is found by its key and its creator's uid, so
 * another uid with the same key gets a group of its own.  Within one uid,
 * joining needs what ptrace attach needs: the member must be dumpable and
 * nameable from the joiner's pid namespace.  The device node is 0660 root,
 * so these tests open it as root and drop privileges before joining, as a
 * process handed the file would; a uid of their own keeps them apart.
 */
enum { W_CREATOR_PID, W_CREATOR_READY, W_INTRUDER_DONE, W_SQUAT_PID };

#define OTHER_UID 65534

static int drop_to(uid_t uid)
{
	return setgid(uid) || setuid(uid) ? -errno : 0;
}

/*
 * Rank 0 (root) creates the group and waits; another uid "joins" rank 1
 * with the same key: it finds no group of its own uid and times out
 * (not EPERM, which would tell it the key is in use); root's rank 1 then
 * completes the group.
 */
static int other_uid_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	uint64_t t0;
	int fd;

	switch (env->rank) {
	case 0:
		env->shared[W_CREATOR_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_CREATOR_READY], 1);
		fd = tplan_test_open();
		RANK_ASSERT(fd >= 0);
		RANK_OK(tplan_test_join_fd(fd, env->key, 2, 0, HEAP_SIZE, TPLAN_TEST_TIMEOUT_MS));
		close(fd);
		return 0;
	case 1:
		RANK_OK(tplan_shared_wait(&env->shared[W_CREATOR_READY], 1, 10000));
		RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_CREATOR_PID], 10000));
		fd = tplan_test_open();
		RANK_ASSERT(fd >= 0);
		RANK_OK(drop_to(OTHER_UID));
		t0 = tplan_now_ms();
		RANK_ERR(-ETIMEDOUT, tplan_test_join_fd(fd, env->key, 2, 1, HEAP_SIZE, 500));
		RANK_ASSERT(tplan_now_ms() - t0 >= 500);
		close(fd);
		tplan_shared_set(&env->shared[W_INTRUDER_DONE], 1);
		return 0;
	default:
		RANK_OK(tplan_shared_wait(&env->shared[W_INTRUDER_DONE], 1, 15000));
		RANK_OK(tplan_ctx_open(&ctx, NULL));
		{
			struct tplan_join_params p = {
				.key = env->key, .world_size = 2, .rank = 1,
				.heap_size = HEAP_SIZE, .timeout_ms = TPLAN_TEST_TIMEOUT_MS,
			};
			RANK_OK(tplan_ctx_join(ctx, &p));
		}
		tplan_ctx_close(ctx);
		return 0;
	}
}

TEST_F_TIMEOUT(group, other_uid_never_finds_the_group, 60)
{
	if (getuid() != 0)
		SKIP(return, "needs root to switch uid");
	RUN_RANKS(3, other_uid_rank, NULL, 50000);
}

/*
 * Another uid squats the key first (world_size 16, a long timeout); the
 * job's own ranks still form their group, with their own world size.
 */
static int squat_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	int fd;

	if (env->rank == 0) {
		fd = tplan_test_open();
		RANK_ASSERT(fd >= 0);
		RANK_OK(drop_to(OTHER_UID));
		env->shared[W_SQUAT_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_CREATOR_READY], 1);
		RANK_ERR(-ETIMEDOUT, tplan_test_join_fd(fd, env->key, 16, 0, HEAP_SIZE, 6000));
		close(fd);
		return 0;
	}
	RANK_OK(tplan_shared_wait(&env->shared[W_CREATOR_READY], 1, 10000));
	RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_SQUAT_PID], 10000));
	{
		struct tplan_join_params p = {
			.key = env->key, .world_size = 2, .rank = env->rank - 1,
			.heap_size = HEAP_SIZE, .timeout_ms = TPLAN_TEST_TIMEOUT_MS,
		};
		RANK_OK(tplan_ctx_open(&ctx, NULL));
		RANK_OK(tplan_ctx_join(ctx, &p));
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(group, squatted_key_does_not_stop_the_job, 60)
{
	if (getuid() != 0)
		SKIP(return, "needs root to switch uid");
	RUN_RANKS(3, squat_rank, NULL, 50000);
}

/*
 * One uid, but the member is not dumpable (a set-uid program, or one that
 * asked not to be traced): a joiner without CAP_SYS_PTRACE gets EPERM,
 * as ptrace attach would.  Once the member is dumpable again, the same
 * join works.
 */
enum { W_MEMBER_PID = 8, W_MEMBER_READY, W_TRY_AGAIN, W_NEW_PIDNS };

static int dumpable_rank(struct tplan_rank_env *env)
{
	int fd = tplan_test_open(), dumpable = *(int *)env->arg;

	RANK_ASSERT(fd >= 0);
	RANK_OK(drop_to(OTHER_UID));
	if (env->rank == 0) {
		RANK_OK(prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0) ? -errno : 0);
		env->shared[W_MEMBER_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_MEMBER_READY], 1);
		if (!dumpable)
			RANK_ERR(-ETIMEDOUT, tplan_test_join_fd(fd, env->key, 2, 0, HEAP_SIZE, 5000));
		else
			RANK_OK(tplan_test_join_fd(fd, env->key, 2, 0, HEAP_SIZE,
						   TPLAN_TEST_TIMEOUT_MS));
		close(fd);
		return 0;
	}
	RANK_OK(tplan_shared_wait(&env->shared[W_MEMBER_READY], 1, 10000));
	RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_MEMBER_PID], 10000));
	if (!dumpable) {
		RANK_ERR(-EPERM, tplan_test_join_fd(fd, env->key, 2, 1, HEAP_SIZE, 2000));
		/* Nothing of the refused join is left: the member still times out alone. */
		close(fd);
		return 0;
	}
	RANK_OK(tplan_test_join_fd(fd, env->key, 2, 1, HEAP_SIZE, TPLAN_TEST_TIMEOUT_MS));
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(group, same_uid_not_dumpable_member_is_eperm, 60)
{
	struct tplan_ranks r;
	int dumpable = 0, nf;

	if (getuid() != 0)
		SKIP(return, "needs root to switch uid");
	ASSERT_EQ(0, chmod(TPLAN_DEVICE_PATH, 0666));
	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), dumpable_rank, &dumpable));
	/* The refused rank returns at once; the member waits out its timeout. */
	nf = tplan_ranks_wait(&r, 45000, 0);
	chmod(TPLAN_DEVICE_PATH, 0660);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	tplan_ranks_release(&r);
}

TEST_F_TIMEOUT(group, same_uid_dumpable_member_joins, 60)
{
	struct tplan_ranks r;
	int dumpable = 1, nf;

	if (getuid() != 0)
		SKIP(return, "needs root to switch uid");
	ASSERT_EQ(0, chmod(TPLAN_DEVICE_PATH, 0666));
	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), dumpable_rank, &dumpable));
	nf = tplan_ranks_wait(&r, 45000, 0);
	chmod(TPLAN_DEVICE_PATH, 0660);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	tplan_ranks_release(&r);
}

/*
 * A process in another pid namespace (a container) with the same uid
 * cannot name the member, so it cannot join either.
 */
static int pidns_rank(struct tplan_rank_env *env)
{
	int fd, status;
	pid_t child;

	if (env->rank == 0) {
		fd = tplan_test_open();
		RANK_ASSERT(fd >= 0);
		env->shared[W_MEMBER_PID] = (uint64_t)getpid();
		tplan_shared_set(&env->shared[W_MEMBER_READY], 1);
		RANK_ERR(-ETIMEDOUT, tplan_test_join_fd(fd, env->key, 2, 0, HEAP_SIZE, 5000));
		close(fd);
		return 0;
	}
	RANK_OK(tplan_shared_wait(&env->shared[W_MEMBER_READY], 1, 10000));
	RANK_OK(tplan_test_wait_blocked((pid_t)env->shared[W_MEMBER_PID], 10000));
	RANK_OK(unshare(CLONE_NEWPID) ? -errno : 0);
	child = fork();
	RANK_ASSERT(child >= 0);
	if (child == 0) {
		/* pid 1 of its own namespace: rank 0 has no pid here */
		fd = tplan_test_open();
		_exit(fd >= 0 && tplan_test_join_fd(fd, env->key, 2, 1, HEAP_SIZE, 2000) == -EPERM ?
		      0 : 1);
	}
	RANK_EQ(child, waitpid(child, &status, 0));
	RANK_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return 0;
}

/* Can this kernel make a pid namespace (CONFIG_PID_NS)?  Asked in a child. */
static int pid_namespaces(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWPID) ? 1 : 0);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

TEST_F_TIMEOUT(group, other_pid_namespace_is_eperm, 60)
{
	if (getuid() != 0)
		SKIP(return, "needs root to make a pid namespace");
	if (!pid_namespaces())
		SKIP(return, "a kernel without pid namespaces (CONFIG_PID_NS)");
	RUN_RANKS(2, pidns_rank, NULL, 50000);
}

/* ---- not joined ------------------------------------------------------------ */

TEST_F(group, barrier_not_joined_is_enotconn)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = 100 };

	ASSERT_EQ(-ENOTCONN, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, &b));
}

/*
 * Two live groups of one key (the first complete, so the key was free
 * again): each has a debugfs directory of its own, and no engine thread's
 * name shows the key to other users.
 */
TEST_F(group, same_key_twice_two_debugfs_dirs_and_no_key_in_thread_names)
{
	uint64_t key = (tplan_test_key() & ~0xffffULL) | 0xbeef;
	char prefix[40], comm[64], path[160];
	struct tplan_ctx *a, *b;
	struct tplan_join_params jp = {
		.key = key, .world_size = 2, .heap_size = HEAP_SIZE, .timeout_ms = 20000,
	};
	struct dirent *e;
	int fds[2], n = 0;
	DIR *d;
	pid_t kid;

	if (access(TPLAN_DEBUGFS, F_OK))
		SKIP(return, "debugfs not mounted");
	/* Two groups of key, each of two ranks: this process and a child. */
	for (n = 0; n < 2; n++) {
		kid = fork();
		ASSERT_LE(0, kid);
		if (kid == 0) {
			struct tplan_ctx *c;

			jp.rank = 1;
			if (tplan_ctx_open(&c, NULL) || tplan_ctx_join(c, &jp) ||
			    tplan_barrier(c, 20000))
				_exit(1);
			_exit(tplan_barrier(c, 20000) ? 1 : 0);
		}
		ASSERT_EQ(0, tplan_ctx_open(n ? &b : &a, NULL));
		jp.rank = 0;
		ASSERT_EQ(0, tplan_ctx_join(n ? b : a, &jp));
		ASSERT_EQ(0, tplan_barrier(n ? b : a, 20000));
		fds[n] = kid;
	}
	/* An engine thread per group: a queue of each. */
	ASSERT_EQ(0, tplan_put(a, 1, 0, 0, 64));
	ASSERT_EQ(0, tplan_put(b, 1, 0, 0, 64));

	snprintf(prefix, sizeof(prefix), "group-%016llx-", (unsigned long long)key);
	n = 0;
	d = opendir(TPLAN_DEBUGFS);
	ASSERT_NE(NULL, d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	EXPECT_EQ(2, n);

	d = opendir("/proc");
	ASSERT_NE(NULL, d);
	while ((e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%.20s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "tplan", 5))
			EXPECT_EQ(NULL, strstr(comm, "beef")) TH_LOG("thread %s", comm);
		fclose(f);
	}
	closedir(d);

	ASSERT_EQ(0, tplan_quiet(a, 1, 20000));
	ASSERT_EQ(0, tplan_quiet(b, 1, 20000));
	ASSERT_EQ(0, tplan_barrier(a, 20000));
	ASSERT_EQ(0, tplan_barrier(b, 20000));
	tplan_ctx_close(a);
	tplan_ctx_close(b);
	for (n = 0; n < 2; n++) {
		int status;

		ASSERT_EQ(fds[n], waitpid(fds[n], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

TEST_F(group, all_gather_not_joined_is_enotconn)
{
	uint64_t in = 1, out[16];
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .blob_size = sizeof(in), .timeout_ms = 100,
		.in = (uintptr_t)&in, .out = (uintptr_t)out,
	};

	ASSERT_EQ(-ENOTCONN, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
}

TEST_F(group, heap_info_not_joined_is_enotconn)
{
	struct tplan_heap_info hi = { .size = sizeof(hi) };

	ASSERT_EQ(-ENOTCONN, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
}

TEST_F(group, library_calls_before_join)
{
	struct tplan_ctx *ctx;
	uint64_t off;

	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(-ENOTCONN, tplan_ctx_rank(ctx));
	ASSERT_EQ(-ENOTCONN, tplan_ctx_world_size(ctx));
	ASSERT_EQ(NULL, tplan_heap_ptr(ctx, 0));
	ASSERT_EQ(0, tplan_heap_size(ctx));
	ASSERT_EQ(-ENOTCONN, tplan_heap_alloc(ctx, 64, 0, &off));
	ASSERT_EQ(-ENOTCONN, tplan_barrier(ctx, 100));
	ASSERT_EQ(-ENOTCONN, tplan_quiet(ctx, 1, 100));
	tplan_ctx_close(ctx);
}

/* ---- argument contract of the collectives (a group of one) ------------------- */

TEST_F(group, barrier_reserved_fields_must_be_zero)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .flags = 1 };

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, &b));
	b.flags = 0;
	b.__reserved = 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, &b));
	b.__reserved = 0;
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, &b));
}

TEST_F(group, all_gather_flags_must_be_zero)
{
	uint64_t in = 7, out = 0;
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .flags = 1, .blob_size = sizeof(in),
		.in = (uintptr_t)&in, .out = (uintptr_t)&out,
	};

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
	ag.flags = 0;
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
	ASSERT_EQ(7, out);
}

TEST_F(group, all_gather_blob_size_range)
{
	static unsigned char in[TPLAN_ALL_GATHER_MAX + 1], out[TPLAN_ALL_GATHER_MAX + 1];
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .blob_size = 0,
		.in = (uintptr_t)in, .out = (uintptr_t)out,
	};

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
	ag.blob_size = TPLAN_ALL_GATHER_MAX + 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
	ag.blob_size = TPLAN_ALL_GATHER_MAX;
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
}

TEST_F(group, all_gather_bad_pointer_is_efault)
{
	uint64_t in = 1, out;
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .blob_size = sizeof(in), .in = 16, .out = (uintptr_t)&out,
	};

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
	ag.in = (uintptr_t)&in;
	ag.out = 16;
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag));
}

static int join_fresh(void *buf, void *arg)
{
	int fd = tplan_test_open(), ret;

	if (fd < 0)
		return fd;
	ret = tplan_test_ioctl(fd, TPLAN_IOC_GROUP_JOIN, buf);
	close(fd);
	return ret;
}

TEST_F(group, join_size_sweep)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = tplan_test_key(), .world_size = 1,
		.heap_size = HEAP_SIZE, .engine = TPLAN_ENGINE_SOFT,
		.sdma_ip = TPLAN_SDMA_440, .timeout_ms = 1000,
	};

	ASSERT_EQ(0, tplan_size_sweep_fn(join_fresh, NULL, &j, sizeof(j), sizeof(j)));
}

TEST_F(group, barrier_size_sweep)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = 1000 };

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(0, tplan_size_sweep(self->fd, TPLAN_IOC_GROUP_BARRIER, &b, sizeof(b), sizeof(b)));
}

TEST_F(group, all_gather_size_sweep)
{
	uint32_t in = 5, out;
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .blob_size = sizeof(in), .timeout_ms = 1000,
		.in = (uintptr_t)&in, .out = (uintptr_t)&out,
	};

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(0, tplan_size_sweep(self->fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag, sizeof(ag),
				      sizeof(ag)));
}

TEST_F(group, heap_info_size_sweep)
{
	struct tplan_heap_info hi = { .size = sizeof(hi) };

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	/* gate_area_offset came later: callers without it are still served. */
	ASSERT_EQ(0, tplan_size_sweep(self->fd, TPLAN_IOC_HEAP_INFO, &hi,
				      offsetof(struct tplan_heap_info, mmap_offset) +
				      sizeof(hi.mmap_offset), sizeof(hi)));
}

/* ---- collectives that disagree ------------------------------------------------ */

/* Rank 0 calls a barrier, rank 1 an all-gather: EPROTO or ECONNRESET, then broken. */
static int mismatch_rank(struct tplan_rank_env *env)
{
	uint64_t blob = env->rank, out[2];
	struct tplan_ctx *ctx;
	int ret;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	if (*(int *)env->arg == 0 && env->rank == 0)
		ret = tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS);
	else
		ret = tplan_all_gather(ctx, &blob, env->rank && *(int *)env->arg ? 8 : 4, out,
				       TPLAN_TEST_TIMEOUT_MS);
	env->shared[env->rank] = (uint64_t)(int64_t)ret;
	RANK_ASSERT(ret == -EPROTO || ret == -ECONNRESET);
	RANK_ERR(-ECONNRESET, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

static void run_mismatch(struct __test_metadata *_metadata, int blob_sizes)
{
	struct tplan_ranks r;
	int nf;

	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), mismatch_rank, &blob_sizes));
	nf = tplan_ranks_wait(&r, 40000, 0);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	/* The rank that noticed says EPROTO. */
	ASSERT_TRUE((int64_t)r.shared[0] == -EPROTO || (int64_t)r.shared[1] == -EPROTO);
	tplan_ranks_release(&r);
}

TEST_F_TIMEOUT(group, different_collectives_is_eproto, 60)
{
	run_mismatch(_metadata, 0);
}

TEST_F_TIMEOUT(group, all_gather_blob_size_mismatch_is_eproto, 60)
{
	run_mismatch(_metadata, 1);
}

/* ---- a rank dies ------------------------------------------------------------- */

FIXTURE(dead_rank) {
	int fd;
};

FIXTURE_VARIANT(dead_rank) {
	int in_all_gather;	/* else a barrier */
	int in_quiet;		/* the survivors wait in a quiet instead */
};

FIXTURE_VARIANT_ADD(dead_rank, in_barrier) { 0, 0 };
FIXTURE_VARIANT_ADD(dead_rank, in_all_gather) { 1, 0 };
FIXTURE_VARIANT_ADD(dead_rank, in_quiet) { 0, 1 };

FIXTURE_SETUP(dead_rank)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(dead_rank)
{
	if (self->fd >= 0)
		close(self->fd);
}

#define DEAD_RANK 2
#define DEAD_TIMEOUT_MS 20000
enum { W_WAITING = 0, W_PID = 8 };	/* W_WAITING + rank, W_PID + rank */

/*
 * A quiet that cannot finish by itself: a POLL_REGMEM on a word of this
 * rank's heap that nobody sets.
 */
static int inject_endless_poll(struct tplan_ctx *ctx, unsigned int peer, uint64_t word_off)
{
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(ctx, (unsigned int)tplan_ctx_rank(ctx)) + word_off,
		.ref = 1, .mask = 0xffffffffu, .func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1,
		.interval = 10, .retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	uint32_t dw[TPLAN_SDMA_POLL_DW];

	if (tplan_sdma_encode_poll_regmem(dw, TPLAN_SDMA_POLL_DW, &poll) != TPLAN_SDMA_POLL_DW)
		return -EINVAL;
	return tplan_test_inject(ctx, peer, dw, TPLAN_SDMA_POLL_DW);
}

static int dead_rank_rank(struct tplan_rank_env *env)
{
	const FIXTURE_VARIANT(dead_rank) *v = env->arg;
	uint64_t t0, blob = env->rank, out[3];
	struct tplan_ctx *ctx;
	unsigned int peer = (env->rank + 1) % env->world;
	int ret;

	env->shared[W_PID + env->rank] = (uint64_t)getpid();
	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	RANK_OK(tplan_barrier(ctx, DEAD_TIMEOUT_MS));
	if (env->rank == DEAD_RANK) {
		tplan_shared_set(&env->shared[W_WAITING + env->rank], 1);
		for (;;)
			pause();
	}
	if (v->in_quiet)
		RANK_OK(inject_endless_poll(ctx, DEAD_RANK, 0));
	tplan_shared_set(&env->shared[W_WAITING + env->rank], 1);
	t0 = tplan_now_ms();
	if (v->in_quiet)
		ret = tplan_quiet(ctx, DEAD_RANK, DEAD_TIMEOUT_MS);
	else if (v->in_all_gather)
		ret = tplan_all_gather(ctx, &blob, sizeof(blob), out, DEAD_TIMEOUT_MS);
	else
		ret = tplan_barrier(ctx, DEAD_TIMEOUT_MS);
	RANK_ERR(-ECONNRESET, ret);
	if (tplan_now_ms() - t0 >= DEAD_TIMEOUT_MS / 2)
		RANK_FAIL("ECONNRESET came after %llu ms, not well within the %u ms timeout",
			  (unsigned long long)(tplan_now_ms() - t0), DEAD_TIMEOUT_MS);
	/* Broken for good: later calls fail at once, on every queue too. */
	t0 = tplan_now_ms();
	RANK_ERR(-ECONNRESET, tplan_barrier(ctx, DEAD_TIMEOUT_MS));
	RANK_ERR(-ECONNRESET, tplan_all_gather(ctx, &blob, sizeof(blob), out, DEAD_TIMEOUT_MS));
	RANK_ERR(-ECONNRESET, tplan_put(ctx, peer, 0, 0, 64));
	RANK_ERR(-ECONNRESET, tplan_quiet(ctx, peer, DEAD_TIMEOUT_MS));
	RANK_ASSERT(tplan_now_ms() - t0 < 2000);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(dead_rank, others_get_econnreset, 90)
{
	struct tplan_ranks r;
	unsigned int i;
	int nf;

	if (variant->in_quiet && !tplan_test_inject_allowed())
		SKIP(return, "a quiet that blocks needs allow_inject=1");
	ASSERT_EQ(0, tplan_ranks_start(&r, 3, tplan_test_key(), dead_rank_rank,
				       (void *)variant));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, tplan_shared_wait(&r.shared[W_WAITING + i], 1, 30000));
	/* The survivors are asleep in their calls before the rank dies. */
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, tplan_test_wait_blocked(r.pid[i], 10000));
	tplan_ranks_kill(&r, DEAD_RANK);
	nf = tplan_ranks_wait(&r, 60000, 1U << DEAD_RANK);
	TPLAN_RANKS_REPORT(&r, nf, 1U << DEAD_RANK);
	ASSERT_TRUE(WIFSIGNALED(r.rep[DEAD_RANK].status));
	ASSERT_EQ(SIGKILL, WTERMSIG(r.rep[DEAD_RANK].status));
	tplan_ranks_release(&r);
}

/* A collective whose timeout expires: ETIMEDOUT there, the group broken. */
static int timeout_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	uint64_t t0;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	if (env->rank == 0) {
		t0 = tplan_now_ms();
		RANK_ERR(-ETIMEDOUT, tplan_barrier(ctx, 300));
		/* Never early: the kernel waits at least what was asked. */
		RANK_ASSERT(tplan_now_ms() - t0 >= 300);
		tplan_shared_set(&env->shared[0], 1);
	} else {
		/* Late: the barrier it arrives at failed on rank 0, so it fails here too. */
		RANK_OK(tplan_shared_wait(&env->shared[0], 1, 15000));
		RANK_ERR(-ETIMEDOUT, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	}
	/* The group goes on: a late rank does not break it. */
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(group, collective_timeout_is_etimedout_on_every_rank_and_the_group_goes_on, 60)
{
	RUN_RANKS(2, timeout_rank, NULL, 40000);
}

TEST_HARNESS_MAIN
