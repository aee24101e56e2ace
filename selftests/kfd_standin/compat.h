/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference of the KFD stand-in, for the kernels it
 * is built against (Debian's 6.1 and 6.12).
 */
#ifndef _KFD_STANDIN_COMPAT_H
#define _KFD_STANDIN_COMPAT_H

#include <linux/version.h>
#include <linux/module.h>
#include <linux/device.h>
#include <linux/mm.h>

/* A class's devnode() takes a const device from 6.2 on. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define standin_devnode_device struct device
#else
#define standin_devnode_device const struct device
#endif

/* class_create() lost its owner argument in 6.4. */
static inline struct class *standin_class_create(const char *name,
						 char *(*devnode)(standin_devnode_device *dev,
								  umode_t *mode))
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
	struct class *c = class_create(THIS_MODULE, name);
#else
	struct class *c = class_create(name);
#endif

	if (!IS_ERR(c))
		c->devnode = devnode;
	return c;
}

/* vm_flags became read-only in 6.3: vm_flags_set(). */
static inline void standin_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
	vma->vm_flags |= flags;
#else
	vm_flags_set(vma, flags);
#endif
}

#endif /* _KFD_STANDIN_COMPAT_H */
