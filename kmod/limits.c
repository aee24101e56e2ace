// SPDX-License-Identifier: GPL-2.0
/*
 * Caps and accounting of what users hold (limits.h).  The caps are module
 * parameters; 0 means the default computed at load from the machine's
 * memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/seq_file.h>

#include "limits.h"

static unsigned long long max_bytes;
module_param(max_bytes, ullong, 0444);
MODULE_PARM_DESC(max_bytes,
		 "Kernel memory all users together may hold in heaps, rings and plans (0: 7/8 of RAM)");

static unsigned long long max_user_bytes;
module_param(max_user_bytes, ullong, 0444);
MODULE_PARM_DESC(max_user_bytes, "The same for one user (0: 3/4 of RAM)");

static unsigned int max_queues = 1024;
module_param(max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "Queues of all users together (default 1024)");

static unsigned int max_pending_groups = 16;
module_param(max_pending_groups, uint, 0444);
MODULE_PARM_DESC(max_pending_groups, "Groups one user may be joining at once (default 16)");

static unsigned int max_plans = 1024;
module_param(max_plans, uint, 0444);
MODULE_PARM_DESC(max_plans, "Plans alive in one group (default 1024)");

static unsigned int max_plan_spans = 1U << 20;
module_param(max_plan_spans, uint, 0444);
MODULE_PARM_DESC(max_plan_spans, "Copy packets of one plan, all ranks together (default 1048576)");

struct tplan_limits tplan_limits;

static atomic64_t tplan_bytes = ATOMIC64_INIT(0);
static atomic_t tplan_queues = ATOMIC_INIT(0);
static atomic_t tplan_objects[TPLAN_OBJ_COUNT];

#define TPLAN_USER_HASH_BITS 6
static DEFINE_HASHTABLE(tplan_users, TPLAN_USER_HASH_BITS);
static DEFINE_SPINLOCK(tplan_users_lock);

int tplan_limits_init(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;

	if (!max_queues || !max_pending_groups || !max_plans || !max_plan_spans) {
		pr_err("max_queues, max_pending_groups, max_plans and max_plan_spans must be at least 1\n");
		return -EINVAL;
	}
	tplan_limits = (struct tplan_limits) {
		.max_bytes = max_bytes ? max_bytes : ram / 8 * 7,
		.max_user_bytes = max_user_bytes ? max_user_bytes : ram / 4 * 3,
		.max_queues = max_queues,
		.max_pending_groups = max_pending_groups,
		.max_plans = max_plans,
		.max_plan_spans = max_plan_spans,
	};
	return 0;
}

struct tplan_user *tplan_user_get(kuid_t uid)
{
	struct tplan_user *u, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	spin_lock(&tplan_users_lock);
	hash_for_each_possible(tplan_users, u, node, __kuid_val(uid)) {
		if (uid_eq(u->uid, uid) && refcount_inc_not_zero(&u->ref)) {
			spin_unlock(&tplan_users_lock);
			kfree(fresh);
			return u;
		}
	}
	if (fresh) {
		fresh->uid = uid;
		refcount_set(&fresh->ref, 1);
		hash_add(tplan_users, &fresh->node, __kuid_val(uid));
	}
	spin_unlock(&tplan_users_lock);
	return fresh;
}

void tplan_user_put(struct tplan_user *u)
{
	if (!u)
		return;
	spin_lock(&tplan_users_lock);
	if (!refcount_dec_and_test(&u->ref)) {
		spin_unlock(&tplan_users_lock);
		return;
	}
	hash_del(&u->node);
	spin_unlock(&tplan_users_lock);
	/* Every charge holds a reference: nothing can be left charged. */
	WARN_ON_ONCE(atomic64_read(&u->bytes) || atomic_read(&u->pending_groups));
	kfree(u);
}

int tplan_charge(struct tplan_user *u, u64 bytes)
{
	if (bytes > tplan_limits.max_bytes || bytes > tplan_limits.max_user_bytes)
		return -ENOMEM;
	if (atomic64_add_return(bytes, &tplan_bytes) > tplan_limits.max_bytes) {
		atomic64_sub(bytes, &tplan_bytes);
		return -ENOMEM;
	}
	if (atomic64_add_return(bytes, &u->bytes) > tplan_limits.max_user_bytes) {
		atomic64_sub(bytes, &u->bytes);
		atomic64_sub(bytes, &tplan_bytes);
		return -ENOMEM;
	}
	return 0;
}

void tplan_uncharge(struct tplan_user *u, u64 bytes)
{
	atomic64_sub(bytes, &u->bytes);
	atomic64_sub(bytes, &tplan_bytes);
}

int tplan_queue_slot_get(void)
{
	if (atomic_inc_return(&tplan_queues) > tplan_limits.max_queues) {
		atomic_dec(&tplan_queues);
		return -ENOMEM;
	}
	return 0;
}

void tplan_queue_slot_put(void)
{
	atomic_dec(&tplan_queues);
}

int tplan_pending_group_get(struct tplan_user *u)
{
	if (atomic_inc_return(&u->pending_groups) > tplan_limits.max_pending_groups) {
		atomic_dec(&u->pending_groups);
		return -EUSERS;
	}
	return 0;
}

void tplan_pending_group_put(struct tplan_user *u)
{
	atomic_dec(&u->pending_groups);
}

void tplan_object_add(enum tplan_object what, int delta)
{
	atomic_add(delta, &tplan_objects[what]);
}

void tplan_limits_show(struct seq_file *m)
{
	struct tplan_user *u;
	u32 users = 0, bkt;

	spin_lock(&tplan_users_lock);
	hash_for_each(tplan_users, bkt, u, node)
		users++;
	spin_unlock(&tplan_users_lock);
	seq_printf(m, "groups: %d\nqueues: %d\nplans: %d\nusers: %u\nbytes: %lld\n",
		   atomic_read(&tplan_objects[TPLAN_OBJ_GROUP]), atomic_read(&tplan_queues),
		   atomic_read(&tplan_objects[TPLAN_OBJ_PLAN]), users,
		   (long long)atomic64_read(&tplan_bytes));
	seq_printf(m, "max_bytes: %llu\nmax_user_bytes: %llu\nmax_queues: %u\n",
		   tplan_limits.max_bytes, tplan_limits.max_user_bytes, tplan_limits.max_queues);
	seq_printf(m, "max_pending_groups: %u\nmax_plans: %u\nmax_plan_spans: %u\n",
		   tplan_limits.max_pending_groups, tplan_limits.max_plans,
		   tplan_limits.max_plan_spans);
}
