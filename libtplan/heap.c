// SPDX-License-Identifier: MIT
/*
 * The symmetric heap as a rank sees it: every rank's mapping and device
 * address, and the deterministic allocator that gives every rank the same
 * offsets.
 */
#include <errno.h>

#include "libtplan.h"
#include "libtplan_priv.h"

/* Default alignment: a cache line, so that no two allocations share one. */
#define TPLAN_HEAP_ALIGN_DEFAULT 64

void *tplan_heap_ptr(const struct tplan_ctx *ctx, unsigned int rank)
{
	if (!ctx->joined || rank >= ctx->world_size)
		return NULL;
	return ctx->heaps[rank].ptr;
}

uint64_t tplan_heap_devaddr(const struct tplan_ctx *ctx, unsigned int rank)
{
	if (!ctx->joined || rank >= ctx->world_size)
		return 0;
	return ctx->heaps[rank].devaddr;
}

size_t tplan_heap_size(const struct tplan_ctx *ctx)
{
	return ctx->joined ? (size_t)ctx->heap_size : 0;
}

int tplan_heap_alloc(struct tplan_ctx *ctx, size_t bytes, size_t align, uint64_t *offset)
{
	uint64_t start;

	if (!ctx->joined)
		return tplan_set_error(ctx, -ENOTCONN, "tplan_heap_alloc: not joined");
	if (!align)
		align = TPLAN_HEAP_ALIGN_DEFAULT;
	if (!bytes || (align & (align - 1)))
		return tplan_set_error(ctx, -EINVAL, "tplan_heap_alloc: %zu bytes, align %zu",
				       bytes, align);
	start = (ctx->heap_next + align - 1) & ~((uint64_t)align - 1);
	/* Both tests, as start itself may have wrapped or passed the end. */
	if (start < ctx->heap_next || start > ctx->gate_area || bytes > ctx->gate_area - start)
		return tplan_set_error(ctx, -ENOMEM,
				       "tplan_heap_alloc: %zu bytes (align %zu) at %llu: full below the gate area at %llu",
				       bytes, align, (unsigned long long)ctx->heap_next,
				       (unsigned long long)ctx->gate_area);
	ctx->heap_next = start + bytes;
	*offset = start;
	return 0;
}

uint64_t tplan_heap_gate_area(const struct tplan_ctx *ctx)
{
	return ctx->joined ? ctx->gate_area : 0;
}

void tplan_heap_reset(struct tplan_ctx *ctx)
{
	ctx->heap_next = 0;
}
