/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A queue stalled on purpose, for tests that need a call to wait for ring
 * space: an injected POLL_REGMEM that waits (forever) for a word to become
 * 1, then NOPs until less than `room` bytes of the ring are free, and stay
 * so: an engine may write rptr back late, or run it ahead of the POLL by
 * what it fetched, so the free space is read until it holds still.
 * Writing 1 to the word lets the engine go on.  Needs allow_inject=1.
 */
#ifndef TPLAN_STALL_H
#define TPLAN_STALL_H

#include "tplan_selftest.h"
#include "tplan_sdma.h"

/* Free bytes of the (this rank -> peer) ring; -errno on failure. */
static inline long long tplan_ring_free(struct tplan_ctx *ctx, unsigned int peer)
{
	struct tplan_queue_info qi;
	int ret = tplan_queue_info(ctx, peer, &qi);

	if (ret)
		return ret;
	return (long long)qi.ring_size - (long long)(qi.wptr - qi.rptr);
}

/*
 * Stall the (this rank -> peer) queue on the 8-byte word at word_off of
 * this rank's heap (set to 0 here) and fill its ring to under room bytes
 * free (room >= 128).  0 or -errno.
 */
static inline int tplan_stall_queue(struct tplan_ctx *ctx, unsigned int peer, uint64_t word_off,
				    uint32_t room)
{
	uint64_t *word = (uint64_t *)((char *)tplan_heap_ptr(ctx, tplan_ctx_rank(ctx)) + word_off);
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(ctx, tplan_ctx_rank(ctx)) + word_off,
		.ref = 1, .mask = 0xffffffffU, .func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1,
		.interval = 10, .retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	uint32_t dw[1024];
	long long free_bytes;
	uint32_t n;
	int ret;

	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
	ret = tplan_sdma_encode_poll_regmem(dw, 1024, &poll);
	if (ret < 0)
		return ret;
	ret = tplan_test_inject(ctx, peer, dw, (uint32_t)ret);
	if (ret)
		return ret;
	/* NOPs: 4 KiB while there is room for padding and one, then 64 bytes */
	for (;;) {
		unsigned int still;

		free_bytes = tplan_ring_free(ctx, peer);
		for (still = 0; free_bytes >= 0 && free_bytes < room && still < 5; still++) {
			tplan_sleep_ms(20);
			free_bytes = tplan_ring_free(ctx, peer);
		}
		if (free_bytes < 0)
			return (int)free_bytes;
		if (free_bytes < room)
			return 0;
		n = free_bytes >= 2 * 4096 ? 1024 : 16;
		if (free_bytes < 2 * 64)
			return -ENOSPC;	/* room below 128: cannot get there */
		ret = tplan_sdma_encode_nop(dw, n, &(struct tplan_sdma_nop){ .dwords = n });
		if (ret < 0)
			return ret;
		ret = tplan_test_inject(ctx, peer, dw, n);
		if (ret)
			return ret;
	}
}

/* Let the stalled queue go on. */
static inline void tplan_stall_release(struct tplan_ctx *ctx, uint64_t word_off)
{
	uint64_t *word = (uint64_t *)((char *)tplan_heap_ptr(ctx, tplan_ctx_rank(ctx)) + word_off);

	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
}

#endif /* TPLAN_STALL_H */
