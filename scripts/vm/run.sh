#!/bin/bash
# Boot one kernel (Debian's, or the debug kernel of
# scripts/vm/build-debug-kernel.sh) under QEMU (TCG) with tplan.ko and the
# selftests, and turn what happened into result lines.
#
#   scripts/vm/run.sh KVER MODULE_DIR TEST_DIR RESULTS_FILE
#
#   MODULE_DIR  holds tplan.ko built against KVER's headers
#   TEST_DIR    holds the test programs and a "plan" file: lines "bin NAME
#               [ARGS]" or "sh NAME [ARGS]", run in order, and "mod PARAMS",
#               which reloads the module with PARAMS for the lines after it
#               (their tests are named NAME@PARAMS), and "kmod NAME
#               [PARAMS]", which loads the test module NAME.ko (VM_KMOD_DIR)
#               for the rest of the plan
#
# Environment: VM_MEM (MiB, default 3072, 4096 on the debug kernel: the
# 1 GiB per-packet split runs between two heaps of just over 1 GiB),
# VM_CPUS (default 2), VM_STALL_TIMEOUT (s, default 900: the VM is stopped
# once its console has printed nothing for that long, a hang), VM_TIMEOUT
# (s, default 3600: the run's whole length at most, however much it
# prints; a loaded host slows a run down, so both are generous and only
# stop a run that cannot end), TPLAN_MODPARAMS (insmod arguments),
# VM_SHOW_OUTPUT=1 (print the programs' output instead of parsing TAP),
# TPLAN_CACHE (where install-deps.sh put the kernel images),
# VM_ROOTFS_EXTRA (a directory laid over the VM's /: the Python runtime),
# VM_KMOD_DIR (test modules built for KVER, *.ko: the KFD stand-in).
#
# Every result line is TAP-like: "ok - [KVER] name" / "not ok - [KVER] name"
# / "ok - [KVER] name # SKIP why".  Besides each test, the run itself yields:
# the kernel's CPU count against the VM's, insmod, each test program's
# exit status, each reload's rmmod and insmod, rmmod, and the kernel
# log's verdict: one "not ok" per report in dmesg
# (WARN, BUG, Oops, KASAN, UBSAN, lockdep, sleeping in atomic context, hung
# task, slab or list corruption), naming the test that was running
# ("during NAME"), or one "ok" if none.  On the debug kernel, kmemleak
# likewise: one "not ok" per place in tplan that allocated objects kmemleak
# finds unreferenced, naming the tests.
set -uo pipefail

kver=$1 moddir=$2 testdir=$3 results=$4
here=$(cd "$(dirname "$0")" && pwd)
cache=${TPLAN_CACHE:-/var/cache/tplan}
kernel="$cache/kernels/$kver/vmlinuz"
work=$(dirname "$results")/vm-$kver
# KASAN's shadow (an eighth of memory) and kmemleak leave the debug kernel
# too little of 3 GiB for the 1 GiB split.
mem=3072
case "$kver" in *-tplan-debug-*) mem=4096 ;; esac
mem=${VM_MEM:-$mem}
cpus=${VM_CPUS:-2}
timeout_s=${VM_TIMEOUT:-3600}
stall_s=${VM_STALL_TIMEOUT:-900}

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
if [ -n "${VM_KMOD_DIR:-}" ] && compgen -G "$VM_KMOD_DIR/*.ko" >/dev/null; then
	cp "$VM_KMOD_DIR"/*.ko "$work/root/tests/"
fi
printf '%s\n' "${TPLAN_MODPARAMS:-}" > "$work/root/tests/modparams"
[ -z "${VM_ROOTFS_EXTRA:-}" ] || cp -a "$VM_ROOTFS_EXTRA"/. "$work/root/"
( cd "$work/root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$work/initramfs.gz"

# A large log buffer, so that a report survives whatever follows it.
# tsc=reliable: under TCG the clocksource watchdog sometimes finds the TSC
# skewed a few seconds after boot and switches to the HPET; the switch
# flips the sched_clock static key by live text patching, which TCG once
# turned into an int3 Oops in sched_clock_cpu (a panic with no tplan code
# involved), and the HPET makes every clock read an emulated MMIO access.
cmdline="console=ttyS0 quiet panic=-1 log_buf_len=4M tsc=reliable"
case "$kver" in
*-tplan-debug-*) ;;	# KASAN does what slub_debug and KFENCE would
6.12*|6.1[3-9]*|[7-9].*) cmdline="$cmdline slub_debug=FZPU kfence.sample_interval=10" ;;
*) cmdline="$cmdline slub_debug=FZPU" ;;
esac

log="$work/console.log"
start=$(date +%s)
# One boot: QEMU until it exits, is stopped as a hang (stalled=1), or runs
# past the run's time; qrc is its exit status.
boot() {
	: > "$log"
	timeout --foreground -k 10 "$timeout_s" \
		qemu-system-x86_64 -accel tcg -m "$mem" -smp "$cpus" -nographic -no-reboot \
			-kernel "$kernel" -initrd "$work/initramfs.gz" -append "$cmdline" \
			-monitor none -serial "file:$log" </dev/null >"$work/qemu.out" 2>&1 &
	qpid=$!
	# The stall watch: a console that has not grown for stall_s is a hang.
	stalled=0 size=0 moved=$(date +%s)
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		now=$(date +%s) cur=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$cur" != "$size" ]; then
			size=$cur moved=$now
		elif [ $(( now - moved )) -ge "$stall_s" ]; then
			stalled=1
			kill "$qpid" 2>/dev/null
			break
		fi
	done
	wait "$qpid"
	qrc=$?
}
boot
# A kernel that panicked before init ran had no tplan code loaded (init
# prints "@@TPLAN kernel" before its insmod): under TCG the boot's live
# text patching of static keys sometimes races the other vCPU into an int3
# Oops (seen about once in 20 boots on 6.12).  That boot is kept as
# console.boot1.log and the kernel boots once more; a second such panic,
# or any panic after init began, is a result like any other.
if [ "$stalled" = 0 ] && ! grep -qa '@@TPLAN kernel ' "$log" && grep -qa 'Kernel panic' "$log"; then
	echo "# [$kver] the kernel panicked before init ran, no tplan code loaded ($(grep -a -m1 -o 'Oops.*\|Kernel panic.*' "$log" | tr -d '\r')): booting once more; that boot's console: $work/console.boot1.log"
	mv "$log" "$work/console.boot1.log"
	boot
fi
secs=$(( $(date +%s) - start ))
tr -d '\r' < "$log" > "$log.txt"

# Parse: each test's output becomes lines "ok - [kver] prog: test".
awk -v show="${VM_SHOW_OUTPUT:-0}" -v kver="$kver" -v cpus="$cpus" -v qrc="$qrc" -v secs="$secs" -v timeout_s="$timeout_s" \
	-v stall_s="$stall_s" -v stalled="$stalled" '
function res(ok, name, extra) {
	printf "%s - [%s] %s%s\n", ok ? "ok" : "not ok", kver, name, extra
}
# The first line of a report in the kernel log.
function report_line(l) {
	return l ~ /(WARNING:|BUG[: ]|Oops|general protection fault|KFENCE|UBSAN|KASAN|Call Trace|list_(add|del) corruption|refcount_t:|slab error|Poison overwritten|Redzone|Object padding|INFO: task .* blocked for more than|INFO: trying to register non-static key|unreferenced object|tplan: .*leak)/
}
# One kmemleak entry read: it counts against tplan if a frame of its backtrace is
# in tplan ("[tplan]" while loaded, an address nothing resolves once unloaded).
# Leaks are counted per place in tplan that allocated them.
function leak_flush() {
	if (kobj != "" && !(kobj in seen)) {
		seen[kobj] = 1
		if (kframe != "") {
			# A test program (its comm is the name cut to 15 characters), or
			# another task (insmod, rmmod, an engine thread).
			by = (kcomm in comm_of) ? "during " comm_of[kcomm] : "by " kcomm " (pid " kpid ")"
			if (!(kframe in nat)) {
				nleak++; leak[nleak] = kframe; leakdet[kframe] = kbody; leakby[kframe] = by
			} else if (index(", " leakby[kframe] ", ", ", " by ", ") == 0) {
				leakby[kframe] = leakby[kframe] ", " by
			}
			nat[kframe]++
		} else if (!nother++) {
			other = "by " kcomm " (pid " kpid "):" kbody
		}
	}
	kobj = ""
}
BEGIN { intest = 0; dm = 0; km = 0; insmod = ""; rmmod = ""; done = 0; nrep = 0; nleak = 0; nother = 0
	ctx = "before the first test" }
# Firmware escape sequences may precede the first marker on its line.
/@@TPLAN / { sub(/^.*@@TPLAN /, "@@TPLAN ") }
/^@@TPLAN kernel / { booted = $3 }
/^@@TPLAN cpus / { vmcpus = $3 }
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
/^@@TPLAN test-begin / { intest = 1; prog = $3; nok = 0; nnot = 0; bin = prog; sub(/@.*/, "", bin); comm_of[substr(bin, 1, 15)] = prog; next }
/^@@TPLAN test-end / {
	intest = 0; rc = $4; sub(/^rc=/, "", rc)
	# A program that died or failed without saying which test failed
	# still fails; exit 4 is the kselftest "skipped".
	if (rc == 4 && nok + nnot == 0) res(1, prog, " # SKIP exit status 4")
	else res(rc == 0 || (rc == 4) || (rc != 0 && nnot > 0), prog " exit status " rc, "")
	next
}
/^@@TPLAN kmemleak-begin/ { km = 1; kmemleak = 1; next }
/^@@TPLAN kmemleak-end/ { leak_flush(); km = 0; next }
# init.sh encloses each step in "tplan-test: begin/end NAME" lines.  A
# report runs from its first line to the end of its stack dump; lines that
# match inside it (its Call Trace) are part of it.
dm {
	line = $0
	sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line)
	if (line ~ /^tplan-test: begin /) { ctx = "during " substr(line, 19); open = 0; next }
	if (line ~ /^tplan-test: end /) {
		ctx = substr(line, 17); sub(/ rc=[0-9]*$/, "", ctx); ctx = "after " ctx; open = 0; next
	}
	if (line ~ /^tplan-test: all tests done/) { ctx = "after the last test"; open = 0; next }
	if (!open && report_line(line)) {
		nrep++; title[nrep] = line; at[nrep] = ctx; det[nrep] = ""; ndet = 0
		open = 1; openlines = 0; detailing = 1
		next
	}
	if (!open) next
	if (line ~ /Call Trace:/) detailing = 0
	if (detailing && ndet < 10 && line !~ /^ *$|^-+$|^=+$/) { det[nrep] = det[nrep] "\n#   " line; ndet++ }
	if (line ~ /<\/TASK>|---\[ end trace/ || ++openlines > 200) open = 0
	next
}
km {
	if ($0 ~ /^unreferenced object /) {
		leak_flush()
		kobj = $3; ksize = $0; sub(/^.*\(size /, "", ksize); sub(/\).*$/, "", ksize)
		kcomm = "?"; kpid = "?"; kframe = ""; kbody = ""; kbt = 0
		next
	}
	if (kobj == "") next
	if ($0 ~ /^ *comm "/) {
		kcomm = $0; sub(/^ *comm "/, "", kcomm); kpid = kcomm
		sub(/".*$/, "", kcomm); sub(/^.*pid /, "", kpid); sub(/,.*$/, "", kpid)
	} else if ($0 ~ /^  backtrace/) {
		kbt = 1
	} else if (kbt && $0 ~ /^    [^ ]/) {
		# One frame, "    func+0x1/0x2 [mod]" ("[<addr>] " before it on older kernels).
		f = $0; sub(/^ +(\[<[0-9a-f]+>\] )?/, "", f)
		if (f ~ /^0x[0-9a-f]+$/) f = f " (tplan, unloaded)"
		kbody = kbody "\n#     " f
		if (kframe == "" && f ~ /\[tplan\]$|\(tplan, unloaded\)$/) kframe = f
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
	# A kernel that cannot find the CPUs (no MADT, say) runs no test on two at once.
	res(vmcpus == cpus, "the kernel runs on all " cpus " CPUs of the VM (it found " vmcpus + 0 ")", "")
	res(insmod == "ok", "insmod tplan.ko", "")
	if (stalled)
		res(0, "run finished (stopped after " secs " s: the console was silent for " stall_s " s, " ctx ")", "")
	else
		res(done, "run finished within " timeout_s " s (took " secs " s)", "")
	res(rmmod == "ok", "rmmod tplan (nothing leaked or still referenced)", "")
	if (nrep == 0) res(1, "dmesg free of WARN/BUG/Oops, KASAN/UBSAN, lockdep, hung-task and slab reports", "")
	for (i = 1; i <= nrep; i++) {
		t = title[i]
		if (length(t) > 120) t = substr(t, 1, 120) "..."
		res(0, "dmesg: " t ", " at[i], det[i])
	}
	if (kmemleak) {
		if (nleak == 0) res(1, "kmemleak: no unreferenced tplan objects after the tests or after rmmod",
				    nother ? "\n#   " nother " unreferenced objects not allocated by tplan, the first " other : "")
		for (i = 1; i <= nleak; i++) {
			f = leak[i]
			res(0, "kmemleak: " nat[f] " unreferenced object" (nat[f] > 1 ? "s" : "") " allocated at " f \
			    ", " leakby[f], leakdet[f])
		}
	}
}' "$log.txt" | tee -a "$results"
echo "# [$kver] VM wall time ${secs} s, ${cpus} CPUs, ${mem} MiB (console log: $log.txt)"
# Where the time went: the slowest steps, from the kernel log's timestamps.
awk '/tplan-test: begin / || /tplan-test: end / {
	t = $0; sub(/^[^[]*\[ */, "", t); sub(/\].*/, "", t)
	name = $0; sub(/.*tplan-test: (begin|end) /, "", name); sub(/ rc=[0-9-]*$/, "", name)
	if ($0 ~ /tplan-test: begin /) { if (!(name in b)) b[name] = t }
	else if (name in b && !(name in d)) d[name] = t - b[name]
}
END { for (n in d) printf "%d %s\n", d[n], n }' "$log.txt" | sort -rn | head -6 |
	awk -v kver="$kver" '{ s = s (s == "" ? "" : ", ") $2 " " $1 " s" }
		END { if (s != "") print "# [" kver "] slowest steps: " s }'
