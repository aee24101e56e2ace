/* SPDX-License-Identifier: MIT */
/* What the files of libtplan share and applications do not see. */
#ifndef LIBTPLAN_PRIV_H
#define LIBTPLAN_PRIV_H

#include "libtplan.h"


/* One rank's heap as this context sees it. */
struct tplan_heap_map {
	void *ptr;		/* this process's mapping, or NULL */
	uint64_t devaddr;	/* device address of the first byte */
};

struct tplan_ctx {
	int fd;
	struct tplan_info info;
	char error[512];

	/* Set by tplan_ctx_join() once every heap is mapped. */
	int joined;
	uint64_t key;
	uint32_t rank;
	uint32_t world_size;
	uint64_t heap_size;
	struct tplan_heap_map *heaps;	/* world_size entries */
	uint64_t heap_next;		/* the symmetric allocator's bump pointer */
	uint64_t gate_area;		/* the allocator's ceiling: the kernel's above */
	uint32_t sdma_ip;		/* TPLAN_SDMA_440 / _442: whose copy limits apply */
	uint32_t timeout_ms;		/* plan steps, put: tplan_ctx_set_timeout() */
	uint32_t rounds_ahead;		/* plans created: tplan_ctx_set_rounds_ahead() */
	uint64_t ioctls;		/* made on the device file */

	uint32_t engine;		/* TPLAN_ENGINE_* joined with */
	struct tplan_kfd_rank *kfd;	/* TPLAN_ENGINE_KFD: engine_kfd.c's */
};

/* Record a readable detail for tplan_ctx_error(); returns err. */
int tplan_set_error(struct tplan_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ioctl() that returns -errno and records which call failed. */
int tplan_ioctl(struct tplan_ctx *ctx, unsigned long request, void *arg, const char *what);

/* The largest COPY_LINEAR of the engine this context joined with. */
uint32_t tplan_ctx_max_copy_bytes(const struct tplan_ctx *ctx);

/*
 * tplan_plan_create(), for a caller that has already found this rank's
 * part unusable: with refuse (a -errno, its detail recorded) the rank
 * still takes part in the collective steps and makes them fail on every
 * rank, so that no peer waits for it; returns refuse then.
 */
int tplan_plan_create_or_refuse(struct tplan_ctx *ctx, uint64_t buf_offset, uint64_t buf_bytes,
				uint64_t own_offset, uint64_t own_bytes,
				const struct tplan_schedule *schedule, int refuse,
				struct tplan_plan **out);

/*
 * Unmap every heap this context mapped (tplan_ctx_close, join unwind),
 * the KFD engine's queues first.
 */
void tplan_heaps_unmap(struct tplan_ctx *ctx);

/*
 * The KFD engine, this rank's side (engine_kfd.c).  Before the kernel's
 * join: /dev/kfd, the GPU, this rank's heap in its memory, all in *krp,
 * which the context takes (ctx->kfd) once the kernel's join succeeded
 * (else tplan_kfd_rank_free()); *heap_fd is the heap's dma-buf, for
 * tplan_group_join.heap_fd.  After it: every heap in the GPU's address
 * space and the CPU's, the address map registered, a KFD SDMA queue under
 * each queue of this rank; fills ctx->heaps and ctx->gate_area.  Each
 * undoes what it did when it fails (attach: through tplan_kfd_leave()).
 */
struct tplan_kfd_rank;
int tplan_kfd_join_prepare(struct tplan_ctx *ctx, uint64_t heap_size, uint32_t rank,
			   uint32_t *sdma_ip, struct tplan_kfd_rank **krp, int *heap_fd);
void tplan_kfd_rank_free(struct tplan_kfd_rank *kr);
int tplan_kfd_join_attach(struct tplan_ctx *ctx, uint32_t timeout_ms);

/*
 * Undo both, queues first; quiet: let the module finish what it queued
 * (tplan_ctx_close) rather than only stop.  Nothing without ctx->kfd.
 */
void tplan_kfd_leave(struct tplan_ctx *ctx, int quiet);

#endif /* LIBTPLAN_PRIV_H */
