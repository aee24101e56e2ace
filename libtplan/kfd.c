// SPDX-License-Identifier: MIT
/* libtplan's KFD glue: kfd.h says what and why. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kfd.h"
#include "kfd_abi.h"

#define KFD_PAGE 4096U

static int kfd_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

/* "key value" of a topology properties file; -1 if absent. */
static long long kfd_prop(const char *path, const char *key)
{
	char line[256], k[128];
	long long v, found = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static void kfd_topology(struct tplan_kfd *k)
{
	char path[256];
	uint32_t node, link;
	long long v;

	k->ngpus = 0;
	for (node = 0; node < 256 && k->ngpus < TPLAN_KFD_MAX_GPUS; node++) {
		struct tplan_kfd_gpu *g = &k->gpu[k->ngpus];
		unsigned int id = 0;
		FILE *f;

		snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/gpu_id", node);
		f = fopen(path, "re");
		if (!f)
			break;
		if (fscanf(f, "%u", &id) != 1)
			id = 0;
		fclose(f);
		if (!id)
			continue;	/* a CPU node */
		memset(g, 0, sizeof(*g));
		g->render_fd = -1;
		g->node = node;
		g->gpu_id = id;
		snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/properties", node);
		g->gfx_target_version = (uint32_t)kfd_prop(path, "gfx_target_version");
		g->render_minor = (uint32_t)kfd_prop(path, "drm_render_minor");
		v = kfd_prop(path, "num_sdma_engines");
		g->num_sdma = v > 0 ? (uint32_t)v : 0;
		v = kfd_prop(path, "num_sdma_xgmi_engines");
		g->num_xgmi = v > 0 ? (uint32_t)v : 0;
		k->ngpus++;
	}
	/* Links name nodes; the GPUs' indices come from them once all are known. */
	for (node = 0; node < k->ngpus; node++) {
		struct tplan_kfd_gpu *g = &k->gpu[node];
		uint32_t i;

		for (link = 0; link < 256; link++) {
			snprintf(path, sizeof(path), TPLAN_KFD_TOPOLOGY "/%u/io_links/%u/properties",
				 g->node, link);
			v = kfd_prop(path, "node_to");
			if (v < 0)
				break;
			for (i = 0; i < k->ngpus; i++)
				if (k->gpu[i].node == (uint32_t)v) {
					long long m = kfd_prop(path, "recommended_sdma_engine_id_mask");

					g->rec_mask[i] = m > 0 ? (uint64_t)m : 0;
				}
		}
	}
}

int tplan_kfd_present(void)
{
	int fd = open(TPLAN_KFD_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int tplan_kfd_open(struct tplan_kfd *k, const char *path)
{
	struct tplan_kfd_get_version_args v = { 0, 0 };
	int ret;

	memset(k, 0, sizeof(*k));
	k->fd = open(path ? path : TPLAN_KFD_PATH, O_RDWR | O_CLOEXEC);
	if (k->fd < 0)
		return -errno;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_GET_VERSION, &v);
	if (ret)
		goto err;
	k->major = v.major_version;
	k->minor = v.minor_version;
	/* USERPTR at any address and IMPORT_DMABUF: KFD 1.x from 1.11 (Linux 6.1) on. */
	if (k->major != 1 || k->minor < 11) {
		ret = -EPROTO;
		goto err;
	}
	kfd_topology(k);
	if (!k->ngpus) {
		ret = -ENODEV;
		goto err;
	}
	return 0;
err:
	close(k->fd);
	k->fd = -1;
	return ret;
}

void tplan_kfd_close(struct tplan_kfd *k)
{
	uint32_t i;

	for (i = 0; i < k->ngpus; i++)
		if (k->gpu[i].render_fd >= 0) {
			close(k->gpu[i].render_fd);
			k->gpu[i].render_fd = -1;
		}
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

int tplan_kfd_acquire_vm(struct tplan_kfd *k, uint32_t gpu)
{
	struct tplan_kfd_acquire_vm_args a;
	struct tplan_kfd_gpu *g;
	char path[64];
	int fd, ret;

	if (gpu >= k->ngpus)
		return -EINVAL;
	g = &k->gpu[gpu];
	if (g->render_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), TPLAN_KFD_RENDER_FMT, g->render_minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	a.drm_fd = (uint32_t)fd;
	a.gpu_id = g->gpu_id;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_ACQUIRE_VM, &a);
	/*
	 * EBUSY: the process's VM of this GPU was acquired through another
	 * render file, by ROCr or by another rank that is a thread of this
	 * process (KFD keys its process by address space, so every /dev/kfd
	 * of the process shares the VM).  That VM is the one this file's
	 * calls use; the render file is still good for GEM_CREATE.
	 */
	if (ret && ret != -EBUSY) {
		close(fd);
		return ret;
	}
	g->render_fd = fd;
	return 0;
}

void tplan_kfd_pick_engine(const struct tplan_kfd *k, uint32_t gpu, uint32_t peer_gpu,
			   uint32_t *type, uint32_t *engine)
{
	const struct tplan_kfd_gpu *g = &k->gpu[gpu];
	uint64_t mask = peer_gpu < k->ngpus ? g->rec_mask[peer_gpu] : 0;

	*engine = 0;
	if (k->minor >= 17 && mask) {
		*type = TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID;
		*engine = (uint32_t)__builtin_ctzll(mask);
	} else if (peer_gpu != gpu && g->num_xgmi) {
		*type = TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI;
	} else {
		*type = TPLAN_KFD_QUEUE_TYPE_SDMA;
	}
}

/* One buffer on GPU gpu's VM, or off it: MAP/UNMAP_MEMORY_TO/FROM_GPU. */
static int kfd_map_call(struct tplan_kfd *k, uint32_t gpu, uint64_t handle, unsigned long req)
{
	struct tplan_kfd_map_memory_args m;
	uint32_t id;

	if (gpu >= k->ngpus)
		return -EINVAL;
	id = k->gpu[gpu].gpu_id;
	memset(&m, 0, sizeof(m));
	m.handle = handle;
	m.device_ids_array_ptr = (uintptr_t)&id;
	m.n_devices = 1;
	return kfd_ioctl(k->fd, req, &m);
}

int tplan_kfd_map(struct tplan_kfd *k, uint32_t gpu, uint64_t handle)
{
	return kfd_map_call(k, gpu, handle, TPLAN_KFD_IOC_MAP_MEMORY_TO_GPU);
}

int tplan_kfd_unmap(struct tplan_kfd *k, uint32_t gpu, uint64_t handle)
{
	return kfd_map_call(k, gpu, handle, TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU);
}

int tplan_kfd_free(struct tplan_kfd *k, uint64_t handle)
{
	struct tplan_kfd_free_memory_of_gpu_args f = { handle };

	return kfd_ioctl(k->fd, TPLAN_KFD_IOC_FREE_MEMORY_OF_GPU, &f);
}

/* A buffer and its mapping on its GPU's VM: the other way round. */
static int kfd_release(struct tplan_kfd *k, uint32_t gpu, uint64_t handle)
{
	int ret = tplan_kfd_unmap(k, gpu, handle);

	return ret ? ret : tplan_kfd_free(k, handle);
}

/* [p, p + size) as a USERPTR buffer at GPU address = CPU address, mapped on GPU gpu. */
static int kfd_userptr(struct tplan_kfd *k, uint32_t gpu, void *p, uint64_t size,
		       uint32_t flags, uint64_t *handle)
{
	struct tplan_kfd_alloc_memory_of_gpu_args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.va_addr = (uintptr_t)p;
	a.size = size;
	a.mmap_offset = (uintptr_t)p;
	a.gpu_id = k->gpu[gpu].gpu_id;
	a.flags = TPLAN_KFD_ALLOC_USERPTR | TPLAN_KFD_ALLOC_UNCACHED | flags;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_ALLOC_MEMORY_OF_GPU, &a);
	if (ret)
		return ret;
	ret = tplan_kfd_map(k, gpu, a.handle);
	if (ret) {
		tplan_kfd_free(k, a.handle);
		return ret;
	}
	*handle = a.handle;
	return 0;
}

int tplan_kfd_heap_create(struct tplan_kfd *k, uint32_t gpu, uint64_t size, uint64_t va,
			  uint64_t *handle, int *dmabuf_fd)
{
	int ret;

	*handle = 0;
	*dmabuf_fd = -1;
	if (gpu >= k->ngpus || !size || (size | va) & (KFD_PAGE - 1))
		return -EINVAL;
	ret = tplan_kfd_acquire_vm(k, gpu);
	if (ret)
		return ret;
	if (k->minor >= 12) {
		struct tplan_kfd_alloc_memory_of_gpu_args a;
		struct tplan_kfd_export_dmabuf_args e;

		/* PUBLIC: in the CPU's reach (the BAR), so the dma-buf can be mapped. */
		memset(&a, 0, sizeof(a));
		a.va_addr = va;
		a.size = size;
		a.gpu_id = k->gpu[gpu].gpu_id;
		a.flags = TPLAN_KFD_ALLOC_VRAM | TPLAN_KFD_ALLOC_WRITABLE | TPLAN_KFD_ALLOC_PUBLIC;
		ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_ALLOC_MEMORY_OF_GPU, &a);
		if (ret)
			return ret;
		memset(&e, 0, sizeof(e));
		e.handle = a.handle;
		e.flags = O_RDWR | O_CLOEXEC;
		ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_EXPORT_DMABUF, &e);
		if (ret) {
			tplan_kfd_free(k, a.handle);
			return ret;
		}
		*handle = a.handle;
		*dmabuf_fd = (int)e.dmabuf_fd;
	} else {
		union tplan_amdgpu_gem_create c;
		struct tplan_drm_prime_handle pr;
		struct tplan_drm_gem_close gc;
		int rfd = k->gpu[gpu].render_fd;

		/* KFD 1.11 exports nothing: the render node's GEM buffer, PRIMEd. */
		memset(&c, 0, sizeof(c));
		c.in.bo_size = size;
		c.in.alignment = KFD_PAGE;
		c.in.domains = TPLAN_AMDGPU_GEM_DOMAIN_VRAM;
		c.in.domain_flags = TPLAN_AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
		ret = kfd_ioctl(rfd, TPLAN_DRM_IOCTL_AMDGPU_GEM_CREATE, &c);
		if (ret)
			return ret;
		memset(&pr, 0, sizeof(pr));
		pr.handle = c.out.handle;
		pr.flags = O_RDWR | O_CLOEXEC;
		ret = kfd_ioctl(rfd, TPLAN_DRM_IOCTL_PRIME_HANDLE_TO_FD, &pr);
		/* The dma-buf holds the buffer: the GEM handle is not needed either way. */
		memset(&gc, 0, sizeof(gc));
		gc.handle = c.out.handle;
		kfd_ioctl(rfd, TPLAN_DRM_IOCTL_GEM_CLOSE, &gc);
		if (ret)
			return ret;
		*dmabuf_fd = pr.fd;
	}
	return 0;
}

int tplan_kfd_import(struct tplan_kfd *k, uint32_t gpu, int dmabuf_fd, uint64_t va,
		     uint64_t *handle)
{
	struct tplan_kfd_import_dmabuf_args a;
	int ret;

	if (gpu >= k->ngpus || dmabuf_fd < 0 || (va & (KFD_PAGE - 1)))
		return -EINVAL;
	ret = tplan_kfd_acquire_vm(k, gpu);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.va_addr = va;
	a.gpu_id = k->gpu[gpu].gpu_id;
	a.dmabuf_fd = (uint32_t)dmabuf_fd;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_IMPORT_DMABUF, &a);
	if (ret)
		return ret;
	*handle = a.handle;
	return 0;
}

int tplan_kfd_queue_create(struct tplan_kfd *k, uint32_t gpu, uint32_t peer_gpu, void *ring,
			   uint32_t ring_size, void *ptr_page, struct tplan_kfd_queue *q)
{
	struct tplan_kfd_create_queue_args a;
	struct tplan_kfd_destroy_queue_args d;
	uint64_t slice;
	char *db;
	int ret;

	memset(q, 0, sizeof(*q));
	if (gpu >= k->ngpus || !ring_size || (ring_size & (ring_size - 1)) ||
	    ((uintptr_t)ring | (uintptr_t)ptr_page) & (KFD_PAGE - 1))
		return -EINVAL;
	q->gpu = gpu;
	ret = tplan_kfd_acquire_vm(k, gpu);
	if (ret)
		return ret;
	/* The engine fetches the ring; it writes rptr into the pointer page. */
	ret = kfd_userptr(k, gpu, ring, ring_size,
			  TPLAN_KFD_ALLOC_WRITABLE | TPLAN_KFD_ALLOC_EXECUTABLE, &q->ring_handle);
	if (ret)
		return ret;
	ret = kfd_userptr(k, gpu, ptr_page, KFD_PAGE, TPLAN_KFD_ALLOC_WRITABLE, &q->ptr_handle);
	if (ret)
		goto err_ring;

	tplan_kfd_pick_engine(k, gpu, peer_gpu, &q->type, &q->engine);
	memset(&a, 0, sizeof(a));
	a.ring_base_address = (uintptr_t)ring;
	a.write_pointer_address = (uintptr_t)ptr_page;		/* TPLAN_QPTR_WPTR */
	a.read_pointer_address = (uintptr_t)ptr_page + 8;	/* TPLAN_QPTR_RPTR */
	a.ring_size = ring_size;
	a.gpu_id = k->gpu[gpu].gpu_id;
	a.queue_type = q->type;
	a.queue_percentage = TPLAN_KFD_MAX_QUEUE_PERCENTAGE;	/* 0 would never run */
	a.queue_priority = TPLAN_KFD_MAX_QUEUE_PRIORITY;
	a.sdma_engine_id = q->engine;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_CREATE_QUEUE, &a);
	if (ret)
		goto err_ptr;
	q->queue_id = a.queue_id;
	q->created = 1;

	/* The doorbell: the process's slice, whole, then the queue's offset in it. */
	slice = a.doorbell_offset & ~(TPLAN_KFD_DOORBELL_SLICE - 1);
	db = mmap(NULL, TPLAN_KFD_DOORBELL_SLICE, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd,
		  (off_t)slice);
	if (db == MAP_FAILED) {
		ret = -errno;
		goto err_queue;
	}
	q->doorbell_slice = db;
	q->doorbell = (volatile uint64_t *)(db + (a.doorbell_offset &
						 (TPLAN_KFD_DOORBELL_SLICE - 1)));
	return 0;

err_queue:
	d.queue_id = q->queue_id;
	d.pad = 0;
	kfd_ioctl(k->fd, TPLAN_KFD_IOC_DESTROY_QUEUE, &d);
	q->created = 0;
err_ptr:
	kfd_release(k, gpu, q->ptr_handle);
err_ring:
	kfd_release(k, gpu, q->ring_handle);
	return ret;
}

int tplan_kfd_queue_destroy(struct tplan_kfd *k, struct tplan_kfd_queue *q)
{
	struct tplan_kfd_destroy_queue_args d;
	int ret;

	if (!q->created)
		return 0;
	/* The queue first: KFD 1.17 keeps its buffers mapped until it is gone. */
	d.queue_id = q->queue_id;
	d.pad = 0;
	ret = kfd_ioctl(k->fd, TPLAN_KFD_IOC_DESTROY_QUEUE, &d);
	if (ret)
		return ret;
	q->created = 0;
	ret = kfd_release(k, q->gpu, q->ptr_handle);
	if (!ret)
		ret = kfd_release(k, q->gpu, q->ring_handle);
	if (q->doorbell_slice)
		munmap(q->doorbell_slice, TPLAN_KFD_DOORBELL_SLICE);
	q->doorbell_slice = NULL;
	q->doorbell = NULL;
	return ret;
}
