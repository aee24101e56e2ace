#!/bin/sh
# /init of the test VM.  Loads tplan.ko, runs every test listed in
# /tests/plan, then removes the module and dumps the kernel log between
# markers that scripts/vm/run.sh parses.  Kernel messages stay off the
# console so they cannot interleave with test output; in the kernel log,
# "tplan-test: begin/end NAME" lines enclose each step, so that a report
# there names the test that was running.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmp /tmp
dmesg -n 1

m() { echo "@@TPLAN $*"; }
klog() { echo "tplan-test: $*" > /dev/kmsg; }

m "kernel $(uname -r)"
m "cpus $(grep -c ^processor /proc/cpuinfo) mem_kb $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"

# A task stuck in D state (a deadlocked mutex) is reported within the run:
# after 60 s, looked for every 10 s.  Collectives wait up to 30 s, but
# interruptibly (S state), which the detector never counts.
if [ -w /proc/sys/kernel/hung_task_timeout_secs ]; then
	echo 60 > /proc/sys/kernel/hung_task_timeout_secs
	echo 10 > /proc/sys/kernel/hung_task_check_interval_secs
fi

params=$(cat /tests/modparams 2>/dev/null)
klog "begin insmod"
if insmod /tplan.ko $params; then
	m "insmod ok"
else
	m "insmod failed"
fi
klog "end insmod"

cd /tests
while read -r kind name; do
	[ -n "$kind" ] || continue
	m "test-begin $name"
	klog "begin $name"
	case "$kind" in
	bin) ./"$name" 2>&1 ;;
	sh) sh ./"$name" 2>&1 ;;
	esac
	rc=$?
	klog "end $name rc=$rc"
	m "test-end $name rc=$rc"
done < /tests/plan
klog "all tests done"
cd /

if [ -e /sys/module/tplan ]; then
	klog "begin rmmod"
	if rmmod tplan; then m "rmmod ok"; else m "rmmod failed"; fi
	klog "end rmmod"
else
	m "rmmod skipped: not loaded"
fi

m "dmesg-begin"
dmesg
m "dmesg-end"
m "done"
sync
reboot -f
