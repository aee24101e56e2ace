#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The HIP example (examples/hip_gemm_all_gather.hip) on this machine.
#
#   tests/device/hip_example.sh build
#   tests/device/hip_example.sh run
#
# build: make hip-examples (hipcc, -Wall -Wextra -Werror); the binary holds a
# code object per target (gfx90a and gfx940) with its three kernels
# (gemm_producer, verify_rows, release_round), and so does
# NAME-gfx942 for gfx942, built by Debian's clang-19 (hipcc 5.2 predates
# gfx942; those points skip without clang-19); and in each
# gemm_producer the tile's stores come before mark_ready's s_barrier, its L2
# write-back (buffer_wbl2), the counter's add, the compare and the gate write,
# in that order (tests/device/isa_check.sh checks the header's ordering in
# full; this checks that the example's kernel got it).
# run: runs the binary (both, with clang-19).  Without a GPU and the KFD engine of tplan.ko it
# must exit 4 and say what it needs and what it found (/dev/tplan, the
# GPUs): that passes.  With /dev/kfd and /dev/tplan, exit 0 (verified on
# the GPUs) passes too.  A crash, a timeout, exit 0 or 1 elsewhere fail.
#
# Prints TAP; exits 0, 1 on a failure, 4 (skip) without hipcc.
# Environment: HIPCC (default hipcc), TPLAN_HIP_TARGETS (default
# "gfx90a gfx940"), TPLAN_HIP_TIMEOUT (run, seconds, default 300), BUILD.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HIPCC=${HIPCC:-hipcc}
targets=${TPLAN_HIP_TARGETS:-gfx90a gfx940}
name=hip_gemm_all_gather
bin="$BUILD/examples/$name"
out="$BUILD/hip-example"

usage() {
	sed -n 's/^#   //p' "$0"
}

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit 4
}

mode=${1:-}
case $mode in
build|run) ;;
-h|--help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac

command -v "$HIPCC" >/dev/null 2>&1 ||
	skip_all "no $HIPCC (Debian 12: apt-get install hipcc libamdhip64-dev rocm-device-libs)"
clang_ver=$("$HIPCC" --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n 1)

mkdir -p "$out"
# The build check compiles for its targets whatever an earlier build left.
[ "$mode" = build ] && rm -f "$bin" "$bin-gfx942"
make -s hip-examples BUILD="$BUILD" HIPCC="$HIPCC" HIP_ARCHS="$targets" >"$out/make.log" 2>&1
make_rc=$?

# hipcc does not know one of the targets (Debian 12's: gfx942).
cannot_target() {
	grep -qiE "unknown target|invalid (target|offload arch)|unsupported (cuda|hip) gpu arch" "$out/make.log"
}

# The first tool of the names given that exists.
tool() {
	local c
	for c in "$@"; do
		if command -v "$c" >/dev/null 2>&1; then echo "$c"; return 0; fi
	done
	return 1
}

if [ "$mode" = run ]; then
	echo "TAP version 13"
	echo "1..1"
	if [ "$make_rc" != 0 ] && cannot_target; then
		echo "ok 1 exits 4 with message # SKIP hipcc cannot target one of $targets: $(grep -m1 error "$out/make.log")"
		exit 4
	fi
	if [ "$make_rc" != 0 ] || [ ! -x "$bin" ]; then
		echo "not ok 1 exits 4 with message: does not build: $(grep -m1 -E 'error' "$out/make.log")"
		exit 1
	fi
	timeout "${TPLAN_HIP_TIMEOUT:-300}" "$bin" >"$out/run.log" 2>&1
	rc=$?
	# The gfx942 build (clang-19) must say the same: the worse status wins.
	if [ "$rc" = 4 ] && [ -x "$bin-gfx942" ]; then
		timeout "${TPLAN_HIP_TIMEOUT:-300}" "$bin-gfx942" >"$out/run-gfx942.log" 2>&1
		rc=$?
		if [ "$rc" = 4 ] && ! cmp -s "$out/run.log" "$out/run-gfx942.log"; then
			echo "not ok 1 exits 4 with message: the gfx942 build says something else:"
			sed 's/^/#   /' "$out/run-gfx942.log" | head -n 10
			exit 1
		fi
		cp "$out/run-gfx942.log" "$out/run.log"
	fi
	sed 's/^/#   /' "$out/run.log" | head -n 40
	if [ "$rc" = 0 ] && [ -e /dev/kfd ] && [ -e /dev/tplan ]; then
		echo "ok 1 runs on this node's GPUs, verified"
		exit 0
	fi
	if [ "$rc" != 4 ]; then
		case $rc in
		124) why="timed out after ${TPLAN_HIP_TIMEOUT:-300} s" ;;
		0) why="exits 0 without /dev/kfd and /dev/tplan" ;;
		*) if [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exits $rc"; fi ;;
		esac
		echo "not ok 1 exits 4 with message: $why"
		exit 1
	fi
	# What it must say: what it needs, and what it found of each.
	missing=
	grep -q 'skipped: needs an MI200/MI300 node.*KFD engine of tplan\.ko' "$out/run.log" ||
		missing="$missing, what it needs"
	grep -q '^  found: /dev/tplan: ' "$out/run.log" || missing="$missing, what it found of /dev/tplan"
	[ -e /dev/tplan ] || grep -q 'found: /dev/tplan: .*tplan\.ko is not loaded' "$out/run.log" ||
		missing="$missing, that tplan.ko is not loaded"
	grep -q '^  found: .*GPU' "$out/run.log" || missing="$missing, what it found of the GPUs"
	if [ -n "$missing" ]; then
		echo "not ok 1 exits 4 with message: the message does not say${missing#,}"
		exit 1
	fi
	echo "ok 1 exits 4 with message"
	exit 0
fi

# build
gfx942_targets=${TPLAN_HIP_CLANG_TARGETS:-gfx942}
set -- $targets $gfx942_targets
echo "TAP version 13"
echo "# $("$HIPCC" --version 2>/dev/null | grep -m1 'HIP version'), clang ${clang_ver:-?}; gfx942: $(clang-19 --version 2>/dev/null | head -n 1 || echo 'no clang-19')"
echo "1..$((1 + $# * 2))"
n=1 rc=0
if [ "$make_rc" != 0 ] || [ ! -x "$bin" ]; then
	if cannot_target; then
		echo "ok 1 make hip-examples # SKIP hipcc cannot target one of $targets: $(grep -m1 error "$out/make.log")"
		for t in $targets $gfx942_targets; do
			echo "ok $((n += 1)) $t code object # SKIP no binary"
			echo "ok $((n += 1)) $t gemm_producer marks after its stores # SKIP no binary"
		done
		exit 4
	fi
	echo "not ok 1 make hip-examples: $(grep -m1 -E 'error' "$out/make.log")"
	sed 's/^/#   /' "$out/make.log" | head -n 20
	for t in $targets $gfx942_targets; do
		echo "ok $((n += 1)) $t code object # SKIP no binary"
		echo "ok $((n += 1)) $t gemm_producer marks after its stores # SKIP no binary"
	done
	exit 1
fi
echo "ok 1 make hip-examples"

# In gemm_producer, in this order: the tile's store, s_barrier, buffer_wbl2,
# the counter's add (64-bit, returning), the compare, a branch, the gate write.
read -r -d '' ORDER <<'AWK'
$0 ~ ("^[0-9a-f]+ <" kernel ">:") { inside = 1; next }
/^[0-9a-f]+ <.*>:/ { inside = 0 }
!inside { next }
{
	ins = $0; sub(/^[ \t]+/, "", ins); sub(/[ \t]+$/, "", ins)
	if (ins == "") next
	if (step == 0 && ins ~ /^(global|flat|buffer)_store_dword /) { step++; print "MATCH the tile's store: " ins }
	else if (step == 1 && ins ~ /^s_barrier/) { step++; print "MATCH " ins }
	else if (step == 2 && ins ~ /^buffer_wbl2/) { step++; print "MATCH " ins }
	else if (step == 3 && ins ~ /^(flat|global)_atomic_add_x2 /) { step++; print "MATCH " ins }
	else if (step == 4 && ins ~ /^v_cmp_eq_u64/) { step++; print "MATCH " ins }
	else if (step == 5 && ins ~ /^s_cbranch_/) { step++; print "MATCH " ins }
	else if (step == 6 && ins ~ /^(flat|global)_(store_dwordx2|atomic_swap_x2) /) { step++; print "MATCH the gate: " ins }
}
END {
	split("a store of the tile,s_barrier,buffer_wbl2,the counter's add,the compare,the branch,the gate write", what, ",")
	if (step == 7) print "OK"; else print "FAIL no " what[step + 1] " after " (step ? what[step] : "the kernel's start")
}
AWK

# check_binary BINARY LLVM_VERSION TARGETS...: each target's code object
# holds the three kernels, and gemm_producer marks after its stores.
check_binary() {
	local b=$1 v=$2 t co bundler objcopy objdump tag
	shift 2
	bundler=$(tool ${v:+clang-offload-bundler-$v} ${v:+/usr/lib/llvm-$v/bin/clang-offload-bundler} clang-offload-bundler)
	objcopy=$(tool ${v:+llvm-objcopy-$v} llvm-objcopy objcopy)
	objdump=$(tool ${v:+llvm-objdump-$v} llvm-objdump)
	if [ -z "$bundler" ] || [ -z "$objcopy" ] || [ -z "$objdump" ]; then
		for t in "$@"; do
			echo "ok $((n += 1)) $t code object # SKIP no clang-offload-bundler, objcopy or llvm-objdump"
			echo "ok $((n += 1)) $t gemm_producer marks after its stores # SKIP no clang-offload-bundler, objcopy or llvm-objdump"
		done
		return
	fi
	tag=$(basename "$b")
	"$objcopy" --dump-section .hip_fatbin="$out/$tag.fatbin" "$b" "$out/host.o" 2>"$out/objcopy.log"
	rm -f "$out/host.o"
	"$bundler" -list -type=o -input="$out/$tag.fatbin" >"$out/$tag.bundle.txt" 2>&1
	sed "s/^/#   $tag bundle: /" "$out/$tag.bundle.txt"
	for t in "$@"; do
		co="$out/$t.co"
		rm -f "$co"
		if ! grep -qxE "hipv4-amdgcn-amd-amdhsa-(-|unknown-)$t" "$out/$tag.bundle.txt" ||
		   ! "$bundler" -unbundle -type=o -input="$out/$tag.fatbin" \
			-targets="$(grep -xE "hipv4-amdgcn-amd-amdhsa-(-|unknown-)$t" "$out/$tag.bundle.txt")" \
			-output="$co" >"$out/$t.log" 2>&1 || [ ! -s "$co" ]; then
			echo "not ok $((n += 1)) $t code object: not in $tag"
			echo "ok $((n += 1)) $t gemm_producer marks after its stores # SKIP no code object"
			rc=1
			continue
		fi
		"$objdump" -d --mcpu="$t" "$co" | sed 's@[[:space:]]*//.*@@' >"$out/$t.dis"
		if grep -q '<gemm_producer>:' "$out/$t.dis" && grep -q '<verify_rows>:' "$out/$t.dis" &&
		   grep -q '<release_round>:' "$out/$t.dis"; then
			echo "ok $((n += 1)) $t code object ($tag): gemm_producer, verify_rows, release_round"
		else
			echo "not ok $((n += 1)) $t code object ($tag): no gemm_producer, verify_rows or release_round"
			rc=1
		fi
		awk -v kernel=gemm_producer "$ORDER" "$out/$t.dis" >"$out/$t.order.txt"
		if grep -q '^OK$' "$out/$t.order.txt"; then
			echo "ok $((n += 1)) $t gemm_producer marks after its stores"
		else
			echo "not ok $((n += 1)) $t gemm_producer marks after its stores: $(sed -n 's/^FAIL //p' "$out/$t.order.txt")"
			rc=1
		fi
		sed -n 's/^MATCH /#   /p' "$out/$t.order.txt"
	done
}

check_binary "$bin" "$clang_ver" $targets
if [ -x "$bin-gfx942" ]; then
	check_binary "$bin-gfx942" 19 $gfx942_targets
else
	for t in $gfx942_targets; do
		echo "ok $((n += 1)) $t code object # SKIP no $bin-gfx942 (it needs clang-19: apt-get install clang-19 clang-tools-19 lld-19)"
		echo "ok $((n += 1)) $t gemm_producer marks after its stores # SKIP no $bin-gfx942"
	done
fi
exit $rc
