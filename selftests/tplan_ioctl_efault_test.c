// SPDX-License-Identifier: GPL-2.0
/*
 * The EFAULT half of the errno contract: a call whose answer cannot be
 * written (its struct, or a buffer it points to, in read-only memory)
 * fails with EFAULT and changes nothing the caller cannot see: the file
 * is not in the group, the plan does not exist on any rank, the round is
 * not started, waited for or queued, nothing is closed or queued; and the
 * same call with writable memory then works as if the first never
 * happened.  Calls whose structs hold only In fields never write them,
 * so read-only memory is fine for those.
 */
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define PART 4096
#define RANKS_TIMEOUT_MS 120000

FIXTURE(efault) {
	int fd;
};

FIXTURE_SETUP(efault)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(efault)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* A copy of a struct in a page the caller cannot write. */
static void *read_only_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, 4096, PROT_READ)) {
		munmap(p, 4096);
		return NULL;
	}
	return p;
}

static void drop(void *p)
{
	if (p)
		munmap(p, 4096);
}

/* ---- one file ------------------------------------------------------------------ */

TEST_F(efault, join_answer_unwritable_leaves_the_file_out_of_the_group)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = tplan_test_key(), .world_size = 1, .rank = 0,
		.heap_size = HEAP, .engine = TPLAN_ENGINE_SOFT, .sdma_ip = TPLAN_SDMA_440,
		.timeout_ms = 10000,
	};
	struct tplan_heap_info hi = { .size = sizeof(hi) };
	void *ro = read_only_copy(&j, sizeof(j));

	ASSERT_NE(NULL, ro);
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, ro));
	/* Not in a group: not joined, and a join is still possible. */
	ASSERT_EQ(-ENOTCONN, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, &j));
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
	drop(ro);
}

TEST_F(efault, in_only_structs_may_be_read_only)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = tplan_test_key(), .world_size = 1, .rank = 0,
		.heap_size = HEAP, .engine = TPLAN_ENGINE_SOFT, .sdma_ip = TPLAN_SDMA_440,
		.timeout_ms = 10000,
	};
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = 1000 };
	void *ro;

	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, &j));
	ro = read_only_copy(&b, sizeof(b));
	ASSERT_NE(NULL, ro);
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_BARRIER, ro));
	drop(ro);
}

/* Answers of calls that change nothing: EFAULT, and a retry works. */
TEST_F(efault, query_answers_unwritable_are_efault)
{
	struct tplan_info info = { .size = sizeof(info) };
	struct tplan_group_join j = {
		.size = sizeof(j), .key = tplan_test_key(), .world_size = 1, .rank = 0,
		.heap_size = HEAP, .engine = TPLAN_ENGINE_SOFT, .sdma_ip = TPLAN_SDMA_440,
		.timeout_ms = 10000,
	};
	struct tplan_heap_info hi = { .size = sizeof(hi) };
	void *ro;

	ro = read_only_copy(&info, sizeof(info));
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_INFO, ro));
	drop(ro);
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, &j));
	ro = read_only_copy(&hi, sizeof(hi));
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, ro));
	drop(ro);
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
}

/* ---- two ranks ------------------------------------------------------------------ */

enum efault_step {
	EF_CREATE,		/* the create struct itself */
	EF_CREATE_CHUNK_BASE,	/* the chunk_base array it points to */
	EF_PREPARE,
	EF_START,
	EF_WAIT,
	EF_WAIT_REPORT,
	EF_NEXT_ROUND,
	EF_CLOSE,
	EF_ALL_GATHER_OUT,
	EF_CHAIN_SUBMIT,
};

/* Rank 0 makes the call with read-only memory; rank 1 makes it normally. */
static int rank_efault(struct tplan_rank_env *env)
{
	enum efault_step step = *(enum efault_step *)env->arg;
	unsigned int me = env->rank;
	static struct tp_even ev;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t state, round;
	void *ro = NULL;
	int ret;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));

	if (step == EF_CREATE || step == EF_CREATE_CHUNK_BASE) {
		struct tplan_plan_create c = {
			.size = sizeof(c), .buffer_bytes = PART * 2, .own_offset = me * PART,
			.own_bytes = PART, .nchunks = 1, .timeout_ms = TP_TIMEOUT,
		};
		uint32_t base[3];
		int64_t plans;

		c.chunk_base = (uintptr_t)base;
		if (me == 0 && step == EF_CREATE_CHUNK_BASE) {
			ro = read_only_copy(base, sizeof(base));
			c.chunk_base = (uintptr_t)ro;
		}
		if (me == 0 && step == EF_CREATE)
			ro = read_only_copy(&c, sizeof(c));
		ret = tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_PLAN_CREATE,
				       me == 0 && step == EF_CREATE ? ro : (void *)&c);
		/* Created on every rank or on none: on none. */
		RANK_ERR(-EFAULT, ret);
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		if (!tplan_debugfs_stat("plans", &plans))
			RANK_EQ(0, plans);
		drop(ro);
		/* And a plan works now. */
		RANK_OK(tp_create(&p, ctx, 0, PART * 2, me * PART, PART, 1));
		RANK_OK(tp_even_sched(&ev, me * PART, PART, 1, 1, 0));
		RANK_OK(tp_prepare(&p, &ev.s));
		if (tp_ag_round(&p, PART, 1, env->key))
			return -1;
		goto out_close;
	}
	if (step == EF_ALL_GATHER_OUT) {
		uint64_t in = 10 + me, out[2], *ro_out;

		if (me == 0) {
			ro_out = read_only_copy(out, sizeof(out));
			/* Not written: so not arrived either. */
			RANK_ERR(-EFAULT, tplan_all_gather(ctx, &in, sizeof(in), ro_out, TP_TIMEOUT));
			drop(ro_out);
		}
		/* The next all-gather of each rank pairs with the other's. */
		RANK_OK(tplan_all_gather(ctx, &in, sizeof(in), out, TP_TIMEOUT));
		RANK_EQ(10, out[0]);
		RANK_EQ(11, out[1]);
		goto out;
	}

	RANK_OK(tp_create(&p, ctx, 0, PART * 2, me * PART, PART, 1));
	RANK_OK(tp_even_sched(&ev, me * PART, PART, 1, 1, 0));
	if (step == EF_PREPARE) {
		struct tplan_plan_prepare pp;

		RANK_OK(tp_build(&p, &ev.s));
		pp = (struct tplan_plan_prepare) {
			.size = sizeof(pp), .plan_id = p.id, .nchains = p.nchains, .ndw = p.ndw,
			.chains = (uintptr_t)p.chains, .dwords = (uintptr_t)p.dw,
			.writers = (uintptr_t)p.writers, .timeout_ms = TP_TIMEOUT,
		};
		ro = me == 0 ? read_only_copy(&pp, sizeof(pp)) : &pp;
		/* Every rank or none: none; nothing queued, the plan FAILED. */
		RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_PREPARE, ro));
		RANK_OK(tp_state(&p, &state, NULL));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
		if (me == 0)
			drop(ro);
		goto out_close;
	}
	RANK_OK(tp_prepare(&p, &ev.s));

	if (step == EF_START && me == 0) {
		struct tplan_plan_start st = { .size = sizeof(st), .plan_id = p.id };

		ro = read_only_copy(&st, sizeof(st));
		RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_START, ro));
		drop(ro);
		/* Not started: starting works, once. */
	}
	if (tp_ag_round(&p, PART, 1, env->key))
		return -1;

	if (step == EF_NEXT_ROUND) {
		struct tplan_plan_next_round nr = {
			.size = sizeof(nr), .plan_id = p.id, .timeout_ms = TP_TIMEOUT,
		};

		if (me == 0) {
			struct tp_qsnap before, after;

			/*
			 * Local: nothing released or queued here, still DONE
			 * at round 1; rank 1's own re-arm is its business.
			 */
			RANK_OK(tp_snap(ctx, &before));
			ro = read_only_copy(&nr, sizeof(nr));
			RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_NEXT_ROUND, ro));
			drop(ro);
			RANK_OK(tp_state(&p, &state, &round));
			RANK_EQ(TPLAN_PLAN_DONE, state);
			RANK_EQ(1, round);
			RANK_OK(tp_snap(ctx, &after));
			RANK_EQ(before.wptr[1], after.wptr[1]);
			RANK_EQ(0, tp_gate_read(&p, 0, p.chunk_base[env->world], TPLAN_GATE_RELEASED));
		}
		RANK_OK(tp_next(&p, &round));
		RANK_EQ(2, round);
		if (tp_ag_round(&p, PART, 2, env->key))
			return -1;
	}
	if (step == EF_CLOSE && me == 0) {
		struct tplan_plan_close cl = {
			.size = sizeof(cl), .plan_id = p.id, .timeout_ms = TP_TIMEOUT,
		};

		ro = read_only_copy(&cl, sizeof(cl));
		/* Not closed: the plan is as it was, and closes normally. */
		RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_CLOSE, ro));
		RANK_OK(tp_state(&p, &state, NULL));
		RANK_EQ(TPLAN_PLAN_DONE, state);
		drop(ro);
	}
	if (step == EF_CHAIN_SUBMIT) {
		RANK_OK(tp_close(&p, NULL));
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		if (me == 0) {
			struct tplan_chain_desc d = {
				.ndw = p.chains[0].ndw, .ready_offset = HEAP / 2,
				.arrival_offset = HEAP / 2 + 64,
			};
			struct tplan_chain_submit cs = {
				.size = sizeof(cs), .peer = 1, .nchains = 1, .ndw = d.ndw,
				.chains = (uintptr_t)&d, .dwords = (uintptr_t)p.dw,
			};
			struct tplan_queue_info before, after;

			uint32_t *add = p.dw + d.ndw - TPLAN_SDMA_ATOMIC_DW;
			uint64_t ready = tplan_heap_devaddr(ctx, 0) + HEAP / 2;
			uint64_t arrival = tplan_heap_devaddr(ctx, 1) + HEAP / 2 + 64;

			/* Re-aim the plan's first chain at gates of our choosing. */
			p.dw[1] = (uint32_t)ready;
			p.dw[2] = (uint32_t)(ready >> 32);
			add[1] = (uint32_t)arrival;
			add[2] = (uint32_t)(arrival >> 32);
			RANK_OK(tplan_queue_info(ctx, 1, &before));
			ro = read_only_copy(&cs, sizeof(cs));
			RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_CHAIN_SUBMIT, ro));
			drop(ro);
			/* Nothing queued or charged. */
			RANK_OK(tplan_queue_info(ctx, 1, &after));
			RANK_EQ(before.wptr, after.wptr);
			RANK_EQ(0, after.prep_charged);
		}
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		tp_free_chains(&p);
		goto out;
	}
out_close:
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);
out:
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tplan_ctx_close(ctx);
	return 0;
}

/*
 * A wait whose answer (EF_WAIT: the struct; EF_WAIT_REPORT: the shortfall
 * report of a wait that times out) cannot be written: EFAULT, and the
 * round is as it was (PREPARED, started); the next wait completes it.
 */
static int rank_wait_efault(struct tplan_rank_env *env)
{
	enum efault_step step = *(enum efault_step *)env->arg;
	unsigned int me = env->rank;
	struct tplan_plan_shortfall rep[4];
	static struct tp_even ev;
	struct tplan_plan_wait w;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t state;
	void *ro;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, PART * 2, me * PART, PART, 1));
	RANK_OK(tp_even_sched(&ev, me * PART, PART, 1, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_start(&p, NULL));
	if (me == 1 || step == EF_WAIT)
		tp_mark(&p, 0, 1);
	if (me == 0) {
		w = (struct tplan_plan_wait) {
			.size = sizeof(w), .plan_id = p.id, .timeout_ms = TP_TIMEOUT,
		};
		if (step == EF_WAIT_REPORT) {
			/* Times out at once (not marked): a report to write, nowhere to. */
			ro = read_only_copy(rep, sizeof(rep));
			w.report = (uintptr_t)ro;
			w.report_cap = 4;
			w.timeout_ms = 1;
			RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_WAIT, &w));
		} else {
			ro = read_only_copy(&w, sizeof(w));
			/* Every chunk arrives meanwhile: done, but the answer cannot go out. */
			RANK_OK(tplan_shared_wait((volatile uint64_t *)
				tp_gate(&p, 0, p.chunk_base[1], TPLAN_GATE_ARRIVAL), 1, TP_TIMEOUT));
			RANK_ERR(-EFAULT, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_WAIT, ro));
		}
		drop(ro);
		RANK_OK(tp_state(&p, &state, NULL));
		RANK_EQ(TPLAN_PLAN_PREPARED, state);
		if (step == EF_WAIT_REPORT)
			tp_mark(&p, 0, 1);
	}
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_DONE, state);
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(efault, wait_answer_unwritable_leaves_the_round_prepared, 150)
{
	enum efault_step s = EF_WAIT;

	RUN_RANKS(2, rank_wait_efault, &s, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(efault, wait_report_unwritable_leaves_the_round_prepared, 150)
{
	enum efault_step s = EF_WAIT_REPORT;

	RUN_RANKS(2, rank_wait_efault, &s, RANKS_TIMEOUT_MS);
}

#define EFAULT_TEST(name, step)						\
	TEST_F_TIMEOUT(efault, name, 150)				\
	{								\
		enum efault_step s = step;				\
									\
		RUN_RANKS(2, rank_efault, &s, RANKS_TIMEOUT_MS);	\
	}

EFAULT_TEST(create_answer_unwritable_creates_no_plan_anywhere, EF_CREATE)
EFAULT_TEST(create_chunk_base_unwritable_creates_no_plan_anywhere, EF_CREATE_CHUNK_BASE)
EFAULT_TEST(prepare_answer_unwritable_queues_nothing_anywhere, EF_PREPARE)
EFAULT_TEST(start_answer_unwritable_does_not_start, EF_START)
EFAULT_TEST(next_round_answer_unwritable_releases_and_queues_nothing, EF_NEXT_ROUND)
EFAULT_TEST(close_answer_unwritable_closes_nothing, EF_CLOSE)
EFAULT_TEST(all_gather_out_unwritable_does_not_arrive, EF_ALL_GATHER_OUT)
EFAULT_TEST(chain_submit_answer_unwritable_queues_nothing, EF_CHAIN_SUBMIT)

TEST_HARNESS_MAIN
