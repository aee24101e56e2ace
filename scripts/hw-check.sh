#!/bin/bash
# make hw-check: the test-node protocol of tplan's KFD engine
# (docs/test-node.md), on an MI200/MI300 node.  Anywhere else it prints one
# line, "hw-check: SKIP: ...", naming each condition that failed, and exits 0.
#
#   1. the steps a program takes on KFD and tplan.ko: tests/hw/hw_check.c
#      (inventory, raw queues, tplan's pages as a queue, rptr, full ring,
#      wrap, ring sizes, POLL, a blocked queue's engine, the copy count,
#      ATOMIC, eviction, kill -9, teardown, engines and bandwidth, ...);
#   2. tplan's KFD engine end to end (TPLAN_ENGINE=kfd): the all-gather
#      example verified, the benchmarks (mark-to-arrival latency,
#      bandwidth), the HIP example's GEMM + all-gather for 10 000 rounds
#      verified on every rank.
# Every line is "PASS|FAIL|SKIP|INFO STEP what: measured  [expect: ...]";
# the last one counts them.  Exits 1 on a FAIL.
#
# A node is: amdgpu loaded, /dev/kfd, a KFD GPU node whose
# gfx_target_version is 90010 (MI200) or 90402..90407 (MI300), and not the
# tests' KFD stand-in (kfd_standin) in KFD's place.  tplan.ko should be
# loaded (make module; insmod tplan.ko): without it the steps that need it
# SKIP.  Run as root, so that the kernel log and debugfs can be read.
#
# Environment: HW_CHECK_ARGS (hw_check's options: -g GPU, -s STEPS, -q),
# HW_CHECK_ROUNDS (the HIP example's rounds, default 10000), BUILD.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
out="$BUILD/hw-check"

# ---- is this a test node? ---------------------------------------------------
missing=()
[ -d /sys/module/amdgpu ] || missing+=("amdgpu is not loaded (no /sys/module/amdgpu)")
[ -e /dev/kfd ] || missing+=("no /dev/kfd")
found="" node_ok=0
for p in /sys/class/kfd/kfd/topology/nodes/*/properties; do
	[ -r "$p" ] || continue
	v=$(awk '$1 == "gfx_target_version" { print $2 }' "$p")
	if [ -z "$v" ] || [ "$v" = 0 ]; then continue; fi	# a CPU node
	found="$found $v"
	case $v in 90010|9040[2-7]) node_ok=1 ;; esac
done
[ "$node_ok" = 1 ] ||
	missing+=("no KFD GPU node of gfx_target_version 90010 (MI200) or 90402..90407 (MI300) (found:${found:- none})")
[ ! -d /sys/module/kfd_standin ] ||
	missing+=("kfd_standin is loaded: /dev/kfd is the tests' KFD stand-in, not a GPU's")
if [ "${#missing[@]}" -gt 0 ]; then
	why=$(printf '%s; ' "${missing[@]}")
	echo "hw-check: SKIP: needs an MI200/MI300 node: ${why%; }"
	exit 0
fi

# ---- build -------------------------------------------------------------------
rm -rf "$out"
mkdir -p "$out"
ngpus=$(echo "$found" | wc -w)
gfx=$(echo "$found" | awk '{ print $1 }')
echo "# hw-check on $(uname -r): $ngpus GPUs (gfx_target_version$found); logs in $out"
make -s -j"$(nproc)" lib hw-check-programs examples bench-vm-programs BUILD="$BUILD" >"$out/make.log" 2>&1 ||
	{ tail -n 20 "$out/make.log"; echo "hw-check: FAIL: the build (see $out/make.log)"; exit 1; }
hip=0
if command -v "${HIPCC:-hipcc}" >/dev/null 2>&1 || command -v clang-19 >/dev/null 2>&1; then
	make -s hip-examples BUILD="$BUILD" >"$out/hip.log" 2>&1 && hip=1
fi

npass=0 nfail=0 nskip=0 ninfo=0
line() {	# STATUS STEP TEXT [EXPECT]
	printf '%s %-3s %s%s\n' "$1" "$2" "$3" "${4:+  [expect: $4]}"
	case $1 in PASS) npass=$((npass + 1)) ;; FAIL) nfail=$((nfail + 1)) ;;
	SKIP) nskip=$((nskip + 1)) ;; INFO) ninfo=$((ninfo + 1)) ;; esac
}

if [ -e /dev/tplan ]; then
	echo "# tplan.ko: $("$BUILD/examples/tplan_info" 2>&1 | head -n 1)"
else
	echo "# tplan.ko is not loaded: the steps that need it SKIP (make module; insmod tplan.ko)"
fi

# ---- 1. the protocol's steps on KFD and tplan.ko -----------------------------------
# shellcheck disable=SC2086
"$BUILD/hw/hw_check" ${HW_CHECK_ARGS:-} 2>&1 | tee "$out/hw_check.log"
rc=${PIPESTATUS[0]}
read -r p f s i < <(sed -n 's/^hw_check: \([0-9]*\) PASS, \([0-9]*\) FAIL, \([0-9]*\) SKIP, \([0-9]*\) INFO$/\1 \2 \3 \4/p' \
	"$out/hw_check.log")
npass=$((npass + ${p:-0})) nfail=$((nfail + ${f:-0})) nskip=$((nskip + ${s:-0})) ninfo=$((ninfo + ${i:-0}))
[ -n "${p:-}" ] || line FAIL "-" "hw_check ended without its summary (exit status $rc)"

# ---- 2. tplan's KFD engine end to end ------------------------------------------
engine=""
[ -e /dev/tplan ] && "$BUILD/examples/tplan_info" 2>/dev/null | grep -q '^engines:.* kfd' && engine=kfd
export TPLAN_ENGINE=kfd

# run STEP NAME LOG TIMEOUT CMD...: the command's exit status; its output in LOG.
run() {
	local log=$out/$1 t=$2
	shift 2
	timeout "$t" "$@" >"$log" 2>&1
}

ranks=$ngpus
[ "$ranks" -le 8 ] || ranks=8
if [ -z "$engine" ]; then
	why="needs tplan.ko with its KFD engine (tplan_info: ${engine:-no kfd in engines})"
	line SKIP 20 "all-gather on the KFD engine: $why"
	line SKIP 20 "mark-to-arrival latency and bandwidth through tplan: $why"
	line SKIP 12 "the HIP example, GEMM + all-gather, verified: $why"
	line SKIP 20 "all-gather + GEMM overlap: $why"
else
	if run all_gather.log 600 "$BUILD/examples/all_gather" -n "$ranks" -r 200; then
		line PASS 20 "all_gather -n $ranks -r 200 on the KFD engine, verified: $(grep '^all_gather: ok' "$out/all_gather.log" | sed 's/^all_gather: ok: //')" \
			"every rank's rows every round"
	else
		line FAIL 20 "all_gather -n $ranks -r 200 on the KFD engine: $(tail -n 1 "$out/all_gather.log")" \
			"every rank's rows every round"
	fi

	if run put_bench.log 900 "$BUILD/bench/put_bench" 1; then
		line INFO 20 "put + quiet, 64 MiB, rank 0 -> 1: $(awk '$1 == 67108864 { print $3 " MB/s" }' "$out/put_bench.log")" \
			"~60 GB/s a pair (mori on MI355X); hw_check's step 16 is the raw engine's"
		line INFO 20 "$(grep -m1 '^mark to arrival (chain' "$out/put_bench.log")" \
			"a few us; ~2 us a packet (mori on MI355X); hw_check's step 8 is the raw engine's"
		line INFO 20 "$(grep -m1 '^put + quiet (host' "$out/put_bench.log")" "tens of us: a host round trip"
	else
		line FAIL 20 "put_bench on the KFD engine: $(tail -n 1 "$out/put_bench.log")"
	fi
	if run plan_bench.log 1800 "$BUILD/bench/plan_bench" 0.1; then
		line INFO 20 "plan_bench: $(grep -m1 '^all-gather .*depth 1:' "$out/plan_bench.log")" \
			"mark-to-arrival p50 a few us; rounds per second against the software engine's (make bench)"
	else
		line FAIL 20 "plan_bench on the KFD engine: $(grep -m1 FAILED "$out/plan_bench.log" || tail -n 1 "$out/plan_bench.log")"
	fi

	# Step 12: the producer's stores, mark_ready and the copy engines, on GPUs, for a long time.
	bin="$BUILD/examples/hip_gemm_all_gather"
	case $gfx in 9040[2-7]) [ ! -x "$bin-gfx942" ] || bin="$bin-gfx942" ;; esac
	rounds=${HW_CHECK_ROUNDS:-10000}
	if [ "$hip" != 1 ] || [ ! -x "$bin" ]; then
		line SKIP 12 "the HIP example: not built (make hip-examples needs hipcc or clang-19: $out/hip.log)"
	elif run hip_example.log 3600 "$bin" -n "$ranks" -r "$rounds"; then
		line PASS 12 "$(basename "$bin") -n $ranks -r $rounds: $(grep -m1 '^hip_gemm_all_gather: ok' "$out/hip_example.log" || tail -n 1 "$out/hip_example.log")" \
			"every rank's rows verified on the GPU every round: producer -> SDMA coherence"
	else
		line FAIL 12 "$(basename "$bin") -n $ranks -r $rounds: $(tail -n 1 "$out/hip_example.log")" \
			"every rank's rows verified on the GPU every round: producer -> SDMA coherence"
	fi
	line SKIP 20 "all-gather + GEMM overlap: hip_gemm_all_gather does not time its GEMM alone and its all-gather alone" \
		"1.41x (mori's fused GEMM + all-gather against the two in sequence; RCCL 1.23x)"
fi

echo "hw-check: $npass PASS, $nfail FAIL, $nskip SKIP, $ninfo INFO (logs: $out)"
[ "$nfail" = 0 ]
