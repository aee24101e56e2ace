/* SPDX-License-Identifier: MIT */
/*
 * The part of the KFD ABI (linux/kfd_ioctl.h, /dev/kfd) that tplan's KFD
 * engine needs from userspace, and of the amdgpu render node for KFD
 * 1.11's way to a dma-buf; the tests' raw KFD helpers
 * (selftests/tplan_kfd.h) use it too.  Declared here rather than taken from the system's header:
 * Debian 12's linux-libc-dev carries KFD 1.11 (Linux 6.1), which lacks
 * what 6.12's KFD 1.17 adds (EXPORT_DMABUF, SDMA_BY_ENG_ID), and
 * libhsakmt 5.2.3 is older still.  tests/host/kfd_abi_test.c checks every
 * struct, member and ioctl number here against the kfd_ioctl.h of both
 * Debian kernels.
 *
 * KFD takes a struct of any size for an ioctl number (it copies what the
 * caller's number says and zero-extends its own), so CREATE_QUEUE always
 * goes with 6.12's 96-byte struct: a 1.11 KFD reads its first 88 bytes.
 */
#ifndef TPLAN_KFD_ABI_H
#define TPLAN_KFD_ABI_H

#include <stdint.h>
#include <sys/ioctl.h>

#define TPLAN_KFD_PATH		"/dev/kfd"
#define TPLAN_KFD_TOPOLOGY	"/sys/class/kfd/kfd/topology/nodes"
#define TPLAN_KFD_RENDER_FMT	"/dev/dri/renderD%u"

struct tplan_kfd_get_version_args {
	uint32_t major_version;
	uint32_t minor_version;
};

/* kfd_ioctl_create_queue_args.queue_type */
#define TPLAN_KFD_QUEUE_TYPE_SDMA		0x1
#define TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI		0x3
#define TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID	0x4	/* KFD 1.17 */
#define TPLAN_KFD_MAX_QUEUE_PERCENTAGE		100
#define TPLAN_KFD_MAX_QUEUE_PRIORITY		15

struct tplan_kfd_create_queue_args {
	uint64_t ring_base_address;	/* in: GPU VA of the ring */
	uint64_t write_pointer_address;	/* in (the header says "from KFD") */
	uint64_t read_pointer_address;	/* in (likewise) */
	uint64_t doorbell_offset;	/* out */
	uint32_t ring_size;
	uint32_t gpu_id;
	uint32_t queue_type;
	uint32_t queue_percentage;
	uint32_t queue_priority;
	uint32_t queue_id;		/* out */
	uint64_t eop_buffer_address;
	uint64_t eop_buffer_size;
	uint64_t ctx_save_restore_address;
	uint32_t ctx_save_restore_size;
	uint32_t ctl_stack_size;
	uint32_t sdma_engine_id;	/* KFD 1.17, with SDMA_BY_ENG_ID */
	uint32_t pad;
};

struct tplan_kfd_destroy_queue_args {
	uint32_t queue_id;
	uint32_t pad;
};

struct tplan_kfd_acquire_vm_args {
	uint32_t drm_fd;
	uint32_t gpu_id;
};

/* kfd_ioctl_alloc_memory_of_gpu_args.flags */
#define TPLAN_KFD_ALLOC_VRAM		(1U << 0)
#define TPLAN_KFD_ALLOC_GTT		(1U << 1)
#define TPLAN_KFD_ALLOC_USERPTR		(1U << 2)
#define TPLAN_KFD_ALLOC_WRITABLE	(1U << 31)
#define TPLAN_KFD_ALLOC_EXECUTABLE	(1U << 30)
#define TPLAN_KFD_ALLOC_PUBLIC		(1U << 29)
#define TPLAN_KFD_ALLOC_NO_SUBSTITUTE	(1U << 28)
#define TPLAN_KFD_ALLOC_COHERENT	(1U << 26)
#define TPLAN_KFD_ALLOC_UNCACHED	(1U << 25)

struct tplan_kfd_alloc_memory_of_gpu_args {
	uint64_t va_addr;
	uint64_t size;
	uint64_t handle;		/* out */
	uint64_t mmap_offset;		/* in for USERPTR: the CPU address */
	uint32_t gpu_id;
	uint32_t flags;
};

struct tplan_kfd_free_memory_of_gpu_args {
	uint64_t handle;
};

/* MAP_MEMORY_TO_GPU and UNMAP_MEMORY_FROM_GPU */
struct tplan_kfd_map_memory_args {
	uint64_t handle;
	uint64_t device_ids_array_ptr;
	uint32_t n_devices;
	uint32_t n_success;
};

struct tplan_kfd_import_dmabuf_args {
	uint64_t va_addr;
	uint64_t handle;		/* out */
	uint32_t gpu_id;
	uint32_t dmabuf_fd;
};

struct tplan_kfd_export_dmabuf_args {	/* KFD 1.12 */
	uint64_t handle;
	uint32_t flags;
	uint32_t dmabuf_fd;		/* out */
};

#define TPLAN_KFD_IOC(nr, type)	_IOWR('K', nr, type)
#define TPLAN_KFD_IOC_GET_VERSION	_IOR('K', 0x01, struct tplan_kfd_get_version_args)
#define TPLAN_KFD_IOC_CREATE_QUEUE	TPLAN_KFD_IOC(0x02, struct tplan_kfd_create_queue_args)
#define TPLAN_KFD_IOC_DESTROY_QUEUE	TPLAN_KFD_IOC(0x03, struct tplan_kfd_destroy_queue_args)
#define TPLAN_KFD_IOC_ACQUIRE_VM	_IOW('K', 0x15, struct tplan_kfd_acquire_vm_args)
#define TPLAN_KFD_IOC_ALLOC_MEMORY_OF_GPU \
	TPLAN_KFD_IOC(0x16, struct tplan_kfd_alloc_memory_of_gpu_args)
#define TPLAN_KFD_IOC_FREE_MEMORY_OF_GPU \
	_IOW('K', 0x17, struct tplan_kfd_free_memory_of_gpu_args)
#define TPLAN_KFD_IOC_MAP_MEMORY_TO_GPU	TPLAN_KFD_IOC(0x18, struct tplan_kfd_map_memory_args)
#define TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU TPLAN_KFD_IOC(0x19, struct tplan_kfd_map_memory_args)
#define TPLAN_KFD_IOC_IMPORT_DMABUF	TPLAN_KFD_IOC(0x1D, struct tplan_kfd_import_dmabuf_args)
#define TPLAN_KFD_IOC_EXPORT_DMABUF	TPLAN_KFD_IOC(0x24, struct tplan_kfd_export_dmabuf_args)

/*
 * mmap offsets of /dev/kfd: the doorbell_offset CREATE_QUEUE returns is
 * the slice's offset (type DOORBELL, the gpu_id) plus the byte offset of
 * the queue's doorbell inside the process's slice, which is 8 KiB on
 * gfx9 (1024 doorbells of 8 bytes) and is mapped whole.
 */
#define TPLAN_KFD_DOORBELL_SLICE	8192ULL
#define TPLAN_KFD_MMAP_TYPE_DOORBELL	(3ULL << 62)
#define TPLAN_KFD_MMAP_GPU_ID_SHIFT	46

/* The amdgpu render node, for KFD < 1.12 (no EXPORT_DMABUF). */
#define TPLAN_AMDGPU_GEM_DOMAIN_VRAM		0x4
#define TPLAN_AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED	(1ULL << 0)

union tplan_amdgpu_gem_create {
	struct {
		uint64_t bo_size;
		uint64_t alignment;
		uint64_t domains;
		uint64_t domain_flags;
	} in;
	struct {
		uint32_t handle;
		uint32_t _pad;
	} out;
};

struct tplan_drm_prime_handle {
	uint32_t handle;
	uint32_t flags;			/* O_CLOEXEC | O_RDWR */
	int32_t fd;			/* out */
};

struct tplan_drm_gem_close {
	uint32_t handle;
	uint32_t pad;
};

#define TPLAN_DRM_COMMAND_BASE		0x40
#define TPLAN_DRM_IOCTL_AMDGPU_GEM_CREATE \
	_IOWR('d', TPLAN_DRM_COMMAND_BASE + 0x00, union tplan_amdgpu_gem_create)
#define TPLAN_DRM_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct tplan_drm_prime_handle)
#define TPLAN_DRM_IOCTL_GEM_CLOSE	_IOW('d', 0x09, struct tplan_drm_gem_close)

#endif /* TPLAN_KFD_ABI_H */
