/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Ring and budget arithmetic of a queue, in plain C so the host tests
 * check it without a kernel.
 *
 * Pointers are 64-bit monotonic byte counts (the SDMA 4.x convention);
 * the ring offset of pointer p is p & (ring_size - 1).  A packet never
 * straddles the ring end: a writer that would cross it first pads to the
 * end with NOPs and continues at offset 0.
 */
#ifndef _TPLAN_RING_H
#define _TPLAN_RING_H

#include "tplan_shim.h"

/* Bytes of NOP padding needed before a packet of bytes at pos. */
static inline u32 tplan_ring_pad(u64 pos, u32 ring_size, u32 bytes)
{
	u32 off = (u32)(pos & (ring_size - 1));

	return off + bytes > ring_size ? ring_size - off : 0;
}

/* Free bytes between the writer at wptr and the reader at rptr. */
static inline u64 tplan_ring_free(u64 wptr, u64 rptr, u32 ring_size)
{
	return ring_size - (wptr - rptr);
}

/* The prepared-copy budget: ring_size * pct / 100, pct in 1..50. */
static inline u32 tplan_budget_limit(u32 ring_size, u32 pct)
{
	return (u32)(((u64)ring_size * pct) / 100);
}

/*
 * Where a sequence of packets of pkt_bytes[0..n) written from pos ends,
 * padding included.  The write needs (end - pos) free bytes.
 */
u64 tplan_ring_span(u64 pos, u32 ring_size, const u32 *pkt_bytes, u32 n);

/*
 * Charge bytes of prepared chains against the budget: 0, or -ENOSPC when
 * charged + bytes would exceed limit (nothing is charged then).
 */
int tplan_budget_charge(u32 *charged, u32 limit, u64 bytes);

#endif /* _TPLAN_RING_H */
