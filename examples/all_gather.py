#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""all_gather.py: the demo's all-gather with a CPU producer written in
Python (examples/all_gather.c is the C one).

    all_gather.py [-n ranks] [-r rounds] [-p programs] [-m rows] [-N cols]

Every rank (a forked process) joins the group and allocates out (ranks x
rows x cols uint32) in the symmetric heap.  Its producer is a persistent
"kernel" of `programs` threads: program p takes steps p, p + programs, ...,
writes the tile tile_of(step) names (32 x 64 tiles in a grouped GEMM-style
order) and marks chunk step // programs ready.  The schedule is
tile_chunks() with order= the producer's own tile_of, so chunk j holds the
tiles of every program's j-th step.  Each round every rank checks every
rank's rows (values depend on rank and round, so stale data fails).

Marks go through the device header's host build in libtplan
(tplan_handle_mark_ready): its C11 acq_rel add and release store of the
ready gate, which Python cannot express itself.
"""

import argparse
import os
import sys
import threading
import time

import numpy as np

import tplan
from tplan.plan import TriggeredPlan, TriggeredView, tile_chunks

BM, BN, GROUP_M = 32, 64, 2


def tile_of(step, tiles_m, tiles_n, group_m):
    """Step to tile (row-major index), grouped as GEMM kernels order them."""
    per_group = group_m * tiles_n
    first_m = step // per_group * group_m
    rows = min(tiles_m - first_m, group_m)
    in_group = step % per_group
    return (first_m + in_group % rows) * tiles_n + in_group // rows


def values(rank, rnd, rows, cols):
    r = np.arange(rows, dtype=np.uint32)[:, None]
    c = np.arange(cols, dtype=np.uint32)[None, :]
    return np.uint32(rank << 24) ^ np.uint32(rnd << 16) ^ (r << 8) ^ c


def run_rank(key, rank, a):
    heap = ((a.n * a.m * a.N * 4 >> 20) + 2) << 20
    with tplan.Context(heap, key=key, world_size=a.n, rank=rank) as ctx:
        out = ctx.zeros(a.n * a.m, a.N, dtype=np.uint32)
        mine = out[rank * a.m:(rank + 1) * a.m]
        tm, tn = -(-a.m // BM), -(-a.N // BN)
        schedule = tile_chunks(mine, (BM, BN), tiles_per_chunk=a.p,
                               order=lambda i: tile_of(i, tm, tn, GROUP_M), base=out)
        times = []
        with TriggeredPlan(ctx, out, schedule) as plan:
            for rnd in range(1, a.r + 1):
                t0 = time.monotonic()
                handle = plan.start()
                want = values(rank, rnd, a.m, a.N)

                def program(p):
                    view = TriggeredView.initialize(handle)
                    for step in range(p, tm * tn, a.p):
                        t = tile_of(step, tm, tn, GROUP_M)
                        r, c = t // tn * BM, t % tn * BN
                        mine[r:r + BM, c:c + BN] = want[r:r + BM, c:c + BN]
                        view.mark_ready(step // a.p)

                progs = [threading.Thread(target=program, args=(p,)) for p in range(a.p)]
                for t in progs:
                    t.start()
                for t in progs:
                    t.join()
                plan.wait(30000)
                times.append(time.monotonic() - t0)
                for q in range(a.n):
                    got = out[q * a.m:(q + 1) * a.m]
                    if not np.array_equal(got, values(q, rnd, a.m, a.N)):
                        i, j = np.argwhere(got != values(q, rnd, a.m, a.N))[0]
                        raise SystemExit("rank %d: round %d: rank %d's row %d column %d is %#x"
                                         % (rank, rnd, q, i, j, got[i, j]))
                if rnd < a.r:
                    plan.next_round()
        ctx.barrier()
        if rank == 0:
            recv = (a.n - 1) * a.m * a.N * 4
            med = sorted(times)[len(times) // 2]
            print("all_gather.py: ok: %d ranks, %d rounds, %d programs, %.1f KiB received per rank per round; "
                  "median %.3f ms (%.1f MiB/s), verified on every rank"
                  % (a.n, a.r, a.p, recv / 1024, med * 1e3, recv / med / (1 << 20)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=4, help="ranks (default 4)")
    ap.add_argument("-r", type=int, default=20, help="rounds (default 20)")
    ap.add_argument("-p", type=int, default=4, help="producer programs (threads) per rank (default 4)")
    ap.add_argument("-m", type=int, default=128, help="rows per rank (default 128)")
    ap.add_argument("-N", type=int, default=256, help="columns (default 256)")
    a = ap.parse_args()
    key = os.getpid()
    pids = []
    sys.stdout.flush()
    for r in range(a.n):
        pid = os.fork()
        if pid == 0:
            try:
                run_rank(key, r, a)
                code = 0
            except SystemExit as e:
                print(e, file=sys.stderr)
                code = 1
            except BaseException as e:
                print("rank %d: %s" % (r, e), file=sys.stderr)
                code = 1
            sys.stdout.flush()
            os._exit(code)
        pids.append(pid)
    failed = [p for p in pids if os.waitpid(p, 0)[1]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
