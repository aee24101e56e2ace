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

int tplan_chain_validate(const u32 *dw, u32 ndw, u32 chain_index,
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
