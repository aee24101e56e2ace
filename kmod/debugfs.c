// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: tplan/stats (what users hold: groups, queues, plans, bytes,
 * and the caps), and per group tplan/group-<key>-<serial>/ with a "group"
 * file and one "queue-<src>-<dst>" file per queue (pointers, pointer page,
 * sequences, doorbells, the engine's knobs and counters), "name: value"
 * lines, and a "maps" file, the joined ranks' address maps as a table, for
 * people and tests looking at a live group.  The serial number keeps two
 * groups of the same key apart.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "tplan_priv.h"
#include "queue.h"

static struct dentry *tplan_debugfs_root;

static int tplan_stats_show(struct seq_file *m, void *unused)
{
	tplan_limits_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tplan_stats);

static int tplan_group_show(struct seq_file *m, void *unused)
{
	struct tplan_group *g = m->private;
	u32 iomem = 0, r;

	mutex_lock(&g->lock);
	/* The joined ranks' heaps that the kernel reaches as I/O memory. */
	for (r = 0; r < g->world_size; r++)
		if (g->joined & BIT(r) && g->heaps[r].size && g->heaps[r].map.is_iomem)
			iomem |= BIT(r);
	seq_printf(m, "key: %llx\nid: %u\nworld_size: %u\njoined: 0x%x\nleft: 0x%x\nheap_size: %llu\n",
		   g->key, g->id, g->world_size, g->joined, g->left, g->heap_size);
	seq_printf(m, "heaps_iomem: 0x%x\n", iomem);
	seq_printf(m, "sdma_ip: 0x%06x\nmax_copy_bytes: %u\nbroken: %d\ncollectives: %llu\nplans: %u\n",
		   g->sdma_ip, g->limits.max_copy_bytes, g->broken, g->coll.seq, g->nplans);
	/* Per rank: how often its plan waits looked at the gates (each wake-up, and the first look). */
	seq_puts(m, "wait_looks:");
	for (r = 0; r < g->world_size; r++)
		seq_printf(m, " %lld", atomic64_read(&g->wait_looks[r]));
	seq_putc(m, '\n');
	mutex_unlock(&g->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tplan_group);

/*
 * One line per heap of each joined viewer's map, then its pointer-page
 * window (rank "qptr": one page per peer, page dst for queue viewer->dst).
 */
static int tplan_maps_show(struct seq_file *m, void *unused)
{
	struct tplan_group *g = m->private;
	u32 v, r;

	seq_puts(m, "viewer rank base size\n");
	mutex_lock(&g->lock);
	for (v = 0; v < g->world_size; v++) {
		if (!(g->joined & BIT(v)))
			continue;
		for (r = 0; r < g->world_size; r++)
			seq_printf(m, "%u %u 0x%016llx 0x%llx\n", v, r, tplan_heap_dev(g, v, r),
				   g->heap_size);
		seq_printf(m, "%u qptr 0x%016llx 0x%llx\n", v, tplan_group_qptr_dev(g, v, 0),
			   (u64)g->world_size * PAGE_SIZE);
	}
	mutex_unlock(&g->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tplan_maps);

static int tplan_queue_show(struct seq_file *m, void *unused)
{
	struct tplan_queue *q = m->private;
	u64 wptr = READ_ONCE(q->wptr);

	/* wraps: times the writer went past the ring end, padded or not */
	seq_printf(m, "rptr: %llu\nwptr: %llu\nwraps: %llu\nring_size: %u\npackets: %llu\n",
		   tplan_queue_rptr(q), wptr, wptr / q->ring_size,
		   q->ring_size, READ_ONCE(q->packets));
	seq_printf(m, "prep_charged: %u\nprep_reserved: %u\nprep_limit: %u\nstate: %u\n",
		   READ_ONCE(q->prep_charged), READ_ONCE(q->prep_reserved), q->prep_limit,
		   tplan_queue_state(q));
	/* The pointer page as the engine left it, and what the module handed out. */
	seq_printf(m, "page_wptr: %llu\npage_rptr: %llu\ngate_seq: %u\ngate_next: %u\n",
		   READ_ONCE(q->ptr->wptr), READ_ONCE(q->ptr->rptr), READ_ONCE(q->ptr->gate_seq),
		   READ_ONCE(q->gate_next));
	seq_printf(m, "ptr_dev: 0x%llx\n", q->ptr_dev);
	seq_printf(m, "done_seq: %u\ndone_last: %llu\ndoorbells: %lld\nengine: %s\n",
		   READ_ONCE(q->ptr->done_seq), READ_ONCE(q->done_last),
		   (long long)atomic64_read(&q->doorbells), q->engine->name);
	q->engine->show(m, q);
	if (tplan_queue_fault_state(q) == TPLAN_QUEUE_FAULT)
		seq_printf(m, "fault_offset: %llu\nfault_dword: 0x%08x\nfault_reason: %u\n",
			   q->fault_offset, q->fault_dword, q->fault_reason);
	else
		seq_puts(m, "fault_offset: 0\nfault_dword: 0x00000000\nfault_reason: 0\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tplan_queue);

void tplan_debugfs_init(void)
{
	tplan_debugfs_root = debugfs_create_dir("tplan", NULL);
	debugfs_create_file("stats", 0444, tplan_debugfs_root, NULL, &tplan_stats_fops);
}

void tplan_debugfs_exit(void)
{
	debugfs_remove_recursive(tplan_debugfs_root);
}

void tplan_debugfs_group_add(struct tplan_group *g)
{
	char name[48];

	snprintf(name, sizeof(name), "group-%016llx-%u", g->key, g->id);
	g->debugfs = debugfs_create_dir(name, tplan_debugfs_root);
	debugfs_create_file("group", 0444, g->debugfs, g, &tplan_group_fops);
	debugfs_create_file("maps", 0444, g->debugfs, g, &tplan_maps_fops);
}

void tplan_debugfs_queue_add(struct tplan_queue *q)
{
	char name[32];

	snprintf(name, sizeof(name), "queue-%u-%u", q->src, q->dst);
	q->debugfs = debugfs_create_file(name, 0444, q->group->debugfs, q, &tplan_queue_fops);
}
