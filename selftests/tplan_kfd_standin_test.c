// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' KFD stand-in (selftests/kfd_standin, loaded by the VM plan's
 * "kmod kfd_standin" line): the subset of the KFD ABI tplan's KFD engine
 * uses, with the rules of the KFD version it was built for.  SKIPs where
 * /dev/kfd is absent.
 *
 * Ring and pointer page are anonymous user memory registered as USERPTR
 * buffers at GPU address = CPU address, as libtplan registers tplan's;
 * data and gates are "VRAM", mapped into this process through its
 * dma-buf at the address the GPU VM has it.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "tplan_sdma.h"
#include "tplan_kfd.h"

#define RING_SIZE	(64U << 10)
#define PAGE		4096U
#define VRAM_SIZE	(1U << 20)

static void *anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Wait up to 5 s for *word to read want. */
static int wait_u64(volatile uint64_t *word, uint64_t want)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == want)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int wait_u32(volatile uint32_t *word, uint32_t want)
{
	int i;

	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == want)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

FIXTURE(kfd) {
	struct kt k;
	uint32_t *ring;
	volatile uint64_t *ptr;		/* +0 wptr, +8 rptr */
	uint64_t ring_h, ptr_h;
};

FIXTURE_SETUP(kfd)
{
	int ret = kt_open(&self->k);

	self->ring = NULL;
	if (ret == -ENOENT || ret == -ENODEV)
		SKIP(return, "%s absent: the KFD stand-in (kfd_standin.ko) is not loaded",
		     TPLAN_KFD_PATH);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, kt_acquire(&self->k, 0));
	self->ring = anon(RING_SIZE);
	self->ptr = anon(PAGE);
	ASSERT_NE(NULL, self->ring);
	ASSERT_NE(NULL, self->ptr);
}

FIXTURE_TEARDOWN(kfd)
{
	kt_close(&self->k);
}

/* The version is the header's the stand-in was built with; the topology is KFD's. */
TEST_F(kfd, version_and_topology)
{
	struct kt_gpu *g;
	uint32_t i;

	if (_metadata->skip)
		return;
	ASSERT_EQ(1, self->k.major);
	ASSERT_LE(11, self->k.minor);
	ASSERT_LE(1, self->k.ngpus);
	for (i = 0; i < self->k.ngpus; i++) {
		g = &self->k.gpu[i];
		ASSERT_NE(0, g->gpu_id);
		ASSERT_TRUE(g->gfx == 90010 || g->gfx == 90402);
		ASSERT_LE(1, g->num_sdma);
		ASSERT_EQ(8, g->queues_per_engine);
		ASSERT_LE(128, g->render_minor);
		/* KFD 1.17 recommends an engine towards every peer GPU. */
		if (self->k.minor >= 17 && self->k.ngpus > 1)
			ASSERT_NE(0, g->rec_mask[(i + 1) % self->k.ngpus]);
	}
}

/* USERPTR takes only writable mappings of pages (amdgpu's hmm_range_fault rules). */
TEST_F(kfd, userptr_checks)
{
	uint64_t h;
	void *ro;

	if (_metadata->skip)
		return;
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(-EPERM, kt_alloc(&self->k, 0, (uintptr_t)ro, PAGE,
				   TPLAN_KFD_ALLOC_USERPTR | TPLAN_KFD_ALLOC_WRITABLE,
				   (uintptr_t)ro, &h));
	ASSERT_EQ(0, munmap(ro, PAGE));
	/* Nothing mapped there any more. */
	ASSERT_EQ(-EFAULT, kt_alloc(&self->k, 0, (uintptr_t)ro, PAGE,
				    TPLAN_KFD_ALLOC_USERPTR | TPLAN_KFD_ALLOC_WRITABLE,
				    (uintptr_t)ro, &h));
	/* Mapped and then freed: FREE of a mapped buffer is EBUSY. */
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &h));
	ASSERT_EQ(-EBUSY, kt_free(&self->k, h));
	ASSERT_EQ(0, kt_map(&self->k, 0, h, 1));
	ASSERT_EQ(0, kt_free(&self->k, h));
}

/*
 * KFD 1.17's kfd_queue_acquire_buffers(): the ring exactly one mapping of
 * ring_size, rptr and wptr each in a one-page mapping starting at their
 * page; those mappings stay until the queue is destroyed.  KFD 1.11 takes
 * any address.
 */
TEST_F(kfd, queue_buffer_checks)
{
	struct tplan_kfd_create_queue_args q;
	uint32_t *big = anon(2 * RING_SIZE);
	uint64_t big_h, ptr2_h, ring_h, ptr_h;
	void *ptr2 = anon(2 * PAGE);
	bool checks = self->k.minor >= 17;
	int ret;

	if (_metadata->skip)
		return;
	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, ptr2);
	ASSERT_EQ(0, kt_userptr(&self->k, 0, big, 2 * RING_SIZE, &big_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, ptr2, 2 * PAGE, &ptr2_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, (void *)self->ptr, PAGE, &ptr_h));

	/* A ring buffer twice the ring. */
	ret = kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, big, RING_SIZE,
			      (void *)self->ptr, &q);
	ASSERT_EQ(checks ? -EINVAL : 0, ret);
	if (!ret)
		ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	/* A pointer page in a two-page buffer. */
	ret = kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring, RING_SIZE,
			      ptr2, &q);
	ASSERT_EQ(checks ? -EINVAL : 0, ret);
	if (!ret)
		ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	/* A ring in the middle of a buffer. */
	ret = kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, (char *)big + RING_SIZE,
			      RING_SIZE / 2, (void *)self->ptr, &q);
	ASSERT_EQ(checks ? -EINVAL : 0, ret);
	if (!ret)
		ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));

	/* The right sizes; then ring and pointer page are pinned in the VM. */
	ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	ASSERT_EQ(3ULL, q.doorbell_offset >> 62);
	ASSERT_EQ(self->k.gpu[0].gpu_id, (q.doorbell_offset >> 46) & 0xffff);
	ASSERT_EQ(checks ? -EBUSY : 0, kt_map(&self->k, 0, ring_h, 1));
	ASSERT_EQ(checks ? -EBUSY : 0, kt_map(&self->k, 0, ptr_h, 1));
	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	ASSERT_EQ(-EINVAL, kt_destroy_queue(&self->k, q.queue_id));
	if (checks) {
		ASSERT_EQ(0, kt_map(&self->k, 0, ring_h, 1));
		ASSERT_EQ(0, kt_map(&self->k, 0, ptr_h, 1));
	}
	ASSERT_EQ(0, kt_free(&self->k, ring_h));
	ASSERT_EQ(0, kt_free(&self->k, ptr_h));
}

/* Queue types: SDMA_BY_ENG_ID only from KFD 1.17, and its engine id in range. */
TEST_F(kfd, queue_types)
{
	struct tplan_kfd_create_queue_args q;
	struct kt_gpu *g = &self->k.gpu[0];
	uint64_t ring_h, ptr_h;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, (void *)self->ptr, PAGE, &ptr_h));
	ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	if (self->k.minor >= 17) {
		ASSERT_EQ(-EINVAL, kt_create_queue(&self->k, 0,
						   TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
						   g->num_sdma + g->num_xgmi, self->ring,
						   RING_SIZE, (void *)self->ptr, &q));
		ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
					     g->num_sdma + g->num_xgmi - 1, self->ring,
					     RING_SIZE, (void *)self->ptr, &q));
		ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	} else {
		ASSERT_NE(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, 0,
					     self->ring, RING_SIZE, (void *)self->ptr, &q));
	}
	/* A ring size that is not a power of two. */
	ASSERT_EQ(-EINVAL, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
					   RING_SIZE - 4096, (void *)self->ptr, &q));
	/* Compute queues are not emulated. */
	ASSERT_EQ(-EOPNOTSUPP, kt_create_queue(&self->k, 0, 0, 0, self->ring, RING_SIZE,
					       (void *)self->ptr, &q));
}

/* Append packet p at *wptr (bytes) of the ring. */
static int emit(uint32_t *ring, uint64_t *wptr, const struct tplan_sdma_packet *p)
{
	uint32_t off = (*wptr & (RING_SIZE - 1)) / 4;
	int n = tplan_sdma_encode(ring + off, RING_SIZE / 4 - off, p);

	if (n > 0)
		*wptr += n * 4ULL;
	return n;
}

/*
 * The engine runs what the doorbell says, and only that: packets in the
 * ring with wptr stored but no doorbell stay; after the doorbell a NOP, a
 * COPY between VRAM buffers, an ATOMIC ADD64, a POLL that waits for its
 * gate and a FENCE into user memory execute, and rptr is written back.
 */
TEST_F(kfd, doorbell_and_packets)
{
	struct tplan_kfd_create_queue_args q;
	struct tplan_sdma_packet p;
	uint64_t ring_h, ptr_h, vram, vram_h, wptr = 0;
	volatile uint64_t *doorbell;
	volatile uint32_t *fence = (volatile uint32_t *)((char *)self->ptr + 64);
	volatile uint32_t *gate;
	volatile uint64_t *counter;
	uint8_t *src, *dst;
	int i;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, (void *)self->ptr, PAGE, &ptr_h));
	ASSERT_EQ(0, kt_vram(&self->k, 0, VRAM_SIZE, &vram, &vram_h));
	src = (uint8_t *)(uintptr_t)vram;
	dst = src + 4096;
	gate = (volatile uint32_t *)(src + 8192);
	counter = (volatile uint64_t *)(src + 8192 + 64);
	for (i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 7 + 1);

	ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	doorbell = kt_doorbell(&self->k, &q);
	ASSERT_NE(NULL, doorbell);

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_NOP;
	p.u.nop.dwords = 4;
	ASSERT_EQ(4, emit(self->ring, &wptr, &p));
	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_COPY_LINEAR;
	p.u.copy_linear.src = (uintptr_t)src;
	p.u.copy_linear.dst = (uintptr_t)dst;
	p.u.copy_linear.bytes = 4096;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));
	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_ATOMIC;
	p.u.atomic.addr = (uintptr_t)counter;
	p.u.atomic.src_data = 1;
	p.u.atomic.atomic_op = TPLAN_SDMA_ATOMIC_ADD64;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));
	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_POLL_REGMEM;
	p.u.poll.addr = (uintptr_t)gate;
	p.u.poll.ref = 5;
	p.u.poll.mask = 0xffffffff;
	p.u.poll.func = TPLAN_SDMA_FUNC_GE;
	p.u.poll.mem_poll = 1;
	p.u.poll.interval = 10;
	p.u.poll.retry = TPLAN_SDMA_POLL_RETRY_FOREVER;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));
	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_FENCE;
	p.u.fence.addr = (uintptr_t)fence;
	p.u.fence.data = 0xC0FFEE;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));

	/* wptr in memory, no doorbell: nothing runs. */
	__atomic_store_n(&self->ptr[0], wptr, __ATOMIC_RELEASE);
	usleep(100 * 1000);
	ASSERT_EQ(0, self->ptr[1]);
	ASSERT_EQ(0, *counter);

	/* The doorbell: everything up to the POLL runs, which waits. */
	__atomic_store_n(doorbell, wptr, __ATOMIC_RELEASE);
	ASSERT_EQ(0, wait_u64(counter, 1));
	ASSERT_EQ(0, memcmp(src, dst, 4096));
	usleep(100 * 1000);
	ASSERT_EQ(0, *fence);
	ASSERT_NE(wptr, self->ptr[1]);

	/* The gate opens: the POLL is passed, the FENCE lands, rptr reaches wptr. */
	__atomic_store_n(gate, 5, __ATOMIC_RELEASE);
	ASSERT_EQ(0, wait_u32(fence, 0xC0FFEE));
	ASSERT_EQ(0, wait_u64(&self->ptr[1], wptr));

	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	ASSERT_EQ(0, munmap((void *)((uintptr_t)doorbell & ~(uintptr_t)(TPLAN_KFD_DOORBELL_SLICE - 1)),
			    TPLAN_KFD_DOORBELL_SLICE));
}

/* A file of /dev/kfd is its opener's: another process gets EBADF, as from KFD. */
TEST_F(kfd, other_process)
{
	struct tplan_kfd_get_version_args v;
	pid_t pid;
	int status;

	if (_metadata->skip)
		return;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(kt_ioctl(self->k.fd, TPLAN_KFD_IOC_GET_VERSION, &v) == -EBADF ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * The doorbell slice maps whole or not at all, only into the process that
 * owns it (not a fork, which does not inherit it either), and it is I/O
 * memory that KFD cannot take as user pages.
 */
TEST_F(kfd, doorbell_mapping_rules)
{
	struct tplan_kfd_create_queue_args q;
	uint64_t ring_h, ptr_h, h, off;
	volatile uint64_t *doorbell;
	void *slice, *part;
	pid_t pid;
	int status;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, (void *)self->ptr, PAGE, &ptr_h));
	ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	off = q.doorbell_offset & ~(TPLAN_KFD_DOORBELL_SLICE - 1);
	part = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->k.fd, (off_t)off);
	ASSERT_EQ(MAP_FAILED, part);
	doorbell = kt_doorbell(&self->k, &q);
	ASSERT_NE(NULL, doorbell);
	slice = (void *)((uintptr_t)doorbell & ~(uintptr_t)(TPLAN_KFD_DOORBELL_SLICE - 1));
	ASSERT_EQ(-EFAULT, kt_alloc(&self->k, 0, (uintptr_t)slice, TPLAN_KFD_DOORBELL_SLICE,
				    TPLAN_KFD_ALLOC_USERPTR | TPLAN_KFD_ALLOC_WRITABLE,
				    (uintptr_t)slice, &h));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		void *m = mmap(NULL, TPLAN_KFD_DOORBELL_SLICE, PROT_READ | PROT_WRITE, MAP_SHARED,
			       self->k.fd, (off_t)off);

		_exit(m == MAP_FAILED ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
	ASSERT_EQ(0, munmap(slice, TPLAN_KFD_DOORBELL_SLICE));
}

/*
 * One GPU's VRAM, exported as a dma-buf and imported into another GPU's
 * VM, is what that GPU's queue copies from: the way ranks reach their
 * peers' heaps.
 */
TEST_F(kfd, dmabuf_imported_into_another_gpu)
{
	struct tplan_kfd_create_queue_args q;
	struct tplan_sdma_packet p;
	uint64_t ring_h, ptr_h, va0, h0, h0_on_1, va1, h1, wptr = 0;
	volatile uint64_t *doorbell;
	uint8_t *src, *dst;
	int fd, i;

	if (_metadata->skip)
		return;
	if (self->k.ngpus < 2)
		SKIP(return, "the stand-in has one GPU (gpus=1)");
	ASSERT_EQ(0, kt_acquire(&self->k, 1));
	/* GPU 0's VRAM, in GPU 0's VM and this process at va0. */
	src = kt_reserve(VRAM_SIZE);
	ASSERT_NE(NULL, src);
	va0 = (uintptr_t)src;
	ASSERT_EQ(0, kt_vram_dmabuf(&self->k, 0, va0, VRAM_SIZE, &h0, &fd));
	if (!h0)
		ASSERT_EQ(0, kt_import(&self->k, 0, fd, va0, &h0));
	ASSERT_EQ(src, mmap(src, VRAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0));
	/* The same buffer in GPU 1's VM, at the same address. */
	ASSERT_EQ(0, kt_import(&self->k, 1, fd, va0, &h0_on_1));
	ASSERT_EQ(0, close(fd));
	/* GPU 1's own VRAM, and its queue. */
	ASSERT_EQ(0, kt_vram(&self->k, 1, VRAM_SIZE, &va1, &h1));
	dst = (uint8_t *)(uintptr_t)va1;
	for (i = 0; i < 8192; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	ASSERT_EQ(0, kt_userptr(&self->k, 1, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 1, (void *)self->ptr, PAGE, &ptr_h));
	ASSERT_EQ(0, kt_create_queue(&self->k, 1, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	doorbell = kt_doorbell(&self->k, &q);
	ASSERT_NE(NULL, doorbell);

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_COPY_LINEAR;
	p.u.copy_linear.src = va0;
	p.u.copy_linear.dst = va1;
	p.u.copy_linear.bytes = 8192;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));
	__atomic_store_n(&self->ptr[0], wptr, __ATOMIC_RELEASE);
	__atomic_store_n(doorbell, wptr, __ATOMIC_RELEASE);
	ASSERT_EQ(0, wait_u64(&self->ptr[1], wptr));
	ASSERT_EQ(0, memcmp(src, dst, 8192));
	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
}

/*
 * A process killed while its queue waits in a POLL: the stand-in tears the
 * queue and the process down (the VM run's dmesg scan and rmmod check
 * that nothing was used after it was freed, or leaked).
 */
TEST_F(kfd, sigkill_while_a_poll_waits)
{
	volatile uint32_t *fence = (volatile uint32_t *)((char *)self->ptr + 64);
	struct tplan_kfd_create_queue_args q;
	struct tplan_sdma_packet p;
	uint64_t ring_h, ptr_h, wptr = 0;
	volatile uint64_t *doorbell;
	int ready[2], status;
	char c;
	pid_t pid;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t *ring = anon(RING_SIZE);
		volatile uint64_t *ptr = anon(PAGE);
		uint64_t vram, vram_h;
		struct kt k;

		/* The child is a process of its own for KFD, with memory of its own. */
		if (!ring || !ptr || kt_open(&k) || kt_acquire(&k, 0) ||
		    kt_userptr(&k, 0, ring, RING_SIZE, &ring_h) ||
		    kt_userptr(&k, 0, (void *)ptr, PAGE, &ptr_h) ||
		    kt_vram(&k, 0, VRAM_SIZE, &vram, &vram_h) ||
		    kt_create_queue(&k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, ring, RING_SIZE,
				    (void *)ptr, &q))
			_exit(1);
		doorbell = kt_doorbell(&k, &q);
		if (!doorbell)
			_exit(1);
		memset(&p, 0, sizeof(p));
		p.kind = TPLAN_SDMA_KIND_POLL_REGMEM;
		p.u.poll.addr = vram;
		p.u.poll.ref = 1;
		p.u.poll.mask = 0xffffffff;
		p.u.poll.func = TPLAN_SDMA_FUNC_GE;
		p.u.poll.mem_poll = 1;
		p.u.poll.interval = 10;
		p.u.poll.retry = TPLAN_SDMA_POLL_RETRY_FOREVER;
		if (emit(ring, &wptr, &p) <= 0)
			_exit(1);
		__atomic_store_n(&ptr[0], wptr, __ATOMIC_RELEASE);
		__atomic_store_n(doorbell, wptr, __ATOMIC_RELEASE);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	usleep(100 * 1000);	/* the queue is in its POLL */
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	close(ready[0]);

	/* The stand-in goes on: a queue of this process runs a FENCE. */
	ASSERT_EQ(0, kt_userptr(&self->k, 0, self->ring, RING_SIZE, &ring_h));
	ASSERT_EQ(0, kt_userptr(&self->k, 0, (void *)self->ptr, PAGE, &ptr_h));
	ASSERT_EQ(0, kt_create_queue(&self->k, 0, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, self->ring,
				     RING_SIZE, (void *)self->ptr, &q));
	doorbell = kt_doorbell(&self->k, &q);
	ASSERT_NE(NULL, doorbell);
	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_FENCE;
	p.u.fence.addr = (uintptr_t)fence;
	p.u.fence.data = 7;
	ASSERT_LT(0, emit(self->ring, &wptr, &p));
	__atomic_store_n(&self->ptr[0], wptr, __ATOMIC_RELEASE);
	__atomic_store_n(doorbell, wptr, __ATOMIC_RELEASE);
	ASSERT_EQ(0, wait_u32(fence, 7));
	ASSERT_EQ(0, kt_destroy_queue(&self->k, q.queue_id));
}

TEST_HARNESS_MAIN
