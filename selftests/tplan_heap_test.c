// SPDX-License-Identifier: GPL-2.0
/*
 * Symmetric heaps: every rank maps every rank's heap and sees the others'
 * stores; mappings outside a heap, private, or before a join are refused;
 * heaps start zeroed and outlive a rank that leaves; the library's
 * symmetric allocator gives every rank the same offsets.
 */
#include <stdio.h>

#include "tplan_selftest.h"

#define HEAP_SIZE (256U << 10)

FIXTURE(heap) {
	int fd;
};

FIXTURE_SETUP(heap)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(heap)
{
	if (self->fd >= 0)
		close(self->fd);
}

static uint64_t word_of(unsigned int writer, unsigned int target, unsigned int i)
{
	return ((uint64_t)writer << 48) | ((uint64_t)target << 32) | (i * 2654435761u);
}

/*
 * Each rank writes its own heap's first half and a slot of every other
 * rank's second half through its mappings; after a barrier every rank
 * reads everything back through its own mappings.
 */
#define WORDS 512
static int visibility_rank(struct tplan_rank_env *env)
{
	unsigned int me = env->rank, w, t, i;
	struct tplan_ctx *ctx;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	for (i = 0; i < WORDS; i++)
		((volatile uint64_t *)tplan_heap_ptr(ctx, me))[i] = word_of(me, me, i);
	for (t = 0; t < env->world; t++) {
		volatile uint64_t *slot;

		if (t == me)
			continue;
		slot = (volatile uint64_t *)((char *)tplan_heap_ptr(ctx, t) + HEAP_SIZE / 2) +
		       (size_t)me * WORDS;
		for (i = 0; i < WORDS; i++)
			slot[i] = word_of(me, t, i);
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	for (t = 0; t < env->world; t++) {
		const volatile uint64_t *heap = tplan_heap_ptr(ctx, t);

		for (i = 0; i < WORDS; i++)
			if (heap[i] != word_of(t, t, i))
				RANK_FAIL("heap %u word %u: %#llx", t, i,
					  (unsigned long long)heap[i]);
		for (w = 0; w < env->world; w++) {
			const volatile uint64_t *slot =
				(const volatile uint64_t *)((const char *)heap + HEAP_SIZE / 2) +
				(size_t)w * WORDS;

			for (i = 0; i < WORDS; i++) {
				uint64_t want = w == t ? 0 : word_of(w, t, i);

				if (slot[i] != want)
					RANK_FAIL("heap %u, slot of rank %u, word %u: %#llx, want %#llx",
						  t, w, i, (unsigned long long)slot[i],
						  (unsigned long long)want);
			}
		}
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(heap, stores_visible_to_every_rank, 120)
{
	RUN_RANKS(4, visibility_rank, NULL, 100000);
}

/* Fresh heaps hold zeros, not what the memory held before. */
static int zeroed_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	unsigned int r;
	size_t i;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	for (r = 0; r < env->world; r++) {
		const uint64_t *p = tplan_heap_ptr(ctx, r);

		for (i = 0; i < HEAP_SIZE / 8; i++)
			if (p[i])
				RANK_FAIL("heap %u word %zu is %#llx", r, i,
					  (unsigned long long)p[i]);
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(heap, starts_zeroed, 60)
{
	RUN_RANKS(2, zeroed_rank, NULL, 50000);
}

/* HEAP_INFO agrees with the join and with the library's view. */
TEST_F(heap, heap_info_matches_join)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = tplan_test_key(), .world_size = 1,
		.heap_size = HEAP_SIZE, .engine = TPLAN_ENGINE_SOFT,
		.sdma_ip = TPLAN_SDMA_440, .timeout_ms = 1000,
	};
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 0 };

	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_GROUP_JOIN, &j));
	ASSERT_NE(0, j.heap_base);
	ASSERT_EQ(0, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
	ASSERT_EQ(j.heap_base, hi.heap_base);
	ASSERT_EQ(HEAP_SIZE, hi.heap_size);
	ASSERT_EQ(0, hi.mmap_offset % (uint64_t)sysconf(_SC_PAGESIZE));
	/* The kernel's gate area is a tail of the heap, leaving most of it. */
	ASSERT_GE(hi.heap_size, hi.gate_area_offset);
	ASSERT_LT(0, hi.gate_area_offset);
}

TEST_F(heap, heap_info_rank_out_of_range_is_einval)
{
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 1 };

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
	hi.rank = 0xffffffffu;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->fd, TPLAN_IOC_HEAP_INFO, &hi));
}

/* ---- mmap ----------------------------------------------------------------- */

static uint64_t mmap_offset_of(int fd, uint32_t rank)
{
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = rank };

	if (tplan_test_ioctl(fd, TPLAN_IOC_HEAP_INFO, &hi))
		return ~0ULL;
	return hi.mmap_offset;
}

/* mmap() as 0 or -errno; unmaps what it got. */
static int try_mmap(int fd, size_t len, uint64_t off, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST_F(heap, mmap_before_join_is_refused)
{
	ASSERT_EQ(-ENOTCONN, try_mmap(self->fd, 4096, 0, MAP_SHARED));
}

TEST_F(heap, mmap_whole_heap_and_part_works)
{
	uint64_t off;

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	off = mmap_offset_of(self->fd, 0);
	ASSERT_EQ(0, try_mmap(self->fd, HEAP_SIZE, off, MAP_SHARED));
	/* "at most heap_size bytes": a shorter mapping is fine. */
	ASSERT_EQ(0, try_mmap(self->fd, 4096, off, MAP_SHARED));
}

TEST_F(heap, mmap_longer_than_heap_is_einval)
{
	uint64_t off;

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	off = mmap_offset_of(self->fd, 0);
	ASSERT_EQ(-EINVAL, try_mmap(self->fd, HEAP_SIZE + 4096, off, MAP_SHARED));
}

TEST_F(heap, mmap_past_heap_end_is_einval)
{
	uint64_t off;

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	off = mmap_offset_of(self->fd, 0);
	ASSERT_EQ(-EINVAL, try_mmap(self->fd, 4096, off + HEAP_SIZE, MAP_SHARED));
	ASSERT_EQ(-EINVAL, try_mmap(self->fd, 8192, off + HEAP_SIZE - 4096, MAP_SHARED));
}

TEST_F(heap, mmap_of_rank_beyond_world_is_einval)
{
	uint64_t off0, off;

	/* A group of one: no offset past rank 0's heap maps anything. */
	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	off0 = mmap_offset_of(self->fd, 0);
	ASSERT_NE(~0ULL, off0);
	for (off = off0 + HEAP_SIZE; off && off < (1ULL << 62); off <<= 1)
		ASSERT_EQ(-EINVAL, try_mmap(self->fd, 4096, off, MAP_SHARED)) {
			TH_LOG("offset %#llx", (unsigned long long)off);
		}
}

TEST_F(heap, mmap_private_is_einval)
{
	uint64_t off;

	ASSERT_EQ(0, tplan_test_join_fd(self->fd, tplan_test_key(), 1, 0, HEAP_SIZE, 1000));
	off = mmap_offset_of(self->fd, 0);
	/* A private copy would silently stop seeing other ranks' stores. */
	ASSERT_EQ(-EINVAL, try_mmap(self->fd, 4096, off, MAP_PRIVATE));
}

/*
 * A rank that leaves: the others' mappings of its heap stay valid (no
 * fault, the same bytes), as the group keeps every heap while mapped.
 */
static int leaver_rank(struct tplan_rank_env *env)
{
	struct tplan_ctx *ctx;
	volatile uint64_t *peer;
	unsigned int i;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	for (i = 0; i < HEAP_SIZE / 8; i++)
		((uint64_t *)tplan_heap_ptr(ctx, env->rank))[i] = word_of(env->rank, 9, i);
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	if (env->rank == 1) {
		tplan_ctx_close(ctx);
		tplan_shared_set(&env->shared[0], 1);
		return 0;
	}
	RANK_OK(tplan_shared_wait(&env->shared[0], 1, 15000));
	peer = tplan_heap_ptr(ctx, 1);
	for (i = 0; i < HEAP_SIZE / 8; i++)
		if (peer[i] != word_of(1, 9, i))
			RANK_FAIL("word %u of the departed rank's heap: %#llx", i,
				  (unsigned long long)peer[i]);
	peer[0] = 1;
	RANK_ERR(-ECONNRESET, tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(heap, mapping_outlives_departed_rank, 60)
{
	RUN_RANKS(2, leaver_rank, NULL, 50000);
}

/* ---- the symmetric allocator ------------------------------------------------- */

static int alloc_rank(struct tplan_rank_env *env)
{
	static const size_t sizes[] = { 1, 64, 100, 4096, 3, 8192, 65536, 7 };
	static const size_t aligns[] = { 0, 8, 1, 4096, 16, 0, 64, 2 };
	uint64_t offs[8], all[2][8], prev_end = 0, off, top;
	struct tplan_ctx *ctx;
	unsigned int i;

	RANK_OK(tplan_rank_join(env, HEAP_SIZE, &ctx));
	for (i = 0; i < 8; i++) {
		size_t a = aligns[i] ? aligns[i] : 64;

		RANK_OK(tplan_heap_alloc(ctx, sizes[i], aligns[i], &offs[i]));
		RANK_EQ(0, offs[i] % a);
		RANK_ASSERT(offs[i] >= prev_end);
		/* From the bottom up, without gaps beyond the alignment. */
		RANK_ASSERT(offs[i] < prev_end + a);
		prev_end = offs[i] + sizes[i];
	}
	RANK_EQ(0, offs[0]);
	RANK_OK(tplan_all_gather(ctx, offs, sizeof(offs), all, TPLAN_TEST_TIMEOUT_MS));
	RANK_EQ(0, memcmp(all[0], all[1], sizeof(offs)));

	/* Up to the kernel's gate area, not into it. */
	top = tplan_heap_gate_area(ctx);
	RANK_ASSERT(top > prev_end && top <= HEAP_SIZE);
	RANK_ERR(-ENOMEM, tplan_heap_alloc(ctx, top - prev_end + 1, 1, &off));
	RANK_OK(tplan_heap_alloc(ctx, top - prev_end, 1, &off));
	RANK_EQ(prev_end, off);
	/* Full: ENOMEM, and nothing was taken. */
	RANK_ERR(-ENOMEM, tplan_heap_alloc(ctx, 1, 1, &off));
	RANK_ERR(-EINVAL, tplan_heap_alloc(ctx, 0, 1, &off));
	RANK_ERR(-EINVAL, tplan_heap_alloc(ctx, 1, 3, &off));
	RANK_ERR(-ENOMEM, tplan_heap_alloc(ctx, SIZE_MAX, 1, &off));

	tplan_heap_reset(ctx);
	RANK_OK(tplan_heap_alloc(ctx, top, 4096, &off));
	RANK_EQ(0, off);
	tplan_heap_reset(ctx);
	RANK_OK(tplan_heap_alloc(ctx, 1, 0, &off));
	RANK_ERR(-ENOMEM, tplan_heap_alloc(ctx, 1, (size_t)1 << 63, &off));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(heap, allocator_is_symmetric, 60)
{
	RUN_RANKS(2, alloc_rank, NULL, 50000);
}

TEST_HARNESS_MAIN
