#!/bin/bash
# The debug kernel of the test VM (KASAN, lockdep, kmemleak, UBSAN, fault
# injection): Debian's linux-source-6.12, `make tinyconfig`, then
# scripts/vm/debug-kernel.config.  Built once per machine and cached beside
# the Debian kernel images:
#
#   $TPLAN_CACHE/kernels/KVER/vmlinuz   what scripts/vm/run.sh boots
#   $TPLAN_CACHE/kernels/KVER/build     the tree modules build against
#                                       (make -C .../build M=DIR modules)
#
# KVER is 6.12.N-tplan-debug-HASH (also the kernel's uname -r); HASH covers
# the fragment, the Debian source package's version and the compiler, so a
# change to any of them is a new kernel and an unchanged one is never rebuilt.
#
#   scripts/vm/build-debug-kernel.sh          build it unless it is cached
#   scripts/vm/build-debug-kernel.sh --print  its KVER, building nothing
#
# From scratch: about 11 minutes on 2 cores shared with other work (7 on idle
# ones) and 1.7 GiB of disk (log: KVER/build.log); when cached, about a second.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
fragment="$here/debug-kernel.config"
cache=${TPLAN_CACHE:-/var/cache/tplan}
pkg=linux-source-6.12

die() {
	echo "debug kernel: $*" >&2
	exit 1
}

# The version apt would download; apt's lists may not exist yet on a fresh
# machine.
source_version() {
	local v
	v=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		apt-get update -qq >/dev/null 2>&1
		v=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p')
	fi
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "apt knows no $pkg"
	echo "$v"
}

srcver=$(source_version) || exit 1
# The compiler is in the key because Kbuild warns when a module is built
# with another compiler than its kernel, and W=1 builds fail on warnings.
hash=$( { echo "$srcver"; gcc --version | head -n 1; cat "$fragment"; } | sha256sum | cut -c1-8)
localversion="-tplan-debug-$hash"
kver="${srcver%%-*}$localversion"
dir="$cache/kernels/$kver"

if [ "${1:-}" = --print ]; then
	echo "$kver"
	exit 0
fi

# vmlinuz is written last: with it the entry is complete.
cached() {
	[ -s "$dir/vmlinuz" ] && [ -s "$dir/build/Module.symvers" ]
}
cached && exit 0

# Builds for the same KVER (several checkouts on one machine) wait for each
# other; the second then finds it cached.
mkdir -p "$cache/kernels" || die "cannot create $cache/kernels"
exec 9>"$cache/kernels/.tplan-debug.lock"
flock 9
cached && exit 0

missing=""
for p in make gcc flex bison bc libelf-dev libssl-dev xz-utils; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "debug kernel: installing$missing" >&2
	apt-get update -qq >/dev/null 2>&1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
		>/dev/null || die "cannot install$missing"
fi

t0=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir"
log="$dir/build.log"
echo "debug kernel: building $kver from $pkg $srcver (about 11 min on 2 busy cores; log: $log)" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download drops privileges to _apt, who must be able to write here.
chmod 755 "$tmp"
( cd "$tmp" && apt-get download -qq "$pkg=$srcver" ) >>"$log" 2>&1 ||
	die "apt-get download $pkg=$srcver failed (see $log)"
dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/x" || die "dpkg -x failed"
tar -xJf "$tmp/x/usr/src/$pkg.tar.xz" -C "$dir" || die "cannot unpack $pkg.tar.xz"
rm -rf "$tmp/x"
mv "$dir/$pkg" "$dir/build"
echo "CONFIG_LOCALVERSION=\"$localversion\"" > "$tmp/localversion.config"

cd "$dir/build" || die "no $dir/build"
{
	make tinyconfig &&
	scripts/kconfig/merge_config.sh -m .config "$fragment" "$tmp/localversion.config" &&
	make olddefconfig
} >>"$log" 2>&1 || die "configuring failed (see $log)"

# Kconfig drops what it cannot satisfy without a word (KASAN under
# tinyconfig's SLUB_TINY): every line asked for must be in the result.
lost=$(grep -E '^(CONFIG_|# CONFIG_.* is not set$)' "$fragment" "$tmp/localversion.config" -h |
	grep -vxF -f .config)
[ -z "$lost" ] || die "the final .config lacks what $fragment asks for:
$lost"

# bzImage, and the modules step for Module.symvers.
make -j"$(nproc)" bzImage modules >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "build failed (see $log)"; }
release=$(make -s kernelrelease)
[ "$release" = "$kver" ] || die "the kernel calls itself $release, not $kver"
cp .config "$dir/config"
cp arch/x86/boot/bzImage "$dir/vmlinuz.tmp"
# What an out-of-tree module needs stays (.config, generated headers,
# scripts, objtool, Module.symvers); the objects go.
make clean >>"$log" 2>&1 || die "make clean failed (see $log)"
mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
echo "debug kernel: $kver built in $(( $(date +%s) - t0 )) s" >&2
