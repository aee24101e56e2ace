// SPDX-License-Identifier: GPL-2.0
/*
 * The chain validator (kmod/chain_validate.c): one failing chain per rule
 * of uapi/tplan_chain.h with the exact reason, the valid chain shapes the
 * schedule builders produce, the group-wide overlap check, and the
 * per-engine limits.
 */
#include <stdio.h>

#include "kselftest_harness.h"
#include "chain_fixture.h"

#define CHAIN_INDEX	7
#define RANK		1
#define PEER		2
#define CHUNK		3

/*
 * The base chain: POLL (dw 0-5), COPY_LINEAR (6-12), a sub-window tile
 * (13-25), ATOMIC (26-33).  Each test breaks exactly one rule in it.
 */
#define DW_POLL	0
#define DW_COPY	6
#define DW_WIN	13
#define DW_ATOM	26
#define BASE_DW	34

FIXTURE(chain) {
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct fx_chain c;
	struct tplan_chain_reject why;
};

FIXTURE_SETUP(chain)
{
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, TPLAN_SDMA_IP_4_4_0, 0));
	fx_env(&self->env, &self->lim, RANK, PEER, CHUNK);
	fx_chain_init(&self->c, 1 << 16);
	fx_poll(&self->c, &self->env);
	fx_copy(&self->c, &self->env, 0x1000, 4096);
	/* bf16 tile: rows 64..95, columns 128..191 of a 4096-column matrix */
	fx_tile(&self->c, &self->env, 4096, 1, 128, 64, 64, 32);
	fx_atomic(&self->c, &self->env);
	ASSERT_EQ(0, self->c.err);
	ASSERT_EQ(BASE_DW, self->c.ndw);
	memset(&self->why, 0xff, sizeof(self->why));
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, CHAIN_INDEX,
					  &self->env, &self->why));
}

FIXTURE_TEARDOWN(chain)
{
	fx_chain_free(&self->c);
}

/* Validates the fixture's chain and checks the exact reason. */
#define EXPECT_REJECT(rule_, packet_, value_)					\
	do {									\
		memset(&self->why, 0xff, sizeof(self->why));			\
		ASSERT_EQ(-EINVAL, tplan_chain_validate(self->c.dw, self->c.ndw,	\
				CHAIN_INDEX, &self->env, &self->why));		\
		EXPECT_EQ((u32)(rule_), self->why.rule);			\
		EXPECT_EQ(CHAIN_INDEX, self->why.chain);			\
		EXPECT_EQ((u32)(packet_), self->why.packet);			\
		EXPECT_EQ(RANK, self->why.rank);				\
		EXPECT_EQ((u64)(value_), (u64)self->why.value);		\
		EXPECT_EQ(0, self->why.other_rank);				\
		EXPECT_EQ(0, self->why.other_chain);				\
		EXPECT_EQ(0, self->why.other_packet);				\
		EXPECT_EQ(0, self->why.__reserved);				\
	} while (0)

#define DWORD_VALUE(i, v) (((u64)(i) << 32) | (u32)(v))

/* Rebuilds the chain from scratch (for grammar tests). */
static void restart(struct fx_chain *c)
{
	memset(c->dw, 0, c->room * sizeof(u32));
	c->ndw = 0;
	c->packets = 0;
	c->err = 0;
}

/* ---- size and grammar ------------------------------------------------- */

TEST_F(chain, r_size)
{
	self->c.ndw = 0;
	EXPECT_REJECT(TPLAN_CHAIN_R_SIZE, 0, 0);
	self->c.ndw = BASE_DW;
	self->env.max_dwords = BASE_DW - 1;
	EXPECT_REJECT(TPLAN_CHAIN_R_SIZE, 0, BASE_DW);
	self->env.max_dwords = BASE_DW;
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
}

TEST_F(chain, r_size_abi_limit)
{
	/* a larger env limit does not lift the ABI's */
	self->env.max_dwords = ~0u;
	self->c.ndw = TPLAN_CHAIN_MAX_DWORDS + 1;
	EXPECT_REJECT(TPLAN_CHAIN_R_SIZE, 0, TPLAN_CHAIN_MAX_DWORDS + 1);
}

TEST_F(chain, r_truncated)
{
	self->c.ndw = BASE_DW - 1;
	EXPECT_REJECT(TPLAN_CHAIN_R_TRUNCATED, 3, self->c.dw[DW_ATOM]);
	self->c.ndw = DW_COPY + 3;
	EXPECT_REJECT(TPLAN_CHAIN_R_TRUNCATED, 1, self->c.dw[DW_COPY]);
}

/* Every packet but the four a chain is made of is refused by name. */
TEST_F(chain, r_opcode)
{
	static const u32 headers[] = {
		0x00000000,	/* NOP */
		0x00070000,	/* NOP, 8 dwords */
		0x00000002,	/* WRITE_LINEAR */
		0x00000004,	/* INDIRECT_BUFFER */
		0x00000005,	/* FENCE */
		0x00000006,	/* TRAP */
		0x0000020d,	/* TIMESTAMP_GET_GLOBAL */
		0x8000000b,	/* CONST_FILL */
		0x08000001,	/* COPY_LINEAR broadcast */
		0x00000101,	/* COPY_TILED */
		0x00000801,	/* COPY_LINEAR_PHY */
		0x00000108,	/* POLL_REG_WRITE_MEM */
		0x00000007,	/* SEM */
		0x0000000e,	/* SRBM_WRITE */
		0x00000010,	/* DUMMY_TRAP */
		0x00000011,	/* GCR (5.x only): unknown on 4.x */
		0x000000ff,	/* unknown */
		0x0000010a,	/* ATOMIC with a sub_op */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(headers); i++) {
		self->c.dw[DW_COPY] = headers[i];
		EXPECT_REJECT(TPLAN_CHAIN_R_OPCODE, 1, headers[i]);
	}
}

TEST_F(chain, r_first)
{
	restart(&self->c);
	fx_copy(&self->c, &self->env, 0, 64);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_FIRST, 0, self->c.dw[0]);
	restart(&self->c);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_FIRST, 0, self->c.dw[0]);
}

TEST_F(chain, r_poll_again)
{
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_copy(&self->c, &self->env, 0, 64);
	fx_poll(&self->c, &self->env);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_AGAIN, 2, 0xd0000008);
}

TEST_F(chain, r_no_copy)
{
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_NO_COPY, 1, 0x5e00000a);
}

TEST_F(chain, r_no_atomic)
{
	self->c.ndw = DW_ATOM;
	EXPECT_REJECT(TPLAN_CHAIN_R_NO_ATOMIC, 3, DW_ATOM);
}

TEST_F(chain, r_trailing)
{
	fx_copy(&self->c, &self->env, 0, 64);
	EXPECT_REJECT(TPLAN_CHAIN_R_TRAILING, 4, 0x00000001);
	self->c.ndw = BASE_DW + 1;
	self->c.dw[BASE_DW] = 0;	/* even a NOP */
	EXPECT_REJECT(TPLAN_CHAIN_R_TRAILING, 4, 0);
}

TEST_F(chain, r_reserved)
{
	/* COPY_LINEAR header bit 17 */
	self->c.dw[DW_COPY] |= 1u << 17;
	EXPECT_REJECT(TPLAN_CHAIN_R_RESERVED, 1, DWORD_VALUE(0, 0x00020001));
	self->c.dw[DW_COPY] &= ~(1u << 17);
	/* count bits [31:30] */
	self->c.dw[DW_COPY + 1] |= 1u << 31;
	EXPECT_REJECT(TPLAN_CHAIN_R_RESERVED, 1, DWORD_VALUE(1, 0x80000fff));
	self->c.dw[DW_COPY + 1] &= ~(1u << 31);
	/* memory poll address bits [1:0] */
	self->c.dw[DW_POLL + 1] |= 2;
	EXPECT_REJECT(TPLAN_CHAIN_R_RESERVED, 0, DWORD_VALUE(1, self->c.dw[DW_POLL + 1]));
	self->c.dw[DW_POLL + 1] &= ~2u;
	/* sub-window rect dword bit 31 */
	self->c.dw[DW_WIN + 11] |= 1u << 31;
	EXPECT_REJECT(TPLAN_CHAIN_R_RESERVED, 2, DWORD_VALUE(11, self->c.dw[DW_WIN + 11]));
	self->c.dw[DW_WIN + 11] &= ~(1u << 31);
	/* ATOMIC loop_interval bits above 12 */
	self->c.dw[DW_ATOM + 7] = 1u << 13;
	EXPECT_REJECT(TPLAN_CHAIN_R_RESERVED, 3, DWORD_VALUE(7, 1u << 13));
}

/* ---- POLL_REGMEM ------------------------------------------------------ */

TEST_F(chain, r_poll_mode)
{
	self->c.dw[DW_POLL] &= ~TPLAN_SDMA_POLL_HDR_MEM_POLL;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_MODE, 0, 0x50000008);
	self->c.dw[DW_POLL] |= TPLAN_SDMA_POLL_HDR_MEM_POLL | TPLAN_SDMA_POLL_HDR_HDP_FLUSH;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_MODE, 0, 0xd4000008);
}

TEST_F(chain, r_poll_func)
{
	u32 func;

	for (func = 0; func < 8; func++) {
		if (func == TPLAN_SDMA_FUNC_GE)
			continue;
		self->c.dw[DW_POLL] = 0x80000008 | func << 28;
		EXPECT_REJECT(TPLAN_CHAIN_R_POLL_FUNC, 0, func);
	}
}

TEST_F(chain, r_poll_mask)
{
	self->c.dw[DW_POLL + 4] = 0x0000ffff;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_MASK, 0, 0x0000ffff);
}

TEST_F(chain, r_poll_ref)
{
	self->c.dw[DW_POLL + 3] = 1;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_REF, 0, 1);
}

TEST_F(chain, r_poll_retry)
{
	self->c.dw[DW_POLL + 5] = 0x00100004;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_RETRY, 0, 0x10);
	/* the interval is free */
	self->c.dw[DW_POLL + 5] = 0x0fffffff;
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
}

TEST_F(chain, r_poll_addr)
{
	/* the next chunk's gate, then the arrival gate of the same row */
	self->c.dw[DW_POLL + 1] += TPLAN_GATE_ROW_BYTES;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_ADDR, 0, self->env.ready_gate + TPLAN_GATE_ROW_BYTES);
	self->c.dw[DW_POLL + 1] -= TPLAN_GATE_ROW_BYTES - TPLAN_GATE_ARRIVAL;
	EXPECT_REJECT(TPLAN_CHAIN_R_POLL_ADDR, 0, self->env.ready_gate + TPLAN_GATE_ARRIVAL);
}

/* ---- copies ----------------------------------------------------------- */

TEST_F(chain, r_copy_flags)
{
	self->c.dw[DW_COPY] |= TPLAN_SDMA_COPY_HDR_TMZ;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_FLAGS, 1, DWORD_VALUE(0, 0x00040001));
	self->c.dw[DW_COPY] = 0x00010001;	/* encrypt */
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_FLAGS, 1, DWORD_VALUE(0, 0x00010001));
	self->c.dw[DW_COPY] = 0x00000001;
	self->c.dw[DW_COPY + 2] = 0x01000000;	/* src_sw */
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_FLAGS, 1, DWORD_VALUE(2, 0x01000000));
	self->c.dw[DW_COPY + 2] = 0;
	self->c.dw[DW_WIN] |= TPLAN_SDMA_SUB_WINDOW_HDR_TMZ;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_FLAGS, 2, DWORD_VALUE(0, self->c.dw[DW_WIN]));
	self->c.dw[DW_WIN] &= ~TPLAN_SDMA_SUB_WINDOW_HDR_TMZ;
	self->c.dw[DW_WIN + 12] |= 0x00020000;	/* dst_sw */
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_FLAGS, 2, DWORD_VALUE(12, 0x00020000));
}

TEST_F(chain, r_copy_count)
{
	/* SDMA 4.4.2 at ROCr's default: 4 MiB per packet */
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, TPLAN_SDMA_IP_4_4_2, 0));
	self->c.dw[DW_COPY + 1] = (4u << 20) - 1;
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
	self->c.dw[DW_COPY + 1] = 4u << 20;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_COUNT, 1, (4u << 20) + 1);
	/* raised by the administrator */
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, TPLAN_SDMA_IP_4_4_2, 64u << 20));
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
	self->c.dw[DW_COPY + 1] = 64u << 20;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_COUNT, 1, (64u << 20) + 1);
	/* SDMA 4.4.0 takes the full 2^30, which the field cannot exceed */
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, TPLAN_SDMA_IP_4_4_0, 0));
	self->c.dw[DW_COPY + 1] = (1u << 30) - 1;
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
	ASSERT_EQ(0, tplan_sdma_limits_init(&self->lim, TPLAN_SDMA_IP_4_4_0, 1u << 20));
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_COUNT, 1, 1u << 30);
}

TEST_F(chain, r_copy_src)
{
	u64 src;

	/* runs one byte past the end of the sender's part */
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_copy(&self->c, &self->env, FX_PART - 4095, 4096);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_SRC, 1, fx_part(RANK) + FX_PART - 4095);
	/* the same bytes minus one are fine */
	self->c.dw[DW_COPY + 1] = 4094;
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
	/* another rank's part, at the matching offset on the peer */
	src = fx_part(RANK) - 4096;
	self->c.dw[DW_COPY + 3] = (u32)src;
	self->c.dw[DW_COPY + 4] = (u32)(src >> 32);
	self->c.dw[DW_COPY + 5] = (u32)(src - fx_heap(RANK) + fx_heap(PEER));
	self->c.dw[DW_COPY + 6] = (u32)((src - fx_heap(RANK) + fx_heap(PEER)) >> 32);
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_SRC, 1, src);
	/* a tile whose last row leaves the part */
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_tile(&self->c, &self->env, 4096, 2, 0, (u32)(FX_PART / (4096 * 4)) - 8, 16, 9);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_SRC, 1, ((u64)self->c.dw[DW_COPY + 2] << 32) |
		      self->c.dw[DW_COPY + 1]);
}

TEST_F(chain, r_copy_dst)
{
	self->c.dw[DW_COPY + 5] += 4;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_DST, 1, (((u64)self->c.dw[DW_COPY + 6] << 32) |
						  self->c.dw[DW_COPY + 5]));
	self->c.dw[DW_COPY + 5] -= 4;
	/* the tile sent to the wrong peer's heap */
	self->c.dw[DW_WIN + 7] ^= (u32)((fx_heap(PEER) ^ fx_heap(PEER + 1)) >> 32);
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_DST, 2, (((u64)self->c.dw[DW_WIN + 7] << 32) |
						  self->c.dw[DW_WIN + 6]));
}

TEST_F(chain, r_copy_dst_range)
{
	/* the peer's plan buffer ends before the copy does */
	self->env.dst_bytes = FX_PART * RANK + 0x1000 + 4095;
	EXPECT_REJECT(TPLAN_CHAIN_R_COPY_DST_RANGE, 1, fx_heap(PEER) + FX_BUF + FX_PART * RANK + 0x1000);
}

/* ---- COPY_LINEAR_SUB_WINDOW ------------------------------------------- */

TEST_F(chain, r_subwin_element)
{
	self->c.dw[DW_WIN] = (self->c.dw[DW_WIN] & 0x1fffffff) | 5u << 29;
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_ELEMENT, 2, 5);
	self->c.dw[DW_WIN] |= 7u << 29;
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_ELEMENT, 2, 7);
}

TEST_F(chain, r_subwin_depth)
{
	self->c.dw[DW_WIN + 12] = 1;			/* rect_z 2 */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_DEPTH, 2, 2);
	self->c.dw[DW_WIN + 12] = 0;
	self->c.dw[DW_WIN + 4] |= 3;			/* src_z 3 */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_DEPTH, 2, 3);
	self->c.dw[DW_WIN + 4] &= ~3u;
	self->c.dw[DW_WIN + 10] = 99;			/* dst slice pitch 100 */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_DEPTH, 2, 100);
}

TEST_F(chain, r_subwin_extent)
{
	/* x 128 + 64 columns past a pitch of 160 */
	self->c.dw[DW_WIN + 4] = (self->c.dw[DW_WIN + 4] & 0x1fff) | (159u << 13);
	self->c.dw[DW_WIN + 9] = self->c.dw[DW_WIN + 4];
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_EXTENT, 2, 192);
	/* y + rect_y past 16384 rows */
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_tile(&self->c, &self->env, 64, 2, 0, 0, 16, 16);
	fx_atomic(&self->c, &self->env);
	ASSERT_EQ(0, tplan_chain_validate(self->c.dw, self->c.ndw, 0, &self->env, &self->why));
	self->c.dw[DW_COPY + 3] = 16370u << 16;		/* src y */
	self->c.dw[DW_COPY + 8] = 16370u << 16;		/* dst y */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_EXTENT, 1, 16386);
	/* x + rect_x past 16384 with a wide pitch */
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_tile(&self->c, &self->env, 1u << 18, 0, 16000, 0, 1000, 1);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_EXTENT, 1, 17000);
}

TEST_F(chain, r_subwin_align)
{
	u64 base = ((u64)self->c.dw[DW_WIN + 2] << 32 | self->c.dw[DW_WIN + 1]) + 2;

	self->c.dw[DW_WIN + 1] += 2;
	self->c.dw[DW_WIN + 6] += 2;
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_ALIGN, 2, base);
	/* one-byte elements, a row of 1023 bytes */
	restart(&self->c);
	fx_poll(&self->c, &self->env);
	fx_tile(&self->c, &self->env, 1023, 0, 0, 0, 16, 16);
	fx_atomic(&self->c, &self->env);
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_ALIGN, 1, 1023);
}

TEST_F(chain, r_subwin_shape)
{
	self->c.dw[DW_WIN + 8] += 1;			/* dst x */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_SHAPE, 2, 129);
	self->c.dw[DW_WIN + 8] -= 1;
	self->c.dw[DW_WIN + 8] += 1u << 16;		/* dst y */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_SHAPE, 2, 1);
	self->c.dw[DW_WIN + 8] -= 1u << 16;
	self->c.dw[DW_WIN + 9] += 1u << 13;		/* dst pitch 4097 */
	EXPECT_REJECT(TPLAN_CHAIN_R_SUBWIN_SHAPE, 2, 4097);
}

/* ---- ATOMIC ----------------------------------------------------------- */

TEST_F(chain, r_atomic_op)
{
	self->c.dw[DW_ATOM] = 0x0000000a | 0x6fu << 25;	/* ADD_64, no return */
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_OP, 3, 0x6f);
	self->c.dw[DW_ATOM] = 0x0000000a;
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_OP, 3, 0);
}

TEST_F(chain, r_atomic_value)
{
	self->c.dw[DW_ATOM + 3] = 0xffffffff;		/* ROCr's decrement */
	self->c.dw[DW_ATOM + 4] = 0xffffffff;
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_VALUE, 3, ~0ull);
	self->c.dw[DW_ATOM + 3] = 1;
	self->c.dw[DW_ATOM + 4] = 1;
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_VALUE, 3, 0x100000001ull);
}

TEST_F(chain, r_atomic_unused)
{
	self->c.dw[DW_ATOM] |= TPLAN_SDMA_ATOMIC_HDR_LOOP;
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_UNUSED, 3, DWORD_VALUE(0, 0x5e01000a));
	self->c.dw[DW_ATOM] = 0x5e04000a;		/* tmz */
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_UNUSED, 3, DWORD_VALUE(0, 0x5e04000a));
	self->c.dw[DW_ATOM] = 0x5e00000a;
	self->c.dw[DW_ATOM + 6] = 2;			/* cmp_data high */
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_UNUSED, 3, DWORD_VALUE(6, 2));
	self->c.dw[DW_ATOM + 6] = 0;
	self->c.dw[DW_ATOM + 5] = 9;			/* cmp_data low */
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_UNUSED, 3, DWORD_VALUE(5, 9));
	self->c.dw[DW_ATOM + 5] = 0;
	self->c.dw[DW_ATOM + 7] = 4;			/* loop_interval */
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_UNUSED, 3, DWORD_VALUE(7, 4));
}

TEST_F(chain, r_atomic_addr)
{
	/* the ready gate of the same row, then the sender's own arrival gate */
	self->c.dw[DW_ATOM + 1] -= TPLAN_GATE_ARRIVAL;
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_ADDR, 3, self->env.arrival_gate - TPLAN_GATE_ARRIVAL);
	self->c.dw[DW_ATOM + 1] += TPLAN_GATE_ARRIVAL;
	self->c.dw[DW_ATOM + 2] = (u32)((self->env.arrival_gate - fx_heap(PEER) + fx_heap(RANK)) >> 32);
	EXPECT_REJECT(TPLAN_CHAIN_R_ATOMIC_ADDR, 3,
		      self->env.arrival_gate - fx_heap(PEER) + fx_heap(RANK));
}

/* ---- valid shapes ----------------------------------------------------- */

/* 1..n linear copies, on both engines, for every (rank, peer, chunk). */
TEST(valid_linear_chains)
{
	static const u64 sizes[] = { 1, 4096, 1ull << 22, (1ull << 22) + 1, 1ull << 30,
				     (3ull << 30) + 5 };
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	struct fx_chain c;
	u32 ip, rank, peer, i;

	for (ip = 0; ip < TPLAN_SDMA_IP_COUNT; ip++) {
		ASSERT_EQ(0, tplan_sdma_limits_init(&lim, ip, 0));
		for (rank = 0; rank < FX_WORLD; rank++) {
			for (peer = 0; peer < FX_WORLD; peer++) {
				if (peer == rank)
					continue;
				for (i = 0; i < ARRAY_SIZE(sizes); i++) {
					fx_env(&env, &lim, rank, peer, i);
					fx_chain_init(&c, 1 << 16);
					fx_linear_chain(&c, &env, FX_PART - sizes[i], sizes[i]);
					ASSERT_EQ(0, c.err);
					EXPECT_EQ(0, tplan_chain_validate(c.dw, c.ndw, i, &env, &why))
						TH_LOG("ip %u rank %u size %llu: rule %u packet %u",
						       ip, rank, (unsigned long long)sizes[i],
						       why.rule, why.packet);
					fx_chain_free(&c);
				}
			}
		}
	}
}

/* Maximum-size splits: every copy but the last is exactly the maximum. */
TEST(valid_max_size_splits)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	struct fx_chain c;
	u32 copies;

	ASSERT_EQ(0, tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_0, 0));
	fx_env(&env, &lim, 0, 1, 0);
	fx_chain_init(&c, 1 << 16);
	fx_linear_chain(&c, &env, 0, 3ull << 30);
	ASSERT_EQ(0, c.err);
	ASSERT_EQ(5, c.packets);
	EXPECT_EQ((1u << 30) - 1, c.dw[6 + 1]);
	ASSERT_EQ(0, tplan_chain_validate(c.dw, c.ndw, 0, &env, &why));
	fx_chain_free(&c);

	/* 4.4.2 at 4 MiB: 1 GiB is 256 copies */
	ASSERT_EQ(0, tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_2, 0));
	fx_chain_init(&c, 1 << 16);
	fx_linear_chain(&c, &env, 0, 1ull << 30);
	ASSERT_EQ(0, c.err);
	copies = c.packets - 2;
	ASSERT_EQ(256, copies);
	ASSERT_EQ(0, tplan_chain_validate(c.dw, c.ndw, 0, &env, &why));
	ASSERT_EQ(256, tplan_chain_spans(c.dw, c.ndw, env.own_heap, 0, 0, NULL, 0));
	fx_chain_free(&c);
}

/* tile_chunks(): consecutive GEMM tiles of the sender's rows. */
TEST(valid_tile_chains)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	struct fx_chain c;
	u32 t, esz;

	ASSERT_EQ(0, tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_2, 0));
	for (esz = 0; esz <= 4; esz++) {
		fx_env(&env, &lim, 3, 0, esz);
		fx_chain_init(&c, 1 << 16);
		fx_poll(&c, &env);
		/* a 256 x 8192-element matrix in 128 x 256 tiles, and edge tiles */
		for (t = 0; t < 64; t++)
			fx_tile(&c, &env, 8192, esz, (t % 32) * 256, (t / 32) * 128, 256, 128);
		fx_tile(&c, &env, 8192, esz, 8192 - 17, 256, 17, 3);
		fx_tile(&c, &env, 8192, esz, 0, 0, 8192, 1);
		fx_atomic(&c, &env);
		ASSERT_EQ(0, c.err);
		EXPECT_EQ(0, tplan_chain_validate(c.dw, c.ndw, 0, &env, &why))
			TH_LOG("esz %u: rule %u packet %u value 0x%llx", esz, why.rule,
			       why.packet, (unsigned long long)why.value);
		fx_chain_free(&c);
	}
}

/* Linear copies and tiles mixed in one chunk, the widest tile there is. */
TEST(valid_mixed_chain)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_reject why;
	struct fx_chain c;

	ASSERT_EQ(0, tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_0, 0));
	fx_env(&env, &lim, 2, 1, 9);
	fx_chain_init(&c, 1 << 10);
	fx_poll(&c, &env);
	fx_copy(&c, &env, 0, 1);
	fx_tile(&c, &env, 16384, 4, 0, 0, 16384, 16384);
	fx_copy(&c, &env, FX_PART - (1u << 30), 1u << 30);
	fx_atomic(&c, &env);
	ASSERT_EQ(0, c.err);
	ASSERT_EQ(0, tplan_chain_validate(c.dw, c.ndw, 0, &env, &why));
	fx_chain_free(&c);
}

/* ---- spans and the group-wide overlap check --------------------------- */

TEST(spans_of_a_chain)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_span s[4];
	struct fx_chain c;

	ASSERT_EQ(0, tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_0, 0));
	fx_env(&env, &lim, 1, 0, 0);
	fx_chain_init(&c, 256);
	fx_poll(&c, &env);
	fx_copy(&c, &env, 100, 50);
	fx_tile(&c, &env, 4096, 1, 3, 10, 64, 32);
	fx_atomic(&c, &env);
	ASSERT_EQ(2, tplan_chain_spans(c.dw, c.ndw, env.own_heap, 1, 5, s, 1));
	ASSERT_EQ(2, tplan_chain_spans(c.dw, c.ndw, env.own_heap, 1, 5, s, 4));
	EXPECT_EQ(FX_BUF + FX_PART + 100, s[0].start);
	EXPECT_EQ(50, s[0].width);
	EXPECT_EQ(1, s[0].rows);
	EXPECT_EQ(1, s[0].packet);
	EXPECT_EQ(5, s[0].chain);
	EXPECT_EQ(FX_BUF + FX_PART + (10 * 4096 + 3) * 2, s[1].start);
	EXPECT_EQ(128, s[1].width);
	EXPECT_EQ(8192, s[1].pitch);
	EXPECT_EQ(32, s[1].rows);
	EXPECT_EQ(2, s[1].packet);
	EXPECT_EQ(1, s[1].rank);
	/* a chain that does not decode */
	c.dw[6] = 0x00000002;
	EXPECT_EQ(-EINVAL, tplan_chain_spans(c.dw, c.ndw, env.own_heap, 1, 5, s, 4));
	fx_chain_free(&c);
}

static struct tplan_chain_span span(u32 rank, u32 chain, u32 packet, u64 start, u64 width,
				    u64 pitch, u32 rows)
{
	struct tplan_chain_span s = {
		.start = start, .width = width, .pitch = pitch, .rows = rows,
		.rank = rank, .chain = chain, .packet = packet,
	};
	return s;
}

static int check(struct tplan_chain_span *s, u32 n, struct tplan_chain_reject *why)
{
	memset(why, 0, sizeof(*why));
	return tplan_chain_check_overlap(s, n, why);
}

/* The in-place all-gather: every rank sends its own rows. */
TEST(overlap_all_gather_disjoint)
{
	struct tplan_chain_span s[FX_WORLD * 2];
	struct tplan_chain_reject why;
	u32 r;

	for (r = 0; r < FX_WORLD; r++) {
		s[2 * r] = span(r, 0, 1, FX_BUF + r * FX_PART, FX_PART / 2, FX_PART / 2, 1);
		s[2 * r + 1] = span(r, 0, 2, FX_BUF + r * FX_PART + FX_PART / 2, FX_PART / 2,
				    FX_PART / 2, 1);
	}
	ASSERT_EQ(0, check(s, ARRAY_SIZE(s), &why));
}

/* A schedule built from the whole buffer instead of the rank's own part. */
TEST(overlap_whole_buffer)
{
	struct tplan_chain_span s[3];
	struct tplan_chain_reject why;

	s[0] = span(0, 0, 1, FX_BUF, FX_PART, FX_PART, 1);
	s[1] = span(1, 4, 2, FX_BUF, 3 * FX_PART, 3 * FX_PART, 1);	/* whole */
	s[2] = span(2, 0, 1, FX_BUF + 2 * FX_PART, FX_PART, FX_PART, 1);
	ASSERT_EQ(-EINVAL, check(s, 3, &why));
	EXPECT_EQ(TPLAN_CHAIN_R_OVERLAP, why.rule);
	EXPECT_EQ(FX_BUF, why.value);
	/* same start: sorted by rank, so rank 1's copy meets rank 0's */
	EXPECT_EQ(1, why.rank);
	EXPECT_EQ(4, why.chain);
	EXPECT_EQ(2, why.packet);
	EXPECT_EQ(0, why.other_rank);
	EXPECT_EQ(0, why.other_chain);
	EXPECT_EQ(1, why.other_packet);
}

/* Tiles side by side in the same rows do not overlap; one shared element does. */
TEST(overlap_tiles_exact)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;
	const u64 pitch = 8192;		/* 4096 bf16 columns */

	/* columns [0, 64) and [64, 128) of rows 0..127 */
	s[0] = span(0, 0, 1, 0, 128, pitch, 128);
	s[1] = span(1, 0, 1, 128, 128, pitch, 128);
	ASSERT_EQ(0, check(s, 2, &why));
	/* rank 1's tile starts one element left: rows share bytes 126, 127 */
	s[0] = span(0, 0, 1, 0, 128, pitch, 128);
	s[1] = span(1, 3, 2, 126, 128, pitch, 128);
	ASSERT_EQ(-EINVAL, check(s, 2, &why));
	EXPECT_EQ(126, why.value);
	EXPECT_EQ(1, why.rank);
	EXPECT_EQ(3, why.chain);
	EXPECT_EQ(0, why.other_rank);
	/* a tile further down, touching only the first tile's last row */
	s[0] = span(0, 0, 1, 0, 128, pitch, 128);
	s[1] = span(1, 0, 1, 127 * pitch + 120, 128, pitch, 4);
	ASSERT_EQ(-EINVAL, check(s, 2, &why));
	EXPECT_EQ(127 * pitch + 120, why.value);
	/* ... and one row below it: clear */
	s[0] = span(0, 0, 1, 0, 128, pitch, 128);
	s[1] = span(1, 0, 1, 128 * pitch, 128, pitch, 4);
	ASSERT_EQ(0, check(s, 2, &why));
}

/* A linear copy between a tile's rows misses it; one into a row does not. */
TEST(overlap_linear_and_tile)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;

	s[0] = span(0, 0, 1, 1000, 100, 1000, 50);
	s[1] = span(2, 0, 1, 1100 + 5 * 1000, 900, 900, 1);
	ASSERT_EQ(0, check(s, 2, &why));
	s[0] = span(0, 0, 1, 1000, 100, 1000, 50);
	s[1] = span(2, 0, 1, 1099 + 5 * 1000, 900, 900, 1);
	ASSERT_EQ(-EINVAL, check(s, 2, &why));
	EXPECT_EQ(1099 + 5 * 1000, why.value);
	EXPECT_EQ(2, why.rank);		/* the later start is named first */
	EXPECT_EQ(0, why.other_rank);
}

/* Different pitches take the row-by-row path. */
TEST(overlap_different_pitches)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;

	/* rows at 0, 1000, 2000 (width 10) and, pitch 700, 15, 715, 1415, 2115 */
	s[0] = span(0, 0, 1, 0, 10, 1000, 3);
	s[1] = span(1, 0, 1, 15, 10, 700, 4);
	ASSERT_EQ(0, check(s, 2, &why));
	/* pitch 995 from 15: 15, 1010, 2005: the third row meets [2000, 2010) */
	s[0] = span(0, 0, 1, 0, 10, 1000, 3);
	s[1] = span(1, 0, 1, 15, 10, 995, 3);
	ASSERT_EQ(-EINVAL, check(s, 2, &why));
	EXPECT_EQ(2005, why.value);
}

TEST(overlap_same_rank_allowed)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;

	s[0] = span(3, 0, 1, 0, 4096, 4096, 1);
	s[1] = span(3, 1, 1, 0, 4096, 4096, 1);
	ASSERT_EQ(0, check(s, 2, &why));
}

TEST(overlap_malformed_span)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;

	s[0] = span(0, 0, 1, 0, 0, 1, 1);
	ASSERT_EQ(-ERANGE, check(s, 1, &why));
	s[0] = span(0, 0, 1, (1ull << 62) - 10, 11, 11, 1);
	ASSERT_EQ(-ERANGE, check(s, 1, &why));
	s[0] = span(0, 0, 1, 0, 1, 1ull << 40, 1u << 30);
	ASSERT_EQ(-ERANGE, check(s, 1, &why));
	s[0] = span(0, 0, 1, (1ull << 62) - 10, 10, 10, 1);
	ASSERT_EQ(0, check(s, 1, &why));
}

/*
 * Random small spans against a byte map: the check must find an overlap
 * exactly when one exists, and the value must be the lowest byte the two
 * named spans share.
 */
#define MAP_BYTES 2048
static int brute_lowest(const struct tplan_chain_span *a, const struct tplan_chain_span *b)
{
	static unsigned char in_a[MAP_BYTES];
	u32 r;
	u64 x;

	memset(in_a, 0, sizeof(in_a));
	for (r = 0; r < a->rows; r++)
		for (x = 0; x < a->width; x++)
			in_a[a->start + r * a->pitch + x] = 1;
	for (x = 0; x < MAP_BYTES; x++) {
		for (r = 0; r < b->rows; r++) {
			if (x >= b->start + r * b->pitch && x < b->start + r * b->pitch + b->width &&
			    in_a[x])
				return (int)x;
		}
	}
	return -1;
}

TEST(overlap_random_vs_bytemap)
{
	struct tplan_chain_span s[6], copy[6];
	struct tplan_chain_reject why;
	u32 iter, i, j, n, found = 0;
	bool any;
	int ret;

	srandom(1234);
	for (iter = 0; iter < 20000; iter++) {
		n = 2 + random() % 5;
		for (i = 0; i < n; i++) {
			u64 pitch = 1 + random() % 64, width = 1 + random() % 32;
			u32 rows = 1 + random() % 8;

			if (random() % 3 == 0)
				pitch = 1 + random() % 40;
			s[i] = span(random() % 3, iter, i, random() % 1024, width, pitch, rows);
		}
		any = false;
		for (i = 0; i < n && !any; i++)
			for (j = i + 1; j < n && !any; j++)
				any = s[i].rank != s[j].rank && brute_lowest(&s[i], &s[j]) >= 0;
		memcpy(copy, s, sizeof(s));
		ret = check(copy, n, &why);
		ASSERT_EQ(any ? -EINVAL : 0, ret) TH_LOG("iteration %u", iter);
		if (ret) {
			const struct tplan_chain_span *a = NULL, *b = NULL;

			found++;
			for (i = 0; i < n; i++) {
				if (s[i].rank == why.rank && s[i].packet == why.packet)
					a = &s[i];
				if (s[i].rank == why.other_rank && s[i].packet == why.other_packet)
					b = &s[i];
			}
			ASSERT_NE(NULL, a);
			ASSERT_NE(NULL, b);
			ASSERT_NE(a->rank, b->rank);
			ASSERT_EQ(brute_lowest(a, b), (int)why.value) TH_LOG("iteration %u", iter);
		}
	}
	/* the generator must exercise both outcomes */
	ASSERT_GT(found, 1000);
	ASSERT_LT(found, 19000);
}

/* Thousands of tiles from many ranks: sort + sweep stays fast and exact. */
TEST(overlap_many_tiles)
{
	const u32 ranks = 16, tiles_m = 32, tiles_n = 32, bm = 128, bn = 64;
	const u64 pitch = (u64)tiles_n * bn * 2;
	u32 n = ranks * tiles_m * tiles_n, r, t;
	struct tplan_chain_span *s;
	struct tplan_chain_reject why;

	s = calloc(n, sizeof(*s));
	ASSERT_NE(NULL, s);
	for (r = 0; r < ranks; r++)
		for (t = 0; t < tiles_m * tiles_n; t++)
			s[r * tiles_m * tiles_n + t] =
				span(r, t, 1, ((u64)r * tiles_m * bm + (t / tiles_n) * bm) * pitch +
				     (t % tiles_n) * bn * 2, bn * 2, pitch, bm);
	ASSERT_EQ(0, tplan_chain_check_overlap(s, n, &why));
	/* one tile of rank 9 moved one row up into rank 8's last tile row */
	for (t = 0; t < n; t++)
		if (s[t].rank == 9 && s[t].chain == 5)
			s[t].start -= pitch;
	ASSERT_EQ(-EINVAL, tplan_chain_check_overlap(s, n, &why));
	EXPECT_EQ(9, why.rank);
	EXPECT_EQ(5, why.chain);
	EXPECT_EQ(8, why.other_rank);
	free(s);
}

/*
 * Two ranks sending interleaved column strips of the same rows (legal: no
 * byte shared) put every span in every other's extent; the check stays
 * exact, whichever strip is moved by one byte.
 */
TEST(overlap_interleaved_strips)
{
	const u32 strips = 4096, rows = 64;
	const u64 w = 16, pitch = strips * w;
	struct tplan_chain_span *s = calloc(strips, sizeof(*s));
	struct tplan_chain_reject why;
	u32 i;

	ASSERT_NE(NULL, s);
	for (i = 0; i < strips; i++)
		s[i] = span(i % 2, i, 1, i * w, w, pitch, rows);
	ASSERT_EQ(0, check(s, strips, &why));
	for (i = 0; i < strips; i++)
		s[i] = span(i % 2, i, 1, i * w, w, pitch, rows);
	/* strip 1001 (rank 1) reaches one byte into strip 1002 (rank 0) */
	for (i = 0; i < strips; i++)
		if (s[i].chain == 1001)
			s[i].width = w + 1;
	ASSERT_EQ(-EINVAL, check(s, strips, &why));
	EXPECT_EQ(1002 * w, why.value);
	EXPECT_EQ(1002, why.rank == 0 ? why.chain : why.other_chain);
	EXPECT_EQ(1001, why.rank == 1 ? why.chain : why.other_chain);
	free(s);
}

/* Ranks past a group's largest world size are a malformed span. */
TEST(overlap_rank_out_of_range)
{
	struct tplan_chain_span s[2];
	struct tplan_chain_reject why;

	s[0] = span(0, 0, 1, 0, 16, 16, 1);
	s[1] = span(TPLAN_CHAIN_MAX_RANKS, 0, 1, 64, 16, 16, 1);
	ASSERT_EQ(-ERANGE, check(s, 2, &why));
}

/*
 * Many spans of few pitches (rows wrapping across the pitch too) and byte
 * ranges from up to 16 ranks against a byte map: the check finds an
 * overlap exactly when one exists, and names two spans that share the
 * byte it reports.
 */
#define BIG_MAP 8192
static int brute_any(const struct tplan_chain_span *s, u32 n, u64 *lowest)
{
	static int owner[BIG_MAP];
	u64 x, best = BIG_MAP;
	u32 i, r;

	for (x = 0; x < BIG_MAP; x++)
		owner[x] = -1;
	for (i = 0; i < n; i++)
		for (r = 0; r < s[i].rows; r++)
			for (x = 0; x < s[i].width; x++) {
				u64 b = s[i].start + r * s[i].pitch + x;

				if (owner[b] >= 0 && owner[b] != (int)s[i].rank && b < best)
					best = b;
				if (owner[b] < 0)
					owner[b] = (int)s[i].rank;
			}
	*lowest = best;
	return best < BIG_MAP;
}

static bool span_has(const struct tplan_chain_span *s, u64 b)
{
	u32 r;

	for (r = 0; r < s->rows; r++)
		if (b >= s->start + r * s->pitch && b < s->start + r * s->pitch + s->width)
			return true;
	return false;
}

TEST(overlap_random_many_vs_bytemap)
{
	struct tplan_chain_span s[48], copy[48];
	static const u64 pitches[] = { 64, 96, 256 };
	struct tplan_chain_reject why;
	u32 iter, i, n, found = 0, ranks;
	u64 lowest;
	int ret, any;

	srandom(4321);
	for (iter = 0; iter < 3000; iter++) {
		n = 2 + random() % 46;
		ranks = 2 + random() % 15;
		for (i = 0; i < n; i++) {
			u64 pitch = pitches[random() % (iter % 4 == 0 ? 3 : 1)];
			u64 width = 1 + random() % (pitch - 1);
			u32 rows = 1 + random() % 12;

			if (random() % 4 == 0) {	/* a byte range */
				rows = 1;
				width = 1 + random() % 300;
				pitch = width;
			}
			s[i] = span(random() % ranks, iter, i, random() % 4096, width, pitch, rows);
		}
		any = brute_any(s, n, &lowest);
		memcpy(copy, s, sizeof(s));
		ret = check(copy, n, &why);
		ASSERT_EQ(any ? -EINVAL : 0, ret) TH_LOG("iteration %u", iter);
		if (ret) {
			const struct tplan_chain_span *a = NULL, *b = NULL;

			found++;
			for (i = 0; i < n; i++) {
				if (s[i].rank == why.rank && s[i].packet == why.packet)
					a = &s[i];
				if (s[i].rank == why.other_rank && s[i].packet == why.other_packet)
					b = &s[i];
			}
			ASSERT_NE(NULL, a);
			ASSERT_NE(NULL, b);
			ASSERT_NE(a->rank, b->rank);
			ASSERT_TRUE(span_has(a, why.value) && span_has(b, why.value))
				TH_LOG("iteration %u", iter);
		}
	}
	ASSERT_GT(found, 300);
	ASSERT_LT(found, 2900);
}

/* ---- limits ----------------------------------------------------------- */

TEST(limits_per_engine)
{
	struct tplan_sdma_limits l;

	ASSERT_EQ(0, tplan_sdma_limits_init(&l, TPLAN_SDMA_IP_4_4_0, 0));
	EXPECT_EQ(1u << 30, l.max_copy_bytes);
	ASSERT_EQ(0, tplan_sdma_limits_init(&l, TPLAN_SDMA_IP_4_4_2, 0));
	EXPECT_EQ(1u << 22, l.max_copy_bytes);
	EXPECT_EQ(1u << 22, l.max_copy_bytes_default);
	ASSERT_EQ(0, tplan_sdma_limits_init(&l, TPLAN_SDMA_IP_4_4_2, 1u << 30));
	EXPECT_EQ(1u << 30, l.max_copy_bytes);
	EXPECT_EQ(-ERANGE, tplan_sdma_limits_init(&l, TPLAN_SDMA_IP_4_4_2, (1u << 30) + 1));
	EXPECT_EQ(-EINVAL, tplan_sdma_limits_init(&l, TPLAN_SDMA_IP_COUNT, 0));
	/* sub-window widths agree with the codec's masks */
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_X_MASK + 1, 1u << l.window_x_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_Y_MASK + 1, 1u << l.window_y_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_Z_MASK + 1, 1u << l.window_z_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_PITCH_MASK + 1, 1u << l.window_pitch_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_SLICE_MASK + 1, 1u << l.window_slice_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_RECT_X_MASK + 1, 1u << l.rect_xy_bits);
	EXPECT_EQ(TPLAN_SDMA_SUB_WINDOW_RECT_Z_MASK + 1, 1u << l.rect_z_bits);
}

TEST(limits_ring)
{
	const struct tplan_sdma_limits *l = &tplan_sdma_limits_default[TPLAN_SDMA_IP_4_4_2];

	EXPECT_EQ(0, tplan_sdma_ring_check(l, 0x100000, 8u << 20));
	EXPECT_EQ(0, tplan_sdma_ring_check(l, 0x100, 1024));
	EXPECT_EQ(-EINVAL, tplan_sdma_ring_check(l, 0x100, 512));		/* too small */
	EXPECT_EQ(-EINVAL, tplan_sdma_ring_check(l, 0x100, 3u << 20));	/* not 2^n */
	EXPECT_EQ(-EINVAL, tplan_sdma_ring_check(l, 0x180, 1u << 20));	/* base */
	EXPECT_EQ(-EINVAL, tplan_sdma_ring_check(l, 0, 1ull << 32));		/* > u32 */
}

TEST_HARNESS_MAIN
