// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD engine's module side, through raw ioctls, over the tests' KFD
 * stand-in: a heap handed over as a dma-buf at join, TPLAN_IOC_HEAP_EXPORT,
 * TPLAN_IOC_ADDR_MAP and TPLAN_IOC_QUEUE_ATTACH_KFD with the rules each
 * one enforces, and a put executed by the GPU's queue, rung by the module.
 * Two ranks in one process (two files), rank r on GPU r.  SKIPs without
 * /dev/tplan, /dev/kfd or a module that can drive KFD.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "tplan_selftest.h"
#include "tplan_sdma.h"
#include "kfd_abi.h"
#include "kfd.h"

#define HEAP	(1U << 20)
#define WORLD	2

struct kfd_rank {
	int fd;			/* /dev/tplan */
	int heap_fd;		/* its heap's dma-buf */
	uint64_t key;
	uint32_t rank;
	int join_ret;
};

static int gem_dmabuf(int render_fd, uint64_t size)
{
	union tplan_amdgpu_gem_create c = { .in = {
		.bo_size = size, .alignment = 4096, .domains = TPLAN_AMDGPU_GEM_DOMAIN_VRAM,
		.domain_flags = TPLAN_AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
	} };
	struct tplan_drm_prime_handle p = { .flags = O_CLOEXEC | O_RDWR };
	struct tplan_drm_gem_close gc;

	if (tplan_test_ioctl(render_fd, TPLAN_DRM_IOCTL_AMDGPU_GEM_CREATE, &c))
		return -1;
	p.handle = c.out.handle;
	gc = (struct tplan_drm_gem_close) { .handle = c.out.handle };
	if (tplan_test_ioctl(render_fd, TPLAN_DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		p.fd = -1;
	tplan_test_ioctl(render_fd, TPLAN_DRM_IOCTL_GEM_CLOSE, &gc);
	return p.fd;
}

static int kfd_join(struct kfd_rank *r, uint32_t engine, int heap_fd)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = r->key, .world_size = WORLD, .rank = r->rank,
		.heap_size = HEAP, .engine = engine, .sdma_ip = TPLAN_SDMA_440,
		.timeout_ms = TPLAN_TEST_TIMEOUT_MS, .heap_fd = heap_fd,
	};

	return tplan_test_ioctl(r->fd, TPLAN_IOC_GROUP_JOIN, &j);
}

static void *join_thread(void *arg)
{
	struct kfd_rank *r = arg;

	r->join_ret = kfd_join(r, TPLAN_ENGINE_KFD, r->heap_fd);
	return NULL;
}

FIXTURE(kfdeng) {
	struct tplan_kfd k;
	struct kfd_rank r[WORLD];
	uint64_t gpu_va[WORLD][WORLD];	/* rank r's view of heap s */
	void *va_resv[WORLD][WORLD];
	void *ring[WORLD], *ptr[WORLD];
	struct tplan_queue_info qi[WORLD];
	struct tplan_kfd_queue kq[WORLD];
	int queued[WORLD];
};

/*
 * Both ranks in this process, rank r's heap a dma-buf of GPU r: 0 or
 * -errno.  The caller checked that tplan and KFD are there.
 */
static int world_setup(FIXTURE_DATA(kfdeng) *self)
{
	pthread_t t;
	uint32_t i;
	int ret;

	ret = tplan_kfd_open(&self->k, NULL);
	if (ret)
		return ret;
	if (self->k.ngpus < WORLD)
		return -ENODEV;
	for (i = 0; i < WORLD; i++) {
		self->r[i].fd = tplan_test_open();
		if (self->r[i].fd < 0)
			return -errno;
		ret = tplan_kfd_acquire_vm(&self->k, i);
		if (ret)
			return ret;
		self->r[i].heap_fd = gem_dmabuf(self->k.gpu[i].render_fd, HEAP);
		if (self->r[i].heap_fd < 0)
			return -errno;
		self->r[i].key = self->r[0].key ? self->r[0].key : tplan_test_key();
		self->r[i].rank = i;
	}
	if (pthread_create(&t, NULL, join_thread, &self->r[1]))
		return -EAGAIN;
	join_thread(&self->r[0]);
	pthread_join(t, NULL);
	return self->r[0].join_ret ?: self->r[1].join_ret;
}

FIXTURE_SETUP(kfdeng)
{
	struct tplan_info info = { .size = sizeof(info) };
	uint32_t i;
	int fd;

	memset(self, 0, sizeof(*self));
	self->k.fd = -1;
	for (i = 0; i < WORLD; i++)
		self->r[i].fd = self->r[i].heap_fd = -1;
	TPLAN_OPEN_OR_SKIP(fd);
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_INFO, &info));
	close(fd);
	if (!(info.engines & TPLAN_ENGINE_KFD))
		SKIP(return, "tplan.ko cannot drive KFD here (built without dma-buf support)");
	if (access(TPLAN_KFD_PATH, F_OK))
		SKIP(return, "%s absent: the KFD stand-in (kfd_standin.ko) is not loaded",
		     TPLAN_KFD_PATH);
	ASSERT_EQ(0, world_setup(self));
}

FIXTURE_TEARDOWN(kfdeng)
{
	uint32_t i, s;

	for (i = 0; i < WORLD; i++) {
		if (self->queued[i])
			tplan_kfd_queue_destroy(&self->k, &self->kq[i]);
		if (self->ring[i])
			munmap(self->ring[i], self->qi[i].ring_size);
		if (self->ptr[i])
			munmap(self->ptr[i], 4096);
		for (s = 0; s < WORLD; s++)
			if (self->va_resv[i][s])
				munmap(self->va_resv[i][s], HEAP);
	}
	if (self->k.fd >= 0)
		tplan_kfd_close(&self->k);
	for (i = 0; i < WORLD; i++) {
		if (self->r[i].heap_fd >= 0)
			close(self->r[i].heap_fd);
		if (self->r[i].fd >= 0)
			close(self->r[i].fd);
	}
}

/* Rank r imports every heap into its GPU (at addresses it reserves) and registers its map. */
static int import_and_register(FIXTURE_DATA(kfdeng) *self, uint32_t r)
{
	struct tplan_addr_map_set m = {
		.size = sizeof(m), .count = WORLD, .heap_dev = (uintptr_t)self->gpu_va[r],
	};
	uint32_t s, id = self->k.gpu[r].gpu_id;
	int ret;

	for (s = 0; s < WORLD; s++) {
		struct tplan_heap_export e = { .size = sizeof(e), .rank = s };
		struct tplan_kfd_import_dmabuf_args im = { .gpu_id = id };
		struct tplan_kfd_map_memory_args mm = {
			.device_ids_array_ptr = (uintptr_t)&id, .n_devices = 1,
		};
		void *resv = mmap(NULL, HEAP, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				  -1, 0);

		if (resv == MAP_FAILED)
			return -errno;
		self->va_resv[r][s] = resv;
		ret = tplan_test_ioctl(self->r[r].fd, TPLAN_IOC_HEAP_EXPORT, &e);
		if (ret)
			return ret;
		im.va_addr = (uintptr_t)resv;
		im.dmabuf_fd = (uint32_t)e.fd;
		ret = tplan_test_ioctl(self->k.fd, TPLAN_KFD_IOC_IMPORT_DMABUF, &im);
		close(e.fd);
		if (ret)
			return ret;
		mm.handle = im.handle;
		ret = tplan_test_ioctl(self->k.fd, TPLAN_KFD_IOC_MAP_MEMORY_TO_GPU, &mm);
		if (ret)
			return ret;
		self->gpu_va[r][s] = (uintptr_t)resv;
	}
	return tplan_test_ioctl(self->r[r].fd, TPLAN_IOC_ADDR_MAP, &m);
}

/* Map rank r's queue to peer, make a KFD queue on it; attach is the caller's. */
static int make_queue(FIXTURE_DATA(kfdeng) *self, uint32_t r, uint32_t peer)
{
	int fd = self->r[r].fd, ret;

	self->qi[r] = (struct tplan_queue_info) {
		.size = sizeof(self->qi[r]), .peer = peer, .flags = TPLAN_QUEUE_INFO_MAKE,
	};
	ret = tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_INFO, &self->qi[r]);
	if (ret)
		return ret;
	self->ring[r] = mmap(NULL, self->qi[r].ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			     (off_t)self->qi[r].ring_mmap_offset);
	self->ptr[r] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			    (off_t)self->qi[r].ptr_mmap_offset);
	if (self->ring[r] == MAP_FAILED || self->ptr[r] == MAP_FAILED)
		return -ENOMEM;
	ret = tplan_kfd_queue_create(&self->k, r, peer, self->ring[r], self->qi[r].ring_size,
				     self->ptr[r], &self->kq[r]);
	if (!ret)
		self->queued[r] = 1;
	return ret;
}

static struct tplan_queue_attach_kfd attach_args(FIXTURE_DATA(kfdeng) *self, uint32_t r,
						 uint32_t peer)
{
	return (struct tplan_queue_attach_kfd) {
		.size = sizeof(struct tplan_queue_attach_kfd), .peer = peer, .kfd_fd = self->k.fd,
		.ring_addr = (uintptr_t)self->ring[r], .ptr_addr = (uintptr_t)self->ptr[r],
		.doorbell_addr = (uintptr_t)self->kq[r].doorbell,
		.gpu_id = self->k.gpu[r].gpu_id, .queue_id = self->kq[r].queue_id,
	};
}

/* Rank 0's map registered and its queue to rank 1 on a KFD queue, attached: 0 or -errno. */
static int attach_rank0(FIXTURE_DATA(kfdeng) *self)
{
	struct tplan_queue_attach_kfd a;
	int ret = import_and_register(self, 0) ?: make_queue(self, 0, 1);

	if (ret)
		return ret;
	a = attach_args(self, 0, 1);
	return tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a);
}

/* Rank r's heap, mapped for the CPU through its dma-buf. */
static uint8_t *map_heap(FIXTURE_DATA(kfdeng) *self, uint32_t r)
{
	return mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED, self->r[r].heap_fd, 0);
}

/* The heap is the dma-buf: what one mapping writes, another reads. */
TEST_F(kfdeng, heap_is_the_dmabuf)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_heap_export e = { .size = sizeof(e), .rank = 1 };
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 1 };
	uint64_t *a, *b;

	/* Zeroed at join, whatever the GPU memory held. */
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_HEAP_EXPORT, &e));
	ASSERT_LE(0, e.fd);
	a = mmap(NULL, HEAP, PROT_READ | PROT_WRITE, MAP_SHARED, e.fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	b = (uint64_t *)map_heap(self, 1);
	ASSERT_NE(MAP_FAILED, b);
	ASSERT_EQ(0, a[HEAP / 8 - 1]);
	a[7] = 0x1234567890abcdefULL;
	ASSERT_EQ(0x1234567890abcdefULL, b[7]);
	/* The close-on-exec descriptor is a new one. */
	ASSERT_NE(self->r[1].heap_fd, e.fd);
	ASSERT_EQ(FD_CLOEXEC, fcntl(e.fd, F_GETFD) & FD_CLOEXEC);
	munmap(a, HEAP);
	munmap(b, HEAP);
	close(e.fd);
	/* No map yet: no address; tplan's own heap mapping is not offered. */
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_HEAP_INFO, &hi));
	ASSERT_EQ(0, hi.heap_base);
	ASSERT_EQ(MAP_FAILED, mmap(NULL, HEAP, PROT_READ, MAP_SHARED, self->r[0].fd,
				   (off_t)hi.mmap_offset));
	ASSERT_EQ(ENODEV, errno);
	e.rank = WORLD;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_HEAP_EXPORT, &e));
	e.rank = 0;
	e.flags = 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_HEAP_EXPORT, &e));
}

/* What a soft group and a join without a good dma-buf get. */
TEST_F(kfdeng, soft_groups_and_bad_heaps)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct kfd_rank s = { .key = tplan_test_key(), .rank = 0 };
	struct tplan_heap_export e = { .size = sizeof(e) };
	uint64_t dev = 1ULL << 40;
	struct tplan_addr_map_set m = {
		.size = sizeof(m), .count = 1, .heap_dev = (uintptr_t)&dev,
	};
	int small;

	s.fd = tplan_test_open();
	ASSERT_LE(0, s.fd);
	/* A soft heap has no dma-buf to take. */
	ASSERT_EQ(-EINVAL, kfd_join(&s, TPLAN_ENGINE_SOFT, self->r[0].heap_fd));
	/* Not a dma-buf; a dma-buf smaller than the heap. */
	s.rank = 0;
	ASSERT_EQ(-EINVAL, kfd_join(&s, TPLAN_ENGINE_KFD, s.fd));
	small = gem_dmabuf(self->k.gpu[0].render_fd, HEAP / 2);
	ASSERT_LE(0, small);
	ASSERT_EQ(-EINVAL, kfd_join(&s, TPLAN_ENGINE_KFD, small));
	ASSERT_EQ(-EBADF, kfd_join(&s, TPLAN_ENGINE_KFD, 1000000));
	close(small);
	/* The file is in no group: a soft join works, and the KFD calls refuse. */
	ASSERT_EQ(0, tplan_test_join_fd(s.fd, s.key, 1, 0, HEAP, 1000));
	ASSERT_EQ(-EOPNOTSUPP, tplan_test_ioctl(s.fd, TPLAN_IOC_HEAP_EXPORT, &e));
	ASSERT_EQ(-EOPNOTSUPP, tplan_test_ioctl(s.fd, TPLAN_IOC_ADDR_MAP, &m));
	close(s.fd);
}

TEST_F(kfdeng, addr_map_rules)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint64_t dev[WORLD + 1] = { 1ULL << 40, (1ULL << 40) + (2ULL << 20), 0 };
	struct tplan_addr_map_set m = {
		.size = sizeof(m), .count = WORLD, .heap_dev = (uintptr_t)dev,
	};
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = 1 };
	int fd = self->r[0].fd;

	m.count = WORLD + 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	m.count = WORLD;
	m.flags = 1;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	m.flags = 0;
	dev[1] = dev[0] + HEAP / 2;		/* overlaps heap 0 */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	dev[1] = dev[0] + HEAP + 8;		/* not page aligned */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	dev[1] = (1ULL << 47) - HEAP / 2;	/* runs past 2^47 */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	dev[1] = 0;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	m.heap_dev = 8;
	ASSERT_EQ(-EFAULT, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	m.heap_dev = (uintptr_t)dev;
	dev[1] = (1ULL << 47) - HEAP;
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	ASSERT_EQ(-EALREADY, tplan_test_ioctl(fd, TPLAN_IOC_ADDR_MAP, &m));
	/* HEAP_INFO answers from the caller's map, and only the caller's. */
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_HEAP_INFO, &hi));
	ASSERT_EQ(dev[1], hi.heap_base);
	ASSERT_EQ(0, tplan_test_ioctl(self->r[1].fd, TPLAN_IOC_HEAP_INFO, &hi));
	ASSERT_EQ(0, hi.heap_base);
}

TEST_F(kfdeng, attach_rules)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_put put = {
		.size = sizeof(put), .peer = 1, .length = 64,
	};
	struct tplan_queue_attach_kfd a;
	int fd = self->r[0].fd, status;
	pid_t pid;

	ASSERT_EQ(0, make_queue(self, 0, 1));
	a = attach_args(self, 0, 1);
	/* Before the map: no attaching; an unattached queue takes no work. */
	ASSERT_EQ(-ENXIO, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	ASSERT_EQ(-ENXIO, tplan_test_ioctl(fd, TPLAN_IOC_PUT, &put));
	ASSERT_EQ(0, import_and_register(self, 0));

	a.peer = 0;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.ring_addr += 4096;			/* not the start of the mapping */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.ptr_addr = a.ring_addr;		/* the ring is no pointer page */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.ptr_addr = self->gpu_va[0][1];	/* a heap of the map */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.doorbell_addr = (uintptr_t)self->ptr[0];	/* not KFD's doorbell page */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.doorbell_addr += 4;			/* not a 64-bit word */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a = attach_args(self, 0, 1);
	a.kfd_fd = fd;				/* the doorbell is not this file's */
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	a.kfd_fd = 1000000;
	ASSERT_EQ(-EBADF, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	/* Another process (a fork holding the file) may not. */
	a = attach_args(self, 0, 1);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a) == -EPERM ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
	ASSERT_EQ(-EALREADY, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_ATTACH_KFD, &a));
}

/* A put runs on the GPU's queue: the module rings the doorbell, the stand-in copies. */
TEST_F(kfdeng, put_runs_on_the_kfd_queue)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_put put = {
		.size = sizeof(put), .flags = TPLAN_PUT_SIGNAL, .peer = 1, .src_offset = 4096,
		.dst_offset = 8192, .length = 3 * 4096 + 8, .signal_offset = 64,
	};
	struct tplan_quiet qt = { .size = sizeof(qt), .peer = 1, .timeout_ms = TPLAN_TEST_TIMEOUT_MS };
	struct tplan_queue_info qi = { .size = sizeof(qi), .peer = 1 };
	uint8_t *h0, *h1;
	uint32_t i;
	int round;

	ASSERT_EQ(0, attach_rank0(self));
	h0 = map_heap(self, 0);
	h1 = map_heap(self, 1);
	ASSERT_NE(MAP_FAILED, h0);
	ASSERT_NE(MAP_FAILED, h1);
	for (round = 1; round <= 3; round++) {
		for (i = 0; i < put.length; i++)
			h0[put.src_offset + i] = (uint8_t)(i * 7 + round);
		ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_PUT, &put));
		ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt));
		for (i = 0; i < put.length; i++)
			ASSERT_EQ((uint8_t)(i * 7 + round), h1[put.dst_offset + i]);
		ASSERT_EQ((uint64_t)round, *(volatile uint64_t *)(h1 + put.signal_offset));
	}
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUEUE_INFO, &qi));
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	ASSERT_EQ(3, qi.done_seq);
	ASSERT_EQ(qi.wptr, qi.rptr);
	ASSERT_LE(3, qi.doorbells);
	/* The engine wrote rptr where KFD was told: the pointer page it reads. */
	ASSERT_EQ(qi.rptr, ((volatile uint64_t *)self->ptr[0])[TPLAN_QPTR_RPTR / 8]);
	munmap(h0, HEAP);
	munmap(h1, HEAP);
}

#define READY_OFF	0x100
#define ARRIVAL_OFF	0x200
#define CHAIN_DW	(TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW)

/* Rank 0's chain to rank 1, waiting on a ready gate nobody opens. */
static int submit_blocked_chain(FIXTURE_DATA(kfdeng) *self)
{
	struct tplan_sdma_poll_regmem poll = {
		.addr = self->gpu_va[0][0] + READY_OFF, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear cp = {
		.src = self->gpu_va[0][0] + 4096, .dst = self->gpu_va[0][1] + 4096, .bytes = 4096,
	};
	struct tplan_sdma_atomic add = {
		.addr = self->gpu_va[0][1] + ARRIVAL_OFF, .src_data = 1,
		.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_chain_desc d = {
		.ndw = CHAIN_DW, .ref = 1, .ready_offset = READY_OFF, .arrival_offset = ARRIVAL_OFF,
	};
	uint32_t dw[CHAIN_DW];
	struct tplan_chain_submit s = {
		.size = sizeof(s), .peer = 1, .nchains = 1, .ndw = CHAIN_DW,
		.chains = (uintptr_t)&d, .dwords = (uintptr_t)dw,
	};
	int n = 0;

	n += tplan_sdma_encode_poll_regmem(dw + n, CHAIN_DW - n, &poll);
	n += tplan_sdma_encode_copy_linear(dw + n, CHAIN_DW - n, &cp);
	n += tplan_sdma_encode_atomic(dw + n, CHAIN_DW - n, &add);
	if (n != CHAIN_DW)
		return -EINVAL;
	return tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_CHAIN_SUBMIT, &s);
}

/*
 * A raw chain on the GPU's queue waits for its shut gate; then either the
 * producer's mark opens it, from the CPU through the dma-buf's mapping, or
 * (flush) its owner's quiet with TPLAN_QUIET_OPEN_GATES does
 * (tplan_queue_flush()): the module opens the ready gate, which lies in
 * rank 0's heap, GPU memory that the module reaches as I/O memory.  Either
 * way the chain copies and signals.
 */
static void blocked_chain_runs(struct __test_metadata *_metadata,
			       FIXTURE_DATA(kfdeng) *self, bool flush)
{
	struct tplan_quiet qt = { .size = sizeof(qt), .peer = 1, .timeout_ms = TPLAN_TEST_TIMEOUT_MS };
	uint8_t pattern = flush ? 0xa5 : 0x5a;
	volatile uint64_t *arrival;
	uint8_t *h0, *h1;
	uint32_t i;

	ASSERT_EQ(0, attach_rank0(self));
	h0 = map_heap(self, 0);
	h1 = map_heap(self, 1);
	ASSERT_NE(MAP_FAILED, h0);
	ASSERT_NE(MAP_FAILED, h1);
	arrival = (volatile uint64_t *)(h1 + ARRIVAL_OFF);
	for (i = 0; i < 4096; i++)
		h0[4096 + i] = (uint8_t)(i ^ pattern);
	ASSERT_EQ(0, submit_blocked_chain(self));
	/* The gate is shut: nothing arrives, and the queue holds the chain. */
	tplan_sleep_ms(300);
	ASSERT_EQ(0, *arrival);
	ASSERT_EQ(-EBUSY, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt));
	if (flush) {
		qt.flags = TPLAN_QUIET_OPEN_GATES;
		ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt));
		/* The module's store, seen through the owner's mapping of the GPU memory. */
		ASSERT_EQ(1, *(volatile uint64_t *)(h0 + READY_OFF));
	} else {
		__atomic_store_n((uint64_t *)(h0 + READY_OFF), 1, __ATOMIC_RELEASE);
		for (i = 0; i < TPLAN_TEST_TIMEOUT_MS / 10 && !*arrival; i++)
			tplan_sleep_ms(10);
	}
	ASSERT_EQ(1, *arrival);
	for (i = 0; i < 4096; i++)
		ASSERT_EQ((uint8_t)(i ^ pattern), h1[4096 + i]);
	if (!flush)
		ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt));
	munmap(h0, HEAP);
	munmap(h1, HEAP);
}

TEST_F(kfdeng, chain_waits_for_its_gate)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	blocked_chain_runs(_metadata, self, false);
}

TEST_F(kfdeng, quiet_opening_the_gates_lets_a_raw_chain_run)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	blocked_chain_runs(_metadata, self, true);
}

/*
 * Only the process that joined puts work on its rank's queues: a fork
 * holding the file could write packets, but not ring the doorbell, which
 * is a page of the owner's address space.  Refused before anything is
 * written (EPERM), so the bytes never wait in the ring for the owner's
 * next doorbell; and the owner goes on as before.
 */
TEST_F(kfdeng, a_fork_cannot_put_submit_or_quiet)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_put put = {
		.size = sizeof(put), .flags = TPLAN_PUT_SIGNAL, .peer = 1, .src_offset = 4096,
		.dst_offset = 8192, .length = 4096, .signal_offset = 64,
	};
	struct tplan_quiet qt = { .size = sizeof(qt), .peer = 1, .timeout_ms = TPLAN_TEST_TIMEOUT_MS };
	struct tplan_queue_info before = { .size = sizeof(before), .peer = 1 };
	struct tplan_queue_info after = { .size = sizeof(after), .peer = 1 };
	int status;
	pid_t pid;

	ASSERT_EQ(0, attach_rank0(self));
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUEUE_INFO, &before));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_PUT, &put) != -EPERM)
			_exit(1);
		if (submit_blocked_chain(self) != -EPERM)
			_exit(2);
		if (tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt) != -EPERM)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Nothing written, nothing rung. */
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUEUE_INFO, &after));
	EXPECT_EQ(before.wptr, after.wptr);
	EXPECT_EQ(before.doorbells, after.doorbells);
	/* The owner's own put runs. */
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_PUT, &put));
	ASSERT_EQ(0, tplan_test_ioctl(self->r[0].fd, TPLAN_IOC_QUIET, &qt));
}

/*
 * A process killed while its KFD queue holds a chain blocked on a gate:
 * the module keeps the queue's ring past KFD's teardown (freed later, or
 * at rmmod), and everything goes on.  The VM run's dmesg scan (KASAN on
 * the debug kernel) and rmmod check that nothing was used after it was
 * freed, or leaked.
 */
TEST_F(kfdeng, sigkill_while_a_chain_waits)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int ready[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		FIXTURE_DATA(kfdeng) *d = calloc(1, sizeof(*d));

		/* A process of its own for KFD and for tplan: a group of its own. */
		if (!d || world_setup(d) || attach_rank0(d) || submit_blocked_chain(d) ||
		    write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	tplan_sleep_ms(200);	/* the queue is in its POLL */
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	close(ready[0]);
}

TEST_HARNESS_MAIN
