// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile raw operations on /dev/tplan, for the fuzzer's worker threads:
 *   - every ioctl number (and unknown ones) with its struct holding
 *     plausible and edge values; the argument at a good address, NULL,
 *     unmapped, in the kernel half, non-canonical, read-only, straddling
 *     a guard page, misaligned, or inside a mapped heap; its size exact,
 *     short, long with a zero or a set tail; embedded pointers the same
 *     way, and pointing at never-touched pages (the kernel faults them in
 *     while it holds the file's lock);
 *   - chains built with the packet codec, then bits flipped, submitted
 *     raw (and their gates opened, mostly); raw packets injected when
 *     allow_inject is on; puts and quiets with random ranges;
 *   - a world-1 group per thread walked through a plan's whole life with
 *     raw ioctls (create, prepare, start, marks through its heap, wait,
 *     next round, close), off the path now and then;
 *   - joins of random and colliding keys; mmaps with random offsets,
 *     lengths and protections, touched, mprotected, unmapped late; forks
 *     whose children use the inherited files (some as another user) and
 *     are killed at random moments.
 *
 * Files of "clean" groups (whose data is checked) only get calls that
 * cannot change what lands in their plan buffers: read-only ioctls,
 * puts into the upper (scratch) half of the heaps, and any ioctl whose
 * argument the shared contract refuses before it runs (EFAULT, EINVAL
 * for a short size, E2BIG for a set tail), with that answer checked.
 */
#define _GNU_SOURCE	/* setresuid */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "tplan_fuzz.h"
#include "tplan_sdma.h"
#include "tplan_chain.h"

#define PAGE		4096UL
#define ARG_MAX		256		/* the largest struct and a tail */
#define BUFS_MAX	8
#define MAPS_KEPT	3
#define KERNEL_PTR	0xffff888000000000ULL
#define NONCANON_PTR	0x0000800000000000ULL
/* Keys other workers use too: their joins meet, match or clash. */
#define COLLIDE_KEYS	4
#define COLLIDE_KEY(i)	(0xc011de0000000000ULL | (i))

/* A thread's own state: its argument arena, a private file, kept maps. */
struct fz_private {
	uint8_t *arena;		/* 2 pages read/write, then a guard page */
	uint8_t *ro;		/* a read-only page */
	struct fz_ctx *c;	/* its private file, shared with the worker */
	uint64_t devaddr[16];	/* of every rank's heap, from HEAP_INFO */
	uint8_t *map;		/* its own heap, mapped */
	uint64_t map_len;
	uint32_t ops;		/* calls left before it closes the file */
	/* the world-1 plan walk */
	uint32_t plan_id, nchunks, round, stage, writers[8];
	uint64_t gate_off;
	struct { void *p; size_t len; int fd; } kept[MAPS_KEPT];
};

/* One raw call being built. */
struct raw {
	struct fz_rng *r;
	int fd;
	int chaos;		/* side effects allowed */
	uint32_t rank, world;	/* world 0: not joined as far as we know */
	uint64_t heap_size;
	uint8_t *heap;		/* this rank's heap, mapped, or NULL */
	uint64_t scratch_off, scratch_len;
	const uint64_t *devaddr;	/* every rank's heap device address, or NULL */
	int wellformed;		/* mutated-valid: the argument mostly as meant */
	struct fz_private *pv;
	void *bufs[BUFS_MAX];
	size_t buflen[BUFS_MAX];
	int nbufs;
	char what[FZ_DESC];
};

static int in_child;	/* a fork child: no heap mappings, no library */

/* ---- values --------------------------------------------------------------------- */

static uint32_t v32(struct raw *x, uint64_t good)
{
	return (uint32_t)(fz_chance(x->r, 75) ? good : fz_edgy(x->r, good));
}

static uint64_t v64(struct raw *x, uint64_t good)
{
	return fz_chance(x->r, 75) ? good : fz_edgy(x->r, good);
}

/* A "must be 0" field or a flags word. */
static uint32_t zero(struct raw *x)
{
	return fz_chance(x->r, 92) ? 0 : (uint32_t)fz_edgy(x->r, 1);
}

static uint32_t timeout(struct raw *x)
{
	static const uint32_t t[] = { 1, 5, 20, 100, 300, 1000, 2000 };

	if (fz_chance(x->r, 4))
		return 0;	/* the module's 30 s */
	if (fz_chance(x->r, 1) && x->world <= 1)
		return 0xffffffff;
	return t[fz_below(x->r, sizeof(t) / sizeof(t[0]))];
}

static uint32_t peer(struct raw *x)
{
	if (x->world > 1 && fz_chance(x->r, 85))
		return (x->rank + 1 + (uint32_t)fz_below(x->r, x->world - 1)) % x->world;
	return v32(x, x->rank);
}

static uint32_t plan_id(struct raw *x)
{
	/* Plan ids count up from 1 in every group: small ones exist. */
	if (!x->chaos)
		return 0x10000 + (uint32_t)fz_below(x->r, 0x10000);	/* ENOENT */
	if (x->pv && x->pv->plan_id && fz_chance(x->r, 40))
		return x->pv->plan_id;
	return v32(x, 1 + fz_below(x->r, 8));
}

/*
 * A heap size for a join.  The module takes any heap the memory available
 * covers and holds it while the join waits: asking for hundreds of MiB
 * from many threads would only have the OOM killer end the run.
 */
static uint64_t heap_size(struct raw *x)
{
	uint64_t h = v64(x, PAGE << fz_below(x->r, 9));

	if (h > (64ULL << 20) && h <= TPLAN_HEAP_SIZE_MAX && !(h % PAGE))
		h = TPLAN_HEAP_SIZE_MAX;	/* more than the VM has: ENOMEM */
	return h;
}

/* An offset into this rank's heap for a hostile write: in scratch or out. */
static uint64_t offset(struct raw *x)
{
	if (x->scratch_len && fz_chance(x->r, 70))
		return x->scratch_off + fz_below(x->r, x->scratch_len);
	if (x->chaos)
		return v64(x, fz_below(x->r, x->heap_size + 1));
	return x->heap_size + fz_below(x->r, 1ULL << 40);	/* EINVAL */
}

/* ---- user memory ------------------------------------------------------------------- */

static void *buf_new(struct raw *x, size_t len)
{
	void *p;

	if (x->nbufs == BUFS_MAX)
		return NULL;
	/* a never-touched anonymous mapping now and then */
	if (len >= PAGE && fz_chance(x->r, 20)) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		x->buflen[x->nbufs] = len;
	} else {
		p = malloc(len ? len : 1);
		if (!p)
			return NULL;
		x->buflen[x->nbufs] = 0;
	}
	x->bufs[x->nbufs++] = p;
	return p;
}

static void bufs_free(struct raw *x)
{
	while (x->nbufs--) {
		if (x->buflen[x->nbufs])
			munmap(x->bufs[x->nbufs], x->buflen[x->nbufs]);
		else
			free(x->bufs[x->nbufs]);
	}
	x->nbufs = 0;
}

enum ptr_kind {
	PK_VALID, PK_NULL, PK_UNMAPPED, PK_KERNEL, PK_NONCANON, PK_READONLY, PK_FRESH,
	PK_HEAP, PK_MISALIGNED
};

static const char *const ptr_names[] = {
	"valid", "NULL", "unmapped", "kernel", "non-canonical", "read-only", "untouched",
	"in the heap", "misaligned",
};

/*
 * A user pointer to len bytes the kernel reads (content, may be NULL for
 * random bytes) or writes (out).  *kind says what it is.
 */
static uint64_t ptr(struct raw *x, size_t len, const void *content, int out, int *kindp)
{
	int kind = PK_VALID;
	uint64_t roll = fz_below(x->r, 100);
	uint8_t *p;
	size_t i;

	if (x->wellformed && roll < 95)
		roll = 0;
	if (roll >= 72)
		kind = 1 + (int)((roll - 72) * 8 / 28);
	if (kind == PK_HEAP && (in_child || !x->heap || x->scratch_len < len + 8))
		kind = PK_VALID;
	if (kind == PK_READONLY && len > PAGE)
		kind = PK_VALID;
	if (kind == PK_FRESH && content)
		kind = PK_VALID;	/* writing the content would touch it */
	if (kindp)
		*kindp = kind;
	if (kind != PK_VALID) {
		size_t at = strlen(x->what);

		snprintf(x->what + at, sizeof(x->what) - at, "%s%s pointer", at ? ", " : "",
			 ptr_names[kind]);
	}
	switch (kind) {
	case PK_NULL:
		return 0;
	case PK_UNMAPPED:
		return (uintptr_t)x->pv->arena + 2 * PAGE + fz_below(x->r, PAGE);
	case PK_KERNEL:
		return KERNEL_PTR + fz_below(x->r, 1ULL << 30);
	case PK_NONCANON:
		return NONCANON_PTR + fz_below(x->r, 1ULL << 40);
	case PK_READONLY:
		mprotect(x->pv->ro, PAGE, PROT_READ | PROT_WRITE);
		p = x->pv->ro + fz_below(x->r, PAGE - len + 1);
		if (content)
			memcpy(p, content, len);
		mprotect(x->pv->ro, PAGE, PROT_READ);
		return (uintptr_t)p;
	case PK_FRESH: {
		size_t maplen = (len + PAGE - 1) & ~(PAGE - 1);

		if (x->nbufs == BUFS_MAX)
			break;
		p = mmap(NULL, maplen ? maplen : PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		x->bufs[x->nbufs] = p;
		x->buflen[x->nbufs++] = maplen ? maplen : PAGE;
		return (uintptr_t)p;
	}
	case PK_HEAP:
		p = x->heap + x->scratch_off +
		    (fz_below(x->r, x->scratch_len - len - 7) & ~7ULL);
		if (content)
			memcpy(p, content, len);
		return (uintptr_t)p;
	default:
		break;
	}
	p = buf_new(x, len + 8);
	if (!p)
		return 0;
	if (kind == PK_MISALIGNED)
		p += 1 + fz_below(x->r, 7);
	if (content)
		memcpy(p, content, len);
	else if (!out)
		for (i = 0; i < len; i++)
			p[i] = (uint8_t)fz_rand(x->r);
	return (uintptr_t)p;
}

/* ---- chains --------------------------------------------------------------------- */

/*
 * Valid chains for the (rank -> to) queue built with the codec, gated on
 * words in this rank's scratch, copying scratch to the peer's scratch;
 * then 0..3 bits flipped.  Returns the dwords, 0 when there is no room.
 */
static uint32_t build_chains(struct raw *x, uint32_t to, uint32_t nchains,
			     struct tplan_chain_desc *d, uint32_t *dw, uint32_t room,
			     uint32_t *refs)
{
	uint64_t own = x->devaddr[x->rank], dst = x->devaddr[to];
	uint64_t data = x->scratch_off + 1024, data_len;
	uint32_t i, k, at = 0, flips;
	int n;

	if (x->scratch_len < 2048)
		return 0;
	data_len = x->scratch_len - 1024;
	for (i = 0; i < nchains; i++) {
		uint64_t ready = x->scratch_off + 128 + 8 * (i % 64);
		uint64_t arrival = x->scratch_off + 640 + 8 * (i % 48);
		struct tplan_sdma_poll_regmem poll = {
			.addr = own + ready, .mask = TPLAN_CHAIN_POLL_MASK,
			.func = TPLAN_CHAIN_POLL_FUNC, .mem_poll = 1,
			.interval = (uint32_t)fz_below(x->r, 100), .retry = TPLAN_CHAIN_POLL_RETRY,
		};
		struct tplan_sdma_atomic add = {
			.addr = dst + arrival, .src_data = 1, .atomic_op = TPLAN_SDMA_ATOMIC_ADD64,
		};
		uint32_t start = at, copies = 1 + (uint32_t)fz_below(x->r, 3);

		n = tplan_sdma_encode_poll_regmem(dw + at, room - at, &poll);
		if (n < 0)
			return 0;
		at += (uint32_t)n;
		for (k = 0; k < copies; k++) {
			uint64_t off = data + fz_below(x->r, data_len);
			uint64_t len = 1 + fz_below(x->r, data + data_len - off < 4096 ?
							    data + data_len - off : 4096);
			struct tplan_sdma_copy_linear cp = {
				.src = own + off, .dst = dst + off, .bytes = (uint32_t)len,
			};

			n = tplan_sdma_encode_copy_linear(dw + at, room - at, &cp);
			if (n < 0)
				return 0;
			at += (uint32_t)n;
		}
		n = tplan_sdma_encode_atomic(dw + at, room - at, &add);
		if (n < 0)
			return 0;
		at += (uint32_t)n;
		refs[i] = 1 + (uint32_t)fz_below(x->r, 3);
		d[i] = (struct tplan_chain_desc) {
			.ndw = at - start, .ref = refs[i], .ready_offset = ready,
			.arrival_offset = arrival,
		};
	}
	flips = fz_chance(x->r, x->wellformed ? 60 : 25) ? 0 : 1 + (uint32_t)fz_below(x->r, 3);
	for (k = 0; k < flips; k++) {
		if (fz_chance(x->r, 80)) {
			dw[fz_below(x->r, at)] ^= 1U << fz_below(x->r, 32);
		} else {
			uint32_t *w = (uint32_t *)&d[fz_below(x->r, nchains)];

			w[fz_below(x->r, sizeof(*d) / 4)] ^= 1U << fz_below(x->r, 32);
		}
	}
	return at;
}

/* Open the gates of chains that were queued: the engine sends them. */
static void open_gates(struct raw *x, const struct tplan_chain_desc *d, uint32_t n)
{
	uint32_t i;

	if (!x->heap || in_child)
		return;
	for (i = 0; i < n; i++)
		if (d[i].ready_offset >= x->scratch_off &&
		    d[i].ready_offset + 8 <= x->scratch_off + x->scratch_len)
			__atomic_store_n((uint64_t *)(x->heap + d[i].ready_offset),
					 (uint64_t)d[i].ref, __ATOMIC_RELEASE);
}

/* Raw packets for QUEUE_INJECT: valid ones, faulting ones, garbage. */
static uint32_t build_packets(struct raw *x, uint32_t to, uint32_t *dw, uint32_t room)
{
	uint64_t own = x->devaddr ? x->devaddr[x->rank] : 0;
	uint64_t dst = x->devaddr ? x->devaddr[to % 16] : 0;
	uint64_t s = x->scratch_off + 1024, slen = x->scratch_len > 2048 ? x->scratch_len - 1024 : 1;
	uint32_t at = 0, n = 1 + (uint32_t)fz_below(x->r, 6);
	int k;

	while (n-- && room - at >= 16) {
		union {
			struct tplan_sdma_nop nop;
			struct tplan_sdma_copy_linear cp;
			struct tplan_sdma_fence fence;
			struct tplan_sdma_trap trap;
			struct tplan_sdma_poll_regmem poll;
			struct tplan_sdma_atomic add;
		} u;

		memset(&u, 0, sizeof(u));
		switch (fz_below(x->r, 7)) {
		case 0:
			u.nop.dwords = 1 + (uint32_t)fz_below(x->r, 8);
			k = tplan_sdma_encode_nop(dw + at, room - at, &u.nop);
			break;
		case 1:
			u.cp.src = own + s + fz_below(x->r, slen);
			u.cp.dst = (fz_chance(x->r, 80) ? dst : own) + s + fz_below(x->r, slen);
			u.cp.bytes = 1 + (uint32_t)fz_below(x->r, 256);
			k = tplan_sdma_encode_copy_linear(dw + at, room - at, &u.cp);
			break;
		case 2:
			u.fence.addr = (own + s) & ~3ULL;
			u.fence.data = (uint32_t)fz_rand(x->r);
			k = tplan_sdma_encode_fence(dw + at, room - at, &u.fence);
			break;
		case 3:
			k = tplan_sdma_encode_trap(dw + at, room - at, &u.trap);
			break;
		case 4:
			/* A poll that gives up soon: the queue faults (POLL_TIMEOUT). */
			u.poll.addr = (own + s) & ~3ULL;
			u.poll.func = TPLAN_SDMA_FUNC_EQ;
			u.poll.mask = ~0U;
			u.poll.ref = (uint32_t)fz_rand(x->r);
			u.poll.mem_poll = 1;
			u.poll.retry = (uint32_t)fz_below(x->r, 16);
			k = tplan_sdma_encode_poll_regmem(dw + at, room - at, &u.poll);
			break;
		case 5:
			u.add.addr = (dst + s + fz_below(x->r, slen)) & ~(fz_chance(x->r, 90) ? 7ULL : 0);
			u.add.src_data = 1;
			u.add.atomic_op = fz_chance(x->r, 80) ? TPLAN_SDMA_ATOMIC_ADD64 :
							       (uint32_t)fz_below(x->r, 128);
			k = tplan_sdma_encode_atomic(dw + at, room - at, &u.add);
			break;
		default:
			for (k = 0; k < 4; k++)
				dw[at + k] = (uint32_t)fz_rand(x->r);
			break;
		}
		if (k > 0)
			at += (uint32_t)k;
	}
	return at;
}

/* ---- structs ---------------------------------------------------------------------- */

/*
 * Fill op's struct with plausible and edge values (s is zeroed, ARG_MAX
 * bytes).  Side effects after the call (gates to open) go to *post.
 */
struct post {
	struct tplan_chain_desc *descs;
	uint32_t ndescs;
};

static void fill(struct raw *x, int op, void *s, struct post *post)
{
	uint32_t world = x->world ? x->world : 1 + (uint32_t)fz_below(x->r, 4);
	int kind;

	switch (op + TPLAN_CMD_BASE) {
	case TPLAN_CMD_INFO: {
		struct tplan_info *a = s;

		a->flags = zero(x);
		a->__reserved = zero(x);
		break;
	}
	case TPLAN_CMD_GROUP_JOIN: {
		struct tplan_group_join *a = s;
		uint32_t i = (uint32_t)fz_below(x->r, COLLIDE_KEYS);

		a->flags = zero(x);
		a->heap_fd = (int32_t)zero(x);
		a->engine = v32(x, TPLAN_ENGINE_SOFT);
		a->sdma_ip = v32(x, fz_chance(x->r, 70) ? TPLAN_SDMA_440 : TPLAN_SDMA_442);
		a->timeout_ms = timeout(x);
		if (fz_chance(x->r, 30)) {
			/* colliding keys: the same parameters per key, so they may meet */
			a->key = COLLIDE_KEY(i);
			a->world_size = 2 + i % 2;
			a->rank = (uint32_t)fz_below(x->r, a->world_size);
			a->heap_size = 16 * PAGE;
		} else {
			a->key = fz_chance(x->r, 60) ? fz_rand(x->r) : v64(x, COLLIDE_KEY(i));
			a->world_size = fz_chance(x->r, 60) ? 1 : v32(x, 1 + fz_below(x->r, 16));
			a->rank = v32(x, fz_below(x->r, a->world_size ? a->world_size : 1));
			a->heap_size = heap_size(x);
		}
		a->heap_base = fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_GROUP_BARRIER: {
		struct tplan_group_barrier *a = s;

		a->flags = zero(x);
		a->__reserved = zero(x);
		a->timeout_ms = timeout(x);
		break;
	}
	case TPLAN_CMD_GROUP_ALL_GATHER: {
		struct tplan_group_all_gather *a = s;

		a->flags = zero(x);
		a->blob_size = v32(x, 1 + fz_below(x->r, TPLAN_ALL_GATHER_MAX));
		a->timeout_ms = timeout(x);
		a->in = ptr(x, a->blob_size <= TPLAN_ALL_GATHER_MAX ? a->blob_size : 64, NULL, 0,
			    &kind);
		/* written for the group's world size, whatever we think it is */
		a->out = ptr(x, (size_t)16 * (a->blob_size <= TPLAN_ALL_GATHER_MAX ?
					      a->blob_size : 64), NULL, 1, &kind);
		break;
	}
	case TPLAN_CMD_HEAP_INFO: {
		struct tplan_heap_info *a = s;

		a->rank = v32(x, fz_below(x->r, world));
		a->heap_base = fz_rand(x->r);
		a->gate_area_offset = fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_PUT: {
		struct tplan_put *a = s;

		a->flags = fz_chance(x->r, 30) ? TPLAN_PUT_SIGNAL : zero(x);
		a->peer = peer(x);
		a->__reserved = zero(x);
		a->src_offset = offset(x);
		a->dst_offset = fz_chance(x->r, 60) ? a->src_offset : offset(x);
		a->length = fz_chance(x->r, 80) ?
			    1 + fz_below(x->r, x->scratch_len ? x->scratch_len : 4096) :
			    fz_edgy(x->r, x->heap_size);
		if (!x->chaos && x->scratch_len) {
			/* clean: within the scratch half, or refused */
			uint64_t end = x->scratch_off + x->scratch_len;

			if (a->src_offset < end && a->length > end - a->src_offset)
				a->length = end - a->src_offset;
			if (a->dst_offset < end && a->length > end - a->dst_offset)
				a->length = end - a->dst_offset;
		}
		a->signal_offset = a->flags & TPLAN_PUT_SIGNAL ? offset(x) & ~7ULL : zero(x);
		break;
	}
	case TPLAN_CMD_QUIET: {
		struct tplan_quiet *a = s;

		a->peer = peer(x);
		a->timeout_ms = timeout(x);
		a->flags = zero(x);
		break;
	}
	case TPLAN_CMD_QUEUE_INFO: {
		struct tplan_queue_info *a = s;

		a->peer = peer(x);
		a->rptr = fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_QUEUE_INJECT: {
		struct tplan_queue_inject *a = s;
		uint32_t dw[1100];

		a->peer = peer(x);
		a->flags = zero(x);
		a->ndw = build_packets(x, a->peer, dw, 1024);
		if (fz_chance(x->r, 10))
			a->ndw = (uint32_t)fz_edgy(x->r, 1024);
		a->dwords = ptr(x, (a->ndw <= 1024 ? a->ndw : 1024) * 4, dw, 0, &kind);
		break;
	}
	case TPLAN_CMD_CHAIN_SUBMIT: {
		struct tplan_chain_submit *a = s;
		uint32_t n = fz_chance(x->r, 10) ? 100 + (uint32_t)fz_below(x->r, 2000) :
						   1 + (uint32_t)fz_below(x->r, 8);
		uint32_t room = n * 40 + 16, *dw = malloc(room * 4), *refs = malloc(n * 4);
		struct tplan_chain_desc *d = calloc(n, sizeof(*d));

		a->flags = zero(x);
		a->__reserved = zero(x);
		a->peer = peer(x);
		a->nchains = n;
		if (dw && d && refs && x->devaddr && a->peer < x->world && a->peer != x->rank)
			a->ndw = build_chains(x, a->peer, n, d, dw, room, refs);
		if (fz_chance(x->r, 5))
			a->nchains = (uint32_t)fz_edgy(x->r, TPLAN_CHAIN_SUBMIT_MAX);
		if (fz_chance(x->r, 5))
			a->ndw = (uint32_t)fz_edgy(x->r, a->ndw);
		a->chains = ptr(x, (size_t)n * sizeof(*d), d, 0, &kind);
		a->dwords = ptr(x, (size_t)(a->ndw <= room ? a->ndw : room) * 4, dw, 0, &kind);
		memset(&a->reject, 0xa5, sizeof(a->reject));
		/* the descriptors as they were sent, to open their gates after */
		post->descs = d;
		post->ndescs = n;
		free(dw);
		free(refs);
		break;
	}
	case TPLAN_CMD_PLAN_CREATE: {
		struct tplan_plan_create *a = s;
		uint64_t half = x->heap_size / 2;

		a->flags = zero(x);
		/* Mostly one round at a time; some armed ahead, some past the limit. */
		a->depth = fz_chance(x->r, 70) ? 0 : v32(x, 1 + fz_below(x->r, 8));
		a->buffer_offset = v64(x, fz_below(x->r, half / 2));
		a->buffer_bytes = v64(x, 1 + fz_below(x->r, half / 2 + 1));
		a->own_offset = v64(x, a->buffer_offset + a->buffer_bytes / world * x->rank);
		a->own_bytes = v64(x, a->buffer_bytes / world);
		a->nchunks = v32(x, fz_below(x->r, 9));
		a->timeout_ms = timeout(x);
		a->chunk_base = ptr(x, (16 + 1) * 4, NULL, 1, &kind);
		a->plan_id = (uint32_t)fz_rand(x->r);
		a->gate_offset = fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_PLAN_PREPARE: {
		struct tplan_plan_prepare *a = s;
		uint32_t writers[64], i;

		for (i = 0; i < 64; i++)
			writers[i] = v32(x, 1 + fz_below(x->r, 3));
		a->plan_id = plan_id(x);
		a->nchains = v32(x, (world - 1) * fz_below(x->r, 4));
		a->ndw = v32(x, a->nchains * (fz_below(x->r, 30)));
		/* huge chain images are kept until close: private files only */
		if (a->ndw > (1U << 20) && !(x->pv && x->pv->c && x->fd == x->pv->c->fd))
			a->ndw = 1U << 20;
		a->chains = ptr(x, (a->nchains < 4096 ? a->nchains : 4096) * 16, NULL, 0, &kind);
		a->dwords = ptr(x, (a->ndw < 65536 ? a->ndw : 65536) * 4, NULL, 0, &kind);
		a->writers = ptr(x, sizeof(writers), writers, 0, &kind);
		a->timeout_ms = timeout(x);
		a->flags = zero(x);
		memset(&a->reject, 0x5a, sizeof(a->reject));
		break;
	}
	case TPLAN_CMD_PLAN_START: {
		struct tplan_plan_start *a = s;

		a->plan_id = plan_id(x);
		a->round = (uint32_t)fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_PLAN_WAIT: {
		struct tplan_plan_wait *a = s;

		a->plan_id = plan_id(x);
		a->timeout_ms = timeout(x);
		a->flags = fz_chance(x->r, 20) ? TPLAN_PLAN_WAIT_AT : zero(x);
		a->round = v32(x, 1 + fz_below(x->r, 12));
		a->report_cap = v32(x, fz_below(x->r, 64));
		a->report = ptr(x, (a->report_cap < 4096 ? a->report_cap : 4096) *
				   sizeof(struct tplan_plan_shortfall), NULL, 1, &kind);
		a->report_count = (uint32_t)fz_rand(x->r);
		a->__reserved = zero(x);
		break;
	}
	case TPLAN_CMD_PLAN_NEXT_ROUND: {
		struct tplan_plan_next_round *a = s;

		a->plan_id = plan_id(x);
		a->timeout_ms = timeout(x);
		a->flags = fz_chance(x->r, 4) ? TPLAN_NEXT_ROUND_UNRELEASED : zero(x);
		if (fz_chance(x->r, 20))
			a->flags |= TPLAN_NEXT_ROUND_AT;
		a->round = v32(x, 1 + fz_below(x->r, 12));
		a->__reserved = zero(x);
		a->__reserved2 = zero(x);
		break;
	}
	case TPLAN_CMD_PLAN_CLOSE: {
		struct tplan_plan_close *a = s;

		a->plan_id = plan_id(x);
		a->timeout_ms = timeout(x);
		break;
	}
	case TPLAN_CMD_PLAN_STATE: {
		struct tplan_plan_state *a = s;

		a->plan_id = plan_id(x);
		break;
	}
	/* The KFD engine's calls: a soft group refuses them (EOPNOTSUPP) after the checks. */
	case TPLAN_CMD_HEAP_EXPORT: {
		struct tplan_heap_export *a = s;

		a->rank = v32(x, fz_below(x->r, world));
		a->flags = zero(x);
		a->fd = (int32_t)fz_rand(x->r);
		break;
	}
	case TPLAN_CMD_ADDR_MAP: {
		struct tplan_addr_map_set *a = s;
		uint64_t dev[16];
		uint32_t r;

		for (r = 0; r < 16; r++)
			dev[r] = fz_chance(x->r, 80) ? (uint64_t)(r + 1) << 36 : fz_rand(x->r);
		a->flags = zero(x);
		a->count = v32(x, world);
		a->__reserved = zero(x);
		a->heap_dev = ptr(x, sizeof(dev), dev, 0, &kind);
		break;
	}
	case TPLAN_CMD_QUEUE_ATTACH_KFD: {
		struct tplan_queue_attach_kfd *a = s;

		a->flags = zero(x);
		a->peer = v32(x, fz_below(x->r, world));
		a->kfd_fd = (int32_t)v32(x, fz_below(x->r, 8));
		a->ring_addr = fz_rand(x->r) & ~4095ULL;
		a->ptr_addr = fz_rand(x->r) & ~4095ULL;
		a->doorbell_addr = fz_rand(x->r);
		a->gpu_id = (uint32_t)fz_rand(x->r);
		a->queue_id = (uint32_t)fz_rand(x->r);
		break;
	}
	}
}

/* What a clean group's file may get whatever its arguments. */
static int harmless(int op)
{
	switch (op + TPLAN_CMD_BASE) {
	case TPLAN_CMD_INFO:
	case TPLAN_CMD_GROUP_JOIN:	/* EALREADY: it is joined */
	case TPLAN_CMD_HEAP_INFO:
	case TPLAN_CMD_PUT:		/* scratch only (fill) */
	case TPLAN_CMD_QUIET:
	case TPLAN_CMD_QUEUE_INFO:
	case TPLAN_CMD_PLAN_START:	/* plan ids that do not exist (plan_id) */
	case TPLAN_CMD_PLAN_WAIT:
	case TPLAN_CMD_PLAN_NEXT_ROUND:
	case TPLAN_CMD_PLAN_CLOSE:
	case TPLAN_CMD_PLAN_STATE:
	case TPLAN_CMD_HEAP_EXPORT:	/* EOPNOTSUPP: a soft group */
	case TPLAN_CMD_ADDR_MAP:
	case TPLAN_CMD_QUEUE_ATTACH_KFD:
		return 1;
	}
	return 0;
}

/* An ioctl number the module does not have (and the VFS does not take). */
static unsigned long unknown_req(struct raw *x)
{
	uint32_t nr = TPLAN_CMD_BASE + (uint32_t)fz_below(x->r, FZ_NCMD);
	uint32_t size = 1 + (uint32_t)fz_below(x->r, _IOC_SIZEMASK);

	switch (fz_below(x->r, 4)) {
	case 0:
		return _IO(TPLAN_TYPE, fz_below(x->r, TPLAN_CMD_BASE));
	case 1:
		return _IO(TPLAN_TYPE, TPLAN_CMD_LAST + fz_below(x->r, 256 - TPLAN_CMD_LAST));
	case 2:
		/* a real command with direction and size bits: not the same number */
		return _IOC(1 + fz_below(x->r, 3), TPLAN_TYPE, nr, fz_below(x->r, 256));
	default:
		return _IOC(fz_below(x->r, 4), TPLAN_TYPE, nr, size);
	}
}

enum arg_kind {
	AK_NORMAL, AK_NULL, AK_UNMAPPED, AK_KERNEL, AK_NONCANON, AK_STRADDLE, AK_READONLY,
	AK_HEAP, AK_MISALIGNED, AK_SHORT, AK_LONG_ZERO, AK_LONG_SET, AK_LONG_FAULT,
	AK_COUNT
};

static const char *const arg_names[] = {
	"normal", "NULL", "unmapped", "kernel address", "non-canonical", "across a guard page",
	"read-only", "in the heap", "misaligned", "short size", "long size, zero tail",
	"long size, set tail", "huge size, zero tail up to a guard page",
};

/* Refused before anything runs, with one answer. */
static int refused_early(int ak)
{
	return ak == AK_NULL || ak == AK_UNMAPPED || ak == AK_KERNEL || ak == AK_NONCANON ||
	       ak == AK_STRADDLE || ak == AK_SHORT || ak == AK_LONG_SET || ak == AK_LONG_FAULT;
}

static int pick_arg(struct raw *x, int op)
{
	static const uint8_t early[] = {
		AK_NULL, AK_UNMAPPED, AK_KERNEL, AK_NONCANON, AK_STRADDLE, AK_SHORT, AK_LONG_SET,
		AK_LONG_FAULT,
	};
	uint64_t roll = fz_below(x->r, 100);
	int ak;

	if (op < FZ_NCMD && !x->chaos && !harmless(op))
		return early[fz_below(x->r, sizeof(early))];
	if (roll < 64 || (x->wellformed && roll < 95))
		return AK_NORMAL;
	ak = 1 + (int)((roll - 64) * (AK_COUNT - 1) / 36);
	if (ak == AK_READONLY && !x->chaos)
		ak = AK_NORMAL;	/* runs, then fails to answer: side effects */
	if (ak == AK_HEAP && (in_child || !x->heap || x->scratch_len < ARG_MAX + 8))
		ak = AK_NORMAL;
	return ak;
}

/* One raw ioctl of statistics row op on x->fd. */
static void raw_ioctl(struct raw *x, int op)
{
	uint8_t s[ARG_MAX];
	struct post post = { 0 };
	struct fz_call call = { 0 };
	uint8_t *arena = x->pv->arena, *a = NULL;
	uint32_t full, size, min, k;
	unsigned long req;
	char desc[FZ_DESC + 160];
	int ak, ret, n;
	size_t at, long_at = 0;

	memset(s, 0, sizeof(s));
	x->what[0] = 0;
	if (op == FZ_CMD_UNKNOWN) {
		req = unknown_req(x);
		full = min = 16 + 8 * (uint32_t)fz_below(x->r, 8);
		for (k = 4; k < full; k++)
			s[k] = (uint8_t)fz_rand(x->r);
	} else {
		req = fz_cmds[op].req;
		full = fz_cmds[op].size;
		min = fz_cmds[op].min_size;
		fill(x, op, s, &post);
	}
	ak = pick_arg(x, op);
	size = full;
	switch (ak) {
	case AK_SHORT:
		size = (uint32_t)fz_below(x->r, min);
		break;
	case AK_LONG_ZERO:
	case AK_LONG_SET:
		size = full + 1 + (uint32_t)fz_below(x->r, 64);
		if (ak == AK_LONG_SET)
			s[full + fz_below(x->r, size - full)] = 1 + (uint8_t)fz_below(x->r, 255);
		break;
	case AK_LONG_FAULT:
		/* over a page (E2BIG unread), or running into the guard page below it */
		long_at = 2 * PAGE - full - fz_below(x->r, PAGE - full - 64);
		size = fz_chance(x->r, 50) ? (fz_chance(x->r, 50) ? 0xffffffff : full + (uint32_t)PAGE * 3) :
					    (uint32_t)(2 * PAGE - long_at) + 8;
		break;
	case AK_NORMAL:
	case AK_MISALIGNED:
		if (min < full && fz_chance(x->r, 20))
			size = min + (uint32_t)fz_below(x->r, full - min);
		break;
	}
	memcpy(s, &size, sizeof(size));
	if (op < FZ_NCMD && fz_cmds[op].timeout_off >= 0) {
		memcpy(&call.timeout_ms, s + fz_cmds[op].timeout_off, 4);
		/* the timeout counts only if the struct reaches the module whole */
		call.has_timeout = size >= full && !refused_early(ak);
	}

	/* Where the argument lives. */
	switch (ak) {
	case AK_NULL:
		a = NULL;
		break;
	case AK_UNMAPPED:
		a = arena + 2 * PAGE + fz_below(x->r, PAGE - 8);
		break;
	case AK_KERNEL:
		a = (uint8_t *)(uintptr_t)(KERNEL_PTR + fz_below(x->r, 1ULL << 30));
		break;
	case AK_NONCANON:
		a = (uint8_t *)(uintptr_t)(NONCANON_PTR + fz_below(x->r, 1ULL << 40));
		break;
	case AK_STRADDLE:
		/* the size word readable, the rest in the guard page */
		a = arena + 2 * PAGE - 4;
		memcpy(a, s, 4);
		break;
	case AK_READONLY:
		mprotect(x->pv->ro, PAGE, PROT_READ | PROT_WRITE);
		a = x->pv->ro + PAGE - ARG_MAX;
		memcpy(a, s, ARG_MAX);
		mprotect(x->pv->ro, PAGE, PROT_READ);
		break;
	case AK_HEAP:
		a = x->heap + x->scratch_off +
		    (fz_below(x->r, x->scratch_len - ARG_MAX - 8) & ~7ULL);
		memcpy(a, s, ARG_MAX);
		break;
	case AK_LONG_FAULT:
		/* zeros after the struct until the guard page */
		at = long_at;
		a = arena + at;
		memset(arena, 0, 2 * PAGE);
		memcpy(a, s, full);
		break;
	default:
		a = arena + (ak == AK_MISALIGNED ? 1 + fz_below(x->r, 7) : 0);
		memcpy(a, s, ARG_MAX);
		break;
	}

	/* The shared contract's fixed answers. */
	if (op == FZ_CMD_UNKNOWN) {
		call.expect = ENOTTY;
		call.expect_why = "an unknown number";
	} else if (ak == AK_NULL || ak == AK_UNMAPPED || ak == AK_KERNEL || ak == AK_NONCANON) {
		call.expect = EFAULT;
		call.expect_why = "an argument pointer that is not user memory";
	} else if (ak == AK_SHORT || (ak == AK_STRADDLE && size < min)) {
		call.expect = EINVAL;
		call.expect_why = "a size below the struct's first version";
	} else if (ak == AK_LONG_FAULT && size > PAGE) {
		call.expect = E2BIG;
		call.expect_why = "a size over a page";
	} else if (ak == AK_STRADDLE || ak == AK_LONG_FAULT) {
		call.expect = EFAULT;
		call.expect_why = "a struct that runs into an unmapped page";
	} else if (ak == AK_LONG_SET) {
		call.expect = E2BIG;
		call.expect_why = "a size past the struct with a non-zero tail";
	}

	n = snprintf(desc, sizeof(desc), "raw %s (%#lx) on fd %d [%s%s rank %u/%u]: arg %s, size %u%s%s",
		     fz_op_name(op), req, x->fd, x->world ? "joined" : "not joined",
		     x->chaos ? ", chaos" : "", x->rank, x->world, arg_names[ak], size,
		     x->what[0] ? ", " : "", x->what);
	for (k = 4; k < full && k < 48 && n < (int)sizeof(desc) - 12; k += 4)
		n += snprintf(desc + n, sizeof(desc) - n, "%s%08x", k == 4 ? " {" : " ",
			      *(uint32_t *)(s + k));
	if (n < (int)sizeof(desc) - 2)
		snprintf(desc + n, sizeof(desc) - n, "}");
	call.desc = desc;

	ret = fz_ioctl(x->fd, req, a, &call);
	if (!ret && op + TPLAN_CMD_BASE == TPLAN_CMD_CHAIN_SUBMIT) {
		fz_count(FZ_M_SUBMITS);
		/* most gates open at once; the rest hold the queue for a while */
		if (fz_chance(x->r, 80))
			open_gates(x, post.descs, post.ndescs);
	}
	if (!ret && op + TPLAN_CMD_BASE == TPLAN_CMD_QUEUE_INJECT)
		fz_count(FZ_M_INJECTS);
	free(post.descs);
	bufs_free(x);
}

/* The struct sizes around the shared contract's edges, without running. */
static void size_sweep(struct raw *x)
{
	int op = (int)fz_below(x->r, FZ_NCMD), i;
	uint32_t full = fz_cmds[op].size, min = fz_cmds[op].min_size, size;
	uint8_t *a = x->pv->arena;
	struct fz_call call = { 0 };
	char desc[FZ_DESC];

	for (i = 0; i < 4; i++) {
		memset(a, 0, 2 * PAGE);
		if (i % 2 == 0) {
			size = (uint32_t)fz_below(x->r, min);
			call.expect = EINVAL;
			call.expect_why = "a size below the struct's first version";
		} else {
			size = full + 1 + (uint32_t)fz_below(x->r, 256);
			a[full + fz_below(x->r, size - full)] = 0x80;
			call.expect = E2BIG;
			call.expect_why = "a size past the struct with a non-zero tail";
		}
		memcpy(a, &size, 4);
		snprintf(desc, sizeof(desc), "size sweep: %s on fd %d, size %u (struct %u)",
			 fz_cmds[op].name, x->fd, size, full);
		call.desc = desc;
		fz_ioctl(x->fd, fz_cmds[op].req, a, &call);
	}
}

/* ---- the thread's private file ------------------------------------------------------ */

static void private_drop(struct fz_private *pv)
{
	if (!pv->c)
		return;
	/* Only this thread uses the mapping; the file may live on a while. */
	if (pv->map) {
		fz_what("private: unmap its heap");
		munmap(pv->map, pv->map_len);
		pv->map = NULL;
	}
	pv->c->closing = 1;
	fz_ctx_put(pv->c);
	pv->c = NULL;
	pv->plan_id = 0;
	pv->stage = 0;
}

/* A fresh file, joined (world 1, colliding keys, or random) or not. */
static void private_open(struct fz_thread *t, struct fz_private *pv)
{
	struct tplan_group_join j;
	struct fz_call call = { .has_timeout = 1 };
	char desc[FZ_DESC];
	uint32_t r;
	int fd, ret;

	fd = open(TPLAN_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fz_fail(FZ_F_SETUP, -1, errno, "open %s: %s", TPLAN_DEVICE_PATH, strerror(errno));
		fz_sleep_ms(100);
		return;
	}
	fz_file_new(fd);
	pv->c = fz_ctx_add(NULL, fd, 1, -1);
	if (!pv->c) {
		fz_close(fd);
		return;
	}
	pv->ops = 5 + (uint32_t)fz_below(&t->rng, 60);
	pv->map = NULL;
	if (fz_chance(&t->rng, 20))
		return;		/* not joined: ENOTCONN for most calls */

	memset(&j, 0, sizeof(j));
	j.size = sizeof(j);
	j.engine = TPLAN_ENGINE_SOFT;
	j.sdma_ip = fz_chance(&t->rng, 70) ? TPLAN_SDMA_440 : TPLAN_SDMA_442;
	if (fz_chance(&t->rng, 75)) {
		/* a group of one: every collective completes, plans run */
		j.key = fz_rand(&t->rng) | 1ULL << 63;
		j.world_size = 1;
		j.heap_size = PAGE << (2 + fz_below(&t->rng, 7));
		j.timeout_ms = 1000;
	} else {
		r = (uint32_t)fz_below(&t->rng, COLLIDE_KEYS);
		j.key = COLLIDE_KEY(r);
		j.world_size = 2 + r % 2;
		j.rank = (uint32_t)fz_below(&t->rng, j.world_size);
		j.heap_size = 16 * PAGE;
		j.timeout_ms = 200 + (uint32_t)fz_below(&t->rng, 3000);
	}
	call.timeout_ms = j.timeout_ms;
	snprintf(desc, sizeof(desc), "private join: key %#llx rank %u/%u heap %llu",
		 (unsigned long long)j.key, j.rank, j.world_size, (unsigned long long)j.heap_size);
	call.desc = desc;
	ret = fz_ioctl(fd, TPLAN_IOC_GROUP_JOIN, &j, &call);
	if (ret)
		return;
	pv->c->rank = j.rank;
	pv->c->world = j.world_size;
	pv->c->heap_size = j.heap_size;
	pv->c->scratch_off = j.heap_size / 2;
	for (r = 0; r < j.world_size; r++) {
		struct tplan_heap_info hi = { .size = sizeof(hi), .rank = r };

		call = (struct fz_call) { .desc = "private: heap info after the join" };
		if (fz_ioctl(fd, TPLAN_IOC_HEAP_INFO, &hi, &call))
			return;
		pv->devaddr[r] = hi.heap_base;
		if (r == j.rank) {
			pv->c->scratch_len = hi.gate_area_offset > pv->c->scratch_off ?
					     hi.gate_area_offset - pv->c->scratch_off : 0;
			pv->map = fz_mmap(NULL, j.heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					  (off_t)hi.mmap_offset, "private: map its heap");
			if (pv->map == MAP_FAILED) {
				fz_fail(FZ_F_MMAP, FZ_OP_MMAP, errno,
					"mapping a joined file's own heap as HEAP_INFO says (shared, read/write, %llu bytes at offset %#llx) failed: %s",
					(unsigned long long)j.heap_size,
					(unsigned long long)hi.mmap_offset, strerror(errno));
				pv->map = NULL;
			} else {
				pv->map_len = j.heap_size;
			}
		}
	}
}

/*
 * A world-1 group's plan, one raw step at a time: create, prepare, start,
 * mark through the heap, wait, next round, close; now and then a field
 * off or a step out of order.
 */
static void private_plan_step(struct raw *x)
{
	struct fz_private *pv = x->pv;
	uint64_t area = x->scratch_off, row;
	struct fz_call call = { .has_timeout = 1 };
	char desc[FZ_DESC];
	uint32_t i, bad = fz_chance(x->r, 5);
	int ret;

	if (bad)
		fz_count(FZ_M_MUTATIONS);
	switch (pv->stage) {
	case 0: {
		uint32_t base[2] = { 0 };
		struct tplan_plan_create c = {
			.size = sizeof(c), .buffer_offset = 0, .buffer_bytes = area / 2,
			.own_offset = 0, .own_bytes = area / 2,
			.nchunks = 1 + (uint32_t)fz_below(x->r, 8), .timeout_ms = 2000,
			.chunk_base = (uintptr_t)base,
		};

		if (bad)
			c.own_bytes = v64(x, area);
		snprintf(desc, sizeof(desc), "private plan: create %u chunks", c.nchunks);
		call.desc = desc;
		call.timeout_ms = c.timeout_ms;
		ret = fz_ioctl(x->fd, TPLAN_IOC_PLAN_CREATE, &c, &call);
		if (!ret) {
			pv->plan_id = c.plan_id;
			pv->nchunks = c.nchunks;
			pv->gate_off = c.gate_offset;
			pv->stage = 1;
		}
		return;
	}
	case 1: {
		struct tplan_plan_prepare p = {
			.size = sizeof(p), .plan_id = pv->plan_id, .writers = (uintptr_t)pv->writers,
			.timeout_ms = 2000,
		};

		for (i = 0; i < 8; i++)
			pv->writers[i] = 1 + (uint32_t)fz_below(x->r, 3);
		if (bad)
			pv->writers[fz_below(x->r, pv->nchunks)] = 0;
		snprintf(desc, sizeof(desc), "private plan %u: prepare", pv->plan_id);
		call.desc = desc;
		call.timeout_ms = p.timeout_ms;
		ret = fz_ioctl(x->fd, TPLAN_IOC_PLAN_PREPARE, &p, &call);
		pv->stage = ret ? 6 : 2;
		pv->round = 1;
		return;
	}
	case 2: {
		struct tplan_plan_start st = { .size = sizeof(st), .plan_id = pv->plan_id };

		snprintf(desc, sizeof(desc), "private plan %u: start round %u", pv->plan_id,
			 pv->round);
		call = (struct fz_call) { .desc = desc };
		ret = fz_ioctl(x->fd, TPLAN_IOC_PLAN_START, &st, &call);
		if (!ret && pv->map && !in_child) {
			/* mark every chunk writers times (one too many now and then) */
			for (i = 0; i < st.nchunks && i < 8; i++) {
				uint8_t *g = pv->map + st.gate_offset +
					     (uint64_t)(st.first_chunk + i) * TPLAN_GATE_ROW_BYTES;
				uint32_t w = pv->writers[i] + (bad && i == 0);

				row = __atomic_add_fetch((uint64_t *)(g + TPLAN_GATE_WRITERS), w,
							 __ATOMIC_ACQ_REL);
				__atomic_store_n((uint64_t *)(g + TPLAN_GATE_READY),
						 (uint64_t)st.round, __ATOMIC_RELEASE);
				(void)row;
			}
		}
		pv->stage = ret ? 6 : 3;
		return;
	}
	case 3: {
		struct tplan_plan_shortfall rep[4];
		struct tplan_plan_wait w = {
			.size = sizeof(w), .plan_id = pv->plan_id, .timeout_ms = 1000,
			.report = (uintptr_t)rep, .report_cap = 4,
		};

		snprintf(desc, sizeof(desc), "private plan %u: wait round %u", pv->plan_id,
			 pv->round);
		call.desc = desc;
		call.timeout_ms = w.timeout_ms;
		ret = fz_ioctl(x->fd, TPLAN_IOC_PLAN_WAIT, &w, &call);
		pv->stage = ret == -EINTR ? 3 : ret ? 6 : 4;
		return;
	}
	case 4: {
		struct tplan_plan_next_round n = {
			.size = sizeof(n), .plan_id = pv->plan_id, .timeout_ms = 2000,
		};

		snprintf(desc, sizeof(desc), "private plan %u: next round after %u", pv->plan_id,
			 pv->round);
		call.desc = desc;
		call.timeout_ms = n.timeout_ms;
		ret = fz_ioctl(x->fd, TPLAN_IOC_PLAN_NEXT_ROUND, &n, &call);
		pv->round++;
		pv->stage = ret ? 6 : fz_chance(x->r, 30) ? 6 : 2;
		return;
	}
	default: {
		struct tplan_plan_close cl = {
			.size = sizeof(cl), .plan_id = pv->plan_id, .timeout_ms = 2000,
		};

		snprintf(desc, sizeof(desc), "private plan %u: close in round %u", pv->plan_id,
			 pv->round);
		call.desc = desc;
		call.timeout_ms = cl.timeout_ms;
		fz_ioctl(x->fd, TPLAN_IOC_PLAN_CLOSE, &cl, &call);
		pv->stage = 0;
		pv->plan_id = 0;
		return;
	}
	}
}

/* ---- mmap, fork -------------------------------------------------------------------- */

static void kept_unmap(struct fz_private *pv, int i)
{
	char desc[64];

	if (!pv->kept[i].p)
		return;
	snprintf(desc, sizeof(desc), "munmap of a kept mapping of fd %d", pv->kept[i].fd);
	fz_what("%s", desc);
	munmap(pv->kept[i].p, pv->kept[i].len);
	pv->kept[i].p = NULL;
}

static void raw_mmap(struct raw *x)
{
	static const int prots[] = {
		PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE, PROT_READ,
		PROT_WRITE, PROT_NONE, PROT_EXEC, PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	uint32_t rank = x->world ? (uint32_t)fz_below(x->r, x->world + 1) :
				   (uint32_t)fz_below(x->r, 3);
	uint64_t pages = x->heap_size / PAGE, in = 0, len = x->heap_size;
	int prot = prots[fz_below(x->r, sizeof(prots) / sizeof(prots[0]))];
	int flags = fz_chance(x->r, 85) ? MAP_SHARED : MAP_PRIVATE, documented;
	char desc[FZ_DESC];
	uint8_t *p;
	off_t off;
	uint64_t i;

	if (fz_chance(x->r, 40))
		in = PAGE * fz_below(x->r, pages + 2);
	if (fz_chance(x->r, 50))
		len = PAGE * (1 + fz_below(x->r, pages + 1));
	if (fz_chance(x->r, 8))
		len = fz_edgy(x->r, x->heap_size);
	if (fz_chance(x->r, 20))
		flags |= MAP_POPULATE;
	off = (off_t)(((uint64_t)rank << 40) + in);
	if (fz_chance(x->r, 5))
		off = (off_t)(fz_rand(x->r) & ~(PAGE - 1) & 0x7fffffffffffffffULL);
	/* what uapi/tplan.h promises: a joined file maps any rank's heap whole */
	documented = x->world && rank < x->world && !in && off == (off_t)((uint64_t)rank << 40) &&
		     len == x->heap_size && (flags & MAP_SHARED) &&
		     !(prot & ~(PROT_READ | PROT_WRITE));
	snprintf(desc, sizeof(desc),
		 "mmap of fd %d [rank %u/%u]: offset %#llx, %llu bytes, prot %#x, flags %#x",
		 x->fd, x->rank, x->world, (unsigned long long)off, (unsigned long long)len, prot,
		 flags);
	p = fz_mmap(NULL, len, prot, flags, x->fd, off, desc);
	if (p == MAP_FAILED) {
		if (documented && errno != ENOMEM)
			fz_fail(FZ_F_MMAP, FZ_OP_MMAP, errno, "%s failed: %s", desc, strerror(errno));
		return;
	}
	/* Touch it: reads anywhere, writes in the scratch half only. */
	if (prot & PROT_READ)
		for (i = 0; i < 4; i++)
			(void)*(volatile uint8_t *)(p + fz_below(x->r, len));
	if (prot & PROT_WRITE && x->scratch_len && in <= x->scratch_off) {
		uint64_t lo = x->scratch_off - in, hi = lo + x->scratch_len;

		if (hi > len)
			hi = len;
		for (i = 0; lo < hi && i < 4; i++)
			p[lo + fz_below(x->r, hi - lo)] = (uint8_t)fz_rand(x->r);
	}
	if (fz_chance(x->r, 20))
		mprotect(p, len, prots[fz_below(x->r, sizeof(prots) / sizeof(prots[0]))]);
	/* Keep some: a mapping holds the file after its fd is closed. */
	if (fz_chance(x->r, 40)) {
		int k = (int)fz_below(x->r, MAPS_KEPT);

		kept_unmap(x->pv, k);
		x->pv->kept[k].p = p;
		x->pv->kept[k].len = len;
		x->pv->kept[k].fd = x->fd;
		return;
	}
	munmap(p, len);
}

/* Fill x from a shared file. */
static void raw_from(struct raw *x, struct fz_ctx *c, struct fz_private *pv)
{
	x->fd = c->fd;
	x->chaos = c->chaos;
	x->rank = c->rank;
	x->world = c->world;
	x->heap_size = c->heap_size ? c->heap_size : PAGE << fz_below(x->r, 8);
	x->heap = in_child ? NULL : c->heap ? c->heap : (pv->c == c ? pv->map : NULL);
	x->scratch_off = c->scratch_off;
	x->scratch_len = c->scratch_len;
	x->devaddr = NULL;
	if (c->ctx && c->world && !in_child) {
		static __thread uint64_t dev[16];
		uint32_t r;

		for (r = 0; r < c->world && r < 16; r++)
			dev[r] = tplan_heap_devaddr(c->ctx, r);
		x->devaddr = dev;
	} else if (pv->c == c && c->world) {
		x->devaddr = pv->devaddr;
	}
}

/*
 * A fork child on the inherited files: raw calls (as another user now
 * and then), some files closed; the parent waits a random while, kills
 * it at a random moment or reaps it.
 */
static void raw_fork(struct fz_thread *t, struct fz_private *pv)
{
	struct fz_ctx *held[FZ_CTX_MAX], snap[FZ_CTX_MAX];
	int n = fz_ctx_hold_all(held, FZ_CTX_MAX), nheld = n, i, status;
	uint64_t wait_ms = fz_below(&t->rng, 3000), end;
	pid_t parent = getpid(), pid;
	struct raw x = { .r = &t->rng, .pv = pv };

	for (i = 0; i < n; i++)
		snap[i] = *held[i];
	pid = n ? fork() : -1;
	if (pid < 0)
		goto out;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		in_child = 1;
		fz_slot_bind((t->worker * FZ_THREADS_MAX + t->index) * 2 + 1);
		t->rng.s = fz_mix(t->rng.s, (uint64_t)getpid());
		if (fz_chance(&t->rng, 20)) {
			/* another user: its joins must be refused (EPERM) */
			if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				_exit(0);
			/* a change of credentials clears it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
		}
		for (i = 1 + (int)fz_below(&t->rng, 8); i > 0 && n; i--) {
			int k = (int)fz_below(&t->rng, n);
			struct fz_ctx *c = &snap[k];

			raw_from(&x, c, pv);
			if (fz_chance(&t->rng, 15))
				raw_mmap(&x);
			else
				raw_ioctl(&x, fz_chance(&t->rng, 3) ? FZ_CMD_UNKNOWN :
						(int)fz_below(&t->rng, FZ_NCMD));
			/* drop the child's reference; the parent's file lives on */
			if (fz_chance(&t->rng, 10)) {
				close(c->fd);
				snap[k] = snap[--n];
			}
		}
		_exit(0);
	}
	fz_count(FZ_M_FORKS);
	end = fz_now_ms() + wait_ms;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (fz_now_ms() >= end) {
			kill(pid, SIGKILL);
			fz_count(FZ_M_CHILD_KILLS);
			/* bounded: a child that does not die is the watchdog's */
			end = fz_now_ms() + 120000;
			while (waitpid(pid, &status, WNOHANG) == 0 && fz_now_ms() < end &&
			       !fz_stopping())
				fz_sleep_ms(5);
			break;
		}
		fz_sleep_ms(5);
	}
	fz_slot_bind((t->worker * FZ_THREADS_MAX + t->index) * 2 + 1);
	fz_slot_bind((t->worker * FZ_THREADS_MAX + t->index) * 2);
out:
	for (i = 0; i < nheld; i++)
		fz_ctx_put(held[i]);
}

/* ---- the menu ------------------------------------------------------------------------- */

static struct fz_private *private_get(struct fz_thread *t)
{
	struct fz_private *pv = t->priv;

	if (pv)
		return pv;
	pv = calloc(1, sizeof(*pv));
	if (!pv)
		return NULL;
	pv->arena = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	pv->ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pv->arena == MAP_FAILED || pv->ro == MAP_FAILED) {
		fz_fail(FZ_F_SETUP, -1, errno, "arena mmap: %s", strerror(errno));
		free(pv);
		return NULL;
	}
	mprotect(pv->arena + 2 * PAGE, PAGE, PROT_NONE);
	t->priv = pv;
	return pv;
}

void fz_raw_op(struct fz_thread *t)
{
	struct fz_private *pv = private_get(t);
	struct raw x = { .r = &t->rng, .pv = pv };
	struct fz_ctx *c = NULL;
	uint64_t roll = fz_below(&t->rng, 100);
	int op, held = 1;

	if (!pv) {
		fz_sleep_ms(100);
		return;
	}
	if (roll < 30) {
		/* a shared file: a group member's, another thread's private one */
		c = fz_ctx_get(&t->rng, 0);
	} else if (roll < 55) {
		if (!pv->c || !pv->ops--) {
			private_drop(pv);
			private_open(t, pv);
		}
		c = pv->c;
		held = 0;	/* the thread's own reference */
	} else if (roll < 62) {
		c = fz_ctx_get(&t->rng, 0);
		if (c) {
			raw_from(&x, c, pv);
			size_sweep(&x);
			fz_ctx_put(c);
		}
		return;
	} else if (roll < 72) {
		c = fz_ctx_get(&t->rng, 0);
		if (c) {
			raw_from(&x, c, pv);
			raw_mmap(&x);
			fz_ctx_put(c);
		}
		if (fz_chance(&t->rng, 20))
			kept_unmap(pv, (int)fz_below(&t->rng, MAPS_KEPT));
		return;
	} else if (roll < 84) {
		/* chains (and injections) on a joined chaos file with peers */
		for (op = 0; op < 4; op++) {
			c = fz_ctx_get(&t->rng, 1);
			if (!c || (c->chaos && c->world > 1))
				break;
			fz_ctx_put(c);
			c = NULL;
		}
		if (c) {
			raw_from(&x, c, pv);
			x.wellformed = 1;
			op = fz_chance(&t->rng, fz->allow_inject ? 30 : 5) ?
			     TPLAN_CMD_QUEUE_INJECT - TPLAN_CMD_BASE :
			     TPLAN_CMD_CHAIN_SUBMIT - TPLAN_CMD_BASE;
			raw_ioctl(&x, op);
		}
		if (c)
			fz_ctx_put(c);
		return;
	} else if (roll < 87) {
		raw_fork(t, pv);
		return;
	} else if (roll < 92) {
		/* a shared raw file closed while others may be using it */
		if (pv->c && fz_chance(&t->rng, 50))
			private_drop(pv);
		return;
	} else {
		c = fz_ctx_get(&t->rng, 0);
	}
	if (!c)
		return;
	raw_from(&x, c, pv);
	if (c == pv->c && c->world == 1 && fz_chance(&t->rng, 50))
		private_plan_step(&x);
	else
		raw_ioctl(&x, fz_chance(&t->rng, 4) ? FZ_CMD_UNKNOWN :
				(int)fz_below(&t->rng, FZ_NCMD));
	if (held)
		fz_ctx_put(c);
}

void fz_raw_thread_end(struct fz_thread *t)
{
	struct fz_private *pv = t->priv;
	int i;

	if (!pv)
		return;
	for (i = 0; i < MAPS_KEPT; i++)
		kept_unmap(pv, i);
	private_drop(pv);
}
