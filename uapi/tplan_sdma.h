/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * tplan: SDMA 4.x packets as MI200 (SDMA 4.4.0, gfx90a) and MI300
 * (SDMA 4.4.2, gfx942) read them.  Header only; builds in the kernel, in
 * C90 userspace and in C++.
 *
 * Layout facts are from the project's SDMA fact sheet (vega10 packet
 * header, sections 1-2); the section is named next to each packet.
 *
 * Every encoder takes named fields in natural units (byte counts, element
 * counts, pitches) and does the "minus one" itself:
 *   int tplan_sdma_encode_X(__u32 *dw, __u32 room, const struct tplan_sdma_X *f);
 * It returns the number of dwords written (the packet length), or
 *   -ENOSPC  room is smaller than the packet (nothing is written)
 *   -EINVAL  a value has no encoding (a zero byte count, a misaligned
 *            fence or memory-poll address)
 *   -ERANGE  a value does not fit its field (never truncated)
 *
 * Every decoder reads one packet at dw, of which avail dwords are readable:
 *   int tplan_sdma_decode_X(const __u32 *dw, __u32 avail, struct tplan_sdma_X *f);
 * It returns the packet length in dwords, or
 *   -ENODATA  the packet is longer than avail (or avail is 0)
 *   -EBADMSG  the header is not an X packet
 *   -EPROTO   a reserved bit is set or a field holds an undefined code
 * and leaves *f untouched on error.  decode(encode(f)) == f for every f
 * the encoder accepts.
 *
 * tplan_sdma_decode() decodes any packet this codec knows into a tagged
 * union and tplan_sdma_encode() encodes one; tplan_sdma_kind() names every
 * SDMA 4.x packet, including the
 * ones tplan never emits, so a chain holding them is refused by name.
 */
#ifndef _UAPI_TPLAN_SDMA_H
#define _UAPI_TPLAN_SDMA_H

#include <linux/types.h>
#include <linux/errno.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Header dword (fact sheet section 1) ---------------------------- */

#define TPLAN_SDMA_HDR_OP_SHIFT		0
#define TPLAN_SDMA_HDR_OP_MASK		0xffU
#define TPLAN_SDMA_HDR_SUB_OP_SHIFT	8
#define TPLAN_SDMA_HDR_SUB_OP_MASK	0xffU

#define TPLAN_SDMA_OP_NOP		0
#define TPLAN_SDMA_OP_COPY		1
#define TPLAN_SDMA_OP_WRITE		2
#define TPLAN_SDMA_OP_INDIRECT		4
#define TPLAN_SDMA_OP_FENCE		5
#define TPLAN_SDMA_OP_TRAP		6
#define TPLAN_SDMA_OP_SEM		7
#define TPLAN_SDMA_OP_POLL_REGMEM	8
#define TPLAN_SDMA_OP_COND_EXE		9
#define TPLAN_SDMA_OP_ATOMIC		10
#define TPLAN_SDMA_OP_CONST_FILL	11
#define TPLAN_SDMA_OP_PTEPDE		12
#define TPLAN_SDMA_OP_TIMESTAMP		13
#define TPLAN_SDMA_OP_SRBM_WRITE	14
#define TPLAN_SDMA_OP_PRE_EXE		15
#define TPLAN_SDMA_OP_DUMMY_TRAP	16	/* 16 on 4.x; 32 on 5.x */

#define TPLAN_SDMA_SUB_COPY_LINEAR		0
#define TPLAN_SDMA_SUB_COPY_TILED		1
#define TPLAN_SDMA_SUB_COPY_SOA			3
#define TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW	4
#define TPLAN_SDMA_SUB_COPY_TILED_SUB_WINDOW	5
#define TPLAN_SDMA_SUB_COPY_T2T_SUB_WINDOW	6
#define TPLAN_SDMA_SUB_COPY_DIRTY_PAGE		7
#define TPLAN_SDMA_SUB_COPY_LINEAR_PHY		8
#define TPLAN_SDMA_SUB_WRITE_LINEAR		0
#define TPLAN_SDMA_SUB_WRITE_TILED		1
#define TPLAN_SDMA_SUB_POLL_REGMEM		0
#define TPLAN_SDMA_SUB_POLL_REG_WRITE_MEM	1
#define TPLAN_SDMA_SUB_POLL_DBIT_WRITE_MEM	2
#define TPLAN_SDMA_SUB_POLL_MEM_VERIFY		3
#define TPLAN_SDMA_SUB_CONST_FILL		0
#define TPLAN_SDMA_SUB_DATA_FILL_MULTI		1	/* op 11 assumed */
#define TPLAN_SDMA_SUB_PTEPDE_GEN		0
#define TPLAN_SDMA_SUB_PTEPDE_COPY		1
#define TPLAN_SDMA_SUB_PTEPDE_RMW		2
#define TPLAN_SDMA_SUB_PTEPDE_COPY_BACKWARDS	3
#define TPLAN_SDMA_SUB_TIMESTAMP_SET		0
#define TPLAN_SDMA_SUB_TIMESTAMP_GET		1
#define TPLAN_SDMA_SUB_TIMESTAMP_GET_GLOBAL	2

/*
 * Every SDMA 4.x packet by name.  Numbers are stable.  Only the first
 * group has an encoder and a decoder; the rest are recognised so that they
 * can be refused by name.
 */
enum tplan_sdma_kind {
	TPLAN_SDMA_KIND_UNKNOWN = 0,		/* no SDMA 4.x packet has this header */
	TPLAN_SDMA_KIND_NOP = 1,
	TPLAN_SDMA_KIND_COPY_LINEAR = 2,
	TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW = 3,
	TPLAN_SDMA_KIND_POLL_REGMEM = 4,
	TPLAN_SDMA_KIND_ATOMIC = 5,
	TPLAN_SDMA_KIND_FENCE = 6,
	TPLAN_SDMA_KIND_TRAP = 7,
	/* recognised by name only */
	TPLAN_SDMA_KIND_COPY_LINEAR_BROADCAST = 8,
	TPLAN_SDMA_KIND_COPY_TILED = 9,
	TPLAN_SDMA_KIND_COPY_SOA = 10,
	TPLAN_SDMA_KIND_COPY_TILED_SUB_WINDOW = 11,
	TPLAN_SDMA_KIND_COPY_T2T_SUB_WINDOW = 12,
	TPLAN_SDMA_KIND_COPY_DIRTY_PAGE = 13,
	TPLAN_SDMA_KIND_COPY_LINEAR_PHY = 14,
	TPLAN_SDMA_KIND_WRITE_LINEAR = 15,
	TPLAN_SDMA_KIND_WRITE_TILED = 16,
	TPLAN_SDMA_KIND_INDIRECT_BUFFER = 17,
	TPLAN_SDMA_KIND_SEM = 18,
	TPLAN_SDMA_KIND_POLL_REG_WRITE_MEM = 19,
	TPLAN_SDMA_KIND_POLL_DBIT_WRITE_MEM = 20,
	TPLAN_SDMA_KIND_POLL_MEM_VERIFY = 21,
	TPLAN_SDMA_KIND_COND_EXE = 22,
	TPLAN_SDMA_KIND_CONST_FILL = 23,
	TPLAN_SDMA_KIND_DATA_FILL_MULTI = 24,
	TPLAN_SDMA_KIND_PTEPDE_GEN = 25,
	TPLAN_SDMA_KIND_PTEPDE_COPY = 26,
	TPLAN_SDMA_KIND_PTEPDE_RMW = 27,
	TPLAN_SDMA_KIND_PTEPDE_COPY_BACKWARDS = 28,
	TPLAN_SDMA_KIND_TIMESTAMP_SET = 29,
	TPLAN_SDMA_KIND_TIMESTAMP_GET = 30,
	TPLAN_SDMA_KIND_TIMESTAMP_GET_GLOBAL = 31,
	TPLAN_SDMA_KIND_SRBM_WRITE = 32,
	TPLAN_SDMA_KIND_PRE_EXE = 33,
	TPLAN_SDMA_KIND_DUMMY_TRAP = 34,
	TPLAN_SDMA_KIND_COUNT = 35
};

/* ---- Packet layouts (fact sheet section 2); _MASK is unshifted ------- */

/* NOP (2.1): 1 + count dwords; a zero dword is a 1-dword NOP. */
#define TPLAN_SDMA_NOP_COUNT_SHIFT	16
#define TPLAN_SDMA_NOP_COUNT_MASK	0x3fffU
#define TPLAN_SDMA_NOP_MAX_DW		(TPLAN_SDMA_NOP_COUNT_MASK + 1)

/* COPY_LINEAR (2.2): 7 dwords; the broadcast form (bit 27) is 9. */
#define TPLAN_SDMA_COPY_LINEAR_DW		7
#define TPLAN_SDMA_COPY_BROADCAST_DW		9
#define TPLAN_SDMA_COPY_HDR_ENCRYPT		(1U << 16)
#define TPLAN_SDMA_COPY_HDR_TMZ			(1U << 18)
#define TPLAN_SDMA_COPY_HDR_BROADCAST		(1U << 27)
/*
 * dw1 holds bytes - 1.  The vega10 header declares 22 bits; the 30-bit
 * view is what gfx90a uses for 1 GiB copies.  Which width an engine honours
 * is a per-engine limit (kmod/sdma_limits.c), not a codec matter.
 */
#define TPLAN_SDMA_COPY_COUNT_MASK		0x3fffffffU
#define TPLAN_SDMA_COPY_MAX_BYTES		(1U << 30)
#define TPLAN_SDMA_COPY_DST_SW_SHIFT		16
#define TPLAN_SDMA_COPY_SRC_SW_SHIFT		24
#define TPLAN_SDMA_SW_MASK			0x3U

/* COPY_LINEAR_SUB_WINDOW (2.3): 13 dwords. */
#define TPLAN_SDMA_SUB_WINDOW_DW		13
#define TPLAN_SDMA_SUB_WINDOW_HDR_TMZ		(1U << 18)
#define TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT	29
#define TPLAN_SDMA_SUB_WINDOW_ESIZE_MASK	0x7U
#define TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX		4	/* log2: 1..16 bytes */
#define TPLAN_SDMA_SUB_WINDOW_X_MASK		0x3fffU	/* dw3/8 [13:0] */
#define TPLAN_SDMA_SUB_WINDOW_Y_SHIFT		16
#define TPLAN_SDMA_SUB_WINDOW_Y_MASK		0x3fffU	/* dw3/8 [29:16] */
#define TPLAN_SDMA_SUB_WINDOW_Z_MASK		0x7ffU	/* dw4/9 [10:0] */
#define TPLAN_SDMA_SUB_WINDOW_PITCH_SHIFT	13
#define TPLAN_SDMA_SUB_WINDOW_PITCH_MASK	0x7ffffU	/* dw4/9 [31:13], minus 1 */
#define TPLAN_SDMA_SUB_WINDOW_SLICE_MASK	0x0fffffffU	/* dw5/10 [27:0], minus 1 */
#define TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK	0x3fffU	/* dw11 [13:0], minus 1 */
#define TPLAN_SDMA_SUB_WINDOW_RECT_Y_SHIFT	16
#define TPLAN_SDMA_SUB_WINDOW_RECT_Y_MASK	0x3fffU	/* dw11 [29:16], minus 1 */
#define TPLAN_SDMA_SUB_WINDOW_RECT_Z_MASK	0x7ffU	/* dw12 [10:0], minus 1 */
/* dw12 also holds dst_sw [17:16] and src_sw [25:24]: the COPY_*_SW shifts. */

/* POLL_REGMEM (2.4): 6 dwords. */
#define TPLAN_SDMA_POLL_DW			6
#define TPLAN_SDMA_POLL_HDR_HDP_FLUSH		(1U << 26)
#define TPLAN_SDMA_POLL_HDR_FUNC_SHIFT		28
#define TPLAN_SDMA_POLL_HDR_FUNC_MASK		0x7U
#define TPLAN_SDMA_POLL_HDR_MEM_POLL		(1U << 31)
#define TPLAN_SDMA_POLL_REF_DW			3	/* the dword a re-arm patches */
#define TPLAN_SDMA_POLL_MASK_DW			4
#define TPLAN_SDMA_POLL_INTERVAL_MASK		0xffffU	/* dw5 [15:0] */
#define TPLAN_SDMA_POLL_RETRY_SHIFT		16
#define TPLAN_SDMA_POLL_RETRY_MASK		0xfffU	/* dw5 [27:16] */
#define TPLAN_SDMA_POLL_RETRY_FOREVER		0xfffU
/* func: compare (value & mask) with the reference */
#define TPLAN_SDMA_FUNC_ALWAYS		0
#define TPLAN_SDMA_FUNC_LT		1
#define TPLAN_SDMA_FUNC_LE		2
#define TPLAN_SDMA_FUNC_EQ		3
#define TPLAN_SDMA_FUNC_NE		4
#define TPLAN_SDMA_FUNC_GE		5
#define TPLAN_SDMA_FUNC_GT		6	/* 7 is undefined */

/* ATOMIC (2.5): 8 dwords. */
#define TPLAN_SDMA_ATOMIC_DW			8
#define TPLAN_SDMA_ATOMIC_HDR_LOOP		(1U << 16)
#define TPLAN_SDMA_ATOMIC_HDR_TMZ		(1U << 18)
#define TPLAN_SDMA_ATOMIC_HDR_OP_SHIFT		25
#define TPLAN_SDMA_ATOMIC_HDR_OP_MASK		0x7fU
#define TPLAN_SDMA_ATOMIC_LOOP_INTERVAL_MASK	0x1fffU	/* dw7 [12:0] */
#define TPLAN_SDMA_ATOMIC_ADD64			47	/* the only op AMD code uses */

/* FENCE (2.6): 4 dwords, writes 32 bits at a dword-aligned address. */
#define TPLAN_SDMA_FENCE_DW			4
#define TPLAN_SDMA_FENCE_DATA_DW		3	/* the 32 bits it writes */

/* TRAP (2.7): 2 dwords. */
#define TPLAN_SDMA_TRAP_DW			2
#define TPLAN_SDMA_TRAP_INT_CONTEXT_MASK	0x0fffffffU

/* Layouts of packets tplan only recognises (2.8, 2.9, 2.4). */
#define TPLAN_SDMA_INDIRECT_DW			6
#define TPLAN_SDMA_CONST_FILL_DW		5
#define TPLAN_SDMA_TIMESTAMP_DW			3
#define TPLAN_SDMA_POLL_REG_WRITE_MEM_DW	4
#define TPLAN_SDMA_POLL_DBIT_WRITE_MEM_DW	5
#define TPLAN_SDMA_POLL_MEM_VERIFY_DW		13
#define TPLAN_SDMA_WRITE_HDR_DW			4	/* then count + 1 data dwords */
#define TPLAN_SDMA_WRITE_COUNT_MASK		0xfffffU	/* dw3 [19:0] */

/* ---- Named fields ------------------------------------------------------ */

/* Packets are whole dwords; a field of 0 or 1 is a flag. */

struct tplan_sdma_nop {
	__u32 dwords;		/* whole packet, header included: 1..16384 */
};

struct tplan_sdma_copy_linear {
	__u64 src;		/* device addresses, any byte alignment */
	__u64 dst;
	__u32 bytes;		/* 1..2^30 (stored as bytes - 1) */
	__u32 encrypt;		/* 0/1 */
	__u32 tmz;		/* 0/1 */
	__u32 src_swap;		/* endian swap, 0..3 */
	__u32 dst_swap;		/* 0..3 */
};

/* One side of a sub-window copy; x, pitch and slice_pitch in elements. */
struct tplan_sdma_window {
	__u64 addr;		/* base address */
	__u32 x;		/* 0..16383 */
	__u32 y;		/* 0..16383 */
	__u32 z;		/* 0..2047 */
	__u32 pitch;		/* elements per row: 1..2^19 (stored minus 1) */
	__u32 slice_pitch;	/* elements per slice: 1..2^28 (stored minus 1); 1 if flat */
};

struct tplan_sdma_copy_sub_window {
	struct tplan_sdma_window src;
	struct tplan_sdma_window dst;
	__u32 rect_x;		/* elements: 1..16384 (stored minus 1) */
	__u32 rect_y;		/* rows: 1..16384 (stored minus 1) */
	__u32 rect_z;		/* slices: 1..2048 (stored minus 1) */
	__u32 elem_size_log2;	/* bytes per element = 1 << this, 0..4 */
	__u32 tmz;		/* 0/1 */
	__u32 src_swap;		/* 0..3 */
	__u32 dst_swap;		/* 0..3 */
};

struct tplan_sdma_poll_regmem {
	__u64 addr;		/* memory: dword-aligned; register: dw1 | dw2 << 32 */
	__u32 ref;		/* compared with (value & mask) */
	__u32 mask;
	__u32 func;		/* TPLAN_SDMA_FUNC_*: 0..6 */
	__u32 mem_poll;		/* 1 = memory, 0 = register */
	__u32 hdp_flush;	/* 0/1 */
	__u32 interval;		/* 0..0xffff, unit undocumented */
	__u32 retry;		/* 0..0xfff; 0xfff = forever */
};

struct tplan_sdma_atomic {
	__u64 addr;
	__u64 src_data;		/* the operand: 1 for "add one" */
	__u64 cmp_data;		/* compare-swap only */
	__u32 atomic_op;	/* 0..127; TPLAN_SDMA_ATOMIC_ADD64 */
	__u32 loop;		/* 0/1 */
	__u32 tmz;		/* 0/1 */
	__u32 loop_interval;	/* 0..0x1fff */
};

struct tplan_sdma_fence {
	__u64 addr;		/* dword aligned */
	__u32 data;
};

struct tplan_sdma_trap {
	__u32 int_context;	/* 0..0x0fffffff */
};

/* Any packet the codec decodes. */
struct tplan_sdma_packet {
	__u32 kind;		/* enum tplan_sdma_kind */
	__u32 dwords;		/* packet length */
	union {
		struct tplan_sdma_nop nop;
		struct tplan_sdma_copy_linear copy_linear;
		struct tplan_sdma_copy_sub_window sub_window;
		struct tplan_sdma_poll_regmem poll;
		struct tplan_sdma_atomic atomic;
		struct tplan_sdma_fence fence;
		struct tplan_sdma_trap trap;
	} u;
};

/* ---- Header helpers ---------------------------------------------------- */

static __inline__ __u32 tplan_sdma_hdr(__u32 op, __u32 sub_op)
{
	return (op & TPLAN_SDMA_HDR_OP_MASK) |
	       ((sub_op & TPLAN_SDMA_HDR_SUB_OP_MASK) << TPLAN_SDMA_HDR_SUB_OP_SHIFT);
}

static __inline__ __u32 tplan_sdma_hdr_op(__u32 header)
{
	return (header >> TPLAN_SDMA_HDR_OP_SHIFT) & TPLAN_SDMA_HDR_OP_MASK;
}

static __inline__ __u32 tplan_sdma_hdr_sub_op(__u32 header)
{
	return (header >> TPLAN_SDMA_HDR_SUB_OP_SHIFT) & TPLAN_SDMA_HDR_SUB_OP_MASK;
}

static __inline__ __u64 tplan_sdma_addr(__u32 lo, __u32 hi)
{
	return ((__u64)hi << 32) | lo;
}

static __inline__ __u32 tplan_sdma_lo(__u64 v)
{
	return (__u32)(v & 0xffffffffU);
}

static __inline__ __u32 tplan_sdma_hi(__u64 v)
{
	return (__u32)(v >> 32);
}

/* The packet a header starts, by (op, sub_op) and the broadcast bit. */
static __inline__ int tplan_sdma_kind(__u32 header)
{
	__u32 op = tplan_sdma_hdr_op(header);
	__u32 sub = tplan_sdma_hdr_sub_op(header);

	switch (op) {
	case TPLAN_SDMA_OP_NOP:
		return sub == 0 ? TPLAN_SDMA_KIND_NOP : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_COPY:
		switch (sub) {
		case TPLAN_SDMA_SUB_COPY_LINEAR:
			return (header & TPLAN_SDMA_COPY_HDR_BROADCAST) ?
			       TPLAN_SDMA_KIND_COPY_LINEAR_BROADCAST :
			       TPLAN_SDMA_KIND_COPY_LINEAR;
		case TPLAN_SDMA_SUB_COPY_TILED:
			return TPLAN_SDMA_KIND_COPY_TILED;
		case TPLAN_SDMA_SUB_COPY_SOA:
			return TPLAN_SDMA_KIND_COPY_SOA;
		case TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW:
			return TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW;
		case TPLAN_SDMA_SUB_COPY_TILED_SUB_WINDOW:
			return TPLAN_SDMA_KIND_COPY_TILED_SUB_WINDOW;
		case TPLAN_SDMA_SUB_COPY_T2T_SUB_WINDOW:
			return TPLAN_SDMA_KIND_COPY_T2T_SUB_WINDOW;
		case TPLAN_SDMA_SUB_COPY_DIRTY_PAGE:
			return TPLAN_SDMA_KIND_COPY_DIRTY_PAGE;
		case TPLAN_SDMA_SUB_COPY_LINEAR_PHY:
			return TPLAN_SDMA_KIND_COPY_LINEAR_PHY;
		}
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_WRITE:
		if (sub == TPLAN_SDMA_SUB_WRITE_LINEAR)
			return TPLAN_SDMA_KIND_WRITE_LINEAR;
		if (sub == TPLAN_SDMA_SUB_WRITE_TILED)
			return TPLAN_SDMA_KIND_WRITE_TILED;
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_INDIRECT:
		return sub == 0 ? TPLAN_SDMA_KIND_INDIRECT_BUFFER : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_FENCE:
		return sub == 0 ? TPLAN_SDMA_KIND_FENCE : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_TRAP:
		return sub == 0 ? TPLAN_SDMA_KIND_TRAP : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_SEM:
		return sub == 0 ? TPLAN_SDMA_KIND_SEM : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_POLL_REGMEM:
		switch (sub) {
		case TPLAN_SDMA_SUB_POLL_REGMEM:
			return TPLAN_SDMA_KIND_POLL_REGMEM;
		case TPLAN_SDMA_SUB_POLL_REG_WRITE_MEM:
			return TPLAN_SDMA_KIND_POLL_REG_WRITE_MEM;
		case TPLAN_SDMA_SUB_POLL_DBIT_WRITE_MEM:
			return TPLAN_SDMA_KIND_POLL_DBIT_WRITE_MEM;
		case TPLAN_SDMA_SUB_POLL_MEM_VERIFY:
			return TPLAN_SDMA_KIND_POLL_MEM_VERIFY;
		}
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_COND_EXE:
		return sub == 0 ? TPLAN_SDMA_KIND_COND_EXE : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_ATOMIC:
		/* the header defines no sub_op for ATOMIC; only 0 is known */
		return sub == 0 ? TPLAN_SDMA_KIND_ATOMIC : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_CONST_FILL:
		if (sub == TPLAN_SDMA_SUB_CONST_FILL)
			return TPLAN_SDMA_KIND_CONST_FILL;
		if (sub == TPLAN_SDMA_SUB_DATA_FILL_MULTI)
			return TPLAN_SDMA_KIND_DATA_FILL_MULTI;
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_PTEPDE:
		switch (sub) {
		case TPLAN_SDMA_SUB_PTEPDE_GEN:
			return TPLAN_SDMA_KIND_PTEPDE_GEN;
		case TPLAN_SDMA_SUB_PTEPDE_COPY:
			return TPLAN_SDMA_KIND_PTEPDE_COPY;
		case TPLAN_SDMA_SUB_PTEPDE_RMW:
			return TPLAN_SDMA_KIND_PTEPDE_RMW;
		case TPLAN_SDMA_SUB_PTEPDE_COPY_BACKWARDS:
			return TPLAN_SDMA_KIND_PTEPDE_COPY_BACKWARDS;
		}
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_TIMESTAMP:
		switch (sub) {
		case TPLAN_SDMA_SUB_TIMESTAMP_SET:
			return TPLAN_SDMA_KIND_TIMESTAMP_SET;
		case TPLAN_SDMA_SUB_TIMESTAMP_GET:
			return TPLAN_SDMA_KIND_TIMESTAMP_GET;
		case TPLAN_SDMA_SUB_TIMESTAMP_GET_GLOBAL:
			return TPLAN_SDMA_KIND_TIMESTAMP_GET_GLOBAL;
		}
		return TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_SRBM_WRITE:
		return sub == 0 ? TPLAN_SDMA_KIND_SRBM_WRITE : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_PRE_EXE:
		return sub == 0 ? TPLAN_SDMA_KIND_PRE_EXE : TPLAN_SDMA_KIND_UNKNOWN;
	case TPLAN_SDMA_OP_DUMMY_TRAP:
		return sub == 0 ? TPLAN_SDMA_KIND_DUMMY_TRAP : TPLAN_SDMA_KIND_UNKNOWN;
	}
	return TPLAN_SDMA_KIND_UNKNOWN;
}

static __inline__ const char *tplan_sdma_kind_name(int kind)
{
	switch (kind) {
	case TPLAN_SDMA_KIND_NOP: return "NOP";
	case TPLAN_SDMA_KIND_COPY_LINEAR: return "COPY_LINEAR";
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW: return "COPY_LINEAR_SUB_WINDOW";
	case TPLAN_SDMA_KIND_POLL_REGMEM: return "POLL_REGMEM";
	case TPLAN_SDMA_KIND_ATOMIC: return "ATOMIC";
	case TPLAN_SDMA_KIND_FENCE: return "FENCE";
	case TPLAN_SDMA_KIND_TRAP: return "TRAP";
	case TPLAN_SDMA_KIND_COPY_LINEAR_BROADCAST: return "COPY_LINEAR_BROADCAST";
	case TPLAN_SDMA_KIND_COPY_TILED: return "COPY_TILED";
	case TPLAN_SDMA_KIND_COPY_SOA: return "COPY_SOA";
	case TPLAN_SDMA_KIND_COPY_TILED_SUB_WINDOW: return "COPY_TILED_SUB_WINDOW";
	case TPLAN_SDMA_KIND_COPY_T2T_SUB_WINDOW: return "COPY_T2T_SUB_WINDOW";
	case TPLAN_SDMA_KIND_COPY_DIRTY_PAGE: return "COPY_DIRTY_PAGE";
	case TPLAN_SDMA_KIND_COPY_LINEAR_PHY: return "COPY_LINEAR_PHY";
	case TPLAN_SDMA_KIND_WRITE_LINEAR: return "WRITE_LINEAR";
	case TPLAN_SDMA_KIND_WRITE_TILED: return "WRITE_TILED";
	case TPLAN_SDMA_KIND_INDIRECT_BUFFER: return "INDIRECT_BUFFER";
	case TPLAN_SDMA_KIND_SEM: return "SEM";
	case TPLAN_SDMA_KIND_POLL_REG_WRITE_MEM: return "POLL_REG_WRITE_MEM";
	case TPLAN_SDMA_KIND_POLL_DBIT_WRITE_MEM: return "POLL_DBIT_WRITE_MEM";
	case TPLAN_SDMA_KIND_POLL_MEM_VERIFY: return "POLL_MEM_VERIFY";
	case TPLAN_SDMA_KIND_COND_EXE: return "COND_EXE";
	case TPLAN_SDMA_KIND_CONST_FILL: return "CONST_FILL";
	case TPLAN_SDMA_KIND_DATA_FILL_MULTI: return "DATA_FILL_MULTI";
	case TPLAN_SDMA_KIND_PTEPDE_GEN: return "PTEPDE_GEN";
	case TPLAN_SDMA_KIND_PTEPDE_COPY: return "PTEPDE_COPY";
	case TPLAN_SDMA_KIND_PTEPDE_RMW: return "PTEPDE_RMW";
	case TPLAN_SDMA_KIND_PTEPDE_COPY_BACKWARDS: return "PTEPDE_COPY_BACKWARDS";
	case TPLAN_SDMA_KIND_TIMESTAMP_SET: return "TIMESTAMP_SET";
	case TPLAN_SDMA_KIND_TIMESTAMP_GET: return "TIMESTAMP_GET";
	case TPLAN_SDMA_KIND_TIMESTAMP_GET_GLOBAL: return "TIMESTAMP_GET_GLOBAL";
	case TPLAN_SDMA_KIND_SRBM_WRITE: return "SRBM_WRITE";
	case TPLAN_SDMA_KIND_PRE_EXE: return "PRE_EXE";
	case TPLAN_SDMA_KIND_DUMMY_TRAP: return "DUMMY_TRAP";
	}
	return "UNKNOWN";
}

/*
 * Packet length in dwords from its header alone.  Returns the length,
 * 0 when the length is in the body (WRITE_LINEAR: see
 * tplan_sdma_packet_dwords), -EOPNOTSUPP for a packet whose layout tplan
 * does not know, -EBADMSG for a header no SDMA 4.x packet has.
 */
static __inline__ int tplan_sdma_header_dwords(__u32 header)
{
	switch (tplan_sdma_kind(header)) {
	case TPLAN_SDMA_KIND_NOP:
		return (int)((header >> TPLAN_SDMA_NOP_COUNT_SHIFT) &
			     TPLAN_SDMA_NOP_COUNT_MASK) + 1;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		return TPLAN_SDMA_COPY_LINEAR_DW;
	case TPLAN_SDMA_KIND_COPY_LINEAR_BROADCAST:
		return TPLAN_SDMA_COPY_BROADCAST_DW;
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		return TPLAN_SDMA_SUB_WINDOW_DW;
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		return TPLAN_SDMA_POLL_DW;
	case TPLAN_SDMA_KIND_POLL_REG_WRITE_MEM:
		return TPLAN_SDMA_POLL_REG_WRITE_MEM_DW;
	case TPLAN_SDMA_KIND_POLL_DBIT_WRITE_MEM:
		return TPLAN_SDMA_POLL_DBIT_WRITE_MEM_DW;
	case TPLAN_SDMA_KIND_POLL_MEM_VERIFY:
		return TPLAN_SDMA_POLL_MEM_VERIFY_DW;
	case TPLAN_SDMA_KIND_ATOMIC:
		return TPLAN_SDMA_ATOMIC_DW;
	case TPLAN_SDMA_KIND_FENCE:
		return TPLAN_SDMA_FENCE_DW;
	case TPLAN_SDMA_KIND_TRAP:
		return TPLAN_SDMA_TRAP_DW;
	case TPLAN_SDMA_KIND_INDIRECT_BUFFER:
		return TPLAN_SDMA_INDIRECT_DW;
	case TPLAN_SDMA_KIND_CONST_FILL:
		return TPLAN_SDMA_CONST_FILL_DW;
	case TPLAN_SDMA_KIND_TIMESTAMP_SET:
	case TPLAN_SDMA_KIND_TIMESTAMP_GET:
	case TPLAN_SDMA_KIND_TIMESTAMP_GET_GLOBAL:
		return TPLAN_SDMA_TIMESTAMP_DW;
	case TPLAN_SDMA_KIND_WRITE_LINEAR:
		return 0;
	case TPLAN_SDMA_KIND_UNKNOWN:
		return -EBADMSG;
	}
	return -EOPNOTSUPP;
}

/*
 * Length of the packet at dw, of which avail dwords are readable: the
 * length, or -ENODATA when it runs past avail (or the dword holding the
 * length does), or the errors of tplan_sdma_header_dwords.
 */
static __inline__ int tplan_sdma_packet_dwords(const __u32 *dw, __u32 avail)
{
	int n;
	__u32 count;

	if (avail == 0)
		return -ENODATA;
	n = tplan_sdma_header_dwords(dw[0]);
	if (n == 0) {
		if (avail < TPLAN_SDMA_WRITE_HDR_DW)
			return -ENODATA;
		count = dw[3] & TPLAN_SDMA_WRITE_COUNT_MASK;
		n = (int)(TPLAN_SDMA_WRITE_HDR_DW + count + 1);
	}
	if (n > 0 && (__u32)n > avail)
		return -ENODATA;
	return n;
}

/*
 * Bits of dword i of a packet of this kind with this header that carry a
 * field (header fields included).  Any other bit is reserved: decoders
 * refuse it, the chain validator names it.  Packets without a codec
 * report every bit defined.
 */
static __inline__ __u32 tplan_sdma_kind_defined_bits(int kind, __u32 header, __u32 i)
{
	const __u32 hdr = 0xffffU;	/* op and sub_op */
	const __u32 xy = 0x3fff3fffU;	/* [13:0] and [29:16] */
	const __u32 zpitch = 0xffffe7ffU; /* [10:0] and [31:13] */
	const __u32 sw = 0x03030000U;	/* [17:16] and [25:24] */

	switch (kind) {
	case TPLAN_SDMA_KIND_NOP:
		return i == 0 ? 0x3fffffffU : 0xffffffffU;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		if (i == 0)
			return hdr | TPLAN_SDMA_COPY_HDR_ENCRYPT | TPLAN_SDMA_COPY_HDR_TMZ;
		if (i == 1)
			return TPLAN_SDMA_COPY_COUNT_MASK;
		if (i == 2)
			return sw;
		return 0xffffffffU;
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		switch (i) {
		case 0:
			return hdr | TPLAN_SDMA_SUB_WINDOW_HDR_TMZ |
			       (TPLAN_SDMA_SUB_WINDOW_ESIZE_MASK << TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT);
		case 3: case 8: case 11:
			return xy;
		case 4: case 9:
			return zpitch;
		case 5: case 10:
			return TPLAN_SDMA_SUB_WINDOW_SLICE_MASK;
		case 12:
			return TPLAN_SDMA_SUB_WINDOW_RECT_Z_MASK | sw;
		}
		return 0xffffffffU;
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		if (i == 0)
			return hdr | TPLAN_SDMA_POLL_HDR_HDP_FLUSH |
			       (TPLAN_SDMA_POLL_HDR_FUNC_MASK << TPLAN_SDMA_POLL_HDR_FUNC_SHIFT) |
			       TPLAN_SDMA_POLL_HDR_MEM_POLL;
		if (i == 1 && (header & TPLAN_SDMA_POLL_HDR_MEM_POLL))
			return 0xfffffffcU;	/* memory polls read whole dwords */
		if (i == 5)
			return TPLAN_SDMA_POLL_INTERVAL_MASK |
			       (TPLAN_SDMA_POLL_RETRY_MASK << TPLAN_SDMA_POLL_RETRY_SHIFT);
		return 0xffffffffU;
	case TPLAN_SDMA_KIND_ATOMIC:
		if (i == 0)
			return hdr | TPLAN_SDMA_ATOMIC_HDR_LOOP | TPLAN_SDMA_ATOMIC_HDR_TMZ |
			       (TPLAN_SDMA_ATOMIC_HDR_OP_MASK << TPLAN_SDMA_ATOMIC_HDR_OP_SHIFT);
		if (i == 7)
			return TPLAN_SDMA_ATOMIC_LOOP_INTERVAL_MASK;
		return 0xffffffffU;
	case TPLAN_SDMA_KIND_FENCE:
		if (i == 0)
			return hdr;	/* gfx10+ cache bits do not exist on 4.x */
		if (i == 1)
			return 0xfffffffcU;
		return 0xffffffffU;
	case TPLAN_SDMA_KIND_TRAP:
		return i == 0 ? hdr : TPLAN_SDMA_TRAP_INT_CONTEXT_MASK;
	}
	return 0xffffffffU;
}

/* The same for dword i of the packet at dw. */
static __inline__ __u32 tplan_sdma_defined_bits(const __u32 *dw, __u32 i)
{
	return tplan_sdma_kind_defined_bits(tplan_sdma_kind(dw[0]), dw[0], i);
}

/*
 * Common checks of a decoder: the header is the wanted kind, the packet is
 * readable, no reserved bit is set.  Returns the packet length or an error.
 */
static __inline__ int tplan_sdma_decode_check(const __u32 *dw, __u32 avail, int kind)
{
	int n;
	__u32 i;

	if (avail == 0)
		return -ENODATA;
	if (tplan_sdma_kind(dw[0]) != kind)
		return -EBADMSG;
	n = tplan_sdma_packet_dwords(dw, avail);
	if (n < 0)
		return n;
	for (i = 0; i < (__u32)n; i++)
		if (dw[i] & ~tplan_sdma_kind_defined_bits(kind, dw[0], i))
			return -EPROTO;
	return n;
}

/* ---- NOP --------------------------------------------------------------- */

/* A NOP of f->dwords dwords (header count = dwords - 1), payload zeroed. */
static __inline__ int tplan_sdma_encode_nop(__u32 *dw, __u32 room,
					    const struct tplan_sdma_nop *f)
{
	__u32 i;

	if (f->dwords == 0)
		return -EINVAL;
	if (f->dwords > TPLAN_SDMA_NOP_MAX_DW)
		return -ERANGE;
	if (room < f->dwords)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_NOP, 0) |
		((f->dwords - 1) << TPLAN_SDMA_NOP_COUNT_SHIFT);
	for (i = 1; i < f->dwords; i++)
		dw[i] = 0;
	return (int)f->dwords;
}

static __inline__ int tplan_sdma_decode_nop(const __u32 *dw, __u32 avail,
					    struct tplan_sdma_nop *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_NOP);

	if (n < 0)
		return n;
	f->dwords = (__u32)n;
	return n;
}

/* ---- COPY_LINEAR ------------------------------------------------------- */

static __inline__ int tplan_sdma_encode_copy_linear(__u32 *dw, __u32 room,
						    const struct tplan_sdma_copy_linear *f)
{
	if (f->bytes == 0)
		return -EINVAL;	/* would encode count -1 */
	if (f->bytes > TPLAN_SDMA_COPY_MAX_BYTES || f->encrypt > 1 || f->tmz > 1 ||
	    f->src_swap > TPLAN_SDMA_SW_MASK || f->dst_swap > TPLAN_SDMA_SW_MASK)
		return -ERANGE;
	if (room < TPLAN_SDMA_COPY_LINEAR_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_COPY, TPLAN_SDMA_SUB_COPY_LINEAR) |
		(f->encrypt ? TPLAN_SDMA_COPY_HDR_ENCRYPT : 0) |
		(f->tmz ? TPLAN_SDMA_COPY_HDR_TMZ : 0);
	dw[1] = f->bytes - 1;
	dw[2] = (f->dst_swap << TPLAN_SDMA_COPY_DST_SW_SHIFT) |
		(f->src_swap << TPLAN_SDMA_COPY_SRC_SW_SHIFT);
	dw[3] = tplan_sdma_lo(f->src);
	dw[4] = tplan_sdma_hi(f->src);
	dw[5] = tplan_sdma_lo(f->dst);
	dw[6] = tplan_sdma_hi(f->dst);
	return TPLAN_SDMA_COPY_LINEAR_DW;
}

static __inline__ int tplan_sdma_decode_copy_linear(const __u32 *dw, __u32 avail,
						    struct tplan_sdma_copy_linear *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_COPY_LINEAR);

	if (n < 0)
		return n;
	f->encrypt = (dw[0] & TPLAN_SDMA_COPY_HDR_ENCRYPT) ? 1 : 0;
	f->tmz = (dw[0] & TPLAN_SDMA_COPY_HDR_TMZ) ? 1 : 0;
	f->bytes = (dw[1] & TPLAN_SDMA_COPY_COUNT_MASK) + 1;
	f->dst_swap = (dw[2] >> TPLAN_SDMA_COPY_DST_SW_SHIFT) & TPLAN_SDMA_SW_MASK;
	f->src_swap = (dw[2] >> TPLAN_SDMA_COPY_SRC_SW_SHIFT) & TPLAN_SDMA_SW_MASK;
	f->src = tplan_sdma_addr(dw[3], dw[4]);
	f->dst = tplan_sdma_addr(dw[5], dw[6]);
	return n;
}

/* ---- COPY_LINEAR_SUB_WINDOW ------------------------------------------- */

static __inline__ int tplan_sdma_window_fits(const struct tplan_sdma_window *w)
{
	return w->x <= TPLAN_SDMA_SUB_WINDOW_X_MASK &&
	       w->y <= TPLAN_SDMA_SUB_WINDOW_Y_MASK &&
	       w->z <= TPLAN_SDMA_SUB_WINDOW_Z_MASK &&
	       w->pitch >= 1 && w->pitch - 1 <= TPLAN_SDMA_SUB_WINDOW_PITCH_MASK &&
	       w->slice_pitch >= 1 &&
	       w->slice_pitch - 1 <= TPLAN_SDMA_SUB_WINDOW_SLICE_MASK;
}

/* Writes one side: base address (2 dwords), x/y, z/pitch, slice pitch. */
static __inline__ void tplan_sdma_window_put(__u32 *dw, const struct tplan_sdma_window *w)
{
	dw[0] = tplan_sdma_lo(w->addr);
	dw[1] = tplan_sdma_hi(w->addr);
	dw[2] = w->x | (w->y << TPLAN_SDMA_SUB_WINDOW_Y_SHIFT);
	dw[3] = w->z | ((w->pitch - 1) << TPLAN_SDMA_SUB_WINDOW_PITCH_SHIFT);
	dw[4] = w->slice_pitch - 1;
}

static __inline__ void tplan_sdma_window_get(const __u32 *dw, struct tplan_sdma_window *w)
{
	w->addr = tplan_sdma_addr(dw[0], dw[1]);
	w->x = dw[2] & TPLAN_SDMA_SUB_WINDOW_X_MASK;
	w->y = (dw[2] >> TPLAN_SDMA_SUB_WINDOW_Y_SHIFT) & TPLAN_SDMA_SUB_WINDOW_Y_MASK;
	w->z = dw[3] & TPLAN_SDMA_SUB_WINDOW_Z_MASK;
	w->pitch = ((dw[3] >> TPLAN_SDMA_SUB_WINDOW_PITCH_SHIFT) &
		    TPLAN_SDMA_SUB_WINDOW_PITCH_MASK) + 1;
	w->slice_pitch = (dw[4] & TPLAN_SDMA_SUB_WINDOW_SLICE_MASK) + 1;
}

static __inline__ int tplan_sdma_encode_copy_sub_window(__u32 *dw, __u32 room,
							const struct tplan_sdma_copy_sub_window *f)
{
	if (f->rect_x == 0 || f->rect_y == 0 || f->rect_z == 0 ||
	    f->src.pitch == 0 || f->src.slice_pitch == 0 ||
	    f->dst.pitch == 0 || f->dst.slice_pitch == 0)
		return -EINVAL;	/* would encode -1 */
	if (!tplan_sdma_window_fits(&f->src) || !tplan_sdma_window_fits(&f->dst) ||
	    f->rect_x - 1 > TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK ||
	    f->rect_y - 1 > TPLAN_SDMA_SUB_WINDOW_RECT_Y_MASK ||
	    f->rect_z - 1 > TPLAN_SDMA_SUB_WINDOW_RECT_Z_MASK ||
	    f->elem_size_log2 > TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX || f->tmz > 1 ||
	    f->src_swap > TPLAN_SDMA_SW_MASK || f->dst_swap > TPLAN_SDMA_SW_MASK)
		return -ERANGE;
	if (room < TPLAN_SDMA_SUB_WINDOW_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_COPY, TPLAN_SDMA_SUB_COPY_LINEAR_SUB_WINDOW) |
		(f->tmz ? TPLAN_SDMA_SUB_WINDOW_HDR_TMZ : 0) |
		(f->elem_size_log2 << TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT);
	tplan_sdma_window_put(dw + 1, &f->src);
	tplan_sdma_window_put(dw + 6, &f->dst);
	dw[11] = (f->rect_x - 1) | ((f->rect_y - 1) << TPLAN_SDMA_SUB_WINDOW_RECT_Y_SHIFT);
	dw[12] = (f->rect_z - 1) | (f->dst_swap << TPLAN_SDMA_COPY_DST_SW_SHIFT) |
		 (f->src_swap << TPLAN_SDMA_COPY_SRC_SW_SHIFT);
	return TPLAN_SDMA_SUB_WINDOW_DW;
}

static __inline__ int tplan_sdma_decode_copy_sub_window(const __u32 *dw, __u32 avail,
							struct tplan_sdma_copy_sub_window *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW);
	__u32 esize;

	if (n < 0)
		return n;
	esize = (dw[0] >> TPLAN_SDMA_SUB_WINDOW_ESIZE_SHIFT) & TPLAN_SDMA_SUB_WINDOW_ESIZE_MASK;
	if (esize > TPLAN_SDMA_SUB_WINDOW_ESIZE_MAX)
		return -EPROTO;
	f->elem_size_log2 = esize;
	f->tmz = (dw[0] & TPLAN_SDMA_SUB_WINDOW_HDR_TMZ) ? 1 : 0;
	tplan_sdma_window_get(dw + 1, &f->src);
	tplan_sdma_window_get(dw + 6, &f->dst);
	f->rect_x = (dw[11] & TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK) + 1;
	f->rect_y = ((dw[11] >> TPLAN_SDMA_SUB_WINDOW_RECT_Y_SHIFT) &
		     TPLAN_SDMA_SUB_WINDOW_RECT_Y_MASK) + 1;
	f->rect_z = (dw[12] & TPLAN_SDMA_SUB_WINDOW_RECT_Z_MASK) + 1;
	f->dst_swap = (dw[12] >> TPLAN_SDMA_COPY_DST_SW_SHIFT) & TPLAN_SDMA_SW_MASK;
	f->src_swap = (dw[12] >> TPLAN_SDMA_COPY_SRC_SW_SHIFT) & TPLAN_SDMA_SW_MASK;
	return n;
}

/* ---- POLL_REGMEM ------------------------------------------------------- */

static __inline__ int tplan_sdma_encode_poll_regmem(__u32 *dw, __u32 room,
						    const struct tplan_sdma_poll_regmem *f)
{
	if (f->func > TPLAN_SDMA_FUNC_GT || f->mem_poll > 1 || f->hdp_flush > 1 ||
	    f->interval > TPLAN_SDMA_POLL_INTERVAL_MASK ||
	    f->retry > TPLAN_SDMA_POLL_RETRY_MASK)
		return -ERANGE;
	if (f->mem_poll && (f->addr & 3))
		return -EINVAL;
	if (room < TPLAN_SDMA_POLL_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_POLL_REGMEM, TPLAN_SDMA_SUB_POLL_REGMEM) |
		(f->hdp_flush ? TPLAN_SDMA_POLL_HDR_HDP_FLUSH : 0) |
		(f->func << TPLAN_SDMA_POLL_HDR_FUNC_SHIFT) |
		(f->mem_poll ? TPLAN_SDMA_POLL_HDR_MEM_POLL : 0);
	dw[1] = tplan_sdma_lo(f->addr);
	dw[2] = tplan_sdma_hi(f->addr);
	dw[3] = f->ref;
	dw[4] = f->mask;
	dw[5] = f->interval | (f->retry << TPLAN_SDMA_POLL_RETRY_SHIFT);
	return TPLAN_SDMA_POLL_DW;
}

static __inline__ int tplan_sdma_decode_poll_regmem(const __u32 *dw, __u32 avail,
						    struct tplan_sdma_poll_regmem *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_POLL_REGMEM);
	__u32 func;

	if (n < 0)
		return n;
	func = (dw[0] >> TPLAN_SDMA_POLL_HDR_FUNC_SHIFT) & TPLAN_SDMA_POLL_HDR_FUNC_MASK;
	if (func > TPLAN_SDMA_FUNC_GT)
		return -EPROTO;
	f->func = func;
	f->hdp_flush = (dw[0] & TPLAN_SDMA_POLL_HDR_HDP_FLUSH) ? 1 : 0;
	f->mem_poll = (dw[0] & TPLAN_SDMA_POLL_HDR_MEM_POLL) ? 1 : 0;
	f->addr = tplan_sdma_addr(dw[1], dw[2]);
	f->ref = dw[3];
	f->mask = dw[4];
	f->interval = dw[5] & TPLAN_SDMA_POLL_INTERVAL_MASK;
	f->retry = (dw[5] >> TPLAN_SDMA_POLL_RETRY_SHIFT) & TPLAN_SDMA_POLL_RETRY_MASK;
	return n;
}

/* ---- ATOMIC ------------------------------------------------------------ */

static __inline__ int tplan_sdma_encode_atomic(__u32 *dw, __u32 room,
					       const struct tplan_sdma_atomic *f)
{
	if (f->atomic_op > TPLAN_SDMA_ATOMIC_HDR_OP_MASK || f->loop > 1 || f->tmz > 1 ||
	    f->loop_interval > TPLAN_SDMA_ATOMIC_LOOP_INTERVAL_MASK)
		return -ERANGE;
	if (room < TPLAN_SDMA_ATOMIC_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_ATOMIC, 0) |
		(f->loop ? TPLAN_SDMA_ATOMIC_HDR_LOOP : 0) |
		(f->tmz ? TPLAN_SDMA_ATOMIC_HDR_TMZ : 0) |
		(f->atomic_op << TPLAN_SDMA_ATOMIC_HDR_OP_SHIFT);
	dw[1] = tplan_sdma_lo(f->addr);
	dw[2] = tplan_sdma_hi(f->addr);
	dw[3] = tplan_sdma_lo(f->src_data);
	dw[4] = tplan_sdma_hi(f->src_data);
	dw[5] = tplan_sdma_lo(f->cmp_data);
	dw[6] = tplan_sdma_hi(f->cmp_data);
	dw[7] = f->loop_interval;
	return TPLAN_SDMA_ATOMIC_DW;
}

static __inline__ int tplan_sdma_decode_atomic(const __u32 *dw, __u32 avail,
					       struct tplan_sdma_atomic *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_ATOMIC);

	if (n < 0)
		return n;
	f->loop = (dw[0] & TPLAN_SDMA_ATOMIC_HDR_LOOP) ? 1 : 0;
	f->tmz = (dw[0] & TPLAN_SDMA_ATOMIC_HDR_TMZ) ? 1 : 0;
	f->atomic_op = (dw[0] >> TPLAN_SDMA_ATOMIC_HDR_OP_SHIFT) & TPLAN_SDMA_ATOMIC_HDR_OP_MASK;
	f->addr = tplan_sdma_addr(dw[1], dw[2]);
	f->src_data = tplan_sdma_addr(dw[3], dw[4]);
	f->cmp_data = tplan_sdma_addr(dw[5], dw[6]);
	f->loop_interval = dw[7] & TPLAN_SDMA_ATOMIC_LOOP_INTERVAL_MASK;
	return n;
}

/* ---- FENCE ------------------------------------------------------------- */

static __inline__ int tplan_sdma_encode_fence(__u32 *dw, __u32 room,
					      const struct tplan_sdma_fence *f)
{
	if (f->addr & 3)
		return -EINVAL;
	if (room < TPLAN_SDMA_FENCE_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_FENCE, 0);
	dw[1] = tplan_sdma_lo(f->addr);
	dw[2] = tplan_sdma_hi(f->addr);
	dw[3] = f->data;
	return TPLAN_SDMA_FENCE_DW;
}

static __inline__ int tplan_sdma_decode_fence(const __u32 *dw, __u32 avail,
					      struct tplan_sdma_fence *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_FENCE);

	if (n < 0)
		return n;
	f->addr = tplan_sdma_addr(dw[1], dw[2]);
	f->data = dw[3];
	return n;
}

/* ---- TRAP -------------------------------------------------------------- */

static __inline__ int tplan_sdma_encode_trap(__u32 *dw, __u32 room,
					     const struct tplan_sdma_trap *f)
{
	if (f->int_context > TPLAN_SDMA_TRAP_INT_CONTEXT_MASK)
		return -ERANGE;
	if (room < TPLAN_SDMA_TRAP_DW)
		return -ENOSPC;
	dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_TRAP, 0);
	dw[1] = f->int_context;
	return TPLAN_SDMA_TRAP_DW;
}

static __inline__ int tplan_sdma_decode_trap(const __u32 *dw, __u32 avail,
					     struct tplan_sdma_trap *f)
{
	int n = tplan_sdma_decode_check(dw, avail, TPLAN_SDMA_KIND_TRAP);

	if (n < 0)
		return n;
	f->int_context = dw[1] & TPLAN_SDMA_TRAP_INT_CONTEXT_MASK;
	return n;
}

/* ---- Any packet -------------------------------------------------------- */

/*
 * Decodes the packet at dw into p (kind, length and fields).  Returns the
 * length or a decoder error; a packet tplan only recognises gives
 * -EOPNOTSUPP with p->kind set (p->dwords too when its length is known).
 */
static __inline__ int tplan_sdma_decode(const __u32 *dw, __u32 avail,
					struct tplan_sdma_packet *p)
{
	int kind, n;

	if (avail == 0)
		return -ENODATA;
	kind = tplan_sdma_kind(dw[0]);
	switch (kind) {
	case TPLAN_SDMA_KIND_NOP:
		n = tplan_sdma_decode_nop(dw, avail, &p->u.nop);
		break;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		n = tplan_sdma_decode_copy_linear(dw, avail, &p->u.copy_linear);
		break;
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		n = tplan_sdma_decode_copy_sub_window(dw, avail, &p->u.sub_window);
		break;
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		n = tplan_sdma_decode_poll_regmem(dw, avail, &p->u.poll);
		break;
	case TPLAN_SDMA_KIND_ATOMIC:
		n = tplan_sdma_decode_atomic(dw, avail, &p->u.atomic);
		break;
	case TPLAN_SDMA_KIND_FENCE:
		n = tplan_sdma_decode_fence(dw, avail, &p->u.fence);
		break;
	case TPLAN_SDMA_KIND_TRAP:
		n = tplan_sdma_decode_trap(dw, avail, &p->u.trap);
		break;
	case TPLAN_SDMA_KIND_UNKNOWN:
		return -EBADMSG;
	default:
		p->kind = (__u32)kind;
		n = tplan_sdma_packet_dwords(dw, avail);
		p->dwords = n > 0 ? (__u32)n : 0;
		return -EOPNOTSUPP;
	}
	if (n < 0)
		return n;
	p->kind = (__u32)kind;
	p->dwords = (__u32)n;
	return n;
}

/*
 * Encodes p->u as a packet of kind p->kind (p->dwords is ignored).
 * Returns the length written or an encoder error; -EINVAL for a kind
 * without an encoder.
 */
static __inline__ int tplan_sdma_encode(__u32 *dw, __u32 room,
					const struct tplan_sdma_packet *p)
{
	switch (p->kind) {
	case TPLAN_SDMA_KIND_NOP:
		return tplan_sdma_encode_nop(dw, room, &p->u.nop);
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		return tplan_sdma_encode_copy_linear(dw, room, &p->u.copy_linear);
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		return tplan_sdma_encode_copy_sub_window(dw, room, &p->u.sub_window);
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		return tplan_sdma_encode_poll_regmem(dw, room, &p->u.poll);
	case TPLAN_SDMA_KIND_ATOMIC:
		return tplan_sdma_encode_atomic(dw, room, &p->u.atomic);
	case TPLAN_SDMA_KIND_FENCE:
		return tplan_sdma_encode_fence(dw, room, &p->u.fence);
	case TPLAN_SDMA_KIND_TRAP:
		return tplan_sdma_encode_trap(dw, room, &p->u.trap);
	}
	return -EINVAL;
}

#ifdef __cplusplus
}
#endif

#endif /* _UAPI_TPLAN_SDMA_H */
