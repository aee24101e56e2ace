/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw KFD for the tests that talk to /dev/kfd themselves (the stand-in's
 * own test, the KFD engine's): open, topology, VM, buffers, dma-bufs,
 * SDMA queues and doorbells, through libtplan/kfd_abi.h.  Every helper
 * returns 0 or -errno.
 */
#ifndef TPLAN_KFD_TEST_H
#define TPLAN_KFD_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kfd_abi.h"

#define KT_MAX_GPUS 8

struct kt_gpu {
	uint32_t node;			/* topology node */
	uint32_t gpu_id;
	uint32_t gfx;			/* gfx_target_version */
	uint32_t render_minor;
	uint32_t num_sdma, num_xgmi, queues_per_engine;
	uint64_t rec_mask[KT_MAX_GPUS];	/* recommended engines towards GPU i (KFD 1.17) */
};

struct kt {
	int fd;
	uint32_t major, minor;
	uint32_t ngpus;
	struct kt_gpu gpu[KT_MAX_GPUS];
	int render_fd[KT_MAX_GPUS];
};

static inline int kt_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* "key value" of a topology properties file; -1 if absent. */
static inline long long kt_prop(const char *path, const char *key)
{
	char line[256], k[128];
	long long v, found = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static inline int kt_topology(struct kt *k)
{
	char path[256];
	uint32_t node, link;
	long long v;

	k->ngpus = 0;
	for (node = 0; node < 64 && k->ngpus < KT_MAX_GPUS; node++) {
		struct kt_gpu *g = &k->gpu[k->ngpus];
		FILE *f;

		snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/gpu_id", node);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%u", &g->gpu_id) != 1)
			g->gpu_id = 0;
		fclose(f);
		if (!g->gpu_id)
			continue;	/* a CPU node */
		snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/properties", node);
		g->node = node;
		g->gfx = kt_prop(path, "gfx_target_version");
		g->render_minor = kt_prop(path, "drm_render_minor");
		g->num_sdma = kt_prop(path, "num_sdma_engines");
		g->num_xgmi = kt_prop(path, "num_sdma_xgmi_engines");
		g->queues_per_engine = kt_prop(path, "num_sdma_queues_per_engine");
		for (link = 0; link < 64; link++) {
			snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/io_links/%u/properties",
				 node, link);
			v = kt_prop(path, "node_to");
			if (v < 0)
				break;
			if (v >= 1 && v <= KT_MAX_GPUS)
				g->rec_mask[v - 1] = kt_prop(path, "recommended_sdma_engine_id_mask");
		}
		k->ngpus++;
	}
	return k->ngpus ? 0 : -ENODEV;
}

/* /dev/kfd, its version and topology; -ENOENT where there is none. */
static inline int kt_open(struct kt *k)
{
	struct tplan_kfd_get_version_args v = { 0 };
	uint32_t i;
	int ret;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < KT_MAX_GPUS; i++)
		k->render_fd[i] = -1;
	k->fd = open(TPLAN_KFD_PATH, O_RDWR | O_CLOEXEC);
	if (k->fd < 0)
		return -errno;
	ret = kt_ioctl(k->fd, TPLAN_KFD_IOC_GET_VERSION, &v);
	if (!ret)
		ret = kt_topology(k);
	k->major = v.major_version;
	k->minor = v.minor_version;
	return ret;
}

static inline void kt_close(struct kt *k)
{
	uint32_t i;

	for (i = 0; i < KT_MAX_GPUS; i++)
		if (k->render_fd[i] >= 0)
			close(k->render_fd[i]);
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

static inline int kt_render_open(struct kt *k, uint32_t g)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), TPLAN_KFD_RENDER_FMT, k->gpu[g].render_minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static inline int kt_acquire_fd(struct kt *k, uint32_t g, int drm_fd)
{
	struct tplan_kfd_acquire_vm_args a = { .drm_fd = drm_fd, .gpu_id = k->gpu[g].gpu_id };

	return kt_ioctl(k->fd, TPLAN_KFD_IOC_ACQUIRE_VM, &a);
}

static inline int kt_acquire(struct kt *k, uint32_t g)
{
	int fd = kt_render_open(k, g);

	if (fd < 0)
		return fd;
	k->render_fd[g] = fd;
	return kt_acquire_fd(k, g, fd);
}

static inline int kt_alloc(struct kt *k, uint32_t g, uint64_t va, uint64_t size, uint32_t flags,
			   uint64_t user_addr, uint64_t *handle)
{
	struct tplan_kfd_alloc_memory_of_gpu_args a = {
		.va_addr = va, .size = size, .mmap_offset = user_addr,
		.gpu_id = k->gpu[g].gpu_id, .flags = flags,
	};
	int ret = kt_ioctl(k->fd, TPLAN_KFD_IOC_ALLOC_MEMORY_OF_GPU, &a);

	*handle = a.handle;
	return ret;
}

static inline int kt_map(struct kt *k, uint32_t g, uint64_t handle, int unmap)
{
	uint32_t id = k->gpu[g].gpu_id;
	struct tplan_kfd_map_memory_args a = {
		.handle = handle, .device_ids_array_ptr = (uintptr_t)&id, .n_devices = 1,
	};

	return kt_ioctl(k->fd, unmap ? TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU :
			TPLAN_KFD_IOC_MAP_MEMORY_TO_GPU, &a);
}

static inline int kt_free(struct kt *k, uint64_t handle)
{
	struct tplan_kfd_free_memory_of_gpu_args a = { .handle = handle };

	return kt_ioctl(k->fd, TPLAN_KFD_IOC_FREE_MEMORY_OF_GPU, &a);
}

/* Register [p, p + size) as a USERPTR buffer at GPU address = CPU address, and map it. */
static inline int kt_userptr(struct kt *k, uint32_t g, void *p, uint64_t size, uint64_t *handle)
{
	int ret = kt_alloc(k, g, (uintptr_t)p, size,
			   TPLAN_KFD_ALLOC_USERPTR | TPLAN_KFD_ALLOC_WRITABLE |
			   TPLAN_KFD_ALLOC_UNCACHED, (uintptr_t)p, handle);

	if (!ret)
		ret = kt_map(k, g, *handle, 0);
	return ret;
}

/* A range of CPU addresses nobody else gets, for a GPU address = CPU address. */
static inline void *kt_reserve(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * size bytes of VRAM of GPU g as a dma-buf (*fd): KFD's EXPORT_DMABUF
 * from 1.12 on (the buffer is also allocated and mapped at va: *handle),
 * else the render node's GEM_CREATE and PRIME (*handle 0).
 */
static inline int kt_vram_dmabuf(struct kt *k, uint32_t g, uint64_t va, uint64_t size,
				 uint64_t *handle, int *fd)
{
	int ret;

	*handle = 0;
	if (k->minor >= 12) {
		struct tplan_kfd_export_dmabuf_args e = { .flags = O_CLOEXEC | O_RDWR };

		ret = kt_alloc(k, g, va, size, TPLAN_KFD_ALLOC_VRAM | TPLAN_KFD_ALLOC_WRITABLE |
			       TPLAN_KFD_ALLOC_PUBLIC, 0, handle);
		if (!ret)
			ret = kt_map(k, g, *handle, 0);
		e.handle = *handle;
		if (!ret)
			ret = kt_ioctl(k->fd, TPLAN_KFD_IOC_EXPORT_DMABUF, &e);
		*fd = e.dmabuf_fd;
		return ret;
	} else {
		union tplan_amdgpu_gem_create c = { .in = {
			.bo_size = size, .alignment = 4096,
			.domains = TPLAN_AMDGPU_GEM_DOMAIN_VRAM,
			.domain_flags = TPLAN_AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
		} };
		struct tplan_drm_prime_handle ph = { .flags = O_CLOEXEC | O_RDWR };
		struct tplan_drm_gem_close gc = { 0 };

		ret = kt_ioctl(k->render_fd[g], TPLAN_DRM_IOCTL_AMDGPU_GEM_CREATE, &c);
		if (ret)
			return ret;
		ph.handle = gc.handle = c.out.handle;
		ret = kt_ioctl(k->render_fd[g], TPLAN_DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph);
		kt_ioctl(k->render_fd[g], TPLAN_DRM_IOCTL_GEM_CLOSE, &gc);
		*fd = ph.fd;
		return ret;
	}
}

/* Import a dma-buf at va on GPU g and map it there. */
static inline int kt_import(struct kt *k, uint32_t g, int fd, uint64_t va, uint64_t *handle)
{
	struct tplan_kfd_import_dmabuf_args a = {
		.va_addr = va, .gpu_id = k->gpu[g].gpu_id, .dmabuf_fd = fd,
	};
	int ret = kt_ioctl(k->fd, TPLAN_KFD_IOC_IMPORT_DMABUF, &a);

	*handle = a.handle;
	if (!ret)
		ret = kt_map(k, g, a.handle, 0);
	return ret;
}

/*
 * size bytes of GPU g's VRAM mapped in its VM at a reserved va, and in
 * this process at the same address through its dma-buf: *va.
 */
static inline int kt_vram(struct kt *k, uint32_t g, uint64_t size, uint64_t *va, uint64_t *handle)
{
	void *res = kt_reserve(size), *cpu;
	int fd, ret;

	if (!res)
		return -ENOMEM;
	*va = (uintptr_t)res;
	ret = kt_vram_dmabuf(k, g, *va, size, handle, &fd);
	if (ret)
		return ret;
	if (!*handle)
		ret = kt_import(k, g, fd, *va, handle);
	cpu = ret ? MAP_FAILED : mmap(res, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				      fd, 0);
	if (!ret && cpu == MAP_FAILED)
		ret = -errno;
	close(fd);
	return ret;
}

static inline int kt_create_queue(struct kt *k, uint32_t g, uint32_t type, uint32_t engine,
				  void *ring, uint32_t ring_size, void *ptr_page,
				  struct tplan_kfd_create_queue_args *q)
{
	*q = (struct tplan_kfd_create_queue_args) {
		.ring_base_address = (uintptr_t)ring,
		.write_pointer_address = (uintptr_t)ptr_page,
		.read_pointer_address = (uintptr_t)ptr_page + 8,
		.ring_size = ring_size, .gpu_id = k->gpu[g].gpu_id, .queue_type = type,
		.queue_percentage = 100, .queue_priority = 15, .sdma_engine_id = engine,
	};
	return kt_ioctl(k->fd, TPLAN_KFD_IOC_CREATE_QUEUE, q);
}

static inline int kt_destroy_queue(struct kt *k, uint32_t id)
{
	struct tplan_kfd_destroy_queue_args a = { .queue_id = id };

	return kt_ioctl(k->fd, TPLAN_KFD_IOC_DESTROY_QUEUE, &a);
}

/* The doorbell slice of the queue's GPU, mapped: the queue's doorbell. */
static inline volatile uint64_t *kt_doorbell(struct kt *k, const struct tplan_kfd_create_queue_args *q)
{
	uint64_t off = q->doorbell_offset & ~(TPLAN_KFD_DOORBELL_SLICE - 1);
	char *p = mmap(NULL, TPLAN_KFD_DOORBELL_SLICE, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd,
		       (off_t)off);

	if (p == MAP_FAILED)
		return NULL;
	return (volatile uint64_t *)(p + (q->doorbell_offset & (TPLAN_KFD_DOORBELL_SLICE - 1)));
}

#endif /* TPLAN_KFD_TEST_H */
