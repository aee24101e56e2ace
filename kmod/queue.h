/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A queue: the ring of one (rank -> peer) pair, its pointers, its
 * prepared-copy budget and the engine that executes it.
 *
 * Pointer protocol (the only cross-thread ordering in a queue):
 *  - the owner writes packets into the ring, then publishes the new wptr
 *    with smp_store_release(); the engine reads wptr with
 *    smp_load_acquire() before it reads any packet below it;
 *  - the engine finishes a packet (its copies and atomics), then publishes
 *    rptr with smp_store_release(); the owner reads rptr with
 *    smp_load_acquire() before it reuses ring space below it or reports
 *    the packet done.
 * Only the owner (serialised by wlock) writes wptr; only the engine
 * writes rptr.  wlock is never held across a wait for ring space: a
 * writer that needs room drops it, waits, and checks again.
 */
#ifndef _TPLAN_QUEUE_H
#define _TPLAN_QUEUE_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "tplan_priv.h"

/* A prepared chain's charge, released once rptr passes its POLL. */
struct tplan_prep_mark {
	u64 poll_end;			/* pointer just past the chain's POLL */
	u32 bytes;			/* the chain's charge */
	u32 ref;			/* the round its POLL waits for */
	u32 *gate;			/* a raw chain's ready gate (its owner may open it) */
};

struct tplan_queue {
	struct tplan_group *group;
	u32 src, dst;
	u32 *ring;
	u32 ring_size;
	struct tplan_user *user;	/* the owner's: the ring is charged to it */

	struct mutex wlock;		/* the writer side: wtail, emit, publish */
	u64 wtail;			/* owner: written, not yet published */
	u64 wptr;			/* owner publishes, engine reads */
	u64 rptr;			/* engine publishes, owner reads */
	u64 packets;			/* engine: packets executed */
	u64 traps;			/* engine: TRAP packets executed */
	/* Wake-up accounting, so that a stall explains itself (debugfs). */
	atomic64_t kicks;		/* owner: wptr published, engine woken */
	u64 wakeups;			/* engine: woke up and found work */
	u64 lost_wakeups;		/* engine: found work only at its safety timeout */

	spinlock_t budget_lock;		/* prep_charged and the marks */
	u32 prep_charged;
	u32 prep_limit;
	struct tplan_prep_mark *marks;	/* circular, mark_cap entries */
	u32 mark_cap, mark_head, mark_tail;

	int state;			/* TPLAN_QUEUE_FAULT / _STOPPED, else 0 */
	u64 fault_offset;
	u32 fault_dword;
	u32 fault_reason;

	wait_queue_head_t engine_wq;	/* the engine waits for wptr */
	wait_queue_head_t owner_wq;	/* quiet and ring-space waiters */
	struct task_struct *thread;
	struct dentry *debugfs;
};

/* The back end that executes a queue's ring. */
struct tplan_engine_ops {
	const char *name;
	int (*start)(struct tplan_queue *q);
	void (*stop)(struct tplan_queue *q);	/* returns once nothing executes */
	void (*kick)(struct tplan_queue *q);	/* wptr moved */
};
extern const struct tplan_engine_ops tplan_soft_engine;

/* One prepared chain to write: its packets and the round its POLL waits for. */
struct tplan_chain_image {
	const u32 *dw;
	u32 ndw;
	u32 ref;
	u32 *raw_gate;			/* CHAIN_SUBMIT: the ready gate; plans: NULL */
};

/* queue.c, for chain submission and plans */
int tplan_queue_get(struct tplan_file *tf, u32 peer, struct tplan_queue **qp);
int tplan_queue_budget_reserve(struct tplan_queue *q, u64 bytes);
void tplan_queue_budget_unreserve(struct tplan_queue *q, u64 bytes);
int tplan_queue_write_chains(struct tplan_queue *q, const struct tplan_chain_image *c,
			     u32 n, u64 *start, u64 *end);
int tplan_queue_usable(struct tplan_queue *q);
u32 tplan_queue_fault_state(struct tplan_queue *q);
int tplan_queue_open_raw_gates(struct tplan_queue *q);

/* queue.c, for the engines */
void tplan_queue_retire(struct tplan_queue *q, u64 rptr);
void tplan_queue_fault(struct tplan_queue *q, u32 reason);
u32 tplan_queue_state(struct tplan_queue *q);

#endif /* _TPLAN_QUEUE_H */
