#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A Python runtime for the test VM, laid over its / (scripts/vm/run.sh,
# VM_ROOTFS_EXTRA): Debian's python3 and NumPy with the shared libraries
# they load, libtplan.so, the tplan package installed by "pip install
# --target" (offline), and the Python programs the VM runs under
# /opt/tplan (run by selftests/tplan_python.sh).
#
#   tests/python/vm_root.sh OUTDIR [BUILD]      (needs "make lib")
#
# Only what the programs use: the standard library without its tests,
# IDLE, Tk, lib2to3, ensurepip, pydoc data, the static libpython, and the
# extension modules that would bring OpenSSL, SQLite, Berkeley DB,
# readline or curses; NumPy without its tests, f2py and distutils (its
# linalg still needs LAPACK and libgfortran).  Prints its size.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1
BUILD=${2:-build}
py=/usr/bin/python3
pyver=$($py -c 'import sys; print("%d.%d" % sys.version_info[:2])')
np=$($py -c 'import numpy, os; print(os.path.dirname(numpy.__file__))')
# This version's library, not an older one a previous build left there.
lib=$BUILD/lib/libtplan.so.$(sed -n 's/^VERSION := //p' Makefile)
[ -e "$lib" ] || { echo "vm_root: no $lib: run make lib" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/usr/bin" "$out/opt/tplan"

# The interpreter, the standard library, NumPy.
cp -L "/usr/bin/python$pyver" "$out/usr/bin/python$pyver"
ln -sf "python$pyver" "$out/usr/bin/python3"
stdlib=/usr/lib/python$pyver
mkdir -p "$out$stdlib"
tar -C "$stdlib" -cf - \
	--exclude='./test' --exclude='./idlelib' --exclude='./tkinter' --exclude='./turtledemo' \
	--exclude='./lib2to3' --exclude='./ensurepip' --exclude='./pydoc_data' \
	--exclude='./config-*' --exclude='./distutils' --exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc' \
	--exclude='./dist-packages' --exclude='./sqlite3' --exclude='./curses' --exclude='./dbm' \
	--exclude='./venv' --exclude='./xmlrpc' --exclude='./wsgiref' \
	--exclude='./lib-dynload/_ssl.*' --exclude='./lib-dynload/_hashlib.*' \
	--exclude='./lib-dynload/_sqlite3.*' --exclude='./lib-dynload/_dbm.*' \
	--exclude='./lib-dynload/_gdbm.*' --exclude='./lib-dynload/readline.*' \
	--exclude='./lib-dynload/_curses*' --exclude='./lib-dynload/nis.*' \
	--exclude='./lib-dynload/_test*' --exclude='./lib-dynload/_ctypes_test.*' \
	--exclude='./lib-dynload/xxlimited*' --exclude='./lib-dynload/_xxtestfuzz.*' \
	--exclude='./lib-dynload/_codecs_*' --exclude='./lib-dynload/_decimal.*' \
	. | tar -C "$out$stdlib" -xf -
mkdir -p "$out$np"
tar -C "$np" -cf - --exclude='tests' --exclude='./f2py' --exclude='./distutils' --exclude='./doc' \
	--exclude='*.pyi' --exclude='*.opt-1.pyc' --exclude='*.opt-2.pyc' . | tar -C "$out$np" -xf -

# libtplan, where the loader looks without an ld.so.cache.
mkdir -p "$out/usr/lib/x86_64-linux-gnu"
cp -L "$lib" "$out/usr/lib/x86_64-linux-gnu/libtplan.so.0"

# The shared libraries all of it loads, at their paths here.
{
	echo "$out/usr/bin/python$pyver"
	find "$out$stdlib/lib-dynload" "$out$np" -name '*.so*'
	echo "$out/usr/lib/x86_64-linux-gnu/libtplan.so.0"
} | while read -r f; do
	ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib64\// { print $1 }'
done | sort -u | while read -r so; do
	mkdir -p "$out$(dirname "$so")"
	cp -L "$so" "$out$so"
done

# The tplan package, as pip installs it with no network.
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 $py -m pip install -q --no-cache-dir --no-deps \
	--target "$out/usr/lib/python3/dist-packages" ./python 2>&1 | grep -v 'Running pip as the' || true
[ -f "$out/usr/lib/python3/dist-packages/tplan/__init__.py" ]

# The programs: the bindings' tests, the README's Python quick start, the
# Python all-gather.
cp tests/python/vm_test.py examples/all_gather.py "$out/opt/tplan/"
awk '/<!-- python-quickstart:end -->/ { on = 0 } on && !/^```/ { print } /<!-- python-quickstart:begin -->/ { on = 1 }' \
	README.md >"$out/opt/tplan/quickstart.py"
[ -s "$out/opt/tplan/quickstart.py" ]

echo "vm python runtime: $(du -sh "$out" | cut -f1) in $(find "$out" -type f | wc -l) files"
