#!/bin/bash
# make install into a staging root, then use only what was installed, as
# TAP: the files and SONAME links are there, pkg-config finds the library
# through the staged tplan.pc, and two programs build out of tree with
# nothing but "pkg-config --cflags --libs tplan":
#   tests/install/app.c   linked dynamically and run here (the device part
#                         skips without /dev/tplan), and statically for the VM
#   the README quick start (between its quickstart markers), -Werror,
#                         statically for the VM
# The static programs go to BUILD/vm-extra/, which scripts/check.sh adds
# to the VM's test plan.
#   tests/install/run.sh [BUILD]        (needs "make lib" and the man pages)
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
out=$BUILD/install
stage=$(pwd)/$out/stage
extra=$BUILD/vm-extra
CC=${CC:-cc}
api="perl tests/docs/api.pl"
. tests/tap.sh
rm -rf "$out" "$extra"
mkdir -p "$out" "$extra"

ver=$(sed -n 's/^VERSION := //p' Makefile)
sover=$(sed -n 's/^SOVERSION := //p' Makefile)

make -s install BUILD="$BUILD" DESTDIR="$stage" PREFIX=/usr >"$out/install.log" 2>&1
t $? "make install DESTDIR=... PREFIX=/usr" "$(tail -n 15 "$out/install.log")"

missing=""
for f in lib/libtplan.so.$ver lib/libtplan.a lib/pkgconfig/tplan.pc \
	include/tplan/libtplan.h include/tplan/tplan_device.h share/man/man7/tplan.7 \
	share/doc/tplan/README.md; do
	[ -f "$stage/usr/$f" ] || missing="$missing $f"
done
for h in uapi/*.h; do
	[ -f "$stage/usr/include/tplan/$(basename "$h")" ] || missing="$missing include/tplan/$(basename "$h")"
done
for f in docs/man/*.3 docs/man/*.7; do
	[ -f "$f" ] || continue
	s=${f##*.}
	[ -f "$stage/usr/share/man/man$s/$(basename "$f")" ] || missing="$missing share/man/man$s/$(basename "$f")"
done
t "$([ -z "$missing" ]; echo $?)" "library, headers (library, uapi, device), tplan.pc, man pages and README installed" \
	"missing under /usr:$missing"

links_ok=0
[ "$(readlink "$stage/usr/lib/libtplan.so.$sover")" = "libtplan.so.$ver" ] || links_ok=1
[ "$(readlink "$stage/usr/lib/libtplan.so")" = "libtplan.so.$sover" ] || links_ok=1
soname=$(readelf -d "$stage/usr/lib/libtplan.so.$ver" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libtplan.so.$sover" ] || links_ok=1
t $links_ok "libtplan.so -> libtplan.so.$sover (the SONAME) -> libtplan.so.$ver" \
	"$(ls -l "$stage/usr/lib/" 2>&1)" "SONAME: $soname"

# pkg-config sees only the staged root, as a cross build would.
export PKG_CONFIG_LIBDIR=$stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
unset PKG_CONFIG_PATH
pcver=$(pkg-config --modversion tplan 2>&1)
cflags=$(pkg-config --cflags tplan 2>&1 | sed "s/ *$//")
libs=$(pkg-config --libs tplan 2>&1)
slibs=$(pkg-config --static --libs tplan 2>&1)
t "$([ "$pcver" = "$ver" ] && [ "$cflags" = "-I$stage/usr/include/tplan" ]; echo $?)" \
	"pkg-config: version $ver, -I the installed headers" "modversion: $pcver" "cflags: $cflags"

# The app: dynamic here, against the staged library only.
cflags_app="-std=gnu11 -O2 -Wall -Wextra -Werror -DEXPECT_VERSION=\"$pcver\""
# shellcheck disable=SC2086
$CC $cflags_app tests/install/app.c $cflags $libs -o "$out/app" >"$out/app.log" 2>&1
t $? "tests/install/app.c builds with pkg-config --cflags --libs tplan" "$(head -n 20 "$out/app.log")"
needed=$(readelf -d "$out/app" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(libtplan[^]]*\)\]/\1/p')
t "$([ "$needed" = "libtplan.so.$sover" ]; echo $?)" "the app needs libtplan.so.$sover" "NEEDED: $needed"
LD_LIBRARY_PATH=$stage/usr/lib "$out/app" >"$out/app.run" 2>&1
rc=$?
resolved=$(LD_LIBRARY_PATH=$stage/usr/lib ldd "$out/app" 2>/dev/null | awk '/libtplan/ { print $3 }')
t "$([ "$rc" = 0 ] || [ "$rc" = 4 ]; echo $?)" "the app runs here against $resolved (exit $rc)" \
	"$(cat "$out/app.run")"
# shellcheck disable=SC2086
$CC $cflags_app -static tests/install/app.c $cflags $slibs -o "$extra/tplan_install_app" \
	>"$out/app-static.log" 2>&1
t $? "the app builds statically with pkg-config --static --libs tplan (for the VM)" \
	"$(head -n 20 "$out/app-static.log")"

# The README's quick start, exactly as printed there.
awk '/<!-- quickstart:end -->/ { on = 0 } on && !/^```/ { print } /<!-- quickstart:begin -->/ { on = 1 }' \
	README.md >"$out/quickstart.c"
t "$([ -s "$out/quickstart.c" ]; echo $?)" "README.md has a quick start between its markers"
qs_build=$(sed -n 's/^\$ \(cc .*\)/\1/p' README.md | head -n 1)
t "$([ -n "$qs_build" ]; echo $?)" "README.md shows how the quick start is built" \
	"no line starting '\$ cc ' in README.md"
# The README's own command line, plus -Werror and -static for the VM.
qs_build=${qs_build/quickstart.c/$out/quickstart.c}
qs_build=${qs_build/-o quickstart/-o $extra/tplan_quickstart}
eval "$qs_build -Wall -Wextra -Werror -static \$(pkg-config --static --libs tplan)" \
	>"$out/quickstart.log" 2>&1
rc=$?
[ -x "$extra/tplan_quickstart" ] || rc=1
t $rc "the quick start builds with -Wall -Wextra -Werror: $qs_build" "$(head -n 20 "$out/quickstart.log")"

tap_end
