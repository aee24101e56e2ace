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
 * Gate table: one 64-byte row per global chunk index, at the same offset
 * in every rank's heap.  Gates are never reset; rounds start at 1.
 */
#define TPLAN_GATE_ROW_BYTES	64
#define TPLAN_GATE_READY	0	/* u64; the engine polls its low 32 bits */
#define TPLAN_GATE_ARRIVAL	8	/* u64; each peer's chain adds 1 per round */
#define TPLAN_GATE_WRITERS	16	/* u64; mark_ready's writer counter */
#define TPLAN_GATE_EXPECTED	24	/* u32; writers per round, set by the kernel */
/* bytes 28..63 of a row are reserved */

/* Longest chain the kernel accepts, in dwords (1 MiB of packets). */
#define TPLAN_CHAIN_MAX_DWORDS	(1U << 18)

/* What a chain's POLL_REGMEM must hold besides its gate address. */
#define TPLAN_CHAIN_POLL_FUNC	5		/* ">=": ready >= round */
#define TPLAN_CHAIN_POLL_MASK	0xffffffffU
#define TPLAN_CHAIN_POLL_RETRY	0xfffU		/* retry forever */

/*
 * Rules.  "value" is what struct tplan_chain_reject.value holds.  Where it
 * says "dword", value = (index of the dword in the packet) << 32 | dword.
 */
enum tplan_chain_rule {
	TPLAN_CHAIN_OK = 0,
	/* Size and grammar */
	TPLAN_CHAIN_R_SIZE = 1,		/* 0 dwords, or more than the limit. value: dwords */
	TPLAN_CHAIN_R_TRUNCATED = 2,	/* packet runs past the chain's end. value: header */
	TPLAN_CHAIN_R_OPCODE = 3,	/* packet other than POLL_REGMEM, COPY_LINEAR,
					 * COPY_LINEAR_SUB_WINDOW, ATOMIC. value: header */
	TPLAN_CHAIN_R_FIRST = 4,	/* first packet is not POLL_REGMEM. value: header */
	TPLAN_CHAIN_R_POLL_AGAIN = 5,	/* POLL_REGMEM after the first packet. value: header */
	TPLAN_CHAIN_R_NO_COPY = 6,	/* ATOMIC right after the POLL_REGMEM. value: header */
	TPLAN_CHAIN_R_NO_ATOMIC = 7,	/* chain ends before its ATOMIC; packet = one past
					 * the last. value: dwords */
	TPLAN_CHAIN_R_TRAILING = 8,	/* dwords after the ATOMIC. value: first of them */
	TPLAN_CHAIN_R_RESERVED = 9,	/* a reserved bit is set. value: dword */
	/* POLL_REGMEM */
	TPLAN_CHAIN_R_POLL_MODE = 10,	/* register poll or HDP flush. value: header */
	TPLAN_CHAIN_R_POLL_FUNC = 11,	/* function is not ">=". value: function */
	TPLAN_CHAIN_R_POLL_MASK = 12,	/* mask is not 0xffffffff. value: mask */
	TPLAN_CHAIN_R_POLL_REF = 13,	/* reference is not 0 (the kernel writes the
					 * round). value: reference */
	TPLAN_CHAIN_R_POLL_RETRY = 14,	/* retry count is not 0xfff (forever): a poll
					 * that gives up would copy unready data.
					 * value: retry count.  The interval is free. */
	TPLAN_CHAIN_R_POLL_ADDR = 15,	/* not this chunk's ready gate. value: address */
	/* Copies (both kinds) */
	TPLAN_CHAIN_R_COPY_FLAGS = 16,	/* tmz, encrypt or an endian swap set. value: dword */
	TPLAN_CHAIN_R_COPY_COUNT = 17,	/* COPY_LINEAR over the engine's per-packet
					 * maximum. value: bytes */
	TPLAN_CHAIN_R_COPY_SRC = 18,	/* source bytes outside the sender's own part of
					 * the plan buffer. value: source address */
	TPLAN_CHAIN_R_COPY_DST = 19,	/* destination is not the source's offset in the
					 * peer's heap. value: destination address */
	TPLAN_CHAIN_R_COPY_DST_RANGE = 20, /* destination bytes outside the plan buffer
					 * on the peer. value: destination address */
	/* COPY_LINEAR_SUB_WINDOW */
	TPLAN_CHAIN_R_SUBWIN_ELEMENT = 21, /* element size code over 4 (16 bytes).
					 * value: code */
	TPLAN_CHAIN_R_SUBWIN_DEPTH = 22, /* not 2D: rect_z, z or slice pitch is not
					 * 1, 0, 1 (1 = field 0). value: that field */
	TPLAN_CHAIN_R_SUBWIN_EXTENT = 23, /* x + rect_x over the pitch, or x + rect_x or
					 * y + rect_y over 16384 (the coordinate
					 * fields). value: that sum */
	TPLAN_CHAIN_R_SUBWIN_ALIGN = 24, /* base address or pitch in bytes not a multiple
					 * of 4. value: address or pitch in bytes */
	TPLAN_CHAIN_R_SUBWIN_SHAPE = 25, /* destination x, y or pitch differs from the
					 * source's. value: destination field */
	/* ATOMIC */
	TPLAN_CHAIN_R_ATOMIC_OP = 26,	/* not ADD64 (47). value: operation */
	TPLAN_CHAIN_R_ATOMIC_VALUE = 27, /* operand is not 1. value: operand */
	TPLAN_CHAIN_R_ATOMIC_UNUSED = 28, /* loop, tmz, loop interval or compare data
					 * set. value: dword */
	TPLAN_CHAIN_R_ATOMIC_ADDR = 29,	/* not this chunk's arrival gate on the peer.
					 * value: address */
	/* Group-wide, at plan creation */
	TPLAN_CHAIN_R_OVERLAP = 30,	/* two ranks send the same bytes. value: the
					 * first such byte, as an offset in the heap */
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
