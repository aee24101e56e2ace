// SPDX-License-Identifier: GPL-2.0
/*
 * Per-rank address maps.  As on hardware, where each rank's GPU VM maps
 * every heap at an address of its own, each rank sees every heap at
 * device addresses of its own map, and its queues' packets are read in
 * that map only.  The soft engine draws the maps at random per group:
 * they differ per rank, never overlap one another, change from one group
 * to the next, and the debugfs "maps" table agrees, with pointer-page
 * windows that overlap no heap.  An address from another rank's map (that
 * rank's own view, all-gathered as a careless program would pass it
 * around) is refused by the chain validator with a reject record, for raw
 * chains and for plans alike, and injected raw it faults the queue with
 * BAD_ADDRESS instead of touching memory.
 */
#include <stdio.h>

#include "tplan_plan_util.h"

#define HEAP (1U << 20)
#define PAGE 4096ULL
#define RANKS_TIMEOUT_MS 100000

/* Every rank's view of every heap: view[v][r] is rank r's heap in v's map. */
struct views {
	uint64_t v[TPLAN_RANKS_MAX][TPLAN_RANKS_MAX];
};

static int disjoint(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a + alen <= b || b + blen <= a;
}

/* This rank's view through HEAP_INFO on its file, gathered from every rank. */
static int gather_views(int fd, unsigned int world, struct views *all)
{
	uint64_t mine[TPLAN_RANKS_MAX], out[TPLAN_RANKS_MAX * TPLAN_RANKS_MAX];
	struct tplan_group_all_gather ag = {
		.size = sizeof(ag), .blob_size = world * 8, .timeout_ms = TPLAN_TEST_TIMEOUT_MS,
		.in = (uintptr_t)mine, .out = (uintptr_t)out,
	};
	unsigned int r, v;
	int ret;

	for (r = 0; r < world; r++) {
		struct tplan_heap_info hi = { .size = sizeof(hi), .rank = r };

		ret = tplan_test_ioctl(fd, TPLAN_IOC_HEAP_INFO, &hi);
		if (ret)
			return ret;
		mine[r] = hi.heap_base;
	}
	ret = tplan_test_ioctl(fd, TPLAN_IOC_GROUP_ALL_GATHER, &ag);
	if (ret)
		return ret;
	for (v = 0; v < world; v++)
		for (r = 0; r < world; r++)
			all->v[v][r] = out[v * world + r];
	return 0;
}

/* What every map must be: see the top of the file. */
static int check_views(const struct views *all, unsigned int world)
{
	unsigned int v, w, r, s;

	for (v = 0; v < world; v++) {
		for (r = 0; r < world; r++) {
			uint64_t b = all->v[v][r];

			if (!b || b % PAGE || b + HEAP > 1ULL << 47)
				RANK_FAIL("rank %u sees rank %u's heap at %#llx: not a page-aligned "
					  "address below 2^47", v, r, (unsigned long long)b);
			for (w = 0; w < world; w++)
				for (s = 0; s < world; s++) {
					if (w < v || (w == v && s <= r))
						continue;
					if (!disjoint(b, HEAP, all->v[w][s], HEAP))
						RANK_FAIL("rank %u's view of heap %u (%#llx) and rank %u's "
							  "view of heap %u (%#llx) overlap", v, r,
							  (unsigned long long)b, w, s,
							  (unsigned long long)all->v[w][s]);
				}
		}
	}
	return 0;
}

/*
 * The debugfs table: "viewer rank base size" lines, one per heap of each
 * map, then "viewer qptr base size", the map's pointer-page window.  The
 * heaps as every rank said; windows page aligned, one page per rank, in
 * no heap of any map and apart from one another.
 */
static int check_debugfs_maps(uint64_t key, unsigned int world, const struct views *all)
{
	uint64_t win[TPLAN_RANKS_MAX] = { 0 };
	unsigned int seen = 0, nwin = 0, v, w, r;
	char dir[160], path[192], line[256], who[16];
	unsigned long long base, size;
	FILE *f;

	if (access(TPLAN_DEBUGFS, F_OK))
		return 0;
	RANK_OK(tplan_debugfs_group_dir(key, dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%.160s/maps", dir);
	f = fopen(path, "r");
	RANK_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %15s %llx %llx", &v, who, &base, &size) != 4)
			continue;
		if (v >= world) {
			fclose(f);
			RANK_FAIL("maps: viewer %u in a world of %u", v, world);
		}
		if (!strcmp(who, "qptr")) {
			if (base % PAGE || size != world * PAGE || win[v]) {
				fclose(f);
				RANK_FAIL("maps: viewer %u's window %#llx + %#llx", v, base, size);
			}
			win[v] = base;
			nwin++;
			continue;
		}
		r = (unsigned int)strtoul(who, NULL, 10);
		if (r >= world || base != all->v[v][r] || size != HEAP) {
			fclose(f);
			RANK_FAIL("maps: \"%.60s\" is not what rank %u said (%#llx)", line, v,
				  r < world ? (unsigned long long)all->v[v][r] : 0ULL);
		}
		seen++;
	}
	fclose(f);
	RANK_EQ(world * world, seen);
	RANK_EQ(world, nwin);
	for (v = 0; v < world; v++) {
		for (w = 0; w < world; w++) {
			if (w != v && !disjoint(win[v], world * PAGE, win[w], world * PAGE))
				RANK_FAIL("windows of ranks %u and %u overlap", v, w);
			for (r = 0; r < world; r++)
				if (!disjoint(win[v], world * PAGE, all->v[w][r], HEAP))
					RANK_FAIL("rank %u's window %#llx overlaps rank %u's view of "
						  "heap %u", v, (unsigned long long)win[v], w, r);
		}
	}
	return 0;
}

/* A raw join: the file, and the join's answer in *base.  -errno on failure. */
static int join_raw(struct tplan_rank_env *env, uint64_t key, uint64_t *base)
{
	struct tplan_group_join j = {
		.size = sizeof(j), .key = key, .world_size = env->world, .rank = env->rank,
		.heap_size = HEAP, .engine = TPLAN_ENGINE_SOFT, .sdma_ip = TPLAN_SDMA_440,
		.timeout_ms = TPLAN_TEST_TIMEOUT_MS,
	};
	int fd = tplan_test_open(), ret;

	if (fd < 0)
		return fd;
	ret = tplan_test_ioctl(fd, TPLAN_IOC_GROUP_JOIN, &j);
	if (ret) {
		close(fd);
		return ret;
	}
	*base = j.heap_base;
	return fd;
}

static int barrier_raw(int fd)
{
	struct tplan_group_barrier b = { .size = sizeof(b), .timeout_ms = TPLAN_TEST_TIMEOUT_MS };

	return tplan_test_ioctl(fd, TPLAN_IOC_GROUP_BARRIER, &b);
}

/*
 * Two groups one after the other, the second with another key: in each,
 * every rank's own heap is where its join said, the maps are what they
 * must be; and no rank's map is the same in both.
 */
static int maps_rank(struct tplan_rank_env *env)
{
	static struct views all[2];
	static uint64_t base[2];	/* the joins' answers */
	unsigned int round, v;
	int fd;

	for (round = 0; round < 2; round++) {
		/* The tests' keys count up from 1 in the low 16 bits: this one is unused. */
		uint64_t key = env->key ^ ((uint64_t)round << 15);

		fd = join_raw(env, key, &base[round]);
		if (fd < 0)
			RANK_FAIL("join %u: %s", round, strerror(-fd));
		RANK_OK(gather_views(fd, env->world, &all[round]));
		RANK_EQ(base[round], all[round].v[env->rank][env->rank]);
		if (check_views(&all[round], env->world))
			return -1;
		if (env->rank == 0 && check_debugfs_maps(key, env->world, &all[round]))
			return -1;
		RANK_OK(barrier_raw(fd));
		close(fd);
	}
	for (v = 0; v < env->world; v++)
		if (!memcmp(all[0].v[v], all[1].v[v], sizeof(all[0].v[v])))
			RANK_FAIL("rank %u's map is the same in two groups", v);
	return 0;
}

FIXTURE(maps) {
	int fd;
};

FIXTURE_VARIANT(maps) {
	unsigned int world;
};

FIXTURE_VARIANT_ADD(maps, ranks2) { .world = 2 };
FIXTURE_VARIANT_ADD(maps, ranks5) { .world = 5 };
FIXTURE_VARIANT_ADD(maps, ranks16) { .world = 16 };

FIXTURE_SETUP(maps)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(maps)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(maps, differ_per_rank_never_overlap_and_change_per_group, 150)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	RUN_RANKS(variant->world, maps_rank, (void *)variant, RANKS_TIMEOUT_MS);
}

/* ---- another rank's addresses on this rank's queue ------------------------- */

/*
 * Rank 0 sends to rank 1 and uses, in one place, an address of rank 2's
 * or rank 1's own map: the same heap and offset as the other rank sees
 * them.  Ranks 1 and 2 only join, all-gather their views and wait.
 */
enum foreign_what {
	FOREIGN_POLL,		/* the ready gate, in this rank's heap */
	FOREIGN_COPY_SRC,	/* the bytes sent, in this rank's heap */
	FOREIGN_COPY_DST,	/* where they go, in the peer's heap */
	FOREIGN_ATOMIC,		/* the arrival gate, in the peer's heap */
	FOREIGN_FENCE,		/* a FENCE into the peer's heap (inject only) */
};

struct foreign_case {
	enum foreign_what what;
	unsigned int whose;	/* the rank whose map the address is from */
};

#define F_WORLD 3
#define F_READY (HEAP / 2)
#define F_ARRIVAL (HEAP / 2 + 64)
#define F_DATA (HEAP / 4)
#define F_BYTES 256
#define F_CHAIN_DW (TPLAN_SDMA_POLL_DW + TPLAN_SDMA_COPY_LINEAR_DW + TPLAN_SDMA_ATOMIC_DW)

/* Addresses of one chain on queue 0 -> 1, each in the map it is taken from. */
struct f_addrs {
	uint64_t ready, src, dst, arrival;
};

static struct f_addrs f_addrs(const struct views *all, const struct foreign_case *fc)
{
	const uint64_t *own = all->v[0], *other = all->v[fc->whose];
	struct f_addrs a = {
		.ready = own[0] + F_READY, .src = own[0] + F_DATA,
		.dst = own[1] + F_DATA, .arrival = own[1] + F_ARRIVAL,
	};

	switch (fc->what) {
	case FOREIGN_POLL:
		a.ready = other[0] + F_READY;
		break;
	case FOREIGN_COPY_SRC:
		a.src = other[0] + F_DATA;
		break;
	case FOREIGN_COPY_DST:
		a.dst = other[1] + F_DATA;
		break;
	case FOREIGN_ATOMIC:
	case FOREIGN_FENCE:
		a.arrival = other[1] + F_ARRIVAL;
		break;
	}
	return a;
}

static int f_chain(const struct f_addrs *a, uint32_t *dw)
{
	struct tplan_sdma_poll_regmem poll = {
		.addr = a->ready, .mask = TPLAN_CHAIN_POLL_MASK, .func = TPLAN_CHAIN_POLL_FUNC,
		.mem_poll = 1, .interval = 10, .retry = TPLAN_CHAIN_POLL_RETRY,
	};
	struct tplan_sdma_copy_linear cp = { .src = a->src, .dst = a->dst, .bytes = F_BYTES };
	struct tplan_sdma_atomic add = {
		.addr = a->arrival, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	int n = 0;

	n += tplan_sdma_encode_poll_regmem(dw + n, F_CHAIN_DW - n, &poll);
	n += tplan_sdma_encode_copy_linear(dw + n, F_CHAIN_DW - n, &cp);
	n += tplan_sdma_encode_atomic(dw + n, F_CHAIN_DW - n, &add);
	return n;
}

static int f_submit(struct tplan_ctx *ctx, const uint32_t *dw, struct tplan_chain_reject *why)
{
	struct tplan_chain_desc d = {
		.ndw = F_CHAIN_DW, .ref = 1, .ready_offset = F_READY, .arrival_offset = F_ARRIVAL,
	};
	struct tplan_chain_submit s = {
		.size = sizeof(s), .peer = 1, .nchains = 1, .ndw = F_CHAIN_DW,
		.chains = (uintptr_t)&d, .dwords = (uintptr_t)dw,
	};
	int ret = tplan_test_ioctl(tplan_ctx_fd(ctx), TPLAN_IOC_CHAIN_SUBMIT, &s);

	*why = s.reject;
	return ret;
}

/* The rule, packet and value the validator must report for fc. */
static void f_expected(const struct foreign_case *fc, const struct f_addrs *a, uint32_t *rule,
		       uint32_t *packet, uint64_t *value)
{
	switch (fc->what) {
	case FOREIGN_POLL:
		*rule = TPLAN_CHAIN_R_POLL_ADDR, *packet = 0, *value = a->ready;
		break;
	case FOREIGN_COPY_SRC:
		*rule = TPLAN_CHAIN_R_COPY_SRC, *packet = 1, *value = a->src;
		break;
	case FOREIGN_COPY_DST:
		*rule = TPLAN_CHAIN_R_COPY_DST, *packet = 1, *value = a->dst;
		break;
	default:
		*rule = TPLAN_CHAIN_R_ATOMIC_ADDR, *packet = 2, *value = a->arrival;
		break;
	}
}

/*
 * CHAIN_SUBMIT of the chain with the foreign address: EINVAL, the reject
 * names the packet and the address, nothing queued.  The same chain all
 * in this rank's map is then accepted and delivers.
 */
static int f_submit_rank0(struct tplan_ctx *ctx, const struct views *all,
			  const struct foreign_case *fc)
{
	struct foreign_case none = { .what = fc->what, .whose = 0 };
	struct f_addrs bad = f_addrs(all, fc), good = f_addrs(all, &none);
	unsigned char *h0 = tplan_heap_ptr(ctx, 0), *h1 = tplan_heap_ptr(ctx, 1);
	struct tplan_chain_reject why;
	struct tplan_queue_info qi;
	uint32_t dw[F_CHAIN_DW], rule, packet;
	uint64_t value;

	RANK_EQ(F_CHAIN_DW, f_chain(&bad, dw));
	f_expected(fc, &bad, &rule, &packet, &value);
	RANK_ERR(-EINVAL, f_submit(ctx, dw, &why));
	RANK_EQ(rule, why.rule);
	RANK_EQ(0, why.chain);
	RANK_EQ(packet, why.packet);
	RANK_EQ(0, why.rank);
	RANK_EQ(value, why.value);
	RANK_OK(tplan_queue_info(ctx, 1, &qi));
	RANK_EQ(0, qi.wptr);
	RANK_EQ(0, qi.prep_charged);

	/* In this rank's own map, the chain goes through (its gate open already). */
	memset(h0 + F_DATA, 0x5c, F_BYTES);
	__atomic_store_n((uint64_t *)(h0 + F_READY), 1, __ATOMIC_RELEASE);
	RANK_EQ(F_CHAIN_DW, f_chain(&good, dw));
	RANK_OK(f_submit(ctx, dw, &why));
	RANK_OK(tplan_shared_wait((volatile uint64_t *)(h1 + F_ARRIVAL), 1, TPLAN_TEST_TIMEOUT_MS));
	RANK_EQ(0x5c, h1[F_DATA + F_BYTES - 1]);
	return 0;
}

/*
 * The packet with the foreign address, injected raw: the queue faults at
 * it with BAD_ADDRESS and no heap byte changes.  The same packet in this
 * rank's map, injected first, does its work.
 */
static int f_inject_one(struct tplan_ctx *ctx, const struct f_addrs *a,
			const struct foreign_case *fc, uint32_t *dw)
{
	struct tplan_sdma_copy_linear cp = { .src = a->src, .dst = a->dst, .bytes = F_BYTES };
	struct tplan_sdma_atomic add = {
		.addr = a->arrival, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
	};
	struct tplan_sdma_fence fence = { .addr = a->arrival, .data = 0x600dcafe };
	/* A poll that passes at once, where it may be read. */
	struct tplan_sdma_poll_regmem poll = {
		.addr = a->ready, .ref = 0, .mask = 0xffffffffu, .func = TPLAN_SDMA_FUNC_GE,
		.mem_poll = 1, .interval = 1, .retry = 2,
	};

	switch (fc->what) {
	case FOREIGN_POLL:
		return tplan_sdma_encode_poll_regmem(dw, 16, &poll);
	case FOREIGN_COPY_SRC:
	case FOREIGN_COPY_DST:
		return tplan_sdma_encode_copy_linear(dw, 16, &cp);
	case FOREIGN_ATOMIC:
		return tplan_sdma_encode_atomic(dw, 16, &add);
	case FOREIGN_FENCE:
		return tplan_sdma_encode_fence(dw, 16, &fence);
	}
	return -EINVAL;
}

static int f_inject_rank0(struct tplan_ctx *ctx, const struct views *all,
			  const struct foreign_case *fc)
{
	struct foreign_case none = { .what = fc->what, .whose = 0 };
	struct f_addrs bad = f_addrs(all, fc), good = f_addrs(all, &none);
	unsigned char *h0 = tplan_heap_ptr(ctx, 0), *h1 = tplan_heap_ptr(ctx, 1);
	static unsigned char before0[HEAP], before1[HEAP];
	struct tplan_queue_info qi;
	uint32_t dw[16];
	uint64_t at;
	int n;

	/* In this rank's map: executes. */
	memset(h0 + F_DATA, 0x3a, F_BYTES);
	memset(h1 + F_DATA, 0, F_BYTES);
	n = f_inject_one(ctx, &good, fc, dw);
	RANK_ASSERT(n > 0);
	RANK_OK(tplan_test_inject(ctx, 1, dw, (uint32_t)n));
	RANK_OK(tplan_quiet(ctx, 1, TPLAN_TEST_TIMEOUT_MS));
	RANK_OK(tplan_queue_info(ctx, 1, &qi));
	RANK_EQ(TPLAN_QUEUE_IDLE, qi.state);
	switch (fc->what) {
	case FOREIGN_COPY_SRC:
	case FOREIGN_COPY_DST:
		RANK_EQ(0x3a, h1[F_DATA + F_BYTES - 1]);
		break;
	case FOREIGN_ATOMIC:
		RANK_EQ(1, *(volatile uint64_t *)(h1 + F_ARRIVAL));
		break;
	case FOREIGN_FENCE:
		RANK_EQ(0x600dcafe, *(volatile uint32_t *)(h1 + F_ARRIVAL));
		break;
	case FOREIGN_POLL:
		break;
	}

	/* From another rank's map: faults, touches nothing. */
	memset(h1 + F_DATA, 0, F_BYTES);
	memset(h0 + F_DATA, 0x7d, F_BYTES);
	memcpy(before0, h0, HEAP);
	memcpy(before1, h1, HEAP);
	at = qi.wptr;
	n = f_inject_one(ctx, &bad, fc, dw);
	RANK_ASSERT(n > 0);
	RANK_OK(tplan_test_inject(ctx, 1, dw, (uint32_t)n));
	RANK_OK(tplan_test_wait_state(ctx, 1, TPLAN_QUEUE_FAULT, &qi, 10000));
	RANK_EQ(TPLAN_FAULT_BAD_ADDRESS, qi.fault_reason);
	RANK_EQ(at, qi.fault_offset);
	RANK_EQ(dw[0], qi.fault_dword);
	RANK_EQ(0, memcmp(before0, h0, HEAP));
	RANK_EQ(0, memcmp(before1, h1, HEAP));
	return 0;
}

/*
 * Plans: rank 1 builds its chains in rank 0's map instead of its own (the
 * copies' destinations as rank 0 sees rank 0's heap).  Every rank's
 * prepare fails with that rank's reject; then chains in each rank's own
 * map run a round.
 */
#define P_PART 4096

static int f_plan(struct tplan_ctx *ctx, struct tplan_rank_env *env, const struct views *all)
{
	static struct tp_even ev;
	struct tplan_sdma_copy_linear cp;
	unsigned int me = env->rank;
	uint64_t foreign = 0;
	struct tp_plan p;
	uint32_t state;
	int ret;

	RANK_OK(tp_create(&p, ctx, 0, P_PART * env->world, me * P_PART, P_PART, 2));
	RANK_OK(tp_even_sched(&ev, me * P_PART, P_PART, 2, 1, 0));
	RANK_OK(tp_build(&p, &ev.s));
	if (me == 1) {
		/* Chain 0 goes to rank 0: its first copy after the POLL. */
		uint32_t *c = p.dw + TPLAN_SDMA_POLL_DW;

		RANK_EQ(0, p.chains[0].peer);
		RANK_EQ(TPLAN_SDMA_COPY_LINEAR_DW,
			tplan_sdma_decode_copy_linear(c, TPLAN_SDMA_COPY_LINEAR_DW, &cp));
		RANK_EQ(all->v[1][0], cp.dst - ev.reg[0].off);
		cp.dst = all->v[0][0] + ev.reg[0].off;
		foreign = cp.dst;
		RANK_EQ(TPLAN_SDMA_COPY_LINEAR_DW,
			tplan_sdma_encode_copy_linear(c, TPLAN_SDMA_COPY_LINEAR_DW, &cp));
	}
	ret = tp_prepare_built(&p);
	RANK_EQ(-EINVAL, ret);
	RANK_EQ(TPLAN_CHAIN_R_COPY_DST, p.reject.rule);
	RANK_EQ(1, p.reject.rank);
	if (me == 1) {
		RANK_EQ(0, p.reject.chain);
		RANK_EQ(1, p.reject.packet);
		RANK_EQ(foreign, p.reject.value);
	}
	RANK_OK(tp_state(&p, &state, NULL));
	RANK_EQ(TPLAN_PLAN_FAILED, state);
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);

	/* Each rank's own map: a round delivers everywhere. */
	RANK_OK(tp_create(&p, ctx, 0, P_PART * env->world, me * P_PART, P_PART, 2));
	RANK_OK(tp_even_sched(&ev, me * P_PART, P_PART, 2, 1, 0));
	RANK_OK(tp_prepare(&p, &ev.s));
	if (tp_ag_round(&p, P_PART, 1, env->key))
		return -1;
	RANK_OK(tp_close(&p, NULL));
	tp_free_chains(&p);
	return 0;
}

enum foreign_mode { F_SUBMIT, F_INJECT, F_PLAN };

struct foreign_arg {
	enum foreign_mode mode;
	struct foreign_case fc;
};

static int foreign_rank(struct tplan_rank_env *env)
{
	const struct foreign_arg *fa = env->arg;
	static struct views all;
	struct tplan_ctx *ctx;
	unsigned int r;

	RANK_OK(tplan_rank_join(env, HEAP, &ctx));
	RANK_OK(gather_views(tplan_ctx_fd(ctx), env->world, &all));
	/* The library's view is this rank's map. */
	for (r = 0; r < env->world; r++)
		RANK_EQ(all.v[env->rank][r], tplan_heap_devaddr(ctx, r));
	if (fa->mode == F_PLAN) {
		if (f_plan(ctx, env, &all))
			return -1;
	} else if (env->rank == 0) {
		if (fa->mode == F_SUBMIT ? f_submit_rank0(ctx, &all, &fa->fc) :
					   f_inject_rank0(ctx, &all, &fa->fc))
			return -1;
	}
	RANK_OK(tplan_barrier(ctx, TPLAN_TEST_TIMEOUT_MS * 2));
	tplan_ctx_close(ctx);
	return 0;
}

FIXTURE(foreign) {
	int fd;
};

FIXTURE_VARIANT(foreign) {
	struct foreign_case fc;
};

/* Rank 1's own view of a heap, or rank 2's (a bystander's). */
FIXTURE_VARIANT_ADD(foreign, poll_gate_as_rank1_sees_it) { { FOREIGN_POLL, 1 } };
FIXTURE_VARIANT_ADD(foreign, poll_gate_as_rank2_sees_it) { { FOREIGN_POLL, 2 } };
FIXTURE_VARIANT_ADD(foreign, copy_src_as_rank1_sees_it) { { FOREIGN_COPY_SRC, 1 } };
FIXTURE_VARIANT_ADD(foreign, copy_dst_as_rank1_sees_it) { { FOREIGN_COPY_DST, 1 } };
FIXTURE_VARIANT_ADD(foreign, copy_dst_as_rank2_sees_it) { { FOREIGN_COPY_DST, 2 } };
FIXTURE_VARIANT_ADD(foreign, atomic_as_rank1_sees_it) { { FOREIGN_ATOMIC, 1 } };
FIXTURE_VARIANT_ADD(foreign, atomic_as_rank2_sees_it) { { FOREIGN_ATOMIC, 2 } };

FIXTURE_SETUP(foreign)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(foreign)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(foreign, chain_submit_is_rejected, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct foreign_arg fa = { .mode = F_SUBMIT, .fc = variant->fc };

	RUN_RANKS(F_WORLD, foreign_rank, &fa, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(foreign, inject_faults_without_touching_memory, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct foreign_arg fa = { .mode = F_INJECT, .fc = variant->fc };

	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module parameter allow_inject=1");
	RUN_RANKS(F_WORLD, foreign_rank, &fa, RANKS_TIMEOUT_MS);
}

FIXTURE(foreign_one) {
	int fd;
};

FIXTURE_SETUP(foreign_one)
{
	TPLAN_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(foreign_one)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(foreign_one, inject_fence_faults_without_touching_memory, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct foreign_arg fa = { .mode = F_INJECT, .fc = { FOREIGN_FENCE, 1 } };

	if (!tplan_test_inject_allowed())
		SKIP(return, "needs the module parameter allow_inject=1");
	RUN_RANKS(F_WORLD, foreign_rank, &fa, RANKS_TIMEOUT_MS);
}

TEST_F_TIMEOUT(foreign_one, plan_prepare_is_rejected_on_every_rank, 120)
{
	TPLAN_SETUP_SKIPPED_RETURN();
	struct foreign_arg fa = { .mode = F_PLAN };

	RUN_RANKS(F_WORLD, foreign_rank, &fa, RANKS_TIMEOUT_MS);
}

TEST_HARNESS_MAIN
