# SPDX-License-Identifier: MIT
"""Triggered plans, in the names of the spec's ``iris.experimental.plan``.

    from tplan.plan import TriggeredPlan, TriggeredView, tile_chunks

    with TriggeredPlan(ctx, out, schedule) as plan:  # collective: gates, round 1
        for step in range(steps):
            handle = plan.start()
            producer(handle)                # TriggeredView.initialize(handle).mark_ready(chunk)
            plan.wait()                     # every chunk delivered everywhere
            ...                             # read this round's data
            plan.next_round()               # local: done reading

Or the consumer says it has read the round itself, and the host re-arms
without waiting for it: ``plan.next_round(release=False)``, then the
consumer's ``TriggeredView.initialize(handle).release()`` once it has read.

:class:`TriggeredView` here is the CPU one (a producer or consumer thread
of the host); Triton kernels use :class:`tplan.triton.TriggeredView`, which
reads the same handle.
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_uint32, c_void_p
from dataclasses import dataclass
from typing import Optional

from .. import _lib
from .._lib import TplanError
from .schedule import Region, Schedule, Tensor, TensorLike, chunks, tile_chunks, whole

# enum tplan_plan_states
EMPTY, PREPARED, DONE, FAILED, CLOSING, CLOSED = range(6)
STATE_NAMES = ("EMPTY", "PREPARED", "DONE", "FAILED", "CLOSING", "CLOSED")
# enum tplan_shortfall_kind
SHORT_MARKS, SHORT_EXTRA_MARKS, SHORT_ARRIVAL = 1, 2, 3

DEFAULT_TIMEOUT_MS = 0  # the kernel's default (TPLAN_TIMEOUT_DEFAULT_MS)


@dataclass(frozen=True)
class Shortfall:
    """One count a wait found off: a chunk (global index, and as its owner's
    rank and chunk), where it was read, what kind, and by how much."""

    chunk: int
    owner: int
    owner_chunk: int
    rank: int
    what: str  # "marks", "extra marks" or "arrival"
    have: int
    want: int


class PlanWaitError(TplanError):
    """wait() failed; with ETIMEDOUT or EOVERFLOW, ``shortfall`` lists the
    chunks still short (or over) and by how much."""

    def __init__(self, err: int, call: str, detail: str, shortfall: list[Shortfall]):
        super().__init__(err, call, detail)
        self.shortfall = shortfall


class Handle:
    """A round's handle (struct tplan_handle): what a producer needs.  Its
    bytes, :meth:`tobytes`, are what a GPU kernel reads (copy them to
    device memory and pass the pointer to ``tplan.triton.TriggeredView``)."""

    def __init__(self, c: _lib.tplan_handle):
        self._c = c

    round = property(lambda self: self._c.round)
    rank = property(lambda self: self._c.rank)
    world_size = property(lambda self: self._c.world_size)
    nchunks = property(lambda self: self._c.nchunks)
    total_chunks = property(lambda self: self._c.total_chunks)
    gates = property(lambda self: self._c.gates)

    @property
    def chunk_base(self) -> list[int]:
        """Rank r's chunk c is global chunk chunk_base[r] + c."""
        return list(self._c.chunk_base[: self.world_size + 1])

    def tobytes(self) -> bytes:
        return ctypes.string_at(ctypes.addressof(self._c), ctypes.sizeof(self._c))

    def __repr__(self) -> str:
        return "Handle(round=%d, rank=%d, nchunks=%d, total_chunks=%d)" % (
            self.round,
            self.rank,
            self.nchunks,
            self.total_chunks,
        )


class TriggeredView:
    """The producer and consumer side for a CPU thread: the device header's
    host build (libtplan's tplan_handle_*), so the ordering is its C11
    one.  Each thread that calls it is a CTA of one thread."""

    DEFAULT_POLLS = 1 << 62

    def __init__(self, handle: Handle):
        self._handle = handle
        self._c = handle._c
        self._lib = _lib.lib()

    @classmethod
    def initialize(cls, handle: Handle) -> "TriggeredView":
        return cls(handle)

    def mark_ready(self, chunk: int) -> None:
        """Mark this rank's chunk ready for the round, after this thread's
        writes to it (its programs mark it `writers` times in all)."""
        _lib.check(self._lib.tplan_handle_mark_ready(byref(self._c), chunk), "mark_ready")

    def _src(self, chunk: int, src: Optional[int]) -> tuple[int, int]:
        if src is not None:
            return src, chunk
        base = self._handle.chunk_base
        for r in range(self._handle.world_size):
            if base[r] <= chunk < base[r + 1]:
                return r, chunk - base[r]
        raise _lib.TplanError(22, "arrived", "global chunk %d of %d" % (chunk, base[-1]))

    def arrived(self, chunk: int, src: Optional[int] = None) -> bool:
        """Has chunk arrived here this round?  chunk is a global chunk index
        (``handle.chunk_base[src] + c``), or rank src's chunk when src is
        given.  For this rank's own chunks: have all its writers marked?"""
        s, c = self._src(chunk, src)
        return bool(_lib.check(self._lib.tplan_handle_arrived(byref(self._c), s, c), "arrived"))

    def wait(self, chunk: int, src: Optional[int] = None, max_polls: int = DEFAULT_POLLS) -> None:
        """Poll as arrived() does until it is true, at most max_polls times;
        raises TplanError(ETIMEDOUT) after that."""
        s, c = self._src(chunk, src)
        _lib.check(self._lib.tplan_handle_wait(byref(self._c), s, c, max_polls), "wait")

    def release(self) -> None:
        """This thread has finished reading the round's data: peers' copies
        of the next round may land in the buffer (the spec's contract point
        6), for a plan re-armed with ``next_round(release=False)``.  Once
        per round, after the last read; raises this rank's release word to
        the round with release ordering (tplan_handle_release()), and the
        word only grows.  Needs libtplan 0.3."""
        _lib.check(_lib.call("tplan_handle_release")(byref(self._c)), "release")


class TriggeredPlan:
    """A plan over `out` (a NumPy array in the heap, the same offset on every
    rank) sending this rank's `schedule` to every peer, round after round.
    Creating it is collective: it allocates the gates and prepares round 1
    on every rank or on none.  `own` is the part of out the schedule sends
    from (default: the span of its regions)."""

    def __init__(self, ctx, out: TensorLike, schedule: Optional[Schedule] = None, *, own=None, _plan: Optional[int] = None):
        self._ctx = ctx
        self._lib = _lib.lib()
        self._chunk_base: list[int] = []
        if _plan is not None:
            self._plan: Optional[int] = _plan
            return
        t = Tensor.of(out)
        if own is None:
            own_off, own_bytes = _span(schedule)
        elif isinstance(own, tuple):
            own_off, own_bytes = own
        else:
            o = Tensor.of(own)
            own_off, own_bytes = o.offset, o.nbytes_span
        p = c_void_p()
        ctx._check(
            self._lib.tplan_plan_create(
                ctx._c(), t.offset, t.nbytes_span, own_off, own_bytes, schedule._handle() if schedule else None, byref(p)
            ),
            "tplan_plan_create",
        )
        self._plan = p.value

    def _p(self) -> int:
        if not self._plan:
            raise ValueError("the plan is closed")
        return self._plan

    def start(self) -> Handle:
        """Start the prepared round: the handle a producer marks chunks through."""
        h = _lib.tplan_handle()
        self._ctx._check(self._lib.tplan_plan_start(self._p(), byref(h)), "tplan_plan_start")
        handle = Handle(h)
        self._chunk_base = handle.chunk_base
        return handle

    def wait(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        """Wait for the round: this rank's chunks marked exactly writers times
        and arrived everywhere, every other chunk arrived here.  Raises
        PlanWaitError naming the chunks short (ETIMEDOUT) or over (EOVERFLOW)."""
        ret = self._lib.tplan_plan_wait(self._p(), timeout_ms)
        if ret < 0:
            detail = self._ctx.error()
            raise PlanWaitError(-ret, "tplan_plan_wait", detail, self.shortfall())

    def shortfall(self) -> list[Shortfall]:
        """The last wait's shortfall report (empty after a successful wait)."""
        n = c_uint32()
        rep = self._lib.tplan_plan_shortfall(self._p(), byref(n))
        out = []
        kinds = {SHORT_MARKS: "marks", SHORT_EXTRA_MARKS: "extra marks", SHORT_ARRIVAL: "arrival"}
        bases = self._bases()
        for i in range(n.value if rep else 0):
            s = rep[i]
            owner = max((r for r in range(len(bases) - 1) if bases[r] <= s.chunk), default=0)
            first = bases[owner] if bases else 0
            out.append(Shortfall(s.chunk, owner, s.chunk - first, s.rank, kinds.get(s.what, str(s.what)), s.have, s.want))
        return out

    def _bases(self) -> list[int]:
        # The plan's chunk bases, from the round's handle (a wait follows a start).
        return self._chunk_base

    def next_round(self, release: bool = True) -> None:
        """Queue the next round on this rank's queues; local, it waits for
        no other rank.  release=True: done reading this round, released
        here.  release=False: not released; the consumer releases it once
        it has read it (``TriggeredView.release()``, here or in a Triton
        kernel, or tplan_release() on a GPU), so the host need not wait for
        the reader (libtplan 0.3).  Until then, peers' copies of the next
        round into this rank wait on their engines."""
        if release:
            self._ctx._check(self._lib.tplan_plan_next_round(self._p()), "tplan_plan_next_round")
        else:
            self._ctx._check(_lib.call("tplan_plan_next_round_unreleased")(self._p()),
                             "tplan_plan_next_round_unreleased")

    @property
    def state(self) -> str:
        st, rd = c_uint32(), c_uint32()
        self._ctx._check(self._lib.tplan_plan_state(self._p(), byref(st), byref(rd)), "tplan_plan_state")
        return STATE_NAMES[st.value] if st.value < len(STATE_NAMES) else str(st.value)

    @property
    def round(self) -> int:
        st, rd = c_uint32(), c_uint32()
        self._ctx._check(self._lib.tplan_plan_state(self._p(), byref(st), byref(rd)), "tplan_plan_state")
        return rd.value

    def close(self) -> str:
        """Close (collective); queued copies drain as they stand.  Returns
        "CLOSED", or "CLOSING" when its copies wait behind an earlier plan's
        (closing that one finishes it).  The plan is freed either way."""
        if not self._plan:
            return "CLOSED"
        st = c_uint32()
        p, self._plan = self._plan, None
        self._ctx._check(self._lib.tplan_plan_close(p, byref(st)), "tplan_plan_close")
        return STATE_NAMES[st.value]

    def __enter__(self) -> "TriggeredPlan":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # Closes on an exception too; a failing close does not hide it.
        if exc_type is None:
            self.close()
        else:
            try:
                self.close()
            except TplanError:
                pass

    def __del__(self):
        # A plan left open is closed by the kernel when the file closes; a
        # collective close from a finalizer could block, so none here.
        pass


def _span(schedule: Optional[Schedule]) -> tuple[int, int]:
    """The bytes a schedule's regions span: the plan's own part."""
    lo, hi = None, None
    for regions, _w in schedule or ():
        for r in regions:
            end = r.offset + (r.rows - 1) * r.pitch + r.width
            lo = r.offset if lo is None else min(lo, r.offset)
            hi = end if hi is None else max(hi, end)
    return (0, 0) if lo is None else (lo, hi - lo)


def prepare_all_gather(ctx, out: TensorLike, schedule: Optional[Schedule] = None, *, programs: Optional[int] = None) -> TriggeredPlan:
    """The in-place all-gather (collective): out holds world_size * R rows,
    rank r's are [r * R, (r + 1) * R) and it sends them to every peer.
    schedule must stay inside this rank's rows (checked).  Without one it
    sends them as one chunk, whole(), marked once per program: pass the
    producer's programs (default 1).  With one, its chunks carry their
    writers and programs must not be given."""
    t = Tensor.of(out)._c()
    if schedule is None:
        n = 1 if programs is None else programs
    else:
        n = 0 if programs is None else programs
    p = c_void_p()
    ctx._check(
        _lib.lib().tplan_prepare_all_gather_programs(
            ctx._c(), byref(t), schedule._handle() if schedule else None, n, byref(p)
        ),
        "prepare_all_gather",
    )
    return TriggeredPlan(ctx, out, _plan=p.value)


__all__ = [
    "TriggeredPlan",
    "TriggeredView",
    "Handle",
    "PlanWaitError",
    "Shortfall",
    "prepare_all_gather",
    "Schedule",
    "Region",
    "Tensor",
    "whole",
    "chunks",
    "tile_chunks",
]
