// SPDX-License-Identifier: GPL-2.0
/*
 * Plans: collective create and prepare (two-phase: every chain validated,
 * no two ranks send the same bytes, budget charged on every queue, round
 * queued; on every rank or on none), start, wait, re-arm for the next
 * round from stored chain images (one ioctl per rank per round), and
 * collective close.
 *
 * A plan is a group object; each rank owns its part (state, round, chain
 * images).  Collective steps exchange a small status blob through
 * tplan_group_exchange() and then every rank takes the same decision from
 * the same data, so no rank ever has to tell another what happened.
 *
 * Gate tables live in the heaps' gate area (the same offset on every
 * rank), allocated per plan and zeroed; a plan and its gate table stay
 * until every rank's part is closed, because peers' chains read and write
 * them until then.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/sched/signal.h>

#include "tplan_priv.h"
#include "queue.h"
#include "chain_validate.h"
#include "tplan_sdma.h"

/* One rank's part of a plan. */
struct tplan_plan_part {
	u32 state;			/* enum tplan_plan_states */
	u32 round;
	bool started;
	u64 prep_seq;			/* this rank's order of prepared rounds */
	u32 nchunks;
	u64 own_off, own_bytes;
	u32 *writers;			/* per chunk */
	/* Chain images, grouped by peer, each group in chunk order. */
	u32 *dw;
	struct tplan_chain_image *images;
	u32 peer_first[TPLAN_MAX_WORLD_SIZE + 1];
	u64 peer_bytes[TPLAN_MAX_WORLD_SIZE];	/* charge of one round */
	u64 peer_start[TPLAN_MAX_WORLD_SIZE];	/* queue positions of the */
	u64 peer_end[TPLAN_MAX_WORLD_SIZE];	/* latest round's chains */
	u32 peer_mask;			/* queues the plan uses */
	/* While preparing: what the other ranks read after an exchange. */
	struct tplan_chain_span *spans;
	u32 nspans;
};

struct tplan_plan {
	struct list_head node;		/* g->plans */
	u32 id;
	u64 create_seq;			/* the collective that created it */
	int create_err;
	u32 attached;			/* ranks that saw the create */
	u32 closed;			/* ranks whose part is CLOSED */
	u64 buf_off, buf_bytes;
	u64 gate_off;
	u32 total_chunks;
	u32 chunk_base[TPLAN_MAX_WORLD_SIZE + 1];
	struct tplan_plan_part part[TPLAN_MAX_WORLD_SIZE];
};

/* Collective ids of the plan steps (every rank's k-th collective agrees). */
enum {
	TPLAN_COLL_PLAN_CREATE = 16,
	TPLAN_COLL_PLAN_VALIDATE,
	TPLAN_COLL_PLAN_RESERVE,
	TPLAN_COLL_PLAN_COMMIT,
	TPLAN_COLL_PLAN_CLOSE,
};

/* A status blob: one rank's verdict on a step, and why. */
struct tplan_vote {
	s32 err;
	u32 __pad;
	struct tplan_chain_reject reject;
};

/*
 * Exchange verdicts; returns 0 when every rank said 0, else the verdict of
 * the lowest failing rank (with its reason in *reject when asked for).
 * A failed exchange (broken group, timeout, signal) is returned as is.
 */
static int tplan_plan_vote(struct tplan_file *tf, u32 op, int err,
			   const struct tplan_chain_reject *why,
			   struct tplan_chain_reject *reject, long timeout)
{
	struct tplan_group *g = tf->group;
	struct tplan_vote mine = { .err = err }, *all;
	u32 r;
	int ret;

	if (why)
		mine.reject = *why;
	all = kvmalloc_array(g->world_size, sizeof(*all), TPLAN_GFP_USER_SIZED);
	if (!all)
		return -ENOMEM;
	ret = tplan_group_exchange(tf, op, &mine, sizeof(mine), all, timeout);
	if (!ret) {
		for (r = 0; r < g->world_size; r++) {
			if (all[r].err) {
				ret = all[r].err;
				if (reject)
					*reject = all[r].reject;
				break;
			}
		}
	}
	kvfree(all);
	return ret;
}

/* ---- gate area ---------------------------------------------------------- */

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

/* First fit among the live plans' gate tables.  Caller holds g->lock. */
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
			u64 pend = p->gate_off + (u64)p->total_chunks * TPLAN_GATE_ROW_BYTES;

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

static u8 *tplan_gate_row(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 chunk)
{
	return g->heaps[rank].vaddr + p->gate_off + (u64)chunk * TPLAN_GATE_ROW_BYTES;
}

static u64 tplan_gate_read(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 chunk,
			   u32 field)
{
	/* Acquire: data the gate's writer wrote before it is visible after. */
	return smp_load_acquire((u64 *)(tplan_gate_row(g, rank, p, chunk) + field));
}

/*
 * Open this rank's gates of the plan up to round: the queued chains pass
 * their POLLs and send the chunks as they stand.
 */
static void tplan_plan_open_gates(struct tplan_group *g, u32 rank, struct tplan_plan *p,
				  u32 round)
{
	struct tplan_plan_part *part = &p->part[rank];
	u32 c;

	for (c = 0; c < part->nchunks; c++) {
		u64 *ready = (u64 *)(tplan_gate_row(g, rank, p, p->chunk_base[rank] + c) +
				     TPLAN_GATE_READY);

		if ((u32)READ_ONCE(*ready) < round)
			smp_store_release(ready, round);	/* as mark_ready: release */
	}
}

/* ---- lookup and teardown ------------------------------------------------ */

static struct tplan_plan *tplan_plan_find_locked(struct tplan_group *g, u32 id)
{
	struct tplan_plan *p;

	lockdep_assert_held(&g->lock);
	list_for_each_entry(p, &g->plans, node)
		if (p->id == id && !p->create_err)
			return p;
	return NULL;
}

static struct tplan_plan *tplan_plan_find(struct tplan_file *tf, u32 id)
{
	struct tplan_group *g = tf->group;
	struct tplan_plan *p;

	mutex_lock(&g->lock);
	p = tplan_plan_find_locked(g, id);
	if (p && (!(p->attached & BIT(tf->rank)) || p->closed & BIT(tf->rank)))
		p = NULL;
	mutex_unlock(&g->lock);
	return p;
}

/* Plan id of the caller's group, with the caller's part open. */
static struct tplan_plan *tplan_plan_get(struct tplan_file *tf, u32 id)
{
	struct tplan_plan *p;

	if (!tf->group)
		return ERR_PTR(-ENOTCONN);
	p = tplan_plan_find(tf, id);
	return p ?: ERR_PTR(-ENOENT);
}

static void tplan_plan_part_free(struct tplan_plan_part *part)
{
	kvfree(part->writers);
	kvfree(part->dw);
	kvfree(part->images);
	kvfree(part->spans);
	part->writers = NULL;
	part->dw = NULL;
	part->images = NULL;
	part->spans = NULL;
}

static void tplan_plan_free(struct tplan_plan *p)
{
	u32 r;

	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		tplan_plan_part_free(&p->part[r]);
	kfree(p);
}

/* The group is going away: every plan with it. */
void tplan_plans_destroy(struct tplan_group *g)
{
	struct tplan_plan *p, *tmp;

	list_for_each_entry_safe(p, tmp, &g->plans, node) {
		list_del(&p->node);
		tplan_plan_free(p);
	}
}

/*
 * A rank's part is closed; the last one frees the plan and its gates.  The
 * part goes under the lock, before the bit that lets another rank free
 * the whole plan.
 */
static void tplan_plan_part_closed(struct tplan_file *tf, struct tplan_plan *p)
{
	struct tplan_group *g = tf->group;
	bool last;

	mutex_lock(&g->lock);
	tplan_plan_part_free(&p->part[tf->rank]);
	p->part[tf->rank].state = TPLAN_PLAN_CLOSED;
	p->closed |= BIT(tf->rank);
	last = p->closed == GENMASK(g->world_size - 1, 0);
	if (last)
		list_del(&p->node);
	mutex_unlock(&g->lock);
	if (last)
		tplan_plan_free(p);
}

/* ---- create ------------------------------------------------------------- */

struct tplan_create_blob {
	u64 buf_off, buf_bytes, own_off, own_bytes;
	u32 nchunks;
	u32 __pad;
};

static int tplan_create_check(struct tplan_group *g, const struct tplan_create_blob *b, u32 rank)
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

int tplan_plan_create(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_create *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tf->group;
	struct tplan_create_blob mine, *all;
	struct tplan_plan *p;
	u64 seq, total = 0;
	u32 r;
	int ret;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags || cmd->__reserved)
		return -EINVAL;

	mine = (struct tplan_create_blob) {
		.buf_off = cmd->buffer_offset, .buf_bytes = cmd->buffer_bytes,
		.own_off = cmd->own_offset, .own_bytes = cmd->own_bytes,
		.nchunks = cmd->nchunks,
	};
	all = kvmalloc_array(g->world_size, sizeof(*all), TPLAN_GFP_USER_SIZED);
	if (!all)
		return -ENOMEM;
	seq = tf->coll_seq;
	ret = tplan_group_exchange(tf, TPLAN_COLL_PLAN_CREATE, &mine, sizeof(mine), all,
				   tplan_timeout_jiffies(cmd->timeout_ms));
	if (ret)
		goto out_free;

	/* Every rank decides the same from the same blobs. */
	for (r = 0; r < g->world_size && !ret; r++) {
		ret = tplan_create_check(g, &all[r], r);
		if (!ret && (all[r].buf_off != all[0].buf_off || all[r].buf_bytes != all[0].buf_bytes))
			ret = -EINVAL;
		total += all[r].nchunks;
	}
	if (ret)
		goto out_free;

	/* The first rank here makes the plan; the others attach to it. */
	mutex_lock(&g->lock);
	list_for_each_entry(p, &g->plans, node)
		if (p->create_seq == seq)
			break;
	if (list_entry_is_head(p, &g->plans, node)) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p) {
			mutex_unlock(&g->lock);
			ret = -ENOMEM;
			goto out_free;
		}
		p->create_seq = seq;
		p->id = ++g->next_plan_id;
		p->buf_off = all[0].buf_off;
		p->buf_bytes = all[0].buf_bytes;
		p->total_chunks = total;
		for (r = 0; r < g->world_size; r++)
			p->chunk_base[r + 1] = p->chunk_base[r] + all[r].nchunks;
		p->create_err = tplan_gate_alloc_locked(g, total * TPLAN_GATE_ROW_BYTES,
							&p->gate_off);
		if (!p->create_err)
			for (r = 0; r < g->world_size; r++)
				memset(g->heaps[r].vaddr + p->gate_off, 0,
				       total * TPLAN_GATE_ROW_BYTES);
		list_add_tail(&p->node, &g->plans);
	}
	p->attached |= BIT(tf->rank);
	ret = p->create_err;
	if (ret) {
		/* Every rank saw the failure: nobody needs the plan any more. */
		if (p->attached == GENMASK(g->world_size - 1, 0)) {
			list_del(&p->node);
			kfree(p);
		}
		mutex_unlock(&g->lock);
		goto out_free;
	}
	p->part[tf->rank] = (struct tplan_plan_part) {
		.state = TPLAN_PLAN_EMPTY,
		.nchunks = mine.nchunks,
		.own_off = mine.own_off,
		.own_bytes = mine.own_bytes,
	};
	cmd->plan_id = p->id;
	cmd->gate_offset = p->gate_off;
	mutex_unlock(&g->lock);

	if (cmd->chunk_base &&
	    copy_to_user(u64_to_user_ptr(cmd->chunk_base), p->chunk_base,
			 (g->world_size + 1) * sizeof(u32)))
		ret = -EFAULT;
out_free:
	kvfree(all);
	return ret;
}

/* ---- prepare ------------------------------------------------------------ */

/*
 * Copy in and check this rank's chains: every (chunk, peer) once, each
 * peer's chains in chunk order, each chain valid for its chunk and peer.
 * Groups the images by peer.  0 or -EINVAL (*why set for a chain).
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
	u64 own_heap = g->heaps[me].dev_base;
	int ret = -EINVAL, n;

	if (cmd->nchains != part->nchunks * (world - 1))
		return -EINVAL;
	if (cmd->ndw > TPLAN_PLAN_DWORDS_MAX || (cmd->nchains && !cmd->ndw))
		return -EINVAL;

	chains = kvmalloc_array(max(cmd->nchains, 1U), sizeof(*chains), TPLAN_GFP_USER_SIZED);
	next_chunk = kcalloc(world, sizeof(*next_chunk), GFP_KERNEL);
	slot = kcalloc(world + 1, sizeof(*slot), GFP_KERNEL);
	part->writers = kvmalloc_array(max(part->nchunks, 1U), sizeof(u32), TPLAN_GFP_USER_SIZED);
	part->dw = kvmalloc_array(max(cmd->ndw, 1U), sizeof(u32), TPLAN_GFP_USER_SIZED);
	part->images = kvmalloc_array(max(cmd->nchains, 1U), sizeof(*part->images), TPLAN_GFP_USER_SIZED);
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
		    c->chunk >= part->nchunks || c->chunk != next_chunk[c->peer] || !c->ndw || c->ndw > cmd->ndw - at)
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

	/* Pass 2: validate each chain against its chunk's gates and peer. */
	for (i = 0, at = 0; i < cmd->nchains; i++) {
		const struct tplan_plan_chain *c = &chains[i];
		u64 peer_heap = g->heaps[c->peer].dev_base;
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
		part->peer_bytes[c->peer] += c->ndw * 4ULL;
		part->peer_mask |= BIT(c->peer);
		at += c->ndw;
	}

	/* The bytes each copy sends, for the group-wide overlap check. */
	n = 0;
	for (i = 0, at = 0; i < cmd->nchains; at += chains[i].ndw, i++)
		n += tplan_chain_spans(part->dw + at, chains[i].ndw, own_heap, me, i, NULL, 0);
	part->spans = kvmalloc_array(max(n, 1), sizeof(*part->spans), TPLAN_GFP_USER_SIZED);
	if (!part->spans) {
		ret = -ENOMEM;
		goto out;
	}
	part->nspans = 0;
	for (i = 0, at = 0; i < cmd->nchains; at += chains[i].ndw, i++)
		part->nspans += tplan_chain_spans(part->dw + at, chains[i].ndw, own_heap, me, i,
						  part->spans + part->nspans, n - part->nspans);
	ret = 0;
out:
	kfree(slot);
	kfree(next_chunk);
	kvfree(chains);
	return ret;
}

/* Every rank's spans, after the validate exchange: no byte sent twice. */
static int tplan_prepare_overlap(struct tplan_group *g, struct tplan_plan *p,
				 struct tplan_chain_reject *why)
{
	struct tplan_chain_span *spans;
	u32 r, n = 0;
	int ret;

	for (r = 0; r < g->world_size; r++)
		n += p->part[r].nspans;
	if (!n)
		return 0;
	spans = kvmalloc_array(n, sizeof(*spans), TPLAN_GFP_USER_SIZED);
	if (!spans) {
		ret = -ENOMEM;
		goto out;
	}
	n = 0;
	for (r = 0; r < g->world_size; r++) {
		memcpy(spans + n, p->part[r].spans, p->part[r].nspans * sizeof(*spans));
		n += p->part[r].nspans;
	}
	ret = tplan_chain_check_overlap(spans, n, why);
	if (ret == -ERANGE)
		ret = -EINVAL;
out:
	kvfree(spans);
	return ret;
}

static void tplan_plan_unreserve(struct tplan_file *tf, struct tplan_plan_part *part, u32 below)
{
	struct tplan_queue *q;
	u32 peer;

	for (peer = 0; peer < below; peer++)
		if (part->peer_mask & BIT(peer) && !tplan_queue_get(tf, peer, &q))
			tplan_queue_budget_unreserve(q, part->peer_bytes[peer]);
}

/* Reserve one round's charge on every queue the plan uses; all or none. */
static int tplan_plan_reserve(struct tplan_file *tf, struct tplan_plan_part *part)
{
	struct tplan_queue *q;
	u32 peer;
	int ret = 0;

	for (peer = 0; peer < tf->group->world_size; peer++) {
		if (!(part->peer_mask & BIT(peer)))
			continue;
		ret = tplan_queue_get(tf, peer, &q);
		if (!ret)
			ret = tplan_queue_usable(q);
		if (!ret)
			ret = tplan_queue_budget_reserve(q, part->peer_bytes[peer]);
		if (ret) {
			tplan_plan_unreserve(tf, part, peer);
			return ret;
		}
	}
	return 0;
}

/*
 * Write round's chains on every queue, charges already reserved.  On an
 * error, the queues not written get their charge back; those written hold
 * chains that the caller flushes by opening the gates.
 */
static int tplan_plan_write(struct tplan_file *tf, struct tplan_plan_part *part, u32 round,
			    long *timeout)
{
	struct tplan_queue *q;
	u32 peer, i;
	int ret = 0;

	for (peer = 0; peer < tf->group->world_size; peer++) {
		if (!(part->peer_mask & BIT(peer)))
			continue;
		if (tplan_queue_get(tf, peer, &q))
			continue;	/* created by the reserve step */
		if (ret) {
			tplan_queue_budget_unreserve(q, part->peer_bytes[peer]);
			continue;
		}
		for (i = part->peer_first[peer]; i < part->peer_first[peer + 1]; i++)
			part->images[i].ref = round;
		part->peer_start[peer] = q->wtail;
		ret = tplan_queue_write_chains(q, part->images + part->peer_first[peer],
					       part->peer_first[peer + 1] - part->peer_first[peer],
					       timeout);
		if (ret)
			tplan_queue_budget_unreserve(q, part->peer_bytes[peer]);
		part->peer_end[peer] = q->wtail;
	}
	return ret;
}

/*
 * Reserve, vote, write, vote: the round is queued on every rank or on
 * none.  *written says whether this rank's rings got chains (which a
 * failure must flush).  The second vote is also the barrier after which
 * peers may start the round.
 */
static int tplan_plan_queue_round(struct tplan_file *tf, struct tplan_plan *p, u32 round,
				  long timeout, bool *written)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	int err, ret;

	*written = false;
	err = tplan_plan_reserve(tf, part);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_RESERVE, err, NULL, NULL, timeout);
	if (ret) {
		if (!err)
			tplan_plan_unreserve(tf, part, tf->group->world_size);
		return ret;
	}
	err = tplan_plan_write(tf, part, round, &timeout);
	*written = true;
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_COMMIT, err, NULL, NULL, timeout);
	return ret ?: err;
}

static void tplan_plan_fail(struct tplan_file *tf, struct tplan_plan *p, u32 round, bool written)
{
	struct tplan_plan_part *part = &p->part[tf->rank];

	/* A failed preparation flushes what it queued: the gates open. */
	if (written)
		tplan_plan_open_gates(tf->group, tf->rank, p, round);
	part->state = TPLAN_PLAN_FAILED;
	part->started = false;
}

int tplan_plan_prepare(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_prepare *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tf->group;
	long timeout = tplan_timeout_jiffies(cmd->timeout_ms);
	struct tplan_chain_reject why = {};
	struct tplan_plan_part *part;
	struct tplan_plan *p;
	bool written = false;
	int err, ret;
	u32 c;

	memset(&cmd->reject, 0, sizeof(cmd->reject));
	if (cmd->flags)
		return -EINVAL;
	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	part = &p->part[tf->rank];
	if (part->state != TPLAN_PLAN_EMPTY)
		return -EBUSY;

	/* Phase 1: every rank checks its own chains, then all the spans. */
	err = tplan_prepare_chains(tf, p, cmd, &why);
	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_VALIDATE, err, &why, &cmd->reject, timeout);
	if (!ret) {
		ret = tplan_prepare_overlap(g, p, &cmd->reject);
		/* Nobody reads the spans after this vote. */
		err = tplan_plan_vote(tf, TPLAN_COLL_PLAN_VALIDATE, ret, &cmd->reject, NULL, timeout);
		ret = ret ?: err;
	}
	kvfree(part->spans);
	part->spans = NULL;
	if (ret)
		goto out_fail;

	for (c = 0; c < part->nchunks; c++)
		WRITE_ONCE(*(u32 *)(tplan_gate_row(g, tf->rank, p, p->chunk_base[tf->rank] + c) +
				    TPLAN_GATE_EXPECTED), part->writers[c]);

	/* Phase 2: charge every queue, then queue round 1. */
	ret = tplan_plan_queue_round(tf, p, 1, timeout, &written);
	if (ret)
		goto out_fail;
	part->state = TPLAN_PLAN_PREPARED;
	part->round = 1;
	part->prep_seq = ++tf->prep_seq;
	return 0;

out_fail:
	tplan_plan_fail(tf, p, 1, written);
	return ret;
}

/* ---- start, wait -------------------------------------------------------- */

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
	if (part->state != TPLAN_PLAN_PREPARED || part->started)
		return -EBUSY;

	/* Plans sharing a queue start in the order they were prepared. */
	mutex_lock(&tf->group->lock);
	list_for_each_entry(q, &tf->group->plans, node) {
		struct tplan_plan_part *other = &q->part[tf->rank];

		if (q == p || !(q->attached & BIT(tf->rank)) || q->create_err)
			continue;
		if (other->state == TPLAN_PLAN_PREPARED && !other->started &&
		    other->prep_seq < part->prep_seq && other->peer_mask & part->peer_mask)
			ret = -EDEADLK;
	}
	mutex_unlock(&tf->group->lock);
	if (ret)
		return ret;

	part->started = true;
	cmd->round = part->round;
	cmd->nchunks = part->nchunks;
	cmd->first_chunk = p->chunk_base[tf->rank];
	cmd->total_chunks = p->total_chunks;
	cmd->gate_offset = p->gate_off;
	return 0;
}

/*
 * What a wait needs, as a list of counters and the value each must reach:
 * this rank's marks, this rank's chunks' arrivals at every peer, the other
 * ranks' chunks' arrivals here.  Counts only grow within a round, so the
 * waiter keeps a cursor and rechecks from the first one not reached.
 */
struct tplan_wait_item {
	u32 chunk, rank, what;
};

static u32 tplan_wait_items(struct tplan_group *g, struct tplan_plan *p, u32 me,
			    struct tplan_wait_item *items)
{
	u32 n = 0, c, r;

	for (c = p->chunk_base[me]; c < p->chunk_base[me + 1]; c++) {
		items[n++] = (struct tplan_wait_item) { c, me, TPLAN_SHORT_MARKS };
		for (r = 0; r < g->world_size; r++)
			if (r != me)
				items[n++] = (struct tplan_wait_item) { c, r, TPLAN_SHORT_ARRIVAL };
	}
	for (c = 0; c < p->total_chunks; c++)
		if (c < p->chunk_base[me] || c >= p->chunk_base[me + 1])
			items[n++] = (struct tplan_wait_item) { c, me, TPLAN_SHORT_ARRIVAL };
	return n;
}

static u64 tplan_wait_want(struct tplan_plan *p, u32 me, const struct tplan_wait_item *it)
{
	struct tplan_plan_part *part = &p->part[me];

	if (it->what == TPLAN_SHORT_MARKS)
		return (u64)part->writers[it->chunk - p->chunk_base[me]] * part->round;
	return part->round;
}

static u64 tplan_wait_have(struct tplan_group *g, struct tplan_plan *p,
			   const struct tplan_wait_item *it)
{
	return tplan_gate_read(g, it->rank, p, it->chunk,
			       it->what == TPLAN_SHORT_MARKS ? TPLAN_GATE_WRITERS :
							       TPLAN_GATE_ARRIVAL);
}

/* Advance *cursor past the reached items; true when all are. */
static bool tplan_wait_progress(struct tplan_group *g, struct tplan_plan *p, u32 me,
				const struct tplan_wait_item *items, u32 n, u32 *cursor)
{
	while (*cursor < n &&
	       tplan_wait_have(g, p, &items[*cursor]) >= tplan_wait_want(p, me, &items[*cursor]))
		(*cursor)++;
	return *cursor == n;
}

static bool tplan_wait_broken(struct tplan_file *tf, struct tplan_plan_part *part)
{
	struct tplan_group *g = tf->group;
	u32 peer;

	if (READ_ONCE(g->broken))
		return true;
	for (peer = 0; peer < g->world_size; peer++)
		if (part->peer_mask & BIT(peer) && g->queues[tf->rank][peer] &&
		    READ_ONCE(g->queues[tf->rank][peer]->state) == TPLAN_QUEUE_FAULT)
			return true;
	return false;
}

/*
 * Fill the report with the items not reached (and marks over the count)
 * and return how many there are, written or not.  *extra says whether a
 * chunk got more marks than writers.
 */
static u32 tplan_wait_report(struct tplan_group *g, struct tplan_plan *p, u32 me,
			     const struct tplan_wait_item *items, u32 n,
			     struct tplan_plan_shortfall *out, u32 cap, bool *extra)
{
	u32 i, count = 0;

	*extra = false;
	for (i = 0; i < n; i++) {
		u64 have = tplan_wait_have(g, p, &items[i]), want = tplan_wait_want(p, me, &items[i]);
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

int tplan_plan_wait(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_wait *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tf->group;
	struct tplan_plan_shortfall *report = NULL;
	struct tplan_wait_item *items;
	struct tplan_plan_part *part;
	u32 n, cursor = 0, cap;
	struct tplan_plan *p;
	bool extra, done = false;
	long left, timeout = tplan_timeout_jiffies(cmd->timeout_ms);
	int ret;

	cmd->report_count = 0;
	if (cmd->flags || cmd->__reserved || (cmd->report_cap && !cmd->report))
		return -EINVAL;
	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	part = &p->part[tf->rank];
	if (part->state != TPLAN_PLAN_PREPARED || !part->started)
		return -EBUSY;
	cmd->round = part->round;

	items = kvmalloc_array((size_t)part->nchunks * g->world_size + p->total_chunks + 1,
			       sizeof(*items), TPLAN_GFP_USER_SIZED);
	if (!items)
		return -ENOMEM;
	n = tplan_wait_items(g, p, tf->rank, items);

	/*
	 * The engine wakes arrival_wq on every ATOMIC.  A group of one rank
	 * has no chains, nothing to wake it: only there marks are polled.
	 */
	do {
		long step = g->world_size > 1 ? timeout : min_t(long, timeout, HZ / 100 + 1);

		left = wait_event_interruptible_timeout(g->arrival_wq,
			(done = tplan_wait_progress(g, p, tf->rank, items, n, &cursor)) ||
			tplan_wait_broken(tf, part), step);
		if (left > 0 || left < 0)
			break;
		timeout -= step;
	} while (timeout > 0);

	cap = min_t(u32, cmd->report_cap, TPLAN_WAIT_REPORT_MAX);
	if (cap) {
		report = kvcalloc(cap, sizeof(*report), TPLAN_GFP_USER_SIZED);
		if (!report)
			cap = 0;
	}
	cmd->report_count = tplan_wait_report(g, p, tf->rank, items, n, report, cap, &extra);

	if (extra) {
		/* Later rounds' gates would open early: the plan cannot go on. */
		ret = -EOVERFLOW;
	} else if (done || !cmd->report_count) {
		ret = 0;
	} else if (tplan_wait_broken(tf, part)) {
		ret = READ_ONCE(g->broken) ?: -EIO;
	} else if (left < 0) {
		ret = -EINTR;
	} else {
		ret = -ETIMEDOUT;
	}

	if (report && cmd->report_count &&
	    copy_to_user(u64_to_user_ptr(cmd->report), report,
			 min(cmd->report_count, cap) * sizeof(*report)))
		ret = ret ?: -EFAULT;
	kvfree(report);
	kvfree(items);

	if (!ret) {
		part->state = TPLAN_PLAN_DONE;
		part->started = false;
	} else if (ret != -ETIMEDOUT && ret != -EINTR) {
		part->state = TPLAN_PLAN_FAILED;
	}
	return ret;
}

/* ---- next round, close, state ------------------------------------------- */

int tplan_plan_next_round(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_next_round *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_plan_part *part;
	struct tplan_plan *p;
	bool written;
	int ret;

	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	part = &p->part[tf->rank];
	if (part->state != TPLAN_PLAN_DONE)
		return -EBUSY;
	if (part->round == TPLAN_ROUND_MAX)
		return -ERANGE;

	ret = tplan_plan_queue_round(tf, p, part->round + 1,
				     tplan_timeout_jiffies(cmd->timeout_ms), &written);
	if (ret) {
		/* Nothing queued anywhere: still DONE.  Otherwise flushed. */
		if (written)
			tplan_plan_fail(tf, p, part->round + 1, true);
		return ret;
	}
	part->round++;
	part->state = TPLAN_PLAN_PREPARED;
	part->prep_seq = ++tf->prep_seq;
	cmd->round = part->round;
	return 0;
}

/*
 * Has every chain of the part's latest round left its queues?  Without
 * waiting: *blocked says whether one waits behind another plan's chain
 * that is still gated.
 */
static bool tplan_plan_drained(struct tplan_file *tf, struct tplan_plan *p, bool *blocked)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	struct tplan_plan *other;
	bool drained = true;
	u32 peer;

	*blocked = false;
	for (peer = 0; peer < g->world_size; peer++) {
		struct tplan_queue *q = g->queues[tf->rank][peer];

		if (!(part->peer_mask & BIT(peer)) || !q)
			continue;
		/* Acquire: pairs with the engine's release of rptr (queue.h). */
		if (smp_load_acquire(&q->rptr) >= part->peer_end[peer] || READ_ONCE(q->state))
			continue;
		drained = false;
		mutex_lock(&g->lock);
		list_for_each_entry(other, &g->plans, node) {
			struct tplan_plan_part *o = &other->part[tf->rank];

			/* An earlier plan's chains, not through yet (rptr: queue.h). */
			if (other != p && other->attached & BIT(tf->rank) &&
			    (o->state == TPLAN_PLAN_PREPARED || o->state == TPLAN_PLAN_CLOSING) &&
			    o->peer_mask & BIT(peer) && o->peer_start[peer] < part->peer_start[peer] &&
			    smp_load_acquire(&q->rptr) < o->peer_end[peer])	/* queue.h */
				*blocked = true;
		}
		mutex_unlock(&g->lock);
	}
	return drained;
}

/* Wait (bounded) for the part's chains to leave every queue. */
static int tplan_plan_drain(struct tplan_file *tf, struct tplan_plan *p, long timeout)
{
	struct tplan_plan_part *part = &p->part[tf->rank];
	struct tplan_group *g = tf->group;
	bool blocked;
	u32 peer;
	long left;

	if (tplan_plan_drained(tf, p, &blocked))
		return 0;
	if (blocked)
		return -EAGAIN;
	for (peer = 0; peer < g->world_size; peer++) {
		struct tplan_queue *q = g->queues[tf->rank][peer];

		if (!(part->peer_mask & BIT(peer)) || !q)
			continue;
		/* rptr with acquire, paired with the engine's release (queue.h) */
		left = wait_event_interruptible_timeout(q->owner_wq,
			smp_load_acquire(&q->rptr) >= part->peer_end[peer] ||	/* queue.h */
			READ_ONCE(q->state) || READ_ONCE(g->broken), timeout);
		if (left < 0)
			return -EINTR;
		if (!left)
			return -ETIMEDOUT;
		timeout = left;
	}
	return 0;
}

/*
 * Finish the parts left CLOSING that nothing holds back any more: a plan
 * was closed, its gates are open, so the chains queued behind it drain
 * (waited for, bounded).  Repeats while one finishes, since that may free
 * another.  A part still blocked by a gated plan stays CLOSING.
 */
static void tplan_plans_finish_closing(struct tplan_file *tf)
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
			if (p->attached & BIT(tf->rank) &&
			    p->part[tf->rank].state == TPLAN_PLAN_CLOSING)
				n++;
		closing = n ? kmalloc_array(n, sizeof(*closing), GFP_KERNEL) : NULL;
		n = 0;
		if (closing)
			list_for_each_entry(p, &g->plans, node)
				if (p->attached & BIT(tf->rank) &&
				    p->part[tf->rank].state == TPLAN_PLAN_CLOSING)
					closing[n++] = p;
		mutex_unlock(&g->lock);

		/* This rank's part is open, so none of these plans can be freed. */
		for (i = 0; i < n; i++) {
			if (tplan_plan_drain(tf, closing[i], tplan_timeout_jiffies(0)))
				continue;
			tplan_plan_part_closed(tf, closing[i]);
			progress = true;
		}
		kfree(closing);
	}
}

int tplan_plan_close(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_close *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_plan_part *part;
	struct tplan_plan *p;
	long timeout = tplan_timeout_jiffies(cmd->timeout_ms);
	int ret, err;

	p = tplan_plan_get(tf, cmd->plan_id);
	if (IS_ERR(p))
		return PTR_ERR(p);
	part = &p->part[tf->rank];
	if (part->state == TPLAN_PLAN_CLOSING)
		return -EBUSY;

	/* Prepared copies cannot be withdrawn: they go as the chunks stand. */
	if (part->round)
		tplan_plan_open_gates(tf->group, tf->rank, p, part->round);

	ret = tplan_plan_vote(tf, TPLAN_COLL_PLAN_CLOSE, 0, NULL, NULL, timeout);
	err = tplan_plan_drain(tf, p, timeout);
	if (err == -EAGAIN) {
		part->state = TPLAN_PLAN_CLOSING;
		cmd->state = TPLAN_PLAN_CLOSING;
		return ret;
	}
	tplan_plan_part_closed(tf, p);
	cmd->state = TPLAN_PLAN_CLOSED;
	/* This plan's gates are open now: plans queued behind it may finish. */
	tplan_plans_finish_closing(tf);
	return ret ?: (err == -EINTR || err == -ETIMEDOUT ? err : 0);
}

int tplan_plan_state(struct tplan_ucmd *ucmd)
{
	struct tplan_plan_state *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_plan *p;

	if (!tf->group)
		return -ENOTCONN;
	mutex_lock(&tf->group->lock);
	p = tplan_plan_find_locked(tf->group, cmd->plan_id);
	if (p && p->attached & BIT(tf->rank)) {
		cmd->state = p->part[tf->rank].state;
		cmd->round = p->part[tf->rank].round;
	}
	mutex_unlock(&tf->group->lock);
	return p ? 0 : -ENOENT;
}
