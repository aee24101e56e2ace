/* SPDX-License-Identifier: MIT */
/*
 * tplan_device.h: the producer and consumer side of a triggered plan.
 *
 * A round's handle (from tplan_plan_start()) is passed to the producing
 * kernel, which marks each chunk of its output ready once written; the
 * copy engine sends the chunk to every peer and signals its arrival there.
 *
 *   struct tplan_view v;
 *   tplan_view_init(&v, &handle);
 *   ... write this CTA's part of chunk c ...
 *   tplan_mark_ready(&v, &cta, c);          (the whole CTA calls it)
 *   if (tplan_wait(&v, &cta, src, c2, polls) == 0)
 *           ... rank src's chunk c2 is here, and fresh ...
 *   ... the last reader of the round, done reading:
 *   tplan_release(&v, &cta);                (the whole CTA calls it)
 *
 * Two builds of the same API.  Under HIP (hipcc, amdclang) a CTA is the
 * workgroup and the functions are __device__.  Everywhere else (C11, C++)
 * a CTA is a team of threads sharing a pthread barrier: CPU producers,
 * tests and examples use it.  It needs POSIX barriers: -std=gnu11, or
 * -std=c11 with _POSIX_C_SOURCE >= 200112L.
 *
 * Memory ordering (ARCHITECTURE.md §5).  Copy engines read memory behind
 * the GPU's L2, so mark_ready makes every wave's stores reach memory before
 * the chunk's gate opens: wait for this wave's stores, CTA barrier, then
 * one thread's release atomic add at system scope on the chunk's writer
 * counter (buffer_wbl2 writes back this XCD's L2).  The writer whose add
 * completes the round's count opens the gate.  Consumers read the arrival
 * gate with an acquire at system scope; one thread reads it and the CTA
 * gets the result through a barrier.  A consumer that releases the round
 * itself (tplan_release) waits for its wave's loads, CTA barrier, then one
 * thread's release at system scope (buffer_wbl2 and its wait) and maximum
 * at system scope on this rank's release word, which the peers' copy
 * engines poll before the next round's copies.
 *
 * The kernel author's contract (spec), as it applies here:
 *  2. every chunk is marked exactly `writers` times per round, by the whole
 *     CTA, outside divergent branches;
 *  3. a producer marks everything it writes before it waits on arrivals;
 *  5. arrived/wait are called uniformly by the CTA, and wait counts polls
 *     rather than exiting on a per-wave clock;
 *  6. a round is released once: tplan_plan_next_round() on the host, or,
 *     with tplan_plan_next_round_unreleased(), tplan_release() by the
 *     consumer once nothing reads the round's data any more.
 */
#ifndef TPLAN_DEVICE_H
#define TPLAN_DEVICE_H

#include <errno.h>
#include <stdint.h>

#include "tplan_chain.h"	/* the gate row layout */

#define TPLAN_HANDLE_MAX_RANKS 16

/*
 * struct tplan_handle - what a producer needs for one round; plain data,
 * passed by value to a GPU kernel.
 * @gates: address of this rank's gate table, as the producer sees it (a
 *         host pointer for CPU producers, a GPU address on hardware)
 * @round: the round to mark (rounds start at 1)
 * @rank: this rank
 * @world_size: ranks of the group
 * @nchunks: chunks this rank writes
 * @total_chunks: chunks of all ranks
 * @chunk_base: rank r's chunk c is gate row chunk_base[r] + c
 */
struct tplan_handle {
	uint64_t gates;
	uint32_t round;
	uint32_t rank;
	uint32_t world_size;
	uint32_t nchunks;
	uint32_t total_chunks;
	uint32_t chunk_base[TPLAN_HANDLE_MAX_RANKS + 1];
};

/*
 * struct tplan_view - a handle as the producer and consumer use it, set up
 * by tplan_view_init(); plain data.
 */
struct tplan_view {
	uint8_t *gates;
	uint32_t round;
	uint32_t rank;
	uint32_t world_size;
	uint32_t first_chunk;
	uint32_t nchunks;
	uint32_t chunk_base[TPLAN_HANDLE_MAX_RANKS + 1];
};

#if defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>

/* The workgroup is the CTA; this carries nothing and may be NULL. */
struct tplan_cta {
};

#define TPLAN_DEVICE_FN static __device__ __forceinline__
#define TPLAN_VIEW_FN static __host__ __device__ __forceinline__
#else
#include <pthread.h>
#include <sched.h>

/*
 * struct tplan_cta - one thread of a CPU "CTA": a team of threads that
 * make every call together.
 * @barrier: the team's barrier (count = team size); NULL for a team of one
 * @slot: the team's shared result slot (thread 0 writes, all read);
 *        unused for a team of one
 * @thread: this thread's index in the team; thread 0 does the atomics
 */
struct tplan_cta {
	pthread_barrier_t *barrier;
	int *slot;
	unsigned int thread;
};

#define TPLAN_DEVICE_FN static inline
#define TPLAN_VIEW_FN static inline
#endif

TPLAN_VIEW_FN void tplan_view_init(struct tplan_view *v, const struct tplan_handle *h)
{
	uint32_t r;

	v->gates = (uint8_t *)(uintptr_t)h->gates;
	v->round = h->round;
	v->rank = h->rank;
	v->world_size = h->world_size;
	v->nchunks = h->nchunks;
	v->first_chunk = h->chunk_base[h->rank];
	for (r = 0; r <= TPLAN_HANDLE_MAX_RANKS; r++)
		v->chunk_base[r] = h->chunk_base[r];
}

/*
 * chunk_base[r] by constant indices only: a GPU then keeps the table in
 * scalar registers, where a variable index would copy it to scratch.
 */
TPLAN_DEVICE_FN uint32_t tplan_view_base(const struct tplan_view *v, uint32_t r)
{
	uint32_t i, base = 0;

	for (i = 0; i <= TPLAN_HANDLE_MAX_RANKS; i++)
		if (i == r)
			base = v->chunk_base[i];
	return base;
}

/* Rank src's chunk `chunk` is in range (uniform: no divergence). */
TPLAN_DEVICE_FN int tplan_view_has(const struct tplan_view *v, uint32_t src, uint32_t chunk)
{
	return src < v->world_size && chunk < tplan_view_base(v, src + 1) - tplan_view_base(v, src);
}

/* The gate row of global chunk `gchunk`, in this rank's gate table. */
TPLAN_DEVICE_FN uint8_t *tplan_view_row(const struct tplan_view *v, uint32_t gchunk)
{
	return v->gates + (uint64_t)gchunk * TPLAN_GATE_ROW_BYTES;
}

/*
 * This rank's release word (uapi/tplan_chain.h): in the row after every
 * chunk's, in its own gate table.
 */
TPLAN_DEVICE_FN uint64_t *tplan_view_release_word(const struct tplan_view *v)
{
	return (uint64_t *)(tplan_view_row(v, tplan_view_base(v, v->world_size)) +
			    TPLAN_GATE_RELEASED);
}

/* What the writer counter reads once every writer of this round marked. */
TPLAN_DEVICE_FN uint64_t tplan_view_marks(const struct tplan_view *v, const uint8_t *row)
{
	/* Written by the kernel when the plan was prepared, before any start. */
	return (uint64_t)*(const uint32_t *)(row + TPLAN_GATE_EXPECTED) * v->round;
}

/*
 * What arrived() reads for rank src's chunk `chunk` and the value it must
 * reach: the arrival gate and the round, or for this rank's own chunks
 * (which no chain sends here) the writer counter and this round's marks.
 * Looked up once per call, before any barrier, so a GPU keeps the handle
 * in its kernel arguments.
 */
TPLAN_DEVICE_FN int tplan_view_gate(const struct tplan_view *v, uint32_t src, uint32_t chunk,
				    uint64_t **gate, uint64_t *want)
{
	uint8_t *row;

	if (!tplan_view_has(v, src, chunk))
		return -EINVAL;
	row = tplan_view_row(v, tplan_view_base(v, src) + chunk);
	if (src == v->rank) {
		*gate = (uint64_t *)(row + TPLAN_GATE_WRITERS);
		*want = tplan_view_marks(v, row);
	} else {
		*gate = (uint64_t *)(row + TPLAN_GATE_ARRIVAL);
		*want = v->round;
	}
	return 0;
}

#if defined(__HIP__) || defined(__HIPCC__)

TPLAN_DEVICE_FN int tplan_cta_leader(void)
{
	return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

/*
 * Mark this rank's chunk `chunk` ready for this round, after the CTA's
 * writes to it.  The whole CTA calls it (contract 2).  0, or -EINVAL for
 * a chunk out of range (nothing marked: wait() reports the shortfall).
 */
TPLAN_DEVICE_FN int tplan_mark_ready(const struct tplan_view *v, struct tplan_cta *cta,
				     uint32_t chunk)
{
	uint64_t *writers, *ready;
	uint8_t *row;

	(void)cta;
	if (chunk >= v->nchunks)
		return -EINVAL;
	row = tplan_view_row(v, v->first_chunk + chunk);
	writers = (uint64_t *)(row + TPLAN_GATE_WRITERS);
	ready = (uint64_t *)(row + TPLAN_GATE_READY);

	/* This wave's stores, buffer_store included, are done... */
	__asm__ __volatile__("s_waitcnt vmcnt(0)" ::: "memory");
	/* ...and so are every other wave's: the release below covers them. */
	__syncthreads();
	if (tplan_cta_leader()) {
		uint64_t want = tplan_view_marks(v, row);
		/* Release at system scope: writes back this XCD's L2 first. */
		uint64_t old = __hip_atomic_fetch_add(writers, (uint64_t)1, __ATOMIC_RELEASE,
						      __HIP_MEMORY_SCOPE_SYSTEM);

		/*
		 * Every other writer's add (and write-back) came before ours,
		 * and the gate opens only after ours returned: no release.
		 */
		if (old + 1 == want)
			__hip_atomic_exchange(ready, (uint64_t)v->round, __ATOMIC_RELAXED,
					      __HIP_MEMORY_SCOPE_SYSTEM);
	}
	return 0;
}

/*
 * One poll: gate >= want, read by one thread with an acquire at system
 * scope (data read after a 1 is fresh), the result shared with the CTA.
 */
TPLAN_DEVICE_FN int tplan_cta_poll(struct tplan_cta *cta, uint64_t *gate, uint64_t want)
{
	__shared__ int slot;
	int got;

	(void)cta;
	if (tplan_cta_leader())
		slot = __hip_atomic_load(gate, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM) >= want;
	__syncthreads();
	got = slot;
	/* Nobody may overwrite the slot before every wave has read it. */
	__syncthreads();
	return got;
}

TPLAN_DEVICE_FN void tplan_poll_pause(void)
{
	__builtin_amdgcn_s_sleep(2);
}

/*
 * The CTA has finished reading this round's data: peers' copies of the
 * next round may land in the buffer (contract point 6, from the device).
 * Call it once per round, from the CTA that reads last (or a one-CTA
 * kernel launched after the consumer on its stream), uniformly across the
 * CTA, with the plan re-armed by tplan_plan_next_round_unreleased().
 * Returns 0.
 *
 * Every wave waits for its own vector-memory loads (s_waitcnt vmcnt(0)
 * counts loads as well as stores), the CTA barrier then covers every
 * wave's; one thread then releases at system scope, which writes back
 * this XCD's L2 (buffer_wbl2), waits for the write-back, and raises the
 * release word to the round with a maximum at system scope that reaches
 * memory, where the copy engine reads it (behind L2).  A maximum, not a
 * store: the word never goes back, so a release that comes after the
 * plan's close (which opens the word fully) cannot close it again.
 *
 * The release is a fence and the wait is ours: LLVM 19 turns a
 * system-scope maximum into a compare-and-swap loop and drops the
 * s_waitcnt vmcnt(0) after its buffer_wbl2 when it sees no memory
 * operation in flight (it does not count the write-back; fixed in LLVM
 * by PR 178316), so clang-19 would let the word reach memory before the
 * write-back completes.
 */
TPLAN_DEVICE_FN int tplan_release(const struct tplan_view *v, struct tplan_cta *cta)
{
	(void)cta;
	/* This wave's loads of the buffer are done... */
	__asm__ __volatile__("s_waitcnt vmcnt(0)" ::: "memory");
	/* ...and so are every other wave's. */
	__syncthreads();
	if (tplan_cta_leader()) {
		/* Release at system scope: buffer_wbl2, then wait for it. */
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "");
		__asm__ __volatile__("s_waitcnt vmcnt(0)" ::: "memory");
		__hip_atomic_fetch_max(tplan_view_release_word(v), (uint64_t)v->round,
				       __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
	}
	return 0;
}

#else /* the host build */

TPLAN_DEVICE_FN void tplan_cta_sync(struct tplan_cta *cta)
{
	/* pthread_barrier_wait() synchronizes memory (POSIX 4.12). */
	if (cta->barrier)
		pthread_barrier_wait(cta->barrier);
}

TPLAN_DEVICE_FN int tplan_mark_ready(const struct tplan_view *v, struct tplan_cta *cta,
				     uint32_t chunk)
{
	if (chunk >= v->nchunks)
		return -EINVAL;
	/* Every thread of the team has written its part. */
	tplan_cta_sync(cta);
	if (cta->thread == 0) {
		uint8_t *row = tplan_view_row(v, v->first_chunk + chunk);
		uint64_t want = tplan_view_marks(v, row);
		/*
		 * acq_rel, not only release: in the C11 model the last
		 * writer's release of `ready` carries the other writers'
		 * stores only if its add acquired their releases.
		 */
		uint64_t old = __atomic_fetch_add((uint64_t *)(row + TPLAN_GATE_WRITERS), 1,
						  __ATOMIC_ACQ_REL);

		/* The engine reads ready with acquire. */
		if (old + 1 == want)
			__atomic_store_n((uint64_t *)(row + TPLAN_GATE_READY), (uint64_t)v->round,
					 __ATOMIC_RELEASE);
	}
	return 0;
}

TPLAN_DEVICE_FN int tplan_cta_poll(struct tplan_cta *cta, uint64_t *gate, uint64_t want)
{
	int got = 0;

	if (cta->thread == 0) {
		got = __atomic_load_n(gate, __ATOMIC_ACQUIRE) >= want;
		if (cta->barrier)
			*cta->slot = got;
	}
	if (cta->barrier) {
		pthread_barrier_wait(cta->barrier);
		got = *cta->slot;
		/* Nobody may overwrite the slot before every thread has read it. */
		pthread_barrier_wait(cta->barrier);
	}
	return got;
}

TPLAN_DEVICE_FN void tplan_poll_pause(void)
{
	sched_yield();
}

/*
 * Raise a release word to round, with release order: the reads of the
 * round before it.  The word never goes back, so a late or second
 * release of an older round changes nothing.  The library's next_round
 * in user space releases through it too.
 */
TPLAN_DEVICE_FN void tplan_release_word_max(uint64_t *word, uint64_t round)
{
	uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);

	while (old < round && !__atomic_compare_exchange_n(word, &old, round, 1, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED))
		;
}

/*
 * The team has finished reading this round's data: peers' copies of the
 * next round may land in the buffer.  Once per round, by the whole team,
 * with the plan re-armed by tplan_plan_next_round_unreleased().  The
 * barrier orders every thread's reads before thread 0's release; the word
 * only ever grows.  Returns 0.
 */
TPLAN_DEVICE_FN int tplan_release(const struct tplan_view *v, struct tplan_cta *cta)
{
	tplan_cta_sync(cta);
	if (cta->thread == 0)
		tplan_release_word_max(tplan_view_release_word(v), v->round);
	return 0;
}

#endif /* the host build */

/*
 * Has rank src's chunk `chunk` arrived here this round?  1 or 0 (the same
 * in every thread), -EINVAL out of range.  For this rank's own chunks: have
 * all their writers marked them?  One atomic, whose result reaches the rest
 * of the CTA through a barrier: the CTA calls it uniformly (contract 5).
 */
TPLAN_DEVICE_FN int tplan_arrived(const struct tplan_view *v, struct tplan_cta *cta, uint32_t src,
				  uint32_t chunk)
{
	uint64_t *gate, want;
	int ret = tplan_view_gate(v, src, chunk, &gate, &want);

	return ret ? ret : tplan_cta_poll(cta, gate, want);
}

/*
 * Poll as tplan_arrived() does until it says 1, at most max_polls times
 * (at least once).  0, -ETIMEDOUT, or -EINVAL out of range.  The bound is
 * a count of polls, the same in every thread, never a clock (contract 5).
 */
TPLAN_DEVICE_FN int tplan_wait(const struct tplan_view *v, struct tplan_cta *cta, uint32_t src,
			       uint32_t chunk, uint64_t max_polls)
{
	uint64_t *gate, want, polls = 0;
	int ret = tplan_view_gate(v, src, chunk, &gate, &want);

	if (ret)
		return ret;
	while (!tplan_cta_poll(cta, gate, want)) {
		if (++polls >= max_polls)
			return -ETIMEDOUT;
		tplan_poll_pause();
	}
	return 0;
}

#endif /* TPLAN_DEVICE_H */
