// SPDX-License-Identifier: GPL-2.0
/*
 * PLAN_CLOSE (collective): open this rank's unopened gates so its queued
 * chains drain as they stand (prepared copies cannot be withdrawn), and
 * its release word so that no peer's round waits for it any more, wait
 * for them to leave its queues, then vote.  The vote completes once every
 * rank has done the same, so when it says every rank drained, no chain of
 * the plan can touch any rank's buffer or gates again: the plan is
 * CLOSED everywhere.  A rank whose chains wait behind an earlier plan's
 * gated chains cannot drain: every rank's close then returns CLOSING, and
 * closing the earlier plan drains both.  Either way this rank's part is
 * closed for its caller; the plan itself (and its gate rows) goes once
 * every rank closed and drained (tplan_plan_reap()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "plan.h"

#define TPLAN_CLOSE_REOPEN_MS 100

/*
 * Is the part held back on one of its queues by an earlier plan's chains
 * that are still gated (PREPARED) or themselves held back (CLOSING)?
 */
static bool tplan_plan_blocked(struct tplan_file *tf, struct tplan_plan *p)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	struct tplan_plan *other;
	bool blocked = false;
	u32 peer;

	mutex_lock(&g->lock);
	for (peer = 0; peer < g->world_size && !blocked; peer++) {
		struct tplan_queue *q = g->queues[tf->rank][peer];

		if (!(part->peer_mask & BIT(peer)) || !q)
			continue;
		if (tplan_queue_done_passed(q, part->peer_done[peer]))
			continue;
		list_for_each_entry(other, &g->plans, node) {
			struct tplan_plan_part *o = &other->part[tf->rank];
			u32 state = READ_ONCE(o->state);

			if (other != p && other->attached & BIT(tf->rank) && !other->create_err &&
			    (state == TPLAN_PLAN_PREPARED || state == TPLAN_PLAN_CLOSING) &&
			    o->peer_mask & BIT(peer) && o->peer_done[peer] < part->peer_done[peer] &&
			    !tplan_queue_done_passed(q, o->peer_done[peer]))
				blocked = true;
		}
	}
	mutex_unlock(&g->lock);
	return blocked;
}

/*
 * Wait (killably, until deadline) for the part's chains to leave every
 * queue: 0, -EAGAIN (held back by an earlier plan: no wait), -ETIMEDOUT,
 * -EINTR (dying).  The gates are opened again every
 * TPLAN_CLOSE_REOPEN_MS meanwhile: with rounds armed ahead, a producer's
 * mark that raced the close may have stored an earlier round in a ready
 * gate that close had opened to the last round armed.
 */
static int tplan_plan_drain(struct tplan_file *tf, struct tplan_plan *p, u64 deadline)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	u32 peer;
	int ret;

	if (tplan_plan_part_drained(g, tf->rank, p))
		return 0;
	if (tplan_plan_blocked(tf, p))
		return -EAGAIN;
	for (peer = 0; peer < g->world_size; peer++) {
		struct tplan_queue *q = g->queues[tf->rank][peer];

		if (!(part->peer_mask & BIT(peer)) || !q)
			continue;
		/* Not on a broken group: this rank's chains run all the same. */
		do {
			u64 until = min(deadline, ktime_get_ns() +
					TPLAN_CLOSE_REOPEN_MS * NSEC_PER_MSEC);

			ret = tplan_wait_deadline(q->owner_wq,
						  tplan_queue_done_passed(q, part->peer_done[peer]) ||
						  READ_ONCE(q->state), until, true);
			if (ret == -ETIMEDOUT && until < deadline)
				tplan_plan_open_gates(g, tf->rank, p, READ_ONCE(part->armed));
			else if (ret)
				return ret;
		} while (ret);
	}
	return 0;
}

/*
 * This rank's parts left CLOSING: now that a plan's gates are open, those
 * queued behind it drain (waited for, until deadline).  Repeats while one
 * finishes, since that may free another.  A part still held back by a
 * gated plan stays as it is.
 */
static void tplan_plans_finish_closing(struct tplan_file *tf, u64 deadline)
{
	struct tplan_group *g = tf->group;
	struct tplan_plan *p, **closing;
	bool progress = true;
	u32 n, i;

	while (progress) {
		progress = false;
		n = 0;
		mutex_lock(&g->lock);
		list_for_each_entry(p, &g->plans, node)
			if (p->closed & BIT(tf->rank) && !(p->drained & BIT(tf->rank)))
				n++;
		closing = n ? kmalloc_array(n, sizeof(*closing), GFP_KERNEL) : NULL;
		n = 0;
		if (closing) {
			list_for_each_entry(p, &g->plans, node) {
				if (p->closed & BIT(tf->rank) && !(p->drained & BIT(tf->rank))) {
					kref_get(&p->kref);
					closing[n++] = p;
				}
			}
		}
		mutex_unlock(&g->lock);

		for (i = 0; i < n; i++) {
			p = closing[i];
			if (!tplan_plan_drain(tf, p, deadline)) {
				mutex_lock(&g->lock);
				p->drained |= BIT(tf->rank);
				mutex_unlock(&g->lock);
				tplan_plan_reap(g, p);
				progress = true;
			}
			tplan_plan_put(p);
		}
		kfree(closing);
	}
}

int tplan_plan_close(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_close *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	u64 deadline = tplan_deadline(cmd->timeout_ms);
	struct tplan_plan_part *part;
	struct tplan_group *g;
	struct tplan_plan *p;
	int ret, drained, vote;
	u32 round;

	p = tplan_plan_lookup(tf, cmd->plan_id, true);
	if (IS_ERR(p))
		return PTR_ERR(p);
	g = tf->group;
	part = &p->part[tf->rank];
	if (p->closed & BIT(tf->rank)) {
		/* Closed already: its chains still queued (behind an earlier plan) or gone. */
		ret = READ_ONCE(p->drained) & BIT(tf->rank) ? -ENOENT : -EBUSY;
		tplan_plan_put(p);
		return ret;
	}
	/* The struct takes an answer, or nothing is closed (EFAULT). */
	cmd->state = READ_ONCE(part->state);
	ret = tplan_ucmd_respond(ucmd) ?: tplan_coll_begin(tf);
	if (ret) {
		tplan_plan_put(p);
		return ret;
	}
	ucmd->responded = false;	/* the final state goes out at the end */

	/* Closing: starts fail, waits end (their state is gone). */
	mutex_lock(&part->lock);
	round = part->armed;
	part->state = TPLAN_PLAN_CLOSING;
	part->started = false;
	mutex_unlock(&part->lock);
	tplan_group_wake_arrivals(g, ~0U);

	/*
	 * Prepared copies cannot be withdrawn: they go as the chunks stand,
	 * and peers' copies into this rank no longer wait for its releases.
	 */
	if (round)
		tplan_plan_open_gates(g, tf->rank, p, round);
	tplan_plan_set_released(g, tf->rank, p, TPLAN_ROUND_MAX);
	/* They run by themselves now: the plan's budget reservation goes back. */
	tplan_plan_unreserve(tf, part);
	drained = tplan_plan_drain(tf, p, deadline);
	/* Plans queued behind this one can drain now too: before the vote. */
	if (!drained) {
		mutex_lock(&g->lock);
		p->drained |= BIT(tf->rank);
		mutex_unlock(&g->lock);
	}
	tplan_plans_finish_closing(tf, deadline);

	/* Every rank's verdict: "not drained" is -EAGAIN, and means CLOSING. */
	vote = tplan_plan_vote(tf, TPLAN_COLL_PLAN_CLOSE, drained ? -EAGAIN : 0, NULL, NULL,
			       cmd->timeout_ms);
	cmd->state = vote ? TPLAN_PLAN_CLOSING : TPLAN_PLAN_CLOSED;
	mutex_lock(&part->lock);
	part->state = cmd->state;
	mutex_unlock(&part->lock);
	mutex_lock(&g->lock);
	p->closed |= BIT(tf->rank);
	mutex_unlock(&g->lock);
	tplan_plan_reap(g, p);
	tplan_plan_put(p);

	if (vote && vote != -EAGAIN)
		ret = vote;		/* a rank late or gone: this part is closed all the same */
	else if (drained == -ETIMEDOUT || drained == -EINTR)
		ret = drained;
	else
		ret = 0;
	tplan_coll_end(tf);
	/*
	 * The close happened: an answer that cannot be written now does not
	 * undo it (closing again says ENOENT or EBUSY: the state).
	 */
	if (tplan_ucmd_respond(ucmd))
		ucmd->responded = true;
	return ret;
}
