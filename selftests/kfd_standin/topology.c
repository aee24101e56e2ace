// SPDX-License-Identifier: GPL-2.0
/*
 * The topology, where KFD has it: /sys/class/kfd/kfd/topology, with
 * generation_id, system_properties and nodes/N/{gpu_id,name,properties}
 * and nodes/N/io_links/M/properties.  Node 0 is the CPU, nodes 1..gpus the
 * GPUs, each with a PCIe link to the CPU and an XGMI link to every other
 * GPU.  Properties are the ones libhsakmt and libtplan read, with values
 * of the chosen part; on KFD 1.17 each XGMI link recommends one SDMA
 * engine, a different one per peer, as KFD's table for an 8-GPU MI300X
 * hive does.
 */
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/slab.h>
#include <linux/device.h>

#include "standin.h"

#define STANDIN_IOLINK_PCIE	2
#define STANDIN_IOLINK_XGMI	11

struct standin_topo {
	struct kobject kobj;
	int node;			/* 0: the CPU, i + 1: GPU i */
	int link;			/* io_links/link, or -1 */
};

static struct kobject *standin_topology, *standin_nodes;
static struct standin_topo *standin_node_objs[STANDIN_MAX_GPUS + 1];
static struct kobject *standin_link_dirs[STANDIN_MAX_GPUS + 1];
static struct standin_topo *standin_link_objs[STANDIN_MAX_GPUS + 1][STANDIN_MAX_GPUS];

static ssize_t standin_prop(char *buf, ssize_t at, const char *name, u64 v)
{
	return at + sysfs_emit_at(buf, at, "%s %llu\n", name, v);
}

/* The GPU node a link of GPU g leads to (link 0: the CPU). */
static u32 standin_link_to(u32 g, u32 link)
{
	u32 peer = link - 1;

	return link == 0 ? 0 : (peer < g ? peer : peer + 1) + 1;
}

static ssize_t standin_node_properties(int node, char *buf)
{
	struct standin_gpu *g = node ? &standin_gpus[node - 1] : NULL;
	bool mi300 = g && g->gfx_target_version >= 90400;
	ssize_t n = 0;

	n = standin_prop(buf, n, "cpu_cores_count", g ? 0 : num_online_cpus());
	n = standin_prop(buf, n, "simd_count", g ? (mi300 ? 1216 : 440) : 0);
	n = standin_prop(buf, n, "mem_banks_count", 1);
	n = standin_prop(buf, n, "caches_count", 0);
	n = standin_prop(buf, n, "io_links_count", g ? standin_ngpus : 0);
	n = standin_prop(buf, n, "p2p_links_count", 0);
	n = standin_prop(buf, n, "cpu_core_id_base", 0);
	n = standin_prop(buf, n, "simd_id_base", g ? 0x80000000ULL + 0x1000 * g->index : 0);
	n = standin_prop(buf, n, "max_waves_per_simd", g ? 8 : 0);
	n = standin_prop(buf, n, "lds_size_in_kb", g ? 64 : 0);
	n = standin_prop(buf, n, "gds_size_in_kb", 0);
	n = standin_prop(buf, n, "num_gws", g ? 64 : 0);
	n = standin_prop(buf, n, "wave_front_size", g ? 64 : 0);
	n = standin_prop(buf, n, "array_count", g ? (mi300 ? 32 : 8) : 0);
	n = standin_prop(buf, n, "simd_arrays_per_engine", g ? 1 : 0);
	n = standin_prop(buf, n, "cu_per_simd_array", g ? (mi300 ? 10 : 14) : 0);
	n = standin_prop(buf, n, "simd_per_cu", g ? 4 : 0);
	n = standin_prop(buf, n, "max_slots_scratch_cu", g ? 32 : 0);
	n = standin_prop(buf, n, "gfx_target_version", g ? g->gfx_target_version : 0);
	n = standin_prop(buf, n, "vendor_id", g ? 0x1002 : 0);
	n = standin_prop(buf, n, "device_id", g ? (mi300 ? 0x74a1 : 0x740c) : 0);
	n = standin_prop(buf, n, "location_id", g ? (0x10 + g->index) << 8 : 0);
	n = standin_prop(buf, n, "domain", 0);
	n = standin_prop(buf, n, "drm_render_minor", g ? 128 + g->index : 0);
	n = standin_prop(buf, n, "hive_id", g ? 0x5354414e44494eULL : 0);
	n = standin_prop(buf, n, "num_sdma_engines", g ? g->num_pcie : 0);
	n = standin_prop(buf, n, "num_sdma_xgmi_engines", g ? g->num_xgmi : 0);
	n = standin_prop(buf, n, "num_sdma_queues_per_engine", g ? STANDIN_RLC_PER_ENGINE : 0);
	n = standin_prop(buf, n, "num_cp_queues", g ? 24 : 0);
	n = standin_prop(buf, n, "num_xcc", g ? (mi300 ? 8 : 1) : 0);
	n = standin_prop(buf, n, "max_engine_clk_fcompute", g ? (mi300 ? 2100 : 1700) : 0);
	n = standin_prop(buf, n, "max_engine_clk_ccompute", 2000);
	return n;
}

static ssize_t standin_link_properties(int node, int link, char *buf)
{
	struct standin_gpu *g = &standin_gpus[node - 1];
	u32 to = standin_link_to(g->index, link);
	bool xgmi = link > 0;
	ssize_t n = 0;

	n = standin_prop(buf, n, "type", xgmi ? STANDIN_IOLINK_XGMI : STANDIN_IOLINK_PCIE);
	n = standin_prop(buf, n, "version_major", 0);
	n = standin_prop(buf, n, "version_minor", 0);
	n = standin_prop(buf, n, "node_from", node);
	n = standin_prop(buf, n, "node_to", to);
	n = standin_prop(buf, n, "weight", xgmi ? 15 : 20);
	n = standin_prop(buf, n, "min_latency", 0);
	n = standin_prop(buf, n, "max_latency", 0);
	n = standin_prop(buf, n, "min_bandwidth", xgmi ? 50000 : 312);
	n = standin_prop(buf, n, "max_bandwidth", xgmi ? 50000 : 64000);
	n = standin_prop(buf, n, "recommended_transfer_size", 0);
#if KFD_IOCTL_MINOR_VERSION >= 17
	/* One XGMI engine per peer; the PCIe engines towards the CPU. */
	n = standin_prop(buf, n, "recommended_sdma_engine_id_mask",
			 xgmi ? 1ULL << (g->num_pcie + (link - 1) % g->num_xgmi) :
			 GENMASK(g->num_pcie - 1, 0));
#endif
	n = standin_prop(buf, n, "flags", 1);
	return n;
}

static ssize_t standin_topo_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	struct standin_topo *t = container_of(kobj, struct standin_topo, kobj);

	if (!strcmp(attr->name, "gpu_id"))
		return sysfs_emit(buf, "%u\n", t->node ? standin_gpus[t->node - 1].gpu_id : 0);
	if (!strcmp(attr->name, "name"))
		return sysfs_emit(buf, "%s\n", !t->node ? "" :
				  standin_gpus[t->node - 1].gfx_target_version >= 90400 ?
				  "gfx942" : "gfx90a");
	if (t->link >= 0)
		return standin_link_properties(t->node, t->link, buf);
	return standin_node_properties(t->node, buf);
}

static void standin_topo_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct standin_topo, kobj));
}

static const struct sysfs_ops standin_topo_ops = {
	.show = standin_topo_show,
};

static struct attribute standin_attr_gpu_id = { .name = "gpu_id", .mode = 0444 };
static struct attribute standin_attr_name = { .name = "name", .mode = 0444 };
static struct attribute standin_attr_properties = { .name = "properties", .mode = 0444 };

static struct attribute *standin_node_attrs[] = {
	&standin_attr_gpu_id, &standin_attr_name, &standin_attr_properties, NULL,
};
ATTRIBUTE_GROUPS(standin_node);

static struct attribute *standin_link_attrs[] = { &standin_attr_properties, NULL };
ATTRIBUTE_GROUPS(standin_link);

static const struct kobj_type standin_node_type = {
	.release = standin_topo_release,
	.sysfs_ops = &standin_topo_ops,
	.default_groups = standin_node_groups,
};

static const struct kobj_type standin_link_type = {
	.release = standin_topo_release,
	.sysfs_ops = &standin_topo_ops,
	.default_groups = standin_link_groups,
};

static ssize_t generation_id_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "1\n");
}

static ssize_t system_properties_show(struct kobject *kobj, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
}

static struct kobj_attribute standin_generation_id = __ATTR_RO(generation_id);
static struct kobj_attribute standin_system_properties = __ATTR_RO(system_properties);

static struct standin_topo *standin_topo_add(const struct kobj_type *type, struct kobject *parent,
					     int node, int link, const char *fmt, int n)
{
	struct standin_topo *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
	t->node = node;
	t->link = link;
	if (kobject_init_and_add(&t->kobj, type, parent, fmt, n)) {
		kobject_put(&t->kobj);
		return NULL;
	}
	return t;
}

int standin_topology_init(struct device *kfd_dev)
{
	u32 n, l;

	standin_topology = kobject_create_and_add("topology", &kfd_dev->kobj);
	if (!standin_topology)
		return -ENOMEM;
	if (sysfs_create_file(standin_topology, &standin_generation_id.attr) ||
	    sysfs_create_file(standin_topology, &standin_system_properties.attr))
		goto err;
	standin_nodes = kobject_create_and_add("nodes", standin_topology);
	if (!standin_nodes)
		goto err;
	for (n = 0; n <= standin_ngpus; n++) {
		standin_node_objs[n] = standin_topo_add(&standin_node_type, standin_nodes, n, -1,
							"%d", n);
		if (!standin_node_objs[n])
			goto err;
		standin_link_dirs[n] = kobject_create_and_add("io_links",
							      &standin_node_objs[n]->kobj);
		if (!standin_link_dirs[n])
			goto err;
		for (l = 0; n && l < standin_ngpus; l++) {
			standin_link_objs[n][l] = standin_topo_add(&standin_link_type,
								   standin_link_dirs[n], n, l,
								   "%d", l);
			if (!standin_link_objs[n][l])
				goto err;
		}
	}
	return 0;
err:
	standin_topology_exit();
	return -ENOMEM;
}

void standin_topology_exit(void)
{
	u32 n, l;

	for (n = 0; n <= STANDIN_MAX_GPUS; n++) {
		for (l = 0; l < STANDIN_MAX_GPUS; l++) {
			if (standin_link_objs[n][l])
				kobject_put(&standin_link_objs[n][l]->kobj);
			standin_link_objs[n][l] = NULL;
		}
		kobject_put(standin_link_dirs[n]);
		standin_link_dirs[n] = NULL;
		if (standin_node_objs[n])
			kobject_put(&standin_node_objs[n]->kobj);
		standin_node_objs[n] = NULL;
	}
	kobject_put(standin_nodes);
	standin_nodes = NULL;
	if (standin_topology) {
		sysfs_remove_file(standin_topology, &standin_generation_id.attr);
		sysfs_remove_file(standin_topology, &standin_system_properties.attr);
	}
	kobject_put(standin_topology);
	standin_topology = NULL;
}
