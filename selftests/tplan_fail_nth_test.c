// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation and user-copy failures, every one of them: for each ioctl
 * that allocates or copies from user space, the calling thread makes its
 * n-th fault-injection point fail (/proc/thread-self/fail-nth, with
 * failslab, fail_page_alloc and fail_usercopy), for n = 1, 2, 3 ... until
 * the call gets through without reaching the n-th point.  Each injected
 * failure must give an errno uapi/tplan.h lists for the call, leave no
 * object behind (debugfs tplan/stats back to where it was; kmemleak and
 * rmmod check the rest), and leave the next clean call working.  A call
 * that reports success must have done its work (a put or a chain submit
 * queued its packets): an injected failure whose error was lost shows.
 *
 * Collective steps run with two ranks; only rank 0 fails.  A rank that
 * fails before it reaches the step's first collective is a late rank to
 * the other (ETIMEDOUT there, after a short timeout), and its next call
 * of the same step completes that collective (ETIMEDOUT too): then both
 * are in step again.  Any other failure is every rank's.
 *
 * Needs a kernel with CONFIG_FAULT_INJECTION (the debug kernel of make
 * check); skips elsewhere.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_errno.h"

#define HEAP (256U << 10)
#define PART 4096
#define STEP_MS 4000		/* rank 1's timeout: how long a late rank 0 costs */
#define MAX_POINTS 400		/* no call has that many: a loop, then */
#define RANKS_TIMEOUT_MS 590000

static int fail_nth_open(void)
{
	return open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
}

static void fail_nth_knobs(void)
{
	static const char *const knobs[][2] = {
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
		/* Single pages too: heaps, rings and pointer pages are made of them. */
		{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
		{ "/sys/kernel/debug/fail_usercopy/verbose", "0" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		int fd = open(knobs[i][0], O_WRONLY);

		if (fd >= 0) {
			if (write(fd, knobs[i][1], strlen(knobs[i][1])) < 0)
				perror(knobs[i][0]);
			close(fd);
		}
	}
}

/* Arm the n-th fault point of this thread (0: disarm). */
static int fail_nth_arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

/* Did the armed point fire?  Then disarm. */
static int fail_nth_fired(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	fail_nth_arm(fd, 0);
	return atoi(buf) == 0;
}

static int64_t stat_of(const char *name)
{
	int64_t v = -1;

	return tplan_debugfs_stat(name, &v) ? -1 : v;
}

FIXTURE(nth) {
	int fd;
};

FIXTURE_SETUP(nth)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(self->fd);
	fd = fail_nth_open();
	if (fd < 0)
		SKIP(return, "no /proc/thread-self/fail-nth (a kernel without CONFIG_FAULT_INJECTION)");
	close(fd);
	fail_nth_knobs();
}

FIXTURE_TEARDOWN(nth)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- one file: join, heap info ---------------------------------------------- */

static int join1(int fd, uint64_t key)
{
	return tplan_test_join_fd(fd, key, 1, 0, HEAP, 5000);
}

TEST_F_TIMEOUT(nth, join, 300)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int nth = fail_nth_open(), fd, ret, fired = 1;
	struct tplan_heap_info hi = { .size = sizeof(hi) };
	unsigned int n;

	for (n = 1; fired && n < MAX_POINTS; n++) {
		fd = tplan_test_open();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, fail_nth_arm(nth, n));
		ret = join1(fd, tplan_test_key());
		fired = fail_nth_fired(nth);
		if (ret) {
			ASSERT_TRUE(tplan_errno_listed(TPLAN_IOC_GROUP_JOIN, -ret))
				TH_LOG("point %u: join %d", n, ret);
			/* Not in a group, and nothing of one left. */
			ASSERT_EQ(-ENOTCONN, tplan_test_ioctl(fd, TPLAN_IOC_HEAP_INFO, &hi));
			ASSERT_EQ(0, stat_of("groups")) TH_LOG("point %u", n);
			/* The next clean join works. */
			ASSERT_EQ(0, join1(fd, tplan_test_key())) TH_LOG("point %u", n);
		}
		/* (A point may fire and be absorbed: kvmalloc falls back to vmalloc.) */
		close(fd);
		ASSERT_EQ(0, stat_of("groups")) TH_LOG("point %u", n);
		ASSERT_EQ(0, stat_of("bytes")) TH_LOG("point %u", n);
	}
	ASSERT_LT(n, MAX_POINTS);
	close(nth);
}

TEST_F_TIMEOUT(nth, heap_info, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int nth = fail_nth_open(), ret, fired = 1;
	struct tplan_heap_info hi = { .size = sizeof(hi) };
	unsigned int n;

	ASSERT_EQ(0, join1(self->fd, tplan_test_key()));
	for (n = 1; fired && n < MAX_POINTS; n++) {
		ASSERT_EQ(0, fail_nth_arm(nth, n));
		ret = tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi);
		fired = fail_nth_fired(nth);
		if (ret)
			ASSERT_EQ(-EFAULT, ret) TH_LOG("point %u", n);
		ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
	}
	ASSERT_LT(n, MAX_POINTS);
	close(nth);
}

/* ---- two ranks ---------------------------------------------------------------- */

enum nth_op {
	OP_PUT,
	OP_CHAIN_SUBMIT,
	OP_ALL_GATHER,
	OP_CREATE,
	OP_PREPARE,
	OP_START,
	OP_WAIT,
	OP_NEXT_ROUND,
	OP_CLOSE,
};

/* Is the op a collective of both ranks (every rank or none)? */
/* next_round is local: a failure on one rank leaves the other's re-arm as it is. */
static int op_collective(enum nth_op op)
{
	return op == OP_ALL_GATHER || op == OP_CREATE || op == OP_PREPARE || op == OP_CLOSE;
}

static unsigned long op_cmd(enum nth_op op)
{
	static const unsigned long cmds[] = {
		[OP_PUT] = TPLAN_IOC_PUT, [OP_CHAIN_SUBMIT] = TPLAN_IOC_CHAIN_SUBMIT,
		[OP_ALL_GATHER] = TPLAN_IOC_GROUP_ALL_GATHER, [OP_CREATE] = TPLAN_IOC_PLAN_CREATE,
		[OP_PREPARE] = TPLAN_IOC_PLAN_PREPARE, [OP_START] = TPLAN_IOC_PLAN_START,
		[OP_WAIT] = TPLAN_IOC_PLAN_WAIT, [OP_NEXT_ROUND] = TPLAN_IOC_PLAN_NEXT_ROUND,
		[OP_CLOSE] = TPLAN_IOC_PLAN_CLOSE,
	};

	return cmds[op];
}

struct nth_state {
	struct tplan_ctx *ctx;
	struct tp_plan p;
	struct tp_even ev;
	int have_plan;
};

/* Lockstep of the two ranks, through shared words (never through tplan). */
static int step_sync(struct tplan_rank_env *env, uint64_t *phase)
{
	(*phase)++;
	tplan_shared_add(&env->shared[0], 1);
	return tplan_shared_wait(&env->shared[0], 2 * *phase, RANKS_TIMEOUT_MS / 2);
}

static int plan_create(struct nth_state *st, unsigned int rank, uint32_t timeout_ms)
{
	struct tplan_plan_create c = {
		.size = sizeof(c), .buffer_bytes = 2 * PART, .own_offset = rank * PART,
		.own_bytes = PART, .nchunks = 1, .timeout_ms = timeout_ms,
	};
	struct tp_plan *p = &st->p;
	int ret;

	memset(p, 0, sizeof(*p));
	p->ctx = st->ctx;
	p->fd = tplan_ctx_fd(st->ctx);
	p->rank = rank;
	p->world = 2;
	c.chunk_base = (uintptr_t)p->chunk_base;
	ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_CREATE, &c);
	if (ret)
		return ret;
	p->id = c.plan_id;
	p->gate_off = c.gate_offset;
	p->nchunks = 1;
	p->own_off = rank * PART;
	p->own_bytes = PART;
	p->buf_bytes = 2 * PART;
	st->have_plan = 1;
	return 0;
}

static int plan_prepare(struct nth_state *st, unsigned int rank, uint32_t timeout_ms)
{
	struct tplan_plan_prepare pp;
	int ret;

	ret = tp_even_sched(&st->ev, rank * PART, PART, 1, 1, 0) ?: tp_build(&st->p, &st->ev.s);
	if (ret)
		return ret;
	pp = (struct tplan_plan_prepare) {
		.size = sizeof(pp), .plan_id = st->p.id, .nchains = st->p.nchains,
		.ndw = st->p.ndw, .chains = (uintptr_t)st->p.chains, .dwords = (uintptr_t)st->p.dw,
		.writers = (uintptr_t)st->p.writers, .timeout_ms = timeout_ms,
	};
	return tplan_test_ioctl(st->p.fd, TPLAN_IOC_PLAN_PREPARE, &pp);
}

static int plan_close(struct nth_state *st, uint32_t timeout_ms)
{
	struct tplan_plan_close cl = {
		.size = sizeof(cl), .plan_id = st->p.id, .timeout_ms = timeout_ms,
	};

	return tplan_test_ioctl(st->p.fd, TPLAN_IOC_PLAN_CLOSE, &cl);
}

/* Everything op needs before it, done cleanly by both ranks. */
static int op_setup(struct tplan_rank_env *env, struct nth_state *st, enum nth_op op)
{
	st->have_plan = 0;
	if (op < OP_PREPARE)
		return 0;
	RANK_OK(plan_create(st, env->rank, TP_TIMEOUT));
	if (op == OP_PREPARE)
		return 0;
	RANK_OK(plan_prepare(st, env->rank, TP_TIMEOUT));
	if (op == OP_START || op == OP_CLOSE)
		return 0;
	RANK_OK(tp_start(&st->p, NULL));
	tp_mark(&st->p, 0, 1);
	if (op == OP_WAIT)
		return 0;
	RANK_OK(tp_wait(&st->p, TP_TIMEOUT, NULL, 0, NULL));
	return 0;
}

static uint32_t dw_submit[64];

/* The op under test, with the short timeout where it waits for the other rank. */
static int op_run(struct tplan_rank_env *env, struct nth_state *st, enum nth_op op)
{
	uint64_t in = 7 + env->rank, out[2];

	switch (op) {
	case OP_PUT:
		return env->rank ? 0 : tplan_put(st->ctx, 1, 0, 8192, 4096);
	case OP_CHAIN_SUBMIT: {
		uint64_t own = tplan_heap_devaddr(st->ctx, 0), peer = tplan_heap_devaddr(st->ctx, 1);
		struct tplan_sdma_poll_regmem poll = {
			.addr = own + HEAP / 2, .mask = TPLAN_CHAIN_POLL_MASK,
			.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
			.retry = TPLAN_CHAIN_POLL_RETRY,
		};
		struct tplan_sdma_copy_linear copy = { .src = own, .dst = peer, .bytes = 64 };
		struct tplan_sdma_atomic add = {
			.addr = peer + HEAP / 2 + 64, .src_data = 1,
			.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
		};
		struct tplan_chain_desc d = {
			.ref = 0, .ready_offset = HEAP / 2, .arrival_offset = HEAP / 2 + 64,
		};
		struct tplan_chain_submit cs = {
			.size = sizeof(cs), .peer = 1, .nchains = 1, .chains = (uintptr_t)&d,
			.dwords = (uintptr_t)dw_submit,
		};

		if (env->rank)
			return 0;
		d.ndw = tplan_sdma_encode_poll_regmem(dw_submit, 64, &poll);
		d.ndw += tplan_sdma_encode_copy_linear(dw_submit + d.ndw, 64 - d.ndw, &copy);
		d.ndw += tplan_sdma_encode_atomic(dw_submit + d.ndw, 64 - d.ndw, &add);
		cs.ndw = d.ndw;
		return tplan_test_ioctl(tplan_ctx_fd(st->ctx), TPLAN_IOC_CHAIN_SUBMIT, &cs);
	}
	case OP_ALL_GATHER:
		return tplan_all_gather(st->ctx, &in, sizeof(in), out, STEP_MS);
	case OP_CREATE:
		return plan_create(st, env->rank, STEP_MS);
	case OP_PREPARE:
		return plan_prepare(st, env->rank, STEP_MS);
	case OP_START:
		return tp_start(&st->p, NULL);
	case OP_WAIT:
		return tp_wait(&st->p, TP_TIMEOUT, NULL, 0, NULL);
	case OP_NEXT_ROUND: {
		struct tplan_plan_next_round nr = {
			.size = sizeof(nr), .plan_id = st->p.id, .timeout_ms = STEP_MS,
		};

		return tplan_test_ioctl(st->p.fd, TPLAN_IOC_PLAN_NEXT_ROUND, &nr);
	}
	case OP_CLOSE:
		return plan_close(st, STEP_MS);
	}
	return -EINVAL;
}

/* Undo what setup and the op left: the plan closed, the queue drained. */
static int op_cleanup(struct tplan_rank_env *env, struct nth_state *st)
{
	int ret;

	if (st->have_plan) {
		ret = plan_close(st, TP_TIMEOUT);
		/*
		 * Closed by the op itself (ENOENT; EBUSY while its chains
		 * still drain), or a step of it timed out.
		 */
		if (ret && ret != -ENOENT && ret != -EBUSY && ret != -ETIMEDOUT)
			RANK_FAIL("close after the op: %d", ret);
	}
	tp_free_chains(&st->p);
	if (env->rank == 0)
		RANK_OK(tplan_queue_flush(st->ctx, 1, TP_TIMEOUT));
	return 0;
}

/*
 * Where rank 0's queue to rank 1 is written up to, for the ops that queue
 * packets directly (put, chain submit): a success must have moved it.
 */
static int queues_directly(enum nth_op op)
{
	return op == OP_PUT || op == OP_CHAIN_SUBMIT;
}

static uint64_t queued_packets(struct nth_state *st)
{
	struct tplan_queue_info qi = { .size = sizeof(qi) };

	if (tplan_queue_info(st->ctx, 1, &qi))
		return ~0ULL;
	return qi.wptr;
}

enum { W_SYNC, W_R0, W_R1, W_DONE };

static int rank_nth(struct tplan_rank_env *env)
{
	enum nth_op op = *(enum nth_op *)env->arg;
	struct nth_state st = { 0 };
	int nth = fail_nth_open(), ret, other, fired = 0;
	uint64_t phase = 0;
	unsigned int n;

	RANK_ASSERT(nth >= 0);
	RANK_OK(tp_join(env, HEAP, 0, &st.ctx));
	for (n = 1; n < MAX_POINTS; n++) {
		RANK_OK(step_sync(env, &phase));
		if (op_setup(env, &st, op))
			return -1;
		RANK_OK(step_sync(env, &phase));
		if (env->rank == 0) {
			uint64_t before = queues_directly(op) ? queued_packets(&st) : 0;

			RANK_OK(fail_nth_arm(nth, n));
			ret = op_run(env, &st, op);
			fired = fail_nth_fired(nth);
			if (!ret && queues_directly(op) && queued_packets(&st) == before)
				RANK_FAIL("point %u: the call succeeded yet queued nothing: an error was lost",
					  n);
		} else {
			ret = op_run(env, &st, op);
		}
		if (op == OP_CREATE && ret)
			st.have_plan = 0;
		RANK_LISTED(op_cmd(op), ret);
		tplan_shared_set(&env->shared[env->rank ? W_R1 : W_R0], (uint64_t)(ret + 1000));
		RANK_OK(step_sync(env, &phase));
		other = (int)env->shared[env->rank ? W_R0 : W_R1] - 1000;
		if (env->rank == 0 && !fired && ret)
			RANK_FAIL("point %u did not fire, yet the call failed: %d", n, ret);
		if (op_collective(op)) {
			if (env->rank == 0 && ret && other == -ETIMEDOUT) {
				/*
				 * Rank 0 failed before it arrived: rank 1 gave up
				 * waiting.  The same step again completes that
				 * collective, failed, on rank 0 too.
				 */
				RANK_ERR(-ETIMEDOUT, op_run(env, &st, op));
				if (op == OP_CREATE)
					st.have_plan = 0;
			} else if (op == OP_ALL_GATHER && ((env->rank == 0 && ret == -EFAULT && !other) ||
							   (env->rank == 1 && !ret && other == -EFAULT))) {
				/*
				 * Rank 0 could not write its result: the all-gather
				 * happened on both all the same (uapi/tplan.h), which
				 * the next point's all-gather, paired, shows.
				 */
			} else if ((ret == 0) != (other == 0) && !(env->rank == 1 && ret == -ETIMEDOUT)) {
				RANK_FAIL("point %u: this rank %d, the other %d: not every rank or none",
					  n, ret, other);
			}
		}
		RANK_OK(step_sync(env, &phase));
		if (op_cleanup(env, &st))
			return -1;
		RANK_OK(step_sync(env, &phase));
		if (env->rank == 0) {
			/* Nothing of the plan is left once both closed it and it drained. */
			RANK_OK(tp_queues_idle(st.ctx, TP_TIMEOUT));
			if (stat_of("plans") != 0)
				RANK_FAIL("point %u: %lld plans left", n, (long long)stat_of("plans"));
			tplan_shared_set(&env->shared[W_DONE], !fired);
		}
		RANK_OK(step_sync(env, &phase));
		if (env->shared[W_DONE])
			break;
	}
	RANK_ASSERT(n < MAX_POINTS);
	if (env->rank == 0)
		printf("# op %d: %u failure points walked, then a clean call\n", (int)op, n);
	RANK_OK(tplan_barrier(st.ctx, TP_TIMEOUT));
	tplan_ctx_close(st.ctx);
	close(nth);
	return 0;
}

#define NTH_TEST(name, o)							\
	TEST_F_TIMEOUT(nth, name, 600)						\
	{									\
		enum nth_op op = o;						\
									\
		TPLAN_SETUP_SKIPPED_RETURN();					\
		RUN_RANKS(2, rank_nth, &op, RANKS_TIMEOUT_MS);			\
	}

NTH_TEST(put, OP_PUT)
NTH_TEST(chain_submit, OP_CHAIN_SUBMIT)
NTH_TEST(all_gather, OP_ALL_GATHER)
NTH_TEST(plan_create, OP_CREATE)
NTH_TEST(plan_prepare, OP_PREPARE)
NTH_TEST(plan_start, OP_START)
NTH_TEST(plan_wait, OP_WAIT)
NTH_TEST(plan_next_round, OP_NEXT_ROUND)
NTH_TEST(plan_close, OP_CLOSE)

TEST_HARNESS_MAIN
