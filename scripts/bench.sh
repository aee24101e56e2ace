#!/bin/bash
# make bench: boots a Debian kernel in QEMU with tplan.ko on the software
# engine and runs the benchmarks there, printing their output.  Every
# figure is a ratio or a time measured in that same VM run.
#
# Environment: TPLAN_BENCH_KVER (default: the newest Debian 6.12 kernel),
# BENCH_IDLE_SECONDS (default 10), PLAN_BENCH_SCALE (plan_bench's rounds, default 1),
# VM_MEM / VM_CPUS, TPLAN_MODPARAMS, BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export RESULTS="$BUILD/bench-vm/results.txt" LOGS="$BUILD/bench-vm/logs"
rm -rf "$BUILD/bench-vm"
mkdir -p "$LOGS" "$BUILD/bench-vm/programs"
. scripts/lib.sh

scripts/install-deps.sh
kver=${TPLAN_BENCH_KVER:-$(scripts/install-deps.sh --print | awk '{print $NF}')}
make -s -j"$(nproc)" lib bench-vm-programs
build_module "$kver" "$BUILD/kmod/$kver"

cp "$BUILD/bench/put_bench" "$BUILD/bench/plan_bench" "$BUILD/bench-vm/programs/"
# The plan runs programs without arguments; a script passes them.
cat > "$BUILD/bench-vm/programs/run_bench.sh" <<SH
./put_bench ${BENCH_IDLE_SECONDS:-10}
./plan_bench ${PLAN_BENCH_SCALE:-1}
SH
echo "sh run_bench.sh" > "$BUILD/bench-vm/programs/plan"
echo "# benchmarks on $kver (software engine, QEMU TCG: ratios matter, not absolutes)"
: > "$RESULTS"
VM_SHOW_OUTPUT=1 scripts/vm/run.sh "$kver" "$BUILD/kmod/$kver" "$BUILD/bench-vm/programs" "$RESULTS"
! grep -q '^not ok' "$RESULTS"
