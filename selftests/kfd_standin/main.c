// SPDX-License-Identifier: GPL-2.0
/*
 * kfd_standin.ko: a stand-in for KFD (amdkfd's /dev/kfd) for the test VM,
 * which has no AMD GPU, so that tplan's KFD engine and libtplan's KFD glue
 * run end to end in `make check`.  Test only: never load it next to
 * amdgpu (it takes KFD's names: /dev/kfd, /sys/class/kfd, /dev/dri/
 * renderD128 and up).
 *
 * What it provides is the subset of the KFD ABI tplan uses, with the real
 * structs and ioctl numbers of the kernel it is built against
 * (linux/kfd_ioctl.h), and that kernel's rules:
 *  - GET_VERSION: that header's KFD version (1.11 on 6.1, 1.17 on 6.12);
 *  - the topology in sysfs where KFD has it (topology.c): a CPU node and
 *    `gpus` GPU nodes of one kind (`gfx`: 90010, MI200; 90402, MI300X,
 *    6.12 only), their SDMA engine counts and render minors, XGMI links
 *    with recommended_sdma_engine_id_mask on 1.17;
 *  - ACQUIRE_VM with the GPU's render node (/dev/dri/renderD*, mem.c),
 *    which also offers amdgpu's GEM_CREATE (VRAM) and PRIME_HANDLE_TO_FD,
 *    the way to a dma-buf before KFD 1.12;
 *  - ALLOC_MEMORY_OF_GPU of USERPTR (its pages got with hmm_range_fault()
 *    as amdgpu does: mapped, no VM_IO/VM_PFNMAP, writable) and VRAM/GTT, MAP and
 *    UNMAP_MEMORY_TO/FROM_GPU, FREE (EBUSY while mapped), IMPORT_DMABUF,
 *    and EXPORT_DMABUF on 1.12 and later;
 *  - CREATE_QUEUE of SDMA, SDMA_XGMI and (1.17) SDMA_BY_ENG_ID queues
 *    with KFD's argument checks, on 1.17 also kfd_queue_acquire_buffers'
 *    (ring, rptr and wptr each exactly one GPU VM mapping of the right
 *    size, pinned: UNMAP of them is EBUSY until DESTROY_QUEUE); RLC slots
 *    per engine as KFD allocates them; the doorbell offset KFD returns;
 *  - the doorbell mmap: the process's 8 KiB slice, VM_IO | VM_PFNMAP,
 *    whole or not at all, only for the process that owns it;
 *  - the caller checks: a file is usable only by the process that opened
 *    it (EBADF elsewhere), a process is its address space.
 * Its "SDMA engine" (queue.c) runs each queue in a kernel thread, in the
 * process's address space (kthread_use_mm(), as SDMA runs in the
 * process's VMID): it learns wptr from the doorbell only (and from
 * memory once, when the queue is created, as the HWS does when it maps a
 * queue), reads the ring through the GPU VM, writes rptr back, and
 * executes packets with tplan's software interpreter (kmod/sdma_exec.c)
 * on the GPU VM: USERPTR buffers through the process's memory, VRAM and
 * imported dma-bufs through the kernel's.  An address no mapping covers
 * is a VM fault: the process's queues stop, as KFD evicts them.
 *
 * What it cannot emulate, and so what only a test node settles
 * (docs/test-node.md):
 *  - timing: bandwidth, latency, the rptr write-back timer (rptr is
 *    written after every packet here), how fast a doorbell is seen (an
 *    idle queue polls its doorbell every doorbell_poll_us at most; the
 *    hardware gets an MMIO write);
 *  - caches and coherence: "VRAM" is host memory seen coherently by
 *    every CPU; no GPU L2, no HDP flush, no write-combining BAR, no
 *    ordering between SDMA writes and a kernel's L2;
 *  - XGMI and PCIe: no links, no peer-to-peer; ATOMIC is a host atomic;
 *  - firmware and the HWS: no MQDs, no scheduling of queues on engines
 *    (every queue has its own thread: a POLL-blocked queue never stalls
 *    another), no preemption, eviction or restore, no context switch,
 *    no burst-NOP firmware check, no per-engine copy-count quirks beyond
 *    the 30/22-bit limit of the chosen IP;
 *  - the GPU VM's page tables: USERPTR pages are read through the
 *    process's mm, so once the address space is torn down the engine
 *    sees nothing (hardware may still reach pages a dying process's
 *    queue mapped, until KFD dequeues it: kfd-queues.md section 2.2);
 *  - everything else KFD does: compute queues, events and TRAP
 *    interrupts, CWSR, SVM, GWS, debugger, CRIU, the render node's CPU
 *    mapping of VRAM (map a dma-buf instead), GET_PROCESS_APERTURES.
 *    Such ioctls answer EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include <linux/compat.h>

#include "standin.h"
#include "compat.h"

static unsigned int gpus = 2;
module_param(gpus, uint, 0444);
MODULE_PARM_DESC(gpus, "GPU nodes: 1..8 (default 2)");

static unsigned int gfx;
module_param(gfx, uint, 0444);
MODULE_PARM_DESC(gfx, "gfx_target_version of every GPU: 90010 (MI200, gfx90a) or, with KFD 1.17, 90402 (MI300X, gfx942); 0: 90010 on KFD 1.11, 90402 on 1.17");

static unsigned int vram_mb = 1024;
module_param(vram_mb, uint, 0444);
MODULE_PARM_DESC(vram_mb, "\"VRAM\" of each GPU, MiB (kernel memory; default 1024)");

unsigned int standin_doorbell_poll_us = 2000;
module_param_named(doorbell_poll_us, standin_doorbell_poll_us, uint, 0644);
MODULE_PARM_DESC(doorbell_poll_us, "Longest an idle queue goes without looking at its doorbell, us (default 2000)");

struct standin_gpu standin_gpus[STANDIN_MAX_GPUS];
u32 standin_ngpus;
u64 standin_vram_limit;

static LIST_HEAD(standin_procs);
static DEFINE_MUTEX(standin_procs_lock);
static int standin_major;
static struct device *standin_kfd_dev;

static char *standin_devnode(standin_devnode_device *dev, umode_t *mode)
{
	/* As KFD's: anyone may open /dev/kfd. */
	if (mode)
		*mode = 0666;
	return NULL;
}

static struct class *standin_class;

/* ---- GPUs ------------------------------------------------------------- */

/* SDMA doorbell bases (64-bit doorbell indices): Vega20's layout for MI200, LAYOUT1 for MI300. */
static const u32 standin_mi200_doorbells[] = { 0x100, 0x10A, 0x114, 0x11E, 0x128 };

static int standin_gpus_init(void)
{
	u32 i, e;

	if (!gfx)
		gfx = KFD_IOCTL_MINOR_VERSION >= 17 ? 90402 : 90010;
	if (gfx != 90010 && !(gfx == 90402 && KFD_IOCTL_MINOR_VERSION >= 17)) {
		pr_err("gfx=%u: 90010, or 90402 with KFD 1.17 (6.12)\n", gfx);
		return -EINVAL;
	}
	if (!gpus || gpus > STANDIN_MAX_GPUS) {
		pr_err("gpus=%u: 1..%u\n", gpus, STANDIN_MAX_GPUS);
		return -EINVAL;
	}
	standin_ngpus = gpus;
	standin_vram_limit = (u64)vram_mb << 20;
	for (i = 0; i < gpus; i++) {
		struct standin_gpu *g = &standin_gpus[i];

		g->index = i;
		g->gpu_id = 0x4000 + 0x1111 * i;
		g->gfx_target_version = gfx;
		g->num_pcie = 2;
		if (gfx == 90010) {
			/* MI200 GCD: 5 SDMA, 2 "PCIe" + 3 "XGMI"; 30-bit copy count */
			g->num_xgmi = 3;
			for (e = 0; e < 5; e++)
				g->doorbell_base[e] = standin_mi200_doorbells[e];
			g->max_copy_bytes = 1ULL << 30;
		} else {
			/* MI300X in SPX: 16 SDMA, 2 + 14; bases 32-byte aligned; 22-bit count */
			g->num_xgmi = 14;
			for (e = 0; e < 16; e++)
				g->doorbell_base[e] = round_up(0x100 + 10 * e, 4);
			g->max_copy_bytes = 1ULL << 22;
		}
		atomic64_set(&g->vram_used, 0);
		mutex_init(&g->slots_lock);
	}
	return 0;
}

struct standin_gpu *standin_gpu_by_id(u32 gpu_id)
{
	u32 i;

	for (i = 0; i < standin_ngpus; i++)
		if (gpu_id && standin_gpus[i].gpu_id == gpu_id)
			return &standin_gpus[i];
	return NULL;
}

struct standin_pdd *standin_pdd_by_id(struct standin_proc *p, u32 gpu_id)
{
	struct standin_gpu *g = standin_gpu_by_id(gpu_id);

	return g ? &p->pdd[g->index] : NULL;
}

/* ---- Processes -------------------------------------------------------- */

static struct workqueue_struct *standin_wq;

/*
 * As KFD's kfd_process_wq_release(), in a worker: the last reference may
 * go from anywhere (a doorbell VMA's close under mmap_lock, which a queue
 * thread may wait for).
 */
static void standin_proc_teardown(struct work_struct *work)
{
	struct standin_proc *p = container_of(work, struct standin_proc, release);
	u32 i;

	/* Queues first: their threads read the VMs. */
	standin_queues_release(p);
	for (i = 0; i < standin_ngpus; i++)
		standin_pdd_release_vm(&p->pdd[i]);
	for (i = 0; i < standin_ngpus; i++)
		standin_pdd_release(&p->pdd[i]);
	mmdrop(p->mm);
	put_task_struct(p->lead);
	mutex_destroy(&p->lock);
	kfree(p);
}

/* Called by kref_put_mutex() with standin_procs_lock held; unlocks it. */
static void standin_proc_release(struct kref *kref)
{
	struct standin_proc *p = container_of(kref, struct standin_proc, kref);

	list_del(&p->node);
	mutex_unlock(&standin_procs_lock);
	INIT_WORK(&p->release, standin_proc_teardown);
	queue_work(standin_wq, &p->release);
}

void standin_proc_put(struct standin_proc *p)
{
	kref_put_mutex(&p->kref, standin_proc_release, &standin_procs_lock);
}

static struct standin_proc *standin_proc_find_locked(struct mm_struct *mm)
{
	struct standin_proc *p;

	lockdep_assert_held(&standin_procs_lock);
	list_for_each_entry(p, &standin_procs, node)
		if (p->mm == mm) {
			kref_get(&p->kref);
			return p;
		}
	return NULL;
}

/* The caller's process, referenced, as kfd_get_process(): NULL if none. */
struct standin_proc *standin_proc_of_current(void)
{
	struct standin_proc *p;

	if (!current->mm || current->group_leader->mm != current->mm)
		return NULL;
	mutex_lock(&standin_procs_lock);
	p = standin_proc_find_locked(current->mm);
	mutex_unlock(&standin_procs_lock);
	return p;
}

/* kfd_create_process(): one per address space, made by its first open. */
static struct standin_proc *standin_proc_get_or_create(void)
{
	struct standin_proc *p;
	u32 i;

	if (!current->mm || current->group_leader->mm != current->mm)
		return ERR_PTR(-EINVAL);
	mutex_lock(&standin_procs_lock);
	p = standin_proc_find_locked(current->mm);
	if (p)
		goto out;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		p = ERR_PTR(-ENOMEM);
		goto out;
	}
	kref_init(&p->kref);
	mutex_init(&p->lock);
	INIT_LIST_HEAD(&p->queues);
	for (i = 0; i < standin_ngpus; i++) {
		struct standin_pdd *pdd = &p->pdd[i];

		pdd->gpu = &standin_gpus[i];
		idr_init_base(&pdd->handles, 1);
		init_rwsem(&pdd->vm_lock);
		INIT_LIST_HEAD(&pdd->vm);
	}
	mmgrab(current->mm);
	p->mm = current->mm;
	p->lead = get_task_struct(current->group_leader);
	p->pid = task_tgid_nr(current);
	list_add(&p->node, &standin_procs);
out:
	mutex_unlock(&standin_procs_lock);
	return p;
}

/* ---- /dev/kfd ---------------------------------------------------------- */

static int standin_open(struct inode *inode, struct file *f)
{
	struct standin_proc *p;

	if (iminor(inode) != 0)
		return -ENODEV;
	if (in_compat_syscall())
		return -EPERM;
	p = standin_proc_get_or_create();
	if (IS_ERR(p))
		return PTR_ERR(p);
	f->private_data = p;
	return 0;
}

static int standin_release(struct inode *inode, struct file *f)
{
	standin_proc_put(f->private_data);
	return 0;
}

static int standin_get_version(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_get_version_args *args = data;

	args->major_version = KFD_IOCTL_MAJOR_VERSION;
	args->minor_version = KFD_IOCTL_MINOR_VERSION;
	return 0;
}

struct standin_ioctl {
	unsigned int cmd;
	int (*fn)(struct standin_proc *p, void *data);
};

#define STANDIN_IOCTL(_cmd, _fn) [_IOC_NR(_cmd)] = { .cmd = _cmd, .fn = _fn }

/* Indexed by number, as KFD's table; a number with no entry is not emulated. */
static const struct standin_ioctl standin_ioctls[] = {
	STANDIN_IOCTL(AMDKFD_IOC_GET_VERSION, standin_get_version),
	STANDIN_IOCTL(AMDKFD_IOC_CREATE_QUEUE, standin_create_queue),
	STANDIN_IOCTL(AMDKFD_IOC_DESTROY_QUEUE, standin_destroy_queue),
	STANDIN_IOCTL(AMDKFD_IOC_ACQUIRE_VM, standin_acquire_vm),
	STANDIN_IOCTL(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, standin_alloc_memory),
	STANDIN_IOCTL(AMDKFD_IOC_FREE_MEMORY_OF_GPU, standin_free_memory),
	STANDIN_IOCTL(AMDKFD_IOC_MAP_MEMORY_TO_GPU, standin_map_memory),
	STANDIN_IOCTL(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, standin_unmap_memory),
	STANDIN_IOCTL(AMDKFD_IOC_IMPORT_DMABUF, standin_import_dmabuf),
#ifdef AMDKFD_IOC_EXPORT_DMABUF
	STANDIN_IOCTL(AMDKFD_IOC_EXPORT_DMABUF, standin_export_dmabuf),
#endif
};

/* The commands the kernel's KFD knows: AMDKFD_COMMAND_START..END. */
static bool standin_ioctl_known(unsigned int nr)
{
	return nr >= AMDKFD_COMMAND_START && nr < AMDKFD_COMMAND_END;
}

/*
 * As kfd_ioctl(): the caller's size is taken (larger or smaller than the
 * kernel's struct: the rest zeroed), and only the process that opened the
 * file may use it.
 */
static long standin_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct standin_proc *p = f->private_data;
	unsigned int nr = _IOC_NR(cmd), usize, asize;
	const struct standin_ioctl *op;
	char stack[128], *kdata = stack;
	int ret;

	if (_IOC_TYPE(cmd) != AMDKFD_IOCTL_BASE || !standin_ioctl_known(nr))
		return -ENOTTY;
	if (nr >= ARRAY_SIZE(standin_ioctls) || !standin_ioctls[nr].fn)
		return -EOPNOTSUPP;
	op = &standin_ioctls[nr];
	if (p->lead != current->group_leader)
		return -EBADF;

	usize = _IOC_SIZE(cmd);
	asize = max(usize, _IOC_SIZE(op->cmd));
	if (asize > sizeof(stack)) {
		kdata = kzalloc(asize, GFP_KERNEL);
		if (!kdata)
			return -ENOMEM;
	}
	memset(kdata, 0, asize);
	if ((op->cmd & IOC_IN) && copy_from_user(kdata, (void __user *)arg, usize)) {
		ret = -EFAULT;
		goto out;
	}
	ret = op->fn(p, kdata);
	if ((op->cmd & IOC_OUT) && copy_to_user((void __user *)arg, kdata, usize))
		ret = -EFAULT;
out:
	if (kdata != stack)
		kfree(kdata);
	return ret;
}

#define STANDIN_MMAP_TYPE_SHIFT		62
#define STANDIN_MMAP_TYPE_DOORBELL	(3ULL << STANDIN_MMAP_TYPE_SHIFT)
#define STANDIN_MMAP_GPU_ID_SHIFT	46

/* As kfd_mmap(): the caller's own process, whatever file it maps. */
static int standin_mmap(struct file *f, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u32 gpu_id = (off >> STANDIN_MMAP_GPU_ID_SHIFT) & 0xffff;
	struct standin_gpu *gpu = standin_gpu_by_id(gpu_id);
	struct standin_proc *p;
	int ret;

	p = standin_proc_of_current();
	if (!p)
		return -EINVAL;
	if ((off & (3ULL << STANDIN_MMAP_TYPE_SHIFT)) != STANDIN_MMAP_TYPE_DOORBELL)
		ret = -EOPNOTSUPP;
	else if (!gpu)
		ret = -ENODEV;
	else
		ret = standin_doorbell_mmap(p, gpu, vma);
	standin_proc_put(p);
	return ret;
}

static const struct file_operations standin_fops = {
	.owner = THIS_MODULE,
	.open = standin_open,
	.release = standin_release,
	.unlocked_ioctl = standin_ioctl,
	.compat_ioctl = standin_ioctl,
	.mmap = standin_mmap,
};

static int __init standin_init(void)
{
	int ret;

	ret = standin_gpus_init();
	if (ret)
		return ret;
	standin_wq = alloc_workqueue("kfd_standin", WQ_UNBOUND, 0);
	if (!standin_wq)
		return -ENOMEM;
	standin_major = register_chrdev(0, "kfd", &standin_fops);
	if (standin_major < 0) {
		destroy_workqueue(standin_wq);
		return standin_major;
	}
	standin_class = standin_class_create("kfd", standin_devnode);
	ret = PTR_ERR_OR_ZERO(standin_class);
	if (ret)
		goto err_chrdev;
	standin_kfd_dev = device_create(standin_class, NULL, MKDEV(standin_major, 0), NULL, "kfd");
	ret = PTR_ERR_OR_ZERO(standin_kfd_dev);
	if (ret)
		goto err_class;
	ret = standin_topology_init(standin_kfd_dev);
	if (ret)
		goto err_device;
	ret = standin_mem_init();
	if (ret)
		goto err_topology;
	pr_info("KFD %d.%d stand-in: %u GPU(s), gfx_target_version %u\n",
		KFD_IOCTL_MAJOR_VERSION, KFD_IOCTL_MINOR_VERSION, standin_ngpus, gfx);
	return 0;

err_topology:
	standin_topology_exit();
err_device:
	device_destroy(standin_class, MKDEV(standin_major, 0));
err_class:
	class_destroy(standin_class);
err_chrdev:
	unregister_chrdev(standin_major, "kfd");
	destroy_workqueue(standin_wq);
	return ret;
}

static void __exit standin_exit(void)
{
	/* Every file is closed: what is left is processes being torn down. */
	destroy_workqueue(standin_wq);
	standin_mem_exit();
	standin_topology_exit();
	device_destroy(standin_class, MKDEV(standin_major, 0));
	class_destroy(standin_class);
	unregister_chrdev(standin_major, "kfd");
}

module_init(standin_init);
module_exit(standin_exit);

MODULE_DESCRIPTION("Test only: a stand-in for KFD's /dev/kfd with a software SDMA engine");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
