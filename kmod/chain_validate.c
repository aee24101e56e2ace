// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The chain validator (ARCHITECTURE section 3, "Chain"): a chain is
 * POLL_REGMEM(ready gate >= round), 1..n copies of the sender's own bytes
 * to the same offset in the peer's heap, ATOMIC ADD64(arrival gate, 1).
 * Nothing else is queued, so a user cannot make the engine touch memory
 * outside the plan or its gates.  The rules and their numbers are in
 * uapi/tplan_chain.h.
 *
 * No allocation, no recursion, no floating point: the kernel runs this on
 * every chain of a plan at creation.
 */
#include "tplan_shim.h"
#include "tplan_sdma.h"
#include "tplan_chain.h"
#include "sdma_limits.h"
#include "chain_validate.h"

/* Where the grammar POLL_REGMEM COPY+ ATOMIC stands. */
enum chain_state {
	EXPECT_POLL,
	EXPECT_COPY,
	IN_COPIES,
	AFTER_ATOMIC,
};

/* The packet being checked, and where a rejection goes. */
struct walk {
	const struct tplan_chain_env *env;
	struct tplan_chain_reject *why;
	u32 chain;
	u32 packet;
};

static int fail(const struct walk *w, u32 rule, u64 value)
{
	memset(w->why, 0, sizeof(*w->why));
	w->why->rule = rule;
	w->why->chain = w->chain;
	w->why->packet = w->packet;
	w->why->rank = w->env->rank;
	w->why->value = value;
	return -EINVAL;
}

/* "dword" values of uapi/tplan_chain.h: index in the packet, then the dword. */
static u64 dword_value(const u32 *pkt, u32 i)
{
	return ((u64)i << 32) | pkt[i];
}

/* [addr, addr + len) inside [start, start + size), without overflow. */
static bool range_holds(u64 addr, u64 len, u64 start, u64 size)
{
	return addr >= start && addr - start <= size && len <= size - (addr - start);
}

/*
 * Where a 2D sub-window's bytes are, relative to its base address: the
 * first byte, and the bytes from there to one past the last row's end.
 */
struct window_geom {
	u64 first;
	u64 extent;
	u64 width;
	u64 pitch;
	u32 rows;
};

static void window_geom(const struct tplan_sdma_copy_sub_window *c, struct window_geom *g)
{
	u32 e = c->elem_size_log2;

	g->first = ((u64)c->src.y * c->src.pitch + c->src.x) << e;
	g->width = (u64)c->rect_x << e;
	g->pitch = (u64)c->src.pitch << e;
	g->rows = c->rect_y;
	g->extent = (u64)(c->rect_y - 1) * g->pitch + g->width;
}

/* Source inside the sender's part, destination at the same heap offset. */
static int check_route(const struct walk *w, u64 src, u64 dst, u64 first, u64 extent)
{
	const struct tplan_chain_env *env = w->env;

	if (src + first < src ||
	    !range_holds(src + first, extent, env->src_start, env->src_bytes))
		return fail(w, TPLAN_CHAIN_R_COPY_SRC, src);
	if (dst != src - env->own_heap + env->peer_heap)
		return fail(w, TPLAN_CHAIN_R_COPY_DST, dst);
	if (dst + first < dst ||
	    !range_holds(dst + first, extent, env->dst_start, env->dst_bytes))
		return fail(w, TPLAN_CHAIN_R_COPY_DST_RANGE, dst);
	return 0;
}

static int check_poll(const struct walk *w, const u32 *pkt, u32 n)
{
	struct tplan_sdma_poll_regmem p;
	u32 func = (pkt[0] >> TPLAN_SDMA_POLL_HDR_FUNC_SHIFT) & TPLAN_SDMA_POLL_HDR_FUNC_MASK;

	if (!(pkt[0] & TPLAN_SDMA_POLL_HDR_MEM_POLL) || (pkt[0] & TPLAN_SDMA_POLL_HDR_HDP_FLUSH))
		return fail(w, TPLAN_CHAIN_R_POLL_MODE, pkt[0]);
	/* before decoding: the decoder refuses the undefined function 7 */
	if (func != TPLAN_CHAIN_POLL_FUNC)
		return fail(w, TPLAN_CHAIN_R_POLL_FUNC, func);
	if (tplan_sdma_decode_poll_regmem(pkt, n, &p) < 0)
		return fail(w, TPLAN_CHAIN_R_RESERVED, dword_value(pkt, 0));
	if (p.mask != TPLAN_CHAIN_POLL_MASK)
		return fail(w, TPLAN_CHAIN_R_POLL_MASK, p.mask);
	if (p.ref != 0)
		return fail(w, TPLAN_CHAIN_R_POLL_REF, p.ref);
	if (p.retry != TPLAN_CHAIN_POLL_RETRY)
		return fail(w, TPLAN_CHAIN_R_POLL_RETRY, p.retry);
	if (p.addr != w->env->ready_gate)
		return fail(w, TPLAN_CHAIN_R_POLL_ADDR, p.addr);
	return 0;
}

static int check_copy_linear(const struct walk *w, const u32 *pkt, u32 n)
{
	struct tplan_sdma_copy_linear c;

	if (tplan_sdma_decode_copy_linear(pkt, n, &c) < 0)
		return fail(w, TPLAN_CHAIN_R_RESERVED, dword_value(pkt, 0));
	if (c.encrypt || c.tmz)
		return fail(w, TPLAN_CHAIN_R_COPY_FLAGS, dword_value(pkt, 0));
	if (c.src_swap || c.dst_swap)
		return fail(w, TPLAN_CHAIN_R_COPY_FLAGS, dword_value(pkt, 2));
	if (c.bytes > w->env->limits->max_copy_bytes)
		return fail(w, TPLAN_CHAIN_R_COPY_COUNT, c.bytes);
	return check_route(w, c.src, c.dst, 0, c.bytes);
}

static int check_sub_window(const struct walk *w, const u32 *pkt, u32 n)
{
	const struct tplan_sdma_limits *lim = w->env->limits;
	struct tplan_sdma_copy_sub_window c;
	struct window_geom g;
	u32 esize = (pkt[0] >> TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT) & TPLAN_SDMA_SUB_WINDOW_ESIZE_MASK;

	/* before decoding: the decoder refuses codes above 4 */
	if (esize > lim->max_elem_size_log2)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_ELEMENT, esize);
	if (tplan_sdma_decode_copy_sub_window(pkt, n, &c) < 0)
		return fail(w, TPLAN_CHAIN_R_RESERVED, dword_value(pkt, 0));
	if (c.tmz)
		return fail(w, TPLAN_CHAIN_R_COPY_FLAGS, dword_value(pkt, 0));
	if (c.src_swap || c.dst_swap)
		return fail(w, TPLAN_CHAIN_R_COPY_FLAGS, dword_value(pkt, 12));

	/* A region is a byte range or a 2D sub-window (the spec's model). */
	if (c.rect_z != 1)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_DEPTH, c.rect_z);
	if (c.src.z || c.dst.z)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_DEPTH, c.src.z ? c.src.z : c.dst.z);
	if (c.src.slice_pitch != 1 || c.dst.slice_pitch != 1)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_DEPTH,
			    c.src.slice_pitch != 1 ? c.src.slice_pitch : c.dst.slice_pitch);

	/* Rows stay inside the pitch; the last element's x, y fit their fields. */
	if (c.src.x + c.rect_x > c.src.pitch)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_EXTENT, c.src.x + c.rect_x);
	if (c.src.x + c.rect_x > (1U << lim->window_x_bits))
		return fail(w, TPLAN_CHAIN_R_SUBWIN_EXTENT, c.src.x + c.rect_x);
	if (c.src.y + c.rect_y > (1U << lim->window_y_bits))
		return fail(w, TPLAN_CHAIN_R_SUBWIN_EXTENT, c.src.y + c.rect_y);

	window_geom(&c, &g);
	if (c.src.addr & (lim->window_align - 1))
		return fail(w, TPLAN_CHAIN_R_SUBWIN_ALIGN, c.src.addr);
	if (c.dst.addr & (lim->window_align - 1))
		return fail(w, TPLAN_CHAIN_R_SUBWIN_ALIGN, c.dst.addr);
	if (g.pitch & (lim->window_align - 1))
		return fail(w, TPLAN_CHAIN_R_SUBWIN_ALIGN, g.pitch);

	/* Same offset on the peer: same window over the same rows. */
	if (c.dst.x != c.src.x)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_SHAPE, c.dst.x);
	if (c.dst.y != c.src.y)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_SHAPE, c.dst.y);
	if (c.dst.pitch != c.src.pitch)
		return fail(w, TPLAN_CHAIN_R_SUBWIN_SHAPE, c.dst.pitch);

	return check_route(w, c.src.addr, c.dst.addr, g.first, g.extent);
}

static int check_atomic(const struct walk *w, const u32 *pkt, u32 n)
{
	struct tplan_sdma_atomic a;

	if (tplan_sdma_decode_atomic(pkt, n, &a) < 0)
		return fail(w, TPLAN_CHAIN_R_RESERVED, dword_value(pkt, 0));
	if (a.atomic_op != TPLAN_SDMA_ATOMIC_ADD64)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_OP, a.atomic_op);
	if (a.src_data != 1)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_VALUE, a.src_data);
	if (a.loop || a.tmz)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_UNUSED, dword_value(pkt, 0));
	if (a.cmp_data)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_UNUSED, dword_value(pkt, a.cmp_data >> 32 ? 6 : 5));
	if (a.loop_interval)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_UNUSED, dword_value(pkt, 7));
	if (a.addr != w->env->arrival_gate)
		return fail(w, TPLAN_CHAIN_R_ATOMIC_ADDR, a.addr);
	return 0;
}

/* Where in the grammar a packet of this kind may stand; 0 or a rule. */
static u32 grammar_rule(int kind, enum chain_state state)
{
	switch (kind) {
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		return state == EXPECT_POLL ? 0 : TPLAN_CHAIN_R_POLL_AGAIN;
	case TPLAN_SDMA_KIND_ATOMIC:
		if (state == EXPECT_POLL)
			return TPLAN_CHAIN_R_FIRST;
		return state == EXPECT_COPY ? TPLAN_CHAIN_R_NO_COPY : 0;
	default:	/* a copy */
		return state == EXPECT_POLL ? TPLAN_CHAIN_R_FIRST : 0;
	}
}

int tplan_chain_validate_full(const u32 *dw, u32 ndw, u32 chain_index,
			      const struct tplan_chain_env *env,
			      struct tplan_chain_reject *why)
{
	struct walk w = { .env = env, .why = why, .chain = chain_index };
	enum chain_state state = EXPECT_POLL;
	u32 limit = env->max_dwords;
	u32 off, i, n, rule;
	const u32 *pkt;
	int kind, len, ret;

	if (limit == 0 || limit > TPLAN_CHAIN_MAX_DWORDS)
		limit = TPLAN_CHAIN_MAX_DWORDS;
	if (ndw == 0 || ndw > limit)
		return fail(&w, TPLAN_CHAIN_R_SIZE, ndw);

	for (off = 0; off < ndw; off += n, w.packet++) {
		pkt = dw + off;
		if (state == AFTER_ATOMIC)
			return fail(&w, TPLAN_CHAIN_R_TRAILING, pkt[0]);
		kind = tplan_sdma_kind(pkt[0]);
		if (kind != TPLAN_SDMA_KIND_POLL_REGMEM && kind != TPLAN_SDMA_KIND_COPY_LINEAR &&
		    kind != TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW && kind != TPLAN_SDMA_KIND_ATOMIC)
			return fail(&w, TPLAN_CHAIN_R_OPCODE, pkt[0]);
		len = tplan_sdma_packet_dwords(pkt, ndw - off);
		if (len <= 0)
			return fail(&w, TPLAN_CHAIN_R_TRUNCATED, pkt[0]);
		n = (u32)len;
		rule = grammar_rule(kind, state);
		if (rule)
			return fail(&w, rule, pkt[0]);
		for (i = 0; i < n; i++)
			if (pkt[i] & ~tplan_sdma_kind_defined_bits(kind, pkt[0], i))
				return fail(&w, TPLAN_CHAIN_R_RESERVED, dword_value(pkt, i));

		switch (kind) {
		case TPLAN_SDMA_KIND_POLL_REGMEM:
			ret = check_poll(&w, pkt, n);
			state = EXPECT_COPY;
			break;
		case TPLAN_SDMA_KIND_COPY_LINEAR:
			ret = check_copy_linear(&w, pkt, n);
			state = IN_COPIES;
			break;
		case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
			ret = check_sub_window(&w, pkt, n);
			state = IN_COPIES;
			break;
		default:
			ret = check_atomic(&w, pkt, n);
			state = AFTER_ATOMIC;
			break;
		}
		if (ret)
			return ret;
	}
	if (state != AFTER_ATOMIC)
		return fail(&w, TPLAN_CHAIN_R_NO_ATOMIC, ndw);
	return 0;
}

/* ---- the fast accept path ---------------------------------------------- */

/*
 * The chains plans build have one shape (libtplan/chain_build.c): a POLL
 * and an ATOMIC whose every dword is known in advance, and between them
 * COPY_LINEAR and COPY_LINEAR_SUB_WINDOW packets with exact headers
 * (sub-windows with y 0, the row folded into the base address, usually
 * many of one window shape).  For those, acceptance needs no decode and
 * no branch per rule: each packet adds a few terms into two words that
 * are looked at once per run of packets.  The fast path only ever answers
 * "accept"; for anything it is not sure of, valid or not,
 * tplan_chain_validate() runs the full walk above, which names the rule.
 * So it must accept nothing the walk refuses: each term below says which
 * of the walk's checks it stands for, and implies it.  The differential
 * test (tests/host/chain_fast_test.c) holds the two to that.
 *
 * The two words:
 *  - same: terms that are 0 exactly when a field holds what it must (an
 *    exact value, equal fields, clear reserved bits);
 *  - low: terms that are below 2^62 when a check holds.  "a <= b" is the
 *    term b - a, where b is below 2^62: when a > b and a is below 2^63
 *    the difference wraps to above 2^63 (a above 2^63 is caught by the
 *    term that bounds a from below, a - lo, with lo below 2^62).
 * A run is accepted when same == 0 and low < 2^62.
 *
 * Routes.  A copy reads [a, a + extent) with a = src + first and writes
 * dst + first on.  The walk wants a and dst + first not to wrap, [a, a +
 * extent) inside the sender's part, dst = src - own_heap + peer_heap (mod
 * 2^64), and the bytes at dst + first inside the peer's plan buffer.
 * fast_bounds() computes [lo, hi): the sender's part intersected with the
 * peer's buffer moved by -D, D = peer_heap - own_heap (a signed number:
 * every bound and heap is below 2^62).  Then "lo <= a and a + extent <=
 * hi" (two low terms) and "dst - src == D mod 2^64" (a same term) give
 * every route check: a + D is inside the peer's buffer as an integer, so
 * dst + first = a + D exactly.  Nothing wraps below 0 either: first is
 * below 2^18 and both part and buffer start at 2^20 or above (else the
 * fast path is not sure).
 */
#define FAST_LOW_LIMIT	(1ULL << 62)
/* (2^14 - 1) << 4 is the largest first byte of a window, y 0 */
#define FAST_MIN_START	(1ULL << 20)

/* What a chain's checks compare with, computed once per chain. */
struct fast_env {
	u64 lo, hi;		/* a copy may read [lo, hi) (see above) */
	u64 delta;		/* peer_heap - own_heap, wrapping */
	u64 max_count;		/* COPY_LINEAR: bytes per packet - 1, at most */
	u64 align_mask;		/* sub-window: base and pitch alignment */
	u64 x_limit;		/* sub-window: x + rect_x at most */
	u64 max_esize;		/* sub-window: element size code, at most */
};

/* The headers, whole: no flag, no reserved bit. */
#define FAST_POLL_HDR	(TPLAN_SDMA_OP_POLL_REGMEM |					\
			 (TPLAN_CHAIN_POLL_FUNC << TPLAN_SDMA_POLL_HDR_FUNC_SHIFT) |	\
			 TPLAN_SDMA_POLL_HDR_MEM_POLL)
#define FAST_LINEAR_HDR	(TPLAN_SDMA_OP_COPY |						\
			 (TPLAN_SDMA_SUB_COPY_LINEAR << TPLAN_SDMA_HDR_SUB_OP_SHIFT))
#define FAST_WINDOW_HDR	(TPLAN_SDMA_OP_COPY |						\
			 (TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW << TPLAN_SDMA_HDR_SUB_OP_SHIFT))
#define FAST_ATOMIC_HDR	(TPLAN_SDMA_OP_ATOMIC |						\
			 (TPLAN_SDMA_ATOMIC_ADD64 << TPLAN_SDMA_ATOMIC_HDR_OP_SHIFT))
/* A sub-window header less its element size code (bits 31:29). */
#define FAST_WINDOW_HDR_MASK	\
	(~(TPLAN_SDMA_SUB_WINDOW_ESIZE_MASK << TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT))
/* POLL dw5: retry forever, the reserved bits 31:28 clear; the interval is free. */
#define FAST_POLL_RETRY_MASK	(~TPLAN_SDMA_POLL_INTERVAL_MASK)
#define FAST_POLL_RETRY		(TPLAN_CHAIN_POLL_RETRY << TPLAN_SDMA_POLL_RETRY_SHIFT)
/* Dword 11 (rects): bits 15:14 and 31:30 are reserved. */
#define FAST_RECT_RESERVED	(~0x3fff3fffU)
/* Dwords 4, 9: z (10:0) must be 0, bits 12:11 are reserved. */
#define FAST_Z_AND_RESERVED	0x1fffU

static inline u64 fast_addr(const u32 *p)
{
	return tplan_sdma_addr(p[0], p[1]);
}

/*
 * A run of COPY_LINEAR packets from dw[*off], each whole before end:
 * moves *off past them; false unless every one is accepted.  The header
 * FAST_LINEAR_HDR is the kind with no encrypt, tmz or reserved bit
 * (COPY_FLAGS, RESERVED).  Plans split a region into copies that follow
 * each other, so the routes are checked per stretch of contiguous copies:
 * the first one's dst (COPY_DST), the stretch's ends against [lo, hi)
 * (COPY_SRC, COPY_DST_RANGE); within it each copy's src and dst are where
 * the one before ended, so every copy is inside the stretch and moved by
 * D.  A stretch has fewer than 2^16 copies (TPLAN_CHAIN_MAX_DWORDS / 7)
 * of at most 2^30 bytes each: its end, from a start below 2^63, does not
 * wrap, and one above hi makes hi - end 2^62 or more.
 */
static bool fast_linear_run(const struct fast_env *f, const u32 *dw, u32 *off,
				     u32 end)
{
	const u64 lo = f->lo, hi = f->hi, delta = f->delta, max_count = f->max_count;
	const u32 *p = dw + *off, *last = dw + end - TPLAN_SDMA_COPY_LINEAR_DW;
	u64 same = 0, low = 0;

	while (p <= last && p[0] == FAST_LINEAR_HDR) {
		u64 src = fast_addr(p + 3), next = src, dnext = src + delta;

		low |= src - lo;				/* the stretch's start */
		do {
			u64 count = p[1];
			u64 s = p[2] |				/* swaps (COPY_FLAGS), reserved */
				(fast_addr(p + 5) ^ dnext);	/* COPY_DST */

			low |= max_count - count;		/* COPY_COUNT, reserved bits */
			same |= s;
			next += count + 1;
			dnext += count + 1;
			p += TPLAN_SDMA_COPY_LINEAR_DW;
		} while (p <= last && p[0] == FAST_LINEAR_HDR && fast_addr(p + 3) == next);
		low |= hi - next;				/* the stretch's end */
	}
	*off = (u32)(p - dw);
	return !same && low < FAST_LOW_LIMIT;
}

/*
 * A window's shape: dwords 0 (element size), 4 (z, pitch) and 11 (rects),
 * and what follows from them alone.  false when a check fails on the shape
 * itself, or the fast path is not sure of it.
 */
struct fast_shape {
	u32 hdr, zp, rect;	/* dwords 0, 4 and 11 */
	u32 e;			/* element size code */
	u64 x_max;		/* SUBWIN_EXTENT: x + rect_x within the pitch and the x field */
	u64 hi_a;		/* a copy's first byte at most (hi - extent) */
};

static bool fast_window_shape(const struct fast_env *f, const u32 *p, struct fast_shape *sh)
{
	u64 pitch = ((p[4] >> TPLAN_SDMA_SUB_WINDOW_PITCH_SHIFT) &
		     TPLAN_SDMA_SUB_WINDOW_PITCH_MASK) + 1;
	u64 rect_x = (p[11] & TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK) + 1;
	u64 rect_y = ((p[11] >> TPLAN_SDMA_SUB_WINDOW_RECT_Y_SHIFT) &
		      TPLAN_SDMA_SUB_WINDOW_RECT_Y_MASK) + 1;
	u32 e = p[0] >> TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT;
	u64 row_limit = pitch < f->x_limit ? pitch : f->x_limit;
	u64 extent;

	if (e > f->max_esize ||				/* SUBWIN_ELEMENT, decodable */
	    (p[4] & FAST_Z_AND_RESERVED) ||		/* src z (SUBWIN_DEPTH), reserved */
	    (p[11] & FAST_RECT_RESERVED) ||		/* reserved bits */
	    ((pitch << e) & f->align_mask) ||		/* SUBWIN_ALIGN */
	    rect_x > row_limit)				/* SUBWIN_EXTENT */
		return false;
	/* window_geom()'s, y 0: below 2^38 */
	extent = (rect_y - 1) * (pitch << e) + (rect_x << e);
	if (extent > f->hi - f->lo)
		return false;				/* COPY_SRC for any copy */
	sh->hdr = p[0];
	sh->zp = p[4];
	sh->rect = p[11];
	sh->e = e;
	sh->x_max = row_limit - rect_x;
	sh->hi_a = f->hi - extent;
	return true;
}

/*
 * A run of COPY_LINEAR_SUB_WINDOW packets of one shape from dw[*off]
 * (the shape of the first), each whole before end: moves *off past them;
 * false unless every one is accepted.  The header, less the element size
 * code, is FAST_WINDOW_HDR: the kind with no tmz or reserved bit
 * (COPY_FLAGS, RESERVED).  y is 0 and rect_y at most 2^14, which the
 * setup compares with the engine's y field.
 */
static bool fast_window_run(const struct fast_env *f, const u32 *dw, u32 *off,
				     u32 end)
{
	const u64 lo = f->lo, delta = f->delta, align_mask = f->align_mask;
	const u32 *p = dw + *off, *last = dw + end - TPLAN_SDMA_SUB_WINDOW_DW;
	struct fast_shape sh;
	u64 same = 0, low = 0, x_max, hi_a, zp, rect, esize;

	if (p > last || (p[0] & FAST_WINDOW_HDR_MASK) != FAST_WINDOW_HDR)
		return true;
	if (!fast_window_shape(f, p, &sh))
		return false;
	x_max = sh.x_max;
	hi_a = sh.hi_a;
	esize = 1ULL << sh.e;	/* a multiply, not a shift by a register */
	zp = sh.zp;
	rect = sh.rect;
	/* dwords 4-5 and 11-12 as one word each: the shape, and 5 and 12 zero */
	for (; p <= last && p[0] == sh.hdr && fast_addr(p + 4) == zp && fast_addr(p + 11) == rect;
	     p += TPLAN_SDMA_SUB_WINDOW_DW) {
		u64 src = fast_addr(p + 1), dst = fast_addr(p + 6), x = p[3];
		u64 a = src + x * esize;
		/*
		 * Dword 5 0: src slice pitch 1 (SUBWIN_DEPTH); 12 0: rect_z 1,
		 * no swap, no reserved bit.  x <= x_max (below 2^14) also says
		 * that y and the reserved bits of dword 3 are 0.
		 */
		/* dwords 9-10: dst z, pitch (SUBWIN_SHAPE), dst slice pitch 1 */
		u64 s = (fast_addr(p + 9) ^ zp) |
			(p[8] ^ x) |			/* dst x, y (SUBWIN_SHAPE) */
			(src & align_mask) |		/* SUBWIN_ALIGN (dst: delta is aligned) */
			(dst - src - delta);		/* COPY_DST */
		u64 l = (x_max - x) |			/* SUBWIN_EXTENT */
			(a - lo) |			/* COPY_SRC, COPY_DST_RANGE: */
			(hi_a - a);			/* a + extent <= hi */

		same |= s;
		low |= l;
	}
	*off = (u32)(p - dw);
	return !same && low < FAST_LOW_LIMIT;
}

/*
 * [lo, hi): the source addresses whose bytes are inside the sender's part
 * and, moved by peer_heap - own_heap, inside the peer's plan buffer.
 * false where a bound is not below 2^62 or the part or the buffer starts
 * below 2^20 (the fast path is not sure then), or nothing is inside both.
 */
static bool fast_bounds(const struct tplan_chain_env *env, u64 *lo, u64 *hi)
{
	s64 d, dlo, dhi;

	if (env->src_start >= FAST_LOW_LIMIT || env->src_bytes >= FAST_LOW_LIMIT ||
	    env->src_start + env->src_bytes >= FAST_LOW_LIMIT ||
	    env->dst_start >= FAST_LOW_LIMIT || env->dst_bytes >= FAST_LOW_LIMIT ||
	    env->dst_start + env->dst_bytes >= FAST_LOW_LIMIT ||
	    env->own_heap >= FAST_LOW_LIMIT || env->peer_heap >= FAST_LOW_LIMIT ||
	    env->src_start < FAST_MIN_START || env->dst_start < FAST_MIN_START)
		return false;
	/* each below 2^63 in magnitude: no overflow */
	d = (s64)env->peer_heap - (s64)env->own_heap;
	dlo = (s64)env->dst_start - d;
	dhi = (s64)(env->dst_start + env->dst_bytes) - d;
	*lo = dlo > (s64)env->src_start ? (u64)dlo : env->src_start;
	*hi = dhi < (s64)(env->src_start + env->src_bytes) ? (u64)dhi :
							      env->src_start + env->src_bytes;
	/* dhi <= 0 leaves nothing; so does hi <= lo */
	return dhi > 0 && *hi > *lo;
}

bool tplan_chain_fast_accept(const u32 *dw, u32 ndw, const struct tplan_chain_env *env)
{
	const struct tplan_sdma_limits *lim = env->limits;
	u32 limit = env->max_dwords, off, end;
	struct fast_env f;
	const u32 *a;

	if (limit == 0 || limit > TPLAN_CHAIN_MAX_DWORDS)
		limit = TPLAN_CHAIN_MAX_DWORDS;
	/* POLL, at least one copy, ATOMIC; SIZE */
	if (ndw < TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW ||
	    ndw > limit)
		return false;

	/* Packet 0: the POLL, every dword (POLL_MODE, _FUNC, _MASK, _REF, _RETRY, _ADDR) */
	if (dw[0] != FAST_POLL_HDR || dw[1] != tplan_sdma_lo(env->ready_gate) || (dw[1] & 3) ||
	    dw[2] != tplan_sdma_hi(env->ready_gate) || dw[3] != 0 ||
	    dw[4] != TPLAN_CHAIN_POLL_MASK || (dw[5] & FAST_POLL_RETRY_MASK) != FAST_POLL_RETRY)
		return false;
	/* The last packet: the ATOMIC, every dword (ATOMIC_OP, _VALUE, _UNUSED, _ADDR) */
	end = ndw - TPLAN_SDMA_ATOMIC_DW;
	a = dw + end;
	if (a[0] != FAST_ATOMIC_HDR || a[1] != tplan_sdma_lo(env->arrival_gate) ||
	    a[2] != tplan_sdma_hi(env->arrival_gate) || a[3] != 1 || a[4] != 0 || a[5] != 0 ||
	    a[6] != 0 || a[7] != 0)
		return false;

	/*
	 * sub-windows: rect_y (at most 2^14) and y 0 fit the engine's y
	 * field; x + rect_x is compared with 2^x_bits as check_sub_window()
	 * does.
	 */
	if (!fast_bounds(env, &f.lo, &f.hi) ||
	    lim->window_y_bits < 14 || lim->window_y_bits > 31 ||
	    lim->window_x_bits < 1 || lim->window_x_bits > 31 ||
	    lim->max_copy_bytes == 0)
		return false;
	f.delta = env->peer_heap - env->own_heap;
	f.max_count = (lim->max_copy_bytes < TPLAN_SDMA_COPY_MAX_BYTES ?
		       lim->max_copy_bytes : TPLAN_SDMA_COPY_MAX_BYTES) - 1;
	/*
	 * As check_sub_window() computes them, but x + rect_x at most 2^14
	 * (the x field's width), so that x_max is below 2^14.
	 */
	f.align_mask = (u32)(lim->window_align - 1);
	f.x_limit = 1U << (lim->window_x_bits < 14 ? lim->window_x_bits : 14);
	f.max_esize = lim->max_elem_size_log2 < TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX ?
		      lim->max_elem_size_log2 : TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX;

	/*
	 * Packets 1..n: copies, each whole before the ATOMIC, so that the
	 * walk's packet boundaries are these (no TRUNCATED, no TRAILING).
	 * A window's dst is aligned when its src is only if delta is.
	 */
	for (off = TPLAN_SDMA_POLL_DW; off < end;) {
		u32 at = off;

		if (!fast_linear_run(&f, dw, &off, end))
			return false;
		if (!(f.delta & f.align_mask) && !fast_window_run(&f, dw, &off, end))
			return false;
		if (off == at)
			return false;	/* another packet, or one running into the ATOMIC */
	}
	return true;
}

int tplan_chain_validate(const u32 *dw, u32 ndw, u32 chain_index,
			 const struct tplan_chain_env *env,
			 struct tplan_chain_reject *why)
{
	if (tplan_chain_fast_accept(dw, ndw, env))
		return 0;
	return tplan_chain_validate_full(dw, ndw, chain_index, env, why);
}

int tplan_chain_spans(const u32 *dw, u32 ndw, u64 heap_base, u32 rank,
		      u32 chain_index, struct tplan_chain_span *out, u32 room)
{
	struct tplan_sdma_packet p;
	struct tplan_chain_span s;
	struct window_geom g;
	u32 off, packet, copies = 0;
	int n;

	for (off = 0, packet = 0; off < ndw; off += (u32)n, packet++) {
		n = tplan_sdma_decode(dw + off, ndw - off, &p);
		if (n < 0)
			return -EINVAL;
		s.rank = rank;
		s.chain = chain_index;
		s.packet = packet;
		if (p.kind == TPLAN_SDMA_KIND_COPY_LINEAR) {
			s.start = p.u.copy_linear.src - heap_base;
			s.width = p.u.copy_linear.bytes;
			s.pitch = s.width;
			s.rows = 1;
		} else if (p.kind == TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW) {
			window_geom(&p.u.sub_window, &g);
			s.start = p.u.sub_window.src.addr + g.first - heap_base;
			s.width = g.width;
			s.pitch = g.pitch;
			s.rows = g.rows;
		} else {
			continue;
		}
		if (copies < room)
			out[copies] = s;
		copies++;
	}
	return (int)copies;
}
