/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tplan lets users hold: kernel memory (heaps, rings, stored chain
 * images, gate and wait bookkeeping) module-wide and per user, engine
 * threads (one per queue), groups still being joined, plans per group,
 * spans per plan.  Any local user can open /dev/tplan, so every
 * allocation a caller sizes is charged here (and to its memory cgroup)
 * before it is made; over a cap the caller gets ENOMEM (EUSERS for
 * pending groups, ENOSPC for plans and spans), never a warning.
 */
#ifndef _TPLAN_LIMITS_H
#define _TPLAN_LIMITS_H

#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/refcount.h>
#include <linux/atomic.h>
#include <linux/list.h>

struct tplan_limits {
	u64 max_bytes;			/* all users together */
	u64 max_user_bytes;		/* one user */
	u32 max_queues;			/* engine threads, all users */
	u32 max_pending_groups;		/* groups one user is still joining */
	u32 max_plans;			/* plans alive in one group */
	u32 max_plan_spans;		/* copies of one plan, all ranks */
};
extern struct tplan_limits tplan_limits;

/* One user (effective uid) and what it holds. */
struct tplan_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic64_t bytes;
	atomic_t pending_groups;
};

int tplan_limits_init(void);			/* module load: defaults from RAM */
struct tplan_user *tplan_user_get(kuid_t uid);	/* NULL: no memory */
void tplan_user_put(struct tplan_user *u);

/* Charge bytes to u and to the module: 0 or -ENOMEM with nothing charged. */
int tplan_charge(struct tplan_user *u, u64 bytes);
void tplan_uncharge(struct tplan_user *u, u64 bytes);

/* One more engine thread: 0 or -ENOMEM. */
int tplan_queue_slot_get(void);
void tplan_queue_slot_put(void);

/* One more group this user is joining: 0 or -EUSERS. */
int tplan_pending_group_get(struct tplan_user *u);
void tplan_pending_group_put(struct tplan_user *u);

/* Objects alive, for debugfs (a test checks they all go away). */
enum tplan_object {
	TPLAN_OBJ_GROUP,
	TPLAN_OBJ_PLAN,
	TPLAN_OBJ_COUNT
};
void tplan_object_add(enum tplan_object what, int delta);

/* debugfs tplan/stats: everything held now, "name: value" lines. */
struct seq_file;
void tplan_limits_show(struct seq_file *m);

#endif /* _TPLAN_LIMITS_H */
