# SPDX-License-Identifier: MIT
"""libtplan through ctypes: the library, its structs, and its errors.

ctypes (the standard library) rather than cffi: the package is then pure
Python, so it installs with no compiler and no build dependency, and the
test VM needs nothing beyond the interpreter.  The structs below mirror
libtplan.h, uapi/tplan.h and device/tplan_device.h; tests/python checks
their sizes and offsets against the C compiler's.

The library is loaded on first use, so ``import tplan`` (and the Triton
device functions) work on a machine without it.
"""

from __future__ import annotations

import ctypes
import errno as _errno
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from typing import Optional

# The bindings need the calls of 0.2; newer ones are in _PROTOS_SINCE.
NEED_MAJOR, NEED_MINOR = 0, 2
SONAME = "libtplan.so.0"

HANDLE_MAX_RANKS = 16  # TPLAN_HANDLE_MAX_RANKS
GATE_ROW_BYTES = 64  # TPLAN_GATE_ROW_BYTES
GATE_READY, GATE_ARRIVAL, GATE_WRITERS, GATE_EXPECTED = 0, 8, 16, 24


class tplan_info(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("flags", c_uint32),
        ("abi_version", c_uint32),
        ("engines", c_uint32),
        ("ring_size", c_uint32),
        ("prep_limit_pct", c_uint32),
        ("max_world_size", c_uint32),
        ("_reserved", c_uint32),
        ("max_copy_bytes_sdma440", c_uint32),
        ("max_copy_bytes_sdma442", c_uint32),
    ]


class tplan_join_params(Structure):
    _fields_ = [
        ("key", c_uint64),
        ("world_size", c_uint32),
        ("rank", c_uint32),
        ("heap_size", c_uint64),
        ("engine", c_uint32),
        ("sdma_ip", c_uint32),
        ("timeout_ms", c_uint32),
    ]


class tplan_region(Structure):
    _fields_ = [
        ("offset", c_uint64),
        ("width", c_uint64),
        ("pitch", c_uint64),
        ("rows", c_uint32),
        ("_pad", c_uint32),
    ]


class tplan_tensor(Structure):
    _fields_ = [
        ("offset", c_uint64),
        ("rows", c_uint32),
        ("cols", c_uint32),
        ("elem_size", c_uint32),
        ("_pad", c_uint32),
        ("pitch", c_uint64),
    ]


class tplan_handle(Structure):
    _fields_ = [
        ("gates", c_uint64),
        ("round", c_uint32),
        ("rank", c_uint32),
        ("world_size", c_uint32),
        ("nchunks", c_uint32),
        ("total_chunks", c_uint32),
        ("chunk_base", c_uint32 * (HANDLE_MAX_RANKS + 1)),
    ]


class tplan_plan_shortfall(Structure):
    _fields_ = [
        ("chunk", c_uint32),
        ("rank", c_uint32),
        ("what", c_uint32),
        ("_reserved", c_uint32),
        ("have", c_uint64),
        ("want", c_uint64),
    ]


class tplan_queue_info(Structure):
    _fields_ = [
        ("size", c_uint32),
        ("peer", c_uint32),
        ("rptr", c_uint64),
        ("wptr", c_uint64),
        ("packets", c_uint64),
        ("ring_size", c_uint32),
        ("state", c_uint32),
        ("prep_charged", c_uint32),
        ("prep_limit", c_uint32),
        ("fault_offset", c_uint64),
        ("fault_dword", c_uint32),
        ("fault_reason", c_uint32),
        ("flags", c_uint32),
        ("_reserved", c_uint32),
        ("ring_mmap_offset", c_uint64),
        ("ptr_mmap_offset", c_uint64),
        ("gate_seq", c_uint32),
        ("done_seq", c_uint32),
        ("doorbells", c_uint64),
        ("prep_reserved", c_uint32),
        ("_reserved2", c_uint32),
    ]


tile_order_fn = CFUNCTYPE(c_uint32, c_uint32, c_void_p)

_P = POINTER
# name: (restype, argtypes)
_PROTOS = {
    "tplan_version": (c_char_p, []),
    "tplan_version_major": (c_int, []),
    "tplan_version_minor": (c_int, []),
    "tplan_ctx_open": (c_int, [_P(c_void_p), c_char_p]),
    "tplan_ctx_close": (None, [c_void_p]),
    "tplan_ctx_fd": (c_int, [c_void_p]),
    "tplan_query_info": (c_int, [c_void_p, _P(tplan_info)]),
    "tplan_ctx_error": (c_char_p, [c_void_p]),
    "tplan_ctx_join": (c_int, [c_void_p, _P(tplan_join_params)]),
    "tplan_ctx_rank": (c_int, [c_void_p]),
    "tplan_ctx_world_size": (c_int, [c_void_p]),
    "tplan_barrier": (c_int, [c_void_p, c_uint32]),
    "tplan_all_gather": (c_int, [c_void_p, c_void_p, c_size_t, c_void_p, c_uint32]),
    "tplan_heap_ptr": (c_void_p, [c_void_p, ctypes.c_uint]),
    "tplan_heap_devaddr": (c_uint64, [c_void_p, ctypes.c_uint]),
    "tplan_heap_size": (c_size_t, [c_void_p]),
    "tplan_heap_alloc": (c_int, [c_void_p, c_size_t, c_size_t, _P(c_uint64)]),
    "tplan_heap_reset": (None, [c_void_p]),
    "tplan_heap_gate_area": (c_uint64, [c_void_p]),
    "tplan_put": (c_int, [c_void_p, ctypes.c_uint, c_uint64, c_uint64, c_uint64]),
    "tplan_quiet": (c_int, [c_void_p, ctypes.c_uint, c_uint32]),
    "tplan_queue_info": (c_int, [c_void_p, ctypes.c_uint, _P(tplan_queue_info)]),
    "tplan_schedule_new": (c_int, [_P(c_void_p)]),
    "tplan_schedule_free": (None, [c_void_p]),
    "tplan_schedule_add_chunk": (c_int, [c_void_p, _P(tplan_region), c_uint32, c_uint32]),
    "tplan_schedule_nchunks": (c_uint32, [c_void_p]),
    "tplan_schedule_chunk": (_P(tplan_region), [c_void_p, c_uint32, _P(c_uint32), _P(c_uint32)]),
    "tplan_schedule_whole": (c_int, [_P(tplan_tensor), c_uint32, _P(c_void_p)]),
    "tplan_schedule_chunks": (c_int, [_P(tplan_tensor), c_uint32, c_uint32, c_uint64, _P(c_void_p)]),
    "tplan_schedule_tile_chunks": (
        c_int,
        [_P(tplan_tensor), c_uint32, c_uint32, c_uint32, tile_order_fn, c_void_p, _P(tplan_tensor), _P(c_void_p)],
    ),
    "tplan_plan_create": (c_int, [c_void_p, c_uint64, c_uint64, c_uint64, c_uint64, c_void_p, _P(c_void_p)]),
    "tplan_plan_start": (c_int, [c_void_p, _P(tplan_handle)]),
    "tplan_plan_wait": (c_int, [c_void_p, c_uint32]),
    "tplan_plan_shortfall": (_P(tplan_plan_shortfall), [c_void_p, _P(c_uint32)]),
    "tplan_plan_next_round": (c_int, [c_void_p]),
    "tplan_plan_state": (c_int, [c_void_p, _P(c_uint32), _P(c_uint32)]),
    "tplan_plan_close": (c_int, [c_void_p, _P(c_uint32)]),
    "tplan_prepare_all_gather": (c_int, [c_void_p, _P(tplan_tensor), c_void_p, _P(c_void_p)]),
    "tplan_prepare_all_gather_programs": (c_int, [c_void_p, _P(tplan_tensor), c_void_p, c_uint32, _P(c_void_p)]),
    "tplan_handle_mark_ready": (c_int, [_P(tplan_handle), c_uint32]),
    "tplan_handle_arrived": (c_int, [_P(tplan_handle), c_uint32, c_uint32]),
    "tplan_handle_wait": (c_int, [_P(tplan_handle), c_uint32, c_uint32, c_uint64]),
}

# Calls newer than NEED_MINOR, bound where the library has them: the
# symbol decides, not the version number.  name: (since, restype, argtypes)
_PROTOS_SINCE = {
    "tplan_plan_next_round_unreleased": ((0, 3), c_int, [c_void_p]),
    "tplan_handle_release": ((0, 3), c_int, [_P(tplan_handle)]),
    "tplan_ctx_set_rounds_ahead": ((0, 4), c_int, [c_void_p, c_uint32]),
    "tplan_ctx_ioctls": ((0, 4), c_uint64, [c_void_p]),
    "tplan_ctx_engine": ((0, 5), c_int, [c_void_p]),
}


class TplanError(OSError):
    """A libtplan call failed: ``errno`` is the library's errno, ``detail``
    the library's own text (``tplan_ctx_error()``), which names the call,
    and where the kernel said why, the rank, chunk, region and rule."""

    def __init__(self, err: int, call: str, detail: str = ""):
        super().__init__(err, os.strerror(err))
        self.call = call
        self.detail = detail

    def __str__(self) -> str:
        name = _errno.errorcode.get(self.errno, str(self.errno))
        text = "%s: [%s] %s" % (self.call, name, self.strerror)
        return text + (" (%s)" % self.detail if self.detail else "")


class LibraryNotFound(ImportError):
    pass


_lib: Optional[ctypes.CDLL] = None


def _candidates() -> list[str]:
    env = os.environ.get("TPLAN_LIBRARY")
    if env:
        return [env]
    # The dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache, /usr/lib),
    # then where "make install" puts it by default.
    return [SONAME, "/usr/local/lib/" + SONAME, "/usr/lib/" + SONAME]


def lib() -> ctypes.CDLL:
    """The loaded libtplan, its prototypes set; raises LibraryNotFound."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for name in _candidates():
        try:
            handle = ctypes.CDLL(name)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise LibraryNotFound(
            "libtplan not found (%s): run 'make install', or set TPLAN_LIBRARY to libtplan.so.0's path"
            % "; ".join(errors)
        )
    for fname, (restype, argtypes) in _PROTOS.items():
        try:
            fn = getattr(handle, fname)
        except AttributeError:
            raise LibraryNotFound(
                "%s has no %s: these bindings need libtplan %d.%d or newer (it is %s)"
                % (handle._name, fname, NEED_MAJOR, NEED_MINOR, handle.tplan_version and _version_of(handle))
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes
    for fname, (_since, restype, argtypes) in _PROTOS_SINCE.items():
        fn = getattr(handle, fname, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes
    major, minor = handle.tplan_version_major(), handle.tplan_version_minor()
    if major != NEED_MAJOR or minor < NEED_MINOR:
        raise LibraryNotFound(
            "%s is libtplan %s: these bindings need %d.%d or a newer %d.x"
            % (handle._name, handle.tplan_version().decode(), NEED_MAJOR, NEED_MINOR, NEED_MAJOR)
        )
    _lib = handle
    return _lib


def call(fname: str):
    """A call of _PROTOS_SINCE, or LibraryNotFound where the loaded library
    predates it."""
    handle = lib()
    fn = getattr(handle, fname, None)
    if fn is None:
        since = _PROTOS_SINCE[fname][0]
        raise LibraryNotFound(
            "%s has no %s: it came with libtplan %d.%d (this one is %s)"
            % (handle._name, fname, since[0], since[1], handle.tplan_version().decode())
        )
    return fn


def _version_of(handle: ctypes.CDLL) -> str:
    fn = handle.tplan_version
    fn.restype = c_char_p
    return fn().decode()


def check(ret: int, call: str, ctx: Optional[int] = None) -> int:
    """Raise TplanError for a negative libtplan return; else return it."""
    if ret >= 0:
        return ret
    detail = ""
    if ctx:
        raw = lib().tplan_ctx_error(ctx)
        detail = raw.decode(errors="replace") if raw else ""
    raise TplanError(-ret, call, detail)
