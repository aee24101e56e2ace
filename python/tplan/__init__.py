# SPDX-License-Identifier: MIT
"""tplan: triggered plans from Python.

A GPU kernel (or a CPU thread) marks chunks of its output ready; copy-engine
chains prepared ahead of time by the host copy each chunk to every peer and
signal its arrival there.  These are the bindings of libtplan, in the names
of the spec's Python API (``iris.experimental.plan``):

    import tplan
    from tplan.plan import TriggeredPlan, TriggeredView, tile_chunks

    ctx = tplan.Context(heap_size, key=key, world_size=world_size, rank=rank)
    out = ctx.zeros(world_size * M, N, dtype="float32")
    mine = out[rank * M:(rank + 1) * M]
    schedule = tile_chunks(mine, (BM, BN), tiles_per_chunk=num_programs, base=out)
    with TriggeredPlan(ctx, out, schedule) as plan:
        ...

Every library error is a :class:`TplanError` (an OSError) carrying the
errno and the library's detail text.  ``tplan.triton`` has the device
functions for Triton kernels.
"""

from ._lib import LibraryNotFound, TplanError
from .context import SDMA_440, SDMA_442, Context
from .plan import (
    Handle,
    PlanWaitError,
    Region,
    Schedule,
    Shortfall,
    Tensor,
    TriggeredPlan,
    TriggeredView,
    chunks,
    prepare_all_gather,
    tile_chunks,
    whole,
)

__version__ = "0.5.0"


def library_version() -> str:
    """The version of the libtplan these bindings loaded ("MAJOR.MINOR.PATCH")."""
    from . import _lib

    return _lib.lib().tplan_version().decode()


def library_path() -> str:
    from . import _lib

    return _lib.lib()._name


__all__ = [
    "__version__",
    "library_version",
    "library_path",
    "TplanError",
    "LibraryNotFound",
    "Context",
    "SDMA_440",
    "SDMA_442",
    "Handle",
    "PlanWaitError",
    "Shortfall",
    "TriggeredPlan",
    "TriggeredView",
    "prepare_all_gather",
    "Schedule",
    "Region",
    "Tensor",
    "whole",
    "chunks",
    "tile_chunks",
]
