// SPDX-License-Identifier: MIT
/*
 * Kernels for tests/device/isa_check.sh: the smallest callers of
 * tplan_mark_ready, tplan_arrived and tplan_wait, whose machine code the
 * check reads.  Test only, never shipped.
 *
 * TPLAN_DEVICE_TEST_NO_BARRIER and TPLAN_DEVICE_TEST_NO_RELEASE build the
 * broken producers the check must refuse (the CTA barrier removed; the
 * writer counter's add made relaxed).  They act here, from outside the
 * header, so its normal path carries no test hooks.
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

#include "tplan_device.h"

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
