/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Objects shared by the files of tplan.ko.
 *
 * Ownership: an open file (struct tplan_file) is one rank once it joined.
 * The group holds the heaps and is reference counted by its ranks' files;
 * a heap is freed only with the group, so it outlives every queue that
 * can touch it.  A queue belongs to its sending rank's file and is torn
 * down (engine stopped first) when that file is released.  A plan is a
 * group object, reference counted by the calls using it, and leaves the
 * group only once no queued chain can reach its gate rows.
 *
 * Locking (outermost first); no lock is ever held across a wait for
 * another rank, for the engine or for ring space, nor across a user copy:
 *   tplan_groups_lock	the list of groups still being joined
 *   part->lock		one rank's part of a plan: its state transitions
 *   q->wlock		the writer side of one ring (wtail, emit, publish)
 *   g->lock		membership, address maps, collectives, queues[][], plans, faults
 *   q->budget_lock	(spinlock) a queue's prepared-copy charge and marks
 * A file has no lock of its own: its group is published once (release /
 * acquire), and it runs one collective at a time (TPLAN_FILE_IN_COLL).
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
#include <linux/ktime.h>
#include <linux/jiffies.h>
#include <linux/xarray.h>
#include <linux/sched/signal.h>
#include <linux/io.h>
#include <linux/iosys-map.h>

#include "tplan.h"
#include "sdma_limits.h"
#include "limits.h"

#define TPLAN_MAX_WORLD_SIZE 16
/* A plan step's blob, at most (plan.c): tplan_file.coll_out holds one per rank. */
#define TPLAN_COLL_SLOT_BYTES 64

/* Module parameters, validated once at load (main.c). */
struct tplan_params {
	u32 ring_size;			/* bytes, power of two */
	u32 prep_limit_pct;		/* 1..50 */
	u32 max_copy_bytes_sdma440;	/* fixed by the 30-bit count field */
	u32 max_copy_bytes_sdma442;	/* 4 MiB unless raised by the admin */
	bool allow_inject;		/* test-only raw packet injection */
};
extern struct tplan_params tplan_params;

/* The round a plan prepared now starts at: 1, unless a test says otherwise. */
u32 tplan_first_round(void);

/* mmap offset of rank r's heap on any rank's file. */
#define TPLAN_MMAP_HEAP_SHIFT		40
/* mmap offsets of the queue (own rank -> peer): its ring, its pointer page. */
#define TPLAN_MMAP_QUEUE		(1ULL << 46)
#define TPLAN_MMAP_QUEUE_PEER_SHIFT	36
#define TPLAN_MMAP_QUEUE_PTR		(1ULL << 35)

struct dma_buf;

struct tplan_heap {
	void *vaddr;			/* __vmalloc(), zeroed, charged; or dmabuf's vmap; */
					/* NULL where that maps only as I/O memory */
	struct iosys_map map;		/* how the core reaches it (tplan_heap_load()) */
	u64 size;			/* 0: no heap */
	struct tplan_user *user;	/* who the bytes are charged to (soft heaps) */
	struct dma_buf *dmabuf;		/* KFD engine: GPU memory (kfd_heap.c) */
};

/*
 * A heap's words as the core reads and writes them (gate rows, release
 * words, raw chains' gates).  A soft heap, or a dma-buf that maps as
 * memory, by plain accesses; a dma-buf that its exporter maps only as I/O
 * memory (amdgpu maps VRAM so) through the I/O accessors.  A load
 * acquires: what the word's writer wrote before it is seen after.  A
 * _release store orders what the caller did before it and, on a
 * write-combining mapping, leaves the buffer so that a copy engine sees
 * it.  No read-modify-write: a CPU's locked operation is not atomic
 * against a GPU's on I/O memory.
 */
static inline u64 tplan_heap_load(const struct tplan_heap *h, u64 off)
{
	u64 v;

	if (!h->map.is_iomem)
		return smp_load_acquire((u64 *)(h->map.vaddr + off));	/* acquire */
	v = readq(h->map.vaddr_iomem + off);
	rmb();	/* acquire: write-combining memory orders loads weakly */
	return v;
}

static inline u32 tplan_heap_load32(const struct tplan_heap *h, u64 off)
{
	u32 v;

	if (!h->map.is_iomem)
		return smp_load_acquire((u32 *)(h->map.vaddr + off));	/* acquire */
	v = readl(h->map.vaddr_iomem + off);
	rmb();	/* acquire: write-combining memory orders loads weakly */
	return v;
}

static inline void tplan_heap_store(struct tplan_heap *h, u64 off, u64 v)
{
	if (h->map.is_iomem)
		writeq(v, h->map.vaddr_iomem + off);
	else
		WRITE_ONCE(*(u64 *)(h->map.vaddr + off), v);
}

static inline void tplan_heap_store32(struct tplan_heap *h, u64 off, u32 v)
{
	if (h->map.is_iomem)
		writel(v, h->map.vaddr_iomem + off);
	else
		WRITE_ONCE(*(u32 *)(h->map.vaddr + off), v);
}

/* Plain stores so far out of a write-combining buffer, for a copy engine to see. */
static inline void tplan_heap_flush(struct tplan_heap *h)
{
	if (h->map.is_iomem)
		wmb();	/* sfence: drains the write-combining buffer */
}

static inline void tplan_heap_store_release(struct tplan_heap *h, u64 off, u64 v)
{
	if (!h->map.is_iomem) {
		smp_store_release((u64 *)(h->map.vaddr + off), v);	/* release */
		return;
	}
	tplan_heap_flush(h);	/* release: what came before goes first */
	writeq(v, h->map.vaddr_iomem + off);
	tplan_heap_flush(h);
}

static inline void tplan_heap_store32_release(struct tplan_heap *h, u64 off, u32 v)
{
	if (!h->map.is_iomem) {
		smp_store_release((u32 *)(h->map.vaddr + off), v);	/* release */
		return;
	}
	tplan_heap_flush(h);	/* release: what came before goes first */
	writel(v, h->map.vaddr_iomem + off);
	tplan_heap_flush(h);
}

/* Zero len bytes at off; the stores after it are ordered after them. */
static inline void tplan_heap_zero(struct tplan_heap *h, u64 off, u64 len)
{
	if (h->map.is_iomem) {
		memset_io(h->map.vaddr_iomem + off, 0, len);
		tplan_heap_flush(h);
	} else {
		memset(h->map.vaddr + off, 0, len);
	}
}

/*
 * struct tplan_addr_map - one rank's device address space, as its queues'
 * packets address memory.  On hardware each rank's GPU VM maps every heap
 * at an address of its own, so a device address means something only to
 * the rank whose map it comes from: packets on queue src->dst are read in
 * src's map, by the validator and the engine alike.  The engine registers
 * a rank's map when it joins (the soft engine's: soft_map.c); fixed from
 * then on.  Heaps do not overlap within a map; the window does not
 * overlap any heap of any map.
 */
struct tplan_addr_map {
	u64 heap_dev[TPLAN_MAX_WORLD_SIZE];	/* rank r's heap as this rank sees it */
	u64 qptr_dev;			/* window of this rank's queues' pointer pages */
};

struct tplan_queue;

/*
 * The collective being gathered and the double buffer its blobs go to
 * (group.c has the rules).
 */
struct tplan_coll {
	u64 seq;			/* collective being gathered */
	u32 arrived;			/* ranks arrived at seq */
	u32 op;
	u32 blob_size;
	int status;			/* first rank that gave up on seq, else 0 */
	int done_status[2];		/* the outcome of seq - 1, seq - 2 (parity) */
	u8 *buf[2];			/* world * TPLAN_ALL_GATHER_MAX each */
};

/* A queue fault as a waiter reports it. */
struct tplan_fault_record {
	u32 src, dst;
	u32 reason;
	u32 dword;
	u64 offset;
};

struct tplan_group {
	struct kref kref;
	struct list_head node;		/* tplan_groups, while joins are open */
	u64 key;
	u32 id;				/* serial: names debugfs and engine threads */
	/* Found only by its creator's identity (group.c). */
	kuid_t owner;
	struct user_namespace *user_ns;
	struct tplan_user *user;	/* the creator's: pending groups, buffers */
	bool pending;			/* counted in user->pending_groups */

	u32 world_size;
	u64 heap_size;
	u32 engine;
	u32 sdma_ip;			/* TPLAN_SDMA_440 / TPLAN_SDMA_442 */
	struct tplan_sdma_limits limits;

	struct mutex lock;		/* see the top of this file */
	wait_queue_head_t wq;		/* join, collectives, breakage */
	/*
	 * Per rank, its plan waits: woken by what executes on the queues it
	 * sends or receives on (ATOMIC, FENCE, TRAP) when a waiter waits for
	 * that queue (arrival_need, tplan_group_wake_landed()), and by faults,
	 * failures and breakage (tplan_group_wake_arrivals()).
	 */
	wait_queue_head_t arrival_wq[TPLAN_MAX_WORLD_SIZE];
	atomic64_t arrival_need[TPLAN_MAX_WORLD_SIZE];	/* tplan_arrival_need_bit()s */
	atomic64_t wait_looks[TPLAN_MAX_WORLD_SIZE];	/* a rank's waits looked at the gates */
	u32 joined;			/* ranks admitted (their slot taken) */
	u32 ready;			/* admitted ranks whose join answer went out */
	u32 left;			/* ranks whose file is gone */
	bool complete;			/* every rank joined once */
	int broken;			/* 0 or the errno collectives now fail with */

	struct tplan_heap heaps[TPLAN_MAX_WORLD_SIZE];
	struct tplan_addr_map maps[TPLAN_MAX_WORLD_SIZE];	/* joined ranks' */
	u32 maps_set;			/* KFD engine: ranks that registered theirs (lock) */
	struct task_struct *tasks[TPLAN_MAX_WORLD_SIZE];	/* admitted ranks' */
	struct tplan_coll coll;
	struct tplan_queue *queues[TPLAN_MAX_WORLD_SIZE][TPLAN_MAX_WORLD_SIZE];
	/* Faults, for waits: bit p of queue_faults[r] when r->p or p->r faulted. */
	unsigned long queue_faults[TPLAN_MAX_WORLD_SIZE];
	struct tplan_fault_record faults[TPLAN_MAX_WORLD_SIZE][TPLAN_MAX_WORLD_SIZE];
	struct list_head plans;		/* under lock */
	struct xarray plan_ids;		/* id -> plan, for unique ids */
	u32 next_plan_id;
	u32 nplans;
	struct dentry *debugfs;
};

/* struct tplan_file.flags */
enum {
	TPLAN_FILE_IN_COLL,		/* a collective of this file is running */
};

/* struct tplan_file.join_state */
enum {
	TPLAN_JOIN_NONE,
	TPLAN_JOIN_BUSY,
	TPLAN_JOIN_DONE,
};

/*
 * struct tplan_file - one open file of /dev/tplan: one rank once joined.
 * Every object a rank creates hangs off this and is torn down on release.
 */
struct tplan_file {
	struct tplan_group *group;	/* published once joined (acquire) */
	u32 rank;
	atomic_t join_state;
	unsigned long flags;
	struct tplan_user *user;	/* the opener's: what this rank allocates */
	struct mm_struct *mm;		/* the joiner's (mmgrab): owns the queue memory */
	/* Collectives, under g->lock (group.c). */
	u64 coll_seq;			/* this rank's next collective */
	bool coll_arrived;		/* contributed to coll_seq, not returned */
	u32 coll_op, coll_size;		/* what it contributed */
	atomic64_t prep_seq;		/* rounds this rank prepared, all plans */
	void *coll_out;			/* what every rank gave, in a plan step (plan.c) */
};

/* The group of a joined file, or NULL. */
static inline struct tplan_group *tplan_file_group(struct tplan_file *tf)
{
	/* Pairs with the join's release. */
	return smp_load_acquire(&tf->group);
}

/*
 * Only the process that joined puts work on a rank's queues or maps their
 * memory: on a GPU the doorbell is a page of its address space, so a fork
 * or a process the file was passed to could write packets that no
 * doorbell announces.  One rule for every engine; -EPERM for anyone else.
 * For a joined file only (tf->mm is set by the join).
 */
static inline int tplan_file_owner_check(struct tplan_file *tf)
{
	return current->mm == tf->mm ? 0 : -EPERM;
}

/*
 * struct tplan_ucmd - one ioctl call in flight: the copied-in argument
 * and where the answer goes.
 */
struct tplan_ucmd {
	struct tplan_file *tf;
	void __user *ubuffer;
	u32 user_size;
	u32 cmd_size;			/* the kernel's struct size */
	bool responded;			/* the answer went out already */
	void *cmd;
};

/*
 * Write the answer now, before a step that cannot be undone, so that a
 * caller whose struct is not writable gets EFAULT with nothing changed.
 */
int tplan_ucmd_respond(struct tplan_ucmd *ucmd);

/*
 * Allocations whose size a caller chooses: charged to its memory cgroup,
 * failing them is the caller's problem (ENOMEM, never a warning, never
 * the OOM killer).
 */
#define TPLAN_GFP_USER_SIZED (GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)

/*
 * Deadlines.  A wait may end late, never early: deadlines are CLOCK_MONOTONIC
 * times, and a jiffies timeout gets one tick more because its first tick
 * may be almost over when it starts.
 */
static inline u64 tplan_deadline(u32 timeout_ms)
{
	return ktime_get_ns() + (u64)(timeout_ms ? timeout_ms : TPLAN_TIMEOUT_DEFAULT_MS) *
				NSEC_PER_MSEC;
}

static inline long tplan_deadline_jiffies(u64 deadline)
{
	u64 now = ktime_get_ns();

	if (now >= deadline)
		return 0;
	return min_t(u64, nsecs_to_jiffies64(deadline - now) + 1, MAX_SCHEDULE_TIMEOUT - 1);
}

/*
 * Wait on wq until cond, the deadline, or a signal: interruptible (any
 * signal: -ERESTARTSYS) or killable (only a fatal one: -EINTR, the
 * process is dying anyway).  0 once cond holds, -ETIMEDOUT at the
 * deadline (cond checked last).
 */
#define tplan_wait_deadline(wq, cond, deadline, killable)			\
({										\
	int __ret = 0;								\
	for (;;) {								\
		long __j = tplan_deadline_jiffies(deadline), __left;		\
		if (cond)							\
			break;							\
		if (!__j) {							\
			__ret = -ETIMEDOUT;					\
			break;							\
		}								\
		if (killable)							\
			__left = wait_event_killable_timeout(wq, cond, __j);	\
		else								\
			__left = wait_event_interruptible_timeout(wq, cond, __j); \
		if (__left < 0) {						\
			__ret = (killable) ? -EINTR : -ERESTARTSYS;		\
			break;							\
		}								\
	}									\
	__ret;									\
})

/* group.c */
int tplan_group_join(struct tplan_ucmd *ucmd);
int tplan_group_barrier(struct tplan_ucmd *ucmd);
int tplan_group_all_gather(struct tplan_ucmd *ucmd);
int tplan_heap_info(struct tplan_ucmd *ucmd);
int tplan_group_mmap(struct tplan_file *tf, struct vm_area_struct *vma);
int tplan_vm_insert_vmalloc(struct vm_area_struct *vma, void *vaddr, u64 len);
void tplan_group_leave(struct tplan_file *tf);
void tplan_group_break(struct tplan_group *g, int err);
void tplan_group_wake_arrivals(struct tplan_group *g, u32 ranks);
void tplan_group_wake_landed(struct tplan_group *g, u32 src, u32 dst);

/*
 * The bit of queue src -> dst in rank r's arrival needs (r is one of its
 * two ends): what lands from src, or what r sends to dst.
 */
static_assert(2 * TPLAN_MAX_WORLD_SIZE <= 64);
static inline u64 tplan_arrival_need_bit(u32 r, u32 src, u32 dst)
{
	return r == dst ? BIT_ULL(src) : BIT_ULL(TPLAN_MAX_WORLD_SIZE + dst);
}
void *tplan_group_translate(struct tplan_group *g, u32 viewer, u64 addr, u64 len);
u64 tplan_group_qptr_dev(struct tplan_group *g, u32 src, u32 dst);
void tplan_group_note_fault(struct tplan_group *g, const struct tplan_fault_record *f);
bool tplan_group_fault_for(struct tplan_group *g, u32 rank, u32 peer_mask,
			   struct tplan_fault_record *f);

/* Device address of rank's heap in viewer's map (a joined viewer's). */
static inline u64 tplan_heap_dev(const struct tplan_group *g, u32 viewer, u32 rank)
{
	return g->maps[viewer].heap_dev[rank];
}

/* A queue involving rank and a peer in peer_mask faulted (for wait conditions). */
static inline bool tplan_group_faulted(struct tplan_group *g, u32 rank, u32 peer_mask)
{
	return READ_ONCE(g->queue_faults[rank]) & peer_mask;
}

/* collective.c */
enum tplan_coll_wait {
	TPLAN_COLL_INTERRUPTIBLE,	/* barrier, all-gather: resumable */
	TPLAN_COLL_KILLABLE,		/* plan steps: only death or the deadline */
};
int tplan_coll_begin(struct tplan_file *tf);
void tplan_coll_end(struct tplan_file *tf);
int tplan_group_exchange(struct tplan_file *tf, u32 op, const void *in, u32 size,
			 void *out, u64 deadline, enum tplan_coll_wait how);

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

/* plan*.c */
int tplan_plan_create(struct tplan_ucmd *ucmd);
int tplan_plan_prepare(struct tplan_ucmd *ucmd);
int tplan_plan_start(struct tplan_ucmd *ucmd);
int tplan_plan_wait(struct tplan_ucmd *ucmd);
int tplan_plan_next_round(struct tplan_ucmd *ucmd);
int tplan_plan_close(struct tplan_ucmd *ucmd);
int tplan_plan_state(struct tplan_ucmd *ucmd);
void tplan_plans_destroy(struct tplan_group *g);
void tplan_plans_rank_left(struct tplan_group *g, u32 rank);
u64 tplan_gate_area_offset(u64 heap_size);

/* chain_submit.c */
int tplan_chain_submit(struct tplan_ucmd *ucmd);
void tplan_queues_destroy(struct tplan_group *g, u32 src);
void tplan_queue_wake(struct tplan_queue *q);

/* soft_map.c */
int tplan_soft_map_register(struct tplan_group *g, u32 rank);

/* The KFD engine: heaps as dma-bufs, address maps, queues (kfd_heap.c, kfd_engine.c). */
bool tplan_kfd_engine_available(void);
int tplan_kfd_heap_get(struct tplan_heap *h, int fd, u64 size);
void tplan_kfd_heap_put(struct tplan_heap *h);
bool tplan_kfd_map_overlaps(struct tplan_group *g, u32 rank, u64 addr, u64 len);
int tplan_heap_export(struct tplan_ucmd *ucmd);
int tplan_addr_map_set(struct tplan_ucmd *ucmd);
int tplan_queue_attach_kfd(struct tplan_ucmd *ucmd);
void tplan_kfd_engine_exit(void);

/* debugfs.c */
void tplan_debugfs_init(void);
void tplan_debugfs_exit(void);
void tplan_debugfs_group_add(struct tplan_group *g);
void tplan_debugfs_queue_add(struct tplan_queue *q);

#endif /* _TPLAN_PRIV_H */
