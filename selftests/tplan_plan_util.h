/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plans driven through the raw PLAN_* ioctls, for the plan selftests that
 * need control the library does not give (one rank's chain made invalid,
 * a mark too many, a gate opened before its round is queued): chain
 * building for linear regions, a CPU mark_ready that follows the device
 * contract, queue snapshots and data patterns.
 */
#ifndef TPLAN_PLAN_UTIL_H
#define TPLAN_PLAN_UTIL_H

#include "tplan_selftest.h"
#include "tplan_sdma.h"
#include "tplan_chain.h"

/* ---- data patterns ------------------------------------------------------ */

static inline uint64_t tp_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Byte i of the pattern seed is byte i % 8 of tp_mix64(seed ^ (i / 8)). */
static inline void tp_fill(void *dst, uint64_t len, uint64_t seed)
{
	unsigned char *p = dst;
	uint64_t i, w;

	for (i = 0; i < len; i += 8) {
		w = tp_mix64(seed ^ (i >> 3));
		memcpy(p + i, &w, len - i < 8 ? len - i : 8);
	}
}

/* Offset of the first byte that differs from the pattern, or -1. */
static inline int64_t tp_check(const void *src, uint64_t len, uint64_t seed)
{
	const unsigned char *p = src;
	uint64_t i, j, w, n;

	for (i = 0; i < len; i += 8) {
		n = len - i < 8 ? len - i : 8;
		w = tp_mix64(seed ^ (i >> 3));
		if (memcmp(p + i, &w, n))
			for (j = 0; j < n; j++)
				if (p[i + j] != ((unsigned char *)&w)[j])
					return (int64_t)(i + j);
	}
	return -1;
}

/* Seed of rank r's data in round k (distinct per rank, round and test). */
static inline uint64_t tp_seed(unsigned int rank, uint32_t round, uint64_t salt)
{
	return salt ^ ((uint64_t)rank << 40) ^ round;
}

/* ---- joining ------------------------------------------------------------ */

/* Join env's group with sdma_ip (0: the library's default). */
static inline int tp_join(struct tplan_rank_env *env, uint64_t heap_size, uint32_t sdma_ip,
			  struct tplan_ctx **ctxp)
{
	return tplan_rank_join_ip(env, heap_size, sdma_ip, ctxp);
}

/* ---- raw plans ------------------------------------------------------------ */

/* A linear region: len bytes at heap offset off. */
struct tp_region {
	uint64_t off;
	uint64_t len;
};

/*
 * A schedule of linear regions: chunk c holds regions first[c] ..
 * first[c + 1] - 1 and is marked writers[c] times per round (NULL: once).
 * Regions are split into copies of at most max_copy bytes (0: no split).
 */
struct tp_sched {
	uint32_t nchunks;
	const uint32_t *first;
	const struct tp_region *reg;
	const uint32_t *writers;
	uint64_t max_copy;
};

struct tp_plan {
	struct tplan_ctx *ctx;
	int fd;
	unsigned int rank, world;
	uint32_t id;
	uint32_t nchunks;
	uint64_t gate_off;
	uint64_t buf_off, buf_bytes, own_off, own_bytes;
	uint32_t chunk_base[TPLAN_RANKS_MAX + 1];
	struct tplan_chain_reject reject;	/* from the last prepare */
	/* The chains of the last tp_build(). */
	uint32_t *dw;
	uint32_t ndw;
	struct tplan_plan_chain *chains;
	uint32_t nchains;
	uint32_t *writers;
	uint32_t step_timeout_ms;	/* prepare and next_round; 0: TP_TIMEOUT */
};

#define TP_TIMEOUT TPLAN_TEST_TIMEOUT_MS
#define TP_STEP_TIMEOUT(p) ((p)->step_timeout_ms ? (p)->step_timeout_ms : TP_TIMEOUT)

/* PLAN_CREATE keeping depth rounds armed ahead (0: one). */
static inline int tp_create_depth(struct tp_plan *p, struct tplan_ctx *ctx, uint64_t buf_off,
				  uint64_t buf_bytes, uint64_t own_off, uint64_t own_bytes,
				  uint32_t nchunks, uint32_t depth)
{
	struct tplan_plan_create c = {
		.size = sizeof(c), .buffer_offset = buf_off, .buffer_bytes = buf_bytes,
		.own_offset = own_off, .own_bytes = own_bytes, .nchunks = nchunks,
		.timeout_ms = TP_TIMEOUT, .depth = depth,
	};
	int ret;

	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->fd = tplan_ctx_fd(ctx);
	p->rank = (unsigned int)tplan_ctx_rank(ctx);
	p->world = (unsigned int)tplan_ctx_world_size(ctx);
	c.chunk_base = (uintptr_t)p->chunk_base;
	ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_CREATE, &c);
	if (ret)
		return ret;
	p->id = c.plan_id;
	p->gate_off = c.gate_offset;
	p->nchunks = nchunks;
	p->buf_off = buf_off;
	p->buf_bytes = buf_bytes;
	p->own_off = own_off;
	p->own_bytes = own_bytes;
	return 0;
}

static inline int tp_create(struct tp_plan *p, struct tplan_ctx *ctx, uint64_t buf_off,
			    uint64_t buf_bytes, uint64_t own_off, uint64_t own_bytes,
			    uint32_t nchunks)
{
	return tp_create_depth(p, ctx, buf_off, buf_bytes, own_off, own_bytes, nchunks, 0);
}

static inline void tp_free_chains(struct tp_plan *p)
{
	free(p->dw);
	free(p->chains);
	free(p->writers);
	p->dw = NULL;
	p->chains = NULL;
	p->writers = NULL;
	p->ndw = p->nchains = 0;
}

/* Device address of a field of global chunk gchunk's gate row in rank's heap. */
static inline uint64_t tp_gate_dev(const struct tp_plan *p, unsigned int rank, uint32_t gchunk,
				   uint32_t field)
{
	return tplan_heap_devaddr(p->ctx, rank) + p->gate_off +
	       (uint64_t)gchunk * TPLAN_GATE_ROW_BYTES + field;
}

/* This process's view of the same field. */
static inline uint64_t *tp_gate(const struct tp_plan *p, unsigned int rank, uint32_t gchunk,
				uint32_t field)
{
	return (uint64_t *)((char *)tplan_heap_ptr(p->ctx, rank) + p->gate_off +
			    (uint64_t)gchunk * TPLAN_GATE_ROW_BYTES + field);
}

static inline uint64_t tp_gate_read(const struct tp_plan *p, unsigned int rank, uint32_t gchunk,
				    uint32_t field)
{
	return __atomic_load_n(tp_gate(p, rank, gchunk, field), __ATOMIC_ACQUIRE);
}

/*
 * Build one chain per (chunk, peer), peers in rank order, each peer's in
 * chunk order: POLL(ready >= round), the copies, ATOMIC ADD64(arrival, 1).
 * 0 or -errno.
 */
static inline int tp_build(struct tp_plan *p, const struct tp_sched *s)
{
	uint64_t own = tplan_heap_devaddr(p->ctx, p->rank);
	uint32_t c, i, cap = 0, at = 0, n = 0;
	unsigned int peer;
	int r;

	tp_free_chains(p);
	for (c = 0; c < s->nchunks; c++) {
		uint32_t copies = 0;

		for (i = s->first[c]; i < s->first[c + 1]; i++)
			copies += s->max_copy ?
				  (uint32_t)((s->reg[i].len + s->max_copy - 1) / s->max_copy) : 1;
		cap += TPLAN_SDMA_POLL_DW + TPLAN_SDMA_ATOMIC_DW +
		       copies * TPLAN_SDMA_COPY_LINEAR_DW;
	}
	cap *= p->world;
	p->dw = malloc((size_t)(cap ? cap : 1) * 4);
	p->chains = calloc((size_t)s->nchunks * p->world + 1, sizeof(*p->chains));
	p->writers = malloc(((size_t)s->nchunks + 1) * 4);
	if (!p->dw || !p->chains || !p->writers)
		return -ENOMEM;
	for (c = 0; c < s->nchunks; c++)
		p->writers[c] = s->writers ? s->writers[c] : 1;
	for (peer = 0; peer < p->world; peer++) {
		uint64_t dev = tplan_heap_devaddr(p->ctx, peer);

		if (peer == p->rank)
			continue;
		for (c = 0; c < s->nchunks; c++) {
			uint32_t g = p->chunk_base[p->rank] + c, start = at;
			struct tplan_sdma_poll_regmem poll = {
				.addr = tp_gate_dev(p, p->rank, g, TPLAN_GATE_READY),
				.mask = TPLAN_CHAIN_POLL_MASK, .func = TPLAN_CHAIN_POLL_FUNC,
				.mem_poll = 1, .interval = 10, .retry = TPLAN_CHAIN_POLL_RETRY,
			};
			struct tplan_sdma_atomic add = {
				.addr = tp_gate_dev(p, peer, g, TPLAN_GATE_ARRIVAL),
				.src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
			};

			r = tplan_sdma_encode_poll_regmem(p->dw + at, cap - at, &poll);
			if (r < 0)
				return r;
			at += (uint32_t)r;
			for (i = s->first[c]; i < s->first[c + 1]; i++) {
				uint64_t done = 0, len = s->reg[i].len;

				do {
					uint64_t piece = len - done;
					struct tplan_sdma_copy_linear cp;

					if (s->max_copy && piece > s->max_copy)
						piece = s->max_copy;
					cp = (struct tplan_sdma_copy_linear) {
						.src = own + s->reg[i].off + done,
						.dst = dev + s->reg[i].off + done,
						.bytes = (uint32_t)piece,
					};
					r = tplan_sdma_encode_copy_linear(p->dw + at, cap - at, &cp);
					if (r < 0)
						return r;
					at += (uint32_t)r;
					done += piece;
				} while (done < len);
			}
			r = tplan_sdma_encode_atomic(p->dw + at, cap - at, &add);
			if (r < 0)
				return r;
			at += (uint32_t)r;
			p->chains[n++] = (struct tplan_plan_chain) {
				.chunk = c, .peer = peer, .ndw = at - start,
			};
		}
	}
	p->ndw = at;
	p->nchains = n;
	return 0;
}

/* PLAN_PREPARE of the chains tp_build() left in p; the reject in p->reject. */
static inline int tp_prepare_built(struct tp_plan *p)
{
	struct tplan_plan_prepare pp = {
		.size = sizeof(pp), .plan_id = p->id, .nchains = p->nchains, .ndw = p->ndw,
		.chains = (uintptr_t)p->chains, .dwords = (uintptr_t)p->dw,
		.writers = (uintptr_t)p->writers, .timeout_ms = TP_STEP_TIMEOUT(p),
	};
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_PREPARE, &pp);

	p->reject = pp.reject;
	return ret;
}

static inline int tp_prepare(struct tp_plan *p, const struct tp_sched *s)
{
	int ret = tp_build(p, s);

	return ret ? ret : tp_prepare_built(p);
}

static inline int tp_start(struct tp_plan *p, struct tplan_plan_start *st)
{
	struct tplan_plan_start s = { .size = sizeof(s), .plan_id = p->id };
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_START, &s);

	if (st)
		*st = s;
	return ret;
}

/* PLAN_WAIT; the report in rep (cap entries), the count in *count. */
static inline int tp_wait(struct tp_plan *p, uint32_t timeout_ms,
			  struct tplan_plan_shortfall *rep, uint32_t cap, uint32_t *count)
{
	struct tplan_plan_wait w = {
		.size = sizeof(w), .plan_id = p->id, .timeout_ms = timeout_ms,
		.report = (uintptr_t)rep, .report_cap = rep ? cap : 0,
	};
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_WAIT, &w);

	if (count)
		*count = w.report_count;
	return ret;
}

static inline int tp_next(struct tp_plan *p, uint32_t *round)
{
	struct tplan_plan_next_round n = {
		.size = sizeof(n), .plan_id = p->id, .timeout_ms = TP_STEP_TIMEOUT(p),
	};
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_NEXT_ROUND, &n);

	if (round)
		*round = n.round;
	return ret;
}

static inline int tp_close(struct tp_plan *p, uint32_t *state)
{
	struct tplan_plan_close c = {
		.size = sizeof(c), .plan_id = p->id, .timeout_ms = TP_TIMEOUT,
	};
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_CLOSE, &c);

	if (state)
		*state = c.state;
	return ret;
}

static inline int tp_state(struct tp_plan *p, uint32_t *state, uint32_t *round)
{
	struct tplan_plan_state s = { .size = sizeof(s), .plan_id = p->id };
	int ret = tplan_test_ioctl(p->fd, TPLAN_IOC_PLAN_STATE, &s);

	if (state)
		*state = s.state;
	if (round)
		*round = s.round;
	return ret;
}

/*
 * mark_ready on the CPU, as the device header specifies it: a release add
 * on the writer counter; the last writer of the round (old + 1 ==
 * expected * round) stores ready = round with release, so the engine's
 * acquire of ready sees the chunk's data.
 */
static inline void tp_mark(const struct tp_plan *p, uint32_t chunk, uint32_t round)
{
	uint32_t g = p->chunk_base[p->rank] + chunk;
	uint64_t old = __atomic_fetch_add(tp_gate(p, p->rank, g, TPLAN_GATE_WRITERS), 1,
					  __ATOMIC_RELEASE);
	uint32_t want = *(volatile uint32_t *)tp_gate(p, p->rank, g, TPLAN_GATE_EXPECTED);

	if (old + 1 == (uint64_t)want * round)
		__atomic_store_n(tp_gate(p, p->rank, g, TPLAN_GATE_READY), (uint64_t)round,
				 __ATOMIC_RELEASE);
}

/* ---- common schedules ----------------------------------------------------- */

/*
 * The all-gather layout: rank r owns [buf_off + r * part, + part); its part
 * is nchunks chunks of nreg equal regions each (part divisible by
 * nchunks * nreg).  Storage for the description lives in *st.
 */
struct tp_even {
	uint32_t first[1025];
	struct tp_region reg[4096];
	struct tp_sched s;
};

static inline int tp_even_sched(struct tp_even *st, uint64_t own_off, uint64_t part,
				uint32_t nchunks, uint32_t nreg, uint64_t max_copy)
{
	uint64_t len;
	uint32_t c, i;

	if (nchunks > 1024 || (uint64_t)nchunks * nreg > 4096 || !nchunks || !nreg ||
	    part % ((uint64_t)nchunks * nreg))
		return -EINVAL;
	len = part / ((uint64_t)nchunks * nreg);
	for (c = 0; c < nchunks; c++) {
		st->first[c] = c * nreg;
		for (i = 0; i < nreg; i++)
			st->reg[c * nreg + i] = (struct tp_region) {
				.off = own_off + (uint64_t)(c * nreg + i) * len, .len = len,
			};
	}
	st->first[nchunks] = nchunks * nreg;
	st->s = (struct tp_sched) {
		.nchunks = nchunks, .first = st->first, .reg = st->reg, .max_copy = max_copy,
	};
	return 0;
}

/*
 * Round `round` of an all-gather with parts of `part` bytes: fill, start,
 * mark every chunk, wait, check every rank's part.
 */
static inline int tp_ag_round(struct tp_plan *p, uint64_t part, uint32_t round, uint64_t salt)
{
	unsigned char *heap = tplan_heap_ptr(p->ctx, p->rank);
	struct tplan_plan_start st;
	unsigned int r;
	uint32_t c;

	tp_fill(heap + p->buf_off + p->rank * part, part, tp_seed(p->rank, round, salt));
	RANK_OK(tp_start(p, &st));
	RANK_EQ(round, st.round);
	for (c = 0; c < p->nchunks; c++)
		tp_mark(p, c, round);
	RANK_OK(tp_wait(p, TP_TIMEOUT, NULL, 0, NULL));
	for (r = 0; r < p->world; r++)
		if (tp_check(heap + p->buf_off + r * part, part, tp_seed(r, round, salt)) >= 0)
			RANK_FAIL("round %u: rank %u's part is wrong", round, r);
	return 0;
}

/* ---- queue snapshots ------------------------------------------------------ */

struct tp_qsnap {
	uint64_t wptr[TPLAN_RANKS_MAX];
	uint64_t packets[TPLAN_RANKS_MAX];
	uint32_t charged[TPLAN_RANKS_MAX];
	uint32_t state[TPLAN_RANKS_MAX];
};

/* Every (this rank -> peer) queue's pointers and charge.  0 or -errno. */
static inline int tp_snap(struct tplan_ctx *ctx, struct tp_qsnap *q)
{
	unsigned int peer, me = (unsigned int)tplan_ctx_rank(ctx);
	struct tplan_queue_info qi;
	int ret;

	memset(q, 0, sizeof(*q));
	for (peer = 0; peer < (unsigned int)tplan_ctx_world_size(ctx); peer++) {
		if (peer == me)
			continue;
		ret = tplan_queue_info(ctx, peer, &qi);
		if (ret)
			return ret;
		q->wptr[peer] = qi.wptr;
		q->packets[peer] = qi.packets;
		q->charged[peer] = qi.prep_charged;
		q->state[peer] = qi.state;
	}
	return 0;
}

/* Wait until every queue of this rank executed all it holds. */
static inline int tp_queues_idle(struct tplan_ctx *ctx, unsigned int timeout_ms)
{
	unsigned int peer, me = (unsigned int)tplan_ctx_rank(ctx);
	struct tplan_queue_info qi;
	int ret;

	for (peer = 0; peer < (unsigned int)tplan_ctx_world_size(ctx); peer++) {
		if (peer == me)
			continue;
		ret = tplan_test_wait_state(ctx, peer, TPLAN_QUEUE_IDLE, &qi, timeout_ms);
		if (ret)
			return ret;
	}
	return 0;
}

/* Format a shortfall report entry for a failure message. */
static inline const char *tp_short_str(const struct tplan_plan_shortfall *s, char *buf,
				       size_t len)
{
	snprintf(buf, len, "chunk %u rank %u what %u have %llu want %llu", s->chunk, s->rank,
		 s->what, (unsigned long long)s->have, (unsigned long long)s->want);
	return buf;
}

#endif /* TPLAN_PLAN_UTIL_H */
