// SPDX-License-Identifier: GPL-2.0
/*
 * hw_check: the test-node protocol of tplan's KFD engine, the steps a
 * program can take on KFD and tplan.ko (kfd-queues.md section 5, numbered
 * as there; docs/test-node.md says how to read each result).
 * scripts/hw-check.sh (make hw-check) runs it on an MI200/MI300 node, then
 * the steps that need tplan's KFD engine end to end.
 *
 *   hw_check [-g GPU] [-s STEP,...] [-q] [--standin]
 *
 *   -g GPU     the GPU (index among KFD's GPU nodes) the steps run on
 *              (default 0); its peer is the next one
 *   -s STEPS   only these steps (numbers, comma separated)
 *   -q         quick: fewer rounds, shorter waits, no ring above 8 MiB
 *   --standin  run over the tests' KFD stand-in (selftests/kfd_standin),
 *              which this otherwise refuses: the figures then say nothing
 *              about hardware, only that every step runs to its end
 *
 * Every check prints one line:
 *   PASS|FAIL|SKIP|INFO  STEP  what: what was measured  [expect: ...]
 * INFO is a fact with no wrong answer that decides something in tplan
 * (docs/test-node.md says what).  After each step the kernel log is read
 * (/dev/kmsg, as root): a GPU VM fault, a reset, a warning is a FAIL.
 * The last line counts them.  Exit status: 0 no FAIL, 1 a FAIL, 2 usage,
 * 4 nothing to check here (no /dev/kfd, or the stand-in without --standin).
 *
 * Steps 12 and 20 (the HIP example, the benchmarks) are commands that
 * scripts/hw-check.sh runs; step 3 needs tplan.ko's KFD engine, steps 2
 * and 14 tplan.ko, and SKIP without.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "hw_queue.h"
#include "kfd.h"
#include "libtplan.h"

enum { ST_PASS, ST_FAIL, ST_SKIP, ST_INFO };
static const char *const st_name[] = { "PASS", "FAIL", "SKIP", "INFO" };

#define MS 1000ULL			/* microseconds */
#define SENTINEL 0x5e47195e47195e47ULL

struct hc {
	struct kt k;			/* raw KFD (selftests/tplan_kfd.h) */
	struct tplan_kfd kf;		/* libtplan's KFD glue: its topology and engine choice */
	uint32_t gpu, peer;
	int quick, standin;
	int kmsg_fd;
	int kver_major, kver_minor;
	unsigned int count[4];
	const char *step;		/* the step running */
	int sdma_fw_feature;		/* -1: unknown */
	int have_tplan;			/* /dev/tplan */
};

static void report(struct hc *c, int st, const char *expect, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report(struct hc *c, int st, const char *expect, const char *fmt, ...)
{
	va_list ap;

	c->count[st]++;
	printf("%s %-3s ", st_name[st], c->step);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (expect)
		printf("  [expect: %s]", expect);
	printf("\n");
	fflush(stdout);
}

static double us(int64_t ns)
{
	return ns / 1000.0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n ? v[n / 2] : 0;
}

static const char *gfx_name(uint32_t gfx)
{
	if (gfx == 90010)
		return "MI200, gfx90a, SDMA 4.4.0";
	if (gfx >= 90402 && gfx <= 90407)
		return "MI300, gfx94x, SDMA 4.4.2";
	return "not an MI200/MI300";
}

static int is_sdma442(const struct hc *c)
{
	return c->k.gpu[c->gpu].gfx >= 90402;
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case TPLAN_KFD_QUEUE_TYPE_SDMA: return "SDMA";
	case TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI: return "SDMA_XGMI";
	case TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID: return "SDMA_BY_ENG_ID";
	}
	return "?";
}

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return 0;
}

/* ---- the kernel log ------------------------------------------------------ */

/* What in the kernel log fails a step: the GPU faulted, reset, hung, or the kernel warned. */
static int kmsg_bad(const char *msg)
{
	static const char *const bad[] = {
		"page fault", "protection_fault", "vm fault", "gpu reset", "ring reset",
		" timeout", "timed out", "hang detected", "hws hang", "unrecoverable",
		"mes failed", "failed to unmap", "failed to remove", "failed to evict",
		"failed to restore", "warning:", "bug:", "oops", "kasan", "ubsan",
		"circular locking", "blocked for more than", "general protection", NULL,
	};
	char low[512];
	size_t i;

	for (i = 0; msg[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)msg[i]);
	low[i] = 0;
	for (i = 0; bad[i]; i++)
		if (strstr(low, bad[i]))
			return 1;
	return 0;
}

static void kmsg_open(struct hc *c)
{
	c->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->kmsg_fd >= 0)
		lseek(c->kmsg_fd, 0, SEEK_END);
}

/*
 * New kernel messages since the last look: a FAIL for what kmsg_bad()
 * names, or an INFO after a step where a stopped queue is one of the
 * answers (its child process's queue faulted).
 */
static void kmsg_check(struct hc *c, int faults_ok)
{
	char rec[1024], first[300] = "";
	unsigned int nbad = 0;
	ssize_t n;
	char *msg;

	if (c->kmsg_fd < 0)
		return;
	for (;;) {
		n = read(c->kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = 0;
		if (kmsg_bad(msg) && !nbad++)
			snprintf(first, sizeof(first), "%.290s", msg);
	}
	if (nbad)
		report(c, faults_ok ? ST_INFO : ST_FAIL, faults_ok ? "a fault of the child's queue "
		       "is one of this step's answers; nothing else" : "no GPU fault, reset, hang or "
		       "kernel warning", "the kernel log during step %s: %u line%s, the first: %s",
		       c->step, nbad, nbad > 1 ? "s" : "", first);
}

/* ---- helpers of the steps ------------------------------------------------ */

/* A raw queue of type on GPU gpu with a fresh anonymous ring of ring_size bytes. */
static int queue(struct hc *c, uint32_t gpu, uint32_t type, uint32_t engine, uint32_t ring_size,
		 struct hw_queue *q)
{
	struct hw_queue_params p = {
		.type = type, .engine = engine, .ring_size = ring_size, .priority = 15,
	};

	return hw_queue_create(&c->k, gpu, &p, q);
}

/* Host words the engine writes (FENCEs) and reads (gates): one page per 16 words. */
static volatile uint32_t *word32(struct hw_mem *host, unsigned int i)
{
	return (volatile uint32_t *)((char *)host->p + 64 * i);
}

static volatile uint64_t *word64(struct hw_mem *host, unsigned int i)
{
	return (volatile uint64_t *)((char *)host->p + 64 * i);
}

/* FENCE(data) then commit, and the time until it lands; -ETIMEDOUT. */
static int64_t fence_and_wait(struct hw_queue *q, volatile uint32_t *w, uint32_t data,
			      uint64_t timeout_us)
{
	hw_fence(q, w, data);
	hw_commit(q);
	return hw_wait_u32(w, data, timeout_us);
}

/* A tplan group of two ranks; rank 1 is a child process that waits in a barrier. */
struct group {
	struct tplan_ctx *ctx;
	pid_t child;
};

static int group_setup(struct group *g, uint32_t engine, uint32_t sdma_ip, uint64_t heap)
{
	struct tplan_join_params jp = {
		.key = ((uint64_t)getpid() << 20) ^ hw_now_ns(), .world_size = 2,
		.heap_size = heap, .engine = engine, .sdma_ip = sdma_ip, .timeout_ms = 60000,
	};
	int ret;

	memset(g, 0, sizeof(*g));
	fflush(stdout);
	g->child = fork();
	if (g->child < 0)
		return -errno;
	if (g->child == 0) {
		struct tplan_ctx *ctx;

		jp.rank = 1;
		if (tplan_ctx_open(&ctx, NULL) || tplan_ctx_join(ctx, &jp))
			_exit(1);
		tplan_barrier(ctx, 600000);
		tplan_ctx_close(ctx);
		_exit(0);
	}
	ret = tplan_ctx_open(&g->ctx, NULL);
	if (!ret)
		ret = tplan_ctx_join(g->ctx, &jp);
	return ret;
}

static void group_teardown(struct group *g)
{
	if (g->ctx) {
		tplan_barrier(g->ctx, 5000);
		tplan_ctx_close(g->ctx);
	}
	if (g->child > 0) {
		kill(g->child, SIGKILL);	/* it may still wait to join */
		waitpid(g->child, NULL, 0);
	}
	memset(g, 0, sizeof(*g));
}

/* The (rank 0 -> 1) queue's ring and pointer page, made and mapped. */
static int tplan_queue_memory(struct group *g, struct tplan_queue_info *qi, void **ring,
			      void **ptr)
{
	int fd = tplan_ctx_fd(g->ctx);

	memset(qi, 0, sizeof(*qi));
	qi->size = sizeof(*qi);
	qi->peer = 1;
	qi->flags = TPLAN_QUEUE_INFO_MAKE;
	if (ioctl(fd, TPLAN_IOC_QUEUE_INFO, qi))
		return -errno;
	*ring = mmap(NULL, qi->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     (off_t)qi->ring_mmap_offset);
	if (*ring == MAP_FAILED)
		return -errno;
	*ptr = mmap(NULL, HW_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)qi->ptr_mmap_offset);
	if (*ptr == MAP_FAILED) {
		munmap(*ring, qi->ring_size);
		return -errno;
	}
	return 0;
}

/*
 * A check whose outcome may be a dead queue (a VM fault stops every queue
 * of the process, as KFD evicts them): run in a child process, a KFD
 * process of its own, which writes back one line.
 */
struct outcome {
	int st;
	char msg[600];
};

typedef void (*isolated_fn)(struct hc *c, struct kt *k, struct outcome *o);

static void isolated(struct hc *c, const char *expect, const char *what, isolated_fn fn,
		     unsigned int timeout_s)
{
	struct outcome o = { ST_FAIL, "" };
	int fds[2], status = 0;
	struct timeval tv = { timeout_s, 0 };
	fd_set rd;
	pid_t pid;

	if (pipe(fds)) {
		report(c, ST_FAIL, expect, "%s: pipe: %s", what, strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct kt k;
		int ret;

		close(fds[0]);
		ret = kt_open(&k);
		if (!ret)
			ret = kt_acquire(&k, c->gpu);
		if (ret)
			snprintf(o.msg, sizeof(o.msg), "%s: a KFD process of its own: %s", what,
				 strerror(-ret));
		else
			fn(c, &k, &o);
		if (write(fds[1], &o, sizeof(o)) != sizeof(o))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	FD_ZERO(&rd);
	FD_SET(fds[0], &rd);
	if (pid < 0 || select(fds[0] + 1, &rd, NULL, NULL, &tv) != 1 ||
	    read(fds[0], &o, sizeof(o)) != sizeof(o)) {
		o.st = ST_FAIL;
		snprintf(o.msg, sizeof(o.msg), "%s: its process did not answer in %u s", what, timeout_s);
	}
	close(fds[0]);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	report(c, o.st, expect, "%s", o.msg);
}

/* 1 MiB of the GPU's VRAM for gates and copies: the stand-in polls and copies only there. */
static int scratch(struct kt *k, uint32_t gpu, struct hw_mem *vram)
{
	int ret = hw_vram(k, gpu, 1 << 20, vram, NULL);

	if (!ret)
		memset(vram->p, 0, 64 << 10);
	return ret;
}

/* The software engine must leave a queue alone that KFD runs: no quirk reads its pointer page. */
static int tplan_quirks_off(struct hc *c, char *why, size_t len)
{
	char q[64] = "";

	if (!c->have_tplan) {
		snprintf(why, len, "needs tplan.ko loaded (/dev/tplan): insmod tplan.ko");
		return 0;
	}
	if (!read_line("/sys/module/tplan/parameters/soft_quirks", q, sizeof(q)) &&
	    strcmp(q, "off") && q[0]) {
		snprintf(why, len, "tplan.ko's soft_quirks=%s would make its software engine read "
			 "this queue's pointer page: reload it with soft_quirks=off", q);
		return 0;
	}
	return 1;
}

/* libtplan's KFD glue on the VM this process acquired already (hw_check's render files). */
static void kf_share_vm(struct hc *c, struct tplan_kfd *kf)
{
	uint32_t i;

	for (i = 0; i < kf->ngpus && i < c->k.ngpus; i++)
		if (c->k.render_fd[i] >= 0 && kf->gpu[i].render_fd < 0)
			kf->gpu[i].render_fd = dup(c->k.render_fd[i]);
}

/* ---- 0: inventory -------------------------------------------------------- */

static void sdma_firmware(struct hc *c, uint32_t gpu)
{
	char path[128], line[256];
	int feature = -1, fw_feature, n = 0;
	unsigned int fw;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%u/amdgpu_firmware_info",
		 c->k.gpu[gpu].render_minor >= 128 ? c->k.gpu[gpu].render_minor - 128 : 0);
	f = fopen(path, "re");
	if (!f) {
		report(c, ST_SKIP, ">= 20: burst NOP", "SDMA firmware of GPU %u: %s unreadable (%s; "
		       "as root, with debugfs mounted)", gpu, path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SDMA%*d feature version: %d, firmware version: 0x%x", &fw_feature,
			   &fw) == 2) {
			if (feature < 0 || fw_feature < feature)
				feature = fw_feature;
			n++;
		}
	fclose(f);
	if (n == 0) {
		report(c, ST_SKIP, ">= 20: burst NOP", "SDMA firmware of GPU %u: no SDMA line in %s",
		       gpu, path);
		return;
	}
	if (gpu == c->gpu)
		c->sdma_fw_feature = feature;
	report(c, feature >= 20 ? ST_PASS : ST_INFO,
	       ">= 20: burst NOP (tplan's NOP padding is right either way: step 6)",
	       "SDMA firmware of GPU %u: feature version %d (lowest of %d engines)%s", gpu, feature,
	       n, feature >= 20 ? "" : ": no burst NOP");
}

static void step_inventory(struct hc *c)
{
	char path[160], buf[128], masks[512];
	const char *expect_kfd = "1.11 on 6.1, 1.17 on 6.12";
	struct utsname u;
	long long v;
	uint32_t i, j;
	size_t at;
	int ok;

	uname(&u);
	report(c, ST_INFO, NULL, "kernel %s, %u GPU%s on KFD", u.release, c->k.ngpus,
	       c->k.ngpus == 1 ? "" : "s");
	if (c->kver_major == 6 && c->kver_minor == 1)
		ok = c->k.major == 1 && c->k.minor == 11;
	else if (c->kver_major == 6 && c->kver_minor == 12)
		ok = c->k.major == 1 && c->k.minor == 17;
	else {
		ok = c->k.major == 1 && c->k.minor >= 11;
		expect_kfd = "1.11 or later";
	}
	report(c, ok ? ST_PASS : ST_FAIL, expect_kfd, "KFD version (AMDKFD_IOC_GET_VERSION): %u.%u",
	       c->k.major, c->k.minor);

	for (i = 0; i < c->k.ngpus; i++) {
		struct kt_gpu *g = &c->k.gpu[i];

		ok = (g->gfx == 90010 || (g->gfx >= 90402 && g->gfx <= 90407)) &&
			g->queues_per_engine == 8;
		report(c, ok ? ST_PASS : ST_FAIL,
		       "gfx_target_version 90010 or 90402..90407; 8 queues per engine",
		       "GPU %u: node %u, gpu_id %u, gfx_target_version %u (%s), %u SDMA + %u XGMI "
		       "engines, %u queues per engine, renderD%u", i, g->node, g->gpu_id, g->gfx,
		       gfx_name(g->gfx), g->num_sdma, g->num_xgmi, g->queues_per_engine,
		       g->render_minor);
	}
	if (c->kf.fd >= 0 && c->kf.minor >= 17 && c->kf.ngpus > 1) {
		for (i = 0; i < c->kf.ngpus; i++) {
			at = 0;
			masks[0] = 0;
			for (j = 0; j < c->kf.ngpus && at < sizeof(masks) - 32; j++)
				if (j != i)
					at += (size_t)snprintf(masks + at, sizeof(masks) - at, "%s%u:0x%llx",
							       at ? " " : "", j,
							       (unsigned long long)c->kf.gpu[i].rec_mask[j]);
			report(c, ST_INFO, NULL, "GPU %u: recommended_sdma_engine_id_mask towards GPU %s",
			       i, masks);
		}
	}

	v = read_ll("/sys/module/amdgpu/parameters/sched_policy");
	if (v < 0)
		report(c, ST_SKIP, "0 (HWS)", "amdgpu sched_policy: no /sys/module/amdgpu/parameters/sched_policy");
	else
		report(c, v == 0 ? ST_PASS : ST_FAIL, "0 (HWS)", "amdgpu sched_policy: %lld", v);
	v = read_ll("/sys/module/amdgpu/parameters/sdma_phase_quantum");
	if (v < 0)
		report(c, ST_SKIP, "32", "amdgpu sdma_phase_quantum: not readable");
	else
		report(c, v == 32 ? ST_PASS : ST_INFO, "32", "amdgpu sdma_phase_quantum: %lld", v);
	for (i = 0; i < c->k.ngpus; i++)
		sdma_firmware(c, i);

	/* MI300 partitions (step 19): what each card says of itself. */
	for (i = 0; i < 64; i++) {
		char mem[64] = "";

		snprintf(path, sizeof(path), "/sys/class/drm/card%u/device/current_compute_partition", i);
		if (read_line(path, buf, sizeof(buf)))
			continue;
		snprintf(path, sizeof(path), "/sys/class/drm/card%u/device/current_memory_partition", i);
		read_line(path, mem, sizeof(mem));
		report(c, ST_INFO, NULL, "card%u: compute partition %s, memory partition %s", i, buf,
		       mem[0] ? mem : "?");
	}
}

/* ---- 1: raw KFD bring-up ------------------------------------------------- */

static void step_raw(struct hc *c)
{
	struct hw_queue q;
	struct hw_mem host;
	int64_t tf, tr;
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 1 << 20, &q);
	if (ret) {
		report(c, ST_FAIL, "0", "USERPTR ring and pointer page, CREATE_QUEUE (SDMA): %s",
		       strerror(-ret));
		hw_mem_free(&c->k, &host);
		return;
	}
	hw_nops(&q, 16);
	tf = fence_and_wait(&q, word32(&host, 0), 0xC0FFEE, 1000 * MS);
	tr = hw_wait_u64(&q.ptr[1], q.wptr, 1000 * MS);
	if (tf >= 0 && tr >= 0)
		report(c, ST_PASS, "the FENCE lands; rptr = wptr, in bytes",
		       "NOP + FENCE on an anonymous USERPTR ring (1 MiB): FENCE 0x%x %.1f us after "
		       "the doorbell, rptr = wptr = %llu %.1f us after that; doorbell offset 0x%llx",
		       *word32(&host, 0), us(tf), (unsigned long long)hw_rptr(&q), us(tr),
		       (unsigned long long)q.args.doorbell_offset);
	else
		report(c, ST_FAIL, "the FENCE lands; rptr = wptr, in bytes",
		       "NOP + FENCE: FENCE word 0x%x, rptr %llu, wptr %llu after 1 s",
		       *word32(&host, 0), (unsigned long long)hw_rptr(&q),
		       (unsigned long long)q.wptr);
	hw_queue_destroy(&q);
	hw_mem_free(&c->k, &host);
}

/* ---- 2: tplan's pages as ring and pointer page --------------------------- */

static void step_module_pages(struct hc *c)
{
	struct tplan_queue_info qi;
	struct tplan_kfd_queue tq;
	struct tplan_kfd kf, kf2;
	struct hw_mem host, m1, m2;
	struct hw_queue q;
	struct group g;
	void *ring = NULL, *ptr = NULL, *ro;
	char why[256];
	int64_t tf;
	int ret;

	if (!tplan_quirks_off(c, why, sizeof(why))) {
		report(c, ST_SKIP, NULL, "tplan's queue memory as a KFD queue: %s", why);
		return;
	}
	memset(&kf, 0, sizeof(kf));
	kf.fd = -1;
	ret = group_setup(&g, TPLAN_ENGINE_SOFT, 0, 1 << 20);
	if (!ret)
		ret = tplan_queue_memory(&g, &qi, &ring, &ptr);
	if (!ret)
		ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (ret) {
		report(c, ST_FAIL, NULL, "a tplan group of 2, the queue's ring and pointer page mapped: %s",
		       strerror(-ret));
		group_teardown(&g);
		return;
	}

	/* libtplan's own acquire, on a VM another file acquired (as HIP's is): KFD says EBUSY. */
	ret = tplan_kfd_open(&kf2, NULL);
	if (!ret) {
		ret = tplan_kfd_acquire_vm(&kf2, c->gpu);
		report(c, ret ? ST_FAIL : ST_PASS,
		       "0: the VM is this process's already (ROCr's, or here hw_check's)",
		       "libtplan's tplan_kfd_acquire_vm() after another render-node file acquired the "
		       "GPU's VM: %s", ret ? strerror(-ret) : "0");
		tplan_kfd_close(&kf2);
	}

	ret = tplan_kfd_open(&kf, NULL);
	if (!ret) {
		kf_share_vm(c, &kf);
		ret = tplan_kfd_queue_create(&kf, c->gpu, c->peer, ring, qi.ring_size, ptr, &tq);
	}
	if (ret) {
		report(c, ST_FAIL, "0 on 6.1 and 6.12",
		       "tplan's ring (%u bytes) and pointer page as USERPTR buffers, CREATE_QUEUE "
		       "(libtplan's tplan_kfd_queue_create()): %s", qi.ring_size, strerror(-ret));
		goto out;
	}
	memset(&q, 0, sizeof(q));
	q.ring = ring;
	q.ring_size = qi.ring_size;
	q.ptr = ptr;
	q.doorbell = tq.doorbell;
	q.wptr = q.committed = q.ptr[0];
	hw_nops(&q, 16);
	tf = fence_and_wait(&q, word32(&host, 0), 0xC0FFEE, 1000 * MS);
	report(c, tf >= 0 ? ST_PASS : ST_FAIL, "0 on 6.1 and 6.12; the FENCE lands",
	       "tplan's ring (%u bytes) and pointer page as a KFD queue (%s, engine %u, towards GPU "
	       "%u): NOP + FENCE %s", qi.ring_size, type_name(tq.type), tq.engine, c->peer,
	       tf >= 0 ? "landed" : "did not land in 1 s");

	/* A VM_IO | VM_PFNMAP mapping (KFD's own doorbells) is no user memory for amdgpu. */
	ret = hw_userptr_at(&c->k, c->gpu, (void *)((uintptr_t)tq.doorbell & ~(uintptr_t)(HW_PAGE - 1)),
			    HW_PAGE, 0, &m1);
	report(c, ret == -EFAULT ? ST_PASS : ST_FAIL, "EFAULT (hmm_range_fault refuses VM_PFNMAP)",
	       "USERPTR of a VM_PFNMAP mapping (the doorbell page): %s", ret ? strerror(-ret) : "0");
	if (!ret)
		hw_mem_free(&c->k, &m1);
	ro = mmap(NULL, HW_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ret = ro == MAP_FAILED ? -errno : hw_userptr_at(&c->k, c->gpu, ro, HW_PAGE, 0, &m1);
	report(c, ret == -EPERM ? ST_PASS : ST_FAIL, "EPERM (a writable buffer needs a writable VMA)",
	       "USERPTR of a read-only mapping: %s", ret ? strerror(-ret) : "0");
	if (!ret)
		hw_mem_free(&c->k, &m1);
	if (ro != MAP_FAILED)
		munmap(ro, HW_PAGE);
	tplan_kfd_queue_destroy(&kf, &tq);

	/* KFD 1.17's kfd_queue_acquire_buffers: exactly ring_size, exactly one page. */
	if (c->k.minor >= 17) {
		struct hw_queue_params p = { .ring_size = 64 << 10, .registered = 1 };
		struct hw_queue bad;

		ret = hw_userptr(&c->k, c->gpu, 128 << 10, 0, &m1);
		if (!ret)
			ret = hw_userptr(&c->k, c->gpu, HW_PAGE, 0, &m2);
		if (!ret) {
			p.ring = m1.p;
			p.ptr = m2.p;
			ret = hw_queue_create(&c->k, c->gpu, &p, &bad);
			report(c, ret == -EINVAL ? ST_PASS : ST_FAIL, "EINVAL on KFD 1.17",
			       "a 64 KiB ring in a 128 KiB buffer: %s", ret ? strerror(-ret) : "0");
			if (!ret)
				hw_queue_destroy(&bad);
			hw_mem_free(&c->k, &m2);
			hw_mem_free(&c->k, &m1);
		}
		ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &m1);
		if (!ret)
			ret = hw_userptr(&c->k, c->gpu, 2 * HW_PAGE, 0, &m2);
		if (!ret) {
			p.ring = m1.p;
			p.ptr = m2.p;
			ret = hw_queue_create(&c->k, c->gpu, &p, &bad);
			report(c, ret == -EINVAL ? ST_PASS : ST_FAIL, "EINVAL on KFD 1.17",
			       "the pointer page in a buffer of 2 pages: %s", ret ? strerror(-ret) : "0");
			if (!ret)
				hw_queue_destroy(&bad);
			hw_mem_free(&c->k, &m2);
			hw_mem_free(&c->k, &m1);
		}
	}
out:
	if (kf.fd >= 0)
		tplan_kfd_close(&kf);
	hw_mem_free(&c->k, &host);
	munmap(ring, qi.ring_size);
	munmap(ptr, HW_PAGE);
	group_teardown(&g);
}

/* ---- 3: the doorbell from the kernel ------------------------------------- */

static void step_kernel_doorbell(struct hc *c)
{
	struct tplan_info info = { .size = sizeof(info) };
	struct hw_mem host;
	struct hw_queue q;
	struct group g;
	uint64_t off, t0;
	int64_t t;
	int ret, status;
	pid_t pid;

	/* A 32-bit write to a 64-bit doorbell (raw): documents why tplan writes 64 bits. */
	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 4096, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "a raw queue: %s", strerror(-ret));
	} else {
		hw_fence(&q, word32(&host, 0), 1);
		__atomic_store_n(&q.ptr[0], q.wptr, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*(volatile uint32_t *)q.doorbell = (uint32_t)q.wptr;
		t = hw_wait_u32(word32(&host, 0), 1, 200 * MS);
		report(c, ST_INFO, "it does not run, or runs: tplan writes 64 bits (put_user of a u64)",
		       "a 32-bit doorbell write: the FENCE %s", t >= 0 ? "ran" : "did not run in 200 ms");
		hw_commit(&q);
		t = hw_wait_u32(word32(&host, 0), 1, 1000 * MS);
		report(c, t >= 0 ? ST_PASS : ST_FAIL, "it runs",
		       "the same wptr rung with 64 bits after it: the FENCE %s",
		       t >= 0 ? "ran" : "did not run in 1 s: the queue is stuck");
		hw_queue_destroy(&q);
	}
	hw_mem_free(&c->k, &host);

	/* The module rings the doorbell: put + quiet through tplan's KFD engine. */
	if (!c->have_tplan) {
		report(c, ST_SKIP, NULL, "the doorbell from tplan.ko: needs tplan.ko loaded (/dev/tplan)");
		return;
	}
	{
		struct tplan_ctx *ctx = NULL;

		ret = tplan_ctx_open(&ctx, NULL);
		if (!ret)
			ret = tplan_query_info(ctx, &info);
		tplan_ctx_close(ctx);
	}
	if (ret || !(info.engines & TPLAN_ENGINE_KFD)) {
		report(c, ST_SKIP, NULL, "the doorbell from tplan.ko: needs tplan.ko's KFD engine "
		       "(tplan_info.engines: 0x%x, no TPLAN_ENGINE_KFD)", info.engines);
		return;
	}
	ret = group_setup(&g, TPLAN_ENGINE_KFD, is_sdma442(c) ? TPLAN_SDMA_442 : TPLAN_SDMA_440,
			  4 << 20);
	if (!ret)
		ret = tplan_heap_alloc(g.ctx, 1 << 20, 4096, &off);
	if (ret) {
		report(c, ST_FAIL, NULL, "a KFD-engine group of 2 ranks, a heap allocation: %s",
		       strerror(-ret));
		group_teardown(&g);
		return;
	}
	t0 = hw_now_ns();
	ret = tplan_put(g.ctx, 1, off, off, 64 << 10);
	if (!ret)
		ret = tplan_quiet(g.ctx, 1, 5000);
	t = (int64_t)(hw_now_ns() - t0);
	report(c, ret ? ST_FAIL : ST_PASS, "0: the module's doorbell (put_user in the owner's ioctl) runs it",
	       "put + quiet of 64 KiB to rank 1 through tplan.ko's KFD engine: %s in %.1f us",
	       ret ? strerror(-ret) : "done", us(t));
	/*
	 * A fork does not inherit the doorbell mapping (VM_DONTCOPY), nor the
	 * right to ring it: the module refuses its work before writing any.
	 */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ret = tplan_put(g.ctx, 1, off, off, 4096);
		_exit(ret == -EPERM ? 0 : ret ? 2 : 1);
	}
	status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	ret = pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 3;
	report(c, ret ? ST_FAIL : ST_PASS, "EPERM, nothing written or rung",
	       "a put from a forked child of the rank: %s",
	       ret == 0 ? "refused (EPERM)" : ret == 1 ? "accepted" :
	       ret == 2 ? "refused, not with EPERM" : "the child did not run");
	group_teardown(&g);
}

/* ---- 4: rptr ------------------------------------------------------------- */

static const char *rptr_meaning(uint64_t rptr, uint64_t wptr, uint32_t ring_size, char *buf,
				size_t len)
{
	if (rptr == wptr)
		snprintf(buf, len, "rptr = wptr = %llu", (unsigned long long)rptr);
	else if (rptr == wptr % ring_size)
		snprintf(buf, len, "rptr %llu = wptr %% ring_size: it wraps", (unsigned long long)rptr);
	else if (rptr == wptr / 4)
		snprintf(buf, len, "rptr %llu = wptr / 4: dwords, not bytes", (unsigned long long)rptr);
	else
		snprintf(buf, len, "rptr %llu, wptr %llu", (unsigned long long)rptr,
			 (unsigned long long)wptr);
	return buf;
}

static void step_rptr(struct hc *c)
{
	const uint32_t ring_size = 16 << 10;
	unsigned int i, n = c->quick ? 20 : 100, bad = 0;
	int64_t tf, tr, lat[100], dbl[100];
	uint64_t rptr, prev = 0, poll_start = 0, poll_end = 0;
	volatile uint32_t *fence, *gate;
	struct hw_mem host, vram;
	struct hw_queue q;
	char buf[160];
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = scratch(&c->k, c->gpu, &vram);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, ring_size, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "buffers and a raw queue: %s", strerror(-ret));
		hw_mem_free(&c->k, &vram);
		hw_mem_free(&c->k, &host);
		return;
	}
	fence = word32(&host, 0);
	gate = word32(&vram, 0);

	/* (a) 8 batches of half a ring: 4 rings' worth of bytes. */
	for (i = 1; i <= 8; i++) {
		hw_nops(&q, ring_size / 2 - 16);
		if (fence_and_wait(&q, fence, i, 1000 * MS) < 0) {
			bad = i;
			break;
		}
		hw_wait_u64(&q.ptr[1], q.wptr, 100 * MS);
		rptr = hw_rptr(&q);
		if (rptr < prev)
			bad = i;
		prev = rptr;
	}
	rptr = hw_rptr(&q);
	rptr_meaning(rptr, q.wptr, ring_size, buf, sizeof(buf));
	report(c, !bad && rptr == q.wptr && rptr > 3ULL * ring_size ? ST_PASS : ST_FAIL,
	       "bytes, 64-bit, monotonic past the ring's end: rptr = wptr > 3 x ring_size",
	       "(a) 4 x ring_size (%u) bytes of NOPs in 8 batches: %s%s", ring_size, buf,
	       bad ? (rptr < prev ? ", went backwards" : ", a batch did not complete in 1 s") : "");

	/* (b) From the FENCE to rptr written back. */
	for (i = 0; i < n; i++) {
		uint64_t t0;

		hw_fence(&q, fence, 100 + i);
		t0 = hw_now_ns();
		hw_commit(&q);
		tf = hw_wait_u32(fence, 100 + i, 1000 * MS);
		tr = hw_wait_u64(&q.ptr[1], q.wptr, 1000 * MS);
		if (tf < 0 || tr < 0)
			break;
		dbl[i] = (int64_t)(hw_now_ns() - t0) - tr;
		lat[i] = tr;
	}
	if (i < n)
		report(c, ST_FAIL, NULL, "(b) FENCE %u: it or rptr = wptr did not come in 1 s", i);
	else
		report(c, ST_INFO, "microseconds (RPTR_WRITEBACK timer 6, unit undocumented); tplan takes "
		       "rptr for ring space only",
		       "(b) rptr written back a median %.1f us after the FENCE landed (of %u; FENCE a "
		       "median %.1f us after the doorbell)", us(median(lat, n)), n, us(median(dbl, n)));

	/* (c) Fetch-ahead: where rptr stands while a POLL waits. */
	*gate = 0;
	for (i = 0; i < 4; i++) {
		unsigned int j;

		hw_poll_ge(&q, gate, 1, TPLAN_SDMA_POLL_RETRY_FOREVER);
		if (i == 0) {
			poll_end = q.wptr;
			poll_start = poll_end - 4 * TPLAN_SDMA_POLL_DW;
		}
		for (j = 0; j < 100; j++)
			hw_copy(&q, (char *)vram.p + 32768 + 64 * (j % 64), (char *)vram.p + 16384, 64);
		hw_fence(&q, fence, 1000 + i);
	}
	hw_commit(&q);
	usleep(100 * 1000);
	rptr = hw_rptr(&q);
	if (*fence >= 1000 && *fence < 1004)
		snprintf(buf, sizeof(buf), "a chain ran past its closed gate (FENCE %u)", *fence);
	else if (rptr < poll_start)
		snprintf(buf, sizeof(buf), "rptr %llu bytes short of the POLL",
			 (unsigned long long)(poll_start - rptr));
	else if (rptr == poll_start)
		snprintf(buf, sizeof(buf), "rptr at the POLL's start: nothing past the POLL fetched");
	else if (rptr == poll_end)
		snprintf(buf, sizeof(buf), "rptr at the POLL's end");
	else
		snprintf(buf, sizeof(buf), "rptr %llu bytes beyond the POLL (of %llu queued after it): "
			 "fetched ahead", (unsigned long long)(rptr - poll_end),
			 (unsigned long long)(q.wptr - poll_end));
	report(c, *fence >= 1000 && *fence < 1004 ? ST_FAIL : ST_INFO,
	       "unknown: at the POLL (a release by rptr, section 4.4-3 (b), would be exact) or beyond "
	       "(only the FENCE after the POLL, (a), which tplan uses, is)",
	       "(c) POLL(closed gate) + 100 COPY + FENCE, 4 chains, 100 ms later: %s", buf);
	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	tf = hw_wait_u32(fence, 1003, 1000 * MS);
	tr = hw_wait_u64(&q.ptr[1], q.wptr, 1000 * MS);
	report(c, tf >= 0 && tr >= 0 ? ST_PASS : ST_FAIL, "all 4 chains run; rptr = wptr",
	       "(c) the gate opened: %s", tf >= 0 && tr >= 0 ? "the 4 chains ran, rptr = wptr" :
	       rptr_meaning(hw_rptr(&q), q.wptr, ring_size, buf, sizeof(buf)));

	/* (d) Does an idle, then a blocked, engine write rptr again by itself? */
	q.ptr[1] = SENTINEL;
	sleep(c->quick ? 1 : 5);
	rptr = hw_rptr(&q);
	report(c, rptr == SENTINEL ? ST_PASS : ST_FAIL,
	       "unchanged: an idle engine does not write rptr (what tplan frees after a queue is safe)",
	       "(d) a sentinel in the idle queue's rptr, %u s later: %s", c->quick ? 1 : 5,
	       rptr == SENTINEL ? "unchanged" : "rewritten");
	q.ptr[1] = prev = q.wptr;
	hw_poll_ge(&q, gate, 2, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_fence(&q, fence, 2000);
	hw_commit(&q);
	usleep(50 * 1000);
	q.ptr[1] = SENTINEL;
	sleep(c->quick ? 1 : 5);
	rptr = hw_rptr(&q);
	report(c, ST_INFO, "unknown; if rewritten, tplan keeps a dead queue's pointer page "
	       "(quarantine, section 4.6)",
	       "(d) a sentinel in the rptr of a queue blocked on a POLL, %u s later: %s",
	       c->quick ? 1 : 5, rptr == SENTINEL ? "unchanged" : "rewritten");
	__atomic_store_n(gate, 2, __ATOMIC_RELEASE);
	tf = hw_wait_u32(fence, 2000, 1000 * MS);
	tr = hw_wait_u64(&q.ptr[1], q.wptr, 1000 * MS);
	report(c, tf >= 0 && tr >= 0 ? ST_PASS : ST_FAIL, "it runs; rptr = wptr",
	       "(d) the gate opened: %s", tf < 0 ? "the FENCE did not land in 1 s" :
	       tr < 0 ? "rptr did not come back to wptr" : "ran, rptr = wptr");
	hw_queue_destroy(&q);
	hw_mem_free(&c->k, &vram);
	hw_mem_free(&c->k, &host);
}

/* ---- 5: a full ring ------------------------------------------------------ */

static void full_ring(struct hc *c, struct kt *k, struct outcome *o)
{
	struct hw_queue_params p = { .ring_size = 4096, .priority = 15 };
	struct hw_queue q;
	struct hw_mem host;
	int64_t t;
	int ret;

	ret = hw_userptr(k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = hw_queue_create(k, c->gpu, &p, &q);
	if (ret) {
		snprintf(o->msg, sizeof(o->msg), "a raw queue: %s", strerror(-ret));
		return;
	}
	hw_nops(&q, 4096 - 16);
	t = fence_and_wait(&q, word32(&host, 0), 1, 500 * MS);
	o->st = ST_INFO;
	snprintf(o->msg, sizeof(o->msg), "wptr - rptr = ring_size (4096 bytes of NOPs, the FENCE "
		 "last): %s, rptr %llu", t >= 0 ? "it ran" : "nothing ran in 500 ms",
		 (unsigned long long)hw_rptr(&q));
}

static void step_full_ring(struct hc *c)
{
	isolated(c, "taken as empty (nothing runs) or undefined: tplan never fills a ring "
		 "completely (section 4.4-1)", "a full ring", full_ring, 10);
}

/* ---- 6: the ring's end --------------------------------------------------- */

/* NOPs and a FENCE up to offset to in the ring, run: never more than half a ring at once. */
static int run_to(struct hw_queue *q, volatile uint32_t *fence, uint32_t data, uint32_t to)
{
	uint32_t off = (uint32_t)(q->wptr & (q->ring_size - 1));

	if (hw_nops(q, to - off - 16))
		return -EINVAL;
	return fence_and_wait(q, fence, data, 1000 * MS) < 0 ? -ETIMEDOUT : 0;
}

static void step_wrap(struct hc *c)
{
	const uint32_t ring_size = 4096;
	uint32_t pad[6] = { 0 };
	volatile uint32_t *fence;
	struct hw_queue q;
	struct hw_mem host;
	const char *failed = NULL;
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, ring_size, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "a raw queue: %s", strerror(-ret));
		hw_mem_free(&c->k, &host);
		return;
	}
	fence = word32(&host, 0);
	/* A FENCE ending exactly at the ring's end, then one at offset 0. */
	if (run_to(&q, fence, 0x100, ring_size / 2) || run_to(&q, fence, 1, ring_size) ||
	    fence_and_wait(&q, fence, 2, 1000 * MS) < 0)
		failed = "a packet ending at the ring's end, then one at offset 0";
	/* 24 bytes before the end: one NOP of 6 dwords (count 5, zero body), as tplan pads. */
	if (!failed && run_to(&q, fence, 0x101, ring_size / 2))
		failed = "NOPs to the ring's middle";
	if (!failed) {
		hw_nops(&q, hw_room_to_end(&q) - 40);
		hw_fence(&q, fence, 3);
		pad[0] = tplan_sdma_hdr(TPLAN_SDMA_OP_NOP, 0) | 5U << TPLAN_SDMA_NOP_COUNT_SHIFT;
		hw_put_dwords(&q, pad, 6);
		if (fence_and_wait(&q, fence, 4, 1000 * MS) < 0)
			failed = "padding with NOP(count 5) + zero body, then a FENCE at offset 0";
	}
	/* The same padding as 6 zero dwords: 6 one-dword NOPs. */
	if (!failed && run_to(&q, fence, 0x102, ring_size / 2))
		failed = "NOPs to the ring's middle";
	if (!failed) {
		hw_nops(&q, hw_room_to_end(&q) - 40);
		hw_fence(&q, fence, 5);
		pad[0] = 0;
		hw_put_dwords(&q, pad, 6);
		if (fence_and_wait(&q, fence, 6, 1000 * MS) < 0)
			failed = "padding with 6 zero dwords, then a FENCE at offset 0";
	}
	hw_wait_u64(&q.ptr[1], q.wptr, 100 * MS);
	if (failed)
		report(c, ST_FAIL, "execution goes on at offset 0; rptr monotonic",
		       "the ring's end: %s did not run (FENCE word 0x%x)", failed, *fence);
	else
		report(c, hw_rptr(&q) == q.wptr ? ST_PASS : ST_FAIL,
		       "execution goes on at offset 0, with and without burst-NOP firmware; rptr monotonic",
		       "three wraps of a %u-byte ring (a packet ending at the end; NOP(count) padding; "
		       "zero-dword padding) ran; rptr %llu, wptr %llu; SDMA firmware feature %d%s",
		       ring_size, (unsigned long long)hw_rptr(&q), (unsigned long long)q.wptr,
		       c->sdma_fw_feature, c->sdma_fw_feature < 0 ? " (unknown)" :
		       c->sdma_fw_feature >= 20 ? " (burst NOP)" : " (no burst NOP)");
	hw_queue_destroy(&q);
	hw_mem_free(&c->k, &host);
}

/* ---- 7: ring sizes ------------------------------------------------------- */

static void step_ring_sizes(struct hc *c)
{
	static const uint32_t mib[] = { 1, 8, 256, 512 };
	unsigned int i, n = c->quick ? 2 : 4;
	char done[128] = "", fail[160] = "";
	struct hw_mem host;
	struct hw_queue q;
	size_t at = 0;
	int64_t t;
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (ret) {
		report(c, ST_FAIL, NULL, "USERPTR: %s", strerror(-ret));
		return;
	}
	for (i = 0; i < n; i++) {
		uint32_t size = mib[i] << 20;

		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, size, &q);
		if (ret) {
			snprintf(fail, sizeof(fail), "%u MiB: %s", mib[i], strerror(-ret));
			break;
		}
		/* Half a ring, then to the end: never a full ring (step 5). */
		hw_nops(&q, size / 2 - 16);
		t = fence_and_wait(&q, word32(&host, 0), 100 + i, 5000 * MS);
		if (t >= 0) {
			hw_nops(&q, size / 2 - 16);
			t = fence_and_wait(&q, word32(&host, 0), i + 1, 5000 * MS);
		}
		hw_queue_destroy(&q);
		if (t < 0) {
			snprintf(fail, sizeof(fail), "%u MiB: the FENCE at offset %u did not land in 5 s",
				 mib[i], size - 16);
			break;
		}
		at += (size_t)snprintf(done + at, sizeof(done) - at, "%s%u MiB", at ? ", " : "", mib[i]);
	}
	report(c, i >= 3 ? ST_PASS : c->quick && i == n ? ST_SKIP : ST_FAIL,
	       "1, 8 and 256 MiB (ROCr's, tplan's default, tplan's most) run to their last bytes",
	       "a FENCE in the last 16 bytes of the ring ran with %s%s%s%s", done[0] ? done : "none",
	       fail[0] ? "; not with " : "", fail, c->quick && i == n ? " (quick: 256 MiB not tried)" : "");
	hw_mem_free(&c->k, &host);
}

/* ---- 8: POLL_REGMEM ------------------------------------------------------ */

/*
 * n rounds of POLL(gate >= i), FENCE(f1 = i) (as the module's after a
 * chain's POLL), a 4 KiB copy, FENCE(f2 = i): the CPU opens the gate once
 * the engine waits; medians of gate-to-f1 and gate-to-f2 in ns, or -1.
 */
static int gate_latency(struct hw_queue *q, volatile uint64_t *gate, struct hw_mem *host,
			struct hw_mem *vram, unsigned int n, int64_t *passed, int64_t *arrived)
{
	volatile uint32_t *f1 = word32(host, 0), *f2 = word32(host, 1);
	int64_t tp[64], ta[64];
	unsigned int i;

	*gate = 0;
	*f1 = *f2 = 0;
	for (i = 1; i <= n; i++) {
		hw_poll_ge(q, gate, i, TPLAN_SDMA_POLL_RETRY_FOREVER);
		hw_fence(q, f1, i);
		hw_copy(q, (char *)vram->p + (256 << 10), (char *)vram->p + (128 << 10), 4096);
		hw_fence(q, f2, i);
		hw_commit(q);
		usleep(200);	/* the engine is in the POLL */
		__atomic_store_n(gate, i, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		tp[i - 1] = hw_wait_u32(f1, i, 1000 * MS);
		ta[i - 1] = hw_wait_u32(f2, i, 1000 * MS);
		if (tp[i - 1] < 0 || ta[i - 1] < 0)
			return -1;
		ta[i - 1] += tp[i - 1];
	}
	*passed = median(tp, n);
	*arrived = median(ta, n);
	return 0;
}

static void finite_poll(struct hc *c, struct kt *k, struct outcome *o)
{
	struct hw_queue_params p = { .ring_size = 4096, .priority = 15 };
	struct hw_mem host, vram;
	struct hw_queue q;
	int64_t t;
	int ret;

	ret = hw_userptr(k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = scratch(k, c->gpu, &vram);
	if (!ret)
		ret = hw_queue_create(k, c->gpu, &p, &q);
	if (ret) {
		snprintf(o->msg, sizeof(o->msg), "buffers and a raw queue: %s", strerror(-ret));
		return;
	}
	hw_poll_ge(&q, word32(&vram, 0), 1, 3);
	hw_fence(&q, word32(&host, 0), 1);
	hw_commit(&q);
	t = hw_wait_u32(word32(&host, 0), 1, 1000 * MS);
	__atomic_store_n(word32(&vram, 0), 1, __ATOMIC_RELEASE);
	ret = hw_wait_u32(word32(&host, 0), 1, 1000 * MS) >= 0;
	o->st = ST_INFO;
	snprintf(o->msg, sizeof(o->msg), "a POLL with 3 retries on a shut gate: %s%s",
		 t >= 0 ? "the queue went on past it" : "still waiting after 1 s",
		 t >= 0 ? "" : ret ? "; it ran once the gate opened" :
		 "; it did not run once the gate opened either: the queue stopped");
}

static void step_poll(struct hc *c)
{
	unsigned int n = c->quick ? 10 : 50;
	int64_t passed, arrived, t;
	volatile uint64_t *gate;
	volatile uint32_t *f1;
	struct hw_mem host, vram;
	struct hw_queue q;
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = scratch(&c->k, c->gpu, &vram);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 64 << 10, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "buffers and a raw queue: %s", strerror(-ret));
		hw_mem_free(&c->k, &vram);
		hw_mem_free(&c->k, &host);
		return;
	}
	f1 = word32(&host, 0);
	gate = (volatile uint64_t *)word32(&vram, 0);

	/* (a) A gate in the GPU's VRAM (a heap's gate row), opened by the CPU through the BAR. */
	ret = gate_latency(&q, gate, &host, &vram, n, &passed, &arrived);
	report(c, ret ? ST_FAIL : ST_PASS, "a few us (mori on MI355X: ~2 us a packet); a gate a GPU "
	       "kernel opens (mark_ready) is step 12's",
	       "(a) a gate in VRAM the CPU opens: the FENCE after the POLL lands a median %.1f us "
	       "later, the FENCE after a 4 KiB copy %.1f us (%u rounds)%s", us(passed), us(arrived),
	       n, ret ? "; a round did not run in 1 s" : "");

	/* Only the low 32 bits count: a high dword set does not open the gate. */
	hw_poll_ge(&q, gate, n + 1, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_fence(&q, f1, n + 1);
	hw_commit(&q);
	__atomic_store_n(gate, (1ULL << 32) | n, __ATOMIC_RELEASE);
	t = hw_wait_u32(f1, n + 1, 100 * MS);
	__atomic_store_n(gate, n + 1, __ATOMIC_RELEASE);
	ret = hw_wait_u32(f1, n + 1, 1000 * MS) >= 0;
	report(c, t < 0 && ret ? ST_PASS : ST_FAIL, "only the low 32 bits are compared (tplan's "
	       "gates and rounds are 32-bit)",
	       "a gate of 0x1%08x against %u: %s; then %u: %s", n, n + 1,
	       t < 0 ? "still shut after 100 ms" : "passed", n + 1, ret ? "passed" : "still shut");
	hw_queue_destroy(&q);

	/* (b) A gate in host memory, written by the CPU. */
	if (c->standin) {
		report(c, ST_SKIP, NULL, "(b) a gate in host memory: the stand-in polls VRAM only");
	} else if (queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 64 << 10, &q) == 0) {
		ret = gate_latency(&q, word64(&host, 4), &host, &vram, n, &passed, &arrived);
		report(c, ret ? ST_FAIL : ST_PASS, "a few us", "(b) a gate in host memory the CPU "
		       "opens: the FENCE after the POLL lands a median %.1f us later, after a 4 KiB "
		       "copy %.1f us%s", us(passed), us(arrived), ret ? "; a round did not run in 1 s" : "");
		hw_queue_destroy(&q);
	}
	hw_mem_free(&c->k, &vram);
	hw_mem_free(&c->k, &host);

	/* A finite retry count: tplan never uses one; what happens when it runs out? */
	isolated(c, "tplan always polls forever (retry 0xfff): any answer", "a POLL's retries",
		 finite_poll, 10);
}

/* ---- 9: a blocked queue and the others on its engine ---------------------- */

/* 64 MiB (quick: 8) copied in 1 MiB packets on a fresh queue: ns, or -errno. */
static int64_t copy_run(struct kt *k, uint32_t gpu, uint32_t type, uint32_t engine,
			struct hw_mem *buf, struct hw_mem *host, unsigned int mib)
{
	struct hw_queue_params p = { .type = type, .engine = engine, .ring_size = 64 << 10 };
	struct hw_queue q;
	unsigned int i;
	uint64_t t0;
	int64_t t;
	int ret;

	ret = hw_queue_create(k, gpu, &p, &q);
	if (ret)
		return ret;
	for (i = 0; i < mib; i++)
		hw_copy(&q, (char *)buf->p + (buf->size / 2) + ((uint64_t)(i % 16) << 20),
			(char *)buf->p + ((uint64_t)(i % 16) << 20), 1 << 20);
	t0 = hw_now_ns();
	t = fence_and_wait(&q, word32(host, 8), 77 + mib, 10000 * MS);
	t = t < 0 ? t : (int64_t)(hw_now_ns() - t0);
	*word32(host, 8) = 0;
	hw_queue_destroy(&q);
	return t;
}

static void step_blocked_engine(struct hc *c)
{
	unsigned int mib = c->quick ? 8 : 64;
	uint32_t e = 0;
	struct hw_mem host, buf, vram;
	struct hw_queue_params pa;
	struct hw_queue a;
	int64_t alone, blocked, other = -1;
	int fds[2], ret, status;
	pid_t pid;

	if (c->k.minor < 17) {
		report(c, ST_SKIP, NULL, "KFD %u.%u cannot put a queue on a chosen engine "
		       "(SDMA_BY_ENG_ID is KFD 1.17)", c->k.major, c->k.minor);
		return;
	}
	if (c->kf.fd >= 0 && c->peer != c->gpu && c->kf.gpu[c->gpu].rec_mask[c->peer])
		e = (uint32_t)__builtin_ctzll(c->kf.gpu[c->gpu].rec_mask[c->peer]);
	memset(&buf, 0, sizeof(buf));
	memset(&vram, 0, sizeof(vram));
	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = scratch(&c->k, c->gpu, &vram);
	if (!ret)
		ret = hw_vram(&c->k, c->gpu, 32 << 20, &buf, NULL);
	if (ret) {
		report(c, ST_FAIL, NULL, "buffers: %s", strerror(-ret));
		goto out_mem;
	}
	alone = copy_run(&c->k, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, e, &buf, &host, mib);
	memset(&pa, 0, sizeof(pa));
	pa.type = TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID;
	pa.engine = e;
	pa.ring_size = 4096;
	ret = hw_queue_create(&c->k, c->gpu, &pa, &a);
	if (ret || alone < 0) {
		report(c, ST_FAIL, NULL, "queues on engine %u: %s", e,
		       strerror(-(ret ? ret : (int)alone)));
		goto out;
	}
	hw_poll_ge(&a, word32(&vram, 0), 1, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_fence(&a, word32(&host, 3), 1);
	hw_commit(&a);
	usleep(10 * 1000);
	blocked = copy_run(&c->k, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, e, &buf, &host, mib);

	/* Another process's queue on the same engine. */
	if (pipe(fds) == 0) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			struct hw_mem h2, b2;
			struct kt k2;
			int64_t t = -ENODEV;

			if (!kt_open(&k2) && !kt_acquire(&k2, c->gpu) &&
			    !hw_userptr(&k2, c->gpu, 64 << 10, 0, &h2) &&
			    !hw_vram(&k2, c->gpu, 32 << 20, &b2, NULL))
				t = copy_run(&k2, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, e, &b2, &h2,
					     mib);
			if (write(fds[1], &t, sizeof(t)) != sizeof(t))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		if (pid > 0 && read(fds[0], &other, sizeof(other)) != sizeof(other))
			other = -EPIPE;
		if (pid > 0)
			waitpid(pid, &status, 0);
		close(fds[0]);
	}
	__atomic_store_n(word32(&vram, 0), 1, __ATOMIC_RELEASE);
	ret = hw_wait_u32(word32(&host, 3), 1, 1000 * MS) >= 0;
	if (blocked < 0 || other < 0 || !ret)
		report(c, ST_FAIL, "progress: engines switch queues (AUTO_CTXSW, quantum 32K cycles)",
		       "engine %u with a queue blocked on a POLL: %s", e,
		       blocked < 0 ? "a queue of this process on it did not finish in 10 s" :
		       other < 0 ? "another process's queue on it did not finish in 10 s" :
		       "the blocked queue did not run once its gate opened");
	else
		report(c, ST_PASS, "progress: engines switch queues (AUTO_CTXSW, quantum 32K cycles); a "
		       "slowdown is measured, not judged",
		       "engine %u, %u MiB in 1 MiB copies: %.2f ms alone, %.2f ms (%.2fx) with a queue "
		       "blocked on a POLL there, %.2f ms from another process", e, mib, alone / 1e6,
		       blocked / 1e6, (double)blocked / (double)alone, other / 1e6);
out:
	hw_queue_destroy(&a);
out_mem:
	hw_mem_free(&c->k, &buf);
	hw_mem_free(&c->k, &vram);
	hw_mem_free(&c->k, &host);
}

/* ---- 10: COPY_LINEAR's count --------------------------------------------- */

static void copy_count(struct hc *c, struct kt *k, struct outcome *o)
{
	const uint32_t bytes = (1U << 22) + 4;
	struct hw_queue_params p = { .ring_size = 64 << 10, .priority = 15 };
	volatile uint32_t *src, *dst;
	struct hw_mem host, buf;
	struct hw_queue q;
	uint32_t i, copied = 0;
	int64_t t;
	int ret, ok;

	ret = hw_userptr(k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = hw_vram(k, c->gpu, 16 << 20, &buf, NULL);
	if (!ret)
		ret = hw_queue_create(k, c->gpu, &p, &q);
	if (ret) {
		snprintf(o->msg, sizeof(o->msg), "VRAM and a raw queue: %s", strerror(-ret));
		return;
	}
	src = buf.p;
	dst = (volatile uint32_t *)((char *)buf.p + (8 << 20));
	for (i = 0; i < bytes / 4 + 1; i++) {
		src[i] = i * 2654435761U + 1;
		dst[i] = 0;
	}
	hw_copy(&q, (void *)dst, (void *)src, bytes);
	t = fence_and_wait(&q, word32(&host, 0), 1, 2000 * MS);
	while (copied < bytes && dst[copied / 4] == src[copied / 4])
		copied += 4;
	if (copied > bytes)
		copied = bytes;
	if (is_sdma442(c))
		ok = copied < bytes;
	else
		ok = copied == bytes && t >= 0;
	o->st = ok ? ST_PASS : ST_FAIL;
	snprintf(o->msg, sizeof(o->msg), "one COPY_LINEAR of 2^22 + 4 bytes on SDMA %s: %u bytes "
		 "copied%s", is_sdma442(c) ? "4.4.2" : "4.4.0", copied,
		 t >= 0 ? ", the FENCE after it ran" : ", the FENCE after it did not run in 2 s");
}

static void step_copy_count(struct hc *c)
{
	isolated(c, is_sdma442(c) ? "not all (refused, or the count cut to 22 bits): tplan's limit "
		 "on SDMA 4.4.2 is 4 MiB (max_copy_sdma442)" : "all of it: SDMA 4.4.0 counts 30 bits",
		 "COPY_LINEAR's count", copy_count, 30);
}

/* ---- 11: ATOMIC ADD64 ---------------------------------------------------- */

static void host_atomic(struct hc *c, struct kt *k, struct outcome *o)
{
	struct hw_queue_params p = { .ring_size = 4096, .priority = 15 };
	struct hw_mem host;
	struct hw_queue q;
	int64_t t;
	int ret;

	ret = hw_userptr(k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = hw_queue_create(k, c->gpu, &p, &q);
	if (ret) {
		snprintf(o->msg, sizeof(o->msg), "a raw queue: %s", strerror(-ret));
		return;
	}
	hw_atomic_add(&q, word64(&host, 4), 1);
	t = fence_and_wait(&q, word32(&host, 0), 1, 1000 * MS);
	o->st = ST_INFO;
	snprintf(o->msg, sizeof(o->msg), "(b) ATOMIC ADD64 on a host word: it reads %llu; the FENCE "
		 "after it %s", (unsigned long long)*word64(&host, 4),
		 t >= 0 ? "ran" : "did not run in 1 s (the queue stopped)");
}

static void step_atomic(struct hc *c)
{
	unsigned int rounds = c->quick ? 10 : 100, r, bad = 0, late = 0;
	const uint32_t bytes = 256 << 10;
	struct hw_mem src, peer, imp;
	volatile uint64_t *count;
	struct hw_queue q;
	uint32_t type, engine, i, *d;
	int fd = -1, ret;

	/* (b) Host memory: PCIe AtomicOps; the queue may not survive it. */
	isolated(c, "1 where the host has PCIe 64-bit AtomicOps; else tplan keeps gates in device "
		 "memory and host words are FENCEs", "(b) ATOMIC on a host word", host_atomic, 10);

	/* (a) Into the peer's VRAM: the count always after the copy's data. */
	if (c->peer == c->gpu) {
		report(c, ST_SKIP, NULL, "(a) ATOMIC into a peer's VRAM: one GPU only");
		return;
	}
	memset(&src, 0, sizeof(src));
	memset(&peer, 0, sizeof(peer));
	memset(&imp, 0, sizeof(imp));
	ret = hw_vram(&c->k, c->gpu, bytes, &src, NULL);
	if (!ret)
		ret = hw_vram(&c->k, c->peer, bytes + 4096, &peer, &fd);
	if (!ret)
		ret = hw_import(&c->k, c->gpu, fd, &peer, &imp);
	if (fd >= 0)
		close(fd);
	type = TPLAN_KFD_QUEUE_TYPE_SDMA;
	engine = 0;
	if (c->kf.fd >= 0)
		tplan_kfd_pick_engine(&c->kf, c->gpu, c->peer, &type, &engine);
	if (!ret)
		ret = queue(c, c->gpu, type, engine, 64 << 10, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "(a) VRAM on GPUs %u and %u, imported, a queue: %s", c->gpu,
		       c->peer, strerror(-ret));
		goto out;
	}
	count = (volatile uint64_t *)((char *)peer.p + bytes);
	*count = 0;
	d = peer.p;
	for (r = 1; r <= rounds; r++) {
		for (i = 0; i < bytes / 4; i += 1024)
			((volatile uint32_t *)src.p)[i] = r * 0x10001U + i;
		((volatile uint32_t *)src.p)[bytes / 4 - 1] = r;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		hw_copy(&q, peer.p, src.p, bytes);
		hw_atomic_add(&q, count, 1);
		hw_commit(&q);
		if (hw_wait_u64(count, r, 1000 * MS) < 0) {
			late = r;
			break;
		}
		for (i = 0; i < bytes / 4; i += 1024)
			bad += ((volatile uint32_t *)d)[i] != r * 0x10001U + i;
		bad += ((volatile uint32_t *)d)[bytes / 4 - 1] != r;
	}
	report(c, !late && !bad ? ST_PASS : ST_FAIL,
	       "the data is there whenever the count is (the peer's arrived()/wait() acquire relies "
	       "on it); a GPU's view is step 12's",
	       "(a) %u rounds of a %u KiB copy into GPU %u's VRAM then ATOMIC ADD64 there (%s): %s",
	       rounds, bytes >> 10, c->peer, type_name(type),
	       late ? "the count did not come" : bad ? "data missing when the count had come" :
	       "the data was always there");
	hw_queue_destroy(&q);
out:
	hw_mem_free(&c->k, &imp);
	hw_mem_free(&c->k, &peer);
	hw_mem_free(&c->k, &src);
}

/* ---- 13: eviction and restore while blocked ------------------------------- */

static void step_eviction(struct hc *c)
{
	struct hw_mem host, other, vram;
	struct hw_queue q;
	int64_t t1 = -1, t2 = -1;
	uint64_t t0;
	int ret;

	memset(&vram, 0, sizeof(vram));
	memset(&other, 0, sizeof(other));
	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = scratch(&c->k, c->gpu, &vram);
	if (!ret)
		ret = hw_userptr(&c->k, c->gpu, 2 << 20, 0, &other);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 64 << 10, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "buffers and a raw queue: %s", strerror(-ret));
		hw_mem_free(&c->k, &other);
		hw_mem_free(&c->k, &vram);
		hw_mem_free(&c->k, &host);
		return;
	}
	/* munmap of another registered buffer evicts every queue of the process. */
	hw_poll_ge(&q, word32(&vram, 0), 1, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_fence(&q, word32(&host, 0), 1);
	hw_commit(&q);
	usleep(10 * 1000);
	t0 = hw_now_ns();
	munmap(other.p, other.size);
	other.owned = 0;
	__atomic_store_n(word32(&vram, 0), 1, __ATOMIC_RELEASE);
	hw_fence(&q, word32(&host, 1), 2);	/* rung while evicted: must not be lost */
	hw_commit(&q);
	if (hw_wait_u32(word32(&host, 1), 2, 5000 * MS) >= 0)
		t1 = (int64_t)(hw_now_ns() - t0);
	hw_mem_free(&c->k, &other);

	/* mprotect of the ring itself: evicted, restored once it is writable again. */
	hw_poll_ge(&q, word32(&vram, 0), 2, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_fence(&q, word32(&host, 0), 3);
	hw_commit(&q);
	usleep(10 * 1000);
	t0 = hw_now_ns();
	mprotect(q.ring, q.ring_size, PROT_READ);
	mprotect(q.ring, q.ring_size, PROT_READ | PROT_WRITE);
	__atomic_store_n(word32(&vram, 0), 2, __ATOMIC_RELEASE);
	hw_fence(&q, word32(&host, 1), 4);
	hw_commit(&q);
	if (hw_wait_u32(word32(&host, 1), 4, 5000 * MS) >= 0)
		t2 = (int64_t)(hw_now_ns() - t0);
	report(c, t1 >= 0 && t2 >= 0 ? ST_PASS : ST_FAIL,
	       "it resumes where it was, the doorbells rung meanwhile not lost; restore in ~100 ms "
	       "or less",
	       "a queue blocked on a POLL, evicted by munmap of another USERPTR buffer: %s; by "
	       "mprotect of its ring: %s", t1 >= 0 ? "resumed" : "not resumed in 5 s",
	       t2 >= 0 ? "resumed" : "not resumed in 5 s");
	if (t1 >= 0 && t2 >= 0)
		printf("       gate opened and rung to FENCE: %.2f ms after the munmap, %.2f ms after "
		       "the mprotect\n", t1 / 1e6, t2 / 1e6);
	hw_queue_destroy(&q);
	hw_mem_free(&c->k, &vram);
	hw_mem_free(&c->k, &host);
}

/* ---- 14: kill -9 while blocked ------------------------------------------- */

/*
 * A child blocks a queue on a shut gate (on anonymous memory, or on
 * tplan's queue memory), signals, and waits; the parent SIGKILLs it and
 * watches KFD let go of the process.
 */
static void blocked_child(struct hc *c, int tplan_pages, int ready)
{
	struct hw_queue_params p = { .ring_size = 64 << 10, .priority = 15 };
	struct tplan_queue_info qi;
	struct tplan_kfd_queue tq;
	struct tplan_kfd kf;
	struct hw_mem host, vram;
	struct hw_queue q;
	struct group g;
	struct kt k;
	void *ring, *ptr;

	if (kt_open(&k) || kt_acquire(&k, c->gpu) || hw_userptr(&k, c->gpu, 64 << 10, 0, &host) ||
	    scratch(&k, c->gpu, &vram))
		_exit(1);
	if (tplan_pages) {
		if (group_setup(&g, TPLAN_ENGINE_SOFT, 0, 1 << 20) ||
		    tplan_queue_memory(&g, &qi, &ring, &ptr) || tplan_kfd_open(&kf, NULL))
			_exit(1);
		kf.gpu[c->gpu].render_fd = dup(k.render_fd[c->gpu]);
		if (tplan_kfd_queue_create(&kf, c->gpu, c->peer, ring, qi.ring_size, ptr, &tq))
			_exit(1);
		memset(&q, 0, sizeof(q));
		q.ring = ring;
		q.ring_size = qi.ring_size;
		q.ptr = ptr;
		q.doorbell = tq.doorbell;
	} else if (hw_queue_create(&k, c->gpu, &p, &q)) {
		_exit(1);
	}
	hw_poll_ge(&q, word32(&vram, 0), 1, TPLAN_SDMA_POLL_RETRY_FOREVER);
	hw_copy(&q, (char *)vram.p + 32768, (char *)vram.p + 16384, 4096);
	hw_fence(&q, word32(&host, 0), 1);
	hw_commit(&q);
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static void step_kill(struct hc *c)
{
	static const char *const what[] = { "anonymous memory", "tplan's queue memory" };
	char path[96], why[256];
	struct stat st;
	int variant, fds[2], status, had;
	int64_t gone;
	uint64_t t0;
	pid_t pid;
	char ch;

	for (variant = 0; variant < 2; variant++) {
		if (variant == 1 && !tplan_quirks_off(c, why, sizeof(why))) {
			report(c, ST_SKIP, NULL, "kill -9 with a queue on %s blocked: %s", what[variant], why);
			continue;
		}
		if (pipe(fds))
			return;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			close(fds[0]);
			/* Its rank 1 (variant 1) is a grandchild: make it ours to reap. */
			blocked_child(c, variant, fds[1]);
		}
		close(fds[1]);
		if (pid < 0 || read(fds[0], &ch, 1) != 1) {
			report(c, ST_FAIL, NULL, "a child with a queue on %s blocked on a POLL: it did not "
			       "get there", what[variant]);
			close(fds[0]);
			if (pid > 0) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
			}
			continue;
		}
		close(fds[0]);
		usleep(100 * 1000);
		snprintf(path, sizeof(path), "/sys/class/kfd/kfd/proc/%d", pid);
		had = stat(path, &st) == 0;
		t0 = hw_now_ns();
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		gone = -1;
		while (hw_now_ns() - t0 < 10000000000ULL) {
			if (stat(path, &st)) {
				gone = (int64_t)(hw_now_ns() - t0);
				break;
			}
			usleep(1000);
		}
		if (!had)
			report(c, ST_SKIP, "the directory goes within a second",
			       "kill -9 with a queue on %s blocked on a POLL: no %s to watch (no KFD "
			       "process directories here)", what[variant], path);
		else
			report(c, gone >= 0 ? ST_PASS : ST_FAIL, "the directory goes within a second; "
			       "no VM fault (the kernel log is read after the step)",
			       "kill -9 with a queue on %s blocked on a POLL: %s %s", what[variant], path,
			       gone >= 0 ? "went" : "still there after 10 s");
		if (had && gone >= 0)
			printf("       %.1f ms after the kill\n", gone / 1e6);
		/* Rank 1 of variant 1 sees the group break and exits: reap it. */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	report(c, ST_SKIP, "no write to a freed page", "kill -9: writes after tplan freed or "
	       "quarantined a dead queue's pages need tplan.ko to poison them (no such option yet)");
}

/* ---- 15: teardown order ------------------------------------------------- */

static void step_teardown(struct hc *c)
{
	struct hw_mem host;
	struct hw_queue q;
	int ret;

	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 64 << 10, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "a raw queue: %s", strerror(-ret));
		hw_mem_free(&c->k, &host);
		return;
	}
	fence_and_wait(&q, word32(&host, 0), 1, 1000 * MS);
	ret = kt_free(&c->k, q.ptr_mem.handle);
	report(c, ret == -EBUSY ? ST_PASS : ST_FAIL, "EBUSY: a mapped buffer is not freed",
	       "FREE_MEMORY_OF_GPU of the live queue's pointer page, still mapped: %s",
	       ret ? strerror(-ret) : "0");
	if (!ret)
		q.ptr_mem.handle = 0, q.ptr_mem.mapped = 0;
	ret = kt_map(&c->k, c->gpu, q.ring_mem.handle, 1);
	if (c->k.minor >= 17)
		report(c, ret == -EBUSY ? ST_PASS : ST_FAIL, "EBUSY on KFD 1.17 (queue_refcount)",
		       "UNMAP_MEMORY_FROM_GPU of the live queue's ring: %s", ret ? strerror(-ret) : "0");
	else
		report(c, ST_INFO, "KFD 1.11 lets it go: libtplan always destroys the queue first",
		       "UNMAP_MEMORY_FROM_GPU of the live (idle) queue's ring: %s",
		       ret ? strerror(-ret) : "0, the queue's ring is unmapped under it");
	if (!ret)
		q.ring_mem.mapped = 0;
	ret = hw_queue_destroy(&q);
	report(c, ret ? ST_FAIL : ST_PASS, "0", "DESTROY_QUEUE, then the buffers: %s",
	       ret ? strerror(-ret) : "0");
	hw_mem_free(&c->k, &host);
}

/* ---- 16: engines, bandwidth, capacity ------------------------------------ */

/* 64 MiB (quick 16) in copies of 4 MiB from local VRAM into dst (imported): GB/s, best of 3. */
static double bandwidth(struct hc *c, uint32_t type, uint32_t engine, struct hw_mem *src,
			struct hw_mem *dst, struct hw_mem *host)
{
	unsigned int mib = c->quick ? 16 : 64, run, i;
	struct hw_queue q;
	double best = 0;
	uint64_t t0;

	if (queue(c, c->gpu, type, engine, 64 << 10, &q))
		return -1;
	for (run = 0; run < 4; run++) {
		for (i = 0; i < mib / 4; i++)
			hw_copy(&q, (char *)dst->p + ((uint64_t)i << 22), (char *)src->p + ((uint64_t)i << 22),
				4 << 20);
		t0 = hw_now_ns();
		if (fence_and_wait(&q, word32(host, 5), 500 + run, 5000 * MS) < 0) {
			best = -1;
			break;
		}
		if (run) {	/* the first run warms up */
			double gbs = (double)mib * (1 << 20) / (double)(hw_now_ns() - t0);

			best = gbs > best ? gbs : best;
		}
	}
	hw_queue_destroy(&q);
	return best;
}

static void step_engines(struct hc *c)
{
	unsigned int mib = c->quick ? 16 : 64, n = c->quick ? 100 : 1000, i;
	struct hw_mem host, src, dst[TPLAN_KFD_MAX_GPUS], imp[TPLAN_KFD_MAX_GPUS];
	struct hw_queue q, *many;
	uint32_t j, type, engine;
	char line[1024];
	size_t at = 0;
	double gbs;
	int fd, ret, failed = 0;
	uint64_t t0;
	int64_t t;

	memset(dst, 0, sizeof(dst));
	memset(imp, 0, sizeof(imp));
	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = hw_vram(&c->k, c->gpu, (uint64_t)mib << 20, &src, NULL);
	if (ret) {
		report(c, ST_FAIL, NULL, "buffers: %s", strerror(-ret));
		hw_mem_free(&c->k, &host);
		return;
	}

	/* Per-packet cost: small copies back to back. */
	ret = queue(c, c->gpu, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 64 << 10, &q);
	if (!ret) {
		for (i = 0; i < n; i++)
			hw_copy(&q, (char *)src.p + (1 << 20) + 64 * (i % 1024), (char *)src.p + 64 * (i % 1024),
				64);
		t0 = hw_now_ns();
		t = fence_and_wait(&q, word32(&host, 0), 1, 5000 * MS);
		t = t < 0 ? t : (int64_t)(hw_now_ns() - t0);
		report(c, t < 0 ? ST_FAIL : ST_PASS, "~2 us a packet (mori on MI355X)",
		       "%u COPY_LINEAR of 64 bytes back to back: %s%.2f us a packet", n,
		       t < 0 ? "did not finish in 5 s; " : "", t < 0 ? 0 : us(t) / n);
		hw_queue_destroy(&q);
	}

	/* Bandwidth to every peer with libtplan's choice of queue; to the first peer with each type. */
	for (j = 0; j < c->k.ngpus && j < TPLAN_KFD_MAX_GPUS; j++) {
		if (j == c->gpu)
			continue;
		fd = -1;
		ret = hw_vram(&c->k, j, (uint64_t)mib << 20, &dst[j], &fd);
		if (!ret)
			ret = hw_import(&c->k, c->gpu, fd, &dst[j], &imp[j]);
		if (fd >= 0)
			close(fd);
		type = TPLAN_KFD_QUEUE_TYPE_SDMA;
		engine = 0;
		if (c->kf.fd >= 0)
			tplan_kfd_pick_engine(&c->kf, c->gpu, j, &type, &engine);
		gbs = ret ? -1 : bandwidth(c, type, engine, &src, &dst[j], &host);
		failed |= gbs < 0;
		at += (size_t)snprintf(line + at, sizeof(line) - at, "%sGPU %u: %.1f GB/s (%s",
				       at ? ", " : "", j, gbs, type_name(type));
		if (type == TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID)
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %u", engine);
		at += (size_t)snprintf(line + at, sizeof(line) - at, ")");
		if (at >= sizeof(line) - 64)
			break;
	}
	if (c->k.ngpus < 2)
		report(c, ST_SKIP, NULL, "bandwidth to a peer: one GPU only");
	else
		report(c, failed ? ST_FAIL : ST_PASS, "~60 GB/s a pair (mori on MI355X)",
		       "%u MiB in 4 MiB copies from GPU %u's VRAM into each peer's, best of 3: %s", mib,
		       c->gpu, line);
	if (c->peer != c->gpu && imp[c->peer].handle) {
		static const uint32_t types[] = { TPLAN_KFD_QUEUE_TYPE_SDMA, TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI,
						  TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID };

		at = 0;
		for (i = 0; i < 3; i++) {
			engine = 0;
			if (types[i] == TPLAN_KFD_QUEUE_TYPE_SDMA_BY_ENG_ID) {
				if (c->k.minor < 17 || c->kf.fd < 0 || !c->kf.gpu[c->gpu].rec_mask[c->peer])
					continue;
				engine = (uint32_t)__builtin_ctzll(c->kf.gpu[c->gpu].rec_mask[c->peer]);
			}
			if (types[i] == TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI && !c->k.gpu[c->gpu].num_xgmi)
				continue;
			gbs = bandwidth(c, types[i], engine, &src, &dst[c->peer], &host);
			at += (size_t)snprintf(line + at, sizeof(line) - at, "%s%s %.1f GB/s",
					       at ? ", " : "", type_name(types[i]), gbs);
		}
		report(c, ST_INFO, "the recommended engine (BY_ENG_ID) at least as fast as the others",
		       "to GPU %u by queue type: %s", c->peer, line);
	}
	for (j = 0; j < TPLAN_KFD_MAX_GPUS; j++) {
		hw_mem_free(&c->k, &imp[j]);
		hw_mem_free(&c->k, &dst[j]);
	}
	hw_mem_free(&c->k, &src);

	/* Capacity: queues of one type until KFD says no. */
	many = calloc(1024, sizeof(*many));
	for (type = TPLAN_KFD_QUEUE_TYPE_SDMA; many && type <= TPLAN_KFD_QUEUE_TYPE_SDMA_XGMI; type += 2) {
		uint32_t want = (type == TPLAN_KFD_QUEUE_TYPE_SDMA ? c->k.gpu[c->gpu].num_sdma :
				 c->k.gpu[c->gpu].num_xgmi) * c->k.gpu[c->gpu].queues_per_engine;

		if (!want)
			continue;
		for (i = 0; i < 1024; i++) {
			ret = queue(c, c->gpu, type, 0, 4096, &many[i]);
			if (ret)
				break;
		}
		report(c, ret == -ENOMEM && i == want ? ST_PASS : ret == -ENOMEM ? ST_INFO : ST_FAIL,
		       "engines x queues per engine, then ENOMEM (fewer where ROCr holds some)",
		       "%s queues on GPU %u: %u made (engines x %u = %u), then %s", type_name(type),
		       c->gpu, i, c->k.gpu[c->gpu].queues_per_engine, want,
		       ret ? strerror(-ret) : "1024 and no error");
		while (i--)
			hw_queue_destroy(&many[i]);
	}
	free(many);
	hw_mem_free(&c->k, &host);
}

/* ---- 17: percentage and priority ----------------------------------------- */

static void step_percentage(struct hc *c)
{
	struct hw_queue_params p = { .ring_size = 4096, .inactive = 1 };
	char what[2][64] = { "did not finish in 5 s", "did not finish in 5 s" };
	int64_t t, tp[2] = { -1, -1 };
	struct hw_mem host, buf;
	struct hw_queue q;
	unsigned int i, pr;
	uint64_t t0;
	int ret;

	memset(&buf, 0, sizeof(buf));
	ret = hw_userptr(&c->k, c->gpu, 64 << 10, 0, &host);
	if (!ret)
		ret = hw_vram(&c->k, c->gpu, 256 << 10, &buf, NULL);
	if (!ret)
		ret = hw_queue_create(&c->k, c->gpu, &p, &q);
	if (ret) {
		report(c, ST_FAIL, NULL, "a queue of percentage 0: %s", strerror(-ret));
		hw_mem_free(&c->k, &buf);
		hw_mem_free(&c->k, &host);
		return;
	}
	t = fence_and_wait(&q, word32(&host, 0), 1, 500 * MS);
	report(c, t < 0 ? ST_PASS : ST_FAIL, "it never runs (QUEUE_IS_ACTIVE): libtplan passes 100",
	       "a queue of percentage 0: NOP + FENCE %s", t < 0 ? "did not run in 500 ms" : "ran");
	hw_queue_destroy(&q);

	for (pr = 0; pr < 2; pr++) {
		p.inactive = 0;
		p.priority = pr ? 15 : 0;
		p.ring_size = 64 << 10;
		ret = hw_queue_create(&c->k, c->gpu, &p, &q);
		if (ret) {
			snprintf(what[pr], sizeof(what[pr]), "%s", strerror(-ret));
			continue;
		}
		for (i = 0; i < 200; i++)
			hw_copy(&q, (char *)buf.p + (128 << 10), buf.p, 64 << 10);
		t0 = hw_now_ns();
		if (fence_and_wait(&q, word32(&host, 1), 10 + pr, 5000 * MS) >= 0) {
			tp[pr] = (int64_t)(hw_now_ns() - t0);
			snprintf(what[pr], sizeof(what[pr]), "%.2f ms", tp[pr] / 1e6);
		}
		hw_queue_destroy(&q);
	}
	report(c, tp[0] > 0 && tp[1] > 0 ? ST_INFO : ST_FAIL, "no difference: v9 SDMA ignores priority",
	       "200 copies of 64 KiB at priority 0: %s, at 15: %s", what[0], what[1]);
	hw_mem_free(&c->k, &buf);
	hw_mem_free(&c->k, &host);
}

/* ---- 18: a read-only ring ------------------------------------------------ */

static void readonly_ring(struct hc *c, struct kt *k, struct outcome *o)
{
	struct hw_queue_params p = {
		.ring_size = 4096, .priority = 15,
		.ring_flags = TPLAN_KFD_ALLOC_EXECUTABLE | TPLAN_KFD_ALLOC_UNCACHED,
	};
	struct hw_mem host;
	struct hw_queue q;
	int64_t t;
	int ret;

	o->st = ST_INFO;
	ret = hw_userptr(k, c->gpu, 64 << 10, 0, &host);
	if (ret) {
		o->st = ST_FAIL;
		snprintf(o->msg, sizeof(o->msg), "USERPTR: %s", strerror(-ret));
		return;
	}
	ret = hw_queue_create(k, c->gpu, &p, &q);
	if (ret) {
		snprintf(o->msg, sizeof(o->msg), "a ring mapped for the GPU without WRITABLE: "
			 "CREATE_QUEUE says %s", strerror(-ret));
		return;
	}
	t = fence_and_wait(&q, word32(&host, 0), 1, 500 * MS);
	snprintf(o->msg, sizeof(o->msg), "a ring mapped for the GPU without WRITABLE: NOP + FENCE %s",
		 t >= 0 ? "ran" : "did not run in 500 ms");
}

static void step_readonly_ring(struct hc *c)
{
	isolated(c, "it fetches: then libtplan maps the ring read-only, as hardening", "a read-only ring",
		 readonly_ring, 10);
}

/* ---- 19: every GPU node (MI300 partitions) ------------------------------- */

static void step_nodes(struct hc *c)
{
	char failed[256] = "";
	struct hw_mem host;
	struct hw_queue q;
	size_t at = 0;
	uint32_t g;
	int ret;

	for (g = 0; g < c->k.ngpus; g++) {
		ret = hw_userptr(&c->k, g, 64 << 10, 0, &host);
		if (!ret)
			ret = queue(c, g, TPLAN_KFD_QUEUE_TYPE_SDMA, 0, 4096, &q);
		if (!ret) {
			if (fence_and_wait(&q, word32(&host, 0), 1, 1000 * MS) < 0)
				ret = -ETIMEDOUT;
			hw_queue_destroy(&q);
		}
		hw_mem_free(&c->k, &host);
		if (ret && at < sizeof(failed) - 32)
			at += (size_t)snprintf(failed + at, sizeof(failed) - at, "%sGPU %u (%s)",
					       at ? ", " : "", g, strerror(-ret));
	}
	report(c, at ? ST_FAIL : ST_PASS, "every node (each MI300 partition is one) runs a queue",
	       "NOP + FENCE on each of the %u GPU nodes: %s", c->k.ngpus, at ? failed : "all ran");
}

/* ---- main ---------------------------------------------------------------- */

/* Numbered as kfd-queues.md section 5; faults_ok: a child's faulting queue is an answer. */
static const struct step {
	const char *id;
	const char *name;
	void (*run)(struct hc *c);
	int faults_ok;
} steps[] = {
	{ "0", "inventory", step_inventory, 0 },
	{ "1", "raw KFD bring-up", step_raw, 0 },
	{ "2", "tplan's pages as ring and pointer page", step_module_pages, 0 },
	{ "3", "the doorbell from the kernel", step_kernel_doorbell, 0 },
	{ "4", "rptr", step_rptr, 0 },
	{ "5", "a full ring", step_full_ring, 1 },
	{ "6", "the ring's end", step_wrap, 0 },
	{ "7", "ring sizes", step_ring_sizes, 0 },
	{ "8", "POLL_REGMEM", step_poll, 1 },
	{ "9", "a blocked queue and its engine", step_blocked_engine, 0 },
	{ "10", "COPY_LINEAR's count", step_copy_count, 1 },
	{ "11", "ATOMIC ADD64", step_atomic, 1 },
	{ "13", "eviction while blocked", step_eviction, 0 },
	{ "14", "kill -9 while blocked", step_kill, 0 },
	{ "15", "teardown order", step_teardown, 0 },
	{ "16", "engines, bandwidth, capacity", step_engines, 0 },
	{ "17", "percentage and priority", step_percentage, 0 },
	{ "18", "a read-only ring", step_readonly_ring, 1 },
	{ "19", "every GPU node", step_nodes, 0 },
};

static int wanted(const char *list, const char *id)
{
	char buf[256], *tok, *save;

	if (!list)
		return 1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, id))
			return 1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: hw_check [-g GPU] [-s STEP,...] [-q] [--standin]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	struct stat st;
	struct utsname u;
	struct hc c;
	unsigned int i;
	uint64_t t0;
	int ret, a;

	memset(&c, 0, sizeof(c));
	c.kmsg_fd = -1;
	c.sdma_fw_feature = -1;
	c.kf.fd = -1;
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-g") && a + 1 < argc)
			c.gpu = (uint32_t)atoi(argv[++a]);
		else if (!strcmp(argv[a], "-s") && a + 1 < argc)
			only = argv[++a];
		else if (!strcmp(argv[a], "-q"))
			c.quick = 1;
		else if (!strcmp(argv[a], "--standin"))
			c.standin = 1;
		else
			usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (stat("/sys/module/kfd_standin", &st) == 0 && !c.standin) {
		printf("hw_check: SKIP: /dev/kfd is the tests' KFD stand-in (kfd_standin is loaded), "
		       "not a GPU's; --standin runs the steps over it anyway\n");
		return 4;
	}
	ret = kt_open(&c.k);
	if (ret) {
		printf("hw_check: SKIP: needs KFD with a GPU: %s: %s\n", TPLAN_KFD_PATH, strerror(-ret));
		return 4;
	}
	if (c.gpu >= c.k.ngpus) {
		fprintf(stderr, "hw_check: -g %u: KFD has %u GPUs\n", c.gpu, c.k.ngpus);
		return 2;
	}
	c.peer = c.k.ngpus > 1 ? (c.gpu + 1) % c.k.ngpus : c.gpu;
	uname(&u);
	sscanf(u.release, "%d.%d", &c.kver_major, &c.kver_minor);
	c.have_tplan = stat("/dev/tplan", &st) == 0;
	if (tplan_kfd_open(&c.kf, NULL))
		c.kf.fd = -1;
	printf("hw_check: tplan's test-node protocol (docs/test-node.md) on %s, KFD %u.%u, %u GPUs, "
	       "steps on GPU %u (peer GPU %u)%s%s\n", u.release, c.k.major, c.k.minor, c.k.ngpus,
	       c.gpu, c.peer, c.standin ? "; over the KFD stand-in: the figures are not hardware's" : "",
	       c.quick ? "; quick" : "");
	kmsg_open(&c);
	if (c.kmsg_fd < 0)
		printf("INFO     the kernel log (/dev/kmsg) is not readable: GPU faults go unseen (run as root)\n");
	for (i = 0; i < c.k.ngpus; i++) {
		ret = kt_acquire(&c.k, i);
		if (ret) {
			printf("FAIL     ACQUIRE_VM of GPU %u through renderD%u: %s\n", i,
			       c.k.gpu[i].render_minor, strerror(-ret));
			return 1;
		}
	}
	/* Rank 1 of a killed rank is a grandchild: this process reaps it. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (!wanted(only, steps[i].id))
			continue;
		t0 = hw_now_ns();
		c.step = steps[i].id;
		printf("# %s. %s\n", steps[i].id, steps[i].name);
		steps[i].run(&c);
		kmsg_check(&c, steps[i].faults_ok);
		printf("# step %s took %.1f s\n", steps[i].id, (double)(hw_now_ns() - t0) / 1e9);
	}
	if (c.kf.fd >= 0)
		tplan_kfd_close(&c.kf);
	kt_close(&c.k);
	printf("hw_check: %u PASS, %u FAIL, %u SKIP, %u INFO\n", c.count[ST_PASS], c.count[ST_FAIL],
	       c.count[ST_SKIP], c.count[ST_INFO]);
	return c.count[ST_FAIL] ? 1 : 0;
}
