// SPDX-License-Identifier: MIT
/*
 * Kernels for tests/device/isa_check.sh: the smallest callers of
 * tplan_mark_ready, tplan_arrived, tplan_wait and tplan_release, whose
 * machine code the check reads.  Test only, never shipped.
 *
 * TPLAN_DEVICE_TEST_NO_BARRIER and TPLAN_DEVICE_TEST_NO_RELEASE build the
 * broken producers the check must refuse (the CTA barrier removed; the
 * writer counter's add made relaxed), TPLAN_DEVICE_TEST_RELEASE_NO_WAIT
 * and TPLAN_DEVICE_TEST_RELEASE_RELAXED the broken releases (a copy of
 * tplan_release without the wait for the loads and the barrier; the
 * release fence removed, which leaves the maximum relaxed).  They act
 * here, from outside the header, so its normal path carries no test hooks.
 */
#include <hip/hip_runtime.h>

#ifdef TPLAN_DEVICE_TEST_NO_BARRIER
#define __syncthreads() ((void)0)
#endif
#ifdef TPLAN_DEVICE_TEST_NO_RELEASE
/* A function-like macro is not expanded inside its own expansion. */
#define __hip_atomic_fetch_add(ptr, val, order, scope) \
	__hip_atomic_fetch_add(ptr, val, __ATOMIC_RELAXED, scope)
#endif
#ifdef TPLAN_DEVICE_TEST_RELEASE_RELAXED
/* The header's only fence is release's: its maximum is then relaxed. */
#define __builtin_amdgcn_fence(order, scope) ((void)0)
#endif

#include "tplan_device.h"

#ifdef TPLAN_DEVICE_TEST_RELEASE_NO_WAIT
/* tplan_release() without its first two steps: the loads may be in flight. */
static __device__ __forceinline__ int release_no_wait(const struct tplan_view *v,
						      struct tplan_cta *cta)
{
	(void)cta;
	if (tplan_cta_leader()) {
		__builtin_amdgcn_fence(__ATOMIC_RELEASE, "");
		__asm__ __volatile__("s_waitcnt vmcnt(0)" ::: "memory");
		__hip_atomic_fetch_max(tplan_view_release_word(v), (uint64_t)v->round,
				       __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
	}
	return 0;
}
#define tplan_release release_no_wait
#endif

/* Store this CTA's part of a tile, then mark its chunk ready. */
extern "C" __global__ void isa_mark_ready(struct tplan_handle h, float *tile, uint32_t chunk)
{
	struct tplan_view v;

	tplan_view_init(&v, &h);
	tile[blockIdx.x * blockDim.x + threadIdx.x] = (float)h.round;
	tplan_mark_ready(&v, nullptr, chunk);
}

/* Read a peer's chunk if it has arrived. */
extern "C" __global__ void isa_arrived(struct tplan_handle h, const float *in, float *out,
				       uint32_t src, uint32_t chunk)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct tplan_view v;

	tplan_view_init(&v, &h);
	if (tplan_arrived(&v, nullptr, src, chunk) == 1)
		out[i] = in[i];
}

/* Wait for a peer's chunk, a bounded number of polls, then read it. */
extern "C" __global__ void isa_wait(struct tplan_handle h, const float *in, float *out,
				    uint32_t src, uint32_t chunk, uint64_t max_polls)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct tplan_view v;

	tplan_view_init(&v, &h);
	if (tplan_wait(&v, nullptr, src, chunk, max_polls) == 0)
		out[i] = in[i];
}

/*
 * Read this CTA's part of the round's data, release the round, then use
 * what was read: nothing but the release waits for the loads before it.
 */
extern "C" __global__ void isa_release(struct tplan_handle h, const float *in, float *out)
{
	uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	struct tplan_view v;
	float x;

	tplan_view_init(&v, &h);
	x = in[i] + in[i + blockDim.x];
	tplan_release(&v, nullptr);
	out[i] = x;
}
