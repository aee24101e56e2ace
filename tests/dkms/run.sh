#!/bin/bash
# DKMS with the repository's dkms.conf, for one kernel, as TAP:
# make dkms-src puts the module's sources in /usr/src/tplan-VERSION, then
# dkms add, build -k KVER, install -k KVER; the module must land in
# /lib/modules/KVER/updates/dkms with KVER's vermagic.  Leaves the machine
# as it found it (dkms remove --all, the sources removed), so it can run
# again.  Needs root and Debian's dkms.
#   tests/dkms/run.sh KVER [BUILD]
set -uo pipefail
cd "$(dirname "$0")/../.."
kver=$1
BUILD=${2:-build}
log=$BUILD/dkms/$kver
mkdir -p "$log"
ver=$(sed -n 's/^VERSION := //p' Makefile)
src=/usr/src/tplan-$ver
. tests/tap.sh

# step LOGNAME DESCRIPTION CMD...: one TAP point; the log's tail on failure.
step() {
	local name=$1 desc=$2 rc
	shift 2
	"$@" >"$log/$name.log" 2>&1
	rc=$?
	t $rc "$desc" "$(tail -n 15 "$log/$name.log")"
	return $rc
}

# A build log (make.log of the dkms tree) says more than dkms does.
make_log() {
	tail -n 30 "/var/lib/dkms/tplan/$ver/build/make.log" 2>/dev/null
}

clean() {
	if dkms status "tplan/$ver" 2>/dev/null | grep -q .; then
		dkms remove "tplan/$ver" --all >/dev/null 2>&1
	fi
	rm -rf "$src" "/var/lib/dkms/tplan/$ver"
	rmdir /var/lib/dkms/tplan 2>/dev/null
	return 0
}

if ! command -v dkms >/dev/null; then
	echo "1..0 # SKIP dkms is not installed"
	exit 4
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP dkms needs root"
	exit 4
fi
if [ ! -d "/lib/modules/$kver/build" ]; then
	echo "1..0 # SKIP no headers for $kver"
	exit 4
fi

t "$(grep -q "^PACKAGE_VERSION=\"$ver\"\$" dkms.conf; echo $?)" \
	"dkms.conf's PACKAGE_VERSION is the Makefile's VERSION ($ver)"
clean
step src "make dkms-src puts the module sources in $src" make -s dkms-src DKMS_SRC="$src"
step add "dkms add tplan/$ver" dkms add "tplan/$ver"
if ! step build "dkms build -k $kver" dkms build "tplan/$ver" -k "$kver"; then
	make_log | sed 's/^/# /'
fi
step install "dkms install -k $kver" dkms install "tplan/$ver" -k "$kver" --force
ko=$(ls "/lib/modules/$kver/updates/dkms/tplan.ko"* 2>/dev/null | head -n 1)
t "$([ -n "$ko" ]; echo $?)" "tplan.ko is in /lib/modules/$kver/updates/dkms" \
	"$(ls -la "/lib/modules/$kver/updates/dkms/" 2>&1)"
if [ -n "$ko" ]; then
	vermagic=$(modinfo -F vermagic "$ko" 2>&1)
	t "$(case "$vermagic" in "$kver "*) echo 0 ;; *) echo 1 ;; esac)" \
		"its vermagic names $kver" "vermagic: $vermagic"
	resolved=$(modinfo -k "$kver" -n tplan 2>&1)
	t "$([ "$resolved" = "$ko" ]; echo $?)" "modprobe would load it for $kver (depmod ran)" \
		"modinfo -k $kver -n tplan: $resolved"
fi
status=$(dkms status "tplan/$ver" -k "$kver" 2>&1)
t "$(echo "$status" | grep -q ': installed'; echo $?)" "dkms status says installed" "$status"
step remove "dkms remove tplan/$ver --all" dkms remove "tplan/$ver" --all
t "$([ ! -e "/lib/modules/$kver/updates/dkms/tplan.ko" ] && [ ! -e "/lib/modules/$kver/updates/dkms/tplan.ko.xz" ]; echo $?)" \
	"the module is gone after remove"
clean
tap_end
