// SPDX-License-Identifier: GPL-2.0
/*
 * tplan_fuzz: an ioctl fuzzer and kill storm for /dev/tplan, run inside
 * the test VM.
 *
 *   tplan_fuzz [-t SECONDS] [-s SEED] [-w WORKERS] [-T THREADS] [-k KILL_MS]
 *              [-p POKE_MS] [-m MARGIN_S] [-g GRACE_S]
 *
 * For SECONDS (default 60, or $TPLAN_FUZZ_SECONDS) WORKERS processes of
 * THREADS threads each issue random and mutated-valid ioctl sequences
 * (tplan_fuzz_group.c, tplan_fuzz_raw.c), while this process, which never
 * opens the device itself:
 *   - SIGKILLs a random worker every KILL_MS on average (default 1500),
 *     preferring one blocked in the module (join, barrier, wait, quiet,
 *     next round, close, ...), and starts a new one in its place;
 *   - sends SIGUSR1 to a thread blocked in the module every POKE_MS on
 *     average (default 300), so that EINTR paths run and are checked;
 *   - watches every call in flight: one still running 3 x (the longest
 *     it, and the calls it may queue behind on its file, may wait) +
 *     MARGIN_S (default 20 s) later is reported with the kernel stacks of
 *     the threads involved; a worker that does not exit within GRACE_S
 *     (default 60 s) of its SIGKILL likewise;
 *   - runs the groups' board (tplan_fuzz.h).
 * Then it prints what was issued, per command and per errno, the kills,
 * restarts and milestones, and TAP: one point per property, and a "not
 * ok" per distinct violation (an errno uapi/tplan.h does not list for the
 * call, a kernel-internal errno, EINTR without a signal, ETIMEDOUT before
 * its timeout (but for a collective reached after another rank's timeout,
 * which fails at once), a wrong fixed answer of the shared contract, wrong data
 * after a successful transfer, a stuck call, an unkillable worker, a
 * worker that crashed, a kernel log report during the run).
 *
 * The seed is printed; the same seed replays the same choices as far as
 * scheduling allows.  Exit status: 0, 1 on any "not ok", 4 (skip) when
 * /dev/tplan is absent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tplan_fuzz.h"

struct opts {
	unsigned int seconds, workers, threads, kill_ms, poke_ms, margin_s, grace_s;
	uint64_t seed;
};

static struct opts o = {
	.seconds = 60, .workers = 6, .threads = 3, .kill_ms = 1500, .poke_ms = 300,
	.margin_s = 20, .grace_s = 60,
};
static struct fz_rng rng;
static int kmsg_fd = -1;

static uint64_t since_start(void)
{
	return fz_now_ms() - fz->t0_ms;
}

/* How long a call has been running (a slot may be newer than now). */
static uint64_t age_ms(const struct fz_slot *s, uint64_t now)
{
	return now > s->start_ms ? now - s->start_ms : 0;
}

/* ---- module parameters ---------------------------------------------------------- */

static unsigned long param(const char *name)
{
	char path[128], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/tplan/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	if (buf[0] == 'Y')
		return 1;
	return strtoul(buf, NULL, 0);
}

/* ---- text from /proc ------------------------------------------------------------- */

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

static void read_file(const char *path, char *out, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	out[0] = 0;
	if (fd < 0)
		return;
	n = read(fd, out, len - 1);
	close(fd);
	out[n > 0 ? n : 0] = 0;
}

/* The scheduler state letter of a task ('?' if gone). */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	read_file(path, buf, sizeof(buf));
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Where a task sleeps in the kernel: wchan and the stack, indented. */
static void task_kernel_view(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64], buf[2048], *line, *save;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	read_file(path, buf, sizeof(buf));
	append(out, len, "    task %d/%d state %c, wchan %s\n", pid, tid, task_state(pid, tid),
	       buf[0] ? buf : "?");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	read_file(path, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		append(out, len, "      %s\n", line);
}

/* Every thread of pid that sleeps uninterruptibly (D), with its stack. */
static void d_state_threads(pid_t pid, pid_t skip, char *out, size_t len)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid > 0 && tid != skip && task_state(pid, tid) == 'D')
			task_kernel_view(pid, tid, out, len);
	}
	closedir(dir);
}

/* ---- the in-flight table ------------------------------------------------------------- */

/* A consistent copy of a slot; 0 when it holds no call. */
static int slot_read(int i, struct fz_slot *out)
{
	struct fz_slot *s = &fz->slots[i];
	uint32_t seq;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;
		memcpy(out, s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq)
			return out->op >= 0 && out->pid > 0;
	}
	return 0;
}

/* Calls that block in the module until something happens. */
static int blocking(int op)
{
	switch (op + TPLAN_CMD_BASE) {
	case TPLAN_CMD_GROUP_JOIN:
	case TPLAN_CMD_GROUP_BARRIER:
	case TPLAN_CMD_GROUP_ALL_GATHER:
	case TPLAN_CMD_PUT:
	case TPLAN_CMD_QUIET:
	case TPLAN_CMD_QUEUE_INJECT:
	case TPLAN_CMD_CHAIN_SUBMIT:
	case TPLAN_CMD_PLAN_CREATE:
	case TPLAN_CMD_PLAN_PREPARE:
	case TPLAN_CMD_PLAN_WAIT:
	case TPLAN_CMD_PLAN_NEXT_ROUND:
	case TPLAN_CMD_PLAN_CLOSE:
		return 1;
	}
	return op == FZ_OP_CLOSE || op == FZ_OP_MMAP;
}

/*
 * How long a call may take: it may queue on its file's lock behind the
 * calls in flight there when it started and those started since, and on
 * its process's mmap lock behind the longest call of the process; 3x that,
 * plus the margin.
 */
static uint64_t allowed_ms(const struct fz_slot *s)
{
	uint64_t started = __atomic_load_n(&fz->files[s->file % FZ_FILES].started,
					   __ATOMIC_RELAXED);
	uint64_t w = s->file_inflight0 + (started - s->file_started0), p = 0;
	struct fz_slot other;
	int i;

	for (i = 0; i < FZ_SLOTS; i++)
		if (slot_read(i, &other) && other.pid == s->pid && other.tid != s->tid &&
		    other.budget_ms > p)
			p = other.budget_ms;
	return 3 * (w + p) + o.margin_s * 1000ULL;
}

static void stuck_report(int i, const struct fz_slot *s, uint64_t now, uint64_t allowed)
{
	static char text[FZ_FAIL_TEXT];
	struct fz_slot other;
	int k;

	text[0] = 0;
	append(text, sizeof(text),
	       "%s has been running for %llu s, far beyond every timeout it was given (allowed %llu s): %s\n",
	       fz_op_name(s->op), (unsigned long long)age_ms(s, now) / 1000,
	       (unsigned long long)allowed / 1000, s->desc);
	task_kernel_view(s->pid, s->tid, text, sizeof(text));
	append(text, sizeof(text), "  other calls in flight on the same file or process:\n");
	for (k = 0; k < FZ_SLOTS; k++) {
		if (k == i || !slot_read(k, &other))
			continue;
		if (other.pid != s->pid && (other.file != s->file || !s->file))
			continue;
		append(text, sizeof(text), "  %s for %llu s: %s\n", fz_op_name(other.op),
		       (unsigned long long)age_ms(&other, now) / 1000, other.desc);
		task_kernel_view(other.pid, other.tid, text, sizeof(text));
	}
	append(text, sizeof(text), "  other threads of process %d in D state:\n", s->pid);
	d_state_threads(s->pid, s->tid, text, sizeof(text));
	fz_fail(FZ_F_STUCK, s->op, 0, "%s", text);
	__atomic_store_n(&fz->slots[i].reported, 1, __ATOMIC_RELAXED);
}

static void watchdog(void)
{
	uint64_t now, allowed;
	struct fz_slot s;
	char st;
	int i;

	for (i = 0; i < FZ_SLOTS; i++) {
		if (!slot_read(i, &s) || s.reported)
			continue;
		now = fz_now_ms();
		allowed = allowed_ms(&s);
		if (age_ms(&s, now) <= allowed)
			continue;
		st = task_state(s.pid, s.tid);
		if (st == '?' || st == 'Z' || st == 'X')
			continue;	/* gone; its slot is cleared when reaped */
		stuck_report(i, &s, now, allowed);
	}
}

/* A call past its own worst case (not yet the watchdog's limit): leave it be. */
static int overdue(pid_t pid)
{
	struct fz_slot s;
	int i;

	for (i = 0; i < FZ_SLOTS; i++)
		if (slot_read(i, &s) && s.pid == pid &&
		    age_ms(&s, fz_now_ms()) > (allowed_ms(&s) - o.margin_s * 1000ULL) / 3 + 5000)
			return 1;
	return 0;
}

/* ---- workers ---------------------------------------------------------------------- */

static void worker_start(int w)
{
	struct fz_worker *wk = &fz->worker[w];
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fz_fail(FZ_F_SETUP, -1, errno, "fork of worker %d: %s", w, strerror(errno));
		return;
	}
	if (pid == 0)
		fz_worker_main(w, wk->gen + 1);
	wk->gen++;
	wk->pid = pid;
	wk->started_ms = fz_now_ms();
	wk->killed_ms = 0;
	wk->reported = 0;
}

/* A dead worker's claims on the board: done, and its groups broken. */
static void board_release(int w)
{
	int i, r;

	for (i = 0; i < FZ_BOARD; i++) {
		struct fz_board *b = &fz->board[i];
		uint64_t word = __atomic_load_n(&b->word, __ATOMIC_ACQUIRE);

		if ((word >> 32) & 1)
			continue;
		for (r = 0; r < 16; r++) {
			if (!(word >> r & 1) || word >> (16 + r) & 1 || b->claimer[r] != w)
				continue;
			__atomic_store_n(&b->broken, 1, __ATOMIC_RELEASE);
			while (!((word >> (16 + r)) & 1) && (word >> 32) == (b->word >> 32) &&
			       !__atomic_compare_exchange_n(&b->word, &word,
							    word | 1ULL << (16 + r), 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				;
		}
	}
}

static void slots_clear(pid_t pid)
{
	int i;

	for (i = 0; i < FZ_SLOTS; i++) {
		struct fz_slot *s = &fz->slots[i];

		if (s->pid != pid || s->op < 0)
			continue;
		__atomic_fetch_sub(&fz->files[s->file % FZ_FILES].inflight, s->budget_ms,
				   __ATOMIC_RELAXED);
		__atomic_store_n(&s->op, -1, __ATOMIC_RELEASE);
	}
}

static int worker_of(pid_t pid)
{
	unsigned int w;

	for (w = 0; w < o.workers; w++)
		if (fz->worker[w].pid == pid)
			return (int)w;
	return -1;
}

static void reap(int restart)
{
	int status, w;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		w = worker_of(pid);
		slots_clear(pid);
		if (w < 0)
			continue;	/* an orphaned fork child, or a lost worker */
		if (fz->worker[w].killed_ms) {
			/*
			 * SIGKILL, or at the end a clean exit: the stop flag may
			 * have ended the worker just before the kill reached it.
			 */
			int ended = __atomic_load_n(&fz->stop, __ATOMIC_ACQUIRE) &&
				     WIFEXITED(status) && !WEXITSTATUS(status);

			if (!ended && (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL))
				fz_fail(FZ_F_CRASH, -1, 0, "worker %d (pid %d) was SIGKILLed but ended with status %#x",
					w, pid, status);
		} else if (WIFSIGNALED(status)) {
			fz_fail(FZ_F_CRASH, -1, WTERMSIG(status),
				"worker %d (pid %d) died of signal %d (%s), which the fuzzer did not send%s",
				w, pid, WTERMSIG(status), strsignal(WTERMSIG(status)),
				WTERMSIG(status) == SIGKILL ? " (the OOM killer?)" :
				WTERMSIG(status) == SIGSEGV ? " (a kernel oops in its call?)" : "");
		} else if (WEXITSTATUS(status)) {
			fz_fail(FZ_F_CRASH, -1, 0, "worker %d (pid %d) exited with status %d", w, pid,
				WEXITSTATUS(status));
		}
		board_release(w);
		fz->worker[w].pid = 0;
		if (restart) {
			worker_start(w);
			fz->restarts++;
		}
	}
}

static void kill_worker(int w, int op)
{
	struct fz_worker *wk = &fz->worker[w];

	kill(wk->pid, SIGKILL);
	wk->killed_ms = fz_now_ms();
	wk->killed_op = op;
	fz->kills++;
	fz->kills_in[op >= 0 && op < FZ_NOPS ? op : FZ_OP_OTHER]++;
}

/* The kill storm's next victim: blocked in the module if possible. */
static void kill_one(void)
{
	int cand[FZ_SLOTS], ops[FZ_SLOTS], n = 0, i, w;
	struct fz_slot s;

	if (fz_chance(&rng, 70)) {
		for (i = 0; i < FZ_SLOTS; i += 2) {
			if (!slot_read(i, &s) || !blocking(s.op))
				continue;
			w = worker_of(s.pid);
			if (w < 0 || fz->worker[w].killed_ms || overdue(s.pid))
				continue;
			cand[n] = w;
			ops[n++] = s.op;
		}
	}
	if (!n) {
		w = (int)fz_below(&rng, o.workers);
		if (!fz->worker[w].pid || fz->worker[w].killed_ms || overdue(fz->worker[w].pid))
			return;
		kill_worker(w, FZ_OP_OTHER);
		return;
	}
	i = (int)fz_below(&rng, n);
	kill_worker(cand[i], ops[i]);
}

/* SIGUSR1 to a thread (or fork child) in a blocking call: EINTR paths. */
static void poke_one(void)
{
	int cand[FZ_SLOTS], n = 0, i;
	struct fz_slot s;

	for (i = 0; i < FZ_SLOTS; i++)
		if (slot_read(i, &s) && blocking(s.op) && age_ms(&s, fz_now_ms()) >= 5)
			cand[n++] = i;
	if (!n)
		return;
	i = cand[fz_below(&rng, n)];
	if (slot_read(i, &s) && syscall(SYS_tgkill, s.pid, s.tid, SIGUSR1) == 0)
		fz_count(FZ_M_POKES);
}

/* Workers killed that did not exit: report each once, with its stacks. */
static void unkillable_check(uint64_t grace_ms)
{
	static char text[FZ_FAIL_TEXT];
	unsigned int w;
	char path[64];
	struct dirent *d;
	DIR *dir;

	for (w = 0; w < o.workers; w++) {
		struct fz_worker *wk = &fz->worker[w];

		if (!wk->pid || !wk->killed_ms || wk->reported ||
		    fz_now_ms() - wk->killed_ms <= grace_ms)
			continue;
		wk->reported = 1;
		text[0] = 0;
		append(text, sizeof(text),
		       "worker %u (pid %d), SIGKILLed while in %s, has not exited %llu s later; its threads:\n",
		       w, wk->pid, fz_op_name(wk->killed_op),
		       (unsigned long long)(fz_now_ms() - wk->killed_ms) / 1000);
		snprintf(path, sizeof(path), "/proc/%d/task", wk->pid);
		dir = opendir(path);
		while (dir && (d = readdir(dir)))
			if (atoi(d->d_name) > 0)
				task_kernel_view(wk->pid, (pid_t)atoi(d->d_name), text, sizeof(text));
		if (dir)
			closedir(dir);
		fz_fail(FZ_F_UNKILLABLE, wk->killed_op, 0, "%s", text);
	}
}

/* ---- the board ------------------------------------------------------------------------ */

static uint32_t pick_world(void)
{
	uint64_t r = fz_below(&rng, 100);
	uint32_t w;

	w = r < 10 ? 1 : r < 45 ? 2 : r < 70 ? 3 : r < 88 ? 4 : r < 98 ? 5 + fz_below(&rng, 4) :
	    9 + (uint32_t)fz_below(&rng, 8);
	return w < fz->max_world ? w : fz->max_world;
}

static void board_open(int i)
{
	struct fz_board *b = &fz->board[i];
	uint64_t word = __atomic_load_n(&b->word, __ATOMIC_ACQUIRE), old_key = b->key;
	static const uint64_t heaps[] = { 1, 4, 16, 16, 64, 64, 256, 1024 };
	int j;

	b->world = pick_world();
	b->heap_size = 4096 * heaps[fz_below(&rng, sizeof(heaps) / sizeof(heaps[0]))];
	b->sdma_ip = fz_chance(&rng, 80) ? TPLAN_SDMA_440 : TPLAN_SDMA_442;
	b->chaos = fz_chance(&rng, 40);
	b->script_seed = fz_rand(&rng);
	b->join_timeout_ms = fz_chance(&rng, 95) ? 10000 + (uint32_t)fz_below(&rng, 10000) :
						   300 + (uint32_t)fz_below(&rng, 1200);
	b->key = fz_rand(&rng);
	/*
	 * Keys that collide, another group's or this slot's last one: chaos
	 * groups only, as members of both may end up in one kernel group.
	 */
	if (b->chaos && fz_chance(&rng, 15)) {
		j = (int)fz_below(&rng, FZ_BOARD);
		if (j != i && !((fz->board[j].word >> 32) & 1) && fz->board[j].chaos)
			b->key = fz->board[j].key;
	} else if (b->chaos && fz_chance(&rng, 10) && old_key) {
		b->key = old_key;
	}
	b->broken = 0;
	b->tainted = 0;
	b->nevents = 0;
	for (j = 0; j < 16; j++)
		b->claimer[j] = -1;
	b->opened_ms = fz_now_ms();
	/* the parameters before the word that opens the slot */
	__atomic_store_n(&b->word, ((word >> 32) + 1) << 32, __ATOMIC_RELEASE);
}

/* Retire slots whose members are done; keep a couple of ranks open. */
static void board_tend(void)
{
	uint64_t now = fz_now_ms(), word;
	uint32_t free_ranks = 0, claimed, done, full;
	int i, closed[FZ_BOARD], nclosed = 0;

	for (i = 0; i < FZ_BOARD; i++) {
		struct fz_board *b = &fz->board[i];

		word = __atomic_load_n(&b->word, __ATOMIC_ACQUIRE);
		if ((word >> 32) & 1) {
			closed[nclosed++] = i;
			continue;
		}
		claimed = word & 0xffff;
		done = (word >> 16) & 0xffff;
		full = (uint32_t)((1ULL << b->world) - 1);
		if ((!(claimed & ~done) && (claimed == full || b->broken ||
					    now - b->opened_ms > 30000)) ||
		    now - b->opened_ms > 300000) {
			/* odd: closed until board_open() writes new parameters */
			if (__atomic_compare_exchange_n(&b->word, &word, ((word >> 32) + 1) << 32, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				closed[nclosed++] = i;
			continue;
		}
		if (!b->broken)
			free_ranks += (uint32_t)__builtin_popcount(full & ~claimed);
	}
	while (free_ranks < 2 && nclosed && !fz_stopping()) {
		i = closed[--nclosed];
		board_open(i);
		free_ranks += fz->board[i].world;
	}
}

/* ---- the kernel log ------------------------------------------------------------------ */

static void kmsg_begin(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
}

/* Reports of the kernel's checkers in what was logged since the start. */
static void kmsg_check(void)
{
	static char text[FZ_FAIL_TEXT];
	regex_t re;
	char rec[2048], *msg;
	int lines = 0, found = 0;
	ssize_t n;

	if (kmsg_fd < 0)
		return;
	if (regcomp(&re, "WARNING:|BUG[: ]|Oops|general protection fault|KFENCE|UBSAN|KASAN|"
			 "Call Trace|list_(add|del) corruption|refcount_t:|slab error|"
			 "Poison overwritten|Redzone|Object padding|INFO: task .* blocked|"
			 "circular locking|recursive locking|inconsistent lock state|"
			 "unreferenced object|soft lockup|detected stall|tplan: .*leak",
		    REG_EXTENDED | REG_NOSUB))
		return;
	text[0] = 0;
	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten: go on with the next */
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = 0;
		if (!found && !regexec(&re, msg, 0, NULL, 0))
			found = 1;
		if (found && lines++ < 60)
			append(text, sizeof(text), "  %s\n", msg);
	}
	regfree(&re);
	if (found)
		fz_fail(FZ_F_KLOG, -1, 0, "%s", text + 2);
}

/* ---- the report -------------------------------------------------------------------- */

static const char *const kind_names[FZ_F_KINDS] = {
	[FZ_F_UNDOC] = "every errno is one uapi/tplan.h lists for its ioctl",
	[FZ_F_INTERNAL] = "no kernel-internal errno (ERESTARTSYS and the like) reaches user space",
	[FZ_F_EINTR] = "EINTR only after a signal reached the thread",
	[FZ_F_EARLY] = "ETIMEDOUT never before the timeout passed",
	[FZ_F_CONTRACT] = "the shared contract's fixed answers (ENOTTY, EFAULT, EINVAL, E2BIG)",
	[FZ_F_RETVAL] = "every ioctl returns 0 or -1",
	[FZ_F_STUCK] = "no call runs far beyond every timeout it was given",
	[FZ_F_UNKILLABLE] = "every SIGKILLed worker exits within the grace time",
	[FZ_F_CRASH] = "no worker dies of a signal the fuzzer did not send",
	[FZ_F_DATA] = "transfers that succeed deliver the right bytes",
	[FZ_F_MMAP] = "mmaps as uapi/tplan.h documents them succeed",
	[FZ_F_KLOG] = "the kernel log stays free of WARN, BUG, Oops, lockdep and KASAN reports",
	[FZ_F_SETUP] = "the fuzzer could set itself up",
};

static int tap_n, tap_bad;

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		tap_bad++;
}

/* Text as TAP comment lines. */
static void comment(const char *text)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		printf("#   %.*s\n", (int)(nl ? nl - p : (long)strlen(p)), p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

static void print_stats(uint64_t wall_ms)
{
	char nb[24], line[1024];
	uint64_t total = 0, m;
	int op, e;

	printf("# %-18s %10s %10s  errors by errno\n", "ioctl", "calls", "ok");
	for (op = 0; op <= FZ_NCMD; op++) {
		line[0] = 0;
		for (e = 1; e < FZ_ERRNO_SLOTS; e++)
			if (fz->errs[op][e])
				append(line, sizeof(line), "%s%s %llu", line[0] ? ", " : "",
				       fz_errno_name(e, nb, sizeof(nb)),
				       (unsigned long long)fz->errs[op][e]);
		printf("# %-18s %10llu %10llu  %s\n", op < FZ_NCMD ? fz_cmds[op].name : "(unknown nr)",
		       (unsigned long long)fz->calls[op], (unsigned long long)fz->errs[op][0], line);
		total += fz->calls[op];
	}
	line[0] = 0;
	for (e = 1; e < FZ_ERRNO_SLOTS; e++)
		if (fz->mmap_errs[e])
			append(line, sizeof(line), "%s%s %llu", line[0] ? ", " : "",
			       fz_errno_name(e, nb, sizeof(nb)), (unsigned long long)fz->mmap_errs[e]);
	printf("# %-18s %10llu %10llu  %s\n", "mmap", (unsigned long long)fz->mmap_calls,
	       (unsigned long long)fz->mmap_errs[0], line);
	printf("# %llu ioctls in %.1f s (%.0f/s)\n", (unsigned long long)total, wall_ms / 1000.0,
	       wall_ms ? total * 1000.0 / wall_ms : 0.0);

	line[0] = 0;
	for (op = 0; op < FZ_NOPS; op++)
		if (fz->kills_in[op])
			append(line, sizeof(line), "%s%s %llu", line[0] ? ", " : "", fz_op_name(op),
			       (unsigned long long)fz->kills_in[op]);
	printf("# kills: %llu (while in: %s); workers restarted: %llu\n",
	       (unsigned long long)fz->kills, line, (unsigned long long)fz->restarts);
	m = fz->milestone[FZ_M_POKES];
	printf("# signals to blocked threads: %llu; calls ended by EINTR: %llu\n",
	       (unsigned long long)m, (unsigned long long)fz->milestone[FZ_M_EINTR]);
	printf("# collectives reached after another rank's timeout (ETIMEDOUT at once): %llu\n",
	       (unsigned long long)fz->milestone[FZ_M_LATE_RANK]);
	printf("# forks: %llu (killed by their parent: %llu); device mmaps that succeeded: %llu\n",
	       (unsigned long long)fz->milestone[FZ_M_FORKS],
	       (unsigned long long)fz->milestone[FZ_M_CHILD_KILLS],
	       (unsigned long long)fz->milestone[FZ_M_MMAPS]);
	printf("# groups: %llu ranks joined through the board, %llu left at the end of their script; "
	       "%llu barriers and all-gathers\n",
	       (unsigned long long)fz->milestone[FZ_M_JOINED],
	       (unsigned long long)fz->milestone[FZ_M_GROUP_LEFT],
	       (unsigned long long)fz->milestone[FZ_M_COLLECTIVES]);
	printf("# plans: %llu prepared, %llu rounds waited for, %llu verified on every rank's rows; "
	       "%llu puts, %llu raw chain submits and %llu injections accepted; %llu off-script steps\n",
	       (unsigned long long)fz->milestone[FZ_M_PLANS],
	       (unsigned long long)fz->milestone[FZ_M_ROUNDS],
	       (unsigned long long)fz->milestone[FZ_M_VERIFIED],
	       (unsigned long long)fz->milestone[FZ_M_PUTS],
	       (unsigned long long)fz->milestone[FZ_M_SUBMITS],
	       (unsigned long long)fz->milestone[FZ_M_INJECTS],
	       (unsigned long long)fz->milestone[FZ_M_MUTATIONS]);
}

static void report(uint64_t wall_ms, int table_ok)
{
	static const int order[] = {
		FZ_F_SETUP, FZ_F_UNDOC, FZ_F_INTERNAL, FZ_F_EINTR, FZ_F_EARLY, FZ_F_CONTRACT,
		FZ_F_RETVAL, FZ_F_MMAP, FZ_F_DATA, FZ_F_STUCK, FZ_F_UNKILLABLE, FZ_F_CRASH,
		FZ_F_KLOG,
	};
	char first[200];
	unsigned int k, i, issued = 0;
	int any;

	print_stats(wall_ms);
	tap(table_ok, "the errno table generated from uapi/tplan.h covers all %d ioctls", FZ_NCMD);
	for (i = 0; i <= FZ_NCMD; i++)
		issued += fz->calls[i] > 0;
	if (o.seconds < 10)
		printf("ok %d - every ioctl number was issued # SKIP a run under 10 s\n", ++tap_n);
	else
		tap(issued == FZ_NCMD + 1, "every ioctl number, and unknown ones, was issued (%u of %d)",
		    issued, FZ_NCMD + 1);
	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		any = 0;
		for (i = 0; i < FZ_FAILS; i++) {
			struct fz_fail *f = &fz->fails[i];

			if (!__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE) || (int)f->kind != order[k])
				continue;
			any = 1;
			snprintf(first, sizeof(first), "%.*s", (int)strcspn(f->text, "\n"), f->text);
			tap(0, "%s: %s", kind_names[order[k]], first);
			comment(f->text);
			printf("#   (%llu time%s, first after %.1f s)\n", (unsigned long long)f->count,
			       f->count == 1 ? "" : "s", f->first_ms / 1000.0);
		}
		if (!any && order[k] != FZ_F_SETUP)
			tap(1, "%s", kind_names[order[k]]);
	}
	if (fz->fails_dropped)
		printf("# %llu further distinct failures were not kept\n",
		       (unsigned long long)fz->fails_dropped);
	printf("# seed %#llx; replay: tplan_fuzz -s %#llx -t %u -w %u -T %u -k %u -p %u\n",
	       (unsigned long long)o.seed, (unsigned long long)o.seed, o.seconds, o.workers,
	       o.threads, o.kill_ms, o.poke_ms);
	printf("1..%d\n", tap_n);
}

/* Print failures as they are found, so a long run explains itself early. */
static void news(void)
{
	static int seen[FZ_FAILS];
	int i;

	for (i = 0; i < FZ_FAILS; i++) {
		struct fz_fail *f = &fz->fails[i];

		if (seen[i] || !__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE))
			continue;
		seen[i] = 1;
		printf("# [%.1f s] %s: %.*s\n", since_start() / 1000.0, kind_names[f->kind],
		       (int)strcspn(f->text, "\n"), f->text);
		fflush(stdout);
	}
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: tplan_fuzz [-t seconds] [-s seed] [-w workers] [-T threads] "
			"[-k kill_ms] [-p poke_ms] [-m margin_s] [-g grace_s]\n");
	exit(2);
}

static uint64_t next_interval(unsigned int mean_ms)
{
	/* uniform in [mean/4, 7 mean/4): bursts and lulls, the given mean */
	return mean_ms / 4 + fz_below(&rng, (uint64_t)mean_ms * 3 / 2 + 1);
}

int main(int argc, char **argv)
{
	uint64_t end, next_kill, next_poke, next_progress, t_end, wall;
	const char *env = getenv("TPLAN_FUZZ_SECONDS");
	unsigned int w;
	int c, table_ok, fd;
	struct stat st;

	o.seed = fz_mix(fz_now_ms(), (uint64_t)getpid());
	if (env)
		o.seconds = (unsigned int)strtoul(env, NULL, 0);
	while ((c = getopt(argc, argv, "t:s:w:T:k:p:m:g:")) != -1) {
		switch (c) {
		case 't': o.seconds = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'w': o.workers = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'T': o.threads = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'k': o.kill_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': o.poke_ms = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': o.margin_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'g': o.grace_s = (unsigned int)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!o.workers || o.workers > FZ_WORKERS_MAX || !o.threads || o.threads > FZ_THREADS_MAX)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (stat(TPLAN_DEVICE_PATH, &st)) {
		printf("1..0 # SKIP %s absent: tplan.ko not loaded\n", TPLAN_DEVICE_PATH);
		return 4;
	}

	fz = mmap(NULL, sizeof(*fz), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz == MAP_FAILED) {
		printf("1..0 # SKIP no memory for the shared state\n");
		return 4;
	}
	rng.s = o.seed;
	fz->seed = o.seed;
	fz->t0_ms = fz_now_ms();
	fz->workers = o.workers;
	fz->threads = o.threads;
	fz->ring_size = (uint32_t)param("ring_size");
	fz->allow_inject = (uint32_t)param("allow_inject");
	fz->max_world = 16;
	for (c = 0; c < FZ_SLOTS; c++)
		fz->slots[c].op = -1;
	for (c = 0; c < FZ_BOARD; c++)
		fz->board[c].word = 1ULL << 32;	/* closed */
	table_ok = !fz_errno_table_init();

	/* Orphaned fork children come here to be reaped; the OOM killer spares us. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "-1000", 5) < 0)
			printf("# oom_score_adj: %s\n", strerror(errno));
		close(fd);
	}
	signal(SIGUSR1, SIG_IGN);
	kmsg_begin();

	printf("# tplan_fuzz: seed %#llx, %u s, %u workers x %u threads, a kill every ~%u ms, "
	       "a signal every ~%u ms; module: ring_size=%u prep_limit=%lu allow_inject=%u\n",
	       (unsigned long long)o.seed, o.seconds, o.workers, o.threads, o.kill_ms, o.poke_ms,
	       fz->ring_size, param("prep_limit"), fz->allow_inject);

	board_tend();
	for (w = 0; w < o.workers; w++)
		worker_start((int)w);

	end = fz->t0_ms + o.seconds * 1000ULL;
	next_kill = fz_now_ms() + (o.kill_ms ? next_interval(o.kill_ms) : ~0ULL / 2);
	next_poke = fz_now_ms() + (o.poke_ms ? next_interval(o.poke_ms) : ~0ULL / 2);
	next_progress = fz_now_ms() + 10000;
	while (fz_now_ms() < end) {
		reap(1);
		board_tend();
		if (fz_now_ms() >= next_kill) {
			kill_one();
			next_kill = fz_now_ms() + next_interval(o.kill_ms);
		}
		if (fz_now_ms() >= next_poke) {
			poke_one();
			next_poke = fz_now_ms() + next_interval(o.poke_ms);
		}
		watchdog();
		unkillable_check(o.grace_s * 1000ULL);
		news();
		if (fz_now_ms() >= next_progress) {
			uint64_t calls = 0;

			for (c = 0; c <= FZ_NCMD; c++)
				calls += fz->calls[c];
			printf("# [%.0f s] %llu ioctls, %llu kills, %llu rounds verified\n",
			       since_start() / 1000.0, (unsigned long long)calls,
			       (unsigned long long)fz->kills,
			       (unsigned long long)fz->milestone[FZ_M_VERIFIED]);
			next_progress += 10000;
		}
		fz_sleep_ms(10);
	}

	/* The end: a moment to finish, then SIGKILL for whoever is still in a call. */
	__atomic_store_n(&fz->stop, 1, __ATOMIC_RELEASE);
	t_end = fz_now_ms() + 3000;
	while (fz_now_ms() < t_end) {
		reap(0);
		for (w = 0; w < o.workers && !fz->worker[w].pid; w++)
			;
		if (w == o.workers)
			break;
		fz_sleep_ms(10);
	}
	watchdog();
	for (w = 0; w < o.workers; w++)
		if (fz->worker[w].pid && !fz->worker[w].killed_ms) {
			kill(fz->worker[w].pid, SIGKILL);
			fz->worker[w].killed_ms = fz_now_ms();
			fz->worker[w].killed_op = FZ_OP_OTHER;
		}
	t_end = fz_now_ms() + o.grace_s * 1000ULL;
	for (;;) {
		reap(0);
		for (w = 0; w < o.workers && !fz->worker[w].pid; w++)
			;
		if (w == o.workers || fz_now_ms() > t_end)
			break;
		fz_sleep_ms(20);
	}
	unkillable_check(0);
	/* fork children outliving their workers die by PR_SET_PDEATHSIG */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	kmsg_check();
	wall = fz_now_ms() - fz->t0_ms;
	news();
	report(wall, table_ok);
	return tap_bad ? 1 : 0;
}
