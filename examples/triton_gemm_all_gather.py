#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A persistent, tiled Triton GEMM whose output rows every rank all-gathers
through a triggered plan while the kernel runs: the spec's tile_chunks()
example, with the schedule's order= taken from the kernel's own tile_of.

    triton_gemm_all_gather.py [-n ranks] [-r rounds]

Program p of the kernel takes steps p, p + num_programs, ...; tile_of(step)
says which tile it computes (Triton's GROUP_M order, plain integer
arithmetic), and after the tile's stores the whole program marks chunk
step // num_programs ready.  The host builds the schedule from the same
function, run in Python (``tile_of.fn``), with tiles_per_chunk =
num_programs, so chunk j holds exactly the tiles of every program's j-th
step and the kernel and the schedule cannot drift.

It runs on an MI200/MI300 node with the KFD engine of tplan.ko (each rank's
heap in its GPU's memory, mapped into every rank's GPU address space);
elsewhere it says what it needs and what it found, and exits 4.
tests/device/triton_isa_check.py compiles gemm_producer for gfx90a and
gfx942 and checks that mark_ready follows the tile's stores in its code.
"""

import os
import sys

import triton
import triton.language as tl

from tplan.triton import TriggeredView

BM, BN, BK, GROUP_M = 32, 32, 16, 8
EXIT_SKIP = 4


@triton.jit
def tile_of(step, tiles_m, tiles_n, GROUP_M: tl.constexpr):  # plain integer arithmetic only
    per_group = GROUP_M * tiles_n
    first_m = step // per_group * GROUP_M
    rows = tiles_m - first_m
    rows = rows - (rows - GROUP_M) * (rows > GROUP_M)  # min(rows, GROUP_M)
    in_group = step % per_group
    return (first_m + in_group % rows) * tiles_n + in_group // rows


@triton.jit
def gemm_producer(a, b, c, handle, M, N, K, num_programs,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    """C = A x B + round for this rank's rows, marking each tile's chunk."""
    cv = TriggeredView.initialize(handle)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    num_tiles = tiles_m * tiles_n
    for step in range(tl.program_id(0), num_tiles, num_programs):
        tile = tile_of(step, tiles_m, tiles_n, GROUP_M)
        rm = tile // tiles_n * BM + tl.arange(0, BM)
        rn = tile % tiles_n * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            rk = k + tl.arange(0, BK)
            av = tl.load(a + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
            bv = tl.load(b + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc += tl.dot(av, bv)
        acc += cv.round.to(tl.float32)
        tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
        cv.mark_ready(step // num_programs)  # the whole program, after the tile's stores


# What tests/device/triton_isa_check.py compiles.
PRODUCER_SIGNATURE = {"a": "*fp32", "b": "*fp32", "c": "*fp32", "handle": "*u8", "M": "i32", "N": "i32",
                      "K": "i32", "num_programs": "i32", "BM": "constexpr", "BN": "constexpr",
                      "BK": "constexpr", "GROUP_M": "constexpr"}
PRODUCER_CONSTEXPRS = {"BM": BM, "BN": BN, "BK": BK, "GROUP_M": GROUP_M}


class _DevicePointer:
    """A GPU address as Triton takes a pointer argument."""

    def __init__(self, addr, dtype):
        self.addr, self.dtype = addr, dtype

    def data_ptr(self):
        return self.addr


def run_rank(key, rank, ranks, rounds, M=256, N=256, K=64, num_programs=8):
    import numpy as np
    import torch

    import tplan
    from tplan.plan import TriggeredPlan, tile_chunks

    torch.cuda.set_device(rank)
    ctx = tplan.Context(64 << 20, key=key, world_size=ranks, rank=rank, sdma_ip=tplan.SDMA_442)
    out = ctx.zeros(ranks * M, N, dtype=np.float32)
    mine = out[rank * M:(rank + 1) * M]
    tiles_m, tiles_n = triton.cdiv(M, BM), triton.cdiv(N, BN)
    schedule = tile_chunks(mine, (BM, BN), tiles_per_chunk=num_programs,
                           order=lambda i: tile_of.fn(i, tiles_m, tiles_n, GROUP_M), base=out)
    a = torch.randint(-2, 3, (M, K), device="cuda", dtype=torch.float32)
    b = torch.randint(-2, 3, (K, N), device="cuda", dtype=torch.float32)
    # out lives in this rank's GPU heap; its address there is the heap's
    # device address plus its offset (tplan_heap_devaddr on the KFD engine).
    c = _DevicePointer(ctx.heap_devaddr(rank) + ctx.offset_of(mine), torch.float32)
    with TriggeredPlan(ctx, out, schedule) as plan:
        for _ in range(rounds):
            handle = plan.start()
            h = torch.frombuffer(bytearray(handle.tobytes()), dtype=torch.uint8).cuda()
            gemm_producer[(num_programs,)](a, b, c, h, M, N, K, num_programs,
                                           BM=BM, BN=BN, BK=BK, GROUP_M=GROUP_M)
            plan.wait()
            plan.next_round()
    ctx.barrier()
    ctx.close()


def main():
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=2, help="ranks")
    ap.add_argument("-r", type=int, default=10, help="rounds")
    args = ap.parse_args()
    found = []
    found.append("/dev/tplan: " + ("present" if os.path.exists("/dev/tplan") else "absent (tplan.ko is not loaded)"))
    found.append("/dev/kfd: " + ("present" if os.path.exists("/dev/kfd") else "absent (no AMD GPU driver)"))
    engines = 0
    if os.path.exists("/dev/tplan"):
        import tplan

        with tplan.Context() as c:
            engines = c.info()["engines"]
    if not os.path.exists("/dev/kfd") or not engines & 2:  # TPLAN_ENGINE_KFD
        print("triton_gemm_all_gather: skipped: needs an MI200/MI300 node and the KFD engine of tplan.ko")
        for f in found:
            print("  found: " + f)
        return EXIT_SKIP
    key = os.getpid()
    pids = []
    for r in range(args.n):
        pid = os.fork()
        if pid == 0:
            try:
                run_rank(key, r, args.n, args.r)
                os._exit(0)
            except BaseException as e:
                print("rank %d: %s" % (r, e), file=sys.stderr)
                os._exit(1)
        pids.append(pid)
    return 1 if any(os.waitpid(p, 0)[1] for p in pids) else 0


if __name__ == "__main__":
    sys.exit(main())
