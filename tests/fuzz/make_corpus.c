// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzer's seed corpus: valid chains of every shape (sender 1,
 * peer 2, chunk 3, as the fuzz target expects) and a run of the packets a
 * chain may not hold.  Usage: make_corpus DIR
 */
#include <stdio.h>

#include "chain_fixture.h"

static int put(const char *dir, const char *name, const struct fx_chain *c)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || c->err || fwrite(c->dw, sizeof(u32), c->ndw, f) != c->ndw) {
		perror(path);
		return 1;
	}
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env;
	struct tplan_sdma_nop nop = { .dwords = 3 };
	struct tplan_sdma_fence fence = { .addr = 0x1000, .data = 7 };
	struct tplan_sdma_trap trap = { .int_context = 9 };
	struct fx_chain c;
	int bad = 0;

	if (argc != 2)
		return 2;
	tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_2, 0);
	fx_env(&env, &lim, 1, 2, 3);

	fx_chain_init(&c, 4096);
	fx_linear_chain(&c, &env, 0x40, 4096);
	bad |= put(argv[1], "linear", &c);
	fx_chain_free(&c);

	fx_chain_init(&c, 4096);
	fx_linear_chain(&c, &env, 0x1000, (3u << 22) + 17);
	bad |= put(argv[1], "linear_split", &c);
	fx_chain_free(&c);

	fx_chain_init(&c, 4096);
	fx_poll(&c, &env);
	fx_tile(&c, &env, 4096, 1, 0, 0, 64, 32);
	fx_tile(&c, &env, 4096, 1, 64, 0, 64, 32);
	fx_tile(&c, &env, 4096, 2, 3, 40, 100, 7);
	fx_atomic(&c, &env);
	bad |= put(argv[1], "tiles", &c);
	fx_chain_free(&c);

	fx_chain_init(&c, 4096);
	fx_poll(&c, &env);
	fx_copy(&c, &env, 0, 1);
	fx_tile(&c, &env, 1024, 4, 0, 2, 1024, 2);
	fx_copy(&c, &env, 1u << 20, 1u << 22);
	fx_atomic(&c, &env);
	bad |= put(argv[1], "mixed", &c);
	fx_chain_free(&c);

	fx_chain_init(&c, 4096);
	fx_push(&c, tplan_sdma_encode_nop(c.dw + c.ndw, c.room - c.ndw, &nop));
	fx_push(&c, tplan_sdma_encode_fence(c.dw + c.ndw, c.room - c.ndw, &fence));
	fx_push(&c, tplan_sdma_encode_trap(c.dw + c.ndw, c.room - c.ndw, &trap));
	c.dw[c.ndw++] = 0x00000004;	/* INDIRECT_BUFFER header */
	c.dw[c.ndw++] = 0x08000001;	/* COPY_LINEAR broadcast header */
	c.dw[c.ndw++] = 0x00000002;	/* WRITE_LINEAR header */
	bad |= put(argv[1], "other_packets", &c);
	fx_chain_free(&c);
	return bad;
}
