// SPDX-License-Identifier: GPL-2.0
/*
 * SDMA user queues: CREATE_QUEUE and DESTROY_QUEUE with KFD's checks, and
 * the engine that executes them, one kernel thread per queue.
 *
 * The engine is what an SDMA engine gives its queue, as far as software
 * can: it reads the ring through the process's GPU VM in the process's
 * address space (kthread_use_mm()), learns wptr from its doorbell only
 * (and from the wptr in memory once, when the queue is made, as the HWS
 * does when it maps a queue), writes rptr back after each packet, and
 * executes each packet with kmod/sdma_exec.c.  A packet's address that no
 * mapping of the GPU VM covers is a VM fault: every queue of the process
 * stops, as KFD evicts a process whose queue faulted; a packet that
 * cannot be decoded stops its queue.  Idle, a queue looks at its doorbell
 * with a back-off up to doorbell_poll_us (a write to the doorbell page
 * cannot be trapped).  While a POLL waits, the thread holds neither the
 * process's address space nor its VM: the process can exit, unmap and
 * free meanwhile.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mm.h>
#include <linux/log2.h>

#include "standin.h"
#include "tplan.h"

#define STANDIN_FETCH_DW	16	/* longer than any packet but a NOP */
#define STANDIN_BURST		256	/* packets before letting go of the mm once */
#define STANDIN_IDLE_MIN_US	20

/* ---- The GPU VM, from the queue's thread ----------------------------------- */

static bool standin_enter(struct standin_queue *q)
{
	if (!q->in_mm) {
		if (!mmget_not_zero(q->proc->mm))
			return false;
		kthread_use_mm(q->proc->mm);
		q->in_mm = true;
	}
	if (!q->vm_locked) {
		down_read(&q->pdd->vm_lock);
		q->vm_locked = true;
	}
	return true;
}

static void standin_leave(struct standin_queue *q)
{
	if (q->vm_locked) {
		up_read(&q->pdd->vm_lock);
		q->vm_locked = false;
	}
	if (q->in_mm) {
		kthread_unuse_mm(q->proc->mm);
		/* Not mmput(): the last one would tear the address space down here. */
		mmput_async(q->proc->mm);
		q->in_mm = false;
	}
}

/* Read len bytes at GPU address va: 0, or -EFAULT (a VM fault). */
static int standin_vm_read(struct standin_queue *q, u64 va, void *buf, u32 len)
{
	struct standin_mapping *m = standin_vm_find(q->pdd, va, len);
	u64 off;

	if (!m)
		return -EFAULT;
	off = va - m->start;
	if (m->bo->kind == STANDIN_BO_USERPTR)
		return copy_from_user(buf, u64_to_user_ptr(m->bo->user_addr + off), len) ?
		       -EFAULT : 0;
	memcpy(buf, m->bo->vram->vaddr + off, len);
	return 0;
}

/* Write a 64-bit word at GPU address va in one store (rptr): 0 or -EFAULT. */
static int standin_vm_write64(struct standin_queue *q, u64 va, u64 v)
{
	struct standin_mapping *m = standin_vm_find(q->pdd, va, 8);
	u64 off;

	if (!m || !IS_ALIGNED(va, 8))
		return -EFAULT;
	off = va - m->start;
	if (m->bo->kind == STANDIN_BO_USERPTR)
		return put_user(v, (u64 __user *)u64_to_user_ptr(m->bo->user_addr + off));
	/* Release: the ring below it is read. */
	smp_store_release((u64 *)(m->bo->vram->vaddr + off), v);
	return 0;
}

/* ---- The executor's memory ---------------------------------------------- */

static struct standin_queue *standin_q(struct tplan_sdma_exec *x)
{
	return container_of(x, struct standin_queue, x);
}

/* Kernel memory only: the engine copies between VRAM buffers. */
static void *standin_translate(struct tplan_sdma_exec *x, u64 addr, u64 len)
{
	struct standin_queue *q = standin_q(x);
	struct standin_mapping *m = standin_vm_find(q->pdd, addr, len ? len : 1);

	if (!m || m->bo->kind == STANDIN_BO_USERPTR)
		return NULL;
	return m->bo->vram->vaddr + (addr - m->start);
}

static int standin_fence(struct tplan_sdma_exec *x, u64 addr, u32 data)
{
	struct standin_queue *q = standin_q(x);
	struct standin_mapping *m;
	u32 *p;

	if (!IS_ALIGNED(addr, 4))
		goto fault;
	m = standin_vm_find(q->pdd, addr, 4);
	if (!m)
		goto fault;
	if (m->bo->kind == STANDIN_BO_USERPTR) {
		if (put_user(data, (u32 __user *)u64_to_user_ptr(m->bo->user_addr +
								 (addr - m->start))))
			goto fault;
		return TPLAN_EXEC_DONE;
	}
	p = m->bo->vram->vaddr + (addr - m->start);
	/* Release: the packets before the fence are done for its reader. */
	smp_store_release(p, data);
	return TPLAN_EXEC_DONE;
fault:
	x->fault = TPLAN_FAULT_BAD_ADDRESS;
	return TPLAN_EXEC_FAULT;
}

static void standin_take_doorbell(struct standin_queue *q)
{
	/* Acquire: the packets were written before the doorbell. */
	u64 v = smp_load_acquire(q->doorbell);

	if (v == q->doorbell_seen)
		return;
	q->doorbell_seen = v;
	q->doorbells++;
	/* A value within one ring ahead of what was read; anything else is lost. */
	if (v - q->rptr <= q->ring_size)
		q->wptr = v;
}

/*
 * A POLL waits: let go of the address space and the VM, look at the
 * doorbell, sleep; then take them again (the process may be gone).
 */
static int standin_poll_pause(struct tplan_sdma_exec *x, u64 sleep_ns)
{
	struct standin_queue *q = standin_q(x);

	standin_leave(q);
	standin_take_doorbell(q);
	tplan_sdma_exec_sleep(sleep_ns);
	if (kthread_should_stop() || READ_ONCE(q->proc->vm_fault))
		return TPLAN_EXEC_STOP;
	if (!standin_enter(q)) {
		q->halted = true;
		return TPLAN_EXEC_STOP;
	}
	return TPLAN_EXEC_DONE;
}

static const struct tplan_sdma_exec_ops standin_exec_ops = {
	.translate = standin_translate,
	.fence = standin_fence,
	.poll_pause = standin_poll_pause,
};

/* ---- The engine ---------------------------------------------------------- */

static void standin_vm_fault(struct standin_queue *q, u64 at, u32 reason)
{
	WRITE_ONCE(q->proc->vm_fault, true);
	pr_info_ratelimited("process %d: SDMA queue %u stopped at ring position %llu (reason %u); the process's queues are stopped, as KFD evicts them on a VM fault\n",
			    q->proc->pid, q->id, at, reason);
}

/*
 * Fetch the packet at rptr: its length in dwords (0: not all of it is
 * there yet), or -EFAULT (VM fault), or a fault reason negated minus 1000.
 */
static int standin_fetch(struct standin_queue *q, struct tplan_sdma_packet *p)
{
	u32 dw[STANDIN_FETCH_DW];
	u64 off = q->rptr & (q->ring_size - 1);
	u32 to_end = (q->ring_size - off) / 4;
	u32 avail = min_t(u64, (q->wptr - q->rptr) / 4, to_end);
	u32 n = min_t(u32, avail, STANDIN_FETCH_DW);
	int len;

	if (!avail)
		return 0;
	if (standin_vm_read(q, q->ring + off, dw, n * 4))
		return -EFAULT;
	if (tplan_sdma_kind(dw[0]) == TPLAN_SDMA_KIND_NOP) {
		/* Its body is don't-care: never read; its length is in the header. */
		len = tplan_sdma_header_dwords(dw[0]);
		if ((u32)len > avail)
			return (u32)len > to_end ? -1000 - TPLAN_FAULT_RING_END : 0;
		p->kind = TPLAN_SDMA_KIND_NOP;
		p->dwords = len;
		p->u.nop.dwords = len;
		return len;
	}
	len = tplan_sdma_decode(dw, n, p);
	if (len == -ENODATA) {
		len = tplan_sdma_packet_dwords(dw, n);
		if (len == -ENODATA && n == avail && avail < to_end)
			return 0;	/* the rest is not published yet */
		return -1000 - (len == -ENODATA ? TPLAN_FAULT_RING_END : TPLAN_FAULT_BAD_PACKET);
	}
	if (len == -EOPNOTSUPP)
		return -1000 - TPLAN_FAULT_UNSUPPORTED;
	if (len <= 0)
		return -1000 - TPLAN_FAULT_BAD_PACKET;
	return len;
}

/* Run what the doorbell published, holding the address space and the VM. */
static void standin_burst(struct standin_queue *q)
{
	struct tplan_sdma_packet p;
	u32 done = 0;
	int len, ret;

	while (q->rptr != q->wptr && !kthread_should_stop() && !q->halted &&
	       !READ_ONCE(q->proc->vm_fault) && done++ < STANDIN_BURST) {
		if (!standin_enter(q)) {
			q->halted = true;	/* the address space is gone */
			break;
		}
		len = standin_fetch(q, &p);
		if (len == 0)
			break;		/* the rest of the packet is not published yet */
		if (len == -EFAULT) {
			standin_vm_fault(q, q->rptr, TPLAN_FAULT_BAD_ADDRESS);
			break;
		}
		if (len < 0) {
			q->halted = true;
			pr_info_ratelimited("process %d: SDMA queue %u halted at ring position %llu: packet refused (reason %d)\n",
					    q->proc->pid, q->id, q->rptr, -len - 1000);
			break;
		}
		ret = tplan_sdma_exec(&q->x, &p, q->rptr);
		if (ret == TPLAN_EXEC_STOP || ret == TPLAN_EXEC_AGAIN)
			break;
		if (ret == TPLAN_EXEC_FAULT) {
			if (q->x.fault == TPLAN_FAULT_BAD_ADDRESS)
				standin_vm_fault(q, q->rptr, q->x.fault);
			else
				q->halted = true;
			break;
		}
		q->rptr += len * 4ULL;
		q->packets++;
		/* rptr written back: what the engine consumed. */
		if (standin_vm_write64(q, q->rptr_va, q->rptr)) {
			standin_vm_fault(q, q->rptr, TPLAN_FAULT_BAD_ADDRESS);
			break;
		}
		standin_take_doorbell(q);
	}
}

static int standin_queue_thread(void *data)
{
	struct standin_queue *q = data;
	u64 idle_us = STANDIN_IDLE_MIN_US, seen;

	while (!kthread_should_stop()) {
		if (q->halted || READ_ONCE(q->proc->vm_fault) || !q->percent) {
			standin_leave(q);
			wait_event_idle_timeout(q->wq, kthread_should_stop(), HZ);
			continue;
		}
		standin_take_doorbell(q);
		seen = q->packets;
		if (q->rptr != q->wptr)
			standin_burst(q);
		standin_leave(q);
		if (q->packets != seen) {
			idle_us = STANDIN_IDLE_MIN_US;
			cond_resched();
			continue;
		}
		/* Nothing to run: look at the doorbell again later. */
		q->idle_polls++;
		tplan_sdma_exec_sleep(idle_us * NSEC_PER_USEC);
		idle_us = min_t(u64, idle_us * 2, max(READ_ONCE(standin_doorbell_poll_us), 1U));
	}
	standin_leave(q);
	return 0;
}

/* ---- CREATE_QUEUE, DESTROY_QUEUE ----------------------------------------- */

#if STANDIN_QUEUE_BUFFER_CHECKS
/* kfd_queue_buffer_get(): one mapping starting at addr's page, exactly size long. */
static int standin_buffer_get(struct standin_pdd *pdd, u64 addr, u64 size,
			      struct standin_mapping **held)
{
	struct standin_mapping *m;
	u64 start = addr & PAGE_MASK;

	down_read(&pdd->vm_lock);
	m = standin_vm_find(pdd, start, 1);
	if (!m || m->start != start || (size && m->end - m->start != size)) {
		up_read(&pdd->vm_lock);
		return -EINVAL;
	}
	m->queue_refcount++;
	*held = m;
	up_read(&pdd->vm_lock);
	return 0;
}
#endif

static void standin_buffers_put(struct standin_queue *q)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(q->held); i++) {
		if (q->held[i])
			q->held[i]->queue_refcount--;
		q->held[i] = NULL;
	}
}

/* An RLC slot on an engine of the type, as KFD's bitmaps: 0 or -ENOMEM. */
static int standin_slot_get(struct standin_gpu *g, struct standin_queue *q, u32 type,
			    u32 engine_id)
{
	u32 first, n, b, e, rlc;
	int ret = -ENOMEM;

	if (type == KFD_IOC_QUEUE_TYPE_SDMA) {
		first = 0;
		n = g->num_pcie;
	} else if (type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI) {
		first = g->num_pcie;
		n = g->num_xgmi;
	} else {
		first = engine_id;
		n = 1;
	}
	mutex_lock(&g->slots_lock);
	for (b = 0; n && b < n * STANDIN_RLC_PER_ENGINE; b++) {
		e = first + b % n;
		rlc = b / n;
		if (!test_bit(e * STANDIN_RLC_PER_ENGINE + rlc, g->slots)) {
			__set_bit(e * STANDIN_RLC_PER_ENGINE + rlc, g->slots);
			q->engine = e;
			q->rlc = rlc;
			q->slot = e * STANDIN_RLC_PER_ENGINE + rlc;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&g->slots_lock);
	return ret;
}

static void standin_slot_put(struct standin_gpu *g, struct standin_queue *q)
{
	mutex_lock(&g->slots_lock);
	__clear_bit(q->slot, g->slots);
	mutex_unlock(&g->slots_lock);
}

/* The queue's wptr in memory, as the HWS reads it when it maps the queue. */
static u64 standin_initial_wptr(struct standin_queue *q)
{
	struct standin_mapping *m;
	u64 v = 0;

	down_read(&q->pdd->vm_lock);
	m = standin_vm_find(q->pdd, q->wptr_va, 8);
	if (m && m->bo->kind == STANDIN_BO_USERPTR) {
		if (get_user(v, (u64 __user *)u64_to_user_ptr(m->bo->user_addr +
							      (q->wptr_va - m->start))))
			v = 0;
	} else if (m) {
		v = READ_ONCE(*(u64 *)(m->bo->vram->vaddr + (q->wptr_va - m->start)));
	}
	up_read(&q->pdd->vm_lock);
	return v <= q->ring_size ? v : 0;
}

static void standin_queue_free(struct standin_queue *q)
{
	if (q->thread)
		kthread_stop(q->thread);
	standin_slot_put(q->pdd->gpu, q);
	standin_buffers_put(q);
	clear_bit(q->id, q->proc->queue_ids);
	kfree(q);
}

int standin_create_queue(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_create_queue_args *args = data;
	struct standin_queue *q;
	struct standin_pdd *pdd;
	struct standin_gpu *g;
	u32 type = args->queue_type, percent, id, engine_id = 0;
	struct task_struct *t;
	int ret;

	/* set_queue_properties_from_user() */
#if KFD_IOCTL_MINOR_VERSION >= 17
	percent = args->queue_percentage & 0xff;	/* bits 15:8 are pm4_target_xcc */
#else
	percent = args->queue_percentage;
#endif
	if (percent > KFD_MAX_QUEUE_PERCENTAGE || args->queue_priority > KFD_MAX_QUEUE_PRIORITY)
		return -EINVAL;
	if (args->ring_base_address &&
	    !access_ok(u64_to_user_ptr(args->ring_base_address), sizeof(u64)))
		return -EFAULT;
	if (!is_power_of_2(args->ring_size) && args->ring_size)
		return -EINVAL;
	if (args->ring_size < KFD_MIN_QUEUE_RING_SIZE)
		args->ring_size = KFD_MIN_QUEUE_RING_SIZE;
	if (!access_ok(u64_to_user_ptr(args->read_pointer_address), sizeof(u32)) ||
	    !access_ok(u64_to_user_ptr(args->write_pointer_address), sizeof(u32)))
		return -EFAULT;
	switch (type) {
	case KFD_IOC_QUEUE_TYPE_SDMA:
	case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
#ifdef KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
	case KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID:
#endif
		break;
	case KFD_IOC_QUEUE_TYPE_COMPUTE:
	case KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
		return -EOPNOTSUPP;	/* not emulated */
	default:
		return -ENOTSUPP;	/* what KFD answers */
	}

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	mutex_lock(&p->lock);
	pdd = standin_pdd_by_id(p, args->gpu_id);
	if (!pdd) {
		ret = -EINVAL;
		goto err_unlock;
	}
	g = pdd->gpu;
	if (!pdd->drm_file) {
		ret = -ESRCH;		/* no VM acquired: kfd_bind_process_to_device() */
		goto err_unlock;
	}
#ifdef KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
	engine_id = args->sdma_engine_id;
	if (type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID && engine_id > g->num_pcie + g->num_xgmi - 1) {
		ret = -EINVAL;
		goto err_unlock;
	}
#endif
	ret = standin_doorbells_get(pdd);
	if (ret)
		goto err_unlock;
	q->proc = p;
	q->pdd = pdd;
	q->type = type;
	q->percent = percent;
	q->ring = args->ring_base_address;
	q->ring_size = args->ring_size;
	q->rptr_va = args->read_pointer_address;
	q->wptr_va = args->write_pointer_address;
#if STANDIN_QUEUE_BUFFER_CHECKS
	/* kfd_queue_acquire_buffers(): wptr, rptr, ring */
	ret = standin_buffer_get(pdd, q->wptr_va, PAGE_SIZE, &q->held[0]);
	if (!ret)
		ret = standin_buffer_get(pdd, q->rptr_va, PAGE_SIZE, &q->held[1]);
	if (!ret)
		ret = standin_buffer_get(pdd, q->ring, q->ring_size, &q->held[2]);
	if (ret)
		goto err_buffers;
#endif
	ret = standin_slot_get(g, q, type, engine_id);
	if (ret)
		goto err_buffers;
	id = find_first_zero_bit(p->queue_ids, STANDIN_QUEUES_PER_PROC);
	if (id == STANDIN_QUEUES_PER_PROC) {
		ret = -ENOMEM;
		goto err_slot;
	}
	__set_bit(id, p->queue_ids);
	q->id = id;
	/* The SDMA doorbell of (engine, RLC queue), in 64-bit doorbells. */
	q->doorbell_off = (g->doorbell_base[q->engine] + (q->rlc & 1) * 512 + (q->rlc >> 1)) * 8;
	q->doorbell = page_address(pdd->doorbells) + q->doorbell_off;
	init_waitqueue_head(&q->wq);
	q->x.ops = &standin_exec_ops;
	q->x.max_copy_bytes = g->max_copy_bytes;
	q->wptr = standin_initial_wptr(q);
	/*
	 * A hardware doorbell is a write: the same value written again still
	 * rings.  This one is seen only when its value changes, so the slot
	 * starts at this queue's wptr, not at what the slot's last queue left
	 * there: a first doorbell of that same value would be lost.
	 */
	WRITE_ONCE(*q->doorbell, q->wptr);
	q->doorbell_seen = q->wptr;
	t = kthread_create(standin_queue_thread, q, "kfdsi-%d-q%u", p->pid, id);
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		__clear_bit(id, p->queue_ids);
		goto err_slot;
	}
	q->thread = t;
	list_add(&q->node, &p->queues);
	wake_up_process(t);
	mutex_unlock(&p->lock);

	args->queue_id = id;
	args->doorbell_offset = 3ULL << 62 | (u64)g->gpu_id << 46 | q->doorbell_off;
	return 0;

err_slot:
	standin_slot_put(g, q);
err_buffers:
	standin_buffers_put(q);
err_unlock:
	mutex_unlock(&p->lock);
	kfree(q);
	return ret;
}

int standin_destroy_queue(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_destroy_queue_args *args = data;
	struct standin_queue *q, *found = NULL;

	mutex_lock(&p->lock);
	list_for_each_entry(q, &p->queues, node)
		if (q->id == args->queue_id) {
			found = q;
			list_del(&q->node);
			standin_queue_free(q);
			break;
		}
	mutex_unlock(&p->lock);
	return found ? 0 : -EINVAL;
}

void standin_queues_release(struct standin_proc *p)
{
	struct standin_queue *q, *tmp;

	mutex_lock(&p->lock);
	list_for_each_entry_safe(q, tmp, &p->queues, node) {
		list_del(&q->node);
		standin_queue_free(q);
	}
	mutex_unlock(&p->lock);
}
