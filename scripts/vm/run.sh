#!/bin/bash
# Boot one Debian kernel under QEMU (TCG) with tplan.ko and the selftests,
# and turn what happened into result lines.
#
#   scripts/vm/run.sh KVER MODULE_DIR TEST_DIR RESULTS_FILE
#
#   MODULE_DIR  holds tplan.ko built against KVER's headers
#   TEST_DIR    holds the test programs and a "plan" file: lines "bin NAME
#               [ARGS]" or "sh NAME [ARGS]", run in order, and "mod PARAMS",
#               which reloads the module with PARAMS for the lines after it
#               (their tests are named NAME@PARAMS)
#
# Environment: VM_MEM (MiB, default 3072: the 1 GiB per-packet split runs
# between two heaps of just over 1 GiB), VM_CPUS (default 2),
# VM_TIMEOUT (s, default 1500), TPLAN_MODPARAMS (insmod arguments),
# VM_SHOW_OUTPUT=1 (print the programs' output instead of parsing TAP),
# TPLAN_CACHE (where install-deps.sh put the kernel images),
# VM_ROOTFS_EXTRA (a directory laid over the VM's /: the Python runtime).
#
# Every result line is TAP-like: "ok - [KVER] name" / "not ok - [KVER] name"
# / "ok - [KVER] name # SKIP why".  Besides each test, the run itself yields:
# insmod, each test program's exit status, each reload's rmmod and insmod,
# dmesg clean, rmmod.
set -uo pipefail

kver=$1 moddir=$2 testdir=$3 results=$4
here=$(cd "$(dirname "$0")" && pwd)
cache=${TPLAN_CACHE:-/var/cache/tplan}
kernel="$cache/kernels/$kver/vmlinuz"
work=$(dirname "$results")/vm-$kver
mem=${VM_MEM:-3072}
cpus=${VM_CPUS:-2}
timeout_s=${VM_TIMEOUT:-1500}

[ -s "$kernel" ] || { echo "vm: no kernel image $kernel (run scripts/install-deps.sh)" >&2; exit 2; }
rm -rf "$work"
mkdir -p "$work/root"/{bin,sbin,proc,sys,dev,tmp,tests,etc}

# The initramfs: busybox, the module, the tests.
cp /bin/busybox "$work/root/bin/busybox"
for app in $(/bin/busybox --list); do
	[ "$app" = busybox ] || ln -sf busybox "$work/root/bin/$app"
done
cp "$here/init.sh" "$work/root/init"
chmod +x "$work/root/init"
cp "$moddir/tplan.ko" "$work/root/tplan.ko"
cp -r "$testdir"/. "$work/root/tests/"
printf '%s\n' "${TPLAN_MODPARAMS:-}" > "$work/root/tests/modparams"
[ -z "${VM_ROOTFS_EXTRA:-}" ] || cp -a "$VM_ROOTFS_EXTRA"/. "$work/root/"
( cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$work/initramfs.gz"

cmdline="console=ttyS0 quiet panic=-1 slub_debug=FZPU"
case "$kver" in
6.12*|6.1[3-9]*|[7-9].*) cmdline="$cmdline kfence.sample_interval=10" ;;
esac

log="$work/console.log"
start=$(date +%s)
timeout --foreground -k 10 "$timeout_s" \
	qemu-system-x86_64 -accel tcg -m "$mem" -smp "$cpus" -nographic -no-reboot \
		-kernel "$kernel" -initrd "$work/initramfs.gz" -append "$cmdline" \
		-monitor none -serial "file:$log" </dev/null >"$work/qemu.out" 2>&1
qrc=$?
secs=$(( $(date +%s) - start ))
tr -d '\r' < "$log" > "$log.txt"

# Parse: each test's output becomes lines "ok - [kver] prog: test".
awk -v show="${VM_SHOW_OUTPUT:-0}" -v kver="$kver" -v qrc="$qrc" -v secs="$secs" -v timeout_s="$timeout_s" '
function res(ok, name, extra) {
	printf "%s - [%s] %s%s\n", ok ? "ok" : "not ok", kver, name, extra
}
BEGIN { intest = 0; dm = 0; insmod = ""; rmmod = ""; done = 0; bad = "" }
# Firmware escape sequences may precede the first marker on its line.
/@@TPLAN / { sub(/^.*@@TPLAN /, "@@TPLAN ") }
/^@@TPLAN kernel / { booted = $3 }
/^@@TPLAN insmod / { insmod = $3 }
/^@@TPLAN rmmod / { rmmod = $3 }
/^@@TPLAN done/ { done = 1 }
/^@@TPLAN reload / {
	params = $0; sub(/^@@TPLAN reload [a-z]+ [a-z]+ */, "", params)
	if ($3 == "rmmod") res($4 == "ok", "rmmod tplan to reload it with " params " (nothing leaked or still referenced)", "")
	else res($4 == "ok", "insmod tplan.ko " params, "")
	next
}
/^@@TPLAN dmesg-begin/ { dm = 1; next }
/^@@TPLAN dmesg-end/ { dm = 0; next }
/^@@TPLAN test-begin / { intest = 1; prog = $3; nok = 0; nnot = 0; next }
/^@@TPLAN test-end / {
	intest = 0; rc = $4; sub(/^rc=/, "", rc)
	# A program that died or failed without saying which test failed
	# still fails; exit 4 is the kselftest "skipped".
	if (rc == 4 && nok + nnot == 0) res(1, prog, " # SKIP exit status 4")
	else res(rc == 0 || (rc == 4) || (rc != 0 && nnot > 0), prog " exit status " rc, "")
	next
}
dm {
	if ($0 ~ /(WARNING:|BUG[: ]|Oops|general protection fault|KFENCE|UBSAN|KASAN|Call Trace|list_(add|del) corruption|refcount_t:|slab error|Poison overwritten|Redzone|Object padding|INFO: task .* blocked|tplan: .*leak)/) {
		bad = bad "\n#   " $0
	}
	next
}
intest && show { print; next }
intest && /^(not )?ok [0-9]+/ {
	line = $0
	isnot = (line ~ /^not ok/)
	sub(/^(not )?ok [0-9]+ *(- )?/, "", line)
	skip = ""
	if (line ~ /# SKIP/) { skip = " # SKIP" substr(line, index(line, "# SKIP") + 6); sub(/ *# SKIP.*/, "", line) }
	if (line == "") line = "test"
	if (isnot) nnot++; else nok++
	res(!isnot, prog ": " line, skip)
	next
}
intest && /^#/ && !/^# +(RUN|OK|PASSED|Totals|Starting)/ && !/^#  +OK/ { print "# [" kver "] " $0; next }
END {
	if (!booted) { res(0, "boot (qemu exit " qrc ", " secs " s)", ""); exit }
	res(insmod == "ok", "insmod tplan.ko", "")
	res(done, "run finished within " timeout_s " s (took " secs " s)", "")
	res(rmmod == "ok", "rmmod tplan (nothing leaked or still referenced)", "")
	res(bad == "", "dmesg free of WARN/BUG/Oops/slab errors", bad)
}' "$log.txt" | tee -a "$results"
echo "# [$kver] VM wall time ${secs} s, ${cpus} CPUs, ${mem} MiB (console log: $log.txt)"
