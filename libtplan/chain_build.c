// SPDX-License-Identifier: MIT
/*
 * Chain building (ARCHITECTURE section 3, "Chain"): one chunk, one peer.
 * Byte ranges become COPY_LINEAR packets split at the engine's per-packet
 * maximum; 2D regions become COPY_LINEAR_SUB_WINDOW packets where the
 * engine's sub-window rules allow, else one linear copy per row (more
 * packets, the same bytes).  The limits used are the SDMA 4.x fields that
 * kmod/sdma_limits.c also gives the validator.
 */
#include <errno.h>
#include <string.h>

#include "tplan_sdma.h"
#include "tplan_chain.h"
#include "chain_build.h"

/* Sub-window base addresses and pitches in bytes: multiples of this. */
#define WINDOW_ALIGN		4U
/* x + rect_x and y + rect_y stay within the 14-bit coordinate fields. */
#define WINDOW_COORD_LIMIT	(TPLAN_SDMA_SUB_WINDOW_X_MASK + 1U)
#define WINDOW_ROWS_MAX		(TPLAN_SDMA_SUB_WINDOW_RECT_Y_MASK + 1U)
#define WINDOW_RECT_X_MAX	(TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK + 1U)
#define WINDOW_PITCH_MAX	(TPLAN_SDMA_SUB_WINDOW_PITCH_MASK + 1U)

/* The copy engine polls in its own time; the value only paces the soft engine. */
#define POLL_INTERVAL		10

/* Writes packets, or only counts them when dw is NULL. */
struct emit {
	uint32_t *dw;
	uint32_t room;
	uint64_t ndw;
	uint32_t packets;
	int err;
};

static void emit_packet(struct emit *e, const uint32_t *pkt, int n)
{
	if (e->err)
		return;
	if (n < 0) {
		e->err = n;
		return;
	}
	if (e->dw) {
		if ((uint64_t)n > e->room - e->ndw) {
			e->err = -ENOSPC;
			return;
		}
		memcpy(e->dw + e->ndw, pkt, (size_t)n * sizeof(*pkt));
	}
	e->ndw += (uint32_t)n;
	e->packets++;
	if (e->ndw > INT32_MAX)
		e->err = -E2BIG;
}

static uint64_t peer_addr(const struct tplan_chain_target *t, uint64_t src)
{
	return src - t->own_heap + t->peer_heap;
}

static void emit_linear(struct emit *e, const struct tplan_chain_target *t, uint64_t src,
			uint64_t bytes)
{
	uint32_t pkt[TPLAN_SDMA_COPY_LINEAR_DW];
	uint64_t piece;

	for (; bytes && !e->err; src += piece, bytes -= piece) {
		struct tplan_sdma_copy_linear c = { .src = src, .dst = peer_addr(t, src) };

		piece = bytes < t->max_copy_bytes ? bytes : t->max_copy_bytes;
		c.bytes = (uint32_t)piece;
		emit_packet(e, pkt, tplan_sdma_encode_copy_linear(pkt, TPLAN_SDMA_COPY_LINEAR_DW, &c));
	}
}

static int region_is_linear(const struct tplan_region *r)
{
	return r->rows == 1 || r->pitch == r->width;
}

int tplan_chain_window_elem_log2(const struct tplan_chain_target *t,
				 const struct tplan_region *r)
{
	uint64_t src = t->own_heap + r->offset, dst = peer_addr(t, src);
	uint64_t esize, align, mis, x, rect_x, pitch;
	int e;

	if (region_is_linear(r))
		return -EINVAL;
	if (r->pitch % WINDOW_ALIGN)
		return -ERANGE;
	/* the largest element that divides everything and fits the fields */
	for (e = TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX; e >= 0; e--) {
		esize = 1ULL << e;
		if (r->width % esize || r->pitch % esize || src % esize)
			continue;
		/* base rounded down to WINDOW_ALIGN (and the element); x makes up the rest */
		align = esize > WINDOW_ALIGN ? esize : WINDOW_ALIGN;
		mis = src % align;
		if (dst % align != mis)
			continue;
		x = mis / esize;
		rect_x = r->width / esize;
		pitch = r->pitch / esize;
		if (rect_x > WINDOW_RECT_X_MAX || x + rect_x > WINDOW_COORD_LIMIT ||
		    x + rect_x > pitch || pitch > WINDOW_PITCH_MAX)
			continue;
		return e;
	}
	return -ERANGE;
}

static void emit_window(struct emit *e, const struct tplan_chain_target *t,
			const struct tplan_region *r, int elog2)
{
	uint32_t pkt[TPLAN_SDMA_SUB_WINDOW_DW];
	uint64_t esize = 1ULL << elog2;
	uint64_t align = esize > WINDOW_ALIGN ? esize : WINDOW_ALIGN;
	uint64_t src = t->own_heap + r->offset, base = src - src % align;
	uint32_t y0, rows;

	/* y + rect_y fits 14 bits: taller regions take one packet per block */
	for (y0 = 0; y0 < r->rows && !e->err; y0 += rows) {
		struct tplan_sdma_copy_sub_window c;
		uint64_t at = base + (uint64_t)y0 * r->pitch;

		rows = r->rows - y0 < WINDOW_ROWS_MAX ? r->rows - y0 : WINDOW_ROWS_MAX;
		memset(&c, 0, sizeof(c));
		c.src.addr = at;
		c.src.x = (uint32_t)((src % align) / esize);
		c.src.pitch = (uint32_t)(r->pitch / esize);
		c.src.slice_pitch = 1;
		c.dst = c.src;
		c.dst.addr = peer_addr(t, at);
		c.rect_x = (uint32_t)(r->width / esize);
		c.rect_y = rows;
		c.rect_z = 1;
		c.elem_size_log2 = (uint32_t)elog2;
		emit_packet(e, pkt, tplan_sdma_encode_copy_sub_window(pkt, TPLAN_SDMA_SUB_WINDOW_DW, &c));
	}
}

static void emit_region(struct emit *e, const struct tplan_chain_target *t,
			const struct tplan_region *r)
{
	uint64_t src = t->own_heap + r->offset;
	uint32_t row;
	int elog2;

	if (!r->width || !r->rows || (r->rows > 1 && r->pitch < r->width)) {
		e->err = -EINVAL;
		return;
	}
	if (region_is_linear(r)) {
		emit_linear(e, t, src, r->width * r->rows);
		return;
	}
	elog2 = tplan_chain_window_elem_log2(t, r);
	if (elog2 >= 0) {
		emit_window(e, t, r, elog2);
		return;
	}
	for (row = 0; row < r->rows && !e->err; row++)
		emit_linear(e, t, src + (uint64_t)row * r->pitch, r->width);
}

static int target_ok(const struct tplan_chain_target *t)
{
	return t->max_copy_bytes && t->max_copy_bytes <= TPLAN_SDMA_COPY_MAX_BYTES;
}

int tplan_chain_build(uint32_t *dw, uint32_t room, const struct tplan_chain_target *t,
		      const struct tplan_region *regions, uint32_t nregions)
{
	struct emit e = { .dw = dw, .room = room };
	struct tplan_sdma_poll_regmem poll = {
		.addr = t->ready_gate,
		.ref = 0,		/* the kernel writes the round */
		.mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC,
		.mem_poll = 1,
		.interval = POLL_INTERVAL,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_atomic atomic = {
		.addr = t->arrival_gate,
		.src_data = 1,
		.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	uint32_t pkt[TPLAN_SDMA_SUB_WINDOW_DW];
	uint32_t i;

	if (!nregions || !regions || !target_ok(t))
		return -EINVAL;
	emit_packet(&e, pkt, tplan_sdma_encode_poll_regmem(pkt, TPLAN_SDMA_POLL_DW, &poll));
	for (i = 0; i < nregions && !e.err; i++)
		emit_region(&e, t, &regions[i]);
	emit_packet(&e, pkt, tplan_sdma_encode_atomic(pkt, TPLAN_SDMA_ATOMIC_DW, &atomic));
	return e.err ? e.err : (int)e.ndw;
}

void tplan_chain_locate(const struct tplan_chain_target *t, const struct tplan_region *regions,
			uint32_t nregions, uint32_t packet, struct tplan_chain_where *where)
{
	uint32_t i, first = 1;	/* packet 0 is the POLL */

	memset(where, 0, sizeof(*where));
	if (packet == 0) {
		where->part = TPLAN_CHAIN_PART_POLL;
		return;
	}
	for (i = 0; i < nregions; i++) {
		struct emit e = { 0 };

		emit_region(&e, t, &regions[i]);
		if (e.err)
			break;
		if (packet < first + e.packets) {
			where->part = TPLAN_CHAIN_PART_COPY;
			where->region = i;
			where->piece = packet - first;
			where->pieces = e.packets;
			return;
		}
		first += e.packets;
	}
	where->part = packet == first && i == nregions ? TPLAN_CHAIN_PART_ATOMIC :
							 TPLAN_CHAIN_PART_NONE;
}
