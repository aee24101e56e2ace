/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plans, shared by the files that implement them:
 *   plan.c          lifetime: create, lookup, the gate area, state, and
 *                   when a plan may go (no queued chain can reach it)
 *   plan_prepare.c  chains copied in and checked, the group-wide overlap
 *                   check, round templates and the budget reservation,
 *                   rounds queued (prepare, next_round), start
 *   plan_wait.c     wait and its shortfall report
 *   plan_close.c    close: gates opened, chains drained, every rank
 *
 * A plan is a group object.  Each rank owns its part (state, round, round
 * templates).  Collective steps exchange a small blob through
 * tplan_group_exchange() and every rank takes the same decision from the
 * same data, so no rank ever has to tell another what happened.
 *
 * Lifetime: a plan is reference counted by the calls using it and by the
 * group's list.  It leaves the list (and its gate rows become free for
 * another plan) only when every rank has closed its part or left, and
 * every rank's chains of it have left their queues or can never run
 * again (tplan_plan_reap()).  Parts keep their memory until the plan is
 * freed, so a call still holding the plan never reads freed memory.
 */
#ifndef _TPLAN_PLAN_H
#define _TPLAN_PLAN_H

#include "tplan_priv.h"
#include "queue.h"
#include "chain_validate.h"

struct tplan_wait_item;

/* One rank's part of a plan. */
struct tplan_plan_part {
	struct mutex lock;		/* state, round, started */
	u32 state;			/* enum tplan_plan_states */
	u32 round;
	bool started;
	bool busy;			/* a wait is running on it */
	u64 prep_seq;			/* this rank's order of prepared rounds */
	u32 nchunks;
	u64 own_off, own_bytes;
	struct tplan_user *user;	/* what the part's memory is charged to */
	u64 charged;
	u32 *writers;			/* per chunk */
	/*
	 * While preparing: chain images, grouped by peer, each group in
	 * chunk order; freed once they became the round templates.
	 */
	u32 *dw;
	u64 dw_bytes;
	struct tplan_chain_image *images;
	u64 images_bytes;
	u32 peer_first[TPLAN_MAX_WORLD_SIZE + 1];
	/* What a re-arm writes on each queue: one round, laid out once. */
	struct tplan_round_template tmpl[TPLAN_MAX_WORLD_SIZE];
	u64 peer_bytes[TPLAN_MAX_WORLD_SIZE];	/* charge of one round */
	u64 peer_done[TPLAN_MAX_WORLD_SIZE];	/* done sequence of the latest round's batch */
	u32 peer_mask;			/* queues the plan uses */
	/*
	 * The order rounds are armed in (g->lock): the queue's arm count when
	 * this rank last armed a round on it, and the last round it armed.
	 * What it released is in its release word (tplan_plan_release_off()).
	 */
	u64 arm_seq[TPLAN_MAX_WORLD_SIZE];
	u32 armed;
	/*
	 * Rounds kept queued ahead (1: one at a time), the first round, and
	 * for each queue the last gate sequence of each of the last depth
	 * rounds armed (round j at [peer * depth + j % depth]): round j may
	 * be queued once round j - depth's gate FENCEs ran, so the gated
	 * bytes stay within the depth rounds reserved.
	 */
	u32 depth;
	u32 first;
	u32 *round_gate;
	/*
	 * peer_bytes is reserved on every queue of peer_mask: from prepare's
	 * reserve step until close (or the prepare's failure) gives it back;
	 * both are steps of this file's collective slot, never two at once.
	 */
	bool reserved;
	/* What a wait checks, listed at prepare: a wait allocates nothing. */
	struct tplan_wait_item *wait_items;
	u32 nwait;
	/* While preparing: the bytes its copies send, for the overlap check. */
	struct tplan_chain_span *spans;
	u32 nspans;
};

struct tplan_plan {
	struct kref kref;
	struct list_head node;		/* g->plans while it holds its gate rows */
	struct tplan_group *group;
	u32 id;
	u64 create_seq;			/* the collective that created it */
	int create_err;
	bool listed;
	u32 attached;			/* ranks that saw the create */
	u32 closed;			/* ranks whose part is closed */
	int failed;			/* a rank's re-arm failed: the plan is FAILED everywhere */
	u32 drained;			/* ranks whose chains of it left their queues */
	u64 buf_off, buf_bytes;
	u64 gate_off;
	u32 total_chunks;
	u32 chunk_base[TPLAN_MAX_WORLD_SIZE + 1];
	/* The overlap check, done once, by the first rank there, for all. */
	struct mutex check_lock;
	bool checked;
	int check_err;
	struct tplan_chain_reject check_why;
	struct tplan_plan_part part[TPLAN_MAX_WORLD_SIZE];
};

/* Collective ids of the plan steps (every rank's k-th collective agrees). */
enum {
	TPLAN_COLL_PLAN_CREATE = 16,
	TPLAN_COLL_PLAN_CREATED,
	TPLAN_COLL_PLAN_VALIDATE,
	TPLAN_COLL_PLAN_RESERVE,
	TPLAN_COLL_PLAN_COMMIT,
	TPLAN_COLL_PLAN_CLOSE,
};

/*
 * Gate rows of a plan: one per chunk, then the release row; none for a
 * plan of no chunks (nothing is ever queued for it).
 */
static inline u64 tplan_plan_gate_bytes(u32 total_chunks)
{
	return total_chunks ? ((u64)total_chunks + 1) * TPLAN_GATE_ROW_BYTES : 0;
}

/* plan.c */
struct tplan_plan *tplan_plan_get(struct tplan_file *tf, u32 id);
struct tplan_plan *tplan_plan_lookup(struct tplan_file *tf, u32 id, bool closed_too);
void tplan_plan_put(struct tplan_plan *p);
int tplan_plan_vote(struct tplan_file *tf, u32 op, int err,
		    const struct tplan_chain_reject *why, struct tplan_chain_reject *reject,
		    u32 timeout_ms);
void tplan_plan_reap(struct tplan_group *g, struct tplan_plan *p);
u64 tplan_gate_off(const struct tplan_plan *p, u32 chunk);
u64 tplan_gate_read(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 chunk,
		    u32 field);
void tplan_plan_open_gates(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 round);
u64 tplan_plan_release_off(const struct tplan_plan *p);
void tplan_plan_set_released(struct tplan_group *g, u32 rank, struct tplan_plan *p, u32 round);
void tplan_plan_fail_everywhere(struct tplan_group *g, struct tplan_plan *p, int err);
int tplan_plan_failed(struct tplan_plan *p);
int tplan_plan_order_check_locked(struct tplan_group *g, struct tplan_plan *x, u32 rank);
bool tplan_plan_part_drained(struct tplan_group *g, u32 rank, struct tplan_plan *p);

/* plan_prepare.c */
void *tplan_part_alloc(struct tplan_plan_part *part, size_t n, size_t size);
void tplan_part_free(struct tplan_plan_part *part, void *mem, u64 bytes);
void tplan_plan_unreserve(struct tplan_file *tf, struct tplan_plan_part *part);

/* plan_wait.c */
int tplan_plan_wait_init(struct tplan_group *g, struct tplan_plan *p, u32 me);

#endif /* _TPLAN_PLAN_H */
