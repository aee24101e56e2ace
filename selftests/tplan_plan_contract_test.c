// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel author's contract (spec, contracts 1, 2, 4 and 6) as the
 * kernel enforces it, through the raw PLAN_* ioctls and a CPU producer:
 * chunks completed out of order still arrive, in queue order; a mark too
 * many fails the wait and nothing of a later round is sent; a mark too few
 * times out naming the chunk and the shortfall; a peer's next-round data
 * lands only once the round was re-armed, with the regions fixed at
 * prepare.
 */
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define RANKS_TIMEOUT_MS 100000

FIXTURE(plan) {
	int unused;
};

FIXTURE_SETUP(plan)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(plan)
{
}

/* Every rank's part of the buffer at this rank holds round's data. */
static int check_all_parts(struct tp_plan *p, uint64_t part, uint32_t round, uint64_t salt)
{
	unsigned char *heap = tplan_heap_ptr(p->ctx, p->rank);
	unsigned int r;
	int64_t bad;

	for (r = 0; r < p->world; r++) {
		bad = tp_check(heap + p->buf_off + r * part, part, tp_seed(r, round, salt));
		if (bad >= 0)
			RANK_FAIL("round %u: rank %u's part differs at byte %lld", round, r,
				  (long long)bad);
	}
	return 0;
}

/* ---- contract 1: chunks completed out of schedule order --------------------- */

#define OOO_PART 4096
#define OOO_CHUNKS 8
#define OOO_ROUNDS 3

/*
 * Each round, chunks are written and marked last to first, except chunk 0
 * which is held back: its peers' queues run in schedule order, so nothing
 * of chunks 1..7 may arrive until chunk 0 is marked.  Then every byte of
 * every rank is where it belongs.
 */
static int rank_out_of_order(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	uint64_t salt = env->key, part = OOO_PART, chunk_len = OOO_PART / OOO_CHUNKS;
	unsigned char *own;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t round, c, g;
	unsigned int peer;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	own = (unsigned char *)tplan_heap_ptr(ctx, env->rank) + env->rank * part;
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, OOO_CHUNKS));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, OOO_CHUNKS, 2, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	for (round = 1; round <= OOO_ROUNDS; round++) {
		uint64_t seed = tp_seed(env->rank, round, salt);
		unsigned char *tmp = malloc(part);

		RANK_ASSERT(tmp);
		tp_fill(tmp, part, seed);
		RANK_OK(tp_start(&p, NULL));
		for (c = OOO_CHUNKS - 1; c >= 1; c--) {
			memcpy(own + c * chunk_len, tmp + c * chunk_len, chunk_len);
			tp_mark(&p, c, round);
		}
		/* The gates of 1..7 are open; their chains wait behind chunk 0's. */
		tplan_sleep_ms(100);
		for (peer = 0; peer < env->world; peer++) {
			if (peer == env->rank)
				continue;
			for (c = 1; c < OOO_CHUNKS; c++) {
				g = p.chunk_base[env->rank] + c;
				RANK_EQ(round, tp_gate_read(&p, env->rank, g, TPLAN_GATE_READY));
				RANK_EQ(round - 1, tp_gate_read(&p, peer, g, TPLAN_GATE_ARRIVAL));
			}
		}
		memcpy(own, tmp, chunk_len);
		tp_mark(&p, 0, round);
		free(tmp);
		RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
		if (check_all_parts(&p, part, round, salt))
			return -1;
		if (round < OOO_ROUNDS)
			RANK_OK(tp_next(&p, NULL));
	}
	RANK_OK(tp_close(&p, NULL));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, contract1_out_of_order_chunks_arrive_in_queue_order, 120)
{
	RUN_RANKS(3, rank_out_of_order, NULL, RANKS_TIMEOUT_MS);
}

/* ---- contract 2: a mark too many ------------------------------------------ */

#define C2_PART 768
#define C2_CHUNKS 3

/*
 * Rank 0's chunk 1 has 2 writers and gets 3 marks in round 1.  Its wait
 * fails with EOVERFLOW naming the chunk with 3 marks for 2, and the plan
 * is FAILED: it cannot be re-armed.  The extra mark is what the check is
 * for: one round-2 mark now completes the count (4 = 2 writers x round 2)
 * and opens the gate with only one of the two writers done.  But no
 * round-2 chain exists for it to release: the peers' arrival stays 1 and
 * their copy of the chunk keeps round 1's data.
 */
static int rank_extra_mark(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	static const uint32_t writers[C2_CHUNKS] = { 1, 2, 1 };
	uint64_t salt = env->key ^ 0xe1, part = C2_PART;
	struct tplan_plan_shortfall rep[8];
	unsigned char *heap, *own;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t c, i, n, state, round, g;
	unsigned int peer;
	char s[128];

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	own = heap + env->rank * part;
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, C2_CHUNKS));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, C2_CHUNKS, 1, 0));
	ev.s.writers = writers;
	RANK_OK(tp_prepare(&p, &ev.s));
	tp_fill(own, part, tp_seed(env->rank, 1, salt));
	RANK_OK(tp_start(&p, NULL));
	for (c = 0; c < C2_CHUNKS; c++)
		for (i = 0; i < writers[c]; i++)
			tp_mark(&p, c, 1);
	g = p.chunk_base[0] + 1;
	if (env->rank == 0) {
		tp_mark(&p, 1, 1);
		RANK_ERR(-EOVERFLOW, tp_wait(&p, TP_TIMEOUT, rep, 8, &n));
		RANK_EQ(1, n);
		if (rep[0].chunk != g || rep[0].rank != 0 ||
		    rep[0].what != TPLAN_SHORT_EXTRA_MARKS || rep[0].have != 3 || rep[0].want != 2)
			RANK_FAIL("report: %s", tp_short_str(&rep[0], s, sizeof(s)));
		RANK_OK(tp_state(&p, &state, &round));
		RANK_EQ(TPLAN_PLAN_FAILED, state);
		RANK_EQ(1, round);
		RANK_ERR(-EBUSY, tp_next(&p, NULL));
		/* One writer of round 2 writes and marks: the gate opens early. */
		tp_fill(own, part, tp_seed(0, 2, salt));
		tp_mark(&p, 1, 2);
		RANK_EQ(2, tp_gate_read(&p, 0, g, TPLAN_GATE_READY));
	} else {
		/* The chunk was sent once, at the first time its gate opened. */
		RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	}
	/* rank 0 has now re-marked and refilled (it is past its checks). */
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tplan_sleep_ms(200);
	for (peer = 1; peer < env->world; peer++) {
		RANK_EQ(1, tp_gate_read(&p, peer, g, TPLAN_GATE_ARRIVAL));
		RANK_EQ(1, tp_gate_read(&p, peer, p.chunk_base[0], TPLAN_GATE_ARRIVAL));
	}
	if (env->rank != 0 && tp_check(heap, part, tp_seed(0, 1, salt)) >= 0)
		RANK_FAIL("rank 0's round-1 data was overwritten after the failed round");
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	RANK_OK(tp_close(&p, NULL));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, contract2_extra_mark_is_eoverflow_and_opens_no_later_round, 90)
{
	RUN_RANKS(3, rank_extra_mark, NULL, RANKS_TIMEOUT_MS);
}

/* ---- contract 2: a mark too few ------------------------------------------- */

/*
 * Rank 1's chunk 2 needs 3 writers and gets 2.  Its wait times out and
 * the report names the chunk with 2 marks for 3 and, for each peer, no
 * arrival yet (0 for 1); the other ranks' waits name the missing arrival
 * here.  The plan is still started: the third mark completes the round.
 */
static int rank_missing_mark(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	static const uint32_t writers[C2_CHUNKS] = { 1, 2, 3 };
	uint64_t salt = env->key ^ 0x5a, part = C2_PART;
	struct tplan_plan_shortfall rep[8];
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t c, i, n, state, g, seen = 0;
	char s[128];

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, part * env->world, env->rank * part, part, C2_CHUNKS));
	RANK_OK(tp_even_sched(&ev, env->rank * part, part, C2_CHUNKS, 1, 0));
	ev.s.writers = writers;
	RANK_OK(tp_prepare(&p, &ev.s));
	tp_fill((unsigned char *)tplan_heap_ptr(ctx, env->rank) + env->rank * part, part,
		tp_seed(env->rank, 1, salt));
	RANK_OK(tp_start(&p, NULL));
	for (c = 0; c < C2_CHUNKS; c++)
		for (i = 0; i < writers[c] - (env->rank == 1 && c == 2); i++)
			tp_mark(&p, c, 1);
	g = p.chunk_base[1] + 2;
	/* Everything but that chunk has arrived everywhere: the report is exact. */
	for (i = 0; i < p.chunk_base[env->world]; i++)
		for (c = 0; c < env->world; c++)
			if (i != g && c != (i >= p.chunk_base[1]) + (i >= p.chunk_base[2]))
				RANK_OK(tplan_shared_wait((volatile uint64_t *)
					tp_gate(&p, c, i, TPLAN_GATE_ARRIVAL), 1, TP_TIMEOUT));

	RANK_ERR(-ETIMEDOUT, tp_wait(&p, 500, rep, 8, &n));
	if (env->rank == 1) {
		/* Its marks, then its arrival at each of the two peers. */
		RANK_EQ(3, n);
		for (i = 0; i < n; i++) {
			if (rep[i].chunk != g)
				RANK_FAIL("entry %u: %s", i, tp_short_str(&rep[i], s, sizeof(s)));
			if (rep[i].what == TPLAN_SHORT_MARKS && rep[i].rank == 1 &&
			    rep[i].have == 2 && rep[i].want == 3)
				seen |= 1;
			else if (rep[i].what == TPLAN_SHORT_ARRIVAL && rep[i].rank != 1 &&
				 rep[i].have == 0 && rep[i].want == 1)
				seen |= 1U << (1 + rep[i].rank);
			else
				RANK_FAIL("entry %u: %s", i, tp_short_str(&rep[i], s, sizeof(s)));
		}
		RANK_EQ(1 | 2 | 8, seen);
	} else {
		RANK_EQ(1, n);
		if (rep[0].chunk != g || rep[0].rank != env->rank ||
		    rep[0].what != TPLAN_SHORT_ARRIVAL || rep[0].have != 0 || rep[0].want != 1)
			RANK_FAIL("report: %s", tp_short_str(&rep[0], s, sizeof(s)));
	}
	/* A timeout leaves the round running. */
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_PREPARED, state);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 1)
		tp_mark(&p, 2, 1);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, rep, 8, &n));
	RANK_EQ(0, n);
	if (check_all_parts(&p, part, 1, salt))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, contract2_missing_mark_times_out_naming_chunk_and_shortfall, 90)
{
	RUN_RANKS(3, rank_missing_mark, NULL, RANKS_TIMEOUT_MS);
}

/* ---- contracts 4 and 6: the buffer is the peer's after next_round ------------ */

#define C6_PART 4096

/*
 * Two ranks; rank 0 sends 2 of its 4 KiB (two regions with a gap), rank 1
 * nothing.  After round 1, rank 0 writes round 2's data and marks round 2
 * at once (its producer runs ahead), then re-arms; rank 1 reads round 1
 * for a while before it re-arms: until it does, round 2's chain does not
 * exist and its buffer keeps round 1's data, whatever rank 0's gate says.
 * Once both re-armed, the chain is queued with round 2 and the open gate
 * lets it through.  The chain images were copied at prepare: scribbling
 * over the dwords passed then changes nothing, and the gap is never sent.
 */
static int rank_rearm(struct tplan_rank_env *env)
{
	static const uint32_t first[2] = { 0, 2 };
	uint64_t salt = env->key ^ 0x66;
	const struct tp_region reg[2] = { { 0, 1024 }, { 2048, 1024 } };
	struct tp_sched s = { .nchunks = 1, .first = first, .reg = reg };
	struct tplan_plan_start st;
	unsigned char *peer_view, *own, img[C6_PART];
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t round;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	own = tplan_heap_ptr(ctx, env->rank);
	peer_view = tplan_heap_ptr(ctx, 1);
	RANK_OK(tp_create(&p, ctx, 0, C6_PART, 0, env->rank ? 0 : C6_PART,
			  env->rank ? 0 : 1));
	if (env->rank == 0) {
		RANK_OK(tp_prepare(&p, &s));
		memset(p.dw, 0xff, p.ndw * 4ULL);
		tp_fill(own, C6_PART, tp_seed(0, 1, salt));
	} else {
		/*
		 * Before prepare: its last vote lets rank 0 start, mark and
		 * send round 1 here at once.
		 */
		memset(own, 0xee, C6_PART);
		s.nchunks = 0;
		RANK_OK(tp_prepare(&p, &s));
	}
	RANK_OK(tp_start(&p, &st));
	RANK_EQ(1, st.round);
	if (env->rank == 0)
		tp_mark(&p, 0, 1);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));

	if (env->rank == 0) {
		tp_fill(own, C6_PART, tp_seed(0, 2, salt));
		tp_mark(&p, 0, 2);
		RANK_EQ(2, tp_gate_read(&p, 0, 0, TPLAN_GATE_READY));
		tplan_shared_set(&env->shared[0], 1);
		RANK_OK(tp_next(&p, &round));
		RANK_EQ(2, round);
	} else {
		RANK_OK(tplan_shared_wait(&env->shared[0], 1, TP_TIMEOUT));
		tplan_sleep_ms(300);
		/* Still round 1's data: round 2 is not queued anywhere yet. */
		RANK_EQ(1, tp_gate_read(&p, 1, 0, TPLAN_GATE_ARRIVAL));
		tp_fill(img, C6_PART, tp_seed(0, 1, salt));
		if (memcmp(peer_view, img, 1024) || memcmp(peer_view + 2048, img + 2048, 1024)) {
			tp_fill(img, C6_PART, tp_seed(0, 2, salt));
			if (!memcmp(peer_view, img, 1024))
				RANK_FAIL("round-2 data landed before rank 1 re-armed");
			RANK_FAIL("round 1's data is not what rank 0 wrote");
		}
		RANK_OK(tp_next(&p, &round));
		RANK_EQ(2, round);
	}
	RANK_OK(tp_start(&p, &st));
	RANK_EQ(2, st.round);
	RANK_OK(tp_wait(&p, TP_TIMEOUT, NULL, 0, NULL));
	if (env->rank == 1) {
		unsigned int i;

		tp_fill(img, C6_PART, tp_seed(0, 2, salt));
		RANK_EQ(0, memcmp(own, img, 1024));
		RANK_EQ(0, memcmp(own + 2048, img + 2048, 1024));
		/* Nothing outside the regions was ever sent. */
		for (i = 1024; i < 2048; i++)
			RANK_EQ(0xee, own[i]);
		for (i = 3072; i < C6_PART; i++)
			RANK_EQ(0xee, own[i]);
	}
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan, contract6_next_round_data_lands_only_after_rearm, 90)
{
	RUN_RANKS(2, rank_rearm, NULL, RANKS_TIMEOUT_MS);
}

TEST_HARNESS_MAIN
