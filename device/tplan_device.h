/* SPDX-License-Identifier: MIT */
/*
 * tplan_device.h: the producer and consumer side of a triggered plan.
 *
 * A round's handle (from tplan_plan_start()) is passed to the producing
 * kernel, which marks each chunk of its output ready once written; the
 * copy engine sends the chunk to every peer and signals its arrival there.
 */
#ifndef TPLAN_DEVICE_H
#define TPLAN_DEVICE_H

#include <stdint.h>

#define TPLAN_HANDLE_MAX_RANKS 16

/*
 * struct tplan_handle - what a producer needs for one round; plain data,
 * passed by value to a GPU kernel.
 * @gates: address of this rank's gate table, as the producer sees it (a
 *         host pointer for CPU producers, a GPU address on hardware)
 * @round: the round to mark (rounds start at 1)
 * @rank: this rank
 * @world_size: ranks of the group
 * @nchunks: chunks this rank writes
 * @total_chunks: chunks of all ranks
 * @chunk_base: rank r's chunk c is gate row chunk_base[r] + c
 */
struct tplan_handle {
	uint64_t gates;
	uint32_t round;
	uint32_t rank;
	uint32_t world_size;
	uint32_t nchunks;
	uint32_t total_chunks;
	uint32_t chunk_base[TPLAN_HANDLE_MAX_RANKS + 1];
};

#endif /* TPLAN_DEVICE_H */
