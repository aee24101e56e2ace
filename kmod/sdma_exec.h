/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Executing one decoded SDMA packet in software: what tplan.ko's soft
 * engine (soft_engine.c) and the KFD stand-in of the tests
 * (selftests/kfd_standin) share.  Plain kernel C with nothing of tplan's
 * objects in it: the engine that calls it brings the memory (where a
 * device address is), what is its own (a FENCE, which may target its
 * pointer page; a TRAP) and what it does while a POLL waits (preemption,
 * doorbells, dropping what it holds before it sleeps).
 *
 * Both callers are kernel threads: a long copy stops at slice bounds when
 * kthread_should_stop() or the executor's stop says so, and a POLL looks
 * at them while it waits.
 */
#ifndef _TPLAN_SDMA_EXEC_H
#define _TPLAN_SDMA_EXEC_H

#include <linux/types.h>

#include "tplan_sdma.h"

/* What executing a packet came to. */
enum tplan_exec {
	TPLAN_EXEC_DONE,	/* advance past the packet */
	TPLAN_EXEC_AGAIN,	/* preempted in a POLL: execute it again */
	TPLAN_EXEC_STOP,	/* the thread is being stopped */
	TPLAN_EXEC_FAULT,	/* the packet cannot run: tplan_sdma_exec.fault says why */
};

struct tplan_sdma_exec;

/*
 * The engine's part.  translate, fence and poll_pause are required;
 * trap and landed may be NULL.
 */
struct tplan_sdma_exec_ops {
	/*
	 * The kernel address of [addr, addr + len) of the queue's device
	 * address space, all of it inside one buffer; NULL if it is not.
	 * Only valid until the next poll_pause().
	 */
	void *(*translate)(struct tplan_sdma_exec *x, u64 addr, u64 len);
	/* A FENCE writing data at addr: TPLAN_EXEC_DONE or _FAULT (x->fault set). */
	int (*fence)(struct tplan_sdma_exec *x, u64 addr, u32 data);
	/* A TRAP with its interrupt context. */
	void (*trap)(struct tplan_sdma_exec *x, u32 int_context);
	/* An ATOMIC changed memory: wake whoever waits on it. */
	void (*landed)(struct tplan_sdma_exec *x);
	/*
	 * A POLL is not satisfied yet and spun its while: do what the engine
	 * does meanwhile and sleep about sleep_ns.  TPLAN_EXEC_DONE to look
	 * again (translations are made anew), _AGAIN when the queue was
	 * preempted (the POLL keeps its retries and runs again), _STOP.
	 */
	int (*poll_pause)(struct tplan_sdma_exec *x, u64 sleep_ns);
};

/*
 * struct tplan_sdma_exec - one queue's executor, inside the engine's own
 * per-queue state (container_of() gets back to it).
 * @ops: the engine's part
 * @max_copy_bytes: the largest COPY_LINEAR byte count of the engine's IP
 * @fault: with TPLAN_EXEC_FAULT, why (enum tplan_queue_fault)
 * @stop: set by the engine: this queue is going (a thread serving several
 *        queues goes on with the others)
 * The rest is the POLL in progress, kept across preemptions.
 */
struct tplan_sdma_exec {
	const struct tplan_sdma_exec_ops *ops;
	u64 max_copy_bytes;
	u32 fault;
	bool stop;
	bool poll_active;
	u32 poll_retries;
	u64 poll_pos;
	u64 poll_next_retry;
};

/*
 * Execute packet p, which starts at queue position pos (a POLL resumed
 * after a preemption is known by it).  Returns enum tplan_exec.
 */
int tplan_sdma_exec(struct tplan_sdma_exec *x, const struct tplan_sdma_packet *p, u64 pos);

/* Sleep about ns without counting as load; kthread_stop() wakes it. */
void tplan_sdma_exec_sleep(u64 ns);

/* The POLL back-off: the first sleep, doubled each time up to the last. */
#define TPLAN_POLL_SLEEP_MIN_US	10
#define TPLAN_POLL_SLEEP_MAX_US	1000

/* Byte offset of element (x, y, z) of a sub-window. */
static inline u64 tplan_sdma_window_offset(const struct tplan_sdma_window *w, u32 esize,
					   u32 x, u32 y, u32 z)
{
	return ((u64)(w->z + z) * w->slice_pitch + (u64)(w->y + y) * w->pitch + w->x + x) * esize;
}

#endif /* _TPLAN_SDMA_EXEC_H */
