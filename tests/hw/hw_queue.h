/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw KFD SDMA queue for the test-node protocol (hw_check.c): memory
 * registered with KFD, a queue on it, packets written by this process
 * with the SDMA codec (uapi/tplan_sdma.h), wptr stored, then the 64-bit
 * doorbell.  No tplan.ko in the way: this is how the protocol looks at
 * what the hardware does before tplan's KFD engine relies on it.
 *
 * Memory is registered at GPU address = CPU address, as libtplan
 * registers tplan's queue memory (libtplan/kfd.c): anonymous memory as
 * USERPTR buffers, VRAM through its dma-buf mapped at the address the GPU
 * has it (selftests/tplan_kfd.h).  Anonymous memory is MADV_DONTFORK, as
 * libhsakmt's is: a fork must not write-protect pages KFD holds, which
 * would evict every queue of the process.
 *
 * Every function returns 0 (or a length) or -errno.
 */
#ifndef TPLAN_HW_QUEUE_H
#define TPLAN_HW_QUEUE_H

#include <stdint.h>

#include "tplan_kfd.h"
#include "tplan_sdma.h"

#define HW_PAGE 4096U

/* A buffer registered with KFD on one GPU. */
struct hw_mem {
	void *p;			/* CPU address = GPU address */
	uint64_t size;
	uint64_t handle;		/* KFD's; 0: not registered */
	uint32_t gpu;
	int mapped;			/* MAP_MEMORY_TO_GPU done */
	int owned;			/* p was mmapped here: munmap it */
};

/* size bytes of anonymous memory (zeroed, MADV_DONTFORK), or NULL. */
void *hw_anon(uint64_t size);

/* Register [p, p + size) as USERPTR with flags (TPLAN_KFD_ALLOC_*) and map it. */
int hw_userptr_at(struct kt *k, uint32_t gpu, void *p, uint64_t size, uint32_t flags,
		  struct hw_mem *m);
/* The same on fresh anonymous memory; flags 0: writable, uncached. */
int hw_userptr(struct kt *k, uint32_t gpu, uint64_t size, uint32_t flags, struct hw_mem *m);
/* size bytes of GPU gpu's VRAM, mapped for the CPU too; *dmabuf_fd if non-NULL (else closed). */
int hw_vram(struct kt *k, uint32_t gpu, uint64_t size, struct hw_mem *m, int *dmabuf_fd);
/* Another GPU's VRAM (its dma-buf) in GPU gpu's address space, at the same address. */
int hw_import(struct kt *k, uint32_t gpu, int dmabuf_fd, const struct hw_mem *from,
	      struct hw_mem *m);
/* Unmap, free, munmap what hw_* set up; safe on a zeroed hw_mem. */
void hw_mem_free(struct kt *k, struct hw_mem *m);

struct hw_queue_params {
	uint32_t type;			/* TPLAN_KFD_QUEUE_TYPE_*; 0: SDMA */
	uint32_t engine;		/* with SDMA_BY_ENG_ID */
	uint32_t ring_size;		/* bytes, a power of two */
	int inactive;			/* queue_percentage 0 (never runs), else 100 */
	uint32_t priority;		/* 0..15 */
	uint32_t ring_flags;		/* TPLAN_KFD_ALLOC_*; 0: writable, executable, uncached */
	void *ring, *ptr;		/* NULL: fresh anonymous memory, registered here */
	int registered;			/* ring and ptr are registered already (libtplan's) */
};

struct hw_queue {
	struct kt *k;
	uint32_t gpu, type, engine, ring_size;
	uint32_t *ring;
	volatile uint64_t *ptr;		/* +0x00 wptr, +0x08 rptr (tplan's layout) */
	struct hw_mem ring_mem, ptr_mem;
	struct tplan_kfd_create_queue_args args;
	volatile uint64_t *doorbell;
	void *doorbell_slice;
	uint64_t wptr;			/* bytes written, monotonic */
	uint64_t committed;		/* the last wptr rung */
	int created;
};

int hw_queue_create(struct kt *k, uint32_t gpu, const struct hw_queue_params *p,
		    struct hw_queue *q);
/* DESTROY_QUEUE first, then the buffers, as KFD 1.17 needs. */
int hw_queue_destroy(struct hw_queue *q);

/* Raw dwords at wptr; the caller keeps them from straddling the ring end. */
void hw_put_dwords(struct hw_queue *q, const uint32_t *dw, uint32_t n);
/* Bytes to the ring's end from wptr. */
uint32_t hw_room_to_end(const struct hw_queue *q);
/* NOP packets filling bytes (a multiple of 4, never past the ring's end). */
int hw_nops(struct hw_queue *q, uint32_t bytes);
/*
 * One packet at wptr; if it does not fit before the ring's end, the rest
 * of the ring is padded with one NOP first, as tplan pads.  Returns its
 * length in bytes.
 */
int hw_emit(struct hw_queue *q, const struct tplan_sdma_packet *p);
int hw_fence(struct hw_queue *q, volatile void *addr, uint32_t data);
int hw_poll_ge(struct hw_queue *q, volatile void *gate, uint32_t ref, uint32_t retry);
int hw_copy(struct hw_queue *q, void *dst, const void *src, uint32_t bytes);
int hw_atomic_add(struct hw_queue *q, volatile void *addr, uint64_t v);
/* wptr into the pointer page (release), then the 64-bit doorbell. */
void hw_commit(struct hw_queue *q);
uint64_t hw_rptr(const struct hw_queue *q);

uint64_t hw_now_ns(void);
/* Spin (then sleep) until *w == want: the ns it took, or -ETIMEDOUT. */
int64_t hw_wait_u32(volatile uint32_t *w, uint32_t want, uint64_t timeout_us);
int64_t hw_wait_u64(volatile uint64_t *w, uint64_t want, uint64_t timeout_us);

#endif /* TPLAN_HW_QUEUE_H */
