/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A symmetric-heap layout and a chain builder for the validator's tests,
 * fuzzer and benchmark: chains shaped the way libtplan's schedule builders
 * shape them, built with the codec.
 *
 * Every rank's heap is FX_HEAP_BYTES at fx_heap(rank); the gate table sits
 * at FX_GATES, the plan buffer at FX_BUF, and rank r owns the buffer's
 * part [r * FX_PART, (r + 1) * FX_PART).  Addresses are never dereferenced.
 */
#ifndef TPLAN_CHAIN_FIXTURE_H
#define TPLAN_CHAIN_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "tplan_sdma.h"
#include "tplan_chain.h"
#include "chain_validate.h"

#define FX_HEAP_BYTES	(1ull << 40)
#define FX_GATES	(1ull << 20)
#define FX_BUF		(1ull << 28)
#define FX_PART		(1ull << 34)	/* 16 GiB per rank */
#define FX_WORLD	4

static inline u64 fx_heap(u32 rank)
{
	return 0x0000100000000000ull + (u64)rank * FX_HEAP_BYTES;
}

/* Start of rank's own part of the plan buffer, in its own heap. */
static inline u64 fx_part(u32 rank)
{
	return fx_heap(rank) + FX_BUF + (u64)rank * FX_PART;
}

/* The env of rank's chain for chunk to peer. */
static inline void fx_env(struct tplan_chain_env *env, const struct tplan_sdma_limits *lim,
			  u32 rank, u32 peer, u32 chunk)
{
	memset(env, 0, sizeof(*env));
	env->limits = lim;
	env->src_start = fx_part(rank);
	env->src_bytes = FX_PART;
	env->dst_start = fx_heap(peer) + FX_BUF;
	env->dst_bytes = FX_WORLD * FX_PART;
	env->own_heap = fx_heap(rank);
	env->peer_heap = fx_heap(peer);
	env->ready_gate = fx_heap(rank) + FX_GATES + (u64)chunk * TPLAN_GATE_ROW_BYTES +
			  TPLAN_GATE_READY;
	env->arrival_gate = fx_heap(peer) + FX_GATES + (u64)chunk * TPLAN_GATE_ROW_BYTES +
			    TPLAN_GATE_ARRIVAL;
	env->rank = rank;
}

struct fx_chain {
	u32 *dw;
	u32 ndw;
	u32 room;
	u32 packets;
	int err;	/* first encoder error */
};

static inline void fx_chain_init(struct fx_chain *c, u32 room)
{
	c->dw = calloc(room, sizeof(u32));
	c->ndw = 0;
	c->room = room;
	c->packets = 0;
	c->err = c->dw ? 0 : -ENOMEM;
}

static inline void fx_chain_free(struct fx_chain *c)
{
	free(c->dw);
	c->dw = NULL;
}

/* Records an encoder's result; returns the new packet's first dword. */
static inline u32 *fx_push(struct fx_chain *c, int n)
{
	u32 *at = c->dw + c->ndw;

	if (n < 0) {
		if (!c->err)
			c->err = n;
		return at;
	}
	c->ndw += (u32)n;
	c->packets++;
	return at;
}

static inline u32 *fx_poll(struct fx_chain *c, const struct tplan_chain_env *env)
{
	struct tplan_sdma_poll_regmem p = {
		.addr = env->ready_gate, .ref = 0, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 4,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};

	return fx_push(c, c->dw ? tplan_sdma_encode_poll_regmem(c->dw + c->ndw, c->room - c->ndw, &p) : -ENOMEM);
}

/* A linear copy of bytes at offset off of the sender's part. */
static inline u32 *fx_copy(struct fx_chain *c, const struct tplan_chain_env *env,
			   u64 off, u32 bytes)
{
	struct tplan_sdma_copy_linear f = {
		.src = env->src_start + off,
		.dst = env->src_start + off - env->own_heap + env->peer_heap,
		.bytes = bytes,
	};

	return fx_push(c, c->dw ? tplan_sdma_encode_copy_linear(c->dw + c->ndw, c->room - c->ndw, &f) : -ENOMEM);
}

/*
 * A 2D tile of the sender's part seen as a matrix of pitch elements per
 * row: rows [y, y + h), columns [x, x + w), elements of 1 << esz bytes.
 * Like ROCr, the row offset is folded into the base address and only x
 * stays in the packet.
 */
static inline u32 *fx_tile(struct fx_chain *c, const struct tplan_chain_env *env,
			   u32 pitch, u32 esz, u32 x, u32 y, u32 w, u32 h)
{
	struct tplan_sdma_copy_sub_window f;
	u64 base = env->src_start + ((u64)y * pitch << esz);

	memset(&f, 0, sizeof(f));
	f.src.addr = base;
	f.src.x = x;
	f.src.pitch = pitch;
	f.src.slice_pitch = 1;
	f.dst = f.src;
	f.dst.addr = base - env->own_heap + env->peer_heap;
	f.rect_x = w;
	f.rect_y = h;
	f.rect_z = 1;
	f.elem_size_log2 = esz;
	return fx_push(c, c->dw ? tplan_sdma_encode_copy_sub_window(c->dw + c->ndw, c->room - c->ndw, &f) : -ENOMEM);
}

static inline u32 *fx_atomic(struct fx_chain *c, const struct tplan_chain_env *env)
{
	struct tplan_sdma_atomic a = {
		.addr = env->arrival_gate, .src_data = 1,
		.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};

	return fx_push(c, c->dw ? tplan_sdma_encode_atomic(c->dw + c->ndw, c->room - c->ndw, &a) : -ENOMEM);
}

/*
 * A chunk of the given size at offset off of the sender's part, split into
 * copies of at most the engine's maximum, as the schedule builders do.
 */
static inline void fx_linear_chain(struct fx_chain *c, const struct tplan_chain_env *env,
				   u64 off, u64 bytes)
{
	u64 step;

	fx_poll(c, env);
	while (bytes) {
		step = bytes < env->limits->max_copy_bytes ? bytes : env->limits->max_copy_bytes;
		fx_copy(c, env, off, (u32)step);
		off += step;
		bytes -= step;
	}
	fx_atomic(c, env);
}

#endif /* TPLAN_CHAIN_FIXTURE_H */
