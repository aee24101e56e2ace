#!/bin/bash
# make demo: the main job.  Boots a Debian kernel in QEMU with tplan.ko on
# the software engine and runs the demo program there, printing its output.
#
# Environment: TPLAN_DEMO_KVER (default: the newest Debian 6.12 kernel),
# VM_MEM / VM_CPUS, TPLAN_MODPARAMS, BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export RESULTS="$BUILD/demo/results.txt" LOGS="$BUILD/demo/logs"
rm -rf "$BUILD/demo"
mkdir -p "$LOGS" "$BUILD/demo/programs"
. scripts/lib.sh

scripts/install-deps.sh
kver=${TPLAN_DEMO_KVER:-$(scripts/install-deps.sh --print | awk '{print $NF}')}
make -s -j"$(nproc)" lib examples
build_module "$kver" "$BUILD/kmod/$kver"

cp "$BUILD/examples/tplan_info" "$BUILD/demo/programs/"
echo "bin tplan_info" > "$BUILD/demo/programs/plan"
echo "# demo on $kver (software engine)"
: > "$RESULTS"
VM_SHOW_OUTPUT=1 scripts/vm/run.sh "$kver" "$BUILD/kmod/$kver" "$BUILD/demo/programs" "$RESULTS"
! grep -q '^not ok' "$RESULTS"
