// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives: every rank contributes a blob to the group's k-th
 * collective and, once all have, every rank gets every blob.  Barrier,
 * all-gather and the plans' votes are built on tplan_group_exchange().
 *
 * Rules (uapi/tplan.h says them to users):
 *  - A collective completes on every rank or fails on every rank.  A rank
 *    that gives up before it completes (its deadline passed, or it is
 *    being killed) still counts as arrived, with the reason as the
 *    collective's status: when the last rank arrives the collective
 *    completes with that error everywhere (ETIMEDOUT: a rank was late),
 *    and the group goes on.  The rank that gave up is then one collective
 *    ahead; its next one waits for the group to catch up first.
 *  - Barrier and all-gather are interruptible: a signal returns
 *    -ERESTARTSYS with the rank still arrived, so the call restarts
 *    transparently (SA_RESTART) or, after EINTR, the same call (same
 *    operation and size) resumes it.  Any other collective first gets
 *    EPROTO.  Plan steps wait killably: only death or the deadline ends
 *    them, since a plan step interrupted half-way could not be resumed.
 *  - Ranks whose k-th collectives differ in operation or size break the
 *    group (EPROTO where it is noticed, ECONNRESET elsewhere).
 *  - A file runs one collective at a time (EBUSY otherwise).
 *
 * Blobs go to a double buffer by sequence parity: a rank can reach
 * collective k + 2 (reusing k's buffer) only after all ranks arrived at
 * k + 1, which each does only after reading k's result.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>

#include "tplan_priv.h"

int tplan_coll_begin(struct tplan_file *tf)
{
	return test_and_set_bit_lock(TPLAN_FILE_IN_COLL, &tf->flags) ? -EBUSY : 0;
}

void tplan_coll_end(struct tplan_file *tf)
{
	clear_bit_unlock(TPLAN_FILE_IN_COLL, &tf->flags);
}

/* Contribute to c->seq, which is tf's.  Caller holds g->lock. */
static int tplan_coll_arrive_locked(struct tplan_file *tf, u32 op, const void *in, u32 size)
{
	struct tplan_group *g = tf->group;
	struct tplan_coll *c = &g->coll;

	lockdep_assert_held(&g->lock);
	if (!c->arrived) {
		c->op = op;
		c->blob_size = size;
		c->status = 0;
	} else if (c->op != op || c->blob_size != size) {
		return -EPROTO;
	}
	if (size)
		memcpy(c->buf[c->seq & 1] + (size_t)tf->rank * size, in, size);
	c->arrived |= BIT(tf->rank);
	tf->coll_arrived = true;
	tf->coll_op = op;
	tf->coll_size = size;
	if (c->arrived == GENMASK(g->world_size - 1, 0)) {
		c->done_status[c->seq & 1] = c->status;
		c->arrived = 0;
		c->seq++;
		wake_up_all(&g->wq);
	}
	return 0;
}

int tplan_group_exchange(struct tplan_file *tf, u32 op, const void *in, u32 size,
			 void *out, u64 deadline, enum tplan_coll_wait how)
{
	bool killable = how == TPLAN_COLL_KILLABLE;
	struct tplan_group *g = tf->group;
	struct tplan_coll *c = &g->coll;
	u64 seq = tf->coll_seq;
	int ret;

	mutex_lock(&g->lock);
	if (g->broken) {
		ret = g->broken;
		goto out_unlock;
	}
	if (tf->coll_arrived) {
		/* Resuming the collective a signal interrupted: only the same one. */
		if (tf->coll_op != op || tf->coll_size != size) {
			ret = -EPROTO;
			goto out_unlock;
		}
		goto wait;
	}
	if (c->seq < seq) {
		/* This rank gave up on the last one; the others are still there. */
		mutex_unlock(&g->lock);
		ret = tplan_wait_deadline(g->wq, READ_ONCE(c->seq) >= seq || READ_ONCE(g->broken),
					  deadline, killable);
		mutex_lock(&g->lock);
		if (g->broken) {
			ret = g->broken;
			goto out_unlock;
		}
		if (c->seq < seq)
			goto out_unlock;	/* nothing contributed */
	}
	ret = tplan_coll_arrive_locked(tf, op, in, size);
	if (ret) {
		mutex_unlock(&g->lock);
		tplan_group_break(g, -ECONNRESET);
		return ret;
	}

wait:
	mutex_unlock(&g->lock);
	ret = tplan_wait_deadline(g->wq, READ_ONCE(c->seq) > seq || READ_ONCE(g->broken),
				  deadline, killable);
	mutex_lock(&g->lock);
	if (c->seq > seq) {
		/* Completed, even if a signal or the deadline came just after. */
		ret = c->done_status[seq & 1];
		if (!ret && size && out)
			memcpy(out, c->buf[seq & 1], (size_t)g->world_size * size);
		tf->coll_arrived = false;
		tf->coll_seq++;
	} else if (g->broken) {
		ret = g->broken;
	} else if (ret != -ERESTARTSYS) {
		/*
		 * The deadline, or this rank is dying: give up, and let every
		 * rank learn why once the last one arrives.
		 */
		if (!c->status)
			c->status = ret == -ETIMEDOUT ? -ETIMEDOUT : -ECONNRESET;
		tf->coll_arrived = false;
		tf->coll_seq++;
	}
out_unlock:
	mutex_unlock(&g->lock);
	return ret;
}
