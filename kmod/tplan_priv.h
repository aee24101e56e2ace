/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Objects shared by the files of tplan.ko.
 *
 * Ownership: an open file (struct tplan_file) is one rank once it joined.
 * The group holds the heaps and is reference counted by its ranks' files;
 * a heap is freed only with the group, so it outlives every queue that
 * can touch it.  A queue belongs to its sending rank's file and is torn
 * down (engine stopped first) when that file is released.
 */
#ifndef _TPLAN_PRIV_H
#define _TPLAN_PRIV_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/wait.h>
#include <linux/fs.h>
#include <linux/cred.h>
#include <linux/gfp.h>

#include "tplan.h"
#include "sdma_limits.h"

#define TPLAN_MAX_WORLD_SIZE 16

/* Module parameters, validated once at load (main.c). */
struct tplan_params {
	u32 ring_size;			/* bytes, power of two */
	u32 prep_limit_pct;		/* 1..50 */
	u32 max_copy_bytes_sdma440;	/* fixed by the 30-bit count field */
	u32 max_copy_bytes_sdma442;	/* 4 MiB unless raised by the admin */
	bool allow_inject;		/* test-only raw packet injection */
};
extern struct tplan_params tplan_params;

/*
 * Device addresses of the soft engine's heaps: rank r's heap starts at
 * TPLAN_SOFT_DEVADDR_BASE + (r + 1) * TPLAN_SOFT_DEVADDR_STRIDE.  They look
 * like GPU virtual addresses and are never dereferenced as such: the
 * engine translates them through the group (group.c).
 */
#define TPLAN_SOFT_DEVADDR_BASE		0x0000400000000000ULL
#define TPLAN_SOFT_DEVADDR_STRIDE	(1ULL << 40)
/* mmap offset of rank r's heap on any rank's file. */
#define TPLAN_MMAP_HEAP_SHIFT		40

struct tplan_heap {
	void *vaddr;			/* vmalloc_user(), zeroed */
	u64 size;
	u64 dev_base;
};

struct tplan_queue;

/* The collective in progress and the double buffer its blobs go to. */
struct tplan_coll {
	u64 cur_seq;			/* collective being gathered */
	u64 done_seq;			/* last completed + 1 */
	u32 arrived;			/* ranks arrived at cur_seq */
	u32 op;
	u32 blob_size;
	u8 *buf[2];			/* world * TPLAN_ALL_GATHER_MAX each */
};

struct tplan_group {
	struct kref kref;
	struct list_head node;		/* tplan_groups, while joins are open */
	u64 key;
	u32 world_size;
	u64 heap_size;
	u32 engine;
	u32 sdma_ip;			/* TPLAN_SDMA_440 / TPLAN_SDMA_442 */
	struct tplan_sdma_limits limits;
	const struct cred *creator;

	struct mutex lock;		/* membership, collectives, queues[] */
	wait_queue_head_t wq;		/* join, collectives, breakage */
	wait_queue_head_t arrival_wq;	/* ATOMIC/FENCE/TRAP executed */
	u32 joined;			/* bitmask of ranks */
	bool complete;			/* every rank joined once */
	int broken;			/* 0 or the errno collectives now fail with */

	struct tplan_heap heaps[TPLAN_MAX_WORLD_SIZE];
	struct tplan_coll coll;
	struct tplan_queue *queues[TPLAN_MAX_WORLD_SIZE][TPLAN_MAX_WORLD_SIZE];
	struct list_head plans;		/* under lock */
	u32 next_plan_id;
	struct dentry *debugfs;
};

/*
 * struct tplan_file - one open file of /dev/tplan: one rank once joined.
 * Every object a rank creates hangs off this and is torn down on release.
 */
struct tplan_file {
	struct mutex lock;		/* serialises this file's ioctls */
	struct tplan_group *group;	/* set once the join completed */
	u32 rank;
	u64 coll_seq;			/* this rank's next collective */
	bool coll_arrived;		/* contributed to coll_seq, not returned */
	u64 prep_seq;			/* rounds this rank prepared, all plans */
};

/*
 * struct tplan_ucmd - one ioctl call in flight: the copied-in argument
 * and where the answer goes.
 */
struct tplan_ucmd {
	struct tplan_file *tf;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

/*
 * Allocations whose size a caller chooses: failing them is the caller's
 * problem (ENOMEM), not a kernel warning.
 */
#define TPLAN_GFP_USER_SIZED (GFP_KERNEL | __GFP_NOWARN)

static inline long tplan_timeout_jiffies(u32 timeout_ms)
{
	return msecs_to_jiffies(timeout_ms ? timeout_ms : TPLAN_TIMEOUT_DEFAULT_MS);
}

/* group.c */
int tplan_group_join(struct tplan_ucmd *ucmd);
int tplan_group_barrier(struct tplan_ucmd *ucmd);
int tplan_group_all_gather(struct tplan_ucmd *ucmd);
int tplan_heap_info(struct tplan_ucmd *ucmd);
int tplan_group_mmap(struct tplan_file *tf, struct vm_area_struct *vma);
void tplan_group_leave(struct tplan_file *tf);
void tplan_group_break(struct tplan_group *g, int err);
int tplan_group_exchange(struct tplan_file *tf, u32 op, const void *in, u32 size,
			 void *out, long timeout);
void *tplan_group_translate(struct tplan_group *g, u64 addr, u64 len);

/* Collective operation ids: every rank's k-th collective must agree. */
enum {
	TPLAN_COLL_BARRIER = 1,
	TPLAN_COLL_ALL_GATHER,
	TPLAN_COLL_VOTE,
};

/* queue.c */
int tplan_put(struct tplan_ucmd *ucmd);
int tplan_quiet(struct tplan_ucmd *ucmd);
int tplan_queue_info(struct tplan_ucmd *ucmd);
int tplan_queue_inject(struct tplan_ucmd *ucmd);

/* plan.c */
int tplan_plan_create(struct tplan_ucmd *ucmd);
int tplan_plan_prepare(struct tplan_ucmd *ucmd);
int tplan_plan_start(struct tplan_ucmd *ucmd);
int tplan_plan_wait(struct tplan_ucmd *ucmd);
int tplan_plan_next_round(struct tplan_ucmd *ucmd);
int tplan_plan_close(struct tplan_ucmd *ucmd);
int tplan_plan_state(struct tplan_ucmd *ucmd);
void tplan_plans_destroy(struct tplan_group *g);
u64 tplan_gate_area_offset(u64 heap_size);

/* chain_submit.c */
int tplan_chain_submit(struct tplan_ucmd *ucmd);
void tplan_queues_destroy(struct tplan_group *g, u32 src);
void tplan_queue_wake(struct tplan_queue *q);

/* debugfs.c */
void tplan_debugfs_init(void);
void tplan_debugfs_exit(void);
void tplan_debugfs_group_add(struct tplan_group *g);
void tplan_debugfs_queue_add(struct tplan_queue *q);

#endif /* _TPLAN_PRIV_H */
