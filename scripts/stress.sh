#!/bin/bash
# make stress: the in-VM ioctl fuzzer and kill storm (selftests/tplan_fuzz*.c)
# for longer than make check runs it: per kernel, one VM boot that runs it
# with allow_inject=1 and then without, each for STRESS_SECONDS.
#
# Environment: STRESS_SECONDS (per run, default 300), STRESS_KVERS (default:
# the kernels make check tests), FUZZ_RING_SIZE, FUZZ_SEED, FUZZ_ARGS
# (scripts/lib.sh, fuzz_plan), VM_MEM / VM_CPUS / VM_TIMEOUT, BUILD.
# Ends with "N passed, N failed, N skipped"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export RESULTS="$BUILD/stress/results.txt" LOGS="$BUILD/stress/logs"
rm -rf "$BUILD/stress"
mkdir -p "$LOGS" "$BUILD/stress/programs"
: > "$RESULTS"
. scripts/lib.sh

scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }
kvers=${STRESS_KVERS:-$(scripts/install-deps.sh --print)}
secs=${STRESS_SECONDS:-300}

item "fuzzer builds" make -s -j"$(nproc)" BUILD="$BUILD" "$BUILD/selftests/tplan_fuzz"
cp "$BUILD/selftests/tplan_fuzz" "$BUILD/stress/programs/" || { summary; exit 1; }
fuzz_plan "$secs" > "$BUILD/stress/programs/plan"
for k in $kvers; do
	echo "# kernel $k: tplan_fuzz for $secs s, twice"
	item "[$k] module builds with W=1, no warnings" build_module "$k" "$BUILD/kmod/$k"
	[ -s "$BUILD/kmod/$k/tplan.ko" ] || continue
	# Each run ends within its time, a few seconds and its kill grace time.
	VM_TIMEOUT=${VM_TIMEOUT:-$((2 * secs + 600))} \
		scripts/vm/run.sh "$k" "$BUILD/kmod/$k" "$BUILD/stress/programs" "$RESULTS"
done
summary
