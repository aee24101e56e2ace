# SPDX-License-Identifier: MIT
"""Which heap an address lies in.

Schedules take NumPy arrays, as the spec's builders take tensors; an
array knows its address, not its heap offset.  Every joined Context
registers the mappings of every rank's heap here, and an address is
looked up among them.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional

_lock = threading.Lock()
# (start address, size, rank, weak reference to the Context)
_heaps: list[tuple[int, int, int, Any]] = []


@dataclass(frozen=True)
class Where:
    offset: int
    rank: int
    ctx: Optional[Any]


def register(ctx: Any, rank: int, start: int, size: int) -> None:
    with _lock:
        _heaps.append((start, size, rank, weakref.ref(ctx)))


def unregister(ctx: Any) -> None:
    with _lock:
        _heaps[:] = [h for h in _heaps if h[3]() is not None and h[3]() is not ctx]


def locate(addr: int) -> Where:
    """The heap offset, rank and Context of the byte at addr."""
    with _lock:
        for start, size, rank, ref in _heaps:
            if start <= addr < start + size and ref() is not None:
                return Where(addr - start, rank, ref())
    raise ValueError(
        "address %#x is in no tplan heap: allocate with ctx.zeros()/ctx.empty(), or describe it with tplan.Tensor" % addr
    )
