// SPDX-License-Identifier: GPL-2.0
/*
 * Plans: prepare (chains copied in and validated, the group-wide overlap
 * check, each queue's round template and budget reservation, round 1
 * queued), next_round (round k released, round k + 1 queued from the
 * templates, one call per rank, local) and start.  Prepare is two-phase:
 * reserve every queue's charge and lay out its template, vote, write,
 * vote, publish: on every rank or none.  The charge stays reserved until
 * close, so next_round only writes and publishes: a re-arm never meets a
 * full budget.  Each round to a peer waits, at its head, for that peer's
 * release of the round before (contract point 6), so next_round waits
 * for no other rank; a rank that cannot queue its round fails the plan
 * everywhere instead of voting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>

#include "plan.h"
#include "tplan_sdma.h"

/* Chains validated between two offers to reschedule. */
#define TPLAN_VALIDATE_BATCH 256

/* Memory of the part, charged to its user; it goes with the plan. */
void *tplan_part_alloc(struct tplan_plan_part *part, size_t n, size_t size)
{
	void *mem;

	if (n && size > SIZE_MAX / n)
		return NULL;
	if (tplan_charge(part->user, n * size))
		return NULL;
	mem = kvmalloc_array(max_t(size_t, n, 1), size, TPLAN_GFP_USER_SIZED);
	if (!mem)
		tplan_uncharge(part->user, n * size);
	else
		part->charged += n * size;
	return mem;
}

/* Free what tplan_part_alloc() gave (bytes of it) before the plan goes. */
void tplan_part_free(struct tplan_plan_part *part, void *mem, u64 bytes)
{
	kvfree(mem);
	tplan_uncharge(part->user, bytes);
	part->charged -= bytes;
}

/*
 * Copy in and check this rank's chains: every (chunk, peer) once, each
 * peer's chains in chunk order, each chain valid for its chunk and peer.
 * Groups the images by peer and lists the bytes each copy sends.
 * 0, -EINVAL (*why set for a chain), -EFAULT, -ENOMEM, -ENOSPC (more
 * copies than a plan may hold), -EINTR (dying).
 */
static int tplan_prepare_chains(struct tplan_file *tf, struct tplan_plan *p,
				const struct tplan_plan_prepare *cmd,
				struct tplan_chain_reject *why)
{
	struct tplan_group *g = tf->group;
	struct tplan_plan_part *part = &p->part[tf->rank];
	u32 world = g->world_size, me = tf->rank, i, at = 0, peer;
	struct tplan_plan_chain *chains;
	u32 *next_chunk, *slot;
	u64 own_heap = tplan_heap_dev(g, me, me);
	int ret = -EINVAL, n;

	if (cmd->nchains != part->nchunks * (world - 1))
		return -EINVAL;
	if (cmd->ndw > TPLAN_PLAN_DWORDS_MAX || (cmd->nchains && !cmd->ndw))
		return -EINVAL;

	refcount_inc(&tf->user->ref);
	part->user = tf->user;
	chains = kvmalloc_array(max(cmd->nchains, 1U), sizeof(*chains), TPLAN_GFP_USER_SIZED);
	next_chunk = kcalloc(world, sizeof(*next_chunk), GFP_KERNEL);
	slot = kcalloc(world + 1, sizeof(*slot), GFP_KERNEL);
	part->writers = tplan_part_alloc(part, part->nchunks, sizeof(u32));
	part->dw = tplan_part_alloc(part, cmd->ndw, sizeof(u32));
	if (part->dw)
		part->dw_bytes = (u64)cmd->ndw * sizeof(u32);
	part->images = tplan_part_alloc(part, cmd->nchains, sizeof(*part->images));
	if (part->images)
		part->images_bytes = (u64)cmd->nchains * sizeof(*part->images);
	if (!chains || !next_chunk || !slot || !part->writers || !part->dw || !part->images) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(chains, u64_to_user_ptr(cmd->chains),
			   (size_t)cmd->nchains * sizeof(*chains)) ||
	    copy_from_user(part->dw, u64_to_user_ptr(cmd->dwords), (size_t)cmd->ndw * 4) ||
	    copy_from_user(part->writers, u64_to_user_ptr(cmd->writers),
			   (size_t)part->nchunks * sizeof(u32))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < part->nchunks; i++)
		if (!part->writers[i])
			goto out;

	/* Pass 1: shape.  Count each peer's chains for the grouping. */
	for (i = 0; i < cmd->nchains; i++) {
		const struct tplan_plan_chain *c = &chains[i];

		if (c->__reserved || c->peer >= world || c->peer == me ||
		    c->chunk >= part->nchunks || c->chunk != next_chunk[c->peer] || !c->ndw ||
		    c->ndw > cmd->ndw - at)
			goto out;
		next_chunk[c->peer]++;
		at += c->ndw;
	}
	if (at != cmd->ndw)
		goto out;
	part->peer_first[0] = 0;
	for (peer = 0; peer < world; peer++) {
		part->peer_first[peer + 1] = part->peer_first[peer] +
					     (peer == me ? 0 : part->nchunks);
		slot[peer] = part->peer_first[peer];
	}

	/* Pass 2: each chain against its chunk's gates and peer, in this rank's map. */
	for (i = 0, at = 0; i < cmd->nchains; i++) {
		const struct tplan_plan_chain *c = &chains[i];
		u64 peer_heap = tplan_heap_dev(g, me, c->peer);
		u32 gchunk = p->chunk_base[me] + c->chunk;
		struct tplan_chain_env env = {
			.limits = &g->limits,
			.src_start = own_heap + part->own_off,
			.src_bytes = part->own_bytes,
			.dst_start = peer_heap + p->buf_off,
			.dst_bytes = p->buf_bytes,
			.own_heap = own_heap,
			.peer_heap = peer_heap,
			.ready_gate = own_heap + p->gate_off +
				      (u64)gchunk * TPLAN_GATE_ROW_BYTES + TPLAN_GATE_READY,
			.arrival_gate = peer_heap + p->gate_off +
					(u64)gchunk * TPLAN_GATE_ROW_BYTES + TPLAN_GATE_ARRIVAL,
			.rank = me,
		};

		ret = tplan_chain_validate(part->dw + at, c->ndw, i, &env, why);
		if (ret)
			goto out;
		part->images[slot[c->peer]++] = (struct tplan_chain_image) {
			.dw = part->dw + at, .ndw = c->ndw,
		};
		part->peer_bytes[c->peer] += tplan_chain_charge(c->ndw);
		part->peer_mask |= BIT(c->peer);
		at += c->ndw;
		if (i % TPLAN_VALIDATE_BATCH == TPLAN_VALIDATE_BATCH - 1) {
			ret = tplan_yield();
			if (ret)
				goto out;
		}
	}

	/* Each round to a peer starts with the POLL on its release. */
	for (peer = 0; peer < world; peer++)
		if (part->peer_mask & BIT(peer))
			part->peer_bytes[peer] += TPLAN_ROUND_HEAD_BYTES;

	/* The bytes each copy sends, for the group-wide overlap check. */
	n = 0;
	for (i = 0, at = 0; i < cmd->nchains; at += chains[i].ndw, i++)
		n += tplan_chain_spans(part->dw + at, chains[i].ndw, own_heap, me, i, NULL, 0);
	if (n > tplan_limits.max_plan_spans) {
		ret = -ENOSPC;
		goto out;
	}
	part->spans = tplan_part_alloc(part, n, sizeof(*part->spans));
	if (!part->spans) {
		ret = -ENOMEM;
		goto out;
	}
	part->nspans = 0;
	for (i = 0, at = 0; i < cmd->nchains; at += chains[i].ndw, i++)
		part->nspans += tplan_chain_spans(part->dw + at, chains[i].ndw, own_heap, me, i,
						  part->spans + part->nspans, n - part->nspans);
	ret = tplan_plan_wait_init(g, p, me);
out:
	kfree(slot);
	kfree(next_chunk);
	kvfree(chains);
	return ret;
}

/*
 * Every rank's spans, after a validate vote every rank passed: no byte
 * sent twice.  Done once, by the first rank here, for all of them (the
 * spans are freed then); the others take its verdict.  Nobody else reads
 * the spans, so a rank that fails later frees nothing another reads.
 */
static int tplan_prepare_overlap(struct tplan_group *g, struct tplan_plan *p,
				 struct tplan_chain_reject *why)
{
	struct tplan_chain_span *spans;
	u32 r, n = 0;
	int ret;

	if (mutex_lock_killable(&p->check_lock))
		return -EINTR;
	if (p->checked)
		goto out;
	for (r = 0; r < g->world_size; r++)
		n += p->part[r].nspans;
	if (n > tplan_limits.max_plan_spans) {
		ret = -ENOSPC;
		goto done;
	}
	spans = kvmalloc_array(max(n, 1U), sizeof(*spans), TPLAN_GFP_USER_SIZED);
	if (!spans) {
		ret = -ENOMEM;
		goto done;
	}
	n = 0;
	for (r = 0; r < g->world_size; r++) {
		memcpy(spans + n, p->part[r].spans, p->part[r].nspans * sizeof(*spans));
		n += p->part[r].nspans;
	}
	ret = tplan_chain_check_overlap(spans, n, &p->check_why);
	if (ret == -ERANGE)
		ret = -EINVAL;
	kvfree(spans);
	if (ret == -EINTR)
		goto out_unlock;	/* dying: another rank may still check */
done:
	for (r = 0; r < g->world_size; r++) {
		struct tplan_plan_part *part = &p->part[r];
		u64 bytes = (u64)part->nspans * sizeof(*part->spans);

		if (!part->spans)
			continue;
		kvfree(part->spans);
		part->spans = NULL;
		tplan_uncharge(part->user, bytes);
		part->charged -= bytes;
	}
	p->check_err = ret;
	p->checked = true;
out:
	ret = p->check_err;
	*why = p->check_why;
out_unlock:
	mutex_unlock(&p->check_lock);
	return ret;
}

static void tplan_plan_unreserve_mask(struct tplan_file *tf, struct tplan_plan_part *part,
				     u32 mask)
{
	struct tplan_queue *q;
	u32 peer;

	for (peer = 0; peer < tf->group->world_size; peer++)
		if (mask & BIT(peer) && !tplan_queue_get(tf, peer, &q))
			tplan_queue_budget_unreserve(q, part->peer_bytes[peer] * part->depth);
}

/*
 * Give back the part's reservation, if it holds one: once, at close or
 * when its prepare fails.  A rank whose file goes needs none of this: its
 * queues go with their budgets.
 */
void tplan_plan_unreserve(struct tplan_file *tf, struct tplan_plan_part *part)
{
	if (!part->reserved)
		return;
	part->reserved = false;
	tplan_plan_unreserve_mask(tf, part, part->peer_mask);
}

/*
 * Prepare's reserve step, all or none: on every queue the plan uses,
 * depth rounds' charge reserved for the plan's life and the round's
 * template laid out.  The chain images are not needed after that.
 */
static int tplan_plan_reserve(struct tplan_file *tf, struct tplan_plan *p)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	struct tplan_queue *q;
	u32 peer, n, mask = 0;
	int ret = 0;

	part->round_gate = tplan_part_alloc(part, (size_t)g->world_size * part->depth,
					    sizeof(*part->round_gate));
	if (!part->round_gate)
		return -ENOMEM;
	for (peer = 0; peer < g->world_size; peer++) {
		/* The peer's release word, in this rank's map. */
		u64 release = tplan_heap_dev(g, tf->rank, peer) + p->gate_off +
			      (u64)p->total_chunks * TPLAN_GATE_ROW_BYTES + TPLAN_GATE_RELEASED;
		struct tplan_round_template *t = &part->tmpl[peer];

		if (!(part->peer_mask & BIT(peer)))
			continue;
		n = part->peer_first[peer + 1] - part->peer_first[peer];
		ret = tplan_queue_get(tf, peer, &q);
		if (!ret)
			ret = tplan_queue_usable(q);
		if (!ret)
			ret = tplan_queue_budget_reserve(q, part->peer_bytes[peer] * part->depth);
		if (ret)
			break;
		mask |= BIT(peer);
		/* Within the budget, so within u32: head POLL, chains, gate FENCEs. */
		t->dw = tplan_part_alloc(part, part->peer_bytes[peer] / 4, sizeof(u32));
		t->chain_at = tplan_part_alloc(part, n, sizeof(u32));
		if (!t->dw || !t->chain_at)
			ret = -ENOMEM;
		else
			ret = tplan_queue_template_fill(q, part->images + part->peer_first[peer], n,
							release, t);
		if (ret)
			break;
	}
	if (ret) {
		tplan_plan_unreserve_mask(tf, part, mask);
		return ret;
	}
	part->reserved = true;
	tplan_part_free(part, part->images, part->images_bytes);
	part->images = NULL;
	tplan_part_free(part, part->dw, part->dw_bytes);
	part->dw = NULL;
	return 0;
}

/*
 * Publish and ring (or, when the ranks did not agree, take back) the
 * rounds staged on the part's queues below peer `below`.
 */
static void tplan_plan_stage_end(struct tplan_file *tf, struct tplan_plan_part *part,
				 u32 below, bool publish)
{
	struct tplan_queue *q;
	u32 peer;

	for (peer = 0; peer < below; peer++)
		if (part->peer_mask & BIT(peer) && !tplan_queue_get(tf, peer, &q))
			tplan_queue_stage_end(q, publish, &part->peer_done[peer]);
}

/*
 * Write rounds from .. to from the templates on every queue, unpublished:
 * all or none.  The charge is held already: with depth rounds reserved,
 * round r takes over round r - depth's, so each queue first waits for
 * round to - depth (and with it every round before it) to pass its gates.
 */
static int tplan_plan_stage(struct tplan_file *tf, struct tplan_plan_part *part, u32 from,
			    u32 to, u32 timeout_ms)
{
	struct tplan_queue *q;
	u32 peer, *slots;
	u64 round;
	int ret;

	for (peer = 0; peer < tf->group->world_size; peer++) {
		if (!(part->peer_mask & BIT(peer)))
			continue;
		slots = &part->round_gate[peer * part->depth];
		/* Made by the reserve step: only the file's release frees it. */
		ret = tplan_queue_get(tf, peer, &q);
		if (!ret && (u64)to >= (u64)part->first + part->depth)
			ret = tplan_queue_wait_gate(q, slots[to % part->depth], timeout_ms);
		for (round = from; !ret && round <= to; round += ret, ret = 0) {
			ret = tplan_queue_stage_rounds(q, &part->tmpl[peer], round, to - round + 1,
						       timeout_ms, slots, part->depth);
			if (ret < 0)
				break;
		}
		if (ret) {
			/* This queue's rounds written before the failure too. */
			tplan_plan_stage_end(tf, part, peer + 1, false);
			return ret;
		}
	}
	return 0;
}

/*
 * Note that this rank arms p up to round on its queues (after releasing
 * round `released`, if not 0: the release word holds it from here on),
 * and check the order of rounds on every queue it sends or receives p on
 * (tplan_plan_order_check_locked()): -EDEADLK, with nothing armed noted,
 * when it is broken.  A release made stays made: it only says that this
 * rank has read the round.
 */
static int tplan_plan_note_round(struct tplan_file *tf, struct tplan_plan *p, u32 round,
				 u32 released)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	u64 seq[TPLAN_MAX_WORLD_SIZE];
	u32 armed, peer;
	int ret;

	mutex_lock(&g->lock);
	if (released)
		tplan_plan_set_released(g, tf->rank, p, released);
	armed = part->armed;
	memcpy(seq, part->arm_seq, sizeof(seq));
	part->armed = round;
	for (peer = 0; peer < g->world_size; peer++)
		if (part->peer_mask & BIT(peer) && g->queues[tf->rank][peer])
			part->arm_seq[peer] = g->queues[tf->rank][peer]->arm_seq + 1;
	ret = tplan_plan_order_check_locked(g, p, tf->rank);
	if (ret) {
		part->armed = armed;
		memcpy(part->arm_seq, seq, sizeof(seq));
	} else {
		for (peer = 0; peer < g->world_size; peer++)
			if (part->peer_mask & BIT(peer) && g->queues[tf->rank][peer])
				g->queues[tf->rank][peer]->arm_seq++;
	}
	mutex_unlock(&g->lock);
	return ret;
}

/*
 * Rounds armed ahead and shared queues do not mix: a queue runs rounds in
 * the order they were queued, so with p's rounds queued ahead of another
 * plan's (or the other's ahead of p's), a receiver that reads the two
 * plans' rounds alternately would wait for a round queued behind one it
 * has not released.  -EDEADLK when one of the plans this rank has
 * prepared sends on a queue p sends on and either keeps more than one
 * round armed.  The sender's own parts tell it, so every queue is
 * checked by its sender; the commit vote then fails the prepare on every
 * rank.
 */
static int tplan_plan_separate(struct tplan_file *tf, struct tplan_plan *p)
{
	struct tplan_plan_part *mine = &p->part[tf->rank], *o;
	struct tplan_group *g = tf->group;
	struct tplan_plan *y;
	int ret = 0;
	u32 state;

	mutex_lock(&g->lock);
	list_for_each_entry(y, &g->plans, node) {
		if (y == p || y->create_err || !(y->attached & BIT(tf->rank)) ||
		    y->closed & BIT(tf->rank))
			continue;
		o = &y->part[tf->rank];
		state = READ_ONCE(o->state);
		if ((state == TPLAN_PLAN_PREPARED || state == TPLAN_PLAN_DONE) &&
		    o->peer_mask & mine->peer_mask && (o->depth > 1 || mine->depth > 1))
			ret = -EDEADLK;
	}
	mutex_unlock(&g->lock);
	return ret;
}

/*
 * Queue rounds part->armed + 1 .. to on this rank's queues (releasing
 * round `released` first, if not 0): written on every queue, then
 * published, with one done FENCE and one doorbell per queue for them all.
 * Local.  On an error none of them is queued.
 */
static int tplan_plan_arm_rounds(struct tplan_file *tf, struct tplan_plan *p, u32 to,
				 u32 released, u32 timeout_ms)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	u32 from;
	int ret;

	if (part->armed >= to)
		return 0;
	from = part->armed + 1;
	ret = tplan_plan_note_round(tf, p, to, released) ?:
	      tplan_plan_stage(tf, part, from, to, timeout_ms);
	if (!ret)
		tplan_plan_stage_end(tf, part, tf->group->world_size, true);
	return ret;
}

/* The last round to keep armed when round is the current one. */
static u32 tplan_plan_arm_end(struct tplan_plan_part *part, u32 round)
{
	return (u32)min_t(u64, (u64)round + part->depth - 1, TPLAN_ROUND_MAX);
}

/*
 * Prepare's second phase, on every rank or on none: reserve every queue's
 * charge and lay out the templates, vote; write round 1 on every queue
 * without publishing it, vote, then publish it (or take it back
 * everywhere).  After the first vote every rank is in this prepare, so
 * the order of rounds on shared queues is settled and checked.  With err
 * (this rank cannot), it only votes no, so that every rank fails at once
 * and nobody waits for it.
 */
static int tplan_plan_queue_first(struct tplan_file *tf, struct tplan_plan *p, u32 round,
				  u32 timeout_ms)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	int err, ret;

	err = tplan_plan_reserve(tf, p);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_RESERVE, err, NULL, NULL, timeout_ms);
	if (ret) {
		tplan_plan_unreserve(tf, part);
		return ret;
	}
	err = tplan_plan_separate(tf, p) ?:
	      tplan_plan_note_round(tf, p, round, 0) ?:
	      tplan_plan_stage(tf, part, round, round, timeout_ms);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_COMMIT, err, NULL, NULL, timeout_ms);
	if (!err)
		tplan_plan_stage_end(tf, part, tf->group->world_size, !ret);
	return ret ?: err;
}

/*
 * This rank's gate rows for a plan whose first round is first: its
 * chunks' writers per round, and every counter as the rounds before
 * first would have left it (all 0 for round 1), in this rank's heap.
 */
static void tplan_plan_gates_init(struct tplan_group *g, u32 rank, struct tplan_plan *p,
				  u32 first)
{
	struct tplan_plan_part *part = &p->part[rank];
	struct tplan_heap *h = &g->heaps[rank];
	u64 before = first - 1, row;
	u32 c;

	for (c = 0; c < p->total_chunks; c++) {
		bool mine = c >= p->chunk_base[rank] && c < p->chunk_base[rank + 1];

		row = tplan_gate_off(p, c);
		if (mine) {
			u32 w = part->writers[c - p->chunk_base[rank]];

			tplan_heap_store32(h, row + TPLAN_GATE_EXPECTED, w);
			tplan_heap_store(h, row + TPLAN_GATE_WRITERS, w * before);
			tplan_heap_store(h, row + TPLAN_GATE_READY, before);
		} else {
			tplan_heap_store(h, row + TPLAN_GATE_ARRIVAL, before);
		}
	}
	tplan_heap_flush(h);
	/* The rounds before first count as read: first's copies may land at once. */
	tplan_plan_set_released(g, rank, p, before);
}

/* A failed prepare: nothing was queued anywhere; the charge goes back. */
static void tplan_plan_fail(struct tplan_file *tf, struct tplan_plan *p)
{
	struct tplan_plan_part *part = &p->part[tf->rank];

	tplan_plan_unreserve(tf, part);
	mutex_lock(&part->lock);
	part->state = TPLAN_PLAN_FAILED;
	part->started = false;
	mutex_unlock(&part->lock);
	tplan_group_wake_arrivals(tf->group, ~0U);
}

/*
 * Mark the part busy while a step runs, if its state is one of the bits
 * of from; -EBUSY otherwise.  Steps of one file are collectives, one at a
 * time, so only a wait or a start can meet a step here.
 */
static int tplan_part_claim(struct tplan_plan_part *part, u32 from)
{
	int ret = 0;

	if (mutex_lock_killable(&part->lock))
		return -EINTR;
	if (!(BIT(part->state) & from) || part->busy)
		ret = -EBUSY;
	else
		part->busy = true;
	mutex_unlock(&part->lock);
	return ret;
}

static void tplan_part_release(struct tplan_plan_part *part, u32 state, u32 round)
{
	mutex_lock(&part->lock);
	if (state == TPLAN_PLAN_PREPARED && round != part->round)
		part->started = false;	/* a new round, not handed out yet */
	part->state = state;
	part->round = round;
	part->busy = false;
	mutex_unlock(&part->lock);
}

/*
 * The start of a plan step on this rank: its plan, referenced, its part
 * claimed (busy) in one of the states of the mask from, and the file's
 * collective slot.  What is
 * wrong with the call itself (no such plan, the wrong state, another
 * collective of this file running) fails here, on this rank only, before
 * any collective: -ENOTCONN, -ENOENT, -EBUSY.
 */
static int tplan_step_begin(struct tplan_file *tf, u32 id, u32 from, struct tplan_plan **pp)
{
	struct tplan_plan *p;
	int ret;

	p = tplan_plan_get(tf, id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	ret = tplan_part_claim(&p->part[tf->rank], from);
	if (!ret) {
		ret = tplan_coll_begin(tf);
		if (ret)
			tplan_part_release(&p->part[tf->rank], p->part[tf->rank].state,
					   p->part[tf->rank].round);
	}
	if (ret) {
		tplan_plan_put(p);
		return ret;
	}
	*pp = p;
	return 0;
}

static void tplan_step_end(struct tplan_file *tf, struct tplan_plan *p)
{
	tplan_coll_end(tf);
	tplan_plan_put(p);
}

int tplan_plan_prepare(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_prepare *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_chain_reject why = {};
	struct tplan_plan_part *part;
	struct tplan_group *g;
	u32 first = tplan_first_round();
	struct tplan_plan *p;
	int err, ret;

	memset(&cmd->reject, 0, sizeof(cmd->reject));
	if (cmd->flags)
		return -EINVAL;
	ret = tplan_step_begin(tf, cmd->plan_id, BIT(TPLAN_PLAN_EMPTY), &p);
	if (ret)
		return ret;
	g = tf->group;
	part = &p->part[tf->rank];

	/*
	 * The answer of a success (no reject) goes out first: a caller that
	 * cannot take it votes no, and nothing is queued anywhere.
	 */
	err = tplan_ucmd_respond(ucmd);
	/* Phase 1: every rank checks its own chains, then all the spans. */
	if (!err)
		err = tplan_prepare_chains(tf, p, cmd, &why);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_VALIDATE, err, &why, &cmd->reject,
			       cmd->timeout_ms);
	if (!ret)
		ret = tplan_prepare_overlap(g, p, &cmd->reject);
	if (ret)
		goto out_fail;

	tplan_plan_gates_init(g, tf->rank, p, first);
	part->first = first;

	/* Phase 2: charge every queue for the plan's life, then queue the first round. */
	ret = tplan_plan_queue_first(tf, p, first, cmd->timeout_ms);
	if (ret)
		goto out_fail;
	part->prep_seq = atomic64_inc_return(&tf->prep_seq);
	/* Armed ahead: the next rounds as next_round queues them, locally. */
	ret = tplan_plan_arm_rounds(tf, p, tplan_plan_arm_end(part, first), 0, cmd->timeout_ms);
	if (ret) {
		tplan_part_release(part, TPLAN_PLAN_FAILED, first);
		tplan_plan_fail_everywhere(g, p, ret);
		goto out;
	}
	tplan_part_release(part, TPLAN_PLAN_PREPARED, first);
	goto out;

out_fail:
	/* Nothing queued: a close has nothing to flush. */
	tplan_part_release(part, TPLAN_PLAN_FAILED, 0);
	tplan_plan_fail(tf, p);
	/* The reject, if any, still has to go out. */
	ucmd->responded = false;
out:
	tplan_step_end(tf, p);
	return ret;
}

/*
 * Release round k (this rank has read it: peers' round k + 1 copies may
 * land; with TPLAN_NEXT_ROUND_UNRELEASED its consumer does that itself,
 * tplan_release()) and queue the rounds up to k + depth not queued yet on
 * this rank's queues from the templates, each headed by the POLL on its
 * receiver's release of the round before.  Local: no rank waits for
 * another.  Each round is written on every queue, then published, so a
 * rank that cannot queue a round queues none of it; the plan then fails
 * on every rank (tplan_plan_fail_everywhere()), whose waits for this
 * rank's chunks would otherwise never end.  Round k is the module's
 * round, DONE; or, with TPLAN_NEXT_ROUND_AT, the one the caller names:
 * a round it ran in user space, between the module's round and the last
 * armed.
 */
int tplan_plan_next_round(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_next_round *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	bool at = cmd->flags & TPLAN_NEXT_ROUND_AT;
	struct tplan_plan_part *part;
	struct tplan_group *g;
	struct tplan_plan *p;
	u32 round, was, state, released;
	int ret;

	if (cmd->flags & ~TPLAN_NEXT_ROUND_FLAGS_ALL || cmd->__reserved || cmd->__reserved2)
		return -EINVAL;
	ret = tplan_step_begin(tf, cmd->plan_id, at ? BIT(TPLAN_PLAN_DONE) |
				BIT(TPLAN_PLAN_PREPARED) : BIT(TPLAN_PLAN_DONE), &p);
	if (ret)
		return ret;
	g = tf->group;
	part = &p->part[tf->rank];
	was = part->round;
	state = part->state;
	round = at ? cmd->round : was;
	if (at && (round < was || round > part->armed)) {
		tplan_part_release(part, state, was);
		ret = -EINVAL;
		goto out;
	}
	if (tplan_plan_failed(p)) {
		/* Another rank could not queue its round: nor can this plan go on here. */
		tplan_part_release(part, TPLAN_PLAN_FAILED, was);
		ret = -ECANCELED;
		goto out;
	}
	if (round == TPLAN_ROUND_MAX) {
		/* Every rank reaches the same round: each fails here, alone. */
		tplan_part_release(part, state, was);
		ret = -ERANGE;
		goto out;
	}
	/* The answer first: a caller that cannot take it gets EFAULT, nothing done. */
	cmd->round = round + 1;
	cmd->armed = max(part->armed, tplan_plan_arm_end(part, round + 1));
	ret = tplan_ucmd_respond(ucmd);
	if (ret) {
		tplan_part_release(part, state, was);
		goto out;
	}
	released = cmd->flags & TPLAN_NEXT_ROUND_UNRELEASED ? 0 : round;
	if (part->armed >= cmd->armed && released) {
		/* Nothing more to queue (the round limit): only the release. */
		mutex_lock(&g->lock);
		tplan_plan_set_released(g, tf->rank, p, released);
		mutex_unlock(&g->lock);
	}
	ret = tplan_plan_arm_rounds(tf, p, cmd->armed, released, cmd->timeout_ms);
	if (ret) {
		/* Nothing of the failed round queued here: no peer may wait for it. */
		tplan_part_release(part, TPLAN_PLAN_FAILED, was);
		tplan_plan_fail_everywhere(g, p, ret);
		goto out;
	}
	part->prep_seq = atomic64_inc_return(&tf->prep_seq);
	tplan_part_release(part, TPLAN_PLAN_PREPARED, round + 1);
out:
	tplan_step_end(tf, p);
	return ret;
}

int tplan_plan_start(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_start *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_plan_part *part;
	struct tplan_plan *p, *q;
	int ret = 0;

	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	part = &p->part[tf->rank];
	if (mutex_lock_killable(&part->lock)) {
		ret = -EINTR;
		goto out_put;
	}
	if (part->state != TPLAN_PLAN_PREPARED || part->started || part->busy) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (tplan_plan_failed(p)) {
		/* Another rank could not queue its round. */
		part->state = TPLAN_PLAN_FAILED;
		ret = -ECANCELED;
		goto out_unlock;
	}

	/* Plans sharing a queue start in the order they were prepared. */
	mutex_lock(&tf->group->lock);
	list_for_each_entry(q, &tf->group->plans, node) {
		struct tplan_plan_part *other = &q->part[tf->rank];

		if (q == p || !(q->attached & BIT(tf->rank)) || q->create_err ||
		    q->closed & BIT(tf->rank))
			continue;
		if (READ_ONCE(other->state) == TPLAN_PLAN_PREPARED && !READ_ONCE(other->started) &&
		    other->prep_seq < part->prep_seq && other->peer_mask & part->peer_mask)
			ret = -EDEADLK;
	}
	mutex_unlock(&tf->group->lock);
	if (ret)
		goto out_unlock;

	cmd->round = part->round;
	cmd->nchunks = part->nchunks;
	cmd->first_chunk = p->chunk_base[tf->rank];
	cmd->total_chunks = p->total_chunks;
	cmd->gate_offset = p->gate_off;
	/* Claimed while the answer goes out, started once the caller has it. */
	part->busy = true;
	mutex_unlock(&part->lock);
	ret = tplan_ucmd_respond(ucmd);
	mutex_lock(&part->lock);
	part->busy = false;
	if (!ret)
		part->started = true;
out_unlock:
	mutex_unlock(&part->lock);
out_put:
	tplan_plan_put(p);
	return ret;
}
