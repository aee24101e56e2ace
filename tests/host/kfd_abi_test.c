// SPDX-License-Identifier: GPL-2.0
/*
 * libtplan/kfd_abi.h against one kernel's linux/kfd_ioctl.h and
 * drm/amdgpu_drm.h: built once per Debian kernel (tests/host/host.mk),
 * KFD_IOCTL_H naming that tree's kfd_ioctl.h and its include/uapi after
 * the system's headers (-idirafter), which give the basic types.
 * Every struct, member offset and size, ioctl number and constant that
 * libtplan declares for itself must be the kernel's; what is newer than
 * the kernel (KFD 1.17's CREATE_QUEUE tail, SDMA_BY_ENG_ID; 1.12's
 * EXPORT_DMABUF) must lie past what that kernel reads.
 */
#include <stddef.h>
#include <stdio.h>
/* What headers_install strips from the kernel's uapi headers. */
#define __user
#include KFD_IOCTL_H
#include <drm/amdgpu_drm.h>

#include "kfd_abi.h"

#define SAME_SIZE(ours, theirs) \
	_Static_assert(sizeof(struct ours) == sizeof(struct theirs), #ours " is " #theirs "'s size")
#define SAME_MEMBER(ours, theirs, m) \
	_Static_assert(offsetof(struct ours, m) == offsetof(struct theirs, m) && \
		       sizeof(((struct ours *)0)->m) == sizeof(((struct theirs *)0)->m), \
		       #ours "." #m " is " #theirs "." #m)
#define SAME_VALUE(ours, theirs) \
	_Static_assert((unsigned long long)(ours) == (unsigned long long)(theirs), #ours " is " #theirs)
/* A flag of a 32-bit field (the kernel's are int: 1 << 31 is negative). */
#define SAME_FLAG(ours, theirs) \
	_Static_assert((unsigned int)(ours) == (unsigned int)(theirs), #ours " is " #theirs)
/* Same number, type and direction: KFD takes any size for a number. */
#define SAME_IOCTL_NR(ours, theirs) \
	_Static_assert(_IOC_NR(ours) == _IOC_NR(theirs) && _IOC_TYPE(ours) == _IOC_TYPE(theirs) && \
		       _IOC_DIR(ours) == _IOC_DIR(theirs), #ours " is " #theirs)

SAME_VALUE(1, KFD_IOCTL_MAJOR_VERSION);

SAME_SIZE(tplan_kfd_get_version_args, kfd_ioctl_get_version_args);
SAME_MEMBER(tplan_kfd_get_version_args, kfd_ioctl_get_version_args, major_version);
SAME_MEMBER(tplan_kfd_get_version_args, kfd_ioctl_get_version_args, minor_version);
SAME_VALUE(TPLAN_KFD_IOC_GET_VERSION, AMDKFD_IOC_GET_VERSION);

#define CQ(m) SAME_MEMBER(tplan_kfd_create_queue_args, kfd_ioctl_create_queue_args, m)
CQ(ring_base_address);
CQ(write_pointer_address);
CQ(read_pointer_address);
CQ(doorbell_offset);
CQ(ring_size);
CQ(gpu_id);
CQ(queue_type);
CQ(queue_percentage);
CQ(queue_priority);
CQ(queue_id);
CQ(eop_buffer_address);
CQ(eop_buffer_size);
CQ(ctx_save_restore_address);
CQ(ctx_save_restore_size);
CQ(ctl_stack_size);
SAME_IOCTL_NR(TPLAN_KFD_IOC_CREATE_QUEUE, AMDKFD_IOC_CREATE_QUEUE);
#if KFD_IOCTL_MINOR_VERSION >= 17
CQ(sdma_engine_id);
CQ(pad);
SAME_SIZE(tplan_kfd_create_queue_args, kfd_ioctl_create_queue_args);
SAME_VALUE(TPLAN_KFD_IOC_CREATE_QUEUE, AMDKFD_IOC_CREATE_QUEUE);
SAME_VALUE(TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID);
#else
/* The 1.17 tail starts where an older KFD stops reading (it zero-extends). */
_Static_assert(offsetof(struct tplan_kfd_create_queue_args, sdma_engine_id) ==
	       sizeof(struct kfd_ioctl_create_queue_args), "CREATE_QUEUE's 1.17 tail");
#endif
SAME_VALUE(TPLAN_KFD_QUEUE_TYPE_SDMA, KFD_IOC_QUEUE_TYPE_SDMA);
SAME_VALUE(TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI, KFD_IOC_QUEUE_TYPE_SDMA_XGMI);
SAME_VALUE(TPLAN_KFD_MAX_QUEUE_PERCENTAGE, KFD_MAX_QUEUE_PERCENTAGE);
SAME_VALUE(TPLAN_KFD_MAX_QUEUE_PRIORITY, KFD_MAX_QUEUE_PRIORITY);

SAME_SIZE(tplan_kfd_destroy_queue_args, kfd_ioctl_destroy_queue_args);
SAME_MEMBER(tplan_kfd_destroy_queue_args, kfd_ioctl_destroy_queue_args, queue_id);
SAME_MEMBER(tplan_kfd_destroy_queue_args, kfd_ioctl_destroy_queue_args, pad);
SAME_VALUE(TPLAN_KFD_IOC_DESTROY_QUEUE, AMDKFD_IOC_DESTROY_QUEUE);

SAME_SIZE(tplan_kfd_acquire_vm_args, kfd_ioctl_acquire_vm_args);
SAME_MEMBER(tplan_kfd_acquire_vm_args, kfd_ioctl_acquire_vm_args, drm_fd);
SAME_MEMBER(tplan_kfd_acquire_vm_args, kfd_ioctl_acquire_vm_args, gpu_id);
SAME_VALUE(TPLAN_KFD_IOC_ACQUIRE_VM, AMDKFD_IOC_ACQUIRE_VM);

#define AM(m) SAME_MEMBER(tplan_kfd_alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args, m)
SAME_SIZE(tplan_kfd_alloc_memory_of_gpu_args, kfd_ioctl_alloc_memory_of_gpu_args);
AM(va_addr);
AM(size);
AM(handle);
AM(mmap_offset);
AM(gpu_id);
AM(flags);
SAME_VALUE(TPLAN_KFD_IOC_ALLOC_MEMORY_OF_GPU, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU);
SAME_FLAG(TPLAN_KFD_ALLOC_VRAM, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
SAME_FLAG(TPLAN_KFD_ALLOC_GTT, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
SAME_FLAG(TPLAN_KFD_ALLOC_USERPTR, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR);
SAME_FLAG(TPLAN_KFD_ALLOC_WRITABLE, KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE);
SAME_FLAG(TPLAN_KFD_ALLOC_EXECUTABLE, KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE);
SAME_FLAG(TPLAN_KFD_ALLOC_PUBLIC, KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC);
SAME_FLAG(TPLAN_KFD_ALLOC_NO_SUBSTITUTE, KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE);
SAME_FLAG(TPLAN_KFD_ALLOC_COHERENT, KFD_IOC_ALLOC_MEM_FLAGS_COHERENT);
SAME_FLAG(TPLAN_KFD_ALLOC_UNCACHED, KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED);

SAME_SIZE(tplan_kfd_free_memory_of_gpu_args, kfd_ioctl_free_memory_of_gpu_args);
SAME_MEMBER(tplan_kfd_free_memory_of_gpu_args, kfd_ioctl_free_memory_of_gpu_args, handle);
SAME_VALUE(TPLAN_KFD_IOC_FREE_MEMORY_OF_GPU, AMDKFD_IOC_FREE_MEMORY_OF_GPU);

#define MM(theirs, m) SAME_MEMBER(tplan_kfd_map_memory_args, theirs, m)
SAME_SIZE(tplan_kfd_map_memory_args, kfd_ioctl_map_memory_to_gpu_args);
MM(kfd_ioctl_map_memory_to_gpu_args, handle);
MM(kfd_ioctl_map_memory_to_gpu_args, device_ids_array_ptr);
MM(kfd_ioctl_map_memory_to_gpu_args, n_devices);
MM(kfd_ioctl_map_memory_to_gpu_args, n_success);
SAME_SIZE(tplan_kfd_map_memory_args, kfd_ioctl_unmap_memory_from_gpu_args);
MM(kfd_ioctl_unmap_memory_from_gpu_args, handle);
MM(kfd_ioctl_unmap_memory_from_gpu_args, device_ids_array_ptr);
MM(kfd_ioctl_unmap_memory_from_gpu_args, n_devices);
MM(kfd_ioctl_unmap_memory_from_gpu_args, n_success);
SAME_VALUE(TPLAN_KFD_IOC_MAP_MEMORY_TO_GPU, AMDKFD_IOC_MAP_MEMORY_TO_GPU);
SAME_VALUE(TPLAN_KFD_IOC_UNMAP_MEMORY_FROM_GPU, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU);

SAME_SIZE(tplan_kfd_import_dmabuf_args, kfd_ioctl_import_dmabuf_args);
SAME_MEMBER(tplan_kfd_import_dmabuf_args, kfd_ioctl_import_dmabuf_args, va_addr);
SAME_MEMBER(tplan_kfd_import_dmabuf_args, kfd_ioctl_import_dmabuf_args, handle);
SAME_MEMBER(tplan_kfd_import_dmabuf_args, kfd_ioctl_import_dmabuf_args, gpu_id);
SAME_MEMBER(tplan_kfd_import_dmabuf_args, kfd_ioctl_import_dmabuf_args, dmabuf_fd);
SAME_VALUE(TPLAN_KFD_IOC_IMPORT_DMABUF, AMDKFD_IOC_IMPORT_DMABUF);

#if KFD_IOCTL_MINOR_VERSION >= 12
SAME_SIZE(tplan_kfd_export_dmabuf_args, kfd_ioctl_export_dmabuf_args);
SAME_MEMBER(tplan_kfd_export_dmabuf_args, kfd_ioctl_export_dmabuf_args, handle);
SAME_MEMBER(tplan_kfd_export_dmabuf_args, kfd_ioctl_export_dmabuf_args, flags);
SAME_MEMBER(tplan_kfd_export_dmabuf_args, kfd_ioctl_export_dmabuf_args, dmabuf_fd);
SAME_VALUE(TPLAN_KFD_IOC_EXPORT_DMABUF, AMDKFD_IOC_EXPORT_DMABUF);
#else
/* The number is free in the older KFD: it answers ENOTTY or EINVAL, never something else. */
_Static_assert(_IOC_NR(TPLAN_KFD_IOC_EXPORT_DMABUF) >= AMDKFD_COMMAND_END,
	       "EXPORT_DMABUF's number is unused before KFD 1.12");
#endif

/* The render node: amdgpu's GEM_CREATE, PRIME and GEM_CLOSE. */
SAME_VALUE(sizeof(union tplan_amdgpu_gem_create), sizeof(union drm_amdgpu_gem_create));
_Static_assert(offsetof(union tplan_amdgpu_gem_create, in.bo_size) ==
	       offsetof(union drm_amdgpu_gem_create, in.bo_size) &&
	       offsetof(union tplan_amdgpu_gem_create, in.alignment) ==
	       offsetof(union drm_amdgpu_gem_create, in.alignment) &&
	       offsetof(union tplan_amdgpu_gem_create, in.domains) ==
	       offsetof(union drm_amdgpu_gem_create, in.domains) &&
	       offsetof(union tplan_amdgpu_gem_create, in.domain_flags) ==
	       offsetof(union drm_amdgpu_gem_create, in.domain_flags) &&
	       offsetof(union tplan_amdgpu_gem_create, out.handle) ==
	       offsetof(union drm_amdgpu_gem_create, out.handle), "GEM_CREATE's members");
SAME_VALUE(TPLAN_AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_DOMAIN_VRAM);
SAME_VALUE(TPLAN_AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
SAME_VALUE(TPLAN_DRM_IOCTL_AMDGPU_GEM_CREATE, DRM_IOCTL_AMDGPU_GEM_CREATE);
SAME_SIZE(tplan_drm_prime_handle, drm_prime_handle);
SAME_MEMBER(tplan_drm_prime_handle, drm_prime_handle, handle);
SAME_MEMBER(tplan_drm_prime_handle, drm_prime_handle, flags);
SAME_MEMBER(tplan_drm_prime_handle, drm_prime_handle, fd);
SAME_VALUE(TPLAN_DRM_IOCTL_PRIME_HANDLE_TO_FD, DRM_IOCTL_PRIME_HANDLE_TO_FD);
SAME_SIZE(tplan_drm_gem_close, drm_gem_close);
SAME_MEMBER(tplan_drm_gem_close, drm_gem_close, handle);
SAME_MEMBER(tplan_drm_gem_close, drm_gem_close, pad);
SAME_VALUE(TPLAN_DRM_IOCTL_GEM_CLOSE, DRM_IOCTL_GEM_CLOSE);

int main(void)
{
	/* Everything above is checked at build time; this says against what. */
	printf("TAP version 13\n1..1\n");
	printf("ok 1 libtplan/kfd_abi.h matches KFD %d.%d's kfd_ioctl.h and amdgpu_drm.h\n",
	       KFD_IOCTL_MAJOR_VERSION, KFD_IOCTL_MINOR_VERSION);
	return 0;
}
