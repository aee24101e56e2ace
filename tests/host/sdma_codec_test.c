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
#include "tplan_shim.h"
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
	/*
	 * facts:184 loop bit 16, tmz bit 18; facts:188 loop_interval [12:0];
	 * facts:192 ROCr's decrement: src_data = all ones.
	 */
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

/* ---- decode(encode(x)) == x over random valid fields ------------------ */

#define ROUNDS 20000

static u64 rnd64(void)
{
	return ((u64)random() << 62) ^ ((u64)random() << 31) ^ (u64)random();
}

/* Uniform in [lo, hi], with the ends picked often: they break first. */
static u32 pick(u32 lo, u32 hi)
{
	switch (random() % 4) {
	case 0:
		return lo;
	case 1:
		return hi;
	}
	return lo + (u32)(rnd64() % ((u64)hi - lo + 1));
}

static void random_window(struct tplan_sdma_window *w)
{
	w->addr = rnd64();
	w->x = pick(0, 0x3fff);
	w->y = pick(0, 0x3fff);
	w->z = pick(0, 0x7ff);
	w->pitch = pick(1, 1u << 19);
	w->slice_pitch = pick(1, 1u << 28);
}

static bool window_eq(const struct tplan_sdma_window *a, const struct tplan_sdma_window *b)
{
	return a->addr == b->addr && a->x == b->x && a->y == b->y && a->z == b->z &&
	       a->pitch == b->pitch && a->slice_pitch == b->slice_pitch;
}

TEST(round_trip_nop)
{
	struct tplan_sdma_nop f, g;
	static __u32 dw[TPLAN_SDMA_NOP_MAX_DW];
	unsigned int r;

	srandom(1);
	for (r = 0; r < 2000; r++) {
		f.dwords = pick(1, TPLAN_SDMA_NOP_MAX_DW);
		ASSERT_EQ((int)f.dwords, tplan_sdma_encode_nop(dw, TPLAN_SDMA_NOP_MAX_DW, &f));
		ASSERT_EQ((int)f.dwords, tplan_sdma_decode_nop(dw, TPLAN_SDMA_NOP_MAX_DW, &g));
		ASSERT_EQ(f.dwords, g.dwords);
	}
}

TEST(round_trip_copy_linear)
{
	struct tplan_sdma_copy_linear f, g;
	__u32 dw[7];
	unsigned int r;

	srandom(2);
	for (r = 0; r < ROUNDS; r++) {
		f.src = rnd64();
		f.dst = rnd64();
		f.bytes = pick(1, 1u << 30);
		f.encrypt = pick(0, 1);
		f.tmz = pick(0, 1);
		f.src_swap = pick(0, 3);
		f.dst_swap = pick(0, 3);
		memset(&g, 0x5a, sizeof(g));
		ASSERT_EQ(7, tplan_sdma_encode_copy_linear(dw, 7, &f));
		ASSERT_EQ(7, tplan_sdma_decode_copy_linear(dw, 7, &g));
		ASSERT_TRUE(f.src == g.src && f.dst == g.dst && f.bytes == g.bytes &&
			    f.encrypt == g.encrypt && f.tmz == g.tmz &&
			    f.src_swap == g.src_swap && f.dst_swap == g.dst_swap) TH_LOG("round %u", r);
	}
}

TEST(round_trip_copy_sub_window)
{
	struct tplan_sdma_copy_sub_window f, g;
	__u32 dw[13];
	unsigned int r;

	srandom(3);
	for (r = 0; r < ROUNDS; r++) {
		random_window(&f.src);
		random_window(&f.dst);
		f.rect_x = pick(1, 1u << 14);
		f.rect_y = pick(1, 1u << 14);
		f.rect_z = pick(1, 1u << 11);
		f.elem_size_log2 = pick(0, 4);
		f.tmz = pick(0, 1);
		f.src_swap = pick(0, 3);
		f.dst_swap = pick(0, 3);
		memset(&g, 0x5a, sizeof(g));
		ASSERT_EQ(13, tplan_sdma_encode_copy_sub_window(dw, 13, &f));
		ASSERT_EQ(13, tplan_sdma_decode_copy_sub_window(dw, 13, &g));
		ASSERT_TRUE(window_eq(&f.src, &g.src) && window_eq(&f.dst, &g.dst) &&
			    f.rect_x == g.rect_x && f.rect_y == g.rect_y && f.rect_z == g.rect_z &&
			    f.elem_size_log2 == g.elem_size_log2 && f.tmz == g.tmz &&
			    f.src_swap == g.src_swap && f.dst_swap == g.dst_swap) TH_LOG("round %u", r);
	}
}

TEST(round_trip_poll_regmem)
{
	struct tplan_sdma_poll_regmem f, g;
	__u32 dw[6];
	unsigned int r;

	srandom(4);
	for (r = 0; r < ROUNDS; r++) {
		f.mem_poll = pick(0, 1);
		f.addr = rnd64() & (f.mem_poll ? ~3ull : ~0ull);
		f.ref = (u32)rnd64();
		f.mask = (u32)rnd64();
		f.func = pick(0, 6);
		f.hdp_flush = pick(0, 1);
		f.interval = pick(0, 0xffff);
		f.retry = pick(0, 0xfff);
		memset(&g, 0x5a, sizeof(g));
		ASSERT_EQ(6, tplan_sdma_encode_poll_regmem(dw, 6, &f));
		ASSERT_EQ(6, tplan_sdma_decode_poll_regmem(dw, 6, &g));
		ASSERT_TRUE(f.addr == g.addr && f.ref == g.ref && f.mask == g.mask &&
			    f.func == g.func && f.mem_poll == g.mem_poll &&
			    f.hdp_flush == g.hdp_flush && f.interval == g.interval &&
			    f.retry == g.retry) TH_LOG("round %u", r);
	}
}

TEST(round_trip_atomic)
{
	struct tplan_sdma_atomic f, g;
	__u32 dw[8];
	unsigned int r;

	srandom(5);
	for (r = 0; r < ROUNDS; r++) {
		f.addr = rnd64();
		f.src_data = rnd64();
		f.cmp_data = rnd64();
		f.atomic_op = pick(0, 127);
		f.loop = pick(0, 1);
		f.tmz = pick(0, 1);
		f.loop_interval = pick(0, 0x1fff);
		memset(&g, 0x5a, sizeof(g));
		ASSERT_EQ(8, tplan_sdma_encode_atomic(dw, 8, &f));
		ASSERT_EQ(8, tplan_sdma_decode_atomic(dw, 8, &g));
		ASSERT_TRUE(f.addr == g.addr && f.src_data == g.src_data &&
			    f.cmp_data == g.cmp_data && f.atomic_op == g.atomic_op &&
			    f.loop == g.loop && f.tmz == g.tmz &&
			    f.loop_interval == g.loop_interval) TH_LOG("round %u", r);
	}
}

TEST(round_trip_fence_trap)
{
	struct tplan_sdma_fence f, g;
	struct tplan_sdma_trap t, u;
	__u32 dw[4];
	unsigned int r;

	srandom(6);
	for (r = 0; r < ROUNDS; r++) {
		f.addr = rnd64() & ~3ull;
		f.data = (u32)rnd64();
		ASSERT_EQ(4, tplan_sdma_encode_fence(dw, 4, &f));
		ASSERT_EQ(4, tplan_sdma_decode_fence(dw, 4, &g));
		ASSERT_TRUE(f.addr == g.addr && f.data == g.data);
		t.int_context = pick(0, 0x0fffffff);
		ASSERT_EQ(2, tplan_sdma_encode_trap(dw, 2, &t));
		ASSERT_EQ(2, tplan_sdma_decode_trap(dw, 2, &u));
		ASSERT_EQ(t.int_context, u.int_context);
	}
}

/* The generic decoder names the kind and fills the same fields. */
TEST(decode_any)
{
	struct tplan_sdma_copy_linear c = { .src = 1, .dst = 2, .bytes = 3 };
	struct tplan_sdma_packet p;
	__u32 dw[16] = { 0 };

	ASSERT_EQ(7, tplan_sdma_encode_copy_linear(dw, 16, &c));
	ASSERT_EQ(7, tplan_sdma_decode(dw, 16, &p));
	EXPECT_EQ(TPLAN_SDMA_KIND_COPY_LINEAR, p.kind);
	EXPECT_EQ(7, p.dwords);
	EXPECT_EQ(3, p.u.copy_linear.bytes);
	/* a packet known by name only */
	dw[0] = 0x00000004;
	ASSERT_EQ(-EOPNOTSUPP, tplan_sdma_decode(dw, 16, &p));
	EXPECT_EQ(TPLAN_SDMA_KIND_INDIRECT_BUFFER, p.kind);
	EXPECT_EQ(6, p.dwords);
	dw[0] = 0x000000ff;
	ASSERT_EQ(-EBADMSG, tplan_sdma_decode(dw, 16, &p));
	ASSERT_EQ(-ENODATA, tplan_sdma_decode(dw, 0, &p));
	/* and back: the generic encoder writes what the decoder read */
	p.kind = TPLAN_SDMA_KIND_COPY_LINEAR;
	p.u.copy_linear = c;
	memset(dw, 0, sizeof(dw));
	ASSERT_EQ(7, tplan_sdma_encode(dw, 16, &p));
	EXPECT_EQ(0x00000001u, dw[0]);
	EXPECT_EQ(2u, dw[1]);
	EXPECT_EQ(2u, dw[5]);
	p.kind = TPLAN_SDMA_KIND_INDIRECT_BUFFER;
	EXPECT_EQ(-EINVAL, tplan_sdma_encode(dw, 16, &p));
}

/* ---- encoders refuse what does not fit -------------------------------- */

TEST(encode_refusals)
{
	struct tplan_sdma_copy_linear c = { .bytes = 0 };
	struct tplan_sdma_copy_sub_window w;
	struct tplan_sdma_poll_regmem p = { .mem_poll = 1, .addr = 2 };
	struct tplan_sdma_atomic a = { .atomic_op = 128 };
	struct tplan_sdma_fence f = { .addr = 1 };
	struct tplan_sdma_trap t = { .int_context = 1u << 28 };
	struct tplan_sdma_nop n = { .dwords = 0 };
	__u32 dw[16], i;

	memset(dw, 0xee, sizeof(dw));
	/* a zero-byte copy is an error, never count -1 */
	EXPECT_EQ(-EINVAL, tplan_sdma_encode_copy_linear(dw, 16, &c));
	c.bytes = (1u << 30) + 1;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_copy_linear(dw, 16, &c));
	c.bytes = 1;
	c.tmz = 2;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_copy_linear(dw, 16, &c));
	c.tmz = 0;
	c.src_swap = 4;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_copy_linear(dw, 16, &c));
	c.src_swap = 0;
	EXPECT_EQ(-ENOSPC, tplan_sdma_encode_copy_linear(dw, 6, &c));

	memset(&w, 0, sizeof(w));
	w.src.pitch = w.src.slice_pitch = w.dst.pitch = w.dst.slice_pitch = 1;
	w.rect_x = w.rect_y = w.rect_z = 1;
	ASSERT_EQ(13, tplan_sdma_encode_copy_sub_window(dw, 16, &w));
	memset(dw, 0xee, sizeof(dw));
#define WIN_REFUSED(field, value, err)						\
	do {									\
		struct tplan_sdma_copy_sub_window bad = w;			\
		bad.field = (value);						\
		EXPECT_EQ(err, tplan_sdma_encode_copy_sub_window(dw, 16, &bad))	\
			TH_LOG(#field " = " #value);				\
	} while (0)
	WIN_REFUSED(rect_x, 0, -EINVAL);
	WIN_REFUSED(rect_y, 0, -EINVAL);
	WIN_REFUSED(rect_z, 0, -EINVAL);
	WIN_REFUSED(src.pitch, 0, -EINVAL);
	WIN_REFUSED(dst.slice_pitch, 0, -EINVAL);
	WIN_REFUSED(rect_x, (1u << 14) + 1, -ERANGE);
	WIN_REFUSED(rect_y, (1u << 14) + 1, -ERANGE);
	WIN_REFUSED(rect_z, (1u << 11) + 1, -ERANGE);
	WIN_REFUSED(src.x, 1u << 14, -ERANGE);
	WIN_REFUSED(dst.y, 1u << 14, -ERANGE);
	WIN_REFUSED(src.z, 1u << 11, -ERANGE);
	WIN_REFUSED(dst.pitch, (1u << 19) + 1, -ERANGE);
	WIN_REFUSED(src.slice_pitch, (1u << 28) + 1, -ERANGE);
	WIN_REFUSED(elem_size_log2, 5, -ERANGE);
	WIN_REFUSED(tmz, 2, -ERANGE);
	WIN_REFUSED(dst_swap, 4, -ERANGE);
	EXPECT_EQ(-ENOSPC, tplan_sdma_encode_copy_sub_window(dw, 12, &w));

	EXPECT_EQ(-EINVAL, tplan_sdma_encode_poll_regmem(dw, 16, &p));	/* misaligned */
	p.mem_poll = 0;
	EXPECT_EQ(6, tplan_sdma_encode_poll_regmem(dw, 16, &p));	/* register offsets */
	memset(dw, 0xee, sizeof(dw));
	p.func = 7;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_poll_regmem(dw, 16, &p));
	p.func = 5;
	p.retry = 0x1000;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_poll_regmem(dw, 16, &p));
	p.retry = 0;
	p.interval = 0x10000;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_poll_regmem(dw, 16, &p));

	EXPECT_EQ(-ERANGE, tplan_sdma_encode_atomic(dw, 16, &a));
	a.atomic_op = 47;
	a.loop_interval = 0x2000;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_atomic(dw, 16, &a));
	a.loop_interval = 0;
	EXPECT_EQ(-ENOSPC, tplan_sdma_encode_atomic(dw, 7, &a));
	EXPECT_EQ(-EINVAL, tplan_sdma_encode_fence(dw, 16, &f));
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_trap(dw, 16, &t));
	EXPECT_EQ(-EINVAL, tplan_sdma_encode_nop(dw, 16, &n));
	n.dwords = TPLAN_SDMA_NOP_MAX_DW + 1;
	EXPECT_EQ(-ERANGE, tplan_sdma_encode_nop(dw, 1u << 20, &n));
	n.dwords = 17;
	EXPECT_EQ(-ENOSPC, tplan_sdma_encode_nop(dw, 16, &n));
	/* a refusing encoder writes nothing */
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0xeeeeeeeeu, dw[i]);
}

/* ---- decoders refuse malformed input ---------------------------------- */

/* One valid packet of each decodable kind. */
static int sample(int kind, __u32 *dw)
{
	struct tplan_sdma_nop n = { .dwords = 5 };
	struct tplan_sdma_copy_linear c = { .src = 0x1000, .dst = 0x2000, .bytes = 64 };
	struct tplan_sdma_copy_sub_window w;
	struct tplan_sdma_poll_regmem p = { .addr = 0x40, .mask = ~0u, .func = 5, .mem_poll = 1,
					    .retry = 0xfff };
	struct tplan_sdma_atomic a = { .addr = 0x48, .src_data = 1, .atomic_op = 47 };
	struct tplan_sdma_fence f = { .addr = 0x80, .data = 1 };
	struct tplan_sdma_trap t = { .int_context = 5 };

	memset(&w, 0, sizeof(w));
	w.src.pitch = w.dst.pitch = 64;
	w.src.slice_pitch = w.dst.slice_pitch = 1;
	w.rect_x = w.rect_y = w.rect_z = 2;
	switch (kind) {
	case TPLAN_SDMA_KIND_NOP: return tplan_sdma_encode_nop(dw, 16, &n);
	case TPLAN_SDMA_KIND_COPY_LINEAR: return tplan_sdma_encode_copy_linear(dw, 16, &c);
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW: return tplan_sdma_encode_copy_sub_window(dw, 16, &w);
	case TPLAN_SDMA_KIND_POLL_REGMEM: return tplan_sdma_encode_poll_regmem(dw, 16, &p);
	case TPLAN_SDMA_KIND_ATOMIC: return tplan_sdma_encode_atomic(dw, 16, &a);
	case TPLAN_SDMA_KIND_FENCE: return tplan_sdma_encode_fence(dw, 16, &f);
	case TPLAN_SDMA_KIND_TRAP: return tplan_sdma_encode_trap(dw, 16, &t);
	}
	return -1;
}

static int decode_as(int kind, const __u32 *dw, __u32 avail)
{
	struct tplan_sdma_packet p;

	switch (kind) {
	case TPLAN_SDMA_KIND_NOP: return tplan_sdma_decode_nop(dw, avail, &p.u.nop);
	case TPLAN_SDMA_KIND_COPY_LINEAR: return tplan_sdma_decode_copy_linear(dw, avail, &p.u.copy_linear);
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		return tplan_sdma_decode_copy_sub_window(dw, avail, &p.u.sub_window);
	case TPLAN_SDMA_KIND_POLL_REGMEM: return tplan_sdma_decode_poll_regmem(dw, avail, &p.u.poll);
	case TPLAN_SDMA_KIND_ATOMIC: return tplan_sdma_decode_atomic(dw, avail, &p.u.atomic);
	case TPLAN_SDMA_KIND_FENCE: return tplan_sdma_decode_fence(dw, avail, &p.u.fence);
	case TPLAN_SDMA_KIND_TRAP: return tplan_sdma_decode_trap(dw, avail, &p.u.trap);
	}
	return -1;
}

/* Every truncation of every packet is -ENODATA. */
TEST(decode_truncated)
{
	__u32 dw[16];
	int kind, n, avail;

	for (kind = TPLAN_SDMA_KIND_NOP; kind <= TPLAN_SDMA_KIND_TRAP; kind++) {
		n = sample(kind, dw);
		ASSERT_GT(n, 0);
		ASSERT_EQ(n, decode_as(kind, dw, n));
		ASSERT_EQ(n, tplan_sdma_packet_dwords(dw, n));
		for (avail = 0; avail < n; avail++) {
			EXPECT_EQ(-ENODATA, decode_as(kind, dw, avail)) TH_LOG("%s avail %d",
				tplan_sdma_kind_name(kind), avail);
			EXPECT_EQ(-ENODATA, tplan_sdma_packet_dwords(dw, avail));
		}
	}
	/* WRITE_LINEAR's length is in dword 3: 4 + count + 1 */
	dw[0] = 0x00000002;
	dw[3] = 9;
	EXPECT_EQ(0, tplan_sdma_header_dwords(dw[0]));
	EXPECT_EQ(14, tplan_sdma_packet_dwords(dw, 16));
	EXPECT_EQ(-ENODATA, tplan_sdma_packet_dwords(dw, 13));
	EXPECT_EQ(-ENODATA, tplan_sdma_packet_dwords(dw, 3));
}

/* Every decoder refuses every other packet's header. */
TEST(decode_wrong_opcode)
{
	__u32 dw[16];
	int kind, other, n;

	for (kind = TPLAN_SDMA_KIND_NOP; kind <= TPLAN_SDMA_KIND_TRAP; kind++) {
		for (other = TPLAN_SDMA_KIND_NOP; other <= TPLAN_SDMA_KIND_TRAP; other++) {
			if (other == kind)
				continue;
			n = sample(other, dw);
			ASSERT_GT(n, 0);
			EXPECT_EQ(-EBADMSG, decode_as(kind, dw, 16)) TH_LOG("%s as %s",
				tplan_sdma_kind_name(other), tplan_sdma_kind_name(kind));
		}
		sample(kind, dw);
		dw[0] = 0x000000ff;	/* no such opcode */
		EXPECT_EQ(-EBADMSG, decode_as(kind, dw, 16));
	}
}

/* Each reserved bit of each dword, alone, makes a packet -EPROTO. */
TEST(decode_reserved_bits)
{
	__u32 dw[16], mask, bit;
	int kind, n, i, refused = 0;

	for (kind = TPLAN_SDMA_KIND_NOP; kind <= TPLAN_SDMA_KIND_TRAP; kind++) {
		n = sample(kind, dw);
		for (i = 0; i < n; i++) {
			mask = tplan_sdma_defined_bits(dw, i);
			for (bit = 0; bit < 32; bit++) {
				if (mask & (1u << bit))
					continue;
				dw[i] ^= 1u << bit;
				if (kind == TPLAN_SDMA_KIND_COPY_LINEAR && i == 0 && bit == 27) {
					/* the broadcast bit makes another packet */
					EXPECT_EQ(-EBADMSG, decode_as(kind, dw, 16));
				} else {
					EXPECT_EQ(-EPROTO, decode_as(kind, dw, 16))
						TH_LOG("%s dw %d bit %u", tplan_sdma_kind_name(kind), i, bit);
				}
				dw[i] ^= 1u << bit;
				refused++;
			}
		}
	}
	/*
	 * Reserved bits counted from the sheet's layouts (facts:93-217):
	 * NOP 2; COPY_LINEAR 14 + 2 + 28; sub-window 12 + 3 * 4 + 2 * 2 +
	 * 2 * 4 + 17; POLL (memory) 11 + 2 + 4; ATOMIC 7 + 19; FENCE 16 + 2;
	 * TRAP 16 + 4.
	 */
	EXPECT_EQ(2 + 44 + 53 + 17 + 26 + 18 + 20, refused);
}

/* Undefined field codes: POLL function 7, element sizes above 16 bytes. */
TEST(decode_undefined_codes)
{
	__u32 dw[16];

	sample(TPLAN_SDMA_KIND_POLL_REGMEM, dw);
	dw[0] |= 7u << 28;
	EXPECT_EQ(-EPROTO, decode_as(TPLAN_SDMA_KIND_POLL_REGMEM, dw, 16));
	sample(TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW, dw);
	dw[0] = (dw[0] & 0x1fffffff) | 5u << 29;
	EXPECT_EQ(-EPROTO, decode_as(TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW, dw, 16));
	dw[0] = (dw[0] & 0x1fffffff) | 4u << 29;
	EXPECT_EQ(13, decode_as(TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW, dw, 16));
}

/* Every (op, sub_op) header: a kind, and a length that agrees with it. */
TEST(every_header)
{
	struct tplan_sdma_packet p;
	__u32 dw[2] = { 0, 0 };
	__u32 op, sub;
	int kind, len, known = 0;

	for (op = 0; op < 256; op++) {
		for (sub = 0; sub < 256; sub++) {
			dw[0] = op | sub << 8;
			kind = tplan_sdma_kind(dw[0]);
			len = tplan_sdma_header_dwords(dw[0]);
			if (kind == TPLAN_SDMA_KIND_UNKNOWN) {
				EXPECT_EQ(-EBADMSG, len);
				EXPECT_EQ(-EBADMSG, tplan_sdma_decode(dw, 2, &p));
				continue;
			}
			known++;
			EXPECT_STRNE("UNKNOWN", tplan_sdma_kind_name(kind));
			EXPECT_TRUE(len == -EOPNOTSUPP || len >= 0);
			if (len > 2)
				EXPECT_TRUE(tplan_sdma_decode(dw, 2, &p) == -ENODATA ||
					    kind > TPLAN_SDMA_KIND_TRAP);
		}
	}
	/* 34 named packets (broadcast shares COPY_LINEAR's op and sub_op) */
	EXPECT_EQ(TPLAN_SDMA_KIND_COUNT - 2, known);
}

TEST_HARNESS_MAIN
