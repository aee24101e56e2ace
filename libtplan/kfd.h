/* SPDX-License-Identifier: MIT */
/*
 * libtplan's KFD glue (kfd.c): what a rank does on /dev/kfd so that a
 * tplan queue runs on a GPU's SDMA engine.  Internal; no libhsakmt.
 *
 * A rank opens its own /dev/kfd (KFD keys its process by address space,
 * so this is the process ROCr also uses), reads the version and the
 * topology, acquires the GPU's VM through its render node, and for each
 * queue registers the queue's ring and pointer page (tplan's pages, mapped
 * into the rank by TPLAN_IOC_QUEUE_INFO's offsets) as USERPTR buffers at
 * GPU address = CPU address: the ring exactly ring_size, the pointer page
 * exactly one page, as KFD 1.17 insists.  It creates an SDMA queue on
 * them, wptr at +0x00 and rptr at +0x08 of the pointer page (the layout
 * tplan's module and engines share), and maps the queue's doorbell.
 *
 * Engine choice: with KFD 1.17 and a recommended engine towards the peer
 * GPU, SDMA_BY_ENG_ID on the lowest one; else SDMA_XGMI towards another
 * GPU that has XGMI engines; else SDMA.
 *
 * A heap is GPU memory shared as a dma-buf: KFD 1.12 allocates VRAM and
 * exports it; KFD 1.11 (Linux 6.1) exports nothing, so there the render
 * node's GEM_CREATE makes the buffer and PRIME_HANDLE_TO_FD the dma-buf.
 * Any rank's heap comes into a GPU's address space by IMPORT_DMABUF at an
 * address the caller chose, and MAP_MEMORY_TO_GPU.
 *
 * Teardown is DESTROY_QUEUE first (KFD 1.17 keeps ring and pointer page
 * mapped while the queue lives), then the buffers, then the doorbell.
 * Every function returns 0 or -errno.
 */
#ifndef LIBTPLAN_KFD_H
#define LIBTPLAN_KFD_H

#include <stdint.h>

#define TPLAN_KFD_MAX_GPUS 8

struct tplan_kfd_gpu {
	uint32_t node;			/* topology node */
	uint32_t gpu_id;
	uint32_t gfx_target_version;
	uint32_t render_minor;
	uint32_t num_sdma, num_xgmi;	/* PCIe and XGMI SDMA engines */
	uint64_t rec_mask[TPLAN_KFD_MAX_GPUS];	/* KFD 1.17: engines towards GPU i */
	int render_fd;			/* the VM acquired through it, or -1 */
};

/* A process's /dev/kfd. */
struct tplan_kfd {
	int fd;
	uint32_t major, minor;
	uint32_t ngpus;
	struct tplan_kfd_gpu gpu[TPLAN_KFD_MAX_GPUS];
};

/* One tplan queue on a KFD SDMA queue. */
struct tplan_kfd_queue {
	uint32_t gpu;			/* index in tplan_kfd.gpu */
	uint32_t type;			/* TPLAN_KFD_QUEUE_TYPE_* */
	uint32_t engine;		/* with SDMA_BY_ENG_ID */
	uint32_t queue_id;
	uint64_t ring_handle, ptr_handle;
	void *doorbell_slice;		/* the mapped 8 KiB slice */
	volatile uint64_t *doorbell;	/* the queue's doorbell in it */
	int created;
};

/* Whether TPLAN_KFD_PATH opens: 1 or 0. */
int tplan_kfd_present(void);

/* /dev/kfd (path NULL: TPLAN_KFD_PATH), its version and GPUs; -ENOENT without KFD. */
int tplan_kfd_open(struct tplan_kfd *k, const char *path);
void tplan_kfd_close(struct tplan_kfd *k);

/*
 * Acquire GPU gpu's VM through its render node, which stays open.  The
 * process's VM acquired already through another file (ROCr's, or another
 * rank's that is a thread of this process) is taken as it is.
 */
int tplan_kfd_acquire_vm(struct tplan_kfd *k, uint32_t gpu);

/*
 * size bytes of GPU gpu's memory (VRAM, in the CPU's reach) and a dma-buf
 * of it (*dmabuf_fd, close-on-exec).  KFD 1.12 and later: a KFD buffer at
 * GPU address va (*handle), not mapped yet; before: the render node's
 * buffer, *handle 0, which the caller imports (tplan_kfd_import) to map.
 */
int tplan_kfd_heap_create(struct tplan_kfd *k, uint32_t gpu, uint64_t size, uint64_t va,
			  uint64_t *handle, int *dmabuf_fd);

/* A dma-buf into GPU gpu's address space at va (not mapped yet): *handle. */
int tplan_kfd_import(struct tplan_kfd *k, uint32_t gpu, int dmabuf_fd, uint64_t va,
		     uint64_t *handle);

/* A buffer onto and off GPU gpu's VM, and freed (once off every VM). */
int tplan_kfd_map(struct tplan_kfd *k, uint32_t gpu, uint64_t handle);
int tplan_kfd_unmap(struct tplan_kfd *k, uint32_t gpu, uint64_t handle);
int tplan_kfd_free(struct tplan_kfd *k, uint64_t handle);

/* The queue type and engine for copies from GPU gpu to GPU peer_gpu. */
void tplan_kfd_pick_engine(const struct tplan_kfd *k, uint32_t gpu, uint32_t peer_gpu,
			   uint32_t *type, uint32_t *engine);

/*
 * An SDMA queue on GPU gpu, towards peer_gpu, over the queue memory the
 * rank mapped: ring (ring_size bytes) and ptr_page (one page).
 */
int tplan_kfd_queue_create(struct tplan_kfd *k, uint32_t gpu, uint32_t peer_gpu, void *ring,
			   uint32_t ring_size, void *ptr_page, struct tplan_kfd_queue *q);
int tplan_kfd_queue_destroy(struct tplan_kfd *k, struct tplan_kfd_queue *q);

#endif /* LIBTPLAN_KFD_H */
