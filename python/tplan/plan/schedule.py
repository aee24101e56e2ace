# SPDX-License-Identifier: MIT
"""Schedules: the chunks one rank writes, in the order its producer
completes them (the spec's ``iris.experimental.plan.schedule``).

A tensor is a NumPy array in a tplan heap (``ctx.zeros(...)`` or a view of
one, such as ``out[rank * M:(rank + 1) * M]``): 2D, rows any stride,
elements contiguous.  A :class:`Tensor` describes one by heap offset where
no array is at hand.  The builders are libtplan's, so a schedule built here
is byte for byte the one a C program gets.
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_uint32, c_void_p
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence, Union

from .. import _lib
from .._heap import locate


@dataclass(frozen=True)
class Tensor:
    """A 2D tensor in the heap: rows x cols elements of elem_size bytes,
    rows pitch bytes apart (0: packed), element (0, 0) at heap offset."""

    offset: int
    rows: int
    cols: int
    elem_size: int
    pitch: int = 0

    @classmethod
    def of(cls, t: "TensorLike") -> "Tensor":
        if isinstance(t, Tensor):
            return t
        shape = tuple(t.shape)
        strides = tuple(t.strides)
        item = t.itemsize
        if len(shape) == 1:
            shape, strides = (1,) + shape, (shape[0] * item,) + strides
        if len(shape) != 2:
            raise ValueError("a schedule's tensor is 2D, not %dD" % len(shape))
        if shape[1] > 1 and strides[1] != item:
            raise ValueError("a schedule's tensor has contiguous elements (stride %d, element %d bytes)" % (strides[1], item))
        if shape[0] > 1 and strides[0] < shape[1] * item:
            raise ValueError("rows overlap (pitch %d below a row of %d bytes)" % (strides[0], shape[1] * item))
        where = locate(t.__array_interface__["data"][0])
        pitch = strides[0] if shape[0] > 1 else 0
        return cls(where.offset, shape[0], shape[1], item, pitch)

    def _c(self) -> _lib.tplan_tensor:
        return _lib.tplan_tensor(self.offset, self.rows, self.cols, self.elem_size, 0, self.pitch)

    @property
    def nbytes_span(self) -> int:
        """Bytes from element (0, 0) to the end of the last row."""
        row = self.cols * self.elem_size
        return (self.rows - 1) * (self.pitch or row) + row


# NumPy arrays in a heap, or Tensor descriptors.
TensorLike = Union[Tensor, "numpy.ndarray"]  # noqa: F821


@dataclass(frozen=True)
class Region:
    """One copy: a byte range (rows 1) or a 2D sub-window of rows rows,
    width bytes each, pitch bytes apart, at a heap offset; written at the
    same offset in every peer's heap."""

    offset: int
    width: int
    pitch: int = 0
    rows: int = 1

    @classmethod
    def of(cls, t: "TensorLike") -> "Region":
        """The bytes of a 2D tensor (a NumPy view in the heap)."""
        d = Tensor.of(t)
        row = d.cols * d.elem_size
        if d.rows == 1 or d.pitch == row:
            return cls(d.offset, d.rows * row)  # one byte range
        return cls(d.offset, row, d.pitch, d.rows)

    def _c(self) -> _lib.tplan_region:
        return _lib.tplan_region(self.offset, self.width, self.pitch, self.rows, 0)


class Schedule:
    """The chunks one rank writes.  ``Schedule()`` is empty (what a rank
    that sends nothing passes); :meth:`add_chunk` builds one by hand."""

    def __init__(self, _ptr: Optional[int] = None):
        if _ptr is None:
            p = c_void_p()
            _lib.check(_lib.lib().tplan_schedule_new(byref(p)), "tplan_schedule_new")
            _ptr = p.value
        self._ptr: Optional[int] = _ptr

    def add_chunk(self, regions: Iterable[Union[Region, "TensorLike"]], writers: int = 1) -> int:
        """Append a chunk of regions (Region, or arrays in the heap)
        completed by `writers` marks per round; returns its index."""
        regs = [r if isinstance(r, Region) else Region.of(r) for r in regions]
        arr = (_lib.tplan_region * max(len(regs), 1))(*[r._c() for r in regs])
        return _lib.check(
            _lib.lib().tplan_schedule_add_chunk(self._handle(), arr, len(regs), writers), "tplan_schedule_add_chunk"
        )

    def __len__(self) -> int:
        return _lib.lib().tplan_schedule_nchunks(self._handle())

    def chunk(self, index: int) -> tuple[list[Region], int]:
        """Chunk `index`'s regions and writers."""
        n, w = c_uint32(), c_uint32()
        regs = _lib.lib().tplan_schedule_chunk(self._handle(), index, byref(n), byref(w))
        if not regs:
            raise IndexError("chunk %d of a schedule of %d" % (index, len(self)))
        return [Region(r.offset, r.width, r.pitch, r.rows) for r in regs[: n.value]], w.value

    def __iter__(self):
        return (self.chunk(i) for i in range(len(self)))

    def __repr__(self) -> str:
        return "Schedule(%d chunks)" % len(self) if self._ptr else "Schedule(freed)"

    def _handle(self) -> int:
        if not self._ptr:
            raise ValueError("the schedule was freed")
        return self._ptr

    def free(self) -> None:
        if self._ptr:
            _lib.lib().tplan_schedule_free(self._ptr)
            self._ptr = None

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


def _built(call: str, fn, *args) -> Schedule:
    p = c_void_p()
    _lib.check(fn(*args, byref(p)), call)
    return Schedule(p.value)


def whole(mine: TensorLike, writers: int = 1) -> Schedule:
    """One chunk: the whole tensor, marked `writers` times per round (once
    per program of the producer)."""
    t = Tensor.of(mine)._c()
    return _built("tplan_schedule_whole", _lib.lib().tplan_schedule_whole, byref(t), writers)


def chunks(mine: TensorLike, rows_per_chunk: int, writers: int = 1, max_copy_bytes: Optional[int] = None) -> Schedule:
    """Row blocks of rows_per_chunk rows completed in order (the last may
    be shorter), each marked `writers` times; contiguous blocks are split
    into copies of at most max_copy_bytes (default: the engine's maximum
    for the tensor's context, or 1 GiB)."""
    d = Tensor.of(mine)
    if max_copy_bytes is None:
        max_copy_bytes = _max_copy_of(mine)
    t = d._c()
    return _built(
        "tplan_schedule_chunks", _lib.lib().tplan_schedule_chunks, byref(t), rows_per_chunk, writers, max_copy_bytes
    )


def tile_chunks(
    mine: TensorLike,
    tile: Sequence[int],
    tiles_per_chunk: int,
    order: Optional[Callable[[int], int]] = None,
    base: Optional[TensorLike] = None,
) -> Schedule:
    """Consecutive tiles of a tiled producer: mine cut into tile[0] x
    tile[1] tiles; chunk j holds the tiles of steps j * tiles_per_chunk ..
    (j + 1) * tiles_per_chunk - 1, one region per tile, each tile one mark.
    order(step) is the row-major index of the tile the producer writes at
    that step: pass the kernel's own mapping (for Triton, ``tile_of.fn``).
    base is the tensor mine is a view of (the regions use its pitch)."""
    bm, bn = tile
    t = Tensor.of(mine)._c()
    b = Tensor.of(base)._c() if base is not None else None
    failure: list[BaseException] = []

    def call(step: int, _arg) -> int:
        if failure:
            return 0xFFFFFFFF
        try:
            return int(order(step)) & 0xFFFFFFFF
        except BaseException as e:  # re-raised below, not lost in ctypes
            failure.append(e)
            return 0xFFFFFFFF

    fn = _lib.tile_order_fn(call) if order is not None else _lib.tile_order_fn()
    try:
        return _built(
            "tplan_schedule_tile_chunks",
            _lib.lib().tplan_schedule_tile_chunks,
            byref(t),
            bm,
            bn,
            tiles_per_chunk,
            fn,
            None,
            byref(b) if b is not None else None,
        )
    except _lib.TplanError:
        if failure:
            raise failure[0]
        raise


def _max_copy_of(t: TensorLike) -> int:
    if isinstance(t, Tensor):
        return 0
    ctx = locate(t.__array_interface__["data"][0]).ctx
    return ctx.max_copy_bytes if ctx is not None else 0


__all__ = ["Tensor", "Region", "Schedule", "whole", "chunks", "tile_chunks"]
