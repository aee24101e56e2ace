#!/bin/sh
# /init of the test VM.  Loads tplan.ko, runs every test listed in
# /tests/plan, then removes the module and dumps the kernel log between
# markers that scripts/vm/run.sh parses.  Kernel messages stay off the
# console so they cannot interleave with test output.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmp /tmp
dmesg -n 1

m() { echo "@@TPLAN $*"; }

m "kernel $(uname -r)"
m "cpus $(grep -c ^processor /proc/cpuinfo) mem_kb $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"

params=$(cat /tests/modparams 2>/dev/null)
if insmod /tplan.ko $params; then
	m "insmod ok"
else
	m "insmod failed"
fi

# Plan lines: "bin NAME [ARGS]", "sh NAME [ARGS]", and "mod PARAMS": reload
# the module with PARAMS (rmmod must succeed); the tests after it are
# named NAME@PARAMS.
cd /tests
label=""
while read -r kind name args; do
	[ -n "$kind" ] || continue
	if [ "$kind" = mod ]; then
		params="$name${args:+ $args}"
		label="@$(echo "$params" | tr ' ' ',')"
		if rmmod tplan; then m "reload rmmod ok $params"; else m "reload rmmod failed $params"; fi
		# shellcheck disable=SC2086
		if insmod /tplan.ko $params; then m "reload insmod ok $params"; else m "reload insmod failed $params"; fi
		continue
	fi
	m "test-begin $name$label"
	# shellcheck disable=SC2086
	case "$kind" in
	bin) ./"$name" $args 2>&1 ;;
	sh) sh ./"$name" $args 2>&1 ;;
	esac
	m "test-end $name$label rc=$?"
done < /tests/plan

if [ -e /sys/module/tplan ]; then
	if rmmod tplan; then m "rmmod ok"; else m "rmmod failed"; fi
else
	m "rmmod skipped: not loaded"
fi

m "dmesg-begin"
dmesg
m "dmesg-end"
m "done"
sync
reboot -f
