// SPDX-License-Identifier: GPL-2.0
/*
 * Throughput of the chain validator, in packets per second, and how it
 * compares with memcpy() of the same bytes measured in the same run:
 * tplan_chain_validate() (the fast accept path, then the full walk if it
 * is not sure) and the full walk alone.
 *
 * The chains are the shapes plan creation sees: GEMM tiles (sub-window
 * copies, tile_chunks) and large row blocks split into maximum-size
 * linear copies on SDMA 4.4.2 (chunks).  Then the group-wide overlap check
 * on its worst legal shape: two ranks sending interleaved column strips of
 * the same rows, every span inside every other's extent.
 * Usage: chain_validate_bench [SECONDS]
 */
#include <stdio.h>
#include <time.h>

#include "chain_fixture.h"

#define CHAINS 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds to check n interleaved strips of 64 rows (two ranks), best of 3. */
static double overlap_strips(u32 n, int *ret)
{
	struct tplan_chain_span *s = calloc(n, sizeof(*s));
	struct tplan_chain_reject why;
	double best = 1e30, t0;
	const u64 w = 64;
	u32 i, trial;

	*ret = -ENOMEM;
	if (!s)
		return 0;
	for (trial = 0; trial < 3; trial++) {
		for (i = 0; i < n; i++)
			s[i] = (struct tplan_chain_span) {
				.start = i * w, .width = w, .pitch = n * w, .rows = 64,
				.rank = i % 2, .chain = i, .packet = 1,
			};
		t0 = now();
		*ret = tplan_chain_check_overlap(s, n, &why);
		t0 = now() - t0;
		best = t0 < best ? t0 : best;
	}
	free(s);
	return best;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	struct tplan_sdma_limits lim;
	struct tplan_chain_env env[CHAINS];
	struct tplan_chain_reject why;
	struct fx_chain c[CHAINS];
	u64 packets = 0, bytes = 0, passes, p;
	double t0, t_val, t_full, t_cpy, best_val = 1e30, best_full = 1e30, best_cpy = 1e30;
	unsigned char *src, *dst;
	u32 sink = 0, fast = 0;
	int failed = 0;
	u32 i, t, trial, off;

	tplan_sdma_limits_init(&lim, TPLAN_SDMA_IP_4_4_2, 0);
	for (i = 0; i < CHAINS; i++) {
		fx_env(&env[i], &lim, 1, 2, i);
		fx_chain_init(&c[i], 1 << 14);
		if (i % 2) {
			/* 128 x 256 bf16 tiles of an 8192-column matrix */
			fx_poll(&c[i], &env[i]);
			for (t = 0; t < 64; t++)
				fx_tile(&c[i], &env[i], 8192, 1, (t % 32) * 256, i * 256 + (t / 32) * 128,
					256, 128);
			fx_atomic(&c[i], &env[i]);
		} else {
			/* a 256 MiB row block in 4 MiB copies */
			fx_linear_chain(&c[i], &env[i], (u64)i << 28, 1u << 28);
		}
		if (c[i].err || tplan_chain_validate(c[i].dw, c[i].ndw, i, &env[i], &why)) {
			fprintf(stderr, "chain %u does not validate (rule %u)\n", i, why.rule);
			return 1;
		}
		fast += tplan_chain_fast_accept(c[i].dw, c[i].ndw, &env[i]);
		packets += c[i].packets;
		bytes += c[i].ndw * sizeof(u32);
	}

	/* enough passes for about secs / 10 per trial */
	t0 = now();
	for (passes = 0; now() - t0 < secs / 10; passes++)
		for (i = 0; i < CHAINS; i++)
			sink += tplan_chain_validate(c[i].dw, c[i].ndw, i, &env[i], &why);
	src = malloc(bytes);
	dst = malloc(bytes);
	if (!src || !dst)
		return 1;
	for (off = 0, i = 0; i < CHAINS; i++) {
		memcpy(src + off, c[i].dw, c[i].ndw * sizeof(u32));
		off += c[i].ndw * sizeof(u32);
	}

	/* interleaved trials, best of each: both see the same machine state */
	for (trial = 0; trial < 5; trial++) {
		t0 = now();
		for (p = 0; p < passes; p++)
			for (i = 0; i < CHAINS; i++)
				sink += tplan_chain_validate(c[i].dw, c[i].ndw, i, &env[i], &why);
		t_val = now() - t0;
		t0 = now();
		for (p = 0; p < passes; p++)
			for (i = 0; i < CHAINS; i++)
				sink += tplan_chain_validate_full(c[i].dw, c[i].ndw, i, &env[i], &why);
		t_full = now() - t0;
		t0 = now();
		for (p = 0; p < passes; p++) {
			src[p % bytes] ^= 1;	/* a fresh copy each pass */
			memcpy(dst, src, bytes);
			sink += dst[p % bytes];
		}
		t_cpy = now() - t0;
		best_val = t_val < best_val ? t_val : best_val;
		best_full = t_full < best_full ? t_full : best_full;
		best_cpy = t_cpy < best_cpy ? t_cpy : best_cpy;
	}

	printf("chains per pass:   %u (%llu packets, %llu bytes), %llu passes per trial, best of 5\n",
	       CHAINS, (unsigned long long)packets, (unsigned long long)bytes,
	       (unsigned long long)passes);
	printf("fast accept path:  takes %u of %u chains\n", fast, CHAINS);
	printf("validate:          %.3g packets/s (%.1f MB/s of chain)\n",
	       packets * passes / best_val, bytes * passes / best_val / 1e6);
	printf("full walk alone:   %.3g packets/s (%.1f MB/s of chain)\n",
	       packets * passes / best_full, bytes * passes / best_full / 1e6);
	printf("memcpy same bytes: %.1f MB/s\n", bytes * passes / best_cpy / 1e6);
	printf("ratio:             validation takes %.1fx the time of memcpy of the same bytes"
	       " (the full walk alone %.1fx)\n", best_val / best_cpy, best_full / best_cpy);
	for (i = 8192; i <= 131072; i *= 4) {
		int ret;
		double t = overlap_strips(i, &ret);

		printf("overlap check:     %6u interleaved strips (2 ranks, 64 rows each): %.3f s%s\n",
		       i, t, ret ? " (FAILED)" : "");
		failed |= ret != 0;
	}
	for (i = 0; i < CHAINS; i++)
		fx_chain_free(&c[i]);
	free(src);
	free(dst);
	/* the results feed the exit status, so no pass is optimised away */
	return sink == 0xffffffffu || failed;
}
