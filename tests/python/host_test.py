#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python bindings on the host (no /dev/tplan needed), as TAP:
ctypes structs against the C compiler's layout, the schedule builders
against libtplan's rules, errors with errno and detail, a tile order that
raises, the README's Python quick start and the examples compile, and the
Python tile_of is gemm_tiles.h's.

    TPLAN_LIBRARY=build/lib/libtplan.so.0 python3 tests/python/host_test.py
"""

import ctypes
import errno
import os
import py_compile
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import tplan  # noqa: E402
from tplan import _lib  # noqa: E402
from tplan.plan import Region, Schedule, Tensor, chunks, tile_chunks, whole  # noqa: E402

n = 0
failed = 0


def t(ok, desc, *detail):
    global n, failed
    n += 1
    print("%s %d %s" % ("ok" if ok else "not ok", n, desc))
    if not ok:
        failed += 1
        for d in detail:
            for line in str(d).splitlines():
                print("# " + line)


def raises(fn, err):
    try:
        fn()
    except tplan.TplanError as e:
        return e.errno == err, e
    except Exception as e:  # the wrong kind
        return False, e
    return False, "no exception"


# ---- struct layouts -----------------------------------------------------------

STRUCTS = {
    "tplan_info": _lib.tplan_info,
    "tplan_join_params": _lib.tplan_join_params,
    "tplan_region": _lib.tplan_region,
    "tplan_tensor": _lib.tplan_tensor,
    "tplan_handle": _lib.tplan_handle,
    "tplan_plan_shortfall": _lib.tplan_plan_shortfall,
    "tplan_queue_info": _lib.tplan_queue_info,
}


def c_name(field):
    return "__" + field[1:] if field.startswith("_") else field


src = ['#include <stddef.h>', '#include <stdio.h>', '#include "libtplan.h"', '#include "tplan_device.h"', "int main(void) {"]
want = []
for name, cls in STRUCTS.items():
    src.append('printf("%s %%zu\\n", sizeof(struct %s));' % (name, name))
    want.append("%s %d" % (name, ctypes.sizeof(cls)))
    for f, _ in cls._fields_:
        src.append('printf("%s.%s %%zu\\n", offsetof(struct %s, %s));' % (name, f, name, c_name(f)))
        want.append("%s.%s %d" % (name, f, getattr(cls, f).offset))
src.append("return 0; }")
with tempfile.TemporaryDirectory() as d:
    c = os.path.join(d, "layout.c")
    open(c, "w").write("\n".join(src) + "\n")
    exe = os.path.join(d, "layout")
    p = subprocess.run(["cc", "-std=gnu11", "-I" + ROOT + "/uapi", "-I" + ROOT + "/libtplan", "-I" + ROOT + "/device",
                        c, "-o", exe], capture_output=True, text=True)
    got = subprocess.run([exe], capture_output=True, text=True).stdout.split("\n")[:-1] if p.returncode == 0 else [p.stderr]
diff = [w + "  (C: " + g + ")" for w, g in zip(want, got) if w != g]
t(len(got) == len(want) and not diff, "ctypes structs have the C layout (%d structs, %d fields)" % (len(STRUCTS), len(want) - len(STRUCTS)), *diff[:10])

# ---- the library --------------------------------------------------------------

t(tplan.library_version() == tplan.__version__, "libtplan %s is the package's version %s" % (tplan.library_version(), tplan.__version__))
ok, e = raises(lambda: tplan.Context(path="/nonexistent/tplan"), errno.ENOENT)
t(ok and "/nonexistent/tplan" in e.detail and isinstance(e, OSError), "a failed open is a TplanError (an OSError) with ENOENT and the path", e)

# ---- the device header's host build, on a gate table in this process --------------

from tplan.plan import Handle, TriggeredView  # noqa: E402

# Two ranks, chunks 0-1 rank 0's and 2 rank 1's: rows 0-2, then the release row.
gates = (ctypes.c_uint64 * (4 * _lib.GATE_ROW_BYTES // 8))()
hc = _lib.tplan_handle(gates=ctypes.addressof(gates), round=5, rank=0, world_size=2, nchunks=2, total_chunks=3)
hc.chunk_base[1], hc.chunk_base[2] = 2, 3
word = 3 * _lib.GATE_ROW_BYTES // 8
TriggeredView.initialize(Handle(hc)).release()
got = [gates[word]]
hc.round = 3
TriggeredView.initialize(Handle(hc)).release()
got.append(gates[word])
t(got == [5, 5] and sum(gates) == 5, "TriggeredView.release() raises the release word (row total_chunks) to the round, never lowers it", got)
t(callable(_lib.call("tplan_plan_next_round_unreleased")) and callable(_lib.call("tplan_handle_release")),
  "the library has tplan_plan_next_round_unreleased and tplan_handle_release (next_round(release=False), release())")
t(callable(_lib.call("tplan_ctx_set_rounds_ahead")) and callable(_lib.call("tplan_ctx_ioctls")),
  "the library has tplan_ctx_set_rounds_ahead and tplan_ctx_ioctls (ctx.set_rounds_ahead(), ctx.ioctls)")

# ---- schedules ------------------------------------------------------------------

mine = Tensor(offset=4096, rows=40, cols=52, elem_size=4, pitch=256)
s = whole(mine, 3)
regs, w = s.chunk(0)
t(len(s) == 1 and w == 3 and regs == [Region(4096, 208, 256, 40)], "whole(): one chunk, the strided rows as one 2D region, 3 writers", s.chunk(0))
s = chunks(Tensor(0, 40, 52, 4), 7, max_copy_bytes=500)
sizes = [sum(r.width for r in s.chunk(i)[0]) for i in range(len(s))]
t(len(s) == 6 and sizes == [7 * 208] * 5 + [5 * 208] and max(r.width for i in range(6) for r in s.chunk(i)[0]) <= 500,
  "chunks(): 6 row blocks of 7 rows (the last 5), split in copies of at most 500 bytes", sizes)


def tile_of(step, tiles_m, tiles_n, group_m):
    per_group = group_m * tiles_n
    first_m = step // per_group * group_m
    rows = min(tiles_m - first_m, group_m)
    in_group = step % per_group
    return (first_m + in_group % rows) * tiles_n + in_group // rows


base = Tensor(0, 80, 52, 4)
m = Tensor(40 * 208, 40, 52, 4, 208)
s = tile_chunks(m, (8, 13), 3, order=lambda i: tile_of(i, 5, 4, 2), base=base)
first = s.chunk(0)[0]
t(len(s) == 7 and first[0] == Region(40 * 208, 52, 208, 8) and first[1] == Region(40 * 208 + 8 * 208, 52, 208, 8),
  "tile_chunks(): 20 tiles in 7 chunks of 3 steps, in the producer's order", first)
ok, e = raises(lambda: tile_chunks(m, (8, 13), 3, order=lambda i: 0), errno.EINVAL)
t(ok, "tile_chunks(): an order that repeats a tile is EINVAL", e)
try:
    tile_chunks(m, (8, 13), 3, order=lambda i: 1 // 0)
    t(False, "tile_chunks(): an order that raises re-raises its exception")
except ZeroDivisionError:
    t(True, "tile_chunks(): an order that raises re-raises its exception")
h = Schedule()
c0 = h.add_chunk([Region(0, 100), Region(256, 16, 64, 4)], writers=2)
ok, e = raises(lambda: h.add_chunk([Region(0, 0)]), errno.EINVAL)
t(c0 == 0 and len(h) == 1 and h.chunk(0) == ([Region(0, 100, 100, 1), Region(256, 16, 64, 4)], 2) and ok,
  "a hand-built schedule: regions kept, writers kept, an empty region refused", h.chunk(0), e)
try:
    Tensor.of(__import__("numpy").zeros((4, 4)))
    t(False, "an array outside every heap is refused (ValueError)")
except ValueError as e:
    t("in no tplan heap" in str(e), "an array outside every heap is refused (ValueError)", e)

# ---- the programs the VM runs, and the examples --------------------------------

with open(os.path.join(ROOT, "README.md")) as f:
    readme = f.read()
m_ = re.search(r"<!-- python-quickstart:begin -->\n```python\n(.*?)```\n<!-- python-quickstart:end -->", readme, re.S)
ok = m_ is not None
if ok:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(m_.group(1))
    try:
        py_compile.compile(f.name, doraise=True)
    except py_compile.PyCompileError as e:
        ok = False
        m_ = e
    os.unlink(f.name)
t(ok, "the README's Python quick start is there and compiles", m_)
bad = []
for p in ("examples/all_gather.py", "examples/triton_gemm_all_gather.py", "tests/python/vm_test.py",
          "tests/device/triton_isa_check.py"):
    try:
        with open(os.path.join(ROOT, p)) as f:
            compile(f.read(), p, "exec")
    except SyntaxError as e:
        bad.append(str(e))
t(not bad, "the Python examples and tests compile", *bad)

# tile_of of examples/all_gather.py is gemm_tiles.h's, for several tilings.
import all_gather  # noqa: E402

prog = ['#include <stdio.h>', '#include "gemm_tiles.h"', "int main(void) {",
        "struct gemm_tiling t[] = { {5, 4, 2}, {8, 8, 8}, {3, 7, 2}, {1, 1, 1}, {9, 2, 4} };",
        "for (unsigned k = 0; k < 5; k++) for (unsigned s = 0; s < t[k].tiles_m * t[k].tiles_n; s++)",
        'printf("%u\\n", tile_of(s, &t[k]));', "return 0; }"]
tilings = [(5, 4, 2), (8, 8, 8), (3, 7, 2), (1, 1, 1), (9, 2, 4)]
py = [all_gather.tile_of(s, tm, tn, g) for tm, tn, g in tilings for s in range(tm * tn)]
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "t.c"), "w").write("\n".join(prog) + "\n")
    r = subprocess.run(["cc", "-I" + ROOT + "/examples", os.path.join(d, "t.c"), "-o", os.path.join(d, "t")], capture_output=True, text=True)
    cv = [int(x) for x in subprocess.run([os.path.join(d, "t")], capture_output=True, text=True).stdout.split()] if r.returncode == 0 else r.stderr
t(cv == py, "all_gather.py's tile_of is examples/gemm_tiles.h's (5 tilings, %d steps)" % len(py))

print("1..%d" % n)
sys.exit(1 if failed else 0)
