#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The C all-gather example (examples/all_gather.c) on the module under
# test: one round at a time, and armed 8 rounds ahead with the consumer
# team releasing each round, every round verified on every rank.  Armed
# ahead, each rank's host makes at most one ioctl per round (the re-arm
# every 8 rounds, and a wait that found a round incomplete and slept); its
# report of them is checked.  TAP.
cd "$(dirname "$0")" || exit 1
if [ ! -x ./all_gather ]; then
	echo "1..0 # SKIP all_gather not built beside the tests"
	exit 4
fi
echo "1..3"
failed=0

out=$(./all_gather -n 3 -r 10 -m 64 -k 64 -p 2 -b 16 -B 32 2>&1)
rc=$?
echo "$out" | sed 's/^/#   /' | tail -n 4
if [ "$rc" = 0 ] && echo "$out" | grep -q "^all_gather: ok:"; then
	echo "ok 1 all_gather: 3 ranks, 10 rounds one at a time, verified"
else
	echo "not ok 1 all_gather: 3 ranks, 10 rounds one at a time (exit $rc)"
	failed=1
fi

out=$(./all_gather -n 3 -r 64 -m 64 -k 64 -p 2 -b 16 -B 32 -a 8 2>&1)
rc=$?
echo "$out" | sed 's/^/#   /' | tail -n 5
if [ "$rc" = 0 ] && echo "$out" | grep -q "^all_gather: ok: 3 ranks, 64 rounds armed 8 ahead"; then
	echo "ok 2 all_gather -a 8: 3 ranks, 64 rounds armed ahead, released by the consumer team, verified"
else
	echo "not ok 2 all_gather -a 8: 3 ranks, 64 rounds armed ahead (exit $rc)"
	failed=1
fi
# "host ioctls per round X": every rank reports one, none above 1.
bad=$(echo "$out" | sed -n 's/.*host ioctls per round \([0-9.]*\).*/\1/p' |
	awk '$1 > 1 { n++ } END { print NR == 3 ? n + 0 : "missing" }')
if [ "$bad" = 0 ]; then
	echo "ok 3 all_gather -a 8: every rank's host made at most one ioctl per round"
else
	echo "not ok 3 all_gather -a 8: host ioctls per round above one, or not reported ($bad)"
	failed=1
fi
exit $failed
