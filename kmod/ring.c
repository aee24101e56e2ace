// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Ring and budget arithmetic (see ring.h); shared by tplan.ko and the
 * host tests.
 */
#include "ring.h"

u64 tplan_ring_span(u64 pos, u32 ring_size, const u32 *pkt_bytes, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		pos += tplan_ring_pad(pos, ring_size, pkt_bytes[i]);
		pos += pkt_bytes[i];
	}
	return pos;
}

int tplan_budget_charge(u32 *charged, u32 limit, u64 bytes)
{
	if (bytes > limit || *charged > limit - bytes)
		return -ENOSPC;
	*charged += (u32)bytes;
	return 0;
}
