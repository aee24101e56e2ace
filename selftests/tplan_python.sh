#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Python bindings in the VM, on the module under test: their tests
# (tests/python/vm_test.py), the README's Python quick start, and the
# Python all-gather (examples/all_gather.py, a CPU producer of 4 programs
# per rank, verified every round).  The runtime (Debian's python3 and
# NumPy, libtplan.so, the package) is laid over the VM's / by make check
# (tests/python/vm_root.sh); without it this skips (exit 4).  TAP.
py=/usr/bin/python3
dir=/opt/tplan
if [ ! -x "$py" ] || [ ! -d "$dir" ]; then
	echo "1..0 # SKIP no Python runtime in this VM (make check lays one over /)"
	exit 4
fi
cd "$dir" || exit 1
start=$(date +%s)
failed=0

# vm_test.py speaks TAP itself.
$py vm_test.py || failed=1

n=100
run() {	# run DESCRIPTION EXPECTED-LINES COMMAND...
	desc=$1 want=$2
	shift 2
	n=$((n + 1))
	out=$("$@" 2>&1)
	rc=$?
	got=$(echo "$out" | grep -c "$want")
	echo "$out" | sed 's/^/#   /' | head -n 20
	if [ "$rc" = 0 ] && [ "$got" -ge 1 ]; then
		echo "ok $n python: $desc"
	else
		echo "not ok $n python: $desc (exit $rc)"
		failed=1
	fi
}
run "the README's quick start: 2 ranks, 3 rounds verified" "rounds, every rank's rows verified" $py quickstart.py
[ "$(echo "$out" | grep -c "rounds, every rank's rows verified")" = 2 ] ||
	{ echo "not ok $((n += 1)) python: the quick start's two ranks both report"; failed=1; }
run "all_gather.py: 4 ranks, 4 programs each, 20 rounds verified" "all_gather.py: ok:" $py all_gather.py -n 4 -p 4 -r 20
run "all_gather.py: 2 ranks, 1 program, 5 rounds verified" "all_gather.py: ok:" $py all_gather.py -n 2 -p 1 -r 5
echo "# the Python tests took $(( $(date +%s) - start )) s"
exit $failed
