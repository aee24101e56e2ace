// SPDX-License-Identifier: GPL-2.0
/*
 * Re-arm from round templates and the budget a plan holds:
 *   - rounds whose template takes between a third and a half of the ring,
 *     so that it wraps the ring end (one NOP pad, then the template at 0)
 *     every two or three rounds; every rank checks every rank's data in
 *     every round;
 *   - a plan's charge is reserved from prepare to close: next_round never
 *     fails for budget while another plan holds the rest of it; a prepare
 *     that fails on one rank gives back what the others reserved; a close
 *     gives it back, so that a plan needing that budget can be prepared;
 *   - put and quiet are EBUSY while a round's chains wait on their gates
 *     and not once they went through, whatever is reserved.
 */
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define RANKS_TIMEOUT_MS 400000
#define BIG_CHUNKS 8
/* A chain's packets besides its copies, and its gate FENCE: what it is charged. */
#define CHAIN_FIXED ((TPLAN_SDMA_POLL_DW + TPLAN_SDMA_ATOMIC_DW) * 4 + TPLAN_CHAIN_FENCE_BYTES)
#define COPY_BYTES (TPLAN_SDMA_COPY_LINEAR_DW * 4)

FIXTURE(rearm) {
	int unused;
};

FIXTURE_SETUP(rearm)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(rearm)
{
}

/* A schedule of its own storage: nchunks chunks over n regions. */
struct byte_sched {
	uint32_t *first;
	struct tp_region *reg;
	struct tp_sched s;
};

static void byte_sched_free(struct byte_sched *b)
{
	free(b->first);
	free(b->reg);
	memset(b, 0, sizeof(*b));
}

/*
 * [own_off, + n) as n one-byte regions over nchunks chunks (one copy
 * packet each), or, with one_region_per_chunk, as one region per chunk.
 */
static int byte_sched(struct byte_sched *b, uint64_t own_off, uint32_t n, uint32_t nchunks,
		      int one_region_per_chunk)
{
	uint32_t nreg = one_region_per_chunk ? nchunks : n, c, i;

	b->first = calloc(nchunks + 1, sizeof(*b->first));
	b->reg = calloc(nreg, sizeof(*b->reg));
	if (!b->first || !b->reg)
		return -ENOMEM;
	if (one_region_per_chunk && n % nchunks)
		return -EINVAL;
	for (c = 0; c <= nchunks; c++)
		b->first[c] = (uint32_t)((uint64_t)c * nreg / nchunks);
	for (i = 0; i < nreg; i++)
		b->reg[i] = one_region_per_chunk ?
			    (struct tp_region) { .off = own_off + (uint64_t)i * (n / nchunks),
						 .len = n / nchunks } :
			    (struct tp_region) { .off = own_off + i, .len = 1 };
	b->s = (struct tp_sched) { .nchunks = nchunks, .first = b->first, .reg = b->reg };
	return 0;
}

/* Copies (one-byte regions, in BIG_CHUNKS chains) whose round charges at most bytes. */
static uint32_t copies_for(uint64_t bytes)
{
	return (uint32_t)((bytes - TPLAN_ROUND_HEAD_BYTES - BIG_CHUNKS * CHAIN_FIXED) / COPY_BYTES) /
	       BIG_CHUNKS * BIG_CHUNKS;
}

/*
 * What a plan's round charges the queue to peer: the POLL on the peer's
 * release at its head, its chains and their gate FENCEs.
 */
static uint32_t round_charge(const struct tp_plan *p, unsigned int peer)
{
	uint32_t i, bytes = TPLAN_ROUND_HEAD_BYTES;

	for (i = 0; i < p->nchains; i++)
		if (p->chains[i].peer == peer)
			bytes += p->chains[i].ndw * 4 + TPLAN_CHAIN_FENCE_BYTES;
	return bytes;
}

static int queue_info(struct tplan_ctx *ctx, unsigned int peer, struct tplan_queue_info *qi)
{
	return tplan_queue_info(ctx, peer, qi);
}

/* ---- templates that wrap the ring end ------------------------------------------- */

#define WRAP_ROUNDS 12

/*
 * Two ranks, each sending a round of about 0.4 ring to the other: the
 * template fits after the previous one only every other time, so the
 * writer pads to the end and starts over at 0 every two or three rounds.
 * The data of both ranks is checked on both ranks in every round, and the
 * queue's write pointer must have gone round the ring many times.
 */
static int rank_wrap(struct tplan_rank_env *env)
{
	struct tplan_queue_info qi, after;
	struct byte_sched b = {};
	unsigned int peer = 1 - env->rank;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint32_t n, round, charge;
	uint64_t part;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(queue_info(ctx, peer, &qi));
	n = copies_for(qi.ring_size / 10 * 4);
	part = n;
	RANK_ASSERT(2 * part < HEAP / 2);
	RANK_OK(byte_sched(&b, env->rank * part, n, BIG_CHUNKS, 0));
	RANK_OK(tp_create(&p, ctx, 0, 2 * part, env->rank * part, part, BIG_CHUNKS));
	RANK_OK(tp_prepare(&p, &b.s));
	charge = round_charge(&p, peer);
	RANK_ASSERT(charge > qi.ring_size / 3 && charge < qi.ring_size / 2);
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(charge, qi.prep_reserved);
	for (round = 1; round <= WRAP_ROUNDS; round++) {
		uint32_t got;

		if (tp_ag_round(&p, part, round, env->key))
			return -1;
		if (round == WRAP_ROUNDS)
			break;
		RANK_OK(tp_next(&p, &got));
		RANK_EQ(round + 1, got);
		/* Held, never taken again: one round's charge whatever the round. */
		RANK_OK(queue_info(ctx, peer, &after));
		RANK_EQ(charge, after.prep_reserved);
	}
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	RANK_OK(queue_info(ctx, peer, &after));
	/* Round 1 from wherever the ring stood, then every round ~0.4 ring further. */
	RANK_ASSERT(after.wptr / after.ring_size - qi.wptr / qi.ring_size >= WRAP_ROUNDS / 3);
	RANK_ASSERT(after.wptr - qi.wptr >= (uint64_t)(WRAP_ROUNDS - 1) * charge);
	RANK_EQ(0, after.prep_charged);
	RANK_EQ(TPLAN_QUEUE_IDLE, after.state);
	RANK_OK(tp_close(&p, NULL));
	RANK_OK(queue_info(ctx, peer, &after));
	RANK_EQ(0, after.prep_reserved);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	byte_sched_free(&b);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(rearm, templates_wrap_the_ring_end_and_every_round_delivers, 400)
{
	RUN_RANKS(2, rank_wrap, NULL, RANKS_TIMEOUT_MS);
}

/* ---- the reservation: held from prepare to close -------------------------------- */

#define SMALL_PART 4096
#define SMALL_OFF 0
#define BIG_OFF (64U << 10)

/*
 * Plan A is small (a per queue); plan B takes all but 150..178 bytes of
 * what A leaves, so that one more round of A (200 bytes) would not fit if
 * re-arming took the budget again.  With both held:
 *   - A's next_round works for many rounds, each checked on both ranks;
 *   - plan C, big on rank 1 only, fails prepare with ENOSPC on both ranks,
 *     and rank 0, whose small share fitted, gets it back at once;
 *   - put and quiet are EBUSY while A's round waits on its gates, not once
 *     it went through (B and A still holding their reservations);
 *   - closing B gives its charge back: a plan like B prepares again.
 * At the end nothing is reserved or gated.
 */
static int rank_reserve(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	unsigned int peer = 1 - env->rank;
	struct byte_sched bb = {}, bc = {};
	struct tplan_queue_info qi;
	uint32_t a, b, n, round, state;
	uint64_t big_part, scratch = HEAP / 2 + (64U << 10);
	struct tp_plan pa, pb, pc;
	struct tplan_ctx *ctx;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&pa, ctx, SMALL_OFF, 2 * SMALL_PART, env->rank * SMALL_PART,
			  SMALL_PART, 2));
	RANK_OK(tp_even_sched(&ev, SMALL_OFF + env->rank * SMALL_PART, SMALL_PART, 2, 1, 0));
	RANK_OK(tp_prepare(&pa, &ev.s));
	a = round_charge(&pa, peer);
	RANK_EQ(TPLAN_ROUND_HEAD_BYTES + 2 * (CHAIN_FIXED + COPY_BYTES), a);
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a, qi.prep_reserved);
	RANK_EQ(a, qi.prep_charged);
	if (tp_ag_round(&pa, SMALL_PART, 1, env->key))
		return -1;

	/* B: the rest of the budget but 150..178 bytes, less than one round of A. */
	n = (uint32_t)((qi.prep_limit - a - 150 - TPLAN_ROUND_HEAD_BYTES - BIG_CHUNKS * CHAIN_FIXED) /
		       COPY_BYTES);
	big_part = n;
	RANK_ASSERT(BIG_OFF + 2 * big_part < HEAP / 2);
	RANK_OK(byte_sched(&bb, BIG_OFF + env->rank * big_part, n, BIG_CHUNKS, 0));
	RANK_OK(tp_create(&pb, ctx, BIG_OFF, 2 * big_part, BIG_OFF + env->rank * big_part,
			  big_part, BIG_CHUNKS));
	RANK_OK(tp_prepare(&pb, &bb.s));
	b = round_charge(&pb, peer);
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a + b, qi.prep_reserved);
	RANK_ASSERT(qi.prep_limit - qi.prep_reserved < a);
	RANK_ASSERT(qi.prep_limit - qi.prep_reserved >= CHAIN_FIXED + COPY_BYTES);
	/* B's round: it is DONE then and holds its charge (starts need no order). */
	if (tp_ag_round(&pb, big_part, 1, env->key ^ 0xb))
		return -1;

	/* A re-arms for many rounds with B holding the rest. */
	for (round = 2; round <= 20; round++) {
		uint32_t got;

		RANK_OK(tp_next(&pa, &got));
		RANK_EQ(round, got);
		if (round == 2) {
			/* Gated: put and quiet refuse; nothing of A's reservation changed that. */
			RANK_ERR(-EBUSY, tplan_put(ctx, peer, scratch, scratch, 64));
			RANK_ERR(-EBUSY, tplan_quiet(ctx, peer, 1000));
		}
		if (tp_ag_round(&pa, SMALL_PART, round, env->key))
			return -1;
	}
	/* Through their gates: the host may use the queue, reservations or not. */
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(0, qi.prep_charged);
	RANK_EQ(a + b, qi.prep_reserved);
	RANK_OK(tplan_put(ctx, peer, scratch, scratch, 64));
	RANK_OK(tplan_quiet(ctx, peer, TP_TIMEOUT));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));

	/* C: big on rank 1 (over the budget), one small chain on rank 0 (fits). */
	if (env->rank == 1)
		RANK_OK(byte_sched(&bc, BIG_OFF + big_part, n, BIG_CHUNKS, 0));
	else
		RANK_OK(byte_sched(&bc, BIG_OFF, n, 1, 1));
	RANK_OK(tp_create(&pc, ctx, BIG_OFF, 2 * big_part, BIG_OFF + env->rank * big_part,
			  big_part, env->rank == 1 ? BIG_CHUNKS : 1));
	RANK_ERR(-ENOSPC, tp_prepare(&pc, &bc.s));
	RANK_OK(tp_state(&pc, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	/* Rank 0's share was reserved, then given back when the prepare failed. */
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a + b, qi.prep_reserved);
	RANK_OK(tp_close(&pc, NULL));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a + b, qi.prep_reserved);

	/* Closing B gives its charge back: B's shape prepares again, and runs. */
	RANK_OK(tp_close(&pb, NULL));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a, qi.prep_reserved);
	RANK_OK(tp_create(&pb, ctx, BIG_OFF, 2 * big_part, BIG_OFF + env->rank * big_part,
			  big_part, BIG_CHUNKS));
	RANK_OK(tp_prepare(&pb, &bb.s));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(a + b, qi.prep_reserved);
	if (tp_ag_round(&pb, big_part, 1, env->key ^ 0xbb))
		return -1;
	RANK_OK(tp_close(&pb, NULL));
	RANK_OK(tp_close(&pa, NULL));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(0, qi.prep_reserved);
	RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
	RANK_OK(queue_info(ctx, peer, &qi));
	RANK_EQ(0, qi.prep_charged);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	byte_sched_free(&bb);
	byte_sched_free(&bc);
	tp_free_chains(&pa);
	tp_free_chains(&pb);
	tp_free_chains(&pc);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(rearm, budget_is_reserved_from_prepare_to_close, 400)
{
	RUN_RANKS(2, rank_reserve, NULL, RANKS_TIMEOUT_MS);
}

/* ---- the reservation and a broken group ----------------------------------------- */

/*
 * Rank 1 leaves with a plan prepared: rank 0's close (CLOSING or an
 * error, the group is broken) gives back rank 0's reservation, once.
 */
static int rank_broken(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	struct tplan_queue_info qi;
	struct tplan_ctx *ctx;
	struct tp_plan p;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	RANK_OK(tp_create(&p, ctx, 0, 2 * SMALL_PART, env->rank * SMALL_PART, SMALL_PART, 2));
	RANK_OK(tp_even_sched(&ev, env->rank * SMALL_PART, SMALL_PART, 2, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	if (tp_ag_round(&p, SMALL_PART, 1, env->key))
		return -1;
	RANK_OK(tp_next(&p, NULL));
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	if (env->rank == 1) {
		tp_free_chains(&p);
		tplan_ctx_close(ctx);
		return 0;
	}
	RANK_OK(queue_info(ctx, 1, &qi));
	RANK_EQ(round_charge(&p, 1), qi.prep_reserved);
	/* The group breaks as rank 1 goes; the close says so, and tears down all the same. */
	RANK_ASSERT(tp_close(&p, NULL) != -ENOENT);
	RANK_OK(queue_info(ctx, 1, &qi));
	RANK_EQ(0, qi.prep_reserved);
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(rearm, a_broken_group_close_gives_the_reservation_back, 120)
{
	RUN_RANKS(2, rank_broken, NULL, 100000);
}

TEST_HARNESS_MAIN
