// SPDX-License-Identifier: GPL-2.0
/*
 * The software SDMA engine: one kernel thread per sending rank of a group
 * (a worker, as one engine serves several queues) that takes that rank's
 * queues in turn, fetches each ring with the packet codec and executes it
 * on heap memory.  A queue whose POLL is not met gives the thread to the
 * next queue, so the thread sleeps only when none of its queues can move.  It reaches
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
 * With every queue dry, the thread first lingers (soft_linger_us): it
 * looks at its doorbells on the POLL back-off schedule, as an engine
 * takes a doorbell without being woken, so that whoever rings then only
 * stores the register; waking a sleeping thread costs the ringer far more
 * (under TCG, tens of microseconds: most of a re-arm's cost).  Then it
 * sleeps on its wait queue and costs next to nothing: it also wakes once
 * a second by itself, and counts a wake-up that finds work only then as a
 * lost one (debugfs), so a missed doorbell costs a second and shows,
 * instead of a hang.  The packets themselves are
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
#define TPLAN_SOFT_TURN		64		/* packets a queue runs before the next's turn */

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

/*
 * The thread of a group's queues from one rank.  The workers list and
 * each worker's queues change under tplan_soft_workers_lock; the thread
 * holds lock while it runs one of its queues, so a queue taken off the
 * list under it runs no more.
 */
struct tplan_soft_worker {
	struct list_head node;		/* on tplan_soft_workers */
	const struct tplan_group *group;
	u32 src;
	struct task_struct *thread;
	wait_queue_head_t wq;
	bool kicked;			/* a doorbell rung since the thread's pass began */
	atomic_t leaving;		/* queues waiting to be taken off: turns end */
	struct mutex lock;
	struct list_head queues;
	u32 woke;			/* how the thread came out of idle */
};

/* tplan_soft_worker.woke: what the next pass counts on the queues rung. */
enum tplan_soft_woke {
	TPLAN_SOFT_WOKE_NOT,		/* not idle since the last pass */
	TPLAN_SOFT_WOKE_LINGERING,	/* a doorbell seen while lingering */
	TPLAN_SOFT_WOKE_WOKEN,		/* woken by a doorbell */
	TPLAN_SOFT_WOKE_BY_ITSELF,	/* the safety timeout: a lost wake-up */
};

static LIST_HEAD(tplan_soft_workers);
static DEFINE_MUTEX(tplan_soft_workers_lock);

struct tplan_soft_queue {
	struct tplan_queue *q;
	struct tplan_sdma_exec x;	/* executes the packets (sdma_exec.c) */
	struct tplan_soft_worker *w;
	struct list_head node;		/* on the worker's queues */
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
	tplan_group_wake_landed(sq->q->group, sq->q->src, sq->q->dst);
}

/*
 * A POLL waits: preemption, doorbells, fetching and write-back go on, and
 * the thread goes on to its other queues; the POLL runs again (with its
 * retries) at this queue's next turn.  The thread sleeps, on the POLL
 * back-off schedule, only when none of its queues could move.
 */
static int tplan_soft_poll_pause(struct tplan_sdma_exec *x, u64 sleep_ns)
{
	struct tplan_soft_queue *sq = tplan_soft_of(x);

	tplan_soft_wake(sq);
	tplan_soft_tick(sq);
	return TPLAN_EXEC_AGAIN;
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

/* What one turn of a queue came to. */
enum { TPLAN_SOFT_DRY, TPLAN_SOFT_POLLING, TPLAN_SOFT_RAN };

/*
 * When a dry queue needs its thread back by itself (what the knobs need:
 * the end of an unmapped spell, a late rptr write-back): 0 if never.
 */
static u64 tplan_soft_due(struct tplan_soft_queue *sq)
{
	if (sq->unmapped)
		return sq->remap_at;
	if ((sq->quirks & TPLAN_SOFT_RPTR_AHEAD ? sq->fetch : sq->exec) != sq->rptr_shown)
		return sq->writeback_at;
	return 0;
}

/*
 * A queue's turn: up to TPLAN_SOFT_TURN packets, until it runs dry or a
 * POLL waits; *due gets the earliest time a dry queue needs the thread.
 */
static int tplan_soft_turn(struct tplan_soft_queue *sq, u64 *due)
{
	struct tplan_soft_packet *e;
	u32 n;
	u64 at;
	int ret;

	/* Faulted (or going): nothing runs any more. */
	if (READ_ONCE(sq->q->state) || READ_ONCE(sq->x.stop))
		return TPLAN_SOFT_DRY;
	for (n = 0; n < TPLAN_SOFT_TURN && !atomic_read(&sq->w->leaving); n++) {
		tplan_soft_tick(sq);
		if (sq->unmapped || sq->head == sq->tail) {
			tplan_soft_wake(sq);
			at = tplan_soft_due(sq);
			if (at && (!*due || at < *due))
				*due = at;
			break;
		}
		e = &sq->fifo[sq->head % TPLAN_SOFT_FIFO];
		ret = tplan_soft_exec(sq, e);
		if (ret != TPLAN_EXEC_DONE) {
			if (n)
				break;
			return ret == TPLAN_EXEC_AGAIN ? TPLAN_SOFT_POLLING : TPLAN_SOFT_DRY;
		}
		tplan_soft_retire(sq, e);
		/* The batch fetched is done: its waiters may look. */
		if (sq->head == sq->tail)
			tplan_soft_wake(sq);
	}
	return n ? TPLAN_SOFT_RAN : TPLAN_SOFT_DRY;
}

/*
 * Every queue dry: look at the doorbells for soft_linger_us on a POLL's
 * back-off schedule: first after 10 us, then at twice the interval each
 * time up to 1 ms apart.  True if one was rung meanwhile; false at once
 * when lingering is off.  The parameter is read at each look, so a change
 * takes effect within a millisecond.
 */
static bool tplan_soft_linger(struct tplan_soft_worker *w)
{
	u64 slept = 0, step = TPLAN_POLL_SLEEP_MIN_US * NSEC_PER_USEC, limit;

	for (;;) {
		limit = (u64)READ_ONCE(tplan_soft_linger_us) * NSEC_PER_USEC;
		if (slept >= limit || kthread_should_stop())
			return false;
		if (READ_ONCE(w->kicked))
			return true;
		step = min(step, limit - slept);
		tplan_sdma_exec_sleep(step);
		slept += step;
		step = min_t(u64, step * 2, TPLAN_POLL_SLEEP_MAX_US * NSEC_PER_USEC);
	}
}

/*
 * Every queue dry: sleep until what the knobs need (due), or linger, then
 * sleep until a doorbell or the safety timeout.
 */
static void tplan_soft_idle(struct tplan_soft_worker *w, u64 due)
{
	unsigned long t0;
	u64 now;

	if (due) {
		now = ktime_get_ns();
		tplan_sdma_exec_sleep(due > now ? due - now : 1);
		return;
	}
	if (tplan_soft_linger(w)) {
		w->woke = TPLAN_SOFT_WOKE_LINGERING;
		return;
	}
	t0 = jiffies;
	wait_event_idle_timeout(w->wq, kthread_should_stop() || READ_ONCE(w->kicked),
				TPLAN_ENGINE_SAFETY);
	/* Work found only when the safety timeout ran out: a lost wake-up. */
	w->woke = time_after_eq(jiffies, t0 + TPLAN_ENGINE_SAFETY) ? TPLAN_SOFT_WOKE_BY_ITSELF :
								      TPLAN_SOFT_WOKE_WOKEN;
}

/*
 * Back from idle: count how each queue rung meanwhile was found, and
 * with "preempt", every other such wake-up finds it unmapped (the
 * doorbell lost).  Caller holds w->lock.
 */
static void tplan_soft_woken(struct tplan_soft_worker *w)
{
	struct tplan_soft_queue *sq;
	u64 now;

	list_for_each_entry(sq, &w->queues, node) {
		if (READ_ONCE(sq->q->state) || !tplan_soft_rung(sq))
			continue;
		if (w->woke == TPLAN_SOFT_WOKE_LINGERING)
			sq->lingered++;
		else if (w->woke == TPLAN_SOFT_WOKE_BY_ITSELF)
			sq->lost_wakeups++;
		else
			sq->wakeups++;
		if (!(sq->quirks & TPLAN_SOFT_PREEMPT))
			continue;
		now = ktime_get_ns();
		if (sq->idle_wakes++ & 1) {
			tplan_soft_unmap(sq, now);
			atomic64_inc(&sq->doorbells_lost);
		} else {
			sq->preempt_at = now + TPLAN_SOFT_PREEMPT_EVERY_NS;
		}
	}
	w->woke = TPLAN_SOFT_WOKE_NOT;
}

static int tplan_soft_thread(void *data)
{
	struct tplan_soft_worker *w = data;
	u64 step = TPLAN_POLL_SLEEP_MIN_US * NSEC_PER_USEC, due, now;
	struct tplan_soft_queue *sq;
	int most;

	while (!kthread_should_stop()) {
		WRITE_ONCE(w->kicked, false);
		/* Pairs with tplan_soft_doorbell(): a ring this pass misses kicks. */
		smp_mb();
		due = 0;
		most = TPLAN_SOFT_DRY;
		mutex_lock(&w->lock);
		if (w->woke)
			tplan_soft_woken(w);
		list_for_each_entry(sq, &w->queues, node)
			most = max(most, tplan_soft_turn(sq, &due));
		mutex_unlock(&w->lock);
		/* Turns cut short for a queue going: the others may not be dry. */
		if (atomic_read(&w->leaving))
			most = max(most, TPLAN_SOFT_POLLING);
		if (most == TPLAN_SOFT_RAN) {
			step = TPLAN_POLL_SLEEP_MIN_US * NSEC_PER_USEC;
			cond_resched();
			continue;
		}
		if (READ_ONCE(w->kicked))
			continue;
		if (most == TPLAN_SOFT_POLLING) {
			/* POLLs wait, nothing else can move: back off as one POLL would. */
			now = ktime_get_ns();
			tplan_sdma_exec_sleep(due ? min(step, due > now ? due - now : 1) : step);
			step = min_t(u64, step * 2, TPLAN_POLL_SLEEP_MAX_US * NSEC_PER_USEC);
			continue;
		}
		step = TPLAN_POLL_SLEEP_MIN_US * NSEC_PER_USEC;
		tplan_soft_idle(w, due);
	}
	return 0;
}

/* The worker of q's sender, made if it has none.  Caller holds tplan_soft_workers_lock. */
static struct tplan_soft_worker *tplan_soft_worker_get(struct tplan_queue *q)
{
	struct tplan_soft_worker *w;
	struct task_struct *t;

	list_for_each_entry(w, &tplan_soft_workers, node)
		if (w->group == q->group && w->src == q->src)
			return w;
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->group = q->group;
	w->src = q->src;
	init_waitqueue_head(&w->wq);
	mutex_init(&w->lock);
	INIT_LIST_HEAD(&w->queues);
	atomic_set(&w->leaving, 0);
	/* Named by the group's serial number: the key is nobody else's business. */
	t = kthread_create(tplan_soft_thread, w, "tplan-g%u/%u", q->group->id, q->src);
	if (IS_ERR(t)) {
		mutex_destroy(&w->lock);
		kfree(w);
		return ERR_CAST(t);
	}
	w->thread = t;
	list_add(&w->node, &tplan_soft_workers);
	wake_up_process(t);
	return w;
}

static int tplan_soft_start(struct tplan_queue *q)
{
	struct tplan_soft_worker *w;
	struct tplan_soft_queue *sq;

	sq = kvzalloc(sizeof(*sq), GFP_KERNEL_ACCOUNT);
	if (!sq)
		return -ENOMEM;
	sq->q = q;
	sq->x.ops = &tplan_soft_exec_ops;
	sq->x.max_copy_bytes = q->group->limits.max_copy_bytes;
	sq->quirks = tplan_soft_quirks_next();
	sq->preempt_at = ktime_get_ns() + TPLAN_SOFT_PREEMPT_EVERY_NS;
	atomic64_set(&sq->doorbells_lost, 0);
	mutex_lock(&tplan_soft_workers_lock);
	w = tplan_soft_worker_get(q);
	if (IS_ERR(w)) {
		mutex_unlock(&tplan_soft_workers_lock);
		kvfree(sq);
		return PTR_ERR(w);
	}
	sq->w = w;
	q->engine_data = sq;
	mutex_lock(&w->lock);
	list_add_tail(&sq->node, &w->queues);
	mutex_unlock(&w->lock);
	mutex_unlock(&tplan_soft_workers_lock);
	return 0;
}

/* Returns once the queue runs no more; its worker goes with its last queue. */
static void tplan_soft_stop(struct tplan_queue *q)
{
	struct tplan_soft_queue *sq = q->engine_data;
	struct tplan_soft_worker *w = sq->w;
	bool last;

	/* A copy or POLL of this queue in progress stops at its next look. */
	WRITE_ONCE(sq->x.stop, true);
	atomic_inc(&w->leaving);
	mutex_lock(&tplan_soft_workers_lock);
	mutex_lock(&w->lock);
	list_del(&sq->node);
	last = list_empty(&w->queues);
	mutex_unlock(&w->lock);
	atomic_dec(&w->leaving);
	if (last) {
		list_del(&w->node);
		kthread_stop(w->thread);
		mutex_destroy(&w->lock);
		kfree(w);
	}
	mutex_unlock(&tplan_soft_workers_lock);
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
	/* Release: the register before the kick (pairs with tplan_soft_thread()). */
	smp_store_release(&sq->w->kicked, true);
	/* Lingering, the thread finds it by itself: only a sleeper needs waking. */
	if (wq_has_sleeper(&sq->w->wq))
		wake_up(&sq->w->wq);
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
