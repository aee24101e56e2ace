# SPDX-License-Identifier: MIT
"""The context: one open file of /dev/tplan, one rank once it joins a
group, and the symmetric heap with NumPy views of every rank's heap."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_uint64, c_void_p
from typing import Optional

from . import _heap, _lib
from ._lib import TplanError, check

ENGINE_SOFT = 1  # TPLAN_ENGINE_SOFT
ENGINE_KFD = 2  # TPLAN_ENGINE_KFD
SDMA_440 = 0x040400  # TPLAN_SDMA_440: MI200, gfx90a
SDMA_442 = 0x040402  # TPLAN_SDMA_442: MI300, gfx942
COPY_MAX_BYTES = 1 << 30  # a COPY_LINEAR's count field


class Context:
    """``Context(heap_size, key=..., world_size=..., rank=...)`` opens
    /dev/tplan and joins the group (returns once every rank has joined);
    ``Context()`` only opens it (:meth:`info`, then :meth:`join`).

    Every rank of a group passes the same key, world_size and heap_size
    and a distinct rank.  Close it with :meth:`close` or a ``with`` block;
    closing a rank's context leaves the group, which breaks it for the
    others (their collectives then fail with ECONNRESET)."""

    def __init__(
        self,
        heap_size: Optional[int] = None,
        *,
        key: Optional[int] = None,
        world_size: Optional[int] = None,
        rank: Optional[int] = None,
        path: Optional[str] = None,
        timeout_ms: int = 0,
        sdma_ip: int = 0,
        engine: int = 0,
    ):
        lib = _lib.lib()
        p = c_void_p()
        ret = lib.tplan_ctx_open(byref(p), path.encode() if path else None)
        if ret < 0:
            raise TplanError(-ret, "tplan_ctx_open", "opening %s" % (path or "/dev/tplan"))
        self._ctx: Optional[int] = p.value
        self._sdma_ip = sdma_ip
        self._info: Optional[_lib.tplan_info] = None
        self.ccl = _Ccl(self)
        if heap_size is not None:
            if key is None or world_size is None or rank is None:
                self.close()
                raise TypeError("joining needs key, world_size and rank")
            try:
                self.join(key, world_size, rank, heap_size, timeout_ms=timeout_ms, sdma_ip=sdma_ip,
                          engine=engine)
            except BaseException:
                self.close()
                raise

    # ---- the file ----------------------------------------------------------

    def _c(self) -> int:
        if not self._ctx:
            raise ValueError("the context is closed")
        return self._ctx

    def _check(self, ret: int, call: str) -> int:
        return check(ret, call, self._ctx)

    def error(self) -> str:
        """The detail of the last failure on this context (tplan_ctx_error)."""
        raw = _lib.lib().tplan_ctx_error(self._c())
        return raw.decode(errors="replace") if raw else ""

    def close(self) -> None:
        """Close the file: leaves the group (end a job with a barrier first)."""
        if self._ctx:
            _heap.unregister(self)
            _lib.lib().tplan_ctx_close(self._ctx)
            self._ctx = None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def fileno(self) -> int:
        return _lib.lib().tplan_ctx_fd(self._c())

    def info(self) -> dict:
        """The module's capabilities (struct tplan_info) as a dict."""
        if self._info is None:
            info = _lib.tplan_info()
            self._check(_lib.lib().tplan_query_info(self._c(), byref(info)), "tplan_query_info")
            self._info = info
        return {name: getattr(self._info, name) for name, _ in _lib.tplan_info._fields_ if not name.startswith("_")}

    @property
    def max_copy_bytes(self) -> int:
        """The engine's largest COPY_LINEAR for the SDMA IP joined with."""
        info = self.info()
        m = info["max_copy_bytes_sdma442"] if self._sdma_ip == SDMA_442 else info["max_copy_bytes_sdma440"]
        return m or COPY_MAX_BYTES

    # ---- the group ---------------------------------------------------------

    def join(self, key: int, world_size: int, rank: int, heap_size: int, *, timeout_ms: int = 0, sdma_ip: int = 0,
             engine: int = 0) -> None:
        """Join the group and map every rank's heap.  engine: ENGINE_SOFT,
        ENGINE_KFD, or 0 for the library's choice (tplan_ctx_engine(3))."""
        params = _lib.tplan_join_params(key, world_size, rank, heap_size, engine, sdma_ip, timeout_ms)
        self._sdma_ip = sdma_ip
        self._check(_lib.lib().tplan_ctx_join(self._c(), byref(params)), "tplan_ctx_join")
        size = self.heap_size
        for r in range(world_size):
            _heap.register(self, r, _lib.lib().tplan_heap_ptr(self._ctx, r), size)

    @property
    def rank(self) -> int:
        return self._check(_lib.lib().tplan_ctx_rank(self._c()), "tplan_ctx_rank")

    @property
    def world_size(self) -> int:
        return self._check(_lib.lib().tplan_ctx_world_size(self._c()), "tplan_ctx_world_size")

    @property
    def engine(self) -> int:
        """ENGINE_SOFT or ENGINE_KFD: the engine joined with.  Since libtplan 0.5."""
        return self._check(_lib.call("tplan_ctx_engine")(self._c()), "tplan_ctx_engine")

    # Iris's spellings.
    def get_rank(self) -> int:
        return self.rank

    def get_num_ranks(self) -> int:
        return self.world_size

    def barrier(self, timeout_ms: int = 0) -> None:
        """Wait until every rank called it."""
        self._check(_lib.lib().tplan_barrier(self._c(), timeout_ms), "tplan_barrier")

    def all_gather_bytes(self, data: bytes, timeout_ms: int = 0) -> list[bytes]:
        """Every rank's `data` (the same length everywhere, small)."""
        n = len(data)
        out = ctypes.create_string_buffer(n * self.world_size)
        self._check(_lib.lib().tplan_all_gather(self._c(), data, n, out, timeout_ms), "tplan_all_gather")
        return [out.raw[r * n : (r + 1) * n] for r in range(self.world_size)]

    # ---- the symmetric heap ------------------------------------------------

    @property
    def heap_size(self) -> int:
        return _lib.lib().tplan_heap_size(self._c())

    def heap_bases(self) -> list[int]:
        """Every rank's heap as this process maps it (addresses)."""
        return [_lib.lib().tplan_heap_ptr(self._c(), r) for r in range(self.world_size)]

    def heap_devaddr(self, rank: Optional[int] = None) -> int:
        """Rank `rank`'s heap's device address, as this rank's packets (and
        GPU kernels on the KFD engine) address it: in this rank's own
        address map, valid on this rank only. Never send it to another
        rank; exchange heap offsets instead."""
        return _lib.lib().tplan_heap_devaddr(self._c(), self.rank if rank is None else rank)

    def heap(self, rank: Optional[int] = None):
        """Rank `rank`'s whole heap (default: this rank's) as a NumPy uint8
        array; every rank's heap is mapped in every rank."""
        import numpy as np

        r = self.rank if rank is None else rank
        if not 0 <= r < self.world_size:
            raise IndexError("rank %d of %d" % (r, self.world_size))
        ptr = _lib.lib().tplan_heap_ptr(self._c(), r)
        buf = (ctypes.c_uint8 * self.heap_size).from_address(ptr)
        return np.frombuffer(buf, dtype=np.uint8)

    def alloc(self, nbytes: int, align: int = 0) -> int:
        """The symmetric allocator: a heap offset valid on every rank when
        every rank makes the same calls."""
        off = c_uint64()
        self._check(_lib.lib().tplan_heap_alloc(self._c(), nbytes, align, byref(off)), "tplan_heap_alloc")
        return off.value

    def empty(self, *shape, dtype="float32", align: int = 0):
        """A NumPy array allocated in this rank's heap (the same offset on
        every rank: see :meth:`on_rank`)."""
        import numpy as np

        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        dt = np.dtype(dtype)
        count = 1
        for s in shape:
            count *= s
        off = self.alloc(max(count * dt.itemsize, 1), align)
        return self.heap()[off : off + count * dt.itemsize].view(dt).reshape(shape)

    def zeros(self, *shape, dtype="float32", align: int = 0):
        """:meth:`empty`, zeroed."""
        a = self.empty(*shape, dtype=dtype, align=align)
        a[...] = 0
        return a

    def offset_of(self, array) -> int:
        """The heap offset of an array's first element (a view in a heap)."""
        return _heap.locate(array.__array_interface__["data"][0]).offset

    def on_rank(self, array, rank: int):
        """The same bytes as `array` (a view in a heap) in rank `rank`'s heap."""
        import numpy as np

        where = _heap.locate(array.__array_interface__["data"][0])
        return np.ndarray(array.shape, array.dtype, buffer=self.heap(rank), offset=where.offset, strides=array.strides)

    def reset_heap(self) -> None:
        """Start the symmetric allocator over (collectively: every rank)."""
        _lib.lib().tplan_heap_reset(self._c())

    # ---- host copies ---------------------------------------------------------

    def put(self, peer: int, src_offset: int, dst_offset: int, nbytes: int) -> None:
        """Queue a copy to peer's heap on the (this rank -> peer) queue."""
        self._check(_lib.lib().tplan_put(self._c(), peer, src_offset, dst_offset, nbytes), "tplan_put")

    def quiet(self, peer: int, timeout_ms: int = 0) -> None:
        """Wait until everything queued to peer has executed."""
        self._check(_lib.lib().tplan_quiet(self._c(), peer, timeout_ms), "tplan_quiet")

    def set_rounds_ahead(self, rounds: int) -> None:
        """Plans created from now on keep ``rounds`` rounds armed (1..64; 1,
        the default, one at a time).  With more, start, a wait that finds
        the round complete and the release run in user space, and the
        kernel is called once per ``rounds`` rounds
        (``tplan_ctx_set_rounds_ahead(3)``).  Since libtplan 0.4."""
        self._check(_lib.call("tplan_ctx_set_rounds_ahead")(self._c(), rounds),
                    "tplan_ctx_set_rounds_ahead")

    @property
    def ioctls(self) -> int:
        """The ioctls this context made on /dev/tplan (its host's system calls)."""
        return _lib.call("tplan_ctx_ioctls")(self._c())

    def queue_info(self, peer: int) -> dict:
        q = _lib.tplan_queue_info()
        q.size = ctypes.sizeof(q)
        self._check(_lib.lib().tplan_queue_info(self._c(), peer, byref(q)), "tplan_queue_info")
        return {name: getattr(q, name) for name, _ in q._fields_}


class _Ccl:
    """``ctx.ccl``: the collectives built on plans (the spec's spelling)."""

    def __init__(self, ctx: Context):
        self._ctx = ctx

    def prepare_all_gather(self, out, schedule=None, *, programs: Optional[int] = None):
        from .plan import prepare_all_gather

        return prepare_all_gather(self._ctx, out, schedule, programs=programs)


__all__ = ["Context", "ENGINE_KFD", "ENGINE_SOFT", "SDMA_440", "SDMA_442"]
