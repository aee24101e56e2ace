#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python bindings against /dev/tplan, as TAP (run in the test VM by
selftests/tplan_python.sh; exit 4 without the device).  Ranks are forked
processes, as in the C selftests; each test runs in every rank and fails
if any rank fails (or hangs past its alarm)."""

import errno
import os
import signal
import sys
import tempfile
import threading
import traceback

import numpy as np

import tplan
from tplan.plan import PlanWaitError, Region, Schedule, Tensor, TriggeredPlan, TriggeredView, chunks, tile_chunks, whole

WORLD = 3
HEAP = 4 << 20
ROWS, COLS = 24, 40  # per rank; uint32
TIMEOUT_MS = 20000
_key = [0]


def ranks(fn, world=WORLD):
    """fn(ctx) in `world` forked ranks, each joined; '' or the failures."""
    _key[0] += 1
    key = (0x7E58 << 48) | (os.getpid() << 16) | _key[0]
    tmp = tempfile.mkdtemp(prefix="tplan-py-")
    pids = []
    for r in range(world):
        pid = os.fork()
        if pid == 0:
            signal.alarm(120)  # a hang fails the test, never the run
            status = 0
            try:
                with tplan.Context(HEAP, key=key, world_size=world, rank=r, timeout_ms=TIMEOUT_MS) as ctx:
                    fn(ctx)
                    ctx.barrier(TIMEOUT_MS)  # nobody leaves (breaking the group) early
            except BaseException:
                with open(os.path.join(tmp, str(r)), "w") as f:
                    f.write(traceback.format_exc())
                status = 1
            os._exit(status)
        pids.append(pid)
    bad = []
    for r, pid in enumerate(pids):
        _, st = os.waitpid(pid, 0)
        if st:
            path = os.path.join(tmp, str(r))
            text = open(path).read().strip().splitlines() if os.path.exists(path) else ["status %#x" % st]
            bad.append("rank %d: %s" % (r, " | ".join(text[-3:])))
    return "; ".join(bad)


def value(rank, rnd, row, col):
    return (rank << 28) ^ (rnd << 20) ^ (row << 10) ^ col


def expect(rank, rnd, rows=ROWS, cols=COLS):
    r = np.arange(rows, dtype=np.uint32)[:, None]
    c = np.arange(cols, dtype=np.uint32)[None, :]
    return (np.uint32(rank << 28) ^ np.uint32(rnd << 20) ^ (r << 10) ^ c).astype(np.uint32)


def gathered(ctx):
    out = ctx.zeros(ctx.world_size * ROWS, COLS, dtype=np.uint32)
    mine = out[ctx.rank * ROWS:(ctx.rank + 1) * ROWS]
    return out, mine


def verify(out, world, rnd):
    for q in range(world):
        got = out[q * ROWS:(q + 1) * ROWS]
        if not np.array_equal(got, expect(q, rnd)):
            bad = np.argwhere(got != expect(q, rnd))[0]
            raise AssertionError("round %d: rank %d's row %d column %d is %#x" % (rnd, q, bad[0], bad[1], got[tuple(bad)]))


# ---- the tests ------------------------------------------------------------------


def t_version(_ctx):
    assert tplan.library_version() == tplan.__version__, (tplan.library_version(), tplan.__version__)


def t_errors_carry_errno_and_detail(ctx):
    try:
        tplan.Context(path="/dev/tplan-none")
        raise AssertionError("opened /dev/tplan-none")
    except tplan.TplanError as e:
        assert e.errno == errno.ENOENT and isinstance(e, OSError), e
    try:
        ctx.join(1, 2, 0, HEAP)
        raise AssertionError("joined twice")
    except tplan.TplanError as e:
        assert e.errno == errno.EALREADY and e.call == "tplan_ctx_join" and e.detail, (e.errno, e.detail)
    try:
        ctx.alloc(HEAP * 2)
        raise AssertionError("allocated twice the heap")
    except tplan.TplanError as e:
        assert e.errno == errno.ENOMEM, e
    out, mine = gathered(ctx)
    # A schedule and a program count: refused on every rank, with the reason.
    s = whole(mine, 2)
    try:
        ctx.ccl.prepare_all_gather(out, s, programs=2)
        raise AssertionError("schedule and programs accepted")
    except tplan.TplanError as e:
        assert e.errno == errno.EINVAL and "programs must be 0" in e.detail, (e.errno, e.detail)
    # Rank 1's schedule reads rank 2's rows: named by chunk and region.
    bad = Schedule()
    rows = out[((ctx.rank + 1) % ctx.world_size) * ROWS:][:4] if ctx.rank == 1 else mine[:4]
    bad.add_chunk([rows])
    try:
        ctx.ccl.prepare_all_gather(out, bad)
        raise AssertionError("a schedule outside the rank's rows accepted")
    except tplan.TplanError as e:
        assert e.errno == errno.EINVAL, e
        if ctx.rank == 1:
            assert "rank 1 chunk 0 region 0" in e.detail, e.detail


def t_heap_views_of_every_rank(ctx):
    a = ctx.zeros(16, dtype=np.uint64)
    a[:] = ctx.rank + 100
    ctx.barrier()
    for q in range(ctx.world_size):
        assert (ctx.on_rank(a, q) == q + 100).all(), (q, ctx.on_rank(a, q))
        off = ctx.offset_of(a)
        assert ctx.heap(q)[off:off + 8].view(np.uint64)[0] == q + 100
    # The symmetric allocator: the same offset on every rank.
    offs = ctx.all_gather_bytes(ctx.offset_of(a).to_bytes(8, "little"))
    assert len(set(offs)) == 1, offs


def run_rounds(ctx, out, mine, plan, produce, rounds=3):
    for rnd in range(1, rounds + 1):
        handle = plan.start()
        assert handle.round == rnd
        produce(TriggeredView.initialize(handle), rnd)
        plan.wait(TIMEOUT_MS)
        verify(out, ctx.world_size, rnd)
        for g in range(handle.total_chunks):
            assert TriggeredView.initialize(handle).arrived(g), g
        if rnd < rounds:
            plan.next_round()


def t_whole_default_with_three_programs(ctx):
    out, mine = gathered(ctx)

    def produce(view, rnd):
        def program(p):
            mine[p::3] = expect(ctx.rank, rnd)[p::3]
            view.mark_ready(0)

        ts = [threading.Thread(target=program, args=(p,)) for p in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    with ctx.ccl.prepare_all_gather(out, programs=3) as plan:
        run_rounds(ctx, out, mine, plan, produce)
        assert plan.state == "DONE"
    assert plan.close() == "CLOSED"


def t_rounds_armed_ahead_run_in_user_space(ctx):
    out, mine = gathered(ctx)

    def produce(view, rnd):
        mine[:] = expect(ctx.rank, rnd)
        view.mark_ready(0)

    ctx.set_rounds_ahead(4)
    with ctx.ccl.prepare_all_gather(out) as plan:
        before = ctx.ioctls
        starts = 0
        for rnd in range(1, 13):
            n = ctx.ioctls
            handle = plan.start()
            starts += ctx.ioctls - n
            assert handle.round == rnd
            produce(TriggeredView.initialize(handle), rnd)
            plan.wait(TIMEOUT_MS)
            verify(out, ctx.world_size, rnd)
            if rnd < 12:
                plan.next_round()
        # start never calls the kernel; next_round at rounds 4 and 8 only
        # (the waits may sleep in it once per round at most).
        assert starts == 0, starts
        assert ctx.ioctls - before <= 12 + 2, ctx.ioctls - before
        assert plan.state == "DONE"
    ctx.set_rounds_ahead(1)


def t_chunks_and_hand_built(ctx):
    out, mine = gathered(ctx)
    s = chunks(mine, 5, max_copy_bytes=96)
    assert len(s) == 5 and s.chunk(0)[1] == 1

    def rows_then_mark(view, rnd):
        for c in range(len(s)):
            mine[c * 5:(c + 1) * 5] = expect(ctx.rank, rnd)[c * 5:(c + 1) * 5]
            view.mark_ready(c)

    with TriggeredPlan(ctx, out, s, own=mine) as plan:
        run_rounds(ctx, out, mine, plan, rows_then_mark)
    # By hand: columns 1.. of the top half as a 2D window, column 0 of it,
    # then the bottom half as bytes.
    h = Schedule()
    assert h.add_chunk([mine[:12, 1:], mine[:12, :1]]) == 0
    assert h.add_chunk([Region.of(mine[12:])], writers=1) == 1
    assert h.chunk(0)[0][0].rows == 12

    def halves(view, rnd):
        mine[:12] = expect(ctx.rank, rnd)[:12]
        view.mark_ready(0)
        mine[12:] = expect(ctx.rank, rnd)[12:]
        view.mark_ready(1)

    with ctx.ccl.prepare_all_gather(out, h) as plan:
        run_rounds(ctx, out, mine, plan, halves)


def tile_of(step, tiles_m, tiles_n, group_m):
    per_group = group_m * tiles_n
    first_m = step // per_group * group_m
    rows = min(tiles_m - first_m, group_m)
    in_group = step % per_group
    return (first_m + in_group % rows) * tiles_n + in_group // rows


def t_tile_chunks_with_the_producer_order(ctx):
    out, mine = gathered(ctx)
    bm, bn, programs = 8, 16, 2
    tm, tn = -(-ROWS // bm), -(-COLS // bn)
    s = tile_chunks(mine, (bm, bn), programs, order=lambda i: tile_of(i, tm, tn, 2), base=out)
    assert len(s) == -(-tm * tn // programs)
    try:
        tile_chunks(mine, (bm, bn), programs, order=lambda i: 0)
        raise AssertionError("an order that repeats a tile accepted")
    except tplan.TplanError as e:
        assert e.errno == errno.EINVAL
    try:
        tile_chunks(mine, (bm, bn), programs, order=lambda i: 1 // 0)
        raise AssertionError("an order that raises accepted")
    except ZeroDivisionError:
        pass

    def produce(view, rnd):
        def program(p):
            for step in range(p, tm * tn, programs):
                t = tile_of(step, tm, tn, 2)
                r, c = t // tn * bm, t % tn * bn
                mine[r:r + bm, c:c + bn] = expect(ctx.rank, rnd)[r:r + bm, c:c + bn]
                view.mark_ready(step // programs)

        ts = [threading.Thread(target=program, args=(p,)) for p in range(programs)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    with TriggeredPlan(ctx, out, s) as plan:
        run_rounds(ctx, out, mine, plan, produce, rounds=4)


def t_with_block_closes_on_an_exception(ctx):
    out, mine = gathered(ctx)
    try:
        with ctx.ccl.prepare_all_gather(out) as plan:
            plan.start()
            raise KeyError("in the round")
    except KeyError:
        pass
    assert plan._plan is None
    # Nothing was left behind: a new plan runs.
    with ctx.ccl.prepare_all_gather(out) as plan:

        def produce(view, rnd):
            mine[:] = expect(ctx.rank, rnd)
            view.mark_ready(0)

        run_rounds(ctx, out, mine, plan, produce, rounds=2)


def t_wait_raises_with_the_shortfall(ctx):
    out, mine = gathered(ctx)
    with ctx.ccl.prepare_all_gather(out) as plan:
        h = plan.start()
        if ctx.rank:
            TriggeredView.initialize(h).mark_ready(0)
        try:
            plan.wait(300)
            raise AssertionError("a round with an unmarked chunk completed")
        except PlanWaitError as e:
            assert e.errno == errno.ETIMEDOUT and "timed out" in e.detail, (e.errno, e.detail)
            s = e.shortfall[0]
            assert (s.owner, s.owner_chunk, s.have, s.want) == (0, 0, 0, 1), e.shortfall
            assert s.what == ("marks" if ctx.rank == 0 else "arrival"), s
        # a host view's wait on rank 0's chunk times out too
        try:
            TriggeredView.initialize(h).wait(0, src=0, max_polls=10)
            raise AssertionError("waited for an unmarked chunk")
        except tplan.TplanError as e:
            assert e.errno == errno.ETIMEDOUT
        ctx.barrier()  # every rank has waited before rank 0's close sends it


def t_one_writer_and_two_programs_overflow(ctx):
    out, mine = gathered(ctx)
    with ctx.ccl.prepare_all_gather(out) as plan:
        view = TriggeredView.initialize(plan.start())
        view.mark_ready(0)
        view.mark_ready(0)
        try:
            plan.wait(TIMEOUT_MS)
            raise AssertionError("an extra mark passed")
        except PlanWaitError as e:
            assert e.errno == errno.EOVERFLOW, e
            assert e.shortfall[0].what == "extra marks" and e.shortfall[0].have == 2, e.shortfall
        ctx.barrier()


TESTS = [
    t_version,
    t_errors_carry_errno_and_detail,
    t_heap_views_of_every_rank,
    t_whole_default_with_three_programs,
    t_chunks_and_hand_built,
    t_tile_chunks_with_the_producer_order,
    t_with_block_closes_on_an_exception,
    t_wait_raises_with_the_shortfall,
    t_one_writer_and_two_programs_overflow,
    t_rounds_armed_ahead_run_in_user_space,
]


def main():
    print("TAP version 13")
    if not os.path.exists("/dev/tplan"):
        print("1..0 # SKIP no /dev/tplan (tplan.ko is not loaded)")
        return 4
    print("1..%d" % len(TESTS))
    failed = 0
    for n, t in enumerate(TESTS, 1):
        sys.stdout.flush()
        why = ranks(t)
        name = t.__name__[2:].replace("_", " ")
        print("%s %d python: %s%s" % ("not ok" if why else "ok", n, name, ": " + why if why else ""))
        failed += bool(why)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
