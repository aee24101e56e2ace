#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the test VM (copied there as tplan_hw_check.sh by scripts/check.sh):
# the test-node protocol's program, tests/hw/hw_check.c, over the tests'
# KFD stand-in, quick.  The stand-in is no GPU, so its answers are not the
# hardware's and a FAIL here is no verdict: what this checks is that every
# step runs to its end (no crash, no hang, the child processes' queues
# killed and reaped) and that the stand-in and the kernel stay clean
# through it (the VM run reads the kernel log).  FAIL lines are shown.
# TAP; exits 1 if a step did not run.
out=/tmp/hw_check.out
./hw_check --standin -q >"$out" 2>&1
rc=$?
steps="0 1 2 3 4 5 6 7 8 9 10 11 13 14 15 16 17 18 19"
missing=""
for s in $steps; do
	grep -q "^# $s\. " "$out" || missing="$missing $s"
done
echo "TAP version 13"
echo "1..1"
sed -n 's/^hw_check: \([0-9].*\)$/# hw_check over the stand-in: \1/p' "$out"
grep '^FAIL' "$out" | sed 's/^/# /'
# The three slowest steps, for whoever wonders where the time went.
sed -n 's/^# step \([0-9]*\) took \([0-9.]*\) s$/\2 \1/p' "$out" | sort -rn | head -n 3 |
	awk '{ s = s sep "step " $2 " " $1 " s"; sep = ", " } END { if (s != "") print "# slowest: " s }'
if [ -z "$missing" ] && grep -q '^hw_check: [0-9]* PASS' "$out" && [ "$rc" -le 1 ]; then
	echo "ok 1 hw_check runs every step over the stand-in to its end"
	exit 0
fi
tail -n 5 "$out" | sed 's/^/# /'
echo "not ok 1 hw_check runs every step over the stand-in to its end (exit status $rc, steps missing:${missing:- none})"
exit 1
