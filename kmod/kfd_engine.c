// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD engine (TPLAN_ENGINE_KFD): a queue runs on an SDMA user queue
 * of the rank's GPU, which the rank created through KFD on the queue's
 * own memory (its ring and pointer page, registered at GPU address = CPU
 * address) and attached here (TPLAN_IOC_QUEUE_ATTACH_KFD).  What is left
 * to the module is what the hardware cannot do for it:
 *  - the doorbell: the core stores wptr in the pointer page, then calls
 *    doorbell(), which writes the same 64-bit value to the queue's
 *    doorbell through the owner's mapping of it (put_user()).  Only the
 *    owner's own system calls can: every path that publishes runs in one,
 *    and a doorbell from anywhere else is counted and dropped (the wptr
 *    stays in memory, which is where an engine restored after preemption
 *    reads it).  The module never maps doorbell pages itself: a slice
 *    kept past its process could ring another process's queue.
 *  - progress: the hardware wakes nobody (its TRAP goes to KFD's events),
 *    so a poller thread per queue watches the pointer page's rptr,
 *    gate_seq and done_seq while the queue has work the last done FENCE
 *    has not covered, spinning once and then backing off from 10 us to
 *    1 ms, and on any change does what the soft engine does after a
 *    packet: tplan_queue_progress() and the arrival wake-ups of both
 *    ranks of the queue.  An idle queue's poller sleeps until a doorbell
 *    brings work or the pointer page moved: the engine may finish a
 *    doorbell's work before the poller runs, and its completion must
 *    still be passed on.
 *  - teardown: the rank's /dev/kfd file is held from attach until the
 *    queue goes, so KFD destroys the hardware queue only after the module
 *    stopped writing to it.  The ring and pointer page of a queue that
 *    still had work (chains blocked on a gate when its process died) are
 *    kept for TPLAN_KFD_QUARANTINE_MS before they are freed, well past
 *    KFD's teardown of the process; everything kept is freed at rmmod.
 * Faults are not seen: a GPU VM fault stops the process's queues in KFD,
 * and waits on them end by their timeouts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/file.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "tplan_priv.h"
#include "queue.h"

#define TPLAN_KFD_BACKOFF_MIN_US	10
#define TPLAN_KFD_BACKOFF_MAX_US	1000
#define TPLAN_KFD_QUARANTINE_MS		30000

struct tplan_kfd_queue {
	struct tplan_queue *q;
	struct task_struct *poller;
	wait_queue_head_t wq;		/* the poller, while the queue is idle */
	/* Set once, under q->wlock, before attached (release). */
	bool attached;
	struct file *kfd;		/* the owner's /dev/kfd: held */
	struct mm_struct *mm;		/* the owner's: doorbells only from it */
	u64 __user *doorbell;
	u64 ring_addr;
	u32 gpu_id, queue_id;
	/* The pointer page as the poller last saw it. */
	u64 seen_rptr;
	u32 seen_gate, seen_done;
	atomic64_t doorbells_dropped;	/* not the owner's context */
	atomic64_t doorbell_faults;	/* put_user() failed */
	atomic64_t wakeups;		/* progress the poller passed on */
};

static struct tplan_kfd_queue *tplan_kfd_of(struct tplan_queue *q)
{
	return q->engine_data;
}

static bool tplan_kfd_attached(struct tplan_kfd_queue *kq)
{
	/* Pairs with the attach's release: the fields are set. */
	return smp_load_acquire(&kq->attached);
}

/*
 * Work published that the last done FENCE has not covered yet, or whose
 * rptr has not been written back (ring-space waiters go by it).
 */
static bool tplan_kfd_busy(struct tplan_kfd_queue *kq)
{
	struct tplan_queue *q = kq->q;

	return tplan_kfd_attached(kq) &&
	       (!tplan_queue_done_passed(q, READ_ONCE(q->done_last)) ||
		READ_ONCE(q->ptr->rptr) != READ_ONCE(q->wptr));
}

/* Does the pointer page differ from what the poller last passed on? */
static bool tplan_kfd_moved(struct tplan_kfd_queue *kq)
{
	struct tplan_qptr *p = kq->q->ptr;

	return READ_ONCE(p->rptr) != kq->seen_rptr || READ_ONCE(p->gate_seq) != kq->seen_gate ||
	       READ_ONCE(p->done_seq) != kq->seen_done;
}

/*
 * Did the engine write anything since the poller last looked?  Then what
 * the page holds now is what the poller passes on (a word written after
 * this read differs from it, and the next look sees that).
 */
static bool tplan_kfd_changed(struct tplan_kfd_queue *kq)
{
	struct tplan_qptr *p = kq->q->ptr;

	if (!tplan_kfd_moved(kq))
		return false;
	kq->seen_rptr = READ_ONCE(p->rptr);
	kq->seen_gate = READ_ONCE(p->gate_seq);
	kq->seen_done = READ_ONCE(p->done_seq);
	return true;
}

static int tplan_kfd_poller(void *arg)
{
	struct tplan_kfd_queue *kq = arg;
	struct tplan_queue *q = kq->q;
	u32 backoff = 0;

	while (!kthread_should_stop()) {
		/*
		 * Idle is read before the look at the pointer page: what the
		 * engine wrote before it went idle is then seen and passed on,
		 * never slept over.
		 */
		bool idle = !tplan_kfd_busy(kq);

		if (tplan_kfd_changed(kq)) {
			atomic64_inc(&kq->wakeups);
			tplan_queue_progress(q);
			tplan_group_wake_landed(q->group, q->src, q->dst);
			backoff = 0;
			cond_resched();
			continue;
		}
		if (idle) {
			backoff = 0;
			/*
			 * Until there is work, or the engine wrote: a doorbell's
			 * work can be done before this thread runs again, and
			 * then only the pointer page tells.
			 */
			wait_event_idle(kq->wq, kthread_should_stop() || tplan_kfd_busy(kq) ||
					tplan_kfd_moved(kq));
			continue;
		}
		backoff = clamp(backoff * 2, TPLAN_KFD_BACKOFF_MIN_US, TPLAN_KFD_BACKOFF_MAX_US);
		usleep_range(backoff, backoff + backoff / 4);
	}
	return 0;
}

static int tplan_kfd_start(struct tplan_queue *q)
{
	struct tplan_kfd_queue *kq = kzalloc(sizeof(*kq), GFP_KERNEL_ACCOUNT);

	if (!kq)
		return -ENOMEM;
	kq->q = q;
	init_waitqueue_head(&kq->wq);
	kq->poller = kthread_run(tplan_kfd_poller, kq, "tplan-kfd/%u:%u-%u", q->group->id, q->src,
				 q->dst);
	if (IS_ERR(kq->poller)) {
		int ret = PTR_ERR(kq->poller);

		kfree(kq);
		return ret;
	}
	q->engine_data = kq;
	return 0;
}

/* ---- ring and pointer pages kept after their queue ----------------------- */

struct tplan_kfd_kept {
	struct list_head node;
	unsigned long until;		/* jiffies */
	u32 *ring;
	struct page *ptr_page;
};

static LIST_HEAD(tplan_kfd_kept_list);
static DEFINE_SPINLOCK(tplan_kfd_kept_lock);
static void tplan_kfd_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(tplan_kfd_reaper, tplan_kfd_reap);

static void tplan_kfd_kept_free(struct tplan_kfd_kept *k)
{
	vfree(k->ring);
	__free_page(k->ptr_page);
	kfree(k);
}

static void tplan_kfd_reap(struct work_struct *work)
{
	struct tplan_kfd_kept *k, *tmp;
	LIST_HEAD(due);
	bool more;

	spin_lock(&tplan_kfd_kept_lock);
	list_for_each_entry_safe(k, tmp, &tplan_kfd_kept_list, node)
		if (time_after_eq(jiffies, k->until))
			list_move(&k->node, &due);
	more = !list_empty(&tplan_kfd_kept_list);
	spin_unlock(&tplan_kfd_kept_lock);
	list_for_each_entry_safe(k, tmp, &due, node)
		tplan_kfd_kept_free(k);
	if (more)
		schedule_delayed_work(&tplan_kfd_reaper, HZ);
}

/*
 * Keep q's ring and pointer page for a while: the hardware queue may still
 * fetch from the ring and write rptr until KFD dequeues it.  Without
 * memory for the record, wait the time out here instead.
 */
static void tplan_kfd_keep(struct tplan_queue *q)
{
	struct tplan_kfd_kept *k = kmalloc(sizeof(*k), GFP_KERNEL | __GFP_NOWARN);

	if (!k) {
		msleep(TPLAN_KFD_QUARANTINE_MS);
		return;
	}
	pr_warn_ratelimited("group %u queue %u->%u had work left: its ring is kept %u s\n",
			    q->group->id, q->src, q->dst, TPLAN_KFD_QUARANTINE_MS / 1000);
	k->until = jiffies + msecs_to_jiffies(TPLAN_KFD_QUARANTINE_MS);
	k->ring = q->ring;
	k->ptr_page = q->ptr_page;
	q->ring = NULL;
	q->ptr_page = NULL;
	spin_lock(&tplan_kfd_kept_lock);
	list_add_tail(&k->node, &tplan_kfd_kept_list);
	spin_unlock(&tplan_kfd_kept_lock);
	schedule_delayed_work(&tplan_kfd_reaper, HZ);
}

/* Module exit: nothing can be queued any more; free what is kept. */
void tplan_kfd_engine_exit(void)
{
	struct tplan_kfd_kept *k, *tmp;

	cancel_delayed_work_sync(&tplan_kfd_reaper);
	list_for_each_entry_safe(k, tmp, &tplan_kfd_kept_list, node) {
		list_del(&k->node);
		tplan_kfd_kept_free(k);
	}
}

static void tplan_kfd_stop(struct tplan_queue *q)
{
	struct tplan_kfd_queue *kq = tplan_kfd_of(q);

	kthread_stop(kq->poller);
	if (tplan_kfd_attached(kq)) {
		/* Nothing more is published: the queue's file is going. */
		if (!tplan_queue_done_passed(q, q->done_last))
			tplan_kfd_keep(q);
		fput(kq->kfd);
	}
	q->engine_data = NULL;
	kfree(kq);
}

static void tplan_kfd_doorbell(struct tplan_queue *q, u64 wptr)
{
	struct tplan_kfd_queue *kq = tplan_kfd_of(q);

	if (!tplan_kfd_attached(kq))
		return;
	if (current->mm != kq->mm || (current->flags & PF_KTHREAD)) {
		atomic64_inc(&kq->doorbells_dropped);
		return;
	}
	/* One 64-bit store to the uncached doorbell page: the value is wptr. */
	if (put_user(wptr, kq->doorbell))
		atomic64_inc(&kq->doorbell_faults);
	wake_up(&kq->wq);
}

static int tplan_kfd_usable(struct tplan_queue *q)
{
	return tplan_kfd_attached(tplan_kfd_of(q)) ? 0 : -ENXIO;
}

static void tplan_kfd_show(struct seq_file *m, struct tplan_queue *q)
{
	struct tplan_kfd_queue *kq = tplan_kfd_of(q);

	if (!tplan_kfd_attached(kq)) {
		seq_puts(m, "kfd: not attached\n");
		return;
	}
	seq_printf(m, "kfd: gpu_id %u queue_id %u ring 0x%llx doorbell 0x%lx\n", kq->gpu_id,
		   kq->queue_id, kq->ring_addr, (unsigned long)kq->doorbell);
	seq_printf(m, "kfd: wakeups %lld doorbells_dropped %lld doorbell_faults %lld\n",
		   atomic64_read(&kq->wakeups), atomic64_read(&kq->doorbells_dropped),
		   atomic64_read(&kq->doorbell_faults));
}

const struct tplan_engine_ops tplan_kfd_engine = {
	.name = "kfd",
	.start = tplan_kfd_start,
	.stop = tplan_kfd_stop,
	.doorbell = tplan_kfd_doorbell,
	.show = tplan_kfd_show,
	.usable = tplan_kfd_usable,
};

/* ---- TPLAN_IOC_QUEUE_ATTACH_KFD ------------------------------------------ */

/* Is [addr, addr + len) exactly tf's mapping of the queue memory at offset off? */
static bool tplan_kfd_is_own_mapping(struct tplan_file *tf, u64 addr, u64 len, u64 off)
{
	struct vm_area_struct *vma = vma_lookup(current->mm, addr);

	return vma && vma->vm_file && vma->vm_file->private_data == tf &&
	       vma->vm_start == addr && vma->vm_end - vma->vm_start == len &&
	       vma->vm_pgoff == off >> PAGE_SHIFT;
}

/* Is addr a 64-bit word of kfd's doorbell mapping (I/O memory, as KFD maps it)? */
static bool tplan_kfd_is_doorbell(struct file *kfd, u64 addr)
{
	struct vm_area_struct *vma = vma_lookup(current->mm, addr);

	return vma && vma->vm_file == kfd && IS_ALIGNED(addr, sizeof(u64)) &&
	       addr + sizeof(u64) <= vma->vm_end &&
	       (vma->vm_flags & (VM_IO | VM_PFNMAP)) == (VM_IO | VM_PFNMAP);
}

int tplan_queue_attach_kfd(struct tplan_ucmd *ucmd)
{
	struct tplan_queue_attach_kfd *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tplan_file_group(tf);
	struct tplan_kfd_queue *kq;
	struct tplan_queue *q;
	struct file *kfd;
	bool ok;
	int ret;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags || cmd->peer >= g->world_size || cmd->peer == tf->rank)
		return -EINVAL;
	if (g->engine != TPLAN_ENGINE_KFD)
		return -EOPNOTSUPP;
	ret = tplan_file_owner_check(tf);
	if (ret)
		return ret;
	if (!(READ_ONCE(g->maps_set) & BIT(tf->rank)))
		return -ENXIO;
	ret = tplan_queue_get(tf, cmd->peer, &q);
	if (ret)
		return ret;
	/* GPU address = CPU address: neither may be a heap the GPU could write. */
	if (tplan_kfd_map_overlaps(g, tf->rank, cmd->ring_addr, q->ring_size) ||
	    tplan_kfd_map_overlaps(g, tf->rank, cmd->ptr_addr, PAGE_SIZE))
		return -EINVAL;
	kfd = fget(cmd->kfd_fd);
	if (!kfd)
		return -EBADF;
	if (mmap_read_lock_killable(current->mm)) {
		fput(kfd);
		return -EINTR;
	}
	ok = tplan_kfd_is_own_mapping(tf, cmd->ring_addr, q->ring_size,
				      tplan_queue_mmap_offset(cmd->peer, false)) &&
	     tplan_kfd_is_own_mapping(tf, cmd->ptr_addr, PAGE_SIZE,
				      tplan_queue_mmap_offset(cmd->peer, true)) &&
	     tplan_kfd_is_doorbell(kfd, cmd->doorbell_addr);
	mmap_read_unlock(current->mm);
	if (!ok) {
		fput(kfd);
		return -EINVAL;
	}

	mutex_lock(&q->wlock);
	kq = tplan_kfd_of(q);
	if (tplan_kfd_attached(kq))
		ret = -EALREADY;
	else if (q->wtail)
		ret = -EBUSY;
	if (ret) {
		mutex_unlock(&q->wlock);
		fput(kfd);
		return ret;
	}
	kq->kfd = kfd;
	kq->mm = current->mm;
	kq->doorbell = u64_to_user_ptr(cmd->doorbell_addr);
	kq->ring_addr = cmd->ring_addr;
	kq->gpu_id = cmd->gpu_id;
	kq->queue_id = cmd->queue_id;
	/* The engine reads the pointer page at the address the queue was created with. */
	q->ptr_dev = cmd->ptr_addr;
	/* Release: all of the above before attached (tplan_kfd_attached()'s acquire). */
	smp_store_release(&kq->attached, true);
	mutex_unlock(&q->wlock);
	return 0;
}
