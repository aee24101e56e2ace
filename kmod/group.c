// SPDX-License-Identifier: GPL-2.0
/*
 * Groups: the ranks of one job on this node, their symmetric heaps and
 * each rank's address map (where it sees every heap), who may join,
 * barrier and all-gather (collective.c has the engine).
 *
 * A group is found by (key, the creator's effective uid and user
 * namespace) while joins are open, so users never meet: another user
 * with the same key gets a group of its own.  Joining shares heaps both
 * ways, which is what process_vm_writev() grants, so a joiner must pass
 * ptrace's attach rules against every rank already there (see
 * tplan_may_meet()).  The group leaves the lookup list once every rank
 * joined, so a later job may reuse the key.  Leaving before the group
 * completed frees the slot; leaving after breaks the group: every blocked
 * and later collective fails with ECONNRESET, nothing waits for a rank
 * that is gone.
 *
 * The list lock is taken with the count's last reference
 * (kref_put_mutex()), so a lookup never finds a group being freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/pid_namespace.h>
#include <linux/user_namespace.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/debugfs.h>

#include "tplan_priv.h"
#include "compat.h"

static LIST_HEAD(tplan_groups);
static DEFINE_MUTEX(tplan_groups_lock);
static atomic_t tplan_group_serial = ATOMIC_INIT(0);

static void tplan_heap_free(struct tplan_heap *h)
{
	if (h->dmabuf) {
		tplan_kfd_heap_put(h);
	} else {
		vfree(h->vaddr);
		tplan_uncharge(h->user, h->size);
		tplan_user_put(h->user);
	}
	memset(h, 0, sizeof(*h));
}

/* Called by kref_put_mutex() with tplan_groups_lock held; unlocks it. */
static void tplan_group_release(struct kref *kref)
{
	struct tplan_group *g = container_of(kref, struct tplan_group, kref);
	size_t coll_bytes = 2 * (size_t)g->world_size * TPLAN_ALL_GATHER_MAX;
	unsigned int r;

	list_del_init(&g->node);
	mutex_unlock(&tplan_groups_lock);

	debugfs_remove_recursive(g->debugfs);
	tplan_plans_destroy(g);
	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++) {
		if (!g->heaps[r].size)
			continue;
		tplan_heap_free(&g->heaps[r]);
		put_task_struct(g->tasks[r]);
	}
	if (g->pending)
		tplan_pending_group_put(g->user);
	kvfree(g->coll.buf[0]);
	kvfree(g->coll.buf[1]);
	tplan_uncharge(g->user, coll_bytes);
	tplan_user_put(g->user);
	put_user_ns(g->user_ns);
	xa_destroy(&g->plan_ids);
	mutex_destroy(&g->lock);
	kfree(g);
	tplan_object_add(TPLAN_OBJ_GROUP, -1);
}

static void tplan_group_put(struct tplan_group *g)
{
	kref_put_mutex(&g->kref, tplan_group_release, &tplan_groups_lock);
}

/*
 * May the caller share heaps with task t?  Joining lets each side write
 * the other's heap, what process_vm_writev() allows, so this is the rule
 * of ptrace attach with real credentials (PTRACE_MODE_ATTACH_REALCREDS)
 * as far as a module can evaluate it (ptrace_may_access() and the LSM
 * hook are not exported):
 *  - t is nameable in the caller's pid namespace and the caller in t's,
 *    as the pid process_vm_writev() takes must be, so processes of two
 *    containers never meet even with the same uid;
 *  - the caller's real uid and gid equal t's real, effective and saved
 *    ones and the other way round, or the caller has CAP_SYS_PTRACE in
 *    t's user namespace;
 *  - t's memory is dumpable (no set-uid process), or the caller has
 *    CAP_SYS_PTRACE over it.
 * Security modules' ptrace policies (Yama, AppArmor) are not consulted.
 */
static bool tplan_may_meet(struct task_struct *t)
{
	const struct cred *me = current_cred(), *tc;
	struct user_namespace *mm_ns = NULL;
	struct mm_struct *mm;
	bool ok = true;
	int dumpable = SUID_DUMP_USER;

	if (same_thread_group(t, current))
		return true;
	rcu_read_lock();
	if (!pid_nr_ns(task_pid(t), task_active_pid_ns(current)) ||
	    !pid_nr_ns(task_pid(current), task_active_pid_ns(t)))
		ok = false;
	rcu_read_unlock();
	if (!ok)
		return false;

	tc = get_task_cred(t);
	ok = uid_eq(me->uid, tc->uid) && uid_eq(me->uid, tc->euid) && uid_eq(me->uid, tc->suid) &&
	     gid_eq(me->gid, tc->gid) && gid_eq(me->gid, tc->egid) && gid_eq(me->gid, tc->sgid) &&
	     uid_eq(tc->uid, me->euid) && uid_eq(tc->uid, me->suid) &&
	     gid_eq(tc->gid, me->egid) && gid_eq(tc->gid, me->sgid);
	if (!ok)
		ok = ns_capable(tc->user_ns, CAP_SYS_PTRACE);
	put_cred(tc);
	if (!ok)
		return false;

	task_lock(t);
	mm = t->mm;
	if (mm) {
		dumpable = get_dumpable(mm);
		mm_ns = get_user_ns(mm->user_ns);
	}
	task_unlock(t);
	if (mm_ns) {
		if (dumpable != SUID_DUMP_USER && !ns_capable(mm_ns, CAP_SYS_PTRACE))
			ok = false;
		put_user_ns(mm_ns);
	}
	return ok;
}

static u32 tplan_sdma_ip_index(u32 sdma_ip)
{
	return sdma_ip == TPLAN_SDMA_440 ? TPLAN_SDMA_IP_4_4_0 : TPLAN_SDMA_IP_4_4_2;
}

static struct tplan_group *tplan_group_alloc(struct tplan_file *tf,
					     const struct tplan_group_join *cmd, int *err)
{
	size_t coll_bytes = (size_t)cmd->world_size * TPLAN_ALL_GATHER_MAX;
	u32 max_copy = 0, r;
	struct tplan_group *g;

	*err = tplan_pending_group_get(tf->user);
	if (*err)
		return NULL;
	*err = tplan_charge(tf->user, 2 * coll_bytes);
	if (*err)
		goto err_pending;
	*err = -ENOMEM;
	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		goto err_uncharge;
	g->coll.buf[0] = kvzalloc(coll_bytes, GFP_KERNEL_ACCOUNT);
	g->coll.buf[1] = kvzalloc(coll_bytes, GFP_KERNEL_ACCOUNT);
	if (!g->coll.buf[0] || !g->coll.buf[1])
		goto err_free_bufs;

	if (cmd->sdma_ip == TPLAN_SDMA_442)
		max_copy = tplan_params.max_copy_bytes_sdma442;
	if (tplan_sdma_limits_init(&g->limits, tplan_sdma_ip_index(cmd->sdma_ip), max_copy))
		goto err_free_bufs;

	kref_init(&g->kref);
	INIT_LIST_HEAD(&g->node);
	INIT_LIST_HEAD(&g->plans);
	xa_init_flags(&g->plan_ids, XA_FLAGS_ALLOC1);
	mutex_init(&g->lock);
	init_waitqueue_head(&g->wq);
	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++) {
		init_waitqueue_head(&g->arrival_wq[r]);
		atomic64_set(&g->arrival_need[r], 0);
		atomic64_set(&g->wait_looks[r], 0);
	}
	g->id = atomic_inc_return(&tplan_group_serial);
	g->key = cmd->key;
	g->owner = current_euid();
	g->user_ns = get_user_ns(current_user_ns());
	refcount_inc(&tf->user->ref);
	g->user = tf->user;
	g->pending = true;
	g->world_size = cmd->world_size;
	g->heap_size = cmd->heap_size;
	g->engine = cmd->engine;
	g->sdma_ip = cmd->sdma_ip;
	tplan_debugfs_group_add(g);
	tplan_object_add(TPLAN_OBJ_GROUP, 1);
	return g;

err_free_bufs:
	kvfree(g->coll.buf[0]);
	kvfree(g->coll.buf[1]);
	kfree(g);
err_uncharge:
	tplan_uncharge(tf->user, 2 * coll_bytes);
err_pending:
	tplan_pending_group_put(tf->user);
	return NULL;
}

static int tplan_join_check(const struct tplan_group_join *cmd)
{
	if (cmd->flags)
		return -EINVAL;
	if (!cmd->world_size || cmd->world_size > TPLAN_MAX_WORLD_SIZE ||
	    cmd->rank >= cmd->world_size)
		return -EINVAL;
	if (!cmd->heap_size || cmd->heap_size > TPLAN_HEAP_SIZE_MAX ||
	    !IS_ALIGNED(cmd->heap_size, PAGE_SIZE))
		return -EINVAL;
	if (cmd->engine != TPLAN_ENGINE_SOFT && !(cmd->engine == TPLAN_ENGINE_KFD &&
						  tplan_kfd_engine_available()))
		return -EINVAL;
	if (cmd->engine == TPLAN_ENGINE_SOFT && cmd->heap_fd)
		return -EINVAL;
	if (cmd->sdma_ip != TPLAN_SDMA_440 && cmd->sdma_ip != TPLAN_SDMA_442)
		return -EINVAL;
	return 0;
}

/* The joinable group of key that the caller's identity owns, referenced. */
static struct tplan_group *tplan_group_lookup_locked(u64 key)
{
	struct tplan_group *g;

	lockdep_assert_held(&tplan_groups_lock);
	list_for_each_entry(g, &tplan_groups, node)
		if (g->key == key && uid_eq(g->owner, current_euid()) &&
		    g->user_ns == current_user_ns() && kref_get_unless_zero(&g->kref))
			return g;
	return NULL;
}

/* Does the group take this rank?  Caller holds g->lock. */
static int tplan_join_admit_locked(struct tplan_group *g, const struct tplan_group_join *cmd)
{
	u32 r;

	lockdep_assert_held(&g->lock);
	for (r = 0; r < g->world_size; r++)
		if (g->joined & BIT(r) && !tplan_may_meet(g->tasks[r]))
			return -EPERM;
	if (g->world_size != cmd->world_size || g->heap_size != cmd->heap_size ||
	    g->engine != cmd->engine || g->sdma_ip != cmd->sdma_ip)
		return -EINVAL;
	if (g->joined & BIT(cmd->rank))
		return -EADDRINUSE;
	return 0;
}


/*
 * This rank's heap: kernel memory charged to the user, or with the KFD
 * engine the GPU memory of the dma-buf it passed (KFD charges that).
 */
static int tplan_heap_alloc(struct tplan_heap *h, struct tplan_file *tf,
			    const struct tplan_group_join *cmd)
{
	int ret;

	if (cmd->engine == TPLAN_ENGINE_KFD)
		return tplan_kfd_heap_get(h, cmd->heap_fd, cmd->heap_size);
	ret = tplan_charge(tf->user, cmd->heap_size);
	if (ret)
		return ret;
	refcount_inc(&tf->user->ref);
	h->user = tf->user;
	h->size = cmd->heap_size;
	h->vaddr = __vmalloc(cmd->heap_size, TPLAN_GFP_USER_SIZED | __GFP_ZERO);
	if (!h->vaddr) {
		tplan_heap_free(h);
		return -ENOMEM;
	}
	iosys_map_set_vaddr(&h->map, h->vaddr);
	return 0;
}

/*
 * The engine registers the rank's address map: the soft engine picks
 * addresses of its own (soft_map.c); a hardware engine would register
 * those its GPU VM maps the heaps at.  Caller holds g->lock.
 */
static int tplan_map_register_locked(struct tplan_group *g, u32 rank)
{
	lockdep_assert_held(&g->lock);
	/* The KFD engine's rank registers its own, later (TPLAN_IOC_ADDR_MAP). */
	if (g->engine == TPLAN_ENGINE_KFD)
		return 0;
	return tplan_soft_map_register(g, rank);
}

/* Undo an admission that did not complete.  Caller holds g->lock. */
static void tplan_join_undo_locked(struct tplan_group *g, u32 rank)
{
	lockdep_assert_held(&g->lock);
	g->joined &= ~BIT(rank);
	g->ready &= ~BIT(rank);
	memset(&g->maps[rank], 0, sizeof(g->maps[rank]));
	g->maps_set &= ~BIT(rank);
	tplan_heap_free(&g->heaps[rank]);
	put_task_struct(g->tasks[rank]);
	g->tasks[rank] = NULL;
}

/*
 * Admitted, the rank holds its slot; ready, its answer went out.  The
 * group completes when every rank is ready, so a rank whose answer cannot
 * be written (EFAULT) leaves without anyone having counted on it.
 */
static int tplan_join(struct tplan_ucmd *ucmd)
{
	struct tplan_group_join *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	u64 deadline = tplan_deadline(cmd->timeout_ms);
	struct tplan_heap heap = {};
	struct tplan_group *g;
	int ret;

	/* The heap first: allocating it may take long and must not hold locks. */
	ret = tplan_heap_alloc(&heap, tf, cmd);
	if (ret)
		return ret;

	mutex_lock(&tplan_groups_lock);
	g = tplan_group_lookup_locked(cmd->key);
	if (!g) {
		g = tplan_group_alloc(tf, cmd, &ret);
		if (!g) {
			mutex_unlock(&tplan_groups_lock);
			tplan_heap_free(&heap);
			return ret;
		}
		list_add(&g->node, &tplan_groups);
	}
	mutex_lock(&g->lock);
	ret = tplan_join_admit_locked(g, cmd);
	if (!ret)
		ret = tplan_map_register_locked(g, cmd->rank);
	if (!ret) {
		g->joined |= BIT(cmd->rank);
		g->heaps[cmd->rank] = heap;
		g->tasks[cmd->rank] = get_task_struct(current->group_leader);
		/* Its own heap in its own map. */
		cmd->heap_base = tplan_heap_dev(g, cmd->rank, cmd->rank);
	}
	mutex_unlock(&g->lock);
	mutex_unlock(&tplan_groups_lock);
	if (ret) {
		tplan_heap_free(&heap);
		tplan_group_put(g);
		return ret;
	}

	ret = tplan_ucmd_respond(ucmd);
	if (!ret) {
		mutex_lock(&tplan_groups_lock);
		mutex_lock(&g->lock);
		g->ready |= BIT(cmd->rank);
		if (g->ready == GENMASK(g->world_size - 1, 0)) {
			/* Complete: no more joins; the key is free for the next job. */
			g->complete = true;
			list_del_init(&g->node);
			if (g->pending)
				tplan_pending_group_put(g->user);
			g->pending = false;
			wake_up_all(&g->wq);
		}
		mutex_unlock(&g->lock);
		mutex_unlock(&tplan_groups_lock);
		ret = tplan_wait_deadline(g->wq, READ_ONCE(g->complete), deadline, false);
	}

	mutex_lock(&tplan_groups_lock);
	mutex_lock(&g->lock);
	if (g->complete)
		ret = 0;
	else
		tplan_join_undo_locked(g, cmd->rank);
	mutex_unlock(&g->lock);
	mutex_unlock(&tplan_groups_lock);
	if (ret) {
		tplan_group_put(g);
		return ret;
	}
	tf->rank = cmd->rank;
	/* The process that joined owns the rank's queue memory (tplan_queue_mmap()). */
	mmgrab(current->mm);
	tf->mm = current->mm;
	/* Release: whoever sees the group sees the rank and the heaps. */
	smp_store_release(&tf->group, g);
	return 0;
}

int tplan_group_join(struct tplan_ucmd *ucmd)
{
	struct tplan_file *tf = ucmd->tf;
	int ret;

	ret = tplan_join_check(ucmd->cmd);
	if (ret)
		return ret;
	/* One join per file, and none while one is in progress. */
	if (atomic_cmpxchg(&tf->join_state, TPLAN_JOIN_NONE, TPLAN_JOIN_BUSY) != TPLAN_JOIN_NONE)
		return -EALREADY;
	ret = tplan_join(ucmd);
	atomic_set(&tf->join_state, ret ? TPLAN_JOIN_NONE : TPLAN_JOIN_DONE);
	return ret;
}

/*
 * Break the group: every blocked and later collective fails with err.
 * Waiters of every kind are woken so none sleeps out its timeout.
 */
void tplan_group_break(struct tplan_group *g, int err)
{
	unsigned int s, d;

	mutex_lock(&g->lock);
	if (!g->broken)
		g->broken = err;
	/* queue waiters (quiet, ring space) check g->broken too */
	for (s = 0; s < g->world_size; s++)
		for (d = 0; d < g->world_size; d++)
			if (g->queues[s][d])
				tplan_queue_wake(g->queues[s][d]);
	mutex_unlock(&g->lock);
	wake_up_all(&g->wq);
	tplan_group_wake_arrivals(g, ~0U);
}

/*
 * Wake the plan waits of the ranks in the mask that sleep: the two ends of
 * a queue whose ATOMIC, FENCE or TRAP ran, or every rank.
 */
void tplan_group_wake_arrivals(struct tplan_group *g, u32 ranks)
{
	u32 r;

	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		/* wq_has_sleeper() orders the caller's stores before the check. */
		if (ranks & BIT(r) && wq_has_sleeper(&g->arrival_wq[r]))
			wake_up_all(&g->arrival_wq[r]);
}

/*
 * Queue src -> dst ran an ATOMIC, FENCE or TRAP: wake the plan waits of
 * its two ranks if one of them waits for that queue.  A waiter sets its
 * queue's bit in arrival_need before it looks at the gates a last time
 * (plan_wait.c); every waiter woken sets it again if it still waits, so
 * the bits are cleared here, all at once.
 */
void tplan_group_wake_landed(struct tplan_group *g, u32 src, u32 dst)
{
	u32 ends[2] = { src, dst }, i, r;
	u64 bit;

	/* The caller's stores before the needs: pairs with the waiter's barrier. */
	smp_mb();
	for (i = 0; i < 2; i++) {
		r = ends[i];
		bit = tplan_arrival_need_bit(r, src, dst);
		if (!(atomic64_read(&g->arrival_need[r]) & bit))
			continue;
		atomic64_set(&g->arrival_need[r], 0);
		wake_up_all(&g->arrival_wq[r]);
	}
}

/* Release of a joined rank's file. */
void tplan_group_leave(struct tplan_file *tf)
{
	struct tplan_group *g = tf->group;

	if (!g)
		return;
	/* A rank that is gone can never take part in a collective again. */
	tplan_group_break(g, -ECONNRESET);
	tplan_queues_destroy(g, tf->rank);
	/* Its chains can no longer run: its parts of plans count as drained. */
	tplan_plans_rank_left(g, tf->rank);
	tf->group = NULL;
	tplan_group_put(g);
}

/* A queue stopped at a fault: waits that depend on it end with EIO. */
void tplan_group_note_fault(struct tplan_group *g, const struct tplan_fault_record *f)
{
	mutex_lock(&g->lock);
	g->faults[f->src][f->dst] = *f;
	/* Release: the record is written before a waiter can see the bit. */
	smp_mb__before_atomic();
	set_bit(f->dst, &g->queue_faults[f->src]);
	set_bit(f->src, &g->queue_faults[f->dst]);
	mutex_unlock(&g->lock);
	tplan_group_wake_arrivals(g, ~0U);
}

/* The first fault of a queue between rank and a peer of peer_mask, if any. */
bool tplan_group_fault_for(struct tplan_group *g, u32 rank, u32 peer_mask,
			   struct tplan_fault_record *f)
{
	u32 p;

	if (!tplan_group_faulted(g, rank, peer_mask))
		return false;
	mutex_lock(&g->lock);
	for (p = 0; p < g->world_size; p++) {
		if (!(peer_mask & BIT(p)) || !(g->queue_faults[rank] & BIT(p)))
			continue;
		*f = g->faults[rank][p].reason ? g->faults[rank][p] : g->faults[p][rank];
		break;
	}
	mutex_unlock(&g->lock);
	return true;
}

int tplan_group_barrier(struct tplan_ucmd *ucmd)
{
	struct tplan_group_barrier *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	int ret;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (!tplan_file_group(tf))
		return -ENOTCONN;
	ret = tplan_coll_begin(tf);
	if (ret)
		return ret;
	ret = tplan_group_exchange(tf, TPLAN_COLL_BARRIER, NULL, 0, NULL,
				   tplan_deadline(cmd->timeout_ms), TPLAN_COLL_INTERRUPTIBLE);
	tplan_coll_end(tf);
	return ret;
}

int tplan_group_all_gather(struct tplan_ucmd *ucmd)
{
	struct tplan_group_all_gather *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tplan_file_group(tf);
	size_t out_bytes;
	void *in, *out;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	if (!cmd->blob_size || cmd->blob_size > TPLAN_ALL_GATHER_MAX)
		return -EINVAL;
	if (!g)
		return -ENOTCONN;

	out_bytes = (size_t)g->world_size * cmd->blob_size;
	in = memdup_user(u64_to_user_ptr(cmd->in), cmd->blob_size);
	if (IS_ERR(in))
		return PTR_ERR(in);
	out = kvmalloc(out_bytes, GFP_KERNEL_ACCOUNT);
	if (!out) {
		ret = -ENOMEM;
		goto out_free_in;
	}
	/* Writable before this rank counts as arrived: EFAULT changes nothing. */
	ret = clear_user(u64_to_user_ptr(cmd->out), out_bytes) ? -EFAULT : 0;
	if (!ret)
		ret = tplan_coll_begin(tf);
	if (!ret) {
		ret = tplan_group_exchange(tf, TPLAN_COLL_ALL_GATHER, in, cmd->blob_size, out,
					   tplan_deadline(cmd->timeout_ms),
					   TPLAN_COLL_INTERRUPTIBLE);
		tplan_coll_end(tf);
	}
	if (!ret && copy_to_user(u64_to_user_ptr(cmd->out), out, out_bytes))
		ret = -EFAULT;
	kvfree(out);
out_free_in:
	kfree(in);
	return ret;
}

int tplan_heap_info(struct tplan_ucmd *ucmd)
{
	struct tplan_heap_info *cmd = ucmd->cmd;
	struct tplan_group *g = tplan_file_group(ucmd->tf);

	if (!g)
		return -ENOTCONN;
	if (cmd->rank >= g->world_size)
		return -EINVAL;
	/* In the caller's map: the address its own packets use. */
	cmd->heap_base = tplan_heap_dev(g, ucmd->tf->rank, cmd->rank);
	cmd->heap_size = g->heaps[cmd->rank].size;
	cmd->mmap_offset = (u64)cmd->rank << TPLAN_MMAP_HEAP_SHIFT;
	cmd->gate_area_offset = tplan_gate_area_offset(g->heap_size);
	return 0;
}

/*
 * mmap of rank r's heap: offset r << TPLAN_MMAP_HEAP_SHIFT, within the
 * heap.  The mapping holds the file, the file holds the group, so the heap
 * outlives the mapping.  No lock: the group is fixed once joined.  Pages
 * go in as normal pages (vm_insert_page()), never inherited by a fork.
 */
int tplan_group_mmap(struct tplan_file *tf, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct tplan_group *g = tplan_file_group(tf);
	u32 rank = off >> TPLAN_MMAP_HEAP_SHIFT;
	u64 in_heap = off & ((1ULL << TPLAN_MMAP_HEAP_SHIFT) - 1);

	if (!g)
		return -ENOTCONN;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* A heap in GPU memory is mapped through its dma-buf. */
	if (g->engine == TPLAN_ENGINE_KFD)
		return -ENODEV;
	if (rank >= g->world_size || in_heap >= g->heap_size || len > g->heap_size - in_heap)
		return -EINVAL;
	tplan_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return tplan_vm_insert_vmalloc(vma, g->heaps[rank].vaddr + in_heap, len);
}

/*
 * Insert len bytes of vmalloc memory from vaddr (page-aligned) at the
 * start of vma, page by page, as normal pages; a fatal signal stops a
 * long one every 2 MiB.
 */
int tplan_vm_insert_vmalloc(struct vm_area_struct *vma, void *vaddr, u64 len)
{
	u64 i;
	int ret;

	for (i = 0; i < len; i += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + i, vmalloc_to_page((u8 *)vaddr + i));
		if (ret)
			return ret;
		if (!(i & ((1ULL << 21) - 1))) {
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
		}
	}
	return 0;
}

/*
 * The engine's only way to memory: a device address in viewer's map (the
 * sending rank's) and a length, checked to lie inside one heap.  NULL
 * when they do not: an address of another rank's map, or the pointer-page
 * window, is none of viewer's heaps.  No lock: a joined rank's map is
 * fixed, and so are the heaps once the group completed.
 */
void *tplan_group_translate(struct tplan_group *g, u32 viewer, u64 addr, u64 len)
{
	const struct tplan_addr_map *m = &g->maps[viewer];
	u64 off;
	u32 r;

	for (r = 0; r < g->world_size; r++) {
		/* Unsigned: an address below the base is a huge offset. */
		off = addr - m->heap_dev[r];
		if (!m->heap_dev[r] || !g->heaps[r].vaddr || off >= g->heaps[r].size)
			continue;
		if (len > g->heaps[r].size - off)
			return NULL;
		return g->heaps[r].vaddr + off;
	}
	return NULL;
}

/*
 * Device address, in src's map, of the one-page pointer page of queue
 * src->dst: page dst of src's window, which overlaps no heap of any map.
 */
u64 tplan_group_qptr_dev(struct tplan_group *g, u32 src, u32 dst)
{
	return g->maps[src].qptr_dev + (u64)dst * PAGE_SIZE;
}
