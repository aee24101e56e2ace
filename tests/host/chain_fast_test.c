// SPDX-License-Identifier: GPL-2.0
/*
 * The chain validator's fast accept path (tplan_chain_fast_accept())
 * against its full walk (tplan_chain_validate_full()), on chains built by
 * libtplan's own builder (libtplan/chain_build.c) from random regions and
 * on those chains mutated: a bit flipped, a dword or a field replaced, a
 * packet dropped, repeated or cut, the env moved by a little.
 *
 * The contract: the fast path accepts nothing the full walk refuses, and
 * accepts every chain the builder makes for a plan's env that the full
 * walk accepts; so tplan_chain_validate() answers as the full walk does,
 * rule and all.  Every case is reproducible from its seed (printed on a
 * failure; TPLAN_FAST_SEED picks the first one).
 */
#include <stdio.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "chain_fixture.h"
#include "chain_build.h"

#define ROOM 4096	/* dwords: the chains here, with space to grow */

/* xorshift64*: small, fast, and the same everywhere */
static u64 rnd_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static u64 rnd(u64 *s, u64 n)
{
	return n ? rnd_next(s) % n : 0;
}

static u64 first_seed(void)
{
	const char *e = getenv("TPLAN_FAST_SEED");

	return e ? strtoull(e, NULL, 0) : 0x7fa57c4a11u;
}

/* One case: a chain, its env and limits. */
struct fcase {
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	u32 dw[ROOM];
	u32 ndw;
	int plan_env;	/* the env of a plan (the fixture's heaps): fast must accept */
};

/* What the two paths said about one case. */
struct verdict {
	int full, fast, validate;
	struct tplan_chain_reject why_full, why_validate;
};

static void judge(const struct fcase *c, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->full = tplan_chain_validate_full(c->dw, c->ndw, 7, &c->env, &v->why_full);
	v->fast = tplan_chain_fast_accept(c->dw, c->ndw, &c->env);
	v->validate = tplan_chain_validate(c->dw, c->ndw, 7, &c->env, &v->why_validate);
}

/* 0 when the verdicts keep the contract; else prints the case, returns 1. */
static int disagree(const struct fcase *c, const struct verdict *v, u64 seed, const char *what)
{
	const char *bad = NULL;
	u32 i;

	if (v->fast && v->full)
		bad = "the fast path accepts a chain the full walk refuses";
	else if (v->validate != v->full)
		bad = "tplan_chain_validate() answers unlike the full walk";
	else if (v->full && memcmp(&v->why_full, &v->why_validate, sizeof(v->why_full)))
		bad = "tplan_chain_validate() names another rule than the full walk";
	if (!bad)
		return 0;
	fprintf(stderr, "# %s (%s, seed %#llx): full %d rule %u packet %u value %#llx, fast %d\n",
		bad, what, (unsigned long long)seed, v->full, v->why_full.rule, v->why_full.packet,
		(unsigned long long)v->why_full.value, v->fast);
	for (i = 0; i < c->ndw && i < 64; i++)
		fprintf(stderr, "%s%08x", i % 8 ? " " : "\n#   ", c->dw[i]);
	fprintf(stderr, "\n");
	return 1;
}

/* Byte off of rank's own part, as an offset into its heap. */
static u64 part_off(u32 rank, u64 off)
{
	return FX_BUF + (u64)rank * FX_PART + off;
}

/*
 * A region of rank's part, in the shapes schedules make: rows of a
 * tensor (contiguous, or with a pitch), tiles of any element size and
 * alignment, ranges larger than one copy, tall ranges of many rows.
 */
static void random_region(u64 *s, u32 rank, const struct tplan_sdma_limits *lim,
			  struct tplan_region *r)
{
	static const u64 aligns[] = { 1, 2, 4, 8, 16, 64, 4096 };
	u64 align = aligns[rnd(s, ARRAY_SIZE(aligns))];
	u64 width, pitch, rows, off;

	switch (rnd(s, 5)) {
	case 0:		/* a range, up to a few times the engine's maximum */
		width = 1 + rnd(s, 3ULL * lim->max_copy_bytes);
		rows = 1;
		break;
	case 1:		/* a small range */
		width = 1 + rnd(s, 512);
		rows = 1;
		break;
	case 2:		/* a tile of a matrix */
		width = (1 + rnd(s, 512)) * align;
		rows = 1 + rnd(s, 300);
		break;
	case 3:		/* tall: more rows than a window's y field */
		width = (1 + rnd(s, 8)) * align;
		rows = 1 + rnd(s, 40000);
		break;
	default:	/* anything */
		width = 1 + rnd(s, 70000);
		rows = 1 + rnd(s, 64);
		break;
	}
	pitch = width + (rnd(s, 3) ? rnd(s, 4) * align : rnd(s, 100000));
	if (rnd(s, 4) == 0)
		pitch = width;
	/* now and then at the part's start, where a heap map near 0 shows */
	off = rnd(s, rnd(s, 4) ? FX_PART / 4 : 8192) & ~(align - 1);
	memset(r, 0, sizeof(*r));
	r->offset = part_off(rank, off);
	r->width = width;
	r->pitch = pitch;
	r->rows = (u32)rows;
}

/*
 * A chain the builder makes from 1..6 random regions of rank's part, to
 * peer, for chunk; its env is the plan's (the fixture's heaps), the peer's
 * heap moved by 2 bytes now and then (windows fall back to rows).  false
 * when the builder refuses (too long for ROOM, say).
 */
static bool built_case(u64 *s, struct fcase *c)
{
	static const u32 ips[] = { TPLAN_SDMA_IP_4_4_0, TPLAN_SDMA_IP_4_4_2 };
	u32 rank = (u32)rnd(s, FX_WORLD), peer = (u32)((rank + 1 + rnd(s, FX_WORLD - 1)) % FX_WORLD);
	u32 chunk = (u32)rnd(s, 4096), n = 1 + (u32)rnd(s, 6), i;
	u32 mcb = rnd(s, 3) ? 0 : 4096u << rnd(s, 12);
	struct tplan_region r[6];
	struct tplan_chain_target t;
	int len;

	if (tplan_sdma_limits_init(&c->lim, ips[rnd(s, 2)], mcb))
		return false;
	fx_env(&c->env, &c->lim, rank, peer, chunk);
	if (rnd(s, 8) == 0) {
		c->env.peer_heap += 2;
		c->env.dst_start += 2;
	}
	memset(&t, 0, sizeof(t));
	t.own_heap = c->env.own_heap;
	t.peer_heap = c->env.peer_heap;
	t.ready_gate = c->env.ready_gate;
	t.arrival_gate = c->env.arrival_gate;
	t.max_copy_bytes = c->lim.max_copy_bytes;
	for (i = 0; i < n; i++)
		random_region(s, rank, &c->lim, &r[i]);
	len = tplan_chain_build(c->dw, ROOM, &t, r, n);
	if (len <= 0)
		return false;
	c->ndw = (u32)len;
	c->plan_env = 1;
	return true;
}

/* The start of each packet of a chain the full walk can split; their count. */
static u32 packet_starts(const struct fcase *c, u32 *at, u32 room)
{
	u32 off = 0, n = 0;

	while (off < c->ndw && n < room) {
		struct tplan_sdma_packet p;
		int len = tplan_sdma_decode(c->dw + off, c->ndw - off, &p);

		if (len <= 0)
			break;
		at[n++] = off;
		off += (u32)len;
	}
	return n;
}

/* A value near v, or one of the edges a field has. */
static u64 near(u64 *s, u64 v)
{
	switch (rnd(s, 6)) {
	case 0:
		return v + 1 + rnd(s, 4);
	case 1:
		return v - 1 - rnd(s, 4);
	case 2:
		return v ^ (1ULL << rnd(s, 64));
	case 3:
		return v + (rnd(s, 2) ? 1 : -1) * (rnd(s, 1ULL << 40));
	case 4:
		return rnd(s, 2) ? 0 : ~0ULL;
	default:
		return rnd_next(s);
	}
}

/* Every address of c, the env's and the packets', moved by v. */
static void move_map(struct fcase *c, const u32 *at, u32 np, u64 v)
{
	u32 i, k;

	c->env.src_start += v;
	c->env.dst_start += v;
	c->env.own_heap += v;
	c->env.peer_heap += v;
	c->env.ready_gate += v;
	c->env.arrival_gate += v;
	for (k = 0; k < np; k++) {
		u32 *p = c->dw + at[k], op = tplan_sdma_hdr_op(p[0]);
		bool linear = tplan_sdma_hdr_sub_op(p[0]) == TPLAN_SDMA_SUB_COPY_LINEAR;
		/* where its addresses are: src and dst, or the gate */
		u32 a = op == TPLAN_SDMA_OP_COPY && linear ? 3 : 1;
		u32 b = op == TPLAN_SDMA_OP_COPY ? (linear ? 5 : 6) : 0;

		for (i = 0; i < 2 && (i ? b : a); i++) {
			u32 d = i ? b : a;
			u64 x = tplan_sdma_addr(p[d], p[d + 1]) + v;

			p[d] = tplan_sdma_lo(x);
			p[d + 1] = tplan_sdma_hi(x);
		}
	}
	c->plan_env = 0;
}

/* The window at p names the same bytes from k elements lower: base - k, x + k. */
static void window_rebase(u32 *p, u32 k)
{
	u32 e = p[0] >> TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT, i;

	for (i = 1; i <= 6; i += 5) {
		u64 v = tplan_sdma_addr(p[i], p[i + 1]) - ((u64)k << e);

		p[i] = tplan_sdma_lo(v);
		p[i + 1] = tplan_sdma_hi(v);
		p[i + 2] += k;
	}
}

/* One mutation of c; the name of what it did. */
static const char *mutate(u64 *s, struct fcase *c)
{
	u32 at[512], np = packet_starts(c, at, ARRAY_SIZE(at)), i, k, len;
	u64 v;

	switch (rnd(s, 12)) {
	case 0: {		/* flip 1..3 bits anywhere */
		u32 flips = 1 + (u32)rnd(s, 3);

		for (k = 0; k < flips; k++)
			c->dw[rnd(s, c->ndw)] ^= 1u << rnd(s, 32);
		return "bit flips";
	}
	case 1:			/* a dword near what it was */
		i = (u32)rnd(s, c->ndw);
		c->dw[i] = (u32)near(s, c->dw[i]);
		return "a dword";
	case 2:			/* an address (two dwords) of a packet near what it was */
		if (!np)
			return "nothing";
		i = at[rnd(s, np)] + 1 + (u32)rnd(s, 6);
		if (i + 1 >= c->ndw)
			return "nothing";
		v = near(s, tplan_sdma_addr(c->dw[i], c->dw[i + 1]));
		c->dw[i] = tplan_sdma_lo(v);
		c->dw[i + 1] = tplan_sdma_hi(v);
		return "an address";
	case 3:			/* a packet dropped */
		if (np < 2)
			return "nothing";
		k = 1 + (u32)rnd(s, np - 1);
		len = (k + 1 < np ? at[k + 1] : c->ndw) - at[k];
		memmove(c->dw + at[k], c->dw + at[k] + len, (c->ndw - at[k] - len) * 4);
		c->ndw -= len;
		return "a packet dropped";
	case 4:			/* a packet repeated */
		if (!np)
			return "nothing";
		k = (u32)rnd(s, np);
		len = (k + 1 < np ? at[k + 1] : c->ndw) - at[k];
		if (c->ndw + len > ROOM)
			return "nothing";
		memmove(c->dw + at[k] + len, c->dw + at[k], (c->ndw - at[k]) * 4);
		c->ndw += len;
		return "a packet repeated";
	case 5:			/* cut short, or junk after the end */
		if (rnd(s, 2) && c->ndw > 1) {
			c->ndw -= 1 + (u32)rnd(s, c->ndw - 1 < 16 ? c->ndw - 1 : 16);
			return "cut short";
		}
		k = 1 + (u32)rnd(s, 16);
		if (c->ndw + k > ROOM)
			return "nothing";
		for (i = 0; i < k; i++)
			c->dw[c->ndw + i] = rnd(s, 2) ? (u32)rnd_next(s) : c->dw[rnd(s, c->ndw)];
		c->ndw += k;
		return "junk after the end";
	case 6:			/* the env's bounds moved */
		switch (rnd(s, 5)) {
		case 0:
			c->env.src_start = near(s, c->env.src_start);
			break;
		case 1:
			c->env.src_bytes = near(s, c->env.src_bytes);
			break;
		case 2:
			c->env.dst_start = near(s, c->env.dst_start);
			break;
		case 3:
			c->env.dst_bytes = near(s, c->env.dst_bytes);
			break;
		default:
			c->env.src_bytes = rnd(s, 1ULL << 36);
			c->env.dst_bytes = rnd(s, 1ULL << 36);
			break;
		}
		c->plan_env = 0;
		return "the env's bounds";
	case 7:			/* the env's heaps, gates, length limit */
		switch (rnd(s, 5)) {
		case 0:
			c->env.own_heap = near(s, c->env.own_heap);
			break;
		case 1:
			c->env.peer_heap = near(s, c->env.peer_heap);
			break;
		case 2:
			c->env.ready_gate = near(s, c->env.ready_gate);
			break;
		case 3:
			c->env.arrival_gate = near(s, c->env.arrival_gate);
			break;
		default:
			c->env.max_dwords = (u32)near(s, c->ndw);
			break;
		}
		c->plan_env = 0;
		return "the env's heaps, gates or length";
	case 8:			/* the engine's limits */
		switch (rnd(s, 4)) {
		case 0:
			c->lim.max_copy_bytes = (u32)near(s, c->lim.max_copy_bytes);
			break;
		case 1:
			c->lim.window_align = (u32)(1ULL << rnd(s, 8));
			break;
		case 2:
			c->lim.window_x_bits = (u32)rnd(s, 20);
			c->lim.window_y_bits = (u32)rnd(s, 20);
			break;
		default:
			c->lim.max_elem_size_log2 = (u32)rnd(s, 6);
			break;
		}
		c->plan_env = 0;
		return "the engine's limits";
	case 9: {		/* a window's bytes named from another base: base - k elements, x + k */
		u32 *p = NULL;

		for (k = 0; k < np && !p; k++)
			if (tplan_sdma_hdr_op(c->dw[at[k]]) == TPLAN_SDMA_OP_COPY &&
			    tplan_sdma_hdr_sub_op(c->dw[at[k]]) == TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW &&
			    rnd(s, 2))
				p = c->dw + at[k];
		if (!p)
			return "nothing";
		/* mostly as far as the pitch leaves room for: the same bytes */
		v = ((p[4] >> TPLAN_SDMA_SUB_WINDOW_PITCH_SHIFT) & TPLAN_SDMA_SUB_WINDOW_PITCH_MASK) -
		    (p[11] & TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK) - (p[3] & TPLAN_SDMA_SUB_WINDOW_X_MASK);
		k = 1 + (u32)rnd(s, rnd(s, 4) && v < (1u << 14) ? v + 1 : 1u << 14);
		window_rebase(p, k);
		return "a window's base and x";
	}
	case 10: {		/* a linear copy split in two, each half right after the other */
		u32 *p = NULL, n;

		for (k = 0; k < np && !p; k++)
			if (c->dw[at[k]] == tplan_sdma_hdr(TPLAN_SDMA_OP_COPY, TPLAN_SDMA_SUB_COPY_LINEAR) &&
			    c->dw[at[k] + 1] > 0 && rnd(s, 2))
				p = c->dw + at[k];
		if (!p || c->ndw + TPLAN_SDMA_COPY_LINEAR_DW > ROOM)
			return "nothing";
		memmove(p + TPLAN_SDMA_COPY_LINEAR_DW, p, (c->ndw - (u32)(p - c->dw)) * 4);
		c->ndw += TPLAN_SDMA_COPY_LINEAR_DW;
		n = 1 + (u32)rnd(s, p[1]);	/* bytes in the first half */
		p[1] = n - 1;
		p += TPLAN_SDMA_COPY_LINEAR_DW;
		p[1] -= n;
		for (i = 3; i <= 5; i += 2) {
			v = tplan_sdma_addr(p[i], p[i + 1]) + n;
			p[i] = tplan_sdma_lo(v);
			p[i + 1] = tplan_sdma_hi(v);
		}
		return "a linear copy split";
	}
	default:		/* the whole heap map moved: near 0, high or wrapping */
		switch (rnd(s, 3)) {
		case 0:
			v = rnd(s, 1ULL << 20);
			break;
		case 2:
			v = (1ULL << 62) - rnd(s, 1ULL << 42);
			break;
		default:
			v = ~0ULL - rnd(s, 1ULL << 42);
			break;
		}
		move_map(c, at, np, v - c->env.own_heap);
		c->plan_env = 0;
		return "the heap map moved";
	}
}

/* Random plan chains: the fast path takes every one the full walk accepts. */
TEST(builder_chains_take_the_fast_path)
{
	static struct fcase c;
	u64 seed = first_seed(), s = seed;
	u32 built = 0, windows = 0, linear = 0, i, k;
	struct verdict v;

	for (i = 0; i < 4000; i++) {
		u64 case_seed = s;
		u32 at[512], np;
		bool w = false, l = false;

		if (!built_case(&s, &c))
			continue;
		built++;
		np = packet_starts(&c, at, ARRAY_SIZE(at));
		for (k = 0; k < np; k++) {
			w |= tplan_sdma_hdr_sub_op(c.dw[at[k]]) == TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW;
			l |= tplan_sdma_hdr_op(c.dw[at[k]]) == TPLAN_SDMA_OP_COPY &&
			     tplan_sdma_hdr_sub_op(c.dw[at[k]]) == TPLAN_SDMA_SUB_COPY_LINEAR;
		}
		windows += w;
		linear += l;
		judge(&c, &v);
		ASSERT_EQ(0, disagree(&c, &v, case_seed, "as built"));
		ASSERT_EQ(0, v.full) {
			fprintf(stderr, "# the builder's chain is refused (seed %#llx): rule %u\n",
				(unsigned long long)case_seed, v.why_full.rule);
		}
		ASSERT_TRUE(v.fast) {
			fprintf(stderr, "# the fast path misses a plan's chain (seed %#llx)\n",
				(unsigned long long)case_seed);
		}
	}
	ASSERT_GT(built, 3000);
	/* both kinds of copy came through the fast path */
	ASSERT_GT(windows, built / 10);
	ASSERT_GT(linear, built / 10);
	ksft_print_msg("%u chains built (%u with sub-windows, %u with linear copies), all accepted by both paths\n",
		       built, windows, linear);
	fflush(stdout);	/* the harness ends a test with _exit() */
}

/* Mutated plan chains: the two paths agree on every one. */
TEST(mutated_chains_agree)
{
	static struct fcase c;
	u64 s = first_seed() ^ 0x5eed, both = 0, refused = 0, full_only = 0, total = 0;
	struct verdict v;
	u32 i, m;

	for (i = 0; i < 6000; i++) {
		if (!built_case(&s, &c))
			continue;
		for (m = 0; m < 16; m++) {
			static struct fcase mut;
			u64 case_seed = s;
			const char *what;
			u32 more = 1 + (u32)rnd(&s, 2), k;

			mut = c;
			what = mutate(&s, &mut);
			for (k = 1; k < more; k++)
				mutate(&s, &mut);
			mut.env.limits = &mut.lim;
			judge(&mut, &v);
			ASSERT_EQ(0, disagree(&mut, &v, case_seed, what));
			total++;
			if (v.full)
				refused++;
			else if (v.fast)
				both++;
			else
				full_only++;
		}
	}
	ksft_print_msg("%llu mutated chains: %llu refused by both, %llu accepted by both, "
		       "%llu accepted by the full walk alone\n", (unsigned long long)total,
		(unsigned long long)refused, (unsigned long long)both,
		(unsigned long long)full_only);
	fflush(stdout);	/* the harness ends a test with _exit() */
	/* both sides of the contract were exercised */
	ASSERT_GT(refused, total / 4);
	ASSERT_GT(both, total / 50);
}

/*
 * Every single-bit flip of every dword of plan chains of each shape:
 * linear ranges split at the engine's maximum, rows that fall back to
 * linear copies, tiles of several element sizes, a mix.
 */
TEST(every_bit_flip_agrees)
{
	static struct fcase c, mut;
	u64 s = first_seed() ^ 0xb17, flips = 0;
	u32 shapes = 0, i, bit, tries;
	struct verdict v;

	for (tries = 0; tries < 400 && shapes < 48; tries++) {
		if (!built_case(&s, &c) || c.ndw > 1200)
			continue;
		shapes++;
		for (i = 0; i < c.ndw; i++)
			for (bit = 0; bit < 32; bit++) {
				mut = c;
				mut.env.limits = &mut.lim;
				mut.dw[i] ^= 1u << bit;
				judge(&mut, &v);
				ASSERT_EQ(0, disagree(&mut, &v, s, "one bit flipped"));
				flips++;
			}
	}
	ASSERT_GT(shapes, 40);
	ksft_print_msg("%llu single-bit flips of %u chains agree\n",
		(unsigned long long)flips, shapes);
	fflush(stdout);	/* the harness ends a test with _exit() */
}

/* The fixture's hand-made shapes, as in the validator's own tests. */
TEST(fixture_chains_take_the_fast_path)
{
	static struct fcase c;
	struct fx_chain fc;
	struct verdict v;
	u32 t;

	ASSERT_EQ(0, tplan_sdma_limits_init(&c.lim, TPLAN_SDMA_IP_4_4_2, 0));
	fx_env(&c.env, &c.lim, 1, 2, 3);
	fx_chain_init(&fc, ROOM);
	fx_poll(&fc, &c.env);
	for (t = 0; t < 64; t++)
		fx_tile(&fc, &c.env, 8192, t % 5, (t % 32) * 128, 256 + (t / 32) * 128, 128, 128);
	fx_copy(&fc, &c.env, 1 << 20, 4096);
	fx_copy(&fc, &c.env, (1 << 20) + 4096, 64);
	fx_atomic(&fc, &c.env);
	ASSERT_EQ(0, fc.err);
	memcpy(c.dw, fc.dw, fc.ndw * 4);
	c.ndw = fc.ndw;
	fx_chain_free(&fc);
	judge(&c, &v);
	ASSERT_EQ(0, disagree(&c, &v, 0, "fixture"));
	ASSERT_EQ(0, v.full);
	ASSERT_TRUE(v.fast);
}

/*
 * A heap at address 0, the sender's part at 0x1000: a window whose base,
 * k elements below its first byte, wraps below 0 is refused by the full
 * walk (COPY_SRC), and the fast path must not take it; nor one that does
 * not wrap, there, whatever the walk says.
 */
TEST(window_base_below_zero)
{
	static struct fcase c, mut;
	u32 at[8], np, k;
	struct fx_chain fc;
	struct verdict v;

	ASSERT_EQ(0, tplan_sdma_limits_init(&c.lim, TPLAN_SDMA_IP_4_4_2, 0));
	memset(&c.env, 0, sizeof(c.env));
	c.env.limits = &c.lim;
	c.env.own_heap = 0;
	c.env.src_start = 0x1000;
	c.env.src_bytes = 1 << 20;
	c.env.peer_heap = 1ULL << 40;
	c.env.dst_start = c.env.peer_heap;
	c.env.dst_bytes = 0x1000 + (1 << 20);
	c.env.ready_gate = 0x800000 + TPLAN_GATE_READY;
	c.env.arrival_gate = c.env.peer_heap + 0x800000 + TPLAN_GATE_ARRIVAL;
	fx_chain_init(&fc, ROOM);
	fx_poll(&fc, &c.env);
	fx_tile(&fc, &c.env, 8192, 2, 100, 0, 128, 16);	/* base: the part's start */
	fx_atomic(&fc, &c.env);
	ASSERT_EQ(0, fc.err);
	memcpy(c.dw, fc.dw, fc.ndw * 4);
	c.ndw = fc.ndw;
	fx_chain_free(&fc);
	np = packet_starts(&c, at, ARRAY_SIZE(at));
	ASSERT_EQ(3, np);
	for (k = 0; k <= 4096; k += 256) {
		mut = c;
		mut.env.limits = &mut.lim;
		window_rebase(mut.dw + at[1], k);
		judge(&mut, &v);
		ASSERT_EQ(0, disagree(&mut, &v, k, "window base below 0"));
		if (k << 2 > 0x1000)	/* wraps */
			ASSERT_EQ(TPLAN_CHAIN_R_COPY_SRC, v.why_full.rule);
		if (k == 0)
			ASSERT_EQ(0, v.full);
	}
}

TEST_HARNESS_MAIN
