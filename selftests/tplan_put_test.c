// SPDX-License-Identifier: GPL-2.0
/*
 * Host put and quiet on the soft engine: every pair of ranks, random sizes
 * (1 B .. 64 MiB) and offsets with the data and its surroundings checked,
 * PUT_SIGNAL ordering, traffic of many ring lengths (the ring wraps, as
 * debugfs shows), the argument contract of put, quiet, queue info and
 * inject, and a quiet that times out.
 */
#include <sched.h>
#include <stdio.h>

#include "tplan_selftest.h"
#include "tplan_sdma.h"

/* ---- data patterns ---------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* len bytes of the pattern named by seed, as byte i = byte (i % 8) of word i / 8. */
static void pattern_fill(void *dst, uint64_t len, uint64_t seed)
{
	unsigned char *p = dst;
	uint64_t i, w;

	for (i = 0; i + 8 <= len; i += 8) {
		w = mix64(seed ^ (i >> 3));
		memcpy(p + i, &w, 8);
	}
	if (i < len) {
		w = mix64(seed ^ (i >> 3));
		memcpy(p + i, &w, len - i);
	}
}

/* Offset of the first byte that differs from the pattern, or -1. */
static int64_t pattern_check(const void *src, uint64_t len, uint64_t seed)
{
	const unsigned char *p = src;
	uint64_t i, j, w;

	for (i = 0; i < len; i += 8) {
		uint64_t n = len - i < 8 ? len - i : 8;

		w = mix64(seed ^ (i >> 3));
		if (memcmp(p + i, &w, n))
			for (j = 0; j < n; j++)
				if (p[i + j] != ((unsigned char *)&w)[j])
					return (int64_t)(i + j);
	}
	return -1;
}

/* ---- a pair of ranks ------------------------------------------------------ */

#define PAIR_HEAP (1U << 20)

/* The test is rank 0 of a group of two; a child is rank 1. */
static void two_ranks_setup(struct __test_metadata *_metadata, struct tplan_test_group *g,
			    uint32_t sdma_ip)
{
	int fd, ret;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	ret = tplan_test_group_setup(g, 2, PAIR_HEAP, sdma_ip);
	if (ret && g->ctx)
		TH_LOG("%s", tplan_ctx_error(g->ctx));
	ASSERT_EQ(0, ret);
}

static uint64_t wptr_of(struct tplan_ctx *ctx, unsigned int peer)
{
	struct tplan_queue_info qi;

	return tplan_queue_info(ctx, peer, &qi) ? ~0ULL : qi.wptr;
}

FIXTURE(pair) {
	struct tplan_test_group p;
};

FIXTURE_SETUP(pair)
{
	two_ranks_setup(_metadata, &self->p, 0);
}

FIXTURE_TEARDOWN(pair)
{
	tplan_test_group_teardown(&self->p);
}

/* ---- all pairs ---------------------------------------------------------------- */

#define AP_HEAP (1U << 20)
#define AP_SLOT (16U << 10)	/* one slot per (sender, receiver) */

static uint64_t ap_len(unsigned int from, unsigned int to)
{
	return 1000 + 517 * from + 131 * to;	/* < AP_SLOT - 1, all different */
}

static int all_pairs_rank(struct tplan_rank_env *env)
{
	unsigned int me = env->rank, p, r;
	struct tplan_queue_info qi;
	struct tplan_ctx *ctx;
	unsigned char *heap;

	RANK_OK(tplan_rank_join(env, AP_HEAP, &ctx));
	heap = tplan_heap_ptr(ctx, me);
	/* Sources in the lower half, one slot per receiver; arrivals above. */
	for (p = 0; p < env->world; p++)
		if (p != me)
			pattern_fill(heap + p * AP_SLOT, ap_len(me, p), me * 100 + p);
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	for (p = 0; p < env->world; p++)
		if (p != me)
			RANK_OK(tplan_put(ctx, p, p * AP_SLOT, AP_HEAP / 2 + me * AP_SLOT,
					  ap_len(me, p)));
	for (p = 0; p < env->world; p++) {
		if (p == me)
			continue;
		RANK_OK(tplan_quiet(ctx, p, TPLAN_TEST_TIMEOUT_MS));
		RANK_OK(tplan_queue_info(ctx, p, &qi));
		RANK_EQ(TPLAN_QUEUE_IDLE, qi.state);
		RANK_ASSERT(qi.rptr <= qi.wptr);
		RANK_ASSERT(qi.packets >= 1 || !tplan_test_packets_counted(ctx));
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	for (r = 0; r < env->world; r++) {
		const unsigned char *slot = heap + AP_HEAP / 2 + r * AP_SLOT;
		int64_t bad;

		if (r == me)
			continue;
		bad = pattern_check(slot, ap_len(r, me), r * 100 + me);
		if (bad >= 0)
			RANK_FAIL("from rank %u: byte %lld of %llu differs", r, (long long)bad,
				  (unsigned long long)ap_len(r, me));
		/* Not one byte more. */
		RANK_EQ(0, slot[ap_len(r, me)]);
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(ranks) {
	int fd;
};

FIXTURE_SETUP(ranks)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(ranks)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(ranks, all_pairs_of_four, 120)
{
	RUN_RANKS(4, all_pairs_rank, NULL, 100000);
}

/* ---- random sizes and offsets ------------------------------------------------------ */

#define RS_MAX (64U << 20)
#define RS_SRC 0ULL				/* sources: [0, 64 MiB + 64 KiB) */
#define RS_DST ((uint64_t)RS_MAX + (128U << 10))	/* arrivals above */
#define RS_HEAP (RS_DST + RS_MAX + (128U << 10))
#define RS_ITERS 22
#define RS_CANARY 0xa5

struct rs_step {
	uint64_t len, src, dst;
};

/* The same steps on every rank: log-uniform sizes, 1 B and 64 MiB included. */
static struct rs_step rs_step(uint64_t seed, unsigned int it)
{
	uint64_t r = mix64(seed * 1000 + it);
	struct rs_step s;

	if (it == 0)
		s.len = 1;
	else if (it == RS_ITERS - 1)
		s.len = RS_MAX;
	else
		s.len = 1 + (mix64(r) & ((1ULL << (r % 27)) - 1));
	if (s.len > RS_MAX)
		s.len = RS_MAX;
	s.src = RS_SRC + (r >> 32) % (64U << 10);
	s.dst = RS_DST + 1 + (r >> 16) % ((64U << 10) - 1);	/* room for a canary below */
	return s;
}

static int random_rank(struct tplan_rank_env *env)
{
	const uint32_t *sdma_ip = env->arg;
	uint64_t seed = env->key & 0xffffffff;
	struct tplan_join_params jp = {
		.key = env->key, .world_size = 2, .rank = env->rank, .heap_size = RS_HEAP,
		.sdma_ip = *sdma_ip, .timeout_ms = TPLAN_TEST_TIMEOUT_MS,
	};
	unsigned int me = env->rank, peer = !env->rank, it;
	unsigned char *heap;
	struct tplan_ctx *ctx;

	RANK_OK(tplan_ctx_open(&ctx, NULL));
	RANK_OK(tplan_ctx_join(ctx, &jp));
	heap = tplan_heap_ptr(ctx, me);
	for (it = 0; it < RS_ITERS; it++) {
		struct rs_step s = rs_step(seed, it);
		int64_t bad;

		heap[s.dst - 1] = RS_CANARY;
		heap[s.dst + s.len] = RS_CANARY;
		pattern_fill(heap + s.src, s.len, seed ^ (it * 2 + me));
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
		RANK_OK(tplan_put(ctx, peer, s.src, s.dst, s.len));
		RANK_OK(tplan_quiet(ctx, peer, 60000));
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
		bad = pattern_check(heap + s.dst, s.len, seed ^ (it * 2 + peer));
		if (bad >= 0)
			RANK_FAIL("step %u (%llu bytes, src %#llx, dst %#llx): byte %lld differs",
				  it, (unsigned long long)s.len, (unsigned long long)s.src,
				  (unsigned long long)s.dst, (long long)bad);
		if (heap[s.dst - 1] != RS_CANARY || heap[s.dst + s.len] != RS_CANARY)
			RANK_FAIL("step %u (%llu bytes at %#llx): a byte next to it changed", it,
				  (unsigned long long)s.len, (unsigned long long)s.dst);
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(random_put) {
	int fd;
};

FIXTURE_VARIANT(random_put) {
	uint32_t sdma_ip;
};

/* 4.4.0 copies 1 GiB per packet; 4.4.2 splits at its 4 MiB default. */
FIXTURE_VARIANT_ADD(random_put, sdma440) { .sdma_ip = TPLAN_SDMA_440 };
FIXTURE_VARIANT_ADD(random_put, sdma442) { .sdma_ip = TPLAN_SDMA_442 };

FIXTURE_SETUP(random_put)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(random_put)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(random_put, sizes_1b_to_64mib, 600)
{
	uint32_t ip = variant->sdma_ip;

	if (tplan_test_kfd_sdma_ip() && tplan_test_kfd_sdma_ip() != ip)
		SKIP(return, "the KFD engine's GPUs follow the other SDMA IP's limits");
	RUN_RANKS(2, random_rank, &ip, 580000);
}

/* ---- PUT_SIGNAL ----------------------------------------------------------------- */

#define SIG_PUTS 40
#define SIG_LEN (48U << 10)
#define SIG_OFF (PAIR_HEAP - 8)

/*
 * Rank 0 sends SIG_PUTS signalled puts back to back; rank 1 watches the
 * signal word and, each time it moves to k, finds put k's data complete.
 */
static int signal_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	unsigned int k;

	RANK_OK(tplan_rank_join(env, PAIR_HEAP, &ctx));
	if (env->rank == 0) {
		unsigned char *heap = tplan_heap_ptr(ctx, 0);

		for (k = 0; k < 8; k++)
			pattern_fill(heap + k * SIG_LEN, SIG_LEN, 77 + k);
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
		for (k = 0; k < SIG_PUTS; k++) {
			/* Slots are reused: wait until the reader has seen the old one. */
			if (k >= 8) {
				RANK_OK(tplan_shared_wait(&env->shared[0], k - 7, 30000));
				pattern_fill(heap + (k % 8) * SIG_LEN, SIG_LEN, 77 + k);
			}
			RANK_OK(tplan_put_signal(ctx, 1, (k % 8) * SIG_LEN, (k % 8) * SIG_LEN,
						 SIG_LEN, SIG_OFF));
		}
		RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	} else {
		const unsigned char *heap = tplan_heap_ptr(ctx, 1);
		uint64_t *sig = (uint64_t *)(tplan_heap_ptr(ctx, 1) + SIG_OFF);
		uint64_t end, seen;

		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
		for (k = 1; k <= SIG_PUTS; k++) {
			int64_t bad;

			end = tplan_now_ms() + 30000;
			while ((seen = __atomic_load_n(sig, __ATOMIC_ACQUIRE)) < k) {
				if (tplan_now_ms() > end) {
					/* Where the queue stood: a lost kick shows in lost_wakeups. */
					tplan_debugfs_dump_queue(env->key, 0, 1);
					RANK_FAIL("signal stuck at %llu, waiting for %u",
						  (unsigned long long)seen, k);
				}
				/* Yield: on a small VM a spinning reader takes the engine's CPU. */
				sched_yield();
			}
			/* It moves by one per put: never past what was sent. */
			RANK_ASSERT(seen <= SIG_PUTS);
			bad = pattern_check(heap + ((k - 1) % 8) * SIG_LEN, SIG_LEN, 77 + k - 1);
			if (bad >= 0)
				RANK_FAIL("signal %u seen before byte %lld of its data", k,
					  (long long)bad);
			tplan_shared_set(&env->shared[0], k);
		}
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	if (env->rank == 1)
		RANK_EQ(SIG_PUTS, *(volatile uint64_t *)(tplan_heap_ptr(ctx, 1) + SIG_OFF));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(ranks, put_signal_after_data, 120)
{
	RUN_RANKS(2, signal_rank, NULL, 100000);
}

/* The signal word is a 64-bit counter: it carries out of the low half. */
TEST_F(pair, put_signal_adds_one_64bit)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	volatile uint64_t *sig = (uint64_t *)((char *)tplan_heap_ptr(self->p.ctx, 1) + 4096);

	*sig = 0xffffffffULL;
	ASSERT_EQ(0, tplan_put_signal(self->p.ctx, 1, 0, 8192, 16, 4096));
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0x100000000ULL, *sig);
}

/* ---- the ring wraps ---------------------------------------------------------------- */

#define WRAP_LAPS 4
#define WRAP_SLOTS 16
#define WRAP_SLOT (4U << 10)

static int wrap_rank(struct tplan_rank_env *env)
{
	int inject = tplan_test_inject_allowed();
	uint64_t last[WRAP_SLOTS], target, v, k = 0, signals = 0, since_quiet = 0;
	struct tplan_queue_info qi;
	struct tplan_ctx *ctx;
	unsigned char *src, *dst;
	static uint32_t nop[1024];
	unsigned int i;

	RANK_OK(tplan_rank_join(env, PAIR_HEAP, &ctx));
	if (env->rank == 1) {
		RANK_OK(tplan_barrier(ctx, 250000));
		tplan_ctx_close(ctx);
		return 0;
	}
	src = tplan_heap_ptr(ctx, 0);
	dst = tplan_heap_ptr(ctx, 1);
	RANK_OK(tplan_queue_info(ctx, 1, &qi));
	target = (uint64_t)WRAP_LAPS * qi.ring_size;
	memset(last, 0xff, sizeof(last));
	while (qi.wptr < target) {
		uint64_t r = mix64(k + 1000);
		unsigned int slot = k % WRAP_SLOTS;
		uint64_t len = 1 + r % WRAP_SLOT;

		if (inject && (r >> 40) % 4) {
			/* A NOP of 1..1024 dwords: mixed packet sizes, cheap to execute. */
			struct tplan_sdma_nop n = { .dwords = 1 + (uint32_t)(r >> 20) % 1024 };

			RANK_ASSERT(tplan_sdma_encode_nop(nop, 1024, &n) == (int)n.dwords);
			RANK_OK(tplan_test_inject(ctx, 1, nop, n.dwords));
		} else {
			pattern_fill(src + slot * WRAP_SLOT, len, k);
			if ((r >> 8) & 1) {
				RANK_OK(tplan_put_signal(ctx, 1, slot * WRAP_SLOT, slot * WRAP_SLOT,
							 len, PAIR_HEAP - 8));
				signals++;
			} else {
				RANK_OK(tplan_put(ctx, 1, slot * WRAP_SLOT, slot * WRAP_SLOT, len));
			}
			/* The source slot is reused only after this put ran. */
			RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
			last[slot] = k;
		}
		k++;
		v = qi.wptr;
		RANK_OK(tplan_queue_info(ctx, 1, &qi));
		since_quiet += qi.wptr - v;
		if (since_quiet > qi.ring_size / 4) {
			RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
			since_quiet = 0;
		}
	}
	RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tplan_queue_info(ctx, 1, &qi));
	RANK_EQ(TPLAN_QUEUE_IDLE, qi.state);
	RANK_ASSERT(qi.wptr >= target);

	/* Every slot holds what its last put wrote, the signal every signalled put. */
	for (i = 0; i < WRAP_SLOTS; i++) {
		uint64_t len;

		if (last[i] == ~0ULL)
			continue;
		len = 1 + mix64(last[i] + 1000) % WRAP_SLOT;
		if (pattern_check(dst + i * WRAP_SLOT, len, last[i]) >= 0)
			RANK_FAIL("slot %u: put %llu's data is not there", i,
				  (unsigned long long)last[i]);
	}
	RANK_EQ(signals, *(volatile uint64_t *)(dst + PAIR_HEAP - 8));

	/* debugfs tells the same story, and counts the passes over the ring end. */
	if (!access(TPLAN_DEBUGFS, F_OK)) {
		uint64_t wptr, rptr, wraps, packets, ring;

		RANK_OK(tplan_debugfs_u64(env->key, 0, 1, "wptr", &wptr));
		RANK_OK(tplan_debugfs_u64(env->key, 0, 1, "rptr", &rptr));
		RANK_OK(tplan_debugfs_u64(env->key, 0, 1, "wraps", &wraps));
		RANK_OK(tplan_debugfs_u64(env->key, 0, 1, "packets", &packets));
		RANK_OK(tplan_debugfs_u64(env->key, 0, 1, "ring_size", &ring));
		RANK_EQ(qi.wptr, wptr);
		/* rptr is written back when the engine likes: only forward. */
		RANK_ASSERT(rptr >= qi.rptr && rptr <= wptr);
		RANK_EQ(qi.packets, packets);
		RANK_EQ(qi.ring_size, ring);
		/*
		 * The writer passed the ring end wptr / ring_size times; a pass
		 * counts when it had to pad, which all but an exact fit do.
		 */
		if (wraps + 1 < wptr / ring || wraps > wptr / ring)
			RANK_FAIL("wraps %llu for wptr %llu and a ring of %llu",
				  (unsigned long long)wraps, (unsigned long long)wptr,
				  (unsigned long long)ring);
	}
	RANK_OK(tplan_barrier(ctx, 250000));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(ranks, traffic_wraps_the_ring, 300)
{
	struct tplan_info info;
	struct tplan_ctx *ctx;

	ASSERT_EQ(0, tplan_ctx_open(&ctx, NULL));
	ASSERT_EQ(0, tplan_query_info(ctx, &info));
	tplan_ctx_close(ctx);
	/* Host puts are 28-byte packets: they alone fill only a small ring in time. */
	if (!tplan_test_inject_allowed() && info.ring_size > (256U << 10))
		SKIP(return, "ring of %u bytes: wrapping it needs allow_inject=1 or ring_size <= 256 KiB",
		     info.ring_size);
	RUN_RANKS(2, wrap_rank, NULL, 280000);
}

/* ---- put and quiet arguments ----------------------------------------------------------- */

FIXTURE(bad_put) {
	struct tplan_test_group p;
};

FIXTURE_VARIANT(bad_put) {
	uint32_t flags, peer, reserved;
	uint64_t src, dst, len, signal;
};

#define BAD_PUT(_f, _p, _res, _s, _d, _l, _sig) \
	{ .flags = (_f), .peer = (_p), .reserved = (_res), .src = (_s), .dst = (_d), \
	  .len = (_l), .signal = (_sig) }
#define H PAIR_HEAP
#define SIG TPLAN_PUT_SIGNAL
FIXTURE_VARIANT_ADD(bad_put, peer_is_self) BAD_PUT(0, 0, 0, 0, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, peer_out_of_range) BAD_PUT(0, 2, 0, 0, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, peer_huge) BAD_PUT(0, 0xffffffffu, 0, 0, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, length_0) BAD_PUT(0, 1, 0, 0, 0, 0, 0);
FIXTURE_VARIANT_ADD(bad_put, src_past_end) BAD_PUT(0, 1, 0, H - 63, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, src_at_end) BAD_PUT(0, 1, 0, H, 0, 1, 0);
FIXTURE_VARIANT_ADD(bad_put, dst_past_end) BAD_PUT(0, 1, 0, 0, H - 63, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, length_past_heap) BAD_PUT(0, 1, 0, 0, 0, H + 1, 0);
FIXTURE_VARIANT_ADD(bad_put, src_wraps) BAD_PUT(0, 1, 0, ~0ULL - 10, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, dst_wraps) BAD_PUT(0, 1, 0, 0, ~0ULL - 10, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, length_huge) BAD_PUT(0, 1, 0, 64, 64, ~0ULL - 32, 0);
FIXTURE_VARIANT_ADD(bad_put, unknown_flag) BAD_PUT(2, 1, 0, 0, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, reserved_set) BAD_PUT(0, 1, 1, 0, 0, 64, 0);
FIXTURE_VARIANT_ADD(bad_put, signal_offset_without_flag) BAD_PUT(0, 1, 0, 0, 0, 64, 8);
FIXTURE_VARIANT_ADD(bad_put, signal_misaligned) BAD_PUT(SIG, 1, 0, 0, 0, 64, 4);
FIXTURE_VARIANT_ADD(bad_put, signal_past_end) BAD_PUT(SIG, 1, 0, 0, 0, 64, H);
FIXTURE_VARIANT_ADD(bad_put, signal_straddles_end) BAD_PUT(SIG, 1, 0, 0, 0, 64, H - 4);
FIXTURE_VARIANT_ADD(bad_put, signal_wraps) BAD_PUT(SIG, 1, 0, 0, 0, 64, ~0ULL - 7);
#undef H
#undef SIG

FIXTURE_SETUP(bad_put)
{
	two_ranks_setup(_metadata, &self->p, 0);
}

FIXTURE_TEARDOWN(bad_put)
{
	tplan_test_group_teardown(&self->p);
}

/* EINVAL, and nothing was queued. */
TEST_F(bad_put, is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_put put = {
		.size = sizeof(put), .flags = variant->flags, .peer = variant->peer,
		.__reserved = variant->reserved, .src_offset = variant->src,
		.dst_offset = variant->dst, .length = variant->len,
		.signal_offset = variant->signal,
	};
	uint64_t before = wptr_of(self->p.ctx, 1);

	ASSERT_NE(~0ULL, before);
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_PUT, &put));
	ASSERT_EQ(before, wptr_of(self->p.ctx, 1));
	/* The queue still works. */
	ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 0, 0, 64));
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
}

/* The largest put there is: the whole heap, first byte to last. */
TEST_F(pair, put_whole_heap)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	unsigned char *src = tplan_heap_ptr(self->p.ctx, 0);

	pattern_fill(src, PAIR_HEAP, 5);
	ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 0, 0, PAIR_HEAP));
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(-1, pattern_check(tplan_heap_ptr(self->p.ctx, 1), PAIR_HEAP, 5));
}

TEST_F(pair, quiet_peer_is_self_is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(-EINVAL, tplan_quiet(self->p.ctx, 0, 100));
}

TEST_F(pair, quiet_peer_out_of_range_is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	ASSERT_EQ(-EINVAL, tplan_quiet(self->p.ctx, 2, 100));
}

TEST_F(pair, quiet_flags_must_be_zero)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_quiet q = { .size = sizeof(q), .peer = 1, .flags = ~TPLAN_QUIET_FLAGS_ALL };

	ASSERT_EQ(-EINVAL, tplan_test_ioctl(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUIET, &q));
	q.flags = TPLAN_QUIET_OPEN_GATES;
	ASSERT_EQ(0, tplan_test_ioctl(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUIET, &q));
	q.flags = 0;
	ASSERT_EQ(0, tplan_test_ioctl(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUIET, &q));
}

TEST_F(pair, queue_info_peer_is_self_is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_queue_info qi;

	ASSERT_EQ(-EINVAL, tplan_queue_info(self->p.ctx, 0, &qi));
	ASSERT_EQ(-EINVAL, tplan_queue_info(self->p.ctx, 2, &qi));
}

/* A quiet with nothing queued returns at once. */
TEST_F(pair, quiet_idle_queue_returns_at_once)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint64_t t0 = tplan_now_ms();

	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, 10000));
	ASSERT_GT(2000, tplan_now_ms() - t0);
}

TEST_F(pair, queue_info_is_sane)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_queue_info qi, q2;
	struct tplan_info info;

	ASSERT_EQ(0, tplan_query_info(self->p.ctx, &info));
	ASSERT_EQ(0, tplan_queue_info(self->p.ctx, 1, &qi));
	ASSERT_EQ(info.ring_size, qi.ring_size);
	ASSERT_EQ((uint64_t)info.ring_size * info.prep_limit_pct / 100, qi.prep_limit);
	ASSERT_EQ(0, qi.prep_charged);
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	ASSERT_EQ(TPLAN_FAULT_NONE, qi.fault_reason);
	ASSERT_EQ(qi.rptr, qi.wptr);

	/*
	 * One put of one packet: wptr moves by exactly a COPY_LINEAR and the
	 * FENCE that ends the batch; quiet waited for that FENCE.
	 */
	ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 0, 0, 100));
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(self->p.ctx, 1, &q2));
	ASSERT_EQ(qi.wptr + TPLAN_SDMA_COPY_LINEAR_DW * 4 + TPLAN_SDMA_FENCE_DW * 4, q2.wptr);
	ASSERT_EQ(TPLAN_QUEUE_IDLE, q2.state);
	ASSERT_GE(q2.wptr, q2.rptr);
	if (tplan_test_packets_counted(self->p.ctx))
		ASSERT_EQ(qi.packets + 2, q2.packets);
	ASSERT_EQ(q2.done_seq, 1);
	ASSERT_EQ(q2.gate_seq, 0);
	ASSERT_EQ(1, q2.doorbells);
}

/* A put to another offset lands there and nowhere else. */
TEST_F(pair, put_to_other_offset)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	unsigned char *src = tplan_heap_ptr(self->p.ctx, 0);
	unsigned char *dst = tplan_heap_ptr(self->p.ctx, 1);

	pattern_fill(src + 3, 1000, 11);
	ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 3, 70001, 1000));
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(-1, pattern_check(dst + 70001, 1000, 11));
	ASSERT_EQ(0, dst[70000]);
	ASSERT_EQ(0, dst[71001]);
	ASSERT_EQ(0, dst[3]);
}

/*
 * Every quiet is woken by the completion it waits for.  The work is one
 * small put, done long before QW_TIMEOUT_MS on any machine; a quiet that
 * returns only at its deadline slept through the completion (a lost
 * wake-up; the wait's last look at the queue then finds it done and
 * returns 0).  Each round starts on an idle queue, a few milliseconds
 * after the last, which is where an engine that finishes fast races the
 * wake-up of whatever watches it.
 */
#define QW_ROUNDS 300
#define QW_TIMEOUT_MS 20000

TEST_F_TIMEOUT(pair, quiet_is_woken_by_each_completion, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint64_t t0, took;
	unsigned int k;

	for (k = 0; k < QW_ROUNDS; k++) {
		ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 0, 4096, 256));
		t0 = tplan_now_ms();
		ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, QW_TIMEOUT_MS));
		took = tplan_now_ms() - t0;
		if (took >= QW_TIMEOUT_MS) {
			tplan_debugfs_dump_queue(self->p.key, 0, 1);
			TH_LOG("round %u: quiet returned only at its deadline (%llu ms): "
			       "it slept through the completion", k, (unsigned long long)took);
			ASSERT_GT(QW_TIMEOUT_MS, took);
		}
		/* Let the queue, its engine and its watcher go idle. */
		tplan_sleep_ms(k % 4);
	}
}

/* ---- quiet that times out (needs a packet that waits: inject) ------------------------------ */

TEST_F(pair, quiet_times_out_then_completes)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	volatile uint32_t *gate = (uint32_t *)tplan_heap_ptr(self->p.ctx, 0);
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(self->p.ctx, 0), .ref = 1, .mask = 0xffffffffu,
		.func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	struct tplan_queue_info qi;
	uint32_t dw[TPLAN_SDMA_POLL_DW];
	uint64_t t0;

	if (!tplan_test_inject_allowed())
		SKIP(return, "a packet that waits needs allow_inject=1");
	ASSERT_EQ(TPLAN_SDMA_POLL_DW, tplan_sdma_encode_poll_regmem(dw, TPLAN_SDMA_POLL_DW, &poll));
	ASSERT_EQ(0, tplan_test_inject(self->p.ctx, 1, dw, TPLAN_SDMA_POLL_DW));
	ASSERT_EQ(0, tplan_put(self->p.ctx, 1, 64, 64, 64));
	t0 = tplan_now_ms();
	ASSERT_EQ(-ETIMEDOUT, tplan_quiet(self->p.ctx, 1, 300));
	ASSERT_LE(300, tplan_now_ms() - t0);
	ASSERT_EQ(0, tplan_queue_info(self->p.ctx, 1, &qi));
	ASSERT_EQ(TPLAN_QUEUE_BUSY, qi.state);
	ASSERT_GE(qi.wptr, qi.rptr);	/* fetched, maybe all of it: not done */
	/* Open the gate: the engine passes the POLL and runs the put. */
	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, tplan_quiet(self->p.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(self->p.ctx, 1, &qi));
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
}

/* ---- size sweeps ----------------------------------------------------------------------- */

TEST_F(pair, put_size_sweep)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_put put = { .size = sizeof(put), .peer = 1, .length = 8 };

	ASSERT_EQ(0, tplan_size_sweep(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_PUT, &put,
				      sizeof(put), sizeof(put)));
}

TEST_F(pair, quiet_size_sweep)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_quiet q = { .size = sizeof(q), .peer = 1, .timeout_ms = 5000 };

	ASSERT_EQ(0, tplan_size_sweep(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUIET, &q,
				      sizeof(q), sizeof(q)));
}

TEST_F(pair, queue_info_size_sweep)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_queue_info qi = { .size = sizeof(qi), .peer = 1 };

	/* The first published struct ended at fault_reason. */
	ASSERT_EQ(0, tplan_size_sweep(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUEUE_INFO, &qi,
				      offsetof(struct tplan_queue_info, flags), sizeof(qi)));
}

TEST_F(pair, inject_size_sweep)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint32_t nop = 0;
	struct tplan_queue_inject in = {
		.size = sizeof(in), .peer = 1, .ndw = 1, .dwords = (uintptr_t)&nop,
	};

	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	ASSERT_EQ(0, tplan_size_sweep(tplan_ctx_fd(self->p.ctx), TPLAN_IOC_QUEUE_INJECT, &in,
				      sizeof(in), sizeof(in)));
}

TEST_HARNESS_MAIN
