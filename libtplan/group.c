// SPDX-License-Identifier: MIT
/*
 * Groups: joining (the engine, and mapping every rank's heap), and the
 * kernel's collectives, barrier and all-gather.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libtplan.h"
#include "libtplan_priv.h"

void tplan_heaps_unmap(struct tplan_ctx *ctx)
{
	uint32_t r;

	/* The KFD engine's queues go before the heaps they copy between. */
	tplan_kfd_leave(ctx, ctx->joined);
	if (!ctx->heaps)
		return;
	for (r = 0; r < ctx->world_size; r++)
		if (ctx->heaps[r].ptr)
			munmap(ctx->heaps[r].ptr, ctx->heap_size);
	free(ctx->heaps);
	ctx->heaps = NULL;
	ctx->joined = 0;
}

/* Map rank r's heap; fills ctx->heaps[r]. */
static int heap_map(struct tplan_ctx *ctx, uint32_t r)
{
	struct tplan_heap_info hi = { .size = sizeof(hi), .rank = r };
	void *p;
	int ret;

	ret = tplan_ioctl(ctx, TPLAN_IOC_HEAP_INFO, &hi, "TPLAN_IOC_HEAP_INFO");
	if (ret)
		return ret;
	if (hi.heap_size != ctx->heap_size)
		return tplan_set_error(ctx, -EPROTO,
				       "heap of rank %u has %llu bytes, the group %llu", r,
				       (unsigned long long)hi.heap_size,
				       (unsigned long long)ctx->heap_size);
	p = mmap(NULL, hi.heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->fd,
		 (off_t)hi.mmap_offset);
	if (p == MAP_FAILED)
		return tplan_set_error(ctx, -errno, "mmap of rank %u's heap: %s", r,
				       strerror(errno));
	ctx->heaps[r].ptr = p;
	ctx->heaps[r].devaddr = hi.heap_base;
	/* The same on every rank. */
	if (r == ctx->rank)
		ctx->gate_area = hi.gate_area_offset < hi.heap_size ? hi.gate_area_offset :
								       hi.heap_size;
	return 0;
}

/*
 * The engine a join asks for: the caller's; else TPLAN_ENGINE ("soft" or
 * "kfd"); else KFD where the module drives it and /dev/kfd opens
 * (tplan_query_info() reports KFD only then), else the software engine.
 */
static int engine_choose(struct tplan_ctx *ctx, uint32_t asked, uint32_t *engine)
{
	const char *env = getenv("TPLAN_ENGINE");

	if (asked)
		*engine = asked;
	else if (env && !strcmp(env, "soft"))
		*engine = TPLAN_ENGINE_SOFT;
	else if (env && !strcmp(env, "kfd"))
		*engine = TPLAN_ENGINE_KFD;
	else if (env && *env)
		return tplan_set_error(ctx, -EINVAL, "tplan_ctx_join: TPLAN_ENGINE=%s: soft or kfd",
				       env);
	else
		*engine = ctx->info.engines & TPLAN_ENGINE_KFD ? TPLAN_ENGINE_KFD :
								 TPLAN_ENGINE_SOFT;
	return 0;
}

int tplan_ctx_join(struct tplan_ctx *ctx, const struct tplan_join_params *params)
{
	struct tplan_group_join join = {
		.size = sizeof(join),
		.key = params->key,
		.world_size = params->world_size,
		.rank = params->rank,
		.heap_size = params->heap_size,
		.sdma_ip = params->sdma_ip,
		.timeout_ms = params->timeout_ms,
	};
	struct tplan_kfd_rank *kfd = NULL;
	uint32_t r;
	int ret;

	if (ctx->joined)
		return tplan_set_error(ctx, -EALREADY, "tplan_ctx_join: already rank %u of %u",
				       ctx->rank, ctx->world_size);
	ret = engine_choose(ctx, params->engine, &join.engine);
	if (ret)
		return ret;
	if (join.engine == TPLAN_ENGINE_KFD) {
		ret = tplan_kfd_join_prepare(ctx, join.heap_size, join.rank, &join.sdma_ip, &kfd,
					     &join.heap_fd);
		if (ret)
			return ret;
	}
	if (!join.sdma_ip)
		join.sdma_ip = TPLAN_SDMA_440;
	ret = tplan_ioctl(ctx, TPLAN_IOC_GROUP_JOIN, &join, "TPLAN_IOC_GROUP_JOIN");
	if (ret) {
		tplan_kfd_rank_free(kfd);
		return ret;
	}
	/* Only now: a join racing on another thread got EALREADY and left this alone. */
	ctx->kfd = kfd;

	ctx->key = join.key;
	ctx->rank = join.rank;
	ctx->world_size = join.world_size;
	ctx->heap_size = join.heap_size;
	ctx->sdma_ip = join.sdma_ip;
	ctx->engine = join.engine;
	ctx->heaps = calloc(join.world_size, sizeof(*ctx->heaps));
	if (!ctx->heaps) {
		ret = tplan_set_error(ctx, -ENOMEM, "tplan_ctx_join: no memory");
		goto err_unmap;
	}
	if (join.engine == TPLAN_ENGINE_KFD) {
		ret = tplan_kfd_join_attach(ctx, join.timeout_ms);
		if (ret)
			goto err_unmap;
		goto joined;
	}
	for (r = 0; r < join.world_size; r++) {
		ret = heap_map(ctx, r);
		if (ret)
			goto err_unmap;
	}
	if (ctx->heaps[ctx->rank].devaddr != join.heap_base) {
		ret = tplan_set_error(ctx, -EPROTO,
				      "heap base of rank %u: join said %#llx, HEAP_INFO %#llx",
				      ctx->rank, (unsigned long long)join.heap_base,
				      (unsigned long long)ctx->heaps[ctx->rank].devaddr);
		goto err_unmap;
	}
joined:
	ctx->heap_next = 0;
	ctx->joined = 1;
	return 0;

err_unmap:
	tplan_heaps_unmap(ctx);
	return ret;
}

int tplan_ctx_rank(const struct tplan_ctx *ctx)
{
	return ctx->joined ? (int)ctx->rank : -ENOTCONN;
}

int tplan_ctx_world_size(const struct tplan_ctx *ctx)
{
	return ctx->joined ? (int)ctx->world_size : -ENOTCONN;
}

int tplan_ctx_engine(const struct tplan_ctx *ctx)
{
	return ctx->joined ? (int)ctx->engine : -ENOTCONN;
}

int tplan_barrier(struct tplan_ctx *ctx, uint32_t timeout_ms)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = timeout_ms };

	return tplan_ioctl(ctx, TPLAN_IOC_GROUP_BARRIER, &b, "TPLAN_IOC_GROUP_BARRIER");
}

int tplan_all_gather(struct tplan_ctx *ctx, const void *in, size_t bytes, void *out,
		     uint32_t timeout_ms)
{
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag),
		.blob_size = (uint32_t)bytes,
		.timeout_ms = timeout_ms,
		.in = (uintptr_t)in,
		.out = (uintptr_t)out,
	};

	/* Checked here only so that a size_t cannot wrap into a valid u32. */
	if (bytes > TPLAN_ALL_GATHER_MAX)
		return tplan_set_error(ctx, -EINVAL, "tplan_all_gather: %zu bytes > %u",
				       bytes, TPLAN_ALL_GATHER_MAX);
	return tplan_ioctl(ctx, TPLAN_IOC_GROUP_ALL_GATHER, &ag, "TPLAN_IOC_GROUP_ALL_GATHER");
}
