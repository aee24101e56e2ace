// SPDX-License-Identifier: GPL-2.0
/*
 * The call gate of the fuzzer: every ioctl, mmap and close of a tplan
 * file, the library's included (the fuzzer links with -Wl,--wrap=ioctl,
 * --wrap=mmap, --wrap=close), goes through here.  A call is
 *   - entered in this thread's in-flight slot, so that the supervisor can
 *     signal or kill the thread while it blocks and can tell a call that
 *     outlived every timeout it was given;
 *   - counted, by command and by errno;
 *   - checked: the errno must be one that uapi/tplan.h lists for the
 *     command (the table is generated from the header at build time),
 *     never a kernel-internal one (ERESTARTSYS & co.); EINTR only after a
 *     signal reached the thread; ETIMEDOUT not before the timeout passed;
 *     the return value 0 or -1; and, where the caller built the argument
 *     to get one fixed answer of the shared contract (ENOTTY, EFAULT,
 *     EINVAL for a short size, E2BIG for a set tail), that answer.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tplan_fuzz.h"
#include "tplan_errno_table.h"

struct fz_shared *fz;

/* A timeout may end this much before its nominal length (a jiffy, clocks). */
#define FZ_TIMEOUT_SLACK_MS 20

#define offsetofend(T, m) (offsetof(T, m) + sizeof(((T *)0)->m))

#define CMD(_cmd, _name, _struct, _min, _toff, _waits, _fixed)			\
	[TPLAN_CMD_##_cmd - TPLAN_CMD_BASE] = {					\
		.req = TPLAN_IOC_##_cmd, .name = _name,				\
		.size = sizeof(struct _struct), .min_size = (_min),		\
		.timeout_off = (_toff), .waits = (_waits), .fixed_ms = (_fixed),	\
	}
#define TOFF(_struct) ((int)offsetof(struct _struct, timeout_ms))

/*
 * waits: how many times a call may wait out its timeout, one wait after
 * another (plan prepare: validate, overlap, reserve, ring space, commit);
 * fixed_ms: waits with the module's default whatever the caller passed
 * (ring space for put, submit and inject; a CLOSING plan's drain in close).
 */
const struct fz_cmd_info fz_cmds[FZ_NCMD] = {
	CMD(INFO, "INFO", tplan_info, sizeof(struct tplan_info), -1, 0, 0),
	CMD(GROUP_JOIN, "GROUP_JOIN", tplan_group_join, sizeof(struct tplan_group_join),
	    TOFF(tplan_group_join), 1, 0),
	CMD(GROUP_BARRIER, "GROUP_BARRIER", tplan_group_barrier,
	    sizeof(struct tplan_group_barrier), TOFF(tplan_group_barrier), 1, 0),
	CMD(GROUP_ALL_GATHER, "GROUP_ALL_GATHER", tplan_group_all_gather,
	    sizeof(struct tplan_group_all_gather), TOFF(tplan_group_all_gather), 1, 0),
	/* gate_area_offset came after the first version */
	CMD(HEAP_INFO, "HEAP_INFO", tplan_heap_info,
	    offsetofend(struct tplan_heap_info, mmap_offset), -1, 0, 0),
	CMD(PUT, "PUT", tplan_put, sizeof(struct tplan_put), -1, 0, FZ_DEFAULT_MS),
	CMD(QUIET, "QUIET", tplan_quiet, sizeof(struct tplan_quiet), TOFF(tplan_quiet), 1, 0),
	CMD(QUEUE_INFO, "QUEUE_INFO", tplan_queue_info,
	    offsetofend(struct tplan_queue_info, fault_reason), -1, 0, 0),
	CMD(QUEUE_INJECT, "QUEUE_INJECT", tplan_queue_inject, sizeof(struct tplan_queue_inject),
	    -1, 0, FZ_DEFAULT_MS),
	CMD(CHAIN_SUBMIT, "CHAIN_SUBMIT", tplan_chain_submit, sizeof(struct tplan_chain_submit),
	    -1, 0, FZ_DEFAULT_MS),
	CMD(PLAN_CREATE, "PLAN_CREATE", tplan_plan_create, sizeof(struct tplan_plan_create),
	    TOFF(tplan_plan_create), 1, 0),
	CMD(PLAN_PREPARE, "PLAN_PREPARE", tplan_plan_prepare, sizeof(struct tplan_plan_prepare),
	    TOFF(tplan_plan_prepare), 5, 0),
	CMD(PLAN_START, "PLAN_START", tplan_plan_start, sizeof(struct tplan_plan_start), -1, 0, 0),
	/* fault came after the first version */
	CMD(PLAN_WAIT, "PLAN_WAIT", tplan_plan_wait, offsetofend(struct tplan_plan_wait, __reserved),
	    TOFF(tplan_plan_wait), 1, 0),
	/* ring space, on every queue; flags came after the first version */
	CMD(PLAN_NEXT_ROUND, "PLAN_NEXT_ROUND", tplan_plan_next_round,
	    offsetofend(struct tplan_plan_next_round, round), TOFF(tplan_plan_next_round), 2, 0),
	CMD(PLAN_CLOSE, "PLAN_CLOSE", tplan_plan_close, sizeof(struct tplan_plan_close),
	    TOFF(tplan_plan_close), 2, FZ_DEFAULT_MS),
	/* armed and depth came after the first version */
	CMD(PLAN_STATE, "PLAN_STATE", tplan_plan_state, offsetofend(struct tplan_plan_state, round),
	    -1, 0, 0),
	CMD(HEAP_EXPORT, "HEAP_EXPORT", tplan_heap_export, sizeof(struct tplan_heap_export), -1, 0,
	    0),
	CMD(ADDR_MAP, "ADDR_MAP", tplan_addr_map_set, sizeof(struct tplan_addr_map_set), -1, 0, 0),
	CMD(QUEUE_ATTACH_KFD, "QUEUE_ATTACH_KFD", tplan_queue_attach_kfd,
	    sizeof(struct tplan_queue_attach_kfd), -1, 0, 0),
};

/* ---- small helpers ------------------------------------------------------------ */

/* The collectives: a late rank's call fails with ETIMEDOUT as it arrives. */
static int is_collective(int op)
{
	switch (op) {
	case TPLAN_CMD_GROUP_BARRIER - TPLAN_CMD_BASE:
	case TPLAN_CMD_GROUP_ALL_GATHER - TPLAN_CMD_BASE:
	case TPLAN_CMD_PLAN_CREATE - TPLAN_CMD_BASE:
	case TPLAN_CMD_PLAN_PREPARE - TPLAN_CMD_BASE:
	case TPLAN_CMD_PLAN_CLOSE - TPLAN_CMD_BASE:
		return 1;
	}
	return 0;
}

uint64_t fz_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void fz_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

pid_t fz_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

uint64_t fz_edgy(struct fz_rng *r, uint64_t near)
{
	static const uint64_t fixed[] = {
		0, 1, 2, 3, 4, 7, 8, 63, 64, 4095, 4096, 4097, 65536, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
		0x8000000000000000ULL, ~0ULL,
	};

	switch (fz_below(r, 6)) {
	case 0:
		return fixed[fz_below(r, sizeof(fixed) / sizeof(fixed[0]))];
	case 1:
		return near + fz_below(r, 5) - 2;
	case 2:
		return near ? fz_below(r, near) : 0;
	case 3:
		return near * (1 + fz_below(r, 4));
	case 4:
		return fz_rand(r) >> fz_below(r, 64);
	default:
		return fz_rand(r);
	}
}

const char *fz_op_name(int op)
{
	if (op >= 0 && op < FZ_NCMD)
		return fz_cmds[op].name;
	switch (op) {
	case FZ_CMD_UNKNOWN:	return "unknown ioctl number";
	case FZ_OP_MMAP:	return "mmap";
	case FZ_OP_CLOSE:	return "close";
	case FZ_OP_MUNMAP:	return "munmap";
	default:		return "user space";
	}
}

const char *fz_errno_name(int err, char *buf, size_t len)
{
	static const struct { int e; const char *n; } names[] = {
#define E(x) { x, #x }
		E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
		E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT),
		E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR), E(EINVAL),
		E(ENFILE), E(EMFILE), E(ENOTTY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS),
		E(EMLINK), E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG),
		E(ENOLCK), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENODATA),
		E(ETIME), E(EPROTO), E(EBADMSG), E(EOVERFLOW), E(EILSEQ), E(ENOTSOCK),
		E(EOPNOTSUPP), E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ECONNABORTED),
		E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ESHUTDOWN), E(ETIMEDOUT),
		E(ECONNREFUSED), E(EHOSTDOWN), E(EALREADY), E(EINPROGRESS), E(ESTALE),
		E(EDQUOT), E(ECANCELED), E(EOWNERDEAD), E(ENOTRECOVERABLE), E(EHWPOISON),
#undef E
		/* include/linux/errno.h: never meant for user space */
		{ 512, "ERESTARTSYS" }, { 513, "ERESTARTNOINTR" }, { 514, "ERESTARTNOHAND" },
		{ 515, "ENOIOCTLCMD" }, { 516, "ERESTART_RESTARTBLOCK" }, { 517, "EPROBE_DEFER" },
		{ 518, "EOPENSTALEDATA" }, { 519, "ENOPARAM" }, { 521, "EBADHANDLE" },
		{ 524, "ENOTSUPP" }, { 529, "EIOCBQUEUED" }, { 530, "ERECALLCONFLICT" },
	};
	size_t i;

	if (!err)
		return "success";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(buf, len, "errno %d", err);
	return buf;
}

/* ---- the errno table ------------------------------------------------------------ */

#define FZ_ERR_BITS 640
static uint64_t allowed[FZ_NCMD + 1][FZ_ERR_BITS / 64];
static int documented[FZ_NCMD];

static void allow(int op, int err)
{
	if (err > 0 && err < FZ_ERR_BITS)
		allowed[op][err / 64] |= 1ULL << (err % 64);
}

static int is_allowed(int op, int err)
{
	return err > 0 && err < FZ_ERR_BITS && (allowed[op][err / 64] >> (err % 64) & 1);
}

int fz_errno_table_init(void)
{
	size_t i;
	int op, ret = 0, k;

	memset(allowed, 0, sizeof(allowed));
	for (i = 0; i < sizeof(tplan_errno_docs) / sizeof(tplan_errno_docs[0]); i++) {
		const struct tplan_errno_doc *d = &tplan_errno_docs[i];

		op = fz_cmd_index(d->cmd);
		if (op == FZ_CMD_UNKNOWN)
			continue;	/* a number this fuzzer has no struct for */
		documented[op] = d->documented;
		for (k = 0; d->codes[k]; k++)
			allow(op, d->codes[k]);
	}
	/* "An unknown ioctl number -> ENOTTY", nothing else. */
	allow(FZ_CMD_UNKNOWN, ENOTTY);
	for (op = 0; op < FZ_NCMD; op++) {
		if (!documented[op]) {
			fz_fail(FZ_F_SETUP, op, 0,
				"errno table: uapi/tplan.h has no kernel-doc block for TPLAN_IOC_%s",
				fz_cmds[op].name);
			ret = -1;
		}
		for (k = 0; tplan_errno_shared[k]; k++)
			if (!is_allowed(op, tplan_errno_shared[k]))
				ret = -1;
	}
	return ret;
}

const char *fz_errno_documented(int op, char *buf, size_t len)
{
	size_t at = 0;
	char nb[24];
	int e;

	buf[0] = 0;
	for (e = 1; e < FZ_ERR_BITS && at + 24 < len; e++)
		if (is_allowed(op, e))
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? " " : "",
					       fz_errno_name(e, nb, sizeof(nb)));
	return buf;
}

int fz_cmd_index(unsigned long req)
{
	unsigned int nr = _IOC_NR(req);

	if (_IOC_TYPE(req) != TPLAN_TYPE || nr < TPLAN_CMD_BASE || nr >= TPLAN_CMD_LAST ||
	    fz_cmds[nr - TPLAN_CMD_BASE].req != req)
		return FZ_CMD_UNKNOWN;
	return (int)(nr - TPLAN_CMD_BASE);
}

uint64_t fz_budget_ms(int op, uint32_t timeout_ms)
{
	uint64_t t = timeout_ms ? timeout_ms : FZ_DEFAULT_MS;

	if (op < 0 || op >= FZ_NCMD)
		return 0;
	return fz_cmds[op].waits * t + fz_cmds[op].fixed_ms;
}

/* ---- failures --------------------------------------------------------------------- */

void fz_fail(enum fz_fail_kind kind, int op, int err, const char *fmt, ...)
{
	uint64_t key = 1 + ((uint64_t)kind << 48 | (uint64_t)(op & 0xffff) << 32 | (uint32_t)err);
	va_list ap;
	int i;

	for (i = 0; i < FZ_FAILS; i++) {
		struct fz_fail *f = &fz->fails[i];
		uint64_t k = __atomic_load_n(&f->key, __ATOMIC_ACQUIRE), zero = 0;

		if (!k) {
			if (__atomic_compare_exchange_n(&f->key, &zero, key, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				f->kind = kind;
				f->count = 1;
				f->first_ms = fz_now_ms() - fz->t0_ms;
				va_start(ap, fmt);
				vsnprintf(f->text, sizeof(f->text), fmt, ap);
				va_end(ap);
				__atomic_store_n(&f->ready, 1, __ATOMIC_RELEASE);
				return;
			}
			k = zero;
		}
		if (k == key) {
			fz_add(&f->count, 1);
			return;
		}
	}
	fz_add(&fz->fails_dropped, 1);
}

/* ---- threads: slot, description, signals ---------------------------------------------- */

static __thread int tls_slot = -1;
static __thread int tls_last_op = -1, tls_last_err;
static __thread char tls_what[FZ_DESC];
static __thread volatile unsigned long tls_pokes;

void fz_slot_bind(int index)
{
	struct fz_slot *s;

	tls_slot = index;
	if (index < 0)
		return;
	s = &fz->slots[index];
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL);
	s->op = -1;
	s->pid = getpid();
	s->tid = fz_gettid();
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
}

int fz_slot_index(void)
{
	return tls_slot;
}

void fz_last_call(int *op, int *err)
{
	*op = tls_last_op;
	*err = tls_last_err;
}

void fz_what(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tls_what, sizeof(tls_what), fmt, ap);
	va_end(ap);
}

static void on_poke(int sig)
{
	(void)sig;
	tls_pokes++;
}

void fz_signals_init(void)
{
	/* No SA_RESTART: a poke must end a blocking ioctl with EINTR. */
	struct sigaction sa = { .sa_handler = on_poke };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

unsigned long fz_pokes_seen(void)
{
	return tls_pokes;
}

/* ---- file ids -------------------------------------------------------------------- */

#define FZ_FD_MAX 4096
static uint32_t fd_file[FZ_FD_MAX];

uint32_t fz_file_new(int fd)
{
	uint32_t id = __atomic_add_fetch(&fz->next_file, 1, __ATOMIC_RELAXED);

	if (fd >= 0 && fd < FZ_FD_MAX)
		__atomic_store_n(&fd_file[fd], id, __ATOMIC_RELAXED);
	return id;
}

uint32_t fz_file_of(int fd)
{
	return fd >= 0 && fd < FZ_FD_MAX ? __atomic_load_n(&fd_file[fd], __ATOMIC_RELAXED) : 0;
}

void fz_file_forget(int fd)
{
	if (fd >= 0 && fd < FZ_FD_MAX)
		__atomic_store_n(&fd_file[fd], 0, __ATOMIC_RELAXED);
}

/* ---- in flight ------------------------------------------------------------------------ */

static void slot_enter(int op, int fd, uint64_t budget, const char *desc)
{
	struct fz_slot *s;
	struct fz_file *f;
	uint32_t file;

	if (tls_slot < 0)
		return;
	s = &fz->slots[tls_slot];
	file = fz_file_of(fd);
	f = &fz->files[file % FZ_FILES];
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL);
	s->file = file;
	s->budget_ms = budget;
	s->file_started0 = fz_add(&f->started, budget);
	s->file_inflight0 = fz_add(&f->inflight, budget);
	s->reported = 0;
	snprintf(s->desc, sizeof(s->desc), "%s", desc ? desc : "");
	s->start_ms = fz_now_ms();
	__atomic_store_n(&s->op, op, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
}

static void slot_leave(void)
{
	struct fz_slot *s;

	if (tls_slot < 0)
		return;
	s = &fz->slots[tls_slot];
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_sub(&fz->files[s->file % FZ_FILES].inflight, s->budget_ms,
			   __ATOMIC_RELAXED);
	__atomic_store_n(&s->op, -1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
}

/* ---- the gate ---------------------------------------------------------------------- */

static void check(int op, int ret, int err, uint64_t elapsed, unsigned long pokes0,
		  const struct fz_call *call, const char *desc)
{
	char doc[512], nb[24], nb2[24];
	const char *name = fz_op_name(op);

	if (ret != 0 && ret != -1) {
		fz_fail(FZ_F_RETVAL, op, 0, "%s returned %d, neither 0 nor -1: %s", name, ret,
			desc);
		return;
	}
	if (!err)
		goto expect;
	if (err >= 512) {
		fz_fail(FZ_F_INTERNAL, op, err,
			"%s returned %s (%d), a kernel-internal code that must never reach user space: %s",
			name, fz_errno_name(err, nb, sizeof(nb)), err, desc);
		return;
	}
	if (!is_allowed(op, err))
		fz_fail(FZ_F_UNDOC, op, err,
			"%s failed with %s, which uapi/tplan.h does not list for it (it lists: %s): %s",
			name, fz_errno_name(err, nb, sizeof(nb)),
			fz_errno_documented(op, doc, sizeof(doc)), desc);
	if (err == EINTR) {
		fz_count(FZ_M_EINTR);
		if (tls_pokes == pokes0)
			fz_fail(FZ_F_EINTR, op, err,
				"%s failed with EINTR but no signal reached the thread: %s", name,
				desc);
	}
	if (err == ETIMEDOUT && call && call->has_timeout) {
		uint64_t t = call->timeout_ms ? call->timeout_ms : FZ_DEFAULT_MS;

		/*
		 * A rank that reaches a collective after another rank's
		 * timeout fails at once (uapi/tplan.h): the timeout that
		 * expired is not this call's.  Every other ETIMEDOUT is this
		 * call's own and may run late, never early.
		 */
		if (elapsed + FZ_TIMEOUT_SLACK_MS < t && is_collective(op))
			fz_count(FZ_M_LATE_RANK);
		else if (elapsed + FZ_TIMEOUT_SLACK_MS < t)
			fz_fail(FZ_F_EARLY, op, err,
				"%s failed with ETIMEDOUT after %llu ms, its timeout is %llu ms: %s",
				name, (unsigned long long)elapsed, (unsigned long long)t, desc);
	}
expect:
	if (call && call->expect && err != call->expect)
		fz_fail(FZ_F_CONTRACT, op, call->expect,
			"%s with %s answered %s, the contract says %s: %s", name,
			call->expect_why ? call->expect_why : "this argument",
			fz_errno_name(err, nb, sizeof(nb)),
			fz_errno_name(call->expect, nb2, sizeof(nb2)), desc);
}

int __real_ioctl(int fd, unsigned long req, ...);

int fz_ioctl(int fd, unsigned long req, void *arg, const struct fz_call *call)
{
	int op = fz_cmd_index(req), err = 0;
	uint64_t t0, budget = 0;
	unsigned long pokes0;
	const char *desc = call && call->desc ? call->desc : tls_what;
	int ret;

	if (op < FZ_NCMD)
		budget = fz_budget_ms(op, call ? call->timeout_ms : 0);
	slot_enter(op, fd, budget, desc);
	pokes0 = tls_pokes;
	t0 = fz_now_ms();
	ret = __real_ioctl(fd, req, arg);
	if (ret == -1)
		err = errno;
	slot_leave();

	tls_last_op = op;
	tls_last_err = err;
	fz_add(&fz->calls[op], 1);
	fz_add(&fz->errs[op][err < FZ_ERRNO_SLOTS ? err : FZ_ERRNO_SLOTS - 1], 1);
	check(op, ret, err, fz_now_ms() - t0, pokes0, call, desc);
	return err ? -err : 0;
}

/*
 * The library's ioctls.  Its arguments are always valid structs, so the
 * timeout is read from them; the description is the caller's fz_what().
 */
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	struct fz_call call = { 0 };
	char desc[FZ_DESC + 128];
	const uint32_t *w;
	va_list ap;
	void *arg;
	int op, ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	op = fz_cmd_index(req);
	if (_IOC_TYPE(req) != TPLAN_TYPE)
		return __real_ioctl(fd, req, arg);
	if (op < FZ_NCMD && fz_cmds[op].timeout_off >= 0 && arg) {
		call.timeout_ms = *(const uint32_t *)((const char *)arg + fz_cmds[op].timeout_off);
		call.has_timeout = 1;
	}
	w = arg;
	snprintf(desc, sizeof(desc), "%s [lib %s {%08x %08x %08x %08x %08x %08x}]", tls_what,
		 fz_op_name(op), w[0], w[1], w[2], w[3], w[4], w[5]);
	call.desc = desc;
	ret = fz_ioctl(fd, req, arg, &call);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_close(int fd);

void *fz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, const char *desc)
{
	void *p;
	int err;

	slot_enter(FZ_OP_MMAP, fd, 0, desc ? desc : tls_what);
	p = __real_mmap(addr, len, prot, flags, fd, off);
	err = p == MAP_FAILED ? errno : 0;
	slot_leave();
	fz_add(&fz->mmap_calls, 1);
	fz_add(&fz->mmap_errs[err < FZ_ERRNO_SLOTS ? err : FZ_ERRNO_SLOTS - 1], 1);
	if (err >= 512)
		fz_fail(FZ_F_INTERNAL, FZ_OP_MMAP, err,
			"mmap returned errno %d, a kernel-internal code: %s", err,
			desc ? desc : tls_what);
	if (!err)
		fz_count(FZ_M_MMAPS);
	errno = err;
	return p;
}

/* The library maps heaps and closes its file through these. */
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd < 0 || !fz_file_of(fd))
		return __real_mmap(addr, len, prot, flags, fd, off);
	return fz_mmap(addr, len, prot, flags, fd, off, NULL);
}

int fz_close(int fd)
{
	int ret, err;

	slot_enter(FZ_OP_CLOSE, fd, 0, tls_what);
	fz_file_forget(fd);
	ret = __real_close(fd);
	err = errno;
	slot_leave();
	errno = err;
	return ret;
}

int __wrap_close(int fd)
{
	if (!fz_file_of(fd))
		return __real_close(fd);
	return fz_close(fd);
}
