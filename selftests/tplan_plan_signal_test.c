// SPDX-License-Identifier: GPL-2.0
/*
 * Signals in the collective plan steps, where the in-VM fuzzer found the
 * module going wrong.  Two ranks; the test process times the signal:
 *   - PLAN_PREPARE interrupted in its first vote (the chains' check):
 *     the peer that arrives afterwards must get an answer, not an oops
 *     reading the interrupted rank's spans;
 *   - PLAN_PREPARE interrupted in its last vote, after the rank queued
 *     its chains, while the peer still waits for ring space: the step
 *     must succeed on every rank or on none (uapi/tplan.h);
 *   - the same with the signal sent to the rank waiting for ring space
 *     (and PLAN_NEXT_ROUND, local, in its wait for ring space): EINTR
 *     means a signal arrived at the caller, so the other rank, which got
 *     none, must not answer EINTR;
 *   - PLAN_PREPARE with SIGKILL: the killed rank votes no while it dies,
 *     and the other rank fails (the step is on every rank or none), but
 *     not with EINTR, which only a signal to the caller may cause.
 * (next_round has no vote: tplan_plan_release_test.c tests a rank that
 * cannot queue its round, or dies, while its peers' rounds are queued.)
 * The last two stall a queue with injected packets (allow_inject=1).
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "tplan_plan_util.h"
#include "tplan_stall.h"
#include "tplan_errno.h"

#define HEAP (1U << 20)
#define PART 4096
#define REGIONS 4			/* a chain longer than the room left in the ring */
#define RANKS_TIMEOUT_MS 100000
#define STALL_WORD (HEAP / 2)
/*
 * Steps that can only end at their timeout (the peer comes later, or its
 * queue stays stalled until the answer): short ones keep the test quick,
 * and the assertions hold whichever way a slow host ends the step.
 */
#define FIRST_VOTE_TIMEOUT_MS 2000
#define STALLED_STEP_TIMEOUT_MS 3000

/* shared words */
#define W_PID(r)	(r)
#define W_READY(r)	(2 + (r))	/* about to make the step's call */
#define W_DONE(r)	(4 + (r))	/* returned: 1000 + its -errno (1000: success) */
#define W_GO		6		/* rank 1 may call (first-vote test) */
#define W_RELEASE	7		/* the stalled queue may go on */

FIXTURE(signal) {
	int unused;
};

FIXTURE_SETUP(signal)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(signal)
{
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* A handler without SA_RESTART: the blocked ioctl returns EINTR. */
static int catch_usr1(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL);
}

/* sig to a rank's main thread (not to a helper thread it may have). */
static int poke(pid_t pid, int sig)
{
	return (int)syscall(SYS_tgkill, pid, pid, sig);
}

/* The kernel function a task sleeps in ("" if unknown). */
static void wchan(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
}

/* Wait (bounded) until rank r published its result; 1000 + ret, or 0. */
static uint64_t result_of(volatile uint64_t *shared, unsigned int r)
{
	if (tplan_shared_wait(&shared[W_DONE(r)], 1, RANKS_TIMEOUT_MS / 2))
		return 0;
	return shared[W_DONE(r)];
}

static void publish(struct tplan_rank_env *env, int ret)
{
	tplan_shared_set(&env->shared[W_DONE(env->rank)], (uint64_t)(1000 + ret));
}

/* ---- interrupted in the first vote ------------------------------------------------ */

static int rank_first_vote(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	struct tplan_ctx *ctx;
	uint64_t t0, took;
	struct tp_plan p;
	int ret;

	RANK_OK(catch_usr1());
	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	tplan_shared_set(&env->shared[W_PID(env->rank)], (uint64_t)getpid());
	RANK_OK(tp_create(&p, ctx, 0, 2 * PART, env->rank * PART, PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, 1, 1, 0));
	RANK_OK(tp_build(&p, &ev.s));
	if (env->rank == 1)
		RANK_OK(tplan_shared_wait(&env->shared[W_GO], 1, RANKS_TIMEOUT_MS / 2));
	else
		p.step_timeout_ms = FIRST_VOTE_TIMEOUT_MS;	/* it can only time out */
	tplan_shared_set(&env->shared[W_READY(env->rank)], 1);
	t0 = tplan_now_ms();
	ret = tp_prepare_built(&p);
	took = tplan_now_ms() - t0;
	publish(env, ret);
	/* Plan steps are not interrupted: no EINTR, and the same answer on both. */
	RANK_ASSERT(ret != -EINTR);
	/* The signal did not end rank 0's wait early. */
	if (env->rank == 0)
		RANK_ASSERT(ret != -ETIMEDOUT || took >= FIRST_VOTE_TIMEOUT_MS);
	RANK_LISTED(TPLAN_IOC_PLAN_PREPARE, ret);
	/* stay until the other rank answered: its file keeps the group */
	tplan_shared_wait(&env->shared[W_DONE(1 - env->rank)], 1, RANKS_TIMEOUT_MS / 2);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

/*
 * Rank 0 is signalled while it waits for rank 1 in PLAN_PREPARE's first
 * vote, and rank 1 prepares only once rank 0 answered.  Plan steps are
 * not interrupted by signals, so rank 0 answers at its timeout
 * (ETIMEDOUT: rank 1 was late) and rank 1 gets the same answer at once;
 * nobody reads spans another freed (the module once dereferenced a NULL
 * pointer here and the peer's process died with an Oops).
 */
TEST_F_TIMEOUT(signal, prepare_interrupted_in_its_first_vote_leaves_the_peer_an_answer, 120)
{
	struct tplan_ranks r;
	uint64_t res;
	pid_t pid0;
	int nf;

	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(0, tplan_ranks_start(&r, 2, tplan_test_key(), rank_first_vote, NULL));
	ASSERT_EQ(0, tplan_shared_wait(&r.shared[W_READY(0)], 1, RANKS_TIMEOUT_MS / 2));
	pid0 = (pid_t)r.shared[W_PID(0)];
	ASSERT_EQ(0, tplan_test_wait_blocked(pid0, RANKS_TIMEOUT_MS / 2));
	ASSERT_EQ(0, poke(pid0, SIGUSR1));
	ASSERT_NE(0, result_of(r.shared, 0));
	tplan_shared_set(&r.shared[W_GO], 1);
	res = result_of(r.shared, 1);
	nf = tplan_ranks_wait(&r, RANKS_TIMEOUT_MS, 0);
	if (!res)
		TH_LOG("rank 1's PLAN_PREPARE never returned (status %#x): see the kernel log",
		       r.rep[1].status);
	TPLAN_RANKS_REPORT(&r, nf, 0);
	ASSERT_NE(0, res);
	ASSERT_EQ(result_of(r.shared, 0), res);
	tplan_ranks_release(&r);
}

/* ---- interrupted in the last vote -------------------------------------------------- */

enum step { STEP_PREPARE, STEP_NEXT_ROUND };

struct last_vote {
	enum step step;
	unsigned int signalled;	/* 0: the rank in the last vote, 1: the one waiting for room */
	int sig;		/* SIGUSR1 (caught, no SA_RESTART) or SIGKILL */
};

static void *release_when_told(void *arg)
{
	struct tplan_rank_env *env = arg;
	struct tplan_ctx *ctx = env->arg;

	tplan_shared_wait(&env->shared[W_RELEASE], 1, RANKS_TIMEOUT_MS);
	tplan_stall_release(ctx, STALL_WORD);
	return NULL;
}

/*
 * Rank 1's queue to rank 0 is stalled with a full ring, so rank 1 waits for
 * ring space while it queues the step's chains; rank 0 meanwhile waits for
 * it in the step's last vote.
 */
static int rank_last_vote(struct tplan_rank_env *env)
{
	const struct last_vote *lv = env->arg;
	struct tplan_rank_env helper_env = *env;
	static struct tp_even ev;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	pthread_t helper;
	int ret;

	RANK_OK(catch_usr1());
	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	tplan_shared_set(&env->shared[W_PID(env->rank)], (uint64_t)getpid());
	RANK_OK(tp_create(&p, ctx, 0, 2 * PART, env->rank * PART, PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * PART, PART, 1, REGIONS, 0));
	RANK_OK(tp_build(&p, &ev.s));
	if (lv->step == STEP_NEXT_ROUND) {
		RANK_OK(tp_prepare_built(&p));
		RANK_OK(tp_start(&p, NULL));
		tp_mark(&p, 0, 1);
		RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	}
	if (env->rank == 1) {
		RANK_OK(tplan_stall_queue(ctx, 0, STALL_WORD, 128));
		helper_env.arg = ctx;
		RANK_OK(pthread_create(&helper, NULL, release_when_told, &helper_env));
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	/* A killed rank must die waiting for ring space, not time out first. */
	if (lv->sig != SIGKILL)
		p.step_timeout_ms = STALLED_STEP_TIMEOUT_MS;
	tplan_shared_set(&env->shared[W_READY(env->rank)], 1);
	ret = lv->step == STEP_PREPARE ? tp_prepare_built(&p) : tp_next(&p, NULL);
	publish(env, ret);
	if (env->rank == 1) {
		tplan_shared_set(&env->shared[W_RELEASE], 1);
		pthread_join(helper, NULL);
	}
	if (lv->sig != SIGKILL)
		tplan_shared_wait(&env->shared[W_DONE(1 - env->rank)], 1, RANKS_TIMEOUT_MS / 2);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

static void errname(uint64_t res, char *buf, size_t len)
{
	int ret = (int)res - 1000;

	if (!res)
		snprintf(buf, len, "no answer");
	else
		snprintf(buf, len, "%s", ret ? strerror(-ret) : "success");
}

/*
 * Start both ranks in the step; once rank 1 waits for ring space and rank
 * 0 in a vote (it can only be the last), signal one of them, then let
 * rank 1's queue go on.  Returns the two answers in res[].
 */
static int run_last_vote(struct __test_metadata *_metadata, const struct last_vote *lv,
			 uint64_t res[2])
{
	struct tplan_ranks r;
	char w0[64], w1[64];
	uint32_t killed;
	uint64_t end;
	pid_t pid[2];
	int nf;

	if (tplan_ranks_start(&r, 2, tplan_test_key(), rank_last_vote, (void *)lv))
		return -1;
	if (tplan_shared_wait(&r.shared[W_READY(0)], 1, RANKS_TIMEOUT_MS / 2) ||
	    tplan_shared_wait(&r.shared[W_READY(1)], 1, RANKS_TIMEOUT_MS / 2))
		TH_LOG("the ranks did not get to the step");
	pid[0] = (pid_t)r.shared[W_PID(0)];
	pid[1] = (pid_t)r.shared[W_PID(1)];
	end = tplan_now_ms() + RANKS_TIMEOUT_MS / 2;
	for (;;) {
		tplan_test_wait_blocked(pid[0], 2000);
		tplan_test_wait_blocked(pid[1], 2000);
		wchan(pid[0], w0, sizeof(w0));
		wchan(pid[1], w1, sizeof(w1));
		if (!strcmp(w0, "tplan_group_exchange") && w1[0] &&
		    strcmp(w1, "tplan_group_exchange"))
			break;
		if (r.shared[W_DONE(0)] || r.shared[W_DONE(1)])
			break;	/* a slow host: the step already ended */
		if (tplan_now_ms() > end) {
			TH_LOG("rank 0 sleeps in '%s', rank 1 in '%s': not where the test wants them",
			       w0, w1);
			break;
		}
	}
	poke(pid[lv->signalled], lv->sig);
	/*
	 * Rank 0, in the vote, answers at the step's timeout at the latest;
	 * rank 1 waits for ring space until its queue is released (or for the
	 * module's 30 s without progress), so it is released once rank 0 has
	 * answered.
	 */
	res[0] = result_of(r.shared, 0);
	tplan_shared_set(&r.shared[W_RELEASE], 1);
	if (lv->sig != SIGKILL)
		res[1] = result_of(r.shared, 1);
	killed = lv->sig == SIGKILL ? 1U << lv->signalled : 0;
	nf = tplan_ranks_wait(&r, RANKS_TIMEOUT_MS, killed);
	TPLAN_RANKS_REPORT(&r, nf, killed);
	tplan_ranks_release(&r);
	return 0;
}

/* On every rank or on none: rank 0 failed (EINTR), so rank 1 must fail too. */
static void all_or_none(struct __test_metadata *_metadata, enum step step)
{
	struct last_vote lv = { .step = step, .signalled = 0, .sig = SIGUSR1 };
	uint64_t res[2] = { 0, 0 };
	char e0[64], e1[64];

	ASSERT_EQ(0, run_last_vote(_metadata, &lv, res));
	errname(res[0], e0, sizeof(e0));
	errname(res[1], e1, sizeof(e1));
	TH_LOG("PLAN_PREPARE: rank 0 (signalled in the last vote): %s; rank 1: %s", e0, e1);
	ASSERT_NE(0, res[0]);
	ASSERT_NE(0, res[1]);
	/* both succeeded, or both failed */
	ASSERT_EQ(res[0] == 1000, res[1] == 1000);
}

TEST_F_TIMEOUT(signal, prepare_interrupted_in_its_last_vote_fails_on_every_rank_or_none, 150)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	all_or_none(_metadata, STEP_PREPARE);
}

/* EINTR only where the signal went: rank 1 was signalled, rank 0 was not. */
static void eintr_where_signalled(struct __test_metadata *_metadata, enum step step)
{
	struct last_vote lv = { .step = step, .signalled = 1, .sig = SIGUSR1 };
	uint64_t res[2] = { 0, 0 };
	char e0[64], e1[64];

	ASSERT_EQ(0, run_last_vote(_metadata, &lv, res));
	errname(res[0], e0, sizeof(e0));
	errname(res[1], e1, sizeof(e1));
	TH_LOG("%s: rank 1 (signalled waiting for ring space): %s; rank 0 (no signal): %s",
	       step == STEP_PREPARE ? "PLAN_PREPARE" : "PLAN_NEXT_ROUND", e1, e0);
	ASSERT_NE(0, res[0]);
	ASSERT_NE(1000 - EINTR, res[0]);
}

TEST_F_TIMEOUT(signal, prepare_answers_eintr_only_on_the_rank_a_signal_reached, 150)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	eintr_where_signalled(_metadata, STEP_PREPARE);
}

TEST_F_TIMEOUT(signal, next_round_answers_eintr_only_on_the_rank_a_signal_reached, 150)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	eintr_where_signalled(_metadata, STEP_NEXT_ROUND);
}

/*
 * Rank 1 is killed while it waits for ring space: it votes no as it dies,
 * so rank 0 fails too, with the group's word for a rank that went away
 * (ECONNRESET), not with the dying rank's EINTR (no signal reached rank 0;
 * the module once passed the dead rank's EINTR on).
 */
static void killed_rank_fails_the_other_without_eintr(struct __test_metadata *_metadata,
						      enum step step)
{
	struct last_vote lv = { .step = step, .signalled = 1, .sig = SIGKILL };
	uint64_t res[2] = { 0, 0 };
	char e0[64];

	ASSERT_EQ(0, run_last_vote(_metadata, &lv, res));
	errname(res[0], e0, sizeof(e0));
	TH_LOG("PLAN_PREPARE: rank 1 killed waiting for ring space; rank 0 (no signal): %s", e0);
	ASSERT_NE(0, res[0]);
	ASSERT_NE(1000 - EINTR, res[0]);
	ASSERT_NE(1000, res[0]);
	ASSERT_EQ(1, tplan_errno_listed(TPLAN_IOC_PLAN_PREPARE, 1000 - (int)res[0]));
}

TEST_F_TIMEOUT(signal, prepare_on_a_rank_killed_while_it_queues_fails_elsewhere_without_eintr, 150)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	killed_rank_fails_the_other_without_eintr(_metadata, STEP_PREPARE);
}

TEST_HARNESS_MAIN
