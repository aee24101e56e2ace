// SPDX-License-Identifier: GPL-2.0
/*
 * Ring and budget arithmetic of kmod/ring.c: padding at the ring end,
 * the span of a packet sequence (against a dword-by-dword model of the
 * ring), free space, and the prepared-copy budget.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "ring.h"

TEST(pad_only_when_a_packet_would_straddle)
{
	const u32 size = 4096;

	ASSERT_EQ(0, tplan_ring_pad(0, size, 28));
	ASSERT_EQ(0, tplan_ring_pad(size - 28, size, 28));	/* ends exactly at the end */
	ASSERT_EQ(24, tplan_ring_pad(size - 24, size, 28));
	ASSERT_EQ(4, tplan_ring_pad(size - 4, size, 8));
	/* Pointers are monotonic: the offset is taken modulo the size. */
	ASSERT_EQ(24, tplan_ring_pad(7 * (u64)size + size - 24, size, 28));
	ASSERT_EQ(0, tplan_ring_pad(1ULL << 40, size, 52));
}

/*
 * A model of the ring writer: walk the packets one by one, pad where one
 * would cross the end, and check nothing straddles.
 */
static u64 model_span(u64 pos, u32 size, const u32 *bytes, u32 n, int *straddled)
{
	u32 i;

	*straddled = 0;
	for (i = 0; i < n; i++) {
		u32 off = pos % size;

		if (off + bytes[i] > size)
			pos += size - off;
		if (pos % size + bytes[i] > size)
			*straddled = 1;
		pos += bytes[i];
	}
	return pos;
}

TEST(span_matches_the_model_over_many_wraps)
{
	static const u32 kinds[] = { 24, 28, 32, 52, 8, 4, 4096 };
	u32 bytes[512], i, n, round;
	const u32 size = 8192;
	int straddled;
	u64 pos = 0, want, got;

	srand(1);
	for (round = 0; round < 2000; round++) {
		n = 1 + rand() % 512;
		for (i = 0; i < n; i++)
			bytes[i] = kinds[rand() % (sizeof(kinds) / sizeof(kinds[0]))];
		want = model_span(pos, size, bytes, n, &straddled);
		got = tplan_ring_span(pos, size, bytes, n);
		ASSERT_EQ(0, straddled);
		ASSERT_EQ(want, got);
		pos = got;
	}
	/* The walk went around the ring many times. */
	ASSERT_LT(100 * (u64)size, pos);
}

TEST(free_space)
{
	ASSERT_EQ(4096, tplan_ring_free(0, 0, 4096));
	ASSERT_EQ(0, tplan_ring_free(4096, 0, 4096));
	ASSERT_EQ(100, tplan_ring_free((1ULL << 50) + 3996, 1ULL << 50, 4096));
}

TEST(budget_limit_is_the_percentage)
{
	ASSERT_EQ(4U << 20, tplan_budget_limit(8U << 20, 50));
	ASSERT_EQ(32768, tplan_budget_limit(65536, 50));
	ASSERT_EQ(16384, tplan_budget_limit(65536, 25));
	ASSERT_EQ(655, tplan_budget_limit(65536, 1));
	ASSERT_EQ(128U << 20, tplan_budget_limit(256U << 20, 50));
}

TEST(budget_charge_to_the_limit_and_not_a_byte_more)
{
	u32 charged = 0;

	ASSERT_EQ(0, tplan_budget_charge(&charged, 1000, 999));
	ASSERT_EQ(-ENOSPC, tplan_budget_charge(&charged, 1000, 2));
	ASSERT_EQ(999, charged);			/* a refusal charges nothing */
	ASSERT_EQ(0, tplan_budget_charge(&charged, 1000, 1));
	ASSERT_EQ(1000, charged);
	ASSERT_EQ(-ENOSPC, tplan_budget_charge(&charged, 1000, 1));
	charged = 0;
	/* No wrap-around for huge requests. */
	ASSERT_EQ(-ENOSPC, tplan_budget_charge(&charged, 1000, 1ULL << 32));
	ASSERT_EQ(-ENOSPC, tplan_budget_charge(&charged, 1000, ~0ULL));
	ASSERT_EQ(0, charged);
}

TEST_HARNESS_MAIN
