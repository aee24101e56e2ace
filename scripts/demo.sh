#!/bin/bash
# make demo: the main job.  Boots a Debian kernel in QEMU with tplan.ko on
# the software engine and runs there, printing their output: tplan_info
# (what the module can do), then all_gather (a triggered all-gather fed by
# a tiled CPU producer, verified every round; examples/all_gather.c).
#
# Environment: TPLAN_DEMO_KVER (default: the newest Debian 6.12 kernel),
# TPLAN_DEMO_ARGS (all_gather's options, e.g. "-r 500 -n 8"),
# TPLAN_DEMO_PYTHON=1 (then also examples/all_gather.py, the same
# all-gather with a CPU producer written in Python, on Debian's python3),
# TPLAN_DEMO_ENGINE=kfd (the KFD engine instead, over the tests' KFD
# stand-in: heaps in its "GPU memory", queues on its SDMA queues),
# VM_MEM / VM_CPUS, TPLAN_MODPARAMS, BUILD.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export RESULTS="$BUILD/demo/results.txt" LOGS="$BUILD/demo/logs"
rm -rf "$BUILD/demo"
mkdir -p "$LOGS" "$BUILD/demo/programs"
. scripts/lib.sh

scripts/install-deps.sh
kver=${TPLAN_DEMO_KVER:-$(scripts/install-deps.sh --print | awk '{print $NF}')}
make -s -j"$(nproc)" lib examples
build_module "$kver" "$BUILD/kmod/$kver"
engine=${TPLAN_DEMO_ENGINE:-soft}
case "$engine" in
soft) ;;
kfd) build_standin "$kver" "$BUILD/demo/standin" || { echo "demo: the KFD stand-in does not build for $kver" >&2; exit 1; }
	export VM_KMOD_DIR="$BUILD/demo/standin" ;;
*) echo "demo: TPLAN_DEMO_ENGINE is soft or kfd, not $engine" >&2; exit 1 ;;
esac

cp "$BUILD/examples/tplan_info" "$BUILD/examples/all_gather" "$BUILD/demo/programs/"
{
	if [ "$engine" = kfd ]; then
		echo "kmod kfd_standin"
		echo "env TPLAN_ENGINE kfd"
	fi
	echo "bin tplan_info"
	if [ -n "${TPLAN_DEMO_ARGS:-}" ]; then
		# The VM's init runs programs without arguments; a script passes them.
		printf './all_gather %s\n' "$TPLAN_DEMO_ARGS" > "$BUILD/demo/programs/all_gather.sh"
		echo "sh all_gather.sh"
	else
		echo "bin all_gather"
	fi
	if [ "${TPLAN_DEMO_PYTHON:-0}" = 1 ]; then
		tests/python/vm_root.sh "$BUILD/vm-python" "$BUILD" >&2
		echo '/usr/bin/python3 /opt/tplan/all_gather.py' > "$BUILD/demo/programs/all_gather_py.sh"
		echo "sh all_gather_py.sh"
	fi
} > "$BUILD/demo/programs/plan"
[ "${TPLAN_DEMO_PYTHON:-0}" != 1 ] || export VM_ROOTFS_EXTRA="$BUILD/vm-python"
echo "# demo on $kver ($engine engine)"
: > "$RESULTS"
VM_SHOW_OUTPUT=1 scripts/vm/run.sh "$kver" "$BUILD/kmod/$kver" "$BUILD/demo/programs" "$RESULTS"
! grep -q '^not ok' "$RESULTS"
