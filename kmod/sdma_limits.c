// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-engine SDMA limits.  Sources: the SDMA fact sheet, sections 2.2
 * (copy count), 2.3 (sub-window widths and alignment) and 3 (ring).
 */
#include "tplan_shim.h"
#include "tplan_sdma.h"
#include "sdma_limits.h"

/* Both engines read the same packet header; only the copy maximum differs. */
#define TPLAN_SDMA_4X_COMMON					\
	.max_copy_bytes_ceiling = TPLAN_SDMA_COPY_MAX_BYTES,	\
	.window_x_bits = 14,					\
	.window_y_bits = 14,					\
	.window_z_bits = 11,					\
	.window_pitch_bits = 19,				\
	.window_slice_bits = 28,				\
	.rect_xy_bits = 14,					\
	.rect_z_bits = 11,					\
	.max_elem_size_log2 = TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX,	\
	.window_align = 4,					\
	.ring_base_align = 256,					\
	.ring_min_bytes = 1024,					\
	.ring_max_bytes = 1U << 31

const struct tplan_sdma_limits tplan_sdma_limits_default[TPLAN_SDMA_IP_COUNT] = {
	[TPLAN_SDMA_IP_4_4_0] = {
		.name = "SDMA 4.4.0 (MI200, gfx90a)",
		.ip = TPLAN_SDMA_IP_4_4_0,
		/* ROCr uses the 30-bit count on gfx90a: 1 GiB per packet */
		.max_copy_bytes = 1U << 30,
		.max_copy_bytes_default = 1U << 30,
		TPLAN_SDMA_4X_COMMON,
	},
	[TPLAN_SDMA_IP_4_4_2] = {
		.name = "SDMA 4.4.2 (MI300, gfx942)",
		.ip = TPLAN_SDMA_IP_4_4_2,
		/* ROCr keeps gfx942 on the 22-bit count: 4 MiB per packet */
		.max_copy_bytes = 1U << 22,
		.max_copy_bytes_default = 1U << 22,
		TPLAN_SDMA_4X_COMMON,
	},
};

int tplan_sdma_limits_init(struct tplan_sdma_limits *l, u32 ip, u32 max_copy_bytes)
{
	if (ip >= TPLAN_SDMA_IP_COUNT)
		return -EINVAL;
	*l = tplan_sdma_limits_default[ip];
	if (max_copy_bytes) {
		if (max_copy_bytes > l->max_copy_bytes_ceiling)
			return -ERANGE;
		l->max_copy_bytes = max_copy_bytes;
	}
	return 0;
}

int tplan_sdma_ring_check(const struct tplan_sdma_limits *l, u64 base, u64 bytes)
{
	if (bytes < l->ring_min_bytes || bytes > l->ring_max_bytes || (bytes & (bytes - 1)))
		return -EINVAL;
	if (base & (l->ring_base_align - 1))
		return -EINVAL;
	return 0;
}
