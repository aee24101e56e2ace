/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What each SDMA engine generation accepts, as data: per-packet copy
 * maximum, sub-window field widths and alignment, ring rules.  The chain
 * validator and the engines read limits from here, never from constants
 * of their own.
 */
#ifndef _TPLAN_SDMA_LIMITS_H
#define _TPLAN_SDMA_LIMITS_H

#include "tplan_shim.h"

enum tplan_sdma_ip {
	TPLAN_SDMA_IP_4_4_0 = 0,	/* MI200, gfx90a */
	TPLAN_SDMA_IP_4_4_2 = 1,	/* MI300, gfx942 */
	TPLAN_SDMA_IP_COUNT
};

struct tplan_sdma_limits {
	const char *name;
	u32 ip;				/* enum tplan_sdma_ip */
	/* COPY_LINEAR */
	u32 max_copy_bytes;		/* per packet, in force */
	u32 max_copy_bytes_default;	/* what ROCr uses on this engine */
	u32 max_copy_bytes_ceiling;	/* what the count field can hold */
	/* COPY_LINEAR_SUB_WINDOW: field widths in bits */
	u8 window_x_bits;
	u8 window_y_bits;
	u8 window_z_bits;
	u8 window_pitch_bits;		/* field holds pitch - 1 */
	u8 window_slice_bits;		/* field holds slice pitch - 1 */
	u8 rect_xy_bits;		/* fields hold rect - 1 */
	u8 rect_z_bits;
	u8 max_elem_size_log2;
	u32 window_align;		/* base, pitch, slice in bytes: multiples */
	/* Ring */
	u32 ring_base_align;		/* RB_BASE holds address >> 8 */
	u32 ring_min_bytes;		/* KFD raises smaller rings to this */
	u32 ring_max_bytes;		/* KFD's ring_size is a u32 */
};

/* The limits as shipped (max_copy_bytes = the default). */
extern const struct tplan_sdma_limits tplan_sdma_limits_default[TPLAN_SDMA_IP_COUNT];

/*
 * Fills *l for engine ip.  max_copy_bytes = 0 keeps the engine's default;
 * anything else replaces it (the module passes the administrator's
 * max_copy_sdma442 for SDMA 4.4.2).  -EINVAL for an unknown ip, -ERANGE
 * for a maximum beyond what the count field holds.
 */
int tplan_sdma_limits_init(struct tplan_sdma_limits *l, u32 ip, u32 max_copy_bytes);

/*
 * Whether a queue ring at device address base, of the given size, meets the
 * engine's rules: a power of two in [ring_min_bytes, ring_max_bytes], base
 * aligned.  0 or -EINVAL.
 */
int tplan_sdma_ring_check(const struct tplan_sdma_limits *l, u64 base, u64 bytes);

#endif /* _TPLAN_SDMA_LIMITS_H */
