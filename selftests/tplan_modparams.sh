#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Module parameters are validated at load: bad values refuse to load, good
# ones show up in sysfs.  Needs /tplan.ko (the VM image puts it there) and
# leaves the module loaded with the parameters it found.
ko=${TPLAN_KO:-/tplan.ko}
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n $*"; }

echo "TAP version 13"
if [ ! -e "$ko" ] || [ ! -e /sys/module/tplan ]; then
	echo "1..0 # SKIP tplan.ko not present or not loaded"
	exit 4
fi
echo "1..8"

orig=""
for p in ring_size prep_limit max_copy_sdma442 allow_inject; do
	orig="$orig $p=$(cat /sys/module/tplan/parameters/$p)"
done
rmmod tplan || { not_ok "rmmod before the sweep"; exit 1; }

for bad in ring_size=3000 ring_size=2048 ring_size=536870912 prep_limit=0 prep_limit=51 \
	   max_copy_sdma442=100; do
	if insmod "$ko" "$bad" 2>/dev/null; then
		not_ok "insmod $bad is refused"
		rmmod tplan
	else
		ok "insmod $bad is refused"
	fi
done

if insmod "$ko" ring_size=65536 prep_limit=25 &&
   [ "$(cat /sys/module/tplan/parameters/ring_size)" = 65536 ] &&
   [ "$(cat /sys/module/tplan/parameters/prep_limit)" = 25 ]; then
	ok "insmod ring_size=65536 prep_limit=25 is taken"
else
	not_ok "insmod ring_size=65536 prep_limit=25 is taken"
fi
rmmod tplan 2>/dev/null

# shellcheck disable=SC2086
if insmod "$ko" $orig; then
	ok "reload with the original parameters"
else
	not_ok "reload with the original parameters"
fi
exit $failed
