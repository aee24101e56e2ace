/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * tplan: triggered copy-engine plans for the GPUs of one node.
 *
 * The ioctl ABI of /dev/tplan.
 *
 * Conventions (every ioctl):
 *  - The argument is a pointer to a struct whose first member is
 *    "__u32 size", set by the caller to sizeof() of the struct it was built
 *    with.  The kernel copies min(size, its own size) bytes:
 *      size < the struct's first published size     -> EINVAL
 *      size > the kernel's size, extra bytes all 0  -> accepted
 *      size > the kernel's size, a non-zero extra   -> E2BIG
 *    Out fields are written back for min(size, kernel size) bytes.
 *  - Fields documented "must be 0" and unknown flag bits -> EINVAL.
 *  - An unknown ioctl number -> ENOTTY.
 *  - Pointers travel as __aligned_u64.
 *
 * Errno contract shared by all ioctls:
 *   EFAULT  the argument (or a buffer it points to) is not accessible
 *   EINVAL  a field is out of range, a reserved field or flag is set
 *   E2BIG   the struct is larger than the kernel knows and the tail is set
 *   ENOTTY  unknown ioctl
 * Each ioctl lists its own additional codes.
 */
#ifndef _UAPI_TPLAN_H
#define _UAPI_TPLAN_H

#include <linux/types.h>
#include <linux/ioctl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; compatible additions grow structs. */
#define TPLAN_ABI_VERSION 1

#define TPLAN_DEVICE_PATH "/dev/tplan"

#define TPLAN_TYPE ';'

/*
 * Command numbers.  Numbers are assigned once and never reused; a number
 * listed here whose struct is not defined yet is answered with ENOTTY.
 */
enum {
	TPLAN_CMD_BASE = 0x80,
	TPLAN_CMD_INFO = TPLAN_CMD_BASE,
	TPLAN_CMD_GROUP_JOIN,
	TPLAN_CMD_GROUP_BARRIER,
	TPLAN_CMD_GROUP_ALL_GATHER,
	TPLAN_CMD_HEAP_INFO,
	TPLAN_CMD_PUT,
	TPLAN_CMD_QUIET,
	TPLAN_CMD_QUEUE_INFO,
	TPLAN_CMD_QUEUE_INJECT,
	TPLAN_CMD_PLAN_CREATE,
	TPLAN_CMD_PLAN_START,
	TPLAN_CMD_PLAN_WAIT,
	TPLAN_CMD_PLAN_NEXT_ROUND,
	TPLAN_CMD_PLAN_CLOSE,
	TPLAN_CMD_PLAN_STATE,
	TPLAN_CMD_LAST
};

/* Copy-engine back ends, as bits of tplan_info.engines. */
#define TPLAN_ENGINE_SOFT (1U << 0)	/* software SDMA engine (kernel threads) */
#define TPLAN_ENGINE_KFD  (1U << 1)	/* SDMA user queues of an MI200/MI300 through KFD */
#define TPLAN_ENGINE_ALL  (TPLAN_ENGINE_SOFT | TPLAN_ENGINE_KFD)

/**
 * struct tplan_info - TPLAN_IOC_INFO: what this module can do
 * @size: In: sizeof(struct tplan_info)
 * @flags: In: must be 0
 * @abi_version: Out: TPLAN_ABI_VERSION of the running module
 * @engines: Out: TPLAN_ENGINE_* bits of the back ends present
 * @ring_size: Out: bytes of every queue's ring (a power of two)
 * @prep_limit_pct: Out: percent of a ring that prepared (not yet gated
 *                  open) chains may hold; 1..50
 * @max_world_size: Out: most ranks a group may have
 * @__reserved: must be 0
 * @max_copy_bytes_sdma440: Out: largest byte count of one COPY_LINEAR on
 *                  SDMA 4.4.0 (MI200, gfx90a)
 * @max_copy_bytes_sdma442: Out: the same for SDMA 4.4.2 (MI300, gfx942);
 *                  the administrator may raise it (module parameter)
 *
 * Capabilities are read from here, never inferred from version numbers.
 */
struct tplan_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 engines;
	__u32 ring_size;
	__u32 prep_limit_pct;
	__u32 max_world_size;
	__u32 __reserved;
	__u32 max_copy_bytes_sdma440;
	__u32 max_copy_bytes_sdma442;
};
#define TPLAN_IOC_INFO _IO(TPLAN_TYPE, TPLAN_CMD_INFO)

#ifdef __cplusplus
}
#endif

#endif /* _UAPI_TPLAN_H */
