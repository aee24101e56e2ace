// SPDX-License-Identifier: MIT
/*
 * The KFD engine, a rank's side (uapi/tplan.h, "The KFD engine"): what
 * tplan_ctx_join() does around the kernel's join when the group's queues
 * are its GPUs' SDMA queues, and what tplan_ctx_close() undoes.
 *
 * Before the join: the rank's own /dev/kfd, its GPU (TPLAN_KFD_GPU, an
 * index in KFD's topology, or rank % GPUs), that GPU's VM, and the rank's
 * heap in the GPU's memory as a dma-buf, which the join hands the module.
 * After it:
 *  - every rank's GPU (an all-gather of KFD's gpu_ids), so that each queue
 *    goes on the engine towards its peer's GPU;
 *  - every rank's heap in this GPU's address space, imported from a
 *    dma-buf of it (TPLAN_IOC_HEAP_EXPORT; this rank's own is at hand) and
 *    mapped at an address this process reserved for it, so that ranks
 *    that are threads of one process, which share its KFD process and so
 *    its GPU VMs, never pick the same one; and in the CPU's at the same
 *    address, the dma-buf mapped over the reservation: tplan_heap_ptr()
 *    and tplan_heap_devaddr() agree, so an address in a heap (a plan's
 *    gate table in tplan_plan_start()'s handle) serves a host producer
 *    and a GPU kernel alike;
 *  - the address map: those addresses (TPLAN_IOC_ADDR_MAP), read back
 *    through TPLAN_IOC_HEAP_INFO;
 *  - for each peer, the queue's ring and pointer page mapped, a KFD SDMA
 *    queue made on them (kfd.c) and attached (TPLAN_IOC_QUEUE_ATTACH_KFD).
 * Leaving is the other way round: each queue quieted (unless the group
 * broke), the KFD queues destroyed (kfd.c's order), the heaps off the GPU
 * and the CPU, /dev/kfd closed; closing the tplan file then frees the
 * module's side.  A join that fails undoes what it did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "libtplan.h"
#include "libtplan_priv.h"
#include "kfd.h"
#include "kfd_abi.h"

/* A queue's pointer page. */
#define KFD_PTR_PAGE 4096U
/*
 * Heaps' GPU addresses are 2 MiB aligned, so that the GPU can map them
 * with its large pages.
 */
#define KFD_HEAP_ALIGN (2ULL << 20)
/* How long leaving waits for a queue's queued work to finish. */
#define KFD_QUIET_MS 2000

/* A heap as this rank's GPU sees it. */
struct kfd_heap {
	uint64_t va;		/* reserved address range, the heap's GPU address; 0: none */
	uint64_t handle;	/* KFD's buffer at va; 0: none */
	int mapped;		/* on the GPU's VM */
};

/* The (this rank -> peer) queue on a KFD SDMA queue. */
struct kfd_peer_queue {
	void *ring, *ptr;	/* this rank's mappings of its ring and pointer page */
	uint32_t ring_size;
	struct tplan_kfd_queue q;
	int attached;
};

struct tplan_kfd_rank {
	struct tplan_kfd k;
	uint32_t gpu;			/* index in k.gpu */
	uint32_t world_size;		/* of heaps and queues; 0 before the join */
	uint64_t heap_size;
	int heap_fd;			/* this rank's heap's dma-buf; -1 */
	struct kfd_heap own;		/* this rank's heap, until heaps[rank] takes it */
	struct kfd_heap *heaps;		/* by rank */
	struct kfd_peer_queue *queues;	/* by peer; this rank's own unused */
};

/*
 * size bytes of address space, KFD_HEAP_ALIGN aligned, reserved and
 * inaccessible: nothing else of the process lands there, so it is free
 * for a heap in every GPU VM of the process.  (The CPU addresses below
 * 2^47 are GPU addresses too.)
 */
static int va_reserve(uint64_t size, uint64_t *va)
{
	uint64_t len = size + KFD_HEAP_ALIGN, start, end, base;
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	base = (uintptr_t)p;
	start = (base + KFD_HEAP_ALIGN - 1) & ~(KFD_HEAP_ALIGN - 1);
	end = start + size;
	if (start > base)
		munmap(p, start - base);
	if (base + len > end)
		munmap((void *)(uintptr_t)end, base + len - end);
	*va = start;
	return 0;
}

/* A heap off the GPU and freed, then its address range (and the CPU's mapping there). */
static void heap_release(struct tplan_kfd_rank *kr, struct kfd_heap *h)
{
	if (h->mapped)
		tplan_kfd_unmap(&kr->k, kr->gpu, h->handle);
	if (h->handle)
		tplan_kfd_free(&kr->k, h->handle);
	if (h->va)
		munmap((void *)(uintptr_t)h->va, kr->heap_size);
	memset(h, 0, sizeof(*h));
}

/* The KFD queue first (kfd.c: KFD 1.17 pins ring and pointer page while it lives). */
static void queue_release(struct kfd_peer_queue *pq, struct tplan_kfd *k)
{
	tplan_kfd_queue_destroy(k, &pq->q);
	if (pq->ring)
		munmap(pq->ring, pq->ring_size);
	if (pq->ptr)
		munmap(pq->ptr, KFD_PTR_PAGE);
	memset(pq, 0, sizeof(*pq));
}

/*
 * Everything of kr, queues first; ctx (NULL before the join) is whose
 * queues to quiet and whose heap pointers go with the heaps.
 */
static void kfd_rank_release(struct tplan_ctx *ctx, struct tplan_kfd_rank *kr, int quiet)
{
	uint32_t i;
	int ret;

	/*
	 * What the module queued runs out before KFD's queue goes; a broken
	 * group's queues are stopped already, and the other ranks' heaps
	 * stay alive through this rank's imports until they are freed.
	 */
	for (i = 0; ctx && quiet && i < kr->world_size; i++) {
		if (!kr->queues[i].attached)
			continue;
		ret = tplan_quiet(ctx, i, KFD_QUIET_MS);
		if (ret == -ECONNRESET)
			break;
	}
	for (i = 0; i < kr->world_size; i++)
		queue_release(&kr->queues[i], &kr->k);
	for (i = 0; i < kr->world_size; i++) {
		heap_release(kr, &kr->heaps[i]);
		/* It was the mapping at the heap's address, gone with it. */
		if (ctx && ctx->heaps)
			ctx->heaps[i].ptr = NULL;
	}
	heap_release(kr, &kr->own);
	if (kr->heap_fd >= 0)
		close(kr->heap_fd);
	tplan_kfd_close(&kr->k);
	free(kr->queues);
	free(kr->heaps);
	free(kr);
}

void tplan_kfd_leave(struct tplan_ctx *ctx, int quiet)
{
	if (ctx->kfd)
		kfd_rank_release(ctx, ctx->kfd, quiet);
	ctx->kfd = NULL;
}

void tplan_kfd_rank_free(struct tplan_kfd_rank *kr)
{
	if (kr)
		kfd_rank_release(NULL, kr, 0);
}

/* ---- Before the join ----------------------------------------------------------- */

/* The GPU this rank uses: TPLAN_KFD_GPU, or rank % GPUs. */
static int pick_gpu(struct tplan_ctx *ctx, struct tplan_kfd_rank *kr, uint32_t rank)
{
	const char *env = getenv("TPLAN_KFD_GPU");
	unsigned long gpu;
	char *end;

	if (!env || !*env) {
		kr->gpu = rank % kr->k.ngpus;
		return 0;
	}
	errno = 0;
	gpu = strtoul(env, &end, 10);
	if (errno || *end || gpu >= kr->k.ngpus)
		return tplan_set_error(ctx, -EINVAL,
				       "KFD engine: TPLAN_KFD_GPU=%s: a GPU's index, 0..%u", env,
				       kr->k.ngpus - 1);
	kr->gpu = (uint32_t)gpu;
	return 0;
}

int tplan_kfd_join_prepare(struct tplan_ctx *ctx, uint64_t heap_size, uint32_t rank,
			   uint32_t *sdma_ip, struct tplan_kfd_rank **krp, int *heap_fd)
{
	uint32_t gpu_ip;
	struct tplan_kfd_rank *kr;
	uint32_t gpu_id;
	int ret;

	*krp = NULL;
	*heap_fd = -1;
	/* The kernel's rule, checked before GPU memory is taken for it. */
	if (heap_size < 4096 || heap_size > TPLAN_HEAP_SIZE_MAX || heap_size % 4096)
		return tplan_set_error(ctx, -EINVAL,
				       "tplan_ctx_join: heap_size %llu: a multiple of 4096, 4 KiB..%llu",
				       (unsigned long long)heap_size, TPLAN_HEAP_SIZE_MAX);
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return tplan_set_error(ctx, -ENOMEM, "KFD engine: no memory");
	kr->heap_fd = -1;
	kr->heap_size = heap_size;
	ret = tplan_kfd_open(&kr->k, NULL);
	if (ret) {
		free(kr);
		return tplan_set_error(ctx, ret, "KFD engine: %s: %s", TPLAN_KFD_PATH,
				       ret == -EPROTO ? "KFD older than 1.11" :
				       ret == -ENODEV ? "no GPU in its topology" : strerror(-ret));
	}
	ret = pick_gpu(ctx, kr, rank);
	if (ret)
		goto err;
	gpu_id = kr->k.gpu[kr->gpu].gpu_id;
	/* The packet limits are the GPU's: gfx94x (MI300) has SDMA 4.4.2, gfx90a 4.4.0. */
	gpu_ip = kr->k.gpu[kr->gpu].gfx_target_version >= 90400 ? TPLAN_SDMA_442 : TPLAN_SDMA_440;
	if (!*sdma_ip) {
		*sdma_ip = gpu_ip;
	} else if (*sdma_ip != gpu_ip) {
		ret = tplan_set_error(ctx, -EINVAL,
				      "KFD engine: sdma_ip %#x, but GPU %u (gfx_target_version %u) "
				      "has SDMA %#x", *sdma_ip, kr->gpu,
				      kr->k.gpu[kr->gpu].gfx_target_version, gpu_ip);
		goto err;
	}
	ret = tplan_kfd_acquire_vm(&kr->k, kr->gpu);
	if (ret) {
		tplan_set_error(ctx, ret, "KFD engine: the VM of GPU %u (gpu_id %u) through %s: %s",
				kr->gpu, gpu_id, "its render node", strerror(-ret));
		goto err;
	}
	ret = va_reserve(heap_size, &kr->own.va);
	if (ret) {
		tplan_set_error(ctx, ret, "KFD engine: %llu bytes of address space for the heap: %s",
				(unsigned long long)heap_size, strerror(-ret));
		goto err;
	}
	ret = tplan_kfd_heap_create(&kr->k, kr->gpu, heap_size, kr->own.va, &kr->own.handle,
				    &kr->heap_fd);
	if (ret) {
		tplan_set_error(ctx, ret, "KFD engine: a heap of %llu bytes in GPU %u's memory (%s): %s",
				(unsigned long long)heap_size, kr->gpu,
				kr->k.minor >= 12 ? "ALLOC_MEMORY_OF_GPU, EXPORT_DMABUF" :
						    "GEM_CREATE, PRIME_HANDLE_TO_FD",
				strerror(-ret));
		goto err;
	}
	*heap_fd = kr->heap_fd;
	*krp = kr;
	return 0;

err:
	kfd_rank_release(NULL, kr, 0);
	return ret;
}

/* ---- After the join ------------------------------------------------------------ */

/* Every rank's GPU as an index in this rank's topology (its own, for one not in it). */
static int gather_gpus(struct tplan_ctx *ctx, uint32_t timeout_ms, uint32_t *gpu_of)
{
	struct tplan_kfd_rank *kr = ctx->kfd;
	uint32_t mine = kr->k.gpu[kr->gpu].gpu_id, *ids, r, i;
	int ret;

	ids = calloc(ctx->world_size, sizeof(*ids));
	if (!ids)
		return tplan_set_error(ctx, -ENOMEM, "KFD engine: no memory");
	ret = tplan_all_gather(ctx, &mine, sizeof(mine), ids, timeout_ms);
	if (ret) {
		tplan_set_error(ctx, ret, "KFD engine: the ranks' GPUs (an all-gather): %s",
				strerror(-ret));
		goto out;
	}
	for (r = 0; r < ctx->world_size; r++) {
		gpu_of[r] = kr->gpu;
		for (i = 0; i < kr->k.ngpus; i++)
			if (kr->k.gpu[i].gpu_id == ids[r])
				gpu_of[r] = i;
	}
out:
	free(ids);
	return ret;
}

/* Rank r's heap into this GPU's VM and this process; fills ctx->heaps[r]. */
static int heap_attach(struct tplan_ctx *ctx, uint32_t r)
{
	struct tplan_kfd_rank *kr = ctx->kfd;
	struct kfd_heap *h = &kr->heaps[r];
	char what[64];
	void *p;
	int fd, ret;

	if (r == ctx->rank) {
		*h = kr->own;
		memset(&kr->own, 0, sizeof(kr->own));
		fd = kr->heap_fd;
		kr->heap_fd = -1;
	} else {
		struct tplan_heap_export e = { .size = sizeof(e), .rank = r };

		snprintf(what, sizeof(what), "TPLAN_IOC_HEAP_EXPORT of rank %u", r);
		ret = tplan_ioctl(ctx, TPLAN_IOC_HEAP_EXPORT, &e, what);
		if (ret)
			return ret;
		fd = e.fd;
		ret = va_reserve(kr->heap_size, &h->va);
		if (ret) {
			tplan_set_error(ctx, ret, "KFD engine: address space for rank %u's heap: %s",
					r, strerror(-ret));
			goto out;
		}
	}
	/* This rank's own heap is KFD's buffer already where KFD made it. */
	if (!h->handle) {
		ret = tplan_kfd_import(&kr->k, kr->gpu, fd, h->va, &h->handle);
		if (ret) {
			tplan_set_error(ctx, ret,
					"KFD engine: IMPORT_DMABUF of rank %u's heap at %#llx on GPU %u: %s",
					r, (unsigned long long)h->va, kr->gpu, strerror(-ret));
			goto out;
		}
	}
	ret = tplan_kfd_map(&kr->k, kr->gpu, h->handle);
	if (ret) {
		tplan_set_error(ctx, ret,
				"KFD engine: MAP_MEMORY_TO_GPU of rank %u's heap at %#llx on GPU %u: %s",
				r, (unsigned long long)h->va, kr->gpu, strerror(-ret));
		goto out;
	}
	h->mapped = 1;
	/*
	 * The CPU's view of the GPU memory (on hardware, VRAM through the
	 * BAR) at its GPU address, in place of the reservation.
	 */
	p = mmap((void *)(uintptr_t)h->va, kr->heap_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		ret = tplan_set_error(ctx, -errno, "KFD engine: mmap of rank %u's heap at %#llx: %s",
				      r, (unsigned long long)h->va, strerror(errno));
		/* A MAP_FIXED that failed may have unmapped the range: reserve it again. */
		mmap((void *)(uintptr_t)h->va, kr->heap_size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		goto out;
	}
	ctx->heaps[r].ptr = p;
	ctx->heaps[r].devaddr = h->va;
	ret = 0;
out:
	/* The import and the mapping hold the dma-buf; the module holds its own. */
	close(fd);
	return ret;
}

/* Register the address map, then read it back as HEAP_INFO tells it. */
static int addr_map_register(struct tplan_ctx *ctx)
{
	struct tplan_kfd_rank *kr = ctx->kfd;
	struct tplan_addr_map_set m = { .size = sizeof(m), .count = ctx->world_size };
	uint64_t *dev;
	uint32_t r;
	int ret;

	dev = calloc(ctx->world_size, sizeof(*dev));
	if (!dev)
		return tplan_set_error(ctx, -ENOMEM, "KFD engine: no memory");
	for (r = 0; r < ctx->world_size; r++)
		dev[r] = kr->heaps[r].va;
	m.heap_dev = (uintptr_t)dev;
	ret = tplan_ioctl(ctx, TPLAN_IOC_ADDR_MAP, &m, "TPLAN_IOC_ADDR_MAP");
	free(dev);
	for (r = 0; r < ctx->world_size && !ret; r++) {
		struct tplan_heap_info hi = { .size = sizeof(hi), .rank = r };

		ret = tplan_ioctl(ctx, TPLAN_IOC_HEAP_INFO, &hi, "TPLAN_IOC_HEAP_INFO");
		if (ret)
			break;
		if (hi.heap_size != ctx->heap_size || hi.heap_base != kr->heaps[r].va)
			ret = tplan_set_error(ctx, -EPROTO,
					      "heap of rank %u: %llu bytes at %#llx registered, HEAP_INFO says %llu at %#llx",
					      r, (unsigned long long)ctx->heap_size,
					      (unsigned long long)kr->heaps[r].va,
					      (unsigned long long)hi.heap_size,
					      (unsigned long long)hi.heap_base);
		/* The same on every rank. */
		if (r == ctx->rank)
			ctx->gate_area = hi.gate_area_offset < hi.heap_size ?
					 hi.gate_area_offset : hi.heap_size;
	}
	return ret;
}

/* The (this rank -> peer) queue onto a KFD SDMA queue of this GPU towards peer_gpu. */
static int queue_attach(struct tplan_ctx *ctx, uint32_t peer, uint32_t peer_gpu)
{
	struct tplan_kfd_rank *kr = ctx->kfd;
	struct kfd_peer_queue *pq = &kr->queues[peer];
	struct tplan_queue_info qi = {
		.size = sizeof(qi), .peer = peer, .flags = TPLAN_QUEUE_INFO_MAKE,
	};
	struct tplan_queue_attach_kfd a = { .size = sizeof(a), .peer = peer };
	void *p;
	int ret;

	ret = tplan_ioctl(ctx, TPLAN_IOC_QUEUE_INFO, &qi, "TPLAN_IOC_QUEUE_INFO (make)");
	if (ret)
		return ret;
	p = mmap(NULL, qi.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->fd,
		 (off_t)qi.ring_mmap_offset);
	if (p == MAP_FAILED)
		return tplan_set_error(ctx, -errno, "KFD engine: mmap of the ring to rank %u: %s",
				       peer, strerror(errno));
	pq->ring = p;
	pq->ring_size = qi.ring_size;
	p = mmap(NULL, KFD_PTR_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->fd,
		 (off_t)qi.ptr_mmap_offset);
	if (p == MAP_FAILED)
		return tplan_set_error(ctx, -errno,
				       "KFD engine: mmap of the pointer page to rank %u: %s", peer,
				       strerror(errno));
	pq->ptr = p;
	ret = tplan_kfd_queue_create(&kr->k, kr->gpu, peer_gpu, pq->ring, pq->ring_size, pq->ptr,
				     &pq->q);
	if (ret)
		return tplan_set_error(ctx, ret,
				       "KFD engine: the SDMA queue to rank %u (GPU %u towards GPU %u): %s",
				       peer, kr->gpu, peer_gpu, strerror(-ret));
	a.kfd_fd = kr->k.fd;
	a.ring_addr = (uintptr_t)pq->ring;
	a.ptr_addr = (uintptr_t)pq->ptr;
	a.doorbell_addr = (uintptr_t)pq->q.doorbell;
	a.gpu_id = kr->k.gpu[kr->gpu].gpu_id;
	a.queue_id = pq->q.queue_id;
	ret = tplan_ioctl(ctx, TPLAN_IOC_QUEUE_ATTACH_KFD, &a, "TPLAN_IOC_QUEUE_ATTACH_KFD");
	if (ret)
		return ret;
	pq->attached = 1;
	return 0;
}

int tplan_kfd_join_attach(struct tplan_ctx *ctx, uint32_t timeout_ms)
{
	struct tplan_kfd_rank *kr = ctx->kfd;
	uint32_t *gpu_of, r;
	int ret;

	kr->heaps = calloc(ctx->world_size, sizeof(*kr->heaps));
	kr->queues = calloc(ctx->world_size, sizeof(*kr->queues));
	gpu_of = calloc(ctx->world_size, sizeof(*gpu_of));
	if (!kr->heaps || !kr->queues || !gpu_of) {
		ret = tplan_set_error(ctx, -ENOMEM, "KFD engine: no memory");
		goto out;
	}
	kr->world_size = ctx->world_size;
	ret = gather_gpus(ctx, timeout_ms, gpu_of);
	for (r = 0; r < ctx->world_size && !ret; r++)
		ret = heap_attach(ctx, r);
	if (!ret)
		ret = addr_map_register(ctx);
	for (r = 0; r < ctx->world_size && !ret; r++)
		if (r != ctx->rank)
			ret = queue_attach(ctx, r, gpu_of[r]);
out:
	free(gpu_of);
	return ret;
}
