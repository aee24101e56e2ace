/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Objects shared by the files of tplan.ko.
 */
#ifndef _TPLAN_PRIV_H
#define _TPLAN_PRIV_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/fs.h>

#include "tplan.h"

#define TPLAN_MAX_WORLD_SIZE 16

/* Module parameters, validated once at load (main.c). */
struct tplan_params {
	u32 ring_size;			/* bytes, power of two */
	u32 prep_limit_pct;		/* 1..50 */
	u32 max_copy_bytes_sdma440;	/* fixed by the 30-bit count field */
	u32 max_copy_bytes_sdma442;	/* 4 MiB unless raised by the admin */
	bool allow_inject;		/* test-only raw packet injection */
};
extern struct tplan_params tplan_params;

/*
 * struct tplan_file - one open file of /dev/tplan: one rank once joined.
 * Every object a rank creates hangs off this and is torn down on release.
 */
struct tplan_file {
	struct mutex lock;		/* serialises this file's ioctls */
};

/*
 * struct tplan_ucmd - one ioctl call in flight: the copied-in argument
 * and where the answer goes.
 */
struct tplan_ucmd {
	struct tplan_file *tf;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

#endif /* _TPLAN_PRIV_H */
