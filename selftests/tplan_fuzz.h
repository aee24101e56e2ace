/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-VM ioctl fuzzer and kill storm (tplan_fuzz): what its processes
 * share.
 *
 *   tplan_fuzz.c        the supervisor: workers, the kill storm, the
 *                       watchdog, the report (TAP)
 *   tplan_fuzz_call.c   every ioctl and mmap of /dev/tplan goes through
 *                       here: counted, its errno checked against
 *                       uapi/tplan.h, watched while in flight
 *   tplan_fuzz_group.c  the group board and the mutated-valid sequences
 *                       that groups run through libtplan
 *   tplan_fuzz_raw.c    hostile raw ioctls, mmaps and forks
 *
 * The supervisor never opens /dev/tplan, so it never blocks in the module.
 * Workers are processes of several threads; everything they report lands
 * in one MAP_SHARED region (struct fz_shared), written with atomics only,
 * so that a SIGKILL at any instruction leaves it consistent.
 */
#ifndef TPLAN_FUZZ_H
#define TPLAN_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <sys/types.h>

#include "tplan.h"
#include "libtplan.h"

/* ---- sizes ---------------------------------------------------------------- */

#define FZ_WORKERS_MAX		16
#define FZ_THREADS_MAX		6
/* Every worker thread has a slot for itself and one for a fork child. */
#define FZ_SLOTS		(FZ_WORKERS_MAX * FZ_THREADS_MAX * 2)
#define FZ_BOARD		12	/* groups being formed or run at once */
#define FZ_FILES		4096	/* watchdog accounting, by file id % FZ_FILES */
#define FZ_FAILS		48	/* distinct failures kept */
#define FZ_FAIL_TEXT		6144
#define FZ_ERRNO_SLOTS		600	/* errno values counted one by one */
#define FZ_DESC			200

/* Statistics rows: the ioctls by number, then unknown numbers. */
#define FZ_NCMD			(TPLAN_CMD_LAST - TPLAN_CMD_BASE)
#define FZ_CMD_UNKNOWN		FZ_NCMD
/* What a thread can be blocked in besides an ioctl (watchdog, kills). */
#define FZ_OP_MMAP		(FZ_NCMD + 1)
#define FZ_OP_CLOSE		(FZ_NCMD + 2)
#define FZ_OP_MUNMAP		(FZ_NCMD + 3)
#define FZ_OP_OTHER		(FZ_NCMD + 4)	/* none of the above: user space */
#define FZ_NOPS			(FZ_NCMD + 5)

/* The module's default for a timeout_ms of 0 and its internal waits. */
#define FZ_DEFAULT_MS		TPLAN_TIMEOUT_DEFAULT_MS

/* ---- the shared region ----------------------------------------------------- */

/*
 * One thread's call in flight.  The owner writes it around the call (seq
 * odd while it changes); the supervisor reads it to pick kill and signal
 * targets and to find calls that outlived every timeout they were given.
 */
struct fz_slot {
	uint32_t seq;
	int32_t pid, tid;
	int32_t op;			/* statistics row or FZ_OP_*; -1: idle */
	uint32_t file;			/* file id of the fd (0: unknown) */
	uint32_t reported;		/* the watchdog reported it */
	uint64_t start_ms;
	uint64_t budget_ms;		/* the longest it may wait by itself */
	uint64_t file_started0;		/* fz_file.started before this call */
	uint64_t file_inflight0;	/* fz_file.inflight before this call */
	char desc[FZ_DESC];
};

/*
 * Calls on one open file take its lock in turn: a call may wait for those
 * in flight when it started and for those that started since.
 */
struct fz_file {
	uint64_t started;		/* sum of budgets of calls started */
	uint64_t inflight;		/* sum of budgets of calls in flight */
};

enum fz_fail_kind {
	FZ_F_UNDOC,		/* an errno the header does not list for the ioctl */
	FZ_F_INTERNAL,		/* ERESTARTSYS & co. reached user space */
	FZ_F_EINTR,		/* EINTR without a signal */
	FZ_F_EARLY,		/* ETIMEDOUT before the timeout */
	FZ_F_CONTRACT,		/* the shared contract's fixed answers (ENOTTY, ...) */
	FZ_F_RETVAL,		/* ioctl returned neither 0 nor -1 */
	FZ_F_STUCK,		/* a call far beyond every timeout it was given */
	FZ_F_UNKILLABLE,	/* SIGKILLed, did not exit */
	FZ_F_CRASH,		/* a worker died of a signal nobody sent */
	FZ_F_DATA,		/* a verified transfer delivered wrong bytes */
	FZ_F_MMAP,		/* a documented mmap was refused */
	FZ_F_KLOG,		/* the kernel log reported a problem */
	FZ_F_SETUP,		/* the fuzzer could not do what it needs */
	FZ_F_KINDS
};

struct fz_fail {
	uint64_t key;		/* kind, op and errno; 0: free */
	uint32_t ready;		/* text written */
	uint32_t kind;
	uint64_t count;
	uint64_t first_ms;	/* since the start */
	char text[FZ_FAIL_TEXT];
};

/*
 * A group being formed: the supervisor opens a slot with a key and
 * parameters, worker threads claim its ranks and join, and every member
 * runs the same script (the same seed); the supervisor retires the slot
 * once every member is done and opens the next generation.
 *
 * word: gen << 32 | done ranks << 16 | claimed ranks.  An odd gen is a
 * slot being set up; the parameters are stable while gen is even.
 */
struct fz_board {
	uint64_t word;
	uint64_t key;
	uint64_t heap_size;
	uint64_t script_seed;
	uint64_t opened_ms;
	uint32_t world;
	uint32_t sdma_ip;
	uint32_t chaos;		/* other threads may do anything on its files */
	uint32_t broken;	/* a member saw the group fail */
	uint32_t tainted;	/* a member broke the marking contract on purpose */
	uint32_t join_timeout_ms;
	int32_t claimer[16];	/* worker index holding the rank */
	/* what went off the script, for a data failure's report */
	uint32_t nevents;
	struct fz_event {
		uint32_t rank, step;
		int32_t op, err;	/* op: FZ_EV_* or a failed call's row */
		uint32_t plan;
	} events[32];
};

/* Group events besides failed calls (struct fz_board.events[].op). */
#define FZ_EV_MUTATION	-1	/* err: enum fz_mutation (tplan_fuzz_group.c) */
#define FZ_EV_PLAN	-2	/* a plan prepared on this rank */
#define FZ_EV_LEFT	-3	/* this rank closed its file */

/* Milestones: how deep the valid sequences got. */
enum fz_milestone {
	FZ_M_JOINED,		/* ranks that completed a join through the board */
	FZ_M_COLLECTIVES,	/* script barriers and all-gathers completed */
	FZ_M_PLANS,		/* plans created and prepared */
	FZ_M_ROUNDS,		/* rounds waited for */
	FZ_M_VERIFIED,		/* rounds whose data was checked on every rank's rows */
	FZ_M_PUTS,		/* script puts queued */
	FZ_M_SUBMITS,		/* raw chain submits accepted */
	FZ_M_INJECTS,		/* raw injections accepted */
	FZ_M_MUTATIONS,		/* off-script steps taken on purpose */
	FZ_M_FORKS,
	FZ_M_CHILD_KILLS,	/* fork children SIGKILLed by their parent */
	FZ_M_MMAPS,		/* mmaps of the device that succeeded */
	FZ_M_POKES,		/* SIGUSR1 sent to a thread in a call */
	FZ_M_EINTR,		/* calls that ended with EINTR */
	FZ_M_LATE_RANK,		/* collectives that arrived after another rank's timeout */
	FZ_M_GROUP_LEFT,	/* members that left their group at the end of its script */
	FZ_M_COUNT
};

struct fz_worker {
	int32_t pid;
	uint32_t gen;
	uint64_t started_ms;
	uint64_t killed_ms;		/* 0: not killed */
	int32_t killed_op;		/* what it was doing then */
	uint32_t reported;
};

struct fz_shared {
	/* Set by the supervisor before the first fork. */
	uint64_t seed;
	uint64_t t0_ms;
	uint32_t workers, threads;
	uint32_t ring_size;
	uint32_t allow_inject;
	uint32_t max_world;
	uint32_t stop;			/* workers: finish the current step, exit */

	uint64_t calls[FZ_NCMD + 1];
	uint64_t errs[FZ_NCMD + 1][FZ_ERRNO_SLOTS];
	uint64_t mmap_calls;
	uint64_t mmap_errs[FZ_ERRNO_SLOTS];
	uint64_t kills;
	uint64_t kills_in[FZ_NOPS];
	uint64_t restarts;
	uint64_t milestone[FZ_M_COUNT];

	uint32_t next_file;
	struct fz_file files[FZ_FILES];
	struct fz_slot slots[FZ_SLOTS];
	struct fz_board board[FZ_BOARD];
	struct fz_worker worker[FZ_WORKERS_MAX];
	struct fz_fail fails[FZ_FAILS];
	uint64_t fails_dropped;
};

extern struct fz_shared *fz;

/* ---- small helpers (tplan_fuzz_call.c) ------------------------------------ */

uint64_t fz_now_ms(void);
void fz_sleep_ms(unsigned int ms);
pid_t fz_gettid(void);

static inline uint64_t fz_add(uint64_t *p, uint64_t v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline void fz_count(enum fz_milestone m)
{
	fz_add(&fz->milestone[m], 1);
}

static inline int fz_stopping(void)
{
	return __atomic_load_n(&fz->stop, __ATOMIC_ACQUIRE);
}

/* splitmix64: one stream per worker thread, derived from the run's seed. */
struct fz_rng {
	uint64_t s;
};

static inline uint64_t fz_rand(struct fz_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t fz_mix(uint64_t a, uint64_t b)
{
	struct fz_rng r = { a ^ (b * 0xd1342543de82ef95ULL) };

	return fz_rand(&r);
}

/* 0..n-1 (0 for n == 0). */
static inline uint64_t fz_below(struct fz_rng *r, uint64_t n)
{
	return n ? fz_rand(r) % n : 0;
}

static inline int fz_chance(struct fz_rng *r, unsigned int percent)
{
	return fz_below(r, 100) < percent;
}

/* A value a field is likely to mishandle, around `near` (e.g. a size). */
uint64_t fz_edgy(struct fz_rng *r, uint64_t near);

/* Name of a statistics row or FZ_OP_* ("PLAN_WAIT", "mmap", ...). */
const char *fz_op_name(int op);
/* "EINVAL" (or the number) */
const char *fz_errno_name(int err, char *buf, size_t len);

/* ---- the call gate (tplan_fuzz_call.c) ------------------------------------- */

/* What a caller knows about a call, for the checks and the watchdog. */
struct fz_call {
	const char *desc;	/* the arguments, for a failure report */
	uint32_t timeout_ms;	/* as passed (0: the module's default) */
	int has_timeout;	/* timeout_ms applies (ETIMEDOUT not before it) */
	int expect;		/* the only errno the contract allows, or 0 */
	const char *expect_why;
};

/* Statistics row of an ioctl number: 0..FZ_NCMD-1, or FZ_CMD_UNKNOWN. */
int fz_cmd_index(unsigned long req);

/* Each ioctl's number, struct and the waits it may make. */
struct fz_cmd_info {
	unsigned long req;
	const char *name;
	uint32_t size;		/* sizeof() of its struct */
	uint32_t min_size;	/* its first published size: below it, EINVAL */
	int timeout_off;	/* offset of its timeout_ms, or -1 */
	uint32_t waits;		/* timeouts it may wait out one after another */
	uint32_t fixed_ms;	/* and waits of the module's own default */
};
extern const struct fz_cmd_info fz_cmds[FZ_NCMD];

/* The longest a call may wait by itself, from its timeout. */
uint64_t fz_budget_ms(int op, uint32_t timeout_ms);

/*
 * ioctl() on a tplan file through the gate: counted, in the in-flight
 * table while it runs, its errno checked.  Returns 0 or -errno.  Library
 * calls get here through the linker (-Wl,--wrap=ioctl) with a description
 * from fz_what().
 */
int fz_ioctl(int fd, unsigned long req, void *arg, const struct fz_call *call);

/* mmap() of a tplan file through the gate (watched, counted). */
void *fz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, const char *desc);
/* close() of a tplan file, which may run its release: watched. */
int fz_close(int fd);

/* What the calling thread is doing, for reports of library calls. */
void fz_what(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* File ids: which open file an fd is (several fds and forks may share one). */
uint32_t fz_file_new(int fd);
uint32_t fz_file_of(int fd);
void fz_file_forget(int fd);

/*
 * Record a failure; identical ones (kind, op, errno) are counted, the text
 * of the first is kept.
 */
void fz_fail(enum fz_fail_kind kind, int op, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The statistics row and errno of this thread's last call. */
void fz_last_call(int *op, int *err);

/* This thread's in-flight slot (set once per thread). */
void fz_slot_bind(int index);
int fz_slot_index(void);

/* The SIGUSR1 handler's count for this thread (EINTR must follow one). */
void fz_signals_init(void);
unsigned long fz_pokes_seen(void);

/* Load the generated table; 0, or -1 with a failure recorded. */
int fz_errno_table_init(void);
/* The codes uapi/tplan.h lists for a statistics row, as text. */
const char *fz_errno_documented(int op, char *buf, size_t len);

/* ---- workers (tplan_fuzz_group.c, tplan_fuzz_raw.c) ------------------------- */

/* A worker process: threads until the stop flag, then exit(0). */
void fz_worker_main(int index, uint32_t gen) __attribute__((noreturn));

/*
 * One open file a worker's threads share: a group member's library
 * context, or a raw file.  The last reference closes it once it is
 * marked closing.
 */
struct fz_ctx {
	int used;
	int refs;		/* holders (under the worker's lock) */
	int closing;
	int fd;
	struct tplan_ctx *ctx;	/* NULL for a raw file */
	int chaos;		/* anything goes on this file */
	int board;		/* board slot, -1 if none */
	uint32_t rank, world;	/* world 0: not joined */
	uint64_t heap_size;
	uint8_t *heap;		/* this rank's heap as mapped here, or NULL */
	uint64_t scratch_off;	/* hostile writes stay in [off, off + len) */
	uint64_t scratch_len;
};

#define FZ_CTX_MAX 10

struct fz_member;

struct fz_thread {
	int index;		/* in the worker */
	int worker;
	uint32_t gen;
	int drive_pct;		/* how often it looks for a group to join */
	struct fz_rng rng;
	pthread_t thread;
	struct fz_member *member;	/* the group this thread is a rank of */
	struct fz_private *priv;	/* tplan_fuzz_raw.c's state */
};

/*
 * Share a file with the worker's threads; one reference is the caller's.
 * ctx: a joined library context (fd is taken from it), or NULL and fd a
 * raw file (world 0: not joined).  NULL when the table is full.
 */
struct fz_ctx *fz_ctx_add(struct tplan_ctx *ctx, int fd, int chaos, int board);
/* A shared file with a reference held (joined ones only if asked), or NULL. */
struct fz_ctx *fz_ctx_get(struct fz_rng *r, int want_joined);
void fz_ctx_put(struct fz_ctx *c);
/*
 * Every shared file, each with a reference held (so none closes while a
 * fork child inherits it); fz_ctx_put() each when the child is done.
 */
int fz_ctx_hold_all(struct fz_ctx **out, int max);

/* Group members (tplan_fuzz_group.c): one step; 0, or -1 when done. */
int fz_member_step(struct fz_thread *t);
void fz_member_abandon(struct fz_thread *t);

/* Raw operations (tplan_fuzz_raw.c). */
void fz_raw_op(struct fz_thread *t);
void fz_raw_thread_end(struct fz_thread *t);

#endif /* TPLAN_FUZZ_H */
