/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the tplan selftests: open the device or SKIP, the
 * size sweep every ioctl gets, ranks as forked processes, and reading the
 * module's debugfs files.
 */
#ifndef TPLAN_SELFTEST_H
#define TPLAN_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <dirent.h>

#include "kselftest_harness.h"
#include "tplan.h"
#include "libtplan.h"

/* Open /dev/tplan, or -errno. */
static inline int tplan_test_open(void)
{
	int fd = open(TPLAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* In a FIXTURE_SETUP: SKIP the test when the module is not loaded. */
#define TPLAN_OPEN_OR_SKIP(fd)						\
	do {								\
		(fd) = tplan_test_open();				\
		if ((fd) == -ENOENT || (fd) == -ENODEV)			\
			SKIP(return, "%s absent: tplan.ko not loaded",	\
			     TPLAN_DEVICE_PATH);			\
		ASSERT_LE(0, (fd));					\
	} while (0)

/*
 * First line of a test whose fixture setup may SKIP: the 6.1 harness runs
 * the body after a SKIP in setup.
 */
#define TPLAN_SETUP_SKIPPED_RETURN()					\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

/* ioctl() returning 0 or -errno. */
static inline int tplan_test_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * The size contract of one ioctl, checked on a buffer that holds a valid
 * argument in its first full_size bytes ("valid" means the call succeeds
 * with size == full_size):
 *   every size below min_size            -> EINVAL
 *   full_size plus a zero tail            -> accepted
 *   full_size plus a non-zero tail byte   -> E2BIG, at every tail position
 * Returns 0 or a line number of the first broken rule, for ASSERT_EQ.
 * call(buf, arg) does the ioctl and returns 0 or -errno; for one that
 * succeeds only once per file (a join) it uses a fresh file each time.
 */
static inline int tplan_size_sweep_fn(int (*call)(void *buf, void *arg), void *arg,
				      const void *valid, uint32_t min_size, uint32_t full_size)
{
	enum { TAIL = 64 };
	unsigned char *buf = calloc(1, full_size + TAIL);
	uint32_t size;
	int ret = 0;

	if (!buf)
		return __LINE__;
	for (size = 0; size < min_size && !ret; size++) {
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		if (call(buf, arg) != -EINVAL)
			ret = __LINE__;
	}
	for (size = full_size; size <= full_size + TAIL && !ret; size += 8) {
		memset(buf, 0, full_size + TAIL);
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		if (call(buf, arg) != 0)
			ret = __LINE__;
	}
	for (size = full_size + 1; size <= full_size + TAIL && !ret; size++) {
		memset(buf, 0, full_size + TAIL);
		memcpy(buf, valid, full_size);
		memcpy(buf, &size, sizeof(size));
		buf[size - 1] = 0x5a;
		if (call(buf, arg) != -E2BIG)
			ret = __LINE__;
	}
	free(buf);
	return ret;
}

struct tplan_sweep_ioctl {
	int fd;
	unsigned long cmd;
};

static inline int tplan_sweep_ioctl_call(void *buf, void *arg)
{
	const struct tplan_sweep_ioctl *io = arg;

	return tplan_test_ioctl(io->fd, io->cmd, buf);
}

/* The sweep for an ioctl that can be repeated on one file. */
static inline int tplan_size_sweep(int fd, unsigned long cmd, const void *valid,
				   uint32_t min_size, uint32_t full_size)
{
	struct tplan_sweep_ioctl io = { fd, cmd };

	return tplan_size_sweep_fn(tplan_sweep_ioctl_call, &io, valid, min_size, full_size);
}

static inline uint64_t tplan_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void tplan_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * A group key no other test uses: tests run in processes of their own,
 * and one test may form several groups.
 */
static inline uint64_t tplan_test_key(void)
{
	static unsigned int n;

	return (0x7e57ULL << 48) | ((uint64_t)getpid() << 16) | (++n & 0xffff);
}

/* ---- Ranks as forked processes ------------------------------------------
 *
 * A test forks one child per rank; each runs the same function with its
 * rank.  Rank functions report with the RANK_* checks below (the harness's
 * ASSERTs belong to the test process), and the test then asserts on the
 * collected reports with ASSERT_RANKS_OK.  The children share a small
 * array of words with each other and with the test, for hand-shakes the
 * kernel's collectives cannot provide (e.g. "I am about to block").
 */
#define TPLAN_RANKS_MAX		16
#define TPLAN_SHARED_WORDS	256

struct tplan_rank_report {
	int line;		/* 0: no failure recorded */
	int exited;		/* the test saw the process end */
	int status;		/* its wait status */
	int killed_on_timeout;
	char msg[256];
};

struct tplan_rank_env {
	unsigned int rank;
	unsigned int world;
	uint64_t key;
	void *arg;
	volatile uint64_t *shared;	/* TPLAN_SHARED_WORDS words */
};

typedef int (*tplan_rank_fn)(struct tplan_rank_env *env);

struct tplan_ranks {
	unsigned int world;
	pid_t pid[TPLAN_RANKS_MAX];
	struct tplan_rank_report *rep;	/* shared: world entries */
	volatile uint64_t *shared;
	void *map;
	size_t map_size;
};

/* Where a rank process records its first failure. */
static struct tplan_rank_report *tplan_rank_self;

static inline int __attribute__((format(printf, 2, 3)))
tplan_rank_fail(int line, const char *fmt, ...)
{
	va_list ap;

	if (tplan_rank_self && !tplan_rank_self->line) {
		tplan_rank_self->line = line;
		va_start(ap, fmt);
		vsnprintf(tplan_rank_self->msg, sizeof(tplan_rank_self->msg), fmt, ap);
		va_end(ap);
	}
	return -1;
}

#define RANK_FAIL(fmt, ...) return tplan_rank_fail(__LINE__, fmt, ##__VA_ARGS__)
#define RANK_ASSERT(cond)						\
	do {								\
		if (!(cond))						\
			RANK_FAIL("%s", #cond);				\
	} while (0)
#define RANK_EQ(expected, got)						\
	do {								\
		long long _e = (long long)(expected), _g = (long long)(got); \
		if (_e != _g)						\
			RANK_FAIL("%s == %s: %lld != %lld", #expected, #got, _e, _g); \
	} while (0)
/* For "returns 0 or -errno" calls: names the errno. */
#define RANK_OK(call)							\
	do {								\
		long long _r = (long long)(call);			\
		if (_r != 0)						\
			RANK_FAIL("%s: %lld (%s)", #call, _r,		\
				  _r < 0 ? strerror((int)-_r) : "?");	\
	} while (0)
#define RANK_ERR(err, call)						\
	do {								\
		long long _r = (long long)(call);			\
		if (_r != (err))					\
			RANK_FAIL("%s: %lld (%s), expected %s", #call, _r, \
				  _r < 0 ? strerror((int)-_r) : "success", #err); \
	} while (0)

/*
 * Wait until *word >= value (another process raises it), up to timeout_ms.
 * Returns 0 or -ETIMEDOUT.
 */
static inline int tplan_shared_wait(volatile uint64_t *word, uint64_t value,
				    unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
		if (tplan_now_ms() > end)
			return -ETIMEDOUT;
		tplan_sleep_ms(1);
	}
	return 0;
}

static inline void tplan_shared_set(volatile uint64_t *word, uint64_t value)
{
	__atomic_store_n(word, value, __ATOMIC_RELEASE);
}

static inline uint64_t tplan_shared_add(volatile uint64_t *word, uint64_t value)
{
	return __atomic_add_fetch(word, value, __ATOMIC_ACQ_REL);
}

/*
 * Fork world ranks running fn(env) with the same key.  Returns 0 or
 * -errno; on failure nothing is left running.
 */
static inline int tplan_ranks_start(struct tplan_ranks *r, unsigned int world, uint64_t key,
				    tplan_rank_fn fn, void *arg)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	if (world == 0 || world > TPLAN_RANKS_MAX)
		return -EINVAL;
	r->world = world;
	r->map_size = TPLAN_RANKS_MAX * sizeof(*r->rep) + TPLAN_SHARED_WORDS * sizeof(uint64_t);
	r->map = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	r->rep = r->map;
	r->shared = (volatile uint64_t *)(r->rep + TPLAN_RANKS_MAX);
	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < world; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			int err = -errno;

			while (i--)
				kill(r->pid[i], SIGKILL);
			while (wait(NULL) > 0 || errno == EINTR)
				;
			munmap(r->map, r->map_size);
			return err;
		}
		if (pid == 0) {
			struct tplan_rank_env env = {
				.rank = i, .world = world, .key = key, .arg = arg,
				.shared = r->shared,
			};
			int ret;

			tplan_rank_self = &r->rep[i];
			ret = fn(&env);
			if (ret && !r->rep[i].line) {
				r->rep[i].line = -1;
				snprintf(r->rep[i].msg, sizeof(r->rep[i].msg),
					 "rank function returned %d", ret);
			}
			_exit(ret || r->rep[i].line ? 1 : 0);
		}
		r->pid[i] = pid;
	}
	return 0;
}

/* SIGKILL one rank (e.g. to break the group on purpose). */
static inline void tplan_ranks_kill(struct tplan_ranks *r, unsigned int rank)
{
	if (rank < r->world && r->pid[rank] > 0)
		kill(r->pid[rank], SIGKILL);
}

/*
 * Reap every rank, waiting at most timeout_ms in all; stragglers are
 * killed and marked.  Returns how many ranks failed (a recorded failure,
 * a non-zero exit, a signal, a timeout), not counting ranks in
 * expect_killed (a bit mask of ranks the test killed itself).
 */
static inline int tplan_ranks_wait(struct tplan_ranks *r, unsigned int timeout_ms,
				   uint32_t expect_killed)
{
	uint64_t end = tplan_now_ms() + timeout_ms;
	unsigned int i, left = 0;
	int failed = 0;

	/* A rank the test already reaped counts as gone. */
	for (i = 0; i < r->world; i++)
		left += !r->rep[i].exited;
	while (left) {
		for (i = 0; i < r->world; i++) {
			int status;

			if (r->rep[i].exited)
				continue;
			if (waitpid(r->pid[i], &status, WNOHANG) == r->pid[i]) {
				r->rep[i].exited = 1;
				r->rep[i].status = status;
				left--;
			}
		}
		if (!left)
			break;
		if (tplan_now_ms() > end) {
			for (i = 0; i < r->world; i++) {
				if (r->rep[i].exited)
					continue;
				kill(r->pid[i], SIGKILL);
				waitpid(r->pid[i], &r->rep[i].status, 0);
				r->rep[i].exited = 1;
				r->rep[i].killed_on_timeout = 1;
			}
			break;
		}
		tplan_sleep_ms(2);
	}
	for (i = 0; i < r->world; i++) {
		int st = r->rep[i].status;

		if (expect_killed & (1U << i))
			continue;
		if (r->rep[i].line || r->rep[i].killed_on_timeout || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			failed++;
	}
	return failed;
}

static inline void tplan_ranks_release(struct tplan_ranks *r)
{
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_size);
	r->map = NULL;
}

/* In a test: log every rank's failure, then assert that none failed. */
#define TPLAN_RANKS_REPORT(r, nfailed, expect_killed)				\
	do {									\
		unsigned int _i;						\
		for (_i = 0; _i < (r)->world; _i++) {				\
			struct tplan_rank_report *_p = &(r)->rep[_i];		\
			if ((expect_killed) & (1U << _i))			\
				continue;					\
			if (_p->line)						\
				TH_LOG("rank %u, line %d: %s", _i, _p->line, _p->msg); \
			else if (_p->killed_on_timeout)				\
				TH_LOG("rank %u: still running at the deadline, killed", _i); \
			else if (!WIFEXITED(_p->status))			\
				TH_LOG("rank %u: killed by signal %d", _i,	\
				       WTERMSIG(_p->status));			\
			else if (WEXITSTATUS(_p->status))			\
				TH_LOG("rank %u: exit status %d", _i,		\
				       WEXITSTATUS(_p->status));		\
		}								\
		ASSERT_EQ(0, (nfailed));					\
	} while (0)

/*
 * Run fn on world ranks of a fresh group and assert they all pass within
 * timeout_ms.
 */
#define RUN_RANKS(world, fn, arg, timeout_ms)					\
	do {									\
		struct tplan_ranks _r;						\
		int _nf;							\
		ASSERT_EQ(0, tplan_ranks_start(&_r, (world), tplan_test_key(),	\
					       (fn), (arg)));			\
		_nf = tplan_ranks_wait(&_r, (timeout_ms), 0);			\
		TPLAN_RANKS_REPORT(&_r, _nf, 0);				\
		tplan_ranks_release(&_r);					\
	} while (0)

/* ---- debugfs --------------------------------------------------------------
 *
 * /sys/kernel/debug/tplan/stats, and per group
 * /sys/kernel/debug/tplan/group-<key %016llx>-<serial>/queue-<src>-<dst>,
 * lines "name: value".
 */
#define TPLAN_DEBUGFS "/sys/kernel/debug/tplan"

/* The debugfs directory of the (live) group of key: 0 or -ENOENT. */
static inline int tplan_debugfs_group_dir(uint64_t key, char *path, size_t len)
{
	char prefix[40];
	struct dirent *e;
	int ret = -ENOENT;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "group-%016llx-", (unsigned long long)key);
	d = opendir(TPLAN_DEBUGFS);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		/* names are short: "group-" + 16 hex digits + "-" + a serial */
		ret = snprintf(path, len, TPLAN_DEBUGFS "/%.40s", e->d_name) < (int)len ? 0 : -ENAMETOOLONG;
		break;
	}
	closedir(d);
	return ret;
}

/* Copy the value of line "name: value" of file to val.  0 or -errno. */
static inline int tplan_debugfs_file_field(const char *file, const char *name, char *val,
					   size_t len)
{
	char line[256];
	size_t n = strlen(name);
	int ret = -ENOENT;
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, n) || line[n] != ':')
			continue;
		snprintf(val, len, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
		val[strcspn(val, "\n")] = 0;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* Copy the value of line "name: value" of queue src -> dst to val.  0 or -errno. */
static inline int tplan_debugfs_field(uint64_t key, unsigned int src, unsigned int dst,
				      const char *name, char *val, size_t len)
{
	char dir[160], path[192];
	int ret = tplan_debugfs_group_dir(key, dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%.160s/queue-%u-%u", dir, src, dst);
	return tplan_debugfs_file_field(path, name, val, len);
}

/*
 * Print queue src -> dst's debugfs file ("# " lines), so that a test that
 * gives up on the queue shows where it stood: pointers, state, and the
 * engine's kicks, wake-ups and lost wake-ups.
 */
static inline void tplan_debugfs_dump_queue(uint64_t key, unsigned int src, unsigned int dst)
{
	char dir[160], path[192], line[256];
	FILE *f;

	if (tplan_debugfs_group_dir(key, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%.160s/queue-%u-%u", dir, src, dst);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# queue %u->%u %s", src, dst, line);
	fclose(f);
	fflush(stdout);
}

/* A number from tplan/stats ("groups", "queues", "plans", "bytes"...). */
static inline int tplan_debugfs_stat(const char *name, int64_t *v)
{
	char val[64], *end;
	int ret = tplan_debugfs_file_field(TPLAN_DEBUGFS "/stats", name, val, sizeof(val));

	if (ret)
		return ret;
	errno = 0;
	*v = strtoll(val, &end, 0);
	return errno || end == val ? -EINVAL : 0;
}

static inline int tplan_debugfs_u64(uint64_t key, unsigned int src, unsigned int dst,
				    const char *name, uint64_t *v)
{
	char val[64], *end;
	int ret = tplan_debugfs_field(key, src, dst, name, val, sizeof(val));

	if (ret)
		return ret;
	errno = 0;
	*v = strtoull(val, &end, 0);
	return errno || end == val ? -EINVAL : 0;
}

/* ---- Groups and queues ------------------------------------------------- */

/* Long enough for TCG, short enough to fail well inside a test's timeout. */
#define TPLAN_TEST_TIMEOUT_MS 20000

/* A module parameter as text ("" if absent). */
static inline void tplan_test_param(const char *name, char *val, size_t len)
{
	char path[128];
	FILE *f;

	val[0] = 0;
	snprintf(path, sizeof(path), "/sys/module/tplan/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(val, (int)len, f))
		val[0] = 0;
	val[strcspn(val, "\n")] = 0;
	fclose(f);
}

/* Whether the module was loaded with allow_inject=1. */
static inline int tplan_test_inject_allowed(void)
{
	char v[8];

	tplan_test_param("allow_inject", v, sizeof(v));
	return v[0] == 'Y' || v[0] == '1';
}

/*
 * The engine the tests' library joins ask for: the library's default (0)
 * where TPLAN_ENGINE names one, so that TPLAN_ENGINE=kfd takes them to
 * the KFD engine; else the software engine, so that loading the KFD
 * stand-in changes no test that does not ask for it.
 */
static inline uint32_t tplan_test_engine(void)
{
	const char *e = getenv("TPLAN_ENGINE");

	return e && *e ? 0 : TPLAN_ENGINE_SOFT;
}

/*
 * Open a context and join env's group as env's rank, with sdma_ip (0: the
 * library's default), on tplan_test_engine().  Every rank allocates and clears its heap before it
 * waits for the others: the timeout grows by a minute per GiB of heap, so
 * a slow host does not make the other ranks give up on it.
 */
static inline int tplan_rank_join_ip(struct tplan_rank_env *env, uint64_t heap_size,
				     uint32_t sdma_ip, struct tplan_ctx **ctxp)
{
	struct tplan_join_params p = {
		.key = env->key,
		.world_size = env->world,
		.rank = env->rank,
		.heap_size = heap_size,
		.engine = tplan_test_engine(),
		.sdma_ip = sdma_ip,
		.timeout_ms = TPLAN_TEST_TIMEOUT_MS + (uint32_t)(heap_size >> 30) * 60000,
	};
	int ret = tplan_ctx_open(ctxp, NULL);

	if (ret)
		return ret;
	ret = tplan_ctx_join(*ctxp, &p);
	if (ret) {
		tplan_ctx_close(*ctxp);
		*ctxp = NULL;
	}
	return ret;
}

static inline int tplan_rank_join(struct tplan_rank_env *env, uint64_t heap_size,
				  struct tplan_ctx **ctxp)
{
	return tplan_rank_join_ip(env, heap_size, 0, ctxp);
}

/* A raw join on fd; 0 or -errno. */
static inline int tplan_test_join_fd(int fd, uint64_t key, uint32_t world, uint32_t rank,
				     uint64_t heap_size, uint32_t timeout_ms)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = key, .world_size = world, .rank = rank,
		.heap_size = heap_size, .engine = TPLAN_ENGINE_SOFT,
		.sdma_ip = TPLAN_SDMA_440, .timeout_ms = timeout_ms,
	};

	return tplan_test_ioctl(fd, TPLAN_IOC_GROUP_JOIN, &j);
}

/*
 * Is this the debug kernel of make check (scripts/vm/build-debug-kernel.sh
 * names it so)?  KASAN, lockdep and kmemleak under TCG make it several
 * times slower: long loops run fewer times there.
 */
static inline int tplan_test_debug_kernel(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-tplan-debug") != NULL;
}

/* Do the library's joins take the KFD engine (TPLAN_ENGINE=kfd, as the VM plan sets it)? */
static inline int tplan_test_on_kfd(void)
{
	const char *e = getenv("TPLAN_ENGINE");

	return e && !strcmp(e, "kfd");
}

/*
 * On the KFD engine, the SDMA IP of the first GPU (its packet limits are
 * the hardware's): TPLAN_SDMA_442 for gfx94x, else TPLAN_SDMA_440; 0 when
 * not on the KFD engine or the topology cannot be read.
 */
static inline uint32_t tplan_test_kfd_sdma_ip(void)
{
	FILE *f;
	char line[128];
	unsigned int v = 0;

	if (!tplan_test_on_kfd())
		return 0;
	f = fopen("/sys/class/kfd/kfd/topology/nodes/1/properties", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "gfx_target_version %u", &v) == 1)
			break;
	fclose(f);
	if (!v)
		return 0;
	return v >= 90400 ? TPLAN_SDMA_442 : TPLAN_SDMA_440;
}

/*
 * Does QUEUE_INFO's packets count what ran?  The software engine counts
 * packets; hardware (the KFD engine) counts none and reports 0.
 */
static inline int tplan_test_packets_counted(struct tplan_ctx *ctx)
{
	return tplan_ctx_engine(ctx) != TPLAN_ENGINE_KFD;
}

/* TPLAN_IOC_QUEUE_INJECT of ndw raw dwords into the (rank -> peer) queue. */
static inline int tplan_test_inject(struct tplan_ctx *ctx, unsigned int peer,
				    const uint32_t *dw, uint32_t ndw)
{
	struct tplan_queue_inject in = {
		.size = sizeof(in), .peer = peer, .ndw = ndw, .dwords = (uintptr_t)dw,
	};

	return tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_QUEUE_INJECT, &in);
}

/*
 * Poll QUEUE_INFO until the queue's state is state, up to timeout_ms.
 * 0 (info holds the last answer), -ETIMEDOUT or the ioctl's error.
 */
static inline int tplan_test_wait_state(struct tplan_ctx *ctx, unsigned int peer,
					uint32_t state, struct tplan_queue_info *info,
					unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = tplan_queue_info(ctx, peer, info);
		if (ret)
			return ret;
		if (info->state == state)
			return 0;
		if (tplan_now_ms() > end)
			return -ETIMEDOUT;
		tplan_sleep_ms(1);
	}
}

/*
 * Wait until process pid sleeps (state S, or D for the killable waits of
 * plan steps, in /proc/pid/stat), i.e. it has gone into the blocking call
 * it was about to make, then a little longer.
 * For hand-shakes like "the creator is waiting in its join": the kernel
 * offers no way to observe that.  0 or -ETIMEDOUT.
 */
static inline int tplan_test_wait_blocked(pid_t pid, unsigned int timeout_ms)
{
	uint64_t end = tplan_now_ms() + timeout_ms;
	char path[64], buf[256], *p;
	int fd, n, streak = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (tplan_now_ms() < end) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -errno;
		n = (int)read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		p = strrchr(buf, ')');
		/* Asleep several polls in a row: not just a page fault. */
		if (p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D')) {
			if (++streak == 10)
				return 0;
		} else {
			streak = 0;
		}
		tplan_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/*
 * A group whose rank 0 is the test process itself (so the test body uses
 * ASSERTs directly) and whose other ranks are children that join, then
 * wait in a barrier until the test's teardown, or until rank 0 is gone.
 */
struct tplan_test_group {
	struct tplan_ctx *ctx;		/* rank 0 */
	unsigned int world;
	pid_t child[TPLAN_RANKS_MAX];
	uint64_t key;
};

/*
 * 0 or -errno; on failure tplan_test_group_teardown() still cleans up.
 * engine: as tplan_join_params.engine.
 */
static inline int tplan_test_group_setup_engine(struct tplan_test_group *g, unsigned int world,
						uint64_t heap_size, uint32_t sdma_ip,
						uint32_t engine)
{
	struct tplan_join_params jp = {
		.world_size = world, .heap_size = heap_size, .engine = engine, .sdma_ip = sdma_ip,
		.timeout_ms = TPLAN_TEST_TIMEOUT_MS,
	};
	unsigned int r;
	int ret;

	memset(g, 0, sizeof(*g));
	if (world < 2 || world > TPLAN_RANKS_MAX)
		return -EINVAL;
	g->world = world;
	g->key = jp.key = tplan_test_key();
	fflush(stdout);
	fflush(stderr);
	for (r = 1; r < world; r++) {
		g->child[r] = fork();
		if (g->child[r] < 0)
			return -errno;
		if (g->child[r] == 0) {
			struct tplan_ctx *ctx;

			jp.rank = r;
			if (tplan_ctx_open(&ctx, NULL) || tplan_ctx_join(ctx, &jp))
				_exit(1);
			tplan_barrier(ctx, 600000);
			tplan_ctx_close(ctx);
			_exit(0);
		}
	}
	ret = tplan_ctx_open(&g->ctx, NULL);
	if (ret)
		return ret;
	return tplan_ctx_join(g->ctx, &jp);
}

/* The same on tplan_test_engine(). */
static inline int tplan_test_group_setup(struct tplan_test_group *g, unsigned int world,
					 uint64_t heap_size, uint32_t sdma_ip)
{
	return tplan_test_group_setup_engine(g, world, heap_size, sdma_ip, tplan_test_engine());
}

static inline void tplan_test_group_teardown(struct tplan_test_group *g)
{
	unsigned int r;

	if (g->ctx) {
		tplan_barrier(g->ctx, 5000);
		tplan_ctx_close(g->ctx);
		g->ctx = NULL;
	}
	for (r = 1; r < g->world; r++) {
		if (g->child[r] <= 0)
			continue;
		/* Rank 0 left: the children's barrier fails at once. */
		waitpid(g->child[r], NULL, 0);
		g->child[r] = 0;
	}
}

#endif /* TPLAN_SELFTEST_H */
