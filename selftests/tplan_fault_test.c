// SPDX-License-Identifier: GPL-2.0
/*
 * The soft engine meets packets it must not execute: each kind of bad
 * packet, injected raw (allow_inject=1), stops its queue in FAULT with the
 * ring offset, first dword and reason of that packet; the queue then
 * refuses work with EIO, other queues carry on, debugfs says the same,
 * and the group still tears down.  A POLL's retries are counted in
 * intervals, as the hardware counts them; a fault ends every plan wait
 * that depends on the queue at once, with EIO and the fault's report.
 * Also: the packets the engine does execute, and the inject ioctl's own
 * contract.
 */
#include <pthread.h>
#include <stdio.h>

#include "tplan_plan_util.h"
#include "tplan_sdma.h"

#define HEAP (1U << 20)
#define WORLD 3

static void group_setup(struct __test_metadata *_metadata, struct tplan_test_group *g)
{
	int fd, ret;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module parameter allow_inject=1");
	ret = tplan_test_group_setup(g, WORLD, HEAP, 0);
	if (ret && g->ctx)
		TH_LOG("%s", tplan_ctx_error(g->ctx));
	ASSERT_EQ(0, ret);
}

/* ---- one bad packet per variant --------------------------------------------- */

enum bad_kind {
	BAD_HEADER,
	BAD_SUB_OP,
	BAD_WRITE_LINEAR,
	BAD_INDIRECT,
	BAD_COPY_RESERVED_BIT,
	BAD_COPY_OUTSIDE_HEAPS,
	BAD_COPY_PAST_HEAP_END,
	BAD_COPY_SRC_OUTSIDE,
	BAD_ATOMIC_MISALIGNED,
	BAD_ATOMIC_OP,
	BAD_POLL_RETRIES,
	BAD_POLL_REGISTER,
	BAD_FENCE_OUTSIDE,
	BAD_TRUNCATED,
};

FIXTURE(bad_packet) {
	struct tplan_test_group g;
};

FIXTURE_VARIANT(bad_packet) {
	enum bad_kind kind;
	uint32_t reason;
};

FIXTURE_VARIANT_ADD(bad_packet, unknown_opcode) { BAD_HEADER, TPLAN_FAULT_BAD_PACKET };
FIXTURE_VARIANT_ADD(bad_packet, unknown_sub_op) { BAD_SUB_OP, TPLAN_FAULT_BAD_PACKET };
FIXTURE_VARIANT_ADD(bad_packet, write_linear) { BAD_WRITE_LINEAR, TPLAN_FAULT_UNSUPPORTED };
FIXTURE_VARIANT_ADD(bad_packet, indirect_buffer) { BAD_INDIRECT, TPLAN_FAULT_UNSUPPORTED };
FIXTURE_VARIANT_ADD(bad_packet, copy_reserved_bit) { BAD_COPY_RESERVED_BIT, TPLAN_FAULT_BAD_PACKET };
FIXTURE_VARIANT_ADD(bad_packet, copy_outside_heaps) { BAD_COPY_OUTSIDE_HEAPS, TPLAN_FAULT_BAD_ADDRESS };
FIXTURE_VARIANT_ADD(bad_packet, copy_past_heap_end) { BAD_COPY_PAST_HEAP_END, TPLAN_FAULT_BAD_ADDRESS };
FIXTURE_VARIANT_ADD(bad_packet, copy_src_outside) { BAD_COPY_SRC_OUTSIDE, TPLAN_FAULT_BAD_ADDRESS };
FIXTURE_VARIANT_ADD(bad_packet, atomic_misaligned) { BAD_ATOMIC_MISALIGNED, TPLAN_FAULT_BAD_ADDRESS };
FIXTURE_VARIANT_ADD(bad_packet, atomic_not_add64) { BAD_ATOMIC_OP, TPLAN_FAULT_UNSUPPORTED };
FIXTURE_VARIANT_ADD(bad_packet, poll_out_of_retries) { BAD_POLL_RETRIES, TPLAN_FAULT_POLL_TIMEOUT };
FIXTURE_VARIANT_ADD(bad_packet, poll_register) { BAD_POLL_REGISTER, TPLAN_FAULT_UNSUPPORTED };
FIXTURE_VARIANT_ADD(bad_packet, fence_outside_heaps) { BAD_FENCE_OUTSIDE, TPLAN_FAULT_BAD_ADDRESS };
/*
 * The batch's done FENCE follows the three dwords and the engine takes it
 * for the copy's rest, as hardware would: a source made of the FENCE's
 * header and address, in no heap.
 */
FIXTURE_VARIANT_ADD(bad_packet, truncated_copy) { BAD_TRUNCATED, TPLAN_FAULT_BAD_ADDRESS };

FIXTURE_SETUP(bad_packet)
{
	group_setup(_metadata, &self->g);
}

FIXTURE_TEARDOWN(bad_packet)
{
	tplan_test_group_teardown(&self->g);
}

/* An address in no heap of the group: past the highest one, with a gap. */
static uint64_t nowhere(struct tplan_ctx *ctx)
{
	uint64_t top = 0, b;
	unsigned int r;

	for (r = 0; r < WORLD; r++) {
		b = tplan_heap_devaddr(ctx, r);
		if (b > top)
			top = b;
	}
	return top + 2 * HEAP;
}

/* The packet of one kind; returns its dword count. */
static int bad_packet_build(struct tplan_ctx *ctx, enum bad_kind kind, uint32_t *dw)
{
	uint64_t b0 = tplan_heap_devaddr(ctx, 0), b1 = tplan_heap_devaddr(ctx, 1);
	struct tplan_sdma_copy_linear copy = { .src = b0, .dst = b1 + 4096, .bytes = 64 };
	struct tplan_sdma_atomic atomic = {
		.addr = b1 + 64, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_sdma_poll_regmem poll = {
		.addr = b0 + 128, .ref = 1, .mask = 0xffffffffu, .func = TPLAN_SDMA_FUNC_EQ,
		.mem_poll = 1, .interval = 1, .retry = 2,
	};
	struct tplan_sdma_fence fence = { .addr = nowhere(ctx), .data = 1 };
	int n;

	memset(dw, 0, 64 * sizeof(*dw));
	switch (kind) {
	case BAD_HEADER:
		dw[0] = 0xff;
		return 1;
	case BAD_SUB_OP:
		n = tplan_sdma_encode_copy_linear(dw, 64, &copy);
		dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_COPY, 2);	/* no such copy */
		return n;
	case BAD_WRITE_LINEAR:
		/* header, address, count - 1 = 0, one data dword */
		dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_WRITE, TPLAN_SDMA_SUB_WRITE_LINEAR);
		dw[1] = tplan_sdma_lo(b1);
		dw[2] = tplan_sdma_hi(b1);
		dw[3] = 0;
		dw[4] = 0xdeadbeef;
		return 5;
	case BAD_INDIRECT:
		dw[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_INDIRECT, 0);
		return TPLAN_SDMA_INDIRECT_DW;
	case BAD_COPY_RESERVED_BIT:
		n = tplan_sdma_encode_copy_linear(dw, 64, &copy);
		dw[2] |= 1;	/* dw2 holds only the swap fields */
		return n;
	case BAD_COPY_OUTSIDE_HEAPS:
		copy.dst = nowhere(ctx);
		return tplan_sdma_encode_copy_linear(dw, 64, &copy);
	case BAD_COPY_PAST_HEAP_END:
		/* Starts inside rank 1's heap, ends 8 bytes past it. */
		copy.dst = b1 + HEAP - 56;
		return tplan_sdma_encode_copy_linear(dw, 64, &copy);
	case BAD_COPY_SRC_OUTSIDE:
		copy.src = b0 - 64;
		return tplan_sdma_encode_copy_linear(dw, 64, &copy);
	case BAD_ATOMIC_MISALIGNED:
		atomic.addr = b1 + 4;
		return tplan_sdma_encode_atomic(dw, 64, &atomic);
	case BAD_ATOMIC_OP:
		atomic.atomic_op = 0;
		return tplan_sdma_encode_atomic(dw, 64, &atomic);
	case BAD_POLL_RETRIES:
		return tplan_sdma_encode_poll_regmem(dw, 64, &poll);
	case BAD_POLL_REGISTER:
		poll.mem_poll = 0;
		poll.addr = 0x1234;
		return tplan_sdma_encode_poll_regmem(dw, 64, &poll);
	case BAD_FENCE_OUTSIDE:
		return tplan_sdma_encode_fence(dw, 64, &fence);
	case BAD_TRUNCATED:
		/* Only the first three dwords of a seven-dword copy arrive. */
		n = tplan_sdma_encode_copy_linear(dw, 64, &copy);
		return n < 0 ? n : 3;
	}
	return -EINVAL;
}

TEST_F(bad_packet, faults_queue_at_its_offset)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi;
	uint32_t dw[64], nop = 0;
	uint64_t at, v;
	char state[32];
	int ndw;

	/* Work first, so the bad packet is not at offset 0. */
	ASSERT_EQ(0, tplan_put(ctx, 1, 0, 0, 100));
	ASSERT_EQ(0, tplan_put_signal(ctx, 1, 0, 256, 100, 512));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	at = qi.wptr;
	ASSERT_LT(0, at);

	ndw = bad_packet_build(ctx, variant->kind, dw);
	ASSERT_LT(0, ndw);
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, (uint32_t)ndw));
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, 10000)) {
		TH_LOG("state %u, rptr %llu, wptr %llu", qi.state,
		       (unsigned long long)qi.rptr, (unsigned long long)qi.wptr);
	}
	EXPECT_EQ(variant->reason, qi.fault_reason);
	EXPECT_EQ(at, qi.fault_offset);
	EXPECT_EQ(dw[0], qi.fault_dword);
	/* rptr says what was fetched, maybe less or more than what ran. */
	EXPECT_GE(qi.wptr, qi.rptr);

	/* The faulted queue takes nothing more. */
	EXPECT_EQ(-EIO, tplan_put(ctx, 1, 0, 0, 64));
	EXPECT_EQ(-EIO, tplan_quiet(ctx, 1, 1000));
	EXPECT_EQ(-EIO, tplan_test_inject(ctx, 1, &nop, 1));

	/* debugfs shows the fault too. */
	if (!access(TPLAN_DEBUGFS, F_OK)) {
		ASSERT_EQ(0, tplan_debugfs_field(self->g.key, 0, 1, "state", state, sizeof(state)));
		EXPECT_EQ(TPLAN_QUEUE_FAULT, strtoul(state, NULL, 0));
		ASSERT_EQ(0, tplan_debugfs_u64(self->g.key, 0, 1, "fault_offset", &v));
		EXPECT_EQ(at, v);
		ASSERT_EQ(0, tplan_debugfs_u64(self->g.key, 0, 1, "fault_dword", &v));
		EXPECT_EQ(dw[0], v);
		ASSERT_EQ(0, tplan_debugfs_u64(self->g.key, 0, 1, "fault_reason", &v));
		EXPECT_EQ(variant->reason, v);
	}

	/* Other queues of the group carry on. */
	memset(tplan_heap_ptr(ctx, 0), 0x3c, 4096);
	ASSERT_EQ(0, tplan_put(ctx, 2, 0, 8192, 4096));
	ASSERT_EQ(0, tplan_quiet(ctx, 2, TPLAN_TEST_TIMEOUT_MS));
	EXPECT_EQ(0x3c, ((unsigned char *)tplan_heap_ptr(ctx, 2))[8192 + 4095]);
}

/* ---- where inside one inject the fault is ---------------------------------------- */

FIXTURE(inject) {
	struct tplan_test_group g;
};

FIXTURE_SETUP(inject)
{
	group_setup(_metadata, &self->g);
}

FIXTURE_TEARDOWN(inject)
{
	tplan_test_group_teardown(&self->g);
}

/* Good packets before the bad one run; the fault names the bad one's offset. */
TEST_F(inject, fault_offset_inside_a_batch)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	uint64_t b1 = tplan_heap_devaddr(ctx, 1);
	struct tplan_sdma_nop nop = { .dwords = 5 };
	struct tplan_sdma_fence fence = { .addr = b1 + 1024, .data = 0x600dcafe };
	struct tplan_queue_info qi;
	uint32_t dw[32];
	uint64_t at;
	int n = 0;

	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	at = qi.wptr;
	n += tplan_sdma_encode_nop(dw + n, 32 - n, &nop);
	n += tplan_sdma_encode_fence(dw + n, 32 - n, &fence);
	dw[n++] = 0xff;			/* the bad one */
	dw[n++] = 0;			/* never reached */
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, (uint32_t)n));
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, 10000));
	EXPECT_EQ(at + (nop.dwords + TPLAN_SDMA_FENCE_DW) * 4, qi.fault_offset);
	EXPECT_EQ(0xff, qi.fault_dword);
	EXPECT_EQ(TPLAN_FAULT_BAD_PACKET, qi.fault_reason);
	/* The fence before it ran. */
	EXPECT_EQ(0x600dcafe, ((volatile uint32_t *)tplan_heap_ptr(ctx, 1))[256]);
}

/* The packets the soft engine executes do what the fact sheet says. */
TEST_F(inject, valid_packets_execute)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	uint64_t b0 = tplan_heap_devaddr(ctx, 0), b1 = tplan_heap_devaddr(ctx, 1);
	unsigned char *h0 = tplan_heap_ptr(ctx, 0), *h1 = tplan_heap_ptr(ctx, 1);
	struct tplan_sdma_fence fence = { .addr = b1 + 64, .data = 0x12345678 };
	struct tplan_sdma_atomic add = {
		.addr = b1 + 128, .src_data = 5, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_sdma_trap trap = { .int_context = 7 };
	struct tplan_sdma_copy_linear copy = { .src = b0 + 4096, .dst = b1 + 8192, .bytes = 3000 };
	/* A 16 x 4 rectangle of 4-byte elements out of a 64-element-wide image. */
	struct tplan_sdma_copy_sub_window sw = {
		.src = { .addr = b0 + 65536, .x = 2, .y = 1, .pitch = 64, .slice_pitch = 64 * 8 },
		.dst = { .addr = b1 + 65536, .x = 0, .y = 0, .pitch = 16, .slice_pitch = 16 * 4 },
		.rect_x = 16, .rect_y = 4, .rect_z = 1, .elem_size_log2 = 2,
	};
	struct tplan_sdma_poll_regmem poll = {
		.addr = b0 + 256, .ref = 3, .mask = 0xffffffffu, .func = TPLAN_SDMA_FUNC_GE,
		.mem_poll = 1, .interval = 1, .retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	struct tplan_queue_info qi;
	uint32_t dw[128], *img = (uint32_t *)(h0 + 65536), *out = (uint32_t *)(h1 + 65536);
	unsigned int i, x, y;
	int n = 0;

	for (i = 0; i < 3000; i++)
		h0[4096 + i] = (unsigned char)(i * 7);
	for (i = 0; i < 64 * 8; i++)
		img[i] = i;
	*(uint64_t *)(h1 + 128) = 10;
	*(uint32_t *)(h0 + 256) = 3;	/* the poll passes at once */
	n += tplan_sdma_encode_poll_regmem(dw + n, 128 - n, &poll);
	n += tplan_sdma_encode_fence(dw + n, 128 - n, &fence);
	n += tplan_sdma_encode_atomic(dw + n, 128 - n, &add);
	n += tplan_sdma_encode_trap(dw + n, 128 - n, &trap);
	n += tplan_sdma_encode_copy_linear(dw + n, 128 - n, &copy);
	n += tplan_sdma_encode_copy_sub_window(dw + n, 128 - n, &sw);
	ASSERT_EQ(TPLAN_SDMA_POLL_DW + TPLAN_SDMA_FENCE_DW + TPLAN_SDMA_ATOMIC_DW +
		  TPLAN_SDMA_TRAP_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_SUB_WINDOW_DW, n);
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, (uint32_t)n));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	/* And the FENCE the module ends every batch with. */
	ASSERT_EQ(6 + 1, qi.packets);

	EXPECT_EQ(0x12345678, *(volatile uint32_t *)(h1 + 64));
	EXPECT_EQ(15, *(volatile uint64_t *)(h1 + 128));
	for (i = 0; i < 3000; i++)
		ASSERT_EQ((unsigned char)(i * 7), h1[8192 + i]);
	EXPECT_EQ(0, h1[8192 + 3000]);
	for (y = 0; y < 4; y++)
		for (x = 0; x < 16; x++)
			ASSERT_EQ((1 + y) * 64 + 2 + x, out[y * 16 + x]) {
				TH_LOG("element (%u, %u)", x, y);
			}
	EXPECT_EQ(0, out[4 * 16]);
}

/* A copy with the heap's last byte as its last byte is inside: no fault. */
TEST_F(inject, copy_to_last_heap_byte_is_fine)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_sdma_copy_linear copy = {
		.src = tplan_heap_devaddr(ctx, 0), .dst = tplan_heap_devaddr(ctx, 1) + HEAP - 64,
		.bytes = 64,
	};
	struct tplan_queue_info qi;
	uint32_t dw[TPLAN_SDMA_COPY_LINEAR_DW];

	memset(tplan_heap_ptr(ctx, 0), 0x77, 64);
	ASSERT_EQ(TPLAN_SDMA_COPY_LINEAR_DW, tplan_sdma_encode_copy_linear(dw, 7, &copy));
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, TPLAN_SDMA_COPY_LINEAR_DW));
	ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	ASSERT_EQ(0x77, ((unsigned char *)tplan_heap_ptr(ctx, 1))[HEAP - 1]);
}

/* A queue stuck in FAULT does not keep its group from closing. */
TEST_F(inject, faulted_group_closes)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi;
	uint32_t bad = 0xff;
	uint64_t t0;

	ASSERT_EQ(0, tplan_test_inject(ctx, 1, &bad, 1));
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, 10000));
	ASSERT_EQ(0, tplan_test_inject(ctx, 2, &bad, 1));
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 2, TPLAN_QUEUE_FAULT, &qi, 10000));
	t0 = tplan_now_ms();
	tplan_test_group_teardown(&self->g);
	ASSERT_GT(10000, tplan_now_ms() - t0);
	if (!access(TPLAN_DEBUGFS, F_OK)) {
		char path[160];

		ASSERT_EQ(-ENOENT, tplan_debugfs_group_dir(self->g.key, path, sizeof(path)));
	}
}

/* ---- the inject ioctl's contract -------------------------------------------- */

/*
 * A POLL on a gate that stays shut, 3 retries of 60 ms: the queue faults
 * after those intervals, not after 3 quick looks while the engine spins.
 */
TEST_F_TIMEOUT(inject, poll_retries_count_intervals_not_looks, 90)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(ctx, 0) + 512, .ref = 1, .mask = 0xffffffffu,
		.func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1, .interval = 60000, .retry = 3,
	};
	struct tplan_queue_info qi;
	uint32_t dw[TPLAN_SDMA_POLL_DW];
	uint64_t t0;

	ASSERT_EQ(TPLAN_SDMA_POLL_DW, tplan_sdma_encode_poll_regmem(dw, ARRAY_SIZE(dw), &poll));
	t0 = tplan_now_ms();
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, TPLAN_SDMA_POLL_DW));
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, 60000));
	EXPECT_EQ(TPLAN_FAULT_POLL_TIMEOUT, qi.fault_reason);
	/* Never early: 3 intervals of 60 ms have gone by at least. */
	EXPECT_LE(180, tplan_now_ms() - t0);
}

/*
 * A write that needs ring space times out only when the engine frees none
 * for the whole timeout (TPLAN_TIMEOUT_DEFAULT_MS, 30 s), not when it
 * takes longer than that in all.  The ring holds POLL(gate A), 3 MiB of
 * NOPs, POLL(gate B), NOPs up to nearly full; a submit of 3.5 MiB of
 * chains needs both gates open.  A opens 15 s in, B 35 s in: the submit
 * waits 35 s in all, never 30 s without progress, and succeeds.
 */
#define STEP_GATE_A (HEAP / 2)
#define STEP_GATE_B (HEAP / 2 + 64)
#define STEP_READY (HEAP / 2 + 128)
#define STEP_ARRIVAL (HEAP / 2 + 192)
#define STEP_CHAIN_DW (TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW)

struct step_submit {
	struct tplan_ctx *ctx;
	uint32_t nchains;
	int ret;
};

static void *step_submit_thread(void *arg)
{
	struct step_submit *a = arg;
	uint64_t own = tplan_heap_devaddr(a->ctx, 0), peer = tplan_heap_devaddr(a->ctx, 1);
	struct tplan_sdma_poll_regmem poll = {
		.addr = own + STEP_READY, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear copy = { .src = own + 4096, .dst = peer + 4096, .bytes = 64 };
	struct tplan_sdma_atomic add = {
		.addr = peer + STEP_ARRIVAL, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_chain_desc *d = calloc(a->nchains, sizeof(*d));
	uint32_t *dw = calloc((size_t)a->nchains * STEP_CHAIN_DW, 4), i, n;
	struct tplan_chain_submit cs = {
		.size = sizeof(cs), .peer = 1, .nchains = a->nchains,
		.chains = (uintptr_t)d, .dwords = (uintptr_t)dw,
	};

	a->ret = -ENOMEM;
	if (!d || !dw)
		goto out;
	for (i = 0; i < a->nchains; i++) {
		n = i * STEP_CHAIN_DW;
		n += tplan_sdma_encode_poll_regmem(dw + n, STEP_CHAIN_DW, &poll);
		n += tplan_sdma_encode_copy_linear(dw + n, STEP_CHAIN_DW, &copy);
		n += tplan_sdma_encode_atomic(dw + n, STEP_CHAIN_DW, &add);
		d[i] = (struct tplan_chain_desc) {
			.ndw = STEP_CHAIN_DW, .ref = 1, .ready_offset = STEP_READY,
			.arrival_offset = STEP_ARRIVAL,
		};
	}
	cs.ndw = a->nchains * STEP_CHAIN_DW;
	a->ret = tplan_test_ioctl(tplan_ctx_fd(a->ctx), TPLAN_IOC_CHAIN_SUBMIT, &cs);
out:
	free(d);
	free(dw);
	return NULL;
}

static int step_poll(struct tplan_ctx *ctx, uint64_t gate_off)
{
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(ctx, 0) + gate_off, .ref = 1, .mask = 0xffffffffu,
		.func = TPLAN_SDMA_FUNC_GE, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	uint32_t dw[TPLAN_SDMA_POLL_DW];

	tplan_sdma_encode_poll_regmem(dw, TPLAN_SDMA_POLL_DW, &poll);
	return tplan_test_inject(ctx, 1, dw, TPLAN_SDMA_POLL_DW);
}

/* bytes of NOPs, 4 KiB at a time. */
static int step_fill(struct tplan_ctx *ctx, uint64_t bytes)
{
	static uint32_t nop[1024];
	uint64_t done;
	int ret = 0;

	for (done = 0; !ret && done < bytes; done += sizeof(nop))
		ret = tplan_test_inject(ctx, 1, nop, 1024);
	return ret;
}

static void step_open(struct tplan_ctx *ctx, uint64_t off)
{
	__atomic_store_n((uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + off), 1, __ATOMIC_RELEASE);
}

TEST_F_TIMEOUT(inject, ring_wait_times_out_without_progress_only, 180)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct step_submit a = { .ctx = ctx };
	uint64_t ring, f1, f2, t0;
	struct tplan_queue_info qi;
	pthread_t t;

	ASSERT_EQ(0, tplan_queue_info(ctx, 1, &qi));
	ring = qi.ring_size;
	/* A ring/32 margin beyond what an engine fetching 64 KiB ahead frees. */
	if (ring < (4U << 20))
		SKIP(return, "a ring of %llu bytes: this test wants one of 4 MiB or more",
		     (unsigned long long)ring);
	f1 = ring * 3 / 8;
	f2 = ring - f1 - ring / 32;
	ASSERT_EQ(0, step_poll(ctx, STEP_GATE_A));
	ASSERT_EQ(0, step_fill(ctx, f1));
	ASSERT_EQ(0, step_poll(ctx, STEP_GATE_B));
	ASSERT_EQ(0, step_fill(ctx, f2));
	/* 7/16 of the ring in chains: more than A frees, within the budget. */
	a.nchains = (uint32_t)(ring * 7 / 16 / (STEP_CHAIN_DW * 4 + TPLAN_CHAIN_FENCE_BYTES));
	ASSERT_GE(qi.prep_limit, a.nchains * (STEP_CHAIN_DW * 4 + TPLAN_CHAIN_FENCE_BYTES));
	t0 = tplan_now_ms();
	ASSERT_EQ(0, -pthread_create(&t, NULL, step_submit_thread, &a));
	tplan_sleep_ms(15000);
	step_open(ctx, STEP_GATE_A);
	tplan_sleep_ms(20000);
	step_open(ctx, STEP_GATE_B);
	ASSERT_EQ(0, -pthread_join(t, NULL));
	ASSERT_EQ(0, a.ret);
	/* It did wait past one timeout in all: progress kept it going. */
	ASSERT_LE(30000, tplan_now_ms() - t0);
	/* The chains' own gate stays shut: flush them out. */
	ASSERT_EQ(0, tplan_queue_flush(ctx, 1, 60000));
}

TEST_F(inject, ndw_out_of_range_is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	static uint32_t dw[1025];

	ASSERT_EQ(-EINVAL, tplan_test_inject(self->g.ctx, 1, dw, 0));
	ASSERT_EQ(-EINVAL, tplan_test_inject(self->g.ctx, 1, dw, 1025));
	ASSERT_EQ(0, tplan_test_inject(self->g.ctx, 1, dw, 1024));
}

TEST_F(inject, flags_must_be_zero)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint32_t nop = 0;
	struct tplan_queue_inject in = {
		.size = sizeof(in), .peer = 1, .ndw = 1, .flags = 1, .dwords = (uintptr_t)&nop,
	};

	ASSERT_EQ(-EINVAL, tplan_test_ioctl(tplan_ctx_fd(self->g.ctx), TPLAN_IOC_QUEUE_INJECT, &in));
}

TEST_F(inject, peer_is_self_is_einval)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint32_t nop = 0;

	ASSERT_EQ(-EINVAL, tplan_test_inject(self->g.ctx, 0, &nop, 1));
	ASSERT_EQ(-EINVAL, tplan_test_inject(self->g.ctx, WORLD, &nop, 1));
}

TEST_F(inject, bad_pointer_is_efault)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_queue_info qi;
	uint64_t before;

	ASSERT_EQ(0, tplan_queue_info(self->g.ctx, 1, &qi));
	before = qi.wptr;
	ASSERT_EQ(-EFAULT, tplan_test_inject(self->g.ctx, 1, (uint32_t *)16, 4));
	ASSERT_EQ(0, tplan_queue_info(self->g.ctx, 1, &qi));
	ASSERT_EQ(before, qi.wptr);
}

/* Without the module parameter, nothing gets in. */
TEST(inject_without_allow_inject_is_eperm)
{
	struct tplan_test_group g;
	uint32_t nop = 0;
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (tplan_test_inject_allowed())
		SKIP(return, "allow_inject=1 is set");
	ASSERT_EQ(0, tplan_test_group_setup(&g, 2, HEAP, 0));
	EXPECT_EQ(-EPERM, tplan_test_inject(g.ctx, 1, &nop, 1));
	tplan_test_group_teardown(&g);
}

/* ---- a fault ends the waits that depend on the queue ------------------------ */

FIXTURE(plan_fault) {
	int unused;
};

FIXTURE_SETUP(plan_fault)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module parameter allow_inject=1");
}

FIXTURE_TEARDOWN(plan_fault)
{
}

#define PF_PART 4096
#define PF_WAIT_MS 120000

/*
 * Rank 0's queue to rank 1 starts with a POLL that gives up after about
 * 10 s (500 retries of 20 ms); its plan chains queue behind it.  Every
 * chunk is marked.  Rank 1 waits for rank 0's chunk, which can never
 * come: its wait ends with EIO when the queue faults, naming the queue,
 * not at its timeout; rank 0's wait (its chunk never reaches rank 1) the
 * same.  The plans are FAILED and close.
 */
static int rank_fault_wait(struct tplan_rank_env *env)
{
	static struct tp_even ev;
	struct tplan_sdma_poll_regmem poll = {
		.ref = 1, .mask = 0xffffffffu, .func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1,
		.interval = 20000, .retry = 500,
	};
	struct tplan_plan_wait w = { .size = sizeof(w), .timeout_ms = PF_WAIT_MS };
	uint32_t dw[TPLAN_SDMA_POLL_DW], state;
	struct tplan_ctx *ctx;
	struct tp_plan p;
	uint64_t t0;

	RANK_OK(tp_join(env, HEAP, 0, &ctx));
	if (env->rank == 0) {
		poll.addr = tplan_heap_devaddr(ctx, 0) + HEAP / 2;
		RANK_EQ(TPLAN_SDMA_POLL_DW,
			tplan_sdma_encode_poll_regmem(dw, ARRAY_SIZE(dw), &poll));
		RANK_OK(tplan_test_inject(ctx, 1, dw, TPLAN_SDMA_POLL_DW));
	}
	RANK_OK(tp_create(&p, ctx, 0, PF_PART * env->world, env->rank * PF_PART, PF_PART, 1));
	RANK_OK(tp_even_sched(&ev, env->rank * PF_PART, PF_PART, 1, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	RANK_OK(tp_start(&p, NULL));
	tp_mark(&p, 0, 1);
	w.plan_id = p.id;
	t0 = tplan_now_ms();
	RANK_ERR(-EIO, tplan_test_ioctl(p.fd, TPLAN_IOC_PLAN_WAIT, &w));
	/* Ended by the fault (about 10 s in), not by the timeout. */
	RANK_ASSERT(tplan_now_ms() - t0 < PF_WAIT_MS);
	RANK_EQ(0, w.fault.src);
	RANK_EQ(1, w.fault.dst);
	RANK_EQ(TPLAN_FAULT_POLL_TIMEOUT, w.fault.reason);
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_close(&p, NULL) == -EIO ? 0 : 0);
	RANK_OK(tplan_barrier(ctx, TP_TIMEOUT));
	tp_free_chains(&p);
	tplan_ctx_close(ctx);
	return 0;
}

TEST_F_TIMEOUT(plan_fault, fault_ends_dependent_waits_with_eio_at_once, 300)
{
	RUN_RANKS(2, rank_fault_wait, NULL, 280000);
}

TEST_HARNESS_MAIN
