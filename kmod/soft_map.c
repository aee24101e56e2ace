// SPDX-License-Identifier: GPL-2.0
/*
 * The soft engine's address maps (struct tplan_addr_map): where each rank
 * sees every heap, registered when the rank joins.  Hardware gives every
 * rank a GPU VM of its own; the soft engine makes the most of that, so
 * that code assuming one global address space, or passing an address to
 * another rank, is caught: each rank's map lies in a 1 TiB region of its
 * own, drawn at random per group, so no address is valid in two ranks'
 * maps; within it the heaps and the queue-pointer window take distinct
 * 32 GiB slots in random order, each at a random 2 MiB-aligned offset in
 * its slot's first half.  Addresses stay below 2^47 (canonical GPU
 * virtual addresses, as a user process's are) and above the first 1 TiB.
 */
#include <linux/random.h>
#include <linux/bitmap.h>
#include <linux/minmax.h>

#include "tplan_priv.h"

#define TPLAN_SOFT_REGION_SHIFT	40	/* one rank's map */
#define TPLAN_SOFT_REGIONS	(1U << (47 - TPLAN_SOFT_REGION_SHIFT))
#define TPLAN_SOFT_SLOT_SHIFT	35	/* one heap, or the window */
#define TPLAN_SOFT_SLOTS	(1U << (TPLAN_SOFT_REGION_SHIFT - TPLAN_SOFT_SLOT_SHIFT))
#define TPLAN_SOFT_ALIGN_SHIFT	21	/* a GPU's large page */

/*
 * Somewhere in the first half of a slot: whatever starts there (at most
 * half a slot long) ends 2 MiB or more before the next slot.
 */
static u64 tplan_soft_place(u32 region, u32 slot)
{
	u32 offsets = 1U << (TPLAN_SOFT_SLOT_SHIFT - 1 - TPLAN_SOFT_ALIGN_SHIFT);
	u64 off = (u64)get_random_u32_below(offsets) << TPLAN_SOFT_ALIGN_SHIFT;

	return ((u64)region << TPLAN_SOFT_REGION_SHIFT) + ((u64)slot << TPLAN_SOFT_SLOT_SHIFT) + off;
}

/* Fill in rank's map at its join.  Caller holds g->lock. */
int tplan_soft_map_register(struct tplan_group *g, u32 rank)
{
	struct tplan_addr_map *m = &g->maps[rank];
	DECLARE_BITMAP(taken, TPLAN_SOFT_REGIONS);
	u8 slot[TPLAN_SOFT_SLOTS];
	u32 r, i, k, region = 0;

	BUILD_BUG_ON(TPLAN_HEAP_SIZE_MAX > 1ULL << (TPLAN_SOFT_SLOT_SHIFT - 1));
	BUILD_BUG_ON((u64)TPLAN_MAX_WORLD_SIZE * PAGE_SIZE > 1ULL << (TPLAN_SOFT_SLOT_SHIFT - 1));
	BUILD_BUG_ON(TPLAN_MAX_WORLD_SIZE + 1 > TPLAN_SOFT_SLOTS);
	BUILD_BUG_ON(TPLAN_MAX_WORLD_SIZE + 1 > TPLAN_SOFT_REGIONS);
	lockdep_assert_held(&g->lock);

	/* A region at random among those no other joined rank's map holds. */
	bitmap_zero(taken, TPLAN_SOFT_REGIONS);
	__set_bit(0, taken);		/* low addresses are never valid */
	for (r = 0; r < g->world_size; r++)
		if (r != rank && g->joined & BIT(r))
			__set_bit(g->maps[r].qptr_dev >> TPLAN_SOFT_REGION_SHIFT, taken);
	k = get_random_u32_below(TPLAN_SOFT_REGIONS - bitmap_weight(taken, TPLAN_SOFT_REGIONS));
	for_each_clear_bit(region, taken, TPLAN_SOFT_REGIONS)
		if (!k--)
			break;

	/* Slots in random order (Fisher-Yates): heaps first, then the window. */
	for (i = 0; i < TPLAN_SOFT_SLOTS; i++)
		slot[i] = i;
	for (i = TPLAN_SOFT_SLOTS - 1; i > 0; i--) {
		k = get_random_u32_below(i + 1);
		swap(slot[i], slot[k]);
	}
	memset(m, 0, sizeof(*m));
	for (r = 0; r < g->world_size; r++)
		m->heap_dev[r] = tplan_soft_place(region, slot[r]);
	m->qptr_dev = tplan_soft_place(region, slot[g->world_size]);
	return 0;
}
