// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The group-wide rule of plan creation: no two ranks send the same bytes
 * (chain_validate.h).  Plain C: builds into tplan.ko and into the host
 * tests, fuzzer and benchmark.
 *
 * A span is rows of width bytes, pitch bytes apart.  Spans whose rows
 * touch or overlap (one row, or pitch <= width) are byte ranges; the
 * others are grouped by pitch.  In the coordinates of a pitch p, byte b
 * is cell (x = b mod p, y = b div p), and a span of pitch p is a
 * rectangle (two when its rows cross a multiple of p), so spans of one
 * pitch share a byte exactly when their rectangles meet; a byte range is
 * at most three rectangles in any pitch's coordinates.  Spans sent by two
 * ranks meet only if the ranks differ in some bit, so for each bit in
 * which the ranks of a pitch class differ, one plane sweep over y with a
 * segment tree per colour (that bit's value) over the x coordinates finds
 * any red rectangle meeting a blue one: O(n log n) per class, however the
 * spans interleave (column strips of the same rows, say).  Byte ranges
 * among themselves: one sweep over start.  Only spans of two different
 * pitches (both more than one row) are compared pairwise, among those
 * whose extents overlap; no schedule builder makes such plans.
 */
#include "tplan_shim.h"
#include "tplan_chain.h"
#include "chain_validate.h"

/* Spans end below this, so signed differences of offsets cannot overflow. */
#define SPAN_OFFSET_LIMIT ((u64)1 << 62)
/* How often the long loops offer to reschedule (and notice a fatal signal). */
#define YIELD_EVERY 4096

static u64 span_end(const struct tplan_chain_span *s)
{
	return s->start + (u64)(s->rows - 1) * s->pitch + s->width;
}

static bool span_ok(const struct tplan_chain_span *s)
{
	u64 room;

	if (!s->rows || !s->width || !s->pitch || s->start >= SPAN_OFFSET_LIMIT ||
	    s->width > SPAN_OFFSET_LIMIT - s->start)
		return false;
	room = SPAN_OFFSET_LIMIT - s->start - s->width;
	return s->rows == 1 || s->pitch <= (u64)tplan_div_s64((s64)room, s->rows - 1);
}

/* A byte range when its rows touch: one row, or a pitch within the width. */
static bool span_is_range(const struct tplan_chain_span *s)
{
	return s->rows == 1 || s->pitch <= s->width;
}

/* s as the byte range it covers, when span_is_range(s). */
static struct tplan_chain_span span_as_range(const struct tplan_chain_span *s)
{
	struct tplan_chain_span r = *s;

	r.width = span_end(s) - s->start;
	r.pitch = r.width;
	r.rows = 1;
	return r;
}

static s64 floor_div(s64 a, s64 b)
{
	s64 q = tplan_div_s64(a, b);

	return (q * b != a && a < 0) ? q - 1 : q;
}

static s64 ceil_div(s64 a, s64 b)
{
	s64 q = tplan_div_s64(a, b);

	return (q * b != a && a > 0) ? q + 1 : q;
}

/*
 * Rows a0 + i*p + [0, wa), i < ra, and b0 + j*p + [0, wb), j < rb, share a
 * byte iff some k = j - i in [-(ra - 1), rb - 1] has
 * -(d + wb) < k*p < wa - d, with d = b0 - a0.  For a fixed k the lowest
 * shared byte comes from the lowest i, and it grows with |k|, so only the
 * k nearest 0 on each side can give the lowest byte.
 */
static bool rows_meet(u64 a0, u64 wa, u32 ra, u64 b0, u64 wb, u32 rb, u64 p, u64 *at)
{
	s64 d = (s64)b0 - (s64)a0;
	s64 lo = floor_div(-(d + (s64)wb), (s64)p) + 1;
	s64 hi = ceil_div((s64)wa - d, (s64)p) - 1;
	u64 best = U64_MAX, x, y;
	s64 k;

	if (lo < -(s64)(ra - 1))
		lo = -(s64)(ra - 1);
	if (hi > (s64)(rb - 1))
		hi = (s64)(rb - 1);
	if (lo > hi)
		return false;
	if (hi >= 0) {		/* i = 0, j = k */
		k = lo > 0 ? lo : 0;
		y = b0 + (u64)k * p;
		best = a0 > y ? a0 : y;
	}
	if (lo < 0) {		/* j = 0, i = -k */
		k = hi < 0 ? hi : -1;
		x = a0 + (u64)(-k) * p;
		x = x > b0 ? x : b0;
		best = x < best ? x : best;
	}
	*at = best;
	return true;
}

/* The lowest byte spans a and b share, if any (O(1) for equal pitches). */
static bool spans_meet(const struct tplan_chain_span *pa, const struct tplan_chain_span *pb,
		       u64 *at)
{
	struct tplan_chain_span a = span_is_range(pa) ? span_as_range(pa) : *pa;
	struct tplan_chain_span b = span_is_range(pb) ? span_as_range(pb) : *pb;
	const struct tplan_chain_span *few, *many;
	u64 p = a.rows == 1 ? b.pitch : a.pitch;
	u64 best = U64_MAX, x;
	bool met = false;
	u32 r;

	/* One row has any pitch, so equal pitches cover most pairs in O(1). */
	if (b.rows == 1 || b.pitch == p)
		return rows_meet(a.start, a.width, a.rows, b.start, b.width, b.rows, p, at);

	few = a.rows <= b.rows ? &a : &b;
	many = few == &a ? &b : &a;
	for (r = 0; r < few->rows; r++) {
		if (rows_meet(few->start + (u64)r * few->pitch, few->width, 1,
			      many->start, many->width, many->rows, many->pitch, &x) && x < best) {
			best = x;
			met = true;
		}
	}
	*at = best;
	return met;
}

/* Sorted by start, then rank, chain, packet: the order spans are named in. */
static int span_cmp(const void *pa, const void *pb)
{
	const struct tplan_chain_span *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->chain != b->chain)
		return a->chain < b->chain ? -1 : 1;
	if (a->packet != b->packet)
		return a->packet < b->packet ? -1 : 1;
	return 0;
}

/* Span s (named first) sends bytes other also sends. */
static int report(const struct tplan_chain_span *s, const struct tplan_chain_span *other,
		  struct tplan_chain_reject *why)
{
	u64 at = 0;

	spans_meet(other, s, &at);
	memset(why, 0, sizeof(*why));
	why->rule = TPLAN_CHAIN_R_OVERLAP;
	why->rank = s->rank;
	why->chain = s->chain;
	why->packet = s->packet;
	why->value = at;
	why->other_rank = other->rank;
	why->other_chain = other->chain;
	why->other_packet = other->packet;
	return -EINVAL;
}

/* ---- byte ranges among themselves ---------------------------------------- */

/*
 * In start order, a range meets an earlier one of another rank iff that
 * rank's ranges so far reach past its start.  idx lists the ranges, in
 * start order (spans are sorted).
 */
static int check_ranges(const struct tplan_chain_span *spans, const u32 *idx, u32 n,
			struct tplan_chain_reject *why)
{
	u64 reach[TPLAN_CHAIN_MAX_RANKS] = { 0 };
	u32 holder[TPLAN_CHAIN_MAX_RANKS] = { 0 };
	u32 i, r;
	int ret;

	for (i = 0; i < n; i++) {
		const struct tplan_chain_span *s = &spans[idx[i]];
		struct tplan_chain_span range = span_as_range(s);
		u32 best = U32_MAX;

		for (r = 0; r < TPLAN_CHAIN_MAX_RANKS; r++)
			if (r != s->rank && reach[r] > range.start && holder[r] < best)
				best = holder[r];
		if (best != U32_MAX)
			return report(s, &spans[best], why);
		if (s->rank < TPLAN_CHAIN_MAX_RANKS && span_end(&range) > reach[s->rank]) {
			reach[s->rank] = span_end(&range);
			holder[s->rank] = idx[i];
		}
		if (i % YIELD_EVERY == YIELD_EVERY - 1) {
			ret = tplan_yield();
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- one pitch class: rectangles, plane sweep ---------------------------- */

struct rect {
	u64 x0, x1, y0, y1;	/* cells [x0, x1) x [y0, y1) */
	u32 span;		/* index in spans */
	u32 rank;
	u32 ix0, ix1;		/* x0, x1 as leaf indices of the trees */
};

struct event {
	u64 y;
	u32 rect;
	u32 insert;		/* removals first at the same y: rows are half-open */
};

/* Coverage counts over leaves; any[] says whether a subtree holds one. */
struct segtree {
	u32 *cover;
	u8 *any;
};

static void seg_update(struct segtree *t, u32 node, u32 lo, u32 hi, u32 a, u32 b, int delta)
{
	u32 mid = lo + (hi - lo) / 2;

	if (b <= lo || hi <= a)
		return;
	if (a <= lo && hi <= b) {
		t->cover[node] += delta;
	} else {
		seg_update(t, 2 * node, lo, mid, a, b, delta);
		seg_update(t, 2 * node + 1, mid, hi, a, b, delta);
	}
	t->any[node] = t->cover[node] ||
		       (hi - lo > 1 && (t->any[2 * node] || t->any[2 * node + 1]));
}

/* Is any leaf of [a, b) covered? */
static bool seg_query(const struct segtree *t, u32 node, u32 lo, u32 hi, u32 a, u32 b)
{
	u32 mid = lo + (hi - lo) / 2;

	if (b <= lo || hi <= a || !t->any[node])
		return false;
	/* a cover of this node spans all of it, and it meets [a, b) */
	if (t->cover[node] || (a <= lo && hi <= b))
		return true;
	return seg_query(t, 2 * node, lo, mid, a, b) || seg_query(t, 2 * node + 1, mid, hi, a, b);
}

static int u64_cmp(const void *pa, const void *pb)
{
	u64 a = *(const u64 *)pa, b = *(const u64 *)pb;

	return a < b ? -1 : a > b;
}

static int event_cmp(const void *pa, const void *pb)
{
	const struct event *a = pa, *b = pb;

	if (a->y != b->y)
		return a->y < b->y ? -1 : 1;
	if (a->insert != b->insert)
		return a->insert < b->insert ? -1 : 1;
	return a->rect < b->rect ? -1 : a->rect > b->rect;
}

/* Index of x in the sorted, distinct xs[0..m). */
static u32 x_index(const u64 *xs, u32 m, u64 x)
{
	u32 lo = 0, hi = m;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (xs[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct rect mkrect(u64 x0, u64 x1, u64 y0, u64 y1, u32 span, u32 rank)
{
	return (struct rect) { .x0 = x0, .x1 = x1, .y0 = y0, .y1 = y1, .span = span, .rank = rank };
}

/* Append the cells of byte range [b0, b1) in pitch p coordinates (<= 3 rects). */
static u32 range_rects(u64 b0, u64 b1, u64 p, u32 span, u32 rank, struct rect *out)
{
	u64 ya = b0 / p, xa = b0 % p, yb = (b1 - 1) / p, xb = (b1 - 1) % p;
	u32 n = 0;

	if (ya == yb) {
		out[n++] = mkrect(xa, xb + 1, ya, ya + 1, span, rank);
		return n;
	}
	out[n++] = mkrect(xa, p, ya, ya + 1, span, rank);
	if (yb > ya + 1)
		out[n++] = mkrect(0, p, ya + 1, yb, span, rank);
	out[n++] = mkrect(0, xb + 1, yb, yb + 1, span, rank);
	return n;
}

/* A span of pitch p > width: one rectangle, two when rows cross a multiple of p. */
static u32 span_rects(const struct tplan_chain_span *s, u64 p, u32 span, struct rect *out)
{
	u64 x0 = s->start % p, y0 = s->start / p;
	u32 n = 0;

	if (x0 + s->width <= p) {
		out[n++] = mkrect(x0, x0 + s->width, y0, y0 + s->rows, span, s->rank);
		return n;
	}
	out[n++] = mkrect(x0, p, y0, y0 + s->rows, span, s->rank);
	out[n++] = mkrect(0, x0 + s->width - p, y0 + 1, y0 + s->rows + 1, span, s->rank);
	return n;
}

/*
 * Sweep the rectangles once for bit: colour = that bit of the rank.  On a
 * meeting, the rectangle being inserted is named first, the lowest-
 * numbered active one of the other colour that it meets second.
 */
static int sweep_bit(const struct tplan_chain_span *spans, struct rect *rects, u32 nr,
		     struct event *ev, struct segtree t[2], u8 *active, u32 size,
		     u32 bit, struct tplan_chain_reject *why)
{
	u32 i, k, c;
	int ret;

	memset(active, 0, nr);
	for (c = 0; c < 2; c++) {
		memset(t[c].cover, 0, 2 * size * sizeof(*t[c].cover));
		memset(t[c].any, 0, 2 * size);
	}
	for (i = 0; i < 2 * nr; i++) {
		struct rect *r = &rects[ev[i].rect];

		c = (r->rank >> bit) & 1;
		if (!ev[i].insert) {
			seg_update(&t[c], 1, 0, size, r->ix0, r->ix1, -1);
			active[ev[i].rect] = 0;
			continue;
		}
		if (seg_query(&t[!c], 1, 0, size, r->ix0, r->ix1)) {
			for (k = 0; k < nr; k++)
				if (active[k] && ((rects[k].rank >> bit) & 1) != c &&
				    rects[k].x0 < r->x1 && r->x0 < rects[k].x1)
					return report(&spans[r->span], &spans[rects[k].span], why);
		}
		seg_update(&t[c], 1, 0, size, r->ix0, r->ix1, 1);
		active[ev[i].rect] = 1;
		if (i % YIELD_EVERY == YIELD_EVERY - 1) {
			ret = tplan_yield();
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Spans idx[0..n) all of pitch p (more than one row, p > width), and the
 * byte ranges rng[0..nrng) (in start order) that may reach them.
 */
static int check_class(const struct tplan_chain_span *spans, const u32 *idx, u32 n, u64 p,
		       const u32 *rng, u32 nrng, struct tplan_chain_reject *why)
{
	u64 lo = U64_MAX, hi = 0, *xs = NULL;
	u32 i, nr = 0, m, leaves, size, or_ranks = 0, and_ranks = ~0U, bit, cap;
	struct segtree t[2] = { { NULL, NULL }, { NULL, NULL } };
	struct event *ev = NULL;
	struct rect *rects;
	u8 *active = NULL;
	int ret = -ENOMEM;

	for (i = 0; i < n; i++) {
		const struct tplan_chain_span *s = &spans[idx[i]];

		lo = s->start < lo ? s->start : lo;
		hi = span_end(s) > hi ? span_end(s) : hi;
	}
	cap = 2 * n + 3 * nrng;
	rects = tplan_alloc_array(cap, sizeof(*rects));
	if (!rects)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		nr += span_rects(&spans[idx[i]], p, idx[i], rects + nr);
	for (i = 0; i < nrng; i++) {
		const struct tplan_chain_span *s = &spans[rng[i]];
		u64 b0 = s->start, b1 = span_end(s);

		if (b0 >= hi)
			break;		/* in start order: the rest start later */
		if (b1 <= lo)
			continue;
		/* only the part inside the class's extent can meet it */
		nr += range_rects(b0 > lo ? b0 : lo, b1 < hi ? b1 : hi, p, rng[i], s->rank,
				  rects + nr);
	}
	for (i = 0; i < nr; i++) {
		or_ranks |= rects[i].rank;
		and_ranks &= rects[i].rank;
	}
	if (or_ranks == and_ranks) {	/* one rank only */
		ret = 0;
		goto out;
	}

	ev = tplan_alloc_array(2 * nr, sizeof(*ev));
	xs = tplan_alloc_array(2 * nr, sizeof(*xs));
	active = tplan_alloc_array(nr, 1);
	if (!ev || !xs || !active)
		goto out;
	for (i = 0; i < nr; i++) {
		xs[2 * i] = rects[i].x0;
		xs[2 * i + 1] = rects[i].x1;
		ev[2 * i] = (struct event) { .y = rects[i].y0, .rect = i, .insert = 1 };
		ev[2 * i + 1] = (struct event) { .y = rects[i].y1, .rect = i, .insert = 0 };
	}
	tplan_sort(xs, 2 * nr, sizeof(*xs), u64_cmp);
	for (i = 1, m = 1; i < 2 * nr; i++)
		if (xs[i] != xs[m - 1])
			xs[m++] = xs[i];
	leaves = m - 1;
	for (size = 1; size < leaves; size *= 2)
		;
	for (i = 0; i < nr; i++) {
		rects[i].ix0 = x_index(xs, m, rects[i].x0);
		rects[i].ix1 = x_index(xs, m, rects[i].x1);
	}
	tplan_sort(ev, 2 * nr, sizeof(*ev), event_cmp);
	for (i = 0; i < 2; i++) {
		t[i].cover = tplan_alloc_array(2 * size, sizeof(*t[i].cover));
		t[i].any = tplan_alloc_array(2 * size, 1);
		if (!t[i].cover || !t[i].any)
			goto out;
	}
	ret = tplan_yield();
	for (bit = 0; !ret && bit < 32; bit++)
		if ((or_ranks ^ and_ranks) >> bit & 1)
			ret = sweep_bit(spans, rects, nr, ev, t, active, size, bit, why);
out:
	for (i = 0; i < 2; i++) {
		tplan_free(t[i].cover);
		tplan_free(t[i].any);
	}
	tplan_free(active);
	tplan_free(xs);
	tplan_free(ev);
	tplan_free(rects);
	return ret;
}

/* ---- different pitches, pairwise --------------------------------------------- */

/* Spans idx[0..n) of several pitches, in start order: pairs of two pitches. */
static int check_mixed_pitches(const struct tplan_chain_span *spans, const u32 *idx, u32 n,
			       u32 *active, struct tplan_chain_reject *why)
{
	u32 i, j, kept, nactive = 0, steps = 0;
	u64 at;
	int ret;

	for (i = 0; i < n; i++) {
		const struct tplan_chain_span *s = &spans[idx[i]];

		kept = 0;
		for (j = 0; j < nactive; j++) {
			const struct tplan_chain_span *a = &spans[active[j]];

			if (span_end(a) <= s->start)
				continue;
			active[kept++] = active[j];
			if (a->pitch != s->pitch && a->rank != s->rank && spans_meet(a, s, &at))
				return report(s, a, why);
			if (++steps % YIELD_EVERY == 0) {
				ret = tplan_yield();
				if (ret)
					return ret;
			}
		}
		nactive = kept;
		active[nactive++] = idx[i];
	}
	return 0;
}

/* ---- the check ------------------------------------------------------------- */

/* A multi-row span's pitch and index, sorted by pitch, then start. */
struct by_pitch {
	u64 pitch;
	u32 span;
	u32 __pad;
};

static int by_pitch_cmp(const void *pa, const void *pb)
{
	const struct by_pitch *a = pa, *b = pb;

	if (a->pitch != b->pitch)
		return a->pitch < b->pitch ? -1 : 1;
	return a->span < b->span ? -1 : a->span > b->span;
}

int tplan_chain_check_overlap(struct tplan_chain_span *spans, u32 n,
			      struct tplan_chain_reject *why)
{
	u32 i, j, nrng = 0, nmulti = 0, classes = 0, *rng, *multi, *scratch = NULL;
	struct by_pitch *classes_of = NULL;
	int ret = -ENOMEM;

	for (i = 0; i < n; i++)
		if (!span_ok(&spans[i]) || spans[i].rank >= TPLAN_CHAIN_MAX_RANKS)
			return -ERANGE;
	if (n < 2)
		return 0;
	tplan_sort(spans, n, sizeof(*spans), span_cmp);

	rng = tplan_alloc_array(n, sizeof(*rng));
	multi = tplan_alloc_array(n, sizeof(*multi));
	if (!rng || !multi)
		goto out;
	for (i = 0; i < n; i++) {
		if (span_is_range(&spans[i]))
			rng[nrng++] = i;
		else
			multi[nmulti++] = i;
	}

	ret = check_ranges(spans, rng, nrng, why);
	if (ret)
		goto out;

	classes_of = tplan_alloc_array(nmulti ? nmulti : 1, sizeof(*classes_of));
	if (!classes_of) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nmulti; i++)
		classes_of[i] = (struct by_pitch) { .pitch = spans[multi[i]].pitch, .span = multi[i] };
	tplan_sort(classes_of, nmulti, sizeof(*classes_of), by_pitch_cmp);
	for (i = 0; i < nmulti; i++)
		multi[i] = classes_of[i].span;
	for (i = 0; i < nmulti; i = j) {
		for (j = i + 1; j < nmulti && classes_of[j].pitch == classes_of[i].pitch; j++)
			;
		ret = check_class(spans, multi + i, j - i, classes_of[i].pitch, rng, nrng, why);
		if (ret)
			goto out;
		classes++;
	}

	if (classes > 1) {
		/* back to start order for the pairwise sweep */
		for (i = 0, nmulti = 0; i < n; i++)
			if (!span_is_range(&spans[i]))
				multi[nmulti++] = i;
		scratch = tplan_alloc_array(nmulti, sizeof(*scratch));
		ret = scratch ? check_mixed_pitches(spans, multi, nmulti, scratch, why) : -ENOMEM;
	}
out:
	tplan_free(classes_of);
	tplan_free(scratch);
	tplan_free(multi);
	tplan_free(rng);
	return ret;
}
