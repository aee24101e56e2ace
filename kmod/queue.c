// SPDX-License-Identifier: GPL-2.0
/*
 * Queues: one ring per (rank -> peer), owned by the sending rank; the
 * owner side of the ring (reserve, pad, publish), host put and quiet, and
 * the prepared-copy budget.  queue.h describes the pointer protocol.
 *
 * The budget rule (ARCHITECTURE §3): bytes of prepared chains whose POLL
 * the engine has not passed are charged to the queue and may not exceed
 * ring_size * prep_limit / 100.  While anything is charged, put and quiet
 * fail with EBUSY instead of queueing or waiting behind a gate that only a
 * not-yet-launched kernel could open.  Every other wait in this file is
 * on work the engine can finish by itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/debugfs.h>

#include "tplan_priv.h"
#include "queue.h"
#include "ring.h"
#include "tplan_sdma.h"
#include "tplan_trace.h"

#define TPLAN_MARKS_INITIAL 64

static struct tplan_queue *tplan_queue_create(struct tplan_group *g, u32 src, u32 dst)
{
	struct tplan_queue *q;
	int ret;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->ring_size = tplan_params.ring_size;
	/* Zeroed: a zero dword is a one-dword NOP. */
	q->ring = vzalloc(q->ring_size);
	q->marks = kvcalloc(TPLAN_MARKS_INITIAL, sizeof(*q->marks), GFP_KERNEL);
	if (!q->ring || !q->marks) {
		ret = -ENOMEM;
		goto err_free;
	}
	q->group = g;
	q->src = src;
	q->dst = dst;
	q->mark_cap = TPLAN_MARKS_INITIAL;
	q->prep_limit = tplan_budget_limit(q->ring_size, tplan_params.prep_limit_pct);
	spin_lock_init(&q->budget_lock);
	init_waitqueue_head(&q->engine_wq);
	init_waitqueue_head(&q->owner_wq);

	ret = tplan_soft_engine.start(q);
	if (ret)
		goto err_free;
	return q;

err_free:
	kvfree(q->marks);
	vfree(q->ring);
	kfree(q);
	return ERR_PTR(ret);
}

static void tplan_queue_free(struct tplan_queue *q)
{
	tplan_soft_engine.stop(q);
	debugfs_remove(q->debugfs);
	kvfree(q->marks);
	vfree(q->ring);
	kfree(q);
}

/* The (tf's rank -> peer) queue, created on first use.  Caller holds tf->lock. */
int tplan_queue_get(struct tplan_file *tf, u32 peer, struct tplan_queue **qp)
{
	struct tplan_group *g = tf->group;
	struct tplan_queue *q;

	lockdep_assert_held(&tf->lock);
	if (!g)
		return -ENOTCONN;
	if (peer >= g->world_size || peer == tf->rank)
		return -EINVAL;
	q = g->queues[tf->rank][peer];
	if (!q) {
		q = tplan_queue_create(g, tf->rank, peer);
		if (IS_ERR(q))
			return PTR_ERR(q);
		mutex_lock(&g->lock);
		g->queues[tf->rank][peer] = q;
		mutex_unlock(&g->lock);
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
		g->queues[src][dst] = NULL;
		mutex_unlock(&g->lock);
		if (q)
			tplan_queue_free(q);
	}
}

void tplan_queue_wake(struct tplan_queue *q)
{
	wake_up_all(&q->owner_wq);
}

u32 tplan_queue_state(struct tplan_queue *q)
{
	int state = READ_ONCE(q->state);

	if (state)
		return state;
	/* Acquire: pairs with the engine's release of rptr (top of queue.h). */
	return smp_load_acquire(&q->rptr) == READ_ONCE(q->wptr) ? TPLAN_QUEUE_IDLE :
								  TPLAN_QUEUE_BUSY;
}

/* Engine: the packets below rptr are done; release the charges they held. */
void tplan_queue_retire(struct tplan_queue *q, u64 rptr)
{
	struct tplan_prep_mark *m;

	/* Release: the packets below rptr, copies included, are done (queue.h). */
	smp_store_release(&q->rptr, rptr);
	if (READ_ONCE(q->mark_head) != READ_ONCE(q->mark_tail)) {
		spin_lock(&q->budget_lock);
		while (q->mark_head != q->mark_tail) {
			m = &q->marks[q->mark_head % q->mark_cap];
			if (m->poll_end > rptr)
				break;
			q->prep_charged -= m->bytes;
			q->mark_head++;
		}
		spin_unlock(&q->budget_lock);
	}
	/* wq_has_sleeper() orders the rptr store before the waiter check. */
	if (wq_has_sleeper(&q->owner_wq))
		wake_up_all(&q->owner_wq);
}

/* Engine: stop at the packet at rptr and say why. */
void tplan_queue_fault(struct tplan_queue *q, u32 reason)
{
	u64 rptr = q->rptr;

	q->fault_offset = rptr;
	q->fault_dword = q->ring[(rptr & (q->ring_size - 1)) >> 2];
	q->fault_reason = reason;
	/* Release: whoever sees FAULT sees where and why. */
	smp_store_release(&q->state, TPLAN_QUEUE_FAULT);
	trace_tplan_fault(q->group->key, q->src, q->dst, rptr, q->fault_dword, reason);
	pr_warn_ratelimited("queue %llx:%u->%u stopped at ring offset %llu, dword 0x%08x: fault %u\n",
			    q->group->key, q->src, q->dst, rptr, q->fault_dword, reason);
	wake_up_all(&q->owner_wq);
}

/* Why the owner may not use the queue now: 0, ECONNRESET or EIO. */
int tplan_queue_usable(struct tplan_queue *q)
{
	int broken = READ_ONCE(q->group->broken);

	if (broken)
		return broken;
	if (READ_ONCE(q->state))
		return -EIO;
	return 0;
}

/*
 * May the host queue work (put, inject) or wait (quiet) here?  Not while
 * prepared chains wait on their gates (the budget rule, top of file).
 */
static int tplan_queue_host_usable(struct tplan_queue *q)
{
	int ret = tplan_queue_usable(q);

	if (ret)
		return ret;
	return READ_ONCE(q->prep_charged) ? -EBUSY : 0;
}

static void tplan_queue_publish(struct tplan_queue *q)
{
	if (q->wtail == q->wptr)
		return;
	/* Packets are in the ring before the engine can see the new wptr. */
	smp_store_release(&q->wptr, q->wtail);
	tplan_soft_engine.kick(q);
}

/* Wait until rptr reaches target.  0, -ETIMEDOUT, -EINTR, -EIO, -ECONNRESET. */
static int tplan_queue_wait_rptr(struct tplan_queue *q, u64 target, long *timeout)
{
	long left;
	int ret;

	/* rptr with acquire, paired with the engine's release (queue.h). */
	left = wait_event_interruptible_timeout(q->owner_wq,
						smp_load_acquire(&q->rptr) >= target || /* queue.h */
						tplan_queue_usable(q), *timeout);
	/* Acquire again: the wait may have ended on a signal or a timeout. */
	if (smp_load_acquire(&q->rptr) >= target)
		return 0;
	ret = tplan_queue_usable(q);
	if (ret)
		return ret;
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	*timeout = left;
	return 0;
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
 * Wait until need bytes are free after q->wtail.  What is written but not
 * published goes out first: the engine cannot free space below wptr.
 */
static int tplan_queue_wait_space(struct tplan_queue *q, u64 need, long *timeout)
{
	if (need > q->ring_size)
		return -EINVAL;
	/* Acquire: the engine is done with the space below rptr (queue.h). */
	if (tplan_ring_free(q->wtail, smp_load_acquire(&q->rptr), q->ring_size) >= need)
		return 0;
	tplan_queue_publish(q);
	return tplan_queue_wait_rptr(q, q->wtail + need - q->ring_size, timeout);
}

/*
 * Room for one packet of ndw dwords at the write position, after padding
 * to the ring end if it would straddle it.  The caller fills the dwords;
 * tplan_queue_publish() hands them to the engine.
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

/* emit, after waiting for the space it needs. */
static int tplan_queue_reserve(struct tplan_queue *q, u32 ndw, long *timeout, u32 **dw)
{
	u32 bytes = ndw * 4;
	int ret;

	ret = tplan_queue_wait_space(q, tplan_ring_pad(q->wtail, q->ring_size, bytes) + bytes,
				     timeout);
	if (ret)
		return ret;
	*dw = tplan_queue_emit(q, ndw);
	return 0;
}

static bool tplan_range_ok(u64 off, u64 len, u64 size)
{
	return off < size && len <= size - off;
}

int tplan_put(struct tplan_ucmd *ucmd)
{
	struct tplan_put *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	long timeout = tplan_timeout_jiffies(0);
	struct tplan_queue *q;
	struct tplan_group *g;
	u64 done, src, dst;
	u32 *dw;
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
	ret = tplan_queue_host_usable(q);
	if (ret)
		return ret;

	src = g->heaps[tf->rank].dev_base + cmd->src_offset;
	dst = g->heaps[cmd->peer].dev_base + cmd->dst_offset;
	for (done = 0; done < cmd->length; ) {
		struct tplan_sdma_copy_linear copy = {
			.src = src + done,
			.dst = dst + done,
			.bytes = min_t(u64, cmd->length - done, g->limits.max_copy_bytes),
		};

		ret = tplan_queue_reserve(q, TPLAN_SDMA_COPY_LINEAR_DW, &timeout, &dw);
		if (ret)
			goto out_publish;
		tplan_sdma_encode_copy_linear(dw, TPLAN_SDMA_COPY_LINEAR_DW, &copy);
		done += copy.bytes;
	}
	if (cmd->flags & TPLAN_PUT_SIGNAL) {
		struct tplan_sdma_atomic add = {
			.addr = g->heaps[cmd->peer].dev_base + cmd->signal_offset,
			.src_data = 1,
			.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
		};

		ret = tplan_queue_reserve(q, TPLAN_SDMA_ATOMIC_DW, &timeout, &dw);
		if (ret)
			goto out_publish;
		tplan_sdma_encode_atomic(dw, TPLAN_SDMA_ATOMIC_DW, &add);
	}
out_publish:
	tplan_queue_publish(q);
	return ret;
}

int tplan_quiet(struct tplan_ucmd *ucmd)
{
	struct tplan_quiet *cmd = ucmd->cmd;
	long timeout = tplan_timeout_jiffies(cmd->timeout_ms);
	struct tplan_queue *q;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	ret = tplan_queue_get(ucmd->tf, cmd->peer, &q);
	if (ret)
		return ret;
	ret = tplan_queue_host_usable(q);
	if (ret)
		return ret;
	return tplan_queue_wait_rptr(q, q->wptr, &timeout);
}

int tplan_queue_info(struct tplan_ucmd *ucmd)
{
	struct tplan_queue_info *cmd = ucmd->cmd;
	struct tplan_queue *q;
	int ret;

	ret = tplan_queue_get(ucmd->tf, cmd->peer, &q);
	if (ret)
		return ret;
	cmd->state = tplan_queue_state(q);
	/* Acquire: pairs with the engine's release of rptr (queue.h). */
	cmd->rptr = smp_load_acquire(&q->rptr);
	cmd->wptr = q->wptr;
	cmd->packets = READ_ONCE(q->packets);
	cmd->ring_size = q->ring_size;
	cmd->prep_charged = READ_ONCE(q->prep_charged);
	cmd->prep_limit = q->prep_limit;
	if (cmd->state == TPLAN_QUEUE_FAULT) {
		cmd->fault_offset = q->fault_offset;
		cmd->fault_dword = q->fault_dword;
		cmd->fault_reason = q->fault_reason;
	} else {
		cmd->fault_offset = 0;
		cmd->fault_dword = 0;
		cmd->fault_reason = TPLAN_FAULT_NONE;
	}
	return 0;
}

#define TPLAN_INJECT_MAX_DW 1024

int tplan_queue_inject(struct tplan_ucmd *ucmd)
{
	struct tplan_queue_inject *cmd = ucmd->cmd;
	long timeout = tplan_timeout_jiffies(0);
	struct tplan_queue *q;
	u32 *raw, *dw;
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
	ret = tplan_queue_reserve(q, cmd->ndw, &timeout, &dw);
	if (!ret) {
		memcpy(dw, raw, cmd->ndw * 4);
		tplan_queue_publish(q);
	}
	kfree(raw);
	return ret;
}

/*
 * Charge bytes of prepared chains before writing them: 0, or -ENOSPC with
 * nothing charged.  From here until the engine passes their POLLs, put
 * and quiet see the queue as holding prepared copies.
 */
int tplan_queue_budget_reserve(struct tplan_queue *q, u64 bytes)
{
	int ret;

	spin_lock(&q->budget_lock);
	ret = tplan_budget_charge(&q->prep_charged, q->prep_limit, bytes);
	spin_unlock(&q->budget_lock);
	return ret;
}

void tplan_queue_budget_unreserve(struct tplan_queue *q, u64 bytes)
{
	spin_lock(&q->budget_lock);
	q->prep_charged -= bytes;
	spin_unlock(&q->budget_lock);
	if (wq_has_sleeper(&q->owner_wq))
		wake_up_all(&q->owner_wq);
}

/* Room for n more marks; allocation happens before any ring write. */
static int tplan_queue_marks_room(struct tplan_queue *q, u32 n)
{
	struct tplan_prep_mark *marks;
	u32 used, cap, i;

	used = READ_ONCE(q->mark_tail) - READ_ONCE(q->mark_head);
	if (q->mark_cap - used >= n)
		return 0;
	cap = max_t(u32, q->mark_cap * 2, roundup_pow_of_two(used + n));
	marks = kvcalloc(cap, sizeof(*marks), GFP_KERNEL);
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

/* Packet lengths of a validated chain, in bytes, for the span computation. */
static u64 tplan_chain_span_from(u64 pos, u32 ring_size, const struct tplan_chain_image *c)
{
	u32 i = 0, len;
	int n;

	while (i < c->ndw) {
		n = tplan_sdma_packet_dwords(c->dw + i, c->ndw - i);
		len = n > 0 ? n * 4 : (c->ndw - i) * 4;
		pos = tplan_ring_span(pos, ring_size, &len, 1);
		i += len / 4;
	}
	return pos;
}

/*
 * Write validated chains whose charge tplan_queue_budget_reserve() took,
 * each with its POLL reference patched to its round, and publish them at
 * once.  Waits for ring space first (the engine frees it without help:
 * everything queued before is either charged, within the limit, or runs
 * by itself), so on error nothing was written and the caller unreserves.
 */
int tplan_queue_write_chains(struct tplan_queue *q, const struct tplan_chain_image *c,
			     u32 n, long *timeout)
{
	u64 end = q->wtail;
	u32 i, j;
	int ret;

	ret = tplan_queue_marks_room(q, n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		end = tplan_chain_span_from(end, q->ring_size, &c[i]);
	ret = tplan_queue_wait_space(q, end - q->wtail, timeout);
	if (ret)
		return ret;

	for (i = 0; i < n; i++) {
		u64 start = 0, poll_end = 0;

		for (j = 0; j < c[i].ndw; ) {
			int len = tplan_sdma_packet_dwords(c[i].dw + j, c[i].ndw - j);
			u32 *dw = tplan_queue_emit(q, len);

			memcpy(dw, c[i].dw + j, len * 4);
			if (!j) {
				/* The POLL: the kernel owns its reference (the round). */
				dw[TPLAN_SDMA_POLL_REF_DW] = c[i].ref;
				start = q->wtail - len * 4;
				poll_end = q->wtail;
			}
			j += len;
		}
		spin_lock(&q->budget_lock);
		q->marks[q->mark_tail % q->mark_cap] = (struct tplan_prep_mark) {
			.poll_end = poll_end,
			.bytes = c[i].ndw * 4,
		};
		q->mark_tail++;
		spin_unlock(&q->budget_lock);
		trace_tplan_submit(q->group->key, q->src, q->dst, start, c[i].ndw * 4);
	}
	tplan_queue_publish(q);
	return 0;
}
