/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The chain validator: decides whether a chain submitted by userspace may
 * be queued (ARCHITECTURE section 3, "Chain"), and the group-wide check
 * that no two ranks send the same bytes.  Plain C: builds into tplan.ko
 * and into the host tests, fuzzer and benchmark.
 *
 * Plan creation, per rank:
 *   1. tplan_chain_validate() every chain;
 *   2. tplan_chain_spans() to list the bytes each chain copies;
 * then, with every rank's spans gathered:
 *   3. tplan_chain_check_overlap() (chain_overlap.c).
 */
#ifndef _TPLAN_CHAIN_VALIDATE_H
#define _TPLAN_CHAIN_VALIDATE_H

#include "tplan_shim.h"
#include "tplan_chain.h"
#include "sdma_limits.h"

/*
 * struct tplan_chain_env - what one chain (one chunk, one peer) may touch.
 * All addresses are device addresses in the sender's address map (the
 * chain runs on the sender's queue).  A range is [start, start + bytes).
 */
struct tplan_chain_env {
	const struct tplan_sdma_limits *limits;	/* the sending queue's engine */
	u64 src_start;		/* the sender's own part of the plan buffer */
	u64 src_bytes;
	u64 dst_start;		/* the whole plan buffer in the peer's heap */
	u64 dst_bytes;
	u64 own_heap;		/* base of the sender's heap */
	u64 peer_heap;		/* base of the peer's heap; dst = src - own + peer */
	u64 ready_gate;		/* this chunk's ready gate, sender's heap */
	u64 arrival_gate;	/* this chunk's arrival gate, peer's heap */
	u32 max_dwords;		/* longest chain; 0: TPLAN_CHAIN_MAX_DWORDS */
	u32 rank;		/* the sender, reported in *why */
};

/*
 * Validates one chain of ndw dwords.  Returns 0, or -EINVAL with *why set
 * (rule, chain = chain_index, packet, rank, value).  Reads only dw[0..ndw);
 * leaves *why alone on success.
 */
int tplan_chain_validate(const u32 *dw, u32 ndw, u32 chain_index,
			 const struct tplan_chain_env *env,
			 struct tplan_chain_reject *why);

/*
 * The two paths tplan_chain_validate() takes, apart for the differential
 * tests and the benchmark.  tplan_chain_fast_accept() answers true only
 * for a chain of the shape plans build (exact POLL and ATOMIC, copies
 * with exact headers) that the full walk accepts too; false means "not
 * sure", not "invalid".  tplan_chain_validate_full() walks the chain
 * packet by packet and names the rule a chain breaks.
 */
bool tplan_chain_fast_accept(const u32 *dw, u32 ndw, const struct tplan_chain_env *env);
int tplan_chain_validate_full(const u32 *dw, u32 ndw, u32 chain_index,
			      const struct tplan_chain_env *env,
			      struct tplan_chain_reject *why);

/*
 * struct tplan_chain_span - the bytes one copy reads, as offsets from its
 * heap's base (the same offsets it writes in the peer's heap): a number
 * of rows, each width bytes long, pitch bytes apart.  A linear copy is one row.
 */
struct tplan_chain_span {
	u64 start;
	u64 width;		/* >= 1 */
	u64 pitch;		/* >= 1 */
	u32 rows;		/* >= 1 */
	u32 rank;
	u32 chain;
	u32 packet;		/* the copy's packet index in its chain */
};

/*
 * The spans of a chain that tplan_chain_validate() accepted, relative to
 * heap_base (the sender's own_heap).  Writes at most room spans and
 * returns how many copies the chain has (call with room 0 to size out),
 * or -EINVAL if the chain does not decode.
 */
int tplan_chain_spans(const u32 *dw, u32 ndw, u64 heap_base, u32 rank,
		      u32 chain_index, struct tplan_chain_span *out, u32 room);

/* Ranks a span may name (a group's largest world size). */
#define TPLAN_CHAIN_MAX_RANKS 16

/*
 * Whether two spans of different ranks share a byte (chain_overlap.c),
 * exactly: sub-windows in the same rows with disjoint columns do not.
 * Sorts spans in place.  O(n log n) for spans of one row pitch and byte
 * ranges, however they interleave; spans of two different pitches whose
 * extents overlap are compared pairwise.
 * Returns 0, -EINVAL with *why (TPLAN_CHAIN_R_OVERLAP; the rank, chain and
 * packet of both, the one later in start order first; value = the lowest
 * byte offset they share), -ERANGE for a malformed span (empty, ending
 * beyond 2^62, rank >= TPLAN_CHAIN_MAX_RANKS), -ENOMEM, or (in the
 * kernel) -EINTR when the caller is killed meanwhile.
 */
int tplan_chain_check_overlap(struct tplan_chain_span *spans, u32 n,
			      struct tplan_chain_reject *why);

#endif /* _TPLAN_CHAIN_VALIDATE_H */
