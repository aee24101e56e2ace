#!/bin/bash
# make check: everything that can be tested on this machine.
#   1. host: uapi headers (C90, C++), library, host unit tests, the ABI guard,
#      the man pages against the headers, make install and out-of-tree builds
#      against it, the Python package, the device code (hipcc, clang-19,
#      Triton), make hw-check and make hip-examples without a GPU, fuzzing
#   2. per kernel (Debian 6.1 and 6.12, then the debug kernel): module W=1,
#      DKMS, sparse, the tests' KFD stand-in W=1, then a VM boot that loads
#      the module, runs the selftests (the KFD ones with the stand-in, and
#      the test-node protocol's program over it), then the ioctl fuzzer and
#      kill storm (with a small ring, allow_inject on, then off), scans
#      dmesg (and kmemleak on the debug kernel), rmmods
# Ends with "N passed, N failed, N skipped"; exits 1 on any failure.
#
# Environment: TPLAN_KVERS (kernels, default: newest Debian 6.1 and 6.12,
# then the debug kernel; "debug" names it), TPLAN_DEBUG_KERNEL=0 (leave the
# debug kernel out of the default list), VM_MEM / VM_CPUS / VM_TIMEOUT / VM_STALL_TIMEOUT
# (scripts/vm/run.sh), FUZZ_CI_SECONDS (the host fuzzing, default 40),
# FUZZ_VM_SECONDS (each of the two in-VM fuzzer runs per kernel, default 20;
# FUZZ_SEED, FUZZ_ARGS, FUZZ_RING_SIZE: scripts/lib.sh), TPLAN_SOFT_QUIRKS
# (the software engine's soft_quirks, default mix), BUILD (default build).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export RESULTS="$BUILD/check/results.txt" LOGS="$BUILD/check/logs"
rm -rf "$BUILD/check"
mkdir -p "$LOGS"
: > "$RESULTS"
. scripts/lib.sh
t0=$(date +%s)

# The debug kernel (scripts/vm/build-debug-kernel.sh) is built here the
# first time (about 11 minutes), then cached.
debug_kernel=--debug-kernel
[ "${TPLAN_DEBUG_KERNEL:-1}" != 0 ] || debug_kernel=
scripts/install-deps.sh $debug_kernel || { echo "0 passed, 1 failed"; exit 1; }
KVERS=$(scripts/install-deps.sh --print $debug_kernel)
JOBS=$(nproc)

echo "# host ($(uname -r), $(nproc) CPUs)"
item "host: uapi headers compile as C90 and C++" make -s uapi-check
item "host: library builds with -Wall -Wextra -Werror" make -s -j"$JOBS" lib
item "host: selftests build" make -s -j"$JOBS" selftests
# The test-node protocol's program (docs/test-node.md): built here so that
# it cannot rot, and run in the VM over the KFD stand-in (below).
item "host: the test-node protocol's program builds" make -s -j"$JOBS" hw-check-programs
item "host: host tests build" make -s -j"$JOBS" host-tests
for t in $(make -s print-host-tests); do
	tap "host: $(basename "$t")" "$t"
done
tap "host: abi" tests/abi/run.sh "$BUILD"
tap "host: docs" tests/docs/run.sh "$BUILD"
tap "host: install" tests/install/run.sh "$BUILD"
# The Python package: offline pip install, import, layouts, schedules.
tap "host: python" tests/python/host.sh "$BUILD"
# Its Triton device functions compiled for gfx90a and gfx942 where Triton
# is installed (it skips here: no PyPI); the same rules on the AMDGCN that
# Triton 3.6 gave, recorded, and refusing the recorded broken producers
# and releases.
tap "host: Triton device functions" python3 tests/device/triton_isa_check.py
tap "host: Triton ISA rules (recorded Triton 3.6 AMDGCN)" \
	/usr/bin/python3 tests/device/triton_isa_check.py --from-dump tests/device/triton-3.6
tap "host: Triton ISA rules refuse broken producers and releases (recorded)" \
	/usr/bin/python3 tests/device/triton_isa_check.py --negatives --from-dump tests/device/triton-3.6
# Debian's python3, NumPy, libtplan and the package for the VM, laid over
# its / (selftests/tplan_python.sh runs the Python tests there).
item "host: Python runtime for the VM" tests/python/vm_root.sh "$BUILD/vm-python" "$BUILD"
if [ -d "$BUILD/vm-python/opt/tplan" ]; then
	export VM_ROOTFS_EXTRA="$BUILD/vm-python"
fi
# What the install test built for the VM (its app, the README quick start)
# runs there after the selftests.
for p in "$BUILD"/vm-extra/*; do
	[ -f "$p" ] || continue
	cp "$p" "$BUILD/selftests/" && echo "bin $(basename "$p")" >>"$BUILD/selftests/plan"
done
# Then, with the KFD stand-in still loaded, every step of the test-node
# protocol's program over it (tests/hw/standin.sh), the software engine
# with no quirks: step 2 hands a tplan queue's memory to the stand-in.
if [ -x "$BUILD/hw/hw_check" ]; then
	cp "$BUILD/hw/hw_check" "$BUILD/selftests/"
	cp tests/hw/standin.sh "$BUILD/selftests/tplan_hw_check.sh"
	printf 'mod soft_quirks=off\nsh tplan_hw_check.sh\n' >>"$BUILD/selftests/plan"
fi
# Last in the VM: the ioctl fuzzer and kill storm (it reloads the module),
# then the tests whose bug would leave the module unusable for the rest,
# on a fresh module where rmmod can give one.
fuzz_plan "${FUZZ_VM_SECONDS:-20}" >>"$BUILD/selftests/plan"
if [ -s "$BUILD/selftests/plan-last" ]; then
	echo "mod ${TPLAN_MODPARAMS:-allow_inject=1 soft_quirks=$TPLAN_SOFT_QUIRKS}" >>"$BUILD/selftests/plan"
	cat "$BUILD/selftests/plan-last" >>"$BUILD/selftests/plan"
fi
# The device header through Debian's hipcc (gfx90a, gfx940) and clang-19
# (gfx942): mark_ready's and release's ordering in the machine code, and
# producers and releases without it refused.
tap "host: isa-check" tests/device/isa_check.sh
tap "host: isa-check refuses broken producers and releases" tests/device/isa_check.sh --negatives
# The HIP example: a persistent GEMM whose schedule takes the kernel's own
# tile order; built for gfx90a and gfx940 (hipcc) and gfx942 (clang-19),
# and without a GPU it must skip (exit 4) saying what it needs.
tap "host: HIP example compiles for gfx90a, gfx940 and gfx942" tests/device/hip_example.sh build
tap "host: HIP example exits cleanly without a GPU" tests/device/hip_example.sh run
# make hw-check and make hip-examples here: each says what it lacks and succeeds.
tap "host: make hw-check and make hip-examples without a GPU" tests/hw/no_gpu.sh "$BUILD"
if [ -x tests/fuzz/run.sh ]; then
	tap "host: fuzz" tests/fuzz/run.sh "${FUZZ_CI_SECONDS:-40}"
fi
echo "# host part took $(( $(date +%s) - t0 )) s"

# The fault tests inject raw packets; the parameter is off unless asked for.
# The software engine emulates hardware's worst (soft_quirks, README).
export TPLAN_MODPARAMS=${TPLAN_MODPARAMS-allow_inject=1 soft_quirks=$TPLAN_SOFT_QUIRKS}
first=1
for k in $KVERS; do
	tk=$(date +%s)
	echo "# kernel $k"
	item "[$k] module builds with W=1, no warnings" build_module "$k" "$BUILD/kmod/$k"
	case "$k" in
	*-tplan-debug-*)
		# The debug kernel has no /lib/modules tree for DKMS to install
		# into, and sparse sees the same sources on the Debian kernels.
		result 0 "[$k] dkms # SKIP the debug kernel has no /lib/modules tree"
		;;
	*)
		# DKMS and sparse on the first Debian kernel: the module's
		# W=1 build above already covers each kernel's headers.
		if [ "$first" = 1 ]; then
			tap "[$k] dkms" tests/dkms/run.sh "$k" "$BUILD"
			item "[$k] sparse clean" make -s sparse KDIR="/lib/modules/$k/build"
			first=0
		else
			result 0 "[$k] dkms # SKIP run on the first Debian kernel; this one's W=1 build is above"
		fi
		;;
	esac
	# The tests' KFD stand-in, on every kernel: Debian's have dma-buf and
	# HMM, and so has the debug kernel (scripts/vm/debug-kernel.config).
	item "[$k] KFD stand-in builds with W=1, no warnings" build_standin "$k" "$BUILD/standin/$k"
	if [ -s "$BUILD/kmod/$k/tplan.ko" ]; then
		VM_KMOD_DIR="$BUILD/standin/$k" \
			scripts/vm/run.sh "$k" "$BUILD/kmod/$k" "$BUILD/selftests" "$RESULTS"
	fi
	echo "# kernel $k took $(( $(date +%s) - tk )) s"
done

echo "# make check took $(( $(date +%s) - t0 )) s"
summary
