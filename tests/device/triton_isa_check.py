#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile tplan's Triton device functions (python/tplan/triton.py) for
MI200 (gfx90a) and MI300 (gfx942) and read the memory ordering of the
spec (ARCHITECTURE.md section 5) in the AMDGCN, as TAP:

  mark_ready  in this order: the tile's store, s_waitcnt vmcnt(0) (the
              wave's stores: Triton's debug_barrier alone does not wait
              for them), s_barrier, buffer_wbl2 (gfx942: sc0 sc1; the
              release's L2 write-back), s_waitcnt vmcnt(0), the writer
              counter's returning system-scope atomic add (gfx942: sc1),
              then the compare, and only after it the gate's write
  arrived,    the gate read is one system-scope acquire (gfx942: sc0 sc1;
  wait        gfx90a: glc), s_waitcnt vmcnt(0), then the invalidate
              (gfx942: buffer_inv sc0 sc1; gfx90a: buffer_invl2 and
              buffer_wbinvl1_vol); the result reaches the CTA through LDS
              and a barrier; no clock read; wait sleeps (s_sleep) between
              polls
  release     in this order: the buffer's (last) load, s_waitcnt vmcnt(0)
              (the wave's loads) between it and the s_barrier, the
              s_barrier, buffer_wbl2 (gfx942: sc0 sc1), s_waitcnt vmcnt(0),
              then the one 64-bit maximum of the release word at system
              scope: an atomic umax (gfx942: sc1), or where the compiler
              expands it a returning cmpswap (gfx942: sc0 sc1; gfx90a: glc)
              that a branch back repeats; no clock read
  example     the README's Triton producer (examples/triton_gemm_all_gather.py):
              its tile's stores come before mark_ready's wait, barrier,
              write-back and add

  triton_isa_check.py [--variant normal|no-wait|no-release|release-max] [--targets "gfx90a gfx942"]
                      [--dump DIR] [--from-dump DIR]
  triton_isa_check.py --negatives

--variant replaces one step of mark_ready and release from outside the
module (the wave's wait, or the release: the add made relaxed, the
maximum made a relaxed one alone), or makes release one release maximum
(release-max: Triton 3.6 drops the wait after its write-back, see
python/tplan/triton.py); the check must then fail.  --negatives runs them
in fresh processes and passes only if each is refused: no-wait and
no-release in the test producer, the example and the test release,
release-max in the test release, on every target.  --dump writes each
kernel's AMDGCN (its body, without debug directives and comments), as
tests/device/triton-3.6 holds it; --from-dump checks such files without
Triton.  Exit 0, 1 on a failure, 4 (skip) without Triton: PyPI is not
reachable from CI, so this runs where Triton is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

TARGETS = ["gfx90a", "gfx942"]
KERNELS = ["mark_ready", "arrived", "arrived_global", "wait", "release", "example"]


# ---- the rules, over the AMDGCN text ------------------------------------------


def instructions(asm: str, kernel: str, labels: dict | None = None) -> list[str]:
    """The instructions of one kernel's body, comments and labels dropped;
    labels, if given, gets each label's position (the next instruction's
    index)."""
    out, inside = [], False
    for line in asm.splitlines():
        if re.match(r"^%s:" % re.escape(kernel), line):
            inside = True
            continue
        if inside and (line.startswith(".Lfunc_end") or re.match(r"^\s*\.end_amdhsa_kernel", line) or re.match(r"^\s*s_endpgm", line)):
            if "s_endpgm" in line:
                out.append("s_endpgm")
            break
        if not inside:
            continue
        ins = re.sub(r"\s*;.*$", "", line).strip()
        if ins.endswith(":") and labels is not None:
            labels[ins[:-1]] = len(out)
        if not ins or ins.endswith(":") or ins.startswith("."):
            continue
        out.append(ins)
    return out


def trim(asm: str, kernel: str) -> str:
    """What --dump records of a kernel: its body, from its label to
    .Lfunc_end, without debug directives and comments (the rules read
    nothing else)."""
    out, inside = [], False
    for line in asm.splitlines():
        if re.match(r"^%s:" % re.escape(kernel), line):
            inside = True
            out.append(line)
            continue
        if not inside or re.match(r"^\s*\.(loc|file|cfi_\w+|p2align)(\s|$)", line):
            continue
        line = re.sub(r"\s*;.*$", "", line)
        if line.strip():
            out.append(line)
        if line.startswith(".Lfunc_end"):
            break
    return "\n".join(out) + "\n"


def kernel_name(kernel: str) -> str:
    return "isa_" + kernel if kernel != "example" else "gemm_producer"


def bits(target: str) -> dict:
    if target == "gfx942":
        return {
            "rmw": ("sc1",),  # system scope; returning adds carry sc0 too
            "rmw_ret": ("sc0", "sc1"),  # a returning one
            "load": ("sc0", "sc1"),
            "wbl2": r"^buffer_wbl2 sc0 sc1$",
            "inv": [r"^buffer_inv sc0 sc1$"],
        }
    # gfx90a: no scope bit on an atomic; glc asks for the old value.
    return {"rmw": ("glc",), "rmw_ret": ("glc",), "load": ("glc",), "wbl2": r"^buffer_wbl2$",
            "inv": [r"^buffer_invl2$", r"^buffer_wbinvl1_vol$"]}


def has_bits(ins: str, want) -> bool:
    words = set(re.split(r"[\s,]+", ins))
    return all(b in words for b in want)


CLOCK = re.compile(r"^s_(memtime|memrealtime|getreg_b32 .*SHADER_CYCLES)")
STORE = re.compile(r"^(global|flat|buffer)_store_(dword|b32|short|byte)")
ADD = re.compile(r"^(flat|global)_atomic_add_x2 ")
GATE = re.compile(r"^(flat|global)_(atomic_swap_x2|store_dwordx2) ")
WAIT0 = re.compile(r"^s_waitcnt .*vmcnt\(0\)")
LOAD = re.compile(r"^(global|flat|buffer)_load_")
MAX = re.compile(r"^(flat|global|buffer)_atomic_(umax|cmpswap)_x2 ")


def check_mark_ready(ins: list[str], target: str, tile_store=STORE) -> tuple[bool, list[str]]:
    """The producer's sequence, anchored on the writer counter's add (a
    GEMM's K loop has barriers of its own before the tile's store)."""
    b = bits(target)
    adds = [k for k, i in enumerate(ins) if ADD.match(i)]
    gates = [k for k, i in enumerate(ins) if GATE.match(i)]
    if len(adds) != 1 or len(gates) != 1:
        return False, ["FAIL %d counter adds and %d gate writes, want 1 and 1" % (len(adds), len(gates))]
    add = adds[0]

    def last(pred, before, after=-1):
        return max((k for k in range(after + 1, before) if pred(ins[k])), default=-1)

    wait2 = last(lambda i: WAIT0.match(i), add)
    wbl2 = last(lambda i: re.match(b["wbl2"], i), wait2 if wait2 >= 0 else add)
    if wbl2 < 0:
        return False, ["FAIL no %s (the release's L2 write-back) before the counter's add" % b["wbl2"].strip("^$")]
    bar = last(lambda i: i.startswith("s_barrier"), wbl2)
    if bar < 0:
        return False, ["FAIL no s_barrier before the release's write-back"]
    store = last(lambda i: tile_store.match(i), bar)
    if store < 0:
        return False, ["FAIL no store of the tile before mark_ready's s_barrier"]
    notes = ["MATCH the tile's (last) store: " + ins[store]]
    wait1 = last(lambda i: WAIT0.match(i), bar, store)
    if wait1 < 0:
        return False, notes + ["FAIL no s_waitcnt vmcnt(0) between the tile's last store and the s_barrier (%s)" % ins[bar]]
    notes.append("MATCH the wave's stores waited for: " + ins[wait1])
    notes.append("MATCH the CTA barrier: " + ins[bar])
    notes.append("MATCH the release's L2 write-back: " + ins[wbl2])
    if wait2 < wbl2:
        return False, notes + ["FAIL no s_waitcnt vmcnt(0) between buffer_wbl2 and the counter's add"]
    notes.append("MATCH its wait: " + ins[wait2])
    if not has_bits(ins[add], b["rmw"]):
        return False, notes + ["FAIL the counter's add is not system scope (%s): %s" % (" ".join(b["rmw"]), ins[add])]
    notes.append("MATCH the counter's add, system scope: " + ins[add])
    cmp = next((k for k in range(add + 1, len(ins)) if re.match(r"^(v_cmp|s_cmp)_(eq|ne|lg)_u64", ins[k])), -1)
    if cmp < 0 or gates[0] < cmp:
        return False, notes + ["FAIL the gate is written before the compare of the counter: " + ins[gates[0]]]
    notes.append("MATCH the compare: " + ins[cmp])
    notes.append("MATCH the gate write, after it: " + ins[gates[0]])
    return True, notes


def check_release(ins: list[str], target: str, labels: dict) -> tuple[bool, list[str]]:
    """The release, anchored on the release word's maximum: the maximum
    itself, or where the compiler expands a system-scope maximum into a
    compare-and-swap loop, that loop's cmpswap."""
    b = bits(target)
    clock = [i for i in ins if CLOCK.match(i)]
    if clock:
        return False, ["FAIL a clock read (contract 5): " + clock[0]]
    maxes = [k for k, i in enumerate(ins) if MAX.match(i)]
    if len(maxes) != 1:
        return False, ["FAIL %d 64-bit maxima (umax or cmpswap) of the release word, want 1" % len(maxes)]
    mx = maxes[0]

    def last(pred, before, after=-1):
        return max((k for k in range(after + 1, before) if pred(ins[k])), default=-1)

    def first(pred, before, after):
        return min((k for k in range(after + 1, before) if pred(ins[k])), default=-1)

    bar = last(lambda i: i.startswith("s_barrier"), mx)
    if bar < 0:
        return False, ["FAIL no s_barrier before the release word's maximum: " + ins[mx]]
    load = last(lambda i: LOAD.match(i), bar)
    if load < 0:
        return False, ["FAIL no load of the buffer before the release's s_barrier"]
    notes = ["MATCH the buffer's (last) load: " + ins[load]]
    wait1 = first(lambda i: WAIT0.match(i), bar, load)
    if wait1 < 0:
        return False, notes + ["FAIL no s_waitcnt vmcnt(0) between the buffer's last load and the s_barrier (%s)" % ins[bar]]
    notes.append("MATCH the wave's loads waited for: " + ins[wait1])
    notes.append("MATCH the CTA barrier: " + ins[bar])
    wbl2 = first(lambda i: re.match(b["wbl2"], i), mx, bar)
    if wbl2 < 0:
        return False, notes + ["FAIL no %s (the release's L2 write-back) between the s_barrier and the maximum: %s" % (b["wbl2"].strip("^$"), ins[mx])]
    notes.append("MATCH the release's L2 write-back: " + ins[wbl2])
    wait2 = first(lambda i: WAIT0.match(i), mx, wbl2)
    if wait2 < 0:
        return False, notes + ["FAIL no s_waitcnt vmcnt(0) between buffer_wbl2 and the maximum: " + ins[mx]]
    notes.append("MATCH its wait: " + ins[wait2])
    if "umax" in ins[mx]:
        want = b["rmw"] if target == "gfx942" else ()  # gfx90a: no scope bit
        if not has_bits(ins[mx], want):
            return False, notes + ["FAIL the maximum is not system scope (%s): %s" % (" ".join(want), ins[mx])]
        notes.append("MATCH the maximum, system scope: " + ins[mx])
        return True, notes
    if not has_bits(ins[mx], b["rmw_ret"]):
        return False, notes + ["FAIL the maximum's cmpswap is not a returning system-scope one (%s): %s" % (" ".join(b["rmw_ret"]), ins[mx])]
    loop = [ins[k] for k in range(mx + 1, min(mx + 12, len(ins)))
            if re.match(r"^s_cbranch_\w+ (\S+)$", ins[k]) and labels.get(ins[k].split()[1], len(ins)) <= mx]
    if not loop:
        return False, notes + ["FAIL a cmpswap of the release word that no branch back repeats: " + ins[mx]]
    notes.append("MATCH the maximum as a compare-and-swap loop, system scope: %s; %s" % (ins[mx], loop[0]))
    return True, notes


def check_consumer(ins: list[str], target: str, polls: bool) -> tuple[bool, list[str]]:
    b = bits(target)
    notes = []
    reads = 0
    for k, i in enumerate(ins):
        if CLOCK.match(i):
            return False, notes + ["FAIL a clock read (contract 5): " + i]
        if not re.match(r"^(flat|global)_(load_dwordx2|atomic_add_x2) ", i):
            continue
        if re.match(r"^(flat|global)_load_dwordx2 ", i) and not has_bits(i, b["load"]):
            continue  # a plain load (the handle), not the gate
        if re.match(r"^(flat|global)_atomic_add_x2 ", i) and not has_bits(i, b["rmw"]):
            return False, notes + ["FAIL the gate read is not system scope: " + i]
        reads += 1
        notes.append("MATCH acquire read: " + i)
        seen_wait, inv = False, 0
        for j in ins[k + 1 : k + 8]:
            if WAIT0.match(j) and not seen_wait:
                seen_wait = True
                notes.append("MATCH wait: " + j)
            elif seen_wait and inv < len(b["inv"]) and re.match(b["inv"][inv], j):
                notes.append("MATCH invalidate: " + j)
                inv += 1
            elif re.match(r"^(s_cbranch|s_branch|s_setpc|ds_|flat_|global_|buffer_load|buffer_store)", j):
                break
        if inv < len(b["inv"]):
            return False, notes + ["FAIL no s_waitcnt vmcnt(0) then %s right after the gate read" % " then ".join(x.strip("^$") for x in b["inv"])]
    if not reads:
        return False, notes + ["FAIL no system-scope acquire read of the gate"]
    barriers = sum(1 for i in ins if i.startswith("s_barrier"))
    lds_w = sum(1 for i in ins if i.startswith("ds_write") or i.startswith("ds_store"))
    lds_r = sum(1 for i in ins if i.startswith("ds_read") or i.startswith("ds_load"))
    if not barriers or not lds_w or not lds_r:
        return False, notes + ["FAIL the read's result does not reach the CTA through LDS and a barrier (%d s_barrier, %d LDS writes, %d LDS reads)" % (barriers, lds_w, lds_r)]
    notes.append("MATCH shared with the CTA: %d LDS write(s), %d s_barrier, %d LDS read(s)" % (lds_w, barriers, lds_r))
    if polls:
        if not any(i.startswith("s_sleep") for i in ins):
            return False, notes + ["FAIL no s_sleep between polls"]
        notes.append("MATCH poll pause: s_sleep, no clock read")
    return True, notes


def check(kernel: str, asm: str, target: str) -> tuple[bool, list[str]]:
    name = kernel_name(kernel)
    labels: dict = {}
    ins = instructions(asm, name, labels)
    if not ins:
        return False, ["FAIL kernel %s not found in the AMDGCN" % name]
    if kernel == "release":
        return check_release(ins, target, labels)
    if kernel == "mark_ready":
        return check_mark_ready(ins, target)
    if kernel == "example":
        return check_mark_ready(ins, target, tile_store=re.compile(r"^(global|flat|buffer)_store_"))
    return check_consumer(ins, target, polls=(kernel == "wait"))


# ---- compiling with Triton ------------------------------------------------------


def patch_variant(variant: str) -> None:
    """Break one step of mark_ready and release from outside tplan.triton."""
    import triton
    import triton.language as tl

    import tplan.triton as tt

    if variant == "no-wait":

        @triton.jit
        def _no_wait():
            pass

        tt._wait_vmem = _no_wait
    elif variant == "no-release":

        @triton.jit
        def _relaxed_add(counter):
            return tl.atomic_add(counter, 1, sem="relaxed", scope="sys")

        @triton.jit
        def _relaxed_max(word, value):
            return tl.atomic_max(word, value, sem="relaxed", scope="sys")

        tt._release_add = _relaxed_add
        tt._release_max = _relaxed_max
    elif variant == "release-max":

        @triton.jit
        def _max_alone(word, value):
            return tl.atomic_max(word, value, sem="release", scope="sys")

        tt._release_max = _max_alone


def kernels():
    import triton
    import triton.language as tl

    from tplan.triton import TriggeredView

    # The view is set up first, as a kernel does: its loads would
    # otherwise put an s_waitcnt vmcnt(0) after the stores by themselves.
    @triton.jit
    def isa_mark_ready(handle, tile, chunk, BLOCK: tl.constexpr):
        cv = TriggeredView.initialize(handle)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(tile + offs, offs.to(tl.float32))
        cv.mark_ready(chunk)

    @triton.jit
    def isa_arrived(handle, src_buf, dst_buf, src, chunk, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if TriggeredView.initialize(handle).arrived(chunk, src) == 1:
            tl.store(dst_buf + offs, tl.load(src_buf + offs))

    @triton.jit
    def isa_arrived_global(handle, src_buf, dst_buf, chunk, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if TriggeredView.initialize(handle).arrived(chunk) == 1:
            tl.store(dst_buf + offs, tl.load(src_buf + offs))

    @triton.jit
    def isa_wait(handle, src_buf, dst_buf, src, chunk, max_polls, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        if TriggeredView.initialize(handle).wait(chunk, src, max_polls) == 0:
            tl.store(dst_buf + offs, tl.load(src_buf + offs))

    # Read the round's data, release it, then use what was read: nothing
    # but the release waits for the loads before it.
    @triton.jit
    def isa_release(handle, src_buf, dst_buf, BLOCK: tl.constexpr):
        cv = TriggeredView.initialize(handle)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(src_buf + offs)
        cv.release()
        tl.store(dst_buf + offs, x)

    return {
        "mark_ready": (isa_mark_ready, {"handle": "*u8", "tile": "*fp32", "chunk": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "arrived": (isa_arrived, {"handle": "*u8", "src_buf": "*fp32", "dst_buf": "*fp32", "src": "i32", "chunk": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "arrived_global": (isa_arrived_global, {"handle": "*u8", "src_buf": "*fp32", "dst_buf": "*fp32", "chunk": "i32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "wait": (isa_wait, {"handle": "*u8", "src_buf": "*fp32", "dst_buf": "*fp32", "src": "i32", "chunk": "i32", "max_polls": "i64", "BLOCK": "constexpr"}, {"BLOCK": 512}),
        "release": (isa_release, {"handle": "*u8", "src_buf": "*fp32", "dst_buf": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
    }


def example_kernel():
    import triton_gemm_all_gather as ex

    return (ex.gemm_producer, ex.PRODUCER_SIGNATURE, ex.PRODUCER_CONSTEXPRS)


def compile_amdgcn(fn, signature, constexprs, target: str) -> str:
    import triton
    from triton.backends.compiler import GPUTarget

    try:
        src = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    except TypeError:
        sig = {k: v for k, v in signature.items() if v != "constexpr"}
        src = triton.compiler.ASTSource(fn=fn, signature=sig, constants=constexprs)
    k = triton.compile(src, target=GPUTarget("hip", target, 64), options={"num_warps": 4})
    return k.asm["amdgcn"]


# ---- TAP ------------------------------------------------------------------------


def run(variant: str, targets: list[str], dump: str | None, from_dump: str | None) -> int:
    print("TAP version 13")
    if from_dump is None:
        try:
            import triton
        except ImportError as e:
            print("1..0 # SKIP no Triton here (%s): PyPI is not reachable from CI; run it where Triton is installed" % e)
            return 4
        print("# Triton %s, variant %s" % (triton.__version__, variant))
        os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tplan-triton-"))
        patch_variant(variant)
        table = kernels()
        try:
            table["example"] = example_kernel()
        except Exception as e:  # reported as that kernel's failure
            table["example"] = e
    print("1..%d" % (len(targets) * len(KERNELS)))
    n = rc = 0
    for t in targets:
        for k in KERNELS:
            n += 1
            path = os.path.join(from_dump or dump or "", "%s.%s.%s.amdgcn" % (variant, t, k))
            try:
                if from_dump is not None:
                    asm = open(path).read()
                else:
                    entry = table[k]
                    if isinstance(entry, Exception):
                        raise entry
                    asm = compile_amdgcn(*entry, t)
                    if dump:
                        os.makedirs(dump, exist_ok=True)
                        with open(path, "w") as f:
                            f.write(trim(asm, kernel_name(k)))
            except Exception as e:
                if os.environ.get("TPLAN_ISA_TRACEBACK"):
                    import traceback

                    for line in traceback.format_exc().splitlines():
                        print("#   " + line)
                print("not ok %d %s %s: does not compile: %s" % (n, t, k, str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__))
                rc = 1
                continue
            ok, notes = check(k, asm, t)
            fail = [x[5:] for x in notes if x.startswith("FAIL ")]
            print("%s %d %s %s%s" % ("ok" if ok else "not ok", n, t, k, "" if ok else ": " + fail[0]))
            for x in notes:
                if not x.startswith("FAIL "):
                    print("#   " + x.split(" ", 1)[1])
            rc |= 0 if ok else 1
    return rc


def negatives(targets: list[str], dump: str | None, from_dump: str | None) -> int:
    print("TAP version 13")
    # Each broken build, and the kernels it breaks.
    variants = (("no-wait", ("mark_ready", "example", "release")),
                ("no-release", ("mark_ready", "example", "release")),
                ("release-max", ("release",)))
    print("1..%d" % len(variants))
    rc = 0
    for n, (v, broken) in enumerate(variants, 1):
        cmd = [sys.executable, os.path.abspath(__file__), "--variant", v, "--targets", " ".join(targets)]
        if dump:
            cmd += ["--dump", dump]
        if from_dump:
            cmd += ["--from-dump", from_dump]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        refused = [x for x in p.stdout.splitlines() if x.startswith("not ok")]
        # Every kernel it breaks, on every target.
        want = {"%s %s" % (t, k) for t in targets for k in broken}
        got = {" ".join(x.split(":")[0].split()[3:5]) for x in refused}
        if p.returncode == 4:
            skip = re.sub(r"^.*# SKIP ", "", p.stdout.strip().splitlines()[-1])
            print("ok %d %s build refused # SKIP %s" % (n, v, skip))
        elif p.returncode != 0 and want <= got and not any("does not compile" in x for x in refused):
            print("ok %d %s build refused" % (n, v))
            for x in refused:
                print("#   " + x)
        else:
            print("not ok %d %s build refused (the check passed a broken build: %s; or it did not compile)" % (n, v, ", ".join(sorted(want - got)) or "-"))
            for x in p.stdout.splitlines():
                print("#   " + x)
            rc = 1
    return rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="normal", choices=["normal", "no-wait", "no-release", "release-max"])
    ap.add_argument("--negatives", action="store_true")
    ap.add_argument("--targets", default=os.environ.get("TPLAN_TRITON_TARGETS", " ".join(TARGETS)))
    ap.add_argument("--dump")
    ap.add_argument("--from-dump")
    a = ap.parse_args()
    targets = a.targets.split()
    if a.negatives:
        return negatives(targets, a.dump, a.from_dump)
    return run(a.variant, targets, a.dump, a.from_dump)


if __name__ == "__main__":
    sys.exit(main())
