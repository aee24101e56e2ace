// SPDX-License-Identifier: GPL-2.0
/*
 * The host build of device/tplan_device.h against a gate table in ordinary
 * memory: when a chunk's gate opens, what its writer counter reads, what
 * an extra mark does to the next round, arrived/wait and their poll bound,
 * and a team of threads ("CTA") sharing one atomic's result.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tplan_device.h"

#define WORLD 2
#define CHUNKS_PER_RANK 2

/* A plan's gate table for WORLD ranks of CHUNKS_PER_RANK chunks each. */
struct fake_plan {
	uint8_t *gates;
	struct tplan_handle handle;
};

static uint8_t *row_of(struct fake_plan *p, uint32_t gchunk)
{
	return p->gates + (size_t)gchunk * TPLAN_GATE_ROW_BYTES;
}

static uint64_t gate(struct fake_plan *p, uint32_t gchunk, uint32_t field)
{
	return __atomic_load_n((uint64_t *)(row_of(p, gchunk) + field), __ATOMIC_ACQUIRE);
}

/* What the engine's POLL_REGMEM reads: ready's low 32 bits, acquire. */
static uint32_t engine_ready(struct fake_plan *p, uint32_t gchunk)
{
	return __atomic_load_n((uint32_t *)(row_of(p, gchunk) + TPLAN_GATE_READY), __ATOMIC_ACQUIRE);
}

static int fake_plan_init(struct fake_plan *p, uint32_t rank, uint32_t writers)
{
	size_t bytes = (size_t)WORLD * CHUNKS_PER_RANK * TPLAN_GATE_ROW_BYTES;
	uint32_t r, c;

	memset(p, 0, sizeof(*p));
	p->gates = aligned_alloc(TPLAN_GATE_ROW_BYTES, bytes);
	if (!p->gates)
		return -1;
	memset(p->gates, 0, bytes);
	for (c = 0; c < WORLD * CHUNKS_PER_RANK; c++)
		*(uint32_t *)(row_of(p, c) + TPLAN_GATE_EXPECTED) = writers;
	p->handle.gates = (uint64_t)(uintptr_t)p->gates;
	p->handle.round = 1;
	p->handle.rank = rank;
	p->handle.world_size = WORLD;
	p->handle.nchunks = CHUNKS_PER_RANK;
	p->handle.total_chunks = WORLD * CHUNKS_PER_RANK;
	for (r = 0; r <= WORLD; r++)
		p->handle.chunk_base[r] = r * CHUNKS_PER_RANK;
	return 0;
}

static void view_for_round(struct fake_plan *p, uint32_t round, struct tplan_view *v)
{
	p->handle.round = round;
	tplan_view_init(v, &p->handle);
}

FIXTURE(gates)
{
	struct fake_plan plan;
	struct tplan_cta solo;	/* a team of one */
};

FIXTURE_SETUP(gates)
{
	ASSERT_EQ(0, fake_plan_init(&self->plan, 1, 3));
	memset(&self->solo, 0, sizeof(self->solo));
}

FIXTURE_TEARDOWN(gates)
{
	free(self->plan.gates);
}

/* writers = 3: the gate opens at the third mark of every round, not before. */
TEST_F(gates, ready_opens_exactly_at_the_last_writer_of_each_round)
{
	const uint32_t mine = self->plan.handle.chunk_base[1];
	struct tplan_view v;
	uint32_t round, w;

	for (round = 1; round <= 100; round++) {
		view_for_round(&self->plan, round, &v);
		for (w = 0; w < 3; w++) {
			ASSERT_EQ(round - 1, engine_ready(&self->plan, mine));
			ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
			ASSERT_EQ(3ULL * (round - 1) + w + 1,
				  gate(&self->plan, mine, TPLAN_GATE_WRITERS));
		}
		ASSERT_EQ(round, engine_ready(&self->plan, mine));
		ASSERT_EQ(round, gate(&self->plan, mine, TPLAN_GATE_READY));
	}
	/* The other chunk's row and the arrival gate were never touched. */
	ASSERT_EQ(0, gate(&self->plan, mine + 1, TPLAN_GATE_WRITERS));
	ASSERT_EQ(0, gate(&self->plan, mine + 1, TPLAN_GATE_READY));
	ASSERT_EQ(0, gate(&self->plan, mine, TPLAN_GATE_ARRIVAL));
	ASSERT_EQ(3, *(uint32_t *)(row_of(&self->plan, mine) + TPLAN_GATE_EXPECTED));
}

/*
 * A fourth mark in round 1 makes the second mark of round 2 the one that
 * reaches writers x round: round 2's gate opens before its third writer
 * wrote.  The counter gives it away at the end of round 1 (4 > 3 x 1),
 * which is what the kernel's wait checks (-EOVERFLOW, "extra marks").
 */
TEST_F(gates, an_extra_mark_opens_the_next_round_early)
{
	const uint32_t mine = self->plan.handle.chunk_base[1];
	struct tplan_view v;

	view_for_round(&self->plan, 1, &v);
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(1, engine_ready(&self->plan, mine));
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));	/* the extra one */
	ASSERT_EQ(4, gate(&self->plan, mine, TPLAN_GATE_WRITERS));	/* > 3 x 1 */
	ASSERT_EQ(1, engine_ready(&self->plan, mine));

	view_for_round(&self->plan, 2, &v);
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(1, engine_ready(&self->plan, mine));
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(6, gate(&self->plan, mine, TPLAN_GATE_WRITERS));
	ASSERT_EQ(2, engine_ready(&self->plan, mine));	/* open, one writer short */

	/* Round 2's last writer then overshoots and opens nothing. */
	ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 0));
	ASSERT_EQ(7, gate(&self->plan, mine, TPLAN_GATE_WRITERS));
	ASSERT_EQ(2, engine_ready(&self->plan, mine));
}

TEST_F(gates, out_of_range_marks_nothing)
{
	struct tplan_view v;
	uint32_t c;

	view_for_round(&self->plan, 1, &v);
	ASSERT_EQ(-EINVAL, tplan_mark_ready(&v, &self->solo, CHUNKS_PER_RANK));
	ASSERT_EQ(-EINVAL, tplan_mark_ready(&v, &self->solo, UINT32_MAX));
	for (c = 0; c < WORLD * CHUNKS_PER_RANK; c++) {
		ASSERT_EQ(0, gate(&self->plan, c, TPLAN_GATE_WRITERS));
		ASSERT_EQ(0, gate(&self->plan, c, TPLAN_GATE_READY));
	}
	ASSERT_EQ(-EINVAL, tplan_arrived(&v, &self->solo, WORLD, 0));
	ASSERT_EQ(-EINVAL, tplan_arrived(&v, &self->solo, 0, CHUNKS_PER_RANK));
	ASSERT_EQ(-EINVAL, tplan_wait(&v, &self->solo, WORLD, 0, 10));
	ASSERT_EQ(-EINVAL, tplan_wait(&v, &self->solo, 0, CHUNKS_PER_RANK, 10));
}

/* A peer's chunk: arrived once its chain's ATOMIC has added this round's 1. */
TEST_F(gates, arrived_and_wait_follow_the_arrival_gate)
{
	const uint32_t peer_chunk = self->plan.handle.chunk_base[0] + 1;
	uint64_t *arrival = (uint64_t *)(row_of(&self->plan, peer_chunk) + TPLAN_GATE_ARRIVAL);
	struct tplan_view v;

	view_for_round(&self->plan, 2, &v);
	ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 0, 1));
	ASSERT_EQ(-ETIMEDOUT, tplan_wait(&v, &self->solo, 0, 1, 50));
	ASSERT_EQ(-ETIMEDOUT, tplan_wait(&v, &self->solo, 0, 1, 1));
	ASSERT_EQ(-ETIMEDOUT, tplan_wait(&v, &self->solo, 0, 1, 0));	/* still one poll */

	__atomic_store_n(arrival, 1, __ATOMIC_RELEASE);	/* round 1's arrival */
	ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 0, 1));
	ASSERT_EQ(-ETIMEDOUT, tplan_wait(&v, &self->solo, 0, 1, 3));
	__atomic_store_n(arrival, 2, __ATOMIC_RELEASE);
	ASSERT_EQ(1, tplan_arrived(&v, &self->solo, 0, 1));
	ASSERT_EQ(0, tplan_wait(&v, &self->solo, 0, 1, 1));
	ASSERT_EQ(0, tplan_wait(&v, &self->solo, 0, 1, 0));
	/* The neighbouring chunk's gate is its own. */
	ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 0, 0));
}

/* This rank's own chunk: "arrived" once every writer marked it this round. */
TEST_F(gates, own_chunk_arrived_once_all_writers_marked)
{
	struct tplan_view v;
	uint32_t w;

	view_for_round(&self->plan, 1, &v);
	for (w = 0; w < 3; w++) {
		ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 1, 1));
		ASSERT_EQ(0, tplan_mark_ready(&v, &self->solo, 1));
	}
	ASSERT_EQ(1, tplan_arrived(&v, &self->solo, 1, 1));
	ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 1, 0));
	view_for_round(&self->plan, 2, &v);
	ASSERT_EQ(0, tplan_arrived(&v, &self->solo, 1, 1));
}

/*
 * Three writer CTAs of TEAM threads each write their part of a chunk and
 * mark it, round after round, while an "engine" thread polls ready as the
 * copy engine does.  When it sees the gate open, every writer has marked
 * (the counter is exactly 3 x round) and every part holds this round's data.
 */
#define WRITERS 3
#define TEAM 2
#define WORDS_PER_THREAD 64
#define ROUNDS 3000

struct writers_run {
	struct fake_plan plan;
	pthread_barrier_t round_start;		/* all writer threads + the engine */
	pthread_barrier_t team[WRITERS];
	int slot[WRITERS];
	uint64_t data[WRITERS][TEAM][WORDS_PER_THREAD];
	int early;				/* gate seen open with marks missing */
	int stale;				/* gate open, data of an older round */
};

struct writer_arg {
	struct writers_run *run;
	unsigned int cta, thread;
};

static uint64_t word_value(uint32_t round, unsigned int cta, unsigned int thread, unsigned int i)
{
	return (uint64_t)round << 32 | cta << 16 | thread << 8 | i;
}

static void *writer_main(void *p)
{
	struct writer_arg *a = p;
	struct writers_run *run = a->run;
	struct tplan_cta cta = { &run->team[a->cta], &run->slot[a->cta], a->thread };
	struct tplan_handle h = run->plan.handle;
	struct tplan_view v;
	uint32_t round, i;

	for (round = 1; round <= ROUNDS; round++) {
		pthread_barrier_wait(&run->round_start);
		h.round = round;
		tplan_view_init(&v, &h);
		for (i = 0; i < WORDS_PER_THREAD; i++)
			run->data[a->cta][a->thread][i] = word_value(round, a->cta, a->thread, i);
		tplan_mark_ready(&v, &cta, 0);
	}
	return NULL;
}

static void *engine_main(void *p)
{
	struct writers_run *run = p;
	uint32_t mine = run->plan.handle.chunk_base[1], round, c, t, i;

	for (round = 1; round <= ROUNDS; round++) {
		pthread_barrier_wait(&run->round_start);
		while (engine_ready(&run->plan, mine) < round)
			sched_yield();
		if (gate(&run->plan, mine, TPLAN_GATE_WRITERS) != (uint64_t)WRITERS * round)
			run->early++;
		for (c = 0; c < WRITERS; c++)
			for (t = 0; t < TEAM; t++)
				for (i = 0; i < WORDS_PER_THREAD; i++)
					if (run->data[c][t][i] != word_value(round, c, t, i))
						run->stale++;
	}
	return NULL;
}

TEST(writer_ctas_open_each_round_once_with_their_data)
{
	struct writer_arg args[WRITERS][TEAM];
	pthread_t threads[WRITERS][TEAM], engine;
	struct writers_run *run;
	unsigned int c, t;

	run = calloc(1, sizeof(*run));
	ASSERT_NE(NULL, run);
	ASSERT_EQ(0, fake_plan_init(&run->plan, 1, WRITERS));
	ASSERT_EQ(0, pthread_barrier_init(&run->round_start, NULL, WRITERS * TEAM + 1));
	for (c = 0; c < WRITERS; c++)
		ASSERT_EQ(0, pthread_barrier_init(&run->team[c], NULL, TEAM));
	for (c = 0; c < WRITERS; c++)
		for (t = 0; t < TEAM; t++) {
			args[c][t] = (struct writer_arg) { run, c, t };
			ASSERT_EQ(0, pthread_create(&threads[c][t], NULL, writer_main, &args[c][t]));
		}
	ASSERT_EQ(0, pthread_create(&engine, NULL, engine_main, run));
	for (c = 0; c < WRITERS; c++)
		for (t = 0; t < TEAM; t++)
			pthread_join(threads[c][t], NULL);
	pthread_join(engine, NULL);

	EXPECT_EQ(0, run->early);
	EXPECT_EQ(0, run->stale);
	/* One add per team call, not one per thread. */
	EXPECT_EQ((uint64_t)WRITERS * ROUNDS,
		  gate(&run->plan, run->plan.handle.chunk_base[1], TPLAN_GATE_WRITERS));
	EXPECT_EQ(ROUNDS, gate(&run->plan, run->plan.handle.chunk_base[1], TPLAN_GATE_READY));
	pthread_barrier_destroy(&run->round_start);
	for (c = 0; c < WRITERS; c++)
		pthread_barrier_destroy(&run->team[c]);
	free(run->plan.gates);
	free(run);
}

/*
 * A team of four: thread 0 reads the gate, the others get its result.  The
 * gate flips between calls (thread 0 flips it once the call returns), and
 * the other threads are slowed at random, so a thread that read the gate
 * itself, or a slot overwritten before everyone read it, shows up as a
 * wrong answer.
 */
#define SHARE_THREADS 4
#define SHARE_CALLS 2000

struct share_run {
	struct fake_plan plan;
	pthread_barrier_t barrier;
	int slot;
	int wrong[SHARE_THREADS];
	int timeouts[SHARE_THREADS];
};

struct share_arg {
	struct share_run *run;
	unsigned int thread;
};

static void *share_main(void *p)
{
	struct share_arg *a = p;
	struct share_run *run = a->run;
	struct tplan_cta cta = { &run->barrier, &run->slot, a->thread };
	uint32_t peer_chunk = run->plan.handle.chunk_base[0];
	uint64_t *arrival = (uint64_t *)(row_of(&run->plan, peer_chunk) + TPLAN_GATE_ARRIVAL);
	unsigned int seed = a->thread + 1, i;
	struct tplan_view v;

	tplan_view_init(&v, &run->plan.handle);	/* round 1 */
	for (i = 0; i < SHARE_CALLS; i++) {
		int got = tplan_arrived(&v, &cta, 0, 0);

		if (got != (int)(i & 1))
			run->wrong[a->thread]++;
		if (a->thread == 0)
			__atomic_store_n(arrival, (i + 1) & 1, __ATOMIC_RELEASE);
		else if (rand_r(&seed) % 4 == 0)
			sched_yield();
	}
	/* Never arrives: every thread gives up after the same number of polls. */
	__atomic_store_n(arrival, 0, __ATOMIC_RELEASE);
	for (i = 0; i < 20; i++)
		run->timeouts[a->thread] += tplan_wait(&v, &cta, 0, 0, i + 1) == -ETIMEDOUT;
	return NULL;
}

TEST(a_team_shares_one_threads_result)
{
	struct share_arg args[SHARE_THREADS];
	pthread_t threads[SHARE_THREADS];
	struct share_run *run;
	unsigned int t;

	run = calloc(1, sizeof(*run));
	ASSERT_NE(NULL, run);
	ASSERT_EQ(0, fake_plan_init(&run->plan, 1, 1));
	ASSERT_EQ(0, pthread_barrier_init(&run->barrier, NULL, SHARE_THREADS));
	for (t = 0; t < SHARE_THREADS; t++) {
		args[t] = (struct share_arg) { run, t };
		ASSERT_EQ(0, pthread_create(&threads[t], NULL, share_main, &args[t]));
	}
	for (t = 0; t < SHARE_THREADS; t++)
		pthread_join(threads[t], NULL);
	for (t = 0; t < SHARE_THREADS; t++) {
		EXPECT_EQ(0, run->wrong[t]);
		EXPECT_EQ(20, run->timeouts[t]);
	}
	pthread_barrier_destroy(&run->barrier);
	free(run->plan.gates);
	free(run);
}

TEST_HARNESS_MAIN
