// SPDX-License-Identifier: GPL-2.0
/*
 * The hardware queue protocol (uapi/tplan.h, "a queue's memory"): the ring
 * and the pointer page are the module's pages, mapped into the process
 * that joined and into nobody else; the engine learns of work through the
 * doorbell and, after a preemption, from the pointer page; rptr means
 * consumed, never done; completion and the budget go by the module's
 * FENCEs; the ring is never completely full.  The soft engine's knobs
 * (soft_quirks) make it behave like hardware at its worst; each test sets
 * the ones it is about for its own queue, and checks in debugfs that the
 * queue got them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tplan_selftest.h"
#include "tplan_sdma.h"
#include "tplan_chain.h"
#include "engine_threads.h"

#define HEAP (1U << 20)
#define READY_OFF 0
#define ARRIVAL_OFF 64
#define DATA_OFF 4096
#define QUIRKS_PARAM "/sys/module/tplan/parameters/soft_quirks"
#define LINGER_PARAM "/sys/module/tplan/parameters/soft_linger_us"

FIXTURE(proto) {
	struct tplan_test_group g;
	char quirks[64];	/* the parameter as it was */
};

FIXTURE_SETUP(proto)
{
	int fd, ret;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	tplan_test_param("soft_quirks", self->quirks, sizeof(self->quirks));
	ret = tplan_test_group_setup(&self->g, 2, HEAP, 0);
	if (ret && self->g.ctx)
		TH_LOG("%s", tplan_ctx_error(self->g.ctx));
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(proto)
{
	tplan_test_group_teardown(&self->g);
}

static int param_write(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -errno;
	if (fputs(v, f) < 0)
		ret = -EIO;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/* TPLAN_IOC_QUEUE_INFO, with TPLAN_QUEUE_INFO_MAKE when make. */
static int queue_info(struct tplan_ctx *ctx, unsigned int peer, int make,
		      struct tplan_queue_info *qi)
{
	*qi = (struct tplan_queue_info) {
		.size = sizeof(*qi), .peer = peer, .flags = make ? TPLAN_QUEUE_INFO_MAKE : 0,
	};
	return tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_QUEUE_INFO, qi);
}

/*
 * Make the (0 -> 1) queue with the soft engine's quirks set to v (then
 * put the parameter back): 0, or 1 when the module or debugfs cannot say.
 */
static int make_queue_with(struct __test_metadata *_metadata, FIXTURE_DATA(proto) *self,
			   const char *v, const char *shown)
{
	struct tplan_queue_info qi;
	char got[64];
	int ret;

	if (!self->quirks[0] || access(TPLAN_DEBUGFS, F_OK))
		return 1;
	ret = param_write(QUIRKS_PARAM, v);
	if (ret)
		return 1;
	ret = queue_info(self->g.ctx, 1, 1, &qi);
	param_write(QUIRKS_PARAM, self->quirks);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, tplan_debugfs_field(self->g.key, 0, 1, "quirks", got, sizeof(got)));
	EXPECT_STREQ(shown, got);
	return 0;
}

#define MAKE_QUEUE_OR_SKIP(v, shown)						\
	do {									\
		if (make_queue_with(_metadata, self, v, shown))			\
			SKIP(return, "needs debugfs and the soft_quirks parameter"); \
	} while (0)

static uint64_t debugfs_u64(FIXTURE_DATA(proto) *self, const char *name)
{
	uint64_t v = ~0ULL;

	tplan_debugfs_u64(self->g.key, 0, 1, name, &v);
	return v;
}

/* Poll QUEUE_INFO until rptr reaches wptr: the engine wrote it back. */
static int wait_rptr_caught_up(struct tplan_ctx *ctx, struct tplan_queue_info *qi,
			       unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = queue_info(ctx, 1, 0, qi);
		if (ret || qi->rptr == qi->wptr)
			return ret;
		if (tplan_now_ms() > end)
			return -ETIMEDOUT;
		tplan_sleep_ms(2);
	}
}

/* Does /proc/self/smaps show these flags for the mapping at addr? */
static int vm_flags_of(void *addr, char *flags, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end;
	char line[512], perms[8];
	int in = 0;

	if (!f)
		return -errno;
	flags[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line: "start-end perms offset dev inode path". */
		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 && strlen(perms) == 4)
			in = start == (unsigned long)addr;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(flags, len, "%.200s", line + 8);
	}
	fclose(f);
	return flags[0] ? 0 : -ENOENT;
}

static int has_flag(const char *flags, const char *f)
{
	char w[8];

	snprintf(w, sizeof(w), " %s", f);
	return strstr(flags, w) != NULL;
}

/* ---- the queue's memory ------------------------------------------------ */

TEST_F(proto, queue_info_makes_the_queue_only_when_asked)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_queue_info qi;

	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 0, &qi));
	ASSERT_EQ(0, qi.ring_mmap_offset);
	ASSERT_EQ(0, qi.ptr_mmap_offset);
	ASSERT_EQ(0, qi.doorbells);
	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 1, &qi));
	ASSERT_NE(0, qi.ring_mmap_offset);
	ASSERT_NE(0, qi.ptr_mmap_offset);
	ASSERT_NE(qi.ring_mmap_offset, qi.ptr_mmap_offset);
	ASSERT_EQ(TPLAN_QUEUE_INFO_MAKE, qi.flags);
	ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
	qi.flags = 2;
	ASSERT_EQ(-EINVAL, tplan_test_ioctl(tplan_ctx_fd(self->g.ctx), TPLAN_IOC_QUEUE_INFO, &qi));
}

/*
 * The owner maps its ring and pointer page and sees, through them, what
 * the module wrote (a COPY, the batch's done FENCE to the pointer page's
 * DONE_SEQ word, wptr) and what the engine wrote back (rptr, done_seq).
 */
TEST_F(proto, owner_maps_ring_and_pointer_page)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int fd = tplan_ctx_fd(self->g.ctx);
	struct tplan_sdma_packet pkt;
	struct tplan_queue_info qi;
	volatile uint64_t *p64;
	volatile uint32_t *p32;
	uint32_t *ring;
	char flags[256];
	void *ptr;
	uint64_t ptr_dev = 0;

	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 1, &qi));
	ring = mmap(NULL, qi.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)qi.ring_mmap_offset);
	ASSERT_NE(MAP_FAILED, ring);
	ptr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)qi.ptr_mmap_offset);
	ASSERT_NE(MAP_FAILED, ptr);
	p64 = ptr;
	p32 = ptr;

	ASSERT_EQ(0, tplan_put(self->g.ctx, 1, DATA_OFF, DATA_OFF, 100));
	ASSERT_EQ(0, tplan_quiet(self->g.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ(0, wait_rptr_caught_up(self->g.ctx, &qi, TPLAN_TEST_TIMEOUT_MS));
	EXPECT_EQ(qi.wptr, p64[TPLAN_QPTR_WPTR / 8]);
	EXPECT_EQ(qi.rptr, p64[TPLAN_QPTR_RPTR / 8]);
	EXPECT_EQ(1, p32[TPLAN_QPTR_DONE_SEQ / 4]);
	EXPECT_EQ(qi.done_seq, p32[TPLAN_QPTR_DONE_SEQ / 4]);
	EXPECT_EQ(0, p32[TPLAN_QPTR_GATE_SEQ / 4]);
	EXPECT_EQ((TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_FENCE_DW) * 4, qi.wptr);

	/* The ring holds the put's COPY, then the FENCE that ends the batch. */
	ASSERT_EQ(TPLAN_SDMA_COPY_LINEAR_DW, tplan_sdma_decode(ring, 64, &pkt));
	ASSERT_EQ(TPLAN_SDMA_KIND_COPY_LINEAR, pkt.kind);
	EXPECT_EQ(tplan_heap_devaddr(self->g.ctx, 1) + DATA_OFF, pkt.u.copy_linear.dst);
	EXPECT_EQ(100, pkt.u.copy_linear.bytes);
	ASSERT_EQ(TPLAN_SDMA_FENCE_DW, tplan_sdma_decode(ring + TPLAN_SDMA_COPY_LINEAR_DW, 64, &pkt));
	ASSERT_EQ(TPLAN_SDMA_KIND_FENCE, pkt.kind);
	EXPECT_EQ(1, pkt.u.fence.data);
	if (!tplan_debugfs_u64(self->g.key, 0, 1, "ptr_dev", &ptr_dev))
		EXPECT_EQ(ptr_dev + TPLAN_QPTR_DONE_SEQ, pkt.u.fence.addr);

	/*
	 * Normal pages in a mixed map (what KFD's userptr, through
	 * hmm_range_fault(), accepts), not copied on fork, no PFN map.
	 */
	ASSERT_EQ(0, vm_flags_of(ring, flags, sizeof(flags)));
	EXPECT_TRUE(has_flag(flags, "mm")) {
		TH_LOG("ring VmFlags:%s", flags);
	}
	EXPECT_TRUE(has_flag(flags, "dc")) {
		TH_LOG("ring VmFlags:%s", flags);
	}
	EXPECT_FALSE(has_flag(flags, "pf")) {
		TH_LOG("ring VmFlags:%s", flags);
	}
	EXPECT_FALSE(has_flag(flags, "io")) {
		TH_LOG("ring VmFlags:%s", flags);
	}
	ASSERT_EQ(0, vm_flags_of(ptr, flags, sizeof(flags)));
	EXPECT_TRUE(has_flag(flags, "dc")) {
		TH_LOG("pointer page VmFlags:%s", flags);
	}

	munmap(ring, qi.ring_size);
	munmap(ptr, 4096);
}

TEST_F(proto, bad_queue_mappings_are_refused)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int fd = tplan_ctx_fd(self->g.ctx);
	struct tplan_queue_info qi;
	void *m;

	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 1, &qi));
	/* Private, the wrong length, past the end, an offset inside: no. */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)qi.ptr_mmap_offset);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)qi.ptr_mmap_offset);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	m = mmap(NULL, qi.ring_size / 2, PROT_READ, MAP_SHARED, fd, (off_t)qi.ring_mmap_offset);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)qi.ring_mmap_offset + 4096);
	ASSERT_EQ(MAP_FAILED, m);
	ASSERT_EQ(EINVAL, errno);
	/* Growing a mapping (mremap) is not allowed either. */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)qi.ptr_mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(MAP_FAILED, mremap(m, 4096, 8192, MREMAP_MAYMOVE));
	munmap(m, 4096);
}

/*
 * A forked child inherits neither mapping (VM_DONTCOPY) and cannot map
 * them through the file it inherited; nor can a process the file is
 * passed to.  Nor can either put work on the rank's queues or arm its
 * plans (EPERM, before the call checks its own fields): on a GPU the
 * doorbell is a page of the owner's address space, and one rule holds
 * on every engine.
 */
static int child_is_refused(int fd, const struct tplan_queue_info *qi, void *ring, void *ptr,
			    int inject)
{
	struct tplan_put put = {
		.size = sizeof(put), .peer = 1, .src_offset = DATA_OFF, .dst_offset = DATA_OFF,
		.length = 100,
	};
	struct tplan_quiet qt = { .size = sizeof(qt), .peer = 1, .timeout_ms = 1000 };
	struct tplan_queue_inject inj = { .size = sizeof(inj), .peer = 1 };
	struct tplan_chain_submit cs = { .size = sizeof(cs), .peer = 1 };
	struct tplan_plan_create pc = { .size = sizeof(pc) };
	struct tplan_plan_prepare pp = { .size = sizeof(pp), .plan_id = 1 };
	struct tplan_plan_next_round nr = { .size = sizeof(nr), .plan_id = 1 };

	char flags[256];
	void *m;

	/* Not inherited: nothing mapped at the parent's addresses. */
	if (!vm_flags_of(ring, flags, sizeof(flags)) || !vm_flags_of(ptr, flags, sizeof(flags)))
		return 10;
	m = mmap(NULL, qi->ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)qi->ring_mmap_offset);
	if (m != MAP_FAILED || errno != EPERM)
		return 11;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)qi->ptr_mmap_offset);
	if (m != MAP_FAILED || errno != EPERM)
		return 12;
	/* The heaps are the group's: those it may map. */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 13;
	munmap(m, 4096);
	if (tplan_test_ioctl(fd, TPLAN_IOC_PUT, &put) != -EPERM)
		return 14;
	if (tplan_test_ioctl(fd, TPLAN_IOC_QUIET, &qt) != -EPERM)
		return 15;
	if (inject && tplan_test_ioctl(fd, TPLAN_IOC_QUEUE_INJECT, &inj) != -EPERM)
		return 16;
	if (tplan_test_ioctl(fd, TPLAN_IOC_CHAIN_SUBMIT, &cs) != -EPERM)
		return 17;
	if (tplan_test_ioctl(fd, TPLAN_IOC_PLAN_CREATE, &pc) != -EPERM)
		return 18;
	if (tplan_test_ioctl(fd, TPLAN_IOC_PLAN_PREPARE, &pp) != -EPERM)
		return 19;
	if (tplan_test_ioctl(fd, TPLAN_IOC_PLAN_NEXT_ROUND, &nr) != -EPERM)
		return 20;
	return 0;
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

TEST_F(proto, fork_child_and_passed_file_cannot_map_or_queue_work)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	int fd = tplan_ctx_fd(self->g.ctx), sv[2], status, got;
	int inject = tplan_test_inject_allowed();
	struct tplan_queue_info qi, now;
	void *ring, *ptr;
	pid_t pid;

	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 1, &qi));
	ring = mmap(NULL, qi.ring_size, PROT_READ, MAP_SHARED, fd, (off_t)qi.ring_mmap_offset);
	ASSERT_NE(MAP_FAILED, ring);
	ptr = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)qi.ptr_mmap_offset);
	ASSERT_NE(MAP_FAILED, ptr);

	/* A fork, with the inherited file. */
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_is_refused(fd, &qi, ring, ptr, inject));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* A process that gets the file over a socket (it closes the inherited one). */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		ASSERT_TRUE(errno == EAFNOSUPPORT || errno == ENOSYS);
		SKIP(return, "a kernel without sockets: a file passed over one is not tried");
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fd);
		close(sv[0]);
		got = recv_fd(sv[1]);
		_exit(got < 0 ? 30 : child_is_refused(got, &qi, ring, ptr, inject));
	}
	close(sv[1]);
	ASSERT_EQ(0, send_fd(sv[0], fd));
	close(sv[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Nothing was written or rung; the owner still can map, and put. */
	ASSERT_EQ(0, queue_info(self->g.ctx, 1, 0, &now));
	EXPECT_EQ(qi.wptr, now.wptr);
	EXPECT_EQ(qi.doorbells, now.doorbells);
	EXPECT_EQ(0, ((volatile uint32_t *)ptr)[TPLAN_QPTR_DONE_SEQ / 4]);
	ASSERT_EQ(0, tplan_put(self->g.ctx, 1, DATA_OFF, DATA_OFF, 100));
	ASSERT_EQ(0, tplan_quiet(self->g.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	EXPECT_EQ(1, ((volatile uint32_t *)ptr)[TPLAN_QPTR_DONE_SEQ / 4]);
	munmap(ring, qi.ring_size);
	munmap(ptr, 4096);
}

/*
 * A peer rank cannot reach another rank's queue memory: not by mapping
 * that rank's file (passed to it), and not with packets, which resolve
 * only in the sender's own map and its own queues' pointer pages.
 */
struct peer_arg {
	int sv[2];
};

static int rank_peer_cannot_reach(struct tplan_rank_env *env)
{
	struct peer_arg *a = env->arg;
	struct tplan_queue_info qi, mine;
	struct tplan_ctx *ctx;
	uint64_t ptr_dev0 = 0, before_done, after_done;
	uint32_t dw[TPLAN_SDMA_FENCE_DW];
	int other;
	void *m;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	if (env->rank == 0) {
		close(a->sv[1]);
		RANK_OK(queue_info(ctx, 1, 1, &qi));
		RANK_OK(tplan_put(ctx, 1, DATA_OFF, DATA_OFF, 64));
		RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
		RANK_OK(send_fd(a->sv[0], tplan_ctx_fd(ctx)));
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));	/* 1 tried */
		RANK_OK(queue_info(ctx, 1, 0, &mine));
		RANK_EQ(TPLAN_QUEUE_IDLE, mine.state);
		RANK_EQ(qi.wptr + (TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_FENCE_DW) * 4, mine.wptr);
		RANK_EQ(1, mine.done_seq);
		RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
		tplan_ctx_close(ctx);
		return 0;
	}

	close(a->sv[0]);
	other = recv_fd(a->sv[1]);
	RANK_ASSERT(other >= 0);
	/* Rank 0's file, here: its queue info answers, its memory does not map. */
	RANK_OK(tplan_test_ioctl(other, TPLAN_IOC_QUEUE_INFO,
				 &(struct tplan_queue_info){ .size = sizeof(qi), .peer = 1 }));
	qi = (struct tplan_queue_info){ .size = sizeof(qi), .peer = 1 };
	RANK_OK(tplan_test_ioctl(other, TPLAN_IOC_QUEUE_INFO, &qi));
	before_done = qi.done_seq;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, other, (off_t)qi.ptr_mmap_offset);
	RANK_ASSERT(m == MAP_FAILED && errno == EPERM);
	m = mmap(NULL, qi.ring_size, PROT_READ, MAP_SHARED, other, (off_t)qi.ring_mmap_offset);
	RANK_ASSERT(m == MAP_FAILED && errno == EPERM);
	/* Its own queue's memory, it maps. */
	RANK_OK(queue_info(ctx, 0, 1, &mine));
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, tplan_ctx_fd(ctx), (off_t)mine.ptr_mmap_offset);
	RANK_ASSERT(m != MAP_FAILED);
	munmap(m, 4096);

	/*
	 * A FENCE at rank 0's pointer page, as rank 0's map has it: in this
	 * rank's map that is no memory at all, so the queue faults instead.
	 */
	if (tplan_test_inject_allowed() &&
	    !tplan_debugfs_u64(env->key, 0, 1, "ptr_dev", &ptr_dev0)) {
		struct tplan_sdma_fence f = { .addr = ptr_dev0 + TPLAN_QPTR_DONE_SEQ, .data = 77 };
		struct tplan_queue_info st;

		RANK_EQ(TPLAN_SDMA_FENCE_DW, tplan_sdma_encode_fence(dw, TPLAN_SDMA_FENCE_DW, &f));
		RANK_OK(tplan_test_inject(ctx, 0, dw, TPLAN_SDMA_FENCE_DW));
		RANK_OK(tplan_test_wait_state(ctx, 0, TPLAN_QUEUE_FAULT, &st, TPLAN_TEST_TIMEOUT_MS));
		RANK_EQ(TPLAN_FAULT_BAD_ADDRESS, st.fault_reason);
		qi = (struct tplan_queue_info){ .size = sizeof(qi), .peer = 1 };
		RANK_OK(tplan_test_ioctl(other, TPLAN_IOC_QUEUE_INFO, &qi));
		after_done = qi.done_seq;
		RANK_EQ(before_done, after_done);
	}
	close(other);
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS));
	tplan_ctx_close(ctx);
	return 0;
}

TEST(peer_rank_cannot_reach_queue_memory)
{
	struct peer_arg a;
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, a.sv)) {
		ASSERT_TRUE(errno == EAFNOSUPPORT || errno == ENOSYS);
		SKIP(return, "a kernel without sockets: no way to hand a peer the file");
	}
	RUN_RANKS(2, rank_peer_cannot_reach, &a, 120000);
	close(a.sv[0]);
	close(a.sv[1]);
}

/*
 * Submit one chain to rank 1: POLL(own ready word >= 1), a copy of bytes
 * from own + DATA_OFF to dst, ATOMIC +1 on rank 1's arrival word.  Its
 * dwords go to dw (64 of room), their count to *ndw; the ioctl's answer
 * (the reject in *s).
 */
static int submit_one_chain(struct tplan_ctx *ctx, uint64_t dst, uint32_t bytes, uint32_t *dw,
			    struct tplan_chain_submit *s, int *ndw)
{
	uint64_t own = tplan_heap_devaddr(ctx, 0);
	struct tplan_sdma_poll_regmem poll = {
		.addr = own + READY_OFF, .mask = TPLAN_CHAIN_POLL_MASK,
		.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear copy = { .src = own + DATA_OFF, .dst = dst, .bytes = bytes };
	struct tplan_sdma_atomic add = {
		.addr = tplan_heap_devaddr(ctx, 1) + ARRIVAL_OFF, .src_data = 1,
		.atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_chain_desc d = {
		.ref = 1, .ready_offset = READY_OFF, .arrival_offset = ARRIVAL_OFF,
	};
	int n = 0;

	n += tplan_sdma_encode_poll_regmem(dw + n, 64 - n, &poll);
	n += tplan_sdma_encode_copy_linear(dw + n, 64 - n, &copy);
	n += tplan_sdma_encode_atomic(dw + n, 64 - n, &add);
	d.ndw = (uint32_t)n;
	*s = (struct tplan_chain_submit) {
		.size = sizeof(*s), .peer = 1, .nchains = 1, .chains = (uintptr_t)&d,
		.ndw = (uint32_t)n, .dwords = (uintptr_t)dw,
	};
	*ndw = n;
	return tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_CHAIN_SUBMIT, s);
}

/* A chain whose copy lands on the pointer page is refused like any outside the heaps. */
TEST_F(proto, chains_cannot_target_the_pointer_page)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	uint64_t ptr_dev = 0;
	struct tplan_queue_info qi;
	uint32_t dw[64];
	int n = 0;

	ASSERT_EQ(0, queue_info(ctx, 1, 1, &qi));
	if (tplan_debugfs_u64(self->g.key, 0, 1, "ptr_dev", &ptr_dev))
		SKIP(return, "needs debugfs for the pointer page's address");
	{
		struct tplan_chain_submit s;

		ASSERT_EQ(-EINVAL, submit_one_chain(ctx, ptr_dev + TPLAN_QPTR_DONE_SEQ, 4, dw,
						    &s, &n));
		ASSERT_EQ(1, s.reject.packet);
	}
	ASSERT_EQ(0, queue_info(ctx, 1, 0, &qi));
	ASSERT_EQ(0, qi.wptr);
	ASSERT_EQ(0, qi.prep_charged);
}

/* ---- rptr is consumption; the budget goes by the gate FENCE ------------ */

/*
 * With rptr running ahead (fetched, not executed), the engine's rptr
 * passes a gated chain's POLL at once: the chain's charge stays until its
 * gate opens and its gate FENCE runs.  A module that released the charge
 * on rptr would let put through here.
 */
TEST_F(proto, charge_held_until_gate_fence_though_rptr_passed_the_poll)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	uint64_t peer = tplan_heap_devaddr(ctx, 1);
	unsigned char *dst = tplan_heap_ptr(ctx, 1);
	struct tplan_queue_info qi;
	uint32_t dw[64];
	int n = 0;

	MAKE_QUEUE_OR_SKIP("ahead", "ahead");
	memset((char *)tplan_heap_ptr(ctx, 0) + DATA_OFF, 0x6b, 64);
	{
		struct tplan_chain_submit s;

		ASSERT_EQ(0, submit_one_chain(ctx, peer + DATA_OFF, 64, dw, &s, &n));
	}
	/* The engine fetched all of it: rptr is past the POLL, the gate is shut. */
	ASSERT_EQ(0, wait_rptr_caught_up(ctx, &qi, TPLAN_TEST_TIMEOUT_MS));
	ASSERT_EQ((uint64_t)n * 4 + 2 * TPLAN_CHAIN_FENCE_BYTES, qi.rptr);
	tplan_sleep_ms(100);
	ASSERT_EQ(0, queue_info(ctx, 1, 0, &qi));
	EXPECT_EQ((uint32_t)n * 4 + TPLAN_CHAIN_FENCE_BYTES, qi.prep_charged);
	EXPECT_EQ(0, qi.gate_seq);
	EXPECT_EQ(0, qi.done_seq);
	EXPECT_EQ(TPLAN_QUEUE_BUSY, qi.state);
	EXPECT_EQ(-EBUSY, tplan_put(ctx, 1, 0, 8192, 64));
	EXPECT_EQ(-EBUSY, tplan_quiet(ctx, 1, 1000));
	EXPECT_EQ(0, dst[DATA_OFF]);

	/* The gate opens: the FENCE after the POLL runs, the charge goes. */
	__atomic_store_n((uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + READY_OFF), 1,
			 __ATOMIC_RELEASE);
	ASSERT_EQ(0, tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_IDLE, &qi, TPLAN_TEST_TIMEOUT_MS));
	EXPECT_EQ(0, qi.prep_charged);
	EXPECT_EQ(1, qi.gate_seq);
	EXPECT_EQ(1, qi.done_seq);
	EXPECT_EQ(0x6b, dst[DATA_OFF + 63]);
	EXPECT_EQ(0, tplan_put(ctx, 1, 0, 8192, 64));
	EXPECT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
}

/* With rptr written back late, quiet still ends (by the done FENCE), and rptr comes. */
TEST_F(proto, late_rptr_is_not_completion)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	struct tplan_queue_info qi;
	unsigned int i;

	MAKE_QUEUE_OR_SKIP("lag", "lag");
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, tplan_put(ctx, 1, DATA_OFF, DATA_OFF + 64 * i, 64));
		ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
		ASSERT_EQ(0, queue_info(ctx, 1, 0, &qi));
		ASSERT_EQ(TPLAN_QUEUE_IDLE, qi.state);
		ASSERT_EQ(i + 1, qi.done_seq);
		ASSERT_GE(qi.wptr, qi.rptr);
	}
	/* Late, not never: the engine writes it back while idle too. */
	ASSERT_EQ(0, wait_rptr_caught_up(ctx, &qi, TPLAN_TEST_TIMEOUT_MS));
}

/*
 * Preempted now and then: doorbells rung while the queue is unmapped are
 * lost, and the engine takes wptr from the pointer page when it is back.
 * Every put must still run.
 */
TEST_F(proto, doorbells_lost_while_preempted_are_found_in_the_pointer_page)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	unsigned char *src = tplan_heap_ptr(ctx, 0), *dst = tplan_heap_ptr(ctx, 1);
	unsigned int i;

	MAKE_QUEUE_OR_SKIP("preempt", "preempt");
	for (i = 0; i < 40; i++) {
		src[DATA_OFF + i] = (unsigned char)(i + 1);
		ASSERT_EQ(0, tplan_put(ctx, 1, DATA_OFF + i, DATA_OFF + i, 1));
		ASSERT_EQ(0, tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
		ASSERT_EQ(i + 1, dst[DATA_OFF + i]);
	}
	EXPECT_LT(0, debugfs_u64(self, "doorbells_lost"));
	EXPECT_LT(0, debugfs_u64(self, "wptr_reloads"));
	EXPECT_LT(0, debugfs_u64(self, "preemptions"));
	EXPECT_EQ(40, debugfs_u64(self, "doorbells"));
}

/*
 * A queue that ran dry lingers (soft_linger_us), looking at its doorbell
 * by itself: a doorbell rung then is taken without waking the thread
 * (debugfs "lingered"), so that ringing costs the ringer a store, as on
 * an engine.  With lingering off the thread sleeps at once, and a
 * doorbell after a pause wakes it ("wakeups").  Every put runs either way.
 */
static int linger_puts(struct __test_metadata *_metadata, FIXTURE_DATA(proto) *self,
		       unsigned int base)
{
	unsigned char *src = tplan_heap_ptr(self->g.ctx, 0), *dst = tplan_heap_ptr(self->g.ctx, 1);
	unsigned int i;

	for (i = 0; i < 10; i++) {
		/* Long enough, on most hosts, for the thread to have run dry. */
		usleep(20000);
		src[DATA_OFF + base + i] = (unsigned char)(base + i + 1);
		EXPECT_EQ(0, tplan_put(self->g.ctx, 1, DATA_OFF + base + i, DATA_OFF + base + i, 1));
		EXPECT_EQ(0, tplan_quiet(self->g.ctx, 1, TPLAN_TEST_TIMEOUT_MS));
		EXPECT_EQ(base + i + 1, dst[DATA_OFF + base + i]);
		if (!_metadata->passed)
			return -1;
	}
	return 0;
}

TEST_F(proto, a_doorbell_rung_while_the_queue_lingers_wakes_nobody)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	uint64_t lingered, wakeups;
	char was[32];

	tplan_test_param("soft_linger_us", was, sizeof(was));
	ASSERT_NE(0, was[0]) TH_LOG("the module has no soft_linger_us parameter");
	/* A minute: every doorbell of the test comes while the queue lingers. */
	ASSERT_EQ(0, param_write(LINGER_PARAM, "60000000"));
	if (make_queue_with(_metadata, self, "off", "off")) {
		param_write(LINGER_PARAM, was);
		SKIP(return, "needs debugfs and the soft_quirks parameter");
	}
	if (!linger_puts(_metadata, self, 0)) {
		lingered = debugfs_u64(self, "lingered");
		wakeups = debugfs_u64(self, "wakeups");
		EXPECT_LE(1, lingered);
		EXPECT_LE(lingered, 10);
		EXPECT_EQ(0, wakeups);
		EXPECT_EQ(0, debugfs_u64(self, "lost_wakeups"));
		/* Off: the lingering thread sees it at its next look, then sleeps. */
		EXPECT_EQ(0, param_write(LINGER_PARAM, "0"));
		if (!linger_puts(_metadata, self, 10)) {
			EXPECT_EQ(lingered, debugfs_u64(self, "lingered"));
			EXPECT_LE(wakeups + 1, debugfs_u64(self, "wakeups"));
			EXPECT_EQ(0, debugfs_u64(self, "lost_wakeups"));
		}
	}
	EXPECT_EQ(0, param_write(LINGER_PARAM, was));
}

/* ---- one engine thread per sending rank --------------------------------- */

/*
 * How many threads are named tplan-g<serial>/<name> (exact), and how many
 * more have names that begin so (what one thread per queue was called:
 * tplan-g<serial>/<src>-<dst>).
 */
struct named_threads {
	const char *want;
	size_t n;
	int exact, longer;
};

static void count_named(pid_t pid, const char *comm, void *arg)
{
	struct named_threads *c = arg;

	(void)pid;
	if (!strcmp(comm, c->want))
		c->exact++;
	else if (!strncmp(comm, c->want, c->n))
		c->longer++;
}

static int engine_threads(const char *serial, const char *name, int *exact, int *longer)
{
	char want[64];
	struct named_threads c = { .want = want };
	int ret;

	snprintf(want, sizeof(want), "tplan-g%s/%s", serial, name);
	c.n = strlen(want);
	ret = engine_threads_each(count_named, &c);
	*exact = c.exact;
	*longer = c.longer;
	return ret;
}

/*
 * The software engine serves a rank's queues with one thread,
 * tplan-g<serial>/<rank>, as an SDMA engine serves its queues: while the
 * (0 -> 1) queue waits in a POLL on a gate that stays shut, the thread
 * goes on with the (0 -> 2) queue, whose puts all run.
 */
TEST(a_queue_waiting_in_a_poll_leaves_its_senders_other_queues_running)
{
	struct tplan_test_group g = { 0 };
	unsigned char *dst1, *dst2, *src;
	struct tplan_chain_submit s;
	struct tplan_queue_info qi;
	char dir[160], *serial;
	int fd, n, exact, longer;
	uint32_t dw[64];
	unsigned int i;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
	ASSERT_EQ(0, tplan_test_group_setup(&g, 3, HEAP, 0));
	if (tplan_ctx_engine(g.ctx) != TPLAN_ENGINE_SOFT ||
	    tplan_debugfs_group_dir(g.key, dir, sizeof(dir))) {
		tplan_test_group_teardown(&g);
		SKIP(return, "needs the software engine and debugfs");
	}
	serial = strrchr(dir, '-') + 1;
	src = tplan_heap_ptr(g.ctx, 0);
	dst1 = tplan_heap_ptr(g.ctx, 1);
	dst2 = tplan_heap_ptr(g.ctx, 2);
	memset(src + DATA_OFF, 0x5a, 64);
	ASSERT_EQ(0, submit_one_chain(g.ctx, tplan_heap_devaddr(g.ctx, 1) + DATA_OFF, 64, dw,
				      &s, &n));
	/* Long enough, on most hosts, for the thread to be in the POLL. */
	tplan_sleep_ms(50);
	for (i = 0; i < 20; i++) {
		src[DATA_OFF + 64 + i] = (unsigned char)(i + 1);
		ASSERT_EQ(0, tplan_put(g.ctx, 2, DATA_OFF + 64 + i, DATA_OFF + 64 + i, 1));
		ASSERT_EQ(0, tplan_quiet(g.ctx, 2, TPLAN_TEST_TIMEOUT_MS));
		ASSERT_EQ(i + 1, dst2[DATA_OFF + 64 + i]);
	}
	ASSERT_EQ(0, queue_info(g.ctx, 1, 0, &qi));
	EXPECT_EQ(TPLAN_QUEUE_BUSY, qi.state);
	EXPECT_EQ(0, qi.gate_seq);
	EXPECT_EQ(0, dst1[DATA_OFF]);

	/* Two queues of rank 0, one thread; ranks 1 and 2 sent nothing: none. */
	ASSERT_EQ(0, engine_threads(serial, "0", &exact, &longer));
	EXPECT_EQ(1, exact);
	EXPECT_EQ(0, longer);
	ASSERT_EQ(0, engine_threads(serial, "1", &exact, &longer));
	EXPECT_EQ(0, exact + longer);

	/* The gate opens: the chain runs. */
	__atomic_store_n((uint64_t *)(src + READY_OFF), 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, tplan_test_wait_state(g.ctx, 1, TPLAN_QUEUE_IDLE, &qi,
					   TPLAN_TEST_TIMEOUT_MS));
	EXPECT_EQ(1, qi.gate_seq);
	EXPECT_EQ(0x5a, dst1[DATA_OFF + 63]);
	tplan_test_group_teardown(&g);
}

/* ---- the ring is never completely full --------------------------------- */

struct last_inject {
	struct tplan_ctx *ctx;
	uint32_t ndw;
	int ret;
	int done;
};

static void *last_inject_thread(void *arg)
{
	struct last_inject *a = arg;
	static uint32_t nop[1024];

	tplan_sdma_encode_nop(nop, a->ndw, &(struct tplan_sdma_nop){ .dwords = a->ndw });
	a->ret = tplan_test_inject(a->ctx, 1, nop, a->ndw);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A fresh queue stalled on a POLL at offset 0 (rptr 0), filled with NOPs
 * up to the ring's end: the batch that would end exactly there (a full
 * ring, which an engine reads as empty) waits for room instead, and once
 * the POLL passes everything runs, on an engine that loses a doorbell
 * that makes the ring full.
 */
TEST_F_TIMEOUT(proto, ring_is_never_completely_full, 300)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct tplan_ctx *ctx = self->g.ctx;
	uint64_t *gate = (uint64_t *)((char *)tplan_heap_ptr(ctx, 0) + READY_OFF);
	struct tplan_sdma_poll_regmem poll = {
		.addr = tplan_heap_devaddr(ctx, 0) + READY_OFF, .ref = 1, .mask = 0xffffffffu,
		.func = TPLAN_SDMA_FUNC_EQ, .mem_poll = 1, .interval = 10,
		.retry = TPLAN_SDMA_POLL_RETRY_FOREVER,
	};
	struct last_inject a = { .ctx = ctx };
	static uint32_t nop[1024];
	struct tplan_queue_info qi, q2;
	uint32_t dw[TPLAN_SDMA_POLL_DW];
	uint64_t room, n;
	pthread_t t;

	if (!tplan_test_inject_allowed())
		SKIP(return, "needs allow_inject=1");
	MAKE_QUEUE_OR_SKIP("full", "full");
	__atomic_store_n(gate, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(TPLAN_SDMA_POLL_DW, tplan_sdma_encode_poll_regmem(dw, TPLAN_SDMA_POLL_DW, &poll));
	ASSERT_EQ(0, tplan_test_inject(ctx, 1, dw, TPLAN_SDMA_POLL_DW));
	/* Each inject is its NOP and the batch's FENCE; none crosses the end. */
	for (;;) {
		ASSERT_EQ(0, queue_info(ctx, 1, 0, &qi));
		ASSERT_EQ(0, qi.rptr);	/* the POLL at 0 has not run: this knob writes back exactly */
		room = qi.ring_size - qi.wptr - TPLAN_CHAIN_FENCE_BYTES;
		if (room <= sizeof(nop))
			break;
		n = room - sizeof(nop) >= sizeof(nop) + TPLAN_CHAIN_FENCE_BYTES ?
		    1024 : (room - sizeof(nop) - TPLAN_CHAIN_FENCE_BYTES) / 4;
		if (!n)
			n = 1;
		tplan_sdma_encode_nop(nop, (uint32_t)n, &(struct tplan_sdma_nop){ .dwords = (uint32_t)n });
		ASSERT_EQ(0, tplan_test_inject(ctx, 1, nop, (uint32_t)n));
	}
	/* What would end exactly at the ring's end: it must wait. */
	a.ndw = (uint32_t)(room / 4);
	ASSERT_LT(0, a.ndw);
	ASSERT_EQ(0, -pthread_create(&t, NULL, last_inject_thread, &a));
	tplan_sleep_ms(2000);
	EXPECT_EQ(0, __atomic_load_n(&a.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, queue_info(ctx, 1, 0, &q2));
	EXPECT_EQ(qi.wptr, q2.wptr);
	EXPECT_GT(q2.ring_size, q2.wptr - q2.rptr);

	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, -pthread_join(t, NULL));
	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(0, tplan_quiet(ctx, 1, 60000));
	ASSERT_EQ(0, queue_info(ctx, 1, 0, &q2));
	EXPECT_EQ(TPLAN_QUEUE_IDLE, q2.state);
}

TEST_HARNESS_MAIN
