#!/bin/bash
# Fuzz the SDMA codec and the chain validator for SECONDS seconds under
# ASan and UBSan, on a temporary copy of the seed corpus.
# Prints one TAP line; exits non-zero on a finding (kept in $BUILD/fuzz/).
# Usage: tests/fuzz/run.sh SECONDS
set -u
cd "$(dirname "$0")/../.."
secs=${1:-60}
BUILD=${BUILD:-build}
CLANG=${CLANG:-clang}
out=$BUILD/fuzz
name="fuzz decode+validate"
mkdir -p "$out"

if ! "$CLANG" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-Wall -Wextra -Werror -Iuapi -Ikmod -Itests/host -o "$out/fuzz_chain" \
	tests/fuzz/fuzz_chain.c kmod/sdma_limits.c kmod/chain_validate.c kmod/chain_overlap.c >"$out/build.log" 2>&1; then
	echo "not ok 1 - $name: build failed"
	sed 's/^/# /' "$out/build.log" | tail -n 20
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/fuzz/corpus/* "$work/"
# -timeout: an input that takes seconds is a finding (the kernel runs this).
"$out/fuzz_chain" -max_total_time="$secs" -timeout=10 -max_len=8192 -print_final_stats=1 \
	-artifact_prefix="$out/" "$work" >"$out/fuzz.log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -n 1)
if [ "$rc" = 0 ]; then
	echo "ok 1 - $name $secs s, ${execs:-0} execs"
	exit 0
fi
echo "not ok 1 - $name $secs s, ${execs:-0} execs: finding (exit $rc), see $out/fuzz.log"
grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$out/fuzz.log" | head -n 10 | sed 's/^/# /'
exit 1
