// SPDX-License-Identifier: GPL-2.0
/*
 * The KFD engine's heaps and address maps (TPLAN_ENGINE_KFD).
 *
 * Each rank's heap is memory of its GPU, handed over at join as a
 * dma-buf.  The module holds the dma-buf until the group ends, so the
 * memory outlives every queue that may still copy into it, and a kernel
 * mapping of it (dma_buf_vmap()), through which it zeroes the heap and
 * reads and writes plans' gate rows.  amdgpu maps VRAM only as I/O
 * memory (drm_gem_ttm_vmap(), and VRAM is bus.is_iomem), so the core
 * reaches a heap through its iosys_map (tplan_heap_load() and the rest):
 * plain accesses where the mapping is memory, the I/O accessors where it
 * is not.
 *
 * Where a GPU sees the heaps is its rank's to say: the rank imports the
 * other ranks' heaps (TPLAN_IOC_HEAP_EXPORT gives it a dma-buf of each)
 * and registers its address map once (TPLAN_IOC_ADDR_MAP).  Until then
 * its map is empty, so every address its packets could carry is refused,
 * and its queues cannot be attached (kfd_engine.c).
 */
#include <linux/dma-buf.h>
#include <linux/file.h>
#include <linux/iosys-map.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/slab.h>

#include "tplan_priv.h"
#include "compat.h"

#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
MODULE_IMPORT_NS(DMA_BUF);

bool tplan_kfd_engine_available(void)
{
	return true;
}

/* Zero a heap through its kernel mapping, a megabyte at a time. */
static void tplan_kfd_heap_zero(struct tplan_heap *h)
{
	u64 off, n;

	for (off = 0; off < h->size; off += n) {
		n = min_t(u64, h->size - off, SZ_1M);
		tplan_heap_zero(h, off, n);
		cond_resched();
	}
}

int tplan_kfd_heap_get(struct tplan_heap *h, int fd, u64 size)
{
	struct dma_buf *buf = dma_buf_get(fd);
	struct iosys_map map;
	int ret;

	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = -EINVAL;
	if (buf->size < size)
		goto err_put;
	ret = tplan_dma_buf_vmap(buf, &map);
	if (ret)
		goto err_put;
	h->dmabuf = buf;
	h->map = map;
	/* Only memory the CPU may reach with plain accesses has a pointer. */
	h->vaddr = map.is_iomem ? NULL : map.vaddr;
	h->size = size;
	tplan_kfd_heap_zero(h);
	return 0;

err_put:
	dma_buf_put(buf);
	return ret;
}

void tplan_kfd_heap_put(struct tplan_heap *h)
{
	tplan_dma_buf_vunmap(h->dmabuf, &h->map);
	dma_buf_put(h->dmabuf);
}

/*
 * A new descriptor of rank's dma-buf, installed only once the answer is
 * written, so that a caller who cannot be told the number gets none.
 */
int tplan_heap_export(struct tplan_ucmd *ucmd)
{
	struct tplan_heap_export *cmd = ucmd->cmd;
	struct tplan_group *g = tplan_file_group(ucmd->tf);
	struct dma_buf *buf;
	int fd, ret;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags || cmd->rank >= g->world_size)
		return -EINVAL;
	if (g->engine != TPLAN_ENGINE_KFD)
		return -EOPNOTSUPP;
	/* Every rank joined before this one's join returned: its heap is there. */
	buf = g->heaps[cmd->rank].dmabuf;
	if (!buf)
		return -EINVAL;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	cmd->fd = fd;
	ret = tplan_ucmd_respond(ucmd);
	if (ret) {
		put_unused_fd(fd);
		return ret;
	}
	get_dma_buf(buf);
	fd_install(fd, buf->file);
	return 0;
}
#else
bool tplan_kfd_engine_available(void)
{
	return false;
}

int tplan_kfd_heap_get(struct tplan_heap *h, int fd, u64 size)
{
	return -EOPNOTSUPP;
}

void tplan_kfd_heap_put(struct tplan_heap *h)
{
}

int tplan_heap_export(struct tplan_ucmd *ucmd)
{
	return tplan_file_group(ucmd->tf) ? -EOPNOTSUPP : -ENOTCONN;
}
#endif

/* GPU virtual addresses a user process may use (47 bits, canonical). */
#define TPLAN_KFD_VA_END (1ULL << 47)

static bool tplan_ranges_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/* Does [addr, addr + len) overlap a heap of rank's map?  The map is fixed once set. */
bool tplan_kfd_map_overlaps(struct tplan_group *g, u32 rank, u64 addr, u64 len)
{
	u32 r;

	for (r = 0; r < g->world_size; r++)
		if (tplan_ranges_overlap(addr, len, g->maps[rank].heap_dev[r], g->heap_size))
			return true;
	return false;
}

int tplan_addr_map_set(struct tplan_ucmd *ucmd)
{
	struct tplan_addr_map_set *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_group *g = tplan_file_group(tf);
	u64 dev[TPLAN_MAX_WORLD_SIZE];
	u32 r, s;
	int ret = 0;

	if (!g)
		return -ENOTCONN;
	if (cmd->flags || cmd->__reserved || cmd->count != g->world_size)
		return -EINVAL;
	if (g->engine != TPLAN_ENGINE_KFD)
		return -EOPNOTSUPP;
	if (copy_from_user(dev, u64_to_user_ptr(cmd->heap_dev), sizeof(u64) * g->world_size))
		return -EFAULT;
	for (r = 0; r < g->world_size; r++) {
		if (!dev[r] || !PAGE_ALIGNED(dev[r]) || dev[r] >= TPLAN_KFD_VA_END ||
		    g->heap_size > TPLAN_KFD_VA_END - dev[r])
			return -EINVAL;
		for (s = 0; s < r; s++)
			if (tplan_ranges_overlap(dev[r], g->heap_size, dev[s], g->heap_size))
				return -EINVAL;
	}
	mutex_lock(&g->lock);
	if (g->maps_set & BIT(tf->rank)) {
		ret = -EALREADY;
	} else {
		/* Lock-free readers (the validator) see each address whole. */
		for (r = 0; r < g->world_size; r++)
			WRITE_ONCE(g->maps[tf->rank].heap_dev[r], dev[r]);
		g->maps_set |= BIT(tf->rank);
	}
	mutex_unlock(&g->lock);
	return ret;
}
