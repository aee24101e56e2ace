/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The software engine's threads, as the benchmarks and the selftests find
 * them: one kernel thread per sending rank, named tplan-g<id>/<src>; the
 * newest group (the one a run joined last; a group's threads are gone
 * with it) has the largest id.
 */
#ifndef TPLAN_BENCH_ENGINE_THREADS_H
#define TPLAN_BENCH_ENGINE_THREADS_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/*
 * Each engine thread (a name that begins "tplan-g"): fn(pid, comm, arg),
 * comm without its newline.  0, or -errno if /proc cannot be read.
 */
static inline int engine_threads_each(void (*fn)(pid_t pid, const char *comm, void *arg),
				      void *arg)
{
	char path[300], comm[64];
	struct dirent *de;
	DIR *d = opendir("/proc");
	FILE *f;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
		if (!strncmp(comm, "tplan-g", 7))
			fn((pid_t)atoi(de->d_name), comm, arg);
	}
	closedir(d);
	return 0;
}

struct engine_newest {
	pid_t *pids;
	unsigned int room, n;
	unsigned long best;		/* the largest group id seen */
};

static inline void engine_newest_one(pid_t pid, const char *comm, void *arg)
{
	struct engine_newest *w = arg;
	char *end;
	unsigned long id = strtoul(comm + 7, &end, 10);

	if (*end != '/')
		return;
	if (id > w->best) {
		w->best = id;
		w->n = 0;
	}
	if (id == w->best && w->n < w->room)
		w->pids[w->n++] = pid;
}

/* Up to room pids of the newest group's engine threads: how many, or -errno. */
static inline int engine_pids(pid_t *pids, unsigned int room)
{
	struct engine_newest w = { .pids = pids, .room = room };
	int ret = engine_threads_each(engine_newest_one, &w);

	return ret ? ret : (int)w.n;
}

/* utime + stime of a thread, in clock ticks; 0, or -1 if it is gone. */
static inline int engine_thread_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[512], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* Fields 14 and 15, counted after the ")" that ends the name. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -1;
	*ticks = ut + st;
	return 0;
}

#endif
