// SPDX-License-Identifier: GPL-2.0
/*
 * The software SDMA engine: one kernel thread per queue that decodes the
 * ring with the packet codec and executes it on heap memory.  It reaches
 * memory only through tplan_group_translate() (bounds-checked heap
 * ranges); a packet it cannot execute stops the queue in FAULT state.
 *
 * Idle, the thread sleeps on the queue's wait queue and costs next to
 * nothing: it also wakes once a second by itself, and counts a wake-up
 * that finds work only then as a lost one (debugfs), so a missed kick
 * costs a second and shows, instead of a hang.  A POLL that is not yet
 * satisfied spins briefly (a producer often opens the gate within
 * microseconds), then sleeps with a growing interval so that a gate
 * closed for long costs little CPU.
 *
 * POLL semantics as the hardware's: the packet's interval is the time
 * between two retries (the soft engine reads it as microseconds: the
 * 16-bit field bounds it at 65 ms), and its retry count counts those
 * intervals, not the checks made while spinning, which the engine does
 * as often as its back-off allows.  Gates are compared on their low
 * 32 bits at the gate's own address: the module, like the SDMA engine,
 * is little-endian only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/atomic.h>
#include <linux/ktime.h>

#include "tplan_priv.h"
#include "queue.h"
#include "tplan_sdma.h"
#include "tplan_trace.h"

#define TPLAN_POLL_SPIN_NS	20000		/* spin this long before sleeping */
#define TPLAN_POLL_SLEEP_MIN_US	10
#define TPLAN_POLL_SLEEP_MAX_US	1000
#define TPLAN_COPY_SLICE	(1U << 20)	/* reschedule point in long copies */
#define TPLAN_ENGINE_SAFETY	HZ		/* wake up by itself this often */

#ifdef __BIG_ENDIAN
#error "tplan: gates are polled on their low 32 bits at their own address, as SDMA does: little-endian only"
#endif

enum tplan_exec {
	TPLAN_EXEC_DONE,	/* advance past the packet */
	TPLAN_EXEC_STOP,	/* the thread is being stopped */
	TPLAN_EXEC_FAULT,	/* the queue faulted */
};

static int tplan_soft_fault(struct tplan_queue *q, u32 reason)
{
	tplan_queue_fault(q, reason);
	return TPLAN_EXEC_FAULT;
}

static bool tplan_soft_should_stop(void)
{
	return kthread_should_stop();
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

static void tplan_soft_sleep_us(u32 us)
{
	ktime_t t = ktime_set(0, (u64)us * NSEC_PER_USEC);

	/* TASK_IDLE: no load average; kthread_stop() wakes it. */
	set_current_state(TASK_IDLE);
	if (!kthread_should_stop())
		schedule_hrtimeout_range(&t, (u64)us * NSEC_PER_USEC / 4, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

static int tplan_soft_poll(struct tplan_queue *q, const struct tplan_sdma_poll_regmem *p)
{
	u32 interval_us = max_t(u32, p->interval, 1);
	u32 retries = 0, sleep_us = TPLAN_POLL_SLEEP_MIN_US;
	u64 spin_until, next_retry;
	const u32 *word;

	if (!p->mem_poll || p->hdp_flush)
		return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
	word = tplan_group_translate(q->group, q->src, p->addr, 4);
	if (!word)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);

	spin_until = ktime_get_ns() + TPLAN_POLL_SPIN_NS;
	next_retry = ktime_get_ns() + (u64)interval_us * NSEC_PER_USEC;
	/* Acquire: what the gate's writer wrote before it is visible to the copies. */
	while (!tplan_poll_compare(p->func, smp_load_acquire(word) & p->mask, p->ref)) {
		u64 now = ktime_get_ns();

		/* A retry is one interval gone by, however often we looked. */
		if (now >= next_retry) {
			if (p->retry != TPLAN_SDMA_POLL_RETRY_FOREVER && retries++ >= p->retry)
				return tplan_soft_fault(q, TPLAN_FAULT_POLL_TIMEOUT);
			next_retry = now + (u64)interval_us * NSEC_PER_USEC;
		}
		if (tplan_soft_should_stop())
			return TPLAN_EXEC_STOP;
		if (now < spin_until) {
			cpu_relax();
			continue;
		}
		tplan_soft_sleep_us(sleep_us);
		sleep_us = min_t(u32, sleep_us * 2, TPLAN_POLL_SLEEP_MAX_US);
	}
	trace_tplan_poll_satisfied(q->group->id, q->src, q->dst, p->addr, p->ref);
	return TPLAN_EXEC_DONE;
}

static int tplan_soft_memmove(struct tplan_queue *q, void *dst, const void *src, u64 len)
{
	u64 done, n;

	for (done = 0; done < len; done += n) {
		n = min_t(u64, len - done, TPLAN_COPY_SLICE);
		memmove(dst + done, src + done, n);
		if (n == TPLAN_COPY_SLICE) {
			cond_resched();
			if (tplan_soft_should_stop())
				return TPLAN_EXEC_STOP;
		}
	}
	return TPLAN_EXEC_DONE;
}

static int tplan_soft_copy_linear(struct tplan_queue *q, const struct tplan_sdma_copy_linear *c)
{
	void *src, *dst;
	int ret;

	if (c->encrypt || c->tmz || c->src_swap || c->dst_swap)
		return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
	if (c->bytes > q->group->limits.max_copy_bytes)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_PACKET);
	src = tplan_group_translate(q->group, q->src, c->src, c->bytes);
	dst = tplan_group_translate(q->group, q->src, c->dst, c->bytes);
	if (!src || !dst)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);
	ret = tplan_soft_memmove(q, dst, src, c->bytes);
	if (ret == TPLAN_EXEC_DONE)
		trace_tplan_copy_done(q->group->id, q->src, q->dst, c->dst, c->bytes);
	return ret;
}

/* Byte offset of element (x, y, z) of a window, and the window's extent. */
static u64 tplan_window_offset(const struct tplan_sdma_window *w, u32 esize,
			       u32 x, u32 y, u32 z)
{
	return ((u64)(w->z + z) * w->slice_pitch + (u64)(w->y + y) * w->pitch + w->x + x) * esize;
}

static int tplan_soft_copy_sub_window(struct tplan_queue *q,
				      const struct tplan_sdma_copy_sub_window *c)
{
	u32 esize = 1U << c->elem_size_log2;
	u64 row = (u64)c->rect_x * esize;
	u64 src_lo, src_hi, dst_lo, dst_hi, since_yield = 0;
	u8 *src, *dst;
	u32 y, z;

	if (c->tmz || c->src_swap || c->dst_swap)
		return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
	/* Every row lies between the first byte and the end of the last row. */
	src_lo = tplan_window_offset(&c->src, esize, 0, 0, 0);
	src_hi = tplan_window_offset(&c->src, esize, 0, c->rect_y - 1, c->rect_z - 1) + row;
	dst_lo = tplan_window_offset(&c->dst, esize, 0, 0, 0);
	dst_hi = tplan_window_offset(&c->dst, esize, 0, c->rect_y - 1, c->rect_z - 1) + row;
	src = tplan_group_translate(q->group, q->src, c->src.addr + src_lo, src_hi - src_lo);
	dst = tplan_group_translate(q->group, q->src, c->dst.addr + dst_lo, dst_hi - dst_lo);
	if (!src || !dst)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);

	/* A window holds up to 4 GiB: a stop point every TPLAN_COPY_SLICE bytes. */
	for (z = 0; z < c->rect_z; z++) {
		for (y = 0; y < c->rect_y; y++) {
			memmove(dst + tplan_window_offset(&c->dst, esize, 0, y, z) - dst_lo,
				src + tplan_window_offset(&c->src, esize, 0, y, z) - src_lo, row);
			since_yield += row;
			if (since_yield >= TPLAN_COPY_SLICE) {
				since_yield = 0;
				cond_resched();
				if (tplan_soft_should_stop())
					return TPLAN_EXEC_STOP;
			}
		}
	}
	trace_tplan_copy_done(q->group->id, q->src, q->dst, c->dst.addr + dst_lo,
			      row * c->rect_y * c->rect_z);
	return TPLAN_EXEC_DONE;
}

static int tplan_soft_atomic(struct tplan_queue *q, const struct tplan_sdma_atomic *a)
{
	atomic64_t *v;

	if (a->atomic_op != TPLAN_SDMA_ATOMIC_ADD64 || a->loop || a->tmz)
		return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
	if (!IS_ALIGNED(a->addr, 8))
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);
	v = tplan_group_translate(q->group, q->src, a->addr, 8);
	if (!v)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);
	/*
	 * Release: the copies before it are visible to whoever sees the add;
	 * and the add is visible before the waiters are woken.
	 */
	smp_mb__before_atomic();
	atomic64_add((s64)a->src_data, v);
	smp_mb__after_atomic();		/* the add before the wake-up */
	wake_up_all(&q->group->arrival_wq);
	return TPLAN_EXEC_DONE;
}

static int tplan_soft_fence(struct tplan_queue *q, const struct tplan_sdma_fence *f)
{
	u32 *p = tplan_group_translate(q->group, q->src, f->addr, 4);

	if (!p)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_ADDRESS);
	/* Release: the packets before the fence are done for its reader. */
	smp_store_release(p, f->data);
	wake_up_all(&q->group->arrival_wq);
	return TPLAN_EXEC_DONE;
}

/* Execute the packet at rptr; returns its length in *ndw when done. */
static int tplan_soft_step(struct tplan_queue *q, u64 rptr, u64 wptr, u32 *ndw)
{
	u32 off = rptr & (q->ring_size - 1);
	u32 to_end = (q->ring_size - off) / 4;
	u32 avail = min_t(u64, (wptr - rptr) / 4, to_end);
	const u32 *dw = q->ring + off / 4;
	struct tplan_sdma_packet p;
	int n;

	n = tplan_sdma_decode(dw, avail, &p);
	if (n == -ENODATA) {
		/* Longer than what is there: across the ring end, or cut short. */
		n = tplan_sdma_packet_dwords(dw, to_end);
		return tplan_soft_fault(q, n == -ENODATA ? TPLAN_FAULT_RING_END :
						   TPLAN_FAULT_BAD_PACKET);
	}
	if (n == -EOPNOTSUPP)
		return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
	if (n < 0)
		return tplan_soft_fault(q, TPLAN_FAULT_BAD_PACKET);

	*ndw = n;
	switch (p.kind) {
	case TPLAN_SDMA_KIND_NOP:
		return TPLAN_EXEC_DONE;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		return tplan_soft_copy_linear(q, &p.u.copy_linear);
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		return tplan_soft_copy_sub_window(q, &p.u.sub_window);
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		return tplan_soft_poll(q, &p.u.poll);
	case TPLAN_SDMA_KIND_ATOMIC:
		return tplan_soft_atomic(q, &p.u.atomic);
	case TPLAN_SDMA_KIND_FENCE:
		return tplan_soft_fence(q, &p.u.fence);
	case TPLAN_SDMA_KIND_TRAP:
		q->traps++;
		wake_up_all(&q->group->arrival_wq);
		return TPLAN_EXEC_DONE;
	}
	return tplan_soft_fault(q, TPLAN_FAULT_UNSUPPORTED);
}

static bool tplan_soft_has_work(struct tplan_queue *q)
{
	/* Acquire: pairs with the owner's release of wptr (queue.h). */
	return !READ_ONCE(q->state) && smp_load_acquire(&q->wptr) != q->rptr;
}

static int tplan_soft_thread(void *data)
{
	struct tplan_queue *q = data;

	while (!kthread_should_stop()) {
		u64 rptr = q->rptr, wptr;
		u32 ndw = 0;

		if (!tplan_soft_has_work(q)) {
			unsigned long t0 = jiffies;

			wait_event_idle_timeout(q->engine_wq, kthread_should_stop() ||
						tplan_soft_has_work(q), TPLAN_ENGINE_SAFETY);
			if (tplan_soft_has_work(q)) {
				/* Work found only when the safety timeout ran out: a lost kick. */
				if (time_after_eq(jiffies, t0 + TPLAN_ENGINE_SAFETY))
					q->lost_wakeups++;
				else
					q->wakeups++;
			}
		}
		if (kthread_should_stop())
			break;
		/* Acquire: the packets below wptr are written (queue.h). */
		wptr = smp_load_acquire(&q->wptr);
		if (READ_ONCE(q->state) || wptr == rptr)
			continue;
		if (tplan_soft_step(q, rptr, wptr, &ndw) != TPLAN_EXEC_DONE)
			continue;
		q->packets++;
		tplan_queue_retire(q, rptr + ndw * 4ULL);
		cond_resched();
	}
	return 0;
}

static int tplan_soft_start(struct tplan_queue *q)
{
	struct task_struct *t;

	/* Named by the group's serial number: the key is nobody else's business. */
	t = kthread_run(tplan_soft_thread, q, "tplan-g%u/%u-%u", q->group->id, q->src, q->dst);
	if (IS_ERR(t))
		return PTR_ERR(t);
	q->thread = t;
	return 0;
}

static void tplan_soft_stop(struct tplan_queue *q)
{
	kthread_stop(q->thread);
	q->thread = NULL;
	if (!READ_ONCE(q->state))
		WRITE_ONCE(q->state, TPLAN_QUEUE_STOPPED);
}

static void tplan_soft_kick(struct tplan_queue *q)
{
	wake_up(&q->engine_wq);
}

const struct tplan_engine_ops tplan_soft_engine = {
	.name = "soft",
	.start = tplan_soft_start,
	.stop = tplan_soft_stop,
	.kick = tplan_soft_kick,
};
