// SPDX-License-Identifier: GPL-2.0
/*
 * The SDMA 4.x codec (uapi/tplan_sdma.h): golden vectors, round trips and
 * malformed input.
 *
 * Golden dwords are worked out by hand from the fact sheet
 * (/work/shared/reference/sdma-kfd-facts.md, "facts:N" = its line N), never
 * from the codec itself.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "tplan_sdma.h"

#define ASSERT_DWORDS(want, got, n)						\
	do {									\
		unsigned int __i;						\
		for (__i = 0; __i < (n); __i++) {				\
			if ((want)[__i] != (got)[__i])				\
				TH_LOG("dword %u: want 0x%08x got 0x%08x",	\
				       __i, (want)[__i], (got)[__i]);		\
			ASSERT_EQ((want)[__i], (got)[__i]);			\
		}								\
	} while (0)

/* ---- golden vectors ------------------------------------------------- */

TEST(nop_golden)
{
	struct tplan_sdma_nop f = { .dwords = 8 };
	__u32 dw[8];
	/* facts:81 NOP with count 7 = 0x00070000; facts:96 count + 1 dwords */
	const __u32 want[8] = { 0x00070000 };

	memset(dw, 0xa5, sizeof(dw));
	ASSERT_EQ(8, tplan_sdma_encode_nop(dw, 8, &f));
	ASSERT_DWORDS(want, dw, 8);

	/* facts:98 a zero dword is a valid 1-dword NOP */
	f.dwords = 1;
	ASSERT_EQ(1, tplan_sdma_encode_nop(dw, 1, &f));
	ASSERT_EQ(0x00000000u, dw[0]);

	/* facts:93 count [29:16] is 14 bits: the longest NOP is 0x3fff + 1 dwords */
	ASSERT_EQ(16384, tplan_sdma_header_dwords(0x3fff0000));
}

TEST(copy_linear_golden)
{
	struct tplan_sdma_copy_linear f = {
		.src = 0x00007f0012345678ull, .dst = 0x00007f00abcdef00ull,
		.bytes = 4096,
	};
	/*
	 * facts:70 header 0x00000001; facts:105,110 dw1 = bytes - 1;
	 * facts:106 dw2 swaps 0; facts:107-108 src lo/hi then dst lo/hi.
	 */
	const __u32 want[7] = { 0x00000001, 0x00000fff, 0x00000000,
				0x12345678, 0x00007f00, 0xabcdef00, 0x00007f00 };
	/*
	 * facts:104 tmz is bit 18; facts:106 dst_sw [17:16], src_sw [25:24];
	 * 2^30 bytes is the 30-bit count 0x3fffffff (facts:117-120).
	 */
	const __u32 want2[7] = { 0x00040001, 0x3fffffff, 0x02010000,
				 0x00000000, 0x00000001, 0xfffffffc, 0xffffffff };
	__u32 dw[7];

	ASSERT_EQ(7, tplan_sdma_encode_copy_linear(dw, 7, &f));
	ASSERT_DWORDS(want, dw, 7);

	f.src = 0x0000000100000000ull;
	f.dst = 0xfffffffffffffffcull;
	f.bytes = 1u << 30;
	f.tmz = 1;
	f.src_swap = 2;
	f.dst_swap = 1;
	ASSERT_EQ(7, tplan_sdma_encode_copy_linear(dw, 7, &f));
	ASSERT_DWORDS(want2, dw, 7);

	/* facts:110 one byte is count 0 */
	f.bytes = 1;
	ASSERT_EQ(7, tplan_sdma_encode_copy_linear(dw, 7, &f));
	ASSERT_EQ(0u, dw[1]);
}

TEST(copy_sub_window_golden)
{
	struct tplan_sdma_copy_sub_window f = {
		.src = { .addr = 0x0000000100002000ull, .x = 3, .y = 5, .z = 0,
			 .pitch = 1024, .slice_pitch = 1 },
		.dst = { .addr = 0x0000000200002000ull, .x = 3, .y = 5, .z = 0,
			 .pitch = 1024, .slice_pitch = 1 },
		.rect_x = 64, .rect_y = 32, .rect_z = 1, .elem_size_log2 = 2,
	};
	/*
	 * facts:71 header with element size 2 = 0x40000401 (facts:132).
	 * facts:133 src base lo/hi; facts:137 dst base lo/hi.
	 * facts:134,138 x [13:0], y [29:16]: 3 | 5 << 16 = 0x00050003.
	 * facts:135,139 z [10:0], pitch [31:13] stored minus 1 (facts:147):
	 *           1023 << 13 = 0x007fe000.
	 * facts:136,140 slice pitch minus 1; 0 for one slice (facts:149).
	 * facts:141 rect_x [13:0], rect_y [29:16] minus 1: 63 | 31 << 16.
	 * facts:142 rect_z [10:0] minus 1 = 0, swaps 0.
	 */
	const __u32 want[13] = {
		0x40000401,
		0x00002000, 0x00000001, 0x00050003, 0x007fe000, 0x00000000,
		0x00002000, 0x00000002, 0x00050003, 0x007fe000, 0x00000000,
		0x001f003f, 0x00000000,
	};
	/*
	 * The widest values: x,y 16383, z 2047, pitch 2^19 (0x7ffff << 13),
	 * slice 2^28 (0x0fffffff), rect 16384 x 16384 x 2048, element 16 bytes
	 * (code 4 at [31:29] = 0x80000000, facts:144), tmz bit 18 (facts:132),
	 * swaps 3 at [17:16] and [25:24] (facts:142); widths from facts:150.
	 */
	const __u32 want2[13] = {
		0x80040401,
		0x00000000, 0x00000000, 0x3fff3fff, 0xffffe7ff, 0x0fffffff,
		0x00000004, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
		0x3fff3fff, 0x030307ff,
	};
	__u32 dw[13];

	ASSERT_EQ(13, tplan_sdma_encode_copy_sub_window(dw, 13, &f));
	ASSERT_DWORDS(want, dw, 13);

	memset(&f, 0, sizeof(f));
	f.src.x = 16383;
	f.src.y = 16383;
	f.src.z = 2047;
	f.src.pitch = 1u << 19;
	f.src.slice_pitch = 1u << 28;
	f.dst.addr = 4;
	f.dst.pitch = 1;
	f.dst.slice_pitch = 1;
	f.rect_x = 16384;
	f.rect_y = 16384;
	f.rect_z = 2048;
	f.elem_size_log2 = 4;
	f.tmz = 1;
	f.src_swap = 3;
	f.dst_swap = 3;
	ASSERT_EQ(13, tplan_sdma_encode_copy_sub_window(dw, 13, &f));
	ASSERT_DWORDS(want2, dw, 13);
}

TEST(poll_regmem_golden)
{
	struct tplan_sdma_poll_regmem f = {
		.addr = 0x00007f0000001040ull, .ref = 0, .mask = 0xffffffff,
		.func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1, .interval = 4,
		.retry = 0xfff,
	};
	/*
	 * facts:72 memory poll, func "==" = 0xB0000008; facts:161-164 addr
	 * lo/hi, reference, mask; facts:73,165 interval 4 retry 0xFFF =
	 * 0x0FFF0004.
	 */
	const __u32 want[6] = { 0xb0000008, 0x00001040, 0x00007f00,
				0x00000000, 0xffffffff, 0x0fff0004 };
	/*
	 * func ">=" is 5 (facts:167) at bit 28 (facts:160) with bit 31 for
	 * memory (facts:160): 0x80000000 | 0x50000000 | 8.
	 */
	const __u32 want_ge[6] = { 0xd0000008, 0x00001040, 0x00007f00,
				   0x00000007, 0xffffffff, 0x0fff0004 };
	/* facts:82 the kernel's HDP-flush poll header = 0x34000008 */
	const __u32 want_hdp = 0x34000008;
	__u32 dw[6];

	ASSERT_EQ(6, tplan_sdma_encode_poll_regmem(dw, 6, &f));
	ASSERT_DWORDS(want, dw, 6);

	f.func = TPLAN_SDMA_FUNC_GE;
	f.ref = 7;
	ASSERT_EQ(6, tplan_sdma_encode_poll_regmem(dw, 6, &f));
	ASSERT_DWORDS(want_ge, dw, 6);

	f.func = TPLAN_SDMA_FUNC_EQ;
	f.mem_poll = 0;
	f.hdp_flush = 1;
	ASSERT_EQ(6, tplan_sdma_encode_poll_regmem(dw, 6, &f));
	ASSERT_EQ(want_hdp, dw[0]);
}

TEST(atomic_golden)
{
	struct tplan_sdma_atomic f = {
		.addr = 0x00007f0000001048ull, .src_data = 1, .cmp_data = 0,
		.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	/*
	 * facts:74,191 ATOMIC op 47 = 0x5E00000A; facts:185-188 addr lo/hi,
	 * src_data lo/hi, cmp_data lo/hi, loop_interval.
	 */
	const __u32 want[8] = { 0x5e00000a, 0x00001048, 0x00007f00,
				0x00000001, 0x00000000, 0x00000000, 0x00000000,
				0x00000000 };
	/* facts:184 loop bit 16, tmz bit 18; facts:188 loop_interval [12:0];
	 * facts:192 ROCr's decrement: src_data = all ones. */
	const __u32 want2[8] = { 0x5e05000a, 0x00001048, 0x00007f00,
				 0xffffffff, 0xffffffff, 0x89abcdef, 0x01234567,
				 0x00001fff };
	__u32 dw[8];

	ASSERT_EQ(8, tplan_sdma_encode_atomic(dw, 8, &f));
	ASSERT_DWORDS(want, dw, 8);

	f.loop = 1;
	f.tmz = 1;
	f.src_data = ~0ull;
	f.cmp_data = 0x0123456789abcdefull;
	f.loop_interval = 0x1fff;
	ASSERT_EQ(8, tplan_sdma_encode_atomic(dw, 8, &f));
	ASSERT_DWORDS(want2, dw, 8);
}

TEST(fence_golden)
{
	struct tplan_sdma_fence f = { .addr = 0x0000123456789abcull, .data = 0xcafef00d };
	/* facts:75 FENCE = 0x00000005; facts:206-207 addr lo/hi, data */
	const __u32 want[4] = { 0x00000005, 0x56789abc, 0x00001234, 0xcafef00d };
	__u32 dw[4];

	ASSERT_EQ(4, tplan_sdma_encode_fence(dw, 4, &f));
	ASSERT_DWORDS(want, dw, 4);
}

TEST(trap_golden)
{
	struct tplan_sdma_trap f = { .int_context = 0x0fedcba9 };
	/* facts:76 TRAP = 0x00000006; facts:217 int_context [27:0] */
	const __u32 want[2] = { 0x00000006, 0x0fedcba9 };
	__u32 dw[2];

	ASSERT_EQ(2, tplan_sdma_encode_trap(dw, 2, &f));
	ASSERT_DWORDS(want, dw, 2);
}

/* Headers of the packets tplan only recognises (facts:70-82, table at 36-67). */
TEST(kind_by_name)
{
	ASSERT_EQ(TPLAN_SDMA_KIND_INDIRECT_BUFFER, tplan_sdma_kind(0x00000004));	/* facts:77 */
	ASSERT_EQ(TPLAN_SDMA_KIND_TIMESTAMP_GET_GLOBAL, tplan_sdma_kind(0x0000020d));	/* facts:78 */
	ASSERT_EQ(TPLAN_SDMA_KIND_CONST_FILL, tplan_sdma_kind(0x8000000b));		/* facts:79 */
	ASSERT_EQ(TPLAN_SDMA_KIND_WRITE_LINEAR, tplan_sdma_kind(0x00000002));		/* facts:80 */
	ASSERT_EQ(TPLAN_SDMA_KIND_COPY_LINEAR_BROADCAST, tplan_sdma_kind(0x08000001));	/* facts:47 */
	ASSERT_EQ(TPLAN_SDMA_KIND_DUMMY_TRAP, tplan_sdma_kind(0x00000010));		/* facts:66 */
	ASSERT_EQ(TPLAN_SDMA_KIND_UNKNOWN, tplan_sdma_kind(0x00000011));		/* GCR: 5.x only, facts:67 */
	ASSERT_STREQ("INDIRECT_BUFFER", tplan_sdma_kind_name(TPLAN_SDMA_KIND_INDIRECT_BUFFER));
	ASSERT_STREQ("WRITE_LINEAR", tplan_sdma_kind_name(TPLAN_SDMA_KIND_WRITE_LINEAR));
}

TEST_HARNESS_MAIN
