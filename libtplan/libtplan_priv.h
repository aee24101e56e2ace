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

/* Unmap every heap this context mapped (tplan_ctx_close, join unwind). */
void tplan_heaps_unmap(struct tplan_ctx *ctx);

#endif /* LIBTPLAN_PRIV_H */
