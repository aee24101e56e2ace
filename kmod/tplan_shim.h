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
#include <linux/sort.h>
#include <linux/math64.h>

static inline void tplan_sort(void *base, size_t num, size_t size,
			      int (*cmp)(const void *, const void *))
{
	sort(base, num, size, cmp, NULL);
}

static inline s64 tplan_div_s64(s64 a, s64 b)
{
	return div64_s64(a, b);
}
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
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#include <stdlib.h>

static inline void tplan_sort(void *base, size_t num, size_t size,
			      int (*cmp)(const void *, const void *))
{
	qsort(base, num, size, cmp);
}

static inline s64 tplan_div_s64(s64 a, s64 b)
{
	return a / b;
}
#endif

#endif /* _TPLAN_SHIM_H */
