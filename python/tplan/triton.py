# SPDX-License-Identifier: MIT
"""Triton device functions: the producer and consumer side of a plan in a
Triton kernel, the same API as the device header (device/tplan_device.h).

    from tplan.triton import TriggeredView

    @triton.jit
    def producer(out, handle, ...):
        ...                                   # store this program's tile(s)
        TriggeredView.initialize(handle).mark_ready(chunk)

``handle`` is a pointer to the round's ``struct tplan_handle`` in memory the
GPU reads: ``plan.start().tobytes()`` copied to device memory (96 bytes:
the gate table's address, the round, the rank, the chunk bases).  The view
loads what it needs once, in ``initialize``.

Memory ordering: the spec's section, as the device header implements it.
Producer (``mark_ready``): every wave waits for its own vector-memory stores
(``s_waitcnt vmcnt(0)``; Triton 3.6's ``tl.debug_barrier()`` alone does not,
on gfx90a and gfx942), then the CTA barrier, so every store of the CTA is
done; then one release atomic add at system scope on the chunk's writer
counter, which writes back this XCD's L2 (``buffer_wbl2``) first; the
writer whose add completes the round's count then opens the gate
(``ready = round``, relaxed: it follows its own add's return).  Consumer
(``arrived``, ``wait``): the gate is read with one acquire atomic at system
scope (an invalidate follows it), whose result reaches every wave of the
CTA; ``wait`` counts polls and never reads a clock (contract 5).  A
consumer done reading the round (``release``, for a plan re-armed with
``next_round(release=False)``): every wave waits for its own loads (the
same ``s_waitcnt vmcnt(0)``: it counts loads too), the CTA barrier, then
one thread's release at system scope on this rank's release word (an add
of 0: ``buffer_wbl2`` first), the wait for its write-back, and a maximum
at system scope of the word with the round, which the peers' copy engines
poll.

tests/device/triton_isa_check.py compiles these for gfx90a and gfx942 and
reads that order in the machine code.
"""

import triton
import triton.language as tl
from triton.language.core import _aggregate as aggregate

# struct tplan_handle (device/tplan_device.h), in 32-bit words: gates is
# the u64 at word 0, then round, rank, world_size, nchunks, total_chunks,
# and chunk_base[TPLAN_HANDLE_MAX_RANKS + 1] from word 7.
H_ROUND: tl.constexpr = tl.constexpr(2)
H_RANK: tl.constexpr = tl.constexpr(3)
H_WORLD_SIZE: tl.constexpr = tl.constexpr(4)
H_NCHUNKS: tl.constexpr = tl.constexpr(5)
H_TOTAL_CHUNKS: tl.constexpr = tl.constexpr(6)
H_CHUNK_BASE: tl.constexpr = tl.constexpr(7)

# A gate row (uapi/tplan_chain.h): 64 bytes, eight u64 words; ready at
# word 0, arrival at 1, the writer counter at 2, the expected writers a u32
# at byte 24 (u32 word 6).
ROW_U64: tl.constexpr = tl.constexpr(8)
G_READY: tl.constexpr = tl.constexpr(0)
G_ARRIVAL: tl.constexpr = tl.constexpr(1)
G_WRITERS: tl.constexpr = tl.constexpr(2)
G_EXPECTED_U32: tl.constexpr = tl.constexpr(6)
# This rank's release word: u64 word 0 of row total_chunks, the row after
# every chunk's (TPLAN_GATE_RELEASED).
G_RELEASED: tl.constexpr = tl.constexpr(0)

EINVAL: tl.constexpr = tl.constexpr(22)
ETIMEDOUT: tl.constexpr = tl.constexpr(110)
POLLS_DEFAULT: tl.constexpr = tl.constexpr(1 << 62)

_constexpr_function = getattr(triton, "constexpr_function", lambda fn: fn)


@triton.jit
def _wait_vmem():
    # This wave's vector-memory loads and stores, buffer ones included, are
    # done.  Every wave runs it: the barrier after it then covers the CTA's.
    tl.inline_asm_elementwise("s_waitcnt vmcnt(0)", "=v", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _release_add(counter):
    # One thread of the CTA: release at system scope writes back this
    # XCD's L2 (buffer_wbl2) before the add.
    return tl.atomic_add(counter, 1, sem="release", scope="sys")


@triton.jit
def _release_max(word, value):
    # One thread of the CTA, as _release_add.  A release add of 0 at
    # system scope writes back this XCD's L2 (buffer_wbl2) and heads a
    # release sequence that the maximum continues; the maximum waits for
    # the write-back.  Not a release maximum: Triton 3.6's LLVM turns a
    # system-scope maximum into a compare-and-swap loop and drops the
    # s_waitcnt vmcnt(0) after the loop's buffer_wbl2 (fixed in LLVM by
    # PR 178316), so the word could reach memory before the write-back.
    tl.atomic_add(word, 0, sem="release", scope="sys")
    _wait_vmem()
    return tl.atomic_max(word, value, sem="relaxed", scope="sys")


@triton.jit
def _acquire_read(gate):
    # One atomic for the CTA, acquire at system scope: data read after it
    # is fresh (the L1/L2 invalidate follows it).
    return tl.atomic_add(gate, 0, sem="acquire", scope="sys")


@triton.jit
def _poll_pause():
    tl.inline_asm_elementwise("s_sleep 2", "=v", [], dtype=tl.int32, is_pure=False, pack=1)


@aggregate
class TriggeredView:
    """A round's handle as a Triton kernel uses it."""

    gates: tl.tensor  # pointer<uint64>: this rank's gate table
    chunk_base: tl.tensor  # pointer<uint32>: handle.chunk_base
    round: tl.tensor
    rank: tl.tensor
    world_size: tl.tensor
    first_chunk: tl.tensor
    nchunks: tl.tensor
    total_chunks: tl.tensor

    @_constexpr_function
    def __init__(self, gates, chunk_base, round, rank, world_size, first_chunk, nchunks, total_chunks):
        self.gates = gates
        self.chunk_base = chunk_base
        self.round = round
        self.rank = rank
        self.world_size = world_size
        self.first_chunk = first_chunk
        self.nchunks = nchunks
        self.total_chunks = total_chunks

    @staticmethod
    @triton.jit
    def initialize(handle):
        """The view of the handle at `handle` (a pointer to its bytes)."""
        h32 = tl.cast(handle, tl.pointer_type(tl.uint32))
        h64 = tl.cast(handle, tl.pointer_type(tl.int64))
        gates = tl.cast(tl.load(h64), tl.pointer_type(tl.uint64))
        rank = tl.load(h32 + H_RANK)
        chunk_base = h32 + H_CHUNK_BASE
        return TriggeredView(
            gates,
            chunk_base,
            tl.load(h32 + H_ROUND),
            rank,
            tl.load(h32 + H_WORLD_SIZE),
            tl.load(chunk_base + rank),
            tl.load(h32 + H_NCHUNKS),
            tl.load(h32 + H_TOTAL_CHUNKS),
        )

    @triton.jit
    def _row(self, gchunk):
        return self.gates + gchunk.to(tl.uint64) * ROW_U64

    @triton.jit
    def _marks(self, row):
        # What the writer counter reads once every writer of this round marked.
        expected = tl.load(tl.cast(row, tl.pointer_type(tl.uint32)) + G_EXPECTED_U32)
        return expected.to(tl.uint64) * self.round.to(tl.uint64)

    @triton.jit
    def mark_ready(self, chunk):
        """Mark this rank's chunk `chunk` ready for this round, after the
        CTA's stores to it.  The whole CTA calls it, outside divergent
        branches (contract 2).  0, or -EINVAL for a chunk out of range
        (nothing marked: the host's wait reports the shortfall)."""
        ret = tl.where(chunk < self.nchunks, 0, -EINVAL)
        if chunk < self.nchunks:
            row = self._row(self.first_chunk + chunk)
            want = self._marks(row)
            _wait_vmem()
            tl.debug_barrier()
            old = _release_add(row + G_WRITERS)
            # Every other writer's add (and write-back) came before ours,
            # and the gate opens only after ours returned: no release.
            if old + 1 == want:
                tl.atomic_xchg(row + G_READY, self.round.to(tl.uint64), sem="relaxed", scope="sys")
        return ret

    @triton.jit
    def _gate(self, chunk, src):
        # The global chunk: `chunk` itself, or rank src's chunk `chunk`.
        c = tl.cast(chunk, tl.uint32)
        if src is None:
            g = c
            ok = g < self.total_chunks
        else:
            s = tl.cast(src, tl.uint32)
            ok = s < self.world_size
            s = tl.where(ok, s, 0)  # chunk_base has world_size + 1 entries
            first = tl.load(self.chunk_base + s)
            ok = ok & (c < tl.load(self.chunk_base + s + 1) - first)
            g = first + c
        return g, ok

    @triton.jit
    def _lookup(self, chunk, src):
        # What arrived() reads and the value it must reach: the arrival
        # gate and the round, or for this rank's own chunks (which no chain
        # sends here) the writer counter and this round's marks.
        g, ok = self._gate(chunk, src)
        row = self._row(tl.where(ok, g, 0))
        own = (g >= self.first_chunk) & (g < self.first_chunk + self.nchunks)
        gate = tl.where(own, row + G_WRITERS, row + G_ARRIVAL)
        want = tl.where(own, self._marks(row), self.round.to(tl.uint64))
        return gate, want, ok

    @triton.jit
    def arrived(self, chunk, src=None):
        """Has chunk arrived here this round: 1 or 0 (the same in every
        wave), or -EINVAL out of range.  chunk is a global chunk index
        (``chunk_base[src] + c``), or with src, rank src's chunk.  For this
        rank's own chunks: have all their writers marked them?  One atomic,
        whose result reaches every wave (contract 5: call it uniformly)."""
        gate, want, ok = self._lookup(chunk, src)
        got = (_acquire_read(gate) >= want).to(tl.int32)
        return tl.where(ok, got, -EINVAL)

    @triton.jit
    def wait(self, chunk, src=None, max_polls=POLLS_DEFAULT):
        """Poll as arrived() does until it says 1, at most max_polls times
        (at least once): 0, -ETIMEDOUT, or -EINVAL.  The bound is a count of
        polls, the same in every wave, never a clock (contract 5)."""
        gate, want, ok = self._lookup(chunk, src)
        got = ok & (_acquire_read(gate) >= want)
        polls = tl.full((), 1, tl.int64)
        while ok & (got == 0) & (polls < max_polls):
            _poll_pause()
            got = _acquire_read(gate) >= want
            polls += 1
        return tl.where(ok, tl.where(got, 0, -ETIMEDOUT), -EINVAL)

    @triton.jit
    def release(self):
        """This rank has finished reading the round's data: peers' copies
        of the next round may land in the buffer (contract 6, from the
        device), for a plan re-armed with ``next_round(release=False)``.
        Once per round, from the program that reads last (or a one-program
        kernel launched after the readers on their stream), by the whole
        program.  The release word only grows (a maximum), so a release
        after the plan's close changes nothing."""
        word = self.gates + self.total_chunks.to(tl.uint64) * ROW_U64 + G_RELEASED
        _wait_vmem()
        tl.debug_barrier()
        _release_max(word, self.round.to(tl.uint64))
