/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * tplan: what the kernel accepts as a chain, and why it refuses one.
 *
 * A chain is the packet sequence prepared for one chunk and one peer:
 *
 *   POLL_REGMEM(ready >= round)  COPY x 1..n  ATOMIC ADD64(arrival, 1)
 *
 * in raw SDMA 4.x dwords (uapi/tplan_sdma.h).  The kernel validates every
 * chain before anything is queued; a refused chain fails plan creation
 * with EINVAL and a struct tplan_chain_reject naming the chain, the packet
 * and the rule.  Rule numbers are ABI: they are never renumbered or reused.
 */
#ifndef _UAPI_TPLAN_CHAIN_H
#define _UAPI_TPLAN_CHAIN_H

#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gate table: one 64-byte row per global chunk index, then one release
 * row (row total_chunks), at the same offset in every rank's heap.  Gates
 * are never reset; rounds start at 1.
 */
#define TPLAN_GATE_ROW_BYTES	64
#define TPLAN_GATE_READY	0	/* u64; the engine polls its low 32 bits */
#define TPLAN_GATE_ARRIVAL	8	/* u64; each peer's chain adds 1 per round */
#define TPLAN_GATE_WRITERS	16	/* u64; mark_ready's writer counter */
#define TPLAN_GATE_EXPECTED	24	/* u32; writers per round, set by the kernel */
/* bytes 28..63 of a chunk's row are reserved */
/*
 * In the release row: the last round this rank finished reading.  Every
 * peer's engine polls it (low 32 bits, >=) at the head of each round it
 * sends here, so round k + 1 lands only after this rank released round k.
 */
#define TPLAN_GATE_RELEASED	0	/* u64, in row total_chunks */

/* Longest chain the kernel accepts, in dwords (1 MiB of packets). */
#define TPLAN_CHAIN_MAX_DWORDS	(1U << 18)

/* What a chain's POLL_REGMEM must hold besides its gate address. */
#define TPLAN_CHAIN_POLL_FUNC	5		/* ">=": ready >= round */
#define TPLAN_CHAIN_POLL_MASK	0xffffffffU
#define TPLAN_CHAIN_POLL_RETRY	0xfffU		/* retry forever */

/*
 * Rules, with what struct tplan_chain_reject.value holds for each.  Where
 * it says "dword", value = (index of the dword in the packet) << 32 | dword.
 *
 * Size and grammar
 *  1 SIZE          chain of 0 dwords, or over the limit           dwords
 *  2 TRUNCATED     a packet runs past the chain's end             header
 *  3 OPCODE        a packet other than POLL_REGMEM, COPY_LINEAR,
 *                  COPY_LINEAR_SUB_WINDOW, ATOMIC (NOP, WRITE,
 *                  INDIRECT_BUFFER, FENCE, ... or unknown)         header
 *  4 FIRST         the first packet is not POLL_REGMEM            header
 *  5 POLL_AGAIN    a POLL_REGMEM after the first packet           header
 *  6 NO_COPY       ATOMIC right after the POLL_REGMEM             header
 *  7 NO_ATOMIC     the chain ends before its ATOMIC (packet = one
 *                  past the last)                                 dwords
 *  8 TRAILING      dwords after the ATOMIC                        first of them
 *  9 RESERVED      a reserved bit is set                          dword
 * POLL_REGMEM
 * 10 POLL_MODE     register poll, or HDP flush                    header
 * 11 POLL_FUNC     function is not ">="                           function
 * 12 POLL_MASK     mask is not 0xffffffff                         mask
 * 13 POLL_REF      reference is not 0 (the kernel writes the
 *                  round)                                         reference
 * 14 POLL_RETRY    retry count is not 0xfff (forever): a poll that
 *                  gives up would copy unready data; the interval
 *                  is free                                        retry count
 * 15 POLL_ADDR     not this chunk's ready gate                    address
 * Copies (both kinds)
 * 16 COPY_FLAGS    tmz, encrypt or an endian swap set             dword
 * 17 COPY_COUNT    COPY_LINEAR over the engine's per-packet
 *                  maximum                                        bytes
 * 18 COPY_SRC      source bytes outside the sender's own part of
 *                  the plan buffer                                source address
 * 19 COPY_DST      destination is not the source's offset in the
 *                  peer's heap                                    destination
 * 20 COPY_DST_RANGE destination bytes outside the plan buffer on
 *                  the peer                                       destination
 * COPY_LINEAR_SUB_WINDOW (regions are byte ranges or 2D windows)
 * 21 SUBWIN_ELEMENT element size code over 4 (16 bytes)          code
 * 22 SUBWIN_DEPTH  rect_z, z or slice pitch is not 1, 0, 1        that field
 * 23 SUBWIN_EXTENT x + rect_x over the pitch, or x + rect_x or
 *                  y + rect_y over 16384 (the coordinate fields)  that sum
 * 24 SUBWIN_ALIGN  base address or pitch in bytes not a multiple
 *                  of 4                                           address or pitch
 * 25 SUBWIN_SHAPE  destination x, y or pitch differs from the
 *                  source's                                       that field
 * ATOMIC
 * 26 ATOMIC_OP     not ADD64 (47)                                 operation
 * 27 ATOMIC_VALUE  operand is not 1                               operand
 * 28 ATOMIC_UNUSED loop, tmz, loop interval or compare data set   dword
 * 29 ATOMIC_ADDR   not this chunk's arrival gate on the peer      address
 * Group-wide, at plan creation
 * 30 OVERLAP       two ranks send the same bytes                  lowest shared
 *                                                                 heap offset
 */
enum tplan_chain_rule {
	TPLAN_CHAIN_OK = 0,
	TPLAN_CHAIN_R_SIZE = 1,
	TPLAN_CHAIN_R_TRUNCATED = 2,
	TPLAN_CHAIN_R_OPCODE = 3,
	TPLAN_CHAIN_R_FIRST = 4,
	TPLAN_CHAIN_R_POLL_AGAIN = 5,
	TPLAN_CHAIN_R_NO_COPY = 6,
	TPLAN_CHAIN_R_NO_ATOMIC = 7,
	TPLAN_CHAIN_R_TRAILING = 8,
	TPLAN_CHAIN_R_RESERVED = 9,
	TPLAN_CHAIN_R_POLL_MODE = 10,
	TPLAN_CHAIN_R_POLL_FUNC = 11,
	TPLAN_CHAIN_R_POLL_MASK = 12,
	TPLAN_CHAIN_R_POLL_REF = 13,
	TPLAN_CHAIN_R_POLL_RETRY = 14,
	TPLAN_CHAIN_R_POLL_ADDR = 15,
	TPLAN_CHAIN_R_COPY_FLAGS = 16,
	TPLAN_CHAIN_R_COPY_COUNT = 17,
	TPLAN_CHAIN_R_COPY_SRC = 18,
	TPLAN_CHAIN_R_COPY_DST = 19,
	TPLAN_CHAIN_R_COPY_DST_RANGE = 20,
	TPLAN_CHAIN_R_SUBWIN_ELEMENT = 21,
	TPLAN_CHAIN_R_SUBWIN_DEPTH = 22,
	TPLAN_CHAIN_R_SUBWIN_EXTENT = 23,
	TPLAN_CHAIN_R_SUBWIN_ALIGN = 24,
	TPLAN_CHAIN_R_SUBWIN_SHAPE = 25,
	TPLAN_CHAIN_R_ATOMIC_OP = 26,
	TPLAN_CHAIN_R_ATOMIC_VALUE = 27,
	TPLAN_CHAIN_R_ATOMIC_UNUSED = 28,
	TPLAN_CHAIN_R_ATOMIC_ADDR = 29,
	TPLAN_CHAIN_R_OVERLAP = 30,
	TPLAN_CHAIN_R_COUNT = 31
};

/**
 * struct tplan_chain_reject - why a chain was refused
 * @rule: TPLAN_CHAIN_R_*
 * @chain: index of the chain in the caller's list
 * @packet: index of the packet in the chain (0 = the POLL_REGMEM)
 * @rank: the rank whose chain it is
 * @value: the offending value (see the rule)
 * @other_rank: TPLAN_CHAIN_R_OVERLAP: the rank sending the same bytes
 * @other_chain: TPLAN_CHAIN_R_OVERLAP: its chain
 * @other_packet: TPLAN_CHAIN_R_OVERLAP: its copy packet
 * @__reserved: 0
 *
 * The other_* fields are 0 for every other rule.
 */
struct tplan_chain_reject {
	__u32 rule;
	__u32 chain;
	__u32 packet;
	__u32 rank;
	__aligned_u64 value;
	__u32 other_rank;
	__u32 other_chain;
	__u32 other_packet;
	__u32 __reserved;
};

#ifdef __cplusplus
}
#endif

#endif /* _UAPI_TPLAN_CHAIN_H */
