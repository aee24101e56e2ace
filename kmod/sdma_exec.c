// SPDX-License-Identifier: GPL-2.0
/*
 * Executing one decoded SDMA packet in software (sdma_exec.h): copies,
 * POLL_REGMEM, ATOMIC ADD64 and NOP here, FENCE and TRAP through the
 * engine.  Memory is reached only through the engine's translate(), so
 * every access is bounds-checked against one of its buffers.
 *
 * POLL semantics as the hardware's: the packet's interval is the time
 * between two retries (read as microseconds: the 16-bit field bounds it
 * at 65 ms), and its retry count counts those intervals, not the checks
 * made while spinning, which are as frequent as the back-off allows.  A
 * POLL that is not yet satisfied spins briefly while no other task waits
 * for its CPU (a producer often opens the gate within microseconds; on a
 * busy CPU the spin would only hold it up), then sleeps with a growing
 * interval so that a gate closed for long costs little CPU.  Gates are
 * compared on their low 32 bits at the gate's own address: like the SDMA
 * engine, little-endian only.
 */
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/hrtimer.h>
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "tplan.h"
#include "sdma_exec.h"

#define TPLAN_POLL_SPIN_NS	20000		/* spin this long before sleeping */
#define TPLAN_COPY_SLICE	(1U << 20)	/* reschedule point in long copies */

#ifdef __BIG_ENDIAN
#error "tplan: gates are polled on their low 32 bits at their own address, as SDMA does: little-endian only"
#endif

static int tplan_exec_fault(struct tplan_sdma_exec *x, u32 reason)
{
	x->fault = reason;
	return TPLAN_EXEC_FAULT;
}

void tplan_sdma_exec_sleep(u64 ns)
{
	ktime_t t = ns_to_ktime(ns);

	/* TASK_IDLE: no load average; kthread_stop() wakes it. */
	set_current_state(TASK_IDLE);
	if (!kthread_should_stop())
		schedule_hrtimeout_range(&t, ns / 4, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

/* The thread, or only this queue, is being stopped. */
static bool tplan_exec_stopping(const struct tplan_sdma_exec *x)
{
	return kthread_should_stop() || READ_ONCE(x->stop);
}

static bool tplan_poll_compare(u32 func, u32 v, u32 ref)
{
	switch (func) {
	case TPLAN_SDMA_FUNC_ALWAYS:	return true;
	case TPLAN_SDMA_FUNC_LT:	return v < ref;
	case TPLAN_SDMA_FUNC_LE:	return v <= ref;
	case TPLAN_SDMA_FUNC_EQ:	return v == ref;
	case TPLAN_SDMA_FUNC_NE:	return v != ref;
	case TPLAN_SDMA_FUNC_GE:	return v >= ref;
	case TPLAN_SDMA_FUNC_GT:	return v > ref;
	}
	return false;
}

static int tplan_exec_poll(struct tplan_sdma_exec *x, const struct tplan_sdma_poll_regmem *p,
			   u64 pos)
{
	u32 interval_us = max_t(u32, p->interval, 1);
	u32 sleep_us = TPLAN_POLL_SLEEP_MIN_US;
	const u32 *word;
	u64 spin_until;
	int ret;

	if (!p->mem_poll || p->hdp_flush)
		return tplan_exec_fault(x, TPLAN_FAULT_UNSUPPORTED);
	word = x->ops->translate(x, p->addr, 4);
	if (!word)
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);

	/* Acquire: what the gate's writer wrote before it is visible to the copies. */
	if (tplan_poll_compare(p->func, smp_load_acquire(word) & p->mask, p->ref))
		goto done;	/* the common case, without reading the clock */

	/* A POLL taken up again after a preemption keeps its retries. */
	if (!x->poll_active || x->poll_pos != pos) {
		x->poll_active = true;
		x->poll_pos = pos;
		x->poll_retries = 0;
		x->poll_next_retry = ktime_get_ns() + (u64)interval_us * NSEC_PER_USEC;
	}
	spin_until = ktime_get_ns() + TPLAN_POLL_SPIN_NS;
	/* Acquire: what the gate's writer wrote before it is visible to the copies. */
	while (!tplan_poll_compare(p->func, smp_load_acquire(word) & p->mask, p->ref)) {
		u64 now = ktime_get_ns();

		/* A retry is one interval gone by, however often we looked. */
		if (now >= x->poll_next_retry) {
			if (p->retry != TPLAN_SDMA_POLL_RETRY_FOREVER &&
			    x->poll_retries++ >= p->retry) {
				x->poll_active = false;
				return tplan_exec_fault(x, TPLAN_FAULT_POLL_TIMEOUT);
			}
			x->poll_next_retry = now + (u64)interval_us * NSEC_PER_USEC;
		}
		if (tplan_exec_stopping(x))
			return TPLAN_EXEC_STOP;
		if (now < spin_until && single_task_running() && !need_resched()) {
			cpu_relax();
			continue;
		}
		ret = x->ops->poll_pause(x, (u64)sleep_us * NSEC_PER_USEC);
		if (ret != TPLAN_EXEC_DONE)
			return ret;
		sleep_us = min_t(u32, sleep_us * 2, TPLAN_POLL_SLEEP_MAX_US);
		/* The engine may have let go of its memory meanwhile. */
		word = x->ops->translate(x, p->addr, 4);
		if (!word) {
			x->poll_active = false;
			return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);
		}
	}
done:
	x->poll_active = false;
	return TPLAN_EXEC_DONE;
}

static int tplan_exec_memmove(struct tplan_sdma_exec *x, void *dst, const void *src, u64 len)
{
	u64 done, n;

	for (done = 0; done < len; done += n) {
		n = min_t(u64, len - done, TPLAN_COPY_SLICE);
		memmove(dst + done, src + done, n);
		if (n == TPLAN_COPY_SLICE) {
			cond_resched();
			if (tplan_exec_stopping(x))
				return TPLAN_EXEC_STOP;
		}
	}
	return TPLAN_EXEC_DONE;
}

static int tplan_exec_copy_linear(struct tplan_sdma_exec *x,
				  const struct tplan_sdma_copy_linear *c)
{
	void *src, *dst;

	if (c->encrypt || c->tmz || c->src_swap || c->dst_swap)
		return tplan_exec_fault(x, TPLAN_FAULT_UNSUPPORTED);
	if (c->bytes > x->max_copy_bytes)
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_PACKET);
	src = x->ops->translate(x, c->src, c->bytes);
	dst = x->ops->translate(x, c->dst, c->bytes);
	if (!src || !dst)
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);
	return tplan_exec_memmove(x, dst, src, c->bytes);
}

static int tplan_exec_copy_sub_window(struct tplan_sdma_exec *x,
				      const struct tplan_sdma_copy_sub_window *c)
{
	u32 esize = 1U << c->elem_size_log2;
	u64 row = (u64)c->rect_x * esize;
	u64 src_lo, src_hi, dst_lo, dst_hi, since_yield = 0;
	u8 *src, *dst;
	u32 y, z;

	if (c->tmz || c->src_swap || c->dst_swap)
		return tplan_exec_fault(x, TPLAN_FAULT_UNSUPPORTED);
	/* Every row lies between the first byte and the end of the last row. */
	src_lo = tplan_sdma_window_offset(&c->src, esize, 0, 0, 0);
	src_hi = tplan_sdma_window_offset(&c->src, esize, 0, c->rect_y - 1, c->rect_z - 1) + row;
	dst_lo = tplan_sdma_window_offset(&c->dst, esize, 0, 0, 0);
	dst_hi = tplan_sdma_window_offset(&c->dst, esize, 0, c->rect_y - 1, c->rect_z - 1) + row;
	src = x->ops->translate(x, c->src.addr + src_lo, src_hi - src_lo);
	dst = x->ops->translate(x, c->dst.addr + dst_lo, dst_hi - dst_lo);
	if (!src || !dst)
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);

	/* A window holds up to 4 GiB: a stop point every TPLAN_COPY_SLICE bytes. */
	for (z = 0; z < c->rect_z; z++) {
		for (y = 0; y < c->rect_y; y++) {
			memmove(dst + tplan_sdma_window_offset(&c->dst, esize, 0, y, z) - dst_lo,
				src + tplan_sdma_window_offset(&c->src, esize, 0, y, z) - src_lo,
				row);
			since_yield += row;
			if (since_yield >= TPLAN_COPY_SLICE) {
				since_yield = 0;
				cond_resched();
				if (tplan_exec_stopping(x))
					return TPLAN_EXEC_STOP;
			}
		}
	}
	return TPLAN_EXEC_DONE;
}

static int tplan_exec_atomic(struct tplan_sdma_exec *x, const struct tplan_sdma_atomic *a)
{
	atomic64_t *v;

	if (a->atomic_op != TPLAN_SDMA_ATOMIC_ADD64 || a->loop || a->tmz)
		return tplan_exec_fault(x, TPLAN_FAULT_UNSUPPORTED);
	if (!IS_ALIGNED(a->addr, 8))
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);
	v = x->ops->translate(x, a->addr, 8);
	if (!v)
		return tplan_exec_fault(x, TPLAN_FAULT_BAD_ADDRESS);
	/*
	 * Release: the copies before it are visible to whoever sees the add;
	 * and the add is visible before the waiters are woken.
	 */
	smp_mb__before_atomic();
	atomic64_add((s64)a->src_data, v);
	smp_mb__after_atomic();		/* the add before the wake-up */
	if (x->ops->landed)
		x->ops->landed(x);
	return TPLAN_EXEC_DONE;
}

int tplan_sdma_exec(struct tplan_sdma_exec *x, const struct tplan_sdma_packet *p, u64 pos)
{
	switch (p->kind) {
	case TPLAN_SDMA_KIND_NOP:
		return TPLAN_EXEC_DONE;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		return tplan_exec_copy_linear(x, &p->u.copy_linear);
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		return tplan_exec_copy_sub_window(x, &p->u.sub_window);
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		return tplan_exec_poll(x, &p->u.poll, pos);
	case TPLAN_SDMA_KIND_ATOMIC:
		return tplan_exec_atomic(x, &p->u.atomic);
	case TPLAN_SDMA_KIND_FENCE:
		return x->ops->fence(x, p->u.fence.addr, p->u.fence.data);
	case TPLAN_SDMA_KIND_TRAP:
		if (x->ops->trap)
			x->ops->trap(x, p->u.trap.int_context);
		return TPLAN_EXEC_DONE;
	}
	return tplan_exec_fault(x, TPLAN_FAULT_UNSUPPORTED);
}
