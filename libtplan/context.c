// SPDX-License-Identifier: MIT
/*
 * The context: one open file of /dev/tplan, its capabilities and the
 * detail of its last error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "libtplan.h"
#include "libtplan_priv.h"
#include "kfd.h"
#include "tplan_sdma.h"

#define STR_(x) #x
#define STR(x) STR_(x)

const char *tplan_version(void)
{
	return STR(LIBTPLAN_VERSION_MAJOR) "." STR(LIBTPLAN_VERSION_MINOR) "."
		STR(LIBTPLAN_VERSION_PATCH);
}

int tplan_version_major(void)
{
	return LIBTPLAN_VERSION_MAJOR;
}

int tplan_version_minor(void)
{
	return LIBTPLAN_VERSION_MINOR;
}

int tplan_set_error(struct tplan_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	if (ctx) {
		va_start(ap, fmt);
		vsnprintf(ctx->error, sizeof(ctx->error), fmt, ap);
		va_end(ap);
	}
	return err;
}

int tplan_ioctl(struct tplan_ctx *ctx, unsigned long request, void *arg, const char *what)
{
	ctx->ioctls++;
	if (ioctl(ctx->fd, request, arg) == 0)
		return 0;
	return tplan_set_error(ctx, -errno, "%s: %s", what, strerror(errno));
}

int tplan_ctx_open(struct tplan_ctx **ctxp, const char *path)
{
	struct tplan_ctx *ctx;
	int ret;

	*ctxp = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;

	ctx->fd = open(path ? path : TPLAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0) {
		ret = -errno;
		free(ctx);
		return ret;
	}

	ret = tplan_query_info(ctx, &ctx->info);
	if (ret)
		goto err_close;
	if (ctx->info.abi_version != TPLAN_ABI_VERSION) {
		ret = -EPROTO;
		goto err_close;
	}
	*ctxp = ctx;
	return 0;

err_close:
	close(ctx->fd);
	free(ctx);
	return ret;
}

void tplan_ctx_close(struct tplan_ctx *ctx)
{
	if (!ctx)
		return;
	/* Mappings first: closing the file is what leaves the group. */
	tplan_heaps_unmap(ctx);
	close(ctx->fd);
	free(ctx);
}

int tplan_ctx_fd(const struct tplan_ctx *ctx)
{
	return ctx->fd;
}

int tplan_query_info(struct tplan_ctx *ctx, struct tplan_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	ret = tplan_ioctl(ctx, TPLAN_IOC_INFO, info, "TPLAN_IOC_INFO");
	/* The engines present: the module can drive KFD, but is there one? */
	if (!ret && (info->engines & TPLAN_ENGINE_KFD) && !tplan_kfd_present())
		info->engines &= ~TPLAN_ENGINE_KFD;
	return ret;
}

void tplan_ctx_set_timeout(struct tplan_ctx *ctx, uint32_t timeout_ms)
{
	ctx->timeout_ms = timeout_ms;
}

uint32_t tplan_ctx_timeout(const struct tplan_ctx *ctx)
{
	return ctx->timeout_ms;
}

int tplan_ctx_set_rounds_ahead(struct tplan_ctx *ctx, uint32_t rounds)
{
	if (rounds < 1 || rounds > TPLAN_PLAN_DEPTH_MAX)
		return tplan_set_error(ctx, -EINVAL,
				       "tplan_ctx_set_rounds_ahead: %u rounds, 1..%u", rounds,
				       TPLAN_PLAN_DEPTH_MAX);
	ctx->rounds_ahead = rounds;
	return 0;
}

uint64_t tplan_ctx_ioctls(const struct tplan_ctx *ctx)
{
	return ctx->ioctls;
}

const char *tplan_ctx_error(const struct tplan_ctx *ctx)
{
	return ctx->error;
}

uint32_t tplan_ctx_max_copy_bytes(const struct tplan_ctx *ctx)
{
	uint32_t max = ctx->sdma_ip == TPLAN_SDMA_442 ? ctx->info.max_copy_bytes_sdma442 :
							ctx->info.max_copy_bytes_sdma440;

	/* a module that predates the field: the count field's own limit */
	return max ? max : TPLAN_SDMA_COPY_MAX_BYTES;
}
