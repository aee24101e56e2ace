// SPDX-License-Identifier: GPL-2.0
/*
 * Queues: one ring per (rank -> peer), owned by the sending rank; the
 * owner side of the ring (reserve, pad, publish), host put and quiet, and
 * the prepared-copy budget.  queue.h describes the pointer protocol.
 *
 * The budget rule (ARCHITECTURE §3): bytes of prepared chains whose gate
 * FENCE (the module's, right after the chain's POLL) has not run yet are
 * charged to the queue (the FENCE included) and may not exceed
 * ring_size * prep_limit / 100.  While anything is charged, put and quiet
 * fail with EBUSY instead of queueing or waiting behind a gate that only a
 * not-yet-launched kernel could open.  Every other wait in this file is
 * on work the engine can finish by itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/debugfs.h>

#include "tplan_priv.h"
#include "queue.h"
#include "ring.h"
#include "tplan_sdma.h"
#include "tplan_trace.h"
#include "compat.h"

#define TPLAN_MARKS_INITIAL 64
#define TPLAN_FENCE_BYTES (TPLAN_SDMA_FENCE_DW * 4)

/* The pointer page as uapi/tplan.h documents it. */
static_assert(offsetof(struct tplan_qptr, wptr) == TPLAN_QPTR_WPTR);
static_assert(offsetof(struct tplan_qptr, rptr) == TPLAN_QPTR_RPTR);
static_assert(offsetof(struct tplan_qptr, gate_seq) == TPLAN_QPTR_GATE_SEQ);
static_assert(offsetof(struct tplan_qptr, done_seq) == TPLAN_QPTR_DONE_SEQ);
static_assert(TPLAN_CHAIN_FENCE_BYTES == TPLAN_FENCE_BYTES);

/*
 * A round template starts with the POLL on its receiver's release word,
 * which the engine looks at every interval, as at the chains' ready POLLs.
 */
#define TPLAN_ROUND_HEAD_DW		TPLAN_SDMA_POLL_DW
static_assert(TPLAN_ROUND_HEAD_DW * sizeof(u32) == TPLAN_ROUND_HEAD_BYTES);
#define TPLAN_RELEASE_POLL_INTERVAL	10

static struct tplan_queue *tplan_queue_create(struct tplan_file *tf, u32 dst)
{
	struct tplan_group *g = tf->group;
	u32 ring_size = tplan_params.ring_size;
	struct tplan_queue *q;
	int ret;

	ret = tplan_queue_slot_get();
	if (ret)
		return ERR_PTR(ret);
	ret = tplan_charge(tf->user, ring_size + PAGE_SIZE);
	if (ret)
		goto err_slot;
	ret = -ENOMEM;
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		goto err_uncharge;
	q->ring_size = ring_size;
	/* Zeroed: a zero dword is a one-dword NOP. */
	q->ring = __vmalloc(ring_size, TPLAN_GFP_USER_SIZED | __GFP_ZERO);
	q->ptr_page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	q->marks = kvcalloc(TPLAN_MARKS_INITIAL, sizeof(*q->marks), GFP_KERNEL_ACCOUNT);
	if (!q->ring || !q->ptr_page || !q->marks)
		goto err_free;
	q->ptr = page_address(q->ptr_page);
	q->group = g;
	q->src = tf->rank;
	q->dst = dst;
	q->ptr_dev = tplan_group_qptr_dev(g, q->src, dst);
	refcount_inc(&tf->user->ref);
	q->user = tf->user;
	q->mark_cap = TPLAN_MARKS_INITIAL;
	q->gate_next = 1;
	q->prep_limit = tplan_budget_limit(q->ring_size, tplan_params.prep_limit_pct);
	mutex_init(&q->wlock);
	spin_lock_init(&q->budget_lock);
	init_waitqueue_head(&q->owner_wq);

	q->engine = g->engine == TPLAN_ENGINE_KFD ? &tplan_kfd_engine : &tplan_soft_engine;
	ret = q->engine->start(q);
	if (ret) {
		tplan_user_put(q->user);
		goto err_free;
	}
	return q;

err_free:
	kvfree(q->marks);
	if (q->ptr_page)
		__free_page(q->ptr_page);
	vfree(q->ring);
	kfree(q);
err_uncharge:
	tplan_uncharge(tf->user, ring_size + PAGE_SIZE);
err_slot:
	tplan_queue_slot_put();
	return ERR_PTR(ret);
}

/*
 * The owner's mappings hold pages of their own (vm_insert_page()), so
 * freeing here never pulls memory from under a mapping; and they hold the
 * file, so a queue goes only once none is left.
 */
static void tplan_queue_free(struct tplan_queue *q)
{
	/* debugfs first: its readers look at the engine's state. */
	debugfs_remove(q->debugfs);
	/* The KFD engine may keep ring and pointer page a while (kfd_engine.c). */
	q->engine->stop(q);
	kvfree(q->marks);
	if (q->ptr_page)
		__free_page(q->ptr_page);
	vfree(q->ring);
	tplan_uncharge(q->user, q->ring_size + PAGE_SIZE);
	tplan_user_put(q->user);
	mutex_destroy(&q->wlock);
	kfree(q);
	tplan_queue_slot_put();
}

/*
 * The (tf's rank -> peer) queue, created on first use.  Two threads may
 * race to create it: the second frees its own.
 */
int tplan_queue_get(struct tplan_file *tf, u32 peer, struct tplan_queue **qp)
{
	struct tplan_group *g = tplan_file_group(tf);
	struct tplan_queue *q, *fresh;

	if (!g)
		return -ENOTCONN;
	if (peer >= g->world_size || peer == tf->rank)
		return -EINVAL;
	q = READ_ONCE(g->queues[tf->rank][peer]);
	if (q) {
		*qp = q;
		return 0;
	}
	fresh = tplan_queue_create(tf, peer);
	if (IS_ERR(fresh))
		return PTR_ERR(fresh);
	mutex_lock(&g->lock);
	q = g->queues[tf->rank][peer];
	if (!q)
		WRITE_ONCE(g->queues[tf->rank][peer], fresh);
	mutex_unlock(&g->lock);
	if (q) {
		tplan_queue_free(fresh);
	} else {
		q = fresh;
		tplan_debugfs_queue_add(q);
	}
	*qp = q;
	return 0;
}

/* Release of rank src's file: stop and free every queue it owns. */
void tplan_queues_destroy(struct tplan_group *g, u32 src)
{
	struct tplan_queue *q;
	u32 dst;

	for (dst = 0; dst < g->world_size; dst++) {
		mutex_lock(&g->lock);
		q = g->queues[src][dst];
		WRITE_ONCE(g->queues[src][dst], NULL);
		mutex_unlock(&g->lock);
		if (q)
			tplan_queue_free(q);
	}
}

void tplan_queue_wake(struct tplan_queue *q)
{
	wake_up_all(&q->owner_wq);
}

/* FAULT or STOPPED, with acquire: the fault fields are valid after it. */
u32 tplan_queue_fault_state(struct tplan_queue *q)
{
	/* Pairs with tplan_queue_fault()'s release. */
	return smp_load_acquire(&q->state);
}

/*
 * The engine's rptr, as far as it can be true: between wptr - ring_size
 * and wptr (anything else reads as a full ring).  Read before wptr, so
 * an honest rptr is never ahead of the wptr it is checked against.
 */
u64 tplan_queue_rptr(struct tplan_queue *q)
{
	/* Acquire: the engine is done reading the ring below it. */
	u64 r = smp_load_acquire(&q->ptr->rptr);
	u64 w = READ_ONCE(q->wptr);

	return w - r > q->ring_size ? w - q->ring_size : r;
}

/*
 * The done sequence the engine reached, widened to the 64 bits the module
 * hands out: never past the last batch published.  Read before done_last,
 * so an honest word is never ahead of it.
 */
u64 tplan_queue_done(struct tplan_queue *q)
{
	/* Acquire: what ran before the FENCE is done for the reader. */
	u32 word = smp_load_acquire(&q->ptr->done_seq);
	u64 last = READ_ONCE(q->done_last);
	u32 behind = (u32)last - word;

	return behind > last ? 0 : last - behind;
}

/* Has the batch whose done FENCE writes seq run (0: nothing queued yet)? */
bool tplan_queue_done_passed(struct tplan_queue *q, u64 seq)
{
	return tplan_queue_done(q) >= seq;
}

u32 tplan_queue_state(struct tplan_queue *q)
{
	int state = tplan_queue_fault_state(q);

	if (state)
		return state;
	return tplan_queue_done(q) == READ_ONCE(q->done_last) ? TPLAN_QUEUE_IDLE :
								 TPLAN_QUEUE_BUSY;
}

/*
 * Forget the gated bytes whose gate FENCE ran, and give back raw chains'
 * reservations with them.
 */
static void tplan_queue_release_marks(struct tplan_queue *q)
{
	struct tplan_prep_mark *m;
	u32 gate;

	if (READ_ONCE(q->mark_head) == READ_ONCE(q->mark_tail))
		return;
	/* Acquire: pairs with the FENCE's release, as any progress word. */
	gate = smp_load_acquire(&q->ptr->gate_seq);
	spin_lock(&q->budget_lock);
	while (q->mark_head != q->mark_tail) {
		m = &q->marks[q->mark_head % q->mark_cap];
		if ((s32)(gate - m->seq) < 0)
			break;
		q->prep_charged -= m->bytes;
		q->prep_reserved -= m->unreserve;
		q->mark_head++;
	}
	spin_unlock(&q->budget_lock);
}

/*
 * Engine: rptr or a progress word may have moved (what a hardware
 * engine's poller calls when it sees them change).
 */
void tplan_queue_progress(struct tplan_queue *q)
{
	tplan_queue_release_marks(q);
	trace_tplan_progress(q->group->id, q->src, q->dst, READ_ONCE(q->ptr->rptr),
			     READ_ONCE(q->ptr->gate_seq), READ_ONCE(q->ptr->done_seq));
	/* wq_has_sleeper() orders the words before the waiter check. */
	if (wq_has_sleeper(&q->owner_wq))
		wake_up_all(&q->owner_wq);
}

/* Engine: stop at the packet at offset (a queue position) and say why. */
void tplan_queue_fault(struct tplan_queue *q, u64 offset, u32 dword, u32 reason)
{
	struct tplan_fault_record f;

	q->fault_offset = offset;
	q->fault_dword = dword;
	q->fault_reason = reason;
	/* Release: whoever sees FAULT (tplan_queue_fault_state()) sees where and why. */
	smp_store_release(&q->state, TPLAN_QUEUE_FAULT);
	trace_tplan_fault(q->group->id, q->src, q->dst, offset, dword, reason);
	pr_warn_ratelimited("group %u queue %u->%u stopped at ring offset %llu, dword 0x%08x: fault %u\n",
			    q->group->id, q->src, q->dst, offset, dword, reason);
	wake_up_all(&q->owner_wq);
	f = (struct tplan_fault_record) {
		.src = q->src, .dst = q->dst, .reason = reason, .dword = dword,
		.offset = offset,
	};
	tplan_group_note_fault(q->group, &f);
}

/* Why the owner may not use the queue now: 0, ECONNRESET, EIO or the engine's (ENXIO). */
int tplan_queue_usable(struct tplan_queue *q)
{
	int broken = READ_ONCE(q->group->broken);

	if (broken)
		return broken;
	if (READ_ONCE(q->state))
		return -EIO;
	return q->engine->usable ? q->engine->usable(q) : 0;
}

/* Bytes gated now, the chains whose gate FENCE ran forgotten first. */
static u32 tplan_queue_charged(struct tplan_queue *q)
{
	tplan_queue_release_marks(q);
	return READ_ONCE(q->prep_charged);
}

/* Reserved now, raw chains whose gate FENCE ran given back first. */
static u32 tplan_queue_reserved(struct tplan_queue *q)
{
	tplan_queue_release_marks(q);
	return READ_ONCE(q->prep_reserved);
}

/*
 * May the host queue work (put, inject) or wait (quiet) here?  Not while
 * prepared chains wait on their gates (the budget rule, top of file), nor
 * while a plan round is staged.
 */
static int tplan_queue_host_usable(struct tplan_queue *q)
{
	int ret = tplan_queue_usable(q);

	if (ret)
		return ret;
	return READ_ONCE(q->staged) || tplan_queue_charged(q) ? -EBUSY : 0;
}

/* Emit a FENCE writing data to the pointer page word at off.  Caller holds wlock. */
static u32 *tplan_queue_emit(struct tplan_queue *q, u32 ndw);

static void tplan_queue_emit_fence(struct tplan_queue *q, u32 off, u32 data)
{
	struct tplan_sdma_fence fence = { .addr = q->ptr_dev + off, .data = data };

	tplan_sdma_encode_fence(tplan_queue_emit(q, TPLAN_SDMA_FENCE_DW), TPLAN_SDMA_FENCE_DW,
				&fence);
}

/*
 * End what is written as a batch, its done FENCE last, and store wptr in
 * the pointer page; the engine learns of it at the next doorbell.  Caller
 * holds wlock and made room for the FENCE (tplan_queue_fits()).
 */
static void tplan_queue_commit(struct tplan_queue *q)
{
	lockdep_assert_held(&q->wlock);
	if (q->wtail == q->wptr)
		return;
	tplan_queue_emit_fence(q, TPLAN_QPTR_DONE_SEQ, (u32)(q->done_last + 1));
	WRITE_ONCE(q->done_last, q->done_last + 1);
	WRITE_ONCE(q->wptr, q->wtail);
	/* Release: the packets are in the ring before the pointer says so. */
	smp_store_release(&q->ptr->wptr, q->wptr);
}

/* Ring the doorbell with wptr, unless the last doorbell carried it.  Caller holds wlock. */
static void tplan_queue_ring_locked(struct tplan_queue *q)
{
	lockdep_assert_held(&q->wlock);
	if (q->rung == q->wptr)
		return;
	q->rung = q->wptr;
	/* The pointer in memory before the doorbell: a restored engine reads it. */
	wmb();
	atomic64_inc(&q->doorbells);
	trace_tplan_doorbell(q->group->id, q->src, q->dst, q->wptr, q->done_last);
	q->engine->doorbell(q, q->wptr);
}

/* Hand what is written to the engine: commit it, ring the doorbell. */
static void tplan_queue_publish(struct tplan_queue *q)
{
	tplan_queue_commit(q);
	tplan_queue_ring_locked(q);
}

/* Free ring bytes after the writer's tail, as the engine has consumed so far. */
static u64 tplan_queue_room(struct tplan_queue *q)
{
	u64 used = READ_ONCE(q->wtail) - tplan_queue_rptr(q);

	return used < q->ring_size ? q->ring_size - used : 0;
}

/*
 * Can packets ending at queue position end (padding included) be written
 * after the tail, with the batch's done FENCE after them?  Strictly less
 * than the free space: the ring is never completely full (an engine
 * would read wptr == rptr + ring_size as empty).
 */
static u64 tplan_queue_need_to(struct tplan_queue *q, u64 end)
{
	return end + tplan_ring_pad(end, q->ring_size, TPLAN_FENCE_BYTES) + TPLAN_FENCE_BYTES -
	       q->wtail;
}

static bool tplan_queue_fits(struct tplan_queue *q, u64 end)
{
	return tplan_queue_need_to(q, end) < tplan_queue_room(q);
}

/*
 * Wait, without wlock, until more than need bytes are free.  The deadline
 * (timeout_ms, 0: the default) is one of no progress: it moves on
 * whenever the engine frees space, so
 * a long transfer that streams steadily never times out.  0, -ETIMEDOUT,
 * -ERESTARTSYS (interruptible) or -EINTR (killable, dying), -EIO,
 * -ECONNRESET.
 */
static int tplan_queue_wait_room(struct tplan_queue *q, u64 need, bool killable, u32 timeout_ms)
{
	u64 deadline = tplan_deadline(timeout_ms), seen = tplan_queue_rptr(q);
	int ret;

	for (;;) {
		ret = tplan_wait_deadline(q->owner_wq, tplan_queue_room(q) > need ||
					  tplan_queue_usable(q) ||
					  tplan_queue_rptr(q) != seen,
					  deadline, killable);
		if (tplan_queue_usable(q))
			return tplan_queue_usable(q);
		if (tplan_queue_room(q) > need)
			return 0;
		if (tplan_queue_rptr(q) != seen) {	/* progress */
			seen = tplan_queue_rptr(q);
			deadline = tplan_deadline(timeout_ms);
			continue;
		}
		if (ret)
			return ret;
	}
}

/*
 * Called with wlock held: 0, with wlock still held, when more than need
 * bytes are free after the tail.  Otherwise publishes what is written
 * (it may be what the engine must run to free space), drops wlock and
 * waits for room: -EAGAIN when there may be room now (look again), or
 * the wait's error.
 */
static int tplan_queue_make_room(struct tplan_queue *q, u64 need, u32 timeout_ms)
{
	int ret;

	lockdep_assert_held(&q->wlock);
	if (need < tplan_queue_room(q))
		return 0;
	tplan_queue_publish(q);
	mutex_unlock(&q->wlock);
	ret = tplan_queue_wait_room(q, need, true, timeout_ms);
	return ret ?: -EAGAIN;
}

/* Fill bytes from q->wtail with NOP packets (each at most NOP_MAX_DW). */
static void tplan_queue_pad(struct tplan_queue *q, u32 bytes)
{
	u32 ndw = bytes / 4;

	while (ndw) {
		struct tplan_sdma_nop nop = { .dwords = min_t(u32, ndw, TPLAN_SDMA_NOP_MAX_DW) };
		u32 *dw = q->ring + ((q->wtail & (q->ring_size - 1)) >> 2);

		tplan_sdma_encode_nop(dw, nop.dwords, &nop);
		q->wtail += nop.dwords * 4;
		ndw -= nop.dwords;
	}
}

/*
 * Room for one packet of ndw dwords at the write position, after padding
 * to the ring end if it would straddle it.  The caller holds wlock, made
 * sure of the room, fills the dwords; tplan_queue_publish() hands them
 * to the engine.
 */
static u32 *tplan_queue_emit(struct tplan_queue *q, u32 ndw)
{
	u32 pad = tplan_ring_pad(q->wtail, q->ring_size, ndw * 4);
	u32 *dw;

	if (pad)
		tplan_queue_pad(q, pad);
	dw = q->ring + ((q->wtail & (q->ring_size - 1)) >> 2);
	q->wtail += ndw * 4;
	return dw;
}

/* The queue position after one more packet of ndw dwords written at pos. */
static u64 tplan_queue_after(struct tplan_queue *q, u64 pos, u32 ndw)
{
	return pos + tplan_ring_pad(pos, q->ring_size, ndw * 4) + ndw * 4;
}

static bool tplan_range_ok(u64 off, u64 len, u64 size)
{
	return off < size && len <= size - off;
}

int tplan_put(struct tplan_ucmd *ucmd)
{
	struct tplan_put *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_queue *q;
	struct tplan_group *g;
	u64 done = 0, src, dst, need;
	bool signalled = false;
	u32 *dw, fit;
	int ret;

	if (cmd->flags & ~TPLAN_PUT_FLAGS_ALL || cmd->__reserved)
		return -EINVAL;
	if (!(cmd->flags & TPLAN_PUT_SIGNAL) && cmd->signal_offset)
		return -EINVAL;
	ret = tplan_queue_get(tf, cmd->peer, &q);
	if (ret)
		return ret;
	g = q->group;
	if (!cmd->length || !tplan_range_ok(cmd->src_offset, cmd->length, g->heap_size) ||
	    !tplan_range_ok(cmd->dst_offset, cmd->length, g->heap_size))
		return -EINVAL;
	if (cmd->flags & TPLAN_PUT_SIGNAL &&
	    (!IS_ALIGNED(cmd->signal_offset, 8) ||
	     !tplan_range_ok(cmd->signal_offset, 8, g->heap_size)))
		return -EINVAL;

	src = tplan_heap_dev(g, tf->rank, tf->rank) + cmd->src_offset;
	dst = tplan_heap_dev(g, tf->rank, cmd->peer) + cmd->dst_offset;
	/*
	 * As many copies as fit each time the lock is held, each batch ended
	 * by its done FENCE; a put longer than the free ring goes in parts
	 * (what was queued is sent even if a later part fails).
	 */
	while (done < cmd->length || (cmd->flags & TPLAN_PUT_SIGNAL && !signalled)) {
		if (mutex_lock_interruptible(&q->wlock))
			return -EINTR;
		ret = tplan_queue_host_usable(q);
		if (ret) {
			mutex_unlock(&q->wlock);
			return ret;
		}
		fit = 0;
		while (done < cmd->length) {
			struct tplan_sdma_copy_linear copy = {
				.src = src + done,
				.dst = dst + done,
				.bytes = min_t(u64, cmd->length - done, g->limits.max_copy_bytes),
			};

			if (!tplan_queue_fits(q, tplan_queue_after(q, q->wtail,
								   TPLAN_SDMA_COPY_LINEAR_DW)))
				break;
			dw = tplan_queue_emit(q, TPLAN_SDMA_COPY_LINEAR_DW);
			tplan_sdma_encode_copy_linear(dw, TPLAN_SDMA_COPY_LINEAR_DW, &copy);
			done += copy.bytes;
			fit++;
		}
		if (done == cmd->length && cmd->flags & TPLAN_PUT_SIGNAL &&
		    tplan_queue_fits(q, tplan_queue_after(q, q->wtail, TPLAN_SDMA_ATOMIC_DW))) {
			struct tplan_sdma_atomic add = {
				.addr = tplan_heap_dev(g, tf->rank, cmd->peer) + cmd->signal_offset,
				.src_data = 1,
				.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
			};

			dw = tplan_queue_emit(q, TPLAN_SDMA_ATOMIC_DW);
			tplan_sdma_encode_atomic(dw, TPLAN_SDMA_ATOMIC_DW, &add);
			signalled = true;
			fit++;
		}
		tplan_queue_publish(q);
		need = tplan_queue_need_to(q, tplan_queue_after(q, q->wtail, done < cmd->length ?
								TPLAN_SDMA_COPY_LINEAR_DW :
								TPLAN_SDMA_ATOMIC_DW));
		mutex_unlock(&q->wlock);
		if (!fit) {
			/* Room for the next packet: -EINTR, not a restart, as a part is queued. */
			ret = tplan_queue_wait_room(q, need, false, 0);
			if (ret)
				return ret == -ERESTARTSYS ? -EINTR : ret;
		}
	}
	return 0;
}

/*
 * Open the ready gate of every raw chain (CHAIN_SUBMIT) still charged,
 * so that it runs as its chunk stands: 0, or -EBUSY (nothing opened) when
 * a plan's chains are charged too (closing the plan opens those).
 */
int tplan_queue_open_raw_gates(struct tplan_queue *q)
{
	struct tplan_heap *h = &q->group->heaps[q->src];
	struct tplan_prep_mark *m;
	u32 i;
	int ret = 0;

	spin_lock(&q->budget_lock);
	for (i = q->mark_head; i != q->mark_tail; i++)
		if (!q->marks[i % q->mark_cap].raw)
			ret = -EBUSY;
	for (i = q->mark_head; !ret && i != q->mark_tail; i++) {
		m = &q->marks[i % q->mark_cap];
		if (tplan_heap_load32(h, m->gate_off) < m->ref)
			/* As mark_ready would: release, so what was written before goes. */
			tplan_heap_store32_release(h, m->gate_off, m->ref);
	}
	spin_unlock(&q->budget_lock);
	return ret;
}

/* Quiet: every batch published so far ran (its done FENCE did). */
int tplan_quiet(struct tplan_ucmd *ucmd)
{
	struct tplan_quiet *cmd = ucmd->cmd;
	u64 deadline = tplan_deadline(cmd->timeout_ms), target;
	struct tplan_queue *q;
	int ret;

	if (cmd->flags & ~TPLAN_QUIET_FLAGS_ALL)
		return -EINVAL;
	ret = tplan_queue_get(ucmd->tf, cmd->peer, &q);
	if (ret)
		return ret;
	if (cmd->flags & TPLAN_QUIET_OPEN_GATES)
		ret = tplan_queue_usable(q) ?: tplan_queue_open_raw_gates(q);
	else
		ret = tplan_queue_host_usable(q);
	if (ret)
		return ret;
	target = READ_ONCE(q->done_last);
	ret = tplan_wait_deadline(q->owner_wq, tplan_queue_done_passed(q, target) ||
				  tplan_queue_usable(q), deadline, false);
	/* Again: the wait may have ended on a signal or a timeout. */
	if (tplan_queue_done_passed(q, target))
		return 0;
	return tplan_queue_usable(q) ?: ret == -ERESTARTSYS ? -EINTR : ret;
}

/* mmap offsets of a queue's ring and pointer page (tplan_queue_mmap()). */
u64 tplan_queue_mmap_offset(u32 peer, bool ptr)
{
	return TPLAN_MMAP_QUEUE | (u64)peer << TPLAN_MMAP_QUEUE_PEER_SHIFT |
	       (ptr ? TPLAN_MMAP_QUEUE_PTR : 0);
}

int tplan_queue_info(struct tplan_ucmd *ucmd)
{
	struct tplan_queue_info *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tplan_file_group(tf);
	struct tplan_queue *q;
	u32 flags = cmd->flags;
	int ret;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags & ~TPLAN_QUEUE_INFO_FLAGS_ALL || cmd->__reserved)
		return -EINVAL;
	if (cmd->peer >= g->world_size || cmd->peer == tf->rank)
		return -EINVAL;
	if (flags & TPLAN_QUEUE_INFO_MAKE) {
		ret = tplan_queue_get(tf, cmd->peer, &q);
		if (ret)
			return ret;
	}
	/* A queue not used yet is not made for a look at it: it is empty. */
	q = READ_ONCE(g->queues[tf->rank][cmd->peer]);
	memset((u8 *)cmd + sizeof(cmd->size) + sizeof(cmd->peer), 0,
	       sizeof(*cmd) - sizeof(cmd->size) - sizeof(cmd->peer));
	cmd->flags = flags;
	cmd->ring_size = tplan_params.ring_size;
	cmd->prep_limit = tplan_budget_limit(cmd->ring_size, tplan_params.prep_limit_pct);
	cmd->state = TPLAN_QUEUE_IDLE;
	if (!q)
		return 0;
	cmd->ring_mmap_offset = tplan_queue_mmap_offset(cmd->peer, false);
	cmd->ptr_mmap_offset = tplan_queue_mmap_offset(cmd->peer, true);
	cmd->state = tplan_queue_state(q);
	cmd->rptr = tplan_queue_rptr(q);
	cmd->wptr = READ_ONCE(q->wptr);
	cmd->packets = READ_ONCE(q->packets);
	cmd->ring_size = q->ring_size;
	cmd->prep_charged = tplan_queue_charged(q);
	cmd->prep_reserved = tplan_queue_reserved(q);
	cmd->prep_limit = q->prep_limit;
	cmd->gate_seq = READ_ONCE(q->ptr->gate_seq);
	cmd->done_seq = READ_ONCE(q->ptr->done_seq);
	cmd->doorbells = atomic64_read(&q->doorbells);
	if (cmd->state == TPLAN_QUEUE_FAULT) {
		cmd->fault_offset = q->fault_offset;
		cmd->fault_dword = q->fault_dword;
		cmd->fault_reason = q->fault_reason;
	}
	return 0;
}

/*
 * mmap of a queue's ring or pointer page, the whole of it, by the process
 * that joined and nobody else: not a fork (nor inherited by one), not a
 * process the file was passed to.  The pages go in as normal pages
 * (vm_insert_page()), which is what a driver registering them as user
 * memory (KFD userptr) needs.  Called with mmap_lock held; the queue
 * cannot go meanwhile (only this file's release frees it).
 */
int tplan_queue_mmap(struct tplan_file *tf, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct tplan_group *g = tplan_file_group(tf);
	u32 peer = (off >> TPLAN_MMAP_QUEUE_PEER_SHIFT) & (TPLAN_MAX_WORLD_SIZE - 1);
	bool ptr = off & TPLAN_MMAP_QUEUE_PTR;
	struct tplan_queue *q;
	int ret;

	if (!g)
		return -ENOTCONN;
	ret = tplan_file_owner_check(tf);
	if (ret)
		return ret;
	if (off != tplan_queue_mmap_offset(peer, ptr) || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (peer >= g->world_size || peer == tf->rank)
		return -EINVAL;
	q = READ_ONCE(g->queues[tf->rank][peer]);
	if (!q || len != (ptr ? PAGE_SIZE : q->ring_size))
		return -EINVAL;
	tplan_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	if (ptr)
		return vm_insert_page(vma, vma->vm_start, q->ptr_page);
	return tplan_vm_insert_vmalloc(vma, q->ring, len);
}

#define TPLAN_INJECT_MAX_DW 1024

/* Write packets already in dw (ndw dwords, one packet) once there is room. */
static int tplan_queue_write_raw(struct tplan_queue *q, const u32 *raw, u32 ndw)
{
	u64 need;
	int ret;

	for (;;) {
		if (mutex_lock_interruptible(&q->wlock))
			return -ERESTARTSYS;
		ret = tplan_queue_host_usable(q);
		if (ret) {
			mutex_unlock(&q->wlock);
			return ret;
		}
		need = tplan_queue_need_to(q, tplan_queue_after(q, q->wtail, ndw));
		if (need < tplan_queue_room(q)) {
			memcpy(tplan_queue_emit(q, ndw), raw, ndw * 4);
			tplan_queue_publish(q);
			mutex_unlock(&q->wlock);
			return 0;
		}
		tplan_queue_publish(q);
		mutex_unlock(&q->wlock);
		ret = tplan_queue_wait_room(q, need, false, 0);
		if (ret)
			return ret;
	}
}

int tplan_queue_inject(struct tplan_ucmd *ucmd)
{
	struct tplan_queue_inject *cmd = ucmd->cmd;
	struct tplan_queue *q;
	u32 *raw;
	int ret;

	if (!tplan_params.allow_inject)
		return -EPERM;
	if (cmd->flags || !cmd->ndw || cmd->ndw > TPLAN_INJECT_MAX_DW)
		return -EINVAL;
	ret = tplan_queue_get(ucmd->tf, cmd->peer, &q);
	if (ret)
		return ret;
	if (cmd->ndw * 4 > q->ring_size / 2)
		return -EINVAL;
	ret = tplan_queue_host_usable(q);
	if (ret)
		return ret;

	raw = memdup_user(u64_to_user_ptr(cmd->dwords), cmd->ndw * 4);
	if (IS_ERR(raw))
		return PTR_ERR(raw);
	ret = tplan_queue_write_raw(q, raw, cmd->ndw);
	kfree(raw);
	return ret;
}

/*
 * Reserve bytes of the budget for prepared chains before writing them: 0,
 * or -ENOSPC with nothing reserved.  Raw chains hold it until their gate
 * FENCEs run; a plan holds one round's charge from prepare to close, so
 * its re-arms never meet a full budget.  Put and quiet look at what is
 * gated (the marks), not at this.
 */
int tplan_queue_budget_reserve(struct tplan_queue *q, u64 bytes)
{
	int ret;

	tplan_queue_release_marks(q);
	spin_lock(&q->budget_lock);
	ret = tplan_budget_charge(&q->prep_reserved, q->prep_limit, bytes);
	spin_unlock(&q->budget_lock);
	return ret;
}

void tplan_queue_budget_unreserve(struct tplan_queue *q, u64 bytes)
{
	spin_lock(&q->budget_lock);
	q->prep_reserved -= bytes;
	spin_unlock(&q->budget_lock);
	if (wq_has_sleeper(&q->owner_wq))
		wake_up_all(&q->owner_wq);
}


/* Room for n more marks; allocation happens before any ring write.  Caller holds wlock. */
static int tplan_queue_marks_room(struct tplan_queue *q, u32 n)
{
	struct tplan_prep_mark *marks;
	u32 used, cap, i;

	lockdep_assert_held(&q->wlock);
	used = READ_ONCE(q->mark_tail) - READ_ONCE(q->mark_head);
	if (q->mark_cap - used >= n)
		return 0;
	cap = max_t(u32, q->mark_cap * 2, roundup_pow_of_two(used + n));
	marks = kvcalloc(cap, sizeof(*marks), TPLAN_GFP_USER_SIZED);
	if (!marks)
		return -ENOMEM;
	spin_lock(&q->budget_lock);
	used = q->mark_tail - q->mark_head;
	for (i = 0; i < used; i++)
		marks[i] = q->marks[(q->mark_head + i) % q->mark_cap];
	swap(q->marks, marks);
	q->mark_cap = cap;
	q->mark_head = 0;
	q->mark_tail = used;
	spin_unlock(&q->budget_lock);
	kvfree(marks);
	return 0;
}

/*
 * The queue position after a validated chain written from pos: its
 * packets, the gate FENCE after its POLL (the first packet), padding.
 */
static u64 tplan_chain_end_from(struct tplan_queue *q, u64 pos,
				const struct tplan_chain_image *c)
{
	u32 i = 0, len;
	int n;

	while (i < c->ndw) {
		n = tplan_sdma_packet_dwords(c->dw + i, c->ndw - i);
		len = n > 0 ? n : c->ndw - i;
		pos = tplan_queue_after(q, pos, len);
		if (!i)
			pos = tplan_queue_after(q, pos, TPLAN_SDMA_FENCE_DW);
		i += len;
	}
	return pos;
}

/* Write the chains at the tail and publish them.  Caller holds wlock and made room. */
static void tplan_queue_emit_chains(struct tplan_queue *q, const struct tplan_chain_image *c,
				    u32 n)
{
	u32 i, j, seq = 0;

	for (i = 0; i < n; i++) {
		u64 start = 0;

		for (j = 0; j < c[i].ndw; ) {
			int len = tplan_sdma_packet_dwords(c[i].dw + j, c[i].ndw - j);
			u32 *dw = tplan_queue_emit(q, len);

			memcpy(dw, c[i].dw + j, len * 4);
			if (!j) {
				/* The POLL: the kernel owns its reference (the round). */
				dw[TPLAN_SDMA_POLL_REF_DW] = c[i].ref;
				start = q->wtail - len * 4;
				/* Then the FENCE that says the chain went through its gate. */
				seq = q->gate_next++;
				tplan_queue_emit_fence(q, TPLAN_QPTR_GATE_SEQ, seq);
			}
			j += len;
		}
		spin_lock(&q->budget_lock);
		q->marks[q->mark_tail % q->mark_cap] = (struct tplan_prep_mark) {
			.seq = seq,
			.bytes = tplan_chain_charge(c[i].ndw),
			.unreserve = tplan_chain_charge(c[i].ndw),
			.ref = c[i].ref,
			.raw = c[i].raw,
			.gate_off = c[i].raw_gate_off,
		};
		q->prep_charged += tplan_chain_charge(c[i].ndw);
		q->mark_tail++;
		spin_unlock(&q->budget_lock);
		trace_tplan_submit(q->group->id, q->src, q->dst, start, c[i].ndw * 4);
	}
	tplan_queue_publish(q);
}

/*
 * Write validated raw chains whose charge tplan_queue_budget_reserve()
 * took (they give it back as their gate FENCEs run), each with its POLL
 * reference patched to its round and its gate FENCE, and publish them at
 * once (nothing of another writer in between).  Waits for ring space
 * first, killably (the engine frees it without help: everything queued
 * before is either reserved, within the limit, or runs by itself), and
 * for a staged plan round's vote, so on error nothing was written and the
 * caller unreserves.  *done_seq (may be NULL) gets the done sequence of
 * their batch.
 */
int tplan_queue_write_chains(struct tplan_queue *q, const struct tplan_chain_image *c,
			     u32 n, u64 *done_seq)
{
	u64 need = 0, end;
	u32 i;
	int ret;

	for (;;) {
		if (mutex_lock_killable(&q->wlock))
			return -EINTR;
		if (READ_ONCE(q->staged)) {
			/* A plan round waits for its ranks' vote: after it, then. */
			mutex_unlock(&q->wlock);
			ret = tplan_wait_deadline(q->owner_wq, !READ_ONCE(q->staged) ||
						  tplan_queue_usable(q), tplan_deadline(0), true);
			if (ret)
				return ret;
			continue;
		}
		ret = tplan_queue_usable(q) ?: tplan_queue_marks_room(q, n);
		if (ret) {
			mutex_unlock(&q->wlock);
			return ret;
		}
		for (i = 0, end = q->wtail; i < n; i++)
			end = tplan_chain_end_from(q, end, &c[i]);
		need = tplan_queue_need_to(q, end);
		if (need >= q->ring_size) {
			mutex_unlock(&q->wlock);
			return -EINVAL;
		}
		ret = tplan_queue_make_room(q, need, 0);
		if (!ret)
			break;
		if (ret != -EAGAIN)
			return ret;
	}
	tplan_queue_emit_chains(q, c, n);
	if (done_seq)
		*done_seq = q->done_last;
	mutex_unlock(&q->wlock);
	return 0;
}

/*
 * The most bytes a re-arm of a template of bytes can ever need: up to
 * bytes - 4 of padding before it (it did not fit before the ring end),
 * itself, the batch's done FENCE.
 */
static u64 tplan_round_need_max(u32 bytes)
{
	return 2ULL * bytes - 4 + TPLAN_FENCE_BYTES;
}

/*
 * Lay out a plan's validated chains for this queue (n of them, grouped
 * as one round) into t, whose dw and chain_at the caller allocated for
 * the round's head POLL, the chains and their gate FENCEs.  The head
 * POLL waits for the receiver's release of the round before (its word at
 * release, in this queue's map): queues run in order, so it holds back
 * every copy of the round to that peer.  -EINVAL when no ring of this
 * queue could ever take the round in one piece: the same answer a batch
 * longer than the ring got from tplan_queue_write_chains() when rounds
 * were written packet by packet, so a plan too long for the ring is
 * still refused with EINVAL at prepare and nothing is queued.
 */
int tplan_queue_template_fill(struct tplan_queue *q, const struct tplan_chain_image *c, u32 n,
			      u64 release, struct tplan_round_template *t)
{
	struct tplan_sdma_fence fence = { .addr = q->ptr_dev + TPLAN_QPTR_GATE_SEQ };
	struct tplan_sdma_poll_regmem head = {
		.addr = release,
		.ref = 0,		/* the round before, written at each re-arm */
		.mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC,
		.mem_poll = 1,
		.interval = TPLAN_RELEASE_POLL_INTERVAL,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	u32 i, at = TPLAN_ROUND_HEAD_DW;

	tplan_sdma_encode_poll_regmem(t->dw, TPLAN_SDMA_POLL_DW, &head);
	for (i = 0; i < n; i++) {
		/* Validated: the POLL comes first and has its fixed size. */
		t->chain_at[i] = at;
		memcpy(t->dw + at, c[i].dw, TPLAN_SDMA_POLL_DW * 4);
		at += TPLAN_SDMA_POLL_DW;
		tplan_sdma_encode_fence(t->dw + at, TPLAN_SDMA_FENCE_DW, &fence);
		at += TPLAN_SDMA_FENCE_DW;
		memcpy(t->dw + at, c[i].dw + TPLAN_SDMA_POLL_DW,
		       (c[i].ndw - TPLAN_SDMA_POLL_DW) * 4);
		at += c[i].ndw - TPLAN_SDMA_POLL_DW;
	}
	t->ndw = at;
	t->nchains = n;
	return tplan_round_need_max(at * 4) < q->ring_size ? 0 : -EINVAL;
}

/*
 * Arm, first half: write plan rounds round .. round + n - 1 from their
 * template, each headed by a POLL waiting for the receiver's release of
 * the round before it, its chains' POLLs waiting for the round and gate
 * sequences from the queue's next, but do not publish them yet: the plan
 * writes its rounds on every queue first (prepare also has its ranks
 * vote), then tplan_queue_stage_end() publishes them or takes them back.
 * Per round, at most one pad to the ring end (no packet crosses it), one
 * copy, the patches and one mark (gated until the round's last gate FENCE
 * runs); per call, one space check and one hold of the locks; nothing
 * decoded.  The plan holds its reservation already.  Writes as many of
 * the n rounds as there is room for now, at least one, for which it waits
 * as tplan_queue_write_chains() does, without progress for timeout_ms at
 * most.  Returns how many it wrote, or an error, and then wrote nothing
 * more.  slots[r % nslots] gets the gate sequence of round r's last chain.
 */
int tplan_queue_stage_rounds(struct tplan_queue *q, const struct tplan_round_template *t,
			     u32 round, u32 n, u32 timeout_ms, u32 *slots, u32 nslots)
{
	u32 bytes = t->ndw * 4, pad, seq, i, c, k, *dw;
	u64 need, end, next;
	int ret;

	if (WARN_ON_ONCE(!n || n > nslots))
		return -EINVAL;
	for (;;) {
		if (mutex_lock_killable(&q->wlock))
			return -EINTR;
		ret = tplan_queue_usable(q) ?: tplan_queue_marks_room(q, n);
		if (ret) {
			mutex_unlock(&q->wlock);
			return ret;
		}
		/* The first round, and the others that fit in the room there is now. */
		end = q->wtail;
		for (k = 0; k < n; k++) {
			next = end + tplan_ring_pad(end, q->ring_size, bytes) + bytes;
			if (k && tplan_queue_need_to(q, next) >= tplan_queue_room(q))
				break;
			end = next;
		}
		need = tplan_queue_need_to(q, end);
		/* tplan_queue_template_fill() refused a round that could never fit. */
		if (WARN_ON_ONCE(need >= q->ring_size)) {
			mutex_unlock(&q->wlock);
			return -EINVAL;
		}
		ret = tplan_queue_make_room(q, need, timeout_ms);
		if (!ret)
			break;
		if (ret != -EAGAIN)
			return ret;
	}
	seq = q->gate_next;
	for (i = 0; i < k; i++) {
		pad = tplan_ring_pad(q->wtail, q->ring_size, bytes);
		if (pad)
			tplan_queue_pad(q, pad);
		dw = q->ring + ((q->wtail & (q->ring_size - 1)) >> 2);
		memcpy(dw, t->dw, bytes);
		/* The head POLL: the receiver has released the round before. */
		dw[TPLAN_SDMA_POLL_REF_DW] = round + i - 1;
		for (c = 0; c < t->nchains; c++) {
			/* The kernel owns the POLL's reference (the round) and the gate sequences. */
			dw[t->chain_at[c] + TPLAN_SDMA_POLL_REF_DW] = round + i;
			dw[t->chain_at[c] + TPLAN_SDMA_POLL_DW + TPLAN_SDMA_FENCE_DATA_DW] = seq++;
		}
		slots[(round + i) % nslots] = seq - 1;
		trace_tplan_submit(q->group->id, q->src, q->dst, q->wtail, bytes);
		q->wtail += bytes;
	}
	q->gate_next = seq;
	tplan_queue_release_marks(q);
	spin_lock(&q->budget_lock);
	for (i = 0; i < k; i++) {
		q->marks[q->mark_tail % q->mark_cap] = (struct tplan_prep_mark) {
			.seq = slots[(round + i) % nslots],
			.bytes = bytes,
			.ref = round + i,
		};
		q->mark_tail++;
	}
	/* Gated from now: put and quiet keep off, as they would once it is published. */
	q->prep_charged += (u64)k * bytes;
	spin_unlock(&q->budget_lock);
	WRITE_ONCE(q->staged, q->staged + k * t->nchains);
	q->staged_rounds += k;
	mutex_unlock(&q->wlock);
	return k;
}

/* Has the chain whose gate FENCE writes seq passed its POLL? */
static bool tplan_queue_gate_passed(struct tplan_queue *q, u32 seq)
{
	/* Acquire: pairs with the FENCE's release, as any progress word. */
	return (s32)(smp_load_acquire(&q->ptr->gate_seq) - seq) >= 0;
}

/*
 * Wait (killably) until the chain whose gate FENCE writes seq has passed
 * its POLL: a round armed ahead waits so for the round depth before it,
 * whose charge it takes over.  The deadline moves on with the queue's
 * progress, as a wait for ring space does.  0, -ETIMEDOUT, -EINTR,
 * -EIO, -ECONNRESET.
 */
int tplan_queue_wait_gate(struct tplan_queue *q, u32 seq, u32 timeout_ms)
{
	u64 deadline = tplan_deadline(timeout_ms);
	u32 seen = READ_ONCE(q->ptr->gate_seq);
	int ret;

	for (;;) {
		ret = tplan_wait_deadline(q->owner_wq, tplan_queue_gate_passed(q, seq) ||
					  tplan_queue_usable(q) ||
					  READ_ONCE(q->ptr->gate_seq) != seen,
					  deadline, true);
		if (tplan_queue_usable(q))
			return tplan_queue_usable(q);
		if (tplan_queue_gate_passed(q, seq))
			return 0;
		if (READ_ONCE(q->ptr->gate_seq) != seen) {	/* progress */
			seen = READ_ONCE(q->ptr->gate_seq);
			deadline = tplan_deadline(timeout_ms);
			continue;
		}
		if (ret)
			return ret;
	}
}

/*
 * Arm, second half: publish the staged rounds (*done_seq gets their
 * batch's done sequence) or take them back as if never written.
 * Nobody else wrote meanwhile (the queue was staged) and the engine saw
 * none of it, so taking it back is putting wtail, the gate sequence and
 * the marks where they were.  Cannot fail: wlock is only ever held
 * briefly, so it is taken even by a dying task.
 */
void tplan_queue_stage_end(struct tplan_queue *q, bool publish, u64 *done_seq)
{
	mutex_lock(&q->wlock);
	if (publish) {
		tplan_queue_commit(q);
		tplan_queue_ring_locked(q);
		*done_seq = q->done_last;
	} else {
		q->wtail = q->wptr;
		q->gate_next -= q->staged;
		spin_lock(&q->budget_lock);
		/* Unless an owner that wrote gate_seq in its pointer page let them go already. */
		while (q->staged_rounds && q->mark_tail != q->mark_head) {
			q->mark_tail--;
			q->prep_charged -= q->marks[q->mark_tail % q->mark_cap].bytes;
			q->staged_rounds--;
		}
		spin_unlock(&q->budget_lock);
	}
	WRITE_ONCE(q->staged, 0);
	q->staged_rounds = 0;
	mutex_unlock(&q->wlock);
	/* Writers waiting for the queue to be theirs again. */
	if (wq_has_sleeper(&q->owner_wq))
		wake_up_all(&q->owner_wq);
}
