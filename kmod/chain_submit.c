// SPDX-License-Identifier: GPL-2.0
/*
 * TPLAN_IOC_CHAIN_SUBMIT: raw prepared chains onto one queue, validated
 * packet by packet, charged to the queue's budget, all or none.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "tplan_priv.h"
#include "queue.h"
#include "chain_validate.h"

int tplan_chain_submit(struct tplan_ucmd *ucmd)
{
	struct tplan_chain_submit *cmd = ucmd->cmd;
	struct tplan_file *tf = ucmd->tf;
	struct tplan_chain_image *images;
	struct tplan_chain_desc *descs;
	struct tplan_chain_env env;
	struct tplan_queue *q;
	struct tplan_group *g;
	u64 total = 0, heap;
	u32 *dw, i, at = 0;
	int ret;

	memset(&cmd->reject, 0, sizeof(cmd->reject));
	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (!cmd->nchains || cmd->nchains > TPLAN_CHAIN_SUBMIT_MAX || !cmd->ndw ||
	    cmd->ndw > TPLAN_CHAIN_SUBMIT_DWORDS_MAX)
		return -EINVAL;
	ret = tplan_queue_get(tf, cmd->peer, &q);
	if (ret)
		return ret;
	g = q->group;
	heap = g->heap_size;

	descs = kvmalloc_array(cmd->nchains, sizeof(*descs), TPLAN_GFP_USER_SIZED);
	images = kvmalloc_array(cmd->nchains, sizeof(*images), TPLAN_GFP_USER_SIZED);
	dw = kvmalloc_array(cmd->ndw, sizeof(*dw), TPLAN_GFP_USER_SIZED);
	if (!descs || !images || !dw) {
		ret = -ENOMEM;
		goto out_free;
	}
	if (copy_from_user(descs, u64_to_user_ptr(cmd->chains), cmd->nchains * sizeof(*descs)) ||
	    copy_from_user(dw, u64_to_user_ptr(cmd->dwords), cmd->ndw * sizeof(*dw))) {
		ret = -EFAULT;
		goto out_free;
	}

	/* Validate everything before touching the queue, in the sender's map. */
	env = (struct tplan_chain_env) {
		.limits = &g->limits,
		.src_start = tplan_heap_dev(g, tf->rank, tf->rank),
		.src_bytes = heap,
		.dst_start = tplan_heap_dev(g, tf->rank, cmd->peer),
		.dst_bytes = heap,
		.own_heap = tplan_heap_dev(g, tf->rank, tf->rank),
		.peer_heap = tplan_heap_dev(g, tf->rank, cmd->peer),
		.rank = tf->rank,
	};
	for (i = 0; i < cmd->nchains; i++) {
		const struct tplan_chain_desc *d = &descs[i];

		if (!d->ndw || d->ndw > cmd->ndw - at ||
		    !IS_ALIGNED(d->ready_offset, 8) || d->ready_offset > heap - 8 ||
		    !IS_ALIGNED(d->arrival_offset, 8) || d->arrival_offset > heap - 8) {
			ret = -EINVAL;
			goto out_free;
		}
		env.ready_gate = env.own_heap + d->ready_offset;
		env.arrival_gate = env.peer_heap + d->arrival_offset;
		ret = tplan_chain_validate(dw + at, d->ndw, i, &env, &cmd->reject);
		if (ret)
			goto out_free;
		images[i] = (struct tplan_chain_image) {
			.dw = dw + at, .ndw = d->ndw, .ref = d->ref,
			.raw = true, .raw_gate_off = d->ready_offset,
		};
		at += d->ndw;
		total += tplan_chain_charge(d->ndw);
	}
	if (at != cmd->ndw) {
		ret = -EINVAL;
		goto out_free;
	}

	ret = tplan_queue_usable(q);
	if (ret)
		goto out_free;
	/* The answer (no reject) goes out before anything is queued. */
	ret = tplan_ucmd_respond(ucmd);
	if (ret)
		goto out_free;
	ret = tplan_queue_budget_reserve(q, total);
	if (ret)
		goto out_free;
	ret = tplan_queue_write_chains(q, images, cmd->nchains, NULL);
	if (ret)
		tplan_queue_budget_unreserve(q, total);
out_free:
	kvfree(dw);
	kvfree(images);
	kvfree(descs);
	return ret;
}
