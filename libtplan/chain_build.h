/* SPDX-License-Identifier: MIT */
/*
 * Chain building: the packets of one chunk for one peer, from the chunk's
 * regions.  POLL_REGMEM(ready gate >= round), the copies, ATOMIC
 * ADD64(the peer's arrival gate, 1), shaped to pass the kernel's chain
 * validator (uapi/tplan_chain.h).  Needs only the uapi headers, so the
 * host tests build it without a kernel.
 */
#ifndef LIBTPLAN_CHAIN_BUILD_H
#define LIBTPLAN_CHAIN_BUILD_H

#include <stdint.h>

#include "libtplan.h"

/*
 * Where one chain reads, writes and signals, as device addresses, and the
 * sending engine's largest COPY_LINEAR.
 */
struct tplan_chain_target {
	uint64_t own_heap;	/* the sender's heap base */
	uint64_t peer_heap;	/* the peer's heap base: dst = src - own + peer */
	uint64_t ready_gate;	/* this chunk's ready gate, sender's heap */
	uint64_t arrival_gate;	/* this chunk's arrival gate, peer's heap */
	uint32_t max_copy_bytes;	/* 1..2^30 */
	uint32_t __pad;
};

/* The device address of a gate of global chunk gchunk. */
static inline uint64_t tplan_gate_addr(uint64_t heap, uint64_t gate_offset, uint32_t gchunk,
				       uint32_t gate)
{
	return heap + gate_offset + (uint64_t)gchunk * TPLAN_GATE_ROW_BYTES + gate;
}

/*
 * Builds the chain into dw (room dwords).  Returns the dwords written;
 * with dw NULL, only how many it would take.  -EINVAL for an empty chunk
 * or a region the codec cannot express, -ENOSPC when room is short,
 * -E2BIG past 2^31 dwords.
 */
int tplan_chain_build(uint32_t *dw, uint32_t room, const struct tplan_chain_target *t,
		      const struct tplan_region *regions, uint32_t nregions);

/* What one packet of a built chain is. */
enum tplan_chain_part {
	TPLAN_CHAIN_PART_POLL,
	TPLAN_CHAIN_PART_COPY,
	TPLAN_CHAIN_PART_ATOMIC,
	TPLAN_CHAIN_PART_NONE,	/* past the end */
};

struct tplan_chain_where {
	uint32_t part;		/* enum tplan_chain_part */
	uint32_t region;	/* COPY: the region it copies */
	uint32_t piece;		/* COPY: its index among that region's packets */
	uint32_t pieces;	/* COPY: how many packets the region took */
};

/* Packet `packet` of the chain tplan_chain_build() makes for these inputs. */
void tplan_chain_locate(const struct tplan_chain_target *t, const struct tplan_region *regions,
			uint32_t nregions, uint32_t packet, struct tplan_chain_where *where);

/*
 * How a 2D region is sent: whether it fits COPY_LINEAR_SUB_WINDOW for
 * these addresses, and with which element size; otherwise one linear copy
 * per row.  Exposed for the tests.
 */
int tplan_chain_window_elem_log2(const struct tplan_chain_target *t,
				 const struct tplan_region *region);

#endif /* LIBTPLAN_CHAIN_BUILD_H */
