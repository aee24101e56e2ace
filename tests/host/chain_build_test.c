// SPDX-License-Identifier: GPL-2.0
/*
 * Chain building (libtplan/chain_build.c) against the kernel's own chain
 * validator (kmod/chain_validate.c): every chain built from the schedule
 * builders' output passes tplan_chain_validate() for its chunk and peer,
 * on both engines; decoding a chain gives back exactly its regions' bytes
 * at the same offsets on the peer; 2D regions the sub-window packet cannot
 * express fall back to a linear copy per row; packets map back to regions.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "chain_fixture.h"
#include "gemm_tiles.h"
#include "libtplan.h"
#include "chain_build.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define RANK 1

/* A byte range relative to a heap's base. */
struct span {
	uint64_t start, len;
};

struct spans {
	struct span *s;
	size_t n, cap;
};

static void spans_add(struct spans *v, uint64_t start, uint64_t len)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->s = realloc(v->s, v->cap * sizeof(*v->s));
	}
	v->s[v->n++] = (struct span) { start, len };
}

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorted, adjacent ranges merged; 0 if two ranges share a byte. */
static int spans_normalize(struct spans *v)
{
	size_t i, out = 0;

	qsort(v->s, v->n, sizeof(*v->s), span_cmp);
	for (i = 0; i < v->n; i++) {
		if (out && v->s[out - 1].start + v->s[out - 1].len > v->s[i].start)
			return 0;
		if (out && v->s[out - 1].start + v->s[out - 1].len == v->s[i].start)
			v->s[out - 1].len += v->s[i].len;
		else
			v->s[out++] = v->s[i];
	}
	v->n = out;
	return 1;
}

static int spans_equal(const struct spans *a, const struct spans *b)
{
	return a->n == b->n && !memcmp(a->s, b->s, a->n * sizeof(*a->s));
}

static void region_spans(const struct tplan_region *r, uint32_t n, struct spans *v)
{
	uint32_t i, row;

	for (i = 0; i < n; i++)
		for (row = 0; row < r[i].rows; row++)
			spans_add(v, r[i].offset + (uint64_t)row * r[i].pitch, r[i].width);
}

/* What a built chain copies, through the codec; -1 if a copy lands elsewhere on the peer. */
struct decoded {
	uint32_t linear, windows, polls, atomics;
	uint32_t elem_log2;	/* of the last sub-window */
};

static int chain_spans(const uint32_t *dw, uint32_t ndw, const struct tplan_chain_target *t,
		       struct spans *v, struct decoded *d)
{
	struct tplan_sdma_packet p;
	uint32_t off = 0, row;
	int n;

	memset(d, 0, sizeof(*d));
	while (off < ndw) {
		n = tplan_sdma_decode(dw + off, ndw - off, &p);
		if (n <= 0)
			return -1;
		off += (uint32_t)n;
		if (p.kind == TPLAN_SDMA_KIND_POLL_REGMEM) {
			d->polls++;
		} else if (p.kind == TPLAN_SDMA_KIND_ATOMIC) {
			d->atomics++;
		} else if (p.kind == TPLAN_SDMA_KIND_COPY_LINEAR) {
			const struct tplan_sdma_copy_linear *c = &p.u.copy_linear;

			if (c->dst - t->peer_heap != c->src - t->own_heap)
				return -1;
			spans_add(v, c->src - t->own_heap, c->bytes);
			d->linear++;
		} else if (p.kind == TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW) {
			const struct tplan_sdma_copy_sub_window *c = &p.u.sub_window;
			uint32_t e = c->elem_size_log2;

			for (row = 0; row < c->rect_y; row++) {
				uint64_t s = c->src.addr +
					     (((uint64_t)(c->src.y + row) * c->src.pitch + c->src.x) << e);
				uint64_t ds = c->dst.addr +
					      (((uint64_t)(c->dst.y + row) * c->dst.pitch + c->dst.x) << e);

				if (ds - t->peer_heap != s - t->own_heap)
					return -1;
				spans_add(v, s - t->own_heap, (uint64_t)c->rect_x << e);
			}
			d->windows++;
			d->elem_log2 = e;
		} else {
			return -1;
		}
	}
	return 0;
}

/* The fixture heaps of chain_fixture.h; gate table at FX_GATES, chunk = gate row. */
static void target_for(struct tplan_chain_target *t, const struct tplan_sdma_limits *lim,
		       uint32_t rank, uint32_t peer, uint32_t chunk)
{
	memset(t, 0, sizeof(*t));
	t->own_heap = fx_heap(rank);
	t->peer_heap = fx_heap(peer);
	t->ready_gate = tplan_gate_addr(t->own_heap, FX_GATES, chunk, TPLAN_GATE_READY);
	t->arrival_gate = tplan_gate_addr(t->peer_heap, FX_GATES, chunk, TPLAN_GATE_ARRIVAL);
	t->max_copy_bytes = lim->max_copy_bytes;
}

/* The offset of byte off of rank's own part, as a heap offset. */
static uint64_t part(uint32_t rank, uint64_t off)
{
	return FX_BUF + (uint64_t)rank * FX_PART + off;
}

FIXTURE(build) {
	struct tplan_sdma_limits lim;
	uint32_t *dw;
	uint32_t room;
	struct decoded last;	/* of the last chain check_schedule() looked at */
	uint32_t chains;
};

FIXTURE_VARIANT(build) {
	uint32_t ip;
};

FIXTURE_VARIANT_ADD(build, sdma440) {
	.ip = TPLAN_SDMA_IP_4_4_0,
};

FIXTURE_VARIANT_ADD(build, sdma442) {
	.ip = TPLAN_SDMA_IP_4_4_2,
};

FIXTURE_SETUP(build)
{
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, variant->ip, 0));
	self->room = TPLAN_CHAIN_MAX_DWORDS;
	self->dw = calloc(self->room, sizeof(uint32_t));
	ASSERT_NE(NULL, self->dw);
}

FIXTURE_TEARDOWN(build)
{
	free(self->dw);
}

/*
 * Every chunk of s, to every peer: the chain builds, its size is what the
 * sizing pass said, the kernel's validator accepts it, it copies exactly
 * the chunk's bytes, and every copy packet locates to the region it copies.
 * Returns 0 or the line of the first failure.
 */
static int check_schedule(FIXTURE_DATA(build) *self, const struct tplan_schedule *s)
{
	uint32_t c, peer, nregions, writers, i, packet, off;
	const struct tplan_region *regions;
	struct tplan_chain_reject why;
	struct tplan_chain_target t;
	struct tplan_chain_env env;
	struct tplan_chain_where w;
	struct spans want = { 0 }, got = { 0 };
	int n, ret = 0;

	for (c = 0; c < tplan_schedule_nchunks(s) && !ret; c++) {
		regions = tplan_schedule_chunk(s, c, &nregions, &writers);
		for (peer = 0; peer < FX_WORLD && !ret; peer++) {
			if (peer == RANK)
				continue;
			target_for(&t, &self->lim, RANK, peer, c);
			fx_env(&env, &self->lim, RANK, peer, c);
			n = tplan_chain_build(NULL, 0, &t, regions, nregions);
			if (n <= 0 || tplan_chain_build(self->dw, self->room, &t, regions, nregions) != n) {
				ret = __LINE__;
				break;
			}
			if (tplan_chain_validate(self->dw, (uint32_t)n, c, &env, &why)) {
				fprintf(stderr, "# chunk %u peer %u: rule %u packet %u value %#llx\n",
					c, peer, why.rule, why.packet, (unsigned long long)why.value);
				ret = __LINE__;
				break;
			}
			want.n = got.n = 0;
			region_spans(regions, nregions, &want);
			if (chain_spans(self->dw, (uint32_t)n, &t, &got, &self->last) ||
			    !spans_normalize(&want) || !spans_normalize(&got) ||
			    !spans_equal(&want, &got) || self->last.polls != 1 ||
			    self->last.atomics != 1) {
				ret = __LINE__;
				break;
			}
			/* packet by packet: the region whose bytes it copies */
			for (packet = 0, off = 0; off < (uint32_t)n && !ret; packet++) {
				struct tplan_sdma_packet p;
				struct spans one = { 0 }, reg = { 0 };
				struct decoded d;
				int len = tplan_sdma_decode(self->dw + off, n - off, &p);

				tplan_chain_locate(&t, regions, nregions, packet, &w);
				if (p.kind == TPLAN_SDMA_KIND_POLL_REGMEM)
					ret = w.part == TPLAN_CHAIN_PART_POLL ? 0 : __LINE__;
				else if (p.kind == TPLAN_SDMA_KIND_ATOMIC)
					ret = w.part == TPLAN_CHAIN_PART_ATOMIC ? 0 : __LINE__;
				else if (w.part != TPLAN_CHAIN_PART_COPY || w.region >= nregions)
					ret = __LINE__;
				else {
					chain_spans(self->dw + off, (uint32_t)len, &t, &one, &d);
					region_spans(&regions[w.region], 1, &reg);
					spans_normalize(&one);
					spans_normalize(&reg);
					for (i = 0; i < one.n && !ret; i++)
						if (one.s[i].start < reg.s[0].start ||
						    one.s[i].start + one.s[i].len >
						    reg.s[reg.n - 1].start + reg.s[reg.n - 1].len)
							ret = __LINE__;
				}
				free(one.s);
				free(reg.s);
				off += (uint32_t)len;
			}
			tplan_chain_locate(&t, regions, nregions, packet, &w);
			if (!ret && w.part != TPLAN_CHAIN_PART_NONE)
				ret = __LINE__;
			self->chains++;
		}
	}
	free(want.s);
	free(got.s);
	return ret;
}

TEST_F(build, whole_contiguous_and_strided)
{
	struct tplan_tensor t = { .offset = part(RANK, 0), .rows = 512, .cols = 4096,
				  .elem_size = 2 };
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_whole(&t, 1, &s));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(0, self->last.windows);
	tplan_schedule_free(s);

	t.pitch = 8192 + 256;
	ASSERT_EQ(0, tplan_schedule_whole(&t, 1, &s));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(1, self->last.windows);
	EXPECT_EQ(4, self->last.elem_log2);	/* 16-byte elements: the largest that divides */
	EXPECT_EQ(0, self->last.linear);
	tplan_schedule_free(s);
}

/* A 9 MiB row block: pieces of the engine's maximum, each a valid COPY_LINEAR. */
TEST_F(build, chunks_split_at_the_engine_maximum)
{
	struct tplan_tensor t = { .offset = part(RANK, 4096), .rows = 6, .cols = 3 * MiB,
				  .elem_size = 1 };
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_chunks(&t, 3, 1, self->lim.max_copy_bytes, &s));
	ASSERT_EQ(2, tplan_schedule_nchunks(s));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(self->lim.max_copy_bytes == 4 * MiB ? 3 : 1, self->last.linear);
	tplan_schedule_free(s);
}

/* Regions larger than a packet (a hand-built 2.5 GiB range): the chain splits them. */
TEST_F(build, large_range_split_by_the_chain)
{
	struct tplan_region r = { .offset = part(RANK, 0), .width = 5 * GiB / 2, .rows = 1 };
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_new(&s));
	ASSERT_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
	EXPECT_EQ(0, check_schedule(self, s));
	/* 640 copies of 4 MiB, or 1 + 1 + 0.5 GiB */
	EXPECT_EQ(self->lim.max_copy_bytes == 4 * MiB ? 640 : 3, self->last.linear);
	tplan_schedule_free(s);
}

/* A GEMM's bf16 output tiles, grouped order, clipped edge tiles: all sub-windows. */
TEST_F(build, gemm_tiles)
{
	struct tplan_tensor base = { .offset = part(0, 0), .rows = 4 * 1000, .cols = 1000,
				     .elem_size = 2 };
	struct tplan_tensor mine = base;
	struct gemm_tiling g = { .tiles_m = 8, .tiles_n = 8, .group_m = 4 };
	struct tplan_schedule *s;

	/* rank RANK's rows of the gathered output, in its own part */
	mine.offset = part(RANK, 0);
	mine.rows = 1000;
	base.offset = part(RANK, 0) - RANK * 1000 * 2000ULL;
	ASSERT_EQ(0, tplan_schedule_tile_chunks(&mine, 128, 128, 8, gemm_tile_order, &g, &base, &s));
	ASSERT_EQ(8, tplan_schedule_nchunks(s));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(8, self->last.windows);
	EXPECT_EQ(0, self->last.linear);
	EXPECT_EQ(3 * 8, self->chains);	/* every chunk to each of 3 peers */
	tplan_schedule_free(s);
}

/* More than 16384 rows: one sub-window per block of 16384 rows. */
TEST_F(build, tall_region_splits_rows)
{
	struct tplan_region r = { .offset = part(RANK, 64), .width = 256, .pitch = 1024,
				  .rows = 40000 };
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_new(&s));
	ASSERT_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(3, self->last.windows);	/* 16384 + 16384 + 7232 */
	EXPECT_EQ(0, self->last.linear);
	tplan_schedule_free(s);
}

/* Offsets, widths and pitches that only small elements divide. */
TEST_F(build, element_size_choice)
{
	static const struct {
		uint64_t off, width, pitch;
		uint32_t elem_log2;
	} cases[] = {
		{ 0, 96, 4096, 4 },	/* 16 | all */
		{ 8, 96, 4096, 3 },	/* offset 8 */
		{ 4, 20, 4096, 2 },
		{ 2, 22, 4096, 1 },	/* base rounded down to 4, x = 1 */
		{ 3, 5, 4096, 0 },
		{ 0, 24, 1000, 3 },	/* pitch 1000: 8 */
	};
	struct tplan_schedule *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tplan_region r = { .offset = part(RANK, cases[i].off), .width = cases[i].width,
					  .pitch = cases[i].pitch, .rows = 7 };

		ASSERT_EQ(0, tplan_schedule_new(&s));
		ASSERT_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
		EXPECT_EQ(0, check_schedule(self, s));
		EXPECT_EQ(1, self->last.windows);
		EXPECT_EQ(cases[i].elem_log2, self->last.elem_log2);
		tplan_schedule_free(s);
	}
}

/* 2D regions the sub-window packet cannot express: a linear copy per row. */
TEST_F(build, fallback_per_row)
{
	static const struct {
		uint64_t off, width, pitch;
		uint32_t rows;
		const char *why;
	} cases[] = {
		{ 0, 100, 1001, 5, "pitch not a multiple of 4 bytes" },
		{ 2, 4095, 4096, 3, "x + width past the pitch once the base is aligned" },
		{ 0, 16 * 16385, 16 * 16385 + 16, 2, "16385 elements of 16 bytes" },
		{ 0, 64, (8 << 20) + 16, 3, "pitch over 2^19 elements of 16 bytes" },
	};
	struct tplan_schedule *s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tplan_region r = { .offset = part(RANK, cases[i].off), .width = cases[i].width,
					  .pitch = cases[i].pitch, .rows = cases[i].rows };
		struct tplan_chain_target t;

		target_for(&t, &self->lim, RANK, 0, 0);
		EXPECT_GT(0, tplan_chain_window_elem_log2(&t, &r)) {
			TH_LOG("case %zu (%s) should not fit a sub-window", i, cases[i].why);
		}
		ASSERT_EQ(0, tplan_schedule_new(&s));
		ASSERT_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
		EXPECT_EQ(0, check_schedule(self, s));
		EXPECT_EQ(0, self->last.windows);
		EXPECT_EQ(cases[i].rows, self->last.linear);
		tplan_schedule_free(s);
	}
}

/* Rows wider than a packet in the fallback: each row split at the maximum. */
TEST_F(build, fallback_rows_split)
{
	struct tplan_region r = { .offset = part(RANK, 0), .width = 5 * MiB, .pitch = 9 * MiB,
				  .rows = 3 };
	struct tplan_schedule *s;

	ASSERT_EQ(0, tplan_schedule_new(&s));
	ASSERT_EQ(0, tplan_schedule_add_chunk(s, &r, 1, 1));
	EXPECT_EQ(0, check_schedule(self, s));
	EXPECT_EQ(0, self->last.windows);
	EXPECT_EQ(self->lim.max_copy_bytes == 4 * MiB ? 6 : 3, self->last.linear);
	tplan_schedule_free(s);
}

/* Heaps whose bases differ by 2 mod 4: the peer's window base cannot be aligned. */
TEST_F(build, misaligned_peer_heap_falls_back)
{
	struct tplan_region r = { .offset = part(RANK, 0), .width = 64, .pitch = 256, .rows = 4 };
	struct tplan_chain_target t;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	struct spans got = { 0 };
	struct decoded d;
	int n;

	target_for(&t, &self->lim, RANK, 2, 0);
	fx_env(&env, &self->lim, RANK, 2, 0);
	t.peer_heap += 2;
	env.peer_heap += 2;
	env.dst_start += 2;
	EXPECT_GT(0, tplan_chain_window_elem_log2(&t, &r));
	n = tplan_chain_build(self->dw, self->room, &t, &r, 1);
	ASSERT_LT(0, n);
	EXPECT_EQ(0, tplan_chain_validate(self->dw, (uint32_t)n, 0, &env, &why));
	EXPECT_EQ(0, chain_spans(self->dw, (uint32_t)n, &t, &got, &d));
	EXPECT_EQ(4, d.linear);
	free(got.s);
}

/* The kernel's env for the other engine refuses what the library built for this one. */
TEST_F(build, built_for_the_engine_it_joined)
{
	struct tplan_region r = { .offset = part(RANK, 0), .width = 64 * MiB, .rows = 1 };
	struct tplan_sdma_limits other;
	struct tplan_chain_target t;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	int n;

	ASSERT_EQ(0, tplan_sdma_limits_init(&other, TPLAN_SDMA_IP_4_4_2, 0));
	target_for(&t, &self->lim, RANK, 0, 0);
	fx_env(&env, &other, RANK, 0, 0);
	n = tplan_chain_build(self->dw, self->room, &t, &r, 1);
	ASSERT_LT(0, n);
	if (self->lim.max_copy_bytes > other.max_copy_bytes) {
		EXPECT_EQ(-EINVAL, tplan_chain_validate(self->dw, (uint32_t)n, 0, &env, &why));
		EXPECT_EQ(TPLAN_CHAIN_R_COPY_COUNT, why.rule);
	} else {
		EXPECT_EQ(0, tplan_chain_validate(self->dw, (uint32_t)n, 0, &env, &why));
	}
}

TEST_F(build, refusals)
{
	struct tplan_region r = { .offset = part(RANK, 0), .width = 64, .pitch = 256, .rows = 4 };
	struct tplan_chain_target t;
	int n;

	target_for(&t, &self->lim, RANK, 0, 0);
	EXPECT_EQ(-EINVAL, tplan_chain_build(self->dw, self->room, &t, &r, 0));
	n = tplan_chain_build(NULL, 0, &t, &r, 1);
	ASSERT_LT(0, n);
	EXPECT_EQ(-ENOSPC, tplan_chain_build(self->dw, (uint32_t)n - 1, &t, &r, 1));
	EXPECT_EQ(n, tplan_chain_build(self->dw, (uint32_t)n, &t, &r, 1));
	t.max_copy_bytes = 0;
	EXPECT_EQ(-EINVAL, tplan_chain_build(self->dw, self->room, &t, &r, 1));
	t.max_copy_bytes = TPLAN_SDMA_COPY_MAX_BYTES + 1;
	EXPECT_EQ(-EINVAL, tplan_chain_build(self->dw, self->room, &t, &r, 1));
}

TEST_HARNESS_MAIN
