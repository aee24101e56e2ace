// SPDX-License-Identifier: GPL-2.0
/*
 * Groups: the ranks of one job on this node, their symmetric heaps and the
 * kernel collectives (barrier, all-gather, the vote behind two-phase
 * commit).
 *
 * A group is found by key while joins are open and leaves the lookup list
 * once every rank joined, so a later job may reuse the key.  Leaving before
 * the group completed frees the slot; leaving after breaks the group: every
 * blocked and later collective fails with ECONNRESET, nothing waits for a
 * rank that is gone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/debugfs.h>

#include "tplan_priv.h"
#include "compat.h"

static LIST_HEAD(tplan_groups);
static DEFINE_MUTEX(tplan_groups_lock);

static void tplan_group_release(struct kref *kref)
{
	struct tplan_group *g = container_of(kref, struct tplan_group, kref);
	unsigned int r;

	mutex_lock(&tplan_groups_lock);
	list_del_init(&g->node);
	mutex_unlock(&tplan_groups_lock);

	debugfs_remove_recursive(g->debugfs);
	tplan_plans_destroy(g);
	for (r = 0; r < TPLAN_MAX_WORLD_SIZE; r++)
		vfree(g->heaps[r].vaddr);
	kvfree(g->coll.buf[0]);
	kvfree(g->coll.buf[1]);
	put_cred(g->creator);
	mutex_destroy(&g->lock);
	kfree(g);
}

static void tplan_group_put(struct tplan_group *g)
{
	kref_put(&g->kref, tplan_group_release);
}

/* Processes of one job share credentials; nobody else may join. */
static bool tplan_same_creds(const struct cred *a, const struct cred *b)
{
	return uid_eq(a->euid, b->euid) && gid_eq(a->egid, b->egid) &&
	       a->user_ns == b->user_ns;
}

static u32 tplan_sdma_ip_index(u32 sdma_ip)
{
	return sdma_ip == TPLAN_SDMA_440 ? TPLAN_SDMA_IP_4_4_0 : TPLAN_SDMA_IP_4_4_2;
}

static struct tplan_group *tplan_group_alloc(const struct tplan_group_join *cmd)
{
	size_t coll_bytes = (size_t)cmd->world_size * TPLAN_ALL_GATHER_MAX;
	u32 max_copy = 0;
	struct tplan_group *g;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return NULL;
	g->coll.buf[0] = kvzalloc(coll_bytes, GFP_KERNEL);
	g->coll.buf[1] = kvzalloc(coll_bytes, GFP_KERNEL);
	if (!g->coll.buf[0] || !g->coll.buf[1])
		goto err_free_bufs;

	if (cmd->sdma_ip == TPLAN_SDMA_442)
		max_copy = tplan_params.max_copy_bytes_sdma442;
	if (tplan_sdma_limits_init(&g->limits, tplan_sdma_ip_index(cmd->sdma_ip), max_copy))
		goto err_free_bufs;

	kref_init(&g->kref);
	INIT_LIST_HEAD(&g->node);
	INIT_LIST_HEAD(&g->plans);
	mutex_init(&g->lock);
	init_waitqueue_head(&g->wq);
	init_waitqueue_head(&g->arrival_wq);
	g->key = cmd->key;
	g->world_size = cmd->world_size;
	g->heap_size = cmd->heap_size;
	g->engine = cmd->engine;
	g->sdma_ip = cmd->sdma_ip;
	g->creator = get_current_cred();
	return g;

err_free_bufs:
	kvfree(g->coll.buf[0]);
	kvfree(g->coll.buf[1]);
	kfree(g);
	return NULL;
}

static int tplan_join_check(const struct tplan_group_join *cmd)
{
	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (!cmd->world_size || cmd->world_size > TPLAN_MAX_WORLD_SIZE ||
	    cmd->rank >= cmd->world_size)
		return -EINVAL;
	if (!cmd->heap_size || cmd->heap_size > TPLAN_HEAP_SIZE_MAX ||
	    !IS_ALIGNED(cmd->heap_size, PAGE_SIZE))
		return -EINVAL;
	if (cmd->engine != TPLAN_ENGINE_SOFT)
		return -EINVAL;
	if (cmd->sdma_ip != TPLAN_SDMA_440 && cmd->sdma_ip != TPLAN_SDMA_442)
		return -EINVAL;
	return 0;
}

/* Does the group take this rank?  Caller holds tplan_groups_lock and g->lock. */
static int tplan_join_admit_locked(struct tplan_group *g, const struct tplan_group_join *cmd)
{
	lockdep_assert_held(&g->lock);

	if (!tplan_same_creds(g->creator, current_cred()))
		return -EPERM;
	if (g->world_size != cmd->world_size || g->heap_size != cmd->heap_size ||
	    g->engine != cmd->engine || g->sdma_ip != cmd->sdma_ip)
		return -EINVAL;
	if (g->joined & BIT(cmd->rank))
		return -EADDRINUSE;
	return 0;
}

/* Undo a join that did not complete.  Caller holds g->lock. */
static void tplan_join_undo_locked(struct tplan_group *g, u32 rank)
{
	lockdep_assert_held(&g->lock);
	g->joined &= ~BIT(rank);
	vfree(g->heaps[rank].vaddr);
	g->heaps[rank].vaddr = NULL;
}

int tplan_group_join(struct tplan_ucmd *ucmd)
{
	struct tplan_group_join *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g, *new_g = NULL;
	void *heap;
	long left;
	int ret;

	ret = tplan_join_check(cmd);
	if (ret)
		return ret;
	if (tf->group)
		return -EALREADY;

	/*
	 * The heap first: allocating it may take long and must not hold locks.
	 * A heap larger than the memory there is fails here, quietly, rather
	 * than in vmalloc with a warning.
	 */
	if (cmd->heap_size >> PAGE_SHIFT > si_mem_available())
		return -ENOMEM;
	heap = vmalloc_user(cmd->heap_size);
	if (!heap)
		return -ENOMEM;

	mutex_lock(&tplan_groups_lock);
	list_for_each_entry(g, &tplan_groups, node) {
		if (g->key == cmd->key)
			break;
	}
	if (list_entry_is_head(g, &tplan_groups, node)) {
		new_g = tplan_group_alloc(cmd);
		if (!new_g) {
			mutex_unlock(&tplan_groups_lock);
			vfree(heap);
			return -ENOMEM;
		}
		g = new_g;
		list_add(&g->node, &tplan_groups);
	} else {
		kref_get(&g->kref);
	}

	mutex_lock(&g->lock);
	ret = tplan_join_admit_locked(g, cmd);
	if (ret) {
		mutex_unlock(&g->lock);
		mutex_unlock(&tplan_groups_lock);
		vfree(heap);
		tplan_group_put(g);
		return ret;
	}
	g->joined |= BIT(cmd->rank);
	g->heaps[cmd->rank] = (struct tplan_heap) {
		.vaddr = heap,
		.size = cmd->heap_size,
		.dev_base = TPLAN_SOFT_DEVADDR_BASE +
			    (cmd->rank + 1ULL) * TPLAN_SOFT_DEVADDR_STRIDE,
	};
	if (g->joined == GENMASK(g->world_size - 1, 0)) {
		/* Complete: no more joins; the key is free for the next job. */
		g->complete = true;
		list_del_init(&g->node);
		tplan_debugfs_group_add(g);
		wake_up_all(&g->wq);
	}
	mutex_unlock(&g->lock);
	mutex_unlock(&tplan_groups_lock);

	left = wait_event_interruptible_timeout(g->wq, READ_ONCE(g->complete),
						tplan_timeout_jiffies(cmd->timeout_ms));

	mutex_lock(&tplan_groups_lock);
	mutex_lock(&g->lock);
	if (!g->complete) {
		tplan_join_undo_locked(g, cmd->rank);
		mutex_unlock(&g->lock);
		mutex_unlock(&tplan_groups_lock);
		tplan_group_put(g);
		return left < 0 ? -EINTR : -ETIMEDOUT;
	}
	mutex_unlock(&g->lock);
	mutex_unlock(&tplan_groups_lock);

	tf->group = g;
	tf->rank = cmd->rank;
	cmd->heap_base = g->heaps[cmd->rank].dev_base;
	return 0;
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
	wake_up_all(&g->arrival_wq);
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
	tf->group = NULL;
	tplan_group_put(g);
}

/*
 * One collective: contribute size bytes from in (a kernel buffer), wait
 * until every rank contributed to the same collective, copy every rank's
 * contribution to out (world * size bytes, may be NULL when size is 0).
 *
 * Blobs go to a double buffer by sequence parity: a rank can reach
 * collective k + 2 (reusing k's buffer) only after all ranks arrived at
 * k + 1, i.e. after they all finished reading k.
 *
 * Interrupted by a signal, the rank stays counted as arrived and a repeat
 * of the call resumes the wait.  A timeout breaks the group.
 */
int tplan_group_exchange(struct tplan_file *tf, u32 op, const void *in, u32 size,
			 void *out, long timeout)
{
	struct tplan_group *g = tf->group;
	struct tplan_coll *c = &g->coll;
	u64 seq = tf->coll_seq;
	long left;
	int ret = 0;

	mutex_lock(&g->lock);
	if (g->broken) {
		ret = g->broken;
		goto out_unlock;
	}
	if (!tf->coll_arrived) {
		if (!c->arrived) {
			c->op = op;
			c->blob_size = size;
		} else if (c->op != op || c->blob_size != size) {
			mutex_unlock(&g->lock);
			tplan_group_break(g, -ECONNRESET);
			return -EPROTO;
		}
		if (size)
			memcpy(c->buf[seq & 1] + (size_t)tf->rank * size, in, size);
		c->arrived |= BIT(tf->rank);
		tf->coll_arrived = true;
		if (c->arrived == GENMASK(g->world_size - 1, 0)) {
			c->arrived = 0;
			c->cur_seq++;
			c->done_seq = c->cur_seq;
			wake_up_all(&g->wq);
		}
	}
	mutex_unlock(&g->lock);

	left = wait_event_interruptible_timeout(g->wq,
						READ_ONCE(c->done_seq) > seq || READ_ONCE(g->broken),
						timeout);

	mutex_lock(&g->lock);
	if (c->done_seq > seq) {
		/* Completed, even if a signal or the break came just after. */
		if (size)
			memcpy(out, c->buf[seq & 1], (size_t)g->world_size * size);
		tf->coll_arrived = false;
		tf->coll_seq++;
	} else if (g->broken) {
		ret = g->broken;
	} else if (left < 0) {
		ret = -EINTR;
	} else {
		mutex_unlock(&g->lock);
		tplan_group_break(g, -ECONNRESET);
		return -ETIMEDOUT;
	}
out_unlock:
	mutex_unlock(&g->lock);
	return ret;
}

int tplan_group_barrier(struct tplan_ucmd *ucmd)
{
	struct tplan_group_barrier *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (!ucmd->tf->group)
		return -ENOTCONN;
	return tplan_group_exchange(ucmd->tf, TPLAN_COLL_BARRIER, NULL, 0, NULL,
				    tplan_timeout_jiffies(cmd->timeout_ms));
}

int tplan_group_all_gather(struct tplan_ucmd *ucmd)
{
	struct tplan_group_all_gather *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	size_t out_bytes;
	void *in, *out;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	if (!cmd->blob_size || cmd->blob_size > TPLAN_ALL_GATHER_MAX)
		return -EINVAL;
	if (!tf->group)
		return -ENOTCONN;

	out_bytes = (size_t)tf->group->world_size * cmd->blob_size;
	in = memdup_user(u64_to_user_ptr(cmd->in), cmd->blob_size);
	if (IS_ERR(in))
		return PTR_ERR(in);
	out = kvmalloc(out_bytes, GFP_KERNEL);
	if (!out) {
		ret = -ENOMEM;
		goto out_free_in;
	}
	ret = tplan_group_exchange(tf, TPLAN_COLL_ALL_GATHER, in, cmd->blob_size, out,
				   tplan_timeout_jiffies(cmd->timeout_ms));
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
	struct tplan_group *g = ucmd->tf->group;

	if (!g)
		return -ENOTCONN;
	if (cmd->rank >= g->world_size)
		return -EINVAL;
	cmd->heap_base = g->heaps[cmd->rank].dev_base;
	cmd->heap_size = g->heaps[cmd->rank].size;
	cmd->mmap_offset = (u64)cmd->rank << TPLAN_MMAP_HEAP_SHIFT;
	cmd->gate_area_offset = tplan_gate_area_offset(g->heap_size);
	return 0;
}

/*
 * mmap of rank r's heap: offset r << TPLAN_MMAP_HEAP_SHIFT, within the
 * heap.  The mapping holds the file, the file holds the group, so the heap
 * outlives the mapping.
 */
int tplan_group_mmap(struct tplan_file *tf, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 len = vma->vm_end - vma->vm_start;
	struct tplan_group *g = tf->group;
	u32 rank = off >> TPLAN_MMAP_HEAP_SHIFT;
	u64 in_heap = off & ((1ULL << TPLAN_MMAP_HEAP_SHIFT) - 1);

	if (!g)
		return -ENOTCONN;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (rank >= g->world_size || in_heap >= g->heap_size || len > g->heap_size - in_heap)
		return -EINVAL;
	tplan_vm_flags_set(vma, VM_DONTCOPY);
	return remap_vmalloc_range(vma, g->heaps[rank].vaddr, in_heap >> PAGE_SHIFT);
}

/*
 * The engine's only way to memory: a device address and a length, checked
 * to lie inside one heap.  NULL when they do not.
 */
void *tplan_group_translate(struct tplan_group *g, u64 addr, u64 len)
{
	u64 rank, off;

	if (addr < TPLAN_SOFT_DEVADDR_BASE + TPLAN_SOFT_DEVADDR_STRIDE)
		return NULL;
	rank = (addr - TPLAN_SOFT_DEVADDR_BASE) / TPLAN_SOFT_DEVADDR_STRIDE - 1;
	if (rank >= g->world_size || !g->heaps[rank].vaddr)
		return NULL;
	off = addr - g->heaps[rank].dev_base;
	if (off >= g->heaps[rank].size || len > g->heaps[rank].size - off)
		return NULL;
	return g->heaps[rank].vaddr + off;
}
