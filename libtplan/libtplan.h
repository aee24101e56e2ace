/* SPDX-License-Identifier: MIT */
/*
 * libtplan: the library applications link to build and run triggered
 * plans on /dev/tplan.
 *
 * Every function that can fail returns 0 (or a non-negative value) on
 * success and a negative errno on failure; nothing sets errno as its
 * result.  After a failure, tplan_ctx_error() gives a readable detail.
 */
#ifndef LIBTPLAN_H
#define LIBTPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "tplan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LIBTPLAN_VERSION_MAJOR 0
#define LIBTPLAN_VERSION_MINOR 5
#define LIBTPLAN_VERSION_PATCH 0

/* One open of /dev/tplan: one rank once it joins a group. */
struct tplan_ctx;

/* The library's version, as "MAJOR.MINOR.PATCH". */
const char *tplan_version(void);
int tplan_version_major(void);
int tplan_version_minor(void);

/*
 * Open the device (path NULL means TPLAN_DEVICE_PATH) and check that the
 * module speaks this library's ABI.
 * Errors: -ENOENT (module not loaded), -EACCES, -ENOMEM,
 * -EPROTO (the module's ABI version differs from TPLAN_ABI_VERSION).
 */
int tplan_ctx_open(struct tplan_ctx **ctxp, const char *path);

/* Close the context and everything it owns.  NULL is accepted. */
void tplan_ctx_close(struct tplan_ctx *ctx);

/* The file descriptor behind the context (for poll/epoll or raw ioctls). */
int tplan_ctx_fd(const struct tplan_ctx *ctx);

/*
 * The module's capabilities (TPLAN_IOC_INFO); filled from the kernel.
 * engines are the engines present: TPLAN_ENGINE_KFD only where /dev/kfd
 * also opens.
 */
int tplan_query_info(struct tplan_ctx *ctx, struct tplan_info *info);

/*
 * How long the collective plan steps (create, close) wait for
 * the other ranks at each of their synchronisations, in milliseconds; 0
 * (the default) means the kernel's TPLAN_TIMEOUT_DEFAULT_MS.  A rank that
 * is later than this makes the step fail on every rank with -ETIMEDOUT;
 * the group goes on.  next_round waits for no rank: it takes this as its
 * longest wait for ring space without progress.  Calls that take a
 * timeout_ms (join, barrier, all-gather, quiet, wait) use their own.
 */
void tplan_ctx_set_timeout(struct tplan_ctx *ctx, uint32_t timeout_ms);
uint32_t tplan_ctx_timeout(const struct tplan_ctx *ctx);

/*
 * Rounds kept armed ahead by the plans this context creates from now on,
 * 1..TPLAN_PLAN_DEPTH_MAX (1, the default: one round at a time).  With
 * more, such a plan runs in user space the rounds already armed:
 * tplan_plan_start() makes the handle, tplan_plan_wait() reads the gates
 * and calls the kernel only to sleep (or for the shortfall report), and
 * tplan_plan_next_round() releases the round with a store; the kernel is
 * called once per `rounds` rounds, to queue the next ones.  Its budget
 * holds `rounds` rounds on every queue, and such a plan shares no queue
 * with another live plan (tplan_plan_create(3)).  -EINVAL out of range.
 * Since 0.4.
 */
int tplan_ctx_set_rounds_ahead(struct tplan_ctx *ctx, uint32_t rounds);

/* The ioctls this context made on its device file: the host's system calls.  Since 0.4. */
uint64_t tplan_ctx_ioctls(const struct tplan_ctx *ctx);

/*
 * The detail of the last failure on this context ("" if none): which call,
 * and where the kernel said why, which chunk or rule.
 */
const char *tplan_ctx_error(const struct tplan_ctx *ctx);

/* ---- Groups (group.c) ------------------------------------------------ */

/*
 * What a rank passes to tplan_ctx_join().  Zero means the default for
 * engine (tplan_ctx_engine(3): the environment's TPLAN_ENGINE, "soft" or
 * "kfd"; else TPLAN_ENGINE_KFD where tplan_query_info() reports it, else
 * TPLAN_ENGINE_SOFT), sdma_ip (the GPU's on the KFD engine, else
 * TPLAN_SDMA_440) and timeout_ms
 * (TPLAN_TIMEOUT_DEFAULT_MS, in the kernel).
 */
struct tplan_join_params {
	uint64_t key;		/* names the group: the same on every rank */
	uint32_t world_size;	/* 1..tplan_info.max_world_size */
	uint32_t rank;		/* 0..world_size-1, distinct per rank */
	uint64_t heap_size;	/* bytes of every rank's heap, a multiple of 4096 */
	uint32_t engine;	/* TPLAN_ENGINE_SOFT or TPLAN_ENGINE_KFD */
	uint32_t sdma_ip;	/* TPLAN_SDMA_440 or TPLAN_SDMA_442 */
	uint32_t timeout_ms;	/* how long to wait for the other ranks */
};

/*
 * Join the group and map every rank's heap (on the KFD engine, also this
 * rank's GPU memory for its heap and a KFD SDMA queue under each of its
 * queues: tplan_ctx_engine(3)).  Returns once all ranks have joined.  The kernel's errors pass through (uapi/tplan.h, GROUP_JOIN):
 * -EALREADY, -EINVAL, -EADDRINUSE, -EPERM, -ETIMEDOUT, -EINTR,
 * -ECONNRESET (-EALREADY also when this context joined before).  If mapping a heap
 * fails, the mappings made so far are undone and the error (-ENOMEM, ...)
 * returned; the file stays in the group, so the only use left for the
 * context is tplan_ctx_close().
 */
int tplan_ctx_join(struct tplan_ctx *ctx, const struct tplan_join_params *params);

/* This rank and the group's size; -ENOTCONN before a join. */
int tplan_ctx_rank(const struct tplan_ctx *ctx);
int tplan_ctx_world_size(const struct tplan_ctx *ctx);

/*
 * The engine the joined context's queues run on: TPLAN_ENGINE_SOFT or
 * TPLAN_ENGINE_KFD; -ENOTCONN before a join.  Since 0.5.
 */
int tplan_ctx_engine(const struct tplan_ctx *ctx);

/*
 * Wait until every rank called it.  timeout_ms 0: the kernel's default.
 * -ENOTCONN, -ECONNRESET (a rank left: the group is broken for good),
 * -ETIMEDOUT, -EINTR, -EPROTO (ranks called different collectives).
 */
int tplan_barrier(struct tplan_ctx *ctx, uint32_t timeout_ms);

/*
 * Every rank contributes bytes (1..TPLAN_ALL_GATHER_MAX, the same on
 * every rank) from in; out receives world_size * bytes, rank r's at
 * r * bytes.  Errors as tplan_barrier().
 */
int tplan_all_gather(struct tplan_ctx *ctx, const void *in, size_t bytes, void *out,
		     uint32_t timeout_ms);

/* ---- Symmetric heaps (heap.c) ------------------------------------------ */

/*
 * Rank rank's heap: this process's mapping of it (every rank maps every
 * heap at join), its device address as this rank's packets carry it (in
 * this rank's own address map: valid on this rank only, never to be
 * passed to another rank), and its size (the same for every rank).
 * NULL / 0 before a join or for a rank out of range.
 */
void *tplan_heap_ptr(const struct tplan_ctx *ctx, unsigned int rank);
uint64_t tplan_heap_devaddr(const struct tplan_ctx *ctx, unsigned int rank);
size_t tplan_heap_size(const struct tplan_ctx *ctx);

/*
 * The symmetric allocator: a bump allocator that hands out heap offsets
 * from 0 upward, so the same sequence of calls on every rank yields the
 * same offsets, valid in every rank's heap.  align is a power of two
 * (0: 64 bytes, a cache line).  The top of the heap, from
 * tplan_heap_gate_area() up, is the kernel's (plans' gate tables); the
 * allocator stays below it.  Nothing is ever freed singly:
 * tplan_heap_reset() starts over (collectively, as every rank must agree
 * on the offsets).
 * Errors: -ENOTCONN (not joined), -EINVAL (bytes 0, align not a power
 * of two), -ENOMEM (no room below the gate area; nothing is allocated).
 */
int tplan_heap_alloc(struct tplan_ctx *ctx, size_t bytes, size_t align, uint64_t *offset);
void tplan_heap_reset(struct tplan_ctx *ctx);

/* Heap offset where the kernel's gate area starts (0 before a join). */
uint64_t tplan_heap_gate_area(const struct tplan_ctx *ctx);

/* ---- Queues: host put and quiet (queue.c) ------------------------------ */

/*
 * Queue a copy of len bytes from src_off in this rank's heap to dst_off in
 * peer's heap on the (this rank -> peer) queue; returns once queued.
 * -EINVAL (peer is this rank or out of range, len 0, a range outside its
 * heap), -EBUSY (prepared chains whose gates are closed sit on the queue),
 * -EIO (the queue faulted: tplan_queue_info()), -ECONNRESET, -EINTR.
 */
int tplan_put(struct tplan_ctx *ctx, unsigned int peer, uint64_t src_off, uint64_t dst_off,
	      uint64_t len);

/*
 * tplan_put(), then add 1 to the 64-bit word at signal_off (8-byte
 * aligned) in peer's heap once the data has landed there.
 */
int tplan_put_signal(struct tplan_ctx *ctx, unsigned int peer, uint64_t src_off,
		     uint64_t dst_off, uint64_t len, uint64_t signal_off);

/*
 * Wait until everything queued to peer before the call has executed.
 * Errors as tplan_put(), plus -ETIMEDOUT.
 */
int tplan_quiet(struct tplan_ctx *ctx, unsigned int peer, uint32_t timeout_ms);

/*
 * Release raw chains (TPLAN_IOC_CHAIN_SUBMIT) whose producer will never
 * come: open the ready gate of every one still waiting on the (this rank
 * -> peer) queue, so each runs as its chunk stands and gives its charge
 * back, then tplan_quiet().  -EBUSY (nothing opened) when a plan's chains
 * wait there too: close the plan.  Errors as tplan_quiet().
 */
int tplan_queue_flush(struct tplan_ctx *ctx, unsigned int peer, uint32_t timeout_ms);

/* The (this rank -> peer) queue's pointers, budget and state. */
int tplan_queue_info(struct tplan_ctx *ctx, unsigned int peer, struct tplan_queue_info *info);

/* ---- Schedules (schedule.c) -------------------------------------------- */

/*
 * A region is one copy: a byte range (rows == 1) or a 2D sub-window, rows
 * rows of width bytes, pitch bytes apart.  offset is a heap offset; the
 * region is written at the same offset in every peer's heap.
 */
struct tplan_region {
	uint64_t offset;
	uint64_t width;		/* bytes per row, >= 1 */
	uint64_t pitch;		/* bytes from row to row (>= width); ignored for 1 row */
	uint32_t rows;		/* >= 1 */
	uint32_t __pad;
};

/*
 * A 2D tensor in the heap (rows x cols elements of elem_size bytes, rows
 * pitch bytes apart), what schedule builders describe.
 */
struct tplan_tensor {
	uint64_t offset;	/* heap offset of element (0, 0) */
	uint32_t rows;
	uint32_t cols;
	uint32_t elem_size;	/* bytes: 1, 2, 4, 8 or 16 */
	uint32_t __pad;
	uint64_t pitch;		/* bytes from row to row; 0: cols * elem_size */
};

/*
 * A schedule: the chunks one rank writes, in the order its producer
 * completes them.  A chunk is an ordered group of regions sent together,
 * completed each round by `writers` mark_ready calls.
 */
struct tplan_schedule;

/*
 * An empty schedule (what a rank that sends nothing passes).  Schedule
 * calls have no context: they return -EINVAL for a shape with no encoding
 * and -ENOMEM, and *out is NULL after a failed builder.
 */
int tplan_schedule_new(struct tplan_schedule **out);
void tplan_schedule_free(struct tplan_schedule *schedule);

/*
 * Append a chunk of nregions >= 1 regions (copied), completed by writers
 * >= 1 marks per round; returns its index, or -EINVAL (no region, no
 * writer, an empty region, rows whose pitch is below their width, bytes
 * past 2^62) / -ENOMEM.  Nothing is added on failure.
 */
int tplan_schedule_add_chunk(struct tplan_schedule *schedule, const struct tplan_region *regions,
			     uint32_t nregions, uint32_t writers);

uint32_t tplan_schedule_nchunks(const struct tplan_schedule *schedule);

/* Chunk `chunk`'s regions (NULL if out of range), their number and writers. */
const struct tplan_region *tplan_schedule_chunk(const struct tplan_schedule *schedule,
						uint32_t chunk, uint32_t *nregions,
						uint32_t *writers);

/* One chunk: the whole tensor, marked `writers` times per round. */
int tplan_schedule_whole(const struct tplan_tensor *mine, uint32_t writers,
			 struct tplan_schedule **out);

/*
 * Row blocks of rows_per_chunk rows completed in order (the last may be
 * shorter), each marked `writers` times.  A block of contiguous rows is a
 * byte range split into regions of at most max_copy_bytes (the engine's
 * per-packet maximum, tplan_info; 0 or above 1 GiB: 1 GiB, what the count
 * field holds); a block of strided rows is one 2D region.
 */
int tplan_schedule_chunks(const struct tplan_tensor *mine, uint32_t rows_per_chunk,
			  uint32_t writers, uint64_t max_copy_bytes, struct tplan_schedule **out);

/*
 * The producer's step-to-tile mapping: program p of a persistent kernel
 * takes steps p, p + programs, ...; order(step) is the row-major index of
 * the tile it writes at that step.  Pass the kernel's own function.
 */
typedef uint32_t (*tplan_tile_order_fn)(uint32_t step, void *arg);

/*
 * Consecutive tiles of a tiled producer: mine is tiled by tile_rows x
 * tile_cols (edge tiles clipped); chunk j holds the tiles of steps
 * j * tiles_per_chunk .. (j + 1) * tiles_per_chunk - 1, one 2D region per
 * tile in step order, and is marked once per tile.  order NULL: row-major;
 * otherwise it must visit every tile exactly once (-EINVAL).  base, if not
 * NULL, is the tensor mine is a view of: same element size, mine inside
 * it, and the regions' pitch is base's (mine->pitch 0 or equal).
 */
int tplan_schedule_tile_chunks(const struct tplan_tensor *mine, uint32_t tile_rows,
			       uint32_t tile_cols, uint32_t tiles_per_chunk,
			       tplan_tile_order_fn order, void *order_arg,
			       const struct tplan_tensor *base, struct tplan_schedule **out);

/* ---- Plans (plan.c) ------------------------------------------------------ */

struct tplan_plan;
struct tplan_handle;	/* device/tplan_device.h */

/*
 * Create a plan (collective): the buffer [buf_offset, + buf_bytes) at the
 * same offset on every rank, this rank's own part [own_offset,
 * + own_bytes) that its schedule sends from, and the schedule (NULL:
 * empty).  Builds one chain per (chunk, peer), chunk-major: POLL, the
 * chunk's copies (byte ranges split at the engine's per-packet maximum of
 * the sdma_ip joined with; 2D regions as sub-window copies where the
 * engine's rules allow, else a copy per row), ATOMIC.  Then prepares
 * round 1 on every rank or on none.
 * Errors: the kernel's (uapi/tplan.h PLAN_CREATE, PLAN_PREPARE): -EINVAL
 * with tplan_ctx_error() naming the rank, chunk, peer, region and rule
 * (for another rank's chain: its chunk, peer and packet), -ENOSPC (a
 * queue's prepared-copy budget), -E2BIG (a chunk needs more packets than
 * a chain holds: split it; every rank fails with -EINVAL), -ENOMEM,
 * -ENOTCONN, -ECONNRESET, -ETIMEDOUT.  On failure nothing is left behind:
 * a plan created before the failure is closed on every rank.
 */
int tplan_plan_create(struct tplan_ctx *ctx, uint64_t buf_offset, uint64_t buf_bytes,
		      uint64_t own_offset, uint64_t own_bytes,
		      const struct tplan_schedule *schedule, struct tplan_plan **out);

/* Start the prepared round: the handle a producer marks chunks through. */
int tplan_plan_start(struct tplan_plan *plan, struct tplan_handle *handle);

/*
 * Wait for the round (every chunk delivered everywhere).  -ETIMEDOUT and
 * -EOVERFLOW (a chunk marked more than writers times) name the chunks in
 * tplan_ctx_error() and in tplan_plan_shortfall().
 */
int tplan_plan_wait(struct tplan_plan *plan, uint32_t timeout_ms);

/* The last wait's shortfall report (count 0 after a successful wait). */
const struct tplan_plan_shortfall *tplan_plan_shortfall(const struct tplan_plan *plan,
							uint32_t *count);

/*
 * Done reading this round: release it and queue the next round on this
 * rank's queues.  Local: each round's copies into a peer wait, on the
 * engine, for that peer's release.  On failure the plan fails on every
 * rank (tplan_plan_next_round(3)).
 */
int tplan_plan_next_round(struct tplan_plan *plan);

/*
 * Queue the next round without releasing this one: the consumer releases
 * it itself, once it has read it (tplan_release() in tplan_device.h, or
 * tplan_handle_release()), so the host need not wait for the reading
 * kernel.  Since 0.3.
 */
int tplan_plan_next_round_unreleased(struct tplan_plan *plan);

/* TPLAN_PLAN_* state and current round of this rank's part. */
int tplan_plan_state(const struct tplan_plan *plan, uint32_t *state, uint32_t *round);

/*
 * Close (collective) and free the plan; queued copies drain as they stand.
 * *state (may be NULL) gets TPLAN_PLAN_CLOSED, or TPLAN_PLAN_CLOSING when
 * the copies wait behind an earlier plan's: closing that one finishes it.
 * The plan is freed whatever the result (the kernel tears this rank's part
 * down even when a peer is gone: -ECONNRESET).  NULL is accepted.
 */
int tplan_plan_close(struct tplan_plan *plan, uint32_t *state);

/*
 * The in-place all-gather: out holds world_size * R rows, rank r's rows
 * are [r * R, (r + 1) * R) and are its own part.  schedule (NULL: whole,
 * one chunk, one writer; a producer of several programs needs
 * tplan_prepare_all_gather_programs()) must stay inside this rank's
 * rows, padding
 * between rows excluded; otherwise -EINVAL here naming the chunk and
 * region, and -EINVAL on every other rank (the plan fails everywhere).
 */
int tplan_prepare_all_gather(struct tplan_ctx *ctx, const struct tplan_tensor *out,
			     const struct tplan_schedule *schedule, struct tplan_plan **plan);

/*
 * tplan_prepare_all_gather() for a producer of `programs` programs (CTAs)
 * that each mark the default schedule's chunk once per round, as the
 * spec's whole() says ("marked ready once per program at the end"): with
 * schedule NULL, one chunk of this rank's rows with `programs` writers
 * (>= 1).  A schedule carries its chunks' writers itself: with one,
 * programs must be 0.  -EINVAL otherwise, on every rank.
 * tplan_prepare_all_gather() is this call with programs 1 (NULL schedule)
 * or 0.  Since 0.2.
 */
int tplan_prepare_all_gather_programs(struct tplan_ctx *ctx, const struct tplan_tensor *out,
				      const struct tplan_schedule *schedule, uint32_t programs,
				      struct tplan_plan **plan);

/* ---- The device header's host build, as calls (device_host.c) ------------ */

/*
 * tplan_mark_ready(), tplan_arrived() and tplan_wait() of tplan_device.h's
 * host build for a producer or consumer of one thread, through a round's
 * handle: for callers that cannot compile the header (bindings in other
 * languages), with its C11 ordering (the writer counter's add acq_rel, the
 * ready gate stored with release, gates read with acquire).  Return values
 * as the header's.  Since 0.2.
 */
int tplan_handle_mark_ready(const struct tplan_handle *handle, uint32_t chunk);
int tplan_handle_arrived(const struct tplan_handle *handle, uint32_t src, uint32_t chunk);
int tplan_handle_wait(const struct tplan_handle *handle, uint32_t src, uint32_t chunk,
		      uint64_t max_polls);

/*
 * tplan_release() of the host build: the caller has finished reading the
 * handle's round (for a plan re-armed with
 * tplan_plan_next_round_unreleased()).  Since 0.3.
 */
int tplan_handle_release(const struct tplan_handle *handle);

#ifdef __cplusplus
}
#endif

#endif /* LIBTPLAN_H */
