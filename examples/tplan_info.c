// SPDX-License-Identifier: MIT
/*
 * tplan-info: open /dev/tplan and print what the module can do.
 */
#include <stdio.h>
#include <string.h>

#include "libtplan.h"

int main(void)
{
	struct tplan_info info;
	struct tplan_ctx *ctx;
	int ret;

	ret = tplan_ctx_open(&ctx, NULL);
	if (ret) {
		fprintf(stderr, "tplan-info: cannot open %s: %s\n", TPLAN_DEVICE_PATH, strerror(-ret));
		return 1;
	}
	ret = tplan_query_info(ctx, &info);
	if (ret) {
		fprintf(stderr, "tplan-info: %s\n", tplan_ctx_error(ctx));
		tplan_ctx_close(ctx);
		return 1;
	}
	printf("libtplan %s, module ABI %u\n", tplan_version(), info.abi_version);
	printf("engines:%s%s\n", info.engines & TPLAN_ENGINE_SOFT ? " soft" : "",
	       info.engines & TPLAN_ENGINE_KFD ? " kfd" : "");
	printf("ring size: %u bytes, prepared copies may hold %u%% of it (%u bytes)\n",
	       info.ring_size, info.prep_limit_pct,
	       (unsigned int)((unsigned long long)info.ring_size * info.prep_limit_pct / 100));
	printf("largest group: %u ranks\n", info.max_world_size);
	printf("largest COPY_LINEAR: SDMA 4.4.0 (MI200) %u bytes, SDMA 4.4.2 (MI300) %u bytes\n",
	       info.max_copy_bytes_sdma440, info.max_copy_bytes_sdma442);
	tplan_ctx_close(ctx);
	return 0;
}
