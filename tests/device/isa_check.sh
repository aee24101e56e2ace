#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Compile device/tplan_device.h for MI200 (gfx90a) and MI300 (gfx940 with
# Debian's hipcc; gfx942, the production MI300X/MI300A, with Debian's
# clang-19, which Debian's ROCm 5.2 hipcc predates), disassemble the code
# objects and check the memory ordering of ARCHITECTURE.md §5 in the
# machine code:
#
#   mark_ready  in this order: s_waitcnt vmcnt(0) after the tile's store,
#               s_barrier, buffer_wbl2 (gfx94x: sc0 sc1), s_waitcnt vmcnt(0),
#               the atomic add on the writer counter (with return; gfx94x:
#               system scope, sc1), then a compare and a branch, and only
#               after them the write of the ready gate, system scope
#               (gfx94x: sc1 on an atomic, sc0 sc1 on a store)
#   arrived,    every load of the gate is a system-scope acquire: glc (gfx94x:
#   wait        sc0 sc1), s_waitcnt vmcnt(0), then the invalidate
#               (gfx90a: buffer_wbinvl1_vol; gfx94x: buffer_inv sc0 sc1); the
#               result goes through LDS between two s_barriers; no clock read
#   release     in this order: the buffer's (last) load, s_waitcnt vmcnt(0)
#               between it and the s_barrier, the s_barrier, buffer_wbl2
#               (gfx94x: sc0 sc1), s_waitcnt vmcnt(0), then the one 64-bit
#               maximum of the release word, system scope: an atomic umax
#               (gfx94x: sc1), or where the compiler expands it (clang-19)
#               a returning cmpswap (gfx90a: glc; gfx94x: sc0 sc1) that a
#               backward branch repeats; no clock read
#
#   tests/device/isa_check.sh [--variant normal|no-barrier|no-release|release-no-wait|release-relaxed]
#   tests/device/isa_check.sh --negatives
#
# --variant builds tests/device/isa_kernels.hip broken: the CTA barrier
# removed (no-barrier), the counter's add relaxed (no-release), a release
# without its wait for the loads and its barrier (release-no-wait), or
# without its release fence, which leaves the maximum relaxed
# (release-relaxed): the check must then fail for the functions it broke.
# --negatives runs them all and passes only if every one is refused, for
# those functions on every target that compiled.  Prints TAP; exits 0, 1
# on a failure, 4 (skip) when neither compiler is there; a target whose
# compiler is missing skips its tests.
#
# gfx942 through clang-19: Debian's rocm-device-libs 5.2 has no gfx942
# ISA-version bitcode, so a directory of links to its files stands in,
# with oclc_isa_version_942.bc -> the gfx940 one.  That file only defines
# __oclc_ISA_version, which none of these kernels reads; gfx942 has
# gfx940's memory model and cache-control bits.
#
# Environment: HIPCC (default hipcc), LLVM_OBJDUMP (default: the one of
# hipcc's clang), CLANG19 (default clang-19), ROCM_BITCODE (default
# /usr/lib/x86_64-linux-gnu/amdgcn/bitcode), TPLAN_ISA_TARGETS (default
# "gfx90a gfx940 gfx942"), BUILD.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
HIPCC=${HIPCC:-hipcc}
CLANG19=${CLANG19:-clang-19}
ROCM_BITCODE=${ROCM_BITCODE:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
targets=${TPLAN_ISA_TARGETS:-gfx90a gfx940 gfx942}
src=tests/device/isa_kernels.hip
# The functions checked.
functions="mark_ready arrived wait release"

usage() {
	sed -n 's/^#   //p' "$0" | grep isa_check
}

variant=normal
negatives=0
while [ $# -gt 0 ]; do
	case $1 in
	--variant) variant=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
	--variant=*) variant=${1#*=}; shift ;;
	--negatives) negatives=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit 4
}

have_hipcc=0 have_clang19=0
if command -v "$HIPCC" >/dev/null 2>&1; then
	clang_ver=$("$HIPCC" --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n 1)
	objdump=${LLVM_OBJDUMP:-}
	if [ -z "$objdump" ]; then
		for c in ${clang_ver:+llvm-objdump-$clang_ver} llvm-objdump; do
			if command -v "$c" >/dev/null 2>&1; then objdump=$c; break; fi
		done
	fi
	[ -n "$objdump" ] && have_hipcc=1
fi
if command -v "$CLANG19" >/dev/null 2>&1 && command -v llvm-objdump-19 >/dev/null 2>&1 &&
   command -v ld.lld-19 >/dev/null 2>&1 && [ -f "$ROCM_BITCODE/ockl.bc" ]; then
	have_clang19=1
fi
[ "$have_hipcc" = 1 ] || [ "$have_clang19" = 1 ] ||
	skip_all "no $HIPCC (Debian 12: apt-get install hipcc libamdhip64-dev rocm-device-libs) and no $CLANG19 (apt-get install clang-19 lld-19 llvm-19 rocm-device-libs)"

# Which compiler builds a target: clang-19 for gfx942 (hipcc 5.2 predates
# it), hipcc for the others.
uses_clang19() { [ "$1" = gfx942 ]; }

# The functions each broken build breaks: refused on every target.
broken() {
	case $1 in
	no-barrier) echo "mark_ready arrived wait release" ;;
	no-release) echo mark_ready ;;
	release-no-wait|release-relaxed) echo release ;;
	esac
}

if [ "$negatives" = 1 ]; then
	variants="no-barrier no-release release-no-wait release-relaxed"
	echo "TAP version 13"
	echo "1..$(echo $variants | wc -w)"
	n=0 rc=0
	for v in $variants; do
		n=$((n + 1))
		log="$BUILD/isa/$v.tap"
		mkdir -p "$BUILD/isa"
		"$0" --variant "$v" >"$log" 2>&1
		vrc=$?
		# The functions it broke that the check passed anyway.
		passed=$(awk -v want=" $(broken "$v") " '$1 == "ok" && !/# SKIP/ && index(want, " " $4 " ") { printf " %s %s", $3, $4 }' "$log")
		if [ "$vrc" = 4 ]; then
			echo "ok $n $v build refused # SKIP $(sed -n 's/^1..0 # SKIP //p' "$log")"
		elif [ "$vrc" != 0 ] && grep -q '^not ok' "$log" && [ -z "$passed" ] &&
		     ! grep -q '^not ok.*does not compile' "$log"; then
			echo "ok $n $v build refused"
			grep '^not ok' "$log" | sed 's/^/#   /'
		else
			echo "not ok $n $v build refused (the check passed a broken build:${passed:- none}; or it did not compile)"
			sed 's/^/#   /' "$log"
			rc=1
		fi
	done
	exit $rc
fi

case $variant in
normal) defs= ;;
no-barrier) defs=-DTPLAN_DEVICE_TEST_NO_BARRIER ;;
no-release) defs=-DTPLAN_DEVICE_TEST_NO_RELEASE ;;
release-no-wait) defs=-DTPLAN_DEVICE_TEST_RELEASE_NO_WAIT ;;
release-relaxed) defs=-DTPLAN_DEVICE_TEST_RELEASE_RELAXED ;;
*) usage >&2; exit 2 ;;
esac

# The rules, per kernel, over "instruction operands" lines.  A failure
# prints "FAIL why"; every matched instruction prints "MATCH what: insn".
read -r -d '' RULES <<'AWK'
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function has_bits(ins, bits,   n, i, b) {
	n = split(bits, b, " ")
	for (i = 1; i <= n; i++)
		if (ins !~ ("[ ,]" b[i] "( |$)"))
			return 0
	return 1
}
BEGIN {
	if (target ~ /^gfx94/) {
		rmw_bits = "sc0 sc1"; load_bits = "sc0 sc1"; store_bits = "sc0 sc1"; atomic_bits = "sc1"
		wbl2 = "^buffer_wbl2 sc0 sc1$"; inv = "^buffer_inv sc0 sc1$"
	} else {
		rmw_bits = "glc"; load_bits = "glc"; store_bits = ""; atomic_bits = ""
		wbl2 = "^buffer_wbl2$"; inv = "^buffer_wbinvl1_vol$"
	}
	clock = "^s_(memtime|memrealtime|getreg_b32 .*HW_REG_SHADER_CYCLES)"
	gate_write = "^(flat|global)_(store_dwordx2|atomic_swap_x2) "
	add = "^(flat|global)_atomic_add_x2 "
	nsteps = split("store wait barrier wbl2 wbl2_wait add compare branch gate", steps, " ")
	name["store"] = "the tile's store"; name["wait"] = "s_waitcnt vmcnt(0)"
	name["barrier"] = "s_barrier"; name["wbl2"] = "buffer_wbl2 (the release's L2 write-back)"
	name["wbl2_wait"] = "the s_waitcnt vmcnt(0) after buffer_wbl2"
	name["add"] = "the counter's add"; name["compare"] = "the compare"
	name["branch"] = "the last writer's branch"; name["gate"] = "the gate write"
	step = 1
}
$0 ~ ("^[0-9a-f]+ <" kernel ">:") { inside = 1; next }
/^[0-9a-f]+ <.*>:/ { inside = 0 }
!inside { next }
{
	ins = trim($0)
	if (ins == "")
		next
	nins++
	insn[nins] = ins
}
END {
	if (!nins) { print "FAIL kernel " kernel " not found"; exit }
	if (kernel == "isa_mark_ready") mark_ready()
	else if (kernel == "isa_release") release()
	else consumer()
}
function is(what, ins) {
	if (what == "store") return ins ~ /^(global|flat|buffer)_store_dword / # the tile
	if (what == "wait" || what == "wbl2_wait") return ins ~ /^s_waitcnt .*vmcnt\(0\)/
	if (what == "barrier") return ins ~ /^s_barrier/
	if (what == "wbl2") return ins ~ wbl2
	if (what == "add") return ins ~ add && has_bits(ins, rmw_bits)
	if (what == "compare") return ins ~ /^v_cmp_eq_u64/
	if (what == "branch") return ins ~ /^s_cbranch_/
	# An atomic's sc0 asks for the old value; its scope is sc1 alone.
	if (what == "gate") return ins ~ gate_write && has_bits(ins, ins ~ /atomic/ ? atomic_bits : store_bits)
	return 0
}
function mark_ready(   i, ins, adds, gates) {
	for (i = 1; i <= nins; i++) {
		ins = insn[i]
		if (ins ~ add) adds++
		if (ins ~ gate_write) gates++
		if (ins ~ add && step <= 5) {
			print "FAIL the writer counter's add comes before " name[steps[step]] ": " ins
			return
		}
		if (ins ~ gate_write && step <= 8) {
			print "FAIL the gate is written before " name[steps[step]] " (not only on the last writer's path): " ins
			return
		}
		if (step <= nsteps && is(steps[step], ins)) {
			print "MATCH " steps[step] ": " ins
			step++
		}
	}
	if (step <= nsteps) {
		why["wait"] = "no s_waitcnt vmcnt(0) after the tile's store"
		why["barrier"] = "no s_barrier after the vmcnt(0) wait"
		why["wbl2"] = "no " wbl2 " (the release's L2 write-back) after the s_barrier"
		why["wbl2_wait"] = "no s_waitcnt vmcnt(0) after buffer_wbl2"
		why["add"] = "no returning system-scope atomic add (" rmw_bits ") after the write-back"
		why["compare"] = "no 64-bit compare of the counter after the add"
		why["branch"] = "no branch after the compare"
		why["gate"] = "no system-scope gate write" (store_bits ? " (atomic " atomic_bits ", store " store_bits ")" : "") " after the branch"
		print "FAIL " (steps[step] in why ? why[steps[step]] : "no " steps[step])
		return
	}
	if (adds != 1 || gates != 1) {
		print "FAIL " adds " counter adds and " gates " gate writes, want 1 and 1"
		return
	}
	print "OK"
}
# The maximum, or where the compiler expands a system-scope maximum
# (LLVM 19), its compare-and-swap loop: a returning cmpswap, then a branch
# back.
function is_max(ins) {
	if (ins ~ /^(flat|global)_atomic_umax_x2 /) return has_bits(ins, atomic_bits)
	return ins ~ /^(flat|global)_atomic_cmpswap_x2 / && has_bits(ins, rmw_bits)
}
function release(   i, j, ins, bar, load, wait, wb, wbw, mx, maxes, wbl2_name) {
	wbl2_name = wbl2
	gsub(/[$^]/, "", wbl2_name)
	for (i = 1; i <= nins; i++) {
		ins = insn[i]
		if (ins ~ clock) { print "FAIL a clock read (contract 5): " ins; return }
		if (ins ~ /^(flat|global)_atomic_(umax|cmpswap)_x2 /) {
			maxes++
			if (!mx) mx = i
		}
		if (ins ~ /^s_barrier/ && !bar) bar = i
	}
	if (!bar) { print "FAIL no s_barrier after the buffer's loads"; return }
	for (i = bar - 1; i >= 1 && !load; i--)
		if (insn[i] ~ /^(global|flat|buffer)_load_/) load = i
	if (!load) { print "FAIL no load of the buffer before the s_barrier"; return }
	print "MATCH the buffer's (last) load: " insn[load]
	for (i = load + 1; i < bar && !wait; i++)
		if (insn[i] ~ /^s_waitcnt .*vmcnt\(0\)/) wait = i
	if (!wait) { print "FAIL no s_waitcnt vmcnt(0) between the buffer's last load and the s_barrier"; return }
	print "MATCH the wave's loads waited for: " insn[wait]
	print "MATCH the CTA barrier: " insn[bar]
	if (maxes != 1) { print "FAIL " maxes + 0 " 64-bit maxima (umax or cmpswap) of the release word, want 1"; return }
	if (mx < bar) { print "FAIL the release word's maximum comes before the s_barrier: " insn[mx]; return }
	for (i = bar + 1; i < mx; i++) {
		if (!wb && insn[i] ~ wbl2) wb = i
		else if (wb && !wbw && insn[i] ~ /^s_waitcnt .*vmcnt\(0\)/) wbw = i
	}
	if (!wb) { print "FAIL no " wbl2_name " (the release's L2 write-back) between the s_barrier and the release word's maximum: " insn[mx]; return }
	print "MATCH the release's L2 write-back: " insn[wb]
	if (!wbw) { print "FAIL no s_waitcnt vmcnt(0) between buffer_wbl2 and the release word's maximum: " insn[mx]; return }
	print "MATCH its wait: " insn[wbw]
	if (!is_max(insn[mx])) {
		print "FAIL the release word's maximum is not system scope (umax " (atomic_bits ? atomic_bits : "with no scope bit") ", cmpswap " rmw_bits "): " insn[mx]
		return
	}
	if (insn[mx] ~ /umax/) {
		print "MATCH the maximum, system scope: " insn[mx]
	} else {
		for (j = mx + 1; j <= nins && j <= mx + 8; j++)
			# A backward branch: its 16-bit offset is negative.
			if (insn[j] ~ /^s_cbranch_[a-z]+ [0-9]+$/ && substr(insn[j], index(insn[j], " ") + 1) + 0 >= 32768)
				break
		if (j > nins || j > mx + 8) { print "FAIL a cmpswap of the release word that no loop repeats: " insn[mx]; return }
		print "MATCH the maximum as a compare-and-swap loop, system scope: " insn[mx] "; " insn[j]
	}
	print "OK"
}
function consumer(   i, j, ins, loads, barriers, lds_w, lds_r, sleeps, ok_wait, ok_inv) {
	for (i = 1; i <= nins; i++) {
		ins = insn[i]
		if (ins ~ clock) { print "FAIL a clock read (contract 5): " ins; return }
		if (ins ~ /^s_barrier/) barriers++
		if (ins ~ /^ds_write/) lds_w++
		if (ins ~ /^ds_read/) lds_r++
		if (ins ~ /^s_sleep/) sleeps++
		if (ins !~ /^(flat|global)_load_dwordx2 /)
			continue
		loads++
		if (!has_bits(ins, load_bits)) {
			print "FAIL the gate load is not system scope (" load_bits "): " ins
			return
		}
		print "MATCH acquire load: " ins
		ok_wait = ok_inv = 0
		for (j = i + 1; j <= nins && j <= i + 6 && !ok_inv; j++) {
			if (insn[j] ~ /^s_waitcnt .*vmcnt\(0\)/ && !ok_wait) {
				ok_wait = 1
				print "MATCH wait: " insn[j]
			} else if (insn[j] ~ /^buffer_invl2$/ && ok_wait) {
				print "MATCH invalidate L2: " insn[j]
			} else if (insn[j] ~ inv && ok_wait) {
				ok_inv = 1
				print "MATCH invalidate: " insn[j]
			} else if (insn[j] ~ /^(s_cbranch|s_branch|s_setpc|ds_|flat_|global_|buffer_)/) {
				break
			}
		}
		if (!ok_inv) {
			print "FAIL no s_waitcnt vmcnt(0) then " inv " right after the gate load"
			return
		}
	}
	if (!loads) { print "FAIL no load of the gate"; return }
	if (barriers < 2 || !lds_w || !lds_r) {
		print "FAIL the result is not shared through LDS between two barriers (" barriers + 0 " s_barrier, " lds_w + 0 " ds_write, " lds_r + 0 " ds_read)"
		return
	}
	print "MATCH shared: " lds_w " ds_write, " barriers " s_barrier, " lds_r " ds_read"
	if (kernel == "isa_wait") {
		if (!sleeps) { print "FAIL no s_sleep between polls"; return }
		print "MATCH poll pause: s_sleep, no clock read"
	}
	print "OK"
}
AWK

out="$BUILD/isa/$variant"
rm -rf "$out"
mkdir -p "$out"
set -- $targets
nfn=$(echo $functions | wc -w)
echo "TAP version 13"
[ "$have_hipcc" = 1 ] &&
	echo "# hipcc: $("$HIPCC" --version 2>/dev/null | grep -m1 'HIP version'), clang ${clang_ver:-?}, $objdump"
[ "$have_clang19" = 1 ] && echo "# $("$CLANG19" --version | head -n 1), llvm-objdump-19; variant $variant"
echo "1..$(($# * nfn))"
n=0 rc=0 skipped=0
if [ "$have_clang19" = 1 ]; then
	# rocm-device-libs as clang-19 looks for them, gfx942's ISA version
	# file standing in (see the top of this file).
	bc="$out/bitcode"
	mkdir -p "$bc"
	for f in "$ROCM_BITCODE"/*.bc; do ln -sf "$f" "$bc/"; done
	[ -f "$bc/oclc_isa_version_942.bc" ] || ln -sf "$ROCM_BITCODE/oclc_isa_version_940.bc" "$bc/oclc_isa_version_942.bc"
fi
for t in $targets; do
	co="$out/$t.co"
	if uses_clang19 "$t"; then
		cc_ok=$have_clang19 cc_name=$CLANG19 dump=llvm-objdump-19
		cc_cmd=("$CLANG19" --rocm-device-lib-path="$bc" -I/usr/include)
	else
		cc_ok=$have_hipcc cc_name=$HIPCC dump=${objdump:-}
		cc_cmd=("$HIPCC")
	fi
	if [ "$cc_ok" != 1 ]; then
		for k in $functions; do
			n=$((n + 1))
			echo "ok $n $t $k # SKIP no $cc_name"
			skipped=$((skipped + 1))
		done
		continue
	fi
	if ! "${cc_cmd[@]}" -x hip --offload-arch="$t" --cuda-device-only --no-gpu-bundle-output -c -O3 \
		-Wall -Werror -Idevice -Iuapi $defs "$src" -o "$co" >"$out/$t.log" 2>&1; then
		why=$(grep -m1 -E 'error' "$out/$t.log")
		for k in $functions; do
			n=$((n + 1))
			if grep -qiE "unknown target|invalid (target|offload arch)|unsupported (cuda|hip) gpu arch" "$out/$t.log"; then
				echo "ok $n $t $k # SKIP $cc_name cannot target $t: $why"
				skipped=$((skipped + 1))
			else
				echo "not ok $n $t $k: does not compile with $cc_name: $why"
				rc=1
			fi
		done
		continue
	fi
	"$dump" -d --mcpu="$t" "$co" | sed 's@[[:space:]]*//.*@@' >"$out/$t.dis"
	for k in $functions; do
		n=$((n + 1))
		res="$out/$t.$k.txt"
		awk -v target="$t" -v kernel="isa_$k" "$RULES" "$out/$t.dis" >"$res"
		if grep -q '^OK$' "$res"; then
			echo "ok $n $t $k"
		else
			echo "not ok $n $t $k: $(sed -n 's/^FAIL //p' "$res" | head -n 1)"
			rc=1
		fi
		sed -n 's/^MATCH /#   /p' "$res"
	done
done
[ "$rc" = 0 ] && [ "$skipped" = "$n" ] && exit 4
exit $rc
