// SPDX-License-Identifier: MIT
/*
 * Plans: create (collective: gate table, chains built from the schedule,
 * round 1 prepared on every rank or on none), start, wait, next_round,
 * close, state.  Errors keep the kernel's errno; tplan_ctx_error() says
 * which chunk, region and rule.
 *
 * A plan armed ahead (depth > 1) runs the rounds the kernel has queued in
 * user space, on the mapped gates: start fills the handle, a wait that
 * finds every count reached returns without a call (the counts are those
 * the kernel's wait checks, read with acquire), next_round releases with
 * a store.  The kernel is called to sleep, for the report, and once per
 * depth rounds to queue the next ones (TPLAN_NEXT_ROUND_AT).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtplan.h"
#include "libtplan_priv.h"
#include "tplan_device.h"
#include "chain_build.h"

struct tplan_plan {
	struct tplan_ctx *ctx;
	uint32_t id;
	uint32_t rank;
	uint32_t world_size;
	uint32_t nchunks;
	uint32_t total_chunks;
	uint32_t round;
	uint32_t depth;			/* rounds armed ahead: > 1 runs them in user space */
	uint32_t armed;			/* the last round queued */
	int started;			/* user-space rounds: the round was handed out */
	int done;			/* user-space rounds: a wait found it complete */
	uint64_t gate_offset;
	uint32_t *chunk_base;		/* world_size + 1 */
	struct tplan_plan_shortfall *report;
	uint32_t report_cap;
	uint32_t report_count;		/* as the kernel counted, may exceed report_cap */
};

/* The kernel writes at most this many shortfall entries per wait. */
#define REPORT_CAP_MAX 4096
/* Shortfalls spelled out in tplan_ctx_error(); the rest are counted. */
#define REPORT_TEXT_MAX 4

static const char *const rule_text[TPLAN_CHAIN_R_COUNT] = {
	[TPLAN_CHAIN_R_SIZE] = "chain empty or over the length limit",
	[TPLAN_CHAIN_R_TRUNCATED] = "a packet runs past the chain's end",
	[TPLAN_CHAIN_R_OPCODE] = "a packet a chain may not hold",
	[TPLAN_CHAIN_R_FIRST] = "the first packet is not POLL_REGMEM",
	[TPLAN_CHAIN_R_POLL_AGAIN] = "a second POLL_REGMEM",
	[TPLAN_CHAIN_R_NO_COPY] = "no copy between the poll and the atomic",
	[TPLAN_CHAIN_R_NO_ATOMIC] = "the chain ends before its ATOMIC",
	[TPLAN_CHAIN_R_TRAILING] = "dwords after the ATOMIC",
	[TPLAN_CHAIN_R_RESERVED] = "a reserved bit is set",
	[TPLAN_CHAIN_R_POLL_MODE] = "poll of a register, or with HDP flush",
	[TPLAN_CHAIN_R_POLL_FUNC] = "poll function is not >=",
	[TPLAN_CHAIN_R_POLL_MASK] = "poll mask is not 0xffffffff",
	[TPLAN_CHAIN_R_POLL_REF] = "poll reference is not 0",
	[TPLAN_CHAIN_R_POLL_RETRY] = "poll retry count is not 0xfff (forever)",
	[TPLAN_CHAIN_R_POLL_ADDR] = "poll address is not the chunk's ready gate",
	[TPLAN_CHAIN_R_COPY_FLAGS] = "copy with tmz, encrypt or an endian swap",
	[TPLAN_CHAIN_R_COPY_COUNT] = "copy larger than the engine's per-packet maximum",
	[TPLAN_CHAIN_R_COPY_SRC] = "copy source outside the rank's own part",
	[TPLAN_CHAIN_R_COPY_DST] = "copy destination is not the source's offset on the peer",
	[TPLAN_CHAIN_R_COPY_DST_RANGE] = "copy destination outside the plan buffer",
	[TPLAN_CHAIN_R_SUBWIN_ELEMENT] = "sub-window element over 16 bytes",
	[TPLAN_CHAIN_R_SUBWIN_DEPTH] = "sub-window is not 2D",
	[TPLAN_CHAIN_R_SUBWIN_EXTENT] = "sub-window row past its pitch or its coordinate fields",
	[TPLAN_CHAIN_R_SUBWIN_ALIGN] = "sub-window base or pitch not a multiple of 4 bytes",
	[TPLAN_CHAIN_R_SUBWIN_SHAPE] = "sub-window destination shape differs from the source's",
	[TPLAN_CHAIN_R_ATOMIC_OP] = "atomic is not ADD64",
	[TPLAN_CHAIN_R_ATOMIC_VALUE] = "atomic operand is not 1",
	[TPLAN_CHAIN_R_ATOMIC_UNUSED] = "atomic with loop, tmz or compare data",
	[TPLAN_CHAIN_R_ATOMIC_ADDR] = "atomic address is not the chunk's arrival gate on the peer",
	[TPLAN_CHAIN_R_OVERLAP] = "two ranks send the same bytes",
};

static const char *rule_name(uint32_t rule)
{
	return rule < TPLAN_CHAIN_R_COUNT && rule_text[rule] ? rule_text[rule] : "unknown rule";
}

static void plan_free(struct tplan_plan *p)
{
	if (!p)
		return;
	free(p->chunk_base);
	free(p->report);
	free(p);
}

/* The peer of chain index i in the library's order: chunk-major, peers ascending. */
static uint32_t chain_peer(uint32_t rank, uint32_t world, uint32_t i)
{
	uint32_t k = i % (world - 1);

	return k < rank ? k : k + 1;
}

static void chain_target(const struct tplan_plan *p, uint32_t rank, uint32_t peer, uint32_t chunk,
			 struct tplan_chain_target *t)
{
	const struct tplan_ctx *ctx = p->ctx;
	uint32_t gchunk = p->chunk_base[rank] + chunk;

	memset(t, 0, sizeof(*t));
	t->own_heap = tplan_heap_devaddr(ctx, rank);
	t->peer_heap = tplan_heap_devaddr(ctx, peer);
	t->ready_gate = tplan_gate_addr(t->own_heap, p->gate_offset, gchunk, TPLAN_GATE_READY);
	t->arrival_gate = tplan_gate_addr(t->peer_heap, p->gate_offset, gchunk, TPLAN_GATE_ARRIVAL);
	t->max_copy_bytes = tplan_ctx_max_copy_bytes(ctx);
}

/*
 * "rank 1 chunk 3 (peer 0) region 2" for chain `chain`, packet `packet` of
 * rank `rank`.  Regions are known for this rank's own chains only; another
 * rank's are named by chunk and packet, as its library ordered them.
 */
static void describe_chain(const struct tplan_plan *p, const struct tplan_schedule *schedule,
			   uint32_t rank, uint32_t chain, uint32_t packet, char *buf, size_t size)
{
	uint32_t world = p->world_size, nchunks, chunk, peer, nregions;
	const struct tplan_region *regions;
	struct tplan_chain_target t;
	struct tplan_chain_where w;

	if (rank >= world || world < 2) {
		snprintf(buf, size, "rank %u chain %u packet %u", rank, chain, packet);
		return;
	}
	nchunks = p->chunk_base[rank + 1] - p->chunk_base[rank];
	chunk = chain / (world - 1);
	peer = chain_peer(rank, world, chain);
	if (chunk >= nchunks) {
		snprintf(buf, size, "rank %u chain %u packet %u", rank, chain, packet);
		return;
	}
	regions = rank == p->rank ? tplan_schedule_chunk(schedule, chunk, &nregions, NULL) : NULL;
	if (!regions) {
		snprintf(buf, size, "rank %u chunk %u (peer %u) packet %u", rank, chunk, peer, packet);
		return;
	}
	chain_target(p, rank, peer, chunk, &t);
	tplan_chain_locate(&t, regions, nregions, packet, &w);
	switch (w.part) {
	case TPLAN_CHAIN_PART_POLL:
		snprintf(buf, size, "rank %u chunk %u (peer %u) POLL_REGMEM", rank, chunk, peer);
		break;
	case TPLAN_CHAIN_PART_ATOMIC:
		snprintf(buf, size, "rank %u chunk %u (peer %u) ATOMIC", rank, chunk, peer);
		break;
	case TPLAN_CHAIN_PART_COPY:
		if (w.pieces > 1)
			snprintf(buf, size, "rank %u chunk %u (peer %u) region %u (copy %u of %u)",
				 rank, chunk, peer, w.region, w.piece + 1, w.pieces);
		else
			snprintf(buf, size, "rank %u chunk %u (peer %u) region %u", rank, chunk,
				 peer, w.region);
		break;
	default:
		snprintf(buf, size, "rank %u chunk %u (peer %u) packet %u", rank, chunk, peer, packet);
		break;
	}
}

static int prepare_error(struct tplan_plan *p, const struct tplan_schedule *schedule, int err,
			 const struct tplan_chain_reject *why)
{
	char where[96], other[96];

	if (err != -EINVAL || !why->rule)
		return tplan_set_error(p->ctx, err,
				       "plan prepare: %s%s", strerror(-err),
				       err == -EINVAL ?
				       " (a rank's chains or writers are malformed, or it refused its schedule: see its error)" :
				       err == -ENOSPC ?
				       " (a queue's prepared-copy budget, here or on another rank)" : "");
	describe_chain(p, schedule, why->rank, why->chain, why->packet, where, sizeof(where));
	if (why->rule == TPLAN_CHAIN_R_OVERLAP) {
		describe_chain(p, schedule, why->other_rank, why->other_chain, why->other_packet,
			       other, sizeof(other));
		return tplan_set_error(p->ctx, err,
				       "plan prepare: %s and %s: %s (rule %u, heap offset %#llx)",
				       where, other, rule_name(why->rule), why->rule,
				       (unsigned long long)why->value);
	}
	return tplan_set_error(p->ctx, err, "plan prepare: %s: %s (rule %u, value %#llx)", where,
			       rule_name(why->rule), why->rule, (unsigned long long)why->value);
}

/*
 * This rank's chains, chunk-major (chunk 0 to every peer, then chunk 1...),
 * which keeps each peer's chains in schedule order.  Fills *chains, *dw.
 */
static int build_chains(struct tplan_plan *p, const struct tplan_schedule *schedule,
			struct tplan_plan_chain **chainsp, uint32_t **dwp, uint32_t *nchains,
			uint32_t *ndw)
{
	uint32_t world = p->world_size, n = p->nchunks * (world - 1), c, i, nregions;
	const struct tplan_region *regions;
	struct tplan_plan_chain *chains;
	struct tplan_chain_target t;
	uint64_t total = 0;
	uint32_t *dw = NULL;
	int len;

	*chainsp = NULL;
	*dwp = NULL;
	*nchains = n;
	*ndw = 0;
	chains = calloc(n ? n : 1, sizeof(*chains));
	if (!chains)
		return tplan_set_error(p->ctx, -ENOMEM, "plan: no memory for %u chains", n);
	for (i = 0; i < n; i++) {
		c = i / (world - 1);
		chains[i].chunk = c;
		chains[i].peer = chain_peer(p->rank, world, i);
		regions = tplan_schedule_chunk(schedule, c, &nregions, NULL);
		chain_target(p, p->rank, chains[i].peer, c, &t);
		len = tplan_chain_build(NULL, 0, &t, regions, nregions);
		if (len < 0)
			goto err_build;
		if (len > (int)TPLAN_CHAIN_MAX_DWORDS) {
			free(chains);
			return tplan_set_error(p->ctx, -E2BIG,
					       "plan: rank %u chunk %u (peer %u) needs %d dwords of packets, a chain holds %u: split the chunk",
					       p->rank, c, chains[i].peer, len, TPLAN_CHAIN_MAX_DWORDS);
		}
		chains[i].ndw = (uint32_t)len;
		total += (uint32_t)len;
	}
	if (total > UINT32_MAX) {
		free(chains);
		return tplan_set_error(p->ctx, -E2BIG, "plan: rank %u's chains need %llu dwords",
				       p->rank, (unsigned long long)total);
	}
	dw = malloc(total ? total * sizeof(*dw) : sizeof(*dw));
	if (!dw) {
		free(chains);
		return tplan_set_error(p->ctx, -ENOMEM, "plan: no memory for %llu dwords",
				       (unsigned long long)total);
	}
	total = 0;
	for (i = 0; i < n; i++) {
		c = chains[i].chunk;
		regions = tplan_schedule_chunk(schedule, c, &nregions, NULL);
		chain_target(p, p->rank, chains[i].peer, c, &t);
		len = tplan_chain_build(dw + total, chains[i].ndw, &t, regions, nregions);
		if (len < 0)
			goto err_build;
		total += (uint32_t)len;
	}
	*chainsp = chains;
	*dwp = dw;
	*ndw = (uint32_t)total;
	return 0;

err_build:
	free(dw);
	free(chains);
	return tplan_set_error(p->ctx, len, "plan: rank %u chunk %u (peer %u): cannot build its chain: %s",
			       p->rank, c, chain_peer(p->rank, world, i), strerror(-len));
}

int tplan_plan_create_or_refuse(struct tplan_ctx *ctx, uint64_t buf_offset, uint64_t buf_bytes,
				uint64_t own_offset, uint64_t own_bytes,
				const struct tplan_schedule *schedule, int refuse,
				struct tplan_plan **out)
{
	struct tplan_plan_create create = {
		.size = sizeof(create),
		.timeout_ms = ctx->timeout_ms,
		.buffer_offset = buf_offset,
		.buffer_bytes = buf_bytes,
		.own_offset = own_offset,
		.own_bytes = own_bytes,
		.nchunks = tplan_schedule_nchunks(schedule),
		.depth = ctx->rounds_ahead,
	};
	struct tplan_plan_state st = { .size = sizeof(st) };
	struct tplan_plan_prepare prep = { .size = sizeof(prep), .timeout_ms = ctx->timeout_ms };
	struct tplan_plan_close close = { .size = sizeof(close), .timeout_ms = ctx->timeout_ms };
	struct tplan_plan_chain *chains = NULL;
	uint32_t *dw = NULL, *writers = NULL, nchains = 0, ndw = 0, c;
	char saved[sizeof(ctx->error)];
	struct tplan_plan *p;
	uint64_t items;
	int ret;

	*out = NULL;
	if (!ctx->joined)
		return tplan_set_error(ctx, -ENOTCONN, "tplan_plan_create: not joined");
	if (ctx->world_size > TPLAN_HANDLE_MAX_RANKS)
		return tplan_set_error(ctx, -EINVAL, "tplan_plan_create: %u ranks, a handle holds %u",
				       ctx->world_size, TPLAN_HANDLE_MAX_RANKS);
	p = calloc(1, sizeof(*p));
	if (p)
		p->chunk_base = calloc(ctx->world_size + 1, sizeof(*p->chunk_base));
	if (!p || !p->chunk_base) {
		plan_free(p);
		return tplan_set_error(ctx, -ENOMEM, "tplan_plan_create: no memory");
	}
	p->ctx = ctx;
	p->rank = ctx->rank;
	p->world_size = ctx->world_size;
	p->nchunks = create.nchunks;
	create.chunk_base = (uintptr_t)p->chunk_base;

	ret = tplan_ioctl(ctx, TPLAN_IOC_PLAN_CREATE, &create, "plan create");
	if (ret) {
		plan_free(p);
		return refuse ? refuse : ret;
	}
	p->id = create.plan_id;
	p->gate_offset = create.gate_offset;
	p->total_chunks = p->chunk_base[p->world_size];

	/* The report can name every counter a wait checks. */
	items = (uint64_t)p->nchunks * p->world_size + p->total_chunks;
	p->report_cap = items < 1 ? 1 : items > REPORT_CAP_MAX ? REPORT_CAP_MAX : (uint32_t)items;
	p->report = calloc(p->report_cap, sizeof(*p->report));
	writers = calloc(p->nchunks ? p->nchunks : 1, sizeof(*writers));
	if (!refuse && (!p->report || !writers))
		refuse = tplan_set_error(ctx, -ENOMEM, "tplan_plan_create: no memory");
	for (c = 0; !refuse && c < p->nchunks; c++)
		tplan_schedule_chunk(schedule, c, NULL, &writers[c]);
	if (!refuse && p->world_size > 1)
		refuse = build_chains(p, schedule, &chains, &dw, &nchains, &ndw);

	prep.plan_id = p->id;
	if (refuse) {
		/* a count the kernel refuses: every rank fails, nobody waits */
		prep.nchains = UINT32_MAX;
	} else {
		prep.nchains = nchains;
		prep.ndw = ndw;
		prep.chains = (uintptr_t)chains;
		prep.dwords = (uintptr_t)dw;
		prep.writers = (uintptr_t)writers;
	}
	memcpy(saved, ctx->error, sizeof(saved));
	ret = tplan_ioctl(ctx, TPLAN_IOC_PLAN_PREPARE, &prep, "plan prepare");
	free(chains);
	free(dw);
	free(writers);
	if (refuse) {
		ret = refuse;
		memcpy(ctx->error, saved, sizeof(saved));
	} else if (ret) {
		prepare_error(p, schedule, ret, &prep.reject);
	}
	if (ret) {
		/* nothing left behind: the failed plan is closed on every rank */
		memcpy(saved, ctx->error, sizeof(saved));
		close.plan_id = p->id;
		tplan_ioctl(ctx, TPLAN_IOC_PLAN_CLOSE, &close, "plan close");
		memcpy(ctx->error, saved, sizeof(saved));
		plan_free(p);
		return ret;
	}
	p->round = 1;
	p->depth = 1;
	if (ctx->rounds_ahead > 1) {
		/* Where the kernel starts (1, or a test's first round) and how far it armed. */
		st.plan_id = p->id;
		ret = tplan_ioctl(ctx, TPLAN_IOC_PLAN_STATE, &st, "plan state");
		if (ret) {
			tplan_plan_close(p, NULL);
			return ret;
		}
		p->round = st.round;
		p->armed = st.armed;
		p->depth = st.depth;
	}
	*out = p;
	return 0;
}

int tplan_plan_create(struct tplan_ctx *ctx, uint64_t buf_offset, uint64_t buf_bytes,
		      uint64_t own_offset, uint64_t own_bytes,
		      const struct tplan_schedule *schedule, struct tplan_plan **out)
{
	return tplan_plan_create_or_refuse(ctx, buf_offset, buf_bytes, own_offset, own_bytes,
					   schedule, 0, out);
}

/* A plan whose armed rounds run in user space. */
static int ahead(const struct tplan_plan *p)
{
	return p->depth > 1;
}

int tplan_plan_start(struct tplan_plan *p, struct tplan_handle *handle)
{
	struct tplan_plan_start st = { .size = sizeof(st), .plan_id = p->id };
	uint32_t r;
	int ret;

	if (ahead(p)) {
		/* The round is armed already: its handle is the plan's. */
		if (p->started || p->done)
			return tplan_set_error(p->ctx, -EBUSY,
					       "plan start: round %u was started already", p->round);
		st.round = p->round;
		st.nchunks = p->nchunks;
		st.total_chunks = p->total_chunks;
		st.gate_offset = p->gate_offset;
		p->started = 1;
	} else {
		ret = tplan_ioctl(p->ctx, TPLAN_IOC_PLAN_START, &st, "plan start");
		if (ret)
			return ret;
	}
	p->round = st.round;
	memset(handle, 0, sizeof(*handle));
	handle->gates = (uint64_t)(uintptr_t)((char *)tplan_heap_ptr(p->ctx, p->rank) +
					      st.gate_offset);
	handle->round = st.round;
	handle->rank = p->rank;
	handle->world_size = p->world_size;
	handle->nchunks = st.nchunks;
	handle->total_chunks = st.total_chunks;
	for (r = 0; r <= p->world_size; r++)
		handle->chunk_base[r] = p->chunk_base[r];
	return 0;
}

/* Global chunk g as (owner rank, its chunk index). */
static void chunk_owner(const struct tplan_plan *p, uint32_t g, uint32_t *rank, uint32_t *chunk)
{
	uint32_t r;

	for (r = 0; r + 1 < p->world_size && g >= p->chunk_base[r + 1]; r++)
		;
	*rank = r;
	*chunk = g - p->chunk_base[r];
}

/* EIO: which queue stopped, where and why. */
static int fault_error(struct tplan_plan *p, const struct tplan_plan_wait *w)
{
	return tplan_set_error(p->ctx, -EIO,
			       "plan wait: round %u: queue %u->%u faulted (reason %u) at queue position %llu, dword %#x: see tplan_queue_info()",
			       w->round, w->fault.src, w->fault.dst, w->fault.reason,
			       (unsigned long long)w->fault.offset, w->fault.dword);
}

static int wait_error(struct tplan_plan *p, int err, uint32_t round)
{
	uint32_t i, n = p->report_count < p->report_cap ? p->report_count : p->report_cap;
	char text[sizeof(p->ctx->error)];
	size_t at = 0;

	at += (size_t)snprintf(text, sizeof(text), "plan wait: round %u: %s (%u count%s off)",
			       round, err == -EOVERFLOW ?
			       "a chunk was marked ready more than writers times" : "timed out",
			       p->report_count, p->report_count == 1 ? "" : "s");
	for (i = 0; i < n && i < REPORT_TEXT_MAX && at < sizeof(text); i++) {
		const struct tplan_plan_shortfall *s = &p->report[i];
		uint32_t owner, chunk;

		chunk_owner(p, s->chunk, &owner, &chunk);
		if (s->what == TPLAN_SHORT_ARRIVAL)
			at += (size_t)snprintf(text + at, sizeof(text) - at,
					       "%s rank %u chunk %u arrivals at rank %u have %llu want %llu",
					       i ? ";" : ":", owner, chunk, s->rank,
					       (unsigned long long)s->have,
					       (unsigned long long)s->want);
		else
			at += (size_t)snprintf(text + at, sizeof(text) - at,
					       "%s rank %u chunk %u marks %s have %llu want %llu",
					       i ? ";" : ":", owner, chunk,
					       s->what == TPLAN_SHORT_EXTRA_MARKS ? "over" : "short",
					       (unsigned long long)s->have,
					       (unsigned long long)s->want);
	}
	if (p->report_count > i && at < sizeof(text))
		snprintf(text + at, sizeof(text) - at, "; and %u more", p->report_count - i);
	return tplan_set_error(p->ctx, err, "%s", text);
}

/* Global chunk g's gate row in rank r's heap, as this process maps it. */
static uint8_t *gate_row(const struct tplan_plan *p, uint32_t r, uint32_t g)
{
	return (uint8_t *)tplan_heap_ptr(p->ctx, r) + p->gate_offset +
	       (uint64_t)g * TPLAN_GATE_ROW_BYTES;
}

/* Acquire: the data a count vouches for is visible after it. */
static uint64_t row_load(const uint8_t *row, uint32_t field)
{
	return __atomic_load_n((const uint64_t *)(row + field), __ATOMIC_ACQUIRE);
}

/* Does every gate row of chunks [from, to) in rank r's heap show the round's arrival? */
static int arrived(const struct tplan_plan *p, uint32_t r, uint32_t from, uint32_t to)
{
	const uint8_t *row = gate_row(p, r, from);
	uint32_t g;

	for (g = from; g < to; g++, row += TPLAN_GATE_ROW_BYTES)
		if (row_load(row, TPLAN_GATE_ARRIVAL) < p->round)
			return 0;
	return 1;
}

/*
 * Has the round completed here, by the counts the kernel's wait checks:
 * this rank's chunks marked exactly writers times (the kernel wrote the
 * writers in each row) and arrived at every peer, every other chunk
 * arrived here?  0 when one is short, or over (the kernel's wait then
 * says EOVERFLOW and names it).  The rows are read heap by heap, in
 * order: every count only grows, so the order does not change the answer.
 */
static int round_complete(const struct tplan_plan *p)
{
	uint32_t me = p->rank, first = p->chunk_base[me], end = p->chunk_base[me + 1], g, r;
	const uint8_t *row = gate_row(p, me, first);
	uint64_t want;

	for (g = first; g < end; g++, row += TPLAN_GATE_ROW_BYTES) {
		want = __atomic_load_n((const uint32_t *)(row + TPLAN_GATE_EXPECTED),
				       __ATOMIC_RELAXED) * (uint64_t)p->round;
		if (row_load(row, TPLAN_GATE_WRITERS) != want)
			return 0;
	}
	for (r = 0; r < p->world_size; r++)
		if (r != me && !arrived(p, r, first, end))
			return 0;
	return arrived(p, me, 0, first) && arrived(p, me, end, p->total_chunks);
}

/* This rank read the round: its release word (after every chunk's row) rises to it. */
static void release_round(const struct tplan_plan *p, uint32_t round)
{
	tplan_release_word_max((uint64_t *)(gate_row(p, p->rank, p->total_chunks) +
					    TPLAN_GATE_RELEASED), round);
}

int tplan_plan_wait(struct tplan_plan *p, uint32_t timeout_ms)
{
	struct tplan_plan_wait w = {
		.size = sizeof(w),
		.plan_id = p->id,
		.timeout_ms = timeout_ms,
		.report = (uintptr_t)p->report,
		.report_cap = p->report ? p->report_cap : 0,
	};
	int ret;

	p->report_count = 0;
	if (ahead(p)) {
		if (!p->started)
			return tplan_set_error(p->ctx, -EBUSY, "plan wait: round %u not started",
					       p->round);
		if (round_complete(p)) {
			p->started = 0;
			p->done = 1;
			return 0;
		}
		/* To sleep, or for the report: the kernel's round catches up with ours. */
		w.flags = TPLAN_PLAN_WAIT_AT;
		w.round = p->round;
	}
	ret = tplan_ioctl(p->ctx, TPLAN_IOC_PLAN_WAIT, &w, "plan wait");
	p->report_count = w.report_count;
	if (!ret && ahead(p)) {
		p->started = 0;
		p->done = 1;
	}
	if (ret && w.report_count && (ret == -ETIMEDOUT || ret == -EOVERFLOW))
		return wait_error(p, ret, w.round);
	if (ret == -EIO && w.fault.reason)
		return fault_error(p, &w);
	return ret;
}

const struct tplan_plan_shortfall *tplan_plan_shortfall(const struct tplan_plan *p,
							uint32_t *count)
{
	uint32_t n = p->report_count < p->report_cap ? p->report_count : p->report_cap;

	if (count)
		*count = n;
	return n ? p->report : NULL;
}

static int tplan_plan_rearm(struct tplan_plan *p, uint32_t flags)
{
	struct tplan_plan_next_round nr = {
		.size = sizeof(nr), .plan_id = p->id, .timeout_ms = p->ctx->timeout_ms,
		.flags = flags,
	};
	int ret;

	if (ahead(p)) {
		if (!p->done)
			return tplan_set_error(p->ctx, -EBUSY,
					       "plan next_round: round %u is not complete (wait for it first)",
					       p->round);
		if (p->round < p->armed) {
			/* Queued already: the release is all there is to do. */
			if (!(flags & TPLAN_NEXT_ROUND_UNRELEASED))
				release_round(p, p->round);
			p->round++;
			p->done = 0;
			return 0;
		}
		/* Every armed round used: the kernel queues the next depth rounds. */
		nr.flags |= TPLAN_NEXT_ROUND_AT;
		nr.round = p->round;
	}
	ret = tplan_ioctl(p->ctx, TPLAN_IOC_PLAN_NEXT_ROUND, &nr, "plan next_round");
	if (!ret) {
		p->round = nr.round;
		p->armed = nr.armed;
		p->done = 0;
	}
	return ret;
}

int tplan_plan_next_round(struct tplan_plan *p)
{
	return tplan_plan_rearm(p, 0);
}

int tplan_plan_next_round_unreleased(struct tplan_plan *p)
{
	return tplan_plan_rearm(p, TPLAN_NEXT_ROUND_UNRELEASED);
}

int tplan_plan_state(const struct tplan_plan *p, uint32_t *state, uint32_t *round)
{
	struct tplan_plan_state st = { .size = sizeof(st), .plan_id = p->id };
	int ret;

	ret = tplan_ioctl(p->ctx, TPLAN_IOC_PLAN_STATE, &st, "plan state");
	if (ret)
		return ret;
	if (ahead(p) && (st.state == TPLAN_PLAN_PREPARED || st.state == TPLAN_PLAN_DONE)) {
		/* Rounds run in user space: the kernel's round may be behind ours. */
		st.state = p->done ? TPLAN_PLAN_DONE : TPLAN_PLAN_PREPARED;
		st.round = p->round;
	}
	if (state)
		*state = st.state;
	if (round)
		*round = st.round;
	return 0;
}

int tplan_plan_close(struct tplan_plan *p, uint32_t *state)
{
	struct tplan_plan_close cl = { .size = sizeof(cl) };
	int ret;

	if (!p)
		return 0;
	cl.timeout_ms = p->ctx->timeout_ms;
	cl.plan_id = p->id;
	ret = tplan_ioctl(p->ctx, TPLAN_IOC_PLAN_CLOSE, &cl, "plan close");
	if (state)
		*state = ret == -ENOENT ? TPLAN_PLAN_CLOSED : cl.state;
	plan_free(p);
	return ret;
}
