// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer worker: one process, several threads, each looping over random
 * operations until the supervisor raises the stop flag: a step of the
 * group it is a rank of (tplan_fuzz_group.c), or a raw operation
 * (tplan_fuzz_raw.c).  The threads share the worker's open files, so
 * that several of them call into one file at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "tplan_fuzz.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fz_ctx ctxs[FZ_CTX_MAX];

struct fz_ctx *fz_ctx_add(struct tplan_ctx *ctx, int fd, int chaos, int board)
{
	struct fz_ctx *c = NULL;
	int i;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < FZ_CTX_MAX && !c; i++)
		if (!ctxs[i].used)
			c = &ctxs[i];
	if (c) {
		memset(c, 0, sizeof(*c));
		c->used = 1;
		c->refs = 1;
		c->ctx = ctx;
		c->fd = ctx ? tplan_ctx_fd(ctx) : fd;
		c->chaos = chaos;
		c->board = board;
		if (ctx && tplan_ctx_world_size(ctx) > 0) {
			uint64_t gate = tplan_heap_gate_area(ctx);

			c->rank = (uint32_t)tplan_ctx_rank(ctx);
			c->world = (uint32_t)tplan_ctx_world_size(ctx);
			c->heap_size = tplan_heap_size(ctx);
			c->heap = tplan_heap_ptr(ctx, c->rank);
			/* plans below half the heap, hostile writes above */
			c->scratch_off = c->heap_size / 2;
			c->scratch_len = gate > c->scratch_off ? gate - c->scratch_off : 0;
		}
	}
	pthread_mutex_unlock(&ctx_lock);
	return c;
}

struct fz_ctx *fz_ctx_get(struct fz_rng *r, int want_joined)
{
	unsigned int start = (unsigned int)fz_below(r, FZ_CTX_MAX), i;
	struct fz_ctx *c = NULL;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < FZ_CTX_MAX && !c; i++) {
		struct fz_ctx *e = &ctxs[(start + i) % FZ_CTX_MAX];

		if (e->used && !e->closing && (!want_joined || e->world))
			c = e;
	}
	if (c)
		c->refs++;
	pthread_mutex_unlock(&ctx_lock);
	return c;
}

void fz_ctx_put(struct fz_ctx *c)
{
	struct tplan_ctx *ctx = NULL;
	int fd = -1;

	pthread_mutex_lock(&ctx_lock);
	if (--c->refs == 0 && c->closing) {
		ctx = c->ctx;
		fd = c->fd;
		c->used = 0;
	}
	pthread_mutex_unlock(&ctx_lock);
	if (ctx) {
		fz_what("closing a shared context (fd %d)", fd);
		tplan_ctx_close(ctx);
	} else if (fd >= 0) {
		fz_what("closing a shared raw file (fd %d)", fd);
		fz_close(fd);
	}
}

int fz_ctx_hold_all(struct fz_ctx **out, int max)
{
	int i, n = 0;

	pthread_mutex_lock(&ctx_lock);
	for (i = 0; i < FZ_CTX_MAX && n < max; i++)
		if (ctxs[i].used && !ctxs[i].closing) {
			ctxs[i].refs++;
			out[n++] = &ctxs[i];
		}
	pthread_mutex_unlock(&ctx_lock);
	return n;
}

/* ---- threads -------------------------------------------------------------------- */

static void *thread_main(void *arg)
{
	struct fz_thread *t = arg;

	fz_slot_bind((t->worker * FZ_THREADS_MAX + t->index) * 2);
	while (!fz_stopping()) {
		/* A rank mostly runs its script; now and then something else. */
		if (t->member ? !fz_chance(&t->rng, 15) : fz_chance(&t->rng, t->drive_pct)) {
			if (!fz_member_step(t))
				continue;
		}
		fz_raw_op(t);
	}
	fz_member_abandon(t);
	fz_raw_thread_end(t);
	return NULL;
}

void fz_worker_main(int index, uint32_t gen)
{
	static struct fz_thread threads[FZ_THREADS_MAX];
	uint32_t n = fz->threads, i;
	int fd;

	/* Die with the supervisor; be the OOM killer's first choice, not it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	fd = open("/proc/self/oom_score_adj", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "500", 3) < 0)
			fz_fail(FZ_F_SETUP, -1, errno, "oom_score_adj: %s", strerror(errno));
		close(fd);
	}
	fz_signals_init();
	for (i = 0; i < FZ_THREADS_MAX * 2; i++)
		fz_slot_bind((index * FZ_THREADS_MAX) * 2 + (int)i);
	fz_slot_bind(-1);

	for (i = 0; i < n; i++) {
		struct fz_thread *t = &threads[i];

		t->index = (int)i;
		t->worker = index;
		t->gen = gen;
		t->rng.s = fz_mix(fz_mix(fz->seed, (uint64_t)index << 32 | gen), i);
		/* The first threads are the group members; the last one mostly not. */
		t->drive_pct = i + 1 < n ? 80 - 30 * (int)i : 10;
		if (t->drive_pct < 20)
			t->drive_pct = 20;
		if (pthread_create(&t->thread, NULL, thread_main, t)) {
			fz_fail(FZ_F_SETUP, -1, errno, "pthread_create failed");
			n = i;
			break;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(threads[i].thread, NULL);
	_exit(0);
}
