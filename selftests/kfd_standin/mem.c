// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: the render nodes (/dev/dri/renderD128 + i: ACQUIRE_VM takes one;
 * amdgpu's GEM_CREATE and PRIME_HANDLE_TO_FD make VRAM dma-bufs, the way
 * before KFD 1.12), buffers and their handles, each GPU VM's mappings, the
 * dma-bufs of "VRAM" (kernel memory, exported and imported by any
 * process), and the doorbell slices.
 *
 * A USERPTR buffer's pages are got as amdgpu gets them, with
 * hmm_range_fault(): the whole range mapped, no VM_IO or VM_PFNMAP
 * mapping in it (EFAULT), writable (EPERM).  Unlike amdgpu, the pages are
 * not kept: the engine reads them through the process's mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hmm.h>
#include <linux/mmu_notifier.h>
#include <linux/vmalloc.h>
#include <linux/miscdevice.h>
#include <linux/dma-buf.h>
#include <linux/scatterlist.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/uaccess.h>
#include <drm/drm.h>
#include <drm/amdgpu_drm.h>

#include "standin.h"
#include "compat.h"

#define STANDIN_HANDLE(gpu_id, idr)	((u64)(gpu_id) << 32 | (idr))
#define STANDIN_HANDLE_GPU(h)		((u32)((h) >> 32))
#define STANDIN_HANDLE_IDR(h)		((u32)(h))

/* ---- VRAM and its dma-bufs -------------------------------------------- */

static struct standin_vram *standin_vram_alloc(struct standin_gpu *gpu, u64 size)
{
	struct standin_vram *v;

	size = PAGE_ALIGN(size);
	if (!size || atomic64_add_return(size, &gpu->vram_used) > standin_vram_limit) {
		atomic64_sub(size, &gpu->vram_used);
		return NULL;
	}
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (v)
		v->vaddr = vmalloc_user(size);
	if (!v || !v->vaddr) {
		kfree(v);
		atomic64_sub(size, &gpu->vram_used);
		return NULL;
	}
	kref_init(&v->kref);
	v->size = size;
	v->gpu = gpu;
	return v;
}

static void standin_vram_release(struct kref *kref)
{
	struct standin_vram *v = container_of(kref, struct standin_vram, kref);

	vfree(v->vaddr);
	atomic64_sub(v->size, &v->gpu->vram_used);
	kfree(v);
}

static void standin_vram_put(struct standin_vram *v)
{
	if (v)
		kref_put(&v->kref, standin_vram_release);
}

static struct sg_table *standin_dmabuf_map(struct dma_buf_attachment *at,
					   enum dma_data_direction dir)
{
	struct standin_vram *v = at->dmabuf->priv;
	u32 i, npages = v->size >> PAGE_SHIFT;
	struct page **pages;
	struct sg_table *sgt;
	int ret = -ENOMEM;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!pages || !sgt)
		goto err;
	for (i = 0; i < npages; i++)
		pages[i] = vmalloc_to_page(v->vaddr + ((u64)i << PAGE_SHIFT));
	ret = sg_alloc_table_from_pages(sgt, pages, npages, 0, v->size, GFP_KERNEL);
	if (ret)
		goto err;
	ret = dma_map_sgtable(at->dev, sgt, dir, 0);
	if (ret) {
		sg_free_table(sgt);
		goto err;
	}
	kvfree(pages);
	return sgt;
err:
	kfree(sgt);
	kvfree(pages);
	return ERR_PTR(ret);
}

static void standin_dmabuf_unmap(struct dma_buf_attachment *at, struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	dma_unmap_sgtable(at->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static void standin_dmabuf_release(struct dma_buf *buf)
{
	standin_vram_put(buf->priv);
}

static int standin_dmabuf_mmap(struct dma_buf *buf, struct vm_area_struct *vma)
{
	struct standin_vram *v = buf->priv;

	/* What a large-BAR GPU allows for host-visible VRAM. */
	return remap_vmalloc_range(vma, v->vaddr, vma->vm_pgoff);
}

/*
 * As amdgpu maps VRAM for the kernel: as I/O memory (drm_gem_ttm_vmap(),
 * VRAM is bus.is_iomem), whatever the memory behind it is.  An importer
 * must use the I/O accessors.
 */
static int standin_dmabuf_vmap(struct dma_buf *buf, struct iosys_map *map)
{
	struct standin_vram *v = buf->priv;

	iosys_map_set_vaddr_iomem(map, (void __iomem __force *)v->vaddr);
	return 0;
}

static const struct dma_buf_ops standin_dmabuf_ops = {
	.map_dma_buf = standin_dmabuf_map,
	.unmap_dma_buf = standin_dmabuf_unmap,
	.release = standin_dmabuf_release,
	.mmap = standin_dmabuf_mmap,
	.vmap = standin_dmabuf_vmap,
};

/* A dma-buf of v (a reference of v goes with it). */
static struct dma_buf *standin_vram_export(struct standin_vram *v)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *buf;

	info.ops = &standin_dmabuf_ops;
	info.size = v->size;
	info.flags = O_RDWR;
	info.priv = v;
	kref_get(&v->kref);
	buf = dma_buf_export(&info);
	if (IS_ERR(buf))
		standin_vram_put(v);
	return buf;
}

/*
 * An fd of v's dma-buf, made at the first export and kept in *cached for
 * the next (the buffer holds a reference of it); the fd or -errno.
 */
static int standin_vram_export_fd(struct standin_vram *v, struct dma_buf **cached,
				  bool cloexec)
{
	struct dma_buf *buf;
	int fd;

	if (!*cached) {
		buf = standin_vram_export(v);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		*cached = buf;
	}
	get_dma_buf(*cached);
	fd = dma_buf_fd(*cached, cloexec ? O_CLOEXEC : 0);
	if (fd < 0)
		dma_buf_put(*cached);
	return fd;
}

/* ---- The render nodes ---------------------------------------------------- */

struct standin_render {
	struct miscdevice misc;
	char name[32], nodename[32];
	struct standin_gpu *gpu;
};

struct standin_render_file {
	struct standin_gpu *gpu;
	struct mutex lock;
	struct idr gem;			/* handle -> struct standin_gem */
};

/* A GEM object: VRAM, and its dma-buf once exported. */
struct standin_gem {
	struct standin_vram *vram;
	struct dma_buf *dmabuf;
};

static struct standin_render standin_renders[STANDIN_MAX_GPUS];
static const struct file_operations standin_render_fops;

static int standin_render_open(struct inode *inode, struct file *f)
{
	struct standin_render *r = container_of(f->private_data, struct standin_render, misc);
	struct standin_render_file *rf = kzalloc(sizeof(*rf), GFP_KERNEL);

	if (!rf)
		return -ENOMEM;
	rf->gpu = r->gpu;
	mutex_init(&rf->lock);
	idr_init_base(&rf->gem, 1);
	f->private_data = rf;
	return 0;
}

static void standin_gem_free(struct standin_gem *gem)
{
	if (gem->dmabuf)
		dma_buf_put(gem->dmabuf);
	standin_vram_put(gem->vram);
	kfree(gem);
}

static int standin_render_release(struct inode *inode, struct file *f)
{
	struct standin_render_file *rf = f->private_data;
	struct standin_gem *gem;
	int id;

	idr_for_each_entry(&rf->gem, gem, id)
		standin_gem_free(gem);
	idr_destroy(&rf->gem);
	mutex_destroy(&rf->lock);
	kfree(rf);
	return 0;
}

static int standin_gem_create(struct standin_render_file *rf, union drm_amdgpu_gem_create *a)
{
	u64 size = a->in.bo_size;
	struct standin_gem *gem;
	int id;

	if (!(a->in.domains & (AMDGPU_GEM_DOMAIN_VRAM | AMDGPU_GEM_DOMAIN_GTT)) || !size)
		return -EINVAL;
	gem = kzalloc(sizeof(*gem), GFP_KERNEL);
	if (!gem)
		return -ENOMEM;
	gem->vram = standin_vram_alloc(rf->gpu, size);
	if (!gem->vram) {
		kfree(gem);
		return -ENOMEM;
	}
	mutex_lock(&rf->lock);
	id = idr_alloc(&rf->gem, gem, 1, 0, GFP_KERNEL);
	mutex_unlock(&rf->lock);
	if (id < 0) {
		standin_gem_free(gem);
		return id;
	}
	memset(a, 0, sizeof(*a));
	a->out.handle = id;
	return 0;
}

static int standin_prime_handle_to_fd(struct standin_render_file *rf, struct drm_prime_handle *a)
{
	struct standin_gem *gem;
	int fd, ret = 0;

	if (a->flags & ~(DRM_CLOEXEC | DRM_RDWR))
		return -EINVAL;
	mutex_lock(&rf->lock);
	gem = idr_find(&rf->gem, a->handle);
	if (!gem) {
		ret = -ENOENT;
		goto out;
	}
	fd = standin_vram_export_fd(gem->vram, &gem->dmabuf, a->flags & DRM_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	a->fd = fd;
out:
	mutex_unlock(&rf->lock);
	return ret;
}

static int standin_gem_close(struct standin_render_file *rf, struct drm_gem_close *a)
{
	struct standin_gem *gem;

	mutex_lock(&rf->lock);
	gem = idr_remove(&rf->gem, a->handle);
	mutex_unlock(&rf->lock);
	if (!gem)
		return -EINVAL;
	standin_gem_free(gem);
	return 0;
}

static long standin_render_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct standin_render_file *rf = f->private_data;
	union {
		union drm_amdgpu_gem_create create;
		struct drm_prime_handle prime;
		struct drm_gem_close close;
	} a;
	int ret;

	switch (cmd) {
	case DRM_IOCTL_AMDGPU_GEM_CREATE:
	case DRM_IOCTL_PRIME_HANDLE_TO_FD:
	case DRM_IOCTL_GEM_CLOSE:
		break;
	default:
		return -EOPNOTSUPP;	/* not emulated */
	}
	if (copy_from_user(&a, (void __user *)arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	if (cmd == DRM_IOCTL_AMDGPU_GEM_CREATE)
		ret = standin_gem_create(rf, &a.create);
	else if (cmd == DRM_IOCTL_PRIME_HANDLE_TO_FD)
		ret = standin_prime_handle_to_fd(rf, &a.prime);
	else
		ret = standin_gem_close(rf, &a.close);
	if (!ret && (cmd & IOC_OUT) && copy_to_user((void __user *)arg, &a, _IOC_SIZE(cmd)))
		ret = -EFAULT;
	return ret;
}

static const struct file_operations standin_render_fops = {
	.owner = THIS_MODULE,
	.open = standin_render_open,
	.release = standin_render_release,
	.unlocked_ioctl = standin_render_ioctl,
	.compat_ioctl = standin_render_ioctl,
};

int standin_mem_init(void)
{
	u32 i;
	int ret;

	for (i = 0; i < standin_ngpus; i++) {
		struct standin_render *r = &standin_renders[i];

		r->gpu = &standin_gpus[i];
		snprintf(r->name, sizeof(r->name), "kfd_standin_render%u", i);
		snprintf(r->nodename, sizeof(r->nodename), "dri/renderD%u", 128 + i);
		r->misc.minor = MISC_DYNAMIC_MINOR;
		r->misc.name = r->name;
		r->misc.nodename = r->nodename;
		r->misc.mode = 0666;
		r->misc.fops = &standin_render_fops;
		ret = misc_register(&r->misc);
		if (ret) {
			while (i--)
				misc_deregister(&standin_renders[i].misc);
			return ret;
		}
	}
	return 0;
}

void standin_mem_exit(void)
{
	u32 i;

	for (i = 0; i < standin_ngpus; i++)
		misc_deregister(&standin_renders[i].misc);
}

/* ---- ACQUIRE_VM ----------------------------------------------------------- */

int standin_acquire_vm(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_acquire_vm_args *args = data;
	struct standin_render_file *rf;
	struct standin_pdd *pdd;
	struct file *drm;
	int ret = 0;

	drm = fget(args->drm_fd);
	if (!drm)
		return -EINVAL;
	mutex_lock(&p->lock);
	pdd = standin_pdd_by_id(p, args->gpu_id);
	if (!pdd) {
		ret = -EINVAL;
		goto out;
	}
	if (pdd->drm_file) {
		ret = pdd->drm_file == drm ? 0 : -EBUSY;
		goto out;
	}
	/* amdgpu takes only its own render node of that GPU. */
	rf = drm->f_op == &standin_render_fops ? drm->private_data : NULL;
	if (!rf || rf->gpu != pdd->gpu) {
		ret = -EINVAL;
		goto out;
	}
	pdd->drm_file = drm;
	drm = NULL;		/* the pdd keeps the reference */
out:
	mutex_unlock(&p->lock);
	if (drm)
		fput(drm);
	return ret;
}

/* ---- Buffers -------------------------------------------------------------- */

static void standin_bo_free(struct standin_bo *bo)
{
	if (bo->dmabuf)
		dma_buf_put(bo->dmabuf);
	standin_vram_put(bo->vram);
	kfree(bo);
}

static bool standin_bo_mapped(const struct standin_bo *bo)
{
	u32 i;

	for (i = 0; i < STANDIN_MAX_GPUS; i++)
		if (bo->map[i])
			return true;
	return false;
}

/* The buffer behind a handle, in pdd; NULL if none.  Caller holds p->lock. */
static struct standin_bo *standin_bo_get(struct standin_proc *p, u64 handle,
					 struct standin_pdd **pddp)
{
	struct standin_pdd *pdd = standin_pdd_by_id(p, STANDIN_HANDLE_GPU(handle));

	lockdep_assert_held(&p->lock);
	*pddp = pdd;
	if (!pdd)
		return NULL;
	return idr_find(&pdd->handles, STANDIN_HANDLE_IDR(handle));
}

static bool standin_userptr_invalidate(struct mmu_interval_notifier *mni,
				       const struct mmu_notifier_range *range,
				       unsigned long cur_seq)
{
	mmu_interval_set_seq(mni, cur_seq);
	return true;
}

static const struct mmu_interval_notifier_ops standin_userptr_ops = {
	.invalidate = standin_userptr_invalidate,
};

/*
 * As amdgpu gets a USERPTR buffer's pages: hmm_range_fault() over
 * [addr, addr + size), for writing (KFD registers no read-only userptr).
 * It fails with EFAULT where nothing is mapped or a VM_IO or VM_PFNMAP
 * mapping is, and EPERM where the mapping is not writable.
 */
static int standin_userptr_check(u64 addr, u64 size)
{
	struct mm_struct *mm = current->mm;
	struct mmu_interval_notifier mni;
	struct hmm_range range = {
		.notifier = &mni,
		.start = addr,
		.end = addr + size,
		.default_flags = HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE,
	};
	int ret;

	if (!size || addr + size < addr || !PAGE_ALIGNED(addr) || !PAGE_ALIGNED(size))
		return -EINVAL;
	range.hmm_pfns = kvmalloc_array(size >> PAGE_SHIFT, sizeof(unsigned long), GFP_KERNEL);
	if (!range.hmm_pfns)
		return -ENOMEM;
	ret = mmu_interval_notifier_insert(&mni, mm, addr, size, &standin_userptr_ops);
	if (ret)
		goto out;
	do {
		range.notifier_seq = mmu_interval_read_begin(&mni);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
	} while (ret == -EBUSY);
	mmu_interval_notifier_remove(&mni);
out:
	kvfree(range.hmm_pfns);
	return ret;
}

static int standin_bo_publish(struct standin_pdd *pdd, struct standin_bo *bo, u64 *handle)
{
	int id = idr_alloc(&pdd->handles, bo, 1, 0, GFP_KERNEL);

	if (id < 0)
		return id;
	*handle = STANDIN_HANDLE(pdd->gpu->gpu_id, id);
	return 0;
}

int standin_alloc_memory(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args *args = data;
	u32 type = args->flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT |
				  KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
				  KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
				  KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
	struct standin_pdd *pdd;
	struct standin_bo *bo;
	int ret;

	if (!args->size)
		return -EINVAL;
	if (type == KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL || type == KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
		return -EOPNOTSUPP;	/* not emulated */
	if (hweight32(type) != 1 || !PAGE_ALIGNED(args->va_addr))
		return -EINVAL;
	mutex_lock(&p->lock);
	pdd = standin_pdd_by_id(p, args->gpu_id);
	if (!pdd) {
		ret = -EINVAL;
		goto out;
	}
	if (!pdd->drm_file) {
		ret = -ENODEV;		/* kfd_bind_process_to_device(): no VM acquired */
		goto out;
	}
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo) {
		ret = -ENOMEM;
		goto out;
	}
	bo->flags = args->flags;
	bo->va = args->va_addr;
	bo->size = PAGE_ALIGN(args->size);
	if (type == KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		bo->kind = STANDIN_BO_USERPTR;
		bo->user_addr = args->mmap_offset;
		ret = standin_userptr_check(bo->user_addr, args->size);
	} else {
		bo->kind = STANDIN_BO_VRAM;
		bo->vram = standin_vram_alloc(pdd->gpu, bo->size);
		ret = bo->vram ? 0 : -ENOMEM;
	}
	if (!ret)
		ret = standin_bo_publish(pdd, bo, &args->handle);
	if (ret) {
		standin_bo_free(bo);
		goto out;
	}
	/* The render node's CPU mapping of VRAM is not emulated: no offset. */
	if (bo->kind != STANDIN_BO_USERPTR)
		args->mmap_offset = 0;
out:
	mutex_unlock(&p->lock);
	return ret;
}

int standin_free_memory(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_free_memory_of_gpu_args *args = data;
	struct standin_pdd *pdd;
	struct standin_bo *bo;
	int ret = 0;

	mutex_lock(&p->lock);
	bo = standin_bo_get(p, args->handle, &pdd);
	if (!bo)
		ret = -EINVAL;
	else if (standin_bo_mapped(bo))
		ret = -EBUSY;		/* "is still mapped" */
	else
		idr_remove(&pdd->handles, STANDIN_HANDLE_IDR(args->handle));
	mutex_unlock(&p->lock);
	if (!ret)
		standin_bo_free(bo);
	return ret;
}

/* The mapping of pdd's VM that holds [addr, addr + len), or NULL.  Caller holds vm_lock. */
struct standin_mapping *standin_vm_find(struct standin_pdd *pdd, u64 addr, u64 len)
{
	struct standin_mapping *m;

	list_for_each_entry(m, &pdd->vm, node)
		if (addr >= m->start && addr < m->end && len <= m->end - addr)
			return m;
	return NULL;
}

static bool standin_vm_overlaps(struct standin_pdd *pdd, u64 start, u64 end)
{
	struct standin_mapping *m;

	list_for_each_entry(m, &pdd->vm, node)
		if (start < m->end && m->start < end)
			return true;
	return false;
}

static int standin_gpu_ids(u64 uptr, u32 n, u32 n_success, u32 **ids)
{
	if (!n || n_success > n || n > STANDIN_MAX_GPUS)
		return -EINVAL;
	*ids = memdup_user(u64_to_user_ptr(uptr), n * sizeof(u32));
	return PTR_ERR_OR_ZERO(*ids);
}

int standin_map_memory(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_map_memory_to_gpu_args *args = data;
	struct standin_pdd *pdd, *peer;
	struct standin_mapping *m;
	struct standin_bo *bo;
	u32 *ids, i;
	int ret;

	ret = standin_gpu_ids(args->device_ids_array_ptr, args->n_devices, args->n_success, &ids);
	if (ret)
		return ret;
	mutex_lock(&p->lock);
	bo = standin_bo_get(p, args->handle, &pdd);
	if (!bo) {
		ret = pdd ? -ENOMEM : -EINVAL;	/* as KFD: a bad handle is ENOMEM */
		goto out;
	}
	for (i = args->n_success; i < args->n_devices; i++) {
		peer = standin_pdd_by_id(p, ids[i]);
		if (!peer) {
			ret = -EINVAL;
			goto out;
		}
		if (!peer->drm_file) {
			ret = -ENODEV;
			goto out;
		}
		if (!bo->map[peer->gpu->index]) {
			m = kzalloc(sizeof(*m), GFP_KERNEL);
			if (!m) {
				ret = -ENOMEM;
				goto out;
			}
			m->start = bo->va;
			m->end = bo->va + bo->size;
			m->bo = bo;
			down_write(&peer->vm_lock);
			if (standin_vm_overlaps(peer, m->start, m->end)) {
				up_write(&peer->vm_lock);
				kfree(m);
				ret = -EINVAL;
				goto out;
			}
			list_add(&m->node, &peer->vm);
			bo->map[peer->gpu->index] = m;
			up_write(&peer->vm_lock);
		}
		args->n_success = i + 1;
	}
out:
	mutex_unlock(&p->lock);
	kfree(ids);
	return ret;
}

int standin_unmap_memory(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args *args = data;
	struct standin_pdd *pdd, *peer;
	struct standin_mapping *m;
	struct standin_bo *bo;
	u32 *ids, i;
	int ret;

	ret = standin_gpu_ids(args->device_ids_array_ptr, args->n_devices, args->n_success, &ids);
	if (ret)
		return ret;
	mutex_lock(&p->lock);
	bo = standin_bo_get(p, args->handle, &pdd);
	if (!bo) {
		ret = pdd ? -ENOMEM : -EINVAL;
		goto out;
	}
	for (i = args->n_success; i < args->n_devices; i++) {
		peer = standin_pdd_by_id(p, ids[i]);
		if (!peer) {
			ret = -EINVAL;
			goto out;
		}
		m = bo->map[peer->gpu->index];
		if (!m) {
			ret = -EINVAL;	/* amdgpu: not mapped on that GPU */
			goto out;
		}
		/* KFD 1.17: a queue's ring and pointers stay mapped while it lives. */
		if (m->queue_refcount) {
			ret = -EBUSY;
			goto out;
		}
		down_write(&peer->vm_lock);
		list_del(&m->node);
		bo->map[peer->gpu->index] = NULL;
		up_write(&peer->vm_lock);
		kfree(m);
		args->n_success = i + 1;
	}
out:
	mutex_unlock(&p->lock);
	kfree(ids);
	return ret;
}

int standin_import_dmabuf(struct standin_proc *p, void *data)
{
	struct kfd_ioctl_import_dmabuf_args *args = data;
	struct standin_pdd *pdd;
	struct standin_bo *bo;
	struct dma_buf *buf;
	int ret;

	if (!PAGE_ALIGNED(args->va_addr))
		return -EINVAL;
	buf = dma_buf_get(args->dmabuf_fd);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	/* amdgpu imports only dma-bufs of amdgpu: here, the stand-in's. */
	if (buf->ops != &standin_dmabuf_ops) {
		dma_buf_put(buf);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	pdd = standin_pdd_by_id(p, args->gpu_id);
	ret = !pdd ? -EINVAL : !pdd->drm_file ? -ENODEV : 0;
	bo = ret ? NULL : kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!ret && !bo)
		ret = -ENOMEM;
	if (ret) {
		mutex_unlock(&p->lock);
		dma_buf_put(buf);
		return ret;
	}
	bo->kind = STANDIN_BO_IMPORT;
	bo->flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	bo->dmabuf = buf;
	bo->vram = buf->priv;
	kref_get(&bo->vram->kref);
	bo->va = args->va_addr;
	bo->size = bo->vram->size;
	ret = standin_bo_publish(pdd, bo, &args->handle);
	mutex_unlock(&p->lock);
	if (ret)
		standin_bo_free(bo);
	return ret;
}

int standin_export_dmabuf(struct standin_proc *p, void *data)
{
#ifdef AMDKFD_IOC_EXPORT_DMABUF
	struct kfd_ioctl_export_dmabuf_args *args = data;
	struct standin_pdd *pdd;
	struct standin_bo *bo;
	int fd, ret = 0;

	if (args->flags & ~(O_CLOEXEC | O_RDWR))
		return -EINVAL;
	mutex_lock(&p->lock);
	bo = standin_bo_get(p, args->handle, &pdd);
	if (!bo) {
		ret = -EINVAL;
		goto out;
	}
	if (bo->kind == STANDIN_BO_USERPTR) {
		ret = -EPERM;		/* amdgpu will not export a userptr */
		goto out;
	}
	fd = standin_vram_export_fd(bo->vram, &bo->dmabuf, args->flags & O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	args->dmabuf_fd = fd;
out:
	mutex_unlock(&p->lock);
	return ret;
#else
	return -EOPNOTSUPP;
#endif
}

/* The process is gone: first every GPU VM's mappings (of any pdd's buffers)... */
void standin_pdd_release_vm(struct standin_pdd *pdd)
{
	struct standin_mapping *m, *tmp;

	list_for_each_entry_safe(m, tmp, &pdd->vm, node) {
		list_del(&m->node);
		m->bo->map[pdd->gpu->index] = NULL;
		kfree(m);
	}
}

/* ... then the buffers, the doorbells and the VM itself. */
void standin_pdd_release(struct standin_pdd *pdd)
{
	struct standin_bo *bo;
	int id;

	idr_for_each_entry(&pdd->handles, bo, id)
		standin_bo_free(bo);
	idr_destroy(&pdd->handles);
	if (pdd->doorbells)
		__free_pages(pdd->doorbells, get_order(STANDIN_DOORBELL_SLICE));
	if (pdd->drm_file)
		fput(pdd->drm_file);
}

/*
 * The process's doorbell slice on a GPU, made on first use, by
 * CREATE_QUEUE (under p->lock) or by the doorbell mmap (under the mmap
 * lock, where p->lock may not be taken: ALLOC_MEMORY_OF_GPU takes the
 * mmap lock under it, as KFD's does).  The first to publish it wins.
 */
int standin_doorbells_get(struct standin_pdd *pdd)
{
	unsigned int order = get_order(STANDIN_DOORBELL_SLICE);
	struct page *pages;

	/* Acquire: pairs with the cmpxchg() that published the zeroed pages. */
	if (smp_load_acquire(&pdd->doorbells))
		return 0;
	pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, order);
	if (!pages)
		return -ENOMEM;
	if (cmpxchg(&pdd->doorbells, NULL, pages))
		__free_pages(pages, order);
	return 0;
}

/* ---- Doorbells ------------------------------------------------------------ */

/*
 * The doorbell VMA holds the process, whose slice it maps (the file it
 * was made through may be another process's).
 */
static void standin_doorbell_vm_open(struct vm_area_struct *vma)
{
	struct standin_proc *p = vma->vm_private_data;

	kref_get(&p->kref);
}

static void standin_doorbell_vm_close(struct vm_area_struct *vma)
{
	standin_proc_put(vma->vm_private_data);
}

static const struct vm_operations_struct standin_doorbell_vm_ops = {
	.open = standin_doorbell_vm_open,
	.close = standin_doorbell_vm_close,
};

/* As kfd_doorbell_mmap(): the whole slice of this process on that GPU. */
int standin_doorbell_mmap(struct standin_proc *p, struct standin_gpu *gpu,
			  struct vm_area_struct *vma)
{
	struct standin_pdd *pdd = &p->pdd[gpu->index];
	int ret;

	if (vma->vm_end - vma->vm_start != STANDIN_DOORBELL_SLICE)
		return -EINVAL;
	/* Not under p->lock: the mmap lock is held (standin_doorbells_get()). */
	ret = standin_doorbells_get(pdd);
	if (ret)
		return ret;
	standin_vm_flags_set(vma, VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_NORESERVE |
			     VM_DONTDUMP | VM_PFNMAP);
	/* Not uncached as the BAR is: these are RAM pages (PAT would object). */
	ret = remap_pfn_range(vma, vma->vm_start, page_to_pfn(pdd->doorbells),
			      STANDIN_DOORBELL_SLICE, vma->vm_page_prot);
	if (ret)
		return ret;
	kref_get(&p->kref);
	vma->vm_private_data = p;
	vma->vm_ops = &standin_doorbell_vm_ops;
	return 0;
}
