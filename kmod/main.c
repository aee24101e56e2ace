// SPDX-License-Identifier: GPL-2.0
/*
 * tplan.ko: the misc device /dev/tplan, its module parameters and the
 * single ioctl dispatch table.
 *
 * Every ioctl argument starts with "__u32 size" and is copied with
 * copy_struct_from_user(): older callers are zero-extended, a larger
 * struct with a non-zero tail is refused with E2BIG, a struct shorter than
 * the first published version with EINVAL, anything over a page with E2BIG
 * (uapi/tplan.h has the contract).  Calls of one file run concurrently:
 * nothing here serialises them (tplan_priv.h has the locking rules).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/log2.h>
#include <linux/stddef.h>
#include <linux/sched/mm.h>

#include "tplan_priv.h"
#include "compat.h"
#include "queue.h"

/* Defaults: the spec's 8 MiB ring and half of it for prepared chains. */
static unsigned int ring_size = 8U << 20;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "Bytes per queue ring: a power of two, 4 KiB..256 MiB (default 8 MiB)");

static unsigned int prep_limit = 50;
module_param(prep_limit, uint, 0444);
MODULE_PARM_DESC(prep_limit, "Percent of a ring that prepared chains may hold: 1..50 (default 50)");

static unsigned int max_copy_sdma442 = 1U << 22;
module_param(max_copy_sdma442, uint, 0444);
MODULE_PARM_DESC(max_copy_sdma442,
		 "Largest COPY_LINEAR byte count on SDMA 4.4.2 (MI300): 4 KiB..1 GiB (default 4 MiB, as ROCr)");

static bool allow_inject;
module_param(allow_inject, bool, 0444);
MODULE_PARM_DESC(allow_inject, "Test only: allow raw packet injection into queues (default off)");

/* Written at run time by a test; read at each plan's prepare. */
static unsigned int test_first_round;
module_param(test_first_round, uint, 0644);
MODULE_PARM_DESC(test_first_round,
		 "Test only, with allow_inject=1: the round plans prepared from now start at (0: 1), to reach the 2^32 - 1 limit");

u32 tplan_first_round(void)
{
	u32 first = READ_ONCE(test_first_round);

	return tplan_params.allow_inject && first ? first : 1;
}

#define TPLAN_RING_MIN		(4U << 10)
#define TPLAN_RING_MAX		(256U << 20)
#define TPLAN_PREP_LIMIT_MAX	50U
#define TPLAN_COPY_MAX_SDMA440	(1U << 30)	/* 30-bit count field, bytes - 1 */

struct tplan_params tplan_params;

static int tplan_params_validate(void)
{
	if (!is_power_of_2(ring_size) || ring_size < TPLAN_RING_MIN ||
	    ring_size > TPLAN_RING_MAX) {
		pr_err("ring_size=%u: must be a power of two in [%u, %u]\n",
		       ring_size, TPLAN_RING_MIN, TPLAN_RING_MAX);
		return -EINVAL;
	}
	if (prep_limit < 1 || prep_limit > TPLAN_PREP_LIMIT_MAX) {
		pr_err("prep_limit=%u: must be 1..%u percent\n", prep_limit,
		       TPLAN_PREP_LIMIT_MAX);
		return -EINVAL;
	}
	if (max_copy_sdma442 < (4U << 10) || max_copy_sdma442 > TPLAN_COPY_MAX_SDMA440) {
		pr_err("max_copy_sdma442=%u: must be 4 KiB..1 GiB\n", max_copy_sdma442);
		return -EINVAL;
	}
	tplan_params = (struct tplan_params) {
		.ring_size = ring_size,
		.prep_limit_pct = prep_limit,
		.max_copy_bytes_sdma440 = TPLAN_COPY_MAX_SDMA440,
		.max_copy_bytes_sdma442 = max_copy_sdma442,
		.allow_inject = allow_inject,
	};
	return 0;
}

static int tplan_info(struct tplan_ucmd *ucmd)
{
	struct tplan_info *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;

	cmd->abi_version = TPLAN_ABI_VERSION;
	cmd->engines = TPLAN_ENGINE_SOFT |
		       (tplan_kfd_engine_available() ? TPLAN_ENGINE_KFD : 0);
	cmd->ring_size = tplan_params.ring_size;
	cmd->prep_limit_pct = tplan_params.prep_limit_pct;
	cmd->max_world_size = TPLAN_MAX_WORLD_SIZE;
	cmd->max_copy_bytes_sdma440 = tplan_params.max_copy_bytes_sdma440;
	cmd->max_copy_bytes_sdma442 = tplan_params.max_copy_bytes_sdma442;
	return 0;
}

/* Large enough for any ioctl argument; checked by the table below. */
union tplan_ucmd_buffer {
	struct tplan_info info;
	struct tplan_group_join join;
	struct tplan_group_barrier barrier;
	struct tplan_group_all_gather all_gather;
	struct tplan_heap_info heap_info;
	struct tplan_put put;
	struct tplan_quiet quiet;
	struct tplan_queue_info queue_info;
	struct tplan_queue_inject queue_inject;
	struct tplan_chain_submit chain_submit;
	struct tplan_plan_create plan_create;
	struct tplan_plan_prepare plan_prepare;
	struct tplan_plan_start plan_start;
	struct tplan_plan_wait plan_wait;
	struct tplan_plan_next_round plan_next_round;
	struct tplan_plan_close plan_close;
	struct tplan_plan_state plan_state;
};

/* What goes back to the caller's struct. */
enum tplan_answer {
	TPLAN_ANSWER_NONE,	/* In fields only: never written back */
	TPLAN_ANSWER_OK,	/* on success */
	TPLAN_ANSWER_ALWAYS,	/* on failure too: it says why (a reject, a report) */
};

struct tplan_ioctl_op {
	unsigned int size;	/* sizeof() of the kernel's struct */
	unsigned int min_size;	/* end of the first published member set */
	unsigned int ioctl_num;
	enum tplan_answer answer;
	bool owner_only;	/* puts work on the rank's queues */
	int (*execute)(struct tplan_ucmd *ucmd);
};

#define __IOCTL_OP(_ioctl, _fn, _struct, _last, _answer, _owner)	\
	[_IOC_NR(_ioctl) - TPLAN_CMD_BASE] = {				\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(union tplan_ucmd_buffer) < \
					  sizeof(_struct)),		\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = _ioctl,					\
		.answer = _answer,					\
		.owner_only = _owner,					\
		.execute = _fn,						\
	}
#define IOCTL_OP(_ioctl, _fn, _struct, _last)				\
	__IOCTL_OP(_ioctl, _fn, _struct, _last, TPLAN_ANSWER_OK, false)
/* Structs of In fields only: a read-only one is fine, nothing is written. */
#define IOCTL_OP_IN(_ioctl, _fn, _struct, _last)			\
	__IOCTL_OP(_ioctl, _fn, _struct, _last, TPLAN_ANSWER_NONE, false)
/* For structs that say why a call failed (a reject, a shortfall report). */
#define IOCTL_OP_ANSWER_ON_ERROR(_ioctl, _fn, _struct, _last)		\
	__IOCTL_OP(_ioctl, _fn, _struct, _last, TPLAN_ANSWER_ALWAYS, false)
/*
 * Calls that put work on the rank's queues, or arm its plans: the
 * process that joined only (tplan_owner_check()).
 */
#define IOCTL_OP_OWNER(_ioctl, _fn, _struct, _last, _answer)		\
	__IOCTL_OP(_ioctl, _fn, _struct, _last, _answer, true)

static const struct tplan_ioctl_op tplan_ioctl_ops[] = {
	IOCTL_OP(TPLAN_IOC_INFO, tplan_info, struct tplan_info, max_copy_bytes_sdma442),
	IOCTL_OP(TPLAN_IOC_GROUP_JOIN, tplan_group_join, struct tplan_group_join, heap_base),
	IOCTL_OP_IN(TPLAN_IOC_GROUP_BARRIER, tplan_group_barrier, struct tplan_group_barrier,
		    __reserved),
	IOCTL_OP_IN(TPLAN_IOC_GROUP_ALL_GATHER, tplan_group_all_gather,
		    struct tplan_group_all_gather, out),
	IOCTL_OP(TPLAN_IOC_HEAP_INFO, tplan_heap_info, struct tplan_heap_info, mmap_offset),
	IOCTL_OP_OWNER(TPLAN_IOC_PUT, tplan_put, struct tplan_put, signal_offset,
		       TPLAN_ANSWER_NONE),
	IOCTL_OP_OWNER(TPLAN_IOC_QUIET, tplan_quiet, struct tplan_quiet, flags, TPLAN_ANSWER_NONE),
	IOCTL_OP(TPLAN_IOC_QUEUE_INFO, tplan_queue_info, struct tplan_queue_info, fault_reason),
	IOCTL_OP_OWNER(TPLAN_IOC_QUEUE_INJECT, tplan_queue_inject, struct tplan_queue_inject,
		       dwords, TPLAN_ANSWER_NONE),
	IOCTL_OP_OWNER(TPLAN_IOC_CHAIN_SUBMIT, tplan_chain_submit, struct tplan_chain_submit,
		       reject, TPLAN_ANSWER_ALWAYS),
	IOCTL_OP_OWNER(TPLAN_IOC_PLAN_CREATE, tplan_plan_create, struct tplan_plan_create,
		       gate_offset, TPLAN_ANSWER_OK),
	IOCTL_OP_OWNER(TPLAN_IOC_PLAN_PREPARE, tplan_plan_prepare, struct tplan_plan_prepare,
		       reject, TPLAN_ANSWER_ALWAYS),
	IOCTL_OP(TPLAN_IOC_PLAN_START, tplan_plan_start, struct tplan_plan_start, gate_offset),
	IOCTL_OP_ANSWER_ON_ERROR(TPLAN_IOC_PLAN_WAIT, tplan_plan_wait, struct tplan_plan_wait,
				 __reserved),
	IOCTL_OP_OWNER(TPLAN_IOC_PLAN_NEXT_ROUND, tplan_plan_next_round,
		       struct tplan_plan_next_round, round, TPLAN_ANSWER_OK),
	IOCTL_OP_ANSWER_ON_ERROR(TPLAN_IOC_PLAN_CLOSE, tplan_plan_close, struct tplan_plan_close,
				 state),
	IOCTL_OP(TPLAN_IOC_PLAN_STATE, tplan_plan_state, struct tplan_plan_state, round),
	IOCTL_OP(TPLAN_IOC_HEAP_EXPORT, tplan_heap_export, struct tplan_heap_export, fd),
	IOCTL_OP_IN(TPLAN_IOC_ADDR_MAP, tplan_addr_map_set, struct tplan_addr_map_set, heap_dev),
	IOCTL_OP_IN(TPLAN_IOC_QUEUE_ATTACH_KFD, tplan_queue_attach_kfd,
		    struct tplan_queue_attach_kfd, queue_id),
};

int tplan_ucmd_respond(struct tplan_ucmd *ucmd)
{
	/* Answer with as much of the struct as the caller knows about. */
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd, min(ucmd->user_size, ucmd->cmd_size)))
		return -EFAULT;
	ucmd->responded = true;
	return 0;
}

/* tplan_file_owner_check(); before the join, the call's own ENOTCONN. */
static int tplan_owner_check(struct tplan_file *tf)
{
	return tplan_file_group(tf) ? tplan_file_owner_check(tf) : 0;
}

static long tplan_fops_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct tplan_file *tf = filp->private_data;
	const struct tplan_ioctl_op *op;
	union tplan_ucmd_buffer buf;
	struct tplan_ucmd ucmd = {};
	unsigned int nr = _IOC_NR(cmd);
	long ret;

	if (_IOC_TYPE(cmd) != TPLAN_TYPE || nr < TPLAN_CMD_BASE ||
	    nr - TPLAN_CMD_BASE >= ARRAY_SIZE(tplan_ioctl_ops))
		return -ENOTTY;
	op = &tplan_ioctl_ops[nr - TPLAN_CMD_BASE];
	if (!op->execute || op->ioctl_num != cmd)
		return -ENOTTY;

	ucmd.tf = tf;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	/* No struct will ever be this large: do not scan megabytes for a tail. */
	if (ucmd.user_size > PAGE_SIZE)
		return -E2BIG;

	ucmd.cmd = &buf;
	ucmd.cmd_size = op->size;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer, ucmd.user_size);
	if (ret)
		return ret;
	/* After the answers every ioctl shares (EFAULT, EINVAL, E2BIG). */
	if (op->owner_only) {
		ret = tplan_owner_check(tf);
		if (ret)
			return ret;
	}

	ret = op->execute(&ucmd);
	/*
	 * A handler with something to commit answers before it commits
	 * (tplan_ucmd_respond()), so that EFAULT leaves nothing changed;
	 * what is left is an answer to a call that changed nothing.
	 */
	if (op->answer == TPLAN_ANSWER_NONE || (ret && op->answer == TPLAN_ANSWER_OK) ||
	    ucmd.responded)
		return ret;
	return tplan_ucmd_respond(&ucmd) ?: ret;
}

static int tplan_fops_open(struct inode *inode, struct file *filp)
{
	struct tplan_file *tf;

	tf = kzalloc(sizeof(*tf), GFP_KERNEL_ACCOUNT);
	if (!tf)
		return -ENOMEM;
	tf->coll_out = kcalloc(TPLAN_MAX_WORLD_SIZE, TPLAN_COLL_SLOT_BYTES, GFP_KERNEL_ACCOUNT);
	if (!tf->coll_out) {
		kfree(tf);
		return -ENOMEM;
	}
	/* What this file allocates is charged to whoever opened it. */
	tf->user = tplan_user_get(current_euid());
	if (!tf->user) {
		kfree(tf->coll_out);
		kfree(tf);
		return -ENOMEM;
	}
	atomic_set(&tf->join_state, TPLAN_JOIN_NONE);
	atomic64_set(&tf->prep_seq, 0);
	filp->private_data = tf;
	return 0;
}

static int tplan_fops_release(struct inode *inode, struct file *filp)
{
	struct tplan_file *tf = filp->private_data;

	tplan_group_leave(tf);
	if (tf->mm)
		mmdrop(tf->mm);
	tplan_user_put(tf->user);
	kfree(tf->coll_out);
	kfree(tf);
	return 0;
}

/* Called with mmap_lock held: takes no lock of tplan's (tplan_priv.h). */
static int tplan_fops_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (((u64)vma->vm_pgoff << PAGE_SHIFT) & TPLAN_MMAP_QUEUE)
		return tplan_queue_mmap(filp->private_data, vma);
	return tplan_group_mmap(filp->private_data, vma);
}

static const struct file_operations tplan_fops = {
	.owner = THIS_MODULE,
	.open = tplan_fops_open,
	.release = tplan_fops_release,
	.unlocked_ioctl = tplan_fops_ioctl,
	.mmap = tplan_fops_mmap,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice tplan_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "tplan",
	.fops = &tplan_fops,
	.mode = 0660,
};

static int __init tplan_init(void)
{
	int ret;

	ret = tplan_params_validate();
	if (ret)
		return ret;
	ret = tplan_limits_init();
	if (ret)
		return ret;

	tplan_debugfs_init();
	ret = misc_register(&tplan_misc);
	if (ret)
		goto err_debugfs;

	pr_info("ready: ring %u bytes, prepared-copy limit %u%%\n",
		tplan_params.ring_size, tplan_params.prep_limit_pct);
	return 0;

err_debugfs:
	tplan_debugfs_exit();
	return ret;
}

static void __exit tplan_exit(void)
{
	misc_deregister(&tplan_misc);
	tplan_kfd_engine_exit();
	tplan_debugfs_exit();
}

module_init(tplan_init);
module_exit(tplan_exit);

MODULE_DESCRIPTION("tplan: triggered copy-engine plans for node-local GPU groups");
MODULE_LICENSE("GPL");
