/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A queue: the ring of one (rank -> peer) pair, its pointer page, its
 * prepared-copy budget and the engine that executes it.
 *
 * The protocol is the one an SDMA engine imposes (uapi/tplan.h, "a
 * queue's memory"), whatever engine runs the queue:
 *  - the owner writes packets into the ring, stores the new wptr in the
 *    pointer page (release: the packets are there first), then rings the
 *    engine's doorbell with the same value.  An engine learns of new work
 *    only from doorbells, and after a preemption from the pointer page;
 *  - the engine writes back rptr, the bytes it consumed, into the pointer
 *    page, maybe late and maybe ahead of what it executed.  It frees ring
 *    space and means nothing else; the ring is never completely full;
 *  - completion is told by FENCE packets the module writes into the ring:
 *    one right after each prepared chain's POLL (the gate sequence: the
 *    chain went through its gate, its charge goes back) and one at the
 *    end of every batch it publishes (the done sequence: everything
 *    before it executed).  The engine reports that its progress words
 *    may have moved with tplan_queue_progress(), as a hardware engine's
 *    poller would.
 * The pointer page is mapped into the owning process and so may hold
 * anything: the module keeps its own copies of what it wrote (wptr, the
 * sequences it handed out) and reads the engine's words only through
 * the helpers below, which clamp them into what can be true.  Nothing
 * the owner writes there can hurt anyone but its own queue.
 *
 * Only the owner (serialised by wlock) writes packets, wptr and the
 * doorbell.  wlock is never held across a wait for ring space: a writer
 * that needs room drops it, waits, and checks again.  Every writer
 * publishes what it wrote before it drops wlock, but for a plan round
 * staged across its ranks' vote (staged): until it is published or taken
 * back, other writers keep off the queue.
 */
#ifndef _TPLAN_QUEUE_H
#define _TPLAN_QUEUE_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "tplan_priv.h"

struct seq_file;

/* The pointer page, at the offsets uapi/tplan.h documents. */
struct tplan_qptr {
	u64 wptr;			/* TPLAN_QPTR_WPTR: the module's */
	u64 rptr;			/* TPLAN_QPTR_RPTR: the engine's write-back */
	u64 __unused[6];
	u32 gate_seq;			/* TPLAN_QPTR_GATE_SEQ: gate FENCEs */
	u32 __unused2;
	u32 done_seq;			/* TPLAN_QPTR_DONE_SEQ: done FENCEs */
};

/*
 * Gated bytes: a raw chain, or one plan round on one queue, whose last
 * gate FENCE has not run yet.  Raw chains give their reservation back
 * with it; a plan holds its own from prepare to close.
 */
struct tplan_prep_mark {
	u32 seq;			/* the gate sequence of its (last) gate FENCE */
	u32 bytes;			/* gated until then */
	u32 unreserve;			/* reservation given back then (raw chains) */
	u32 ref;			/* the round its POLL waits for */
	bool raw;			/* a raw chain's: its owner may open its ready gate, */
	u64 gate_off;			/* at this offset of the sender's heap */
};

struct tplan_engine_ops;

struct tplan_queue {
	struct tplan_group *group;
	u32 src, dst;
	u32 *ring;			/* vmalloc, ring_size bytes, mappable */
	u32 ring_size;
	struct page *ptr_page;
	struct tplan_qptr *ptr;		/* its kernel address */
	u64 ptr_dev;			/* its device address, in src's map */
	struct tplan_user *user;	/* the owner's: the ring is charged to it */
	const struct tplan_engine_ops *engine;
	void *engine_data;

	struct mutex wlock;		/* the writer side: wtail, emit, publish */
	u64 wtail;			/* written, not yet published */
	u32 staged;			/* chains of plan rounds written, not published */
	u32 staged_rounds;		/* and those rounds */
	u64 arm_seq;			/* plan rounds armed on it so far (g->lock) */
	u64 wptr;			/* published: stored in the page */
	u64 rung;			/* the wptr of the last doorbell */
	u32 gate_next;			/* the gate sequence the next chain gets */
	u64 done_last;			/* the done sequence of the last batch */
	atomic64_t doorbells;
	u64 packets;			/* engine: packets executed */
	u64 traps;			/* engine: TRAP packets executed */

	spinlock_t budget_lock;		/* prep_reserved, prep_charged, the marks */
	u32 prep_reserved;		/* the budget taken: at most prep_limit */
	u32 prep_charged;		/* bytes gated now: put and quiet EBUSY */
	u32 prep_limit;
	struct tplan_prep_mark *marks;	/* circular, mark_cap entries */
	u32 mark_cap, mark_head, mark_tail;

	int state;			/* TPLAN_QUEUE_FAULT / _STOPPED, else 0 */
	u64 fault_offset;
	u32 fault_dword;
	u32 fault_reason;

	wait_queue_head_t owner_wq;	/* quiet, ring-space and drain waiters */
	struct dentry *debugfs;
};

/*
 * The back end that executes a queue's ring: its memory is the queue's
 * ring and pointer page, its only input the doorbell.
 */
struct tplan_engine_ops {
	const char *name;
	int (*start)(struct tplan_queue *q);
	void (*stop)(struct tplan_queue *q);	/* returns once nothing executes */
	void (*doorbell)(struct tplan_queue *q, u64 wptr);
	void (*show)(struct seq_file *m, struct tplan_queue *q);	/* debugfs */
	/* Optional: why the queue takes no work now (0: it does). */
	int (*usable)(struct tplan_queue *q);
};
extern const struct tplan_engine_ops tplan_soft_engine;
extern const struct tplan_engine_ops tplan_kfd_engine;

/* The mmap offset of the (own rank -> peer) queue's ring, or its pointer page. */
u64 tplan_queue_mmap_offset(u32 peer, bool ptr);

/* One prepared chain to write: its packets and the round its POLL waits for. */
struct tplan_chain_image {
	const u32 *dw;
	u32 ndw;
	u32 ref;
	bool raw;			/* CHAIN_SUBMIT; plans: false */
	u64 raw_gate_off;		/* CHAIN_SUBMIT: its ready gate, in the sender's heap */
};

/*
 * One queue's share of a plan round, built once at prepare: its chains in
 * order, each POLL followed by its gate FENCE, exactly what
 * tplan_queue_write_chains() would emit packet by packet, but contiguous,
 * so that a re-arm copies it whole and patches a few dwords: each POLL's
 * reference (the round) and each gate FENCE's data (its gate sequence).
 * A head POLL (TPLAN_ROUND_HEAD_DW) comes first.  Its size is the
 * round's charge on the queue.
 */
struct tplan_round_template {
	u32 *dw;
	u32 ndw;
	u32 nchains;
	u32 *chain_at;			/* the dword where each chain (its POLL) starts */
};

/* What a chain of ndw dwords is charged: itself and its gate FENCE. */
static inline u64 tplan_chain_charge(u32 ndw)
{
	return ndw * 4ULL + TPLAN_CHAIN_FENCE_BYTES;
}

/* queue.c, for chain submission and plans */
int tplan_queue_get(struct tplan_file *tf, u32 peer, struct tplan_queue **qp);
int tplan_queue_budget_reserve(struct tplan_queue *q, u64 bytes);
void tplan_queue_budget_unreserve(struct tplan_queue *q, u64 bytes);
int tplan_queue_write_chains(struct tplan_queue *q, const struct tplan_chain_image *c,
			     u32 n, u64 *done_seq);
int tplan_queue_template_fill(struct tplan_queue *q, const struct tplan_chain_image *c, u32 n,
			      u64 release, struct tplan_round_template *t);
int tplan_queue_stage_rounds(struct tplan_queue *q, const struct tplan_round_template *t,
			     u32 round, u32 n, u32 timeout_ms, u32 *slots, u32 nslots);
int tplan_queue_wait_gate(struct tplan_queue *q, u32 seq, u32 timeout_ms);
void tplan_queue_stage_end(struct tplan_queue *q, bool publish, u64 *done_seq);
int tplan_queue_usable(struct tplan_queue *q);
u32 tplan_queue_fault_state(struct tplan_queue *q);
int tplan_queue_open_raw_gates(struct tplan_queue *q);
u64 tplan_queue_done(struct tplan_queue *q);
bool tplan_queue_done_passed(struct tplan_queue *q, u64 seq);
u64 tplan_queue_rptr(struct tplan_queue *q);
int tplan_queue_mmap(struct tplan_file *tf, struct vm_area_struct *vma);

/* queue.c, for the engines */
void tplan_queue_progress(struct tplan_queue *q);
void tplan_queue_fault(struct tplan_queue *q, u64 offset, u32 dword, u32 reason);
u32 tplan_queue_state(struct tplan_queue *q);

/* soft_engine.c: the emulated hardware behaviours (main.c's soft_quirks) */
enum {
	TPLAN_SOFT_RPTR_LAG	= 1U << 0,	/* rptr written back every few ms */
	TPLAN_SOFT_RPTR_AHEAD	= 1U << 1,	/* rptr = fetched, up to a window ahead */
	TPLAN_SOFT_PREEMPT	= 1U << 2,	/* unmapped now and then, doorbells lost */
	TPLAN_SOFT_FULL_HANGS	= 1U << 3,	/* a completely full ring reads as empty */
	TPLAN_SOFT_QUIRKS_ALL	= 0xf,
};
u32 tplan_soft_quirks_next(void);

#endif /* _TPLAN_QUEUE_H */
