/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfd_standin.ko: a stand-in for KFD (amdkfd's /dev/kfd) in the test VM,
 * which has no AMD GPU.  Test only: main.c says what it emulates and what
 * it cannot.
 *
 * Objects, as KFD has them:
 *   process   one per address space (mm) that opened /dev/kfd; every open
 *             file of it holds a reference; torn down with the last one
 *   pdd       the process on one GPU: its GPU VM (mappings of buffers at
 *             GPU virtual addresses), buffer handles, doorbell slice
 *   bo        a buffer: user pages (USERPTR), "VRAM" (kernel memory),
 *             or another's VRAM imported from a dma-buf
 *   queue     an SDMA user queue, executed by a kernel thread in the
 *             process's address space
 *
 * Locking: standin_procs_lock (the process list) > proc->lock (a
 * process's ioctls, as KFD's p->mutex) > pdd->vm_lock (rw: its GPU VM;
 * a queue thread reads it while a packet runs).
 */
#ifndef _KFD_STANDIN_H
#define _KFD_STANDIN_H

#include <linux/types.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/idr.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/fs.h>
#include <linux/kfd_ioctl.h>

#include "sdma_exec.h"

#define STANDIN_MAX_GPUS	8
#define STANDIN_MAX_ENGINES	16	/* SDMA engines of one GPU */
#define STANDIN_RLC_PER_ENGINE	8	/* user queues per engine (4.4.x) */
#define STANDIN_QUEUES_PER_PROC	1024
#define STANDIN_DOORBELL_SLICE	8192	/* 1024 doorbells of 8 bytes */

/* KFD 1.17 (Linux 6.12) checks queue buffers and pins them in the VM. */
#if KFD_IOCTL_MINOR_VERSION >= 17
#define STANDIN_QUEUE_BUFFER_CHECKS 1
#else
#define STANDIN_QUEUE_BUFFER_CHECKS 0
#endif

/* One GPU node of the topology. */
struct standin_gpu {
	u32 index;			/* 0..gpus-1; topology node index + 1 */
	u32 gpu_id;			/* KFD's id: a 16-bit hash, never 0 */
	u32 gfx_target_version;		/* 90010 gfx90a (MI200), 90402 gfx942 (MI300X) */
	u32 num_pcie;			/* SDMA engines KFD calls PCIe */
	u32 num_xgmi;			/* and XGMI, whose ids follow */
	u32 doorbell_base[STANDIN_MAX_ENGINES];	/* engine's first doorbell index */
	u64 max_copy_bytes;		/* COPY_LINEAR: 30-bit count on 4.4.0, 22 on 4.4.2 */
	atomic64_t vram_used;
	struct mutex slots_lock;	/* RLC slots, device-wide as KFD's bitmap */
	DECLARE_BITMAP(slots, STANDIN_MAX_ENGINES * STANDIN_RLC_PER_ENGINE);
};

extern struct standin_gpu standin_gpus[STANDIN_MAX_GPUS];
extern u32 standin_ngpus;
extern u64 standin_vram_limit;		/* bytes per GPU */
extern u32 standin_doorbell_poll_us;

/* "VRAM": kernel memory any number of buffers and dma-bufs share. */
struct standin_vram {
	struct kref kref;
	void *vaddr;			/* vmalloc_user(), zeroed */
	u64 size;
	struct standin_gpu *gpu;	/* charged to */
};

enum standin_bo_kind {
	STANDIN_BO_USERPTR,
	STANDIN_BO_VRAM,		/* VRAM or GTT: memory of the "GPU" */
	STANDIN_BO_IMPORT,		/* a dma-buf of the stand-in's */
};

struct standin_mapping;

struct standin_bo {
	u32 kind;
	u32 flags;			/* KFD_IOC_ALLOC_MEM_FLAGS_* */
	u64 va, size;			/* where GPU VMs map it */
	u64 user_addr;			/* USERPTR: the CPU address */
	struct standin_vram *vram;	/* VRAM, IMPORT: a reference */
	struct dma_buf *dmabuf;		/* exported once (VRAM) or imported: a reference */
	struct standin_mapping *map[STANDIN_MAX_GPUS];	/* in each GPU's VM, or NULL */
};

/* A buffer mapped into one GPU VM, [start, end). */
struct standin_mapping {
	struct list_head node;		/* pdd->vm */
	u64 start, end;
	struct standin_bo *bo;
	u32 queue_refcount;		/* KFD 1.17: queues using it as ring or pointer */
};

struct standin_pdd {
	struct standin_gpu *gpu;
	struct file *drm_file;		/* ACQUIRE_VM's render node, held */
	struct idr handles;		/* buffer handles (under proc->lock) */
	struct rw_semaphore vm_lock;
	struct list_head vm;		/* struct standin_mapping */
	struct page *doorbells;		/* the process's slice: 2 pages */
};

struct standin_proc {
	struct kref kref;
	struct list_head node;		/* standin_procs */
	struct mm_struct *mm;		/* mmgrab()ed */
	struct task_struct *lead;	/* the group leader that opened it */
	pid_t pid;
	struct mutex lock;
	struct standin_pdd pdd[STANDIN_MAX_GPUS];
	DECLARE_BITMAP(queue_ids, STANDIN_QUEUES_PER_PROC);
	struct list_head queues;
	bool vm_fault;			/* a queue faulted: all are stopped, as KFD evicts */
	struct work_struct release;
};

struct standin_queue {
	struct list_head node;		/* proc->queues */
	struct standin_proc *proc;
	struct standin_pdd *pdd;
	u32 id, type, engine, rlc, slot;
	u32 percent;
	u64 ring, ring_size, rptr_va, wptr_va;
	u32 doorbell_off;		/* byte offset in the slice */
	u64 *doorbell;			/* that slot, in the kernel's mapping */
	struct standin_mapping *held[3];	/* KFD 1.17: wptr, rptr, ring */
	struct task_struct *thread;
	wait_queue_head_t wq;
	struct tplan_sdma_exec x;

	/* The thread's. */
	u64 rptr, wptr, doorbell_seen;
	bool in_mm, vm_locked;
	bool halted;
	u64 packets, doorbells, idle_polls;
};

/* main.c */
struct standin_proc *standin_proc_of_current(void);	/* referenced, or NULL */
void standin_proc_put(struct standin_proc *p);
struct standin_gpu *standin_gpu_by_id(u32 gpu_id);
struct standin_pdd *standin_pdd_by_id(struct standin_proc *p, u32 gpu_id);

/* topology.c */
int standin_topology_init(struct device *kfd_dev);
void standin_topology_exit(void);

/* mem.c */
int standin_mem_init(void);
void standin_mem_exit(void);
int standin_acquire_vm(struct standin_proc *p, void *data);
int standin_alloc_memory(struct standin_proc *p, void *data);
int standin_free_memory(struct standin_proc *p, void *data);
int standin_map_memory(struct standin_proc *p, void *data);
int standin_unmap_memory(struct standin_proc *p, void *data);
int standin_import_dmabuf(struct standin_proc *p, void *data);
int standin_export_dmabuf(struct standin_proc *p, void *data);
void standin_pdd_release_vm(struct standin_pdd *pdd);
void standin_pdd_release(struct standin_pdd *pdd);
int standin_doorbells_get(struct standin_pdd *pdd);
struct standin_mapping *standin_vm_find(struct standin_pdd *pdd, u64 addr, u64 len);
int standin_doorbell_mmap(struct standin_proc *p, struct standin_gpu *gpu,
			  struct vm_area_struct *vma);

/* queue.c */
int standin_create_queue(struct standin_proc *p, void *data);
int standin_destroy_queue(struct standin_proc *p, void *data);
void standin_queues_release(struct standin_proc *p);

#endif /* _KFD_STANDIN_H */
