// SPDX-License-Identifier: GPL-2.0
/*
 * The software SDMA engine: one kernel thread per queue that fetches the
 * ring with the packet codec and executes it on heap memory.  It reaches
 * memory only through tplan_group_translate() (bounds-checked heap ranges
 * of the sending rank's map) and the queue's own pointer page; a packet
 * it cannot execute stops the queue in FAULT state.
 *
 * It keeps to what an SDMA engine gives the module (queue.h): new work
 * only from doorbells (the value rung is the new wptr), and after a
 * preemption from the pointer page; rptr written back into the pointer
 * page as consumption; completion only through the FENCEs in the ring.
 * Test knobs (soft_quirks, below) make it behave like hardware at its
 * worst, so that the core cannot come to rely on anything more:
 *   lag      rptr is written back every few milliseconds, not per packet;
 *   ahead    packets are fetched (decoded into a FIFO) up to 64 KiB ahead
 *            of execution and rptr says fetched, not executed;
 *   preempt  the queue is unmapped for a millisecond every few while it
 *            runs, and every other time it wakes from idle: doorbells rung
 *            meanwhile are lost, and on restore wptr is read from the
 *            pointer page;
 *   full     a doorbell that makes the ring completely full (wptr - rptr
 *            == ring_size, rptr as written back) reads as no work, as the
 *            ring offsets are equal: it is lost.
 *
 * Run dry, the thread first lingers (soft_linger_us): it looks at its
 * doorbell on the POLL back-off schedule, as an engine takes a doorbell
 * without being woken, so that whoever rings then only stores the
 * register; waking a sleeping thread costs the ringer far more (under
 * TCG, tens of microseconds: most of a re-arm's cost).  Then it sleeps on
 * its wait queue and costs next to nothing: it also wakes once a second
 * by itself, and counts a wake-up that finds work only then as a lost one
 * (debugfs), so a missed doorbell costs a second and shows, instead of a
 * hang.  The packets themselves are
 * executed by sdma_exec.c (POLL semantics and back-off are there), which
 * the tests' KFD stand-in shares; what is the soft engine's own is here:
 * the thread, fetching, rptr write-back, the knobs, the pointer page.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "tplan_priv.h"
#include "queue.h"
#include "tplan_sdma.h"
#include "sdma_exec.h"
#include "tplan_trace.h"

#define TPLAN_ENGINE_SAFETY	HZ		/* wake up by itself this often */
#define TPLAN_SOFT_FIFO		64		/* packets fetched, not yet executed */
#define TPLAN_SOFT_AHEAD_BYTES	(64U << 10)	/* ahead: how far rptr may run */
#define TPLAN_SOFT_LAG_NS	(2 * NSEC_PER_MSEC)	/* lag: write-back period */
#define TPLAN_SOFT_PREEMPT_EVERY_NS (3 * NSEC_PER_MSEC)	/* preempt: running this long */
#define TPLAN_SOFT_PREEMPT_FOR_NS   (1 * NSEC_PER_MSEC)	/* then unmapped this long */

static unsigned int tplan_soft_linger_us = 500;
module_param_named(soft_linger_us, tplan_soft_linger_us, uint, 0644);
MODULE_PARM_DESC(soft_linger_us,
		 "How long a soft-engine queue that ran dry looks at its doorbell before it sleeps until one wakes it, in microseconds (default 500; 0: it sleeps at once). A doorbell rung meanwhile costs its ringer no wake-up");

/* ---- Test knobs -------------------------------------------------------- */

#define TPLAN_SOFT_MIX (1U << 31)	/* each new queue takes the next of tplan_soft_mix_order */

static const u32 tplan_soft_mix_order[] = {
	0, TPLAN_SOFT_RPTR_LAG, TPLAN_SOFT_RPTR_AHEAD, TPLAN_SOFT_PREEMPT, TPLAN_SOFT_QUIRKS_ALL,
};

static const struct {
	const char *name;
	u32 bits;
} tplan_soft_quirk_names[] = {
	{ "lag", TPLAN_SOFT_RPTR_LAG },
	{ "ahead", TPLAN_SOFT_RPTR_AHEAD },
	{ "preempt", TPLAN_SOFT_PREEMPT },
	{ "full", TPLAN_SOFT_FULL_HANGS },
	{ "all", TPLAN_SOFT_QUIRKS_ALL },
	{ "mix", TPLAN_SOFT_MIX },
	{ "off", 0 },
};

static u32 tplan_soft_quirks;
static atomic_t tplan_soft_mix_next = ATOMIC_INIT(0);

static int tplan_soft_quirks_set(const char *val, const struct kernel_param *kp)
{
	char buf[64], *words = buf, *w;
	u32 bits = 0, i;

	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	while ((w = strsep(&words, ",")) != NULL) {
		w = strim(w);
		if (!*w)
			continue;
		for (i = 0; i < ARRAY_SIZE(tplan_soft_quirk_names); i++)
			if (!strcmp(w, tplan_soft_quirk_names[i].name))
				break;
		if (i == ARRAY_SIZE(tplan_soft_quirk_names))
			return -EINVAL;
		bits |= tplan_soft_quirk_names[i].bits;
	}
	if (bits & TPLAN_SOFT_MIX && bits != TPLAN_SOFT_MIX)
		return -EINVAL;
	WRITE_ONCE(tplan_soft_quirks, bits);
	return 0;
}

static int tplan_soft_quirks_print(char *buf, size_t size, u32 bits)
{
	int n = 0;
	u32 i;

	if (bits == TPLAN_SOFT_MIX)
		return scnprintf(buf, size, "mix");
	if (!bits)
		return scnprintf(buf, size, "off");
	for (i = 0; i < ARRAY_SIZE(tplan_soft_quirk_names); i++) {
		u32 b = tplan_soft_quirk_names[i].bits;

		/* Single bits only: "all" is spelt out. */
		if (hweight32(b) == 1 && bits & b)
			n += scnprintf(buf + n, size - n, "%s%s", n ? "," : "",
				       tplan_soft_quirk_names[i].name);
	}
	return n;
}

static int tplan_soft_quirks_get(char *buf, const struct kernel_param *kp)
{
	int n = tplan_soft_quirks_print(buf, PAGE_SIZE, READ_ONCE(tplan_soft_quirks));

	return n + scnprintf(buf + n, PAGE_SIZE - n, "\n");
}

static const struct kernel_param_ops tplan_soft_quirks_ops = {
	.set = tplan_soft_quirks_set,
	.get = tplan_soft_quirks_get,
};
module_param_cb(soft_quirks, &tplan_soft_quirks_ops, NULL, 0644);
MODULE_PARM_DESC(soft_quirks,
		 "Test only: how the soft engine's queues made from now emulate hardware: off, or any of lag,ahead,preempt,full (all: every one), or mix (each new queue the next of off, lag, ahead, preempt, all)");

/* The quirks of a queue made now. */
u32 tplan_soft_quirks_next(void)
{
	u32 bits = READ_ONCE(tplan_soft_quirks);

	if (bits != TPLAN_SOFT_MIX)
		return bits;
	return tplan_soft_mix_order[(u32)atomic_inc_return(&tplan_soft_mix_next) %
				    ARRAY_SIZE(tplan_soft_mix_order)];
}

/* ---- The engine -------------------------------------------------------- */

/* A fetched packet: decoded, so that the ring below rptr may be reused. */
struct tplan_soft_packet {
	u64 pos;			/* queue position of its first dword */
	u32 ndw;			/* 0: it could not be decoded */
	u32 dw0;			/* its first dword, for a fault report */
	u32 fault;			/* why it could not be decoded */
	struct tplan_sdma_packet p;
};

struct tplan_soft_queue {
	struct tplan_queue *q;
	struct tplan_sdma_exec x;	/* executes the packets (sdma_exec.c) */
	struct task_struct *thread;
	wait_queue_head_t wq;
	u32 quirks;
	u64 doorbell;			/* the doorbell register: the last value rung */
	bool unmapped;			/* preempt: doorbells are lost now */
	atomic64_t doorbells_lost;

	/* The thread's own. */
	u64 wptr;			/* what it knows of wptr */
	u64 doorbell_seen;		/* the register value it took last */
	u64 exec;			/* position of the next packet to execute */
	u64 fetch;			/* and to fetch: exec <= fetch <= wptr */
	u32 head, tail;			/* fetched packets: fifo[head..tail) */
	u64 rptr_shown;			/* rptr written back last */
	bool fenced;			/* a FENCE wrote the pointer page: tell the core */
	bool landed;			/* an ATOMIC, FENCE or TRAP ran: wake waits, in a while */
	u32 *fence_word;		/* the pointer page word a FENCE is to write */
	u32 fence_data;
	u64 writeback_at;		/* lag: no write-back before */
	u64 preempt_at, remap_at;	/* preempt: when running */
	u64 idle_wakes;
	u64 preemptions, reloads, wakeups, lost_wakeups, lingered;
	struct tplan_soft_packet fifo[TPLAN_SOFT_FIFO];
};

static int tplan_soft_fault(struct tplan_soft_queue *sq, const struct tplan_soft_packet *e,
			    u32 reason)
{
	tplan_queue_fault(sq->q, e->pos, e->dw0, reason);
	return TPLAN_EXEC_FAULT;
}

/*
 * Take a wptr value if it moves forward within one ring of what was
 * fetched.  With "full", one a whole ring past the rptr written back
 * reads as no work at all: the ring offsets are equal, as when empty.
 */
static void tplan_soft_take_wptr(struct tplan_soft_queue *sq, u64 v)
{
	u64 ahead = v - sq->fetch;

	if (sq->quirks & TPLAN_SOFT_FULL_HANGS && v - sq->rptr_shown == sq->q->ring_size)
		return;
	if (ahead <= sq->q->ring_size && ahead > sq->wptr - sq->fetch)
		sq->wptr = v;
}

/* Fetch (decode) one packet at sq->fetch into the FIFO. */
static void tplan_soft_fetch_one(struct tplan_soft_queue *sq)
{
	struct tplan_queue *q = sq->q;
	struct tplan_soft_packet *e = &sq->fifo[sq->tail % TPLAN_SOFT_FIFO];
	u32 off = sq->fetch & (q->ring_size - 1);
	u32 to_end = (q->ring_size - off) / 4;
	u32 avail = min_t(u64, (sq->wptr - sq->fetch) / 4, to_end);
	const u32 *dw = q->ring + off / 4;
	int n;

	e->pos = sq->fetch;
	e->dw0 = READ_ONCE(dw[0]);
	e->fault = 0;
	n = tplan_sdma_decode(dw, avail, &e->p);
	if (n == -ENODATA) {
		/* Longer than what is there: across the ring end, or cut short. */
		n = tplan_sdma_packet_dwords(dw, to_end);
		e->fault = n == -ENODATA ? TPLAN_FAULT_RING_END : TPLAN_FAULT_BAD_PACKET;
	} else if (n == -EOPNOTSUPP) {
		e->fault = TPLAN_FAULT_UNSUPPORTED;
	} else if (n <= 0) {
		e->fault = TPLAN_FAULT_BAD_PACKET;
	}
	e->ndw = e->fault ? 0 : n;
	sq->fetch += e->ndw * 4ULL;
	sq->tail++;
}

/*
 * Fetch what may be fetched: one packet at a time, or with "ahead" as
 * many as the FIFO and the window hold.  Nothing past a packet that
 * could not be decoded.
 */
static void tplan_soft_fetch(struct tplan_soft_queue *sq)
{
	while (sq->tail - sq->head < TPLAN_SOFT_FIFO && sq->fetch != sq->wptr) {
		if (sq->tail != sq->head &&
		    (!(sq->quirks & TPLAN_SOFT_RPTR_AHEAD) ||
		     !sq->fifo[(sq->tail - 1) % TPLAN_SOFT_FIFO].ndw ||
		     sq->fetch - sq->exec >= TPLAN_SOFT_AHEAD_BYTES))
			break;
		tplan_soft_fetch_one(sq);
	}
}

/*
 * Write rptr back: what was consumed (fetched with "ahead"), maybe late;
 * and tell the core of it and of progress FENCEs, as its poller would.
 */
static void tplan_soft_writeback(struct tplan_soft_queue *sq)
{
	u64 r = sq->quirks & TPLAN_SOFT_RPTR_AHEAD ? sq->fetch : sq->exec;
	bool moved = r != sq->rptr_shown && !READ_ONCE(sq->unmapped);

	if (moved && sq->quirks & TPLAN_SOFT_RPTR_LAG) {
		u64 now = ktime_get_ns();

		if (now < sq->writeback_at)
			moved = false;
		else
			sq->writeback_at = now + TPLAN_SOFT_LAG_NS;
	}
	if (moved) {
		sq->rptr_shown = r;
		/* Release: the ring below r is read (fetched packets are copies). */
		smp_store_release(&sq->q->ptr->rptr, r);
	}
	if (moved || sq->fenced) {
		sq->fenced = false;
		tplan_queue_progress(sq->q);
	}
}

static void tplan_soft_unmap(struct tplan_soft_queue *sq, u64 now)
{
	WRITE_ONCE(sq->unmapped, true);
	/* What is in the register now counts as rung before: not taken after. */
	sq->doorbell_seen = smp_load_acquire(&sq->doorbell);
	sq->remap_at = now + TPLAN_SOFT_PREEMPT_FOR_NS;
	sq->preemptions++;
	trace_tplan_soft_preempt(sq->q->group->id, sq->q->src, sq->q->dst, true, sq->wptr);
}

static void tplan_soft_remap(struct tplan_soft_queue *sq, u64 now)
{
	WRITE_ONCE(sq->unmapped, false);
	/* Pairs with tplan_soft_doorbell(): a doorbell it lost stored wptr first. */
	smp_mb();
	tplan_soft_take_wptr(sq, READ_ONCE(sq->q->ptr->wptr));
	sq->reloads++;
	sq->preempt_at = now + TPLAN_SOFT_PREEMPT_EVERY_NS;
	trace_tplan_soft_preempt(sq->q->group->id, sq->q->src, sq->q->dst, false, sq->wptr);
}

/*
 * What the engine does besides executing, also while it waits in a POLL:
 * preemption, doorbells, fetching, rptr write-back.  Once per packet: the
 * clock is read only where a knob needs it (under TCG, reading it can
 * cost more than executing the packet).
 */
static void tplan_soft_tick(struct tplan_soft_queue *sq)
{
	u64 rung;

	if (sq->quirks & TPLAN_SOFT_PREEMPT) {
		u64 now = ktime_get_ns();

		if (!sq->unmapped && now >= sq->preempt_at)
			tplan_soft_unmap(sq, now);
		else if (sq->unmapped && now >= sq->remap_at)
			tplan_soft_remap(sq, now);
	}
	if (sq->unmapped)
		return;
	/* Acquire: pairs with the doorbell's release. */
	rung = smp_load_acquire(&sq->doorbell);
	if (rung != sq->doorbell_seen) {
		sq->doorbell_seen = rung;
		tplan_soft_take_wptr(sq, rung);
	}
	tplan_soft_fetch(sq);
	tplan_soft_writeback(sq);
}

static struct tplan_soft_queue *tplan_soft_of(struct tplan_sdma_exec *x)
{
	return container_of(x, struct tplan_soft_queue, x);
}

/* The engine's only way to memory: heap ranges of the group, bounds-checked. */
static void *tplan_soft_translate(struct tplan_sdma_exec *x, u64 addr, u64 len)
{
	struct tplan_queue *q = tplan_soft_of(x)->q;

	return tplan_group_translate(q->group, q->src, addr, len);
}

/* A FENCE to a heap word, or to the queue's own pointer page (progress). */
static int tplan_soft_fence(struct tplan_sdma_exec *x, u64 addr, u32 data)
{
	struct tplan_soft_queue *sq = tplan_soft_of(x);
	struct tplan_queue *q = sq->q;
	u32 *p;

	if (addr - q->ptr_dev < PAGE_SIZE && IS_ALIGNED(addr, 4)) {
		/* Written once the packet counts as executed (tplan_soft_retire()). */
		sq->fence_word = (u32 *)((u8 *)q->ptr + (addr - q->ptr_dev));
		sq->fence_data = data;
		return TPLAN_EXEC_DONE;
	}
	p = tplan_group_translate(q->group, q->src, addr, 4);
	if (!p) {
		x->fault = TPLAN_FAULT_BAD_ADDRESS;
		return TPLAN_EXEC_FAULT;
	}
	/* Release: the packets before the fence are done for its reader. */
	smp_store_release(p, data);
	sq->landed = true;
	return TPLAN_EXEC_DONE;
}

static void tplan_soft_trap(struct tplan_sdma_exec *x, u32 int_context)
{
	struct tplan_queue *q = tplan_soft_of(x)->q;

	WRITE_ONCE(q->traps, q->traps + 1);
	tplan_soft_of(x)->landed = true;
}

static void tplan_soft_landed(struct tplan_sdma_exec *x)
{
	tplan_soft_of(x)->landed = true;
}

/*
 * Wake the plan waits of the queue's two ranks, the only ones what ran
 * here concerns, if something landed since the last time: once per batch
 * of fetched packets, and before the thread waits (a POLL, or nothing to
 * do), rather than once per packet.
 */
static void tplan_soft_wake(struct tplan_soft_queue *sq)
{
	if (!sq->landed)
		return;
	sq->landed = false;
	tplan_group_wake_arrivals(sq->q->group, BIT(sq->q->src) | BIT(sq->q->dst));
}

/* A POLL waits: preemption, doorbells, fetching and write-back go on. */
static int tplan_soft_poll_pause(struct tplan_sdma_exec *x, u64 sleep_ns)
{
	struct tplan_soft_queue *sq = tplan_soft_of(x);

	tplan_soft_wake(sq);
	tplan_soft_tick(sq);
	if (sq->unmapped)
		return TPLAN_EXEC_AGAIN;
	tplan_sdma_exec_sleep(sleep_ns);
	return TPLAN_EXEC_DONE;
}

static const struct tplan_sdma_exec_ops tplan_soft_exec_ops = {
	.translate = tplan_soft_translate,
	.fence = tplan_soft_fence,
	.trap = tplan_soft_trap,
	.landed = tplan_soft_landed,
	.poll_pause = tplan_soft_poll_pause,
};

/* Tracepoints of what executed. */
static void tplan_soft_traced(struct tplan_soft_queue *sq, const struct tplan_sdma_packet *p)
{
	const struct tplan_sdma_copy_sub_window *w = &p->u.sub_window;
	struct tplan_queue *q = sq->q;
	u32 esize;

	switch (p->kind) {
	case TPLAN_SDMA_KIND_POLL_REGMEM:
		trace_tplan_poll_satisfied(q->group->id, q->src, q->dst, p->u.poll.addr,
					   p->u.poll.ref);
		break;
	case TPLAN_SDMA_KIND_COPY_LINEAR:
		trace_tplan_copy_done(q->group->id, q->src, q->dst, p->u.copy_linear.dst,
				      p->u.copy_linear.bytes);
		break;
	case TPLAN_SDMA_KIND_COPY_LINEAR_SUB_WINDOW:
		esize = 1U << w->elem_size_log2;
		trace_tplan_copy_done(q->group->id, q->src, q->dst,
				      w->dst.addr + tplan_sdma_window_offset(&w->dst, esize, 0, 0, 0),
				      (u64)w->rect_x * esize * w->rect_y * w->rect_z);
		break;
	}
}

/* Execute a fetched packet. */
static int tplan_soft_exec(struct tplan_soft_queue *sq, const struct tplan_soft_packet *e)
{
	int ret;

	if (e->fault)
		return tplan_soft_fault(sq, e, e->fault);
	ret = tplan_sdma_exec(&sq->x, &e->p, e->pos);
	if (ret == TPLAN_EXEC_FAULT)
		return tplan_soft_fault(sq, e, sq->x.fault);
	if (ret == TPLAN_EXEC_DONE)
		tplan_soft_traced(sq, &e->p);
	return ret;
}

/*
 * The packet ran: count it, then let its progress word (a FENCE to the
 * pointer page) be seen, so that whoever sees the word sees the count.
 */
static void tplan_soft_retire(struct tplan_soft_queue *sq, const struct tplan_soft_packet *e)
{
	struct tplan_queue *q = sq->q;

	sq->exec += e->ndw * 4ULL;
	sq->head++;
	WRITE_ONCE(q->packets, q->packets + 1);
	if (sq->fence_word) {
		/* Release: the packets before the fence are done for its reader. */
		smp_store_release(sq->fence_word, sq->fence_data);
		sq->fence_word = NULL;
		sq->fenced = true;
	}
	tplan_soft_writeback(sq);
}

/* A doorbell rung since the thread looked last? */
static bool tplan_soft_rung(struct tplan_soft_queue *sq)
{
	return READ_ONCE(sq->doorbell) != sq->doorbell_seen;
}

/*
 * Ran dry: look at the doorbell for soft_linger_us on a POLL's back-off
 * schedule: first after 10 us, then at twice the interval each time up
 * to 1 ms apart.  True if one was
 * rung meanwhile; false at once when lingering is off.  The parameter is
 * read at each look, so a change takes effect within a millisecond.
 */
static bool tplan_soft_linger(struct tplan_soft_queue *sq)
{
	u64 slept = 0, step = TPLAN_POLL_SLEEP_MIN_US * NSEC_PER_USEC, limit;

	for (;;) {
		limit = (u64)READ_ONCE(tplan_soft_linger_us) * NSEC_PER_USEC;
		if (slept >= limit || kthread_should_stop())
			return false;
		if (tplan_soft_rung(sq))
			return true;
		step = min(step, limit - slept);
		tplan_sdma_exec_sleep(step);
		slept += step;
		step = min_t(u64, step * 2, TPLAN_POLL_SLEEP_MAX_US * NSEC_PER_USEC);
	}
}

/*
 * Nothing fetched: linger, then sleep until a doorbell, the safety
 * timeout, or what the knobs need (a late rptr write-back, the end of an
 * unmapped spell).
 */
static void tplan_soft_idle(struct tplan_soft_queue *sq)
{
	struct tplan_queue *q = sq->q;
	long timeout = TPLAN_ENGINE_SAFETY;
	unsigned long t0;
	u64 now = ktime_get_ns(), until = 0;

	if (sq->unmapped)
		until = sq->remap_at;
	else if ((sq->quirks & TPLAN_SOFT_RPTR_AHEAD ? sq->fetch : sq->exec) != sq->rptr_shown)
		until = sq->writeback_at;
	if (until) {
		tplan_sdma_exec_sleep(until > now ? until - now : 1);
		return;
	}
	if (READ_ONCE(q->state)) {
		/* Faulted: nothing runs any more, until the queue is freed. */
		wait_event_idle(sq->wq, kthread_should_stop());
		return;
	}
	if (tplan_soft_linger(sq)) {
		sq->lingered++;
	} else {
		t0 = jiffies;
		wait_event_idle_timeout(sq->wq, kthread_should_stop() || tplan_soft_rung(sq),
					timeout);
		if (!tplan_soft_rung(sq))
			return;
		/* Work found only when the safety timeout ran out: a lost wake-up. */
		if (time_after_eq(jiffies, t0 + TPLAN_ENGINE_SAFETY))
			sq->lost_wakeups++;
		else
			sq->wakeups++;
	}
	if (sq->quirks & TPLAN_SOFT_PREEMPT) {
		now = ktime_get_ns();
		/* Every other time, the queue was unmapped while idle: the doorbell is lost. */
		if (sq->idle_wakes++ & 1) {
			tplan_soft_unmap(sq, now);
			atomic64_inc(&sq->doorbells_lost);
		} else
			sq->preempt_at = now + TPLAN_SOFT_PREEMPT_EVERY_NS;
	}
}

static int tplan_soft_thread(void *data)
{
	struct tplan_soft_queue *sq = data;
	struct tplan_queue *q = sq->q;

	while (!kthread_should_stop()) {
		struct tplan_soft_packet *e;
		int ret;

		if (READ_ONCE(q->state)) {
			tplan_soft_idle(sq);
			continue;
		}
		tplan_soft_tick(sq);
		if (sq->unmapped || sq->head == sq->tail) {
			tplan_soft_wake(sq);
			tplan_soft_idle(sq);
			continue;
		}
		e = &sq->fifo[sq->head % TPLAN_SOFT_FIFO];
		ret = tplan_soft_exec(sq, e);
		if (ret != TPLAN_EXEC_DONE)
			continue;
		tplan_soft_retire(sq, e);
		/* The batch fetched is done: its waiters may look. */
		if (sq->head == sq->tail)
			tplan_soft_wake(sq);
		cond_resched();
	}
	return 0;
}

static int tplan_soft_start(struct tplan_queue *q)
{
	struct tplan_soft_queue *sq;
	struct task_struct *t;

	sq = kvzalloc(sizeof(*sq), GFP_KERNEL_ACCOUNT);
	if (!sq)
		return -ENOMEM;
	sq->q = q;
	sq->x.ops = &tplan_soft_exec_ops;
	sq->x.max_copy_bytes = q->group->limits.max_copy_bytes;
	sq->quirks = tplan_soft_quirks_next();
	sq->preempt_at = ktime_get_ns() + TPLAN_SOFT_PREEMPT_EVERY_NS;
	init_waitqueue_head(&sq->wq);
	atomic64_set(&sq->doorbells_lost, 0);
	q->engine_data = sq;
	/* Named by the group's serial number: the key is nobody else's business. */
	t = kthread_run(tplan_soft_thread, sq, "tplan-g%u/%u-%u", q->group->id, q->src, q->dst);
	if (IS_ERR(t)) {
		q->engine_data = NULL;
		kvfree(sq);
		return PTR_ERR(t);
	}
	sq->thread = t;
	return 0;
}

static void tplan_soft_stop(struct tplan_queue *q)
{
	struct tplan_soft_queue *sq = q->engine_data;

	kthread_stop(sq->thread);
	if (!READ_ONCE(q->state))
		WRITE_ONCE(q->state, TPLAN_QUEUE_STOPPED);
	q->engine_data = NULL;
	kvfree(sq);
}

/*
 * A 64-bit write of the new wptr, as a gfx9 doorbell; while the queue is
 * unmapped (preempt) it is lost, and the engine reads the pointer page
 * when it comes back, so the owner must have stored wptr there first.
 */
static void tplan_soft_doorbell(struct tplan_queue *q, u64 wptr)
{
	struct tplan_soft_queue *sq = q->engine_data;

	/* Pairs with tplan_soft_remap(): the pointer page before the check. */
	smp_mb();
	if (READ_ONCE(sq->unmapped)) {
		atomic64_inc(&sq->doorbells_lost);
		return;
	}
	/* Release: pairs with tplan_soft_tick(). */
	smp_store_release(&sq->doorbell, wptr);
	/* Lingering, the thread finds it by itself: only a sleeper needs waking. */
	if (wq_has_sleeper(&sq->wq))
		wake_up(&sq->wq);
}

static void tplan_soft_show(struct seq_file *m, struct tplan_queue *q)
{
	struct tplan_soft_queue *sq = q->engine_data;
	char buf[32];

	tplan_soft_quirks_print(buf, sizeof(buf), sq->quirks);
	/* The thread's counters, read as they stand. */
	seq_printf(m, "quirks: %s\nfetched: %llu\nexecuted: %llu\nrptr_shown: %llu\n",
		   buf, READ_ONCE(sq->fetch), READ_ONCE(sq->exec), READ_ONCE(sq->rptr_shown));
	seq_printf(m, "doorbells_lost: %lld\npreemptions: %llu\nwptr_reloads: %llu\n",
		   (long long)atomic64_read(&sq->doorbells_lost), READ_ONCE(sq->preemptions),
		   READ_ONCE(sq->reloads));
	seq_printf(m, "wakeups: %llu\nlost_wakeups: %llu\nlingered: %llu\n",
		   READ_ONCE(sq->wakeups), READ_ONCE(sq->lost_wakeups), READ_ONCE(sq->lingered));
}

const struct tplan_engine_ops tplan_soft_engine = {
	.name = "soft",
	.start = tplan_soft_start,
	.stop = tplan_soft_stop,
	.doorbell = tplan_soft_doorbell,
	.show = tplan_soft_show,
};
