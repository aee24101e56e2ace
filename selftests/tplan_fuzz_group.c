// SPDX-License-Identifier: GPL-2.0
/*
 * Groups that really run: a worker thread claims a rank of a board slot
 * (struct fz_board: key, world size, heap size, script seed), joins with
 * the library and then runs the slot's script, the same sequence on every
 * rank because every rank draws it from the same seed: barriers,
 * all-gathers whose blobs are checked, plans with random schedules (whole
 * tensor, row blocks, tiles, hand-made regions) created through the
 * library and driven round by round with device/tplan_device.h's host
 * build (start, mark_ready as many times as each chunk has writers, wait,
 * check every rank's rows, next_round), puts and quiets, and closes.
 *
 * Now and then one rank leaves the script on purpose (a skipped or
 * different collective, a mark too many or too few, a call out of order):
 * the documented errors follow, and the group usually breaks.  Any failure
 * ends the rank's membership: it closes its file, the group breaks for the
 * others (ECONNRESET), and they leave too.  EINTR (the supervisor's
 * SIGUSR1) is retried as a program would.
 *
 * Data is checked on every group; a mismatch is a failure only in a
 * "clean" group (no raw chains, injections or hostile writes on its files)
 * and only if no member broke the marking contract on purpose.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tplan_fuzz.h"
#include "tplan_device.h"

#define FZ_MEMBER_PLANS		2
#define FZ_COLL_TIMEOUT_MS	15000	/* script barriers and all-gathers */
#define FZ_WAIT_TIMEOUT_MS	15000	/* script plan waits */
#define FZ_EINTR_RETRIES	4

struct fz_plan {
	struct tplan_plan *p;
	struct tplan_schedule *s;	/* NULL: the whole rows, one writer */
	uint64_t buf_off;
	uint32_t rows_each, cols, elem;
	uint64_t pitch;
	uint32_t round;
	uint32_t order;			/* when it was last prepared, for start order */
	uint32_t index;			/* for the data pattern */
};

struct fz_member {
	int board;
	uint32_t gen;
	uint32_t rank, world, sdma_ip, chaos, join_timeout;
	uint64_t key, heap_size, seed;
	struct fz_rng script;		/* the same on every rank */
	struct fz_ctx *c;
	struct tplan_ctx *ctx;
	uint32_t step, steps;
	struct fz_plan plan[FZ_MEMBER_PLANS];
	uint32_t nplans, orders, plans_made;
};

/* ---- the board ------------------------------------------------------------------- */

#define BOARD_GEN(w)		((uint32_t)((w) >> 32))
#define BOARD_CLAIMED(w)	((uint32_t)(w) & 0xffff)
#define BOARD_DONE(w)		((uint32_t)((w) >> 16) & 0xffff)

static int board_claim(struct fz_thread *t, struct fz_member *m)
{
	unsigned int pass, i, start = (unsigned int)fz_below(&t->rng, FZ_BOARD);

	/* First the groups that already have members: they can complete. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < FZ_BOARD; i++) {
			struct fz_board *b = &fz->board[(start + i) % FZ_BOARD];
			uint64_t w = __atomic_load_n(&b->word, __ATOMIC_ACQUIRE), nw;
			uint32_t world, full, free_ranks, rank;

			if (BOARD_GEN(w) & 1 || __atomic_load_n(&b->broken, __ATOMIC_RELAXED))
				continue;
			world = b->world;
			if (!world || world > 16)
				continue;
			full = (uint32_t)((1ULL << world) - 1);
			free_ranks = full & ~BOARD_CLAIMED(w);
			if (!free_ranks || (!pass && !BOARD_CLAIMED(w)))
				continue;
			/* a random free rank */
			do {
				rank = (uint32_t)fz_below(&t->rng, world);
			} while (!(free_ranks >> rank & 1));
			nw = w | 1ULL << rank;
			if (!__atomic_compare_exchange_n(&b->word, &w, nw, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				continue;
			b->claimer[rank] = t->worker;
			m->board = (int)(b - fz->board);
			m->gen = BOARD_GEN(w);
			m->rank = rank;
			m->world = world;
			m->key = b->key;
			m->heap_size = b->heap_size;
			m->sdma_ip = b->sdma_ip;
			m->chaos = b->chaos;
			m->seed = b->script_seed;
			m->join_timeout = b->join_timeout_ms;
			return 0;
		}
	}
	return -1;
}

/* This rank is done with the slot; broken: the group failed. */
static void board_done(struct fz_member *m, int broken)
{
	struct fz_board *b = &fz->board[m->board];
	uint64_t w = __atomic_load_n(&b->word, __ATOMIC_ACQUIRE);

	if (broken)
		__atomic_store_n(&b->broken, 1, __ATOMIC_RELEASE);
	while (BOARD_GEN(w) == m->gen &&
	       !__atomic_compare_exchange_n(&b->word, &w, w | 1ULL << (16 + m->rank), 0,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

/* ---- what went off the script ----------------------------------------------------- */

enum fz_mutation {
	MUT_SKIP = 1,		/* a step left out: the next collective pairs with the wrong one */
	MUT_DOUBLE,		/* a barrier too many */
	MUT_BLOB,		/* an all-gather blob size of our own */
	MUT_MARKS,		/* a chunk marked once too often or too seldom */
	MUT_START_TWICE,
	MUT_ORDER,		/* the later plan started first (EDEADLK) */
	MUT_WAIT_TWICE,
	MUT_REGION,		/* a schedule region outside the rank's rows */
};

static const char *const mutation_names[] = {
	[MUT_SKIP] = "skipped a step", [MUT_DOUBLE] = "a barrier too many",
	[MUT_BLOB] = "its own all-gather size", [MUT_MARKS] = "marks off by one",
	[MUT_START_TWICE] = "start twice", [MUT_ORDER] = "started plans out of order",
	[MUT_WAIT_TWICE] = "waited twice", [MUT_REGION] = "a region outside its rows",
};

static void board_event(struct fz_member *m, int op, int err, uint32_t plan)
{
	struct fz_board *b = &fz->board[m->board];
	uint32_t i = __atomic_fetch_add(&b->nevents, 1, __ATOMIC_RELAXED);

	if (i < sizeof(b->events) / sizeof(b->events[0]))
		b->events[i] = (struct fz_event) { m->rank, m->step, op, err, plan };
}

/*
 * Leave the script on purpose.  Steps skipped or doubled and marks off by
 * one may deliver wrong data with every call succeeding: the group is
 * tainted, its data no longer checked.
 */
static void mutation(struct fz_member *m, enum fz_mutation kind)
{
	fz_count(FZ_M_MUTATIONS);
	board_event(m, FZ_EV_MUTATION, kind, 0);
	if (kind == MUT_SKIP || kind == MUT_DOUBLE || kind == MUT_MARKS)
		__atomic_store_n(&fz->board[m->board].tainted, 1, __ATOMIC_RELEASE);
}

/* A library call ended with EINTR: noted, and the caller repeats it. */
static int interrupted(struct fz_member *m, int ret)
{
	int op, err;

	if (ret != -EINTR)
		return 0;
	fz_last_call(&op, &err);
	board_event(m, op, EINTR, 0);
	return 1;
}

/* The group's events, for a data failure's report. */
static void board_events_text(struct fz_member *m, char *out, size_t len)
{
	struct fz_board *b = &fz->board[m->board];
	uint32_t i, n = __atomic_load_n(&b->nevents, __ATOMIC_ACQUIRE);
	size_t at = strlen(out);
	char nb[24];

	at += (size_t)snprintf(out + at, len - at, "\ngroup events (%u):", n);
	for (i = 0; i < n && i < sizeof(b->events) / sizeof(b->events[0]) && at < len; i++) {
		struct fz_event e = b->events[i];

		if (e.op == FZ_EV_MUTATION)
			at += (size_t)snprintf(out + at, len - at, "\n  rank %u step %u: off script: %s",
					       e.rank, e.step,
					       e.err > 0 && e.err <= MUT_REGION ? mutation_names[e.err] : "?");
		else if (e.op == FZ_EV_PLAN)
			at += (size_t)snprintf(out + at, len - at, "\n  rank %u step %u: plan %u prepared",
					       e.rank, e.step, e.plan);
		else if (e.op == FZ_EV_LEFT)
			at += (size_t)snprintf(out + at, len - at, "\n  rank %u step %u: left the group",
					       e.rank, e.step);
		else
			at += (size_t)snprintf(out + at, len - at,
					       "\n  rank %u step %u: a call failed, the last ioctl %s: %s",
					       e.rank, e.step, fz_op_name(e.op),
					       fz_errno_name(e.err, nb, sizeof(nb)));
	}
}

/* ---- data ------------------------------------------------------------------------- */

static uint64_t pattern_seed(struct fz_member *m, struct fz_plan *pl, uint32_t rank)
{
	return fz_mix(m->seed ^ ((uint64_t)pl->index << 40) ^ ((uint64_t)pl->round << 8), rank);
}

/* Rows of row_bytes, pitch apart: fill (check == 0) or compare. */
static long rows_pattern(uint8_t *base, uint32_t rows, uint64_t row_bytes, uint64_t pitch,
			 uint64_t seed, int check)
{
	uint64_t i, j, w, n;

	for (i = 0; i < rows; i++) {
		uint8_t *row = base + i * pitch;

		for (j = 0; j < row_bytes; j += 8) {
			w = fz_mix(seed, i << 32 | j >> 3);
			n = row_bytes - j < 8 ? row_bytes - j : 8;
			if (!check)
				memcpy(row + j, &w, n);
			else if (memcmp(row + j, &w, n))
				return (long)(i * pitch + j);
		}
	}
	return -1;
}

/* ---- leaving ---------------------------------------------------------------------- */

static void member_leave(struct fz_thread *t, int broken)
{
	struct fz_member *m = t->member;
	uint32_t i;

	if (!m)
		return;
	if (m->c || m->ctx)
		board_event(m, FZ_EV_LEFT, 0, 0);
	/*
	 * The library frees a plan only in its collective close; after a
	 * failure its few bytes are left behind rather than closed on a file
	 * that is about to go (or already went, its number reused).
	 */
	for (i = 0; i < m->nplans; i++)
		tplan_schedule_free(m->plan[i].s);
	m->nplans = 0;
	if (m->c) {
		m->c->closing = 1;
		fz_ctx_put(m->c);	/* the last reference closes the file */
	} else if (m->ctx) {
		fz_what("member: close after a failed join");
		tplan_ctx_close(m->ctx);
	}
	board_done(m, broken);
	free(m);
	t->member = NULL;
}

void fz_member_abandon(struct fz_thread *t)
{
	member_leave(t, 1);
}

/*
 * A library call's result in the script: 0 goes on, EINTR is repeated by
 * the caller, anything else ends the membership.
 */
static int failed(struct fz_thread *t, int ret)
{
	int op, err;

	if (!ret)
		return 0;
	/* the library's last ioctl may be a cleanup after the one that failed */
	fz_last_call(&op, &err);
	board_event(t->member, op, -ret, 0);
	member_leave(t, 1);
	return -1;
}

/* ---- joining ---------------------------------------------------------------------- */

static int member_join(struct fz_thread *t)
{
	struct fz_member *m = calloc(1, sizeof(*m));
	struct tplan_join_params jp;
	int ret, tries;

	if (!m)
		return -1;
	if (board_claim(t, m)) {
		free(m);
		return -1;
	}
	t->member = m;
	m->script.s = m->seed;
	m->steps = 8 + (uint32_t)fz_below(&m->script, 40);
	/* The software engine, even where the KFD stand-in is loaded. */
	jp = (struct tplan_join_params) {
		.key = m->key, .world_size = m->world, .rank = m->rank,
		.heap_size = m->heap_size, .engine = TPLAN_ENGINE_SOFT, .sdma_ip = m->sdma_ip,
		.timeout_ms = m->join_timeout,
	};
	fz_what("member: open for group %#llx rank %u/%u", (unsigned long long)m->key, m->rank,
		m->world);
	ret = tplan_ctx_open(&m->ctx, NULL);
	if (ret) {
		fz_fail(FZ_F_SETUP, -1, -ret, "tplan_ctx_open: %s", strerror(-ret));
		m->ctx = NULL;
		member_leave(t, 1);
		return -1;
	}
	fz_file_new(tplan_ctx_fd(m->ctx));
	fz_what("member: join group %#llx rank %u/%u heap %llu", (unsigned long long)m->key,
		m->rank, m->world, (unsigned long long)m->heap_size);
	/* On EINTR the file is not in the group: join again. */
	for (tries = 0; (ret = tplan_ctx_join(m->ctx, &jp)) == -EINTR && tries < FZ_EINTR_RETRIES;
	     tries++)
		;
	if (ret) {
		member_leave(t, 1);
		return 0;
	}
	fz_count(FZ_M_JOINED);
	/* Shared with the worker's other threads; NULL: no room, ours alone. */
	m->c = fz_ctx_add(m->ctx, -1, m->chaos, m->board);
	return 0;
}

/* ---- collectives -------------------------------------------------------------------- */

static int step_barrier(struct fz_thread *t, struct fz_member *m)
{
	int ret, tries = 0;

	fz_what("script step %u: barrier (group %#llx rank %u/%u)", m->step,
		(unsigned long long)m->key, m->rank, m->world);
	do {
		ret = tplan_barrier(m->ctx, FZ_COLL_TIMEOUT_MS);
	} while (interrupted(m, ret) && ++tries < FZ_EINTR_RETRIES);
	if (!ret)
		fz_count(FZ_M_COLLECTIVES);
	return failed(t, ret);
}

static int step_all_gather(struct fz_thread *t, struct fz_member *m)
{
	uint32_t bytes = 1 + (uint32_t)fz_below(&m->script, TPLAN_ALL_GATHER_MAX), r;
	uint64_t seed = fz_mix(m->seed, m->step);
	uint8_t *in, *out;
	int ret, tries = 0;
	long bad;

	/* A blob size of our own: the others see EPROTO or ECONNRESET. */
	if (fz_chance(&t->rng, 2)) {
		mutation(m, MUT_BLOB);
		bytes = 1 + (uint32_t)fz_below(&t->rng, TPLAN_ALL_GATHER_MAX);
	}
	in = malloc(bytes);
	out = malloc((size_t)bytes * m->world);
	if (!in || !out) {
		free(in);
		free(out);
		return failed(t, -ENOMEM);
	}
	rows_pattern(in, 1, bytes, bytes, fz_mix(seed, m->rank), 0);
	fz_what("script step %u: all-gather of %u bytes (group %#llx rank %u/%u)", m->step,
		bytes, (unsigned long long)m->key, m->rank, m->world);
	do {
		ret = tplan_all_gather(m->ctx, in, bytes, out, FZ_COLL_TIMEOUT_MS);
	} while (interrupted(m, ret) && ++tries < FZ_EINTR_RETRIES);
	for (r = 0; !ret && r < m->world; r++) {
		char text[2048];

		bad = rows_pattern(out + (size_t)r * bytes, 1, bytes, bytes, fz_mix(seed, r), 1);
		if (bad < 0 || m->chaos ||
		    __atomic_load_n(&fz->board[m->board].tainted, __ATOMIC_ACQUIRE))
			continue;
		snprintf(text, sizeof(text),
			 "all-gather of %u bytes at script step %u, group %#llx (%u ranks), seen by rank %u: rank %u's blob differs at byte %ld",
			 bytes, m->step, (unsigned long long)m->key, m->world, m->rank, r, bad);
		board_events_text(m, text, sizeof(text));
		fz_fail(FZ_F_DATA, TPLAN_CMD_GROUP_ALL_GATHER - TPLAN_CMD_BASE, 0, "%s", text);
		break;
	}
	free(in);
	free(out);
	if (!ret)
		fz_count(FZ_M_COLLECTIVES);
	return failed(t, ret);
}

/* ---- plans ------------------------------------------------------------------------ */

/* A producer's step-to-tile order that is not row-major: last tile first. */
static uint32_t reverse_order(uint32_t step, void *arg)
{
	return *(uint32_t *)arg - 1 - step;
}

/*
 * This rank's schedule over its rows, as the script says (the same kind
 * on every rank).  NULL with *err 0: the library's whole-rows default.
 */
static struct tplan_schedule *make_schedule(struct fz_thread *t, struct fz_member *m,
					    const struct tplan_tensor *mine, int *err)
{
	struct tplan_schedule *s = NULL;
	uint64_t row_bytes = (uint64_t)mine->cols * mine->elem_size;
	uint64_t pitch = mine->pitch ? mine->pitch : row_bytes;
	uint32_t ntiles, kind = (uint32_t)fz_below(&m->script, 5), tr, tc;

	*err = 0;
	switch (kind) {
	case 0:
		return NULL;
	case 1:
		*err = tplan_schedule_whole(mine, 1 + (uint32_t)fz_below(&m->script, 3), &s);
		break;
	case 2: {
		static const uint64_t max_copy[] = { 0, 64, 4096, 100 };

		*err = tplan_schedule_chunks(mine, 1 + (uint32_t)fz_below(&m->script, mine->rows),
					     1 + (uint32_t)fz_below(&m->script, 2),
					     max_copy[fz_below(&m->script, 4)], &s);
		break;
	}
	case 3:
		tr = 1 + (uint32_t)fz_below(&m->script, 8);
		tc = 1 + (uint32_t)fz_below(&m->script, 32);
		ntiles = ((mine->rows + tr - 1) / tr) * ((mine->cols + tc - 1) / tc);
		*err = tplan_schedule_tile_chunks(mine, tr, tc, 1 + (uint32_t)fz_below(&m->script, 4),
						  fz_chance(&m->script, 50) ? reverse_order : NULL,
						  &ntiles, NULL, &s);
		break;
	default: {
		/* Hand-made: the rows cut into byte ranges, a few per chunk. */
		uint64_t at = 0, total = (uint64_t)(mine->rows - 1) * pitch + row_bytes;
		struct tplan_region reg[4];
		uint32_t n;

		*err = tplan_schedule_new(&s);
		while (!*err && at < total) {
			for (n = 0; n < 4 && at < total; n++) {
				uint64_t len = 1 + fz_below(&m->script, total - at);

				/* not across row padding: that is no rank's */
				if (pitch != row_bytes) {
					uint64_t in_row = at % pitch;

					if (in_row >= row_bytes) {
						at += pitch - in_row;
						n--;
						continue;
					}
					if (len > row_bytes - in_row)
						len = row_bytes - in_row;
				}
				reg[n] = (struct tplan_region) {
					.offset = mine->offset + at, .width = len, .rows = 1,
				};
				at += len;
			}
			if (n)
				*err = tplan_schedule_add_chunk(s, reg, n,
								1 + (uint32_t)fz_below(&m->script, 2));
		}
		/* one rank's region strays into a neighbour's rows */
		if (!*err && fz_chance(&t->rng, 2)) {
			mutation(m, MUT_REGION);
			reg[0] = (struct tplan_region) {
				.offset = mine->offset + total, .width = 1 + fz_below(&t->rng, 64),
				.rows = 1,
			};
			*err = tplan_schedule_add_chunk(s, reg, 1, 1);
		}
		break;
	}
	}
	if (*err) {
		tplan_schedule_free(s);
		return NULL;
	}
	return s;
}

static int step_plan_create(struct fz_thread *t, struct fz_member *m)
{
	struct fz_plan *pl = &m->plan[m->nplans];
	static const uint32_t elems[] = { 1, 2, 4, 8, 16 };
	struct tplan_tensor out, mine;
	uint64_t row_bytes, bytes, off;
	int ret, err;

	memset(pl, 0, sizeof(*pl));
	pl->rows_each = 1 + (uint32_t)fz_below(&m->script, 32);
	pl->cols = 1 + (uint32_t)fz_below(&m->script, 128);
	pl->elem = elems[fz_below(&m->script, 5)];
	row_bytes = (uint64_t)pl->cols * pl->elem;
	pl->pitch = fz_chance(&m->script, 30) ? row_bytes + 4 * (1 + fz_below(&m->script, 16)) :
						 row_bytes;
	pl->index = m->plans_made++;
	bytes = ((uint64_t)pl->rows_each * m->world - 1) * pl->pitch + row_bytes;
	/*
	 * Plans live in the lower half of the heap; hostile writes go to the
	 * upper half.  The allocator gives every rank the same answer.
	 */
	if (tplan_heap_alloc(m->ctx, bytes, 64, &off) || off + bytes > m->heap_size / 2) {
		if (!m->nplans)
			tplan_heap_reset(m->ctx);
		return 0;
	}
	pl->buf_off = off;
	out = (struct tplan_tensor) {
		.offset = off, .rows = pl->rows_each * m->world, .cols = pl->cols,
		.elem_size = pl->elem, .pitch = pl->pitch,
	};
	mine = out;
	mine.offset = off + (uint64_t)m->rank * pl->rows_each * pl->pitch;
	mine.rows = pl->rows_each;
	pl->s = make_schedule(t, m, &mine, &err);
	if (err) {
		/* The same shape fails the same way on every rank: no collective. */
		return 0;
	}
	fz_what("script step %u: plan %u: all-gather of %u x %u x %u-byte rows (pitch %llu) per rank, schedule %s (group %#llx rank %u/%u)",
		m->step, pl->index, pl->rows_each, pl->cols, pl->elem,
		(unsigned long long)pl->pitch, pl->s ? "built" : "whole",
		(unsigned long long)m->key, m->rank, m->world);
	ret = tplan_prepare_all_gather(m->ctx, &out, pl->s, &pl->p);
	if (ret) {
		tplan_schedule_free(pl->s);
		pl->s = NULL;
		/* Every rank fails it and the library closed it everywhere. */
		if (ret == -EINVAL || ret == -ENOSPC || ret == -E2BIG || ret == -ENOMEM)
			return 0;
		return failed(t, ret);
	}
	pl->round = 1;
	pl->order = ++m->orders;
	m->nplans++;
	fz_count(FZ_M_PLANS);
	board_event(m, FZ_EV_PLAN, 0, pl->index);
	return 0;
}

static int step_plan_close(struct fz_thread *t, struct fz_member *m, uint32_t i)
{
	struct fz_plan *pl = &m->plan[i];
	uint32_t state;
	int ret;

	fz_what("script step %u: close plan %u in round %u (group %#llx rank %u/%u)", m->step,
		pl->index, pl->round, (unsigned long long)m->key, m->rank, m->world);
	ret = tplan_plan_close(pl->p, &state);
	tplan_schedule_free(pl->s);
	m->plan[i] = m->plan[--m->nplans];
	if (!m->nplans)
		tplan_heap_reset(m->ctx);
	return failed(t, ret);
}

/* Mark every chunk of this round as many times as it has writers. */
static void mark_round(struct fz_thread *t, struct fz_member *m, struct fz_plan *pl,
		       const struct tplan_handle *h)
{
	struct tplan_cta cta = { 0 };
	struct tplan_view v;
	uint32_t c, k, writers;

	tplan_view_init(&v, h);
	for (c = 0; c < h->nchunks; c++) {
		writers = 1;
		if (pl->s)
			tplan_schedule_chunk(pl->s, c, NULL, &writers);
		/* One mark too many opens a later round's gate early (EOVERFLOW). */
		if (fz_chance(&t->rng, 1)) {
			mutation(m, MUT_MARKS);
			writers += fz_chance(&t->rng, 50) ? 1 : -1;
		}
		for (k = 0; k < writers; k++)
			tplan_mark_ready(&v, &cta, c);
	}
}

static int step_plan_round(struct fz_thread *t, struct fz_member *m)
{
	struct fz_plan *pl = NULL;
	uint64_t row_bytes, seed;
	struct tplan_handle h;
	uint8_t *heap;
	uint32_t i, r;
	int ret, tries;
	long bad;

	/* Plans share queues: start them in the order they were prepared. */
	for (i = 0; i < m->nplans; i++)
		if (!pl || m->plan[i].order < pl->order)
			pl = &m->plan[i];
	if (fz_chance(&t->rng, 1) && m->nplans > 1) {
		mutation(m, MUT_ORDER);
		pl = &m->plan[m->plan[0].order < m->plan[1].order];	/* EDEADLK */
	}
	fz_what("script step %u: plan %u round %u (group %#llx rank %u/%u)", m->step, pl->index,
		pl->round, (unsigned long long)m->key, m->rank, m->world);
	ret = tplan_plan_start(pl->p, &h);
	if (ret)
		return failed(t, ret);
	if (h.round != pl->round)
		fz_fail(FZ_F_DATA, TPLAN_CMD_PLAN_START - TPLAN_CMD_BASE, 0,
			"plan start handed round %u, the plan is in round %u (group %#llx)", h.round,
			pl->round, (unsigned long long)m->key);
	heap = tplan_heap_ptr(m->ctx, m->rank);
	row_bytes = (uint64_t)pl->cols * pl->elem;
	rows_pattern(heap + pl->buf_off + (uint64_t)m->rank * pl->rows_each * pl->pitch,
		     pl->rows_each, row_bytes, pl->pitch, pattern_seed(m, pl, m->rank), 0);
	if (fz_chance(&t->rng, 1)) {
		mutation(m, MUT_START_TWICE);
		tplan_plan_start(pl->p, &h);	/* EBUSY: started already */
	}
	mark_round(t, m, pl, &h);
	tries = 0;
	do {
		ret = tplan_plan_wait(pl->p, FZ_WAIT_TIMEOUT_MS);
	} while (interrupted(m, ret) && ++tries < FZ_EINTR_RETRIES);
	if (ret)
		return failed(t, ret);
	fz_count(FZ_M_ROUNDS);
	for (r = 0; r < m->world; r++) {
		uint8_t *rows = heap + pl->buf_off + (uint64_t)r * pl->rows_each * pl->pitch;
		char text[2048], why[48];
		uint32_t k, seen = 0;

		seed = pattern_seed(m, pl, r);
		bad = rows_pattern(rows, pl->rows_each, row_bytes, pl->pitch, seed, 1);
		if (bad < 0)
			continue;
		if (m->chaos || __atomic_load_n(&fz->board[m->board].tainted, __ATOMIC_ACQUIRE))
			break;
		/* stale: an earlier round's data? */
		for (k = 1; k < pl->round && !seen; k++) {
			pl->round -= k;
			if (rows_pattern(rows, pl->rows_each, row_bytes, pl->pitch,
					 pattern_seed(m, pl, r), 1) < 0)
				seen = pl->round;
			pl->round += k;
		}
		snprintf(why, sizeof(why), seen ? "they hold round %u's data" :
					     "not any earlier round's data", seen);
		snprintf(text, sizeof(text),
			 "plan %u round %u of group %#llx (%u ranks, %u x %u x %u-byte rows each, pitch %llu): after a successful wait rank %u sees rank %u's rows differ at byte %ld (%s)",
			 pl->index, pl->round, (unsigned long long)m->key, m->world, pl->rows_each,
			 pl->cols, pl->elem, (unsigned long long)pl->pitch, m->rank, r, bad, why);
		board_events_text(m, text, sizeof(text));
		fz_fail(FZ_F_DATA, TPLAN_CMD_PLAN_WAIT - TPLAN_CMD_BASE, 0, "%s", text);
		break;
	}
	if (r == m->world)
		fz_count(FZ_M_VERIFIED);
	if (fz_chance(&t->rng, 1)) {
		mutation(m, MUT_WAIT_TWICE);
		tplan_plan_wait(pl->p, 10);	/* EBUSY: not started */
	}
	/* Closing after the round, on every rank (the script says so). */
	if (fz_chance(&m->script, 20))
		return step_plan_close(t, m, (uint32_t)(pl - m->plan));
	tries = 0;
	do {
		ret = tplan_plan_next_round(pl->p);
	} while (interrupted(m, ret) && ++tries < FZ_EINTR_RETRIES);
	if (ret)
		return failed(t, ret);
	pl->round++;
	pl->order = ++m->orders;
	return 0;
}

static int step_plan(struct fz_thread *t, struct fz_member *m)
{
	if (m->nplans < FZ_MEMBER_PLANS && (!m->nplans || fz_chance(&m->script, 25)))
		return step_plan_create(t, m);
	/* The whole group closes a plan in the middle of a round now and then. */
	if (fz_chance(&m->script, 8))
		return step_plan_close(t, m, (uint32_t)fz_below(&m->script, m->nplans));
	return step_plan_round(t, m);
}

/* ---- local steps ---------------------------------------------------------------------- */

/* A put from this rank's scratch to a peer's, then maybe a quiet. */
static int step_put(struct fz_thread *t, struct fz_member *m)
{
	uint64_t off = m->heap_size / 2, room = tplan_heap_gate_area(m->ctx), len;
	uint32_t peer;
	int ret;

	/* the signal word first, the data after it */
	if (m->world < 2 || room <= off + 64)
		return 0;
	room -= off + 64;
	peer = (m->rank + 1 + (uint32_t)fz_below(&t->rng, m->world - 1)) % m->world;
	len = 1 + fz_below(&t->rng, room);
	fz_what("script step %u: put %llu bytes to rank %u (group %#llx rank %u/%u)", m->step,
		(unsigned long long)len, peer, (unsigned long long)m->key, m->rank, m->world);
	ret = fz_chance(&t->rng, 30) ?
	      tplan_put_signal(m->ctx, peer, off + 64, off + 64, len, off) :
	      tplan_put(m->ctx, peer, off + 64, off + 64, len);
	if (!ret)
		fz_count(FZ_M_PUTS);
	/* Prepared chains on the queue: EBUSY, as the spec says. */
	if (ret && ret != -EBUSY && ret != -EINTR)
		return failed(t, ret);
	if (fz_chance(&t->rng, 50)) {
		ret = tplan_quiet(m->ctx, peer, (uint32_t)fz_below(&t->rng, 5000));
		if (ret && ret != -EBUSY && ret != -EINTR && ret != -ETIMEDOUT)
			return failed(t, ret);
	}
	return 0;
}

/* ---- the script ------------------------------------------------------------------------ */

/* The script's end: plans closed on every rank, a last barrier, leave. */
static int member_finish(struct fz_thread *t, struct fz_member *m)
{
	while (m->nplans)
		if (step_plan_close(t, m, m->nplans - 1))
			return -1;
	if (step_barrier(t, m))
		return -1;
	fz_count(FZ_M_GROUP_LEFT);
	member_leave(t, 0);
	return 0;
}

/*
 * One step of the thread's membership, or a join when it has none.
 * Returns -1 when there was nothing to join; a failed step ends the
 * membership, which is a step too.
 */
int fz_member_step(struct fz_thread *t)
{
	struct fz_member *m = t->member;
	uint32_t what;

	if (!m)
		return member_join(t);
	if (m->step++ >= m->steps) {
		member_finish(t, m);
		return 0;
	}

	/* Off the script: skip or double a collective (EPROTO, ECONNRESET). */
	if (fz_chance(&t->rng, 1)) {
		if (fz_chance(&t->rng, 50)) {
			mutation(m, MUT_SKIP);
			return 0;
		}
		mutation(m, MUT_DOUBLE);
		if (step_barrier(t, m))
			return 0;
	}
	what = (uint32_t)fz_below(&m->script, 100);
	if (what < 20)
		step_barrier(t, m);
	else if (what < 35)
		step_all_gather(t, m);
	else if (what < 85)
		step_plan(t, m);
	else
		step_put(t, m);		/* its details are this rank's own */
	return 0;
}
