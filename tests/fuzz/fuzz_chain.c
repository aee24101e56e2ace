// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target over the SDMA codec and the chain validator: the input
 * is a chain of raw dwords.  Besides memory and UB errors (ASan, UBSan),
 * it traps on broken invariants:
 *  - a decoded packet re-encodes to the same dwords, and its length agrees
 *    with tplan_sdma_packet_dwords();
 *  - a rejection names a known rule, the chain and a packet of it;
 *  - an accepted chain only copies bytes of the sender's own part, so its
 *    spans never overlap the other ranks' parts, and always overlap a
 *    copy of themselves sent by another rank;
 *  - the validator's fast accept path takes only chains its full walk
 *    accepts, and tplan_chain_validate() answers as the full walk does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "chain_fixture.h"

/* The seed corpus holds chains of this sender, peer and chunk. */
#define RANK_SENDER	1
#define RANK_PEER	2
#define CHUNK_FUZZ	3

#define CHECK(x) do { if (!(x)) __builtin_trap(); } while (0)

static void fuzz_codec(const u32 *dw, u32 ndw)
{
	static u32 out[TPLAN_SDMA_NOP_MAX_DW];
	struct tplan_sdma_packet p;
	u32 off = 0, i;
	int n, len;

	while (off < ndw) {
		n = tplan_sdma_decode(dw + off, ndw - off, &p);
		len = tplan_sdma_packet_dwords(dw + off, ndw - off);
		CHECK(tplan_sdma_kind_name(tplan_sdma_kind(dw[off])) != NULL);
		if (n <= 0) {
			off++;
			continue;
		}
		CHECK(len == n && p.dwords == (u32)n);
		CHECK(tplan_sdma_encode(out, ARRAY_SIZE(out), &p) == n);
		/* a NOP's payload is don't-care */
		for (i = 0; i < (p.kind == TPLAN_SDMA_KIND_NOP ? 1u : (u32)n); i++)
			CHECK(out[i] == dw[off + i]);
		off += (u32)n;
	}
}

static void fuzz_overlap(const u32 *dw, u32 ndw, const struct tplan_chain_env *env)
{
	struct tplan_chain_span *s;
	struct tplan_chain_reject why;
	u32 i;
	int n;

	n = tplan_chain_spans(dw, ndw, env->own_heap, RANK_SENDER, 0, NULL, 0);
	CHECK(n >= 1);
	s = calloc(2 * n + 2, sizeof(*s));
	CHECK(s);
	CHECK(tplan_chain_spans(dw, ndw, env->own_heap, RANK_SENDER, 0, s, n) == n);
	for (i = 0; i < (u32)n; i++)
		CHECK(s[i].start >= FX_BUF + RANK_SENDER * FX_PART &&
		      s[i].start + (u64)(s[i].rows - 1) * s[i].pitch + s[i].width <=
		      FX_BUF + (RANK_SENDER + 1) * FX_PART);
	/* the neighbours' whole parts: never touched */
	s[n] = (struct tplan_chain_span){ .start = FX_BUF, .width = FX_PART, .pitch = FX_PART,
					  .rows = 1, .rank = 0 };
	s[n + 1] = (struct tplan_chain_span){ .start = FX_BUF + 2 * FX_PART, .width = FX_PART,
					      .pitch = FX_PART, .rows = 1, .rank = 2 };
	CHECK(tplan_chain_check_overlap(s, n + 2, &why) == 0);
	/* the same bytes from another rank: always caught */
	CHECK(tplan_chain_spans(dw, ndw, env->own_heap, 3, 1, s, n) == n);
	CHECK(tplan_chain_spans(dw, ndw, env->own_heap, RANK_SENDER, 0, s + n, n) == n);
	CHECK(tplan_chain_check_overlap(s, 2 * n, &why) == -EINVAL);
	CHECK(why.rule == TPLAN_CHAIN_R_OVERLAP && why.rank != why.other_rank);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_chain_reject why, why_full;
	u32 ndw = (u32)(size / 4), ip;
	u32 *dw;
	int ret;

	/* exact-size copy, so ASan sees any read past the chain */
	dw = malloc(ndw ? ndw * sizeof(u32) : 1);
	CHECK(dw != NULL);
	memcpy(dw, data, ndw * sizeof(u32));

	fuzz_codec(dw, ndw);
	for (ip = 0; ip < TPLAN_SDMA_IP_COUNT; ip++) {
		CHECK(tplan_sdma_limits_init(&lim, ip, 0) == 0);
		fx_env(&env, &lim, RANK_SENDER, RANK_PEER, CHUNK_FUZZ);
		ret = tplan_chain_validate(dw, ndw, 0, &env, &why);
		CHECK(tplan_chain_validate_full(dw, ndw, 0, &env, &why_full) == ret);
		CHECK(!ret || !memcmp(&why, &why_full, sizeof(why)));
		CHECK(!tplan_chain_fast_accept(dw, ndw, &env) || ret == 0);
		if (ret == 0) {
			fuzz_overlap(dw, ndw, &env);
		} else {
			CHECK(ret == -EINVAL);
			CHECK(why.rule > TPLAN_CHAIN_OK && why.rule < TPLAN_CHAIN_R_OVERLAP);
			CHECK(why.chain == 0 && why.rank == RANK_SENDER && why.packet <= ndw);
		}
	}
	free(dw);
	return 0;
}
