#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What make hw-check and make hip-examples do on a machine without an
# MI200/MI300 (this one): each says what it needs and succeeds.
#   1. make hw-check exits 0 with one line, "hw-check: SKIP: needs an
#      MI200/MI300 node: ...", naming each condition that failed here;
#   2. hw_check itself exits 4 (skip) with a SKIP line;
#   3. make hip-examples without hipcc and clang-19 exits 0 and says SKIP
#      for each build it leaves out (with them it builds: no GPU needed;
#      tests/device/hip_example.sh checks the program's own skip).
# On a test node (amdgpu, /dev/kfd) points 1 and 2 skip: there make
# hw-check runs the protocol.  TAP; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-${BUILD:-build}}
out="$BUILD/no-gpu"
rm -rf "$out"
mkdir -p "$out"
echo "TAP version 13"
echo "1..3"
rc=0

node=0
[ -d /sys/module/amdgpu ] && [ -e /dev/kfd ] && [ ! -d /sys/module/kfd_standin ] && node=1

if [ "$node" = 1 ]; then
	echo "ok 1 make hw-check skips without a node # SKIP this is a test node: make hw-check runs the protocol here"
else
	make -s hw-check BUILD="$BUILD" >"$out/hw-check.log" 2>&1
	r=$?
	lines=$(wc -l <"$out/hw-check.log")
	sed 's/^/#   /' "$out/hw-check.log"
	if [ "$r" = 0 ] && [ "$lines" = 1 ] &&
	   grep -q '^hw-check: SKIP: needs an MI200/MI300 node: .*\(amdgpu\|/dev/kfd\|gfx_target_version\|kfd_standin\)' \
		"$out/hw-check.log"; then
		echo "ok 1 make hw-check exits 0 with one SKIP line naming what it lacks"
	else
		echo "not ok 1 make hw-check exits 0 with one SKIP line naming what it lacks (exit $r, $lines lines)"
		rc=1
	fi
fi

if [ "$node" = 1 ] || [ -e /dev/kfd ]; then
	echo "ok 2 hw_check exits 4 without /dev/kfd # SKIP /dev/kfd is here"
elif ! make -s hw-check-programs BUILD="$BUILD" >"$out/build.log" 2>&1; then
	echo "not ok 2 hw_check exits 4 without /dev/kfd: it does not build"
	sed 's/^/#   /' "$out/build.log" | tail -n 10
	rc=1
else
	"$BUILD/hw/hw_check" >"$out/hw_check.log" 2>&1
	r=$?
	sed 's/^/#   /' "$out/hw_check.log"
	if [ "$r" = 4 ] && grep -q '^hw_check: SKIP: needs KFD with a GPU: /dev/kfd' "$out/hw_check.log"; then
		echo "ok 2 hw_check exits 4 without /dev/kfd, saying so"
	else
		echo "not ok 2 hw_check exits 4 without /dev/kfd, saying so (exit $r)"
		rc=1
	fi
fi

make -s hip-examples HIPCC=/nonexistent/hipcc HIP_CLANG=/nonexistent/clang-19 BUILD="$out/build" \
	>"$out/hip-examples.log" 2>&1
r=$?
sed 's/^/#   /' "$out/hip-examples.log"
if [ "$r" = 0 ] && [ "$(grep -c '^hip-examples: SKIP: no ' "$out/hip-examples.log")" = 2 ] &&
   [ ! -e "$out/build/examples" ]; then
	echo "ok 3 make hip-examples without hipcc and clang-19 exits 0, saying SKIP for both builds"
else
	echo "not ok 3 make hip-examples without hipcc and clang-19 exits 0, saying SKIP for both builds (exit $r)"
	rc=1
fi
exit $rc
