// SPDX-License-Identifier: GPL-2.0
/*
 * What a library plan puts on the queues and where the bytes land: a
 * region one byte over an engine's per-packet maximum goes as two copies
 * on SDMA 4.4.2 (4 MiB) and as one on 4.4.0 (1 GiB), executed and
 * checked; a 1 GiB + 4 KiB region is built by the library and its packets
 * inspected (executed too when the VM has the memory for two such heaps);
 * tile_chunks' 2D sub-windows, clipped at the edges and in the producer's
 * own tile order, deliver exactly what a memcpy gather of the same regions
 * gives, padding untouched.
 */
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_device.h"
#include "chain_build.h"

#define RANKS_TIMEOUT_MS 100000

FIXTURE(data) {
	int unused;
};

FIXTURE_SETUP(data)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(data)
{
}

/* Mark this rank's chunk c of the round, as a CPU producer of one thread. */
static void lib_mark(const struct tplan_handle *h, uint32_t c)
{
	struct tplan_cta cta = { 0 };
	struct tplan_view v;

	tplan_view_init(&v, h);
	tplan_mark_ready(&v, &cta, c);
}

/* ---- per-packet splits, executed --------------------------------------------- */

struct split_arg {
	uint32_t sdma_ip;
	uint64_t heap;
	uint64_t region;	/* bytes of rank 0's one region */
	uint32_t copies;	/* copy packets it must take */
};

/*
 * Rank 0 sends one region to rank 1 (which sends nothing).  One round:
 * the (0 -> 1) queue executes POLL, `copies` copies, ATOMIC, exactly that
 * many bytes of packets, and rank 1 holds the region, not a byte more.
 */
static int rank_split(struct tplan_rank_env *env)
{
	const struct split_arg *a = env->arg;
	uint64_t buf, bytes = a->region + 4096, salt = env->key;
	struct tplan_queue_info qi;
	struct tplan_schedule *s;
	struct tplan_handle h;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	unsigned char *heap;
	int64_t bad;

	RANK_OK(tp_join(env, a->heap, a->sdma_ip, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	RANK_OK(tplan_heap_alloc(ctx, bytes, 4096, &buf));
	RANK_OK(tplan_schedule_new(&s));
	if (env->rank == 0) {
		struct tplan_region r = { .offset = buf, .width = a->region, .pitch = a->region,
					  .rows = 1 };

		RANK_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
		tp_fill(heap + buf, a->region, salt);
	} else {
		memset(heap + buf, 0x5c, bytes);
	}
	RANK_OK(tplan_plan_create(ctx, buf, bytes, buf, env->rank ? 0 : bytes, s, &plan));
	RANK_OK(tplan_plan_start(plan, &h));
	if (env->rank == 0)
		lib_mark(&h, 0);
	RANK_OK(tplan_plan_wait(plan, 60000));
	if (env->rank == 0) {
		uint64_t want_dw = TPLAN_SDMA_POLL_DW + TPLAN_SDMA_ATOMIC_DW +
				   a->copies * TPLAN_SDMA_COPY_LINEAR_DW;

		/*
		 * A fresh queue: all it ever held and ran is round 1's chain,
		 * after the module's POLL on the peer's release, with the
		 * module's FENCEs after its POLL and after the batch.
		 */
		RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
		RANK_OK(tplan_queue_info(ctx, 1, &qi));
		if (tplan_test_packets_counted(ctx))
			RANK_EQ(1 + 2 + a->copies + 2, qi.packets);
		RANK_EQ(TPLAN_ROUND_HEAD_BYTES + want_dw * 4 + 2 * TPLAN_CHAIN_FENCE_BYTES, qi.wptr);
	} else {
		bad = tp_check(heap + buf, a->region, salt);
		if (bad >= 0)
			RANK_FAIL("byte %lld of the region differs", (long long)bad);
		RANK_EQ(0x5c, heap[buf + a->region]);
	}
	RANK_OK(tplan_plan_close(plan, NULL));
	tplan_schedule_free(s);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(data, split_4mib_plus_1_on_sdma442_is_two_copies_executed, 120)
{
	struct split_arg a = {
		.sdma_ip = TPLAN_SDMA_442, .heap = 16U << 20, .region = (4U << 20) + 1, .copies = 2,
	};
	struct tplan_info info;
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	info.size = sizeof(info);
	info.flags = 0;
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_INFO, &info));
	close(fd);
	/* The administrator may raise 4.4.2's limit; this test is about 4 MiB. */
	if (info.max_copy_bytes_sdma442 != 4U << 20)
		SKIP(return, "max_copy_bytes_sdma442 is %u", info.max_copy_bytes_sdma442);
	/* A join on the KFD engine takes the GPU's SDMA IP, and only it. */
	if (tplan_test_kfd_sdma_ip() == TPLAN_SDMA_440)
		SKIP(return, "the KFD engine's GPUs are SDMA 4.4.0 (6.1's gfx90a stand-in)");
	RUN_RANKS(2, rank_split, &a, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(data, split_4mib_plus_1_on_sdma440_is_one_copy_executed, 120)
{
	struct split_arg a = {
		.sdma_ip = TPLAN_SDMA_440, .heap = 16U << 20, .region = (4U << 20) + 1, .copies = 1,
	};

	if (tplan_test_kfd_sdma_ip() == TPLAN_SDMA_442)
		SKIP(return, "the KFD engine's GPUs are SDMA 4.4.2: no 4 MiB + 1 copy");

	RUN_RANKS(2, rank_split, &a, RANKS_TIMEOUT_MS);
}

/*
 * 1 GiB + 4 KiB on 4.4.0 needs two heaps of more than 1 GiB.  Runs when
 * the VM has the memory (VM_MEM=3072 is enough), skips otherwise.
 */
TEST_F_TIMEOUT(data, split_1gib_plus_4kib_on_sdma440_is_two_copies_executed, 600)
{
	struct split_arg a = {
		.sdma_ip = TPLAN_SDMA_440, .heap = (1ULL << 30) + (32U << 20),
		.region = (1ULL << 30) + 4096, .copies = 2,
	};
	unsigned long long avail_kb = 0;
	int64_t cap;
	char line[128];
	FILE *f;

	if (getenv("TPLAN_ENGINE") && !strcmp(getenv("TPLAN_ENGINE"), "kfd"))
		SKIP(return, "a 1 GiB heap per rank: more than the KFD stand-in's GPU memory");
	f = fopen("/proc/meminfo", "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &avail_kb) == 1)
			break;
	fclose(f);
	if (avail_kb < (2 * a.heap + (384ULL << 20)) >> 10)
		SKIP(return, "two heaps of %llu MiB need more memory than the %llu MiB available (VM_MEM=3072)",
		     (unsigned long long)(a.heap >> 20), avail_kb >> 10);
	/* ... and the module's cap on what one user holds (max_user_bytes). */
	if (!tplan_debugfs_stat("max_user_bytes", &cap) &&
	    (uint64_t)cap < 2 * a.heap + (64ULL << 20))
		SKIP(return, "two heaps of %llu MiB are over max_user_bytes (%lld MiB)",
		     (unsigned long long)(a.heap >> 20), (long long)cap >> 20);
	RUN_RANKS(2, rank_split, &a, 500000);
}

/* ---- the 1 GiB split, built and inspected ------------------------------------ */

/*
 * The packets the library builds for one region, decoded: POLL, then
 * copies of at most max bytes back to back over the region (the same
 * offsets in the peer's heap), then ATOMIC.  Returns the copies, or -1.
 */
static int decode_chain(struct __test_metadata *_metadata, const uint32_t *dw, int ndw,
			const struct tplan_chain_target *t, const struct tplan_region *r,
			uint32_t max, uint64_t *last_bytes)
{
	struct tplan_sdma_packet pk;
	uint64_t at = 0;
	int n, copies = 0, i = 0;

	n = tplan_sdma_decode(dw, (uint32_t)ndw, &pk);
	EXPECT_EQ(TPLAN_SDMA_KIND_POLL_REGMEM, pk.kind);
	EXPECT_EQ(t->ready_gate, pk.u.poll.addr);
	i = n;
	while (i < ndw) {
		n = tplan_sdma_decode(dw + i, (uint32_t)(ndw - i), &pk);
		if (n <= 0)
			return -1;
		i += n;
		if (pk.kind == TPLAN_SDMA_KIND_ATOMIC)
			break;
		EXPECT_EQ(TPLAN_SDMA_KIND_COPY_LINEAR, pk.kind);
		EXPECT_EQ(t->own_heap + r->offset + at, pk.u.copy_linear.src);
		EXPECT_EQ(t->peer_heap + r->offset + at, pk.u.copy_linear.dst);
		EXPECT_GE(max, pk.u.copy_linear.bytes);
		at += pk.u.copy_linear.bytes;
		*last_bytes = pk.u.copy_linear.bytes;
		copies++;
	}
	EXPECT_EQ(TPLAN_SDMA_KIND_ATOMIC, pk.kind);
	EXPECT_EQ(t->arrival_gate, pk.u.atomic.addr);
	EXPECT_EQ(ndw, i);
	EXPECT_EQ(r->width, at);
	return copies;
}

TEST(split_1gib_plus_4kib_built_by_the_library_not_executed)
{
	const uint64_t big = (1ULL << 30) + 4096;
	struct tplan_tensor mine = { .offset = 1ULL << 20, .rows = 1, .cols = (uint32_t)big,
				     .elem_size = 1 };
	struct tplan_region r = { .offset = 1ULL << 20, .width = big, .pitch = big, .rows = 1 };
	struct tplan_chain_target t = {
		.own_heap = 0x100000000000ULL, .peer_heap = 0x200000000000ULL,
		.ready_gate = 0x100000000000ULL + (3ULL << 30),
		.arrival_gate = 0x200000000000ULL + (3ULL << 30) + 8,
	};
	const struct tplan_region *got;
	struct tplan_chain_where where;
	struct tplan_schedule *s;
	uint32_t nregions, writers, *dw;
	uint64_t last = 0;
	int ndw;

	/* chunks() splits the row block into regions of at most 1 GiB. */
	ASSERT_EQ(0, tplan_schedule_chunks(&mine, 1, 1, 1U << 30, &s));
	ASSERT_EQ(1, tplan_schedule_nchunks(s));
	got = tplan_schedule_chunk(s, 0, &nregions, &writers);
	ASSERT_EQ(2, nregions);
	EXPECT_EQ(1U << 30, got[0].width);
	EXPECT_EQ(mine.offset, got[0].offset);
	EXPECT_EQ(4096, got[1].width);
	EXPECT_EQ(mine.offset + (1ULL << 30), got[1].offset);
	tplan_schedule_free(s);

	/* Chain building splits one region at the engine's maximum: 4.4.0. */
	t.max_copy_bytes = 1U << 30;
	ndw = tplan_chain_build(NULL, 0, &t, &r, 1);
	ASSERT_EQ(TPLAN_SDMA_POLL_DW + 2 * TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW, ndw);
	dw = calloc((size_t)ndw, 4);
	ASSERT_TRUE(dw != NULL);
	ASSERT_EQ(ndw, tplan_chain_build(dw, (uint32_t)ndw, &t, &r, 1));
	EXPECT_EQ(2, decode_chain(_metadata, dw, ndw, &t, &r, 1U << 30, &last));
	EXPECT_EQ(4096, last);
	tplan_chain_locate(&t, &r, 1, 2, &where);
	EXPECT_EQ(TPLAN_CHAIN_PART_COPY, where.part);
	EXPECT_EQ(1, where.piece);
	EXPECT_EQ(2, where.pieces);
	free(dw);

	/* The same region on 4.4.2: 256 copies of 4 MiB and one of 4 KiB. */
	t.max_copy_bytes = 4U << 20;
	ndw = tplan_chain_build(NULL, 0, &t, &r, 1);
	ASSERT_EQ(TPLAN_SDMA_POLL_DW + 257 * TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW, ndw);
	dw = calloc((size_t)ndw, 4);
	ASSERT_TRUE(dw != NULL);
	ASSERT_EQ(ndw, tplan_chain_build(dw, (uint32_t)ndw, &t, &r, 1));
	EXPECT_EQ(257, decode_chain(_metadata, dw, ndw, &t, &r, 4U << 20, &last));
	EXPECT_EQ(4096, last);
	free(dw);
}

/* ---- tile_chunks: 2D sub-windows against a memcpy gather ---------------------- */

#define TL_M 20		/* rows per rank */
#define TL_N 40		/* columns */
#define TL_ELEM 4
#define TL_PITCH (TL_N * TL_ELEM + 64)	/* padding the copies must skip */
#define TL_TR 8
#define TL_TC 16
#define TL_PER_CHUNK 4
#define TL_ROUNDS 2

/* Column-major over a 3 x 3 tile grid: not the row-major default. */
static uint32_t tile_order(uint32_t step, void *arg)
{
	uint32_t tiles_m = *(uint32_t *)arg;

	return (step % tiles_m) * 3 + step / tiles_m;
}

static int rank_tiles(struct tplan_rank_env *env)
{
	const uint32_t tiles_m = (TL_M + TL_TR - 1) / TL_TR, tiles_n = (TL_N + TL_TC - 1) / TL_TC;
	const uint64_t bytes = (uint64_t)env->world * TL_M * TL_PITCH;
	struct tplan_queue_info qi;
	struct tplan_tensor out, mine;
	struct tplan_schedule *s;
	struct tplan_handle h;
	struct tplan_plan *plan;
	struct tplan_ctx *ctx;
	unsigned char *heap, *ref;
	uint64_t buf, salt = env->key;
	uint32_t round, step, c, n, nregions, i, y, tiles_m_arg = tiles_m;
	unsigned int r;

	RANK_EQ(3, tiles_n);
	RANK_OK(tp_join(env, 1U << 20, 0, &ctx));
	heap = tplan_heap_ptr(ctx, env->rank);
	RANK_OK(tplan_heap_alloc(ctx, bytes, 4096, &buf));
	out = (struct tplan_tensor) {
		.offset = buf, .rows = env->world * TL_M, .cols = TL_N, .elem_size = TL_ELEM,
		.pitch = TL_PITCH,
	};
	mine = out;
	mine.offset = buf + (uint64_t)env->rank * TL_M * TL_PITCH;
	mine.rows = TL_M;
	RANK_OK(tplan_schedule_tile_chunks(&mine, TL_TR, TL_TC, TL_PER_CHUNK, tile_order,
					   &tiles_m_arg, &out, &s));
	n = tplan_schedule_nchunks(s);
	RANK_EQ((tiles_m * tiles_n + TL_PER_CHUNK - 1) / TL_PER_CHUNK, n);
	RANK_OK(tplan_plan_create(ctx, buf, bytes, mine.offset, (uint64_t)TL_M * TL_PITCH, s,
				  &plan));
	ref = malloc(bytes);
	RANK_ASSERT(ref);

	for (round = 1; round <= TL_ROUNDS; round++) {
		/* Poison everything, own rows included: only the tiles are data. */
		memset(heap + buf, 0xa5 ^ round, bytes);
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		RANK_OK(tplan_plan_start(plan, &h));
		/* The producer's steps, in its own order; a chunk per 4 steps. */
		for (step = 0; step < tiles_m * tiles_n; step++) {
			const struct tplan_region *reg =
				tplan_schedule_chunk(s, step / TL_PER_CHUNK, &nregions, NULL);
			const struct tplan_region *t = &reg[step % TL_PER_CHUNK];

			for (y = 0; y < t->rows; y++)
				tp_fill(heap + t->offset + (uint64_t)y * t->pitch, t->width,
					tp_seed(env->rank, round, salt) ^ (t->offset + y * t->pitch));
			lib_mark(&h, step / TL_PER_CHUNK);
		}
		RANK_OK(tplan_plan_wait(plan, 60000));
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));

		/* The reference: this rank's poisoned buffer, then a memcpy of
		 * every region of every rank's schedule from that rank's heap. */
		memset(ref, 0xa5 ^ round, bytes);
		for (r = 0; r < env->world; r++) {
			const unsigned char *src = tplan_heap_ptr(ctx, r);
			struct tplan_tensor theirs = mine;
			struct tplan_schedule *ts;

			theirs.offset = buf + (uint64_t)r * TL_M * TL_PITCH;
			RANK_OK(tplan_schedule_tile_chunks(&theirs, TL_TR, TL_TC, TL_PER_CHUNK,
							   tile_order, &tiles_m_arg, &out, &ts));
			for (c = 0; c < tplan_schedule_nchunks(ts); c++) {
				const struct tplan_region *reg = tplan_schedule_chunk(ts, c, &nregions,
										     NULL);

				for (i = 0; i < nregions; i++)
					for (y = 0; y < reg[i].rows; y++) {
						uint64_t o = reg[i].offset + (uint64_t)y * reg[i].pitch;

						memcpy(ref + (o - buf), src + o, reg[i].width);
					}
			}
			tplan_schedule_free(ts);
		}
		for (i = 0; i < bytes; i++)
			if (heap[buf + i] != ref[i])
				RANK_FAIL("round %u: byte %u (row %u, column byte %u) is %#x, the gather says %#x",
					  round, i, i / TL_PITCH, i % TL_PITCH, heap[buf + i], ref[i]);

		/*
		 * The POLL on the peer's release, one sub-window packet per
		 * tile, POLL, gate FENCE and ATOMIC per chain, one done FENCE
		 * for the batch: on the fresh queue, round 1 is all it held
		 * and ran.
		 */
		if (round == 1) {
			RANK_OK(tp_queues_idle(ctx, TP_TIMEOUT));
			RANK_OK(tplan_queue_info(ctx, 1 - env->rank, &qi));
			if (tplan_test_packets_counted(ctx))
				RANK_EQ(1 + 3 * n + tiles_m * tiles_n + 1, qi.packets);
			RANK_EQ(TPLAN_ROUND_HEAD_BYTES +
				4 * ((TPLAN_SDMA_POLL_DW + TPLAN_SDMA_ATOMIC_DW) * n +
				     TPLAN_SDMA_SUB_WINDOW_DW * tiles_m * tiles_n) +
				TPLAN_CHAIN_FENCE_BYTES * (n + 1), qi.wptr);
		}
		RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
		if (round < TL_ROUNDS)
			RANK_OK(tplan_plan_next_round(plan));
	}
	RANK_OK(tplan_plan_close(plan, NULL));
	tplan_schedule_free(s);
	free(ref);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(data, tile_chunks_2d_windows_match_a_memcpy_gather, 120)
{
	RUN_RANKS(2, rank_tiles, NULL, RANKS_TIMEOUT_MS);
}

TEST_HARNESS_MAIN
