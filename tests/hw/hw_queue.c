// SPDX-License-Identifier: GPL-2.0
/* A raw KFD SDMA queue for the test-node protocol: hw_queue.h says what and why. */
#include <time.h>

#include "hw_queue.h"

void *hw_anon(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_DONTFORK);
	memset(p, 0, size);	/* present, so that KFD's page walk finds every page */
	return p;
}

int hw_userptr_at(struct kt *k, uint32_t gpu, void *p, uint64_t size, uint32_t flags,
		  struct hw_mem *m)
{
	int ret;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->size = size;
	m->gpu = gpu;
	if (!flags)
		flags = TPLAN_KFD_ALLOC_WRITABLE | TPLAN_KFD_ALLOC_UNCACHED;
	ret = kt_alloc(k, gpu, (uintptr_t)p, size, TPLAN_KFD_ALLOC_USERPTR | flags, (uintptr_t)p,
		       &m->handle);
	if (ret) {
		m->handle = 0;
		return ret;
	}
	ret = kt_map(k, gpu, m->handle, 0);
	if (ret) {
		kt_free(k, m->handle);
		m->handle = 0;
		return ret;
	}
	m->mapped = 1;
	return 0;
}

int hw_userptr(struct kt *k, uint32_t gpu, uint64_t size, uint32_t flags, struct hw_mem *m)
{
	void *p = hw_anon(size);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = hw_userptr_at(k, gpu, p, size, flags, m);
	if (ret) {
		munmap(p, size);
		memset(m, 0, sizeof(*m));
		return ret;
	}
	m->owned = 1;
	return 0;
}

int hw_vram(struct kt *k, uint32_t gpu, uint64_t size, struct hw_mem *m, int *dmabuf_fd)
{
	void *res = kt_reserve(size), *cpu;
	int fd = -1, ret;

	memset(m, 0, sizeof(*m));
	if (!res)
		return -ENOMEM;
	m->p = res;
	m->size = size;
	m->gpu = gpu;
	m->owned = 1;
	ret = kt_vram_dmabuf(k, gpu, (uintptr_t)res, size, &m->handle, &fd);
	if (!ret && m->handle)
		m->mapped = 1;	/* KFD >= 1.12 allocated and mapped it */
	if (!ret && !m->handle) {
		ret = kt_import(k, gpu, fd, (uintptr_t)res, &m->handle);
		m->mapped = !ret;
	}
	if (!ret) {
		cpu = mmap(res, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (cpu == MAP_FAILED)
			ret = -errno;
	}
	if (ret) {
		if (fd >= 0)
			close(fd);
		hw_mem_free(k, m);
		return ret;
	}
	if (dmabuf_fd)
		*dmabuf_fd = fd;
	else
		close(fd);
	return 0;
}

int hw_import(struct kt *k, uint32_t gpu, int dmabuf_fd, const struct hw_mem *from,
	      struct hw_mem *m)
{
	int ret;

	memset(m, 0, sizeof(*m));
	m->p = from->p;
	m->size = from->size;
	m->gpu = gpu;
	ret = kt_import(k, gpu, dmabuf_fd, (uintptr_t)from->p, &m->handle);
	if (ret) {
		if (m->handle)
			kt_free(k, m->handle);
		m->handle = 0;
		return ret;
	}
	m->mapped = 1;
	return 0;
}

void hw_mem_free(struct kt *k, struct hw_mem *m)
{
	if (m->mapped)
		kt_map(k, m->gpu, m->handle, 1);
	if (m->handle)
		kt_free(k, m->handle);
	if (m->owned && m->p)
		munmap(m->p, m->size);
	memset(m, 0, sizeof(*m));
}

int hw_queue_create(struct kt *k, uint32_t gpu, const struct hw_queue_params *p,
		    struct hw_queue *q)
{
	uint32_t ring_flags = p->ring_flags ? p->ring_flags :
		TPLAN_KFD_ALLOC_WRITABLE | TPLAN_KFD_ALLOC_EXECUTABLE | TPLAN_KFD_ALLOC_UNCACHED;
	uint64_t slice;
	char *db;
	int ret;

	memset(q, 0, sizeof(*q));
	q->k = k;
	q->gpu = gpu;
	q->type = p->type ? p->type : TPLAN_KFD_QUEUE_TYPE_SDMA;
	q->engine = p->engine;
	q->ring_size = p->ring_size;
	if (p->registered) {
		q->ring = p->ring;
		q->ptr = p->ptr;
	} else {
		ret = p->ring ? hw_userptr_at(k, gpu, p->ring, p->ring_size, ring_flags, &q->ring_mem) :
			hw_userptr(k, gpu, p->ring_size, ring_flags, &q->ring_mem);
		if (ret)
			return ret;
		ret = p->ptr ? hw_userptr_at(k, gpu, p->ptr, HW_PAGE, 0, &q->ptr_mem) :
			hw_userptr(k, gpu, HW_PAGE, 0, &q->ptr_mem);
		if (ret)
			goto err_ring;
		q->ring = q->ring_mem.p;
		q->ptr = q->ptr_mem.p;
	}
	/* The engine starts from what is in memory (ROCr reads it too). */
	q->wptr = q->committed = q->ptr[0];

	q->args = (struct tplan_kfd_create_queue_args) {
		.ring_base_address = (uintptr_t)q->ring,
		.write_pointer_address = (uintptr_t)q->ptr,		/* TPLAN_QPTR_WPTR */
		.read_pointer_address = (uintptr_t)q->ptr + 8,		/* TPLAN_QPTR_RPTR */
		.ring_size = p->ring_size,
		.gpu_id = k->gpu[gpu].gpu_id,
		.queue_type = q->type,
		.queue_percentage = p->inactive ? 0 : TPLAN_KFD_MAX_QUEUE_PERCENTAGE,
		.queue_priority = p->priority,
		.sdma_engine_id = p->engine,
	};
	ret = kt_ioctl(k->fd, TPLAN_KFD_IOC_CREATE_QUEUE, &q->args);
	if (ret)
		goto err_ptr;
	q->created = 1;
	slice = q->args.doorbell_offset & ~(TPLAN_KFD_DOORBELL_SLICE - 1);
	db = mmap(NULL, TPLAN_KFD_DOORBELL_SLICE, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd,
		  (off_t)slice);
	if (db == MAP_FAILED) {
		ret = -errno;
		hw_queue_destroy(q);
		return ret;
	}
	q->doorbell_slice = db;
	q->doorbell = (volatile uint64_t *)(db + (q->args.doorbell_offset &
						 (TPLAN_KFD_DOORBELL_SLICE - 1)));
	return 0;

err_ptr:
	hw_mem_free(k, &q->ptr_mem);
err_ring:
	hw_mem_free(k, &q->ring_mem);
	return ret;
}

int hw_queue_destroy(struct hw_queue *q)
{
	int ret = 0;

	if (!q->k)
		return 0;
	if (q->created)
		ret = kt_destroy_queue(q->k, q->args.queue_id);
	q->created = 0;
	if (q->doorbell_slice)
		munmap(q->doorbell_slice, TPLAN_KFD_DOORBELL_SLICE);
	q->doorbell_slice = NULL;
	q->doorbell = NULL;
	hw_mem_free(q->k, &q->ptr_mem);
	hw_mem_free(q->k, &q->ring_mem);
	q->k = NULL;
	return ret;
}

uint32_t hw_room_to_end(const struct hw_queue *q)
{
	return q->ring_size - (uint32_t)(q->wptr & (q->ring_size - 1));
}

void hw_put_dwords(struct hw_queue *q, const uint32_t *dw, uint32_t n)
{
	uint32_t off = (uint32_t)(q->wptr & (q->ring_size - 1)) / 4, i;

	for (i = 0; i < n; i++)
		q->ring[off + i] = dw[i];
	q->wptr += 4ULL * n;
}

int hw_nops(struct hw_queue *q, uint32_t bytes)
{
	uint32_t off, n, i;

	if (bytes & 3 || bytes > hw_room_to_end(q))
		return -EINVAL;
	while (bytes) {
		n = bytes / 4 < TPLAN_SDMA_NOP_MAX_DW ? bytes / 4 : TPLAN_SDMA_NOP_MAX_DW;
		/* Written in place: a NOP's body is up to 64 KiB of zeroes. */
		off = (uint32_t)(q->wptr & (q->ring_size - 1)) / 4;
		q->ring[off] = tplan_sdma_hdr(TPLAN_SDMA_OP_NOP, 0) |
			((n - 1) << TPLAN_SDMA_NOP_COUNT_SHIFT);
		for (i = 1; i < n; i++)
			q->ring[off + i] = 0;
		q->wptr += 4ULL * n;
		bytes -= 4 * n;
	}
	return 0;
}

int hw_emit(struct hw_queue *q, const struct tplan_sdma_packet *p)
{
	uint32_t dw[32];
	int n = tplan_sdma_encode(dw, 32, p), ret;

	if (n < 0)
		return n;
	if ((uint32_t)n * 4 > hw_room_to_end(q)) {
		ret = hw_nops(q, hw_room_to_end(q));
		if (ret)
			return ret;
	}
	hw_put_dwords(q, dw, (uint32_t)n);
	return n * 4;
}

int hw_fence(struct hw_queue *q, volatile void *addr, uint32_t data)
{
	struct tplan_sdma_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_FENCE;
	p.u.fence.addr = (uintptr_t)addr;
	p.u.fence.data = data;
	return hw_emit(q, &p);
}

/* func >=, mask all ones, as tplan's chains wait (retry 0xfff: forever). */
int hw_poll_ge(struct hw_queue *q, volatile void *gate, uint32_t ref, uint32_t retry)
{
	struct tplan_sdma_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_POLL_REGMEM;
	p.u.poll.addr = (uintptr_t)gate;
	p.u.poll.ref = ref;
	p.u.poll.mask = 0xffffffff;
	p.u.poll.func = TPLAN_SDMA_FUNC_GE;
	p.u.poll.mem_poll = 1;
	p.u.poll.interval = 10;
	p.u.poll.retry = retry;
	return hw_emit(q, &p);
}

int hw_copy(struct hw_queue *q, void *dst, const void *src, uint32_t bytes)
{
	struct tplan_sdma_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_COPY_LINEAR;
	p.u.copy_linear.src = (uintptr_t)src;
	p.u.copy_linear.dst = (uintptr_t)dst;
	p.u.copy_linear.bytes = bytes;
	return hw_emit(q, &p);
}

int hw_atomic_add(struct hw_queue *q, volatile void *addr, uint64_t v)
{
	struct tplan_sdma_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = TPLAN_SDMA_KIND_ATOMIC;
	p.u.atomic.addr = (uintptr_t)addr;
	p.u.atomic.src_data = v;
	p.u.atomic.atomic_op = TPLAN_SDMA_ATOMIC_ADD64;
	return hw_emit(q, &p);
}

void hw_commit(struct hw_queue *q)
{
	/* Release: the packets, then wptr (a preempted queue reloads it), then the doorbell. */
	__atomic_store_n(&q->ptr[0], q->wptr, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*q->doorbell = q->wptr;
	q->committed = q->wptr;
}

uint64_t hw_rptr(const struct hw_queue *q)
{
	return __atomic_load_n(&q->ptr[1], __ATOMIC_ACQUIRE);
}

uint64_t hw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spin for the first 2 ms (latencies are microseconds), then sleep 100 us a look. */
#define HW_WAIT(w, want, timeout_us)							\
	do {										\
		uint64_t t0 = hw_now_ns(), t;						\
		for (;;) {								\
			if (__atomic_load_n(w, __ATOMIC_ACQUIRE) == (want))		\
				return (int64_t)(hw_now_ns() - t0);			\
			t = hw_now_ns() - t0;						\
			if (t > (timeout_us) * 1000ULL)					\
				return -ETIMEDOUT;					\
			if (t > 2000000ULL)						\
				usleep(100);						\
		}									\
	} while (0)

int64_t hw_wait_u32(volatile uint32_t *w, uint32_t want, uint64_t timeout_us)
{
	HW_WAIT(w, want, timeout_us);
}

int64_t hw_wait_u64(volatile uint64_t *w, uint64_t want, uint64_t timeout_us)
{
	HW_WAIT(w, want, timeout_us);
}
