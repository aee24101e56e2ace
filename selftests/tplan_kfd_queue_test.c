// SPDX-License-Identifier: GPL-2.0
/*
 * A tplan queue's memory as a KFD SDMA queue (libtplan/kfd.c), over the
 * tests' KFD stand-in: the ring and pointer page the module maps into the
 * rank are accepted by KFD as USERPTR buffers at GPU address = CPU
 * address (amdgpu's rules for user pages; on KFD 1.17 exactly ring_size
 * and one page), the queue is created on the engine the topology
 * recommends, its doorbell mapped, and torn down in the order KFD needs.
 * SKIPs without /dev/tplan or /dev/kfd.
 */
#include "tplan_selftest.h"
#include "kfd_abi.h"
#include "kfd.h"

#define HEAP (1U << 20)

FIXTURE(kq) {
	struct tplan_test_group g;
	struct tplan_kfd k;
	struct tplan_queue_info qi;
	void *ring, *ptr;
};

FIXTURE_SETUP(kq)
{
	int fd, ret;

	self->ring = NULL;
	self->k.fd = -1;
	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	ret = tplan_kfd_open(&self->k, NULL);
	if (ret == -ENOENT || ret == -ENODEV)
		SKIP(return, "%s absent: the KFD stand-in (kfd_standin.ko) is not loaded",
		     TPLAN_KFD_PATH);
	ASSERT_EQ(0, ret);
	/* The software engine's queue, which the test puts on KFD itself. */
	ASSERT_EQ(0, tplan_test_group_setup_engine(&self->g, 2, HEAP, 0, TPLAN_ENGINE_SOFT));
	fd = tplan_ctx_fd(self->g.ctx);
	self->qi = (struct tplan_queue_info) {
		.size = sizeof(self->qi), .peer = 1, .flags = TPLAN_QUEUE_INFO_MAKE,
	};
	ASSERT_EQ(0, tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_INFO, &self->qi));
	self->ring = mmap(NULL, self->qi.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			  (off_t)self->qi.ring_mmap_offset);
	ASSERT_NE(MAP_FAILED, self->ring);
	self->ptr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)self->qi.ptr_mmap_offset);
	ASSERT_NE(MAP_FAILED, self->ptr);
}

FIXTURE_TEARDOWN(kq)
{
	if (self->ring && self->ring != MAP_FAILED)
		munmap(self->ring, self->qi.ring_size);
	if (self->ring && self->ptr != MAP_FAILED)
		munmap(self->ptr, 4096);
	if (self->k.fd >= 0)
		tplan_kfd_close(&self->k);
	tplan_test_group_teardown(&self->g);
}

/* The module's pages are a KFD queue's ring and pointer page. */
TEST_F(kq, tplan_queue_memory_is_a_kfd_queue)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint32_t peer = self->k.ngpus > 1 ? 1 : 0, id = self->k.gpu[0].gpu_id;
	struct tplan_kfd_map_memory_args m = {
		.device_ids_array_ptr = (uintptr_t)&id, .n_devices = 1,
	};
	struct tplan_kfd_queue q;

	ASSERT_EQ(0, tplan_kfd_queue_create(&self->k, 0, peer, self->ring, self->qi.ring_size,
					    self->ptr, &q));
	ASSERT_NE(NULL, q.doorbell);
	/* The doorbell is the process's: reading it does not fault. */
	(void)*q.doorbell;
	if (self->k.minor >= 17) {
		/* The engine the topology recommends towards the peer. */
		if (peer != 0) {
			ASSERT_EQ(TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, q.type);
			ASSERT_EQ((uint32_t)__builtin_ctzll(self->k.gpu[0].rec_mask[peer]), q.engine);
		}
		/* Ring and pointer page stay mapped while the queue lives. */
		m.handle = q.ring_handle;
		ASSERT_EQ(-EBUSY, tplan_test_ioctl(self->k.fd, TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU,
						   &m));
		m.handle = q.ptr_handle;
		ASSERT_EQ(-EBUSY, tplan_test_ioctl(self->k.fd, TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU,
						   &m));
	} else if (peer != 0 && self->k.gpu[0].num_xgmi) {
		ASSERT_EQ(TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI, q.type);
	}
	ASSERT_EQ(0, tplan_kfd_queue_destroy(&self->k, &q));
	ASSERT_EQ(NULL, q.doorbell);
	/* Again, on the same pages: everything was given back. */
	ASSERT_EQ(0, tplan_kfd_queue_create(&self->k, 0, peer, self->ring, self->qi.ring_size,
					    self->ptr, &q));
	ASSERT_EQ(0, tplan_kfd_queue_destroy(&self->k, &q));
}

/* KFD takes user pages only where they are writable: a read-only mapping of the ring is refused. */
TEST_F(kq, read_only_ring_mapping_is_refused)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_kfd_queue q;
	void *ro = mmap(NULL, self->qi.ring_size, PROT_READ, MAP_SHARED,
			tplan_ctx_fd(self->g.ctx), (off_t)self->qi.ring_mmap_offset);

	ASSERT_NE(MAP_FAILED, ro);
	ASSERT_EQ(-EPERM, tplan_kfd_queue_create(&self->k, 0, 0, ro, self->qi.ring_size,
						 self->ptr, &q));
	ASSERT_EQ(0, munmap(ro, self->qi.ring_size));
}

TEST_HARNESS_MAIN
