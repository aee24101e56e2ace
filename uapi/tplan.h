/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * tplan: triggered copy-engine plans for the GPUs of one node.
 *
 * The ioctl ABI of /dev/tplan.
 *
 * Conventions (every ioctl):
 *  - The argument is a pointer to a struct whose first member is
 *    "__u32 size", set by the caller to sizeof() of the struct it was built
 *    with.  The kernel copies min(size, its own size) bytes:
 *      size < the struct's first published size     -> EINVAL
 *      size > the kernel's size, extra bytes all 0  -> accepted
 *      size > the kernel's size, a non-zero extra   -> E2BIG
 *      size > 4096                                  -> E2BIG
 *    Out fields are written back for min(size, kernel size) bytes.
 *    Structs with In fields only are never written (they may be
 *    read-only).  A call whose answer cannot be written fails with EFAULT
 *    and changes nothing: the answer is written before the call commits
 *    (joins, creates, starts, queues, closes).  Only if another thread
 *    makes the memory unwritable in between can an EFAULT follow a
 *    committed call; each call says what is left then.
 *  - Fields documented "must be 0" and unknown flag bits -> EINVAL.
 *  - An unknown ioctl number -> ENOTTY.
 *  - Pointers travel as __aligned_u64.
 *
 * Errno contract shared by all ioctls:
 *   EFAULT  the argument (or a buffer it points to) is not accessible
 *   EINVAL  a field is out of range, a reserved field or flag is set
 *   E2BIG   the struct is larger than the kernel knows and the tail is
 *           set, or larger than a page
 *   ENOTTY  unknown ioctl
 * Each ioctl lists its own additional codes.
 *
 * Calls of one file may run concurrently from several threads; none
 * holds up another while it waits (a plan wait does not stop a put, an
 * mmap or a page fault of the process).  A file runs one collective at a
 * time: another collective of the same file meanwhile gets EBUSY.
 *
 * Collectives (barrier, all-gather and the collective plan steps) complete
 * on every rank or fail on every rank:
 *   - A rank later than a waiting rank's timeout makes the collective
 *     fail with ETIMEDOUT on every rank, the late one included (it fails
 *     as soon as it arrives).  The group goes on: the next collective
 *     works.  A timeout never expires before the time asked for.
 *   - Barrier and all-gather are interrupted by signals: EINTR (or a
 *     transparent restart with SA_RESTART), with the rank still counted
 *     as arrived; the same call (same operation and size) finishes it.
 *     Another collective first gets EPROTO, and the group goes on.
 *   - Plan steps are not interrupted by signals (only by death): a step
 *     half done on one rank could not be undone on the others.
 *   - Ranks whose k-th collectives are different operations (or sizes)
 *     break the group: EPROTO where noticed, ECONNRESET elsewhere.
 *   - A rank's file closing breaks the group: ECONNRESET from every
 *     blocked and later collective, put, quiet and plan step.
 *
 * Resources: every allocation a caller sizes (heaps, rings, stored chain
 * images, working memory) is charged to its memory cgroup and against the
 * module's caps (parameters max_bytes, max_user_bytes, max_queues,
 * max_pending_groups, max_plans, max_plan_spans; debugfs tplan/stats
 * shows them and what is held).  Past one, the call fails with ENOMEM
 * (memory, queues), EUSERS (groups being joined) or ENOSPC (plans,
 * spans), quietly: no allocation warning, never the OOM killer.
 */
#ifndef _UAPI_TPLAN_H
#define _UAPI_TPLAN_H

#include <linux/types.h>
#include <linux/ioctl.h>

#include "tplan_chain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; compatible additions grow structs. */
#define TPLAN_ABI_VERSION 1

#define TPLAN_DEVICE_PATH "/dev/tplan"

#define TPLAN_TYPE ';'

/*
 * Command numbers.  Numbers are assigned once and never reused; a number
 * listed here whose struct is not defined yet is answered with ENOTTY.
 */
enum {
	TPLAN_CMD_BASE = 0x80,
	TPLAN_CMD_INFO = TPLAN_CMD_BASE,
	TPLAN_CMD_GROUP_JOIN,
	TPLAN_CMD_GROUP_BARRIER,
	TPLAN_CMD_GROUP_ALL_GATHER,
	TPLAN_CMD_HEAP_INFO,
	TPLAN_CMD_PUT,
	TPLAN_CMD_QUIET,
	TPLAN_CMD_QUEUE_INFO,
	TPLAN_CMD_QUEUE_INJECT,
	TPLAN_CMD_CHAIN_SUBMIT,
	TPLAN_CMD_PLAN_CREATE,
	TPLAN_CMD_PLAN_PREPARE,
	TPLAN_CMD_PLAN_START,
	TPLAN_CMD_PLAN_WAIT,
	TPLAN_CMD_PLAN_NEXT_ROUND,
	TPLAN_CMD_PLAN_CLOSE,
	TPLAN_CMD_PLAN_STATE,
	TPLAN_CMD_HEAP_EXPORT,
	TPLAN_CMD_ADDR_MAP,
	TPLAN_CMD_QUEUE_ATTACH_KFD,
	TPLAN_CMD_LAST
};

/* Copy-engine back ends, as bits of tplan_info.engines. */
#define TPLAN_ENGINE_SOFT (1U << 0)	/* software SDMA engine (kernel threads) */
#define TPLAN_ENGINE_KFD  (1U << 1)	/* SDMA user queues of an MI200/MI300 through KFD */
#define TPLAN_ENGINE_ALL  (TPLAN_ENGINE_SOFT | TPLAN_ENGINE_KFD)

/**
 * struct tplan_info - TPLAN_IOC_INFO: what this module can do
 * @size: In: sizeof(struct tplan_info)
 * @flags: In: must be 0
 * @abi_version: Out: TPLAN_ABI_VERSION of the running module
 * @engines: Out: TPLAN_ENGINE_* bits of the back ends this module can
 *           drive (TPLAN_ENGINE_KFD: it was built with dma-buf support;
 *           whether a GPU is there is /dev/kfd's to say)
 * @ring_size: Out: bytes of every queue's ring (a power of two)
 * @prep_limit_pct: Out: percent of a ring that prepared (not yet gated
 *                  open) chains may hold; 1..50
 * @max_world_size: Out: most ranks a group may have
 * @__reserved: must be 0
 * @max_copy_bytes_sdma440: Out: largest byte count of one COPY_LINEAR on
 *                  SDMA 4.4.0 (MI200, gfx90a)
 * @max_copy_bytes_sdma442: Out: the same for SDMA 4.4.2 (MI300, gfx942);
 *                  the administrator may raise it (module parameter)
 *
 * Capabilities are read from here, never inferred from version numbers.
 */
struct tplan_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 engines;
	__u32 ring_size;
	__u32 prep_limit_pct;
	__u32 max_world_size;
	__u32 __reserved;
	__u32 max_copy_bytes_sdma440;
	__u32 max_copy_bytes_sdma442;
};
#define TPLAN_IOC_INFO _IO(TPLAN_TYPE, TPLAN_CMD_INFO)

/*
 * Errno contract of the group ioctls (in addition to the shared one):
 *   ENOTCONN     the file has not joined a group (or the join is incomplete)
 *   ECONNRESET   the group is broken: a rank's file was closed; every
 *                blocked and later collective, quiet and put fails with it
 *   ETIMEDOUT    the other ranks did not arrive within timeout_ms
 *   EINTR        a signal arrived while waiting
 */

/* Which SDMA IP's packet limits a group's engines follow. */
#define TPLAN_SDMA_440 0x040400	/* MI200, gfx90a */
#define TPLAN_SDMA_442 0x040402	/* MI300, gfx942 */

#define TPLAN_TIMEOUT_DEFAULT_MS 30000	/* used when a timeout_ms is 0 */

/**
 * struct tplan_group_join - TPLAN_IOC_GROUP_JOIN: make this file rank @rank
 * of the node-local group @key; returns once all @world_size ranks joined.
 * @size: In: sizeof(struct tplan_group_join)
 * @flags: In: must be 0
 * @key: In: names the group; every rank of one job passes the same key
 * @world_size: In: 1..tplan_info.max_world_size, the same on every rank
 * @rank: In: 0..world_size-1, distinct per rank
 * @heap_size: In: bytes of each rank's symmetric heap: a multiple of 4096,
 *             4 KiB..TPLAN_HEAP_SIZE_MAX, the same on every rank
 * @engine: In: TPLAN_ENGINE_SOFT, or TPLAN_ENGINE_KFD (one of tplan_info's
 *          engines): the ranks' GPUs' SDMA queues, driven through KFD
 *          (see "the KFD engine" below)
 * @sdma_ip: In: TPLAN_SDMA_440 or TPLAN_SDMA_442: whose per-packet limits apply
 * @timeout_ms: In: how long to wait for the other ranks (0: default)
 * @heap_fd: In: TPLAN_ENGINE_KFD: a dma-buf of this rank's heap in its
 *           GPU's memory, of @heap_size bytes or more (the module holds
 *           it until the group ends, zeroes it, and reads and writes its
 *           gate area through a kernel mapping); other engines: 0
 * @heap_base: Out: device address of this rank's heap in this rank's own
 *             address map (see struct tplan_heap_info); TPLAN_ENGINE_KFD:
 *             0, the rank registers its map itself (TPLAN_IOC_ADDR_MAP)
 *
 * Who meets whom: a group is found by @key and the caller's effective uid
 * and user namespace, so another user's group of the same key is never
 * found (the caller starts a group of its own).  Joining shares heaps
 * with every rank, which is what process_vm_writev() allows, so the
 * caller must pass ptrace's attach rules against every rank already
 * there, both ways: each can name the other in its pid namespace, their
 * real, effective and saved uids and gids are the same (or the caller
 * has CAP_SYS_PTRACE over the rank), and the rank is dumpable.  Security
 * modules' ptrace policies are not consulted.
 *
 * Errors: EALREADY (this file joined, or is joining on another thread),
 * EINVAL (a field out of range, or world_size / heap_size / engine /
 * sdma_ip differ from the group's; TPLAN_ENGINE_KFD: @heap_fd is no
 * dma-buf, or a smaller one), EBADF (TPLAN_ENGINE_KFD: @heap_fd is no open
 * file), EADDRINUSE (another file holds @rank), EPERM (a rank already
 * there may not be met: see above), ENOMEM (the heap: memory, the memory
 * cgroup, max_bytes, max_user_bytes), EUSERS (this user is joining
 * max_pending_groups groups already), ETIMEDOUT, EINTR (restarted with
 * SA_RESTART), EFAULT (the answer: nothing joined).  On any error this
 * file is not in the group.
 */
struct tplan_group_join {
	__u32 size;
	__u32 flags;
	__aligned_u64 key;
	__u32 world_size;
	__u32 rank;
	__aligned_u64 heap_size;
	__u32 engine;
	__u32 sdma_ip;
	__u32 timeout_ms;
	__s32 heap_fd;
	__aligned_u64 heap_base;
};
#define TPLAN_IOC_GROUP_JOIN _IO(TPLAN_TYPE, TPLAN_CMD_GROUP_JOIN)

#define TPLAN_HEAP_SIZE_MAX (16ULL << 30)

/**
 * struct tplan_group_barrier - TPLAN_IOC_GROUP_BARRIER: wait until every
 * rank of the group has called it.
 * @size: In: sizeof(struct tplan_group_barrier)
 * @flags: In: must be 0
 * @timeout_ms: In: 0: default
 * @__reserved: must be 0
 *
 * Errors: ENOTCONN, ECONNRESET (the group broke), ETIMEDOUT (this rank
 * or another gave up waiting: the barrier failed on every rank; the group
 * goes on), EINTR (a signal: still arrived, call it again to finish it;
 * restarted with SA_RESTART), EPROTO (after EINTR from another collective,
 * which is to be called first; or the ranks' k-th collectives differ,
 * which breaks the group), EBUSY (another collective of this file runs).
 */
struct tplan_group_barrier {
	__u32 size;
	__u32 flags;
	__u32 timeout_ms;
	__u32 __reserved;
};
#define TPLAN_IOC_GROUP_BARRIER _IO(TPLAN_TYPE, TPLAN_CMD_GROUP_BARRIER)

#define TPLAN_ALL_GATHER_MAX 4096

/**
 * struct tplan_group_all_gather - TPLAN_IOC_GROUP_ALL_GATHER: every rank
 * contributes @blob_size bytes and receives every rank's, rank r's at
 * r * blob_size of @out.
 * @size: In: sizeof(struct tplan_group_all_gather)
 * @flags: In: must be 0
 * @blob_size: In: 1..TPLAN_ALL_GATHER_MAX, the same on every rank
 * @timeout_ms: In: 0: default
 * @in: In: pointer to this rank's @blob_size bytes
 * @out: In: pointer to world_size * @blob_size bytes, written on success
 *       (zeroed first: EFAULT before this rank arrives when it cannot be)
 *
 * Errors: as the barrier, plus EPROTO when @blob_size differs between
 * ranks (the group breaks), ENOMEM, EFAULT (@in or @out before this rank
 * arrived: nothing happened; or @out could not be written at the end:
 * the all-gather completed on every rank, the others returned 0, and
 * @out holds what could be written; do not call it again for this step).
 * After EINTR, the call that finishes the all-gather keeps the blob given
 * first.
 */
struct tplan_group_all_gather {
	__u32 size;
	__u32 flags;
	__u32 blob_size;
	__u32 timeout_ms;
	__aligned_u64 in;
	__aligned_u64 out;
};
#define TPLAN_IOC_GROUP_ALL_GATHER _IO(TPLAN_TYPE, TPLAN_CMD_GROUP_ALL_GATHER)

/**
 * struct tplan_heap_info - TPLAN_IOC_HEAP_INFO: where rank @rank's heap is
 * @size: In: sizeof(struct tplan_heap_info)
 * @rank: In: 0..world_size-1 (any rank; every rank may map every heap)
 * @heap_base: Out: device address of the heap's first byte as the CALLER
 *             sees it: in the caller's address map, the address the
 *             caller's own packets use.  Each rank has a map of its own
 *             (on hardware, its GPU's address space); packets of queue
 *             src->dst are read in src's map, so an address is valid only
 *             on the rank that obtained it: never pass one to another
 *             rank (pass heap offsets).  Page aligned; another rank sees
 *             the same heap at another address.
 * @heap_size: Out: bytes
 * @mmap_offset: Out: pass to mmap() on this file to map the heap (shared,
 *               read/write, at most heap_size bytes from offset 0)
 * @gate_area_offset: Out: the heap from here to its end is the kernel's:
 *               plans' gate tables live there (the same offsets on every
 *               rank); applications allocate below it
 *
 * Errors: ENOTCONN, EINVAL (@rank out of range).
 */
struct tplan_heap_info {
	__u32 size;
	__u32 rank;
	__aligned_u64 heap_base;
	__aligned_u64 heap_size;
	__aligned_u64 mmap_offset;
	__aligned_u64 gate_area_offset;
};
#define TPLAN_IOC_HEAP_INFO _IO(TPLAN_TYPE, TPLAN_CMD_HEAP_INFO)

/* tplan_put.flags */
#define TPLAN_PUT_SIGNAL (1U << 0)	/* ATOMIC ADD64 1 at signal_offset after the copies */
#define TPLAN_PUT_FLAGS_ALL TPLAN_PUT_SIGNAL

/**
 * struct tplan_put - TPLAN_IOC_PUT: queue a copy from this rank's heap to
 * peer @peer's heap on the (this rank -> peer) queue, split into copy
 * packets of at most the engine's per-packet maximum.  Returns once
 * queued; TPLAN_IOC_QUIET waits for completion.
 * @size: In: sizeof(struct tplan_put)
 * @flags: In: TPLAN_PUT_* bits
 * @peer: In: another rank of the group
 * @__reserved: must be 0
 * @src_offset: In: byte offset in this rank's heap
 * @dst_offset: In: byte offset in @peer's heap (pass src_offset for "the
 *              same offset")
 * @length: In: bytes, at least 1; both ranges inside their heaps
 * @signal_offset: In: with TPLAN_PUT_SIGNAL, an 8-byte aligned offset in
 *                 @peer's heap; must be 0 otherwise
 *
 * Errors: ENOTCONN, EPERM (not the process that joined), EINVAL, EBUSY
 * (the queue holds prepared chains whose gates have not opened: the spec's
 * rule, a put would wait behind them), EIO (the queue faulted:
 * TPLAN_IOC_QUEUE_INFO says where), ECONNRESET, EINTR (waiting for ring
 * space), ETIMEDOUT (the engine freed no ring space for
 * TPLAN_TIMEOUT_DEFAULT_MS: the deadline moves on with every bit freed, so
 * a long put that streams never times out), ENOMEM (the queue's ring, made
 * at its first use).  A put longer than the free ring goes in parts: after
 * an error, the parts queued before it are sent.
 */
struct tplan_put {
	__u32 size;
	__u32 flags;
	__u32 peer;
	__u32 __reserved;
	__aligned_u64 src_offset;
	__aligned_u64 dst_offset;
	__aligned_u64 length;
	__aligned_u64 signal_offset;
};
#define TPLAN_IOC_PUT _IO(TPLAN_TYPE, TPLAN_CMD_PUT)

/* tplan_quiet.flags */
#define TPLAN_QUIET_OPEN_GATES (1U << 0)	/* first open the gates of raw chains */
#define TPLAN_QUIET_FLAGS_ALL TPLAN_QUIET_OPEN_GATES

/**
 * struct tplan_quiet - TPLAN_IOC_QUIET: wait until everything queued on
 * the (this rank -> @peer) queue before the call has executed (the done
 * FENCE of the last batch ran; rptr is not looked at).
 * @size: In: sizeof(struct tplan_quiet)
 * @peer: In: another rank of the group
 * @timeout_ms: In: 0: default
 * @flags: In: TPLAN_QUIET_* bits.  TPLAN_QUIET_OPEN_GATES: raw chains
 *         (TPLAN_IOC_CHAIN_SUBMIT) still waiting on their ready gates get
 *         their gates opened (ready = the chain's @ref, as a producer's
 *         mark would), so they run as their chunks stand and give back
 *         their charge; then the wait.  The way to release chains whose
 *         producer will never come.  A plan's chains are not touched
 *         (closing the plan opens those): with one charged, EBUSY.
 *
 * Errors: ENOTCONN, EPERM (not the process that joined), EINVAL, EBUSY
 * (prepared chains wait on the queue; with TPLAN_QUIET_OPEN_GATES, a
 * plan's), EIO (the queue faulted), ECONNRESET, ETIMEDOUT, EINTR, ENOMEM
 * (the queue's ring, made at its first use).
 */
struct tplan_quiet {
	__u32 size;
	__u32 peer;
	__u32 timeout_ms;
	__u32 flags;
};
#define TPLAN_IOC_QUIET _IO(TPLAN_TYPE, TPLAN_CMD_QUIET)

/*
 * A queue's memory, as an SDMA engine sees it; the owning rank may map it
 * (TPLAN_IOC_QUEUE_INFO gives the mmap offsets), no other process can.
 *
 *   ring          ring_size bytes of packets.  Only the module writes
 *                 packets (the owner's mapping is for registering the
 *                 ring with a driver, e.g. KFD, at CPU address = GPU
 *                 address); a packet never straddles the end (NOP
 *                 padding), and the ring is never completely full.
 *   pointer page  one page:
 *     +TPLAN_QPTR_WPTR      u64  bytes written (monotonic).  The module
 *                                stores it here, then rings the engine's
 *                                doorbell with the same value (a 64-bit
 *                                write); an engine learns new work only
 *                                from doorbells, and after a preemption
 *                                from this word.
 *     +TPLAN_QPTR_RPTR      u64  bytes the engine consumed (monotonic),
 *                                written back by the engine, maybe late
 *                                and maybe ahead of what it executed: it
 *                                frees ring space and means nothing else.
 *     +TPLAN_QPTR_GATE_SEQ  u32  progress of prepared chains: the module
 *                                writes a FENCE of the next sequence
 *                                number right after each chain's POLL, so
 *                                this word passes it once the engine went
 *                                through the gate (the chain's charge is
 *                                released then).
 *     +TPLAN_QPTR_DONE_SEQ  u32  progress of everything: the module ends
 *                                each batch it publishes (a put or each
 *                                part of a long one, a round's chains on
 *                                the queue, a submit, an injection) with a
 *                                FENCE of the next sequence number; quiet,
 *                                plan close and TPLAN_QUEUE_IDLE go by it.
 *   Sequence numbers start at 1 and grow by one, mod 2^32, in queue
 *   order; the rest of the page is 0.  The owner's mapping can write
 *   anything here: the module trusts none of it beyond that queue.
 *   Work reaches a rank's queues only from the process that joined:
 *   TPLAN_IOC_PUT, _QUIET, _QUEUE_INJECT, _CHAIN_SUBMIT, _PLAN_CREATE,
 *   _PLAN_PREPARE and _PLAN_NEXT_ROUND from any other (a fork holding the
 *   file, a process it was passed to) fail with EPERM before anything is
 *   written.  On a GPU the doorbell is a page of the owner's address
 *   space; the rule is the same on every engine.
 */
#define TPLAN_QPTR_WPTR		0x00
#define TPLAN_QPTR_RPTR		0x08
#define TPLAN_QPTR_GATE_SEQ	0x40
#define TPLAN_QPTR_DONE_SEQ	0x48
/* What a prepared chain is charged besides its own bytes: the FENCE after its POLL. */
#define TPLAN_CHAIN_FENCE_BYTES	16
/*
 * What a plan's round on a queue is charged besides its chains: the POLL
 * on the receiver's release word (TPLAN_GATE_RELEASED) at its head.
 */
#define TPLAN_ROUND_HEAD_BYTES	24

/* tplan_queue_info.flags */
#define TPLAN_QUEUE_INFO_MAKE (1U << 0)	/* make the queue if it is not used yet */
#define TPLAN_QUEUE_INFO_FLAGS_ALL TPLAN_QUEUE_INFO_MAKE

/* tplan_queue_info.state */
enum tplan_queue_state {
	TPLAN_QUEUE_IDLE = 0,		/* the last batch's done FENCE ran */
	TPLAN_QUEUE_BUSY = 1,		/* packets left to execute */
	TPLAN_QUEUE_FAULT = 2,		/* stopped at a bad packet, see fault_* */
	TPLAN_QUEUE_STOPPED = 3	/* its rank left; nothing more executes */
};

/* tplan_queue_info.fault_reason */
enum tplan_queue_fault {
	TPLAN_FAULT_NONE = 0,
	TPLAN_FAULT_BAD_PACKET = 1,	/* unknown or malformed header/fields */
	TPLAN_FAULT_UNSUPPORTED = 2,	/* a packet the engine does not execute */
	TPLAN_FAULT_BAD_ADDRESS = 3,	/* an address outside every heap */
	TPLAN_FAULT_POLL_TIMEOUT = 4,	/* POLL_REGMEM ran out of retries */
	TPLAN_FAULT_RING_END = 5	/* a packet straddles the ring end */
};

/**
 * struct tplan_queue_info - TPLAN_IOC_QUEUE_INFO: the (this rank -> @peer)
 * queue's pointers, budget and state.
 * @size: In: sizeof(struct tplan_queue_info)
 * @peer: In: another rank of the group
 * @rptr: Out: bytes the engine consumed (monotonic; see "a queue's
 *        memory": maybe late, maybe ahead of what it executed)
 * @wptr: Out: bytes written since the queue was created (monotonic)
 * @packets: Out: packets executed
 * @ring_size: Out: bytes
 * @state: Out: enum tplan_queue_state
 * @prep_charged: Out: bytes of prepared chains whose gates have not opened
 *                (put and quiet fail with EBUSY while it is not 0)
 * @prep_limit: Out: the most @prep_reserved (and so @prep_charged) may reach
 * @fault_offset: Out: ring byte offset (rptr) of the faulting packet
 * @fault_dword: Out: its first dword
 * @fault_reason: Out: enum tplan_queue_fault
 * @flags: In: TPLAN_QUEUE_INFO_* bits
 * @__reserved: must be 0
 * @ring_mmap_offset: Out: mmap() this offset on this file (MAP_SHARED,
 *                    ring_size bytes) to map the ring; only the process
 *                    that joined may, and a fork does not inherit it
 * @ptr_mmap_offset: Out: the same for the pointer page (one page)
 * @gate_seq: Out: the pointer page's TPLAN_QPTR_GATE_SEQ word now
 * @done_seq: Out: its TPLAN_QPTR_DONE_SEQ word now
 * @doorbells: Out: doorbells rung
 * @prep_reserved: Out: bytes of the prepared-copy budget taken: raw
 *                 chains' until their gates open, and one round's charge
 *                 of every plan prepared and not yet closed
 * @__reserved2: Out: 0
 *
 * A queue not used yet reads as an empty one (it is made at first use,
 * or here with TPLAN_QUEUE_INFO_MAKE).
 *
 * Errors: ENOTCONN, EINVAL, ENOMEM (TPLAN_QUEUE_INFO_MAKE: the ring).
 */
struct tplan_queue_info {
	__u32 size;
	__u32 peer;
	__aligned_u64 rptr;
	__aligned_u64 wptr;
	__aligned_u64 packets;
	__u32 ring_size;
	__u32 state;
	__u32 prep_charged;
	__u32 prep_limit;
	__aligned_u64 fault_offset;
	__u32 fault_dword;
	__u32 fault_reason;
	__u32 flags;
	__u32 __reserved;
	__aligned_u64 ring_mmap_offset;
	__aligned_u64 ptr_mmap_offset;
	__u32 gate_seq;
	__u32 done_seq;
	__aligned_u64 doorbells;
	__u32 prep_reserved;
	__u32 __reserved2;
};
#define TPLAN_IOC_QUEUE_INFO _IO(TPLAN_TYPE, TPLAN_CMD_QUEUE_INFO)

/**
 * struct tplan_queue_inject - TPLAN_IOC_QUEUE_INJECT: test only.  Write raw
 * dwords, unvalidated, into the (this rank -> @peer) queue, so that fault
 * handling can be tested.  Needs the module parameter allow_inject=1.
 * @size: In: sizeof(struct tplan_queue_inject)
 * @peer: In: another rank of the group
 * @ndw: In: 1..1024 dwords
 * @flags: In: must be 0
 * @dwords: In: pointer to @ndw dwords
 *
 * Errors: EPERM (allow_inject is off, or not the process that joined),
 * ENOTCONN, EINVAL, EBUSY, EIO, ECONNRESET, EINTR (waiting for ring space;
 * restarted with SA_RESTART), ETIMEDOUT, ENOMEM.
 */
struct tplan_queue_inject {
	__u32 size;
	__u32 peer;
	__u32 ndw;
	__u32 flags;
	__aligned_u64 dwords;
};
#define TPLAN_IOC_QUEUE_INJECT _IO(TPLAN_TYPE, TPLAN_CMD_QUEUE_INJECT)

/**
 * struct tplan_chain_desc - one prepared chain of a TPLAN_IOC_CHAIN_SUBMIT
 * @ndw: In: dwords of this chain (its packets follow the previous chain's)
 * @ref: In: the round its POLL_REGMEM waits for: the kernel writes it into
 *       the POLL's reference (submitted as 0), so the engine copies once
 *       the ready gate's low 32 bits are >= @ref
 * @ready_offset: In: offset of the chain's ready gate in this rank's heap
 *                (the POLL address must be that gate)
 * @arrival_offset: In: offset of the chain's arrival gate in the peer's
 *                  heap (the ATOMIC address must be that gate)
 */
struct tplan_chain_desc {
	__u32 ndw;
	__u32 ref;
	__aligned_u64 ready_offset;
	__aligned_u64 arrival_offset;
};

#define TPLAN_CHAIN_SUBMIT_MAX 65536	/* chains per call */
/* Dwords per call, all its chains together (4 MiB of packets). */
#define TPLAN_CHAIN_SUBMIT_DWORDS_MAX (TPLAN_CHAIN_MAX_DWORDS * 4)

/**
 * struct tplan_chain_submit - TPLAN_IOC_CHAIN_SUBMIT: validate prepared
 * POLL / COPY x n / ATOMIC chains and queue them on the (this rank ->
 * @peer) queue, all or none.  Copies read this rank's heap and write the
 * same offsets of @peer's heap.  Until the engine passes a chain's POLL,
 * the chain's bytes are charged to the queue's prepared-copy budget
 * (tplan_queue_info.prep_limit); put and quiet to @peer fail with EBUSY
 * meanwhile.  Plans are built on this; it is exposed for raw use and tests.
 * @size: In: sizeof(struct tplan_chain_submit)
 * @flags: In: must be 0
 * @peer: In: another rank of the group
 * @nchains: In: 1..TPLAN_CHAIN_SUBMIT_MAX
 * @chains: In: pointer to @nchains struct tplan_chain_desc
 * @dwords: In: pointer to the chains' packets, back to back
 * @ndw: In: total dwords, the sum of the chains' ndw
 * @__reserved: must be 0
 * @reject: Out: with EINVAL from the validator, which chain, packet and
 *          rule (uapi/tplan_chain.h); zero otherwise
 *
 * Errors: ENOTCONN, EPERM (not the process that joined), EINVAL (a field,
 * or a chain the validator refuses: @reject says why), ENOSPC (the chains
 * would take the charge over the limit: nothing is queued), EIO,
 * ECONNRESET, ETIMEDOUT (waiting for ring space the engine did not free,
 * or for a plan round of this queue whose ranks are still voting), ENOMEM,
 * EINTR (killed while waiting for ring space), EFAULT (nothing
 * queued).  Raw chains whose producer never comes are released with
 * TPLAN_IOC_QUIET and TPLAN_QUIET_OPEN_GATES.
 */
struct tplan_chain_submit {
	__u32 size;
	__u32 flags;
	__u32 peer;
	__u32 nchains;
	__aligned_u64 chains;
	__aligned_u64 dwords;
	__u32 ndw;
	__u32 __reserved;
	struct tplan_chain_reject reject;
};
#define TPLAN_IOC_CHAIN_SUBMIT _IO(TPLAN_TYPE, TPLAN_CMD_CHAIN_SUBMIT)

/*
 * Plans.  A plan sends, every round, each rank's chunks to every peer:
 * one prepared chain per (chunk, peer) on the (rank -> peer) queue,
 * POLL_REGMEM(ready gate >= round), the chunk's copies, ATOMIC ADD64(the
 * peer's arrival gate, 1); each round on a queue starts with the kernel's
 * POLL_REGMEM(the peer's release word >= round - 1).  The gate table has
 * one row per chunk of every rank (global chunk index: rank r's chunk c
 * is chunk_base[r] + c), then one release row (row total_chunks), at the
 * same heap offset on every rank:
 *
 *   row + TPLAN_GATE_READY     u64  the last writer stores the round
 *   row + TPLAN_GATE_ARRIVAL   u64  +1 per round from the chunk's sender
 *   row + TPLAN_GATE_WRITERS   u64  +1 per mark_ready (writers per round)
 *   row + TPLAN_GATE_EXPECTED  u32  writers of the chunk, set by the kernel
 *   release row + TPLAN_GATE_RELEASED  u64  the last round this rank read
 *
 * Lifecycle.  Create, prepare and close are collective (every rank calls
 * them; a failure on one rank fails them on all, with that rank's errno,
 * as the collectives above; what is wrong with a call itself, ENOENT or
 * EBUSY, fails on its rank alone, before any collective); start, wait
 * and next_round are local:
 *   PLAN_CREATE    gate table allocated and zeroed; state EMPTY
 *   PLAN_PREPARE   chains validated, no two ranks send the same bytes,
 *                  budget charged on every queue or none, rounds 1 ..
 *                  depth queued; state PREPARED, round 1
 *   PLAN_START     (local) the round's handle for the producer
 *   PLAN_WAIT      (local) this rank's chunks marked exactly writers times
 *                  and arrived at every peer, every other chunk arrived
 *                  here; state DONE
 *   PLAN_NEXT_ROUND  (local) round k released, rounds up to k + depth
 *                  queued from the round templates, one call per rank
 *                  whatever the number of chunks and peers; state
 *                  PREPARED, round k + 1.  A rank that cannot queue its
 *                  round fails the plan on every rank (ECANCELED
 *                  elsewhere).
 * Rounds armed ahead (depth > 1): every round queued carries its own
 * release and ready POLLs, so rounds 1 .. armed may run with one buffer.
 * A rank may then run the rounds already armed in user space, on its
 * mapped gates: start is the handle of the next round, a wait that finds
 * every count reached needs no call (the counts are those PLAN_WAIT
 * checks), a release is a store to its release word.  It calls
 * PLAN_WAIT (TPLAN_PLAN_WAIT_AT) only to sleep or for the report, and
 * PLAN_NEXT_ROUND (TPLAN_NEXT_ROUND_AT) when it has used every round
 * armed: once per depth rounds.
 *   PLAN_CLOSE     this rank's unopened gates and its release word
 *                  opened, so queued copies drain as they stand, and
 *                  every rank's the same; CLOSED, or CLOSING while copies
 *                  wait behind an earlier plan's (closing that one
 *                  finishes both).  A rank whose file goes opens its
 *                  release words the same way.
 * A plan's gate rows stay its own until no queued chain of it can reach
 * them: a plan closed with ETIMEDOUT or CLOSING keeps them (and the
 * module its memory) until its chains drain.
 */
enum tplan_plan_states {
	TPLAN_PLAN_EMPTY = 0,		/* created, nothing prepared yet */
	TPLAN_PLAN_PREPARED = 1,	/* round queued, waiting to be started/marked */
	TPLAN_PLAN_DONE = 2,		/* the round completed (wait returned 0) */
	TPLAN_PLAN_FAILED = 3,		/* unusable; close it */
	TPLAN_PLAN_CLOSING = 4,		/* closed, copies still queued behind another plan */
	TPLAN_PLAN_CLOSED = 5
};

/* Rounds start at 1 and the engine compares 32 bits: 2^32 - 1 rounds. */
#define TPLAN_ROUND_MAX 0xffffffffU
#define TPLAN_PLAN_CHUNKS_MAX (1U << 16)	/* chunks per rank */
#define TPLAN_PLAN_DWORDS_MAX (1U << 24)	/* chain dwords per rank (64 MiB) */
#define TPLAN_PLAN_DEPTH_MAX 64		/* rounds armed ahead */

/**
 * struct tplan_plan_create - TPLAN_IOC_PLAN_CREATE (collective): a plan
 * over a buffer at the same heap offset on every rank.
 * @size: In: sizeof(struct tplan_plan_create)
 * @flags: In: must be 0
 * @buffer_offset: In: the plan's buffer in every heap (the same on all
 *                 ranks)
 * @buffer_bytes: In: its length; copies land only inside it
 * @own_offset: In: the part of the buffer this rank sends from (its own
 *              rows); every source byte of its chains lies inside it
 * @own_bytes: In: its length (0 for a rank that sends nothing)
 * @nchunks: In: chunks this rank writes, 0..TPLAN_PLAN_CHUNKS_MAX
 * @timeout_ms: In: for the collective (0: default)
 * @chunk_base: In: pointer to world_size + 1 __u32; Out: rank r's chunks
 *              are global chunks chunk_base[r] .. chunk_base[r + 1] - 1
 * @plan_id: Out: names the plan on every rank (the same number)
 * @depth: In: rounds this rank keeps queued ahead, 1..TPLAN_PLAN_DEPTH_MAX
 *         (0: 1, one round at a time); ranks may differ.  Prepare
 *         reserves @depth rounds' charge of every queue and queues rounds
 *         1..@depth; a plan of depth > 1 shares no queue with another
 *         live plan (prepare refuses it with EDEADLK)
 * @gate_offset: Out: heap offset of the gate table, TPLAN_GATE_ROW_BYTES
 *               per global chunk
 *
 * Errors: ENOTCONN, EPERM (not the process that joined), EINVAL (a field,
 * or buffer/own ranges that differ between ranks or lie outside the heap),
 * ENOMEM (no room for the gate table, or no memory), ENOSPC (max_plans
 * plans alive in the group), ECONNRESET, ETIMEDOUT, EPROTO (the ranks'
 * collectives differ: the group breaks), EBUSY (another collective of this
 * file runs), EFAULT (this struct or @chunk_base, here or on another
 * rank), EINTR (killed).  All ranks fail together, and then no plan exists.
 */
struct tplan_plan_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 buffer_offset;
	__aligned_u64 buffer_bytes;
	__aligned_u64 own_offset;
	__aligned_u64 own_bytes;
	__u32 nchunks;
	__u32 timeout_ms;
	__aligned_u64 chunk_base;
	__u32 plan_id;
	__u32 depth;
	__aligned_u64 gate_offset;
};
#define TPLAN_IOC_PLAN_CREATE _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_CREATE)

/**
 * struct tplan_plan_chain - one chain of a TPLAN_IOC_PLAN_PREPARE
 * @chunk: In: this rank's chunk index, 0..nchunks-1
 * @peer: In: the rank it goes to
 * @ndw: In: dwords (its packets follow the previous chain's)
 * @__reserved: must be 0
 *
 * Every (chunk, peer) pair appears exactly once; chains of one peer come in
 * chunk order (the order the producer completes them, contract 1).
 */
struct tplan_plan_chain {
	__u32 chunk;
	__u32 peer;
	__u32 ndw;
	__u32 __reserved;
};

/**
 * struct tplan_plan_prepare - TPLAN_IOC_PLAN_PREPARE (collective): validate
 * this rank's chains, check no two ranks send the same bytes, reserve
 * depth rounds' charge of every queue's budget (held until the plan is
 * closed, whatever its state, so that no later round can fail for want of
 * budget) and queue round 1; on every rank or on none: a prepare that
 * fails gives back what it reserved.  Then, with depth > 1, rounds 2 ..
 * depth are queued as PLAN_NEXT_ROUND queues them (a failure there fails
 * the plan on every rank, as there).
 * @size: In: sizeof(struct tplan_plan_prepare)
 * @plan_id: In: from TPLAN_IOC_PLAN_CREATE
 * @nchains: In: nchunks * (world_size - 1)
 * @ndw: In: total dwords of the chains, at most TPLAN_PLAN_DWORDS_MAX
 * @chains: In: pointer to @nchains struct tplan_plan_chain
 * @dwords: In: pointer to the chains' packets (POLL references 0, gate
 *          addresses from gate_offset)
 * @writers: In: pointer to nchunks __u32: mark_ready calls that complete
 *           each chunk per round, >= 1
 * @timeout_ms: In: for the collective (0: default)
 * @flags: In: must be 0
 * @reject: Out: with EINVAL from the validator or the overlap check, the
 *          chain, packet, rule and rank (possibly another rank's)
 *
 * Errors: ENOTCONN, EPERM (not the process that joined), ENOENT (no such
 * plan), EINVAL (@reject says why when it is a chain, or a queue's round
 * longer than its ring can take in one piece: twice its bytes plus 12 must
 * stay under ring_size), ENOSPC (a queue's prepared-copy budget would be
 * exceeded, here or on another rank: nothing is queued anywhere; or the
 * plan's copies over max_plan_spans), EDEADLK (a plan armed ahead,
 * depth > 1, would share a queue with another prepared plan, or this plan
 * would share one with a plan armed ahead: a queue runs its rounds in the
 * order they were queued, so a receiver reading the two plans' rounds
 * alternately would wait for a round queued behind one it has not read),
 * EBUSY (already prepared, or another collective of this file runs),
 * ENOMEM, EIO (a queue faulted), ECONNRESET, ETIMEDOUT, EPROTO (the ranks'
 * collectives differ: the group breaks), EFAULT (this struct or a buffer,
 * here or on another rank), EINTR (killed).  After a failure the plan is
 * FAILED; close it.
 */
struct tplan_plan_prepare {
	__u32 size;
	__u32 plan_id;
	__u32 nchains;
	__u32 ndw;
	__aligned_u64 chains;
	__aligned_u64 dwords;
	__aligned_u64 writers;
	__u32 timeout_ms;
	__u32 flags;
	struct tplan_chain_reject reject;
};
#define TPLAN_IOC_PLAN_PREPARE _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_PREPARE)

/**
 * struct tplan_plan_start - TPLAN_IOC_PLAN_START: hand the prepared round to
 * a producer.
 * @size: In: sizeof(struct tplan_plan_start)
 * @plan_id: In
 * @round: Out: the round the producer marks (ready = round)
 * @nchunks: Out: this rank's chunks
 * @first_chunk: Out: global index of this rank's chunk 0
 * @total_chunks: Out: chunks of all ranks
 * @gate_offset: Out: heap offset of the gate table
 *
 * Errors: ENOTCONN, ENOENT, EBUSY (not PREPARED, already started, or a
 * wait is running on it), EDEADLK (a plan prepared earlier on a shared
 * queue is not started yet: plans that share queues start in the order
 * they were prepared), ECANCELED (another rank could not queue its round:
 * the plan is FAILED, close it), EINTR (killed), EFAULT (not started).
 */
struct tplan_plan_start {
	__u32 size;
	__u32 plan_id;
	__u32 round;
	__u32 nchunks;
	__u32 first_chunk;
	__u32 total_chunks;
	__aligned_u64 gate_offset;
};
#define TPLAN_IOC_PLAN_START _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_START)

/* tplan_plan_shortfall.what */
enum tplan_shortfall_kind {
	TPLAN_SHORT_MARKS = 1,		/* this rank's chunk: marks have < want */
	TPLAN_SHORT_EXTRA_MARKS = 2,	/* this rank's chunk: marks have > want */
	TPLAN_SHORT_ARRIVAL = 3		/* arrivals at @rank have < want */
};

/**
 * struct tplan_plan_shortfall - one chunk a wait found incomplete
 * @chunk: global chunk index
 * @rank: where the count was read: this rank for marks and for arrivals
 *        of other ranks' chunks; the peer for this rank's chunks' arrivals
 * @what: enum tplan_shortfall_kind
 * @__reserved: 0
 * @have: the count read
 * @want: the count the round needs
 */
struct tplan_plan_shortfall {
	__u32 chunk;
	__u32 rank;
	__u32 what;
	__u32 __reserved;
	__aligned_u64 have;
	__aligned_u64 want;
};

/**
 * struct tplan_fault_report - a queue that stopped at a bad packet
 * @src: the queue's sending rank
 * @dst: its peer
 * @reason: enum tplan_queue_fault
 * @dword: the packet's first dword
 * @offset: the packet's queue position (the rptr where it stopped)
 */
struct tplan_fault_report {
	__u32 src;
	__u32 dst;
	__u32 reason;
	__u32 dword;
	__aligned_u64 offset;
};

/**
 * struct tplan_plan_wait - TPLAN_IOC_PLAN_WAIT: wait for the round: this
 * rank's chunks marked exactly writers times and arrived at every peer,
 * every other rank's chunks arrived here.  The engine wakes the waiter as
 * arrivals land.
 * @size: In: sizeof(struct tplan_plan_wait)
 * @plan_id: In
 * @timeout_ms: In: 0: default
 * @flags: In: TPLAN_PLAN_WAIT_* bits
 * @report: In: pointer to @report_cap struct tplan_plan_shortfall, or 0
 * @report_cap: In: entries @report holds
 * @report_count: Out: with ETIMEDOUT or EOVERFLOW, how many chunks are
 *                short or over (entries beyond @report_cap are not written)
 * @round: Out: the round waited for.  In, with TPLAN_PLAN_WAIT_AT: the
 *         round to wait for, one this rank runs in user space: from the
 *         module's round (PLAN_STATE) to the last round armed; the
 *         module's round moves there, started
 * @__reserved: must be 0
 * @fault: Out: with EIO, the queue that faulted (this rank's to a peer or
 *         a peer's to this rank), where and why
 *
 * A fault of a queue this rank sends or receives on ends the wait at
 * once; so do a broken group, a rank that could not queue its round
 * (PLAN_NEXT_ROUND) and a close of the plan by another thread.
 *
 * Errors: EINVAL (@flags, @__reserved, or with TPLAN_PLAN_WAIT_AT a
 * round not armed, or behind the module's), ENOTCONN, ENOENT (no such
 * plan, or closed meanwhile), EBUSY
 * (not started, or another wait runs), ETIMEDOUT (the report names the
 * chunks still short and by how much), EOVERFLOW (a chunk got more marks
 * than writers: later rounds' gates would open early; the plan is
 * FAILED), EIO (a queue faulted: @fault; FAILED), ECONNRESET (FAILED),
 * ECANCELED (a rank could not queue its round; FAILED), EINTR, EFAULT (the answer or the report: the round is as it was, wait
 * again).  A wait allocates nothing but the report (without memory for
 * it, @report_count is set and no report is written).
 */
struct tplan_plan_wait {
	__u32 size;
	__u32 plan_id;
	__u32 timeout_ms;
	__u32 flags;
	__aligned_u64 report;
	__u32 report_cap;
	__u32 report_count;
	__u32 round;
	__u32 __reserved;
	struct tplan_fault_report fault;
};

/* tplan_plan_wait.flags */
#define TPLAN_PLAN_WAIT_AT (1U << 0)	/* @round says which round (user-space rounds) */
#define TPLAN_PLAN_WAIT_FLAGS_ALL TPLAN_PLAN_WAIT_AT
#define TPLAN_IOC_PLAN_WAIT _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_WAIT)

/**
 * struct tplan_plan_next_round - TPLAN_IOC_PLAN_NEXT_ROUND (local): "done
 * reading this round's data".  Releases round k (stores k in this rank's
 * release word, TPLAN_GATE_RELEASED, with release ordering) and queues
 * round k + 1 on this rank's queues from the round templates made at
 * prepare, each round to a peer headed by the kernel's POLL on that
 * peer's release of round k.  It waits for no other rank: once it
 * returns, peers' round k + 1 copies may land in the buffer at any time
 * (contract point 6, enforced per queue by the engine instead of a
 * barrier of all ranks), and this rank may start round k + 1.
 * With depth > 1 it queues every round up to k + depth not queued yet,
 * each once the round depth before it has left that queue (the budget
 * reserved holds depth rounds).
 * The budget was reserved at prepare: a re-arm never fails for it.
 * Plans sharing queues must be re-armed in the same order on every rank
 * (a queue runs its rounds in the order its sender queued them, so a
 * receiver releasing them in another order could wait for a round queued
 * behind one it has not released): a re-arm or release that would break
 * that order, as far as the queues show it, is refused with EDEADLK.
 * @size: In: sizeof(struct tplan_plan_next_round)
 * @plan_id: In
 * @timeout_ms: In: the longest wait for ring space without progress (0:
 *              default)
 * @round: Out: the new round.  In, with TPLAN_NEXT_ROUND_AT: round k,
 *         the round this rank finished, found complete in user space
 *         (from the module's round to the last armed; the module does not
 *         read the gates again)
 * @flags: In: TPLAN_NEXT_ROUND_* (a newer member: callers that end the
 *         struct at @round pass 0)
 * @__reserved: In: must be 0
 * @armed: Out: the last round queued (newer: callers may end the struct
 *         before it)
 * @__reserved2: In: must be 0
 *
 * Errors: EINVAL (@flags, @__reserved, or with TPLAN_NEXT_ROUND_AT a
 * round not armed, or behind the module's), ENOTCONN, EPERM (not the
 * process that joined), ENOENT, EBUSY (the
 * round is not DONE here, without TPLAN_NEXT_ROUND_AT, or another plan
 * step of this file runs),
 * ERANGE (2^32 - 1 rounds used:
 * still DONE), EFAULT (the answer: nothing released or queued, still
 * DONE), ECANCELED (another rank could not queue its round), EDEADLK (the
 * order of rounds on a shared queue, above), ECONNRESET, ETIMEDOUT (the
 * ring had no room in time), EIO (a queue faulted), ENOMEM, EINTR
 * (killed).  After any of the last seven the plan is FAILED on every
 * rank, with nothing of round k + 1 queued by this rank: every other
 * rank's wait ends with ECANCELED; close it.
 */
struct tplan_plan_next_round {
	__u32 size;
	__u32 plan_id;
	__u32 timeout_ms;
	__u32 round;
	__u32 flags;
	__u32 __reserved;
	__u32 armed;
	__u32 __reserved2;
};

/* tplan_plan_next_round.flags */
/*
 * Queue round k + 1 without releasing round k: the consumer releases it
 * itself, stream-ordered, by raising the release word to k
 * (tplan_release() in the device header), so the host re-arms without
 * waiting for the reading kernel.
 */
#define TPLAN_NEXT_ROUND_UNRELEASED (1U << 0)
/* @round is In: the round finished in user space (rounds armed ahead). */
#define TPLAN_NEXT_ROUND_AT (1U << 1)
#define TPLAN_NEXT_ROUND_FLAGS_ALL (TPLAN_NEXT_ROUND_UNRELEASED | TPLAN_NEXT_ROUND_AT)
#define TPLAN_IOC_PLAN_NEXT_ROUND _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_NEXT_ROUND)

/**
 * struct tplan_plan_close - TPLAN_IOC_PLAN_CLOSE (collective): open this
 * rank's unopened gates so its queued chains drain as they stand, wait for
 * every rank, and free the plan once no queued chain refers to it.
 * @size: In: sizeof(struct tplan_plan_close)
 * @plan_id: In
 * @timeout_ms: In: 0: default
 * @state: Out: TPLAN_PLAN_CLOSED once every rank closed and no chain of
 *         the plan is queued anywhere; TPLAN_PLAN_CLOSING when a rank's
 *         chains wait behind an earlier plan's (closing that plan
 *         finishes this one) or when that is not known (a failed vote)
 *
 * This rank's part is torn down whatever the result but EFAULT and the
 * errors before it starts (ENOENT, EBUSY): the plan id is gone for it.
 * @state is written twice: when the call starts (EFAULT then: nothing
 * closed) and at the end.  If the end's write fails, the call returns
 * what it would have returned (the close happened); calling it again
 * tells the state: ENOENT once CLOSED, EBUSY while CLOSING.
 *
 * Errors: ENOTCONN, ENOENT, EBUSY (closed already, its chains still
 * queued behind an earlier plan; or another collective of this file
 * runs), ECONNRESET (a rank is gone), ETIMEDOUT (a rank was late, or this
 * rank's chains did not drain within @timeout_ms), EPROTO (the ranks'
 * collectives differ: the group breaks), ENOMEM, EINTR (killed), EFAULT
 * (nothing closed).
 */
struct tplan_plan_close {
	__u32 size;
	__u32 plan_id;
	__u32 timeout_ms;
	__u32 state;
};
#define TPLAN_IOC_PLAN_CLOSE _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_CLOSE)

/**
 * struct tplan_plan_state - TPLAN_IOC_PLAN_STATE: where this rank's part of
 * a plan stands.
 * @size: In: sizeof(struct tplan_plan_state)
 * @plan_id: In
 * @state: Out: enum tplan_plan_states
 * @round: Out: the current round as the module knows it (0 before
 *         prepare); a rank running armed rounds in user space may be
 *         further
 * @armed: Out: the last round queued (newer members: callers may end the
 *         struct at @round)
 * @depth: Out: rounds kept armed ahead (1 unless created with more)
 *
 * Errors: ENOTCONN, ENOENT.
 */
struct tplan_plan_state {
	__u32 size;
	__u32 plan_id;
	__u32 state;
	__u32 round;
	__u32 armed;
	__u32 depth;
};
#define TPLAN_IOC_PLAN_STATE _IO(TPLAN_TYPE, TPLAN_CMD_PLAN_STATE)

/*
 * The KFD engine (TPLAN_ENGINE_KFD): each rank's queues are SDMA user
 * queues of its GPU, which the rank creates through KFD on the queue
 * memory tplan gives it, and each rank's heap is memory of its GPU.  The
 * steps, in order (libtplan does all of them in tplan_ctx_join()):
 *  1. allocate the heap in GPU memory and export it as a dma-buf; join
 *     with it (tplan_group_join.heap_fd);
 *  2. import every rank's heap into the GPU's address space (the others'
 *     through TPLAN_IOC_HEAP_EXPORT's dma-bufs) and register where
 *     (TPLAN_IOC_ADDR_MAP): that is the rank's address map, which its
 *     packets are validated in;
 *  3. for each peer: map the queue's ring and pointer page
 *     (TPLAN_IOC_QUEUE_INFO with TPLAN_QUEUE_INFO_MAKE), register both
 *     with KFD at GPU address = CPU address, create the SDMA queue on
 *     them, map its doorbell, and attach it (TPLAN_IOC_QUEUE_ATTACH_KFD).
 * The module stays the only writer of packets: it writes them through its
 * own mapping of the ring, stores wptr in the pointer page and rings the
 * doorbell itself, from the owner's own system calls only.  A queue that
 * is not attached refuses work with ENXIO.  Nothing wakes a waiter on
 * hardware: the module polls each busy queue's pointer page (spinning
 * briefly, then backing off to a millisecond) and wakes the waits its
 * progress concerns.  The validator and the ring budget keep cooperating
 * ranks correct; they are no security boundary against the queue's own
 * process, which could also make SDMA queues of its own: the GPU's
 * address space is that boundary.
 */

/**
 * struct tplan_heap_export - TPLAN_IOC_HEAP_EXPORT: a dma-buf of rank
 * @rank's heap (TPLAN_ENGINE_KFD groups), to import into the caller's GPU.
 * @size: In: sizeof(struct tplan_heap_export)
 * @rank: In: 0..world_size-1
 * @flags: In: must be 0
 * @fd: Out: a new file descriptor (close-on-exec) of the dma-buf
 *
 * Errors: ENOTCONN, EINVAL, EOPNOTSUPP (not a KFD group), EMFILE.
 */
struct tplan_heap_export {
	__u32 size;
	__u32 rank;
	__u32 flags;
	__s32 fd;
};
#define TPLAN_IOC_HEAP_EXPORT _IO(TPLAN_TYPE, TPLAN_CMD_HEAP_EXPORT)

/**
 * struct tplan_addr_map_set - TPLAN_IOC_ADDR_MAP: register the caller's
 * address map (TPLAN_ENGINE_KFD groups): where its GPU sees every heap.
 * @size: In: sizeof(struct tplan_addr_map_set)
 * @flags: In: must be 0
 * @count: In: world_size
 * @__reserved: must be 0
 * @heap_dev: In: pointer to @count __u64: rank r's heap in the caller's
 *            GPU address space, page aligned, non-zero, below 2^47; the
 *            heaps may not overlap each other
 *
 * Once per rank; until then the rank's queues cannot be attached and
 * TPLAN_IOC_HEAP_INFO's heap_base reads 0.
 *
 * Errors: ENOTCONN, EINVAL, EOPNOTSUPP (not a KFD group), EALREADY (the
 * map is registered), EFAULT.
 */
struct tplan_addr_map_set {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 __reserved;
	__aligned_u64 heap_dev;
};
#define TPLAN_IOC_ADDR_MAP _IO(TPLAN_TYPE, TPLAN_CMD_ADDR_MAP)

/**
 * struct tplan_queue_attach_kfd - TPLAN_IOC_QUEUE_ATTACH_KFD: the (this
 * rank -> @peer) queue runs on a KFD SDMA queue the caller created.
 * @size: In: sizeof(struct tplan_queue_attach_kfd)
 * @flags: In: must be 0
 * @peer: In: another rank of the group
 * @kfd_fd: In: the caller's /dev/kfd file that owns the queue (held until
 *          the queue goes, so that KFD tears the queue down after tplan
 *          stopped writing to it)
 * @ring_addr: In: the caller's mapping of this queue's ring (all of it),
 *             which the KFD queue was created on (GPU address = CPU address)
 * @ptr_addr: In: the caller's mapping of its pointer page, KFD's rptr and
 *            wptr (+TPLAN_QPTR_RPTR, +TPLAN_QPTR_WPTR); it may overlap no
 *            heap in the caller's map
 * @doorbell_addr: In: the queue's 64-bit doorbell in the caller's mapping
 *                 of @kfd_fd's doorbell page (8-byte aligned)
 * @gpu_id: In: KFD's id of the GPU (for debugfs and the trace)
 * @queue_id: In: KFD's queue id (likewise)
 *
 * The queue must be empty (nothing written to it yet).  Only the process
 * that joined may attach, and only its system calls ring the doorbell.
 *
 * Errors: ENOTCONN, EINVAL (a field, or an address that is not what it
 * should be a mapping of), EOPNOTSUPP (not a KFD group), ENXIO (the
 * caller's address map is not registered), EALREADY (attached), EBUSY
 * (the queue has been written to), EPERM (another process), EBADF,
 * ENOMEM (the queue's ring, made here if it was not yet), EINTR.
 */
struct tplan_queue_attach_kfd {
	__u32 size;
	__u32 flags;
	__u32 peer;
	__s32 kfd_fd;
	__aligned_u64 ring_addr;
	__aligned_u64 ptr_addr;
	__aligned_u64 doorbell_addr;
	__u32 gpu_id;
	__u32 queue_id;
};
#define TPLAN_IOC_QUEUE_ATTACH_KFD _IO(TPLAN_TYPE, TPLAN_CMD_QUEUE_ATTACH_KFD)

#ifdef __cplusplus
}
#endif

#endif /* _UAPI_TPLAN_H */
