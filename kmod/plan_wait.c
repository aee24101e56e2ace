// SPDX-License-Identifier: GPL-2.0
/*
 * PLAN_WAIT: the round is complete here when this rank's chunks were
 * marked exactly writers times and arrived at every peer, and every other
 * rank's chunks arrived here.  The engine wakes waiters as arrivals land;
 * a fault of a queue this rank sends or receives on, a broken group, a
 * rank that could not queue its round and a concurrent close end the
 * wait at once.  On a timeout the report names
 * the chunks still short and by how much.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "plan.h"

/*
 * What a wait needs, as a list of counters and the value each must reach:
 * this rank's marks, this rank's chunks' arrivals at every peer, the other
 * ranks' chunks' arrivals here.  Counts only grow within a round, so the
 * waiter keeps a cursor and rechecks from the first one not reached.
 */
struct tplan_wait_item {
	u32 chunk, rank, what;
	u64 need;	/* the queues it comes by: tplan_arrival_need_bit()s */
};

static u32 tplan_wait_items(struct tplan_group *g, struct tplan_plan *p, u32 me,
			    struct tplan_wait_item *items)
{
	u64 sends = 0;
	u32 n = 0, c, r, from = 0;

	/* Marks are seen by the chains they open: any queue this rank sends on. */
	for (r = 0; r < g->world_size; r++)
		if (r != me)
			sends |= tplan_arrival_need_bit(me, me, r);
	for (c = p->chunk_base[me]; c < p->chunk_base[me + 1]; c++) {
		items[n++] = (struct tplan_wait_item) { c, me, TPLAN_SHORT_MARKS, sends };
		for (r = 0; r < g->world_size; r++)
			if (r != me)
				items[n++] = (struct tplan_wait_item) {
					c, r, TPLAN_SHORT_ARRIVAL, tplan_arrival_need_bit(me, me, r),
				};
	}
	for (c = 0; c < p->total_chunks; c++) {
		while (c >= p->chunk_base[from + 1])
			from++;		/* the owner of chunk c */
		if (from != me)
			items[n++] = (struct tplan_wait_item) {
				c, me, TPLAN_SHORT_ARRIVAL, tplan_arrival_need_bit(me, from, me),
			};
	}
	return n;
}

/*
 * At prepare: the part's list of what a wait checks, charged to its user
 * like the rest of the part, so that a wait allocates nothing.  Waits
 * only read it.
 */
int tplan_plan_wait_init(struct tplan_group *g, struct tplan_plan *p, u32 me)
{
	struct tplan_plan_part *part = &p->part[me];

	part->wait_items = tplan_part_alloc(part, (size_t)part->nchunks * g->world_size +
					    p->total_chunks, sizeof(*part->wait_items));
	if (!part->wait_items)
		return -ENOMEM;
	part->nwait = tplan_wait_items(g, p, me, part->wait_items);
	return 0;
}

static u64 tplan_wait_want(struct tplan_plan *p, u32 me, u32 round,
			   const struct tplan_wait_item *it)
{
	struct tplan_plan_part *part = &p->part[me];

	if (it->what == TPLAN_SHORT_MARKS)
		return (u64)part->writers[it->chunk - p->chunk_base[me]] * round;
	return round;
}

static u64 tplan_wait_have(struct tplan_group *g, struct tplan_plan *p,
			   const struct tplan_wait_item *it)
{
	return tplan_gate_read(g, it->rank, p, it->chunk,
			       it->what == TPLAN_SHORT_MARKS ? TPLAN_GATE_WRITERS :
							       TPLAN_GATE_ARRIVAL);
}

/* Advance *cursor past the reached items; true when all are. */
static bool tplan_wait_progress(struct tplan_group *g, struct tplan_plan *p, u32 me, u32 round,
				const struct tplan_wait_item *items, u32 n, u32 *cursor)
{
	while (*cursor < n && tplan_wait_have(g, p, &items[*cursor]) >=
			      tplan_wait_want(p, me, round, &items[*cursor]))
		(*cursor)++;
	return *cursor == n;
}

/*
 * tplan_wait_progress() (counted: debugfs wait_looks), and when not all
 * are reached, say which queues the first one not reached comes by (so
 * that only they wake this wait) and look once more: what landed before
 * the need was set is seen here, what lands after it wakes the wait
 * (tplan_group_wake_landed()).  If that look gets past the item, the next
 * one's queues are said in turn: the wait sleeps only on an item whose
 * need was set before its last look.
 */
static bool tplan_wait_check(struct tplan_group *g, struct tplan_plan *p, u32 me, u32 round,
			     const struct tplan_wait_item *items, u32 n, u32 *cursor)
{
	u32 at;

	atomic64_inc(&g->wait_looks[me]);
	if (tplan_wait_progress(g, p, me, round, items, n, cursor))
		return true;
	do {
		at = *cursor;
		atomic64_or(items[at].need, &g->arrival_need[me]);
		/* The need before the gates: pairs with tplan_group_wake_landed(). */
		smp_mb__after_atomic();
		if (tplan_wait_progress(g, p, me, round, items, n, cursor))
			return true;
	} while (*cursor != at);
	return false;
}

/*
 * Why the wait cannot complete: a broken group, a fault, a rank that
 * could not queue its round, a close meanwhile.
 */
static bool tplan_wait_ended(struct tplan_group *g, struct tplan_plan *p, u32 me)
{
	return READ_ONCE(g->broken) || tplan_plan_failed(p) ||
	       tplan_group_faulted(g, me, GENMASK(g->world_size - 1, 0)) ||
	       READ_ONCE(p->part[me].state) != TPLAN_PLAN_PREPARED;
}

/*
 * Fill the report with the items not reached (and marks over the count)
 * and return how many there are, written or not.  *extra says whether a
 * chunk got more marks than writers.
 */
static u32 tplan_wait_report(struct tplan_group *g, struct tplan_plan *p, u32 me, u32 round,
			     const struct tplan_wait_item *items, u32 n,
			     struct tplan_plan_shortfall *out, u32 cap, bool *extra)
{
	u32 i, count = 0;

	*extra = false;
	for (i = 0; i < n; i++) {
		u64 have = tplan_wait_have(g, p, &items[i]);
		u64 want = tplan_wait_want(p, me, round, &items[i]);
		u32 what = items[i].what;

		if (what == TPLAN_SHORT_MARKS && have > want) {
			what = TPLAN_SHORT_EXTRA_MARKS;
			*extra = true;
		} else if (have >= want) {
			continue;
		}
		if (count < cap)
			out[count] = (struct tplan_plan_shortfall) {
				.chunk = items[i].chunk, .rank = items[i].rank, .what = what,
				.have = have, .want = want,
			};
		count++;
	}
	return count;
}

#define TPLAN_WAIT_REPORT_MAX 4096
/* A group of one rank has no chains to wake its waiter: it polls marks. */
#define TPLAN_WAIT_ALONE_POLL_NS (10 * NSEC_PER_MSEC)

int tplan_plan_wait(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_wait *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	u64 deadline = tplan_deadline(cmd->timeout_ms);
	struct tplan_plan_shortfall *report = NULL;
	struct tplan_fault_record fault;
	const struct tplan_wait_item *items;
	struct tplan_plan_part *part;
	u32 n, cursor = 0, cap, round, me = tf->rank;
	struct tplan_group *g;
	struct tplan_plan *p;
	bool extra, done = false;
	int ret;

	cmd->report_count = 0;
	memset(&cmd->fault, 0, sizeof(cmd->fault));
	if (cmd->flags & ~TPLAN_PLAN_WAIT_FLAGS_ALL || cmd->__reserved ||
	    (cmd->report_cap && !cmd->report))
		return -EINVAL;
	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	g = tf->group;
	part = &p->part[me];
	if (mutex_lock_killable(&part->lock)) {
		ret = -EINTR;
		goto out_put;
	}
	if (cmd->flags & TPLAN_PLAN_WAIT_AT && !part->busy &&
	    (part->state == TPLAN_PLAN_PREPARED || part->state == TPLAN_PLAN_DONE)) {
		/* A round run in user space: the module's round catches up, started. */
		if (cmd->round < part->round || cmd->round > part->armed) {
			mutex_unlock(&part->lock);
			ret = -EINVAL;
			goto out_put;
		}
		part->round = cmd->round;
		part->state = TPLAN_PLAN_PREPARED;
		part->started = true;
	}
	if (part->state != TPLAN_PLAN_PREPARED || !part->started || part->busy) {
		mutex_unlock(&part->lock);
		ret = -EBUSY;
		goto out_put;
	}
	part->busy = true;
	round = part->round;
	mutex_unlock(&part->lock);
	cmd->round = round;

	items = part->wait_items;
	n = part->nwait;

	do {
		u64 until = deadline;

		if (g->world_size == 1)
			until = min(deadline, ktime_get_ns() + TPLAN_WAIT_ALONE_POLL_NS);
		ret = tplan_wait_deadline(g->arrival_wq[me],
					  (done = tplan_wait_check(g, p, me, round, items, n,
								   &cursor)) ||
					  tplan_wait_ended(g, p, me), until, false);
	} while (ret == -ETIMEDOUT && !done && ktime_get_ns() < deadline);

	/* The report is made only when there is something to report. */
	cmd->report_count = tplan_wait_report(g, p, me, round, items, n, NULL, 0, &extra);
	cap = min3(cmd->report_cap, cmd->report_count, (u32)TPLAN_WAIT_REPORT_MAX);
	if (cap) {
		report = kvcalloc(cap, sizeof(*report), TPLAN_GFP_USER_SIZED);
		if (!report)
			cap = 0;
		else
			cmd->report_count = tplan_wait_report(g, p, me, round, items, n, report,
							      cap, &extra);
	}

	if (extra) {
		/* Later rounds' gates would open early: the plan cannot go on. */
		ret = -EOVERFLOW;
	} else if (done || !cmd->report_count) {
		ret = 0;
	} else if (READ_ONCE(g->broken)) {
		ret = READ_ONCE(g->broken);
	} else if (tplan_group_fault_for(g, me, GENMASK(g->world_size - 1, 0), &fault)) {
		ret = -EIO;
		cmd->fault = (struct tplan_fault_report) {
			.src = fault.src, .dst = fault.dst, .reason = fault.reason,
			.dword = fault.dword, .offset = fault.offset,
		};
	} else if (tplan_plan_failed(p)) {
		ret = -ECANCELED;	/* a rank could not queue its round */
	} else if (READ_ONCE(part->state) != TPLAN_PLAN_PREPARED) {
		ret = -ENOENT;		/* closed (or failed) by another thread meanwhile */
	} else if (ret == -ERESTARTSYS) {
		ret = -EINTR;
	} else {
		ret = -ETIMEDOUT;
	}

	/* The answer goes out before the state moves on: EFAULT leaves it as it was. */
	if (report && cmd->report_count &&
	    copy_to_user(u64_to_user_ptr(cmd->report), report,
			 min(cmd->report_count, cap) * sizeof(*report)))
		ret = -EFAULT;
	else if (tplan_ucmd_respond(ucmd))
		ret = -EFAULT;
	kvfree(report);

	mutex_lock(&part->lock);
	if (part->state == TPLAN_PLAN_PREPARED && part->round == round) {
		if (!ret) {
			part->state = TPLAN_PLAN_DONE;
			part->started = false;
		} else if (ret == -EOVERFLOW || ret == -EIO || ret == -ECONNRESET ||
			   ret == -ECANCELED) {
			part->state = TPLAN_PLAN_FAILED;
		}
	}
	part->busy = false;
	mutex_unlock(&part->lock);
out_put:
	tplan_plan_put(p);
	return ret;
}
