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
#define LIBTPLAN_VERSION_MINOR 1
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

/* The module's capabilities (TPLAN_IOC_INFO); filled from the kernel. */
int tplan_query_info(struct tplan_ctx *ctx, struct tplan_info *info);

/*
 * The detail of the last failure on this context ("" if none): which call,
 * and where the kernel said why, which chunk or rule.
 */
const char *tplan_ctx_error(const struct tplan_ctx *ctx);

/* ---- Groups (group.c) ------------------------------------------------ */

/*
 * What a rank passes to tplan_ctx_join().  Zero means the default for
 * engine (TPLAN_ENGINE_SOFT), sdma_ip (TPLAN_SDMA_440) and timeout_ms
 * (TPLAN_TIMEOUT_DEFAULT_MS, in the kernel).
 */
struct tplan_join_params {
	uint64_t key;		/* names the group: the same on every rank */
	uint32_t world_size;	/* 1..tplan_info.max_world_size */
	uint32_t rank;		/* 0..world_size-1, distinct per rank */
	uint64_t heap_size;	/* bytes of every rank's heap, a multiple of 4096 */
	uint32_t engine;	/* TPLAN_ENGINE_SOFT */
	uint32_t sdma_ip;	/* TPLAN_SDMA_440 or TPLAN_SDMA_442 */
	uint32_t timeout_ms;	/* how long to wait for the other ranks */
};

/*
 * Join the group and map every rank's heap.  Returns once all ranks have
 * joined.  The kernel's errors pass through (uapi/tplan.h, GROUP_JOIN):
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
 * heap at join), its device address as packets carry it, and its size
 * (the same for every rank).  NULL / 0 before a join or for a rank out of
 * range.
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

/* The (this rank -> peer) queue's pointers, budget and state. */
int tplan_queue_info(struct tplan_ctx *ctx, unsigned int peer, struct tplan_queue_info *info);

#ifdef __cplusplus
}
#endif

#endif /* LIBTPLAN_H */
