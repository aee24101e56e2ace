// SPDX-License-Identifier: GPL-2.0
/*
 * Plans: lifetime (plan.h), the gate area, collective create, state.
 *
 * Gate tables live in the heaps' gate area (the same offset on every
 * rank), allocated per plan and zeroed; the rows stay the plan's until no
 * queued chain can reach them (tplan_plan_reap()), so a new plan never
 * gets rows an old chain may still bump.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "plan.h"

/* ---- votes ---------------------------------------------------------------- */

struct tplan_vote {
	s32 err;
	u32 __pad;
	struct tplan_chain_reject reject;
};
static_assert(sizeof(struct tplan_vote) <= TPLAN_COLL_SLOT_BYTES);

/* A status blob: one rank's verdict on a step, and why. */
/*
 * Exchange verdicts (killable: a plan step is never interrupted half-way;
 * each vote waits up to timeout_ms for the other ranks);
 * returns 0 when every rank said 0, else the verdict of the lowest
 * failing rank (with its reason in *reject when asked for).  Another
 * rank's EINTR (it is being killed) is ECONNRESET here, as the exchange
 * says of a rank that dies before the others arrive: EINTR only ever
 * means that a signal reached the caller.  A failed exchange (broken
 * group, a late rank, death) is returned as is, on every rank.
 */
int tplan_plan_vote(struct tplan_file *tf, u32 op, int err,
		    const struct tplan_chain_reject *why, struct tplan_chain_reject *reject,
		    u32 timeout_ms)
{
	/* The file's own buffer (one collective at a time): a vote cannot fail to be cast. */
	struct tplan_vote mine = { .err = err }, *all = tf->coll_out;
	struct tplan_group *g = tf->group;
	u32 r;
	int ret;

	if (why)
		mine.reject = *why;
	ret = tplan_group_exchange(tf, op, &mine, sizeof(mine), all, tplan_deadline(timeout_ms),
				   TPLAN_COLL_KILLABLE);
	for (r = 0; !ret && r < g->world_size; r++) {
		if (all[r].err) {
			ret = all[r].err == -EINTR && r != tf->rank ? -ECONNRESET : all[r].err;
			if (reject)
				*reject = all[r].reject;
		}
	}
	return ret;
}

/* ---- gate area ------------------------------------------------------------ */

/*
 * The kernel's part of every heap, for plans' gate tables: a sixteenth of
 * the heap (at most 16 MiB, 262144 gate rows), at its top.
 */
u64 tplan_gate_area_offset(u64 heap_size)
{
	u64 bytes = clamp_t(u64, round_down(heap_size / 16, TPLAN_GATE_ROW_BYTES),
			    TPLAN_GATE_ROW_BYTES, 16ULL << 20);

	return heap_size - bytes;
}

/* First fit among the listed plans' gate tables.  Caller holds g->lock. */
static int tplan_gate_alloc_locked(struct tplan_group *g, u64 bytes, u64 *off)
{
	u64 pos = tplan_gate_area_offset(g->heap_size), end = g->heap_size;
	struct tplan_plan *p;
	bool moved = true;

	lockdep_assert_held(&g->lock);
	bytes = round_up(bytes, TPLAN_GATE_ROW_BYTES);
	while (moved) {
		moved = false;
		list_for_each_entry(p, &g->plans, node) {
			u64 pend = p->gate_off + tplan_plan_gate_bytes(p->total_chunks);

			if (p->create_err || !p->total_chunks)
				continue;
			if (pos < pend && p->gate_off < pos + bytes) {
				pos = round_up(pend, TPLAN_GATE_ROW_BYTES);
				moved = true;
			}
		}
	}
	if (pos > end || bytes > end - pos)
		return -ENOMEM;
	*off = pos;
	return 0;
}

/* Where global chunk `chunk`'s gate row lies in every heap. */
u64 tplan_gate_off(const struct tplan_plan *p, u32 chunk)
{
	return p->gate_off + (u64)chunk * TPLAN_GATE_ROW_BYTES;
}

u64 tplan_gate_read(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 chunk,
		    u32 field)
{
	/* Acquire: data the gate's writer wrote before it is visible after. */
	return tplan_heap_load(&g->heaps[rank], tplan_gate_off(p, chunk) + field);
}

/*
 * Open this rank's gates of the plan up to round: the queued chains pass
 * their POLLs and send the chunks as they stand.
 */
void tplan_plan_open_gates(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 round)
{
	struct tplan_plan_part *part = &p->part[rank];
	struct tplan_heap *h = &g->heaps[rank];
	u64 ready;
	u32 c;

	for (c = 0; c < part->nchunks; c++) {
		ready = tplan_gate_off(p, p->chunk_base[rank] + c) + TPLAN_GATE_READY;
		if ((u32)tplan_heap_load(h, ready) < round)
			tplan_heap_store_release(h, ready, round);	/* as mark_ready: release */
	}
}

/* Where the release words lie: in each rank's own heap, after the chunks' rows. */
u64 tplan_plan_release_off(const struct tplan_plan *p)
{
	return tplan_gate_off(p, p->total_chunks) + TPLAN_GATE_RELEASED;
}

/*
 * Rank has finished reading round (TPLAN_ROUND_MAX: it reads no more):
 * every peer's engine may now run the next round's copies into it.  The
 * release orders the caller's reads of the buffer before the store, as a
 * consumer's tplan_release() does.
 */
void tplan_plan_set_released(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 round)
{
	struct tplan_heap *h = &g->heaps[rank];
	u64 word = tplan_plan_release_off(p);

	if (!p->total_chunks)
		return;		/* no rows: nothing is ever sent */
	if ((u32)tplan_heap_load(h, word) < round)
		tplan_heap_store_release(h, word, round);	/* the caller's reads before it */
}

/* The first error of a rank whose re-arm failed, or 0. */
int tplan_plan_failed(struct tplan_plan *p)
{
	return READ_ONCE(p->failed);
}

/*
 * A rank could not re-arm p: the plan is FAILED on every rank.  Each sees
 * it at its next step, and waits blocked on p end now.
 */
void tplan_plan_fail_everywhere(struct tplan_group *g, struct tplan_plan *p, int err)
{
	cmpxchg(&p->failed, 0, err);
	tplan_group_wake_arrivals(g, ~0U);
}

/* ---- the order of rounds on shared queues ----------------------------------- */

/* Both parts of y on the queue s -> d take part in rounds (not failed or closed). */
static bool tplan_order_live(struct tplan_plan *y, u32 s, u32 d)
{
	u32 a = READ_ONCE(y->part[s].state), b = READ_ONCE(y->part[d].state);

	return (a == TPLAN_PLAN_PREPARED || a == TPLAN_PLAN_DONE) &&
	       (b == TPLAN_PLAN_PREPARED || b == TPLAN_PLAN_DONE);
}

/*
 * The last round of x that d released, as its release word says (the
 * module, or d's consumer on the device, stores it).
 */
static u32 tplan_order_released(struct tplan_group *g, struct tplan_plan *x, u32 d)
{
	return (u32)tplan_heap_load(&g->heaps[d], tplan_plan_release_off(x));
}

/* Does x's latest round on the queue s -> d wait for d's release? */
static bool tplan_order_pending(struct tplan_group *g, struct tplan_plan *x, u32 s, u32 d)
{
	return (u64)tplan_order_released(g, x, d) + 1 < x->part[s].armed;
}

/*
 * Is f's round on s -> d released, but queued (or to be queued: d
 * released the round s armed last) behind w's pending one?  Then d gets
 * f's round only once it released w's.
 */
static bool tplan_order_behind(struct tplan_group *g, struct tplan_plan *f,
			       struct tplan_plan *w, u32 s, u32 d)
{
	return tplan_order_released(g, f, d) >= f->part[s].armed ||
	       f->part[s].arm_seq[d] > w->part[s].arm_seq[d];
}

/* x's rounds against every other live plan's on the queue s -> d. */
static bool tplan_order_broken_locked(struct tplan_group *g, struct tplan_plan *x, u32 s, u32 d)
{
	bool x_pending = tplan_order_pending(g, x, s, d);
	struct tplan_plan *y;

	list_for_each_entry(y, &g->plans, node) {
		if (y == x || y->create_err || !(y->attached & BIT(s)) || !(y->attached & BIT(d)) ||
		    !(y->part[s].peer_mask & BIT(d)) || !tplan_order_live(y, s, d))
			continue;
		if (x_pending ? !tplan_order_pending(g, y, s, d) &&
				tplan_order_behind(g, y, x, s, d) :
				tplan_order_pending(g, y, s, d) && tplan_order_behind(g, x, y, s, d))
			return true;
	}
	return false;
}

/*
 * After rank armed or released a round of x (its part says so already):
 * do all queues rank sends or receives x on still take rounds in the
 * order their receivers release them?  Plans sharing queues must be
 * re-armed in the same order on every rank: a queue is first in, first
 * out, so a receiver that releases plans in another order than its sender
 * armed them could wait for a round queued behind one it has not
 * released yet, forever.  -EDEADLK when that order is broken.  Caller
 * holds g->lock; O(plans x peers).
 */
int tplan_plan_order_check_locked(struct tplan_group *g, struct tplan_plan *x, u32 rank)
{
	u32 peer;

	lockdep_assert_held(&g->lock);
	for (peer = 0; peer < g->world_size; peer++) {
		if (peer == rank)
			continue;
		if (x->part[rank].peer_mask & BIT(peer) &&
		    tplan_order_broken_locked(g, x, rank, peer))
			return -EDEADLK;
		if (x->part[peer].peer_mask & BIT(rank) &&
		    tplan_order_broken_locked(g, x, peer, rank))
			return -EDEADLK;
	}
	return 0;
}

/* ---- lifetime ------------------------------------------------------------- */

static void tplan_plan_part_free(struct tplan_plan_part *part)
{
	u32 peer;

	kvfree(part->writers);
	kvfree(part->dw);
	kvfree(part->images);
	kvfree(part->spans);
	kvfree(part->wait_items);
	kvfree(part->round_gate);
	for (peer = 0; peer < TPLAN_MAX_WORLD_SIZE; peer++) {
		kvfree(part->tmpl[peer].dw);
		kvfree(part->tmpl[peer].chain_at);
	}
	if (part->user) {
		tplan_uncharge(part->user, part->charged);
		tplan_user_put(part->user);
	}
	mutex_destroy(&part->lock);
}

static void tplan_plan_release(struct kref *kref)
{
	struct tplan_plan *p = container_of(kref, struct tplan_plan, kref);
	u32 r;

	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		tplan_plan_part_free(&p->part[r]);
	mutex_destroy(&p->check_lock);
	kfree(p);
	tplan_object_add(TPLAN_OBJ_PLAN, -1);
}

void tplan_plan_put(struct tplan_plan *p)
{
	kref_put(&p->kref, tplan_plan_release);
}

/*
 * Plan id of the caller's group, referenced, with the caller's part open
 * (or, with closed_too, closed but not yet gone).
 */
struct tplan_plan *tplan_plan_lookup(struct tplan_file *tf, u32 id, bool closed_too)
{
	struct tplan_group *g = tplan_file_group(tf);
	struct tplan_plan *p;

	if (!g)
		return ERR_PTR(-ENOTCONN);
	mutex_lock(&g->lock);
	p = xa_load(&g->plan_ids, id);
	if (p && (p->create_err || !(p->attached & BIT(tf->rank)) ||
		  (!closed_too && p->closed & BIT(tf->rank))))
		p = NULL;
	if (p)
		kref_get(&p->kref);
	mutex_unlock(&g->lock);
	return p ?: ERR_PTR(-ENOENT);
}

struct tplan_plan *tplan_plan_get(struct tplan_file *tf, u32 id)
{
	return tplan_plan_lookup(tf, id, false);
}

/* Unlink p if nothing can reach it any more.  Caller holds g->lock. */
static bool tplan_plan_unlink_locked(struct tplan_group *g, struct tplan_plan *p)
{
	u32 all = GENMASK(g->world_size - 1, 0);

	lockdep_assert_held(&g->lock);
	if (!p->listed)
		return false;
	if (!p->create_err &&
	    (((p->closed | g->left) & all) != all || ((p->drained | g->left) & all) != all))
		return false;
	if (p->create_err && (p->attached | g->left) != all)
		return false;
	list_del(&p->node);
	if (p->id)
		xa_erase(&g->plan_ids, p->id);
	g->nplans--;
	p->listed = false;
	return true;
}

/* Let p go if every rank closed it (or left) and no chain can reach it. */
void tplan_plan_reap(struct tplan_group *g, struct tplan_plan *p)
{
	bool gone;

	mutex_lock(&g->lock);
	gone = tplan_plan_unlink_locked(g, p);
	mutex_unlock(&g->lock);
	if (gone)
		tplan_plan_put(p);
}

/*
 * Have the part's chains of its latest round left their queues?  A queue
 * that is gone, stopped or faulted runs nothing more.  For the part's own
 * rank (its queues cannot go meanwhile).
 */
bool tplan_plan_part_drained(struct tplan_group *g, u32 rank, struct tplan_plan *p)
{
	struct tplan_plan_part *part = &p->part[rank];
	u32 peer;

	for (peer = 0; peer < g->world_size; peer++) {
		struct tplan_queue *q = READ_ONCE(g->queues[rank][peer]);

		if (!(part->peer_mask & BIT(peer)) || !q || tplan_queue_fault_state(q))
			continue;
		if (!tplan_queue_done_passed(q, part->peer_done[peer]))
			return false;
	}
	return true;
}

/* A rank's file is gone: its queues are stopped, its parts count as closed. */
void tplan_plans_rank_left(struct tplan_group *g, u32 rank)
{
	struct tplan_plan *p, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&g->lock);
	g->left |= BIT(rank);
	list_for_each_entry_safe(p, tmp, &g->plans, node) {
		/* Its peers' rounds into it must not wait for its releases. */
		if (!p->create_err && p->attached & BIT(rank))
			tplan_plan_set_released(g, rank, p, TPLAN_ROUND_MAX);
		if (tplan_plan_unlink_locked(g, p))
			list_add(&p->node, &gone);
	}
	mutex_unlock(&g->lock);
	/* Closing waits for every rank: the others' waits must see this one go. */
	tplan_group_wake_arrivals(g, ~0U);
	list_for_each_entry_safe(p, tmp, &gone, node)
		tplan_plan_put(p);
}

/* The group is going away (no file is left): every plan with it. */
void tplan_plans_destroy(struct tplan_group *g)
{
	struct tplan_plan *p, *tmp;

	list_for_each_entry_safe(p, tmp, &g->plans, node) {
		list_del(&p->node);
		if (p->id)
			xa_erase(&g->plan_ids, p->id);
		p->listed = false;
		tplan_plan_put(p);
	}
}

/* ---- create --------------------------------------------------------------- */

struct tplan_create_blob {
	u64 buf_off, buf_bytes, own_off, own_bytes;
	u32 nchunks;
	u32 __pad;
};

static_assert(sizeof(struct tplan_create_blob) <= TPLAN_COLL_SLOT_BYTES);

static int tplan_create_check(struct tplan_group *g, const struct tplan_create_blob *b)
{
	u64 area = tplan_gate_area_offset(g->heap_size);

	if (!b->buf_bytes || b->buf_off > area || b->buf_bytes > area - b->buf_off)
		return -EINVAL;
	if (b->own_bytes && (b->own_off < b->buf_off ||
			     b->own_off - b->buf_off > b->buf_bytes ||
			     b->own_bytes > b->buf_bytes - (b->own_off - b->buf_off)))
		return -EINVAL;
	if (b->nchunks > TPLAN_PLAN_CHUNKS_MAX || (b->nchunks && !b->own_bytes))
		return -EINVAL;
	return 0;
}

/*
 * A plan, unlisted: every rank makes one before the exchange, so that the
 * rank that lists the plan cannot fail to (a rank without memory fails
 * before it arrives, like a late rank).
 */
static struct tplan_plan *tplan_plan_alloc(void)
{
	struct tplan_plan *p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	u32 r;

	if (!p)
		return NULL;
	kref_init(&p->kref);
	mutex_init(&p->check_lock);
	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		mutex_init(&p->part[r].lock);
	return p;
}

/* A plan tplan_plan_alloc() made and nobody saw. */
static void tplan_plan_discard(struct tplan_plan *p)
{
	u32 r;

	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		mutex_destroy(&p->part[r].lock);
	mutex_destroy(&p->check_lock);
	kfree(p);
}

/* List p as the plan of collective seq.  Caller holds g->lock; the first rank there does it. */
static void tplan_plan_list_locked(struct tplan_group *g, struct tplan_plan *p, u64 seq,
				   const struct tplan_create_blob *all, u32 total)
{
	u32 r, id;

	lockdep_assert_held(&g->lock);
	p->group = g;
	p->create_seq = seq;
	p->buf_off = all[0].buf_off;
	p->buf_bytes = all[0].buf_bytes;
	p->total_chunks = total;
	for (r = 0; r < g->world_size; r++)
		p->chunk_base[r + 1] = p->chunk_base[r] + all[r].nchunks;

	if (g->nplans >= tplan_limits.max_plans)
		p->create_err = -ENOSPC;
	else
		p->create_err = xa_alloc_cyclic(&g->plan_ids, &id, p, XA_LIMIT(1, INT_MAX),
						&g->next_plan_id, GFP_KERNEL_ACCOUNT);
	if (p->create_err == -EBUSY)
		p->create_err = -ENOSPC;	/* every id in use */
	else if (p->create_err > 0)
		p->create_err = 0;		/* the ids wrapped: fine */
	if (!p->create_err)
		p->id = id;
	if (!p->create_err)
		p->create_err = tplan_gate_alloc_locked(g, tplan_plan_gate_bytes(total),
							&p->gate_off);
	if (!p->create_err)
		for (r = 0; r < g->world_size; r++)
			tplan_heap_zero(&g->heaps[r], p->gate_off, tplan_plan_gate_bytes(total));
	/* Listed even when it failed, so that every rank finds the verdict. */
	list_add_tail(&p->node, &g->plans);
	p->listed = true;
	g->nplans++;
}

/*
 * This rank's closes of plans it left CLOSING: those whose chains have
 * drained since count as drained now, and may go.
 */
static void tplan_plans_refresh(struct tplan_file *tf)
{
	struct tplan_group *g = tf->group;
	struct tplan_plan *p, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&g->lock);
	list_for_each_entry_safe(p, tmp, &g->plans, node) {
		if (!(p->closed & BIT(tf->rank)) || p->drained & BIT(tf->rank) ||
		    !tplan_plan_part_drained(g, tf->rank, p))
			continue;
		p->drained |= BIT(tf->rank);
		if (tplan_plan_unlink_locked(g, p))
			list_add(&p->node, &gone);
	}
	mutex_unlock(&g->lock);
	list_for_each_entry_safe(p, tmp, &gone, node)
		tplan_plan_put(p);
}

int tplan_plan_create(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_create *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tplan_file_group(tf);
	struct tplan_create_blob mine, *all = tf->coll_out;	/* until the vote */
	struct tplan_plan *p, *fresh;
	u64 seq, total = 0;
	int ret, err;
	u32 r;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags || cmd->depth > TPLAN_PLAN_DEPTH_MAX)
		return -EINVAL;

	mine = (struct tplan_create_blob) {
		.buf_off = cmd->buffer_offset, .buf_bytes = cmd->buffer_bytes,
		.own_off = cmd->own_offset, .own_bytes = cmd->own_bytes,
		.nchunks = cmd->nchunks,
	};
	fresh = tplan_plan_alloc();
	if (!fresh)
		return -ENOMEM;
	ret = tplan_coll_begin(tf);
	if (ret)
		goto out_free;
	tplan_plans_refresh(tf);
	seq = tf->coll_seq;
	ret = tplan_group_exchange(tf, TPLAN_COLL_PLAN_CREATE, &mine, sizeof(mine), all,
				   tplan_deadline(cmd->timeout_ms), TPLAN_COLL_KILLABLE);
	if (ret)
		goto out_end;

	/* Every rank decides the same from the same blobs. */
	for (r = 0; r < g->world_size && !ret; r++) {
		ret = tplan_create_check(g, &all[r]);
		if (!ret && (all[r].buf_off != all[0].buf_off || all[r].buf_bytes != all[0].buf_bytes))
			ret = -EINVAL;
		total += all[r].nchunks;
	}
	if (ret)
		goto out_end;

	/* The first rank here makes the plan; the others attach to it. */
	mutex_lock(&g->lock);
	list_for_each_entry(p, &g->plans, node)
		if (p->create_seq == seq)
			break;
	if (list_entry_is_head(p, &g->plans, node)) {
		p = fresh;
		fresh = NULL;
		tplan_object_add(TPLAN_OBJ_PLAN, 1);
		tplan_plan_list_locked(g, p, seq, all, total);
	}
	p->attached |= BIT(tf->rank);
	ret = p->create_err;
	if (ret) {
		/* Every rank saw the failure: nobody needs the plan any more. */
		if (tplan_plan_unlink_locked(g, p)) {
			mutex_unlock(&g->lock);
			tplan_plan_put(p);
			goto out_end;
		}
		mutex_unlock(&g->lock);
		goto out_end;
	}
	p->part[tf->rank].state = TPLAN_PLAN_EMPTY;
	p->part[tf->rank].nchunks = mine.nchunks;
	p->part[tf->rank].own_off = mine.own_off;
	p->part[tf->rank].own_bytes = mine.own_bytes;
	p->part[tf->rank].depth = max(cmd->depth, 1U);
	kref_get(&p->kref);
	mutex_unlock(&g->lock);

	/* The answer goes out before every rank agrees the plan exists. */
	cmd->plan_id = p->id;
	cmd->gate_offset = p->gate_off;
	err = cmd->chunk_base && copy_to_user(u64_to_user_ptr(cmd->chunk_base), p->chunk_base,
					      (g->world_size + 1) * sizeof(u32)) ? -EFAULT : 0;
	if (!err)
		err = tplan_ucmd_respond(ucmd);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_CREATED, err, NULL, NULL, cmd->timeout_ms);
	if (ret) {
		/* Not created on some rank: on none.  Nothing was queued. */
		mutex_lock(&g->lock);
		p->part[tf->rank].state = TPLAN_PLAN_CLOSED;
		p->closed |= BIT(tf->rank);
		p->drained |= BIT(tf->rank);
		mutex_unlock(&g->lock);
		tplan_plan_reap(g, p);
	}
	tplan_plan_put(p);
out_end:
	tplan_coll_end(tf);
out_free:
	if (fresh)
		tplan_plan_discard(fresh);
	return ret;
}

/* ---- state ---------------------------------------------------------------- */

int tplan_plan_state(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_state *cmd = ucmd->cmd;
	struct tplan_group *g = tplan_file_group(ucmd->tf);
	struct tplan_plan *p;

	if (!g)
		return -ENOTCONN;
	mutex_lock(&g->lock);
	p = xa_load(&g->plan_ids, cmd->plan_id);
	if (p && !p->create_err && p->attached & BIT(ucmd->tf->rank)) {
		cmd->state = READ_ONCE(p->part[ucmd->tf->rank].state);
		cmd->round = READ_ONCE(p->part[ucmd->tf->rank].round);
		cmd->armed = READ_ONCE(p->part[ucmd->tf->rank].armed);
		cmd->depth = p->part[ucmd->tf->rank].depth;
	} else {
		p = NULL;
	}
	mutex_unlock(&g->lock);
	return p ? 0 : -ENOENT;
}
