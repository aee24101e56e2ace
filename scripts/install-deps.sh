#!/bin/bash
# Install (idempotently) everything the build, the tests and the demo need on
# Debian 12.  Fast when all is present: one dpkg-query, no network.
#
#   scripts/install-deps.sh                 build + tests + VM
#   scripts/install-deps.sh --print         print the resolved kernel versions
#   ... --debug-kernel                      with the debug kernel too, built
#                                           if not cached (scripts/vm/build-debug-kernel.sh)
#
# TPLAN_KVERS picks the kernels exactly; in it, "debug" stands for the debug
# kernel of the current fragment (6.12.N-tplan-debug-HASH, also accepted).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

print=0 debug=0
for a in "$@"; do
	case "$a" in
	--print) print=1 ;;
	--debug-kernel) debug=1 ;;
	*) echo "install-deps: unknown argument $a" >&2; exit 2 ;;
	esac
done

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps: packages are missing and this is not root: $*" >&2
		exit 1
	fi
}

apt_updated=0
apt_update_once() {
	if [ "$apt_updated" = 0 ]; then
		need_root "apt-get update"
		apt-get update -qq >/dev/null
		apt_updated=1
	fi
}

# The kernels we test against: the newest Debian 12 6.1 and 6.12 builds,
# resolved through their meta packages so image and headers always match.
resolve_kver() {	# $1 = meta package (linux-headers-amd64 / linux-headers-6.12-amd64)
	local v
	v=$(apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | head -n1)
	if [ -z "$v" ]; then
		apt_update_once
		v=$(apt-cache depends "$1" | sed -n 's/^ *Depends: linux-headers-\(.*\)$/\1/p' | head -n1)
	fi
	[ -n "$v" ] || { echo "install-deps: cannot resolve $1" >&2; exit 1; }
	echo "$v"
}

is_debug_kver() {
	case "$1" in *-tplan-debug-*) return 0 ;; esac
	return 1
}

kernel_versions() {
	local k out=""
	if [ -n "${TPLAN_KVERS:-}" ]; then
		for k in $TPLAN_KVERS; do
			[ "$k" != debug ] || k=$("$here/vm/build-debug-kernel.sh" --print)
			out="$out $k"
		done
		echo $out
		return
	fi
	out="$(resolve_kver linux-headers-amd64) $(resolve_kver linux-headers-6.12-amd64)"
	[ "$debug" = 0 ] || out="$out $("$here/vm/build-debug-kernel.sh" --print)"
	echo "$out"
}

if [ "$print" = 1 ]; then
	kernel_versions
	exit 0
fi

KVERS=$(kernel_versions)
pkgs="make gcc libc6-dev pkg-config cpio gzip xz-utils busybox-static qemu-system-x86
      sparse clang libclang-rt-14-dev linux-source-6.1 kmod
      dkms groff-base man-db
      hipcc libamdhip64-dev rocm-device-libs
      clang-19 clang-tools-19 lld-19 llvm-19
      python3 python3-numpy python3-venv python3-pip"
for k in $KVERS; do
	is_debug_kver "$k" || pkgs="$pkgs linux-headers-$k"
done

missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing="$missing $p"
done

if [ -n "$missing" ]; then
	need_root "$missing"
	apt_update_once
	echo "install-deps: installing$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# Kernel images for the VM: extracted, never installed.
cache=${TPLAN_CACHE:-/var/cache/tplan}
for k in $KVERS; do
	img="$cache/kernels/$k/vmlinuz"
	if is_debug_kver "$k"; then
		# Built here, once per machine: about 11 minutes the first time.
		[ -s "$img" ] && continue
		if [ "$k" != "$("$here/vm/build-debug-kernel.sh" --print)" ]; then
			echo "install-deps: $k is not cached and not the current debug kernel (TPLAN_KVERS=debug names it)" >&2
			exit 1
		fi
		"$here/vm/build-debug-kernel.sh"
		continue
	fi
	[ -s "$img" ] && continue
	need_root "linux-image-$k (extract)"
	mkdir -p "$cache/kernels/$k"
	tmp=$(mktemp -d)
	( cd "$tmp" && apt-get download -qq "linux-image-$k" >/dev/null 2>&1 ) || {
		apt_update_once
		( cd "$tmp" && apt-get download -qq "linux-image-$k" >/dev/null )
	}
	dpkg -x "$tmp"/linux-image-*.deb "$tmp/x"
	cp "$tmp/x/boot/vmlinuz-$k" "$img.tmp"
	mv "$img.tmp" "$img"
	rm -rf "$tmp"
done
exit 0
