// SPDX-License-Identifier: MIT
/*
 * Host put and quiet on the (this rank -> peer) queues, and their state.
 */
#include <errno.h>

#include "libtplan.h"
#include "libtplan_priv.h"

static int put(struct tplan_ctx *ctx, unsigned int peer, uint64_t src_off, uint64_t dst_off,
	       uint64_t len, uint32_t flags, uint64_t signal_off)
{
	struct tplan_put p = {
		.size = sizeof(p),
		.flags = flags,
		.peer = peer,
		.src_offset = src_off,
		.dst_offset = dst_off,
		.length = len,
		.signal_offset = signal_off,
	};

	return tplan_ioctl(ctx, TPLAN_IOC_PUT, &p, "TPLAN_IOC_PUT");
}

int tplan_put(struct tplan_ctx *ctx, unsigned int peer, uint64_t src_off, uint64_t dst_off,
	      uint64_t len)
{
	return put(ctx, peer, src_off, dst_off, len, 0, 0);
}

int tplan_put_signal(struct tplan_ctx *ctx, unsigned int peer, uint64_t src_off,
		     uint64_t dst_off, uint64_t len, uint64_t signal_off)
{
	return put(ctx, peer, src_off, dst_off, len, TPLAN_PUT_SIGNAL, signal_off);
}

int tplan_quiet(struct tplan_ctx *ctx, unsigned int peer, uint32_t timeout_ms)
{
	struct tplan_quiet q = { .size = sizeof(q), .peer = peer, .timeout_ms = timeout_ms };

	return tplan_ioctl(ctx, TPLAN_IOC_QUIET, &q, "TPLAN_IOC_QUIET");
}

int tplan_queue_flush(struct tplan_ctx *ctx, unsigned int peer, uint32_t timeout_ms)
{
	struct tplan_quiet q = {
		.size = sizeof(q), .peer = peer, .timeout_ms = timeout_ms,
		.flags = TPLAN_QUIET_OPEN_GATES,
	};

	return tplan_ioctl(ctx, TPLAN_IOC_QUIET, &q, "TPLAN_IOC_QUIET (open gates)");
}

int tplan_queue_info(struct tplan_ctx *ctx, unsigned int peer, struct tplan_queue_info *info)
{
	*info = (struct tplan_queue_info) { .size = sizeof(*info), .peer = peer };
	return tplan_ioctl(ctx, TPLAN_IOC_QUEUE_INFO, info, "TPLAN_IOC_QUEUE_INFO");
}
