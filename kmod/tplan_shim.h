/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one place where the plain-C parts of tplan (packet codec, chain
 * validator, ring accounting) meet their environment.  Those files include
 * only this header, so the same source builds into tplan.ko and into the
 * host tests, fuzzers and benchmarks.
 */
#ifndef _TPLAN_SHIM_H
#define _TPLAN_SHIM_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#else
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#endif

#endif /* _TPLAN_SHIM_H */
