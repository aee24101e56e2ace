// SPDX-License-Identifier: GPL-2.0
/*
 * The prepared-copy budget (ARCHITECTURE §3): prepared chains whose gate
 * FENCE (the module's, right after the POLL) has not run may hold at most
 * ring_size * prep_limit / 100 bytes of a queue, each charged its own
 * bytes and its FENCE's.  Filling it exactly works; one chain more is
 * ENOSPC with nothing queued; put and quiet are EBUSY while chains wait
 * and work again once their gates opened and the engine passed them.
 */
#include <stdio.h>

#include "tplan_selftest.h"
#include "tplan_sdma.h"
#include "tplan_chain.h"

#define HEAP (1U << 20)
#define READY_OFF 0		/* the ready gate, in this rank's heap */
#define ARRIVAL_OFF 64		/* the arrival gate, in the peer's heap */
#define DATA_OFF 4096
#define SMALL_DW (TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW)
#define BATCH 16384		/* chains per submit */
#define FENCE_DW (TPLAN_CHAIN_FENCE_BYTES / 4)
#define CHARGE(ndw) ((ndw) * 4 + TPLAN_CHAIN_FENCE_BYTES)	/* bytes a chain holds */

FIXTURE(budget) {
	struct tplan_test_group g;
};

FIXTURE_SETUP(budget)
{
	int fd, ret;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	ret = tplan_test_group_setup(&self->g, 2, HEAP, 0);
	if (ret && self->g.ctx)
		TH_LOG("%s", tplan_ctx_error(self->g.ctx));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(budget)
{
	tplan_test_group_teardown(&self->g);
}

/*
 * One chain to peer 1: POLL(ready gate >= ref), linear copies and 2D
 * copies of a few bytes at DATA_OFF, ATOMIC ADD64(arrival gate, 1).
 * Returns its dword count.
 */
static int chain_build(struct tplan_ctx *ctx, uint32_t *dw, uint32_t room, unsigned int linear,
		       unsigned int windows)
{
	uint64_t own = tplan_heap_devaddr(ctx, 0), peer = tplan_heap_devaddr(ctx, 1);
	struct tplan_sdma_poll_regmem poll = {
		.addr = own + READY_OFF, .ref = 0, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear copy = {
		.src = own + DATA_OFF, .dst = peer + DATA_OFF, .bytes = 64,
	};
	struct tplan_sdma_copy_sub_window sw = {
		.src = { .addr = own + DATA_OFF + 1024, .pitch = 64, .slice_pitch = 1 },
		.dst = { .addr = peer + DATA_OFF + 1024, .pitch = 64, .slice_pitch = 1 },
		.rect_x = 16, .rect_y = 2, .rect_z = 1, .elem_size_log2 = 0,
	};
	struct tplan_sdma_atomic add = {
		.addr = peer + ARRIVAL_OFF, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	int n = 0, r;
	unsigned int i;

	r = tplan_sdma_encode_poll_regmem(dw, room, &poll);
	if (r < 0)
		return r;
	n += r;
	for (i = 0; i < linear; i++) {
		r = tplan_sdma_encode_copy_linear(dw + n, room - n, &copy);
		if (r < 0)
			return r;
		n += r;
	}
	for (i = 0; i < windows; i++) {
		r = tplan_sdma_encode_copy_sub_window(dw + n, room - n, &sw);
		if (r < 0)
			return r;
		n += r;
	}
	r = tplan_sdma_encode_atomic(dw + n, room - n, &add);
	if (r < 0)
		return r;
	return n + r;
}

/* Submit nchains chains laid out back to back in dw; 0 or -errno. */
static int submit(struct tplan_ctx *ctx, const uint32_t *dw, const uint32_t *ndw,
		  uint32_t nchains, struct tplan_chain_reject *reject)
{
	struct tplan_chain_desc *d = calloc(nchains, sizeof(*d));
	struct tplan_chain_submit s = {
		.size = sizeof(s), .peer = 1, .nchains = nchains,
		.chains = (uintptr_t)d, .dwords = (uintptr_t)dw,
	};
	uint32_t i;
	int ret;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < nchains; i++) {
		d[i] = (struct tplan_chain_desc) {
			.ndw = ndw[i], .ref = 1, .ready_offset = READY_OFF,
			.arrival_offset = ARRIVAL_OFF,
		};
		s.ndw += ndw[i];
	}
	ret = tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_CHAIN_SUBMIT, &s);
	if (reject)
		*reject = s.reject;
	free(d);
	return ret;
}

/* Wait until the engine passed every POLL: nothing charged. */
static int wait_uncharged(struct tplan_ctx *ctx, unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;
	struct tplan_queue_info qi;
	int ret;

	for (;;) {
		ret = tplan_queue_info(ctx, 1, &qi);
		if (ret)
			return ret;
		if (!qi.prep_charged)
			return 0;
		if (tplan_now_ms() > end)
			return -ETIMEDOUT;
		tplan_sleep_ms(5);
	}
}

static void open_gate(struct tplan_ctx *ctx)
{
	__atomic_store_n((uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + READY_OFF), 1,
			 __ATOMIC_RELEASE);
}

static uint64_t arrivals(struct tplan_ctx *ctx)
{
	return __atomic_load_n((uint64_t *)((char *)tplan_heap_ptr(ctx, 1) + ARRIVAL_OFF),
			       __ATOMIC_ACQUIRE);
}

/*
 * Chains whose charges add up to exactly the limit: small ones of SMALL_DW
 * and one last chain with one 2D copy (13 dwords) and k linear ones (7
 * each), k picked so the charges meet the target exactly (7 and a small
 * chain's charge in dwords have no common factor).
 */
TEST_F_TIMEOUT(budget, fill_exactly_then_one_chain_more_is_enospc, 240)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi, after;
	struct tplan_chain_reject reject;
	uint32_t target, last, k, nsmall, nchains, i, at, done, n, words;
	uint32_t *dw, *ndw, small[SMALL_DW];
	const uint32_t m = 1;
	int len;

	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_LT(0, qi.prep_limit);
	/* Charges are whole dwords: the limit is reached exactly if it is one. */
	target = qi.prep_limit / 4;
	for (k = 1; k <= SMALL_DW + FENCE_DW; k++) {
		last = 14 + 13 * m + 7 * k + FENCE_DW;
		if (target >= last && (target - last) % (SMALL_DW + FENCE_DW) == 0)
			break;
	}
	ASSERT_GE(SMALL_DW + FENCE_DW, k);
	nsmall = (target - last) / (SMALL_DW + FENCE_DW);
	nchains = nsmall + 1;
	words = target - nchains * FENCE_DW;	/* the chains' own dwords */

	dw = malloc((size_t)words * 4);
	ndw = malloc((size_t)nchains * 4);
	ASSERT_TRUE(dw && ndw);
	for (i = 0, at = 0; i < nsmall; i++) {
		len = chain_build(ctx, dw + at, words - at, 1, 0);
		ASSERT_EQ(SMALL_DW, len);
		ndw[i] = (uint32_t)len;
		at += (uint32_t)len;
	}
	len = chain_build(ctx, dw + at, words - at, k, m);
	ASSERT_EQ(14 + 7 * k + 13 * m, len);
	ndw[nsmall] = (uint32_t)len;
	at += (uint32_t)len;
	ASSERT_EQ(words, at);

	/* In batches (the ioctl takes at most so many chains); all accepted. */
	for (i = 0, done = 0; i < nchains; i += n) {
		uint32_t batch = 0, j;

		n = nchains - i < BATCH ? nchains - i : BATCH;
		for (j = 0; j < n; j++)
			batch += ndw[i + j];
		ASSERT_EQ(0, submit(ctx, dw + done, ndw + i, n, &reject)) {
			TH_LOG("batch at chain %u: rule %u, chain %u, packet %u", i, reject.rule,
			       reject.chain, reject.packet);
		}
		done += batch;
	}
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(target * 4, qi.prep_charged);
	ASSERT_EQ(qi.prep_limit & ~3U, qi.prep_charged);

	/* The smallest chain there is, one more: refused, nothing queued. */
	ASSERT_EQ(SMALL_DW, chain_build(ctx, small, SMALL_DW, 1, 0));
	n = SMALL_DW;
	ASSERT_EQ(-ENOSPC, submit(ctx, small, &n, 1, NULL));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &after));
	ASSERT_EQ(qi.wptr, after.wptr);
	ASSERT_EQ(qi.prep_charged, after.prep_charged);

	/* Open the gate: the engine passes every POLL, the charge drains. */
	open_gate(ctx);
	ASSERT_EQ(0, wait_uncharged(ctx, 200000));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, 200000));
	ASSERT_EQ(nchains, arrivals(ctx));
	/* And the budget is whole again. */
	ASSERT_EQ(0, submit(ctx, small, &n, 1, NULL));
	ASSERT_EQ(0, wait_uncharged(ctx, 20000));
	free(dw);
	free(ndw);
}

/*
 * A submit that would cross the limit is refused whole: none of its chains
 * is queued or charged, though some would have fit.
 */
TEST_F_TIMEOUT(budget, crossing_submit_is_enospc_and_queues_nothing, 240)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi, after;
	uint32_t nfill, nover, i, n, *dw, *ndw;

	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	nfill = qi.prep_limit / 2 / CHARGE(SMALL_DW);
	dw = malloc((size_t)TPLAN_CHAIN_SUBMIT_MAX * SMALL_DW * 4);
	ndw = malloc((size_t)TPLAN_CHAIN_SUBMIT_MAX * 4);
	ASSERT_TRUE(dw && ndw);
	for (i = 0; i < TPLAN_CHAIN_SUBMIT_MAX; i++) {
		ASSERT_EQ(SMALL_DW, chain_build(ctx, dw + i * SMALL_DW, SMALL_DW, 1, 0));
		ndw[i] = SMALL_DW;
	}
	/* Half the budget, accepted. */
	for (i = 0; i < nfill; i += n) {
		n = nfill - i < BATCH ? nfill - i : BATCH;
		ASSERT_EQ(0, submit(ctx, dw, ndw, n, NULL));
	}
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(nfill * CHARGE(SMALL_DW), qi.prep_charged);

	/* One chain more than the rest of the budget holds, in one submit. */
	nover = (qi.prep_limit - qi.prep_charged) / CHARGE(SMALL_DW) + 1;
	ASSERT_GE(TPLAN_CHAIN_SUBMIT_MAX, nover);
	ASSERT_GE(TPLAN_CHAIN_MAX_DWORDS * 4ULL, (uint64_t)nover * SMALL_DW) {
		TH_LOG("a prep_limit of %u needs a submit over the size cap", qi.prep_limit);
	}
	ASSERT_EQ(-ENOSPC, submit(ctx, dw, ndw, nover, NULL));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &after));
	ASSERT_EQ(qi.wptr, after.wptr);
	ASSERT_EQ(qi.prep_charged, after.prep_charged);
	/* One chain fewer fits. */
	ASSERT_EQ(0, submit(ctx, dw, ndw, nover - 1, NULL));

	open_gate(ctx);
	ASSERT_EQ(0, wait_uncharged(ctx, 200000));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, 200000));
	ASSERT_EQ(nfill + nover - 1, arrivals(ctx));
	free(dw);
	free(ndw);
}

/* While a prepared chain waits on its gate, put and quiet are EBUSY. */
TEST_F(budget, put_and_quiet_ebusy_while_prepared)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	unsigned char *src = tplan_heap_ptr(ctx, 0), *dst = tplan_heap_ptr(ctx, 1);
	struct tplan_queue_info qi, after;
	uint32_t dw[SMALL_DW], n = SMALL_DW;

	memset(src + DATA_OFF, 0x42, 64);
	ASSERT_EQ(SMALL_DW, chain_build(ctx, dw, SMALL_DW, 1, 0));
	ASSERT_EQ(0, submit(ctx, dw, &n, 1, NULL));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(CHARGE(SMALL_DW), qi.prep_charged);

	ASSERT_EQ(-EBUSY, tplan_put(ctx, 1, 0, 8192, 64));
	ASSERT_EQ(-EBUSY, tplan_put_signal(ctx, 1, 0, 8192, 64, 16384));
	ASSERT_EQ(-EBUSY, tplan_quiet(ctx, 1, 1000));
	/* Refused without queueing anything. */
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &after));
	ASSERT_EQ(qi.wptr, after.wptr);
	/* The gate is closed: nothing was copied. */
	ASSERT_EQ(0, dst[DATA_OFF]);
	ASSERT_EQ(0, arrivals(ctx));

	open_gate(ctx);
	ASSERT_EQ(0, wait_uncharged(ctx, 20000));
	ASSERT_EQ(0, tplan_put(ctx, 1, 0, 8192, 64));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0x42, dst[DATA_OFF + 63]);
	ASSERT_EQ(1, arrivals(ctx));
}

/*
 * A raw chain whose producer never comes: its gate stays shut, and put
 * and quiet are EBUSY for good.  tplan_queue_flush() opens it: the chain
 * runs as its chunk stands, the charge goes, and the queue is the host's
 * again.  A plan's chains on the queue are not a flush's to open.
 */
TEST_F(budget, flush_releases_raw_chains_whose_producer_never_comes)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	unsigned char *src = tplan_heap_ptr(ctx, 0), *dst = tplan_heap_ptr(ctx, 1);
	uint32_t dw[SMALL_DW], n = SMALL_DW;
	struct tplan_queue_info qi;

	memset(src + DATA_OFF, 0x5a, 64);
	ASSERT_EQ(SMALL_DW, chain_build(ctx, dw, SMALL_DW, 1, 0));
	ASSERT_EQ(0, submit(ctx, dw, &n, 1, NULL));
	ASSERT_EQ(-EBUSY, tplan_quiet(ctx, 1, 1000));
	ASSERT_EQ(0, tplan_queue_flush(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(0, qi.prep_charged);
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	/* Sent as its chunk stood, and signalled. */
	ASSERT_EQ(0x5a, dst[DATA_OFF + 63]);
	ASSERT_EQ(1, arrivals(ctx));
	/* The gate now holds the chain's round, as a mark would have left it. */
	ASSERT_EQ(1, *(volatile uint64_t *)(src + READY_OFF));
	ASSERT_EQ(0, tplan_put(ctx, 1, 0, 8192, 64));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
}

/* A refused chain reports its rule; nothing is charged or queued. */
TEST_F(budget, invalid_chain_is_einval_with_reason)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi, after;
	struct tplan_chain_reject reject;
	uint32_t dw[SMALL_DW], n = SMALL_DW;

	ASSERT_EQ(SMALL_DW, chain_build(ctx, dw, SMALL_DW, 1, 0));
	dw[TPLAN_SDMA_POLL_REF_DW] = 5;	/* userspace must leave the round to the kernel */
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(-EINVAL, submit(ctx, dw, &n, 1, &reject));
	ASSERT_EQ(TPLAN_CHAIN_R_POLL_REF, reject.rule);
	ASSERT_EQ(0, reject.chain);
	ASSERT_EQ(0, reject.packet);
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &after));
	ASSERT_EQ(qi.wptr, after.wptr);
	ASSERT_EQ(0, after.prep_charged);
}

TEST_HARNESS_MAIN
