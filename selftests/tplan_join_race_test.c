// SPDX-License-Identifier: GPL-2.0
/*
 * Joins of one key that time out while others arrive, where the in-VM
 * fuzzer found a use-after-free of a group in GROUP_JOIN (a general
 * protection fault on slab poison in mutex_lock, from tplan_group_join,
 * then every later join stuck behind the global lock the dead task held).
 *
 * The last reference of a group that never completed is dropped outside
 * the lock that guards the lookup list; until the release takes that lock
 * and unlinks the group, another join finds it by key and takes a
 * reference to an object being freed.  Processes join one key as rank 0
 * and rank 1 with timeouts of a few milliseconds for up to RACE_SECONDS
 * (or TPLAN_JOIN_RACE_SECONDS: make check's VM runs it for 10 s on the
 * Debian kernels, where only an oops could show the race, and for the
 * full time on the debug kernel, where KASAN sees it);
 * the test fails on the kernel's report of it (refcount on 0, an oops, a
 * KASAN or slab report), on a joiner killed by the kernel, or on a join
 * that never returns.  A race: a run without a report proves nothing.
 *
 * Run last: once the race is hit, every later join in the system blocks.
 */
#include <fcntl.h>
#include <regex.h>

#include "tplan_selftest.h"

#define RACE_SECONDS 30
#define JOINERS 6
#define HEAP 4096

FIXTURE(join_race) {
	int unused;
};

FIXTURE_SETUP(join_race)
{
	int fd;

	TPLAN_OPEN_OR_SKIP(fd);
	close(fd);
}

FIXTURE_TEARDOWN(join_race)
{
}

/* A joiner: join (key, rank) with tiny timeouts until told to stop. */
static void joiner(uint64_t key, uint32_t rank, volatile uint64_t *stop, volatile uint64_t *count,
		   volatile uint64_t *in_join)
{
	unsigned int seed = (unsigned int)getpid();
	int fd = -1, ret;

	while (!*stop) {
		if (fd < 0)
			fd = open(TPLAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(2);
		*in_join = tplan_now_ms();
		ret = tplan_test_join_fd(fd, key, 2, rank, HEAP, 1 + rand_r(&seed) % 3);
		*in_join = 0;
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
		if (!ret) {
			/* a complete group: leave it, join the next one */
			close(fd);
			fd = -1;
		}
	}
	_exit(0);
}

/* The kernel's reports since `fd` was opened at the end of the log. */
static int kmsg_reports(int fd, char *out, size_t len)
{
	regex_t re;
	char rec[1024], *msg;
	int found = 0;
	ssize_t n;
	size_t at = 0;

	if (fd < 0 || regcomp(&re, "refcount_t|use-after-free|BUG|Oops|general protection|"
				   "KASAN|KFENCE|Poison overwritten|list_(add|del) corruption",
			      REG_EXTENDED | REG_NOSUB))
		return 0;
	out[0] = 0;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = 0;
		if (!regexec(&re, msg, 0, NULL, 0) && at + 2 < len) {
			at += (size_t)snprintf(out + at, len - at, "%s%s", found ? " | " : "", msg);
			found++;
		}
	}
	regfree(&re);
	return found;
}

TEST_F_TIMEOUT(join_race, joins_timing_out_while_others_arrive_touch_no_freed_group, 120)
{
	volatile uint64_t *shared;
	pid_t pid[JOINERS];
	uint64_t key = tplan_test_key(), end, joins = 0;
	const char *seconds;
	char reports[1024];
	int kmsg, i, status, bad = 0, nrep = 0, stuck = 0;

	TPLAN_SETUP_SKIPPED_RETURN();
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)shared);
	for (i = 0; i < JOINERS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			joiner(key, (uint32_t)(i % 2), &shared[0], &shared[1 + i],
			       &shared[1 + JOINERS + i]);
	}
	seconds = getenv("TPLAN_JOIN_RACE_SECONDS");
	end = tplan_now_ms() + (seconds ? strtoull(seconds, NULL, 0) : RACE_SECONDS) * 1000ULL;
	while (tplan_now_ms() < end && !nrep && !bad) {
		tplan_sleep_ms(200);
		nrep = kmsg_reports(kmsg, reports, sizeof(reports));
		for (i = 0; i < JOINERS; i++)
			if (waitpid(pid[i], &status, WNOHANG) == pid[i]) {
				TH_LOG("joiner %d ended early with status %#x", i, status);
				pid[i] = 0;
				bad++;
			}
	}
	shared[0] = 1;
	/* every joiner must come back from its join: bounded, never waitpid(0) */
	end = tplan_now_ms() + 20000;
	for (i = 0; i < JOINERS; i++) {
		while (pid[i] && waitpid(pid[i], &status, WNOHANG) == 0 && tplan_now_ms() < end)
			tplan_sleep_ms(20);
		if (pid[i] && waitpid(pid[i], &status, WNOHANG) == 0) {
			TH_LOG("joiner %d has been in GROUP_JOIN for %llu ms", i,
			       (unsigned long long)(tplan_now_ms() - shared[1 + JOINERS + i]));
			kill(pid[i], SIGKILL);
			stuck++;
		} else if (pid[i] && (!WIFEXITED(status) || WEXITSTATUS(status))) {
			TH_LOG("joiner %d ended with status %#x", i, status);
			bad++;
		}
		joins += shared[1 + i];
	}
	if (!nrep)
		nrep = kmsg_reports(kmsg, reports, sizeof(reports));
	TH_LOG("%llu joins in all", (unsigned long long)joins);
	if (nrep)
		TH_LOG("kernel: %s", reports);
	EXPECT_EQ(0, nrep);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, stuck);
}

TEST_HARNESS_MAIN
