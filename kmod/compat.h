/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference tplan cares about, in one place.
 * Supported: Debian's 6.1 and 6.12 kernels (and anything between).
 */
#ifndef _TPLAN_COMPAT_H
#define _TPLAN_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* vm_flags became read-only behind helpers in 6.3. */
static inline void tplan_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vma->vm_flags |= flags;
}
#else
static inline void tplan_vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vm_flags_set(vma, flags);
}
#endif

#if IS_ENABLED(CONFIG_DMA_SHARED_BUFFER)
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

/* dma_buf_vmap() locks the reservation itself before 6.2; _unlocked() after. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
static inline int tplan_dma_buf_vmap(struct dma_buf *buf, struct iosys_map *map)
{
	return dma_buf_vmap(buf, map);
}

static inline void tplan_dma_buf_vunmap(struct dma_buf *buf, struct iosys_map *map)
{
	dma_buf_vunmap(buf, map);
}
#else
static inline int tplan_dma_buf_vmap(struct dma_buf *buf, struct iosys_map *map)
{
	return dma_buf_vmap_unlocked(buf, map);
}

static inline void tplan_dma_buf_vunmap(struct dma_buf *buf, struct iosys_map *map)
{
	dma_buf_vunmap_unlocked(buf, map);
}
#endif
#endif

#endif /* _TPLAN_COMPAT_H */
