#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Python package on the host, as TAP, with Debian's python3 (what the
# VM runs):
#   - "pip install ./python" into a fresh venv and with --target, with no
#     network at all (a network namespace of its own, where unshare works;
#     else no package index): the in-tree build backend needs nothing;
#   - "import tplan" there reports the library's version (the built
#     libtplan.so.0) and "python3 -m tplan" says which library it loaded;
#   - tests/python/host_test.py (layouts, schedules, errors, examples).
#   tests/python/host.sh [BUILD]          (needs "make lib")
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
out=$BUILD/python
py=/usr/bin/python3
. tests/tap.sh
rm -rf "$out"
mkdir -p "$out"
ver=$(sed -n 's/^VERSION := //p' Makefile)
libdir=$(cd "$BUILD/lib" && pwd)

offline=(env PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1)
how="no package index"
if unshare -n true 2>/dev/null; then
	offline=(unshare -n "${offline[@]}")
	how="no network (unshare -n)"
fi

$py -m venv "$out/venv" >"$out/venv.log" 2>&1
t $? "a fresh venv from Debian's python3" "$(tail -n 5 "$out/venv.log")"
"${offline[@]}" "$out/venv/bin/pip" install ./python >"$out/pip.log" 2>&1
t $? "pip install ./python into it, $how" "$(tail -n 15 "$out/pip.log")"
got=$(LD_LIBRARY_PATH=$libdir "$out/venv/bin/python" -c 'import tplan; print(tplan.library_version(), tplan.__version__, tplan.__file__)' 2>&1)
t "$([ "${got%% *}" = "$ver" ] && echo "$got" | grep -q "$out/venv/"; echo $?)" \
	"import tplan from the venv reports libtplan $ver" "got: $got"
got=$(LD_LIBRARY_PATH=$libdir "$out/venv/bin/python" -m tplan 2>&1)
t "$(echo "$got" | grep -qx "tplan $ver, libtplan $ver (libtplan.so.0)"; echo $?)" "python3 -m tplan names both versions" "got: $got"
got=$(env -u LD_LIBRARY_PATH TPLAN_LIBRARY=/nonexistent/libtplan.so.0 "$out/venv/bin/python" -c 'import tplan
try:
    tplan.library_version()
except tplan.LibraryNotFound as e:
    print("refused:", e)' 2>&1)
t "$(echo "$got" | grep -q "^refused: libtplan not found.*make install"; echo $?)" \
	"without the library, import works and the first call says what is missing" "got: $got"
"${offline[@]}" $py -m pip install --target "$out/target" ./python >"$out/pip-target.log" 2>&1
t "$([ -f "$out/target/tplan/__init__.py" ] && [ -f "$out/target/tplan/triton.py" ]; echo $?)" \
	"pip install --target DIR ./python, $how" "$(tail -n 15 "$out/pip-target.log")"

TPLAN_LIBRARY=$libdir/libtplan.so.0 $py tests/python/host_test.py >"$out/host_test.tap" 2>&1
rc=$?
sed -n 's/^\(not \)\?ok [0-9]* /&/p' "$out/host_test.tap" | while read -r line; do echo "# $line"; done
t $rc "tests/python/host_test.py: $(grep -c '^ok' "$out/host_test.tap") passed, $(grep -c '^not ok' "$out/host_test.tap") failed" \
	"$(grep -A5 '^not ok\|Traceback' "$out/host_test.tap" | head -n 30)"
find python tests/python examples -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null
tap_end
