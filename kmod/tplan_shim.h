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
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

static inline void tplan_sort(void *base, size_t num, size_t size,
			      int (*cmp)(const void *, const void *))
{
	sort(base, num, size, cmp, NULL);
}

static inline s64 tplan_div_s64(s64 a, s64 b)
{
	return div64_s64(a, b);
}

/* Working memory sized by a caller: its memory cgroup pays, no warning. */
static inline void *tplan_alloc_array(size_t n, size_t size)
{
	return kvmalloc_array(n ? n : 1, size,
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
}

static inline void tplan_free(void *p)
{
	kvfree(p);
}

/* In long loops: let others run; a dying caller stops (-EINTR). */
static inline int tplan_yield(void)
{
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
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
#ifndef U32_MAX
#define U32_MAX UINT32_MAX
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

static inline void *tplan_alloc_array(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static inline void tplan_free(void *p)
{
	free(p);
}

static inline int tplan_yield(void)
{
	return 0;
}
#endif

#endif /* _TPLAN_SHIM_H */
